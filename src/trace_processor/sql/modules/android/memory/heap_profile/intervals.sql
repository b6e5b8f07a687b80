-- SPDX-License-Identifier: Apache-2.0
-- android.memory.heap_profile.intervals: each heap profile dump as an
-- interval with the bytes allocated, retained and their net change in it.

-- One row per (process, heap, dump). The interval ends at the dump
-- (heap_profile.ts_end) and starts at heap_profile.ts; where a producer
-- gives no start (ts = ts_end), one nanosecond after the same heap's
-- previous dump (the trace's start for the first; never after the dump).
-- Sizes: allocated = bytes allocated in the interval; retained = the net
-- bytes of the callsites whose net allocation count in the interval is
-- positive; delta = allocations less all frees of the interval. id is the
-- dump's first allocation row.
CREATE PERFETTO TABLE _android_heap_profile_intervals AS
WITH
  per_callsite AS (
    SELECT
      a.upid,
      a.heap_name,
      a.ts,
      min(a.id) AS first_id,
      sum(a.count) AS net_count,
      sum(a.size) AS net_size,
      sum(max(a.size, 0)) AS alloc_size
    FROM heap_profile_allocation AS a
    GROUP BY a.upid, a.heap_name, a.ts, a.callsite_id
  ),
  per_dump AS (
    SELECT
      min(c.first_id) AS id,
      c.upid,
      c.heap_name,
      c.ts AS ts_end,
      hp.ts AS start_ts,
      sum(iif(c.net_count > 0, c.net_size, 0)) AS retained,
      sum(c.alloc_size) AS allocated,
      sum(c.net_size) AS delta
    FROM per_callsite AS c
    JOIN heap_profile AS hp ON hp.upid = c.upid AND hp.ts_end = c.ts
    GROUP BY c.upid, c.heap_name, c.ts
  ),
  started AS (
    SELECT
      d.*,
      iif(
        d.start_ts < d.ts_end,
        d.start_ts,
        min(
          lag(d.ts_end, 1, trace_start()) OVER (PARTITION BY d.upid, d.heap_name ORDER BY d.ts_end)
            + 1,
          d.ts_end
        )
      ) AS ts
    FROM per_dump AS d
  )
SELECT s.id, s.upid, s.heap_name, s.ts, s.ts_end - s.ts AS dur, s.retained, s.allocated, s.delta
FROM started AS s;

-- SPDX-License-Identifier: Apache-2.0
-- linux.memory.general: the process-scoped counters as intervals, for the
-- memory modules built on it.

-- Each value of a process counter with how long it held: until the
-- track's next value, or past the end of its process (the trace's end for
-- a process still alive) by one nanosecond for the last one.
CREATE PERFETTO VIEW _all_counters_per_process AS
SELECT
  c.ts,
  lead(c.ts, 1, coalesce(p.end_ts, trace_end()) + 1)
    OVER (PARTITION BY c.track_id ORDER BY c.ts) - c.ts AS dur,
  t.upid,
  c.value,
  c.track_id,
  t.name
FROM counter AS c
JOIN process_counter_track AS t ON t.id = c.track_id
LEFT JOIN process AS p ON p.upid = t.upid
WHERE t.upid IS NOT NULL;

-- SPDX-License-Identifier: Apache-2.0
-- linux.cpu.utilization.slice: CPU cycles spent in each thread slice.

INCLUDE PERFETTO MODULE linux.cpu.utilization.general;
INCLUDE PERFETTO MODULE intervals.intersect;
INCLUDE PERFETTO MODULE slices.with_context;

-- Every thread slice with the cycles its thread ran during it. The
-- cycles are NULL unless the thread ran at a known frequency for the
-- whole slice.
CREATE PERFETTO TABLE cpu_cycles_per_thread_slice(
  -- The slice.
  id JOINID(slice.id),
  -- Its name.
  name STRING,
  -- Its thread.
  utid JOINID(thread.id),
  -- The thread's name.
  thread_name STRING,
  -- The thread's process.
  upid JOINID(process.id),
  -- The process's name.
  process_name STRING,
  -- Cycles times 1000.
  millicycles LONG,
  -- Cycles in millions.
  megacycles LONG
)
AS
WITH ran AS (
  SELECT
    ii.id_0 AS slice_id,
    ii.utid,
    sum(ii.dur) AS dur,
    CAST(sum(ii.dur * f.freq / 1000) AS INT) AS millicycles,
    CAST(sum(ii.dur * f.freq / 1000) / 1e9 AS INT) AS megacycles
  FROM _interval_intersect!(
    ((SELECT * FROM thread_slice WHERE dur > 0 AND utid > 0), _cpu_freq_per_thread),
    (utid)
  ) AS ii
  JOIN _cpu_freq_per_thread AS f ON f.id = ii.id_1
  WHERE f.freq IS NOT NULL
  GROUP BY slice_id
)
SELECT
  s.id,
  s.name,
  s.utid,
  s.thread_name,
  s.upid,
  s.process_name,
  r.millicycles,
  r.megacycles
FROM thread_slice AS s
LEFT JOIN ran AS r ON r.slice_id = s.id AND r.dur = s.dur;

-- The same for the parts of the thread slices within [$ts, $ts + $dur).
CREATE PERFETTO FUNCTION cpu_cycles_per_thread_slice_in_interval(
  -- Start of the interval.
  ts TIMESTAMP,
  -- Its length.
  dur DURATION
)
RETURNS TABLE(
  -- The slice.
  id JOINID(slice.id),
  -- Its name.
  name STRING,
  -- Its thread.
  utid JOINID(thread.id),
  -- The thread's name.
  thread_name STRING,
  -- The thread's process.
  upid JOINID(process.id),
  -- The process's name.
  process_name STRING,
  -- Cycles times 1000.
  millicycles LONG,
  -- Cycles in millions.
  megacycles LONG
)
AS
WITH
  cut AS (
    SELECT ii.id, ii.ts, ii.dur, s.*
    FROM _interval_intersect_single!(
      $ts, $dur, (SELECT * FROM thread_slice WHERE dur > 0 AND utid > 0)
    ) AS ii
    JOIN thread_slice AS s ON s.id = ii.id
  ),
  ran AS (
    SELECT
      ii.id_0 AS slice_id,
      ii.utid,
      sum(ii.dur) AS dur,
      CAST(sum(ii.dur * f.freq / 1000) AS INT) AS millicycles,
      CAST(sum(ii.dur * f.freq / 1000) / 1e9 AS INT) AS megacycles
    FROM _interval_intersect!((cut, _cpu_freq_per_thread), (utid)) AS ii
    JOIN _cpu_freq_per_thread AS f ON f.id = ii.id_1
    WHERE f.freq IS NOT NULL
    GROUP BY slice_id
  )
SELECT
  c.id,
  c.name,
  c.utid,
  c.thread_name,
  c.upid,
  c.process_name,
  r.millicycles,
  r.megacycles
FROM cut AS c
LEFT JOIN ran AS r ON r.slice_id = c.id AND r.dur = c.dur;

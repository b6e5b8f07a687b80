-- SPDX-License-Identifier: Apache-2.0
-- linux.cpu.utilization.process: CPU utilization and cycles per process
-- (its threads added up).

INCLUDE PERFETTO MODULE linux.cpu.utilization.general;
INCLUDE PERFETTO MODULE linux.cpu.utilization.thread_cpu;
INCLUDE PERFETTO MODULE time.conversion;
INCLUDE PERFETTO MODULE intervals.intersect;

-- The process's utilization per period of length $interval: its threads'
-- running time (idle threads left out) over the period's length times
-- the CPUs, and over the period's length alone.
CREATE PERFETTO FUNCTION cpu_process_utilization_per_period(
  -- The period's length.
  interval LONG,
  -- The process.
  upid JOINID(process.id)
)
RETURNS TABLE(
  -- The period's start.
  ts TIMESTAMP,
  -- Running time over the period times the CPUs.
  utilization DOUBLE,
  -- Running time over the period.
  unnormalized_utilization DOUBLE
)
AS
WITH runs AS (
  SELECT s.ts, s.ts_end, s.utid
  FROM sched AS s
  JOIN thread AS t ON t.utid = s.utid
  JOIN process AS p ON p.upid = t.upid
  WHERE p.upid = $upid AND NOT t.is_idle
)
SELECT * FROM _cpu_avg_utilization_per_period!($interval, runs);

-- The same per second.
CREATE PERFETTO FUNCTION cpu_process_utilization_per_second(
  -- The process.
  upid JOINID(process.id)
)
RETURNS TABLE(
  -- The second's start.
  ts TIMESTAMP,
  -- Running time over the second times the CPUs.
  utilization DOUBLE,
  -- Running time over the second.
  unnormalized_utilization DOUBLE
)
AS
SELECT * FROM cpu_process_utilization_per_period(time_from_s(1), $upid);

-- Cycles, running time and frequencies per process.
CREATE PERFETTO TABLE cpu_cycles_per_process(
  -- The process.
  upid JOINID(process.id),
  -- Cycles times 1000.
  millicycles LONG,
  -- Cycles in millions.
  megacycles LONG,
  -- Time its threads ran.
  runtime DURATION,
  -- Lowest frequency, kHz.
  min_freq LONG,
  -- Highest frequency, kHz.
  max_freq LONG,
  -- Average frequency, kHz.
  avg_freq LONG
)
AS
SELECT
  t.upid,
  sum(c.millicycles) AS millicycles,
  CAST(sum(c.millicycles) / 1e9 AS INT) AS megacycles,
  sum(c.runtime) AS runtime,
  min(c.min_freq) AS min_freq,
  max(c.max_freq) AS max_freq,
  CAST(sum(c.millicycles) / (sum(c.runtime) / 1000) AS INT) AS avg_freq
FROM cpu_cycles_per_thread_per_cpu AS c
JOIN thread AS t ON t.utid = c.utid
WHERE t.upid IS NOT NULL
GROUP BY t.upid;

-- The same within [$ts, $ts + $dur), with the awake running time.
CREATE PERFETTO FUNCTION cpu_cycles_per_process_in_interval(
  -- Start of the interval.
  ts TIMESTAMP,
  -- Its length.
  dur LONG
)
RETURNS TABLE(
  -- The process.
  upid JOINID(process.id),
  -- Cycles times 1000.
  millicycles LONG,
  -- Cycles in millions.
  megacycles LONG,
  -- Time its threads ran.
  runtime DURATION,
  -- The same, suspended time left out.
  awake_runtime DURATION,
  -- Lowest frequency, kHz.
  min_freq LONG,
  -- Highest frequency, kHz.
  max_freq LONG,
  -- Average frequency, kHz.
  avg_freq LONG
)
AS
WITH per_thread AS (
  SELECT f.id, f.ts, f.dur, f.freq, t.upid
  FROM _cpu_freq_per_thread AS f
  JOIN thread AS t ON t.utid = f.utid
)
SELECT
  pt.upid,
  CAST(sum(ii.dur * pt.freq / 1000) AS INT) AS millicycles,
  CAST(sum(ii.dur * pt.freq / 1000) / 1e9 AS INT) AS megacycles,
  sum(ii.dur) AS runtime,
  sum(to_monotonic(ii.ts + ii.dur) - to_monotonic(ii.ts)) AS awake_runtime,
  min(pt.freq) AS min_freq,
  max(pt.freq) AS max_freq,
  CAST(
    sum(ii.dur * pt.freq / 1000) / (sum(iif(pt.freq IS NOT NULL, ii.dur, NULL)) / 1000) AS INT
  ) AS avg_freq
FROM _interval_intersect_single!($ts, $dur, per_thread) AS ii
JOIN per_thread AS pt ON pt.id = ii.id
GROUP BY pt.upid;

-- Per process, its threads' awake running time within [$ts, $ts + $dur)
-- in percent of the interval's awake time, over all CPUs and
-- unnormalized.
CREATE PERFETTO FUNCTION cpu_process_utilization_in_interval(
  -- Start of the interval.
  ts TIMESTAMP,
  -- Its length.
  dur LONG
)
RETURNS TABLE(
  -- The process.
  upid JOINID(process.id),
  -- Its name.
  process_name STRING,
  -- Its threads' awake running time.
  awake_dur LONG,
  -- That in percent of the awake time times the CPUs.
  awake_utilization DOUBLE,
  -- That in percent of the awake time.
  awake_unnormalized_utilization DOUBLE
)
AS
SELECT
  c.upid,
  p.name AS process_name,
  sum(c.awake_runtime) AS awake_dur,
  round(
    sum(c.awake_runtime) * 100.0 / (to_monotonic($ts + $dur) - to_monotonic($ts))
      / (SELECT max(x.cpu) + 1 FROM cpu AS x),
    6
  ) AS awake_utilization,
  round(sum(c.awake_runtime) * 100.0 / (to_monotonic($ts + $dur) - to_monotonic($ts)), 6)
    AS awake_unnormalized_utilization
FROM cpu_cycles_per_process_in_interval($ts, $dur) AS c
JOIN process AS p ON p.upid = c.upid
GROUP BY c.upid;

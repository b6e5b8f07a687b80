-- SPDX-License-Identifier: Apache-2.0
-- linux.cpu.utilization.thread: CPU utilization and cycles per thread.

INCLUDE PERFETTO MODULE linux.cpu.utilization.general;
INCLUDE PERFETTO MODULE linux.cpu.utilization.thread_cpu;
INCLUDE PERFETTO MODULE time.conversion;
INCLUDE PERFETTO MODULE intervals.intersect;

-- The thread's utilization per period of length $interval: its running
-- time over the period's length times the CPUs, and over the period's
-- length alone (unnormalized).
CREATE PERFETTO FUNCTION cpu_thread_utilization_per_period(
  -- The period's length.
  interval LONG,
  -- The thread.
  utid JOINID(thread.id)
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
WITH runs AS (SELECT s.ts, s.ts_end, s.utid FROM sched AS s WHERE s.utid = $utid)
SELECT * FROM _cpu_avg_utilization_per_period!($interval, runs);

-- The same per second.
CREATE PERFETTO FUNCTION cpu_thread_utilization_per_second(
  -- The thread.
  utid JOINID(thread.id)
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
SELECT * FROM cpu_thread_utilization_per_period(time_from_s(1), $utid);

-- Cycles, running time and frequencies per thread, over all CPUs.
CREATE PERFETTO TABLE cpu_cycles_per_thread(
  -- The thread.
  utid JOINID(thread.id),
  -- Cycles times 1000.
  millicycles LONG,
  -- Cycles in millions.
  megacycles LONG,
  -- Time running.
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
  c.utid,
  sum(c.millicycles) AS millicycles,
  CAST(sum(c.millicycles) / 1e9 AS INT) AS megacycles,
  sum(c.runtime) AS runtime,
  min(c.min_freq) AS min_freq,
  max(c.max_freq) AS max_freq,
  CAST(sum(c.millicycles) / (sum(c.runtime) / 1000) AS INT) AS avg_freq
FROM cpu_cycles_per_thread_per_cpu AS c
GROUP BY c.utid;

-- The same within [$ts, $ts + $dur), with the running time the device
-- was awake (not suspended).
CREATE PERFETTO FUNCTION cpu_cycles_per_thread_in_interval(
  -- Start of the interval.
  ts TIMESTAMP,
  -- Its length.
  dur LONG
)
RETURNS TABLE(
  -- The thread.
  utid JOINID(thread.id),
  -- Cycles times 1000.
  millicycles LONG,
  -- Cycles in millions.
  megacycles LONG,
  -- Time running.
  runtime DURATION,
  -- Time running, suspended time left out.
  awake_runtime DURATION,
  -- Lowest frequency, kHz.
  min_freq LONG,
  -- Highest frequency, kHz.
  max_freq LONG,
  -- Average frequency, kHz.
  avg_freq LONG
)
AS
SELECT
  f.utid,
  CAST(sum(ii.dur * f.freq / 1000) AS INT) AS millicycles,
  CAST(sum(ii.dur * f.freq / 1000) / 1e9 AS INT) AS megacycles,
  sum(ii.dur) AS runtime,
  sum(to_monotonic(ii.ts + ii.dur) - to_monotonic(ii.ts)) AS awake_runtime,
  min(f.freq) AS min_freq,
  max(f.freq) AS max_freq,
  CAST(
    sum(ii.dur * f.freq / 1000) / (sum(iif(f.freq IS NOT NULL, ii.dur, NULL)) / 1000) AS INT
  ) AS avg_freq
FROM _interval_intersect_single!($ts, $dur, _cpu_freq_per_thread) AS ii
JOIN _cpu_freq_per_thread AS f ON f.id = ii.id
GROUP BY f.utid;

-- Per thread, its awake running time within [$ts, $ts + $dur) in percent
-- of the interval's awake time, over all CPUs and unnormalized.
CREATE PERFETTO FUNCTION cpu_thread_utilization_in_interval(
  -- Start of the interval.
  ts TIMESTAMP,
  -- Its length.
  dur LONG
)
RETURNS TABLE(
  -- The thread's process.
  upid JOINID(process.id),
  -- The thread.
  utid JOINID(thread.id),
  -- Its name.
  thread_name STRING,
  -- Its awake running time.
  awake_dur LONG,
  -- That in percent of the awake time times the CPUs.
  awake_utilization DOUBLE,
  -- That in percent of the awake time.
  awake_unnormalized_utilization DOUBLE
)
AS
SELECT
  t.upid,
  c.utid,
  t.name AS thread_name,
  sum(c.awake_runtime) AS awake_dur,
  round(
    sum(c.awake_runtime) * 100.0 / (to_monotonic($ts + $dur) - to_monotonic($ts))
      / (SELECT max(x.cpu) + 1 FROM cpu AS x),
    6
  ) AS awake_utilization,
  round(sum(c.awake_runtime) * 100.0 / (to_monotonic($ts + $dur) - to_monotonic($ts)), 6)
    AS awake_unnormalized_utilization
FROM cpu_cycles_per_thread_in_interval($ts, $dur) AS c
JOIN thread AS t ON t.utid = c.utid
GROUP BY c.utid;

-- SPDX-License-Identifier: Apache-2.0
-- linux.cpu.utilization.system: CPU utilization and cycles of the whole
-- system and per CPU.

INCLUDE PERFETTO MODULE linux.cpu.utilization.general;
INCLUDE PERFETTO MODULE linux.cpu.utilization.thread_cpu;
INCLUDE PERFETTO MODULE time.conversion;
INCLUDE PERFETTO MODULE intervals.intersect;

-- System utilization per period of length $interval: the running time of
-- all real (not idle) threads over the period's length times the CPUs,
-- and over the period's length alone.
CREATE PERFETTO FUNCTION cpu_utilization_per_period(
  -- The period's length.
  interval LONG
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
SELECT *
FROM _cpu_avg_utilization_per_period!($interval, (
  SELECT *
  FROM sched AS s
  WHERE s.utid NOT IN (SELECT t.utid FROM thread AS t WHERE t.is_idle)
));

-- The same per second.
CREATE PERFETTO TABLE cpu_utilization_per_second(
  -- The second's start.
  ts TIMESTAMP,
  -- Running time over the second times the CPUs.
  utilization DOUBLE,
  -- Running time over the second.
  unnormalized_utilization DOUBLE
)
AS
SELECT u.ts, u.utilization, u.unnormalized_utilization
FROM cpu_utilization_per_period(time_from_s(1)) AS u;

-- Cycles, running time and frequencies over the whole system and trace.
CREATE PERFETTO TABLE cpu_cycles(
  -- Cycles times 1000.
  millicycles LONG,
  -- Cycles in millions.
  megacycles LONG,
  -- Time threads ran.
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
  sum(c.millicycles) AS millicycles,
  CAST(sum(c.millicycles) / 1e9 AS INT) AS megacycles,
  sum(c.runtime) AS runtime,
  min(c.min_freq) AS min_freq,
  max(c.max_freq) AS max_freq,
  CAST(sum(c.millicycles) / (sum(c.runtime) / 1000) AS INT) AS avg_freq
FROM cpu_cycles_per_thread_per_cpu AS c;

-- The same within [$ts, $ts + $dur), with the awake running time.
CREATE PERFETTO FUNCTION cpu_cycles_in_interval(
  -- Start of the interval.
  ts TIMESTAMP,
  -- Its length.
  dur LONG
)
RETURNS TABLE(
  -- Cycles times 1000.
  millicycles LONG,
  -- Cycles in millions.
  megacycles LONG,
  -- Time threads ran.
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
SELECT
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
JOIN _cpu_freq_per_thread AS f ON f.id = ii.id;

-- The system's awake running time within [$ts, $ts + $dur) in percent of
-- the interval's awake time (2 decimals), over all CPUs and unnormalized.
CREATE PERFETTO FUNCTION cpu_utilization_in_interval(
  -- Start of the interval.
  ts TIMESTAMP,
  -- Its length.
  dur LONG
)
RETURNS TABLE(
  -- Awake running time.
  awake_dur LONG,
  -- That in percent of the awake time times the CPUs.
  awake_utilization DOUBLE,
  -- That in percent of the awake time.
  awake_unnormalized_utilization DOUBLE
)
AS
SELECT
  c.awake_runtime AS awake_dur,
  round(
    c.awake_runtime * 100.0 / (to_monotonic($ts + $dur) - to_monotonic($ts))
      / (SELECT max(x.cpu) + 1 FROM cpu AS x),
    2
  ) AS awake_utilization,
  round(c.awake_runtime * 100.0 / (to_monotonic($ts + $dur) - to_monotonic($ts)), 2)
    AS awake_unnormalized_utilization
FROM cpu_cycles_in_interval($ts, $dur) AS c;

-- Cycles, running time and frequencies per CPU.
CREATE PERFETTO TABLE cpu_cycles_per_cpu(
  -- The CPU.
  ucpu JOINID(cpu.id),
  -- Its number on its machine.
  cpu LONG,
  -- Cycles times 1000.
  millicycles LONG,
  -- Cycles in millions.
  megacycles LONG,
  -- Time threads ran on it.
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
  c.ucpu,
  c.cpu,
  sum(c.millicycles) AS millicycles,
  CAST(sum(c.millicycles) / 1e9 AS INT) AS megacycles,
  sum(c.runtime) AS runtime,
  min(c.min_freq) AS min_freq,
  max(c.max_freq) AS max_freq,
  CAST(sum(c.millicycles) / (sum(c.runtime) / 1000) AS INT) AS avg_freq
FROM cpu_cycles_per_thread_per_cpu AS c
GROUP BY c.ucpu, c.cpu;

-- The same within [$ts, $ts + $dur).
CREATE PERFETTO FUNCTION cpu_cycles_per_cpu_in_interval(
  -- Start of the interval.
  ts TIMESTAMP,
  -- Its length.
  dur LONG
)
RETURNS TABLE(
  -- The CPU.
  ucpu JOINID(cpu.id),
  -- Its number on its machine.
  cpu LONG,
  -- Cycles times 1000.
  millicycles LONG,
  -- Cycles in millions.
  megacycles LONG,
  -- Time threads ran on it.
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
  f.ucpu,
  f.cpu,
  CAST(sum(ii.dur * f.freq / 1000) AS INT) AS millicycles,
  CAST(sum(ii.dur * f.freq / 1000) / 1e9 AS INT) AS megacycles,
  sum(ii.dur) AS runtime,
  min(f.freq) AS min_freq,
  max(f.freq) AS max_freq,
  CAST(
    sum(ii.dur * f.freq / 1000) / (sum(iif(f.freq IS NOT NULL, ii.dur, NULL)) / 1000) AS INT
  ) AS avg_freq
FROM _interval_intersect_single!($ts, $dur, _cpu_freq_per_thread) AS ii
JOIN _cpu_freq_per_thread AS f ON f.id = ii.id
GROUP BY f.ucpu;

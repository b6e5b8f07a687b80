-- SPDX-License-Identifier: Apache-2.0
-- linux.cpu.utilization.thread_cpu: CPU cycles of each thread on each
-- CPU (time running times the CPU's frequency).

INCLUDE PERFETTO MODULE linux.cpu.utilization.general;
INCLUDE PERFETTO MODULE intervals.intersect;

-- Per thread and CPU over the whole trace: cycles (in thousandths and in
-- millions), running time, and the lowest, highest and average frequency
-- it ran at. Time at an unknown frequency counts in runtime only.
CREATE PERFETTO TABLE cpu_cycles_per_thread_per_cpu(
  -- The thread.
  utid JOINID(thread.id),
  -- The CPU.
  ucpu JOINID(cpu.id),
  -- The CPU's number on its machine.
  cpu LONG,
  -- Cycles times 1000 (the sum of dur * kHz / 1000 per piece).
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
  f.utid,
  f.ucpu,
  c.cpu,
  CAST(sum(f.dur * f.freq / 1000) AS INT) AS millicycles,
  CAST(sum(f.dur * f.freq / 1000) / 1e9 AS INT) AS megacycles,
  sum(f.dur) AS runtime,
  min(f.freq) AS min_freq,
  max(f.freq) AS max_freq,
  CAST(sum(f.dur * f.freq / 1000) / (sum(f.dur) / 1000) AS INT) AS avg_freq
FROM _cpu_freq_per_thread AS f
JOIN cpu AS c ON c.ucpu = f.ucpu
GROUP BY f.utid, f.ucpu;

-- The same within the interval [$ts, $ts + $dur); the average frequency
-- over the time at a known frequency.
CREATE PERFETTO FUNCTION cpu_cycles_per_thread_per_cpu_in_interval(
  -- Start of the interval.
  ts TIMESTAMP,
  -- Its length.
  dur LONG
)
RETURNS TABLE(
  -- The thread.
  utid JOINID(thread.id),
  -- The CPU.
  ucpu JOINID(cpu.id),
  -- The CPU's number on its machine.
  cpu LONG,
  -- Cycles times 1000.
  millicycles LONG,
  -- Cycles in millions.
  megacycles LONG,
  -- Time running in the interval.
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
  f.utid,
  f.ucpu,
  c.cpu,
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
JOIN cpu AS c ON c.ucpu = f.ucpu
GROUP BY f.utid, f.ucpu;

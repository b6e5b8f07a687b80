-- SPDX-License-Identifier: Apache-2.0
-- linux.cpu.frequency: each CPU's frequency as intervals of constant
-- frequency (from the cpufreq counters of power/cpu_frequency).

INCLUDE PERFETTO MODULE counters.intervals;

-- One row per interval where a CPU's frequency stayed the same.
CREATE PERFETTO TABLE cpu_frequency_counters(
  -- The counter row the interval starts at.
  id LONG,
  -- The CPU's cpufreq counter track.
  track_id JOINID(track.id),
  -- Start of the interval.
  ts TIMESTAMP,
  -- Its length (to the next change, or the trace's end).
  dur DURATION,
  -- The frequency in kHz.
  freq LONG,
  -- The CPU (cpu.ucpu).
  ucpu LONG,
  -- The CPU's number on its machine.
  cpu LONG
)
AS
SELECT
  iv.id,
  iv.track_id,
  iv.ts,
  iv.dur,
  CAST(iv.value AS INT) AS freq,
  c.ucpu,
  t.cpu
FROM counter_leading_intervals!((
  SELECT v.*
  FROM counter AS v
  JOIN cpu_counter_track AS ct ON ct.id = v.track_id AND ct.name = 'cpufreq'
)) AS iv
JOIN cpu_counter_track AS t ON t.id = iv.track_id
JOIN cpu AS c ON c.machine_id IS t.machine_id AND c.cpu = t.cpu;

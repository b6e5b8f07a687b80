-- SPDX-License-Identifier: Apache-2.0
-- linux.cpu.idle: each CPU's idle state as intervals of constant state
-- (from the cpuidle counters of power/cpu_idle).

INCLUDE PERFETTO MODULE counters.intervals;

-- One row per interval where a CPU's idle state stayed the same.
CREATE PERFETTO TABLE cpu_idle_counters(
  -- The counter row the interval starts at.
  id LONG,
  -- The CPU's cpuidle counter track.
  track_id JOINID(track.id),
  -- Start of the interval.
  ts TIMESTAMP,
  -- Its length.
  dur DURATION,
  -- The idle state: -1 when the CPU is active (the kernel's 4294967295),
  -- deeper states with larger numbers.
  idle LONG,
  -- The CPU.
  cpu LONG
)
AS
SELECT
  iv.id,
  iv.track_id,
  iv.ts,
  iv.dur,
  CAST(iif(iv.value = 4294967295, -1, iv.value) AS INT) AS idle,
  t.cpu
FROM counter_leading_intervals!((
  SELECT v.*
  FROM counter AS v
  JOIN cpu_counter_track AS ct ON ct.id = v.track_id AND ct.name = 'cpuidle'
)) AS iv
JOIN cpu_counter_track AS t ON t.id = iv.track_id;

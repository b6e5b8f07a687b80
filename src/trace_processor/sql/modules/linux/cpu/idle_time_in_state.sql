-- SPDX-License-Identifier: Apache-2.0
-- linux.cpu.idle_time_in_state: shares of time in each cpuidle state,
-- from the cumulative residency counters of sysfs (the cpu_idle_state
-- tracks that sys_stats polling writes), per CPU and over all CPUs of a
-- machine. Residencies and time slices are in microseconds.

INCLUDE PERFETTO MODULE time.conversion;

-- Per CPU and state, between each poll and the one before: the time the
-- CPU spent in the state, the time that passed, and their ratio in
-- percent (at most 100). State 'C0' (not idle) is the time that passed
-- less all the idle states' time, per CPU and poll.
CREATE PERFETTO TABLE linux_per_cpu_idle_time_in_state_counters(
  -- When the poll was taken.
  ts TIMESTAMP,
  -- The machine of the CPU.
  machine_id JOINID(machine.id),
  -- The idle state's name ('C0' for not idle).
  state STRING,
  -- The CPU.
  cpu LONG,
  -- Time in the state over time passed, in percent.
  idle_percentage DOUBLE,
  -- Time in the state since the previous poll, in microseconds.
  total_residency DOUBLE,
  -- Time since the previous poll, in microseconds.
  time_slice LONG
)
AS
WITH
  polls AS (
    SELECT
      c.ts,
      c.track_id,
      t.machine_id,
      extract_arg(t.dimension_arg_set_id, 'state') AS state,
      extract_arg(t.dimension_arg_set_id, 'cpu') AS cpu,
      c.value - lag(c.value) OVER w AS total_residency,
      time_to_us(c.ts - lag(c.ts, 1) OVER w) AS time_slice
    FROM counter AS c
    JOIN track AS t ON t.id = c.track_id
    WHERE t.type = 'cpu_idle_state'
    WINDOW w AS (PARTITION BY c.track_id ORDER BY c.ts)
  ),
  deltas AS (
    SELECT * FROM polls WHERE time_slice IS NOT NULL
  )
SELECT
  d.ts,
  d.machine_id,
  d.state,
  d.cpu,
  min(100, (d.total_residency / d.time_slice) * 100) AS idle_percentage,
  d.total_residency,
  d.time_slice
FROM deltas AS d
UNION ALL
SELECT
  d.ts,
  d.machine_id,
  'C0' AS state,
  d.cpu,
  max(0, ((d.time_slice - sum(d.total_residency)) / d.time_slice) * 100) AS idle_percentage,
  max(0, d.time_slice - sum(d.total_residency)) AS total_residency,
  d.time_slice
FROM deltas AS d
GROUP BY d.ts, d.cpu, d.machine_id;

-- The same over all CPUs of a machine: per poll and state, the CPUs'
-- residencies and time slices added up, and their ratio in percent.
CREATE PERFETTO TABLE linux_cpu_idle_time_in_state_counters(
  -- When the poll was taken.
  ts TIMESTAMP,
  -- The machine.
  machine_id JOINID(machine.id),
  -- The idle state's name ('C0' for not idle).
  state STRING,
  -- Time in the state over time passed, over all CPUs, in percent.
  idle_percentage DOUBLE,
  -- Time all CPUs spent in the state, in microseconds.
  total_residency DOUBLE,
  -- Time that passed, times the CPUs, in microseconds.
  time_slice LONG
)
AS
SELECT
  p.ts,
  p.machine_id,
  p.state,
  min(100, (sum(p.total_residency) / sum(p.time_slice)) * 100) AS idle_percentage,
  sum(p.total_residency) AS total_residency,
  sum(p.time_slice) AS time_slice
FROM linux_per_cpu_idle_time_in_state_counters AS p
GROUP BY p.ts, p.state, p.machine_id;

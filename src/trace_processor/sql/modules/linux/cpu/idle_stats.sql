-- SPDX-License-Identifier: Apache-2.0
-- linux.cpu.idle_stats: per CPU and idle state, how often and how long
-- the CPU was in it.

INCLUDE PERFETTO MODULE linux.cpu.idle;

-- Per CPU and idle state (numbered from 1, as C-states): times entered,
-- total and average time in it, and its share of all the CPU's time in
-- cpu_idle_counters in percent.
CREATE PERFETTO TABLE cpu_idle_stats(
  -- The CPU.
  cpu LONG,
  -- The idle state (C-state), from 1.
  state LONG,
  -- How many intervals the CPU spent in it.
  count LONG,
  -- Their total length.
  dur DURATION,
  -- Their average length.
  avg_dur DURATION,
  -- dur over all the CPU's intervals' time, in percent.
  idle_percent DOUBLE
)
AS
WITH
  per_state AS (
    SELECT
      c.cpu,
      c.idle + 1 AS state,
      count(c.idle) AS count,
      sum(c.dur) AS dur,
      sum(c.dur) / count(c.idle) AS avg_dur
    FROM cpu_idle_counters AS c
    WHERE c.idle >= 0
    GROUP BY c.cpu, c.idle
  ),
  per_cpu AS (
    SELECT c.cpu, sum(c.dur) AS dur FROM cpu_idle_counters AS c GROUP BY c.cpu
  )
SELECT s.cpu, s.state, s.count, s.dur, s.avg_dur, s.dur * 100.0 / t.dur AS idle_percent
FROM per_state AS s
JOIN per_cpu AS t ON t.cpu = s.cpu;

-- SPDX-License-Identifier: Apache-2.0
-- sched.time_in_state: how long each thread spent in each scheduling
-- state, over the trace or within an interval.

INCLUDE PERFETTO MODULE intervals.intersect;

-- Per thread and state: the thread's time in all its thread states, its
-- time in this one, and that in whole percent.
CREATE PERFETTO TABLE sched_time_in_state_for_thread(
  -- The thread.
  utid JOINID(thread.id),
  -- Its time in all its thread states.
  total_runtime LONG,
  -- The state.
  state STRING,
  -- Its time in the state.
  time_in_state LONG,
  -- That in whole percent of total_runtime.
  percentage_in_state LONG
)
AS
WITH
  per_thread AS (
    SELECT st.utid, sum(st.dur) AS total FROM thread_state AS st GROUP BY st.utid
  ),
  per_state AS (
    SELECT st.utid, st.state, sum(st.dur) AS time_in_state
    FROM thread_state AS st
    GROUP BY st.utid, st.state
  )
SELECT
  s.utid,
  t.total AS total_runtime,
  s.state,
  s.time_in_state,
  (s.time_in_state * 100) / t.total AS percentage_in_state
FROM per_state AS s
JOIN per_thread AS t ON t.utid = s.utid;

-- The percentage of a state, for sched_percentage_of_time_in_state.
CREATE PERFETTO MACRO _case_for_state(state Expr)
RETURNS Expr
AS max(CASE WHEN state = $state THEN percentage_in_state END);

-- Per thread, the whole percent of its time running, runnable, runnable
-- after preemption, sleeping, in uninterruptible sleep and in any other
-- state.
CREATE PERFETTO TABLE sched_percentage_of_time_in_state(
  -- The thread.
  utid JOINID(thread.id),
  -- Running.
  running LONG,
  -- Runnable (R).
  runnable LONG,
  -- Runnable after preemption (R+).
  runnable_preempted LONG,
  -- Sleeping (S).
  sleeping LONG,
  -- Uninterruptible sleep (D).
  uninterruptible_sleep LONG,
  -- Stopped, traced, dead, idle, wakekill, waking, parked or no load.
  other LONG
)
AS
SELECT
  utid,
  _case_for_state!('Running') AS running,
  _case_for_state!('R') AS runnable,
  _case_for_state!('R+') AS runnable_preempted,
  _case_for_state!('S') AS sleeping,
  _case_for_state!('D') AS uninterruptible_sleep,
  sum(
    CASE WHEN state IN ('T', 't', 'X', 'Z', 'x', 'I', 'K', 'W', 'P', 'N') THEN time_in_state END
  ) * 100 / total_runtime AS other
FROM sched_time_in_state_for_thread
GROUP BY utid;

-- The thread's time per (state, IO wait, blocked function) within
-- [$ts, $ts + $dur), longest first.
CREATE PERFETTO FUNCTION sched_time_in_state_for_thread_in_interval(
  -- Start of the interval.
  ts TIMESTAMP,
  -- Its length.
  dur DURATION,
  -- The thread.
  utid JOINID(thread.id)
)
RETURNS TABLE(
  -- The state.
  state STRING,
  -- Whether it waited on IO.
  io_wait BOOL,
  -- The kernel function it was blocked in.
  blocked_function LONG,
  -- Its time so within the interval.
  dur DURATION
)
AS
SELECT st.state, st.io_wait, st.blocked_function, sum(ii.dur) AS dur
FROM thread_state AS st
JOIN _interval_intersect_single!($ts, $dur, (
  SELECT x.id, x.ts, x.dur FROM thread_state AS x WHERE x.utid = $utid AND x.dur > 0
)) AS ii ON ii.id = st.id
GROUP BY 1, 2, 3
ORDER BY 4 DESC;

-- The same per CPU too.
CREATE PERFETTO FUNCTION sched_time_in_state_and_cpu_for_thread_in_interval(
  -- Start of the interval.
  ts TIMESTAMP,
  -- Its length.
  dur DURATION,
  -- The thread.
  utid JOINID(thread.id)
)
RETURNS TABLE(
  -- The state.
  state STRING,
  -- Whether it waited on IO.
  io_wait BOOL,
  -- The CPU (for running states).
  cpu LONG,
  -- The kernel function it was blocked in.
  blocked_function LONG,
  -- Its time so within the interval.
  dur DURATION
)
AS
SELECT st.state, st.io_wait, st.cpu, st.blocked_function, sum(ii.dur) AS dur
FROM thread_state AS st
JOIN _interval_intersect_single!($ts, $dur, (
  SELECT x.id, x.ts, x.dur FROM thread_state AS x WHERE x.utid = $utid AND x.dur > 0
)) AS ii ON ii.id = st.id
GROUP BY 1, 2, 3, 4
ORDER BY 5 DESC;

-- Per end state of the slices that ran on the CPU, their time within
-- [$ts, $ts + $dur).
CREATE PERFETTO FUNCTION sched_time_in_state_for_cpu_in_interval(
  -- The CPU.
  cpu LONG,
  -- Start of the interval.
  ts TIMESTAMP,
  -- Its length.
  dur LONG
)
RETURNS TABLE(
  -- The end state of the slices.
  end_state STRING,
  -- Their time within the interval.
  dur LONG
)
AS
WITH on_cpu AS (
  SELECT s.id, s.ts, s.dur FROM sched AS s WHERE s.cpu = $cpu AND s.dur != -1
)
SELECT s.end_state, sum(ii.dur) AS dur
FROM sched AS s
JOIN _interval_intersect_single!($ts, $dur, on_cpu) AS ii ON ii.id = s.id
GROUP BY s.end_state;

-- SPDX-License-Identifier: Apache-2.0
-- sched.thread_level_parallelism: how many threads were runnable, in
-- uninterruptible sleep, or running (busy CPUs) over time.

INCLUDE PERFETTO MODULE intervals.overlap;

-- The number of threads in state R, a row each time it changes.
CREATE PERFETTO TABLE sched_runnable_thread_count(
  -- When the count changed.
  ts TIMESTAMP,
  -- Runnable threads from ts on.
  runnable_thread_count LONG
)
AS
WITH runnable AS (SELECT st.ts, st.dur FROM thread_state AS st WHERE st.state = 'R')
SELECT o.ts, o.value AS runnable_thread_count
FROM intervals_overlap_count!(runnable, ts, dur) AS o
ORDER BY o.ts;

-- The number of threads in uninterruptible sleep (D), a row each time it
-- changes.
CREATE PERFETTO TABLE sched_uninterruptible_sleep_thread_count(
  -- When the count changed.
  ts TIMESTAMP,
  -- Threads in uninterruptible sleep from ts on.
  uninterruptible_sleep_thread_count LONG
)
AS
WITH sleeping AS (SELECT st.ts, st.dur FROM thread_state AS st WHERE st.state = 'D')
SELECT o.ts, o.value AS uninterruptible_sleep_thread_count
FROM intervals_overlap_count!(sleeping, ts, dur) AS o
ORDER BY o.ts;

-- The number of CPUs running something other than their idle thread, a
-- row each time it changes.
CREATE PERFETTO TABLE sched_active_cpu_count(
  -- When the count changed.
  ts TIMESTAMP,
  -- Busy CPUs from ts on.
  active_cpu_count LONG
)
AS
WITH busy AS (
  SELECT s.ts, s.dur
  FROM sched AS s
  WHERE s.utid NOT IN (SELECT t.utid FROM thread AS t WHERE t.is_idle)
)
SELECT o.ts, o.value AS active_cpu_count
FROM intervals_overlap_count!(busy, ts, dur) AS o
ORDER BY o.ts;

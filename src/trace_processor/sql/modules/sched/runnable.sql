-- SPDX-License-Identifier: Apache-2.0
-- sched.runnable: for each time a thread ran, the runnable states that
-- led to it.

-- For every finished 'Running' thread state: the latest earlier runnable
-- state (R or R+) of the thread, and the latest earlier one that had a
-- waker outside interrupt context. Thread states still open (dur -1) are
-- not considered.
CREATE PERFETTO TABLE sched_previous_runnable_on_thread(
  -- The running thread state.
  id JOINID(thread_state.id),
  -- The thread's runnable state before it.
  prev_runnable_id JOINID(thread_state.id),
  -- The thread's runnable state before it that a thread woke.
  prev_wakeup_runnable_id JOINID(thread_state.id)
)
AS
WITH r AS (
  SELECT
    ts.id,
    ts.state,
    max(ts.id) FILTER (WHERE ts.state != 'Running') OVER w AS prev_runnable_id,
    max(ts.id) FILTER (
      WHERE ts.waker_utid IS NOT NULL AND (ts.irq_context IS NULL OR ts.irq_context != 1)
    ) OVER w AS prev_wakeup_runnable_id
  FROM thread_state AS ts
  WHERE ts.state GLOB 'R*' AND ts.dur != -1
  WINDOW w AS (PARTITION BY ts.utid ORDER BY ts.id)
)
SELECT r.id, r.prev_runnable_id, r.prev_wakeup_runnable_id
FROM r
WHERE r.state = 'Running'
ORDER BY r.id;

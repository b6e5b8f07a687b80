-- SPDX-License-Identifier: Apache-2.0
-- sched.latency: how long a thread waited runnable before each time it
-- ran.

INCLUDE PERFETTO MODULE sched.runnable;

-- The sched slice that each running thread state is (same thread, start
-- and duration).
CREATE PERFETTO VIEW _sched_with_thread_state_join AS
SELECT st.id AS thread_state_id, s.id AS sched_id
FROM sched AS s
JOIN thread_state AS st ON st.utid = s.utid AND st.ts = s.ts AND st.dur = s.dur;

-- For each time a thread ran: the runnable state before it and its
-- length, the scheduling latency.
CREATE PERFETTO TABLE sched_latency_for_running_interval(
  -- The running thread state.
  thread_state_id JOINID(thread_state.id),
  -- The same run in the sched table.
  sched_id JOINID(sched.id),
  -- The thread.
  utid JOINID(thread.id),
  -- The runnable state before the run.
  runnable_latency_id JOINID(thread_state.id),
  -- The runnable state's duration.
  latency_dur LONG
)
AS
SELECT
  r.id AS thread_state_id,
  j.sched_id,
  p.utid,
  r.prev_runnable_id AS runnable_latency_id,
  p.dur AS latency_dur
FROM sched_previous_runnable_on_thread AS r
JOIN thread_state AS p ON p.id = r.prev_runnable_id
JOIN _sched_with_thread_state_join AS j ON j.thread_state_id = r.id;

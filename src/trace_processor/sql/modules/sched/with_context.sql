-- SPDX-License-Identifier: Apache-2.0
-- sched.with_context: the sched table with the names of each slice's
-- thread and process.

INCLUDE PERFETTO MODULE std.thread.with_context;

-- Every scheduling slice (a time a thread ran on a CPU, each one also a
-- 'Running' row of thread_state) with its thread and process.
CREATE PERFETTO VIEW sched_with_thread_process(
  -- The sched slice's id.
  id ID(sched.id),
  -- When the thread started running.
  ts TIMESTAMP,
  -- How long it ran.
  dur DURATION,
  -- The thread.
  utid JOINID(thread.id),
  -- The thread's name.
  thread_name STRING,
  -- The thread's process.
  upid JOINID(process.id),
  -- The process's name.
  process_name STRING,
  -- The CPU it ran on (on a trace of several machines, see ucpu in the
  -- sched table).
  cpu LONG,
  -- The thread's state when it stopped running (R, R+, S, D, ...).
  end_state STRING,
  -- The kernel priority it ran at.
  priority LONG
)
AS
SELECT
  s.id,
  s.ts,
  s.dur,
  s.utid,
  tp.upid,
  tp.thread_name,
  tp.process_name,
  s.cpu,
  s.end_state,
  s.priority
FROM _thread_with_process AS tp
JOIN sched AS s ON s.utid = tp.utid;

-- SPDX-License-Identifier: Apache-2.0
-- sched.states: readable names of the kernel's scheduling states as
-- thread_state.state and sched.end_state spell them.

-- The readable name of a scheduling state ('R' -> 'Runnable', 'R+' ->
-- 'Runnable (Preempted)', 'S' -> 'Sleeping', 'D' -> 'Uninterruptible
-- Sleep', ...); Windows' (ETW) state names and anything unknown come back
-- as given.
CREATE PERFETTO FUNCTION sched_state_to_human_readable_string(
  -- The state as the thread_state table has it.
  short_name STRING
)
-- Its readable name.
RETURNS STRING
AS
SELECT
  CASE $short_name
    WHEN 'R' THEN 'Runnable'
    WHEN 'R+' THEN 'Runnable (Preempted)'
    WHEN 'S' THEN 'Sleeping'
    WHEN 'D' THEN 'Uninterruptible Sleep'
    WHEN 'T' THEN 'Stopped'
    WHEN 't' THEN 'Traced'
    WHEN 'X' THEN 'Exit (Dead)'
    WHEN 'Z' THEN 'Exit (Zombie)'
    WHEN 'x' THEN 'Task Dead'
    WHEN 'I' THEN 'Idle'
    WHEN 'K' THEN 'Wakekill'
    WHEN 'W' THEN 'Waking'
    WHEN 'P' THEN 'Parked'
    WHEN 'N' THEN 'No Load'
    ELSE $short_name
  END;

-- The readable name of a state, with ' (IO)' or ' (non-IO)' after it
-- when io_wait says which (nothing when io_wait is NULL); a NULL state
-- gives ''.
CREATE PERFETTO FUNCTION sched_state_io_to_human_readable_string(
  -- The state as the thread_state table has it.
  sched_state STRING,
  -- thread_state.io_wait: 1, 0 or NULL.
  io_wait BOOL
)
-- The readable name, with the IO wait note.
RETURNS STRING
AS
SELECT
  coalesce(sched_state_to_human_readable_string($sched_state), '')
  || CASE $io_wait WHEN 1 THEN ' (IO)' WHEN 0 THEN ' (non-IO)' ELSE '' END;

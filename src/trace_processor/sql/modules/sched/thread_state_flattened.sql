-- SPDX-License-Identifier: Apache-2.0
-- sched.thread_state_flattened: the thread states under a thread slice,
-- cut by the flattened slices (slices.flat_slices), and their time per
-- state.

INCLUDE PERFETTO MODULE slices.flat_slices;

CREATE VIRTUAL TABLE __span_joined_thread USING SPAN_JOIN(_slice_flattened PARTITIONED utid, thread_state PARTITIONED utid);

-- The thread states, cut by the flattened slices, inside the slice
-- $slice_id on the thread $utid (NULL: any).
CREATE PERFETTO FUNCTION _get_flattened_thread_state(
  -- The slice (NULL: any).
  slice_id JOINID(slice.id),
  -- The thread (NULL: any).
  utid JOINID(thread.id)
)
RETURNS TABLE(
  -- Start of the part.
  ts TIMESTAMP,
  -- Its length.
  dur DURATION,
  -- The thread.
  utid JOINID(thread.id),
  -- The depth of the flattened slice.
  depth LONG,
  -- Its name.
  name STRING,
  -- The flattened slice.
  slice_id JOINID(slice.id),
  -- Its track.
  track_id JOINID(track.id),
  -- The CPU of the state.
  cpu LONG,
  -- The state.
  state STRING,
  -- Whether it waited for I/O.
  io_wait LONG,
  -- The kernel function it blocked in.
  blocked_function STRING,
  -- The thread that woke it.
  waker_utid JOINID(thread.id),
  -- Whether an IRQ woke it.
  irq_context LONG
)
AS
WITH
  chosen AS (
    SELECT s.ts, s.dur, s.track_id
    FROM slice AS s
    JOIN thread_track AS tt ON s.track_id = tt.id
    JOIN thread AS th USING (utid)
    WHERE ($slice_id IS NULL OR s.id = $slice_id)
      AND ($utid IS NULL OR utid = $utid)
  )
SELECT
  j.ts, j.dur, j.utid, j.depth, j.name, j.slice_id, j.track_id, j.cpu, j.state,
  j.io_wait, j.blocked_function, j.waker_utid, j.irq_context
FROM __span_joined_thread AS j
WHERE j.track_id = (SELECT c.track_id FROM chosen AS c)
  AND j.ts >= (SELECT c.ts FROM chosen AS c)
  AND j.ts < (SELECT c.ts + c.dur FROM chosen AS c);

-- The time of each state in each flattened slice of
-- _get_flattened_thread_state($slice_id, $utid).
CREATE PERFETTO FUNCTION _get_flattened_thread_state_aggregated(
  -- The slice (NULL: any).
  slice_id JOINID(slice.id),
  -- The thread (NULL: any).
  utid JOINID(thread.id)
)
RETURNS TABLE(
  -- The flattened slice.
  slice_id JOINID(slice.id),
  -- Its name.
  slice_name STRING,
  -- Time in D without I/O wait.
  uninterruptible_sleep_nonio LONG,
  -- Time in D with I/O wait.
  uninterruptible_sleep_io LONG,
  -- Time in R.
  runnable LONG,
  -- Time in S.
  sleeping LONG,
  -- Time in T.
  stopped LONG,
  -- Time in t.
  traced LONG,
  -- Time in X.
  exit_dead LONG,
  -- Time in Z.
  exit_zombie LONG,
  -- Time in x.
  task_dead LONG,
  -- Time in K.
  wake_kill LONG,
  -- Time in W.
  waking LONG,
  -- Time in P.
  parked LONG,
  -- Time in N.
  no_load LONG,
  -- Time in R+.
  runnable_preempted LONG,
  -- Time running.
  running LONG,
  -- Time in I.
  idle LONG,
  -- All the time.
  dur DURATION,
  -- The slice's depth.
  depth LONG
)
AS
WITH
  parts AS (SELECT * FROM _get_flattened_thread_state($slice_id, $utid))
SELECT
  p.slice_id,
  p.name AS slice_name,
  sum(iif(p.state = 'D' AND p.io_wait = 0, p.dur, NULL)) AS uninterruptible_sleep_nonio,
  sum(iif(p.state = 'D' AND p.io_wait = 1, p.dur, NULL)) AS uninterruptible_sleep_io,
  sum(iif(p.state = 'R', p.dur, NULL)) AS runnable,
  sum(iif(p.state = 'S', p.dur, NULL)) AS sleeping,
  sum(iif(p.state = 'T', p.dur, NULL)) AS stopped,
  sum(iif(p.state = 't', p.dur, NULL)) AS traced,
  sum(iif(p.state = 'X', p.dur, NULL)) AS exit_dead,
  sum(iif(p.state = 'Z', p.dur, NULL)) AS exit_zombie,
  sum(iif(p.state = 'x', p.dur, NULL)) AS task_dead,
  sum(iif(p.state = 'K', p.dur, NULL)) AS wake_kill,
  sum(iif(p.state = 'W', p.dur, NULL)) AS waking,
  sum(iif(p.state = 'P', p.dur, NULL)) AS parked,
  sum(iif(p.state = 'N', p.dur, NULL)) AS no_load,
  sum(iif(p.state = 'R+', p.dur, NULL)) AS runnable_preempted,
  sum(iif(p.state = 'Running', p.dur, NULL)) AS running,
  sum(iif(p.state = 'I', p.dur, NULL)) AS idle,
  sum(p.dur) AS dur,
  p.depth
FROM parts AS p
GROUP BY p.slice_id;

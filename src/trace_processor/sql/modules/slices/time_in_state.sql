-- SPDX-License-Identifier: Apache-2.0
-- slices.time_in_state: how long each thread slice's thread spent in each
-- thread state during it.

INCLUDE PERFETTO MODULE intervals.intersect;
INCLUDE PERFETTO MODULE slices.with_context;

-- Per thread slice (of a thread other than the swapper, with a positive
-- duration) and thread state (state, io_wait, blocked_function), the time
-- spent in it during the slice.
CREATE PERFETTO TABLE thread_slice_time_in_state(
  -- The slice.
  id JOINID(slice.id),
  -- Its name.
  name STRING,
  -- Its thread.
  utid JOINID(thread.id),
  -- The thread's name.
  thread_name STRING,
  -- Its process.
  upid JOINID(process.id),
  -- The process's name.
  process_name STRING,
  -- The thread state.
  state STRING,
  -- Whether it waited for I/O.
  io_wait BOOL,
  -- The kernel function it blocked in.
  blocked_function STRING,
  -- Time in that state during the slice.
  dur DURATION
)
AS
SELECT
  ii.id_0 AS id,
  t.name,
  t.utid,
  t.thread_name,
  t.upid,
  t.process_name,
  st.state,
  st.io_wait,
  st.blocked_function,
  sum(ii.dur) AS dur
FROM _interval_intersect!(
  (
    (SELECT * FROM thread_slice WHERE utid > 0 AND dur > 0),
    (SELECT * FROM thread_state WHERE dur > 0)
  ),
  (utid)
) AS ii
JOIN thread_slice AS t ON t.id = ii.id_0
JOIN thread_state AS st ON st.id = ii.id_1
GROUP BY ii.id_0, st.state, st.io_wait, st.blocked_function
ORDER BY ii.id_0;

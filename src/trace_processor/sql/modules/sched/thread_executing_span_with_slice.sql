-- SPDX-License-Identifier: Apache-2.0
-- sched.thread_executing_span_with_slice: the critical path of
-- sched.thread_executing_span cut by thread states and flattened slices,
-- as stacks a flame graph can show: the root thread's own state and
-- slices, then the blocking thread's, then the CPU.

INCLUDE PERFETTO MODULE slices.flat_slices;
INCLUDE PERFETTO MODULE sched.thread_executing_span;
INCLUDE PERFETTO MODULE intervals.intersect;

-- The critical path of every wakeup node, with the blocking and the root
-- thread of each part.
CREATE PERFETTO TABLE _critical_path_all AS
WITH
  per_root AS (
    SELECT *
    FROM _critical_path_by_roots!((SELECT g.id AS root_node_id FROM _wakeup_graph AS g), _wakeup_graph)
  )
SELECT
  row_number() OVER (ORDER BY p.ts) AS id,
  p.ts,
  p.dur,
  p.ts + p.dur AS ts_end,
  bn.utid,
  rn.utid AS root_utid
FROM per_root AS p
JOIN _wakeup_graph AS bn ON bn.id = p.id
JOIN _wakeup_graph AS rn ON rn.id = p.root_id
ORDER BY p.ts;

-- The thread states, renamed for the span join.
CREATE PERFETTO VIEW _span_thread_state_view AS
SELECT
  ts.id AS thread_state_id, ts.ts, ts.dur, ts.utid, ts.state,
  ts.blocked_function AS function, ts.io_wait, ts.cpu
FROM thread_state AS ts;

-- The flattened slices, renamed for the span join.
CREATE PERFETTO VIEW _span_slice_view AS
SELECT
  f.slice_id, f.depth AS slice_depth, cast_int!(f.ts) AS ts, cast_int!(f.dur) AS dur, f.utid
FROM _slice_flattened AS f;

CREATE VIRTUAL TABLE _span_thread_state_slice_sp USING SPAN_LEFT_JOIN(
    _span_thread_state_view PARTITIONED utid,
    _span_slice_view PARTITIONED utid);

-- Each thread state cut by the flattened slice (if any) open during it.
CREATE PERFETTO TABLE _span_thread_state_slice AS
SELECT
  row_number() OVER (ORDER BY sp.ts) AS id,
  sp.ts,
  sp.dur,
  sp.ts + sp.dur AS ts_end,
  sp.utid,
  sp.thread_state_id,
  sp.state,
  sp.function,
  sp.cpu,
  sp.io_wait,
  sp.slice_id,
  sp.slice_depth
FROM _span_thread_state_slice_sp AS sp
WHERE sp.dur > 0
ORDER BY sp.ts;

-- The parts of _critical_path_all and _span_thread_state_slice that
-- overlap on the same (blocking) thread.
CREATE PERFETTO TABLE _critical_path_thread_state_slice_raw AS
SELECT ii.id_0 AS cr_id, ii.id_1 AS th_id, ii.ts, ii.dur
FROM _interval_intersect!((_critical_path_all, _span_thread_state_slice), (utid)) AS ii;

-- The critical path with the blocking thread's state and slice.
CREATE PERFETTO TABLE _critical_path_thread_state_slice AS
SELECT
  raw.ts,
  raw.dur,
  cr.utid,
  th.thread_state_id,
  th.state,
  th.function,
  th.cpu,
  th.io_wait,
  th.slice_id,
  th.slice_depth,
  cr.root_utid
FROM _critical_path_thread_state_slice_raw AS raw
JOIN _critical_path_all AS cr ON cr.id = raw.cr_id
JOIN _span_thread_state_slice AS th ON th.id = raw.th_id;

CREATE VIRTUAL TABLE _self_sp USING SPAN_LEFT_JOIN(thread_state PARTITIONED utid, _slice_flattened PARTITIONED utid);

-- The root thread's own states and slices, renamed for the span join.
CREATE PERFETTO VIEW _self_view AS
SELECT
  s.id AS self_thread_state_id,
  s.slice_id AS self_slice_id,
  s.ts,
  s.dur,
  s.utid AS root_utid,
  s.state AS self_state,
  s.blocked_function AS self_function,
  s.cpu AS self_cpu,
  s.io_wait AS self_io_wait,
  s.depth AS self_slice_depth
FROM _self_sp AS s;

CREATE VIRTUAL TABLE _self_and_critical_path_sp USING SPAN_JOIN(
    _self_view PARTITIONED root_utid,
    _critical_path_thread_state_slice PARTITIONED root_utid);

-- The stacks of the critical path of thread $root_utid over [$ts, $ts +
-- $dur): the thread's own state, kernel function, I/O wait, process,
-- thread and slices, then the blocking thread's, then the CPU. The
-- enable_* flags keep (1) or blank (0) the names of those levels.
CREATE PERFETTO FUNCTION _critical_path_stack(
  -- The thread.
  root_utid JOINID(thread.id),
  -- The window's start.
  ts TIMESTAMP,
  -- The window's length.
  dur DURATION,
  -- Whether to name the process levels.
  enable_process_name LONG,
  -- Whether to name the thread levels.
  enable_thread_name LONG,
  -- Whether to name the root thread's slices.
  enable_self_slice LONG,
  -- Whether to name the blocking thread's slices.
  enable_critical_path_slice LONG
)
RETURNS TABLE(
  -- The thread state or slice of the level.
  id LONG,
  -- Start of the part.
  ts TIMESTAMP,
  -- Its length.
  dur DURATION,
  -- The thread of the level.
  utid JOINID(thread.id),
  -- The level.
  stack_depth LONG,
  -- The level's name.
  name STRING,
  -- 'thread_state' or 'slice'.
  table_name STRING,
  -- The thread.
  root_utid JOINID(thread.id)
)
AS
WITH
  clipped AS (
    SELECT
      sp.self_thread_state_id, sp.self_state, sp.self_slice_id, sp.self_slice_depth,
      sp.self_function, sp.self_io_wait, sp.thread_state_id, sp.state, sp.function,
      sp.io_wait, sp.slice_id, sp.slice_depth, sp.cpu, sp.utid,
      max(sp.ts, $ts) AS ts,
      min(sp.ts + sp.dur, $ts + $dur) AS end_ts,
      sp.root_utid
    FROM _self_and_critical_path_sp AS sp
    WHERE sp.dur > 0 AND sp.root_utid = $root_utid
  ),
  spans AS MATERIALIZED (
    SELECT
      c.self_thread_state_id, c.self_state, c.self_slice_id, c.self_slice_depth,
      c.self_function, c.self_io_wait, c.thread_state_id, c.state, c.function,
      c.io_wait, c.slice_id, c.slice_depth, c.cpu, c.utid,
      c.ts, c.end_ts - c.ts AS dur, c.root_utid
    FROM clipped AS c
    WHERE c.end_ts - c.ts > 0
  ),
  self_stack AS MATERIALIZED (
    SELECT
      s.self_thread_state_id AS id, s.ts, s.dur, s.root_utid AS utid, 0 AS stack_depth,
      'thread_state: ' || s.self_state AS name, 'thread_state' AS table_name, s.root_utid
    FROM spans AS s
    UNION ALL
    SELECT
      s.self_thread_state_id, s.ts, s.dur, s.root_utid, 1,
      iif(s.self_state GLOB 'R*', NULL, 'kernel function: ' || s.self_function),
      'thread_state', s.root_utid
    FROM spans AS s
    UNION ALL
    SELECT
      s.self_thread_state_id, s.ts, s.dur, s.root_utid, 2,
      iif(s.self_state GLOB 'R*', NULL, 'io_wait: ' || s.self_io_wait),
      'thread_state', s.root_utid
    FROM spans AS s
    UNION ALL
    SELECT
      s.self_thread_state_id, s.ts, s.dur, th.utid, 3,
      iif($enable_process_name, 'process_name: ' || p.name, NULL),
      'thread_state', s.root_utid
    FROM spans AS s
    LEFT JOIN thread AS th ON th.utid = s.root_utid
    LEFT JOIN process AS p ON p.upid = th.upid
    UNION ALL
    SELECT
      s.self_thread_state_id, s.ts, s.dur, th.utid, 4,
      iif($enable_thread_name, 'thread_name: ' || th.name, NULL),
      'thread_state', s.root_utid
    FROM spans AS s
    LEFT JOIN thread AS th ON th.utid = s.root_utid
    JOIN process AS p ON p.upid = th.upid
    UNION ALL
    SELECT
      a.id, s.ts, s.dur, s.root_utid, a.depth + 5,
      iif($enable_self_slice, a.name, NULL),
      'slice', s.root_utid
    FROM spans AS s, ancestor_slice(s.self_slice_id) AS a
    WHERE a.dur != -1
    UNION ALL
    SELECT
      s.self_slice_id, s.ts, s.dur, s.root_utid, s.self_slice_depth + 5,
      iif($enable_self_slice, sl.name, NULL),
      'slice', s.root_utid
    FROM spans AS s
    LEFT JOIN slice AS sl ON sl.id = s.self_slice_id
    ORDER BY stack_depth
  ),
  blocker_depth AS MATERIALIZED (
    SELECT ss.root_utid, ss.ts, max(ss.stack_depth) + 1 AS start_depth
    FROM self_stack AS ss
    GROUP BY ss.root_utid, ss.ts
  ),
  blocker AS MATERIALIZED (
    SELECT
      s.thread_state_id, s.state, s.function, s.io_wait, s.slice_id, s.slice_depth,
      s.ts, s.dur, s.root_utid, s.utid, d.start_depth
    FROM spans AS s
    JOIN blocker_depth AS d ON d.root_utid = s.root_utid AND d.ts = s.ts
    WHERE d.root_utid = $root_utid AND s.root_utid != s.utid
  ),
  blocker_stack AS MATERIALIZED (
    SELECT
      b.thread_state_id AS id, b.ts, b.dur, b.utid, b.start_depth AS stack_depth,
      'blocking thread_state: ' || b.state AS name, 'thread_state' AS table_name, b.root_utid
    FROM blocker AS b
    UNION ALL
    SELECT
      b.thread_state_id, b.ts, b.dur, th.utid, b.start_depth + 1,
      'blocking process_name: ' || p.name, 'thread_state', b.root_utid
    FROM blocker AS b
    JOIN thread AS th ON th.utid = b.utid
    LEFT JOIN process AS p ON p.upid = th.upid
    UNION ALL
    SELECT
      b.thread_state_id, b.ts, b.dur, th.utid, b.start_depth + 2,
      'blocking thread_name: ' || th.name, 'thread_state', b.root_utid
    FROM blocker AS b
    JOIN thread AS th ON th.utid = b.utid
    UNION ALL
    SELECT
      b.thread_state_id, b.ts, b.dur, th.utid, b.start_depth + 3,
      'blocking kernel_function: ' || b.function, 'thread_state', b.root_utid
    FROM blocker AS b
    JOIN thread AS th ON th.utid = b.utid
    UNION ALL
    SELECT
      b.thread_state_id, b.ts, b.dur, th.utid, b.start_depth + 4,
      'blocking io_wait: ' || b.io_wait, 'thread_state', b.root_utid
    FROM blocker AS b
    JOIN thread AS th ON th.utid = b.utid
    UNION ALL
    SELECT
      a.id, b.ts, b.dur, b.utid, a.depth + b.start_depth + 5,
      iif($enable_critical_path_slice, a.name, NULL), 'slice', b.root_utid
    FROM blocker AS b, ancestor_slice(b.slice_id) AS a
    WHERE a.dur != -1
    UNION ALL
    SELECT
      b.slice_id, b.ts, b.dur, b.utid, b.slice_depth + b.start_depth + 5,
      iif($enable_critical_path_slice, sl.name, NULL), 'slice', b.root_utid
    FROM blocker AS b
    LEFT JOIN slice AS sl ON sl.id = b.slice_id
    ORDER BY stack_depth
  ),
  cpu_depth_all AS (
    SELECT bs.root_utid, bs.ts, max(bs.stack_depth) + 1 AS start_depth
    FROM blocker_stack AS bs
    GROUP BY bs.root_utid, bs.ts
    UNION ALL
    SELECT * FROM blocker_depth
  ),
  cpu_depth AS (
    SELECT c.root_utid, c.ts, max(c.start_depth) AS start_depth
    FROM cpu_depth_all AS c
    GROUP BY c.root_utid, c.ts
  ),
  cpu_stack AS (
    SELECT
      s.thread_state_id AS id, s.ts, s.dur, s.utid, d.start_depth AS stack_depth,
      'cpu: ' || s.cpu AS name, 'thread_state' AS table_name, s.root_utid
    FROM spans AS s
    JOIN cpu_depth AS d ON d.root_utid = s.root_utid AND d.ts = s.ts
    WHERE (d.root_utid = $root_utid AND s.state = 'Running') OR s.self_state = 'Running'
  ),
  all_levels AS (
    SELECT * FROM self_stack
    UNION ALL
    SELECT * FROM blocker_stack
    UNION ALL
    SELECT * FROM cpu_stack
  )
SELECT * FROM all_levels AS l WHERE l.id IS NOT NULL;

-- _critical_path_stack with every level named.
CREATE PERFETTO FUNCTION _thread_executing_span_critical_path_stack(
  -- The thread.
  root_utid JOINID(thread.id),
  -- The window's start.
  ts TIMESTAMP,
  -- The window's length.
  dur DURATION
)
RETURNS TABLE(
  -- The thread state or slice of the level.
  id LONG,
  -- Start of the part.
  ts TIMESTAMP,
  -- Its length.
  dur DURATION,
  -- The thread of the level.
  utid JOINID(thread.id),
  -- The level.
  stack_depth LONG,
  -- The level's name.
  name STRING,
  -- 'thread_state' or 'slice'.
  table_name STRING,
  -- The thread.
  root_utid JOINID(thread.id)
)
AS
SELECT * FROM _critical_path_stack($root_utid, $ts, $dur, 1, 1, 1, 1);

-- SPDX-License-Identifier: Apache-2.0
-- sched.thread_executing_span: the wakeup graph of the trace's threads (a
-- node per wakeup: the thread's run after it, the idle before it, the node
-- of the thread that woke it, the thread's previous node) and the critical
-- path it gives: for a thread and a window, which thread was running or
-- held it up at each instant, following wakers back in time
-- (__intrinsic_critical_path_walk).

INCLUDE PERFETTO MODULE intervals.overlap;
INCLUDE PERFETTO MODULE intervals.intersect;

-- 1 when an IRQ or I/O wait woke the thread (no thread to blame).
CREATE PERFETTO MACRO _tes_irq_flag(irq Expr, io Expr)
RETURNS Expr
AS iif($irq IS NULL OR $irq = 0, coalesce($io, 0), 1);

-- Every finished thread state that a waker ended (the runnable states).
CREATE PERFETTO TABLE _runnable_state AS
SELECT
  ts.id, ts.ts, ts.dur, ts.state, ts.utid, ts.waker_id, ts.waker_utid,
  _tes_irq_flag!(ts.irq_context, ts.io_wait) AS is_irq
FROM thread_state AS ts
WHERE ts.waker_id IS NOT NULL AND ts.dur != -1;

-- Whether the trace is Fuchsia's (its runnable state is 'W').
CREATE PERFETTO TABLE _is_fuchsia AS
SELECT EXISTS (
  SELECT 1 FROM metadata AS m WHERE m.name = 'trace_type' AND m.str_value = 'fuchsia'
) AS is_fuchsia;

-- Whether $state is a runnable state.
CREATE PERFETTO MACRO _is_runnable_state(state Expr)
RETURNS Expr
AS $state = 'R' OR ($state = 'W' AND (SELECT f.is_fuchsia FROM _is_fuchsia AS f));

-- The first state of each thread, when it is a finished runnable one.
CREATE PERFETTO TABLE _first_runnable_state AS
SELECT
  ts.id, ts.ts, ts.dur, ts.state, ts.utid, ts.waker_id, ts.waker_utid,
  _tes_irq_flag!(ts.irq_context, ts.io_wait) AS is_irq
FROM thread_state AS ts
WHERE ts.id IN (SELECT min(x.id) FROM thread_state AS x GROUP BY x.utid)
  AND ts.dur != -1
  AND _is_runnable_state!(ts.state);

-- The finished sleeping states (S, D, I).
CREATE PERFETTO TABLE _sleep_state AS
SELECT ts.id, ts.ts, ts.dur, ts.state, ts.blocked_function, ts.utid
FROM thread_state AS ts
WHERE ts.dur != -1 AND ts.state IN ('S', 'D', 'I');

-- Where each thread's last finished state ends.
CREATE PERFETTO TABLE _thread_end_ts AS
SELECT max(ts.ts) + ts.dur AS end_ts, ts.utid
FROM thread_state AS ts
WHERE ts.dur != -1
GROUP BY ts.utid;

-- Each thread's first sleep that a wakeup ended.
CREATE PERFETTO TABLE _first_sleep_state AS
SELECT min(s.id) AS id, s.ts, s.dur, s.state, s.blocked_function, s.utid
FROM _sleep_state AS s
JOIN _runnable_state AS r ON r.utid = s.utid AND r.ts = s.ts + s.dur
GROUP BY s.utid;

-- Every wakeup: a runnable state with the sleep it ended, and each
-- thread's first runnable state (no sleep before it).
CREATE PERFETTO TABLE _wakeup AS
WITH
  w AS (
    SELECT
      s.state, s.blocked_function, r.id, r.ts, r.utid, r.waker_id, r.waker_utid,
      s.ts AS prev_end_ts, r.is_irq
    FROM _sleep_state AS s
    CROSS JOIN _runnable_state AS r ON r.utid = s.utid AND r.ts = s.ts + s.dur
    UNION ALL
    SELECT
      NULL, NULL, r.id, r.ts, r.utid, r.waker_id, r.waker_utid, NULL, r.is_irq
    FROM _first_runnable_state AS r
    LEFT JOIN _first_sleep_state AS s ON s.utid = r.utid
  )
SELECT w.*, e.end_ts AS thread_end_ts
FROM w
LEFT JOIN _thread_end_ts AS e USING (utid);

-- For each Running state (a waker's), the latest runnable state of the
-- same thread up to it: the wakeup whose run it is.
CREATE PERFETTO TABLE _wakeup_map AS
WITH
  states AS (
    SELECT ts.id, ts.waker_id, ts.utid, ts.state
    FROM thread_state AS ts
    WHERE ts.state = 'Running' AND ts.dur != -1
    UNION ALL
    SELECT f.id, f.waker_id, f.utid, f.state FROM _first_runnable_state AS f
    UNION ALL
    SELECT r.id, r.waker_id, r.utid, r.state FROM _runnable_state AS r
  ),
  latest AS (
    SELECT
      s.id AS waker_id,
      s.state,
      max(s.id) FILTER (WHERE _is_runnable_state!(s.state))
        OVER (PARTITION BY s.utid ORDER BY s.id) AS id
    FROM states AS s
  )
SELECT l.id, l.waker_id FROM latest AS l WHERE l.state = 'Running' ORDER BY l.waker_id;

-- The wakeup graph: a node per wakeup (id: the runnable thread state),
-- with its waker's node, the thread's previous node, the idle before it
-- and the time until the thread's next idle.
CREATE PERFETTO TABLE _wakeup_graph AS
WITH
  ev AS (
    SELECT
      w.utid,
      w.thread_end_ts,
      iif(w.is_irq, 'IRQ', w.state) AS idle_state,
      w.blocked_function AS idle_reason,
      w.id,
      iif(w.is_irq, NULL, m.id) AS waker_id,
      w.ts,
      w.prev_end_ts AS idle_ts
    FROM _wakeup AS w
    LEFT JOIN _wakeup_map AS m USING (waker_id)
  )
SELECT
  ev.utid,
  ev.id,
  ev.waker_id,
  ev.ts,
  ev.idle_state,
  ev.idle_reason,
  ev.ts - ev.idle_ts AS idle_dur,
  lag(ev.id) OVER (PARTITION BY ev.utid ORDER BY ev.ts) AS prev_id,
  coalesce(lead(ev.idle_ts) OVER (PARTITION BY ev.utid ORDER BY ev.ts), ev.thread_end_ts)
    - ev.ts AS dur
FROM ev
ORDER BY ev.id;

-- The nodes of $_node_table (id, utid, ts, prev_id) that cover the
-- intervals of $_source_table (utid, ts, dur) on their thread: the last
-- node starting at or before each interval's start up to the first
-- starting at or after its end (both clamped to the thread's nodes).
-- Columns: root_node_id, capacity.
CREATE PERFETTO MACRO _intervals_to_roots(
  _source_table TableOrSubQuery,
  _node_table TableOrSubQuery
)
RETURNS TableOrSubQuery
AS (
  WITH
    _itr_nodes AS (SELECT * FROM $_node_table),
    _itr_src AS (SELECT * FROM $_source_table),
    _itr_bounds AS (
      SELECT n.utid, min(n.ts) AS first_ts, max(n.ts) AS last_ts
      FROM _itr_nodes AS n
      GROUP BY n.utid
    ),
    _itr_first AS (
      SELECT n.utid, max(n.id) AS first_id, s.ts, s.dur
      FROM _itr_nodes AS n
      JOIN _itr_bounds AS b USING (utid)
      JOIN _itr_src AS s ON s.utid = n.utid AND n.ts <= max(s.ts, b.first_ts)
      GROUP BY s.ts, s.utid
    ),
    _itr_last AS (
      SELECT n.utid, min(n.id) AS last_id, s.ts, s.dur
      FROM _itr_nodes AS n
      JOIN _itr_bounds AS b USING (utid)
      JOIN _itr_src AS s ON s.utid = n.utid AND n.ts >= min(s.ts + s.dur, b.last_ts)
      GROUP BY s.ts, s.utid
    ),
    _itr_range AS (
      SELECT f.utid, f.first_id, l.last_id
      FROM _itr_first AS f
      JOIN _itr_last AS l ON l.utid = f.utid AND l.ts = f.ts AND l.dur = f.dur
    )
  SELECT DISTINCT
    n.id AS root_node_id,
    n.id - coalesce(n.prev_id, n.id) AS capacity
  FROM _itr_range AS r
  JOIN _itr_nodes AS n ON n.utid = r.utid AND n.id BETWEEN r.first_id AND r.last_id
);

-- The frames of the critical path of each root of $_roots_table
-- (root_node_id) in the graph $_node_table (as _wakeup_graph): root_id,
-- depth, ts, dur, id (the blocking node), parent_id.
CREATE PERFETTO MACRO _critical_path_with_depth_by_roots(
  _roots_table TableOrSubQuery,
  _node_table TableOrSubQuery
)
RETURNS TableOrSubQuery
AS (
  SELECT c0 AS root_id, c1 AS depth, c2 AS ts, c3 AS dur, c4 AS id, c6 AS parent_id
  FROM __intrinsic_table_ptr(
    __intrinsic_critical_path_walk(
      (
        SELECT __intrinsic_wakeup_graph_agg(n.id, n.utid, n.ts, n.dur, n.idle_dur, n.waker_id, n.prev_id)
        FROM $_node_table AS n
      ),
      (SELECT __intrinsic_array_agg(r.root_node_id) FROM $_roots_table AS r)
    )
  )
  WHERE __intrinsic_table_ptr_bind(c0, 'root_id')
    AND __intrinsic_table_ptr_bind(c1, 'depth')
    AND __intrinsic_table_ptr_bind(c2, 'ts')
    AND __intrinsic_table_ptr_bind(c3, 'dur')
    AND __intrinsic_table_ptr_bind(c4, 'blocker_id')
    AND __intrinsic_table_ptr_bind(c5, 'blocker_utid')
    AND __intrinsic_table_ptr_bind(c6, 'parent_id')
);

-- The critical path of each root, flattened so that each instant has the
-- deepest blocker: root_id, id (the blocking node), ts, dur.
CREATE PERFETTO MACRO _critical_path_by_roots(
  _roots_table TableOrSubQuery,
  _node_table TableOrSubQuery
)
RETURNS TableOrSubQuery
AS (
  WITH
    _cpr_frames AS (
      SELECT * FROM _critical_path_with_depth_by_roots!($_roots_table, $_node_table)
    ),
    _cpr_span AS (
      SELECT f.root_id, min(f.ts) AS root_ts, max(f.ts + f.dur) - min(f.ts) AS root_dur
      FROM _cpr_frames AS f
      GROUP BY f.root_id
    ),
    _cpr_input AS (
      SELECT f.root_id, s.root_ts, s.root_dur, f.parent_id, f.id, f.ts, f.dur
      FROM _cpr_frames AS f
      JOIN _cpr_span AS s USING (root_id)
    )
  SELECT flat.root_id, flat.id, flat.ts, flat.dur
  FROM _intervals_flatten!(_cpr_input) AS flat
  WHERE flat.dur > 0
  GROUP BY flat.root_id, flat.ts
);

-- The critical path of the intervals of $_intervals_table (utid, ts, dur)
-- in the graph $_node_table, cut to each interval: root_utid, utid,
-- root_id, id, ts, dur, interval_ts, interval_dur.
CREATE PERFETTO MACRO _critical_path_by_intervals(
  _intervals_table TableOrSubQuery,
  _node_table TableOrSubQuery
)
RETURNS TableOrSubQuery
AS (
  -- Nodes are looked up in $_node_table itself (by its id) and the
  -- intersection is materialized before it is joined back to the path:
  -- SQLite would otherwise rescan a copy of either once per row (seconds
  -- to minutes on a busy thread's path).
  WITH
    _cpi_intervals AS (
      SELECT row_number() OVER (ORDER BY i.ts) AS id, i.ts, i.dur, i.utid AS root_utid
      FROM $_intervals_table AS i
    ),
    _cpi_path AS (
      SELECT row_number() OVER (ORDER BY p.ts) AS id, p.root_id, p.id AS cr_id, p.ts, p.dur
      FROM _critical_path_by_roots!(
        _intervals_to_roots!($_intervals_table, $_node_table),
        $_node_table
      ) AS p
    ),
    _cpi_span AS (
      SELECT rn.utid AS root_utid, bn.utid, p.root_id, p.cr_id, p.id, p.ts, p.dur
      FROM _cpi_path AS p
      JOIN $_node_table AS rn ON rn.id = p.root_id
      JOIN $_node_table AS bn ON bn.id = p.cr_id
    ),
    _cpi_ii AS MATERIALIZED (
      SELECT * FROM _interval_intersect!((_cpi_span, _cpi_intervals), (root_utid))
    )
  SELECT DISTINCT
    sp.root_utid,
    sp.utid,
    sp.root_id,
    sp.cr_id AS id,
    ii.ts,
    ii.dur,
    iv.ts AS interval_ts,
    iv.dur AS interval_dur
  FROM _cpi_ii AS ii
  JOIN _cpi_span AS sp ON sp.id = ii.id_0
  JOIN _cpi_intervals AS iv ON iv.id = ii.id_1
);

-- The critical path of thread $root_utid over [$ts, $ts + $dur).
CREATE PERFETTO FUNCTION _thread_executing_span_critical_path(
  -- The thread.
  root_utid JOINID(thread.id),
  -- The window's start.
  ts TIMESTAMP,
  -- The window's length.
  dur DURATION
)
RETURNS TABLE(
  -- The thread.
  root_utid JOINID(thread.id),
  -- The root node the part belongs to.
  root_id LONG,
  -- The blocking node.
  id LONG,
  -- The part's start.
  ts TIMESTAMP,
  -- The part's length.
  dur DURATION,
  -- The blocking thread.
  utid JOINID(thread.id)
)
AS
SELECT p.root_utid, p.root_id, p.id, p.ts, p.dur, p.utid
FROM _critical_path_by_intervals!(
  (SELECT $root_utid AS utid, $ts AS ts, $dur AS dur),
  _wakeup_graph
) AS p;

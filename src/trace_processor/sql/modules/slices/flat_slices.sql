-- SPDX-License-Identifier: Apache-2.0
-- slices.flat_slices: the thread slices of the trace flattened per
-- hierarchy, so that at each time one slice of a stack is shown: the
-- innermost one open then. Built on intervals.overlap's merge and flatten.

INCLUDE PERFETTO MODULE slices.with_context;

INCLUDE PERFETTO MODULE intervals.overlap;

-- The pieces of each thread slice hierarchy (one root and what it holds)
-- during which the slice is the innermost open one, with the slice's
-- thread and process.
CREATE PERFETTO TABLE _slice_flattened(
  -- The slice innermost during the piece.
  slice_id JOINID(slice.id),
  -- Start of the piece.
  ts TIMESTAMP,
  -- Duration of the piece.
  dur DURATION,
  -- The slice's depth.
  depth LONG,
  -- The slice's name.
  name STRING,
  -- The root slice of its hierarchy.
  root_id LONG,
  -- The slice's track.
  track_id JOINID(track.id),
  -- Its thread.
  utid JOINID(thread.id),
  -- The thread's tid.
  tid LONG,
  -- The thread's name.
  thread_name STRING,
  -- Its process.
  upid JOINID(process.id),
  -- The process's pid.
  pid LONG,
  -- The process's name.
  process_name STRING
)
AS
WITH
  _fs_roots AS (
    SELECT id, ts, dur FROM slice WHERE parent_id IS NULL
  ),
  _fs_children AS (
    SELECT anc.id AS root_id, s.id, s.parent_id, s.ts, s.dur
    FROM slice AS s, ancestor_slice(s.id) AS anc
    WHERE s.parent_id IS NOT NULL AND anc.depth = 0
  ),
  _fs_pieces AS (
    SELECT root_id, id, ts, dur
    FROM _intervals_flatten!(_intervals_merge_root_and_children!(_fs_roots, _fs_children))
  )
SELECT
  p.id AS slice_id,
  p.ts,
  p.dur,
  t.depth,
  t.name,
  p.root_id,
  t.track_id,
  t.utid,
  t.tid,
  t.thread_name,
  t.upid,
  t.pid,
  t.process_name
FROM _fs_pieces AS p
JOIN thread_slice AS t USING (id);

CREATE PERFETTO INDEX _slice_flattened_id_idx ON _slice_flattened(slice_id);

CREATE PERFETTO INDEX _slice_flattened_ts_idx ON _slice_flattened(ts);

-- SPDX-License-Identifier: Apache-2.0
-- slices.flat_slices: each thread's slice stacks flattened to one level:
-- at every instant the deepest slice open on the thread, as a set of
-- non-overlapping intervals.

INCLUDE PERFETTO MODULE slices.with_context;
INCLUDE PERFETTO MODULE intervals.overlap;

-- The flattened intervals: the deepest slice (slice_id, with its depth,
-- name, root slice, track, thread and process) over [ts, ts + dur).
CREATE PERFETTO TABLE _slice_flattened AS
WITH
  roots AS (SELECT * FROM slice AS s WHERE s.parent_id IS NULL),
  children AS (
    SELECT a.id AS root_id, s.*
    FROM slice AS s, ancestor_slice(s.id) AS a
    WHERE s.parent_id IS NOT NULL
  ),
  flat AS (
    SELECT f.root_id, f.id, f.ts, f.dur
    FROM _intervals_flatten!(_intervals_merge_root_and_children!(roots, children)) AS f
  )
SELECT
  flat.id AS slice_id,
  flat.ts,
  flat.dur,
  t.depth,
  t.name,
  flat.root_id,
  t.track_id,
  t.utid,
  t.tid,
  t.thread_name,
  t.upid,
  t.pid,
  t.process_name
FROM flat
JOIN thread_slice AS t USING (id);

CREATE PERFETTO INDEX _slice_flattened_id_idx ON _slice_flattened(slice_id);

CREATE PERFETTO INDEX _slice_flattened_ts_idx ON _slice_flattened(ts);

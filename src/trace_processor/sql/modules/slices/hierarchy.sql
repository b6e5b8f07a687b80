-- SPDX-License-Identifier: Apache-2.0
-- slices.hierarchy: a slice together with its ancestors or descendants,
-- and a subset of slices re-parented onto the nearest ancestor kept.

-- The slice $slice_id itself, then its ancestors (as ancestor_slice()
-- gives them).
CREATE PERFETTO FUNCTION _slice_ancestor_and_self(
  -- The slice.
  slice_id JOINID(slice.id)
)
RETURNS TABLE(
  -- The slice or one of its ancestors.
  id JOINID(slice.id),
  -- Its start.
  ts TIMESTAMP,
  -- Its duration.
  dur DURATION,
  -- Its track.
  track_id JOINID(track.id),
  -- Its category.
  category STRING,
  -- Its name.
  name STRING,
  -- Its depth on the track.
  depth LONG,
  -- Its parent.
  parent_id JOINID(slice.id),
  -- Its arguments.
  arg_set_id ARGSETID,
  -- Its start in thread time.
  thread_ts TIMESTAMP,
  -- Its duration in thread time.
  thread_dur LONG
)
AS
SELECT s.id, s.ts, s.dur, s.track_id, s.category, s.name, s.depth, s.parent_id,
  s.arg_set_id, s.thread_ts, s.thread_dur
FROM slice AS s
WHERE s.id = $slice_id
UNION ALL
SELECT a.id, a.ts, a.dur, a.track_id, a.category, a.name, a.depth, a.parent_id,
  a.arg_set_id, a.thread_ts, a.thread_dur
FROM ancestor_slice($slice_id) AS a;

-- The slice $slice_id itself, then its descendants (as descendant_slice()
-- gives them).
CREATE PERFETTO FUNCTION _slice_descendant_and_self(
  -- The slice.
  slice_id JOINID(slice.id)
)
RETURNS TABLE(
  -- The slice or one of its descendants.
  id JOINID(slice.id),
  -- Its start.
  ts TIMESTAMP,
  -- Its duration.
  dur DURATION,
  -- Its track.
  track_id JOINID(track.id),
  -- Its category.
  category STRING,
  -- Its name.
  name STRING,
  -- Its depth on the track.
  depth LONG,
  -- Its parent.
  parent_id JOINID(slice.id),
  -- Its arguments.
  arg_set_id ARGSETID,
  -- Its start in thread time.
  thread_ts TIMESTAMP,
  -- Its duration in thread time.
  thread_dur LONG
)
AS
SELECT s.id, s.ts, s.dur, s.track_id, s.category, s.name, s.depth, s.parent_id,
  s.arg_set_id, s.thread_ts, s.thread_dur
FROM slice AS s
WHERE s.id = $slice_id
UNION ALL
SELECT d.id, d.ts, d.dur, d.track_id, d.category, d.name, d.depth, d.parent_id,
  d.arg_set_id, d.thread_ts, d.thread_dur
FROM descendant_slice($slice_id) AS d;

-- The rows of $slice_table whose $column_name is not NULL, each
-- re-parented onto its deepest ancestor that is kept: columns (id,
-- parent_id, depth, $column_name). Roots (depth 0) keep their row; a
-- slice below them gets as depth that ancestor's depth (0 if none of its
-- ancestors is kept).
CREATE PERFETTO MACRO _slice_remove_nulls_and_reparent(
  -- A subset of the slice table with columns id, parent_id, depth and
  -- $column_name.
  slice_table TableOrSubQuery,
  -- The column whose NULL drops a row.
  column_name ColumnName
)
RETURNS TableOrSubQuery
AS (
  WITH
    kept AS (
      SELECT * FROM $slice_table WHERE $column_name IS NOT NULL
    )
  SELECT k.id, k.parent_id, k.depth, k.$column_name
  FROM kept AS k
  WHERE k.depth = 0
  UNION ALL
  SELECT
    k.id,
    -- The ancestor where the max below is reached (SQLite's bare column).
    a.id AS parent_id,
    max(iif(p.$column_name IS NULL, 0, a.depth)) AS depth,
    k.$column_name
  FROM kept AS k, ancestor_slice(k.id) AS a
  LEFT JOIN kept AS p ON p.id = a.id
  GROUP BY k.id
);

-- SPDX-License-Identifier: Apache-2.0
-- slices.stack: an id for each slice's stack (the categories and names of
-- the slice and all its ancestors), and the slices of a given stack with
-- their ancestors or descendants.

INCLUDE PERFETTO MODULE slices.hierarchy;

-- Each slice's stack hash: the hash of the '|'-joined hashes of
-- "category|name" of the slice and its ancestors (the slice first); 0
-- when there is nothing to hash.
CREATE PERFETTO VIEW _slice_stack_hash AS
SELECT
  s.id,
  coalesce(
    (
      SELECT hash(group_concat(hash(coalesce(x.category, '') || '|' || x.name), '|'))
      FROM _slice_ancestor_and_self(s.id) AS x
    ),
    0
  ) AS stack_hash
FROM slice AS s;

-- Every slice with the id of its stack and of its parent's stack.
CREATE PERFETTO VIEW slice_with_stack_id(
  -- The slice.
  id ID(slice.id),
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
  thread_dur LONG,
  -- Instructions its thread had run when it started.
  thread_instruction_count LONG,
  -- Instructions its thread ran during it.
  thread_instruction_delta LONG,
  -- The id of its stack: the same for every slice whose own and
  -- ancestors' categories and names are the same.
  stack_id LONG,
  -- The stack id of its parent, 0 for a root.
  parent_stack_id LONG
)
AS
SELECT
  s.id,
  s.ts,
  s.dur,
  s.track_id,
  s.category,
  s.name,
  s.depth,
  s.parent_id,
  s.arg_set_id,
  s.thread_ts,
  s.thread_dur,
  s.thread_instruction_count,
  s.thread_instruction_delta,
  h.stack_hash AS stack_id,
  coalesce(ph.stack_hash, 0) AS parent_stack_id
FROM slice AS s
JOIN _slice_stack_hash AS h ON h.id = s.id
LEFT JOIN _slice_stack_hash AS ph ON ph.id = s.parent_id;

-- The slices whose stack is $stack_hash and all their ancestors, once
-- each, by start.
CREATE PERFETTO FUNCTION ancestor_slice_by_stack(
  -- A stack id (slice_with_stack_id.stack_id).
  stack_hash LONG
)
RETURNS TABLE(
  -- The slice.
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
SELECT DISTINCT x.id, x.ts, x.dur, x.track_id, x.category, x.name, x.depth, x.parent_id,
  x.arg_set_id, x.thread_ts, x.thread_dur
FROM (SELECT w.id FROM slice_with_stack_id AS w WHERE w.stack_id = $stack_hash) AS m
JOIN _slice_ancestor_and_self(m.id) AS x
ORDER BY x.ts;

-- The slices whose stack is $stack_hash and all their descendants, once
-- each, by start.
CREATE PERFETTO FUNCTION descendant_slice_by_stack(
  -- A stack id (slice_with_stack_id.stack_id).
  stack_hash LONG
)
RETURNS TABLE(
  -- The slice.
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
SELECT DISTINCT x.id, x.ts, x.dur, x.track_id, x.category, x.name, x.depth, x.parent_id,
  x.arg_set_id, x.thread_ts, x.thread_dur
FROM (SELECT w.id FROM slice_with_stack_id AS w WHERE w.stack_id = $stack_hash) AS m
JOIN _slice_descendant_and_self(m.id) AS x
ORDER BY x.ts;

-- SPDX-License-Identifier: Apache-2.0
-- viz.slices: the slices as Perfetto's UI lists them, and the aggregate
-- of a set of slices over their ancestors.

INCLUDE PERFETTO MODULE graphs.scan;
INCLUDE PERFETTO MODULE slices.with_context;

-- For the slices $inits (id, dur) and their ancestors in $nodes (id,
-- parent_id, name, dur): each node with its name, its total duration over
-- the slices under it (dur), its self time (self_dur: its duration less its
-- children's) and whether it is one of $inits (self_count). Columns: id,
-- parentId, name, self_dur, self_count, simple_count.
CREATE PERFETTO MACRO _viz_slice_ancestor_agg(
  -- The starting slices: columns id and dur.
  inits TableOrSubquery,
  -- The slices: columns id, parent_id, name and dur.
  nodes TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  SELECT
    g.id,
    s.parent_id AS parentId,
    s.name,
    g.self_dur,
    g.self_count,
    1 AS simple_count
  FROM _graph_aggregating_scan!(
    (SELECT n.id AS source_node_id, n.parent_id AS dest_node_id FROM $nodes AS n WHERE n.parent_id IS NOT NULL),
    (SELECT i.id, i.dur, i.dur AS self_dur, 1 AS self_count FROM $inits AS i),
    (dur, self_dur, self_count),
    (
      WITH below AS (
        SELECT t.id, sum(t.dur) AS child_dur
        FROM $table t
        GROUP BY id
      )
      SELECT b.id, s.dur, s.dur - b.child_dur AS self_dur, 0 AS self_count
      FROM below b
      JOIN $nodes s USING (id)
    )
  ) AS g
  JOIN $nodes AS s USING (id)
);

-- Every slice with its track, thread and process: those of thread and
-- process tracks as thread_or_process_slice gives them, the others with
-- only their track.
CREATE PERFETTO VIEW _viz_slices_for_ui_table AS
SELECT * FROM thread_or_process_slice
UNION ALL
SELECT
  s.id,
  s.ts,
  s.dur,
  s.category,
  s.name,
  s.track_id,
  t.name AS track_name,
  NULL AS thread_name,
  NULL AS utid,
  NULL AS tid,
  NULL AS process_name,
  NULL AS upid,
  NULL AS pid,
  s.depth,
  s.parent_id,
  s.arg_set_id
FROM slice AS s
JOIN track AS t ON s.track_id = t.id
WHERE s.track_id NOT IN (SELECT pt.id FROM process_track AS pt)
  AND s.track_id NOT IN (SELECT tt.id FROM thread_track AS tt);

-- SPDX-License-Identifier: Apache-2.0
-- slices.flow: flows followed across slices. Perfetto's UI includes this
-- module before it asks for a selected slice's flows (the table functions
-- directly_connected_flow, preceding_flow and following_flow are built in:
-- ops/slice_fns.c; the flow table's slice_out/slice_in lookups need no
-- index of ours).

-- Every slice reachable by flows from the slices of `source_table` (a
-- table with an id column) that have a flow out: one row per reached
-- slice and starting slice, with the slice it was first reached from
-- (NULL for the starting slice). Columns: root_node_id, node_id,
-- parent_node_id.
CREATE PERFETTO MACRO _slice_following_flow(source_table TableOrSubquery)
RETURNS TableOrSubquery AS
(
  WITH RECURSIVE
    _starts AS (
      SELECT DISTINCT f.slice_out AS id
      FROM flow AS f
      JOIN (SELECT id FROM $source_table) AS src ON src.id = f.slice_out
    ),
    _reached(root_node_id, node_id, parent_node_id) AS (
      SELECT id, id, NULL FROM _starts
      UNION
      SELECT r.root_node_id, f.slice_in, f.slice_out
      FROM _reached AS r
      JOIN flow AS f ON f.slice_out = r.node_id
    )
  SELECT root_node_id, node_id, min(parent_node_id) AS parent_node_id
  FROM _reached
  GROUP BY root_node_id, node_id
);

-- SPDX-License-Identifier: Apache-2.0
-- slices.flow: the slices reached by following flow events out of a set of
-- slices.

INCLUDE PERFETTO MODULE graphs.search;

-- For each slice of $source_table (a column id) that has an outgoing flow,
-- every slice reached by following flows from it (each flow weighs 0, so
-- the bound of 1 is never passed), in DFS order: root_node_id, node_id,
-- parent_node_id.
CREATE PERFETTO MACRO _slice_following_flow(
  -- The slices to start from: a column id.
  source_table TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  SELECT *
  FROM graph_reachable_weight_bounded_dfs!(
    (SELECT f.slice_out AS source_node_id, f.slice_in AS dest_node_id, 0 AS edge_weight FROM flow AS f),
    (
      SELECT f.slice_out AS root_node_id, 1 AS root_target_weight
      FROM flow AS f
      JOIN (SELECT id FROM $source_table) AS src ON f.slice_out = src.id
    ),
    1
  )
);

-- SPDX-License-Identifier: Apache-2.0
-- graphs.dominator_tree: the dominator tree of a directed graph.

-- The dominator tree of the graph $graph_table (source_node_id,
-- dest_node_id) from $root_node_id: each node reachable from the root with
-- its immediate dominator (the last node every path from the root to it
-- passes; NULL for the root). Columns: node_id, dominator_node_id.
CREATE PERFETTO MACRO graph_dominator_tree(
  -- The edges: columns source_node_id and dest_node_id.
  graph_table TableOrSubquery,
  -- The root node.
  root_node_id Expr
)
RETURNS TableOrSubquery
AS (
  SELECT c0 AS node_id, c1 AS dominator_node_id
  FROM __intrinsic_table_ptr(
    (
      SELECT __intrinsic_dominator_tree(e.source_node_id, e.dest_node_id, $root_node_id)
      FROM $graph_table AS e
    )
  )
  WHERE __intrinsic_table_ptr_bind(c0, 'node_id')
    AND __intrinsic_table_ptr_bind(c1, 'dominator_node_id')
);

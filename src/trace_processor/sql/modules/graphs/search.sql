-- SPDX-License-Identifier: Apache-2.0
-- graphs.search: reachability in a directed graph given as an edge table
-- (source_node_id, dest_node_id; small dense uint32 ids): the DFS and BFS
-- trees from a set of start nodes, a DFS per root bounded by the sum of the
-- edge weights taken, and each node's next sibling under its parent.

-- The nodes reachable from the start nodes ($start_nodes: a column node_id)
-- in the order a depth-first search meets them, each with the node it was
-- first reached from (NULL for a start node). Columns: node_id,
-- parent_node_id.
CREATE PERFETTO MACRO graph_reachable_dfs(
  -- The edges: columns source_node_id and dest_node_id.
  graph_table TableOrSubquery,
  -- The start nodes: a column node_id.
  start_nodes TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  SELECT c0 AS node_id, c1 AS parent_node_id
  FROM __intrinsic_table_ptr(
    __intrinsic_dfs(
      (SELECT __intrinsic_graph_agg(e.source_node_id, e.dest_node_id) FROM $graph_table AS e),
      (SELECT __intrinsic_array_agg(s.node_id) FROM $start_nodes AS s)
    )
  )
  WHERE __intrinsic_table_ptr_bind(c0, 'node_id')
    AND __intrinsic_table_ptr_bind(c1, 'parent_node_id')
);

-- The same as graph_reachable_dfs, in the order of a breadth-first search.
CREATE PERFETTO MACRO graph_reachable_bfs(
  -- The edges: columns source_node_id and dest_node_id.
  graph_table TableOrSubquery,
  -- The start nodes: a column node_id.
  start_nodes TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  SELECT c0 AS node_id, c1 AS parent_node_id
  FROM __intrinsic_table_ptr(
    __intrinsic_bfs(
      (SELECT __intrinsic_graph_agg(e.source_node_id, e.dest_node_id) FROM $graph_table AS e),
      (SELECT __intrinsic_array_agg(s.node_id) FROM $start_nodes AS s)
    )
  )
  WHERE __intrinsic_table_ptr_bind(c0, 'node_id')
    AND __intrinsic_table_ptr_bind(c1, 'parent_node_id')
);

-- Each node (node_id) with the next node (next_node_id) under the same
-- parent (node_parent_id) by sort_key; NULL for the last one.
CREATE PERFETTO MACRO graph_next_sibling(
  -- The nodes: columns node_id, node_parent_id and sort_key.
  graph_table TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  SELECT
    node_id,
    lead(node_id) OVER (PARTITION BY node_parent_id ORDER BY sort_key) AS next_node_id
  FROM $graph_table
);

-- For each root of $root_table (root_node_id, root_target_weight), the
-- nodes a depth-first search from it reaches before the sum of the weights
-- of the edges it took passes root_target_weight; with a true
-- $is_target_weight_floor the node that passes it is kept, else not.
-- Columns: root_node_id, node_id, parent_node_id.
CREATE PERFETTO MACRO graph_reachable_weight_bounded_dfs(
  -- The edges: columns source_node_id, dest_node_id and edge_weight.
  graph_table TableOrSubquery,
  -- The roots: columns root_node_id and root_target_weight.
  root_table TableOrSubquery,
  -- Whether the bound is a floor (keep the node passing it) or a ceiling.
  is_target_weight_floor Expr
)
RETURNS TableOrSubquery
AS (
  WITH
    _wb_edges AS (SELECT * FROM $graph_table),
    _wb_roots AS (SELECT * FROM $root_table)
  SELECT r.root_node_id, r.node_id, r.parent_node_id
  FROM __intrinsic_dfs_weight_bounded(
    (SELECT __intrinsic_array_agg(source_node_id) FROM _wb_edges),
    (SELECT __intrinsic_array_agg(dest_node_id) FROM _wb_edges),
    (SELECT __intrinsic_array_agg(edge_weight) FROM _wb_edges),
    (SELECT __intrinsic_array_agg(root_node_id) FROM _wb_roots),
    (SELECT __intrinsic_array_agg(root_target_weight) FROM _wb_roots),
    $is_target_weight_floor
  ) AS r
);

-- SPDX-License-Identifier: Apache-2.0
-- graphs.hierarchy: walks of trees given as (id, parent_id) tables.

INCLUDE PERFETTO MODULE graphs.search;

-- The start nodes ($start_nodes: a column id) and all their ancestors in
-- $tree (id, parent_id), once each: a column id.
CREATE PERFETTO MACRO _tree_reachable_ancestors_or_self(
  -- The tree: columns id and parent_id.
  tree TableOrSubquery,
  -- The start nodes: a column id.
  start_nodes TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  SELECT r.node_id AS id
  FROM graph_reachable_dfs!(
    (SELECT t.id AS source_node_id, t.parent_id AS dest_node_id FROM $tree AS t),
    (SELECT s.id AS node_id FROM $start_nodes AS s)
  ) AS r
);

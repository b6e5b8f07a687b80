-- SPDX-License-Identifier: Apache-2.0
-- graphs.partition: splitting a tree into one tree per group.

-- The tree $tree_table (id, parent_id, group_key; exactly one row with a
-- NULL parent_id, the root) split by group: each node with, as its parent,
-- its nearest ancestor of the same group_key (NULL if none). Columns: id,
-- parent_id, group_key.
CREATE PERFETTO MACRO tree_structural_partition_by_group(
  -- The tree: columns id, parent_id and group_key.
  tree_table TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  SELECT c0 AS id, c1 AS parent_id, c2 AS group_key
  FROM __intrinsic_table_ptr(
    (
      SELECT __intrinsic_structural_tree_partition(t.id, t.parent_id, t.group_key)
      FROM $tree_table AS t
    )
  )
  WHERE __intrinsic_table_ptr_bind(c0, 'node_id')
    AND __intrinsic_table_ptr_bind(c1, 'parent_node_id')
    AND __intrinsic_table_ptr_bind(c2, 'group_key')
);

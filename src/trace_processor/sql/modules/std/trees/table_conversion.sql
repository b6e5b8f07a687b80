-- SPDX-License-Identifier: Apache-2.0
-- std.trees.table_conversion: turning an (id, parent_id, ...) table into a TREE value and a TREE value back into a table.

-- One "'name', t.name" argument pair of __intrinsic_tree_from_table, for a column of the source.
CREATE PERFETTO MACRO _tree_from_table_col(col ColumnName)
RETURNS _ProjectionFragment
AS __intrinsic_stringify!($col), t.$col;

-- A TREE value (for _tree_to_table! and the other tree built-ins) made of the rows of $source_table, which needs an `id` and a `parent_id` column (NULL for a root); the columns of $columns ride along with each node. The nodes get places from 0 so that a parent comes before its children.
CREATE PERFETTO MACRO _tree_from_table(
  -- The rows of the tree: a table, view or subquery with `id`, `parent_id` and the columns below.
  source_table TableOrSubquery,
  -- The other columns each node keeps, in parentheses: (a, b, ...).
  columns ColumnNameList
)
-- The TREE value (NULL if $source_table has no rows).
RETURNS Expr
AS (
  SELECT __intrinsic_tree_from_table(
    'id', t.id,
    'parent_id', t.parent_id,
    __intrinsic_token_apply!(_tree_from_table_col, $columns)
  )
  FROM $source_table AS t
);

-- "cN AS name": the output column of _tree_to_table! for the Nth extra column.
CREATE PERFETTO MACRO _tree_to_table_col_select(idx ColumnName, col ColumnName)
RETURNS _ProjectionFragment
AS $idx AS $col;

-- Binds column cN of the tree's table to the column named `col`.
CREATE PERFETTO MACRO _tree_to_table_col_bind(idx ColumnName, col ColumnName)
RETURNS Expr
AS __intrinsic_table_ptr_bind($idx, __intrinsic_stringify!($col));

-- The table of a TREE value: `_tree_id` (the node's place, from 0), `_tree_parent_id` (its parent's place; NULL for a root), `id`, `parent_id` and the columns of $columns (at most six; the names given to _tree_from_table!, in any order or a subset).
CREATE PERFETTO MACRO _tree_to_table(
  -- The TREE value, from _tree_from_table!.
  tree_ptr Expr,
  -- The extra columns wanted, in parentheses: (a, b, ...).
  columns ColumnNameList
)
RETURNS TableOrSubquery
AS (
  SELECT
    c0 AS _tree_id,
    c1 AS _tree_parent_id,
    c2 AS id,
    c3 AS parent_id,
    __intrinsic_token_apply!(_tree_to_table_col_select, (c4, c5, c6, c7, c8, c9), $columns)
  FROM __intrinsic_table_ptr(__intrinsic_tree_to_table($tree_ptr))
  WHERE __intrinsic_table_ptr_bind(c0, '_tree_id')
    AND __intrinsic_table_ptr_bind(c1, '_tree_parent_id')
    AND __intrinsic_table_ptr_bind(c2, 'id')
    AND __intrinsic_table_ptr_bind(c3, 'parent_id')
    AND __intrinsic_token_apply_and!(_tree_to_table_col_bind, (c4, c5, c6, c7, c8, c9), $columns)
);

-- SPDX-License-Identifier: Apache-2.0
-- graphs.scan: a scan (a prefix sum) over a directed graph, from a set of
-- starting nodes along the edges, each step computing the values of the
-- nodes it reaches from those of the nodes they were reached from
-- (__intrinsic_graph_scan, ops/graph_scan.c).

-- One scan column of the starting rows: its name, then its value.
CREATE PERFETTO MACRO _graph_scan_init_col(name ColumnName, col ColumnName)
RETURNS _ProjectionFragment AS __intrinsic_stringify!($name), init.$col;

-- Binds column $slot of the scan's result to the scan column $col.
CREATE PERFETTO MACRO _graph_scan_bind_col(slot ColumnName, col ColumnName)
RETURNS Expr AS __intrinsic_table_ptr_bind(res.$slot, __intrinsic_stringify!($col));

-- Reads column $slot of the scan's result as $col.
CREATE PERFETTO MACRO _graph_scan_out_col(slot ColumnName, col ColumnName)
RETURNS _ProjectionFragment AS res.$slot AS $col;

-- The rows a scan over `graph_table` (columns source_node_id and
-- dest_node_id) reaches from the rows of `init_table` (id and the
-- `scan_columns`): every row of `init_table`, then, step after step, what
-- `step_query` gives for the rows handed on along the edges (it reads
-- them from `$table`: the id of the node reached and the scan columns of
-- the node it was reached from). Columns: id and the `scan_columns` (at
-- most 8).
CREATE PERFETTO MACRO _graph_scan(
  -- The edges: source_node_id, dest_node_id, not NULL.
  graph_table TableOrSubquery,
  -- The starting rows: id and the scan columns.
  init_table TableOrSubquery,
  -- The scan columns, parenthesised: (a, b).
  scan_columns ColumnNameList,
  -- One step: reads `$table`, gives id and the scan columns.
  step_query TableOrSubquery
)
RETURNS TableOrSubquery AS
(
  SELECT
    res.c0 AS id,
    __intrinsic_token_apply!(_graph_scan_out_col, (c1, c2, c3, c4, c5, c6, c7, c8), $scan_columns)
  FROM __intrinsic_table_ptr(__intrinsic_graph_scan(
    (SELECT __intrinsic_graph_agg(g.source_node_id, g.dest_node_id) FROM $graph_table AS g),
    (
      SELECT __intrinsic_row_dataframe_agg(
        'id', init.id,
        __intrinsic_token_apply!(_graph_scan_init_col, $scan_columns, $scan_columns))
      FROM $init_table AS init
    ),
    __intrinsic_stringify_ignore_table!($step_query),
    __intrinsic_stringify!($scan_columns)
  )) AS res
  WHERE __intrinsic_table_ptr_bind(res.c0, 'id')
    AND __intrinsic_token_apply_and!(_graph_scan_bind_col, (c1, c2, c3, c4, c5, c6, c7, c8), $scan_columns)
);

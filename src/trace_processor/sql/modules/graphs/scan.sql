-- SPDX-License-Identifier: Apache-2.0
-- graphs.scan: running a query over a graph along its edges, starting from
-- a row per start node: each node's row goes to the nodes its edges reach,
-- which compute theirs from what they received.

-- 'col', init_table.col: a name and its value for the row dataframe.
CREATE PERFETTO MACRO _graph_scan_df_agg(x ColumnName, y ColumnName)
RETURNS _ProjectionFragment
AS __intrinsic_stringify!($x), init_table.$y;

-- Binds the pointer column $x to the column named $y.
CREATE PERFETTO MACRO _graph_scan_bind(x ColumnName, y ColumnName)
RETURNS Expr
AS __intrinsic_table_ptr_bind(result.$x, __intrinsic_stringify!($y));

-- Selects the pointer column $x as $y.
CREATE PERFETTO MACRO _graph_scan_select(x ColumnName, y ColumnName)
RETURNS _ProjectionFragment
AS result.$x AS $y;

-- Scans $graph_table (source_node_id, dest_node_id) from the rows of
-- $init_table (id and $scan_columns): each round hands every new row to
-- the nodes its node's edges reach, and $step_query (reading the handed
-- rows as $table: id and $scan_columns) gives those nodes' rows; until no
-- row is handed on. Columns: id and $scan_columns, every row produced.
CREATE PERFETTO MACRO _graph_scan(
  -- The edges: columns source_node_id and dest_node_id.
  graph_table TableOrSubquery,
  -- The start rows: id and the scan columns.
  init_table TableOrSubquery,
  -- The scanned columns (at most 7).
  scan_columns ColumnNameList,
  -- The step query over $table.
  step_query TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  SELECT
    c0 AS id,
    __intrinsic_token_apply!(_graph_scan_select, (c1, c2, c3, c4, c5, c6, c7), $scan_columns)
  FROM __intrinsic_table_ptr(__intrinsic_graph_scan(
    (SELECT __intrinsic_graph_agg(g.source_node_id, g.dest_node_id) FROM $graph_table AS g),
    (
      SELECT __intrinsic_row_dataframe_agg(
        'id', init_table.id,
        __intrinsic_token_apply!(_graph_scan_df_agg, $scan_columns, $scan_columns)
      )
      FROM $init_table AS init_table
    ),
    __intrinsic_stringify_ignore_table!($step_query),
    __intrinsic_stringify!($scan_columns)
  )) AS result
  WHERE __intrinsic_table_ptr_bind(result.c0, 'id')
    AND __intrinsic_token_apply_and!(_graph_scan_bind, (c1, c2, c3, c4, c5, c6, c7), $scan_columns)
);

-- Like _graph_scan, but a node's row is computed once, from all the rows
-- handed to it: $agg_query runs once per depth (the longest path from a
-- node to a sink), deepest first, over the rows handed to that depth's
-- nodes ($table), and its columns must be id and $agg_columns.
CREATE PERFETTO MACRO _graph_aggregating_scan(
  -- The edges: columns source_node_id and dest_node_id.
  graph_table TableOrSubquery,
  -- The start rows: id and the aggregated columns.
  init_table TableOrSubquery,
  -- The aggregated columns (at most 7).
  agg_columns ColumnNameList,
  -- The aggregating query over $table.
  agg_query TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  SELECT
    c0 AS id,
    __intrinsic_token_apply!(_graph_scan_select, (c1, c2, c3, c4, c5, c6, c7), $agg_columns)
  FROM __intrinsic_table_ptr(__intrinsic_graph_aggregating_scan(
    (SELECT __intrinsic_graph_agg(g.source_node_id, g.dest_node_id) FROM $graph_table AS g),
    (
      SELECT __intrinsic_row_dataframe_agg(
        'id', init_table.id,
        __intrinsic_token_apply!(_graph_scan_df_agg, $agg_columns, $agg_columns)
      )
      FROM $init_table AS init_table
    ),
    __intrinsic_stringify_ignore_table!($agg_query),
    __intrinsic_stringify!($agg_columns)
  )) AS result
  WHERE __intrinsic_table_ptr_bind(result.c0, 'id')
    AND __intrinsic_token_apply_and!(_graph_scan_bind, (c1, c2, c3, c4, c5, c6, c7), $agg_columns)
);

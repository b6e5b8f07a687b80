-- SPDX-License-Identifier: Apache-2.0
-- intervals.intersect: the intersection of several tables of intervals
-- (id, ts, dur), optionally only between rows with equal partition
-- columns: each result row is a time range covered by one interval of
-- every table, with the ids of those intervals. The work is done by the
-- __intrinsic_interval_intersect built-in over one interval tree per
-- table; these macros build its arguments and name its result columns.

-- sqlformat file off

-- A partition column as the tree aggregate takes it: its name as a
-- string, then its value in the row.
CREATE PERFETTO MACRO _ii_df_agg(x ColumnName, y ColumnName)
RETURNS _ProjectionFragment
AS __intrinsic_stringify!($x), src.$y;

-- Binds the result column $x to the partition column named $y.
CREATE PERFETTO MACRO _ii_df_bind(x Expr, y Expr)
RETURNS Expr
AS __intrinsic_table_ptr_bind($x, __intrinsic_stringify!($y));

-- Names the result column $x after the partition column $y.
CREATE PERFETTO MACRO _ii_df_select(x ColumnName, y Expr)
RETURNS _ProjectionFragment
AS $x AS $y;

-- The first of two arguments (pairs result columns with the tables).
CREATE PERFETTO MACRO __first_arg(x Expr, y Expr)
RETURNS Expr
AS $x;

-- One table's intervals as an interval tree, sorted by start (by the
-- aggregate, and only if the rows are not in ts order already: most
-- tables keep ts sorted, and a sort of a big table costs more than the
-- rest).
CREATE PERFETTO MACRO _interval_agg(
  tab TableOrSubquery,
  agg_columns ColumnNameList
)
RETURNS TableOrSubquery
AS (
  SELECT __intrinsic_interval_tree_intervals_agg_any_order(
    src.id,
    src.ts,
    src.dur
    __intrinsic_token_apply_prefix!(_ii_df_agg, $agg_columns, $agg_columns)
  )
  FROM $tab AS src
);

-- The same for a table whose id, start and duration columns have other
-- names.
CREATE PERFETTO MACRO _interval_agg_with_col_names(
  tab TableOrSubquery,
  agg_columns ColumnNameList,
  id_col ColumnName,
  ts_col ColumnName,
  dur_col ColumnName
)
RETURNS TableOrSubquery
AS (
  SELECT __intrinsic_interval_tree_intervals_agg_any_order(
    src.$id_col,
    src.$ts_col,
    src.$dur_col
    __intrinsic_token_apply_prefix!(_ii_df_agg, $agg_columns, $agg_columns)
  )
  FROM $tab AS src
);

-- Intersects the interval tables in $tabs (2 to 15 tables, each with
-- columns id, ts, dur and the partition columns): one row per time range
-- where an interval of every table is present, with partitions equal when
-- $agg_columns names any. Columns: ts, dur, id_0 .. id_<n-1> (the ids of
-- the intervals, in the order of the tables) and the partition columns.
-- An instant (dur 0) meets an interval that contains its time.
CREATE PERFETTO MACRO _interval_intersect(
  tabs _TableNameList,
  agg_columns ColumnNameList
)
RETURNS TableOrSubquery
AS (
  SELECT
    c0 AS ts,
    c1 AS dur,
    __intrinsic_token_apply!(
      __first_arg,
      (
        c2 AS id_0, c3 AS id_1, c4 AS id_2, c5 AS id_3, c6 AS id_4,
        c7 AS id_5, c8 AS id_6, c9 AS id_7, c10 AS id_8, c11 AS id_9,
        c12 AS id_10, c13 AS id_11, c14 AS id_12, c15 AS id_13, c16 AS id_14
      ),
      $tabs
    )
    __intrinsic_token_apply_prefix!(
      _ii_df_select,
      (c17, c18, c19, c20),
      $agg_columns
    )
  FROM __intrinsic_table_ptr(
    __intrinsic_interval_intersect(
      __intrinsic_token_apply!(
        _interval_agg,
        $tabs,
        (
          $agg_columns, $agg_columns, $agg_columns, $agg_columns, $agg_columns,
          $agg_columns, $agg_columns, $agg_columns, $agg_columns, $agg_columns,
          $agg_columns, $agg_columns, $agg_columns, $agg_columns, $agg_columns
        )
      ),
      __intrinsic_stringify!($agg_columns)
    )
  )
  WHERE __intrinsic_table_ptr_bind(c0, 'ts')
    AND __intrinsic_table_ptr_bind(c1, 'dur')
    AND __intrinsic_table_ptr_bind(c2, 'id_0')
    AND __intrinsic_table_ptr_bind(c3, 'id_1')
    AND __intrinsic_table_ptr_bind(c4, 'id_2')
    AND __intrinsic_table_ptr_bind(c5, 'id_3')
    AND __intrinsic_table_ptr_bind(c6, 'id_4')
    AND __intrinsic_table_ptr_bind(c7, 'id_5')
    AND __intrinsic_table_ptr_bind(c8, 'id_6')
    AND __intrinsic_table_ptr_bind(c9, 'id_7')
    AND __intrinsic_table_ptr_bind(c10, 'id_8')
    AND __intrinsic_table_ptr_bind(c11, 'id_9')
    AND __intrinsic_table_ptr_bind(c12, 'id_10')
    AND __intrinsic_table_ptr_bind(c13, 'id_11')
    AND __intrinsic_table_ptr_bind(c14, 'id_12')
    AND __intrinsic_table_ptr_bind(c15, 'id_13')
    AND __intrinsic_table_ptr_bind(c16, 'id_14')
    __intrinsic_token_apply_and_prefix!(
      _ii_df_bind,
      (c17, c18, c19, c20),
      $agg_columns
    )
);

-- A table's id, start and duration columns renamed id, ts and dur (the
-- partition columns kept).
CREATE PERFETTO MACRO _interval_rename_cols(
  tab TableOrSubquery,
  agg_columns ColumnNameList,
  id_col ColumnName,
  ts_col ColumnName,
  dur_col ColumnName
)
RETURNS TableOrSubquery
AS (
  SELECT $id_col AS id, $ts_col AS ts, $dur_col AS dur
  __intrinsic_token_apply_prefix!(_ii_df_select, $agg_columns, $agg_columns)
  FROM $tab
);

-- The parts of the intervals of $t inside the one range ($ts, $dur):
-- columns id (of the interval), ts, dur.
CREATE PERFETTO MACRO _interval_intersect_single(
  ts Expr,
  dur Expr,
  t TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  SELECT id_0 AS id, ts, dur
  FROM _interval_intersect!(
    ($t, (SELECT 0 AS id, $ts AS ts, $dur AS dur)),
    ()
  )
);

-- Intersects two tables whose id, start and duration columns have other
-- names (given for each), partitioned by $agg_columns (may be ()).
CREATE PERFETTO MACRO _interval_intersect_with_col_names(
  -- The first table.
  tab1 TableOrSubquery,
  -- Its id column.
  id_col1 ColumnName,
  -- Its start column.
  ts_col1 ColumnName,
  -- Its duration column.
  dur_col1 ColumnName,
  -- The second table.
  tab2 TableOrSubquery,
  -- Its id column.
  id_col2 ColumnName,
  -- Its start column.
  ts_col2 ColumnName,
  -- Its duration column.
  dur_col2 ColumnName,
  -- The partition columns, () for none.
  agg_columns ColumnNameList
)
RETURNS TableOrSubquery
AS (
  _interval_intersect!(
    (
      _interval_rename_cols!($tab1, $agg_columns, $id_col1, $ts_col1, $dur_col1),
      _interval_rename_cols!($tab2, $agg_columns, $id_col2, $ts_col2, $dur_col2)
    ),
    $agg_columns
  )
);

-- Cuts time at every start and end of the intervals (id, ts, dur) and
-- lists, per piece, the intervals covering it: columns ts, dur, group_id
-- (the piece, numbered from 1 by time), id (an interval covering it) and
-- interval_ends_at_ts (0). For each interval's end there is also a row
-- with interval_ends_at_ts 1, the piece starting there as group_id and
-- that piece's dur (0 for the last end).
CREATE PERFETTO MACRO interval_self_intersect(
  -- The intervals: a table or subquery with id, ts and dur.
  intervals TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  WITH
    _si_points AS (
      SELECT id, ts, 1 AS is_start FROM $intervals
      UNION
      SELECT id, ts + dur AS ts, 0 AS is_start FROM $intervals
    ),
    _si_pieces AS (
      SELECT
        row_number() OVER (ORDER BY ts) AS id,
        ts,
        coalesce(lead(ts) OVER (ORDER BY ts) - ts, 0) AS dur
      FROM (SELECT DISTINCT ts FROM _si_points)
    ),
    _si_covering AS (
      SELECT ii.ts, ii.dur, ii.id_0 AS group_id, ii.id_1 AS id
      FROM _interval_intersect!((_si_pieces, $intervals), ()) AS ii
    )
  SELECT c.ts, c.dur, c.group_id, c.id, 0 AS interval_ends_at_ts
  FROM _si_covering AS c
  WHERE c.dur > 0
  UNION ALL
  SELECT p.ts, pc.dur, pc.id AS group_id, p.id, 1 AS interval_ends_at_ts
  FROM _si_points AS p
  JOIN _si_pieces AS pc ON pc.ts = p.ts
  WHERE p.is_start = 0
);

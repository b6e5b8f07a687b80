-- SPDX-License-Identifier: Apache-2.0
-- intervals.fill_gaps: completes a table of intervals so that each group
-- covers the whole trace, the gaps filled with rows of NULL data.

INCLUDE PERFETTO MODULE std.metasql.unparenthesize;

-- NULL, whatever its argument (one NULL per column of a list).
CREATE PERFETTO MACRO __ifg_null(x Expr)
RETURNS Expr
AS NULL;

-- The intervals of $data (ts, dur, $group_cols, $data_cols; no overlaps
-- within a group) plus, per group, rows with NULL data for the time from
-- the trace's start to its first interval, between its intervals, and
-- from its last interval to the trace's end; a group whose rows have no
-- times gets one row over the whole trace, and an empty $data one row
-- over the whole trace with NULL groups. Rows of zero or unknown length
-- are left out; the result is sorted by ts. $group_cols may be (NULL).
CREATE PERFETTO MACRO _intervals_fill_gaps(
  -- The group columns, in parentheses, or (NULL).
  group_cols ColumnNameList,
  -- The data columns, in parentheses.
  data_cols ColumnNameList,
  -- The intervals.
  data TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  WITH
    _fg_src AS (
      SELECT
        ts,
        dur,
        metasql_unparenthesize_exprlist!($group_cols),
        metasql_unparenthesize_exprlist!($data_cols)
      FROM $data
    ),
    _fg_span AS (
      SELECT
        metasql_unparenthesize_exprlist!($group_cols),
        min(ts) AS first_ts,
        max(ts + dur) AS last_end
      FROM _fg_src
      GROUP BY metasql_unparenthesize_exprlist!($group_cols)
    ),
    _fg_all AS (
      SELECT
        ts,
        dur,
        metasql_unparenthesize_exprlist!($group_cols),
        metasql_unparenthesize_exprlist!($data_cols)
      FROM _fg_src
      UNION ALL
      SELECT
        trace_start(),
        first_ts - trace_start(),
        metasql_unparenthesize_exprlist!($group_cols),
        __intrinsic_token_apply!(__ifg_null, $data_cols)
      FROM _fg_span
      UNION ALL
      SELECT
        last_end,
        trace_end() - last_end,
        metasql_unparenthesize_exprlist!($group_cols),
        __intrinsic_token_apply!(__ifg_null, $data_cols)
      FROM _fg_span
      UNION ALL
      SELECT
        trace_start(),
        trace_dur(),
        metasql_unparenthesize_exprlist!($group_cols),
        __intrinsic_token_apply!(__ifg_null, $data_cols)
      FROM _fg_span
      WHERE first_ts IS NULL AND last_end IS NULL
      UNION ALL
      SELECT
        trace_start(),
        trace_dur(),
        __intrinsic_token_apply!(__ifg_null, $group_cols),
        __intrinsic_token_apply!(__ifg_null, $data_cols)
      WHERE NOT EXISTS (SELECT 1 FROM _fg_src)
      UNION ALL
      SELECT
        ts + dur,
        lead(ts) OVER (
          PARTITION BY metasql_unparenthesize_exprlist!($group_cols) ORDER BY ts
        ) - (ts + dur),
        metasql_unparenthesize_exprlist!($group_cols),
        __intrinsic_token_apply!(__ifg_null, $data_cols)
      FROM _fg_src
    )
  SELECT *
  FROM _fg_all
  WHERE coalesce(dur, 0) > 0
  ORDER BY ts
);

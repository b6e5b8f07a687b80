-- SPDX-License-Identifier: Apache-2.0
-- intervals.overlap: how many intervals are open over time, merging
-- overlapping intervals, and flattening a hierarchy of intervals into the
-- innermost one at each time.

INCLUDE PERFETTO MODULE intervals.intersect;
INCLUDE PERFETTO MODULE std.metasql.unparenthesize;

-- How many of the intervals are open over time, as a counter: a row
-- (ts, value) at each time the count changes (value holds until the next
-- row). An interval with dur -1 never closes.
CREATE PERFETTO MACRO intervals_overlap_count(
  -- The intervals: a table or subquery.
  segments TableOrSubquery,
  -- Its start column (usually ts).
  ts_column ColumnName,
  -- Its duration column (usually dur).
  dur_column ColumnName
)
-- Columns ts (TIMESTAMP) and value (LONG).
RETURNS TableOrSubquery
AS (
  WITH
    _oc_steps AS (
      SELECT $ts_column AS ts, 1 AS step FROM $segments
      UNION ALL
      SELECT $ts_column + $dur_column AS ts, -1 AS step
      FROM $segments
      WHERE $dur_column != -1
    ),
    _oc_per_ts AS (
      SELECT ts, sum(step) AS step FROM _oc_steps GROUP BY ts
    )
  SELECT
    ts,
    sum(step) OVER (ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS value
  FROM _oc_per_ts
  ORDER BY ts
);

-- The same counter per group: rows (ts, value, group_name), the count of
-- the group's open intervals from ts on.
CREATE PERFETTO MACRO intervals_overlap_count_by_group(
  -- The intervals: a table or subquery.
  segments TableOrSubquery,
  -- Its start column (usually ts).
  ts_column ColumnName,
  -- Its duration column (usually dur).
  dur_column ColumnName,
  -- Its group column.
  group_column ColumnName
)
-- Columns ts, value and group_name (of the group column's type).
RETURNS TableOrSubquery
AS (
  WITH
    _ocg_steps AS (
      SELECT $ts_column AS ts, 1 AS step, $group_column AS group_name FROM $segments
      UNION ALL
      SELECT $ts_column + $dur_column AS ts, -1 AS step, $group_column AS group_name
      FROM $segments
      WHERE $dur_column != -1
    ),
    _ocg_per_ts AS (
      SELECT ts, sum(step) AS step, group_name
      FROM _ocg_steps
      GROUP BY ts, group_name
    )
  SELECT
    ts,
    sum(step) OVER (
      PARTITION BY group_name ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS value,
    group_name
  FROM _ocg_per_ts
  ORDER BY ts
);

-- 1 if some interval of the table (ts, dur; dur -1 left out) ends after
-- the next one by start begins, else 0.
CREATE PERFETTO MACRO _intervals_overlap_in_table(
  -- The intervals: a table or subquery with ts and dur.
  intervals TableOrSubquery
)
RETURNS Expr
AS (
  SELECT EXISTS (
    SELECT 1
    FROM (
      SELECT ts + dur AS end_ts, lead(ts) OVER (ORDER BY ts) AS next_ts
      FROM $intervals
      WHERE dur != -1
    )
    WHERE end_ts > next_ts
  ) AS has_overlaps
);

-- Puts root intervals (id, ts, dur) and their descendants (root_id, id,
-- parent_id, ts, dur) in one table for _intervals_flatten: a row per
-- descendant with its root's id, ts and dur, and a row with NULL child
-- columns for each root without descendants. Intervals of zero or
-- negative length are left out.
CREATE PERFETTO MACRO _intervals_merge_root_and_children(
  -- The roots: (id, ts, dur).
  roots_table TableOrSubquery,
  -- The descendants: (root_id, id, parent_id, ts, dur).
  children_table TableOrSubquery
)
-- Columns root_id, root_ts, root_dur, id, parent_id, ts, dur.
RETURNS TableOrSubquery
AS (
  WITH
    _mr_roots AS (
      SELECT id AS root_id, ts AS root_ts, dur AS root_dur
      FROM ($roots_table)
      WHERE dur > 0
    ),
    _mr_children AS (
      SELECT * FROM ($children_table) WHERE dur > 0
    )
  SELECT r.root_id, r.root_ts, r.root_dur, c.id, c.parent_id, c.ts, c.dur
  FROM _mr_children AS c
  JOIN _mr_roots AS r ON r.root_id = c.root_id
  UNION ALL
  SELECT r.root_id, r.root_ts, r.root_dur, NULL AS id, NULL AS parent_id, NULL AS ts,
    NULL AS dur
  FROM _mr_roots AS r
  WHERE r.root_id NOT IN (
    SELECT c.parent_id FROM _mr_children AS c WHERE c.parent_id IS NOT NULL
  )
);

-- Like _intervals_merge_root_and_children, for children that do not know
-- their root: a child belongs to each root it overlaps with the same
-- $key, cut to that root (a child without parent gets the root as
-- parent).
CREATE PERFETTO MACRO _intervals_merge_root_and_children_by_intersection(
  -- The roots: (id, ts, dur, $key).
  roots_table TableOrSubquery,
  -- The children: (id, parent_id, ts, dur, $key).
  children_table TableOrSubquery,
  -- The column a child and its root must share.
  key ColumnName
)
-- Columns ts, dur, id, parent_id, root_id, root_ts, root_dur, $key.
RETURNS TableOrSubQuery
AS (
  WITH
    _mi_roots AS (
      SELECT * FROM $roots_table WHERE dur > 0 ORDER BY ts
    ),
    _mi_children AS (
      SELECT * FROM $children_table WHERE dur > 0 ORDER BY ts
    )
  SELECT
    ii.ts,
    ii.dur,
    c.id,
    coalesce(c.parent_id, ii.id_1) AS parent_id,
    r.id AS root_id,
    r.ts AS root_ts,
    r.dur AS root_dur,
    ii.$key
  FROM _interval_intersect!((_mi_children, _mi_roots), ($key)) AS ii
  JOIN _mi_children AS c ON c.id = ii.id_0
  JOIN _mi_roots AS r ON r.id = ii.id_1
);

-- Flattens each root's hierarchy of intervals (the output of the merge
-- macros above; children must lie within their parents) into pieces that
-- do not overlap: at each time, the innermost interval open then. Rows
-- (root_id, id, ts, dur); a root without children is one piece.
CREATE PERFETTO MACRO _intervals_flatten(
  children_with_roots_table TableOrSubquery
)
-- Columns root_id, id, ts, dur.
RETURNS TableOrSubquery
AS (
  WITH
    _fl_in AS (
      SELECT *
      FROM ($children_with_roots_table)
      WHERE root_dur > 0 AND (dur IS NULL OR dur > 0)
    ),
    -- Where an interval starts, it is the innermost one; where it ends,
    -- its parent (or the root) is again. At one time a start wins over
    -- an end, the shortest of several starts and the longest of several
    -- ends.
    _fl_marks AS (
      SELECT root_id, root_ts, root_dur, id, ts, 1 AS is_start, dur AS len
      FROM _fl_in
      UNION ALL
      SELECT root_id, root_ts, root_dur, coalesce(parent_id, root_id) AS id, ts + dur AS ts,
        0 AS is_start, dur AS len
      FROM _fl_in
      WHERE id IS NOT NULL
    ),
    _fl_chosen AS (
      SELECT root_id, root_ts, root_dur, id, ts
      FROM (
        SELECT
          *,
          row_number() OVER (
            PARTITION BY root_id, ts
            ORDER BY is_start DESC, iif(is_start, len, -len), id
          ) AS pick
        FROM _fl_marks
      )
      WHERE pick = 1
    ),
    _fl_pieces AS (
      SELECT
        root_id, root_ts, root_dur, id, ts,
        lead(ts) OVER (PARTITION BY root_id ORDER BY ts) - ts AS dur
      FROM _fl_chosen
    ),
    _fl_middle AS (
      SELECT * FROM _fl_pieces WHERE dur > 0
    ),
    _fl_bounds AS (
      SELECT root_id, root_ts, root_dur, min(ts) AS first_ts, max(ts + dur) AS last_end
      FROM _fl_middle
      GROUP BY root_id
    )
  SELECT root_id, id, ts, dur FROM _fl_middle
  UNION ALL
  SELECT root_id, root_id AS id, root_ts AS ts, first_ts - root_ts AS dur
  FROM _fl_bounds
  WHERE first_ts - root_ts > 0
  UNION ALL
  SELECT root_id, root_id AS id, last_end AS ts, root_ts + root_dur - last_end AS dur
  FROM _fl_bounds
  WHERE root_ts + root_dur - last_end > 0
  UNION ALL
  SELECT DISTINCT root_id, root_id AS id, root_ts AS ts, root_dur AS dur
  FROM _fl_in
  WHERE id IS NULL
);

-- Merges intervals (ts, dur) that overlap, or that come within $epsilon
-- of each other, into the fewest intervals covering the same time: rows
-- (ts, dur).
CREATE PERFETTO MACRO interval_merge_overlapping(
  -- The intervals: a table or subquery with ts and dur.
  intervals TableOrSubquery,
  -- How close two intervals may be and still merge (usually 0).
  epsilon Expr
)
RETURNS TableOrSubquery
AS (
  WITH
    _mo_count AS (
      SELECT ts, value, lag(value, 1, 0) OVER (ORDER BY ts) AS before
      FROM intervals_overlap_count!($intervals, ts, (dur + $epsilon))
    ),
    -- Where the count leaves 0 a merged interval starts; where it comes
    -- back to 0 one ends ($epsilon before, the padding taken off).
    _mo_edges AS (
      SELECT ts - iif(value = 0, $epsilon, 0) AS ts, value
      FROM _mo_count
      WHERE before = 0 OR value = 0
    ),
    _mo_paired AS (
      SELECT ts, value, lag(ts) OVER (ORDER BY ts) AS start_ts
      FROM _mo_edges
    )
  SELECT start_ts AS ts, ts - start_ts AS dur
  FROM _mo_paired
  WHERE value = 0
);

-- Merges overlapping intervals (ts, dur >= 0) within each partition
-- (equal values of $partition_columns) into the fewest intervals covering
-- the same time: rows (ts, dur, the partition columns). Intervals that
-- only touch are not merged.
CREATE PERFETTO MACRO interval_merge_overlapping_partitioned(
  -- The intervals: a table or subquery.
  intervals TableOrSubquery,
  -- The partition columns, in parentheses.
  partition_columns ColumnNameList
)
RETURNS TableOrSubquery
AS (
  WITH
    -- The latest end among the partition's earlier intervals (by start).
    _mp_reach AS (
      SELECT
        ts,
        dur,
        metasql_unparenthesize_exprlist!($partition_columns),
        max(ts + dur) OVER (
          PARTITION BY metasql_unparenthesize_exprlist!($partition_columns)
          ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
        ) AS reach
      FROM $intervals
      WHERE dur >= 0
    ),
    -- An interval starting past that reach opens a new merged interval.
    _mp_grouped AS (
      SELECT
        *,
        sum(coalesce(ts > reach, 1)) OVER (
          PARTITION BY metasql_unparenthesize_exprlist!($partition_columns)
          ORDER BY ts
        ) AS grp
      FROM _mp_reach
    )
  SELECT
    min(ts) AS ts,
    max(ts + dur) - min(ts) AS dur,
    metasql_unparenthesize_exprlist!($partition_columns)
  FROM _mp_grouped
  GROUP BY metasql_unparenthesize_exprlist!($partition_columns), grp
);

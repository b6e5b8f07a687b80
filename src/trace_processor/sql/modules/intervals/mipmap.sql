-- SPDX-License-Identifier: Apache-2.0
-- intervals.mipmap: intervals summarised into fixed-size time buckets per
-- partition: each bucket keeps the group (group_hash) that covers most of
-- it, and runs of buckets of the same group merge into one interval.

INCLUDE PERFETTO MODULE intervals.intersect;

-- Per value of $_partition_column in $_source_table (ts, dur): its first
-- start, last end, the bucket length $_bucket_duration_ns and how many
-- buckets cover it. Columns: the partition column, trace_min_ts,
-- trace_max_ts, bucket_duration_ns, bucket_count.
CREATE PERFETTO MACRO _mipmap_bucket_metadata(
  _source_table TableOrSubQuery,
  _partition_column ColumnName,
  _bucket_duration_ns Expr
)
RETURNS TableOrSubQuery
AS (
  WITH
    _mmb_bounds AS (
      SELECT
        $_partition_column,
        $_bucket_duration_ns AS bucket_duration_ns,
        min(ts) AS trace_min_ts,
        max(ts + dur) AS trace_max_ts
      FROM $_source_table
      GROUP BY $_partition_column
    )
  SELECT
    $_partition_column,
    trace_min_ts,
    trace_max_ts,
    bucket_duration_ns,
    (trace_max_ts - trace_min_ts + bucket_duration_ns - 1) / bucket_duration_ns AS bucket_count
  FROM _mmb_bounds
);

-- The buckets of each partition: id (in partition, bucket order), the
-- partition column, bucket_index, ts, dur.
CREATE PERFETTO MACRO _mipmap_buckets_table(
  _source_table TableOrSubQuery,
  _partition_column ColumnName,
  _bucket_duration_ns Expr
)
RETURNS TableOrSubQuery
AS (
  WITH RECURSIVE
    _mmt_meta AS (
      SELECT $_partition_column, trace_min_ts, bucket_duration_ns, bucket_count
      FROM _mipmap_bucket_metadata!($_source_table, $_partition_column, $_bucket_duration_ns)
    ),
    _mmt_rec($_partition_column, bucket_index, ts, dur) AS (
      SELECT m.$_partition_column, 0, m.trace_min_ts, m.bucket_duration_ns
      FROM _mmt_meta AS m
      UNION ALL
      SELECT r.$_partition_column, r.bucket_index + 1, r.ts + m.bucket_duration_ns, m.bucket_duration_ns
      FROM _mmt_rec AS r
      JOIN _mmt_meta AS m ON m.$_partition_column = r.$_partition_column
      WHERE r.bucket_index + 1 < m.bucket_count
    )
  SELECT
    row_number() OVER (ORDER BY $_partition_column, bucket_index) AS id,
    $_partition_column,
    bucket_index,
    cast_int!(ts) AS ts,
    dur
  FROM _mmt_rec
);

-- The intervals of $_source_slices_with_ids (id, ts, dur, group_hash and
-- the partition column) over the buckets $_buckets (as
-- _mipmap_buckets_table): each bucket goes to the group with the most time
-- in it (ties: the earliest start, then the smaller hash), and adjacent
-- buckets of the same group merge. Columns: the partition column, id (the
-- smallest source id of the run), ts, dur (whole buckets), group_hash.
CREATE PERFETTO MACRO _mipmap_merged(
  _source_slices_with_ids TableOrSubQuery,
  _buckets TableOrSubQuery,
  _partition_column ColumnName,
  _bucket_duration_ns Expr
)
RETURNS TableOrSubQuery
AS (
  WITH
    _mmm_parts AS (
      SELECT
        ii.dur AS overlap_dur,
        b.bucket_index,
        b.ts AS bucket_ts,
        s.$_partition_column,
        s.id AS source_id,
        s.group_hash,
        s.ts AS original_ts
      FROM _interval_intersect!(($_buckets, $_source_slices_with_ids), ($_partition_column)) AS ii
      JOIN $_buckets AS b ON b.id = ii.id_0
      JOIN $_source_slices_with_ids AS s ON s.id = ii.id_1
    ),
    _mmm_bucket AS (
      SELECT $_partition_column, bucket_index, bucket_ts AS ts, sum(overlap_dur) AS bucket_dur
      FROM _mmm_parts
      GROUP BY $_partition_column, bucket_index, bucket_ts
    ),
    _mmm_group AS (
      SELECT
        $_partition_column,
        bucket_index,
        group_hash,
        min(source_id) AS source_id,
        sum(overlap_dur) AS group_dur,
        min(original_ts) AS first_ts
      FROM _mmm_parts
      GROUP BY $_partition_column, bucket_index, group_hash
    ),
    _mmm_winner AS (
      SELECT $_partition_column, bucket_index, source_id, group_hash
      FROM (
        SELECT
          *,
          row_number() OVER (
            PARTITION BY $_partition_column, bucket_index
            ORDER BY group_dur DESC, first_ts ASC, group_hash ASC
          ) AS rank_in_bucket
        FROM _mmm_group
      )
      WHERE rank_in_bucket = 1
    ),
    _mmm_buckets AS (
      SELECT $_partition_column, b.bucket_index, b.ts, b.bucket_dur AS dur, w.source_id, w.group_hash
      FROM _mmm_bucket AS b
      JOIN _mmm_winner AS w USING ($_partition_column, bucket_index)
    ),
    _mmm_changes AS (
      SELECT
        *,
        group_hash != coalesce(
          lag(group_hash) OVER (PARTITION BY $_partition_column ORDER BY bucket_index), ''
        ) AS starts_run
      FROM _mmm_buckets
    ),
    _mmm_runs AS (
      SELECT
        *,
        sum(CAST(starts_run AS INTEGER)) OVER (
          PARTITION BY $_partition_column ORDER BY bucket_index
          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ) AS run_id
      FROM _mmm_changes
    )
  SELECT
    $_partition_column,
    min(source_id) AS id,
    cast_int!(min(ts)) AS ts,
    (max(bucket_index) - min(bucket_index) + 1) * $_bucket_duration_ns AS dur,
    group_hash
  FROM _mmm_runs
  GROUP BY $_partition_column, run_id, group_hash
  ORDER BY ts
);

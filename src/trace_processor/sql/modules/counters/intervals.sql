-- SPDX-License-Identifier: Apache-2.0
-- counters.intervals: counter values as intervals of constant value.

-- The values of a counter-like table (columns id, ts, track_id, value) as
-- intervals, per track: a value holds from its ts until the track's next
-- change (the last one until the trace's end). Of a run of equal values
-- the first and the last row are kept and the ones between merged into
-- one. Columns: id, ts, dur, track_id, value, next_value (the value of
-- the following row) and delta_value (value less the preceding row's).
-- Computed by the __intrinsic_counter_intervals built-in; the values are
-- reals whatever the input's type.
CREATE PERFETTO MACRO counter_leading_intervals(
  -- The counter-like table or subquery: id, ts, track_id, value.
  counter_table TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  SELECT
    c0 AS id,
    c1 AS ts,
    c2 AS dur,
    c3 AS track_id,
    CAST(c4 AS REAL) AS value,
    CAST(c5 AS REAL) AS next_value,
    CAST(c6 AS REAL) AS delta_value
  FROM __intrinsic_table_ptr(
    __intrinsic_counter_intervals(
      'leading',
      trace_end(),
      (
        SELECT __intrinsic_counter_per_track_agg(src.id, src.ts, src.track_id, src.value)
        FROM (SELECT * FROM $counter_table ORDER BY ts) AS src
      )
    )
  )
  WHERE __intrinsic_table_ptr_bind(c0, 'id')
    AND __intrinsic_table_ptr_bind(c1, 'ts')
    AND __intrinsic_table_ptr_bind(c2, 'dur')
    AND __intrinsic_table_ptr_bind(c3, 'track_id')
    AND __intrinsic_table_ptr_bind(c4, 'value')
    AND __intrinsic_table_ptr_bind(c5, 'next_value')
    AND __intrinsic_table_ptr_bind(c6, 'delta_value')
);

-- SPDX-License-Identifier: Apache-2.0
-- intervals.create_intervals: intervals made by pairing start timestamps
-- with end timestamps.

-- Intervals (ts, dur): each start of $starts_table paired with the first
-- end of $ends_table strictly after it (both tables need a ts column),
-- by one pass over both sorted (__intrinsic_interval_create).
CREATE PERFETTO MACRO _interval_create(
  -- The start timestamps (a ts column).
  starts_table TableOrSubquery,
  -- The end timestamps (a ts column).
  ends_table TableOrSubquery
)
-- Columns ts (TIMESTAMP, the start) and dur (DURATION, to the end).
RETURNS TableOrSubquery
AS (
  SELECT p.c0 AS ts, p.c1 AS dur
  FROM __intrinsic_table_ptr(
    __intrinsic_interval_create(
      (SELECT __intrinsic_timestamp_set_agg(s.ts) FROM (SELECT ts FROM $starts_table ORDER BY ts) AS s),
      (SELECT __intrinsic_timestamp_set_agg(e.ts) FROM (SELECT ts FROM $ends_table ORDER BY ts) AS e)
    )
  ) AS p
  WHERE __intrinsic_table_ptr_bind(p.c0, 'ts') AND __intrinsic_table_ptr_bind(p.c1, 'dur')
);

-- SPDX-License-Identifier: Apache-2.0
-- wattson.utils: helpers of Wattson, Perfetto's power estimator: the
-- window between the user's wattson_start and wattson_stop markers, and
-- bit mask macros over CPU policies.

-- The window from the first wattson_start slice to the last wattson_stop
-- one (no row without a start).
CREATE PERFETTO TABLE _wattson_markers_window AS
WITH marks AS (
  SELECT
    min(s.ts) FILTER (WHERE s.name = 'wattson_start') AS start_ts,
    max(s.ts) FILTER (WHERE s.name = 'wattson_stop') AS stop_ts
  FROM slice AS s
  WHERE s.name IN ('wattson_start', 'wattson_stop')
)
SELECT m.start_ts AS ts, m.stop_ts - m.start_ts AS dur, 'Markers window' AS name
FROM marks AS m
WHERE m.start_ts IS NOT NULL;

-- A table's rows with their row number (from 0) as id, for
-- _interval_intersect!.
CREATE PERFETTO MACRO _ii_subquery(tab TableOrSubquery)
RETURNS TableOrSubquery
AS (SELECT rowid - 1 AS id, * FROM $tab);

-- The policy number standing for the DSU (DynamIQ Shared Unit) in a
-- dependency.
CREATE PERFETTO MACRO _dsu_dep()
RETURNS Expr
AS 255;

-- An 8-bit mask, bit i set where the i-th argument is non-zero.
CREATE PERFETTO MACRO _bitmask8(
  b0 Expr, b1 Expr, b2 Expr, b3 Expr, b4 Expr, b5 Expr, b6 Expr, b7 Expr
)
RETURNS Expr
AS (
  ($b0 != 0) | (($b1 != 0) << 1) | (($b2 != 0) << 2) | (($b3 != 0) << 3)
  | (($b4 != 0) << 4) | (($b5 != 0) << 5) | (($b6 != 0) << 6) | (($b7 != 0) << 7)
);

-- Bit $bit of $mask.
CREATE PERFETTO MACRO _extract_bit(mask Expr, bit Expr)
RETURNS Expr
AS ((($mask) >> ($bit)) & 1);

-- The mask of the CPUs (0-7) whose policy, p0..p7 (-1: no such CPU), is
-- $target.
CREATE PERFETTO MACRO _policy_mask(
  target Expr,
  p0 Expr, p1 Expr, p2 Expr, p3 Expr, p4 Expr, p5 Expr, p6 Expr, p7 Expr
)
RETURNS Expr
AS (
  _bitmask8!(
    $p0 != -1 AND $p0 = $target,
    $p1 != -1 AND $p1 = $target,
    $p2 != -1 AND $p2 = $target,
    $p3 != -1 AND $p3 = $target,
    $p4 != -1 AND $p4 = $target,
    $p5 != -1 AND $p5 = $target,
    $p6 != -1 AND $p6 = $target,
    $p7 != -1 AND $p7 = $target
  )
);

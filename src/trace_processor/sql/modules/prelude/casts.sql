-- SPDX-License-Identifier: Apache-2.0
-- prelude.casts: macros that convert an expression to one storage type,
-- named as Perfetto's prelude names them (modules and the UI's queries use
-- them: cast_int!(x) and so on).

-- The expression |value| as an integer.
CREATE PERFETTO MACRO cast_int(
  -- What to convert.
  value Expr
) RETURNS Expr AS
CAST($value AS INT);

-- The expression |value| as a floating-point number.
CREATE PERFETTO MACRO cast_double(
  -- What to convert.
  value Expr
) RETURNS Expr AS
CAST($value AS REAL);

-- The expression |value| as text.
CREATE PERFETTO MACRO cast_string(
  -- What to convert.
  value Expr
) RETURNS Expr AS
CAST($value AS TEXT);

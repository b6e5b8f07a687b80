-- SPDX-License-Identifier: Apache-2.0
-- std.metasql.unparenthesize: a macro that turns "(a, b, c)" into
-- "a, b, c", for splicing a parenthesised list into GROUP BY, PARTITION
-- BY or a select list.

-- Gives its argument back unchanged (applied to each item of a list).
CREATE PERFETTO MACRO __unparenthesize_identity(x Expr)
RETURNS Expr
AS $x;

-- The items of a parenthesised expression list without the parentheses.
CREATE PERFETTO MACRO metasql_unparenthesize_exprlist(
  -- The list, in parentheses.
  expr ExprList
)
RETURNS UnparenExprList
AS __intrinsic_token_apply!(__unparenthesize_identity, $expr);

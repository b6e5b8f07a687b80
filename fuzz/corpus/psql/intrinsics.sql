CREATE PERFETTO MACRO id(a Expr) RETURNS Expr AS $a;
CREATE PERFETTO MACRO eq(a Expr, b Expr) RETURNS Expr AS $a = $b;
CREATE PERFETTO MACRO ap(a Expr) RETURNS Expr AS __intrinsic_token_apply!(id, (1, $a));
SELECT ap!(3), __intrinsic_stringify_ignore_table!(x.y), 1 __intrinsic_token_apply_and_prefix!(eq, (1, 2), (1, 2));
SELECT __intrinsic_token_apply!(id, ()), id!(id!(id!(1)));
SELECT m!(nope) FROM x;

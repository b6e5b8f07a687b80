#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_psql.sh - PerfettoSQL statements through trace_processor_shell, on
# the small sched trace of tp_shell.sh (tests/data/tp/sched_basic.textproto):
#   file/*         a -q file mixing CREATE PERFETTO TABLE / VIEW / FUNCTION
#                  (scalar and table) / MACRO / INDEX with plain SQL, comments and ';' inside
#                  strings: each statement's result set, in order;
#   replace        OR REPLACE of each kind;
#   null_args      a function called with NULL;
#   errors/*       schema mismatch, bad syntax, a recursive macro, an
#                  unknown macro, a table function's columns: exit 1,
#                  upstream's message on stderr, and the results before
#                  the failing statement only;
#   interactive    a macro defined and used at the REPL;
#   module         INCLUDE of our modules, whose tables are PERFETTO ones
#                  built with macros;
#   metric_*       RUN_METRIC of our metric files: twice, and its errors;
#   sorted/*       PERFETTO tables' lookups (psql_relation.c, psql_sorted.c):
#                  an integer id that is strictly increasing is the rowid
#                  (a search), a sorted column is indexed once a correlated
#                  subquery scans it, and not before; ids that are not a
#                  key, rows in any order and intervals.intersect over
#                  unsorted input keep their results and row order
#                  (Perfetto's binary gives the same rows).
# Usage: OUT=out sh tests/integration/tp_psql.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tp_lib.sh"

tp_setup tp_psql
DATA="$ROOT/tests/data/tp"

tp_encode sched_basic
TRACE="$tmp/sched_basic.pb"

# expect_file NAME WANT: runs $tmp/NAME.sql with -q; exit 0 and stdout is
# exactly WANT plus a newline.
expect_file() {
	run "$1" -q "$tmp/$1.sql" "$TRACE"
	printf '%s\n' "$2" >"$tmp/$1.want"
	if [ $rc -ne 0 ]; then
		fail "tp_psql/$1" "exit $rc: $(oneline "$tmp/$1.err")"
	elif ! cmp -s "$tmp/$1.want" "$tmp/$1.out"; then
		fail "tp_psql/$1" "stdout '$(oneline "$tmp/$1.out")' want '$(oneline "$tmp/$1.want")'"
	else
		pass "tp_psql/$1"
	fi
}

# expect_error NAME PATTERN STDOUT SQL: -Q SQL exits 1 with PATTERN on
# stderr and exactly STDOUT (may be empty) on stdout.
expect_error() {
	run "$1" -Q "$4" "$TRACE"
	if [ -n "$3" ]; then
		printf '%s\n' "$3" >"$tmp/$1.want"
	else
		: >"$tmp/$1.want"
	fi
	if [ $rc -ne 1 ]; then
		fail "tp_psql/errors/$1" "exit $rc (want 1): $(oneline "$tmp/$1.err")"
	elif ! grep -qF -- "$2" "$tmp/$1.err"; then
		fail "tp_psql/errors/$1" "stderr lacks '$2': $(oneline "$tmp/$1.err")"
	elif ! cmp -s "$tmp/$1.want" "$tmp/$1.out"; then
		fail "tp_psql/errors/$1" "stdout '$(oneline "$tmp/$1.out")' want '$(oneline "$tmp/$1.want")'"
	else
		pass "tp_psql/errors/$1"
	fi
}

# ---------------------------------------------------------------- file ----

cat >"$tmp/file.sql" <<'EOF'
-- Threads of the trace that ran, as a real table.
CREATE PERFETTO TABLE ran(utid JOINID(thread.id), runs LONG) AS
SELECT utid, count(*) AS runs FROM sched WHERE utid != 0 GROUP BY utid;
CREATE PERFETTO INDEX ran_utid ON ran(utid);
CREATE PERFETTO VIEW ran_named(name STRING, runs LONG) AS
SELECT t.name, r.runs FROM ran AS r JOIN thread AS t USING (utid);
CREATE PERFETTO FUNCTION label(name STRING, n LONG) RETURNS STRING AS
SELECT $name || ' x' || $n || ';';
/* a macro taking a table and a column */
CREATE PERFETTO MACRO top(t TableOrSubquery, c ColumnName) RETURNS TableOrSubquery AS
(SELECT * FROM $t ORDER BY $c DESC, name LIMIT 2);
SELECT label(name, runs) AS l FROM top!(ran_named, runs);
SELECT 'a;b' AS s;
CREATE PERFETTO FUNCTION on_cpu(c LONG) RETURNS TABLE(ts TIMESTAMP, utid LONG) AS
SELECT ts, utid FROM sched WHERE cpu = $c ORDER BY ts;
SELECT * FROM on_cpu(1);
DROP PERFETTO INDEX ran_utid ON ran;
SELECT count(*) AS n FROM sqlite_master WHERE type = 'index' AND tbl_name = 'ran'
EOF
expect_file file '"l"
"alpha x1;"
"alpha_worker x1;"

"s"
"a;b"

"ts","utid"
1200,3
3000,0

"n"
0'

cat >"$tmp/replace.sql" <<'EOF'
CREATE PERFETTO TABLE t AS SELECT 1 AS a;
CREATE OR REPLACE PERFETTO TABLE t AS SELECT 2 AS a;
CREATE PERFETTO VIEW v AS SELECT a FROM t;
CREATE OR REPLACE PERFETTO VIEW v AS SELECT a * 10 AS a FROM t;
CREATE PERFETTO FUNCTION f() RETURNS LONG AS SELECT 1;
CREATE OR REPLACE PERFETTO FUNCTION f() RETURNS LONG AS SELECT 3;
CREATE PERFETTO MACRO m() RETURNS Expr AS 4;
CREATE OR REPLACE PERFETTO MACRO m() RETURNS Expr AS 5;
SELECT v.a AS a, f() AS f, m!() AS m FROM v
EOF
expect_file replace '"a","f","m"
20,3,5'

cat >"$tmp/null_args.sql" <<'EOF'
CREATE PERFETTO FUNCTION twice(x LONG) RETURNS LONG AS SELECT $x * 2;
SELECT twice(NULL) AS n, twice(21) AS v, twice(NULL) IS NULL AS is_null
EOF
expect_file null_args '"n","v","is_null"
"[NULL]",42,1'

# -------------------------------------------------------------- errors ----

expect_error schema_mismatch \
	'CREATE PERFETTO TABLE: the following columns are declared in the schema, but do not exist: b; and the following columns exist, but are not declared: c' \
	'' 'CREATE PERFETTO TABLE t(a LONG, b LONG) AS SELECT 1 AS a, 2 AS c'
expect_error schema_missing \
	'CREATE PERFETTO VIEW: the following columns are missing from the schema: c' \
	'' 'CREATE PERFETTO VIEW t(a LONG) AS SELECT 1 AS a, 2 AS c'
expect_error bad_kind "syntax error near 'TABEL'" \
	'' 'CREATE PERFETTO TABEL t AS SELECT 1'
expect_error bad_table "syntax error near 'SELECT'" \
	'' 'CREATE PERFETTO TABLE t SELECT 1'
expect_error after_results "syntax error near 'RETURNS'" \
	'"x"
1' "SELECT 1 AS x; CREATE PERFETTO FUNCTION f(x LONG RETURNS LONG AS SELECT 1; SELECT 2"
expect_error recursive_macro "recursive macro expansion: 'r'" \
	'' 'CREATE PERFETTO MACRO r(a Expr) RETURNS Expr AS r!($a); SELECT r!(1)'
expect_error unknown_macro "unknown macro 'nope'" '' 'SELECT nope!(1)'
expect_error table_function_columns 'tf: column b at index 0 does not match return value name a.' \
	'' 'CREATE PERFETTO FUNCTION tf() RETURNS TABLE(a LONG) AS SELECT 1 AS b'
expect_error function_type 'f[arg=x]: argument 0 does not have expected type: expected LONG, actual STRING' \
	'' "CREATE PERFETTO FUNCTION f(a LONG) RETURNS LONG AS SELECT \$a; SELECT f('x')"

# --------------------------------------------------------- interactive ----

printf 'CREATE PERFETTO MACRO cpus() RETURNS Expr AS (SELECT count(DISTINCT cpu) FROM sched);\nSELECT cpus!() AS n;\n' |
	timeout 60 "$TP" "$TRACE" >"$tmp/repl.out" 2>"$tmp/repl.err"
rc=$?
if [ $rc -ne 0 ]; then
	fail tp_psql/interactive "exit $rc: $(oneline "$tmp/repl.err")"
elif ! grep -q '^ *2 *$' "$tmp/repl.out"; then
	fail tp_psql/interactive "no count of 2 cpus: $(oneline "$tmp/repl.out")"
else
	pass tp_psql/interactive
fi

# -------------------------------------------------------------- module ----

cat >"$tmp/module.sql" <<'EOF'
INCLUDE PERFETTO MODULE linux.perf.samples;
INCLUDE PERFETTO MODULE stacks.cpu_profiling;
SELECT count(*) AS n FROM linux_perf_samples_summary_tree;
SELECT type, name FROM sqlite_master
WHERE name IN ('linux_perf_samples_summary_tree', 'cpu_profiling_summary_tree')
ORDER BY name;
SELECT count(*) AS n FROM _callstacks_for_callsites!(_linux_perf_callsite_counts)
EOF
expect_file module '"n"
0

"type","name"
"table","cpu_profiling_summary_tree"
"table","linux_perf_samples_summary_tree"

"n"
0'

# ----------------------------------------------------------- traceback ----

# expect_stderr NAME WANT ARGS...: exit 1 and stderr exactly WANT.
expect_stderr() {
	_name=$1 _want=$2
	shift 2
	run "$_name" "$@"
	printf '%s\n' "$_want" >"$tmp/$_name.want_err"
	if [ $rc -ne 1 ]; then
		fail "tp_psql/$_name" "exit $rc (want 1): $(oneline "$tmp/$_name.err")"
	elif ! cmp -s "$tmp/$_name.want_err" "$tmp/$_name.err"; then
		fail "tp_psql/$_name" "stderr '$(oneline "$tmp/$_name.err")' want '$(oneline "$tmp/$_name.want_err")'"
	else
		pass "tp_psql/$_name"
	fi
}

printf 'SELECT 1 AS x;\nSELECT ts,\n  nope FROM sched;\n' >"$tmp/tb_sqlite.sql"
expect_stderr traceback_sqlite 'Traceback (most recent call last):
  File "stdin" line 3 col 3
      nope FROM sched
      ^
no such column: nope
Hint: sched has no column nope' -q "$tmp/tb_sqlite.sql" "$TRACE"
printf 'CREATE PERFETTO MACRO m(a Expr) RETURNS Expr AS $a + 1;\nSELECT m!(nope) FROM sched\n' >"$tmp/tb_macro.sql"
expect_stderr traceback_macro 'Fully expanded statement
  SELECT nope + 1 FROM sched
         ^
Traceback (most recent call last):
  File "stdin" line 2 col 8
    SELECT m!(nope) FROM sched
           ^
  File "stdin" line 1 col 49
    $a + 1
    ^
  File "stdin" line 2 col 11
    nope
    ^
no such column: nope
Hint: sched has no column nope' -q "$tmp/tb_macro.sql" "$TRACE"
expect_stderr traceback_parse "Traceback (most recent call last):
  File \"stdin\" line 1 col 11
     selec 2
     ^
syntax error near 'selec'" -Q 'SELECT 1; selec 2' "$TRACE"
expect_stderr traceback_create_table 'Traceback (most recent call last):
  File "stdin" line 1 col 35
    SELECT nope FROM sched
           ^
no such column: nope
Hint: sched has no column nope' -Q 'CREATE PERFETTO TABLE t AS SELECT nope FROM sched' "$TRACE"

# ------------------------------------------------------------ packages ----

mkdir -p "$tmp/pkg/mine/sub" "$tmp/pkg/bad"
printf '%s\n' 'CREATE PERFETTO FUNCTION mine_twice(x LONG) RETURNS LONG AS SELECT $x * 2;' \
	>"$tmp/pkg/mine/good.sql"
printf '%s\n' 'INCLUDE PERFETTO MODULE mine.good;' \
	'CREATE PERFETTO TABLE mine_cpus AS SELECT DISTINCT cpu FROM sched ORDER BY cpu;' \
	>"$tmp/pkg/mine/sub/uses.sql"
printf '%s\n' '-- fails on purpose' 'CREATE PERFETTO TABLE mine_t1 AS SELECT 1 AS a;' '' \
	'CREATE PERFETTO TABLE mine_t2 AS' 'SELECT nope FROM mine_t1;' >"$tmp/pkg/mine/broken.sql"
echo 'SELECT 1;' >"$tmp/pkg/bad/values.sql"

# expect_pkg NAME WANT ARGS...: exit 0 and stdout (lines joined by '|') WANT.
expect_pkg() {
	_name=$1 _want=$2
	shift 2
	run "$_name" "$@"
	if [ $rc -eq 0 ] && [ "$(oneline "$tmp/$_name.out")" = "$_want" ]; then
		pass "tp_psql/$_name"
	else
		fail "tp_psql/$_name" "exit $rc: $(oneline "$tmp/$_name.out") $(oneline "$tmp/$_name.err")"
	fi
}

expect_pkg package_add '"v","n"|42,2|' --add-sql-package "$tmp/pkg/mine" -Q \
	'INCLUDE PERFETTO MODULE mine.sub.uses; SELECT mine_twice(21) AS v, (SELECT count(*) FROM mine_cpus) AS n' "$TRACE"
expect_pkg package_rename '"v"|4|' --add-sql-package "$tmp/pkg/mine@other" -Q \
	'INCLUDE PERFETTO MODULE other.good; SELECT mine_twice(2) AS v' "$TRACE"
expect_pkg package_wildcard '"v"|6|' --add-sql-package "$tmp/pkg/mine" -Q \
	'INCLUDE PERFETTO MODULE mine.sub.*; SELECT mine_twice(3) AS v' "$TRACE"
expect_pkg package_override '"v"|10|' --override-sql-package "$tmp/pkg/mine@stacks" -Q \
	'INCLUDE PERFETTO MODULE stacks.good; SELECT mine_twice(5) AS v' "$TRACE"
printf 'SELECT 1 AS a;\nINCLUDE PERFETTO MODULE mine.broken;\n' >"$tmp/pkg_broken.sql"
expect_stderr package_module_error 'Traceback (most recent call last):
  File "stdin" line 2 col 1
    INCLUDE PERFETTO MODULE mine.broken
    ^
  Module include "mine.broken" line 5 col 8
    SELECT nope FROM mine_t1
           ^
no such column: nope' --add-sql-package "$tmp/pkg/mine" -q "$tmp/pkg_broken.sql" "$TRACE"
expect_stderr package_values 'Traceback (most recent call last):
  File "stdin" line 1 col 1
    INCLUDE PERFETTO MODULE bad.values
    ^
INCLUDE: Included module returning values.' --add-sql-package "$tmp/pkg/bad" \
	-Q 'INCLUDE PERFETTO MODULE bad.values' "$TRACE"
expect_stderr package_unknown_module "INCLUDE: unknown module 'mine.nope'" \
	--add-sql-package "$tmp/pkg/mine" -Q 'INCLUDE PERFETTO MODULE mine.nope' "$TRACE"
expect_stderr package_missing_dir "Couldn't add SQL package: Directory $tmp/pkg/none does not exist." \
	--add-sql-package "$tmp/pkg/none" -Q 'SELECT 1' "$TRACE"
expect_stderr package_taken "Couldn't add SQL package: Package 'stacks' is already registered. Choose a different name.
If you want to replace the existing package using trace processor shell, you need to pass the --dev flag and use --override-sql-package to pass the module path." \
	--add-sql-package "$tmp/pkg/mine@stacks" -Q 'SELECT 1' "$TRACE"
expect_stderr package_clash "Couldn't add SQL package: Package 'mine.x' clashes with existing package 'mine'. Package names cannot be prefixes of each other." \
	--add-sql-package "$tmp/pkg/mine" --add-sql-package "$tmp/pkg/mine@mine.x" -Q 'SELECT 1' "$TRACE"
expect_stderr package_stdlib_needs_dev 'Overriding stdlib requires --dev flag' \
	--override-stdlib "$tmp/pkg" -Q 'SELECT 1' "$TRACE"

# -------------------------------------------------------------- legacy ----

printf '%s\n' \
	"SELECT create_function('fact(x INT)', 'INT', 'SELECT IIF(\$x = 0, 1, \$x * fact(\$x - 1))');" \
	"SELECT create_function('fact(x INT)', 'INT', 'SELECT IIF(\$x = 0, 1, \$x * fact(\$x - 1))');" \
	"SELECT create_function('pow2(x INT)', 'INT', 'SELECT IIF(\$x = 0, 1, pow2(\$x - 1) + pow2(\$x - 1))');" \
	"SELECT EXPERIMENTAL_MEMOIZE('pow2');" \
	"SELECT create_view_function('upto(n INT)', 'i INT', 'WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < \$n) SELECT i FROM c');" \
	"SELECT IMPORT('stacks.cpu_profiling');" \
	"SELECT fact(5) AS f, pow2(60) AS p, (SELECT sum(i) FROM upto(4)) AS s," \
	"  (SELECT count(*) FROM cpu_profiling_summary_tree) AS t" >"$tmp/legacy.sql"
expect_file legacy '"f","p","s","t"
120,1152921504606846976,10,0'
expect_error legacy_memoize_missing "EXPERIMENTAL_MEMOIZE: Function 'nope'(INT) does not exist" '' \
	"SELECT EXPERIMENTAL_MEMOIZE('nope')"

# ----------------------------------------------------------- intrinsic ----

printf '%s\n' 'CREATE PERFETTO MACRO eq(a Expr, b Expr) RETURNS Expr AS $a = $b;' \
	'CREATE PERFETTO MACRO id(a Expr) RETURNS Expr AS $a;' \
	'SELECT __intrinsic_stringify!(foo bar) AS s, __intrinsic_token_apply!(id, (1, 2)),' \
	'  1 __intrinsic_token_apply_and_prefix!(eq, (1, 2), (1, 2)) AS t' >"$tmp/intrinsic.sql"
expect_file intrinsic '"s","1","2","t"
"foo bar",1,2,1'

# A trigger's body holds ';' of its own: the statement ends after its END.
printf '%s\n' 'CREATE TABLE ta(x); CREATE TABLE tb(y);' \
	'CREATE TRIGGER tr AFTER INSERT ON ta BEGIN INSERT INTO tb VALUES (new.x);' \
	'  INSERT INTO tb VALUES (new.x + 1); END; INSERT INTO ta VALUES (5); SELECT * FROM tb' \
	>"$tmp/trigger.sql"
expect_file trigger '"y"
5
6'

# ---------------------------------------------------------------- docs ----

# The module list of docs/trace-processor.md is what the modules say.
if python3 "$ROOT/tools/gen_module_docs.py" --tp "$TP" --check >"$tmp/docs.out" 2>&1; then
	pass tp_psql/docs_module_list
else
	fail tp_psql/docs_module_list "$(oneline "$tmp/docs.out")"
fi
# --help lists every module but the prelude, one line each.
"$TP" --help >"$tmp/help.out" 2>&1
"$TP" --list-modules | cut -f1 >"$tmp/modules.txt"
missing=$(while read -r m; do grep -q "^  $m " "$tmp/help.out" || echo "$m"; done <"$tmp/modules.txt")
if [ -s "$tmp/modules.txt" ] && [ -z "$missing" ] && ! grep -q '^  prelude\.' "$tmp/help.out"; then
	pass tp_psql/help_module_list
else
	fail tp_psql/help_module_list "--help lacks: $missing"
fi
# The hint names the module a missing table comes from.
expect_error module_hint 'no such table: cpu_profiling_summary_tree; INCLUDE PERFETTO MODULE stacks.cpu_profiling' '' \
	'SELECT * FROM cpu_profiling_summary_tree'

# RUN_METRIC: a metric file run twice (its DROP ... IF EXISTS let the
# PERFETTO table be made again), a file that runs another, and the
# argument errors upstream gives.
cat >"$tmp/metric_twice.sql" <<'SQL'
SELECT RUN_METRIC('android/cpu_info.sql');
SELECT RUN_METRIC('android/cpu_info.sql');
SELECT * FROM cluster_core_type;
SELECT count(*) AS n FROM power_profile;
SQL
expect_file metric_twice '"cluster","core_type"
0,"little"
1,"big"
2,"bigger"

"n"
0'
# {{key}}s replaced: the view's name and its column come from table_name.
cat >"$tmp/metric_subst.sql" <<'SQL'
SELECT RUN_METRIC('android/global_counter_span_view.sql', 'table_name', 'batt', 'counter_name', 'x');
SELECT * FROM batt_span;
SELECT RUN_METRIC('android/global_counter_span_view.sql', 'table_name', 'n', 'counter_name', 2.5);
SELECT * FROM n_span;
SQL
expect_file metric_subst '"ts","dur","batt_val"

"ts","dur","n_val"'
expect_error metric_subst_missing 'RUN_METRIC: Error when performing substitutions' '' \
	"SELECT RUN_METRIC('android/global_counter_span_view.sql', 'table_name', 'x')"
expect_error metric_unknown 'RUN_METRIC: Unknown filename provided nope.sql' '' \
	"SELECT RUN_METRIC('nope.sql')"
expect_error metric_bad_path 'RUN_METRIC: Invalid arguments' '' 'SELECT RUN_METRIC(1)'
expect_error metric_missing_value 'RUN_METRIC: missing value for key' '' \
	"SELECT RUN_METRIC('android/cpu_info.sql', 'k')"
expect_error metric_key_type 'RUN_METRIC: all keys must be strings' '' \
	"SELECT RUN_METRIC('android/cpu_info.sql', 1, 2)"
expect_error metric_value_type 'RUN_METRIC: all values must be convertible to strings' '' \
	"SELECT RUN_METRIC('android/cpu_info.sql', 'k', NULL)"

# PERFETTO tables' lookups. Above SORTED_INDEX_MIN_ROWS (4,096) rows.
cat >"$tmp/sorted_plan.sql" <<'SQL'
CREATE TABLE seed(id INT, ts INT, cpu INT);
INSERT INTO seed WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 4999)
SELECT i, i * 10, i % 3 FROM n;
CREATE PERFETTO TABLE big AS SELECT id, ts, cpu FROM seed;
EXPLAIN QUERY PLAN SELECT ts FROM big WHERE id = 7;
EXPLAIN QUERY PLAN SELECT ts FROM big WHERE ts > 70 ORDER BY ts LIMIT 1;
SELECT COUNT(*) AS n, SUM(nxt) AS s FROM (
  SELECT (SELECT b.ts FROM big b WHERE b.ts > a.ts AND b.cpu = a.cpu ORDER BY b.ts LIMIT 1) AS nxt
  FROM big a WHERE a.id % 500 = 0);
EXPLAIN QUERY PLAN SELECT ts FROM big WHERE ts > 70 ORDER BY ts LIMIT 1;
SQL
run sorted_plan -q "$tmp/sorted_plan.sql" "$TRACE"
# The plans, in order: id search; ts scanned (no index yet); the
# correlated "next ts" result; then ts searched by its index.
plans=$(grep -o '"SEARCH big USING INTEGER PRIMARY KEY[^"]*"\|"SCAN big"\|^10,225300$\|"SEARCH big USING COVERING INDEX __tp_sorted_big_ts (ts>?)"' \
	"$tmp/sorted_plan.out" | tr '\n' ' ')
want='"SEARCH big USING INTEGER PRIMARY KEY (rowid=?)" "SCAN big" 10,225300 "SEARCH big USING COVERING INDEX __tp_sorted_big_ts (ts>?)" '
if [ $rc -ne 0 ]; then
	fail "tp_psql/sorted/plan" "exit $rc: $(oneline "$tmp/sorted_plan.err")"
elif [ "$plans" != "$want" ]; then
	fail "tp_psql/sorted/plan" "plans '$plans' want '$want'"
else
	pass "tp_psql/sorted/plan"
fi
cat >"$tmp/sorted_rows.sql" <<'SQL'
CREATE PERFETTO TABLE big AS
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 4999)
SELECT CAST(i AS INT) AS id, i * 10 AS ts, i % 3 AS cpu FROM n;
SELECT COUNT(*) AS n, SUM(nxt) AS s FROM (
  SELECT (SELECT b.ts FROM big b WHERE b.ts > a.ts AND b.cpu = a.cpu ORDER BY b.ts LIMIT 1) AS nxt
  FROM big a WHERE a.id % 500 = 0);
CREATE TABLE seed(id INT, ts INT);
INSERT INTO seed SELECT id % 100, ts FROM big;
CREATE PERFETTO TABLE dup AS SELECT id, ts FROM seed;
SELECT group_concat(id) AS ids FROM (SELECT id FROM dup LIMIT 5 OFFSET 98);
CREATE PERFETTO TABLE rev AS SELECT id, ts FROM seed ORDER BY ts DESC;
SELECT group_concat(id) AS ids FROM (SELECT id FROM rev LIMIT 3);
INCLUDE PERFETTO MODULE intervals.intersect;
CREATE PERFETTO TABLE a_iv AS SELECT id, ts, 5 AS dur FROM big ORDER BY ts DESC;
CREATE PERFETTO TABLE b_iv AS SELECT 0 AS id, 100 AS ts, 1000 AS dur;
SELECT COUNT(*) AS n, SUM(id_0) AS s, MIN(ts) AS first FROM _interval_intersect!((a_iv, b_iv), ());
SELECT group_concat(id_0) AS ids FROM (SELECT id_0 FROM _interval_intersect!((a_iv, b_iv), ()) LIMIT 3);
SQL
expect_file sorted_rows '"n","s"
10,225300

"ids"
"98,99,0,1,2"

"ids"
"99,98,97"

"n","s","first"
100,5950,100

"ids"
"10,11,12"'

summary

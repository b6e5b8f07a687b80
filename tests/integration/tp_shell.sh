#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_shell.sh - trace_processor_shell's command line on a small sched trace
# (tests/data/tp/sched_basic.textproto, encoded with pfc_pbtxt):
#   csv/*          Perfetto's CSV: quoted header, ints, "%f" reals, quoted
#                  strings (inner quotes left alone), "[NULL]";
#   each_stmt/*    every result set prints, a blank line between them;
#   flags/*        -Q, --query-string, --query, -q, ignored diff-test flags;
#   errors/*       SQL error, missing trace, unknown flag, bad trace: exit 1,
#                  message on stderr, nothing on stdout;
#   sched/*        rows the importer made (ts, dur, cpu, thread names);
#   export         -e writes a SQLite file the sqlite3 CLI can read;
#   stdin          the trace read from '-';
#   interactive/*  the REPL driven through a pipe.
# Usage: OUT=out sh tests/integration/tp_shell.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tp_lib.sh"

tp_setup tp_shell
DATA="$ROOT/tests/data/tp"

tp_encode sched_basic
TRACE="$tmp/sched_basic.pb"

# run_in NAME INPUT ARGS...: the same with INPUT (printf format) on stdin.
run_in() {
	_n=$1
	_in=$2
	shift 2
	# shellcheck disable=SC2059
	printf "$_in" | timeout 60 "$TP" "$@" >"$tmp/$_n.out" 2>"$tmp/$_n.err"
	rc=$?
}

# One line of a file for messages.
oneline() {
	tr '\n' '|' <"$1" | head -c 300
}

# expect_csv NAME WANT ARGS...: exit 0 and stdout is exactly WANT plus a newline.
expect_csv() {
	_name=$1
	_want=$2
	shift 2
	run "$_name" "$@"
	printf '%s\n' "$_want" >"$tmp/$_name.want"
	if [ $rc -ne 0 ]; then
		fail "tp_shell/$_name" "exit $rc: $(oneline "$tmp/$_name.err")"
	elif ! cmp -s "$tmp/$_name.want" "$tmp/$_name.out"; then
		fail "tp_shell/$_name" "stdout '$(oneline "$tmp/$_name.out")' want '$(oneline "$tmp/$_name.want")'"
	else
		pass "tp_shell/$_name"
	fi
}

# expect_fail NAME STDERR_PATTERN ARGS...: exit 1, the pattern on stderr,
# nothing on stdout.
expect_fail() {
	_name=$1
	_pat=$2
	shift 2
	run "$_name" "$@"
	if [ $rc -ne 1 ]; then
		fail "tp_shell/$_name" "exit $rc (want 1): $(oneline "$tmp/$_name.err")"
	elif ! grep -q -- "$_pat" "$tmp/$_name.err"; then
		fail "tp_shell/$_name" "stderr lacks '$_pat': $(oneline "$tmp/$_name.err")"
	elif [ -s "$tmp/$_name.out" ]; then
		fail "tp_shell/$_name" "wrote to stdout: $(oneline "$tmp/$_name.out")"
	else
		pass "tp_shell/$_name"
	fi
}

# ----------------------------------------------------------------- CSV ----

expect_csv csv_types '"i","r","n","s","neg"
1,2.500000,"[NULL]","x y",-7' \
	-Q "SELECT 1 AS i, 2.5 AS r, NULL AS n, 'x y' AS s, -7 AS neg" "$TRACE"
expect_csv csv_header_quoting '"a b","x,y","count(*)"
1,2,1' \
	-Q 'SELECT 1 AS "a b", 2 AS "x,y", count(*) FROM (SELECT 1)' "$TRACE"
expect_csv csv_inner_quotes '"q"
"say "hi""' \
	-Q "SELECT 'say \"hi\"' AS q" "$TRACE"
expect_csv csv_real_digits '"third","big"
0.333333,1000000.000000' \
	-Q 'SELECT 1.0 / 3 AS third, 1e6 AS big' "$TRACE"
expect_csv csv_no_rows '"a"' -Q 'SELECT 1 AS a WHERE 0' "$TRACE"

# ------------------------------------------------------ last statement ----

# Every result set is printed, one blank line between them (Perfetto v58).
expect_csv each_stmt_printed '"a"
1

"b"
2' -Q 'SELECT 1 AS a; SELECT 2 AS b;' "$TRACE"
expect_csv each_stmt_empty_header '"a"

"b"
2' -Q 'SELECT 1 AS a WHERE 0; SELECT 2 AS b' "$TRACE"
expect_csv each_stmt_suppressed '"b"
2' -Q 'SELECT 1 AS suppress_query_output; SELECT 2 AS b' "$TRACE"
expect_csv last_stmt_earlier_run '"v"
5' -Q 'CREATE TABLE t1 AS SELECT 5 AS v; SELECT v FROM t1' "$TRACE"
expect_csv last_stmt_trailing_comment '"a"
1' -Q 'SELECT 1 AS a; -- trailing
 /* and a block */ ;' "$TRACE"
expect_csv each_stmt_file '"hidden"
"printed"

"v","twice"
5,10
6,12' -q "$DATA/statements.sql" "$TRACE"
expect_csv each_stmt_no_columns '"a"
1' -Q 'SELECT 1 AS a; CREATE TABLE t2(x)' "$TRACE"

# --------------------------------------------------------------- flags ----

expect_csv flags_query_string '"x"
3' --query-string 'SELECT 3 AS x' "$TRACE"
expect_csv flags_query '"x"
4' --query 'SELECT 4 AS x' "$TRACE"
expect_csv flags_trace_first '"x"
5' "$TRACE" -Q 'SELECT 5 AS x'
expect_csv flags_diff_test '"hidden"
"printed"

"v","twice"
5,10
6,12' --analyze-trace-proto-content --crop-track-events --extra-checks \
	--no-ftrace-raw --dev --full-sort -W --query-file "$DATA/statements.sql" "$TRACE"

run version --version
if [ $rc -ne 0 ] || ! grep -q '^perfetto-c v[0-9]' "$tmp/version.out"; then
	fail tp_shell/flags_version "exit $rc, stdout '$(oneline "$tmp/version.out")'"
else
	pass tp_shell/flags_version
fi
run help --help
if [ $rc -ne 0 ] || ! grep -q -- '--query-file' "$tmp/help.out"; then
	fail tp_shell/flags_help "exit $rc, no --query-file in the help"
else
	pass tp_shell/flags_help
fi

run perf -p "$tmp/perf.txt" -Q 'SELECT 1' "$TRACE"
if [ $rc -ne 0 ]; then
	fail tp_shell/flags_perf_file "exit $rc: $(oneline "$tmp/perf.err")"
elif ! grep -qE '^[0-9]+,[0-9]+$' "$tmp/perf.txt"; then
	fail tp_shell/flags_perf_file "perf file '$(oneline "$tmp/perf.txt")' is not 'load_ns,query_ns'"
else
	pass tp_shell/flags_perf_file
fi

# -------------------------------------------------------------- errors ----

expect_fail errors_sql 'no such table: no_such_table' \
	-Q 'SELECT * FROM no_such_table' "$TRACE"
run errors_sql_prefix -Q 'SELECT * FROM no_such_table' "$TRACE"
# Perfetto's form: the traceback (the statement, a caret), then the message.
if [ "$(oneline "$tmp/errors_sql_prefix.err")" = 'Traceback (most recent call last):|  File "stdin" line 1 col 1|    SELECT * FROM no_such_table|    ^|no such table: no_such_table|' ]; then
	pass tp_shell/errors_sql_format
else
	fail tp_shell/errors_sql_format "want Perfetto's traceback and message: $(oneline "$tmp/errors_sql_prefix.err")"
fi
# The first result set is out before the second statement fails (Perfetto's too).
run errors_sql_later -Q 'SELECT 1 AS a; SELECT nope FROM (SELECT 1 AS x); SELECT 2' "$TRACE"
if [ $rc -eq 1 ] && grep -q 'no such column' "$tmp/errors_sql_later.err" &&
	[ "$(oneline "$tmp/errors_sql_later.out")" = '"a"|1|' ]; then
	pass tp_shell/errors_sql_later
else
	fail tp_shell/errors_sql_later "exit $rc, stdout '$(oneline "$tmp/errors_sql_later.out")', stderr $(oneline "$tmp/errors_sql_later.err")"
fi
expect_fail errors_sql_runtime 'integer overflow' \
	-Q "SELECT abs(-9223372036854775807 - 1)" "$TRACE"
expect_fail errors_missing_trace 'no_such_trace.pb' -Q 'SELECT 1' "$tmp/no_such_trace.pb"
expect_fail errors_missing_query_file 'no_such.sql' -q "$tmp/no_such.sql" "$TRACE"
expect_fail errors_unknown_flag 'unknown option' --frobnicate -Q 'SELECT 1' "$TRACE"
expect_fail errors_metrics 'metrics (--run-metrics, --metrics-output) are not supported yet' \
	--run-metrics trace_stats "$TRACE"
expect_fail errors_unknown_short_flag 'unknown option' -Z -Q 'SELECT 1' "$TRACE"
expect_fail errors_missing_argument 'needs an argument' "$TRACE" -Q
expect_fail errors_no_trace 'no trace file' -Q 'SELECT 1'
printf '\377\377\377\377\377\377\377\377garbage' >"$tmp/garbage.pb"
expect_fail errors_bad_trace 'garbage.pb' -Q 'SELECT 1 AS a' "$tmp/garbage.pb"

# ------------------------------------------------------- imported rows ----

expect_csv sched_cpu0 '"ts","cpu","dur"
1000,0,500
1500,0,1000
2500,0,-1' -Q 'SELECT ts, cpu, dur FROM sched WHERE cpu = 0 ORDER BY ts' "$TRACE"
expect_csv sched_count '"n"
5' -Q 'SELECT COUNT(*) AS n FROM sched' "$TRACE"
expect_csv sched_thread_names '"ts","tid","name"
1000,10,"alpha"
1200,20,"beta_proc"
1500,11,"alpha_worker"' \
	-Q 'SELECT ts, tid, thread.name AS name FROM sched JOIN thread USING (utid)
	    WHERE tid != 0 ORDER BY ts' "$TRACE"

# -------------------------------------------------------------- export ----

run export -e "$tmp/export.db" "$TRACE"
if [ $rc -ne 0 ]; then
	fail tp_shell/export "exit $rc: $(oneline "$tmp/export.err")"
elif [ -s "$tmp/export.out" ]; then
	fail tp_shell/export "-e alone wrote to stdout: $(oneline "$tmp/export.out")"
elif ! command -v sqlite3 >/dev/null 2>&1; then
	skip tp_shell/export "no sqlite3 CLI"
else
	n=$(sqlite3 "$tmp/export.db" 'SELECT COUNT(*) FROM sched' 2>&1)
	t=$(sqlite3 "$tmp/export.db" \
		"SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN ('sched', 'thread', 'process')" 2>&1)
	if [ "$n" != 5 ]; then
		fail tp_shell/export "sched has '$n' rows in the export (want 5)"
	elif [ "$t" != 3 ]; then
		fail tp_shell/export "sched, thread and process are not all tables in the export: '$t'"
	else
		pass tp_shell/export
	fi
fi
# Exporting again overwrites the file instead of failing on existing tables.
run export_again -Q 'SELECT 1 AS a' -e "$tmp/export.db" "$TRACE"
if [ $rc -ne 0 ]; then
	fail tp_shell/export_overwrite "exit $rc: $(oneline "$tmp/export_again.err")"
elif [ "$(cat "$tmp/export_again.out")" != "$(printf '"a"\n1')" ]; then
	fail tp_shell/export_overwrite "stdout '$(oneline "$tmp/export_again.out")'"
else
	pass tp_shell/export_overwrite
fi

# --------------------------------------------------------------- stdin ----

timeout 60 "$TP" -Q 'SELECT COUNT(*) AS n FROM sched' - <"$TRACE" >"$tmp/stdin.out" 2>"$tmp/stdin.err"
rc=$?
if [ $rc -ne 0 ]; then
	fail tp_shell/stdin "exit $rc: $(oneline "$tmp/stdin.err")"
elif [ "$(cat "$tmp/stdin.out")" != "$(printf '"n"\n5')" ]; then
	fail tp_shell/stdin "stdout '$(oneline "$tmp/stdin.out")' (want 5 sched rows)"
else
	pass tp_shell/stdin
fi

# --------------------------------------------------------- interactive ----

run_in repl '.tables\nSELECT 41 + 1\n  AS answer;\n.quit\nSELECT 99 AS never;\n' -i "$TRACE"
if [ $rc -ne 0 ]; then
	fail tp_shell/interactive_basic "exit $rc: $(oneline "$tmp/repl.err")"
elif ! grep -qx 'sched' "$tmp/repl.out" || ! grep -qx 'thread' "$tmp/repl.out"; then
	fail tp_shell/interactive_basic ".tables lacks sched or thread: $(oneline "$tmp/repl.out")"
elif ! grep -q '^answer' "$tmp/repl.out" || ! grep -q '^ *42$' "$tmp/repl.out" ||
	! grep -q '^--' "$tmp/repl.out"; then
	fail tp_shell/interactive_basic "no 'answer' table with 42: $(oneline "$tmp/repl.out")"
elif ! grep -q 'Query executed in [0-9.]* ms' "$tmp/repl.out"; then
	fail tp_shell/interactive_basic "no timing line: $(oneline "$tmp/repl.out")"
elif grep -q never "$tmp/repl.out"; then
	fail tp_shell/interactive_basic "went on after .quit"
else
	pass tp_shell/interactive_basic
fi

run_in repl_err 'SELECT * FROM nope;\nSELECT NULL AS n, 5 AS five;\n' "$TRACE"
if [ $rc -ne 0 ]; then
	fail tp_shell/interactive_error "exit $rc: $(oneline "$tmp/repl_err.err")"
elif ! grep -q 'no such table: nope' "$tmp/repl_err.err"; then
	fail tp_shell/interactive_error "no error on stderr: $(oneline "$tmp/repl_err.err")"
elif ! grep -q '^\[NULL\] *5$' "$tmp/repl_err.out"; then
	fail tp_shell/interactive_error "did not go on after the error: $(oneline "$tmp/repl_err.out")"
else
	pass tp_shell/interactive_error
fi

run_in repl_schema '.schema sched\n.bogus\nSELECT COUNT(*) AS n FROM sched' "$TRACE"
if [ $rc -ne 0 ]; then
	fail tp_shell/interactive_schema "exit $rc: $(oneline "$tmp/repl_schema.err")"
elif ! grep -q '^ *ts' "$tmp/repl_schema.out" || ! grep -q '^ *dur' "$tmp/repl_schema.out"; then
	fail tp_shell/interactive_schema ".schema sched lacks ts/dur: $(oneline "$tmp/repl_schema.out")"
elif ! grep -q 'unknown command' "$tmp/repl_schema.err"; then
	fail tp_shell/interactive_schema ".bogus was not reported: $(oneline "$tmp/repl_schema.err")"
elif ! grep -q '^ *5$' "$tmp/repl_schema.out"; then
	fail tp_shell/interactive_schema "a statement without ';' at end of input did not run: $(oneline "$tmp/repl_schema.out")"
else
	pass tp_shell/interactive_schema
fi

summary

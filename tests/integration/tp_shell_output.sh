#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_shell_output.sh - what trace_processor_shell prints for several
# statements and for a column a table lacks, on tests/data/tp/sched_basic:
#   multi/*  every result set of -q/-Q, one blank line between them (a
#            zero-row result prints its header; CREATE, INSERT, DROP print
#            nothing); a failing statement prints nothing of itself, not
#            even the separator, after the results before it; exit 1; text
#            with no statement is an error (Perfetto v58);
#   hint/*   "no such column" is followed by a Hint line: the table that
#            lacks the column and the join or the nearest column that has
#            it; exit 1, nothing on stdout, SQLite's message kept.
# Usage: OUT=out sh tests/integration/tp_shell_output.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tp_lib.sh"

tp_setup tp_shell_output
DATA="$ROOT/tests/data/tp"

tp_encode sched_basic
TRACE="$tmp/sched_basic.pb"

oneline() {
	tr '\n' '|' <"$1" | head -c 400
}

# expect NAME RC STDOUT ARGS...: exit status RC and stdout exactly STDOUT
# (printf '%s' of it: give the trailing newline yourself).
expect() {
	_name=$1
	_rc=$2
	_want=$3
	shift 3
	run "$_name" "$@"
	printf '%s' "$_want" >"$tmp/$_name.want"
	if [ $rc -ne "$_rc" ]; then
		fail "tp_shell_output/$_name" "exit $rc (want $_rc): $(oneline "$tmp/$_name.err")"
	elif ! cmp -s "$tmp/$_name.want" "$tmp/$_name.out"; then
		fail "tp_shell_output/$_name" "stdout '$(oneline "$tmp/$_name.out")' want '$(oneline "$tmp/$_name.want")'"
	else
		pass "tp_shell_output/$_name"
	fi
}

# ------------------------------------------------------------- multi ----

expect multi_results 0 '"a","b"
1,"x"

"n"
5

"c"
2.500000
' -Q "SELECT 1 AS a, 'x' AS b; SELECT COUNT(*) AS n FROM sched; SELECT 2.5 AS c" "$TRACE"

expect multi_zero_rows 0 '"a"
1

"empty"

"z"
3
' -Q 'SELECT 1 AS a; SELECT ts AS empty FROM sched WHERE 0; SELECT 3 AS z' "$TRACE"

expect multi_no_columns 0 '"v"
7
8

"n"
1
' -Q 'CREATE TABLE m(v INT); INSERT INTO m VALUES (7), (8);
      CREATE VIEW mv AS SELECT v FROM m; SELECT v FROM mv ORDER BY v;
      DELETE FROM m WHERE v = 7; DROP VIEW mv; SELECT COUNT(*) AS n FROM m;
      CREATE TABLE m2 AS SELECT * FROM m' "$TRACE"

expect multi_only_no_columns 0 '' -Q 'CREATE TABLE q(v INT); INSERT INTO q VALUES (1)' "$TRACE"

# Results before the error are out; nothing of the failing statement (its
# first rows, the blank line), nothing after it.
expect multi_error_file 1 '"first"
"one"

"v"
' -q "$DATA/statements_error.sql" "$TRACE"
if grep -q "^integer overflow" "$tmp/multi_error_file.err" &&
	grep -q 'abs(-9223372036854775807 - 1)' "$tmp/multi_error_file.err"; then
	pass tp_shell_output/multi_error_message
else
	fail tp_shell_output/multi_error_message "stderr: $(oneline "$tmp/multi_error_file.err")"
fi
expect multi_error_first_row 1 '"a"
1
' -Q 'SELECT 1 AS a; SELECT abs(-9223372036854775807 - 1) AS b; SELECT 2 AS c' "$TRACE"
expect multi_error_prepare 1 '"a"
1
' -Q 'SELECT 1 AS a; SELECT * FROM no_such_table; SELECT 2 AS c' "$TRACE"

expect multi_no_sql 1 '' -Q '-- only a comment
;' "$TRACE"
if grep -q 'No valid SQL to run' "$tmp/multi_no_sql.err"; then
	pass tp_shell_output/multi_no_sql_message
else
	fail tp_shell_output/multi_no_sql_message "stderr: $(oneline "$tmp/multi_no_sql.err")"
fi

# -------------------------------------------------------------- hint ----

# expect_hint NAME HINT SQL: exit 1, empty stdout, SQLite's "no such column"
# and "Hint: HINT" (fixed string) on stderr.
expect_hint() {
	_name=$1
	_hint=$2
	run "$_name" -Q "$3" "$TRACE"
	if [ $rc -ne 1 ]; then
		fail "tp_shell_output/$_name" "exit $rc (want 1): $(oneline "$tmp/$_name.err")"
	elif [ -s "$tmp/$_name.out" ]; then
		fail "tp_shell_output/$_name" "wrote to stdout: $(oneline "$tmp/$_name.out")"
	elif ! grep -q "^no such column: " "$tmp/$_name.err"; then
		fail "tp_shell_output/$_name" "SQLite's message is gone: $(oneline "$tmp/$_name.err")"
	elif ! grep -qxF "Hint: $_hint" "$tmp/$_name.err"; then
		fail "tp_shell_output/$_name" "stderr '$(oneline "$tmp/$_name.err")' lacks 'Hint: $_hint'"
	else
		pass "tp_shell_output/$_name"
	fi
}

expect_hint hint_nearest_with_note \
	'sched has no column thread_state; did you mean end_state? (time per state is in the thread_state table)' \
	'SELECT thread_state FROM sched'
expect_hint hint_join 'sched has no column upid; join thread USING (utid) for it' \
	'SELECT upid FROM sched'
expect_hint hint_typo 'slice has no column dur2; did you mean dur?' 'SELECT dur2 FROM slice'
expect_hint hint_two_joins \
	'sched has no column pid; join thread USING (utid), then join process USING (upid) for it' \
	'SELECT ts, pid FROM sched WHERE cpu = 0'
expect_hint hint_back_join 'process has no column tid; join thread USING (upid) for it' \
	'SELECT tid FROM process'
expect_hint hint_track 'slice has no column utid; join thread_track ON slice.track_id = thread_track.id for it' \
	'SELECT utid FROM slice'
expect_hint hint_counter_track \
	'counter has no column utid; join thread_counter_track ON counter.track_id = thread_counter_track.id for it' \
	'SELECT utid FROM counter'
expect_hint hint_alias 'thread has no column nme; did you mean name?' \
	'SELECT t.nme FROM sched AS s, thread t WHERE s.utid = t.utid'
expect_hint hint_two_tables 'none of sched, thread has a column xyzzy' \
	'SELECT xyzzy FROM sched JOIN thread USING (utid)'
expect_hint hint_table_name 'thread_state has no column sched (sched is a table: SELECT ... FROM sched)' \
	'SELECT sched FROM thread_state'
# The hint names the failing statement's table, after earlier results.
run hint_later -Q 'SELECT 1 AS a; SELECT upid FROM thread_state' "$TRACE"
if [ $rc -eq 1 ] && [ "$(oneline "$tmp/hint_later.out")" = '"a"|1|' ] &&
	grep -qxF 'Hint: thread_state has no column upid; join thread USING (utid) for it' "$tmp/hint_later.err"; then
	pass tp_shell_output/hint_later
else
	fail tp_shell_output/hint_later "exit $rc, stdout '$(oneline "$tmp/hint_later.out")', stderr $(oneline "$tmp/hint_later.err")"
fi
# No table to name (a subquery, a CTE): SQLite's message alone.
run hint_none -Q 'WITH c AS (SELECT 1 AS y) SELECT x FROM c' "$TRACE"
if [ $rc -eq 1 ] && grep -q 'no such column: x' "$tmp/hint_none.err" &&
	! grep -q '^Hint:' "$tmp/hint_none.err"; then
	pass tp_shell_output/hint_none
else
	fail tp_shell_output/hint_none "exit $rc, stderr $(oneline "$tmp/hint_none.err")"
fi
# The REPL hints too and goes on; the hint only reads the schema, so the
# tables and the schema are as they were.
printf 'SELECT COUNT(*) || '"'"'/'"'"' || (SELECT COUNT(*) FROM sqlite_schema) AS before FROM sched;\nSELECT upid FROM sched;\nSELECT COUNT(*) || '"'"'/'"'"' || (SELECT COUNT(*) FROM sqlite_schema) AS after FROM sched;\n' |
	timeout 60 "$TP" "$TRACE" >"$tmp/hint_repl.out" 2>"$tmp/hint_repl.err"
rc=$?
b=$(sed -n '/^before/,+2p' "$tmp/hint_repl.out" | tail -n 1 | tr -d ' ')
a=$(sed -n '/^after/,+2p' "$tmp/hint_repl.out" | tail -n 1 | tr -d ' ')
if [ $rc -ne 0 ]; then
	fail tp_shell_output/hint_repl "exit $rc: $(oneline "$tmp/hint_repl.err")"
elif ! grep -qxF 'Hint: sched has no column upid; join thread USING (utid) for it' "$tmp/hint_repl.err"; then
	fail tp_shell_output/hint_repl "no hint: $(oneline "$tmp/hint_repl.err")"
elif [ -z "$b" ] || [ "$b" != "$a" ] || [ "${b%%/*}" != 5 ]; then
	fail tp_shell_output/hint_repl "sched rows/schema entries before '$b', after '$a' (want 5/N twice)"
else
	pass tp_shell_output/hint_repl
fi

summary

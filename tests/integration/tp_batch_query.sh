#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_batch_query.sh - pfc_batch_query: a folder of .sql files over many
# traces, results appended to CSV or SQLite:
#   csv        every (trace, query, row) once, in trace order, with the
#              trace's bounds and machine names, the row as JSON (quotes,
#              commas, NULL, reals); failing query and non-trace file
#              reported (stderr, an error row, exit 1), the rest written
#   jobs       -j 1 and -j 3 write the same rows
#   append     a second run appends (header once)
#   sqlite     one table per query with its own columns, batch_errors, a
#              new result column added on a later run, a result column
#              named like a fixed one renamed q_<name>
#   usage      no -o, no queries, an output in a missing folder, an
#              unknown --format: exit 2 with a message, nothing written
# Usage: OUT=out sh tests/integration/tp_batch_query.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tp_lib.sh"

tp_setup tp_batch_query
BQ="$OUT/pfc_batch_query"
[ -x "$BQ" ] || { fail tp_batch_query/binary "$BQ not built"; summary; exit 1; }

mkdir -p "$tmp/sql" "$tmp/traces"
"$PBTXT" --type Trace encode tests/data/tp/sched_basic.textproto >"$tmp/traces/a.pftrace"
"$PBTXT" --type Trace encode tests/data/tp/multi_machine/sync.textproto >"$tmp/traces/b.pftrace"
echo "not a trace" >"$tmp/traces/c.pftrace"
echo "SELECT COUNT(*) AS slices, SUM(dur) AS total FROM sched;" >"$tmp/sql/sched.sql"
printf '%s\n%s\n' "CREATE TEMP TABLE x AS SELECT 1 AS v;" \
	"SELECT v, 'a\"b,c' AS s, NULL AS n, 1.5 AS f FROM x;" >"$tmp/sql/multi.sql"
echo "SELECT nope FROM sched" >"$tmp/sql/bad.sql"
echo "ignored" >"$tmp/sql/README"

# ok_if NAME WORD MSG: pass if WORD is "ok", else fail with MSG.
ok_if() {
	if [ "$2" = ok ]; then pass "$1"; else fail "$1" "$3"; fi
}

# The output without its run_at column (the time of the run).
strip_run_at() {
	sed -E 's/,[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z,/,RUN,/' "$1"
}

cd "$tmp" || exit 1
"$BQ" -j 2 -s sql -o out.csv traces >stdout 2>stderr
rc=$?
ok_if csv/exit_1 "$([ $rc = 1 ] && echo ok)" "exit $rc, want 1 (a query and a trace failed)"
cat >want.csv <<'CSV'
trace,trace_start_ns,trace_end_ns,machines,run_at,query,row,result,error
traces/a.pftrace,1000,3000,host,RUN,bad,,,no such column: nope
traces/a.pftrace,1000,3000,host,RUN,multi,0,"{""v"": 1, ""s"": ""a\""b,c"", ""n"": null, ""f"": 1.5}",
traces/a.pftrace,1000,3000,host,RUN,sched,0,"{""slices"": 5, ""total"": 3298}",
traces/b.pftrace,11999995500,13001495500,"host,guest",RUN,bad,,,no such column: nope
traces/b.pftrace,11999995500,13001495500,"host,guest",RUN,multi,0,"{""v"": 1, ""s"": ""a\""b,c"", ""n"": null, ""f"": 1.5}",
traces/b.pftrace,11999995500,13001495500,"host,guest",RUN,sched,0,"{""slices"": 5, ""total"": 299997}",
traces/c.pftrace,,,,RUN,,,,not a Perfetto trace
CSV
strip_run_at out.csv >got.csv
if cmp -s got.csv want.csv; then pass csv/rows; else fail csv/rows "$(diff want.csv got.csv | head -n 5)"; fi
ok_if csv/stderr "$(grep -c 'traces/c.pftrace: not a Perfetto trace' stderr | grep -qx 1 && grep -q 'traces/b.pftrace: bad: no such column: nope' stderr && echo ok)" \
	"stderr: $(head -n 3 stderr)"

"$BQ" -j 1 -s sql -o one.csv traces 2>/dev/null
"$BQ" -j 3 -s sql -o three.csv traces 2>/dev/null
strip_run_at one.csv >one.s
strip_run_at three.csv >three.s
if cmp -s one.s want.csv && cmp -s three.s want.csv; then pass jobs/same_rows; else fail jobs/same_rows "$(diff one.s three.s | head -n 3)"; fi

"$BQ" -s sql/sched.sql -o out.csv traces/a.pftrace 2>/dev/null
rc=$?
ok_if append/exit_0 "$([ $rc = 0 ] && echo ok)" "exit $rc for a run without failures"
ok_if append/rows "$([ "$(wc -l <out.csv)" = 9 ] && [ "$(grep -c '^trace,' out.csv)" = 1 ] && echo ok)" \
	"$(wc -l <out.csv) lines, want 9 with one header"

"$BQ" -s sql -o out.sqlite traces 2>/dev/null
echo "SELECT COUNT(*) AS slices, MAX(dur) AS longest, 7 AS row FROM sched;" >"$tmp/sql/sched.sql"
"$BQ" -s sql/sched.sql -o out.sqlite traces/a.pftrace 2>/dev/null
got=$(python3 - <<'PY'
import sqlite3
c = sqlite3.connect("out.sqlite")
cols = [r[1] for r in c.execute("PRAGMA table_info(sched)")]
print(",".join(cols))
for r in c.execute("SELECT trace, trace_start_ns, machines, row, slices, total, longest, q_row FROM sched"):
    print(r)
print(c.execute("SELECT v, s, n, f FROM multi WHERE trace = 'traces/b.pftrace'").fetchall())
print(c.execute("SELECT trace, query, error FROM batch_errors ORDER BY trace, query").fetchall())
PY
)
want="trace,trace_start_ns,trace_end_ns,machines,run_at,row,slices,total,longest,q_row
('traces/a.pftrace', 1000, 'host', 0, 5, 3298, None, None)
('traces/b.pftrace', 11999995500, 'host,guest', 0, 5, 299997, None, None)
('traces/a.pftrace', 1000, 'host', 0, 5, None, 1800, 7)
[(1, 'a\"b,c', None, 1.5)]
[('traces/a.pftrace', 'bad', 'no such column: nope'), ('traces/b.pftrace', 'bad', 'no such column: nope'), ('traces/c.pftrace', None, 'not a Perfetto trace')]"
if [ "$got" = "$want" ]; then pass sqlite/tables; else fail sqlite/tables "got: $got"; fi

usage_case() {
	_name=$1
	_msg=$2
	shift 2
	"$BQ" "$@" >u.out 2>u.err
	_rc=$?
	if [ $_rc = 2 ] && grep -q -- "$_msg" u.err; then pass "usage/$_name"; else fail "usage/$_name" "exit $_rc: $(head -n 1 u.err)"; fi
}
usage_case no_out "-o OUT is required" -s sql traces
usage_case no_queries "no queries" -s traces -o x.csv traces
usage_case missing_sql "nosuch" -s nosuch -o x.csv traces
usage_case bad_out_dir "cannot open" -s sql -o nodir/x.csv traces
usage_case bad_format "is csv or sqlite" -s sql --format xml -o x.out traces
ok_if usage/nothing_written "$([ ! -e x.csv ] && [ ! -e x.out ] && echo ok)" "an output was created"

summary

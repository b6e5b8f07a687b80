#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_ops.sh - the standard library's operators (src/trace_processor/sql/ops)
# through trace_processor_shell, against results worked out by hand (no
# ../shared needed):
#   span_join/*   SPAN_JOIN, SPAN_LEFT_JOIN and SPAN_OUTER_JOIN over the
#                 small tables of tests/data/tp/ops/span_join_tables.sql:
#                 same, mixed and no partitioning, dur = -1, NULL
#                 partitions, an empty side, a span join of a span join,
#                 constraints pushed into the tables, the output order;
#   span_join_errors/*  upstream's messages for bad declarations and data;
#   clock/*       to_monotonic, to_realtime, abs_time_str, to_timecode on
#                 tests/data/tp/clocks.textproto (two snapshots);
#   graph_scan/*  graphs.scan's _graph_scan! (a diamond: a node reached
#                 twice is output twice; no edges; no starting rows);
#   string_agg/*  STRING_AGG as aggregate (NULLs skipped, per-row
#                 separators, NULL when empty) and over a sliding window.
# Usage: OUT=out sh tests/integration/tp_ops.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tp_lib.sh"

tp_setup tp_ops
DATA="$ROOT/tests/data/tp"
TABLES="$DATA/ops/span_join_tables.sql"

tp_encode sched_basic clocks

# sj NAME SQL WANT: SQL after the tables' file, on sched_basic; its CSV
# rows (header dropped) joined by ';' must equal WANT.
sj() {
	{ cat "$TABLES"; printf '%s;\n' "$2"; } >"$tmp/$1.sql"
	run "$1" -q "$tmp/$1.sql" "$tmp/sched_basic.pb"
	_got=$(sed 1d "$tmp/$1.out" | tr '\n' ';' | sed 's/;$//')
	if [ $rc -ne 0 ]; then
		fail "tp_ops/span_join/$1" "exit $rc: $(oneline "$tmp/$1.err")"
	elif [ "$_got" != "$3" ]; then
		fail "tp_ops/span_join/$1" "got '$_got', want '$3'"
	else
		pass "tp_ops/span_join/$1"
	fi
}

# sj_error NAME SQL MESSAGE: exit 1 with MESSAGE on stderr (no crash).
sj_error() {
	{ cat "$TABLES"; printf '%s;\n' "$2"; } >"$tmp/$1.sql"
	run "$1" -q "$tmp/$1.sql" "$tmp/sched_basic.pb"
	if [ $rc -ne 1 ]; then
		fail "tp_ops/span_join_errors/$1" "exit $rc (want 1): $(oneline "$tmp/$1.err")"
	elif ! grep -qF -- "$3" "$tmp/$1.err"; then
		fail "tp_ops/span_join_errors/$1" "stderr lacks '$3': $(oneline "$tmp/$1.err")"
	else
		pass "tp_ops/span_join_errors/$1"
	fi
}

# Inner, same partition: p=1 a1 [0,10) & b1 [5,15) -> [5,10); a2 [20,30)
# & b2 [25,125) -> [25,30); p=2 and p=3 exist on one side only.
sj inner "SELECT * FROM j_inner" '5,5,1,"a1","b1";25,5,1,"a2","b2"'
sj inner_columns "SELECT name FROM pragma_table_info('j_inner')" \
	'"ts";"dur";"p";"a";"b"'
# Left: every stretch of t1's rows, with t2's columns NULL where it has none.
sj left "SELECT * FROM j_left" \
	'0,5,1,"a1","[NULL]";5,5,1,"a1","b1";20,5,1,"a2","[NULL]";25,5,1,"a2","b2";0,5,2,"a3","[NULL]"'
# Outer: also t2's alone: b1 [10,15), b2 [30,125), and p=3 b3 [100,105).
# Unordered query: the rows come by (partition, ts).
sj outer "SELECT * FROM j_outer" \
	'0,5,1,"a1","[NULL]";5,5,1,"a1","b1";10,5,1,"[NULL]","b1";20,5,1,"a2","[NULL]";25,5,1,"a2","b2";30,95,1,"[NULL]","b2";0,5,2,"a3","[NULL]";100,5,3,"[NULL]","b3"'
# No partitions: a [0,10) and b [10,20) each meet x [5,15).
sj unpartitioned "SELECT * FROM j_flat" '5,5,"a","x";10,5,"b","x"'
# Mixed: u2 is joined with each partition of t1 (p=2's a3 ends where x starts).
sj mixed "SELECT * FROM j_mixed" '5,5,1,"a1","x"'
# Mixed outer: x alone within each partition of t1, none elsewhere.
sj mixed_outer "SELECT * FROM j_mixed_outer" \
	'0,5,1,"a1","[NULL]";5,5,1,"a1","x";10,5,1,"[NULL]","x";20,10,1,"a2","[NULL]";0,5,2,"a3","[NULL]";5,10,2,"[NULL]","x"'
# dur = -1 is an instant at 5 inside a1: kept, with dur -1 (end 4 - start 5).
sj negative_dur "SELECT * FROM j_neg" '5,-1,1,"n","a1"'
# Rows with a NULL partition are skipped (z), the others joined (y).
sj null_partition "SELECT * FROM j_nullp" '5,10,1,"y","b1";25,75,1,"y","b2"'
# A span join of a span join (outer with u2: x [5,15) beside the inner rows).
sj nested "SELECT * FROM j_nested" \
	'5,5,1,"a1","b1","x";10,5,1,"[NULL]","[NULL]","x";25,5,1,"a2","b2","[NULL]"'
# An empty side of an outer join: the other side's rows, whole.
sj empty_side "SELECT * FROM j_empty" \
	'0,10,1,"a1","[NULL]";20,10,1,"a2","[NULL]";0,5,2,"a3","[NULL]"'
# Constraints: on the partition, on ts (pushed into the tables as <=).
sj where_partition "SELECT * FROM j_outer WHERE p = 3" '100,5,3,"[NULL]","b3"'
sj where_ts "SELECT * FROM j_inner WHERE ts <= 5" '5,5,1,"a1","b1"'
sj where_column "SELECT ts FROM j_left WHERE b IS NULL ORDER BY p, ts" '0;20;0'
# A span join read many times (the inner side of a nested loop join).
sj self_join "SELECT count(*) FROM j_outer a JOIN j_outer b USING (p)" '38'
sj into_table "CREATE PERFETTO TABLE m AS SELECT * FROM j_outer; SELECT count(*), sum(dur) FROM m" '8,130'

sj_error text_partition "SELECT * FROM j_strp" "SPAN_JOIN: partition is not an INT column"
sj_error duplicate_column \
	"CREATE VIRTUAL TABLE x USING SPAN_OUTER_JOIN(j_inner PARTITIONED p, u1)" \
	"SPAN_JOIN: column a present in both tables j_inner and u1"
sj_error mismatching_partitions \
	"CREATE VIRTUAL TABLE x USING SPAN_JOIN(t1 PARTITIONED p, t2 PARTITIONED q)" \
	"SPAN_JOIN: mismatching partitions between the two tables; (partition p in table t1, partition q in table t2)"
sj_error one_argument "CREATE VIRTUAL TABLE x USING SPAN_JOIN(t1 PARTITIONED p)" \
	"SPAN_JOIN: expected exactly two arguments"
sj_error ts_partition "CREATE VIRTUAL TABLE x USING SPAN_JOIN(t1 PARTITIONED ts, t2)" \
	"SPAN_JOIN: partition column cannot be any of {ts, dur} for table t1"
sj_error unknown_table "CREATE VIRTUAL TABLE x USING SPAN_JOIN(t1 PARTITIONED p, nosuch PARTITIONED p)" \
	"Unknown table or view name 'nosuch'"
sj_error missing_partition_column "CREATE VIRTUAL TABLE x USING SPAN_JOIN(t1 PARTITIONED p, t2 PARTITIONED)" \
	"SPAN_JOIN: Missing partitioning column"
sj_error invalid_token "CREATE VIRTUAL TABLE x USING SPAN_JOIN(t1 FOO p, t2)" "SPAN_JOIN: Invalid token"
sj_error no_dur "CREATE PERFETTO TABLE nodur AS SELECT 1 AS ts, 2 AS p; CREATE VIRTUAL TABLE x USING SPAN_JOIN(nodur, nodur)" \
	"SPAN_JOIN: column dur must be present in at least one of tables nodur and nodur"
sj_error no_ts "CREATE PERFETTO TABLE nots AS SELECT 1 AS x; CREATE VIRTUAL TABLE x USING SPAN_JOIN(nots, t2)" \
	"SPAN_JOIN: Missing ts column in table nots"
sj_error no_partition_column "CREATE VIRTUAL TABLE x USING SPAN_JOIN(t1 PARTITIONED p, u1 PARTITIONED p)" \
	"SPAN_JOIN: Missing partition column 'p' in table 'u1'"
# A joined table that is a view over the join itself: an error, not a
# stack overflow (upstream's shell crashes here).
sj_error cycle "CREATE TABLE ct(ts INT, dur INT, p INT); CREATE TABLE cu(ts INT, dur INT, q INT); INSERT INTO ct VALUES (1, 2, 3); INSERT INTO cu VALUES (1, 2, 3); CREATE VIRTUAL TABLE cj USING SPAN_JOIN(ct, cu); DROP TABLE ct; CREATE VIEW ct AS SELECT ts, dur, p FROM cj; SELECT * FROM cj" \
	"SPAN_JOIN: the joined tables read the join itself"

# Clocks: boot 1000/2000 = mono 400/1300 = real 1.7e18 + 0/1000. Before
# the first snapshot its value; between, the earlier plus the time since
# it but not past the later (1950 -> 1300); after the last, extrapolated.
expect clock/to_monotonic clocks \
	"SELECT to_monotonic(500), to_monotonic(1000), to_monotonic(1500), to_monotonic(1950), to_monotonic(3000), to_monotonic(NULL)" \
	'400,400,900,1300,2300,"[NULL]"'
expect clock/to_realtime clocks "SELECT to_realtime(1500), abs_time_str(1500)" \
	'1700000000000000500,"2023-11-14T22:13:20.000000500"'
expect clock/no_snapshot sched_basic "SELECT to_monotonic(5), to_realtime(5), abs_time_str(5)" \
	'"[NULL]","[NULL]","[NULL]"'
expect clock/to_timecode sched_basic "SELECT to_timecode(3723004005006), to_timecode(0)" \
	'"01:02:03 004 005 006","00:00:00 000 000 000"'
# Edges 1->2, 1->3, 2->4, 3->4 from node 1 (p 10, w 1.5); a step makes
# p = 10 * p + id and doubles w. Node 4 is reached from 2 and from 3.
GS="INCLUDE PERFETTO MODULE graphs.scan; SELECT * FROM _graph_scan!("
expect graph_scan/diamond sched_basic \
	"$GS(SELECT 1 AS source_node_id, 2 AS dest_node_id UNION ALL SELECT 1, 3 UNION ALL SELECT 2, 4 UNION ALL SELECT 3, 4), (SELECT 1 AS id, 10 AS p, 1.5 AS w), (p, w), (SELECT t.id, t.p * 10 + t.id AS p, t.w * 2 AS w FROM \$table t))" \
	'1,10,1.500000;2,102,3.000000;3,103,3.000000;4,1024,6.000000;4,1034,6.000000'
expect graph_scan/no_edges sched_basic \
	"$GS(SELECT 1 AS source_node_id, 2 AS dest_node_id WHERE 0), (SELECT 5 AS id, 1 AS d), (d), (SELECT t.id, t.d + 1 AS d FROM \$table t))" \
	'5,1'
expect graph_scan/no_start sched_basic \
	"$GS(SELECT 1 AS source_node_id, 2 AS dest_node_id), (SELECT 5 AS id, 1 AS d WHERE 0), (d), (SELECT t.id, t.d + 1 AS d FROM \$table t))" \
	''
expect string_agg/aggregate sched_basic \
	"SELECT string_agg(x, s), string_agg(x, s) FILTER (WHERE 0) FROM (SELECT 'a' AS x, '-' AS s UNION ALL SELECT NULL, '+' UNION ALL SELECT 3, '/' UNION ALL SELECT 'b', NULL)" \
	'"a/3b","[NULL]"'
expect string_agg/window sched_basic \
	"SELECT x, string_agg(x, ',') OVER (ORDER BY x ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM (SELECT 1 AS x UNION ALL SELECT 2 UNION ALL SELECT 3)" \
	'1,"1";2,"1,2";3,"2,3"'

run clock_text -Q "SELECT to_monotonic('x')" "$tmp/sched_basic.pb"
if [ $rc -eq 1 ] && grep -qF "TO_MONOTONIC: first argument should be timestamp" "$tmp/clock_text.err"; then
	pass tp_ops/clock/text_argument
else
	fail tp_ops/clock/text_argument "exit $rc: $(oneline "$tmp/clock_text.err")"
fi

summary

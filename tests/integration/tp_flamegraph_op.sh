#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_flamegraph_op.sh - the flamegraph operator of PerfettoSQL
# (CREATE VIRTUAL TABLE ... USING __intrinsic_flamegraph, queried through
# __intrinsic_flamegraph_config): each tests/data/tp/flamegraph_op/NAME.sql
# builds a small tree and queries one view (TOP_DOWN, BOTTOM_UP, PIVOT,
# FROM_FRAME) with grouping, SHOW_STACK / HIDE_STACK / HIDE_FRAME filters,
# case-insensitive patterns, integer and real values and the SUM /
# ONE_OR_SUMMARY / CONCAT_WITH_COMMA aggregates, some on a source whose
# children come before their parents and after a schema change (which
# reconnects the table). Its CSV must equal NAME.csv, which is upstream's
# binary's output for the same file; an err_NAME.sql must fail with exit 1
# and upstream's message (err_NAME.err) on stderr.
# Usage: OUT=out sh tests/integration/tp_flamegraph_op.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tp_lib.sh"

tp_setup tp_flamegraph_op
DATA="$ROOT/tests/data/tp/flamegraph_op"
: >"$tmp/empty.pb"

for sql in "$DATA"/*.sql; do
	n=$(basename "$sql" .sql)
	run "$n" -q "$sql" "$tmp/empty.pb"
	case $n in
	err_*)
		want=$(cat "$DATA/$n.err")
		if [ $rc -ne 1 ]; then
			fail "tp_flamegraph_op/$n" "exit $rc (want 1): $(oneline "$tmp/$n.err")"
		elif ! grep -qF -- "$want" "$tmp/$n.err"; then
			fail "tp_flamegraph_op/$n" "stderr lacks '$want': $(oneline "$tmp/$n.err")"
		else
			pass "tp_flamegraph_op/$n"
		fi
		;;
	*)
		if [ $rc -ne 0 ]; then
			fail "tp_flamegraph_op/$n" "exit $rc: $(oneline "$tmp/$n.err")"
		elif ! cmp -s "$DATA/$n.csv" "$tmp/$n.out"; then
			fail "tp_flamegraph_op/$n" "got '$(oneline "$tmp/$n.out")' want '$(oneline "$DATA/$n.csv")'"
		else
			pass "tp_flamegraph_op/$n"
		fi
		;;
	esac
done
summary

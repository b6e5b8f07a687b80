#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_module_symbols.sh - offline symbolization: heap profile frames
# recorded without names, then ModuleSymbols packets as Perfetto's
# `traceconv symbolize` appends them (tests/data/tp/profiling/
# module_symbols.textproto: two processes mapping one library, an inlined
# call, a line without a file, an address no frame has, a wrong build id,
# an unknown path).
#   rows/*      stack_profile_symbol sets and frames' symbol_set_id, the
#               stackprofile_invalid_* stats;
#   tree        android_heap_profile_summary_tree splits a symbolized frame
#               into its inlined functions (callstacks.stack_profile);
#   forest_plan the callstack forest is searched by rowid and the counts by
#               an index (a plan, no timing);
#   pprof       `convert profile` writes a line per symbol with its file
#               and line number;
#   upstream/*  the same tables and decoded pprof profiles from Perfetto's
#               trace processor (UPSTREAM_TP or ../shared/upstream).
# Usage: OUT=out sh tests/integration/tp_module_symbols.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tp_lib.sh"

tp_setup tp_module_symbols
DATA=tests/data/tp/profiling
tp_encode module_symbols
T=module_symbols

expect rows/frames $T \
	"SELECT id, name, mapping, rel_pc, symbol_set_id FROM stack_profile_frame ORDER BY id" \
	'0,"",0,4096,0;1,"",0,8192,2;2,"",0,12288,4;3,"main",1,1280,"[NULL]";4,"",2,4096,0'
expect rows/symbols $T "SELECT * FROM stack_profile_symbol ORDER BY id" \
	'0,0,"arena_grow","arena.h",41,"[NULL]";1,0,"Tensor::alloc","tensor.cc",120,"[NULL]";2,2,"pool_take","[NULL]","[NULL]","[NULL]";3,3,"never_sampled","x.c",1,"[NULL]";4,4,"conv2d","[NULL]","[NULL]","[NULL]"'
expect rows/stats $T \
	"SELECT name, value FROM stats WHERE name LIKE 'stackprofile%' AND value > 0 ORDER BY name" \
	'"stackprofile_invalid_frame_id",1;"stackprofile_invalid_mapping_id",2'
TREE="INCLUDE PERFETTO MODULE android.memory.heap_profile.summary_tree;
SELECT * FROM android_heap_profile_summary_tree ORDER BY id"
expect tree $T "$TREE" \
	'0,"[NULL]","main","/usr/bin/trainer","[NULL]","[NULL]",0,16384,0,16384;1,2,"arena_grow","/usr/lib/libtensor.so","arena.h",41,4096,4096,4096,4096;2,0,"Tensor::alloc","/usr/lib/libtensor.so","tensor.cc",120,4096,8192,4096,8192;3,0,"pool_take","/usr/lib/libtensor.so","[NULL]","[NULL]",0,8192,0,8192;4,3,"conv2d","/usr/lib/libtensor.so","[NULL]","[NULL]",8192,8192,8192,8192;5,6,"arena_grow","/usr/lib/libtensor.so","arena.h",41,1024,1024,1024,1024;6,"[NULL]","Tensor::alloc","/usr/lib/libtensor.so","tensor.cc",120,1024,2048,1024,2048'

# The forest's plans: nodes found by id through the rowid, and the counts
# (an untyped GROUP BY table) through an index, never scanned per node.
PLAN="INCLUDE PERFETTO MODULE callstacks.stack_profile;
CREATE PERFETTO TABLE _c AS SELECT callsite_id, sum(size) AS self_count
FROM heap_profile_allocation GROUP BY callsite_id;
EXPLAIN QUERY PLAN SELECT * FROM _callstacks_for_callsites!(_c)"
run plan -Q "$PLAN" "$tmp/$T.pb"
if [ $rc -eq 0 ] && grep -q 'SEARCH f USING INTEGER PRIMARY KEY' "$tmp/plan.out" &&
	! grep -q '"SCAN s LEFT-JOIN"' "$tmp/plan.out"; then
	pass tp_module_symbols/forest_plan
else
	fail tp_module_symbols/forest_plan "exit $rc: $(oneline "$tmp/plan.out") $(oneline "$tmp/plan.err")"
fi

# pprof: decoded, one line per sample (tests/integration/pprof_decode.py).
decode_all() {
	for _f in "$1"/*.pb; do
		printf '%s\n' "$(basename "$_f")"
		python3 tests/integration/pprof_decode.py "$_f"
	done
}
if ! command -v python3 >/dev/null 2>&1; then
	skip tp_module_symbols/pprof "python3 is not installed"
elif ! "$TP" convert --output-dir "$tmp/ours" profile "$tmp/$T.pb" >/dev/null 2>"$tmp/conv.err"; then
	fail tp_module_symbols/pprof "convert profile: $(oneline "$tmp/conv.err")"
else
	decode_all "$tmp/ours" >"$tmp/ours.txt"
	if grep -q 'arena_grow|arena_grow|/usr/lib/libtensor.so|0a1b2c3d|arena.h:41;Tensor::alloc|Tensor::alloc|/usr/lib/libtensor.so|0a1b2c3d|tensor.cc:120;main|main|/usr/bin/trainer|$' "$tmp/ours.txt" &&
		grep -q 'conv2d|conv2d|/usr/lib/libtensor.so|0a1b2c3d|:0;pool_take|' "$tmp/ours.txt"; then
		pass tp_module_symbols/pprof
	else
		fail tp_module_symbols/pprof "decoded: $(oneline "$tmp/ours.txt")"
	fi
fi

if [ -z "${UPSTREAM_TP:-}" ]; then
	skip tp_module_symbols/upstream "no upstream trace_processor_shell (UPSTREAM_TP or ../shared/upstream)"
else
	Q="SELECT * FROM stack_profile_frame ORDER BY id;
SELECT * FROM stack_profile_symbol ORDER BY id;
SELECT name, idx, severity, source, value FROM stats WHERE value > 0 AND source != 'analysis' ORDER BY name, idx;
$TREE"
	"$TP" -Q "$Q" "$tmp/$T.pb" >"$tmp/q.ours" 2>"$tmp/q.err"
	"$UPSTREAM_TP" -Q "$Q" "$tmp/$T.pb" >"$tmp/q.up" 2>/dev/null
	if cmp -s "$tmp/q.ours" "$tmp/q.up"; then
		pass tp_module_symbols/upstream/tables
	else
		fail tp_module_symbols/upstream/tables "$(diff "$tmp/q.up" "$tmp/q.ours" | head -n 6 | tr '\n' '|')"
	fi
	if command -v python3 >/dev/null 2>&1 &&
		"$UPSTREAM_TP" convert --output-dir "$tmp/up" profile "$tmp/$T.pb" >/dev/null 2>&1; then
		decode_all "$tmp/up" >"$tmp/up.txt"
		if [ -s "$tmp/up.txt" ] && cmp -s "$tmp/up.txt" "$tmp/ours.txt"; then
			pass tp_module_symbols/upstream/pprof
		else
			fail tp_module_symbols/upstream/pprof "$(diff "$tmp/up.txt" "$tmp/ours.txt" | head -n 6 | tr '\n' '|')"
		fi
	else
		fail tp_module_symbols/upstream/pprof "upstream's convert profile failed"
	fi
fi
summary

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_perf_sql.sh - PerfettoSQL over linux.perf samples, as Perfetto's docs
# show it (CPU profiling, "Stack sampling" in the PerfettoSQL guide), on
# tests/data/tp/profiling/perf_sql.textproto (two sessions: cpu-clock
# with follower "insns", and page-faults; sched_switch on cpu 0):
#   include        INCLUDE PERFETTO MODULE: twice is a no-op, "pkg.*",
#                  Perfetto's errors for an unknown package or module, and
#                  no module table before its INCLUDE (the shell's hint
#                  names the module);
#   prelude        the stack_sample views and the intrinsic profiler
#                  tables (contexts, counter sets named by their first row,
#                  timebase units) with no INCLUDE;
#   samples        linux.perf.samples: linux_perf_samples_summary_tree;
#   cpu_profiling  stacks.cpu_profiling: samples of time-based sessions
#                  with a callstack, and their summary tree;
#   counters       linux.perf.counters and linux_perf_counter_for_sample();
#   running        which functions thread 101 ran while it was Running
#                  (a sample at 3200, while it slept, is left out);
#   callstacks     demangle() (a C++ name in the trees too) and
#                  experimental_annotated_callstack();
#   symbolization  stacks.symbolization_candidates;
#   export         export.to_firefox_profile's tables of a thread;
#   upstream       upstream's own diff tests of linux.perf data (through
#                  tools/upstream_difftests.py, encoded with protoc): each
#                  case named below must pass. Skipped when there is no
#                  Perfetto checkout ($PERFETTO_CHECKOUT, else
#                  ../.mirror/google+perfetto/repo), protoc or python3;
#   upstream_tp    every query above but the INCLUDE ones, run by upstream's
#                  trace processor (UPSTREAM_TP) on the same trace, gives
#                  our CSV to the byte (skipped without UPSTREAM_TP).
# Expected rows follow Perfetto's module definitions worked by hand on the
# trace (see its header for the samples and callsites).
# Usage: OUT=out sh tests/integration/tp_perf_sql.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tp_lib.sh"

tp_setup tp_perf_sql
DATA="$ROOT/tests/data/tp/profiling"

tp_encode perf_sql

# expect_error NAME SQL MESSAGE: the query fails and stderr has MESSAGE.
expect_error() {
	if timeout 60 "$TP" -Q "$2" "$tmp/perf_sql.pb" >"$tmp/out" 2>"$tmp/err"; then
		fail "$TP_SUITE/$1" "succeeded: $(head -n 2 "$tmp/out" | tr '\n' ' ')"
	elif grep -qF "$3" "$tmp/err"; then
		pass "$TP_SUITE/$1"
	else
		fail "$TP_SUITE/$1" "stderr: $(head -n 1 "$tmp/err")"
	fi
}

# expect_both NAME TRACE SQL EXPECTED: expect, and keeps the SQL so that
# upstream's trace processor runs it too (the "upstream_tp" part below).
mkdir -p "$tmp/upq"
expect_both() {
	expect "$@"
	printf '%s\n' "$3" >"$tmp/upq/$(printf '%s' "$1" | tr / :).sql"
	printf '%s\n' "$2" >"$tmp/upq/$(printf '%s' "$1" | tr / :).trace"
}

M="INCLUDE PERFETTO MODULE"

# ------------------------------------------------------------- include ----
expect include/twice perf_sql \
	"$M linux.perf.samples; $M linux.perf.samples;
	 SELECT count(*) FROM linux_perf_samples_summary_tree" '7'
expect include/wildcard perf_sql \
	"include perfetto module linux.perf.*;
	 SELECT count(*) FROM linux_perf_sample_with_counters;
	 SELECT count(*) FROM linux_perf_samples_summary_tree" '14;;"count(*)";7'
expect include/spelling perf_sql \
	"/* c */ include  Perfetto
	 module linux.perf.samples -- to the end of the line
	 ; select count(*) from linux_perf_samples_summary_tree" '7'
expect include/no_output perf_sql "$M stacks.cpu_profiling; SELECT 1 AS x" '1'
expect_error include/unknown_package "$M foo.bar; SELECT 1" "INCLUDE: Package 'foo.bar' not found"
expect_error include/unknown_module "$M linux.perf.nope; SELECT 1" \
	"INCLUDE: unknown module 'linux.perf.nope'"
expect_error include/not_yet "SELECT * FROM linux_perf_samples_summary_tree" \
	"no such table: linux_perf_samples_summary_tree"
expect_error include/hint "SELECT * FROM cpu_profiling_summary_tree" \
	"no such table: cpu_profiling_summary_tree; INCLUDE PERFETTO MODULE stacks.cpu_profiling"

# ------------------------------------------------------------- prelude ----
expect_both prelude/profiler_sample perf_sql "SELECT * FROM __intrinsic_profiler_sample ORDER BY id" \
	'0,1500,"linux.perf",0,0,2,"[NULL]",0,0;1,2000,"linux.perf",0,0,3,"[NULL]",1,2;2,2500,"linux.perf",0,0,4,"[NULL]",0,3;3,3200,"linux.perf",0,0,4,"[NULL]",0,5;4,3500,"linux.perf",1,1,5,"[NULL]",0,7;5,5000,"linux.perf",0,2,2,"[NULL]",0,9;6,5500,"linux.perf",0,3,"[NULL]","[NULL]",0,11;7,5800,"linux.perf",1,1,6,"[NULL]",0,12'
expect_both prelude/execution_context perf_sql "SELECT * FROM __intrinsic_profiler_execution_context" \
	'0,0,"user";1,1,"user";2,0,"kernel";3,0,"[NULL]"'
expect_both prelude/counter_set perf_sql \
	"SELECT counter_set_id, group_concat(counter_id) FROM __intrinsic_profiler_counter_set
	 GROUP BY counter_set_id ORDER BY counter_set_id" \
	'0,"0,1";2,"2";3,"3,4";5,"5,6";7,"7,8";9,"9,10";11,"11";12,"12,13"'
expect_both prelude/stack_sample perf_sql \
	"SELECT (SELECT count(*) FROM stack_sample), (SELECT count(*) FROM stack_sample_counter),
	 (SELECT count(*) FROM stack_sample_counter_track),
	 (SELECT count(*) FROM stack_sample_task_context),
	 (SELECT count(*) FROM stack_sample_execution_context)" '7,13,5,2,3'
expect_both prelude/sessions perf_sql "SELECT * FROM stack_sample_session" \
	'0,"linux.perf","ns","[NULL]";1,"linux.perf","count","[NULL]"'

# ------------------------------------------------------------- samples ----
expect_both samples/summary_tree perf_sql \
	"$M linux.perf.samples;
	 SELECT id, parent_id, name, mapping_name, source_file, line_number, self_count,
	 cumulative_count FROM linux_perf_samples_summary_tree" \
	'0,"[NULL]","main","/bin/app","[NULL]","[NULL]",0,6;1,0,"run","/bin/app","[NULL]","[NULL]",0,4;2,1,"read","/bin/app","[NULL]","[NULL]",2,2;3,"[NULL]","fault_fn","/libfault.so","[NULL]","[NULL]",1,1;4,1,"write","/bin/app","[NULL]","[NULL]",2,2;5,0,"unknown","/bin/app","[NULL]","[NULL]",1,1;6,0,"app::work()","/bin/app","[NULL]","[NULL]",1,1'

# ------------------------------------------------------- cpu_profiling ----
expect_both cpu_profiling/samples perf_sql \
	"$M stacks.cpu_profiling; SELECT * FROM cpu_profiling_samples" \
	'0,1500,3,101,"worker",0,0,2,"linux.perf";2,2500,3,101,"worker",0,0,4,"linux.perf";3,3200,3,101,"worker",0,0,4,"linux.perf";4,3500,2,100,"[NULL]",1,1,5,"linux.perf";5,5000,3,101,"worker",0,0,2,"linux.perf";7,5800,2,100,"[NULL]",1,1,6,"linux.perf"'
expect_both cpu_profiling/summary_tree perf_sql \
	"$M stacks.cpu_profiling;
	 SELECT name, mapping_name, self_count, cumulative_count FROM cpu_profiling_summary_tree
	 ORDER BY cumulative_count DESC, name" \
	'"main","/bin/app",0,6;"run","/bin/app",0,4;"read","/bin/app",2,2;"write","/bin/app",2,2;"app::work()","/bin/app",1,1;"unknown","/bin/app",1,1'

# ------------------------------------------------------------ counters ----
expect_both counters/with_counters perf_sql \
	"$M linux.perf.counters;
	 SELECT sample_id, ts, t.name, counter_value, cpu, cpu_mode, perf_session_id
	 FROM linux_perf_sample_with_counters JOIN track t ON t.id = track_id
	 WHERE sample_id IN (0, 6) ORDER BY sample_id, t.name" \
	'0,1500,"cpu-clock",10.000000,0,"user",0;0,1500,"insns",100.000000,0,"user",0;6,5500,"cpu-clock",50.000000,0,"unknown",0'
expect_both counters/for_sample perf_sql \
	"$M linux.perf.counters;
	 SELECT linux_perf_counter_for_sample(5, 'insns'), linux_perf_counter_for_sample(6, 'insns'),
	 linux_perf_counter_for_sample(6, 'cpu-clock'), linux_perf_counter_for_sample(1, 'page-faults')" \
	'400.000000,"[NULL]",50.000000,1.000000'

# ---------------------------------------------------------- callstacks ----
expect_both callstacks/demangle perf_sql \
	"SELECT demangle('_ZN3app4workEv'), demangle('main'), demangle('i'), demangle(NULL)" \
	'"app::work()","[NULL]","int","[NULL]"'
expect_both callstacks/annotated perf_sql \
	"SELECT id, depth, parent_id, frame_id, annotation FROM experimental_annotated_callstack(4)" \
	'4,2,1,4,"[NULL]";1,1,0,1,"[NULL]";0,0,"[NULL]",0,"[NULL]"'

# ------------------------------------------------------------- running ----
expect_both running/functions perf_sql \
	"$M stacks.cpu_profiling;
	 SELECT f.name, count(*) FROM cpu_profiling_samples s
	 JOIN thread_state st ON st.utid = s.utid AND st.state = 'Running'
	   AND s.ts >= st.ts AND s.ts < st.ts + st.dur
	 JOIN stack_profile_callsite c ON c.id = s.callsite_id
	 JOIN stack_profile_frame f ON f.id = c.frame_id
	 WHERE s.tid = 101 GROUP BY f.name ORDER BY f.name" \
	'"read",2;"write",1'

# ------------------------------------------------------- symbolization ----
expect_both symbolization/candidates perf_sql \
	"$M stacks.symbolization_candidates;
	 SELECT p.pid, module, build_id, rel_pc, breakpad_module_id
	 FROM _stacks_symbolization_candidates JOIN process p USING (upid) ORDER BY rel_pc" \
	'100,"/bin/app","abcd",16,"[NULL]";100,"/bin/app","abcd",32,"[NULL]";100,"/bin/app","abcd",48,"[NULL]";100,"/bin/app","abcd",64,"[NULL]";100,"/bin/app","abcd",80,"[NULL]";100,"/bin/app","abcd",153,"[NULL]"'

# callstacks.symbolize includes; its macro needs the LLVM symbolizer
# built-in, which Perfetto's release binary lacks too: the same error.
expect_error symbolization/symbolize_macro \
	"$M callstacks.symbolize;
	 SELECT * FROM _callstack_frame_symbolize!((SELECT 'x' AS file_name, 1 AS rel_pc, 1 AS mapping_id, 2 AS address))" \
	'no such function: __intrinsic_symbolize'

# -------------------------------------------------------------- export ----
# export.to_firefox_profile: thread 103's samples (by id) point at the stack
# rows of their callsites; a stack row's prefix is its parent callsite's row
# (fault_fn, a root of its own, has none); strings by name. Checked equal
# to Perfetto's output on this trace.
expect export/firefox perf_sql \
	"$M export.to_firefox_profile;
	 SELECT _export_firefox_samples_table(3), _export_firefox_stack_table(3),
	        _export_firefox_string_array(3),
	        json_array_length(export_to_firefox_profile(), '$.threads')" \
	'"{"stack":[2,3,4,4,2],"time":[1500,2000,2500,3200,5000],"weight":null,"weightType":"samples","length":5}","{"frame":[0,1,2,3,4],"category":[0,0,0,0,0],"subcategory":[0,0,0,0,0],"prefix":[null,0,1,null,1],"length":5}","["fault_fn","main","read","run","write"]",4'

# ------------------------------------------------------------ upstream ----
checkout=${PERFETTO_CHECKOUT:-$ROOT/../.mirror/google+perfetto/repo}
upstream_cases="Profiling:perf_sample_timebase_count Profiling:perf_sample_followers
Profiling:perf_sample_counter_only Profiling:perf_sample_counter_set
Profiling:cpu_profiling_samples_timebase_filter
Profiling:cpu_profiling_samples_counter_only_excluded
LinuxTests:perf_sample_with_counters_view Stacks:symbolization_candidates_perf_profile
Stacks:stack_profile_unknown_frame_name Profiling:annotations_switch_interpreter"
if [ ! -e "$checkout" ]; then
	skip "$TP_SUITE/upstream/all" "no Perfetto checkout at $checkout (set PERFETTO_CHECKOUT)"
elif ! command -v protoc >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
	skip "$TP_SUITE/upstream/all" "protoc or python3 is not installed"
else
	python3 "$ROOT/tools/upstream_difftests.py" --perfetto "$checkout" --tp "$TP" \
		--encoder protoc --area parser/profiling --area stdlib/linux --area stdlib/stacks \
		--json "$tmp/upstream.json" >"$tmp/upstream.txt" 2>&1
	for c in $upstream_cases; do
		r=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(next((("pass" if x["ok"] else "fail: " + x.get("first", "")[:150])
            for x in d["results"] if x["name"] == sys.argv[2]), "not run"))' \
			"$tmp/upstream.json" "$c" 2>&1)
		if [ "$r" = pass ]; then
			pass "$TP_SUITE/upstream/$c"
		else
			fail "$TP_SUITE/upstream/$c" "$r"
		fi
	done
fi


# ----------------------------------------------------------- upstream_tp ----
# Every query above but the INCLUDE ones, run by upstream's trace processor
# (UPSTREAM_TP) on the same trace: its rows must be ours, to the byte of
# the CSV (header included).
if [ -z "${UPSTREAM_TP:-}" ]; then
	skip "$TP_SUITE/upstream_tp/all" "UPSTREAM_TP is not set (Perfetto's trace_processor_shell)"
else
	for q in "$tmp"/upq/*.sql; do
		n=$(basename "$q" .sql)
		tr=$(cat "$tmp/upq/$n.trace")
		timeout 60 "$TP" -q "$q" "$tmp/$tr.pb" >"$tmp/upq/$n.ours" 2>"$tmp/upq/$n.oerr"
		timeout 120 "$UPSTREAM_TP" -q "$q" "$tmp/$tr.pb" >"$tmp/upq/$n.up" 2>"$tmp/upq/$n.uerr"
		if [ ! -s "$tmp/upq/$n.up" ]; then
			fail "$TP_SUITE/upstream_tp/$n" "upstream printed nothing: $(grep -v 'Loading trace\|Trace loaded\|execution time' "$tmp/upq/$n.uerr" | head -n 2 | tr '\n' ' ')"
		elif cmp -s "$tmp/upq/$n.ours" "$tmp/upq/$n.up"; then
			pass "$TP_SUITE/upstream_tp/$n"
		else
			fail "$TP_SUITE/upstream_tp/$n" "ours and upstream's differ: $(diff "$tmp/upq/$n.ours" "$tmp/upq/$n.up" | grep '^[<>]' | head -n 4 | tr '\n' ' ' | cut -c1-400)"
		fi
	done
fi

summary

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_flamegraph.sh - pfc_flamegraph on a small known profile
# (tests/data/tp/profiling/flame_samples.textproto: 13 samples of three
# threads in two processes, encoded with pfc_pbtxt):
#   folded/*    the folded stacks, exactly: frames root first, sorted frame
#               by frame; unnamed frames as MODULE+0xREL_PC or [unknown],
#               ';' in a name as ':'; kernel frames _[k] on request;
#               --per-process / --per-thread root frames; --reverse (leaf
#               first); timebase weights;
#               the note about samples without a callstack; a stack over
#               the 4,096-frame limit keeps its innermost frames; the example
#               in docs/flamegraph.md;
#   select/*    --pid, --tid, --utid, --process-name, --thread-name,
#               --start/--end (ns, units, +/- relative), --sql (perf_sample
#               ids narrowed by other options, or callsite_id rows with a
#               weight) pick exactly the expected samples;
#   svg/*       the SVG is well-formed XML with one frame per node of the
#               tree, x and width from the counts, callees in name order,
#               labels cut to fit, kernel frames blue, nothing external,
#               the same bytes every run, an escaped title; --from-folded
#               draws folded text;
#   browser/*   in headless Chromium, after the scripts ran: the hot frames
#               and their labels are drawn with a width and fit their
#               rects, a click zooms, Reset Zoom undoes it, a search
#               highlights and counts; a screenshot shows every wide frame
#               in its fill (skipped, saying so, without /usr/bin/chromium:
#               tools/deps.sh installs it);
#   errors/*    no samples in the trace, a missing file, not a trace, a
#               selection matching nothing, only stackless samples, bad
#               options and SQL: exit 1, a clear message, no output file.
# Usage: OUT=out sh tests/integration/tp_flamegraph.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tp_lib.sh"

tp_setup tp_flamegraph
DATA="$ROOT/tests/data/tp/profiling"
FG="$OUT/pfc_flamegraph"
CHECK="$ROOT/tests/integration/tp_flamegraph_svg.py"
if [ ! -x "$FG" ]; then
	fail tp_flamegraph/binaries "$FG not built (make $FG)"
	summary
	exit 1
fi

tp_encode flame_samples
TRACE="$tmp/flame_samples.pb"
mkdir -p "$tmp/folded" "$tmp/select" "$tmp/svg" "$tmp/errors"

# One line of a file for messages.
oneline() {
	tr '\n' '|' <"$1" | head -c 400
}

# fg NAME ARGS...: pfc_flamegraph ARGS; $tmp/NAME.out, .err and $rc.
fg() {
	_n=$1
	shift
	timeout 60 "$FG" "$@" </dev/null >"$tmp/$_n.out" 2>"$tmp/$_n.err"
	rc=$?
}

# expect_folded NAME WANT ARGS...: exit 0 and stdout is exactly the lines
# of WANT ('|' between them) for ARGS on the trace.
expect_folded() {
	_name=$1
	_want=$2
	shift 2
	fg "$_name" "$@" "$TRACE"
	printf '%s\n' "$_want" | tr '|' '\n' >"$tmp/$_name.want"
	if [ $rc -ne 0 ]; then
		fail "tp_flamegraph/$_name" "exit $rc: $(oneline "$tmp/$_name.err")"
	elif ! cmp -s "$tmp/$_name.want" "$tmp/$_name.out"; then
		fail "tp_flamegraph/$_name" "got '$(oneline "$tmp/$_name.out")' want '$_want'"
	else
		pass "tp_flamegraph/$_name"
	fi
}

# expect_error NAME PATTERN ARGS...: exit 1, PATTERN (grep -E) on stderr,
# nothing on stdout.
expect_error() {
	_name=$1
	_pat=$2
	shift 2
	fg "$_name" "$@"
	if [ $rc -ne 1 ]; then
		fail "tp_flamegraph/$_name" "exit $rc, want 1: $(oneline "$tmp/$_name.err")"
	elif ! grep -qE -- "$_pat" "$tmp/$_name.err"; then
		fail "tp_flamegraph/$_name" "stderr '$(oneline "$tmp/$_name.err")' lacks '$_pat'"
	elif [ -s "$tmp/$_name.out" ]; then
		fail "tp_flamegraph/$_name" "stdout not empty: $(oneline "$tmp/$_name.out")"
	else
		pass "tp_flamegraph/$_name"
	fi
}

ALL='main;[unknown] 1|main;compute 1|main;compute;hash 4|main;libz.so+0x1a2b 2|main;weird:name 1|start_thread;io_loop 1|start_thread;io_loop;read;do_syscall_64;vfs_read 2'
IO='start_thread;io_loop 1|start_thread;io_loop;read;do_syscall_64;vfs_read 2'
CLIENT='main;[unknown] 1|main;compute;hash 1|main;weird:name 1'

# ------------------------------------------------------------- folded ----
expect_folded folded/all "$ALL"
expect_folded folded/to_file_and_stdout "$ALL" -o -
if grep -qx 'pfc_flamegraph: note: 1 of the 13 selected samples have no callstack and are left out' \
	"$tmp/folded/all.err"; then
	pass tp_flamegraph/folded/no_stack_note
else
	fail tp_flamegraph/folded/no_stack_note "stderr: $(oneline "$tmp/folded/all.err")"
fi
expect_folded folded/annotate_kernel \
	'main;[unknown] 1|main;compute 1|main;compute;hash 4|main;libz.so+0x1a2b 2|main;weird:name 1|start_thread;io_loop 1|start_thread;io_loop;read;do_syscall_64_[k];vfs_read_[k] 2' \
	--annotate-kernel
expect_folded folded/per_process \
	'client-300;main;[unknown] 1|client-300;main;compute;hash 1|client-300;main;weird:name 1|server-200;main;compute 1|server-200;main;compute;hash 3|server-200;main;libz.so+0x1a2b 2|server-200;start_thread;io_loop 1|server-200;start_thread;io_loop;read;do_syscall_64;vfs_read 2' \
	--per-process
expect_folded folded/per_thread \
	'client-300;client-300;main;[unknown] 1|client-300;client-300;main;compute;hash 1|client-300;client-300;main;weird:name 1|server-200;io-201;start_thread;io_loop 1|server-200;io-201;start_thread;io_loop;read;do_syscall_64;vfs_read 2|server-200;server-200;main;compute 1|server-200;server-200;main;compute;hash 3|server-200;server-200;main;libz.so+0x1a2b 2' \
	--per-thread
expect_folded folded/reverse \
	'client-300;[unknown];main 1|client-300;hash;compute;main 1|client-300;weird:name;main 1|server-200;compute;main 1|server-200;hash;compute;main 3|server-200;io_loop;start_thread 1|server-200;libz.so+0x1a2b;main 2|server-200;vfs_read_[k];do_syscall_64_[k];read;io_loop;start_thread 2' \
	--reverse --per-process --annotate-kernel
# Timebase counts are ts / 100: hash 10+11+18+20, libz 15+19, vfs_read 12+14.
expect_folded folded/weight_timebase \
	'main;[unknown] 16|main;compute 13|main;compute;hash 59|main;libz.so+0x1a2b 34|main;weird:name 22|start_thread;io_loop 17|start_thread;io_loop;read;do_syscall_64;vfs_read 26' \
	--weight timebase
# The importer names the unnamed frames: only their rendering is ours.
expect_folded folded/unnamed_frames 'main;[unknown] 1|main;libz.so+0x1a2b 2' \
	--sql "SELECT s.callsite_id FROM perf_sample s JOIN stack_profile_callsite c ON c.id = s.callsite_id
	       JOIN stack_profile_frame f ON f.id = c.frame_id WHERE f.name IS NULL"

# The example of docs/flamegraph.md is this output.
sed -n '/^\$ pfc_flamegraph flame_samples.pb$/,/^```$/p' "$ROOT/docs/flamegraph.md" |
	sed '1d;$d' >"$tmp/doc.want"
if [ -s "$tmp/doc.want" ] && cmp -s "$tmp/doc.want" "$tmp/folded/all.out"; then
	pass tp_flamegraph/folded/doc_example
else
	fail tp_flamegraph/folded/doc_example "docs/flamegraph.md shows '$(oneline "$tmp/doc.want")'"
fi

# ------------------------------------------------------------- select ----
expect_folded select/tid "$IO" --tid 201
expect_folded select/pid "$CLIENT" --pid 300
expect_folded select/pid_or_pid "$ALL" --pid 300 --pid 200
expect_folded select/pid_and_tid "$IO" --pid 200 --tid 201
expect_folded select/process_name "$CLIENT" --process-name 'cli*'
expect_folded select/thread_name "$IO" --thread-name io
UTID=$("$TP" -Q "SELECT utid FROM thread WHERE tid = 201" "$TRACE" 2>/dev/null | sed 1d)
expect_folded select/utid "$IO" --utid "${UTID:-none}"
# [1000, 1500): samples at 1000 1100 1200 1300 1400.
expect_folded select/window_ns \
	'main;compute 1|main;compute;hash 2|start_thread;io_loop;read;do_syscall_64;vfs_read 2' \
	--start 1000 --end 1500
expect_folded select/window_units 'start_thread;io_loop;read;do_syscall_64;vfs_read 1' \
	--start 1.2us --end 1.3us
# The trace spans [1000, 2200]: +0.3us .. -0.7us is [1300, 1500).
expect_folded select/window_relative \
	'main;compute 1|start_thread;io_loop;read;do_syscall_64;vfs_read 1' \
	--start +0.3us --end -0.7us
expect_folded select/window_and_thread 'start_thread;io_loop;read;do_syscall_64;vfs_read 2' \
	--start 1000 --end 1500 --tid 201
expect_folded select/sql_ids_narrowed "$IO" \
	--sql "SELECT id FROM perf_sample WHERE cpu = 1; -- cpu 1" --thread-name io
expect_folded select/sql_callsites_weight 'main;compute;hash 5|main;weird:name 5' \
	--sql "SELECT callsite_id, 5 AS weight FROM perf_sample WHERE ts >= 2000"

# ---------------------------------------------------------------- svg ----
# FG_MAX_DEPTH: a stack of 4,101 frames keeps its 4,096 innermost ones.
{
	printf 'packet { trusted_packet_sequence_id: 1 sequence_flags: 1 timestamp: 10\n'
	printf '  interned_data { function_names { iid: 1 str: "root" } function_names { iid: 2 str: "f" }\n'
	printf '    frames { iid: 1 function_name_id: 1 } frames { iid: 2 function_name_id: 2 }\n'
	printf '    callstacks { iid: 1 frame_ids: 1'
	seq 1 4100 | sed 's/.*/ frame_ids: 2/' | tr -d '\n'
	printf ' } }\n  perf_sample { pid: 5 tid: 5 callstack_iid: 1 } }\n'
} >"$tmp/deep.textproto"
"$PBTXT" --type Trace encode "$tmp/deep.textproto" >"$tmp/deep.pb"
fg folded/depth_limit "$tmp/deep.pb"
if [ $rc -eq 0 ] && [ "$(tr ';' '\n' <"$tmp/folded/depth_limit.out" | grep -c '^f')" = 4096 ] &&
	! grep -q root "$tmp/folded/depth_limit.out"; then
	pass tp_flamegraph/folded/depth_limit
else
	fail tp_flamegraph/folded/depth_limit "exit $rc: $(head -c 100 "$tmp/folded/depth_limit.out")"
fi

fg svg/write --annotate-kernel -o "$tmp/all.folded" --svg "$tmp/all.svg" "$TRACE"
if [ $rc -ne 0 ]; then
	fail tp_flamegraph/svg/write "exit $rc: $(oneline "$tmp/svg/write.err")"
elif python3 "$CHECK" layout "$tmp/all.svg" "$tmp/all.folded" 1200 >"$tmp/layout.log" 2>&1; then
	pass tp_flamegraph/svg/layout
else
	fail tp_flamegraph/svg/layout "$(oneline "$tmp/layout.log")"
fi
# Narrow: labels are cut ("start_.."), or left out where 3 characters do not fit.
fg svg/narrow --width 300 --svg "$tmp/narrow.svg" "$TRACE"
if python3 "$CHECK" layout "$tmp/narrow.svg" "$tmp/all.folded" 300 >"$tmp/narrow.log" 2>&1 &&
	grep -q '>start_..</text>' "$tmp/narrow.svg"; then
	pass tp_flamegraph/svg/narrow_labels
else
	fail tp_flamegraph/svg/narrow_labels "$(oneline "$tmp/narrow.log")"
fi
fg svg/again --annotate-kernel -o "$tmp/again.folded" --svg "$tmp/again.svg" "$TRACE"
if cmp -s "$tmp/all.svg" "$tmp/again.svg"; then
	pass tp_flamegraph/svg/deterministic
else
	fail tp_flamegraph/svg/deterministic "two runs wrote different SVGs"
fi
fg svg/title --title 'cpu <profile> & "more"' --per-thread --svg "$tmp/title.svg" "$TRACE"
if [ $rc -eq 0 ] && python3 -c '
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
t = r.find("{http://www.w3.org/2000/svg}text[@id=\"title\"]").text
s = r.find("{http://www.w3.org/2000/svg}text[@id=\"subtitle\"]").text
sys.exit(0 if t == "cpu <profile> & \"more\"" and s == "flame_samples.pb: 12 samples" else 1)' \
	"$tmp/title.svg"; then
	pass tp_flamegraph/svg/title
else
	fail tp_flamegraph/svg/title "exit $rc, or the title or subtitle is not as given"
fi
fg svg/from_folded --from-folded "$tmp/all.folded" --svg "$tmp/folded.svg"
if [ $rc -eq 0 ] &&
	python3 "$CHECK" layout "$tmp/folded.svg" "$tmp/all.folded" 1200 >"$tmp/ff.log" 2>&1; then
	pass tp_flamegraph/svg/from_folded
else
	fail tp_flamegraph/svg/from_folded "exit $rc: $(oneline "$tmp/svg/from_folded.err") $(oneline "$tmp/ff.log")"
fi
fg svg/stdout --tid 201 --svg - "$TRACE"
if [ $rc -eq 0 ] && python3 -c 'import sys, xml.etree.ElementTree as ET; ET.parse(sys.argv[1])' \
	"$tmp/svg/stdout.out" 2>/dev/null && grep -q '<title>vfs_read (2 samples, 66.67%)' "$tmp/svg/stdout.out"; then
	pass tp_flamegraph/svg/stdout
else
	fail tp_flamegraph/svg/stdout "exit $rc: $(oneline "$tmp/svg/stdout.err")"
fi
# The trace read from stdin ('-').
if timeout 60 "$FG" --svg - - <"$TRACE" >"$tmp/stdin.svg" 2>"$tmp/stdin.err" &&
	grep -q '>stdin: 12 samples</text>' "$tmp/stdin.svg"; then
	pass tp_flamegraph/svg/stdin_trace
else
	fail tp_flamegraph/svg/stdin_trace "$(oneline "$tmp/stdin.err")"
fi
# Timebase weights: of 187 counts in all, hash has 59.
fg svg/timebase --weight timebase --svg - "$TRACE"
if [ $rc -eq 0 ] && grep -q '<title>hash (59 cpu-clock counts, 31.55%)' "$tmp/svg/timebase.out"; then
	pass tp_flamegraph/svg/timebase_tooltip
else
	fail tp_flamegraph/svg/timebase_tooltip "exit $rc: $(grep -o '<title>hash[^<]*' "$tmp/svg/timebase.out")"
fi

# ------------------------------------------------------------ browser ----
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then
	skip tp_flamegraph/browser "no $CHROMIUM to render the SVG in (make deps-test installs it)"
else
	chrome() {
		timeout 120 "$CHROMIUM" --headless --disable-gpu --no-sandbox --hide-scrollbars \
			--user-data-dir="$tmp/chromium" --force-device-scale-factor=1 \
			--window-size=1200,400 "$@" 2>"$tmp/chromium.err"
	}
	python3 "$CHECK" inject "$tmp/all.svg" "$tmp/probe.svg"
	if chrome --dump-dom "file://$tmp/probe.svg" >"$tmp/dom.html" &&
		python3 "$CHECK" dom "$tmp/dom.html" >"$tmp/dom.log" 2>&1; then
		pass tp_flamegraph/browser/dom
	else
		fail tp_flamegraph/browser/dom "$(oneline "$tmp/dom.log") $(tail -n 1 "$tmp/chromium.err")"
	fi
	if chrome --screenshot="$tmp/shot.png" "file://$tmp/all.svg" >/dev/null &&
		python3 "$CHECK" png "$tmp/shot.png" "$tmp/all.svg" >"$tmp/png.log" 2>&1; then
		pass tp_flamegraph/browser/screenshot
	else
		fail tp_flamegraph/browser/screenshot "$(oneline "$tmp/png.log") $(tail -n 1 "$tmp/chromium.err")"
	fi
fi

# ------------------------------------------------------------- errors ----
printf 'packet { timestamp: 5 process_tree { processes { pid: 1 cmdline: "init" } } }\n' \
	>"$tmp/nosamples.textproto"
"$PBTXT" --type Trace encode "$tmp/nosamples.textproto" >"$tmp/nosamples.pb"
expect_error errors/no_samples "'.*nosamples.pb' has no CPU samples \(no perf_sample rows\)" \
	"$tmp/nosamples.pb"
expect_error errors/missing_file "cannot open trace file '$tmp/missing.pb': No such file or directory" \
	"$tmp/missing.pb"
printf 'hello, not a trace\n' >"$tmp/text.txt"
expect_error errors/not_a_trace "cannot import '$tmp/text.txt'" "$tmp/text.txt"
expect_error errors/no_match \
	'no samples match the selection \(--tid 999\); the trace has 13 samples' \
	--tid 999 --svg "$tmp/none.svg" "$TRACE"
if [ -e "$tmp/none.svg" ]; then
	fail tp_flamegraph/errors/no_match_no_file "an SVG was written for no samples"
else
	pass tp_flamegraph/errors/no_match_no_file
fi
expect_error errors/no_match_and '\(--pid 300 --tid 201\)' --pid 300 --tid 201 "$TRACE"
expect_error errors/no_match_window 'no samples match the selection \(--start \+10s\)' \
	--start +10s "$TRACE"
expect_error errors/only_stackless 'none of the 1 selected samples has a callstack' \
	--start 2100 --end 2200 "$TRACE"
expect_error errors/bad_time "--start '1.5 s' is not a time" --start '1.5 s' "$TRACE"
expect_error errors/bad_pid "--pid 'x1' is not a number" --pid x1 "$TRACE"
expect_error errors/bad_sql '--sql: no such table: nope' --sql 'SELECT id FROM nope' "$TRACE"
expect_error errors/sql_empty '--sql: no statement' --sql ' -- nothing' "$TRACE"
expect_error errors/sql_columns 'neither a callsite_id column nor an id column' \
	--sql 'SELECT 1 AS x' "$TRACE"
expect_error errors/sql_callsites_narrowed 'cannot be narrowed further' \
	--sql 'SELECT callsite_id FROM perf_sample' --tid 201 "$TRACE"
expect_error errors/sql_callsites_no_utid 'need a utid column' \
	--sql 'SELECT callsite_id FROM perf_sample' --per-thread "$TRACE"
# FG_MAX_FILTERS: 64 values of one option (63 + 1), not 65.
pids=$(seq 1 63 | sed 's/^/--pid /' | tr '\n' ' ')
# shellcheck disable=SC2086 # a list of options
expect_folded select/pid_64_values "$CLIENT" $pids --pid 300
# shellcheck disable=SC2086
expect_error errors/pid_65_values 'at most 64 --pid options' $pids --pid 300 --pid 301 "$TRACE"
expect_error errors/no_trace 'no trace file given'
expect_error errors/bad_weight 'weight is samples or timebase' --weight cycles "$TRACE"
printf 'a;b 3\nnot folded\n' >"$tmp/bad.folded"
expect_error errors/bad_folded ':2: not a folded stack' --from-folded "$tmp/bad.folded" \
	--svg "$tmp/bad.svg"
fg errors/help --help
if [ $rc -eq 0 ] && grep -q -- '--process-name GLOB' "$tmp/errors/help.out"; then
	pass tp_flamegraph/errors/help
else
	fail tp_flamegraph/errors/help "exit $rc"
fi

summary

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# gen_man.sh OUT_DIR - the man pages of every installed program, made with
# help2man (Debian's help2man) from the program's own --help, so a page
# never says other than the program does. man/<program>.h2m, where present,
# adds sections (SEE ALSO, FILES, EXAMPLES). Pages go to OUT_DIR/man/.
set -eu
out=$1
ver=$(sed -n 's/^#define PFC_VERSION "\(.*\)"/\1/p' src/base/version.h)
mkdir -p "$out/man"
command -v help2man >/dev/null 2>&1 || {
	echo "gen_man.sh: help2man is not installed (apt-get install help2man)" >&2
	exit 1
}
# program:section:what it is
while IFS=: read -r prog sect what; do
	[ -n "$prog" ] || continue
	# A built program, or a script installed from tools/ (heap_profile).
	bin=$out/$prog
	[ -x "$bin" ] || [ ! -x "tools/$prog" ] || bin=tools/$prog
	if [ ! -x "$bin" ]; then
		echo "gen_man.sh: $out/$prog is not built" >&2
		exit 1
	fi
	inc=""
	[ -f "man/$prog.h2m" ] && inc="--include=man/$prog.h2m"
	# shellcheck disable=SC2086 # inc is one word or none
	help2man --no-info --section="$sect" --name="$what" --version-string="$prog $ver" \
		--source="perfetto-c $ver" $inc --output="$out/man/$prog.$sect.tmp" "$bin"
	mv "$out/man/$prog.$sect.tmp" "$out/man/$prog.$sect"
done <<'LIST'
traced:8:the tracing service: sessions, buffers, producers and consumers
traced_probes:8:the kernel (ftrace) and /proc data sources for traced
traced_relay:8:forwards a machine's producers to another machine's traced
traced_perf:8:the CPU profiling (linux.perf) data source for traced: perf counters and callstack samples
heapprofd:8:the native heap profiling (android.heapprofd) data source for traced
perfetto:1:records a trace with traced (config file or light mode)
trigger_perfetto:1:activates triggers of running tracing sessions
tracebox:1:every perfetto-c program in one binary
trace_processor_shell:1:imports a trace into tables and queries it with SQL
pfc_pbtxt:1:converts trace configs and messages between text format and binary
pfc_trace_summary:1:a quick look at a trace file without the trace processor
pfc_batch_query:1:runs a folder of SQL queries over many traces into one CSV or SQLite file
pfc_flamegraph:1:folds CPU samples of a trace into flame graph stacks and a self-contained SVG
heap_profile:1:a native heap profile of a program in one command (traced, the preload library, pprof and a flame graph)
LIST

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# stdlib_bench.sh - what the PerfettoSQL standard library costs, ours beside
# Perfetto's trace_processor_shell on the same trace, in one run (issue 24's
# speed targets). Prints; never fails a test run.
#
# Each measure runs in a fresh shell per engine (the trace imported anew);
# the figure is the measure's CPU time (user + system: on a shared machine
# the wall time measures other jobs) minus an import-only run's
# (`SELECT 1`), and the peak RSS of the whole process (/usr/bin/time):
#   ui_load    INCLUDE of the modules Perfetto's UI includes on a Linux
#              trace, then a COUNT(*) of each table/view they define (private ones too:
#              the UI reads those), which materialises them
#   crit_path  the critical path of the thread that ran longest
#              (sched.thread_executing_span's _thread_executing_span_critical_path
#              over the whole trace)
#   cpu_proc   linux.cpu.utilization.process: cpu_process_utilization_per_second
#              over the whole trace, summed per process
#   ui_stmts   (with ui_load) the ui_load statements timed by each shell
#              itself at its prompt, summed: no import to subtract
#   ui_queries (with --ui-json FILE: the -j JSON of ui_check.sh run on
#              Perfetto's engine with this trace) every query the UI sent
#              at load, replayed in order over each engine's --httpd
#              (tests/integration/tp_httpd_replay.py), latencies summed
#
#   bench/stdlib_bench.sh [TRACE] [--repeat N] [--only MEASURE]... [--ui-json FILE]
# TRACE: any trace (a 200+ MB storm from `bench/tp_bench.sh --keep` is the
# issue's shape); default ../shared/differential's largest trace.
# Perfetto's binary: UPSTREAM_TP or $SHARED/upstream/bin/trace_processor_shell.

set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
O=${O:-$ROOT/out}
SHARED=${SHARED:-$ROOT/../shared}
OURS=$O/trace_processor_shell
UP=${UPSTREAM_TP:-$SHARED/upstream/bin/trace_processor_shell}
repeat=3
trace=""
only=""
ui_json=""
while [ $# -gt 0 ]; do
	case "$1" in
	--repeat) repeat=$2; shift 2 ;;
	--only) only="$only $2"; shift 2 ;;
	--ui-json) ui_json=$2; shift 2 ;;
	-h | --help) sed -n '3,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) trace=$1; shift ;;
	esac
done
if [ -z "$trace" ]; then
	# shellcheck disable=SC2012 # names are ours, no odd characters
	trace=$(ls -S "$SHARED"/differential/traces/*.pftrace 2>/dev/null | head -1)
fi
if [ -z "$trace" ] || [ ! -f "$trace" ]; then
	echo "stdlib_bench: no trace (give one, or set SHARED); nothing measured"
	exit 0
fi
[ -x "$OURS" ] || { echo "stdlib_bench: no $OURS (build first); nothing measured"; exit 0; }
have_up=1
[ -x "$UP" ] || { have_up=0; echo "stdlib_bench: no Perfetto binary ($UP): ours only"; }

UI_MODULES="viz.summary.slices viz.summary.counters viz.summary.threads
viz.summary.processes viz.summary.track_event viz.summary.trace viz.threads
viz.track_event_callstacks std.traceinfo.trace sched.states
linux.cpu.idle_time_in_state linux.systemd_journald linux.threads
intervals.intersect intervals.overlap time.conversion
std.metasql.unparenthesize android.cpu.cluster_type android.process_metadata
android.user_list"

tmp=$(mktemp -d /tmp/stdlib_bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# The public tables and views the UI's modules define (their names are
# upstream's: the module differential test checks them).
MODDIR=$ROOT/src/trace_processor/sql/modules
for m in $UI_MODULES; do
	echo "INCLUDE PERFETTO MODULE $m;"
done >"$tmp/ui_load.sql"
tables=$(for m in $UI_MODULES; do
	f=$MODDIR/$(echo "$m" | tr . /).sql
	[ -f "$f" ] && sed -nE 's/^CREATE PERFETTO (TABLE|VIEW) ([a-z_][a-z0-9_]*).*/\2/p' "$f"
done | sort -u)
# Private names may differ: count those both engines define (asked of
# each on an empty trace).
: >"$tmp/empty.pftrace"
for t in $tables; do
	m=$(grep -lE "^CREATE PERFETTO (TABLE|VIEW) $t\b" -r "$MODDIR" | head -1)
	m=${m#"$MODDIR"/}
	m=$(echo "${m%.sql}" | tr / .)
	inc="INCLUDE PERFETTO MODULE $m; SELECT COUNT(*) FROM $t"
	"$OURS" -Q "$inc" "$tmp/empty.pftrace" >/dev/null 2>&1 || continue
	if [ $have_up = 1 ]; then "$UP" -Q "$inc" "$tmp/empty.pftrace" >/dev/null 2>&1 || continue; fi
	echo "SELECT COUNT(*) FROM $t;" >>"$tmp/ui_load.sql"
done
tables=$(grep -c '^SELECT' "$tmp/ui_load.sql")

cat >"$tmp/crit_path.sql" <<'EOF'
INCLUDE PERFETTO MODULE sched.thread_executing_span;
SELECT COUNT(*), SUM(dur) FROM _thread_executing_span_critical_path(
  (SELECT utid FROM sched WHERE utid != 0 GROUP BY utid ORDER BY SUM(dur) DESC LIMIT 1),
  trace_start(), trace_dur());
EOF
cat >"$tmp/cpu_proc.sql" <<'EOF'
INCLUDE PERFETTO MODULE linux.cpu.utilization.process;
SELECT COUNT(*), SUM(u) FROM (
  SELECT p.upid, (SELECT SUM(utilization)
                  FROM cpu_process_utilization_per_second(p.upid)) AS u
  FROM process p);
EOF
echo "SELECT 1;" >"$tmp/none.sql"

# run BIN SQLFILE -> "cpu_s rss_kb ok"
run() {
	local bin=$1 sql=$2 rc u s m
	/usr/bin/time -f "%U %S %M" -o "$tmp/rss" "$bin" -q "$sql" "$trace" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	read -r u s m <<<"$(tail -1 "$tmp/rss")"
	echo "$(echo "$u + $s" | bc) $m $rc"
}
# best BIN SQLFILE: the cheapest of $repeat runs (CPU), its RSS, and
# whether every run succeeded.
best() {
	local bin=$1 sql=$2 i w r c bw="" br=0 ok=1
	for i in $(seq "$repeat"); do
		read -r w r c <<<"$(run "$bin" "$sql")"
		[ "$c" = 0 ] || ok=0
		if [ -z "$bw" ] || [ "$(echo "$w < $bw" | bc)" = 1 ]; then bw=$w br=$r; fi
		: "$i"
	done
	echo "$bw $br $ok"
}

size=$(stat -c %s "$trace")
echo "stdlib_bench: $trace ($((size / 1048576)) MB), best of $repeat runs each"
echo "  UI load set: $(echo $UI_MODULES | wc -w) modules, $tables tables/views counted"
read -r ob_w ob_r _ <<<"$(best "$OURS" "$tmp/none.sql")"
if [ $have_up = 1 ]; then read -r ub_w ub_r _ <<<"$(best "$UP" "$tmp/none.sql")"; fi
printf "%-10s | %-22s | %-22s | %s\n" measure "ours CPU s (RSS MB)" "upstream CPU s (RSS MB)" "speed-up"
echo "  (load average $(cut -d" " -f1-3 /proc/loadavg))"
printf "%-10s | %9.2f (%6d)      |" import "$ob_w" $((ob_r / 1024))
if [ $have_up = 1 ]; then
	printf " %9.2f (%6d)      | %.1fx\n" "$ub_w" $((ub_r / 1024)) "$(echo "$ub_w / $ob_w" | bc -l)"
else echo " -"; fi
tot_o=0 tot_u=0
for m in ${only:-ui_load crit_path cpu_proc}; do
	read -r ow or ook <<<"$(best "$OURS" "$tmp/$m.sql")"
	od=$(echo "x=$ow - $ob_w; if (x < 0.001) x=0.001; x" | bc -l)
	[ "$ook" = 1 ] || od=nan
	printf "%-10s | %9s (%6d)      |" "$m" "$(printf %.3f "$od" 2>/dev/null || echo failed)" $((or / 1024))
	if [ "$ook" != 1 ]; then
		printf " (ours failed: %s)" "$(tail -1 "$tmp/err" | cut -c1-60)"
	fi
	if [ $have_up = 1 ]; then
		read -r uw ur uok <<<"$(best "$UP" "$tmp/$m.sql")"
		ud=$(echo "x=$uw - $ub_w; if (x < 0.001) x=0.001; x" | bc -l)
		if [ "$uok" = 1 ] && [ "$ook" = 1 ]; then
			printf " %9.3f (%6d)      | %.1fx\n" "$ud" $((ur / 1024)) "$(echo "$ud / $od" | bc -l)"
			[ "$m" = ui_load ] && { tot_o=$od; tot_u=$ud; }
		else
			printf " %9s (%6d)      | -\n" "$([ "$uok" = 1 ] && printf %.3f "$ud" || echo failed)" $((ur / 1024))
		fi
	else echo " -"; fi
done
# The same statements fed to each shell's prompt, which times each one
# itself ("Query executed in X ms"): the sum is the load set's cost inside
# the process, import left out exactly (wall time, so it also counts waits
# for a loaded CPU; best of the runs).
stmt_ms() {
	local bin=$1 i t b=""
	for i in $(seq "$repeat"); do
		t=$("$bin" "$trace" <"$tmp/ui_load.sql" 2>&1 |
			sed -n 's/.*Query executed in \([0-9.]*\) ms.*/\1/p' | awk '{s += $1} END {printf "%.1f", s}')
		if [ -z "$b" ] || [ "$(echo "$t < $b" | bc)" = 1 ]; then b=$t; fi
		: "$i"
	done
	echo "$b"
}
case " ${only:-ui_load} " in *" ui_load "*)
	so=$(stmt_ms "$OURS")
	printf "%-10s | %9s ms               |" ui_stmts "$so"
	if [ $have_up = 1 ]; then
		su=$(stmt_ms "$UP")
		printf " %9s ms               | %.1fx\n" "$su" "$(echo "$su / $so" | bc -l)"
	else echo " -"; fi ;;
esac
# replay_ms BIN PORT: the UI's queries replayed on BIN --httpd (one run).
replay_ms() {
	local bin=$1 port=$2 pid i
	"$bin" --httpd --http-port "$port" "$trace" >"$tmp/httpd_$port.log" 2>&1 &
	pid=$!
	for i in $(seq 1200); do
		curl -s -X POST "http://127.0.0.1:$port/status" -o /dev/null && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.5
	done
	python3 "$ROOT/tests/integration/tp_httpd_replay.py" "$port" "$ui_json" \
		--times "$tmp/times_$port" >"$tmp/replay_$port.log" 2>&1
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	awk '{s += $1} END {printf "%.0f", s}' "$tmp/times_$port" 2>/dev/null
}
if [ -n "$ui_json" ] && [ -f "$ui_json" ] && command -v curl >/dev/null 2>&1; then
	qo=$(replay_ms "$OURS" 9417)
	printf "%-10s | %9s ms               |" ui_queries "${qo:-?}"
	if [ $have_up = 1 ]; then
		qu=$(replay_ms "$UP" 9418)
		printf " %9s ms               | %sx\n" "${qu:-?}" \
			"$(echo "${qu:-0} / ${qo:-1}" | bc -l | cut -c1-4)"
	else echo " -"; fi
	echo "  ($(tail -1 "$tmp/replay_9417.log"); slowest of ours: $(sort -rn "$tmp/times_9417" | head -3 | tr '\n' ' ')ms)"
fi
# The target is judged on ui_stmts when it was measured: the CPU beyond
# the import (ui_load) is the difference of two noisy figures, and ours
# can fall within the noise (then printed as 0.001).
if [ $have_up = 1 ] && [ -n "${so:-}" ] && [ -n "${su:-}" ]; then
	echo "target: UI load set >= 3x faster than upstream (ui_stmts): $(echo "$su / $so" | bc -l | cut -c1-4)x"
elif [ $have_up = 1 ] && [ "$tot_o" != 0 ]; then
	echo "target: ui_load >= 3x faster than upstream: $(echo "$tot_u / $tot_o" | bc -l | cut -c1-4)x"
fi
exit 0

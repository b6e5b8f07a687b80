#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# tp_bench.sh - what importing and querying a big real recording costs,
# beside upstream Perfetto's trace_processor_shell in the same run.
#
# Records a context-switch storm: two ping-pong process pairs
# (out/bench/pingpong, one pinned to each of the first two CPUs) for S
# seconds (default 20: about 250 MB), sched_switch, sched_waking and
# sched_wakeup without compact_sched into a 1 GB buffer (issue 27's shape).
# It records with upstream's tracebox when one is there (UPSTREAM_TRACEBOX,
# else ../shared/upstream/bin/tracebox), else with ours, on private sockets.
# The trace is kept in /tmp (/tmp/tp_bench_storm.<recorder>.<S>s.pftrace)
# and reused by the next run (--record records it again).
#
# Then: the import alone, ours and upstream's (UPSTREAM_TP, else
# ../shared/upstream/bin/trace_processor_shell) alternately, N runs each
# (--imports N, default 3): the median import time (--perf-file, measured
# inside the shell), MB/s, the CPU seconds of the run (user + system: on a
# busy shared machine the wall time mostly measures the other jobs) and the
# peak RSS (/usr/bin/time) as a multiple of the file. Then the four seed queries, each in its own run of ours (the
# import figure of the table below is the median of all of ours), the peak
# RSS with and without ftrace_event rows, and each query once with the
# native GROUP BY path off (PFC_TP_NO_FAST_AGG=1: SQLite reading our
# virtual tables row by row) to show what that path buys.
#
#   bench/tp_bench.sh [--seconds S] [--trace FILE] [--record] [--imports N]
#                     [--no-queries] [--smoke]
#     --seconds S   recording length (default 20)
#     --trace FILE  skip recording; use FILE (any Perfetto trace)
#     --record      record again even if the kept trace is there
#     --imports N   import runs of each trace processor (default 3)
#     --no-queries  the import comparison only
#     --smoke       3 s recording (not kept), one run each; < 30 s
#   O=out/asan bench/tp_bench.sh   use another build directory
#
# Recording needs root and tracefs (it is skipped with a reason otherwise,
# unless --trace is given or the kept trace is there); it takes
# tools/tracefs_lock.sh.

set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
O=${O:-$ROOT/out}
TP=$O/trace_processor_shell

# Upstream's seed query latencies on a 475 MB / 10 M event storm here (the
# first issue's figures; target: every query >= 3x faster).
declare -A REF_Q=([q1]=0.39 [q2]=6.6 [q3]=3.1 [q4]=0.26)
declare -A SQL=(
	[q1]="SELECT utid, SUM(dur) AS total_running FROM sched GROUP BY utid ORDER BY total_running DESC LIMIT 10"
	[q2]="SELECT t.utid, t.tid, t.name AS thread, p.pid, p.name AS process, SUM(s.dur) AS running FROM sched s JOIN thread t USING (utid) LEFT JOIN process p USING (upid) GROUP BY t.utid ORDER BY running DESC LIMIT 10"
	[q3]="SELECT utid, state, COUNT(*), SUM(dur) FROM thread_state GROUP BY utid, state ORDER BY 4 DESC LIMIT 20"
	[q4]="SELECT p.upid, p.pid, p.name, SUM(s.dur) / 1e9 AS running_s FROM sched s JOIN thread t USING (utid) JOIN process p USING (upid) GROUP BY p.upid ORDER BY running_s DESC LIMIT 10"
)

seconds=20
trace=""
record=0
imports=3
queries=1
smoke=0
while [ $# -gt 0 ]; do
	case "$1" in
	--seconds) seconds=$2; shift 2 ;;
	--trace) trace=$2; shift 2 ;;
	--record) record=1; shift ;;
	--imports) imports=$2; shift 2 ;;
	--no-queries) queries=0; shift ;;
	--keep) shift ;; # the recorded trace is always kept now
	--smoke) smoke=1; seconds=3; imports=1; shift ;;
	*) echo "usage: $0 [--seconds S] [--trace FILE] [--record] [--imports N] [--no-queries] [--smoke]" >&2
	   exit 2 ;;
	esac
done

[ -x "$TP" ] || { echo "tp_bench: build first (make): no $TP" >&2; exit 1; }
SHARED=$ROOT/../shared
UP_TB=${UPSTREAM_TRACEBOX:-}
if [ -z "$UP_TB" ] && "$SHARED/upstream/bin/tracebox" --version >/dev/null 2>&1; then
	UP_TB=$SHARED/upstream/bin/tracebox
fi
UP_TP=${UPSTREAM_TP:-}
if [ -z "$UP_TP" ] && "$SHARED/upstream/bin/trace_processor_shell" --version >/dev/null 2>&1; then
	UP_TP=$SHARED/upstream/bin/trace_processor_shell
fi
dir=$(mktemp -d /tmp/tp_bench.XXXXXX)
storm_pids=""
cleanup() {
	for p in $storm_pids; do kill "$p" 2>/dev/null; done
	rm -rf "$dir"
}
trap cleanup EXIT

if [ -n "$UP_TB" ]; then recorder=upstream; TB=$UP_TB; else recorder=ours; TB=$O/tracebox; fi
if [ -z "$trace" ]; then
	trace=/tmp/tp_bench_storm.$recorder.${seconds}s.pftrace
	[ "$smoke" = 1 ] && trace=$dir/storm.pftrace
fi
if [ ! -s "$trace" ] || [ "$record" = 1 ] || [ "$smoke" = 1 ]; then
	tfs=/sys/kernel/tracing
	if [ "$(id -u)" != 0 ]; then
		echo "tp_bench: skipped: recording needs root (or pass --trace FILE)"
		echo "0 passed, 0 failed, 1 skipped"
		exit 0
	fi
	. "$(dirname "$0")/../tools/tracefs_lock.sh"
	tracefs_lock
	[ -e "$tfs/trace_clock" ] || mount -t tracefs nodev "$tfs" 2>/dev/null
	if [ ! -e "$tfs/trace_clock" ]; then
		echo "tp_bench: skipped: no tracefs (or pass --trace FILE)"
		echo "0 passed, 0 failed, 1 skipped"
		exit 0
	fi
	[ -x "$O/bench/pingpong" ] || { echo "tp_bench: build first (make): no $O/bench/pingpong" >&2; exit 1; }
	cat >"$dir/cfg.pbtxt" <<EOF
buffers { size_kb: 1048576 fill_policy: DISCARD }
data_sources { config { name: "linux.ftrace" target_buffer: 0 ftrace_config {
  ftrace_events: "sched/sched_switch" ftrace_events: "sched/sched_waking"
  ftrace_events: "sched/sched_wakeup"
  buffer_size_kb: 8192 compact_sched { enabled: false } } } }
duration_ms: $((seconds * 1000))
EOF
	echo "tp_bench: recording a ${seconds} s context-switch storm with $recorder's tracebox (no compact_sched)"
	# Private sockets: no tracing service of another test is involved.
	export PERFETTO_PRODUCER_SOCK_NAME=@tp-bench-p-$$ PERFETTO_CONSUMER_SOCK_NAME=@tp-bench-c-$$
	ncpu=$(nproc)
	for c in 0 1; do
		"$O/bench/pingpong" --seconds $((seconds + 3)) --cpu $((c % ncpu)) >/dev/null 2>&1 &
		storm_pids="$storm_pids $!"
	done
	rm -f "$trace"
	if ! "$TB" --txt -c "$dir/cfg.pbtxt" -o "$trace" >"$dir/record.log" 2>&1; then
		echo "tp_bench: recording failed:" >&2
		tail -n 5 "$dir/record.log" >&2
		rm -f "$trace"
		exit 1
	fi
	for p in $storm_pids; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	storm_pids=""
	[ "$smoke" = 1 ] || echo "tp_bench: kept $trace (reused by the next run; --record to record again)"
fi

bytes=$(stat -c %s "$trace")
mb=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }')
median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
span() { tr ' ' '\n' | grep . | sort -n | awk -v d="$1" 'NR == 1 { lo = $1 } { hi = $1 }
	END { printf "%.2f-%.2f", lo / d, hi / d }'; }

# One import of @1 (a trace_processor_shell) running query @2, extra flags
# after; prints "load_ns query_ns rss_kb cpu_s" (cpu_s: user + system CPU
# of the whole run, the figure a busy shared machine disturbs least).
# Both shells write "load,query" in ns to --perf-file.
run_tp() {
	local tp=$1 sql=$2
	shift 2
	/usr/bin/time -f "%M %U %S" -o "$dir/rss" "$tp" "$@" -p "$dir/perf" -Q "$sql" "$trace" \
		>"$dir/out" 2>"$dir/err" ||
		{ echo "tp_bench: $tp failed: $(head -n 3 "$dir/err")" >&2; exit 1; }
	echo "$(tr ',' ' ' <"$dir/perf") $(tail -n 1 "$dir/rss" | awk '{ printf "%d %.2f", $1, $2 + $3 }')"
}
run() { run_tp "$TP" "$@"; }

# The import alone, ours and upstream's in turn.
ours_loads="" ours_rss="" ours_cpu="" up_loads="" up_rss="" up_cpu=""
for _ in $(seq "$imports"); do
	set -- $(run "SELECT 1")
	ours_loads="$ours_loads $1" ours_rss="$ours_rss $3" ours_cpu="$ours_cpu $4"
	if [ -n "$UP_TP" ]; then
		set -- $(run_tp "$UP_TP" "SELECT 1")
		up_loads="$up_loads $1" up_rss="$up_rss $3" up_cpu="$up_cpu $4"
	fi
done
o_cpu=$(echo $ours_cpu | median)
o_ns=$(echo $ours_loads | median)
o_mbs=$(awk -v b="$bytes" -v n="$o_ns" 'BEGIN { printf "%.0f", b / 1e6 / (n / 1e9) }')
o_rss_x=$(awk -v r="$(echo $ours_rss | median)" -v b="$bytes" 'BEGIN { printf "%.2f", r * 1024 / b }')
n_sched=$("$TP" -Q "SELECT COUNT(*) FROM sched" "$trace" | tail -n 1)
n_raw=$("$TP" -Q "SELECT COUNT(*) FROM ftrace_event" "$trace" | tail -n 1)

echo
echo "trace: $trace"
echo "  $mb MB, $n_sched sched slices, $n_raw ftrace events (recorded by $recorder's tracebox)"
printf "%-16s | %-28s | %-28s | %s\n" "import" "perfetto-c" "upstream (same run)" "ratio"
printf -- "-----------------+------------------------------+------------------------------+------\n"
if [ -n "$UP_TP" ]; then
	u_ns=$(echo $up_loads | median)
	u_mbs=$(awk -v b="$bytes" -v n="$u_ns" 'BEGIN { printf "%.0f", b / 1e6 / (n / 1e9) }')
	u_rss_x=$(awk -v r="$(echo $up_rss | median)" -v b="$bytes" 'BEGIN { printf "%.2f", r * 1024 / b }')
	printf "%-16s | %-28s | %-28s | %.1fx faster\n" "time (median)" \
		"$(awk -v n="$o_ns" 'BEGIN { printf "%.2f", n / 1e9 }') s ($(echo $ours_loads | span 1e9) s)" \
		"$(awk -v n="$u_ns" 'BEGIN { printf "%.2f", n / 1e9 }') s ($(echo $up_loads | span 1e9) s)" \
		"$(awk -v a="$o_ns" -v b="$u_ns" 'BEGIN { print b / a }')"
	printf "%-16s | %-28s | %-28s |\n" "MB/s" "$o_mbs" "$u_mbs"
	u_cpu=$(echo $up_cpu | median)
	printf "%-16s | %-28s | %-28s | %.1fx less\n" "CPU s (median)" \
		"$o_cpu s ($(echo $ours_cpu | span 1) s)" "$u_cpu s ($(echo $up_cpu | span 1) s)" \
		"$(awk -v a="$o_cpu" -v b="$u_cpu" 'BEGIN { print (a > 0 ? b / a : 0) }')"
	printf "%-16s | %-28s | %-28s | %.1fx less\n" "peak RSS / file" "${o_rss_x}x" "${u_rss_x}x" \
		"$(awk -v a="$o_rss_x" -v b="$u_rss_x" 'BEGIN { print b / a }')"
else
	printf "%-16s | %-28s | %-28s |\n" "time (median)" \
		"$(awk -v n="$o_ns" 'BEGIN { printf "%.2f", n / 1e9 }') s ($(echo $ours_loads | span 1e9) s)" \
		"(no upstream binary)" 
	printf "%-16s | %-28s | %-28s |\n" "MB/s" "$o_mbs" ""
	printf "%-16s | %-28s | %-28s |\n" "CPU s (median)" "$o_cpu s ($(echo $ours_cpu | span 1) s)" ""
	printf "%-16s | %-28s | %-28s |\n" "peak RSS / file" "${o_rss_x}x" ""
fi
echo "  ($imports import(s) each; the median RSS; load average now: $(cut -d' ' -f1 /proc/loadavg) on $(nproc) CPUs)"
echo
verdict() { if awk "BEGIN { exit !($1) }"; then echo "met   ($2)"; else echo "MISSED ($2)"; fi; }
echo "target import >= 250 MB/s:        $(verdict "$o_mbs >= 250" "$o_mbs MB/s")"
echo "target peak RSS <= 1.0x the file: $(verdict "$o_rss_x <= 1.0" "${o_rss_x}x")"

if [ "$queries" = 0 ]; then
	echo "1 passed, 0 failed"
	exit 0
fi

# The same import without ftrace_event rows (Perfetto's --no-ftrace-raw).
set -- $(run "SELECT 1" --no-ftrace-raw)
rss_noraw_x=$(awk -v r="$3" -v b="$bytes" 'BEGIN { printf "%.2f", r * 1024 / b }')

# The queries: best of 3 with the native GROUP BY path, one run without.
declare -A Q_S SLOW
for q in q1 q2 q3 q4; do
	best=""
	tries=3
	[ "$smoke" = 1 ] && tries=1
	for _ in $(seq $tries); do
		set -- $(run "${SQL[$q]}")
		s=$(awk -v n="$2" 'BEGIN { printf "%.4f", n / 1e9 }')
		if [ -z "$best" ] || awk -v a="$s" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$s; fi
	done
	Q_S[$q]=$best
	set -- $(PFC_TP_NO_FAST_AGG=1 run "${SQL[$q]}")
	SLOW[$q]=$(awk -v n="$2" 'BEGIN { printf "%.4f", n / 1e9 }')
done

echo
echo "RSS with --no-ftrace-raw: ${rss_noraw_x}x the file"
printf "%-10s | %12s | %-40s | %s\n" "query" "perfetto-c" "upstream (issue's figures, 475 MB trace)" "ratio"
printf -- "-----------+--------------+------------------------------------------+------\n"
for q in q1 q2 q3 q4; do
	printf "%-10s | %10s s | %-40s | %.0fx faster (SQLite alone: %s s)\n" "$q" "${Q_S[$q]}" \
		"${REF_Q[$q]} s" \
		"$(awk -v a="${Q_S[$q]}" -v b="${REF_Q[$q]}" 'BEGIN { print (a > 0 ? b / a : 0) }')" \
		"${SLOW[$q]}"
done
for q in q1 q2 q3 q4; do
	echo "target $q >= 3x faster than upstream: $(verdict "${Q_S[$q]} * 3 <= ${REF_Q[$q]}" "${Q_S[$q]} s")"
done
echo "(queries on a ${mb} MB trace; the upstream figures are for 475 MB)"
echo "1 passed, 0 failed"

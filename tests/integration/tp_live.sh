#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_live.sh - the seed analyses of trace_processor_shell on a real
# recording of this machine (root and tracefs needed; skipped with the
# reason otherwise). `tracebox -t 3s sched freq idle` records while a known
# thread (out/sleeper, named pfc_tp_live) sleeps and wakes and a writer
# does synchronous I/O; then:
#   top_threads      the top threads by running time are there, and more
#                    than one thread ran;
#   cpu_within_trace the sum of sched.dur of every CPU fits in the trace;
#   glob_join        running time of threads matching a GLOB, joined to
#                    thread and process, finds the sleeper with its pid;
#   d_state          D-state counts per thread answer (states are valid);
#   per_process      running seconds per process sum to the sched total;
#   native_same      every one of these answers the same with the native
#                    GROUP BY path off (PFC_TP_NO_FAST_AGG=1).
# Usage: OUT=out sh tests/integration/tp_live.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tp_lib.sh"

tp_setup tp_live
require_tracefs tp_live
for b in tracebox sleeper; do
	if [ ! -x "$OUT/$b" ]; then
		fail tp_live/binaries "$OUT/$b not built"
		summary
		exit 1
	fi
done
export PFC_FTRACE_STATE_FILE="$tmp/ftrace-state"
unset PERFETTO_PRODUCER_SOCK_NAME PERFETTO_CONSUMER_SOCK_NAME

TRACE="$tmp/live.pftrace"
timeout -k 3 60 "$OUT/tracebox" -o "$TRACE" -t 3s sched freq idle >"$tmp/rec.out" 2>"$tmp/rec.err" &
rec=$!
sleep 1
"$OUT/sleeper" 200 pfc_tp_live 2000 >"$tmp/sleeper.pid" 2>"$tmp/sleeper.err"
SPID=$(head -n 1 "$tmp/sleeper.pid")
dd if=/dev/zero of="$tmp/io" bs=64k count=64 oflag=dsync 2>/dev/null
if ! wait $rec || [ ! -s "$TRACE" ]; then
	fail tp_live/record "tracebox failed: $(tail -n 3 "$tmp/rec.err" | tr '\n' ' ')"
	summary
	exit 1
fi

# query NAME SQL: CSV into $tmp/NAME.csv, and the same with the native path
# off into $tmp/NAME.slow; rc is 0 if both ran.
query() {
	"$TP" -Q "$2" "$TRACE" >"$tmp/$1.csv" 2>"$tmp/$1.err" &&
		PFC_TP_NO_FAST_AGG=1 "$TP" -Q "$2" "$TRACE" >"$tmp/$1.slow" 2>>"$tmp/$1.err"
}
rows() { # data rows of a CSV
	tail -n +2 "$1" | grep -c .
}
same=""

query top "SELECT utid, SUM(dur) FROM sched GROUP BY utid ORDER BY 2 DESC LIMIT 10"
if [ $? -ne 0 ]; then
	fail tp_live/top_threads "$(head -n 2 "$tmp/top.err")"
elif [ "$(rows "$tmp/top.csv")" -lt 2 ]; then
	fail tp_live/top_threads "fewer than 2 threads ran: $(tr '\n' ' ' <"$tmp/top.csv")"
else
	pass tp_live/top_threads
fi
same="$same top"

query cpus "SELECT cpu, SUM(dur) AS busy, (SELECT end_ts - start_ts FROM trace_bounds) AS span
	FROM sched GROUP BY cpu"
over=$(tail -n +2 "$tmp/cpus.csv" | awk -F, '$2 > $3 { print }')
if [ $? -ne 0 ] || [ "$(rows "$tmp/cpus.csv")" -lt 1 ]; then
	fail tp_live/cpu_within_trace "no per-CPU sums: $(head -n 2 "$tmp/cpus.err")"
elif [ -n "$over" ]; then
	fail tp_live/cpu_within_trace "a CPU ran longer than the trace: $over"
else
	pass tp_live/cpu_within_trace
fi

query glob "SELECT t.tid, t.name, p.pid, SUM(s.dur) AS running FROM sched s
	JOIN thread t USING (utid) LEFT JOIN process p USING (upid)
	WHERE t.name GLOB 'pfc_tp_l*' GROUP BY t.utid ORDER BY running DESC"
if [ $? -ne 0 ]; then
	fail tp_live/glob_join "$(head -n 2 "$tmp/glob.err")"
elif ! grep -q "^$SPID,\"pfc_tp_live\",$SPID," "$tmp/glob.csv"; then
	fail tp_live/glob_join "no row for the sleeper (pid $SPID): $(tr '\n' ' ' <"$tmp/glob.csv")"
else
	pass tp_live/glob_join
fi
same="$same glob"

query dstate "SELECT utid, COUNT(*) AS n, SUM(dur) AS d FROM thread_state WHERE state = 'D'
	GROUP BY utid ORDER BY n DESC, utid"
query states "SELECT state, COUNT(*) FROM thread_state GROUP BY state ORDER BY state"
bad=$(tail -n +2 "$tmp/states.csv" | cut -d, -f1 | tr -d '"' |
	grep -v -x -E 'Running|\[NULL\]|[RSDTtXZxKWPNI+|]+')
if [ ! -s "$tmp/dstate.csv" ] || [ "$(rows "$tmp/states.csv")" -lt 2 ]; then
	fail tp_live/d_state "$(head -n 2 "$tmp/dstate.err" "$tmp/states.err")"
elif [ -n "$bad" ]; then
	fail tp_live/d_state "odd states: $bad"
else
	pass tp_live/d_state
fi
same="$same dstate states"

query proc "SELECT p.upid, p.pid, p.name, SUM(s.dur) / 1e9 AS running_s FROM sched s
	JOIN thread t USING (utid) JOIN process p USING (upid) GROUP BY p.upid
	ORDER BY running_s DESC"
query total "SELECT SUM(s.dur) / 1e9 FROM sched s JOIN thread t USING (utid)
	JOIN process p USING (upid)"
sum=$(tail -n +2 "$tmp/proc.csv" | awk -F, '{ s += $NF } END { printf "%.3f", s }')
total=$(tail -n 1 "$tmp/total.csv" | awk '{ printf "%.3f", $1 }')
if [ "$(rows "$tmp/proc.csv")" -lt 1 ]; then
	fail tp_live/per_process "no processes: $(head -n 2 "$tmp/proc.err")"
elif awk -v a="$sum" -v b="$total" 'BEGIN { d = a - b; exit !(d > 0.002 || d < -0.002) }'; then
	fail tp_live/per_process "per-process sum $sum s != total $total s"
else
	pass tp_live/per_process
fi
same="$same proc total"

diffs=""
for n in $same; do
	cmp -s "$tmp/$n.csv" "$tmp/$n.slow" || diffs="$diffs $n"
done
if [ -n "$diffs" ]; then
	fail tp_live/native_same "native and SQLite answers differ for:$diffs"
else
	pass tp_live/native_same
fi

summary

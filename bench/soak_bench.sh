#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# soak_bench.sh - do traced, traced_probes and the recording perfetto stay
# flat over a long recording? By default the always-on recorder runs as
# perfetto-recorder.service runs it: init/etc/recorder.pbtxt (sched, task,
# power, block ftrace events with compact_sched and ksyms, process_stats
# polled every 10 s, system_info; its buffers made small, see below) with
# --rotate-seconds 60 --keep 30. With
# --file instead, a 256 KiB RING_BUFFER written with write_into_file every
# 2 s (sched events, process_stats and sys_stats every second). The RSS
# (VmRSS and RssAnon of /proc/PID/status) and CPU time (utime + stime of
# /proc/PID/stat) of the three processes are sampled; the script prints one
# table row per sample and, over the samples after the warm-up, the growth
# per hour (least-squares slope) of both RSS figures and each one's CPU
# share of one core. Targets: < 1 MiB/hour of RSS growth, < 1% of a core on
# an idle machine. With rotation it then checks the files: each kept file
# imports, and per CPU the step from one file's last sched event to the
# next file's first is compared with the largest step inside the files
# (rotation must not add a gap). VmRSS also counts the shared memory
# buffer (2 MiB for traced_probes, mapped by both daemons), whose pages are
# touched for the first time only as the producer gets round to them: at a
# few KB/s that takes minutes, so RssAnon (heap and trace buffer) is the
# figure that shows leaks. The figures are reported, not judged: the exit
# status is non-zero only if a process dies or a kept file does not import.
#
#   bench/soak_bench.sh [--minutes N] [--interval S] [--rotate S] [--file]
#                       [--keep] [--smoke]
#     --minutes N   recording length (default 60); warm-up: the first minute
#                   (--warmup S to change it)
#     --interval S  seconds between samples (default 10)
#     --rotate S    seconds per file (default 60, the recorder's)
#     --file        the write_into_file session instead of rotation
#     --keep        keep the trace and logs (the directory is printed)
#     --smoke       60 s, a sample every 5 s, 30 s warm-up, 10 s files (CI:
#                   too short for the growth figure to mean much; it checks
#                   the bench works and nothing crashes)
#   OUT=out/asan bench/soak_bench.sh   another build directory
#
# Without root or tracefs the ftrace data source is left out (said so).

TOP=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-out}
# svc_lib.sh would resolve a relative OUT against tests/integration/../..
case $OUT in /*) ;; *) OUT=$TOP/$OUT ;; esac
export OUT
minutes=60
interval=10
warmup=60
smoke=0
keep=0
rotate=60
mode=rotate
while [ $# -gt 0 ]; do
	case "$1" in
	--minutes) minutes=$2; shift 2 ;;
	--interval) interval=$2; shift 2 ;;
	--warmup) warmup=$2; shift 2 ;;
	--rotate) rotate=$2; shift 2 ;;
	--file) mode=file; shift ;;
	--keep) keep=1; shift ;;
	--smoke) smoke=1; shift ;;
	*) echo "usage: $0 [--minutes N] [--interval S] [--warmup S] [--rotate S] [--file] [--keep] [--smoke]" >&2; exit 2 ;;
	esac
done
seconds=$((minutes * 60))
if [ $smoke = 1 ]; then
	seconds=60
	interval=5
	warmup=30
	rotate=10
fi
[ $keep = 1 ] && export SVC_KEEP_TMP=1

. "$TOP/tests/integration/lib.sh"
. "$TOP/tests/integration/svc_lib.sh"
svc_require_bins traced traced_probes perfetto trace_processor_shell

have_ftrace=0
if [ "$(id -u)" = 0 ] && [ -w /sys/kernel/tracing/tracing_on ]; then
	have_ftrace=1
	tracefs_lock
else
	echo "# soak_bench: no root or no tracefs: recording process_stats and sys_stats only"
fi

svc_start_traced traced || { echo "soak_bench: traced did not start"; exit 1; }
svc_bg probes env TRACED_PROBES_NOTIFY_FD=9 "$OUT/traced_probes"
if ! svc_wait_for 10 _svc_ready_or_exited probes || ! _svc_is_ready probes; then
	echo "soak_bench: traced_probes did not start: $(svc_errtail probes)"
	exit 1
fi

if [ $mode = rotate ]; then
	# The recorder's own config; without ftrace, its other data sources.
	if [ $have_ftrace = 1 ]; then
		cp "$TOP/init/etc/recorder.pbtxt" "$SVC_TMP/soak.pbtxt"
	else
		awk '/name: "linux.ftrace"/ { skip = 1 } !skip { print } skip && /^} } }/ { skip = 0 }' \
			"$TOP/init/etc/recorder.pbtxt" >"$SVC_TMP/soak.pbtxt"
	fi
	# Its buffers (32 + 4 MiB) shrunk to 2 MiB + 128 KiB: a ring's pages are
	# first touched as its write position first goes round, which at an
	# idle machine's ~10 KB/s takes about an hour for 32 MiB: memory the
	# session was given, not a leak, and it would hide one. Small rings
	# wrap within the warm-up.
	sed -i 's/size_kb: 32768/size_kb: 2048/; s/size_kb: 4096/size_kb: 128/' "$SVC_TMP/soak.pbtxt"
	echo "duration_ms: $(((seconds + 30) * 1000))" >>"$SVC_TMP/soak.pbtxt"
	mkdir -p "$SVC_TMP/rot"
	svc_bg rec "$OUT/perfetto" --txt -c "$SVC_TMP/soak.pbtxt" -o "$SVC_TMP/rot/trace" \
		--rotate-seconds "$rotate" --keep 30
else
	ftrace_ds=""
	[ $have_ftrace = 1 ] && ftrace_ds='data_sources { config { name: "linux.ftrace" ftrace_config {
  ftrace_events: "sched/sched_switch" ftrace_events: "sched/sched_waking"
  ftrace_events: "sched/sched_process_exit" ftrace_events: "sched/sched_process_free"
  ftrace_events: "task/task_newtask" ftrace_events: "task/task_rename"
  buffer_size_kb: 2048 drain_period_ms: 250 } } }'
	svc_cfg soak "buffers { size_kb: 256 fill_policy: RING_BUFFER }
$ftrace_ds
data_sources { config { name: \"linux.process_stats\" process_stats_config {
  scan_all_processes_on_start: true proc_stats_poll_ms: 1000 } } }
data_sources { config { name: \"linux.sys_stats\" sys_stats_config {
  meminfo_period_ms: 1000 vmstat_period_ms: 1000 stat_period_ms: 1000
  stat_counters: STAT_CPU_TIMES stat_counters: STAT_FORK_COUNT } } }
write_into_file: true
file_write_period_ms: 2000
flush_period_ms: 10000
duration_ms: $(((seconds + 30) * 1000))"
	svc_bg rec "$OUT/perfetto" --txt -c "$SVC_TMP/soak.pbtxt" -o "$SVC_TMP/soak.pftrace"
fi
TPID=$(svc_pid traced)
PPID_=$(svc_pid probes)
RPID=$(svc_pid rec)
HZ=$(getconf CLK_TCK)

# VmRSS KIB, RssAnon KIB and cpu TICKS of PID ("- - -" once it is gone).
sample() {
	local _r _a _c
	_r=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$1/status" 2>/dev/null)
	_a=$(sed -n 's/^RssAnon:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$1/status" 2>/dev/null)
	# utime and stime: fields 14 and 15, 12th and 13th after the ") " that
	# ends the command name.
	_c=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $12 + $13 }')
	echo "${_r:--} ${_a:--} ${_c:--}"
}

echo "# soak_bench: $seconds s, a sample every $interval s, warm-up $warmup s; traced $TPID, traced_probes $PPID_, perfetto $RPID ($([ $mode = rotate ] && echo "recorder config, --rotate-seconds $rotate --keep 30" || echo "write_into_file"))"
printf '%6s %10s %10s %8s %10s %10s %8s %9s %10s %8s\n' t_s traced_rss traced_anon cpu_s probes_rss probes_anon cpu_s file_kib perf_anon cpu_s
t0=$(svc_now_ms)
: >"$SVC_TMP/samples"
crashed=""
while :; do
	now=$(svc_now_ms)
	t=$(((now - t0) / 1000))
	set -- $(sample "$TPID") $(sample "$PPID_") $(sample "$RPID")
	if [ $mode = rotate ]; then
		fk=$(du -sk "$SVC_TMP/rot" | cut -f1)
	else
		fk=$(($(svc_file_size "$SVC_TMP/soak.pftrace") / 1024))
	fi
	echo "$t $1 $2 $3 $4 $5 $6 $fk $7 $8 $9" >>"$SVC_TMP/samples"
	awk -v hz="$HZ" '{ printf "%6d %10s %10s %8.2f %10s %10s %8.2f %9d %10s %8.2f\n", $1, $2, $3, $4 / hz, $5, $6, $7 / hz, $8, $10, $11 / hz }' \
		"$SVC_TMP/samples" | tail -n 1
	svc_running traced || crashed="$crashed traced"
	svc_running probes || crashed="$crashed traced_probes"
	svc_running rec || crashed="$crashed perfetto"
	[ -n "$crashed" ] && break
	[ "$t" -ge "$seconds" ] && break
	sleep "$interval"
done

# Slopes (KiB per hour) of the RSS figures over the samples after the
# warm-up, and the CPU share over the same span.
awk -v w="$warmup" -v hz="$HZ" '
function slope(k) { return (n * sxy[k] - sx * sy[k]) / (n * sxx - sx * sx) * 3600 }
$1 >= w && $2 != "-" && $5 != "-" && $9 != "-" {
	n++; x = $1; sx += x; sxx += x * x
	for (k = 2; k <= 11; k++) { sy[k] += $k; sxy[k] += x * $k; if (n == 1) v0[k] = $k; v1[k] = $k }
	if (n == 1) x0 = x
	x1 = x
}
END {
	if (n < 2 || x1 == x0) { print "# soak_bench: too few samples after the warm-up"; exit }
	span = x1 - x0
	printf "# after %d s of warm-up, over %d s (%d samples); targets: growth < 1024 KiB/hour, CPU < 1%% of a core\n", w, span, n
	printf "#   traced:        VmRSS %d -> %d KiB (%+.0f KiB/hour), RssAnon %d -> %d KiB (%+.0f KiB/hour), CPU %.3f%% of a core\n", v0[2], v1[2], slope(2), v0[3], v1[3], slope(3), (v1[4] - v0[4]) / hz / span * 100
	printf "#   traced_probes: VmRSS %d -> %d KiB (%+.0f KiB/hour), RssAnon %d -> %d KiB (%+.0f KiB/hour), CPU %.3f%% of a core\n", v0[5], v1[5], slope(5), v0[6], v1[6], slope(6), (v1[7] - v0[7]) / hz / span * 100
	printf "#   perfetto:      VmRSS %d -> %d KiB (%+.0f KiB/hour), RssAnon %d -> %d KiB (%+.0f KiB/hour), CPU %.3f%% of a core\n", v0[9], v1[9], slope(9), v0[10], v1[10], slope(10), (v1[11] - v0[11]) / hz / span * 100
}' "$SVC_TMP/samples"
printf '#   load average at the end: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
[ $smoke = 1 ] && echo "#   (smoke: 30 s is too short for the growth figures to mean anything)"

if [ -n "$crashed" ]; then
	echo "soak_bench: FAIL:$crashed exited during the recording"
	for n in traced probes rec; do
		echo "# $n: $(svc_errtail $n 3)"
	done
	exit 1
fi
# End the session (SIGTERM makes perfetto stop it and write the rest).
svc_kill rec TERM
bad=0
if [ $mode = file ]; then
	echo "# trace: $(svc_file_size "$SVC_TMP/soak.pftrace") bytes"
else
	# Kept files in order; each must import. Per CPU: the step across each
	# cut (first sched ts of a file minus the last of the one before) and
	# the largest step inside any file.
	set -- $(ls "$SVC_TMP"/rot/trace.* | awk -F. '{print $NF " " $0}' | sort -n | cut -d' ' -f2)
	echo "# files kept: $# ($(du -sk "$SVC_TMP/rot" | cut -f1) KiB), $(sed -n 's/.*wrote .*\.\([0-9]*\) (\([0-9]*\) deleted).*/newest .\1, \2 deleted/p' "$SVC_TMP/rec.err" | tail -n 1)"
	: >"$SVC_TMP/steps"
	for f in "$@"; do
		if ! "$OUT/trace_processor_shell" -Q "select cpu, min(ts), max(ts), coalesce(max(step), 0), count(*)
			from (select cpu, ts, ts - lag(ts) over (partition by cpu order by ts) as step from sched)
			group by cpu" "$f" 2>"$SVC_TMP/tp.err" | sed 1d | tr -d '"' | tr ',' ' ' |
			sed "s|^|$f |" >>"$SVC_TMP/steps"; then
			echo "soak_bench: FAIL: $(basename "$f") does not import: $(tail -n 2 "$SVC_TMP/tp.err")"
			bad=1
		fi
	done
	awk '
	{ f = $1; cpu = $2
	  if (cpu in last && f != lastf[cpu]) { s = $3 - last[cpu]; if (s > cut[cpu]) cut[cpu] = s; ncut[cpu]++ }
	  last[cpu] = $4; lastf[cpu] = f; if ($5 > inside[cpu]) inside[cpu] = $5; ev[cpu] += $6 }
	END {
	  for (c in ev) printf "#   cpu %s: %d sched events; largest step across a cut %.1f ms (%d cuts), inside a file %.1f ms\n", c, ev[c], cut[c] / 1e6, ncut[c], inside[c] / 1e6
	}' "$SVC_TMP/steps" | sort -k3 -n
fi
if ! svc_stop_traced probes || ! svc_stop_traced traced; then
	echo "soak_bench: FAIL: a daemon did not exit cleanly: $(svc_errtail probes) $(svc_errtail traced)"
	exit 1
fi
if [ $bad = 1 ]; then
	echo "soak_bench: FAIL: a kept file does not import"
	exit 1
fi
echo "soak_bench: ok"
exit 0

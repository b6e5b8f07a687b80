#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# rotate_probes.sh - perfetto --rotate-seconds 1 over traced_probes (ftrace
# sched with compact_sched, process_stats, sys_stats) and an SDK app,
# against the live kernel (root and tracefs needed; skipped otherwise):
#   files        one file per second, each imports alone in
#                trace_processor_shell with sched rows, named threads and
#                slices, and no error, data-loss or incremental-state stat;
#   sched_order  per CPU, every sched row of a file precedes the next
#                file's (the drain flushes before reading, so each file's
#                sched data covers its own second, none is in two files);
#   aligned      a file's sched rows start within 300 ms of its slices;
#   process_tree every file names a process that sleeps through the whole
#                recording (never in sched): the tree is written again after
#                each incremental-state clear, so each file has it.
# Usage: OUT=out sh tests/integration/rotate_probes.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"

svc_require_bins traced traced_probes perfetto trace_processor_shell sdk/sdk_app
require_tracefs rotate_probes
TP=$OUT/trace_processor_shell

tpq() {
	printf '%s\n' "$2" >"$SVC_TMP/q.sql"
	"$TP" -q "$SVC_TMP/q.sql" "$1" 2>>"$SVC_TMP/tp.err" | sed -n 2p | tr -d '"'
}

if ! svc_start_traced traced; then
	fail rotate_probes/traced_start "traced did not start: $(svc_errtail traced)"
	summary
	exit 1
fi
svc_bg probes env TRACED_PROBES_NOTIFY_FD=9 "$OUT/traced_probes"
if ! svc_wait_for 10 _svc_ready_or_exited probes || ! _svc_is_ready probes; then
	fail rotate_probes/probes_start "traced_probes did not register: $(svc_errtail probes)"
	summary
	exit 1
fi
sleep 598.5 &
sleeper=$!
svc_bg app env LD_LIBRARY_PATH="$OUT/lib" "$OUT/sdk/sdk_app" --threads 2 --slices 40 \
	--depth 2 --run-ms 600000

svc_cfg p 'buffers { size_kb: 16384 fill_policy: RING_BUFFER }
data_sources { config { name: "linux.ftrace" ftrace_config {
  ftrace_events: "sched/sched_switch" ftrace_events: "sched/sched_waking"
  ftrace_events: "task/task_newtask" ftrace_events: "task/task_rename"
  compact_sched { enabled: true } } } }
data_sources { config { name: "linux.process_stats" process_stats_config { scan_all_processes_on_start: true } } }
data_sources { config { name: "linux.sys_stats" sys_stats_config { meminfo_period_ms: 500 } } }
data_sources { config { name: "track_event" track_event_config { enabled_categories: "*" } } }
duration_ms: 4500'
mkdir -p "$SVC_TMP/p"
if ! svc_perfetto p 40 --txt -c "$SVC_TMP/p.pbtxt" -o "$SVC_TMP/p/t.pf" --rotate-seconds 1; then
	fail rotate_probes/run "perfetto failed: $(svc_errtail p)"
	kill $sleeper 2>/dev/null
	summary
	exit 1
fi
set -- $(ls "$SVC_TMP"/p/t.pf.* | awk -F. '{print $NF " " $0}' | sort -n | cut -d' ' -f2)
ok=1
why=""
for f in "$@"; do
	v=$(tpq "$f" "select (select count(*) from sched) || ' ' ||
		(select count(*) from thread where name is not null) || ' ' ||
		(select count(*) from slice) || ' ' ||
		(select count(*) from stats where value > 0 and (severity in ('error', 'data_loss')
			or name like '%incremental_state%')) as v")
	set -- $v
	if [ $# != 4 ] || [ "$1" -lt 1 ] || [ "$2" -lt 1 ] || [ "$3" -lt 1 ] || [ "$4" != 0 ]; then
		ok=0
		why="$why $(basename "$f"): sched threads slices bad_stats = '$v' ($(tpq "$f" "select group_concat(name || '=' || value, ' ') from stats where value > 0 and (severity in ('error', 'data_loss') or name like '%incremental_state%')"));"
	fi
done
set -- $(ls "$SVC_TMP"/p/t.pf.* | awk -F. '{print $NF " " $0}' | sort -n | cut -d' ' -f2)
if [ $ok = 1 ] && [ $# -ge 4 ]; then pass rotate_probes/files; else fail rotate_probes/files "$# files;$why"; fi

ok=1
why=""
prev=""
for f in "$@"; do
	d=$(tpq "$f" "select coalesce((select min(ts) from sched) - (select min(ts) from slice), 0)")
	if [ "${d#-}" -gt 300000000 ] 2>/dev/null; then
		ok=0
		why="$why $(basename "$f"): sched starts $((d / 1000000)) ms from its slices;"
	fi
	if [ -n "$prev" ]; then
		for cpu in $(tpq "$f" "select group_concat(distinct cpu) from sched" | tr ',' ' '); do
			a=$(tpq "$prev" "select coalesce(max(ts), 0) from sched where cpu = $cpu")
			b=$(tpq "$f" "select min(ts) from sched where cpu = $cpu")
			if [ "$a" -ge "$b" ]; then
				ok=0
				why="$why cpu $cpu: $(basename "$prev") ends at $a, $(basename "$f") starts at $b;"
			fi
		done
	fi
	prev=$f
done
if [ $ok = 1 ]; then pass rotate_probes/sched_order_aligned; else fail rotate_probes/sched_order_aligned "$why"; fi
ok=1
why=""
for f in "$@"; do
	n=$(tpq "$f" "select count(*) from process where pid = $sleeper and cmdline like '%598.5%'")
	if [ "$n" != 1 ]; then
		ok=0
		why="$why $(basename "$f"): $n;"
	fi
done
if [ $ok = 1 ]; then pass rotate_probes/process_tree; else fail rotate_probes/process_tree "rows for the sleeping pid $sleeper:$why"; fi
kill $sleeper 2>/dev/null
svc_kill app
svc_kill probes
summary

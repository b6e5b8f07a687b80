#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# sdk_kernel.sh - SDK events on the same timeline as the kernel's: one
# session records sched_switch (traced_probes) and the test application's
# track events. The app's "spinner" thread busy-waits inside each of five
# "spin" slices and sleeps after it (at real-time priority, so a busy
# machine does not preempt the spin), so each slice must end while the
# thread runs, just before the kernel switches it out: the SDK's TSC
# timestamps, mapped to BOOTTIME by its clock snapshots, must agree with
# the kernel's to within tens of microseconds. Needs root and tracefs (skips
# otherwise; it owns ftrace while it runs).

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"

svc_require_bins traced traced_probes perfetto trace_processor_shell sdk/sdk_app
require_tracefs sdk_kernel

q() {
	printf '%s\n' "$2" >"$SVC_TMP/q.sql"
	"$OUT/trace_processor_shell" -q "$SVC_TMP/q.sql" "$1" 2>/dev/null | sed -n 2p | tr -d '"'
}

svc_start_traced traced || { fail sdk_kernel/traced "traced did not start"; summary; exit 1; }
svc_bg probes env TRACED_PROBES_NOTIFY_FD=9 "$OUT/traced_probes"
if ! svc_wait_for 10 _svc_ready_or_exited probes || ! _svc_is_ready probes; then
	fail sdk_kernel/probes "traced_probes did not register: $(svc_errtail probes)"
	summary
	exit 1
fi
svc_cfg k 'buffers { size_kb: 65536 fill_policy: DISCARD }
data_sources { config { name: "linux.ftrace" ftrace_config { ftrace_events: "sched/sched_switch"
	compact_sched { enabled: false } } } }
data_sources { config { name: "track_event" track_event_config { enabled_categories: "*" } } }'
svc_bg k "$OUT/perfetto" --txt -c "$SVC_TMP/k.pbtxt" -o "$SVC_TMP/k.pftrace"
svc_bg app "$OUT/sdk/sdk_app" --threads 0 --spin-ms 20 --wait-enabled "$(svc_ms 10000)"
svc_wait app 60
t=sdk_kernel/app
if [ "$(svc_rc app)" = 0 ]; then pass $t; else fail $t "exit $(svc_rc app): $(svc_errtail app)"; fi
sleep 0.3
svc_kill k INT
svc_wait k 20 >/dev/null 2>&1
T=$SVC_TMP/k.pftrace

# For each spin slice: how long after its end the kernel switched its
# thread out, from the thread's first sched_switch (as the previous task)
# at or after the end: the nanosleep that follows, microseconds later,
# when the SDK's clock agrees with the kernel's. An end the SDK stamped
# after the real switch-out finds the next one instead, 20 ms on (a
# switch-out inside the slice, where the SDK blocked briefly, is fine).
# 'none' when no switch-out followed. Switch-outs, not sched slices: on
# some kernels (this VM's second CPU) the switch from the idle task into a
# thread is never traced, so a thread woken on an idle CPU has no sched
# slice until its next switch-in from another task. And full events, not
# compact_sched's: a compact switch names only the next task, so a lost
# switch-in gives the switch-out after it to the idle task.
gaps="select group_concat(ifnull(gap, 'none'), ' ') from (
	select (select min(e.ts) from ftrace_event e
		where e.name = 'sched_switch' and e.utid = tt.utid and e.ts >= s.ts + s.dur) - (s.ts + s.dur) gap
	from slice s join thread_track tt on s.track_id = tt.id
	where s.name = 'spin' order by s.ts)"
r=$(q "$T" "$gaps")
echo "# ns from each spin slice's end to its thread's switch-out: $r"
t=sdk_kernel/spin_slices
n=$(echo "$r" | wc -w)
if [ "$n" = 5 ]; then pass $t; else fail $t "$n spin slices (want 5): $r"; fi
t=sdk_kernel/slice_ends_while_running
# Every end within 500 us before a switch-out of its thread (the
# nanosleep that follows: some 10-40 us here).
# Before the snapshots took fresh clock pairs the ends came 10-15 us
# after the switch-out.
ok=1
for g in $r; do
	case $g in
	none | -*) ok=0 ;;
	*) [ "$g" -lt 500000 ] || ok=0 ;;
	esac
done
if [ $n = 5 ] && [ $ok = 1 ]; then
	pass $t
else
	fail $t "ns from each slice end to its thread's switch-out: $r"
	# The thread's switch-outs, to tell a clock error from lost events.
	outs="select group_concat(e.ts, ' ') from ftrace_event e where e.name = 'sched_switch'
		and e.utid = (select tt.utid from slice s join thread_track tt on s.track_id = tt.id
			where s.name = 'spin' limit 1)"
	echo "# spin ends: $(q "$T" "select group_concat(ts + dur, ' ') from slice where name = 'spin'")"
	echo "# its switch-outs: $(q "$T" "$outs")"
	echo "# stats: $(q "$T" "select group_concat(name || '=' || value, ' ') from stats
		where value != 0 and severity != 'info'")"
fi

summary

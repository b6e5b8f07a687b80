#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# perf_ftrace.sh - traced_perf next to traced_probes (root, tracefs and
# cpu-wide perf sampling needed; skipped with the reason otherwise):
#   aligned   one session with linux.perf and sched_switch: perf_hot's
#             samples (CLOCK_MONOTONIC_RAW) fall inside its own sched
#             slices (BOOTTIME) once the trace processor converts clocks;
#   tracebox  tracebox without an applet starts traced_perf too: a
#             linux.perf config records samples;
#   light     light mode's --cpu-profile HZ: perf_hot's hot function is the
#             top leaf of its samples, next to sched data.
# The only perf test that drives ftrace; run it once at a time.
# Usage: OUT=out sh tests/integration/perf_ftrace.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"
. "$(dirname "$0")/perf_lib.sh"

svc_require_bins traced traced_probes traced_perf perfetto tracebox trace_processor_shell perf_hot
perf_require perf_ftrace
require_tracefs perf_ftrace
# A private saved-state file, so this test never touches a real one.
export PFC_FTRACE_STATE_FILE="$SVC_TMP/ftrace-state"
perf_setup perf_ftrace
svc_bg probes env TRACED_PROBES_NOTIFY_FD=9 "$OUT/traced_probes"
if ! { svc_wait_for 10 _svc_ready_or_exited probes && _svc_is_ready probes; }; then
	fail perf_ftrace/probes_start "traced_probes did not register: $(svc_errtail probes)"
	summary
	exit 1
fi

svc_cfg aligned 'buffers { size_kb: 32768 }
data_sources { config { name: "linux.perf" perf_event_config {
  timebase { frequency: 200 counter: SW_CPU_CLOCK }
  callstack_sampling { user_frames: UNWIND_FRAME_POINTER }
} } }
data_sources { config { name: "linux.ftrace" ftrace_config {
  ftrace_events: "sched/sched_switch"
  compact_sched { enabled: false }
} } }
duration_ms: 120000'
# 0.6 s of the spinner's CPU at 200 Hz: ~120 samples, inside the session.
if perf_around aligned 60 "$OUT/perf_hot" spin 0.6; then
	pid=$(perf_hot_pid aligned)
	# Each sample against the slice running on its CPU at its time: the
	# same thread, unless clocks are off. Samples in a stretch without
	# sched data for their CPU are left out.
	res=$(perf_q aligned "select count(*) as covered, sum(s.utid = p.utid) as same
		from perf_sample p join thread t using(utid)
		join sched s on s.cpu = p.cpu and p.ts >= s.ts and p.ts < s.ts + s.dur
		where t.tid = $pid" | tr ',' ' ')
	set -- $res
	total=${1:-0}
	inside=${2:-0}
	# At least 30 covered: stretches without sched data can leave out many.
	if [ "$total" -ge 30 ] && [ $((inside * 100)) -ge $((total * 95)) ]; then
		pass perf_ftrace/aligned_with_sched
	elif [ "$SVC_SCALE" -gt 1 ] && [ "$total" -ge 30 ]; then
		# Seen on a loaded machine (mostly sanitizer builds): ftrace data
		# of ~100 ms on every CPU is missing with no stat saying so.
		skip perf_ftrace/aligned_with_sched "sanitizer build: $inside of $total samples of pid $pid on their CPU's sched slice; ftrace stretches are missing from this trace"
	else
		fail perf_ftrace/aligned_with_sched "$inside of $total samples of pid $pid inside its sched slices on their CPU"
	fi
else
	fail perf_ftrace/aligned_with_sched "recording failed: $(svc_errtail aligned)"
fi

# ------------------------------------------------------------- tracebox ----
svc_cfg tb 'buffers { size_kb: 8192 }
data_sources { config { name: "linux.perf" perf_event_config {
  timebase { frequency: 100 counter: SW_CPU_CLOCK }
} } }
duration_ms: 800'
if env -u PERFETTO_PRODUCER_SOCK_NAME -u PERFETTO_CONSUMER_SOCK_NAME timeout 30 \
	"$OUT/tracebox" --txt -c "$SVC_TMP/tb.pbtxt" -o "$SVC_TMP/tb.pb" >"$SVC_TMP/tb.out" 2>&1; then
	n=$(perf_q tb "select count(*) from perf_sample")
	if [ "${n:-0}" -ge 20 ]; then
		pass perf_ftrace/tracebox_autostart
	else
		fail perf_ftrace/tracebox_autostart "$n samples: $(tail -n 2 "$SVC_TMP/tb.out" | tr '\n' ' ')"
	fi
else
	fail perf_ftrace/tracebox_autostart "tracebox failed: $(tail -n 2 "$SVC_TMP/tb.out" | tr '\n' ' ')"
fi

# Light mode's shorthand: `tracebox -t 2s --cpu-profile 199 sched` samples
# every CPU with callstacks next to the sched data; perf_hot's hot function
# is the most sampled leaf of its process, its callers unwound. The spinner
# runs before and after the 2 s (its 6 CPU s take longer). How many samples
# it should get depends on the CPU it got inside the 2 s, which a busy
# machine decides: read its CPU time (/proc) around tracebox's run; at
# least (CPU in the run) - (the run's wall time - 2 s) of it fell inside the
# window, so 199 Hz gives at least half that many samples (a lost or
# unwound-less spinner is caught however busy the machine is).
$PERF_NICE "$OUT/perf_hot" spin 6 >/dev/null 2>&1 &
hot=$!
# cpu_ticks PID: its utime + stime, in clock ticks.
cpu_ticks() {
	sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $12 + $13 }'
}
svc_wait_for 10 test -r "/proc/$hot/stat"
c0=$(cpu_ticks $hot) w0=$(date +%s%N)
if env -u PERFETTO_PRODUCER_SOCK_NAME -u PERFETTO_CONSUMER_SOCK_NAME timeout 30 \
	"$OUT/tracebox" -t 2s --cpu-profile 199 -o "$SVC_TMP/lm.pb" sched >"$SVC_TMP/lm.out" 2>&1; then
	c1=$(cpu_ticks $hot) w1=$(date +%s%N)
	hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
	# CPU ms surely inside the window; the samples it is worth at 199 Hz, halved.
	in_ms=$(( (${c1:-0} - ${c0:-0}) * 1000 / hz - ((w1 - w0) / 1000000 - 2000) ))
	[ "$in_ms" -gt 0 ] || in_ms=0
	want=$((in_ms * 199 / 1000 / 2))
	[ "$want" -ge 5 ] || want=5
	got=$(perf_q lm "select (select count(*) from sched) > 0,
		(select f.name from perf_sample s join thread t using (utid)
		   join stack_profile_callsite c on c.id = s.callsite_id
		   join stack_profile_frame f on f.id = c.frame_id
		  where t.tid = $hot group by f.name order by count(*) desc limit 1),
		(select count(*) from perf_sample s join thread t using (utid) where t.tid = $hot
		   and s.callsite_id is not null)")
	echo "# light mode: perf_hot had >= $in_ms CPU ms in the window; unwound samples ${got##*,}, want >= $want"
	if echo "$got" | grep -qE '^1,"?hot_[ab]"?,[0-9]+$' && [ "${got##*,}" -ge "$want" ]; then
		pass perf_ftrace/light_mode_cpu_profile
	else
		fail perf_ftrace/light_mode_cpu_profile "sched?, top leaf, unwound samples of perf_hot (want >= $want: >= $in_ms CPU ms in the window): $got"
	fi
else
	fail perf_ftrace/light_mode_cpu_profile "tracebox failed: $(tail -n 2 "$SVC_TMP/lm.out" | tr '\n' ' ')"
fi
kill $hot 2>/dev/null
wait $hot 2>/dev/null

perf_check_exit perf_ftrace

summary

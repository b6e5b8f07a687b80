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
if env -u PERFETTO_PRODUCER_SOCK_NAME -u PERFETTO_CONSUMER_SOCK_NAME timeout 180 \
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
# it should get depends on the CPU it got while sampling ran, which a busy
# machine decides: the trace says it (perf_hot's sched slices inside the
# span of the trace's samples), and 199 Hz gives at least half that many
# samples. A spinner the scheduler left idle for the whole window (load
# far above the CPUs) is skipped with its figure; a lost or unwound-less
# spinner is caught however busy the machine is.
$PERF_NICE "$OUT/perf_hot" spin 6 >/dev/null 2>&1 &
hot=$!
svc_wait_for 10 test -r "/proc/$hot/stat"
if env -u PERFETTO_PRODUCER_SOCK_NAME -u PERFETTO_CONSUMER_SOCK_NAME timeout 180 \
	"$OUT/tracebox" -t 2s --cpu-profile 199 -o "$SVC_TMP/lm.pb" sched >"$SVC_TMP/lm.out" 2>&1; then
	# CPU ms perf_hot ran between the trace's first and last sample.
	in_ms=$(perf_q lm "with w as (select min(ts) as b, max(ts) as e from perf_sample)
		select coalesce(sum(max(0, min(sc.ts + sc.dur, w.e) - max(sc.ts, w.b))), 0) / 1000000
		from sched sc join thread t using (utid), w where t.tid = $hot")
	n_all=$(perf_q lm "select count(*) from perf_sample")
	want=$((${in_ms:-0} * 199 / 1000 / 2))
	got=$(perf_q lm "select (select count(*) from sched) > 0,
		(select f.name from perf_sample s join thread t using (utid)
		   join stack_profile_callsite c on c.id = s.callsite_id
		   join stack_profile_frame f on f.id = c.frame_id
		  where t.tid = $hot group by f.name order by count(*) desc limit 1),
		(select count(*) from perf_sample s join thread t using (utid) where t.tid = $hot
		   and s.callsite_id is not null)")
	echo "# light mode: perf_hot ran ${in_ms:-?} CPU ms while sampling ran; unwound samples ${got##*,}, want >= $want"
	if [ "${n_all:-0}" -lt 1 ]; then
		fail perf_ftrace/light_mode_cpu_profile "no perf sample at all in the trace: $(tail -n 2 "$SVC_TMP/lm.out" | tr '\n' ' ')"
	elif [ "$want" -lt 3 ] && [ "${got##*,}" -lt 3 ]; then
		skip perf_ftrace/light_mode_cpu_profile "perf_hot ran ${in_ms:-?} ms of CPU while sampling ran (a machine too busy to judge; got $got)"
	elif echo "$got" | grep -qE '^1,"?hot_[ab]"?,[0-9]+$' && [ "${got##*,}" -ge "$want" ]; then
		pass perf_ftrace/light_mode_cpu_profile
	else
		fail perf_ftrace/light_mode_cpu_profile "sched?, top leaf, unwound samples of perf_hot (want >= $want: it ran $in_ms CPU ms while sampling ran): $got"
	fi
else
	fail perf_ftrace/light_mode_cpu_profile "tracebox failed: $(tail -n 2 "$SVC_TMP/lm.out" | tr '\n' ' ')"
fi
kill $hot 2>/dev/null
wait $hot 2>/dev/null

perf_check_exit perf_ftrace

summary

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# probes_live.sh - traced_probes and tracebox against the live kernel (root
# and tracefs needed; skipped with the reason otherwise):
#   sleeper     a child with a known name sleeps and wakes N times and
#               writes a trace_marker line: its sched_switch/sched_waking
#               events carry its pid and name, the print event is there,
#               and a ProcessTree entry names it (it starts mid-session);
#   compact     by default sched events go into compact_sched;
#   restore     tracing_on, set_event and buffer_size_kb are as before;
#   crash       after SIGKILL of traced_probes, --cleanup-after-crash puts
#               them back;
#   concurrent  two sessions with different events get only their own;
#   configs     the example configs (durations shortened) record.
# Usage: OUT=out sh tests/integration/probes_live.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"

svc_require_bins traced traced_probes perfetto tracebox sleeper pfc_pbtxt

require_tracefs probes_live
# A private saved-state file, so this test never touches a real one.
export PFC_FTRACE_STATE_FILE="$SVC_TMP/ftrace-state"

state() { # the bits of kernel state the tests compare
	printf '%s|%s|%s' "$(cat "$TFS/tracing_on")" "$(cat "$TFS/buffer_size_kb")" \
		"$(sort "$TFS/set_event" | tr '\n' ' ')"
}

decode() { # TRACE -> TRACE.txt
	"$OUT/pfc_pbtxt" --type Trace decode "$1" >"$1.txt" 2>"$1.err"
}

if ! svc_start_traced traced; then
	fail probes_live/traced_start "traced did not start: $(svc_errtail traced)"
	summary
	exit 1
fi
start_probes() {
	svc_bg probes env TRACED_PROBES_NOTIFY_FD=9 "$OUT/traced_probes"
	svc_wait_for 10 _svc_ready_or_exited probes && _svc_is_ready probes
}

# A known starting point: a buffer size nobody else uses, tracing on, no events.
echo 1000 >"$TFS/buffer_size_kb"
echo 1 >"$TFS/tracing_on"
echo >"$TFS/set_event"
BEFORE=$(state)

if ! start_probes; then
	fail probes_live/probes_start "traced_probes did not register: $(svc_errtail probes)"
	summary
	exit 1
fi

# ---------------------------------------------------------------- sleeper ----
svc_cfg sleeper 'buffers { size_kb: 16384 }
data_sources { config { name: "linux.ftrace" ftrace_config {
  ftrace_events: "sched/sched_switch"
  ftrace_events: "sched/sched_waking"
  ftrace_events: "ftrace/print"
  compact_sched { enabled: false }
} } }
data_sources { config { name: "linux.process_stats" process_stats_config {
  scan_all_processes_on_start: true
} } }
duration_ms: 2500'
svc_bg rec "$OUT/perfetto" --txt -c "$SVC_TMP/sleeper.pbtxt" -o "$SVC_TMP/sleeper.pb"
sleep 0.7
"$OUT/sleeper" 100 pfc_sleeper 2000 >"$SVC_TMP/sleeper.pid" 2>"$SVC_TMP/sleeper.err"
SLEEPER_RC=$?
SPID=$(head -n 1 "$SVC_TMP/sleeper.pid")
if ! svc_wait rec 20 || [ "$SLEEPER_RC" != 0 ] || ! decode "$SVC_TMP/sleeper.pb"; then
	fail probes_live/sleeper "recording failed: $(svc_errtail rec) $(cat "$SVC_TMP/sleeper.err")"
else
	T="$SVC_TMP/sleeper.pb.txt"
	n_switch=$(grep -c "prev_comm: \"pfc_sleeper\"" "$T")
	n_pid=$(grep -c "prev_pid: $SPID\$" "$T")
	n_wake=$(grep -A1 "comm: \"pfc_sleeper\"" "$T" | grep -c "pid: $SPID\$")
	if [ "$n_switch" -ge 100 ] && [ "$n_pid" -ge 100 ] && [ "$n_wake" -ge 50 ]; then
		pass probes_live/sleeper_sched
	else
		fail probes_live/sleeper_sched "switches by name=$n_switch by pid=$n_pid wakings=$n_wake (pid $SPID)"
	fi
	if grep -q "buf: \"pfc-marker-$SPID\\\\n\"" "$T"; then
		pass probes_live/sleeper_print
	else
		fail probes_live/sleeper_print "no print event with pfc-marker-$SPID"
	fi
	# A Thread or Process entry with the sleeper's pid and name.
	if grep -B2 -A3 "tid: $SPID\$\|pid: $SPID\$" "$T" | grep -q "pfc_sleeper\|sleeper"; then
		pass probes_live/sleeper_process_tree
	else
		fail probes_live/sleeper_process_tree "no ProcessTree entry names pid $SPID"
	fi
	if grep -q "ftrace_stats {" "$T" && grep -q "phase: END_OF_TRACE" "$T"; then
		pass probes_live/ftrace_stats
	else
		fail probes_live/ftrace_stats "no FtraceStats at the end"
	fi
fi
if [ "$(state)" = "$BEFORE" ]; then
	pass probes_live/restore
else
	fail probes_live/restore "before: $BEFORE after: $(state)"
fi

# ---------------------------------------------------------------- compact ----
svc_cfg compact 'buffers { size_kb: 8192 }
data_sources { config { name: "linux.ftrace" ftrace_config {
  ftrace_events: "sched/sched_switch"
  ftrace_events: "sched/sched_waking"
} } }
duration_ms: 1200'
svc_bg crec "$OUT/perfetto" --txt -c "$SVC_TMP/compact.pbtxt" -o "$SVC_TMP/compact.pb"
sleep 0.3
"$OUT/sleeper" 50 pfc_compact 2000 >/dev/null 2>&1
if svc_wait crec 20 && decode "$SVC_TMP/compact.pb" &&
	grep -q "compact_sched {" "$SVC_TMP/compact.pb.txt" &&
	grep -q "intern_table: \"pfc_compact\"" "$SVC_TMP/compact.pb.txt" &&
	! grep -q "sched_switch {" "$SVC_TMP/compact.pb.txt"; then
	pass probes_live/compact_sched_default
else
	fail probes_live/compact_sched_default "no compact_sched with the sleeper's name (or plain sched_switch events)"
fi

# ------------------------------------------------------------- concurrent ----
svc_cfg a 'buffers { size_kb: 4096 }
data_sources { config { name: "linux.ftrace" ftrace_config {
  ftrace_events: "sched/sched_switch" compact_sched { enabled: false } } } }
duration_ms: 1500'
svc_cfg b 'buffers { size_kb: 4096 }
data_sources { config { name: "linux.ftrace" ftrace_config {
  ftrace_events: "sched/sched_waking" compact_sched { enabled: false } } } }
duration_ms: 1500'
svc_bg ra "$OUT/perfetto" --txt -c "$SVC_TMP/a.pbtxt" -o "$SVC_TMP/a.pb"
svc_bg rb "$OUT/perfetto" --txt -c "$SVC_TMP/b.pbtxt" -o "$SVC_TMP/b.pb"
"$OUT/sleeper" 100 pfc_conc 2000 >/dev/null 2>&1
if svc_wait ra 20 && svc_wait rb 20 && decode "$SVC_TMP/a.pb" && decode "$SVC_TMP/b.pb"; then
	a_sw=$(grep -c "sched_switch {" "$SVC_TMP/a.pb.txt")
	a_wk=$(grep -c "sched_waking {" "$SVC_TMP/a.pb.txt")
	b_sw=$(grep -c "sched_switch {" "$SVC_TMP/b.pb.txt")
	b_wk=$(grep -c "sched_waking {" "$SVC_TMP/b.pb.txt")
	if [ "$a_sw" -gt 0 ] && [ "$a_wk" -eq 0 ] && [ "$b_wk" -gt 0 ] && [ "$b_sw" -eq 0 ]; then
		pass probes_live/concurrent_sessions
	else
		fail probes_live/concurrent_sessions "a: switch=$a_sw waking=$a_wk; b: switch=$b_sw waking=$b_wk"
	fi
else
	fail probes_live/concurrent_sessions "a recording failed: $(svc_errtail ra) $(svc_errtail rb)"
fi
if [ "$(state)" = "$BEFORE" ]; then
	pass probes_live/restore_after_concurrent
else
	fail probes_live/restore_after_concurrent "before: $BEFORE after: $(state)"
fi

# ---------------------------------------------------------------- configs ----
for cfg in "$ROOT"/configs/*.pbtxt; do
	name=$(basename "$cfg" .pbtxt)
	# Short durations; a STOP trigger that never comes ends at its timeout.
	sed -e 's/duration_ms: [0-9]*/duration_ms: 1200/' \
		-e 's/trigger_timeout_ms: [0-9]*/trigger_timeout_ms: 1200/' \
		-e 's/file_write_period_ms: [0-9]*/file_write_period_ms: 300/' \
		"$cfg" >"$SVC_TMP/cfg-$name.pbtxt"
	# One that runs until stopped gets the same short duration.
	grep -q '^duration_ms:' "$SVC_TMP/cfg-$name.pbtxt" ||
		echo "duration_ms: 1200" >>"$SVC_TMP/cfg-$name.pbtxt"
	if svc_perfetto "cfg-$name" 30 --txt -c "$SVC_TMP/cfg-$name.pbtxt" -o "$SVC_TMP/cfg-$name.pb" &&
		decode "$SVC_TMP/cfg-$name.pb"; then
		pass "probes_live/config/$name"
	else
		fail "probes_live/config/$name" "$(svc_errtail "cfg-$name") $(head -c 200 "$SVC_TMP/cfg-$name.pb.err" 2>/dev/null)"
	fi
done

# -------------------------------------------------------------- reconnect ----
# traced restarts: traced_probes comes back by itself (backoff) and records.
registered() {
	"$OUT/perfetto" --query 2>/dev/null | grep -q "linux.ftrace"
}
if svc_stop_traced traced && svc_start_traced traced && svc_wait_for 15 registered; then
	svc_cfg again 'buffers { size_kb: 4096 }
data_sources { config { name: "linux.ftrace" ftrace_config {
  ftrace_events: "sched/sched_switch" compact_sched { enabled: false } } } }
duration_ms: 800'
	if svc_perfetto again 20 --txt -c "$SVC_TMP/again.pbtxt" -o "$SVC_TMP/again.pb" &&
		decode "$SVC_TMP/again.pb" && grep -q "sched_switch {" "$SVC_TMP/again.pb.txt"; then
		pass probes_live/reconnect_after_traced_restart
	else
		fail probes_live/reconnect_after_traced_restart "no sched_switch after the restart: $(svc_errtail again)"
	fi
else
	fail probes_live/reconnect_after_traced_restart "traced_probes did not register again: $(svc_errtail probes)"
fi

# ------------------------------------------------------------------ crash ----
svc_cfg long 'buffers { size_kb: 4096 }
data_sources { config { name: "linux.ftrace" ftrace_config {
  ftrace_events: "sched/sched_switch" ftrace_events: "irq/*" } } }
duration_ms: 30000'
svc_bg lrec "$OUT/perfetto" --txt -c "$SVC_TMP/long.pbtxt" -o "$SVC_TMP/long.pb"
changed() { [ "$(state)" != "$BEFORE" ]; }
if svc_wait_for 10 changed; then
	svc_kill probes KILL
	if [ "$(state)" != "$BEFORE" ] && "$OUT/traced_probes" --cleanup-after-crash &&
		[ "$(state)" = "$BEFORE" ]; then
		pass probes_live/cleanup_after_crash
	else
		fail probes_live/cleanup_after_crash "before: $BEFORE after cleanup: $(state)"
	fi
else
	fail probes_live/cleanup_after_crash "the session never changed the ftrace state"
fi
svc_kill lrec INT

# ---------------------------------------------------------------- tracebox ---
# With traced running on other sockets, tracebox must start its own.
(
	unset PERFETTO_PRODUCER_SOCK_NAME PERFETTO_CONSUMER_SOCK_NAME
	timeout -k 3 $((30 * SVC_SCALE)) "$OUT/tracebox" -o "$SVC_TMP/tb.pb" -t 1s sched freq idle \
		>"$SVC_TMP/tb.out" 2>"$SVC_TMP/tb.err"
)
if [ $? = 0 ] && decode "$SVC_TMP/tb.pb" && grep -q "compact_sched {" "$SVC_TMP/tb.pb.txt" &&
	grep -q "process_tree {" "$SVC_TMP/tb.pb.txt"; then
	pass probes_live/tracebox_light_mode
else
	fail probes_live/tracebox_light_mode "$(tail -n 3 "$SVC_TMP/tb.err" | tr '\n' ' ')"
fi
if [ "$(state)" = "$BEFORE" ]; then
	pass probes_live/restore_after_tracebox
else
	fail probes_live/restore_after_tracebox "before: $BEFORE after: $(state)"
fi
summary

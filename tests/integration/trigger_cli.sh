#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# trigger_cli.sh - the two command-line ways to fire a trigger: the
# trigger_perfetto program, and `perfetto -c CONFIG` whose config only sets
# activate_triggers (no session is started, no --out needed). Each must end
# a STOP_TRACING session long before its duration, and the trace must
# record the trigger.
# Usage: OUT=out sh tests/integration/trigger_cli.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"

svc_require_bins traced perfetto trigger_perfetto test_producer trace_check

if ! svc_start_traced traced; then
	fail trigger_cli/traced_start "traced did not start: $(svc_errtail traced)"
	summary
	exit 1
fi
svc_start_producer prod --ds t.ds --threads 1 --packets-per-thread 100 --emit-on-start ||
	fail trigger_cli/producer_start "$(svc_errtail prod)"

svc_cfg session 'buffers { size_kb: 1024 }
data_sources { config { name: "t.ds" } }
trigger_config {
  trigger_mode: STOP_TRACING
  trigger_timeout_ms: 60000
  triggers { name: "cli-stop" stop_delay_ms: 100 }
}'
svc_cfg fire 'activate_triggers: "cli-stop"'

# run_case NAME CMD...: start the session, fire with CMD, expect a quick end.
run_case() {
	_name=$1
	shift
	_t0=$(svc_now_ms)
	svc_bg "$_name.rec" "$OUT/perfetto" --txt -c "$SVC_TMP/session.pbtxt" -o "$SVC_TMP/$_name.pb"
	sleep 0.5
	if ! "$@" >"$SVC_TMP/$_name.fire.out" 2>&1; then
		fail "trigger_cli/$_name" "firing failed: $(tail -n 2 "$SVC_TMP/$_name.fire.out" | tr '\n' ' ')"
		svc_kill "$_name.rec"
		return
	fi
	if ! svc_wait "$_name.rec" 20; then
		fail "trigger_cli/$_name" "the session did not end after the trigger"
		svc_kill "$_name.rec"
		return
	fi
	_ms=$(($(svc_now_ms) - _t0))
	svc_check_trace "$_name" "$SVC_TMP/$_name.pb"
	if [ "$(svc_tc "$_name" triggers)" -ge 1 ] && [ "$(svc_tc "$_name" test_packets)" -eq 100 ] &&
		[ "$_ms" -lt $((20000 * SVC_SCALE)) ]; then
		pass "trigger_cli/$_name"
	else
		fail "trigger_cli/$_name" "triggers=$(svc_tc "$_name" triggers) test_packets=$(svc_tc "$_name" test_packets) after ${_ms} ms"
	fi
}

run_case trigger_perfetto "$OUT/trigger_perfetto" cli-stop
run_case perfetto_activate "$OUT/perfetto" --txt -c "$SVC_TMP/fire.pbtxt"
if "$OUT/trigger_perfetto" >/dev/null 2>&1; then
	fail trigger_cli/no_names "trigger_perfetto without names exited 0"
else
	pass trigger_cli/no_names
fi
summary

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# service_cli.sh - the perfetto command line against a real traced:
#   bad_config     a pbtxt error names line and column, exit 1;
#   no_clobber     --no-clobber refuses an existing file and keeps it;
#   query          --query lists the producer and its data source;
#   detach/*       --detach=KEY, --is_detached=KEY (0 / 2), then
#                  --attach=KEY --stop -o FILE writes the trace;
#   clone/*        --clone ID and --clone-by-name NAME write snapshots while
#                  the original session keeps running;
#   light_mode     perfetto -o F -t 1s sched/sched_switch (no ftrace
#                  producer here: service packets only), exit 0;
#   background     --background prints a PID and returns at once; the trace
#                  appears after duration_ms.
# Every trace also goes through protoc --decode.
# Usage: OUT=out sh tests/integration/service_cli.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"

svc_require_bins traced perfetto test_producer trace_check

if ! svc_start_traced traced; then
	fail cli/traced_start "traced did not start: $(svc_errtail traced)"
	summary
	exit 1
fi

# ---------------------------------------------------------- bad config ----

printf 'buffers {\n  size_kb: 1024\n  fil_policy: DISCARD\n}\nduration_ms: 100\n' >"$SVC_TMP/bad.pbtxt"
svc_perfetto bad 10 --txt -c "$SVC_TMP/bad.pbtxt" -o "$SVC_TMP/bad.pb"
rc=$?
if [ $rc -ne 1 ]; then
	fail cli/bad_config "exit $rc (want 1): $(svc_errtail bad)"
elif ! grep -q "fil_policy" "$SVC_TMP/bad.err" || ! grep -q "3:3" "$SVC_TMP/bad.err"; then
	fail cli/bad_config "stderr lacks the field and line:column 3:3: $(svc_errtail bad)"
elif [ -s "$SVC_TMP/bad.pb" ]; then
	fail cli/bad_config "wrote a trace for a bad config"
else
	pass cli/bad_config
fi

# ---------------------------------------------------------- no-clobber ----

svc_cfg short 'buffers { size_kb: 1024 }
data_sources { config { name: "cli.ds" } }
duration_ms: 200'
echo "precious" >"$SVC_TMP/exists.pb"
svc_perfetto noclob 10 --txt -c "$SVC_TMP/short.pbtxt" -o "$SVC_TMP/exists.pb" --no-clobber
rc=$?
if [ $rc -eq 0 ]; then
	fail cli/no_clobber "exit 0 with an existing output file"
elif [ "$(cat "$SVC_TMP/exists.pb")" != precious ]; then
	fail cli/no_clobber "the existing file was changed"
elif ! grep -q "exists" "$SVC_TMP/noclob.err"; then
	fail cli/no_clobber "no message about the existing file: $(svc_errtail noclob)"
else
	pass cli/no_clobber
fi

# --------------------------------------------------------------- query ----

if ! svc_start_producer cliprod --ds cli.ds --threads 1 --packets-per-thread 100 \
	--packet-size 200 --emit-on-start --notify-stop; then
	fail cli/producer "test_producer did not start: $(svc_errtail cliprod)"
fi
svc_perfetto query 10 --query
rc=$?
if [ $rc -ne 0 ]; then
	fail cli/query "exit $rc: $(svc_errtail query)"
elif ! grep -q "cliprod" "$SVC_TMP/query.out" || ! grep -q "cli.ds" "$SVC_TMP/query.out"; then
	fail cli/query "the producer or data source is missing: $(tr '\n' '|' <"$SVC_TMP/query.out" | head -c 400)"
else
	pass cli/query
fi

# ------------------------------------------------------ detach / attach ----

svc_cfg long 'buffers { size_kb: 2048 fill_policy: DISCARD }
data_sources { config { name: "cli.ds" } }
duration_ms: 30000'
svc_perfetto detach 10 --txt -c "$SVC_TMP/long.pbtxt" --detach=key1
rc=$?
if [ $rc -ne 0 ]; then
	fail cli/detach "exit $rc: $(svc_errtail detach)"
else
	pass cli/detach
	svc_perfetto isdet 10 --is_detached=key1
	rc1=$?
	svc_perfetto isdet2 10 --is_detached=nosuchkey
	rc2=$?
	if [ $rc1 -eq 0 ] && [ $rc2 -eq 2 ]; then
		pass cli/is_detached
	else
		fail cli/is_detached "exit $rc1 for a detached key (want 0), $rc2 for an unknown key (want 2)"
	fi
	svc_perfetto attach 15 --attach=key1 --stop -o "$SVC_TMP/attach.pb"
	rc=$?
	if [ $rc -ne 0 ]; then
		fail cli/attach_stop "exit $rc: $(svc_errtail attach)"
	elif ! svc_check_trace attach "$SVC_TMP/attach.pb" --expect-seqs 1 --expect-per-seq 100 \
		--verify-payload; then
		fail cli/attach_stop "$(svc_why attach)"
	else
		pass cli/attach_stop
	fi
	[ -f "$SVC_TMP/attach.pb" ] && svc_decode cli/attach_stop "$SVC_TMP/attach.pb"
	svc_perfetto isdet3 10 --is_detached=key1
	rc=$?
	if [ $rc -eq 2 ]; then
		pass cli/is_detached_after_stop
	else
		fail cli/is_detached_after_stop "exit $rc (want 2) once the session was stopped"
	fi
fi

# --------------------------------------------------------------- clone ----

svc_cfg clonable 'buffers { size_kb: 2048 fill_policy: DISCARD }
data_sources { config { name: "cli.ds" } }
unique_session_name: "clonme"
duration_ms: 30000'
svc_bg orig.perfetto "$OUT/perfetto" --txt -c "$SVC_TMP/clonable.pbtxt" -o "$SVC_TMP/orig.pb"

session_id() {
	"$OUT/perfetto" --query 2>/dev/null |
		awk '/^TRACING SESSIONS:/ { t = 1; next } t && $NF == "clonme" { print $1; exit }'
}
has_session() {
	[ -n "$(session_id)" ]
}

if svc_wait_for 5 has_session; then
	sid=$(session_id)
	sleep 0.3
	svc_perfetto clone1 15 --clone "$sid" -o "$SVC_TMP/clone1.pb"
	rc1=$?
	svc_perfetto clone2 15 --clone-by-name clonme -o "$SVC_TMP/clone2.pb"
	rc2=$?
	for c in clone1 clone2; do
		if [ "$c" = clone1 ]; then rc=$rc1; else rc=$rc2; fi
		if [ $rc -ne 0 ]; then
			fail "cli/$c" "exit $rc: $(svc_errtail $c)"
		elif ! svc_check_trace $c "$SVC_TMP/$c.pb" --expect-seqs 1 --expect-per-seq 100 \
			--verify-payload; then
			fail "cli/$c" "$(svc_why $c)"
		else
			pass "cli/$c"
		fi
		[ -f "$SVC_TMP/$c.pb" ] && svc_decode "cli/$c" "$SVC_TMP/$c.pb"
	done
	# The original still runs, then ends normally with its own data.
	if ! svc_running orig.perfetto || [ "$(session_id)" != "$sid" ]; then
		fail cli/clone_original_runs "the original session ended after the clones"
	else
		kill -INT "$(svc_pid orig.perfetto)"
		svc_wait orig.perfetto 15
		rc=$?
		if [ $rc -eq 0 ] && svc_check_trace orig "$SVC_TMP/orig.pb" --expect-seqs 1 \
			--expect-per-seq 100 --verify-payload; then
			pass cli/clone_original_runs
		else
			fail cli/clone_original_runs "original exit $rc: $(svc_why orig) $(svc_errtail orig.perfetto)"
		fi
	fi
else
	fail cli/clone "the unique_session_name session did not show up: $(svc_errtail orig.perfetto)"
fi
svc_kill orig.perfetto

# ---------------------------------------------------------- light mode ----

t0=$(svc_now_ms)
svc_perfetto light 15 -o "$SVC_TMP/light.pb" -t 1s sched/sched_switch
rc=$?
dt=$(($(svc_now_ms) - t0))
svc_check_trace light "$SVC_TMP/light.pb"
if [ $rc -ne 0 ]; then
	fail cli/light_mode "exit $rc: $(svc_errtail light)"
elif [ "$dt" -gt "$(svc_ms 5000)" ]; then
	fail cli/light_mode "a 1 s trace took $dt ms"
elif [ "$(svc_tc light ok)" != 1 ] || [ "$(svc_tc light clock_snapshots)" -lt 1 ] ||
	[ "$(svc_tc light trace_configs)" -lt 1 ]; then
	fail cli/light_mode "no service packets: $(svc_why light) clock_snapshots=$(svc_tc light clock_snapshots) trace_configs=$(svc_tc light trace_configs)"
else
	pass cli/light_mode
fi
[ -f "$SVC_TMP/light.pb" ] && svc_decode cli/light_mode "$SVC_TMP/light.pb"

# ---------------------------------------------------------- background ----

svc_cfg bg 'buffers { size_kb: 2048 fill_policy: DISCARD }
data_sources { config { name: "cli.ds" } }
duration_ms: 1000'
t0=$(svc_now_ms)
svc_perfetto bg 10 --background --txt -c "$SVC_TMP/bg.pbtxt" -o "$SVC_TMP/bg.pb"
rc=$?
dt=$(($(svc_now_ms) - t0))
bgpid=$(head -n 1 "$SVC_TMP/bg.out")
bg_gone() {
	! kill -0 "$bgpid" 2>/dev/null
}
if [ $rc -ne 0 ]; then
	fail cli/background "exit $rc: $(svc_errtail bg)"
elif ! [ "$bgpid" -gt 1 ] 2>/dev/null; then
	fail cli/background "stdout is not a PID: '$(head -c 80 "$SVC_TMP/bg.out")'"
else
	svc_track "$bgpid"
	if [ "$dt" -gt "$(svc_ms 800)" ]; then
		fail cli/background "--background took $dt ms to return (duration 1000 ms)"
	elif bg_gone; then
		fail cli/background "the background process $bgpid is not running"
	elif ! svc_wait_for 10 bg_gone; then
		fail cli/background "the background process $bgpid did not end"
	elif ! svc_check_trace bgt "$SVC_TMP/bg.pb" --expect-seqs 1 --expect-per-seq 100 \
		--verify-payload; then
		fail cli/background "$(svc_why bgt)"
	else
		pass cli/background
	fi
	[ -f "$SVC_TMP/bg.pb" ] && svc_decode cli/background "$SVC_TMP/bg.pb"
fi

svc_kill cliprod
if svc_stop_traced traced; then
	pass cli/traced_clean_exit
else
	fail cli/traced_clean_exit "traced exited $(svc_rc traced) on SIGTERM: $(svc_errtail traced 5)"
fi

summary

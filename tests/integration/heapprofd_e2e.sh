#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# heapprofd_e2e.sh - native heap profiles end to end, in heapprofd's child
# mode (as Perfetto on Linux): a session asks for android.heapprofd at
# 4 KiB sampling for hp_known, which is then started with
# libheapprofd_glibc_preload.so and PERFETTO_HEAPPROFD_BLOCKING_INIT=1;
# hp_known keeps 64 MiB (+8 KiB of its table) in leak_a, allocates and
# frees 32 MiB in churn_b and keeps 10 MiB in small_c (8 MiB of 32-byte
# blocks and a 2 MiB table). Perfetto's trace processor (UPSTREAM_TP, else
# ../shared/upstream/bin/trace_processor_shell; skipped with the reason
# when absent) must attribute each path within 5% of that, with churn_b's
# bytes all freed, on one thread and with each path on its own thread.
# Central mode too: heapprofd runs as a daemon on its own socket, hp_known
# starts with the library before the session does and is profiled once
# the session starts (attached to a running process; what it allocated in
# the meantime is not in the profile).
# Usage: OUT=out [UPSTREAM_TP=...] sh tests/integration/heapprofd_e2e.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"

T=heapprofd_e2e
svc_require_bins traced perfetto heapprofd hp/hp_known
PRELOAD="$OUT/lib/libheapprofd_glibc_preload.so"
UP_TP=${UPSTREAM_TP:-}
# The shared folder sits beside the checkout (or beside a worktree's parent).
for _d in "$ROOT/../shared" "$ROOT/../../shared"; do
	[ -z "$UP_TP" ] && [ -x "$_d/upstream/bin/trace_processor_shell" ] &&
		UP_TP="$_d/upstream/bin/trace_processor_shell"
done

if ! svc_start_traced traced; then
	fail $T/traced_start "traced did not start: $(svc_errtail traced)"
	summary
	exit 1
fi

# session NAME ARGS...: record hp_known ARGS under a session; the trace is
# $SVC_TMP/NAME.pftrace.
session() {
	local _n _i
	_n=$1
	shift
	svc_cfg "$_n" 'buffers { size_kb: 65536 }
duration_ms: 120000
data_sources {
  config {
    name: "android.heapprofd"
    heapprofd_config {
      sampling_interval_bytes: 4096
      process_cmdline: "hp_known"
      block_client: true
    }
  }
}'
	_i=$(grep -c "session .* started" "$SVC_TMP/traced.err")
	svc_bg "$_n.perfetto" "$OUT/perfetto" --txt -c "$SVC_TMP/$_n.pbtxt" -o "$SVC_TMP/$_n.pftrace"
	if ! svc_wait_for 10 _session_started "$_i"; then
		fail "$T/$_n/session" "no session started: $(svc_errtail "$_n.perfetto")"
		return 1
	fi
	if ! PERFETTO_HEAPPROFD_BLOCKING_INIT=1 LD_PRELOAD="$PRELOAD" \
		timeout -k 3 "$(svc_ms 60)" "$OUT/hp/hp_known" --no-wait "$@" \
		>"$SVC_TMP/$_n.prog.out" 2>"$SVC_TMP/$_n.prog.err"; then
		fail "$T/$_n/run" "hp_known failed: $(tail -n 3 "$SVC_TMP/$_n.prog.err" | tr '\n' ' ')"
		return 1
	fi
	# The private heapprofd dumps when its process is gone.
	if ! svc_wait_for 20 grep -q "dumped pid" "$SVC_TMP/$_n.prog.err"; then
		fail "$T/$_n/dump" "no dump: $(tail -n 3 "$SVC_TMP/$_n.prog.err" | tr '\n' ' ')"
		return 1
	fi
	kill -INT "$(svc_pid "$_n.perfetto")"
	if ! svc_wait "$_n.perfetto" 20 || [ "$(svc_rc "$_n.perfetto")" != 0 ]; then
		fail "$T/$_n/perfetto" "perfetto: $(svc_errtail "$_n.perfetto")"
		return 1
	fi
	pass "$T/$_n/recorded"
}

_session_started() {
	[ "$(grep -c "session .* started" "$SVC_TMP/traced.err")" -gt "$1" ]
}

# within NAME GOT WANT: GOT within 5% of WANT.
within() {
	if [ -n "$2" ] && awk -v g="$2" -v w="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= w * 0.05) }'; then
		pass "$1"
	else
		fail "$1" "got '$2' bytes, want $3 +- 5%"
	fi
}

# verify NAME: the paths' bytes as Perfetto's trace processor reads them.
verify() {
	local _n _q _r _csv
	_n=$1
	if [ -z "$UP_TP" ] || ! [ -x "$UP_TP" ]; then
		skip "$T/$_n/upstream_tp" "no Perfetto trace_processor_shell (set UPSTREAM_TP, or ../shared/upstream)"
		return 0
	fi
	_q="$SVC_TMP/$_n.sql"
	cat >"$_q" <<'EOF'
select f.name as fn,
  sum(case when a.size > 0 then a.size else 0 end) as allocated,
  -sum(case when a.size < 0 then a.size else 0 end) as freed
from heap_profile_allocation a
join stack_profile_callsite c on a.callsite_id = c.id
join stack_profile_frame f on c.frame_id = f.id
where f.name in ('leak_a', 'churn_b', 'small_c')
group by f.name order by f.name;
EOF
	_csv="$SVC_TMP/$_n.csv"
	if ! "$UP_TP" -q "$_q" "$SVC_TMP/$_n.pftrace" >"$_csv" 2>"$SVC_TMP/$_n.tp.err"; then
		fail "$T/$_n/upstream_tp" "trace_processor_shell failed: $(tail -n 2 "$SVC_TMP/$_n.tp.err")"
		return 1
	fi
	_r=$(sed -n 's/^"leak_a",\([0-9]*\),\([0-9]*\)$/\1 \2/p' "$_csv")
	within "$T/$_n/leak_a_unreleased" "$(echo "$_r" | awk '{ print $1 - $2 }')" $((64 * 1048576 + 8192))
	_r=$(sed -n 's/^"churn_b",\([0-9]*\),\([0-9]*\)$/\1 \2/p' "$_csv")
	within "$T/$_n/churn_b_allocated" "$(echo "$_r" | awk '{ print $1 }')" $((32 * 1048576))
	if [ -n "$_r" ] && [ "$(echo "$_r" | awk '{ print $1 - $2 }')" = 0 ]; then
		pass "$T/$_n/churn_b_all_freed"
	else
		fail "$T/$_n/churn_b_all_freed" "allocated, freed: '$_r'"
	fi
	_r=$(sed -n 's/^"small_c",\([0-9]*\),\([0-9]*\)$/\1 \2/p' "$_csv")
	within "$T/$_n/small_c_unreleased" "$(echo "$_r" | awk '{ print $1 - $2 }')" $((10 * 1048576))
}

# central NAME: hp_known started before the session, profiled by a central
# heapprofd.
central() {
	local _n _sock _i
	_n=$1
	_sock="@pfc-hp-$$"
	svc_bg "$_n.heapprofd" env HEAPPROFD_NOTIFY_FD=9 "$OUT/heapprofd" --socket "$_sock"
	if ! svc_wait_for 10 _svc_ready_or_exited "$_n.heapprofd" ||
		! _svc_is_ready "$_n.heapprofd"; then
		fail "$T/$_n/heapprofd" "heapprofd not ready: $(svc_errtail "$_n.heapprofd")"
		return 1
	fi
	mkfifo "$SVC_TMP/$_n.fifo"
	svc_bg "$_n.prog" sh -c 'exec env PERFETTO_HEAPPROFD_SOCK_NAME="$1" LD_PRELOAD="$2" \
		"$3" <"$4"' sh "$_sock" "$PRELOAD" "$OUT/hp/hp_known" "$SVC_TMP/$_n.fifo"
	exec 8>"$SVC_TMP/$_n.fifo"
	if ! svc_wait_for 10 grep -q ready "$SVC_TMP/$_n.prog.out"; then
		fail "$T/$_n/run" "hp_known did not start: $(svc_errtail "$_n.prog")"
		exec 8>&-
		return 1
	fi
	svc_cfg "$_n" 'buffers { size_kb: 65536 }
duration_ms: 120000
data_sources {
  config {
    name: "android.heapprofd"
    heapprofd_config {
      sampling_interval_bytes: 4096
      process_cmdline: "hp_known"
      block_client: true
    }
  }
}'
	svc_bg "$_n.perfetto" "$OUT/perfetto" --txt -c "$SVC_TMP/$_n.pbtxt" -o "$SVC_TMP/$_n.pftrace"
	if ! svc_wait_for 10 grep -q "profiling pid" "$SVC_TMP/$_n.heapprofd.err"; then
		fail "$T/$_n/attach" "not attached: $(svc_errtail "$_n.heapprofd")"
		exec 8>&-
		return 1
	fi
	echo go >&8
	svc_wait_for 30 grep -q done "$SVC_TMP/$_n.prog.out"
	echo go >&8
	exec 8>&-
	if ! svc_wait "$_n.prog" 30 || [ "$(svc_rc "$_n.prog")" != 0 ] ||
		! svc_wait_for 20 grep -q "dumped pid" "$SVC_TMP/$_n.heapprofd.err"; then
		fail "$T/$_n/run" "hp_known: $(svc_errtail "$_n.prog"), heapprofd: $(svc_errtail "$_n.heapprofd")"
		return 1
	fi
	kill -INT "$(svc_pid "$_n.perfetto")"
	if ! svc_wait "$_n.perfetto" 20 || [ "$(svc_rc "$_n.perfetto")" != 0 ]; then
		fail "$T/$_n/perfetto" "perfetto: $(svc_errtail "$_n.perfetto")"
		return 1
	fi
	# One dump: the process's exit, not a second one for a rebinding.
	if [ "$(grep -c "dumped pid" "$SVC_TMP/$_n.heapprofd.err")" = 1 ]; then
		pass "$T/$_n/recorded"
	else
		fail "$T/$_n/recorded" "dumps: $(grep "dumped pid" "$SVC_TMP/$_n.heapprofd.err" | tr '\n' ' ')"
	fi
}

session one && verify one
session threads --threads && verify threads
central central && verify central
summary

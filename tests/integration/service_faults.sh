#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# service_faults.sh - traced against misbehaving peers. After each fault
# traced must still be alive, the well-behaved producer's data in the same
# session must be intact (every packet once, in order, payload bytes
# right), and TraceStats must say what was dropped:
#   raw/*           frames over 128 KiB, truncated and garbage frames on the
#                   producer and consumer sockets (fault_producer raw modes);
#   producer_kill   a producer SIGKILLed mid-session;
#   consumer_kill   perfetto SIGKILLed mid-session: its session goes away
#                   and a new one works;
#   smb/*           garbage chunk headers, a fragment past the chunk end,
#                   out-of-range patches, CommitData naming pages past the
#                   SMB end (fault_producer SMB modes).
# Usage: OUT=out sh tests/integration/service_faults.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"

svc_require_bins traced perfetto test_producer trace_check fault_producer

if ! svc_start_traced traced; then
	fail faults/traced_start "traced did not start: $(svc_errtail traced)"
	summary
	exit 1
fi

traced_alive() {
	svc_running traced
}

GOOD_THREADS=2
GOOD_PACKETS=300
svc_cfg session 'buffers { size_kb: 4096 fill_policy: DISCARD }
data_sources { config { name: "good.ds" } }
data_sources { config { name: "fault.ds" } }
duration_ms: 600'

# A session with the good producer (and whatever fault.ds producer is up).
# run_session NAME: trace in $SVC_TMP/NAME.pb, trace_check into NAME.tc.
run_session() {
	local _rc
	svc_perfetto "$1.perfetto" 20 --txt -c "$SVC_TMP/session.pbtxt" -o "$SVC_TMP/$1.pb"
	_rc=$?
	if [ $_rc -ne 0 ]; then
		echo "# perfetto exited $_rc: $(svc_errtail "$1.perfetto")"
		return 1
	fi
	svc_check_trace "$1" "$SVC_TMP/$1.pb" --verify-payload
	return 0
}

# good_intact NAME: the good producer's GOOD_THREADS sequences each hold
# all GOOD_PACKETS packets, once and in order (checked by a second pass of
# trace_check restricted by counts: every sequence of GOOD_PACKETS packets
# is the good producer's, the fault producer writes 16 or fewer).
good_intact() {
	local _c _n
	_n=0
	for _c in $(svc_tc "$1" seq_packet_counts | tr ',' ' '); do
		[ "$_c" -eq "$GOOD_PACKETS" ] && _n=$((_n + 1))
	done
	[ "$_n" -eq "$GOOD_THREADS" ] && [ "$(svc_tc "$1" duplicates)" = 0 ] &&
		[ "$(svc_tc "$1" bad_packets)" = 0 ] && [ "$(svc_tc "$1" payload_bad)" = 0 ]
}

if ! svc_start_producer good --ds good.ds --threads $GOOD_THREADS \
	--packets-per-thread $GOOD_PACKETS --packet-size 256 --nested-depth 2 --notify-stop; then
	fail faults/good_producer "test_producer did not register: $(svc_errtail good)"
	summary
	exit 1
fi

# ------------------------------------------------------------ raw frames ----

raw_fault() {
	local _name _rc _sock
	_name=faults/raw/$1_$2
	if [ "$2" = consumer ]; then
		_sock=$PERFETTO_CONSUMER_SOCK_NAME
	else
		_sock=$PERFETTO_PRODUCER_SOCK_NAME
	fi
	svc_bg "raw_$1_$2" "$OUT/fault_producer" --fault "$1" --sock "$_sock"
	svc_wait "raw_$1_$2" 10
	_rc=$?
	if [ $_rc -ne 0 ]; then
		fail "$_name" "fault_producer exited $_rc: $(svc_errtail "raw_$1_$2")"
	elif ! traced_alive; then
		fail "$_name" "traced died: $(svc_errtail traced)"
	else
		pass "$_name"
	fi
}

for sock in producer consumer; do
	for mode in big-frame truncated-frame garbage-frame; do
		raw_fault "$mode" "$sock"
	done
done

# traced still serves a whole session after the raw faults.
if run_session raw_after && good_intact raw_after && traced_alive; then
	pass faults/raw/session_after
else
	fail faults/raw/session_after "after raw faults: $(svc_why raw_after) counts=$(svc_tc raw_after seq_packet_counts)"
fi
[ -f "$SVC_TMP/raw_after.pb" ] && svc_decode faults/raw/session_after "$SVC_TMP/raw_after.pb"

# --------------------------------------------------------- producer kill ----

# A second producer keeps writing (1 packet per ms) and is SIGKILLed while
# the session runs; the session still completes with the good producer's
# data intact and the victim's committed prefix in order.
if svc_start_producer victim --ds fault.ds --threads 1 --packets-per-thread 1000000 \
	--packet-size 200 --emit-on-start --packet-interval-us 1000; then
	svc_bg pk.perfetto "$OUT/perfetto" --txt -c "$SVC_TMP/session.pbtxt" -o "$SVC_TMP/pk.pb"
	sleep 0.3
	svc_kill victim KILL
	svc_wait pk.perfetto 20
	rc=$?
	svc_check_trace pk "$SVC_TMP/pk.pb" --verify-payload
	vic=$(svc_tc pk test_sequences)
	if [ $rc -ne 0 ]; then
		fail faults/producer_kill "perfetto exited $rc: $(svc_errtail pk.perfetto)"
	elif ! traced_alive; then
		fail faults/producer_kill "traced died: $(svc_errtail traced)"
	elif ! good_intact pk; then
		fail faults/producer_kill "good producer's data damaged: $(svc_why pk) counts=$(svc_tc pk seq_packet_counts)"
	elif [ "$vic" != $((GOOD_THREADS + 1)) ] || [ "$(svc_tc pk gaps)" != 0 ]; then
		fail faults/producer_kill "want the victim's committed prefix as one gap-free sequence: sequences=$vic gaps=$(svc_tc pk gaps)"
	else
		pass faults/producer_kill
	fi
	svc_decode faults/producer_kill "$SVC_TMP/pk.pb"
else
	fail faults/producer_kill "victim producer did not start: $(svc_errtail victim)"
fi

# --------------------------------------------------------- consumer kill ----

n_sessions() {
	"$OUT/perfetto" --query 2>/dev/null | sed -n 's/^Tracing sessions: \([0-9]*\).*/\1/p'
}
sessions_are() {
	[ "$(n_sessions)" = "$1" ]
}

svc_cfg long 'buffers { size_kb: 1024 }
data_sources { config { name: "good.ds" } }
duration_ms: 30000'
svc_bg ck.perfetto "$OUT/perfetto" --txt -c "$SVC_TMP/long.pbtxt" -o "$SVC_TMP/ck.pb"
if ! svc_wait_for 5 sessions_are 1; then
	fail faults/consumer_kill "the session never showed in --query: $(svc_errtail ck.perfetto)"
else
	svc_kill ck.perfetto KILL
	if ! traced_alive; then
		fail faults/consumer_kill "traced died: $(svc_errtail traced)"
	elif ! svc_wait_for 5 sessions_are 0; then
		fail faults/consumer_kill "the killed consumer's session is still there: $(n_sessions) sessions"
	elif ! run_session ck_after || ! good_intact ck_after; then
		fail faults/consumer_kill "a new session after the kill failed: $(svc_why ck_after) counts=$(svc_tc ck_after seq_packet_counts)"
	else
		pass faults/consumer_kill
	fi
fi

# ------------------------------------------------------------ SMB faults ----

# smb_fault MODE STATS_CHECK: one session with the good producer and a
# fault_producer doing MODE. STATS_CHECK is a shell test on the trace's
# counters (abi, pf: patches_failed, pd: patches_discarded).
smb_fault() {
	local _m _name
	_m=$1
	_name=faults/smb/$_m
	if ! svc_start_fault "f_$_m" --fault "$_m" --ds fault.ds; then
		fail "$_name" "fault_producer did not register: $(svc_errtail "f_$_m")"
		return
	fi
	pd0=$(svc_tc raw_after stats_patches_discarded)
	if ! run_session "$_m"; then
		fail "$_name" "the session failed: $(svc_errtail "$_m.perfetto")"
		svc_kill "f_$_m"
		return
	fi
	abi=$(svc_tc "$_m" stats_abi_violations)
	pf=$(svc_tc "$_m" stats_patches_failed)
	pd=$(svc_tc "$_m" stats_patches_discarded)
	# The fault producer's own valid packets (counter 100): 16, in order.
	fp=$(svc_tc "$_m" seq_packet_counts)
	if ! traced_alive; then
		fail "$_name" "traced died: $(svc_errtail traced)"
	elif ! good_intact "$_m"; then
		fail "$_name" "good producer's data damaged: $(svc_why "$_m") counts=$fp"
	elif ! echo ",$fp," | grep -q ',16,'; then
		fail "$_name" "the fault producer's valid chunks around the fault are missing: counts=$fp"
	elif ! eval "$2"; then
		fail "$_name" "TraceStats does not show the drop ($2): abi_violations=$abi patches_failed=$pf patches_discarded=$pd"
	else
		pass "$_name"
	fi
	svc_decode "$_name" "$SVC_TMP/$_m.pb"
	svc_kill "f_$_m"
}

smb_fault none '[ "$abi" = 0 ] && [ "$pf" = 0 ]'
smb_fault bad-writer-id '[ "$abi" -gt 0 ]'
smb_fault huge-count '[ "$abi" -gt 0 ]'
smb_fault frag-past-end '[ "$abi" -gt 0 ]'
smb_fault bad-patch '[ "$pf" -ge 3 ] && [ "$pd" -gt 0 ]'
smb_fault page-past-end '[ "$abi" -gt 0 ]'

# Garbage from the fault producer never shows up as its own packets
# except for the valid prefix of the corrupted chunks.
for m in bad-writer-id page-past-end; do
	[ -f "$SVC_TMP/$m.tc" ] || continue
	if [ "$(svc_tc "$m" test_sequences)" = $((GOOD_THREADS + 1)) ]; then
		pass "faults/smb/$m/garbage_dropped"
	else
		fail "faults/smb/$m/garbage_dropped" "sequences=$(svc_tc "$m" test_sequences) counts=$(svc_tc "$m" seq_packet_counts)"
	fi
done

if svc_stop_traced traced; then
	pass faults/traced_clean_exit
else
	fail faults/traced_clean_exit "traced exited $(svc_rc traced) on SIGTERM: $(svc_errtail traced 5)"
fi

summary

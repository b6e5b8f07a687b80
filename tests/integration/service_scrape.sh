#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# service_scrape.sh - SMB scraping (Perfetto's ScrapeSharedMemoryBuffers):
# what a producer wrote into its shared memory but never committed still
# reaches the trace when the flush times out, the session stops or the
# producer dies. fault_producer --fault hang commits chunk 0 (seq 0..7),
# leaves chunk 1 Complete but uncommitted (8..15) and chunk 2 BeingWritten
# with 5 whole packets (16..20) and a sixth counted (seq 21) that must not
# show up; it never answers a flush.
#   scrape/hang_stop      the session ends with the producer still hung
#   scrape/log_counts     traced's log says how many chunks it scraped
#   scrape/hang_kill      the producer is SIGKILLed mid-session
#   scrape/noscrape       a producer that did not ask: only chunk 0
#   scrape/garbage_smb    random bytes over a scraped SMB: traced lives and
#                         the good producer's data is intact
#   scrape/sdk_kill       test_producer (real trace writer) killed mid-write:
#                         the packets up to the kill, gap-free
#   scrape/flush_timeout_file  periodic flushes that time out scrape: the
#                         packets are in the write_into_file file before
#                         traced is SIGKILLed
#   scrape/flush_timeout_log_limited  those repeated timeouts are logged
#                         once (with the silent producer's name), not each
# Usage: OUT=out sh tests/integration/service_scrape.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"

svc_require_bins traced perfetto test_producer trace_check fault_producer

if ! svc_start_traced traced; then
	fail scrape/traced_start "traced did not start: $(svc_errtail traced)"
	summary
	exit 1
fi

GOOD_PACKETS=200
if ! svc_start_producer good --ds good.ds --threads 1 --packets-per-thread $GOOD_PACKETS \
	--packet-size 128 --notify-stop; then
	fail scrape/good_producer "test_producer did not register: $(svc_errtail good)"
	summary
	exit 1
fi

# The flush of a hung producer times out after 300 ms.
svc_cfg short 'buffers { size_kb: 1024 fill_policy: DISCARD }
data_sources { config { name: "good.ds" } }
data_sources { config { name: "fault.ds" } }
flush_timeout_ms: 300
duration_ms: 500'
svc_cfg long 'buffers { size_kb: 1024 fill_policy: DISCARD }
data_sources { config { name: "good.ds" } }
data_sources { config { name: "fault.ds" } }
flush_timeout_ms: 300
duration_ms: 2500'

# seq_list NAME: the fault producer's seq values (counter 100), sorted.
good_ok() {
	echo ",$(svc_tc "$1" seq_packet_counts)," | grep -q ",$GOOD_PACKETS," &&
		[ "$(svc_tc "$1" duplicates)" = 0 ] && [ "$(svc_tc "$1" bad_packets)" = 0 ]
}

# hang_case NAME MODE CFG WANT [kill]: a session with the good producer
# and fault_producer MODE; the fault sequence must hold WANT packets.
hang_case() {
	local _n _rc _counts
	_n=scrape/$1
	if ! svc_start_fault "f_$1" --fault "$2" --ds fault.ds; then
		fail "$_n" "fault_producer did not register: $(svc_errtail "f_$1")"
		return
	fi
	svc_bg "$1.perfetto" "$OUT/perfetto" --txt -c "$SVC_TMP/$3.pbtxt" -o "$SVC_TMP/$1.pb"
	if [ "$5" = kill ]; then
		sleep 1
		svc_kill "f_$1" KILL
	fi
	svc_wait "$1.perfetto" 20
	_rc=$?
	svc_check_trace "$1" "$SVC_TMP/$1.pb" --allow-loss
	_counts=$(svc_tc "$1" seq_packet_counts)
	if [ $_rc -ne 0 ]; then
		fail "$_n" "perfetto exited $_rc: $(svc_errtail "$1.perfetto")"
	elif ! svc_running traced; then
		fail "$_n" "traced died: $(svc_errtail traced)"
	elif ! good_ok "$1"; then
		fail "$_n" "good producer's data damaged: $(svc_why "$1") counts=$_counts"
	elif [ -n "$4" ] && ! echo ",$_counts," | grep -q ",$4,"; then
		fail "$_n" "want a fault sequence of $4 packets: counts=$_counts gaps=$(svc_tc "$1" gaps)"
	elif [ -n "$4" ] && [ "$(svc_tc "$1" gaps)" != 0 ]; then
		fail "$_n" "the scraped sequence has gaps: $(svc_tc "$1" gaps)"
	else
		pass "$_n"
	fi
	svc_kill "f_$1"
}

hang_case hang_stop hang short 21
# traced's log counts what it scraped (no TraceStats field has it).
if grep -q 'stopped, [1-9][0-9]* chunks scraped' "$SVC_TMP/traced.err"; then
	pass scrape/log_counts
else
	fail scrape/log_counts "no 'N chunks scraped' in traced's log: $(grep 'stopped' "$SVC_TMP/traced.err" | tail -n 2 | tr '\n' ' ')"
fi
hang_case hang_kill hang long 21 kill
hang_case noscrape hang-noscrape short 8
hang_case garbage_smb garbage-smb short ""

# A real trace writer killed mid-write: with scraping, the sequence holds
# the packets written up to the kill (at 1 per ms for ~1 s: hundreds), in
# order, even the ones of the chunk it was filling. A gap is allowed only
# where the trace says packets were dropped (previous_packet_dropped: the
# writer found its shared memory full on a busy machine, or traced lost a
# chunk), never a silent one.
if svc_start_producer victim --ds fault.ds --threads 1 --packets-per-thread 1000000 \
	--packet-size 200 --emit-on-start --packet-interval-us 1000 --smb-scraping; then
	svc_bg sk.perfetto "$OUT/perfetto" --txt -c "$SVC_TMP/long.pbtxt" -o "$SVC_TMP/sk.pb"
	sleep 1
	svc_kill victim KILL
	svc_wait sk.perfetto 20
	rc=$?
	svc_check_trace sk "$SVC_TMP/sk.pb" --verify-payload --allow-loss
	counts=$(svc_tc sk seq_packet_counts)
	vic=$(echo "$counts" | tr ',' '\n' | grep -v "^$GOOD_PACKETS\$" | head -n 1)
	if [ $rc -ne 0 ]; then
		fail scrape/sdk_kill "perfetto exited $rc: $(svc_errtail sk.perfetto)"
	elif ! svc_running traced; then
		fail scrape/sdk_kill "traced died: $(svc_errtail traced)"
	elif ! good_ok sk; then
		fail scrape/sdk_kill "good producer's data damaged: $(svc_why sk) counts=$counts"
	elif [ -z "$vic" ] || [ "$vic" -lt 100 ] || [ "$(svc_tc sk unflagged_gaps)" != 0 ] ||
		[ "$(svc_tc sk payload_bad)" != 0 ]; then
		SVC_KEEP_TMP=1
		fail scrape/sdk_kill "want the victim's packets up to the kill, no gap the trace does not flag as a drop: counts=$counts gaps=$(svc_tc sk gaps) unflagged=$(svc_tc sk unflagged_gaps) dropped_flags=$(svc_tc sk dropped_flags) payload_bad=$(svc_tc sk payload_bad) (trace kept in $SVC_TMP)"
	else
		pass scrape/sdk_kill
	fi
else
	fail scrape/sdk_kill "victim producer did not start: $(svc_errtail victim)"
fi

if svc_stop_traced traced; then
	pass scrape/traced_clean_exit
else
	fail scrape/traced_clean_exit "traced exited $(svc_rc traced) on SIGTERM: $(svc_errtail traced 5)"
fi

# Periodic flushes that time out scrape too: with write_into_file the hung
# producer's 21 packets reach the file long before the session ends, so
# they are there even though traced is SIGKILLed mid-session.
svc_cfg flushfile 'buffers { size_kb: 1024 fill_policy: RING_BUFFER }
data_sources { config { name: "fault.ds" } }
write_into_file: true
file_write_period_ms: 100
flush_period_ms: 200
flush_timeout_ms: 100
duration_ms: 20000'
if ! svc_start_traced t2; then
	fail scrape/flush_timeout_file "traced did not start: $(svc_errtail t2)"
elif ! svc_start_fault f_ff --fault hang --ds fault.ds; then
	fail scrape/flush_timeout_file "fault_producer did not register: $(svc_errtail f_ff)"
else
	svc_bg ff.perfetto "$OUT/perfetto" --txt -c "$SVC_TMP/flushfile.pbtxt" -o "$SVC_TMP/ff.pb"
	sleep 1.5
	kill -KILL "$(svc_pid t2)"
	svc_wait ff.perfetto 10
	svc_check_trace ff "$SVC_TMP/ff.pb" --allow-loss
	if [ "$(svc_tc ff seq_packet_counts)" = 21 ] && [ "$(svc_tc ff gaps)" = 0 ]; then
		pass scrape/flush_timeout_file
	else
		fail scrape/flush_timeout_file "want 21 packets in the file: counts=$(svc_tc ff seq_packet_counts) gaps=$(svc_tc ff gaps) $(svc_why ff)"
	fi
	# Six or so periodic flushes timed out; the log says so once a minute.
	n=$(grep -c 'timed out with' "$SVC_TMP/t2.err")
	if [ "$n" = 1 ] && grep -q 'not answering (first: ' "$SVC_TMP/t2.err"; then
		pass scrape/flush_timeout_log_limited
	else
		fail scrape/flush_timeout_log_limited "$n timeout lines: $(grep 'timed out' "$SVC_TMP/t2.err" | head -n 3 | tr '\n' ' ')"
	fi
	svc_kill f_ff
fi

summary

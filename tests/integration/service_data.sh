#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# service_data.sh - the data path end to end (test_producer -> SMB ->
# traced buffers -> perfetto -> file), checked packet by packet:
#   discard/*  DISCARD buffer under capacity, 1 and 4 writer threads: every
#              packet exactly once, in order per sequence, payload bytes
#              intact, service packets present, TraceStats adding up;
#   ring/*     a 256 KiB RING_BUFFER given ~1-4 MB: the newest data
#              survives (each surviving sequence ends with its is_last
#              packet and is contiguous back from it), the oldest is gone,
#              and bytes/chunks_overwritten account for what is missing;
#   large/*    packets larger than a chunk (6 KB), a page (40 KB) and the
#              whole 256 KiB SMB (600 KB), nested 3 deep so the nested
#              lengths span chunks and are patched: all intact.
# Every trace also goes through protoc --decode.
# Usage: OUT=out sh tests/integration/service_data.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"

svc_require_bins traced perfetto test_producer trace_check

if ! svc_start_traced traced; then
	fail data/traced_start "traced did not start: $(svc_errtail traced)"
	summary
	exit 1
fi

# record NAME CONFIG_TEXT: one perfetto session into $SVC_TMP/NAME.pb.
record() {
	local _rc
	svc_cfg "$1" "$2"
	svc_perfetto "$1.perfetto" 30 --txt -c "$SVC_TMP/$1.pbtxt" -o "$SVC_TMP/$1.pb"
	_rc=$?
	if [ $_rc -ne 0 ]; then
		echo "# perfetto exited $_rc: $(svc_errtail "$1.perfetto")"
		return 1
	fi
}

# ------------------------------------------------------------ DISCARD ----

discard_case() {
	local _bad _k _miss _name _per _t
	_t=$1
	_name=data/discard/threads_$_t
	_per=3000
	if ! svc_start_producer "d$_t" --ds "d$_t.ds" --threads "$_t" --packets-per-thread $_per \
		--packet-size 300 --notify-stop; then
		fail "$_name" "producer did not start: $(svc_errtail "d$_t")"
		return
	fi
	if ! record "d$_t" "buffers { size_kb: 16384 fill_policy: DISCARD }
data_sources { config { name: \"d$_t.ds\" } }
duration_ms: 300"; then
		fail "$_name" "perfetto failed: $(svc_errtail "d$_t.perfetto")"
		svc_kill "d$_t"
		return
	fi
	if ! svc_check_trace "d$_t" "$SVC_TMP/d$_t.pb" --expect-seqs "$_t" --expect-per-seq $_per \
		--verify-payload --check-stats; then
		fail "$_name" "$(svc_why "d$_t")"
	elif [ "$(svc_tc "d$_t" filler_min)" != 252 ] || [ "$(svc_tc "d$_t" filler_max)" != 252 ]; then
		fail "$_name" "filler lengths $(svc_tc "d$_t" filler_min)..$(svc_tc "d$_t" filler_max), want 252"
	elif [ "$(svc_tc "d$_t" seqs_with_last)" != "$_t" ]; then
		fail "$_name" "$(svc_tc "d$_t" seqs_with_last) of $_t sequences end with is_last"
	else
		pass "$_name"
	fi
	# The service's own packets.
	_miss=""
	for _k in clock_snapshots trace_configs system_infos trace_stats uuids; do
		[ "$(svc_tc "d$_t" $_k)" -ge 1 ] 2>/dev/null || _miss="$_miss $_k"
	done
	if [ -n "$_miss" ]; then
		fail "$_name/service_packets" "missing:$_miss"
	else
		pass "$_name/service_packets"
	fi
	# Nothing lost, nothing overwritten, nothing discarded, no drop flags.
	_bad=""
	for _k in dropped_flags stats_bytes_overwritten stats_chunks_overwritten \
		stats_chunks_discarded stats_abi_violations stats_patches_failed \
		stats_writer_packet_loss stats_invalid_packets; do
		[ "$(svc_tc "d$_t" $_k)" = 0 ] || _bad="$_bad $_k=$(svc_tc "d$_t" $_k)"
	done
	if [ -n "$_bad" ]; then
		fail "$_name/no_loss_counters" "$_bad"
	else
		pass "$_name/no_loss_counters"
	fi
	svc_decode "$_name" "$SVC_TMP/d$_t.pb"
	svc_kill "d$_t"
}

discard_case 1
discard_case 4

# A DISCARD buffer that fills up keeps the oldest data: each sequence is a
# gap-free prefix starting at 0, and chunks_discarded counts the rest.
if svc_start_producer dfull --ds dfull.ds --threads 1 --packets-per-thread 4000 \
	--packet-size 300 --notify-stop &&
	record dfull 'buffers { size_kb: 128 fill_policy: DISCARD }
data_sources { config { name: "dfull.ds" } }
duration_ms: 300'; then
	svc_check_trace dfull "$SVC_TMP/dfull.pb" --allow-loss --verify-payload --check-stats
	n=$(svc_tc dfull test_packets)
	if [ "$(svc_tc dfull ok)" != 1 ]; then
		fail data/discard/full "$(svc_why dfull)"
	elif [ "$(svc_tc dfull gaps)" != 0 ] || [ "$n" -lt 100 ] || [ "$n" -ge 4000 ]; then
		fail data/discard/full "want a gap-free prefix: packets=$n gaps=$(svc_tc dfull gaps)"
	elif [ "$(svc_tc dfull stats_chunks_discarded)" -eq 0 ] ||
		[ "$(svc_tc dfull stats_chunks_overwritten)" != 0 ]; then
		fail data/discard/full "chunks_discarded=$(svc_tc dfull stats_chunks_discarded) chunks_overwritten=$(svc_tc dfull stats_chunks_overwritten)"
	else
		pass data/discard/full
	fi
	svc_decode data/discard/full "$SVC_TMP/dfull.pb"
else
	fail data/discard/full "session failed: $(svc_errtail dfull.perfetto) $(svc_errtail dfull)"
fi
svc_kill dfull

# --------------------------------------------------------- RING_BUFFER ----

# ring_case THREADS PACKETS: 256 KiB ring buffer, THREADS x PACKETS x 300 B.
ring_case() {
	local _n _name _per _t
	_t=$1
	_per=$2
	_n=r$_t
	_name=data/ring/threads_$_t
	if ! svc_start_producer $_n --ds $_n.ds --threads "$_t" --packets-per-thread "$_per" \
		--packet-size 300 --notify-stop; then
		fail "$_name" "producer did not start: $(svc_errtail $_n)"
		return
	fi
	if ! record $_n "buffers { size_kb: 256 fill_policy: RING_BUFFER }
data_sources { config { name: \"$_n.ds\" } }
duration_ms: 300"; then
		fail "$_name" "perfetto failed"
		svc_kill $_n
		return
	fi
	# --allow-head-loss: every sequence present ends with is_last and has
	# no gap after its first packet; --check-stats: written = read +
	# overwritten (bytes and chunks), producer bytes <= bytes read.
	svc_check_trace $_n "$SVC_TMP/$_n.pb" --allow-head-loss --verify-payload --check-stats
	seqs=$(svc_tc $_n test_sequences)
	got=$(svc_tc $_n test_packets)
	total=$((_t * _per))
	bw=$(svc_tc $_n stats_bytes_written)
	bo=$(svc_tc $_n stats_bytes_overwritten)
	br=$(svc_tc $_n stats_bytes_read)
	co=$(svc_tc $_n stats_chunks_overwritten)
	if [ "$(svc_tc $_n ok)" != 1 ]; then
		fail "$_name" "$(svc_why $_n)"
	elif [ "$seqs" -lt 1 ] || [ "$seqs" -gt "$_t" ] || [ "$got" -ge "$total" ]; then
		fail "$_name" "want 1..$_t sequences and some loss: sequences=$seqs packets=$got of $total"
	elif [ "$bo" -eq 0 ] || [ "$co" -eq 0 ]; then
		fail "$_name" "data was lost but bytes_overwritten=$bo chunks_overwritten=$co"
	elif [ "$br" -gt 262144 ]; then
		fail "$_name" "read $br bytes out of a 256 KiB buffer"
	elif [ "$(svc_tc $_n dropped_bits)" -lt 64 ] ||
		[ $(($(svc_tc $_n dropped_bits) & 64)) -eq 0 ]; then
		fail "$_name" "no previous_packet_dropped OVERWRITE bit on the surviving sequences (bits=$(svc_tc $_n dropped_bits))"
	else
		# What is missing, at the average stored size of what survived,
		# is what was overwritten (within 3% + 2 chunks of slack).
		if awk -v miss=$((total - got)) -v got="$got" -v br="$br" -v bo="$bo" 'BEGIN {
			est = miss * br / got; d = est - bo; if (d < 0) d = -d;
			exit !(d <= 0.03 * bo + 8192) }'; then
			pass "$_name"
		else
			fail "$_name" "$((total - got)) packets missing (~$(awk -v m=$((total - got)) -v g="$got" -v b="$br" 'BEGIN{printf "%d", m*b/g}') bytes) but bytes_overwritten=$bo"
		fi
	fi
	svc_decode "$_name" "$SVC_TMP/$_n.pb"
	svc_kill $_n
}

ring_case 1 4000
ring_case 4 3000

# ------------------------------------------------------ large packets ----

# large_case SIZE PACKETS: packets of SIZE bytes, nested depth 3.
large_case() {
	local _n _name _per _sz
	_sz=$1
	_per=$2
	_n=l$_sz
	_name=data/large/$_sz
	if ! svc_start_producer $_n --ds $_n.ds --threads 2 --packets-per-thread "$_per" \
		--packet-size "$_sz" --nested-depth 3 --notify-stop; then
		fail "$_name" "producer did not start: $(svc_errtail $_n)"
		return
	fi
	if ! record $_n "buffers { size_kb: 16384 fill_policy: DISCARD }
data_sources { config { name: \"$_n.ds\" } }
duration_ms: 300"; then
		fail "$_name" "perfetto failed"
		svc_kill $_n
		return
	fi
	want_fill=$((_sz - 48 - 24))
	if ! svc_check_trace $_n "$SVC_TMP/$_n.pb" --expect-seqs 2 --expect-per-seq "$_per" \
		--verify-payload --check-stats; then
		fail "$_name" "$(svc_why $_n)"
	elif [ "$(svc_tc $_n filler_min)" != $want_fill ] || [ "$(svc_tc $_n filler_max)" != $want_fill ]; then
		fail "$_name" "filler lengths $(svc_tc $_n filler_min)..$(svc_tc $_n filler_max), want $want_fill"
	elif [ "$(svc_tc $_n stats_patches_failed)" != 0 ] || [ "$(svc_tc $_n stats_abi_violations)" != 0 ]; then
		fail "$_name" "patches_failed=$(svc_tc $_n stats_patches_failed) abi_violations=$(svc_tc $_n stats_abi_violations)"
	elif [ "$(svc_tc $_n stats_patches_succeeded)" -eq 0 ]; then
		fail "$_name" "packets span chunks but no patch was applied"
	else
		pass "$_name"
	fi
	svc_decode "$_name" "$SVC_TMP/$_n.pb"
	svc_kill $_n
}

large_case 6000 40
large_case 40000 8
large_case 600000 3

if svc_stop_traced traced; then
	pass data/traced_clean_exit
else
	fail data/traced_clean_exit "traced exited $(svc_rc traced) on SIGTERM: $(svc_errtail traced 5)"
fi

summary

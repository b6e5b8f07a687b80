#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# service_file_kill.sh - a write_into_file trace survives traced being
# SIGKILLed: traced writes whole packets only (every file_write_period_ms),
# so the file holds everything up to its last write, and imports. A file
# cut inside its last packet (a write the kill interrupted) imports too,
# with the loss in stats (proto_trace_truncated), not a crash.
#   file_kill/plain       write_into_file, file_write_period_ms 100, killed once the file holds 400 packets
#   file_kill/deflate     the same with compression (compressed_packets)
#   file_kill/*/import    trace_processor_shell imports the file
#   file_kill/*/cut       the file cut 7 bytes short: imported, truncation counted
# Usage: OUT=out sh tests/integration/service_file_kill.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"

svc_require_bins traced perfetto test_producer trace_check trace_processor_shell

RATE_US=1000

# tp NAME FILE QUERY: one value from trace_processor_shell (CSV, no header).
tp() {
	"$OUT/trace_processor_shell" -q /dev/stdin "$2" >"$SVC_TMP/$1.tp" \
		2>"$SVC_TMP/$1.tperr" <<EOF
$3
EOF
}

# file_has_packets NAME N: the file being written holds N packets of the
# producer's sequence (whole packets only: traced writes no partial one).
file_has_packets() {
	svc_check_trace "$1.live" "$SVC_TMP/$1.pb" --allow-loss &&
		[ "$(svc_tc "$1.live" seq_packet_counts)" -ge "$2" ] 2>/dev/null
}

# kill_case NAME EXTRA_CONFIG
kill_case() {
	local _n _rc _t0 _ms _vic _size
	_n=file_kill/$1
	if ! svc_start_traced "t_$1"; then
		fail "$_n" "traced did not start: $(svc_errtail "t_$1")"
		return
	fi
	if ! svc_start_producer "p_$1" --ds steady.ds --threads 1 --packets-per-thread 1000000 \
		--packet-size 200 --emit-on-start --packet-interval-us $RATE_US; then
		fail "$_n" "producer did not start: $(svc_errtail "p_$1")"
		return
	fi
	svc_cfg "$1" "buffers { size_kb: 2048 fill_policy: RING_BUFFER }
data_sources { config { name: \"steady.ds\" } }
write_into_file: true
file_write_period_ms: 100
duration_ms: 30000
$2"
	svc_bg "$1.perfetto" "$OUT/perfetto" --txt -c "$SVC_TMP/$1.pbtxt" -o "$SVC_TMP/$1.pb"
	_t0=$(svc_now_ms)
	# Killed once the file holds 400 packets (about 0.5 s of them; however
	# long a busy machine takes to write them), not after a fixed time.
	svc_wait_for 60 file_has_packets "$1" 400
	kill -KILL "$(svc_pid "t_$1")"
	_ms=$(($(svc_now_ms) - _t0))
	svc_wait "$1.perfetto" 10
	svc_kill "p_$1"
	_size=$(svc_file_size "$SVC_TMP/$1.pb")
	svc_check_trace "$1" "$SVC_TMP/$1.pb" --allow-loss
	_vic=$(svc_tc "$1" seq_packet_counts)
	# At ~1 packet per ms for ~1 s, minus startup and the last 100 ms.
	if [ -n "$(svc_tc "$1" parse_error)" ]; then
		fail "$_n" "the file does not parse: $(svc_why "$1") size=$_size"
	elif [ -z "$_vic" ] || [ "$_vic" -lt 300 ] || [ "$_vic" -gt "$_ms" ]; then
		fail "$_n" "want the packets up to the kill (~$_ms ms at 1/ms): counts=$_vic size=$_size"
	elif [ "$(svc_tc "$1" gaps)" != 0 ] || [ "$(svc_tc "$1" duplicates)" != 0 ]; then
		fail "$_n" "gaps=$(svc_tc "$1" gaps) duplicates=$(svc_tc "$1" duplicates)"
	else
		pass "$_n"
		echo "# $1: $_vic packets in $_size bytes, traced killed after $_ms ms"
	fi
	if tp "$1" "$SVC_TMP/$1.pb" "select count(*) from stats where name = 'proto_trace_truncated' and value > 0;" &&
		[ "$(tail -n 1 "$SVC_TMP/$1.tp")" = 0 ]; then
		pass "$_n/import"
	else
		fail "$_n/import" "trace_processor_shell: $(tail -n 2 "$SVC_TMP/$1.tperr" | tr '\n' ' ') $(tail -n 1 "$SVC_TMP/$1.tp")"
	fi
	# A write cut short by the kill: the last packet is partial.
	head -c $((_size - 7)) "$SVC_TMP/$1.pb" >"$SVC_TMP/$1.cut.pb"
	if tp "$1.cut" "$SVC_TMP/$1.cut.pb" "select value from stats where name = 'proto_trace_truncated';" &&
		[ "$(tail -n 1 "$SVC_TMP/$1.cut.tp")" = 1 ]; then
		pass "$_n/cut"
	else
		fail "$_n/cut" "want proto_trace_truncated = 1: $(tail -n 2 "$SVC_TMP/$1.cut.tperr" | tr '\n' ' ') got '$(tail -n 1 "$SVC_TMP/$1.cut.tp")'"
	fi
}

kill_case plain ""
kill_case deflate "compression { deflate {} }"

summary

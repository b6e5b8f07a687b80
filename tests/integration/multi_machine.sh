#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# multi_machine.sh - one trace across "machines" on this kernel (mm_lib.sh:
# network namespaces joined by veth pairs, each guest with its own boot id).
# The host runs traced (TCP relay endpoints on the veths plus a UNIX
# socket) and a producer; each guest runs traced_relay and a producer that
# connects to the relay. Checks:
#   rows/*         machine rows and stamping: every guest packet arrives
#                  with its machine id (FNV-1a of the guest's boot id), the
#                  machine table names each machine, perfetto --query shows
#                  the MACHINE column;
#   dispatch/*     host only by default (and the CLI says what it left out,
#                  or that no other machine is connected), trace_all_machines,
#                  machine_name_filter with "host";
#   tcp/*          traced_probes straight over TCP (SMB emulation, no relay);
#   restart/*      the relay restarts, the host traced restarts, a producer
#                  connects before the host is up: data flows again;
#   frames/*       a guest producer with hundreds of KiB per flush passes
#                  the 128 KiB frame limit intact;
#   loss/*         a guest producer overfilling a DISCARD buffer: what is
#                  missing is counted in the trace's stats.
# With UPSTREAM_TRACEBOX (a Perfetto tracebox), Perfetto's own `perfetto
# --query` must print what ours prints.
# Usage: OUT=out sh tests/integration/multi_machine.sh (root)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"
. "$(dirname "$0")/mm_lib.sh"

svc_require_bins traced traced_relay perfetto test_producer trace_check trace_processor_shell \
	fault_producer
mm_require multi_machine

PORT=20301
HOST_UNIX=$SVC_TMP/host.p.sock
export PERFETTO_CONSUMER_SOCK_NAME=$SVC_TMP/host.c.sock

machine_id_of() {
	python3 -c '
import sys
h = 0xcbf29ce484222325
for b in sys.argv[1].encode():
    h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
print((h & 0xffffffff) or 1)' "$1"
}

sql() {
	"$OUT/trace_processor_shell" -Q "$2" "$1" 2>"$SVC_TMP/tp.err" | tail -n +2
}

# The host traced in the host namespace: relay endpoints on both veths.
start_host() {
	svc_bg traced env TRACED_NOTIFY_FD=9 \
		PERFETTO_PRODUCER_SOCK_NAME="$(mm_host_ip 1):$PORT,$(mm_host_ip 2):$PORT,$HOST_UNIX" \
		ip netns exec "$MM_HOST" "$OUT/traced" --enable-relay-endpoint
	svc_wait_for 10 _svc_ready_or_exited traced && _svc_is_ready traced && svc_running traced
}

# start_relay N: traced_relay as guest N, forwarding to the host.
start_relay() {
	mm_guest_bg "relay$1" "$1" env TRACED_RELAY_NOTIFY_FD=9 PERFETTO_MACHINE_NAME="guest$1" \
		PERFETTO_PRODUCER_SOCK_NAME="$SVC_TMP/g$1.p.sock" \
		PERFETTO_RELAY_SOCK_NAME="$(mm_host_ip "$1"):$PORT" "$OUT/traced_relay"
	svc_wait_for 10 _svc_ready_or_exited "relay$1" && _svc_is_ready "relay$1"
}

# start_guest_producer N NAME ARGS...: test_producer on guest N's relay.
start_guest_producer() {
	local _g _n
	_g=$1
	_n=$2
	shift 2
	mm_guest_bg "$_n" "$_g" env TEST_PRODUCER_NOTIFY_FD=9 \
		"$OUT/test_producer" --name "$_n" --sock "$SVC_TMP/g$_g.p.sock" "$@"
}

# wait_producers N: until perfetto --query lists N producers (10 s).
_n_producers() {
	"$OUT/perfetto" --query 2>/dev/null | sed -n '/^PRODUCER PROCESSES/,/^DATA SOURCES/p' |
		grep -c -E '^[0-9]+ '
}
_has_producers() {
	[ "$(_n_producers)" -ge "$1" ]
}
wait_producers() {
	svc_wait_for "${2:-10}" _has_producers "$1"
}

record() {
	svc_perfetto "$1" 30 --txt -c "$SVC_TMP/$2.pbtxt" -o "$SVC_TMP/$1.pb"
	svc_check_trace "$1" "$SVC_TMP/$1.pb" --allow-loss
}

mm_setup
mm_guest 1
mm_guest 2
ID1=$(machine_id_of "$(mm_guest_boot_id 1)")
ID2=$(machine_id_of "$(mm_guest_boot_id 2)")

if ! start_host; then
	fail rows/host_traced "$(svc_errtail traced)"
	summary
	exit 1
fi
svc_start_producer host.producer --sock "$HOST_UNIX" --ds mm.data --emit-on-start --packets-per-thread 50 \
	--reconnect || fail rows/host_producer "$(svc_errtail host.producer)"
# Before any guest is up: a config for all machines gets a note.
svc_cfg all_early 'buffers { size_kb: 1024 }
duration_ms: 200
trace_all_machines: true
data_sources { config { name: "mm.data" } }'
svc_perfetto all_early 20 --txt -c "$SVC_TMP/all_early.pbtxt" -o "$SVC_TMP/all_early.pb"
grep -q "note: trace_all_machines is set, but no producer of another machine" "$SVC_TMP/all_early.err" &&
	pass dispatch/cli_notes_no_remote_machine ||
	fail dispatch/cli_notes_no_remote_machine "$(svc_errtail all_early)"

# traced_probes straight over TCP (no relay: this machine, SMB emulation).
svc_bg tcp_probes env TRACED_PROBES_NOTIFY_FD=9 PERFETTO_PRODUCER_SOCK_NAME="$(mm_host_ip 1):$PORT" \
	ip netns exec "$MM_HOST" "$OUT/traced_probes"
if svc_wait_for 10 _svc_ready_or_exited tcp_probes && svc_running tcp_probes; then
	svc_cfg tcp_ps 'buffers { size_kb: 4096 }
duration_ms: 500
data_sources { config { name: "linux.process_stats"
	process_stats_config { scan_all_processes_on_start: true } } }'
	svc_perfetto tcp_ps 20 --txt -c "$SVC_TMP/tcp_ps.pbtxt" -o "$SVC_TMP/tcp_ps.pb"
	n=$(sql "$SVC_TMP/tcp_ps.pb" "select count(*) from process where pid > 1")
	[ "${n:-0}" -gt 5 ] && pass tcp/probes_direct_over_tcp ||
		fail tcp/probes_direct_over_tcp "$n processes: $(svc_errtail tcp_ps)"
else
	fail tcp/probes_direct_over_tcp "$(svc_errtail tcp_probes)"
fi
svc_kill tcp_probes

for g in 1 2; do
	start_relay $g || fail "rows/relay$g" "$(svc_errtail relay$g)"
	start_guest_producer $g "g$g.producer" --ds mm.data --emit-on-start --packets-per-thread 50 --reconnect
done
if wait_producers 3; then
	pass rows/producers_connected
else
	fail rows/producers_connected "$("$OUT/perfetto" --query 2>&1 | tail -n 20 | tr '\n' ' ')"
fi

# ---------------------------------------------------------------- rows ---
svc_cfg all 'buffers { size_kb: 4096 }
duration_ms: 1500
trace_all_machines: true
data_sources { config { name: "mm.data" } }'
record all all
want=$(printf '%s\n%s\n' "$ID1" "$ID2" | sort -n | tr '\n' ',' | sed 's/,$//')
[ "$(svc_tc all test_machine_ids)" = "$want" ] && pass rows/stamped_with_boot_id_machine_ids ||
	fail rows/stamped_with_boot_id_machine_ids "got $(svc_tc all test_machine_ids) want $want"
[ "$(svc_tc all test_sequences)" = 3 ] && [ "$(svc_tc all gaps)" = 0 ] &&
	[ "$(svc_tc all seq_packet_counts)" = "50,50,50" ] && pass rows/every_packet_once ||
	fail rows/every_packet_once "seqs=$(svc_tc all test_sequences) counts=$(svc_tc all seq_packet_counts) gaps=$(svc_tc all gaps)"
got=$(sql "$SVC_TMP/all.pb" "select raw_id, name from machine where id > 0 order by raw_id" | tr '\n' ' ')
want_rows=$(printf '%s,"guest1"\n%s,"guest2"\n' "$ID1" "$ID2" | sort -t, -k1 -n | tr '\n' ' ')
[ "$got" = "$want_rows" ] && pass rows/machine_table_names ||
	fail rows/machine_table_names "got '$got' want '$want_rows'"
"$OUT/perfetto" --query >"$SVC_TMP/query.txt" 2>&1
if grep -q 'MACHINE' "$SVC_TMP/query.txt" && grep -q 'guest1 ' "$SVC_TMP/query.txt" &&
	grep -q '(host)' "$SVC_TMP/query.txt"; then
	pass rows/query_machine_column
else
	fail rows/query_machine_column "$(head -n 20 "$SVC_TMP/query.txt" | tr '\n' ' ')"
fi
# Perfetto's own CLI prints the same service state the same way.
if [ -n "$UPSTREAM_TRACEBOX" ]; then
	$UPSTREAM_TRACEBOX perfetto --query >"$SVC_TMP/query_up.txt" 2>&1
	"$OUT/perfetto" --query >"$SVC_TMP/query.txt" 2>&1
	diff "$SVC_TMP/query_up.txt" "$SVC_TMP/query.txt" >"$SVC_TMP/query.diff" &&
		pass rows/query_same_as_upstream_cli ||
		fail rows/query_same_as_upstream_cli "$(head -n 8 "$SVC_TMP/query.diff" | tr '\n' ' ')"
else
	skip rows/query_same_as_upstream_cli "UPSTREAM_TRACEBOX is not set"
fi

# ------------------------------------------------------------ dispatch ---
svc_cfg hostonly 'buffers { size_kb: 4096 }
duration_ms: 1000
data_sources { config { name: "mm.data" } }'
record hostonly hostonly
[ "$(svc_tc hostonly test_sequences)" = 1 ] && pass dispatch/host_only_by_default ||
	fail dispatch/host_only_by_default "sequences=$(svc_tc hostonly test_sequences)"
grep -q "note: .*'guest1', 'guest2'.*trace_all_machines" "$SVC_TMP/hostonly.err" &&
	pass dispatch/cli_names_left_out_machines ||
	fail dispatch/cli_names_left_out_machines "$(svc_errtail hostonly)"
grep -q "note:" "$SVC_TMP/all.err" && fail dispatch/no_note_when_selected "$(svc_errtail all)" ||
	pass dispatch/no_note_when_selected

svc_cfg filter 'buffers { size_kb: 4096 }
duration_ms: 1000
data_sources { config { name: "mm.data" } machine_name_filter: "guest2" machine_name_filter: "host" }'
record filter filter
pids=$(svc_tc filter test_machine_ids)
[ "$(svc_tc filter test_sequences)" = 2 ] && [ "$pids" = "$ID2" ] &&
	pass dispatch/machine_name_filter_with_host ||
	fail dispatch/machine_name_filter_with_host "sequences=$(svc_tc filter test_sequences) machines=$pids"

# ------------------------------------------------------------- restart ---
svc_kill relay1
start_relay 1 || fail restart/relay_again "$(svc_errtail relay1)"
if wait_producers 3 15; then
	record after_relay all
	echo "$(svc_tc after_relay test_machine_ids)" | grep -q "$ID1" &&
		pass restart/relay_restart || fail restart/relay_restart "machines=$(svc_tc after_relay machine_ids)"
else
	fail restart/relay_restart "guest 1's producer did not come back"
fi

svc_stop_traced traced
sleep 0.5
start_host || fail restart/host_again "$(svc_errtail traced)"
if wait_producers 3 40; then
	record after_host all
	[ "$(svc_tc after_host test_sequences)" = 3 ] && [ "$(svc_tc after_host remote_sync_rounds)" -ge 2 ] &&
		pass restart/host_restart ||
		fail restart/host_restart "seqs=$(svc_tc after_host test_sequences) rounds=$(svc_tc after_host remote_sync_rounds)"
else
	fail restart/host_restart "producers did not come back: $(_n_producers)"
fi

# A producer that connects before the host is up.
svc_stop_traced traced
start_guest_producer 2 g2.early --ds mm.early --emit-on-start --packets-per-thread 20 --reconnect
sleep 1
start_host || fail restart/host_third "$(svc_errtail traced)"
svc_cfg early 'buffers { size_kb: 4096 }
duration_ms: 1000
trace_all_machines: true
data_sources { config { name: "mm.early" } }'
if wait_producers 4 40; then
	record early early
	[ "$(svc_tc early test_sequences)" = 1 ] && [ "$(svc_tc early test_machine_ids)" = "$ID2" ] &&
		pass restart/producer_before_host || fail restart/producer_before_host "seqs=$(svc_tc early test_sequences)"
else
	fail restart/producer_before_host "the early producer never registered"
fi

# -------------------------------------------------------------- frames ---
start_guest_producer 1 g1.big --ds mm.big --emit-on-start --packet-size 300000 --packets-per-thread 20 \
	--threads 2 --reconnect
svc_cfg big 'buffers { size_kb: 65536 }
duration_ms: 1500
trace_all_machines: true
data_sources { config { name: "mm.big" } }'
if wait_producers 5 20; then
	record big big
	"$OUT/trace_check" "$SVC_TMP/big.pb" --expect-seqs 2 --expect-per-seq 20 --verify-payload \
		>"$SVC_TMP/big.tc2" 2>&1 && pass frames/300k_packets_through_relay ||
		fail frames/300k_packets_through_relay "$(grep why "$SVC_TMP/big.tc2" | tr '\n' ' ')"
	svc_running relay1 && pass frames/relay_alive || fail frames/relay_alive "$(svc_errtail relay1)"
else
	fail frames/300k_packets_through_relay "the big producer never registered"
fi

# An oversized frame through the relay: the host drops that connection only.
mm_guest_bg g1.bigframe 1 env FAULT_PRODUCER_NOTIFY_FD=9 "$OUT/fault_producer" \
	--fault big-frame --sock "$SVC_TMP/g1.p.sock"
if svc_wait g1.bigframe 10 && [ "$(svc_rc g1.bigframe)" = 0 ]; then
	pass frames/oversized_frame_dropped
else
	fail frames/oversized_frame_dropped "rc=$(svc_rc g1.bigframe): $(svc_errtail g1.bigframe)"
fi
record after_big all
[ "$(svc_tc after_big test_sequences)" -ge 3 ] && svc_running relay1 &&
	pass frames/others_still_served ||
	fail frames/others_still_served "seqs=$(svc_tc after_big test_sequences)"

# ---------------------------------------------------------------- loss ---
start_guest_producer 1 g1.flood --ds mm.flood --emit-on-start --packet-size 4000 --packets-per-thread 2000 \
	--reconnect
svc_cfg flood 'buffers { size_kb: 512 fill_policy: DISCARD }
duration_ms: 1500
trace_all_machines: true
data_sources { config { name: "mm.flood" } }'
if wait_producers 6 20; then
	record flood flood
	got=$(svc_tc flood test_packets)
	lost=$(($(svc_tc flood stats_svc_chunks_discarded) + $(svc_tc flood stats_chunks_discarded 2>/dev/null || echo 0)))
	if [ "$got" -lt 2000 ] && grep -qE '^stats_(chunks_discarded|bytes_overwritten|writer_packet_loss)=[1-9]' "$SVC_TMP/flood.tc"; then
		pass loss/counted
	else
		fail loss/counted "got $got of 2000 packets, stats: $(grep -E '^stats_' "$SVC_TMP/flood.tc" | tr '\n' ' ') lost=$lost"
	fi
else
	fail loss/counted "the flood producer never registered"
fi
summary

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# relay_port.sh - traced's RelayPort, driven by fake_relay (a scripted
# traced_relay control connection) over loopback TCP:
#   endpoint/*     --enable-relay-endpoint-on must name a producer socket;
#                  RelayPort exists only where enabled;
#   session/*      a relay's SystemInfo becomes a machine row (raw id =
#                  Perfetto's FNV-1a of the boot id), every clock-sync round
#                  becomes its own RemoteClockSync packet stamped with the
#                  machine id, with the known offset; the host paces rounds
#                  in bursts of four, 5 s apart, and publishes the best of
#                  each; two relays give two remote machines;
#   unix/*         on a UNIX socket the peer is this machine: no remote row;
#   long/*         a write_into_file session gets rounds throughout, and its
#                  clock snapshots never go backwards;
#   bad/*          garbage, a frame stalled half way and an oversized frame
#                  on the relay socket: traced keeps serving.
# Usage: OUT=out sh tests/integration/relay_port.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"

svc_require_bins traced perfetto fake_relay trace_check trace_processor_shell

# A free loopback TCP port (bound and released; the race is harmless here).
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

if ! command -v python3 >/dev/null 2>&1; then
	skip relay_port/all "python3 is not installed (needed to pick free ports)"
	summary
	exit 0
fi

# Perfetto's machine id: the lower 32 bits of FNV-1a 64 of the hint.
machine_id_of() {
	python3 -c '
import sys
h = 0xcbf29ce484222325
for b in sys.argv[1].encode():
    h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
print((h & 0xffffffff) or 1)' "$1"
}

PORT=$(free_port)
TCP=127.0.0.1:$PORT
UNIX_SOCK=$SVC_TMP/relay.p.sock

# start_traced NAME FLAGS...: traced on TCP + a UNIX producer socket.
start_traced() {
	local _n
	_n=$1
	shift
	export PERFETTO_PRODUCER_SOCK_NAME="$TCP,$UNIX_SOCK"
	export PERFETTO_CONSUMER_SOCK_NAME="$SVC_TMP/$_n.c.sock"
	svc_bg "$_n" env TRACED_NOTIFY_FD=9 "$OUT/traced" "$@"
	svc_wait_for 10 _svc_ready_or_exited "$_n" && _svc_is_ready "$_n" && svc_running "$_n"
}

# fake NAME ARGS...: fake_relay in the background, ready after its rounds.
fake() {
	local _n
	_n=$1
	shift
	svc_bg "$_n" env FAKE_RELAY_NOTIFY_FD=9 "$OUT/fake_relay" "$@"
	svc_wait_for 10 _svc_ready_or_exited "$_n" && _svc_is_ready "$_n"
}

sql() {
	"$OUT/trace_processor_shell" -Q "$2" "$1" 2>"$SVC_TMP/tp.err" | tail -n +2
}

# ----------------------------------------------------------- endpoint ----
svc_bg bad_flag env PERFETTO_PRODUCER_SOCK_NAME="$TCP" \
	PERFETTO_CONSUMER_SOCK_NAME="$SVC_TMP/bad.c.sock" "$OUT/traced" \
	--enable-relay-endpoint-on 127.0.0.1:1
svc_wait bad_flag 5
if [ "$(svc_rc bad_flag)" = 1 ] && grep -q 'not one of the producer' "$SVC_TMP/bad_flag.err"; then
	pass endpoint/unknown_socket_refused
else
	fail endpoint/unknown_socket_refused "rc=$(svc_rc bad_flag): $(svc_errtail bad_flag)"
fi

if ! start_traced plain; then
	fail endpoint/traced_start "$(svc_errtail plain)"
	summary
	exit 1
fi
if "$OUT/fake_relay" --sock "$TCP" >"$SVC_TMP/noport.out" 2>&1; then
	fail endpoint/absent_without_flag "RelayPort answered without --enable-relay-endpoint"
else
	grep -q 'not served' "$SVC_TMP/noport.out" && pass endpoint/absent_without_flag ||
		fail endpoint/absent_without_flag "$(cat "$SVC_TMP/noport.out")"
fi
svc_stop_traced plain

if start_traced only_tcp --enable-relay-endpoint-on "$TCP" &&
	"$OUT/fake_relay" --sock "$TCP" --rounds 0 >"$SVC_TMP/on_tcp.out" 2>&1 &&
	! "$OUT/fake_relay" --sock "$UNIX_SOCK" --rounds 0 >"$SVC_TMP/on_unix.out" 2>&1 &&
	grep -q 'not served' "$SVC_TMP/on_unix.out"; then
	pass endpoint/only_on_the_named_socket
else
	fail endpoint/only_on_the_named_socket "$(cat "$SVC_TMP/on_tcp.out" "$SVC_TMP/on_unix.out")"
fi
svc_stop_traced only_tcp

# ------------------------------------------------------------ session ----
if ! start_traced traced --enable-relay-endpoint; then
	fail session/traced_start "$(svc_errtail traced)"
	summary
	exit 1
fi
OFFSET=1000000000000 # the guest's clocks read 1000 s ahead of the host's
svc_cfg two_machines 'buffers { size_kb: 1024 }
duration_ms: 3000
trace_all_machines: true
data_sources { config { name: "nothing.here" } }'

if fake relay_a --sock "$TCP" --hint boot-id-a --name guest-a --sysname GuestOS \
	--release 9.9-guest --cpus 3 --rounds 5 --offset-ns $OFFSET --interval-ms 200 --hold &&
	fake relay_b --sock "$TCP" --hint boot-id-b --name guest-b --rounds 1 --interval-ms 5000 --hold; then
	pass session/relays_connected
else
	fail session/relays_connected "$(svc_errtail relay_a) $(svc_errtail relay_b)"
fi
grep -q '^next_sync_delay_ms=5000$' "$SVC_TMP/relay_a.out" && pass session/host_asks_5s_rounds ||
	fail session/host_asks_5s_rounds "$(cat "$SVC_TMP/relay_a.out")"

svc_perfetto session 20 --txt -c "$SVC_TMP/two_machines.pbtxt" -o "$SVC_TMP/two.pb"
svc_check_trace session "$SVC_TMP/two.pb"
ID_A=$(machine_id_of boot-id-a)
ID_B=$(machine_id_of boot-id-b)
want_ids=$(printf '%s\n%s\n' "$ID_A" "$ID_B" | sort -n | tr '\n' ',' | sed 's/,$//')
[ "$(svc_tc session machine_ids)" = "$want_ids" ] && pass session/machine_ids_are_fnv_of_boot_id ||
	fail session/machine_ids_are_fnv_of_boot_id "got $(svc_tc session machine_ids), want $want_ids"
[ "$(svc_tc session remote_system_infos)" = 2 ] && pass session/remote_system_info_per_machine ||
	fail session/remote_system_info_per_machine "remote_system_infos=$(svc_tc session remote_system_infos)"
# relay_a runs a round every ~200 ms: about 15 during the 3 s session, of
# which the best of every four is published.
rounds=$(svc_tc session remote_sync_rounds)
syncs=$(svc_tc session remote_clock_syncs)
if [ "$rounds" -ge 3 ] && [ "$rounds" -le 8 ] && [ "$rounds" = "$syncs" ]; then
	pass session/one_packet_per_round
else
	fail session/one_packet_per_round "rounds=$rounds packets=$syncs"
fi
# Each exchange's client minus host BOOTTIME is the offset less the one-way
# delay (or, for relay_b, about 0): within 20 ms either way on loopback.
omax=$(svc_tc session remote_sync_offset_max)
if [ "$omax" -gt $((OFFSET - 20000000)) ] && [ "$omax" -lt $((OFFSET + 20000000)) ]; then
	pass session/offset_recorded
else
	fail session/offset_recorded "max client-host = $omax, want ~$OFFSET"
fi
got=$(sql "$SVC_TMP/two.pb" "select raw_id, name, sysname, release, num_cpus from machine where raw_id = $ID_A")
[ "$got" = "$ID_A,\"guest-a\",\"GuestOS\",\"9.9-guest\",3" ] && pass session/machine_row ||
	fail session/machine_row "got '$got' $(cat "$SVC_TMP/tp.err")"
[ "$(sql "$SVC_TMP/two.pb" 'select count(*) from machine')" = 3 ] && pass session/three_machines ||
	fail session/three_machines "$(sql "$SVC_TMP/two.pb" 'select id, raw_id from machine' | tr '\n' ' ')"
svc_kill relay_b

# --------------------------------------------------------------- unix ----
# --enable-relay-endpoint serves RelayPort on the UNIX socket too, but there
# SetPeerIdentity is ignored: the peer is this machine, not a remote one.
if fake relay_unix --sock "$UNIX_SOCK" --hint boot-id-unix --rounds 1 --hold; then
	svc_perfetto unix 20 --txt -c "$SVC_TMP/two_machines.pbtxt" -o "$SVC_TMP/unix.pb"
	svc_check_trace unix "$SVC_TMP/unix.pb"
	# Only relay_a (still running on TCP) is remote; the UNIX peer is not.
	[ "$(svc_tc unix machine_ids)" = "$ID_A" ] && pass unix/identity_ignored ||
		fail unix/identity_ignored "machine_ids=$(svc_tc unix machine_ids)"
else
	fail unix/identity_ignored "$(svc_errtail relay_unix)"
fi
svc_kill relay_unix

# --------------------------------------------------------------- long ----
svc_cfg long 'buffers { size_kb: 1024 }
duration_ms: 3000
write_into_file: true
file_write_period_ms: 300
builtin_data_sources { snapshot_interval_ms: 400 }
trace_all_machines: true
data_sources { config { name: "nothing.here" } }'
svc_perfetto long 20 --txt -c "$SVC_TMP/long.pbtxt" -o "$SVC_TMP/long.pb"
svc_check_trace long "$SVC_TMP/long.pb"
rounds=$(svc_tc long remote_sync_rounds)
[ "$rounds" -ge 3 ] && pass long/rounds_throughout_write_into_file ||
	fail long/rounds_throughout_write_into_file "rounds=$rounds"
[ "$(svc_tc long clock_snapshots_backwards)" = 0 ] && [ "$(svc_tc long clock_snapshots)" -ge 1 ] &&
	pass long/clock_snapshots_in_order ||
	fail long/clock_snapshots_in_order "$(svc_tc long clock_snapshots) snapshots, $(svc_tc long clock_snapshots_backwards) backwards"
# Read once at the end (a snapshot taken at start, periodic ones after it):
# the start snapshot must still come first in the file.
svc_cfg ring 'buffers { size_kb: 1024 }
duration_ms: 1500
builtin_data_sources { snapshot_interval_ms: 300 }
data_sources { config { name: "nothing.here" } }'
svc_perfetto ring 20 --txt -c "$SVC_TMP/ring.pbtxt" -o "$SVC_TMP/ring.pb"
svc_check_trace ring "$SVC_TMP/ring.pb"
[ "$(svc_tc ring clock_snapshots_backwards)" = 0 ] && [ "$(svc_tc ring clock_snapshots)" -ge 2 ] &&
	pass long/read_at_end_snapshots_in_order ||
	fail long/read_at_end_snapshots_in_order "$(svc_tc ring clock_snapshots) snapshots, $(svc_tc ring clock_snapshots_backwards) backwards"
# Both trace processors accept every snapshot (Perfetto's counts a snapshot
# whose clocks go backwards in invalid_clock_snapshots).
for tp in "$OUT/trace_processor_shell" ${UPSTREAM_TP:+"$UPSTREAM_TP"}; do
	label=$([ "$tp" = "$OUT/trace_processor_shell" ] && echo ours || echo upstream)
	for t in long ring; do
		n=$("$tp" -Q "select count(*) from stats where name = 'invalid_clock_snapshots' and value > 0" \
			"$SVC_TMP/$t.pb" 2>/dev/null | tail -n 1)
		[ "$n" = 0 ] && pass "long/$t/no_invalid_clock_snapshots_$label" ||
			fail "long/$t/no_invalid_clock_snapshots_$label" "got '$n'"
	done
done
svc_kill relay_a

# ---------------------------------------------------------------- bad ----
for fault in garbage stall oversized; do
	svc_bg "bad_$fault" env FAKE_RELAY_NOTIFY_FD=9 "$OUT/fake_relay" --sock "$TCP" \
		--fault $fault --hold-ms 4000
done
sleep 0.3
if fake relay_after --sock "$TCP" --hint boot-id-after --rounds 2 &&
	svc_wait relay_after 5 && [ "$(svc_rc relay_after)" = 0 ] && svc_running traced; then
	pass bad/others_still_served
else
	fail bad/others_still_served "relay rc=$(svc_rc relay_after) $(svc_errtail relay_after); traced $(svc_running traced && echo up || echo down)"
fi
svc_stop_traced traced && pass bad/traced_clean_exit || fail bad/traced_clean_exit "$(svc_errtail traced)"
summary

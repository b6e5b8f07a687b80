#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# relay_cli.sh - traced_relay in front of a real traced that listens on a
# loopback TCP port (the "host") and on a private path socket:
#   relay/start            readiness and the "Started traced_relay" line;
#   relay/trace            a producer behind the relay and one on the host
#                          socket: every packet arrives (trace_check);
#   relay/machine_id       the relayed packets carry one machine_id, host
#                          packets none; the machine table has 2 rows and
#                          the relayed producer keeps its own pid;
#   relay/control          at most one warning about a host without RelayPort;
#   relay/refuse_*         a socket a relay or traced serves is refused (1);
#   relay/stale_path       a stale socket file is replaced;
#   relay/permissions      --set-socket-permissions GID:0660 on the file;
#   relay/missing_env      no PERFETTO_RELAY_SOCK_NAME: usage, exit 1;
#   relay/version, relay/tracebox_*   --version, and the tracebox applet;
#   relay/background       --background prints a PID and returns;
#   relay/host_gone        traced exits: the relayed producer's connection
#                          ends, the relay keeps running; SIGTERM exits 0.
# Only loopback and abstract/private sockets are used.
# Usage: OUT=out sh tests/integration/relay_cli.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"

svc_require_bins traced traced_relay perfetto test_producer trace_check trace_processor_shell \
	tracebox

TAG=$$
RELAY_SOCK="@pfc-relay-p-$TAG"
HOST_SOCK="$SVC_TMP/host.p.sock"
export PERFETTO_CONSUMER_SOCK_NAME="@pfc-relay-c-$TAG"

# A port that is probably free; traced fails at once if it is not, and we
# try the next one.
pick_port() {
	local _n
	_n=$(date +%N | sed 's/^0*//')
	echo $((20000 + (${_n:-0} / 1000 + $$ * 7 + $1 * 7919) % 40000))
}

start_host() {
	local _try _port
	_try=0
	while [ $_try -lt 10 ]; do
		_port=$(pick_port $_try)
		svc_bg host env PERFETTO_PRODUCER_SOCK_NAME="$HOST_SOCK,127.0.0.1:$_port" \
			TRACED_NOTIFY_FD=9 "$OUT/traced" --enable-relay-endpoint-on "127.0.0.1:$_port"
		if svc_wait_for 10 _svc_ready_or_exited host && _svc_is_ready host &&
			! _svc_exited host; then
			HOST_PORT=$_port
			return 0
		fi
		svc_kill host
		_try=$((_try + 1))
	done
	return 1
}

# start_relay NAME SOCK [ARGS...]: traced_relay on SOCK forwarding to the
# host; true once it is ready.
start_relay() {
	local _n _s
	_n=$1
	_s=$2
	shift 2
	svc_bg "$_n" env PERFETTO_PRODUCER_SOCK_NAME="$_s" \
		PERFETTO_RELAY_SOCK_NAME="127.0.0.1:$HOST_PORT" PERFETTO_MACHINE_NAME=guest-vm \
		TRACED_RELAY_NOTIFY_FD=9 "$OUT/traced_relay" "$@"
	svc_wait_for 10 _svc_ready_or_exited "$_n" && _svc_is_ready "$_n" && ! _svc_exited "$_n"
}

# run_relay NAME SECONDS SOCK ARGS...: traced_relay on SOCK in the
# foreground with the host's address (never the system's default socket);
# stdout NAME.out, stderr NAME.err; its exit status.
run_relay() {
	local _n _t _s
	_n=$1
	_t=$(($2 * SVC_SCALE))
	_s=$3
	shift 3
	PERFETTO_PRODUCER_SOCK_NAME="$_s" PERFETTO_RELAY_SOCK_NAME="127.0.0.1:$HOST_PORT" \
		timeout -k 3 "$_t" "$OUT/traced_relay" "$@" \
		>"$SVC_TMP/$_n.out" 2>"$SVC_TMP/$_n.err" </dev/null
}

if ! start_host; then
	fail relay/host_start "traced did not start: $(svc_errtail host)"
	summary
	exit 1
fi

# --------------------------------------------------------------- start ----

if ! start_relay relay "$RELAY_SOCK"; then
	fail relay/start "traced_relay did not become ready: $(svc_errtail relay)"
	summary
	exit 1
fi
want="Started traced_relay, listening on $RELAY_SOCK, forwarding to 127.0.0.1:$HOST_PORT"
if grep -qF "$want" "$SVC_TMP/relay.err"; then
	pass relay/start
else
	fail relay/start "no '$want' line: $(svc_errtail relay)"
fi

# --------------------------------------------------------------- trace ----

PER_SEQ=300
if ! svc_start_producer guest --sock "$RELAY_SOCK" --ds guest.ds --threads 2 \
	--packets-per-thread $PER_SEQ --packet-size 400 --emit-on-start --notify-stop; then
	fail relay/guest_producer "the producer behind the relay did not register: $(svc_errtail guest)"
fi
if ! svc_start_producer local --sock "$HOST_SOCK" --ds host.ds --threads 1 \
	--packets-per-thread $PER_SEQ --packet-size 400 --emit-on-start --notify-stop; then
	fail relay/host_producer "the host producer did not register: $(svc_errtail local)"
fi
svc_cfg rec 'buffers { size_kb: 8192 fill_policy: DISCARD }
data_sources { config { name: "guest.ds" } }
data_sources { config { name: "host.ds" } }
trace_all_machines: true
duration_ms: 1500'
svc_perfetto rec 30 --txt -c "$SVC_TMP/rec.pbtxt" -o "$SVC_TMP/rec.pb"
rc=$?
if [ $rc -ne 0 ]; then
	fail relay/trace "perfetto exit $rc: $(svc_errtail rec)"
elif ! svc_check_trace rec "$SVC_TMP/rec.pb" --expect-seqs 3 --expect-per-seq $PER_SEQ \
	--verify-payload; then
	fail relay/trace "$(svc_why rec)"
else
	pass relay/trace
fi

ids=$(svc_tc rec test_machine_ids)
without=$(svc_tc rec test_packets_without_machine_id)
pids=$(svc_tc rec test_pids)
guest_pid=$(svc_pid guest)
echo "SELECT COUNT(*) AS n FROM machine;" >"$SVC_TMP/m.sql"
echo "SELECT raw_id FROM machine WHERE id != 0;" >"$SVC_TMP/raw.sql"
"$OUT/trace_processor_shell" -q "$SVC_TMP/m.sql" "$SVC_TMP/rec.pb" >"$SVC_TMP/m.out" 2>&1
rows=$(tail -n 1 "$SVC_TMP/m.out")
"$OUT/trace_processor_shell" -q "$SVC_TMP/raw.sql" "$SVC_TMP/rec.pb" >"$SVC_TMP/raw.out" 2>&1
raw=$(tail -n 1 "$SVC_TMP/raw.out")
case $ids in
'' | *,* | 0) fail relay/machine_id "relayed packets carry machine ids '$ids' (want one, non-zero)" ;;
*)
	if [ "$without" != "$PER_SEQ" ]; then
		fail relay/machine_id "$without packets without machine_id (want the host's $PER_SEQ)"
	elif [ "$rows" != 2 ]; then
		fail relay/machine_id "the machine table has '$rows' rows (want 2): $(tr '\n' ' ' <"$SVC_TMP/m.out")"
	elif [ "$raw" != "$ids" ]; then
		fail relay/machine_id "machine.raw_id '$raw' is not the packets' machine_id '$ids'"
	else
		pass relay/machine_id
	fi
	;;
esac
case ",$pids," in
*",$guest_pid,"*) pass relay/peer_pid ;;
*) fail relay/peer_pid "trusted pids '$pids' lack the relayed producer's pid $guest_pid" ;;
esac

# A host without RelayPort gets one warning; one that serves it, none.
n_warn=$(grep -c 'does not serve RelayPort' "$SVC_TMP/relay.err")
if [ "$n_warn" -le 1 ] && svc_running relay; then
	pass relay/control
else
	fail relay/control "$n_warn RelayPort warnings (want at most 1), or the relay exited"
fi

# -------------------------------------------------------------- refuse ----

run_relay dup 10 "$RELAY_SOCK"
rc=$?
if [ $rc -eq 1 ] && grep -q "already served" "$SVC_TMP/dup.err"; then
	pass relay/refuse_relay_socket
else
	fail relay/refuse_relay_socket "exit $rc: $(svc_errtail dup)"
fi
run_relay dup2 10 "$HOST_SOCK"
rc=$?
if [ $rc -eq 1 ] && grep -q "already served" "$SVC_TMP/dup2.err" && [ -S "$HOST_SOCK" ]; then
	pass relay/refuse_traced_socket
else
	fail relay/refuse_traced_socket "exit $rc, socket $( [ -S "$HOST_SOCK" ] && echo kept || echo gone): $(svc_errtail dup2)"
fi

# ---------------------------------------------------------- stale path ----

STALE="$SVC_TMP/stale.sock"
if start_relay stale1 "$STALE"; then
	svc_kill stale1 KILL
	if [ ! -S "$STALE" ]; then
		skip relay/stale_path "no socket file left behind by a killed relay"
	elif start_relay stale2 "$STALE" && [ -S "$STALE" ]; then
		pass relay/stale_path
		kill -TERM "$(svc_pid stale2)"
		svc_wait stale2 5
		rc=$?
		if [ $rc -eq 0 ] && [ ! -e "$STALE" ]; then
			pass relay/sigterm_removes_socket
		else
			fail relay/sigterm_removes_socket "exit $rc, file $( [ -e "$STALE" ] && echo left || echo removed)"
		fi
	else
		fail relay/stale_path "$(svc_errtail stale2)"
	fi
else
	fail relay/stale_path "the first relay did not start: $(svc_errtail stale1)"
fi

# --------------------------------------------------------- permissions ----

PERM="$SVC_TMP/perm.sock"
if start_relay perm "$PERM" --set-socket-permissions "$(id -g):0660"; then
	mode=$(stat -c %a "$PERM")
	group=$(stat -c %g "$PERM")
	if [ "$mode" = 660 ] && [ "$group" = "$(id -g)" ]; then
		pass relay/permissions
	else
		fail relay/permissions "mode $mode group $group (want 660 $(id -g))"
	fi
	svc_kill perm
else
	fail relay/permissions "$(svc_errtail perm)"
fi
run_relay badperm 10 "$SVC_TMP/bad.sock" --set-socket-permissions 0660
rc=$?
if [ $rc -eq 1 ] && grep -q "GROUP:MODE" "$SVC_TMP/badperm.err"; then
	pass relay/permissions_bad_format
else
	fail relay/permissions_bad_format "exit $rc: $(svc_errtail badperm)"
fi

# ------------------------------------------------ environment, version ----

env -u PERFETTO_RELAY_SOCK_NAME PERFETTO_PRODUCER_SOCK_NAME="@pfc-relay-none-$TAG" \
	timeout 120 "$OUT/traced_relay" >"$SVC_TMP/noenv.out" 2>"$SVC_TMP/noenv.err"
rc=$?
if [ $rc -eq 1 ] && grep -q PERFETTO_RELAY_SOCK_NAME "$SVC_TMP/noenv.err" &&
	grep -q "192.168.0.1:20001" "$SVC_TMP/noenv.err" &&
	grep -q "vsock://2:20001" "$SVC_TMP/noenv.err" && [ ! -s "$SVC_TMP/noenv.out" ]; then
	pass relay/missing_env
else
	fail relay/missing_env "exit $rc: $(svc_errtail noenv)"
fi
env -u PERFETTO_RELAY_SOCK_NAME PERFETTO_PRODUCER_SOCK_NAME="@pfc-relay-none-$TAG" \
	timeout 120 "$OUT/tracebox" traced_relay \
	>"$SVC_TMP/tbnoenv.out" 2>"$SVC_TMP/tbnoenv.err"
rc=$?
if [ $rc -eq 1 ] && grep -q PERFETTO_RELAY_SOCK_NAME "$SVC_TMP/tbnoenv.err"; then
	pass relay/tracebox_missing_env
else
	fail relay/tracebox_missing_env "exit $rc: $(svc_errtail tbnoenv)"
fi
want=$("$OUT/traced" --version)
got=$(env -u PERFETTO_RELAY_SOCK_NAME "$OUT/traced_relay" --version)
rc=$?
if [ $rc -eq 0 ] && [ -n "$want" ] && [ "$got" = "$want" ]; then
	pass relay/version
else
	fail relay/version "exit $rc, '$got' (want '$want')"
fi
got=$(env -u PERFETTO_RELAY_SOCK_NAME "$OUT/tracebox" traced_relay --version)
rc=$?
if [ $rc -eq 0 ] && [ "$got" = "$want" ]; then
	pass relay/tracebox_version
else
	fail relay/tracebox_version "exit $rc, '$got' (want '$want')"
fi

# ---------------------------------------------------------- background ----

BG="@pfc-relay-bg-$TAG"
run_relay bg 10 "$BG" --background
rc=$?
bgpid=$(head -n 1 "$SVC_TMP/bg.out")
case $bgpid in '' | *[!0-9]*) bgpid="" ;; esac
[ -n "$bgpid" ] && svc_track "$bgpid"
# Whatever it printed, a detached relay on this run's socket is stopped at exit.
for _p in /proc/[0-9]*; do
	if { tr '\0' '\n' <"$_p/environ"; } 2>/dev/null | grep -qx "PERFETTO_PRODUCER_SOCK_NAME=$BG"; then
		svc_track "${_p#/proc/}"
	fi
done
if [ $rc -ne 0 ] || [ -z "$bgpid" ]; then
	fail relay/background "exit $rc, printed '$(head -c 100 "$SVC_TMP/bg.out")': $(svc_errtail bg)"
elif ! kill -0 "$bgpid" 2>/dev/null; then
	fail relay/background "PID $bgpid is not running"
else
	run_relay bgdup 10 "$BG"
	if [ $? -eq 1 ] && grep -q "already served" "$SVC_TMP/bgdup.err"; then
		pass relay/background
	else
		fail relay/background "its socket is not served: $(svc_errtail bgdup)"
	fi
	kill -TERM "$bgpid"
	svc_wait_for 5 sh -c "! kill -0 $bgpid 2>/dev/null" || fail relay/background_stop "PID $bgpid ignores SIGTERM"
fi

# ----------------------------------------------------------- host gone ----

# The producer behind the relay may still be connected (it waits for the
# next session); stopping traced ends its connection through the relay.
if svc_running guest; then
	svc_stop_traced host
	if svc_wait guest 10; then
		fail relay/host_gone "the relayed producer exited 0 (want: disconnected)"
	elif ! grep -q "disconnected" "$SVC_TMP/guest.err"; then
		fail relay/host_gone "the relayed producer did not see the disconnect: $(svc_errtail guest)"
	elif ! svc_running relay; then
		fail relay/host_gone "the relay exited with the host: $(svc_errtail relay)"
	else
		pass relay/host_gone
	fi
else
	skip relay/host_gone "the relayed producer is not running any more: $(svc_errtail guest)"
fi
kill -TERM "$(svc_pid relay)" 2>/dev/null
svc_wait relay 5
rc=$?
if [ $rc -eq 0 ]; then
	pass relay/sigterm
else
	fail relay/sigterm "exit $rc: $(svc_errtail relay)"
fi

summary

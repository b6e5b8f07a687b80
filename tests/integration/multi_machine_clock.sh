#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# multi_machine_clock.sh - clock sync with a known answer. Guest 1 runs in a
# time namespace whose BOOTTIME and MONOTONIC read OFFSET later than the
# host's, so a guest event written at guest time g happened at host time
# g - OFFSET, exactly; guest 2 has the host's clocks. Each guest producer
# writes TrackEvent instants that carry their raw timestamp. After import,
# every guest event must sit within the clock-sync bound (half the longest
# round trip of a sync round) of its true host time, and the host
# producer's events must keep their raw timestamps exactly.
# Interoperability: with UPSTREAM_TRACEBOX set (a Perfetto tracebox), the
# same runs with Perfetto's traced_relay against our traced and with our
# traced_relay against Perfetto's traced; with UPSTREAM_TP set (Perfetto's
# trace_processor_shell) every trace is also checked with it.
# Usage: OUT=out [UPSTREAM_TRACEBOX=...] [UPSTREAM_TP=...]
#        sh tests/integration/multi_machine_clock.sh (root)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"
. "$(dirname "$0")/mm_lib.sh"

svc_require_bins traced traced_relay perfetto test_producer trace_check trace_processor_shell
mm_require multi_machine_clock

PORT=20302
OFFSET_S=5000
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

mm_setup
MM_GUEST_TIME_OFFSET_S=$OFFSET_S mm_guest 1
MM_GUEST_TIME_OFFSET_S=0 mm_guest 2
RAW1=$(machine_id_of "$(mm_guest_boot_id 1)")
RAW2=$(machine_id_of "$(mm_guest_boot_id 2)")

# The guest's clocks really are ahead.
mm_guest_bg uptime1 1 cat /proc/uptime
svc_wait uptime1 5
guest_uptime=$(cut -d' ' -f1 "$SVC_TMP/uptime1.out")
host_uptime=$(cut -d' ' -f1 /proc/uptime)
if python3 -c "import sys; sys.exit(0 if abs(float('$guest_uptime') - float('$host_uptime') - $OFFSET_S) < 5 else 1)"; then
	pass clock/guest_clocks_ahead
else
	fail clock/guest_clocks_ahead "guest uptime $guest_uptime, host $host_uptime"
fi

svc_cfg clock 'buffers { size_kb: 8192 }
duration_ms: 2500
trace_all_machines: true
data_sources { config { name: "clock.te" } }'

# check CASE LABEL TP TRACE: every machine's events against the truth, with TP.
check() {
	local _c _l _tp _t _bound _m
	_c=$1
	_l=$2
	_tp=$3
	_t=$4
	_bound=$(($(svc_tc "$_c" remote_sync_round_max_ns) / 2))
	# Per machine raw id: events, min and max of ts - raw.
	"$_tp" -Q "
select m.raw_id, count(*), min(s.ts - a.int_value), max(s.ts - a.int_value)
from slice s join track t on s.track_id = t.id
join machine m on m.id = coalesce(t.machine_id, 0)
join args a on a.arg_set_id = s.arg_set_id and a.key = 'debug.raw_ts'
group by m.raw_id order by m.raw_id" "$_t" 2>"$SVC_TMP/tp.err" | tail -n +2 >"$SVC_TMP/err.csv"
	echo "# $_c, $_l: raw machine id, events, min(ts-raw), max(ts-raw); bound $_bound ns"
	sed 's/^/#   /' "$SVC_TMP/err.csv"
	for _m in 0 "$RAW1" "$RAW2"; do
		local _want _row _name
		case $_m in
		0) _want=0 _name=host_events_keep_raw_time ;;
		"$RAW1") _want=-${OFFSET_S}000000000 _name=guest_with_offset_on_host_time ;;
		*) _want=0 _name=guest_without_offset_on_host_time ;;
		esac
		_row=$(awk -F, -v m="$_m" '$1 == m' "$SVC_TMP/err.csv")
		[ "$_m" = 0 ] && _b=0 || _b=$_bound
		if [ -n "$_row" ] && echo "$_row" | awk -F, -v want="$_want" -v b="$_b" \
			'{ exit !($2 >= 50 && $3 >= want - b && $4 <= want + b) }'; then
			pass "clock/$_c/$_l/$_name"
		else
			fail "clock/$_c/$_l/$_name" "got '$_row', want $_want +- $_b $(head -c 300 "$SVC_TMP/tp.err")"
		fi
	done
}

# run_case CASE TRACED_CMD RELAY_CMD: record once with these daemons.
run_case() {
	local _c _g
	_c=$1
	svc_bg "$_c.traced" env TRACED_NOTIFY_FD=9 \
		PERFETTO_PRODUCER_SOCK_NAME="$(mm_host_ip 1):$PORT,$(mm_host_ip 2):$PORT,$HOST_UNIX" \
		ip netns exec "$MM_HOST" $2 --enable-relay-endpoint
	if ! svc_wait_for 10 _svc_ready_or_exited "$_c.traced" || ! svc_running "$_c.traced"; then
		fail "clock/$_c/traced" "$(svc_errtail "$_c.traced")"
		return
	fi
	svc_start_producer "$_c.host.te" --sock "$HOST_UNIX" --ds clock.te --track-events \
		--emit-on-start --packets-per-thread 100 --packet-interval-us 10000 ||
		fail "clock/$_c/host_producer" "$(svc_errtail "$_c.host.te")"
	for _g in 1 2; do
		mm_guest_bg "$_c.relay$_g" $_g env TRACED_RELAY_NOTIFY_FD=9 PERFETTO_MACHINE_NAME="guest$_g" \
			PERFETTO_PRODUCER_SOCK_NAME="$SVC_TMP/$_c.g$_g.p.sock" \
			PERFETTO_RELAY_SOCK_NAME="$(mm_host_ip $_g):$PORT" $3
		svc_wait_for 10 _svc_ready_or_exited "$_c.relay$_g" ||
			fail "clock/$_c/relay$_g" "$(svc_errtail "$_c.relay$_g")"
		mm_guest_bg "$_c.g$_g.te" $_g env TEST_PRODUCER_NOTIFY_FD=9 "$OUT/test_producer" \
			--name "g$_g.te" --sock "$SVC_TMP/$_c.g$_g.p.sock" --ds clock.te --track-events \
			--emit-on-start --packets-per-thread 100 --packet-interval-us 10000
		svc_wait_for 10 _svc_ready_or_exited "$_c.g$_g.te" ||
			fail "clock/$_c/producer$_g" "$(svc_errtail "$_c.g$_g.te")"
	done
	# Give the relays' first clock-sync round time to arrive.
	sleep 0.5
	svc_perfetto "$_c" 30 --txt -c "$SVC_TMP/clock.pbtxt" -o "$SVC_TMP/$_c.pb" ||
		fail "clock/$_c/record" "$(svc_errtail "$_c")"
	svc_check_trace "$_c" "$SVC_TMP/$_c.pb" --allow-loss
	if [ "$(svc_tc "$_c" remote_sync_rounds)" -ge 1 ]; then
		pass "clock/$_c/rounds_recorded"
	else
		fail "clock/$_c/rounds_recorded" "rounds=$(svc_tc "$_c" remote_sync_rounds)"
	fi
	check "$_c" our_tp "$OUT/trace_processor_shell" "$SVC_TMP/$_c.pb"
	[ -n "$UPSTREAM_TP" ] && check "$_c" upstream_tp "$UPSTREAM_TP" "$SVC_TMP/$_c.pb"
	for _g in 1 2; do
		svc_kill "$_c.g$_g.te"
		svc_kill "$_c.relay$_g"
	done
	svc_kill "$_c.host.te"
	svc_stop_traced "$_c.traced"
}

run_case ours "$OUT/traced" "$OUT/traced_relay"
if [ -n "$UPSTREAM_TRACEBOX" ]; then
	run_case upstream_relay "$OUT/traced" "$UPSTREAM_TRACEBOX traced_relay"
	run_case upstream_traced "$UPSTREAM_TRACEBOX traced" "$OUT/traced_relay"
else
	skip clock/interop "UPSTREAM_TRACEBOX is not set (a Perfetto tracebox to test against)"
fi
summary

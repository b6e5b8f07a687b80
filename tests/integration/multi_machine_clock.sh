#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# multi_machine_clock.sh - clock sync with a known answer. Guest 1 runs in a
# time namespace whose BOOTTIME and MONOTONIC read OFFSET later than the
# host's, so a guest event written at guest time g happened at host time
# g - OFFSET, exactly. The guest producer writes TrackEvent instants that
# carry their raw timestamp; after import every one must sit within the
# clock-sync bound (half the longest round trip of a sync round) of its true
# host time. The host producer's events, on the host's own clock, must keep
# their raw timestamps exactly. A second guest without a time offset checks
# the same with an offset of zero.
# Usage: OUT=out sh tests/integration/multi_machine_clock.sh (root)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"
. "$(dirname "$0")/mm_lib.sh"

svc_require_bins traced traced_relay perfetto test_producer trace_check trace_processor_shell
mm_require multi_machine_clock

PORT=20302
OFFSET_S=5000
HOST_UNIX=$SVC_TMP/host.p.sock
export PERFETTO_CONSUMER_SOCK_NAME=$SVC_TMP/host.c.sock

mm_setup
MM_GUEST_TIME_OFFSET_S=$OFFSET_S mm_guest 1
MM_GUEST_TIME_OFFSET_S=0 mm_guest 2

svc_bg traced env TRACED_NOTIFY_FD=9 \
	PERFETTO_PRODUCER_SOCK_NAME="$(mm_host_ip 1):$PORT,$(mm_host_ip 2):$PORT,$HOST_UNIX" \
	ip netns exec "$MM_HOST" "$OUT/traced" --enable-relay-endpoint
if ! svc_wait_for 10 _svc_ready_or_exited traced || ! svc_running traced; then
	fail clock/host_traced "$(svc_errtail traced)"
	summary
	exit 1
fi
svc_start_producer host.te --sock "$HOST_UNIX" --ds clock.te --track-events --emit-on-start \
	--packets-per-thread 100 --packet-interval-us 10000 || fail clock/host_producer "$(svc_errtail host.te)"
for g in 1 2; do
	mm_guest_bg "relay$g" $g env TRACED_RELAY_NOTIFY_FD=9 PERFETTO_MACHINE_NAME="guest$g" \
		PERFETTO_PRODUCER_SOCK_NAME="$SVC_TMP/g$g.p.sock" \
		PERFETTO_RELAY_SOCK_NAME="$(mm_host_ip $g):$PORT" "$OUT/traced_relay"
	svc_wait_for 10 _svc_ready_or_exited "relay$g" || fail "clock/relay$g" "$(svc_errtail relay$g)"
	mm_guest_bg "g$g.te" $g env TEST_PRODUCER_NOTIFY_FD=9 "$OUT/test_producer" \
		--name "g$g.te" --sock "$SVC_TMP/g$g.p.sock" --ds clock.te --track-events \
		--emit-on-start --packets-per-thread 100 --packet-interval-us 10000
	svc_wait_for 10 _svc_ready_or_exited "g$g.te" || fail "clock/producer$g" "$(svc_errtail g$g.te)"
done
# The guest's clocks really are ahead: its relay says so in the trace too.
guest_uptime=$(mm_guest_bg uptime1 1 cat /proc/uptime; svc_wait uptime1 5; cut -d' ' -f1 "$SVC_TMP/uptime1.out")
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
svc_perfetto clock 30 --txt -c "$SVC_TMP/clock.pbtxt" -o "$SVC_TMP/clock.pb"
svc_check_trace clock "$SVC_TMP/clock.pb" --allow-loss
BOUND=$(($(svc_tc clock remote_sync_round_max_ns) / 2))
rounds=$(svc_tc clock remote_sync_rounds)
[ "$rounds" -ge 2 ] && [ "$BOUND" -gt 0 ] && pass clock/rounds_recorded ||
	fail clock/rounds_recorded "rounds=$rounds bound=$BOUND"

# Per machine: events, and the worst error against the true host time.
"$OUT/trace_processor_shell" -Q "
select t.machine_id, count(*), min(s.ts - a.int_value), max(s.ts - a.int_value)
from slice s join track t on s.track_id = t.id
join args a on a.arg_set_id = s.arg_set_id and a.key = 'debug.raw_ts'
group by t.machine_id order by t.machine_id" "$SVC_TMP/clock.pb" >"$SVC_TMP/err.csv" 2>"$SVC_TMP/tp.err"
echo "# per machine (id, events, min(ts-raw), max(ts-raw)), bound $BOUND ns:"
sed 's/^/#   /' "$SVC_TMP/err.csv"

# machine_of NAME: the machine table id of guest NAME.
machine_of() {
	"$OUT/trace_processor_shell" -Q "select id from machine where name = '$1'" \
		"$SVC_TMP/clock.pb" 2>/dev/null | tail -n +2
}
row() {
	awk -F, -v m="$1" '$1 == m' "$SVC_TMP/err.csv"
}
# within M WANT: every event of machine M has ts - raw in WANT +- BOUND.
within() {
	local _r
	_r=$(row "$1")
	[ -n "$_r" ] || return 1
	echo "$_r" | awk -F, -v want="$2" -v b="$BOUND" \
		'{ exit !($2 >= 50 && $3 >= want - b && $4 <= want + b) }'
}
within 0 0 && [ "$(row 0 | cut -d, -f3)" = 0 ] && [ "$(row 0 | cut -d, -f4)" = 0 ] &&
	pass clock/host_events_unchanged || fail clock/host_events_unchanged "$(row 0)"
M1=$(machine_of guest1)
M2=$(machine_of guest2)
within "$M1" "-${OFFSET_S}000000000" && pass clock/guest_with_offset_on_host_time ||
	fail clock/guest_with_offset_on_host_time "machine $M1: $(row "$M1"), want $((-OFFSET_S))e9 +- $BOUND $(cat "$SVC_TMP/tp.err")"
within "$M2" 0 && pass clock/guest_without_offset_on_host_time ||
	fail clock/guest_without_offset_on_host_time "machine $M2: $(row "$M2") +- $BOUND"
summary

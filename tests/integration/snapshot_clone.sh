#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# snapshot_clone.sh - trigger_mode CLONE_SNAPSHOT through the real binaries:
# a ring-buffer session records a numbered stream (test_producer, 1000
# packets/s) and an SDK app's TrackEvents; every trigger that passes the
# trigger's limits makes the perfetto command that owns the session write a
# snapshot to OUT.0, OUT.1, ... while recording goes on.
#   three/*      three "snap" triggers make OUT.0-2: each has the stream from
#                0 with no gap or duplicate up to its trigger, one trigger
#                packet, and imports in trace_processor_shell with slices;
#   limits/*     "limited" (max_per_24_h: 1) fired twice makes one file,
#                "never" (skip_probability: 1) none; "late" (stop_delay_ms:
#                300) a snapshot holding events 300 ms past its trigger;
#   source/*     perfetto --clone of the running session still holds the
#                whole stream (the snapshots took nothing away); the
#                session's own -o file stays empty, as Perfetto's does;
#   big_64mb     a 64 MiB ring buffer, full and still being written: three
#                snapshots of it, each over 60 MiB; the time from trigger to
#                file closed is printed, not judged (it depends on the
#                machine's load: bench/snapshot_bench.sh measures it).
# Usage: OUT=out sh tests/integration/snapshot_clone.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"

svc_require_bins traced perfetto trigger_perfetto test_producer trace_check \
	trace_processor_shell sdk/sdk_app
TP=$OUT/trace_processor_shell

if ! svc_start_traced traced; then
	fail snapshot/traced_start "traced did not start: $(svc_errtail traced)"
	summary
	exit 1
fi
svc_start_producer prod --ds t.ds --threads 1 --packets-per-thread 1000000 \
	--packet-interval-us 1000 --emit-on-start --flush-while-emitting ||
	fail snapshot/producer_start "$(svc_errtail prod)"
svc_bg app env LD_LIBRARY_PATH="$OUT/lib" "$OUT/sdk/sdk_app" --threads 1 --slices 40 \
	--depth 2 --run-ms 60000

svc_cfg snap 'buffers { size_kb: 16384 fill_policy: RING_BUFFER }
data_sources { config { name: "t.ds" } }
data_sources { config { name: "track_event" track_event_config { enabled_categories: "*" } } }
trigger_config {
  trigger_mode: CLONE_SNAPSHOT
  trigger_timeout_ms: 60000
  triggers { name: "snap" }
  triggers { name: "limited" max_per_24_h: 1 }
  triggers { name: "never" skip_probability: 1 }
  triggers { name: "late" stop_delay_ms: 300 }
}
unique_session_name: "snapsrc"'
svc_bg rec "$OUT/perfetto" --txt -c "$SVC_TMP/snap.pbtxt" -o "$SVC_TMP/s.pf"

# wait_files N: until N snapshot files are closed (the CLI logs each).
n_logged() {
	[ "$(grep -c 'perfetto: snapshot for trigger' "$SVC_TMP/rec.err" 2>/dev/null)" -ge "$1" ]
}

fire() {
	"$OUT/trigger_perfetto" "$1" >/dev/null 2>&1 || fail "snapshot/fire_$1" "trigger_perfetto failed"
}

# check_snap TEST FILE DELAY_MS: the stream from 0, contiguous, up to the
# trigger (+DELAY_MS), one trigger packet, TrackEvent slices imported.
check_snap() {
	local _t _n _f _d _line _slices _late _lead
	_t=$1
	_n=$(echo "$1" | tr / _)
	_f=$2
	_d=$3
	if ! svc_check_trace "$_n" "$_f" --print-seqs --expect-seqs 1; then
		fail "$_t" "$(svc_why "$_n")"
		return
	fi
	_line=$(grep '^seq ' "$SVC_TMP/$_n.tc" | head -n 1)
	case $_line in
	*" first=0 "*"inner_gaps=0 dups=0") ;;
	*)
		fail "$_t" "stream not whole from 0: $_line"
		return
		;;
	esac
	# The newest event is within 200 ms of the trigger (plus its delay),
	# and not before it by more than 300 ms (a stalled producer).
	_late=$(($(svc_tc "$_n" test_ts_max) - $(svc_tc "$_n" trigger_ts) - _d * 1000000))
	if [ "$(svc_tc "$_n" triggers)" != 1 ] || [ "$_late" -gt $((200000000 * SVC_SCALE)) ] ||
		[ "$_late" -lt $((-300000000 * SVC_SCALE)) ]; then
		fail "$_t" "triggers=$(svc_tc "$_n" triggers) newest event $((_late / 1000000)) ms after trigger+delay"
		return
	fi
	printf '%s\n' "select count(*) from slice;" >"$SVC_TMP/q.sql"
	_slices=$("$TP" -q "$SVC_TMP/q.sql" "$_f" 2>"$SVC_TMP/$_n.tp.err" | sed -n 2p | tr -d '"')
	printf '%s\n' "select count(*) from stats where name like '%incremental_state%' and value > 0;" >"$SVC_TMP/q.sql"
	_lead=$("$TP" -q "$SVC_TMP/q.sql" "$_f" 2>>"$SVC_TMP/$_n.tp.err" | sed -n 2p | tr -d '"')
	if [ -z "$_slices" ] || [ "$_slices" -lt 1 ] || [ "$_lead" != 0 ]; then
		fail "$_t" "trace_processor_shell: slices='$_slices' incremental-state stats='$_lead' $(head -c 200 "$SVC_TMP/$_n.tp.err")"
		return
	fi
	pass "$_t"
}

sleep 1
for i in 0 1 2; do
	fire snap
	svc_wait_for 10 n_logged $((i + 1)) || fail "snapshot/three/wait_$i" "no snapshot logged: $(svc_errtail rec)"
	sleep 0.5
done
for i in 0 1 2; do
	if [ -f "$SVC_TMP/s.pf.$i" ]; then
		check_snap "snapshot/three/file_$i" "$SVC_TMP/s.pf.$i" 0
	else
		fail "snapshot/three/file_$i" "no $SVC_TMP/s.pf.$i"
	fi
done
# Each snapshot holds more of the stream than the one before.
l0=$(sed -n 's/^seq .* last=\([0-9]*\) .*/\1/p' "$SVC_TMP/snapshot_three_file_0.tc" 2>/dev/null)
l1=$(sed -n 's/^seq .* last=\([0-9]*\) .*/\1/p' "$SVC_TMP/snapshot_three_file_1.tc" 2>/dev/null)
l2=$(sed -n 's/^seq .* last=\([0-9]*\) .*/\1/p' "$SVC_TMP/snapshot_three_file_2.tc" 2>/dev/null)
if [ -n "$l0" ] && [ -n "$l1" ] && [ -n "$l2" ] && [ "$l0" -lt "$l1" ] && [ "$l1" -lt "$l2" ]; then
	pass snapshot/three/growing
else
	fail snapshot/three/growing "last seq values '$l0' '$l1' '$l2'"
fi

fire limited
svc_wait_for 10 n_logged 4 || fail snapshot/limits/limited_first "no snapshot for the first 'limited'"
fire limited
fire never
sleep 1
fire late
svc_wait_for 10 n_logged 5 || fail snapshot/limits/late "no snapshot for 'late'"
sleep 0.5
if n_logged 6 || [ -f "$SVC_TMP/s.pf.5" ]; then
	fail snapshot/limits/count "a rate-limited trigger made a snapshot: $(ls "$SVC_TMP" | grep 's.pf' | tr '\n' ' ')"
else
	pass snapshot/limits/count
fi
[ -f "$SVC_TMP/s.pf.3" ] && check_snap snapshot/limits/limited "$SVC_TMP/s.pf.3" 0
[ -f "$SVC_TMP/s.pf.4" ] && check_snap snapshot/limits/late "$SVC_TMP/s.pf.4" 300
if grep -q "trigger 'late'.*wrote" "$SVC_TMP/rec.err" && [ -f "$SVC_TMP/s.pf.4" ]; then
	pass snapshot/limits/late_named
else
	fail snapshot/limits/late_named "s.pf.4 is not the 'late' snapshot: $(grep snapshot "$SVC_TMP/rec.err" | tail -n 2 | tr '\n' ' ')"
fi

# The source session lost nothing: a clone now has the whole stream.
if svc_perfetto clone 20 --clone-by-name snapsrc -o "$SVC_TMP/clone.pf" &&
	svc_check_trace source "$SVC_TMP/clone.pf" --print-seqs --expect-seqs 1; then
	line=$(grep '^seq ' "$SVC_TMP/source.tc" | head -n 1)
	last4=$(sed -n 's/^seq .* last=\([0-9]*\) .*/\1/p' "$SVC_TMP/snapshot_limits_late.tc" 2>/dev/null)
	last=$(echo "$line" | sed -n 's/.* last=\([0-9]*\) .*/\1/p')
	case $line in
	*" first=0 "*"inner_gaps=0 dups=0")
		if [ -n "$last4" ] && [ "$last" -ge "$last4" ]; then
			pass snapshot/source/no_hole
		else
			fail snapshot/source/no_hole "clone ends at $last, before the last snapshot ($last4)"
		fi
		;;
	*) fail snapshot/source/no_hole "$line" ;;
	esac
else
	fail snapshot/source/no_hole "clone: $(svc_errtail clone) $(svc_why source)"
fi
svc_kill rec INT
svc_wait rec 20
if [ "$(svc_rc rec)" = 0 ] && [ "$(svc_file_size "$SVC_TMP/s.pf")" = 0 ]; then
	pass snapshot/source/own_file_empty
else
	fail snapshot/source/own_file_empty "rc=$(svc_rc rec) size=$(svc_file_size "$SVC_TMP/s.pf")"
fi

# big_64mb: fill a 64 MiB ring (about 80 MiB written at full speed)
# while the stream and the SDK app keep writing.
svc_start_producer fill --ds fill.ds --threads 1 --packets-per-thread 20000 --packet-size 4096 \
	--emit-on-start --flush-while-emitting || fail snapshot/big_64mb "$(svc_errtail fill)"
svc_cfg big 'buffers { size_kb: 65536 fill_policy: RING_BUFFER }
data_sources { config { name: "t.ds" } }
data_sources { config { name: "fill.ds" } }
trigger_config {
  trigger_mode: CLONE_SNAPSHOT
  trigger_timeout_ms: 60000
  triggers { name: "big" }
}'
svc_bg big "$OUT/perfetto" --txt -c "$SVC_TMP/big.pbtxt" -o "$SVC_TMP/big.pf"
# The ring is full once the fill producer has written its 80 MiB.
svc_wait_for 120 grep -q "every writer is done" "$SVC_TMP/fill.err"
# Three snapshots, one second apart; the best counts (the machine may be
# shared), all are printed.
big_logged() {
	[ "$(grep -c 'perfetto: snapshot for trigger' "$SVC_TMP/big.err" 2>/dev/null)" -ge "$1" ]
}
for i in 1 2 3; do
	fire big
	svc_wait_for 20 big_logged "$i" || break
	sleep 1
done
if big_logged 3; then
	all=$(sed -n "s/.*wrote \([0-9]*\) bytes .*, \([0-9]*\) ms after the trigger.*/\2/p" "$SVC_TMP/big.err" | tr '\n' ' ')
	ms=$(echo "$all" | tr ' ' '\n' | grep . | sort -n | head -n 1)
	bytes=$(sed -n "s/.*wrote \([0-9]*\) bytes .*/\1/p" "$SVC_TMP/big.err" | sort -n | head -n 1)
	echo "# 64 MiB snapshots: $bytes bytes or more, closed $all ms after their triggers"
	if [ -n "$ms" ] && [ "$bytes" -gt $((60 * 1024 * 1024)) ]; then
		pass snapshot/big_64mb
	else
		fail snapshot/big_64mb "$bytes bytes in $all ms: $(grep snapshot "$SVC_TMP/big.err" | tr '\n' ' ')"
	fi
else
	fail snapshot/big_64mb "not three snapshots: $(svc_errtail big)"
fi
svc_kill big INT
svc_kill app
if svc_stop_traced traced; then
	pass snapshot/traced_exit
else
	fail snapshot/traced_exit "traced exited $(svc_rc traced): $(svc_errtail traced 5)"
fi
summary

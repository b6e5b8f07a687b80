#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# rotate_files.sh - perfetto --rotate-seconds / --rotate-mb / --keep through
# the real binaries: a numbered stream (test_producer, about 1000 packets/s)
# and an SDK app's TrackEvents (interned names, incremental timestamps)
# recorded into OUT.0, OUT.1, ...
#   seconds/*  --rotate-seconds 1 --keep 10 for 30 s (the issue's "10 of
#              30"): exactly the newest 10 files remain; each imports on its
#              own (clock snapshot, config, system info; slices in
#              trace_processor_shell, no error or data-loss stat and no
#              packet skipped for want of incremental state); the
#              stream continues from one file to the next with no packet in
#              two files and no gap (the next number, < 300 ms later); each
#              SDK thread's slices of a file all precede the next file's.
#   mb/*       --rotate-mb 1 (1 KiB packets): every file but the last is
#              about 1 MiB, and all of them together hold the stream from 0
#              with no gap or duplicate.
#   restart    a second run into the same name continues the numbering
#              and --keep counts the files already there
#   slow_stop/* a producer answering no flush holds the end 2 s past
#              duration_ms: no file starts after the planned end, the last
#              one takes what arrives until the stop
#   full/*     (root: a 3 MiB tmpfs) a 1 MB/s recording keeps going while
#              the oldest files are deleted, and the newest data stays;
#              with one file bigger than the file system, recording stops
#              cleanly, says so, and the file written imports. Both are
#              reported in the trace: trace_attributes packets, metadata
#              trace_attribute.perfetto_cmd.rotate_*.
# Usage: OUT=out sh tests/integration/rotate_files.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"

svc_require_bins traced perfetto test_producer trace_check trace_processor_shell sdk/sdk_app fault_producer
TP=$OUT/trace_processor_shell

if ! svc_start_traced traced; then
	fail rotate/traced_start "traced did not start: $(svc_errtail traced)"
	summary
	exit 1
fi
svc_start_producer prod --ds t.ds --threads 1 --packets-per-thread 10000000 \
	--packet-interval-us 1000 --emit-on-start --flush-while-emitting ||
	fail rotate/producer_start "$(svc_errtail prod)"
# big NAME [BYTES]: a producer of 1 KiB (or BYTES) packets for data source
# NAME.ds (an instance of test_producer streams for one session only).
big() {
	svc_start_producer "$1" --ds "$1.ds" --threads 1 --packets-per-thread 10000000 \
		--packet-size "${2:-1024}" --packet-interval-us 1000 --emit-on-start \
		--flush-while-emitting ||
		fail rotate/producer_start "$(svc_errtail "$1")"
}
svc_bg app env LD_LIBRARY_PATH="$OUT/lib" "$OUT/sdk/sdk_app" --threads 2 --slices 40 \
	--depth 2 --run-ms 600000

# tpq FILE SQL: the query's single value.
tpq() {
	printf '%s\n' "$2" >"$SVC_TMP/q.sql"
	"$TP" -q "$SVC_TMP/q.sql" "$1" 2>>"$SVC_TMP/tp.err" | sed -n 2p | tr -d '"'
}

# seqline NAME FILE: trace_check FILE into NAME.tc; prints "first last
# inner_gaps dups" of its one test sequence (empty if not exactly one).
seqline() {
	svc_check_trace "$1" "$2" --allow-loss --print-seqs
	if [ "$(grep -c '^seq ' "$SVC_TMP/$1.tc")" = 1 ]; then
		sed -n 's/^seq id=[0-9]* first=\([0-9]*\) last=\([0-9]*\) packets=[0-9]* inner_gaps=\([0-9]*\) dups=\([0-9]*\)/\1 \2 \3 \4/p' "$SVC_TMP/$1.tc"
	fi
}

# chain TEST DS_NAME FILES...: the files, in order, continue one stream.
chain() {
	local _t _prev_last _prev_ts _f _n _l _first _last _gaps _dups _ok _k _tsmin _why
	_t=$1
	shift
	_ok=1
	_why=""
	_k=0
	_prev_last=""
	for _f in "$@"; do
		_n="chain_$_k"
		_l=$(seqline "$_n" "$_f")
		if [ -z "$_l" ]; then
			_ok=0
			_why="$_why $(basename "$_f"): not one test sequence;"
			break
		fi
		_first=$(echo "$_l" | cut -d' ' -f1)
		_last=$(echo "$_l" | cut -d' ' -f2)
		_gaps=$(echo "$_l" | cut -d' ' -f3)
		_dups=$(echo "$_l" | cut -d' ' -f4)
		_tsmin=$(svc_tc "$_n" test_ts_min)
		if [ "$_gaps" != 0 ] || [ "$_dups" != 0 ]; then
			_ok=0
			_why="$_why $(basename "$_f"): gaps=$_gaps dups=$_dups;"
		fi
		if [ -n "$_prev_last" ]; then
			if [ "$_first" -ne $((_prev_last + 1)) ]; then
				_ok=0
				_why="$_why $(basename "$_f") starts at $_first after $_prev_last;"
			elif [ $((_tsmin - _prev_ts)) -gt $((300000000 * SVC_SCALE)) ] ||
				[ "$_tsmin" -le "$_prev_ts" ]; then
				_ok=0
				_why="$_why $(basename "$_f"): $(((_tsmin - _prev_ts) / 1000000)) ms after the file before;"
			fi
		fi
		_prev_last=$_last
		_prev_ts=$(svc_tc "$_n" test_ts_max)
		_k=$((_k + 1))
	done
	if [ $_ok = 1 ]; then pass "$_t"; else fail "$_t" "$_why"; fi
}

# standalone TEST FILE: imports on its own with its own header packets.
standalone() {
	local _n _sl _bad
	_n=$(echo "$1" | tr / _)
	svc_check_trace "$_n" "$2" --allow-loss
	_sl=$(tpq "$2" "select count(*) from slice where dur >= 0")
	_bad=$(tpq "$2" "select count(*) from stats where value > 0 and (severity in ('error', 'data_loss') or name like '%incremental_state%')")
	if [ "$(svc_tc "$_n" clock_snapshots)" -ge 1 ] && [ "$(svc_tc "$_n" trace_configs)" = 1 ] &&
		[ "$(svc_tc "$_n" system_infos)" -ge 1 ] && [ -n "$_sl" ] && [ "$_sl" -gt 0 ] &&
		[ "$_bad" = 0 ]; then
		pass "$1"
	else
		fail "$1" "clock_snapshots=$(svc_tc "$_n" clock_snapshots) trace_configs=$(svc_tc "$_n" trace_configs) system_infos=$(svc_tc "$_n" system_infos) slices=$_sl error_stats=$_bad $(tpq "$2" "select group_concat(name || '=' || value) from stats where value > 0 and (severity in ('error', 'data_loss') or name like '%incremental_state%')")"
	fi
}

# files PREFIX: OUT.<n> paths in numeric order.
files() {
	ls "$1".* 2>/dev/null | awk -F. '{print $NF " " $0}' | sort -n | cut -d' ' -f2
}

# ---------------------------------------------------------------- seconds
svc_cfg sec 'buffers { size_kb: 16384 fill_policy: RING_BUFFER }
data_sources { config { name: "t.ds" } }
data_sources { config { name: "track_event" track_event_config { enabled_categories: "*" } } }
duration_ms: 30000'
mkdir -p "$SVC_TMP/sec"
if svc_perfetto sec 90 --txt -c "$SVC_TMP/sec.pbtxt" -o "$SVC_TMP/sec/t.pf" \
	--rotate-seconds 1 --keep 10; then
	set -- $(files "$SVC_TMP/sec/t.pf")
	started=$(sed -n 's/.*wrote .*\.\([0-9]*\) (\([0-9]*\) deleted).*/\1/p' "$SVC_TMP/sec.err")
	if [ $# = 10 ] && [ -n "$started" ] && [ "$started" -ge 28 ] &&
		[ "$1" = "$SVC_TMP/sec/t.pf.$((started - 9))" ] && [ ! -e "$SVC_TMP/sec/t.pf" ]; then
		pass rotate/seconds/keep_newest_10
	else
		fail rotate/seconds/keep_newest_10 "files: $(ls "$SVC_TMP/sec" | tr '\n' ' ') last=$started"
	fi
	k=0
	for f in "$@"; do
		standalone "rotate/seconds/standalone_$k" "$f"
		k=$((k + 1))
	done
	chain rotate/seconds/abut "$@"
	# Each SDK thread: every slice of a file starts before the next file's.
	ok=1
	why=""
	prev=""
	for f in "$@"; do
		if [ -n "$prev" ]; then
			for th in worker-0 worker-1; do
				a=$(tpq "$prev" "select max(s.ts) from slice s join thread_track tt on s.track_id = tt.id join thread t using (utid) where t.name = '$th'")
				b=$(tpq "$f" "select min(s.ts) from slice s join thread_track tt on s.track_id = tt.id join thread t using (utid) where t.name = '$th'")
				if [ -z "$a" ] || [ -z "$b" ] || [ "$a" -ge "$b" ]; then
					ok=0
					why="$why $th: $(basename "$prev") ends at '$a', $(basename "$f") starts at '$b';"
				fi
			done
		fi
		prev=$f
	done
	if [ $ok = 1 ]; then pass rotate/seconds/sdk_order; else fail rotate/seconds/sdk_order "$why"; fi
else
	fail rotate/seconds "perfetto failed: $(svc_errtail sec)"
fi


# ---------------------------------------------------------------- restart
# A second recording into the same name (a restarted service) goes on after
# the files already there, and --keep counts them: with 5 old files and
# --keep 3, the old ones go first and numbering starts at .5.
mkdir -p "$SVC_TMP/rs"
for i in 0 1 2 3 4; do cp "$SVC_TMP/sec/$(ls "$SVC_TMP/sec" | head -n 1)" "$SVC_TMP/rs/t.pf.$i"; done
svc_cfg rs 'buffers { size_kb: 16384 fill_policy: RING_BUFFER }
data_sources { config { name: "t.ds" } }
duration_ms: 2500'
if svc_perfetto rs 30 --txt -c "$SVC_TMP/rs.pbtxt" -o "$SVC_TMP/rs/t.pf" --rotate-seconds 1 --keep 3; then
	set -- $(files "$SVC_TMP/rs/t.pf")
	if [ $# = 3 ] && [ "$3" != "$SVC_TMP/rs/t.pf.4" ] && [ ! -e "$SVC_TMP/rs/t.pf.0" ] &&
		[ ! -e "$SVC_TMP/rs/t.pf.1" ] && grep -q 'starts at .*t.pf.5' "$SVC_TMP/rs.err"; then
		pass rotate/restart/continues_numbering
	else
		fail rotate/restart/continues_numbering "files: $(ls "$SVC_TMP/rs" | tr '\n' ' '); $(svc_errtail rs)"
	fi
else
	fail rotate/restart/continues_numbering "perfetto failed: $(svc_errtail rs)"
fi
# -------------------------------------------------------------- slow stop
# A producer that answers no flush holds the session's end for
# flush_timeout_ms past duration_ms (a guest behind a relay under load did
# in CI). What still arrives then belongs to the last file: no file starts
# after the planned end, so 2.5 s at 1 s a file make OUT.0 .. OUT.2, and
# the stream goes on in the last file until the data source stops.
big slowp 64
if svc_start_fault mute --fault silent --ds mute.ds; then
	svc_cfg slow 'buffers { size_kb: 16384 fill_policy: RING_BUFFER }
data_sources { config { name: "slowp.ds" } }
data_sources { config { name: "mute.ds" } }
duration_ms: 2500
flush_timeout_ms: 2000
data_source_stop_timeout_ms: 1000'
	mkdir -p "$SVC_TMP/slow"
	t0=$(svc_now_ms)
	if svc_perfetto slow 30 --txt -c "$SVC_TMP/slow.pbtxt" -o "$SVC_TMP/slow/t.pf" \
		--rotate-seconds 1; then
		ms=$(($(svc_now_ms) - t0))
		set -- $(files "$SVC_TMP/slow/t.pf")
		span=""
		# Drains wait out the flush timeout (250 ms) here, so the cut due
		# at 2 s may come too late: OUT.1 then is the last.
		if { [ $# = 3 ] || [ $# = 2 ]; } && svc_check_trace slow0 "$1" --allow-loss &&
			eval "svc_check_trace slowN \"\${$#}\" --allow-loss"; then
			span=$((($(svc_tc slowN test_ts_max) - $(svc_tc slow0 test_ts_min)) / 1000000))
		fi
		# The stop really was slow (else this proves nothing), and the
		# stream reaches the stop (4.5 s) in the last file.
		if [ $ms -ge 4000 ] && [ -n "$span" ] && [ "$span" -ge 4000 ]; then
			pass rotate/slow_stop/no_file_after_the_end
		else
			fail rotate/slow_stop/no_file_after_the_end "$# files after $ms ms: $(ls "$SVC_TMP/slow" | tr '\n' ' '); stream span '$span' ms"
		fi
		chain rotate/slow_stop/abut "$@"
	else
		fail rotate/slow_stop "perfetto failed: $(svc_errtail slow)"
	fi
	svc_kill mute
else
	fail rotate/slow_stop "fault_producer did not register: $(svc_errtail mute)"
fi
svc_kill slowp

# --------------------------------------------------------------------- mb
svc_kill prod
big big1
svc_cfg mb 'buffers { size_kb: 16384 fill_policy: RING_BUFFER }
data_sources { config { name: "big1.ds" } }
duration_ms: 120000'
mkdir -p "$SVC_TMP/mb"
# About 1 MB/s from the producer (less on a busy machine): the session
# ends (Ctrl-C) once the fourth file is begun, three full ones behind it.
mb_files() {
	[ "$(files "$SVC_TMP/mb/t.pf" | wc -l)" -ge 4 ] || ! svc_running mb
}
svc_bg mb "$OUT/perfetto" --txt -c "$SVC_TMP/mb.pbtxt" -o "$SVC_TMP/mb/t.pf" --rotate-mb 1
svc_wait_for 90 mb_files
kill -INT "$(svc_pid mb)" 2>/dev/null
if svc_wait mb 60; then
	set -- $(files "$SVC_TMP/mb/t.pf")
	ok=1
	n=$#
	k=0
	for f in "$@"; do
		k=$((k + 1))
		sz=$(svc_file_size "$f")
		if [ $k -lt $n ] && { [ "$sz" -lt 1000000 ] || [ "$sz" -gt 1600000 ]; }; then
			ok=0
		fi
	done
	if [ $ok = 1 ] && [ $n -ge 2 ]; then
		pass rotate/mb/sizes
	else
		fail rotate/mb/sizes "$n files: $(ls -l "$SVC_TMP/mb" | awk '{print $5}' | tr '\n' ' ')"
	fi
	first=$(seqline mb0 "$1" | cut -d' ' -f1)
	if [ "$first" = 0 ]; then pass rotate/mb/from_zero; else fail rotate/mb/from_zero "first file starts at '$first'"; fi
	chain rotate/mb/abut "$@"
else
	fail rotate/mb "perfetto failed: $(svc_errtail mb)"
fi
svc_kill big1

# ------------------------------------------------------------------- full
if [ "$(id -u)" != 0 ]; then
	skip rotate/full "not root: cannot mount a small tmpfs"
elif ! mkdir -p "$SVC_TMP/small" || ! mount -t tmpfs -o size=3m,mode=0700 tmpfs "$SVC_TMP/small" 2>"$SVC_TMP/mount.err"; then
	skip rotate/full "cannot mount a tmpfs: $(head -n 1 "$SVC_TMP/mount.err")"
else
	big big2 1024
	svc_cfg full 'buffers { size_kb: 16384 fill_policy: RING_BUFFER }
data_sources { config { name: "big2.ds" } }
duration_ms: 8000'
	svc_perfetto full 40 --txt -c "$SVC_TMP/full.pbtxt" -o "$SVC_TMP/small/t.pf" --rotate-seconds 1
	rc=$?
	set -- $(files "$SVC_TMP/small/t.pf")
	last=""
	for f in "$@"; do last=$f; done
	now_ts=$("$OUT/trace_check" --boottime-now)
	if [ $rc = 0 ] && grep -q 'nearly full' "$SVC_TMP/full.err" && [ $# -ge 1 ] && [ -n "$last" ] &&
		svc_check_trace fulllast "$last" --allow-loss &&
		[ $((now_ts - $(svc_tc fulllast test_ts_max))) -lt $((3000000000 * SVC_SCALE)) ]; then
		pass rotate/full/keeps_newest
	else
		fail rotate/full/keeps_newest "rc=$rc files=$# $(grep -c deleted "$SVC_TMP/full.err") deletions; $(svc_errtail full)"
	fi
	[ $# -ge 2 ] && chain rotate/full/abut "$@"
	# The deletions are in the trace too (metadata), in some kept file.
	found=""
	for f in "$@"; do
		v=$(tpq "$f" "select int_value from metadata where name = 'trace_attribute.perfetto_cmd.rotate_files_deleted_for_space'")
		[ -n "$v" ] && [ "$v" -gt 0 ] && found=$v
	done
	if [ -n "$found" ]; then
		pass rotate/full/reported_in_trace
	else
		fail rotate/full/reported_in_trace "no file has trace_attribute.perfetto_cmd.rotate_files_deleted_for_space"
	fi
	rm -f "$SVC_TMP"/small/t.pf.*
	# One file bigger than the file system: stop, say so, keep it readable.
	svc_kill big2
	big big3 2048
	svc_cfg full2 'buffers { size_kb: 16384 fill_policy: RING_BUFFER }
data_sources { config { name: "big3.ds" } }
duration_ms: 30000'
	t0=$(svc_now_ms)
	svc_perfetto full2 60 --txt -c "$SVC_TMP/full2.pbtxt" -o "$SVC_TMP/small/u.pf" --rotate-seconds 100
	rc=$?
	ms=$(($(svc_now_ms) - t0))
	if [ $rc = 2 ] && grep -q 'no older file is left to delete: stopping' "$SVC_TMP/full2.err" &&
		[ $ms -lt 25000 ] && [ -f "$SVC_TMP/small/u.pf.0" ] &&
		svc_check_trace full2 "$SVC_TMP/small/u.pf.0" --allow-loss &&
		[ "$(svc_tc full2 test_packets)" -gt 300 ] &&
		[ -n "$(tpq "$SVC_TMP/small/u.pf.0" "select str_value from metadata where name = 'trace_attribute.perfetto_cmd.rotate_stopped'")" ]; then
		pass rotate/full/stops_cleanly
	else
		fail rotate/full/stops_cleanly "rc=$rc after $ms ms, $(svc_tc full2 test_packets) packets, $(svc_why full2) $(svc_errtail full2)"
	fi
	svc_kill big3
	umount "$SVC_TMP/small"
fi

svc_kill app
if svc_stop_traced traced; then
	pass rotate/traced_exit
else
	fail rotate/traced_exit "traced exited $(svc_rc traced): $(svc_errtail traced 5)"
fi
summary

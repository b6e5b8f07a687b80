#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_multi_machine.sh - traces of a host and other machines (packets with a
# machine_id) imported by trace_processor_shell, on small traces written
# for it (tests/data/tp/multi_machine/*.textproto, encoded with pfc_pbtxt):
#   sync/*     one RemoteClockSync round with a known offset (guest BOOTTIME
#              = host + 1000 s, 72 us round trip): guest sched, packets in
#              its BOOTTIME and MONOTONIC (by clock id and by sequence
#              defaults) and track events on its incremental clock land at
#              the host times the round gives (4.5 us early: within the
#              round trip); machine, cpu (ucpu 4096 on), thread, process,
#              track and clock_snapshot rows carry the machine;
#   drift/*    one sync packet per round: guest events between the rounds
#              use the first, later ones the second, also inside one bundle;
#   nosync/*   a guest without sync or snapshots is taken to share the
#              host's BOOTTIME (a zero-offset link, in clock_snapshot);
#   nosync_mono/*  ... but not when trace time is the host's MONOTONIC: its
#              events are dropped and counted;
#   same_uuid/*  track uuids belong to their machine: one uuid on three
#              machines is three tracks, each event on its machine's track
#              (the output of Perfetto's trace processor on the same trace);
#   invalid/*  invalid_clock_snapshots counts what Perfetto counts (the trace
#              clock going backwards among snapshots of the same clocks, a
#              clock twice, a global incremental clock, a changed unit).
# Usage: OUT=out sh tests/integration/tp_multi_machine.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tp_lib.sh"

tp_setup tp_multi_machine
DATA="$ROOT/tests/data/tp/multi_machine"

tp_encode sync drift nosync nosync_mono invalid_snapshots same_uuid

# ------------------------------------------------------------------ sync ----
expect sync/machine sync \
	"SELECT id, raw_id, name, sysname, release, arch, num_cpus, system_ram_bytes
	 FROM machine ORDER BY id" \
	'0,0,"[NULL]","Linux","6.1.0-host","x86_64",2,8000000000;1,42,"guest","Linux","6.6.0-guest","aarch64",4,2147483648'
# Guest 1012 s, + 50 us, + 100 us -> host 12 s and as much, - 4.5 us.
expect sync/sched sync \
	"SELECT s.ts, s.dur, c.cpu, s.ucpu, c.machine_id, t.tid FROM sched s
	 JOIN cpu c USING (ucpu) JOIN thread t USING (utid) ORDER BY s.ts" \
	'11999995500,100000,0,4096,1,100;12000000000,200000,0,0,0,500;12000045500,-1,1,4097,1,101;12000095500,-1,0,4096,1,0;12000200000,-1,0,0,0,0'
expect sync/within_round_trip sync \
	"SELECT COUNT(*) FROM sched s JOIN cpu c USING (ucpu) WHERE c.machine_id = 1
	 AND ((c.cpu = 0 AND (ABS(s.ts - 12000000000) <= 72000 OR ABS(s.ts - 12000100000) <= 72000))
	   OR (c.cpu = 1 AND ABS(s.ts - 12000050000) <= 72000))" \
	'3'
expect sync/cpu sync \
	"SELECT ucpu, cpu, machine_id FROM cpu ORDER BY ucpu" \
	'0,0,0;4096,0,1;4097,1,1'
expect sync/threads sync \
	"SELECT utid, tid, name, upid, is_idle, machine_id FROM thread ORDER BY utid" \
	'0,0,"swapper",0,1,0;1,0,"swapper",1,1,1;2,100,"vmworker",2,0,1;3,500,"hostd","[NULL]",0,0;4,101,"vmio","[NULL]",0,1'
# BOOTTIME 1013 s, MONOTONIC 813 s by clock id and by defaults (+ 1 us).
expect sync/packets sync \
	"SELECT p.pid, p.machine_id, c.ts, c.value FROM counter c
	 JOIN process_counter_track t ON c.track_id = t.id JOIN process p USING (upid)
	 ORDER BY c.ts, c.value" \
	'100,1,12999995500,1024.000000;100,1,12999995500,2048.000000;100,1,12999996500,3072.000000'
# Clock 64 of the guest's sequence: 1000 us, then 500 us more, from 1013 s.
expect sync/track_event sync \
	"SELECT s.ts, s.dur, s.name, t.machine_id FROM slice s JOIN track t ON s.track_id = t.id" \
	'13000995500,500000,"guest_work",1'
# The host snapshot; the round's links (MONOTONIC, BOOTTIME) at the UPDATE's
# host reading, host side and guest side; the guest sequence's snapshot.
expect sync/clock_snapshot sync \
	"SELECT snapshot_id, ts, clock_id, clock_value, machine_id FROM clock_snapshot ORDER BY id" \
	'0,10000000000,6,10000000000,0;0,10000000000,3,9500000000,0;0,10000000000,1,1700000010000000000,0;3,11000072000,3,10500072000,0;3,11000072000,3,811000076500,1;4,11000072000,6,11000072000,0;4,11000072000,6,1011000076500,1;5,12999995500,6,1013000000000,1;5,12999995500,64,0,1'
expect sync/bounds sync "SELECT * FROM trace_bounds" '11999995500,13001495500'
expect sync/no_clock_stats sync "SELECT COUNT(*) FROM stats WHERE name GLOB '*clock*' AND name != 'clock_sync_cache_miss' AND value != 0" '0'

# ----------------------------------------------------------------- drift ----
expect drift/ftrace drift \
	"SELECT ts, cpu, ucpu, a.string_value FROM ftrace_event e JOIN args a USING (arg_set_id)
	 WHERE a.key = 'buf' ORDER BY ts" \
	'41000000000,0,4096,"between";70000000000,1,4097,"before_round2";71998995501,1,4097,"after_round2";100999995501,0,4096,"after"'
expect drift/packets drift \
	"SELECT ts, value FROM counter ORDER BY ts" \
	'41000000000,1024.000000;100999995501,2048.000000'

# ---------------------------------------------------------------- nosync ----
expect nosync/ftrace nosync \
	"SELECT e.ts, e.ucpu, t.tid, t.machine_id FROM ftrace_event e JOIN thread t USING (utid)
	 ORDER BY e.ts" \
	'1000,0,100,0;2000,4096,200,1'
expect nosync/clock_snapshot nosync \
	"SELECT ts, clock_id, clock_name, clock_value, snapshot_id, machine_id FROM clock_snapshot
	 ORDER BY id" \
	'0,6,"BOOTTIME",0,0,1;0,6,"BOOTTIME",0,0,0'
expect nosync/metadata nosync \
	"SELECT name, int_value, str_value, machine_id FROM metadata
	 WHERE name IN ('ftrace_latest_data_start_ns', 'system_name') ORDER BY name, machine_id" \
	'"ftrace_latest_data_start_ns",900,"[NULL]",0;"ftrace_latest_data_start_ns",1900,"[NULL]",1;"system_name","[NULL]","Linux",0;"system_name","[NULL]","Darwin",1'
# Machine by machine in id order, as upstream writes them: the first row
# of a name is the primary machine's.
expect nosync/metadata_order nosync \
	"SELECT extract_metadata('ftrace_latest_data_start_ns') AS primary_start,
	        (SELECT group_concat(machine_id) FROM (SELECT machine_id FROM metadata
	         WHERE name = 'ftrace_latest_data_start_ns' ORDER BY id)) AS machines" \
	'900,"0,1"'
expect nosync/no_clock_stats nosync "SELECT COUNT(*) FROM stats WHERE name GLOB '*clock*' AND name != 'clock_sync_cache_miss' AND value != 0" '0'

expect nosync_mono/ftrace nosync_mono "SELECT ts, ucpu FROM ftrace_event" '900,0'
expect nosync_mono/packets nosync_mono "SELECT COUNT(*) FROM counter" '0'
expect nosync_mono/stats nosync_mono \
	"SELECT name, value, machine_id FROM stats WHERE name GLOB '*clock*' AND value != 0 ORDER BY name" \
	'"clock_sync_cache_miss",5,"[NULL]";"clock_sync_failure_unknown_source_clock",2,1;"clock_sync_unrelatable_clock_domains",1,1'

# --------------------------------------------------------------- invalid ----
expect invalid/stats invalid_snapshots \
	"SELECT name, value, machine_id, trace_id FROM stats WHERE name GLOB '*clock*' AND value != 0" \
	'"invalid_clock_snapshots",4,"[NULL]","[NULL]";"clock_sync_cache_miss",6,"[NULL]","[NULL]"'
expect invalid/conversions invalid_snapshots \
	"SELECT p.pid, c.ts FROM counter c JOIN process_counter_track t ON c.track_id = t.id
	 JOIN process p USING (upid) ORDER BY p.pid" \
	'1,1600;2,2100'
expect invalid/clock_snapshot invalid_snapshots \
	"SELECT DISTINCT snapshot_id FROM clock_snapshot ORDER BY snapshot_id" \
	'0;1;2;5'

# ------------------------------------------------------------- same_uuid ----
expect same_uuid/slices same_uuid \
	"SELECT s.ts, s.dur, s.name, t.name, t.machine_id, m.raw_id FROM slice s
	 JOIN track t ON s.track_id = t.id JOIN machine m ON m.id = t.machine_id ORDER BY s.ts" \
	'2000,0,"on-host","host-track",0,0;3000,0,"on-guest7","guest7-track",1,7;4000,0,"on-guest9","guest9-track",2,9;5000,1000,"child-slice","guest9-child",2,9'
expect same_uuid/tracks same_uuid \
	"SELECT id, name, machine_id, type FROM track ORDER BY id" \
	'0,"host-track",0,"global_merged_track_event";1,"guest7-track",1,"global_merged_track_event";2,"guest9-track",2,"global_merged_track_event";3,"guest9-child",2,"global_merged_track_event"'

summary

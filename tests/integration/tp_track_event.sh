#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_track_event.sh - TrackEvent import by trace_processor_shell, on small
# traces written for it (tests/data/tp/track_event/*.textproto, encoded with
# pfc_pbtxt):
#   slices/*    nesting (depth, parent_id, dur -1 while open), instants as
#               0-length slices, interned names and categories, descriptor
#               thread and process names, debug annotation args of each type
#               (end-event args join the slice), thread track dimensions;
#   counters/*  counter tracks: doubles, units, incremental values with a unit
#               multiplier reset by a clear, extra counters filling thread_ts;
#   state/*     packets needing incremental state dropped before a clear and
#               after a loss (counted in stats); interned data per generation;
#   flows/*     v2 flow ids (step, terminate), a legacy bind id, timestamps on
#               an incremental sequence clock in microseconds;
#   mojo/*      chrome_mojo_event_info args; Mojo methods interned as native
#               symbols are named by ModuleSymbols read after the events;
#   legacy/*    legacy async ids: tracks per (scope, first name, id) with a
#               compressor index, process-local ids, id_scope, 'S'/'T'/'F';
#   roi/*       TrackEventRangeOfInterest: metadata, and with
#               --crop-track-events earlier events dropped and counted;
#   debug/*     debug annotations as Perfetto flattens them: legacy JSON
#               values parsed into args, array indexes counted per key
#               across an event, NestedValues, DebugAnnotation proto values,
#               errors stopping one annotation; log_message args;
#   misuse/*    a slice on a counter track, a counter on a slice track or
#               without a value, a state event off a state track, as
#               Perfetto takes them;
#   states/*    state tracks: TYPE_STATE values (same value continues a row
#               and merges its args, no name ends it, dur -1 at the end),
#               global, process and thread state tracks from descriptors
#               seen after their children, misuse counted; concurrent
#               tracing sessions as state tracks;
#   tracks/*    descriptor tracks: has_first_packet_on_sequence on tracks
#               of a sequence's events (not on the default track), sort
#               index hints from sibling_order_rank under explicit process
#               and thread ordering, ChromeProcessDescriptor process args;
#   callstacks/* TrackEvent callstacks (inline frames with their symbols
#               on the track_event_inline mapping, interned ones on begin
#               and end, weights) in __intrinsic_track_event_callstacks,
#               as upstream's v58.2 shell has them;
#   robust/*    truncated traces import without crashing.
# Usage: OUT=out sh tests/integration/tp_track_event.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tp_lib.sh"

tp_setup tp_track_event
DATA="$ROOT/tests/data/tp/track_event"

tp_encode slices counters state flows mojo legacy roi debug misuse states tracks

# ---------------------------------------------------------------- slices ----
expect slices/nesting slices \
	"SELECT ts, dur, depth, parent_id, category, name FROM slice ORDER BY id" \
	'1000,500,0,"[NULL]","render","outer";1100,100,1,0,"render","inner";1150,0,2,1,"a,b","mark";1600,-1,0,"[NULL]","[NULL]","open"'
expect slices/thread_track slices \
	"SELECT DISTINCT t.name, t.tid, p.name, p.pid FROM slice s
	 JOIN thread_track tt ON s.track_id = tt.id JOIN thread t USING (utid)
	 JOIN process p USING (upid)" \
	'"worker",41,"app",40'
expect slices/track_dimensions slices \
	"SELECT a.key, a.int_value FROM thread_track tt JOIN track t2 ON t2.id = tt.id
	 JOIN args a ON a.arg_set_id = t2.dimension_arg_set_id" \
	'"utid",2'
expect slices/args_outer slices \
	"SELECT key, value_type, display_value FROM slice JOIN args USING (arg_set_id)
	 WHERE slice.name = 'outer'" \
	'"debug.frame","int","42"'
expect slices/args_inner slices \
	"SELECT flat_key, key, value_type, display_value FROM slice JOIN args USING (arg_set_id)
	 WHERE slice.name = 'inner' ORDER BY args.id" \
	'"debug.ok","debug.ok","bool","true";"debug.ratio","debug.ratio","real","0.25";"debug.ptr","debug.ptr","pointer","0x1000";"debug.big","debug.big","uint","18446744073709551615";"debug.obj.a","debug.obj.a","string","x";"debug.obj.list","debug.obj.list[0]","int","1";"debug.obj.list","debug.obj.list[1]","int","2";"debug.result","debug.result","string","done"'
expect slices/slice_id_alias slices \
	"SELECT count(*) FROM slice WHERE slice_id = id AND cat IS category" \
	'4'

# -------------------------------------------------------------- counters ----
expect counters/values counters \
	"SELECT c.ts, c.value, t.name, t.unit FROM counter c
	 JOIN counter_track t ON c.track_id = t.id ORDER BY c.ts" \
	'100,1.500000,"mem","bytes";200,7.000000,"mem","bytes";300,5000.000000,"thread_time","ns";400,7000.000000,"thread_time","ns";500,1000.000000,"thread_time","ns"'
expect counters/thread_scoped counters \
	"SELECT t.name, th.name FROM thread_counter_track t JOIN thread th USING (utid)" \
	'"thread_time","main"'
expect counters/thread_ts counters \
	"SELECT name, thread_ts, thread_dur FROM slice ORDER BY ts" \
	'"s",5000,2000;"i",1000,0'
expect counters/unknown_track counters \
	"SELECT value FROM stats WHERE name = 'track_event_counter_invalid_track_uuid'" \
	'1'

# ----------------------------------------------------------------- state ----
expect state/kept state "SELECT ts, name FROM slice ORDER BY ts" \
	'15,"other_sequence";20,"first";40,"second"'
expect state/dropped state \
	"SELECT value FROM stats WHERE name = 'packet_skipped_seq_needs_incremental_state_invalid'" \
	'2'
expect state/interned_skipped state \
	"SELECT value FROM stats WHERE name = 'interned_data_skipped_incremental_state_invalid'" \
	'1'

# ----------------------------------------------------------------- flows ----
expect flows/links flows \
	"SELECT so.name, si.name, f.trace_id FROM flow f JOIN slice so ON so.id = f.slice_out
	 JOIN slice si ON si.id = f.slice_in ORDER BY f.id" \
	'"send","relay",77;"relay","recv",77;"bind_out","bind_in",5'
expect flows/incremental_clock flows "SELECT ts, dur FROM slice WHERE name = 'send'" \
	'1010000,5000'

# ---------------------------------------------------------------- legacy ----
expect legacy/slices legacy \
	"SELECT ts, dur, depth, name, track_id, thread_ts FROM slice ORDER BY id" \
	'100,30,0,"req",1,"[NULL]";110,30,0,"req2",2,"[NULL]";120,0,1,"step",1,"[NULL]";150,10,0,"local",3,"[NULL]";170,20,0,"old",4,"[NULL]";180,0,1,"old",4,"[NULL]"'
expect legacy/tracks legacy \
	"SELECT t.name, t.type, t.track_group_id,
	   (SELECT group_concat(key || '=' || display_value) FROM args a WHERE a.arg_set_id = t.dimension_arg_set_id),
	   (SELECT group_concat(key || '=' || display_value) FROM args a WHERE a.arg_set_id = t.source_arg_set_id)
	 FROM track t WHERE t.type GLOB 'legacy_async*' ORDER BY t.id" \
	'"req","legacy_async_global_slice",0,"scope=net,name=req,track_compressor_idx=0","source=chrome,trace_id_is_process_scoped=false,upid=1,source_scope=net";"req2","legacy_async_global_slice",1,"scope=net,name=req2,track_compressor_idx=0","source=chrome,trace_id_is_process_scoped=false,upid=1,source_scope=net";"local","legacy_async_process_slice",2,"upid=1,scope=io,name=local,track_compressor_idx=0","source=chrome,trace_id_is_process_scoped=true,upid=1,source_scope=io";"old","legacy_async_global_slice",3,"scope=io:sc,name=old,track_compressor_idx=0","source=chrome,trace_id_is_process_scoped=false,upid=1,source_scope=io:sc"'
expect legacy/phase_args legacy \
	"SELECT s.ts, a.key, a.display_value FROM slice s JOIN args a USING (arg_set_id)
	 WHERE s.name = 'old' ORDER BY s.ts, a.id" \
	'170,"legacy_trace_source_id","9";170,"legacy_event.passthrough_utid","2";170,"legacy_event.phase","S";180,"legacy_trace_source_id","9";180,"legacy_event.passthrough_utid","2";180,"legacy_event.phase","T"'
expect legacy/no_id legacy \
	"SELECT value FROM stats WHERE name = 'track_event_parser_errors'" '1'

# ------------------------------------------------------------------- roi ----
roi_sql="SELECT name, ts, dur FROM slice UNION ALL SELECT name, value, -1 FROM stats
	 WHERE value > 0 AND name GLOB 'track_event*' UNION ALL
	 SELECT name, int_value, -2 FROM metadata WHERE name = 'range_of_interest_start_us'"
expect roi/kept roi "$roi_sql" \
	'"before",1000,0;"edge",1999,1001;"at",2000,0;"track_event_range_of_interest_missing_start_us",1,-1;"range_of_interest_start_us",2,-2'
FLAGS=--crop-track-events
expect roi/cropped roi "$roi_sql" \
	'"at",2000,0;"track_event_dropped_packets_outside_of_range_of_interest",2,-1;"track_event_range_of_interest_missing_start_us",1,-1;"range_of_interest_start_us",2,-2'
FLAGS=

# expect_args NAME SLICE EXPECTED: "flat_key,key,value_type,display_value"
# of the args of slice SLICE in debug, in order.
expect_args() {
	expect "debug/$1" debug "SELECT flat_key, key, value_type, display_value FROM slice
		JOIN args USING (arg_set_id) WHERE slice.name = '$2' ORDER BY args.id" "$3"
}
expect_args json json \
	'"debug.j.a","debug.j.a","int","1";"debug.j.b","debug.j.b[0]","bool","true";"debug.j.b","debug.j.b[1]","string","sé";"debug.j.c.d","debug.j.c.d","real","150.0";"debug.j.f","debug.j.f[0][0]","int","1";"debug.s","debug.s","string","hi";"debug.m","debug.m","int","-7";"debug.bad.x","debug.bad.x","int","1"'
expect_args arrays arrays \
	'"debug.arr","debug.arr[0]","int","1";"debug.arr","debug.arr[2]","int","2";"debug.js","debug.js[0]","int","5";"debug.js","debug.js[1]","int","6"'
expect_args nested nested \
	'"debug.nv.x_y","debug.nv.x_y","int","3";"debug.nv.l","debug.nv.l[0]","string","p";"debug.nv.l","debug.nv.l[1]","bool","true"'
expect_args proto proto \
	'"debug.p.inner","debug.p.inner","int","5";"debug.pi.z","debug.pi.z","bool","true";"debug.stop.a","debug.stop.a","int","1";"debug.after","debug.after","int","9"'
expect_args log log \
	'"source.file_name","source.file_name","string","b.cc";"source.function_name","source.function_name","string","[NULL]";"source.line_number","source.line_number","uint","7";"track_event.log_message.message","track_event.log_message.message","string","hello";"track_event.log_message.file_name","track_event.log_message.file_name","string","src\a.cc";"track_event.log_message.function_name","track_event.log_message.function_name","string","Run";"track_event.log_message.line_number","track_event.log_message.line_number","int","12";"track_event.priority","track_event.priority","int","5"'
expect debug/errors debug \
	"SELECT value FROM stats WHERE name = 'track_event_parser_errors'" '3'

# ---------------------------------------------------------------- misuse ----
expect misuse/slice_on_counter misuse \
	"SELECT s.ts, s.dur, s.name, t.name, t.type FROM slice s JOIN track t ON s.track_id = t.id" \
	'20,10,"on_counter","c","global_counter_track_event"'
expect misuse/counters misuse "SELECT ts, value FROM counter" '60,4.000000'
expect misuse/stats misuse \
	"SELECT name, value FROM stats WHERE value > 0 AND name GLOB 'track_event*' ORDER BY name" \
	'"track_event_counter_invalid_track_uuid",1;"track_event_counter_missing_value",1;"track_event_parser_errors",1'

# ---------------------------------------------------------------- states ----
expect states/columns states "SELECT * FROM state WHERE id < 5" \
	'0,100,100,0,"cat","A",25;1,110,-1,2,"[NULL]","Foreground","[NULL]";2,120,-1,4,"[NULL]","Running","[NULL]";3,200,100,0,"[NULL]","B","[NULL]";4,400,-1,0,"[NULL]","C","[NULL]"'
expect states/merged_args states \
	"SELECT key, display_value FROM state JOIN args USING (arg_set_id) WHERE value = 'A' ORDER BY args.id" \
	'"debug.x","1";"debug.y","again"'
expect states/tracks states \
	"SELECT s.value, st.name, st.type, p.name, th.name FROM state s
	 JOIN state_track st ON s.track_id = st.id
	 LEFT JOIN process_state_track pst ON pst.id = s.track_id LEFT JOIN process p USING (upid)
	 LEFT JOIN thread_state_track tst ON tst.id = s.track_id LEFT JOIN thread th USING (utid)
	 WHERE s.ts BETWEEN 100 AND 199 ORDER BY s.ts" \
	'"A","Mode","global_state_track_event","[NULL]","[NULL]";"Foreground","ProcState","process_state_track_event","Browser","[NULL]";"Running","ThreadState","thread_state_track_event","[NULL]","t1"'
expect states/not_slice_tracks states \
	"SELECT (SELECT count(*) FROM thread_track WHERE name IS NOT NULL),
	        (SELECT count(*) FROM process_track WHERE name IS NOT NULL),
	        (SELECT count(*) FROM counter_track WHERE name = 'Mode')" '0,0,0'
expect states/sessions states \
	"SELECT t.name, s.ts, s.dur, s.value, extract_arg(s.arg_set_id, 'consumer_uid')
	 FROM state s JOIN track t ON s.track_id = t.id
	 WHERE t.type = 'concurrent_tracing_sessions' ORDER BY t.name, s.ts" \
	'"Session 5 (clone)",700,-1,"CLONED_READ_ONLY",0;"other",500,100,"CONFIGURED",1000;"other",600,200,"STARTED",0;"other",800,0,"DISABLED",0'
expect states/stats states \
	"SELECT name, value FROM stats WHERE value > 0 AND
	 (name GLOB 'track_event*' OR name GLOB 'concurrent*') ORDER BY name" \
	'"concurrent_session_event_unknown_state",1;"track_event_parser_errors",2;"track_event_state_missing_track_uuid",1'

# ---------------------------------------------------------------- robust ----
# ------------------------------------------------------------------ mojo ----
mojo_args() {
	echo "SELECT s.name, a.key, a.display_value FROM slice s JOIN args a USING (arg_set_id)
	      WHERE a.key GLOB 'chrome_mojo_event_info.*' AND s.name = '$1' ORDER BY a.id"
}
expect mojo/closed_slice mojo "$(mojo_args closed)" \
	'"closed","chrome_mojo_event_info.ipc_hash","9";"closed","chrome_mojo_event_info.mojo_method_name","net::mojom::Socket::Send";"closed","chrome_mojo_event_info.mojo_interface_tag","net.mojom.Socket"'
expect mojo/given_tag_kept mojo "$(mojo_args tagged)" \
	'"tagged","chrome_mojo_event_info.mojo_interface_tag","given.Tag";"tagged","chrome_mojo_event_info.mojo_method_name","a::b::Recv"'
expect mojo/open_slice mojo "$(mojo_args open)" \
	'"open","chrome_mojo_event_info.mojo_method_name","Plain::Fn";"open","chrome_mojo_event_info.mojo_interface_tag","Plain::Fn"'
expect mojo/no_symbol mojo "$(mojo_args unknown)" \
	'"unknown","chrome_mojo_event_info.mojo_interface_method.native_symbol.mapping_id","0";"unknown","chrome_mojo_event_info.mojo_interface_method.native_symbol.rel_pc","64"'
expect mojo/no_location mojo "$(mojo_args no_iid)" \
	'"no_iid","chrome_mojo_event_info.mojo_interface_method_iid","99";"no_iid","chrome_mojo_event_info.is_reply","true"'

# ---------------------------------------------------------------- tracks ----
expect tracks/first_packet tracks \
	"SELECT s.name, extract_arg(t.source_arg_set_id, 'has_first_packet_on_sequence')
	 FROM slice s JOIN track t ON s.track_id = t.id ORDER BY s.ts" \
	'"on_async",1;"on_default","[NULL]"'
expect tracks/sort_index tracks \
	"SELECT pid, name, extract_arg(arg_set_id, 'process_sort_index_hint') FROM process
	 WHERE pid IN (10, 30)
	 UNION ALL SELECT tid, name, extract_arg(arg_set_id, 'thread_sort_index_hint')
	 FROM thread WHERE tid = 11" \
	'10,"app",7;30,"other","[NULL]";11,"main",0'
expect tracks/chrome_process tracks \
	"SELECT key, value_type, display_value FROM process JOIN args USING (arg_set_id)
	 WHERE pid = 10 ORDER BY key" \
	'"chrome.crash_trace_id","uint","99";"chrome.host_app_package_name","string","com.host";"chrome.process_type","string","[NULL]";"process_sort_index_hint","int","7"'

# About 40 prefixes of each trace, cut anywhere: the shell exits 0 or 1,
# never on a signal.
crashed=
for t in slices counters state flows mojo legacy roi debug misuse states tracks; do
	size=$(wc -c <"$tmp/$t.pb")
	step=$((size / 40 + 1))
	n=1
	while [ "$n" -lt "$size" ]; do
		head -c "$n" "$tmp/$t.pb" >"$tmp/cut.pb"
		timeout 60 "$TP" -Q "SELECT count(*) FROM slice" "$tmp/cut.pb" >/dev/null 2>&1
		rc=$?
		if [ "$rc" -gt 1 ]; then
			crashed="$crashed $t:$n(exit $rc)"
		fi
		n=$((n + step))
	done
done
if [ -z "$crashed" ]; then
	pass tp_track_event/robust/truncated
else
	fail tp_track_event/robust/truncated "crashed on:$crashed"
fi

# extract_arg(arg_set_id, key), as Perfetto's: a bool as int, a real, an
# indexed array member, a nested string, a missing key and a NULL set.
expect slices/extract_arg slices \
	"SELECT extract_arg(arg_set_id, 'debug.ok'), extract_arg(arg_set_id, 'debug.ratio'),
	 extract_arg(arg_set_id, 'debug.obj.list[1]'), extract_arg(arg_set_id, 'debug.obj.a'),
	 extract_arg(arg_set_id, 'debug.nope'), extract_arg(NULL, 'debug.ok')
	 FROM slice WHERE name = 'inner'" \
	'1,0.250000,2,"x","[NULL]","[NULL]"'

# ------------------------------------------------------------ callstacks ----
tp_encode callstacks
expect callstacks/rows callstacks "SELECT * FROM __intrinsic_track_event_callstacks ORDER BY id" \
	'0,0,0,1,"[NULL]",1.500000;1,1,0,3,"[NULL]","[NULL]";2,2,0,1,"[NULL]","[NULL]";3,1,0,"[NULL]",4,8.000000'
expect callstacks/frames callstacks \
	"SELECT f.id, f.name, f.mapping, f.rel_pc, s.name, s.source_file, s.line_number
	 FROM stack_profile_frame f LEFT JOIN stack_profile_symbol s USING (symbol_set_id) ORDER BY f.id" \
	'0,"loop",0,0,"loop","main.c",5;1,"paint",0,0,"paint","paint.c",30;2,"draw_frame",1,64,"[NULL]","[NULL]","[NULL]";3,"blit",1,128,"[NULL]","[NULL]","[NULL]";4,"flush",2,0,"flush","[NULL]",99'
expect callstacks/callsites callstacks "SELECT * FROM stack_profile_callsite ORDER BY id" \
	'0,0,"[NULL]",0;1,1,0,1;2,0,"[NULL]",2;3,1,2,3;4,1,2,4'
expect callstacks/mappings callstacks "SELECT * FROM stack_profile_mapping ORDER BY id" \
	'0,"",0,0,0,-1,0,"track_event_inline";1,"0abc",0,0,4096,65536,0,"/usr/lib/libdraw.so";2,"",0,0,0,-1,0,""'

summary

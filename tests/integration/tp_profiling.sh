#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_profiling.sh - linux.perf samples (TracePacket.perf_sample) as
# Perfetto's trace processor imports them, checked on a small trace
# (tests/data/tp/profiling/perf_samples.textproto, encoded with pfc_pbtxt):
#   perf_sample             one row per sample of two threads: cpu, cpu_mode
#                           ("unknown" when unset), leaf callsite (NULL
#                           without a callstack), unwind_error, session;
#   stack_profile_mapping   the interned mappings: hex build id ("" for
#                           none), name joined from its path components;
#   stack_profile_frame     one frame per (mapping, rel_pc, function name);
#   stack_profile_callsite  depth-3 callstacks sharing their first two
#                           callsites;
#   perf_session            one session per sequence;
#   counters                timebase counts on the (session, cpu)
#                           perf_cpu_counter tracks named cpu-clock;
#   stats                   kernel_records_lost per cpu, skipped samples;
#   join                    which functions each thread ran;
#   defaults                (perf_defaults.textproto) counter names from
#                           PerfSampleDefaults (counter + modifier, follower
#                           name, raw event), follower counts, is_timebase,
#                           one session per sequence, shard and guardrail
#                           stats;
#   stack_sample            (stack_sample.textproto) StackSample packets
#                           beside a linux.perf sample: sessions, task,
#                           execution and async contexts, counter tracks of
#                           the weights (session and per-cpu scope, unit,
#                           multiplier, description), inline frames with
#                           their symbols, per-sequence dummy mappings,
#                           cpu_profiling_samples; checked equal to
#                           upstream's v58.2 shell but for the followers:
#                           pfc_pbtxt writes follower_weights unpacked,
#                           which upstream's packed-only reader drops and
#                           ours reads (protoc's packed encoding: equal);
#   art_oome                (art_oome.textproto) ART's process metadata:
#                           the OOME heap_graph row a heap graph of the
#                           same dump fills in, its details, the thrower's
#                           stack (methods cut from signatures) and its
#                           R8 deobfuscation into a symbol set;
#   smaps                   (smaps.textproto) profiler_smaps rows of
#                           SmapsEntry messages, " (deleted)" trimmed,
#                           absent counts 0 and strings NULL (as upstream).
# Usage: OUT=out sh tests/integration/tp_profiling.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tp_lib.sh"

tp_setup tp_profiling
DATA="$ROOT/tests/data/tp/profiling"

tp_encode perf_samples perf_defaults

expect perf_sample perf_samples "SELECT * FROM perf_sample ORDER BY id" \
	'0,1000,2,0,"user",2,"[NULL]",0;1,2000,3,1,"user",3,"[NULL]",0;2,3000,3,1,"kernel",2,"invalid_map",0;3,4000,2,0,"unknown","[NULL]","[NULL]",0;4,6000,2,0,"unknown","[NULL]","[NULL]",0'
expect mapping perf_samples "SELECT * FROM stack_profile_mapping ORDER BY id" \
	'0,"",0,0,65536,131072,0,"/bin/app";1,"12ab",16,0,4096,8192,0,"/system/lib64/libc.so"'
expect frame perf_samples "SELECT * FROM stack_profile_frame ORDER BY id" \
	'0,"main",0,256,"[NULL]","[NULL]","[NULL]";1,"run",0,512,"[NULL]","[NULL]","[NULL]";2,"read",1,4100,"[NULL]","[NULL]","[NULL]";3,"write",1,4200,"[NULL]","[NULL]","[NULL]"'
expect callsite perf_samples "SELECT * FROM stack_profile_callsite ORDER BY id" \
	'0,0,"[NULL]",0;1,1,0,1;2,2,1,2;3,2,1,3'
expect session perf_samples "SELECT * FROM perf_session" '0,0,"[NULL]"'
expect counters perf_samples \
	"SELECT t.name, t.type, c.ts, c.value FROM counter c JOIN track t ON c.track_id = t.id ORDER BY c.ts" \
	'"cpu-clock","perf_cpu_counter",1000,1000.000000;"cpu-clock","perf_cpu_counter",2000,2000.000000;"cpu-clock","perf_cpu_counter",3000,3000.000000;"cpu-clock","perf_cpu_counter",4000,4000.000000;"cpu-clock","perf_cpu_counter",6000,6000.000000'
expect tracks perf_samples \
	"SELECT id, name, extract_arg(dimension_arg_set_id, 'cpu'), extract_arg(dimension_arg_set_id, 'perf_session_id') FROM track ORDER BY id" \
	'0,"cpu-clock",0,0;1,"cpu-clock",1,0'
expect stats perf_samples \
	"SELECT name, idx, value FROM stats WHERE value > 0 AND name GLOB '*perf*' ORDER BY name" \
	'"perf_cpu_lost_records",1,5;"perf_samples_skipped","[NULL]",1'
expect leaf_functions perf_samples \
	"SELECT t.tid, f.name, COUNT(*) FROM perf_sample s JOIN thread t USING (utid)
	 JOIN stack_profile_callsite c ON s.callsite_id = c.id
	 JOIN stack_profile_frame f ON c.frame_id = f.id GROUP BY t.tid, f.name ORDER BY t.tid, f.name" \
	'100,"read",1;101,"read",1;101,"write",1'
# Every function on the stacks of thread 101, walking each callsite to the root.
expect thread_functions perf_samples \
	"WITH RECURSIVE up(cs) AS (
	   SELECT s.callsite_id FROM perf_sample s JOIN thread t USING (utid) WHERE t.tid = 101
	   UNION SELECT c.parent_id FROM stack_profile_callsite c JOIN up ON c.id = up.cs
	   WHERE c.parent_id IS NOT NULL)
	 SELECT DISTINCT f.name FROM up JOIN stack_profile_callsite c ON c.id = up.cs
	 JOIN stack_profile_frame f ON c.frame_id = f.id ORDER BY f.name" \
	'"main";"read";"run";"write"'

expect defaults/counters perf_defaults \
	"SELECT c.ts, c.value, t.name, t.cpu, t.perf_session_id, t.is_timebase FROM counter c
	 JOIN perf_counter_track t ON c.track_id = t.id ORDER BY c.id" \
	'1000,10.000000,"cpu-cycles:u",2,0,1;1000,20.000000,"insns",2,0,0;1000,30.000000,"raw.0x8.0x11.0x0.0x0",2,0,0;1500,40.000000,"cpu-clock",2,1,1'
expect defaults/samples perf_defaults "SELECT * FROM perf_sample ORDER BY id" \
	'0,1000,2,2,"user","[NULL]","[NULL]",0;1,1500,2,2,"unknown","[NULL]","[NULL]",1'
expect defaults/sessions perf_defaults "SELECT * FROM perf_session" '0,0,"[NULL]";1,1,"[NULL]"'
expect defaults/stats perf_defaults \
	"SELECT name, idx, value FROM stats WHERE value > 0 AND name GLOB 'perf*' ORDER BY name" \
	'"perf_chosen_process_shard",0,2;"perf_guardrail_stop_ts",0,2000;"perf_process_shard_count",0,4'

tp_encode stack_sample art_oome
expect stack_sample/samples stack_sample "SELECT * FROM stack_sample ORDER BY id" \
	'0,150,"linux.perf",0,0,0,0;1,300,"ruby.cpu",1,1,2,1;2,400,"ruby.cpu",1,2,4,1;3,500,"ruby.cpu",2,"[NULL]",5,1'
expect stack_sample/sessions stack_sample \
	"SELECT id, source, timebase_unit FROM stack_sample_session ORDER BY id" \
	'0,"linux.perf","ns";1,"ruby.cpu","ns"'
expect stack_sample/perf_session stack_sample "SELECT * FROM perf_session" '0,0,"[NULL]"'
expect stack_sample/task_contexts stack_sample "SELECT * FROM stack_sample_task_context ORDER BY id" \
	'0,2,2,"[NULL]";1,2,3,"[NULL]";2,2,"[NULL]",1'
expect stack_sample/execution_contexts stack_sample \
	"SELECT * FROM stack_sample_execution_context ORDER BY id" '0,0,"user";1,1,"user";2,1,"kernel"'
expect stack_sample/async_contexts stack_sample "SELECT * FROM stack_sample_async_context ORDER BY id" \
	'0,"reactor","fiber","[NULL]";1,"job-9","fiber",0'
expect stack_sample/counters stack_sample \
	"SELECT ss.ts, ct.name, ct.unit, ct.type, ct.session_id, ct.cpu, ct.is_timebase, c.value
	 FROM stack_sample_counter c JOIN stack_sample ss ON ss.id = c.stack_sample_id
	 JOIN stack_sample_counter_track ct ON ct.id = c.track_id ORDER BY c.id" \
	'150,"cpu-clock","[NULL]","perf_cpu_counter",0,0,1,9.000000;300,"cpu-time","ns","stack_sample_session_counter",1,"[NULL]",1,1000.000000;300,"allocs","objects","stack_sample_session_counter",1,"[NULL]",0,4.000000;300,"misses","cache-misses","stack_sample_cpu_counter",1,1,0,6.000000;400,"cpu-time","ns","stack_sample_session_counter",1,"[NULL]",1,2000.000000;400,"allocs","objects","stack_sample_session_counter",1,"[NULL]",0,5.000000;500,"cpu-time","ns","stack_sample_session_counter",1,"[NULL]",1,3000.000000;500,"allocs","objects","stack_sample_session_counter",1,"[NULL]",0,7.000000'
expect stack_sample/track_args stack_sample \
	"SELECT name, extract_arg(source_arg_set_id, 'unit_multiplier'),
	 extract_arg(source_arg_set_id, 'description') FROM counter_track ORDER BY id" \
	'"cpu-clock","[NULL]","[NULL]";"cpu-time","[NULL]","on-cpu time";"allocs",8,"[NULL]";"misses","[NULL]","[NULL]";"wall","[NULL]","[NULL]"'
expect stack_sample/frames stack_sample \
	"SELECT f.id, f.name, f.mapping, f.symbol_set_id, f.type, s.source_file, s.line_number
	 FROM stack_profile_frame f LEFT JOIN stack_profile_symbol s USING (symbol_set_id) ORDER BY f.id" \
	'0,"perf_leaf",0,0,"[NULL]","[NULL]","[NULL]";1,"main",1,1,"[NULL]","app.rb",3;2,"Worker#run",1,2,"[NULL]","worker.rb",17;3,"Worker#run",2,3,"[NULL]","[NULL]","[NULL]";4,"Hash#fetch",2,4,"interpreted","[NULL]","[NULL]";5,"gc",1,5,"[NULL]","[NULL]","[NULL]"'
expect stack_sample/mappings stack_sample "SELECT * FROM stack_profile_mapping ORDER BY id" \
	'0,"",0,0,0,-1,0,"";1,"",0,0,0,-1,0,"stack_sample_inline";2,"",0,0,0,-1,0,""'
expect stack_sample/callsites stack_sample "SELECT * FROM stack_profile_callsite ORDER BY id" \
	'0,0,"[NULL]",0;1,0,"[NULL]",1;2,1,1,2;3,0,"[NULL]",3;4,1,3,4;5,1,1,5'
expect stack_sample/cpu_profiling stack_sample \
	"INCLUDE PERFETTO MODULE stacks.cpu_profiling;
	 SELECT source, count(*) FROM cpu_profiling_samples GROUP BY source ORDER BY source" \
	'"linux.perf",1;"ruby.cpu",3'

expect art_oome/heap_graph art_oome "SELECT * FROM heap_graph ORDER BY id" \
	'0,5000,2,"OOME","[NULL]",0;1,6000,3,"[NULL]","[NULL]",0'
expect art_oome/details art_oome \
	"INCLUDE PERFETTO MODULE android.memory.heap_graph.oome;
	 SELECT * FROM android_heap_graph_java_oome_details" \
	'0,0,4096,100,10,"Failed to allocate 4096 bytes"'
expect art_oome/thread_callsite art_oome "SELECT * FROM heap_graph_thread_callsite" '0,0,2,2'
expect art_oome/stack art_oome \
	"SELECT c.depth, f.name, f.deobfuscated_name, s.name, s.source_file, s.line_number, s.inlined
	 FROM stack_profile_callsite c JOIN stack_profile_frame f ON f.id = c.frame_id
	 LEFT JOIN stack_profile_symbol s USING (symbol_set_id) ORDER BY c.id, s.id" \
	'0,"com.example.leaky.Main.main","[NULL]","com.example.leaky.Main.main","[NULL]","[NULL]","[NULL]";1,"com.example.leaky.Main.fill","[NULL]","com.example.leaky.Main.fill","Main.java",12,"[NULL]";2,"qa.b","com.example.leaky.Cache.grow","com.example.leaky.Cache.grow","[NULL]","[NULL]",0'
expect art_oome/mapping art_oome "SELECT * FROM stack_profile_mapping" \
	'0,"",0,0,0,-1,0,"art_process_metadata"'
expect art_oome/process art_oome \
	"SELECT upid, pid, name, uid, android_appid FROM process ORDER BY upid" \
	'0,0,"[NULL]","[NULL]","[NULL]";1,1,"[NULL]","[NULL]","[NULL]";2,40,"com.example.leaky",10077,10077;3,41,"com.example.calm","[NULL]","[NULL]"'
expect art_oome/package_list art_oome "SELECT * FROM package_list" \
	'0,"com.example.leaky",10077,0,0,0;1,"com.example.leaky",10077,0,0,0'

tp_encode smaps
expect smaps/rows smaps "SELECT * FROM profiler_smaps ORDER BY id" \
	'0,2,300,"/tmp/blob.so (deleted)","/tmp/blob.so",1,1,12,3,1,"[NULL]",0,0,"[NULL]","[NULL]",0,0,0,0,0,0,0,0,0,0;1,2,300,"/usr/lib/libm.so","/usr/lib/libm.so",1,0,40,0,0,"libm.so",4096,77,"ab12","/dbg/libm.so",5,6,7,8,9,10,0,0,0,0;2,3,400,"[stack]","[stack]",1,0,0,0,0,"[NULL]",0,0,"[NULL]","[NULL]",0,0,0,0,0,0,0,0,0,0'

summary

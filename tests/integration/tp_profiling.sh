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
#                           stats.
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

summary

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_kernel.sh - kernel events that Perfetto's trace processor turns into
# slices, checked on small traces (tests/data/tp/kernel/*.textproto,
# encoded with pfc_pbtxt) against the rows Perfetto v58 gives:
#   syscalls_arm64    sys_enter/sys_exit: slices named from the aarch64
#                     table, args[i] and ret args; a sys_write cut where its
#                     thread writes an atrace line (truncated_sys_write_duration);
#   syscalls_x86_64   the x86_64 table (also from a SystemInfo after the
#                     events), rt_sigreturn an instant, unnamed numbers
#                     sys_<n>, numbers past 550 dropped, x32 numbers;
#   syscalls_unknown  an unknown machine: every syscall is sys_<n>;
#   kernel_events     suspend_resume on "Suspend/Resume Latency" tracks (the
#                     failed-suspend workaround, timekeeping_freeze(0)),
#                     mark_victim as mem.oom_kill, kprobe slices and instants;
#   irq               irq and softirq slices on "Irq/SoftIrq Cpu <n>" tracks
#                     (cpu_track rows), ret and vec args;
#   wq_signal_oom     workqueue slices named by kernel symbol or hex address
#                     (cpu arg), signal_generate/deliver instants (signal.sig),
#                     oom_score_adj and rss_stat counters with a utid arg, on
#                     the process's track or the *_thread_fallback one;
#   triggers          trigger/clone_snapshot_trigger instants on "Trace
#                     Triggers", trace_trigger metadata, clone trigger stat,
#                     clone start / buffer cloned stats (traced.stats);
#   display           InitialDisplayState and atrace ScreenState on the one
#                     global ScreenState counter; packages_list rows (the
#                     first of each name) and its error stats;
#   journald          systemd journal entries in logs (thread, args) and
#                     the journal's flush stats;
#   sys_stats         cpuidle_state and disk_stat counters (names, dimensions,
#                     units, MB and MB/s from sector and ms deltas);
#   battery           linux.sysfs_power battery counters (batt.*, charge from
#                     energy and voltage, power from current and voltage);
#   block_io          block_io_start/done slices on per-device block_io tracks;
#   cpu_info          cpu_available_frequencies, ARM identifier and feature
#                     args of the cpu table, the unknown-feature stat;
#   cma_61, cma_510   mm_cma_alloc slices as each kernel version ends them;
#   f2fs              f2fs_iostat(_latency) counters per device and key;
#   funcgraph         funcgraph_entry/exit slices (symbol or hex address,
#                     thread "Funcgraph" and idle "swapper<cpu> -funcgraph"
#                     tracks) and to_ftrace(id) lines;
#   ion               ion_heap_grow/shrink: mem.ion.<heap> totals after the
#                     change and per-thread signed mem.ion_change.<heap>
#                     counters ("unknown" heap), heap_name/utid dimensions;
#                     ion_stat: the unnamed mem.ion/mem.ion_change counters
#                     (heap_name NULL) and "<n> kB" mem.ion_buffer slices
#                     spread over tracks the way Perfetto's compressor does
#                     (an unseen end adopts a free track, a buffer id finds
#                     its own track again);
#   cgroup            cgroup_attach_task (both kernel layouts) as to_ftrace()
#                     prints it.
# Usage: OUT=out sh tests/integration/tp_kernel.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tp_lib.sh"

tp_setup tp_kernel
DATA="$ROOT/tests/data/tp/kernel"

tp_encode syscalls_arm64 syscalls_x86_64 syscalls_unknown kernel_events irq wq_signal_oom triggers display journald sys_stats battery block_io cpu_info cma_61 cma_510 f2fs funcgraph cgroup ion partial_switch

SLICES="SELECT s.ts, s.dur, s.name, s.category, s.depth, th.tid FROM slice s
	JOIN thread_track t ON s.track_id = t.id JOIN thread th USING (utid) ORDER BY s.ts"
ARGS="SELECT s.name, a.flat_key, a.key, a.int_value, a.value_type FROM slice s
	JOIN args a USING (arg_set_id) ORDER BY s.ts, a.id"

# ------------------------------------------------------------ syscalls ----
expect arm64/slices syscalls_arm64 "$SLICES" \
	'100,6,"sys_io_setup","[NULL]",0,1;105,5,"sys_io_destroy","[NULL]",0,2;1100,100,"sys_write","[NULL]",0,42;1300,50,"sys_write","[NULL]",0,42;1350,300,"test","[NULL]",0,42;1600,50,"sys_write","[NULL]",1,42'
expect arm64/args syscalls_arm64 "$ARGS" \
	'"sys_io_setup","args","args[0]",8,"uint";"sys_io_setup","args","args[1]",140737488355328,"uint";"sys_io_setup","ret","ret",0,"int";"sys_io_destroy","args","args[0]",42,"uint";"sys_io_destroy","ret","ret",-22,"int";"sys_write","args","args[0]",1,"uint";"sys_write","ret","ret",5,"int"'
expect arm64/truncated syscalls_arm64 \
	"SELECT name, value, severity, source FROM stats WHERE name = 'truncated_sys_write_duration'" \
	'"truncated_sys_write_duration",2,"info","analysis"'
expect arm64/raw_rows syscalls_arm64 \
	"SELECT name, COUNT(*) FROM ftrace_event GROUP BY name ORDER BY name" \
	'"print",2;"sys_enter",5;"sys_exit",5'
expect x86_64/slices syscalls_x86_64 "$SLICES" \
	'1000,500,"sys_read","[NULL]",0,7;2000,0,"sys_rt_sigreturn","[NULL]",0,7;2100,100,"sys_335","[NULL]",0,7;2300,100,"sys_548","[NULL]",0,7;2700,100,"sys_rt_sigaction","[NULL]",0,7'
expect x86_64/args syscalls_x86_64 "$ARGS" \
	'"sys_read","args","args[0]",3,"uint";"sys_read","args","args[1]",4096,"uint";"sys_read","args","args[2]",-1,"uint";"sys_read","ret","ret",17,"int";"sys_335","ret","ret",-38,"int";"sys_rt_sigaction","ret","ret",0,"int"'
expect unknown/slices syscalls_unknown "$SLICES" '100,100,"sys_1","[NULL]",0,5'

# ------------------------------------------------------ suspend, oom, kprobe ----
expect suspend/slices kernel_events \
	"SELECT s.ts, s.dur, s.name, t.type FROM slice s JOIN track t ON s.track_id = t.id
	 WHERE t.name = 'Suspend/Resume Latency' ORDER BY s.ts" \
	'10000,2900,"suspend_enter(3)","suspend_resume";12000,1000,"freeze_processes(0)","suspend_resume";12500,400,"thaw_processes(0)","suspend_resume";15000,5000,"suspend_enter(3)","suspend_resume";30000,10000,"CPU(0)","suspend_resume";50000,10000,"timekeeping_freeze(0)","suspend_resume"'
expect suspend/tracks kernel_events \
	"SELECT COUNT(*) FROM track WHERE name = 'Suspend/Resume Latency'" '3'
expect suspend/args kernel_events \
	"SELECT a.key, a.int_value, a.string_value, a.value_type FROM slice s JOIN args a USING (arg_set_id)
	 WHERE s.ts = 10000 ORDER BY a.id" \
	'"utid",0,"[NULL]","uint";"event_type","[NULL]","Main Kernel Suspend Event","string";"cpu",0,"[NULL]","uint";"device_name","[NULL]","[NULL]","string";"driver_name","[NULL]","[NULL]","string";"callback_phase","[NULL]","[NULL]","string"'
expect oom_kprobe/slices kernel_events "$SLICES" \
	'70000,0,"mem.oom_kill","[NULL]",0,300;71000,1200,"fuse_file_write_iter","[NULL]",0,42;71500,0,"do_sys_open","[NULL]",1,42'

# ------------------------------------------------------------------ irq ----
expect irq/slices irq \
	"SELECT s.ts, s.dur, s.name, s.category, t.name, t.type FROM slice s
	 JOIN track t ON s.track_id = t.id ORDER BY s.ts" \
	'1000,1000,"IRQ (resource1)","irq","Irq Cpu 1","cpu_irq";1500,100,"IRQ (eth0)","irq","Irq Cpu 0","cpu_irq";2500,400,"NET_RX","irq","SoftIrq Cpu 1","cpu_softirq";3000,-1,"IRQ (resource1)","irq","Irq Cpu 0","cpu_irq"'
expect irq/args irq \
	"SELECT s.name, a.key, a.int_value, a.string_value FROM slice s JOIN args a USING (arg_set_id)
	 ORDER BY s.ts" \
	'"IRQ (resource1)","ret","[NULL]","handled";"IRQ (eth0)","ret","[NULL]","unhandled";"NET_RX","vec",3,"[NULL]"'
expect irq/cpu_track irq "SELECT cpu FROM cpu_track ORDER BY cpu" '0;1;1'

# --------------------------------------- workqueue, signals, oom_score_adj ----
expect wq/slices wq_signal_oom "$SLICES" \
	'1000,500,"vmstat_update","workqueue",0,50;2000,500,"0xdeadbeef","workqueue",0,50;3000,0,"signal_generate","[NULL]",0,70;3100,0,"signal_deliver","[NULL]",0,70'
expect wq/args wq_signal_oom "$ARGS" \
	'"vmstat_update","cpu","cpu",2,"int";"0xdeadbeef","cpu","cpu",2,"int";"signal_generate","signal.sig","signal.sig",9,"int";"signal_deliver","signal.sig","signal.sig",9,"int"'
expect wq/unsymbolized wq_signal_oom \
	"SELECT value FROM stats WHERE name = 'interned_data_tokenizer_errors'" '2'
expect oom/counters wq_signal_oom \
	"SELECT c.ts, CAST(c.value AS INT), t.name, t.type,
	 (SELECT th.tid FROM args a JOIN thread th ON th.utid = a.int_value
	  WHERE a.arg_set_id = c.arg_set_id AND a.key = 'utid') AS tid,
	 (SELECT group_concat(a.key || '=' || a.display_value) FROM args a
	  WHERE a.arg_set_id = t.dimension_arg_set_id) AS dims
	 FROM counter c JOIN track t ON c.track_id = t.id ORDER BY c.ts" \
	'4000,-900,"oom_score_adj","oom_score_adj",81,"upid=2";4050,100,"oom_score_adj","oom_score_adj_thread_fallback",82,"utid=6";4100,4096,"mem.rss.anon","process_memory_thread_fallback",90,"utid=7,process_memory_key=rss.anon"'

# ------------------------------------------------------------- triggers ----
expect trigger/slices triggers \
	"SELECT s.ts, s.dur, s.name, t.name AS track, t.type,
	 (SELECT group_concat(a.key || '=' || a.display_value) FROM args a
	  WHERE a.arg_set_id = s.arg_set_id) AS args
	 FROM slice s JOIN track t ON s.track_id = t.id ORDER BY s.ts" \
	'100,0,"first","Trace Triggers","triggers","producer_name=perfetto_cmd,trusted_producer_uid=2000";200,0,"second","Trace Triggers","triggers","[NULL]";300,0,"clone","Trace Triggers","triggers","[NULL]"'
expect trigger/metadata triggers \
	"SELECT str_value FROM metadata WHERE name = 'trace_trigger'" '"clone"'
expect trigger/clone_ts triggers \
	"SELECT value FROM stats WHERE name = 'traced_clone_trigger_timestamp_ns'" '300'
expect trigger/clone_flush triggers \
	"INCLUDE PERFETTO MODULE traced.stats; SELECT c.buffer_id, c.duration_ns, t.duration_ns FROM traced_clone_flush_latency c JOIN traced_trigger_clone_flush_latency t USING (buffer_id)" \
	'0,200,150;1,150,100'

# ------------------------------------------------------------- display ----
expect display/screen_state display \
	"SELECT t.name, t.type, c.ts, c.value FROM counter_track t JOIN counter c ON t.id = c.track_id ORDER BY c.ts" \
	'"ScreenState","screen_state",1,2.000000;"ScreenState","screen_state",1000,0.000000'
expect display/package_list display \
	"SELECT id, package_name, uid, debuggable, profileable_from_shell, version_code,
	        (SELECT value FROM stats WHERE name = 'packages_list_has_read_errors') AS read_errors
	 FROM package_list" \
	'0,"com.a",10100,1,0,7,0;1,"com.b",10101,0,1,0,0'

# ------------------------------------------------------------- journald ----
expect journald/logs journald \
	"INCLUDE PERFETTO MODULE linux.systemd_journald;
	 SELECT l.ts, t.tid, p.pid, l.prio, l.tag, l.msg, l.uid, l.comm, l.systemd_unit,
	        l.hostname, l.transport
	 FROM linux_systemd_journald_logs l LEFT JOIN thread t USING (utid)
	 LEFT JOIN process p USING (upid) ORDER BY l.ts" \
	'1000,43,42,6,"myapp","hello",1000,"myapp","myapp.service","host","journal";2000,7,7,3,"sshd","refused","[NULL]","[NULL]","[NULL]","[NULL]","syslog";3000,"[NULL]","[NULL]",0,"kernel","[NULL]","[NULL]","[NULL]","[NULL]","[NULL]","[NULL]"'
expect journald/stats journald \
	"SELECT name, value FROM stats WHERE name GLOB 'systemd_journal_*' ORDER BY name" \
	'"systemd_journal_num_failed",1;"systemd_journal_num_total",5'
expect journald/android_logs journald "SELECT count(*) FROM android_logs" '0'

# ------------------------------------------------------------ sys_stats ----
expect sys_stats/counters sys_stats \
	"SELECT c.ts, t.name, t.type, t.unit, c.value,
	 (SELECT group_concat(a.key || '=' || a.display_value) FROM args a
	  WHERE a.arg_set_id = t.dimension_arg_set_id) AS dims
	 FROM counter c JOIN counter_track t ON c.track_id = t.id ORDER BY c.ts, t.name" \
	'500,"cpuidle3.C2","cpu_idle_state","us",77.000000,"cpu=3,state=C2";500,"cpuidle3.WFI","cpu_idle_state","us",1200.000000,"cpu=3,state=WFI";900,"diskstat.[nvme0n1].discard_amount","diskstat","MB",1.000000,"device_name=nvme0n1,counter_name=discard_amount";900,"diskstat.[nvme0n1].discard_throughput","diskstat","MB/s",2.000000,"device_name=nvme0n1,counter_name=discard_throughput";900,"diskstat.[nvme0n1].flush_amount","diskstat","count",3.000000,"device_name=nvme0n1,counter_name=flush_amount";900,"diskstat.[nvme0n1].flush_time","diskstat","ms",6.000000,"device_name=nvme0n1,counter_name=flush_time";900,"diskstat.[nvme0n1].read_amount","diskstat","MB",2.000000,"device_name=nvme0n1,counter_name=read_amount";900,"diskstat.[nvme0n1].read_throughput","diskstat","MB/s",1000.000000,"device_name=nvme0n1,counter_name=read_throughput";900,"diskstat.[nvme0n1].write_amount","diskstat","MB",1.000000,"device_name=nvme0n1,counter_name=write_amount";900,"diskstat.[nvme0n1].write_throughput","diskstat","MB/s",0.000000,"device_name=nvme0n1,counter_name=write_throughput"'

expect battery/counters battery \
	"SELECT c.ts, t.name, t.type, c.value,
	 (SELECT group_concat(a.key || '=' || a.display_value) FROM args a
	  WHERE a.arg_set_id = t.dimension_arg_set_id) AS dims
	 FROM counter c JOIN counter_track t ON c.track_id = t.id ORDER BY c.ts, t.name" \
	'1000,"batt.capacity_pct","battery_counter",55.500000,"battery_name=,counter_name=capacity_pct";1000,"batt.charge_uah","battery_counter",4000000.000000,"battery_name=,counter_name=charge_uah";1000,"batt.current.avg_ua","battery_counter",-200000.000000,"battery_name=,counter_name=current.avg_ua";1000,"batt.current_ua","battery_counter",-250000.000000,"battery_name=,counter_name=current_ua";1000,"batt.power_mw","battery_counter",1000.000000,"battery_name=,counter_name=power_mw";1000,"batt.voltage_uv","battery_counter",4000000.000000,"battery_name=,counter_name=voltage_uv";2000,"batt.BAT1.charge_uah","battery_counter",2500000.000000,"battery_name=BAT1,counter_name=charge_uah";2000,"batt.BAT1.voltage_uv","battery_counter",12000000.000000,"battery_name=BAT1,counter_name=voltage_uv"'

expect block_io/slices block_io \
	"SELECT s.ts, s.dur, s.name, t.type, extract_arg(t.dimension_arg_set_id, 'block_device'),
	 extract_arg(s.arg_set_id, 'sector') FROM slice s JOIN track t ON s.track_id = t.id ORDER BY s.ts" \
	'100,300,"block_io","block_io",8388609,2048;150,-1,"block_io","block_io",271581184,77'

expect cpu_info/freqs cpu_info \
	"SELECT cpu, freq FROM cpu_available_frequencies ORDER BY id" \
	'0,500000;0,900000;1,700000;1,1800000'
expect cpu_info/args cpu_info \
	"SELECT c.cpu, a.key, a.display_value FROM cpu c JOIN args a USING (arg_set_id) ORDER BY c.cpu, a.id" \
	'0,"cpu_features.mte3","true";0,"cpu_features.raw_bitmap","2";1,"arm_cpu_implementer","65";1,"arm_cpu_architecture","8";1,"arm_cpu_variant","1";1,"arm_cpu_part","3393";1,"arm_cpu_revision","2";1,"cpu_features.mte","true";1,"cpu_features.raw_bitmap","33"'
expect cpu_info/unknown_stat cpu_info \
	"SELECT value FROM stats WHERE name = 'cpu_info_unknown_cpu_features'" '1'

# ------------------------------------------------------------ cma, f2fs ----
CMA="SELECT s.ts, s.dur, s.name, th.tid, (SELECT group_concat(a.key || '=' || a.display_value)
	 FROM args a WHERE a.arg_set_id = s.arg_set_id) AS args FROM slice s
	 JOIN thread_track t ON s.track_id = t.id JOIN thread th USING (utid) ORDER BY s.ts"
expect cma/6.1 cma_61 "$CMA" \
	'1000,300,"mm_cma_alloc",40,"cma_name=camera,cma_pfn=4096,cma_req_pages=16,cma_nr_migrated=5,cma_nr_reclaimed=3,cma_nr_mapped=7";1200,200,"mm_cma_alloc",41,"cma_name=video,cma_pfn=8192,cma_req_pages=4,cma_nr_migrated=0,cma_nr_reclaimed=0,cma_nr_mapped=0"'
expect cma/5.10 cma_510 "$CMA" \
	'500,400,"mm_cma_alloc",9,"cma_name=gpu,cma_pfn=77,cma_req_pages=8,cma_nr_migrated=2,cma_nr_reclaimed=1,cma_nr_mapped=4,cma_nr_isolate_fail=1,cma_nr_migrate_fail=0,cma_nr_test_fail=3"'
expect f2fs/counters f2fs \
	"SELECT c.ts, t.name, t.type, CAST(c.value AS INT) FROM counter c JOIN counter_track t ON c.track_id = t.id
	 WHERE c.value != 0 ORDER BY c.ts, t.name" \
	'100,"f2fs_iostat.[253:5].other_fs_discard","f2fs_iostat",33;100,"f2fs_iostat.[253:5].read_app_total","f2fs_iostat",22;100,"f2fs_iostat.[253:5].read_fs_node","f2fs_iostat",44;100,"f2fs_iostat.[253:5].write_app_total","f2fs_iostat",11;200,"f2fs_iostat_latency.[253:5].read_data_avg","f2fs_iostat_latency",4;200,"f2fs_iostat_latency.[253:5].read_data_cnt","f2fs_iostat_latency",2;200,"f2fs_iostat_latency.[253:5].read_data_peak","f2fs_iostat_latency",9;200,"f2fs_iostat_latency.[253:5].write_async_meta_cnt","f2fs_iostat_latency",6'
expect f2fs/tracks f2fs \
	"SELECT type, COUNT(*) FROM counter_track GROUP BY type ORDER BY type" \
	'"f2fs_iostat",22;"f2fs_iostat_latency",27'

# ----------------------------------------------------------- funcgraph ----
expect funcgraph/slices funcgraph \
	"SELECT s.ts, s.dur, s.name, s.depth, t.name, t.type FROM slice s JOIN track t ON s.track_id = t.id ORDER BY s.ts" \
	'1000,500,"do_page_fault",0,"Funcgraph","thread_funcgraph";1100,100,"0x1000",1,"Funcgraph","thread_funcgraph";3000,500,"do_page_fault",0,"swapper1 -funcgraph","cpu_funcgraph"'
expect funcgraph/to_ftrace funcgraph "SELECT to_ftrace(id) FROM ftrace_event ORDER BY ts LIMIT 3" \
	'"            t_42-42    (-----) [000] .... 0.000000: tracing_mark_write: hello";"            t_42-42    (-----) [000] .... 0.000001: funcgraph_entry: depth=0 func=do_page_fault";"            t_42-42    (-----) [000] .... 0.000001: funcgraph_entry: depth=1 func=4096"'
expect funcgraph/to_ftrace_switch funcgraph "SELECT to_ftrace(id) FROM ftrace_event WHERE name = 'sched_switch'" \
	'"            t_42-42    (-----) [000] .... 0.002000: sched_switch: prev_comm=t-42 prev_pid=42 prev_prio=120 prev_state=R+ ==> next_comm=swapper/0 next_pid=0 next_prio=120"'

# ------------------------------------------------------------------ ion ----
expect ion/counters ion \
	"SELECT c.ts, t.name, t.type, CAST(c.value AS INT) FROM counter c JOIN counter_track t ON c.track_id = t.id
	 ORDER BY c.ts, t.name" \
	'100,"mem.ion.system","ion",12288;100,"mem.ion_change.system","ion_change",4096;150,"mem.ion.system","ion",11264;150,"mem.ion_change.system","ion_change",-1024;200,"mem.ion.unknown","ion",2048;200,"mem.ion_change.unknown","ion_change",2048;300,"mem.ion","ion",10240;300,"mem.ion_change","ion_change",10240;350,"mem.ion","ion",13240;350,"mem.ion_change","ion_change",3000;400,"mem.ion","ion",3000;400,"mem.ion_change","ion_change",-10240;450,"mem.ion","ion",0;450,"mem.ion_change","ion_change",-3000;500,"mem.ion","ion",0;500,"mem.ion_change","ion_change",-4096;600,"mem.ion","ion",2048;600,"mem.ion_change","ion_change",2048'
expect ion/dimensions ion \
	"SELECT t.name, (SELECT group_concat(a.key || '=' || IFNULL(a.display_value, 'NULL'))
	 FROM args a WHERE a.arg_set_id = t.dimension_arg_set_id) AS dims FROM track t WHERE t.type GLOB 'ion*' ORDER BY t.id" \
	'"mem.ion.system","heap_name=system";"mem.ion_change.system","heap_name=system,utid=1";"mem.ion_change.system","heap_name=system,utid=2";"mem.ion.unknown","heap_name=unknown";"mem.ion_change.unknown","heap_name=unknown,utid=1";"mem.ion","heap_name=NULL";"mem.ion_change","heap_name=NULL,utid=1";"mem.ion_change","heap_name=NULL,utid=2"'
expect ion/buffers ion \
	"SELECT s.ts, s.dur, s.name, s.track_id, t.name, t.type FROM slice s JOIN track t ON s.track_id = t.id ORDER BY s.ts" \
	'300,100,"10 kB",7,"mem.ion_buffer","android_ion_allocations";350,100,"2 kB",9,"mem.ion_buffer","android_ion_allocations";600,-1,"2 kB",9,"mem.ion_buffer","android_ion_allocations"'
expect ion/misplaced_end ion \
	"SELECT value FROM stats WHERE name = 'misplaced_end_event'" '1'
# -------------------------------------------------------------- cgroup ----
expect cgroup/to_ftrace cgroup "SELECT to_ftrace(id) FROM ftrace_event ORDER BY ts" \
	'"       <unknown>-42    (-----) [001] .... 5.000123: cgroup_attach_task: dst_root=2 dst_id=5 cgroup=top-app pid=7 comm=worker";"       <unknown>-42    (-----) [001] .... 5.000223: cgroup_attach_task: dst_root=2 dst_id=6 dst_level=1 dst_path=/background pid=8 comm=loader"'

# A sched_switch lacking fields, or whose event pid is not prev_pid: the
# row is prev_pid's thread with all seven fields (0 for those missing), as
# upstream's v58.2 shell has it.
expect partial_switch partial_switch \
	"SELECT e.utid, t.tid, to_ftrace(e.id) FROM ftrace_event e JOIN thread t USING (utid) ORDER BY e.id" \
	'0,0,"          <idle>-0     (-----) [000] .... 0.000001: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=0 prev_state=R ==> next_comm=worker next_pid=30 next_prio=0";1,30,"          worker-30    (-----) [000] .... 0.000002: sched_switch: prev_comm=worker prev_pid=30 prev_prio=0 prev_state=S ==> next_comm=helper next_pid=31 next_prio=120"'
summary

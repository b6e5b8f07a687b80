#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# perf_sampling.sh - traced_perf against the live kernel (skipped without
# cpu-wide perf sampling rights):
#   hot_fp / hot_dwarf  perf_hot spins in hot_a ~2/3 and hot_b ~1/3 of the
#                       time: they are the top leaves with plausible shares,
#                       built with frame pointers (UNWIND_FRAME_POINTER) and
#                       without (UNWIND_DWARF: main must be in the chain),
#                       and walked by the kernel (UNWIND_KERNEL_FRAME_POINTER);
#   kernel              a getppid() loop has kernel frames named from
#                       kallsyms under a "kernel" mapping;
#   followers           a page-faults follower counts the pages perf_hot
#                       touches (>= 90% of them, not over 150%);
#   scope               target_pid and target_cmdline (a glob): callstacks
#                       only for those processes, the others' samples skipped;
#   exits / deleted     a process that exits mid-session and one whose
#                       binary was deleted: sampled, the daemon survives;
#   object_file_mapped  samples whose pc is in an object file (ET_REL)
#                       mapped executable: named from its .symtab, the
#                       daemon lives;
#   debug_files         stripped binaries named from a .gnu_debuglink debug
#                       file and from MiniDebugInfo; one with neither stays
#                       unnamed; no_debuginfod_client: the daemon never
#                       loads libdw's debuginfod client;
#   short_lived         processes gone before the rings are read still get
#                       named user stacks (from the MMAP2 records);
#   tracepoint          a tracepoint timebase (sched:sched_switch) samples,
#                       and its filter (prev_comm) is applied by the kernel;
#   unwind_rules_match_libdw  every stack unwound with cached CFI rules
#                       (most of them) is unwound by libdw as well
#                       (TRACED_PERF_TEST_UNWIND_CROSSCHECK): none differ;
#   stacks_cut_at_thread_tops  the reader queued under half of the stack
#                       bytes the kernel copied (cut above each thread's
#                       outermost frame);
#   stack_cut_matches_whole  unwound cut and whole
#                       (TRACED_PERF_TEST_STACK_CUT_CHECK), every stack
#                       gives the same frames.
# Usage: OUT=out sh tests/integration/perf_sampling.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"
. "$(dirname "$0")/perf_lib.sh"

svc_require_bins traced traced_perf perfetto trace_processor_shell perf_hot perf_hot_nofp pfc_pbtxt
perf_require perf_sampling
# Every stack the cached CFI rules unwind is unwound by libdw too
# (unwind_rules_match_libdw, at the end).
perf_setup perf_sampling TRACED_PERF_TEST_UNWIND_CROSSCHECK=1

# Rings of 8 MiB: 64 KiB stack samples fill upstream's default 1 MiB in 16
# samples, which a loaded machine can fail to drain in time. Callstacks
# of the test's own processes only (scope by cmdline here and below): on
# a busy machine (a parallel build) unwinding everyone's stacks leaves a
# backlog that a stop cuts (traced waits for the data source's stop for
# a few seconds only, as upstream's does).
# hot NAME BINARY MODE: record BINARY spinning for 1.2 s of its CPU at 250 Hz.
hot() {
	local _pid _a _b _tot _r
	svc_cfg "$1" "buffers { size_kb: 32768 }
data_sources { config { name: \"linux.perf\" perf_event_config {
  timebase { frequency: 250 counter: SW_CPU_CLOCK }
  callstack_sampling { scope { target_cmdline: \"perf_hot*\" } user_frames: $3 }
  ring_buffer_pages: 2048
} } }
duration_ms: 120000"
	if ! perf_around "$1" 60 "$OUT/$2" spin 1.2; then
		fail "perf_sampling/$1" "recording failed: $(svc_errtail "$1")"
		return 1
	fi
	_pid=$(perf_hot_pid "$1")
	perf_leaf_counts "$1" "$_pid" >"$SVC_TMP/$1.leaves"
	_a=$(awk '$1 == "hot_a" { print $2 }' "$SVC_TMP/$1.leaves")
	_b=$(awk '$1 == "hot_b" { print $2 }' "$SVC_TMP/$1.leaves")
	_tot=$(awk '{ s += $2 } END { print s + 0 }' "$SVC_TMP/$1.leaves")
	_a=${_a:-0}
	_b=${_b:-0}
	# About 300 samples: hot_a 2/3 and hot_b 1/3 of those in the two, and
	# together most of the process's samples (the rest is clock_gettime).
	if [ "$_tot" -ge 150 ] && [ $((_a + _b)) -ge $((_tot * 6 / 10)) ] &&
		[ $((_a * 100)) -ge $(((_a + _b) * 55)) ] && [ $((_a * 100)) -le $(((_a + _b) * 78)) ]; then
		pass "perf_sampling/$1_leaves"
	else
		fail "perf_sampling/$1_leaves" "hot_a=$_a hot_b=$_b of $_tot: $(head -n 4 "$SVC_TMP/$1.leaves" | tr '\n' ';')"
	fi
	if perf_chain_has "$1" "$_pid" hot_a call_hot && perf_chain_has "$1" "$_pid" hot_a main; then
		pass "perf_sampling/$1_callers"
	else
		fail "perf_sampling/$1_callers" "hot_a's callsites lack call_hot or main"
	fi
}

hot hot_fp perf_hot UNWIND_FRAME_POINTER
hot hot_dwarf perf_hot_nofp UNWIND_DWARF
hot hot_kfp perf_hot UNWIND_KERNEL_FRAME_POINTER
n=$(perf_q hot_dwarf "select count(*) from stack_profile_mapping m where m.name like '%perf_hot_nofp' and length(m.build_id) = 40")
if [ "${n:-0}" -ge 1 ]; then
	pass perf_sampling/build_id
else
	fail perf_sampling/build_id "perf_hot_nofp's mapping has no 20-byte build id"
fi

# ---------------------------------------------------------------- kernel ----
svc_cfg kernel 'buffers { size_kb: 16384 }
data_sources { config { name: "linux.perf" perf_event_config {
  timebase { frequency: 250 counter: SW_CPU_CLOCK }
  callstack_sampling { scope { target_cmdline: "perf_hot*" } kernel_frames: true user_frames: UNWIND_DWARF }
  ring_buffer_pages: 2048
} } }
duration_ms: 120000'
if perf_around kernel 60 "$OUT/perf_hot_nofp" sys 0.8; then
	pid=$(perf_hot_pid kernel)
	n=$(perf_q kernel "select count(distinct f.name) from perf_sample s join thread t using(utid)
		join stack_profile_callsite c on s.callsite_id = c.id
		join stack_profile_frame f on c.frame_id = f.id
		join stack_profile_mapping m on f.mapping = m.id
		where t.tid = $pid and m.name like '%kernel' and f.name is not null")
	k=$(perf_q kernel "select count(*) from perf_sample s join thread t using(utid)
		where t.tid = $pid and s.cpu_mode = 'kernel'")
	if [ "${n:-0}" -ge 2 ] && [ "${k:-0}" -ge 10 ] &&
		perf_chain_has kernel "$pid" "$(perf_q kernel "select f.name from perf_sample s join thread t using(utid)
			join stack_profile_callsite c on s.callsite_id = c.id
			join stack_profile_frame f on c.frame_id = f.id
			join stack_profile_mapping m on f.mapping = m.id
			where t.tid = $pid and m.name like '%kernel' group by f.name order by count(*) desc limit 1")" sys_loop; then
		pass perf_sampling/kernel_frames
	else
		fail perf_sampling/kernel_frames "named kernel functions=$n kernel-mode samples=$k (or no sys_loop above them)"
	fi
else
	fail perf_sampling/kernel_frames "recording failed: $(svc_errtail kernel)"
fi

# ------------------------------------------------------------- followers ----
PAGES=20000
svc_cfg follow 'buffers { size_kb: 16384 }
data_sources { config { name: "linux.perf" perf_event_config {
  timebase { frequency: 1000 counter: SW_CPU_CLOCK }
  followers { counter: SW_PAGE_FAULTS name: "faults" }
} } }
duration_ms: 120000'
# Pinned to one CPU: no faults are counted on a CPU it just left.
PIN=""
command -v taskset >/dev/null 2>&1 && PIN="taskset -c $(($(nproc) - 1))"
if perf_around follow 60 $PIN "$OUT/perf_hot_nofp" pages $PAGES &&
	"$OUT/pfc_pbtxt" --type Trace decode "$SVC_TMP/follow.pb" >"$SVC_TMP/follow.txt"; then
	pid=$(perf_hot_pid follow)
	# The follower's delta between consecutive samples of a CPU, summed
	# over the intervals the workload began or ended (it was running).
	got=$(awk -v pid="$pid" '
		/perf_sample \{/ { in_s = 1; cpu = ""; p = ""; f = "" }
		in_s && /^ *cpu: / { cpu = $2 }
		in_s && /^ *pid: / { p = $2 }
		in_s && /follower_counts: / { f = $2 }
		in_s && /^  \}/ {
			in_s = 0
			if (f == "") next
			if ((cpu in prev) && (p == pid || prevpid[cpu] == pid)) sum += f - prev[cpu]
			prev[cpu] = f
			prevpid[cpu] = p
		}
		END { print sum + 0 }' "$SVC_TMP/follow.txt")
	if [ "$got" -ge $((PAGES * 9 / 10)) ] && [ "$got" -le $((PAGES * 3 / 2)) ]; then
		pass perf_sampling/follower_page_faults
	else
		fail perf_sampling/follower_page_faults "page faults counted for pid $pid: $got (touched $PAGES pages)"
	fi
	name=$(perf_q follow "select name from perf_counter_track where name like '%faults%' limit 1")
	if [ -n "$name" ]; then
		pass perf_sampling/follower_named
	else
		fail perf_sampling/follower_named "no perf counter track for the follower"
	fi
else
	fail perf_sampling/follower_page_faults "recording failed: $(svc_errtail follow)"
fi

# ----------------------------------------------------------------- scope ----
# cpu_spent TICKS PID...: returns once each PID has run TICKS more clock
# ticks of CPU (utime + stime) than when called: a session around it holds
# that much of their work, however busy the machine is.
cpu_spent() {
	local _t=$1 _p _want _now
	shift
	for _p in "$@"; do
		_want=$(($(proc_ticks "$_p") + _t))
		while _now=$(proc_ticks "$_p") && [ "$_now" -lt "$_want" ]; do
			sleep 0.05
		done
	done
}
proc_ticks() {
	set -- $(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
	[ $# -ge 13 ] || return 1
	echo $((${12} + ${13}))
}
# The spinners run on after the session (killed then), at a priority
# above a busy machine's: 20 samples are 0.1 s of one's CPU in 1.5 s.
$PERF_NICE "$OUT/perf_hot" spin 20 >"$SVC_TMP/scope.a" &
ra=$!
$PERF_NICE "$OUT/perf_hot" spin 20 >"$SVC_TMP/scope.b" &
rb=$!
svc_wait_for 5 test -s "$SVC_TMP/scope.b"
svc_wait_for 5 test -s "$SVC_TMP/scope.a"
pa=$(head -n 1 "$SVC_TMP/scope.a")
pb=$(head -n 1 "$SVC_TMP/scope.b")
svc_cfg scope "buffers { size_kb: 16384 }
data_sources { config { name: \"linux.perf\" perf_event_config {
  timebase { frequency: 200 counter: SW_CPU_CLOCK }
  callstack_sampling { scope { target_pid: $pa } user_frames: UNWIND_FRAME_POINTER }
} } }
duration_ms: 120000"
if perf_around scope 60 cpu_spent 50 "$pa" "$pb"; then
	in=$(perf_q scope "select count(*) from perf_sample s join thread t using(utid) where s.callsite_id is not null and t.tid = $pa")
	out=$(perf_q scope "select count(*) from perf_sample s join thread t using(utid) where s.callsite_id is not null and t.tid != $pa")
	other=$(perf_q scope "select count(*) from perf_sample s join thread t using(utid) where t.tid = $pb")
	if [ "${in:-0}" -ge 20 ] && [ "${out:-1}" -eq 0 ] && [ "${other:-0}" -ge 1 ]; then
		pass perf_sampling/scope_target_pid
	else
		fail perf_sampling/scope_target_pid "callstacks of $pa: $in, of others: $out; samples of $pb: $other"
	fi
else
	fail perf_sampling/scope_target_pid "recording failed: $(svc_errtail scope)"
fi
kill $ra $rb 2>/dev/null
wait $ra $rb 2>/dev/null

# target_cmdline: a glob on argv[0] picks perf_hot_nofp, not perf_hot.
$PERF_NICE "$OUT/perf_hot" spin 20 >"$SVC_TMP/cmd.a" &
ra=$!
$PERF_NICE "$OUT/perf_hot_nofp" spin 20 >"$SVC_TMP/cmd.b" &
rb=$!
svc_wait_for 5 test -s "$SVC_TMP/cmd.a"
svc_wait_for 5 test -s "$SVC_TMP/cmd.b"
pa=$(head -n 1 "$SVC_TMP/cmd.a")
pb=$(head -n 1 "$SVC_TMP/cmd.b")
svc_cfg cmd 'buffers { size_kb: 16384 }
data_sources { config { name: "linux.perf" perf_event_config {
  timebase { frequency: 200 counter: SW_CPU_CLOCK }
  callstack_sampling { scope { target_cmdline: "perf_hot_no*" } user_frames: UNWIND_DWARF }
  ring_buffer_pages: 2048
} } }
duration_ms: 120000'
if perf_around cmd 60 cpu_spent 50 "$pa" "$pb"; then
	in=$(perf_q cmd "select count(*) from perf_sample s join thread t using(utid) where s.callsite_id is not null and t.tid = $pb")
	out=$(perf_q cmd "select count(*) from perf_sample s join thread t using(utid) where s.callsite_id is not null and t.tid != $pb")
	skipped=$(perf_q cmd "select count(*) from perf_sample s join thread t using(utid) where s.callsite_id is null and t.tid = $pa")
	if [ "${in:-0}" -ge 20 ] && [ "${out:-1}" -eq 0 ] && [ "${skipped:-0}" -ge 5 ]; then
		pass perf_sampling/scope_target_cmdline
	else
		fail perf_sampling/scope_target_cmdline "callstacks of $pb: $in, of others: $out; skipped samples of $pa: $skipped"
	fi
else
	fail perf_sampling/scope_target_cmdline "recording failed: $(svc_errtail cmd)"
fi
kill $ra $rb 2>/dev/null
wait $ra $rb 2>/dev/null

# A process sampled before its execve (a shell, out of scope by its
# cmdline) and after it (perf_hot_nofp, in scope): the decision is made
# again at the exec (a COMM record with the exec flag). Before, the shell's
# "no" stood for the pid and the program's samples had no callstacks.
svc_cfg exec 'buffers { size_kb: 16384 }
data_sources { config { name: "linux.perf" perf_event_config {
  timebase { frequency: 250 counter: SW_CPU_CLOCK }
  callstack_sampling { scope { target_cmdline: "perf_hot_no*" } user_frames: UNWIND_DWARF }
  ring_buffer_pages: 2048
} } }
duration_ms: 120000'
# The shell counts to 300000 (sampled as "sh"), then becomes
# perf_hot_nofp for 0.8 s: same pid.
exec_work() {
	sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i + 1)); done; exec "$0" spin 0.8' \
		"$OUT/perf_hot_nofp"
}
if perf_around exec 60 exec_work; then
	pid=$(perf_hot_pid exec)
	sh_n=$(perf_q exec "select count(*) from perf_sample s join thread t using(utid) where t.tid = $pid and s.callsite_id is null")
	hot=$(perf_leaf_counts exec "$pid" | awk '$1 == "hot_a" || $1 == "hot_b" { s += $2 } END { print s + 0 }')
	echo "# scope_after_exec: samples without a callstack (the shell's) $sh_n, hot leaves after the exec $hot"
	if [ "${hot:-0}" -ge 50 ]; then
		pass perf_sampling/scope_after_exec
	else
		fail perf_sampling/scope_after_exec "hot leaves of pid $pid after its exec: $hot (samples without a callstack: $sh_n)"
	fi
else
	fail perf_sampling/scope_after_exec "recording failed: $(svc_errtail exec)"
fi

# -------------------------------------------------- exits and deletions ----
cp "$OUT/perf_hot_nofp" "$SVC_TMP/perf_hot_gone"
svc_cfg exits 'buffers { size_kb: 32768 }
data_sources { config { name: "linux.perf" perf_event_config {
  timebase { frequency: 250 counter: SW_CPU_CLOCK }
  callstack_sampling { scope { target_cmdline: "perf_hot*" } kernel_frames: true user_frames: UNWIND_DWARF }
  ring_buffer_pages: 2048
} } }
duration_ms: 120000'
# A binary deleted while it runs (1.5 s of its CPU), beside two processes
# that exit one after the other (0.9 s each), all inside the session.
exits_work() {
	local _g
	"$SVC_TMP/perf_hot_gone" spin 1.5 >"$SVC_TMP/exits.3" &
	_g=$!
	svc_wait_for 30 test -s "$SVC_TMP/exits.3"
	rm -f "$SVC_TMP/perf_hot_gone"
	"$OUT/perf_hot_nofp" spin 0.9 >"$SVC_TMP/exits.1"
	"$OUT/perf_hot_nofp" spin 0.9 >"$SVC_TMP/exits.2"
	wait $_g
}
if perf_around exits 60 exits_work; then
	p1=$(head -n 1 "$SVC_TMP/exits.1")
	p2=$(head -n 1 "$SVC_TMP/exits.2")
	p3=$(head -n 1 "$SVC_TMP/exits.3")
	a1=$(perf_leaf_counts exits "$p1" | awk '$1 == "hot_a" { print $2 }')
	a2=$(perf_leaf_counts exits "$p2" | awk '$1 == "hot_a" { print $2 }')
	n3=$(perf_q exits "select count(*) from perf_sample s join thread t using(utid) where t.tid = $p3 and s.callsite_id is not null")
	# A process the daemon first read a sample of after it had exited has
	# no cmdline to match the target with: all its samples are emitted
	# skipped (rejected), as upstream's traced_perf does. On a busy machine
	# the daemon's reading can lag a 0.9 s process's whole life; such a
	# process is not judged, the other is.
	judged=0 bad=""
	for _p in "$p1:${a1:-0}" "$p2:${a2:-0}"; do
		_pid=${_p%%:*} _a=${_p##*:}
		_n=$(perf_q exits "select count(*), count(s.callsite_id) from perf_sample s join thread t using(utid) where t.tid = $_pid")
		if [ "$_a" -ge 20 ]; then
			judged=$((judged + 1))
		elif [ "${_n#*,}" = 0 ] && [ "${_n%,*}" -gt 0 ]; then
			echo "# exit_mid_session: pid $_pid's ${_n%,*} samples all skipped (gone before the daemon read one: rejected)"
		else
			bad="$bad pid $_pid: hot_a $_a, samples (all, with callstacks) $_n, leaves: $(perf_leaf_counts exits "$_pid" | head -n 4 | tr '\n' ' ');"
		fi
	done
	if [ -n "$bad" ]; then
		fail perf_sampling/exit_mid_session "want >= 20 hot_a samples of each process that exited:$bad"
	elif [ "$judged" = 0 ]; then
		skip perf_sampling/exit_mid_session "both processes were gone before the daemon read their first sample (a machine too busy to judge)"
	else
		pass perf_sampling/exit_mid_session
	fi
	if [ "${n3:-0}" -ge 50 ]; then
		pass perf_sampling/deleted_binary
	else
		fail perf_sampling/deleted_binary "samples with callstacks of the deleted binary: $n3"
	fi
else
	fail perf_sampling/exit_mid_session "recording failed: $(svc_errtail exits)"
fi
if svc_running perf; then
	pass perf_sampling/daemon_alive
else
	fail perf_sampling/daemon_alive "traced_perf exited: $(svc_errtail perf)"
fi

# ---------------------------------------------------------- object file ----
# Compilers and linkers map object files (ET_REL). Symbolizing a pc in one
# makes libdw relocate the module through the section_address callback: a
# NULL one crashed the daemon (seen when a build ran beside a recording).
svc_cfg objmap 'buffers { size_kb: 16384 }
data_sources { config { name: "linux.perf" perf_event_config {
  timebase { frequency: 250 counter: SW_CPU_CLOCK }
  callstack_sampling { scope { target_cmdline: "perf_hot*" } user_frames: UNWIND_DWARF }
  ring_buffer_pages: 2048
} } }
duration_ms: 120000'
if perf_around objmap 60 "$OUT/perf_hot_nofp" relspin "$SVC_TMP/busy_rel.o"; then
	pid=$(perf_hot_pid objmap)
	n=$(perf_leaf_counts objmap "$pid" | awk '$1 == "busy_rel" { print $2 }')
	if svc_running perf && [ "${n:-0}" -ge 50 ]; then
		pass perf_sampling/object_file_mapped
	else
		fail perf_sampling/object_file_mapped "daemon running: $(svc_running perf && echo yes || echo no), busy_rel leaves: $n ($(perf_leaf_counts objmap "$pid" | head -n 3 | tr '\n' ' ')) $(svc_errtail perf 2)"
	fi
else
	fail perf_sampling/object_file_mapped "recording failed: $(svc_errtail objmap) $(svc_errtail perf 2)"
fi

# ---------------------------------------------------------- debug files ----
# Stripped binaries (no .symtab; hot_a and hot_b are static, so not in
# .dynsym either) named from a separate debug file found by its
# .gnu_debuglink in the .debug folder beside it, and from MiniDebugInfo
# (.gnu_debugdata: an xz-compressed ELF holding the symbol table); the same
# binary stripped with neither stays unnamed. The lookup never loads
# libdw's debuginfod client (it used to, with ~25 libraries, when a module
# had no debug file).
# The three copies side by side, 0.8 s of CPU each (~200 samples).
dbgf_work() {
	local _n _pids=
	for _n in link mini bare; do
		"$1/hot_$_n" spin 0.8 >"$SVC_TMP/dbgf.$_n" &
		_pids="$_pids $!"
	done
	wait $_pids
}
debug_files() {
	local _d _b _ok _why _n _pid _a _b2 _tot _pids
	_d=$SVC_TMP/dbg
	_b=$OUT/perf_hot_nofp
	mkdir -p "$_d/.debug"
	# Each copy gets a build id of its own: symbol tables are shared by
	# build id, so one with perf_hot_nofp's would be named from its
	# .symtab, read when the cases above sampled it.
	for _n in link mini bare; do
		cp "$_b" "$_d/hot_$_n" || return 1
		printf '\004\000\000\000\024\000\000\000\003\000\000\000GNU\000perfetto-c-test-id-%s' \
			"$(printf %s $_n | cut -c1)" >"$_d/note.$_n"
		objcopy --update-section .note.gnu.build-id="$_d/note.$_n" "$_d/hot_$_n" || return 1
	done
	objcopy --only-keep-debug "$_d/hot_link" "$_d/.debug/hot_link.debug" &&
		strip --strip-all "$_d/hot_link" &&
		(cd "$_d" && objcopy --add-gnu-debuglink=.debug/hot_link.debug hot_link) &&
		objcopy --only-keep-debug --wildcard -R '.debug*' -R .comment "$_d/hot_mini" "$_d/mini.elf" &&
		xz -f "$_d/mini.elf" && strip --strip-all "$_d/hot_mini" &&
		objcopy --add-section .gnu_debugdata="$_d/mini.elf.xz" "$_d/hot_mini" &&
		strip --strip-all "$_d/hot_bare" || return 1
	svc_cfg dbgf 'buffers { size_kb: 32768 }
data_sources { config { name: "linux.perf" perf_event_config {
  timebase { frequency: 250 counter: SW_CPU_CLOCK }
  callstack_sampling { scope { target_cmdline: "hot_*" } user_frames: UNWIND_DWARF }
  ring_buffer_pages: 2048
} } }
duration_ms: 120000'
	perf_around dbgf 60 dbgf_work "$_d"
	_ok=$?
	[ $_ok = 0 ] || {
		fail perf_sampling/debug_files "recording failed: $(svc_errtail dbgf) $(svc_errtail perf 2)"
		return 0
	}
	_ok=1
	_why=
	for _n in link mini bare; do
		_pid=$(head -n 1 "$SVC_TMP/dbgf.$_n")
		perf_leaf_counts dbgf "$_pid" >"$SVC_TMP/dbgf.$_n.leaves"
		_a=$(awk '$1 == "hot_a" { print $2 }' "$SVC_TMP/dbgf.$_n.leaves")
		_b2=$(awk '$1 == "hot_b" { print $2 }' "$SVC_TMP/dbgf.$_n.leaves")
		_tot=$(awk '{ s += $2 } END { print s + 0 }' "$SVC_TMP/dbgf.$_n.leaves")
		_why="$_why hot_$_n: hot_a=${_a:-0} hot_b=${_b2:-0} of $_tot;"
		if [ $_n = bare ]; then
			[ "$_tot" -ge 100 ] && [ -z "$_a$_b2" ] || _ok=0
		else
			[ "$_tot" -ge 100 ] && [ $((${_a:-0} + ${_b2:-0})) -ge $((_tot / 2)) ] || _ok=0
		fi
	done
	if [ $_ok = 1 ]; then
		pass perf_sampling/debug_files
	else
		fail perf_sampling/debug_files "$_why"
	fi
	if grep -q debuginfod "/proc/$(svc_pid perf)/maps" 2>/dev/null; then
		fail perf_sampling/no_debuginfod_client "traced_perf mapped $(grep -o '[^ /]*debuginfod[^ ]*' "/proc/$(svc_pid perf)/maps" | sort -u | tr '\n' ' ')"
	else
		pass perf_sampling/no_debuginfod_client
	fi
}
if command -v objcopy >/dev/null && command -v strip >/dev/null && command -v xz >/dev/null; then
	debug_files || fail perf_sampling/debug_files "could not make the stripped binaries (objcopy, strip, xz)"
else
	skip perf_sampling/debug_files "objcopy, strip or xz missing (binutils, xz-utils)"
fi

# ---------------------------------------------------------- short-lived ----
# Two processes live 0.3 s each and are gone long before the first read of
# the rings (every 2 s; 16 MiB rings do not get half full): /proc has
# nothing by then, so their stacks come from the kernel's MMAP2 records.
# (Before the rings were scanned for mappings first, the second process
# lost its stacks about one run in three, and every time with the CPU
# moves below.)
svc_cfg brief 'buffers { size_kb: 32768 }
data_sources { config { name: "linux.perf" perf_event_config {
  timebase { frequency: 100 counter: SW_CPU_CLOCK }
  callstack_sampling { user_frames: UNWIND_DWARF }
  ring_buffer_pages: 4096
  ring_buffer_read_period_ms: 2000
} } }
duration_ms: 120000'
# With two CPUs, each starts (exec: its MMAP2 records) on CPU 1 and then
# spins on CPU 0, whose ring is read first: the mappings must be taken from
# every ring before any ring's samples are unwound.
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
	brief_start="taskset -c 1"
	brief_cpu=0
else
	brief_start=
	brief_cpu=
fi
brief_work() {
	$brief_start "$OUT/perf_hot_nofp" spin 0.3 $brief_cpu >"$SVC_TMP/brief.1"
	$brief_start "$OUT/perf_hot_nofp" spin 0.3 $brief_cpu >"$SVC_TMP/brief.2"
}
if perf_around brief 60 brief_work; then
	p1=$(head -n 1 "$SVC_TMP/brief.1")
	p2=$(head -n 1 "$SVC_TMP/brief.2")
	a1=$(perf_leaf_counts brief "$p1" | awk '$1 == "hot_a" || $1 == "hot_b" { s += $2 } END { print s + 0 }')
	a2=$(perf_leaf_counts brief "$p2" | awk '$1 == "hot_a" || $1 == "hot_b" { s += $2 } END { print s + 0 }')
	if [ "$a1" -ge 10 ] && [ "$a2" -ge 10 ] && perf_chain_has brief "$p1" hot_a main; then
		pass perf_sampling/short_lived
		echo "# short_lived: hot_a/hot_b samples of the two gone processes: $a1 $a2"
	else
		fail perf_sampling/short_lived "hot samples of the two processes: $a1 $a2; leaves of the first: $(perf_leaf_counts brief "$p1" | head -n 4 | tr '\n' ' ')"
	fi
else
	fail perf_sampling/short_lived "recording failed: $(svc_errtail brief)"
fi

# ------------------------------------------------------------ tracepoint ----
# A fresh machine may boot without tracefs mounted: mount it as lib.sh does.
[ -e /sys/kernel/tracing/trace_clock ] || [ "$(id -u)" != 0 ] ||
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
svc_cfg tp 'buffers { size_kb: 8192 }
data_sources { config { name: "linux.perf" perf_event_config {
  timebase { period: 1 tracepoint { name: "sched:sched_switch" } }
} } }
duration_ms: 800'
if [ ! -e /sys/kernel/tracing/events/sched/sched_switch/id ] &&
	[ ! -e /sys/kernel/debug/tracing/events/sched/sched_switch/id ]; then
	skip perf_sampling/tracepoint_timebase "no tracefs with sched:sched_switch"
elif perf_record tp 30; then
	n=$(perf_q tp "select count(*) from perf_sample")
	if [ "${n:-0}" -ge 10 ]; then
		pass perf_sampling/tracepoint_timebase
	else
		fail perf_sampling/tracepoint_timebase "$n samples on sched_switch"
	fi
else
	fail perf_sampling/tracepoint_timebase "recording failed: $(svc_errtail tp)"
fi

# A tracepoint filter applied by the kernel: only perf_hot's switches.
svc_cfg tpf 'buffers { size_kb: 8192 }
data_sources { config { name: "linux.perf" perf_event_config {
  timebase { period: 1 tracepoint { name: "sched:sched_switch" filter: "prev_comm == \"perf_hot\"" } }
} } }
duration_ms: 120000'
if [ ! -e /sys/kernel/tracing/events/sched/sched_switch/id ] &&
	[ ! -e /sys/kernel/debug/tracing/events/sched/sched_switch/id ]; then
	skip perf_sampling/tracepoint_filter "no tracefs with sched:sched_switch"
elif perf_around tpf 60 "$OUT/perf_hot" naps 200; then
	pid=$(perf_hot_pid tpf)
	mine=$(perf_q tpf "select count(*) from perf_sample s join thread t using(utid) where t.tid = $pid")
	others=$(perf_q tpf "select count(*) from perf_sample s join thread t using(utid) where t.tid != $pid")
	if [ "${mine:-0}" -ge 150 ] && [ "${others:-1}" -eq 0 ]; then
		pass perf_sampling/tracepoint_filter
	else
		fail perf_sampling/tracepoint_filter "switches out of perf_hot: $mine, of others: $others"
	fi
else
	fail perf_sampling/tracepoint_filter "recording failed: $(svc_errtail tpf)"
fi

perf_check_exit perf_sampling

# The daemon's closing lines: how many DWARF stacks the cached rules did,
# and whether libdw, unwinding the same samples, ever disagreed.
line=$(grep 'unwinder (daemon lifetime)' "$SVC_TMP/perf.err" | tail -n 1)
fast=$(printf '%s\n' "$line" | sed -n 's/.*: \([0-9]*\) DWARF stacks by cached CFI rules.*/\1/p')
differ=$(printf '%s\n' "$line" | sed -n 's/.* \([0-9]*\) differ.*/\1/p')
if [ "${fast:-0}" -ge 500 ] && [ "$differ" = 0 ]; then
	pass perf_sampling/unwind_rules_match_libdw
else
	fail perf_sampling/unwind_rules_match_libdw "${line:-no unwinder line in the log}; $(grep 'unwind crosscheck' "$SVC_TMP/perf.err" | head -n 2)"
fi

# The reader queued each DWARF sample's stack only up to its thread's
# outermost frame (and slack): of a hot session's stacks, under half of
# what the kernel copied (the cases above passed with stacks cut so).
cut=$(sed -n 's/.*user stacks: \([0-9]*\) KiB copied by the kernel, \([0-9]*\) KiB of them queued.*/\1 \2/p' \
	"$SVC_TMP/perf.err" | awk '$1 >= 1024 && $2 * 2 < $1' | head -n 1)
if [ -n "$cut" ]; then
	pass perf_sampling/stacks_cut_at_thread_tops
else
	fail perf_sampling/stacks_cut_at_thread_tops "no session queued under half its stack bytes: $(grep 'user stacks' "$SVC_TMP/perf.err" | sed 's/.*user stacks/user stacks/' | head -n 3)"
fi

# The cut loses nothing: a daemon that queues whole stacks
# (TRACED_PERF_TEST_STACK_CUT_CHECK) unwinds each DWARF sample twice, cut
# where the reader would have cut it and whole; the frames must match.
if ! perf_start cutchk TRACED_PERF_TEST_STACK_CUT_CHECK=1; then
	fail perf_sampling/stack_cut_matches_whole "traced_perf did not register: $(svc_errtail cutchk)"
else
	svc_cfg cutchk_rec 'buffers { size_kb: 32768 }
data_sources { config { name: "linux.perf" perf_event_config {
  timebase { frequency: 500 counter: SW_CPU_CLOCK }
  callstack_sampling { scope { target_cmdline: "perf_hot*" } kernel_frames: true user_frames: UNWIND_DWARF }
  ring_buffer_pages: 2048
} } }
duration_ms: 120000'
	PERF_D=cutchk perf_around cutchk_rec 60 "$OUT/perf_hot_nofp" spin 1.5
	rc=$?
	kill -TERM "$(svc_pid cutchk)" 2>/dev/null
	svc_wait cutchk 10
	line=$(grep 'stack cut check:' "$SVC_TMP/cutchk.err" | tail -n 1)
	compared=$(printf '%s\n' "$line" | sed -n 's/.*check: \([0-9]*\) compared.*/\1/p')
	differ=$(printf '%s\n' "$line" | sed -n 's/.* \([0-9]*\) differ.*/\1/p')
	echo "# stack_cut_matches_whole: ${line:-no check line}"
	if [ "$rc" -eq 0 ] && [ "${compared:-0}" -ge 300 ] && [ "$differ" = 0 ]; then
		pass perf_sampling/stack_cut_matches_whole
	else
		fail perf_sampling/stack_cut_matches_whole "recording rc $rc; ${line:-no check line}; $(grep 'stack cut check: pid' "$SVC_TMP/cutchk.err" | head -n 2)"
	fi
fi

summary

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# heapprofd_cases.sh - heapprofd's hard cases (issue 26), each with
# out/hp/hp_cases (tests/heapprofd/hp_cases.c) under the preload library
# and our trace processor reading the result:
#   threads   8 threads keep 4 MiB each in thread_leak: 32 MiB +- 5%
#   fork      parent_leak's 16 MiB profiled; the forked child's child_leak
#             not (a child is not profiled by its parent's session), and
#             one process in the profile
#   exec      the process execs itself: what it kept before (before_exec)
#             and after (after_exec, the library and a new private
#             heapprofd again) are both there, 8 MiB +- 5% each, same pid
#   dlopen    dl_leak of a dlopen'd libhp_dl.so: 8 MiB +- 5%, its frame in
#             the library's mapping
#   exit_mid_dump  continuous dumps every 20 ms while the program churns;
#             it _exits between dumps: the trace reads, holds several dumps
#             of churn_loop, and heapprofd exits
#   heapprofd_killed  heapprofd SIGKILLed in a block_client session: the
#             program goes on (allocates 64 MiB more, exits 0) and stops
#             profiling (the ring is unmapped)
#   traced_restarted  traced dies and comes back while the program runs
#             unprofiled: its heapprofd registers again and a new session
#             profiles the program (late_leak: 64 MiB +- 5%)
#   overran   no block_client, a 64 KiB ring, heapprofd stopped (SIGSTOP)
#             while the program keeps 64 MiB more: the program goes on,
#             records are dropped, and the dump says so as Perfetto's
#             heapprofd does (heapprofd_buffer_overran 1,
#             heapprofd_client_error 1 = CLIENT_ERROR_HIT_TIMEOUT; the same
#             rows from Perfetto's trace processor when it is there)
#   python    python3 with PYTHONMALLOC=malloc makes 200,000 bytes objects
#             (26.6 MB; freed when the interpreter exits): >= 90% of it
#             allocated under _PyEval_EvalFrameDefault
#   hostile   a program scribbles a garbage record into its ring (central
#             heapprofd): heapprofd abandons that ring, counts it
#             (heapprofd_buffer_corrupted) and serves the next program
# Every private heapprofd is started through PERFETTO_HEAPPROFD_BIN (a
# wrapper that notes its pid and log), and must be gone at the end.
# Usage: OUT=out sh tests/integration/heapprofd_cases.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"

T=heapprofd_cases
svc_require_bins traced perfetto heapprofd trace_processor_shell hp/hp_cases hp/libhp_dl.so
PRELOAD="$OUT/lib/libheapprofd_glibc_preload.so"
TP="$OUT/trace_processor_shell"

cat >"$SVC_TMP/heapprofd.sh" <<EOF
#!/bin/sh
echo \$\$ >>"$SVC_TMP/hpd.pids"
exec "$OUT/heapprofd" "\$@" 2>>"$SVC_TMP/hpd.log"
EOF
chmod +x "$SVC_TMP/heapprofd.sh"
export PERFETTO_HEAPPROFD_BIN="$SVC_TMP/heapprofd.sh"
export PERFETTO_HEAPPROFD_CHILD=1

if ! svc_start_traced traced; then
	fail $T/traced_start "traced did not start: $(svc_errtail traced)"
	summary
	exit 1
fi

_session_started() {
	[ "$(grep -c "session .* started" "$SVC_TMP/traced.err")" -gt "$1" ]
}

# start_session NAME [EXTRA]: a session for hp_cases (4 KiB sampling,
# block_client unless BLOCK=false), EXTRA inside heapprofd_config.
start_session() {
	local _n _i
	_n=$1
	svc_cfg "$_n" "buffers { size_kb: 65536 }
duration_ms: 120000
data_sources {
  config {
    name: \"android.heapprofd\"
    heapprofd_config {
      sampling_interval_bytes: 4096
      process_cmdline: \"hp_cases\"
      block_client: ${BLOCK:-true}
      ${2:-}
    }
  }
}"
	_i=$(grep -c "session .* started" "$SVC_TMP/traced.err")
	svc_bg "$_n.perfetto" "$OUT/perfetto" --txt -c "$SVC_TMP/$_n.pbtxt" -o "$SVC_TMP/$_n.pftrace"
	if ! svc_wait_for 10 _session_started "$_i"; then
		fail "$T/$_n/session" "no session started: $(svc_errtail "$_n.perfetto")"
		return 1
	fi
}

stop_session() {
	kill -INT "$(svc_pid "$1.perfetto")"
	if ! svc_wait "$1.perfetto" 30 || [ "$(svc_rc "$1.perfetto")" != 0 ]; then
		fail "$T/$1/perfetto" "perfetto: $(svc_errtail "$1.perfetto")"
		return 1
	fi
}

dumps() { grep -c "dumped pid" "$SVC_TMP/hpd.log" 2>/dev/null; }
dumps_above() { [ "$(dumps)" -gt "$1" ]; }

# heapprofds_gone: every private heapprofd started so far has exited.
heapprofds_gone() {
	local _p
	for _p in $(cat "$SVC_TMP/hpd.pids" 2>/dev/null); do
		kill -0 "$_p" 2>/dev/null && return 1
	done
	return 0
}

# run_fg NAME ARGS...: hp_cases ARGS --no-wait in a session NAME (extra
# config in $EXTRA), until NDUMPS (default 1) more dumps are logged.
run_fg() {
	local _n _d
	_n=$1
	shift
	_d=$(dumps)
	start_session "$_n" || return 1
	if ! PERFETTO_HEAPPROFD_BLOCKING_INIT=1 LD_PRELOAD="$PRELOAD" \
		timeout -k 3 "$(svc_ms 60)" "$OUT/hp/hp_cases" "$@" --no-wait \
		>"$SVC_TMP/$_n.prog.out" 2>"$SVC_TMP/$_n.prog.err"; then
		fail "$T/$_n/run" "hp_cases failed: $(tail -n 3 "$SVC_TMP/$_n.prog.err" | tr '\n' ' ')"
		return 1
	fi
	if ! svc_wait_for 30 dumps_above $((_d + ${NDUMPS:-1} - 1)); then
		fail "$T/$_n/dump" "no dump: $(tail -n 3 "$SVC_TMP/hpd.log" | tr '\n' ' ')"
		return 1
	fi
	stop_session "$_n"
}

# bytes NAME: per leaf function, "fn unreleased allocated" in $SVC_TMP/NAME.fn.
bytes() {
	cat >"$SVC_TMP/fn.sql" <<'EOF'
select f.name, sum(a.size), sum(case when a.size > 0 then a.size else 0 end)
from heap_profile_allocation a
join stack_profile_callsite c on a.callsite_id = c.id
join stack_profile_frame f on c.frame_id = f.id
group by f.name order by f.name;
EOF
	"$TP" -q "$SVC_TMP/fn.sql" "$SVC_TMP/$1.pftrace" 2>"$SVC_TMP/$1.tp.err" |
		sed -n 's/^"\([^"]*\)",\(-*[0-9]*\),\([0-9]*\)$/\1 \2 \3/p' >"$SVC_TMP/$1.fn"
}

# sql NAME QUERY: the last line of our trace processor's answer, unquoted.
sql() {
	echo "$2" >"$SVC_TMP/q.sql"
	"$TP" -q "$SVC_TMP/q.sql" "$SVC_TMP/$1.pftrace" 2>>"$SVC_TMP/$1.tp.err" | tail -n 1 | tr -d '"'
}

# near CHECK NAME FN WANT: FN's unreleased bytes within 5% of WANT.
near() {
	local _g
	_g=$(awk -v f="$3" '$1 == f { print $2 }' "$SVC_TMP/$2.fn")
	if [ -n "$_g" ] && awk -v g="$_g" -v w="$4" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= w * 0.05) }'; then
		pass "$T/$1"
	else
		fail "$T/$1" "$3: got '$_g' bytes unreleased, want $4 +- 5% ($(tr '\n' ';' <"$SVC_TMP/$2.fn" | cut -c1-300))"
	fi
}

gone_check() {
	if svc_wait_for 20 heapprofds_gone; then
		pass "$T/$1/heapprofd_exited"
	else
		fail "$T/$1/heapprofd_exited" "a private heapprofd still runs: $(cat "$SVC_TMP/hpd.pids" | tr '\n' ' ')"
	fi
}

MiB=1048576

# ---- threads
if run_fg threads threads; then
	bytes threads
	near threads/thread_leak threads thread_leak $((32 * MiB))
	gone_check threads
fi

# ---- fork
if run_fg fork fork; then
	bytes fork
	near fork/parent_leak fork parent_leak $((16 * MiB))
	if grep -q "^child_leak " "$SVC_TMP/fork.fn"; then
		fail "$T/fork/child_not_profiled" "$(grep "^child_leak " "$SVC_TMP/fork.fn")"
	else
		pass "$T/fork/child_not_profiled"
	fi
	check "$T/fork/one_process" test "$(sql fork "select count(distinct upid) from heap_profile;")" = 1
	gone_check fork
fi

# ---- exec: two images, two private heapprofds, two dumps of one pid.
if NDUMPS=2 run_fg exec exec; then
	bytes exec
	near exec/before_exec exec before_exec $((8 * MiB))
	near exec/after_exec exec after_exec $((8 * MiB))
	check "$T/exec/one_pid" test "$(sql exec "select count(distinct p.pid) from heap_profile h join process p using (upid);")" = 1
	gone_check exec
fi

# ---- dlopen
if run_fg dlopen dlopen "$OUT/hp/libhp_dl.so"; then
	bytes dlopen
	near dlopen/dl_leak dlopen dl_leak $((8 * MiB))
	_m=$(sql dlopen "select m.name from stack_profile_frame f join stack_profile_mapping m on f.mapping = m.id where f.name = 'dl_leak';")
	case $_m in
	*/libhp_dl.so) pass "$T/dlopen/mapping" ;;
	*) fail "$T/dlopen/mapping" "dl_leak's mapping: '$_m'" ;;
	esac
	gone_check dlopen
fi

# prog_bg NAME ARGS...: hp_cases ARGS in the background, its stdin on fd 8
# (a fifo); waits for "ready".
prog_bg() {
	local _n
	_n=$1
	shift
	rm -f "$SVC_TMP/$_n.fifo"
	mkfifo "$SVC_TMP/$_n.fifo"
	svc_bg "$_n.prog" sh -c 'f=$1; shift; exec env LD_PRELOAD="$PRELOAD" "$@" <"$f"' sh \
		"$SVC_TMP/$_n.fifo" "$OUT/hp/hp_cases" "$@"
	exec 8>"$SVC_TMP/$_n.fifo"
	if ! svc_wait_for 10 grep -q ready "$SVC_TMP/$_n.prog.out"; then
		fail "$T/$_n/run" "hp_cases did not start: $(svc_errtail "$_n.prog")"
		exec 8>&-
		return 1
	fi
}
export PRELOAD

# ---- exit_mid_dump: continuous dumps, the program _exits among them.
exit_mid_dump() {
	local _d
	_d=$(dumps)
	start_session mid 'continuous_dump_config { dump_phase_ms: 0 dump_interval_ms: 20 }' || return 1
	PERFETTO_HEAPPROFD_BLOCKING_INIT=1 prog_bg mid churn || return 1
	echo go >&8
	if ! svc_wait_for 20 dumps_above $((_d + 3)); then
		fail "$T/mid/dumps" "no continuous dumps: $(tail -n 3 "$SVC_TMP/hpd.log" | tr '\n' ' ')"
		exec 8>&-
		return 1
	fi
	echo exit >&8
	exec 8>&-
	if ! svc_wait mid.prog 20 || [ "$(svc_rc mid.prog)" != 0 ]; then
		fail "$T/mid/run" "hp_cases: $(svc_errtail mid.prog)"
		return 1
	fi
	stop_session mid || return 1
	_n=$(sql mid "select count(*) from heap_profile h join process p using (upid);")
	if [ "${_n:-0}" -ge 3 ] 2>/dev/null && [ ! -s "$SVC_TMP/mid.tp.err" ]; then
		pass "$T/mid/dumps_read"
	else
		fail "$T/mid/dumps_read" "dumps in the trace: '$_n' $(head -c 300 "$SVC_TMP/mid.tp.err")"
	fi
	bytes mid
	check "$T/mid/churn_loop" grep -q "^churn_loop " "$SVC_TMP/mid.fn"
	gone_check mid
}
exit_mid_dump

# ---- heapprofd_killed: SIGKILL the private heapprofd mid-session.
hp_killed() {
	local _p _pid
	: >"$SVC_TMP/hpd.pids"
	start_session killed || return 1
	PERFETTO_HEAPPROFD_BLOCKING_INIT=1 prog_bg killed churn || return 1
	echo go >&8
	if ! svc_wait_for 10 grep -q "profiling pid $(svc_pid killed.prog)" "$SVC_TMP/hpd.log"; then
		fail "$T/killed/profiling" "not profiled: $(tail -n 3 "$SVC_TMP/hpd.log" | tr '\n' ' ')"
		exec 8>&-
		return 1
	fi
	_p=$(cat "$SVC_TMP/hpd.pids")
	kill -KILL $_p
	echo more >&8
	if svc_wait_for 30 grep -q "late done" "$SVC_TMP/killed.prog.out"; then
		pass "$T/killed/program_goes_on"
	else
		fail "$T/killed/program_goes_on" "no 'late done' after heapprofd died"
	fi
	_pid=$(svc_pid killed.prog)
	if svc_wait_for 10 eval "! grep -q heapprofd_ring /proc/$_pid/maps 2>/dev/null"; then
		pass "$T/killed/stopped_profiling"
	else
		fail "$T/killed/stopped_profiling" "the ring is still mapped"
	fi
	echo exit >&8
	exec 8>&-
	if svc_wait killed.prog 20 && [ "$(svc_rc killed.prog)" = 0 ]; then
		pass "$T/killed/exit_0"
	else
		fail "$T/killed/exit_0" "hp_cases: rc $(svc_rc killed.prog) $(svc_errtail killed.prog)"
	fi
	stop_session killed
}
hp_killed

# ---- traced_restarted: traced dies and comes back; a new session profiles.
traced_restarted() {
	local _c _pid
	: >"$SVC_TMP/hpd.pids"
	PERFETTO_HEAPPROFD_BLOCKING_INIT=1 prog_bg restart churn || return 1
	echo go >&8
	if ! svc_wait_for 10 grep -q "churning" "$SVC_TMP/restart.prog.out"; then
		fail "$T/restart/run" "hp_cases: $(svc_errtail restart.prog)"
		exec 8>&-
		return 1
	fi
	_pid=$(svc_pid restart.prog)
	svc_stop_traced traced
	: >"$SVC_TMP/traced.err"
	if ! svc_start_traced traced; then
		fail "$T/restart/traced" "traced did not restart: $(svc_errtail traced)"
		exec 8>&-
		return 1
	fi
	_c=$(grep -c "profiling pid $_pid" "$SVC_TMP/hpd.log")
	start_session restart || { exec 8>&-; return 1; }
	if svc_wait_for 20 eval "[ \$(grep -c 'profiling pid $_pid' '$SVC_TMP/hpd.log') -gt $_c ]"; then
		pass "$T/restart/profiled_again"
	else
		fail "$T/restart/profiled_again" "heapprofd: $(tail -n 4 "$SVC_TMP/hpd.log" | tr '\n' ' ')"
		echo exit >&8
		exec 8>&-
		stop_session restart
		return 1
	fi
	echo more >&8
	svc_wait_for 30 grep -q "late done" "$SVC_TMP/restart.prog.out"
	_d=$(dumps)
	echo exit >&8
	exec 8>&-
	svc_wait restart.prog 20
	svc_wait_for 20 dumps_above "$_d"
	stop_session restart || return 1
	bytes restart
	near restart/late_leak restart late_leak $((64 * MiB))
	gone_check restart
}
traced_restarted

# ---- overran: a full ring without block_client is dropped and reported.
overran() {
	local _pid _hp _d _ov _ce _up
	: >"$SVC_TMP/hpd.pids"
	BLOCK=false start_session overran 'shmem_size_bytes: 65536' || return 1
	PERFETTO_HEAPPROFD_BLOCKING_INIT=1 prog_bg overran churn || return 1
	_pid=$(svc_pid overran.prog)
	echo go >&8
	if ! svc_wait_for 10 grep -q "heapprofd_ring" "/proc/$_pid/maps"; then
		fail "$T/overran/profiling" "not profiled: $(tail -n 3 "$SVC_TMP/hpd.log" | tr '\n' ' ')"
		exec 8>&-
		return 1
	fi
	_hp=$(cat "$SVC_TMP/hpd.pids")
	kill -STOP $_hp
	echo more >&8
	if svc_wait_for 30 grep -q "late done" "$SVC_TMP/overran.prog.out"; then
		pass "$T/overran/program_goes_on"
	else
		fail "$T/overran/program_goes_on" "no 'late done' while heapprofd was stopped"
	fi
	kill -CONT $_hp
	_d=$(dumps)
	echo exit >&8
	exec 8>&-
	svc_wait overran.prog 20
	svc_wait_for 20 dumps_above "$_d"
	stop_session overran || return 1
	if grep "dumped pid $_pid" "$SVC_TMP/hpd.log" | tail -n 1 | grep -q " [1-9][0-9]* dropped"; then
		pass "$T/overran/dropped"
	else
		fail "$T/overran/dropped" "$(grep "dumped pid $_pid" "$SVC_TMP/hpd.log" | tail -n 1)"
	fi
	_q="select group_concat(name || '=' || value, ' ') from (select name, value from stats where name in ('heapprofd_buffer_overran', 'heapprofd_client_error') and value > 0 order by name);"
	_ov=$(sql overran "$_q")
	check "$T/overran/reported" test "$_ov" = "heapprofd_buffer_overran=1 heapprofd_client_error=1"
	_up=${UPSTREAM_TP:-${SHARED:-$ROOT/../shared}/upstream/bin/trace_processor_shell}
	if [ -x "$_up" ]; then
		echo "$_q" >"$SVC_TMP/q.sql"
		_ce=$("$_up" -q "$SVC_TMP/q.sql" "$SVC_TMP/overran.pftrace" 2>/dev/null | tail -n 1 | tr -d '"')
		check "$T/overran/upstream_same" test "$_ce" = "$_ov"
	else
		skip "$T/overran/upstream_same" "no Perfetto trace_processor_shell at $_up (set UPSTREAM_TP or SHARED)"
	fi
	gone_check overran
}
overran

# ---- python: CPython with PYTHONMALLOC=malloc; its objects' bytes are
# under the interpreter's frames (_PyEval_EvalFrameDefault). The dump is
# taken at exit, after CPython freed them: allocated, not unreleased.
python_case() {
	local _py _d _b _w
	_py=/usr/bin/python3
	[ -x "$_py" ] || _py=$(command -v python3)
	if [ -z "$_py" ]; then
		skip "$T/python" "no python3"
		return 0
	fi
	_d=$(dumps)
	svc_cfg python 'buffers { size_kb: 65536 }
duration_ms: 120000
data_sources {
  config {
    name: "android.heapprofd"
    heapprofd_config {
      sampling_interval_bytes: 4096
      process_cmdline: "python3*"
      block_client: true
    }
  }
}'
	_i=$(grep -c "session .* started" "$SVC_TMP/traced.err")
	svc_bg python.perfetto "$OUT/perfetto" --txt -c "$SVC_TMP/python.pbtxt" -o "$SVC_TMP/python.pftrace"
	svc_wait_for 10 _session_started "$_i" || { fail "$T/python/session" "no session"; return 1; }
	# 200,000 bytes objects of 100 bytes: 133 bytes each with the header.
	if ! PYTHONMALLOC=malloc PERFETTO_HEAPPROFD_BLOCKING_INIT=1 LD_PRELOAD="$PRELOAD" \
		timeout -k 3 "$(svc_ms 60)" "$_py" -c '
def py_hold():
    return [bytes(100) for _ in range(200000)]
keep = py_hold()
print("held", len(keep))
' >"$SVC_TMP/python.prog.out" 2>"$SVC_TMP/python.prog.err"; then
		fail "$T/python/run" "python3: $(tail -n 3 "$SVC_TMP/python.prog.err" | tr '\n' ' ')"
		return 1
	fi
	svc_wait_for 30 dumps_above "$_d"
	stop_session python || return 1
	_b=$(sql python "with recursive anc(id, cs) as (
  select id, callsite_id from heap_profile_allocation
  union all
  select anc.id, c.parent_id from anc join stack_profile_callsite c on c.id = anc.cs
  where c.parent_id is not null)
select sum(size) from heap_profile_allocation where size > 0 and id in (
  select anc.id from anc join stack_profile_callsite c on c.id = anc.cs
  join stack_profile_frame f on f.id = c.frame_id
  where f.name = '_PyEval_EvalFrameDefault');")
	_w=$((200000 * 133))
	if [ -n "$_b" ] && [ "$_b" -ge $((_w * 9 / 10)) ] 2>/dev/null; then
		pass "$T/python/under_eval_frames"
	else
		fail "$T/python/under_eval_frames" "allocated under _PyEval_EvalFrameDefault: '$_b', want >= 90% of $_w"
	fi
	gone_check python
}
python_case

# ---- hostile: garbage in the ring of a central heapprofd.
hostile() {
	local _sock _hp _d
	_sock="@pfc-hpc-$$"
	svc_bg central.heapprofd env HEAPPROFD_NOTIFY_FD=9 "$OUT/heapprofd" --socket "$_sock"
	if ! svc_wait_for 10 _svc_ready_or_exited central.heapprofd ||
		! _svc_is_ready central.heapprofd; then
		fail "$T/hostile/heapprofd" "heapprofd not ready: $(svc_errtail central.heapprofd)"
		return 1
	fi
	start_session hostile || return 1
	_d=$(grep -c "dumped pid" "$SVC_TMP/central.heapprofd.err")
	if ! PERFETTO_HEAPPROFD_SOCK_NAME="$_sock" PERFETTO_HEAPPROFD_BLOCKING_INIT=1 \
		LD_PRELOAD="$PRELOAD" timeout -k 3 "$(svc_ms 60)" "$OUT/hp/hp_cases" hostile --no-wait \
		>"$SVC_TMP/hostile.prog.out" 2>"$SVC_TMP/hostile.prog.err" ||
		! grep -q scribbled "$SVC_TMP/hostile.prog.out"; then
		fail "$T/hostile/run" "hp_cases hostile: $(tail -n 3 "$SVC_TMP/hostile.prog.err" | tr '\n' ' ')"
		return 1
	fi
	check "$T/hostile/detected" svc_wait_for 10 grep -q "wrote garbage" "$SVC_TMP/central.heapprofd.err"
	if ! PERFETTO_HEAPPROFD_SOCK_NAME="$_sock" PERFETTO_HEAPPROFD_BLOCKING_INIT=1 \
		LD_PRELOAD="$PRELOAD" timeout -k 3 "$(svc_ms 60)" "$OUT/hp/hp_cases" threads --no-wait \
		>"$SVC_TMP/hostile2.prog.out" 2>"$SVC_TMP/hostile2.prog.err"; then
		fail "$T/hostile/next_run" "hp_cases threads: $(tail -n 3 "$SVC_TMP/hostile2.prog.err" | tr '\n' ' ')"
		return 1
	fi
	svc_wait_for 20 eval "[ \$(grep -c 'dumped pid' '$SVC_TMP/central.heapprofd.err') -ge $((_d + 2)) ]"
	stop_session hostile || return 1
	if svc_running central.heapprofd; then
		pass "$T/hostile/heapprofd_survives"
	else
		fail "$T/hostile/heapprofd_survives" "heapprofd exited: $(svc_errtail central.heapprofd)"
	fi
	_hp=$(sql hostile "select value from stats where name = 'heapprofd_buffer_corrupted';")
	check "$T/hostile/counted" test "${_hp:-0}" = 1
	bytes hostile
	near hostile/next_program_profiled hostile thread_leak $((32 * MiB))
	svc_kill central.heapprofd
}
hostile

summary

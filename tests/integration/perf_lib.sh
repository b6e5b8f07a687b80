# SPDX-License-Identifier: Apache-2.0
# perf_lib.sh - helpers for traced_perf's integration tests (perf_*.sh):
# skip unless perf_event_open may sample every process, start traced and
# traced_perf on private sockets, record a pbtxt config with perfetto, and
# query the result with trace_processor_shell. Source after lib.sh and
# svc_lib.sh.

case $0 in
*/perf_lib.sh | perf_lib.sh)
	echo "0 passed, 0 failed, 0 skipped"
	exit 0
	;;
esac

# perf_require SUITE: skips the whole suite (exit 0) when cpu-wide
# sampling is not allowed here.
perf_require() {
	local _p
	_p=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)
	if [ -z "$_p" ]; then
		skip "$1/all" "no perf events in this kernel (/proc/sys/kernel/perf_event_paranoid)"
		summary
		exit 0
	fi
	if [ "$(id -u)" != 0 ] && [ "$_p" -gt -1 ]; then
		skip "$1/all" "cpu-wide perf sampling needs root or perf_event_paranoid <= -1 (is $_p)"
		summary
		exit 0
	fi
}

# perf_start NAME [VAR=VALUE...]: traced_perf (PFC_LOG_LEVEL=info, log in
# NAME.err, with those variables too), waits until linux.perf is registered.
perf_start() {
	local _name=$1
	shift
	# shellcheck disable=SC2086 # PERF_START_NICE: empty or "nice -n N"
	svc_bg "$_name" ${PERF_START_NICE:-} env PFC_LOG_LEVEL=info TRACED_PERF_NOTIFY_FD=9 "$@" "$OUT/traced_perf"
	svc_wait_for 10 _svc_ready_or_exited "$_name" && _svc_is_ready "$_name"
}

# perf_setup SUITE [VAR=VALUE...]: traced + traced_perf (with those
# variables), or fail and exit.
perf_setup() {
	local _suite=$1
	shift
	if ! svc_start_traced traced; then
		fail "$_suite/traced_start" "traced did not start: $(svc_errtail traced)"
		summary
		exit 1
	fi
	if ! perf_start perf "$@"; then
		fail "$_suite/perf_start" "traced_perf did not register: $(svc_errtail perf)"
		summary
		exit 1
	fi
}

# perf_record NAME TIMEOUT_S: perfetto with $SVC_TMP/NAME.pbtxt into
# $SVC_TMP/NAME.pb; true if it wrote a trace.
perf_record() {
	svc_perfetto "$1" "$2" --txt -c "$SVC_TMP/$1.pbtxt" -o "$SVC_TMP/$1.pb" &&
		[ -s "$SVC_TMP/$1.pb" ]
}

# The tests' workloads run at a higher priority than the rest of a busy
# machine where we may (root): they finish sooner, their counts do not
# depend on it either way.
PERF_NICE=
[ "$(id -u)" = 0 ] && PERF_NICE="nice -n -10"

# perf_around NAME TIMEOUT_S CMD...: a session of $SVC_TMP/NAME.pbtxt
# (give it a long duration_ms) around a workload: perfetto starts in the
# background, CMD runs once the daemon ($PERF_D, default perf) logs the
# data source's start, and perfetto gets SIGINT once CMD is done, so the
# session holds all of CMD however slowly the machine runs it. CMD's
# output goes to $SVC_TMP/NAME.hot. True if perfetto wrote a trace.
# TIMEOUT_S (scaled) bounds each wait.
perf_around() {
	local _n=$1 _t=$2 _d=${PERF_D:-perf} _before _rc
	shift 2
	_before=$(grep -c "linux.perf instance .* started" "$SVC_TMP/$_d.err" 2>/dev/null)
	svc_bg "$_n" "$OUT/perfetto" --txt -c "$SVC_TMP/$_n.pbtxt" -o "$SVC_TMP/$_n.pb"
	if ! svc_wait_for "$_t" _perf_started "$_d" "${_before:-0}" "$_n"; then
		svc_kill "$_n" INT
		return 1
	fi
	if ! svc_running "$_n"; then
		return 1
	fi
	(
		# CMD may be a shell function: raise this subshell's priority.
		[ -n "$PERF_NICE" ] && renice -n -10 -p "$(sh -c 'echo $PPID')" >/dev/null 2>&1
		"$@"
	) >"$SVC_TMP/$_n.hot"
	_rc=$?
	kill -INT "$(svc_pid "$_n")" 2>/dev/null
	svc_wait "$_n" "$_t" || return 1
	[ "$_rc" -eq 0 ] && [ -s "$SVC_TMP/$_n.pb" ]
}

# A new "instance started" line in the daemon's log, or the session gone.
_perf_started() {
	[ "$(grep -c "linux.perf instance .* started" "$SVC_TMP/$1.err" 2>/dev/null)" -gt "$2" ] ||
		! svc_running "$3"
}

# perf_hot_pid NAME: the pid perf_hot printed first in $SVC_TMP/NAME.hot.
perf_hot_pid() {
	head -n 1 "$SVC_TMP/$1.hot"
}

# perf_hot_cpu_ms NAME: the CPU time perf_hot reported at its end.
perf_hot_cpu_ms() {
	sed -n 's/^cpu_ms //p' "$SVC_TMP/$1.hot"
}

# perf_q NAME SQL: the query's rows on $SVC_TMP/NAME.pb (no header,
# unquoted, one per line). Name multi-line expressions with `as`: the
# header is one line only then.
perf_q() {
	timeout 60 "$OUT/trace_processor_shell" -Q "$2" "$SVC_TMP/$1.pb" 2>"$SVC_TMP/$1.q.err" |
		sed 1d | tr -d '"'
}

# perf_leaf_counts NAME PID: "function count" lines of PID's leaf frames.
perf_leaf_counts() {
	perf_q "$1" "select f.name, count(*) from perf_sample s
		join thread t using(utid)
		join stack_profile_callsite c on s.callsite_id = c.id
		join stack_profile_frame f on c.frame_id = f.id
		where t.tid = $2 group by f.name order by 2 desc" | tr ',' ' '
}

# perf_chain_has NAME PID LEAF CALLER: true if a callsite of PID's samples
# whose leaf is LEAF has CALLER among its ancestors.
perf_chain_has() {
	local _n
	_n=$(perf_q "$1" "with recursive up(id, parent_id, name) as (
		select c.id, c.parent_id, f.name from stack_profile_callsite c
		join stack_profile_frame f on c.frame_id = f.id
		where c.id in (select s.callsite_id from perf_sample s join thread t using(utid)
			join stack_profile_callsite c2 on s.callsite_id = c2.id
			join stack_profile_frame f2 on c2.frame_id = f2.id
			where t.tid = $2 and f2.name = '$3')
		union select p.id, p.parent_id, f.name from up
		join stack_profile_callsite p on up.parent_id = p.id
		join stack_profile_frame f on p.frame_id = f.id)
		select count(*) from up where name = '$4'")
	[ "${_n:-0}" -gt 0 ]
}

# perf_log_has NAME TEXT: the daemon's log mentions TEXT.
perf_log_has() {
	grep -q "$2" "$SVC_TMP/$1.err"
}

# perf_check_exit SUITE: traced_perf stops on SIGTERM with status 0 (a
# sanitizer report, a leak included, makes it non-zero).
perf_check_exit() {
	local _rc
	kill -TERM "$(svc_pid perf)" 2>/dev/null
	svc_wait perf 10
	_rc=$?
	if [ "$_rc" -eq 0 ]; then
		pass "$1/clean_exit"
	else
		fail "$1/clean_exit" "traced_perf exited $_rc: $(svc_errtail perf 4)"
	fi
}

# SPDX-License-Identifier: Apache-2.0
# svc_lib.sh - helpers for the service integration tests (service_*.sh):
# start traced on private sockets in a temp dir, start producers and wait
# until they are registered, run perfetto with a timeout, and kill
# everything at exit. Source it after lib.sh:
#   . "$(dirname "$0")/lib.sh"; . "$(dirname "$0")/svc_lib.sh"
#
# Every background program goes through svc_bg NAME CMD..., which records
# $SVC_TMP/NAME.pid (the program itself, via exec) and $SVC_TMP/NAME.rc (its
# exit status, once it exits), and opens fd 9 on $SVC_TMP/NAME.ready so a
# program told to (TRACED_NOTIFY_FD=9, TEST_PRODUCER_NOTIFY_FD=9) can say it
# is ready by writing to it. Every wait has a timeout; the EXIT trap kills
# whatever is still running (TERM, then KILL) and removes the temp dir
# (SVC_KEEP_TMP=1 keeps it for debugging; SVC_DEBUG=1 logs the cleanup).
# Shell functions share variables in sh: every helper, and every function
# in a test script, declares its temporaries with `local` (dash and bash).

# tests/run.sh runs every tests/integration/*.sh: on its own this file has
# nothing to check.
case $0 in
*/svc_lib.sh | svc_lib.sh)
	echo "0 passed, 0 failed, 0 skipped"
	exit 0
	;;
esac

ROOT=$(repo_root)
cd "$ROOT" || exit 1
OUT=${OUT:-out}
case $OUT in /*) ;; *) OUT="$ROOT/$OUT" ;; esac

# Sanitizer builds are slower: timeouts and time bounds scale by this.
SVC_SCALE=1
case $OUT in *asan* | *tsan*) SVC_SCALE=4 ;; esac
# LeakSanitizer reports make a program exit non-zero; keep them visible.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}

SVC_TMP=$(mktemp -d "${TMPDIR:-/tmp}/pfc-svc.XXXXXX")
SVC_NAMES=""
SVC_EXTRA_PIDS=""
# The background subshells of svc_bg: their children are the programs,
# found through them when the pid files are gone (SVC_TMP removed).
SVC_SUBSHELLS=""

# svc_ms MS: MS scaled for this build.
svc_ms() {
	echo $(($1 * SVC_SCALE))
}

# svc_now_ms: monotonic-enough wall time in ms.
svc_now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

svc_pid() {
	cat "$SVC_TMP/$1.pid" 2>/dev/null
}

# svc_running NAME: true while NAME has not exited.
svc_running() {
	[ -f "$SVC_TMP/$1.pid" ] && [ ! -f "$SVC_TMP/$1.rc" ]
}

# svc_rc NAME: the exit status of NAME (empty while it runs).
svc_rc() {
	cat "$SVC_TMP/$1.rc" 2>/dev/null
}

# svc_bg NAME CMD...: start CMD in the background (stdout NAME.out,
# stderr NAME.err). Returns at once; the pid file appears right away.
svc_bg() {
	local _i _n
	_n=$1
	shift
	rm -f "$SVC_TMP/$_n.pid" "$SVC_TMP/$_n.rc" "$SVC_TMP/$_n.ready"
	: >"$SVC_TMP/$_n.ready"
	(
		sh -c 'echo $$ >"$1"; shift; exec 9>>"$1"; shift; exec "$@"' sh \
			"$SVC_TMP/$_n.pid" "$SVC_TMP/$_n.ready" "$@" \
			>"$SVC_TMP/$_n.out" 2>"$SVC_TMP/$_n.err" </dev/null
		echo $? >"$SVC_TMP/$_n.rc.tmp"
		mv "$SVC_TMP/$_n.rc.tmp" "$SVC_TMP/$_n.rc"
	) &
	SVC_SUBSHELLS="$SVC_SUBSHELLS $!"
	SVC_NAMES="$SVC_NAMES $_n"
	# The pid file is written before exec; wait for it (bounded: 60 s).
	_i=0
	while [ ! -s "$SVC_TMP/$_n.pid" ] && [ $_i -lt 6000 ]; do
		sleep 0.01
		_i=$((_i + 1))
	done
}

# svc_wait_for SECONDS CMD...: poll CMD every 20 ms until it succeeds;
# false after SECONDS (scaled).
svc_wait_for() {
	local _deadline
	_deadline=$(($(svc_now_ms) + $1 * 1000 * SVC_SCALE))
	shift
	while ! "$@"; do
		[ "$(svc_now_ms)" -ge "$_deadline" ] && return 1
		sleep 0.02
	done
	return 0
}

_svc_is_ready() {
	[ -s "$SVC_TMP/$1.ready" ]
}

# Ready, or gone (so a program that failed at once is not waited for).
_svc_ready_or_exited() {
	[ -s "$SVC_TMP/$1.ready" ] || [ -f "$SVC_TMP/$1.rc" ]
}

_svc_exited() {
	[ -f "$SVC_TMP/$1.rc" ]
}

# svc_wait NAME SECONDS: wait until NAME exits (SECONDS scaled); prints
# nothing, returns its exit status, or 124 after killing it on timeout.
svc_wait() {
	if ! svc_wait_for "$2" _svc_exited "$1"; then
		svc_kill "$1"
		return 124
	fi
	return "$(svc_rc "$1")"
}

# svc_kill NAME [SIGNAL]: signal NAME (default TERM), wait up to 30 s
# (scaled: a busy machine's perfetto may take that long to write a big
# trace after SIGINT), then KILL it.
svc_kill() {
	local _p
	_p=$(svc_pid "$1")
	[ -n "$_p" ] || return 0
	svc_running "$1" || return 0
	kill -"${2:-TERM}" "$_p" 2>/dev/null
	if ! svc_wait_for 30 _svc_exited "$1"; then
		kill -KILL "$_p" 2>/dev/null
		svc_wait_for 2 _svc_exited "$1"
	fi
	return 0
}

# svc_track PID: also kill PID at exit (e.g. a perfetto --background child).
svc_track() {
	SVC_EXTRA_PIDS="$SVC_EXTRA_PIDS $1"
}

svc_cleanup() {
	local _n _p
	[ -n "$SVC_DEBUG" ] && echo "# cleanup in $(sh -c 'echo $PPID') main $$" >&2
	for _n in $SVC_NAMES; do
		_p=$(svc_pid "$_n")
		[ -n "$_p" ] && svc_running "$_n" && kill -TERM "$_p" 2>/dev/null
	done
	for _p in $SVC_EXTRA_PIDS; do
		kill -TERM "$_p" 2>/dev/null
	done
	for _n in $SVC_NAMES; do
		svc_wait_for 3 _svc_exited "$_n" || kill -KILL "$(svc_pid "$_n")" 2>/dev/null
	done
	for _p in $SVC_EXTRA_PIDS; do
		kill -0 "$_p" 2>/dev/null && sleep 0.2 && kill -KILL "$_p" 2>/dev/null
	done
	# Programs whose pid file is gone (someone removed SVC_TMP) are still
	# the children of their subshell: stop them so that wait returns.
	if [ ! -d "$SVC_TMP" ]; then
		echo "# $SVC_TMP was removed while the suite ran" >&2
		for _p in $SVC_SUBSHELLS; do
			pkill -TERM -P "$_p" 2>/dev/null
		done
		sleep 1
		for _p in $SVC_SUBSHELLS; do
			pkill -KILL -P "$_p" 2>/dev/null
		done
	fi
	wait 2>/dev/null
	if [ -n "$SVC_KEEP_TMP" ]; then
		echo "# kept $SVC_TMP"
	else
		rm -rf "$SVC_TMP"
	fi
}
trap 'svc_cleanup' EXIT
trap 'exit 130' INT TERM HUP

# svc_start_traced NAME: traced on $SVC_TMP/NAME.{p,c}.sock, exported as
# PERFETTO_PRODUCER_SOCK_NAME / PERFETTO_CONSUMER_SOCK_NAME for everything
# started afterwards. Waits for TRACED_NOTIFY_FD and both sockets (10 s).
svc_start_traced() {
	export PERFETTO_PRODUCER_SOCK_NAME="$SVC_TMP/$1.p.sock"
	export PERFETTO_CONSUMER_SOCK_NAME="$SVC_TMP/$1.c.sock"
	svc_bg "$1" env TRACED_NOTIFY_FD=9 "$OUT/traced"
	if ! svc_wait_for 10 _svc_traced_up "$1" || _svc_exited "$1"; then
		echo "# traced $1 did not come up: $(tail -n 3 "$SVC_TMP/$1.err" | tr '\n' ' ')"
		return 1
	fi
}

_svc_traced_up() {
	_svc_exited "$1" && return 0
	_svc_is_ready "$1" && [ -S "$PERFETTO_PRODUCER_SOCK_NAME" ] &&
		[ -S "$PERFETTO_CONSUMER_SOCK_NAME" ]
}

# svc_stop_traced NAME: SIGTERM; true if it exited 0 within 5 s (a
# sanitizer report makes the status non-zero).
svc_stop_traced() {
	svc_running "$1" || return 1
	kill -TERM "$(svc_pid "$1")" 2>/dev/null
	svc_wait "$1" 5
}

# svc_start_producer NAME ARGS...: test_producer --name NAME ARGS...;
# waits until its data source is registered (10 s).
svc_start_producer() {
	local _n
	_n=$1
	shift
	svc_bg "$_n" env TEST_PRODUCER_NOTIFY_FD=9 "$OUT/test_producer" --name "$_n" "$@"
	if ! svc_wait_for 10 _svc_ready_or_exited "$_n" || ! _svc_is_ready "$_n"; then
		echo "# producer $_n not ready: $(tail -n 3 "$SVC_TMP/$_n.err" | tr '\n' ' ')"
		return 1
	fi
}

# svc_start_fault NAME ARGS...: fault_producer ARGS..., ready like a producer.
svc_start_fault() {
	local _n
	_n=$1
	shift
	svc_bg "$_n" env FAULT_PRODUCER_NOTIFY_FD=9 "$OUT/fault_producer" --name "$_n" "$@"
	if ! svc_wait_for 10 _svc_ready_or_exited "$_n" || ! _svc_is_ready "$_n"; then
		echo "# fault producer $_n not ready: $(tail -n 3 "$SVC_TMP/$_n.err" | tr '\n' ' ')"
		return 1
	fi
}

# svc_perfetto NAME SECONDS ARGS...: run perfetto in the foreground with a
# timeout (scaled); stdout NAME.out, stderr NAME.err; returns its status
# (124 on timeout).
svc_perfetto() {
	local _n _t
	_n=$1
	_t=$(($2 * SVC_SCALE))
	shift 2
	timeout -k 3 "$_t" "$OUT/perfetto" "$@" >"$SVC_TMP/$_n.out" 2>"$SVC_TMP/$_n.err" </dev/null
}

# svc_cfg NAME TEXT: write a pbtxt config to $SVC_TMP/NAME.pbtxt.
svc_cfg() {
	printf '%s\n' "$2" >"$SVC_TMP/$1.pbtxt"
}

# svc_check_trace NAME TRACE ARGS...: trace_check TRACE ARGS... into
# NAME.tc; true if it says ok. svc_tc NAME KEY prints a value from it.
svc_check_trace() {
	local _f _n
	_n=$1
	_f=$2
	shift 2
	"$OUT/trace_check" "$_f" "$@" >"$SVC_TMP/$_n.tc" 2>&1
}

svc_tc() {
	sed -n "s/^$2=//p" "$SVC_TMP/$1.tc" | head -n 1
}

# svc_why NAME: trace_check's reasons on one line, for fail messages.
svc_why() {
	grep -E '^(why|parse_error|bad_payload)' "$SVC_TMP/$1.tc" | head -n 4 | tr '\n' ' '
}

# svc_errtail NAME: the last lines of NAME's stderr on one line.
svc_errtail() {
	tail -n "${2:-3}" "$SVC_TMP/$1.err" 2>/dev/null | tr '\n' ' '
}

# svc_decode TEST TRACE: requirement 10, protoc decodes TRACE as a Trace.
SVC_HAVE_PROTOC=0
command -v protoc >/dev/null 2>&1 && SVC_HAVE_PROTOC=1
svc_decode() {
	if [ "$SVC_HAVE_PROTOC" -ne 1 ]; then
		skip "$1/protoc_decode" "protoc not found in PATH"
		return 0
	fi
	if protoc -Iprotos --decode=perfetto.protos.Trace trace/trace.proto \
		<"$2" >"$SVC_TMP/decode.txt" 2>"$SVC_TMP/decode.err"; then
		pass "$1/protoc_decode"
	else
		fail "$1/protoc_decode" "protoc rejects $(basename "$2"): $(head -n 2 "$SVC_TMP/decode.err" | tr '\n' ' ')"
	fi
}

# svc_require_bins BIN...: fail and exit if a binary is missing.
svc_require_bins() {
	for _b in "$@"; do
		if [ ! -x "$OUT/$_b" ]; then
			fail "$(basename "$0" .sh)/binaries" "$OUT/$_b not built"
			summary
			exit 1
		fi
	done
}

# svc_file_size FILE: bytes (0 if missing).
svc_file_size() {
	if [ -f "$1" ]; then wc -c <"$1" | tr -d ' '; else echo 0; fi
}

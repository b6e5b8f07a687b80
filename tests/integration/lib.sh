# SPDX-License-Identifier: Apache-2.0
# lib.sh - shared helpers for tests/integration/*.sh (source it with `.`).
# Each check reports one line that tests/run.sh understands:
#   pass NAME        -> "ok   NAME"
#   fail NAME WHY    -> "FAIL NAME: WHY"
#   skip NAME WHY    -> "skip NAME: WHY"
# and `summary` ends the script with "N passed, N failed, N skipped",
# returning non-zero if anything failed.

# tests/run.sh runs every tests/integration/*.sh, this file included: run
# on its own it has nothing to check.
case $0 in
*/lib.sh | lib.sh)
	echo "0 passed, 0 failed, 0 skipped"
	exit 0
	;;
esac

T_PASSED=0
T_FAILED=0
T_SKIPPED=0

pass() {
	echo "ok   $1"
	T_PASSED=$((T_PASSED + 1))
}

fail() {
	_name=$1
	shift
	echo "FAIL $_name: $*"
	T_FAILED=$((T_FAILED + 1))
}

skip() {
	_name=$1
	shift
	echo "skip $_name: $*"
	T_SKIPPED=$((T_SKIPPED + 1))
}

# check NAME CMD...: pass if CMD succeeds, else fail with its exit status.
check() {
	_name=$1
	shift
	if "$@"; then
		pass "$_name"
	else
		fail "$_name" "'$*' exited $?"
	fi
}

summary() {
	echo "$T_PASSED passed, $T_FAILED failed, $T_SKIPPED skipped"
	[ "$T_FAILED" -eq 0 ]
}

# Benches that source this file set TOP to the repository root.
. "${TOP:-$(dirname "$0")/../..}/tools/tracefs_lock.sh"

# Upstream Perfetto's binaries for the interop checks: UPSTREAM_TP and
# UPSTREAM_TRACEBOX when set, else those in $SHARED/upstream/bin (SHARED
# defaults to ../shared beside the repository, where CI puts it) when they
# run here (they need a few runtime libraries, listed in its README).
SHARED=${SHARED:-$(cd "${TOP:-$(dirname "$0")/../..}" && pwd)/../shared}
if [ -z "${UPSTREAM_TP:-}" ] &&
	"$SHARED/upstream/bin/trace_processor_shell" --version >/dev/null 2>&1; then
	UPSTREAM_TP=$SHARED/upstream/bin/trace_processor_shell
fi
if [ -z "${UPSTREAM_TRACEBOX:-}" ] &&
	"$SHARED/upstream/bin/tracebox" --version >/dev/null 2>&1; then
	UPSTREAM_TRACEBOX=$SHARED/upstream/bin/tracebox
fi

# require_tracefs SUITE: sets TFS to the mounted tracefs (mounting it if
# needed) and takes the tracefs lock (tools/tracefs_lock.sh); without root
# or tracefs, reports SUITE/all as skipped and exits.
require_tracefs() {
	TFS=/sys/kernel/tracing
	if [ "$(id -u)" != 0 ]; then
		skip "$1/all" "needs root to drive ftrace"
		summary
		exit 0
	fi
	[ -e "$TFS/trace_clock" ] || mount -t tracefs nodev "$TFS" 2>/dev/null
	if [ ! -e "$TFS/trace_clock" ]; then
		skip "$1/all" "tracefs is not available at $TFS"
		summary
		exit 0
	fi
	tracefs_lock
}

# The repository root (tests/integration/..), so scripts run from anywhere.
repo_root() {
	(cd "$(dirname "$0")/../.." && pwd)
}

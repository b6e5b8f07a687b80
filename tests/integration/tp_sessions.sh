#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_sessions.sh - Perfetto's warm sessions: server unix (--path, --name,
# --daemonize, --idle-timeout), server kill, query --remote, each query's
# output checked against a local `query` and, when Perfetto's binary is
# there (UPSTREAM_TP or ../shared/upstream), its client against our server
# and ours against its server (tp_sessions.py).
# Usage: OUT=out sh tests/integration/tp_sessions.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tp_lib.sh"

tp_setup tp_sessions
DATA=tests/data/tp
if ! command -v python3 >/dev/null 2>&1; then
	skip tp_sessions/all "python3 is not installed"
	summary
	exit 0
fi
tp_encode sched_basic
[ -n "${UPSTREAM_TP:-}" ] ||
	skip tp_sessions/upstream "no upstream trace_processor_shell (UPSTREAM_TP or ../shared/upstream)"
{
	python3 tests/integration/tp_sessions.py "$TP" "$tmp/sched_basic.pb" "$tmp" \
		"${UPSTREAM_TP:-}" 2>&1
	echo "driver exit $?"
} | grep -vE '^[0-9]+ passed, [0-9]+ failed' >"$tmp/result"
grep -v '^driver exit' "$tmp/result"
T_PASSED=$((T_PASSED + $(grep -c '^ok ' "$tmp/result")))
T_FAILED=$((T_FAILED + $(grep -c '^FAIL ' "$tmp/result")))
# A driver that stopped early (an exception) fails even without a FAIL line.
if grep -q '^driver exit [^0]' "$tmp/result" && ! grep -q '^FAIL ' "$tmp/result"; then
	fail tp_sessions/driver "tp_sessions.py stopped: $(grep -v '^ok ' "$tmp/result" | tail -n 3 | tr '\n' '|')"
fi
summary

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_commands.sh - trace_processor_shell's command-style interface as
# Perfetto's docs use it (query, interactive, export sqlite, server http,
# server stdio, help; the commands it lacks refused with the reason), each
# form's output checked against the classic flags' and, when Perfetto's
# binary is there (UPSTREAM_TP or ../shared/upstream), against it.
# Usage: OUT=out sh tests/integration/tp_commands.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tp_lib.sh"

tp_setup tp_commands
DATA=tests/data/tp
if ! command -v python3 >/dev/null 2>&1; then
	skip tp_commands/all "python3 is not installed"
	summary
	exit 0
fi
tp_encode sched_basic
[ -n "${UPSTREAM_TP:-}" ] ||
	skip tp_commands/upstream "no upstream trace_processor_shell (UPSTREAM_TP or ../shared/upstream)"
{
	python3 tests/integration/tp_commands.py "$TP" "$tmp/sched_basic.pb" "$tmp" \
		"${UPSTREAM_TP:-}" 2>&1
	echo "driver exit $?"
} | grep -vE '^[0-9]+ passed, [0-9]+ failed' >"$tmp/result"
grep -v '^driver exit' "$tmp/result"
T_PASSED=$((T_PASSED + $(grep -c '^ok ' "$tmp/result")))
T_FAILED=$((T_FAILED + $(grep -c '^FAIL ' "$tmp/result")))
# A driver that stopped early (an exception) fails even without a FAIL line.
if grep -q '^driver exit [^0]' "$tmp/result" && ! grep -q '^FAIL ' "$tmp/result"; then
	fail tp_commands/driver "tp_commands.py stopped: $(grep -v '^ok ' "$tmp/result" | tail -n 3 | tr '\n' '|')"
fi
summary

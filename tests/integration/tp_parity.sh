#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_parity.sh - a short round of the parity harness (tests/differential/):
# PARITY_N (default 2) random configs, seeded (the seed is printed): the
# short round of make test uses seed 101 (configs whose traces are all equal
# today; the recordings still differ run to run), PARITY_SEED=random draws a
# new one, PARITY_SEED=N repeats a round. Each is recorded with our tracebox and
# upstream's while a small workload runs, then every core table of every
# trace compared between our trace processor and upstream's. One check per
# (trace, table): equal passes, a difference listed in
# tests/differential/known.txt is skipped with its reason, any other fails.
# Skipped with the reason without upstream's binaries (UPSTREAM_TP,
# UPSTREAM_TRACEBOX, or $SHARED/upstream), python3, root or tracefs.
# The long round: `make parity` (PARITY_N=100 by default).
. "$(dirname "$0")/lib.sh"

root=$(repo_root)
out=${OUT:-out}
case $out in /*) ;; *) out=$root/$out ;; esac
if [ -z "${UPSTREAM_TP:-}" ] || [ -z "${UPSTREAM_TRACEBOX:-}" ]; then
	skip tp_parity/all "upstream's binaries are not here (set UPSTREAM_TP and UPSTREAM_TRACEBOX, or SHARED with upstream/bin; $SHARED/upstream/bin did not run)"
	summary
	exit $?
fi
if ! command -v python3 >/dev/null 2>&1; then
	skip tp_parity/all "python3 is not installed"
	summary
	exit $?
fi
require_tracefs tp_parity
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
OURS_TRACEBOX=$out/tracebox UPSTREAM_TP=$UPSTREAM_TP UPSTREAM_TRACEBOX=$UPSTREAM_TRACEBOX \
	OUT=$out python3 "$root/tests/differential/parity.py" --n "${PARITY_N:-2}" \
	$([ "${PARITY_SEED:-101}" = random ] || echo --seed "${PARITY_SEED:-101}") \
	--work "$work" >"$work/round.txt" 2>&1
rc=$?
grep '^seed ' "$work/round.txt" | sed 's/^/# /'
grep '^FAILED ' "$work/round.txt" | sed 's/^/# recording /'
if [ $rc -eq 2 ] || ! grep -q ' equal, .* differ, .* known$' "$work/round.txt"; then
	fail tp_parity/round "the round did not finish: $(tail -n 3 "$work/round.txt" | tr '\n' ' ')"
	summary
	exit $?
fi
# compare.py: "<trace>/<table>: equal|differs (...)|known (...): reason".
while IFS= read -r line; do
	pair=${line%%: *}
	rest=${line#*: }
	case $rest in
	equal*) pass "tp_parity/$pair" ;;
	known*) skip "tp_parity/$pair" "$rest" ;;
	differs*) fail "tp_parity/$pair" "$rest; repeat with PARITY_SEED" ;;
	esac
done <<EOT
$(grep -E '^[a-z]+_cfg[0-9]+/[a-z_]+: ' "$work/round.txt")
EOT
grep -A2 '^    line ' "$work/round.txt" | head -n 40 | sed 's/^/# /'
summary

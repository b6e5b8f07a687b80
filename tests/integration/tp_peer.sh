#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_peer.sh - Perfetto's own trace processor cases (../shared/peer-tests,
# derived from upstream's diff tests; never copied here) run against our
# trace_processor_shell through their runner.
#
# tests/data/peer/passing.txt names the cases we pass today: each of them
# must keep passing (a regression fails). Every other case is reported as
# skipped with the reason "not supported yet"; when one starts passing the
# script says so, and it belongs in passing.txt. Skipped entirely, with the
# reason printed, when ../shared/peer-tests or python3 is absent.
. "$(dirname "$0")/lib.sh"

root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-out}
peer="$root/../shared/peer-tests"
list="$root/tests/data/peer/passing.txt"

if [ ! -f "$peer/run.py" ]; then
	skip tp_peer/all "no ../shared/peer-tests here (it exists in dev sessions and CI)"
	summary
	exit $?
fi
if ! command -v python3 >/dev/null 2>&1; then
	skip tp_peer/all "python3 is not installed"
	summary
	exit $?
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$peer/run.py" --tp "$out/trace_processor_shell" --exit-zero >"$tmp/run.txt" 2>&1
if ! grep -qE '^[0-9]+ passed, [0-9]+ failed' "$tmp/run.txt"; then
	fail tp_peer/runner "the runner did not finish: $(tail -n 3 "$tmp/run.txt")"
	summary
	exit $?
fi
sed -n 's/^PASS \([^ ]*\) .*/\1/p' "$tmp/run.txt" | sort >"$tmp/pass"
sed -n 's/^FAIL \([^ ]*\) (\(.*\))$/\1 \2/p' "$tmp/run.txt" | sort >"$tmp/fail"
while read -r name; do
	[ -n "$name" ] || continue
	if grep -qx "$name" "$tmp/pass"; then
		pass "tp_peer/$name"
	else
		fail "tp_peer/$name" "regressed: $(grep "^$name " "$tmp/fail" | cut -d' ' -f2-)"
	fi
done <"$list"
while read -r name why; do
	grep -qx "$name" "$list" && continue
	skip "tp_peer/$name" "not supported yet ($why)"
done <"$tmp/fail"
new=$(comm -23 "$tmp/pass" "$list" | tr '\n' ' ')
for name in $new; do
	pass "tp_peer/$name"
done
[ -n "$new" ] && echo "note: now passing, add to tests/data/peer/passing.txt: $new"
summary

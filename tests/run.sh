#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs every unit test binary in $1/tests and every tests/integration/*.sh,
# adds up their "N passed, N failed, N skipped" lines and ends with the total.
# Usage: tests/run.sh OUT_DIR
out=${1:-out}
pass=0 fail=0 skip=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

add_counts() {
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	if [ -z "$line" ]; then
		echo "FAIL $1: no summary line (crashed?)"
		fail=$((fail + 1))
		return
	fi
	p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
	f=$(echo "$line" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
	s=$(echo "$line" | sed -nE 's/.*, ([0-9]+) skipped.*/\1/p')
	pass=$((pass + p))
	fail=$((fail + f))
	skip=$((skip + ${s:-0}))
}

for t in "$out"/tests/*_test; do
	[ -x "$t" ] || continue
	echo "== $(basename "$t")"
	"$t" >"$log" 2>&1
	grep -vE '^[0-9]+ passed, [0-9]+ failed' "$log" | grep -vE '^ok ' || true
	add_counts "$(basename "$t")"
done

for t in tests/integration/*.sh; do
	[ -f "$t" ] || continue
	# Shared helpers (lib.sh, svc_lib.sh) are sourced by the tests, not run.
	case "$(basename "$t")" in *lib.sh) continue ;; esac
	echo "== $(basename "$t")"
	OUT="$out" sh "$t" >"$log" 2>&1
	grep -vE '^[0-9]+ passed, [0-9]+ failed' "$log" | grep -vE '^ok ' || true
	add_counts "$(basename "$t")"
done

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]

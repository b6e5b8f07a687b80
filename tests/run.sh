#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs every unit test binary in $1/tests and every tests/integration/*.sh,
# adds up their "N passed, N failed, N skipped" lines and ends with the total.
# At the start it says roughly how long the run takes and which suites skip
# on this machine for lack of what; each suite's time is printed after it,
# the slowest at the end.
# Usage: tests/run.sh OUT_DIR
out=${1:-out}
pass=0 fail=0 skip=0
log=$(mktemp)
times=$(mktemp)
trap 'rm -f "$log" "$times"' EXIT
t_start=$(date +%s)

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

# suites_using PATTERN: the integration suites whose text matches PATTERN.
suites_using() {
	grep -l -E "$1" tests/integration/*.sh 2>/dev/null | sed 's#.*/##; s#\.sh$##' |
		grep -v 'lib$' | tr '\n' ' '
}

# have WHAT TEST...: one line saying whether this machine has WHAT.
have() {
	what=$1
	shift
	if "$@" >/dev/null 2>&1; then
		printf '  %-38s yes\n' "$what"
		return 0
	fi
	printf '  %-38s no\n' "$what"
	return 1
}

ncpu=$(nproc 2>/dev/null || echo 1)
echo "tests/run.sh: the whole suite takes about 10 minutes on a quiet 2-CPU"
echo "machine (docs/performance.md), two to three times that beside a full"
echo "CPU load; this machine has $ncpu CPU(s), load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)."
echo "What it can run (suites that need what is missing skip, saying why):"
have "root" test "$(id -u)" = 0 ||
	echo "    skip in part: $(suites_using 'require_tracefs|id -u\)" != 0|need_root')"
have "tracefs (kernel tracing)" test -e /sys/kernel/tracing/trace_clock -o \
	-e /sys/kernel/debug/tracing/trace_clock -o -d /sys/kernel/tracing ||
	echo "    skip: $(suites_using 'require_tracefs')"
have "perf events, cpu-wide" sh -c '[ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le -1 ]' ||
	echo "    skip: $(suites_using 'perf_require')"
have "network namespaces (ip netns)" sh -c '[ "$(id -u)" = 0 ] && command -v ip' ||
	echo "    skip in part: $(suites_using 'ip netns|mm_lib')"
have "../shared (upstream binaries, cases)" test -d ../shared ||
	echo "    skip in part: $(suites_using '\.\./shared|SHARED')"
have "chromium (headless)" sh -c 'command -v chromium || command -v chromium-browser' ||
	echo "    skip in part: $(suites_using 'chromium')"
have "pandas + Dask distributed (python3)" sh -c "$(cat "$out/python/interpreter" 2>/dev/null || echo python3) -c 'import pandas, distributed'" ||
	echo "    skip in part: $(suites_using 'import distributed')"
have "QEMU + a guest kernel" sh -c 'command -v qemu-system-x86_64 && test -r /boot/vmlinuz-$(uname -r)' ||
	echo "    skip: $(suites_using 'two-kernel|qemu')"

# run_suite NAME CMD...: runs one suite, its output filtered, its time kept.
run_suite() {
	name=$1
	shift
	echo "== $name"
	t0=$(date +%s)
	"$@" >"$log" 2>&1
	t1=$(date +%s)
	grep -vE '^[0-9]+ passed, [0-9]+ failed' "$log" | grep -vE '^ok ' || true
	add_counts "$name"
	echo "$((t1 - t0)) $name" >>"$times"
	echo "   ($name: $((t1 - t0)) s)"
}

for t in "$out"/tests/*_test; do
	[ -x "$t" ] || continue
	run_suite "$(basename "$t")" "$t"
done

for t in tests/integration/*.sh; do
	[ -f "$t" ] || continue
	# Shared helpers (lib.sh, svc_lib.sh) are sourced by the tests, not run.
	case "$(basename "$t")" in *lib.sh) continue ;; esac
	run_suite "$(basename "$t")" env OUT="$out" sh "$t"
done

t_end=$(date +%s)
echo "slowest suites: $(sort -rn "$times" | head -n 8 | awk '{ printf "%s %d s; ", $2, $1 }')"
echo "whole run: $((t_end - t_start)) s (load average now $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null))"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]

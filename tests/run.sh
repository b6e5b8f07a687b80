#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs every unit test binary in $1/tests and every tests/integration/*.sh,
# adds up their "N passed, N failed, N skipped" lines and ends with the total.
# At the start it says roughly how long the run takes and which suites skip
# on this machine for lack of what; each suite's time is printed after it,
# the slowest at the end.
# Two lanes run side by side: the trace processor's suites (tp_*, which
# only read traces: no tracefs, no tracing service, no perf events) in one,
# everything else in the other, one suite at a time in each; a suite's
# output is printed whole when it ends. PFC_TEST_SERIAL=1: one lane.
# Usage: tests/run.sh OUT_DIR
out=${1:-out}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
times=$work/times
: >"$times"
t_start=$(date +%s)

# add_counts LOG NAME COUNTS: adds LOG's summary line to the lane's COUNTS
# file ("pass fail skip"); a suite with no summary line counts one failure.
add_counts() {
	read -r p0 f0 s0 <"$3"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)
	if [ -z "$line" ]; then
		echo "FAIL $2: no summary line (crashed?)"
		echo "$p0 $((f0 + 1)) $s0" >"$3"
		return
	fi
	p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
	f=$(echo "$line" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
	s=$(echo "$line" | sed -nE 's/.*, ([0-9]+) skipped.*/\1/p')
	echo "$((p0 + p)) $((f0 + f)) $((s0 + ${s:-0}))" >"$3"
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

# run_suite LANE NAME CMD...: runs one suite in LANE, its output filtered
# and printed whole when it ends (under a lock: the other lane prints too),
# its counts added to the lane's, its time kept.
run_suite() {
	lane=$1
	name=$2
	shift 2
	slog=$work/$lane.log
	block=$work/$lane.block
	t0=$(date +%s)
	"$@" >"$slog" 2>&1
	t1=$(date +%s)
	{
		echo "== $name"
		grep -vE '^[0-9]+ passed, [0-9]+ failed' "$slog" | grep -vE '^ok ' || true
		add_counts "$slog" "$name" "$work/$lane.counts"
		echo "   ($name: $((t1 - t0)) s)"
	} >"$block"
	flock "$work/print.lock" cat "$block"
	flock "$work/print.lock" sh -c 'echo "$1" >>"$2"' _ "$((t1 - t0)) $name" "$times"
}

# tp_lane_suite FILE: true if FILE is a trace processor suite that only
# reads traces (runs in the second lane).
tp_lane_suite() {
	case "$(basename "$1")" in tp_lib.sh) return 1 ;; tp_*) ;; *) return 1 ;; esac
	! grep -q -E 'require_tracefs|perf_require|svc_lib|tools/heap_profile|"\$OUT/(traced|perfetto|tracebox|heapprofd)"' "$1"
}

lane_main() {
	for t in "$out"/tests/*_test; do
		[ -x "$t" ] || continue
		run_suite main "$(basename "$t")" "$t"
	done
	for t in tests/integration/*.sh; do
		[ -f "$t" ] || continue
		# Shared helpers (lib.sh, svc_lib.sh) are sourced by the tests, not run.
		case "$(basename "$t")" in *lib.sh) continue ;; esac
		[ -z "$parallel" ] || ! tp_lane_suite "$t" || continue
		run_suite main "$(basename "$t")" env OUT="$out" sh "$t"
	done
}

lane_tp() {
	for t in tests/integration/tp_*.sh; do
		[ -f "$t" ] && tp_lane_suite "$t" || continue
		run_suite tp "$(basename "$t")" env OUT="$out" sh "$t"
	done
}

echo "0 0 0" >"$work/main.counts"
echo "0 0 0" >"$work/tp.counts"
parallel=1
[ -z "${PFC_TEST_SERIAL:-}" ] && command -v flock >/dev/null 2>&1 || parallel=
if [ -n "$parallel" ]; then
	echo "Two lanes: the trace processor's suites beside the others (PFC_TEST_SERIAL=1: one)."
	lane_tp &
	tp_pid=$!
	lane_main
	wait "$tp_pid"
else
	lane_main
fi
read -r pass fail skip <"$work/main.counts"
read -r p2 f2 s2 <"$work/tp.counts"
pass=$((pass + p2))
fail=$((fail + f2))
skip=$((skip + s2))

t_end=$(date +%s)
echo "slowest suites: $(sort -rn "$times" | head -n 8 | awk '{ printf "%s %d s; ", $2, $1 }')"
echo "whole run: $((t_end - t_start)) s (load average now $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null))"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]

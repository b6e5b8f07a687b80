#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# flamegraph_bench.sh - what pfc_flamegraph costs on a big profile.
#
# Generates a synthetic linux.perf trace (bench/gen_perf_trace.py: N
# samples of 8 threads, 20,000 distinct callstacks up to 24 frames deep
# over 2,000 functions, a tenth of them kernel ones), then runs
# pfc_flamegraph --stats on it: all samples as folded text, the same per
# thread, one thread in a time window, and the SVG. Prints each run's
# import, select (the samples counted per leaf callsite), fold and SVG
# times and checks select + fold against the target: 1 M samples well
# under a second (< 0.5 s). The svg step folds again (kernel frames marked)
# and draws.
#
#   bench/flamegraph_bench.sh [--samples N] [--trace FILE] [--smoke]
#     --samples N   samples to generate (default 1000000)
#     --trace FILE  use FILE (any trace with perf samples) instead
#     --smoke       20,000 samples, no target: CI's quick run
#   O=out/asan bench/flamegraph_bench.sh   use another build directory

set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
O=${O:-$ROOT/out}
FG=$O/pfc_flamegraph
N=1000000
TRACE=
SMOKE=0
TARGET_S=0.5

while [ $# -gt 0 ]; do
	case $1 in
	--samples) N=$2; shift 2 ;;
	--trace) TRACE=$2; shift 2 ;;
	--smoke) SMOKE=1; N=20000; shift ;;
	*) echo "usage: $0 [--samples N] [--trace FILE] [--smoke]" >&2; exit 2 ;;
	esac
done
[ -x "$FG" ] || { echo "flamegraph_bench: $FG not built (make)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$TRACE" ]; then
	TRACE=$tmp/perf.pb
	echo "generating $N samples ..."
	python3 "$ROOT/bench/gen_perf_trace.py" "$TRACE" --samples "$N" || exit 1
fi
echo "trace: $TRACE ($(($(stat -c %s "$TRACE") / 1024)) KiB)"

status=0
# run NAME ARGS...: one pfc_flamegraph run; prints its --stats line.
run() {
	_name=$1
	shift
	if ! "$FG" --stats "$@" "$TRACE" >/dev/null 2>"$tmp/err"; then
		echo "FAIL $_name: $(tail -n 1 "$tmp/err")"
		status=1
		return
	fi
	_line=$(grep 'stats:' "$tmp/err")
	printf '%-10s %s\n' "$_name" "${_line#*stats: }"
	_sel=$(echo "$_line" | sed -n 's/.*select \([0-9.]*\) s.*/\1/p')
	_fold=$(echo "$_line" | sed -n 's/.*fold \([0-9.]*\) s.*/\1/p')
	if [ "$SMOKE" = 0 ] && [ "$_name" = folded ]; then
		if awk -v s="$_sel" -v f="$_fold" -v t="$TARGET_S" 'BEGIN { exit !(s + f < t) }'; then
			echo "           select + fold $(awk -v s="$_sel" -v f="$_fold" 'BEGIN { print s + f }') s < target $TARGET_S s: ok"
		else
			echo "           select + fold $(awk -v s="$_sel" -v f="$_fold" 'BEGIN { print s + f }') s >= target $TARGET_S s: FAIL"
			status=1
		fi
	fi
}

run folded -o /dev/null
run per-thread --per-thread -o /dev/null
run window --tid 4243 --start +100us --end -100us -o /dev/null
run svg --svg "$tmp/out.svg"
exit $status

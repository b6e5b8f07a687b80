#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# perf_overhead.sh - what CPU profiling costs: perf_hot's work rate on every
# CPU alone, under traced_perf (1 kHz per CPU, kernel frames + DWARF user
# stacks), and under `perf record -F 1000 -a --call-graph dwarf` (when perf
# is installed); and the profiler's own CPU time per sample. By hand (root):
#   OUT=out sh bench/perf_overhead.sh [SECONDS]
OUT=${OUT:-out}
D=${1:-4}
N=$(nproc)
T=$(mktemp -d "${TMPDIR:-/tmp}/pfc-perfbench.XXXXXX")
trap 'kill $TRACED_PID $PERF_PID 2>/dev/null; rm -rf "$T"' EXIT

# rate: perf_hot on every CPU for D seconds; prints the summed blocks/s.
rate() {
	i=0
	while [ $i -lt "$N" ]; do
		"$OUT/perf_hot_nofp" rate "$D" >"$T/rate.$i" &
		i=$((i + 1))
	done
	wait_rate
	cat "$T"/rate.* | awk '/blocks_per_s/ { s += $2 } END { printf "%.0f\n", s }'
}
wait_rate() {
	while [ "$(cat "$T"/rate.* 2>/dev/null | grep -c blocks_per_s)" -lt "$N" ]; do
		sleep 0.2
	done
}

cpu_ticks() { # utime + stime of PID, in clock ticks
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

base=$(rate)
rm -f "$T"/rate.*
echo "baseline            $base blocks/s on $N CPUs"

export PERFETTO_PRODUCER_SOCK_NAME="$T/p.sock" PERFETTO_CONSUMER_SOCK_NAME="$T/c.sock"
"$OUT/traced" >"$T/traced.log" 2>&1 &
TRACED_PID=$!
sleep 0.3
"$OUT/traced_perf" >"$T/perf.log" 2>&1 &
PERF_PID=$!
sleep 0.3
cat >"$T/cfg.pbtxt" <<CFG
buffers { size_kb: 131072 }
data_sources { config { name: "linux.perf" perf_event_config {
  timebase { frequency: 1000 counter: SW_CPU_CLOCK }
  callstack_sampling { kernel_frames: true user_frames: UNWIND_DWARF }
} } }
duration_ms: $((D * 1000 + 1000))
CFG
t0=$(cpu_ticks $PERF_PID)
"$OUT/perfetto" --txt -c "$T/cfg.pbtxt" -o "$T/trace.pb" >/dev/null 2>&1 &
REC=$!
sleep 0.5
ours=$(rate)
rm -f "$T"/rate.*
wait $REC
t1=$(cpu_ticks $PERF_PID)
samples=$("$OUT/trace_processor_shell" -Q "select count(*) from perf_sample where callsite_id is not null" "$T/trace.pb" | sed 1d)
hz=$(getconf CLK_TCK)
echo "traced_perf         $ours blocks/s ($(awk -v a="$ours" -v b="$base" 'BEGIN { printf "%.1f", 100 * a / b }')% of baseline), $samples samples with callstacks, $(awk -v t=$((t1 - t0)) -v hz="$hz" -v n="$samples" 'BEGIN { printf "%.1f", n ? 1e6 * t / hz / n : 0 }') us of daemon CPU per sample"

if command -v perf >/dev/null 2>&1; then
	python3 - "$T" "$D" >"$T/perf.out" 2>&1 <<'PY' &
import resource, subprocess, sys
t, d = sys.argv[1], float(sys.argv[2])
p = subprocess.run(["perf", "record", "-F", "1000", "-a", "--call-graph", "dwarf", "-o",
                    t + "/perf.data", "--", "sleep", str(d + 1)], capture_output=True, text=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "")
print("cpu_s", r.ru_utime + r.ru_stime)
PY
	PR=$!
	sleep 0.5
	theirs=$(rate)
	wait $PR
	n=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' "$T/perf.out")
	cpu=$(awk '/cpu_s/ { print $2 }' "$T/perf.out")
	echo "perf record dwarf   $theirs blocks/s ($(awk -v a="$theirs" -v b="$base" 'BEGIN { printf "%.1f", 100 * a / b }')% of baseline), $n samples, $(awk -v c="$cpu" -v n="$n" 'BEGIN { printf "%.1f", n ? 1e6 * c / n : 0 }') us of perf CPU per sample (recording only; unwinding happens later in perf report)"
fi

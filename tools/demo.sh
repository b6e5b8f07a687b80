#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `make demo`: what perfetto-c can show on this landing. Every trace config
# kept under configs/ is parsed from text format, encoded to the binary
# TraceConfig that traced receives, decoded again and printed, and the
# binary is checked to re-encode to the same bytes. Then, as root with
# tracefs, tracebox records this machine for 5 s and trace_processor_shell
# ranks the threads by running time. Before that, tools/heap_profile
# records a native heap profile of out/hp/hp_known (no root needed).
set -eu
out=${1:-out}
tool="$out/pfc_pbtxt"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "perfetto-c demo: trace configs, text -> binary TraceConfig -> text"
echo
n=0
for cfg in configs/*.pbtxt; do
	name=$(basename "$cfg")
	"$tool" encode "$cfg" >"$tmp/$name.pb"
	"$tool" decode "$tmp/$name.pb" >"$tmp/$name.txt"
	"$tool" encode "$tmp/$name.txt" >"$tmp/$name.again.pb"
	if ! cmp -s "$tmp/$name.pb" "$tmp/$name.again.pb"; then
		echo "demo: $name did not survive the round trip" >&2
		exit 1
	fi
	bytes=$(wc -c <"$tmp/$name.pb" | tr -d ' ')
	echo "=== $cfg: $bytes bytes as binary TraceConfig, decoded back:"
	sed 's/^/    /' "$tmp/$name.txt"
	echo
	n=$((n + 1))
done

echo "A misspelled field is caught with its position and a suggestion:"
printf 'buffers { size_kb: 1024 }\ndurations_ms: 10000\n' >"$tmp/typo.pbtxt"
"$tool" check "$tmp/typo.pbtxt" 2>&1 | sed "s|$tmp/||; s/^/    /" || true
echo
echo "demo: $n configs round-tripped"

# ----------------------------------------------------------------------
# A native heap profile (no root needed): tools/heap_profile runs a program
# that keeps 64 MiB in leak_a, churns 32 MiB through churn_b and keeps
# 10 MiB in small_c, under the preload library and a private traced.
echo
echo "perfetto-c demo: which call stacks hold the memory (native heap profile)"
echo "    \$ tools/heap_profile host -o heap -- hp_known --no-wait"
if tools/heap_profile host --bin-dir "$out" -o "$tmp/heap" -- "$out/hp/hp_known" --no-wait \
	>/dev/null 2>"$tmp/heap.log"; then
	echo "    unreleased bytes per stack (heap.folded, largest first):"
	sort -t' ' -k2 -n -r "$tmp/heap/heap.folded" | head -n 4 |
		awk '{ n = split($1, f, ";"); printf "    %12d bytes  ...;%s;%s\n", $2, f[n - 1], f[n] }'
	echo "    \$ trace_processor_shell -Q '...heap_profile_allocation...' heap/raw-trace"
	"$out/trace_processor_shell" -Q "SELECT f.name AS function,
	     SUM(a.size) AS unreleased, SUM(CASE WHEN a.size > 0 THEN a.size ELSE 0 END) AS allocated
	   FROM heap_profile_allocation a JOIN stack_profile_callsite c ON a.callsite_id = c.id
	   JOIN stack_profile_frame f ON c.frame_id = f.id
	   WHERE f.name IN ('leak_a', 'churn_b', 'small_c') GROUP BY f.name ORDER BY f.name" \
		"$tmp/heap/raw-trace" | sed 's/^/    /'
	cp "$tmp/heap/heap.svg" "$out/demo-heap.svg" 2>/dev/null &&
		echo "    the memory flame graph: $out/demo-heap.svg; pprof: go tool pprof heap/heap_dump.*.pb"
else
	echo "demo: heap_profile failed: $(tail -n 3 "$tmp/heap.log")" >&2
	exit 1
fi

# ----------------------------------------------------------------------
# Recording this machine: tracebox starts its own traced and traced_probes,
# records 5 s of scheduling, frequency and idle events, and stops them;
# then 3 s of CPU samples with callstacks (traced_perf) as a flame graph.
echo
cleanup() {
	rm -rf "$tmp"
}
trap cleanup EXIT
tfs=/sys/kernel/tracing
if [ "$(id -u)" = 0 ] && { [ -e "$tfs/trace_clock" ] || mount -t tracefs nodev "$tfs" 2>/dev/null; } &&
	[ -e "$tfs/trace_clock" ]; then
	# One tracefs user at a time (a test run on this machine waits for us).
	. tools/tracefs_lock.sh
	tracefs_lock
	echo "perfetto-c demo: recording this machine for 5 s"
	echo "    \$ tracebox -o demo.pftrace -t 5s sched freq idle"
	# Some load to look at: a shell counting for about 3 s.
	( sleep 1; timeout 3 sh -c 'i=0; while :; do i=$((i + 1)); done' ) &
	"$out/tracebox" -o "$tmp/demo.pftrace" -t 5s sched freq idle 2>&1 | sed "s|$tmp/||; s/^/    /"
	wait
	echo
	echo "Top threads by running time, asked in SQL:"
	q="SELECT t.tid, t.name AS thread, p.name AS process,
	     ROUND(SUM(s.dur) / 1e6, 1) AS running_ms, COUNT(*) AS slices
	   FROM sched s JOIN thread t USING (utid) LEFT JOIN process p USING (upid)
	   WHERE s.utid != 0 AND s.dur > 0
	   GROUP BY s.utid ORDER BY running_ms DESC LIMIT 10"
	echo "    \$ trace_processor_shell -Q \"SELECT ... FROM sched JOIN thread ...\" demo.pftrace"
	"$out/trace_processor_shell" -Q "$q" "$tmp/demo.pftrace" | sed 's/^/    /'
	echo
	echo "Time per thread state (from sched_switch and sched_waking):"
	"$out/trace_processor_shell" -Q "SELECT state, COUNT(*) AS n,
	     ROUND(SUM(CASE WHEN dur > 0 THEN dur ELSE 0 END) / 1e9, 2) AS seconds
	   FROM thread_state GROUP BY state ORDER BY seconds DESC" "$tmp/demo.pftrace" | sed 's/^/    /'
	echo
	echo "demo: recorded with ftrace through traced and traced_probes, queried with"
	echo "trace_processor_shell (try: $out/trace_processor_shell -i TRACE)"
	# CPU profiling: the same recording with callstack samples (traced_perf).
	echo
	echo "perfetto-c demo: where the CPU time goes, down to the function (3 s at 199 Hz)"
	echo "    \$ tracebox -t 3s --cpu-profile 199 -o profile.pftrace sched"
	"$out/bench/perf_workload" --seconds 3.5 >/dev/null &
	load=$!
	"$out/tracebox" -t 3s --cpu-profile 199 -o "$tmp/profile.pftrace" sched 2>&1 |
		sed "s|$tmp/||; s/^/    /"
	wait "$load"
	echo "    \$ pfc_flamegraph --process-name '*perf_workload*' profile.pftrace   (folded stacks)"
	"$out/pfc_flamegraph" --process-name '*perf_workload*' "$tmp/profile.pftrace" 2>&1 |
		sort -t' ' -k2 -n -r | head -n 5 | sed 's/^/    /'
	if "$out/pfc_flamegraph" --process-name '*perf_workload*' --svg "$tmp/profile.svg" \
		"$tmp/profile.pftrace" >/dev/null 2>&1; then
		cp "$tmp/profile.svg" "$out/demo-flamegraph.svg"
		echo "    the flame graph: $out/demo-flamegraph.svg (open it in a browser)"
	fi
	exit 0
fi

# Without root or tracefs, the recording path is shown with a test producer.
echo "perfetto-c demo: recording through traced (no root or tracefs here, so a"
echo "test producer stands in for the kernel)"
export PERFETTO_PRODUCER_SOCK_NAME="@pfc-demo-p-$$"
export PERFETTO_CONSUMER_SOCK_NAME="@pfc-demo-c-$$"
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	rm -rf "$tmp"
}

wait_for() { # FILE PATTERN: up to 10 s for PATTERN in FILE
	i=0
	while [ $i -lt 200 ]; do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
		i=$((i + 1))
	done
	echo "demo: timed out waiting for $1" >&2
	return 1
}

"$out/traced" >"$tmp/traced.log" 2>&1 &
pids="$pids $!"
wait_for "$tmp/traced.log" "Started traced"
"$out/test_producer" --name demo_producer --ds demo.data --threads 2 \
	--packets-per-thread 5000 --packet-size 512 --emit-on-start >"$tmp/producer.log" 2>&1 &
pids="$pids $!"
wait_for "$tmp/producer.log" "ready"
cat >"$tmp/demo.pbtxt" <<'CFG'
buffers { size_kb: 16384 fill_policy: DISCARD }
data_sources { config { name: "demo.data" } }
duration_ms: 1000
CFG
echo "    \$ perfetto --txt -c demo.pbtxt -o demo.pftrace   (1 s, 2 writer threads)"
"$out/perfetto" --txt -c "$tmp/demo.pbtxt" -o "$tmp/demo.pftrace" 2>&1 | sed "s|$tmp/||; s/^/    /"
"$out/trace_check" "$tmp/demo.pftrace" --expect-seqs 2 --expect-per-seq 5000 >"$tmp/check.txt" || {
	cat "$tmp/check.txt" >&2
	echo "demo: the recorded trace is not complete" >&2
	exit 1
}
echo "    the trace holds: $(grep -E '^(packets|test_packets|test_sequences|gaps|clock_snapshots|trace_stats)=' "$tmp/check.txt" | tr '\n' ' ')"
echo "demo: every packet of both writer threads arrived once and in order"

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# perf_bench.sh - CPU profiling side by side with `perf record`.
#
# The workload (out/bench/perf_workload: one busy thread per CPU, no frame
# pointers) runs S seconds (default 10) alone, under `perf record -a -F F
# --call-graph dwarf` (Debian's linux-perf), under our traced +
# traced_perf (started cold) recording linux.perf at F Hz on every CPU
# without callstacks (the floor: what the sampling interrupts alone cost
# the workload), beside bench/perf_kernel_floor (the same events and rings
# as our callstack session, every record thrown away unread: what the
# kernel's side of callstack sampling alone costs, a floor for any
# profiler that copies user stacks), with kernel frames and DWARF-unwound
# user frames, and alone again; with --rounds N the five runs after the
# first repeat N times, interleaved.
# Printed for both profilers (medians over the rounds, with ranges): CPU
# seconds of the profiler per thousand samples (perf record's own process;
# for us traced_perf + traced + the perfetto CLI), the workload's rate as a
# share of its untraced rate (mean of the untraced runs around the round),
# and what each profiler costs beyond sampling alone (the round's floor
# less its share: paired within a round, so it moves less with the host
# than the shares do) and beyond the kernel's callstack work (likewise),
# bytes of output per sample, samples kept and lost. Then
# our trace_processor_shell imports a large sample set (our trace repeated
# until it holds >= 200,000 samples) and the flame graph of every sample is
# folded: samples per second of import, and the fold's time.
#
# With --pairs N the rates are measured in pairs instead: each profiled
# run (ours, perf record, the kernel floor, sampling alone) beside an
# untraced run right before or after it (ABBA: the order alternates), N
# pairs each, 3 s runs unless --seconds says otherwise. A pair's ratio
# cancels the host's drift; the mean of the N log ratios and its 95%
# confidence interval (Student's t) say how sure the share is, and the
# workload target's verdict uses the interval: met only if all of it is at
# or above 95%, missed only if all of it is below.
#
# Targets (issue 14): cost per sample <= perf record --call-graph dwarf's;
# workload >= 95% of its untraced rate at 1 kHz on all CPUs; no sample lost
# at 1 kHz.
#
#   bench/perf_bench.sh [--seconds S] [--freq F] [--stack-kb N] [--ring-pages N] [--rounds N | --pairs N] [--keep] [--smoke]
#     --ring-pages N  ring_buffer_pages of our config (default: unset, so
#                   traced_perf sizes the rings: 16 MiB each at 1 kHz here)
#     --rounds N    N interleaved rounds (untraced, perf record, ours, ...,
#                   untraced): medians and ranges (default 1)
#     --pairs N     N ABBA pairs (untraced, profiled) per profiler: means
#                   with 95% confidence intervals (>= 3; 10 takes ~6 min)
#     --stack-kb N  traced_perf --stack-kb N (user stack copied per sample;
#                   default upstream's 63.75 KiB; perf record copies 8)
#     --smoke       3 s runs, small import set; < 40 s (26 s here)
#   O=out/asan bench/perf_bench.sh   use another build directory
#
# Needs root (perf_event_open on every CPU); skipped with a reason
# otherwise, or without perf.

set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
O=${O:-$ROOT/out}
case $O in /*) ;; *) O=$ROOT/$O ;; esac
TP=$O/trace_processor_shell
WORKLOAD=$O/bench/perf_workload

seconds=10
freq=1000
rounds=1
pairs=0
seconds_given=0
ring_pages=
keep=0
import_samples=200000
stack_args=""
while [ $# -gt 0 ]; do
	case "$1" in
	--seconds) seconds=$2; seconds_given=1; shift 2 ;;
	--freq) freq=$2; shift 2 ;;
	--keep) keep=1; shift ;;
	--ring-pages) ring_pages=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2
		case $rounds in '' | *[!0-9]* | 0) echo "perf_bench: --rounds takes a positive number" >&2; exit 2 ;; esac ;;
	--pairs) pairs=$2; shift 2
		case $pairs in '' | *[!0-9]* | [012]) echo "perf_bench: --pairs takes a number >= 3" >&2; exit 2 ;; esac ;;
	--stack-kb) stack_args="--stack-kb $2"; shift 2 ;;
	--smoke) seconds=3; import_samples=20000; shift ;;
	*) echo "usage: $0 [--seconds S] [--freq F] [--stack-kb N] [--ring-pages N] [--rounds N | --pairs N] [--keep] [--smoke]" >&2; exit 2 ;;
	esac
done
if [ "$pairs" -gt 0 ]; then
	[ "$rounds" = 1 ] || { echo "perf_bench: --rounds and --pairs exclude each other" >&2; exit 2; }
	[ "$seconds_given" = 1 ] || seconds=3
fi

skip() {
	echo "perf_bench: skipped: $*"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
}
[ "$(id -u)" = 0 ] || skip "needs root (perf_event_open on every CPU)"
for b in traced traced_perf perfetto trace_processor_shell pfc_flamegraph bench/perf_workload bench/perf_kernel_floor; do
	[ -x "$O/$b" ] || { echo "perf_bench: build first (make): no $O/$b" >&2; exit 1; }
done
PERF=$(command -v perf) || skip "no perf (Debian package linux-perf)"
"$PERF" version >/dev/null 2>&1 || skip "perf does not run for this kernel: $("$PERF" version 2>&1 | head -n 1)"

dir=$(mktemp -d /tmp/perf_bench.XXXXXX)
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	if [ "$keep" = 1 ]; then echo "perf_bench: kept $dir"; else rm -rf "$dir"; fi
}
trap cleanup EXIT

ncpu=$(nproc)
# workload: prints its iterations per second.
workload() {
	"$WORKLOAD" --seconds "$seconds" | sed -E 's/.* ([0-9]+) iterations\/s.*/\1/'
}
# cpu_of PID: utime + stime of a live process, in seconds.
cpu_of() {
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat"
}

echo "perf_bench: $ncpu CPUs, workload ${seconds} s, ${freq} Hz, callstacks (kernel + DWARF user)${stack_args:+, traced_perf $stack_args}, rings of ${ring_pages:-traced_perf default} pages, $([ "$pairs" -gt 0 ] && echo "$pairs ABBA pairs per profiler" || echo "$rounds round(s)")"

# run_perf: one perf record run beside the workload; sets perf_*.
run_perf() {
	/usr/bin/time -f "%U %S" -o "$dir/perf.time" "$PERF" record -q -a -F "$freq" --call-graph dwarf \
		-o "$dir/perf.data" -- sleep $((seconds + 1)) >"$dir/perf.log" 2>&1 &
	perf_pid=$!
	pids="$perf_pid"
	sleep 0.5
	rate_perf=$(workload)
	wait "$perf_pid"
	pids=""
	perf_cpu=$(awk '{ print $1 + $2 }' "$dir/perf.time")
	"$PERF" report -i "$dir/perf.data" --stats >"$dir/perf.stats" 2>/dev/null
	perf_samples=$(awk '/^ *SAMPLE events:/ { print $3; exit }' "$dir/perf.stats")
	# Samples the kernel dropped (PERF_RECORD_LOST counts), as perf report
	# sums them; only when the stats show such records: the report resolves
	# the symbols of every process the system-wide run met (minutes with
	# addr2line when one is a large binary such as node).
	perf_lost=0
	if grep -q -E "^ *LOST(_SAMPLES)? events:" "$dir/perf.stats"; then
		perf_lost=$("$PERF" report -i "$dir/perf.data" -g none --no-children --sort pid --stdio 2>/dev/null |
			sed -n 's/^# Total Lost Samples: //p' | head -n 1)
		perf_lost=${perf_lost:-0}
	fi
	perf_bytes=$(stat -c %s "$dir/perf.data")
}

# run_ours [floor]: traced + traced_perf, started cold as a user's session
# meets them, beside the workload; sets ours_*. With "floor", the same
# timebase without callstacks: what sampling alone costs the workload
# here (the timer interrupts), a floor no profiler goes under.
run_ours() {
	local cs='  callstack_sampling { kernel_frames: true user_frames: UNWIND_DWARF }'
	[ "${1:-}" = floor ] && cs=''

	export PERFETTO_PRODUCER_SOCK_NAME=$dir/producer.sock
	export PERFETTO_CONSUMER_SOCK_NAME=$dir/consumer.sock
	rm -f "$PERFETTO_PRODUCER_SOCK_NAME" "$PERFETTO_CONSUMER_SOCK_NAME"
	"$O/traced" >"$dir/traced.log" 2>&1 &
	traced_pid=$!
	pids="$traced_pid"
	for _ in $(seq 100); do [ -S "$PERFETTO_CONSUMER_SOCK_NAME" ] && break; sleep 0.05; done
	# shellcheck disable=SC2086 # stack_args is a list of words
	"$O/traced_perf" $stack_args >"$dir/traced_perf.log" 2>&1 &
	tperf_pid=$!
	pids="$pids $tperf_pid"
	sleep 0.3
	printf '%s\n' 'buffers { size_kb: 262144 fill_policy: DISCARD }' \
		'data_sources { config { name: "linux.perf" perf_event_config {' \
		"  timebase { frequency: $freq counter: SW_CPU_CLOCK timestamp_clock: PERF_CLOCK_MONOTONIC }" \
		"$cs" \
		"${ring_pages:+  ring_buffer_pages: $ring_pages}" \
		'} } }' \
		"duration_ms: $(((seconds + 1) * 1000))" >"$dir/cfg.pbtxt"
	cpu_before=$(awk -v a="$(cpu_of "$traced_pid")" -v b="$(cpu_of "$tperf_pid")" 'BEGIN { print a + b }')
	/usr/bin/time -f "%U %S" -o "$dir/cmd.time" "$O/perfetto" --txt -c "$dir/cfg.pbtxt" \
		-o "$dir/ours.pftrace" >"$dir/cmd.log" 2>&1 &
	cmd_pid=$!
	sleep 0.5
	rate_ours=$(workload)
	if ! wait "$cmd_pid"; then
		echo "perf_bench: recording failed:" >&2
		tail -n 5 "$dir/cmd.log" "$dir/traced_perf.log" >&2
		exit 1
	fi
	ours_cpu=$(awk -v a="$(cpu_of "$traced_pid")" -v b="$(cpu_of "$tperf_pid")" -v c="$cpu_before" \
		-v d="$(awk '{ print $1 + $2 }' "$dir/cmd.time")" 'BEGIN { print a + b - c + d }')
	kill "$tperf_pid" "$traced_pid" 2>/dev/null
	wait 2>/dev/null
	pids=""
	ours_bytes=$(stat -c %s "$dir/ours.pftrace")
	"$TP" -Q "SELECT COUNT(*), SUM(callsite_id IS NOT NULL) FROM perf_sample" "$dir/ours.pftrace" \
		>"$dir/ours.count" 2>"$dir/tp.err" || { echo "perf_bench: import failed: $(head -n 3 "$dir/tp.err")" >&2; exit 1; }
	ours_samples=$(tail -n 1 "$dir/ours.count" | cut -d, -f1)
	ours_stacks=$(tail -n 1 "$dir/ours.count" | cut -d, -f2)
	# Records the kernel lost (kernel_records_lost: perf_cpu_lost_records) and
	# samples skipped for data loss.
	ours_lost=$("$TP" -Q "SELECT COALESCE(SUM(value), 0) FROM stats WHERE name LIKE 'perf%lost%'
		OR name IN ('perf_samples_skipped_dataloss', 'perf_record_skipped')" "$dir/ours.pftrace" 2>/dev/null | tail -n 1)
}

# run_kernel_floor: the kernel's side of our callstack sampling alone (the
# same events and rings, records thrown away unread) beside the workload;
# sets rate_kfloor. What a profiler that copies user stacks cannot beat.
run_kernel_floor() {
	"$O/bench/perf_kernel_floor" --seconds $((seconds + 1)) --freq "$freq" >"$dir/kfloor.log" 2>&1 &
	pids="$!"
	sleep 0.5
	rate_kfloor=$(workload)
	if ! wait "$pids" || grep -q skipped "$dir/kfloor.log"; then
		echo "perf_bench: perf_kernel_floor failed: $(tail -n 2 "$dir/kfloor.log")" >&2
		exit 1
	fi
	pids=""
}

per1k() { awk -v c="$1" -v n="$2" 'BEGIN { printf "%.3f", (n > 0 ? c / n * 1000 : 0) }'; }
pct() { awk -v r="$1" -v b="$2" 'BEGIN { printf "%.1f", r / b * 100 }'; }
per_sample() { awk -v b="$1" -v n="$2" 'BEGIN { printf "%.0f", (n > 0 ? b / n : 0) }'; }
# median / range of the numbers given as words
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
span() { printf '%s\n' "$@" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print (lo == hi ? lo : lo "-" hi) }'; }

# cost_figures: medians, ranges and the worst loss of the per-run cost
# lists (r_ours_k, r_perf_k, r_ours_lost, r_perf_lost), for either mode.
cost_figures() {
	# shellcheck disable=SC2086 # word lists
	{
		ours_k=$(median $r_ours_k)
		perf_k=$(median $r_perf_k)
		ours_k_span=$(span $r_ours_k)
		perf_k_span=$(span $r_perf_k)
		ours_lost_max=$(printf '%s\n' $r_ours_lost | sort -g | tail -n 1)
		ours_lost_span=$(span $r_ours_lost)
		perf_lost_span=$(span $r_perf_lost)
	}
}

# run_rounds: the rounds (see the top); sets the figures the verdicts use.
run_rounds() {
	# Rounds: untraced, perf record, ours, untraced, perf record, ours, ...,
	# untraced. A round's rates are shares of the mean of the untraced runs
	# around it, so the machine's drift cancels.
	prev=$(workload)
	rate0=$prev
	r_perf_k="" r_ours_k="" r_perf_share="" r_ours_share="" r_ours_lost="" r_perf_lost="" r_floor_share=""
	r_ours_beyond="" r_perf_beyond="" r_kfloor_share="" r_ours_beyond_k="" r_perf_beyond_k=""
	for r in $(seq "$rounds"); do
		run_perf
		run_ours floor
		rate_floor=$rate_ours
		run_kernel_floor
		run_ours
		next=$(workload)
		base=$(awk -v a="$prev" -v b="$next" 'BEGIN { print (a + b) / 2 }')
		r_perf_k="$r_perf_k $(per1k "$perf_cpu" "$perf_samples")"
		r_ours_k="$r_ours_k $(per1k "$ours_cpu" "$ours_samples")"
		r_perf_share="$r_perf_share $(pct "$rate_perf" "$base")"
		r_ours_share="$r_ours_share $(pct "$rate_ours" "$base")"
		r_floor_share="$r_floor_share $(pct "$rate_floor" "$base")"
		r_kfloor_share="$r_kfloor_share $(pct "$rate_kfloor" "$base")"
		# Beyond the kernel's own callstack work (paired in the round too).
		r_ours_beyond_k="$r_ours_beyond_k $(awk -v f="$rate_kfloor" -v o="$rate_ours" -v b="$base" 'BEGIN { printf "%.1f", (f - o) / b * 100 }')"
		r_perf_beyond_k="$r_perf_beyond_k $(awk -v f="$rate_kfloor" -v o="$rate_perf" -v b="$base" 'BEGIN { printf "%.1f", (f - o) / b * 100 }')"
		# Beyond sampling alone: the round's floor less the profiler's share
		# (paired in the round, so the host's drift between rounds cancels).
		r_ours_beyond="$r_ours_beyond $(awk -v f="$rate_floor" -v o="$rate_ours" -v b="$base" 'BEGIN { printf "%.1f", (f - o) / b * 100 }')"
		r_perf_beyond="$r_perf_beyond $(awk -v f="$rate_floor" -v o="$rate_perf" -v b="$base" 'BEGIN { printf "%.1f", (f - o) / b * 100 }')"
		r_ours_lost="$r_ours_lost $ours_lost"
		r_perf_lost="$r_perf_lost $perf_lost"
		if [ "$rounds" -gt 1 ]; then
			echo "round $r: per 1000 samples $(per1k "$ours_cpu" "$ours_samples") vs $(per1k "$perf_cpu" "$perf_samples") s," \
				"workload $(pct "$rate_ours" "$base")% vs $(pct "$rate_perf" "$base")% (sampling alone $(pct "$rate_floor" "$base")%, the kernel's callstacks alone $(pct "$rate_kfloor" "$base")%)," \
				"lost $ours_lost vs $perf_lost" \
				"($ours_samples vs $perf_samples samples)"
		fi
		prev=$next
	done
	rate1=$prev

	# shellcheck disable=SC2086 # word lists
	{
		ours_share=$(median $r_ours_share)
		perf_share=$(median $r_perf_share)
		floor_share=$(median $r_floor_share)
		floor_share_span=$(span $r_floor_share)
		kfloor_share=$(median $r_kfloor_share)
		kfloor_share_span=$(span $r_kfloor_share)
		ours_beyond_k=$(median $r_ours_beyond_k)
		perf_beyond_k=$(median $r_perf_beyond_k)
		ours_beyond_k_span=$(span $r_ours_beyond_k)
		perf_beyond_k_span=$(span $r_perf_beyond_k)
		ours_beyond=$(median $r_ours_beyond)
		perf_beyond=$(median $r_perf_beyond)
		ours_beyond_span=$(span $r_ours_beyond)
		perf_beyond_span=$(span $r_perf_beyond)
		ours_share_span=$(span $r_ours_share)
		perf_share_span=$(span $r_perf_share)
	}
	cost_figures
	echo
	[ "$rounds" -gt 1 ] && echo "(medians of $rounds rounds, ranges in brackets; samples, CPU and bytes of the last round)"
	printf "%-24s | %16s | %16s\n" "" "perfetto-c" "perf record"
	printf -- "-------------------------+------------------+-----------------\n"
	printf "%-24s | %16s | %16s\n" "samples" "$ours_samples" "$perf_samples"
	printf "%-24s | %16s | %16s\n" "  with a callstack" "$ours_stacks" "-"
	printf "%-24s | %16s | %16s\n" "lost" "$ours_lost_span" "$perf_lost_span"
	printf "%-24s | %14s s | %14s s\n" "profiler CPU" "$ours_cpu" "$perf_cpu"
	printf "%-24s | %14s s | %14s s\n" "  per 1000 samples" "$ours_k" "$perf_k"
	[ "$rounds" -gt 1 ] && printf "%-24s | %16s | %16s\n" "" "[$ours_k_span]" "[$perf_k_span]"
	printf "%-24s | %14s %% | %14s %%\n" "workload rate kept" "$ours_share" "$perf_share"
	[ "$rounds" -gt 1 ] && printf "%-24s | %16s | %16s\n" "" "[$ours_share_span]" "[$perf_share_span]"
	printf "%-24s | %14s %% | %16s\n" "  sampling alone" "$floor_share" "-"
	[ "$rounds" -gt 1 ] && printf "%-24s | %16s | %16s\n" "" "[$floor_share_span]" ""
	printf "%-24s | %14s %% | %14s %%\n" "  cost beyond that" "$ours_beyond" "$perf_beyond"
	[ "$rounds" -gt 1 ] && printf "%-24s | %16s | %16s\n" "" "[$ours_beyond_span]" "[$perf_beyond_span]"
	printf "%-24s | %14s %% | %16s\n" "  kernel stacks alone" "$kfloor_share" "-"
	[ "$rounds" -gt 1 ] && printf "%-24s | %16s | %16s\n" "" "[$kfloor_share_span]" ""
	printf "%-24s | %14s %% | %14s %%\n" "  cost beyond that" "$ours_beyond_k" "$perf_beyond_k"
	[ "$rounds" -gt 1 ] && printf "%-24s | %16s | %16s\n" "" "[$ours_beyond_k_span]" "[$perf_beyond_k_span]"
	printf "%-24s | %14s B | %14s B\n" "bytes per sample" "$(per_sample "$ours_bytes" "$ours_samples")" \
		"$(per_sample "$perf_bytes" "$perf_samples")"
	echo "(untraced: $rate0 and $rate1 iterations/s at the start and the end; perf record's samples"
	echo " need 'perf report' to unwind later; ours are unwound and named in the trace)"
}

# ci95 LOG_RATIO...: "mean lo hi" as percentages: exp of the mean of the
# log ratios and of its 95% confidence interval (Student's t, n - 1
# degrees of freedom, past 20 the quantile rounded up; n >= 2).
ci95() {
	printf '%s\n' "$@" | awk '
		{ x[NR] = $1; s += $1 }
		END {
			n = NR; m = s / n
			for (i = 1; i <= n; i++) ss += (x[i] - m) ^ 2
			split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 " \
			      "2.201 2.179 2.160 2.145 2.131 2.120 2.110 2.101 2.093 2.086", t, " ")
			df = n - 1
			q = df <= 20 ? t[df] : (df <= 30 ? 2.08 : (df <= 60 ? 2.04 : 2.00)) # rounded up
			h = q * sqrt(ss / df / n)
			printf "%.1f %.1f %.1f\n", exp(m) * 100, exp(m - h) * 100, exp(m + h) * 100
		}'
}

# run_pairs: --pairs N (see the top); sets the figures the verdicts use.
# Ours runs last in each pair set, so ours.pftrace is a callstack run.
run_pairs() {
	local i x u rate lr line
	local l_floor="" l_kfloor="" l_perf="" l_ours="" untraced=""

	r_ours_k="" r_perf_k="" r_ours_lost="" r_perf_lost=""
	for i in $(seq "$pairs"); do
		line="pair $i:"
		for x in floor kfloor perf ours; do
			[ $((i % 2)) = 1 ] && u=$(workload)
			case $x in
			floor) run_ours floor; rate=$rate_ours ;;
			kfloor) run_kernel_floor; rate=$rate_kfloor ;;
			perf) run_perf; rate=$rate_perf
				r_perf_k="$r_perf_k $(per1k "$perf_cpu" "$perf_samples")"
				r_perf_lost="$r_perf_lost $perf_lost" ;;
			ours) run_ours; rate=$rate_ours
				r_ours_k="$r_ours_k $(per1k "$ours_cpu" "$ours_samples")"
				r_ours_lost="$r_ours_lost $ours_lost" ;;
			esac
			[ $((i % 2)) = 0 ] && u=$(workload)
			untraced="$untraced $u"
			lr=$(awk -v a="$rate" -v b="$u" 'BEGIN { printf "%.6f", log(a / b) }')
			case $x in
			floor) l_floor="$l_floor $lr" ;;
			kfloor) l_kfloor="$l_kfloor $lr" ;;
			perf) l_perf="$l_perf $lr" ;;
			ours) l_ours="$l_ours $lr" ;;
			esac
			line="$line $x $(awk -v a="$rate" -v b="$u" 'BEGIN { printf "%.1f", a / b * 100 }')%"
		done
		echo "$line"
	done

	# shellcheck disable=SC2086 # word lists
	{
		read -r ours_share ours_lo ours_hi <<<"$(ci95 $l_ours)"
		read -r perf_share perf_lo perf_hi <<<"$(ci95 $l_perf)"
		read -r floor_share floor_lo floor_hi <<<"$(ci95 $l_floor)"
		read -r kfloor_share kfloor_lo kfloor_hi <<<"$(ci95 $l_kfloor)"
		untraced_span=$(span $untraced)
	}
	cost_figures
	echo
	echo "(means of $pairs pairs, 95% confidence intervals in brackets; CPU per sample: medians and"
	echo " ranges; samples and bytes of the last run)"
	printf "%-24s | %16s | %16s\n" "" "perfetto-c" "perf record"
	printf -- "-------------------------+------------------+-----------------\n"
	printf "%-24s | %16s | %16s\n" "samples" "$ours_samples" "$perf_samples"
	printf "%-24s | %16s | %16s\n" "  with a callstack" "$ours_stacks" "-"
	printf "%-24s | %16s | %16s\n" "lost" "$ours_lost_span" "$perf_lost_span"
	printf "%-24s | %14s s | %14s s\n" "CPU per 1000 samples" "$ours_k" "$perf_k"
	printf "%-24s | %16s | %16s\n" "" "[$ours_k_span]" "[$perf_k_span]"
	printf "%-24s | %14s %% | %14s %%\n" "workload rate kept" "$ours_share" "$perf_share"
	printf "%-24s | %16s | %16s\n" "" "[$ours_lo-$ours_hi]" "[$perf_lo-$perf_hi]"
	printf "%-24s | %14s %% | %16s\n" "  sampling alone" "$floor_share" "-"
	printf "%-24s | %16s | %16s\n" "" "[$floor_lo-$floor_hi]" ""
	printf "%-24s | %14s %% | %16s\n" "  kernel stacks alone" "$kfloor_share" "-"
	printf "%-24s | %16s | %16s\n" "" "[$kfloor_lo-$kfloor_hi]" ""
	printf "%-24s | %14s B | %14s B\n" "bytes per sample" "$(per_sample "$ours_bytes" "$ours_samples")" \
		"$(per_sample "$perf_bytes" "$perf_samples")"
	echo "(untraced runs: $untraced_span iterations/s)"
}

if [ "$pairs" -gt 0 ]; then run_pairs; else run_rounds; fi

# -- import and flame graph of a large sample set ---------------------------
big=$dir/big.pftrace
: >"$big"
n=0
while [ "$n" -lt "$import_samples" ] && [ "$ours_samples" -gt 0 ]; do
	cat "$dir/ours.pftrace" >>"$big"
	n=$((n + ours_samples))
done
"$TP" -p "$dir/tp.perf" -Q "SELECT COUNT(*) FROM perf_sample" "$big" >"$dir/big.count" 2>"$dir/tp.err" ||
	{ echo "perf_bench: import of the large set failed: $(head -n 3 "$dir/tp.err")" >&2; exit 1; }
big_samples=$(tail -n 1 "$dir/big.count")
load_ns=$(cut -d, -f1 "$dir/tp.perf")
t0=$(date +%s%N)
"$O/pfc_flamegraph" "$big" >"$dir/big.folded" 2>"$dir/fg.err" ||
	{ echo "perf_bench: pfc_flamegraph failed: $(head -n 3 "$dir/fg.err")" >&2; exit 1; }
t1=$(date +%s%N)
"$O/pfc_flamegraph" --svg "$dir/big.svg" "$big" >/dev/null 2>>"$dir/fg.err"
t2=$(date +%s%N)
echo
echo "import: $big_samples samples ($(stat -c %s "$big") bytes) in $(awk -v n="$load_ns" 'BEGIN { printf "%.3f", n / 1e9 }') s:" \
	"$(awk -v s="$big_samples" -v n="$load_ns" 'BEGIN { printf "%.0f", s / (n / 1e9) }') samples/s"
echo "flame graph of every sample (import included): folded $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }') s," \
	"svg $(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.3f", (b - a) / 1e9 }') s, $(wc -l <"$dir/big.folded") stacks"

echo
verdict() { if awk "BEGIN { exit !($1) }"; then echo "met   ($2)"; else echo "MISSED ($2)"; fi; }
echo "target cost per sample <= perf record --call-graph dwarf: $(verdict "$ours_k <= $perf_k" "$ours_k vs $perf_k CPU-ms per sample")"
if [ "$pairs" -gt 0 ]; then
	# Sure only when the whole interval is on one side of 95%.
	why="$ours_share%, 95% CI $ours_lo-$ours_hi; the kernel's callstack sampling alone keeps $kfloor_share% [$kfloor_lo-$kfloor_hi]"
	share_verdict=$(verdict "$ours_lo >= 95" "$why")
	awk -v l="$ours_lo" -v h="$ours_hi" 'BEGIN { exit !(l < 95 && h >= 95) }' &&
		share_verdict="UNDECIDED ($why: the interval spans 95%; more pairs narrow it)"
else
	share_verdict=$(verdict "$ours_share >= 95" "$ours_share%; the kernel's callstack sampling alone keeps $kfloor_share%")
fi
echo "target workload >= 95% of untraced:                     $share_verdict"
echo "target nothing lost at $freq Hz:                          $(verdict "$ours_lost_max == 0" "$ours_lost_span lost")"
if [ "$ours_samples" -gt 0 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; fi

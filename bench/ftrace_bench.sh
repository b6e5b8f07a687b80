#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# ftrace_bench.sh - what recording a context-switch storm costs.
#
# A storm (out/bench/pingpong: two processes passing one byte over two pipes,
# both pinned to the storm CPU) runs while a recorder, pinned to the recorder
# CPU, records sched/sched_switch + sched/sched_waking with 8 MiB per-CPU
# kernel buffers for S seconds. Recorders, interleaved round by round:
#
#   untraced         the storm alone (the baseline rate)
#   tracebox+compact our tracebox, compact_sched { enabled: true }
#   tracebox         our tracebox, compact_sched { enabled: false }
#   trace-cmd        `trace-cmd record -b 8192` (Debian package), if installed
#
# For each: events captured, events lost (kernel overrun + dropped), recorder
# CPU-seconds per million events (user + sys of the whole recorder process
# tree: tracebox reaps traced and traced_probes, trace-cmd its per-CPU
# readers, so /usr/bin/time sees them all), output bytes per event, and the
# storm's rate while recording against the untraced rate (measured over the
# same window, from 1 s after the recorder starts to 0.5 s before its
# duration ends). With --runs N every figure is the median over N rounds.
#
#   bench/ftrace_bench.sh [--runs N] [--seconds S] [--keep] [--smoke]
#     --runs N      rounds (default 1; the issue quotes medians of 3)
#     --seconds S   trace duration (default 10)
#     --keep        keep the traces and logs (printed directory)
#     --smoke       2 s, 1 round, trace-cmd only if installed; < 30 s
#   O=out/asan bench/ftrace_bench.sh   use another build directory
#   TRACE_CMD=/path/to/trace-cmd        use another trace-cmd
#
# Needs root, 2+ CPUs (recorder on CPU 0, storm on CPU 1) and tracefs. The
# ftrace state (tracing_on, buffer sizes, set_event, tracer, clock, options)
# is saved first and restored after every trace-cmd run and at exit; every
# process the benchmark started is ended by pid at exit.
#
# trace-cmd on this kernel: writes to set_ftrace_pid, set_ftrace_filter and
# /proc/sys/kernel/ftrace_enabled fail with EPERM, and trace-cmd 3.1 then
# crashes (it filters out its own pids through set_ftrace_pid) or refuses to
# start. `--no-filter` (trace its own threads too, as tracebox does) and
# `-d` (leave the function tracer alone) avoid both; it still exits 1 at the
# very end when resetting set_ftrace_filter, after the file is complete. It
# is stopped with SIGINT after S seconds (no command: a traced command
# would need set_ftrace_pid too).

set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
O=${O:-$ROOT/out}
TRACE_CMD=${TRACE_CMD:-trace-cmd}
TRACEFS=/sys/kernel/tracing
. "$ROOT/tools/tracefs_lock.sh"
tracefs_lock
REC_CPU=0
STORM_CPU=1

# Targets (issue) and upstream Perfetto / trace-cmd figures measured on this
# machine type, printed next to ours.
TARGET_CPU_PER_M=0.07
TARGET_BYTES_PER_EVENT=8
TARGET_STORM_RATIO=0.85
declare -A REF=(
	[tbc]="0.088 CPU-s/M  8.4 B/ev  no loss  storm 0.84x  (upstream perfetto, compact_sched)"
	[tbp]="0.51 CPU-s/M  51.5 B/ev               (upstream perfetto, no compact_sched)"
	[tc]="0.24 CPU-s/M  60 B/ev            storm 0.79x  (trace-cmd)"
	[un]=""
)
declare -A LABEL=([un]="untraced" [tbc]="tracebox+compact" [tbp]="tracebox" [tc]="trace-cmd")

g_runs=1
g_seconds=10
g_keep=0
g_smoke=0
g_dir=""
g_failed=0
g_have_tc=0
g_tc_skip_reason=""

die() {
	echo "ftrace_bench: $*" >&2
	exit 1
}

usage() {
	sed -n '/^#   bench\/ftrace_bench.sh/,/^#   TRACE_CMD=/p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
}

while [ $# -gt 0 ]; do
	case "$1" in
	--runs) [ $# -ge 2 ] || usage; g_runs=$2; shift 2 ;;
	--seconds) [ $# -ge 2 ] || usage; g_seconds=$2; shift 2 ;;
	--keep) g_keep=1; shift ;;
	--smoke) g_smoke=1; shift ;;
	-h | --help) usage ;;
	*) usage ;;
	esac
done
if [ "$g_smoke" = 1 ]; then
	g_runs=1
	g_seconds=2
fi
case "$g_runs" in '' | *[!0-9]*) die "--runs wants a positive integer" ;; esac
case "$g_seconds" in '' | *[!0-9]*) die "--seconds wants a whole number of seconds" ;; esac
[ "$g_runs" -ge 1 ] && [ "$g_runs" -le 20 ] || die "--runs must be 1..20"
[ "$g_seconds" -ge 2 ] && [ "$g_seconds" -le 120 ] || die "--seconds must be 2..120"

TRACEBOX=$O/tracebox
PINGPONG=$O/bench/pingpong
COUNT=$O/bench/count_sched

# ------------------------------------------------------------ checks ----

[ "$(id -u)" = 0 ] || die "needs root (ftrace)"
for b in "$TRACEBOX" "$PINGPONG" "$COUNT"; do
	[ -x "$b" ] || die "$b is missing: run 'make -j2' first"
done
command -v taskset >/dev/null || die "taskset (util-linux) is missing"
command -v timeout >/dev/null || die "timeout (coreutils) is missing"
if [ ! -e "$TRACEFS/tracing_on" ]; then
	mount -t tracefs nodev "$TRACEFS" 2>/dev/null || die "cannot mount tracefs on $TRACEFS"
fi
[ -e "$TRACEFS/per_cpu/cpu$STORM_CPU" ] || die "needs 2 CPUs (recorder on $REC_CPU, storm on $STORM_CPU)"

if command -v "$TRACE_CMD" >/dev/null; then
	g_have_tc=1
else
	g_tc_skip_reason="$TRACE_CMD is not installed (apt-get install trace-cmd; tools/deps.sh lists it)"
fi

# Keep this shell (and the counting between runs) off the storm CPU.
taskset -cp "$REC_CPU" $$ >/dev/null 2>&1

g_dir=$(mktemp -d /tmp/ftrace_bench.XXXXXX) || die "mktemp failed"

# ----------------------------------------------------- ftrace state ----

# Options whose files cannot be written on this kernel are skipped quietly.
declare -a SAVED_BUF=()
SAVED_ON="" SAVED_TRACER="" SAVED_CLOCK="" SAVED_EVENTS="" SAVED_OPTIONS=""

ftrace_snapshot() {
	local c
	cat "$TRACEFS/tracing_on" "$TRACEFS/current_tracer" "$TRACEFS/trace_clock" \
		"$TRACEFS/set_event" "$TRACEFS/trace_options" 2>/dev/null
	for c in "$TRACEFS"/per_cpu/cpu*; do
		echo "${c##*/} $(cat "$c/buffer_size_kb")"
	done
}

ftrace_save() {
	local c
	SAVED_ON=$(cat "$TRACEFS/tracing_on")
	SAVED_TRACER=$(cat "$TRACEFS/current_tracer")
	SAVED_CLOCK=$(sed 's/.*\[\(.*\)\].*/\1/' "$TRACEFS/trace_clock")
	SAVED_EVENTS=$(cat "$TRACEFS/set_event")
	SAVED_OPTIONS=$(cat "$TRACEFS/trace_options")
	SAVED_BUF=()
	for c in "$TRACEFS"/per_cpu/cpu*; do
		SAVED_BUF+=("${c##*/}:$(cat "$c/buffer_size_kb")")
	done
	ftrace_snapshot >"$g_dir/ftrace.saved"
}

ftrace_restore() {
	local e opt cur
	echo 0 >"$TRACEFS/tracing_on"
	[ "$(cat "$TRACEFS/current_tracer")" = "$SAVED_TRACER" ] ||
		echo "$SAVED_TRACER" >"$TRACEFS/current_tracer" 2>/dev/null
	if [ "$(cat "$TRACEFS/set_event")" != "$SAVED_EVENTS" ]; then
		echo >"$TRACEFS/set_event"
		while IFS= read -r e; do
			[ -n "$e" ] && echo "$e" >>"$TRACEFS/set_event" 2>/dev/null
		done <<<"$SAVED_EVENTS"
	fi
	cur=$(cat "$TRACEFS/trace_options")
	while IFS= read -r opt; do
		grep -qx -- "$opt" <<<"$cur" || echo "$opt" >"$TRACEFS/trace_options" 2>/dev/null
	done <<<"$SAVED_OPTIONS"
	grep -q "\[$SAVED_CLOCK\]" "$TRACEFS/trace_clock" ||
		echo "$SAVED_CLOCK" >"$TRACEFS/trace_clock" 2>/dev/null
	for e in "${SAVED_BUF[@]}"; do
		local cpu=${e%%:*} kb=${e#*:}
		[ "$(cat "$TRACEFS/per_cpu/$cpu/buffer_size_kb")" = "$kb" ] ||
			echo "$kb" >"$TRACEFS/per_cpu/$cpu/buffer_size_kb" 2>/dev/null
	done
	echo "$SAVED_ON" >"$TRACEFS/tracing_on"
}

# ------------------------------------------------------- processes ----

# Every process seen under a recorder or storm: "pid starttime", so that the
# exit handler ends exactly those (by pid, only if the pid was not reused).
TRACKED="$g_dir/tracked"
: >"$TRACKED"

# Prints "pid starttime comm cpu_ticks" for @1 and all its descendants.
proc_tree() {
	awk -v root="$1" '
	FNR == 1 {
		if (!match($0, /.*\) /)) next
		pid = substr($0, 1, index($0, " ") - 1)
		comm = substr($0, index($0, "(") + 1, RLENGTH - index($0, "(") - 2)
		n = split(substr($0, RLENGTH + 1), f, " ")
		ppid[pid] = f[2]; st[pid] = f[20]; cm[pid] = comm; ticks[pid] = f[12] + f[13]
		nextfile
	}
	END {
		want[root] = 1
		do {
			grew = 0
			for (p in ppid)
				if (!(p in want) && (ppid[p] in want)) { want[p] = 1; grew = 1 }
		} while (grew)
		for (p in want)
			if (p in st) print p, st[p], cm[p], ticks[p]
	}' /proc/[0-9]*/stat 2>/dev/null
}

# "pid name cpu_ticks" under @1, named by argv (traced and traced_probes are
# tracebox applets) and without the wrappers (time, taskset, timeout).
cpu_split() {
	local pid start comm ticks name
	proc_tree "$1" | sort -n | while read -r pid start comm ticks; do
		case "$comm" in time | taskset | timeout) continue ;; esac
		name=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | awk '{
			n = $1; sub(/.*\//, "", n)
			if (n == "tracebox" && ($2 == "traced" || $2 == "traced_probes")) n = $2
			print n }')
		echo "$pid ${name:-$comm} $ticks"
	done
}

track_tree() {
	proc_tree "$1" | awk '{ print $1, $2 }' >>"$TRACKED"
}

kill_tracked() {
	local pid start cur sig n=0
	for sig in TERM KILL; do
		while read -r pid start; do
			[ -r "/proc/$pid/stat" ] || continue
			cur=$(awk '{ match($0, /.*\) /); split(substr($0, RLENGTH + 1), f, " ")
				if (f[1] != "Z") print f[20] }' "/proc/$pid/stat" 2>/dev/null)
			[ "$cur" = "$start" ] || continue
			[ "$sig" = TERM ] && echo "ftrace_bench: ending leftover process $pid" \
				"($(cat "/proc/$pid/comm" 2>/dev/null))" >&2
			kill -s "$sig" "$pid" 2>/dev/null
			n=$((n + 1))
		done <"$TRACKED"
		[ "$n" -gt 0 ] || break
		sleep 0.3
	done
	: >"$TRACKED"
	return 0
}

cleanup() {
	kill_tracked
	wait 2>/dev/null
	if [ -n "$SAVED_ON" ]; then
		ftrace_restore
		ftrace_snapshot >"$g_dir/ftrace.end"
		if cmp -s "$g_dir/ftrace.saved" "$g_dir/ftrace.end"; then
			echo "ftrace state restored."
		else
			echo "ftrace_bench: WARNING: ftrace state differs from the saved one:" >&2
			diff "$g_dir/ftrace.saved" "$g_dir/ftrace.end" >&2
		fi
	fi
	if [ "$g_keep" = 1 ]; then
		echo "traces and logs kept in $g_dir"
	else
		rm -rf "$g_dir"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ------------------------------------------------------------ runs ----

# Writes the tracebox config for compact_sched @1 (true|false) to @2.
write_config() {
	local size_kb=$(($2 == 1 ? 524288 : 1048576))
	# Room for the whole trace (DISCARD would lose the tail): ~1 M events/s
	# at 8 (compact) or 52 bytes, with a margin; capped at 2 GiB.
	size_kb=$((size_kb * g_seconds / 10))
	[ "$size_kb" -lt 65536 ] && size_kb=65536
	[ "$size_kb" -gt 2097152 ] && size_kb=2097152
	cat >"$3" <<EOF
buffers { size_kb: $size_kb fill_policy: DISCARD }
data_sources {
  config {
    name: "linux.ftrace"
    target_buffer: 0
    ftrace_config {
      ftrace_events: "sched/sched_switch"
      ftrace_events: "sched/sched_waking"
      buffer_size_kb: 8192
      compact_sched { enabled: $1 }
    }
  }
}
duration_ms: $((g_seconds * 1000))
EOF
}

# Runs "$@" in the background with its user+sys CPU time (children included)
# written to @1 as "U S"; sets g_bg_pid.
start_timed() {
	local out=$1
	shift
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f "%U %S" -o "$out" "$@" &
	else
		# The subshell waits for "$@", so `times` counts it and its children.
		( "$@"; rc=$?; times | awk 'NR == 2 {
			split($1, u, /[ms]/); split($2, s, /[ms]/)
			printf "%.2f %.2f\n", u[1] * 60 + u[2], s[1] * 60 + s[2] }' >"$1"; exit $rc ) &
	fi
	g_bg_pid=$!
}

# Rate (round trips/s) in samples file @1 over realtime window [@2, @3].
window_rate() {
	awk -v t0="$2" -v t1="$3" '
	/^sample / {
		split($2, a, "="); split($3, b, "=")
		if (a[2] >= t0 && !have0) { ta = a[2]; na = b[2]; have0 = 1 }
		if (a[2] <= t1) { tb = a[2]; nb = b[2] }
	}
	END { if (have0 && tb > ta) printf "%.0f\n", (nb - na) / (tb - ta); else print "nan" }' "$1"
}

# One round of recorder @1 (un tbc tbp tc), round @2. Appends a result line
# "kind events lost cpu_s bytes rate uncompressed_bytes" to $g_dir/results.
run_one() {
	local kind=$1 round=$2 tag="$1.$2" storm_pid rec_pid t_start rate w0 w1
	local storm_secs=$((g_seconds + 2)) events=0 lost=0 cpu=0 bytes=0 raw=0
	local f="$g_dir/$tag"

	taskset -c "$STORM_CPU" "$PINGPONG" --seconds "$storm_secs" --samples-ms 100 \
		>"$f.storm" 2>&1 &
	storm_pid=$!
	echo "$storm_pid $(awk '{ match($0, /.*\) /); split(substr($0, RLENGTH + 1), f, " "); print f[20] }' \
		"/proc/$storm_pid/stat" 2>/dev/null)" >>"$TRACKED"
	sleep 0.5
	track_tree "$storm_pid"
	t_start=$EPOCHREALTIME

	case "$kind" in
	un)
		sleep "$g_seconds"
		;;
	tbc | tbp)
		write_config "$([ "$kind" = tbc ] && echo true || echo false)" \
			"$([ "$kind" = tbc ] && echo 1 || echo 0)" "$f.pbtxt"
		start_timed "$f.time" taskset -c "$REC_CPU" "$TRACEBOX" --txt -c "$f.pbtxt" \
			-o "$f.trace" >"$f.log" 2>&1
		;;
	tc)
		start_timed "$f.time" taskset -c "$REC_CPU" timeout -s INT -k 60 "$g_seconds" \
			"$TRACE_CMD" record --no-filter -d -b 8192 \
			-e sched:sched_switch -e sched:sched_waking -o "$f.trace" >"$f.log" 2>&1
		;;
	esac
	if [ "$kind" != un ]; then
		rec_pid=$g_bg_pid
		sleep 1
		track_tree "$rec_pid"
		sleep "$(awk -v s="$g_seconds" 'BEGIN { print s - 1.3 }')"
		# Where the CPU goes, near the end of the trace window.
		cpu_split "$rec_pid" >"$f.cpu_split"
		track_tree "$rec_pid"
		wait "$rec_pid" 2>/dev/null
	fi
	wait "$storm_pid"
	# Nothing should be left; end (and name) whatever is.
	kill_tracked

	w0=$(awk -v t="$t_start" -v s="$g_seconds" 'BEGIN { printf "%.6f", t + (s >= 4 ? 1.0 : s / 4) }')
	w1=$(awk -v t="$t_start" -v s="$g_seconds" 'BEGIN { printf "%.6f", t + s - (s >= 5 ? 0.5 : s / 10) }')
	rate=$(window_rate "$f.storm" "$w0" "$w1")

	case "$kind" in
	tbc | tbp)
		if [ ! -s "$f.trace" ]; then
			echo "ftrace_bench: ${LABEL[$kind]} wrote no trace (see $f.log)" >&2
			g_failed=1
			return
		fi
		local line
		line=$("$COUNT" "$f.trace") || {
			echo "ftrace_bench: count_sched failed on $f.trace" >&2
			g_failed=1
		}
		echo "$line" >"$f.count"
		events=$(sed -n 's/.*\bevents=\([0-9]*\).*/\1/p' <<<"$line")
		lost=$(awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			print v["overrun"] + v["dropped"] }' <<<"$line")
		bytes=$(stat -c %s "$f.trace")
		raw=$bytes
		[ "$g_keep" = 1 ] || rm -f "$f.trace"
		;;
	tc)
		if [ ! -s "$f.trace" ]; then
			echo "ftrace_bench: trace-cmd wrote no trace (see $f.log)" >&2
			g_failed=1
			ftrace_restore
			return
		fi
		# trace-cmd leaves tracing off and its buffer size behind.
		ftrace_restore
		events=$("$TRACE_CMD" report -i "$f.trace" 2>/dev/null |
			grep -cE ' sched_(switch|waking):')
		"$TRACE_CMD" report --stat -i "$f.trace" >"$f.stat" 2>&1
		lost=$(awk '/^overrun:/ { n += $2 } /^commit overrun:/ { n += $3 }
			/^dropped events:/ { n += $3 } END { print n + 0 }' "$f.stat")
		bytes=$(stat -c %s "$f.trace")
		# v7 files are zstd-compressed; the record log gives the raw size.
		raw=$(awk '/uncompressed\)/ { gsub(/\(/, "", $5); n += $5 } END { print n + 0 }' \
			"$f.log" 2>/dev/null)
		[ "$g_keep" = 1 ] || rm -f "$f.trace" "$f.trace".cpu*
		;;
	esac
	if [ "$kind" != un ]; then
		# time(1) puts "Command exited with non-zero status N" first.
		cpu=$(tail -n 1 "$f.time" 2>/dev/null | awk '{ printf "%.2f", $1 + $2 }')
		[ -n "$cpu" ] || cpu=nan
	fi
	echo "$kind $round $events $lost $cpu $bytes $rate $raw" >>"$g_dir/results"
	printf "  round %d %-17s events %9s lost %6s cpu %6s s  storm %7s trips/s\n" \
		"$round" "${LABEL[$kind]}" "$events" "$lost" "$cpu" "$rate"
}

# --------------------------------------------------------------- main ----

echo "ftrace_bench: storm on CPU $STORM_CPU, recorder on CPU $REC_CPU, ${g_seconds} s per run," \
	"$g_runs round(s); work dir $g_dir"
if [ -n "$(cat "$TRACEFS/set_event")" ] || [ "$(cat "$TRACEFS/current_tracer")" != nop ]; then
	echo "ftrace_bench: WARNING: ftrace is in use already (set_event or a tracer is set);" \
		"the figures may be disturbed" >&2
fi
if [ -n "$(ls "$TRACEFS/instances" 2>/dev/null)" ]; then
	echo "ftrace_bench: WARNING: ftrace instances exist ($(ls "$TRACEFS/instances" | tr '\n' ' '))" >&2
fi
load=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$load" 'BEGIN { exit !(l > 0.5) }'; then
	echo "ftrace_bench: WARNING: load average $load: the machine is not quiet" >&2
fi

ftrace_save
: >"$g_dir/results"

kinds="un tbc tbp"
if [ "$g_have_tc" = 1 ]; then
	kinds="$kinds tc"
else
	echo "ftrace_bench: skipping trace-cmd: $g_tc_skip_reason"
fi

for round in $(seq 1 "$g_runs"); do
	for kind in $kinds; do
		run_one "$kind" "$round"
	done
done

# ----------------------------------------------------------- report ----

median() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

col() { awk -v k="$1" -v c="$2" '$1 == k && $c != "nan" { print $c }' "$g_dir/results" | median; }

base_rate=$(col un 7)
echo
printf "ftrace_bench: sched_switch + sched_waking, %d s storm, 8 MiB/CPU kernel buffers, %s of %d round(s)\n" \
	"$g_seconds" "$([ "$g_runs" -gt 1 ] && echo medians || echo results)" "$g_runs"
printf "untraced storm: %s round trips/s\n\n" "$base_rate"
printf "%-17s | %10s | %6s | %14s | %11s | %10s | %s\n" recorder events lost "CPU-s/M events" bytes/event \
	"storm rate" "reference on this machine type"
printf -- "------------------+------------+--------+----------------+-------------+------------+-------------------------------\n"
declare -A M_CPUM M_BPE M_LOST M_RATIO
for kind in tbc tbp tc; do
	if [ "$kind" = tc ] && [ "$g_have_tc" = 0 ]; then
		printf "%-17s | skipped: %s\n" "${LABEL[$kind]}" "$g_tc_skip_reason"
		continue
	fi
	# Per-round ratios first, then medians of those.
	awk -v k="$kind" -v b="$base_rate" '$1 == k {
		e = $3; cpu = $5
		cpm = "nan"; bpe = "nan"; ratio = "nan"
		if (e > 0 && cpu != "nan") cpm = cpu / (e / 1e6)
		if (e > 0) bpe = $6 / e
		if (b > 0 && $7 != "nan") ratio = $7 / b
		print e, $4, cpm, bpe, ratio }' \
		"$g_dir/results" >"$g_dir/derived.$kind"
	ev=$(awk '{ print $1 }' "$g_dir/derived.$kind" | median)
	M_LOST[$kind]=$(awk '{ print $2 }' "$g_dir/derived.$kind" | median)
	M_CPUM[$kind]=$(awk '{ print $3 }' "$g_dir/derived.$kind" | median)
	M_BPE[$kind]=$(awk '{ print $4 }' "$g_dir/derived.$kind" | median)
	M_RATIO[$kind]=$(awk '{ print $5 }' "$g_dir/derived.$kind" | median)
	printf "%-17s | %10.0f | %6.0f | %14.3f | %11.1f | %9.2fx | %s\n" "${LABEL[$kind]}" "$ev" \
		"${M_LOST[$kind]}" "${M_CPUM[$kind]}" "${M_BPE[$kind]}" "${M_RATIO[$kind]}" "${REF[$kind]}"
done
if [ "$g_have_tc" = 1 ]; then
	raw=$(awk '$1 == "tc" && $3 > 0 { print $8 / $3 }' "$g_dir/results" | median)
	printf "\ntrace-cmd writes zstd-compressed v7 files: %.1f bytes/event before compression.\n" "$raw"
fi
ev_rate=$(awk '$1 == "tbc" { print $3 }' "$g_dir/results" | median)
printf "storm event rate under tracebox+compact: %.2f M events/s (the issue assumed ~1.2 M/s).\n" \
	"$(awk -v e="$ev_rate" -v s="$g_seconds" 'BEGIN { print e / s / 1e6 }')"

echo
echo "CPU split near the end of each recorder's window (CPU-s so far, by process):"
for f in "$g_dir"/*.cpu_split; do
	[ -e "$f" ] || continue
	tag=$(basename "$f" .cpu_split)
	printf "  %-17s round %s:" "${LABEL[${tag%%.*}]}" "${tag#*.}"
	awk -v hz="$(getconf CLK_TCK)" '{ printf " %s %.2f", $2, $3 / hz }' "$f"
	echo
done

echo
verdict() { awk -v v="$1" -v t="$2" -v op="$3" 'BEGIN {
	if (v == "nan" || v == "") { print "MISSED (no figure)"; exit }
	ok = (op == "<=") ? (v + 0 <= t + 0) : (v + 0 >= t + 0)
	print ok ? "met" : "MISSED" }'; }
printf "target compact_sched CPU-s/M events <= %s: %-6s (%.3f)\n" "$TARGET_CPU_PER_M" \
	"$(verdict "${M_CPUM[tbc]}" "$TARGET_CPU_PER_M" "<=")" "${M_CPUM[tbc]}"
printf "target compact_sched bytes/event    <= %s:    %-6s (%.1f)\n" "$TARGET_BYTES_PER_EVENT" \
	"$(verdict "${M_BPE[tbc]}" "$TARGET_BYTES_PER_EVENT" "<=")" "${M_BPE[tbc]}"
printf "target compact_sched no loss:               %-6s (%s lost)\n" \
	"$(verdict "${M_LOST[tbc]}" 0 "<=")" "${M_LOST[tbc]}"
printf "target storm keeps >= %sx untraced:      %-6s (%.2fx)\n" "$TARGET_STORM_RATIO" \
	"$(verdict "${M_RATIO[tbc]}" "$TARGET_STORM_RATIO" ">=")" "${M_RATIO[tbc]}"

exit "$g_failed"

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# quiet_bench.sh - how much of a trace is the recorder itself.
#
# Records the light-mode trace of issue 15 item 4 with our tracebox
#
#   tracebox -t Ns -o T sched raw_syscalls/sys_enter raw_syscalls/sys_exit
#
# (tracebox starts its own traced and traced_probes and runs perfetto in
# itself), then reads the recorder's own footprint back from the trace with
# trace_processor_shell: per daemon (perfetto = the tracebox process,
# traced, traced_probes = its children), system calls per second (sys_enter
# events; "ev/s" counts sys_enter + sys_exit, the unit of the issue's
# upstream figure of 7,000 events in 2 s = 3,500/s), context switches per
# second (sched slices of its threads), and for traced_probes a split of its
# read()s: those that returned a ring-buffer page, those that failed
# (EAGAIN), other reads (timerfd, eventfd, /proc), its syscalls that are not
# read(), and "ev/page", the ftrace events of the whole trace per page read
# (a page holds 60-140 syscall events; a reader that stops once it has
# caught up with the writer keeps this high, one that keeps reading the page
# its own reads fill drives it towards 2).
#
# The workload is whatever the machine runs meanwhile (nothing is started):
# the page reads follow the machine's event rate, as upstream's do; the rest
# should not.
#
#   bench/quiet_bench.sh [--runs N] [--seconds "2 10"] [--keep] [--smoke]
#     --runs N         rounds per duration (default 1); medians are printed
#     --seconds LIST   trace durations in seconds (default "2 10")
#     --keep           keep the traces (printed directory)
#     --smoke          one 2 s trace; < 30 s; reports, never fails on load
#   O=out/asan bench/quiet_bench.sh   use another build directory
#
# Needs root and tracefs; otherwise it says why and exits 0 in --smoke mode.
# traced_probes puts the ftrace state back itself; the script ends the
# processes it started, by pid, if they are still there at exit.

set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
O=${O:-$ROOT/out}
TRACEFS=/sys/kernel/tracing
. "$ROOT/tools/tracefs_lock.sh"
tracefs_lock
# Issue 15 item 4: upstream's tracebox made about 7,000 syscall events
# (sys_enter + sys_exit) in the 2 s trace.
UPSTREAM_EV_PER_S=3500

g_runs=1
g_secs="2 10"
g_keep=0
g_smoke=0
g_dir=""
g_pids=""

die() {
	echo "quiet_bench: $*" >&2
	exit 1
}

skip() {
	echo "quiet_bench: SKIP: $*"
	exit 0
}

usage() {
	sed -n '/^#   bench\/quiet_bench.sh/,/^#   O=out/p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
}

while [ $# -gt 0 ]; do
	case "$1" in
	--runs) [ $# -ge 2 ] || usage; g_runs=$2; shift 2 ;;
	--seconds) [ $# -ge 2 ] || usage; g_secs=$2; shift 2 ;;
	--keep) g_keep=1; shift ;;
	--smoke) g_smoke=1; shift ;;
	-h | --help) usage ;;
	*) usage ;;
	esac
done
if [ "$g_smoke" = 1 ]; then
	g_runs=1
	g_secs=2
fi
case "$g_runs" in '' | *[!0-9]*) die "--runs wants a positive integer" ;; esac
[ "$g_runs" -ge 1 ] && [ "$g_runs" -le 20 ] || die "--runs must be 1..20"
for s in $g_secs; do
	case "$s" in '' | *[!0-9]*) die "--seconds wants whole numbers of seconds" ;; esac
	[ "$s" -ge 1 ] && [ "$s" -le 120 ] || die "--seconds must be 1..120"
done

TRACEBOX=$O/tracebox
TP=$O/trace_processor_shell

for b in "$TRACEBOX" "$TP"; do
	[ -x "$b" ] || die "$b is missing: run 'make -j2' first"
done
if [ "$(id -u)" != 0 ]; then
	[ "$g_smoke" = 1 ] && skip "needs root (ftrace)"
	die "needs root (ftrace)"
fi
if [ ! -e "$TRACEFS/tracing_on" ] && ! mount -t tracefs nodev "$TRACEFS" 2>/dev/null; then
	[ "$g_smoke" = 1 ] && skip "no tracefs at $TRACEFS"
	die "no tracefs at $TRACEFS"
fi
[ -e "$TRACEFS/events/raw_syscalls/sys_enter" ] || {
	[ "$g_smoke" = 1 ] && skip "the kernel has no raw_syscalls events"
	die "the kernel has no raw_syscalls events"
}

g_dir=$(mktemp -d /tmp/quiet_bench.XXXXXX) || die "mktemp failed"

# Another tracer reading trace_pipe_raw takes pages from ours (and may
# change the events): say so, the figures then mean little.
other=$(for fd in /proc/[0-9]*/fd/*; do
	case $(readlink "$fd" 2>/dev/null) in
	*/per_cpu/cpu*/trace_pipe_raw) p=${fd#/proc/}; echo "${p%%/*}" ;;
	esac
done | sort -u | head -n 3 | tr '\n' ' ')
[ -n "$other" ] && echo "quiet_bench: WARNING: pid $other also reads the ring buffers;" \
	"the figures are unreliable" >&2

# Ends what we started if it is still there: the tracebox by pid, and its
# daemons by the pids the trace named (children of that tracebox only).
cleanup() {
	local pid
	for pid in $g_pids; do
		kill -0 "$pid" 2>/dev/null || continue
		pkill -TERM -P "$pid" 2>/dev/null
		kill -TERM "$pid" 2>/dev/null
	done
	wait 2>/dev/null
	if [ "$g_keep" = 1 ]; then
		echo "traces kept in $g_dir"
	else
		rm -rf "$g_dir"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The footprint query for the tracebox of pid @1. One row per daemon:
# daemon|syscalls|sysevents|switches|page_reads|eagain|other_reads|nonread
# plus a row "ALL|secs|ftrace_events|page_size".
write_query() {
	cat >"$2" <<EOF
create table rec as
  select t.utid,
    case when p.pid = $1 then 'perfetto'
         when p.cmdline like '%traced_probes%' then 'traced_probes'
         when p.cmdline like '%traced%' then 'traced'
         else 'other' end as daemon
  from thread t join process p using(upid)
  left join process pp on p.parent_upid = pp.upid
  where p.pid = $1 or pp.pid = $1;
create table win as
  select min(ts) as t0, max(ts) as t1, count(*) as n from ftrace_event;
create table sc as
  select r.daemon, e.name, extract_arg(e.arg_set_id, 'id') as id,
    extract_arg(e.arg_set_id, 'ret') as ret
  from ftrace_event e join rec r using(utid)
  where e.name in ('sys_enter', 'sys_exit');
select 'ROW', d.daemon,
  (select count(*) from sc where sc.daemon = d.daemon and name = 'sys_enter'),
  (select count(*) from sc where sc.daemon = d.daemon),
  (select count(*) from sched s join rec r using(utid) where r.daemon = d.daemon),
  (select count(*) from sc where sc.daemon = d.daemon and name = 'sys_exit' and id = 0
     and ret = $PAGE),
  (select count(*) from sc where sc.daemon = d.daemon and name = 'sys_exit' and id = 0
     and ret < 0),
  (select count(*) from sc where sc.daemon = d.daemon and name = 'sys_exit' and id = 0
     and ret >= 0 and ret != $PAGE),
  (select count(*) from sc where sc.daemon = d.daemon and name = 'sys_enter' and id != 0)
from (select 'perfetto' as daemon union all select 'traced' union all
      select 'traced_probes') d;
select 'ALL', 'all', (t1 - t0) / 1e9,
  n + (select count(*) from sched where ts between t0 and t1), 0, 0, 0, 0, 0 from win;
EOF
}

PAGE=$(getconf PAGESIZE)

# One recording of @1 seconds, round @2; appends
# "secs daemon sys/s ev/s sw/s page/s eagain/s oread/s nonread/s ev/page"
# lines to $g_dir/results and prints them.
run_one() {
	local secs=$1 round=$2 f="$g_dir/t$1.$2" pid rc
	"$TRACEBOX" -t "${secs}s" -o "$f.pftrace" sched raw_syscalls/sys_enter \
		raw_syscalls/sys_exit >"$f.log" 2>&1 &
	pid=$!
	g_pids="$g_pids $pid"
	wait "$pid"
	rc=$?
	if [ "$rc" != 0 ] || [ ! -s "$f.pftrace" ]; then
		echo "quiet_bench: tracebox failed (exit $rc):" >&2
		sed 's/^/  /' "$f.log" >&2
		return 1
	fi
	write_query "$pid" "$f.sql"
	"$TP" -q "$f.sql" "$f.pftrace" >"$f.csv" 2>"$f.tp.log" || {
		echo "quiet_bench: trace_processor_shell failed:" >&2
		sed 's/^/  /' "$f.tp.log" >&2
		return 1
	}
	tr -d '"' <"$f.csv" | awk -F, -v secs="$secs" '
	$1 == "ALL" { dur = $3; events = $4 }
	$1 == "ROW" { n++; d[n] = $2; sys[n] = $3; ev[n] = $4; sw[n] = $5
		pg[n] = $6; ea[n] = $7; orr[n] = $8; nr[n] = $9 }
	END {
		if (dur <= 0) { print "quiet_bench: empty trace" > "/dev/stderr"; exit 1 }
		for (i = 1; i <= n; i++) {
			tsys += sys[i]; tev += ev[i]; tsw += sw[i]; tpg += pg[i]
			tea += ea[i]; tor += orr[i]; tnr += nr[i]
			printf "%s %s %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.1f\n", secs, d[i],
				sys[i] / dur, ev[i] / dur, sw[i] / dur, pg[i] / dur,
				ea[i] / dur, orr[i] / dur, nr[i] / dur,
				pg[i] ? events / pg[i] : 0
		}
		printf "%s %s %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.1f\n", secs, "recorder",
			tsys / dur, tev / dur, tsw / dur, tpg / dur, tea / dur, tor / dur,
			tnr / dur, tpg ? events / tpg : 0
		printf "%s %s %.0f 0 0 0 0 0 0 0\n", secs, "machine_ev/s", events / dur
	}' >"$f.res" || return 1
	cat "$f.res" >>"$g_dir/results"
}

# Median of column @3 over the rows of duration @1, daemon @2.
median() {
	awk -v s="$1" -v d="$2" -v c="$3" '$1 == s && $2 == d { v[n++] = $c }
	END {
		if (!n) { print "-"; exit }
		for (i = 0; i < n; i++) for (j = i + 1; j < n; j++)
			if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
		print (n % 2) ? v[int(n / 2)] : (v[n / 2 - 1] + v[n / 2]) / 2
	}' "$g_dir/results"
}

: >"$g_dir/results"
failed=0
for r in $(seq 1 "$g_runs"); do
	for s in $g_secs; do
		run_one "$s" "$r" || failed=1
	done
done

echo "quiet_bench: the recorder's own activity, from the trace (medians of $g_runs run(s))"
echo "  tracebox -t Ns sched raw_syscalls/sys_enter raw_syscalls/sys_exit; $(nproc) CPUs," \
	"load $(cut -d' ' -f1-3 /proc/loadavg)"
for s in $g_secs; do
	printf "\n%3s s trace %-14s %8s %8s %7s %7s %7s %7s %9s %7s\n" "$s" "" sys/s ev/s sw/s \
		page/s eagain/s oread/s nonread/s ev/page
	for d in perfetto traced traced_probes recorder; do
		printf "%-26s %8s %8s %7s %7s %7s %7s %9s %7s\n" "  $d" \
			"$(median "$s" "$d" 3)" "$(median "$s" "$d" 4)" "$(median "$s" "$d" 5)" \
			"$(median "$s" "$d" 6)" "$(median "$s" "$d" 7)" "$(median "$s" "$d" 8)" \
			"$(median "$s" "$d" 9)" "$(median "$s" "$d" 10)"
	done
	ev=$(median "$s" recorder 4)
	printf "  machine: %s ftrace events/s; recorder %s syscall ev/s vs upstream %s/s" \
		"$(median "$s" machine_ev/s 3)" "$ev" "$UPSTREAM_EV_PER_S"
	if [ "$ev" != - ]; then
		awk -v a="$ev" -v b="$UPSTREAM_EV_PER_S" 'BEGIN { printf " (%.2fx)", a / b }'
	fi
	echo
done
if [ "$failed" = 1 ]; then
	echo "quiet_bench: a recording failed (see above)" >&2
	exit 1
fi
exit 0

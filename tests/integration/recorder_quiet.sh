#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# recorder_quiet.sh - the recorder stays out of its own trace (issue 15
# item 4). `tracebox -t 60s sched raw_syscalls/sys_enter raw_syscalls/sys_exit`,
# stopped by SIGINT once a child that sleeps 350 times is done (however
# long a busy machine makes that), and the trace itself says what the
# tracebox processes (perfetto, and its children traced and traced_probes)
# did meanwhile (root and tracefs needed; skipped with the reason otherwise,
# or while another process reads the per-CPU ring buffers, as its reads
# would take pages from ours):
#   page_reads  traced_probes' read()s of ring-buffer pages per second stay
#               within what the machine's events fill (a page at least half
#               full holds 30 events or more) plus two reads per CPU and
#               tick; a reader that keeps reading the few records its own
#               read()s add (one per read, about 10,000 a second) fails;
#   fixed_rate  the three processes' syscall events (sys_enter + sys_exit)
#               per second, less those page reads, stay under 3,500/s,
#               upstream's figure for the same trace;
#   non_read    traced_probes' syscalls other than read() stay under
#               300/s plus 8 per thread the trace shows (forked meanwhile
#               or running already: each new pid is looked up in /proc,
#               open and close of status and cmdline; a busy machine's
#               running threads in a short trace weigh as much as its
#               forks): no polling, timer re-arming or per-page work
#               besides reads (the old code, 3-7 per fork, stays under
#               this bound too: the two checks above are the ones it fails);
#   complete    the sleeper's 350 sleeps are all there (entry and exit),
#               and the kernel overwrote nothing.
# Bounds have a wide margin over what a quiet recorder does on a busy
# 2-CPU machine (about 500 syscalls/s, startup included).
# Usage: OUT=out sh tests/integration/recorder_quiet.sh
. "$(dirname "$0")/lib.sh"

ROOT=$(repo_root)
OUT=${OUT:-$ROOT/out}
case $OUT in /*) ;; *) OUT=$ROOT/$OUT ;; esac

for b in tracebox trace_processor_shell sleeper; do
	if [ ! -x "$OUT/$b" ]; then
		skip recorder_quiet/all "$OUT/$b is missing (make all)"
		summary
		exit 0
	fi
done
require_tracefs recorder_quiet
if [ ! -e "$TFS/events/raw_syscalls/sys_enter" ]; then
	skip recorder_quiet/all "the kernel has no raw_syscalls events"
	summary
	exit 0
fi
# ppid PID: its parent's pid; nothing (and false) once it is gone.
ppid() {
	awk '{ sub(/.*\) /, ""); print $2 }' "/proc/$1/stat" 2>/dev/null
}
# in_tree PID ROOT: PID is ROOT or one of its descendants, at any depth
# (tracebox's daemons have children of their own: under LeakSanitizer the
# exit-time leak check runs in a task that shares the daemon's open files).
in_tree() {
	_p=$1
	while [ -n "$_p" ] && [ "$_p" -gt 1 ]; do
		[ "$_p" = "$2" ] && return 0
		_p=$(ppid "$_p")
	done
	return 1
}
# Another reader of trace_pipe_raw (another tracer) would take pages from
# ours, or change the events: the counts would mean nothing. Prints the pids
# (but @1's process tree, and processes gone by the time they are looked
# at) that have one open, each with its command line and parent, so a skip
# says who it was.
other_tracers() {
	for fd in /proc/[0-9]*/fd/*; do
		case $(readlink "$fd" 2>/dev/null) in
		*/per_cpu/cpu*/trace_pipe_raw) p=${fd#/proc/}; echo "${p%%/*}" ;;
		esac
	done | sort -u | while read -r p; do
		pp=$(ppid "$p") || continue
		[ -n "$pp" ] || continue
		[ -n "$1" ] && in_tree "$p" "$1" && continue
		echo "$p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-80)(parent $pp: $(tr '\0' ' ' <"/proc/$pp/cmdline" 2>/dev/null | cut -c1-60))"
	done | head -n 3 | tr '\n' ';'
}
other=$(other_tracers "")
if [ -n "$other" ]; then
	skip recorder_quiet/all "another tracer reads the ring buffers (pid $other)"
	summary
	exit 0
fi

TMP=$(mktemp -d /tmp/recorder_quiet.XXXXXX) || exit 1
TB_PID=""
cleanup() {
	if [ -n "$TB_PID" ] && kill -0 "$TB_PID" 2>/dev/null; then
		pkill -TERM -P "$TB_PID" 2>/dev/null
		kill -TERM "$TB_PID" 2>/dev/null
	fi
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

NCPU=$(getconf _NPROCESSORS_ONLN)
PAGE=$(getconf PAGESIZE)

"$OUT/tracebox" -t 60s -o "$TMP/t.pftrace" sched raw_syscalls/sys_enter \
	raw_syscalls/sys_exit >"$TMP/tb.log" 2>&1 &
TB_PID=$!
# The sleeper starts once the syscall events are on.
i=0
while [ $i -lt 100 ]; do
	[ "$(cat "$TFS/tracing_on")" = 1 ] &&
		[ "$(cat "$TFS/events/raw_syscalls/sys_exit/enable" 2>/dev/null)" = 1 ] && break
	sleep 0.05
	i=$((i + 1))
done
sleep 0.2
# Above the rest of a busy machine (root is needed anyway): its 350 wakeups
# come promptly, so the recording (all syscalls of every process) stays short.
nice -n -10 "$OUT/sleeper" 300 pfc_quiet 1000 >"$TMP/sleeper.pid" 2>"$TMP/sleeper.err"
SPID=$(head -n 1 "$TMP/sleeper.pid")
# The sleeper is done: end the recording (Ctrl-C), as a user would, then
# look for another reader (a slow walk of /proc on a busy machine).
kill -INT "$TB_PID" 2>/dev/null
other=$(other_tracers "$TB_PID")
wait "$TB_PID"
rc=$?
if [ -n "$other" ]; then
	skip recorder_quiet/all "another tracer started reading the ring buffers (pid $other)"
	summary
	exit 0
fi
if [ "$rc" != 0 ] || [ ! -s "$TMP/t.pftrace" ]; then
	fail recorder_quiet/record "tracebox exited $rc: $(tail -n 3 "$TMP/tb.log")"
	summary
	exit 1
fi

cat >"$TMP/q.sql" <<EOF
create table rec as
  select t.utid,
    case when p.pid = $TB_PID then 'perfetto'
         when p.cmdline like '%traced_probes%' then 'traced_probes'
         else 'traced' end as daemon
  from thread t join process p using(upid)
  left join process pp on p.parent_upid = pp.upid
  where p.pid = $TB_PID or pp.pid = $TB_PID;
create table win as select min(ts) as t0, max(ts) as t1 from ftrace_event;
create table sc as
  select r.daemon, e.name, extract_arg(e.arg_set_id, 'id') as id,
    extract_arg(e.arg_set_id, 'ret') as ret
  from ftrace_event e join rec r using(utid)
  where e.name in ('sys_enter', 'sys_exit');
create table sl as
  select e.name, extract_arg(e.arg_set_id, 'id') as id
  from ftrace_event e join thread t using(utid)
  where t.tid = ${SPID:-0} and e.name in ('sys_enter', 'sys_exit');
select 'R',
  (select (t1 - t0) / 1e9 from win),
  (select count(*) from ftrace_event) + (select count(*) from sched),
  (select count(*) from rec where daemon = 'traced_probes'),
  (select count(*) from sc),
  (select count(*) from sc where daemon = 'traced_probes' and name = 'sys_exit'
     and id = 0 and ret = $PAGE),
  (select count(*) from sc where daemon = 'traced_probes' and name = 'sys_enter'
     and id != 0),
  (select count(*) from sl where name = 'sys_enter' and id =
     (select id from sl group by id order by count(*) desc limit 1)),
  (select count(*) from sl where name = 'sys_exit' and id =
     (select id from sl group by id order by count(*) desc limit 1)),
  (select ifnull(sum(value), 0) from stats where name = 'ftrace_cpu_overrun_delta'),
  (select count(*) from ftrace_event where name = 'sched_process_fork'),
  (select count(distinct tid) from thread where tid > 0);
select 'B', id, count(*) from sc
  where daemon = 'traced_probes' and name = 'sys_enter' and id != 0
  group by id order by count(*) desc limit 8;
EOF
if ! "$OUT/trace_processor_shell" -q "$TMP/q.sql" "$TMP/t.pftrace" >"$TMP/q.csv" 2>"$TMP/q.err"; then
	fail recorder_quiet/query "trace_processor_shell: $(tail -n 3 "$TMP/q.err")"
	summary
	exit 1
fi
# R,secs,events,probes_threads,sysev,page_reads,probes_nonread,sl_enter,sl_exit,overrun,forks,tids
set -- $(tr -d '"' <"$TMP/q.csv" | awk -F, '$1 == "R" { $1 = ""; print }')
if [ $# -ne 11 ] || [ "$3" = 0 ]; then
	fail recorder_quiet/query "no traced_probes in the trace: $(cat "$TMP/q.csv")"
	summary
	exit 1
fi
# The syscalls other than read() by number, most made first (x86-64
# numbers: 7 poll, 232 epoll_wait, 202 futex, 1 write, 46 sendmsg...).
BREAKDOWN=$(tr -d '"' <"$TMP/q.csv" | awk -F, '$1 == "B" { printf "%s%s x%s", sep, $2, $3; sep = ", " }')
SECS=$1 EVENTS=$2 SYSEV=$4 PAGES=$5 NONREAD=$6 SL_IN=$7 SL_OUT=$8 OVERRUN=$9 FORKS=${10} TIDS=${11}

awk -v s="$SECS" -v ev="$EVENTS" -v sysev="$SYSEV" -v pg="$PAGES" -v nr="$NONREAD" \
	-v forks="$FORKS" -v tids="$TIDS" 'BEGIN { printf "# per second: %.0f ftrace events, %.0f forks, %.0f threads seen; recorder %.0f " \
	"syscall events; traced_probes %.0f page reads, %.0f other syscalls than read()\n",
	ev / s, forks / s, tids / s, sysev / s, pg / s, nr / s }'
echo "# traced_probes' syscalls other than read() by number: $BREAKDOWN"


# awk does the arithmetic: "ok" or the figures that broke the bound.
verdict() { # EXPR-true-is-ok MESSAGE
	awk -v s="$SECS" -v ev="$EVENTS" -v sysev="$SYSEV" -v pg="$PAGES" \
		-v nr="$NONREAD" -v ncpu="$NCPU" -v forks="$FORKS" -v tids="$TIDS" "BEGIN { $1 }"
}

verdict 'allow = ev / s / 30 + 20 * ncpu + 50
	if (pg / s <= allow) print "ok"
	else printf "%.0f page reads/s > %.0f (%.0f events/s in the trace; %.1f events/page)\n",
		pg / s, allow, ev / s, pg ? ev / pg : 0' >"$TMP/v"
[ "$(cat "$TMP/v")" = ok ] && pass recorder_quiet/page_reads || fail recorder_quiet/page_reads "$(cat "$TMP/v")"

verdict 'allow = ev / 30 + (20 * ncpu + 50) * s
	data = pg < allow ? pg : allow
	fixed = (sysev - 2 * data) / s
	if (fixed <= 3500) print "ok"
	else printf "%.0f syscall events/s besides %.0f page reads/s > 3500/s\n", fixed, data / s' >"$TMP/v"
[ "$(cat "$TMP/v")" = ok ] && pass recorder_quiet/fixed_rate || fail recorder_quiet/fixed_rate "$(cat "$TMP/v")"

verdict 'allow = 300 + 8 * tids / s
	if (nr / s <= allow) print "ok"
	else printf "traced_probes made %.0f syscalls/s other than read() > %.0f (%.0f threads seen/s, %.0f forks/s)\n",
		nr / s, allow, tids / s, forks / s' >"$TMP/v"
[ "$(cat "$TMP/v")" = ok ] && pass recorder_quiet/non_read || fail recorder_quiet/non_read "$(cat "$TMP/v")"

if [ "${SL_IN:-0}" -ge 350 ] && [ "${SL_OUT:-0}" -ge 350 ] && [ "${OVERRUN:-1}" = 0 ]; then
	pass recorder_quiet/complete
else
	fail recorder_quiet/complete "sleeper pid ${SPID:-?}: $SL_IN entries, $SL_OUT exits of its" \
		"sleep (350 expected); kernel overrun $OVERRUN"
fi
summary

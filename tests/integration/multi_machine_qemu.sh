#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# multi_machine_qemu.sh - two real kernels: a Debian guest kernel under QEMU
# (software emulation) runs traced_relay and traced_probes against traced
# and traced_probes on this machine, following Perfetto's multi-machine
# guide. One trace must have two machine rows with different kernel
# releases, sched events from both kernels, and the guest's events on the
# host's timeline (inside the span of the host's own events). A rotating
# recording (--rotate-seconds 1) must have all of that in every file.
# With UPSTREAM_TRACEBOX set (a Perfetto tracebox) it also runs Perfetto's
# traced_relay and traced_probes in the guest against ours on the host, and
# ours in the guest against Perfetto's traced and traced_probes on the
# host; UPSTREAM_TP (Perfetto's trace_processor_shell) checks each trace too.
# It boots the guest with ../shared/tools/two-kernel.sh (or $TWO_KERNEL);
# without it, QEMU, a guest kernel or root it skips, saying why. `make
# e2e-multi-machine` installs QEMU and the kernel first.
# Usage: OUT=out [UPSTREAM_TRACEBOX=...] [UPSTREAM_TP=...]
#        sh tests/integration/multi_machine_qemu.sh (root)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"

svc_require_bins traced traced_probes traced_relay perfetto trace_processor_shell

TK=${TWO_KERNEL:-$ROOT/../shared/tools/two-kernel.sh}
case $OUT in
*asan* | *tsan*)
	# A sanitized guest under software emulation takes minutes; the plain
	# build covers the two-kernel path.
	skip qemu/all "runs in the plain build only (this is $(basename "$OUT"))"
	summary
	exit 0
	;;
esac
if [ -n "$PFC_QEMU_LATER" ]; then
	# .ci/run runs this suite in its own step (make e2e-multi-machine).
	skip qemu/all "runs later in this CI run's two-kernel step"
	summary
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	skip qemu/all "needs root (guest network, tracefs)"
	summary
	exit 0
fi
if [ ! -f "$TK" ]; then
	skip qemu/all "two-kernel.sh not found (set TWO_KERNEL; ../shared is absent)"
	summary
	exit 0
fi
if ! command -v qemu-system-x86_64 >/dev/null 2>&1 || ! ls /boot/vmlinuz-* >/dev/null 2>&1; then
	skip qemu/all "QEMU or a guest kernel is missing (make e2e-multi-machine installs them)"
	summary
	exit 0
fi
require_tracefs qemu

# Instance 40 of two-kernel.sh: host 10.250.40.1, guest 10.250.40.2.
TK_ID=${TK_ID:-40}
HOST_IP=10.250.$TK_ID.1
PORT=20401
export PERFETTO_PRODUCER_SOCK_NAME="$HOST_IP:$PORT,$SVC_TMP/host.p.sock"
export PERFETTO_CONSUMER_SOCK_NAME="$SVC_TMP/host.c.sock"

tk_cleanup() {
	bash "$TK" --stop "$TK_ID" >/dev/null 2>&1
	bash "$TK" --net-down "$TK_ID" >/dev/null 2>&1
}
trap 'svc_cleanup; tk_cleanup' EXIT

if ! bash "$TK" --net-up "$TK_ID" >"$SVC_TMP/netup.log" 2>&1; then
	fail qemu/network "$(tail -n 3 "$SVC_TMP/netup.log" | tr '\n' ' ')"
	summary
	exit 1
fi
svc_cfg mm 'buffers { size_kb: 32768 }
duration_ms: 4000
trace_all_machines: true
data_sources { config { name: "linux.ftrace" ftrace_config { ftrace_events: "sched/sched_switch" ftrace_events: "sched/sched_waking" } } }
data_sources { config { name: "linux.system_info" } }'

# check CASE LABEL TP: the trace of CASE, read by TP.
check() {
	local _c _l _tp _t _per _span
	_c=$1
	_l=$2
	_tp=$3
	_t=$SVC_TMP/$_c.pb
	sql() {
		"$_tp" -Q "$1" "$_t" 2>"$SVC_TMP/tp.err" | tail -n +2
	}
	echo "# $_c, $_l: machines:"
	sql "select id, raw_id, sysname, release, arch, num_cpus from machine" | sed 's/^/#   /'
	[ "$(sql 'select count(*) from machine')" = 2 ] && pass "qemu/$_c/$_l/two_machine_rows" ||
		fail "qemu/$_c/$_l/two_machine_rows" "$(sql 'select id, raw_id from machine' | tr '\n' ' ')"
	[ "$(sql 'select count(distinct release) from machine')" = 2 ] &&
		pass "qemu/$_c/$_l/different_kernels" ||
		fail "qemu/$_c/$_l/different_kernels" "$(sql 'select release from machine' | tr '\n' ' ')"
	_per=$(sql "select cpu.machine_id, count(*) from ftrace_event join cpu using (ucpu) group by cpu.machine_id order by 1")
	echo "# ftrace_event per machine: $(echo "$_per" | tr '\n' ' ')"
	echo "$_per" >"$SVC_TMP/$_c.$_l.per"
	# On failure, the guest's own logs say whether its relay or probes gave up.
	[ "$(echo "$_per" | awk -F, '$2 > 0' | wc -l)" = 2 ] && pass "qemu/$_c/$_l/events_from_both_kernels" ||
		fail "qemu/$_c/$_l/events_from_both_kernels" "$_per; guest: $(cat "$SVC_TMP/$_c.guest/relay.log" "$SVC_TMP/$_c.guest/probes.log" 2>/dev/null | tail -n 6 | tr '\n' ' ')"
	# The guest's sched events on the host's timeline: inside the host's span.
	_span=$(sql "select (select min(ts) from sched join cpu using (ucpu) where cpu.machine_id = 0),
		(select max(ts) from sched join cpu using (ucpu) where cpu.machine_id = 0),
		(select min(ts) from sched join cpu using (ucpu) where cpu.machine_id = 1),
		(select max(ts) from sched join cpu using (ucpu) where cpu.machine_id = 1)")
	echo "# sched span host min,max / guest min,max: $_span"
	echo "$_span" | awk -F, '{ exit !($3 != "" && $3 >= $1 - 1e9 && $4 <= $2 + 1e9 && $3 < $4) }' &&
		pass "qemu/$_c/$_l/guest_on_host_time" || fail "qemu/$_c/$_l/guest_on_host_time" "$_span"
}

# rotate_case: with the guest up, --rotate-seconds 1 over both machines.
# Every file must stand alone for the guest too: its machine row with its
# kernel, its sched events on the host's timeline (the relay's clock sync
# must be in each file, or they would sit at guest time) and its processes.
# No file starts after the planned end: a slow guest's final flush (up to
# the flush timeout) once made tail files with no guest events in CI.
svc_cfg rot 'buffers { size_kb: 16384 fill_policy: RING_BUFFER }
duration_ms: 4500
trace_all_machines: true
data_sources { config { name: "linux.ftrace" ftrace_config { ftrace_events: "sched/sched_switch" ftrace_events: "sched/sched_waking" } } }
data_sources { config { name: "linux.process_stats" process_stats_config { scan_all_processes_on_start: true } } }
data_sources { config { name: "linux.system_info" } }'
rotate_case() {
	local _f _v _ok _why _n _t0 _ms _gs _gp
	mkdir -p "$SVC_TMP/rot"
	_t0=$(svc_now_ms)
	if ! svc_perfetto rot 60 --txt -c "$SVC_TMP/rot.pbtxt" -o "$SVC_TMP/rot/t.pf" --rotate-seconds 1; then
		fail qemu/rotate/record "$(svc_errtail rot)"
		return
	fi
	_ok=1
	_why=
	_n=0
	_gs=0
	_gp=0
	_hmin=
	_hmax=
	_gmin=
	_gmax=
	for _f in "$SVC_TMP"/rot/t.pf.*; do
		_n=$((_n + 1))
		_v=$("$OUT/trace_processor_shell" -Q "select
			(select count(*) from machine) || ' ' ||
			(select count(*) from machine where id = 1 and release is not null) || ' ' ||
			(select count(*) from sched join cpu using (ucpu) where cpu.machine_id = 1) || ' ' ||
			(select count(*) from process where machine_id = 1 and name is not null) || ' ' ||
			(select count(*) from sched join cpu using (ucpu) where cpu.machine_id = 0) || ' ' ||
			(select coalesce(min(ts), -1) || ' ' || coalesce(max(ts), -1) from sched join cpu using (ucpu) where cpu.machine_id = 1) || ' ' ||
			(select coalesce(min(ts), -1) || ' ' || coalesce(max(ts), -1) from sched join cpu using (ucpu) where cpu.machine_id = 0) as v" "$_f" 2>>"$SVC_TMP/tp.err" |
			tail -n 1 | tr -d '"')
		set -- $_v
		# Every file names both machines. The guest's events reach a file
		# only when its emulated CPU answered the flush before that file
		# closed (a matter of speed on a loaded host), so a file may hold
		# guest events of an earlier second or none: they are counted over
		# all the files, and must all lie on the host's timeline of the
		# session (a wrong clock translation puts them off by the guest's
		# boot time difference, far outside it).
		if [ $# = 9 ]; then
			_gs=$((_gs + $3))
			_gp=$((_gp + $4))
			if [ "$6" != -1 ]; then
				[ -z "$_gmin" ] || [ "$6" -lt "$_gmin" ] && _gmin=$6
				[ -z "$_gmax" ] || [ "$7" -gt "$_gmax" ] && _gmax=$7
			fi
			if [ "$8" != -1 ]; then
				[ -z "$_hmin" ] || [ "$8" -lt "$_hmin" ] && _hmin=$8
				[ -z "$_hmax" ] || [ "$9" -gt "$_hmax" ] && _hmax=$9
			fi
		fi
		if [ $# != 9 ] || [ "$1" != 2 ] || [ "$2" != 1 ]; then
			_ok=0
			_why="$_why $(basename "$_f"): machines guest_release guest_sched guest_processes host_sched guest_ts host_ts = '$_v';"
		fi
	done
	if [ -n "$_gmin" ] && { [ -z "$_hmin" ] || [ "$_gmin" -lt $((_hmin - 1000000000)) ] ||
		[ "$_gmax" -gt $((_hmax + 1000000000)) ]; }; then
		_ok=0
		_why="$_why the guest's sched slices ($_gmin..$_gmax) are off the host's ($_hmin..$_hmax) by more than 1 s;"
	fi
	_ms=$(($(svc_now_ms) - _t0))
	echo "# rotate: $_n files in $_ms ms"
	# duration_ms 4500 at 1 s a file: OUT.0 .. OUT.4 however long the stop
	# takes (OUT.3 when the drains around 4 s were all late).
	echo "# rotate: guest sched slices $_gs, guest processes $_gp over the files"
	[ "$_gs" -ge 1 ] && [ "$_gp" -ge 1 ] || { _ok=0; _why="$_why no guest sched ($_gs) or processes ($_gp) in any file;"; }
	if [ $_ok = 1 ] && [ $_n -ge 4 ] && [ $_n -le 5 ]; then
		pass qemu/rotate/every_file_has_the_guest
	else
		fail qemu/rotate/every_file_has_the_guest "$_n files in $_ms ms;$_why traced: $(grep ' W ' "$SVC_TMP/ours.traced.err" | tail -n 3 | tr '\n' ' ') guest: $(cat "$SVC_TMP/ours.guest/relay.log" "$SVC_TMP/ours.guest/probes.log" 2>/dev/null | tail -n 6 | tr '\n' ' ')"
	fi
}

# run_case CASE HOST_TOOL GUEST_TOOL: HOST_TOOL runs traced and traced_probes
# here, GUEST_TOOL traced_relay and traced_probes in the guest (each a
# command taking the applet name: a tracebox, or "$OUT/" + name).
run_case() {
	local _c _gd _pid
	_c=$1
	_gd=$SVC_TMP/$_c.guest
	mkdir -p "$_gd"
	svc_bg "$_c.traced" env TRACED_NOTIFY_FD=9 $2traced --enable-relay-endpoint
	svc_wait_for 10 _svc_ready_or_exited "$_c.traced" && svc_running "$_c.traced" ||
		fail "qemu/$_c/host_traced" "$(svc_errtail "$_c.traced")"
	svc_bg "$_c.probes" env PERFETTO_PRODUCER_SOCK_NAME="$SVC_TMP/host.p.sock" \
		TRACED_PROBES_NOTIFY_FD=9 $2traced_probes --reset-ftrace
	svc_wait_for 10 _svc_ready_or_exited "$_c.probes" && svc_running "$_c.probes" ||
		fail "qemu/$_c/host_probes" "$(svc_errtail "$_c.probes")"
	# In the guest: the relay on the default producer socket, then the
	# probes; the command keeps the guest up until the host is done.
	_pid=$(bash "$TK" --bg --keep --quiet --id "$TK_ID" --share "$ROOT" --share "$SVC_TMP" \
		$GUEST_SHARES --timeout 300 --cmd "cd '$_gd' || exit 1
PERFETTO_RELAY_SOCK_NAME=\$TK_HOST_IP:$PORT PERFETTO_MACHINE_NAME=qemu-guest ${3}traced_relay >relay.log 2>&1 &
sleep 0.5;
${3}traced_probes --reset-ftrace >probes.log 2>&1 &
(while :; do ls / >/dev/null; sleep 0.01; done) &
while [ ! -e '$_gd/stop' ]; do sleep 0.2; done" 2>"$SVC_TMP/tk.err")
	if [ -z "$_pid" ]; then
		fail "qemu/$_c/guest_boot" "$(tail -n 5 "$SVC_TMP/tk.err" | tr '\n' ' ')"
		return
	fi
	pass "qemu/$_c/guest_boot"
	# The guest's probes registered through the relay (MACHINE column).
	_guest_up() {
		"$OUT/perfetto" --query 2>/dev/null | grep -q -E '(qemu-guest|0x[0-9a-f]+) .*perfetto.traced_probes'
	}
	if svc_wait_for 60 _guest_up; then
		pass "qemu/$_c/guest_probes_through_relay"
	else
		fail "qemu/$_c/guest_probes_through_relay" "$(cat "$_gd/relay.log" "$_gd/probes.log" 2>/dev/null | tail -n 6 | tr '\n' ' ')"
	fi
	svc_perfetto "$_c" 60 --txt -c "$SVC_TMP/mm.pbtxt" -o "$SVC_TMP/$_c.pb" ||
		fail "qemu/$_c/record" "$(svc_errtail "$_c")"
	[ "$_c" = ours ] && rotate_case
	touch "$_gd/stop"
	check "$_c" our_tp "$OUT/trace_processor_shell"
	if [ -n "$UPSTREAM_TP" ]; then
		check "$_c" upstream_tp "$UPSTREAM_TP"
		# Both trace processors count the same events per machine.
		cmp -s "$SVC_TMP/$_c.our_tp.per" "$SVC_TMP/$_c.upstream_tp.per" &&
			pass "qemu/$_c/same_counts_as_upstream_tp" ||
			{ cp "$SVC_TMP/$_c.pb" "$OUT/qemu_$_c.mismatch.pb" 2>/dev/null
			fail "qemu/$_c/same_counts_as_upstream_tp" \
				"ours $(tr '\n' ' ' <"$SVC_TMP/$_c.our_tp.per"), upstream $(tr '\n' ' ' <"$SVC_TMP/$_c.upstream_tp.per") (trace kept in $OUT/qemu_$_c.mismatch.pb)"; }
	fi
	svc_wait_for 20 sh -c "! kill -0 $_pid 2>/dev/null" || bash "$TK" --stop "$TK_ID" >/dev/null 2>&1
	svc_kill "$_c.probes"
	svc_stop_traced "$_c.traced"
}

GUEST_SHARES=""
run_case ours "$OUT/" "$OUT/"
if [ -n "$UPSTREAM_TRACEBOX" ]; then
	GUEST_SHARES="--share $(dirname "$UPSTREAM_TRACEBOX")"
	run_case upstream_guest "$OUT/" "$UPSTREAM_TRACEBOX "
	run_case upstream_host "$UPSTREAM_TRACEBOX " "$OUT/"
else
	skip qemu/interop "UPSTREAM_TRACEBOX is not set (a Perfetto tracebox to test against)"
fi
summary

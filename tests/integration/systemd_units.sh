#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# systemd_units.sh - the services `make install` sets up:
#   install    make install DESTDIR=...: the units (init/systemd) with the
#              install's paths, /etc/perfetto-c files (an edited one is
#              kept on reinstall), a man page per installed program that
#              `man` renders
#   verify     systemd-analyze verify finds nothing to say about the units
#   traced     its unit's commands run as systemd runs them (EnvironmentFile,
#              $TRACED_ARGS, Type=notify): READY=1 arrives, a relay
#              endpoint from traced.env serves, SIGTERM stops it with 0
#   relay      traced-relay.service likewise, against that endpoint
#   recorder   perfetto-recorder.service records the installed config
#              into rotating files that import with scheduling data
#   probes     traced-probes.service: ExecStartPre and ExecStart; a session
#              records; SIGTERM mid-session exits 0 and puts ftrace back
#              (tracing_on, the event's enable) as it was
#   perf       traced-perf.service registers linux.perf and stops with 0
#   systemd    under a real systemd (PID 1): start, is-active, stop; here
#              skipped with the reason when systemd is not PID 1
# Usage: OUT=out sh tests/integration/systemd_units.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"

svc_require_bins traced traced_probes traced_relay traced_perf perfetto trace_processor_shell test_producer
T=systemd_units
inst=$SVC_TMP/root
etc=$SVC_TMP/etc

# -- install -----------------------------------------------------------------
# make with the flags $OUT was built with (its .flags: the compiler first,
# O as the build spelled it in -I<O>/gen, -fsanitize for `make asan`), so
# the install rebuilds nothing and leaves the build's flags as they were.
mk_install() {
	local _cc _san _o
	_cc=$(cut -d' ' -f1 "$OUT/.flags")
	_o=$(sed -n 's|.* -I\([^ ]*\)/gen .*|\1|p' "$OUT/.flags")
	_san=""
	grep -q -- -fsanitize "$OUT/.flags" && _san="SANITIZE=1 OPT=-O1"
	# shellcheck disable=SC2086 # _san is a list of words
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$ROOT" O="${_o:-$OUT}" CC="$_cc" $_san install \
		DESTDIR="$inst" PREFIX=/usr/local
}
if ! mk_install >"$SVC_TMP/install.log" 2>&1; then
	fail $T/install "make install failed: $(tail -n 3 "$SVC_TMP/install.log" | tr '\n' ' ')"
	summary
	exit 1
fi
units=$inst/usr/local/lib/systemd/system
n_units=$(ls "$units"/*.service 2>/dev/null | wc -l)
if [ "$n_units" -ge 3 ] && ! grep -l '@[A-Z]*@' "$units"/*.service >/dev/null &&
	grep -q '^ExecStart=/usr/local/bin/traced ' "$units/traced.service" &&
	grep -q '^EnvironmentFile=/etc/perfetto-c/traced-relay.env' "$units/traced-relay.service"; then
	pass $T/install_units
else
	fail $T/install_units "$n_units units; $(grep -h '@[A-Z]*@\|^ExecStart' "$units"/*.service | head -n 3 | tr '\n' ' ')"
fi
missing=""
for b in "$inst"/usr/local/bin/*; do
	n=$(basename "$b")
	[ -f "$inst/usr/local/share/man/man1/$n.1" ] || [ -f "$inst/usr/local/share/man/man8/$n.8" ] ||
		missing="$missing $n"
done
if [ -z "$missing" ]; then pass $T/man_every_program; else fail $T/man_every_program "no page for:$missing"; fi
if MANPATH="$inst/usr/local/share/man" MANWIDTH=200 man -P cat traced 2>/dev/null |
	grep -q 'traced - the tracing service'; then
	pass $T/man_traced
else
	fail $T/man_traced "'man traced' does not render the page"
fi
echo 'TRACED_ARGS="--edited"' >"$inst/etc/perfetto-c/traced.env"
mk_install >/dev/null 2>&1
if grep -q -- '--edited' "$inst/etc/perfetto-c/traced.env"; then pass $T/etc_kept; else fail $T/etc_kept "reinstall overwrote /etc/perfetto-c/traced.env"; fi

# The units as they would be installed over this build.
mkdir -p "$etc/perfetto-c" "$SVC_TMP/units"
for u in "$ROOT"/init/systemd/*.service; do
	sed -e "s|@BINDIR@|$OUT|g" -e "s|@SYSCONFDIR@|$etc|g" "$u" >"$SVC_TMP/units/$(basename "$u")"
done

# -- verify ------------------------------------------------------------------
if command -v systemd-analyze >/dev/null 2>&1; then
	: >"$etc/perfetto-c/traced-relay.env"
	if MANPATH="$inst/usr/local/share/man" systemd-analyze verify "$SVC_TMP"/units/*.service >"$SVC_TMP/verify.log" 2>&1 &&
		[ ! -s "$SVC_TMP/verify.log" ]; then
		pass $T/verify
	else
		fail $T/verify "$(head -n 3 "$SVC_TMP/verify.log" | tr '\n' ' ')"
	fi
else
	skip $T/verify "systemd-analyze is not installed"
fi

# unit_start NAME UNIT VAR=VALUE...: run UNIT's commands in the background
# as NAME (tests/integration/unit_exec.py); waits until it says ready.
unit_start() {
	local _n _u
	_n=$1
	_u=$2
	shift 2
	mkdir -p "$SVC_TMP/$_n.d"
	svc_bg "$_n" python3 "$ROOT/tests/integration/unit_exec.py" "$SVC_TMP/units/$_u" "$SVC_TMP/$_n.d" "$@"
	svc_wait_for 25 test -s "$SVC_TMP/$_n.d/ready"
}
unit_ready() {
	cat "$SVC_TMP/$1.d/ready" 2>/dev/null
}
# unit_stop NAME: SIGTERM to the service's main process; prints its exit
# status (or "timeout" after 10 s).
unit_stop() {
	kill -TERM "$(cat "$SVC_TMP/$1.d/pid")" 2>/dev/null
	if svc_wait_for 10 test -s "$SVC_TMP/$1.d/rc"; then cat "$SVC_TMP/$1.d/rc"; else echo timeout; fi
}

# -- traced ------------------------------------------------------------------
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
P=$SVC_TMP/p.sock
C=$SVC_TMP/c.sock
printf 'TRACED_ARGS="--enable-relay-endpoint-on 127.0.0.1:%s"\nPERFETTO_PRODUCER_SOCK_NAME=%s,127.0.0.1:%s\n' \
	"$PORT" "$P" "$PORT" >"$etc/perfetto-c/traced.env"
unit_start traced traced.service PERFETTO_CONSUMER_SOCK_NAME="$C"
r=$(unit_ready traced)
if [ "$r" = notify ] && [ -S "$P" ] && [ -S "$C" ]; then pass $T/traced_ready; else fail $T/traced_ready "ready: '$r'; $(svc_errtail traced)"; fi
export PERFETTO_PRODUCER_SOCK_NAME=$P PERFETTO_CONSUMER_SOCK_NAME=$C

# -- relay -------------------------------------------------------------------
printf 'PERFETTO_RELAY_SOCK_NAME=127.0.0.1:%s\nPERFETTO_PRODUCER_SOCK_NAME=%s\nPERFETTO_MACHINE_NAME=unit-guest\n' \
	"$PORT" "$SVC_TMP/relay.sock" >"$etc/perfetto-c/traced-relay.env"
unit_start relay traced-relay.service
r=$(unit_ready relay)
if [ "$r" = notify ] && [ -S "$SVC_TMP/relay.sock" ]; then pass $T/relay_ready; else fail $T/relay_ready "ready: '$r'; $(svc_errtail relay)"; fi
# The relay reached traced's endpoint from traced.env: a producer on the
# relay's socket shows in traced under the relay's machine name.
svc_start_producer guest_producer --sock "$SVC_TMP/relay.sock" --ds guest.ds >/dev/null
if svc_wait_for 10 sh -c '"$0/perfetto" --query 2>/dev/null | grep -q "unit-guest"' "$OUT"; then
	pass $T/relay_connected
else
	fail $T/relay_connected "perfetto --query does not show the relay's machine"
fi
svc_kill guest_producer
rc=$(unit_stop relay)
if [ "$rc" = 0 ]; then pass $T/relay_stop; else fail $T/relay_stop "exit $rc"; fi

# -- probes ------------------------------------------------------------------
TFS=/sys/kernel/tracing
tracefs_lock
tracefs_lock
[ -e "$TFS/trace_clock" ] || mount -t tracefs nodev "$TFS" 2>/dev/null
unit_start probes traced-probes.service
r=$(unit_ready probes)
if [ "$r" = started ]; then pass $T/probes_started; else fail $T/probes_started "ready: '$r'; $(svc_errtail probes)"; fi
if [ "$(id -u)" != 0 ] || [ ! -e "$TFS/trace_clock" ]; then
	skip $T/recorder "needs root and tracefs at $TFS"
	skip $T/probes_stop_restores_ftrace "needs root and tracefs at $TFS"
else
	# perfetto-recorder.service with the installed recorder.pbtxt, into
	# 1 s files (recorder.env), stopped after 3.5 s: the files are whole
	# traces with scheduling data, the newest 2 kept.
	cp "$ROOT/init/etc/recorder.pbtxt" "$etc/perfetto-c/recorder.pbtxt"
	printf 'RECORDER_DIR=%s\nRECORDER_ARGS="--rotate-seconds 1 --keep 2"\n' "$SVC_TMP/rec-files" \
		>"$etc/perfetto-c/recorder.env"
	svc_wait_for 10 sh -c '"$0/perfetto" --query 2>/dev/null | grep -q linux.ftrace' "$OUT"
	unit_start recorder perfetto-recorder.service
	sleep 3.5
	rc=$(unit_stop recorder)
	n=0
	good=0
	for f in "$SVC_TMP"/rec-files/trace.*; do
		[ -e "$f" ] || continue
		n=$((n + 1))
		s=$("$OUT/trace_processor_shell" -Q "SELECT COUNT(*) FROM sched" "$f" 2>/dev/null | tail -n 1)
		[ "${s:-0}" -gt 0 ] && good=$((good + 1))
	done
	if [ "$rc" = 0 ] && [ "$n" = 2 ] && [ "$good" = 2 ]; then
		pass $T/recorder
	else
		fail $T/recorder "exit $rc, $n files, $good with sched slices: $(svc_errtail recorder)"
	fi

	on0=$(cat "$TFS/tracing_on")
	en0=$(cat "$TFS/events/sched/sched_switch/enable")
	svc_wait_for 10 sh -c '"$0/perfetto" --query 2>/dev/null | grep -q linux.ftrace' "$OUT"
	svc_bg rec "$OUT/perfetto" -t 30s -o "$SVC_TMP/rec.pftrace" sched/sched_switch
	if svc_wait_for 10 grep -q 1 "$TFS/events/sched/sched_switch/enable"; then
		sleep 0.5
		rc=$(unit_stop probes)
		en1=$(cat "$TFS/events/sched/sched_switch/enable")
		on1=$(cat "$TFS/tracing_on")
		if [ "$rc" = 0 ] && [ "$en1" = "$en0" ] && [ "$on1" = "$on0" ]; then
			pass $T/probes_stop_restores_ftrace
		else
			fail $T/probes_stop_restores_ftrace "exit $rc; sched_switch enable $en0 -> $en1, tracing_on $on0 -> $on1"
		fi
	else
		fail $T/probes_stop_restores_ftrace "the session never enabled sched_switch: $(svc_errtail rec) $(svc_errtail probes)"
	fi
	svc_kill rec
fi

# -- traced_perf ---------------------------------------------------------------
unit_start perfd traced-perf.service
r=$(unit_ready perfd)
if [ "$r" = started ] && svc_wait_for 10 sh -c '"$0/perfetto" --query 2>/dev/null | grep -q linux.perf' "$OUT"; then
	pass $T/perf_registered
else
	fail $T/perf_registered "ready: '$r'; linux.perf not registered: $(svc_errtail perfd)"
fi
rc=$(unit_stop perfd)
if [ "$rc" = 0 ]; then pass $T/perf_stop; else fail $T/perf_stop "exit $rc"; fi

rc=$(unit_stop traced)
if [ "$rc" = 0 ]; then pass $T/traced_stop; else fail $T/traced_stop "exit $rc"; fi

# -- real systemd --------------------------------------------------------------
if [ -d /run/systemd/system ] && [ "$(id -u)" = 0 ]; then
	# Under systemd as PID 1: the units, linked from this build, start and stop.
	cp "$SVC_TMP/units/traced.service" "$SVC_TMP/pfc-test-traced.service"
	sed -i 's|^RuntimeDirectory=.*|RuntimeDirectory=pfc-test-traced|; s|^EnvironmentFile=.*||' "$SVC_TMP/pfc-test-traced.service"
	sed -i "/^\[Service\]/a Environment=PERFETTO_PRODUCER_SOCK_NAME=/run/pfc-test-traced/p.sock PERFETTO_CONSUMER_SOCK_NAME=/run/pfc-test-traced/c.sock" \
		"$SVC_TMP/pfc-test-traced.service"
	systemctl link "$SVC_TMP/pfc-test-traced.service" >/dev/null 2>&1
	if systemctl start pfc-test-traced.service && systemctl is-active -q pfc-test-traced.service &&
		systemctl stop pfc-test-traced.service; then
		pass $T/systemd
	else
		fail $T/systemd "$(systemctl status pfc-test-traced.service 2>&1 | tail -n 3 | tr '\n' ' ')"
	fi
	systemctl disable pfc-test-traced.service >/dev/null 2>&1
else
	skip $T/systemd "systemd is not PID 1 here: the units' commands ran as systemd runs them instead"
fi

summary

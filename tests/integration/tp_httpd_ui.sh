#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_httpd_ui.sh - Perfetto's own UI (v58.2, ../shared/upstream/ui, in
# headless Chromium) on our `trace_processor_shell --httpd`:
#   ui/load       the UI opens the trace with no error dialog and no
#                 failed query (screenshot in $OUT/tp_httpd_ui/)
#   ui_replay/N   every query the UI sent to Perfetto's engine on the same
#                 trace, replayed in order over our WebSocket: none may
#                 fail here where it worked there
#   ui/select_*   the UI on Perfetto's engine selects a thread state, and
#                 a slice with args and flows (deeplink ?table=&ts=&dur=),
#                 and shows their details: those queries replayed on ours
#   ui/gaps       every line of tp_httpd_ui.gaps still matches a failure
# A failure whose error is a known gap of the engine
# (tp_httpd_ui.gaps) is reported as skipped, with the gap; any other
# fails, and so does a gap line no failure matched (a closed gap left
# listed). Skips with the reason without ../shared (SHARED), Chromium,
# node, or with ports 9001/10000 busy. TP_HTTPD_UI_STRICT=1: gaps fail.
# Usage: OUT=out [SHARED=../shared] sh tests/integration/tp_httpd_ui.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tp_lib.sh"

tp_setup tp_httpd_ui
T=tp_httpd_ui
SHARED=${SHARED:-$ROOT/../shared}
UI="$SHARED/upstream/ui"
UP_TP=${UPSTREAM_TP:-$SHARED/upstream/bin/trace_processor_shell}
GAPS="$ROOT/tests/integration/tp_httpd_ui.gaps"
SHOTS="$OUT/tp_httpd_ui"

stop_skip() {
	skip "$T/all" "$1"
	summary
	exit 0
}
[ -f "$UI/ui_check.sh" ] && [ -f "$UI/dist/index.html" ] ||
	stop_skip "no Perfetto UI at $UI (set SHARED to the shared folder)"
command -v chromium >/dev/null 2>&1 || stop_skip "no chromium (Debian package chromium)"
command -v node >/dev/null 2>&1 || stop_skip "no node (Debian package nodejs)"
command -v python3 >/dev/null 2>&1 || stop_skip "no python3"
# One of our runs at a time on ports 9001/10000 (two checkouts' make test
# side by side): wait for the other's UI check to end.
if command -v flock >/dev/null 2>&1; then
	exec 8>>"${PFC_UI_PORTS_LOCK:-/run/lock/perfetto-c-ui-ports.lock}" && flock 8
fi
for _p in 9001 10000; do
	ss -ltnH "sport = :$_p" 2>/dev/null | grep -q . && stop_skip "port $_p is in use"
done

TRACE=${TP_HTTPD_UI_TRACE:-$SHARED/differential/traces/up_light.pftrace}
if [ ! -f "$TRACE" ]; then
	TRACE="$tmp/sched_basic.pb"
	"$PBTXT" --type Trace encode tests/data/tp/sched_basic.textproto >"$TRACE"
fi
mkdir -p "$SHOTS"

# gap_of ERROR_LINE: prints the known gap the error matches, if any.
gap_of() {
	[ -n "${TP_HTTPD_UI_STRICT:-}" ] && return
	grep -v '^#' "$GAPS" | grep -v '^$' | while IFS= read -r _g; do
		case "$1" in *"$_g"*)
			echo "$_g"
			echo "$_g" >>"$tmp/gaps_hit"
			break
			;;
		esac
	done
}

# ui_run NAME ENGINE...: ui_check.sh on ENGINE into $tmp/NAME.{txt,json};
# a UI that did not get as far as offering the loaded trace (Chromium slow
# on a loaded machine: the driver waits 30 s) is tried twice more.
ui_run() {
	_n=$1
	shift
	for _try in 1 2 3; do
		bash "$UI/ui_check.sh" -s "$SHOTS/$_n.png" -j "$tmp/$_n.json" -t 300 -- \
			"$@" >"$tmp/$_n.txt" 2>&1
		_rc=$?
		grep -q 'no "use loaded trace" dialog' "$tmp/$_n.txt" || return $_rc
		echo "($_n: the UI did not offer the loaded trace in time, try $_try)"
	done
	return $_rc
}

# 1. The UI on our engine.
ui_run ours "$TP" --httpd "$TRACE"
rc=$?
cp "$tmp/ours.txt" "$SHOTS/ours.txt" 2>/dev/null
if [ $rc = 0 ]; then
	pass "$T/load"
elif [ $rc = 2 ]; then
	fail "$T/load" "setup: $(head -n 3 "$tmp/ours.txt" | tr '\n' ' ')"
else
	err=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
errs = [e for e in d.get("sql_errors", []) if "google3." not in e.get("sql", "")]
if errs:
    lines = [x for x in errs[0]["error"].splitlines() if x.strip()]
    print(lines[-1].strip() if lines else errs[0]["error"])
else:
    print(d.get("error") or "load failed")
' "$tmp/ours.json" 2>/dev/null)
	gap=$(gap_of "$err")
	if [ -n "$gap" ]; then
		skip "$T/load" "blocked by a known gap ($gap); $(grep -c . "$tmp/ours.txt") lines in $SHOTS/ours.txt"
	else
		fail "$T/load" "${err:-$(head -n 2 "$tmp/ours.txt" | tr '\n' ' ')}"
	fi
fi

# 2. The UI's queries, recorded on Perfetto's engine, replayed on ours.
if [ ! -x "$UP_TP" ]; then
	skip "$T/replay" "no Perfetto trace_processor_shell (set UPSTREAM_TP, or SHARED)"
	summary
	exit $?
fi
ui_run up "$UP_TP" --httpd "$TRACE"
if [ ! -s "$tmp/up.json" ]; then
	skip "$T/replay" "Perfetto's engine did not load in the UI: $(head -n 1 "$tmp/up.txt")"
	summary
	exit $?
fi
python3 - "$TP" "$TRACE" "$tmp" >"$tmp/replay.txt" 2>&1 <<'PY'
import os, subprocess, sys
sys.path.insert(0, 'tests/integration')
import tp_httpd_client as c
tp, trace, tmp = sys.argv[1:4]
p, port = c.start_server(tp, [trace], os.path.join(tmp, 'replay_server.log'))
if not port:
    print('FAIL replay/start: the server did not start')
    c.stop_server(p)
    sys.exit(0)
r = subprocess.run([sys.executable, 'tests/integration/tp_httpd_replay.py', str(port),
                    os.path.join(tmp, 'up.json')], capture_output=True, text=True, timeout=1800)
print(r.stdout + r.stderr, end='')
c.stop_server(p)
PY
cp "$tmp/replay.txt" "$SHOTS/replay.txt" 2>/dev/null
while IFS= read -r line; do
	case "$line" in
	"ok   "*) pass "$T/${line#ok   }" ;;
	"skip "*) skip "$T/${line#skip }" ;;
	"FAIL "*)
		_name=${line#FAIL }
		_name=${_name%%:*}
		_err=${line#*: }
		_err=${_err%% | SQL:*}
		gap=$(gap_of "$_err")
		if [ -n "$gap" ]; then
			skip "$T/$_name" "known gap: $gap"
		else
			fail "$T/$_name" "${line#*: }"
		fi
		;;
	replayed*) echo "$line" ;;
	*) ;;
	esac
done <"$tmp/replay.txt"
grep -q '^replayed' "$tmp/replay.txt" || fail "$T/replay" "$(tail -n 3 "$tmp/replay.txt" | tr '\n' ' ')"

# 3. Selection details: the UI on Perfetto's engine selects an event when
# the trace is ready (deeplink ?table=&ts=&dur=) and shows its details;
# the queries it sent, replayed on ours, must not fail. A thread state of
# the sched trace; a slice with args and flows in and out.
SEL="$tmp/uisel"
mkdir -p "$SEL"
ln -s "$UI/ui_check.sh" "$SEL/ui_check.sh"
ln -s "$UI/dist" "$SEL/dist"
ln -s "$ROOT/tests/integration/tp_httpd_ui_deeplink.js" "$SEL/ui_drive.js"
SLICE_TRACE="$tmp/ui_select.pb"
"$PBTXT" --type Trace encode tests/data/tp/track_event/ui_select.textproto >"$SLICE_TRACE"
# sel_target TRACE SQL: "ts dur" of the event SQL picks, on our engine.
sel_target() {
	"$TP" -Q "$2" "$1" 2>/dev/null | tail -n 1 | tr -d '"' | tr ',' ' '
}
# sel_check NAME TABLE TRACE SQL: select the event SQL picks in TABLE.
sel_check() {
	_n=$1 _tab=$2 _tr=$3
	set -- $(sel_target "$_tr" "$4")
	if [ $# -ne 2 ]; then
		fail "$T/select_$_n" "no $_tab to select in $_tr"
		return
	fi
	# As ui_run: a UI too slow to offer the loaded trace is tried again.
	for _try in 1 2 3; do
		UI_DRIVE_REAL="$UI/ui_drive.js" UI_DEEPLINK="#!/viewer?table=$_tab&ts=$1&dur=$2" \
			bash "$SEL/ui_check.sh" -s "$SHOTS/select_$_n.png" -j "$tmp/sel_$_n.json" \
			-t 300 -q "select 1" -- "$UP_TP" --httpd "$_tr" >"$tmp/sel_$_n.txt" 2>&1
		grep -q 'no "use loaded trace" dialog' "$tmp/sel_$_n.txt" || break
		echo "(select_$_n: the UI did not offer the loaded trace in time, try $_try)"
	done
	# Perfetto's UI asked for the event's details (its id by ts and dur,
	# then the table's row): else the selection never happened.
	if ! python3 -c '
import json, sys
q = json.load(open(sys.argv[1])).get("queries", [])
sys.exit(0 if any("ts = " + sys.argv[2] in x["sql"] for x in q) else 1)
' "$tmp/sel_$_n.json" "$1" 2>/dev/null; then
		fail "$T/select_$_n" "the UI on Perfetto's engine did not select the $_tab ($(head -n 2 "$tmp/sel_$_n.txt" | tr '\n' ' '))"
		return
	fi
	python3 - "$TP" "$_tr" "$tmp" "$_n" >"$tmp/sel_$_n.replay" 2>&1 <<'PY'
import os, subprocess, sys
sys.path.insert(0, 'tests/integration')
import tp_httpd_client as c
tp, trace, tmp, n = sys.argv[1:5]
p, port = c.start_server(tp, [trace], os.path.join(tmp, 'sel_server.log'))
if not port:
    print('FAIL replay/start: the server did not start')
    c.stop_server(p)
    sys.exit(0)
r = subprocess.run([sys.executable, 'tests/integration/tp_httpd_replay.py', str(port),
                    os.path.join(tmp, 'sel_%s.json' % n)], capture_output=True, text=True,
                   timeout=1800)
print(r.stdout + r.stderr, end='')
c.stop_server(p)
PY
	cp "$tmp/sel_$_n.replay" "$SHOTS/select_$_n.replay.txt"
	_bad=$(grep '^FAIL ' "$tmp/sel_$_n.replay" | while IFS= read -r _l; do
		_e=${_l#*: }
		[ -n "$(gap_of "${_e%% | SQL:*}")" ] || echo "$_l"
	done | head -n 3)
	if ! grep -q '^replayed' "$tmp/sel_$_n.replay"; then
		fail "$T/select_$_n" "$(tail -n 3 "$tmp/sel_$_n.replay" | tr '\n' ' ')"
	elif [ -n "$_bad" ]; then
		fail "$T/select_$_n" "$(echo "$_bad" | tr '\n' ' ')"
	else
		pass "$T/select_$_n ($(grep '^replayed' "$tmp/sel_$_n.replay"))"
	fi
}
sel_check thread_state thread_state "$TRACE" \
	"SELECT ts, dur FROM thread_state WHERE state = 'S' AND dur > 0
	 AND utid IN (SELECT utid FROM thread WHERE tid > 0) ORDER BY dur DESC LIMIT 1"
sel_check slice slice "$SLICE_TRACE" \
	"SELECT s.ts, s.dur FROM slice s JOIN flow f ON f.slice_out = s.id
	 WHERE s.arg_set_id IS NOT NULL ORDER BY s.ts LIMIT 1"

# 4. The gaps file lists only what is still missing.
if [ -z "${TP_HTTPD_UI_STRICT:-}" ]; then
	_stale=$(grep -v '^#' "$GAPS" | grep -v '^$' | while IFS= read -r _g; do
		grep -qxF "$_g" "$tmp/gaps_hit" 2>/dev/null || echo "$_g"
	done)
	if [ -n "$_stale" ]; then
		fail "$T/gaps" "closed gaps still in tp_httpd_ui.gaps (remove them): $(echo "$_stale" | tr '\n' ';')"
	else
		pass "$T/gaps"
	fi
fi
summary

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_batch_dask.sh - batch analysis over many traces, on this machine and
# on a Dask distributed cluster (tp_batch_dask.py does the Python checks):
#   local      perfetto_c.batch_trace_processor.BatchTraceProcessor with
#              engines here: rows as the shell's, metadata columns,
#              failures raised or counted
#   dask       a cluster made here: a scheduler and two workers in a host
#              network namespace (workers on its 127.0.0.1), one worker in
#              a guest namespace joined by a veth (10.249.N.1 / .2, never
#              0.0.0.0) with its own mounts: it alone sees guestonly/ and
#              does not see hostonly/. Frames equal to the local run's,
#              each trace on a worker that can read it, unreadable and
#              broken traces, the guest worker killed (a clear error, and
#              the engines it ran end with it), no scheduler
#   batch_query  pfc_batch_query --dask writes the CSV and SQLite rows its
#              own workers write (run_at aside), reads a trace only the
#              guest worker can read, says when there is no scheduler
#   upstream   Perfetto's BatchTraceProcessor (its Python package from the
#              Perfetto checkout in /work/.mirror or $PERFETTO_PY, when
#              present) with bin_path = our shell gives our frames
# Skips with the reason without pandas, python3-distributed, root or ip.
# Usage: OUT=out sh tests/integration/tp_batch_dask.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tp_lib.sh"

tp_setup tp_batch_dask
DATA=tests/data/tp
PY=${PYTHON:-$(cat "$OUT/python/interpreter" 2>/dev/null)}
PY=${PY:-python3}
export PYTHONPATH="$OUT/python"
if ! "$PY" -c 'import perfetto_c.batch_trace_processor, pandas' 2>/dev/null; then
	skip tp_batch_dask/all "perfetto_c or pandas is missing for $PY (make python; python3-pandas)"
	summary
	exit 0
fi
mkdir -p "$tmp/traces" "$tmp/hostonly" "$tmp/guestonly" "$tmp/bad" "$tmp/sql"
"$PBTXT" --type Trace encode "$DATA/sched_basic.textproto" >"$tmp/traces/a.pftrace" &&
	"$PBTXT" --type Trace encode "$DATA/multi_machine/sync.textproto" >"$tmp/traces/b.pftrace" &&
	"$PBTXT" --type Trace encode "$DATA/track_event/slices.textproto" >"$tmp/traces/s.pftrace" ||
	{ fail tp_batch_dask/encode "cannot encode the traces"; summary; exit 1; }
cp "$tmp/traces/a.pftrace" "$tmp/hostonly/h.pftrace"
echo "not a trace" >"$tmp/bad/bad.pftrace"

# run_py NAME ARGS...: tp_batch_dask.py's lines into the counts (a run
# that prints nothing, or dies, fails NAME).
run_py() {
	_n=$1
	shift
	"$@" >"$tmp/py.out" 2>"$tmp/py.err"
	_rc=$?
	cat "$tmp/py.out"
	T_PASSED=$((T_PASSED + $(grep -c '^ok ' "$tmp/py.out")))
	T_FAILED=$((T_FAILED + $(grep -c '^FAIL ' "$tmp/py.out")))
	if [ $_rc != 0 ] || ! grep -q '^ok ' "$tmp/py.out"; then
		fail "tp_batch_dask/$_n" "exit $_rc: $(tail -n 3 "$tmp/py.err" | tr '\n' ' ')"
	fi
}

run_py local "$PY" tests/integration/tp_batch_dask.py local "$TP" "$tmp"

# Perfetto's own package: $PERFETTO_PY, else python/perfetto of the
# Perfetto checkout's v58.2 (read only; unpacked into $tmp).
MIRROR=/work/.mirror/google+perfetto/repo
UPY=${PERFETTO_PY:-}
if [ -z "$UPY" ] && git -C "$MIRROR" rev-parse -q --verify v58.2 >/dev/null 2>&1; then
	mkdir -p "$tmp/upy"
	git -C "$MIRROR" archive v58.2 python/perfetto 2>/dev/null | tar -x -C "$tmp/upy" 2>/dev/null
	UPY=$tmp/upy/python
fi
if [ -n "$UPY" ] && PYTHONPATH="$UPY:$OUT/python" "$PY" -c \
	'import perfetto.batch_trace_processor.api' 2>/dev/null; then
	PYTHONPATH="$UPY:$OUT/python" run_py upstream "$PY" tests/integration/tp_batch_dask.py \
		upstream "$TP" "$tmp"
else
	skip tp_batch_dask/upstream "Perfetto's Python package is not here (set PERFETTO_PY)"
fi

# The cluster.
if ! "$PY" -c 'import distributed' 2>/dev/null; then
	skip tp_batch_dask/dask "python3-distributed is not installed for $PY"
	summary
	exit $?
fi
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null 2>&1; then
	skip tp_batch_dask/dask "needs root and ip (network namespaces)"
	summary
	exit $?
fi
ID=$$
N=$((ID % 250 + 1))
HOST_NS=pfcdh$ID
GUEST_NS=pfcdg$ID
HOST_IP=10.249.$N.1
GUEST_IP=10.249.$N.2
SCHED=tcp://$HOST_IP:8786
# Everything the test started runs in its two namespaces: killed, then
# the namespaces removed.
cleanup() {
	for _ns in "$HOST_NS" "$GUEST_NS"; do
		ip netns pids "$_ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
		ip netns del "$_ns" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
if ! { ip netns add "$HOST_NS" && ip netns add "$GUEST_NS" &&
	ip link add "pd${ID}h" netns "$HOST_NS" type veth peer name "pd${ID}g" netns "$GUEST_NS" &&
	ip -n "$HOST_NS" addr add "$HOST_IP/24" dev "pd${ID}h" &&
	ip -n "$HOST_NS" link set "pd${ID}h" up && ip -n "$HOST_NS" link set lo up &&
	ip -n "$GUEST_NS" addr add "$GUEST_IP/24" dev "pd${ID}g" &&
	ip -n "$GUEST_NS" link set "pd${ID}g" up && ip -n "$GUEST_NS" link set lo up; }; then
	skip tp_batch_dask/dask "cannot make network namespaces here"
	summary
	exit $?
fi
export PERFETTO_C_TP="$TP"
WORKER="$PY -m distributed.cli.dask_worker $SCHED --no-nanny --nthreads 2 --no-dashboard"
ip netns exec "$HOST_NS" $PY -m distributed.cli.dask_scheduler --host "$HOST_IP" --port 8786 \
	--no-dashboard >"$tmp/scheduler.log" 2>&1 &
for w in 1 2; do
	ip netns exec "$HOST_NS" $WORKER --host 127.0.0.1 --name "host$w" \
		--local-directory "$tmp/w$w" >"$tmp/worker$w.log" 2>&1 &
done
# The guest: ip netns exec gives it a mount namespace of its own (private
# from the machine's), where guestonly/ gets a trace and hostonly/ is hidden.
ip netns exec "$GUEST_NS" sh -c 'mount -t tmpfs pfc "$1/guestonly" &&
	cp "$1/traces/s.pftrace" "$1/guestonly/g.pftrace" &&
	mount -t tmpfs pfc "$1/hostonly" && shift && exec "$@"' sh "$tmp" \
	$WORKER --host "$GUEST_IP" --name guest --local-directory "$tmp/wg" >"$tmp/guest.log" 2>&1 &
GUEST_PID=$!
if [ -e "$tmp/guestonly/g.pftrace" ] || [ ! -e "$tmp/hostonly/h.pftrace" ]; then
	fail tp_batch_dask/guest_mounts "the guest's mounts leaked into this namespace"
fi

# The Python checks wait for the three workers first.
run_py dask ip netns exec "$HOST_NS" "$PY" tests/integration/tp_batch_dask.py dask "$TP" "$tmp" \
	"$SCHED" "$GUEST_IP" "$GUEST_PID"
# pfc_batch_query --dask with a trace only the guest reads (missing here):
# its rows are those of the trace it copies.
echo "SELECT COUNT(*) AS n, SUM(dur) AS d FROM slice;" >"$tmp/slices.sql"
(cd "$tmp" && ip netns exec "$HOST_NS" "$OUT/pfc_batch_query" --dask "$HOST_IP:8786" \
	-s slices.sql -o guest.csv guestonly/g.pftrace traces/s.pftrace >/dev/null 2>"$tmp/guest.err")
rc=$?
g=$(grep '^guestonly/g.pftrace,' "$tmp/guest.csv" 2>/dev/null | cut -d, -f2-4,6-)
s_=$(grep '^traces/s.pftrace,' "$tmp/guest.csv" 2>/dev/null | cut -d, -f2-4,6-)
if [ $rc = 0 ] && [ -n "$g" ] && [ "$g" = "$s_" ] && ! echo "$g" | grep -q ',0,{"n": 0'; then
	pass tp_batch_dask/batch_query/guest_only_trace
else
	fail tp_batch_dask/batch_query/guest_only_trace "exit $rc: [$g] [$s_] $(head -c 300 "$tmp/guest.err")"
fi
run_py gone ip netns exec "$HOST_NS" "$PY" tests/integration/tp_batch_dask.py gone "$TP" "$tmp" \
	"$SCHED" "$GUEST_IP" "$GUEST_PID"
# The guest worker was killed: the engines it started end with it.
left=$(ip netns pids "$GUEST_NS" 2>/dev/null)
i=0
while [ -n "$left" ] && [ $i -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
	left=$(ip netns pids "$GUEST_NS" 2>/dev/null)
done
if [ -z "$left" ]; then
	pass tp_batch_dask/dask/guest_engines_ended
else
	fail tp_batch_dask/dask/guest_engines_ended "still in the guest: $(ps -o args= -p "$(echo $left | tr ' ' ,)")"
fi

mkdir -p "$tmp/bq"
cp "$tmp/traces/a.pftrace" "$tmp/traces/b.pftrace" "$tmp/bq/"
cp "$tmp/bad/bad.pftrace" "$tmp/bq/c.pftrace"
echo "SELECT COUNT(*) AS slices, SUM(dur) AS total FROM sched;" >"$tmp/sql/sched.sql"
printf '%s\n%s\n' "CREATE TEMP TABLE x AS SELECT 1 AS v;" \
	"SELECT v, 'a\"b,c' AS s, NULL AS n, 1.5 AS f, x'00ff' AS b, 't' || char(9) || 'n' ||
	char(10) || 'r' || char(13) || 'b\\' AS e, 1e300 * 1e300 AS inf, -0.1 AS g FROM x;
	CREATE TEMP TABLE y AS SELECT ';' AS semi; -- a last statement without rows" \
	>"$tmp/sql/multi.sql"
echo "SELECT nope FROM sched" >"$tmp/sql/bad.sql"
(cd "$tmp" && "$OUT/pfc_batch_query" -j 2 -s sql -o local.csv bq >/dev/null 2>&1)
rc_local=$?
(cd "$tmp" && ip netns exec "$HOST_NS" "$OUT/pfc_batch_query" --dask "$HOST_IP:8786" -s sql \
	-o dask.csv bq >/dev/null 2>"$tmp/bq.err")
rc_dask=$?
(cd "$tmp" && ip netns exec "$HOST_NS" "$OUT/pfc_batch_query" --dask "$HOST_IP:8786" -s sql \
	-o dask.sqlite bq >/dev/null 2>&1
	"$OUT/pfc_batch_query" -s sql -o local.sqlite bq >/dev/null 2>&1)
strip() {
	sed -E 's/,[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z,/,RUN,/' "$1"
}
if [ $rc_local = 1 ] && [ $rc_dask = 1 ] && [ -s "$tmp/dask.csv" ] &&
	[ "$(strip "$tmp/local.csv")" = "$(strip "$tmp/dask.csv")" ] &&
	strip "$tmp/dask.csv" | grep -q '^bq/c.pftrace,,,,RUN,,,,not a Perfetto trace$'; then
	pass tp_batch_dask/batch_query/csv_as_local
else
	fail tp_batch_dask/batch_query/csv_as_local "exit $rc_local/$rc_dask: $(diff "$tmp/local.csv" "$tmp/dask.csv" | head -n 6 | tr '\n' ' ') $(head -c 300 "$tmp/bq.err")"
fi
if command -v sqlite3 >/dev/null 2>&1 && [ -s "$tmp/dask.sqlite" ]; then
	q="SELECT trace, row, v, s, n, f, hex(b), typeof(f), hex(e), inf, g FROM multi ORDER BY trace, row"
	if [ "$(sqlite3 "$tmp/dask.sqlite" "$q")" = "$(sqlite3 "$tmp/local.sqlite" "$q")" ] &&
		[ -n "$(sqlite3 "$tmp/dask.sqlite" "$q")" ]; then
		pass tp_batch_dask/batch_query/sqlite_types_as_local
	else
		fail tp_batch_dask/batch_query/sqlite_types_as_local "$(sqlite3 "$tmp/dask.sqlite" "$q" | head -n 3)"
	fi
else
	skip tp_batch_dask/batch_query/sqlite_types_as_local "sqlite3 is not installed or no output"
fi
(cd "$tmp" && PFC_DASK_TIMEOUT=5 "$OUT/pfc_batch_query" --dask "127.0.0.1:1" -s sql -o none.csv bq \
	>/dev/null 2>"$tmp/none.err")
rc=$?
# (the output is opened, and a CSV's header written, before any work)
if [ $rc = 1 ] && [ "$(wc -l <"$tmp/none.csv")" -le 1 ] && grep -q "cannot reach the Dask scheduler" "$tmp/none.err" &&
	grep -q "nothing written" "$tmp/none.err"; then
	pass tp_batch_dask/batch_query/no_scheduler
else
	fail tp_batch_dask/batch_query/no_scheduler "exit $rc: $(head -c 300 "$tmp/none.err")"
fi
summary

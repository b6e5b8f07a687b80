#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# sdk_c.sh - the C SDK (libperfetto-c) through the real binaries: traced on
# private sockets, `perfetto` sessions, the test application
# out/sdk/sdk_app (built against the .so like any application), and the
# trace read back with trace_processor_shell (and Perfetto's own, when
# UPSTREAM_TP names it). Covers: the library's exports and the public
# header as C99/C11/C++17; 64 threads x 10,000 nested slices through the
# system and the in-process backends; 512 short-lived threads; 300 idle
# threads on a 256 KiB shared memory buffer; every event kind; category
# filtering with two sessions at once; traced absent, started, killed and
# restarted under a running application; fork; a flow across processes;
# drops counted exactly.

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"
. "$(dirname "$0")/sdk_lib.sh"

svc_require_bins traced perfetto trace_processor_shell sdk/sdk_app
APP=$OUT/sdk/sdk_app
# Sessions here hold 64 threads x 10,000 slices.
SDK_SESSION_KB=262144
# Programs built here against a sanitizer build's library need its runtime.
SAN=
case $OUT in *asan*) SAN="-fsanitize=address,undefined" ;; esac

# q_up TRACE SQL: q (sdk_lib.sh) with Perfetto's trace processor.
q_up() {
	printf '%s\n' "$2" >"$SVC_TMP/q.sql"
	"$UPSTREAM_TP" -q "$SVC_TMP/q.sql" "$1" 2>/dev/null | sed -n 2p | tr -d '"'
}

# stat NAME KEY: a counter the app printed with --stats.
stat() {
	sed -n "s/^$2=//p" "$SVC_TMP/$1.out" | head -n 1
}

# restart_traced NAME: a traced on the sockets already exported (stale ones
# of a killed traced removed first).
restart_traced() {
	rm -f "$PERFETTO_PRODUCER_SOCK_NAME" "$PERFETTO_CONSUMER_SOCK_NAME"
	svc_bg "$1" env TRACED_NOTIFY_FD=9 "$OUT/traced"
	svc_wait_for 10 _svc_traced_up "$1" && ! _svc_exited "$1"
}


# ------------------------------------------------------------ library ----
t=sdk/exports
bad=$(nm -D --defined-only "$OUT/lib/libperfetto-c.so" | awk '$3 !~ /^pfc_/ && $2 != "A" {print $3}' | head -n 3)
n=$(nm -D --defined-only "$OUT/lib/libperfetto-c.so" | grep -c ' pfc_')
if [ -z "$bad" ] && [ "$n" -ge 15 ]; then pass $t; else fail $t "non-pfc exports: $bad ($n pfc_)"; fi
t=sdk/static_exports
bad=$(nm -g --defined-only "$OUT/lib/libperfetto-c.a" |
	awk 'NF == 3 && $3 !~ /^pfc_/ && $3 !~ /^__(odr_)?asan/ {print $3}' | head -n 3)
if [ -z "$bad" ]; then pass $t; else fail $t "non-pfc globals in the .a: $bad"; fi

# The header as C99, C11 and C++17, warnings as errors, every macro used.
cat >"$SVC_TMP/hdr.c" <<'EOF'
#include "perfetto-c/pfc.h"
static PFC_CATEGORY(cat);
int main(void)
{
	struct pfc_arg a[2];
	struct pfc_event e;
	a[0] = pfc_arg_int("n", 1);
	a[1] = pfc_arg_string("s", "v");
	e.type = PFC_EVENT_INSTANT;
	e.flags = 0;
	e.name = "i";
	e.track = 0;
	e.value_int = 0;
	e.value_double = 0;
	e.flow_id = 1;
	e.terminating_flow_id = 0;
	e.args = a;
	e.n_args = 2;
	pfc_category_register(&cat, "cat", "d", 0, 0);
	PFC_SLICE_BEGIN(cat, "b");
	PFC_SLICE_END(cat);
	PFC_INSTANT(cat, "i");
	PFC_COUNTER_INT(cat, 0, 1);
	PFC_COUNTER_DOUBLE(cat, 0, 1.5);
	PFC_EVENT(cat, &e);
	{
		PFC_SCOPED_SLICE(cat, "scoped");
	}
	return PFC_ENABLED(cat) ? 1 : 0;
}
EOF
cp "$SVC_TMP/hdr.c" "$SVC_TMP/hdr.cc"
for std in c99 c11; do
	t=sdk/header_$std
	if ${CC:-cc} $SAN -std=$std -Wall -Wextra -Werror -Iinclude -o "$SVC_TMP/hdr_$std" "$SVC_TMP/hdr.c" \
		-L"$OUT/lib" -lperfetto-c 2>"$SVC_TMP/hdr.err" &&
		LD_LIBRARY_PATH="$OUT/lib" "$SVC_TMP/hdr_$std"; then
		pass $t
	else
		fail $t "$(head -n 3 "$SVC_TMP/hdr.err" | tr '\n' ' ')"
	fi
done
t=sdk/header_cxx17
if ! command -v "${CXX:-c++}" >/dev/null 2>&1; then
	skip $t "no C++ compiler (${CXX:-c++})"
elif "${CXX:-c++}" $SAN -std=c++17 -Wall -Wextra -Werror -Iinclude -o "$SVC_TMP/hdr_cxx" \
	"$SVC_TMP/hdr.cc" -L"$OUT/lib" -lperfetto-c 2>"$SVC_TMP/hdr.err" &&
	LD_LIBRARY_PATH="$OUT/lib" "$SVC_TMP/hdr_cxx"; then
	pass $t
else
	fail $t "$(head -n 3 "$SVC_TMP/hdr.err" | tr '\n' ' ')"
fi

# The C example, built as its Makefile does (here against the build tree).
t=sdk/example_worker_pool
if ${CC:-cc} $SAN -O2 -Wall -Wextra -Werror -Iinclude -o "$SVC_TMP/worker_pool" examples/c/worker_pool.c \
	-L"$OUT/lib" -lperfetto-c -pthread 2>"$SVC_TMP/ex.err" &&
	LD_LIBRARY_PATH="$OUT/lib" "$SVC_TMP/worker_pool" --out "$SVC_TMP/pool.pftrace" >/dev/null; then
	expect $t "$(q "$SVC_TMP/pool.pftrace" "select count(*) || ',' || (select count(*) from flow) || ',' || (select count(distinct track_id) from slice where name = 'handle') from slice where name = 'handle'")" "2000,2000,4"
else
	fail $t "$(head -n 3 "$SVC_TMP/ex.err" | tr '\n' ' ')"
fi

# --------------------------------------------------- 64 x 10,000 (system) ----
svc_start_traced traced || { fail sdk/traced "traced did not start"; summary; exit 1; }

session big "$TE_ALL"
svc_bg big.app "$APP" --threads 64 --slices 10000 --depth 4 --wait-enabled 10000 --stats
svc_wait big.app 240
t=sdk/system_64x10k_app
if [ "$(svc_rc big.app)" = 0 ]; then pass $t; else fail $t "exit $(svc_rc big.app): $(svc_errtail big.app)"; fi
end_session big || fail sdk/system_64x10k_trace "no trace"
T=$SVC_TMP/big.pftrace
expect sdk/system_64x10k_no_drops "$(stat big.app events_dropped)" 0
expect sdk/system_64x10k_events "$(stat big.app events_written)" 1280000
expect sdk/system_64x10k_slices "$(q "$T" "select count(*) from slice")" 640000
expect sdk/system_64x10k_threads "$(q "$T" "select count(distinct utid) || ',' || min(n) || ',' || max(n) from (select utid, count(*) n from slice join thread_track tt on slice.track_id = tt.id join thread using(utid) where thread.name like 'worker-%' group by utid)")" "64,10000,10000"
expect sdk/system_64x10k_depths "$(q "$T" "select group_concat(n) from (select depth, count(*) n from slice group by depth order by depth)")" "160000,160000,160000,160000"
expect sdk/system_64x10k_names "$(q "$T" "select count(*) from slice where name != 's' || depth")" 0
expect sdk/system_64x10k_args "$(q "$T" "select count(*) from slice s join args a using(arg_set_id) where s.depth = 0 and a.key = 'debug.i'")" 160000
t=sdk/system_64x10k_nesting
if nesting_ok "$T"; then pass $t; else fail $t "bad nesting or unended slices"; fi
expect sdk/system_64x10k_process "$(q "$T" "select count(distinct upid) from thread t join thread_track tt using(utid) where t.name like 'worker-%'")" 1
t=sdk/system_64x10k_upstream
if [ -z "$UPSTREAM_TP" ]; then
	skip $t "UPSTREAM_TP is not set (Perfetto's trace_processor_shell)"
else
	expect $t "$(q_up "$T" "select count(*) || ',' || count(distinct track_id) || ',' || sum(depth) from slice")" \
		"$(q "$T" "select count(*) || ',' || count(distinct track_id) || ',' || sum(depth) from slice")"
fi

# ---------------------------------------------- 64 x 10,000 (in-process) ----
svc_bg inproc.app "$APP" --in-process "$SVC_TMP/inproc.pftrace" --threads 64 --slices 10000 --depth 4 --stats
svc_wait inproc.app 240
T=$SVC_TMP/inproc.pftrace
t=sdk/inprocess_64x10k_app
if [ "$(svc_rc inproc.app)" = 0 ]; then pass $t; else fail $t "exit $(svc_rc inproc.app): $(svc_errtail inproc.app)"; fi
expect sdk/inprocess_64x10k_no_drops "$(stat inproc.app events_dropped)" 0
expect sdk/inprocess_64x10k_slices "$(q "$T" "select count(*) from slice")" 640000
expect sdk/inprocess_64x10k_threads "$(q "$T" "select count(distinct track_id) from slice")" 64
t=sdk/inprocess_64x10k_nesting
if nesting_ok "$T"; then pass $t; else fail $t "bad nesting or unended slices"; fi

# ------------------------------------------------ threads come and go ----
session short "$TE_ALL"
svc_bg short.app "$APP" --threads 0 --short-threads 512 --batch 64 --depth 2 --wait-enabled 10000 --stats
svc_wait short.app 120
end_session short || fail sdk/short_threads_trace "no trace"
T=$SVC_TMP/short.pftrace
expect sdk/short_threads_no_drops "$(stat short.app events_dropped)" 0
expect sdk/short_threads_slices "$(q "$T" "select count(*) || ',' || count(distinct track_id) from slice")" "51200,512"
expect sdk/short_threads_names "$(q "$T" "select count(distinct t.name) from thread t join thread_track tt using(utid) join slice s on s.track_id = tt.id")" 512
expect sdk/short_threads_writers_freed "$(stat short.app writers)" 0

# 300 threads alive at once on 64 chunks, one starting every 5 ms: idle
# ones must give theirs back (a writer holds its chunk 100-200 ms idle).
session idle 'data_sources { config { name: "track_event" track_event_config { enabled_categories: "*" } } }'
svc_bg idle.app "$APP" --threads 0 --idle-threads 300 --stagger-ms 5 --shm-kb 256 --depth 2 --wait-enabled 10000 --stats
svc_wait idle.app 120
end_session idle || fail sdk/idle_threads_trace "no trace"
T=$SVC_TMP/idle.pftrace
expect sdk/idle_threads_no_drops "$(stat idle.app events_dropped)" 0
expect sdk/idle_threads_slices "$(q "$T" "select count(*) || ',' || count(distinct track_id) from slice")" "30000,300"
t=sdk/idle_threads_reclaimed
r=$(stat idle.app chunks_reclaimed)
if [ "${r:-0}" -ge 100 ]; then pass $t; else fail $t "only ${r:-?} chunks reclaimed from idle threads"; fi

# ------------------------------------------------------ every kind ----
session kinds "$TE_ALL"
svc_bg kinds.app "$APP" --threads 2 --slices 400 --all-kinds --flow-id 77 --wait-enabled 10000 --stats
svc_wait kinds.app 60
end_session kinds || fail sdk/kinds_trace "no trace"
T=$SVC_TMP/kinds.pftrace
expect sdk/kinds_args "$(q "$T" "select group_concat(key || '=' || value_type || ':' || display_value, ' ') from (select key, value_type, display_value from args where arg_set_id = (select arg_set_id from slice where name = 'kinds' limit 1) order by key)")" \
	"debug.a_bool=bool:true debug.a_double=real:2.5 debug.a_pointer=pointer:0x1234 debug.a_string=string:hello debug.a_uint=uint:7 debug.an_int=int:-5"
expect sdk/kinds_instants "$(q "$T" "select count(*) from slice where name = 'tick' and dur = 0")" 14
expect sdk/kinds_counters "$(q "$T" "select group_concat(name || ':' || n || ':' || mx, ' ') from (select t.name, count(*) n, max(c.value) mx from counter c join counter_track t on c.track_id = t.id group by t.name order by t.name)")" \
	"loss:14:48.0 queue_depth:14:96.0"
expect sdk/kinds_named_tracks "$(q "$T" "select group_concat(name, ',') from (select distinct t.name from slice s join track t on s.track_id = t.id where s.name in ('on_named', 'request') order by t.name)")" "async,named"
expect sdk/kinds_dynamic_names "$(q "$T" "select count(distinct name) from slice where name like 'dyn_%'")" 3
expect sdk/kinds_scoped "$(q "$T" "select count(*) from slice where name = 'scoped' and dur >= 0")" 14
expect sdk/kinds_thread_names "$(q "$T" "select group_concat(name, ',') from (select distinct t.name from thread t join thread_track tt using(utid) join slice s on s.track_id = tt.id order by 1)")" "worker-0,worker-1"
expect sdk/kinds_process_name "$(q "$T" "select count(*) from process where name like '%sdk_app'")" 1
expect sdk/kinds_flow "$(q "$T" "select count(*) from flow f join slice a on f.slice_out = a.id join slice b on f.slice_in = b.id where a.name = 'rpc' and b.name = 'rpc'")" 1
t=sdk/kinds_upstream
if [ -z "$UPSTREAM_TP" ]; then
	skip $t "UPSTREAM_TP is not set (Perfetto's trace_processor_shell)"
else
	sql="select (select count(*) from slice) || ',' || (select count(*) from counter) || ',' || (select count(*) from flow) || ',' || (select count(*) from args where key like 'debug.%') || ',' || (select count(*) from thread_track)"
	expect $t "$(q_up "$T" "$sql")" "$(q "$T" "$sql")"
fi

# ------------------------------------------- categories per session ----
session catA 'data_sources { config { name: "track_event" track_event_config { enabled_categories: "alpha" } } }'
session catB 'data_sources { config { name: "track_event" track_event_config { enabled_categories: "be*" enabled_tags: "slow" disabled_categories: "beta_off" } } }'
svc_bg cat.app "$APP" --threads 1 --slices 100 --depth 1 --categories alpha,beta,beta_off,gamma,slow_x \
	--wait-enabled 10000 --wait-categories 3 --stats
svc_wait cat.app 60
end_session catA || fail sdk/categories_traceA "no trace"
end_session catB || fail sdk/categories_traceB "no trace"
expect sdk/categories_session_a "$(q "$SVC_TMP/catA.pftrace" "select group_concat(category || ':' || n) from (select category, count(*) n from slice group by 1 order by 1)")" "alpha:100"
expect sdk/categories_session_b "$(q "$SVC_TMP/catB.pftrace" "select group_concat(category || ':' || n) from (select category, count(*) n from slice group by 1 order by 1)")" "beta:100,slow_x:100"

# ------------------------------------ traced absent, started, restarted ----
svc_stop_traced traced
svc_bg restart.app "$APP" --threads 2 --slices 400 --run-ms "$(svc_ms 9000)" --stats
sleep 1
t=sdk/no_service_keeps_running
if svc_running restart.app; then pass $t; else fail $t "the app exited without a service: $(svc_errtail restart.app)"; fi
restart_traced traced2 || fail sdk/restart_traced "traced did not start"
session r1 "$TE_ALL"
sleep 2
svc_kill traced2 KILL
svc_wait r1 10 >/dev/null 2>&1
sleep 0.5
restart_traced traced3 || fail sdk/restart_traced3 "traced did not start"
session r2 "$TE_ALL"
sleep 2
end_session r2 || fail sdk/restart_trace2 "no trace after the restart"
svc_wait restart.app 30
t=sdk/restart_app_survived
if [ "$(svc_rc restart.app)" = 0 ]; then pass $t; else fail $t "exit $(svc_rc restart.app): $(svc_errtail restart.app)"; fi
t=sdk/restart_events_resume
n=$(q "$SVC_TMP/r2.pftrace" "select count(*) from slice")
if [ "${n:-0}" -gt 100 ]; then pass $t; else fail $t "only ${n:-0} slices after the restart"; fi
expect sdk/restart_connections "$(stat restart.app connections)" 2
t=sdk/restart_drops_counted
d=$(stat restart.app events_dropped_no_service)
if [ "${d:-0}" -gt 0 ]; then pass $t; else fail $t "no events counted as lost with the killed service (${d:-?})"; fi

# --------------------------------------------------------------- fork ----
session fork "$TE_ALL"
svc_bg fork.app "$APP" --threads 1 --slices 100 --fork --wait-enabled 10000 --stats
svc_wait fork.app 60
end_session fork || fail sdk/fork_trace "no trace"
expect sdk/fork_child_wrote_nothing "$(stat fork.app child_events_written)" 0
expect sdk/fork_parent_events "$(q "$SVC_TMP/fork.pftrace" "select count(*) || ',' || sum(name = 'child') from slice")" "100,0"

# ----------------------------------------- a flow across two processes ----
session flow "$TE_ALL"
svc_bg flow1.app "$APP" --threads 1 --slices 4 --flow-id 4242 --name client- --wait-enabled 10000
svc_bg flow2.app "$APP" --threads 1 --slices 4 --flow-id 4242 --name server- --wait-enabled 10000
svc_wait flow1.app 60
svc_wait flow2.app 60
end_session flow || fail sdk/flow_trace "no trace"
expect sdk/flow_across_processes "$(q "$SVC_TMP/flow.pftrace" "select count(*) from flow f join slice a on f.slice_out = a.id join thread_track ta on a.track_id = ta.id join thread t1 on ta.utid = t1.utid join slice b on f.slice_in = b.id join thread_track tb on b.track_id = tb.id join thread t2 on tb.utid = t2.utid where t1.upid != t2.upid")" 1

# ----------------------------------------- drops are counted exactly ----
svc_cfg drop 'buffers { size_kb: 262144 fill_policy: DISCARD }
data_sources { config { name: "track_event" track_event_config { enabled_categories: "*" } } }'
svc_bg drop "$OUT/perfetto" --txt -c "$SVC_TMP/drop.pbtxt" -o "$SVC_TMP/drop.pftrace"
svc_bg drop.app "$APP" --threads 8 --slices 40000 --depth 4 --shm-kb 64 --wait-enabled 10000 --stats
svc_wait drop.app 120
end_session drop || fail sdk/drops_trace "no trace"
w=$(stat drop.app events_written)
d=$(stat drop.app events_dropped)
t=sdk/drops_exact
if [ -n "$w" ] && [ -n "$d" ] && [ $((w + d)) -eq 640000 ]; then pass $t; else fail $t "written $w + dropped $d != 640000"; fi
t=sdk/drops_trace_not_more
n=$(q "$SVC_TMP/drop.pftrace" "select count(*) * 2 - sum(dur < 0) from slice")
if [ -n "$n" ] && [ "$n" -le "${w:-0}" ]; then pass $t; else fail $t "trace holds $n events, written $w"; fi

# ------------------------ a ring buffer that wraps past the interned data ----
# Without incremental_state_config every event after the wrap refers to
# names that were overwritten: nothing is readable. With clear_period_ms
# the service asks the SDK to start its state afresh every 50 ms, so the
# newest part of the ring holds its own interned data.
ring() {
	svc_cfg "ring$1" "buffers { size_kb: 1024 fill_policy: RING_BUFFER }
$TE_ALL
$2"
	svc_bg "ring$1" "$OUT/perfetto" --txt -c "$SVC_TMP/ring$1.pbtxt" -o "$SVC_TMP/ring$1.pftrace"
	svc_bg "ring$1.app" "$APP" --threads 1 --depth 2 --run-ms 1500 --wait-enabled 10000
	svc_wait "ring$1.app" 60
	end_session "ring$1" || fail "sdk/ring$1_trace" "no trace"
}
ring 0 ""
ring 1 "incremental_state_config { clear_period_ms: 50 }"
t=sdk/ring_wrapped_unreadable_without_clearing
n0=$(q "$SVC_TMP/ring0.pftrace" "select count(*) from slice")
o0=$(q "$SVC_TMP/ring0.pftrace" "select value from stats where name = 'traced_buf_bytes_overwritten'")
if [ "${o0:-0}" -gt 0 ] && [ "$n0" = 0 ]; then pass $t; else fail $t "overwritten ${o0:-?} bytes, $n0 slices readable"; fi
t=sdk/ring_clear_period_keeps_it_readable
n1=$(q "$SVC_TMP/ring1.pftrace" "select count(*) from slice where name = 's0'")
o1=$(q "$SVC_TMP/ring1.pftrace" "select value from stats where name = 'traced_buf_bytes_overwritten'")
if [ "${o1:-0}" -gt 0 ] && [ "${n1:-0}" -gt 1000 ]; then pass $t; else fail $t "overwritten ${o1:-?} bytes, $n1 s0 slices"; fi

summary

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# sdk_python.sh - the Python SDK (perfetto_c, python/) through the real
# binaries: traced on private sockets, `perfetto` sessions, the test
# application tests/sdk/sdk_py_app.py and examples/python/data_loader.py run
# against the build tree (PYTHONPATH=$OUT/python), and the traces read back
# with trace_processor_shell. Covers: slices, instants, counters and
# annotations on tracks named after the threading names (a renamed thread
# too); slices that an exception leaves; decorated functions and methods;
# flows across threads; named and async tracks; category filtering; no
# events without a session; the in-process backend (twice in one process,
# with its own config); names past the name cache; argument errors; the
# example through both backends; the program in docs/sdk-python.md. Skips when python3 or the module is
# missing. Under a sanitizer build the module carries ASan: Python runs with
# it preloaded and without leak checking (the interpreter does not free all
# its memory at exit, nor the module what it keeps for the process's life).

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"
. "$(dirname "$0")/sdk_lib.sh"

svc_require_bins traced perfetto trace_processor_shell
APP=tests/sdk/sdk_py_app.py
EXAMPLE=examples/python/data_loader.py

# The interpreter the module was built for (make writes it down).
PY=${PYTHON:-$(cat "$OUT/python/interpreter" 2>/dev/null)}
PY=${PY:-python3}
if ! command -v "$PY" >/dev/null 2>&1; then
	skip sdk_python/all "no Python interpreter ($PY)"
	summary
	exit 0
fi
MOD=$(ls "$OUT"/python/perfetto_c/_pfc*.so 2>/dev/null | head -n 1)
if [ -z "$MOD" ]; then
	skip sdk_python/all "the module is not built ($OUT/python/perfetto_c/_pfc*.so: make python)"
	summary
	exit 0
fi
export PYTHONPATH="$OUT/python"
# A module built with ASan needs its runtime loaded first.
PY_ENV=
ASAN_RT=$(ldd "$MOD" 2>/dev/null | awk '/libasan/ {print $3; exit}')
if [ -n "$ASAN_RT" ]; then
	PY_ENV="LD_PRELOAD=$ASAN_RT ASAN_OPTIONS=detect_leaks=0:abort_on_error=0"
fi

# py NAME ARGS...: the interpreter in the background (svc_bg).
py() {
	local _n
	_n=$1
	shift
	# shellcheck disable=SC2086
	svc_bg "$_n" env $PY_ENV "$PY" "$@"
}

# val NAME KEY: a key=value line the program NAME printed.
val() {
	tr ' ' '\n' <"$SVC_TMP/$1.out" | sed -n "s/^$2=//p" | head -n 1
}

# ran NAME TEST SECONDS: wait for NAME; pass TEST if it exited 0.
ran() {
	svc_wait "$1" "$3"
	if [ "$(svc_rc "$1")" = 0 ]; then
		pass "$2"
	else
		fail "$2" "exit $(svc_rc "$1"): $(svc_errtail "$1" 4)"
	fi
}


# Slices per thread and name: "thread:name:count ..." in order.
PER_THREAD="select group_concat(k, ' ') from (select t.name || ':' || s.name || ':' || count(*) k
	from slice s join thread_track tt on s.track_id = tt.id join thread t using(utid)
	group by t.name, s.name order by t.name, s.name)"

# ------------------------------------------------------------- module ----
t=sdk_python/import
if env $PY_ENV "$PY" -c 'import perfetto_c' >"$SVC_TMP/import.out" 2>&1; then
	pass $t
else
	fail $t "$(tail -n 2 "$SVC_TMP/import.out" | tr '\n' ' ')"
fi
t=sdk_python/exports
bad=$(nm -D --defined-only "$MOD" | awk '$3 != "PyInit__pfc" && $2 != "A" {print $3}' | head -n 3)
if [ -z "$bad" ]; then pass $t; else fail $t "the module exports more than PyInit__pfc: $bad"; fi

py errors "$APP" errors --out "$SVC_TMP/errors.pftrace"
ran errors sdk_python/errors 60
expect sdk_python/errors_all_raised "$(val errors errors_failed)" none

# No service: nothing is written, nothing raises.
PERFETTO_PRODUCER_SOCK_NAME="$SVC_TMP/nobody.sock" py off "$APP" off
ran off sdk_python/off_runs 60
expect sdk_python/off_null_slice "$(val off off_ok)" 1
expect sdk_python/off_nothing_written "$(val off events_written),$(val off events_dropped)" "0,0"

# --------------------------------------------------- every kind (system) ----
svc_start_traced traced || { fail sdk_python/traced "traced did not start"; summary; exit 1; }

session kinds "$TE_ALL"
py kinds.app "$APP" kinds
ran kinds.app sdk_python/kinds_app 120
end_session kinds || fail sdk_python/kinds_trace "no trace"
T=$SVC_TMP/kinds.pftrace
expect sdk_python/kinds_no_drops "$(val kinds.app events_dropped)" 0
expect sdk_python/kinds_per_thread "$(q "$T" "$PER_THREAD")" \
	"MainThread:main:1 py-worker-0:Model.forward:5 py-worker-0:Model.helper:5 py-worker-0:after_raise:1 py-worker-0:custom_name:10 py-worker-0:decorated:10 py-worker-0:inner:100 py-worker-0:kept:3 py-worker-0:produce:10 py-worker-0:raises:10 py-worker-0:raises_inner:10 py-worker-0:recurse:50 py-worker-0:shared:50 py-worker-0:step:100 py-worker-0:tick:100 py-worker-1:consume:10 py-worker-1:shared:50 renamed:rename_slice:310"
expect sdk_python/kinds_thread_renamed "$(q "$T" "select count(*) from thread where name = 'rename-me'")" 0
expect sdk_python/kinds_one_process "$(q "$T" "select count(distinct t.upid) from slice s join thread_track tt on s.track_id = tt.id join thread t using(utid)")" 1
expect sdk_python/kinds_args "$(q "$T" "select group_concat(key || '=' || value_type || ':' || display_value, ' ') from (select key, value_type, display_value from args where arg_set_id = (select arg_set_id from slice where name = 'step' order by ts limit 1) order by key)")" \
	"debug.b=bool:true debug.big=uint:18446744073709551615 debug.f=real:0.5 debug.huge=string:1208925819614629174706176 debug.i=int:0 debug.none=string:None debug.obj=string:[0] debug.s=string:v0"
expect sdk_python/kinds_args_dict "$(q "$T" "select count(*) from slice s join args a using(arg_set_id) where s.name = 'tick' and a.key = 'debug.not an identifier'")" 100
expect sdk_python/kinds_depths "$(q "$T" "select group_concat(name || ':' || depth || ':' || n, ' ') from (select name, depth, count(*) n from slice where name in ('step', 'inner', 'tick') group by 1, 2 order by 2)")" \
	"step:0:100 inner:1:100 tick:2:100"
# slice(name, cat) objects are handed out again only when no one holds
# them: a recursion's slices on one line nest, a kept one nests in a new.
expect sdk_python/kinds_same_line_nests "$(q "$T" "select group_concat(depth || ':' || n, ' ') from (select depth, count(*) n from slice where name = 'recurse' group by 1 order by 1)")" \
	"0:10 1:10 2:10 3:10 4:10"
expect sdk_python/kinds_kept_reentered "$(q "$T" "select group_concat(depth, ' ') from (select depth from slice where name = 'kept' order by ts)")" "0 0 1"
expect sdk_python/kinds_instants "$(q "$T" "select count(*) from slice where name = 'tick' and dur = 0")" 100
expect sdk_python/kinds_exception_ends "$(q "$T" "select count(*) from slice s join slice p on s.parent_id = p.id where s.name = 'raises_inner' and p.name = 'raises' and s.dur >= 0 and p.dur >= 0 and p.depth = 0")" 10
expect sdk_python/kinds_after_exception "$(q "$T" "select depth || ':' || (parent_id is null) from slice where name = 'after_raise'")" "0:1"
t=sdk_python/kinds_nesting
if nesting_ok "$T"; then pass $t; else fail $t "bad nesting or unended slices"; fi
expect sdk_python/kinds_flows "$(q "$T" "select count(*) from flow f join slice a on f.slice_out = a.id join thread_track ta on a.track_id = ta.id join slice b on f.slice_in = b.id join thread_track tb on b.track_id = tb.id where a.name = 'produce' and b.name = 'consume' and ta.utid != tb.utid")" 10
expect sdk_python/kinds_flow_only "$(q "$T" "select count(*) from flow")" 10
expect sdk_python/kinds_counters "$(q "$T" "select group_concat(name || ':' || n || ':' || mx, ' ') from (select t.name, count(*) n, max(c.value) mx from counter c join counter_track t on c.track_id = t.id group by t.name order by t.name)")" \
	"py_gauge:100:1099.0 py_loss:100:49.5 py_queue:100:99.0"
expect sdk_python/kinds_async "$(q "$T" "select count(*) || ':' || min(s.dur > 0) from slice s join track t on s.track_id = t.id where t.name = 'py_async' and s.name = 'request'")" "5:1"
expect sdk_python/kinds_named_track "$(q "$T" "select count(*) from slice s join track t on s.track_id = t.id where t.name = 'py_named' and s.name = 'on_named'")" 5
expect sdk_python/kinds_category "$(q "$T" "select group_concat(category || ':' || n, ' ') from (select category, count(*) n from slice group by 1 order by 1)")" \
	"py:835 python:10"

# ---------------------------------------------------------- categories ----
session filter 'data_sources { config { name: "track_event" track_event_config { enabled_categories: "train" enabled_categories: "dbg*" disabled_categories: "dbg_off" } } }'
py filter.app "$APP" filter
ran filter.app sdk_python/filter_app 60
end_session filter || fail sdk_python/filter_trace "no trace"
expect sdk_python/filter_enabled "$(val filter.app enabled)" "train:1,eval:0,dbg_on:1,dbg_off:0"
expect sdk_python/filter_slices "$(q "$SVC_TMP/filter.pftrace" "select group_concat(k, ' ') from (select category || ':' || name || ':' || count(*) k from slice group by category, name order by 1)")" \
	"dbg_on:f_dbg_on:50 dbg_on:i_dbg_on:50 train:f_train:50 train:i_train:50"

# ------------------------------------------------ the example (system) ----
session loader 'data_sources { config { name: "track_event" track_event_config { enabled_categories: "data" enabled_categories: "train" } } }'
py loader.app "$EXAMPLE" --batches 100
ran loader.app sdk_python/example_system 120
end_session loader || fail sdk_python/example_system_trace "no trace"
T=$SVC_TMP/loader.pftrace
expect sdk_python/example_system_slices "$(q "$T" "$PER_THREAD")" \
	"loader:load_batch:100 loader:read_batch:100 trainer:epoch_end:1 trainer:train_step:100"
expect sdk_python/example_system_flows "$(q "$T" "select count(*) from flow f join slice a on f.slice_out = a.id join slice b on f.slice_in = b.id where a.name = 'load_batch' and b.name = 'train_step' and a.arg_set_id is not null")" 100

# --------------------------------------------- the example (in-process) ----
py loader.inproc "$EXAMPLE" --batches 100 --out "$SVC_TMP/loader_ip.pftrace"
ran loader.inproc sdk_python/example_inprocess 120
T=$SVC_TMP/loader_ip.pftrace
expect sdk_python/example_inprocess_slices "$(q "$T" "$PER_THREAD")" \
	"loader:load_batch:100 loader:read_batch:100 trainer:epoch_end:1 trainer:train_step:100"
expect sdk_python/example_inprocess_nested "$(q "$T" "select count(*) from slice s join slice p on s.parent_id = p.id where s.name = 'read_batch' and p.name = 'load_batch'")" 100
expect sdk_python/example_inprocess_flows "$(q "$T" "select count(*) from flow f join slice a on f.slice_out = a.id join slice b on f.slice_in = b.id where a.name = 'load_batch' and b.name = 'train_step'")" 100
expect sdk_python/example_inprocess_batch_args "$(q "$T" "select count(distinct a.int_value) from slice s join args a using(arg_set_id) where s.name = 'train_step' and a.key = 'debug.batch'")" 100
t=sdk_python/example_inprocess_counters
c=$(q "$T" "select count(*) || ',' || max(c.value) from counter c join counter_track t on c.track_id = t.id where t.name = 'queue_depth'")
case $c in
201,[1-8].0) pass $t ;;
*) fail $t "queue_depth: got '$c', want 201 samples (100 puts, 101 gets) of at most 8" ;;
esac
expect sdk_python/example_inprocess_loss "$(q "$T" "select count(*) from counter c join counter_track t on c.track_id = t.id where t.name = 'loss'")" 100

# --------------------------------------------------------- in-process ----
py inproc "$APP" inproc --out "$SVC_TMP/inproc.pftrace"
ran inproc sdk_python/inprocess_app 120
expect sdk_python/inprocess_no_drops "$(val inproc events_dropped)" 0
expect sdk_python/inprocess_default "$(q "$SVC_TMP/inproc.pftrace" "$PER_THREAD")" \
	"inproc-worker:ip_slice:1000 inproc-worker:ip_tick:1000"
expect sdk_python/inprocess_args "$(q "$SVC_TMP/inproc.pftrace" "select sum(a.int_value) from slice s join args a using(arg_set_id) where s.name = 'ip_slice' and a.key = 'debug.i'")" 499500
expect sdk_python/inprocess_reinit_config "$(q "$SVC_TMP/inproc.pftrace.2" "$PER_THREAD")" \
	"inproc-worker:ip_tick:1000"
expect sdk_python/inprocess_reinit_counter "$(q "$SVC_TMP/inproc.pftrace.2" "select count(*) from counter c join counter_track t on c.track_id = t.id where t.name = 'ip_counter'")" 1
t=sdk_python/inprocess_nesting
if nesting_ok "$SVC_TMP/inproc.pftrace"; then pass $t; else fail $t "bad nesting or unended slices"; fi

# ------------------------------------ the program in docs/sdk-python.md ----
mkdir -p "$SVC_TMP/doc"
awk '/sdk_python.sh runs this program/ { on = 1; next }
	on && /^    / { print substr($0, 5); seen = 1; next }
	on && /^$/ { print ""; next }
	on && seen { exit }' docs/sdk-python.md >"$SVC_TMP/doc/first.py"
# shellcheck disable=SC2086
svc_bg doc env -C "$SVC_TMP/doc" $PY_ENV "$PY" first.py
ran doc sdk_python/doc_program 60
T=$SVC_TMP/doc/train.pftrace
expect sdk_python/doc_program_slices "$(q "$T" "$PER_THREAD")" \
	"MainThread:optimizer_step:100 MainThread:step:100"
expect sdk_python/doc_program_nested "$(q "$T" "select count(*) from slice s join slice p on s.parent_id = p.id where s.name = 'optimizer_step' and p.name = 'step'")" 100
expect sdk_python/doc_program_counter "$(q "$T" "select count(*) || ':' || max(c.value) from counter c join counter_track t on c.track_id = t.id where t.name = 'lr'")" "100:0.1"

# -------------------------------------------- names past the name cache ----
py dynamic "$APP" dynamic --out "$SVC_TMP/dynamic.pftrace"
ran dynamic sdk_python/dynamic_app 60
T=$SVC_TMP/dynamic.pftrace
expect sdk_python/dynamic_names "$(q "$T" "select count(distinct name) || ',' || count(*) from slice where name like 'dyn_%'")" "40,80"
expect sdk_python/dynamic_arg_names "$(q "$T" "select count(*) from slice s join args a using(arg_set_id) where a.key = 'debug.k' || substr(s.name, 5) and a.int_value = cast(substr(s.name, 5) as int)")" 40
expect sdk_python/dynamic_cache_bounded "$(val dynamic cache | cut -d, -f1)" "$(val dynamic cache | cut -d, -f2)"

summary

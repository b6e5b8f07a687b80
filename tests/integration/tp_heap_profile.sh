#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_heap_profile.sh - heap profiles in the trace processor, end to end.
# tools/heap_profile records hp_known at 4 KiB sampling (64 MiB + its
# 8 KiB table kept by leak_a, 32 MiB allocated and freed by churn_b, 10 MiB
# kept by small_c: 8 MiB of 32-byte blocks and a 2 MiB table); then
# - our heap_profile_allocation attributes each path within 5%, churn_b's
#   frees equal its allocations, and every free row is negative;
# - pfc_flamegraph --heap (unreleased) and --heap=allocated say the same;
# - `trace_processor_shell convert profile` writes a pprof file whose
#   stacks (tests/integration/pprof_decode.py) carry the same bytes;
# - with Perfetto's trace processor (UPSTREAM_TP, else SHARED/upstream; the
#   reason is printed when absent) the tables and the decoded pprof
#   profiles and the android.memory.heap_profile.* modules are the same
#   as ours, on that trace and on the importer's
#   fuzz seed (fuzz/corpus/tp/heap_profile.pb: both interning styles,
#   continued and malformed dumps, every heapprofd_* stat).
# Usage: OUT=out [UPSTREAM_TP=...] [SHARED=../shared] sh tests/integration/tp_heap_profile.sh
. "$(dirname "$0")/lib.sh"

T=tp_heap_profile
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TP="$OUT/trace_processor_shell"
FG="$OUT/pfc_flamegraph"
SHARED=${SHARED:-$ROOT/../shared}
UP_TP=${UPSTREAM_TP:-$SHARED/upstream/bin/trace_processor_shell}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tp_heap_profile.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
SEED="$ROOT/fuzz/corpus/tp/heap_profile.pb"
DECODE="$ROOT/tests/integration/pprof_decode.py"

for _b in "$TP" "$FG" "$OUT/traced" "$OUT/perfetto" "$OUT/heapprofd" "$OUT/hp/hp_known" \
	"$OUT/lib/libheapprofd_glibc_preload.so"; do
	if ! [ -e "$_b" ]; then
		fail "$T/build" "$_b missing (make)"
		summary
		exit 1
	fi
done

# within NAME GOT WANT: GOT within 5% of WANT.
within() {
	if [ -n "$2" ] && awk -v g="$2" -v w="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= w * 0.05) }'; then
		pass "$1"
	else
		fail "$1" "got '$2' bytes, want $3 +- 5%"
	fi
}

LEAK=$((64 * 1048576 + 8192))
CHURN=$((32 * 1048576))
SMALL=$((10 * 1048576))

# ---------------------------------------------------------------- record ----
REC="$TMP/rec"
if timeout -k 5 180 "$ROOT/tools/heap_profile" host --bin-dir "$OUT" -i 4096 -o "$REC" -- \
	"$OUT/hp/hp_known" --no-wait >"$TMP/hp.out" 2>"$TMP/hp.err" &&
	[ -s "$REC/raw-trace" ]; then
	pass "$T/heap_profile_tool"
else
	fail "$T/heap_profile_tool" "$(tail -n 3 "$TMP/hp.err" | tr '\n' ' ')"
	summary
	exit 1
fi
TRACE="$REC/raw-trace"
for _f in heap.svg heap.folded; do
	check "$T/tool_wrote_$_f" test -s "$REC/$_f"
done
if ls "$REC"/heap_dump.*.*.libc.malloc.pb >/dev/null 2>&1; then
	pass "$T/tool_wrote_pprof"
else
	fail "$T/tool_wrote_pprof" "$(ls "$REC" | tr '\n' ' ')"
fi

# --------------------------------------------------------------- our SQL ----
cat >"$TMP/paths.sql" <<'EOF'
select f.name as fn,
  sum(case when a.size > 0 then a.size else 0 end) as allocated,
  -sum(case when a.size < 0 then a.size else 0 end) as freed
from heap_profile_allocation a
join stack_profile_callsite c on a.callsite_id = c.id
join stack_profile_frame f on c.frame_id = f.id
where f.name in ('leak_a', 'churn_b', 'small_c')
group by f.name order by f.name;
EOF
if "$TP" -q "$TMP/paths.sql" "$TRACE" >"$TMP/paths.csv" 2>"$TMP/tp.err"; then
	pass "$T/sql"
else
	fail "$T/sql" "$(tail -n 2 "$TMP/tp.err")"
fi
row() { sed -n "s/^\"$1\",\([0-9]*\),\([0-9]*\)\$/\1 \2/p" "$TMP/paths.csv"; }
within "$T/sql/leak_a_unreleased" "$(row leak_a | awk '{ print $1 - $2 }')" "$LEAK"
within "$T/sql/churn_b_allocated" "$(row churn_b | awk '{ print $1 }')" "$CHURN"
within "$T/sql/churn_b_freed" "$(row churn_b | awk '{ print $2 }')" "$CHURN"
_r=$(row churn_b)
if [ -n "$_r" ] && [ "$(echo "$_r" | awk '{ print $1 - $2 }')" = 0 ]; then
	pass "$T/sql/churn_b_all_freed"
else
	fail "$T/sql/churn_b_all_freed" "allocated, freed: '$_r'"
fi
within "$T/sql/small_c_unreleased" "$(row small_c | awk '{ print $1 - $2 }')" "$SMALL"
check "$T/sql/signs" test "$("$TP" -Q "select count(*) from heap_profile_allocation where (size < 0) != (count < 0) or size = 0" "$TRACE" 2>/dev/null | tail -n 1)" = 0
check "$T/sql/heap_profile_row" test "$("$TP" -Q "select count(*) from heap_profile hp join heap_profile_allocation a on a.upid = hp.upid and a.ts = hp.ts_end where hp.heap_name = 'libc.malloc' and hp.dur > 0" "$TRACE" 2>/dev/null | tail -n 1)" -gt 0

# ------------------------------------------------------------ flame graph ----
fg_bytes() { # MODE FN: the bytes of the stack ending in FN
	"$FG" "$1" "$TRACE" 2>/dev/null | awk -v fn="$2" '{ n = split($1, a, ";"); if (a[n] == fn) s += $2 } END { print s + 0 }'
}
within "$T/flamegraph/leak_a" "$(fg_bytes --heap leak_a)" "$LEAK"
within "$T/flamegraph/small_c" "$(fg_bytes --heap small_c)" "$SMALL"
check "$T/flamegraph/churn_b_released" test "$(fg_bytes --heap churn_b)" = 0
within "$T/flamegraph/allocated_churn_b" "$(fg_bytes --heap=allocated churn_b)" "$CHURN"
if "$FG" --heap "$ROOT/fuzz/corpus/tp/sched.pb" >/dev/null 2>"$TMP/fg.err"; then
	fail "$T/flamegraph/no_heap_profile" "exit 0 on a trace without a heap profile"
else
	check "$T/flamegraph/no_heap_profile" grep -q "has no heap profile" "$TMP/fg.err"
fi
if "$FG" --heap --per-thread "$TRACE" >/dev/null 2>"$TMP/fg.err"; then
	fail "$T/flamegraph/per_thread_refused" "exit 0"
else
	check "$T/flamegraph/per_thread_refused" grep -q "per process" "$TMP/fg.err"
fi

# ----------------------------------------------------------------- pprof ----
PP="$TMP/pp_ours"
if "$TP" convert profile --output-dir "$PP" "$TRACE" 2>"$TMP/conv.err" &&
	python3 "$DECODE" "$PP"/heap_dump.1.*.libc.malloc.pb >"$TMP/pp_ours.txt"; then
	pass "$T/pprof/convert"
else
	fail "$T/pprof/convert" "$(tail -n 2 "$TMP/conv.err")"
fi
check "$T/pprof/sample_types" grep -qx "types Total malloc count/count, Total malloc size/bytes, Unreleased malloc count/count, Unreleased malloc size/bytes" "$TMP/pp_ours.txt"
pp_col() { # COLUMN FN: the sum of value COLUMN over stacks whose leaf is FN
	awk -F'\t' -v c="$1" -v fn="$2" '$2 != "" { split($2, fr, ";"); split(fr[1], p, "|"); if (p[1] == fn) { split($1, v, " "); s += v[c] } } END { print s + 0 }' "$TMP/pp_ours.txt"
}
within "$T/pprof/leak_a_unreleased" "$(pp_col 4 leak_a)" "$LEAK"
within "$T/pprof/churn_b_total" "$(pp_col 2 churn_b)" "$CHURN"
check "$T/pprof/churn_b_unreleased" test "$(pp_col 4 churn_b)" = 0
within "$T/pprof/small_c_unreleased" "$(pp_col 4 small_c)" "$SMALL"
if "$TP" convert profile --output-dir "$TMP/none" "$ROOT/fuzz/corpus/tp/sched.pb" 2>"$TMP/conv.err"; then
	fail "$T/pprof/no_profile" "exit 0 on a trace without a profile"
else
	check "$T/pprof/no_profile" grep -q "no profile found" "$TMP/conv.err"
fi

# ------------------------------------------------------------- fuzz seed ----
# The seed's rows as Perfetto's importer makes them (checked against it
# below when it is available): deltas per callsite and dump, frees
# negative, the malformed dump and the unknown callstacks left out.
"$TP" -Q "select ts, upid, heap_name, callsite_id, count, size from heap_profile_allocation order by id" \
	"$SEED" >"$TMP/seed.csv" 2>/dev/null
cat >"$TMP/seed.want" <<'EOF'
"ts","upid","heap_name","callsite_id","count","size"
290,1,"libc.malloc",1,2,8192
290,1,"libc.malloc",2,1,4096
290,1,"libc.malloc",2,-1,-4096
390,1,"libc.malloc",1,2,8192
390,1,"libc.malloc",1,-1,-4096
500,3,"unknown",3,3,1000
500,3,"unknown",3,-1,-10
EOF
if cmp -s "$TMP/seed.csv" "$TMP/seed.want"; then
	pass "$T/seed/allocations"
else
	fail "$T/seed/allocations" "$(diff "$TMP/seed.csv" "$TMP/seed.want" | head -n 6 | tr '\n' ' ')"
fi
"$TP" -Q "select name || ':' || coalesce(idx, '') || '=' || value from stats where name in ('heapprofd_malformed_packet', 'heapprofd_missing_packet', 'heapprofd_buffer_overran', 'heapprofd_sampling_interval_adjusted', 'stackprofile_invalid_callstack_id') and value != 0 order by name" \
	"$SEED" >"$TMP/seed.stats" 2>/dev/null
check "$T/seed/stats" test "$(tail -n +2 "$TMP/seed.stats" | tr -d '"' | tr '\n' ' ')" = \
	"heapprofd_buffer_overran:42=1 heapprofd_malformed_packet:3=2 heapprofd_missing_packet:=1 heapprofd_sampling_interval_adjusted:42=4096 stackprofile_invalid_callstack_id:=1 "

# -------------------------------------------------------------- upstream ----
cat >"$TMP/tables.sql" <<'EOF'
select * from heap_profile_allocation order by id;
select * from heap_profile order by id;
select * from stack_profile_mapping order by id;
select * from stack_profile_frame order by id;
select * from stack_profile_callsite order by id;
select name, idx, severity, source, value from stats
where value != 0 and (name like 'heapprofd%' or name like 'stackprofile%'
  or name = 'interned_data_tokenizer_errors') order by name, idx;
select upid, pid from process order by upid;
EOF
cat >"$TMP/stdlib.sql" <<'EOF'
INCLUDE PERFETTO MODULE android.memory.heap_profile.summary_tree;
INCLUDE PERFETTO MODULE android.memory.heap_profile.callstacks;
INCLUDE PERFETTO MODULE android.memory.heap_profile.intervals;
SELECT * FROM android_heap_profile_summary_tree ORDER BY id;
SELECT * FROM _android_heap_profile_callstacks_for_allocations!((
  SELECT callsite_id, size, count, max(size, 0) AS alloc_size, max(count, 0) AS alloc_count
  FROM heap_profile_allocation)) ORDER BY id;
SELECT * FROM _android_heap_profile_intervals ORDER BY id;
EOF
if ! [ -x "$UP_TP" ]; then
	skip "$T/upstream" "no Perfetto trace_processor_shell at $UP_TP (set UPSTREAM_TP or SHARED)"
else
	for _c in "recorded:$TRACE" "fuzz_seed:$SEED"; do
		_n=${_c%%:*}
		_t=${_c#*:}
		"$TP" -q "$TMP/tables.sql" "$_t" >"$TMP/$_n.ours" 2>/dev/null
		"$UP_TP" -q "$TMP/tables.sql" "$_t" >"$TMP/$_n.up" 2>/dev/null
		if [ -s "$TMP/$_n.up" ] && cmp -s "$TMP/$_n.ours" "$TMP/$_n.up"; then
			pass "$T/upstream/$_n/tables"
		else
			fail "$T/upstream/$_n/tables" "$(diff "$TMP/$_n.ours" "$TMP/$_n.up" | head -n 6 | tr '\n' ' ')"
		fi
		"$TP" -q "$TMP/stdlib.sql" "$_t" >"$TMP/$_n.std.ours" 2>&1
		"$UP_TP" -q "$TMP/stdlib.sql" "$_t" >"$TMP/$_n.std.up" 2>/dev/null
		if [ -s "$TMP/$_n.std.up" ] && cmp -s "$TMP/$_n.std.ours" "$TMP/$_n.std.up"; then
			pass "$T/upstream/$_n/stdlib"
		else
			fail "$T/upstream/$_n/stdlib" "$(diff "$TMP/$_n.std.ours" "$TMP/$_n.std.up" | head -n 6 | tr '\n' ' ')"
		fi
		rm -rf "$TMP/a" "$TMP/b"
		"$TP" convert profile --output-dir "$TMP/a" "$_t" 2>/dev/null
		"$UP_TP" convert profile --output-dir "$TMP/b" "$_t" >/dev/null 2>&1
		_same=1
		_files=$(cd "$TMP/b" 2>/dev/null && ls)
		[ -n "$_files" ] && [ "$_files" = "$(cd "$TMP/a" 2>/dev/null && ls)" ] || _same=0
		for _f in $_files; do
			python3 "$DECODE" "$TMP/a/$_f" >"$TMP/a.txt" 2>&1
			python3 "$DECODE" "$TMP/b/$_f" >"$TMP/b.txt" 2>&1
			cmp -s "$TMP/a.txt" "$TMP/b.txt" || _same=0
		done
		if [ "$_same" = 1 ]; then
			pass "$T/upstream/$_n/pprof"
		else
			fail "$T/upstream/$_n/pprof" "files: ours '$(cd "$TMP/a" 2>/dev/null && ls | tr '\n' ' ')', upstream '$_files'"
		fi
	done
fi
summary

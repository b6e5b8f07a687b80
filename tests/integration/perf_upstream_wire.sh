#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# perf_upstream_wire.sh - traced_perf's packets read with upstream
# Perfetto's own .proto schema: a 1 s recording of perf_hot with kernel
# frames and DWARF user stacks and a page-fault follower decodes as
# upstream's Trace with no field upstream does not know, and upstream's
# names carry the sample and its interned callstack: perf_sample's cpu,
# pid, tid, timebase_count, follower_counts, callstack_iid; interned
# function_names, frames (function_name_id, mapping_id, rel_pc),
# callstacks (frame_ids), mappings (build_id, path_string_ids), build_ids,
# mapping_paths; perf_sample_defaults in trace_packet_defaults. The schema
# is read from a Perfetto checkout with protoc ($PERFETTO_CHECKOUT, else
# ../.mirror/google+perfetto/repo beside this repository; protoc prints
# unknown fields by number), else from upstream's trace processor
# (UPSTREAM_TP: --analyze-trace-proto-content lists every field path it
# met, unknown ones as "#unknown"). With UPSTREAM_TP, its trace processor
# and ours also give the same rows for the samples, their leaf frames,
# the callsite tree and the mappings. Skipped with the reason when there
# is neither a checkout with protoc nor UPSTREAM_TP.
# Usage: OUT=out [UPSTREAM_TP=...] sh tests/integration/perf_upstream_wire.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"
. "$(dirname "$0")/perf_lib.sh"

T=perf_upstream_wire
svc_require_bins traced traced_perf perfetto perf_hot
checkout=${PERFETTO_CHECKOUT:-$ROOT/../.mirror/google+perfetto/repo}
# The schema half needs upstream's .proto files and protoc; the trace
# processor half needs UPSTREAM_TP. Either alone runs; neither: skip.
schema=""
if ! git --git-dir="$checkout" rev-parse -q --verify HEAD:protos/perfetto/trace/trace.proto >/dev/null 2>&1 &&
	! [ -f "$checkout/protos/perfetto/trace/trace.proto" ]; then
	schema_why="no Perfetto checkout at $checkout (set PERFETTO_CHECKOUT)"
elif ! command -v protoc >/dev/null 2>&1; then
	schema_why="protoc is not installed"
else
	schema=yes
fi
if [ -z "$schema" ] && [ -z "${UPSTREAM_TP:-}" ]; then
	skip $T/all "$schema_why; UPSTREAM_TP is not set (Perfetto's trace_processor_shell)"
	summary
	exit 0
fi
perf_require $T
if [ -n "$schema" ]; then
	mkdir -p "$SVC_TMP/up"
	if [ -f "$checkout/protos/perfetto/trace/trace.proto" ]; then
		cp -r "$checkout/protos" "$SVC_TMP/up/"
	else
		# One file at a time: a partial clone may lack blobs `git archive` wants.
		git --git-dir="$checkout" ls-tree -r --name-only HEAD protos/perfetto | grep '\.proto$' |
			while read -r f; do
				mkdir -p "$SVC_TMP/up/$(dirname "$f")"
				git --git-dir="$checkout" show "HEAD:$f" >"$SVC_TMP/up/$f" 2>/dev/null
			done
	fi
fi
perf_setup $T

"$OUT/perf_hot" spin 3 >/dev/null 2>&1 &
hot=$!
svc_cfg wire 'buffers { size_kb: 32768 }
data_sources { config { name: "linux.perf" perf_event_config {
  timebase { frequency: 200 counter: SW_CPU_CLOCK }
  followers { counter: SW_PAGE_FAULTS }
  callstack_sampling { kernel_frames: true user_frames: UNWIND_DWARF }
  ring_buffer_pages: 512
} } }
duration_ms: 1000'
if ! perf_record wire 30; then
	fail $T/record "recording failed: $(svc_errtail wire) $(svc_errtail perf)"
	summary
	exit 1
fi
kill $hot 2>/dev/null
wait $hot 2>/dev/null

# The trace decoded by upstream's schema: with a checkout, protoc's text
# (unknown fields print as "<number>: value" or "<number> {"); else the
# field paths upstream's trace processor met (its schema is built in;
# --analyze-trace-proto-content lists unknown fields as "#unknown.").
P=TracePacket
I=$P.#interned_data.InternedData
S=$P.#perf_sample.PerfSample
D=$P.#trace_packet_defaults.TracePacketDefaults.#perf_sample_defaults.PerfSampleDefaults
if [ -n "$schema" ]; then
	if protoc -I"$SVC_TMP/up" --decode=perfetto.protos.Trace protos/perfetto/trace/trace.proto \
		<"$SVC_TMP/wire.pb" >"$SVC_TMP/wire.txt" 2>"$SVC_TMP/wire.derr" && [ -s "$SVC_TMP/wire.txt" ]; then
		pass $T/decodes
	else
		fail $T/decodes "upstream's schema rejects the trace: $(head -n 2 "$SVC_TMP/wire.derr" | tr '\n' ' ')"
	fi
	unknown=$(grep -nE '^ *[0-9]+(:| \{)' "$SVC_TMP/wire.txt" | head -n 3 | tr '\n' ' ')
else
	printf '%s\n' "SELECT path FROM experimental_proto_content ORDER BY path;" >"$SVC_TMP/paths.sql"
	if "$UPSTREAM_TP" --analyze-trace-proto-content -q "$SVC_TMP/paths.sql" "$SVC_TMP/wire.pb" \
		>"$SVC_TMP/paths.csv" 2>"$SVC_TMP/paths.err" && grep -qF "\"$S\"" "$SVC_TMP/paths.csv"; then
		pass $T/decodes
	else
		fail $T/decodes "upstream's trace processor found no perf_sample: $(tail -n 2 "$SVC_TMP/paths.err" | tr '\n' ' ')"
	fi
	unknown=$(grep -F '#unknown' "$SVC_TMP/paths.csv" | head -n 3 | tr '\n' ' ')
fi
if [ -z "$unknown" ]; then pass $T/no_unknown_fields; else fail $T/no_unknown_fields "fields upstream does not know: $unknown"; fi

# field NAME TEXT_LINE PATH: the decoded trace has the field: a line of
# protoc's text matching TEXT_LINE, or a field path starting with PATH.
field() {
	if [ -n "$schema" ]; then
		if grep -qE "$2" "$SVC_TMP/wire.txt"; then pass "$T/$1"; else fail "$T/$1" "no line matches '$2'"; fi
	elif grep -qF "\"$3" "$SVC_TMP/paths.csv"; then
		pass "$T/$1"
	else
		fail "$T/$1" "upstream met no field $3"
	fi
}
field sample_block '^  perf_sample \{' "$S\""
for f in cpu pid tid timebase_count follower_counts callstack_iid; do
	field "sample_$f" "^    $f: " "$S.#$f."
done
field defaults '^    perf_sample_defaults \{' "$D\""
field defaults_timebase '^      timebase \{' "$D.#timebase."
field interned '^  interned_data \{' "$I\""
field function_names '^    function_names \{' "$I.#function_names."
field frames '^    frames \{' "$I.#frames."
field frame_fields '^      rel_pc: ' "$I.#frames.Frame.#rel_pc."
field frame_mapping '^      mapping_id: ' "$I.#frames.Frame.#mapping_id."
field frame_name '^      function_name_id: ' "$I.#frames.Frame.#function_name_id."
field callstacks '^    callstacks \{' "$I.#callstacks."
field callstack_frames '^      frame_ids: ' "$I.#callstacks.Callstack.#frame_ids."
field mappings '^    mappings \{' "$I.#mappings."
field mapping_paths '^    mapping_paths \{' "$I.#mapping_paths."
field mapping_path_ids '^      path_string_ids: ' "$I.#mappings.Mapping.#path_string_ids."
field build_ids '^    build_ids \{' "$I.#build_ids."
# The hot loop's function names reached the trace: in the interned strings,
# or as upstream's frame names.
if [ -n "$schema" ]; then
	field hot_name 'str: "hot_[ab]"' ""
else
	printf '%s\n' "SELECT COUNT(*) FROM stack_profile_frame WHERE name GLOB 'hot_[ab]*';" >"$SVC_TMP/hot.sql"
	n=$("$UPSTREAM_TP" -q "$SVC_TMP/hot.sql" "$SVC_TMP/wire.pb" 2>/dev/null | tail -n 1)
	if [ "${n:-0}" -gt 0 ] 2>/dev/null; then pass $T/hot_name; else fail $T/hot_name "upstream's trace processor names no frame hot_a/hot_b ($n)"; fi
fi

# With UPSTREAM_TP (Perfetto's trace_processor_shell), both trace
# processors read the same trace: the same sample counts, the same leaf
# frame names per sample, the same callsite tree (frame names, depths) and
# mappings, to the byte of their CSV output.
# same_as_upstream NAME SQL
same_as_upstream() {
	printf '%s\n' "$2" >"$SVC_TMP/q_$1.sql"
	"$OUT/trace_processor_shell" -q "$SVC_TMP/q_$1.sql" "$SVC_TMP/wire.pb" >"$SVC_TMP/ours_$1.csv" 2>"$SVC_TMP/ours_$1.err"
	"$UPSTREAM_TP" -q "$SVC_TMP/q_$1.sql" "$SVC_TMP/wire.pb" >"$SVC_TMP/up_$1.csv" 2>"$SVC_TMP/up_$1.err"
	if [ ! -s "$SVC_TMP/up_$1.csv" ]; then
		fail "$T/upstream_tp_$1" "upstream's trace processor printed nothing: $(tail -n 2 "$SVC_TMP/up_$1.err" | tr '\n' ' ')"
	elif cmp -s "$SVC_TMP/ours_$1.csv" "$SVC_TMP/up_$1.csv"; then
		pass "$T/upstream_tp_$1"
	else
		fail "$T/upstream_tp_$1" "ours and upstream's differ: $(diff "$SVC_TMP/ours_$1.csv" "$SVC_TMP/up_$1.csv" | grep '^[<>]' | head -n 4 | tr '\n' ' ')"
	fi
}
if [ -z "${UPSTREAM_TP:-}" ]; then
	skip $T/upstream_tp "UPSTREAM_TP is not set (Perfetto's trace_processor_shell)"
else
	same_as_upstream counts "SELECT COUNT(*) AS samples, COUNT(callsite_id) AS with_stack,
  COUNT(DISTINCT utid) AS threads, COUNT(DISTINCT cpu) AS cpus FROM perf_sample;"
	same_as_upstream leaves "SELECT f.name AS name, COUNT(*) AS n FROM perf_sample s
  JOIN stack_profile_callsite c ON c.id = s.callsite_id
  JOIN stack_profile_frame f ON f.id = c.frame_id GROUP BY f.name ORDER BY n DESC, name;"
	same_as_upstream frames "SELECT f.name AS name, COUNT(*) AS n, SUM(c.depth) AS depths
  FROM stack_profile_callsite c JOIN stack_profile_frame f ON f.id = c.frame_id
  GROUP BY f.name ORDER BY name;"
	same_as_upstream mappings "SELECT name, build_id, COUNT(*) AS n FROM stack_profile_mapping
  GROUP BY name, build_id ORDER BY name, build_id;"
fi

perf_check_exit $T
summary

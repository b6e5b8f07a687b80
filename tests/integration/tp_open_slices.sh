#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_open_slices.sh - the arg sets of slices still open at the end of a
# trace are numbered as upstream Perfetto numbers them (in the slot order of
# its hash map of slice stacks, src/trace_processor/import/common/
# track_order.c), and an unsigned arg of exactly 2^63 reads as int_value
# -9223372036854775808 (not NULL). The trace is made here: 900 TrackEvent
# tracks (past the map's first growth at 768), each with 1 to 3 nested open
# slices with an arg, begun in a scrambled track order; every fifth track
# closes its top slice. Checked against digests of upstream v58.2's answer
# (always) and against upstream's trace_processor_shell itself when it is
# here (UPSTREAM_TP or $SHARED/upstream).
. "$(dirname "$0")/lib.sh"

root=$(repo_root)
out=${OUT:-out}
case $out in /*) ;; *) out=$root/$out ;; esac
tp=$out/trace_processor_shell
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Track u (1..900) is begun at position (u * 337) mod 900: a fixed scramble.
awk 'BEGIN {
	n = 900
	print "packet { trusted_packet_sequence_id: 1 timestamp: 0 incremental_state_cleared: 1 first_packet_on_sequence: 1 }"
	for (u = 1; u <= n; u++)
		printf "packet { trusted_packet_sequence_id: 1 timestamp: 1 track_descriptor { uuid: %d name: \"t%d\" } }\n", 1000 + u, u
	for (k = 0; k < n; k++) pos[(k * 337) % n] = k + 1
	ts = 10
	for (p = 0; p < n; p++) {
		u = pos[p]
		for (d = 0; d <= u % 3; d++)
			printf "packet { trusted_packet_sequence_id: 1 timestamp: %d sequence_flags: 2 track_event { track_uuid: %d categories: \"c\" name: \"s%d_%d\" type: 1 debug_annotations { name: \"k\" int_value: %d } } }\n", ++ts, 1000 + u, u, d, u * 10 + d
		if (u % 5 == 0)
			printf "packet { trusted_packet_sequence_id: 1 timestamp: %d sequence_flags: 2 track_event { track_uuid: %d type: 2 } }\n", ++ts, 1000 + u
	}
	printf "packet { trusted_packet_sequence_id: 1 timestamp: %d sequence_flags: 2 track_event { track_uuid: 1001 categories: \"c\" name: \"big\" type: 3 debug_annotations { name: \"u\" uint_value: 9223372036854775808 } } }\n", ++ts
}' >"$work/t.textproto"
if ! "$out/pfc_pbtxt" --type Trace encode "$work/t.textproto" >"$work/t.pb" 2>"$work/enc.err"; then
	fail tp_open_slices/encode "$(head -c 300 "$work/enc.err")"
	summary
	exit $?
fi

q_slices="select id, arg_set_id, dur, depth from slice order by id"
q_big="select s.name, a.key, a.int_value, a.display_value, a.value_type from slice s join args a using (arg_set_id) where s.name = 'big' and a.key = 'debug.u'"
q_filter="select count(*) from args where int_value = -9223372036854775808"
for q in slices big filter; do
	eval "printf '%s\n' \"\$q_$q\"" >"$work/$q.sql"
	"$tp" -q "$work/$q.sql" "$work/t.pb" >"$work/ours_$q.txt" 2>"$work/ours_$q.err" ||
		fail "tp_open_slices/$q" "our shell exited $?: $(head -c 300 "$work/ours_$q.err")"
done

# Digests of upstream v58.2's output for the same queries on this trace.
want_slices=3e2888689b17433c6914a1fd822a12e3
want_big=ddc5f60fa792e0a4ca8601fec2576933
want_filter=9188e53a117f118294e7a66d166c1962
for q in slices big filter; do
	got=$(md5sum <"$work/ours_$q.txt" | cut -d' ' -f1)
	eval "want=\$want_$q"
	if [ "$got" = "$want" ]; then
		pass "tp_open_slices/$q/digest"
	else
		fail "tp_open_slices/$q/digest" "md5 $got, upstream's $want: $(head -n 3 "$work/ours_$q.txt" | tr '\n' ' ')"
	fi
done

if [ -z "${UPSTREAM_TP:-}" ]; then
	skip tp_open_slices/upstream "upstream's trace_processor_shell is not here (UPSTREAM_TP or \$SHARED/upstream)"
else
	for q in slices big filter; do
		"$UPSTREAM_TP" -q "$work/$q.sql" "$work/t.pb" >"$work/up_$q.txt" 2>/dev/null
		if cmp -s "$work/up_$q.txt" "$work/ours_$q.txt"; then
			pass "tp_open_slices/$q/upstream"
		else
			fail "tp_open_slices/$q/upstream" "$(diff "$work/up_$q.txt" "$work/ours_$q.txt" | head -n 5 | tr '\n' ' ')"
		fi
	done
fi
summary

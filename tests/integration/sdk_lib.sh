# SPDX-License-Identifier: Apache-2.0
# sdk_lib.sh - helpers shared by the SDK's integration tests (sdk_c.sh,
# sdk_python.sh): one-value queries, a track_event session in the
# background, and the slice nesting check. Source it after lib.sh and
# svc_lib.sh; $TP is the trace processor to query with.

case $0 in
*/sdk_lib.sh | sdk_lib.sh)
	echo "0 passed, 0 failed, 0 skipped"
	exit 0
	;;
esac

TP=${TP:-$OUT/trace_processor_shell}

# q TRACE SQL: the single value a query prints (its second CSV line).
q() {
	printf '%s\n' "$2" >"$SVC_TMP/q.sql"
	"$TP" -q "$SVC_TMP/q.sql" "$1" 2>"$SVC_TMP/q.err" | sed -n 2p | tr -d '"'
}

# expect NAME GOT WANT: pass if equal.
expect() {
	if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'"; fi
}

# Every category, writers stalling rather than dropping.
TE_ALL='data_sources { config { name: "track_event" track_event_config { enabled_categories: "*" } buffer_exhausted_policy: BUFFER_EXHAUSTED_STALL_THEN_DROP } }'

# session NAME CONFIG_TAIL: a perfetto session in the background writing
# $SVC_TMP/NAME.pftrace: a buffer of $SDK_SESSION_KB (default 64 MiB) plus
# CONFIG_TAIL.
session() {
	svc_cfg "$1" "buffers { size_kb: ${SDK_SESSION_KB:-65536} fill_policy: DISCARD }
$2"
	svc_bg "$1" "$OUT/perfetto" --txt -c "$SVC_TMP/$1.pbtxt" -o "$SVC_TMP/$1.pftrace"
}

# end_session NAME: SIGINT, wait for the file.
end_session() {
	# Ctrl-C, then as long as it takes to flush and write (no KILL after
	# 3 s: a busy machine's perfetto took longer for 1.28 M events and
	# left a quarter of them).
	kill -INT "$(svc_pid "$1")" 2>/dev/null
	svc_wait "$1" 120 >/dev/null 2>&1
	[ -s "$SVC_TMP/$1.pftrace" ]
}

# nesting_ok TRACE: every slice ended, parents one level up on the same track.
nesting_ok() {
	[ "$(q "$1" "select count(*) from slice where dur < 0")" = 0 ] &&
		[ "$(q "$1" "select count(*) from slice where depth > 0 and parent_id is null")" = 0 ] &&
		[ "$(q "$1" "select count(*) from slice s join slice p on s.parent_id = p.id
			where p.depth != s.depth - 1 or p.track_id != s.track_id or p.ts > s.ts
			or p.ts + p.dur < s.ts + s.dur")" = 0 ]
}

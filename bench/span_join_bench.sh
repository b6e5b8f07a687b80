#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# span_join_bench.sh - what SPAN_JOIN, SPAN_LEFT_JOIN and SPAN_OUTER_JOIN
# cost in our trace_processor_shell beside upstream's, in one run.
#
# Synthetic: two tables of N spans each (default 1 M) over 64 partitions,
# overlapping at random, built in SQL; each join is materialized
# (CREATE PERFETTO TABLE ... AS SELECT * FROM the join) and summed. The
# time of the same run without the join (the tables only) is subtracted,
# so the figure is the join's. With --trace FILE it also times the span
# join the stdlib runs on a real trace: linux.cpu.utilization.general's
# _cpu_freq_per_thread (sched left-joined with the CPU frequencies).
# Printed: seconds and peak RSS (MB) per engine, and upstream / ours.
# Never fails: a figure it cannot take is printed as skipped.
#
#   bench/span_join_bench.sh [--rows N] [--trace FILE]
#   UPSTREAM_TP=/path/trace_processor_shell  upstream's binary (default
#   ../shared/upstream/bin/trace_processor_shell)

TOP=$(cd "$(dirname "$0")/.." && pwd)
O=${O:-$TOP/out}
TP=$O/trace_processor_shell
SHARED=${SHARED:-$TOP/../shared}
UP=${UPSTREAM_TP:-$SHARED/upstream/bin/trace_processor_shell}
rows=1000000
trace=""
while [ $# -gt 0 ]; do
	case "$1" in
	--rows) rows=$2; shift 2 ;;
	--trace) trace=$2; shift 2 ;;
	*) echo "usage: $0 [--rows N] [--trace FILE]" >&2; exit 2 ;;
	esac
done

if [ ! -x "$TP" ] || [ ! -x "$O/pfc_pbtxt" ]; then
	echo "span_join_bench: skipped: build first (make): no $TP"
	exit 0
fi
if [ ! -x "$UP" ]; then
	echo "span_join_bench: note: no upstream binary at $UP: ours only"
	UP=""
fi
if [ ! -x /usr/bin/time ]; then
	echo "span_join_bench: skipped: needs /usr/bin/time for the peak RSS"
	exit 0
fi
dir=$(mktemp -d /tmp/span_join_bench.XXXXXX)
trap 'rm -rf "$dir"' EXIT
"$O/pfc_pbtxt" --type Trace encode "$TOP/tests/data/tp/sched_basic.textproto" >"$dir/empty.pb" ||
	exit 0

# The tables: ts every 1000 ns per partition, dur 1..1999 (so spans of one
# table overlap their neighbours now and then), deterministic pseudo-random.
cat >"$dir/tables.sql" <<EOF
CREATE PERFETTO TABLE a AS
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < $rows)
SELECT (i / 64) * 1000 + (i * 7919) % 500 AS ts, 1 + (i * 104729) % 1999 AS dur,
  i % 64 AS p, i AS a_val FROM n;
CREATE PERFETTO TABLE b AS
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < $rows)
SELECT (i / 64) * 1000 + (i * 6151) % 700 AS ts, 1 + (i * 15485863) % 1500 AS dur,
  i % 64 AS p, i AS b_val FROM n;
SELECT count(*) FROM a;
EOF

# timed LABEL BIN SQLFILE TRACE: prints "seconds rss_mb" (or "- -").
timed() {
	if /usr/bin/time -f '%e %M' -o "$dir/time" timeout 600 "$2" -q "$3" "$4" \
		>"$dir/out" 2>"$dir/err"; then
		awk '{ printf "%s %.0f\n", $1, $2 / 1024 }' "$dir/time"
	else
		echo "- -"
		echo "span_join_bench: $1 failed: $(tail -n 1 "$dir/err")" >&2
	fi
}

report() {
	label=$1
	ours=$2
	up=$3
	set -- $ours
	o_s=$1
	o_mb=$2
	if [ -n "$up" ]; then
		set -- $up
		u_s=$1
		u_mb=$2
		ratio=$(awk -v u="$u_s" -v o="$o_s" 'BEGIN { if (o > 0 && u != "-") printf "%.2fx", u / o; else print "n/a" }')
		printf '%-28s ours %7ss %6s MB   upstream %7ss %6s MB   upstream/ours %s\n' \
			"$label" "$o_s" "$o_mb" "$u_s" "$u_mb" "$ratio"
	else
		printf '%-28s ours %7ss %6s MB\n' "$label" "$o_s" "$o_mb"
	fi
}

# minus A B: seconds A - B (0 at least), keeping A's RSS.
minus() {
	echo "$1 $2" | awk '{ if ($1 == "-" || $3 == "-") print "- -"; else { d = $1 - $3; if (d < 0) d = 0; printf "%.2f %s\n", d, $2 } }'
}

echo "span_join_bench: $rows spans per table, 64 partitions"
base_o=$(timed base "$TP" "$dir/tables.sql" "$dir/empty.pb")
base_u=""
[ -n "$UP" ] && base_u=$(timed base_up "$UP" "$dir/tables.sql" "$dir/empty.pb")
report "tables only" "$base_o" "$base_u"
for kind in SPAN_JOIN SPAN_LEFT_JOIN SPAN_OUTER_JOIN; do
	{
		cat "$dir/tables.sql"
		echo "CREATE VIRTUAL TABLE j USING $kind(a PARTITIONED p, b PARTITIONED p);"
		echo "CREATE PERFETTO TABLE r AS SELECT * FROM j;"
		echo "SELECT count(*), sum(dur) FROM r;"
	} >"$dir/$kind.sql"
	o=$(timed "$kind" "$TP" "$dir/$kind.sql" "$dir/empty.pb")
	o_rows=$(tail -n 1 "$dir/out")
	u=""
	if [ -n "$UP" ]; then
		u=$(timed "$kind upstream" "$UP" "$dir/$kind.sql" "$dir/empty.pb")
		u_rows=$(tail -n 1 "$dir/out")
		[ "$o_rows" = "$u_rows" ] || echo "span_join_bench: $kind: results differ: ours $o_rows, upstream $u_rows"
		u=$(minus "$u" "$base_u")
	fi
	report "$kind (join only)" "$(minus "$o" "$base_o")" "$u"
done

if [ -n "$trace" ]; then
	cat >"$dir/trace.sql" <<EOF
INCLUDE PERFETTO MODULE linux.cpu.utilization.general;
SELECT count(*), sum(dur) FROM _cpu_freq_per_thread;
EOF
	o=$(timed trace "$TP" "$dir/trace.sql" "$trace")
	u=""
	[ -n "$UP" ] && u=$(timed "trace upstream" "$UP" "$dir/trace.sql" "$trace")
	report "_cpu_freq_per_thread (load+join)" "$o" "$u"
fi

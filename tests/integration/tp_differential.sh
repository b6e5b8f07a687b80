#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_differential.sh - our trace_processor_shell against upstream Perfetto's
# output of every core table on real Linux traces (../shared/differential:
# traces recorded on this machine type by upstream's tracebox and ours, and
# upstream's `SELECT *` of each table), through that folder's runner.
#
# Every (trace, table) pair must be equal, except those named in
# tests/data/differential/known.txt with why they still differ: those are
# reported as skipped with that reason, and one that starts matching is
# reported so it can leave the list. A pair that differs and is not listed
# fails. Skipped, with the reason printed, when ../shared/differential or
# python3 is absent.
. "$(dirname "$0")/lib.sh"

root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-out}
diff_dir="$root/../shared/differential"
known="$root/tests/data/differential/known.txt"

if [ ! -f "$diff_dir/run.py" ]; then
	skip tp_differential/all "no ../shared/differential here (it exists in dev sessions and CI)"
	summary
	exit $?
fi
if ! command -v python3 >/dev/null 2>&1; then
	skip tp_differential/all "python3 is not installed"
	summary
	exit $?
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$diff_dir/run.py" --tp "$out/trace_processor_shell" --report "$tmp/report.json" \
	>"$tmp/run.txt" 2>&1
if [ ! -s "$tmp/report.json" ]; then
	fail tp_differential/runner "the runner did not finish: $(tail -n 3 "$tmp/run.txt")"
	summary
	exit $?
fi
# One line per pair: "ok|diff <trace>/<table> <what differs>".
python3 - "$tmp/report.json" >"$tmp/pairs" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    what = r.get("reason") or "%s of %s lines differ" % (r.get("n_diff_lines"), r.get("expected_lines"))
    print("%s %s/%s %s" % ("ok" if r["ok"] else "diff", r["trace"], r["table"], what))
PY
while read -r state pair what; do
	reason=$(awk -v p="$pair" '$1 == p { $1 = ""; sub(/^ /, ""); print; exit }' "$known")
	t=tp_differential/$pair
	if [ "$state" = ok ]; then
		pass $t
		[ -z "$reason" ] || echo "# $pair now matches upstream: take it out of $known"
	elif [ -n "$reason" ]; then
		skip $t "known difference ($what): $reason"
	else
		fail $t "differs from upstream ($what); run: $diff_dir/run.py --tp $out/trace_processor_shell --trace ${pair%%/*} --table ${pair#*/} -v"
	fi
done <"$tmp/pairs"
summary

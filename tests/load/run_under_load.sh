#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run_under_load.sh - runs the test suite (or some suites) beside a CPU hog
# that keeps every CPU busy and, with --io, beside an I/O hog that writes
# and syncs a file in a loop, so a test whose verdict depends on how much
# CPU or wall time it got shows up as a failure here (issue 23).
#
# Usage: tests/load/run_under_load.sh [--cpu N] [--no-cpu] [--io]
#                                     [--out DIR] [SUITE...]
#   --cpu N    N busy loops (default: one per CPU, nproc)
#   --no-cpu   no CPU hog (with --io: I/O load only)
#   --io       also run an I/O hog (2 writers of 64 MiB files with fsync)
#   --out DIR  build directory (default out)
#   SUITE      names of tests/integration/*.sh (without .sh) or of unit
#              test binaries in DIR/tests; none: the whole `make test`
# Ends with the suite's own "N passed, N failed, N skipped" line and exits
# with its status. The hogs run at the same priority as the tests (nice 0):
# the point is a machine as busy as a user's or a CI runner's.
set -u
cd "$(dirname "$0")/../.." || exit 1

ncpu=$(nproc 2>/dev/null || echo 2)
hogs=$ncpu io=0 out=out
while [ $# -gt 0 ]; do
	case "$1" in
	--cpu) hogs=$2; shift 2 ;;
	--no-cpu) hogs=0; shift ;;
	--io) io=1; shift ;;
	--out) out=$2; shift 2 ;;
	-h|--help) sed -n '3,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	--) shift; break ;;
	-*) echo "run_under_load: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done

tmp=$(mktemp -d /tmp/pfc-load.XXXXXX)
pids=""
stop_hogs() {
	# shellcheck disable=SC2086
	[ -n "$pids" ] && kill $pids 2>/dev/null
	# shellcheck disable=SC2086
	[ -n "$pids" ] && wait $pids 2>/dev/null
	pids=""
	rm -rf "$tmp"
}
trap stop_hogs EXIT
trap 'exit 130' INT TERM

i=0
while [ "$i" -lt "$hogs" ]; do
	# A shell busy loop: no package needed, all user time.
	sh -c 'while :; do :; done' &
	pids="$pids $!"
	i=$((i + 1))
done
if [ "$io" = 1 ]; then
	for n in 1 2; do
		sh -c "while :; do dd if=/dev/zero of='$tmp/io$n' bs=1M count=64 conv=fsync status=none; rm -f '$tmp/io$n'; done" &
		pids="$pids $!"
	done
fi
echo "run_under_load: $hogs CPU hog(s) on $ncpu CPUs$([ "$io" = 1 ] && echo ", I/O hog (2 writers, fsync)")"

t0=$(date +%s)
hog_ticks() { # the hogs' CPU time so far, in clock ticks
	t=0
	for p in $pids; do
		[ -r "/proc/$p/stat" ] || continue
		# utime + stime (fields 14, 15) of the hog and its children
		set -- $(sed 's/.*) //' "/proc/$p/stat")
		t=$((t + ${12} + ${13} + ${14} + ${15}))
	done
	echo "$t"
}
if [ $# -eq 0 ]; then
	make -j"$ncpu" test O="$out"
	rc=$?
else
	# The suites test what is built: build it first (under the hogs too),
	# or a checkout updated since its last build tests stale binaries.
	if ! make -j"$ncpu" all O="$out" >"$tmp/build.log" 2>&1; then
		tail -n 20 "$tmp/build.log"
		echo "run_under_load: the build failed" >&2
		stop_hogs
		exit 2
	fi
	pass=0 fail=0 skip=0
	log="$tmp/suite.log"
	for s in "$@"; do
		if [ -x "$out/tests/$s" ]; then
			"$out/tests/$s" >"$log" 2>&1
		elif [ -f "tests/integration/$s.sh" ]; then
			OUT="$out" sh "tests/integration/$s.sh" >"$log" 2>&1
		else
			echo "run_under_load: no suite $s" >&2
			fail=$((fail + 1))
			continue
		fi
		grep -vE '^ok |^[0-9]+ passed, [0-9]+ failed' "$log"
		line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
		if [ -z "$line" ]; then
			echo "FAIL $s: no summary line"
			fail=$((fail + 1))
			continue
		fi
		pass=$((pass + $(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')))
		fail=$((fail + $(echo "$line" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')))
		s2=$(echo "$line" | sed -nE 's/.*, ([0-9]+) skipped.*/\1/p')
		skip=$((skip + ${s2:-0}))
	done
	echo "$pass passed, $fail failed, $skip skipped"
	[ "$fail" -eq 0 ]
	rc=$?
fi
t1=$(date +%s)
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
echo "run_under_load: $((t1 - t0)) s wall; hogs used $(( $(hog_ticks) / hz )) CPU s; load average $(cut -d' ' -f1-3 /proc/loadavg)"
exit $rc

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# workload.sh - the small system workload the parity harness traces: each
# argument names one piece (sleepers, forks, markers, io, signals, threads);
# all pieces run together for about 1.5 s. Needs only POSIX sh, coreutils
# and (for markers) a writable tracefs trace_marker; missing bits are skipped.
TM=${TRACE_MARKER:-/sys/kernel/tracing/trace_marker}
TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT
for piece in "$@"; do
	case $piece in
	sleepers)
		(for k in 1 2 3 4 5 6 7 8 9 10; do sleep 0.1; done) &
		(i=0; while [ $i -lt 20000 ]; do i=$((i + 1)); done) &
		;;
	forks)
		(for k in 1 2 3 4 5 6 7 8; do
			/bin/true; ls /proc >/dev/null; sh -c 'exit 0'; sleep 0.05
		done) &
		;;
	markers)
		if [ -w "$TM" ]; then
			(for k in 1 2 3 4 5 6 7 8; do
				echo "B|$$|parity-step-$k" >"$TM" 2>/dev/null
				echo "C|$$|parity_counter|$k" >"$TM" 2>/dev/null
				echo "I|$$|parity-instant" >"$TM" 2>/dev/null
				sleep 0.05
				echo "E|$$" >"$TM" 2>/dev/null
				sleep 0.1
			done) &
			(echo "S|$$|parity-async|7" >"$TM" 2>/dev/null; sleep 0.8
				echo "F|$$|parity-async|7" >"$TM" 2>/dev/null) &
		fi
		;;
	io)
		(for k in 1 2 3; do
			dd if=/dev/zero of="$TMPD/f$k" bs=64k count=64 conv=fsync 2>/dev/null
			cat "$TMPD/f$k" >/dev/null; sync; sleep 0.2
		done) &
		;;
	signals)
		(for k in 1 2 3 4 5; do
			sleep 5 & p=$!; sleep 0.1; kill -TERM $p 2>/dev/null; wait $p 2>/dev/null
		done) &
		;;
	threads)
		# Threads that rename themselves (task_rename, thread names).
		command -v python3 >/dev/null 2>&1 && python3 -c '
import threading, time
def run(i):
    try:
        open("/proc/thread-self/comm", "w").write("parity-w%d" % i)
    except OSError:
        pass
    for _ in range(20):
        time.sleep(0.02)
ts = [threading.Thread(target=run, args=(i,)) for i in range(3)]
[t.start() for t in ts]
[t.join() for t in ts]
' &
		;;
	esac
done
wait
exit 0

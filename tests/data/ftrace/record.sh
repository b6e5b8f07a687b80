#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# record.sh - re-records the ftrace fixtures in this folder from a live kernel
# (root, tracefs mounted). Uses a private tracefs instance so the top-level
# buffer is untouched, and removes it at the end. Pages are raw 4096-byte
# reads of per_cpu/cpuN/trace_pipe_raw, as traced_probes reads them.
set -eu

T=${TRACEFS:-/sys/kernel/tracing}
OUT=$(cd "$(dirname "$0")" && pwd)
I=$T/instances/pfc_fixture
MARKER="pfc_fixture_marker hello 42"
EVENTS="sched/sched_switch sched/sched_waking sched/sched_wakeup_new
sched/sched_process_exec sched/sched_process_fork power/cpu_frequency power/cpu_idle
irq/irq_handler_entry irq/irq_handler_exit irq/softirq_entry irq/softirq_exit
ftrace/print raw_syscalls/sys_enter raw_syscalls/sys_exit task/task_newtask
task/task_rename"

cleanup() {
	echo 0 > "$I/tracing_on" 2>/dev/null || true
	rmdir "$I" 2>/dev/null || true
}
trap cleanup EXIT

rmdir "$I" 2>/dev/null || true
mkdir "$I"
cp "$T/events/header_page" "$OUT/header_page"
cp "$T/events/header_event" "$OUT/header_event"
mkdir -p "$OUT/formats"
for e in $EVENTS; do
	[ -e "$T/events/$e/format" ] || continue
	cp "$T/events/$e/format" "$OUT/formats/$(basename "$e").format"
done

# --- main capture: a few pages per CPU with a mix of events.
echo 0 > "$I/tracing_on"
echo boot > "$I/trace_clock"
echo 256 > "$I/buffer_size_kb"
for e in $EVENTS; do
	[ -e "$I/events/$e/enable" ] && echo 1 > "$I/events/$e/enable"
done
echo 1 > "$I/tracing_on"
for n in 1 2 3; do
	echo "$MARKER" > "$I/trace_marker"
	sh -c 'exec true'
	sh -c 'echo pfc_renamed > /proc/self/comm; sleep 0.01'
	ls / > /dev/null
done
sleep 0.05
echo 0 > "$I/tracing_on"
for cpu in $(ls -d "$I"/per_cpu/cpu* | sed 's/.*cpu//'); do
	dd if="$I/per_cpu/cpu$cpu/trace_pipe_raw" of="$OUT/cpu$cpu.pages" \
		bs=4096 count=8 iflag=nonblock 2>/dev/null || true
	cp "$I/per_cpu/cpu$cpu/stats" "$OUT/cpu$cpu.stats"
done

# --- sched-only capture (compact_sched workload): switches and wakings.
echo 0 > "$I/tracing_on"
for e in $EVENTS; do
	[ -e "$I/events/$e/enable" ] && echo 0 > "$I/events/$e/enable"
done
echo > "$I/trace"
for e in sched/sched_switch sched/sched_waking sched/sched_wakeup_new; do
	echo 1 > "$I/events/$e/enable"
done
echo 1 > "$I/tracing_on"
i=0
while [ $i -lt 300 ]; do
	sleep 0.001 &
	i=$((i + 1))
done
wait
echo 0 > "$I/tracing_on"
for cpu in $(ls -d "$I"/per_cpu/cpu* | sed 's/.*cpu//'); do
	dd if="$I/per_cpu/cpu$cpu/trace_pipe_raw" of="$OUT/sched_cpu$cpu.pages" \
		bs=4096 count=8 iflag=nonblock 2>/dev/null || true
done
for e in sched/sched_switch sched/sched_waking sched/sched_wakeup_new; do
	echo 0 > "$I/events/$e/enable"
done

# --- overrun capture: a tiny buffer, flooded with markers from CPU 0, so the
# first page read carries the missed-events flag (and maybe the count).
echo 4 > "$I/buffer_size_kb"
echo 1 > "$I/tracing_on"
taskset -c 0 sh -c "i=0; while [ \$i -lt 2000 ]; do echo \"overrun \$i\" > $I/trace_marker; i=\$((i+1)); done"
echo 0 > "$I/tracing_on"
cp "$I/per_cpu/cpu0/stats" "$OUT/overrun.stats"
dd if="$I/per_cpu/cpu0/trace_pipe_raw" of="$OUT/overrun.pages" \
	bs=4096 count=4 iflag=nonblock 2>/dev/null || true
chmod 644 "$OUT"/header_* "$OUT"/*.stats "$OUT"/formats/*
echo "recorded into $OUT"

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_corrupt.sh - trace_processor_shell on broken input: it imports what is
# valid, says what was not (stderr and `stats`), never crashes or hangs
# (every run is under `timeout 300`: a hang, not a slow machine, trips it;
# the 4 MiB import took over 20 s of wall time at load 20):
#   truncated/*    a trace cut inside its first, second and last packets,
#                  from a file and from a pipe: exit 0, the packets before
#                  the cut imported, proto_trace_truncated = 1;
#   len_past_end   a packet whose length runs past the end of the file:
#                  nothing after it is misread as packets;
#   garbage_tail   garbage after valid packets: they are imported,
#                  proto_trace_framing_errors = 1;
#   big/*          a 4+ MiB trace (packets across the 4 MiB read chunks) whole
#                  and cut inside a packet, from a file and from a pipe;
#   random, text, json   not a trace: exit 1 with "not a Perfetto protobuf
#                  trace", nothing on stdout;
#   empty          an empty file is an empty trace (exit 0, no rows);
#   directory, missing   exit 1 with the reason on stderr.
# Usage: OUT=out sh tests/integration/tp_corrupt.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tp_lib.sh"

tp_setup tp_corrupt

# The trace: four packets, each encoded alone (a Trace of one packet is the
# packet's bytes in the file), so the offsets of their boundaries are known.
cat >"$tmp/p1.textproto" <<'EOF'
packet {
  timestamp: 900
  trusted_packet_sequence_id: 1
  process_tree {
    processes { pid: 10 ppid: 1 cmdline: "alpha" }
    processes { pid: 20 ppid: 1 cmdline: "beta" }
  }
}
EOF
cat >"$tmp/p2.textproto" <<'EOF'
packet {
  trusted_packet_sequence_id: 2
  ftrace_events {
    cpu: 0
    event { timestamp: 1000 pid: 0 sched_switch { prev_comm: "swapper/0" prev_pid: 0
      prev_state: 0 next_comm: "alpha" next_pid: 10 next_prio: 120 } }
    event { timestamp: 1500 pid: 10 sched_switch { prev_comm: "alpha" prev_pid: 10
      prev_state: 1 next_comm: "beta" next_pid: 20 next_prio: 120 } }
    event { timestamp: 2500 pid: 20 sched_switch { prev_comm: "beta" prev_pid: 20
      prev_state: 1 next_comm: "swapper/0" next_pid: 0 next_prio: 120 } }
  }
}
EOF
cat >"$tmp/p3.textproto" <<'EOF'
packet {
  trusted_packet_sequence_id: 2
  ftrace_events {
    cpu: 1
    event { timestamp: 1200 pid: 0 sched_switch { prev_comm: "swapper/1" prev_pid: 0
      prev_state: 0 next_comm: "beta" next_pid: 20 next_prio: 120 } }
    event { timestamp: 3000 pid: 20 sched_switch { prev_comm: "beta" prev_pid: 20
      prev_state: 1 next_comm: "swapper/1" next_pid: 0 next_prio: 120 } }
  }
}
EOF
cat >"$tmp/p4.textproto" <<'EOF'
packet {
  timestamp: 3500
  trusted_packet_sequence_id: 3
  trace_stats {
    buffer_stats { buffer_size: 1048576 bytes_written: 8192 chunks_written: 2 }
    producers_connected: 1
  }
}
EOF
for i in 1 2 3 4; do
	if ! "$PBTXT" --type Trace encode "$tmp/p$i.textproto" >"$tmp/p$i.pb" 2>"$tmp/encode.err"; then
		fail tp_corrupt/encode "pfc_pbtxt cannot encode packet $i: $(head -n 1 "$tmp/encode.err")"
		summary
		exit 1
	fi
done
cat "$tmp/p1.pb" "$tmp/p2.pb" "$tmp/p3.pb" "$tmp/p4.pb" >"$tmp/full.pb"
b1=$(wc -c <"$tmp/p1.pb")
b2=$((b1 + $(wc -c <"$tmp/p2.pb")))
b3=$((b2 + $(wc -c <"$tmp/p3.pb")))

# One query answering everything the checks look at, as one CSV row.
Q="SELECT (SELECT count(*) FROM sched) AS sched,
 (SELECT count(*) FROM process WHERE pid IN (10, 20)) AS procs,
 (SELECT ifnull(sum(value), 0) FROM stats WHERE name = 'proto_trace_truncated') AS truncated,
 (SELECT ifnull(sum(value), 0) FROM stats WHERE name = 'proto_trace_framing_errors') AS framing,
 (SELECT ifnull(sum(value), 0) FROM stats WHERE name = 'traced_producers_connected') AS producers"

# run NAME FILE: imports FILE, or stdin fed from FILE if NAME ends in
# "_pipe" (the read path instead of the mapped one); leaves the output in
# $out and $err and the exit status in $rc (124: timed out).
run() {
	out="$tmp/$(echo "$1" | tr / _).out"
	err="$tmp/$(echo "$1" | tr / _).err"
	case $1 in
	*_pipe) timeout 300 "$TP" -Q "$Q" - <"$2" >"$out" 2>"$err" ;;
	*) timeout 300 "$TP" -Q "$Q" "$2" </dev/null >"$out" 2>"$err" ;;
	esac
	rc=$?
}

oneline() {
	tr '\n' '|' <"$1" | head -c 300
}

# expect NAME FILE ROW STDERR_PATTERN: exit 0, the query's row is ROW
# (sched,procs,truncated,framing,producers) and stderr matches the pattern
# ('' : stderr must be empty).
expect() {
	_n=$1
	run "$_n" "$2"
	_row=$(sed -n 2p "$out")
	if [ $rc -ne 0 ]; then
		fail "tp_corrupt/$_n" "exit $rc: $(oneline "$err")"
	elif [ "$_row" != "$3" ]; then
		fail "tp_corrupt/$_n" "row '$_row' want '$3' (stderr: $(oneline "$err"))"
	elif [ -z "$4" ] && [ -s "$err" ]; then
		fail "tp_corrupt/$_n" "unexpected stderr: $(oneline "$err")"
	elif [ -n "$4" ] && ! grep -q "$4" "$err"; then
		fail "tp_corrupt/$_n" "stderr '$(oneline "$err")' does not say '$4'"
	else
		pass "tp_corrupt/$_n"
	fi
}

# expect_refused NAME FILE STDERR_PATTERN: exit 1, nothing on stdout, and
# stderr matches the pattern.
expect_refused() {
	_n=$1
	run "$_n" "$2"
	if [ $rc -ne 1 ]; then
		fail "tp_corrupt/$_n" "exit $rc, want 1: $(oneline "$err")"
	elif [ -s "$out" ]; then
		fail "tp_corrupt/$_n" "stdout not empty: $(oneline "$out")"
	elif ! grep -q "$3" "$err"; then
		fail "tp_corrupt/$_n" "stderr '$(oneline "$err")' does not say '$3'"
	else
		pass "tp_corrupt/$_n"
	fi
}

# cut_trace NAME BYTES: the first BYTES of the trace in $tmp/NAME.pb.
cut_trace() {
	head -c "$2" "$tmp/full.pb" >"$tmp/$1.pb"
}

# ---------------------------------------------------------------- whole ----
expect whole "$tmp/full.pb" '5,2,0,0,1' ''

# ------------------------------------------------------------ truncated ----
# Inside packet 1: a trace, but nothing complete in it.
cut_trace cut_first $((b1 - 3))
expect truncated/first "$tmp/cut_first.pb" '0,0,1,0,0' 'truncated'
expect truncated/first_pipe "$tmp/cut_first.pb" '0,0,1,0,0' 'truncated'
# Inside packet 2: the processes of packet 1 only.
cut_trace cut_second $((b1 + 5))
expect truncated/second "$tmp/cut_second.pb" '0,2,1,0,0' 'truncated'
expect truncated/second_pipe "$tmp/cut_second.pb" '0,2,1,0,0' 'truncated'
# Inside packet 3: cpu 0's switches.
cut_trace cut_third $((b2 + 20))
expect truncated/third "$tmp/cut_third.pb" '3,2,1,0,0' 'truncated'
expect truncated/third_pipe "$tmp/cut_third.pb" '3,2,1,0,0' 'truncated'
# One byte short: everything but the trace stats.
cut_trace cut_last $(($(wc -c <"$tmp/full.pb") - 1))
expect truncated/last "$tmp/cut_last.pb" '5,2,1,0,0' 'truncated'
expect truncated/last_pipe "$tmp/cut_last.pb" '5,2,1,0,0' 'truncated'
# Only the first byte (the tag of a packet).
cut_trace cut_tag 1
expect truncated/tag_only "$tmp/cut_tag.pb" '0,0,1,0,0' 'truncated'

# ----------------------------------------------------- length past end ----
# After packet 1, a packet claiming 65535 bytes, then packets 2 and 3 (which
# are inside its claimed length, so not packets of the file).
{
	cat "$tmp/p1.pb"
	printf '\012\377\377\003'
	cat "$tmp/p2.pb" "$tmp/p3.pb"
} >"$tmp/past_end.pb"
expect len_past_end "$tmp/past_end.pb" '0,2,1,0,0' 'truncated'

# --------------------------------------------------------- garbage tail ----
{
	cat "$tmp/full.pb"
	printf '\377\376\375 this is not a packet'
} >"$tmp/garbage.pb"
expect garbage_tail "$tmp/garbage.pb" '5,2,0,1,1' 'malformed data'
expect garbage_tail_pipe "$tmp/garbage.pb" '5,2,0,1,1' 'malformed data'

# ---------------------------------------------------------------- big ----
# Copies of packet 2 doubled past 4 MiB, so packets straddle the 4 MiB
# chunks a pipe is read in (a mapped file is framed in 4 MiB slices alike).
cp "$tmp/p2.pb" "$tmp/big.pb"
while [ "$(wc -c <"$tmp/big.pb")" -lt $((4 * 1024 * 1024 + 4096)) ]; do
	cat "$tmp/big.pb" "$tmp/big.pb" >"$tmp/big2.pb" && mv "$tmp/big2.pb" "$tmp/big.pb"
done
p2_size=$(wc -c <"$tmp/p2.pb")
copies=$(($(wc -c <"$tmp/big.pb") / p2_size))
expect big/whole "$tmp/big.pb" "$((3 * copies)),0,0,0,0" ''
expect big/whole_pipe "$tmp/big.pb" "$((3 * copies)),0,0,0,0" ''
# Cut 10 bytes past the 4 MiB boundary: the copies before the cut survive.
cut_at=$((4 * 1024 * 1024 + 10))
head -c $cut_at "$tmp/big.pb" >"$tmp/big_cut.pb"
expect big/cut "$tmp/big_cut.pb" "$((3 * (cut_at / p2_size))),0,1,0,0" 'truncated'
expect big/cut_pipe "$tmp/big_cut.pb" "$((3 * (cut_at / p2_size))),0,1,0,0" 'truncated'

# ---------------------------------------------------------- not a trace ----
# Random bytes whose first byte, 0xff, cannot start a Trace.packet tag.
{
	printf '\377'
	head -c 4096 /dev/urandom
} >"$tmp/random.bin"
expect_refused random "$tmp/random.bin" 'not a Perfetto protobuf trace'
printf 'This is a text file.\nIt has lines, not packets.\n' >"$tmp/text.txt"
expect_refused text "$tmp/text.txt" 'not a Perfetto protobuf trace'
printf '{"traceEvents": []}\n' >"$tmp/trace.json"
expect_refused json "$tmp/trace.json" 'not a Perfetto protobuf trace'

# ---------------------------------------------------------------- empty ----
: >"$tmp/empty.pb"
expect empty "$tmp/empty.pb" '0,0,0,0,0' ''

# ------------------------------------------------------ not a file at all ----
mkdir "$tmp/dir.pb"
expect_refused directory "$tmp/dir.pb" '[Ii]s a directory'
expect_refused missing "$tmp/no_such_trace.pb" 'No such file'

summary

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# clock_sync_bench.sh - how well the relay's clock sync finds a guest's
# clock offset. The guest is a network namespace joined to the host's by a
# veth pair, inside a time namespace whose BOOTTIME reads exactly OFFSET
# later than the host's: the ground truth. traced runs in the host
# namespace, traced_relay in the guest; a session records the clock-sync
# rounds (one RemoteClockSync packet per round, every 5 s as our traced
# asks). For each round the offset is estimated as Perfetto's trace
# processor does (the mean of (t1c+t2c)/2 - t1h and t2c - (t1h+t2h)/2) and
# compared with the truth, and with the round's bound (half its longest
# round trip, host or client side). Targets: median error under 10 us and
# no round outside its bound.
# With --qemu (and ../shared/tools/two-kernel.sh, QEMU and a guest kernel)
# it also runs the relay in a QEMU guest (software emulation): no ground
# truth there, so it reports the round trips and how much the estimates
# of consecutive rounds differ.
#
#   bench/clock_sync_bench.sh [--seconds S] [--qemu] [--smoke]
#     --seconds S  session length (default 60: 13 rounds)
#     --smoke      6 s, two rounds
# Needs root (namespaces); says why and exits 0 otherwise.

TOP=$(cd "$(dirname "$0")/.." && pwd)
export OUT=${OUT:-$TOP/out}
seconds=60
qemu=0
while [ $# -gt 0 ]; do
	case "$1" in
	--seconds) seconds=$2; shift 2 ;;
	--qemu) qemu=1; shift ;;
	--smoke) seconds=6; shift ;;
	*) echo "usage: $0 [--seconds S] [--qemu] [--smoke]" >&2; exit 2 ;;
	esac
done

# The test harness makes the namespaces and cleans up at exit.
. "$TOP/tests/integration/lib.sh"
. "$TOP/tests/integration/svc_lib.sh"
. "$TOP/tests/integration/mm_lib.sh"
svc_require_bins traced traced_relay perfetto trace_check
mm_require clock_sync_bench

OFFSET_S=3000
PORT=20501
export PERFETTO_CONSUMER_SOCK_NAME=$SVC_TMP/c.sock
mm_setup
MM_GUEST_TIME_OFFSET_S=$OFFSET_S mm_guest 1

svc_bg traced env TRACED_NOTIFY_FD=9 PERFETTO_PRODUCER_SOCK_NAME="$(mm_host_ip 1):$PORT" \
	ip netns exec "$MM_HOST" "$OUT/traced" --enable-relay-endpoint
svc_wait_for 10 _svc_ready_or_exited traced || { echo "clock_sync_bench: traced did not start"; exit 1; }

# report NAME TRACE TRUTH_NS: per-round errors (TRUTH_NS empty: spread only).
report() {
	"$OUT/trace_check" "$2" --print-sync-rounds | awk -v name="$1" -v truth="$3" '
	BEGIN { n = 0 }
	function abs(x) { return x < 0 ? -x : x }
	/^sync_round/ {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		o1 = (v["t1c"] + v["t2c"]) / 2 - v["t1h"]
		o2 = v["t2c"] - (v["t1h"] + v["t2h"]) / 2
		est[n] = (o1 + o2) / 2
		rc = v["t2c"] - v["t1c"]; rh = v["t2h"] - v["t1h"]
		rtt[n] = rc > rh ? rc : rh
		n++
	}
	function median(a, k,   i, j, t) {
		for (i = 0; i < k; i++) b[i] = a[i]
		for (i = 1; i < k; i++) for (j = i; j > 0 && b[j-1] > b[j]; j--) { t = b[j]; b[j] = b[j-1]; b[j-1] = t }
		return k % 2 ? b[int(k/2)] : (b[k/2-1] + b[k/2]) / 2
	}
	END {
		if (n == 0) { printf "%s: no clock-sync rounds in the trace\n", name; exit 1 }
		for (i = 0; i < n; i++) r[i] = rtt[i]
		printf "%s: %d rounds, round trip median %.1f us, max %.1f us\n", name, n, median(r, n) / 1e3, max_of(r, n) / 1e3
		if (truth != "") {
			within = 0
			for (i = 0; i < n; i++) { e[i] = abs(est[i] - truth); if (e[i] <= rtt[i] / 2) within++ }
			me = median(e, n)
			printf "%s: offset error median %.2f us, max %.2f us; %d/%d rounds within half their round trip\n", name, me / 1e3, max_of(e, n) / 1e3, within, n
			printf "%s: targets: median < 10 us (%s), every round within its bound (%s)\n", name, me < 10000 ? "met" : "MISSED", within == n ? "met" : "MISSED"
		} else if (n > 1) {
			for (i = 1; i < n; i++) d[i-1] = abs(est[i] - est[i-1])
			printf "%s: no ground truth; consecutive estimates differ by median %.2f us, max %.2f us\n", name, median(d, n - 1) / 1e3, max_of(d, n - 1) / 1e3
		}
	}
	function max_of(a, k,   i, m) { m = a[0]; for (i = 1; i < k; i++) if (a[i] > m) m = a[i]; return m }'
}

mm_guest_bg relay 1 env TRACED_RELAY_NOTIFY_FD=9 PERFETTO_MACHINE_NAME=guest1 \
	PERFETTO_PRODUCER_SOCK_NAME="$SVC_TMP/g1.p.sock" \
	PERFETTO_RELAY_SOCK_NAME="$(mm_host_ip 1):$PORT" "$OUT/traced_relay"
svc_wait_for 10 _svc_ready_or_exited relay || { echo "clock_sync_bench: the relay did not start"; exit 1; }
printf 'buffers { size_kb: 1024 }\nduration_ms: %d\ntrace_all_machines: true\n' \
	$((seconds * 1000)) >"$SVC_TMP/cfg.pbtxt"
echo "clock_sync_bench: guest BOOTTIME = host + ${OFFSET_S} s (time namespace) over a veth pair, ${seconds} s session"
svc_perfetto veth $((seconds + 30)) --txt -c "$SVC_TMP/cfg.pbtxt" -o "$SVC_TMP/veth.pb" ||
	{ echo "clock_sync_bench: recording failed: $(svc_errtail veth)"; exit 1; }
report "veth + time namespace" "$SVC_TMP/veth.pb" "${OFFSET_S}000000000"
status=$?

if [ $qemu = 1 ]; then
	TK=${TWO_KERNEL:-$TOP/../shared/tools/two-kernel.sh}
	if [ ! -f "$TK" ] || ! command -v qemu-system-x86_64 >/dev/null 2>&1; then
		echo "qemu: skipped (two-kernel.sh or QEMU missing)"
	else
		TK_ID=41
		bash "$TK" --net-up $TK_ID >/dev/null 2>&1
		svc_bg qtraced env TRACED_NOTIFY_FD=9 PERFETTO_PRODUCER_SOCK_NAME="10.250.$TK_ID.1:$PORT" \
			PERFETTO_CONSUMER_SOCK_NAME="$SVC_TMP/q.c.sock" "$OUT/traced" --enable-relay-endpoint
		svc_wait_for 10 _svc_ready_or_exited qtraced
		bash "$TK" --bg --keep --quiet --id $TK_ID --share "$TOP" --timeout $((seconds + 120)) \
			--cmd "PERFETTO_RELAY_SOCK_NAME=\$TK_HOST_IP:$PORT '$OUT/traced_relay' >/dev/null 2>&1" \
			>/dev/null 2>&1
		sleep 3
		export PERFETTO_CONSUMER_SOCK_NAME="$SVC_TMP/q.c.sock"
		svc_perfetto qemu $((seconds + 30)) --txt -c "$SVC_TMP/cfg.pbtxt" -o "$SVC_TMP/qemu.pb"
		report "qemu guest (TCG)" "$SVC_TMP/qemu.pb" ""
		bash "$TK" --stop $TK_ID >/dev/null 2>&1
		bash "$TK" --net-down $TK_ID >/dev/null 2>&1
	fi
fi
exit $status

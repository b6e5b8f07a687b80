#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# compression.sh - TraceConfig.compression { deflate {} }: the service
# writes compressed_packets (zlib of Trace-framed packets, as Perfetto does),
# both when perfetto reads the buffers and with write_into_file; every
# packet is inside, and the trace is much smaller than without.
# Usage: OUT=out sh tests/integration/compression.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"

svc_require_bins traced perfetto test_producer trace_check

if ! svc_start_traced traced; then
	fail compression/traced_start "traced did not start: $(svc_errtail traced)"
	summary
	exit 1
fi
svc_start_producer prod --ds c.ds --threads 2 --packets-per-thread 3000 --packet-size 400 \
	--emit-on-start --notify-stop || fail compression/producer_start "$(svc_errtail prod)"

BASE='buffers { size_kb: 16384 fill_policy: DISCARD }
data_sources { config { name: "c.ds" } }
duration_ms: 800'
svc_cfg plain "$BASE"
svc_cfg deflate "$BASE
compression { deflate {} }"
svc_cfg file "$BASE
compression { deflate {} }
write_into_file: true
file_write_period_ms: 200"

for name in plain deflate file; do
	if svc_perfetto "$name.run" 20 --txt -c "$SVC_TMP/$name.pbtxt" -o "$SVC_TMP/$name.pb" &&
		svc_check_trace "$name" "$SVC_TMP/$name.pb" --expect-seqs 2 --expect-per-seq 3000 \
			--verify-payload; then
		pass "compression/$name/all_packets"
	else
		fail "compression/$name/all_packets" "$(svc_why "$name") $(svc_errtail "$name.run")"
	fi
done
if [ "$(svc_tc deflate compressed_packets)" -ge 1 ] && [ "$(svc_tc file compressed_packets)" -ge 1 ] &&
	[ "$(svc_tc plain compressed_packets)" -eq 0 ]; then
	pass compression/compressed_packets_present
else
	fail compression/compressed_packets_present "plain=$(svc_tc plain compressed_packets) deflate=$(svc_tc deflate compressed_packets) file=$(svc_tc file compressed_packets)"
fi
plain=$(svc_file_size "$SVC_TMP/plain.pb")
small=$(svc_file_size "$SVC_TMP/deflate.pb")
if [ "$small" -gt 0 ] && [ $((small * 4)) -lt "$plain" ]; then
	pass compression/smaller
else
	fail compression/smaller "deflate $small bytes vs plain $plain"
fi
svc_decode compression "$SVC_TMP/deflate.pb"
summary

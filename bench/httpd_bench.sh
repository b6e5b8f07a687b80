#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# httpd_bench.sh - import time, peak RSS and query latency over the
# --httpd WebSocket RPC, ours
# against Perfetto's trace_processor_shell serving the same trace
# (bench/httpd_bench.py says what it measures). Prints; never fails.
#   bench/httpd_bench.sh [TRACE] [--repeat N] [--ui-json FILE]
# TRACE defaults to $SHARED/differential/traces/up_light.pftrace;
# Perfetto's binary is UPSTREAM_TP or $SHARED/upstream/bin.
TOP=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$TOP/out}
SHARED=${SHARED:-$TOP/../shared}
UP_TP=${UPSTREAM_TP:-$SHARED/upstream/bin/trace_processor_shell}
TRACE=$SHARED/differential/traces/up_light.pftrace
case "${1:-}" in --* | "") ;; *) TRACE=$1; shift ;; esac
if [ ! -f "$TRACE" ]; then
	echo "httpd_bench: no trace $TRACE (give one, or set SHARED); nothing measured"
	exit 0
fi
[ -x "$UP_TP" ] || echo "httpd_bench: no Perfetto binary ($UP_TP): ours only"
python3 "$TOP/bench/httpd_bench.py" "$OUT/trace_processor_shell" "$UP_TP" "$TRACE" "$@"
exit 0

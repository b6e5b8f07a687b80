#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# deferred_start.sh - a deferred_start session is set up but not started
# until the consumer sends StartTracing: the service reports it as not
# started meanwhile, and no producer packet predates StartTracing.
# Usage: OUT=out sh tests/integration/deferred_start.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"

svc_require_bins traced deferred_start test_producer trace_check

if ! svc_start_traced traced; then
	fail deferred_start/traced_start "traced did not start: $(svc_errtail traced)"
	summary
	exit 1
fi
svc_start_producer prod --ds d.ds --threads 1 --packets-per-thread 200 --emit-on-start ||
	fail deferred_start/producer_start "$(svc_errtail prod)"
svc_cfg d 'buffers { size_kb: 2048 fill_policy: DISCARD }
data_sources { config { name: "d.ds" } }
deferred_start: true
duration_ms: 600'

if timeout -k 3 $((20 * SVC_SCALE)) "$OUT/deferred_start" "$SVC_TMP/d.pbtxt" "$SVC_TMP/d.pb" 700 \
	>"$SVC_TMP/d.out" 2>"$SVC_TMP/d.err"; then
	if grep -q "is_started=0" "$SVC_TMP/d.out" && grep -q "state=CONFIGURED" "$SVC_TMP/d.out"; then
		pass deferred_start/not_started_before_start_tracing
	else
		fail deferred_start/not_started_before_start_tracing "$(tr '\n' ' ' <"$SVC_TMP/d.out")"
	fi
	start_ns=$(sed -n 's/^start_ns=//p' "$SVC_TMP/d.out")
	if svc_check_trace d "$SVC_TMP/d.pb" --expect-seqs 1 --expect-per-seq 200 &&
		[ "$(svc_tc d test_ts_min)" -ge "$start_ns" ]; then
		pass deferred_start/data_only_after_start_tracing
	else
		fail deferred_start/data_only_after_start_tracing "first packet $(svc_tc d test_ts_min) vs StartTracing $start_ns; $(svc_why d)"
	fi
else
	fail deferred_start/run "$(svc_errtail d)"
fi
summary

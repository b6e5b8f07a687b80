#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# smb_provided.sh - a producer that brings its own shared memory buffer
# (InitializeConnection with an fd and producer_provided_shmem, as
# Perfetto's SDK does for startup tracing): traced must adopt it, and
# every packet written through it must arrive; a producer that offers one
# next to a normal producer must not disturb the other's data.
# Usage: OUT=out sh tests/integration/smb_provided.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"

svc_require_bins traced perfetto test_producer trace_check

if ! svc_start_traced traced; then
	fail smb_provided/traced_start "traced did not start: $(svc_errtail traced)"
	summary
	exit 1
fi
svc_start_producer own --ds own.ds --threads 2 --packets-per-thread 2000 \
	--packet-size 900 --nested-depth 2 --own-smb --emit-on-start ||
	fail smb_provided/producer_start "$(svc_errtail own)"
svc_start_producer plain --ds plain.ds --threads 1 --packets-per-thread 2000 \
	--packet-size 900 --emit-on-start ||
	fail smb_provided/producer_start "$(svc_errtail plain)"

svc_cfg own 'buffers { size_kb: 16384 fill_policy: DISCARD }
data_sources { config { name: "own.ds" } }
duration_ms: 800'
svc_cfg plain 'buffers { size_kb: 16384 fill_policy: DISCARD }
data_sources { config { name: "plain.ds" } }
duration_ms: 800'

if svc_perfetto own_run 20 --txt -c "$SVC_TMP/own.pbtxt" -o "$SVC_TMP/own.pb" &&
	svc_check_trace own "$SVC_TMP/own.pb" --expect-seqs 2 --expect-per-seq 2000 --verify-payload; then
	pass smb_provided/all_packets_through_own_smb
else
	fail smb_provided/all_packets_through_own_smb "$(svc_why own) $(svc_errtail own_run)"
fi
if grep -q "brought its own" "$SVC_TMP/traced.err"; then
	pass smb_provided/adopted
else
	fail smb_provided/adopted "traced did not report adopting the producer's SMB"
fi
if svc_perfetto plain_run 20 --txt -c "$SVC_TMP/plain.pbtxt" -o "$SVC_TMP/plain.pb" &&
	svc_check_trace plain "$SVC_TMP/plain.pb" --expect-seqs 1 --expect-per-seq 2000 --verify-payload; then
	pass smb_provided/other_producer_intact
else
	fail smb_provided/other_producer_intact "$(svc_why plain) $(svc_errtail plain_run)"
fi
svc_decode smb_provided "$SVC_TMP/own.pb"
summary

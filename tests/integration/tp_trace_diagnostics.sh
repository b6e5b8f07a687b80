#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_trace_diagnostics.sh - __intrinsic_trace_diagnostics, the advice on a
# trace's config (import/system/diagnostics.c): on a config that trips every
# rule (tests/data/tp/diagnostics/all_rules.textproto) the keys, their
# order and confidences are upstream's (what its trace_processor_shell
# printed), every row has a title, description and remediation; a sane
# config gives none.
# Usage: OUT=out sh tests/integration/tp_trace_diagnostics.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tp_lib.sh"

tp_setup tp_trace_diagnostics
DATA="$ROOT/tests/data/tp/diagnostics"

tp_encode all_rules good

expect all_rules/keys all_rules \
	"SELECT id, key, round(confidence, 6), trace_id FROM __intrinsic_trace_diagnostics ORDER BY id" \
	'0,"preserve_ftrace_buffer_late_start",0.700000,0;1,"tiny_ftrace_buffer",0.727917,0;2,"low_ftrace_drain_bandwidth",0.900000,0;3,"extreme_ftrace_drain_period",0.600000,0;4,"extreme_ftrace_drain_period",0.600000,0;5,"syscalls_without_filter",0.300000,0;6,"function_graph_requires_symbolize_ksyms",1.000000,0;7,"events_require_symbolize_ksyms",0.600000,0;8,"events_require_symbolize_ksyms",0.600000,0;9,"discard_buffer_for_streaming",0.800000,0;10,"discard_buffer_for_streaming",0.800000,0;11,"heapprofd_sampling_interval_too_low",0.300000,0;12,"display_video_not_enabled",0.700000,0'
expect all_rules/text all_rules \
	"SELECT count(*) FROM __intrinsic_trace_diagnostics WHERE length(title) > 0 AND length(description) > 0 AND length(remediation) > 0" \
	'13'
expect good/none good \
	"SELECT count(*) FROM __intrinsic_trace_diagnostics" \
	'0'

summary

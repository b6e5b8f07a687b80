#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_stdlib_diff.sh - the module differential: every table and view of our
# standard library modules, and the calls in tests/data/stdlib_diff/
# calls.txt, on every trace of ../shared/differential/traces, printed by our
# trace_processor_shell and by upstream's (UPSTREAM_TP, else
# ../shared/upstream/bin/trace_processor_shell), must be equal
# (tp_stdlib_diff.py; upstream's outputs are cached in $OUT/stdlib_diff_cache).
# Pairs in tests/data/stdlib_diff/known.txt are skipped with their reason.
# Skipped, with the reason printed, when upstream's binary, the traces or
# python3 are absent.
. "$(dirname "$0")/lib.sh"

root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-out}
case $out in /*) ;; *) out="$root/$out" ;; esac
# PFC_SHARED: where ../shared is when the checkout is elsewhere (a worktree).
shared=${PFC_SHARED:-$root/../shared}
up=${UPSTREAM_TP:-$shared/upstream/bin/trace_processor_shell}
traces=${STDLIB_DIFF_TRACES:-$shared/differential/traces}

if ! command -v python3 >/dev/null 2>&1; then
	skip tp_stdlib_diff/all "python3 is not installed"
elif [ ! -x "$up" ]; then
	skip tp_stdlib_diff/all "no upstream trace_processor_shell at $up (set UPSTREAM_TP or PFC_SHARED)"
elif ! "$up" --version >/dev/null 2>&1; then
	skip tp_stdlib_diff/all "upstream's $up does not run here (its runtime libraries?)"
elif [ ! -d "$traces" ]; then
	skip tp_stdlib_diff/all "no traces at $traces (../shared/differential exists in dev sessions and CI)"
elif [ ! -x "$out/trace_processor_shell" ]; then
	fail tp_stdlib_diff/binaries "$out/trace_processor_shell not built"
else
	exec python3 "$root/tests/integration/tp_stdlib_diff.py" --tp "$out/trace_processor_shell" \
		--upstream "$up" --traces "$traces" --cache "$out/stdlib_diff_cache" "$@"
fi
summary

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_httpd.sh - trace_processor_shell --httpd as Perfetto's UI and Python
# API use it (tp_httpd.py drives it with a stdlib client,
# tp_httpd_client.py): /status and CORS; REST /query, /parse, /notify_eof,
# ...; the WebSocket RPC (status, restore, query batches with aligned
# doubles, pipelined/split/fragmented messages, SQL packages, seq
# errors); perfetto_c.trace_processor.TraceProcessor (our Python API,
# pandas frames); rows equal to the shell's -Q output; six clients in flight;
# malformed requests, oversized headers/bodies/frames, RPC framing errors
# and clients leaving mid-result, after which the server still answers.
# Usage: OUT=out sh tests/integration/tp_httpd.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tp_lib.sh"

tp_setup tp_httpd
DATA=tests/data/tp
if ! command -v python3 >/dev/null 2>&1; then
	skip tp_httpd/all "python3 is not installed"
	summary
	exit 0
fi
tp_encode sched_basic
"$PBTXT" --type Trace encode "$DATA/track_event/slices.textproto" >"$tmp/slices.pb" ||
	fail tp_httpd/encode "cannot encode track_event/slices"
"$PBTXT" --type Trace encode "$DATA/multi_machine/sync.textproto" >"$tmp/sync.pb" ||
	fail tp_httpd/encode "cannot encode multi_machine/sync"
python3 tests/integration/tp_httpd.py "$TP" "$tmp/sched_basic.pb" "$tmp/slices.pb" "$tmp" |
	grep -vE '^[0-9]+ passed, [0-9]+ failed' | tee "$tmp/result"
# Our Python API (perfetto_c.trace_processor), with the interpreter the
# module was built for.
PY=${PYTHON:-$(cat "$OUT/python/interpreter" 2>/dev/null)}
PY=${PY:-python3}
if [ -f "$OUT/python/perfetto_c/trace_processor.py" ] &&
	PYTHONPATH="$OUT/python" "$PY" -c 'import perfetto_c.trace_processor' 2>/dev/null; then
	PYTHONPATH="$OUT/python" "$PY" tests/integration/tp_httpd_pyapi.py "$TP" \
		"$tmp/sched_basic.pb" 2>&1 | tee -a "$tmp/result"
else
	skip tp_httpd/pyapi "perfetto_c is not built for $PY (make python)"
fi
# Perfetto's own Python API, unchanged, over our binary: where PERFETTO_PY
# names a folder with Perfetto's `perfetto` package (and protobuf, pandas).
if [ -n "${PERFETTO_PY:-}" ] && PYTHONPATH="$PERFETTO_PY" "$PY" -c \
	'import perfetto.trace_processor' 2>/dev/null; then
	PYTHONPATH="$PERFETTO_PY" "$PY" tests/integration/tp_httpd_upapi.py "$TP" \
		"$tmp/sched_basic.pb" "$tmp/sync.pb" 2>&1 | grep -E '^(ok|FAIL|skip) ' |
		tee -a "$tmp/result"
else
	skip tp_httpd/upstream_python_api "Perfetto's Python package is not installed (set PERFETTO_PY)"
fi
grep -E '^(ok |FAIL )' "$tmp/result" >/dev/null || fail tp_httpd/driver "tp_httpd.py printed nothing"
T_PASSED=$((T_PASSED + $(grep -c '^ok ' "$tmp/result")))
T_FAILED=$((T_FAILED + $(grep -c '^FAIL ' "$tmp/result")))
T_SKIPPED=$((T_SKIPPED + $(grep -c '^skip ' "$tmp/result")))
summary

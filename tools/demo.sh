#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `make demo`: what perfetto-c can show on this landing. Today: every trace
# config kept under configs/ is parsed from text format, encoded to the
# binary TraceConfig that traced receives, decoded again and printed, and the
# binary is checked to re-encode to the same bytes.
set -eu
out=${1:-out}
tool="$out/pfc_pbtxt"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "perfetto-c demo: trace configs, text -> binary TraceConfig -> text"
echo
n=0
for cfg in configs/*.pbtxt; do
	name=$(basename "$cfg")
	"$tool" encode "$cfg" >"$tmp/$name.pb"
	"$tool" decode "$tmp/$name.pb" >"$tmp/$name.txt"
	"$tool" encode "$tmp/$name.txt" >"$tmp/$name.again.pb"
	if ! cmp -s "$tmp/$name.pb" "$tmp/$name.again.pb"; then
		echo "demo: $name did not survive the round trip" >&2
		exit 1
	fi
	bytes=$(wc -c <"$tmp/$name.pb" | tr -d ' ')
	echo "=== $cfg: $bytes bytes as binary TraceConfig, decoded back:"
	sed 's/^/    /' "$tmp/$name.txt"
	echo
	n=$((n + 1))
done

echo "A misspelled field is caught with its position and a suggestion:"
printf 'buffers { size_kb: 1024 }\ndurations_ms: 10000\n' >"$tmp/typo.pbtxt"
"$tool" check "$tmp/typo.pbtxt" 2>&1 | sed "s|$tmp/||; s/^/    /" || true
echo
echo "demo: $n configs round-tripped"

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# pbtxt_oracle.sh - protoc as the oracle for pfc_pbtxt. For every config in
# configs/, tests/data/pbtxt/ and (when present) ../shared/testdata/configs:
#   1. pfc_pbtxt encode and protoc --encode must give messages that
#      protoc --decode prints identically;
#   2. pfc_pbtxt decode of protoc's binary, encoded again by pfc_pbtxt,
#      must decode (by protoc) to the same text.
# Then error behaviour of the binary: a misspelled field fails with the
# did-you-mean message on stderr and nothing on stdout; an unknown --type
# exits 2; malformed binary fails cleanly.
# Usage: OUT=out sh tests/integration/pbtxt_oracle.sh
. "$(dirname "$0")/lib.sh"

ROOT=$(repo_root)
cd "$ROOT" || exit 1
OUT=${OUT:-out}
case $OUT in /*) ;; *) OUT="$ROOT/$OUT" ;; esac
PFC="$OUT/pfc_pbtxt"
TYPE=perfetto.protos.TraceConfig
PROTO=config/trace_config.proto

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -x "$PFC" ]; then
	fail pbtxt_oracle/binary "$PFC not built (make $OUT/pfc_pbtxt)"
	summary
	exit 1
fi

proto_encode() { protoc -Iprotos --encode=$TYPE $PROTO; }
proto_decode() { protoc -Iprotos --decode=$TYPE $PROTO; }

# First differing lines of two files, on one line.
first_diff() {
	diff "$1" "$2" | head -n 6 | tr '\n' ' '
}

oracle_file() {
	f=$1
	name=pbtxt_oracle/$2
	base=$tmp/$2

	if ! "$PFC" encode "$f" >"$base.pfc.bin" 2>"$base.err"; then
		fail "$name" "pfc_pbtxt encode failed: $(head -n 1 "$base.err")"
		return
	fi
	if ! proto_encode <"$f" >"$base.protoc.bin" 2>"$base.err"; then
		fail "$name" "protoc --encode rejects it: $(head -n 1 "$base.err")"
		return
	fi
	if ! proto_decode <"$base.pfc.bin" >"$base.pfc.txt" 2>"$base.err"; then
		fail "$name" "protoc --decode rejects pfc_pbtxt's binary: $(head -n 1 "$base.err")"
		return
	fi
	proto_decode <"$base.protoc.bin" >"$base.protoc.txt" 2>/dev/null
	if ! cmp -s "$base.pfc.txt" "$base.protoc.txt"; then
		fail "$name" "encodings decode differently: $(first_diff "$base.pfc.txt" "$base.protoc.txt")"
		return
	fi
	pass "$name"

	name=$name/decode
	if ! "$PFC" decode "$base.protoc.bin" >"$base.back.txt" 2>"$base.err"; then
		fail "$name" "pfc_pbtxt decode of protoc's binary failed: $(head -n 1 "$base.err")"
		return
	fi
	if ! "$PFC" encode "$base.back.txt" >"$base.back.bin" 2>"$base.err"; then
		fail "$name" "pfc_pbtxt cannot encode its own output: $(head -n 1 "$base.err")"
		return
	fi
	if ! proto_decode <"$base.back.bin" >"$base.back.dec" 2>"$base.err"; then
		fail "$name" "protoc --decode rejects the re-encoding: $(head -n 1 "$base.err")"
		return
	fi
	if ! cmp -s "$base.back.dec" "$base.protoc.txt"; then
		fail "$name" "decode+encode changed the message: $(first_diff "$base.back.dec" "$base.protoc.txt")"
		return
	fi
	pass "$name"
}

if ! command -v protoc >/dev/null 2>&1; then
	skip pbtxt_oracle/protoc "protoc not found in PATH (apt-get install protobuf-compiler)"
else
	n=0
	for f in configs/*.pbtxt tests/data/pbtxt/*.pbtxt; do
		[ -f "$f" ] || continue
		oracle_file "$f" "$(basename "$(dirname "$f")")_$(basename "$f" .pbtxt)"
		n=$((n + 1))
	done
	shared=$ROOT/../shared/testdata/configs
	if [ -d "$shared" ]; then
		for f in "$shared"/*.pbtxt; do
			[ -f "$f" ] || continue
			oracle_file "$f" "shared_$(basename "$f" .pbtxt)"
			n=$((n + 1))
		done
	fi
	[ "$n" -gt 0 ] || fail pbtxt_oracle/inputs "no .pbtxt files found"
fi

# ---------------------------------------------------- error behaviour ----

printf 'duration_ms: 1\nbufers {\n  size_kb: 1\n}\n' >"$tmp/typo.pbtxt"
"$PFC" encode "$tmp/typo.pbtxt" >"$tmp/typo.out" 2>"$tmp/typo.err"
rc=$?
want="unknown field 'bufers' in TraceConfig at 2:1; did you mean 'buffers'?"
if [ "$rc" -eq 0 ]; then
	fail pbtxt_oracle/typo_exit "exit 0 for a misspelled field"
elif [ -s "$tmp/typo.out" ]; then
	fail pbtxt_oracle/typo_exit "wrote $(wc -c <"$tmp/typo.out") bytes to stdout"
elif ! grep -qF "$want" "$tmp/typo.err"; then
	fail pbtxt_oracle/typo_exit "stderr lacks \"$want\": $(head -n 1 "$tmp/typo.err")"
else
	pass pbtxt_oracle/typo_exit
fi

# The same through stdin, and through `check`.
"$PFC" encode <"$tmp/typo.pbtxt" >"$tmp/typo.out" 2>"$tmp/typo.err"
rc=$?
if [ "$rc" -ne 0 ] && [ ! -s "$tmp/typo.out" ] && grep -qF "$want" "$tmp/typo.err"; then
	pass pbtxt_oracle/typo_stdin
else
	fail pbtxt_oracle/typo_stdin "exit $rc, stdout $(wc -c <"$tmp/typo.out") bytes, stderr: $(head -n 1 "$tmp/typo.err")"
fi
"$PFC" check configs/*.pbtxt "$tmp/typo.pbtxt" >"$tmp/check.out" 2>"$tmp/check.err"
rc=$?
if [ "$rc" -eq 1 ] && grep -qF "typo.pbtxt: $want" "$tmp/check.err" &&
	[ "$(grep -c . "$tmp/check.err")" -eq 1 ]; then
	pass pbtxt_oracle/check_reports_only_bad_file
else
	fail pbtxt_oracle/check_reports_only_bad_file "exit $rc, stderr: $(tr '\n' ' ' <"$tmp/check.err")"
fi

"$PFC" --type NoSuchMessage encode configs/*.pbtxt >"$tmp/type.out" 2>"$tmp/type.err" </dev/null
rc=$?
if [ "$rc" -eq 2 ] && [ ! -s "$tmp/type.out" ] && grep -q "NoSuchMessage" "$tmp/type.err"; then
	pass pbtxt_oracle/unknown_type_exit_2
else
	fail pbtxt_oracle/unknown_type_exit_2 "exit $rc (want 2), stderr: $(head -n 1 "$tmp/type.err")"
fi

"$PFC" frobnicate >/dev/null 2>&1
rc=$?
if [ "$rc" -eq 2 ]; then
	pass pbtxt_oracle/unknown_command_exit_2
else
	fail pbtxt_oracle/unknown_command_exit_2 "exit $rc (want 2)"
fi

# A length past the end of the input: exit 1, a message, no output.
printf '\012\377\377\377\377\017\010' >"$tmp/bad.bin"
"$PFC" decode "$tmp/bad.bin" >"$tmp/bad.out" 2>"$tmp/bad.err"
rc=$?
if [ "$rc" -eq 1 ] && [ ! -s "$tmp/bad.out" ] && grep -q "malformed TraceConfig" "$tmp/bad.err"; then
	pass pbtxt_oracle/malformed_binary
else
	fail pbtxt_oracle/malformed_binary "exit $rc, stdout $(wc -c <"$tmp/bad.out") bytes, stderr: $(head -n 1 "$tmp/bad.err")"
fi

# --type picks another message, by relative name.
printf 'size_kb: 4 fill_policy: DISCARD' |
	"$PFC" --type TraceConfig.BufferConfig encode >"$tmp/buf.bin" 2>"$tmp/buf.err"
if [ "$(od -An -tx1 "$tmp/buf.bin" | tr -d ' \n')" = "08042002" ]; then
	pass pbtxt_oracle/type_option
else
	fail pbtxt_oracle/type_option "got$(od -An -tx1 "$tmp/buf.bin" | tr -d "\n") $(head -n 1 "$tmp/buf.err")"
fi

summary

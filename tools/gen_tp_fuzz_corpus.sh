#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# gen_tp_fuzz_corpus.sh - regenerates the seed corpus of fuzz/tp_fuzz.c
# (fuzz/corpus/tp/) from the textprotos in tests/data/tp/fuzz/, the
# track event ones in tests/data/tp/track_event/ (te_*.pb) and the
# multi-machine ones in tests/data/tp/multi_machine/ (mm_*.pb), three
# profiling ones (StackSample, ART OOME, smaps: prof_*.pb): each one
# encoded, compact_sched bundles (written here: pfc_pbtxt does not pack
# repeated fields), the sched and events traces inside compressed_packets
# (and once more inside that), and truncated or corrupted sched traces.
# found_*.pb crashed the importer once (found by the fuzzer or by review):
# they are kept as they are, not generated.
# Usage: sh tools/gen_tp_fuzz_corpus.sh [OUT_DIR]   (needs OUT_DIR/pfc_pbtxt)
set -eu
cd "$(dirname "$0")/.."
OUT=${1:-out}
PBTXT="$OUT/pfc_pbtxt"
SRC=tests/data/tp/fuzz
DST=fuzz/corpus/tp

mkdir -p "$DST"
for f in "$SRC"/*.textproto; do
	n=$(basename "$f" .textproto)
	"$PBTXT" --type Trace encode "$f" >"$DST/$n.pb"
done
for f in tests/data/tp/track_event/*.textproto; do
	n=$(basename "$f" .textproto)
	"$PBTXT" --type Trace encode "$f" >"$DST/te_$n.pb"
done
for f in tests/data/tp/multi_machine/*.textproto; do
	n=$(basename "$f" .textproto)
	"$PBTXT" --type Trace encode "$f" >"$DST/mm_$n.pb"
done

for n in stack_sample art_oome smaps; do
	"$PBTXT" --type Trace encode "tests/data/tp/profiling/$n.textproto" >"$DST/prof_$n.pb"
done

# compressed_packets (TracePacket field 50) holding Trace-framed packets.
python3 - "$DST" <<'PY'
import sys, zlib

dst = sys.argv[1]

def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)

def field_len(num, data):
    return varint(num << 3 | 2) + varint(len(data)) + data

def compressed_packet(trace):
    body = field_len(50, zlib.compress(trace)) + varint(10 << 3) + varint(1)
    return field_len(1, body)

def field_varint(num, v):
    return varint(num << 3) + varint(v & 0xFFFFFFFFFFFFFFFF)

def packed(num, values):
    return field_len(num, b"".join(varint(v & 0xFFFFFFFFFFFFFFFF) for v in values))

def bundle_packet(bundle):
    return field_len(1, field_len(1, bundle) + field_varint(10, 2))

# compact_sched: delta timestamps, comm indices into the intern table (one
# out of range), then a bundle on a non-boot ftrace clock.
cs = b"".join(field_len(5, s) for s in (b"swapper/0", b"alpha", b"beta"))
cs += packed(1, [1000, 500, 250]) + packed(2, [0, 1, 256]) + packed(3, [10, 20, 0])
cs += packed(4, [120, 120, 120]) + packed(6, [1, 2, 0])
cs += packed(7, [1200, 10]) + packed(8, [10, 30]) + packed(9, [0, 1])
cs += packed(10, [120, 120]) + packed(11, [1, 7]) + packed(12, [1, 0])
compact = bundle_packet(field_varint(1, 0) + field_len(4, cs))
cs = field_len(5, b"gamma") + packed(1, [100]) + packed(2, [0]) + packed(3, [40])
cs += packed(4, [110]) + packed(6, [0])
compact += bundle_packet(field_varint(1, 1) + field_varint(5, 4) + field_varint(6, 500) +
                         field_varint(7, 1500) + field_len(4, cs))
open(dst + "/compact.pb", "wb").write(compact)
# Deltas that wrap int64 (signed overflow once).
cs = field_len(5, b"a") + packed(1, [2**63 - 1, 2**63 - 1, 5]) + packed(2, [0, 0, 0])
cs += packed(3, [1, 2, 3]) + packed(4, [1, 1, 1]) + packed(6, [0, 0, 0])
open(dst + "/regress_compact_wrap.pb", "wb").write(bundle_packet(field_varint(1, 0) +
                                                                  field_len(4, cs)))

inner = open(dst + "/sched.pb", "rb").read() + open(dst + "/events.pb", "rb").read()
once = compressed_packet(inner)
open(dst + "/compressed.pb", "wb").write(once)
open(dst + "/compressed_nested.pb", "wb").write(compressed_packet(once))
# A compressed packet whose deflate stream is cut short.
z = zlib.compress(inner)
bad = field_len(1, field_len(50, z[: len(z) - 20]))
open(dst + "/compressed_truncated_zlib.pb", "wb").write(bad)

sched = open(dst + "/sched.pb", "rb").read()
open(dst + "/sched_truncated.pb", "wb").write(sched[: len(sched) // 2])
open(dst + "/sched_garbage_tail.pb", "wb").write(sched + b"\xff\xfe\x00garbage")
# The last packet claims 1000 bytes more than the file holds.
open(dst + "/sched_len_past_end.pb", "wb").write(sched + b"\x0a" + varint(1000) + b"\x08\x01")
flipped = bytearray(sched)
for i in range(7, len(flipped), 53):
    flipped[i] ^= 0x5A
open(dst + "/sched_bitflips.pb", "wb").write(bytes(flipped))
PY

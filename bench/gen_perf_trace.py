#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""gen_perf_trace.py - writes a synthetic linux.perf trace for benchmarks:
N perf samples (TracePacket.perf_sample) of T threads of one process over a
call tree of F functions (a user mapping and a kernel one), with S distinct
callstacks of depth 4..D sharing their prefixes, picked with a skewed
(Zipf-like) distribution as real profiles are. Deterministic for a seed.
Used by bench/flamegraph_bench.sh.

  gen_perf_trace.py OUT [--samples N] [--threads T] [--functions F]
                        [--stacks S] [--depth D] [--seed X]
"""
import argparse
import random


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(field, wire):
    return varint(field << 3 | wire)


def vint(field, v):
    return key(field, 0) + varint(v)


def blob(field, data):
    return key(field, 2) + varint(len(data)) + data


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--samples", type=int, default=1000000)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--functions", type=int, default=2000)
    ap.add_argument("--stacks", type=int, default=20000)
    ap.add_argument("--depth", type=int, default=24)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    pid = 4242

    # Interned data: mappings 1 (user) and 2 (kernel), one frame per function.
    interned = bytearray()
    interned += blob(17, vint(1, 1) + blob(2, b"/usr/bin/bench_app"))
    interned += blob(17, vint(1, 2) + blob(2, b"[kernel.kallsyms]"))
    interned += blob(19, vint(1, 1) + vint(4, 0x400000) + vint(5, 0x800000) + vint(7, 1))
    interned += blob(19, vint(1, 2) + vint(7, 2))
    n_kernel = max(1, a.functions // 10)
    for f in range(1, a.functions + 1):
        kernel = f > a.functions - n_kernel
        name = ("k_func_%d" if kernel else "func_%d") % f
        interned += blob(5, vint(1, f) + blob(2, name.encode()))
        interned += blob(6, vint(1, f) + vint(2, f) + vint(3, 2 if kernel else 1) + vint(4, f * 16))
    # Callstacks: each extends a random earlier one (shared prefixes), user
    # frames first, kernel frames only at the leaf end.
    stacks = [[1]]
    user_max = a.functions - n_kernel
    while len(stacks) < a.stacks:
        base = stacks[rnd.randrange(len(stacks))]
        if len(base) >= a.depth:
            continue
        if base[-1] > user_max or rnd.random() < 0.1:
            nxt = rnd.randint(user_max + 1, a.functions)
        else:
            nxt = rnd.randint(2, user_max)
        stacks.append(base + [nxt])
    for i, s in enumerate(stacks, 1):
        interned += blob(7, vint(1, i) + b"".join(vint(2, f) for f in s))

    tree = bytearray()
    tree += blob(1, vint(1, pid) + vint(2, 1) + blob(3, b"bench_app"))
    for t in range(1, a.threads):
        tree += blob(2, vint(1, pid + t) + vint(5, pid) + blob(2, b"worker%d" % t))

    with open(a.out, "wb") as out:
        def packet(body):
            out.write(blob(1, body))

        packet(vint(10, 1) + vint(13, 1) + vint(8, 1000) + blob(2, bytes(tree)))
        weights = [1.0 / (i + 1) for i in range(len(stacks))]
        picks = rnd.choices(range(1, len(stacks) + 1), weights=weights, k=a.samples)
        for i, cs in enumerate(picks):
            tid = pid + (i % a.threads)
            sample = (vint(1, i % 4) + vint(2, pid) + vint(3, tid) + vint(4, cs) +
                      vint(5, 2) + vint(6, 1000))
            body = vint(10, 1) + vint(8, 2000 + i * 1000)
            if i == 0:
                body += vint(13, 1) + blob(12, bytes(interned))
            packet(body + blob(66, sample))


if __name__ == "__main__":
    main()

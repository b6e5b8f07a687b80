#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# pprof_decode.py - prints a pprof profile (perftools.profiles.Profile,
# plain or gzipped) as text that does not depend on the ids or order the
# writer chose: the sample types, then one line per sample, sorted:
# "VALUES<TAB>leaf;...;root" with each frame as NAME|SYSTEM_NAME|MAPPING
# FILE|BUILD ID, and |SOURCE FILE:LINE for a symbolized line. A decoder of our own (no protobuf package needed), so
# tests can compare our `convert profile` with Perfetto's.
# Usage: pprof_decode.py FILE
import gzip
import sys


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if not c & 0x80:
            return v, i


def fields(b):
    i = 0
    while i < len(b):
        tag, i = varint(b, i)
        fid, wt = tag >> 3, tag & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            v = b[i:i + n]
            i += n
        elif wt == 1:
            v = b[i:i + 8]
            i += 8
        elif wt == 5:
            v = b[i:i + 4]
            i += 4
        else:
            raise ValueError("wire type %d" % wt)
        yield fid, wt, v


def ints(wt, v):
    if wt == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def signed(x):
    return x - (1 << 64) if x >= 1 << 63 else x


def main():
    data = open(sys.argv[1], "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    strings, types, samples = [], [], []
    locs, funcs, maps = {}, {}, {}
    for fid, wt, v in fields(data):
        if fid == 6:
            strings.append(v.decode("utf-8", "replace"))
        elif fid == 1:
            d = {f: x for f, _, x in fields(v)}
            types.append((d.get(1, 0), d.get(2, 0)))
        elif fid == 2:
            lids, vals = [], []
            for f, w, x in fields(v):
                if f == 1:
                    lids += ints(w, x)
                elif f == 2:
                    vals += [signed(y) for y in ints(w, x)]
            samples.append((lids, vals))
        elif fid == 4:
            d, lines = {}, []
            for f, w, x in fields(v):
                if f == 4:
                    lines.append({g: y for g, _, y in fields(x)})
                else:
                    d[f] = x
            locs[d.get(1, 0)] = (d.get(2, 0), lines)
        elif fid == 5:
            d = {f: x for f, _, x in fields(v)}
            funcs[d.get(1, 0)] = (d.get(2, 0), d.get(3, 0), d.get(4))
        elif fid == 3:
            d = {f: x for f, _, x in fields(v)}
            maps[d.get(1, 0)] = (d.get(5, 0), d.get(6, 0))
    s = lambda i: strings[i] if i < len(strings) else "?%d" % i
    print("types " + ", ".join("%s/%s" % (s(t), s(u)) for t, u in types))
    out = []
    for lids, vals in samples:
        frames = []
        for lid in lids:
            mid, lines = locs.get(lid, (0, []))
            mf = maps.get(mid, (0, 0))
            for ln in lines:
                fn = funcs.get(ln.get(1, 0), (0, 0, None))
                f = "%s|%s|%s|%s" % (s(fn[0]), s(fn[1]), s(mf[0]), s(mf[1]))
                # Symbolized frames: the function's file and the line.
                if fn[2] is not None or 2 in ln:
                    f += "|%s:%s" % (s(fn[2] or 0), ln.get(2, ""))
                frames.append(f)
        out.append("%s\t%s" % (" ".join(map(str, vals)), ";".join(frames)))
    for line in sorted(out):
        print(line)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tp_winscope_trace.py - writes the small Winscope trace tp_winscope.sh
queries: two SurfaceFlinger layers snapshots (TracePacket field 93) with
a parent chain, a layer that is its own parent, a layer without an id, a
negative id, packed children, an enum, displays with nested and empty
messages, and a snapshot without elapsed time. With --cycle, a third
snapshot holds two layers that are each other's parent.
Usage: tp_winscope_trace.py OUT.pb [--cycle]"""
import struct
import sys


def varint(v):
    v &= (1 << 64) - 1
    out = b""
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def tag(num, wire):
    return varint(num << 3 | wire)


def f_varint(num, v):
    return tag(num, 0) + varint(v)


def f_len(num, data):
    if isinstance(data, str):
        data = data.encode()
    return tag(num, 2) + varint(len(data)) + data


def f_fixed64(num, v):
    return tag(num, 1) + struct.pack("<q", v)


def f_float(num, v):
    return tag(num, 5) + struct.pack("<f", v)


def f_double(num, v):
    return tag(num, 1) + struct.pack("<d", v)


def layer(id_=None, parent=None, name=None, extra=b""):
    out = b""
    if id_ is not None:
        out += f_varint(1, id_)
    if name is not None:
        out += f_len(2, name)
    if parent is not None:
        out += f_varint(25, parent)
    return out + extra


def snapshot(layers, displays=(), elapsed=None, where=None):
    out = b""
    if elapsed is not None:
        out += f_fixed64(1, elapsed)
    if where is not None:
        out += f_len(2, where)
    out += f_len(3, b"".join(f_len(1, l) for l in layers))
    for d in displays:
        out += f_len(7, d)
    return out


def packet(ts, snap):
    return f_len(1, f_varint(8, ts) + f_varint(10, 7) + f_len(93, snap))


def main():
    path = sys.argv[1]
    first = snapshot(
        [
            layer(1, name="root", extra=f_len(3, varint(2) + varint(3))),
            layer(2, 1, "child", f_float(49, 0.25) + f_varint(35, 2)),
            layer(3, 2, "leaf", f_len(13, f_varint(1, 4) + f_varint(2, 5))),
            layer(-2, -2, "self"),
            layer(None, 1, "noid"),
        ],
        displays=[
            f_varint(1, 9) + f_len(2, "D") + f_len(4, f_varint(1, 10) + f_varint(2, 20))
            + f_double(8, 1.5),
            f_varint(3, 1) + f_len(6, b"") + f_varint(7, 1),
        ],
        elapsed=5,
        where="test",
    )
    second = snapshot([layer(1, name="root"), b""])
    data = packet(1000, first) + packet(2000, second)
    if "--cycle" in sys.argv[2:]:
        data += packet(3000, snapshot([layer(5, 6), layer(6, 5), layer(7, 5)]))
    with open(path, "wb") as f:
        f.write(data)


main()

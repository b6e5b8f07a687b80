# SPDX-License-Identifier: Apache-2.0
"""perfetto_c: Python events on the Perfetto timeline, through libperfetto-c.

    import perfetto_c as pfc

    train = pfc.Category("train")
    pfc.init()                                   # a producer of traced
    with pfc.slice("load_batch", train, batch=3):
        ...
    pfc.counter("queue_depth", q.qsize(), train)
    pfc.shutdown()                               # also runs at exit

Slices, instants and counters go to the calling thread's track, named after
its threading name, unless given a Track. Nothing is recorded until a
tracing session enables the category; while it is off, slice() returns a
shared object that does nothing. See docs/sdk-python.md.
"""
import atexit as _atexit
import functools as _functools

from perfetto_c import _pfc
from perfetto_c._pfc import (
    Category,
    NullSlice,
    Slice,
    Track,
    begin,
    counter,
    default_category,
    end,
    flush,
    init,
    instant,
    new_flow_id,
    shutdown,
    slice,
    stats,
)

# `slice` is left out: `from perfetto_c import *` would hide the builtin.
__all__ = [
    "Category", "NullSlice", "Slice", "Track", "begin", "counter", "default_category", "end",
    "flush", "in_process_config", "init", "instant", "new_flow_id", "shutdown", "stats",
    "traced",
]

# Code flags of functions whose call returns before their body runs.
_CO_LAZY = 0x20 | 0x80 | 0x100 | 0x200  # generator, coroutine, iterable coroutine, async gen


def _wrap(func, name, cat):
    if isinstance(func, (staticmethod, classmethod)):
        return type(func)(_wrap(func.__func__, name, cat))
    code = getattr(func, "__code__", None)
    if code is not None and code.co_flags & _CO_LAZY:
        raise TypeError(
            "perfetto_c.traced: %r returns before its body runs (a generator or a "
            "coroutine); use `with perfetto_c.slice(...)` inside it, on a Track for "
            "async code" % (func,))
    if name is None:
        name = getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or repr(func)
    wrapper = _pfc._traced(func, name, cat)
    _functools.update_wrapper(wrapper, func)
    return wrapper


def traced(name=None, cat=None):
    """Decorator: every call of the function is a slice.

        @traced                      # named after the function's __qualname__
        def step(): ...

        @traced("optimizer.step", "train")
        def step(): ...

        @traced(cat=train)
        def step(): ...

    The slice ends when the function returns or raises. While the category
    is off, a call costs one check more than calling the function itself.
    Generators and coroutines are refused (their body runs later).
    """
    if callable(name) and not isinstance(name, str):
        return _wrap(name, None, cat)
    if name is not None and not isinstance(name, str):
        raise TypeError("perfetto_c.traced: the name must be a str, not %s"
                        % type(name).__name__)

    def decorate(func):
        return _wrap(func, name, cat)

    return decorate


def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(num, wire, payload):
    key = _varint(num << 3 | wire)
    if wire == 0:
        return key + _varint(payload)
    return key + _varint(len(payload)) + payload


def _strings(num, values):
    if isinstance(values, str):
        values = (values,)
    return b"".join(_field(num, 2, v.encode()) for v in values)


def in_process_config(enabled_categories=("*",), disabled_categories=(), enabled_tags=(),
                      disabled_tags=(), buffer_size_kb=65536, ring_buffer=True,
                      file_write_period_ms=1000, stall=True):
    """A serialized TraceConfig for init("in_process", config=...).

    One buffer of buffer_size_kb (a ring buffer, or one that stops when
    full with ring_buffer=False) and the track_event data source with the
    given category and tag rules (the SDK's rules: exact names before
    patterns such as "gpu*"; a category no rule matches is off). The file
    is written every file_write_period_ms. stall: writers wait for room in
    the shared memory rather than drop (BUFFER_EXHAUSTED_STALL_THEN_DROP).
    """
    te = (_strings(1, disabled_categories) + _strings(2, enabled_categories)
          + _strings(3, disabled_tags) + _strings(4, enabled_tags))
    dsc = _field(1, 2, b"track_event")
    if stall:
        dsc += _field(9, 0, 3)
    dsc += _field(113, 2, te)
    buf = _field(1, 0, buffer_size_kb) + _field(4, 0, 1 if ring_buffer else 2)
    cfg = _field(1, 2, buf) + _field(2, 2, _field(1, 2, dsc))
    if file_write_period_ms:
        cfg += _field(9, 0, file_write_period_ms) + _field(13, 0, file_write_period_ms)
    return cfg


# The in_process backend's file is complete only after shutdown().
_atexit.register(shutdown)

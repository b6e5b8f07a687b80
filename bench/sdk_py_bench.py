# SPDX-License-Identifier: Apache-2.0
"""sdk_py_bench.py - what one traced operation costs a Python program.

Run by bench/sdk_py_bench.sh with a traced session recording the "bench"
category (so slices are really written) and PYTHONPATH at the module.
Prints one "case ns" line per case: the best of RUNS runs of N iterations,
timed as the thread's own CPU time (a loaded machine steals wall time, not
this), and the events the SDK wrote and dropped.

  python3 sdk_py_bench.py N RUNS MARKER_PATH|-
"""
import os
import sys
import time

import perfetto_c as pfc

N = int(sys.argv[1])
RUNS = int(sys.argv[2])
MARKER = sys.argv[3]

bench = pfc.Category("bench", "the benchmark's events")
off = pfc.Category("bench_off", "a category no session enables")


def best_ns(loop):
    best = float("inf")
    for _ in range(RUNS):
        t0 = time.thread_time_ns()
        loop()
        best = min(best, (time.thread_time_ns() - t0) / N)
    return best


class Empty:
    """The floor: a `with` statement whose context manager does nothing."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def floor_with():
    e = Empty()
    for _ in range(N):
        with e:
            pass


def floor_lock():
    """A C context manager's cost: an uncontended lock."""
    import _thread
    lk = _thread.allocate_lock()
    for _ in range(N):
        with lk:
            pass


def floor_loop():
    for _ in range(N):
        pass


def slice_on():
    s = pfc.slice
    for _ in range(N):
        with s("load_batch", bench):
            pass


def slice_on_reused():
    """One slice object made once and entered again and again."""
    s = pfc.slice("load_batch", bench)
    for _ in range(N):
        with s:
            pass


def slice_on_args():
    s = pfc.slice
    for i in range(N):
        with s("load_batch", bench, batch=i, source="disk"):
            pass


def slice_off():
    s = pfc.slice
    for _ in range(N):
        with s("load_batch", off):
            pass


@pfc.traced(cat=bench)
def traced_fn():
    pass


def traced_on():
    f = traced_fn
    for _ in range(N):
        f()


def instant_on():
    ins = pfc.instant
    for _ in range(N):
        ins("tick", bench)


def marker_write(fd):
    w = os.write
    msg = b"B|%d|load_batch" % os.getpid()

    def loop():
        for _ in range(N):
            w(fd, msg)
    return loop


def marker_slice(fd):
    w = os.write
    b = b"B|%d|load_batch" % os.getpid()
    e = b"E|%d" % os.getpid()

    def loop():
        for _ in range(N):
            w(fd, b)
            w(fd, e)
    return loop


def main():
    pfc.init("system", name="sdk_py_bench")
    # The session enables "bench" once the SDK has connected.
    deadline = time.monotonic() + 10
    while not bench.enabled and time.monotonic() < deadline:
        time.sleep(0.01)
    if not bench.enabled:
        print("error: the session never enabled the bench category", file=sys.stderr)
        sys.exit(1)
    before = pfc.stats()
    cases = [
        ("loop_floor", floor_loop),
        ("with_empty_floor", floor_with),
        ("with_lock", floor_lock),
        ("slice_off", slice_off),
        ("slice_on", slice_on),
        ("slice_on_reused", slice_on_reused),
        ("slice_on_2args", slice_on_args),
        ("traced_call_on", traced_on),
        ("instant_on", instant_on),
    ]
    for name, loop in cases:
        print("%s %.1f" % (name, best_ns(loop)), flush=True)
    if MARKER != "-":
        fd = os.open(MARKER, os.O_WRONLY | os.O_CLOEXEC)
        print("marker_write %.1f" % best_ns(marker_write(fd)), flush=True)
        print("marker_slice %.1f" % best_ns(marker_slice(fd)), flush=True)
        os.close(fd)
    pfc.flush(5000)
    after = pfc.stats()
    print("sdk_written %d" % (after["events_written"] - before["events_written"]))
    print("sdk_dropped %d" % (after["events_dropped"] - before["events_dropped"]))
    pfc.shutdown()


main()

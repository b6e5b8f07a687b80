# SPDX-License-Identifier: Apache-2.0
"""sdk_py_app.py - a test application of the Python SDK (perfetto_c) for
tests/integration/sdk_python.sh: each scenario writes known events so the
test can find them in the trace, and prints key=value lines.

    sdk_py_app.py SCENARIO [--out FILE] [--wait-s S]

  kinds    (system backend) every event kind from threads with threading
           names: annotations of each type, an exception inside slices,
           decorated functions and methods, flows across threads, int and
           float counters, named and async tracks, a renamed thread
  filter   (system backend) slices in four categories, of which the
           session enables some; prints which were enabled
  off      (system backend, no service) events while nothing records
  inproc   (in-process backend, twice in one process) the default config
           into --out, then a config that keeps one category into --out.2
  dynamic  (in-process) more distinct names than the name cache holds
  errors   wrong arguments raise the documented exceptions

Exit status 0 unless a scenario's own check failed.
"""
import argparse
import queue
import sys
import threading
import time

import perfetto_c as pfc

CAT = pfc.Category("py", "the test's events")


def wait_enabled(cats, seconds):
    deadline = time.monotonic() + seconds
    while not all(c.enabled for c in cats):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def print_stats():
    for k, v in sorted(pfc.stats().items()):
        print("%s=%d" % (k, v))


@pfc.traced
def decorated(x):
    return x + 1


@pfc.traced("custom_name", "py")
def decorated_named():
    pass


class Model:
    @pfc.traced(cat=CAT)
    def forward(self, x):
        return x * 2

    @staticmethod
    @pfc.traced(cat=CAT)
    def helper():
        return 7


def recurse(n):
    # One line's slice() at every depth: the cached object is open above.
    with pfc.slice("recurse", CAT):
        if n > 1:
            recurse(n - 1)


def shared_slices():
    # Both workers, interleaved by sleep(0) while the slice is open.
    for _ in range(50):
        with pfc.slice("shared", CAT):
            time.sleep(0)


def worker0(handoff, flows, async_track, named_track, gauge):
    for _ in range(10):
        recurse(5)
    with pfc.slice("kept", CAT) as kept:
        pass
    with pfc.slice("kept", CAT):
        with kept:
            pass
    shared_slices()
    for i in range(100):
        with pfc.slice("step", CAT, i=i, f=i + 0.5, b=i % 2 == 0, s="v%d" % i, none=None,
                       big=2**64 - 1, huge=2**80, obj=[i]):
            with pfc.slice("inner", CAT):
                pfc.instant("tick", CAT, args={"not an identifier": i})
        pfc.counter("py_queue", i, CAT)
        pfc.counter("py_loss", 0.5 * i, CAT)
        pfc.counter(gauge, 1000 + i, CAT)
    for _ in range(10):
        try:
            with pfc.slice("raises", CAT):
                with pfc.slice("raises_inner", CAT):
                    raise ValueError("inside a slice")
        except ValueError:
            pass
    with pfc.slice("after_raise", CAT):
        pass
    for i in range(10):
        decorated(i)
        decorated_named()
    m = Model()
    for i in range(5):
        m.forward(i)
        Model.helper()
    for _ in range(flows):
        fid = pfc.new_flow_id()
        with pfc.slice("produce", CAT, flow=fid):
            pass
        handoff.put(("flow", fid))
    for i in range(5):
        pfc.begin("request", CAT, track=async_track, n=i)
        handoff.put(("end_async", i))
        with pfc.slice("on_named", CAT, track=named_track):
            pass
    handoff.put(None)


def worker1(handoff, async_track):
    shared_slices()
    while True:
        item = handoff.get()
        if item is None:
            return
        if item[0] == "flow":
            with pfc.slice("consume", CAT, terminating_flow=item[1]):
                pass
        else:
            time.sleep(0.001)
            pfc.end(CAT, track=async_track)


def renamer():
    for _ in range(10):
        with pfc.slice("rename_slice", CAT):
            pass
    threading.current_thread().name = "renamed"
    for _ in range(300):
        with pfc.slice("rename_slice", CAT):
            pass


def scenario_kinds(args):
    pfc.init("system", "sdk_py_app")
    if not wait_enabled([CAT], args.wait_s):
        print("no session enabled the category", file=sys.stderr)
        return 1
    handoff = queue.Queue()
    async_track = pfc.Track("py_async", "async")
    named_track = pfc.Track("py_named")
    gauge = pfc.Track("py_gauge", "counter")
    threads = [
        threading.Thread(target=worker0, name="py-worker-0",
                         args=(handoff, 10, async_track, named_track, gauge)),
        threading.Thread(target=worker1, name="py-worker-1", args=(handoff, async_track)),
        threading.Thread(target=renamer, name="rename-me"),
    ]
    with pfc.slice("main", CAT):
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    pfc.flush(5000)
    pfc.shutdown()
    print_stats()
    return 0


def scenario_filter(args):
    cats = {n: pfc.Category(n) for n in ("train", "eval", "dbg_on", "dbg_off")}
    pfc.init("system", "sdk_py_app")
    if not wait_enabled([cats["train"], cats["dbg_on"]], args.wait_s):
        print("no session enabled the categories", file=sys.stderr)
        return 1
    print("enabled=" + ",".join("%s:%d" % (n, c.enabled) for n, c in cats.items()))
    for i in range(50):
        for n, c in cats.items():
            with pfc.slice("f_" + n, c, i=i):
                pass
            pfc.instant("i_" + n, n)  # by name
    pfc.shutdown()
    print_stats()
    return 0


def scenario_off(args):
    pfc.init("system", "sdk_py_app")
    ok = not CAT.enabled and pfc.slice("a", CAT) is pfc.slice("b", CAT, x=1)
    for i in range(10000):
        with pfc.slice("off", CAT, i=i, s="x"):
            pfc.instant("off_i", CAT, i=i)
            pfc.counter("off_c", i, CAT)
        decorated(i)
    pfc.shutdown()
    print("off_ok=%d" % ok)
    print_stats()
    return 0 if ok else 1


def inproc_worker():
    for i in range(1000):
        with pfc.slice("ip_slice", CAT, i=i):
            pfc.instant("ip_tick", "keep")


def scenario_inproc(args):
    for path, cfg in ((args.out, None),
                      (args.out + ".2", pfc.in_process_config(enabled_categories=["keep"]))):
        pfc.init("in_process", "sdk_py_app", output=path, config=cfg)
        t = threading.Thread(target=inproc_worker, name="inproc-worker")
        t.start()
        t.join()
        pfc.counter("ip_counter", 42, "keep")
        pfc.shutdown()
    print_stats()
    return 0


def scenario_dynamic(args):
    size, _ = pfc._pfc._name_cache()
    pfc._pfc._name_cache(size + 5)
    pfc.init("in_process", "sdk_py_app", output=args.out)
    for i in range(40):
        with pfc.slice("dyn_%d" % i, CAT, **{"k%d" % i: i}):
            pass
    for i in range(40):
        pfc.instant("dyn_%d" % i, CAT)
    pfc.shutdown()
    print("cache=%d,%d" % pfc._pfc._name_cache())
    return 0


def expect_raises(exc, fn, *a, **kw):
    try:
        fn(*a, **kw)
    except exc:
        return True
    except Exception as e:  # the wrong exception
        print("wrong exception from %s: %r" % (fn.__name__, e), file=sys.stderr)
        return False
    print("no exception from %s%r" % (fn.__name__, a), file=sys.stderr)
    return False


def scenario_errors(args):
    checks = [
        expect_raises(TypeError, pfc.slice, 42),
        expect_raises(TypeError, pfc.slice),
        expect_raises(TypeError, pfc.slice, "x", 3),
        expect_raises(TypeError, pfc.instant, b"bytes"),
        expect_raises(ValueError, pfc.Category, ""),
        expect_raises(ValueError, pfc.Track, "t", "nope"),
        expect_raises(ValueError, pfc.init, "nope"),
        expect_raises(ValueError, pfc.init, "in_process"),
        expect_raises(ValueError, pfc.init, "system", output="x.pftrace"),
        expect_raises(TypeError, pfc.end, CAT, flow=1),
        expect_raises(TypeError, pfc.counter, "c"),
        pfc.Category("py") is CAT,
        pfc.flush(10) is False,
    ]
    pfc.init("in_process", output=args.out)
    on = CAT.enabled
    checks += [
        on,
        expect_raises(RuntimeError, pfc.init, "system"),
        expect_raises(TypeError, pfc.slice, 42, CAT),
        expect_raises(ValueError, pfc.slice, "nul\0inside", CAT),
        expect_raises(ValueError, pfc.slice, "x", CAT, flow=-1),
        expect_raises(TypeError, pfc.slice, "x", CAT, flow="1"),
        expect_raises(TypeError, pfc.slice, "x", CAT, track="t"),
        expect_raises(ValueError, pfc.slice, "x", CAT, track=pfc.Track("c", "counter")),
        expect_raises(ValueError, pfc.counter, pfc.Track("s"), 1, CAT),
        expect_raises(TypeError, pfc.counter, "c", "not a number", CAT),
        expect_raises(TypeError, pfc.traced, 42),
    ]
    gen_refused = False
    try:
        @pfc.traced
        def gen():
            yield 1
    except TypeError:
        gen_refused = True
    s = pfc.slice("twice", CAT)
    with s:
        checks.append(expect_raises(RuntimeError, s.__enter__))
    with s:  # reusable once closed
        pass
    checks += [gen_refused, pfc.flush(5000) is True]
    pfc.shutdown()
    failed = [i for i, ok in enumerate(checks) if not ok]
    print("errors_checked=%d errors_failed=%s" % (len(checks), failed or "none"))
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario")
    ap.add_argument("--out")
    ap.add_argument("--wait-s", type=float, default=10.0)
    args = ap.parse_args()
    fn = globals().get("scenario_" + args.scenario)
    if not fn:
        print("unknown scenario " + args.scenario, file=sys.stderr)
        return 2
    return fn(args)


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: Apache-2.0
"""tp_batch_dask.py - perfetto_c.batch_trace_processor, run by
tp_batch_dask.sh (PYTHONPATH=$OUT/python); prints ok/FAIL/skip lines.
    python3 tp_batch_dask.py local SHELL DIR
        engines on this machine: rows equal to the shell's -Q output and to
        one TraceProcessor per trace; query_and_flatten's _path column;
        traces as bytes / file objects; errors with the trace's metadata;
        load and run failures raised or counted (FailureHandling)
    python3 tp_batch_dask.py dask|gone SHELL DIR SCHEDULER GUEST_IP GUEST_PID
        dask: the same traces on a Dask cluster (two workers on 127.0.0.1,
        one at GUEST_IP in another network namespace that alone sees
        DIR/guestonly and does not see DIR/hostonly): frames equal to the
        local run's, each trace on a worker that can read it, failures;
        gone: the guest worker (GUEST_PID) killed: a clear error, or counted
    python3 tp_batch_dask.py upstream SHELL DIR
        Perfetto's own BatchTraceProcessor (PYTHONPATH has its package too)
        with bin_path = SHELL gives the frames ours gives
DIR holds traces/{a,b,s}.pftrace, hostonly/h.pftrace (a copy of a) and
bad/bad.pftrace (not a trace); guestonly/g.pftrace is a copy of s.
"""

import io
import os
import signal
import subprocess
import sys

from perfetto_c.batch_trace_processor import (BatchTraceProcessor, BatchTraceProcessorConfig,
                                              FailureHandling)
from perfetto_c.trace_processor import (TraceProcessor, TraceProcessorConfig,
                                        TraceProcessorException)

MODE, SHELL, DIR = sys.argv[1], sys.argv[2], sys.argv[3]
TRACES = [os.path.join(DIR, "traces", n) for n in ("a.pftrace", "b.pftrace", "s.pftrace")]
HOSTONLY = os.path.join(DIR, "hostonly", "h.pftrace")
GUESTONLY = os.path.join(DIR, "guestonly", "g.pftrace")
BAD = os.path.join(DIR, "bad", "bad.pftrace")
MISSING = os.path.join(DIR, "missing", "none.pftrace")
SQL = ("select 'sched' as what, id, ts, dur, cpu, utid, end_state from sched "
       "union all select 'slice', id, ts, dur, depth, NULL, name from slice order by 1, 2")
COUNT = "select count(*) as n, sum(dur) as d from sched"


def say(ok, name, why=""):
    print(("ok   tp_batch_dask/%s" % name) if ok else
          ("FAIL tp_batch_dask/%s: %s" % (name, str(why)[:500])), flush=True)


def rows(df):
    return df.astype(object).where(df.notna(), None).values.tolist()


def shell_count(trace):
    out = subprocess.run([SHELL, "-Q", "select count(*) from sched", trace], capture_output=True,
                         text=True).stdout
    return int(out.splitlines()[1])


def local_config(**kw):
    return BatchTraceProcessorConfig(tp_config=TraceProcessorConfig(bin_path=SHELL), **kw)


def raises(fn, *words):
    """The exception fn raised when its text holds every word, else None."""
    try:
        fn()
    except TraceProcessorException as e:
        return e if all(w in str(e) for w in words) else None
    return None


def _start(tp):
    """The trace's start (a.pftrace starts at 1000, b.pftrace later)."""
    return next(iter(tp.query("select start_ts from trace_bounds"))).start_ts


def local():
    traces = TRACES + [HOSTONLY]
    with BatchTraceProcessor(traces, config=local_config()) as btp:
        counts = btp.query_single_result("select count(*) from sched")
        want = [shell_count(t) for t in traces]
        say(counts == want and sum(want) > 0, "local/counts_as_shell", (counts, want))
        frames = btp.query(SQL)
        singles = []
        for t in traces:
            with TraceProcessor(trace=t, bin_path=SHELL) as tp:
                singles.append(rows(tp.query(SQL).as_pandas_dataframe()))
        say([rows(f) for f in frames] == singles, "local/frames_as_single_engines")
        flat = btp.query_and_flatten(COUNT)
        say(list(flat.columns) == ["n", "d", "_path"] and list(flat["_path"]) == traces,
            "local/flatten_path_column", flat)
        e = raises(lambda: btp.query("select nope from sched"), "no such column: nope",
                   "'_path': '%s'" % TRACES[0])
        say(e is not None, "local/query_error_has_metadata")
        seen = []

        class Obs(BatchTraceProcessor.Observer):
            def trace_processed(self, metadata, execution_time_seconds):
                seen.append((metadata["_path"], execution_time_seconds >= 0))

        btp.observer = Obs()
        btp.execute_and_flatten(lambda tp: tp.query(COUNT).as_pandas_dataframe())
        say(seen == [(t, True) for t in traces], "local/observer", seen)
    with open(TRACES[1], "rb") as f:
        blob = f.read()
    with open(TRACES[2], "rb") as f, BatchTraceProcessor([blob, f], config=local_config()) as b2:
        flat = b2.query_and_flatten(COUNT)
    with BatchTraceProcessor(TRACES[1:], config=local_config()) as b3:
        want = b3.query_and_flatten(COUNT)
    say(rows(flat) == rows(want[["n", "d"]]) and list(flat.columns) == ["n", "d"],
        "local/bytes_and_file_object", (flat, want))

    class Resolver:  # as upstream's TraceUriResolver: results with trace and metadata
        class Result:
            def __init__(self, trace, metadata):
                self.trace, self.metadata = trace, metadata

        def resolve(self):
            return [self.Result(t, {"day": "d%d" % i}) for i, t in enumerate(TRACES[:2])]

    with BatchTraceProcessor(Resolver(), config=local_config()) as b4:
        flat = b4.query_and_flatten(COUNT)
    say(list(flat.columns) == ["n", "d", "day", "_path"] and list(flat["day"]) == ["d0", "d1"]
        and list(flat["_path"]) == TRACES[:2], "local/resolver_metadata", flat)
    e = raises(lambda: BatchTraceProcessor([TRACES[0], BAD], config=local_config()),
               BAD, "Unknown trace type")
    say(e is not None, "local/bad_trace_raises")
    e = raises(lambda: BatchTraceProcessor([MISSING], config=local_config()), MISSING,
               "No such file")
    say(e is not None, "local/missing_trace_raises")
    cfg = local_config(load_failure_handling=FailureHandling.INCREMENT_STAT,
                       execute_failure_handling=FailureHandling.INCREMENT_STAT)
    with BatchTraceProcessor([TRACES[0], BAD, MISSING, TRACES[1]], config=cfg) as btp:
        frames = btp.query(COUNT)
        say(btp.stats().load_failures == 2 and len(frames) == 2, "local/load_failures_counted",
            (btp.stats(), frames))
        frames = btp.execute(lambda tp: tp.query(
            "select nope from sched" if _start(tp) == 1000 else COUNT).as_pandas_dataframe())
        say(btp.stats().execute_failures == 1 and frames[0].empty and not frames[1].empty,
            "local/execute_failures_counted", (btp.stats(), frames))


def dask(sched, guest_ip, guest_pid):
    import distributed

    client = distributed.Client(sched, timeout=60)
    try:
        client.wait_for_workers(3, timeout=120)
        say(len(client.scheduler_info()["workers"]) == 3, "dask/three_workers")
    except Exception as e:  # reported, the checks below then fail
        say(False, "dask/three_workers", e)
    everyone = TRACES + [HOSTONLY]
    with BatchTraceProcessor(everyone, config=local_config()) as btp:
        want = btp.query_and_flatten(SQL)
    with BatchTraceProcessor(TRACES[2], config=local_config()) as btp:
        want_g = btp.query(SQL)[0]
    dcfg = BatchTraceProcessorConfig(dask=client)
    with BatchTraceProcessor(everyone + [GUESTONLY], config=dcfg) as btp:
        got = btp.query_and_flatten(SQL)
        mine = got[got["_path"] != GUESTONLY].reset_index(drop=True)
        say(rows(mine) == rows(want) and list(mine.columns) == list(want.columns),
            "dask/frames_as_local", (len(mine), len(want)))
        g = got[got["_path"] == GUESTONLY].drop(columns="_path")
        say(len(g) > 0 and rows(g) == rows(want_g), "dask/guest_only_trace", (len(g), len(want_g)))
        where = btp.execute(lambda tp: distributed.get_worker().address)
        say(where[3].startswith("tcp://127.0.0.1:") and
            where[4].startswith("tcp://%s:" % guest_ip), "dask/placed_where_readable", where)
        counts = btp.query_single_result("select count(*) from sched")
        say(counts[:4] == [shell_count(t) for t in everyone], "dask/single_result", counts)
        e = raises(lambda: btp.query("select nope from sched"), "no such column: nope",
                   "'_path': '%s'" % TRACES[0])
        say(e is not None, "dask/query_error_has_metadata")
    with open(TRACES[1], "rb") as f:
        blob = f.read()
    with BatchTraceProcessor([blob], config=dcfg) as btp:
        got = btp.query_and_flatten(COUNT)
    say(got["n"].tolist() == [shell_count(TRACES[1])] and list(got.columns) == ["n", "d"],
        "dask/bytes_trace", got)
    e = raises(lambda: BatchTraceProcessor([TRACES[0], BAD], config=dcfg), BAD,
               "Unknown trace type")
    say(e is not None, "dask/bad_trace_raises")
    e = raises(lambda: BatchTraceProcessor([MISSING], config=dcfg), MISSING,
               "no Dask worker can read")
    say(e is not None, "dask/unreadable_everywhere_raises")
    cfg = BatchTraceProcessorConfig(dask=client,
                                    load_failure_handling=FailureHandling.INCREMENT_STAT,
                                    execute_failure_handling=FailureHandling.INCREMENT_STAT)
    with BatchTraceProcessor([TRACES[0], BAD, MISSING], config=cfg) as btp:
        say(btp.stats().load_failures == 2 and len(btp.query(COUNT)) == 1,
            "dask/load_failures_counted", btp.stats())
    client.close()


def gone(sched, guest_ip, guest_pid):
    """The guest worker goes: the trace it held fails clearly; the others
    answer."""
    import distributed

    client = distributed.Client(sched, timeout=60)
    dcfg = BatchTraceProcessorConfig(dask=client)
    btp = BatchTraceProcessor([HOSTONLY, GUESTONLY], config=dcfg)
    os.kill(guest_pid, signal.SIGKILL)
    e = raises(lambda: btp.query(COUNT), "'_path': '%s'" % GUESTONLY,
               "the Dask worker tcp://%s:" % guest_ip, "is gone")
    say(e is not None, "dask/worker_gone_raises")
    btp.config.execute_failure_handling = FailureHandling.INCREMENT_STAT
    frames = btp.query(COUNT)
    say(btp.stats().execute_failures == 1 and frames[1].empty and
        frames[0]["n"].tolist() == [shell_count(HOSTONLY)], "dask/worker_gone_counted",
        (btp.stats(), frames))
    btp.close()
    e = raises(lambda: BatchTraceProcessor([GUESTONLY], config=dcfg), GUESTONLY,
               "no Dask worker can read")
    say(e is not None, "dask/guest_only_trace_after_guest_left")
    client.close()
    e = raises(lambda: BatchTraceProcessor(TRACES, config=BatchTraceProcessorConfig(
        dask="tcp://%s:1" % guest_ip, dask_timeout=5)), "cannot reach the Dask scheduler")
    say(e is not None, "dask/no_scheduler_raises")


def upstream():
    from perfetto.batch_trace_processor.api import BatchTraceProcessor as UpBTP
    from perfetto.batch_trace_processor.api import BatchTraceProcessorConfig as UpConfig
    from perfetto.trace_processor import TraceProcessorConfig as UpTpConfig

    cfg = UpConfig(tp_config=UpTpConfig(bin_path=SHELL))
    with UpBTP(TRACES, config=cfg) as btp:
        got = btp.query_and_flatten(SQL)
        counts = btp.query_single_result("select count(*) from sched")
    with BatchTraceProcessor(TRACES, config=local_config()) as btp:
        want = btp.query_and_flatten(SQL)
    say(rows(got) == rows(want) and list(got.columns) == list(want.columns),
        "upstream/batch_frames_as_ours", (len(got), len(want)))
    say([int(c) for c in counts] == [shell_count(t) for t in TRACES], "upstream/single_result",
        counts)


if MODE == "local":
    local()
elif MODE == "dask":
    dask(sys.argv[4], sys.argv[5], int(sys.argv[6]))
elif MODE == "gone":
    gone(sys.argv[4], sys.argv[5], int(sys.argv[6]))
elif MODE == "upstream":
    upstream()
else:
    print("FAIL tp_batch_dask/usage: unknown mode %s" % MODE)

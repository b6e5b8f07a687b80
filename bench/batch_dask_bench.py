# SPDX-License-Identifier: Apache-2.0
"""batch_dask_bench.py - wall time of batch analysis over N traces: our
BatchTraceProcessor with engines on this machine and on a Dask cluster of
local worker processes (distributed.LocalCluster on 127.0.0.1), and
pfc_batch_query with its own workers and with --dask. Timings only: it
never fails on a figure.

    PYTHONPATH=out/python /usr/bin/python3 bench/batch_dask_bench.py \
        [--traces N] [--workers W] [TRACE...]

Traces: the real recordings in ../shared/differential/traces unless given,
used round robin until N (default 20) copies are in a scratch folder.
W (default: the CPU count) is the Dask workers (one thread each), the
local engines run at once and pfc_batch_query's -j.
"""

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.environ.get("OUT", os.path.join(TOP, "out"))
SHELL = os.path.join(OUT, "trace_processor_shell")
BQ = os.path.join(OUT, "pfc_batch_query")
QUERIES = {
    "sched": "select count(*) as n, sum(dur) as d from sched",
    "states": "select utid, state, count(*) as c, sum(dur) as d from thread_state "
              "group by utid, state order by d desc limit 20",
    "slices": "select name, count(*) as c, max(dur) as m from slice group by name "
              "order by c desc limit 20",
}


def timed(fn):
    start = time.monotonic()
    out = fn()
    return out, time.monotonic() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--traces", type=int, default=20)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("trace", nargs="*")
    args = ap.parse_args()
    src = args.trace or sorted(glob.glob(os.path.join(TOP, "..", "shared", "differential",
                                                      "traces", "*.pftrace")))
    if not src:
        print("no traces (give some, or ../shared/differential/traces)")
        return 0
    os.environ["PERFETTO_C_TP"] = SHELL
    os.environ["PYTHONPATH"] = os.path.join(OUT, "python")
    from perfetto_c.batch_trace_processor import BatchTraceProcessor, BatchTraceProcessorConfig

    tmp = tempfile.mkdtemp(prefix="pfc_batch_bench.")
    try:
        traces = []
        os.mkdir(os.path.join(tmp, "traces"))
        for i in range(args.traces):
            p = os.path.join(tmp, "traces", "%03d.pftrace" % i)
            shutil.copyfile(src[i % len(src)], p)
            traces.append(p)
        size = sum(os.path.getsize(t) for t in traces)
        print("%d traces, %.1f MB, %d workers, %d CPUs" % (len(traces), size / 1e6, args.workers,
                                                          os.cpu_count() or 1))

        def run(cfg):
            btp, t_load = timed(lambda: BatchTraceProcessor(traces, config=cfg))
            t_q = {}
            for name, sql in QUERIES.items():
                _, t_q[name] = timed(lambda: btp.query_and_flatten(sql))
            _, t_close = timed(btp.close)
            return t_load, t_q, t_close

        def report(label, res, extra=0.0):
            t_load, t_q, t_close = res
            total = extra + t_load + sum(t_q.values()) + t_close
            print("%-34s load %6.2f s  queries %s  total %6.2f s" % (
                label, t_load, " ".join("%s %5.2f" % kv for kv in t_q.items()), total))

        report("BatchTraceProcessor, local", run(BatchTraceProcessorConfig(
            max_workers=args.workers)))
        try:
            import distributed
        except ImportError:
            print("no python3-distributed: the Dask rows are left out")
            return 0
        cluster, t_up = timed(lambda: distributed.LocalCluster(
            n_workers=args.workers, threads_per_worker=1, processes=True, host="127.0.0.1",
            dashboard_address=None))
        client = distributed.Client(cluster)
        print("(LocalCluster start: %.2f s, not counted below)" % t_up)
        report("BatchTraceProcessor, Dask", run(BatchTraceProcessorConfig(dask=client)))
        sql_dir = os.path.join(tmp, "sql")
        os.mkdir(sql_dir)
        for name, sql in QUERIES.items():
            with open(os.path.join(sql_dir, name + ".sql"), "w") as f:
                f.write(sql + ";\n")
        for label, extra in (("pfc_batch_query -j %d" % args.workers, ["-j", str(args.workers)]),
                             ("pfc_batch_query --dask", ["--dask", cluster.scheduler_address])):
            out = os.path.join(tmp, label.split()[-1].strip("-") + ".csv")
            res, secs = timed(lambda: subprocess.run(
                [BQ] + extra + ["-s", sql_dir, "-o", out, os.path.join(tmp, "traces")],
                capture_output=True, text=True))
            print("%-34s total %6.2f s (exit %d)" % (label, secs, res.returncode))
        client.close()
        cluster.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: Apache-2.0
"""perfetto_c.batch_trace_processor: the same SQL over many traces at
once, with the interface of Perfetto's BatchTraceProcessor:

    from perfetto_c.batch_trace_processor import BatchTraceProcessor

    with BatchTraceProcessor(['a.pftrace', 'b.pftrace']) as btp:
        frames = btp.query('select count(*) as n from sched')   # one per trace
        df = btp.query_and_flatten('select ts, dur from sched') # + a _path column

One engine (our trace_processor_shell --httpd, through
perfetto_c.trace_processor.TraceProcessor) per trace, loaded once and
queried in parallel: on this machine by default, or on the workers of a
Dask distributed cluster with BatchTraceProcessorConfig(dask='host:port' or
a distributed.Client) - then each trace is loaded by a worker that can read
its path, stays in that worker, and execute(fn) runs fn there; results
come back as pandas frames (perfetto_c.batch_dask).

traces: a path, a file object, bytes, a generator of bytes, an object
with resolve() returning items with .trace and .metadata (as upstream's
TraceUriResolver), or a list of those. A path's metadata is {'_path':
path}, the column query_and_flatten() adds, as upstream. Failures raise
TraceProcessorException with the trace's metadata, or with
FailureHandling.INCREMENT_STAT are counted in stats(). Needs pandas
(Debian python3-pandas); the Dask mode needs python3-distributed.
See docs/trace-processor.md.
"""

import concurrent.futures as cf
import enum
import os
import time

from perfetto_c.trace_processor import (_Closing, TraceProcessor, TraceProcessorConfig,
                                        TraceProcessorException)

__all__ = ["BatchTraceProcessor", "BatchTraceProcessorConfig", "FailureHandling", "Stats",
           "TraceProcessorException"]

MAX_LOAD_WORKERS = 32


class FailureHandling(enum.Enum):
    """What a trace that fails to load or to run does: raise (the default)
    or drop the trace / give an empty frame and count it in stats()."""
    RAISE_EXCEPTION = 0
    INCREMENT_STAT = 1


class BatchTraceProcessorConfig:
    """tp_config: the TraceProcessorConfig of every engine (on a Dask
    worker bin_path None means the worker's $PERFETTO_C_TP or PATH);
    dask: None (engines on this machine), a scheduler address or a
    distributed.Client; dask_timeout: seconds to keep trying to reach the
    scheduler (default $PFC_DASK_TIMEOUT, else 30); max_workers: engines
    run at once locally (default: one per CPU)."""

    def __init__(self, tp_config=None, load_failure_handling=FailureHandling.RAISE_EXCEPTION,
                 execute_failure_handling=FailureHandling.RAISE_EXCEPTION, dask=None,
                 max_workers=None, dask_timeout=None):
        self.dask_timeout = dask_timeout
        self.tp_config = tp_config or TraceProcessorConfig()
        self.load_failure_handling = load_failure_handling
        self.execute_failure_handling = execute_failure_handling
        self.dask = dask
        self.max_workers = max_workers


class Stats:
    """Traces that failed to load and runs that failed (counted only with
    FailureHandling.INCREMENT_STAT)."""

    def __init__(self):
        self.load_failures = 0
        self.execute_failures = 0

    def __repr__(self):
        return "Stats(load_failures=%d, execute_failures=%d)" % (self.load_failures,
                                                                 self.execute_failures)


def resolve_traces(traces):
    """traces (see the module's doc) -> [(trace, metadata)]: a path stays a
    path (str), anything else is passed to TraceProcessor as it is."""
    items = list(traces) if isinstance(traces, (list, tuple)) else [traces]
    out = []
    for item in items:
        if hasattr(item, "resolve") and callable(item.resolve):
            for res in item.resolve():
                for trace, meta in resolve_traces([res.trace]):
                    out.append((trace, dict(getattr(res, "metadata", None) or {}, **meta)))
        elif isinstance(item, (str, os.PathLike)):
            path = os.fspath(item)
            out.append((path, {"_path": path}))
        else:
            out.append((item, {}))
    return out


class _LocalBackend:
    """Engines started on this machine, one per trace."""

    def __init__(self, config):
        n = config.max_workers or os.cpu_count() or 1
        self._config = config.tp_config
        self._load_pool = cf.ThreadPoolExecutor(max_workers=min(n, MAX_LOAD_WORKERS))
        self._pool = cf.ThreadPoolExecutor(max_workers=n)

    def load(self, refs):
        """[(trace, metadata)] -> [TraceProcessor or the exception]."""
        def one(ref):
            try:
                return TraceProcessor(trace=ref[0], config=self._config)
            except Exception as e:  # returned, handled by the caller
                return e
        return list(self._load_pool.map(one, refs))

    def run(self, handles, fn):
        """fn on every engine -> [(result, seconds) or the exception]."""
        def one(tp):
            start = time.monotonic()
            try:
                return fn(tp), time.monotonic() - start
            except Exception as e:
                return e
        return list(self._pool.map(one, handles))

    def close(self, handles):
        for tp in handles:
            tp.close()
        self._load_pool.shutdown()
        self._pool.shutdown()


class BatchTraceProcessor(_Closing):
    """Ad-hoc SQL (or any function of a TraceProcessor) over many traces,
    in parallel, here or on a Dask cluster."""

    class Observer:
        """Told of each trace run by execute_and_flatten()."""

        def trace_processed(self, metadata, execution_time_seconds):
            raise NotImplementedError

    def __init__(self, traces, config=None, observer=None):
        self.closed = True
        self.config = config or BatchTraceProcessorConfig()
        self.observer = observer
        self._stats = Stats()
        refs = resolve_traces(traces)
        if self.config.dask is not None:
            from perfetto_c.batch_dask import DaskBackend  # needs python3-distributed
            self._backend = DaskBackend(self.config)
        else:
            self._backend = _LocalBackend(self.config)
        self.closed = False
        self.tps_and_metadata = []
        loaded = self._backend.load(refs)
        failure = None
        for (_, meta), got in zip(refs, loaded):
            if isinstance(got, Exception):
                if self.config.load_failure_handling == FailureHandling.INCREMENT_STAT:
                    self._stats.load_failures += 1
                elif failure is None:
                    failure = _with_metadata(meta, got)
            else:
                self.tps_and_metadata.append((got, meta))
        if failure is not None:
            self.close()
            raise failure

    # ---------------------------------------------------------- queries ----

    def query(self, sql):
        """A pandas frame per trace with the rows of @sql."""
        return self.execute(lambda tp: tp.query(sql).as_pandas_dataframe())

    def query_and_flatten(self, sql):
        """One pandas frame: every trace's rows of @sql, with a column per
        key of the trace's metadata (_path for a path)."""
        return self.execute_and_flatten(lambda tp: tp.query(sql).as_pandas_dataframe())

    def query_single_result(self, sql):
        """The one value (one row, one column) of @sql on every trace."""
        def single(tp):
            df = tp.query(sql).as_pandas_dataframe()
            if len(df.index) != 1:
                raise TraceProcessorException("Query should only return a single row")
            if len(df.columns) != 1:
                raise TraceProcessorException("Query should only return a single column")
            return df.iloc[0, 0]
        return self.execute(single)

    def execute(self, fn):
        """fn(tp) on every trace's engine, in parallel; a list of results
        in trace order. On Dask, fn runs on the worker holding the trace
        (it and its result must pickle)."""
        return [r for r, _ in self._run(fn)]

    def execute_and_flatten(self, fn):
        """execute() of a function returning a frame, the frames joined
        with the trace's metadata as columns."""
        import pandas as pd

        frames = []
        for (result, secs), (_, meta) in zip(self._run(fn), self.tps_and_metadata):
            if self.observer is not None:
                self.observer.trace_processed(meta, secs)
            for key, value in meta.items():
                result[key] = value
            frames.append(result)
        if not frames:
            return pd.DataFrame()
        return pd.concat(frames).reset_index(drop=True)

    def _run(self, fn):
        if self.closed:
            raise TraceProcessorException("the BatchTraceProcessor is closed")
        handles = [h for h, _ in self.tps_and_metadata]
        out = []
        for got, (_, meta) in zip(self._backend.run(handles, fn), self.tps_and_metadata):
            if not isinstance(got, Exception):
                out.append(got)
            elif not isinstance(got, TraceProcessorException):
                raise got
            elif self.config.execute_failure_handling == FailureHandling.RAISE_EXCEPTION:
                raise _with_metadata(meta, got)
            else:
                import pandas as pd

                self._stats.execute_failures += 1
                out.append((pd.DataFrame(), 0.0))
        return out

    def stats(self):
        return self._stats

    def close(self):
        """Stops every engine (and, on Dask, the client this object made)."""
        if self.closed:
            return
        self.closed = True
        self._backend.close([h for h, _ in self.tps_and_metadata])
        self.tps_and_metadata = []



def _with_metadata(meta, exc):
    if isinstance(exc, TraceProcessorException):
        return TraceProcessorException("%s %s" % (meta, exc))
    return exc

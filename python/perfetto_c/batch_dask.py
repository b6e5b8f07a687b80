# SPDX-License-Identifier: Apache-2.0
"""perfetto_c.batch_dask: BatchTraceProcessor's engines on the workers of
a Dask distributed cluster (Debian python3-distributed).

Loading: every worker is asked which of the trace paths it can read (a
relative path is made absolute from this process's working directory
first, so a cluster sharing this machine's files reads the same file);
each trace goes to one of the workers that can, as Dask places it. A
trace given as bytes, a file object or a generator is read here and sent
to any worker. The worker
starts our trace_processor_shell (tp_config.bin_path, else its own
$PERFETTO_C_TP or PATH) with die_with_parent, loads the trace and keeps
the engine under a key; later runs of the trace are pinned to that worker
and the engine is stopped by close(). Workers need perfetto_c importable.

Waiting is on conditions: a pending run whose worker has left the
scheduler fails with a TraceProcessorException naming the worker (a trace
that no worker can read fails its load the same way), instead of waiting
for a worker that will not come back.
"""

import os
import threading
import time
import uuid

from perfetto_c.trace_processor import TraceProcessor, TraceProcessorException

_POLL = 0.5  # seconds between looks at the scheduler's workers while waiting

# ------------------------------------------------------- on the workers ----

_ENGINES = {}
_ENGINES_LOCK = threading.Lock()


def readable(paths):
    """On a worker: which of @paths it can read as a file."""
    return [os.path.isfile(p) and os.access(p, os.R_OK) for p in paths]


def worker_load(key, trace, tp_config):
    """On a worker: start an engine, load @trace, keep it as @key; returns
    the worker's address."""
    from distributed import get_worker

    cfg = type(tp_config)(**vars(tp_config))
    cfg.die_with_parent = True  # a killed worker leaves no engine behind
    tp = TraceProcessor(trace=trace, config=cfg)
    with _ENGINES_LOCK:
        _ENGINES[key] = (tp, threading.Lock())
    return get_worker().address


def worker_run(key, fn):
    """On a worker: fn(engine of @key) -> (result, seconds)."""
    from distributed import get_worker

    with _ENGINES_LOCK:
        entry = _ENGINES.get(key)
    if entry is None:
        raise TraceProcessorException(
            "the Dask worker %s holds no engine for this trace (it was restarted since "
            "the trace was loaded)" % get_worker().address)
    tp, lock = entry
    with lock:
        start = time.monotonic()
        return fn(tp), time.monotonic() - start


def worker_close(key):
    """On a worker: stop the engine of @key."""
    with _ENGINES_LOCK:
        entry = _ENGINES.pop(key, None)
    if entry is not None:
        entry[0].close()


def _scheduler_workers(dask_scheduler=None):
    return list(dask_scheduler.workers)


# --------------------------------------------------------- on the client ----

def connect(dask, timeout=None):
    """A distributed.Client for @dask (an address or a Client) and
    whether this code made it (and so closes it). @timeout: seconds to keep
    trying to reach the scheduler (default $PFC_DASK_TIMEOUT, else 30)."""
    try:
        import distributed
    except ImportError as e:
        raise TraceProcessorException(
            "the Dask mode needs python3-distributed (%s)" % e) from None
    if isinstance(dask, distributed.Client):
        return dask, False
    try:
        if timeout is None:
            timeout = float(os.environ.get("PFC_DASK_TIMEOUT") or 30)
        return distributed.Client(dask, timeout=timeout), True
    except (OSError, TimeoutError) as e:
        raise TraceProcessorException("cannot reach the Dask scheduler at %s: %s" %
                                      (dask, e)) from None


def live_workers(client):
    return set(client.run_on_scheduler(_scheduler_workers))


def place(client, paths):
    """For each path, the workers that can read it (a list, maybe empty)."""
    paths = [p for p in paths if isinstance(p, str)]
    # A worker that fails to answer (it is leaving) reads nothing.
    answers = client.run(readable, paths, on_error="return") if paths else {}
    if paths and not answers:
        raise TraceProcessorException("the Dask cluster has no workers")
    where = {p: [] for p in paths}
    for worker, flags in sorted(answers.items()):
        if isinstance(flags, BaseException):
            continue
        for p, ok in zip(paths, flags):
            if ok:
                where[p].append(worker)
    return where


def local_abspath(path):
    """A relative path is taken from this process's working directory (a
    worker's is elsewhere), whether or not the file is here."""
    return os.path.abspath(path)


def gather(client, futures, allowed):
    """Waits for @futures; allowed[i] lists the workers future i may run
    on. Returns, in order, each result or the exception it raised (a
    TraceProcessorException when all its workers have left)."""
    import distributed

    out = [None] * len(futures)
    pending = set(range(len(futures)))
    while pending:
        try:
            distributed.wait([futures[i] for i in pending], timeout=_POLL,
                             return_when="FIRST_COMPLETED")
        except (TimeoutError, distributed.TimeoutError):
            pass
        live = None
        for i in sorted(pending):
            f = futures[i]
            if f.done():
                try:
                    out[i] = f.result()
                except Exception as e:  # the task's error, handed back
                    out[i] = _explain(e, allowed[i])
                pending.discard(i)
                continue
            if live is None:
                live = live_workers(client)
            if not live & set(allowed[i]):
                f.cancel()
                out[i] = TraceProcessorException(
                    "the Dask worker %s that held this trace is gone" % " or ".join(allowed[i])
                    if len(allowed[i]) == 1 else
                    "every Dask worker that can read this trace (%s) is gone" %
                    ", ".join(allowed[i]))
                pending.discard(i)
    return out


def _explain(exc, allowed):
    try:
        from distributed.scheduler import KilledWorker
    except ImportError:
        KilledWorker = ()
    if KilledWorker and isinstance(exc, KilledWorker):
        return TraceProcessorException("the Dask worker(s) %s running this trace died (%s)" %
                                       (", ".join(allowed), exc))
    return exc


class DaskBackend:
    """BatchTraceProcessor's engines on a Dask cluster: a handle is
    (key, worker address)."""

    def __init__(self, config):
        self._client, self._own = connect(config.dask, config.dask_timeout)
        self._tp_config = config.tp_config
        self._prefix = "pfc-%s-" % uuid.uuid4().hex

    def load(self, refs):
        traces = [local_abspath(t) if isinstance(t, str) else _as_bytes(t) for t, _ in refs]
        where = place(self._client, traces)
        everyone = sorted(live_workers(self._client))
        futures, allowed, out = [], [], [None] * len(refs)
        index = []
        for i, trace in enumerate(traces):
            workers = where[trace] if isinstance(trace, str) else everyone
            if not workers:
                out[i] = TraceProcessorException("no Dask worker can read %s" % trace)
                continue
            futures.append(self._client.submit(
                worker_load, self._prefix + str(i), trace, self._tp_config, workers=workers,
                allow_other_workers=False, pure=False, key="%sload-%d" % (self._prefix, i)))
            allowed.append(workers)
            index.append(i)
        for i, got in zip(index, gather(self._client, futures, allowed)):
            out[i] = got if isinstance(got, Exception) else (self._prefix + str(i), got)
        return out

    def run(self, handles, fn):
        futures = [self._client.submit(worker_run, key, fn, workers=[addr],
                                       allow_other_workers=False, pure=False)
                   for key, addr in handles]
        return gather(self._client, futures, [[addr] for _, addr in handles])

    def close(self, handles):
        try:
            live = live_workers(self._client) if handles else set()
            handles = [(k, a) for k, a in handles if a in live]
            futures = [self._client.submit(worker_close, key, workers=[addr],
                                           allow_other_workers=False, pure=False)
                       for key, addr in handles]
            gather(self._client, futures, [[addr] for _, addr in handles])
        finally:
            if self._own:
                self._client.close()


def _as_bytes(trace):
    if isinstance(trace, (bytes, bytearray)):
        return bytes(trace)
    if hasattr(trace, "read"):
        return trace.read()
    return b"".join(trace)

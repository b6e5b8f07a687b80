# SPDX-License-Identifier: Apache-2.0
"""perfetto_c.trace_processor: SQL over a trace from Python, through
`trace_processor_shell --httpd` (ours, or Perfetto's: the wire is the
same), with the interface of Perfetto's Python API:

    from perfetto_c.trace_processor import TraceProcessor

    with TraceProcessor(trace='trace.pftrace') as tp:
        for row in tp.query('select ts, dur from sched limit 3'):
            print(row.ts, row.dur)
        df = tp.query('select * from thread').as_pandas_dataframe()

TraceProcessor(trace=PATH | bytes | file object | None, addr='host:port'
| None, bin_path=None, ..., config=None): without addr it starts bin_path
(default: $PERFETTO_C_TP, else trace_processor_shell on PATH) with --httpd
on a free 127.0.0.1 port and stops it on close(); the trace is sent
through /parse and /notify_eof, as Perfetto's API does. config= takes a
TraceProcessorConfig (upstream's name) holding the same options; with
die_with_parent the engine is also ended by the kernel when this process
dies (a Dask worker killed mid-run leaves no engine behind). Standard
library only; pandas only for as_pandas_dataframe(). Many traces at once:
perfetto_c.batch_trace_processor. See docs/trace-processor.md.
"""

import ctypes
import http.client
import os
import queue
import shutil
import signal
import socket
import struct
import subprocess
import threading
import time

__all__ = ["TraceProcessor", "TraceProcessorConfig", "TraceProcessorException",
           "QueryResultIterator"]

_CHUNK = 32 << 20  # bytes of trace per /parse (the server takes up to 64 MiB)
_CELL_NULL, _CELL_VARINT, _CELL_FLOAT64, _CELL_STRING, _CELL_BLOB = 1, 2, 3, 4, 5


class TraceProcessorException(Exception):
    """A query failed, or the server could not be started or reached."""


# ------------------------------------------------------------- protobuf ----

def _varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7f) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _read_varint(buf, i):
    v = shift = 0
    while True:
        if i >= len(buf) or shift >= 70:
            raise TraceProcessorException("malformed reply from the trace processor")
        b = buf[i]
        i += 1
        v |= (b & 0x7f) << shift
        if not b & 0x80:
            return v, i
        shift += 7


def _fields(buf):
    i = 0
    while i < len(buf):
        tag, i = _read_varint(buf, i)
        wt = tag & 7
        if wt == 0:
            v, i = _read_varint(buf, i)
        elif wt == 1:
            v, i = buf[i:i + 8], i + 8
        elif wt == 5:
            v, i = buf[i:i + 4], i + 4
        elif wt == 2:
            n, i = _read_varint(buf, i)
            v, i = buf[i:i + n], i + n
        else:
            raise TraceProcessorException("malformed reply from the trace processor")
        yield tag >> 3, v


def _decode_query_result(data):
    """QueryResult pieces (concatenated) -> (columns, rows, error)."""
    columns, cells, error = [], [], None
    for f, v in _fields(data):
        if f == 1:
            columns.append(bytes(v).decode())
        elif f == 2:
            error = bytes(v).decode(errors="replace")
        elif f == 3:
            types, ints, doubles, strings, blobs = b"", [], [], [], []
            for bf, bv in _fields(v):
                if bf == 1:
                    types += bv
                elif bf == 2:
                    j = 0
                    while j < len(bv):
                        x, j = _read_varint(bv, j)
                        ints.append(x - (1 << 64) if x >= 1 << 63 else x)
                elif bf == 3:
                    doubles += struct.unpack("<%dd" % (len(bv) // 8), bv)
                elif bf == 4:
                    blobs.append(bytes(bv))
                elif bf == 5 and bv:
                    strings += [s.decode(errors="replace") for s in bytes(bv).split(b"\0")[:-1]]
            its = {_CELL_VARINT: iter(ints), _CELL_FLOAT64: iter(doubles),
                   _CELL_STRING: iter(strings), _CELL_BLOB: iter(blobs)}
            for t in types:
                cells.append(None if t == _CELL_NULL else next(its[t]))
    n = len(columns)
    rows = [cells[i:i + n] for i in range(0, len(cells), n)] if n else []
    return columns, rows, error


# ---------------------------------------------------------------- results ----

class _Row:
    __slots__ = ("_cols", "_vals")

    def __init__(self, cols, vals):
        self._cols = cols
        self._vals = vals

    def __getattr__(self, name):
        try:
            return self._vals[self._cols[name]]
        except KeyError:
            raise AttributeError(name) from None

    def __repr__(self):
        return "Row(%s)" % ", ".join("%s=%r" % (k, self._vals[i]) for k, i in self._cols.items())


class QueryResultIterator:
    """The rows of a query: iterate for rows (columns as attributes), or
    as_pandas_dataframe(); column_names lists the columns."""

    def __init__(self, columns, rows):
        self.column_names = list(columns)
        self._rows = rows
        self._index = dict((c, i) for i, c in enumerate(columns))

    def __iter__(self):
        return (_Row(self._index, r) for r in self._rows)

    def __len__(self):
        return len(self._rows)

    def as_pandas_dataframe(self):
        import pandas as pd  # only this needs pandas

        return pd.DataFrame(self._rows, columns=self.column_names)


# ----------------------------------------------------------------- client ----

class TraceProcessorConfig:
    """The options of TraceProcessor in one object (upstream's name):
    bin_path, load_timeout (seconds for the engine to answer), extra_flags
    (more arguments for the shell), verbose (the shell's output shown),
    die_with_parent (the kernel ends the engine when this process dies)."""

    def __init__(self, bin_path=None, load_timeout=300, extra_flags=None, verbose=False,
                 die_with_parent=False):
        self.bin_path = bin_path
        self.load_timeout = load_timeout
        self.extra_flags = list(extra_flags or [])
        self.verbose = verbose
        self.die_with_parent = die_with_parent

    def __repr__(self):
        return "TraceProcessorConfig(%s)" % ", ".join(
            "%s=%r" % kv for kv in sorted(vars(self).items()))


_PR_SET_PDEATHSIG = 1


class _Spawner:
    """Starts engines from one thread that lives as long as the process:
    Linux sends the parent-death signal when the thread that forked a child
    ends, so children forked from short-lived pool threads would be killed
    early; forked from here they end only with the process."""

    _lock = threading.Lock()
    _queue = None

    @classmethod
    def popen(cls, argv, out):
        with cls._lock:
            if cls._queue is None:
                cls._queue = queue.Queue()
                threading.Thread(target=cls._run, name="perfetto_c-spawner", daemon=True).start()
        box, done = [], threading.Event()
        cls._queue.put((argv, out, box, done))
        done.wait()
        if isinstance(box[0], BaseException):
            raise box[0]
        return box[0]

    @classmethod
    def _run(cls):
        # util-linux's setpriv sets the signal and execs the engine, which
        # lets Popen spawn without forking this (maybe large) process: half
        # the start time of an engine in a Dask worker. Else prctl in the
        # child, after a fork.
        setpriv = shutil.which("setpriv")
        prctl = ctypes.CDLL(None, use_errno=True).prctl
        parent = os.getpid()

        def child():
            prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
            if os.getppid() != parent:  # died before the signal was set
                os._exit(1)

        while True:
            argv, out, box, done = cls._queue.get()
            try:
                if setpriv:
                    box.append(subprocess.Popen([setpriv, "--pdeathsig", "KILL", "--"] + argv,
                                                stdout=out, stderr=out))
                else:
                    box.append(subprocess.Popen(argv, stdout=out, stderr=out, preexec_fn=child))
            except BaseException as e:  # handed to the caller
                box.append(e)
            done.set()


def _free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class _Closing:
    """with-statement and garbage collection both end in close()."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class TraceProcessor(_Closing):
    def __init__(self, trace=None, addr=None, bin_path=None, load_timeout=300,
                 extra_flags=None, verbose=False, config=None):
        self._proc = None
        self._conn = None
        if config is not None:
            bin_path = bin_path or config.bin_path
            load_timeout = config.load_timeout
            extra_flags = list(config.extra_flags or []) + list(extra_flags or [])
            verbose = verbose or config.verbose
        if addr is None:
            bin_path = bin_path or os.environ.get("PERFETTO_C_TP") or shutil.which(
                "trace_processor_shell")
            if not bin_path:
                raise TraceProcessorException(
                    "no trace_processor_shell: give bin_path or set PERFETTO_C_TP")
            if not (os.path.isfile(bin_path) and os.access(bin_path, os.X_OK)):
                raise TraceProcessorException("cannot run %s: not an executable file" % bin_path)
            port = _free_port()
            out = None if verbose else subprocess.DEVNULL
            argv = [bin_path, "--httpd", "--http-port", str(port)] + list(extra_flags or [])
            try:
                if config is not None and config.die_with_parent:
                    self._proc = _Spawner.popen(argv, out)
                else:
                    self._proc = subprocess.Popen(argv, stdout=out, stderr=out)
            except OSError as e:
                raise TraceProcessorException("cannot run %s: %s" % (bin_path, e)) from None
            addr = "127.0.0.1:%d" % port
        host, _, port = addr.rpartition(":")
        self._addr = (host or "127.0.0.1", int(port))
        self._wait_ready(load_timeout)
        if trace is not None:
            try:
                self._load(trace)
            except BaseException:
                self.close()
                raise

    def _http(self, method, path, body=b""):
        for attempt in (0, 1):
            if self._conn is None:
                self._conn = http.client.HTTPConnection(*self._addr, timeout=3600)
            try:
                self._conn.request(method, path, body=body)
                resp = self._conn.getresponse()
                data = resp.read()
            except (OSError, http.client.HTTPException):
                self._conn.close()
                self._conn = None
                if attempt:
                    raise
                continue
            if resp.status != 200:
                raise TraceProcessorException("%s %s: HTTP %d %s" % (
                    method, path, resp.status, data[:200].decode(errors="replace")))
            return data
        raise TraceProcessorException("unreachable")

    def _wait_ready(self, timeout):
        end = time.monotonic() + timeout
        pause = 0.002  # the engine answers within milliseconds; back off to 50 ms
        while True:
            if self._proc is not None and self._proc.poll() is not None:
                raise TraceProcessorException(
                    "trace_processor_shell exited with status %d" % self._proc.returncode)
            try:
                self._http("GET", "/status")
                return
            except (OSError, http.client.HTTPException, TraceProcessorException):
                if time.monotonic() > end:
                    self.close()
                    raise TraceProcessorException("the trace processor at %s:%d did not answer"
                                                  % self._addr)
                time.sleep(pause)
                pause = min(pause * 2, 0.05)

    def _load(self, trace):
        if isinstance(trace, (str, os.PathLike)):
            try:
                with open(trace, "rb") as f:
                    return self._load(f)
            except OSError as e:
                raise TraceProcessorException("cannot read %s: %s" % (
                    os.fspath(trace), e.strerror or e)) from None
        if isinstance(trace, (bytes, bytearray)):
            chunks = (trace[i:i + _CHUNK] for i in range(0, len(trace), _CHUNK))
        elif hasattr(trace, "read"):
            chunks = iter(lambda: trace.read(_CHUNK), b"")
        else:  # a generator of bytes, as upstream's API takes
            chunks = iter(trace)
        for chunk in chunks:
            for f, v in _fields(self._http("POST", "/parse", bytes(chunk))):
                if f == 2:
                    raise TraceProcessorException(bytes(v).decode(errors="replace"))
        # Our engine imports at the end: a trace it cannot read is told in
        # /notify_eof's reply, in the field /parse's reply uses.
        for f, v in _fields(self._http("GET", "/notify_eof")):
            if f == 2:
                raise TraceProcessorException(bytes(v).decode(errors="replace"))
        return None

    def query(self, sql):
        """Runs @sql (statements separated by ';'; the last one's rows
        are the result). Raises TraceProcessorException on an error."""
        body = _varint(1 << 3 | 2) + _varint(len(sql.encode())) + sql.encode()
        columns, rows, error = _decode_query_result(self._http("POST", "/query", body))
        if error:
            raise TraceProcessorException(error)
        return QueryResultIterator(columns, rows)

    def close(self):
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.terminate()
                try:
                    self._proc.wait(30)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait()
            self._proc = None


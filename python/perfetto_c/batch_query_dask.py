# SPDX-License-Identifier: Apache-2.0
"""perfetto_c.batch_query_dask: pfc_batch_query --dask ADDR runs this to
put its traces on a Dask cluster:

    python3 -m perfetto_c.batch_query_dask ADDR DIR SQL_FILE... -- TRACE...

Each trace is one task on a worker that can read it (perfetto_c.batch_dask
places it): the worker starts our engine, loads the trace, runs the trace
bounds query and every SQL file in order on the same engine (a file's
statements one by one, the last one with columns giving the rows, as
pfc_batch_query's own workers do), stops it and
sends back the per-trace result file that pfc_batch_query's own workers
write (format in src/trace_processor/batch/batch_record.h); it is written
to DIR/<trace index> and pfc_batch_query appends it to its output as
usual. A trace no worker can read, or whose workers all left, gets an X
line saying so. Exit status 0, or 3 with a message when the cluster
cannot be used at all.
"""

import os
import sqlite3
import sys

from perfetto_c import batch_dask
from perfetto_c.trace_processor import (TraceProcessor, TraceProcessorConfig,
                                        TraceProcessorException)

# The trace's start, end and machine names, as pfc_batch_query's workers ask.
META_SQL = ("SELECT (SELECT start_ts FROM trace_bounds), (SELECT end_ts FROM trace_bounds), "
            "(SELECT group_concat(n, ',') FROM (SELECT COALESCE(NULLIF(name, ''), "
            "CASE WHEN raw_id = 0 THEN 'host' ELSE 'machine ' || raw_id END) AS n "
            "FROM machine ORDER BY id))")


def _esc(s):
    return (s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
            .replace("\r", "\\r"))


def _value(v):
    if v is None:
        return "n"
    if isinstance(v, bool) or isinstance(v, int):
        return "i%d" % v
    if isinstance(v, float):
        return "f%.17g" % v
    if isinstance(v, (bytes, bytearray)):
        return "b" + bytes(v).hex()
    return "s" + _esc(str(v))


def statements(sql):
    """@sql cut into its statements, as SQLite's tokenizer sees them
    (quotes, comments, trigger bodies); a tail without ';' is one more."""
    out, start, i = [], 0, sql.find(";")
    while i >= 0:
        piece = sql[start:i + 1]
        if sqlite3.complete_statement(piece):
            out.append(piece)
            start = i + 1
        i = sql.find(";", i + 1)
    if sql[start:].strip():
        out.append(sql[start:])
    return out


def run_file(tp, sql):
    """Every statement of @sql in turn, as pfc_batch_query's workers run a
    query file: the result of the last one with columns, or raises."""
    last = None
    for st in statements(sql):
        res = tp.query(st)
        if res.column_names:
            last = res
    if last is None:
        raise TraceProcessorException("no statement returned rows")
    return last


def _error_text(e):
    """The message of @e; a query error's SQLite message without the
    engine's traceback lines (pfc_batch_query's workers give SQLite's)."""
    text = str(e) or type(e).__name__
    lines = text.split("\n")
    if lines[0] == "Traceback (most recent call last):":
        rest = [ln for ln in lines[1:] if not ln.startswith("  ")]
        text = "\n".join(rest) or text
    return text


def trace_records(path, texts, bin_path):
    """On a worker: the result file of one trace (a str)."""
    lines = []
    try:
        with open(path, "rb"):
            pass
    except OSError as e:
        return "X\t%s\nZ\t\n" % _esc(e.strerror or str(e))
    cfg = TraceProcessorConfig(bin_path=bin_path, die_with_parent=True)
    try:
        tp = TraceProcessor(trace=path, config=cfg)
    except TraceProcessorException as e:
        msg = _error_text(e)
        if msg.startswith("Unknown trace type"):  # what pfc_batch_query's workers say
            msg = "not a Perfetto trace"
        return "X\t%s\nZ\t\n" % _esc(msg)
    try:
        try:
            meta = list(tp.query(META_SQL)._rows[0])
        except (TraceProcessorException, IndexError):
            return "X\tthe trace's bounds cannot be read\nZ\t\n"
        lines.append("M\t" + "\t".join(_value(v) for v in meta))
        for qi, sql in enumerate(texts):
            try:
                res = run_file(tp, sql)
            except TraceProcessorException as e:
                lines.append("E\t%d\t%s" % (qi, _esc(_error_text(e))))
                continue
            lines.append("C\t%d\t%s" % (qi, "\t".join(_esc(c) for c in res.column_names)))
            for row in res._rows:
                lines.append("R\t%d\t%s" % (qi, "\t".join(_value(v) for v in row)))
    finally:
        tp.close()
    lines.append("Z\t")
    return "\n".join(lines) + "\n"


def main(argv):
    if "--" not in argv or len(argv) < 3:
        print("usage: python3 -m perfetto_c.batch_query_dask ADDR DIR SQL_FILE... -- TRACE...",
              file=sys.stderr)
        return 2
    sep = argv.index("--")
    addr, out_dir, sql_files, traces = argv[0], argv[1], argv[2:sep], argv[sep + 1:]
    texts = []
    for f in sql_files:
        with open(f, encoding="utf-8", errors="replace") as fh:
            texts.append(fh.read())
    bin_path = os.environ.get("PFC_DASK_TP") or None  # else each worker's own
    try:
        client, _ = batch_dask.connect(addr)
    except TraceProcessorException as e:
        print("pfc_batch_query: %s" % e, file=sys.stderr)
        return 3
    try:
        paths = [batch_dask.local_abspath(t) for t in traces]
        where = batch_dask.place(client, paths)
        futures, allowed, index = [], [], []
        results = [None] * len(paths)
        for i, p in enumerate(paths):
            if not where[p]:
                results[i] = "X\tno Dask worker can read this trace\nZ\t\n"
                continue
            futures.append(client.submit(trace_records, p, texts, bin_path, workers=where[p],
                                         allow_other_workers=False, pure=False))
            allowed.append(where[p])
            index.append(i)
        for i, got in zip(index, batch_dask.gather(client, futures, allowed)):
            results[i] = got if isinstance(got, str) else "X\t%s\nZ\t\n" % _esc(
                _error_text(got))
        for i, text in enumerate(results):
            with open(os.path.join(out_dir, str(i)), "w", encoding="utf-8") as fh:
                fh.write(text)
    except (OSError, TraceProcessorException) as e:
        print("pfc_batch_query: the Dask cluster at %s: %s" % (addr, e), file=sys.stderr)
        return 3
    finally:
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

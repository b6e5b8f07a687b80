# SPDX-License-Identifier: Apache-2.0
"""tp_httpd_pyapi.py - perfetto_c.trace_processor.TraceProcessor (our
Python API over --httpd), run by tp_httpd.sh with PYTHONPATH=$OUT/python:
    python3 tp_httpd_pyapi.py SHELL TRACE
rows equal to the shell's -Q output, errors raised, a trace given as
bytes, connecting to a running server with addr=, as_pandas_dataframe()
(skipped without pandas); prints ok/FAIL/skip lines.
"""

import os
import subprocess
import sys

from perfetto_c.trace_processor import TraceProcessor, TraceProcessorException

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tp_httpd_client as c  # noqa: E402

SHELL, TRACE = sys.argv[1], sys.argv[2]
SQL = 'select id, ts, dur, cpu, end_state from sched order by id'


def say(ok, name, why=''):
    print(('ok   pyapi/%s' % name) if ok else ('FAIL pyapi/%s: %s' % (name, str(why)[:400])),
          flush=True)


want = subprocess.run([SHELL, '-Q', SQL, TRACE], capture_output=True, text=True).stdout
want_rows = [line.split(',') for line in want.splitlines()[1:]]


def as_csv_cells(rows):
    out = []
    for r in rows:
        out.append(['"[NULL]"' if v is None else '"%s"' % v if isinstance(v, str) else str(v)
                    for v in r])
    return out


with TraceProcessor(trace=TRACE, bin_path=SHELL) as tp:
    res = tp.query(SQL)
    rows = [[r.id, r.ts, r.dur, r.cpu, r.end_state] for r in res]
    say(as_csv_cells(rows) == want_rows and res.column_names ==
        ['id', 'ts', 'dur', 'cpu', 'end_state'], 'query_rows', (rows, want_rows))
    try:
        tp.query('select nope from sched')
        say(False, 'error_raises', 'no exception')
    except TraceProcessorException as e:
        say('no such column: nope' in str(e), 'error_raises', e)
    try:
        import pandas  # noqa: F401
        df = tp.query(SQL).as_pandas_dataframe()
        say(list(df.columns) == res.column_names and len(df) == len(want_rows) and
            int(df['dur'].sum()) == sum(int(r[2]) for r in want_rows), 'pandas', df)
    except ImportError:
        print('skip pyapi/pandas: pandas is not installed (Debian python3-pandas)')

with TraceProcessor(trace=open(TRACE, 'rb').read(), bin_path=SHELL) as tp:
    say(len(tp.query(SQL)) == len(want_rows), 'trace_as_bytes')

p, port = c.start_server(SHELL, [TRACE], os.path.join(os.path.dirname(TRACE), 'pyapi.log'))
try:
    tp = TraceProcessor(addr='127.0.0.1:%d' % port)
    say(len(tp.query(SQL)) == len(want_rows), 'addr_running_server')
    tp.close()
    say(c.wait_status(port, 30) is not None, 'addr_close_leaves_server')
finally:
    c.stop_server(p)

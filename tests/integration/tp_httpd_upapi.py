# SPDX-License-Identifier: Apache-2.0
"""tp_httpd_upapi.py - Perfetto's own Python API, unchanged, with
bin_path = our trace_processor_shell (run by tp_httpd.sh when PERFETTO_PY
names a folder holding Perfetto's `perfetto` package):
    PYTHONPATH=$PERFETTO_PY python3 tp_httpd_upapi.py SHELL TRACE...
TraceProcessor.query() rows equal to the shell's -Q output, errors
raised, as_pandas_dataframe(), BatchTraceProcessor over the traces.
"""

import subprocess
import sys

from perfetto.trace_processor import TraceProcessor, TraceProcessorConfig

SHELL, TRACES = sys.argv[1], sys.argv[2:]
SQL = 'select ts, dur, cpu, utid from sched order by ts, cpu'


def say(ok, name, why=''):
    print(('ok   upapi/%s' % name) if ok else ('FAIL upapi/%s: %s' % (name, str(why)[:400])),
          flush=True)


def shell_rows(trace, sql):
    out = subprocess.run([SHELL, '-Q', sql, trace], capture_output=True, text=True).stdout
    return [[int(x) for x in line.split(',')] for line in out.splitlines()[1:]]


cfg = TraceProcessorConfig(bin_path=SHELL, unique_port=True)
tp = TraceProcessor(trace=TRACES[0], config=cfg)
rows = [[r.ts, r.dur, r.cpu, r.utid] for r in tp.query(SQL)]
say(rows == shell_rows(TRACES[0], SQL), 'query_rows', (rows[:3], len(rows)))
try:
    tp.query('select nope from sched')
    say(False, 'error_raises', 'no exception')
except Exception as e:  # PerfettoException
    say('no such column: nope' in str(e), 'error_raises', e)
try:
    df = tp.query(SQL).as_pandas_dataframe()
    say(len(df) == len(rows) and list(df.columns) == ['ts', 'dur', 'cpu', 'utid'], 'pandas')
except ImportError:
    print('skip upapi/pandas: pandas is not installed')
tp.close()

try:
    from perfetto.batch_trace_processor.api import (BatchTraceProcessor,
                                                     BatchTraceProcessorConfig)
    q = 'select count(*) as n, sum(dur) as d from sched'
    with BatchTraceProcessor(TRACES, config=BatchTraceProcessorConfig(tp_config=cfg)) as btp:
        df = btp.query_and_flatten(q)
    want = [shell_rows(t, q)[0] for t in TRACES]
    got = [[int(df['n'][i]), int(df['d'][i])] for i in range(len(df))]
    say(sorted(got) == sorted(want), 'batch', (got, want))
except ImportError as e:
    print('skip upapi/batch: %s' % e)

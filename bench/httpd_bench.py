# SPDX-License-Identifier: Apache-2.0
"""httpd_bench.py - query latency over the WebSocket RPC (what the UI
uses), ours against Perfetto's trace_processor_shell --httpd serving the
same trace, in one run: each query of a set run REPEAT times per engine,
engines one after the other; prints the time from start to the first
/status answer (the import), the server's peak RSS after the import and
after the queries (VmHWM, with its ratio to the trace's size), the median and p99 latency per engine and
their ratio. With --ui-json (ui_check.sh -j of Perfetto's UI) it also
replays the UI's load queries once per engine (queries that fail on an
engine are counted, and left out of its latencies). Never fails.
    python3 bench/httpd_bench.py OURS UPSTREAM TRACE [--repeat N] [--ui-json F]
"""

import json
import os
import socket
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'tests', 'integration'))
import tp_httpd_client as c  # noqa: E402

QUERIES = [
    'select count(*) from sched',
    'select ts, dur, cpu, utid from sched where cpu = 0 order by ts limit 1000',
    'select utid, sum(dur) as t from sched group by utid order by t desc limit 20',
    'select * from thread',
    'select * from process',
    'select id, ts, dur, name, depth from slice order by ts limit 5000',
    'select count(*) from counter',
    'select id, name, type from track',
    'select ts, dur, state, utid from thread_state order by ts limit 5000',
    'select max(ts + dur) - min(ts) from sched',
]


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def peak_rss(pid):
    """The process's peak resident set (VmHWM) in bytes, or None."""
    try:
        with open('/proc/%d/status' % pid) as f:
            for line in f:
                if line.startswith('VmHWM:'):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None


def run_engine(name, binary, trace, repeat, ui_queries, work):
    port = free_port()
    t0 = time.monotonic()
    p, got = c.start_server(binary, [trace], os.path.join(work, name + '.log'), port=port)
    if not got:
        print('%-9s did not start (see %s)' % (name, os.path.join(work, name + '.log')))
        c.stop_server(p)
        return None
    ready = time.monotonic() - t0
    rss_ready = peak_rss(p.pid)
    ws = c.WebSocket(port)
    ws.call(c.TPM_RESTORE_INITIAL_TABLES)
    ws.recv_rpc()
    lat, errors = [], 0
    for _ in range(repeat):
        for q in QUERIES:
            t = time.monotonic()
            res, _ = ws.query(q)
            lat.append((time.monotonic() - t) * 1e3)
            errors += bool(res.error)
    ui_lat, ui_err = [], 0
    if ui_queries:
        ws.call(c.TPM_RESTORE_INITIAL_TABLES)
        ws.recv_rpc()
        for q in ui_queries:
            t = time.monotonic()
            res, _ = ws.query(q)
            if res.error:
                ui_err += 1
            else:
                ui_lat.append((time.monotonic() - t) * 1e3)
    ws.close()
    rss_end = peak_rss(p.pid)
    c.stop_server(p)
    return {'rss_ready': rss_ready, 'rss_end': rss_end, 'ready': ready, 'lat': lat, 'errors': errors, 'ui_lat': ui_lat, 'ui_err': ui_err}


def main():
    args = sys.argv[1:]
    repeat, ui_json = 20, None
    if '--repeat' in args:
        i = args.index('--repeat')
        repeat = int(args[i + 1])
        del args[i:i + 2]
    if '--ui-json' in args:
        i = args.index('--ui-json')
        ui_json = args[i + 1]
        del args[i:i + 2]
    ours, upstream, trace = args[:3]
    ui_queries = [q['sql'] for q in json.load(open(ui_json))['queries']] if ui_json else []
    work = tempfile.mkdtemp(prefix='httpd_bench.')
    res = {}
    for name, binary in (('ours', ours), ('perfetto', upstream)):
        if binary and os.access(binary, os.X_OK):
            res[name] = run_engine(name, binary, trace, repeat, ui_queries, work)
    print('trace: %s (%.1f MB), %d queries x %d' % (
        trace, os.path.getsize(trace) / 1e6, len(QUERIES), repeat))
    for name, r in res.items():
        if not r:
            continue
        print('%-9s ready %.2f s  query median %.3f ms  p99 %.3f ms  errors %d' % (
            name, r['ready'], statistics.median(r['lat']), pct(r['lat'], 99), r['errors']))
        if r['rss_ready'] and r['rss_end']:
            size = os.path.getsize(trace)
            print('%-9s peak RSS %.1f MB after the import (%.2fx the trace), %.1f MB at the end'
                  ' (%.2fx); import %.1f MB/s' % (
                      name, r['rss_ready'] / 1e6, r['rss_ready'] / size, r['rss_end'] / 1e6,
                      r['rss_end'] / size, size / 1e6 / r['ready']))
        if ui_queries:
            if r['ui_lat']:
                print('%-9s UI load queries: %d ok, median %.3f ms  p99 %.3f ms  total %.1f ms,'
                      ' %d failed' % (name, len(r['ui_lat']), statistics.median(r['ui_lat']),
                                      pct(r['ui_lat'], 99), sum(r['ui_lat']), r['ui_err']))
    if res.get('ours') and res.get('perfetto'):
        o, u = res['ours'], res['perfetto']
        print('ratio perfetto/ours: ready %.2fx  median %.2fx  p99 %.2fx' % (
            u['ready'] / o['ready'], statistics.median(u['lat']) / statistics.median(o['lat']),
            pct(u['lat'], 99) / pct(o['lat'], 99)))
        if o['rss_end'] and u['rss_end']:
            print('ratio perfetto/ours: peak RSS %.2fx' % (u['rss_end'] / o['rss_end']))
    return 0


try:
    main()
except Exception as e:  # a bench never fails the build
    print('httpd_bench: %s' % e)

# SPDX-License-Identifier: Apache-2.0
"""tp_httpd_replay.py - replays the queries Perfetto's UI sent (the -j
JSON of ../shared/upstream/ui/ui_check.sh, recorded against Perfetto's
own engine) over the WebSocket of a running `--httpd` server, in order,
as the UI sends them, and reports each query whose outcome differs: an
error where Perfetto had none, or another number of rows or columns.
    python3 tp_httpd_replay.py PORT UI_JSON [--times FILE]
Prints "ok/FAIL/skip ui_replay/N" lines (FAIL for a query that errs
here only; skip, with the reason, for the queries Perfetto's engine
failed too), a last line "replayed N: M failed, K differ in rows";
--times writes each query's latency in ms, one a line (for bench/).
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tp_httpd_client as c  # noqa: E402


def first_line(err):
    lines = [x for x in (err or '').splitlines() if x.strip()]
    return lines[-1].strip() if lines else ''


def main():
    port, path = int(sys.argv[1]), sys.argv[2]
    times_path = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == '--times' else None
    queries = json.load(open(path))['queries']
    ws = c.WebSocket(port)
    ws.call(c.TPM_RESTORE_INITIAL_TABLES)
    ws.recv_rpc()
    failed = differ = 0
    times = []
    for i, q in enumerate(queries):
        t0 = time.monotonic()
        res, _ = ws.query(q['sql'])
        times.append((time.monotonic() - t0) * 1e3)
        sql1 = ' '.join(q['sql'].split())[:160]
        if q.get('error'):
            print('skip ui_replay/%d: fails in Perfetto too: %s' % (i, first_line(q['error'])))
            continue
        if res.error:
            failed += 1
            print('FAIL ui_replay/%d: %s | SQL: %s' % (i, first_line(res.error), sql1))
        elif q.get('done') and (len(res.rows) != q.get('rows') or
                                len(res.columns) != q.get('cols')):
            differ += 1
            print('ok   ui_replay/%d (rows %d, Perfetto %s; cols %d, Perfetto %s) | SQL: %s' %
                  (i, len(res.rows), q.get('rows'), len(res.columns), q.get('cols'), sql1))
        else:
            print('ok   ui_replay/%d' % i)
    ws.close()
    if times_path:
        with open(times_path, 'w') as f:
            f.write(''.join('%.3f\n' % t for t in times))
    print('replayed %d: %d failed, %d differ in rows' % (len(queries), failed, differ))
    return 1 if failed else 0


sys.exit(main())

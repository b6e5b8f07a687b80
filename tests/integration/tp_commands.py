# SPDX-License-Identifier: Apache-2.0
"""tp_commands.py - trace_processor_shell's command-style interface, as
Perfetto's docs use it (`query TRACE SQL`, `query -f FILE`, SQL piped to
stdin, `interactive`, `export sqlite -o FILE`, `server http`, `server
stdio`, `help CMD`), and the commands and flags it refuses with a reason.
Each command line's stdout and exit status are checked against the
classic flags' (-Q, -q, -e, --httpd) and, with UPSTREAM_TP, against
Perfetto's own binary run the same way.
Usage: python3 tp_commands.py TP TRACE TMPDIR [UPSTREAM_TP]
"""

import os
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tp_httpd_client as hc  # noqa: E402

TP, TRACE, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
UP = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else None
passed = failed = 0


def check(name, ok, why=''):
    global passed, failed
    if ok:
        passed += 1
        print('ok   tp_commands/%s' % name)
    else:
        failed += 1
        print('FAIL tp_commands/%s: %s' % (name, why))


def run(binary, args, stdin=b''):
    p = subprocess.run([binary] + args, input=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=300)
    return p.returncode, p.stdout, p.stderr


SQL = ('include perfetto module sched.states; select 1 as a; '
       'create perfetto table x as select 2 as b; select * from x; '
       'select 3 as c where 0; select count(*) as n from sched')
QFILE = os.path.join(TMP, 'q.sql')
with open(QFILE, 'w') as f:
    f.write(SQL)

rc, classic, err = run(TP, ['-Q', SQL, TRACE])
check('classic_reference', rc == 0 and classic.count(b'\n\n') == 3,
      'exit %d: %r %r' % (rc, classic[:200], err[:200]))

# The forms of `query` that give the same output as -Q.
forms = {
    'query_positional': (['query', TRACE, SQL], b''),
    'query_flags_after': (['query', TRACE, SQL, '--full-sort'], b''),
    'query_file': (['query', '-f', QFILE, TRACE], b''),
    'query_file_long_eq': (['query', '--query-file=' + QFILE, TRACE], b''),
    'query_file_stdin': (['query', '-f', '-', TRACE], SQL.encode()),
    'query_stdin': (['query', TRACE], SQL.encode()),
    'query_global_flag': (['query', '--no-ftrace-raw', TRACE, SQL], b''),
}
for name, (args, stdin) in forms.items():
    rc, out, err = run(TP, args, stdin)
    check(name, rc == 0 and out == classic,
          'exit %d, stdout %r, stderr %r' % (rc, out[:120], err[:200]))
    if UP:
        urc, uout, uerr = run(UP, args, stdin)
        check(name + '/upstream', (urc, uout) == (rc, out),
              'ours exit %d %r; upstream exit %d %r' % (rc, out[:120], urc, uout[:120]))

# Errors: exit 1, a message, nothing on stdout (as upstream).
errors = {
    'no_trace': (['query'], b'', b'trace file is required'),
    'no_sql': (['query', TRACE], b'', b'no SQL provided'),
    'blank_sql': (['query', TRACE], b'  \n', b'no SQL provided'),
    'bad_sql': (['query', TRACE, 'select nope'], b'', b'no such column: nope'),
    'missing_query_file': (['query', '-f', os.path.join(TMP, 'absent.sql'), TRACE], b'',
                           b'absent.sql'),
    'export_format': (['export', 'csv', '-o', os.path.join(TMP, 'x'), TRACE], b'',
                      b"unknown format 'csv'"),
    'export_no_output': (['export', 'sqlite', TRACE], b'', b'-o FILE is required'),
    'server_mode': (['server', 'bogus'], b'', b"unknown mode 'bogus'"),
    'unknown_flag': (['query', '--bogus-flag', TRACE, 'select 1'], b'', b'bogus-flag'),
}
for name, (args, stdin, pat) in errors.items():
    rc, out, err = run(TP, args, stdin)
    check('error_' + name, rc == 1 and out == b'' and pat in err,
          'exit %d, stdout %r, stderr %r' % (rc, out[:120], err[:300]))
    if UP and name not in ('unknown_flag',):
        urc, uout, uerr = run(UP, args, stdin)
        check('error_%s/upstream' % name, urc == rc and uout == out,
              'upstream exit %d %r' % (urc, uout[:120]))

# What this trace processor does not have: refused with the reason, exit 1.
refused = {
    'metrics': ['metrics', '--run', 'trace_stats', TRACE],
    'summarize': ['summarize', '--metrics-v2', 'all', TRACE],
    'bundle': ['bundle', TRACE, os.path.join(TMP, 'b.tar')],
    'util': ['util', 'symbolize', TRACE],
    'export_arrow': ['export', 'arrow_tar', '-o', os.path.join(TMP, 'a.tar'), TRACE],
}
for name, args in refused.items():
    rc, out, err = run(TP, args)
    check('refused_' + name, rc == 1 and b'not supported here' in err,
          'exit %d, stderr %r' % (rc, err[:300]))

# help
rc, out, err = run(TP, ['help', 'query'])
check('help_query', rc == 0 and b'query [FLAGS] TRACE_FILE|--remote NAME [SQL]' in out, 'exit %d' % rc)
rc, out, err = run(TP, ['query', '--help'])
check('query_dash_help', rc == 0 and b'-f, --query-file' in out, 'exit %d' % rc)
rc, out, err = run(TP, ['help'])
check('help', rc == 0 and b'server [FLAGS] http|stdio|unix|kill' in out and b'--query-file' in out,
      'exit %d %r' % (rc, out[:200]))
rc, out, err = run(TP, ['--help'])
check('classic_help_lists_commands', rc == 0 and b'query [FLAGS] TRACE_FILE' in out,
      'exit %d' % rc)

# interactive: the REPL on a pipe, as the classic shell's.
rc, out, err = run(TP, ['interactive', TRACE], b'select 41 + 1 as v;\n')
check('interactive', rc == 0 and b'42' in out, 'exit %d %r %r' % (rc, out[-200:], err[-200:]))

# export sqlite: the same file the classic -e writes.
db = os.path.join(TMP, 'export.db')
rc, out, err = run(TP, ['export', 'sqlite', '-o', db, TRACE])
ok = rc == 0 and os.path.exists(db)
n = None
if ok:
    con = sqlite3.connect(db)
    n = con.execute('select count(*) from sched').fetchone()[0]
    con.close()
want = int(classic.strip().split(b'\n')[-1])
check('export_sqlite', ok and n == want, 'exit %d, sched rows %r want %d, %r' % (rc, n, want,
                                                                                err[:200]))

# server http: the same server as --httpd, flags renamed.
p, port = None, None
try:
    log = os.path.join(TMP, 'server.log')
    with open(log, 'wb') as lf:
        p = subprocess.Popen([TP, 'server', 'http', '--port', '0', TRACE], stdout=lf,
                             stderr=subprocess.STDOUT)
    import re
    import time
    end = time.monotonic() + 300
    while time.monotonic() < end and p.poll() is None and port is None:
        with open(log, 'rb') as f:
            m = re.search(rb'Starting HTTP server on [^\n]*:(\d+)', f.read())
        if m:
            port = int(m.group(1))
        else:
            time.sleep(0.05)
    ok = port is not None and hc.wait_status(port) is not None
    res = hc.Rest(port).query('select count(*) as n from sched') if ok else None
    check('server_http', ok and res.rows == [[want]],
          'port %r, rows %r' % (port, res.rows if res else None))
finally:
    if p:
        hc.stop_server(p)


# server stdio: the RPC stream on stdin/stdout.
def rpc(seq, method, args=b''):
    return hc.f_bytes(1, hc.f_varint(1, seq) + hc.f_varint(2, method) + args)


def stdio_replies(binary, stream, trace=None):
    args = ['server', 'stdio'] + ([trace] if trace else [])
    p = subprocess.run([binary] + args, input=stream, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=300)
    msgs, i, data = [], 0, p.stdout
    while i < len(data):
        if data[i] != 0x0a:
            return p.returncode, None
        n, j = hc.read_varint(data, i + 1)
        msgs.append(dict((f, v) for f, wt, v, off in hc.fields(data[j:j + n])))
        i = j + n
    return p.returncode, msgs


def stdio_query_rows(msgs):
    res = hc.QueryResult()
    for m in msgs:
        if 203 in m:
            res.add_piece(m[203])
    return res


q = hc.f_bytes(103, hc.f_bytes(1, 'select count(*) as n from sched'))
rc, msgs = stdio_replies(TP, rpc(1, hc.TPM_QUERY_STREAMING, q), TRACE)
res = stdio_query_rows(msgs or [])
check('server_stdio_preloaded', rc == 0 and res.rows == [[want]],
      'exit %d, rows %r, error %r' % (rc, res.rows, res.error))
with open(TRACE, 'rb') as f:
    data = f.read()
stream = (rpc(1, hc.TPM_APPEND_TRACE_DATA, hc.f_bytes(101, data)) +
          rpc(2, hc.TPM_FINALIZE_TRACE_DATA) + rpc(3, hc.TPM_QUERY_STREAMING, q))
rc, msgs = stdio_replies(TP, stream)
res = stdio_query_rows(msgs or [])
check('server_stdio_load', rc == 0 and res.rows == [[want]],
      'exit %d, rows %r, error %r' % (rc, res.rows, res.error))
if UP:
    urc, umsgs = stdio_replies(UP, stream)
    ures = stdio_query_rows(umsgs or [])
    check('server_stdio_load/upstream', (urc, ures.rows) == (rc, res.rows),
          'upstream exit %d rows %r' % (urc, ures.rows))
rc, msgs = stdio_replies(TP, b'\x0a\x05\x08')  # a msg cut short, then EOF
check('server_stdio_truncated', rc == 0, 'exit %d' % rc)
rc, msgs = stdio_replies(TP, b'\x12\x00garbage')  # not a msg field
check('server_stdio_garbage', rc in (0, 1) and msgs is not None,
      'exit %d, replies %r' % (rc, msgs))

print('%d passed, %d failed' % (passed, failed))
sys.exit(1 if failed else 0)

# SPDX-License-Identifier: Apache-2.0
"""tp_sessions.py - Perfetto's warm sessions in trace_processor_shell:
`server unix` (--path, --name under $XDG_RUNTIME_DIR/perfetto, --daemonize,
--idle-timeout), `server kill`, `query --remote` (SQL as argument, -f FILE,
stdin; output byte-equal to a local `query`; tables kept between calls;
loading flags refused), a live socket not taken over, garbage on the
socket. With UPSTREAM_TP, Perfetto's client against our server and ours
against Perfetto's, both ways for `server kill` too.
Every server is started here and stopped here; waits are on conditions
(the startup record, the socket gone), never fixed sleeps.
Usage: python3 tp_sessions.py TP TRACE TMPDIR [UPSTREAM_TP]
"""

import os
import select
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tp_httpd_client as hc  # noqa: E402

TP, TRACE, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
UP = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else None
passed = failed = 0
started = []   # pids this script started (servers, daemons)
ENV = dict(os.environ, XDG_RUNTIME_DIR=os.path.join(TMP, 'xdg'))
os.makedirs(ENV['XDG_RUNTIME_DIR'], exist_ok=True)
SESSDIR = os.path.join(ENV['XDG_RUNTIME_DIR'], 'perfetto')
LIMIT = 120  # seconds: a bound on waits, never reached when things work


def check(name, ok, why=''):
    global passed, failed
    if ok:
        passed += 1
        print('ok   tp_sessions/%s' % name)
    else:
        failed += 1
        print('FAIL tp_sessions/%s: %s' % (name, why))


def run(binary, args, stdin=b''):
    p = subprocess.run([binary] + args, input=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=300, env=ENV)
    return p.returncode, p.stdout, p.stderr


def parse_record(line):
    """'perfetto-session pid=N session=S socket-path=P idle-timeout=T'."""
    words = line.decode().split()
    if not words or words[0] != 'perfetto-session':
        return None
    rec = dict(w.split('=', 1) for w in words[1:] if '=' in w)
    return rec if {'pid', 'session', 'socket-path', 'idle-timeout'} <= set(rec) else None


def start_fg(binary, args):
    """A foreground server; returns (Popen, record) once its record is out."""
    p = subprocess.Popen([binary] + args, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=ENV)
    started.append(p.pid)
    deadline = time.monotonic() + LIMIT
    line = b''
    while time.monotonic() < deadline and not line.endswith(b'\n'):
        r, _, _ = select.select([p.stdout], [], [], 1.0)
        if r:
            c = os.read(p.stdout.fileno(), 1)
            if not c:
                break
            line += c
    return p, parse_record(line)


def wait_gone(path):
    deadline = time.monotonic() + LIMIT
    while os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not os.path.exists(path)


def alive(pid):
    """Running: a zombie (an exited daemon nobody reaps) is not."""
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except OSError:
        return False


def wait_exists(path):
    deadline = time.monotonic() + LIMIT
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.05)
    return os.path.exists(path)


def cleanup():
    for pid in started:
        if alive(pid):
            try:
                os.kill(pid, signal.SIGTERM)
            except OSError:
                pass


SQL = ("include perfetto module sched.states; select 1 as a; "
       "create perfetto table t1 as select 2 as b; select * from t1; "
       "select 3 as c where 0; select count(*) as n, sum(dur) as d from sched; "
       "select 1.5 as f, null as z, x'abcd' as bl, 'str' as s; "
       "select 1 as suppress_query_output")
QFILE = os.path.join(TMP, 'q.sql')
with open(QFILE, 'w') as f:
    f.write(SQL)


def session_tests(tag, server_bin, client_bins, sock):
    """A session served by server_bin at sock; each client must match local."""
    p, rec = start_fg(server_bin, ['server', 'unix', '--path', sock,
                                   '--idle-timeout', 'never', TRACE])
    check('%s/record' % tag, rec is not None and rec['socket-path'] == sock and
          int(rec['pid']) == p.pid and rec['idle-timeout'] == 'never',
          'record %r' % rec)
    # Perfetto's server writes it just after the record: wait for it.
    check('%s/pid_file' % tag, wait_exists(sock + '.pid') and
          open(sock + '.pid').read().strip() == str(p.pid), 'no pid file')
    rc, local, err = run(TP, ['query', TRACE, SQL])
    check('%s/local_reference' % tag, rc == 0 and local.count(b'\n\n') == 4,
          'exit %d %r %r' % (rc, local[:200], err[-200:]))
    # Each statement of SQL creates nothing twice but t1: rename it per run.
    for i, (cname, cbin) in enumerate(client_bins):
        q = SQL.replace('t1', 't1_%d' % i)
        forms = {'arg': (['query', '--remote', sock, q], b''),
                 'file': None, 'stdin': (['query', '--remote', sock], None)}
        rc, out, err = run(cbin, forms['arg'][0])
        check('%s/%s_query_arg' % (tag, cname), rc == 0 and out == local,
              'exit %d %r %r' % (rc, out[:300], err[-300:]))
        with open(QFILE, 'w') as f:
            f.write(q.replace('t1_', 't1f_'))
        rc, out, err = run(cbin, ['query', '--remote', sock, '-f', QFILE])
        check('%s/%s_query_file' % (tag, cname), rc == 0 and out == local,
              'exit %d %r %r' % (rc, out[:300], err[-300:]))
        rc, out, err = run(cbin, ['query', '--remote', sock],
                           q.replace('t1_', 't1s_').encode())
        check('%s/%s_query_stdin' % (tag, cname), rc == 0 and out == local,
              'exit %d %r %r' % (rc, out[:300], err[-300:]))
        # State persists between calls: a table made by one is in the next.
        rc1, _, err1 = run(cbin, ['query', '--remote', sock,
                                  'create perfetto table keep_%d as select 42 + %d as v'
                                  % (i, i)])
        rc, out, err = run(cbin, ['query', '--remote', sock,
                                  'select v from keep_%d' % i])
        check('%s/%s_state_persists' % (tag, cname),
              rc1 == 0 and rc == 0 and out == b'"v"\n%d\n' % (42 + i),
              'exit %d/%d %r %r' % (rc1, rc, out, err1[-200:] + err[-200:]))
        rc, out, err = run(cbin, ['query', '--remote', sock, 'select * from no_such_t'])
        check('%s/%s_sql_error' % (tag, cname), rc == 1 and out == b'' and
              b'no_such_t' in err, 'exit %d %r %r' % (rc, out, err[-200:]))
        rc, out, err = run(cbin, ['query', '--remote', sock, '--full-sort', 'select 1'])
        check('%s/%s_full_sort_refused' % (tag, cname), rc == 1 and out == b'' and
              b'--full-sort cannot be combined with --remote' in err,
              'exit %d %r %r' % (rc, out, err[-200:]))
    return p


# ---- ours: server and client; a second server on a live socket; kill.
sock = os.path.join(TMP, 'ours.sock')
clients = [('ours', TP)] + ([('upstream', UP)] if UP else [])
try:
    p = session_tests('ours', TP, clients, sock)
    rc, out, err = run(TP, ['server', 'unix', '--path', sock, TRACE])
    check('ours/live_socket_kept', rc == 1 and b'A live session already holds' in err
          and p.poll() is None, 'exit %d %r' % (rc, err[-200:]))
    # Garbage on the socket: that connection is dropped, the server lives on.
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock)
    s.sendall(b'\x0a\xff\xff\xff\xff\x7f' + b'\x00' * 64)
    s.settimeout(LIMIT)
    try:
        junk = s.recv(4096)
        while junk and s.recv(4096):
            pass
    except OSError:
        pass
    s.close()
    rc, out, err = run(TP, ['query', '--remote', sock, 'select 7 as x'])
    check('ours/survives_garbage', rc == 0 and out == b'"x"\n7\n',
          'exit %d %r %r' % (rc, out, err[-200:]))
    # interactive --remote: the local REPL's tables (timings aside).
    repl = (b"select 1 as a;\ncreate perfetto table r1 as select 2 as b; "
            b"select b, 1.5 as f, null as z, 'a long string, longer than forty "
            b"columns' as s from r1\n;\nselect count(*) as n\n from sched; -- tail\n"
            b"select * from no_such_r;\nselect 5 as last\n")

    def untimed(b):
        return b'\n'.join(x for x in b.split(b'\n') if not x.startswith(b'Query executed'))
    rc, out, err = run(TP, ['interactive', '--remote', sock], repl)
    rc2, local, _ = run(TP, ['interactive', TRACE], repl)
    check('ours/interactive_remote', rc == 0 and rc2 == 0 and untimed(out) == untimed(local)
          and b'5 as last' not in out and b'no_such_r' in err and out.count(b'Query executed') == 4,
          'exit %d %r vs %r' % (rc, out[-400:], local[-400:]))
    rc, out, err = run(TP, ['query', '-i', '--remote', sock,
                            'create perfetto table qi as select 1 as y; select * from qi'],
                       b'select y + 2 as z from qi;\n')
    check('ours/query_then_interactive', rc == 0 and out.startswith(b'"y"\n1\nz\n-\n3\n'),
          'exit %d %r %r' % (rc, out[:200], err[-200:]))
    rc, out, err = run(TP, ['query', '--perf-file', os.path.join(TMP, 'pf'), '--remote',
                            sock, 'select 1'])
    check('ours/perf_file_refused', rc == 1 and b'--perf-file' in err and
          not os.path.exists(os.path.join(TMP, 'pf')), 'exit %d %r' % (rc, err[-200:]))
    # TPM_STATEMENT_STREAMING with hostile arguments, straight on the socket:
    # each gets a reply with the error (and is_last_batch: 0x30 0x01); the
    # server lives on.
    def varint(v):
        out = b''
        while True:
            b = v & 0x7f
            v >>= 7
            if v:
                out += bytes([b | 0x80])
            else:
                return out + bytes([b])

    def ld(field, payload):
        return varint(field << 3 | 2) + varint(len(payload)) + payload

    def stmt_req(args):
        rpc = varint(2 << 3) + varint(20) + (ld(115, args) if args is not None else b'')
        return ld(1, rpc)

    def replies_until_last(s):
        """All replies: the server closes the connection once our end is shut."""
        s.shutdown(socket.SHUT_WR)
        data = b''
        s.settimeout(LIMIT)
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return data
            data += chunk
    hostile = {
        'no_args': (None, b'request field not set'),
        'offset_past_end': (ld(1, b'select 1') + varint(2 << 3) + varint(1000),
                            b'start_offset out of range'),
        'offset_mid_token': (ld(1, b'select 12345 as v') + varint(2 << 3) + varint(9),
                             b''),
        'nul_in_sql': (ld(1, b'select 1\x00; select 2'), b'NUL'),
    }
    for name, (args, pat) in hostile.items():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(sock)
        s.sendall(stmt_req(args))
        data = replies_until_last(s)
        s.close()
        check('ours/stmt_' + name, b'\x30\x01' in data and pat in data, 'reply %r' % data[:300])
    rc, out, err = run(TP, ['query', '--remote', sock, 'select 8 as x'])
    check('ours/stmt_hostile_survived', rc == 0 and out == b'"x"\n8\n',
          'exit %d %r %r' % (rc, out, err[-200:]))
    killer = UP or TP
    rc, out, err = run(killer, ['server', 'kill', sock])
    p.wait(timeout=LIMIT)
    check('ours/kill_%s' % ('by_upstream' if UP else 'by_ours'),
          rc == 0 and b'Stopped session' in out and p.returncode == 0 and
          not os.path.exists(sock) and not os.path.exists(sock + '.pid'),
          'exit %d %r %r server %r' % (rc, out, err[-200:], p.returncode))
    rc, out, err = run(TP, ['server', 'kill', sock])
    check('ours/kill_none', rc == 1 and b'No live session' in err,
          'exit %d %r' % (rc, err[-200:]))
    rc, out, err = run(TP, ['query', '--remote', sock, 'select 1'])
    check('ours/remote_none', rc == 1 and b'No live session' in err,
          'exit %d %r' % (rc, err[-200:]))

    # ---- by name, daemonized, reaped after a short idle timeout.
    rc, out, err = run(TP, ['server', 'unix', '--name', 'sess-1', '--daemonize',
                            '--idle-timeout', '2s', TRACE])
    rec = parse_record(out)
    name_sock = os.path.join(SESSDIR, 'sess-1.sock')
    if rec:
        started.append(int(rec['pid']))
    check('daemon/record', rc == 0 and rec is not None and rec['session'] == 'sess-1'
          and rec['socket-path'] == name_sock and rec['idle-timeout'] == '2000ms' and
          os.path.exists(name_sock), 'exit %d %r %r' % (rc, out, err[-200:]))
    check('daemon/dir_private', os.path.isdir(SESSDIR) and
          (os.stat(SESSDIR).st_mode & 0o777) == 0o700, 'mode of %s' % SESSDIR)
    rc, out, err = run(TP, ['query', '--remote', 'sess-1', 'select count(*) as n from sched'])
    rc2, local, _ = run(TP, ['query', TRACE, 'select count(*) as n from sched'])
    check('daemon/query_by_name', rc == 0 and out == local and rc2 == 0,
          'exit %d %r %r' % (rc, out, err[-200:]))
    gone = wait_gone(name_sock)
    # It removes the socket and pid file, then exits: wait for that too.
    deadline = time.monotonic() + LIMIT
    while rec and alive(int(rec['pid'])) and time.monotonic() < deadline:
        time.sleep(0.05)
    check('daemon/idle_reaped', gone and not os.path.exists(name_sock + '.pid') and
          (rec is None or not alive(int(rec['pid']))),
          'socket there: %s, pid file there: %s, daemon alive: %s' %
          (not gone, os.path.exists(name_sock + '.pid'), rec and alive(int(rec['pid']))))

    # ---- --idle-start in the foreground, two servers with the same 1s
    # timeout started together: last-query is reaped (exits 0); auto, whose
    # parent (this script) is alive, must still be there once it is.
    asock = os.path.join(TMP, 'auto.sock')
    pa, reca = start_fg(TP, ['server', 'unix', '--path', asock, '--idle-timeout', '1s',
                             TRACE])
    isock = os.path.join(TMP, 'idle.sock')
    p, rec = start_fg(TP, ['server', 'unix', '--path', isock, '--idle-timeout', '1s',
                           '--idle-start', 'last-query', TRACE])
    gone = wait_gone(isock)
    p.wait(timeout=LIMIT)
    check('fg_idle_last_query', rec is not None and gone and p.returncode == 0,
          'record %r, exit %r' % (rec, p.returncode))
    check('fg_idle_auto_owner_alive', reca is not None and pa.poll() is None and
          os.path.exists(asock), 'record %r, server %r' % (reca, pa.poll()))
    run(TP, ['server', 'kill', asock])
    pa.wait(timeout=LIMIT)

    # ---- bad flags
    for name, args, pat in [
            ('name_and_path', ['server', 'unix', '--name', 'a', '--path', '/x.sock'],
             b'mutually exclusive'),
            ('bad_name', ['server', 'unix', '--name', '-bad'], b'invalid --name'),
            ('bad_duration', ['server', 'unix', '--name', 'a', '--idle-timeout', '5x'],
             b'Invalid duration'),
            ('bad_idle_start', ['server', 'unix', '--name', 'a', '--idle-start', 'soon'],
             b'Invalid --idle-start'),
            ('kill_needs_name', ['server', 'kill'], b'required')]:
        rc, out, err = run(TP, args)
        check('error_' + name, rc == 1 and pat in err, 'exit %d %r' % (rc, err[-200:]))

    # ---- upstream's server, our client; our kill stops it.
    if UP:
        usock = os.path.join(TMP, 'up.sock')
        p = session_tests('upstream_server', UP, [('ours', TP)], usock)
        rc, out, err = run(TP, ['server', 'kill', usock])
        p.wait(timeout=LIMIT)
        check('upstream_server/kill_by_ours', rc == 0 and b'Stopped session' in out and
              not os.path.exists(usock), 'exit %d %r %r' % (rc, out, err[-200:]))
    # ---- --remote HOST:PORT: the WebSocket of `server http`, ours and
    # Perfetto's, each client against each server.
    rc, local, _ = run(TP, ['query', TRACE, SQL])
    http_servers = [('ours', TP, 0)]
    if UP:
        probe = socket.socket()
        probe.bind(('127.0.0.1', 0))
        http_servers.append(('upstream', UP, probe.getsockname()[1]))
        probe.close()
    for sname, sbin, port in http_servers:
        hp, port = hc.start_server(sbin, [TRACE], os.path.join(TMP, 'http_%s.log' % sname),
                                   port=port)
        started.append(hp.pid)
        try:
            for i, (cname, cbin) in enumerate(clients):
                q = SQL.replace('t1', 'th_%s_%d' % (sname, i))
                rc, out, err = run(cbin, ['query', '--remote', '127.0.0.1:%s' % port, q])
                check('http_%s_server/%s_client' % (sname, cname),
                      port is not None and rc == 0 and out == local,
                      'port %r exit %d %r %r' % (port, rc, out[:300], err[-300:]))
        finally:
            hc.stop_server(hp)
finally:
    cleanup()

print('%d passed, %d failed' % (passed, failed))
sys.exit(1 if failed else 0)

# SPDX-License-Identifier: Apache-2.0
"""tp_httpd.py - trace_processor_shell --httpd driven as Perfetto's UI and
Python API drive it (tp_httpd_client.py); run by tp_httpd.sh:
    python3 tp_httpd.py SHELL TRACE [MORE_TRACE] WORKDIR
Prints one "ok NAME" / "FAIL NAME: WHY" line per check and the summary.
"""

import http.client
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tp_httpd_client as c  # noqa: E402

SHELL, TRACE, MORE, WORK = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
passed = failed = 0


def ok(name):
    global passed
    passed += 1
    print('ok   httpd/' + name, flush=True)


def fail(name, why):
    global failed
    failed += 1
    print('FAIL httpd/%s: %s' % (name, str(why)[:600]), flush=True)


def check(name, cond, why=''):
    (ok if cond else lambda n: fail(n, why))(name)


def shell_csv(trace, sql):
    r = subprocess.run([SHELL, '-Q', sql, trace], capture_output=True, timeout=600)
    return r.stdout.decode(), r.stderr.decode()


def raw(port, data, read=True, timeout=30):
    """Sends raw bytes on a new connection; returns what came back until
    the server closed (or the timeout)."""
    s = socket.create_connection(('127.0.0.1', port), timeout=timeout)
    try:
        s.sendall(data)
    except OSError:
        pass
    out = b''
    if read:
        try:
            while True:
                d = s.recv(65536)
                if not d:
                    break
                out += d
        except (socket.timeout, OSError):
            pass
    s.close()
    return out


def alive(port):
    st = c.wait_status(port, 60)
    return st is not None and st.get(3) == 14


QUERIES = [
    'select * from sched order by id',
    'select utid, tid, name, upid from thread order by utid',
    "select 1.5 as f, null as n, 'x' as s, -7 as i, 9223372036854775807 as big",
    'select ts, dur, cpu, utid from sched where dur > 0 order by ts',
]
# Enough rows for several batches (50000 cells or 128 KiB each).
BIG = ('with recursive n(x) as (select 0 union all select x + 1 from n where x < 60000) '
       "select x, x * 0.5 as half, 'row' || x as s, case when x % 7 = 0 then null "
       'else x end as maybe from n')


def compare(name, res, trace, sql):
    want, err = shell_csv(trace, sql)
    got = c.csv_of(res)
    if res.error:
        fail(name, 'error: ' + res.error)
    elif got != want:
        gl, wl = got.splitlines(), want.splitlines()
        diff = [(i, g, w) for i, (g, w) in enumerate(zip(gl, wl)) if g != w][:2]
        fail(name, 'rows differ from the shell: %d vs %d lines; first: %r' %
             (len(gl), len(wl), diff))
    else:
        ok(name)


def main():
    log = os.path.join(WORK, 'server.log')
    p, port = c.start_server(SHELL, [TRACE], log, port=int(os.environ.get('TP_HTTPD_PORT', '0')))
    if not port:
        fail('start', 'no "Starting HTTP server" line: ' + open(log).read()[-400:])
        c.stop_server(p)
        return
    try:
        run(port, p)
    finally:
        rc = c.stop_server(p)
        check('sigterm_exit_0', rc == 0, 'exit status %s' % rc)


def run(port, p):
    # --- /status, CORS -----------------------------------------------------
    st = c.wait_status(port, 120)
    check('status/api_version', st and st.get(3) == 14, st)
    want_name = '%s (0 MB)' % TRACE
    check('status/loaded_trace_name', st and st.get(1) == want_name.encode(), st)
    check('status/no_version_code', st is not None and 4 not in st, st)

    r = c.Rest(port)
    s, h, body = r.request('POST', '/status', headers={'Origin': c.ORIGIN})
    check('cors/allowed', s == 200 and h.get('access-control-allow-origin') == c.ORIGIN
          and h.get('vary') == 'Origin', (s, h))
    s, h, body = r.request('GET', '/status')
    check('cors/none_without_origin', s == 200 and 'access-control-allow-origin' not in h, h)
    r.close()
    r = c.Rest(port)
    s, h, body = r.request('POST', '/status', headers={'Origin': 'https://evil.example'})
    check('cors/refused_403', s == 403 and 'access-control-allow-origin' not in h, (s, h))
    r.close()
    r = c.Rest(port)
    s, h, body = r.request('OPTIONS', '/status', headers={'Origin': c.ORIGIN})
    check('cors/preflight_204', s == 204 and 'POST' in h.get('access-control-allow-methods', '')
          and h.get('access-control-allow-private-network') == 'true', (s, h))
    r.close()

    # --- REST, as the Python API -------------------------------------------
    r = c.Rest(port)
    for i, sql in enumerate(QUERIES):
        compare('rest/query_%d' % i, r.query(sql), TRACE, sql)
    big = r.query(BIG)
    compare('rest/query_big', big, TRACE, BIG)
    check('rest/big_is_batched', big.batches > 2 and big.last_flags[-1] and
          not any(big.last_flags[:-1]) and big.pieces_with_names == 1,
          (big.batches, big.last_flags[-3:], big.pieces_with_names))
    res = r.query('select nope from sched')
    _, err = shell_csv(TRACE, 'select nope from sched')
    check('rest/error', res.error and 'no such column: nope' in res.error and not res.rows,
          res.error)
    res = r.query('create perfetto table t1 as select 41 as a; select a + 1 as b from t1')
    check('rest/multi_statement', res.rows == [[42]] and res.columns == ['b'] and
          res.statement_count == 2, (res.rows, res.columns, res.statement_count, res.error))
    res = r.query("select x'00ff10' as b, '' as e")
    check('rest/blob_and_empty_string', res.rows == [[b'\x00\xff\x10', '']], res.rows)
    s, h, body = r.request('POST', '/compute_metric', c.f_bytes(1, 'android_cpu'))
    errs = [v for f, wt, v, off in c.fields(body) if f == 2]
    check('rest/compute_metric_error', s == 200 and errs, body)
    s, h, body = r.request('GET', '/enable_metatrace')
    s2, h2, body2 = r.request('GET', '/disable_and_read_metatrace')
    check('rest/metatrace', s == 200 and s2 == 200, (s, s2))
    s, h, body = r.request('GET', '/')
    check('rest/help_page', s == 200 and b'Python API' in body, s)
    r.close()
    r = c.Rest(port)
    s, h, body = r.request('GET', '/no_such_endpoint')
    check('rest/404', s == 404, s)
    r.close()

    # --- the WebSocket, as the UI ------------------------------------------
    ws = c.WebSocket(port, origin=None)
    check('ws/no_origin_403', ws.status == 403, ws.head[:80])
    ws.close()
    ws = c.WebSocket(port)
    check('ws/handshake', ws.status == 101 and ws.accept_ok, ws.head)
    ws.call(c.TPM_RESTORE_INITIAL_TABLES)
    m = ws.recv_rpc()
    check('ws/restore_initial_tables', m.get(3) == [(c.TPM_RESTORE_INITIAL_TABLES, None)]
          and m[1][0][0] == 0, m)
    ws.call(c.TPM_GET_STATUS)
    m = ws.recv_rpc()
    stf = dict((f, v) for f, wt, v, off in c.fields(m[210][0][0]))
    check('ws/get_status', stf.get(3) == 14 and m[1][0][0] == 1, stf)
    seq_before = ws.seq
    for i, sql in enumerate(QUERIES):
        res, seqs = ws.query(sql)
        compare('ws/query_%d' % i, res, TRACE, sql)
    res, seqs = ws.query(BIG)
    compare('ws/query_big', res, TRACE, BIG)
    check('ws/batches', res.batches > 2 and res.pieces_with_names == 1 and
          res.last_flags[-1] and not any(res.last_flags[:-1]), (res.batches, res.last_flags))
    check('ws/seq_increments', seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs[:5])
    check('ws/doubles_aligned', res.misaligned_doubles == 0,
          '%d float64_cells not at a multiple of 8' % res.misaligned_doubles)
    # Two requests in one WebSocket message, the second split over two.
    b1 = ws.rpc_bytes(c.TPM_QUERY_STREAMING, c.f_bytes(103, c.f_bytes(1, 'select 1 as a')))
    b2 = ws.rpc_bytes(c.TPM_QUERY_STREAMING, c.f_bytes(103, c.f_bytes(1, 'select 2 as b')))
    ws.send_frame(b1 + b2[:5])
    ws.send_frame(b2[5:])
    r1, _ = ws.read_query()
    r2, _ = ws.read_query()
    check('ws/pipelined_and_split', r1.rows == [[1]] and r2.rows == [[2]], (r1.rows, r2.rows))
    # Fragmented frames (FIN clear, then continuation).
    b3 = ws.rpc_bytes(c.TPM_QUERY_STREAMING, c.f_bytes(103, c.f_bytes(1, 'select 3 as c')))
    ws.send_frame(b3[:4], opcode=2, fin=False)
    ws.send_frame(b3[4:], opcode=0, fin=True)
    r3, _ = ws.read_query()
    check('ws/fragmented', r3.rows == [[3]], r3.rows)
    ws.send_frame(b'hi', opcode=9)
    op, payload = ws.recv_frame()
    check('ws/ping_pong', op == 0xa and payload == b'hi', (op, payload))
    ws.call(99)
    m = ws.recv_rpc()
    check('ws/unknown_method_invalid_request', m.get(4) == [(99, None)], m)
    # TPM_REGISTER_SQL_PACKAGE, then INCLUDE it.
    mod = c.f_bytes(1, 'mypkg.m') + c.f_bytes(2, 'create perfetto table mypkg_t as '
                                            'select 42 as x;')
    ws.call(c.TPM_REGISTER_SQL_PACKAGE, c.f_bytes(108, c.f_bytes(1, 'mypkg') + c.f_bytes(2, mod)))
    m = ws.recv_rpc()
    errs = [v for f, wt, v, off in c.fields(m[211][0][0]) if f == 1]
    check('ws/register_sql_package', not errs, errs)
    res, _ = ws.query('include perfetto module mypkg.m; select x from mypkg_t')
    check('ws/include_registered', res.rows == [[42]], (res.rows, res.error))
    ws.call(c.TPM_REGISTER_SQL_PACKAGE, c.f_bytes(108, c.f_bytes(1, 'mypkg') + c.f_bytes(2, mod)))
    m = ws.recv_rpc()
    errs = [v for f, wt, v, off in c.fields(m[211][0][0]) if f == 1]
    check('ws/register_twice_error', errs and b'already registered' in errs[0], errs)
    # RESTORE_INITIAL_TABLES drops what SQL made.
    res, _ = ws.query('select count(*) from mypkg_t')
    ws.call(c.TPM_RESTORE_INITIAL_TABLES)
    ws.recv_rpc()
    res2, _ = ws.query('select count(*) from mypkg_t')
    res3, _ = ws.query('select count(*) as n from sched')
    check('ws/restore_drops_tables', res.rows == [[1]] and res2.error and
          'mypkg_t' in res2.error and res3.rows == [[5]], (res.rows, res2.error, res3.rows))
    # Sequence out of order: a fatal error, the connection closes.
    ws.send_frame(ws.rpc_bytes(c.TPM_GET_STATUS, seq=ws.seq + 5))
    m = ws.recv_rpc()
    fe = m.get(5, [(b'', 0)])[0][0]
    closed = False
    try:
        ws.recv_frame()
    except (EOFError, OSError):
        closed = True
    check('ws/seq_out_of_order_fatal', b'(ERR:rpc_seq)' in fe and closed, (fe, closed))
    ws.close()

    # --- many clients in flight --------------------------------------------
    socks = [c.WebSocket(port) for _ in range(6)]
    for i, w in enumerate(socks):
        w.call(c.TPM_QUERY_STREAMING, c.f_bytes(103, c.f_bytes(
            1, 'select %d as k, count(*) as n from sched' % i)))
    got = [w.read_query()[0].rows for w in socks]
    check('ws/six_clients_in_flight', got == [[[i, 5]] for i in range(6)], got)
    for w in socks:
        w.close()

    # --- bad input: a clear error, the server stays up ----------------------
    out = raw(port, b'HELLO\r\n\r\n')
    check('bad/request_line_400', out.startswith(b'HTTP/1.1 400'), out[:60])
    out = raw(port, b'GET /status HTTP/1.1\r\nX-Big: ' + b'a' * 20000 + b'\r\n\r\n')
    check('bad/header_too_big_431', out.startswith(b'HTTP/1.1 431'), out[:60])
    out = raw(port, b'POST /parse HTTP/1.1\r\nContent-Length: 100000000\r\n\r\n')
    check('bad/body_too_big_413', out.startswith(b'HTTP/1.1 413'), out[:60])
    out = raw(port, b'POST /query HTTP/1.1\r\nContent-Length: nope\r\n\r\n')
    check('bad/content_length_400', out.startswith(b'HTTP/1.1 400'), out[:60])
    out = raw(port, b'GET /status HTTP/1.1\r\nbroken header\r\n\r\n')
    check('bad/header_400', out.startswith(b'HTTP/1.1 400'), out[:60])
    out = raw(port, b'GET /status HTTP/1.1\r\n' + b'A: b\r\n' * 40 + b'\r\n')
    check('bad/too_many_headers_431', out.startswith(b'HTTP/1.1 431'), out[:60])
    out = raw(port, b'POST /query HTTP/1.1\r\nContent-Length: 9\r\n\r\n\xff\xff\xff\xff\xff\xff'
              b'\xff\xff\xff')
    check('bad/query_args_garbage', b'200 OK' in out, out[:60])
    ws = c.WebSocket(port)
    ws.send_frame(b'', length=65 << 20)
    closed = False
    try:
        ws.recv_frame()
    except (EOFError, OSError):
        closed = True
    check('bad/ws_frame_over_64MiB_closes', closed)
    ws.close()
    ws = c.WebSocket(port)
    ws.send_frame(b'abc', mask=False)
    try:
        ws.recv_frame()
        closed = False
    except (EOFError, OSError):
        closed = True
    check('bad/ws_unmasked_closes', closed)
    ws.close()
    ws = c.WebSocket(port)
    ws.send_frame(b'\xff\x01\x02')
    m = ws.recv_rpc()
    check('bad/rpc_framing_error', m.get(5, [(b'',)])[0][0] == b'RPC framing error', m)
    ws.close()
    ws = c.WebSocket(port)
    ws.send_frame(c.f_bytes(1, b'\x08\x00\x10\x03\xca\x06\x05\xff\xff\xff\xff\xff'))
    m = ws.recv_rpc()
    check('bad/rpc_malformed_args', 5 in m or 203 in m, m)
    ws.close()
    ws = c.WebSocket(port)
    ws.call(c.TPM_QUERY_STREAMING, c.f_bytes(103, c.f_varint(1, 5)))
    res, _ = ws.read_query()
    ws.call(c.TPM_APPEND_TRACE_DATA, c.f_varint(101, 3))
    m = ws.recv_rpc()
    errs = [v for f, wt, v, off in c.fields(m[201][0][0]) if f == 2] if 201 in m else []
    check('bad/rpc_args_of_wrong_type', res.rows == [] and errs == [b'RPC error: request field '
                                                                     b'not set'], (res.rows, m))
    ws.close()
    check('bad/server_still_up', alive(port))

    # --- clients that leave mid-result --------------------------------------
    huge = ('with recursive n(x) as (select 0 union all select x + 1 from n where x < 3000000) '
            "select x, printf('%0200d', x) as s from n")
    ws = c.WebSocket(port)
    ws.query_sent = ws.call(c.TPM_QUERY_STREAMING, c.f_bytes(103, c.f_bytes(1, huge)))
    ws.recv_frame()
    ws.close()
    s = socket.create_connection(('127.0.0.1', port), timeout=30)
    body = c.f_bytes(1, huge)
    s.sendall(b'POST /query HTTP/1.1\r\nContent-Length: %d\r\n\r\n' % len(body) + body)
    s.recv(1000)
    s.close()
    check('disconnect/server_still_up', alive(port))
    r = c.Rest(port)
    compare('disconnect/then_query', r.query(QUERIES[0]), TRACE, QUERIES[0])
    r.close()

    # --- a trace sent over the WebSocket, as the UI opens a file -------------
    data = open(MORE, 'rb').read()
    ws = c.WebSocket(port)
    cuts = [0, len(data) // 3, len(data) // 3 + 1, len(data)]
    errs = []
    for a, b in zip(cuts, cuts[1:]):
        ws.call(c.TPM_APPEND_TRACE_DATA, c.f_bytes(101, data[a:b]))
        m = ws.recv_rpc()
        errs += [v for f, wt, v, off in c.fields(m[201][0][0]) if f == 2]
    ws.call(c.TPM_FINALIZE_TRACE_DATA)
    m = ws.recv_rpc()
    errs += [v for f, wt, v, off in c.fields(m[212][0][0]) if f == 1]
    check('load/append_finalize', not errs, errs)
    for i, sql in enumerate(QUERIES[:2] + ['select count(*) as n, sum(dur) as d from slice',
                                            'select name, str_value, int_value from metadata order by name']):
        res, _ = ws.query(sql)
        compare('load/query_%d' % i, res, MORE, sql)
    ws.close()
    st = c.wait_status(port, 30)
    check('load/status_name', st and st.get(1, b'').startswith(b'Unnamed trace ('), st)
    # The REST way (the Python API): /parse, /notify_eof.
    r = c.Rest(port)
    s1, _, b1 = r.request('POST', '/parse', data[:1000])
    s2, _, b2 = r.request('POST', '/parse', data[1000:])
    s3, _, b3 = r.request('GET', '/notify_eof')
    check('load/rest_parse_notify_eof', (s1, s2, s3) == (200, 200, 200) and b1 == b'' and
          b2 == b'', (s1, s2, s3, b1, b2))
    compare('load/rest_query', r.query(QUERIES[1]), MORE, QUERIES[1])
    s1, _, b1 = r.request('POST', '/parse', b'this is not a trace')
    s2, _, b2 = r.request('GET', '/notify_eof')
    # Our import runs at the end: its error is in the reply, as /parse's
    # AppendTraceDataResult.error (field 2) would carry it.
    check('load/not_a_trace_eof_error', s2 == 200 and b2.startswith(b'\x12') and
          b'Unknown trace type' in b2, (s2, b2[:80]))
    res = r.query('select 1')
    check('load/not_a_trace_then_query', s1 == 200 and res.rows == [[1]], res.rows)
    r.close()
    # /rpc: the RPC stream in one POST, answered chunked.
    r = c.Rest(port)
    body = (c.f_bytes(1, c.f_varint(1, 0) + c.f_varint(2, c.TPM_GET_STATUS)) +
            c.f_bytes(1, c.f_varint(1, 1) + c.f_varint(2, c.TPM_QUERY_STREAMING) +
                      c.f_bytes(103, c.f_bytes(1, 'select 7 as x'))))
    s, h, out = r.request('POST', '/rpc', body)
    msgs = [dict((f, v) for f, wt, v, off in c.fields(m)) for f, wt, m, off in c.fields(out)]
    res = c.QueryResult()
    if len(msgs) == 2 and 203 in msgs[1]:
        res.add_piece(msgs[1][203])
    check('rest/rpc_endpoint', s == 200 and h.get('transfer-encoding') == 'chunked' and
          len(msgs) == 2 and msgs[0].get(3) == c.TPM_GET_STATUS and res.rows == [[7]],
          (s, msgs))
    r.close()
    # TPM_RESET_TRACE_PROCESSOR: an empty engine, the options of its args.
    ws = c.WebSocket(port)
    ws.call(c.TPM_RESET_TRACE_PROCESSOR, c.f_bytes(107, c.f_varint(2, 0)))
    m = ws.recv_rpc()
    res, _ = ws.query('select count(*) as n from sched')
    st = c.wait_status(port, 30)
    check('load/reset', m.get(3) == [(c.TPM_RESET_TRACE_PROCESSOR, None)] and
          res.rows == [[0]] and st and st.get(1) == b'', (m, res.rows, res.error, st))
    ws.close()
    check('load/server_still_up', alive(port) and p.poll() is None)


def extra_origins():
    log = os.path.join(WORK, 'server2.log')
    p, port = c.start_server(SHELL, ['--http-additional-cors-origins',
                                     'http://a.example:1, https://b.example', TRACE], log)
    if not port:
        fail('cors/additional_start', open(log).read()[-300:])
        c.stop_server(p)
        return
    try:
        got = []
        for o in ('http://a.example:1', 'https://b.example', 'https://ui.perfetto.dev',
                  'http://c.example'):
            r = c.Rest(port)
            s, h, body = r.request('POST', '/status', headers={'Origin': o})
            got.append((s, h.get('access-control-allow-origin')))
            r.close()
        want = [(200, 'http://a.example:1'), (200, 'https://b.example'),
                (200, 'https://ui.perfetto.dev'), (403, None)]
        check('cors/additional_origins', got == want, got)
        ws = c.WebSocket(port, origin='https://b.example')
        check('cors/additional_origin_websocket', ws.status == 101, ws.head[:60])
        ws.close()
    finally:
        c.stop_server(p)


main()
extra_origins()
print('%d passed, %d failed' % (passed, failed))
sys.exit(1 if failed else 0)

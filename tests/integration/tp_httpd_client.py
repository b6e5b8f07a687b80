# SPDX-License-Identifier: Apache-2.0
"""tp_httpd_client.py - a small client of `trace_processor_shell --httpd`
(ours or Perfetto's), standard library only, for the tests and benches:
protobuf encoding and decoding by hand (the field numbers of Perfetto's
trace_processor.proto), the REST endpoints over http.client, and a raw
socket WebSocket client speaking the TraceProcessorRpc stream the UI uses.
"""

import base64
import hashlib
import http.client
import os
import re
import socket
import struct
import subprocess
import time

ORIGIN = 'http://127.0.0.1:10000'

# TraceProcessorRpc.TraceProcessorMethod
TPM_APPEND_TRACE_DATA = 1
TPM_FINALIZE_TRACE_DATA = 2
TPM_QUERY_STREAMING = 3
TPM_COMPUTE_METRIC = 5
TPM_RESTORE_INITIAL_TABLES = 7
TPM_GET_STATUS = 10
TPM_RESET_TRACE_PROCESSOR = 11
TPM_REGISTER_SQL_PACKAGE = 13

# QueryResult.CellsBatch.CellType
CELL_NULL, CELL_VARINT, CELL_FLOAT64, CELL_STRING, CELL_BLOB = 1, 2, 3, 4, 5


# ---------------------------------------------------------------- protobuf --

def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7f) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def f_varint(field, v):
    return varint(field << 3) + varint(v)


def f_bytes(field, data):
    if isinstance(data, str):
        data = data.encode()
    return varint(field << 3 | 2) + varint(len(data)) + data


def read_varint(buf, i):
    v = shift = 0
    while True:
        if i >= len(buf):
            raise ValueError('truncated varint')
        b = buf[i]
        i += 1
        v |= (b & 0x7f) << shift
        if not b & 0x80:
            return v, i
        shift += 7
        if shift >= 70:
            raise ValueError('varint too long')


def fields(buf, base=0):
    """Yields (field, wire_type, value, offset of the value in buf + base)."""
    i = 0
    while i < len(buf):
        tag, i = read_varint(buf, i)
        f, wt = tag >> 3, tag & 7
        if wt == 0:
            v, i = read_varint(buf, i)
            yield f, wt, v, None
        elif wt == 1:
            yield f, wt, buf[i:i + 8], base + i
            i += 8
        elif wt == 5:
            yield f, wt, buf[i:i + 4], base + i
            i += 4
        elif wt == 2:
            n, i = read_varint(buf, i)
            if i + n > len(buf):
                raise ValueError('length past end')
            yield f, wt, buf[i:i + n], base + i
            i += n
        else:
            raise ValueError('wire type %d' % wt)


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


class QueryResult:
    """The merge of the QueryResult pieces of one query."""

    def __init__(self):
        self.columns = []
        self.rows = []
        self.error = None
        self.batches = 0
        self.last_flags = []      # is_last_batch of each batch
        self.pieces_with_names = 0
        self.statement_count = None
        self.misaligned_doubles = 0
        self._cells = []

    def add_piece(self, buf, base=0):
        had_names = False
        for f, wt, v, off in fields(buf, base):
            if f == 1:
                self.columns.append(v.decode())
                had_names = True
            elif f == 2:
                self.error = v.decode()
            elif f == 3:
                self._add_batch(v, off)
            elif f == 4:
                self.statement_count = v
        if had_names:
            self.pieces_with_names += 1

    def _add_batch(self, buf, base):
        types, ints, doubles, strings, blobs = b'', [], [], [], []
        last = False
        for f, wt, v, off in fields(buf, base):
            if f == 1:
                types += v
            elif f == 2:
                i = 0
                while i < len(v):
                    x, i = read_varint(v, i)
                    ints.append(signed(x))
            elif f == 3:
                if off % 8:
                    self.misaligned_doubles += 1
                doubles += list(struct.unpack('<%dd' % (len(v) // 8), v))
            elif f == 4:
                blobs.append(bytes(v))
            elif f == 5:
                if v:
                    strings += bytes(v).split(b'\0')[:-1]
            elif f == 6:
                last = bool(v)
        self.batches += 1
        self.last_flags.append(last)
        it = {CELL_VARINT: iter(ints), CELL_FLOAT64: iter(doubles),
              CELL_STRING: iter(s.decode() for s in strings), CELL_BLOB: iter(blobs)}
        for t in types:
            self._cells.append(None if t == CELL_NULL else next(it[t]))
        n = len(self.columns)
        if n:
            while len(self._cells) >= n:
                self.rows.append(self._cells[:n])
                del self._cells[:n]


def csv_of(res):
    """The rows as Perfetto's shell prints them with -Q."""
    lines = [','.join('"%s"' % c for c in res.columns)]
    for r in res.rows:
        out = []
        for v in r:
            if v is None:
                out.append('"[NULL]"')
            elif isinstance(v, bytes):
                out.append('"<raw bytes>"')
            elif isinstance(v, float):
                out.append('%f' % v)
            elif isinstance(v, int):
                out.append(str(v))
            else:
                out.append('"%s"' % v)
        lines.append(','.join(out))
    return '\n'.join(lines) + '\n'


# -------------------------------------------------------------------- REST --

class Rest:
    def __init__(self, port, timeout=120):
        self.conn = http.client.HTTPConnection('127.0.0.1', port, timeout=timeout)

    def request(self, method, path, body=b'', headers=None):
        self.conn.request(method, path, body=body, headers=headers or {})
        resp = self.conn.getresponse()
        data = resp.read()
        return resp.status, dict((k.lower(), v) for k, v in resp.getheaders()), data

    def query(self, sql):
        st, hdr, data = self.request('POST', '/query', f_bytes(1, sql))
        res = QueryResult()
        res.add_piece(data)
        return res

    def status(self):
        st, hdr, data = self.request('GET', '/status')
        return dict((f, v) for f, wt, v, off in fields(data))

    def close(self):
        self.conn.close()


def wait_status(port, deadline_s=120):
    """Polls /status until the server answers; returns its fields or None."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        try:
            c = Rest(port, timeout=5)
            st = c.status()
            c.close()
            return st
        except (OSError, http.client.HTTPException):
            time.sleep(0.05)
    return None


def start_server(binary, args, log_path, deadline_s=300, port=0):
    """Starts BINARY -D --http-port PORT ARGS; returns (process, port) once
    it listens (with port 0, once it prints where), or (process, None)."""
    log = open(log_path, 'wb')
    p = subprocess.Popen([binary, '-D', '--http-port', str(port)] + args, stdout=log,
                         stderr=subprocess.STDOUT)
    end = time.monotonic() + deadline_s
    while time.monotonic() < end and p.poll() is None:
        if port:
            if wait_status(port, 1) is not None:
                return p, port
            continue
        with open(log_path, 'rb') as f:
            m = re.search(rb'Starting HTTP server on [^\n]*:(\d+)', f.read())
        if m:
            return p, int(m.group(1))
        time.sleep(0.05)
    return p, None


def stop_server(p):
    if p.poll() is None:
        p.terminate()
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    return p.returncode


# --------------------------------------------------------------- WebSocket --

class WebSocket:
    def __init__(self, port, origin=ORIGIN, timeout=120):
        self.sock = socket.create_connection(('127.0.0.1', port), timeout=timeout)
        self.rx = b''
        self.key = base64.b64encode(os.urandom(16)).decode()
        hdr = ('GET /websocket HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n'
               'Upgrade: websocket\r\nConnection: Upgrade\r\n'
               'Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n' % (port, self.key))
        if origin:
            hdr += 'Origin: %s\r\n' % origin
        self.sock.sendall((hdr + '\r\n').encode())
        while b'\r\n\r\n' not in self.rx:
            d = self.sock.recv(65536)
            if not d:
                break
            self.rx += d
        head, _, self.rx = self.rx.partition(b'\r\n\r\n')
        self.head = head.decode(errors='replace')
        self.status = int(self.head.split(' ')[1]) if ' ' in self.head else 0
        want = base64.b64encode(hashlib.sha1(
            (self.key + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').encode()).digest()).decode()
        self.accept_ok = ('Sec-WebSocket-Accept: %s' % want) in self.head
        self.rpc_rx = b''
        self.seq = 0

    def send_frame(self, payload, opcode=2, fin=True, mask=True, length=None):
        n = len(payload) if length is None else length
        h = bytes([(0x80 if fin else 0) | opcode])
        m = 0x80 if mask else 0
        if n < 126:
            h += bytes([m | n])
        elif n <= 0xffff:
            h += bytes([m | 126]) + struct.pack('>H', n)
        else:
            h += bytes([m | 127]) + struct.pack('>Q', n)
        if mask:
            k = os.urandom(4)
            h += k
            payload = bytes(b ^ k[i & 3] for i, b in enumerate(payload)) \
                if len(payload) < 4096 else _mask_fast(payload, k)
        self.sock.sendall(h + payload)

    def _need(self, n):
        while len(self.rx) < n:
            d = self.sock.recv(1 << 20)
            if not d:
                raise EOFError('connection closed')
            self.rx += d

    def recv_frame(self):
        """Returns (opcode, payload)."""
        self._need(2)
        op, n = self.rx[0] & 0x0f, self.rx[1] & 0x7f
        i = 2
        if n == 126:
            self._need(4)
            n = struct.unpack('>H', self.rx[2:4])[0]
            i = 4
        elif n == 127:
            self._need(10)
            n = struct.unpack('>Q', self.rx[2:10])[0]
            i = 10
        self._need(i + n)
        payload = self.rx[i:i + n]
        self.rx = self.rx[i + n:]
        return op, payload

    # The TraceProcessorRpc stream.
    def rpc_bytes(self, method, args=b'', seq=None):
        if seq is None:
            seq = self.seq
            self.seq += 1
        msg = f_varint(1, seq) + f_varint(2, method) + args
        return f_bytes(1, msg)

    def call(self, method, args=b''):
        self.send_frame(self.rpc_bytes(method, args))

    def recv_rpc(self):
        """The next TraceProcessorRpc: a dict field -> list of values, and
        '_base': the offset of the message in its WebSocket message."""
        while True:
            if self.rpc_rx:
                if self.rpc_rx[0] != 0x0a:
                    raise ValueError('bad stream tag')
                n, i = read_varint(self.rpc_rx, 1)
                if len(self.rpc_rx) >= i + n:
                    msg = self.rpc_rx[i:i + n]
                    base = self.rpc_base + i
                    self.rpc_rx = self.rpc_rx[i + n:]
                    self.rpc_base = base + n
                    out = {'_base': base}
                    for f, wt, v, off in fields(msg, base):
                        out.setdefault(f, []).append((v, off))
                    return out
            op, payload = self.recv_frame()
            if op == 0x8:
                raise EOFError('close frame')
            if op in (0x1, 0x2, 0x0):
                if not self.rpc_rx:
                    self.rpc_base = 0
                self.rpc_rx += payload

    def query(self, sql):
        """TPM_QUERY_STREAMING; returns (QueryResult, [seq of each reply])."""
        self.call(TPM_QUERY_STREAMING, f_bytes(103, f_bytes(1, sql)))
        return self.read_query()

    def read_query(self):
        res, seqs = QueryResult(), []
        while True:
            m = self.recv_rpc()
            seqs.append(m[1][0][0])
            v, off = m[203][0]
            res.add_piece(v, off)
            if not res.last_flags or res.last_flags[-1]:
                return res, seqs

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def _mask_fast(payload, k):
    n = len(payload)
    key = (k * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, 'little') ^ int.from_bytes(key, 'little')).to_bytes(
        n, 'little')

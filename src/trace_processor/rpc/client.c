// SPDX-License-Identifier: Apache-2.0
/*
 * client.c - the client side of a `server unix` session (ours or
 * Perfetto's): connects to its AF_UNIX socket (or, for `server http`, to
 * host:port's /websocket, the frames unwrapped) and runs SQL one statement
 * at a time with TPM_STATEMENT_STREAMING, as Perfetto's `query --remote`
 * does, handing each result's column names and cells to the caller. The
 * reply stream is untrusted: every length is bounded and checked.
 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/file.h"
#include "protozero/protozero.h"
#include "trace_processor/rpc/rpc.h"
#include "trace_processor/rpc/rpc_int.h"

int tp_client_connect(const char *path, struct tp_client *out)
{
	struct sockaddr_un a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	memcpy(a.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	out->fd = fd;
	out->ws = false;
	return 0;
}

/* Reads up to the end of the HTTP response head; 0 if it says 101. */
static int ws_handshake(int fd, const char *host)
{
	uint8_t key_raw[16];
	char key[32], head[8192];
	struct buf req = BUF_INIT;
	size_t n = 0, i;
	ssize_t got;
	int rc = 0;

	for (i = 0; i < sizeof(key_raw); i++)
		key_raw[i] = (uint8_t)("pfc-tp-ws-client"[i]);
	rpc_base64(key_raw, sizeof(key_raw), key);
	if (buf_appendf(&req,
			"GET /websocket HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\n"
			"Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
			"Origin: http://localhost:10000\r\nSec-WebSocket-Key: %s\r\n\r\n",
			host, key) < 0)
		return -ENOMEM;
	if (file_write_all(fd, req.data, req.len) < 0)
		rc = -EPIPE;
	buf_fini(&req);
	/* Byte by byte: the frames that follow must stay in the socket. */
	while (rc == 0) {
		if (n == sizeof(head) - 1)
			return -EPROTO;
		got = read(fd, head + n, 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return -ECONNRESET;
		n++;
		head[n] = '\0';
		if (n >= 4 && memcmp(head + n - 4, "\r\n\r\n", 4) == 0)
			break;
	}
	if (rc == 0 && !(strncmp(head, "HTTP/1.1 101", 12) == 0))
		rc = -ECONNREFUSED;
	return rc;
}

int tp_client_connect_http(const char *addr, struct tp_client *out)
{
	char host[256], *colon, *slash;
	struct addrinfo hints, *res = NULL, *ai;
	int fd = -1, rc;

	if (strncmp(addr, "http://", 7) == 0)
		addr += 7;
	if (strlen(addr) >= sizeof(host))
		return -ENAMETOOLONG;
	memcpy(host, addr, strlen(addr) + 1);
	slash = strchr(host, '/');
	if (slash)
		*slash = '\0';
	colon = strrchr(host, ':');
	if (!colon || !colon[1])
		return -EINVAL;
	*colon = '\0';
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host[0] == '[' ? host + 1 : host, colon + 1, &hints, &res) != 0)
		return -EHOSTUNREACH;
	rc = -ECONNREFUSED;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0)
			continue;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
			rc = 0;
			break;
		}
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (rc < 0)
		return rc;
	*colon = ':';
	rc = ws_handshake(fd, host);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	out->fd = fd;
	out->ws = true;
	return 0;
}

void tp_client_close(struct tp_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

static int read_exact(int fd, void *dst, size_t n)
{
	uint8_t *p = dst;
	ssize_t got;

	while (n) {
		got = read(fd, p, n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (got == 0)
			return -ECONNRESET;
		p += got;
		n -= (size_t)got;
	}
	return 0;
}

/* The next data frame's payload appended to @b; control frames skipped. */
static int ws_read_frame(int fd, struct buf *b)
{
	uint8_t h[8], mask[4];
	uint64_t len;
	size_t i, at;
	int rc;

	for (;;) {
		rc = read_exact(fd, h, 2);
		if (rc < 0)
			return rc;
		len = h[1] & 0x7f;
		if (len == 126) {
			if ((rc = read_exact(fd, h + 2, 2)) < 0)
				return rc;
			len = (uint64_t)h[2] << 8 | h[3];
		} else if (len == 127) {
			if ((rc = read_exact(fd, h, 8)) < 0)
				return rc;
			for (len = 0, i = 0; i < 8; i++)
				len = len << 8 | h[i];
		}
		if (len > RPC_MAX_MSG + 16)
			return -EPROTO;
		if ((h[1] & 0x80) && (rc = read_exact(fd, mask, 4)) < 0)
			return rc;
		at = b->len;
		if (buf_reserve(b, (size_t)len + 1) < 0)
			return -ENOMEM;
		if ((rc = read_exact(fd, b->data + at, (size_t)len)) < 0)
			return rc;
		if (h[1] & 0x80)
			for (i = 0; i < len; i++)
				b->data[at + i] ^= mask[i % 4];
		switch (h[0] & 0x0f) {
		case 0x0:
		case 0x1:
		case 0x2:
			b->len = at + (size_t)len;
			return 0;
		case 0x8:
			return -ECONNRESET;
		default:
			break; /* ping, pong: dropped */
		}
	}
}

/* @len bytes to the server, in one masked binary frame over WebSocket. */
static int client_write(const struct tp_client *c, const uint8_t *p, size_t len)
{
	uint8_t h[14];
	size_t n = 0, i;

	if (!c->ws)
		return file_write_all(c->fd, p, len) < 0 ? -EPIPE : 0;
	h[n++] = 0x82;
	if (len < 126) {
		h[n++] = (uint8_t)(0x80 | len);
	} else if (len <= 0xffff) {
		h[n++] = 0x80 | 126;
		h[n++] = (uint8_t)(len >> 8);
		h[n++] = (uint8_t)len;
	} else {
		h[n++] = 0x80 | 127;
		for (i = 0; i < 8; i++)
			h[n++] = (uint8_t)((uint64_t)len >> (56 - 8 * i));
	}
	/* A zero mask: the payload goes as is. */
	memset(h + n, 0, 4);
	n += 4;
	if (file_write_all(c->fd, h, n) < 0 || file_write_all(c->fd, p, len) < 0)
		return -EPIPE;
	return 0;
}

struct rx {
	int fd;
	bool ws;
	struct buf b;      /* received, not yet consumed */
};

/* The next TraceProcessorRpc of the stream into [*@msg, +*@len) (valid until the next call). */
static int next_msg(struct rx *x, const uint8_t **msg, size_t *len, size_t *consumed)
{
	uint8_t chunk[65536];
	const uint8_t *p, *end;
	uint64_t tag, n;
	ssize_t got;

	buf_consume(&x->b, *consumed);
	*consumed = 0;
	for (;;) {
		p = x->b.data;
		end = p + x->b.len;
		if (x->b.len && pz_varint_decode(&p, end, &tag) == PZ_OK) {
			if (tag != pz_make_tag(F_STREAM_MSG, PZ_WIRE_LEN))
				return -EPROTO;
			if (pz_varint_decode(&p, end, &n) == PZ_OK) {
				if (n > RPC_MAX_MSG)
					return -EPROTO;
				if ((size_t)(end - p) >= n) {
					*msg = p;
					*len = (size_t)n;
					*consumed = (size_t)(p - x->b.data) + (size_t)n;
					return 0;
				}
			} else if (end - p >= PZ_MAX_VARINT_BYTES) {
				return -EPROTO;
			}
		}
		if (x->ws) {
			int rc = ws_read_frame(x->fd, &x->b);

			if (rc < 0)
				return rc;
			continue;
		}
		got = read(x->fd, chunk, sizeof(chunk));
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (got == 0)
			return -ECONNRESET;
		if (buf_append(&x->b, chunk, (size_t)got) < 0)
			return -ENOMEM;
	}
}

/* One CellsBatch: its cells to @cb. Return: 0, -EPROTO if malformed. */
static int decode_batch(const struct pz_field *bf, const struct tp_client_cb *cb, void *ctx,
			bool *last, struct tp_client_stmt *out)
{
	struct pz_reader r;
	struct pz_field f;
	struct strview types = {0}, varints = {0}, doubles = {0}, strings = {0};
	const uint8_t *vp, *ve;
	const char *sp, *se, *nul;
	struct pz_reader br;
	struct pz_field bfld;
	size_t i, di = 0;
	uint64_t v;
	double d;

	pz_reader_init(&r, bf->data, bf->size);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.wire_type != PZ_WIRE_LEN) {
			if (f.id == F_BATCH_IS_LAST)
				*last = f.value != 0;
			continue;
		}
		if (f.id == F_BATCH_CELLS)
			types = sv_make((const char *)f.data, f.size);
		else if (f.id == F_BATCH_VARINT_CELLS)
			varints = sv_make((const char *)f.data, f.size);
		else if (f.id == F_BATCH_FLOAT64_CELLS)
			doubles = sv_make((const char *)f.data, f.size);
		else if (f.id == F_BATCH_STRING_CELLS)
			strings = sv_make((const char *)f.data, f.size);
	}
	if (r.err != PZ_OK || doubles.len % 8)
		return -EPROTO;
	vp = (const uint8_t *)varints.ptr;
	ve = vp + varints.len;
	sp = strings.ptr;
	se = sp + strings.len;
	pz_reader_init(&br, bf->data, bf->size);
	for (i = 0; i < types.len; i++) {
		struct tp_client_cell c = {.type = (uint8_t)types.ptr[i]};

		switch (c.type) {
		case CELL_NULL:
			break;
		case CELL_VARINT:
			if (!vp || pz_varint_decode(&vp, ve, &v) != PZ_OK)
				return -EPROTO;
			c.i = (int64_t)v;
			break;
		case CELL_FLOAT64:
			if (di + 8 > doubles.len)
				return -EPROTO;
			memcpy(&d, doubles.ptr + di, 8);
			di += 8;
			c.d = d;
			break;
		case CELL_STRING:
			nul = sp ? memchr(sp, '\0', (size_t)(se - sp)) : NULL;
			if (!nul)
				return -EPROTO;
			c.s = sp;
			c.len = (size_t)(nul - sp);
			sp = nul + 1;
			break;
		case CELL_BLOB:
			/* The blobs are fields of their own, in order. */
			for (;;) {
				if (pz_reader_next(&br, &bfld) <= 0)
					return -EPROTO;
				if (bfld.id == F_BATCH_BLOB_CELLS && bfld.wire_type == PZ_WIRE_LEN)
					break;
			}
			c.s = (const char *)bfld.data;
			c.len = bfld.size;
			break;
		default:
			return -EPROTO;
		}
		out->n_cells++;
		if (cb->cell(ctx, &c) < 0)
			return -ECANCELED;
	}
	return 0;
}

int tp_client_statement(const struct tp_client *cl, const char *sql, size_t len, uint32_t off,
			const struct tp_client_cb *cb, void *ctx, struct tp_client_stmt *out)
{
	struct rx x = {.fd = cl->fd, .ws = cl->ws, .b = BUF_INIT};
	struct buf req = BUF_INIT;
	struct pz_chunks ch;
	struct pz_msg root, rpc, args;
	const struct pz_chunk *k;
	const uint8_t *msg = NULL;
	size_t mlen = 0, consumed = 0;
	bool last = false, first = true;
	int rc;

	memset(out, 0, sizeof(*out));
	out->tail = off;
	if (pz_chunks_init(&ch, 4096, 0) < 0)
		return -ENOMEM;
	pz_msg_begin(&root, &ch.s, NULL);
	pz_begin_nested(&root, F_STREAM_MSG, &rpc);
	pz_append_varint(&rpc, F_RPC_REQUEST, TPM_STATEMENT_STREAMING);
	pz_begin_nested(&rpc, F_RPC_STATEMENT_ARGS, &args);
	pz_append_bytes(&args, F_SARGS_SQL, sql, len);
	pz_append_varint(&args, F_SARGS_START_OFFSET, off);
	pz_end(&root);
	if (ch.tail)
		ch.tail->used = (size_t)(ch.s.cur - ch.tail->data);
	rc = pz_stream_ok(&ch.s) ? 0 : -ENOMEM;
	/* One piece: over WebSocket it is one frame. */
	for (k = ch.head; k && rc == 0; k = k->next)
		if (k->used && buf_append(&req, k->data, k->used) < 0)
			rc = -ENOMEM;
	pz_chunks_fini(&ch);
	if (rc == 0)
		rc = client_write(cl, req.data, req.len);
	buf_fini(&req);
	while (rc == 0 && !last) {
		struct pz_field f[F_RPC_STATEMENT_RESULT + 1], s[4], q, qf;
		struct pz_reader qr;
		const char *names[TP_CLIENT_MAX_COLS];
		size_t n_names = 0;

		rc = next_msg(&x, &msg, &mlen, &consumed);
		if (rc < 0)
			break;
		memset(f, 0, sizeof(f));
		memset(s, 0, sizeof(s));
		if (pz_decode_table(msg, mlen, f, F_RPC_STATEMENT_RESULT + 1) != PZ_OK) {
			rc = -EPROTO;
			break;
		}
		if (f[F_RPC_FATAL_ERROR].id) {
			out->error = strndup((const char *)f[F_RPC_FATAL_ERROR].data,
					     f[F_RPC_FATAL_ERROR].size);
			rc = -EPROTO;
			break;
		}
		if (f[F_RPC_INVALID_REQUEST].id || !f[F_RPC_STATEMENT_RESULT].id ||
		    f[F_RPC_STATEMENT_RESULT].wire_type != PZ_WIRE_LEN ||
		    pz_decode_table(f[F_RPC_STATEMENT_RESULT].data, f[F_RPC_STATEMENT_RESULT].size,
				    s, 4) != PZ_OK) {
			rc = -EPROTO;
			break;
		}
		if (first) {
			out->tail = (uint32_t)s[F_SRES_TAIL_OFFSET].value;
			out->executed = s[F_SRES_EXECUTED].value != 0;
			first = false;
		}
		if (!s[F_SRES_RESULT].id || s[F_SRES_RESULT].wire_type != PZ_WIRE_LEN) {
			rc = -EPROTO;
			break;
		}
		q = s[F_SRES_RESULT];
		pz_reader_init(&qr, q.data, q.size);
		while (rc == 0 && pz_reader_next(&qr, &qf) > 0) {
			if (qf.wire_type != PZ_WIRE_LEN && qf.id != F_QR_STATEMENT_WITH_OUTPUT_COUNT)
				continue;
			if (qf.id == F_QR_COLUMN_NAMES && qf.wire_type == PZ_WIRE_LEN) {
				char *name = strndup((const char *)qf.data, qf.size);

				if (!name || n_names == TP_CLIENT_MAX_COLS) {
					free(name);
					rc = name ? -EPROTO : -ENOMEM;
					break;
				}
				names[n_names++] = name;
			} else if (qf.id == F_QR_STATEMENT_WITH_OUTPUT_COUNT &&
				   qf.wire_type == PZ_WIRE_VARINT) {
				out->with_output = (uint32_t)qf.value;
			} else if (qf.id == F_QR_ERROR && qf.wire_type == PZ_WIRE_LEN && qf.size &&
				   !out->error) {
				out->error = strndup((const char *)qf.data, qf.size);
			} else if (qf.id == F_QR_BATCH && qf.wire_type == PZ_WIRE_LEN) {
				if (n_names && !out->n_cols) {
					out->n_cols = n_names;
					if (cb->columns(ctx, names, n_names) < 0)
						rc = -ECANCELED;
				}
				if (rc == 0)
					rc = decode_batch(&qf, cb, ctx, &last, out);
			}
		}
		if (rc == 0 && qr.err != PZ_OK)
			rc = -EPROTO;
		if (rc == 0 && n_names && !out->n_cols) {
			out->n_cols = n_names;
			if (cb->columns(ctx, names, n_names) < 0)
				rc = -ECANCELED;
		}
		while (n_names)
			free((char *)names[--n_names]);
	}
	buf_fini(&x.b);
	return rc;
}

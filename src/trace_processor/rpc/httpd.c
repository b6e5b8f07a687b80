// SPDX-License-Identifier: Apache-2.0
/*
 * httpd.c - the server of `trace_processor_shell --httpd`: a listening
 * TCP socket and its connections in one poll() loop, HTTP/1.1 requests
 * (keep-alive, chunked replies) routed as Perfetto's httpd.cc routes them,
 * the WebSocket upgrade at /websocket, CORS with Perfetto's allow-list,
 * and the replies' flow control: a client that stops reading holds the
 * server at most HTTPD_SEND_TIMEOUT_MS, one that goes away mid-result
 * stops its query; the others are served after.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/file.h"
#include "base/sock.h"
#include "trace_processor/rpc/rpc_int.h"

#define HTTPD_MAX_CONNS 64
/* Above this many unsent bytes a reply waits for the client to read. */
#define HTTPD_OUT_HIGH (4u << 20)
#define HTTPD_SEND_TIMEOUT_MS 60000
#define HTTPD_READ_CHUNK (256u << 10)
/* The most a connection buffers: one request or frame at its limits. */
#define HTTPD_IN_MAX (HTTP_MAX_HEAD + HTTP_MAX_BODY + 64)
#define HTTPD_ORIGIN_MAX 256

/* Perfetto's default CORS allow-list (its httpd.cc). */
static const char *const k_default_origins[] = {
	"https://ui.perfetto.dev",
	"http://localhost:10000",
	"http://127.0.0.1:10000",
};

struct httpd;

struct conn {
	struct httpd *srv;
	int fd;                  /* -1: the fuzzer's, replies are dropped */
	struct buf in, out;
	bool ws;                 /* upgraded to a WebSocket */
	bool closing;            /* close once out is sent */
	bool dead;               /* the client is gone: drop everything */
	char origin[HTTPD_ORIGIN_MAX]; /* the request's allowed Origin, or "" */
	struct rpc_chan chan;
};

struct httpd {
	struct tp_rpc *rpc;
	const char *const *cors;
	size_t n_cors;
	struct conn *conns[HTTPD_MAX_CONNS];
	size_t n_conns;
	bool warned_origin;
};

static volatile sig_atomic_t g_stop;

/* ------------------------------------------------------------ output ---- */

/* Sends what is queued. Return: 0, or -1 if the client is gone. */
static int conn_flush(struct conn *c, bool wait)
{
	struct pollfd pfd;
	ssize_t n;
	int rc;

	if (c->dead)
		return -1;
	if (c->fd < 0) {
		buf_reset(&c->out);
		return 0;
	}
	while (c->out.len) {
		n = sock_send(c->fd, c->out.data, c->out.len);
		if (n > 0) {
			buf_consume(&c->out, (size_t)n);
			continue;
		}
		if (n != -EAGAIN)
			goto gone;
		if (!wait)
			return 0;
		pfd.fd = c->fd;
		pfd.events = POLLOUT;
		rc = poll(&pfd, 1, HTTPD_SEND_TIMEOUT_MS);
		if (rc < 0 && errno == EINTR && !g_stop)
			continue;
		if (rc <= 0 || (pfd.revents & (POLLERR | POLLHUP | POLLNVAL)))
			goto gone;
	}
	return 0;
gone:
	c->dead = true;
	buf_reset(&c->out);
	return -1;
}

static int conn_write(struct conn *c, const void *data, size_t len)
{
	if (c->dead)
		return -1;
	if (c->fd < 0)
		return 0;
	if (len && buf_append(&c->out, data, len) < 0) {
		c->dead = true;
		return -1;
	}
	if (c->out.len >= HTTPD_OUT_HIGH)
		return conn_flush(c, true);
	return 0;
}

static int conn_printf(struct conn *c, const char *fmt, ...) PFC_PRINTF(2, 3);
static int conn_printf(struct conn *c, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	return conn_write(c, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

#define HDR_PROTOBUF "Cache-Control: no-cache\r\nContent-Type: application/x-protobuf\r\n"

/*
 * The status line and headers: @extra (each ending in CRLF), then the
 * length (-1: chunked), Connection, and CORS when the origin is allowed.
 */
static void send_head(struct conn *c, const char *status, const char *extra, long long length,
		      bool keepalive)
{
	conn_printf(c, "HTTP/1.1 %s\r\n%s", status, extra ? extra : "");
	if (length >= 0)
		conn_printf(c, "Content-Length: %lld\r\n", length);
	else if (length == -1)
		conn_printf(c, "Transfer-Encoding: chunked\r\n");
	if (!extra || !strstr(extra, "Connection:"))
		conn_printf(c, "Connection: %s\r\n", keepalive ? "keep-alive" : "close");
	if (c->origin[0])
		conn_printf(c, "Access-Control-Allow-Origin: %s\r\nVary: Origin\r\n", c->origin);
	conn_write(c, "\r\n", 2);
	if (!keepalive)
		c->closing = true;
}

static void send_simple(struct conn *c, const char *status, const char *extra, const void *body,
			size_t len, bool keepalive)
{
	send_head(c, status, extra, (long long)len, keepalive);
	conn_write(c, body, len);
}

/* An error reply, its status line as the body; the connection then closes. */
static void send_error(struct conn *c, const char *status, const char *body)
{
	if (!body)
		body = status;
	send_simple(c, status, "Content-Type: text/plain\r\n", body, strlen(body), false);
}

static size_t chunks_size(const struct pz_chunks *ch)
{
	const struct pz_chunk *k;
	size_t n = 0;

	for (k = ch->head; k; k = k->next)
		n += k->used;
	return n;
}

static int write_chunks(struct conn *c, const struct pz_chunks *ch)
{
	const struct pz_chunk *k;
	int rc = 0;

	for (k = ch->head; k && rc == 0; k = k->next)
		rc = conn_write(c, k->data, k->used);
	return rc;
}

/* rpc_send_fn: one WebSocket message. */
static int send_ws(void *ctx, const struct pz_chunks *ch)
{
	struct conn *c = ctx;
	uint8_t hdr[10];

	if (conn_write(c, hdr, ws_frame_header(WS_BINARY, chunks_size(ch), hdr)) < 0)
		return -1;
	return write_chunks(c, ch);
}

/* rpc_send_fn: one chunk of a chunked HTTP reply. */
static int send_http_chunk(void *ctx, const struct pz_chunks *ch)
{
	struct conn *c = ctx;
	size_t n = chunks_size(ch);

	if (n == 0)
		return c->dead ? -1 : 0;
	if (conn_printf(c, "%zx\r\n", n) < 0 || write_chunks(c, ch) < 0)
		return -1;
	return conn_write(c, "\r\n", 2);
}

/* ------------------------------------------------------------ routes ---- */

static bool origin_allowed(struct httpd *s, struct strview o)
{
	size_t i;

	for (i = 0; i < sizeof(k_default_origins) / sizeof(k_default_origins[0]); i++)
		if (o.len == strlen(k_default_origins[i]) &&
		    strncasecmp(o.ptr, k_default_origins[i], o.len) == 0)
			return true;
	for (i = 0; i < s->n_cors; i++)
		if (o.len == strlen(s->cors[i]) && strncasecmp(o.ptr, s->cors[i], o.len) == 0)
			return true;
	if (!s->warned_origin) {
		s->warned_origin = true;
		fprintf(stderr,
			"[HTTP] The origin \"%.*s\" is not allowed (add it with "
			"--http-additional-cors-origins); its requests get 403.\n",
			(int)(o.len < 200 ? o.len : 200), o.ptr);
	}
	return false;
}

static const char k_help[] =
	"perfetto-c trace processor RPC server\n"
	"\n"
	"Perfetto's UI uses it as its trace processor: open https://ui.perfetto.dev\n"
	"(or a UI served on http://127.0.0.1:10000) and accept the native\n"
	"acceleration it offers.\n"
	"Perfetto's Python API: TraceProcessor(addr='127.0.0.1:9001').\n";

static void upgrade(struct conn *c, const struct http_req *req)
{
	struct strview key = http_header(req, "sec-websocket-key");
	char accept[29], extra[200];

	if (!c->origin[0])
		return send_error(c, "403 Forbidden", "Origin not allowed");
	if (!sv_eq_cstr(http_header(req, "sec-websocket-version"), "13"))
		return send_error(c, "505 HTTP Version Not Supported", NULL);
	if (key.len != 24)
		return send_error(c, "400 Bad Request", "Bad Sec-WebSocket-Key");
	ws_accept(key, accept);
	snprintf(extra, sizeof(extra),
		 "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n",
		 accept);
	send_head(c, "101 Switching Protocols", extra, -2, true);
	c->ws = true;
}

static void rest(struct conn *c, enum rpc_rest what, const uint8_t *body, size_t len,
		 bool keepalive)
{
	struct pz_chunks ch;

	if (rpc_rest(c->srv->rpc, what, body, len, &ch) < 0)
		return send_error(c, "500 Internal Server Error", "out of memory");
	send_head(c, "200 OK", HDR_PROTOBUF, (long long)chunks_size(&ch), keepalive);
	write_chunks(c, &ch);
	pz_chunks_fini(&ch);
}

static void route(struct conn *c, const struct http_req *req, const uint8_t *body)
{
	struct tp_rpc *r = c->srv->rpc;
	struct strview uri = req->uri, path, query, origin = http_header(req, "origin");
	bool ka = req->keepalive;
	size_t len = req->body_len;

	c->origin[0] = '\0';
	if (origin.len && origin.len < HTTPD_ORIGIN_MAX && origin_allowed(c->srv, origin))
		sv_to_cstr(origin, c->origin, sizeof(c->origin));
	sv_split(uri, '?', &path, &query);
	fprintf(stderr, "[HTTP] %.*s %.*s [body=%zuB, origin=\"%.*s\"]\n", (int)req->method.len,
		req->method.ptr, (int)(path.len < 200 ? path.len : 200), path.ptr, len,
		(int)(origin.len < 200 ? origin.len : 200), origin.ptr);
	if (sv_eq_cstr(req->method, "OPTIONS"))
		return send_simple(c, "204 No Content",
				   "Access-Control-Allow-Methods: POST, GET, OPTIONS\r\n"
				   "Access-Control-Allow-Headers: *\r\n"
				   "Access-Control-Max-Age: 86400\r\n"
				   "Access-Control-Allow-Private-Network: true\r\n",
				   "", 0, false);
	if (origin.len && !c->origin[0])
		return send_error(c, "403 Forbidden", "Origin not allowed");
	if (sv_eq_cstr(path, "/"))
		return send_simple(c, "200 OK", "Content-Type: text/plain\r\n", k_help,
				   sizeof(k_help) - 1, ka);
	if (sv_eq_cstr(path, "/status"))
		return rest(c, REST_STATUS, body, len, ka);
	if (sv_eq_cstr(path, "/websocket") && req->upgrade)
		return upgrade(c, req);
	if (sv_eq_cstr(path, "/rpc")) {
		send_head(c, "200 OK", HDR_PROTOBUF, -1, ka);
		if (rpc_chan_feed(r, &c->chan, body, len, send_http_chunk, c) < 0)
			c->closing = true;
		conn_write(c, "0\r\n\r\n", 5);
		return;
	}
	if (sv_eq_cstr(path, "/query")) {
		send_head(c, "200 OK", HDR_PROTOBUF, -1, ka);
		if (rpc_rest_query(r, body, len, send_http_chunk, c) < 0) {
			c->closing = true;
			return;
		}
		conn_write(c, "0\r\n\r\n", 5);
		return;
	}
	if (sv_eq_cstr(path, "/parse"))
		return rest(c, REST_PARSE, body, len, ka);
	if (sv_eq_cstr(path, "/notify_eof"))
		return rest(c, REST_NOTIFY_EOF, body, len, ka);
	if (sv_eq_cstr(path, "/restore_initial_tables"))
		return rest(c, REST_RESTORE_INITIAL_TABLES, body, len, ka);
	if (sv_eq_cstr(path, "/compute_metric"))
		return rest(c, REST_COMPUTE_METRIC, body, len, ka);
	if (sv_eq_cstr(path, "/trace_summary"))
		return rest(c, REST_TRACE_SUMMARY, body, len, ka);
	if (sv_eq_cstr(path, "/enable_metatrace"))
		return rest(c, REST_ENABLE_METATRACE, body, len, ka);
	if (sv_eq_cstr(path, "/disable_and_read_metatrace"))
		return rest(c, REST_DISABLE_AND_READ_METATRACE, body, len, ka);
	if (sv_eq_cstr(path, "/export"))
		return send_error(c, "501 Not Implemented",
				  "Export is not supported by this trace processor (perfetto-c)");
	send_error(c, "404 Not Found", NULL);
}

/* ------------------------------------------------------------- input ---- */

/* One WebSocket frame of @c->in, whole. */
static void ws_frame(struct conn *c, const struct ws_frame *f, uint8_t *payload)
{
	uint8_t hdr[10];

	ws_unmask(payload, f->payload_len, f->mask);
	switch (f->opcode) {
	case WS_BINARY:
	case WS_TEXT:
	case WS_CONT:
		/* The RPC stream frames its messages itself: fragments just append. */
		if (rpc_chan_feed(c->srv->rpc, &c->chan, payload, f->payload_len, send_ws, c) < 0)
			c->closing = true;
		break;
	case WS_PING:
		conn_write(c, hdr, ws_frame_header(WS_PONG, f->payload_len, hdr));
		conn_write(c, payload, f->payload_len);
		break;
	case WS_CLOSE:
		conn_write(c, hdr, ws_frame_header(WS_CLOSE, f->payload_len >= 2 ? 2 : 0, hdr));
		conn_write(c, payload, f->payload_len >= 2 ? 2 : 0);
		c->closing = true;
		break;
	default:
		break;
	}
}

/* Runs every whole request or frame in @c->in. */
static void conn_process(struct conn *c)
{
	struct http_req req;
	struct ws_frame f;
	const char *why = NULL;
	long n;

	while (!c->dead && !c->closing && c->in.len) {
		if (c->ws) {
			n = ws_parse(c->in.data, c->in.len, &f, &why);
			if (n < 0) {
				fprintf(stderr, "[HTTP] bad WebSocket frame: %s; closing\n", why);
				c->closing = true;
				return;
			}
			if (n == 0)
				return;
			ws_frame(c, &f, c->in.data + f.head_len);
		} else {
			n = http_parse(c->in.data, c->in.len, &req, &why);
			if (n < 0) {
				fprintf(stderr, "[HTTP] bad request: %s\n", why);
				send_error(c, why, NULL);
				return;
			}
			if (n == 0)
				return;
			route(c, &req, c->in.data + req.head_len);
		}
		buf_consume(&c->in, (size_t)n);
	}
}

static struct conn *conn_new(struct httpd *s, int fd)
{
	struct conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->srv = s;
	c->fd = fd;
	buf_init(&c->in);
	buf_init(&c->out);
	rpc_chan_init(&c->chan);
	return c;
}

static void conn_free(struct conn *c)
{
	if (c->fd >= 0)
		fd_close(c->fd);
	buf_fini(&c->in);
	buf_fini(&c->out);
	rpc_chan_fini(&c->chan);
	free(c);
}

/* Reads what the client sent. Return: false if it closed or failed. */
static bool conn_read(struct conn *c)
{
	size_t room;
	ssize_t n;

	if (c->in.len >= HTTPD_IN_MAX) {
		send_error(c, "413 Payload Too Large", NULL);
		return true;
	}
	room = HTTPD_IN_MAX - c->in.len;
	if (room > HTTPD_READ_CHUNK)
		room = HTTPD_READ_CHUNK;
	if (buf_reserve(&c->in, room) < 0)
		return false;
	n = sock_recv(c->fd, c->in.data + c->in.len, room);
	if (n == -EAGAIN)
		return true;
	if (n == 0) {
		/* The client sent all it will: finish sending to it, then close. */
		c->closing = true;
		return true;
	}
	if (n < 0)
		return false;
	c->in.len += (size_t)n;
	conn_process(c);
	return true;
}

/* ------------------------------------------------------------- loop ---- */

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

static void accept_all(struct httpd *s, int lfd)
{
	struct conn *c;
	int fd;

	while (sock_accept(lfd, &fd) == 0) {
		if (s->n_conns == HTTPD_MAX_CONNS || !(c = conn_new(s, fd))) {
			fprintf(stderr, "[HTTP] too many connections; refusing one\n");
			fd_close(fd);
			continue;
		}
		s->conns[s->n_conns++] = c;
	}
}

static void serve(struct httpd *s, int lfd)
{
	struct pollfd pfd[HTTPD_MAX_CONNS + 1];
	struct conn *c;
	size_t i, n;

	while (!g_stop) {
		pfd[0].fd = lfd;
		pfd[0].events = s->n_conns < HTTPD_MAX_CONNS ? POLLIN : 0;
		for (i = 0; i < s->n_conns; i++) {
			c = s->conns[i];
			pfd[i + 1].fd = c->fd;
			pfd[i + 1].events = (short)((c->closing ? 0 : POLLIN) |
						    (c->out.len ? POLLOUT : 0));
			pfd[i + 1].revents = 0;
		}
		n = s->n_conns;
		if (poll(pfd, n + 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "[HTTP] poll: %s\n", strerror(errno));
			return;
		}
		for (i = 0; i < n; i++) {
			c = s->conns[i];
			if (pfd[i + 1].revents & POLLOUT)
				conn_flush(c, false);
			if ((pfd[i + 1].revents & (POLLIN | POLLHUP | POLLERR)) && !c->dead &&
			    !c->closing && !conn_read(c))
				c->dead = true;
			if (!c->dead)
				conn_flush(c, false);
		}
		/* Drop the finished connections, keeping the order of the rest. */
		for (i = n = 0; i < s->n_conns; i++) {
			c = s->conns[i];
			if (c->dead || (c->closing && c->out.len == 0))
				conn_free(c);
			else
				s->conns[n++] = c;
		}
		s->n_conns = n;
		if (pfd[0].revents & POLLIN)
			accept_all(s, lfd);
	}
}

int tp_httpd_run(struct tp_rpc *r, const struct tp_httpd_options *o)
{
	struct httpd s = {.rpc = r, .cors = o->cors, .n_cors = o->n_cors};
	const char *ip = o->ip && *o->ip ? o->ip : "127.0.0.1";
	char name[SOCK_NAME_MAX], bound[SOCK_NAME_MAX];
	struct sigaction sa;
	size_t i;
	int lfd, rc;

	snprintf(name, sizeof(name), strchr(ip, ':') ? "[%s]:%d" : "%s:%d", ip, o->port);
	rc = sock_listen(name, 64, &lfd);
	if (rc < 0) {
		fprintf(stderr, "[HTTP] cannot listen on %s: %s\n", name, strerror(-rc));
		return rc;
	}
	if (sock_local_name(lfd, bound, sizeof(bound)) < 0)
		snprintf(bound, sizeof(bound), "%s", name);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	fprintf(stderr, "[HTTP] Starting HTTP server on %s\n", bound);
	fprintf(stderr, "[HTTP] Perfetto's UI (https://ui.perfetto.dev) and its Python API "
			"can use this server as their trace processor.\n");
	serve(&s, lfd);
	for (i = 0; i < s.n_conns; i++)
		conn_free(s.conns[i]);
	fd_close(lfd);
	return 0;
}

void tp_httpd_feed(struct tp_rpc *r, const uint8_t *data, size_t size)
{
	struct httpd s = {.rpc = r};
	struct conn *c = conn_new(&s, -1);
	size_t off = 0, step;

	if (!c)
		return;
	while (off < size && !c->dead && !c->closing) {
		/* The first byte of each piece says how many bytes arrive at once. */
		step = 1 + (size_t)data[off] * 61 % 4093;
		if (step > size - off)
			step = size - off;
		if (c->in.len + step > HTTPD_IN_MAX || buf_append(&c->in, data + off, step) < 0)
			break;
		off += step;
		conn_process(c);
	}
	conn_free(c);
}

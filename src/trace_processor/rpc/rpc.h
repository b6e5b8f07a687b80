/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc.h - the trace processor as a server: `trace_processor_shell --httpd`.
 * Perfetto's UI (POST /status, then the TraceProcessorRpc stream over the
 * WebSocket at /websocket) and its Python API (the REST endpoints /parse,
 * /notify_eof, /query, /status, ...) use it as their engine. One thread,
 * poll(); one engine (struct tp_rpc) shared by every connection, as in
 * Perfetto: requests run one at a time, in the order they arrive.
 *
 *   httpd.c     the server: sockets, connections, routes, CORS
 *   http_req.c  one HTTP/1.1 request head from bytes (bounds-checked)
 *   ws_frame.c  WebSocket frames in and out, the handshake key
 *   sha1.c      SHA-1 and base64 for the handshake
 *   stdiod.c    the same stream over a pipe (`--stdiod`, `server stdio`)
 *   unixd.c     ... on an AF_UNIX socket, kept warm (`server unix`)
 *   client.c    the client side of that socket (`query --remote`)
 *   rpc.c       the TraceProcessorRpc methods over the engine
 *   query.c     a query's result as QueryResult batches
 */
#ifndef PFC_TRACE_PROCESSOR_RPC_RPC_H
#define PFC_TRACE_PROCESSOR_RPC_RPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace_processor/trace_processor.h"

struct tp_rpc;

/*
 * tp_rpc_create() - The engine the server drives.
 * @opt:       options of every trace processor it makes (a reset makes a
 *             new one), copied.
 * @preloaded: a trace processor, taken over: with a trace already
 *             imported (the command line's) if @name is set, else empty
 *             (SQL packages registered, say); NULL for a new one.
 * @name:      @preloaded's trace name for StatusResult (copied), or NULL.
 * @size:      @preloaded's trace size in bytes (for the name's "(N MB)").
 * Return: 0 or -ENOMEM.
 */
int tp_rpc_create(const struct tp_options *opt, struct tp *preloaded, const char *name,
		  uint64_t size, struct tp_rpc **out);
void tp_rpc_destroy(struct tp_rpc *r);

struct tp_httpd_options {
	const char *ip;            /* listen address; NULL = 127.0.0.1 */
	int port;                  /* 0 picks a free port (printed) */
	const char *const *cors;   /* origins allowed besides Perfetto's defaults */
	size_t n_cors;
};

/*
 * tp_httpd_run() - Serve @r on @o->ip:@o->port until SIGINT or SIGTERM.
 * Prints "[HTTP] Starting HTTP server on IP:PORT" on stderr once listening.
 * Return: 0 after a signal, or -errno if it cannot listen.
 */
int tp_httpd_run(struct tp_rpc *r, const struct tp_httpd_options *o);

/*
 * tp_stdio_run() - Serve @r over a pipe until @in_fd's end of file: the
 * bytes read from @in_fd are a TraceProcessorRpcStream (as Perfetto's
 * --stdiod reads stdin), the replies go to @out_fd.
 * Return: 0 at end of file, -EPROTO after a framing error (a reply with
 * fatal_error was written), or -errno if reading failed.
 */
int tp_stdio_run(struct tp_rpc *r, int in_fd, int out_fd);

/* When a unix server's idle clock runs (Perfetto's --idle-start). */
enum tp_idle_start {
	TP_IDLE_AUTO,       /* orphaned when started by a live parent, else last-query */
	TP_IDLE_ORPHANED,   /* once the parent that started it has exited */
	TP_IDLE_LAST_QUERY, /* from the last request on */
};

struct tp_unixd_options {
	const char *path;   /* the socket to bind (a dead server's is replaced) */
	const char *name;   /* the session's name, for the startup record */
	uint32_t idle_ms;   /* stop after this long without a client; 0: never */
	enum tp_idle_start idle_start;
	bool daemonize;     /* fork: the parent prints the record and exits */
};

/*
 * tp_unixd_run() - Serve @r on the AF_UNIX socket @o->path until SIGINT,
 * SIGTERM or the idle timeout. Writes PATH.pid, prints the startup record
 * "perfetto-session pid=N session=NAME socket-path=PATH idle-timeout=..."
 * on stdout once listening; removes the socket and pid file at the end.
 * Return: 0, -EADDRINUSE if a live server holds @o->path, -EEXIST if it
 * is not a socket, or -errno.
 */
int tp_unixd_run(struct tp_rpc *r, const struct tp_unixd_options *o);

/* ------------------------------------------------------ client.c ---- */

#define TP_CLIENT_MAX_COLS 4096

/* One cell of a result: type is QueryResult.CellsBatch.CellType (1 null,
 * 2 integer, 3 real, 4 string, 5 blob); @s/@len point into the reply. */
struct tp_client_cell {
	uint8_t type;
	int64_t i;
	double d;
	const char *s;
	size_t len;
};

struct tp_client_cb {
	/* The column names, once, before the first cell. Return <0 to stop. */
	int (*columns)(void *ctx, const char *const *names, size_t n);
	/* Each cell, row after row. Return <0 to stop. */
	int (*cell)(void *ctx, const struct tp_client_cell *c);
};

struct tp_client_stmt {
	uint32_t tail;      /* where the next statement starts */
	bool executed;      /* false: no statement was left, or it failed to prepare */
	size_t n_cols;
	size_t n_cells;
	uint32_t with_output; /* QueryResult.statement_with_output_count */
	char *error;        /* malloc'ed: the SQL error, or the server's fatal error */
};

struct tp_client {
	int fd;
	bool ws;            /* a WebSocket to `server http`: frames around the stream */
};

/* tp_client_connect() - Connect to the AF_UNIX socket @path. Return: 0 or -errno. */
int tp_client_connect(const char *path, struct tp_client *out);
/*
 * tp_client_connect_http() - Connect to `server http` at [http://]HOST:PORT
 * and upgrade to its /websocket. Return: 0, -ECONNREFUSED (no server or
 * the upgrade refused), -EHOSTUNREACH (no such host), or -errno.
 */
int tp_client_connect_http(const char *addr, struct tp_client *out);
void tp_client_close(struct tp_client *c);

/*
 * tp_client_statement() - Run the statement at byte @off of @sql on the
 * session at @fd (TPM_STATEMENT_STREAMING); its columns and cells go to
 * @cb. @out->error must be freed.
 * Return: 0 (an SQL error is in @out->error), -EPROTO for a malformed
 * reply or a fatal error, -ECONNRESET if the server hung up, or -errno.
 */
int tp_client_statement(const struct tp_client *cl, const char *sql, size_t len, uint32_t off,
			const struct tp_client_cb *cb, void *ctx, struct tp_client_stmt *out);

/*
 * tp_httpd_feed() - For the fuzzer: @data as the bytes one client sends on
 * one connection (HTTP requests, then WebSocket frames after an upgrade),
 * arriving in pieces whose sizes come from @data; the replies are dropped.
 * Runs every parser and the RPC methods on @r as the server would.
 */
void tp_httpd_feed(struct tp_rpc *r, const uint8_t *data, size_t size);

#endif

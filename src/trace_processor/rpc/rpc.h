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

/*
 * tp_httpd_feed() - For the fuzzer: @data as the bytes one client sends on
 * one connection (HTTP requests, then WebSocket frames after an upgrade),
 * arriving in pieces whose sizes come from @data; the replies are dropped.
 * Runs every parser and the RPC methods on @r as the server would.
 */
void tp_httpd_feed(struct tp_rpc *r, const uint8_t *data, size_t size);

#endif

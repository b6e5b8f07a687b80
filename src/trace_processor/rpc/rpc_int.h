/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_int.h - private to rpc/: the field numbers of Perfetto's
 * protos/perfetto/trace_processor/trace_processor.proto that we speak,
 * the HTTP and WebSocket parsers, the query serializer and the RPC
 * channel that httpd.c drives.
 */
#ifndef PFC_TRACE_PROCESSOR_RPC_RPC_INT_H
#define PFC_TRACE_PROCESSOR_RPC_RPC_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "protozero/protozero.h"
#include "trace_processor/rpc/rpc.h"

/* ------------------------------------------------------------ protos ---- */

/* TraceProcessorApiVersion.TRACE_PROCESSOR_CURRENT_API_VERSION (v58). */
#define RPC_API_VERSION 14

enum {
	/* TraceProcessorRpcStream */
	F_STREAM_MSG = 1,
	/* TraceProcessorRpc */
	F_RPC_SEQ = 1,
	F_RPC_REQUEST = 2,
	F_RPC_RESPONSE = 3,
	F_RPC_INVALID_REQUEST = 4,
	F_RPC_FATAL_ERROR = 5,
	F_RPC_APPEND_TRACE_DATA = 101,
	F_RPC_QUERY_ARGS = 103,
	F_RPC_COMPUTE_METRIC_ARGS = 105,
	F_RPC_RESET_ARGS = 107,
	F_RPC_REGISTER_SQL_PACKAGE_ARGS = 108,
	F_RPC_STATEMENT_ARGS = 115,
	F_RPC_APPEND_RESULT = 201,
	F_RPC_QUERY_RESULT = 203,
	F_RPC_METRIC_RESULT = 205,
	F_RPC_METRIC_DESCRIPTORS = 206,
	F_RPC_METATRACE = 209,
	F_RPC_STATUS = 210,
	F_RPC_REGISTER_SQL_PACKAGE_RESULT = 211,
	F_RPC_FINALIZE_DATA_RESULT = 212,
	F_RPC_TRACE_SUMMARY_RESULT = 214,
	F_RPC_STATEMENT_RESULT = 219,
	/* StatementArgs, StatementResult */
	F_SARGS_SQL = 1,
	F_SARGS_START_OFFSET = 2,
	F_SRES_RESULT = 1,
	F_SRES_TAIL_OFFSET = 2,
	F_SRES_EXECUTED = 3,
	/* AppendTraceDataResult, FinalizeDataResult, RegisterSqlPackageResult */
	F_APPEND_TOTAL_BYTES_PARSED = 1,
	F_APPEND_ERROR = 2,
	F_FINALIZE_ERROR = 1,
	F_REGISTER_ERROR = 1,
	/* QueryArgs */
	F_QARGS_SQL = 1,
	/* QueryResult */
	F_QR_COLUMN_NAMES = 1,
	F_QR_ERROR = 2,
	F_QR_BATCH = 3,
	F_QR_STATEMENT_COUNT = 4,
	F_QR_STATEMENT_WITH_OUTPUT_COUNT = 5,
	F_QR_LAST_STATEMENT_SQL = 6,
	F_QR_ELAPSED_TIME_MS = 7,
	/* QueryResult.CellsBatch */
	F_BATCH_CELLS = 1,
	F_BATCH_VARINT_CELLS = 2,
	F_BATCH_FLOAT64_CELLS = 3,
	F_BATCH_BLOB_CELLS = 4,
	F_BATCH_STRING_CELLS = 5,
	F_BATCH_IS_LAST = 6,
	F_BATCH_PADDING = 7,
	/* StatusResult */
	F_STATUS_LOADED_TRACE_NAME = 1,
	F_STATUS_HUMAN_READABLE_VERSION = 2,
	F_STATUS_API_VERSION = 3,
	/* ComputeMetricResult, TraceSummaryResult, DisableAndReadMetatraceResult */
	F_METRIC_ERROR = 2,
	F_SUMMARY_ERROR = 3,
	F_METATRACE_BYTES = 1,
	/* ResetTraceProcessorArgs */
	F_RESET_DROP_TRACK_EVENT_BEFORE = 1,
	F_RESET_INGEST_FTRACE_IN_RAW = 2,
	F_RESET_ANALYZE_PROTO_CONTENT = 3,
	/* RegisterSqlPackageArgs (and its Module) */
	F_PKG_NAME = 1,
	F_PKG_MODULES = 2,
	F_PKG_ALLOW_OVERRIDE = 3,
	F_PKG_MODULE_NAME = 1,
	F_PKG_MODULE_SQL = 2,
};

/* TraceProcessorRpc.TraceProcessorMethod */
enum {
	TPM_UNSPECIFIED = 0,
	TPM_APPEND_TRACE_DATA = 1,
	TPM_FINALIZE_TRACE_DATA = 2,
	TPM_QUERY_STREAMING = 3,
	TPM_COMPUTE_METRIC = 5,
	TPM_GET_METRIC_DESCRIPTORS = 6,
	TPM_RESTORE_INITIAL_TABLES = 7,
	TPM_ENABLE_METATRACE = 8,
	TPM_DISABLE_AND_READ_METATRACE = 9,
	TPM_GET_STATUS = 10,
	TPM_RESET_TRACE_PROCESSOR = 11,
	TPM_REGISTER_SQL_PACKAGE = 13,
	TPM_SUMMARIZE_TRACE = 15,
	TPM_STATEMENT_STREAMING = 20,
};

/* QueryResult.CellsBatch.CellType */
enum { CELL_INVALID, CELL_NULL, CELL_VARINT, CELL_FLOAT64, CELL_STRING, CELL_BLOB };

/* --------------------------------------------------------------- sha1.c -- */

void rpc_sha1(const void *data, size_t len, uint8_t out[20]);
/* Writes 4 * ceil(@len / 3) characters and a NUL. Return: the characters. */
size_t rpc_base64(const uint8_t *in, size_t len, char *out);

/* ----------------------------------------------------------- http_req.c -- */

/* Perfetto's limits: a body of at most 64 MiB (a chunk of trace). */
#define HTTP_MAX_BODY (64u << 20)
/* The request line and headers. */
#define HTTP_MAX_HEAD (16u << 10)
#define HTTP_MAX_HEADERS 32

struct http_header {
	struct strview name, value;
};

struct http_req {
	struct strview method, uri, version;
	struct http_header headers[HTTP_MAX_HEADERS];
	size_t n_headers;
	size_t head_len;  /* bytes of the request line and headers */
	size_t body_len;  /* Content-Length */
	bool keepalive;   /* HTTP/1.1 without "Connection: close", or "keep-alive" */
	bool upgrade;     /* "Connection: upgrade" */
};

/*
 * http_parse() - The request at the start of [@p, @p + @len).
 * Return: its whole size (head and body) when all of it is there; 0 if
 * more bytes are needed; -1 if it is malformed or too big, with
 * *@status the reply ("400 Bad Request", "413 Payload Too Large", ...).
 * Views in @req point into @p.
 */
long http_parse(const uint8_t *p, size_t len, struct http_req *req, const char **status);
/* The value of header @name (case-insensitive), or an empty view. */
struct strview http_header(const struct http_req *req, const char *name);
/* Whether the comma-separated list @v holds @token (case-insensitive). */
bool http_list_has(struct strview v, const char *token);

/* ----------------------------------------------------------- ws_frame.c -- */

/* Perfetto's limit on an inbound frame's payload. */
#define WS_MAX_PAYLOAD (64u << 20)

enum { WS_CONT = 0x0, WS_TEXT = 0x1, WS_BINARY = 0x2, WS_CLOSE = 0x8, WS_PING = 0x9, WS_PONG = 0xa };

struct ws_frame {
	uint8_t opcode;
	bool fin;
	size_t head_len;     /* header bytes, mask included */
	size_t payload_len;
	uint8_t mask[4];
};

/*
 * ws_parse() - The client frame at the start of [@p, @p + @len).
 * Return: its whole size when all of it is there; 0 if more is needed;
 * -1 if it is not acceptable (unmasked, payload over WS_MAX_PAYLOAD,
 * reserved bits, a fragmented or long control frame), *@why says which.
 */
long ws_parse(const uint8_t *p, size_t len, struct ws_frame *f, const char **why);
/* XORs the payload with the mask in place. */
void ws_unmask(uint8_t *payload, size_t len, const uint8_t mask[4]);
/* The header of an unmasked, final server frame. Return: its size (<= 10). */
size_t ws_frame_header(uint8_t opcode, uint64_t len, uint8_t out[10]);
/* Sec-WebSocket-Accept for @key: 28 characters and a NUL into @out. */
void ws_accept(struct strview key, char out[29]);

/* -------------------------------------------------------------- query.c -- */

struct tp;
struct rpc_query;

/* Perfetto's batch limits: 50000 cells, or about 128 KiB. */
#define RPC_CELLS_PER_BATCH 50000
#define RPC_BATCH_SPLIT_BYTES (128u << 10)

/*
 * rpc_query_start() - Run @sql (@len bytes, several statements possibly)
 * as Perfetto's ExecuteQuery: every statement but the last runs to its
 * end; the last one's rows are what rpc_query_batch() serializes. An error
 * (Perfetto's traceback text) ends the query and goes into the result.
 * Return: 0 or -ENOMEM.
 */
int rpc_query_start(struct tp *tp, const char *sql, size_t len, struct rpc_query **out);
/*
 * rpc_query_batch() - Append to the QueryResult @qr: the column names and
 * statement counts the first time, then one CellsBatch (is_last_batch on
 * the last), the error if any, and the elapsed time.
 * Return: true if more batches follow.
 */
bool rpc_query_batch(struct rpc_query *q, struct pz_msg *qr);
/*
 * rpc_query_start_at() - Perfetto's ExecuteNextStatement, for
 * TPM_STATEMENT_STREAMING: only the statement at byte @off of @sql runs;
 * rpc_query_batch() serializes its rows. *@tail_off: where the next one
 * starts (@len when only blanks and comments were left); *@executed:
 * false when no statement ran (the end, or it failed to prepare: then the
 * error is in the result and *@tail_off is @off).
 * Return: 0, -EINVAL if @off is past @len (nothing made), or -ENOMEM.
 */
int rpc_query_start_at(struct tp *tp, const char *sql, size_t len, uint32_t off,
		       struct rpc_query **out, uint32_t *tail_off, bool *executed);
void rpc_query_end(struct rpc_query *q);

/* ---------------------------------------------------------------- rpc.c -- */

/*
 * How rpc.c replies: @c holds one whole message (a TraceProcessorRpcStream
 * for the RPC channel, the REST endpoint's result otherwise).
 * Return: 0, or -1 if the client is gone (the request stops).
 */
typedef int (*rpc_send_fn)(void *ctx, const struct pz_chunks *c);

/* rpc_send_fn writing each reply whole to the fd *@ctx (an int) (stdiod.c). */
int rpc_send_fd(void *ctx, const struct pz_chunks *ch);

/* One client's TraceProcessorRpc stream (a WebSocket or /rpc). */
struct rpc_chan {
	struct buf rx;       /* bytes of an incomplete message */
	int64_t rx_seq;
	int64_t tx_seq;
};

/* Largest TraceProcessorRpc message: a 64 MiB chunk of trace and its header. */
#define RPC_MAX_MSG (WS_MAX_PAYLOAD + 4096)

void rpc_chan_init(struct rpc_chan *c);
void rpc_chan_fini(struct rpc_chan *c);
/*
 * rpc_chan_feed() - @len more bytes of the stream; runs each complete
 * request and replies through @send.
 * Return: 0, or -1 when the channel must close (a framing error or a
 * request out of sequence, after a reply with fatal_error; or @send failed).
 */
int rpc_chan_feed(struct tp_rpc *r, struct rpc_chan *c, const uint8_t *data, size_t len,
		  rpc_send_fn send, void *ctx);

/* The REST endpoints, as Perfetto's httpd.cc routes them. */
enum rpc_rest {
	REST_STATUS,
	REST_PARSE,
	REST_NOTIFY_EOF,
	REST_RESTORE_INITIAL_TABLES,
	REST_COMPUTE_METRIC,
	REST_TRACE_SUMMARY,
	REST_ENABLE_METATRACE,
	REST_DISABLE_AND_READ_METATRACE,
};

/* One REST request's reply body (possibly empty) into @c. Return: 0 or -ENOMEM. */
int rpc_rest(struct tp_rpc *r, enum rpc_rest what, const uint8_t *body, size_t len,
	     struct pz_chunks *c);
/*
 * rpc_rest_query() - /query: QueryArgs in @body; each QueryResult piece
 * (one batch each) goes to @send.
 * Return: 0, or -1 if @send failed.
 */
int rpc_rest_query(struct tp_rpc *r, const uint8_t *body, size_t len, rpc_send_fn send,
		   void *ctx);

#endif

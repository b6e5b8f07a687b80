// SPDX-License-Identifier: Apache-2.0
/*
 * rpc.c - Perfetto's TraceProcessorRpc methods over our engine, for the
 * WebSocket and /rpc (a stream of TraceProcessorRpc messages, each framed
 * as field 1 of TraceProcessorRpcStream, answered with a seq of our own)
 * and for the REST endpoints of the Python API.
 *
 * The trace arrives in chunks (TPM_APPEND_TRACE_DATA, /parse); they are
 * written to an unlinked temporary file and imported at
 * TPM_FINALIZE_TRACE_DATA (/notify_eof), so a trace of any size costs no
 * memory until the import reads it. Data after the end of a trace starts
 * a new engine, as in Perfetto.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/file.h"
#include "base/version.h"
#include "trace_processor/rpc/rpc_int.h"

/* Chunks of a reply: a batch and its framing fit in one. */
#define RPC_REPLY_CHUNK (RPC_BATCH_SPLIT_BYTES + 8192)
/* Most modules one TPM_REGISTER_SQL_PACKAGE may carry. */
#define RPC_MAX_PKG_MODULES 4096

struct tp_rpc {
	struct tp_options opt;
	struct tp *tp;
	bool eof;          /* the trace was imported: more data starts anew */
	int data_fd;       /* the chunks so far, or -1 */
	uint64_t bytes;    /* bytes of the current trace */
	char *name;        /* StatusResult's name without " (N MB)"; NULL until EOF */
};

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

int tp_rpc_create(const struct tp_options *opt, struct tp *preloaded, const char *name,
		  uint64_t size, struct tp_rpc **out)
{
	struct tp_rpc *r = calloc(1, sizeof(*r));
	int rc;

	if (!r)
		return -ENOMEM;
	if (opt)
		r->opt = *opt;
	r->opt.progress = false;
	r->data_fd = -1;
	if (preloaded && !name) {
		r->tp = preloaded;
	} else if (preloaded) {
		r->tp = preloaded;
		r->eof = true;
		r->bytes = size;
		r->name = dup_or_null(name);
		if (!r->name) {
			free(r);
			return -ENOMEM;
		}
	} else {
		rc = tp_create(&r->opt, &r->tp);
		if (rc < 0) {
			free(r);
			return rc;
		}
	}
	*out = r;
	return 0;
}

void tp_rpc_destroy(struct tp_rpc *r)
{
	if (!r)
		return;
	tp_destroy(r->tp);
	if (r->data_fd >= 0)
		fd_close(r->data_fd);
	free(r->name);
	free(r);
}

/* A new, empty engine with @opt (Perfetto's ResetTraceProcessor). */
static int reset(struct tp_rpc *r, const struct tp_options *opt)
{
	struct tp *tp;
	int rc = tp_create(opt, &tp);

	if (rc < 0)
		return rc;
	tp_destroy(r->tp);
	r->tp = tp;
	r->opt = *opt;
	r->eof = false;
	r->bytes = 0;
	free(r->name);
	r->name = NULL;
	if (r->data_fd >= 0)
		fd_close(r->data_fd);
	r->data_fd = -1;
	return 0;
}

static int open_tmp(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	if (snprintf(path, sizeof(path), "%s/pfc-httpd-XXXXXX", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	unlink(path);
	return fd;
}

/* Perfetto's Rpc::Parse. Return: NULL, or the error message (static). */
static const char *parse(struct tp_rpc *r, const uint8_t *data, size_t len, char *msg,
			 size_t msg_size)
{
	int rc;

	if (r->eof && reset(r, &r->opt) < 0)
		return "out of memory";
	if (len == 0)
		return NULL;
	if (r->data_fd < 0) {
		rc = open_tmp();
		if (rc < 0) {
			snprintf(msg, msg_size, "cannot make a temporary file for the trace: %s",
				 strerror(-rc));
			return msg;
		}
		r->data_fd = rc;
	}
	rc = file_write_all(r->data_fd, data, len);
	if (rc < 0) {
		snprintf(msg, msg_size, "cannot store the trace data: %s", strerror(-rc));
		return msg;
	}
	r->bytes += len;
	return NULL;
}

/* Perfetto's Rpc::NotifyEndOfFile: imports what parse() stored. */
static const char *notify_eof(struct tp_rpc *r, char *msg, size_t msg_size)
{
	int rc;

	if (r->eof)
		return "NotifyEndOfFile should only be called once";
	if (r->data_fd < 0) {
		r->data_fd = open_tmp();
		if (r->data_fd < 0) {
			rc = r->data_fd;
			snprintf(msg, msg_size, "cannot make a temporary file: %s", strerror(-rc));
			return msg;
		}
	}
	r->eof = true;
	free(r->name);
	r->name = strdup("Unnamed trace");
	if (lseek(r->data_fd, 0, SEEK_SET) < 0) {
		snprintf(msg, msg_size, "cannot read the trace data back: %s", strerror(errno));
		return msg;
	}
	fprintf(stderr, "[RPC] Loading trace %.2f MB\n", (double)r->bytes / 1e6);
	rc = tp_import_fd(r->tp, r->data_fd, "trace");
	fd_close(r->data_fd);
	r->data_fd = -1;
	if (rc == -EINVAL)
		return "Unknown trace type: the data does not start with a Perfetto TracePacket";
	if (rc < 0) {
		snprintf(msg, msg_size, "cannot import the trace: %s", strerror(-rc));
		return msg;
	}
	if (!tp_sqlite(r->tp))
		return "cannot start SQLite";
	return NULL;
}

static void write_status(struct tp_rpc *r, struct pz_msg *m)
{
	char name[4096];

	if (r->name && r->eof) {
		snprintf(name, sizeof(name), "%s (%llu MB)", r->name,
			 (unsigned long long)(r->bytes / 1024 / 1024));
		pz_append_string(m, F_STATUS_LOADED_TRACE_NAME, name);
	} else {
		pz_append_string(m, F_STATUS_LOADED_TRACE_NAME, "");
	}
	pz_append_string(m, F_STATUS_HUMAN_READABLE_VERSION, PFC_VERSION_STRING);
	pz_append_varint(m, F_STATUS_API_VERSION, RPC_API_VERSION);
	/* No version_code: the UI then offers no switch to another UI version. */
}

/* ResetTraceProcessorArgs over the command line's options. */
static int reset_with_args(struct tp_rpc *r, const struct pz_field *args)
{
	struct tp_options opt = r->opt;
	struct pz_field f[8];

	memset(f, 0, sizeof(f));
	if (args && args->data && pz_decode_table(args->data, args->size, f, 8) != PZ_OK)
		return -EINVAL;
	if (f[F_RESET_DROP_TRACK_EVENT_BEFORE].id)
		opt.crop_track_events = f[F_RESET_DROP_TRACK_EVENT_BEFORE].value == 1;
	if (f[F_RESET_INGEST_FTRACE_IN_RAW].id)
		opt.no_ftrace_raw = !f[F_RESET_INGEST_FTRACE_IN_RAW].value;
	if (f[F_RESET_ANALYZE_PROTO_CONTENT].id)
		opt.analyze_proto_content = f[F_RESET_ANALYZE_PROTO_CONTENT].value != 0;
	return reset(r, &opt);
}

static char *dup_view(const uint8_t *p, uint32_t n)
{
	char *s = malloc((size_t)n + 1);

	if (s) {
		if (n)
			memcpy(s, p, n);
		s[n] = '\0';
	}
	return s;
}

/*
 * RegisterSqlPackageArgs -> tp_register_sql_package().
 * Return: NULL or the error (malloc'ed, or the static "out of memory").
 */
static char *register_package(struct tp_rpc *r, const struct pz_field *args, bool *err_static)
{
	struct pz_reader rd, mr;
	struct pz_field f, mf;
	char *pkg = NULL, *err = NULL, **names = NULL;
	const char **sqls = NULL;
	size_t *lens = NULL, n = 0, i;
	bool allow = false;
	int rc;

	*err_static = false;
	if (!args || !args->data) {
		*err_static = true;
		return "RPC error: request field not set";
	}
	names = calloc(RPC_MAX_PKG_MODULES, sizeof(*names));
	sqls = calloc(RPC_MAX_PKG_MODULES, sizeof(*sqls));
	lens = calloc(RPC_MAX_PKG_MODULES, sizeof(*lens));
	if (!names || !sqls || !lens)
		goto nomem;
	pz_reader_init(&rd, args->data, args->size);
	while (pz_reader_next(&rd, &f) > 0) {
		if (f.id == F_PKG_NAME && f.wire_type == PZ_WIRE_LEN) {
			free(pkg);
			pkg = dup_view(f.data, f.size);
			if (!pkg)
				goto nomem;
		} else if (f.id == F_PKG_ALLOW_OVERRIDE && f.wire_type == PZ_WIRE_VARINT) {
			allow = f.value != 0;
		} else if (f.id == F_PKG_MODULES && f.wire_type == PZ_WIRE_LEN) {
			if (n == RPC_MAX_PKG_MODULES) {
				err = strdup("Too many modules in one SQL package");
				goto out;
			}
			sqls[n] = "";
			pz_reader_init(&mr, f.data, f.size);
			while (pz_reader_next(&mr, &mf) > 0) {
				if (mf.wire_type != PZ_WIRE_LEN)
					continue;
				if (mf.id == F_PKG_MODULE_NAME) {
					free(names[n]);
					names[n] = dup_view(mf.data, mf.size);
					if (!names[n])
						goto nomem;
				} else if (mf.id == F_PKG_MODULE_SQL) {
					sqls[n] = (const char *)mf.data;
					lens[n] = mf.size;
				}
			}
			if (!names[n] && !(names[n] = strdup("")))
				goto nomem;
			n++;
		}
	}
	if (rd.err) {
		err = strdup("Malformed RegisterSqlPackageArgs");
		goto out;
	}
	rc = tp_register_sql_package(r->tp, pkg ? pkg : "", n, (const char *const *)names, sqls,
				     lens, allow, &err);
	if (rc == -ENOMEM && !err)
		goto nomem;
	if (rc < 0 && !err)
		err = strdup("Cannot register the SQL package");
	goto out;
nomem:
	free(err);
	err = "out of memory";
	*err_static = true;
out:
	for (i = 0; names && i < RPC_MAX_PKG_MODULES; i++)
		free(names[i]);
	free(names);
	free(sqls);
	free(lens);
	free(pkg);
	return err;
}

/* ------------------------------------------------------------ replies ---- */

static inline void seal(struct pz_chunks *c)
{
	if (c->tail)
		c->tail->used = (size_t)(c->s.cur - c->tail->data);
}

struct reply {
	struct pz_chunks c;
	struct pz_msg root;    /* TraceProcessorRpcStream */
	struct pz_msg rpc;     /* its one TraceProcessorRpc */
};

static int reply_begin(struct reply *rp, int64_t seq, int method)
{
	int rc = pz_chunks_init(&rp->c, RPC_REPLY_CHUNK, 0);

	if (rc < 0)
		return rc;
	pz_msg_begin(&rp->root, &rp->c.s, NULL);
	pz_begin_nested(&rp->root, F_STREAM_MSG, &rp->rpc);
	pz_append_int(&rp->rpc, F_RPC_SEQ, seq);
	pz_append_varint(&rp->rpc, F_RPC_RESPONSE, (uint64_t)method);
	return 0;
}

static int reply_send(struct reply *rp, rpc_send_fn send, void *ctx)
{
	int rc;

	pz_end(&rp->root);
	seal(&rp->c);
	rc = pz_stream_ok(&rp->c.s) ? send(ctx, &rp->c) : -1;
	pz_chunks_fini(&rp->c);
	return rc;
}

/* A reply of one message of fields (error strings and such) built by @fill. */
static int send_simple(struct rpc_chan *c, int method, uint32_t result_field,
		       void (*fill)(struct pz_msg *m, const void *arg), const void *arg,
		       rpc_send_fn send, void *ctx)
{
	struct reply rp;
	struct pz_msg m;

	if (reply_begin(&rp, c->tx_seq++, method) < 0)
		return -1;
	if (result_field) {
		pz_begin_nested(&rp.rpc, result_field, &m);
		if (fill)
			fill(&m, arg);
		pz_end(&m);
	}
	return reply_send(&rp, send, ctx);
}

/* fill: field 1 = the error (or nothing). */
static void fill_error1(struct pz_msg *m, const void *arg)
{
	if (arg)
		pz_append_string(m, 1, arg);
}

static void fill_append_error(struct pz_msg *m, const void *arg)
{
	if (arg)
		pz_append_string(m, F_APPEND_ERROR, arg);
}

static void fill_metric_error(struct pz_msg *m, const void *arg)
{
	(void)arg;
	pz_append_string(m, F_METRIC_ERROR,
			 "Metrics are not supported by this trace processor (perfetto-c)");
}

static void fill_summary_error(struct pz_msg *m, const void *arg)
{
	(void)arg;
	pz_append_string(m, F_SUMMARY_ERROR,
			 "Trace summaries are not supported by this trace processor (perfetto-c)");
}

static void fill_status(struct pz_msg *m, const void *arg)
{
	write_status((struct tp_rpc *)arg, m);
}

static void fill_empty_metatrace(struct pz_msg *m, const void *arg)
{
	(void)arg;
	/* No metatrace is recorded: an empty trace. */
	pz_append_bytes(m, F_METATRACE_BYTES, "", 0);
}

/* TPM_QUERY_STREAMING: one reply per batch. */
static int query_streaming(struct tp_rpc *r, struct rpc_chan *c, const struct pz_field *args,
			   rpc_send_fn send, void *ctx)
{
	struct pz_field qa[4];
	struct rpc_query *q;
	struct reply rp;
	struct pz_msg qr;
	bool more = true;
	int rc = 0;

	memset(qa, 0, sizeof(qa));
	if (!args || !args->data || pz_decode_table(args->data, args->size, qa, 4) != PZ_OK) {
		if (reply_begin(&rp, c->tx_seq++, TPM_QUERY_STREAMING) < 0)
			return -1;
		pz_begin_nested(&rp.rpc, F_RPC_QUERY_RESULT, &qr);
		pz_append_string(&qr, F_QR_ERROR, "RPC error: request field not set");
		pz_end(&qr);
		return reply_send(&rp, send, ctx);
	}
	if (rpc_query_start(r->tp, (const char *)qa[F_QARGS_SQL].data, qa[F_QARGS_SQL].size, &q) <
	    0)
		return -1;
	while (more && rc == 0) {
		if (reply_begin(&rp, c->tx_seq++, TPM_QUERY_STREAMING) < 0) {
			rc = -1;
			break;
		}
		pz_begin_nested(&rp.rpc, F_RPC_QUERY_RESULT, &qr);
		more = rpc_query_batch(q, &qr);
		pz_end(&qr);
		rc = reply_send(&rp, send, ctx);
	}
	rpc_query_end(q);
	return rc;
}

static int fatal(struct rpc_chan *c, const char *msg, rpc_send_fn send, void *ctx)
{
	struct pz_chunks ch;
	struct pz_msg root, rpc;

	(void)c;
	if (pz_chunks_init(&ch, 1024, 0) < 0)
		return -1;
	pz_msg_begin(&root, &ch.s, NULL);
	pz_begin_nested(&root, F_STREAM_MSG, &rpc);
	pz_append_string(&rpc, F_RPC_FATAL_ERROR, msg);
	pz_end(&root);
	seal(&ch);
	send(ctx, &ch);
	pz_chunks_fini(&ch);
	return -1;
}

/* Field @id of @f if it is there as bytes (a message or a chunk), else NULL. */
static const struct pz_field *arg(const struct pz_field *f, uint32_t id)
{
	return f[id].id && f[id].wire_type == PZ_WIRE_LEN ? &f[id] : NULL;
}

/*
 * TPM_STATEMENT_STREAMING: the next statement only, one reply per batch;
 * the first carries the cursor (tail_offset, statement_executed).
 */
static int statement_streaming(struct tp_rpc *r, struct rpc_chan *c,
			       const struct pz_field *args, rpc_send_fn send, void *ctx)
{
	struct pz_field sa[4];
	struct rpc_query *q = NULL;
	struct reply rp;
	struct pz_msg sr, qr;
	const char *err = NULL;
	uint32_t tail = 0;
	bool more = true, executed = false, first = true;
	int rc = 0;

	memset(sa, 0, sizeof(sa));
	if (!args || !args->data || pz_decode_table(args->data, args->size, sa, 4) != PZ_OK) {
		err = "RPC error: request field not set";
	} else if (sa[F_SARGS_START_OFFSET].value > sa[F_SARGS_SQL].size) {
		err = "StatementArgs.start_offset out of range";
	} else if (rpc_query_start_at(r->tp, (const char *)sa[F_SARGS_SQL].data,
				      sa[F_SARGS_SQL].size,
				      (uint32_t)sa[F_SARGS_START_OFFSET].value, &q, &tail,
				      &executed) < 0) {
		return -1;
	}
	while (more && rc == 0) {
		if (reply_begin(&rp, c->tx_seq++, TPM_STATEMENT_STREAMING) < 0) {
			rc = -1;
			break;
		}
		pz_begin_nested(&rp.rpc, F_RPC_STATEMENT_RESULT, &sr);
		pz_begin_nested(&sr, F_SRES_RESULT, &qr);
		if (q) {
			more = rpc_query_batch(q, &qr);
		} else {
			struct pz_msg b;

			if (err)
				pz_append_string(&qr, F_QR_ERROR, err);
			pz_begin_nested(&qr, F_QR_BATCH, &b);
			pz_append_bool(&b, F_BATCH_IS_LAST, true);
			pz_end(&b);
			more = false;
		}
		pz_end(&qr);
		if (first && q) {
			pz_append_varint(&sr, F_SRES_TAIL_OFFSET, tail);
			pz_append_bool(&sr, F_SRES_EXECUTED, executed);
		}
		first = false;
		pz_end(&sr);
		rc = reply_send(&rp, send, ctx);
	}
	rpc_query_end(q);
	return rc;
}

/* One TraceProcessorRpc request. Return: 0, or -1 to close the channel. */
static int handle(struct tp_rpc *r, struct rpc_chan *c, const uint8_t *msg, size_t len,
		  rpc_send_fn send, void *ctx)
{
	struct pz_field f[120];
	const struct pz_field *args;
	char err[512], text[160];
	const char *e;
	char *perr;
	bool err_static;
	int64_t seq;
	int method, rc;

	memset(f, 0, sizeof(f));
	if (pz_decode_table(msg, len, f, 120) != PZ_OK)
		return fatal(c, "RPC framing error", send, ctx);
	seq = f[F_RPC_SEQ].id ? (int64_t)f[F_RPC_SEQ].value : 0;
	if (seq != 0 && c->rx_seq != 0 && seq != c->rx_seq + 1) {
		snprintf(text, sizeof(text),
			 "RPC request out of order. Expected %lld, got %lld (ERR:rpc_seq)",
			 (long long)(c->rx_seq + 1), (long long)seq);
		return fatal(c, text, send, ctx);
	}
	c->rx_seq = seq;
	method = f[F_RPC_REQUEST].id ? (int)f[F_RPC_REQUEST].value : TPM_UNSPECIFIED;
	switch (method) {
	case TPM_APPEND_TRACE_DATA:
		args = arg(f, F_RPC_APPEND_TRACE_DATA);
		e = args ? parse(r, args->data, args->size, err, sizeof(err))
			 : "RPC error: request field not set";
		return send_simple(c, method, F_RPC_APPEND_RESULT, fill_append_error, e, send, ctx);
	case TPM_FINALIZE_TRACE_DATA:
		e = notify_eof(r, err, sizeof(err));
		return send_simple(c, method, F_RPC_FINALIZE_DATA_RESULT, fill_error1, e, send,
				   ctx);
	case TPM_QUERY_STREAMING:
		args = arg(f, F_RPC_QUERY_ARGS);
		return query_streaming(r, c, args, send, ctx);
	case TPM_STATEMENT_STREAMING:
		return statement_streaming(r, c, arg(f, F_RPC_STATEMENT_ARGS), send, ctx);
	case TPM_COMPUTE_METRIC:
		return send_simple(c, method, F_RPC_METRIC_RESULT, fill_metric_error, NULL, send,
				   ctx);
	case TPM_SUMMARIZE_TRACE:
		return send_simple(c, method, F_RPC_TRACE_SUMMARY_RESULT, fill_summary_error,
				   NULL, send, ctx);
	case TPM_GET_METRIC_DESCRIPTORS:
		/* An empty DescriptorSet: no metrics. */
		return send_simple(c, method, F_RPC_METRIC_DESCRIPTORS, NULL, NULL, send, ctx);
	case TPM_RESTORE_INITIAL_TABLES:
		tp_restore_initial_tables(r->tp);
		return send_simple(c, method, 0, NULL, NULL, send, ctx);
	case TPM_ENABLE_METATRACE:
		return send_simple(c, method, 0, NULL, NULL, send, ctx);
	case TPM_DISABLE_AND_READ_METATRACE:
		return send_simple(c, method, F_RPC_METATRACE, fill_empty_metatrace, NULL, send,
				   ctx);
	case TPM_GET_STATUS:
		return send_simple(c, method, F_RPC_STATUS, fill_status, r, send, ctx);
	case TPM_RESET_TRACE_PROCESSOR:
		rc = reset_with_args(r, arg(f, F_RPC_RESET_ARGS));
		if (rc < 0)
			fprintf(stderr, "[RPC] reset failed: %s\n", strerror(-rc));
		return send_simple(c, method, 0, NULL, NULL, send, ctx);
	case TPM_REGISTER_SQL_PACKAGE:
		perr = register_package(r, arg(f, F_RPC_REGISTER_SQL_PACKAGE_ARGS), &err_static);
		rc = send_simple(c, method, F_RPC_REGISTER_SQL_PACKAGE_RESULT, fill_error1, perr,
				 send, ctx);
		if (!err_static)
			free(perr);
		return rc;
	default: {
		struct reply rp;

		if (reply_begin(&rp, c->tx_seq++, method) < 0)
			return -1;
		pz_append_varint(&rp.rpc, F_RPC_INVALID_REQUEST, (uint64_t)method);
		return reply_send(&rp, send, ctx);
	}
	}
}

void rpc_chan_init(struct rpc_chan *c)
{
	memset(c, 0, sizeof(*c));
	buf_init(&c->rx);
}

void rpc_chan_fini(struct rpc_chan *c)
{
	buf_fini(&c->rx);
}

/*
 * The next message of [@p, @p + @len): 1 with [*@msg, +*@msg_len) and
 * *@used, 0 if incomplete, -1 if the framing is broken.
 */
static int next_msg(const uint8_t *p, size_t len, const uint8_t **msg, size_t *msg_len,
		    size_t *used)
{
	const uint8_t *q = p + 1;
	uint64_t n;

	if (len == 0)
		return 0;
	if (p[0] != pz_make_tag(F_STREAM_MSG, PZ_WIRE_LEN))
		return -1;
	switch (pz_varint_decode(&q, p + len, &n)) {
	case PZ_OK:
		break;
	case PZ_ERR_TRUNCATED_VARINT:
		return len > 11 ? -1 : 0;
	default:
		return -1;
	}
	if (n > RPC_MAX_MSG)
		return -1;
	if ((size_t)(p + len - q) < n)
		return 0;
	*msg = q;
	*msg_len = (size_t)n;
	*used = (size_t)(q - p) + (size_t)n;
	return 1;
}

int rpc_chan_feed(struct tp_rpc *r, struct rpc_chan *c, const uint8_t *data, size_t len,
		  rpc_send_fn send, void *ctx)
{
	const uint8_t *p, *msg;
	size_t avail, msg_len, used;
	int rc;

	if (len && buf_append(&c->rx, data, len) < 0)
		return fatal(c, "RPC framing error: out of memory", send, ctx);
	for (;;) {
		p = c->rx.data;
		avail = c->rx.len;
		rc = next_msg(p, avail, &msg, &msg_len, &used);
		if (rc < 0)
			return fatal(c, "RPC framing error", send, ctx);
		if (rc == 0)
			return 0;
		rc = handle(r, c, msg, msg_len, send, ctx);
		buf_consume(&c->rx, used);
		if (rc < 0)
			return -1;
	}
}

/* ------------------------------------------------------------- REST ---- */

int rpc_rest(struct tp_rpc *r, enum rpc_rest what, const uint8_t *body, size_t len,
	     struct pz_chunks *c)
{
	char err[512];
	const char *e;
	struct pz_msg m;
	int rc = pz_chunks_init(c, 4096, 0);

	if (rc < 0)
		return rc;
	pz_msg_begin(&m, &c->s, NULL);
	switch (what) {
	case REST_STATUS:
		write_status(r, &m);
		break;
	case REST_PARSE:
		e = parse(r, body, len, err, sizeof(err));
		if (e)
			pz_append_string(&m, F_APPEND_ERROR, e);
		break;
	case REST_NOTIFY_EOF:
		e = notify_eof(r, err, sizeof(err));
		if (e) {
			fprintf(stderr, "[RPC] %s\n", e);
			/* Perfetto's reply is empty (its import fails at /parse,
			 * ours at the end): the error, as in /parse's reply, lets
			 * a client tell; Perfetto's own Python API ignores it. */
			pz_append_string(&m, F_APPEND_ERROR, e);
		}
		break;
	case REST_RESTORE_INITIAL_TABLES:
		tp_restore_initial_tables(r->tp);
		break;
	case REST_COMPUTE_METRIC:
		fill_metric_error(&m, NULL);
		break;
	case REST_TRACE_SUMMARY:
		fill_summary_error(&m, NULL);
		break;
	case REST_ENABLE_METATRACE:
		break;
	case REST_DISABLE_AND_READ_METATRACE:
		fill_empty_metatrace(&m, NULL);
		break;
	}
	pz_end(&m);
	seal(c);
	if (!pz_stream_ok(&c->s)) {
		pz_chunks_fini(c);
		return -ENOMEM;
	}
	return 0;
}

int rpc_rest_query(struct tp_rpc *r, const uint8_t *body, size_t len, rpc_send_fn send,
		   void *ctx)
{
	struct pz_field qa[4];
	struct rpc_query *q;
	struct pz_chunks c;
	struct pz_msg m;
	bool more = true;
	int rc = 0;

	memset(qa, 0, sizeof(qa));
	if (pz_decode_table(body, len, qa, 4) != PZ_OK)
		memset(qa, 0, sizeof(qa));
	if (rpc_query_start(r->tp, qa[F_QARGS_SQL].data ? (const char *)qa[F_QARGS_SQL].data : "",
			    qa[F_QARGS_SQL].size, &q) < 0)
		return -1;
	while (more && rc == 0) {
		if (pz_chunks_init(&c, RPC_REPLY_CHUNK, 0) < 0) {
			rc = -1;
			break;
		}
		pz_msg_begin(&m, &c.s, NULL);
		more = rpc_query_batch(q, &m);
		pz_end(&m);
		seal(&c);
		rc = pz_stream_ok(&c.s) ? send(ctx, &c) : -1;
		pz_chunks_fini(&c);
	}
	rpc_query_end(q);
	return rc;
}

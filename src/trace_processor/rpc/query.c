// SPDX-License-Identifier: Apache-2.0
/*
 * query.c - a query's result as Perfetto's QueryResult: the column names
 * and statement counts in the first piece, then CellsBatch after
 * CellsBatch, each of whole rows and at most RPC_CELLS_PER_BATCH cells or
 * about RPC_BATCH_SPLIT_BYTES: one cell type per cell, the integers as
 * packed varints, the reals as packed doubles placed at an offset that is
 * a multiple of 8 (a padding field before them, as Perfetto does, so the
 * UI can view them in place), the strings NUL-terminated in one field,
 * the blobs one field each; is_last_batch on the last, then the error.
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "trace_processor/rpc/rpc_int.h"
#include "trace_processor/trace_processor.h"

struct rpc_query {
	struct tp *tp;
	sqlite3_stmt *stmt;    /* the last statement, whose rows are served */
	int n_cols;
	bool row;              /* stmt has a row not serialized yet */
	bool started;          /* the first piece (names, counts) went out */
	char *error;           /* sqlite3_malloc'ed, or NULL */
	uint32_t n_stmts;
	uint32_t n_with_output;
	struct buf last_sql;   /* the last statement's text */
	uint64_t t_start;
	/* One batch's columns of cells, reused. */
	struct buf types, varints, doubles, strings, blobs;
};

/* A buffer's bytes, never NULL (memcpy must not see NULL, even for 0 bytes). */
static const void *bytes(const struct buf *b)
{
	static const uint8_t k_empty[1];

	return b->len ? (const void *)b->data : (const void *)k_empty;
}

/* Skips what SQLite parses as nothing: blanks, comments and ';'. */
static const char *skip_blank(const char *p, const char *end)
{
	const char *e;

	for (;;) {
		while (p < end && (*p == ';' || *p == ' ' || (*p >= '\t' && *p <= '\r')))
			p++;
		if (end - p >= 2 && p[0] == '-' && p[1] == '-') {
			e = memchr(p, '\n', (size_t)(end - p));
			p = e ? e + 1 : end;
		} else if (end - p >= 2 && p[0] == '/' && p[1] == '*') {
			for (e = p + 2; end - e >= 2 && !(e[0] == '*' && e[1] == '/'); e++)
				;
			p = end - e >= 2 ? e + 2 : end;
		} else {
			return p;
		}
	}
}

static void set_error(struct rpc_query *q, const char *step_msg)
{
	if (!q->error)
		q->error = tp_error(q->tp, step_msg);
	if (!q->error)
		q->error = sqlite3_mprintf("%s", step_msg ? step_msg : "out of memory");
}

static void step(struct rpc_query *q)
{
	int rc = sqlite3_step(q->stmt);

	q->row = rc == SQLITE_ROW;
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		set_error(q, sqlite3_errmsg(sqlite3_db_handle(q->stmt)));
}

/* Runs the statements of @sql; keeps the last one, at its first row. */
static void run(struct rpc_query *q, const char *sql)
{
	const char *end = sql + strlen(sql), *p = skip_blank(sql, end), *tail;
	sqlite3_stmt *stmt;
	int rc;

	while (p < end) {
		stmt = NULL;
		rc = tp_prepare(q->tp, p, &stmt, &tail);
		if (rc != SQLITE_OK) {
			set_error(q, NULL);
			sqlite3_finalize(stmt);
			return;
		}
		if (!tail || tail < p || tail > end)
			tail = end;
		if (!stmt) {
			p = skip_blank(tail, end);
			continue;
		}
		q->n_stmts++;
		if (sqlite3_column_count(stmt) > 0)
			q->n_with_output++;
		buf_reset(&q->last_sql);
		if (buf_append(&q->last_sql, p, (size_t)(tail - p)) < 0) {
			set_error(q, "out of memory");
			return;
		}
		sqlite3_finalize(q->stmt);
		q->stmt = stmt;
		q->n_cols = sqlite3_column_count(stmt);
		step(q);
		p = skip_blank(tail, end);
		if (q->error)
			return;
		if (p < end) {
			while (q->row)
				step(q);
			if (q->error)
				return;
		}
	}
}

int rpc_query_start(struct tp *tp, const char *sql, size_t len, struct rpc_query **out)
{
	struct rpc_query *q = calloc(1, sizeof(*q));
	char *text;

	if (!q)
		return -ENOMEM;
	q->tp = tp;
	q->t_start = clock_monotonic_ns();
	/* A NUL-terminated copy: the statements' text outlives the request. */
	text = malloc(len + 1);
	if (!text) {
		free(q);
		return -ENOMEM;
	}
	if (len)
		memcpy(text, sql, len);
	text[len] = '\0';
	if (memchr(text, '\0', len))
		q->error = sqlite3_mprintf("The query contains a NUL character");
	else
		run(q, text);
	free(text);
	*out = q;
	return 0;
}

/* The statement at @off of @text (NUL-terminated, @len bytes): see rpc_int.h. */
static void run_one(struct rpc_query *q, const char *text, size_t len, size_t off,
		    uint32_t *tail_off, bool *executed)
{
	const char *end = text + len, *p = skip_blank(text + off, end), *tail = NULL;
	sqlite3_stmt *stmt = NULL;

	*executed = false;
	*tail_off = (uint32_t)off;
	while (p < end) {
		if (tp_prepare_in(q->tp, text, p, &stmt, &tail) != SQLITE_OK) {
			set_error(q, NULL);
			sqlite3_finalize(stmt);
			return;
		}
		if (!tail || tail < p || tail > end)
			tail = end;
		if (stmt)
			break;
		p = skip_blank(tail, end);
	}
	if (!stmt) {
		/* Only blanks and comments were left: the query is done. */
		*tail_off = (uint32_t)len;
		return;
	}
	*executed = true;
	*tail_off = (uint32_t)(tail - text);
	q->n_stmts = 1;
	q->n_with_output = sqlite3_column_count(stmt) > 0;
	if (buf_append(&q->last_sql, p, (size_t)(tail - p)) < 0) {
		sqlite3_finalize(stmt);
		set_error(q, "out of memory");
		return;
	}
	q->stmt = stmt;
	q->n_cols = sqlite3_column_count(stmt);
	step(q);
	/*
	 * Output a shell ignores, as Perfetto counts it: a lone
	 * "suppress_query_output" column, a void function's row.
	 */
	if (q->n_cols == 1 &&
	    (strcmp(sqlite3_column_name(stmt, 0) ? sqlite3_column_name(stmt, 0) : "",
		    "suppress_query_output") == 0 ||
	     (q->row && sqlite3_value_pointer(sqlite3_column_value(stmt, 0), "VOID"))))
		q->n_with_output = 0;
}

int rpc_query_start_at(struct tp *tp, const char *sql, size_t len, uint32_t off,
		       struct rpc_query **out, uint32_t *tail_off, bool *executed)
{
	struct rpc_query *q;
	char *text;

	*executed = false;
	*tail_off = off;
	if (off > len || len > UINT32_MAX)
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->tp = tp;
	q->t_start = clock_monotonic_ns();
	text = malloc(len + 1);
	if (!text) {
		free(q);
		return -ENOMEM;
	}
	if (len)
		memcpy(text, sql, len);
	text[len] = '\0';
	if (memchr(text, '\0', len))
		q->error = sqlite3_mprintf("The query contains a NUL character");
	else
		run_one(q, text, len, off, tail_off, executed);
	free(text);
	*out = q;
	return 0;
}

void rpc_query_end(struct rpc_query *q)
{
	if (!q)
		return;
	sqlite3_finalize(q->stmt);
	sqlite3_free(q->error);
	buf_fini(&q->types);
	buf_fini(&q->varints);
	buf_fini(&q->doubles);
	buf_fini(&q->strings);
	buf_fini(&q->blobs);
	buf_fini(&q->last_sql);
	free(q);
}

static void write_first_piece(struct rpc_query *q, struct pz_msg *qr)
{
	int i;
	const char *name;

	for (i = 0; i < q->n_cols; i++) {
		name = sqlite3_column_name(q->stmt, i);
		pz_append_string(qr, F_QR_COLUMN_NAMES, name ? name : "");
	}
	pz_append_varint(qr, F_QR_STATEMENT_COUNT, q->n_stmts);
	pz_append_varint(qr, F_QR_STATEMENT_WITH_OUTPUT_COUNT, q->n_with_output);
	pz_append_bytes(qr, F_QR_LAST_STATEMENT_SQL, bytes(&q->last_sql), q->last_sql.len);
}

/* Appends one row's cells. Return: its approximate size in the batch. */
static size_t add_row(struct rpc_query *q, int *err)
{
	uint8_t tmp[PZ_MAX_VARINT_BYTES + 1];
	size_t size = 0, n;
	const void *blob;
	const char *s;
	double d;
	int i;

	for (i = 0; i < q->n_cols; i++) {
		switch (sqlite3_column_type(q->stmt, i)) {
		case SQLITE_INTEGER:
			*err |= buf_append_byte(&q->types, CELL_VARINT);
			n = pz_varint_encode((uint64_t)sqlite3_column_int64(q->stmt, i), tmp);
			*err |= buf_append(&q->varints, tmp, n);
			size += 4;
			break;
		case SQLITE_FLOAT:
			*err |= buf_append_byte(&q->types, CELL_FLOAT64);
			d = sqlite3_column_double(q->stmt, i);
			*err |= buf_append(&q->doubles, &d, sizeof(d));
			size += sizeof(d);
			break;
		case SQLITE_TEXT:
			*err |= buf_append_byte(&q->types, CELL_STRING);
			s = (const char *)sqlite3_column_text(q->stmt, i);
			n = (size_t)sqlite3_column_bytes(q->stmt, i);
			/* A string ends at its first NUL, as in Perfetto. */
			n = s ? strnlen(s, n) : 0;
			*err |= buf_append(&q->strings, s ? s : "", n);
			*err |= buf_append_byte(&q->strings, 0);
			size += n + 1 + 4;
			break;
		case SQLITE_BLOB:
			*err |= buf_append_byte(&q->types, CELL_BLOB);
			blob = sqlite3_column_blob(q->stmt, i);
			n = (size_t)sqlite3_column_bytes(q->stmt, i);
			tmp[0] = (uint8_t)pz_make_tag(F_BATCH_BLOB_CELLS, PZ_WIRE_LEN);
			*err |= buf_append(&q->blobs, tmp, 1 + pz_varint_encode(n, tmp + 1));
			*err |= buf_append(&q->blobs, blob, n);
			size += n + 4;
			break;
		default:
			*err |= buf_append_byte(&q->types, CELL_NULL);
			break;
		}
	}
	return size;
}

/* The packed doubles, their first byte at an offset that is a multiple of 8. */
static void write_doubles(struct pz_msg *batch, const struct buf *d)
{
	uint8_t pre[1 + PZ_MAX_VARINT_BYTES], pad[10];
	size_t n_pre, off, padding, i;

	pre[0] = (uint8_t)pz_make_tag(F_BATCH_FLOAT64_CELLS, PZ_WIRE_LEN);
	n_pre = 1 + pz_varint_encode(d->len, pre + 1);
	/* The stream's bytes so far are final: sizes are fixed-width. */
	off = (size_t)batch->s->n_bytes + n_pre;
	padding = (8 - off % 8) % 8;
	if (padding == 1)
		padding = 9; /* a field takes 2 bytes at least */
	if (padding) {
		/* Field 7 as a varint 0 written in padding - 1 bytes. */
		pad[0] = (uint8_t)pz_make_tag(F_BATCH_PADDING, PZ_WIRE_VARINT);
		for (i = 1; i + 1 < padding; i++)
			pad[i] = 0x80;
		pad[padding - 1] = 0;
		pz_append_raw(batch, pad, padding);
	}
	pz_append_raw(batch, pre, n_pre);
	pz_append_raw(batch, d->data, d->len);
}

bool rpc_query_batch(struct rpc_query *q, struct pz_msg *qr)
{
	struct pz_msg batch, strings;
	size_t approx = 16;
	bool full = false;
	int err = 0;

	if (!q->started) {
		write_first_piece(q, qr);
		q->started = true;
	}
	buf_reset(&q->types);
	buf_reset(&q->varints);
	buf_reset(&q->doubles);
	buf_reset(&q->strings);
	buf_reset(&q->blobs);
	while (q->row && !q->error) {
		if (q->types.len > 0 && (q->types.len + (size_t)q->n_cols > RPC_CELLS_PER_BATCH ||
					 approx > RPC_BATCH_SPLIT_BYTES)) {
			full = true;
			break;
		}
		approx += add_row(q, &err);
		if (err) {
			set_error(q, "out of memory");
			break;
		}
		step(q);
	}
	pz_begin_nested(qr, F_QR_BATCH, &batch);
	pz_begin_nested(&batch, F_BATCH_STRING_CELLS, &strings);
	pz_append_raw(&strings, bytes(&q->strings), q->strings.len);
	pz_end(&strings);
	if (q->types.len)
		pz_append_bytes(&batch, F_BATCH_CELLS, q->types.data, q->types.len);
	if (q->varints.len)
		pz_append_bytes(&batch, F_BATCH_VARINT_CELLS, q->varints.data, q->varints.len);
	if (q->doubles.len)
		write_doubles(&batch, &q->doubles);
	if (q->blobs.len)
		pz_append_raw(&batch, q->blobs.data, q->blobs.len);
	if (!full)
		pz_append_bool(&batch, F_BATCH_IS_LAST, true);
	pz_end(&batch);
	if (q->error)
		pz_append_string(qr, F_QR_ERROR, q->error);
	pz_append_double(qr, F_QR_ELAPSED_TIME_MS,
			 (double)(clock_monotonic_ns() - q->t_start) / 1e6);
	return full;
}

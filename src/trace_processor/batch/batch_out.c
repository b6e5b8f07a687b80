// SPDX-License-Identifier: Apache-2.0
/*
 * batch_out.c - appends pfc_batch_query's results, read back from the
 * workers' files, to a CSV file or a SQLite database (see batch_out.h).
 */
#include "trace_processor/batch/batch_out.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/buf.h"
#include "trace_processor/batch/batch_record.h"

/* What is known of the trace being written. */
struct trace_ctx {
	const char *path;
	struct batch_value meta[3];  /* start, end, machines */
	char run_at[32];
};

struct writer {
	/* Column names of @query's result (the C line before its rows). */
	int (*columns)(struct writer *w, const char *query, const struct batch_line *l);
	int (*row)(struct writer *w, const struct trace_ctx *t, const char *query, size_t row,
		   const struct batch_line *l);
	int (*error)(struct writer *w, const struct trace_ctx *t, const char *query, const char *msg);
	int (*finish)(struct writer *w);
};

/* ------------------------------------------------------------------ CSV -- */

struct csv_writer {
	struct writer w;
	FILE *f;
	struct batch_line cols; /* the current query's column names */
	char **names;
	size_t n_names;
};

static void csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void json_string(struct buf *b, const char *s)
{
	buf_append_byte(b, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			buf_appendf(b, "\\%c", c);
		else if (c < 0x20)
			buf_appendf(b, "\\u%04x", c);
		else
			buf_append_byte(b, c);
	}
	buf_append_byte(b, '"');
}

static void json_value(struct buf *b, const struct batch_value *v)
{
	switch (v->type) {
	case 'i':
		buf_append_str(b, v->text);
		break;
	case 'f':
		if (isfinite(strtod(v->text, NULL)))
			buf_append_str(b, v->text);
		else
			buf_append_str(b, "null");
		break;
	case 's':
	case 'b':
		json_string(b, v->text);
		break;
	default:
		buf_append_str(b, "null");
		break;
	}
}

static void csv_prefix(FILE *f, const struct trace_ctx *t, const char *query)
{
	csv_field(f, t->path);
	fputc(',', f);
	if (t->meta[0].type == 'i')
		fputs(t->meta[0].text, f);
	fputc(',', f);
	if (t->meta[1].type == 'i')
		fputs(t->meta[1].text, f);
	fputc(',', f);
	csv_field(f, t->meta[2].type == 's' ? t->meta[2].text : "");
	fputc(',', f);
	csv_field(f, t->run_at);
	fputc(',', f);
	csv_field(f, query ? query : "");
	fputc(',', f);
}

static int csv_columns(struct writer *w, const char *query, const struct batch_line *l)
{
	struct csv_writer *c = (struct csv_writer *)w;
	size_t i;

	(void)query;
	for (i = 0; i < c->n_names; i++)
		free(c->names[i]);
	free(c->names);
	c->n_names = 0;
	c->names = calloc(l->n ? l->n : 1, sizeof(*c->names));
	if (!c->names)
		return -1;
	for (i = 0; i < l->n; i++) {
		c->names[i] = strdup(l->v[i].text);
		if (!c->names[i])
			return -1;
		c->n_names++;
	}
	return 0;
}

static int csv_row(struct writer *w, const struct trace_ctx *t, const char *query, size_t row,
		   const struct batch_line *l)
{
	struct csv_writer *c = (struct csv_writer *)w;
	struct buf b = BUF_INIT;
	size_t i;

	if (l->n != c->n_names)
		return -1;
	buf_append_byte(&b, '{');
	for (i = 0; i < l->n; i++) {
		if (i)
			buf_append_str(&b, ", ");
		json_string(&b, c->names[i]);
		buf_append_str(&b, ": ");
		json_value(&b, &l->v[i]);
	}
	buf_append_byte(&b, '}');
	csv_prefix(c->f, t, query);
	fprintf(c->f, "%zu,", row);
	csv_field(c->f, buf_cstr(&b));
	fputs(",\n", c->f);
	buf_fini(&b);
	return 0;
}

static int csv_error(struct writer *w, const struct trace_ctx *t, const char *query, const char *msg)
{
	struct csv_writer *c = (struct csv_writer *)w;

	csv_prefix(c->f, t, query);
	fputs(",,", c->f);
	csv_field(c->f, msg);
	fputc('\n', c->f);
	return 0;
}

static int csv_finish(struct writer *w)
{
	struct csv_writer *c = (struct csv_writer *)w;
	size_t i;
	int rc = fclose(c->f) == 0 ? 0 : -1;

	for (i = 0; i < c->n_names; i++)
		free(c->names[i]);
	free(c->names);
	return rc;
}

static FILE *csv_open(const char *out)
{
	FILE *f = fopen(out, "ae");

	if (!f) {
		fprintf(stderr, "pfc_batch_query: cannot open %s: %s\n", out, strerror(errno));
		return NULL;
	}
	if (ftell(f) == 0)
		fputs("trace,trace_start_ns,trace_end_ns,machines,run_at,query,row,result,error\n", f);
	return f;
}

/* --------------------------------------------------------------- SQLite -- */

#define FIXED_COLS "trace, trace_start_ns, trace_end_ns, machines, run_at, row"

struct sqlite_writer {
	struct writer w;
	sqlite3 *db;
	sqlite3_stmt *insert;   /* for the current query's columns */
};

static int sql_exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		fprintf(stderr, "pfc_batch_query: %s\n", msg ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

static bool is_fixed_col(const char *name)
{
	static const char *const fixed[] = {"trace", "trace_start_ns", "trace_end_ns",
					    "machines", "run_at", "row"};
	size_t i;

	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		if (sqlite3_stricmp(name, fixed[i]) == 0)
			return true;
	}
	return false;
}

/* The table's column for result column @name: "q_" before a name the
 * table's own columns use. */
static char *column_name(const char *name)
{
	return is_fixed_col(name) ? sqlite3_mprintf("q_%s", name) : sqlite3_mprintf("%s", name);
}

static bool table_has_column(sqlite3 *db, const char *table, const char *col)
{
	char *sql = sqlite3_mprintf("SELECT 1 FROM pragma_table_info('%q') WHERE name = '%q' "
				    "COLLATE NOCASE", table, col);
	sqlite3_stmt *st = NULL;
	bool found = false;

	if (sql && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK)
		found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	sqlite3_free(sql);
	return found;
}

static int sqlite_columns(struct writer *w, const char *query, const struct batch_line *l)
{
	struct sqlite_writer *s = (struct sqlite_writer *)w;
	struct buf ins = BUF_INIT;
	char *sql;
	size_t i;
	int rc = -1;

	sqlite3_finalize(s->insert);
	s->insert = NULL;
	sql = sqlite3_mprintf("CREATE TABLE IF NOT EXISTS \"%w\"(trace TEXT, trace_start_ns INTEGER, "
			      "trace_end_ns INTEGER, machines TEXT, run_at TEXT, row INTEGER)", query);
	if (!sql || sql_exec(s->db, sql))
		goto out;
	buf_appendf(&ins, "INSERT INTO \"%s\"(" FIXED_COLS, query);
	for (i = 0; i < l->n; i++) {
		char *col = column_name(l->v[i].text);

		if (!col)
			goto out;
		if (!table_has_column(s->db, query, col)) {
			char *alter = sqlite3_mprintf("ALTER TABLE \"%w\" ADD COLUMN \"%w\"", query, col);

			if (!alter || sql_exec(s->db, alter)) {
				sqlite3_free(alter);
				sqlite3_free(col);
				goto out;
			}
			sqlite3_free(alter);
		}
		{
			char *q = sqlite3_mprintf(", \"%w\"", col);

			buf_append_str(&ins, q ? q : "");
			sqlite3_free(q);
		}
		sqlite3_free(col);
	}
	buf_append_str(&ins, ") VALUES (?, ?, ?, ?, ?, ?");
	for (i = 0; i < l->n; i++)
		buf_append_str(&ins, ", ?");
	buf_append_str(&ins, ")");
	if (sqlite3_prepare_v2(s->db, buf_cstr(&ins), -1, &s->insert, NULL) != SQLITE_OK) {
		fprintf(stderr, "pfc_batch_query: %s: %s\n", query, sqlite3_errmsg(s->db));
		goto out;
	}
	rc = 0;
out:
	sqlite3_free(sql);
	buf_fini(&ins);
	return rc;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static void bind_value(sqlite3_stmt *st, int idx, const struct batch_value *v)
{
	size_t n, i;
	unsigned char *blob;

	switch (v->type) {
	case 'i':
		sqlite3_bind_int64(st, idx, strtoll(v->text, NULL, 10));
		break;
	case 'f':
		sqlite3_bind_double(st, idx, strtod(v->text, NULL));
		break;
	case 's':
		sqlite3_bind_text(st, idx, v->text, -1, SQLITE_TRANSIENT);
		break;
	case 'b':
		n = strlen(v->text) / 2;
		blob = malloc(n ? n : 1);
		if (!blob) {
			sqlite3_bind_null(st, idx);
			break;
		}
		for (i = 0; i < n; i++) {
			int hi = hexval(v->text[2 * i]), lo = hexval(v->text[2 * i + 1]);

			blob[i] = (unsigned char)((hi < 0 ? 0 : hi) << 4 | (lo < 0 ? 0 : lo));
		}
		sqlite3_bind_blob(st, idx, blob, (int)n, free);
		break;
	default:
		sqlite3_bind_null(st, idx);
		break;
	}
}

static void bind_prefix(sqlite3_stmt *st, const struct trace_ctx *t)
{
	sqlite3_bind_text(st, 1, t->path, -1, SQLITE_TRANSIENT);
	bind_value(st, 2, &t->meta[0]);
	bind_value(st, 3, &t->meta[1]);
	bind_value(st, 4, &t->meta[2]);
	sqlite3_bind_text(st, 5, t->run_at, -1, SQLITE_TRANSIENT);
}

static int sqlite_row(struct writer *w, const struct trace_ctx *t, const char *query, size_t row,
		      const struct batch_line *l)
{
	struct sqlite_writer *s = (struct sqlite_writer *)w;
	size_t i;
	int rc;

	if (!s->insert || (size_t)sqlite3_bind_parameter_count(s->insert) != 6 + l->n)
		return -1;
	sqlite3_reset(s->insert);
	sqlite3_clear_bindings(s->insert);
	bind_prefix(s->insert, t);
	sqlite3_bind_int64(s->insert, 6, (sqlite3_int64)row);
	for (i = 0; i < l->n; i++)
		bind_value(s->insert, (int)(7 + i), &l->v[i]);
	rc = sqlite3_step(s->insert);
	if (rc != SQLITE_DONE) {
		fprintf(stderr, "pfc_batch_query: %s: %s\n", query, sqlite3_errmsg(s->db));
		return -1;
	}
	return 0;
}

static int sqlite_error(struct writer *w, const struct trace_ctx *t, const char *query,
			const char *msg)
{
	struct sqlite_writer *s = (struct sqlite_writer *)w;
	sqlite3_stmt *st = NULL;
	int rc = -1;

	if (sqlite3_prepare_v2(s->db, "INSERT INTO batch_errors(trace, trace_start_ns, trace_end_ns, "
				      "machines, run_at, query, error) VALUES (?, ?, ?, ?, ?, ?, ?)",
			       -1, &st, NULL) == SQLITE_OK) {
		bind_prefix(st, t);
		if (query)
			sqlite3_bind_text(st, 6, query, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 7, msg, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(st) == SQLITE_DONE)
			rc = 0;
	}
	sqlite3_finalize(st);
	return rc;
}

static int sqlite_finish(struct writer *w)
{
	struct sqlite_writer *s = (struct sqlite_writer *)w;
	int rc;

	sqlite3_finalize(s->insert);
	rc = sql_exec(s->db, "COMMIT");
	sqlite3_close(s->db);
	return rc;
}

static sqlite3 *sqlite_open(const char *out)
{
	sqlite3 *db = NULL;

	if (sqlite3_open_v2(out, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK) {
		fprintf(stderr, "pfc_batch_query: cannot open %s: %s\n", out,
			db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return NULL;
	}
	sqlite3_busy_timeout(db, 10000);
	if (sql_exec(db, "BEGIN IMMEDIATE") ||
	    sql_exec(db, "CREATE TABLE IF NOT EXISTS batch_errors(trace TEXT, trace_start_ns "
			 "INTEGER, trace_end_ns INTEGER, machines TEXT, run_at TEXT, query TEXT, "
			 "error TEXT)")) {
		fprintf(stderr, "pfc_batch_query: %s is not a usable SQLite database\n", out);
		sqlite3_close(db);
		return NULL;
	}
	return db;
}

/* ------------------------------------------------------------ the walk -- */

int batch_out_check(const char *out, const char *format)
{
	if (strcmp(format, "sqlite") == 0) {
		sqlite3 *db = sqlite_open(out);

		if (!db)
			return -1;
		sql_exec(db, "COMMIT");
		sqlite3_close(db);
		return 0;
	} else {
		FILE *f = csv_open(out);

		return f && fclose(f) == 0 ? 0 : -1;
	}
}

static void report(const struct trace_ctx *t, const char *query, const char *msg)
{
	if (query)
		fprintf(stderr, "pfc_batch_query: %s: %s: %s\n", t->path, query, msg);
	else
		fprintf(stderr, "pfc_batch_query: %s: %s\n", t->path, msg);
}

/* Writes one trace's results; returns -1 if it held a failure. */
static int write_trace(struct writer *w, struct trace_ctx *t, FILE *f, char *const *names,
		       size_t n_queries)
{
	struct batch_line l = {0};
	size_t row = 0, cur = (size_t)-1;
	bool have_meta = false, done = false;
	int rc = 0, r;

	while ((r = batch_record_next(f, &l)) == 1) {
		const char *q = strchr("MXZ", l.kind) ? NULL :
				l.query < n_queries ? names[l.query] : NULL;

		if (done || (!strchr("MXZ", l.kind) && !q)) {
			r = -1;
			break;
		}
		switch (l.kind) {
		case 'M':
			if (have_meta) {
				r = -1;
				goto out;
			}
			/* Keep the strings: the next read reuses the line. */
			for (size_t i = 0; i < 3; i++) {
				t->meta[i].type = l.v[i].type;
				t->meta[i].text = strdup(l.v[i].text);
			}
			have_meta = true;
			break;
		case 'X':
			report(t, NULL, l.msg);
			w->error(w, t, NULL, l.msg);
			rc = -1;
			break;
		case 'C':
			if (!have_meta || w->columns(w, q, &l)) {
				r = -1;
				goto out;
			}
			cur = l.query;
			row = 0;
			break;
		case 'R':
			if (l.query != cur || w->row(w, t, q, row++, &l)) {
				r = -1;
				goto out;
			}
			break;
		case 'Z':
			done = true;
			break;
		case 'E':
			report(t, q, l.msg);
			w->error(w, t, q, l.msg);
			rc = -1;
			break;
		}
	}
out:
	if (r == 0 && !done)
		r = -1;
	if (r < 0) {
		report(t, NULL, "its results are damaged (did its worker die?)");
		w->error(w, t, NULL, "results damaged");
		rc = -1;
	}
	batch_line_fini(&l);
	return rc;
}

int batch_out_write(const char *out, const char *format, const char *dir, char *const *traces,
		    size_t n_traces, char *const *queries, size_t n_queries)
{
	struct csv_writer csv = {{NULL, NULL, NULL, NULL}, NULL, {0}, NULL, 0};
	struct sqlite_writer sq = {{NULL, NULL, NULL, NULL}, NULL, NULL};
	struct writer *w;
	char **names;
	time_t now = time(NULL);
	struct tm tm;
	size_t i;
	int rc = 0;

	names = calloc(n_queries ? n_queries : 1, sizeof(*names));
	if (!names)
		return -1;
	for (i = 0; i < n_queries; i++) {
		const char *base = strrchr(queries[i], '/');
		size_t n;

		base = base ? base + 1 : queries[i];
		n = strlen(base);
		if (n > 4 && strcmp(base + n - 4, ".sql") == 0)
			n -= 4;
		names[i] = strndup(base, n);
		if (!names[i]) {
			rc = -1;
			goto out;
		}
	}
	if (strcmp(format, "sqlite") == 0) {
		sq.db = sqlite_open(out);
		if (!sq.db) {
			rc = -1;
			goto out;
		}
		sq.w = (struct writer){sqlite_columns, sqlite_row, sqlite_error, sqlite_finish};
		w = &sq.w;
	} else {
		csv.f = csv_open(out);
		if (!csv.f) {
			rc = -1;
			goto out;
		}
		csv.w = (struct writer){csv_columns, csv_row, csv_error, csv_finish};
		w = &csv.w;
	}
	gmtime_r(&now, &tm);
	for (i = 0; i < n_traces; i++) {
		struct trace_ctx t = {.path = traces[i], .meta = {{'n', NULL}, {'n', NULL}, {'n', NULL}}};
		char path[4096];
		FILE *f;
		size_t k;

		strftime(t.run_at, sizeof(t.run_at), "%Y-%m-%dT%H:%M:%SZ", &tm);
		snprintf(path, sizeof(path), "%s/%zu", dir, i);
		f = fopen(path, "re");
		if (!f) {
			report(&t, NULL, "no results (its worker died)");
			w->error(w, &t, NULL, "no results");
			rc = -1;
			continue;
		}
		if (write_trace(w, &t, f, names, n_queries))
			rc = -1;
		fclose(f);
		for (k = 0; k < 3; k++)
			free(t.meta[k].text);
	}
	if (w->finish(w)) {
		fprintf(stderr, "pfc_batch_query: writing %s failed\n", out);
		rc = -1;
	}
out:
	for (i = 0; i < n_queries; i++)
		free(names[i]);
	free(names);
	return rc;
}

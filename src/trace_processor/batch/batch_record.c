// SPDX-License-Identifier: Apache-2.0
/*
 * batch_record.c - writes and reads the per-trace result files of
 * pfc_batch_query (format in batch_record.h).
 */
#include "trace_processor/batch/batch_record.h"

#include <errno.h>
#include <stdbool.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

static void put_escaped(FILE *f, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		switch (s[i]) {
		case '\t': fputs("\\t", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\\': fputs("\\\\", f); break;
		default: fputc(s[i], f); break;
		}
	}
}

static void put_value(FILE *f, struct sqlite3_stmt *st, int col)
{
	const unsigned char *p;
	int i, n;

	fputc('\t', f);
	switch (sqlite3_column_type(st, col)) {
	case SQLITE_INTEGER:
		fprintf(f, "i%lld", (long long)sqlite3_column_int64(st, col));
		break;
	case SQLITE_FLOAT:
		fprintf(f, "f%.17g", sqlite3_column_double(st, col));
		break;
	case SQLITE_TEXT:
		p = sqlite3_column_text(st, col);
		n = sqlite3_column_bytes(st, col);
		fputc('s', f);
		put_escaped(f, (const char *)p, (size_t)n);
		break;
	case SQLITE_BLOB:
		p = sqlite3_column_blob(st, col);
		n = sqlite3_column_bytes(st, col);
		fputc('b', f);
		for (i = 0; i < n; i++)
			fprintf(f, "%02x", p[i]);
		break;
	default:
		fputc('n', f);
		break;
	}
}

void batch_record_meta(FILE *f, struct sqlite3_stmt *st)
{
	fputc('M', f);
	put_value(f, st, 0);
	put_value(f, st, 1);
	put_value(f, st, 2);
	fputc('\n', f);
}

void batch_record_failed(FILE *f, const char *msg)
{
	fputs("X\t", f);
	put_escaped(f, msg, strlen(msg));
	fputc('\n', f);
}

void batch_record_columns(FILE *f, size_t query, struct sqlite3_stmt *st)
{
	int i, n = sqlite3_column_count(st);

	fprintf(f, "C\t%zu", query);
	for (i = 0; i < n; i++) {
		const char *name = sqlite3_column_name(st, i);

		fputc('\t', f);
		put_escaped(f, name ? name : "", name ? strlen(name) : 0);
	}
	fputc('\n', f);
}

void batch_record_row(FILE *f, size_t query, struct sqlite3_stmt *st)
{
	int i, n = sqlite3_column_count(st);

	fprintf(f, "R\t%zu", query);
	for (i = 0; i < n; i++)
		put_value(f, st, i);
	fputc('\n', f);
}

void batch_record_error(FILE *f, size_t query, const char *msg)
{
	fprintf(f, "E\t%zu\t", query);
	put_escaped(f, msg, strlen(msg));
	fputc('\n', f);
}

void batch_record_done(FILE *f)
{
	fputs("Z\t\n", f);
}

/* Unescapes @s in place; returns -1 on a dangling or unknown escape. */
static int unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (*s != '\\') {
			*w++ = *s;
			continue;
		}
		switch (*++s) {
		case 't': *w++ = '\t'; break;
		case 'n': *w++ = '\n'; break;
		case 'r': *w++ = '\r'; break;
		case '\\': *w++ = '\\'; break;
		default: return -1;
		}
	}
	*w = '\0';
	return 0;
}

static int push_field(struct batch_line *l, char *field, bool typed)
{
	if (l->n == l->v_cap) {
		size_t cap = l->v_cap ? 2 * l->v_cap : 16;
		struct batch_value *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -1;
		l->v = v;
		l->v_cap = cap;
	}
	if (typed) {
		if (!strchr("nifsb", field[0]) || field[0] == '\0')
			return -1;
		l->v[l->n].type = field[0];
		field++;
	} else {
		l->v[l->n].type = 's';
	}
	if (unescape(field))
		return -1;
	l->v[l->n++].text = field;
	return 0;
}

static int parse_query_index(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end)
		return -1;
	*out = (size_t)v;
	return 0;
}

int batch_record_next(FILE *f, struct batch_line *l)
{
	ssize_t len = getline(&l->raw, &l->raw_cap, f);
	char *fields, *tab, *p;
	size_t i = 0;

	l->n = 0;
	l->msg = NULL;
	if (len < 0)
		return 0;
	if (len < 2 || l->raw[len - 1] != '\n' || l->raw[1] != '\t')
		return -1;
	l->raw[len - 1] = '\0';
	l->kind = l->raw[0];
	fields = l->raw + 2;
	if (l->kind == 'Z')
		return *fields ? -1 : 1;
	if (l->kind == 'X') {
		l->msg = fields;
		return unescape(l->msg) ? -1 : 1;
	}
	if (!strchr("MCRE", l->kind))
		return -1;
	for (p = fields;; p = tab + 1, i++) {
		tab = strchr(p, '\t');
		if (tab)
			*tab = '\0';
		if (l->kind != 'M' && i == 0) {
			if (parse_query_index(p, &l->query))
				return -1;
		} else if (l->kind == 'E') {
			l->msg = p;
			if (tab)
				*tab = '\t'; /* the message is the rest of the line */
			return unescape(l->msg) ? -1 : 1;
		} else if (push_field(l, p, l->kind != 'C')) {
			return -1;
		}
		if (!tab)
			break;
	}
	if (l->kind == 'M' && l->n != 3)
		return -1;
	if (l->kind == 'E')
		return -1;
	return 1;
}

void batch_line_fini(struct batch_line *l)
{
	free(l->raw);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

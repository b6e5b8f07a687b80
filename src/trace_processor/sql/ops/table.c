// SPDX-License-Identifier: Apache-2.0
/*
 * table.c - the in-memory table of sql/ops/ (struct ops_table): named
 * columns of cells a built-in fills row by row, then hands to SQLite as a
 * TABLE pointer or serves from a table function. Text is borrowed from the
 * trace's string pool or copied into an arena of the table. Also the small
 * helpers every family uses (errors, growing arrays).
 */
#include "trace_processor/sql/ops/ops_int.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/storage/storage.h"

/* Text copies go into blocks of at least this many bytes, never moved. */
#define ARENA_BLOCK_BYTES 16384

struct ops_arena_block {
	struct ops_arena_block *next;
	size_t used, cap;
	char data[];
};

int ops_grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2 / size)
			return -ENOMEM;
		n *= 2;
	}
	q = realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

void ops_error(sqlite3_context *ctx, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = sqlite3_vmprintf(fmt, ap);
	va_end(ap);
	if (!msg) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	sqlite3_result_error(ctx, msg, -1);
	sqlite3_free(msg);
}

struct ops_table *ops_table_create(uint32_t n_cols, const char *const *names)
{
	struct ops_table *t = calloc(1, sizeof(*t));
	uint32_t i;

	if (!t)
		return NULL;
	t->n_cols = n_cols;
	t->names = calloc(n_cols ? n_cols : 1, sizeof(*t->names));
	t->cols = calloc(n_cols ? n_cols : 1, sizeof(*t->cols));
	if (!t->names || !t->cols)
		goto fail;
	for (i = 0; names && i < n_cols; i++) {
		if (!names[i])
			continue;
		t->names[i] = strdup(names[i]);
		if (!t->names[i])
			goto fail;
	}
	return t;
fail:
	ops_table_destroy(t);
	return NULL;
}

void ops_table_destroy(void *p)
{
	struct ops_table *t = p;
	struct ops_arena_block *b, *next;
	uint32_t i;

	if (!t)
		return;
	for (i = 0; i < t->n_cols; i++) {
		if (t->names)
			free(t->names[i]);
		if (t->cols)
			free(t->cols[i]);
	}
	free(t->names);
	free(t->cols);
	for (i = 0; i < t->n_aliases; i++)
		free(t->alias_names[i]);
	free(t->alias_names);
	free(t->alias_cols);
	for (b = t->text; b; b = next) {
		next = b->next;
		free(b);
	}
	free(t);
}

void ops_table_clear(struct ops_table *t)
{
	struct ops_arena_block *b;

	t->n_rows = 0;
	for (b = t->text; b; b = b->next)
		b->used = 0;
}

int ops_table_reserve(struct ops_table *t, size_t n)
{
	size_t cap = t->cap ? t->cap : 16;
	uint32_t i;

	if (n <= t->cap)
		return 0;
	while (cap < n) {
		if (cap > SIZE_MAX / 2 / sizeof(struct ops_cell))
			return -ENOMEM;
		cap *= 2;
	}
	for (i = 0; i < t->n_cols; i++) {
		struct ops_cell *c = realloc(t->cols[i], cap * sizeof(*c));

		if (!c)
			return -ENOMEM;
		t->cols[i] = c;
	}
	t->cap = cap;
	return 0;
}

int64_t ops_table_append(struct ops_table *t)
{
	size_t r = t->n_rows;
	uint32_t i;

	if (r == t->cap && ops_table_reserve(t, r + 1) < 0)
		return -ENOMEM;
	for (i = 0; i < t->n_cols; i++)
		t->cols[i][r].type = OPS_NULL;
	t->n_rows++;
	return (int64_t)r;
}

int ops_table_alias(struct ops_table *t, const char *name, uint32_t col)
{
	char **names = realloc(t->alias_names, (t->n_aliases + 1) * sizeof(*names));
	uint32_t *cols;

	if (!names)
		return -ENOMEM;
	t->alias_names = names;
	cols = realloc(t->alias_cols, (t->n_aliases + 1) * sizeof(*cols));
	if (!cols)
		return -ENOMEM;
	t->alias_cols = cols;
	names[t->n_aliases] = strdup(name);
	if (!names[t->n_aliases])
		return -ENOMEM;
	cols[t->n_aliases++] = col;
	return 0;
}

int ops_table_find(const struct ops_table *t, const char *name)
{
	uint32_t i;

	for (i = 0; i < t->n_cols; i++) {
		if (t->names[i] && strcmp(t->names[i], name) == 0)
			return (int)i;
	}
	for (i = 0; i < t->n_aliases; i++) {
		if (strcmp(t->alias_names[i], name) == 0)
			return (int)t->alias_cols[i];
	}
	return -1;
}

const char *ops_table_strdup(struct ops_table *t, const char *s, size_t len)
{
	struct ops_arena_block *b;
	char *out;

	/* A cleared table reuses its blocks from the first one with room. */
	for (b = t->text; b; b = b->next) {
		if (b->cap - b->used > len)
			break;
	}
	if (!b) {
		size_t cap = len + 1 > ARENA_BLOCK_BYTES ? len + 1 : ARENA_BLOCK_BYTES;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->used = 0;
		b->cap = cap;
		b->next = t->text;
		t->text = b;
	}
	out = b->data + b->used;
	memcpy(out, s, len);
	out[len] = '\0';
	b->used += len + 1;
	return out;
}

void ops_set_int_or_null(struct ops_table *t, uint32_t c, size_t r, int64_t v)
{
	if (v == TP_NULL_INT)
		ops_set_null(t, c, r);
	else
		ops_set_int(t, c, r, v);
}

int ops_set_text(struct ops_table *t, uint32_t c, size_t r, const char *s, size_t len)
{
	const char *copy = ops_table_strdup(t, s, len);

	if (!copy)
		return -ENOMEM;
	ops_set_static_text(t, c, r, copy);
	return 0;
}

int ops_set_value(struct ops_table *t, uint32_t c, size_t r, sqlite3_value *v)
{
	switch (sqlite3_value_type(v)) {
	case SQLITE_INTEGER:
		ops_set_int(t, c, r, sqlite3_value_int64(v));
		return 0;
	case SQLITE_FLOAT:
		ops_set_real(t, c, r, sqlite3_value_double(v));
		return 0;
	case SQLITE_TEXT: {
		const char *s = (const char *)sqlite3_value_text(v);

		if (!s)
			return -ENOMEM;
		return ops_set_text(t, c, r, s, (size_t)sqlite3_value_bytes(v));
	}
	default:
		ops_set_null(t, c, r);
		return 0;
	}
}

int ops_set_cell(struct ops_table *t, uint32_t c, size_t r, const struct ops_cell *cell)
{
	if (cell->type == OPS_TEXT)
		return ops_set_text(t, c, r, cell->u.s, strlen(cell->u.s));
	t->cols[c][r] = *cell;
	return 0;
}

void ops_cell_result(sqlite3_context *ctx, const struct ops_cell *cell)
{
	switch (cell->type) {
	case OPS_INT:
		sqlite3_result_int64(ctx, cell->u.i);
		break;
	case OPS_REAL:
		sqlite3_result_double(ctx, cell->u.d);
		break;
	case OPS_TEXT:
		sqlite3_result_text(ctx, cell->u.s, -1, SQLITE_STATIC);
		break;
	default:
		sqlite3_result_null(ctx);
		break;
	}
}

void ops_table_result(sqlite3_context *ctx, struct ops_table *t)
{
	sqlite3_result_pointer(ctx, t, OPS_PTR_TABLE, ops_table_destroy);
}

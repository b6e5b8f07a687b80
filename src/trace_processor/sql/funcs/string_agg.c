// SPDX-License-Identifier: Apache-2.0
/*
 * string_agg.c - STRING_AGG(value, separator), the aggregate and window
 * function SQLite has from 3.44 on (Debian 12's 3.40 lacks it) and
 * Perfetto's engine, built on a newer SQLite, offers: the non-NULL
 * values as text, in the order they come, each after the first preceded
 * by the separator given with it (a NULL separator is empty). NULL when
 * there is no non-NULL value. As a window function the frame's start may
 * move: the value that leaves is the oldest one, and the separator that
 * came with the next one goes with it.
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/sql/funcs/funcs_int.h"

/* One value with the separator that came before it. */
struct sa_item {
	char *sep;
	char *val;
	size_t sep_len;
	size_t val_len;
};

/* In SQLite's aggregate context: zeroed on first use, never moved. */
struct sa_state {
	struct sa_item *items;
	size_t first; /* items[first..n) are in the frame */
	size_t n;
	size_t cap;
};

static char *dup_bytes(const unsigned char *s, size_t len)
{
	char *d = malloc(len + 1);

	if (d) {
		if (len)
			memcpy(d, s, len);
		d[len] = '\0';
	}
	return d;
}

static void sa_free_items(struct sa_state *st)
{
	size_t i;

	for (i = st->first; i < st->n; i++) {
		free(st->items[i].sep);
		free(st->items[i].val);
	}
	free(st->items);
	st->items = NULL;
	st->first = st->n = st->cap = 0;
}

static void sa_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct sa_state *st = sqlite3_aggregate_context(ctx, sizeof(*st));
	const unsigned char *v, *s;
	struct sa_item it;

	(void)argc;
	if (!st) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
		return;
	if (st->first > 0 && st->first == st->n)
		st->first = st->n = 0; /* the frame emptied: reuse the array */
	if (st->n == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 16;
		struct sa_item *items;

		/* Drop what left the frame before growing. */
		if (st->first > 0) {
			memmove(st->items, st->items + st->first,
				(st->n - st->first) * sizeof(*st->items));
			st->n -= st->first;
			st->first = 0;
		}
		if (st->n == st->cap) {
			items = realloc(st->items, cap * sizeof(*items));
			if (!items) {
				sqlite3_result_error_nomem(ctx);
				return;
			}
			st->items = items;
			st->cap = cap;
		}
	}
	v = sqlite3_value_text(argv[0]);
	it.val_len = (size_t)sqlite3_value_bytes(argv[0]);
	s = sqlite3_value_text(argv[1]);
	it.sep_len = s ? (size_t)sqlite3_value_bytes(argv[1]) : 0;
	it.val = dup_bytes(v ? v : (const unsigned char *)"", v ? it.val_len : 0);
	it.sep = dup_bytes(s ? s : (const unsigned char *)"", it.sep_len);
	if (!it.val || !it.sep) {
		free(it.val);
		free(it.sep);
		sqlite3_result_error_nomem(ctx);
		return;
	}
	st->items[st->n++] = it;
}

static void sa_inverse(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct sa_state *st = sqlite3_aggregate_context(ctx, 0);

	(void)argc;
	if (!st || sqlite3_value_type(argv[0]) == SQLITE_NULL || st->first >= st->n)
		return;
	free(st->items[st->first].sep);
	free(st->items[st->first].val);
	st->first++;
}

static void sa_result(sqlite3_context *ctx, struct sa_state *st)
{
	size_t i, len = 0;
	char *out, *p;

	if (!st || st->first >= st->n) {
		sqlite3_result_null(ctx);
		return;
	}
	for (i = st->first; i < st->n; i++)
		len += st->items[i].val_len + (i > st->first ? st->items[i].sep_len : 0);
	if (len > INT32_MAX) {
		sqlite3_result_error_toobig(ctx);
		return;
	}
	out = malloc(len + 1);
	if (!out) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	p = out;
	for (i = st->first; i < st->n; i++) {
		if (i > st->first && st->items[i].sep_len) {
			memcpy(p, st->items[i].sep, st->items[i].sep_len);
			p += st->items[i].sep_len;
		}
		if (st->items[i].val_len) {
			memcpy(p, st->items[i].val, st->items[i].val_len);
			p += st->items[i].val_len;
		}
	}
	*p = '\0';
	sqlite3_result_text(ctx, out, (int)len, free);
}

static void sa_value(sqlite3_context *ctx)
{
	sa_result(ctx, sqlite3_aggregate_context(ctx, 0));
}

static void sa_final(sqlite3_context *ctx)
{
	struct sa_state *st = sqlite3_aggregate_context(ctx, 0);

	sa_result(ctx, st);
	if (st)
		sa_free_items(st);
}

int tp_sql_add_string_agg(struct sqlite3 *conn)
{
	/* Only where SQLite lacks it: a newer one's own is the same. */
	if (sqlite3_libversion_number() >= 3044000)
		return SQLITE_OK;
	return sqlite3_create_window_function(conn, "string_agg", 2, SQLITE_UTF8, NULL, sa_step,
					      sa_final, sa_value, sa_inverse, NULL);
}

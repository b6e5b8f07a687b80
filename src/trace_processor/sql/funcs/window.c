// SPDX-License-Identifier: Apache-2.0
/*
 * window.c - Perfetto's window functions (funcs_int.h):
 *   LAST_NON_NULL(x): the last non-NULL x of the window frame, any frame
 *     (the frame's start leaving drops a value that falls out of it);
 *   INTERNAL_LAYOUT(ts, dur): the depth at which to draw the current
 *     slice so it overlaps none drawn before it (lowest free depth; a
 *     slice of dur -1 never ends, one of dur 0 frees its depth at once),
 *     over "ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
 *     only, with upstream's messages when the window is another.
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/sql/funcs/funcs_int.h"

/* ----------------------------------------------------------- LAST_NON_NULL ---- */

/* In SQLite's aggregate context: zeroed on first use, never moved. */
struct last_non_null {
	int64_t window; /* rows in the frame */
	int64_t at;     /* index in the frame of @value */
	sqlite3_value *value;
};

static void lnn_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct last_non_null *s = sqlite3_aggregate_context(ctx, sizeof(*s));

	(void)argc;
	if (!s) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	s->window++;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
		return;
	sqlite3_value_free(s->value);
	s->value = sqlite3_value_dup(argv[0]);
	if (!s->value)
		sqlite3_result_error_nomem(ctx);
	s->at = s->window - 1;
}

static void lnn_inverse(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct last_non_null *s = sqlite3_aggregate_context(ctx, sizeof(*s));

	(void)argc;
	(void)argv;
	if (!s || s->window == 0)
		return;
	s->window--;
	if (!s->value)
		return;
	if (s->at == 0) {
		sqlite3_value_free(s->value);
		s->value = NULL;
		return;
	}
	s->at--;
}

static void lnn_value(sqlite3_context *ctx)
{
	struct last_non_null *s = sqlite3_aggregate_context(ctx, 0);

	if (s && s->value)
		sqlite3_result_value(ctx, s->value);
	else
		sqlite3_result_null(ctx);
}

static void lnn_final(sqlite3_context *ctx)
{
	struct last_non_null *s = sqlite3_aggregate_context(ctx, 0);

	lnn_value(ctx);
	if (s) {
		sqlite3_value_free(s->value);
		s->value = NULL;
	}
}

/* --------------------------------------------------------- INTERNAL_LAYOUT ---- */

struct slice_end {
	int64_t ts;
	size_t depth;
};

struct packer {
	bool *busy; /* per depth */
	size_t n_depths, cap_depths;
	struct slice_end *ends; /* a min-heap by ts */
	size_t n_ends, cap_ends;
	bool last_was_step;
	int64_t last_ts;
	size_t last_depth;
};

static void packer_free(struct packer *p)
{
	free(p->busy);
	free(p->ends);
	free(p);
}

static void heap_push(struct packer *p, struct slice_end e)
{
	size_t i = p->n_ends++;

	while (i > 0 && p->ends[(i - 1) / 2].ts > e.ts) {
		p->ends[i] = p->ends[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	p->ends[i] = e;
}

static void heap_pop(struct packer *p)
{
	struct slice_end last = p->ends[--p->n_ends];
	size_t i = 0, c;

	for (;;) {
		c = 2 * i + 1;
		if (c >= p->n_ends)
			break;
		if (c + 1 < p->n_ends && p->ends[c + 1].ts < p->ends[c].ts)
			c++;
		if (p->ends[c].ts >= last.ts)
			break;
		p->ends[i] = p->ends[c];
		i = c;
	}
	if (p->n_ends)
		p->ends[i] = last;
}

/* Places a slice; the depth is p->last_depth. Return: 0 or -ENOMEM. */
static int packer_add(struct packer *p, int64_t ts, int64_t dur)
{
	size_t d;

	while (p->n_ends && p->ends[0].ts <= ts) {
		p->busy[p->ends[0].depth] = false;
		heap_pop(p);
	}
	for (d = 0; d < p->n_depths && p->busy[d]; d++)
		;
	if (d == p->n_depths) {
		if (p->n_depths == p->cap_depths) {
			size_t cap = p->cap_depths ? p->cap_depths * 2 : 16;
			bool *v = realloc(p->busy, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			p->busy = v;
			p->cap_depths = cap;
		}
		p->n_depths++;
	}
	/* An instant leaves its depth free at once. */
	p->busy[d] = dur != 0;
	if (dur != 0) {
		if (p->n_ends == p->cap_ends) {
			size_t cap = p->cap_ends ? p->cap_ends * 2 : 16;
			struct slice_end *v = realloc(p->ends, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			p->ends = v;
			p->cap_ends = cap;
		}
		heap_push(p, (struct slice_end){dur == -1 ? INT64_MAX : ts + dur, d});
	}
	p->last_depth = d;
	return 0;
}

static struct packer *packer_get(sqlite3_context *ctx, bool create)
{
	struct packer **pp = sqlite3_aggregate_context(ctx, create ? sizeof(*pp) : 0);

	if (!pp)
		return NULL;
	if (!*pp && create)
		*pp = calloc(1, sizeof(**pp));
	return *pp;
}

static void layout_error(sqlite3_context *ctx, const char *why)
{
	char *msg = sqlite3_mprintf("INTERNAL_LAYOUT: %s", why);

	sqlite3_result_error(ctx, msg ? msg : "out of memory", -1);
	sqlite3_free(msg);
}

/* An integer argument, as Perfetto's ExtractArgument checks it. */
static bool int_arg(sqlite3_context *ctx, sqlite3_value *v, const char *name, int idx,
		    int64_t *out)
{
	static const char *const k_types[] = {"", "LONG", "DOUBLE", "STRING", "BYTES", "NULL"};

	if (sqlite3_value_type(v) != SQLITE_INTEGER) {
		char *msg = sqlite3_mprintf("argument %s at index %d: expected value of type LONG "
					    "but got %s",
					    name, idx, k_types[sqlite3_value_type(v)]);

		layout_error(ctx, msg ? msg : "out of memory");
		sqlite3_free(msg);
		return false;
	}
	*out = sqlite3_value_int64(v);
	return true;
}

static void layout_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct packer *p = packer_get(ctx, true);
	int64_t ts, dur;

	(void)argc;
	if (!p) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	if (!int_arg(ctx, argv[0], "ts", 0, &ts))
		return;
	if (ts < 0) {
		layout_error(ctx, "ts cannot be negative.");
		return;
	}
	if (!int_arg(ctx, argv[1], "dur", 1, &dur))
		return;
	if (dur < -1) {
		layout_error(ctx, "dur cannot be < -1.");
		return;
	}
	if (p->last_was_step) {
		layout_error(ctx, "\nIncorrect window clause (observed two consecutive calls to "
				  "\"step\" function).\nThe window clause should be \"rows between "
				  "unbounded preceding and current row\".\n");
		return;
	}
	p->last_was_step = true;
	if (ts < p->last_ts) {
		layout_error(ctx, "\nPassed slices are in incorrect order: INTERNAL_LAYOUT requires "
				  "timestamps to be sorted.\nPlease specify \"ORDER BY ts\" in the "
				  "window clause.\n");
		return;
	}
	p->last_ts = ts;
	if (packer_add(p, ts, dur) < 0)
		sqlite3_result_error_nomem(ctx);
}

static void layout_inverse(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	(void)argv;
	layout_error(ctx, "\nThe inverse step is not supported: the window clause should be\n"
			  "\"BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW\".\n");
}

static void layout_value(sqlite3_context *ctx)
{
	struct packer *p = packer_get(ctx, true);

	if (!p) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	p->last_was_step = false;
	sqlite3_result_int64(ctx, (sqlite3_int64)p->last_depth);
}

static void layout_final(sqlite3_context *ctx)
{
	struct packer *p = packer_get(ctx, false);

	if (!p)
		return;
	sqlite3_result_int64(ctx, (sqlite3_int64)p->last_depth);
	packer_free(p);
}

int tp_sql_add_window(struct sqlite3 *conn)
{
	int rc = sqlite3_create_window_function(conn, "last_non_null", 1, SQLITE_UTF8, NULL,
						lnn_step, lnn_final, lnn_value, lnn_inverse, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_create_window_function(conn, "internal_layout", 2, SQLITE_UTF8, NULL,
						    layout_step, layout_final, layout_value,
						    layout_inverse, NULL);
	return rc;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * clock.c - the clock conversion built-ins: to_monotonic(ts),
 * to_realtime(ts), abs_time_str(ts) and to_timecode(ts), with their
 * __intrinsic_ names. A trace timestamp is converted through the
 * clock_snapshot rows of the target clock (MONOTONIC 3, REALTIME 1), as
 * upstream's converter does: at a snapshot its value; between two, the
 * earlier one plus the time since it, but never past the later one's
 * value; before the first, the first's value; after the last, the last
 * plus the time since it. NULL when the trace has no snapshot of the
 * clock; an error for a non-integer argument.
 */
#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/sort.h"
#include "trace_processor/sql/ops/ops_int.h"
#include "trace_processor/storage/storage.h"

#define CLOCK_REALTIME_ID 1
#define CLOCK_MONOTONIC_ID 3
#define NS_PER_S INT64_C(1000000000)

/* One clock's (trace ts -> clock value) points, by ts, first of equal ts kept. */
struct timeline {
	int64_t *ts, *val;
	size_t n;
};

struct clock_conv {
	struct tp_db *db;
	bool is_built;
	uint64_t generation; /* of clock_snapshot when built */
	size_t n_rows;
	struct timeline real, mono;
};

static void timeline_fini(struct timeline *t)
{
	free(t->ts);
	free(t->val);
	memset(t, 0, sizeof(*t));
}

static int cmp_pair(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	/* Equal ts: the earlier row first (x[2] is the row). */
	return x[2] < y[2] ? -1 : x[2] > y[2];
}

/* The points of clock @clock_id out of clock_snapshot. 0 or -ENOMEM. */
static int timeline_build(const struct tp_table *cs, int64_t clock_id, struct timeline *out)
{
	int64_t *tmp;
	size_t r, n = 0, k;

	memset(out, 0, sizeof(*out));
	if (cs->n_rows == 0)
		return 0;
	tmp = malloc(cs->n_rows * 3 * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	for (r = 0; r < cs->n_rows; r++) {
		if (tp_get_int(cs, CLOCKS_CLOCK_ID, r) != clock_id)
			continue;
		tmp[n * 3] = tp_get_int(cs, CLOCKS_TS, r);
		tmp[n * 3 + 1] = tp_get_int(cs, CLOCKS_CLOCK_VALUE, r);
		tmp[n * 3 + 2] = (int64_t)r;
		n++;
	}
	if (n == 0) {
		free(tmp);
		return 0;
	}
	sort_n(tmp, n, 3 * sizeof(*tmp), cmp_pair);
	out->ts = malloc(n * sizeof(*out->ts));
	out->val = malloc(n * sizeof(*out->val));
	if (!out->ts || !out->val) {
		free(tmp);
		timeline_fini(out);
		return -ENOMEM;
	}
	for (r = 0, k = 0; r < n; r++) {
		if (k && out->ts[k - 1] == tmp[r * 3])
			continue;
		out->ts[k] = tmp[r * 3];
		out->val[k] = tmp[r * 3 + 1];
		k++;
	}
	out->n = k;
	free(tmp);
	return 0;
}

/* Builds (again, if clock_snapshot changed) the two timelines. 0 or -ENOMEM. */
static int conv_ready(struct clock_conv *c)
{
	const struct tp_table *cs = &c->db->clock_snapshot;
	int rc;

	if (c->is_built && c->generation == cs->generation && c->n_rows == cs->n_rows)
		return 0;
	timeline_fini(&c->real);
	timeline_fini(&c->mono);
	c->is_built = false;
	rc = timeline_build(cs, CLOCK_REALTIME_ID, &c->real);
	if (rc == 0)
		rc = timeline_build(cs, CLOCK_MONOTONIC_ID, &c->mono);
	if (rc < 0)
		return rc;
	c->is_built = true;
	c->generation = cs->generation;
	c->n_rows = cs->n_rows;
	return 0;
}

/* @ts in clock @t. Return: 0, or -ENOENT when the clock has no point. */
static int convert(const struct timeline *t, int64_t ts, int64_t *out)
{
	size_t lo = 0, hi = t->n;
	uint64_t v;

	if (t->n == 0)
		return -ENOENT;
	while (lo < hi) { /* first point with ts >= @ts */
		size_t mid = lo + (hi - lo) / 2;

		if (t->ts[mid] < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == t->n) {
		v = (uint64_t)t->val[t->n - 1] + (uint64_t)ts - (uint64_t)t->ts[t->n - 1];
		*out = (int64_t)v;
		return 0;
	}
	if (lo == 0 || t->ts[lo] == ts) {
		*out = t->val[lo];
		return 0;
	}
	v = (uint64_t)t->val[lo - 1] + (uint64_t)ts - (uint64_t)t->ts[lo - 1];
	*out = (int64_t)v < t->val[lo] ? (int64_t)v : t->val[lo];
	return 0;
}

enum clock_fn { FN_MONO, FN_REAL, FN_ABS };

static const char *const k_err_name[] = {"TO_MONOTONIC", "TO_REALTIME", "ABS_TIME_STR"};

static void clock_fn(sqlite3_context *ctx, sqlite3_value **argv, enum clock_fn fn)
{
	struct clock_conv *c = sqlite3_user_data(ctx);
	int64_t v;
	int rc;

	switch (sqlite3_value_type(argv[0])) {
	case SQLITE_NULL:
		return;
	case SQLITE_INTEGER:
		break;
	default:
		ops_error(ctx, "%s: first argument should be timestamp", k_err_name[fn]);
		return;
	}
	rc = conv_ready(c);
	if (rc < 0) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	if (convert(fn == FN_MONO ? &c->mono : &c->real, sqlite3_value_int64(argv[0]), &v) < 0)
		return; /* NULL: one bad timestamp does not stop the query */
	if (fn == FN_ABS) {
		time_t s = (time_t)(v / NS_PER_S);
		int64_t ns = v % NS_PER_S;
		struct tm tm;
		char buf[80];

		if (!gmtime_r(&s, &tm))
			return;
		snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%09" PRId64,
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			 tm.tm_sec, ns);
		sqlite3_result_text(ctx, buf, -1, SQLITE_TRANSIENT);
		return;
	}
	sqlite3_result_int64(ctx, v);
}

static void fn_to_monotonic(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	clock_fn(ctx, argv, FN_MONO);
}

static void fn_to_realtime(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	clock_fn(ctx, argv, FN_REAL);
}

static void fn_abs_time_str(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	clock_fn(ctx, argv, FN_ABS);
}

/* "HH:MM:SS mmm uuu nnn" of a duration in ns (C's truncating / and %). */
static void fn_to_timecode(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	int64_t ns, us, ms, ss, mm, hh;
	char buf[128];

	(void)argc;
	switch (sqlite3_value_type(argv[0])) {
	case SQLITE_NULL:
		return;
	case SQLITE_INTEGER:
		break;
	default:
		ops_error(ctx, "TO_TIMECODE: first argument should be timestamp");
		return;
	}
	ns = sqlite3_value_int64(argv[0]);
	us = ns / 1000;
	ns %= 1000;
	ms = us / 1000;
	us %= 1000;
	ss = ms / 1000;
	ms %= 1000;
	mm = ss / 60;
	ss %= 60;
	hh = mm / 60;
	mm %= 60;
	snprintf(buf, sizeof(buf),
		 "%02" PRId64 ":%02" PRId64 ":%02" PRId64 " %03" PRId64 " %03" PRId64
		 " %03" PRId64, hh, mm, ss, ms, us, ns);
	sqlite3_result_text(ctx, buf, -1, SQLITE_TRANSIENT);
}

static void conv_destroy(void *p)
{
	struct clock_conv *c = p;

	if (!c)
		return;
	timeline_fini(&c->real);
	timeline_fini(&c->mono);
	free(c);
}

int ops_clock_register(sqlite3 *conn, struct tp_db *db)
{
	static const struct {
		const char *name;
		void (*fn)(sqlite3_context *, int, sqlite3_value **);
	} fns[] = {
		{"__intrinsic_to_monotonic", fn_to_monotonic},
		{"to_monotonic", fn_to_monotonic},
		{"to_realtime", fn_to_realtime},
		{"__intrinsic_to_realtime", fn_to_realtime},
		{"abs_time_str", fn_abs_time_str},
		{"__intrinsic_abs_time_str", fn_abs_time_str},
		{"to_timecode", fn_to_timecode},
		{"__intrinsic_to_timecode", fn_to_timecode},
	};
	struct clock_conv *c = calloc(1, sizeof(*c));
	size_t i;
	int rc;

	if (!c)
		return SQLITE_NOMEM;
	c->db = db;
	/* The first (an intrinsic no module redefines) owns @c: SQLite frees it
	 * with the connection, or now if this fails. */
	rc = sqlite3_create_function_v2(conn, fns[0].name, 1, SQLITE_UTF8, c, fns[0].fn, NULL,
					NULL, conv_destroy);
	for (i = 1; rc == SQLITE_OK && i < sizeof(fns) / sizeof(fns[0]); i++)
		rc = sqlite3_create_function_v2(conn, fns[i].name, 1, SQLITE_UTF8, c, fns[i].fn,
						NULL, NULL, NULL);
	return rc;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * select.c - which samples pfc_flamegraph folds: the selection options
 * become one SQL statement over perf_sample (threads and processes are
 * resolved in a subquery SQLite runs once), or the user's --sql; each row
 * adds its weight to a hash of (utid, leaf callsite). One pass over the
 * samples, no query per sample: about 1 M samples in a tenth of a second.
 * With --heap, heap_profile_allocation instead: the bytes per (process,
 * leaf callsite), allocations less frees (unreleased) or allocations only.
 */
#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/compiler.h"
#include "base/sort.h"
#include "trace_processor/flamegraph/flamegraph_int.h"
#include "trace_processor/trace_processor.h"

/* A timebase count of one sample (track, ts -> value), sorted for bsearch. */
struct tb_count {
	int64_t track, ts;
	double value;
};

struct timebase {
	struct tb_count *v;
	size_t n;
	struct hmap tracks; /* session << 32 | cpu -> timebase track id */
};

void fg_counts_fini(struct fg_counts *c)
{
	if (c)
		hmap_fini(&c->by_key);
}

static int PFC_PRINTF(3, 4) why_f(char *why, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/**
 * fg_prepare() - tp_prepare() of the first statement of @sql into *@out.
 * Return: 0; -EIO if SQLite refused it (sqlite3_errmsg() says why), or
 * -ENODATA if @sql holds no statement (*@out is NULL then).
 */
int fg_prepare(struct tp *tp, const char *sql, struct sqlite3_stmt **out)
{
	const char *tail = NULL;

	if (tp_prepare(tp, sql, out, &tail) != SQLITE_OK)
		return -EIO;
	return *out ? 0 : -ENODATA;
}

/* Runs @sql, which must return one row of integers, into @out (n values). */
static int query_ints(struct tp *tp, const char *sql, int64_t *out, int n)
{
	sqlite3_stmt *st = NULL;
	int rc, i;

	if (fg_prepare(tp, sql, &st) < 0)
		return -EIO;
	rc = sqlite3_step(st);
	for (i = 0; i < n; i++)
		out[i] = rc == SQLITE_ROW ? sqlite3_column_int64(st, i) : 0;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -EIO;
}

int fg_trace_sample_count(struct tp *tp, int64_t *out)
{
	return query_ints(tp, "SELECT COUNT(*) FROM perf_sample", out, 1);
}

int fg_trace_heap_count(struct tp *tp, int64_t *out)
{
	return query_ints(tp, "SELECT COUNT(*) FROM heap_profile_allocation", out, 1);
}

/*
 * A time as given to --start/--end: nanoseconds, or a number with a unit
 * (ns, us, ms, s; a fraction is allowed); "+T" counts from the trace's
 * first timestamp, "-T" back from its last. Return: 0 or -EINVAL.
 */
static int parse_time(const char *s, const int64_t bounds[2], int64_t *out)
{
	static const struct {
		const char *name;
		int64_t ns;
	} units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}};
	const char *p = s, *dot, *end;
	int64_t whole, frac = 0, scale = 1, v;
	int sign = 0;
	size_t i, n_int, n_frac = 0;

	if (*p == '+' || *p == '-')
		sign = *p++ == '+' ? 1 : -1;
	end = p;
	while ((*end >= '0' && *end <= '9') || *end == '.')
		end++;
	dot = memchr(p, '.', (size_t)(end - p));
	n_int = dot ? (size_t)(dot - p) : (size_t)(end - p);
	if (n_int == 0 || sv_parse_i64(sv_make(p, n_int), 0, INT64_MAX, &whole) < 0)
		return -EINVAL;
	if (*end) {
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (strcmp(end, units[i].name) == 0)
				break;
		if (i == sizeof(units) / sizeof(units[0]))
			return -EINVAL;
		scale = units[i].ns;
	}
	if (dot) {
		int64_t f = scale;

		for (const char *q = dot + 1; q < end; q++) {
			if (*q < '0' || *q > '9')
				return -EINVAL;
			f /= 10;
			frac += (*q - '0') * f;
			n_frac++;
		}
		if (n_frac == 0)
			return -EINVAL;
	}
	if (whole > (INT64_MAX - frac) / scale)
		return -EINVAL;
	v = whole * scale + frac;
	if ((sign > 0 && bounds[0] > 0 && v > INT64_MAX - bounds[0]) ||
	    (sign < 0 && bounds[1] < 0 && v > bounds[1] - INT64_MIN))
		return -EINVAL;
	if (sign > 0)
		v = bounds[0] + v;
	else if (sign < 0)
		v = bounds[1] - v;
	*out = v;
	return 0;
}

/* " AND (col = ? OR ...)" for @n values; the values are bound in order. */
static void add_list(struct buf *q, const char *expr, size_t n)
{
	size_t i;

	if (!n)
		return;
	buf_append_str(q, " AND (");
	for (i = 0; i < n; i++)
		buf_appendf(q, "%s%s ?", i ? " OR " : "", expr);
	buf_append_str(q, ")");
}

static bool has_thread_filter(const struct fg_selection *s)
{
	return s->n_pids || s->n_tids || s->n_utids || s->n_process_names || s->n_thread_names;
}

/* Column @name of @st's result, or -1. */
static int column_of(sqlite3_stmt *st, const char *name)
{
	int i, n = sqlite3_column_count(st);

	for (i = 0; i < n; i++)
		if (sqlite3_column_name(st, i) && strcmp(sqlite3_column_name(st, i), name) == 0)
			return i;
	return -1;
}

/* The user's first statement (@n bytes) without the blanks and ';' after it (owned). */
static char *trim_sql(const char *sql, size_t n)
{

	while (n && (sql[n - 1] == ';' || sql[n - 1] == ' ' || sql[n - 1] == '\n' ||
		     sql[n - 1] == '\t' || sql[n - 1] == '\r'))
		n--;
	return strndup(sql, n);
}

static int tb_cmp(const void *a, const void *b)
{
	const struct tb_count *x = a, *y = b;

	if (x->track != y->track)
		return x->track < y->track ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* The timebase counter of every (session, cpu), sorted by (track, ts). */
static int timebase_load(struct tp *tp, struct timebase *tb)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc;

	hmap_init(&tb->tracks);
	if (fg_prepare(tp,
		       "SELECT id, perf_session_id, cpu FROM perf_counter_track WHERE is_timebase",
		       &st) < 0)
		goto fail;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (hmap_put(&tb->tracks,
			     (uint64_t)sqlite3_column_int64(st, 1) << 32 |
				     (uint32_t)sqlite3_column_int64(st, 2),
			     (uint64_t)sqlite3_column_int64(st, 0)) < 0)
			goto fail;
	sqlite3_finalize(st);
	st = NULL;
	if (fg_prepare(tp,
		       "SELECT c.track_id, c.ts, c.value FROM counter c WHERE c.track_id IN "
		       "(SELECT id FROM perf_counter_track WHERE is_timebase)",
		       &st) < 0)
		goto fail;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (tb->n == cap) {
			struct tb_count *v;

			cap = cap ? 2 * cap : 4096;
			v = realloc(tb->v, cap * sizeof(*v));
			if (!v)
				goto fail;
			tb->v = v;
		}
		tb->v[tb->n].track = sqlite3_column_int64(st, 0);
		tb->v[tb->n].ts = sqlite3_column_int64(st, 1);
		tb->v[tb->n].value = sqlite3_column_double(st, 2);
		tb->n++;
	}
	sqlite3_finalize(st);
	if (tb->n)
		sort_n(tb->v, tb->n, sizeof(*tb->v), tb_cmp);
	return 0;
fail:
	sqlite3_finalize(st);
	return -ENOMEM;
}

/* The timebase count of the sample at @ts on (@session, @cpu), or 0. */
static uint64_t timebase_of(const struct timebase *tb, int64_t session, int64_t cpu, int64_t ts)
{
	struct tb_count k;
	const struct tb_count *hit;
	uint64_t track;

	if (!hmap_get(&tb->tracks, (uint64_t)session << 32 | (uint32_t)cpu, &track))
		return 0;
	k.track = (int64_t)track;
	k.ts = ts;
	hit = bsearch(&k, tb->v, tb->n, sizeof(*tb->v), tb_cmp);
	return hit && hit->value > 0 ? (uint64_t)hit->value : 0;
}

static int count_add(struct fg_counts *c, int64_t callsite, int64_t group, uint64_t w)
{
	uint64_t key, old = 0;

	c->n_samples++;
	if (callsite < 0 || callsite >= UINT32_MAX) {
		c->n_no_stack++;
		return 0;
	}
	key = (uint64_t)(group < 0 ? 0 : group) << 32 | (uint32_t)callsite;
	hmap_get(&c->by_key, key, &old);
	c->weight_total += w;
	return hmap_put(&c->by_key, key, old + w) < 0 ? -ENOMEM : 0;
}

/*
 * The statement of --heap: per (leaf callsite, process) the bytes, with
 * the main thread of the process as its group (the labels are per thread).
 */
static int build_heap_query(const struct fg_selection *sel, const struct fg_counts *c,
			    struct buf *q, char *why, size_t why_size)
{
	if (sel->n_tids || sel->n_utids || sel->n_thread_names || sel->sql ||
	    sel->weight_timebase)
		return why_f(why, why_size,
			     "--heap takes --pid, --process-name, --start and --end, not "
			     "--tid, --utid, --thread-name, --sql or --weight (a heap is per "
			     "process)");
	buf_append_str(q, "SELECT a.callsite_id, (SELECT t.utid FROM thread t WHERE "
			  "t.upid = a.upid ORDER BY t.is_main_thread DESC, t.utid LIMIT 1), "
			  "SUM(a.size) FROM heap_profile_allocation a WHERE 1");
	if (sel->heap == FG_HEAP_ALLOCATED)
		buf_append_str(q, " AND a.size > 0");
	if (c->has_window)
		buf_append_str(q, " AND a.ts >= ?1 AND a.ts < ?2");
	if (sel->n_pids || sel->n_process_names) {
		buf_append_str(q, " AND a.upid IN (SELECT p.upid FROM process p WHERE 1");
		add_list(q, "p.pid =", sel->n_pids);
		add_list(q, "p.name GLOB", sel->n_process_names);
		buf_append_str(q, ")");
	}
	buf_append_str(q, " GROUP BY a.callsite_id, a.upid");
	return buf_cstr(q) ? 0 : -ENOMEM;
}

/* Builds the statement of a selection of perf_sample rows. */
static int build_query(struct tp *tp, const struct fg_selection *sel, size_t sql_len,
		       struct fg_counts *c, struct buf *q, char *why, size_t why_size)
{
	int64_t bounds[2] = {0, 0};
	char *user = NULL;

	if (!sel->heap)
		buf_append_str(q, "SELECT s.callsite_id, s.utid, s.perf_session_id, s.cpu, s.ts "
				  "FROM perf_sample s WHERE 1");
	if (sel->start || sel->end) {
		if (query_ints(tp, "SELECT start_ts, end_ts FROM trace_bounds", bounds, 2) < 0)
			return why_f(why, why_size, "cannot read the trace bounds");
		c->start_ts = INT64_MIN;
		c->end_ts = INT64_MAX;
		if (sel->start && parse_time(sel->start, bounds, &c->start_ts) < 0)
			return why_f(why, why_size,
				     "--start '%s' is not a time (ns, or N[.N]{ns,us,ms,s}, "
				     "+T from the trace start, -T from its end)",
				     sel->start);
		if (sel->end && parse_time(sel->end, bounds, &c->end_ts) < 0)
			return why_f(why, why_size,
				     "--end '%s' is not a time (ns, or N[.N]{ns,us,ms,s}, "
				     "+T from the trace start, -T from its end)",
				     sel->end);
		c->has_window = true;
		if (!sel->heap)
			buf_append_str(q, " AND s.ts >= ?1 AND s.ts < ?2");
	}
	if (sel->heap)
		return build_heap_query(sel, c, q, why, why_size);
	if (has_thread_filter(sel)) {
		buf_append_str(q, " AND s.utid IN (SELECT t.utid FROM thread t "
				  "LEFT JOIN process p USING (upid) WHERE 1");
		add_list(q, "p.pid =", sel->n_pids);
		add_list(q, "t.tid =", sel->n_tids);
		add_list(q, "t.utid =", sel->n_utids);
		add_list(q, "p.name GLOB", sel->n_process_names);
		add_list(q, "t.name GLOB", sel->n_thread_names);
		buf_append_str(q, ")");
	}
	if (sel->sql) {
		user = trim_sql(sel->sql, sql_len);
		if (!user)
			return -ENOMEM;
		/* A newline: the query may end in a -- comment. */
		buf_appendf(q, " AND s.id IN (SELECT id FROM (%s\n))", user);
		free(user);
	}
	return buf_cstr(q) ? 0 : -ENOMEM;
}

static void bind_selection(sqlite3_stmt *st, const struct fg_selection *sel,
			   const struct fg_counts *c)
{
	/* ?1 and ?2 are the window's; a bare ? takes the next number. */
	int i = c->has_window ? 3 : 1;
	size_t k;

	if (c->has_window) {
		sqlite3_bind_int64(st, 1, c->start_ts);
		sqlite3_bind_int64(st, 2, c->end_ts);
	}
	for (k = 0; k < sel->n_pids; k++)
		sqlite3_bind_int64(st, i++, sel->pids[k]);
	for (k = 0; k < sel->n_tids; k++)
		sqlite3_bind_int64(st, i++, sel->tids[k]);
	for (k = 0; k < sel->n_utids; k++)
		sqlite3_bind_int64(st, i++, sel->utids[k]);
	for (k = 0; k < sel->n_process_names; k++)
		sqlite3_bind_text(st, i++, sel->process_names[k], -1, SQLITE_STATIC);
	for (k = 0; k < sel->n_thread_names; k++)
		sqlite3_bind_text(st, i++, sel->thread_names[k], -1, SQLITE_STATIC);
}

/*
 * --sql whose rows name callsites themselves (a callsite_id column; utid
 * and weight columns if it has them): each row is one sample.
 */
static int select_callsites(sqlite3_stmt *st, const struct fg_selection *sel, enum fg_group group,
			    struct fg_counts *c, char *why, size_t why_size)
{
	int cs = column_of(st, "callsite_id"), ut = column_of(st, "utid");
	int wc = column_of(st, "weight"), rc;

	if (has_thread_filter(sel) || sel->start || sel->end || sel->weight_timebase)
		return why_f(why, why_size,
			     "--sql rows with a callsite_id column cannot be narrowed further: "
			     "use an id column (perf_sample ids) to combine it with other "
			     "options");
	if (group != FG_GROUP_NONE && ut < 0)
		return why_f(why, why_size,
			     "--per-thread/--per-process need a utid column in the --sql rows");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t callsite = sqlite3_column_type(st, cs) == SQLITE_NULL
					   ? -1
					   : sqlite3_column_int64(st, cs);
		int64_t w = wc >= 0 ? sqlite3_column_int64(st, wc) : 1;

		if (w < 0)
			w = 0;
		if (count_add(c, callsite, ut >= 0 && group ? sqlite3_column_int64(st, ut) : 0,
			      (uint64_t)w) < 0)
			return -ENOMEM;
	}
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/**
 * fg_select() - Count the samples @sel picks, per leaf callsite and (if
 * @group asks for it) thread, into @out (initialized here; fg_counts_fini()
 * it, also on failure).
 * Return: 0; -EINVAL with a message in @why (bad option, bad --sql);
 * -ENOMEM.
 * Context: one pass over the selected samples; allocates.
 */
int fg_select(struct tp *tp, const struct fg_selection *sel, enum fg_group group,
	      struct fg_counts *out, char *why, size_t why_size)
{
	struct buf q = BUF_INIT;
	struct timebase tb = {0};
	sqlite3_stmt *st = NULL;
	const char *tail = NULL;
	size_t sql_len = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	hmap_init(&out->by_key);
	why[0] = '\0';
	if (sel->sql) {
		/* Only the first statement counts: a ';' and a comment may follow. */
		rc = tp_prepare(tp, sel->sql, &st, &tail);
		if (rc != SQLITE_OK || !st) {
			rc = why_f(why, why_size, "--sql: %s",
				   rc != SQLITE_OK ? sqlite3_errmsg(tp_sqlite(tp))
						   : "no statement");
			goto out;
		}
		sql_len = (size_t)(tail - sel->sql);
		if (column_of(st, "callsite_id") >= 0) {
			rc = select_callsites(st, sel, group, out, why, why_size);
			if (rc == -EIO)
				rc = why_f(why, why_size, "--sql: %s",
					   sqlite3_errmsg(tp_sqlite(tp)));
			goto out;
		}
		if (column_of(st, "id") < 0) {
			rc = why_f(why, why_size,
				   "--sql: the rows have neither a callsite_id column nor an id "
				   "column (of perf_sample)");
			goto out;
		}
		sqlite3_finalize(st);
		st = NULL;
	}
	rc = build_query(tp, sel, sql_len, out, &q, why, why_size);
	if (rc < 0)
		goto out;
	if (sel->weight_timebase && (rc = timebase_load(tp, &tb)) < 0)
		goto out;
	if (fg_prepare(tp, (const char *)q.data, &st) < 0) {
		rc = why_f(why, why_size, "%s%s", sel->sql ? "--sql: " : "",
			   sqlite3_errmsg(tp_sqlite(tp)));
		goto out;
	}
	bind_selection(st, sel, out);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t cs = sqlite3_column_type(st, 0) == SQLITE_NULL
				     ? -1
				     : sqlite3_column_int64(st, 0);
		uint64_t w = 1;

		if (sel->heap) {
			/* Bytes; a callsite whose frees outweigh it holds none. */
			int64_t b = sqlite3_column_int64(st, 2);

			w = b > 0 ? (uint64_t)b : 0;
			if (!w)
				continue;
		} else if (sel->weight_timebase)
			w = timebase_of(&tb, sqlite3_column_int64(st, 2),
					sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4));
		if (count_add(out, cs, group ? sqlite3_column_int64(st, 1) : 0, w) < 0) {
			rc = -ENOMEM;
			goto out;
		}
	}
	if (rc != SQLITE_DONE) {
		rc = why_f(why, why_size, "%s%s", sel->sql ? "--sql: " : "",
			   sqlite3_errmsg(tp_sqlite(tp)));
		goto out;
	}
	rc = 0;
out:
	sqlite3_finalize(st);
	hmap_fini(&tb.tracks);
	free(tb.v);
	buf_fini(&q);
	return rc;
}

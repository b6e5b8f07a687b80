// SPDX-License-Identifier: Apache-2.0
/*
 * mipmap.c - __intrinsic_slice_mipmap and __intrinsic_counter_mipmap, the
 * virtual tables Perfetto's UI draws tracks from: created once over a
 * query ("CREATE VIRTUAL TABLE m USING __intrinsic_slice_mipmap((SELECT
 * id, ts, dur, depth FROM ...))"), then asked for the buckets of a window
 * ("WHERE in_window_start = a AND in_window_end = b AND in_window_step =
 * s"): per bucket and depth the longest slice and the count, or the min,
 * max and last counter value. Range queries over a segment tree, so a
 * query costs O(buckets x log n), whatever the zoom.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "trace_processor/sql/ops/ops_int.h"

/* Most buckets one query may ask for. */
#define MIPMAP_MAX_WINDOWS ((int64_t)1 << 24)
#define N_ARGS 3

enum kind { SLICES, COUNTERS };

/* Slices of one depth, by ts; seg[] holds, per tree node, the index of the
 * longest slice below it (the first of equals). */
struct depth_rows {
	int64_t *ts, *dur;
	uint32_t *id;
	size_t n, cap;
	uint32_t *seg;
	size_t seg_n;
};

/* Counter values by ts; seg[] holds the min and max below each node. */
struct counter_rows {
	int64_t *ts;
	double *val;
	size_t n, cap;
	double *seg_min, *seg_max;
	size_t seg_n;
};

struct mipmap_state {
	char *name;
	enum kind kind;
	struct depth_rows *depths;
	size_t n_depths;
	struct counter_rows counters;
	struct mipmap_state *next;
};

/* Per connection and module: the states of its tables, by name, so that a
 * table SQLite reconnects finds its data again. */
struct mipmap_module {
	sqlite3 *conn;
	enum kind kind;
	struct mipmap_state *states;
};

struct mipmap_vtab {
	sqlite3_vtab base;
	struct mipmap_module *mod;
	struct mipmap_state *state;
};

/* One result row. */
struct bucket {
	int64_t ts, id, count, dur, depth; /* slices */
	double min, max, last;            /* counters (ts: the last one's) */
};

struct mipmap_cursor {
	sqlite3_vtab_cursor base;
	struct bucket *rows;
	size_t n, cap, pos;
	int64_t *queries;
	size_t *positions;
	size_t q_cap, p_cap;
};

static const char k_slice_schema[] =
	"CREATE TABLE x(in_window_start BIGINT HIDDEN, in_window_end BIGINT HIDDEN, "
	"in_window_step BIGINT HIDDEN, ts BIGINT, id BIGINT, count INTEGER, dur BIGINT, "
	"depth INTEGER, PRIMARY KEY(id)) WITHOUT ROWID";
static const char k_counter_schema[] =
	"CREATE TABLE x(in_window_start BIGINT HIDDEN, in_window_end BIGINT HIDDEN, "
	"in_window_step BIGINT HIDDEN, min_value DOUBLE, max_value DOUBLE, last_ts BIGINT, "
	"last_value DOUBLE, PRIMARY KEY(last_ts)) WITHOUT ROWID";

static void state_destroy(struct mipmap_state *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n_depths; i++) {
		free(s->depths[i].ts);
		free(s->depths[i].dur);
		free(s->depths[i].id);
		free(s->depths[i].seg);
	}
	free(s->depths);
	free(s->counters.ts);
	free(s->counters.val);
	free(s->counters.seg_min);
	free(s->counters.seg_max);
	free(s->name);
	free(s);
}

/* ------------------------------------------------------------ building ---- */

static int depth_push(struct depth_rows *d, int64_t id, int64_t ts, int64_t dur)
{
	if (d->n == d->cap) {
		size_t cap = d->cap;

		if (ops_grow((void **)&d->ts, &cap, d->n + 1, sizeof(*d->ts)) < 0)
			return -ENOMEM;
		cap = d->cap;
		if (ops_grow((void **)&d->dur, &cap, d->n + 1, sizeof(*d->dur)) < 0)
			return -ENOMEM;
		cap = d->cap;
		if (ops_grow((void **)&d->id, &cap, d->n + 1, sizeof(*d->id)) < 0)
			return -ENOMEM;
		d->cap = cap;
	}
	d->ts[d->n] = ts;
	d->dur[d->n] = dur;
	d->id[d->n] = (uint32_t)id;
	d->n++;
	return 0;
}

/* The longer of two slices, the earlier one when equally long. */
static uint32_t longer(const struct depth_rows *d, uint32_t a, uint32_t b)
{
	if (a == UINT32_MAX)
		return b;
	if (b == UINT32_MAX)
		return a;
	if (d->dur[a] < d->dur[b] || (d->dur[a] == d->dur[b] && b < a))
		return b;
	return a;
}

static int depth_build(struct depth_rows *d)
{
	size_t i;

	d->seg_n = d->n;
	d->seg = malloc(2 * (d->n ? d->n : 1) * sizeof(*d->seg));
	if (!d->seg)
		return -ENOMEM;
	for (i = 0; i < d->n; i++)
		d->seg[d->n + i] = (uint32_t)i;
	for (i = d->n ? d->n - 1 : 0; i > 0; i--)
		d->seg[i] = longer(d, d->seg[2 * i], d->seg[2 * i + 1]);
	return 0;
}

/* The longest slice in [l, r) (l < r). */
static uint32_t depth_query(const struct depth_rows *d, size_t l, size_t r)
{
	uint32_t best = UINT32_MAX;

	for (l += d->seg_n, r += d->seg_n; l < r; l >>= 1, r >>= 1) {
		if (l & 1)
			best = longer(d, best, d->seg[l++]);
		if (r & 1)
			best = longer(d, best, d->seg[--r]);
	}
	return best;
}

static int counter_build(struct counter_rows *c)
{
	size_t i, n = c->n ? c->n : 1;

	c->seg_n = c->n;
	c->seg_min = malloc(2 * n * sizeof(*c->seg_min));
	c->seg_max = malloc(2 * n * sizeof(*c->seg_max));
	if (!c->seg_min || !c->seg_max)
		return -ENOMEM;
	for (i = 0; i < c->n; i++)
		c->seg_min[c->n + i] = c->seg_max[c->n + i] = c->val[i];
	for (i = c->n - 1; i > 0 && c->n; i--) {
		double a = c->seg_min[2 * i], b = c->seg_min[2 * i + 1];

		c->seg_min[i] = b < a ? b : a;
		a = c->seg_max[2 * i];
		b = c->seg_max[2 * i + 1];
		c->seg_max[i] = b > a ? b : a;
	}
	return 0;
}

static void counter_query(const struct counter_rows *c, size_t l, size_t r, double *out_min,
			  double *out_max)
{
	double mn = c->val[l], mx = c->val[l];

	for (l += c->seg_n, r += c->seg_n; l < r; l >>= 1, r >>= 1) {
		if (l & 1) {
			mn = c->seg_min[l] < mn ? c->seg_min[l] : mn;
			mx = c->seg_max[l] > mx ? c->seg_max[l] : mx;
			l++;
		}
		if (r & 1) {
			--r;
			mn = c->seg_min[r] < mn ? c->seg_min[r] : mn;
			mx = c->seg_max[r] > mx ? c->seg_max[r] : mx;
		}
	}
	*out_min = mn;
	*out_max = mx;
}

static int counter_push(struct counter_rows *c, int64_t ts, double v)
{
	if (c->n == c->cap) {
		size_t cap = c->cap;

		if (ops_grow((void **)&c->ts, &cap, c->n + 1, sizeof(*c->ts)) < 0)
			return -ENOMEM;
		cap = c->cap;
		if (ops_grow((void **)&c->val, &cap, c->n + 1, sizeof(*c->val)) < 0)
			return -ENOMEM;
		c->cap = cap;
	}
	c->ts[c->n] = ts;
	c->val[c->n++] = v;
	return 0;
}

/* Reads "SELECT * FROM <source>" into @s. Return: SQLITE_OK or an error with *@err. */
static int state_load(sqlite3 *conn, struct mipmap_state *s, const char *source, char **err)
{
	sqlite3_stmt *st = NULL;
	char *sql;
	int rc, step;
	bool any = false;
	size_t i;

	sql = sqlite3_mprintf(s->kind == SLICES ? "SELECT * FROM %s" : "SELECT ts, value FROM %s",
			      source);
	if (!sql)
		return SQLITE_NOMEM;
	rc = sqlite3_prepare_v2(conn, sql, -1, &st, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK) {
		*err = sqlite3_mprintf("%s", sqlite3_errmsg(conn));
		return SQLITE_ERROR;
	}
	for (;;) {
		step = sqlite3_step(st);
		/* Upstream reads the first row even when there is none: an empty
		 * source gives one row of zeros, and so does this. */
		if (step != SQLITE_ROW && (any || step != SQLITE_DONE))
			break;
		bool row = step == SQLITE_ROW;

		if (s->kind == SLICES) {
			int64_t id = row ? sqlite3_column_int64(st, 0) : 0, depth;

			if (id < 0 || id > UINT32_MAX) {
				*err = sqlite3_mprintf(
					"slice_mipmap: id %lld is too large to fit in 32 bits",
					(long long)id);
				rc = SQLITE_ERROR;
				goto out;
			}
			depth = row ? sqlite3_column_int64(st, 3) : 0;
			if (depth < 0 || depth > 65535) {
				*err = sqlite3_mprintf("slice_mipmap: depth %lld out of range",
						       (long long)depth);
				rc = SQLITE_ERROR;
				goto out;
			}
			if ((size_t)depth >= s->n_depths) {
				struct depth_rows *d = realloc(s->depths,
							       ((size_t)depth + 1) * sizeof(*d));

				if (!d)
					goto nomem;
				memset(d + s->n_depths, 0,
				       ((size_t)depth + 1 - s->n_depths) * sizeof(*d));
				s->depths = d;
				s->n_depths = (size_t)depth + 1;
			}
			if (depth_push(&s->depths[depth], id, row ? sqlite3_column_int64(st, 1) : 0,
				       row ? sqlite3_column_int64(st, 2) : 0) < 0)
				goto nomem;
		} else if (counter_push(&s->counters, row ? sqlite3_column_int64(st, 0) : 0,
					row ? sqlite3_column_double(st, 1) : 0) < 0) {
			goto nomem;
		}
		any = true;
		if (step != SQLITE_ROW)
			break;
	}
	if (step != SQLITE_DONE) {
		*err = sqlite3_mprintf("%s", sqlite3_errmsg(conn));
		rc = SQLITE_ERROR;
		goto out;
	}
	for (i = 0; i < s->n_depths; i++) {
		if (depth_build(&s->depths[i]) < 0)
			goto nomem;
	}
	if (s->kind == COUNTERS && counter_build(&s->counters) < 0)
		goto nomem;
	rc = SQLITE_OK;
out:
	sqlite3_finalize(st);
	return rc;
nomem:
	rc = SQLITE_NOMEM;
	goto out;
}

/* -------------------------------------------------------------- vtab ---- */

static struct mipmap_state **find_state(struct mipmap_module *m, const char *name)
{
	struct mipmap_state **p;

	for (p = &m->states; *p; p = &(*p)->next) {
		if (strcmp((*p)->name, name) == 0)
			return p;
	}
	return NULL;
}

static int mm_init(sqlite3 *conn, void *aux, int argc, const char *const *argv,
		   sqlite3_vtab **out, char **err, bool create)
{
	struct mipmap_module *m = aux;
	struct mipmap_vtab *vt;
	struct mipmap_state *s = NULL, **found;
	int rc;

	if (argc != 4) {
		*err = sqlite3_mprintf(m->kind == SLICES ? "slice_mipmap: wrong number of arguments"
							 : "counter_mipmap: wrong number of "
							   "arguments");
		return SQLITE_ERROR;
	}
	rc = sqlite3_declare_vtab(conn, m->kind == SLICES ? k_slice_schema : k_counter_schema);
	if (rc != SQLITE_OK)
		return rc;
	found = find_state(m, argv[2]);
	if (create || !found) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return SQLITE_NOMEM;
		s->kind = m->kind;
		s->name = strdup(argv[2]);
		if (!s->name) {
			state_destroy(s);
			return SQLITE_NOMEM;
		}
		rc = state_load(conn, s, argv[3], err);
		if (rc != SQLITE_OK) {
			state_destroy(s);
			return rc;
		}
		if (found) {
			struct mipmap_state *old = *found;

			*found = old->next;
			state_destroy(old);
		}
		s->next = m->states;
		m->states = s;
	} else {
		s = *found;
	}
	vt = sqlite3_malloc(sizeof(*vt));
	if (!vt)
		return SQLITE_NOMEM;
	memset(vt, 0, sizeof(*vt));
	vt->mod = m;
	vt->state = s;
	*out = &vt->base;
	return SQLITE_OK;
}

static int mm_create(sqlite3 *conn, void *aux, int argc, const char *const *argv,
		     sqlite3_vtab **out, char **err)
{
	return mm_init(conn, aux, argc, argv, out, err, true);
}

static int mm_connect(sqlite3 *conn, void *aux, int argc, const char *const *argv,
		      sqlite3_vtab **out, char **err)
{
	return mm_init(conn, aux, argc, argv, out, err, false);
}

static int mm_disconnect(sqlite3_vtab *vt)
{
	sqlite3_free(vt);
	return SQLITE_OK;
}

static int mm_destroy(sqlite3_vtab *tab)
{
	struct mipmap_vtab *vt = (struct mipmap_vtab *)tab;
	struct mipmap_state **found = find_state(vt->mod, vt->state->name);

	if (found) {
		struct mipmap_state *s = *found;

		*found = s->next;
		state_destroy(s);
	}
	sqlite3_free(vt);
	return SQLITE_OK;
}

static int mm_best_index(sqlite3_vtab *tab, sqlite3_index_info *info)
{
	bool seen[N_ARGS] = {false};
	int i, n = 0;

	(void)tab;
	for (i = 0; i < info->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &info->aConstraint[i];

		if (!c->usable || c->iColumn < 0 || c->iColumn >= N_ARGS)
			continue;
		if (c->op != SQLITE_INDEX_CONSTRAINT_EQ || seen[c->iColumn])
			return SQLITE_CONSTRAINT;
		seen[c->iColumn] = true;
		info->aConstraintUsage[i].argvIndex = c->iColumn + 1;
		info->aConstraintUsage[i].omit = 1;
		n++;
	}
	/* Upstream takes the three window arguments and no other constraint. */
	if (n != N_ARGS || info->nConstraint != N_ARGS)
		return SQLITE_CONSTRAINT;
	return SQLITE_OK;
}

static int mm_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
	struct mipmap_cursor *c = calloc(1, sizeof(*c));

	(void)vt;
	if (!c)
		return SQLITE_NOMEM;
	*out = &c->base;
	return SQLITE_OK;
}

static int mm_close(sqlite3_vtab_cursor *cur)
{
	struct mipmap_cursor *c = (struct mipmap_cursor *)cur;

	free(c->rows);
	free(c->queries);
	free(c->positions);
	free(c);
	return SQLITE_OK;
}

/* Index of the first of @n sorted @ts at or after @v, searching from @from. */
static size_t lower_bound(const int64_t *ts, size_t from, size_t n, int64_t v)
{
	size_t lo = from, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ts[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int push_bucket(struct mipmap_cursor *c, const struct bucket *b)
{
	if (c->n == c->cap && ops_grow((void **)&c->rows, &c->cap, c->n + 1, sizeof(*c->rows)) < 0)
		return -ENOMEM;
	c->rows[c->n++] = *b;
	return 0;
}

/* The window boundaries: start, then start + k * step up to the first >= end. */
static int make_queries(struct mipmap_cursor *c, int64_t start, int64_t end, int64_t step,
			size_t *out_n)
{
	size_t n = 0;
	int64_t s;

	if (ops_grow((void **)&c->queries, &c->q_cap, 1, sizeof(*c->queries)) < 0)
		return -ENOMEM;
	c->queries[n++] = start;
	for (s = start; s < end; s += step) {
		if (ops_grow((void **)&c->queries, &c->q_cap, n + 1, sizeof(*c->queries)) < 0)
			return -ENOMEM;
		c->queries[n++] = s + step;
		if (s > INT64_MAX - step)
			break;
	}
	if (ops_grow((void **)&c->positions, &c->p_cap, n, sizeof(*c->positions)) < 0)
		return -ENOMEM;
	*out_n = n;
	return 0;
}

static int mm_filter(sqlite3_vtab_cursor *cur, int idx_num, const char *idx_str, int argc,
		     sqlite3_value **argv)
{
	struct mipmap_cursor *c = (struct mipmap_cursor *)cur;
	const struct mipmap_state *s = ((struct mipmap_vtab *)cur->pVtab)->state;
	int64_t start, end, step;
	size_t n_q, i, d;

	(void)idx_num;
	(void)idx_str;
	c->n = c->pos = 0;
	if (argc != N_ARGS)
		return SQLITE_INTERNAL;
	start = sqlite3_value_int64(argv[0]);
	end = sqlite3_value_int64(argv[1]);
	step = sqlite3_value_int64(argv[2]);
	if (step <= 0 || (end > start && ((uint64_t)end - (uint64_t)start) / (uint64_t)step >=
						 (uint64_t)MIPMAP_MAX_WINDOWS)) {
		sqlite3_free(cur->pVtab->zErrMsg);
		cur->pVtab->zErrMsg = sqlite3_mprintf(
			"mipmap: in_window_step must be positive and give at most %lld windows",
			(long long)MIPMAP_MAX_WINDOWS);
		return SQLITE_ERROR;
	}
	if (make_queries(c, start, end, step, &n_q) < 0)
		return SQLITE_NOMEM;

	if (s->kind == COUNTERS) {
		const struct counter_rows *cr = &s->counters;
		size_t first;

		for (i = 0; i < n_q; i++)
			c->positions[i] = lower_bound(cr->ts, i ? c->positions[i - 1] : 0, cr->n,
						      c->queries[i]);
		/* A value from before the window still shows in its first bucket. */
		first = c->positions[0];
		if (first && (first == cr->n || cr->ts[first] != start))
			first--;
		for (i = 1; i < n_q; i++) {
			size_t last = c->positions[i];
			struct bucket b = {0};

			if (first == last)
				continue;
			counter_query(cr, first, last, &b.min, &b.max);
			b.last = cr->val[last - 1];
			b.ts = cr->ts[last - 1];
			if (push_bucket(c, &b) < 0)
				return SQLITE_NOMEM;
			first = last;
		}
		return SQLITE_OK;
	}
	for (d = 0; d < s->n_depths; d++) {
		const struct depth_rows *dr = &s->depths[d];
		size_t first;

		for (i = 0; i < n_q; i++)
			c->positions[i] = lower_bound(dr->ts, i ? c->positions[i - 1] : 0, dr->n,
						      c->queries[i]);
		/* Upstream steps back when the slice at the window's first position
		 * reaches into the window (and does not start at its start). */
		first = c->positions[0];
		if (first &&
		    (first == dr->n ||
		     (dr->ts[first] != start && dr->ts[first] + dr->dur[first] > start)))
			first--;
		for (i = 1; i < n_q; i++) {
			size_t last = c->positions[i];
			struct bucket b = {0};
			uint32_t best;

			if (first == last)
				continue;
			best = depth_query(dr, first, last);
			b.ts = dr->ts[best];
			b.id = dr->id[best];
			b.dur = dr->dur[best];
			b.count = (int64_t)(last - first);
			b.depth = (int64_t)d;
			if (push_bucket(c, &b) < 0)
				return SQLITE_NOMEM;
			first = last;
		}
	}
	return SQLITE_OK;
}

static int mm_next(sqlite3_vtab_cursor *cur)
{
	((struct mipmap_cursor *)cur)->pos++;
	return SQLITE_OK;
}

static int mm_eof(sqlite3_vtab_cursor *cur)
{
	const struct mipmap_cursor *c = (const struct mipmap_cursor *)cur;

	return c->pos >= c->n;
}

static int mm_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int n)
{
	const struct mipmap_cursor *c = (const struct mipmap_cursor *)cur;
	const struct mipmap_state *s = ((struct mipmap_vtab *)cur->pVtab)->state;
	const struct bucket *b = &c->rows[c->pos];

	if (s->kind == SLICES) {
		int64_t v[] = {b->ts, b->id, b->count, b->dur, b->depth};

		if (n >= N_ARGS && n < N_ARGS + 5)
			sqlite3_result_int64(ctx, v[n - N_ARGS]);
		return SQLITE_OK;
	}
	switch (n - N_ARGS) {
	case 0:
		sqlite3_result_double(ctx, b->min);
		break;
	case 1:
		sqlite3_result_double(ctx, b->max);
		break;
	case 2:
		sqlite3_result_int64(ctx, b->ts);
		break;
	case 3:
		sqlite3_result_double(ctx, b->last);
		break;
	}
	return SQLITE_OK;
}

static int mm_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out)
{
	(void)cur;
	(void)out;
	return SQLITE_ERROR;
}

static const sqlite3_module k_mipmap_module = {
	.iVersion = 1,
	.xCreate = mm_create,
	.xConnect = mm_connect,
	.xBestIndex = mm_best_index,
	.xDisconnect = mm_disconnect,
	.xDestroy = mm_destroy,
	.xOpen = mm_open,
	.xClose = mm_close,
	.xFilter = mm_filter,
	.xNext = mm_next,
	.xEof = mm_eof,
	.xColumn = mm_column,
	.xRowid = mm_rowid,
};

static void module_destroy(void *p)
{
	struct mipmap_module *m = p;
	struct mipmap_state *s, *next;

	if (!m)
		return;
	for (s = m->states; s; s = next) {
		next = s->next;
		state_destroy(s);
	}
	free(m);
}

int ops_mipmap_register(sqlite3 *conn)
{
	static const struct {
		const char *name;
		enum kind kind;
	} mods[] = {{"__intrinsic_slice_mipmap", SLICES}, {"__intrinsic_counter_mipmap", COUNTERS}};
	size_t i;
	int rc;

	for (i = 0; i < sizeof(mods) / sizeof(mods[0]); i++) {
		struct mipmap_module *m = calloc(1, sizeof(*m));

		if (!m)
			return SQLITE_NOMEM;
		m->conn = conn;
		m->kind = mods[i].kind;
		/* SQLite frees @m with module_destroy, even if this fails. */
		rc = sqlite3_create_module_v2(conn, mods[i].name, &k_mipmap_module, m,
					      module_destroy);
		if (rc != SQLITE_OK)
			return rc;
	}
	return SQLITE_OK;
}

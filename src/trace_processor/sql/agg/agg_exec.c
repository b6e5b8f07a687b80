// SPDX-License-Identifier: Apache-2.0
/*
 * agg_exec.c - runs a tp_agg_plan: walks the first table in blocks of
 * rows, follows the joins to the rows of the other tables, drops rows the
 * inner joins and the WHERE terms reject, finds each row's group (a direct
 * array for one small integer key, else a hash of the key tuple) and folds
 * the aggregates column by column. The groups come out sorted by key the
 * way SQLite orders a GROUP BY (NULL first, numbers, then text by bytes),
 * and the aggregates finish with SQLite's rules: SUM of integers is an
 * integer (an overflow hands the statement back to SQLite, which reports
 * it), SUM of reals and AVG and TOTAL are doubles summed in row order,
 * MIN/MAX/SUM/AVG of no values are NULL, COUNT skips NULLs.
 */
#include "trace_processor/sql/agg/agg_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <sqlite3.h>
#include <string.h>

#include "trace_processor/storage/storage.h"

#define BLOCK 1024
#define NO_ROW UINT32_MAX
/* One integer key in [0, DIRECT_MAX) finds its group in a flat array. */
#define DIRECT_MAX (1u << 22)
/* Integers a double holds exactly. */
#define EXACT_MAX (INT64_C(1) << 53)

struct agg_state {
	int64_t cnt;
	int64_t isum, imin, imax;
	double rsum, rmin, rmax;
};

/* The rows of one table for a block: @rows, or base, base + 1, ... if NULL. */
struct rowsel {
	const uint32_t *rows;
	uint32_t base;
};

static inline uint32_t row_at(const struct rowsel *s, size_t k)
{
	return s->rows ? s->rows[k] : s->base + (uint32_t)k;
}

struct groups {
	unsigned n_keys, n_tabs;
	size_t n, cap;
	int64_t *keys;    /* n x n_keys */
	uint32_t *first;  /* n x n_tabs: the rows of the group's first row */
	uint32_t *slots;  /* hash: group + 1, 0 empty; n_slots a power of two */
	size_t n_slots;
	uint32_t *direct; /* one key: key -> group + 1 */
	size_t n_direct;
};

static void groups_fini(struct groups *g)
{
	free(g->keys);
	free(g->first);
	free(g->slots);
	free(g->direct);
}

static uint64_t hash_keys(const int64_t *k, unsigned n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;
	unsigned i;

	for (i = 0; i < n; i++) {
		h ^= (uint64_t)k[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h;
}

static int rehash(struct groups *g, size_t n_slots)
{
	uint32_t *slots = calloc(n_slots, sizeof(*slots));
	size_t i;

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < g->n; i++) {
		size_t s = hash_keys(&g->keys[i * g->n_keys], g->n_keys) & (n_slots - 1);

		while (slots[s])
			s = (s + 1) & (n_slots - 1);
		slots[s] = (uint32_t)i + 1;
	}
	free(g->slots);
	g->slots = slots;
	g->n_slots = n_slots;
	return 0;
}

/* Appends a group for @keys whose first row is row @k of @sel (each table). */
static int64_t new_group(struct groups *g, const int64_t *keys, const struct rowsel *sel, size_t k)
{
	unsigned t;

	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 256;
		int64_t *nk = realloc(g->keys, cap * (g->n_keys ? g->n_keys : 1) * sizeof(*nk));
		uint32_t *nf;

		if (!nk)
			return -ENOMEM;
		g->keys = nk;
		nf = realloc(g->first, cap * g->n_tabs * sizeof(*nf));
		if (!nf)
			return -ENOMEM;
		g->first = nf;
		g->cap = cap;
	}
	if (g->n_keys)
		memcpy(&g->keys[g->n * g->n_keys], keys, g->n_keys * sizeof(*keys));
	for (t = 0; t < g->n_tabs; t++)
		g->first[g->n * g->n_tabs + t] = sel ? row_at(&sel[t], k) : NO_ROW;
	return (int64_t)g->n++;
}

/* The group of @keys, made on first sight. Return: its index or -ENOMEM. */
static int64_t find_group(struct groups *g, const int64_t *keys, const struct rowsel *sel, size_t k)
{
	size_t s;
	int64_t id;

	if (g->n_keys == 1 && keys[0] >= 0 && keys[0] < (int64_t)DIRECT_MAX) {
		size_t v = (size_t)keys[0];

		if (v >= g->n_direct) {
			size_t n = g->n_direct ? g->n_direct : 1024;
			uint32_t *d;

			while (n <= v)
				n *= 2;
			d = realloc(g->direct, n * sizeof(*d));
			if (!d)
				return -ENOMEM;
			memset(d + g->n_direct, 0, (n - g->n_direct) * sizeof(*d));
			g->direct = d;
			g->n_direct = n;
		}
		if (g->direct[v])
			return g->direct[v] - 1;
		id = new_group(g, keys, sel, k);
		if (id >= 0)
			g->direct[v] = (uint32_t)id + 1;
		return id;
	}
	if ((g->n + 1) * 2 > g->n_slots && rehash(g, g->n_slots ? g->n_slots * 2 : 1024) < 0)
		return -ENOMEM;
	s = hash_keys(keys, g->n_keys) & (g->n_slots - 1);
	while (g->slots[s]) {
		uint32_t i = g->slots[s] - 1;

		if (memcmp(&g->keys[(size_t)i * g->n_keys], keys, g->n_keys * sizeof(*keys)) == 0)
			return i;
		s = (s + 1) & (g->n_slots - 1);
	}
	id = new_group(g, keys, sel, k);
	if (id >= 0)
		g->slots[s] = (uint32_t)id + 1;
	return id;
}

/* ----------------------------------------------------------- columns ---- */

/* Contiguous cells of one encoding: NULL sentinels become TP_NULL_INT. */
#define FETCH_RUN(type, is_null)                                               \
	do {                                                                   \
		const type *d_ = (const type *)col->data + sel->base;          \
		for (k = 0; k < m; k++)                                        \
			out[k] = is_null(d_[k]) ? TP_NULL_INT : (int64_t)d_[k]; \
	} while (0)
#define IS_I8_NULL(v) ((v) == INT8_MIN)
#define IS_I16_NULL(v) ((v) == INT16_MIN)
#define IS_I32_NULL(v) ((v) == INT32_MIN)
#define IS_ID_NULL(v) ((v) == 0)

/*
 * Integer-like cells of column @c at @sel (NO_ROW and NULL: TP_NULL_INT;
 * string id 0 is NULL). A run of the first table is read straight from
 * the cells of each encoding; scattered rows through tp_get_int().
 */
static void fetch_int(const struct tp_table *t, uint32_t c, const struct rowsel *sel, size_t m,
		      int64_t *out)
{
	const struct tp_col *col = &t->cols[c];
	bool is_str = t->specs[c].type == TP_STR;
	size_t k;

	if (!sel->rows) {
		switch (col->enc) {
		case TP_ENC_I8:
			FETCH_RUN(int8_t, IS_I8_NULL);
			return;
		case TP_ENC_I16:
			FETCH_RUN(int16_t, IS_I16_NULL);
			return;
		case TP_ENC_I32:
			FETCH_RUN(int32_t, IS_I32_NULL);
			return;
		case TP_ENC_I64:
			memcpy(out, (const int64_t *)col->data + sel->base, m * sizeof(*out));
			return;
		case TP_ENC_U8:
			FETCH_RUN(uint8_t, IS_ID_NULL);
			return;
		case TP_ENC_U16:
			FETCH_RUN(uint16_t, IS_ID_NULL);
			return;
		case TP_ENC_U32:
			FETCH_RUN(uint32_t, IS_ID_NULL);
			return;
		case TP_ENC_BITS:
			/* Code 0 is NULL, of strings as of integers. */
			for (k = 0; k < m; k++) {
				uint64_t code = tp_bits_get(col->data, col->bits, col->mask,
							    sel->base + k);

				out[k] = code ? col->base + (int64_t)(code - 1) : TP_NULL_INT;
			}
			return;
		default:
			break;
		}
	}
	for (k = 0; k < m; k++) {
		uint32_t r = row_at(sel, k);
		int64_t v = r == NO_ROW ? TP_NULL_INT : tp_get_int(t, c, r);

		out[k] = is_str && v == 0 ? TP_NULL_INT : v;
	}
}

/* Real cells at @sel (NO_ROW and NULL: NaN). */
static void fetch_real(const struct tp_table *t, uint32_t c, const struct rowsel *sel, size_t m,
		       double *out)
{
	const double *d = tp_col_real(t, c);
	size_t k;

	for (k = 0; k < m; k++) {
		uint32_t r = row_at(sel, k);

		out[k] = r == NO_ROW ? NAN : d[r];
	}
}

static bool compare(enum tp_agg_cmp cmp, int64_t cell, int64_t v)
{
	switch (cmp) {
	case TP_AGG_EQ:
		return cell == v;
	case TP_AGG_NE:
		return cell != v;
	case TP_AGG_LT:
		return cell < v;
	case TP_AGG_LE:
		return cell <= v;
	case TP_AGG_GT:
		return cell > v;
	case TP_AGG_GE:
		return cell >= v;
	default:
		return true; /* TP_AGG_NOT_NULL */
	}
}

/*
 * Whether string @id matches @f's GLOB or LIKE pattern, by SQLite's own
 * matchers (LIKE: ASCII case-folded, as SQLite's default); each string is
 * matched once, then remembered in @memo (0 unknown, 1 yes, 2 no).
 */
static bool matches(const struct tp_agg_filter *f, uint32_t id, const struct tp_strings *strings,
		    uint8_t *memo)
{
	const char *s;
	bool yes;

	if (memo && id <= strings->n && memo[id])
		return memo[id] == 1;
	s = tp_str_get(strings, id);
	yes = s && (f->cmp == TP_AGG_GLOB ? sqlite3_strglob(f->pattern, s) == 0
					  : sqlite3_strlike(f->pattern, s, 0) == 0);
	if (memo && id <= strings->n)
		memo[id] = yes ? 1 : 2;
	return yes;
}

/* Keeps in @keep only the rows whose @cells pass @f. */
static void apply_filter(const struct tp_agg_filter *f, const int64_t *cells, size_t m,
			 uint8_t *keep, const struct tp_strings *strings, uint8_t *memo)
{
	size_t k;
	unsigned i;

	for (k = 0; k < m; k++) {
		int64_t cell = cells[k];
		bool ok;

		if (!keep[k])
			continue;
		if (f->cmp == TP_AGG_IS_NULL) {
			keep[k] = cell == TP_NULL_INT;
			continue;
		}
		if (cell == TP_NULL_INT) {
			keep[k] = 0;
			continue;
		}
		switch (f->cmp) {
		case TP_AGG_IN:
			ok = false;
			for (i = 0; i < f->n_in && !ok; i++)
				ok = f->in[i] == cell;
			break;
		case TP_AGG_GLOB:
		case TP_AGG_LIKE:
			ok = matches(f, (uint32_t)cell, strings, memo);
			break;
		default:
			ok = compare(f->cmp, cell, f->v);
			break;
		}
		keep[k] = ok != f->is_not;
	}
}

/* ------------------------------------------------------- aggregating ---- */

static bool ref_same(struct tp_agg_ref a, struct tp_agg_ref b)
{
	return a.tab == b.tab && a.col == b.col;
}

static bool is_real(const struct tp_agg_plan *plan, const struct tp_agg_out *o)
{
	return o->fn != TP_AGG_COUNT_STAR &&
	       plan->tabs[o->ref.tab]->specs[o->ref.col].type == TP_REAL;
}

/* Folds one block into the states of output @o. Return: 0, or 1 on overflow. */
static int fold(const struct tp_agg_plan *plan, const struct tp_agg_out *o,
		const struct rowsel *sel, const uint32_t *gid, size_t m, int64_t *iv, double *rv,
		struct agg_state *st, bool *saw_negative)
{
	size_t k;

	if (o->fn == TP_AGG_COUNT_STAR) {
		for (k = 0; k < m; k++)
			st[gid[k]].cnt++;
		return 0;
	}
	if (is_real(plan, o)) {
		fetch_real(plan->tabs[o->ref.tab], o->ref.col, &sel[o->ref.tab], m, rv);
		for (k = 0; k < m; k++) {
			struct agg_state *s = &st[gid[k]];
			double v = rv[k];

			if (isnan(v))
				continue;
			if (s->cnt == 0 || v < s->rmin)
				s->rmin = v;
			if (s->cnt == 0 || v > s->rmax)
				s->rmax = v;
			s->cnt++;
			s->rsum += v;
		}
		return 0;
	}
	fetch_int(plan->tabs[o->ref.tab], o->ref.col, &sel[o->ref.tab], m, iv);
	switch (o->fn) {
	case TP_AGG_COUNT:
		for (k = 0; k < m; k++)
			st[gid[k]].cnt += iv[k] != TP_NULL_INT;
		return 0;
	case TP_AGG_MIN:
	case TP_AGG_MAX:
		for (k = 0; k < m; k++) {
			struct agg_state *s = &st[gid[k]];
			int64_t v = iv[k];

			if (v == TP_NULL_INT)
				continue;
			if (s->cnt == 0 || v < s->imin)
				s->imin = v;
			if (s->cnt == 0 || v > s->imax)
				s->imax = v;
			s->cnt++;
		}
		return 0;
	case TP_AGG_SUM:
		for (k = 0; k < m; k++) {
			struct agg_state *s = &st[gid[k]];
			int64_t v = iv[k];

			if (v == TP_NULL_INT)
				continue;
			s->cnt++;
			if (__builtin_add_overflow(s->isum, v, &s->isum))
				return 1;
		}
		return 0;
	default:
		/*
		 * TOTAL and AVG: SQLite 3.40 adds the values as doubles. While
		 * every partial sum stays within 2^53 that is exact, so the
		 * integer sum converted at the end is the same number; past that
		 * SQLite's rounding is its own to reproduce.
		 */
		for (k = 0; k < m; k++) {
			struct agg_state *s = &st[gid[k]];
			int64_t v = iv[k];

			if (v == TP_NULL_INT)
				continue;
			s->cnt++;
			*saw_negative |= v < 0;
			if (__builtin_add_overflow(s->isum, v, &s->isum) || s->isum > EXACT_MAX ||
			    s->isum < -EXACT_MAX)
				return 1;
		}
		return 0;
	}
}

/* ----------------------------------------------------------- results ---- */

struct sort_ctx {
	const struct groups *g;
	const struct tp_agg_plan *plan;
	const struct tp_strings *strings;
};

static int cmp_groups(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *c = arg;
	const int64_t *ka = &c->g->keys[(size_t)*(const uint32_t *)a * c->g->n_keys];
	const int64_t *kb = &c->g->keys[(size_t)*(const uint32_t *)b * c->g->n_keys];
	unsigned i;

	for (i = 0; i < c->g->n_keys; i++) {
		const struct tp_agg_ref *r = &c->plan->keys[i];
		int d;

		if (ka[i] == kb[i])
			continue;
		if (ka[i] == TP_NULL_INT || kb[i] == TP_NULL_INT)
			return ka[i] == TP_NULL_INT ? -1 : 1;
		if (c->plan->tabs[r->tab]->specs[r->col].type == TP_STR) {
			d = strcmp(tp_str_get(c->strings, (uint32_t)ka[i]),
				   tp_str_get(c->strings, (uint32_t)kb[i]));
			if (d)
				return d;
			continue;
		}
		return ka[i] < kb[i] ? -1 : 1;
	}
	return 0;
}

/* The cell of column @r at @row (a table row, maybe NO_ROW). */
static struct tp_agg_cell column_cell(const struct tp_agg_plan *plan, struct tp_agg_ref r,
				      uint32_t row)
{
	const struct tp_table *t = plan->tabs[r.tab];
	struct tp_agg_cell cell = {TP_AGG_NULL, {0}};
	int64_t v;

	if (row == NO_ROW)
		return cell;
	switch (t->specs[r.col].type) {
	case TP_REAL:
		cell.u.r = tp_col_real(t, r.col)[row];
		if (!isnan(cell.u.r))
			cell.type = TP_AGG_REAL;
		break;
	case TP_STR:
		cell.u.s = tp_get_str(t, r.col, row);
		if (cell.u.s)
			cell.type = TP_AGG_STR;
		break;
	default:
		v = tp_get_int(t, r.col, row);
		if (v != TP_NULL_INT) {
			cell.type = TP_AGG_INT;
			cell.u.i = v;
		}
		break;
	}
	return cell;
}

static struct tp_agg_cell agg_cell(const struct tp_agg_plan *plan, const struct tp_agg_out *o,
				   const struct agg_state *s)
{
	struct tp_agg_cell cell = {TP_AGG_NULL, {0}};
	bool real = is_real(plan, o);
	double rsum = real ? s->rsum : (double)s->isum;

	switch (o->fn) {
	case TP_AGG_COUNT_STAR:
	case TP_AGG_COUNT:
		cell.type = TP_AGG_INT;
		cell.u.i = s->cnt;
		break;
	case TP_AGG_TOTAL:
		cell.type = TP_AGG_REAL;
		cell.u.r = rsum;
		break;
	case TP_AGG_AVG:
		if (s->cnt) {
			cell.type = TP_AGG_REAL;
			cell.u.r = rsum / (double)s->cnt;
		}
		break;
	case TP_AGG_SUM:
		if (s->cnt) {
			cell.type = real ? TP_AGG_REAL : TP_AGG_INT;
			if (real)
				cell.u.r = s->rsum;
			else
				cell.u.i = s->isum;
		}
		break;
	case TP_AGG_MIN:
	case TP_AGG_MAX:
		if (s->cnt) {
			cell.type = real ? TP_AGG_REAL : TP_AGG_INT;
			if (real)
				cell.u.r = o->fn == TP_AGG_MIN ? s->rmin : s->rmax;
			else
				cell.u.i = o->fn == TP_AGG_MIN ? s->imin : s->imax;
		}
		break;
	default:
		break;
	}
	return cell;
}

static int build_result(const struct tp_agg_plan *plan, const struct groups *g,
			struct agg_state *const *st, const struct tp_strings *strings,
			struct tp_agg_result *res)
{
	struct sort_ctx ctx = {g, plan, strings};
	uint32_t *order = malloc((g->n ? g->n : 1) * sizeof(*order));
	size_t i;
	unsigned c;

	res->n_cols = plan->n_outs;
	res->n_rows = g->n;
	res->cells = calloc(g->n * plan->n_outs + 1, sizeof(*res->cells));
	if (!order || !res->cells) {
		free(order);
		return -ENOMEM;
	}
	for (i = 0; i < g->n; i++)
		order[i] = (uint32_t)i;
	if (plan->n_keys)
		qsort_r(order, g->n, sizeof(*order), cmp_groups, &ctx);
	for (i = 0; i < g->n; i++) {
		uint32_t gi = order[i];

		for (c = 0; c < plan->n_outs; c++) {
			const struct tp_agg_out *o = &plan->outs[c];
			struct tp_agg_cell *cell = &res->cells[i * plan->n_outs + c];

			if (o->fn == TP_AGG_COLUMN)
				*cell = column_cell(plan, o->ref,
						    g->first[(size_t)gi * g->n_tabs + o->ref.tab]);
			else
				*cell = agg_cell(plan, o, &st[c][gi]);
		}
	}
	free(order);
	return 0;
}

/* ------------------------------------------------------------ driver ---- */

struct block {
	struct rowsel sel[TP_AGG_MAX_TABLES];
	uint32_t rows[TP_AGG_MAX_TABLES][BLOCK];
	uint32_t orig[BLOCK]; /* after select_rows: kept row k was block row orig[k] */
	uint32_t gid[BLOCK];
	int64_t keys[TP_AGG_MAX_KEYS][BLOCK];
	int64_t iv[BLOCK];
	double rv[BLOCK];
	uint8_t keep[BLOCK];
	/* GLOB / LIKE: the string pool and, per filter, what each string gave. */
	const struct tp_strings *strings;
	uint8_t *memo[TP_AGG_MAX_FILTERS];
};

/*
 * Block rows [start, start + m) of the first table (@base_rows[start..], or
 * the table's rows start.. if NULL), the rows the joins reach from them,
 * less what the inner joins and the WHERE terms drop: b->sel[t], b->orig.
 * Return: the rows kept.
 */
static size_t select_rows(const struct tp_agg_plan *plan, struct block *b,
			  const uint32_t *base_rows, size_t start, size_t m)
{
	bool may_drop = plan->n_filters > 0;
	unsigned t, f;
	size_t k, n;

	b->sel[0].rows = base_rows ? base_rows + start : NULL;
	b->sel[0].base = (uint32_t)start;
	for (t = 1; t < plan->n_tabs; t++)
		may_drop |= !plan->joins[t].is_left;
	if (may_drop)
		memset(b->keep, 1, m);
	for (t = 1; t < plan->n_tabs; t++) {
		const struct tp_agg_ref *src = &plan->joins[t].src;
		int64_t n_rows = (int64_t)plan->tabs[t]->n_rows;

		fetch_int(plan->tabs[src->tab], src->col, &b->sel[src->tab], m, b->iv);
		for (k = 0; k < m; k++) {
			int64_t v = b->iv[k];
			bool hit = v >= 0 && v < n_rows;

			b->rows[t][k] = hit ? (uint32_t)v : NO_ROW;
			if (!plan->joins[t].is_left)
				b->keep[k] &= hit;
		}
		b->sel[t].rows = b->rows[t];
		b->sel[t].base = 0;
	}
	for (f = 0; f < plan->n_filters; f++) {
		const struct tp_agg_filter *fl = &plan->filters[f];

		fetch_int(plan->tabs[fl->ref.tab], fl->ref.col, &b->sel[fl->ref.tab], m, b->iv);
		apply_filter(fl, b->iv, m, b->keep, b->strings, b->memo[fl->slot]);
	}
	k = 0;
	if (may_drop) {
		while (k < m && b->keep[k])
			k++;
	} else {
		k = m;
	}
	for (n = 0; n < m; n++)
		b->orig[n] = (uint32_t)n;
	if (k == m)
		return m; /* the usual case: every row stays */
	/* Some went: list the first table's rows too, and close the gaps. */
	for (n = 0; n < m; n++)
		b->rows[0][n] = row_at(&b->sel[0], n);
	b->sel[0].rows = b->rows[0];
	for (n = k; k < m; k++) {
		if (!b->keep[k])
			continue;
		for (t = 0; t < plan->n_tabs; t++)
			b->rows[t][n] = b->rows[t][k];
		b->orig[n] = (uint32_t)k;
		n++;
	}
	return n;
}

/* The groups of one pass and the states of each aggregate output. */
struct run {
	struct groups g;
	struct agg_state *st[TP_AGG_MAX_OUTS];
	size_t caps;
	bool saw_negative; /* TOTAL or AVG of integers met a negative value */
};

static void run_fini(struct run *r)
{
	unsigned c;

	for (c = 0; c < TP_AGG_MAX_OUTS; c++)
		free(r->st[c]);
	groups_fini(&r->g);
	memset(r, 0, sizeof(*r));
}

/* Every state array as long as the group array. Return: 0 or -ENOMEM. */
static int grow_states(const struct tp_agg_plan *plan, struct run *r)
{
	size_t cap = r->g.cap > r->g.n ? r->g.cap : r->g.n;
	unsigned c;

	if (r->g.n <= r->caps && r->caps)
		return 0;
	for (c = 0; c < plan->n_outs; c++) {
		struct agg_state *s;

		if (plan->outs[c].fn == TP_AGG_COLUMN)
			continue;
		s = realloc(r->st[c], (cap ? cap : 1) * sizeof(*s));
		if (!s)
			return -ENOMEM;
		memset(s + r->caps, 0, ((cap ? cap : 1) - r->caps) * sizeof(*s));
		r->st[c] = s;
	}
	r->caps = cap ? cap : 1;
	return 0;
}

/* b->gid[k] for the @kept rows of the block. Return: 0 or -ENOMEM. */
static int assign_groups(const struct tp_agg_plan *plan, struct run *r, struct block *b,
			 size_t kept)
{
	struct groups *g = &r->g;
	size_t k;
	unsigned i;

	if (plan->n_keys == 0) {
		memset(b->gid, 0, kept * sizeof(b->gid[0]));
		return 0;
	}
	for (i = 0; i < plan->n_keys; i++)
		fetch_int(plan->tabs[plan->keys[i].tab], plan->keys[i].col,
			  &b->sel[plan->keys[i].tab], kept, b->keys[i]);
	for (k = 0; k < kept; k++) {
		int64_t key[TP_AGG_MAX_KEYS], id, v = b->keys[0][k];

		/* One key seen before: straight from the flat array. */
		if (g->n_keys == 1 && v >= 0 && (uint64_t)v < g->n_direct && g->direct[v]) {
			b->gid[k] = g->direct[v] - 1;
			continue;
		}
		for (i = 0; i < plan->n_keys; i++)
			key[i] = b->keys[i][k];
		id = find_group(g, key, b->sel, k);
		if (id < 0)
			return -ENOMEM;
		b->gid[k] = (uint32_t)id;
	}
	return 0;
}

/*
 * Folds the rows of @plan's first table (@base_rows, or all rows if NULL;
 * @n of them) into @r.
 * Return: 0; 1 if SQLite must answer (overflow); -ENOMEM.
 */
static int run_rows(const struct tp_agg_plan *plan, struct run *r, struct block *b)
{
	size_t n = plan->matches_nothing ? 0 : plan->tabs[0]->n_rows, start, m;
	unsigned c;
	int rc;

	r->g.n_keys = plan->n_keys;
	r->g.n_tabs = plan->n_tabs;
	if (plan->n_keys == 0 && new_group(&r->g, NULL, NULL, 0) < 0)
		return -ENOMEM;
	for (start = 0; start < n; start += m) {
		size_t kept;

		m = n - start < BLOCK ? n - start : BLOCK;
		kept = select_rows(plan, b, NULL, start, m);
		rc = assign_groups(plan, r, b, kept);
		if (rc == 0)
			rc = grow_states(plan, r);
		if (rc < 0)
			return rc;
		for (c = 0; c < plan->n_outs; c++) {
			if (plan->outs[c].fn == TP_AGG_COLUMN)
				continue;
			if (fold(plan, &plan->outs[c], b->sel, b->gid, kept, b->iv, b->rv, r->st[c],
				 &r->saw_negative))
				return 1;
		}
	}
	return grow_states(plan, r);
}

/* ----------------------------------------------------------- roll-up ---- */

/*
 * GROUP BY p.upid over sched JOIN thread JOIN process only needs the sums
 * per sched.utid: every joined row, filter and key follows from that one
 * "pivot" cell. So the rows are first folded per pivot value (one flat
 * array, no joins), and the few partial states are then joined and merged
 * into the real groups; a pivot value that reaches no row (or NULL) joins
 * the same way for all its rows, so it is just one more partial. @p1 gets the first pass: the first table alone,
 * its own WHERE terms, grouped by the pivot.
 * Return: true if @plan has that shape.
 */
static bool rollup_plan(const struct tp_agg_plan *plan, struct tp_agg_plan *p1)
{
	struct tp_agg_ref pivot = plan->joins[1].src;
	unsigned t, i;

	if (plan->n_tabs < 2 || pivot.tab != 0 ||
	    plan->tabs[0]->specs[pivot.col].type == TP_STR)
		return false;
	for (t = 2; t < plan->n_tabs; t++) {
		if (plan->joins[t].src.tab == 0)
			return false;
	}
	for (i = 0; i < plan->n_keys; i++) {
		if (plan->keys[i].tab == 0 && !ref_same(plan->keys[i], pivot))
			return false;
	}
	memset(p1, 0, sizeof(*p1));
	p1->tabs[0] = plan->tabs[0];
	p1->n_tabs = 1;
	p1->matches_nothing = plan->matches_nothing;
	p1->keys[0] = pivot;
	p1->n_keys = 1;
	for (i = 0; i < plan->n_outs; i++) {
		const struct tp_agg_out *o = &plan->outs[i];

		if (o->fn == TP_AGG_COLUMN ? o->ref.tab == 0 && !ref_same(o->ref, pivot)
					   : o->fn != TP_AGG_COUNT_STAR && o->ref.tab != 0)
			return false;
		p1->outs[i] = *o;
		if (o->fn == TP_AGG_COLUMN)
			p1->outs[i].ref = pivot;
	}
	p1->n_outs = plan->n_outs;
	for (i = 0; i < plan->n_filters; i++) {
		if (plan->filters[i].ref.tab == 0)
			p1->filters[p1->n_filters++] = plan->filters[i];
	}
	return true;
}

/* Adds @src's values into @dst. Return: 0, or 1 on overflow. */
static int merge(const struct tp_agg_plan *plan, const struct tp_agg_out *o,
		 struct agg_state *dst, const struct agg_state *src)
{
	bool real = is_real(plan, o);

	if (src->cnt == 0)
		return 0;
	if (dst->cnt == 0) {
		*dst = *src;
		return 0;
	}
	switch (o->fn) {
	case TP_AGG_MIN:
	case TP_AGG_MAX:
		if (real) {
			dst->rmin = src->rmin < dst->rmin ? src->rmin : dst->rmin;
			dst->rmax = src->rmax > dst->rmax ? src->rmax : dst->rmax;
		} else {
			dst->imin = src->imin < dst->imin ? src->imin : dst->imin;
			dst->imax = src->imax > dst->imax ? src->imax : dst->imax;
		}
		break;
	case TP_AGG_SUM:
	case TP_AGG_TOTAL:
	case TP_AGG_AVG:
		if (real) {
			dst->rsum += src->rsum;
			break;
		}
		if (__builtin_add_overflow(dst->isum, src->isum, &dst->isum) ||
		    (o->fn != TP_AGG_SUM && (dst->isum > EXACT_MAX || dst->isum < -EXACT_MAX)))
			return 1;
		break;
	default:
		break;
	}
	dst->cnt += src->cnt;
	return 0;
}

/*
 * The second pass: each pivot group of @r1 stands for its rows; join it,
 * filter it, key it, and merge its states into @r.
 * Return: 0; 1 if SQLite must answer; -ENOMEM.
 */
static int roll_up(const struct tp_agg_plan *plan, const struct run *r1, struct run *r,
		   struct block *b)
{
	struct tp_agg_plan *p2 = malloc(sizeof(*p2));
	uint32_t *reps = malloc((r1->g.n ? r1->g.n : 1) * sizeof(*reps));
	size_t start, m, k, i;
	unsigned c;
	int rc = -ENOMEM;

	if (!p2 || !reps)
		goto out;
	/* The first pass applied the first table's own WHERE terms. */
	*p2 = *plan;
	p2->n_filters = 0;
	for (i = 0; i < plan->n_filters; i++) {
		if (plan->filters[i].ref.tab != 0)
			p2->filters[p2->n_filters++] = plan->filters[i];
	}
	for (i = 0; i < r1->g.n; i++)
		reps[i] = r1->g.first[i];
	r->g.n_keys = plan->n_keys;
	r->g.n_tabs = plan->n_tabs;
	if (plan->n_keys == 0 && new_group(&r->g, NULL, NULL, 0) < 0)
		goto out;
	for (start = 0; start < r1->g.n; start += m) {
		size_t kept;

		m = r1->g.n - start < BLOCK ? r1->g.n - start : BLOCK;
		kept = select_rows(p2, b, reps, start, m);
		rc = assign_groups(p2, r, b, kept);
		if (rc == 0)
			rc = grow_states(p2, r);
		if (rc < 0)
			goto out;
		for (k = 0; k < kept; k++) {
			size_t from = start + b->orig[k];

			for (c = 0; c < plan->n_outs; c++) {
				if (plan->outs[c].fn == TP_AGG_COLUMN)
					continue;
				if (merge(plan, &plan->outs[c], &r->st[c][b->gid[k]], &r1->st[c][from])) {
					rc = 1;
					goto out;
				}
			}
		}
	}
	rc = grow_states(plan, r);
out:
	free(p2);
	free(reps);
	return rc;
}

static bool has_exact_sum(const struct tp_agg_plan *plan)
{
	unsigned c;

	for (c = 0; c < plan->n_outs; c++) {
		const struct tp_agg_out *o = &plan->outs[c];

		if ((o->fn == TP_AGG_TOTAL || o->fn == TP_AGG_AVG) && !is_real(plan, o))
			return true;
	}
	return false;
}

int tp_agg_exec(const struct tp_agg_plan *plan, const struct tp_strings *strings,
		struct tp_agg_result *res)
{
	struct tp_agg_plan *p1 = malloc(sizeof(*p1));
	struct block *b = malloc(sizeof(*b));
	struct run r = {0}, r1 = {0};
	unsigned c;
	int rc = -ENOMEM;

	memset(res, 0, sizeof(*res));
	if (!p1 || !b)
		goto out;
	memset(b->memo, 0, sizeof(b->memo));
	b->strings = strings;
	for (c = 0; c < plan->n_filters; c++) {
		/* Without memory for the memo each string is matched every time. */
		if (plan->filters[c].cmp == TP_AGG_GLOB || plan->filters[c].cmp == TP_AGG_LIKE)
			b->memo[plan->filters[c].slot] = calloc((size_t)strings->n + 1, 1);
	}
	if (rollup_plan(plan, p1)) {
		rc = run_rows(p1, &r1, b);
		/* Negative values make SQLite's row-order double sums ours no longer. */
		if (rc == 0 && !(r1.saw_negative && has_exact_sum(plan))) {
			rc = roll_up(plan, &r1, &r, b);
			if (rc == 0)
				goto done;
		}
		if (rc < 0)
			goto out;
		run_fini(&r);
	}
	rc = run_rows(plan, &r, b);
	if (rc != 0)
		goto out;
done:
	rc = build_result(plan, &r.g, r.st, strings, res);
out:
	run_fini(&r);
	run_fini(&r1);
	for (c = 0; b && c < TP_AGG_MAX_FILTERS; c++)
		free(b->memo[c]);
	free(p1);
	free(b);
	if (rc != 0)
		tp_agg_result_fini(res);
	return rc;
}
void tp_agg_result_fini(struct tp_agg_result *res)
{
	free(res->cells);
	memset(res, 0, sizeof(*res));
}

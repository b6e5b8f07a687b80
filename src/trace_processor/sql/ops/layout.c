// SPDX-License-Identifier: Apache-2.0
/*
 * layout.c - experimental_slice_layout('track ids'): the slices of several
 * tracks laid out on one, as Perfetto's UI draws a track group. Each depth
 * 0 slice and its descendants form a box (start, end, depth); boxes are
 * placed tallest first (then by start, then by first id) at the lowest run
 * of free rows over their time, and every slice gets layout_depth = its
 * depth + its box's row. Results are cached per argument string (the trace
 * does not change while the connection lives), as upstream does.
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "trace_processor/sql/ops/ops_int.h"
#include "trace_processor/storage/storage.h"

/* Most layouts kept in the cache; the oldest goes first. */
#define LAYOUT_CACHE_MAX 256

struct cached_layout {
	char *key;
	uint32_t *id, *depth;
	size_t n;
	struct cached_layout *next;
};

struct layout_ctx {
	struct tp_db *db;
	struct cached_layout *cache;
	size_t n_cached;
};

struct group {
	int64_t start, end;
	uint32_t max_depth, layout_depth;
};

/* One row of the layout: disjoint [start, end) ranges sorted by start. */
struct lrow {
	int64_t *start, *end;
	size_t n, cap;
};

static void cached_free(struct cached_layout *c)
{
	if (!c)
		return;
	free(c->key);
	free(c->id);
	free(c->depth);
	free(c);
}

/* The first range of @r starting at or after @ts. */
static size_t lrow_lower(const struct lrow *r, int64_t ts)
{
	size_t lo = 0, hi = r->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->start[mid] < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool lrow_free(const struct lrow *r, int64_t start, int64_t end)
{
	size_t i;

	if (!r->n || start >= r->end[r->n - 1])
		return true;
	i = lrow_lower(r, start);
	if (i < r->n && r->start[i] < end)
		return false;
	if (i > 0 && r->end[i - 1] > start)
		return false;
	return true;
}

static int lrow_mark(struct lrow *r, int64_t start, int64_t end)
{
	size_t i = r->n;

	if (r->n == r->cap) {
		size_t cap = r->cap;

		if (ops_grow((void **)&r->start, &cap, r->n + 1, sizeof(*r->start)) < 0)
			return -ENOMEM;
		cap = r->cap;
		if (ops_grow((void **)&r->end, &cap, r->n + 1, sizeof(*r->end)) < 0)
			return -ENOMEM;
		r->cap = cap;
	}
	/* Almost always an append: boxes come mostly in time order. */
	if (r->n && start < r->start[r->n - 1]) {
		i = lrow_lower(r, start);
		memmove(r->start + i + 1, r->start + i, (r->n - i) * sizeof(*r->start));
		memmove(r->end + i + 1, r->end + i, (r->n - i) * sizeof(*r->end));
	}
	r->start[i] = start;
	r->end[i] = end;
	r->n++;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static const struct group *g_sort_groups;

static int cmp_group(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct group *ga = &g_sort_groups[x], *gb = &g_sort_groups[y];

	if (ga->max_depth != gb->max_depth)
		return ga->max_depth > gb->max_depth ? -1 : 1;
	if (ga->start != gb->start)
		return ga->start < gb->start ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* The index of @row among the first @n of sorted @rows, or @n. */
static size_t index_of(const uint32_t *rows, size_t n, uint32_t row)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rows[mid] < row)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && rows[lo] == row ? lo : n;
}

/* Parses "1,2,3": tokens that are not plain unsigned 32-bit numbers are skipped. */
static int parse_tracks(const char *s, int64_t **out, size_t *out_n)
{
	size_t n = 0, cap = 0;
	int64_t *v = NULL;

	while (*s) {
		const char *tok = s;
		uint64_t x = 0;
		bool ok = true, digits = false;

		while (*s && *s != ',')
			s++;
		while (tok < s && (*tok == ' ' || *tok == '\t' || *tok == '\n'))
			tok++;
		if (tok < s && *tok == '+')
			tok++;
		for (; tok < s; tok++) {
			if (*tok < '0' || *tok > '9' || x > UINT32_MAX) {
				ok = false;
				break;
			}
			x = x * 10 + (uint64_t)(*tok - '0');
			digits = true;
		}
		if (*s == ',')
			s++;
		if (!ok || !digits || x > UINT32_MAX)
			continue;
		if (ops_grow((void **)&v, &cap, n + 1, sizeof(*v)) < 0) {
			free(v);
			return -ENOMEM;
		}
		v[n++] = (int64_t)x;
	}
	*out = v;
	*out_n = n;
	return 0;
}

/* The layout of the slices of @tracks, in id order, into @c. */
static int compute(struct tp_db *db, const int64_t *tracks, size_t n_tracks,
		   struct cached_layout *c)
{
	struct tp_table *sl = &db->slice;
	uint32_t *rows = NULL, *slice_group = NULL, *order = NULL;
	struct group *groups = NULL;
	struct lrow *occupied = NULL;
	size_t n_rows = 0, cap = 0, n_groups = 0, groups_cap = 0, n_occ = 0, i, k;
	int err = -ENOMEM;

	for (k = 0; k < n_tracks; k++) {
		const uint32_t *r;
		int64_t n = tp_col_lookup(sl, SLICE_TRACK_ID, tracks[k], &r);

		if (n < 0)
			goto out;
		/* The same track named twice counts once. */
		for (i = 0; i < k && tracks[i] != tracks[k]; i++)
			;
		if (i < k || !n)
			continue;
		if (ops_grow((void **)&rows, &cap, n_rows + (size_t)n, sizeof(*rows)) < 0)
			goto out;
		memcpy(rows + n_rows, r, (size_t)n * sizeof(*rows));
		n_rows += (size_t)n;
	}
	err = 0;
	c->n = n_rows;
	if (!n_rows)
		goto out;
	err = -ENOMEM;
	sort_n(rows, n_rows, sizeof(*rows), cmp_u32);
	slice_group = malloc(n_rows * sizeof(*slice_group));
	c->id = malloc(n_rows * sizeof(*c->id));
	c->depth = malloc(n_rows * sizeof(*c->depth));
	if (!slice_group || !c->id || !c->depth)
		goto out;

	/* Boxes: a parent comes before its children in id order (and is on
	 * the same track, so among @rows). */
	for (i = 0; i < n_rows; i++) {
		size_t row = rows[i];
		int64_t depth = tp_get_int(sl, SLICE_DEPTH, row);
		int64_t start = tp_get_int(sl, SLICE_TS, row);
		int64_t dur = tp_get_int(sl, SLICE_DUR, row);
		int64_t parent = tp_get_int(sl, SLICE_PARENT_ID, row);
		int64_t end = dur == -1 ? INT64_MAX : start + dur;
		size_t p = i;
		uint32_t g;

		if (depth < 0 || depth == TP_NULL_INT)
			depth = 0;
		if (parent != TP_NULL_INT && parent >= 0 && (uint64_t)parent < row)
			p = index_of(rows, i, (uint32_t)parent);
		if (p < i) {
			g = slice_group[p];
			if ((uint32_t)depth > groups[g].max_depth)
				groups[g].max_depth = (uint32_t)depth;
			if (end > groups[g].end)
				groups[g].end = end;
		} else {
			if (ops_grow((void **)&groups, &groups_cap, n_groups + 1, sizeof(*groups)) <
			    0)
				goto out;
			g = (uint32_t)n_groups++;
			groups[g].start = start;
			groups[g].end = end;
			groups[g].max_depth = (uint32_t)depth;
			groups[g].layout_depth = 0;
		}
		slice_group[i] = g;
	}

	order = malloc(n_groups * sizeof(*order));
	if (!order)
		goto out;
	for (i = 0; i < n_groups; i++)
		order[i] = (uint32_t)i;
	g_sort_groups = groups;
	sort_n(order, n_groups, sizeof(*order), cmp_group);

	for (k = 0; k < n_groups; k++) {
		struct group *g = &groups[order[k]];
		uint32_t layout = 0, run = 0, r, top;

		for (r = 0;; r++) {
			if (r >= n_occ || lrow_free(&occupied[r], g->start, g->end)) {
				if (!run)
					layout = r;
				if (++run == g->max_depth + 1)
					break;
			} else {
				run = 0;
			}
		}
		g->layout_depth = layout;
		top = layout + g->max_depth;
		if (n_occ <= top) {
			struct lrow *o = realloc(occupied, ((size_t)top + 1) * sizeof(*o));

			if (!o)
				goto out;
			memset(o + n_occ, 0, ((size_t)top + 1 - n_occ) * sizeof(*o));
			occupied = o;
			n_occ = (size_t)top + 1;
		}
		for (r = layout; r <= top; r++) {
			if (lrow_mark(&occupied[r], g->start, g->end) < 0)
				goto out;
		}
	}
	for (i = 0; i < n_rows; i++) {
		int64_t depth = tp_get_int(&db->slice, SLICE_DEPTH, rows[i]);

		c->id[i] = rows[i];
		c->depth[i] = (uint32_t)(depth < 0 ? 0 : depth) + groups[slice_group[i]].layout_depth;
	}
	err = 0;
out:
	for (i = 0; i < n_occ; i++) {
		free(occupied[i].start);
		free(occupied[i].end);
	}
	free(occupied);
	free(order);
	free(groups);
	free(slice_group);
	free(rows);
	return err;
}

/* Returns the cached layout for @key, computing it on first use. */
static int layout_get(struct layout_ctx *lc, const char *key, struct cached_layout **out)
{
	struct cached_layout **p, *c;
	int64_t *tracks = NULL;
	size_t n_tracks = 0;
	int err;

	for (p = &lc->cache; *p; p = &(*p)->next) {
		if (strcmp((*p)->key, key) == 0) {
			c = *p;
			*p = c->next;
			c->next = lc->cache;
			lc->cache = c;
			*out = c;
			return 0;
		}
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->key = strdup(key);
	err = c->key ? parse_tracks(key, &tracks, &n_tracks) : -ENOMEM;
	if (!err)
		err = compute(lc->db, tracks, n_tracks, c);
	free(tracks);
	if (err) {
		cached_free(c);
		return err;
	}
	c->next = lc->cache;
	lc->cache = c;
	if (++lc->n_cached > LAYOUT_CACHE_MAX) {
		for (p = &lc->cache; (*p)->next; p = &(*p)->next)
			;
		cached_free(*p);
		*p = NULL;
		lc->n_cached--;
	}
	*out = c;
	return 0;
}

static int run_layout(void *user, sqlite3_value **argv, struct ops_table *out, char **err)
{
	struct layout_ctx *lc = user;
	struct cached_layout *c;
	const char *key;
	size_t i;

	if (sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
		*err = sqlite3_mprintf("invalid input track id list");
		return -1;
	}
	key = (const char *)sqlite3_value_text(argv[0]);
	if (!key || layout_get(lc, key, &c) < 0 || ops_table_reserve(out, c->n) < 0)
		return -1;
	for (i = 0; i < c->n; i++) {
		size_t r = (size_t)ops_table_append(out);

		ops_set_int(out, 0, r, c->id[i]);
		ops_set_int(out, 1, r, c->depth[i]);
	}
	return 0;
}

static void layout_ctx_destroy(void *p)
{
	struct layout_ctx *lc = p;
	struct cached_layout *c, *next;

	if (!lc)
		return;
	for (c = lc->cache; c; c = next) {
		next = c->next;
		cached_free(c);
	}
	free(lc);
}

static const char *const k_layout_cols[] = {"id INTEGER", "layout_depth INTEGER"};

int ops_layout_register(sqlite3 *conn, struct tp_db *db)
{
	struct layout_ctx *lc = calloc(1, sizeof(*lc));
	struct ops_tfn fn = {
		.name = "experimental_slice_layout",
		.cols = k_layout_cols,
		.n_cols = 2,
		.n_args = 1,
		.run = run_layout,
		.user = lc,
	};

	if (!lc)
		return SQLITE_NOMEM;
	lc->db = db;
	return ops_tfn_register_owned(conn, &fn, layout_ctx_destroy);
}

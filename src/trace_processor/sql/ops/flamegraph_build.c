// SPDX-License-Identifier: Apache-2.0
/*
 * flamegraph_build.c - builds one flamegraph (flamegraph_int.h) from a
 * source tree, with upstream's meaning:
 *  - a frame is a row's name plus its grouping columns; sibling rows of the
 *    same frame merge into one node;
 *  - HIDE_FRAME folds a row into its nearest kept ancestor; HIDE_STACK drops
 *    the row and everything below it; with SHOW_STACK filters only rows
 *    whose kept path matched every one of them count (all filters match the
 *    text of the name and of each grouping column, anywhere in it);
 *  - TOP_DOWN merges from the roots (depth 1, 2, ...); BOTTOM_UP from each
 *    frame with a non-zero value up to its root (depth -1, -2, ...); PIVOT
 *    does both around the frames matching the view pattern, FROM_FRAME only
 *    the downward half;
 *  - each value column gives self_<v> and cumulative_<v>; aggregates (SUM,
 *    ONE_OR_SUMMARY, CONCAT_WITH_COMMA) fold the rows merged into a node;
 *  - nodes whose every cumulative value is zero are dropped, and the rest
 *    laid out breadth first, siblings widest first, x from 0 per half.
 */
#define PCRE2_CODE_UNIT_WIDTH 8

#include <errno.h>
#include <pcre2.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "trace_processor/sql/ops/flamegraph_int.h"

#define HIDE_STACK_BIT (1ull << 63)

struct re {
	pcre2_code *code;
	pcre2_match_data *md;
};

/* What a frame's text matched. */
struct matches {
	uint64_t show;
	bool view, hide_stack, hide_frame;
};

/* Per row: the SHOW_STACK bits of its kept path (or HIDE_STACK_BIT) and the
 * nearest kept row (itself when kept). */
struct path {
	uint64_t bits;
	uint32_t kept;
};

/* Nodes merged by (parent, frame). */
struct interner {
	struct ops_order_map map;
	uint32_t *parent, *rep;
	size_t n, cap, cap_rep;
};

/* Numbers of one column of nodes: integers or reals. */
struct nums {
	bool is_int;
	int64_t *i;
	double *d;
};

struct val {
	int64_t i;
	double d;
};

struct builder {
	const struct fg_source *src;
	const struct fg_query *q;
	uint32_t n;               /* source rows */
	int name_col;
	int *group_cols, *value_cols, *agg_cols;
	struct re view_re, *show_re, *hide_stack_re, *hide_frame_re;
	size_t n_show, n_hide_stack, n_hide_frame;
	uint64_t required;        /* all SHOW_STACK bits */
	uint32_t *frame;          /* row -> frame class */
	struct path *path;
	bool *view_match;
	struct interner down, up;
	uint32_t *down_node;      /* row -> downward node or FG_NONE */
	uint32_t (*bu_path)[2];   /* kept row -> bottom-up (root, leaf) */
	uint32_t (*anchors)[3];   /* pivot: frame, root, leaf */
	size_t n_anchors, cap_anchors;
	uint32_t (*constit)[2];   /* upward aggregate constituents: frame, node */
	size_t n_constit, cap_constit;
	struct nums *self, *cum;  /* per value column, over down + up nodes */
	struct ops_table *aggs;   /* per node: the aggregate columns */
	char **err;
};

static int fail(struct builder *b, const char *fmt, const char *arg)
{
	*b->err = sqlite3_mprintf(fmt, arg);
	return -1;
}

static bool is_down_view(enum fg_view v)
{
	return v == FG_TOP_DOWN || v == FG_PIVOT || v == FG_FROM_FRAME;
}

/* ------------------------------------------------------------ numbers ---- */

static struct val cell_val(const struct ops_cell *c)
{
	struct val v = {0, 0};

	if (c->type == OPS_INT) {
		v.i = c->u.i;
		v.d = (double)c->u.i;
	} else if (c->type == OPS_REAL) {
		v.d = c->u.d;
	}
	return v;
}

static int nums_init(struct nums *n, bool is_int, size_t count)
{
	n->is_int = is_int;
	if (is_int)
		n->i = calloc(count ? count : 1, sizeof(*n->i));
	else
		n->d = calloc(count ? count : 1, sizeof(*n->d));
	return (is_int ? (void *)n->i : (void *)n->d) ? 0 : -ENOMEM;
}

/* Adds @v at @k. Return: -1 when an integer overflows. */
static int nums_add(struct nums *n, size_t k, struct val v)
{
	if (!n->is_int) {
		n->d[k] += v.d;
		return 0;
	}
	return __builtin_add_overflow(n->i[k], v.i, &n->i[k]) ? -1 : 0;
}

static double nums_get(const struct nums *n, size_t k)
{
	return n->is_int ? (double)n->i[k] : n->d[k];
}

/* ------------------------------------------------------------ regexes ---- */

static int re_compile(struct builder *b, struct re *r, const struct fg_regex *spec)
{
	PCRE2_SIZE off;
	int code;

	r->code = pcre2_compile((PCRE2_SPTR)spec->pattern, PCRE2_ZERO_TERMINATED,
				spec->caseless ? PCRE2_CASELESS : 0, &code, &off, NULL);
	if (!r->code)
		return fail(b, "flamegraph: invalid regex '%s'", spec->pattern);
	r->md = pcre2_match_data_create_from_pattern(r->code, NULL);
	return r->md ? 0 : fail(b, "%s", "out of memory");
}

static void re_free(struct re *r)
{
	pcre2_match_data_free(r->md);
	pcre2_code_free(r->code);
}

static bool re_search(const struct re *r, const char *s)
{
	return pcre2_match(r->code, (PCRE2_SPTR)s, strlen(s), 0, 0, r->md, NULL) >= 0;
}

static void match_text(const struct builder *b, const char *s, struct matches *m)
{
	size_t i;

	if (b->q->has_view_pattern && re_search(&b->view_re, s))
		m->view = true;
	for (i = 0; i < b->n_show; i++) {
		if (re_search(&b->show_re[i], s))
			m->show |= 1ull << i;
	}
	for (i = 0; i < b->n_hide_stack && !m->hide_stack; i++)
		m->hide_stack = re_search(&b->hide_stack_re[i], s);
	for (i = 0; i < b->n_hide_frame && !m->hide_frame; i++)
		m->hide_frame = re_search(&b->hide_frame_re[i], s);
}

static void match_cell(const struct builder *b, const struct ops_cell *c, struct matches *m)
{
	char buf[40];

	if (c->type == OPS_TEXT) {
		match_text(b, c->u.s, m);
	} else if (c->type == OPS_INT) {
		snprintf(buf, sizeof(buf), "%lld", (long long)c->u.i);
		match_text(b, buf, m);
	} else if (c->type == OPS_REAL) {
		snprintf(buf, sizeof(buf), "%.15g", c->u.d);
		match_text(b, buf, m);
	}
}

/* ------------------------------------------------------------- config ---- */

static int find_col(struct builder *b, const char *what, const char *name)
{
	int c = ops_table_find(b->src->t, name);

	if (c < 0) {
		*b->err = sqlite3_mprintf("flamegraph: %s: column '%s' does not exist", what, name);
		return -1;
	}
	return c;
}

static bool numeric(const struct builder *b, int c)
{
	return b->src->kinds[c] == OPS_INT || b->src->kinds[c] == OPS_REAL;
}

/* Every output column name once, as upstream checks. */
static bool names_unique(const struct builder *b)
{
	const struct fg_query *q = b->q;
	size_t n = 0, cap = 2 + q->n_grouping + 2 * q->n_values + q->n_aggs, i, j;
	char **names = calloc(cap, sizeof(*names));
	bool ok = names != NULL;

	if (ok) {
		names[n++] = sqlite3_mprintf("depth");
		names[n++] = sqlite3_mprintf("name");
		for (i = 0; i < q->n_grouping; i++)
			names[n++] = sqlite3_mprintf("%s", q->grouping[i]);
		for (i = 0; i < q->n_values; i++) {
			names[n++] = sqlite3_mprintf("self_%s", q->values[i]);
			names[n++] = sqlite3_mprintf("cumulative_%s", q->values[i]);
		}
		for (i = 0; i < q->n_aggs; i++)
			names[n++] = sqlite3_mprintf("%s", q->aggs[i].output);
	}
	for (i = 0; ok && i < n; i++) {
		if (!names[i] || !names[i][0])
			ok = false;
		for (j = 0; ok && j < i; j++)
			ok = strcmp(names[i], names[j]) != 0;
	}
	for (i = 0; i < n; i++)
		sqlite3_free(names[i]);
	free(names);
	return ok;
}

static int resolve(struct builder *b)
{
	const struct fg_query *q = b->q;
	size_t i;
	int c;

	b->name_col = 2;
	if (b->src->kinds[2] != OPS_TEXT)
		return fail(b, "%s", "flamegraph: name column must be a string");
	b->group_cols = calloc(q->n_grouping + 1, sizeof(int));
	b->value_cols = calloc(q->n_values + 1, sizeof(int));
	b->agg_cols = calloc(q->n_aggs + 1, sizeof(int));
	b->show_re = calloc(q->n_filters + 1, sizeof(struct re));
	b->hide_stack_re = calloc(q->n_filters + 1, sizeof(struct re));
	b->hide_frame_re = calloc(q->n_filters + 1, sizeof(struct re));
	if (!b->group_cols || !b->value_cols || !b->agg_cols || !b->show_re || !b->hide_stack_re ||
	    !b->hide_frame_re)
		return fail(b, "%s", "out of memory");
	if (q->has_view_pattern && re_compile(b, &b->view_re, &q->view_pattern) < 0)
		return -1;
	for (i = 0; i < q->n_grouping; i++) {
		if ((b->group_cols[i] = find_col(b, "grouping column", q->grouping[i])) < 0)
			return -1;
	}
	for (i = 0; i < q->n_values; i++) {
		if ((c = find_col(b, "value column", q->values[i])) < 0)
			return -1;
		if (!numeric(b, c))
			return fail(b, "%s", "flamegraph: value columns must be numeric");
		b->value_cols[i] = c;
	}
	if (!q->n_values)
		return fail(b, "%s", "flamegraph: at least one value column is required");
	for (i = 0; i < q->n_filters; i++) {
		const struct fg_filter_spec *f = &q->filters[i];
		struct re *r = f->kind == FG_SHOW_STACK	  ? &b->show_re[b->n_show++]
			       : f->kind == FG_HIDE_STACK ? &b->hide_stack_re[b->n_hide_stack++]
							  : &b->hide_frame_re[b->n_hide_frame++];

		if (re_compile(b, r, &f->re) < 0)
			return -1;
	}
	if (b->n_show > FG_MAX_SHOW_STACK)
		return fail(b, "%s", "flamegraph: too many SHOW_STACK filters");
	b->required = (1ull << b->n_show) - 1;
	for (i = 0; i < q->n_aggs; i++) {
		if (strcmp(q->aggs[i].input, q->aggs[i].output) != 0)
			return fail(b, "%s", "flamegraph: aggregate output must match its source column");
		if ((c = find_col(b, "aggregate column", q->aggs[i].input)) < 0)
			return -1;
		if (b->src->kinds[c] != OPS_NULL && q->aggs[i].agg == FG_SUM && !numeric(b, c))
			return fail(b, "%s", "flamegraph: SUM aggregate columns must be numeric");
		b->agg_cols[i] = c;
	}
	if (!names_unique(b))
		return fail(b, "%s", "flamegraph: invalid configuration");
	return 0;
}

/* ----------------------------------------------------------- interner ---- */

/* A bijective mix of @k (splitmix64's finalizer): ops_order_map probes
 * with the key's own bits, so keys that are not hashes are mixed first. */
static uint64_t mix64(uint64_t k)
{
	k ^= k >> 30;
	k *= 0xbf58476d1ce4e5b9ull;
	k ^= k >> 27;
	k *= 0x94d049bb133111ebull;
	return k ^ (k >> 31);
}

static uint32_t intern(struct interner *t, uint32_t parent, uint32_t frame, uint32_t rep)
{
	uint64_t key = mix64(((uint64_t)(uint32_t)(parent + 1u) << 32) | frame);
	const uint32_t *found = ops_order_map_find(&t->map, key);
	uint32_t id = (uint32_t)t->n;

	if (found)
		return *found;
	if (ops_grow((void **)&t->parent, &t->cap, t->n + 1, sizeof(*t->parent)) < 0 ||
	    ops_grow((void **)&t->rep, &t->cap_rep, t->n + 1, sizeof(*t->rep)) < 0)
		return FG_NONE;
	if (ops_order_map_insert(&t->map, key, id) < 0)
		return FG_NONE;
	t->parent[id] = parent;
	t->rep[id] = rep;
	t->n++;
	return id;
}

static void interner_free(struct interner *t)
{
	ops_order_map_fini(&t->map);
	free(t->parent);
	free(t->rep);
}

/* ------------------------------------------------------------- phases ---- */

/* Frame classes of the rows, their filter matches and the kept paths. */
static int analyze(struct builder *b)
{
	const struct ops_table *t = b->src->t;
	struct ops_order_map classes;
	struct matches *m = NULL;
	size_t n_classes = 0, cap_m = 0, ng = b->q->n_grouping;
	struct ops_cell key[OPS_MAX_COLS + 1];
	bool need = b->q->n_filters || b->q->has_view_pattern;
	uint32_t r;
	size_t i;

	if (ng + 1 > OPS_MAX_COLS)
		return fail(b, "%s", "flamegraph: too many grouping columns");
	b->frame = malloc(b->n * sizeof(*b->frame));
	b->path = malloc(b->n * sizeof(*b->path));
	b->view_match = calloc(b->n, sizeof(*b->view_match));
	if (!b->frame || !b->path || !b->view_match)
		return fail(b, "%s", "out of memory");
	ops_order_map_init(&classes, 16);
	for (r = 0; r < b->n; r++) {
		uint32_t p = b->src->parent[r];
		struct path inherit = {0, FG_NONE};
		const struct matches *mm;
		uint64_t h;
		int ins;

		key[0] = t->cols[b->name_col][r];
		for (i = 0; i < ng; i++)
			key[i + 1] = t->cols[b->group_cols[i]][r];
		h = ops_key_hash(key, (uint32_t)(ng + 1));
		ins = ops_order_map_insert(&classes, h, (uint32_t)n_classes);
		if (ins < 0 ||
		    (ins == 1 && ops_grow((void **)&m, &cap_m, n_classes + 1, sizeof(*m)) < 0)) {
			ops_order_map_fini(&classes);
			free(m);
			return fail(b, "%s", "out of memory");
		}
		if (ins == 1) {
			memset(&m[n_classes], 0, sizeof(*m));
			if (need) {
				for (i = 0; i < ng + 1; i++)
					match_cell(b, &key[i], &m[n_classes]);
			}
			n_classes++;
		}
		b->frame[r] = *ops_order_map_find(&classes, h);
		mm = &m[b->frame[r]];
		if (p != FG_NONE)
			inherit = b->path[p];
		if (mm->hide_frame) {
			b->path[r] = inherit;
			continue;
		}
		b->path[r].kept = r;
		b->view_match[r] = b->q->has_view_pattern && mm->view;
		b->path[r].bits = mm->hide_stack ? HIDE_STACK_BIT : (mm->show | inherit.bits);
	}
	ops_order_map_fini(&classes);
	free(m);
	return 0;
}

static bool contributes(const struct builder *b, uint32_t r)
{
	return b->path[r].kept != FG_NONE && b->path[r].bits == b->required;
}

static int build_down(struct builder *b)
{
	enum fg_view v = b->q->view;
	uint32_t r;

	b->down_node = malloc(b->n * sizeof(*b->down_node));
	if (!b->down_node)
		return fail(b, "%s", "out of memory");
	for (r = 0; r < b->n; r++) {
		uint32_t p = b->src->parent[r];
		uint32_t pn = p == FG_NONE ? FG_NONE : b->down_node[p];
		bool kept_parent, starts;

		if (!is_down_view(v)) {
			b->down_node[r] = FG_NONE;
			continue;
		}
		if (b->path[r].kept != r) {
			b->down_node[r] = pn;
			continue;
		}
		kept_parent = p != FG_NONE && b->path[p].kept != FG_NONE;
		starts = b->view_match[r] || (v == FG_TOP_DOWN && !kept_parent);
		if (!starts && pn == FG_NONE) {
			b->down_node[r] = FG_NONE;
			continue;
		}
		b->down_node[r] = intern(&b->down, starts ? FG_NONE : pn, b->frame[r], r);
		if (b->down_node[r] == FG_NONE)
			return fail(b, "%s", "out of memory");
	}
	return 0;
}

/* Interns the path from kept row @f up to its root; (root, leaf) nodes. */
static int up_path(struct builder *b, uint32_t f, bool with_aggs, uint32_t out[2])
{
	uint32_t up = FG_NONE;

	out[0] = FG_NONE;
	while (f != FG_NONE) {
		uint32_t p = b->src->parent[f];

		up = intern(&b->up, up, b->frame[f], f);
		if (up == FG_NONE)
			return fail(b, "%s", "out of memory");
		if (out[0] == FG_NONE)
			out[0] = up;
		if (with_aggs) {
			if (ops_grow((void **)&b->constit, &b->cap_constit, b->n_constit + 1,
				     sizeof(*b->constit)) < 0)
				return fail(b, "%s", "out of memory");
			b->constit[b->n_constit][0] = f;
			b->constit[b->n_constit++][1] = up;
		}
		f = p == FG_NONE ? FG_NONE : b->path[p].kept;
	}
	out[1] = up;
	return 0;
}

static int build_up(struct builder *b)
{
	bool *active;
	uint32_t r;
	size_t i;

	if (b->q->view == FG_PIVOT) {
		for (r = 0; r < b->n; r++) {
			uint32_t pl[2];

			if (!b->view_match[r])
				continue;
			if (up_path(b, r, b->q->n_aggs && contributes(b, r), pl) < 0)
				return -1;
			if (ops_grow((void **)&b->anchors, &b->cap_anchors, b->n_anchors + 1,
				     sizeof(*b->anchors)) < 0)
				return fail(b, "%s", "out of memory");
			b->anchors[b->n_anchors][0] = r;
			b->anchors[b->n_anchors][1] = pl[0];
			b->anchors[b->n_anchors++][2] = pl[1];
		}
		return 0;
	}
	if (b->q->view != FG_BOTTOM_UP)
		return 0;
	active = calloc(b->n ? b->n : 1, sizeof(*active));
	b->bu_path = malloc((b->n ? b->n : 1) * sizeof(*b->bu_path));
	if (!active || !b->bu_path) {
		free(active);
		return fail(b, "%s", "out of memory");
	}
	for (i = 0; i < b->q->n_values; i++) {
		const struct ops_cell *col = b->src->t->cols[b->value_cols[i]];

		for (r = 0; r < b->n; r++) {
			struct val v = cell_val(&col[r]);

			if (col[r].type == OPS_NULL)
				continue;
			if (v.d < 0) {
				free(active);
				return fail(b, "%s", "flamegraph: value columns must be non-negative");
			}
			if (v.d != 0 && contributes(b, r))
				active[b->path[r].kept] = true;
		}
	}
	for (r = 0; r < b->n; r++) {
		b->bu_path[r][0] = b->bu_path[r][1] = FG_NONE;
		if (active[r] && up_path(b, r, true, b->bu_path[r]) < 0) {
			free(active);
			return -1;
		}
	}
	free(active);
	return 0;
}

static int propagate(const struct interner *t, struct nums *cum, size_t off)
{
	size_t k;

	for (k = t->n; k-- > 0;) {
		uint32_t p = t->parent[k];
		struct val v = {cum->is_int ? cum->i[off + k] : 0,
				cum->is_int ? 0 : cum->d[off + k]};

		if (p != FG_NONE && nums_add(cum, off + p, v) < 0)
			return -1;
	}
	return 0;
}

static int metric(struct builder *b, size_t vi)
{
	const struct ops_cell *col = b->src->t->cols[b->value_cols[vi]];
	bool is_int = b->src->kinds[b->value_cols[vi]] == OPS_INT;
	size_t nd = b->down.n, total = b->down.n + b->up.n;
	struct nums *self = &b->self[vi], *cum = &b->cum[vi];
	const char *ovf = "flamegraph: integer value overflow";
	uint32_t r;
	size_t i;

	if (nums_init(self, is_int, total) < 0 || nums_init(cum, is_int, total) < 0)
		return fail(b, "%s", "out of memory");
	if (is_down_view(b->q->view)) {
		for (r = 0; r < b->n; r++) {
			struct val v = cell_val(&col[r]);
			uint32_t node = b->down_node[r];

			if (col[r].type == OPS_NULL)
				continue;
			if (v.d < 0)
				return fail(b, "%s", "flamegraph: value columns must be non-negative");
			if (node == FG_NONE || !contributes(b, r))
				continue;
			if (nums_add(self, node, v) < 0 || nums_add(cum, node, v) < 0)
				return fail(b, "%s", ovf);
		}
		if (propagate(&b->down, cum, 0) < 0)
			return fail(b, "%s", ovf);
	}
	if (b->q->view == FG_BOTTOM_UP) {
		for (r = 0; r < b->n; r++) {
			struct val v = cell_val(&col[r]);
			const uint32_t *pl;

			if (col[r].type == OPS_NULL || v.d == 0 || !contributes(b, r))
				continue;
			pl = b->bu_path[b->path[r].kept];
			if (nums_add(self, nd + pl[0], v) < 0 || nums_add(cum, nd + pl[1], v) < 0)
				return fail(b, "%s", ovf);
		}
		if (propagate(&b->up, cum, nd) < 0)
			return fail(b, "%s", ovf);
	} else if (b->q->view == FG_PIVOT) {
		struct nums w = {false, NULL, NULL};
		int rc = 0;

		if (nums_init(&w, is_int, b->n) < 0)
			return fail(b, "%s", "out of memory");
		for (r = 0; r < b->n && rc == 0; r++) {
			if (col[r].type == OPS_NULL || b->down_node[r] == FG_NONE || !contributes(b, r))
				continue;
			rc = nums_add(&w, b->path[r].kept, cell_val(&col[r]));
		}
		for (r = b->n; r-- > 0 && rc == 0;) {
			uint32_t node = b->down_node[r];
			struct val v = {is_int ? w.i ? w.i[r] : 0 : 0, is_int ? 0 : w.d[r]};

			if (b->path[r].kept != r || node == FG_NONE || b->down.parent[node] == FG_NONE)
				continue;
			rc = nums_add(&w, b->path[b->src->parent[r]].kept, v);
		}
		for (i = 0; i < b->n_anchors && rc == 0; i++) {
			uint32_t f = b->anchors[i][0];
			struct val v = {is_int ? w.i[f] : 0, is_int ? 0 : w.d[f]};

			rc = nums_add(self, nd + b->anchors[i][1], v);
			if (rc == 0)
				rc = nums_add(cum, nd + b->anchors[i][2], v);
		}
		free(w.i);
		free(w.d);
		if (rc < 0 || propagate(&b->up, cum, nd) < 0)
			return fail(b, "%s", ovf);
	}
	return 0;
}

/* ---------------------------------------------------------- aggregates ---- */

/* Text of a value as upstream writes it into a summary. */
static void append_cell(sqlite3_str *s, const struct ops_cell *c)
{
	char buf[40];

	if (c->type == OPS_TEXT) {
		sqlite3_str_appendall(s, c->u.s);
	} else if (c->type == OPS_INT) {
		sqlite3_str_appendf(s, "%lld", (long long)c->u.i);
	} else {
		snprintf(buf, sizeof(buf), "%.15g", c->u.d);
		sqlite3_str_appendall(s, buf);
		if (strcspn(buf, ".eEnN") == strlen(buf))
			sqlite3_str_appendall(s, ".0");
	}
}

static uint64_t distinct_key(const struct ops_cell *c)
{
	uint64_t bits;
	double d;

	if (c->type == OPS_TEXT)
		return ops_key_hash(c, 1);
	if (c->type == OPS_INT)
		return (uint64_t)c->u.i;
	d = c->u.d == 0 ? 0.0 : c->u.d;
	memcpy(&bits, &d, sizeof(bits));
	return bits;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The rows of each kept frame (rows folded into it, none of a hidden stack). */
struct frame_rows {
	uint32_t *off, *rows;
};

static int sum_agg(struct builder *b, size_t ai, const struct ops_cell *col, bool is_int)
{
	size_t nd = b->down.n;
	struct nums tot, out;
	bool *has_tot = calloc(b->n + 1, 1), *has_out = calloc(nd + b->up.n + 1, 1);
	uint32_t r;
	size_t i;
	int rc = 0;

	memset(&tot, 0, sizeof(tot));
	memset(&out, 0, sizeof(out));
	if (!has_tot || !has_out || nums_init(&tot, is_int, b->n) < 0 ||
	    nums_init(&out, is_int, nd + b->up.n) < 0)
		rc = -ENOMEM;
	for (r = 0; r < b->n && rc == 0; r++) {
		uint32_t k = b->path[r].kept;

		if (col[r].type == OPS_NULL || k == FG_NONE || (b->path[r].bits & HIDE_STACK_BIT))
			continue;
		has_tot[k] = true;
		rc = nums_add(&tot, k, cell_val(&col[r]));
	}
	for (r = 0; r < b->n && rc == 0 && is_down_view(b->q->view); r++) {
		struct val v = {is_int ? tot.i[r] : 0, is_int ? 0 : tot.d[r]};

		if (b->path[r].kept != r || !has_tot[r] || b->down_node[r] == FG_NONE ||
		    !contributes(b, r))
			continue;
		has_out[b->down_node[r]] = true;
		rc = nums_add(&out, b->down_node[r], v);
	}
	for (i = 0; i < b->n_constit && rc == 0; i++) {
		uint32_t f = b->constit[i][0];
		struct val v = {is_int ? tot.i[f] : 0, is_int ? 0 : tot.d[f]};

		if (!has_tot[f])
			continue;
		has_out[nd + b->constit[i][1]] = true;
		rc = nums_add(&out, nd + b->constit[i][1], v);
	}
	for (i = 0; i < nd + b->up.n && rc == 0; i++) {
		if (!has_out[i])
			continue;
		if (is_int)
			ops_set_int(b->aggs, (uint32_t)ai, i, out.i[i]);
		else
			ops_set_real(b->aggs, (uint32_t)ai, i, out.d[i]);
	}
	free(has_tot);
	free(has_out);
	free(tot.i);
	free(tot.d);
	free(out.i);
	free(out.d);
	if (rc == -ENOMEM)
		return fail(b, "%s", "out of memory");
	return rc < 0 ? fail(b, "%s", "flamegraph: integer aggregate overflow") : 0;
}

/* ONE_OR_SUMMARY or CONCAT_WITH_COMMA of node @node's values. */
static int text_agg(struct builder *b, size_t ai, size_t node, const struct ops_cell *col,
		    const uint32_t *frames, size_t n_frames, const struct frame_rows *fr,
		    uint64_t **keys, size_t *cap_keys)
{
	bool concat = b->q->aggs[ai].agg == FG_CONCAT;
	const struct ops_cell *first = NULL;
	sqlite3_str *s = sqlite3_str_new(NULL);
	size_t i, n_keys = 0;
	bool multiple = false;
	uint32_t j;
	int rc = 0;

	for (i = 0; i < n_frames && rc == 0; i++) {
		for (j = fr->off[frames[i]]; j < fr->off[frames[i] + 1] && rc == 0; j++) {
			const struct ops_cell *c = &col[fr->rows[j]];

			if (c->type == OPS_NULL)
				continue;
			if (concat) {
				if (first)
					sqlite3_str_appendchar(s, 1, ',');
				append_cell(s, c);
				first = c;
				continue;
			}
			if (ops_grow((void **)keys, cap_keys, n_keys + 1, sizeof(**keys)) < 0) {
				rc = -1;
				break;
			}
			(*keys)[n_keys++] = distinct_key(c);
			if (!first)
				first = c;
			else if ((*keys)[n_keys - 1] != (*keys)[0])
				multiple = true;
		}
	}
	if (rc == 0 && first && !concat) {
		append_cell(s, first);
		if (multiple) {
			size_t d = 1;

			sort_n(*keys, n_keys, sizeof(**keys), cmp_u64);
			for (i = 1; i < n_keys; i++)
				d += (*keys)[i] != (*keys)[i - 1];
			sqlite3_str_appendf(s, " and %llu others", (unsigned long long)d);
		}
	}
	if (rc == 0 && first && sqlite3_str_errcode(s) == SQLITE_OK)
		rc = ops_set_text(b->aggs, (uint32_t)ai, node, sqlite3_str_value(s),
				  (size_t)sqlite3_str_length(s));
	else if (sqlite3_str_errcode(s) != SQLITE_OK)
		rc = -1;
	sqlite3_free(sqlite3_str_finish(s));
	return rc < 0 ? fail(b, "%s", "out of memory") : 0;
}

/* The kept frames feeding each node (CSR @noff/@nframes) and the rows of
 * each frame; then every ONE_OR_SUMMARY / CONCAT aggregate. */
static int text_aggs(struct builder *b)
{
	size_t nodes = b->down.n + b->up.n, nd = b->down.n, i, ai, cap_keys = 0;
	uint32_t *noff = calloc(nodes + 2, sizeof(*noff)), *fill = calloc(nodes + 1, sizeof(*fill));
	uint32_t *nframes = malloc((b->n + b->n_constit + 1) * sizeof(*nframes));
	struct frame_rows fr = {calloc(b->n + 2, sizeof(uint32_t)),
				malloc((b->n + 1) * sizeof(uint32_t))};
	uint32_t *ffill = malloc((b->n + 1) * sizeof(*ffill));
	uint64_t *keys = NULL;
	bool down = is_down_view(b->q->view);
	uint32_t r;
	int rc = 0;

	if (!noff || !fill || !nframes || !fr.off || !fr.rows || !ffill) {
		rc = fail(b, "%s", "out of memory");
		goto out;
	}
	for (r = 0; r < b->n; r++) {
		if (b->path[r].kept != FG_NONE && !(b->path[r].bits & HIDE_STACK_BIT))
			fr.off[b->path[r].kept + 1]++;
	}
	for (r = 0; r < b->n; r++)
		fr.off[r + 1] += fr.off[r];
	memcpy(ffill, fr.off, b->n * sizeof(*ffill));
	for (r = 0; r < b->n; r++) {
		if (b->path[r].kept != FG_NONE && !(b->path[r].bits & HIDE_STACK_BIT))
			fr.rows[ffill[b->path[r].kept]++] = r;
	}
	for (r = 0; r < b->n && down; r++) {
		if (b->path[r].kept == r && b->down_node[r] != FG_NONE && contributes(b, r))
			noff[b->down_node[r] + 1]++;
	}
	for (i = 0; i < b->n_constit; i++)
		noff[nd + b->constit[i][1] + 1]++;
	for (i = 0; i < nodes; i++)
		noff[i + 1] += noff[i];
	memcpy(fill, noff, nodes * sizeof(*fill));
	for (r = 0; r < b->n && down; r++) {
		if (b->path[r].kept == r && b->down_node[r] != FG_NONE && contributes(b, r))
			nframes[fill[b->down_node[r]]++] = r;
	}
	for (i = 0; i < b->n_constit; i++)
		nframes[fill[nd + b->constit[i][1]]++] = b->constit[i][0];
	for (ai = 0; ai < b->q->n_aggs && rc == 0; ai++) {
		const struct ops_cell *col = b->src->t->cols[b->agg_cols[ai]];

		if (b->q->aggs[ai].agg == FG_SUM || b->src->kinds[b->agg_cols[ai]] == OPS_NULL)
			continue;
		for (i = 0; i < nodes && rc == 0; i++)
			rc = text_agg(b, ai, i, col, nframes + noff[i], noff[i + 1] - noff[i], &fr,
				      &keys, &cap_keys);
	}
out:
	free(noff);
	free(fill);
	free(nframes);
	free(fr.off);
	free(fr.rows);
	free(ffill);
	free(keys);
	return rc;
}

static int aggregates(struct builder *b)
{
	size_t nodes = b->down.n + b->up.n, ai;

	b->aggs = ops_table_create((uint32_t)b->q->n_aggs, NULL);
	if (!b->aggs || ops_table_reserve(b->aggs, nodes + 1) < 0)
		return fail(b, "%s", "out of memory");
	for (ai = 0; ai < nodes; ai++)
		ops_table_append(b->aggs);
	for (ai = 0; ai < b->q->n_aggs; ai++) {
		int c = b->agg_cols[ai];

		if (b->q->aggs[ai].agg == FG_SUM && b->src->kinds[c] != OPS_NULL &&
		    sum_agg(b, ai, b->src->t->cols[c], b->src->kinds[c] == OPS_INT) < 0)
			return -1;
	}
	return text_aggs(b);
}

/* --------------------------------------------------------------- output ---- */

/* Keeps the nodes with a non-zero cumulative value and writes the result. */
static int pack(struct builder *b, struct fg_result *out)
{
	const struct fg_query *q = b->q;
	size_t nodes = b->down.n + b->up.n, nd = b->down.n, n = 0, k, i;
	uint32_t n_cols = (uint32_t)(2 + q->n_grouping + 2 * q->n_values + q->n_aggs), c;
	uint32_t *row_of = malloc((nodes + 1) * sizeof(*row_of));
	uint32_t *src = malloc((nodes + 1) * sizeof(*src)), *par = malloc((nodes + 1) * sizeof(*par));
	int64_t *depth = malloc((nodes + 1) * sizeof(*depth));
	uint32_t *order = malloc((nodes + 1) * sizeof(*order));
	double *width = malloc((nodes + 1) * sizeof(*width));
	char **names = calloc(n_cols, sizeof(*names));
	struct ops_table *t = NULL;
	int rc = -1;

	if (!row_of || !src || !par || !depth || !width || !names || !order)
		goto out;
	for (k = 0; k < nodes; k++) {
		bool up = k >= nd;
		const struct interner *tr = up ? &b->up : &b->down;
		uint32_t p = tr->parent[up ? k - nd : k], pr;
		bool keep = false;

		row_of[k] = FG_NONE;
		for (i = 0; i < q->n_values && !keep; i++)
			keep = nums_get(&b->cum[i], k) != 0;
		if (!keep)
			continue;
		pr = p == FG_NONE ? FG_NONE : row_of[up ? p + nd : p];
		row_of[k] = (uint32_t)n;
		src[n] = (uint32_t)k;
		par[n] = pr;
		depth[n] = (pr == FG_NONE ? 0 : depth[pr]) + (up ? -1 : 1);
		width[n] = nums_get(&b->cum[0], k) > 0 ? nums_get(&b->cum[0], k) : 0.0;
		n++;
	}
	c = 0;
	names[c++] = sqlite3_mprintf("depth");
	names[c++] = sqlite3_mprintf("name");
	for (i = 0; i < q->n_grouping; i++)
		names[c++] = sqlite3_mprintf("%s", q->grouping[i]);
	for (i = 0; i < q->n_values; i++) {
		names[c++] = sqlite3_mprintf("self_%s", q->values[i]);
		names[c++] = sqlite3_mprintf("cumulative_%s", q->values[i]);
	}
	for (i = 0; i < q->n_aggs; i++)
		names[c++] = sqlite3_mprintf("%s", q->aggs[i].output);
	for (c = 0; c < n_cols; c++) {
		if (!names[c])
			goto out;
	}
	t = ops_table_create(n_cols, (const char *const *)names);
	out->parent_row = malloc((n + 1) * sizeof(*out->parent_row));
	out->x_start = malloc((n + 1) * sizeof(*out->x_start));
	if (!t || ops_table_reserve(t, n + 1) < 0 || !out->parent_row || !out->x_start ||
	    fg_layout(depth, par, width, n, order, out->parent_row, out->x_start) < 0)
		goto out;
	for (k = 0; k < n; k++) {
		uint32_t node = src[order[k]];
		uint32_t rep = node >= nd ? b->up.rep[node - nd] : b->down.rep[node];
		const struct ops_table *st = b->src->t;

		ops_table_append(t);
		c = 0;
		ops_set_int(t, c++, k, depth[order[k]]);
		t->cols[c++][k] = st->cols[b->name_col][rep];
		for (i = 0; i < q->n_grouping; i++)
			t->cols[c++][k] = st->cols[b->group_cols[i]][rep];
		for (i = 0; i < q->n_values; i++) {
			if (b->cum[i].is_int) {
				ops_set_int(t, c++, k, b->self[i].i[node]);
				ops_set_int(t, c++, k, b->cum[i].i[node]);
			} else {
				ops_set_real(t, c++, k, b->self[i].d[node]);
				ops_set_real(t, c++, k, b->cum[i].d[node]);
			}
		}
		for (i = 0; i < q->n_aggs; i++) {
			if (ops_set_cell(t, c++, k, &b->aggs->cols[i][node]) < 0)
				goto out;
		}
	}
	out->t = t;
	t = NULL;
	rc = 0;
out:
	for (c = 0; names && c < n_cols; c++)
		sqlite3_free(names[c]);
	free(names);
	ops_table_destroy(t);
	free(row_of);
	free(src);
	free(par);
	free(depth);
	free(width);
	free(order);
	return rc < 0 ? fail(b, "%s", "out of memory") : 0;
}

void fg_result_free(struct fg_result *r)
{
	if (!r)
		return;
	ops_table_destroy(r->t);
	free(r->parent_row);
	free(r->x_start);
	memset(r, 0, sizeof(*r));
}

int fg_build(const struct fg_source *src, const struct fg_query *q, struct fg_result *out,
	     char **err)
{
	struct builder b;
	size_t i;
	int rc;

	memset(&b, 0, sizeof(b));
	memset(out, 0, sizeof(*out));
	b.src = src;
	b.q = q;
	b.n = (uint32_t)src->t->n_rows;
	b.err = err;
	ops_order_map_init(&b.down.map, 16);
	ops_order_map_init(&b.up.map, 16);
	rc = resolve(&b);
	if (rc == 0)
		rc = analyze(&b);
	if (rc == 0)
		rc = build_down(&b);
	if (rc == 0)
		rc = build_up(&b);
	if (rc == 0) {
		b.self = calloc(q->n_values, sizeof(*b.self));
		b.cum = calloc(q->n_values, sizeof(*b.cum));
		if (!b.self || !b.cum)
			rc = fail(&b, "%s", "out of memory");
	}
	for (i = 0; rc == 0 && i < q->n_values; i++)
		rc = metric(&b, i);
	if (rc == 0)
		rc = aggregates(&b);
	if (rc == 0)
		rc = pack(&b, out);
	if (rc != 0)
		fg_result_free(out);
	re_free(&b.view_re);
	for (i = 0; i < b.n_show; i++)
		re_free(&b.show_re[i]);
	for (i = 0; i < b.n_hide_stack; i++)
		re_free(&b.hide_stack_re[i]);
	for (i = 0; i < b.n_hide_frame; i++)
		re_free(&b.hide_frame_re[i]);
	free(b.show_re);
	free(b.hide_stack_re);
	free(b.hide_frame_re);
	free(b.group_cols);
	free(b.value_cols);
	free(b.agg_cols);
	free(b.frame);
	free(b.path);
	free(b.view_match);
	interner_free(&b.down);
	interner_free(&b.up);
	free(b.down_node);
	free(b.bu_path);
	free(b.anchors);
	free(b.constit);
	for (i = 0; b.self && i < q->n_values; i++) {
		free(b.self[i].i);
		free(b.self[i].d);
		free(b.cum[i].i);
		free(b.cum[i].d);
	}
	free(b.self);
	free(b.cum);
	ops_table_destroy(b.aggs);
	return rc;
}

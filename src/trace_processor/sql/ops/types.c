// SPDX-License-Identifier: Apache-2.0
/*
 * types.c - the aggregates and scalars that build the values built-ins pass
 * each other (upstream's type builders): __intrinsic_array_agg (ARRAY<...>),
 * __intrinsic_struct, __intrinsic_row_dataframe_agg (ROW_DATAFRAME),
 * __intrinsic_graph_agg (GRAPH), __intrinsic_interval_tree_intervals_agg
 * (INTERVAL_TREE_PARTITIONS), __intrinsic_timestamp_set_agg
 * (SORTED_TIMESTAMPS) and __intrinsic_counter_per_track_agg
 * (COUNTER_TRACK_PARTITIONS), with upstream's error texts. Each aggregate
 * keeps a heap state in its SQLite context and hands it over in xFinal.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/sql/ops/ops_int.h"

/* Largest node id a graph takes: its offsets array is 4 bytes per id. */
#define GRAPH_MAX_NODE_ID ((int64_t)1 << 30)
/* Most fields of a STRUCT, as upstream. */
#define STRUCT_MAX_FIELDS 16

/* The heap state of an aggregate, found through its SQLite context. */
static void **agg_slot(sqlite3_context *ctx, bool create)
{
	return sqlite3_aggregate_context(ctx, create ? (int)sizeof(void *) : 0);
}

/* ---------------------------------------------------------------- arrays ---- */

void ops_array_destroy(void *p)
{
	struct ops_array *a = p;
	size_t i;

	if (!a)
		return;
	for (i = 0; a->strs && i < a->n; i++)
		free(a->strs[i]);
	free(a->ints);
	free(a->reals);
	free(a->strs);
	free(a);
}

struct array_state {
	struct ops_array *a;
	int type; /* SQLite's type of the first value */
};

static void array_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	void **slot = agg_slot(ctx, true);
	struct array_state *s;
	struct ops_array *a;
	int type = sqlite3_value_type(argv[0]);
	int err = 0;

	(void)argc;
	if (!slot) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	if (type == SQLITE_NULL) {
		sqlite3_result_error(ctx,
				     "ARRAY_AGG: nulls are not supported. They should be filtered "
				     "out before calling ARRAY_AGG.",
				     -1);
		return;
	}
	if (type == SQLITE_BLOB) {
		sqlite3_result_error(ctx, "ARRAY_AGG: blobs are not supported.", -1);
		return;
	}
	s = *slot;
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (s)
			s->a = calloc(1, sizeof(*s->a));
		if (!s || !s->a) {
			free(s);
			sqlite3_result_error_nomem(ctx);
			return;
		}
		s->type = type;
		*slot = s;
	} else if (s->type != type) {
		sqlite3_result_error(ctx, "ARRAY_AGG: all values must have the same type", -1);
		return;
	}
	a = s->a;
	switch (type) {
	case SQLITE_INTEGER: {
		size_t cap = a->cap;

		err = ops_grow((void **)&a->ints, &cap, a->n + 1, sizeof(*a->ints));
		if (!err) {
			a->cap = cap;
			a->ints[a->n++] = sqlite3_value_int64(argv[0]);
		}
		break;
	}
	case SQLITE_FLOAT: {
		size_t cap = a->cap;

		err = ops_grow((void **)&a->reals, &cap, a->n + 1, sizeof(*a->reals));
		if (!err) {
			a->cap = cap;
			a->reals[a->n++] = sqlite3_value_double(argv[0]);
		}
		break;
	}
	default: {
		size_t cap = a->cap;
		const char *txt = (const char *)sqlite3_value_text(argv[0]);
		char *copy = txt ? strdup(txt) : NULL;

		err = copy ? ops_grow((void **)&a->strs, &cap, a->n + 1, sizeof(*a->strs)) : -ENOMEM;
		if (!err) {
			a->cap = cap;
			a->strs[a->n++] = copy;
		} else {
			free(copy);
		}
		break;
	}
	}
	if (err)
		sqlite3_result_error_nomem(ctx);
}

static void array_final(sqlite3_context *ctx)
{
	void **slot = agg_slot(ctx, false);
	struct array_state *s = slot ? *slot : NULL;
	const char *name;

	if (!s)
		return;
	name = s->type == SQLITE_INTEGER ? OPS_PTR_ARRAY_LONG
	       : s->type == SQLITE_FLOAT ? OPS_PTR_ARRAY_DOUBLE
					 : OPS_PTR_ARRAY_STRING;
	sqlite3_result_pointer(ctx, s->a, name, ops_array_destroy);
	free(s);
	*slot = NULL;
}

/* ---------------------------------------------------------------- struct ---- */

/* __intrinsic_struct(name1, ..., nameN, value1, ..., valueN): one row. */
static void fn_struct(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *names[STRUCT_MAX_FIELDS];
	struct ops_table *t;
	int n = argc / 2, i;

	if (argc % 2 != 0) {
		sqlite3_result_error(ctx, "STRUCT: must have an even number of arguments", -1);
		return;
	}
	if (n > STRUCT_MAX_FIELDS) {
		ops_error(ctx, "STRUCT: only at most %d fields are supported", STRUCT_MAX_FIELDS);
		return;
	}
	for (i = 0; i < n; i++) {
		if (sqlite3_value_type(argv[i]) != SQLITE_TEXT) {
			sqlite3_result_error(ctx, "STRUCT: field names must be strings", -1);
			return;
		}
		if (sqlite3_value_type(argv[n + i]) == SQLITE_BLOB) {
			sqlite3_result_error(ctx, "STRUCT: blob fields not supported", -1);
			return;
		}
		names[i] = (const char *)sqlite3_value_text(argv[i]);
	}
	t = ops_table_create((uint32_t)n, names);
	if (!t || ops_table_append(t) < 0)
		goto nomem;
	for (i = 0; i < n; i++) {
		if (ops_set_value(t, (uint32_t)i, 0, argv[n + i]) < 0)
			goto nomem;
	}
	sqlite3_result_pointer(ctx, t, OPS_PTR_STRUCT, ops_table_destroy);
	return;
nomem:
	ops_table_destroy(t);
	sqlite3_result_error_nomem(ctx);
}

/* --------------------------------------------------------- row dataframe ---- */

void ops_row_df_destroy(void *p)
{
	struct ops_row_df *d = p;

	if (!d)
		return;
	ops_table_destroy(d->t);
	free(d->id_to_row);
	free(d);
}

/* __intrinsic_row_dataframe_agg('a', a, 'b', b, ...): names from the first row. */
static void row_df_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	void **slot = agg_slot(ctx, true);
	struct ops_row_df *d;
	int64_t row;
	int i;

	if (!slot)
		goto nomem;
	if (argc % 2 != 0) {
		sqlite3_result_error(ctx, "ROW_DATAFRAME_AGG: must have an even number of arguments",
				     -1);
		return;
	}
	for (i = 1; i < argc; i += 2) {
		if (sqlite3_value_type(argv[i]) == SQLITE_BLOB) {
			sqlite3_result_error(ctx, "ROW_DATAFRAME_AGG: blob fields not supported",
					     -1);
			return;
		}
	}
	d = *slot;
	if (!d) {
		const char *names[OPS_MAX_COLS];

		if (argc / 2 > OPS_MAX_COLS) {
			ops_error(ctx, "ROW_DATAFRAME_AGG: at most %d columns",
				  OPS_MAX_COLS);
			return;
		}
		d = calloc(1, sizeof(*d));
		if (!d)
			goto nomem;
		d->id_col = -1;
		for (i = 0; i < argc; i += 2) {
			names[i / 2] = (const char *)sqlite3_value_text(argv[i]);
			if (!names[i / 2])
				names[i / 2] = "";
			if (d->id_col < 0 && strcmp(names[i / 2], "id") == 0)
				d->id_col = i / 2;
		}
		d->t = ops_table_create((uint32_t)(argc / 2), names);
		if (!d->t) {
			free(d);
			goto nomem;
		}
		*slot = d;
	}
	if ((uint32_t)(argc / 2) != d->t->n_cols) {
		sqlite3_result_error(ctx, "ROW_DATAFRAME_AGG: column count changed", -1);
		return;
	}
	row = ops_table_append(d->t);
	if (row < 0)
		goto nomem;
	for (i = 1; i < argc; i += 2) {
		if (ops_set_value(d->t, (uint32_t)(i / 2), (size_t)row, argv[i]) < 0)
			goto nomem;
	}
	if (d->id_col >= 0) {
		int64_t id = sqlite3_value_int64(argv[2 * d->id_col + 1]);

		if (id < 0 || id >= GRAPH_MAX_NODE_ID) {
			ops_error(ctx, "ROW_DATAFRAME_AGG: id %" PRId64 " out of range", id);
			return;
		}
		if ((size_t)id >= d->n_ids) {
			size_t cap = d->n_ids, old = d->n_ids, j;

			if (ops_grow((void **)&d->id_to_row, &cap, (size_t)id + 1,
				     sizeof(*d->id_to_row)) < 0)
				goto nomem;
			for (j = old; j < cap; j++)
				d->id_to_row[j] = UINT32_MAX;
			d->n_ids = cap;
		}
		d->id_to_row[id] = (uint32_t)row;
	}
	return;
nomem:
	sqlite3_result_error_nomem(ctx);
}

static void row_df_final(sqlite3_context *ctx)
{
	void **slot = agg_slot(ctx, false);
	struct ops_row_df *d = slot ? *slot : NULL;

	if (!d)
		return;
	*slot = NULL;
	sqlite3_result_pointer(ctx, d, OPS_PTR_ROW_DATAFRAME, ops_row_df_destroy);
}

/* ----------------------------------------------------------------- graph ---- */

void ops_graph_destroy(void *p)
{
	struct ops_graph *g = p;

	if (!g)
		return;
	free(g->edge_start);
	free(g->edges);
	free(g);
}

struct graph_state {
	uint32_t *src, *dst;
	size_t n, cap;
	uint32_t n_nodes;
};

static void graph_state_free(struct graph_state *s)
{
	if (!s)
		return;
	free(s->src);
	free(s->dst);
	free(s);
}

static void graph_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	void **slot = agg_slot(ctx, true);
	struct graph_state *s;
	int64_t src, dst;

	(void)argc;
	if (!slot)
		goto nomem;
	s = *slot;
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			goto nomem;
		*slot = s;
	}
	src = sqlite3_value_int64(argv[0]);
	if (src < 0 || src >= GRAPH_MAX_NODE_ID) {
		ops_error(ctx, "GRAPH_AGG: node id %" PRId64 " out of range", src);
		return;
	}
	if ((uint32_t)src >= s->n_nodes)
		s->n_nodes = (uint32_t)src + 1;
	/* A NULL target is a node without an edge (a root's NULL parent). */
	if (sqlite3_value_type(argv[1]) == SQLITE_NULL)
		return;
	dst = sqlite3_value_int64(argv[1]);
	if (dst < 0 || dst >= GRAPH_MAX_NODE_ID) {
		ops_error(ctx, "GRAPH_AGG: node id %" PRId64 " out of range", dst);
		return;
	}
	if ((uint32_t)dst >= s->n_nodes)
		s->n_nodes = (uint32_t)dst + 1;
	if (s->n == s->cap) {
		size_t cap = s->cap;

		if (ops_grow((void **)&s->src, &cap, s->n + 1, sizeof(*s->src)) < 0)
			goto nomem;
		cap = s->cap;
		if (ops_grow((void **)&s->dst, &cap, s->n + 1, sizeof(*s->dst)) < 0)
			goto nomem;
		s->cap = cap;
	}
	s->src[s->n] = (uint32_t)src;
	s->dst[s->n++] = (uint32_t)dst;
	return;
nomem:
	sqlite3_result_error_nomem(ctx);
}

/*
 * ops_graph_from_edges() - CSR of @n edges over @n_nodes nodes; each node's
 * edges keep their order in the input. Return: the graph or NULL (no memory).
 */
static struct ops_graph *graph_from_edges(const uint32_t *src, const uint32_t *dst, size_t n,
					  uint32_t n_nodes)
{
	struct ops_graph *g = calloc(1, sizeof(*g));
	size_t i;
	uint32_t *fill = NULL;

	if (!g)
		return NULL;
	g->n_nodes = n_nodes;
	g->n_edges = n;
	g->edge_start = calloc((size_t)n_nodes + 1, sizeof(*g->edge_start));
	g->edges = malloc((n ? n : 1) * sizeof(*g->edges));
	fill = calloc((size_t)n_nodes + 1, sizeof(*fill));
	if (!g->edge_start || !g->edges || !fill)
		goto fail;
	for (i = 0; i < n; i++)
		g->edge_start[src[i] + 1]++;
	for (i = 0; i < n_nodes; i++)
		g->edge_start[i + 1] += g->edge_start[i];
	for (i = 0; i < n; i++)
		g->edges[g->edge_start[src[i]] + fill[src[i]]++] = dst[i];
	free(fill);
	return g;
fail:
	free(fill);
	ops_graph_destroy(g);
	return NULL;
}

static void graph_final(sqlite3_context *ctx)
{
	void **slot = agg_slot(ctx, false);
	struct graph_state *s = slot ? *slot : NULL;
	struct ops_graph *g;

	if (!s)
		return;
	*slot = NULL;
	g = graph_from_edges(s->src, s->dst, s->n, s->n_nodes);
	graph_state_free(s);
	if (!g) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	sqlite3_result_pointer(ctx, g, OPS_PTR_GRAPH, ops_graph_destroy);
}

/* ---------------------------------------------------- partitioned intervals ---- */

void ops_partitions_destroy(void *p)
{
	struct ops_partitions *ps = p;
	size_t i;

	if (!ps)
		return;
	for (i = 0; i < ps->n; i++) {
		free(ps->p[i].v);
		free(ps->p[i].key);
	}
	for (i = 0; ps->key_names && i < ps->n_keys; i++)
		free(ps->key_names[i]);
	free(ps->key_names);
	free(ps->p);
	free(ps->order);
	ops_order_map_fini(&ps->map);
	ops_table_destroy(ps->strings);
	free(ps);
}

struct ops_partition *ops_partitions_find(const struct ops_partitions *ps, uint64_t hash)
{
	const uint32_t *idx = ops_order_map_find(&ps->map, hash);

	return idx ? &ps->p[*idx] : NULL;
}

/* The indexes of @m's values in slot order. Return: 0 or -ENOMEM. */
static int slot_order(const struct ops_order_map *m, uint32_t **out)
{
	uint32_t *o = malloc((m->size ? m->size : 1) * sizeof(*o));
	size_t i, n = 0;

	if (!o)
		return -ENOMEM;
	for (i = 0; i < m->cap; i++) {
		if (m->used[i])
			o[n++] = m->vals[i];
	}
	*out = o;
	return 0;
}

static int partition_push(struct ops_partition *p, const struct ops_interval *iv)
{
	if (p->n == p->cap && ops_grow((void **)&p->v, &p->cap, p->n + 1, sizeof(*p->v)) < 0)
		return -ENOMEM;
	p->v[p->n++] = *iv;
	if (p->is_nonoverlapping) {
		if (iv->start < p->last_end)
			p->is_nonoverlapping = false;
		else
			p->last_end = iv->end;
	}
	return 0;
}

struct itree_state {
	struct ops_partitions *ps;
	uint64_t last_start;
	bool unsorted; /* the rows came out of ts order (the any-order form) */
	struct ops_cell key[OPS_MAX_COLS];
};

/*
 * __intrinsic_interval_tree_intervals_agg(id, ts, dur[, 'name', value]...):
 * intervals sorted by ts, grouped by the values of the partition columns.
 */
static void itree_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	void **slot = agg_slot(ctx, true);
	struct itree_state *s;
	struct ops_partitions *ps;
	struct ops_partition *p;
	struct ops_interval iv;
	uint32_t n_keys, i;
	int64_t ts, dur;
	uint64_t hash;

	if (!slot)
		goto nomem;
	if (argc < 3 || (argc - 3) % 2 != 0 || (argc - 3) / 2 > OPS_MAX_COLS) {
		sqlite3_result_error(ctx, "INTERVAL_TREE_INTERVALS_AGG: wrong number of arguments",
				     -1);
		return;
	}
	n_keys = (uint32_t)(argc - 3) / 2;
	s = *slot;
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			goto nomem;
		s->ps = calloc(1, sizeof(*s->ps));
		if (!s->ps) {
			free(s);
			goto nomem;
		}
		*slot = s;
		ps = s->ps;
		/* Upstream's slot: a 64-bit key and a 64-byte partition. */
		ops_order_map_init(&ps->map, 72);
		ps->n_keys = n_keys;
		ps->strings = ops_table_create(0, NULL);
		ps->key_names = calloc(n_keys ? n_keys : 1, sizeof(*ps->key_names));
		if (!ps->strings || !ps->key_names)
			goto nomem;
		for (i = 0; i < n_keys; i++) {
			const char *name = (const char *)sqlite3_value_text(argv[3 + 2 * i]);

			ps->key_names[i] = strdup(name ? name : "");
			if (!ps->key_names[i])
				goto nomem;
		}
	}
	ps = s->ps;
	if (n_keys != ps->n_keys) {
		sqlite3_result_error(ctx, "INTERVAL_TREE_INTERVALS_AGG: column count changed", -1);
		return;
	}

	iv.id = (uint32_t)sqlite3_value_int64(argv[0]);
	ts = sqlite3_value_int64(argv[1]);
	iv.start = (uint64_t)ts;
	if (iv.start < s->last_start && sqlite3_user_data(ctx) && ts >= 0) {
		s->unsorted = true;
	} else if (iv.start < s->last_start || (ts < 0 && sqlite3_user_data(ctx))) {
		if (ts < 0) {
			sqlite3_result_error(
				ctx, "Interval intersect only accepts positive `ts` values.", -1);
			return;
		}
		ops_error(ctx,
			  "Interval intersect requires intervals to be sorted by ts. Current "
			  "interval(id %u) start %" PRId64 " is less than the last interval start "
			  "%" PRIu64 ".",
			  iv.id, ts, s->last_start);
		return;
	}
	dur = sqlite3_value_int64(argv[2]);
	if (dur < 0) {
		sqlite3_result_error(ctx,
				     "Interval intersect only works on intervals with non negative "
				     "duration.",
				     -1);
		return;
	}
	if (iv.start > s->last_start)
		s->last_start = iv.start;
	iv.end = iv.start + (uint64_t)dur;

	for (i = 0; i < n_keys; i++) {
		sqlite3_value *v = argv[4 + 2 * i];

		switch (sqlite3_value_type(v)) {
		case SQLITE_INTEGER:
			s->key[i].type = OPS_INT;
			s->key[i].u.i = sqlite3_value_int64(v);
			break;
		case SQLITE_FLOAT:
			s->key[i].type = OPS_REAL;
			s->key[i].u.d = sqlite3_value_double(v);
			break;
		case SQLITE_TEXT:
			s->key[i].type = OPS_TEXT;
			s->key[i].u.s = (const char *)sqlite3_value_text(v);
			if (!s->key[i].u.s)
				goto nomem;
			break;
		case SQLITE_NULL:
			s->key[i].type = OPS_NULL;
			break;
		default:
			sqlite3_result_error(ctx, "Interval intersect: blob partition values are "
						  "not supported",
					     -1);
			return;
		}
	}
	/* Without partition columns everything is partition 0, as upstream. */
	hash = n_keys ? ops_key_hash(s->key, n_keys) : 0;
	p = ops_partitions_find(ps, hash);
	if (!p) {
		size_t idx = ps->n;

		if (ops_grow((void **)&ps->p, &ps->cap, ps->n + 1, sizeof(*ps->p)) < 0)
			goto nomem;
		p = &ps->p[idx];
		memset(p, 0, sizeof(*p));
		p->is_nonoverlapping = true;
		p->hash = hash;
		p->key = calloc(n_keys ? n_keys : 1, sizeof(*p->key));
		if (!p->key)
			goto nomem;
		for (i = 0; i < n_keys; i++) {
			p->key[i] = s->key[i];
			if (s->key[i].type == OPS_TEXT) {
				p->key[i].u.s = ops_table_strdup(ps->strings, s->key[i].u.s,
								 strlen(s->key[i].u.s));
				if (!p->key[i].u.s)
					goto nomem;
			}
		}
		ps->n++;
		if (ops_order_map_insert(&ps->map, hash, (uint32_t)idx) < 0)
			goto nomem;
	}
	if (partition_push(p, &iv) < 0)
		goto nomem;
	return;
nomem:
	sqlite3_result_error_nomem(ctx);
}

/* Sorts @p's intervals by start, keeping the rows' order among equal
 * starts (a merge sort), as ORDER BY ts before the aggregate would.
 * Return: 0 or -ENOMEM. */
static int partition_sort(struct ops_partition *p)
{
	struct ops_interval *a = p->v, *b, *t;
	size_t w, i, n = p->n;

	if (n < 2)
		return 0;
	b = malloc(n * sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (w = 1; w < n; w *= 2) {
		for (i = 0; i < n; i += 2 * w) {
			size_t l = i, m = i + w < n ? i + w : n, r = m;
			size_t e = i + 2 * w < n ? i + 2 * w : n, o = i;

			while (l < m && r < e)
				b[o++] = a[r].start < a[l].start ? a[r++] : a[l++];
			while (l < m)
				b[o++] = a[l++];
			while (r < e)
				b[o++] = a[r++];
		}
		t = a;
		a = b;
		b = t;
	}
	if (a != p->v) {
		memcpy(p->v, a, n * sizeof(*a));
		b = a;
	}
	free(b);
	p->is_nonoverlapping = true;
	p->last_end = 0;
	for (i = 0; i < n; i++) {
		if (p->v[i].start < p->last_end) {
			p->is_nonoverlapping = false;
			break;
		}
		p->last_end = p->v[i].end;
	}
	return 0;
}

static void itree_final(sqlite3_context *ctx)
{
	void **slot = agg_slot(ctx, false);
	struct itree_state *s = slot ? *slot : NULL;
	size_t i;

	if (!s)
		return;
	*slot = NULL;
	for (i = 0; s->unsorted && i < s->ps->n; i++) {
		if (partition_sort(&s->ps->p[i]) < 0) {
			ops_partitions_destroy(s->ps);
			free(s);
			sqlite3_result_error_nomem(ctx);
			return;
		}
	}
	if (slot_order(&s->ps->map, &s->ps->order) < 0) {
		ops_partitions_destroy(s->ps);
		free(s);
		sqlite3_result_error_nomem(ctx);
		return;
	}
	sqlite3_result_pointer(ctx, s->ps, OPS_PTR_INTERVALS, ops_partitions_destroy);
	free(s);
}

/* ------------------------------------------------------------ timestamps ---- */

void ops_timestamps_destroy(void *p)
{
	struct ops_timestamps *t = p;

	if (!t)
		return;
	free(t->ts);
	free(t);
}

static void ts_set_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	void **slot = agg_slot(ctx, true);
	struct ops_timestamps *t;

	(void)argc;
	if (!slot)
		goto nomem;
	t = *slot;
	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t)
			goto nomem;
		*slot = t;
	}
	if (ops_grow((void **)&t->ts, &t->cap, t->n + 1, sizeof(*t->ts)) < 0)
		goto nomem;
	t->ts[t->n++] = sqlite3_value_int64(argv[0]);
	return;
nomem:
	sqlite3_result_error_nomem(ctx);
}

static void ts_set_final(sqlite3_context *ctx)
{
	void **slot = agg_slot(ctx, false);
	struct ops_timestamps *t = slot ? *slot : NULL;

	if (!t)
		return;
	*slot = NULL;
	sqlite3_result_pointer(ctx, t, OPS_PTR_TIMESTAMPS, ops_timestamps_destroy);
}

/* -------------------------------------------------------------- counters ---- */

void ops_counters_destroy(void *p)
{
	struct ops_counters *c = p;
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->n; i++) {
		free(c->tracks[i].id);
		free(c->tracks[i].ts);
		free(c->tracks[i].val);
	}
	free(c->tracks);
	free(c);
}

struct counters_state {
	struct ops_counters *c;
	struct ops_order_map map; /* track id -> index in c->tracks */
};

static int counter_track_push(struct ops_counter_track *t, int64_t id, int64_t ts, double val)
{
	if (t->n == t->cap) {
		size_t cap = t->cap;

		if (ops_grow((void **)&t->id, &cap, t->n + 1, sizeof(*t->id)) < 0)
			return -ENOMEM;
		cap = t->cap;
		if (ops_grow((void **)&t->ts, &cap, t->n + 1, sizeof(*t->ts)) < 0)
			return -ENOMEM;
		cap = t->cap;
		if (ops_grow((void **)&t->val, &cap, t->n + 1, sizeof(*t->val)) < 0)
			return -ENOMEM;
		t->cap = cap;
	}
	t->id[t->n] = id;
	t->ts[t->n] = ts;
	t->val[t->n] = val;
	t->n++;
	return 0;
}

static struct ops_counter_track *counters_track(struct counters_state *s, int64_t track_id,
						bool *is_new)
{
	struct ops_counters *c = s->c;
	const uint32_t *idx = ops_order_map_find(&s->map, (uint64_t)track_id);

	*is_new = false;
	if (idx)
		return &c->tracks[*idx];
	if (ops_grow((void **)&c->tracks, &c->cap, c->n + 1, sizeof(*c->tracks)) < 0 ||
	    ops_order_map_insert(&s->map, (uint64_t)track_id, (uint32_t)c->n) < 0)
		return NULL;
	memset(&c->tracks[c->n], 0, sizeof(c->tracks[c->n]));
	c->tracks[c->n].track_id = track_id;
	*is_new = true;
	return &c->tracks[c->n++];
}

/*
 * __intrinsic_counter_per_track_agg(id, ts, track_id, value), rows by ts:
 * per track, the values that change what a "leading" counter shows. A run
 * of equal values keeps its first two rows and its last one.
 */
static void counters_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	void **slot = agg_slot(ctx, true);
	struct counters_state *s;
	struct ops_counter_track *t;
	int64_t id, ts, track;
	double val;
	bool is_new;

	(void)argc;
	if (!slot)
		goto nomem;
	s = *slot;
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (s)
			s->c = calloc(1, sizeof(*s->c));
		if (!s || !s->c) {
			free(s);
			goto nomem;
		}
		/* Upstream's slot: a 64-bit key and a 96-byte track partition. */
		ops_order_map_init(&s->map, 104);
		*slot = s;
	}
	id = sqlite3_value_int64(argv[0]);
	ts = sqlite3_value_int64(argv[1]);
	/* Upstream keeps the track id as 32 bits. */
	track = (int64_t)(uint32_t)sqlite3_value_int64(argv[2]);
	val = sqlite3_value_double(argv[3]);
	t = counters_track(s, track, &is_new);
	if (!t)
		goto nomem;
	if (!is_new) {
		if (t->n > 1 && t->val[t->n - 1] == val && t->val[t->n - 2] == val) {
			t->last_equal_id = id;
			t->last_equal_ts = ts;
			t->last_equal_val = val;
			return;
		}
		if (t->last_equal_ts != 0 &&
		    counter_track_push(t, t->last_equal_id, t->last_equal_ts, t->last_equal_val) < 0)
			goto nomem;
		t->last_equal_id = 0;
		t->last_equal_ts = 0;
		t->last_equal_val = 0;
	}
	if (counter_track_push(t, id, ts, val) < 0)
		goto nomem;
	return;
nomem:
	sqlite3_result_error_nomem(ctx);
}

static void counters_final(sqlite3_context *ctx)
{
	void **slot = agg_slot(ctx, false);
	struct counters_state *s = slot ? *slot : NULL;
	uint32_t *order = NULL;
	bool ok = false;
	size_t i;

	if (!s)
		return;
	*slot = NULL;
	/* Tracks go out in upstream's hash-map order. */
	if (slot_order(&s->map, &order) == 0) {
		struct ops_counter_track *t = malloc((s->c->n ? s->c->n : 1) * sizeof(*t));

		if (t) {
			for (i = 0; i < s->c->n; i++)
				t[i] = s->c->tracks[order[i]];
			free(s->c->tracks);
			s->c->tracks = t;
			s->c->cap = s->c->n ? s->c->n : 1;
			ok = true;
		}
		free(order);
	}
	ops_order_map_fini(&s->map);
	if (!ok) {
		ops_counters_destroy(s->c);
		free(s);
		sqlite3_result_error_nomem(ctx);
		return;
	}
	sqlite3_result_pointer(ctx, s->c, OPS_PTR_COUNTERS, ops_counters_destroy);
	free(s);
}

/* ---------------------------------------------------------- registration ---- */

/*
 * If a statement ends early (an error, or a LIMIT), SQLite runs xFinal to
 * release the state; the pointer result it then makes is freed with it.
 */
int ops_types_register(sqlite3 *conn)
{
	static const struct {
		const char *name;
		int n_args;
		void (*step)(sqlite3_context *, int, sqlite3_value **);
		void (*final)(sqlite3_context *);
	} aggs[] = {
		{"__intrinsic_array_agg", 1, array_step, array_final},
		{"__intrinsic_row_dataframe_agg", -1, row_df_step, row_df_final},
		{"__intrinsic_graph_agg", 2, graph_step, graph_final},
		{"__intrinsic_interval_tree_intervals_agg", -1, itree_step, itree_final},
		/* The same for rows in any order (sorted here, only if they are
		 * not already: intervals.intersect's macros, over tables whose ts
		 * is mostly sorted already). */
		{"__intrinsic_interval_tree_intervals_agg_any_order", -1, itree_step,
		 itree_final},
		{"__intrinsic_timestamp_set_agg", 1, ts_set_step, ts_set_final},
		{"__intrinsic_counter_per_track_agg", 4, counters_step, counters_final},
	};
	size_t i;
	int rc;

	for (i = 0; i < sizeof(aggs) / sizeof(aggs[0]); i++) {
		rc = sqlite3_create_function_v2(conn, aggs[i].name, aggs[i].n_args,
						SQLITE_UTF8 | SQLITE_INNOCUOUS,
						strstr(aggs[i].name, "_any_order") ? (void *)conn
										  : NULL,
						NULL, aggs[i].step, aggs[i].final, NULL);
		if (rc != SQLITE_OK)
			return rc;
	}
	return sqlite3_create_function_v2(conn, "__intrinsic_struct", -1,
					  SQLITE_UTF8 | SQLITE_INNOCUOUS, NULL, fn_struct, NULL,
					  NULL, NULL);
}

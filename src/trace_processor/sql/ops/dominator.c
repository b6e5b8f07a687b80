// SPDX-License-Identifier: Apache-2.0
/*
 * dominator.c - __intrinsic_dominator_tree(source, dest, root), the
 * aggregate of graphs.dominator_tree: the edges of a directed graph and its
 * root -> a TABLE (node_id, dominator_node_id) of the nodes reachable from
 * the root, in the preorder of a depth-first search that takes each node's
 * edges in the order given, each with its immediate dominator (NULL for
 * the root). Semi-dominators by Lengauer and Tarjan's eval/link with path
 * compression, then immediate dominators as the nearest common ancestor
 * (SEMI-NCA). Iterative throughout; node ids are bounded (DOM_MAX_NODE_ID).
 */
#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/sql/ops/ops_int.h"

/* Largest node id (the per-node arrays are indexed by id). */
#define DOM_MAX_NODE_ID ((int64_t)1 << 30)
#define DOM_NONE UINT32_MAX

struct dom_state {
	uint32_t *src, *dst;
	size_t n, cap;
	uint32_t n_ids;
	int64_t root;
};

static void dom_state_free(struct dom_state *s)
{
	if (!s)
		return;
	free(s->src);
	free(s->dst);
	free(s);
}

static void dom_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct dom_state **slot = sqlite3_aggregate_context(ctx, (int)sizeof(*slot));
	struct dom_state *s;
	int64_t src, dst;

	(void)argc;
	if (!slot)
		goto nomem;
	s = *slot;
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			goto nomem;
		s->root = sqlite3_value_int64(argv[2]);
		*slot = s;
	}
	src = sqlite3_value_int64(argv[0]);
	dst = sqlite3_value_int64(argv[1]);
	if (src < 0 || src >= DOM_MAX_NODE_ID || dst < 0 || dst >= DOM_MAX_NODE_ID) {
		ops_error(ctx, "dominator_tree: node id %" PRId64 " out of range",
			  src < 0 || src >= DOM_MAX_NODE_ID ? src : dst);
		return;
	}
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
	if ((uint32_t)src >= s->n_ids)
		s->n_ids = (uint32_t)src + 1;
	if ((uint32_t)dst >= s->n_ids)
		s->n_ids = (uint32_t)dst + 1;
	return;
nomem:
	sqlite3_result_error_nomem(ctx);
}

/* CSR of the edges from @from to @to, in input order per node. */
static int csr(const uint32_t *from, const uint32_t *to, size_t n, uint32_t n_ids,
	       uint32_t **out_start, uint32_t **out_adj)
{
	uint32_t *start = calloc((size_t)n_ids + 1, sizeof(*start));
	uint32_t *adj = malloc((n ? n : 1) * sizeof(*adj));
	uint32_t *fill = calloc((size_t)n_ids + 1, sizeof(*fill));
	size_t i;

	if (!start || !adj || !fill) {
		free(start);
		free(adj);
		free(fill);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		start[from[i] + 1]++;
	for (i = 0; i < n_ids; i++)
		start[i + 1] += start[i];
	for (i = 0; i < n; i++)
		adj[start[from[i]] + fill[from[i]]++] = to[i];
	free(fill);
	*out_start = start;
	*out_adj = adj;
	return 0;
}

struct dom_work {
	uint32_t *succ_start, *succ, *pred_start, *pred;
	uint32_t *pre;    /* node id -> preorder number, DOM_NONE if unreached */
	uint32_t *vertex; /* preorder number -> node id */
	uint32_t *parent, *semi, *label, *ancestor, *idom, *path;
	uint32_t n; /* nodes reached */
};

static void dom_work_free(struct dom_work *w)
{
	free(w->succ_start);
	free(w->succ);
	free(w->pred_start);
	free(w->pred);
	free(w->pre);
	free(w->vertex);
	free(w->parent);
	free(w->semi);
	free(w->label);
	free(w->ancestor);
	free(w->idom);
	free(w->path);
}

/* The preorder numbering and tree parents of the DFS from @root. */
static int dom_dfs(struct dom_work *w, uint32_t root, size_t n_edges)
{
	struct item {
		uint32_t node, parent;
	} *stack = NULL;
	size_t n = 0, cap = 0;

	if (ops_grow((void **)&stack, &cap, n_edges + 1, sizeof(*stack)) < 0)
		return -ENOMEM;
	stack[n++] = (struct item){root, DOM_NONE};
	while (n > 0) {
		struct item it = stack[--n];
		uint32_t e, num;

		if (w->pre[it.node] != DOM_NONE)
			continue;
		num = w->n++;
		w->pre[it.node] = num;
		w->vertex[num] = it.node;
		w->parent[num] = it.parent;
		/* Each edge is pushed at most once (when its source is numbered). */
		for (e = w->succ_start[it.node + 1]; e > w->succ_start[it.node]; e--)
			stack[n++] = (struct item){w->succ[e - 1], num};
	}
	free(stack);
	return 0;
}

/* Lengauer-Tarjan's eval: the vertex of least semi on @v's forest path. */
static uint32_t dom_eval(struct dom_work *w, uint32_t v)
{
	uint32_t x = v, n = 0;

	if (w->ancestor[v] == DOM_NONE)
		return v;
	while (w->ancestor[x] != DOM_NONE && w->ancestor[w->ancestor[x]] != DOM_NONE) {
		w->path[n++] = x;
		x = w->ancestor[x];
	}
	while (n > 0) {
		uint32_t y = w->path[--n], a = w->ancestor[y];

		if (w->semi[w->label[a]] < w->semi[w->label[y]])
			w->label[y] = w->label[a];
		w->ancestor[y] = w->ancestor[a];
	}
	return w->label[v];
}

static void dom_compute(struct dom_work *w)
{
	uint32_t i;

	for (i = w->n; i-- > 1;) {
		uint32_t node = w->vertex[i], e;

		for (e = w->pred_start[node]; e < w->pred_start[node + 1]; e++) {
			uint32_t pv = w->pre[w->pred[e]], u;

			if (pv == DOM_NONE)
				continue;
			u = dom_eval(w, pv);
			if (w->semi[u] < w->semi[i])
				w->semi[i] = w->semi[u];
		}
		w->ancestor[i] = w->parent[i];
	}
	w->idom[0] = DOM_NONE;
	for (i = 1; i < w->n; i++) {
		uint32_t d = w->parent[i];

		while (d > w->semi[i])
			d = w->idom[d];
		w->idom[i] = d;
	}
}

static void dom_final(sqlite3_context *ctx)
{
	static const char *const cols[] = {"node_id", "dominator_node_id"};
	struct dom_state **slot = sqlite3_aggregate_context(ctx, 0);
	struct dom_state *s = slot ? *slot : NULL;
	struct ops_table *t = ops_table_create(2, cols);
	struct dom_work w;
	uint32_t i, n_ids, root;

	memset(&w, 0, sizeof(w));
	if (slot)
		*slot = NULL;
	if (!t)
		goto nomem;
	if (!s) {
		ops_table_result(ctx, t);
		return;
	}
	n_ids = s->n_ids;
	if (s->root < 0 || s->root >= (int64_t)n_ids) {
		sqlite3_result_error(ctx, "dominator_tree: root node is not in the graph", -1);
		goto out;
	}
	root = (uint32_t)s->root;
	if (csr(s->src, s->dst, s->n, n_ids, &w.succ_start, &w.succ) < 0 ||
	    csr(s->dst, s->src, s->n, n_ids, &w.pred_start, &w.pred) < 0)
		goto nomem;
	w.pre = malloc((size_t)n_ids * sizeof(*w.pre));
	w.vertex = malloc((size_t)n_ids * sizeof(*w.vertex));
	w.parent = malloc((size_t)n_ids * sizeof(*w.parent));
	if (!w.pre || !w.vertex || !w.parent)
		goto nomem;
	memset(w.pre, 0xff, (size_t)n_ids * sizeof(*w.pre));
	if (dom_dfs(&w, root, s->n) < 0)
		goto nomem;
	if (w.n <= 1) {
		sqlite3_result_error(
			ctx, "dominator_tree: non empty graph must contain root and another node", -1);
		goto out;
	}
	w.semi = malloc((size_t)w.n * sizeof(*w.semi));
	w.label = malloc((size_t)w.n * sizeof(*w.label));
	w.ancestor = malloc((size_t)w.n * sizeof(*w.ancestor));
	w.idom = malloc((size_t)w.n * sizeof(*w.idom));
	w.path = malloc((size_t)w.n * sizeof(*w.path));
	if (!w.semi || !w.label || !w.ancestor || !w.idom || !w.path ||
	    ops_table_reserve(t, w.n) < 0)
		goto nomem;
	for (i = 0; i < w.n; i++) {
		w.semi[i] = i;
		w.label[i] = i;
		w.ancestor[i] = DOM_NONE;
	}
	dom_compute(&w);
	for (i = 0; i < w.n; i++) {
		int64_t r = ops_table_append(t);

		if (r < 0)
			goto nomem;
		ops_set_int(t, 0, (size_t)r, w.vertex[i]);
		if (w.idom[i] == DOM_NONE)
			ops_set_null(t, 1, (size_t)r);
		else
			ops_set_int(t, 1, (size_t)r, w.vertex[w.idom[i]]);
	}
	ops_table_result(ctx, t);
	t = NULL;
	goto out;
nomem:
	sqlite3_result_error_nomem(ctx);
out:
	ops_table_destroy(t);
	dom_work_free(&w);
	dom_state_free(s);
}

int ops_dominator_register(sqlite3 *conn)
{
	return sqlite3_create_function_v2(conn, "__intrinsic_dominator_tree", 3, SQLITE_UTF8, NULL,
					  NULL, dom_step, dom_final, NULL);
}

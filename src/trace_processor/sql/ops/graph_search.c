// SPDX-License-Identifier: Apache-2.0
/*
 * graph_search.c - the searches of graphs.search: __intrinsic_dfs and
 * __intrinsic_bfs (a GRAPH and an ARRAY<LONG> of start nodes -> a TABLE of
 * node_id, parent_node_id: the tree of the first visit of every reachable
 * node) and the table function __intrinsic_dfs_weight_bounded (edges and
 * roots as ARRAY<LONG>s -> root_node_id, node_id, parent_node_id: a DFS per
 * root that stops once the weights of the edges taken pass the root's
 * bound). A node visits its edges in the order they were aggregated. Node
 * ids are bounded (GRAPH_SEARCH_MAX_ID); cycles end at visited nodes.
 */
#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "trace_processor/sql/ops/ops_int.h"

/* Largest node id a search takes (its visited set is a byte per id). */
#define GRAPH_SEARCH_MAX_ID ((int64_t)1 << 30)

struct visit {
	uint32_t id;
	uint32_t parent; /* UINT32_MAX: none */
	uint32_t weight;
};

static const char *const k_tree_cols[] = {"node_id", "parent_node_id"};

/* Appends (id, parent) to @t. Return: 0 or -ENOMEM. */
static int tree_push(struct ops_table *t, uint32_t id, uint32_t parent)
{
	int64_t r = ops_table_append(t);

	if (r < 0)
		return (int)r;
	ops_set_int(t, 0, (size_t)r, id);
	if (parent == UINT32_MAX)
		ops_set_null(t, 1, (size_t)r);
	else
		ops_set_int(t, 1, (size_t)r, parent);
	return 0;
}

/*
 * Checks the start ids of @starts and sets *@out_n_ids to the size the
 * visited set needs. Return: 0, or -1 with the error set on @ctx.
 */
static int check_starts(sqlite3_context *ctx, const char *fn, const struct ops_graph *g,
			const struct ops_array *starts, uint32_t *out_n_ids)
{
	uint32_t n = g->n_nodes;
	size_t i;

	for (i = 0; i < starts->n; i++) {
		int64_t x = starts->ints[i];

		if (x < 0 || x >= GRAPH_SEARCH_MAX_ID) {
			ops_error(ctx, "%s: start node id %" PRId64 " out of range", fn, x);
			return -1;
		}
		if ((uint32_t)x >= n)
			n = (uint32_t)x + 1;
	}
	*out_n_ids = n;
	return 0;
}

/* The DFS (@is_dfs) or BFS of @g from @starts into @t. 0 or -ENOMEM. */
static int search(const struct ops_graph *g, const struct ops_array *starts, uint32_t n_ids,
		  bool is_dfs, struct ops_table *t)
{
	uint8_t *seen = calloc(n_ids ? n_ids : 1, 1);
	struct visit *q = NULL;
	size_t cap = 0, n = 0, head = 0, i;
	int err = -ENOMEM;

	if (!seen)
		return -ENOMEM;
	if (is_dfs) {
		/* Popped from the back: the first start is searched last, as upstream. */
		for (i = 0; i < starts->n; i++) {
			if (ops_grow((void **)&q, &cap, n + 1, sizeof(*q)) < 0)
				goto out;
			q[n++] = (struct visit){(uint32_t)starts->ints[i], UINT32_MAX, 0};
		}
		while (n > 0) {
			struct visit v = q[--n];
			uint32_t e;

			if (seen[v.id])
				continue;
			seen[v.id] = 1;
			if (tree_push(t, v.id, v.parent) < 0)
				goto out;
			if (v.id >= g->n_nodes)
				continue;
			/* Pushed in reverse so that the first edge is taken first. */
			for (e = g->edge_start[v.id + 1]; e > g->edge_start[v.id]; e--) {
				if (ops_grow((void **)&q, &cap, n + 1, sizeof(*q)) < 0)
					goto out;
				q[n++] = (struct visit){g->edges[e - 1], v.id, 0};
			}
		}
	} else {
		for (i = 0; i < starts->n; i++) {
			uint32_t id = (uint32_t)starts->ints[i];

			if (seen[id])
				continue;
			seen[id] = 1;
			if (ops_grow((void **)&q, &cap, n + 1, sizeof(*q)) < 0)
				goto out;
			q[n++] = (struct visit){id, UINT32_MAX, 0};
		}
		/* Each node enters the queue once, so it never holds more than n_ids. */
		while (head < n) {
			struct visit v = q[head++];
			uint32_t e;

			if (tree_push(t, v.id, v.parent) < 0)
				goto out;
			if (v.id >= g->n_nodes)
				continue;
			for (e = g->edge_start[v.id]; e < g->edge_start[v.id + 1]; e++) {
				uint32_t to = g->edges[e];

				if (seen[to])
					continue;
				seen[to] = 1;
				if (ops_grow((void **)&q, &cap, n + 1, sizeof(*q)) < 0)
					goto out;
				q[n++] = (struct visit){to, v.id, 0};
			}
		}
	}
	err = 0;
out:
	free(q);
	free(seen);
	return err;
}

static void fn_search(sqlite3_context *ctx, sqlite3_value **argv, bool is_dfs)
{
	const char *name = is_dfs ? "__intrinsic_dfs" : "__intrinsic_bfs";
	const struct ops_graph *g = sqlite3_value_pointer(argv[0], OPS_PTR_GRAPH);
	const struct ops_array *starts = sqlite3_value_pointer(argv[1], OPS_PTR_ARRAY_LONG);
	struct ops_table *t = ops_table_create(2, k_tree_cols);
	uint32_t n_ids = 0;

	if (!t) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	/* No graph or no start node (an empty aggregate): an empty tree. */
	if (g && starts && starts->n > 0) {
		if (check_starts(ctx, name, g, starts, &n_ids) < 0) {
			ops_table_destroy(t);
			return;
		}
		if (search(g, starts, n_ids, is_dfs, t) < 0) {
			ops_table_destroy(t);
			sqlite3_result_error_nomem(ctx);
			return;
		}
	}
	ops_table_result(ctx, t);
}

static void fn_dfs(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	fn_search(ctx, argv, true);
}

static void fn_bfs(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	fn_search(ctx, argv, false);
}

/* ---------------------------------------------------- weight bounded ---- */

static const char *const k_wb_cols[] = {"root_node_id INTEGER", "node_id INTEGER",
					"parent_node_id INTEGER"};

/* An id or weight of an ARRAY<LONG> argument, checked to fit a uint32. */
static int wb_get(const struct ops_array *a, size_t i, const char *what, char **err,
		  uint32_t *out)
{
	int64_t x = a->ints[i];

	if (x < 0 || x >= GRAPH_SEARCH_MAX_ID) {
		*err = sqlite3_mprintf("dfs_weight_bounded: %s %" PRId64 " out of range", what, x);
		return -1;
	}
	*out = (uint32_t)x;
	return 0;
}

struct wb_edge {
	uint32_t src, dst, weight;
	uint32_t order;
};

static int wb_edge_cmp(const void *a, const void *b)
{
	const struct wb_edge *x = a, *y = b;

	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return x->order < y->order ? -1 : (x->order > y->order);
}

static int wb_run(void *user, sqlite3_value **argv, struct ops_table *out, char **err)
{
	const struct ops_array *a[5];
	struct wb_edge *edges = NULL;
	uint32_t *start = NULL;
	uint8_t *seen = NULL;
	struct visit *stack = NULL;
	size_t n_edges, n_roots, i, cap = 0;
	uint32_t n_ids = 0;
	bool floor_w;
	int n_null = 0, rc = -1;

	(void)user;
	for (i = 0; i < 5; i++) {
		a[i] = sqlite3_value_pointer(argv[i], OPS_PTR_ARRAY_LONG);
		if (!a[i] && sqlite3_value_type(argv[i]) != SQLITE_NULL) {
			*err = sqlite3_mprintf("dfs_weight_bounded: argument %zu should be an "
					       "ARRAY<LONG> (__intrinsic_array_agg)",
					       i + 1);
			return -1;
		}
	}
	floor_w = sqlite3_value_int64(argv[5]) != 0;
	if (!a[0] && !a[1] && !a[2])
		return 0;
	if (!a[3] && !a[4])
		return 0;
	for (i = 0; i < 5; i++)
		n_null += !a[i];
	if (n_null) {
		*err = sqlite3_mprintf("dfs_weight_bounded: either all arguments should be null "
				       "or none should be");
		return -1;
	}
	if (a[0]->n != a[1]->n || a[0]->n != a[2]->n) {
		*err = sqlite3_mprintf("dfs_weight_bounded: length of source and destination "
				       "columns is not the same");
		return -1;
	}
	if (a[3]->n != a[4]->n) {
		*err = sqlite3_mprintf("dfs_weight_bounded: length of root_node_ids and "
				       "root_target_weights columns is not the same");
		return -1;
	}
	n_edges = a[0]->n;
	n_roots = a[3]->n;
	edges = malloc((n_edges ? n_edges : 1) * sizeof(*edges));
	if (!edges)
		goto nomem;
	for (i = 0; i < n_edges; i++) {
		struct wb_edge *e = &edges[i];

		if (wb_get(a[0], i, "source node id", err, &e->src) < 0 ||
		    wb_get(a[1], i, "dest node id", err, &e->dst) < 0)
			goto out;
		/* A weight is a uint32 upstream; larger ones are refused here. */
		if (a[2]->ints[i] < 0 || a[2]->ints[i] > UINT32_MAX) {
			*err = sqlite3_mprintf("dfs_weight_bounded: edge weight %" PRId64
					       " out of range",
					       a[2]->ints[i]);
			goto out;
		}
		e->weight = (uint32_t)a[2]->ints[i];
		e->order = (uint32_t)i;
		if (e->src >= n_ids)
			n_ids = e->src + 1;
		if (e->dst >= n_ids)
			n_ids = e->dst + 1;
	}
	for (i = 0; i < n_roots; i++) {
		uint32_t r;

		if (wb_get(a[3], i, "root node id", err, &r) < 0)
			goto out;
		if (r >= n_ids)
			n_ids = r + 1;
	}
	sort_n(edges, n_edges, sizeof(*edges), wb_edge_cmp);
	start = calloc((size_t)n_ids + 1, sizeof(*start));
	seen = malloc(n_ids ? n_ids : 1);
	if (!start || !seen)
		goto nomem;
	for (i = 0; i < n_edges; i++)
		start[edges[i].src + 1]++;
	for (i = 0; i < n_ids; i++)
		start[i + 1] += start[i];
	for (i = 0; i < n_roots; i++) {
		uint32_t root = (uint32_t)a[3]->ints[i];
		int64_t bound = a[4]->ints[i];
		uint64_t total = 0;
		size_t n = 0;

		/* The bound is a uint32 upstream: a negative one wraps to a large one. */
		bound = (int64_t)(uint32_t)bound;
		memset(seen, 0, n_ids);
		if (ops_grow((void **)&stack, &cap, 1, sizeof(*stack)) < 0)
			goto nomem;
		stack[n++] = (struct visit){root, UINT32_MAX, 0};
		while (n > 0) {
			struct visit v = stack[--n];
			uint32_t e;
			int64_t r;

			if (seen[v.id])
				continue;
			seen[v.id] = 1;
			total += v.weight;
			if (!floor_w && total > (uint64_t)bound)
				break;
			r = ops_table_append(out);
			if (r < 0)
				goto nomem;
			ops_set_int(out, 0, (size_t)r, root);
			ops_set_int(out, 1, (size_t)r, v.id);
			if (v.parent == UINT32_MAX)
				ops_set_null(out, 2, (size_t)r);
			else
				ops_set_int(out, 2, (size_t)r, v.parent);
			if (total > (uint64_t)bound)
				break;
			for (e = start[v.id + 1]; e > start[v.id]; e--) {
				const struct wb_edge *ed = &edges[e - 1];

				if (ops_grow((void **)&stack, &cap, n + 1, sizeof(*stack)) < 0)
					goto nomem;
				stack[n++] = (struct visit){ed->dst, v.id, ed->weight};
			}
		}
	}
	rc = 0;
	goto out;
nomem:
	*err = sqlite3_mprintf("dfs_weight_bounded: out of memory");
out:
	free(stack);
	free(seen);
	free(start);
	free(edges);
	return rc;
}

static const struct ops_tfn k_dfs_weight_bounded = {
	.name = "__intrinsic_dfs_weight_bounded",
	.cols = k_wb_cols,
	.n_cols = 3,
	.n_args = 6,
	.run = wb_run,
};

int ops_graph_search_register(sqlite3 *conn)
{
	int rc = sqlite3_create_function_v2(conn, "__intrinsic_dfs", 2, SQLITE_UTF8, NULL, fn_dfs,
					    NULL, NULL, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(conn, "__intrinsic_bfs", 2, SQLITE_UTF8, NULL,
						fn_bfs, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = ops_tfn_register(conn, &k_dfs_weight_bounded);
	return rc;
}

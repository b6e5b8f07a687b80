// SPDX-License-Identifier: Apache-2.0
/*
 * critical_path.c - the critical path of sched.thread_executing_span:
 * __intrinsic_wakeup_graph_agg(id, utid, ts, dur, idle_dur, waker_id,
 * prev_id) gathers the wakeup graph (a node per wakeup of a thread: the run
 * [ts, ts + dur) after an idle of idle_dur, who woke it, the thread's
 * previous node) into a WAKEUP_GRAPH value, and
 * __intrinsic_critical_path_walk(graph, ARRAY<LONG> roots) walks, for each
 * root, back through wakers and earlier wakeups, giving a TABLE of frames
 * (root_id, depth, ts, dur, blocker_id, blocker_utid, parent_id): which node
 * ran or blocked the root during each part of its idle and run window. Nodes
 * are kept sorted by id (binary search), so ids need not be dense; a walk
 * that does not end (a cycle in bad data) stops with an error.
 */
#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "trace_processor/sql/ops/ops_int.h"

/* Most frames one root's walk may take before it is called a cycle. */
#define CP_MAX_FRAMES_PER_ROOT ((size_t)1 << 26)

#define CP_NONE INT64_MIN

struct cp_node {
	int64_t id;
	int64_t utid, ts, dur;
	int64_t idle_dur; /* CP_NONE: unknown */
	int64_t waker_id; /* CP_NONE: none */
	int64_t prev_id;  /* CP_NONE: none */
	size_t order;     /* insertion order: the last of equal ids wins */
};

/* WAKEUP_GRAPH: the nodes sorted by id, one per id. */
struct cp_graph {
	struct cp_node *v;
	size_t n, cap;
};

static void cp_graph_destroy(void *p)
{
	struct cp_graph *g = p;

	if (!g)
		return;
	free(g->v);
	free(g);
}

static int64_t opt_int(sqlite3_value *v)
{
	return sqlite3_value_type(v) == SQLITE_NULL ? CP_NONE : sqlite3_value_int64(v);
}

static void wakeup_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct cp_graph **slot = sqlite3_aggregate_context(ctx, (int)sizeof(*slot));
	struct cp_graph *g;
	struct cp_node *n;

	(void)argc;
	if (!slot)
		goto nomem;
	g = *slot;
	if (!g) {
		g = calloc(1, sizeof(*g));
		if (!g)
			goto nomem;
		*slot = g;
	}
	if (ops_grow((void **)&g->v, &g->cap, g->n + 1, sizeof(*g->v)) < 0)
		goto nomem;
	n = &g->v[g->n];
	n->id = sqlite3_value_int64(argv[0]);
	if (n->id < 0 || n->id > UINT32_MAX) {
		ops_error(ctx, "WAKEUP_GRAPH_AGG: node id %" PRId64 " out of range", n->id);
		return;
	}
	n->utid = sqlite3_value_int64(argv[1]);
	n->ts = sqlite3_value_int64(argv[2]);
	n->dur = sqlite3_value_int64(argv[3]);
	n->idle_dur = opt_int(argv[4]);
	n->waker_id = opt_int(argv[5]);
	n->prev_id = opt_int(argv[6]);
	n->order = g->n++;
	return;
nomem:
	sqlite3_result_error_nomem(ctx);
}

static int node_cmp(const void *a, const void *b)
{
	const struct cp_node *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->order < y->order ? -1 : (x->order > y->order);
}

static void wakeup_final(sqlite3_context *ctx)
{
	struct cp_graph **slot = sqlite3_aggregate_context(ctx, 0);
	struct cp_graph *g = slot ? *slot : NULL;
	size_t i, w = 0;

	if (!g) {
		sqlite3_result_null(ctx);
		return;
	}
	*slot = NULL;
	sort_n(g->v, g->n, sizeof(*g->v), node_cmp);
	/* Of equal ids the last given replaces the others. */
	for (i = 0; i < g->n; i++) {
		if (w > 0 && g->v[w - 1].id == g->v[i].id)
			w--;
		g->v[w++] = g->v[i];
	}
	g->n = w;
	sqlite3_result_pointer(ctx, g, OPS_PTR_WAKEUP_GRAPH, cp_graph_destroy);
}

static const struct cp_node *cp_find(const struct cp_graph *g, int64_t id)
{
	size_t lo = 0, hi = g->n;

	if (id == CP_NONE)
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (g->v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < g->n && g->v[lo].id == id ? &g->v[lo] : NULL;
}

/* A part of a root's window to attribute to a node at a depth. */
struct cp_frame {
	int64_t node_id;
	int64_t start, end;
	int64_t depth;
	int64_t parent_id;
};

enum { CP_ROOT, CP_DEPTH, CP_TS, CP_DUR, CP_BLOCKER, CP_BLOCKER_UTID, CP_PARENT, CP_N_COLS };

static const char *const k_cp_cols[CP_N_COLS] = {"root_id", "depth", "ts", "dur",
						 "blocker_id", "blocker_utid", "parent_id"};

static int cp_emit(struct ops_table *t, int64_t root, const struct cp_frame *f,
		   const struct cp_node *n, int64_t ts, int64_t dur)
{
	int64_t r = ops_table_append(t);

	if (r < 0)
		return (int)r;
	ops_set_int(t, CP_ROOT, (size_t)r, root);
	ops_set_int(t, CP_DEPTH, (size_t)r, f->depth);
	ops_set_int(t, CP_TS, (size_t)r, ts);
	ops_set_int(t, CP_DUR, (size_t)r, dur);
	ops_set_int(t, CP_BLOCKER, (size_t)r, f->node_id);
	ops_set_int(t, CP_BLOCKER_UTID, (size_t)r, n->utid);
	ops_set_int(t, CP_PARENT, (size_t)r, f->parent_id);
	return 0;
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/*
 * Walks root @root_id of @g into @t, with @stack as scratch.
 * Return: 0, -ENOMEM, or -ELOOP when the walk does not end.
 */
static int walk_root(const struct cp_graph *g, int64_t root_id, struct ops_table *t,
		     struct cp_frame **stack, size_t *cap)
{
	const struct cp_node *root = cp_find(g, root_id);
	size_t n = 0, steps = 0;

	if (!root)
		return 0;
	if (ops_grow((void **)stack, cap, 1, sizeof(**stack)) < 0)
		return -ENOMEM;
	(*stack)[n++] = (struct cp_frame){
		root_id, root->ts - (root->idle_dur == CP_NONE ? 0 : root->idle_dur),
		root->ts + root->dur, 0, root_id};
	while (n > 0) {
		struct cp_frame f = (*stack)[--n];
		const struct cp_node *node;
		int64_t idle_start, eff_start, eff_end, clip_end, run_start;

		if (++steps > CP_MAX_FRAMES_PER_ROOT)
			return -ELOOP;
		if (f.start >= f.end)
			continue;
		node = cp_find(g, f.node_id);
		if (!node)
			continue;
		idle_start = node->idle_dur != CP_NONE ? node->ts - node->idle_dur : f.start;
		eff_start = max64(f.start, idle_start);
		eff_end = min64(f.end, node->ts + node->dur);
		/* Before this wakeup's idle: the thread's previous wakeup, same depth. */
		if (node->idle_dur != CP_NONE && f.start < idle_start && node->prev_id != CP_NONE) {
			if (ops_grow((void **)stack, cap, n + 1, sizeof(**stack)) < 0)
				return -ENOMEM;
			(*stack)[n++] = (struct cp_frame){node->prev_id, f.start,
							  min64(f.end, idle_start), f.depth,
							  f.parent_id};
		}
		if (eff_start >= eff_end)
			continue;
		/* The idle part: the waker's doing, or (no waker) the thread's own. */
		clip_end = min64(eff_end, node->ts);
		if (eff_start < clip_end) {
			if (node->waker_id == CP_NONE && node->prev_id != CP_NONE) {
				if (cp_emit(t, root_id, &f, node, eff_start, clip_end - eff_start) < 0)
					return -ENOMEM;
			} else if (node->waker_id != CP_NONE) {
				if (ops_grow((void **)stack, cap, n + 1, sizeof(**stack)) < 0)
					return -ENOMEM;
				(*stack)[n++] = (struct cp_frame){node->waker_id, eff_start,
								  clip_end, f.depth + 1,
								  f.parent_id};
			}
		}
		/* The run part: the node itself is on the CPU. */
		run_start = max64(eff_start, node->ts);
		if (run_start < eff_end &&
		    cp_emit(t, root_id, &f, node, run_start, eff_end - run_start) < 0)
			return -ENOMEM;
	}
	return 0;
}

static void fn_walk(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const struct cp_graph *g = sqlite3_value_pointer(argv[0], OPS_PTR_WAKEUP_GRAPH);
	const struct ops_array *roots = sqlite3_value_pointer(argv[1], OPS_PTR_ARRAY_LONG);
	struct ops_table *t = ops_table_create(CP_N_COLS, k_cp_cols);
	struct cp_frame *stack = NULL;
	size_t cap = 0, i;
	int err = 0;

	(void)argc;
	if (!t) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	for (i = 0; g && g->n && roots && i < roots->n && !err; i++)
		err = walk_root(g, roots->ints[i], t, &stack, &cap);
	free(stack);
	if (err) {
		ops_table_destroy(t);
		if (err == -ENOMEM)
			sqlite3_result_error_nomem(ctx);
		else
			ops_error(ctx, "__intrinsic_critical_path_walk: the walk from root %" PRId64
				       " does not end (a cycle in the wakeup graph?)",
				  roots->ints[i - 1]);
		return;
	}
	ops_table_result(ctx, t);
}

int ops_critical_path_register(sqlite3 *conn)
{
	int rc = sqlite3_create_function_v2(conn, "__intrinsic_wakeup_graph_agg", 7, SQLITE_UTF8,
					    NULL, NULL, wakeup_step, wakeup_final, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(conn, "__intrinsic_critical_path_walk", 2,
						SQLITE_UTF8, NULL, fn_walk, NULL, NULL, NULL);
	return rc;
}

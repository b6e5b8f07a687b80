// SPDX-License-Identifier: Apache-2.0
/*
 * tree_partition.c - __intrinsic_structural_tree_partition(id, parent_id,
 * group_key), the aggregate of graphs.partition: a tree (one row with a
 * NULL parent_id: the root) whose nodes carry a group -> a TABLE (node_id,
 * parent_node_id, group_key) where each node's parent is its nearest
 * ancestor of the same group (NULL if none), the rows in the preorder of a
 * DFS from the root that takes a node's children last given first, as
 * upstream's. Ids and groups are bounded (PART_MAX_ID); a node met twice
 * (a cycle, a repeated id) is an error, not an endless walk.
 */
#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/sql/ops/ops_int.h"

/* Largest id and group (the per-id and per-group arrays are indexed by them). */
#define PART_MAX_ID ((int64_t)1 << 30)
#define PART_NONE UINT32_MAX

struct part_row {
	uint32_t id, parent, group;
};

struct part_state {
	struct part_row *rows; /* the non-root rows */
	size_t n, cap;
	struct part_row root;
	bool has_root;
	uint32_t n_ids, n_groups;
};

static void part_state_free(struct part_state *s)
{
	if (!s)
		return;
	free(s->rows);
	free(s);
}

static int part_get(sqlite3_context *ctx, sqlite3_value *v, const char *what, uint32_t *out)
{
	int64_t x = sqlite3_value_int64(v);

	if (x < 0 || x >= PART_MAX_ID) {
		ops_error(ctx, "tree_partition: %s %" PRId64 " out of range", what, x);
		return -1;
	}
	*out = (uint32_t)x;
	return 0;
}

static void part_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct part_state **slot = sqlite3_aggregate_context(ctx, (int)sizeof(*slot));
	struct part_state *s;
	struct part_row r;

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
	if (part_get(ctx, argv[0], "id", &r.id) < 0 || part_get(ctx, argv[2], "group", &r.group) < 0)
		return;
	if (r.group >= s->n_groups)
		s->n_groups = r.group + 1;
	if (r.id >= s->n_ids)
		s->n_ids = r.id + 1;
	if (sqlite3_value_type(argv[1]) == SQLITE_NULL) {
		if (s->has_root) {
			sqlite3_result_error(ctx,
					     "tree_partition: multiple NULL parent_ids. Only one root "
					     "(i.e. one NULL parent_id) expected.",
					     -1);
			return;
		}
		r.parent = PART_NONE;
		s->root = r;
		s->has_root = true;
		return;
	}
	if (part_get(ctx, argv[1], "parent_id", &r.parent) < 0)
		return;
	if (r.parent >= s->n_ids)
		s->n_ids = r.parent + 1;
	if (ops_grow((void **)&s->rows, &s->cap, s->n + 1, sizeof(*s->rows)) < 0)
		goto nomem;
	s->rows[s->n++] = r;
	return;
nomem:
	sqlite3_result_error_nomem(ctx);
}

struct part_frame {
	struct part_row row;
	uint32_t prev; /* the group's ancestor before this node */
	bool done;
};

/* The partition of @s into @t. 0, -ENOMEM, or -ELOOP (a node met twice). */
static int partition(const struct part_state *s, struct ops_table *t)
{
	uint32_t *start = calloc((size_t)s->n_ids + 1, sizeof(*start));
	uint32_t *fill = calloc((size_t)s->n_ids + 1, sizeof(*fill));
	struct part_row *by_parent = malloc((s->n ? s->n : 1) * sizeof(*by_parent));
	uint32_t *anc = malloc((size_t)s->n_groups * sizeof(*anc));
	uint8_t *seen = calloc(s->n_ids ? s->n_ids : 1, 1);
	struct part_frame *stack = NULL;
	size_t n = 0, cap = 0, i;
	int err = -ENOMEM;

	if (!start || !fill || !by_parent || !anc || !seen)
		goto out;
	memset(anc, 0xff, (size_t)s->n_groups * sizeof(*anc));
	for (i = 0; i < s->n; i++)
		start[s->rows[i].parent + 1]++;
	for (i = 0; i < s->n_ids; i++)
		start[i + 1] += start[i];
	for (i = 0; i < s->n; i++)
		by_parent[start[s->rows[i].parent] + fill[s->rows[i].parent]++] = s->rows[i];
	if (ops_grow((void **)&stack, &cap, 1, sizeof(*stack)) < 0)
		goto out;
	stack[n++] = (struct part_frame){s->root, PART_NONE, false};
	while (n > 0) {
		struct part_frame *f = &stack[n - 1];
		uint32_t id = f->row.id, c;
		int64_t r;

		if (f->done) {
			anc[f->row.group] = f->prev;
			n--;
			continue;
		}
		if (seen[id]) {
			err = -ELOOP;
			goto out;
		}
		seen[id] = 1;
		r = ops_table_append(t);
		if (r < 0)
			goto out;
		ops_set_int(t, 0, (size_t)r, id);
		if (anc[f->row.group] == PART_NONE)
			ops_set_null(t, 1, (size_t)r);
		else
			ops_set_int(t, 1, (size_t)r, anc[f->row.group]);
		ops_set_int(t, 2, (size_t)r, f->row.group);
		f->done = true;
		f->prev = anc[f->row.group];
		anc[f->row.group] = id;
		if (ops_grow((void **)&stack, &cap, n + (start[id + 1] - start[id]),
			     sizeof(*stack)) < 0)
			goto out;
		for (c = start[id]; c < start[id + 1]; c++)
			stack[n++] = (struct part_frame){by_parent[c], PART_NONE, false};
	}
	err = 0;
out:
	free(stack);
	free(seen);
	free(anc);
	free(by_parent);
	free(fill);
	free(start);
	return err;
}

static void part_final(sqlite3_context *ctx)
{
	static const char *const cols[] = {"node_id", "parent_node_id", "group_key"};
	struct part_state **slot = sqlite3_aggregate_context(ctx, 0);
	struct part_state *s = slot ? *slot : NULL;
	struct ops_table *t = ops_table_create(3, cols);
	int err;

	if (slot)
		*slot = NULL;
	if (!t) {
		sqlite3_result_error_nomem(ctx);
		goto out;
	}
	if (s && !s->has_root) {
		sqlite3_result_error(ctx, "tree_partition: no root in tree", -1);
		goto out;
	}
	err = s ? partition(s, t) : 0;
	if (err == -ELOOP) {
		sqlite3_result_error(ctx, "tree_partition: a node is reached twice (a cycle or "
					  "a repeated id)", -1);
		goto out;
	}
	if (err < 0) {
		sqlite3_result_error_nomem(ctx);
		goto out;
	}
	ops_table_result(ctx, t);
	t = NULL;
out:
	ops_table_destroy(t);
	part_state_free(s);
}

int ops_tree_partition_register(sqlite3 *conn)
{
	return sqlite3_create_function_v2(conn, "__intrinsic_structural_tree_partition", 3,
					  SQLITE_UTF8, NULL, NULL, part_step, part_final, NULL);
}

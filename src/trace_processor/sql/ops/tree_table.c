// SPDX-License-Identifier: Apache-2.0
/*
 * tree_table.c - the tree built-ins of std.trees.table_conversion:
 *
 *   __intrinsic_tree_from_table('id', id, 'parent_id', parent_id,
 *                               'name', value, ...)      aggregate -> TREE
 *   __intrinsic_tree_to_table(tree)                      -> TABLE
 *
 * The aggregate collects (name, value) pairs per row; the first two are the
 * node id and its parent's id (any int64; NULL parent: a root). The tree
 * orders its nodes so that each parent comes before its children: the
 * input order when it already does, else, for each input row in turn, its
 * ancestors not yet placed (root first) and then itself, as upstream's
 * does. The table has _tree_id (the node's place, from 0), _tree_parent_id
 * (its parent's place) and the columns given. A column takes the type of
 * its first non-NULL value; integers and reals mix into reals, text mixed
 * with numbers is an error (with upstream's messages), as are blobs, a
 * repeated id, a parent_id that names no row, and a cycle.
 */
#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/sql/ops/ops_int.h"

#define TREE_NONE UINT32_MAX

/* The aggregate's state: the rows as given, and each column's type. */
struct tree_acc {
	struct ops_table *t;   /* the columns as given (id, parent_id, ...) */
	uint8_t *type;         /* per column: OPS_NULL until a value is seen */
};

static void tree_acc_free(struct tree_acc *a)
{
	if (!a)
		return;
	ops_table_destroy(a->t);
	free(a->type);
	free(a);
}

static const char *tree_type_name(uint8_t type)
{
	switch (type) {
	case OPS_INT:
		return "LONG";
	case OPS_REAL:
		return "DOUBLE";
	default:
		return "STRING";
	}
}

static struct tree_acc *tree_acc_new(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	uint32_t n = (uint32_t)argc / 2, i;
	const char **names;
	struct tree_acc *a;

	if (argc < 4 || argc % 2 != 0 || n > OPS_MAX_COLS) {
		sqlite3_result_error(ctx, "tree_from_table: incorrect argument layout", -1);
		return NULL;
	}
	names = calloc(n, sizeof(*names));
	a = calloc(1, sizeof(*a));
	if (!names || !a)
		goto nomem;
	for (i = 0; i < n; i++) {
		if (sqlite3_value_type(argv[2 * i]) != SQLITE_TEXT) {
			ops_error(ctx, "tree_from_table: column name (argument %u) must be a string",
				  2 * i + 1);
			free(names);
			tree_acc_free(a);
			return NULL;
		}
		names[i] = (const char *)sqlite3_value_text(argv[2 * i]);
		if (!names[i])
			goto nomem;
	}
	a->t = ops_table_create(n, names);
	a->type = calloc(n, 1);
	if (!a->t || !a->type)
		goto nomem;
	free(names);
	return a;
nomem:
	free(names);
	tree_acc_free(a);
	sqlite3_result_error_nomem(ctx);
	return NULL;
}

static void tree_from_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct tree_acc **slot = sqlite3_aggregate_context(ctx, (int)sizeof(*slot));
	struct tree_acc *a;
	int64_t r;
	uint32_t c;

	if (!slot) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	if (!*slot) {
		*slot = tree_acc_new(ctx, argc, argv);
		if (!*slot)
			return;
	}
	a = *slot;
	if ((uint32_t)argc != 2 * a->t->n_cols) {
		sqlite3_result_error(ctx, "tree_from_table: incorrect argument layout", -1);
		return;
	}
	r = ops_table_append(a->t);
	if (r < 0) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	for (c = 0; c < a->t->n_cols; c++) {
		sqlite3_value *v = argv[2 * c + 1];
		uint8_t type;

		switch (sqlite3_value_type(v)) {
		case SQLITE_INTEGER:
			type = OPS_INT;
			break;
		case SQLITE_FLOAT:
			type = OPS_REAL;
			break;
		case SQLITE_TEXT:
			type = OPS_TEXT;
			break;
		case SQLITE_NULL:
			continue; /* the new row's cells start NULL */
		default:
			sqlite3_result_error(ctx, "tree_from_table: blobs are unsupported", -1);
			return;
		}
		if (a->type[c] == OPS_NULL || (a->type[c] == OPS_INT && type == OPS_REAL)) {
			a->type[c] = type;
		} else if (a->type[c] != type && !(a->type[c] == OPS_REAL && type == OPS_INT)) {
			ops_error(ctx, "column '%s' was inferred to be %s, but later received a "
				       "value of type %s",
				  a->t->names[c], tree_type_name(a->type[c]), tree_type_name(type));
			return;
		}
		if (ops_set_value(a->t, c, (size_t)r, v) < 0) {
			sqlite3_result_error_nomem(ctx);
			return;
		}
	}
}

struct tree_id_row {
	int64_t id;
	uint32_t row;
};

static int tree_id_cmp(const void *x, const void *y)
{
	const struct tree_id_row *a = x, *b = y;

	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return a->row < b->row ? -1 : a->row > b->row;
}

/* The row whose id is @id, or TREE_NONE. */
static uint32_t tree_find(const struct tree_id_row *ix, size_t n, int64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && ix[lo].id == id ? ix[lo].row : TREE_NONE;
}

/*
 * Orders the nodes of @a parents first. Fills @order (output place -> input
 * row) and @out_parent (output place -> parent's output place).
 * Return: NULL, or the error message (static).
 */
static const char *tree_order(const struct tree_acc *a, uint32_t *order, uint32_t *out_parent)
{
	const struct ops_table *t = a->t;
	uint32_t n = (uint32_t)t->n_rows, i;
	const char *err = NULL;
	struct tree_id_row *ix = NULL;
	uint32_t *parent = NULL, *place = NULL, *path = NULL;
	uint8_t *state = NULL;
	uint32_t placed = 0;
	bool in_order = true;

	if (a->type[0] != OPS_INT)
		return "tree: id column must be integer";
	if (a->type[1] != OPS_INT && a->type[1] != OPS_NULL)
		return "tree: parent_id column must be integer";
	ix = malloc((size_t)n * sizeof(*ix));
	parent = malloc((size_t)n * sizeof(*parent));
	place = malloc((size_t)n * sizeof(*place));
	path = malloc((size_t)n * sizeof(*path));
	state = calloc(n, 1);
	if (!ix || !parent || !place || !path || !state) {
		err = "out of memory";
		goto out;
	}
	/* A NULL id is 0 to the index, as upstream's dense storage has it. */
	for (i = 0; i < n; i++) {
		const struct ops_cell *c = &t->cols[0][i];

		ix[i].id = c->type == OPS_INT ? c->u.i : 0;
		ix[i].row = i;
	}
	qsort(ix, n, sizeof(*ix), tree_id_cmp);
	for (i = 1; i < n; i++) {
		if (ix[i].id == ix[i - 1].id) {
			err = "tree: duplicate id";
			goto out;
		}
	}
	for (i = 0; i < n; i++) {
		const struct ops_cell *c = &t->cols[1][i];

		parent[i] = TREE_NONE;
		if (c->type != OPS_INT)
			continue;
		parent[i] = tree_find(ix, n, c->u.i);
		if (parent[i] == TREE_NONE) {
			err = "tree: parent_id not found in id column";
			goto out;
		}
		if (parent[i] >= i)
			in_order = false;
	}
	/* place[row]: the row's output place once it is placed. */
	for (i = 0; i < n; i++) {
		uint32_t len = 0, row = i;

		if (in_order) {
			order[i] = i;
			out_parent[i] = parent[i];
			continue;
		}
		if (state[i] == 2)
			continue;
		while (row != TREE_NONE && state[row] == 0) {
			state[row] = 1;
			path[len++] = row;
			row = parent[row];
		}
		if (row != TREE_NONE && state[row] == 1) {
			err = "tree: cycle detected in parent relation";
			goto out;
		}
		while (len > 0) {
			uint32_t r = path[--len];

			order[placed] = r;
			out_parent[placed] = parent[r] == TREE_NONE ? TREE_NONE : place[parent[r]];
			place[r] = placed++;
			state[r] = 2;
		}
	}
out:
	free(ix);
	free(parent);
	free(place);
	free(path);
	free(state);
	return err;
}

static void tree_from_final(sqlite3_context *ctx)
{
	struct tree_acc **slot = sqlite3_aggregate_context(ctx, 0);
	struct tree_acc *a = slot ? *slot : NULL;
	struct ops_table *out = NULL;
	const char **names = NULL;
	uint32_t *order = NULL, *out_parent = NULL, n_cols, c;
	const char *err;
	size_t n, i;

	if (slot)
		*slot = NULL;
	if (!a) {
		sqlite3_result_null(ctx); /* no rows: no tree, as upstream */
		return;
	}
	n = a->t->n_rows;
	if (n >= TREE_NONE) {
		sqlite3_result_error(ctx, "tree: too many rows", -1);
		goto done;
	}
	order = malloc((n ? n : 1) * sizeof(*order));
	out_parent = malloc((n ? n : 1) * sizeof(*out_parent));
	n_cols = a->t->n_cols + 2;
	names = calloc(n_cols, sizeof(*names));
	if (!order || !out_parent || !names)
		goto nomem;
	err = tree_order(a, order, out_parent);
	if (err) {
		if (strcmp(err, "out of memory") == 0)
			goto nomem;
		sqlite3_result_error(ctx, err, -1);
		goto done;
	}
	names[0] = "_tree_id";
	names[1] = "_tree_parent_id";
	for (c = 0; c < a->t->n_cols; c++)
		names[c + 2] = a->t->names[c];
	out = ops_table_create(n_cols, names);
	if (!out || ops_table_reserve(out, n) < 0)
		goto nomem;
	for (i = 0; i < n; i++) {
		int64_t r = ops_table_append(out);

		if (r < 0)
			goto nomem;
		ops_set_int(out, 0, (size_t)r, (int64_t)i);
		if (out_parent[i] == TREE_NONE)
			ops_set_null(out, 1, (size_t)r);
		else
			ops_set_int(out, 1, (size_t)r, out_parent[i]);
		for (c = 0; c < a->t->n_cols; c++) {
			struct ops_cell cell = a->t->cols[c][order[i]];

			if (a->type[c] == OPS_REAL && cell.type == OPS_INT) {
				cell.u.d = (double)cell.u.i;
				cell.type = OPS_REAL;
			}
			if (ops_set_cell(out, c + 2, (size_t)r, &cell) < 0)
				goto nomem;
		}
	}
	sqlite3_result_pointer(ctx, out, OPS_PTR_TREE, ops_table_destroy);
	out = NULL;
	goto done;
nomem:
	sqlite3_result_error_nomem(ctx);
done:
	ops_table_destroy(out);
	free(names);
	free(order);
	free(out_parent);
	tree_acc_free(a);
}

/* The tree's table (a copy: the TREE value stays SQLite's to free). */
static void tree_to_table(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const struct ops_table *tree;
	struct ops_table *t;
	size_t r;
	uint32_t c;

	if (argc != 1) {
		sqlite3_result_error(ctx, "tree_to_table: expected exactly 1 argument", -1);
		return;
	}
	tree = sqlite3_value_pointer(argv[0], OPS_PTR_TREE);
	if (!tree) {
		sqlite3_result_error(ctx, "tree_to_table: expected pointer of type TREE", -1);
		return;
	}
	t = ops_table_create(tree->n_cols, (const char *const *)tree->names);
	if (!t || ops_table_reserve(t, tree->n_rows) < 0)
		goto nomem;
	for (r = 0; r < tree->n_rows; r++) {
		if (ops_table_append(t) < 0)
			goto nomem;
		for (c = 0; c < tree->n_cols; c++)
			if (ops_set_cell(t, c, r, &tree->cols[c][r]) < 0)
				goto nomem;
	}
	ops_table_result(ctx, t);
	return;
nomem:
	ops_table_destroy(t);
	sqlite3_result_error_nomem(ctx);
}

int ops_tree_table_register(sqlite3 *conn)
{
	int rc = sqlite3_create_function_v2(conn, "__intrinsic_tree_from_table", -1, SQLITE_UTF8,
					    NULL, NULL, tree_from_step, tree_from_final, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(conn, "__intrinsic_tree_to_table", 1, SQLITE_UTF8,
						NULL, tree_to_table, NULL, NULL, NULL);
	return rc;
}

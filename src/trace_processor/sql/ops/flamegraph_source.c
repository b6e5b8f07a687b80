// SPDX-License-Identifier: Apache-2.0
/*
 * flamegraph_source.c - the source tree of a flamegraph table
 * (flamegraph_int.h): the rows its SELECT gave, checked (integer ids, each
 * once; parent ids among them; no cycle), typed per column and put in
 * parent-before-child order the way upstream orders them: kept as they are
 * when every parent already comes first, else emitted by walking each row's
 * unvisited ancestors, outermost first, in input order.
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/sql/ops/flamegraph_int.h"

void fg_source_free(struct fg_source *s)
{
	if (!s)
		return;
	ops_table_destroy(s->t);
	free(s->kinds);
	free(s->parent);
	memset(s, 0, sizeof(*s));
}

static int fail(char **err, const char *msg)
{
	*err = sqlite3_mprintf("%s", msg);
	return -1;
}

static const char *type_name(uint8_t ty)
{
	return ty == OPS_INT ? "LONG" : ty == OPS_REAL ? "DOUBLE" : "STRING";
}

/* Types each column from its values in input order, as upstream infers
 * them: integers then reals make a real column (its integers read as
 * reals); text and numbers in one column are an error. */
static int type_columns(struct fg_source *s, char **err)
{
	struct ops_table *t = s->t;
	uint32_t c;
	size_t r;

	for (c = 0; c < t->n_cols; c++) {
		uint8_t kind = OPS_NULL;

		for (r = 0; r < t->n_rows; r++) {
			uint8_t ty = t->cols[c][r].type;

			if (ty == OPS_NULL || ty == kind)
				continue;
			if (kind == OPS_NULL || (kind == OPS_INT && ty == OPS_REAL)) {
				kind = ty;
			} else if (!(kind == OPS_REAL && ty == OPS_INT)) {
				*err = sqlite3_mprintf("flamegraph: column '%s' was inferred to be %s, "
						       "but later received a value of type %s",
						       t->names[c] ? t->names[c] : "",
						       type_name(kind), type_name(ty));
				return -1;
			}
		}
		s->kinds[c] = kind;
		for (r = 0; kind == OPS_REAL && r < t->n_rows; r++) {
			struct ops_cell *cell = &t->cols[c][r];

			if (cell->type == OPS_INT)
				ops_set_real(t, c, r, (double)cell->u.i);
		}
	}
	return 0;
}

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

/* Input row of each row's parent (FG_NONE for roots). */
static int resolve_parents(struct fg_source *s, uint32_t *in_parent, bool *identity, char **err)
{
	struct ops_table *t = s->t;
	uint32_t n = (uint32_t)t->n_rows, r;
	struct ops_order_map ids;
	int rc = 0;

	if (n && s->kinds[0] != OPS_INT)
		return fail(err, "tree: id column must be integer");
	if (n && s->kinds[1] != OPS_INT && s->kinds[1] != OPS_NULL)
		return fail(err, "tree: parent_id column must be integer");
	ops_order_map_init(&ids, 16);
	for (r = 0; r < n && rc == 0; r++) {
		const struct ops_cell *id = &t->cols[0][r];
		int ins;

		if (id->type != OPS_INT) {
			rc = fail(err, "tree: id column must be integer");
			break;
		}
		ins = ops_order_map_insert(&ids, mix64((uint64_t)id->u.i), r);
		if (ins < 0)
			rc = fail(err, "out of memory");
		else if (ins == 0)
			rc = fail(err, "tree: duplicate id");
	}
	*identity = true;
	for (r = 0; r < n && rc == 0; r++) {
		const struct ops_cell *pid = &t->cols[1][r];
		const uint32_t *p;

		in_parent[r] = FG_NONE;
		if (pid->type != OPS_INT)
			continue;
		p = ops_order_map_find(&ids, mix64((uint64_t)pid->u.i));
		if (!p) {
			rc = fail(err, "tree: parent_id not found in id column");
			break;
		}
		in_parent[r] = *p;
		if (*p >= r)
			*identity = false;
	}
	ops_order_map_fini(&ids);
	return rc;
}

/* Reorders the rows parent first; @in_parent holds input rows. */
static int reorder(struct fg_source *s, uint32_t *in_parent, char **err)
{
	struct ops_table *t = s->t;
	uint32_t n = (uint32_t)t->n_rows, start, emitted = 0, c;
	uint8_t *state = calloc(n, 1);
	uint32_t *stack = malloc(n * sizeof(*stack));
	uint32_t *order = malloc(n * sizeof(*order));
	uint32_t *out_row = malloc(n * sizeof(*out_row));
	struct ops_cell *tmp = malloc(n * sizeof(*tmp));
	int rc = 0;

	if (!state || !stack || !order || !out_row || !tmp) {
		rc = fail(err, "out of memory");
		goto out;
	}
	for (start = 0; start < n && rc == 0; start++) {
		uint32_t depth = 0, row = start;

		if (state[start] == 2)
			continue;
		while (row != FG_NONE && state[row] == 0) {
			state[row] = 1;
			stack[depth++] = row;
			row = in_parent[row];
		}
		if (row != FG_NONE && state[row] == 1) {
			rc = fail(err, "tree: cycle detected in parent relation");
			break;
		}
		while (depth > 0) {
			uint32_t in = stack[--depth];
			uint32_t p = in_parent[in];

			s->parent[emitted] = p == FG_NONE ? FG_NONE : out_row[p];
			out_row[in] = emitted;
			state[in] = 2;
			order[emitted++] = in;
		}
	}
	for (c = 0; c < t->n_cols && rc == 0; c++) {
		uint32_t r;

		for (r = 0; r < n; r++)
			tmp[r] = t->cols[c][order[r]];
		memcpy(t->cols[c], tmp, n * sizeof(*tmp));
	}
out:
	free(state);
	free(stack);
	free(order);
	free(out_row);
	free(tmp);
	return rc;
}

int fg_source_load(struct fg_source *s, struct ops_table *t, char **err)
{
	uint32_t n = (uint32_t)t->n_rows, *in_parent;
	bool identity = true;
	size_t r;
	int rc;

	memset(s, 0, sizeof(*s));
	s->t = t;
	if (t->n_rows >= FG_NONE) {
		fg_source_free(s);
		return fail(err, "tree: too many rows");
	}
	s->kinds = calloc(t->n_cols ? t->n_cols : 1, 1);
	s->parent = malloc((n ? n : 1) * sizeof(*s->parent));
	in_parent = malloc((n ? n : 1) * sizeof(*in_parent));
	if (!s->kinds || !s->parent || !in_parent) {
		free(in_parent);
		fg_source_free(s);
		return fail(err, "out of memory");
	}
	rc = type_columns(s, err);
	if (rc == 0)
		rc = resolve_parents(s, in_parent, &identity, err);
	if (rc == 0 && identity)
		memcpy(s->parent, in_parent, n * sizeof(*in_parent));
	else if (rc == 0)
		rc = reorder(s, in_parent, err);
	free(in_parent);
	if (rc == 0 && n && s->kinds[3] != OPS_INT && s->kinds[3] != OPS_REAL)
		rc = fail(err, "flamegraph: value column must be numeric");
	if (rc != 0) {
		fg_source_free(s);
		return -1;
	}
	for (r = 0; r < n; r++) {
		const struct ops_cell *v = &t->cols[3][r];

		if (v->type == OPS_INT)
			s->value_sum += (double)v->u.i;
		else if (v->type == OPS_REAL)
			s->value_sum += v->u.d;
	}
	return 0;
}

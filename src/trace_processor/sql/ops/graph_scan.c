// SPDX-License-Identifier: Apache-2.0
/*
 * graph_scan.c - the scans of graphs.scan, which run a query of the
 * caller's over a graph level by level: __intrinsic_graph_scan(GRAPH,
 * ROW_DATAFRAME inits, step SQL, '(cols)') hands each node's row to the
 * nodes its edges lead to and runs the step query (its "$table" being the
 * rows handed over) until no row is handed on; and
 * __intrinsic_graph_aggregating_scan(...) runs the query once per depth
 * (a node's depth: the longest path from it to a sink), deepest first, so
 * that every node's row is aggregated from all the rows handed to it. Both
 * give a TABLE of every row produced (the inits first). The step query
 * runs on the caller's connection with the rows bound as a TABLE pointer.
 * A graph_scan on a cyclic graph stops with an error after more rounds
 * than the graph has nodes.
 */
#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/sql/ops/ops_int.h"

/* Longest column list and step query taken. */
#define SCAN_MAX_SQL_BYTES (1u << 20)

struct scan_cols {
	char *names[OPS_MAX_COLS];
	uint32_t n;
};

static void scan_cols_fini(struct scan_cols *c)
{
	uint32_t i;

	for (i = 0; i < c->n; i++)
		free(c->names[i]);
	c->n = 0;
}

/* "id" then the names of "(a, b, c)". Return: 0, or -1 with *@err set. */
static int parse_cols(const char *list, struct scan_cols *out, char **err)
{
	const char *p = list, *end = list + strlen(list);

	out->n = 0;
	out->names[out->n++] = strdup("id");
	while (p < end && (*p == '(' || *p == ')' || *p == ' '))
		p++;
	while (end > p && (end[-1] == '(' || end[-1] == ')' || end[-1] == ' '))
		end--;
	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *q = comma ? comma : end, *a = p, *b = q;

		while (a < b && (*a == ' ' || *a == '\t' || *a == '\n'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\n'))
			b--;
		if (out->n >= OPS_MAX_COLS) {
			*err = sqlite3_mprintf("graph_scan: too many columns");
			return -1;
		}
		out->names[out->n] = strndup(a, (size_t)(b - a));
		if (!out->names[out->n]) {
			*err = sqlite3_mprintf("graph_scan: out of memory");
			return -1;
		}
		out->n++;
		p = comma ? comma + 1 : end;
	}
	if (!out->names[0]) {
		*err = sqlite3_mprintf("graph_scan: out of memory");
		return -1;
	}
	return 0;
}

/* Whether @t's columns are exactly @c's names. */
static bool cols_match(const struct ops_table *t, const struct scan_cols *c)
{
	uint32_t i;

	if (t->n_cols != c->n)
		return false;
	for (i = 0; i < c->n; i++)
		if (!t->names[i] || strcmp(t->names[i], c->names[i]) != 0)
			return false;
	return true;
}

/* "a,b,c" of @n names (sqlite3_malloc'd). */
static char *join_names(char *const *names, uint32_t n)
{
	sqlite3_str *s = sqlite3_str_new(NULL);
	uint32_t i;

	for (i = 0; i < n; i++)
		sqlite3_str_appendf(s, "%s%s", i ? "," : "", names[i] ? names[i] : "");
	return sqlite3_str_finish(s);
}

/* Appends row @cells (@n) to @t (whose text it copies). 0 or -ENOMEM. */
static int push_row(struct ops_table *t, const struct ops_cell *cells, uint32_t n, int64_t id)
{
	int64_t r = ops_table_append(t);
	uint32_t j;

	if (r < 0)
		return (int)r;
	ops_set_int(t, 0, (size_t)r, id);
	for (j = 1; j < n; j++) {
		const struct ops_cell *c = &cells[j];

		switch (c->type) {
		case OPS_INT:
			ops_set_int(t, j, (size_t)r, c->u.i);
			break;
		case OPS_REAL:
			ops_set_real(t, j, (size_t)r, c->u.d);
			break;
		case OPS_TEXT:
			if (ops_set_text(t, j, (size_t)r, c->u.s, strlen(c->u.s)) < 0)
				return -ENOMEM;
			break;
		default:
			ops_set_null(t, j, (size_t)r);
		}
	}
	return 0;
}

/* The edges of @id: [*@b, *@e) of g->edges; none for ids past the graph. */
static void edges_of(const struct ops_graph *g, int64_t id, uint32_t *b, uint32_t *e)
{
	if (!g || id < 0 || id >= g->n_nodes) {
		*b = *e = 0;
		return;
	}
	*b = g->edge_start[id];
	*e = g->edge_start[id + 1];
}

/* A row of a step query's result as cells (text borrowed until the next step). */
static int stmt_row(sqlite3_stmt *st, uint32_t n, struct ops_cell *cells, char **err)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		switch (sqlite3_column_type(st, (int)i)) {
		case SQLITE_INTEGER:
			cells[i].type = OPS_INT;
			cells[i].u.i = sqlite3_column_int64(st, (int)i);
			break;
		case SQLITE_FLOAT:
			cells[i].type = OPS_REAL;
			cells[i].u.d = sqlite3_column_double(st, (int)i);
			break;
		case SQLITE_TEXT:
			cells[i].type = OPS_TEXT;
			cells[i].u.s = (const char *)sqlite3_column_text(st, (int)i);
			break;
		case SQLITE_BLOB:
			*err = sqlite3_mprintf("Unsupported blob type");
			return -1;
		default:
			cells[i].type = OPS_NULL;
		}
	}
	return 0;
}

/* The step query with "$table" read from the TABLE bound to $var, prepared. */
static int prepare_step(sqlite3 *db, const struct scan_cols *c, const char *sql,
			sqlite3_stmt **out, char **err)
{
	sqlite3_str *sub = sqlite3_str_new(NULL), *full = sqlite3_str_new(NULL);
	const char *p = sql, *hit;
	char *subq, *text;
	uint32_t i;
	int rc;

	sqlite3_str_appendall(sub, "(SELECT ");
	for (i = 0; i < c->n; i++)
		sqlite3_str_appendf(sub, "%sc%u as %s", i ? "," : "", i, c->names[i]);
	sqlite3_str_appendall(sub, " FROM __intrinsic_table_ptr($var) WHERE ");
	for (i = 0; i < c->n; i++)
		sqlite3_str_appendf(sub, "%s__intrinsic_table_ptr_bind(c%u, '%q')",
				    i ? " AND " : "", i, c->names[i]);
	sqlite3_str_appendall(sub, ")");
	subq = sqlite3_str_finish(sub);
	sqlite3_str_appendall(full, "SELECT * FROM ");
	while (subq && (hit = strstr(p, "$table")) != NULL) {
		sqlite3_str_append(full, p, (int)(hit - p));
		sqlite3_str_appendall(full, subq);
		p = hit + strlen("$table");
	}
	sqlite3_str_appendall(full, p);
	sqlite3_free(subq);
	text = sqlite3_str_finish(full);
	if (!text) {
		*err = sqlite3_mprintf("graph_scan: out of memory");
		return -1;
	}
	rc = sqlite3_prepare_v2(db, text, -1, out, NULL);
	sqlite3_free(text);
	if (rc != SQLITE_OK) {
		*err = sqlite3_mprintf("%s", sqlite3_errmsg(db));
		return -1;
	}
	return 0;
}

/* Checks the step query's columns are @c's. */
static int check_stmt_cols(sqlite3_stmt *st, const struct scan_cols *c, char **err)
{
	uint32_t i, n = (uint32_t)sqlite3_column_count(st);
	bool ok = n == c->n;

	for (i = 0; ok && i < n; i++) {
		const char *name = sqlite3_column_name(st, (int)i);

		ok = name && strcmp(name, c->names[i]) == 0;
	}
	if (!ok)
		*err = sqlite3_mprintf("graph_scan: aggregate SQL columns do not match init columns");
	return ok ? 0 : -1;
}

/* --------------------------------------------------------------- scan ---- */

/* Hands row @cells of node @id on: to @out, and to @step once per edge. */
static int hand_on(const struct ops_graph *g, const struct ops_cell *cells, uint32_t n, int64_t id,
		   struct ops_table *out, struct ops_table *step)
{
	uint32_t b, e;

	if (push_row(out, cells, n, id) < 0)
		return -ENOMEM;
	edges_of(g, id, &b, &e);
	for (; b < e; b++)
		if (push_row(step, cells, n, g->edges[b]) < 0)
			return -ENOMEM;
	return 0;
}

/* Row @r of @t as cells (borrowed). */
static const struct ops_cell *table_row(const struct ops_table *t, size_t r, struct ops_cell *buf)
{
	uint32_t j;

	for (j = 0; j < t->n_cols; j++)
		buf[j] = t->cols[j][r];
	return buf;
}

static int run_scan(sqlite3 *db, const struct ops_graph *g, const struct ops_row_df *init,
		    const struct scan_cols *c, const char *sql, struct ops_table *out, char **err)
{
	struct ops_cell cells[OPS_MAX_COLS];
	struct ops_table *step = ops_table_create(c->n, (const char *const *)c->names);
	sqlite3_stmt *st = NULL;
	size_t r, rounds = 0, max_rounds = (g ? g->n_nodes : 0) + 2;
	int rc = -1;

	if (!step)
		goto nomem;
	for (r = 0; r < init->t->n_rows; r++) {
		const struct ops_cell *row = table_row(init->t, r, cells);

		if (hand_on(g, row, c->n, row[0].u.i, out, step) < 0)
			goto nomem;
	}
	if (prepare_step(db, c, sql, &st, err) < 0)
		goto out;
	while (step->n_rows > 0) {
		struct ops_table *next;
		int s;

		if (++rounds > max_rounds) {
			*err = sqlite3_mprintf("graph_scan: the graph has a cycle (more rounds "
					       "than nodes)");
			goto out;
		}
		next = ops_table_create(c->n, (const char *const *)c->names);
		if (!next)
			goto nomem;
		sqlite3_reset(st);
		/* SQLite owns @step from here: freed when rebound or finalized. */
		if (sqlite3_bind_pointer(st, 1, step, OPS_PTR_TABLE, ops_table_destroy) != SQLITE_OK) {
			step = next;
			*err = sqlite3_mprintf("Failed to bind pointer");
			goto out;
		}
		step = next;
		while ((s = sqlite3_step(st)) == SQLITE_ROW) {
			uint32_t n = (uint32_t)sqlite3_column_count(st);

			if (n > c->n)
				n = c->n;
			memset(cells, 0, sizeof(cells));
			if (stmt_row(st, n, cells, err) < 0)
				goto out;
			if (hand_on(g, cells, c->n, cells[0].u.i, out, step) < 0)
				goto nomem;
		}
		if (s != SQLITE_DONE) {
			*err = sqlite3_mprintf("%s", sqlite3_errmsg(db));
			goto out;
		}
	}
	rc = 0;
	goto out;
nomem:
	*err = sqlite3_mprintf("graph_scan: out of memory");
out:
	sqlite3_finalize(st);
	ops_table_destroy(step);
	return rc;
}

/* ---------------------------------------------------- aggregating scan ---- */

enum { NODE_UNVISITED, NODE_WAITING, NODE_DONE };

/* Each node's depth (longest path to a sink), as upstream's DFS gives it. */
static int depths(const struct ops_graph *g, const struct ops_row_df *init, uint32_t n_ids,
		  uint32_t *depth, uint32_t *out_max)
{
	uint8_t *st = calloc(n_ids ? n_ids : 1, 1);
	uint32_t *stack = NULL, max = 0;
	size_t n = 0, cap = 0, r;
	uint32_t b, e;

	if (!st)
		return -ENOMEM;
	for (r = 0; r < init->t->n_rows; r++) {
		edges_of(g, init->t->cols[0][r].u.i, &b, &e);
		for (; b < e; b++) {
			if (ops_grow((void **)&stack, &cap, n + 1, sizeof(*stack)) < 0)
				goto nomem;
			stack[n++] = g->edges[b];
		}
	}
	while (n > 0) {
		uint32_t id = stack[n - 1];

		switch (st[id]) {
		case NODE_UNVISITED:
			st[id] = NODE_WAITING;
			edges_of(g, id, &b, &e);
			for (; b < e; b++) {
				if (ops_grow((void **)&stack, &cap, n + 1, sizeof(*stack)) < 0)
					goto nomem;
				stack[n++] = g->edges[b];
			}
			break;
		case NODE_WAITING:
			n--;
			st[id] = NODE_DONE;
			edges_of(g, id, &b, &e);
			for (; b < e; b++)
				if (depth[g->edges[b]] + 1 > depth[id])
					depth[id] = depth[g->edges[b]] + 1;
			if (depth[id] > max)
				max = depth[id];
			break;
		default:
			n--;
		}
	}
	free(stack);
	free(st);
	*out_max = max;
	return 0;
nomem:
	free(stack);
	free(st);
	return -ENOMEM;
}

/* Row @cells of @id to @res, and to the table of each successor's depth. */
static int push_down(const struct ops_graph *g, const uint32_t *depth, struct ops_table **per_depth,
		     const struct ops_cell *cells, uint32_t n, int64_t id, struct ops_table *res)
{
	uint32_t b, e;

	if (push_row(res, cells, n, id) < 0)
		return -ENOMEM;
	edges_of(g, id, &b, &e);
	for (; b < e; b++) {
		struct ops_table *t = per_depth[depth[g->edges[b]]];

		/* Only a cycle hands a row to a depth already run. */
		if (!t)
			return -ELOOP;
		if (push_row(t, cells, n, g->edges[b]) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int run_agg_scan(sqlite3 *db, const struct ops_graph *g, const struct ops_row_df *init,
			const struct scan_cols *c, const char *sql, struct ops_table *res,
			char **err)
{
	struct ops_cell cells[OPS_MAX_COLS];
	struct ops_table **per_depth = NULL;
	uint32_t *depth = NULL, n_ids = g ? g->n_nodes : 0, max_depth = 0, d;
	sqlite3_stmt *st = NULL;
	size_t r;
	int rc = -1;

	if (init->t->n_cols == 0 || !init->t->names[0] || strcmp(init->t->names[0], "id") != 0) {
		*err = sqlite3_mprintf(init->id_col < 0
					       ? "graph_aggregating_scan: 'id' column is not "
						 "present in initial nodes table"
					       : "graph_aggregating_scan: 'id' column must be the "
						 "first column in the initial nodes table");
		return -1;
	}
	for (r = 0; r < init->t->n_rows; r++) {
		int64_t id = init->t->cols[0][r].u.i;

		if (id >= 0 && id < ((int64_t)1 << 30) && (uint32_t)id >= n_ids)
			n_ids = (uint32_t)id + 1;
	}
	depth = calloc(n_ids ? n_ids : 1, sizeof(*depth));
	if (!depth || depths(g, init, n_ids, depth, &max_depth) < 0)
		goto nomem;
	per_depth = calloc((size_t)max_depth + 1, sizeof(*per_depth));
	if (!per_depth)
		goto nomem;
	for (d = 0; d <= max_depth; d++) {
		per_depth[d] = ops_table_create(c->n, (const char *const *)c->names);
		if (!per_depth[d])
			goto nomem;
	}
	for (r = 0; r < init->t->n_rows; r++) {
		const struct ops_cell *row = table_row(init->t, r, cells);

		if (push_down(g, depth, per_depth, row, c->n, row[0].u.i, res) < 0)
			goto nomem;
	}
	if (prepare_step(db, c, sql, &st, err) < 0 || check_stmt_cols(st, c, err) < 0)
		goto out;
	for (d = max_depth + 1; d-- > 0;) {
		int s;

		sqlite3_reset(st);
		if (sqlite3_bind_pointer(st, 1, per_depth[d], OPS_PTR_TABLE, ops_table_destroy) !=
		    SQLITE_OK) {
			per_depth[d] = NULL;
			*err = sqlite3_mprintf("Failed to bind pointer");
			goto out;
		}
		per_depth[d] = NULL;
		while ((s = sqlite3_step(st)) == SQLITE_ROW) {
			if (stmt_row(st, c->n, cells, err) < 0)
				goto out;
			s = push_down(g, depth, per_depth, cells, c->n, cells[0].u.i, res);
			if (s == -ELOOP) {
				*err = sqlite3_mprintf("graph_aggregating_scan: the graph has a "
						       "cycle");
				goto out;
			}
			if (s < 0)
				goto nomem;
		}
		if (s != SQLITE_DONE) {
			*err = sqlite3_mprintf("%s", sqlite3_errmsg(db));
			goto out;
		}
	}
	rc = 0;
	goto out;
nomem:
	*err = sqlite3_mprintf("graph_aggregating_scan: out of memory");
out:
	sqlite3_finalize(st);
	for (d = 0; per_depth && d <= max_depth; d++)
		ops_table_destroy(per_depth[d]);
	free(per_depth);
	free(depth);
	return rc;
}

/* ------------------------------------------------------------ functions ---- */

static void fn_scan_common(sqlite3_context *ctx, sqlite3_value **argv, bool is_agg)
{
	const char *fn = is_agg ? "graph_aggregating_scan" : "graph_scan";
	const struct ops_graph *g = sqlite3_value_pointer(argv[0], OPS_PTR_GRAPH);
	const struct ops_row_df *init = sqlite3_value_pointer(argv[1], OPS_PTR_ROW_DATAFRAME);
	const char *sql = (const char *)sqlite3_value_text(argv[2]);
	const char *list = (const char *)sqlite3_value_text(argv[3]);
	struct scan_cols c = {{NULL}, 0};
	struct ops_table *out = NULL;
	char *err = NULL;
	int rc;

	if (!sql) {
		ops_error(ctx, "%s: %s SQL cannot be null", fn, is_agg ? "aggregate" : "step");
		return;
	}
	if (!list) {
		ops_error(ctx, "%s: column list cannot be null", fn);
		return;
	}
	if (strlen(sql) > SCAN_MAX_SQL_BYTES || strlen(list) > SCAN_MAX_SQL_BYTES) {
		ops_error(ctx, "%s: query too long", fn);
		return;
	}
	if (parse_cols(list, &c, &err) < 0)
		goto fail;
	out = ops_table_create(c.n, (const char *const *)c.names);
	if (!out) {
		err = sqlite3_mprintf("%s: out of memory", fn);
		goto fail;
	}
	if (init) {
		if (!cols_match(init->t, &c)) {
			char *want = join_names(c.names, c.n);
			char *have = join_names(init->t->names, init->t->n_cols);

			err = sqlite3_mprintf("%s: column list '%s' does not match initial table "
					      "list '%s'",
					      fn, want ? want : "", have ? have : "");
			sqlite3_free(want);
			sqlite3_free(have);
			goto fail;
		}
		rc = is_agg ? run_agg_scan(sqlite3_context_db_handle(ctx), g, init, &c, sql, out, &err)
			    : run_scan(sqlite3_context_db_handle(ctx), g, init, &c, sql, out, &err);
		if (rc < 0)
			goto fail;
	}
	scan_cols_fini(&c);
	ops_table_result(ctx, out);
	return;
fail:
	ops_error(ctx, "%s", err ? err : "graph_scan: failed");
	sqlite3_free(err);
	ops_table_destroy(out);
	scan_cols_fini(&c);
}

static void fn_scan(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	fn_scan_common(ctx, argv, false);
}

static void fn_agg_scan(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	fn_scan_common(ctx, argv, true);
}

int ops_graph_scan_register(sqlite3 *conn)
{
	int rc = sqlite3_create_function_v2(conn, "__intrinsic_graph_scan", 4, SQLITE_UTF8, NULL,
					    fn_scan, NULL, NULL, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(conn, "__intrinsic_graph_aggregating_scan", 4,
						SQLITE_UTF8, NULL, fn_agg_scan, NULL, NULL, NULL);
	return rc;
}

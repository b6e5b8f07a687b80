// SPDX-License-Identifier: Apache-2.0
/*
 * graph_scan.c - __intrinsic_graph_scan(graph, inits, step_sql, columns),
 * what the graphs.scan module's _graph_scan! macro runs, with upstream's
 * meaning: a scan over a GRAPH (__intrinsic_graph_agg) from the rows of a
 * ROW_DATAFRAME (__intrinsic_row_dataframe_agg: an id, then the scan's
 * columns). Each row reached is output, and hands its values on along
 * each edge out of its node: those (dest id, values) rows are the table
 * "$table" of the next step, a query (step_sql) that gives the next rows
 * reached. The scan ends when a step hands nothing on. The result is a
 * TABLE (id and the columns, in the order reached) for __intrinsic_table_ptr.
 * "$table" is given to the step query as a VALUES list of its rows.
 */
#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/sql/ops/ops_int.h"

/* Most rows a scan outputs: a graph with a cycle would never end. */
#define SCAN_MAX_ROWS ((size_t)1 << 26)

/* Parses "(a, b)" into at most OPS_MAX_COLS - 1 names (sqlite3_malloc'd). */
static int parse_cols(const char *s, char **names, uint32_t *n)
{
	const char *p = s, *start;

	*n = 0;
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '(')
		p++;
	while (*p && *p != ')') {
		size_t len;

		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == ',')
			p++;
		start = p;
		while (*p && *p != ',' && *p != ')' && *p != ' ' && *p != '\t' && *p != '\n')
			p++;
		len = (size_t)(p - start);
		if (len == 0)
			continue;
		if (*n == OPS_MAX_COLS - 1)
			return -EINVAL;
		names[*n] = sqlite3_mprintf("%.*s", (int)len, start);
		if (!names[*n])
			return -ENOMEM;
		(*n)++;
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
	}
	return 0;
}

/* Appends one cell as an SQL literal. */
static void append_literal(sqlite3_str *s, const struct ops_cell *c)
{
	switch (c->type) {
	case OPS_INT:
		sqlite3_str_appendf(s, "%lld", (long long)c->u.i);
		break;
	case OPS_REAL:
		sqlite3_str_appendf(s, "%!.17g", c->u.d);
		break;
	case OPS_TEXT:
		sqlite3_str_appendf(s, "%Q", c->u.s);
		break;
	default:
		sqlite3_str_appendall(s, "NULL");
	}
}

/*
 * The step query with "$table" replaced by the rows of @step:
 * "SELECT * FROM <step_sql>". NULL if out of memory.
 */
static char *step_query(const char *step_sql, const struct ops_table *step)
{
	sqlite3_str *tab = sqlite3_str_new(NULL), *q;
	const char *p, *at;
	char *tabs;
	uint32_t c;
	size_t r;

	sqlite3_str_appendall(tab, "(SELECT ");
	for (c = 0; c < step->n_cols; c++)
		sqlite3_str_appendf(tab, "%scolumn%u AS \"%w\"", c ? ", " : "", c + 1,
				    step->names[c]);
	sqlite3_str_appendall(tab, " FROM (VALUES ");
	for (r = 0; r < step->n_rows; r++) {
		sqlite3_str_appendall(tab, r ? ", (" : "(");
		for (c = 0; c < step->n_cols; c++) {
			if (c)
				sqlite3_str_appendall(tab, ", ");
			append_literal(tab, &step->cols[c][r]);
		}
		sqlite3_str_appendchar(tab, 1, ')');
	}
	sqlite3_str_appendall(tab, "))");
	tabs = sqlite3_str_finish(tab);
	if (!tabs)
		return NULL;
	q = sqlite3_str_new(NULL);
	sqlite3_str_appendall(q, "SELECT * FROM ");
	for (p = step_sql; (at = strstr(p, "$table")) != NULL; p = at + 6) {
		sqlite3_str_append(q, p, (int)(at - p));
		sqlite3_str_appendall(q, tabs);
	}
	sqlite3_str_appendall(q, p);
	sqlite3_free(tabs);
	return sqlite3_str_finish(q);
}

/*
 * Adds a row reached (@cells: id then the columns) to @out, and one row
 * per edge out of its node to @next. Return: 0, -ENOMEM, or -E2BIG.
 */
static int reach(struct ops_table *out, struct ops_table *next, const struct ops_graph *g,
		 const struct ops_cell *cells)
{
	uint32_t c, id;
	size_t e;
	int64_t r;

	if (out->n_rows >= SCAN_MAX_ROWS)
		return -E2BIG;
	r = ops_table_append(out);
	if (r < 0)
		return (int)r;
	for (c = 0; c < out->n_cols; c++)
		if (ops_set_cell(out, c, (size_t)r, &cells[c]) < 0)
			return -ENOMEM;
	if (!g || cells[0].type != OPS_INT || cells[0].u.i < 0 ||
	    cells[0].u.i >= (int64_t)g->n_nodes)
		return 0;
	id = (uint32_t)cells[0].u.i;
	for (e = g->edge_start[id]; e < g->edge_start[id + 1]; e++) {
		r = ops_table_append(next);
		if (r < 0)
			return (int)r;
		ops_set_int(next, 0, (size_t)r, g->edges[e]);
		for (c = 1; c < next->n_cols; c++)
			if (ops_set_cell(next, c, (size_t)r, &cells[c]) < 0)
				return -ENOMEM;
	}
	return 0;
}

static void fn_graph_scan(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const struct ops_graph *g = sqlite3_value_pointer(argv[0], OPS_PTR_GRAPH);
	const struct ops_row_df *init = sqlite3_value_pointer(argv[1], OPS_PTR_ROW_DATAFRAME);
	const char *step_sql = (const char *)sqlite3_value_text(argv[2]);
	const char *cols_sql = (const char *)sqlite3_value_text(argv[3]);
	char *names[OPS_MAX_COLS] = {"id"};
	struct ops_cell cells[OPS_MAX_COLS];
	struct ops_table *out = NULL, *step = NULL, *next = NULL;
	const char *err = NULL;
	uint32_t n_scan = 0, c;
	size_t r;
	int rc = 0;

	(void)argc;
	if (!step_sql || !cols_sql) {
		sqlite3_result_error(ctx, "graph_scan: step SQL and columns cannot be null", -1);
		return;
	}
	rc = parse_cols(cols_sql, names + 1, &n_scan);
	if (rc < 0)
		goto done;
	out = ops_table_create(n_scan + 1, (const char *const *)names);
	step = ops_table_create(n_scan + 1, (const char *const *)names);
	next = ops_table_create(n_scan + 1, (const char *const *)names);
	if (!out || !step || !next) {
		rc = -ENOMEM;
		goto done;
	}
	if (init && init->t->n_cols != n_scan + 1) {
		err = "graph_scan: the init table's columns do not match the scan's";
		goto done;
	}
	for (r = 0; init && r < init->t->n_rows && rc == 0; r++) {
		for (c = 0; c <= n_scan; c++)
			cells[c] = init->t->cols[c][r];
		rc = reach(out, step, g, cells);
	}
	while (rc == 0 && step->n_rows > 0) {
		char *q = step_query(step_sql, step);
		sqlite3_stmt *st = NULL;
		struct ops_table *tmp;
		int src;

		if (!q) {
			rc = -ENOMEM;
			break;
		}
		src = sqlite3_prepare_v2(sqlite3_context_db_handle(ctx), q, -1, &st, NULL);
		sqlite3_free(q);
		if (src != SQLITE_OK) {
			char *m = sqlite3_mprintf("graph_scan: %s",
						  sqlite3_errmsg(sqlite3_context_db_handle(ctx)));
			sqlite3_result_error(ctx, m ? m : "graph_scan: bad step query", -1);
			sqlite3_free(m);
			goto free_tables;
		}
		if ((uint32_t)sqlite3_column_count(st) != n_scan + 1) {
			sqlite3_finalize(st);
			err = "graph_scan: the step query's columns do not match the scan's";
			break;
		}
		ops_table_clear(next);
		while (rc == 0 && (src = sqlite3_step(st)) == SQLITE_ROW) {
			struct ops_table *row = ops_table_create(n_scan + 1, NULL);
			int64_t ri;

			/* The cells of the row, copied so their text outlives the step. */
			if (!row || (ri = ops_table_append(row)) < 0) {
				ops_table_destroy(row);
				rc = -ENOMEM;
				break;
			}
			for (c = 0; c <= n_scan && rc == 0; c++)
				if (ops_set_value(row, c, (size_t)ri, sqlite3_column_value(st, (int)c)) < 0)
					rc = -ENOMEM;
			for (c = 0; c <= n_scan; c++)
				cells[c] = row->cols[c][0];
			if (rc == 0)
				rc = reach(out, next, g, cells);
			ops_table_destroy(row);
		}
		if (rc == 0 && src != SQLITE_DONE) {
			char *m = sqlite3_mprintf("graph_scan: %s",
						  sqlite3_errmsg(sqlite3_context_db_handle(ctx)));
			sqlite3_finalize(st);
			sqlite3_result_error(ctx, m ? m : "graph_scan: step query failed", -1);
			sqlite3_free(m);
			goto free_tables;
		}
		sqlite3_finalize(st);
		tmp = step;
		step = next;
		next = tmp;
	}
done:
	if (rc == -ENOMEM) {
		sqlite3_result_error_nomem(ctx);
	} else if (rc == -E2BIG) {
		sqlite3_result_error(ctx, "graph_scan: more than 2^26 rows reached (a cycle?)", -1);
	} else if (rc < 0) {
		sqlite3_result_error(ctx, "graph_scan: bad column list", -1);
	} else if (err) {
		sqlite3_result_error(ctx, err, -1);
	} else {
		ops_table_result(ctx, out);
		out = NULL;
	}
free_tables:
	ops_table_destroy(out);
	ops_table_destroy(step);
	ops_table_destroy(next);
	for (c = 1; c <= n_scan; c++)
		sqlite3_free(names[c]);
}

int ops_graph_scan_register(sqlite3 *conn)
{
	return sqlite3_create_function_v2(conn, "__intrinsic_graph_scan", 4, SQLITE_UTF8, NULL,
					  fn_graph_scan, NULL, NULL, NULL);
}

// SPDX-License-Identifier: Apache-2.0
/*
 * table_ptr.c - __intrinsic_table_ptr, the virtual table that reads a TABLE
 * pointer a built-in returned, as upstream's: its columns c0..c31 take
 * their meaning from the query, "WHERE __intrinsic_table_ptr_bind(c0,
 * 'ts') AND ..." binding each (densely, from c0) to a column of the table
 * by name. The stdlib's low-level macros (intervals, graphs, trees) are its
 * only users; rows come in the table's order.
 */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "trace_processor/sql/ops/ops_int.h"

#define N_BINDABLE 32
#define COL_TAB N_BINDABLE
#define COL_ROW (N_BINDABLE + 1)
/* The constraint op xFindFunction gives __intrinsic_table_ptr_bind. */
#define OP_BIND (SQLITE_INDEX_CONSTRAINT_FUNCTION + 1)

struct ptr_cursor {
	sqlite3_vtab_cursor base;
	const struct ops_table *t;
	uint32_t bound[N_BINDABLE]; /* c<i> -> column of t */
	uint32_t n_bound;
	size_t row;
};

static int set_error(sqlite3_vtab *tab, const char *msg)
{
	sqlite3_free(tab->zErrMsg);
	tab->zErrMsg = sqlite3_mprintf("%s", msg);
	return SQLITE_ERROR;
}

static int ptr_connect(sqlite3 *conn, void *aux, int argc, const char *const *argv,
		       sqlite3_vtab **out, char **err)
{
	sqlite3_str *s;
	char *sql;
	sqlite3_vtab *vt;
	int i, rc;

	(void)aux;
	(void)argc;
	(void)argv;
	(void)err;
	s = sqlite3_str_new(conn);
	sqlite3_str_appendall(s, "CREATE TABLE x(");
	for (i = 0; i < N_BINDABLE; i++)
		sqlite3_str_appendf(s, "c%d, ", i);
	sqlite3_str_appendall(s, "tab BLOB HIDDEN, row INTEGER HIDDEN, PRIMARY KEY(row)) "
				 "WITHOUT ROWID");
	sql = sqlite3_str_finish(s);
	if (!sql)
		return SQLITE_NOMEM;
	rc = sqlite3_declare_vtab(conn, sql);
	sqlite3_free(sql);
	if (rc != SQLITE_OK)
		return rc;
	vt = sqlite3_malloc(sizeof(*vt));
	if (!vt)
		return SQLITE_NOMEM;
	memset(vt, 0, sizeof(*vt));
	*out = vt;
	return SQLITE_OK;
}

static int ptr_disconnect(sqlite3_vtab *vt)
{
	sqlite3_free(vt);
	return SQLITE_OK;
}

static int ptr_best_index(sqlite3_vtab *tab, sqlite3_index_info *info)
{
	bool bound[N_BINDABLE] = {false};
	int n_bound = 0, i;
	bool has_tab = false;

	for (i = 0; i < info->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &info->aConstraint[i];
		struct sqlite3_index_constraint_usage *u = &info->aConstraintUsage[i];

		if (!c->usable)
			continue;
		if (c->iColumn == COL_ROW)
			return set_error(tab, "Constraint on row not allowed");
		if (c->op == OP_BIND) {
			if (c->iColumn < 0 || c->iColumn >= N_BINDABLE)
				return set_error(tab, "Invalid bound column");
			if (bound[c->iColumn])
				return set_error(tab, "Duplicate bound column");
			bound[c->iColumn] = true;
			u->argvIndex = 2 + c->iColumn;
			u->omit = 1;
			n_bound++;
			continue;
		}
		if (c->iColumn == COL_TAB) {
			if (c->op != SQLITE_INDEX_CONSTRAINT_EQ)
				return set_error(tab, "tab only supports equality constraints");
			u->argvIndex = 1;
			u->omit = 1;
			has_tab = true;
		}
	}
	if (!has_tab)
		return set_error(tab, "table must be bound");
	if (!n_bound)
		return set_error(tab, "At least one column must be bound");
	for (i = 0; i < n_bound; i++) {
		if (!bound[i])
			return set_error(tab, "Bound columns are not dense");
	}
	info->estimatedCost = 1000;
	return SQLITE_OK;
}

static int ptr_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
	struct ptr_cursor *c = sqlite3_malloc(sizeof(*c));

	(void)vt;
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	*out = &c->base;
	return SQLITE_OK;
}

static int ptr_close(sqlite3_vtab_cursor *cur)
{
	sqlite3_free(cur);
	return SQLITE_OK;
}

static int ptr_filter(sqlite3_vtab_cursor *cur, int idx_num, const char *idx_str, int argc,
		      sqlite3_value **argv)
{
	struct ptr_cursor *c = (struct ptr_cursor *)cur;
	int i;

	(void)idx_num;
	(void)idx_str;
	c->t = NULL;
	c->row = 0;
	if (argc == 0)
		return set_error(cur->pVtab, "tab parameter is not set");
	c->t = sqlite3_value_pointer(argv[0], OPS_PTR_TABLE);
	if (!c->t)
		return set_error(cur->pVtab, "tab parameter is NULL");
	c->n_bound = 0;
	for (i = 1; i < argc; i++) {
		const char *name;
		int col;

		if (sqlite3_value_type(argv[i]) != SQLITE_TEXT) {
			c->t = NULL;
			return set_error(cur->pVtab, "Column name is not text");
		}
		name = (const char *)sqlite3_value_text(argv[i]);
		col = name ? ops_table_find(c->t, name) : -1;
		if (col < 0) {
			sqlite3_free(cur->pVtab->zErrMsg);
			cur->pVtab->zErrMsg =
				sqlite3_mprintf("column '%s' does not exist in table", name);
			c->t = NULL;
			return SQLITE_ERROR;
		}
		c->bound[c->n_bound++] = (uint32_t)col;
	}
	return SQLITE_OK;
}

static int ptr_next(sqlite3_vtab_cursor *cur)
{
	((struct ptr_cursor *)cur)->row++;
	return SQLITE_OK;
}

static int ptr_eof(sqlite3_vtab_cursor *cur)
{
	const struct ptr_cursor *c = (const struct ptr_cursor *)cur;

	return !c->t || c->row >= c->t->n_rows;
}

static int ptr_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int n)
{
	const struct ptr_cursor *c = (const struct ptr_cursor *)cur;

	/* An unbound column reads as NULL. */
	if (n < 0 || (uint32_t)n >= c->n_bound)
		return SQLITE_OK;
	ops_cell_result(ctx, &c->t->cols[c->bound[n]][c->row]);
	return SQLITE_OK;
}

static int ptr_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out)
{
	(void)cur;
	(void)out;
	return SQLITE_ERROR;
}

static void bind_in_vtab(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	(void)argv;
	sqlite3_result_int64(ctx, 1);
}

static int ptr_find_function(sqlite3_vtab *vt, int n_arg, const char *name,
			     void (**fn)(sqlite3_context *, int, sqlite3_value **), void **arg)
{
	(void)vt;
	(void)n_arg;
	(void)arg;
	if (strcasecmp(name, "__intrinsic_table_ptr_bind") == 0) {
		*fn = bind_in_vtab;
		return OP_BIND;
	}
	return 0;
}

static const sqlite3_module k_ptr_module = {
	.iVersion = 1,
	.xConnect = ptr_connect,
	.xBestIndex = ptr_best_index,
	.xDisconnect = ptr_disconnect,
	.xDestroy = ptr_disconnect,
	.xOpen = ptr_open,
	.xClose = ptr_close,
	.xFilter = ptr_filter,
	.xNext = ptr_next,
	.xEof = ptr_eof,
	.xColumn = ptr_column,
	.xRowid = ptr_rowid,
	.xFindFunction = ptr_find_function,
};

/* Anywhere but in the WHERE of __intrinsic_table_ptr, binding is an error. */
static void fn_bind_global(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	(void)argv;
	sqlite3_result_error(ctx,
			     "__intrinsic_table_ptr_bind should not be called from the global "
			     "scope",
			     -1);
}

int ops_table_ptr_register(sqlite3 *conn)
{
	int rc = sqlite3_create_module_v2(conn, "__intrinsic_table_ptr", &k_ptr_module, NULL, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(conn, "__intrinsic_table_ptr_bind", -1,
						SQLITE_UTF8 | SQLITE_INNOCUOUS, NULL, fn_bind_global,
						NULL, NULL, NULL);
	return rc;
}

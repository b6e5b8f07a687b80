// SPDX-License-Identifier: Apache-2.0
/*
 * tfn.c - the frame of a table function of sql/ops/ (ancestor_slice(id),
 * experimental_slice_layout('1,2'), ...): an eponymous virtual table whose
 * schema is upstream's (the output columns, one hidden _fn_argN per
 * argument, a hidden _auto_id key). Every argument needs exactly one
 * equality constraint (else the plan is refused and SQLite says "no query
 * solution"); xFilter runs the function into a table the cursor keeps and
 * reuses, so a function joined per outer row allocates once.
 */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/sql/ops/ops_int.h"

#define TFN_MAX_ARGS 8

struct tfn_vtab {
	sqlite3_vtab base;
	const struct ops_tfn *fn;
};

struct tfn_cursor {
	sqlite3_vtab_cursor base;
	struct ops_table *t;
	size_t row;
};

static int tfn_connect(sqlite3 *conn, void *aux, int argc, const char *const *argv,
		       sqlite3_vtab **out, char **err)
{
	const struct ops_tfn *fn = aux;
	struct tfn_vtab *vt;
	sqlite3_str *s;
	char *sql;
	uint32_t i;
	int rc;

	(void)argc;
	(void)argv;
	s = sqlite3_str_new(conn);
	sqlite3_str_appendall(s, "CREATE TABLE x(");
	for (i = 0; i < fn->n_cols; i++)
		sqlite3_str_appendf(s, "%s, ", fn->cols[i]);
	for (i = 0; i < fn->n_args; i++)
		sqlite3_str_appendf(s, "_fn_arg%u HIDDEN, ", i);
	sqlite3_str_appendall(s, "_auto_id HIDDEN INTEGER NOT NULL, PRIMARY KEY(_auto_id)) "
				 "WITHOUT ROWID");
	sql = sqlite3_str_finish(s);
	if (!sql)
		return SQLITE_NOMEM;
	rc = sqlite3_declare_vtab(conn, sql);
	if (rc != SQLITE_OK)
		*err = sqlite3_mprintf("failed to declare vtab %s", sql);
	sqlite3_free(sql);
	if (rc != SQLITE_OK)
		return rc;
	vt = sqlite3_malloc(sizeof(*vt));
	if (!vt)
		return SQLITE_NOMEM;
	memset(vt, 0, sizeof(*vt));
	vt->fn = fn;
	*out = &vt->base;
	return SQLITE_OK;
}

static int tfn_disconnect(sqlite3_vtab *vt)
{
	sqlite3_free(vt);
	return SQLITE_OK;
}

static int tfn_best_index(sqlite3_vtab *tab, sqlite3_index_info *info)
{
	const struct ops_tfn *fn = ((struct tfn_vtab *)tab)->fn;
	bool seen[TFN_MAX_ARGS] = {false};
	int i, n_seen = 0;

	for (i = 0; i < info->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &info->aConstraint[i];
		int arg = c->iColumn - (int)fn->n_cols;

		if (!c->usable || arg < 0 || arg >= (int)fn->n_args)
			continue;
		if (c->op != SQLITE_INDEX_CONSTRAINT_EQ && c->op != SQLITE_INDEX_CONSTRAINT_IS)
			return SQLITE_CONSTRAINT;
		if (seen[arg])
			return SQLITE_CONSTRAINT;
		seen[arg] = true;
		n_seen++;
		/* Arguments reach xFilter in column order whatever the WHERE's order. */
		info->aConstraintUsage[i].argvIndex = arg + 1;
		info->aConstraintUsage[i].omit = 1;
	}
	if (n_seen != (int)fn->n_args)
		return SQLITE_CONSTRAINT;
	info->estimatedCost = 1000;
	info->estimatedRows = 1000;
	return SQLITE_OK;
}

static int tfn_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
	const struct ops_tfn *fn = ((struct tfn_vtab *)vt)->fn;
	struct tfn_cursor *c = sqlite3_malloc(sizeof(*c));

	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	c->t = ops_table_create(fn->n_cols, NULL);
	if (!c->t) {
		sqlite3_free(c);
		return SQLITE_NOMEM;
	}
	*out = &c->base;
	return SQLITE_OK;
}

static int tfn_close(sqlite3_vtab_cursor *cur)
{
	ops_table_destroy(((struct tfn_cursor *)cur)->t);
	sqlite3_free(cur);
	return SQLITE_OK;
}

static int tfn_filter(sqlite3_vtab_cursor *cur, int idx_num, const char *idx_str, int argc,
		      sqlite3_value **argv)
{
	struct tfn_cursor *c = (struct tfn_cursor *)cur;
	const struct ops_tfn *fn = ((struct tfn_vtab *)cur->pVtab)->fn;
	char *err = NULL;

	(void)idx_num;
	(void)idx_str;
	ops_table_clear(c->t);
	c->row = 0;
	if (argc != (int)fn->n_args)
		return SQLITE_INTERNAL;
	if (fn->run(fn->user, argv, c->t, &err) < 0) {
		ops_table_clear(c->t);
		sqlite3_free(cur->pVtab->zErrMsg);
		cur->pVtab->zErrMsg = err;
		return err ? SQLITE_ERROR : SQLITE_NOMEM;
	}
	return SQLITE_OK;
}

static int tfn_next(sqlite3_vtab_cursor *cur)
{
	((struct tfn_cursor *)cur)->row++;
	return SQLITE_OK;
}

static int tfn_eof(sqlite3_vtab_cursor *cur)
{
	const struct tfn_cursor *c = (const struct tfn_cursor *)cur;

	return c->row >= c->t->n_rows;
}

static int tfn_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int n)
{
	const struct tfn_cursor *c = (const struct tfn_cursor *)cur;
	const struct ops_tfn *fn = ((struct tfn_vtab *)cur->pVtab)->fn;

	if (n >= 0 && (uint32_t)n < fn->n_cols)
		ops_cell_result(ctx, &c->t->cols[n][c->row]);
	else if ((uint32_t)n == fn->n_cols + fn->n_args)
		sqlite3_result_int64(ctx, (sqlite3_int64)c->row);
	return SQLITE_OK;
}

static int tfn_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out)
{
	(void)cur;
	(void)out;
	return SQLITE_ERROR;
}

static const sqlite3_module k_tfn_module = {
	.iVersion = 1,
	.xConnect = tfn_connect,
	.xBestIndex = tfn_best_index,
	.xDisconnect = tfn_disconnect,
	.xDestroy = tfn_disconnect,
	.xOpen = tfn_open,
	.xClose = tfn_close,
	.xFilter = tfn_filter,
	.xNext = tfn_next,
	.xEof = tfn_eof,
	.xColumn = tfn_column,
	.xRowid = tfn_rowid,
};

int ops_tfn_register(sqlite3 *conn, const struct ops_tfn *fn)
{
	if (fn->n_args > TFN_MAX_ARGS)
		return SQLITE_MISUSE;
	return sqlite3_create_module_v2(conn, fn->name, &k_tfn_module, (void *)fn, NULL);
}

/* An ops_tfn the module owns, with the destructor of its user pointer. */
struct owned_tfn {
	struct ops_tfn fn;
	void (*destroy_user)(void *);
};

static void owned_destroy(void *p)
{
	struct owned_tfn *o = p;

	if (o->destroy_user)
		o->destroy_user(o->fn.user);
	free(o);
}

int ops_tfn_register_owned(sqlite3 *conn, const struct ops_tfn *fn, void (*destroy_user)(void *))
{
	struct owned_tfn *o = malloc(sizeof(*o));

	if (!o) {
		if (destroy_user)
			destroy_user(fn->user);
		return SQLITE_NOMEM;
	}
	o->fn = *fn;
	o->destroy_user = destroy_user;
	if (fn->n_args > TFN_MAX_ARGS) {
		owned_destroy(o);
		return SQLITE_MISUSE;
	}
	/* SQLite calls owned_destroy when the module goes, even if this fails. */
	return sqlite3_create_module_v2(conn, fn->name, &k_tfn_module, &o->fn, owned_destroy);
}

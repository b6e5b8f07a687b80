// SPDX-License-Identifier: Apache-2.0
/*
 * psql_table_fn.c - CREATE PERFETTO FUNCTION ... RETURNS TABLE(...) (psql.h)
 * as an eponymous virtual table named like the function: its columns are
 * the declared ones, then one hidden column per argument, so
 * "SELECT * FROM f(1, 'x')" gives SQLite an equality on each hidden column.
 * A plan without all of them costs so much that SQLite takes it only
 * when there is no other (a call missing arguments), and then fails when
 * run. Each scan prepares the body,
 * binds the arguments by $name and steps it row by row; scans nest (a
 * body may read the function again) up to PSQL_FN_MAX_DEPTH.
 */
#include "trace_processor/sql/psql/psql_int.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

struct tf_vtab {
	sqlite3_vtab base;
	sqlite3 *conn;
	struct psql_fn *d;
};

struct tf_cursor {
	sqlite3_vtab_cursor base;
	sqlite3_stmt *st;
	sqlite3_value *args[PSQL_FN_MAX_ARGS];
	sqlite3_int64 row;
	bool eof;
};

static int tf_connect(sqlite3 *conn, void *aux, int argc, const char *const *argv,
		      sqlite3_vtab **out, char **err)
{
	struct psql_fn *d = aux;
	sqlite3_str *s = sqlite3_str_new(conn);
	struct tf_vtab *vt;
	char *schema;
	size_t i;
	int rc;

	(void)argc;
	(void)argv;
	sqlite3_str_appendall(s, "CREATE TABLE x(");
	for (i = 0; i < d->n_cols; i++)
		sqlite3_str_appendf(s, "%s\"%w\"", i ? ", " : "", d->cols[i]);
	/* Arguments keep their '$': they cannot clash with a column. */
	for (i = 0; i < d->n_args; i++)
		sqlite3_str_appendf(s, ", \"%w\" HIDDEN", d->args[i]);
	sqlite3_str_appendall(s, ")");
	schema = sqlite3_str_finish(s);
	if (!schema)
		return SQLITE_NOMEM;
	rc = sqlite3_declare_vtab(conn, schema);
	sqlite3_free(schema);
	if (rc != SQLITE_OK) {
		*err = sqlite3_mprintf("%s: %s", d->name, sqlite3_errmsg(conn));
		return rc;
	}
	vt = sqlite3_malloc(sizeof(*vt));
	if (!vt)
		return SQLITE_NOMEM;
	memset(vt, 0, sizeof(*vt));
	vt->conn = conn;
	vt->d = d;
	*out = &vt->base;
	return SQLITE_OK;
}

static int tf_disconnect(sqlite3_vtab *vt)
{
	sqlite3_free(vt);
	return SQLITE_OK;
}

static int tf_best_index(sqlite3_vtab *vtab, sqlite3_index_info *info)
{
	struct tf_vtab *vt = (struct tf_vtab *)vtab;
	int n_cols = (int)vt->d->n_cols, n_args = (int)vt->d->n_args, have = 0, i, col;
	int which[PSQL_FN_MAX_ARGS]; /* the constraint giving each argument */

	for (i = 0; i < n_args; i++)
		which[i] = -1;
	for (i = 0; i < info->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &info->aConstraint[i];

		col = c->iColumn - n_cols;
		if (col < 0 || col >= n_args || !c->usable || c->op != SQLITE_INDEX_CONSTRAINT_EQ ||
		    which[col] >= 0)
			continue;
		which[col] = i;
		have++;
	}
	/* SQLite wants argvIndex 1..n without gaps: all arguments or none. */
	for (i = 0; have == n_args && i < n_args; i++) {
		info->aConstraintUsage[which[i]].argvIndex = i + 1;
		info->aConstraintUsage[which[i]].omit = 1;
	}
	info->idxNum = have;
	info->estimatedCost = have == n_args ? 1000 : 1e99;
	return SQLITE_OK;
}

static int tf_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
	struct tf_cursor *c = sqlite3_malloc(sizeof(*c));

	(void)vt;
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	*out = &c->base;
	return SQLITE_OK;
}

static void cursor_reset(struct tf_cursor *c)
{
	size_t i;

	sqlite3_finalize(c->st);
	c->st = NULL;
	for (i = 0; i < PSQL_FN_MAX_ARGS; i++) {
		sqlite3_value_free(c->args[i]);
		c->args[i] = NULL;
	}
}

static int tf_close(sqlite3_vtab_cursor *cur)
{
	cursor_reset((struct tf_cursor *)cur);
	sqlite3_free(cur);
	return SQLITE_OK;
}

/* Steps the body one row, nested calls counted. */
static int step(struct tf_cursor *c)
{
	struct tf_vtab *vt = (struct tf_vtab *)c->base.pVtab;
	struct psql_functions *f = vt->d->owner;
	int rc;

	if (f->depth >= PSQL_FN_MAX_DEPTH) {
		sqlite3_free(vt->base.zErrMsg);
		vt->base.zErrMsg = sqlite3_mprintf("%s: SQL functions nested deeper than %d",
						   vt->d->name, PSQL_FN_MAX_DEPTH);
		f->inner_error = true;
		return SQLITE_ERROR;
	}
	f->depth++;
	rc = sqlite3_step(c->st);
	f->depth--;
	if (rc == SQLITE_ROW || rc == SQLITE_DONE) {
		c->eof = rc == SQLITE_DONE;
		c->row++;
		return SQLITE_OK;
	}
	sqlite3_free(vt->base.zErrMsg);
	vt->base.zErrMsg = f->inner_error
				   ? sqlite3_mprintf("%s", sqlite3_errmsg(vt->conn))
				   : sqlite3_mprintf("%s: %s", vt->d->name, sqlite3_errmsg(vt->conn));
	f->inner_error = true;
	return rc;
}

static int tf_filter(sqlite3_vtab_cursor *cur, int idx_num, const char *idx_str, int argc,
		     sqlite3_value **argv)
{
	struct tf_cursor *c = (struct tf_cursor *)cur;
	struct tf_vtab *vt = (struct tf_vtab *)cur->pVtab;
	char *msg;
	int i;

	(void)idx_str;
	cursor_reset(c);
	c->row = 0;
	if (vt->d->owner->depth == 0)
		vt->d->owner->inner_error = false;
	if (idx_num != (int)vt->d->n_args)
		msg = sqlite3_mprintf("%s: invalid number of args; expected %d, received %d",
				      vt->d->name, (int)vt->d->n_args, idx_num);
	else
		msg = psql_fn_check_args(vt->d, argc, argv);
	if (msg) {
		sqlite3_free(vt->base.zErrMsg);
		vt->base.zErrMsg = msg;
		vt->d->owner->inner_error = true;
		return SQLITE_ERROR;
	}
	for (i = 0; i < argc && i < PSQL_FN_MAX_ARGS; i++) {
		c->args[i] = sqlite3_value_dup(argv[i]);
		if (!c->args[i])
			return SQLITE_NOMEM;
	}
	if (sqlite3_prepare_v2(vt->conn, vt->d->body, -1, &c->st, NULL) != SQLITE_OK) {
		sqlite3_free(vt->base.zErrMsg);
		vt->base.zErrMsg = sqlite3_mprintf("%s: %s", vt->d->name, sqlite3_errmsg(vt->conn));
		return SQLITE_ERROR;
	}
	psql_fn_bind(vt->d, c->st, argc, argv);
	return step(c);
}

static int tf_next(sqlite3_vtab_cursor *cur)
{
	return step((struct tf_cursor *)cur);
}

static int tf_eof(sqlite3_vtab_cursor *cur)
{
	return ((struct tf_cursor *)cur)->eof;
}

static int tf_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	struct tf_cursor *c = (struct tf_cursor *)cur;
	size_t n_cols = ((struct tf_vtab *)cur->pVtab)->d->n_cols;

	if (col >= 0 && (size_t)col < n_cols)
		sqlite3_result_value(ctx, sqlite3_column_value(c->st, col));
	else if ((size_t)col >= n_cols && (size_t)col - n_cols < PSQL_FN_MAX_ARGS &&
		 c->args[col - (int)n_cols])
		sqlite3_result_value(ctx, c->args[col - (int)n_cols]);
	return SQLITE_OK;
}

static int tf_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out)
{
	*out = ((struct tf_cursor *)cur)->row;
	return SQLITE_OK;
}

static const sqlite3_module k_module = {
	.iVersion = 0,
	.xCreate = NULL, /* eponymous only */
	.xConnect = tf_connect,
	.xBestIndex = tf_best_index,
	.xDisconnect = tf_disconnect,
	.xDestroy = tf_disconnect,
	.xOpen = tf_open,
	.xClose = tf_close,
	.xFilter = tf_filter,
	.xNext = tf_next,
	.xEof = tf_eof,
	.xColumn = tf_column,
	.xRowid = tf_rowid,
};

int psql_table_fn_register(struct sqlite3 *conn, struct psql_fn *d)
{
	return sqlite3_create_module_v2(conn, d->name, &k_module, d, NULL);
}

void psql_table_fn_unregister(struct sqlite3 *conn, const char *name)
{
	sqlite3_create_module_v2(conn, name, NULL, NULL, NULL);
}

char *psql_table_fn_check(const struct psql_fn *d, struct sqlite3_stmt *st)
{
	int i, n = sqlite3_column_count(st);

	if (n != (int)d->n_cols)
		/* Upstream's numbers, in upstream's (swapped) order. */
		return sqlite3_mprintf("%s: number of return values %d does not match SQL "
				       "statement column count %d.",
				       d->name, n, (int)d->n_cols);
	for (i = 0; i < n; i++) {
		const char *name = sqlite3_column_name(st, i);

		if (!name || strcmp(name, d->cols[i]) != 0)
			return sqlite3_mprintf("%s: column %s at index %d does not match return "
					       "value name %s.",
					       d->name, name ? name : "", i, d->cols[i]);
	}
	return NULL;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * psql_table_info.c - perfetto_table_info('name') (psql_int.h): one row
 * per column of a PERFETTO table (or of one of the trace's own tables):
 * id, table_name, name, col_type, nullable, sorted, the way Perfetto's
 * columnar store would hold it, read from the data as Perfetto's builder
 * reads it when it fills the table:
 *   col_type  "id" (0, 1, 2, ... without NULL), else "uint32" / "int32" /
 *             "int64" (the narrowest holding every value), "double",
 *             "string" (a column with no value at all is "uint32");
 *   nullable  0, or 1 if a NULL is there;
 *   sorted    0 id-sorted, 1 each value its row or its predecessor's,
 *             2 ascending, 3 not (a column with a NULL is never sorted).
 * A PERFETTO table ends with Perfetto's implicit "_auto_id" column.
 */
#include "trace_processor/sql/psql/psql_int.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Columns; the argument is a hidden one after them. */
enum { TI_ID, TI_TABLE_NAME, TI_NAME, TI_COL_TYPE, TI_NULLABLE, TI_SORTED, TI_ARG };

struct col_info {
	char *name;
	const char *type;
	int nullable;
	int sorted;
};

/* What one column's values have shown so far. */
struct col_scan {
	int type;        /* SQLite's type of the first value; 0 before it */
	bool nullable;
	int64_t n;       /* values (not NULLs) */
	int64_t min, max, prev_i;
	double prev_d;
	char *prev_s;
	bool id_sorted, setid_sorted, sorted;
};

struct ti_vtab {
	sqlite3_vtab base;
	struct tp_psql *p;
};

struct ti_cursor {
	sqlite3_vtab_cursor base;
	char *table;
	struct col_info *cols;
	size_t n, at;
};

static void scan_value(struct col_scan *c, sqlite3_value *v)
{
	int t = sqlite3_value_type(v);

	if (t == SQLITE_NULL) {
		c->nullable = true;
		return;
	}
	if (!c->type) {
		c->type = t;
		c->id_sorted = c->setid_sorted = c->sorted = true;
	} else if (c->type == SQLITE_INTEGER && t == SQLITE_FLOAT) {
		/* Integers so far become doubles, as Perfetto's builder does. */
		c->type = SQLITE_FLOAT;
		c->prev_d = (double)c->prev_i;
	}
	if (c->type == SQLITE_INTEGER && t == SQLITE_INTEGER) {
		int64_t x = sqlite3_value_int64(v);

		if (c->n == 0) {
			c->min = c->max = x;
			c->id_sorted = c->setid_sorted = x == 0;
		} else {
			c->id_sorted = c->id_sorted && x == c->n;
			c->setid_sorted = c->setid_sorted && (x == c->prev_i || x == c->n);
			c->sorted = c->sorted && c->prev_i <= x;
			c->min = x < c->min ? x : c->min;
			c->max = x > c->max ? x : c->max;
		}
		c->prev_i = x;
	} else if (c->type == SQLITE_FLOAT && (t == SQLITE_FLOAT || t == SQLITE_INTEGER)) {
		double x = sqlite3_value_double(v);

		if (c->n > 0)
			c->sorted = c->sorted && c->prev_d <= x;
		c->prev_d = x;
	} else if (c->type == SQLITE_TEXT && t == SQLITE_TEXT) {
		const char *x = (const char *)sqlite3_value_text(v);

		if (c->n > 0 && c->prev_s && x)
			c->sorted = c->sorted && strcmp(c->prev_s, x) <= 0;
		free(c->prev_s);
		c->prev_s = x ? strdup(x) : NULL;
	}
	c->n++;
}

static void finish(const struct col_scan *c, struct col_info *out)
{
	out->nullable = c->nullable;
	switch (c->type) {
	case SQLITE_INTEGER:
		if (c->id_sorted && !c->nullable)
			out->type = "id";
		else if (c->min >= 0 && c->max <= UINT32_MAX)
			out->type = "uint32";
		else if (c->min >= INT32_MIN && c->max <= INT32_MAX)
			out->type = "int32";
		else
			out->type = "int64";
		out->sorted = c->nullable      ? 3
			      : c->id_sorted    ? 0
			      : c->setid_sorted ? 1
			      : c->sorted       ? 2
						: 3;
		return;
	case SQLITE_FLOAT:
		out->type = "double";
		break;
	case SQLITE_TEXT:
		out->type = "string";
		break;
	default:
		out->type = "uint32";
		out->sorted = 3;
		return;
	}
	out->sorted = c->sorted && !c->nullable ? 2 : 3;
}

static void cursor_clear(struct ti_cursor *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		sqlite3_free(c->cols[i].name);
	free(c->cols);
	sqlite3_free(c->table);
	c->cols = NULL;
	c->table = NULL;
	c->n = c->at = 0;
}

/* Reads @table: its columns' infos into @c. Return: SQLITE_OK or an error. */
static int describe(struct ti_vtab *vt, struct ti_cursor *c, const char *table)
{
	bool perfetto = psql_perfetto_table_has(vt->p, table, strlen(table));
	struct col_scan *scan = NULL;
	sqlite3_stmt *st = NULL;
	char *sql;
	int n, i, rc;

	if (!perfetto && !psql_is_intrinsic_table(vt->p, table, strlen(table))) {
		sqlite3_free(vt->base.zErrMsg);
		vt->base.zErrMsg = sqlite3_mprintf("Perfetto table '%s' not found.", table);
		return SQLITE_ERROR;
	}
	sql = sqlite3_mprintf("SELECT * FROM \"%w\"", table);
	if (!sql)
		return SQLITE_NOMEM;
	rc = sqlite3_prepare_v2(vt->p->conn, sql, -1, &st, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK) {
		sqlite3_free(vt->base.zErrMsg);
		vt->base.zErrMsg = sqlite3_mprintf("%s", sqlite3_errmsg(vt->p->conn));
		return rc;
	}
	n = sqlite3_column_count(st);
	scan = calloc((size_t)n + 1, sizeof(*scan));
	c->cols = calloc((size_t)n + 1, sizeof(*c->cols));
	if (!scan || !c->cols) {
		free(scan);
		sqlite3_finalize(st);
		return SQLITE_NOMEM;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		for (i = 0; i < n; i++)
			scan_value(&scan[i], sqlite3_column_value(st, i));
	for (i = 0; i < n; i++) {
		c->cols[i].name = sqlite3_mprintf("%s", sqlite3_column_name(st, i));
		finish(&scan[i], &c->cols[i]);
		free(scan[i].prev_s);
	}
	c->n = (size_t)n;
	if (perfetto) {
		c->cols[n].name = sqlite3_mprintf("_auto_id");
		c->cols[n].type = "id";
		c->n++;
	}
	free(scan);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int ti_connect(sqlite3 *conn, void *aux, int argc, const char *const *argv,
		      sqlite3_vtab **out, char **err)
{
	struct ti_vtab *vt;
	int rc;

	(void)argc;
	(void)argv;
	(void)err;
	rc = sqlite3_declare_vtab(conn, "CREATE TABLE x(id INTEGER, table_name TEXT, name TEXT, "
					"col_type TEXT, nullable INTEGER, sorted INTEGER, "
					"__table_name TEXT HIDDEN)");
	if (rc != SQLITE_OK)
		return rc;
	vt = sqlite3_malloc(sizeof(*vt));
	if (!vt)
		return SQLITE_NOMEM;
	memset(vt, 0, sizeof(*vt));
	vt->p = aux;
	*out = &vt->base;
	return SQLITE_OK;
}

static int ti_disconnect(sqlite3_vtab *vt)
{
	sqlite3_free(vt);
	return SQLITE_OK;
}

static int ti_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
	int i;

	(void)vt;
	for (i = 0; i < info->nConstraint; i++) {
		if (info->aConstraint[i].iColumn == TI_ARG && info->aConstraint[i].usable &&
		    info->aConstraint[i].op == SQLITE_INDEX_CONSTRAINT_EQ) {
			info->aConstraintUsage[i].argvIndex = 1;
			info->aConstraintUsage[i].omit = 1;
			info->idxNum = 1;
			info->estimatedCost = 100;
			return SQLITE_OK;
		}
	}
	/* Without its argument it cannot run: only when there is no other plan. */
	info->estimatedCost = 1e99;
	return SQLITE_OK;
}

static int ti_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
	struct ti_cursor *c = sqlite3_malloc(sizeof(*c));

	(void)vt;
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	*out = &c->base;
	return SQLITE_OK;
}

static int ti_close(sqlite3_vtab_cursor *cur)
{
	cursor_clear((struct ti_cursor *)cur);
	sqlite3_free(cur);
	return SQLITE_OK;
}

static int ti_filter(sqlite3_vtab_cursor *cur, int idx_num, const char *idx_str, int argc,
		     sqlite3_value **argv)
{
	struct ti_cursor *c = (struct ti_cursor *)cur;
	struct ti_vtab *vt = (struct ti_vtab *)cur->pVtab;

	(void)idx_str;
	cursor_clear(c);
	if (idx_num != 1 || argc != 1 || sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
		sqlite3_free(vt->base.zErrMsg);
		vt->base.zErrMsg = sqlite3_mprintf("perfetto_table_info takes table name as a "
						   "string.");
		return SQLITE_ERROR;
	}
	c->table = sqlite3_mprintf("%s", sqlite3_value_text(argv[0]));
	if (!c->table)
		return SQLITE_NOMEM;
	return describe(vt, c, c->table);
}

static int ti_next(sqlite3_vtab_cursor *cur)
{
	((struct ti_cursor *)cur)->at++;
	return SQLITE_OK;
}

static int ti_eof(sqlite3_vtab_cursor *cur)
{
	struct ti_cursor *c = (struct ti_cursor *)cur;

	return c->at >= c->n;
}

static int ti_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	struct ti_cursor *c = (struct ti_cursor *)cur;
	const struct col_info *ci = &c->cols[c->at];

	switch (col) {
	case TI_ID:
		sqlite3_result_int64(ctx, (sqlite3_int64)c->at);
		break;
	case TI_TABLE_NAME:
	case TI_ARG:
		sqlite3_result_text(ctx, c->table, -1, SQLITE_TRANSIENT);
		break;
	case TI_NAME:
		sqlite3_result_text(ctx, ci->name, -1, SQLITE_TRANSIENT);
		break;
	case TI_COL_TYPE:
		sqlite3_result_text(ctx, ci->type, -1, SQLITE_STATIC);
		break;
	case TI_NULLABLE:
		sqlite3_result_int(ctx, ci->nullable);
		break;
	case TI_SORTED:
		sqlite3_result_int(ctx, ci->sorted);
		break;
	default:
		break;
	}
	return SQLITE_OK;
}

static int ti_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out)
{
	*out = (sqlite3_int64)((struct ti_cursor *)cur)->at;
	return SQLITE_OK;
}

static const sqlite3_module k_table_info = {
	.iVersion = 0,
	.xConnect = ti_connect,
	.xBestIndex = ti_best_index,
	.xDisconnect = ti_disconnect,
	.xDestroy = ti_disconnect,
	.xOpen = ti_open,
	.xClose = ti_close,
	.xFilter = ti_filter,
	.xNext = ti_next,
	.xEof = ti_eof,
	.xColumn = ti_column,
	.xRowid = ti_rowid,
};

int psql_table_info_register(struct tp_psql *p)
{
	return sqlite3_create_module_v2(p->conn, "perfetto_table_info", &k_table_info, p, NULL);
}

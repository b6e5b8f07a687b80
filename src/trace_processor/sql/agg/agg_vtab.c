// SPDX-License-Identifier: Apache-2.0
/*
 * agg_vtab.c - the glue of the native GROUP BY path: keeps the last few
 * results, shows them to SQLite as the eponymous virtual table __tp_agg
 * (columns __c0.. plus a hidden __handle that picks the result), and swaps
 * a prepared statement for its rewritten form (tp_agg_prepare): the entry
 * points agg.h declares. Which names still mean our tables is agg_schema.c's.
 */
#include "trace_processor/sql/agg/agg.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/sql/agg/agg_int.h"
#include "trace_processor/storage/storage.h"

/* Results kept at once: a statement reads its own until this many newer
 * ones were made (the shell runs one statement at a time). */
#define N_RESULTS 8
#define HANDLE_COL TP_AGG_MAX_OUTS

struct tp_agg {
	struct sqlite3 *conn;
	struct tp_db *db;
	bool is_disabled;
	uint64_t last_handle;
	struct tp_agg_result results[N_RESULTS];
	struct tp_agg_schema schema;  /* as it was when we were created */
};

/* The module's aux (our struct tp_agg) rides along with the vtab. */
struct agg_vtab {
	sqlite3_vtab base;
	struct tp_agg *agg;
};

struct agg_cursor {
	sqlite3_vtab_cursor base;
	const struct tp_agg_result *res;
	size_t row;
};

/* ------------------------------------------------------ virtual table ---- */

static int av_connect(sqlite3 *conn, void *aux, int argc, const char *const *argv,
		      sqlite3_vtab **out, char **err)
{
	sqlite3_str *s = sqlite3_str_new(conn);
	struct agg_vtab *vt;
	char *decl;
	int i, rc;

	(void)argc;
	(void)argv;
	(void)err;
	sqlite3_str_appendall(s, "CREATE TABLE x(");
	for (i = 0; i < TP_AGG_MAX_OUTS; i++)
		sqlite3_str_appendf(s, "__c%d, ", i);
	sqlite3_str_appendall(s, "__handle HIDDEN)");
	decl = sqlite3_str_finish(s);
	if (!decl)
		return SQLITE_NOMEM;
	rc = sqlite3_declare_vtab(conn, decl);
	sqlite3_free(decl);
	if (rc != SQLITE_OK)
		return rc;
	vt = sqlite3_malloc(sizeof(*vt));
	if (!vt)
		return SQLITE_NOMEM;
	memset(vt, 0, sizeof(*vt));
	vt->agg = aux;
	*out = &vt->base;
	return SQLITE_OK;
}

static int av_disconnect(sqlite3_vtab *vt)
{
	sqlite3_free(vt);
	return SQLITE_OK;
}

static int av_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
	int i;

	(void)vt;
	for (i = 0; i < info->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &info->aConstraint[i];

		if (c->usable && c->iColumn == HANDLE_COL && c->op == SQLITE_INDEX_CONSTRAINT_EQ) {
			info->aConstraintUsage[i].argvIndex = 1;
			info->aConstraintUsage[i].omit = 1;
			info->idxNum = 1;
			info->estimatedCost = 10;
			info->estimatedRows = 100;
			return SQLITE_OK;
		}
	}
	/* Without a handle there is nothing to read. */
	info->idxNum = 0;
	info->estimatedCost = 1e12;
	return SQLITE_OK;
}

static int av_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
	struct agg_cursor *c = sqlite3_malloc(sizeof(*c));

	(void)vt;
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	*out = &c->base;
	return SQLITE_OK;
}

static int av_close(sqlite3_vtab_cursor *cur)
{
	sqlite3_free(cur);
	return SQLITE_OK;
}

static struct tp_agg *agg_of(sqlite3_vtab_cursor *cur)
{
	return ((struct agg_vtab *)cur->pVtab)->agg;
}

static int av_filter(sqlite3_vtab_cursor *cur, int idx_num, const char *idx_str, int argc,
		     sqlite3_value **argv)
{
	struct agg_cursor *c = (struct agg_cursor *)cur;
	struct tp_agg *agg = agg_of(cur);
	sqlite3_uint64 handle;
	const struct tp_agg_result *r;

	(void)idx_str;
	c->res = NULL;
	c->row = 0;
	if (idx_num != 1 || argc != 1 || sqlite3_value_type(argv[0]) != SQLITE_INTEGER)
		return SQLITE_OK;
	handle = (sqlite3_uint64)sqlite3_value_int64(argv[0]);
	r = &agg->results[handle % N_RESULTS];
	if (r->handle != handle || handle == 0) {
		sqlite3_free(cur->pVtab->zErrMsg);
		cur->pVtab->zErrMsg = sqlite3_mprintf("__tp_agg: no result %llu (expired)", handle);
		return SQLITE_ERROR;
	}
	c->res = r;
	return SQLITE_OK;
}

static int av_next(sqlite3_vtab_cursor *cur)
{
	((struct agg_cursor *)cur)->row++;
	return SQLITE_OK;
}

static int av_eof(sqlite3_vtab_cursor *cur)
{
	const struct agg_cursor *c = (const struct agg_cursor *)cur;

	return !c->res || c->row >= c->res->n_rows;
}

static int av_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i)
{
	const struct agg_cursor *c = (const struct agg_cursor *)cur;
	const struct tp_agg_cell *cell;
	const char *s;

	if (i == HANDLE_COL) {
		sqlite3_result_int64(ctx, (sqlite3_int64)c->res->handle);
		return SQLITE_OK;
	}
	if (i < 0 || (unsigned)i >= c->res->n_cols)
		return SQLITE_OK;
	cell = &c->res->cells[c->row * c->res->n_cols + (unsigned)i];
	switch (cell->type) {
	case TP_AGG_INT:
		sqlite3_result_int64(ctx, cell->u.i);
		break;
	case TP_AGG_REAL:
		sqlite3_result_double(ctx, cell->u.r);
		break;
	case TP_AGG_STR:
		s = tp_str_get(&agg_of(cur)->db->strings, cell->u.s);
		if (s)
			sqlite3_result_text(ctx, s, -1, SQLITE_STATIC);
		break;
	case TP_AGG_NULL:
		break;
	}
	return SQLITE_OK;
}

static int av_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out)
{
	*out = (sqlite3_int64)((struct agg_cursor *)cur)->row;
	return SQLITE_OK;
}

static const sqlite3_module k_agg_module = {
	.iVersion = 1,
	.xConnect = av_connect,
	.xBestIndex = av_best_index,
	.xDisconnect = av_disconnect,
	.xDestroy = av_disconnect,
	.xOpen = av_open,
	.xClose = av_close,
	.xFilter = av_filter,
	.xNext = av_next,
	.xEof = av_eof,
	.xColumn = av_column,
	.xRowid = av_rowid,
};


/* ---------------------------------------------------------- lifecycle ---- */

int tp_agg_create(struct sqlite3 *conn, struct tp_db *db, struct tp_agg **out)
{
	struct tp_agg *agg = calloc(1, sizeof(*agg));
	const char *off = getenv("PFC_TP_NO_FAST_AGG");
	int rc;

	if (!agg)
		return -ENOMEM;
	agg->conn = conn;
	agg->db = db;
	agg->is_disabled = off && *off && strcmp(off, "0") != 0;
	rc = sqlite3_create_module_v2(conn, "__tp_agg", &k_agg_module, agg, NULL);
	if (rc != SQLITE_OK) {
		free(agg);
		return rc == SQLITE_NOMEM ? -ENOMEM : -EIO;
	}
	if (tp_agg_schema_init(&agg->schema, conn) < 0)
		agg->is_disabled = true;
	*out = agg;
	return 0;
}

void tp_agg_destroy(struct tp_agg *agg)
{
	size_t i;

	if (!agg)
		return;
	for (i = 0; i < N_RESULTS; i++)
		tp_agg_result_fini(&agg->results[i]);
	tp_agg_schema_fini(&agg->schema);
	free(agg);
}

int tp_agg_prepare(struct tp_agg *agg, const char *sql, const char *end, sqlite3_stmt **stmt)
{
	struct tp_agg_plan *plan = NULL;
	struct tp_agg_result *slot;
	sqlite3_stmt *fast = NULL;
	uint64_t handle;
	char *text = NULL;
	int rc = 0;

	if (!agg || agg->is_disabled || !*stmt || !sqlite3_stmt_readonly(*stmt))
		return 0;
	plan = malloc(sizeof(*plan));
	if (!plan)
		return 0;
	handle = agg->last_handle + 1;
	tp_agg_schema_check(&agg->schema);
	if (tp_agg_parse(&agg->schema, agg->db, sql, end, handle, plan, &text) <= 0)
		goto out;
	slot = &agg->results[handle % N_RESULTS];
	tp_agg_result_fini(slot);
	if (tp_agg_exec(plan, &agg->db->strings, slot) != 0)
		goto out;
	slot->handle = handle;
	agg->last_handle = handle;
	if (sqlite3_prepare_v2(agg->conn, text, -1, &fast, NULL) != SQLITE_OK || !fast) {
		/* Our rewrite is wrong somewhere: SQLite answers, and we say so. */
		fprintf(stderr, "trace_processor: native GROUP BY skipped: %s\n",
			sqlite3_errmsg(agg->conn));
		sqlite3_finalize(fast);
		tp_agg_result_fini(slot);
		goto out;
	}
	sqlite3_finalize(*stmt);
	*stmt = fast;
	rc = 1;
out:
	free(text);
	free(plan);
	return rc;
}

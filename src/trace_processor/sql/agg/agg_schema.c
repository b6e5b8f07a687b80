// SPDX-License-Identifier: Apache-2.0
/*
 * agg_schema.c - whether a table name in a statement still means our table
 * or view, for the native GROUP BY path: the schema versions and our views'
 * text are snapshot when the path starts, and a temp object or a redefined
 * view of the same name sends the statement back to SQLite. Called by
 * agg_vtab.c (once per prepare) and agg_parse.c (per table name); the
 * usual case, no DDL since the snapshot, costs two pragmas per statement.
 */
#include "trace_processor/sql/agg/agg_int.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct tp_agg_view {
	char *name, *sql;
};

static int pragma_int(sqlite3 *conn, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int v = -1;

	if (sqlite3_prepare_v2(conn, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

static int snapshot_views(struct tp_agg_schema *s)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(s->conn, "SELECT name, sql FROM sqlite_master WHERE type = 'view'",
			       -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		const char *sql = (const char *)sqlite3_column_text(st, 1);
		struct tp_agg_view *v = realloc(s->views, (s->n_views + 1) * sizeof(*v));

		if (!v)
			break;
		s->views = v;
		v[s->n_views].name = strdup(name ? name : "");
		v[s->n_views].sql = strdup(sql ? sql : "");
		s->n_views++;
		if (!v[s->n_views - 1].name || !v[s->n_views - 1].sql)
			break;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -ENOMEM;
}

int tp_agg_schema_init(struct tp_agg_schema *s, struct sqlite3 *conn)
{
	memset(s, 0, sizeof(*s));
	s->conn = conn;
	s->main_version = pragma_int(conn, "PRAGMA main.schema_version");
	s->temp_version = pragma_int(conn, "PRAGMA temp.schema_version");
	return snapshot_views(s);
}

void tp_agg_schema_fini(struct tp_agg_schema *s)
{
	size_t i;

	for (i = 0; i < s->n_views; i++) {
		free(s->views[i].name);
		free(s->views[i].sql);
	}
	free(s->views);
	s->views = NULL;
	s->n_views = 0;
}

void tp_agg_schema_check(struct tp_agg_schema *s)
{
	s->is_same = pragma_int(s->conn, "PRAGMA main.schema_version") == s->main_version &&
		     pragma_int(s->conn, "PRAGMA temp.schema_version") == s->temp_version;
}

bool tp_agg_schema_is_ours(const struct tp_agg_schema *s, const char *name, size_t len)
{
	sqlite3_stmt *st = NULL;
	bool ours = false;
	size_t i;

	/* The usual case: nobody created or dropped anything since. */
	if (s->is_same)
		return true;
	if (sqlite3_prepare_v2(s->conn,
			       "SELECT 'temp', sql FROM sqlite_temp_master WHERE name = ?1 COLLATE NOCASE "
			       "UNION ALL SELECT type, sql FROM sqlite_master WHERE name = ?1 COLLATE NOCASE",
			       -1, &st, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, name, (int)len, SQLITE_TRANSIENT);
	ours = true;
	while (ours && sqlite3_step(st) == SQLITE_ROW) {
		const char *type = (const char *)sqlite3_column_text(st, 0);
		const char *sql = (const char *)sqlite3_column_text(st, 1);

		ours = false;
		if (!type || strcmp(type, "view") != 0 || !sql)
			continue;
		/* One of our views, still as we made it. */
		for (i = 0; i < s->n_views; i++) {
			if (strlen(s->views[i].name) == len &&
			    strncasecmp(s->views[i].name, name, len) == 0 &&
			    strcmp(s->views[i].sql, sql) == 0)
				ours = true;
		}
	}
	sqlite3_finalize(st);
	return ours;
}

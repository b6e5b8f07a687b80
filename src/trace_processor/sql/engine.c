// SPDX-License-Identifier: Apache-2.0
/*
 * engine.c - the SQL engine the facade uses (sql.h: tp_sql_*): the
 * connection of sql.c, the native GROUP BY path (agg/) and PerfettoSQL
 * (psql/) put together, and every statement prepared through them.
 */
#include "trace_processor/sql/sql.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>

#include "trace_processor/sql/agg/agg.h"
#include "trace_processor/sql/psql/psql.h"

struct tp_sql {
	struct sqlite3 *conn;
	struct tp_agg *agg;   /* the native GROUP BY path; NULL if it failed */
	struct tp_psql *psql; /* PerfettoSQL's statements, macros and modules */
};

int tp_sql_modules_create(struct tp_sql_modules **out)
{
	return tp_psql_modules_create(out);
}

void tp_sql_modules_destroy(struct tp_sql_modules *m)
{
	tp_psql_modules_destroy(m);
}

int tp_sql_modules_register(struct tp_sql_modules *m, const char *name, size_t n,
			    const char *const *names, const char *const *sqls,
			    const size_t *sql_lens, bool allow_override, char **err)
{
	return tp_psql_modules_register(m, name, n, names, sqls, sql_lens, allow_override, err);
}

void tp_sql_modules_reset(struct tp_sql_modules *m)
{
	tp_psql_modules_reset(m);
}

void tp_sql_modules_list(struct tp_sql_modules *m,
			 void (*fn)(void *ctx, const char *name, const char *summary), void *ctx)
{
	tp_psql_modules_list(m, fn, ctx);
}

int tp_sql_create(struct tp_db *db, struct tp_sql_modules *modules, struct tp_sql **out)
{
	struct tp_sql *s = calloc(1, sizeof(*s));
	int rc;

	if (!s)
		return -ENOMEM;
	rc = tp_sql_open(db, &s->conn);
	if (rc < 0) {
		free(s);
		return rc;
	}
	/* Without the native path every query still works, only slower. */
	if (tp_agg_create(s->conn, db, &s->agg) < 0)
		s->agg = NULL;
	rc = tp_psql_create(s->conn, s->agg, modules, &s->psql);
	if (rc < 0) {
		tp_sql_destroy(s);
		return rc;
	}
	*out = s;
	return 0;
}

void tp_sql_destroy(struct tp_sql *s)
{
	if (!s)
		return;
	tp_psql_destroy(s->psql);
	sqlite3_close(s->conn);
	tp_agg_destroy(s->agg);
	free(s);
}

struct sqlite3 *tp_sql_conn(const struct tp_sql *s)
{
	return s->conn;
}

int tp_sql_prepare(struct tp_sql *s, const char *sql, struct sqlite3_stmt **out,
		   const char **out_tail)
{
	return tp_psql_prepare(s->psql, sql, out, out_tail);
}

int tp_sql_prepare_in(struct tp_sql *s, const char *doc, const char *sql,
		      struct sqlite3_stmt **out, const char **out_tail)
{
	return tp_psql_prepare_in(s->psql, doc, sql, out, out_tail);
}

char *tp_sql_error(struct tp_sql *s, const char *sqlite_msg)
{
	return tp_psql_error(s->psql, sqlite_msg ? sqlite_msg : sqlite3_errmsg(s->conn));
}

// SPDX-License-Identifier: Apache-2.0
/*
 * psql_sorted.c - indexes on PERFETTO tables' sorted columns, made when a
 * statement first needs them (psql_int.h: psql_sorted_before()).
 * Upstream's tables know their sorted columns and binary-search them
 * ("the next slice of this CPU after ts": a search); ours are SQLite
 * tables, which SQLite can only search by an index, and an index costs
 * about as much as filling the table again. So a table remembers its
 * sorted columns (psql_relation.c) and they are indexed the first time a
 * statement that names the table would scan a table over and over: in an
 * inner loop of a join or in a correlated subquery (EXPLAIN QUERY PLAN).
 * A scan done once stays a scan.
 */
#include "trace_processor/sql/psql/psql_int.h"

#include <sqlite3.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Plan rows looked at; a bigger plan is looked at in part. */
#define MAX_PLAN_ROWS 1024

struct plan_row {
	int id, parent;
	bool correlated; /* a correlated subquery: its loops run per outer row */
	bool loop;       /* a SCAN or SEARCH of a table */
	bool plain_scan; /* a SCAN of a SQLite table (not virtual, not a subquery) */
};

/* True if @word occurs in @s as a whole name (any case). */
static bool names(const char *s, const char *word)
{
	size_t n = strlen(word);
	const char *at;

	for (at = s; (at = strcasestr(at, word)); at++) {
		char before = at == s ? ' ' : at[-1];
		char after = at[n];
		bool in_name_b = before == '_' || (before >= '0' && before <= '9') ||
				 ((before | 0x20) >= 'a' && (before | 0x20) <= 'z');
		bool in_name_a = after == '_' || (after >= '0' && after <= '9') ||
				 ((after | 0x20) >= 'a' && (after | 0x20) <= 'z');

		if (!in_name_b && !in_name_a)
			return true;
	}
	return false;
}

/* True if the plan of @sql scans a SQLite table in an inner loop. */
static bool scans_inner(sqlite3 *conn, const char *sql)
{
	struct plan_row *rows;
	sqlite3_stmt *st = NULL;
	char *eqp = sqlite3_mprintf("EXPLAIN QUERY PLAN %s", sql);
	int n = 0, i, j;
	bool found = false;

	rows = calloc(MAX_PLAN_ROWS, sizeof(*rows));
	if (!eqp || !rows || sqlite3_prepare_v2(conn, eqp, -1, &st, NULL) != SQLITE_OK || !st) {
		sqlite3_free(eqp);
		free(rows);
		sqlite3_finalize(st);
		return false;
	}
	sqlite3_free(eqp);
	while (n < MAX_PLAN_ROWS && sqlite3_step(st) == SQLITE_ROW) {
		const char *d = (const char *)sqlite3_column_text(st, 3);

		if (!d)
			continue;
		rows[n].id = sqlite3_column_int(st, 0);
		rows[n].parent = sqlite3_column_int(st, 1);
		rows[n].correlated = strncmp(d, "CORRELATED ", 11) == 0;
		rows[n].loop = strncmp(d, "SCAN ", 5) == 0 || strncmp(d, "SEARCH ", 7) == 0;
		rows[n].plain_scan = strncmp(d, "SCAN ", 5) == 0 && d[5] != '(' &&
				     !strstr(d, "VIRTUAL TABLE") && !strstr(d, "CONSTANT ROW");
		n++;
	}
	sqlite3_finalize(st);
	for (i = 0; i < n && !found; i++) {
		int parent = rows[i].parent;

		if (!rows[i].plain_scan)
			continue;
		/* A loop before it under the same parent: it is a join's inner loop. */
		for (j = 0; j < i && !found; j++)
			found = rows[j].parent == parent && rows[j].loop;
		/* Or an ancestor is a correlated subquery. */
		while (!found && parent) {
			for (j = i - 1; j >= 0 && rows[j].id != parent; j--)
				;
			if (j < 0)
				break;
			found = rows[j].correlated;
			parent = rows[j].parent;
		}
	}
	free(rows);
	return found;
}

bool psql_sorted_before(struct tp_psql *p, const char *sql)
{
	const char *name;
	char *cols;
	size_t i;
	int checked = 0; /* 1: scans inner, -1: does not */
	bool made = false;

	if (!sql)
		return false;
	for (i = 0; psql_tables_sorted(p->tables, i, &name, &cols); i++) {
		char *c, *save = NULL, *list;

		if (!cols || !names(sql, name))
			continue;
		if (!checked)
			checked = scans_inner(p->conn, sql) ? 1 : -1;
		if (checked < 0)
			return false;
		/* Each column's own index: a search by any one of them. */
		list = strdup(cols);
		for (c = list ? strtok_r(list, ",", &save) : NULL; c; c = strtok_r(NULL, ",", &save)) {
			char *ix = sqlite3_mprintf("CREATE INDEX IF NOT EXISTS \"__tp_sorted_%w_%w\" "
						   "ON \"%w\"(\"%w\")",
						   name, c, name, c);

			if (ix && sqlite3_exec(p->conn, ix, NULL, NULL, NULL) == SQLITE_OK)
				made = true;
			sqlite3_free(ix);
		}
		free(list);
		psql_tables_sorted_done(p->tables, i);
	}
	return made;
}

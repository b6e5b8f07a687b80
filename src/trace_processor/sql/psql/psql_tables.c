// SPDX-License-Identifier: Apache-2.0
/*
 * psql_tables.c - the list of PERFETTO tables (psql_int.h): which SQLite
 * tables CREATE PERFETTO TABLE made (for CREATE PERFETTO INDEX and the
 * messages), and each one's sorted columns not yet indexed
 * (psql_sorted.c indexes them when first searched).
 */
#include "trace_processor/sql/psql/psql_int.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* --------------------------------------------------------- PERFETTO tables ---- */

struct psql_tables {
	char **names;
	char **sorted; /* each table's sorted columns not yet indexed, or NULL */
	size_t n, cap;
};

int psql_tables_create(struct psql_tables **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void psql_tables_destroy(struct psql_tables *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->n; i++) {
		free(t->names[i]);
		free(t->sorted[i]);
	}
	free(t->names);
	free(t->sorted);
	free(t);
}

static bool tables_find(const struct psql_tables *t, const char *name, size_t n, size_t *at)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		if (strlen(t->names[i]) == n && strncasecmp(t->names[i], name, n) == 0) {
			*at = i;
			return true;
		}
	}
	return false;
}

void psql_perfetto_table_add(struct tp_psql *p, const char *name, size_t n, const char *sorted)
{
	struct psql_tables *t = p->tables;
	char **v, *copy;
	size_t at;

	if (!tables_find(t, name, n, &at)) {
		if (t->n == t->cap) {
			size_t cap = t->cap ? t->cap * 2 : 16;

			v = realloc(t->names, cap * sizeof(*v));
			if (!v)
				return;
			t->names = v;
			v = realloc(t->sorted, cap * sizeof(*v));
			if (!v)
				return;
			t->sorted = v;
			t->cap = cap;
		}
		copy = strndup(name, n);
		if (!copy)
			return;
		at = t->n++;
		t->names[at] = copy;
		t->sorted[at] = NULL;
	}
	free(t->sorted[at]);
	t->sorted[at] = sorted && *sorted ? strdup(sorted) : NULL;
}

bool psql_tables_sorted(struct psql_tables *t, size_t i, const char **name, char **sorted)
{
	if (i >= t->n)
		return false;
	*name = t->names[i];
	*sorted = t->sorted[i];
	return true;
}

void psql_tables_sorted_done(struct psql_tables *t, size_t i)
{
	if (i < t->n) {
		free(t->sorted[i]);
		t->sorted[i] = NULL;
	}
}

/* True if @name is a table of the main schema. */
static bool in_master(sqlite3 *conn, const char *name, size_t n, const char *type)
{
	sqlite3_stmt *st = NULL;
	bool found;

	if (sqlite3_prepare_v2(conn,
			       "SELECT 1 FROM sqlite_master WHERE type = ?2 AND name = ?1 COLLATE "
			       "NOCASE",
			       -1, &st, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, name, (int)n, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, type, -1, SQLITE_STATIC);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

bool psql_perfetto_table_has(struct tp_psql *p, const char *name, size_t n)
{
	size_t at;

	return tables_find(p->tables, name, n, &at) && in_master(p->conn, name, n, "table");
}

bool psql_is_intrinsic_table(struct tp_psql *p, const char *name, size_t n)
{
	sqlite3_stmt *st = NULL;
	char *sql;
	bool ok;

	if (in_master(p->conn, name, n, "table") || in_master(p->conn, name, n, "view"))
		return false;
	sql = sqlite3_mprintf("SELECT * FROM \"%.*w\" LIMIT 0", (int)n, name);
	ok = sql && sqlite3_prepare_v2(p->conn, sql, -1, &st, NULL) == SQLITE_OK;
	sqlite3_finalize(st);
	sqlite3_free(sql);
	return ok;
}

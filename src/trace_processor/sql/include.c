// SPDX-License-Identifier: Apache-2.0
/*
 * include.c - PerfettoSQL's INCLUDE PERFETTO MODULE over our own modules
 * (modules.h, built from sql/modules/): the facade (tp_prepare) hands each
 * statement here first; an INCLUDE runs the module's statements once per
 * connection, a module's own INCLUDEs first, and answers as Perfetto does
 * (a module included twice is a no-op; an unknown package or module is an
 * error). The prelude modules run when the connection opens.
 */
#include "trace_processor/sql/sql.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/sql/modules.h"
#include "trace_processor/sql/psql.h"

/* How deep modules may include modules; ours nest two or three levels. */
#define INCLUDE_MAX_DEPTH 16
/* Longest module name, dots included. */
#define INCLUDE_MAX_NAME 256

static bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '*';
}

/*
 * If @sql starts with "INCLUDE PERFETTO MODULE <name>" and then ';' or
 * the end, copies the name into @name and returns the position after the
 * statement; otherwise NULL (SQLite then reports what is wrong).
 */
static const char *parse_include(const char *sql, char name[INCLUDE_MAX_NAME])
{
	const char *p = psql_skip_space(sql), *start;
	size_t n;

	if (!(p = psql_keyword(p, "INCLUDE")) || !(p = psql_keyword(p, "PERFETTO")) ||
	    !(p = psql_keyword(p, "MODULE")))
		return NULL;
	start = p;
	while (is_name_char(*p))
		p++;
	n = (size_t)(p - start);
	if (n == 0 || n >= INCLUDE_MAX_NAME)
		return NULL;
	memcpy(name, start, n);
	name[n] = '\0';
	p = psql_skip_space(p);
	if (*p == ';')
		return p + 1;
	return *p ? NULL : p;
}

static int is_included(sqlite3 *conn, const char *name)
{
	sqlite3_stmt *st = NULL;
	int rc;

	rc = sqlite3_prepare_v2(conn, "SELECT 1 FROM temp.__tp_included WHERE name = ?1", -1, &st,
				NULL);
	if (rc != SQLITE_OK)
		return -EIO;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -EIO;
}

static int mark(sqlite3 *conn, const char *name, bool on)
{
	sqlite3_stmt *st = NULL;
	int rc;

	rc = sqlite3_prepare_v2(conn,
				on ? "INSERT OR IGNORE INTO temp.__tp_included(name) VALUES (?1)"
				   : "DELETE FROM temp.__tp_included WHERE name = ?1",
				-1, &st, NULL);
	if (rc != SQLITE_OK)
		return -EIO;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* *err, on failure: the message, freed with sqlite3_free() (NULL if out of memory). */
static int include_name(sqlite3 *conn, struct tp_psql *p, const char *name, int depth,
			char **err);

/* Runs every statement of @sql; an INCLUDE among them recurses. With @p,
 * PerfettoSQL statements and macros work there too (not in the prelude,
 * which runs before @p exists). */
static int run_text(sqlite3 *conn, struct tp_psql *p, const char *module, const char *sql,
		    int depth, char **err)
{
	char name[INCLUDE_MAX_NAME];
	const char *pos = sql, *tail;
	sqlite3_stmt *st;
	int rc;

	while (*(pos = psql_skip_space(pos))) {
		tail = parse_include(pos, name);
		if (tail) {
			rc = include_name(conn, p, name, depth + 1, err);
			if (rc < 0)
				return rc;
			pos = tail;
			continue;
		}
		st = NULL;
		tail = NULL;
		if (p) {
			int saved = p->include_depth;

			p->include_depth = depth + 1;
			rc = tp_psql_prepare(p, pos, &st, &tail);
			p->include_depth = saved;
		} else {
			rc = sqlite3_prepare_v2(conn, pos, -1, &st, &tail);
		}
		if (rc == SQLITE_OK && st) {
			while ((rc = sqlite3_step(st)) == SQLITE_ROW)
				;
			if (rc == SQLITE_DONE)
				rc = SQLITE_OK;
		}
		if (rc != SQLITE_OK) {
			*err = sqlite3_mprintf("INCLUDE: error in module '%s': %s", module,
					      sqlite3_errmsg(conn));
			sqlite3_finalize(st);
			return rc == SQLITE_NOMEM ? -ENOMEM : -EINVAL;
		}
		sqlite3_finalize(st);
		if (!tail || tail == pos)
			break;
		pos = tail;
	}
	return 0;
}

static int include_one(sqlite3 *conn, struct tp_psql *p, const struct tp_sql_module *m, int depth,
		       char **err)
{
	int rc = is_included(conn, m->name);

	if (rc != 0)
		return rc < 0 ? rc : 0;
	if (depth > INCLUDE_MAX_DEPTH) {
		*err = sqlite3_mprintf("INCLUDE: modules nested too deep at '%s'", m->name);
		return -EINVAL;
	}
	/* Marked first, so a module that includes itself back stops here. */
	rc = mark(conn, m->name, true);
	if (rc < 0)
		return rc;
	rc = run_text(conn, p, m->name, m->sql, depth, err);
	if (rc < 0)
		mark(conn, m->name, false);
	return rc;
}

/* True if module @m is in package @pkg (its first @n characters). */
static bool in_package(const struct tp_sql_module *m, const char *pkg, size_t n)
{
	return strncmp(m->name, pkg, n) == 0 && (m->name[n] == '.' || m->name[n] == '\0');
}

/*
 * Includes module @name: a dotted name, or a prefix ending in ".*" for
 * every module under it ("*" alone: all of them). Perfetto's errors: a
 * package (first component) we have no module of, or an unknown module.
 */
static int include_name(sqlite3 *conn, struct tp_psql *p, const char *name, int depth,
			char **err)
{
	const struct tp_sql_module *m;
	size_t len = strlen(name), pkg_len = strcspn(name, ".");
	bool has_pkg = false;
	int rc;

	if (strcmp(name, "*") == 0 || (len > 2 && strcmp(name + len - 2, ".*") == 0)) {
		size_t prefix = len - 1; /* keeps the dot */

		for (m = tp_sql_modules; m->name; m++) {
			if (strncmp(m->name, name, prefix) != 0)
				continue;
			rc = include_one(conn, p, m, depth, err);
			if (rc < 0)
				return rc;
		}
		return 0;
	}
	for (m = tp_sql_modules; m->name; m++) {
		if (strcmp(m->name, name) == 0)
			return include_one(conn, p, m, depth, err);
		if (in_package(m, name, pkg_len))
			has_pkg = true;
	}
	if (!has_pkg)
		*err = sqlite3_mprintf("INCLUDE: Package '%s' not found", name);
	else
		*err = sqlite3_mprintf("INCLUDE: unknown module '%s'", name);
	return -EINVAL;
}

/* __tp_error(msg): fails with @msg; what a failed INCLUDE steps. */
static void fn_error(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *msg = (const char *)sqlite3_value_text(argv[0]);

	(void)argc;
	sqlite3_result_error(ctx, msg ? msg : "INCLUDE failed", -1);
}

/* True if @sql creates a table or view named exactly @name. */
static bool creates(const char *sql, const char *name)
{
	static const char *const k_kinds[] = {
		"CREATE TABLE ",
		"CREATE VIEW ",
		"CREATE PERFETTO TABLE ",
		"CREATE PERFETTO VIEW ",
		"CREATE OR REPLACE PERFETTO TABLE ",
		"CREATE OR REPLACE PERFETTO VIEW ",
	};
	size_t n = strlen(name), i;

	for (i = 0; i < sizeof(k_kinds) / sizeof(k_kinds[0]); i++) {
		const char *p = sql;
		size_t k = strlen(k_kinds[i]);

		while ((p = strstr(p, k_kinds[i])) != NULL) {
			p += k;
			if (strncasecmp(p, name, n) == 0 && !is_name_char(p[n]) && p[n] != '.')
				return true;
		}
	}
	return false;
}

/*
 * __tp_module_for(name): the module that makes table or view @name, for
 * the shell's hint after "no such table"; NULL if none does (the prelude
 * is always in, so it is not named).
 */
static void fn_module_for(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *name = (const char *)sqlite3_value_text(argv[0]);
	const struct tp_sql_module *m;

	(void)argc;
	if (!name || !*name)
		return;
	for (m = tp_sql_modules; m->name; m++) {
		if (strncmp(m->name, "prelude.", 8) != 0 && creates(m->sql, name)) {
			sqlite3_result_text(ctx, m->name, -1, SQLITE_STATIC);
			return;
		}
	}
}

int tp_sql_include_init(struct sqlite3 *conn)
{
	char *err = NULL;
	int rc;

	rc = sqlite3_create_function_v2(conn, "__tp_error", 1, SQLITE_UTF8, NULL, fn_error, NULL,
					NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(conn, "__tp_module_for", 1,
						SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
						fn_module_for, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(conn, "CREATE TEMP TABLE __tp_included(name TEXT PRIMARY KEY)", NULL,
				  NULL, NULL);
	if (rc != SQLITE_OK)
		return rc == SQLITE_NOMEM ? -ENOMEM : -EIO;
	/* The prelude is there before any query, as Perfetto's. */
	rc = include_name(conn, NULL, "prelude.*", 0, &err);
	if (rc < 0 && err)
		fprintf(stderr, "trace_processor: %s\n", err);
	sqlite3_free(err);
	return rc;
}

int tp_sql_include_run(struct sqlite3 *conn, struct tp_psql *p, const char *sql,
		       struct sqlite3_stmt **out, const char **out_tail)
{
	char name[INCLUDE_MAX_NAME], *err = NULL;
	const char *tail = parse_include(sql, name);
	sqlite3_stmt *st = NULL;
	int rc;

	if (!tail)
		return 0;
	rc = include_name(conn, p, name, p ? p->include_depth : 0, &err);
	if (rc == -ENOMEM && !err)
		return -ENOMEM;
	if (rc < 0) {
		/* The error comes out when the statement runs, as SQLite's do. */
		rc = psql_error_stmt(conn, err ? err : "INCLUDE failed", &st);
	} else {
		/* No result columns; records the name again, harmlessly. */
		rc = sqlite3_prepare_v2(conn,
					"INSERT OR IGNORE INTO temp.__tp_included(name) VALUES (?1)",
					-1, &st, NULL);
		if (rc == SQLITE_OK)
			sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	}
	sqlite3_free(err);
	if (rc != SQLITE_OK) {
		sqlite3_finalize(st);
		return rc == SQLITE_NOMEM ? -ENOMEM : -EIO;
	}
	*out = st;
	*out_tail = tail;
	return 1;
}

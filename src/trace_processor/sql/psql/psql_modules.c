// SPDX-License-Identifier: Apache-2.0
/*
 * psql_modules.c - the PerfettoSQL modules INCLUDE PERFETTO MODULE can run
 * on one connection (psql_int.h): ours, built into the library from
 * sql/modules/ (modules.h), each with whether it ran yet. It resolves a
 * name as Perfetto does (a dotted name, or "pkg.*" / "*" for every module
 * under a prefix; an unknown package or module is an error with
 * Perfetto's message) and finds which module creates a name, for the
 * shell's hint. Running a module's text is perfetto_sql.c's.
 */
#include "trace_processor/sql/psql/psql_int.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "trace_processor/sql/modules/modules.h"

struct psql_modules {
	struct psql_module *v; /* sorted by name */
	size_t n;
};

int psql_modules_create(struct psql_modules **out)
{
	struct psql_modules *m = calloc(1, sizeof(*m));
	size_t n = 0, i;

	if (!m)
		return -ENOMEM;
	while (tp_sql_modules[n].name)
		n++;
	m->v = calloc(n ? n : 1, sizeof(*m->v));
	if (!m->v) {
		free(m);
		return -ENOMEM;
	}
	/* The generated table is sorted by file path; names sort alike. */
	for (i = 0; i < n; i++) {
		m->v[i].name = tp_sql_modules[i].name;
		m->v[i].sql = tp_sql_modules[i].sql;
	}
	m->n = n;
	*out = m;
	return 0;
}

void psql_modules_destroy(struct psql_modules *m)
{
	if (!m)
		return;
	free(m->v);
	free(m);
}

/* True if module @name is in package @pkg (its first @n characters). */
static bool in_package(const char *name, const char *pkg, size_t n)
{
	return strncmp(name, pkg, n) == 0 && (name[n] == '.' || name[n] == '\0');
}

int psql_modules_match(struct psql_modules *m, const char *name,
		       int (*fn)(void *ctx, struct psql_module *mod), void *ctx, char **err)
{
	size_t len = strlen(name), pkg_len = strcspn(name, "."), i;
	bool has_pkg = false;
	int rc = 0;

	if (strcmp(name, "*") == 0 || (len > 2 && strcmp(name + len - 2, ".*") == 0)) {
		size_t prefix = len - 1; /* keeps the dot */

		for (i = 0; i < m->n && rc == 0; i++)
			if (strncmp(m->v[i].name, name, prefix) == 0)
				rc = fn(ctx, &m->v[i]);
		return rc;
	}
	for (i = 0; i < m->n; i++) {
		if (strcmp(m->v[i].name, name) == 0)
			return fn(ctx, &m->v[i]);
		if (in_package(m->v[i].name, name, pkg_len))
			has_pkg = true;
	}
	if (!has_pkg)
		*err = sqlite3_mprintf("INCLUDE: Package '%s' not found", name);
	else
		*err = sqlite3_mprintf("INCLUDE: unknown module '%s'", name);
	return -EINVAL;
}

void psql_modules_each(struct psql_modules *m, const char *prefix,
		       void (*fn)(void *ctx, struct psql_module *mod), void *ctx)
{
	size_t i, n = strlen(prefix);

	for (i = 0; i < m->n; i++)
		if (strncmp(m->v[i].name, prefix, n) == 0)
			fn(ctx, &m->v[i]);
}

static bool is_name_char(char c)
{
	return psql_name_char(c) || (c >= '0' && c <= '9');
}

/* True if @sql creates a table, view or function named exactly @name. */
static bool creates(const char *sql, const char *name)
{
	static const char *const k_kinds[] = {
		"CREATE TABLE ",
		"CREATE VIEW ",
		"CREATE PERFETTO TABLE ",
		"CREATE PERFETTO VIEW ",
		"CREATE PERFETTO FUNCTION ",
		"CREATE OR REPLACE PERFETTO TABLE ",
		"CREATE OR REPLACE PERFETTO VIEW ",
		"CREATE OR REPLACE PERFETTO FUNCTION ",
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

const char *psql_modules_defining(const struct psql_modules *m, const char *name)
{
	size_t i;

	if (!name || !*name)
		return NULL;
	for (i = 0; i < m->n; i++)
		if (strncmp(m->v[i].name, "prelude.", 8) != 0 && creates(m->v[i].sql, name))
			return m->v[i].name;
	return NULL;
}

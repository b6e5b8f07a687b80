// SPDX-License-Identifier: Apache-2.0
/*
 * psql_modules.c - the PerfettoSQL modules INCLUDE PERFETTO MODULE can run
 * (psql.h: tp_psql_modules_*; psql_int.h): packages of modules, as
 * Perfetto keeps them. Ours, built into the library from sql/modules/
 * (modules.h), are one package per first name component ("linux",
 * "stacks", ...); a user's come from tp_psql_modules_register()
 * (--add-sql-package, the RPC's TPM_REGISTER_SQL_PACKAGE) with upstream's
 * rules: module names start with the package's, a package name is no
 * prefix of another's, an existing package is replaced only when allowed
 * and none of its modules ran yet. A name resolves as upstream's INCLUDE
 * does: the package whose name prefixes it, then the module itself or,
 * for "pkg.x.*", every module under pkg.x ("*": every module of every
 * package). Each module remembers whether it ran, runs, or failed;
 * running one is perfetto_sql.c's.
 */
#include "base/sort.h"
#include "trace_processor/sql/psql/psql.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "trace_processor/sql/modules/modules.h"
#include "trace_processor/sql/psql/psql_int.h"

struct pkg {
	char *name;
	struct psql_module *mods; /* sorted by name */
	size_t n;
	bool own;                 /* names and texts are ours to free */
};

struct tp_sql_modules {
	struct pkg *pkgs; /* in registration order */
	size_t n;
};

/* True if @prefix is @s or a dotted prefix of it (Perfetto's IsPackagePrefixOf). */
static bool is_prefix_of(const char *prefix, const char *s)
{
	size_t n = strlen(prefix);

	return strncmp(prefix, s, n) == 0 && (s[n] == '\0' || s[n] == '.');
}

static void pkg_fini(struct pkg *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		if (p->own) {
			free((char *)p->mods[i].name);
			free((char *)p->mods[i].sql);
		}
		free(p->mods[i].poison);
	}
	free(p->mods);
	free(p->name);
	memset(p, 0, sizeof(*p));
}

static int cmp_mod(const void *a, const void *b)
{
	return strcmp(((const struct psql_module *)a)->name, ((const struct psql_module *)b)->name);
}

static struct pkg *add_pkg(struct tp_sql_modules *m, const char *name, size_t len)
{
	struct pkg *v = realloc(m->pkgs, (m->n + 1) * sizeof(*v));

	if (!v)
		return NULL;
	m->pkgs = v;
	memset(&v[m->n], 0, sizeof(v[m->n]));
	v[m->n].name = strndup(name, len);
	if (!v[m->n].name)
		return NULL;
	return &v[m->n++];
}

int tp_psql_modules_create(struct tp_sql_modules **out)
{
	struct tp_sql_modules *m = calloc(1, sizeof(*m));
	size_t i, j;

	if (!m)
		return -ENOMEM;
	/* Ours, grouped by package: the generated table is sorted by path. */
	for (i = 0; tp_sql_modules[i].name; i = j) {
		const char *name = tp_sql_modules[i].name;
		size_t len = strcspn(name, ".");
		struct pkg *p;

		for (j = i; tp_sql_modules[j].name && strncmp(tp_sql_modules[j].name, name, len) == 0 &&
			    (tp_sql_modules[j].name[len] == '.' || !tp_sql_modules[j].name[len]);
		     j++)
			;
		p = add_pkg(m, name, len);
		if (p)
			p->mods = calloc(j - i, sizeof(*p->mods));
		if (!p || !p->mods) {
			tp_psql_modules_destroy(m);
			return -ENOMEM;
		}
		for (; i < j; i++) {
			p->mods[p->n].name = tp_sql_modules[i].name;
			p->mods[p->n].sql = tp_sql_modules[i].sql;
			p->n++;
		}
		sort_n(p->mods, p->n, sizeof(*p->mods), cmp_mod);
	}
	*out = m;
	return 0;
}

void tp_psql_modules_destroy(struct tp_sql_modules *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->n; i++)
		pkg_fini(&m->pkgs[i]);
	free(m->pkgs);
	free(m);
}

static struct pkg *find_pkg(struct tp_sql_modules *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (strcmp(m->pkgs[i].name, name) == 0)
			return &m->pkgs[i];
	return NULL;
}

/* The module named @name in any package, or NULL. */
static const struct psql_module *find_mod(const struct tp_sql_modules *m, const char *name)
{
	size_t i, k;

	for (i = 0; i < m->n; i++)
		for (k = 0; k < m->pkgs[i].n; k++)
			if (strcmp(m->pkgs[i].mods[k].name, name) == 0)
				return &m->pkgs[i].mods[k];
	return NULL;
}

int tp_psql_modules_register(struct tp_sql_modules *m, const char *name, size_t n,
			     const char *const *names, const char *const *sqls,
			     const size_t *sql_lens, bool allow_override, char **err)
{
	struct pkg fresh = {0}, *old = find_pkg(m, name);
	size_t i;

	*err = NULL;
	if (old && !allow_override) {
		*err = sqlite3_mprintf("Package '%s' is already registered. Choose a different "
				       "name.\nIf you want to replace the existing package using "
				       "trace processor shell, you need to pass the --dev flag and "
				       "use --override-sql-package to pass the module path.",
				       name);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		const struct psql_module *was;

		if (!is_prefix_of(name, names[i]) || strcmp(name, names[i]) == 0) {
			*err = sqlite3_mprintf("Module name '%s' must start with package name "
					       "'%s.' as prefix.",
					       names[i], name);
			return -EINVAL;
		}
		was = find_mod(m, names[i]);
		if (was && was->state == PSQL_MOD_DONE) {
			*err = sqlite3_mprintf("Cannot register package '%s': module '%s' has "
					       "already been included on this database; "
					       "re-registration would silently shadow the imported "
					       "body.",
					       name, names[i]);
			return -EINVAL;
		}
		if (was && (was->state == PSQL_MOD_POISONED || was->state == PSQL_MOD_RUNNING)) {
			*err = sqlite3_mprintf("Cannot register package '%s': module '%s' is "
					       "poisoned by an earlier failed include.",
					       name, names[i]);
			return -EINVAL;
		}
	}
	for (i = 0; i < m->n; i++) {
		if (&m->pkgs[i] == old)
			continue;
		if (is_prefix_of(name, m->pkgs[i].name) || is_prefix_of(m->pkgs[i].name, name)) {
			*err = sqlite3_mprintf("Package '%s' clashes with existing package '%s'. "
					       "Package names cannot be prefixes of each other.",
					       name, m->pkgs[i].name);
			return -EINVAL;
		}
	}
	fresh.own = true;
	fresh.name = strdup(name);
	fresh.mods = calloc(n ? n : 1, sizeof(*fresh.mods));
	if (!fresh.name || !fresh.mods)
		goto oom;
	for (i = 0; i < n; i++) {
		char *text = malloc(sql_lens[i] + 1);

		fresh.mods[i].name = strdup(names[i]);
		fresh.mods[i].sql = text;
		fresh.n++;
		if (!fresh.mods[i].name || !text)
			goto oom;
		memcpy(text, sqls[i], sql_lens[i]);
		text[sql_lens[i]] = '\0';
	}
	sort_n(fresh.mods, fresh.n, sizeof(*fresh.mods), cmp_mod);
	/* A module named twice: the last text, as a map keeps it. */
	for (i = 1; i < fresh.n; i++) {
		if (strcmp(fresh.mods[i - 1].name, fresh.mods[i].name) == 0) {
			free((char *)fresh.mods[i - 1].name);
			free((char *)fresh.mods[i - 1].sql);
			memmove(&fresh.mods[i - 1], &fresh.mods[i],
				(fresh.n - i) * sizeof(*fresh.mods));
			fresh.n--;
			i--;
		}
	}
	if (old) {
		pkg_fini(old);
		*old = fresh;
		return 0;
	}
	old = add_pkg(m, name, 0);
	if (!old)
		goto oom;
	free(old->name);
	*old = fresh;
	return 0;
oom:
	pkg_fini(&fresh);
	return -ENOMEM;
}

int psql_modules_match(struct tp_sql_modules *m, const char *name,
		       int (*fn)(void *ctx, struct psql_module *mod), void *ctx, char **err)
{
	size_t len = strlen(name), i, k;
	struct pkg *p = NULL;
	int rc = 0;

	if (strcmp(name, "*") == 0) {
		for (i = 0; i < m->n && rc == 0; i++)
			for (k = 0; k < m->pkgs[i].n && rc == 0; k++)
				rc = fn(ctx, &m->pkgs[i].mods[k]);
		return rc;
	}
	for (i = 0; i < m->n && !p; i++)
		if (is_prefix_of(m->pkgs[i].name, name))
			p = &m->pkgs[i];
	if (!p) {
		if (strcmp(name, "common") == 0 || strncmp(name, "common.", 7) == 0)
			*err = sqlite3_mprintf(
				"INCLUDE: Package `common` has been removed and most of the "
				"functionality has been moved to other packages. Check "
				"`slices.with_context` for replacement for `common.slices` and "
				"`time.conversion` for replacement for `common.timestamps`. The "
				"documentation for Perfetto standard library can be found at "
				"https://perfetto.dev/docs/analysis/stdlib-docs.");
		else
			*err = sqlite3_mprintf("INCLUDE: Package '%s' not found", name);
		return -EINVAL;
	}
	if (len > 0 && name[len - 1] == '*') {
		/* Every module whose name starts with what precedes the '*'. */
		for (k = 0; k < p->n && rc == 0; k++)
			if (strncmp(p->mods[k].name, name, len - 1) == 0)
				rc = fn(ctx, &p->mods[k]);
		return rc;
	}
	for (k = 0; k < p->n; k++)
		if (strcmp(p->mods[k].name, name) == 0)
			return fn(ctx, &p->mods[k]);
	*err = sqlite3_mprintf("INCLUDE: unknown module '%s'", name);
	return -EINVAL;
}

void tp_psql_modules_reset(struct tp_sql_modules *m)
{
	size_t i, k;

	for (i = 0; i < m->n; i++)
		for (k = 0; k < m->pkgs[i].n; k++) {
			m->pkgs[i].mods[k].state = PSQL_MOD_NEW;
			free(m->pkgs[i].mods[k].poison);
			m->pkgs[i].mods[k].poison = NULL;
		}
}

void psql_modules_each(struct tp_sql_modules *m, const char *prefix,
		       void (*fn)(void *ctx, struct psql_module *mod), void *ctx)
{
	size_t i, k, n = strlen(prefix);

	for (i = 0; i < m->n; i++)
		for (k = 0; k < m->pkgs[i].n; k++)
			if (strncmp(m->pkgs[i].mods[k].name, prefix, n) == 0)
				fn(ctx, &m->pkgs[i].mods[k]);
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
		"CREATE PERFETTO MACRO ",
		"CREATE OR REPLACE PERFETTO TABLE ",
		"CREATE OR REPLACE PERFETTO VIEW ",
		"CREATE OR REPLACE PERFETTO FUNCTION ",
		"CREATE OR REPLACE PERFETTO MACRO ",
	};
	size_t n = strlen(name), i;

	for (i = 0; i < sizeof(k_kinds) / sizeof(k_kinds[0]); i++) {
		const char *p = sql;
		size_t k = strlen(k_kinds[i]);

		while ((p = strstr(p, k_kinds[i])) != NULL) {
			p += k;
			while (*p == ' ')
				p++;
			if (strncasecmp(p, name, n) == 0 && !is_name_char(p[n]) && p[n] != '.')
				return true;
		}
	}
	return false;
}

const char *psql_modules_defining(const struct tp_sql_modules *m, const char *name)
{
	size_t i, k;

	if (!name || !*name)
		return NULL;
	for (i = 0; i < m->n; i++) {
		if (strcmp(m->pkgs[i].name, "prelude") == 0)
			continue;
		for (k = 0; k < m->pkgs[i].n; k++)
			if (creates(m->pkgs[i].mods[k].sql, name))
				return m->pkgs[i].mods[k].name;
	}
	return NULL;
}

void psql_modules_each_in_package(struct tp_sql_modules *m,
				  void (*fn)(void *ctx, const char *package, struct psql_module *mod),
				  void *ctx)
{
	size_t i, k;

	for (i = 0; i < m->n; i++)
		for (k = 0; k < m->pkgs[i].n; k++)
			fn(ctx, m->pkgs[i].name, &m->pkgs[i].mods[k]);
}

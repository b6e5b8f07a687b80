// SPDX-License-Identifier: Apache-2.0
/*
 * sql_packages.c - the shell's --add-sql-package PATH[@PKG],
 * --override-sql-package PATH[@PKG] and --override-stdlib PATH
 * (shell_int.h), as Perfetto's shell reads them: every .sql file under the
 * folder is a module of the package named after the folder (or PKG), its
 * include key the package, then its path with '/' made '.' and without
 * ".sql" ("pkg/a/b.sql" is pkg.a.b); a path with a '.' in it is skipped.
 * --override-stdlib registers each first folder as a package of its own.
 * The modules go to the trace processor through tp_register_sql_package().
 */
#include "trace_processor/shell/shell_int.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/buf.h"
#include "base/file.h"
#include "base/sort.h"
#include "trace_processor/trace_processor.h"

/* Largest module file read, and most files a package may hold. */
#define SQL_PACKAGE_MAX_FILE (64u << 20)
#define SQL_PACKAGE_MAX_FILES 100000
/* Deepest folder nesting followed. */
#define SQL_PACKAGE_MAX_DEPTH 32

/* The .sql files under a folder: paths relative to it, sorted. */
struct files {
	char **v;
	size_t n, cap;
};

static void files_fini(struct files *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		free(f->v[i]);
	free(f->v);
	memset(f, 0, sizeof(*f));
}

static int files_add(struct files *f, const char *rel)
{
	char **v;

	if (f->n == SQL_PACKAGE_MAX_FILES)
		return -E2BIG;
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 32;

		v = realloc(f->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		f->v = v;
		f->cap = cap;
	}
	f->v[f->n] = strdup(rel);
	if (!f->v[f->n])
		return -ENOMEM;
	f->n++;
	return 0;
}

/* Lists the regular files under @root/@rel into @f (recursively). */
static int list(const char *root, const char *rel, int depth, struct files *f)
{
	char *dir = NULL, *sub = NULL;
	struct dirent *de;
	DIR *d;
	int rc = 0;

	if (depth > SQL_PACKAGE_MAX_DEPTH)
		return 0;
	if (asprintf(&dir, "%s%s%s", root, *rel ? "/" : "", rel) < 0)
		return -ENOMEM;
	d = opendir(dir);
	if (!d) {
		rc = -errno;
		free(dir);
		return rc;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		struct stat st;
		char *full = NULL;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (asprintf(&sub, "%s%s%s", rel, *rel ? "/" : "", de->d_name) < 0 ||
		    asprintf(&full, "%s/%s", dir, de->d_name) < 0) {
			free(sub);
			rc = -ENOMEM;
			break;
		}
		if (stat(full, &st) == 0) {
			if (S_ISDIR(st.st_mode))
				rc = list(root, sub, depth + 1, f);
			else if (S_ISREG(st.st_mode))
				rc = files_add(f, sub);
		}
		free(full);
		free(sub);
		sub = NULL;
	}
	closedir(d);
	free(dir);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_with_sql(const char *s)
{
	size_t n = strlen(s);

	return n > 4 && strcmp(s + n - 4, ".sql") == 0;
}

/* A package being collected: module names, texts and lengths. */
struct pkg {
	char *name;
	char **names, **sqls;
	size_t *lens;
	size_t n, cap;
};

static void pkg_fini(struct pkg *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		free(p->names[i]);
		free(p->sqls[i]);
	}
	free(p->names);
	free(p->sqls);
	free(p->lens);
	free(p->name);
	memset(p, 0, sizeof(*p));
}

/* Adds module @key with the text of file @path to @p; *@msg on failure. */
static int pkg_add(struct pkg *p, const char *key, const char *path, bool quote, char **msg)
{
	struct buf text = BUF_INIT;
	int rc;

	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		char **names = realloc(p->names, cap * sizeof(*names));
		char **sqls = names ? realloc(p->sqls, cap * sizeof(*sqls)) : NULL;
		size_t *lens = sqls ? realloc(p->lens, cap * sizeof(*lens)) : NULL;

		if (names)
			p->names = names;
		if (sqls)
			p->sqls = sqls;
		if (!lens)
			return -ENOMEM;
		p->lens = lens;
		p->cap = cap;
	}
	rc = file_read_all(path, &text, SQL_PACKAGE_MAX_FILE);
	if (rc < 0) {
		buf_fini(&text);
		if (asprintf(msg, quote ? "Cannot read file '%s'" : "Cannot read file %s", path) <
		    0)
			*msg = NULL;
		return -EIO;
	}
	p->names[p->n] = strdup(key);
	p->lens[p->n] = text.len;
	p->sqls[p->n] = (char *)text.data;
	if (!p->names[p->n]) {
		buf_fini(&text);
		return -ENOMEM;
	}
	if (!p->sqls[p->n])
		p->sqls[p->n] = strdup("");
	p->n++;
	return 0;
}

static int pkg_register(struct tp *tp, struct pkg *p, bool allow_override, char **msg)
{
	return tp_register_sql_package(tp, p->name, p->n, (const char *const *)p->names,
				       (const char *const *)p->sqls, p->lens, allow_override, msg);
}

/* The include key of relative path @rel: '/' made '.', the extension dropped. */
static char *include_key(const char *prefix, const char *rel)
{
	char *key;
	size_t i, base;

	if (asprintf(&key, "%s%s%s", prefix ? prefix : "", prefix ? "." : "", rel) < 0)
		return NULL;
	base = prefix ? strlen(prefix) + 1 : 0;
	*strrchr(key + base, '.') = '\0';
	for (i = base; key[i]; i++)
		if (key[i] == '/')
			key[i] = '.';
	return key;
}

/* Perfetto's IncludeSqlPackage(). Return: 0, or -1 with *@msg set (NULL: out of memory). */
static int add_package(struct tp *tp, const char *arg, bool allow_override, char **msg)
{
	struct files f = {0};
	struct pkg p = {0};
	const char *at = strrchr(arg, '@'), *slash;
	char *root;
	size_t i;
	int rc;

	root = at ? strndup(arg, (size_t)(at - arg)) : strdup(arg);
	if (!root)
		return -1;
	if (*root && root[strlen(root) - 1] == '/')
		root[strlen(root) - 1] = '\0';
	rc = -1;
	if (!file_exists(root)) {
		if (asprintf(msg, "Directory %s does not exist.", root) < 0)
			*msg = NULL;
		goto out;
	}
	if (at && at[1]) {
		p.name = strdup(at + 1);
	} else {
		slash = strrchr(root, '/');
		if (!slash) {
			if (asprintf(msg, "Package path must point to a directory: %s", root) < 0)
				*msg = NULL;
			goto out;
		}
		p.name = strdup(slash + 1);
	}
	if (!p.name || list(root, "", 0, &f) < 0) {
		if (p.name && asprintf(msg, "Cannot list directory %s", root) < 0)
			*msg = NULL;
		goto out;
	}
	sort_n(f.v, f.n, sizeof(*f.v), cmp_str);
	for (i = 0; i < f.n; i++) {
		char *key, *path;
		size_t stem;

		if (!ends_with_sql(f.v[i]))
			continue;
		stem = strlen(f.v[i]) - 4;
		if (memchr(f.v[i], '.', stem)) {
			fprintf(stderr, "Skipping module %.*s as it contains a dot in its path.\n",
				(int)stem, f.v[i]);
			continue;
		}
		key = include_key(p.name, f.v[i]);
		if (!key || asprintf(&path, "%s/%s", root, f.v[i]) < 0) {
			free(key);
			goto out;
		}
		rc = pkg_add(&p, key, path, false, msg);
		free(key);
		free(path);
		if (rc < 0) {
			rc = -1;
			goto out;
		}
	}
	/* A folder without .sql files registers nothing, as upstream's. */
	rc = p.n ? pkg_register(tp, &p, allow_override, msg) : 0;
	if (rc < 0)
		rc = -1;
out:
	files_fini(&f);
	pkg_fini(&p);
	free(root);
	return rc;
}

/* Perfetto's LoadOverridenStdlib(): each first folder a package. */
static int override_stdlib(struct tp *tp, const char *arg, char **msg)
{
	struct files f = {0};
	struct pkg p = {0};
	char *root = strdup(arg);
	size_t i;
	int rc = -1;

	if (!root)
		return -1;
	if (*root && root[strlen(root) - 1] == '/')
		root[strlen(root) - 1] = '\0';
	if (!file_exists(root)) {
		if (asprintf(msg, "Directory '%s' does not exist.", root) < 0)
			*msg = NULL;
		goto out;
	}
	if (list(root, "", 0, &f) < 0) {
		if (asprintf(msg, "Cannot list directory '%s'", root) < 0)
			*msg = NULL;
		goto out;
	}
	sort_n(f.v, f.n, sizeof(*f.v), cmp_str);
	for (i = 0; i < f.n; i++) {
		char *key, *path;
		size_t pkg_len;

		if (!ends_with_sql(f.v[i]))
			continue;
		key = include_key(NULL, f.v[i]);
		if (!key)
			goto out;
		pkg_len = strcspn(key, ".");
		/* Sorted paths keep a package's files together. */
		if (p.name && (strlen(p.name) != pkg_len || strncmp(p.name, key, pkg_len) != 0)) {
			rc = pkg_register(tp, &p, true, msg);
			pkg_fini(&p);
			if (rc < 0) {
				free(key);
				rc = -1;
				goto out;
			}
		}
		if (!p.name)
			p.name = strndup(key, pkg_len);
		if (!p.name || asprintf(&path, "%s/%s", root, f.v[i]) < 0) {
			free(key);
			goto out;
		}
		rc = pkg_add(&p, key, path, true, msg);
		free(key);
		free(path);
		if (rc < 0) {
			rc = -1;
			goto out;
		}
	}
	rc = p.name ? pkg_register(tp, &p, true, msg) : 0;
	if (rc < 0)
		rc = -1;
out:
	files_fini(&f);
	pkg_fini(&p);
	free(root);
	return rc;
}

int shell_sql_packages(struct tp *tp, const struct shell_sql_packages *sp)
{
	char *msg = NULL;
	size_t i;

	if (sp->override_stdlib) {
		if (!sp->dev) {
			fprintf(stderr, "Overriding stdlib requires --dev flag\n");
			return -1;
		}
		if (override_stdlib(tp, sp->override_stdlib, &msg) < 0) {
			fprintf(stderr, "Couldn't override stdlib: %s\n", msg ? msg : "out of memory");
			free(msg);
			return -1;
		}
	}
	for (i = 0; i < sp->n_override; i++) {
		if (add_package(tp, sp->override[i], true, &msg) < 0) {
			fprintf(stderr, "Couldn't override stdlib package: %s\n",
				msg ? msg : "out of memory");
			free(msg);
			return -1;
		}
	}
	for (i = 0; i < sp->n_add; i++) {
		if (add_package(tp, sp->add[i], false, &msg) < 0) {
			fprintf(stderr, "Couldn't add SQL package: %s\n", msg ? msg : "out of memory");
			free(msg);
			return -1;
		}
	}
	return 0;
}

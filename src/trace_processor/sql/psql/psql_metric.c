// SPDX-License-Identifier: Apache-2.0
/*
 * psql_metric.c - RUN_METRIC('path', 'key', value, ...), as upstream has
 * it: finds the metric file "path" among sql/metrics/ (exact path,
 * "android/cpu_info.sql"), replaces each "{{ key }}" of its text with the
 * value given for key (text as is, integers in decimal, reals as "%f"),
 * and runs every statement of it (PerfettoSQL included; a file may run
 * others). Running a file again runs it again: its DROP ... IF EXISTS
 * make that safe. Returns "void" (printed as nothing).
 */
#include "trace_processor/sql/psql/psql_int.h"
#include "trace_processor/sql/metrics/metrics.h"

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* Metric files running inside each other, at most (a file that runs
 * itself stops here with an error instead of overflowing the stack). */
#define METRIC_MAX_DEPTH 32

struct subst {
	const char *key;
	char *value; /* sqlite3_malloc'd */
};

static const struct tp_sql_metric *find_metric(const char *path)
{
	const struct tp_sql_metric *m;

	for (m = tp_sql_metrics; m->path; m++)
		if (strcmp(m->path, path) == 0)
			return m;
	return NULL;
}

static bool word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/*
 * A "{{ word }}" at @p: sets [*@w, *@w + *@wn) to the word (maybe empty)
 * and returns the position after the "}}"; NULL if @p holds none.
 */
static const char *placeholder(const char *p, const char **w, size_t *wn)
{
	if (p[0] != '{' || p[1] != '{')
		return NULL;
	p += 2;
	while (blank(*p))
		p++;
	*w = p;
	while (word_char(*p))
		p++;
	*wn = (size_t)(p - *w);
	while (blank(*p))
		p++;
	if (p[0] != '}' || p[1] != '}')
		return NULL;
	return p + 2;
}

/*
 * The text of @sql with every placeholder replaced. Return: the text
 * (sqlite3_free it), NULL with *@unknown set if a placeholder names no
 * key, or NULL if out of memory.
 */
static char *substitute(const char *sql, const struct subst *s, size_t n, bool *unknown)
{
	sqlite3_str *out = sqlite3_str_new(NULL);
	const char *p = sql, *run = sql;

	*unknown = false;
	while (*p) {
		const char *w, *end;
		size_t wn, i;

		end = p[0] == '{' ? placeholder(p, &w, &wn) : NULL;
		if (!end) {
			p++;
			continue;
		}
		for (i = 0; i < n; i++)
			if (strlen(s[i].key) == wn && memcmp(s[i].key, w, wn) == 0)
				break;
		if (i == n) {
			*unknown = true;
			sqlite3_free(sqlite3_str_finish(out));
			return NULL;
		}
		sqlite3_str_append(out, run, (int)(p - run));
		sqlite3_str_appendall(out, s[i].value);
		p = run = end;
	}
	sqlite3_str_appendall(out, run);
	return sqlite3_str_finish(out);
}

/* The text of value @v for a substitution; NULL for NULL and blobs. */
static char *value_text(sqlite3_value *v)
{
	switch (sqlite3_value_type(v)) {
	case SQLITE_TEXT:
		return sqlite3_mprintf("%s", (const char *)sqlite3_value_text(v));
	case SQLITE_INTEGER:
		return sqlite3_mprintf("%lld", (long long)sqlite3_value_int64(v));
	case SQLITE_FLOAT:
		return sqlite3_mprintf("%f", sqlite3_value_double(v));
	default:
		return NULL;
	}
}

static void fn_run_metric(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct tp_psql *p = sqlite3_user_data(ctx);
	const struct tp_sql_metric *m;
	struct subst *subs = NULL;
	size_t n = 0, i;
	char *sql = NULL, *err = NULL, *name = NULL;
	const char *path;
	bool unknown;

	if (argc == 0 || sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
		sqlite3_result_error(ctx, "RUN_METRIC: Invalid arguments", -1);
		return;
	}
	path = (const char *)sqlite3_value_text(argv[0]);
	m = find_metric(path);
	if (!m) {
		err = sqlite3_mprintf("RUN_METRIC: Unknown filename provided %s", path);
		goto fail;
	}
	if (argc > 1) {
		subs = sqlite3_malloc64(sizeof(*subs) * (sqlite3_uint64)argc);
		if (!subs)
			goto nomem;
	}
	for (i = 1; i < (size_t)argc; i += 2) {
		if (sqlite3_value_type(argv[i]) != SQLITE_TEXT) {
			err = sqlite3_mprintf("RUN_METRIC: all keys must be strings");
			goto fail;
		}
		if (i + 1 >= (size_t)argc) {
			err = sqlite3_mprintf("RUN_METRIC: missing value for key");
			goto fail;
		}
		subs[n].key = (const char *)sqlite3_value_text(argv[i]);
		if (sqlite3_value_type(argv[i + 1]) != SQLITE_TEXT &&
		    sqlite3_value_type(argv[i + 1]) != SQLITE_INTEGER &&
		    sqlite3_value_type(argv[i + 1]) != SQLITE_FLOAT) {
			err = sqlite3_mprintf(
				"RUN_METRIC: all values must be convertible to strings");
			goto fail;
		}
		subs[n].value = value_text(argv[i + 1]);
		if (!subs[n].value)
			goto nomem;
		n++;
	}
	sql = substitute(m->sql, subs, n, &unknown);
	if (!sql) {
		if (!unknown)
			goto nomem;
		err = sqlite3_mprintf("RUN_METRIC: Error when performing substitutions: %s",
				      m->sql);
		goto fail;
	}
	if (p->metric_depth >= METRIC_MAX_DEPTH) {
		err = sqlite3_mprintf("RUN_METRIC: metric files nested more than %d deep "
				      "(running %s)",
				      METRIC_MAX_DEPTH, path);
		goto fail;
	}
	name = sqlite3_mprintf("Metric file \"%s\"", path);
	if (!name)
		goto nomem;
	p->metric_depth++;
	if (psql_exec_named(p, name, sql, &err) < 0) {
		p->metric_depth--;
		if (!err)
			goto nomem;
		goto fail;
	}
	p->metric_depth--;
	psql_result_void(ctx);
	goto out;
nomem:
	sqlite3_result_error_nomem(ctx);
	goto out;
fail:
	if (err)
		sqlite3_result_error(ctx, err, -1);
	else
		sqlite3_result_error_nomem(ctx);
out:
	for (i = 0; i < n; i++)
		sqlite3_free(subs[i].value);
	sqlite3_free(subs);
	sqlite3_free(sql);
	sqlite3_free(name);
	sqlite3_free(err);
}

int psql_metric_register(struct tp_psql *p)
{
	return sqlite3_create_function_v2(p->conn, "run_metric", -1, SQLITE_UTF8, p,
					  fn_run_metric, NULL, NULL, NULL);
}

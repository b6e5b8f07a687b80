// SPDX-License-Identifier: Apache-2.0
/*
 * psql_function.c - CREATE PERFETTO FUNCTION (psql.h): a function whose
 * body is one SELECT reading its arguments as $name. The body is prepared
 * when the function is created (so its errors, unknown $parameters and,
 * for RETURNS TABLE(...), wrong column names are reported then). A scalar
 * function keeps that statement and, per call, binds it by name, steps
 * and resets it (a recursive call prepares one of its own): the first
 * row's single column is the result, no row is NULL, a second row is an
 * error. A table function is a virtual table (psql_table_fn.c).
 * Arguments are type-checked as upstream does (NULL always passes).
 */
#include "trace_processor/sql/psql/psql_int.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int psql_functions_create(struct sqlite3 *conn, struct psql_functions **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->conn = conn;
	return 0;
}

static void def_free(struct psql_fn *d)
{
	size_t i;

	if (!d)
		return;
	sqlite3_finalize(d->stmt);
	for (i = 0; i < d->n_args; i++)
		free(d->args[i]);
	for (i = 0; i < d->n_cols; i++)
		free(d->cols[i]);
	free(d->name);
	free(d->proto);
	free(d->body);
	free(d);
}

void psql_functions_destroy(struct psql_functions *f)
{
	struct psql_fn *d, *next;

	if (!f)
		return;
	for (d = f->head; d; d = next) {
		next = d->next;
		def_free(d);
	}
	free(f);
}

static enum fn_type type_of(const char *t, size_t n)
{
	static const struct {
		const char *name;
		enum fn_type type;
	} k_map[] = {
		{"bool", T_BOOL},     {"boolean", T_BOOL},  {"double", T_DOUBLE},
		{"float", T_DOUBLE},  {"string", T_STRING}, {"bytes", T_BYTES},
		{"proto", T_BYTES},   {"any", T_ANY},
	};
	size_t i;

	for (i = 0; i < sizeof(k_map) / sizeof(k_map[0]); i++)
		if (strlen(k_map[i].name) == n && strncasecmp(k_map[i].name, t, n) == 0)
			return k_map[i].type;
	return T_LONG; /* the integer kinds: LONG, INT, TIMESTAMP, ID, ... */
}

/* Runs @st (bound) for @d and sets the result. */
static void run_body(sqlite3_context *ctx, struct psql_fn *d, sqlite3_stmt *st)
{
	sqlite3 *db = sqlite3_db_handle(st);
	int rc = sqlite3_step(st);

	if (rc == SQLITE_DONE) {
		sqlite3_result_null(ctx);
		return;
	}
	if (rc != SQLITE_ROW)
		goto sql_error;
	if (sqlite3_column_count(st) != 1) {
		char *msg = sqlite3_mprintf("%s: SQL definition should only return one column: "
					    "returned %d columns",
					    d->name, sqlite3_column_count(st));

		sqlite3_result_error(ctx, msg ? msg : "out of memory", -1);
		sqlite3_free(msg);
		return;
	}
	sqlite3_result_value(ctx, sqlite3_column_value(st, 0));
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		char *sql = sqlite3_expanded_sql(st);
		char *msg = sqlite3_mprintf("%s: multiple values were returned when executing "
					    "function body. Executed SQL was %s",
					    d->name, sql ? sql : d->body);

		sqlite3_result_error(ctx, msg ? msg : "out of memory", -1);
		sqlite3_free(msg);
		sqlite3_free(sql);
		return;
	}
	if (rc == SQLITE_DONE)
		return;
sql_error:
	if (rc == SQLITE_NOMEM) {
		sqlite3_result_error_nomem(ctx);
	} else if (d->owner->inner_error) {
		sqlite3_result_error(ctx, sqlite3_errmsg(db), -1);
	} else {
		char *msg = sqlite3_mprintf("%s: %s", d->name, sqlite3_errmsg(db));

		sqlite3_result_error(ctx, msg ? msg : "out of memory", -1);
		sqlite3_free(msg);
	}
	d->owner->inner_error = true;
}

static void fn_call(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct psql_fn *d = sqlite3_user_data(ctx);
	sqlite3_stmt *st = d->stmt;
	bool own = false;
	char *msg;

	if (d->owner->depth == 0)
		d->owner->inner_error = false;
	msg = psql_fn_check_args(d, argc, argv);
	if (msg || d->owner->depth >= PSQL_FN_MAX_DEPTH) {
		if (!msg)
			msg = sqlite3_mprintf("%s: SQL functions nested deeper than %d", d->name,
					      PSQL_FN_MAX_DEPTH);
		sqlite3_result_error(ctx, msg ? msg : "out of memory", -1);
		sqlite3_free(msg);
		d->owner->inner_error = true;
		return;
	}
	if (d->busy || !st) {
		st = NULL;
		if (sqlite3_prepare_v2(sqlite3_context_db_handle(ctx), d->body, -1, &st, NULL) !=
		    SQLITE_OK) {
			sqlite3_result_error(ctx, sqlite3_errmsg(sqlite3_context_db_handle(ctx)),
					     -1);
			sqlite3_finalize(st);
			return;
		}
		own = true;
	}
	psql_fn_bind(d, st, argc, argv);
	if (!own)
		d->busy = true;
	d->owner->depth++;
	run_body(ctx, d, st);
	d->owner->depth--;
	if (own) {
		sqlite3_finalize(st);
	} else {
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
		d->busy = false;
	}
}

struct arg_ctx {
	struct psql_fn *d;
	char **err;
};

static int add_arg(void *ctx, const char *name, size_t name_len, const char *type, size_t type_len)
{
	struct arg_ctx *a = ctx;
	struct psql_fn *d = a->d;
	size_t base = strcspn(type, "(");

	if (!psql_type_known(type, type_len, false)) {
		*a->err = sqlite3_mprintf("Unknown argument type: %.*s", (int)type_len, type);
		return -EINVAL;
	}
	if (d->n_args == PSQL_FN_MAX_ARGS) {
		*a->err = sqlite3_mprintf("more than %d arguments", PSQL_FN_MAX_ARGS);
		return -EINVAL;
	}
	d->args[d->n_args] = malloc(name_len + 2);
	if (!d->args[d->n_args])
		return -ENOMEM;
	d->args[d->n_args][0] = '$';
	memcpy(d->args[d->n_args] + 1, name, name_len);
	d->args[d->n_args][name_len + 1] = '\0';
	d->types[d->n_args] = type_of(type, base < type_len ? base : type_len);
	d->n_args++;
	return 0;
}

static int add_col(void *ctx, const char *name, size_t name_len, const char *type, size_t type_len)
{
	struct arg_ctx *a = ctx;
	struct psql_fn *d = a->d;

	if (!psql_type_known(type, type_len, false)) {
		*a->err = sqlite3_mprintf("Unknown argument type: %.*s", (int)type_len, type);
		return -EINVAL;
	}
	if (d->n_cols == PSQL_FN_MAX_ARGS) {
		*a->err = sqlite3_mprintf("more than %d columns", PSQL_FN_MAX_ARGS);
		return -EINVAL;
	}
	d->cols[d->n_cols] = strndup(name, name_len);
	if (!d->cols[d->n_cols])
		return -ENOMEM;
	d->n_cols++;
	return 0;
}

/* Parses "name(args) RETURNS type AS body" (or RETURNS TABLE(cols)) into @d. */
static int parse(struct psql_fn *d, const char *p, const char *end, char **err)
{
	const char *name = p, *args, *close, *ret, *ret_end;
	int rc;

	while (p < end && psql_name_char(*p) && *p != '$')
		p++;
	if (p == name || !psql_name_start(*name))
		goto bad;
	d->name = strndup(name, (size_t)(p - name));
	args = psql_skip_space(p);
	if (!d->name || args >= end || *args != '(')
		goto bad;
	close = psql_close_paren(args, end);
	if (!close)
		goto bad;
	d->proto = strndup(name, (size_t)(close - name));
	if (!d->proto)
		return -ENOMEM;
	rc = psql_arg_list(args + 1, close - 1, add_arg, &(struct arg_ctx){d, err}, err);
	if (rc < 0)
		return rc;
	p = psql_keyword(psql_skip_space(close), "RETURNS");
	if (!p)
		goto bad;
	if (psql_keyword(p, "TABLE") || strncasecmp(p, "TABLE(", 6) == 0) {
		ret = psql_skip_space(p + 5);
		close = ret < end && *ret == '(' ? psql_close_paren(ret, end) : NULL;
		if (!close)
			goto bad;
		rc = psql_arg_list(ret + 1, close - 1, add_col, &(struct arg_ctx){d, err}, err);
		if (rc < 0)
			return rc;
		if (d->n_cols == 0) {
			*err = sqlite3_mprintf("CREATE PERFETTO FUNCTION[prototype=%s]: a table "
					       "function needs at least one column",
					       d->proto);
			return -EINVAL;
		}
		p = close;
		goto body;
	}
	ret = p;
	while (p < end && psql_name_char(*p))
		p++;
	if (p < end && *p == '(') {
		p = psql_close_paren(p, end);
		if (!p)
			goto bad;
	}
	ret_end = p;
	if (!psql_type_known(ret, (size_t)(ret_end - ret), false)) {
		*err = sqlite3_mprintf("Unknown return type: %.*s", (int)(ret_end - ret), ret);
		return -EINVAL;
	}
body:
	p = psql_keyword(psql_skip_space(p), "AS");
	if (!p || p >= end)
		goto bad;
	d->body = strndup(p, (size_t)(end - p));
	return d->body ? 0 : -ENOMEM;
bad:
	*err = sqlite3_mprintf("CREATE PERFETTO FUNCTION: expected "
			       "'name(arg TYPE, ...) RETURNS TYPE AS SELECT ...' at '%.*s'",
			       (int)(end - p > 40 ? 40 : end - p), p);
	return -EINVAL;
}

/* Checks the body's $parameters against the arguments (upstream's messages). */
static int check_params(struct psql_fn *d, char **err)
{
	int i, n = sqlite3_bind_parameter_count(d->stmt);
	size_t k;

	for (i = 1; i <= n; i++) {
		const char *pn = sqlite3_bind_parameter_name(d->stmt, i);

		if (!pn) {
			*err = sqlite3_mprintf("%s: \"Nameless\" SQL parameters cannot be used in "
					       "the SQL statements of view functions.",
					       d->name);
			return -EINVAL;
		}
		if (pn[0] != '$') {
			*err = sqlite3_mprintf("%s: invalid parameter name %s used in the SQL "
					       "definition of the view function: all parameters "
					       "must be prefixed with '$' not ':' or '@'.",
					       d->name, pn);
			return -EINVAL;
		}
		for (k = 0; k < d->n_args; k++)
			if (strcasecmp(d->args[k], pn) == 0)
				break;
		if (k == d->n_args) {
			*err = sqlite3_mprintf("%s: parameter %s does not appear in the list of "
					       "arguments in the prototype of the view function.",
					       d->name, pn);
			return -EINVAL;
		}
	}
	return 0;
}

/* The function @d replaces: a table function of its name, or a scalar
 * one of its name and argument count. */
static struct psql_fn **find(struct psql_functions *f, const struct psql_fn *d)
{
	struct psql_fn **pp;

	for (pp = &f->head; *pp; pp = &(*pp)->next) {
		if (strcasecmp((*pp)->name, d->name) != 0 || !(*pp)->n_cols != !d->n_cols)
			continue;
		if (d->n_cols || (*pp)->n_args == d->n_args)
			return pp;
	}
	return NULL;
}

static void unregister(struct psql_functions *f, struct psql_fn *d)
{
	if (d->n_cols)
		psql_table_fn_unregister(f->conn, d->name);
	else
		sqlite3_create_function_v2(f->conn, d->name, (int)d->n_args, SQLITE_UTF8, NULL,
					   NULL, NULL, NULL, NULL);
}

static int do_register(struct psql_functions *f, struct psql_fn *d)
{
	if (d->n_cols)
		return psql_table_fn_register(f->conn, d);
	return sqlite3_create_function_v2(f->conn, d->name, (int)d->n_args, SQLITE_UTF8, d,
					  fn_call, NULL, NULL, NULL);
}

int psql_function_define(struct psql_functions *f, bool replace, const char *proto,
			 const char *end, char **err)
{
	struct psql_fn *d = calloc(1, sizeof(*d)), **oldp, *old;
	const char *tail = NULL;
	int rc;

	if (!d)
		return -ENOMEM;
	d->owner = f;
	rc = parse(d, psql_skip_space(proto), end, err);
	if (rc < 0)
		goto fail;
	oldp = find(f, d);
	old = oldp ? *oldp : NULL;
	if (old && !replace) {
		*err = sqlite3_mprintf("CREATE PERFETTO FUNCTION[prototype=%s]: function already "
				       "exists",
				       d->proto);
		rc = -EINVAL;
		goto fail;
	}
	if (old && old->busy) {
		*err = sqlite3_mprintf("CREATE PERFETTO FUNCTION[prototype=%s]: the function is "
				       "running",
				       d->proto);
		rc = -EINVAL;
		goto fail;
	}
	/* Registered before the body is prepared, so the body may call it. */
	if (do_register(f, d) != SQLITE_OK) {
		*err = sqlite3_mprintf("CREATE PERFETTO FUNCTION[prototype=%s]: %s", d->proto,
				       sqlite3_errmsg(f->conn));
		rc = -EINVAL;
		goto fail;
	}
	rc = sqlite3_prepare_v2(f->conn, d->body, -1, &d->stmt, &tail);
	if (rc == SQLITE_OK && !d->stmt)
		*err = sqlite3_mprintf("CREATE PERFETTO FUNCTION[prototype=%s]: empty body",
				       d->proto);
	else if (rc == SQLITE_OK && *psql_skip_space(tail) && *psql_skip_space(tail) != ';')
		*err = sqlite3_mprintf("CREATE PERFETTO FUNCTION[prototype=%s]: the body must be "
				       "one statement",
				       d->proto);
	else if (rc != SQLITE_OK)
		*err = sqlite3_mprintf("%s: SQLite error while executing function body: %s",
				       d->proto, sqlite3_errmsg(f->conn));
	if (!*err && d->n_cols)
		*err = psql_table_fn_check(d, d->stmt);
	if (!*err && check_params(d, err) == 0) {
		if (d->n_cols) {
			/* Each scan of a table function prepares its own. */
			sqlite3_finalize(d->stmt);
			d->stmt = NULL;
		}
		if (old) {
			*oldp = old->next;
			def_free(old);
		}
		d->next = f->head;
		f->head = d;
		return 0;
	}
	rc = -EINVAL;
	/* Put back what was there before (nothing: unregister). */
	if (old)
		do_register(f, old);
	else
		unregister(f, d);
fail:
	def_free(d);
	return rc;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * psql_macro.c - PerfettoSQL macros (psql.h): CREATE PERFETTO MACRO keeps
 * a name, its argument names and its body text; a call "name!(a, b)" in a
 * later statement is replaced, before SQLite sees the statement, by the
 * body with each $arg replaced by the text of that argument (arguments
 * split at commas outside parentheses and quotes, expanded first).
 * Expansion is textual, as upstream's, with upstream's limits and
 * messages: 16 levels, no macro inside its own expansion. The built-in
 * __intrinsic_stringify!(x) gives x as a string literal.
 */
#include "trace_processor/sql/psql/psql_int.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Upstream's bound on nested expansion. */
#define MACRO_MAX_DEPTH 16
/* The longest expansion of one statement, against exponential growth. */
#define MACRO_MAX_OUT (16u << 20)
#define MACRO_MAX_ARGS 64

struct macro {
	char *name;
	char *body;
	size_t n_args;
	char *args[MACRO_MAX_ARGS]; /* names, without the '$' */
	struct macro *next;
};

struct psql_macros {
	struct macro *head;
};

static const char k_allowed[] = "ColumnNameList, _ProjectionFragment, _TableNameList, "
				"ColumnName, Expr, TableOrSubquery, UnparenExprList, ExprList";

int psql_macros_create(struct psql_macros **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static void macro_free(struct macro *mac)
{
	size_t i;

	if (!mac)
		return;
	for (i = 0; i < mac->n_args; i++)
		free(mac->args[i]);
	free(mac->name);
	free(mac->body);
	free(mac);
}

void psql_macros_destroy(struct psql_macros *m)
{
	struct macro *mac, *next;

	if (!m)
		return;
	for (mac = m->head; mac; mac = next) {
		next = mac->next;
		macro_free(mac);
	}
	free(m);
}

static struct macro **find(struct psql_macros *m, const char *name, size_t n)
{
	struct macro **pp;

	for (pp = &m->head; *pp; pp = &(*pp)->next)
		if (strlen((*pp)->name) == n && strncasecmp((*pp)->name, name, n) == 0)
			return pp;
	return NULL;
}

struct define_ctx {
	struct macro *mac;
	char **err;
};

static int add_arg(void *ctx, const char *name, size_t name_len, const char *type, size_t type_len)
{
	struct define_ctx *d = ctx;

	if (!psql_type_known(type, type_len, true)) {
		*d->err = sqlite3_mprintf("Macro '%s' argument '%.*s' is unknown type '%.*s'. "
					  "Allowed types: %s",
					  d->mac->name, (int)name_len, name, (int)type_len, type,
					  k_allowed);
		return -EINVAL;
	}
	if (d->mac->n_args == MACRO_MAX_ARGS) {
		*d->err = sqlite3_mprintf("Macro '%s': more than %d arguments", d->mac->name,
					  MACRO_MAX_ARGS);
		return -EINVAL;
	}
	d->mac->args[d->mac->n_args] = strndup(name, name_len);
	if (!d->mac->args[d->mac->n_args])
		return -ENOMEM;
	d->mac->n_args++;
	return 0;
}

int psql_macro_define(struct psql_macros *m, bool replace, const char *name, size_t name_len,
		      const char *args, const char *args_end, const char *ret, size_t ret_len,
		      const char *body, const char *body_end, char **err)
{
	struct define_ctx d = {.err = err};
	struct macro **old;
	int rc;

	while (body_end > body && (body_end[-1] == ' ' || (body_end[-1] >= '\t' && body_end[-1] <= '\r')))
		body_end--;
	d.mac = calloc(1, sizeof(*d.mac));
	if (!d.mac)
		return -ENOMEM;
	d.mac->name = strndup(name, name_len);
	d.mac->body = strndup(body, (size_t)(body_end - body));
	if (!d.mac->name || !d.mac->body) {
		macro_free(d.mac);
		return -ENOMEM;
	}
	rc = psql_arg_list(args, args_end, add_arg, &d, err);
	if (rc == 0 && !psql_type_known(ret, ret_len, true)) {
		*err = sqlite3_mprintf("Macro %s return type %.*s is unknown. Allowed types: %s",
				       d.mac->name, (int)ret_len, ret, k_allowed);
		rc = -EINVAL;
	}
	old = rc == 0 ? find(m, name, name_len) : NULL;
	if (old && !replace) {
		*err = sqlite3_mprintf("Macro already exists");
		rc = -EINVAL;
	}
	if (rc < 0) {
		macro_free(d.mac);
		return rc;
	}
	if (old) {
		d.mac->next = (*old)->next;
		macro_free(*old);
		*old = d.mac;
	} else {
		d.mac->next = m->head;
		m->head = d.mac;
	}
	return 0;
}

/* If a macro call "name!(" starts at @p (a name token ending at @t), the
 * position of its '('; else NULL. */
static const char *call_paren(const char *p, const char *t, const char *end)
{
	const char *q;

	if (!psql_name_start(*p) || t >= end || *t != '!')
		return NULL;
	q = psql_skip_space(t + 1);
	return q < end && *q == '(' ? q : NULL;
}

bool psql_has_macro_call(const char *p, const char *end)
{
	const char *t;

	while (p < end && *p) {
		t = psql_token_end(p);
		if (call_paren(p, t, end))
			return true;
		p = t;
	}
	return false;
}

struct expander {
	struct psql_macros *m;
	const struct macro *chain[MACRO_MAX_DEPTH];
	int depth;
	char **err;
};

static int expand(struct expander *ex, sqlite3_str *out, const char *p, const char *end);

static int fail(struct expander *ex, char *msg)
{
	if (!*ex->err)
		*ex->err = msg;
	else
		sqlite3_free(msg);
	return msg ? -EINVAL : -ENOMEM;
}

static int check_size(struct expander *ex, sqlite3_str *out)
{
	if (sqlite3_str_errcode(out) == SQLITE_NOMEM)
		return -ENOMEM;
	if ((unsigned)sqlite3_str_length(out) > MACRO_MAX_OUT)
		return fail(ex, sqlite3_mprintf("macro expansion larger than %u bytes",
						MACRO_MAX_OUT));
	return 0;
}

static void trim(const char **p, const char **end)
{
	*p = psql_skip_space(*p);
	if (*p > *end)
		*p = *end;
	while (*end > *p && ((*end)[-1] == ' ' || ((*end)[-1] >= '\t' && (*end)[-1] <= '\r')))
		(*end)--;
}

/* Splits the arguments in [@p, @end) at commas outside parentheses: up to
 * MACRO_MAX_ARGS ranges in @a (start, end pairs). Return: the count. */
static size_t split_args(const char *p, const char *end, const char *a[][2])
{
	const char *start = p;
	size_t n = 0;
	int depth = 0;

	trim(&p, &end);
	if (p == end)
		return 0;
	start = p;
	while (p < end && *p) {
		if (*p == '(') {
			depth++;
		} else if (*p == ')') {
			depth--;
		} else if (*p == ',' && depth == 0) {
			if (n == MACRO_MAX_ARGS)
				return n + 1;
			a[n][0] = start;
			a[n][1] = p;
			n++;
			start = p + 1;
		}
		p = psql_token_end(p);
	}
	if (n == MACRO_MAX_ARGS)
		return n + 1;
	a[n][0] = start;
	a[n][1] = end;
	return n + 1;
}

/* The body of @mac with each $arg replaced by @vals[i]. */
static int substitute(struct expander *ex, const struct macro *mac, char *const *vals,
		      sqlite3_str *out)
{
	const char *p = mac->body, *t;
	size_t i;
	int rc;

	while (*p) {
		t = psql_token_end(p);
		for (i = 0; *p == '$' && i < mac->n_args; i++) {
			if (strlen(mac->args[i]) == (size_t)(t - p - 1) &&
			    strncasecmp(mac->args[i], p + 1, (size_t)(t - p - 1)) == 0)
				break;
		}
		if (*p == '$' && i < mac->n_args)
			sqlite3_str_appendall(out, vals[i]);
		else
			sqlite3_str_append(out, p, (int)(t - p));
		rc = check_size(ex, out);
		if (rc < 0)
			return rc;
		p = t;
	}
	return 0;
}

/* Expands [@p, @end) into a fresh string (*@val; sqlite3_free it). */
static int expand_to_string(struct expander *ex, const char *p, const char *end, char **val)
{
	sqlite3_str *s = sqlite3_str_new(NULL);
	int rc = expand(ex, s, p, end);

	*val = sqlite3_str_finish(s);
	if (rc == 0 && !*val)
		*val = sqlite3_mprintf("%s", "");
	if (rc == 0 && !*val)
		rc = -ENOMEM;
	return rc;
}

static int call(struct expander *ex, sqlite3_str *out, const char *name, size_t name_len,
		const char *args, const char *args_end)
{
	const char *a[MACRO_MAX_ARGS][2];
	char *vals[MACRO_MAX_ARGS] = {0}, *body = NULL;
	struct macro **mp;
	const struct macro *mac;
	size_t n, i;
	int k, rc = 0;

	if (name_len == 21 && strncasecmp(name, "__intrinsic_stringify", 21) == 0) {
		trim(&args, &args_end);
		sqlite3_str_appendf(out, "'%.*s'", (int)(args_end - args), args);
		return check_size(ex, out);
	}
	mp = find(ex->m, name, name_len);
	if (!mp)
		return fail(ex, sqlite3_mprintf("unknown macro '%.*s'", (int)name_len, name));
	mac = *mp;
	for (k = 0; k < ex->depth; k++)
		if (ex->chain[k] == mac)
			return fail(ex, sqlite3_mprintf("recursive macro expansion: '%.*s'",
							(int)name_len, name));
	if (ex->depth >= MACRO_MAX_DEPTH)
		return fail(ex, sqlite3_mprintf("macro expansion depth limit exceeded (%d)",
						MACRO_MAX_DEPTH));
	n = split_args(args, args_end, a);
	if (n != mac->n_args)
		return fail(ex, sqlite3_mprintf("macro '%s' expects %d argument%s, got %d",
						mac->name, (int)mac->n_args,
						mac->n_args == 1 ? "" : "s", (int)n));
	for (i = 0; i < n && rc == 0; i++) {
		trim(&a[i][0], &a[i][1]);
		rc = expand_to_string(ex, a[i][0], a[i][1], &vals[i]);
	}
	if (rc == 0) {
		sqlite3_str *s = sqlite3_str_new(NULL);

		rc = substitute(ex, mac, vals, s);
		body = sqlite3_str_finish(s);
		if (rc == 0 && !body)
			body = sqlite3_mprintf("%s", "");
		if (rc == 0 && !body)
			rc = -ENOMEM;
	}
	if (rc == 0) {
		ex->chain[ex->depth++] = mac;
		rc = expand(ex, out, body, body + strlen(body));
		ex->depth--;
	}
	for (i = 0; i < n && i < MACRO_MAX_ARGS; i++)
		sqlite3_free(vals[i]);
	sqlite3_free(body);
	return rc;
}

static int expand(struct expander *ex, sqlite3_str *out, const char *p, const char *end)
{
	const char *t, *paren, *close;
	int rc;

	while (p < end && *p) {
		t = psql_token_end(p);
		if (t > end)
			t = end;
		paren = call_paren(p, t, end);
		if (!paren) {
			sqlite3_str_append(out, p, (int)(t - p));
			rc = check_size(ex, out);
			if (rc < 0)
				return rc;
			p = t;
			continue;
		}
		close = psql_close_paren(paren, end);
		if (!close)
			return fail(ex, sqlite3_mprintf("macro '%.*s': no ')' closes its arguments",
							(int)(t - p), p));
		rc = call(ex, out, p, (size_t)(t - p), paren + 1, close - 1);
		if (rc < 0)
			return rc;
		p = close;
	}
	return 0;
}

char *psql_macro_expand(struct psql_macros *m, const char *p, const char *end, char **err)
{
	struct expander ex = {.m = m, .err = err};
	char *res = NULL;

	*err = NULL;
	if (expand_to_string(&ex, p, end, &res) < 0) {
		sqlite3_free(res);
		return NULL;
	}
	return res;
}

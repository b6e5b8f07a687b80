// SPDX-License-Identifier: Apache-2.0
/*
 * psql_lex.c - just enough of SQL's lexical rules for PerfettoSQL's
 * statements (psql.h): blanks and comments, quoted strings and names,
 * statement ends, balanced parentheses and the "name TYPE, ..." lists of
 * prototypes and schemas, with the types PerfettoSQL knows. Everything is
 * bounded by the NUL or an explicit end, so any text is safe to scan.
 */
#include "trace_processor/sql/psql/psql_int.h"

#include <errno.h>
#include <sqlite3.h>
#include <string.h>
#include <strings.h>

static bool is_blank(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

bool psql_name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       (unsigned char)c >= 0x80;
}

bool psql_name_char(char c)
{
	return psql_name_start(c) || (c >= '0' && c <= '9') || c == '$';
}

const char *psql_skip_space(const char *p)
{
	for (;;) {
		while (is_blank(*p))
			p++;
		if ((p[0] == '-' && p[1] == '-') || (p[0] == '/' && p[1] == '*'))
			p = psql_token_end(p);
		else
			return p;
	}
}

const char *psql_keyword(const char *p, const char *kw)
{
	size_t n = strlen(kw);

	if (strncasecmp(p, kw, n) != 0 || psql_name_char(p[n]))
		return NULL;
	return psql_skip_space(p + n);
}

/* Past a quoted run opened at @p by @open and closed by @close (doubled
 * closers are part of it). */
static const char *quoted_end(const char *p, char close)
{
	p++;
	for (;;) {
		if (!*p)
			return p;
		if (*p++ == close) {
			if (*p != close || close == ']')
				return p;
			p++;
		}
	}
}

const char *psql_token_end(const char *p)
{
	if (!*p)
		return p;
	if (p[0] == '-' && p[1] == '-') {
		while (*p && *p != '\n')
			p++;
		return p;
	}
	if (p[0] == '/' && p[1] == '*') {
		const char *e = strstr(p + 2, "*/");

		return e ? e + 2 : p + strlen(p);
	}
	switch (*p) {
	case '\'':
	case '"':
	case '`':
		return quoted_end(p, *p);
	case '[':
		return quoted_end(p, ']');
	default:
		break;
	}
	if (psql_name_char(*p) || (*p >= '0' && *p <= '9')) {
		while (psql_name_char(*p) || (*p >= '0' && *p <= '9'))
			p++;
		return p;
	}
	return p + 1;
}

const char *psql_statement_end(const char *p)
{
	while (*p && *p != ';')
		p = psql_token_end(p);
	return p;
}

const char *psql_close_paren(const char *p, const char *end)
{
	int depth = 0;

	while (p < end && *p) {
		if (*p == '(') {
			depth++;
		} else if (*p == ')') {
			if (--depth == 0)
				return p + 1;
		}
		p = psql_token_end(p);
	}
	return NULL;
}

static const char *const k_column_types[] = {
	"bool", "boolean", "long", "timestamp", "duration", "id", "joinid", "argsetid",
	"int",  "uint",    "double", "float",   "string",   "bytes", "proto", "any",
};

static const char *const k_macro_types[] = {
	"ColumnNameList", "_ProjectionFragment", "_TableNameList", "ColumnName",
	"Expr",           "TableOrSubquery",     "UnparenExprList", "ExprList",
};

bool psql_type_known(const char *t, size_t n, bool macro)
{
	const char *const *v = macro ? k_macro_types : k_column_types;
	size_t count = macro ? sizeof(k_macro_types) / sizeof(k_macro_types[0])
			     : sizeof(k_column_types) / sizeof(k_column_types[0]);
	const char *paren = memchr(t, '(', n);
	size_t i, base = paren ? (size_t)(paren - t) : n;

	/* Only the id types carry a "(table.column)". */
	if (paren && (macro || (base != 2 && base != 6)))
		return false;
	for (i = 0; i < count; i++)
		if (strlen(v[i]) == base && strncasecmp(v[i], t, base) == 0)
			return true;
	return false;
}

/* The name at @p (plain or quoted with "" or ``); NULL if none. */
static const char *name_end(const char *p, const char *end)
{
	const char *e;

	if (p >= end)
		return NULL;
	if (*p == '"' || *p == '`') {
		e = psql_token_end(p);
		return e <= end && e - p >= 2 && e[-1] == *p ? e : NULL;
	}
	if (!psql_name_start(*p))
		return NULL;
	for (e = p; e < end && psql_name_char(*e) && *e != '$'; e++)
		;
	return e;
}

int psql_arg_list(const char *p, const char *end,
		  int (*fn)(void *ctx, const char *name, size_t name_len, const char *type,
			    size_t type_len),
		  void *ctx, char **err)
{
	const char *name, *name_e, *type, *type_e;
	int rc;

	p = psql_skip_space(p);
	if (p >= end)
		return 0;
	for (;;) {
		name = p;
		name_e = name_end(p, end);
		if (!name_e)
			goto bad;
		type = psql_skip_space(name_e);
		type_e = name_end(type, end);
		if (!type_e || *type == '"' || *type == '`')
			goto bad;
		p = psql_skip_space(type_e);
		if (p < end && *p == '(') {
			const char *close = psql_close_paren(p, end);

			if (!close)
				goto bad;
			type_e = close;
			p = psql_skip_space(close);
		}
		rc = fn(ctx, name, (size_t)(name_e - name), type, (size_t)(type_e - type));
		if (rc)
			return rc;
		if (p >= end)
			return 0;
		if (*p != ',')
			goto bad;
		p = psql_skip_space(p + 1);
	}
bad:
	*err = sqlite3_mprintf("argument list: expected 'name TYPE' at '%.*s'",
			       (int)(end - p > 40 ? 40 : end - p), p);
	return -EINVAL;
}

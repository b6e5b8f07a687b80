// SPDX-License-Identifier: Apache-2.0
/*
 * psql_lex.c - SQL's lexical rules for PerfettoSQL (psql_int.h): a
 * tokenizer that splits text as SQLite's does (blanks, comments, names,
 * quoted names, strings, blobs, numbers, variables, operators) plus the
 * '!' of a macro call, and the helpers built on it: keywords, statement
 * ends, balanced parentheses, the "name TYPE, ..." lists of prototypes
 * and schemas, and the types PerfettoSQL knows. Everything is bounded by
 * the NUL or an explicit end, so any text is safe to scan.
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

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

bool psql_name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       (unsigned char)c >= 0x80;
}

bool psql_name_char(char c)
{
	return psql_name_start(c) || is_digit(c) || c == '$';
}

/* Past a run quoted by @close (a doubled closer is part of it). */
static const char *quoted_end(const char *p, const char *end, char close)
{
	p++;
	while (p < end && *p) {
		if (*p++ == close) {
			if (p >= end || *p != close || close == ']')
				return p;
			p++;
		}
	}
	return p;
}

const char *psql_lex(const char *p, const char *end, struct psql_tok *t)
{
	const char *s = p;
	enum psql_tk k = TK_OP;

	if (p >= end || !*p) {
		t->type = TK_EOF;
		t->p = p;
		t->n = 0;
		return p;
	}
	if (is_blank(*p)) {
		while (p < end && is_blank(*p))
			p++;
		k = TK_SPACE;
	} else if (p[0] == '-' && p + 1 < end && p[1] == '-') {
		while (p < end && *p && *p != '\n')
			p++;
		k = TK_COMMENT;
	} else if (p[0] == '/' && p + 1 < end && p[1] == '*') {
		p += 2;
		while (p < end && *p && !(p[0] == '*' && p + 1 < end && p[1] == '/'))
			p++;
		p = p < end && *p ? p + 2 : p;
		k = TK_COMMENT;
	} else if (*p == '\'') {
		p = quoted_end(p, end, '\'');
		k = TK_STRING;
	} else if (*p == '"' || *p == '`') {
		p = quoted_end(p, end, *p);
		k = TK_QID;
	} else if (*p == '[') {
		p = quoted_end(p, end, ']');
		k = TK_QID;
	} else if ((*p == 'x' || *p == 'X') && p + 1 < end && p[1] == '\'') {
		p = quoted_end(p + 1, end, '\'');
		k = TK_BLOB;
	} else if (psql_name_start(*p)) {
		while (p < end && psql_name_char(*p))
			p++;
		k = TK_ID;
	} else if (is_digit(*p) || (*p == '.' && p + 1 < end && is_digit(p[1]))) {
		if (p[0] == '0' && p + 2 < end && (p[1] == 'x' || p[1] == 'X') && is_hex(p[2])) {
			p += 2;
			while (p < end && is_hex(*p))
				p++;
		} else {
			while (p < end && (is_digit(*p) || *p == '_'))
				p++;
			if (p < end && *p == '.')
				for (p++; p < end && (is_digit(*p) || *p == '_'); p++)
					;
			if (p + 1 < end && (*p == 'e' || *p == 'E') &&
			    (is_digit(p[1]) ||
			     ((p[1] == '+' || p[1] == '-') && p + 2 < end && is_digit(p[2])))) {
				p += 2;
				while (p < end && is_digit(*p))
					p++;
			}
		}
		/* "12abc" is one bad token to SQLite; keep it one token. */
		while (p < end && psql_name_char(*p))
			p++;
		k = TK_NUM;
	} else if (*p == '$' || *p == ':' || *p == '@' || *p == '#') {
		p++;
		while (p < end && (psql_name_char(*p) || *p == ':'))
			p++;
		k = p - s > 1 ? TK_VAR : TK_OP;
	} else if (*p == '?') {
		for (p++; p < end && is_digit(*p); p++)
			;
		k = TK_VAR;
	} else {
		static const char *const k_ops[] = {"->>", "||", "<=", ">=", "==", "!=", "<>",
						    "<<", ">>", "->"};
		size_t i;

		for (i = 0; i < sizeof(k_ops) / sizeof(k_ops[0]); i++) {
			size_t n = strlen(k_ops[i]);

			if ((size_t)(end - p) >= n && strncmp(p, k_ops[i], n) == 0)
				break;
		}
		if (i < sizeof(k_ops) / sizeof(k_ops[0])) {
			p += strlen(k_ops[i]);
		} else {
			switch (*p) {
			case '(':
				k = TK_LP;
				break;
			case ')':
				k = TK_RP;
				break;
			case ',':
				k = TK_COMMA;
				break;
			case ';':
				k = TK_SEMI;
				break;
			case '.':
				k = TK_DOT;
				break;
			case '!':
				k = TK_BANG;
				break;
			default:
				break;
			}
			p++;
		}
	}
	if (p > end)
		p = end;
	t->type = k;
	t->p = s;
	t->n = (size_t)(p - s);
	return p;
}

const char *psql_lex_sig(const char *p, const char *end, struct psql_tok *t)
{
	do
		p = psql_lex(p, end, t);
	while (t->type == TK_SPACE || t->type == TK_COMMENT);
	return p;
}

bool psql_tok_is(const struct psql_tok *t, const char *kw)
{
	return t->type == TK_ID && strlen(kw) == t->n && strncasecmp(t->p, kw, t->n) == 0;
}

const char *psql_skip_space(const char *p)
{
	struct psql_tok t;
	const char *q;

	for (;;) {
		q = psql_lex(p, p + strlen(p), &t);
		if (t.type != TK_SPACE && t.type != TK_COMMENT)
			return p;
		p = q;
	}
}

const char *psql_keyword(const char *p, const char *kw)
{
	size_t n = strlen(kw);

	if (strncasecmp(p, kw, n) != 0 || psql_name_char(p[n]) || is_digit(p[n]))
		return NULL;
	return psql_skip_space(p + n);
}

const char *psql_token_end(const char *p)
{
	struct psql_tok t;

	return psql_lex(p, p + strlen(p), &t);
}

const char *psql_statement_end(const char *p)
{
	const char *end = p + strlen(p);
	struct psql_tok t;

	for (;;) {
		const char *q = psql_lex(p, end, &t);

		if (t.type == TK_EOF || t.type == TK_SEMI)
			return p;
		p = q;
	}
}

const char *psql_close_paren(const char *p, const char *end)
{
	struct psql_tok t;
	int depth = 0;

	while (p < end && *p) {
		p = psql_lex(p, end, &t);
		if (t.type == TK_LP) {
			depth++;
		} else if (t.type == TK_RP) {
			if (--depth == 0)
				return p;
		}
	}
	return NULL;
}

static const char *const k_column_types[] = {
	"bool", "boolean", "long", "timestamp", "duration", "id",    "joinid", "argsetid",
	"int",  "uint",    "double", "float",   "string",   "bytes", "proto",  "any",
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

	while (base > 0 && is_blank(t[base - 1]))
		base--;
	/* Only the id types carry a "(table.column)". */
	if (paren && (macro || (base != 2 && base != 6)))
		return false;
	for (i = 0; i < count; i++)
		if (strlen(v[i]) == base && strncasecmp(v[i], t, base) == 0)
			return true;
	return false;
}

int psql_arg_list(const char *p, const char *end,
		  int (*fn)(void *ctx, const char *name, size_t name_len, const char *type,
			    size_t type_len),
		  void *ctx, char **err, struct psql_tok *bad)
{
	struct psql_tok name, type, t;
	const char *q, *type_end;
	int rc;

	q = psql_lex_sig(p, end, &t);
	if (t.type == TK_EOF)
		return 0;
	for (;;) {
		name = t;
		if (name.type != TK_ID && name.type != TK_QID)
			goto bad;
		q = psql_lex_sig(q, end, &type);
		if (type.type != TK_ID) {
			t = type;
			goto bad;
		}
		type_end = type.p + type.n;
		q = psql_lex_sig(q, end, &t);
		if (t.type == TK_LP) {
			const char *close = psql_close_paren(t.p, end);

			if (!close)
				goto bad;
			type_end = close;
			q = psql_lex_sig(close, end, &t);
		}
		/* A variadic argument: "name TYPE...". */
		if (t.type == TK_DOT) {
			struct psql_tok d2, d3;
			const char *r = psql_lex(q, end, &d2);

			r = psql_lex(r, end, &d3);
			if (d2.type != TK_DOT || d3.type != TK_DOT)
				goto bad;
			type_end = d3.p + d3.n;
			q = psql_lex_sig(r, end, &t);
		}
		rc = fn(ctx, name.p, name.n, type.p, (size_t)(type_end - type.p));
		if (rc)
			return rc;
		if (t.type == TK_EOF)
			return 0;
		if (t.type != TK_COMMA)
			goto bad;
		q = psql_lex_sig(q, end, &t);
	}
bad:
	if (t.type == TK_EOF) {
		/* The ')' closing the list. */
		t.type = TK_RP;
		t.p = end;
		t.n = 1;
	}
	if (bad)
		*bad = t;
	else
		*err = sqlite3_mprintf("syntax error near '%.*s'", (int)t.n, t.p);
	return -EINVAL;
}

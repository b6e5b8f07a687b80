/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agg_lex.h - splits one SQL statement into tokens for agg_parse.c:
 * identifiers, the keywords the native GROUP BY path cares about, numbers,
 * strings and operators. Anything it does not know (comments, parameters,
 * blobs, bracketed names) makes the statement "not ours" instead of an error:
 * SQLite then runs it as written.
 */
#ifndef PFC_TRACE_PROCESSOR_TP_AGG_LEX_H
#define PFC_TRACE_PROCESSOR_TP_AGG_LEX_H

#include <stdbool.h>
#include <stddef.h>

enum tok_kind {
	TOK_IDENT,  /* a bare name that is not one of the keywords below */
	TOK_QIDENT, /* "double-quoted" (only allowed as an alias) */
	TOK_KW,     /* a keyword; see enum kw */
	TOK_NUM,    /* an integer (digits only) */
	TOK_REAL,   /* any other number */
	TOK_STR,    /* 'string' */
	TOK_OP,     /* punctuation, 1 or 2 characters */
};

enum kw {
	KW_NONE, KW_SELECT, KW_FROM, KW_WHERE, KW_GROUP, KW_BY, KW_HAVING, KW_ORDER,
	KW_LIMIT, KW_OFFSET, KW_AS, KW_JOIN, KW_LEFT, KW_INNER, KW_OUTER, KW_USING, KW_ON,
	KW_AND, KW_OR, KW_NOT, KW_IS, KW_NULL, KW_CASE, KW_WHEN, KW_THEN, KW_ELSE, KW_END,
	KW_BETWEEN, KW_LIKE, KW_GLOB, KW_IN, KW_ASC, KW_DESC, KW_NULLS, KW_FIRST, KW_LAST,
	/* Keywords that always send the statement back to SQLite. */
	KW_OTHER,
};

struct tok {
	enum tok_kind kind;
	enum kw kw;
	const char *s;
	size_t len;
};

#define LEX_MAX_TOKENS 512

/*
 * lex_statement() - Tokens of [@sql, @end) into @toks (at most
 * LEX_MAX_TOKENS); a final ';' is dropped.
 * Return: the count, or -1 if the text holds anything the path skips.
 */
int lex_statement(const char *sql, const char *end, struct tok *toks);

/* True if @t is the operator @op. */
bool tok_is_op(const struct tok *t, const char *op);

/* Case-insensitive comparison of a token with a NUL-terminated name. */
bool tok_eq(const struct tok *t, const char *name);

#endif

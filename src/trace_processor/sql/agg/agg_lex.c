// SPDX-License-Identifier: Apache-2.0
/*
 * agg_lex.c - the tokenizer of the native GROUP BY path (agg_lex.h).
 * It only has to be right for the statements it accepts: whatever it does
 * not recognise returns -1 and SQLite answers the statement itself.
 */
#include "trace_processor/sql/agg/agg_lex.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

static const struct {
	const char *name;
	enum kw kw;
} k_keywords[] = {
	{"select", KW_SELECT}, {"from", KW_FROM},     {"where", KW_WHERE},
	{"group", KW_GROUP},   {"by", KW_BY},         {"having", KW_HAVING},
	{"order", KW_ORDER},   {"limit", KW_LIMIT},   {"offset", KW_OFFSET},
	{"as", KW_AS},         {"join", KW_JOIN},     {"left", KW_LEFT},
	{"inner", KW_INNER},   {"outer", KW_OUTER},   {"using", KW_USING},
	{"on", KW_ON},         {"and", KW_AND},       {"or", KW_OR},
	{"not", KW_NOT},       {"is", KW_IS},         {"null", KW_NULL},
	{"case", KW_CASE},     {"when", KW_WHEN},     {"then", KW_THEN},
	{"else", KW_ELSE},     {"end", KW_END},       {"between", KW_BETWEEN},
	{"like", KW_LIKE},     {"glob", KW_GLOB},     {"in", KW_IN},
	{"asc", KW_ASC},       {"desc", KW_DESC},     {"nulls", KW_NULLS},
	{"first", KW_FIRST},   {"last", KW_LAST},
	/* Constructs the path does not model: subqueries, set operations,
	 * windows, casts (their type names look like columns), collations,
	 * other join kinds, DISTINCT, and anything that modifies data. */
	{"distinct", KW_OTHER}, {"all", KW_OTHER},     {"exists", KW_OTHER},
	{"union", KW_OTHER},    {"intersect", KW_OTHER}, {"except", KW_OTHER},
	{"with", KW_OTHER},     {"over", KW_OTHER},    {"filter", KW_OTHER},
	{"window", KW_OTHER},   {"cast", KW_OTHER},    {"collate", KW_OTHER},
	{"cross", KW_OTHER},    {"natural", KW_OTHER}, {"right", KW_OTHER},
	{"full", KW_OTHER},     {"escape", KW_OTHER},  {"regexp", KW_OTHER},
	{"match", KW_OTHER},    {"values", KW_OTHER},  {"indexed", KW_OTHER},
	{"raise", KW_OTHER},    {"insert", KW_OTHER},  {"update", KW_OTHER},
	{"delete", KW_OTHER},   {"replace", KW_OTHER}, {"explain", KW_OTHER},
	{"current_time", KW_OTHER}, {"current_date", KW_OTHER},
	{"current_timestamp", KW_OTHER}, {"isnull", KW_OTHER}, {"notnull", KW_OTHER},
};

static const char *const k_ops2[] = {"<=", ">=", "!=", "<>", "==", "||"};

bool tok_is_op(const struct tok *t, const char *op)
{
	return t->kind == TOK_OP && t->len == strlen(op) && memcmp(t->s, op, t->len) == 0;
}

bool tok_eq(const struct tok *t, const char *name)
{
	return t->len == strlen(name) && strncasecmp(t->s, name, t->len) == 0;
}

static bool is_ident_start(char c)
{
	return isalpha((unsigned char)c) || c == '_';
}

static bool is_ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '$';
}

static enum kw keyword_of(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(k_keywords) / sizeof(k_keywords[0]); i++) {
		if (strlen(k_keywords[i].name) == len &&
		    strncasecmp(k_keywords[i].name, s, len) == 0)
			return k_keywords[i].kw;
	}
	return KW_NONE;
}

/* A number at @p: digits [. digits] [e[+-]digits]. Return: its end, or NULL. */
static const char *scan_number(const char *p, const char *end, bool *is_int)
{
	*is_int = true;
	while (p < end && isdigit((unsigned char)*p))
		p++;
	if (p < end && *p == '.') {
		*is_int = false;
		p++;
		while (p < end && isdigit((unsigned char)*p))
			p++;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		*is_int = false;
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (p == end || !isdigit((unsigned char)*p))
			return NULL;
		while (p < end && isdigit((unsigned char)*p))
			p++;
	}
	/* "12abc" or "0x1f": not a plain number. */
	if (p < end && is_ident_char(*p))
		return NULL;
	return p;
}

int lex_statement(const char *sql, const char *end, struct tok *toks)
{
	const char *p = sql;
	int n = 0;

	while (p < end) {
		struct tok *t;
		const char *start = p;
		size_t i;

		if (isspace((unsigned char)*p)) {
			p++;
			continue;
		}
		if (n == LEX_MAX_TOKENS)
			return -1;
		t = &toks[n];
		t->kw = KW_NONE;
		if (is_ident_start(*p)) {
			while (p < end && is_ident_char(*p))
				p++;
			t->kw = keyword_of(start, (size_t)(p - start));
			t->kind = t->kw == KW_NONE ? TOK_IDENT : TOK_KW;
			/* x'..' is a blob literal. */
			if (p < end && *p == '\'')
				return -1;
		} else if (isdigit((unsigned char)*p) ||
			   (*p == '.' && p + 1 < end && isdigit((unsigned char)p[1]))) {
			bool is_int;

			p = scan_number(p, end, &is_int);
			if (!p)
				return -1;
			t->kind = is_int ? TOK_NUM : TOK_REAL;
		} else if (*p == '\'' || *p == '"') {
			char q = *p++;

			for (;;) {
				if (p == end)
					return -1;
				if (*p == q) {
					if (p + 1 < end && p[1] == q) {
						p += 2;
						continue;
					}
					p++;
					break;
				}
				p++;
			}
			t->kind = q == '\'' ? TOK_STR : TOK_QIDENT;
		} else {
			/* Comments, parameters, brackets and backquotes are left to SQLite. */
			if (p + 1 < end && ((p[0] == '-' && p[1] == '-') || (p[0] == '/' && p[1] == '*')))
				return -1;
			if (!strchr("(),.;*+-/%=<>!|", *p))
				return -1;
			t->kind = TOK_OP;
			p++;
			for (i = 0; i < sizeof(k_ops2) / sizeof(k_ops2[0]); i++) {
				if (p < end && start[0] == k_ops2[i][0] && *p == k_ops2[i][1]) {
					p++;
					break;
				}
			}
			/* A lone '!' or '|' is not an operator. */
			if (p - start == 1 && (*start == '!' || *start == '|'))
				return -1;
		}
		t->s = start;
		t->len = (size_t)(p - start);
		n++;
	}
	/* One trailing ';' ends the statement; any other ';' is not ours. */
	if (n > 0 && tok_is_op(&toks[n - 1], ";"))
		n--;
	for (int i = 0; i < n; i++) {
		if (tok_is_op(&toks[i], ";"))
			return -1;
	}
	return n;
}

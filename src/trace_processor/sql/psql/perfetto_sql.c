// SPDX-License-Identifier: Apache-2.0
/*
 * perfetto_sql.c - PerfettoSQL on top of SQLite (psql.h: tp_psql_*): every
 * statement the engine prepares comes here first. The statement is split
 * off its text by tokens (psql_lex.c), its macro calls are expanded
 * (psql_macro.c) with the origin of every byte kept (psql_source.c), and
 * then it is one of:
 *   - INCLUDE PERFETTO MODULE: the modules psql_modules.c names run now,
 *     statement by statement through this same path (a module's own
 *     INCLUDEs first; each module once per connection; one that failed
 *     fails again with its reason; a cycle is an error);
 *   - CREATE [OR REPLACE] PERFETTO TABLE / VIEW / INDEX, DROP PERFETTO
 *     INDEX (psql_relation.c), FUNCTION (psql_function.c), MACRO: run
 *     now, with upstream's checks and messages;
 *   - anything else: SQLite's, through the native GROUP BY path.
 * A statement of ours hands back a statement with no columns, or one that
 * fails with the message when stepped, as SQLite's own errors do; the
 * error with its traceback, as Perfetto prints it, is tp_psql_error()'s.
 */
#include "trace_processor/sql/psql/psql.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "trace_processor/sql/agg/agg.h"
#include "trace_processor/sql/psql/psql_int.h"

/* How deep modules may include modules. */
#define INCLUDE_MAX_DEPTH 32
/* Longest module name, dots included. */
#define INCLUDE_MAX_NAME 256
/* Longest name of a query's text ("File \"stdin\"", "Module include ..."). */
#define DOC_NAME_MAX (INCLUDE_MAX_NAME + 32)

/* A text statements are prepared from: a query, or a module. */
struct doc {
	const char *name;
	const char *text;
	size_t len;
	bool header; /* a query's: its tracebacks start with the header */
	/* The line and column of text[at], so that the next statement's are
	 * counted from there, not from the start. */
	size_t at;
	unsigned line, col;
};

/* @out: the part of @d from @off on, of length @len, with its line and column. */
static void doc_sub(struct doc *d, size_t off, size_t len, struct psql_src *out)
{
	struct psql_src from;

	if (off < d->at || d->line == 0) {
		d->at = 0;
		d->line = 1;
		d->col = 1;
	}
	from.name = d->name;
	from.text = d->text + d->at;
	from.len = d->len - d->at;
	from.line = d->line;
	from.col = d->col;
	from.header = d->header;
	psql_src_sub(&from, off - d->at, len, out);
	d->at = off;
	d->line = out->line;
	d->col = out->col;
}

static int prepare_doc(struct tp_psql *p, struct doc *d, size_t off, sqlite3_stmt **out,
		       size_t *next, struct psql_err *e, struct psql_arena *a,
		       struct psql_layer *l);

/* ----------------------------------------------------------- statements ---- */

/* A statement that fails with @msg when stepped. */
static int error_stmt(struct sqlite3 *conn, const char *msg, struct sqlite3_stmt **out)
{
	int rc = sqlite3_prepare_v2(conn, "SELECT __tp_error(?1)", -1, out, NULL);

	if (rc == SQLITE_OK)
		sqlite3_bind_text(*out, 1, msg ? msg : "out of memory", -1, SQLITE_TRANSIENT);
	return rc;
}

/* A statement with no result columns that does nothing. */
static int done_stmt(struct sqlite3 *conn, struct sqlite3_stmt **out)
{
	return sqlite3_prepare_v2(conn, "DELETE FROM temp.__tp_psql_noop WHERE 0", -1, out, NULL);
}

/* ------------------------------------------------------------- parsing ---- */

/* Tokens of a statement, significant ones only, from @p to @end. */
struct scan {
	const char *p, *end;
	struct psql_tok t; /* the current one */
};

static void next(struct scan *s)
{
	s->p = psql_lex_sig(s->p, s->end, &s->t);
}

static bool accept(struct scan *s, const char *kw)
{
	if (!psql_tok_is(&s->t, kw))
		return false;
	next(s);
	return true;
}

/* A name: plain, or quoted with "" `` []. */
static bool is_name(const struct psql_tok *t)
{
	return t->type == TK_ID || t->type == TK_QID || t->type == TK_STRING;
}

static int syntax_error(struct psql_err *e, const struct psql_layer *l, const struct psql_tok *t)
{
	return psql_err_syntax(e, l, t);
}

/* ---------------------------------------------------------------- INCLUDE ---- */

struct include_ctx {
	struct tp_psql *p;
	const struct psql_src *stmt; /* the INCLUDE, for the tracebacks */
	int depth;
	struct psql_err *e;
};

/* Runs every statement of module @m. */
static int run_module(struct tp_psql *p, struct psql_module *m, int depth, struct psql_err *e)
{
	char name[DOC_NAME_MAX];
	struct doc d = {.name = name, .text = m->sql, .len = strlen(m->sql)};
	size_t off = 0, next_off;
	int rc = 0, saved = p->include_depth;

	snprintf(name, sizeof(name), "Module include \"%s\"", m->name);
	p->include_depth = depth + 1;
	while (off < d.len) {
		struct psql_arena a = {0};
		struct psql_layer l = {0};
		sqlite3_stmt *st = NULL;

		rc = prepare_doc(p, &d, off, &st, &next_off, e, &a, &l);
		if (rc == 0 && st) {
			int src = sqlite3_step(st);

			if (src == SQLITE_ROW && sqlite3_column_count(st) > 0 &&
			    !(sqlite3_column_count(st) == 1 &&
			      strcmp(sqlite3_column_name(st, 0), "suppress_query_output") == 0)) {
				psql_err_msg(e, sqlite3_mprintf("INCLUDE: Included module returning "
								"values."));
				rc = -EINVAL;
			}
			while (src == SQLITE_ROW)
				src = sqlite3_step(st);
			if (rc == 0 && src != SQLITE_DONE) {
				psql_err_msg(e, sqlite3_mprintf("%s", sqlite3_errmsg(p->conn)));
				psql_err_wrap(e, &l);
				rc = src == SQLITE_NOMEM ? -ENOMEM : -EINVAL;
			}
		}
		sqlite3_finalize(st);
		psql_layer_fini(&l);
		psql_arena_free(&a);
		if (rc < 0)
			break;
		if (next_off <= off)
			break;
		off = next_off;
	}
	p->include_depth = saved;
	return rc < 0 ? rc : 0;
}

static int include_one(void *ctx, struct psql_module *m)
{
	struct include_ctx *c = ctx;
	int rc;

	switch (m->state) {
	case PSQL_MOD_DONE:
		return 0;
	case PSQL_MOD_RUNNING:
		psql_err_msg(c->e, sqlite3_mprintf("INCLUDE: cycle detected \xe2\x80\x94 module '%s' "
						   "is already mid-import in this execution.",
						   m->name));
		psql_err_under(c->e, c->stmt, 0);
		return -EINVAL;
	case PSQL_MOD_POISONED:
		psql_err_msg(c->e, sqlite3_mprintf("INCLUDE: module '%s' poisoned by earlier "
						   "failure: %s",
						   m->name, m->poison ? m->poison : ""));
		psql_err_under(c->e, c->stmt, 0);
		return -EINVAL;
	case PSQL_MOD_NEW:
		break;
	}
	if (c->depth > INCLUDE_MAX_DEPTH) {
		psql_err_msg(c->e, sqlite3_mprintf("INCLUDE: modules nested too deep at '%s'",
						   m->name));
		psql_err_under(c->e, c->stmt, 0);
		return -EINVAL;
	}
	m->state = PSQL_MOD_RUNNING;
	rc = run_module(c->p, m, c->depth, c->e);
	if (rc < 0) {
		m->state = PSQL_MOD_POISONED;
		free(m->poison);
		m->poison = c->e->msg ? strdup(c->e->msg) : NULL;
		psql_err_under(c->e, c->stmt, 0);
		return rc;
	}
	m->state = PSQL_MOD_DONE;
	return 0;
}

/* Includes module @name (or every one a wildcard names) for statement @stmt. */
static int include_name(struct tp_psql *p, const char *name, const struct psql_src *stmt,
			int depth, struct psql_err *e)
{
	struct include_ctx c = {p, stmt, depth, e};
	char *err = NULL;
	int rc = psql_modules_match(p->modules, name, include_one, &c, &err);

	if (err)
		psql_err_msg(e, err);
	return rc;
}

/* INCLUDE PERFETTO MODULE name: @s is past MODULE. */
static int include_stmt(struct tp_psql *p, const struct psql_layer *l, struct scan *s,
			struct psql_err *e)
{
	char name[INCLUDE_MAX_NAME];
	const char *start = s->t.p, *end = start;
	const struct psql_org *o;
	struct psql_src src;
	size_t in;

	for (;;) {
		if (s->t.type != TK_ID && !(s->t.type == TK_OP && s->t.n == 1 && *s->t.p == '*'))
			return syntax_error(e, l, &s->t);
		end = s->t.p + s->t.n;
		next(s);
		if (s->t.type != TK_DOT)
			break;
		next(s);
	}
	if (s->t.type != TK_EOF)
		return syntax_error(e, l, &s->t);
	if ((size_t)(end - start) >= sizeof(name)) {
		psql_err_msg(e, sqlite3_mprintf("INCLUDE: module name too long"));
		return -EINVAL;
	}
	/* The name without blanks or comments between its parts. */
	{
		struct scan n = {start, end, {0}};
		size_t k = 0;

		for (next(&n); n.t.type != TK_EOF; next(&n)) {
			memcpy(name + k, n.t.p, n.t.n);
			k += n.t.n;
		}
		name[k] = '\0';
	}
	o = psql_layer_org(l, 0, &in);
	if (!o) {
		psql_err_msg(e, NULL);
		return -ENOMEM;
	}
	while (o->up)
		o = o->up;
	src = *o->src;
	return include_name(p, name, &src, p->include_depth, e);
}

/* ------------------------------------------------------------ CREATE ... ---- */

/* CREATE [OR REPLACE] PERFETTO TABLE|VIEW name [USING impl] [(schema)] AS select. */
static int relation_stmt(struct tp_psql *p, const struct psql_layer *l, struct scan *s,
			 bool table, bool replace, struct psql_err *e)
{
	struct psql_rel r = {.table = table, .replace = replace};

	if (!is_name(&s->t))
		return syntax_error(e, l, &s->t);
	r.name = s->t.p;
	r.name_len = s->t.n;
	/* A quoted name is the name. */
	if (s->t.type != TK_ID && s->t.n >= 2) {
		r.name++;
		r.name_len -= 2;
	}
	next(s);
	if (table && accept(s, "USING")) {
		if (s->t.type != TK_ID)
			return syntax_error(e, l, &s->t);
		if (!(s->t.n == 9 && strncasecmp(s->t.p, "dataframe", 9) == 0)) {
			psql_err_msg(e, sqlite3_mprintf("Invalid table implementation '%.*s'",
							(int)s->t.n, s->t.p));
			return -EINVAL;
		}
		next(s);
	}
	if (s->t.type == TK_LP) {
		const char *close = psql_close_paren(s->t.p, s->end);

		if (!close) {
			struct psql_tok eof = {TK_EOF, s->end, 0};

			return syntax_error(e, l, &eof);
		}
		r.schema = s->t.p + 1;
		r.schema_end = close - 1;
		s->p = close;
		next(s);
	}
	if (!accept(s, "AS"))
		return syntax_error(e, l, &s->t);
	if (s->t.type == TK_EOF)
		return syntax_error(e, l, &s->t);
	r.sel_start = (size_t)(s->t.p - l->text);
	r.sel_end = l->len;
	while (r.sel_end > r.sel_start && (l->text[r.sel_end - 1] == ' ' ||
					   (l->text[r.sel_end - 1] >= '\t' &&
					    l->text[r.sel_end - 1] <= '\r')))
		r.sel_end--;
	return psql_create_relation(p, l, &r, e);
}

/* [CREATE [OR REPLACE] | DROP] PERFETTO INDEX name ON table[(cols)]. */
static int index_stmt(struct tp_psql *p, const struct psql_layer *l, struct scan *s, bool drop,
		      bool replace, struct psql_err *e)
{
	struct psql_index ix = {.drop = drop, .replace = replace};

	if (!is_name(&s->t))
		return syntax_error(e, l, &s->t);
	ix.name = s->t.p;
	ix.name_len = s->t.n;
	next(s);
	if (!accept(s, "ON"))
		return syntax_error(e, l, &s->t);
	if (!is_name(&s->t))
		return syntax_error(e, l, &s->t);
	ix.table = s->t.p;
	ix.table_len = s->t.n;
	next(s);
	if (!drop) {
		const char *close;

		if (s->t.type != TK_LP)
			return syntax_error(e, l, &s->t);
		close = psql_close_paren(s->t.p, s->end);
		if (!close) {
			struct psql_tok eof = {TK_EOF, s->end, 0};

			return syntax_error(e, l, &eof);
		}
		ix.cols = s->t.p + 1;
		ix.cols_end = close - 1;
		s->p = close;
		next(s);
	}
	if (s->t.type != TK_EOF)
		return syntax_error(e, l, &s->t);
	return psql_index_stmt(p, l, &ix, e);
}

/* CREATE [OR REPLACE] PERFETTO MACRO name(args) RETURNS Type AS body. */
static int macro_stmt(struct tp_psql *p, const struct psql_layer *l, struct scan *s, bool replace,
		      struct psql_err *e)
{
	struct psql_macro_def def = {.replace = replace};
	const struct psql_org *o;
	const char *close, *err_at = NULL, *body_end;
	size_t in, err_len = 0;
	char *err = NULL;
	int rc;

	if (s->t.type != TK_ID)
		return syntax_error(e, l, &s->t);
	def.name = s->t.p;
	def.name_len = s->t.n;
	next(s);
	if (s->t.type != TK_LP)
		return syntax_error(e, l, &s->t);
	close = psql_close_paren(s->t.p, s->end);
	if (!close) {
		struct psql_tok eof = {TK_EOF, s->end, 0};

		return syntax_error(e, l, &eof);
	}
	def.args = s->t.p + 1;
	def.args_end = close - 1;
	s->p = close;
	next(s);
	if (!accept(s, "RETURNS"))
		return syntax_error(e, l, &s->t);
	if (s->t.type != TK_ID)
		return syntax_error(e, l, &s->t);
	def.ret = s->t.p;
	def.ret_len = s->t.n;
	next(s);
	if (!accept(s, "AS"))
		return syntax_error(e, l, &s->t);
	if (s->t.type == TK_EOF)
		return syntax_error(e, l, &s->t);
	body_end = s->end;
	while (body_end > s->t.p &&
	       (body_end[-1] == ' ' || (body_end[-1] >= '\t' && body_end[-1] <= '\r')))
		body_end--;
	/* The body as written: a macro's statement is never expanded. */
	o = psql_layer_org(l, (size_t)(s->t.p - l->text), &in);
	if (!o) {
		psql_err_msg(e, NULL);
		return -ENOMEM;
	}
	psql_src_sub(o->src, in, (size_t)(body_end - s->t.p), &def.body);
	rc = psql_macro_define(p->macros, &def, &err, &err_at, &err_len);
	if (rc < 0 && !err && err_at) {
		struct psql_tok bad = {TK_OP, err_at, err_len};

		return syntax_error(e, l, &bad);
	}
	if (rc < 0 && err && err_at) {
		struct psql_src at;

		o = psql_layer_org(l, (size_t)(err_at - l->text), &in);
		if (o) {
			psql_src_sub(o->src, in, err_len, &at);
			psql_err_frame(e, &at, 0, err);
			sqlite3_free(err);
			return rc;
		}
	}
	if (rc < 0)
		psql_err_msg(e, err);
	return rc;
}

/* CREATE [OR REPLACE] PERFETTO FUNCTION ...: @s is past FUNCTION. */
static int function_stmt(struct tp_psql *p, const struct psql_layer *l, struct scan *s,
			 bool replace, struct psql_err *e)
{
	struct psql_fn_def def = {.replace = replace};
	char *err = NULL;
	bool wrap = false;
	int rc;

	def.text = s->t.p;
	def.end = s->end;
	def.layer = l;
	rc = psql_function_define(p->functions, &def, &err, &wrap, e);
	if (rc < 0 && err) {
		psql_err_msg(e, err);
		if (wrap)
			psql_err_wrap(e, l);
	}
	return rc;
}

/* ------------------------------------------------------------- dispatch ---- */

/* The kinds of PerfettoSQL statements. */
enum kind { K_SQLITE, K_INCLUDE, K_TABLE, K_VIEW, K_FUNCTION, K_MACRO, K_INDEX, K_DROP_INDEX };

/*
 * What statement layer @l is, @s left past its kind words. A statement
 * that starts like ours but is not is a syntax error at the token that
 * makes it so (K_SQLITE with *@bad set).
 */
static enum kind classify(struct scan *s, bool *replace, const struct psql_tok **bad)
{
	static const struct {
		const char *word;
		enum kind kind;
	} k_kinds[] = {
		{"TABLE", K_TABLE}, {"VIEW", K_VIEW},   {"FUNCTION", K_FUNCTION},
		{"MACRO", K_MACRO}, {"INDEX", K_INDEX},
	};
	size_t i;

	*replace = false;
	*bad = NULL;
	if (accept(s, "INCLUDE")) {
		if (!accept(s, "PERFETTO") || !accept(s, "MODULE")) {
			*bad = &s->t;
			return K_SQLITE;
		}
		return K_INCLUDE;
	}
	if (psql_tok_is(&s->t, "DROP")) {
		struct scan save = *s;

		next(s);
		if (!accept(s, "PERFETTO")) {
			*s = save;
			return K_SQLITE;
		}
		if (!accept(s, "INDEX"))
			*bad = &s->t;
		return *bad ? K_SQLITE : K_DROP_INDEX;
	}
	if (psql_tok_is(&s->t, "CREATE")) {
		struct scan save = *s;

		next(s);
		if (accept(s, "OR")) {
			if (!accept(s, "REPLACE")) {
				*s = save;
				return K_SQLITE;
			}
			*replace = true;
		}
		if (!accept(s, "PERFETTO")) {
			*s = save;
			*replace = false;
			return K_SQLITE;
		}
		for (i = 0; i < sizeof(k_kinds) / sizeof(k_kinds[0]); i++)
			if (accept(s, k_kinds[i].word))
				return k_kinds[i].kind;
		*bad = &s->t;
	}
	return K_SQLITE;
}

/* SQLite's prepare of @l, then the native path. */
static int prepare_sqlite(struct tp_psql *p, const struct doc *d, size_t from, size_t stmt_off,
			  const struct psql_layer *l, sqlite3_stmt **out, struct psql_err *e)
{
	const char *tail = NULL;
	int rc = sqlite3_prepare_v2(p->conn, l->text, (int)l->len, out, &tail);
	const char *msg;
	int off;

	if (rc == SQLITE_OK) {
		/* A new index on a sorted column: made again, with its plan. */
		if (*out && psql_sorted_before(p, sqlite3_sql(*out))) {
			sqlite3_finalize(*out);
			*out = NULL;
			rc = sqlite3_prepare_v2(p->conn, l->text, (int)l->len, out, &tail);
		}
	}
	if (rc == SQLITE_OK) {
		if (*out && p->agg)
			tp_agg_prepare(p->agg, l->text, l->text + l->len, out);
		if (!*out)
			return 1;
		return 0;
	}
	if (rc == SQLITE_NOMEM) {
		psql_err_msg(e, NULL);
		return -ENOMEM;
	}
	msg = sqlite3_errmsg(p->conn);
	off = sqlite3_error_offset(p->conn);
	e->sqlite = true;
	if (strcmp(msg, "incomplete input") == 0 || strncmp(msg, "near \"", 6) == 0) {
		/* Perfetto's parser finds these: its words, in the query's text. */
		struct psql_src rest = {.name = d->name, .text = d->text, .len = d->len,
					.line = 1, .col = 1, .header = d->header};
		size_t at = d->len;
		char *m;

		if (strncmp(msg, "near \"", 6) == 0) {
			const char *q = strstr(msg + 6, "\": syntax error");

			m = sqlite3_mprintf("syntax error near '%.*s'",
					    (int)(q ? q - msg - 6 : (long)strlen(msg + 6)), msg + 6);
			if (!l->expanded && off >= 0)
				at = stmt_off + (size_t)off;
		} else {
			m = sqlite3_mprintf("incomplete SQL statement");
		}
		psql_src_sub(&rest, from, d->len - from, &rest);
		if (m)
			psql_err_frame(e, &rest, at - from, m);
		else
			psql_err_msg(e, NULL);
		sqlite3_free(m);
		e->sqlite = true;
		return -EINVAL;
	}
	psql_err_at(e, l, off < 0 ? 0 : (size_t)off, 0, l->len, msg);
	e->sqlite = true;
	return -EINVAL;
}

/* True if a statement starting at @p creates a trigger. */
static bool is_trigger(const char *p, const char *end)
{
	struct psql_tok t;

	p = psql_lex_sig(p, end, &t);
	if (!psql_tok_is(&t, "CREATE"))
		return false;
	p = psql_lex_sig(p, end, &t);
	if (psql_tok_is(&t, "TEMP") || psql_tok_is(&t, "TEMPORARY"))
		psql_lex_sig(p, end, &t);
	return psql_tok_is(&t, "TRIGGER");
}

/* True if [@start, @end) is a whole statement to SQLite (a trigger's END came). */
static bool trigger_done(const char *start, const char *end)
{
	char *copy = strndup(start, (size_t)(end - start));
	bool done = !copy || sqlite3_complete(copy);

	free(copy);
	return done;
}

/*
 * The statement of @d starting at @off (after the previous one's ';'):
 * *@out is the statement to step (NULL: only blanks and comments were
 * left), *@next where the next one starts. @a and @l receive the
 * statement's text and origins (the caller frees them).
 * Return: 0, or -EINVAL / -ENOMEM with @e set.
 */
static int prepare_doc(struct tp_psql *p, struct doc *d, size_t off, sqlite3_stmt **out,
		       size_t *next_off, struct psql_err *e, struct psql_arena *a,
		       struct psql_layer *l)
{
	const char *text = d->text, *end = d->text + d->len, *start = NULL, *last = NULL, *q;
	struct psql_src *root = psql_alloc(a, sizeof(*root));
	struct psql_org *org = psql_alloc(a, sizeof(*org));
	struct psql_layer raw = {0};
	const struct psql_tok *bad;
	struct psql_tok t;
	struct scan s;
	enum kind k;
	bool replace, trigger = false;
	char *err = NULL;
	size_t err_off;
	int rc = 0;

	*out = NULL;
	if (!root || !org) {
		psql_err_msg(e, NULL);
		return -ENOMEM;
	}
	/* The statement: its first token to its last before ';' (a trigger's
	 * body holds ';' of its own: its END comes first). */
	for (q = text + off;;) {
		const char *r = psql_lex(q, end, &t);

		if (t.type == TK_EOF)
			break;
		if (t.type == TK_SEMI && start && (!trigger || trigger_done(start, r)))
			break;
		if (t.type != TK_SPACE && t.type != TK_COMMENT && t.type != TK_SEMI) {
			if (!start) {
				start = t.p;
				trigger = is_trigger(start, end);
			}
			last = r;
		}
		q = r;
	}
	*next_off = t.type == TK_SEMI ? (size_t)(t.p + 1 - text) : d->len;
	if (!start)
		return 0;
	root->name = d->name;
	root->text = start;
	root->len = (size_t)(last - start);
	root->header = d->header;
	{
		struct psql_src *rest = psql_alloc(a, sizeof(*rest));

		/* Where the statement's text starts, for a parse error (from the
		 * previous statement's end), then the statement itself. */
		if (rest) {
			doc_sub(d, off, d->len - off, rest);
			raw.rest = rest;
			raw.rest_at = (size_t)(start - text) - off;
		}
		doc_sub(d, (size_t)(start - text), root->len, root);
	}
	org->src = root;
	org->off = 0;
	org->len = 0;
	org->up = NULL;
	psql_layer_add(&raw, start, root->len, org);
	if (raw.oom) {
		psql_layer_fini(&raw);
		psql_err_msg(e, NULL);
		return -ENOMEM;
	}

	s.p = raw.text;
	s.end = raw.text + raw.len;
	next(&s);
	k = classify(&s, &replace, &bad);
	if (k == K_MACRO) {
		/* A macro's body is expanded where it is used, not here. */
		*l = raw;
		rc = macro_stmt(p, l, &s, replace, e);
		goto done;
	}
	if (psql_has_macro_call(raw.text, raw.text + raw.len)) {
		rc = psql_macro_expand(p->macros, a, &raw, l, &err, &err_off);
		l->rest = raw.rest;
		l->rest_at = raw.rest_at;
		psql_layer_fini(&raw);
		if (rc < 0) {
			if (err) {
				struct psql_src rest = {.name = d->name, .text = text,
							.len = d->len, .line = 1, .col = 1,
							.header = d->header};
				size_t at = err_off == SIZE_MAX
						    ? d->len
						    : (size_t)(start - text) + err_off;

				psql_src_sub(&rest, off, d->len - off, &rest);
				psql_err_frame(e, &rest, at - off, err);
				sqlite3_free(err);
			} else {
				psql_err_msg(e, NULL);
			}
			return rc;
		}
		s.p = l->text;
		s.end = l->text + l->len;
		next(&s);
		k = classify(&s, &replace, &bad);
	} else {
		*l = raw;
	}
	if (bad) {
		rc = syntax_error(e, l, bad);
		goto done;
	}
	switch (k) {
	case K_SQLITE:
		rc = prepare_sqlite(p, d, off, (size_t)(start - text), l, out, e);
		if (rc == 1) {
			/* Only comments after all: nothing to run. */
			rc = 0;
		}
		return rc;
	case K_INCLUDE:
		rc = include_stmt(p, l, &s, e);
		break;
	case K_TABLE:
	case K_VIEW:
		rc = relation_stmt(p, l, &s, k == K_TABLE, replace, e);
		break;
	case K_FUNCTION:
		rc = function_stmt(p, l, &s, replace, e);
		break;
	case K_INDEX:
	case K_DROP_INDEX:
		rc = index_stmt(p, l, &s, k == K_DROP_INDEX, replace, e);
		break;
	case K_MACRO:
		break;
	}
done:
	if (rc == 0 && done_stmt(p->conn, out) != SQLITE_OK) {
		psql_err_msg(e, sqlite3_mprintf("%s", sqlite3_errmsg(p->conn)));
		rc = -EINVAL;
	}
	if (rc < 0 && !e->msg && !e->oom)
		psql_err_msg(e, sqlite3_mprintf("PerfettoSQL statement failed"));
	return rc;
}

/* ------------------------------------------------------------ interface ---- */

/* The line after the one at @p (or the end). */
static const char *next_line(const char *p)
{
	const char *nl = strchr(p, '\n');

	return nl ? nl + 1 : p + strlen(p);
}

/* True if the line at @p is a caret line: blanks, then '^' alone. */
static bool caret_line(const char *p)
{
	while (*p == ' ')
		p++;
	return p[0] == '^' && (p[1] == '\n' || p[1] == '\0');
}

/* @msg without the traceback psql_traceback() put before it. */
static const char *strip_traceback(const char *msg)
{
	static const char k_expanded[] = "Fully expanded statement\n";
	static const char k_header[] = "Traceback (most recent call last):\n";
	const char *p = msg;

	if (strncmp(p, k_expanded, sizeof(k_expanded) - 1) == 0)
		p = next_line(next_line(next_line(p)));
	if (strncmp(p, k_header, sizeof(k_header) - 1) == 0)
		p += sizeof(k_header) - 1;
	/* Frames: "  NAME line L col C", "    context", "    ^". */
	while (p[0] == ' ' && p[1] == ' ' && p[2] != ' ') {
		const char *ctx = next_line(p), *caret = next_line(ctx);

		if (!caret_line(caret))
			break;
		p = next_line(caret);
	}
	return p;
}

int tp_psql_prepare_in(struct tp_psql *p, const char *doc, const char *sql,
		       struct sqlite3_stmt **out, const char **out_tail)
{
	struct doc d = {.name = "File \"stdin\"", .text = doc, .len = strlen(doc), .header = true};
	struct psql_err e = {0};
	size_t next_off = 0, off = (size_t)(sql - doc);
	const char *msg;
	int rc;

	/* The same query as last time: count lines on from its last statement. */
	if (sql > doc && p->doc_text == doc && p->doc_at <= (size_t)(sql - doc)) {
		d.at = p->doc_at;
		d.line = p->doc_line;
		d.col = p->doc_col;
	}
	*out = NULL;
	if (p->include_depth == 0) {
		psql_layer_fini(&p->last_layer);
		psql_arena_free(&p->last_arena);
		free(p->last_error);
		p->last_error = NULL;
		p->has_last = false;
		rc = prepare_doc(p, &d, off, out, &next_off, &e, &p->last_arena, &p->last_layer);
		p->has_last = *out != NULL;
	} else {
		/* A statement run while another runs (IMPORT()): keep the outer's. */
		struct psql_arena a = {0};
		struct psql_layer l = {0};

		rc = prepare_doc(p, &d, off, out, &next_off, &e, &a, &l);
		psql_layer_fini(&l);
		psql_arena_free(&a);
	}
	*out_tail = doc + next_off;
	p->doc_text = doc;
	p->doc_at = d.at;
	p->doc_line = d.line;
	p->doc_col = d.col;
	if (rc == 0)
		return SQLITE_OK;
	if (e.oom && !e.msg)
		return SQLITE_NOMEM;
	msg = e.msg ? e.msg : "PerfettoSQL statement failed";
	if (p->include_depth == 0) {
		p->last_error = strdup(msg);
		p->has_last = false;
	}
	if (e.sqlite) {
		/* SQLite's own failure: its code, and its words in sqlite3_errmsg(). */
		psql_err_free(&e);
		return SQLITE_ERROR;
	}
	/* The message alone when the statement runs; the traceback is
	 * tp_psql_error()'s. */
	sqlite3_finalize(*out);
	*out = NULL;
	rc = error_stmt(p->conn, e.tb ? strip_traceback(msg) : msg, out);
	psql_err_free(&e);
	return rc;
}

int tp_psql_prepare(struct tp_psql *p, const char *sql, struct sqlite3_stmt **out,
		    const char **out_tail)
{
	return tp_psql_prepare_in(p, sql, sql, out, out_tail);
}

char *tp_psql_error(struct tp_psql *p, const char *sqlite_msg)
{
	sqlite3_str *s;

	if (p->last_error)
		return sqlite3_mprintf("%s", p->last_error);
	if (!p->has_last || !sqlite_msg)
		return sqlite3_mprintf("%s", sqlite_msg ? sqlite_msg : "");
	/* Upstream: an error of the statement as a whole points at its start. */
	if (strstr(sqlite_msg, "Traceback (most recent call last):"))
		return sqlite3_mprintf("%s", sqlite_msg);
	s = sqlite3_str_new(NULL);
	psql_traceback(s, &p->last_layer, 0, 0, p->last_layer.len);
	sqlite3_str_appendall(s, sqlite_msg);
	return sqlite3_str_finish(s);
}

int psql_include(struct tp_psql *p, const char *name, const struct psql_src *stmt,
		 struct psql_err *e)
{
	return include_name(p, name, stmt, p->include_depth, e);
}

int psql_exec_internal(struct tp_psql *p, const char *sql, char **err)
{
	return psql_exec_named(p, "Trace Processor Internal", sql, err);
}

int psql_exec_named(struct tp_psql *p, const char *name, const char *sql, char **err)
{
	struct doc d = {.name = name, .text = sql, .len = strlen(sql)};
	size_t off = 0, next_off;
	int rc = 0;

	*err = NULL;
	while (off < d.len) {
		struct psql_arena a = {0};
		struct psql_layer l = {0};
		struct psql_err e = {0};
		sqlite3_stmt *st = NULL;

		rc = prepare_doc(p, &d, off, &st, &next_off, &e, &a, &l);
		if (rc == 0 && st) {
			int src;

			while ((src = sqlite3_step(st)) == SQLITE_ROW)
				;
			if (src != SQLITE_DONE) {
				psql_err_msg(&e, sqlite3_mprintf("%s", sqlite3_errmsg(p->conn)));
				psql_err_wrap(&e, &l);
				rc = src == SQLITE_NOMEM ? -ENOMEM : -EINVAL;
			}
		}
		sqlite3_finalize(st);
		psql_layer_fini(&l);
		psql_arena_free(&a);
		if (rc < 0) {
			*err = e.msg;
			return rc;
		}
		psql_err_free(&e);
		if (next_off <= off)
			break;
		off = next_off;
	}
	return 0;
}

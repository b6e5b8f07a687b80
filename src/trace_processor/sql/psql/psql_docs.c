// SPDX-License-Identifier: Apache-2.0
/*
 * psql_docs.c - what the modules document (psql_int.h): each module's
 * tables, views, functions and macros with the comments written before
 * them, read as Perfetto's stdlib doc parser reads them, served as the
 * table __intrinsic_stdlib_objects (package, module, name,
 * qualified_name, object_type, exposed, short_description, summary,
 * description, return_type, return_description, args, cols; args and cols
 * as JSON arrays of {name, type, description}); and each module's one-line
 * summary (its header comment), for --help and the docs
 * (tp_psql_modules_list()).
 *
 * Comments: an object's description is the last block of "--" lines just
 * before its CREATE (a blank line ends a block, so a license header above
 * is not part of it); an argument's or column's, the "--" lines just
 * before its name; a return value's, those before the type after RETURNS
 * (or before RETURNS). Names starting with '_' are not exposed.
 */
#include "trace_processor/sql/psql/psql.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "trace_processor/sql/psql/psql_int.h"

/* Bytes of a description kept as its short form (upstream's). */
#define SHORT_DESCRIPTION 160

enum {
	COL_PACKAGE,
	COL_MODULE,
	COL_NAME,
	COL_QUALIFIED_NAME,
	COL_OBJECT_TYPE,
	COL_EXPOSED,
	COL_SHORT_DESCRIPTION,
	COL_SUMMARY,
	COL_DESCRIPTION,
	COL_RETURN_TYPE,
	COL_RETURN_DESCRIPTION,
	COL_ARGS,
	COL_COLS,
	N_COLS,
};

/* One row: its text cells (NULL-free; sqlite3_malloc'd) and exposed. */
struct row {
	char *cell[N_COLS];
	int exposed;
};

struct rows {
	struct row *v;
	size_t n, cap;
};

static void rows_fini(struct rows *r)
{
	size_t i, c;

	for (i = 0; i < r->n; i++)
		for (c = 0; c < N_COLS; c++)
			sqlite3_free(r->v[i].cell[c]);
	free(r->v);
	memset(r, 0, sizeof(*r));
}

/* -------------------------------------------------------------- scanning ---- */

/* A significant token of a statement and the comments before it. */
struct stok {
	struct psql_tok t;
	const char *lead;     /* where the text before it starts (after the previous token) */
};

struct stmt {
	struct stok *v;
	size_t n, cap;
};

/* The line comments in [@p, @end), joined as Perfetto joins them; only the
 * last block (a blank line between comments ends one) when @last_block. */
static void join_comments(sqlite3_str *out, const char *p, const char *end, bool last_block)
{
	struct psql_tok t;
	const char *start = p, *q, *prev_end = NULL;
	bool first = true;

	if (last_block) {
		/* Find where the last block starts. */
		for (q = p; (q = psql_lex(q, end, &t)), t.type != TK_EOF;) {
			if (t.type == TK_COMMENT && t.p[0] == '/') {
				start = q;
				prev_end = NULL;
			} else if (t.type == TK_COMMENT) {
				if (prev_end) {
					const char *c;
					int nl = 0;

					for (c = prev_end; c < t.p; c++)
						nl += *c == '\n';
					if (nl >= 2)
						start = t.p;
				}
				prev_end = t.p + t.n;
			}
		}
	}
	for (q = start; (q = psql_lex(q, end, &t)), t.type != TK_EOF;) {
		const char *s, *e;

		if (t.type != TK_COMMENT || t.p[0] != '-')
			continue;
		s = t.p + 2;
		e = t.p + t.n;
		while (s < e && (*s == ' ' || (*s >= '\t' && *s <= '\r')))
			s++;
		while (e > s && (e[-1] == ' ' || (e[-1] >= '\t' && e[-1] <= '\r')))
			e--;
		if (s == e)
			continue;
		if (!first)
			sqlite3_str_appendchar(out, 1, ' ');
		sqlite3_str_append(out, s, (int)(e - s));
		first = false;
	}
}

static char *comments(const struct stok *tok, bool last_block)
{
	sqlite3_str *s = sqlite3_str_new(NULL);
	char *r;

	join_comments(s, tok->lead, tok->t.p, last_block);
	r = sqlite3_str_finish(s);
	return r ? r : sqlite3_mprintf("%s", "");
}

/* -------------------------------------------------------------- objects ---- */

/* An argument or column: its name, type as written, description. */
struct entry {
	char *name, *type, *desc;
};

struct entries {
	struct entry v[PSQL_FN_MAX_ARGS];
	size_t n;
};

static void entries_fini(struct entries *e)
{
	size_t i;

	for (i = 0; i < e->n; i++) {
		sqlite3_free(e->v[i].name);
		sqlite3_free(e->v[i].type);
		sqlite3_free(e->v[i].desc);
	}
	e->n = 0;
}

static void json_string(sqlite3_str *s, const char *v)
{
	sqlite3_str_appendchar(s, 1, '"');
	for (; *v; v++) {
		unsigned char c = (unsigned char)*v;

		if (c == '"' || c == '\\')
			sqlite3_str_appendf(s, "\\%c", c);
		else if (c == '\n')
			sqlite3_str_appendall(s, "\\n");
		else if (c == '\t')
			sqlite3_str_appendall(s, "\\t");
		else if (c == '\r')
			sqlite3_str_appendall(s, "\\r");
		else if (c < 0x20)
			sqlite3_str_appendf(s, "\\u%04x", c);
		else
			sqlite3_str_appendchar(s, 1, (char)c);
	}
	sqlite3_str_appendchar(s, 1, '"');
}

static char *entries_json(const struct entries *e)
{
	sqlite3_str *s = sqlite3_str_new(NULL);
	size_t i;

	sqlite3_str_appendchar(s, 1, '[');
	for (i = 0; e && i < e->n; i++) {
		sqlite3_str_appendall(s, i ? ",{\"name\":" : "{\"name\":");
		json_string(s, e->v[i].name);
		sqlite3_str_appendall(s, ",\"type\":");
		json_string(s, e->v[i].type);
		sqlite3_str_appendall(s, ",\"description\":");
		json_string(s, e->v[i].desc);
		sqlite3_str_appendchar(s, 1, '}');
	}
	sqlite3_str_appendchar(s, 1, ']');
	return sqlite3_str_finish(s);
}

/* Parses "name TYPE[(a.b)][...], ..." from token @i (after '('): *@i ends past ')'. */
static void parse_entries(const struct stmt *st, size_t *i, bool macro, struct entries *out)
{
	size_t k = *i;

	while (k < st->n && st->v[k].t.type != TK_RP) {
		const struct stok *name = &st->v[k];
		const char *type_start, *type_end;
		struct entry *e;

		if (name->t.type == TK_COMMA) {
			k++;
			continue;
		}
		if (k + 1 >= st->n || out->n == PSQL_FN_MAX_ARGS)
			break;
		type_start = st->v[k + 1].t.p;
		type_end = type_start + st->v[k + 1].t.n;
		k += 2;
		/* JOINID(table.col): the part in parentheses is the type's. */
		if (!macro && k < st->n && st->v[k].t.type == TK_LP) {
			int depth = 0;

			for (; k < st->n; k++) {
				if (st->v[k].t.type == TK_LP)
					depth++;
				else if (st->v[k].t.type == TK_RP && --depth == 0)
					break;
			}
			if (k < st->n)
				type_end = st->v[k].t.p + 1;
			k++;
		}
		/* A variadic argument's "...". */
		while (k < st->n && st->v[k].t.type == TK_DOT)
			k++;
		e = &out->v[out->n++];
		e->name = sqlite3_mprintf("%.*s", (int)name->t.n, name->t.p);
		e->type = sqlite3_mprintf("%.*s", (int)(type_end - type_start), type_start);
		e->desc = comments(name, false);
	}
	*i = k < st->n ? k + 1 : k;
}

struct object {
	const char *kind; /* TABLE, VIEW, FUNCTION, TABLE_FUNCTION, MACRO */
	char *name;
	char *desc;
	char *ret_type;
	char *ret_desc;
	struct entries args, cols;
};

static void object_fini(struct object *o)
{
	sqlite3_free(o->name);
	sqlite3_free(o->desc);
	sqlite3_free(o->ret_type);
	sqlite3_free(o->ret_desc);
	entries_fini(&o->args);
	entries_fini(&o->cols);
}

static bool tok_is(const struct stmt *st, size_t i, const char *kw)
{
	return i < st->n && psql_tok_is(&st->v[i].t, kw);
}

/* The object statement @st creates, if it is CREATE PERFETTO something. */
static bool parse_object(const struct stmt *st, struct object *o)
{
	size_t i = 0;

	memset(o, 0, sizeof(*o));
	if (!tok_is(st, i, "CREATE"))
		return false;
	i++;
	if (tok_is(st, i, "OR") && tok_is(st, i + 1, "REPLACE"))
		i += 2;
	if (!tok_is(st, i, "PERFETTO"))
		return false;
	i++;
	if (tok_is(st, i, "TABLE"))
		o->kind = "TABLE";
	else if (tok_is(st, i, "VIEW"))
		o->kind = "VIEW";
	else if (tok_is(st, i, "FUNCTION"))
		o->kind = "FUNCTION";
	else if (tok_is(st, i, "MACRO"))
		o->kind = "MACRO";
	else
		return false;
	i++;
	if (i >= st->n)
		return false;
	o->name = sqlite3_mprintf("%.*s", (int)st->v[i].t.n, st->v[i].t.p);
	o->desc = comments(&st->v[0], true);
	i++;
	if (strcmp(o->kind, "TABLE") == 0 && tok_is(st, i, "USING"))
		i += 2;
	if (i < st->n && st->v[i].t.type == TK_LP) {
		i++;
		parse_entries(st, &i, strcmp(o->kind, "MACRO") == 0,
			      strcmp(o->kind, "TABLE") == 0 || strcmp(o->kind, "VIEW") == 0 ? &o->cols
											  : &o->args);
	}
	if (!tok_is(st, i, "RETURNS"))
		return true;
	if (i + 1 >= st->n)
		return true;
	/* The return value's comments: before its type, else before RETURNS. */
	o->ret_desc = comments(&st->v[i + 1], false);
	if (!*o->ret_desc) {
		sqlite3_free(o->ret_desc);
		o->ret_desc = comments(&st->v[i], false);
	}
	i++;
	if (strcmp(o->kind, "FUNCTION") == 0 && tok_is(st, i, "TABLE")) {
		o->kind = "TABLE_FUNCTION";
		o->ret_type = sqlite3_mprintf("TABLE");
		i++;
		if (i < st->n && st->v[i].t.type == TK_LP) {
			i++;
			parse_entries(st, &i, false, &o->cols);
		}
		return true;
	}
	o->ret_type = sqlite3_mprintf("%.*s", (int)st->v[i].t.n, st->v[i].t.p);
	return true;
}

/* Calls @fn with each statement of @sql (its significant tokens). */
static void each_statement(const char *sql, void (*fn)(void *ctx, const struct stmt *st),
			   void *ctx)
{
	const char *end = sql + strlen(sql), *p = sql, *lead = sql;
	struct stmt st = {0};
	struct psql_tok t;

	for (;;) {
		const char *q = psql_lex(p, end, &t);

		if (t.type == TK_EOF || t.type == TK_SEMI) {
			if (st.n)
				fn(ctx, &st);
			st.n = 0;
			if (t.type == TK_EOF)
				break;
			lead = q;
		} else if (t.type != TK_SPACE && t.type != TK_COMMENT) {
			if (st.n == st.cap) {
				size_t cap = st.cap ? st.cap * 2 : 64;
				struct stok *v = realloc(st.v, cap * sizeof(*v));

				if (!v)
					break;
				st.v = v;
				st.cap = cap;
			}
			st.v[st.n].t = t;
			st.v[st.n].lead = lead;
			st.n++;
			lead = q;
		}
		p = q;
	}
	free(st.v);
}

/* ------------------------------------------------------------------ rows ---- */

/* Upstream's HumanizeName: package, module, name; dots and '_' as blanks. */
static char *humanize(const char *package, const char *module, const char *name)
{
	char *s = strcmp(name, module) != 0 && *name
			  ? sqlite3_mprintf("%s %s %s", package, module, name)
			  : sqlite3_mprintf("%s %s", package, module);
	char *c;

	for (c = s; c && *c; c++)
		if (*c == '.' || *c == '_')
			*c = ' ';
	return s;
}

static void summary_entries(sqlite3_str *s, const char *heading, const struct entries *e)
{
	size_t i;

	if (!e || !e->n)
		return;
	sqlite3_str_appendf(s, "\n%s:", heading);
	for (i = 0; i < e->n; i++) {
		sqlite3_str_appendf(s, "\n- %s (%s)", e->v[i].name, e->v[i].type);
		if (*e->v[i].desc)
			sqlite3_str_appendf(s, ": %s", e->v[i].desc);
	}
}

/* The short form of @d: its first 160 bytes, not cutting a character. */
static char *short_description(const char *d)
{
	size_t n = strlen(d);

	if (n > SHORT_DESCRIPTION) {
		n = SHORT_DESCRIPTION;
		while (n > 0 && ((unsigned char)d[n] & 0xc0) == 0x80)
			n--;
	}
	return sqlite3_mprintf("%.*s", (int)n, d);
}

static int add_row(struct rows *r, const char *package, const char *module,
		   const struct object *o)
{
	const char *name = o ? o->name : module, *kind = o ? o->kind : "MODULE";
	const char *desc = o && o->desc ? o->desc : "";
	const char *ret = o && o->ret_type ? o->ret_type : "";
	const char *ret_desc = o && o->ret_desc ? o->ret_desc : "";
	sqlite3_str *s;
	struct row *w;
	char *alias;
	size_t c;

	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 256;
		struct row *v = realloc(r->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	w = &r->v[r->n];
	memset(w, 0, sizeof(*w));
	w->exposed = name[0] != '_';
	w->cell[COL_PACKAGE] = sqlite3_mprintf("%s", package);
	w->cell[COL_MODULE] = sqlite3_mprintf("%s", module);
	w->cell[COL_NAME] = sqlite3_mprintf("%s", name);
	w->cell[COL_QUALIFIED_NAME] = o ? sqlite3_mprintf("%s.%s", module, name)
					: sqlite3_mprintf("%s", module);
	w->cell[COL_OBJECT_TYPE] = sqlite3_mprintf("%s", kind);
	w->cell[COL_SHORT_DESCRIPTION] = short_description(desc);
	w->cell[COL_DESCRIPTION] = sqlite3_mprintf("%s", desc);
	w->cell[COL_RETURN_TYPE] = sqlite3_mprintf("%s", ret);
	w->cell[COL_RETURN_DESCRIPTION] = sqlite3_mprintf("%s", ret_desc);
	w->cell[COL_ARGS] = entries_json(o ? &o->args : NULL);
	w->cell[COL_COLS] = entries_json(o ? &o->cols : NULL);
	/* Upstream's summary, the text its search reads. */
	s = sqlite3_str_new(NULL);
	alias = humanize(package, module, name);
	sqlite3_str_appendf(s, "Package: %s\nModule: %s", package, module);
	if (o)
		sqlite3_str_appendf(s, "\nName: %s", name);
	sqlite3_str_appendf(s, "\nQualified name: %s\nSearch aliases: %s\nKind: %s %s",
			    w->cell[COL_QUALIFIED_NAME], alias ? alias : "",
			    w->exposed ? "public" : "internal", kind);
	sqlite3_free(alias);
	if (*desc)
		sqlite3_str_appendf(s, "\nDescription: %s", desc);
	summary_entries(s, "Arguments", o ? &o->args : NULL);
	if (*ret) {
		sqlite3_str_appendf(s, "\nReturns: %s", ret);
		if (*ret_desc)
			sqlite3_str_appendf(s, ": %s", ret_desc);
	}
	summary_entries(s, "Columns", o ? &o->cols : NULL);
	w->cell[COL_SUMMARY] = sqlite3_str_finish(s);
	r->n++;
	for (c = 0; c < N_COLS; c++)
		if (c != COL_EXPOSED && !w->cell[c])
			return -ENOMEM;
	return 0;
}

struct collect {
	struct rows *rows;
	const char *package, *module;
	int rc;
};

static void collect_stmt(void *ctx, const struct stmt *st)
{
	struct collect *c = ctx;
	struct object o = {0};

	if (c->rc == 0 && parse_object(st, &o))
		c->rc = add_row(c->rows, c->package, c->module, &o);
	object_fini(&o);
}

static void collect_module(void *ctx, const char *package, struct psql_module *m)
{
	struct collect *c = ctx;

	if (c->rc)
		return;
	c->package = package;
	c->module = m->name;
	c->rc = add_row(c->rows, package, m->name, NULL);
	each_statement(m->sql, collect_stmt, c);
}

/* ------------------------------------------------------------ the table ---- */

struct docs_vtab {
	sqlite3_vtab base;
	struct tp_sql_modules *modules;
};

struct docs_cursor {
	sqlite3_vtab_cursor base;
	struct rows rows;
	size_t at;
};

static int docs_connect(sqlite3 *conn, void *aux, int argc, const char *const *argv,
			sqlite3_vtab **out, char **err)
{
	struct docs_vtab *vt;
	int rc;

	(void)argc;
	(void)argv;
	(void)err;
	rc = sqlite3_declare_vtab(conn, "CREATE TABLE x(package TEXT, module TEXT, name TEXT, "
					"qualified_name TEXT, object_type TEXT, exposed INTEGER, "
					"short_description TEXT, summary TEXT, description TEXT, "
					"return_type TEXT, return_description TEXT, args TEXT, "
					"cols TEXT)");
	if (rc != SQLITE_OK)
		return rc;
	vt = sqlite3_malloc(sizeof(*vt));
	if (!vt)
		return SQLITE_NOMEM;
	memset(vt, 0, sizeof(*vt));
	vt->modules = aux;
	*out = &vt->base;
	return SQLITE_OK;
}

static int docs_disconnect(sqlite3_vtab *vt)
{
	sqlite3_free(vt);
	return SQLITE_OK;
}

static int docs_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
	(void)vt;
	info->estimatedCost = 100000;
	return SQLITE_OK;
}

static int docs_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
	struct docs_cursor *c = sqlite3_malloc(sizeof(*c));

	(void)vt;
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	*out = &c->base;
	return SQLITE_OK;
}

static int docs_close(sqlite3_vtab_cursor *cur)
{
	struct docs_cursor *c = (struct docs_cursor *)cur;

	rows_fini(&c->rows);
	sqlite3_free(c);
	return SQLITE_OK;
}

static int docs_filter(sqlite3_vtab_cursor *cur, int idx_num, const char *idx_str, int argc,
		       sqlite3_value **argv)
{
	struct docs_cursor *c = (struct docs_cursor *)cur;
	struct docs_vtab *vt = (struct docs_vtab *)cur->pVtab;
	struct collect col = {.rows = &c->rows};

	(void)idx_num;
	(void)idx_str;
	(void)argc;
	(void)argv;
	rows_fini(&c->rows);
	c->at = 0;
	psql_modules_each_in_package(vt->modules, collect_module, &col);
	return col.rc < 0 ? SQLITE_NOMEM : SQLITE_OK;
}

static int docs_next(sqlite3_vtab_cursor *cur)
{
	((struct docs_cursor *)cur)->at++;
	return SQLITE_OK;
}

static int docs_eof(sqlite3_vtab_cursor *cur)
{
	struct docs_cursor *c = (struct docs_cursor *)cur;

	return c->at >= c->rows.n;
}

static int docs_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	struct docs_cursor *c = (struct docs_cursor *)cur;
	const struct row *r = &c->rows.v[c->at];

	if (col == COL_EXPOSED)
		sqlite3_result_int(ctx, r->exposed);
	else if (col >= 0 && col < N_COLS)
		sqlite3_result_text(ctx, r->cell[col], -1, SQLITE_TRANSIENT);
	return SQLITE_OK;
}

static int docs_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out)
{
	*out = (sqlite3_int64)((struct docs_cursor *)cur)->at;
	return SQLITE_OK;
}

static const sqlite3_module k_docs = {
	.iVersion = 0,
	.xConnect = docs_connect,
	.xBestIndex = docs_best_index,
	.xDisconnect = docs_disconnect,
	.xDestroy = docs_disconnect,
	.xOpen = docs_open,
	.xClose = docs_close,
	.xFilter = docs_filter,
	.xNext = docs_next,
	.xEof = docs_eof,
	.xColumn = docs_column,
	.xRowid = docs_rowid,
};

int psql_docs_register(struct sqlite3 *conn, struct tp_sql_modules *modules)
{
	return sqlite3_create_module_v2(conn, "__intrinsic_stdlib_objects", &k_docs, modules,
					NULL);
}

/* --------------------------------------------------------------- summary ---- */

char *psql_module_summary(const char *sql, const char *module)
{
	const char *p = sql, *end = sql + strlen(sql), *q, *start = NULL, *stop = NULL;
	size_t n = strlen(module), i;
	struct psql_tok t;
	sqlite3_str *s;
	char *text, *dot;

	/* The first block of "--" lines; an SPDX line is not the summary. */
	for (q = p; (q = psql_lex(p, end, &t)), t.type == TK_SPACE || t.type == TK_COMMENT; p = q) {
		if (t.type == TK_SPACE) {
			int nl = 0;

			for (i = 0; i < t.n; i++)
				nl += t.p[i] == '\n';
			if (nl >= 2 && start)
				break;
			continue;
		}
		if (t.p[0] != '-' || strstr(t.p, "SPDX-License-Identifier") == t.p + 3 ||
		    (t.n > 3 && strncmp(t.p + 3, "SPDX", 4) == 0)) {
			if (start)
				break;
			continue;
		}
		if (!start)
			start = t.p;
		stop = t.p + t.n;
	}
	if (!start)
		return NULL;
	s = sqlite3_str_new(NULL);
	join_comments(s, start, stop, false);
	text = sqlite3_str_finish(s);
	if (!text)
		return NULL;
	/* "module.name: what it is" -> "what it is". */
	if (strncmp(text, module, n) == 0 && text[n] == ':') {
		memmove(text, text + n + 1, strlen(text + n + 1) + 1);
		while (*text == ' ')
			memmove(text, text + 1, strlen(text));
	}
	/* The first sentence. */
	for (dot = text; (dot = strchr(dot, '.')) != NULL; dot++) {
		if (dot[1] == ' ' || dot[1] == '\0') {
			dot[1] = '\0';
			break;
		}
	}
	if (*text >= 'a' && *text <= 'z')
		*text = (char)(*text - 'a' + 'A');
	return text;
}

struct list_ctx {
	void (*fn)(void *ctx, const char *name, const char *summary);
	void *ctx;
};

static void list_one(void *ctx, const char *package, struct psql_module *m)
{
	struct list_ctx *l = ctx;
	char *summary = psql_module_summary(m->sql, m->name);

	(void)package;
	l->fn(l->ctx, m->name, summary ? summary : "");
	sqlite3_free(summary);
}

void tp_psql_modules_list(struct tp_sql_modules *m,
			  void (*fn)(void *ctx, const char *name, const char *summary), void *ctx)
{
	struct list_ctx l = {fn, ctx};

	psql_modules_each_in_package(m, list_one, &l);
}

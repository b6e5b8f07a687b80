// SPDX-License-Identifier: Apache-2.0
/*
 * perfetto_sql.c - PerfettoSQL on top of SQLite (sql.h: tp_psql_*): every
 * statement the facade prepares comes here first. Macro calls in it are
 * expanded (psql_macro.c); INCLUDE PERFETTO MODULE runs the modules
 * psql_modules.c names, statement by statement through this same path
 * (a module's own INCLUDEs first; each module once per connection);
 * CREATE [OR REPLACE] PERFETTO TABLE / VIEW / FUNCTION / MACRO / INDEX and
 * DROP PERFETTO INDEX run now, with upstream's checks and messages, and
 * hand back a statement with no columns (or one failing with the message
 * when stepped, as SQLite's own errors do); anything else is SQLite's,
 * through the native GROUP BY path. The tail given back always points
 * into the caller's text, so multi-statement text splits as before.
 */
#include "trace_processor/sql/psql/psql.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "trace_processor/sql/agg/agg.h"
#include "trace_processor/sql/psql/psql_int.h"

/* Longest table, view or index name. */
#define PSQL_MAX_NAME 256
/* Most columns a schema may declare. */
#define PSQL_MAX_COLS 256

static int include_name(struct tp_psql *p, const char *name, int depth, char **err);

/* __tp_error(msg): fails with @msg; what a failed PerfettoSQL statement steps. */
static void fn_error(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *msg = (const char *)sqlite3_value_text(argv[0]);

	(void)argc;
	sqlite3_result_error(ctx, msg ? msg : "PerfettoSQL statement failed", -1);
}

/*
 * __tp_module_for(name): the module that makes table, view or function
 * @name, for the shell's hint after "no such table"; NULL if none does.
 */
static void fn_module_for(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const struct tp_psql *p = sqlite3_user_data(ctx);
	const char *m = tp_psql_module_for(p, (const char *)sqlite3_value_text(argv[0]));

	(void)argc;
	if (m)
		sqlite3_result_text(ctx, m, -1, SQLITE_TRANSIENT);
}

const char *tp_psql_module_for(const struct tp_psql *p, const char *name)
{
	return psql_modules_defining(p->modules, name);
}

int tp_psql_create(struct sqlite3 *conn, struct tp_agg *agg, struct tp_psql **out)
{
	struct tp_psql *p = calloc(1, sizeof(*p));
	char *err = NULL;
	int rc;

	if (!p)
		return -ENOMEM;
	p->conn = conn;
	p->agg = agg;
	if (psql_macros_create(&p->macros) < 0 ||
	    psql_functions_create(conn, &p->functions) < 0 ||
	    psql_modules_create(&p->modules) < 0) {
		tp_psql_destroy(p);
		return -ENOMEM;
	}
	rc = sqlite3_create_function_v2(conn, "__tp_error", 1, SQLITE_UTF8, NULL, fn_error, NULL,
					NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(conn, "__tp_module_for", 1, SQLITE_UTF8, p,
						fn_module_for, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(conn, "CREATE TEMP TABLE IF NOT EXISTS __tp_psql_noop(x)", NULL,
				  NULL, NULL);
	if (rc != SQLITE_OK) {
		tp_psql_destroy(p);
		return rc == SQLITE_NOMEM ? -ENOMEM : -EIO;
	}
	/* The prelude is there before any query, as Perfetto's. */
	rc = include_name(p, "prelude.*", 0, &err);
	if (rc < 0) {
		if (err)
			fprintf(stderr, "trace_processor: %s\n", err);
		sqlite3_free(err);
		tp_psql_destroy(p);
		return rc;
	}
	*out = p;
	return 0;
}

void tp_psql_destroy(struct tp_psql *p)
{
	if (!p)
		return;
	if (p->conn) {
		sqlite3_create_function_v2(p->conn, "__tp_module_for", 1, SQLITE_UTF8, NULL, NULL,
					   NULL, NULL, NULL);
	}
	psql_macros_destroy(p->macros);
	psql_functions_destroy(p->functions);
	psql_modules_destroy(p->modules);
	free(p);
}

/* ----------------------------------------------------------- statements ---- */

/* A statement that fails with @msg when stepped (how PerfettoSQL errors
 * reach the shell, like SQLite's own). */
static int psql_error_stmt(struct sqlite3 *conn, const char *msg, struct sqlite3_stmt **out)
{
	int rc = sqlite3_prepare_v2(conn, "SELECT __tp_error(?1)", -1, out, NULL);

	if (rc == SQLITE_OK)
		sqlite3_bind_text(*out, 1, msg ? msg : "out of memory", -1, SQLITE_TRANSIENT);
	return rc;
}

/* A statement with no result columns that does nothing. */
static int psql_done_stmt(struct sqlite3 *conn, struct sqlite3_stmt **out)
{
	return sqlite3_prepare_v2(conn, "DELETE FROM temp.__tp_psql_noop WHERE 0", -1, out, NULL);
}

/* ------------------------------------------------------ tables and views ---- */

struct schema {
	size_t n;
	const char *name[PSQL_MAX_COLS];
	size_t len[PSQL_MAX_COLS];
	const char *type[PSQL_MAX_COLS];
	size_t type_len[PSQL_MAX_COLS];
	char **err;
};

static int schema_add(void *ctx, const char *name, size_t name_len, const char *type,
		      size_t type_len)
{
	struct schema *s = ctx;

	if (!psql_type_known(type, type_len, false)) {
		*s->err = sqlite3_mprintf("Unknown argument type: %.*s", (int)type_len, type);
		return -EINVAL;
	}
	if (s->n == PSQL_MAX_COLS) {
		*s->err = sqlite3_mprintf("more than %d columns in the schema", PSQL_MAX_COLS);
		return -EINVAL;
	}
	s->name[s->n] = name;
	s->len[s->n] = name_len;
	s->type[s->n] = type;
	s->type_len[s->n] = type_len;
	s->n++;
	return 0;
}

static bool schema_has(const struct schema *s, const char *col)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strlen(col) == s->len[i] && strncmp(col, s->name[i], s->len[i]) == 0)
			return true;
	return false;
}

static bool columns_have(sqlite3_stmt *st, const char *name, size_t len)
{
	int i;

	for (i = 0; i < sqlite3_column_count(st); i++) {
		const char *c = sqlite3_column_name(st, i);

		if (c && strlen(c) == len && strncmp(c, name, len) == 0)
			return true;
	}
	return false;
}

/* Upstream's tables hold no BYTES nor ANY column. */
static char *check_table_types(const struct schema *s, const char *name, size_t name_len)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		const char *t = s->type[i];
		size_t n = s->type_len[i];

		if ((n == 5 && strncasecmp(t, "bytes", 5) == 0) ||
		    (n == 5 && strncasecmp(t, "proto", 5) == 0))
			return sqlite3_mprintf("CREATE PERFETTO TABLE(%.*s): Bytes type is not "
					       "supported",
					       (int)name_len, name);
		if (n == 3 && strncasecmp(t, "any", 3) == 0)
			return sqlite3_mprintf("CREATE PERFETTO TABLE(%.*s): ANY type cannot be used "
					       "in table columns",
					       (int)name_len, name);
	}
	return NULL;
}

/* Letters, digits and underscores only. */
static bool valid_name(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '_'))
			return false;
	return true;
}

/* Upstream's checks of a body's column names against the declared schema. */
static char *check_columns(sqlite3_stmt *st, const struct schema *s, const char *tag)
{
	sqlite3_str *dup = sqlite3_str_new(NULL), *extra = sqlite3_str_new(NULL),
		    *missing = sqlite3_str_new(NULL);
	char *a, *b, *c, *msg = NULL;
	int i, j, n = sqlite3_column_count(st);
	size_t k;

	for (i = 0; i < n && !msg; i++) {
		const char *col = sqlite3_column_name(st, i);

		if (!col || !*col) {
			msg = sqlite3_mprintf("%s: column %d: name must not be empty", tag, i);
			break;
		}
		if (!psql_name_start(*col) || (unsigned char)*col >= 0x80) {
			msg = sqlite3_mprintf("%s: Column %d: name '%s' has to start with a letter or "
					      "underscore.",
					      tag, i, col);
			break;
		}
		if (!valid_name(col)) {
			msg = sqlite3_mprintf("%s: Column %d: name '%s' has to contain only "
					      "alphanumeric characters and underscores.",
					      tag, i, col);
			break;
		}
		for (j = i + 1; j < n; j++) {
			const char *o = sqlite3_column_name(st, j);

			if (o && strcmp(o, col) == 0) {
				sqlite3_str_appendf(dup, "%s%s", sqlite3_str_length(dup) ? ", " : "",
						    col);
				break;
			}
		}
		if (s->n && !schema_has(s, col))
			sqlite3_str_appendf(extra, "%s%s", sqlite3_str_length(extra) ? ", " : "",
					    col);
	}
	for (k = 0; k < s->n; k++)
		if (!columns_have(st, s->name[k], s->len[k]))
			sqlite3_str_appendf(missing, "%s%.*s",
					    sqlite3_str_length(missing) ? ", " : "",
					    (int)s->len[k], s->name[k]);
	a = sqlite3_str_finish(dup);
	b = sqlite3_str_finish(extra);
	c = sqlite3_str_finish(missing);
	if (msg)
		;
	else if (a)
		msg = sqlite3_mprintf("%s: multiple columns are named: %s", tag, a);
	else if (b && c)
		msg = sqlite3_mprintf("%s: the following columns are declared in the schema, but "
				      "do not exist: %s; and the following columns exist, but are "
				      "not declared: %s",
				      tag, c, b);
	else if (b)
		msg = sqlite3_mprintf("%s: the following columns are missing from the schema: %s",
				      tag, b);
	else if (c)
		msg = sqlite3_mprintf("%s: the following columns are declared in the schema, but "
				      "do not exist: %s",
				      tag, c);
	sqlite3_free(a);
	sqlite3_free(b);
	sqlite3_free(c);
	return msg;
}

/* Runs @sql (one statement); on failure *@err is "@tag: SQLite's message". */
static int exec(sqlite3 *conn, const char *sql, const char *tag, char **err)
{
	if (!sql)
		return -ENOMEM;
	if (sqlite3_exec(conn, sql, NULL, NULL, NULL) == SQLITE_OK)
		return 0;
	if (err && !*err)
		*err = tag ? sqlite3_mprintf("%s: %s", tag, sqlite3_errmsg(conn))
			   : sqlite3_mprintf("%s", sqlite3_errmsg(conn));
	return -EINVAL;
}

/* exec() of @sql made by sqlite3_mprintf(), then freed. */
static int exec_free(sqlite3 *conn, char *sql, const char *tag, char **err)
{
	int rc = exec(conn, sql, tag, err);

	sqlite3_free(sql);
	return rc;
}

/* The plain name at @p; its end, or NULL. */
static const char *name_end(const char *p, const char *end)
{
	const char *e = p;

	if (p >= end || !psql_name_start(*p))
		return NULL;
	while (e < end && psql_name_char(*e) && *e != '$')
		e++;
	return e - p < PSQL_MAX_NAME ? e : NULL;
}

static char *syntax_error(const char *what, const char *at, const char *end)
{
	return sqlite3_mprintf("%s: syntax error near '%.*s'", what,
			       (int)(end - at > 40 ? 40 : end - at), at);
}

/* CREATE [OR REPLACE] PERFETTO TABLE|VIEW name [(schema)] AS body. */
static int create_relation(struct tp_psql *p, bool table, bool replace, const char *q,
			   const char *end, char **err)
{
	const char *tag = table ? "CREATE PERFETTO TABLE" : "CREATE PERFETTO VIEW";
	const char *kind = table ? "TABLE" : "VIEW";
	struct schema s = {.err = err};
	const char *name = q, *ne = name_end(q, end), *body, *tail = NULL;
	sqlite3_stmt *st = NULL;
	int rc;

	if (!ne) {
		*err = syntax_error(tag, q, end);
		return -EINVAL;
	}
	q = psql_skip_space(ne);
	if (q < end && *q == '(') {
		const char *close = psql_close_paren(q, end);

		if (!close) {
			*err = syntax_error(tag, q, end);
			return -EINVAL;
		}
		rc = psql_arg_list(q + 1, close - 1, schema_add, &s, err);
		if (rc < 0)
			return rc;
		q = psql_skip_space(close);
	}
	body = psql_keyword(q, "AS");
	if (!body || body >= end) {
		*err = syntax_error(tag, q, end);
		return -EINVAL;
	}
	rc = sqlite3_prepare_v2(p->conn, body, (int)(end - body), &st, &tail);
	if (rc != SQLITE_OK || !st) {
		*err = st ? NULL : sqlite3_mprintf("%s: %s", tag, rc == SQLITE_OK ? "no SELECT after AS" : sqlite3_errmsg(p->conn));
		sqlite3_finalize(st);
		return -EINVAL;
	}
	/* Upstream checks a view's columns only against a schema. */
	*err = table || s.n ? check_columns(st, &s, tag) : NULL;
	if (!*err && table)
		*err = check_table_types(&s, name, (size_t)(ne - name));
	sqlite3_finalize(st);
	if (*err)
		return -EINVAL;
	rc = exec(p->conn, "SAVEPOINT __tp_psql", NULL, err);
	if (rc < 0)
		return rc;
	if (replace)
		rc = exec_free(p->conn,
			       sqlite3_mprintf("DROP %s IF EXISTS %.*s", kind, (int)(ne - name), name),
			       tag, err);
	if (rc == 0)
		rc = exec_free(p->conn,
			       sqlite3_mprintf("CREATE %s %.*s AS %.*s\n", kind, (int)(ne - name), name,
					       (int)(end - body), body),
			       NULL, err);
	if (rc < 0) {
		sqlite3_exec(p->conn, "ROLLBACK TO __tp_psql", NULL, NULL, NULL);
		sqlite3_exec(p->conn, "RELEASE __tp_psql", NULL, NULL, NULL);
		return rc;
	}
	return exec(p->conn, "RELEASE __tp_psql", NULL, err);
}

/* ---------------------------------------------------------------- indexes ---- */

/* The type ("table", "index", ...) and SQL of @name in the main schema. */
static int master_row(sqlite3 *conn, const char *name, size_t n, const char *type, bool *virt)
{
	sqlite3_stmt *st = NULL;
	int rc, found;

	rc = sqlite3_prepare_v2(conn,
				"SELECT sql FROM sqlite_master WHERE type = ?1 AND name = ?2 "
				"COLLATE NOCASE",
				-1, &st, NULL);
	if (rc != SQLITE_OK)
		return -EIO;
	sqlite3_bind_text(st, 1, type, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, name, (int)n, SQLITE_STATIC);
	found = sqlite3_step(st) == SQLITE_ROW;
	if (found && virt) {
		const char *sql = (const char *)sqlite3_column_text(st, 0);

		*virt = sql && strncasecmp(sql, "CREATE VIRTUAL", 14) == 0;
	}
	sqlite3_finalize(st);
	return found;
}

/* [CREATE [OR REPLACE]|DROP] PERFETTO INDEX name ON table[(cols)]. */
static int index_stmt(struct tp_psql *p, bool drop, bool replace, const char *q, const char *end,
		      char **err)
{
	const char *tag = drop ? "DROP PERFETTO INDEX" : "CREATE PERFETTO INDEX";
	const char *name = q, *ne = name_end(q, end), *tab, *te, *cols = NULL, *close = NULL;
	bool virt = false;
	int n = 0, rc;

	tab = ne ? psql_keyword(psql_skip_space(ne), "ON") : NULL;
	te = tab ? name_end(tab, end) : NULL;
	if (te && !drop) {
		cols = psql_skip_space(te);
		close = cols < end && *cols == '(' ? psql_close_paren(cols, end) : NULL;
		te = close && psql_skip_space(close) >= end ? te : NULL;
	} else if (te && psql_skip_space(te) < end) {
		te = NULL;
	}
	if (!te) {
		*err = syntax_error(tag, q, end);
		return -EINVAL;
	}
	if (drop) {
		n = master_row(p->conn, name, (size_t)(ne - name), "index", NULL);
		if (n == 0)
			*err = sqlite3_mprintf("%s: Index '%.*s' not found", tag, (int)(ne - name),
					       name);
		if (n <= 0)
			return n < 0 ? n : -EINVAL;
		return exec_free(p->conn, sqlite3_mprintf("DROP INDEX %.*s", (int)(ne - name), name),
				 tag, err);
	}
	n = master_row(p->conn, tab, (size_t)(te - tab), "table", &virt);
	if (n < 0)
		return n;
	if (n == 0 || virt) {
		*err = n == 0 ? sqlite3_mprintf("%s: table '%.*s' does not exist", tag,
						(int)(te - tab), tab)
			      : sqlite3_mprintf("%s: indexes on intrinsic table '%.*s' must be "
						"declared at compile time, not via SQL",
						tag, (int)(te - tab), tab);
		return -EINVAL;
	}
	rc = master_row(p->conn, name, (size_t)(ne - name), "index", NULL);
	if (rc > 0 && !replace) {
		*err = sqlite3_mprintf("%s: Index '%.*s' already exists", tag, (int)(ne - name),
				       name);
		return -EINVAL;
	}
	if (rc > 0 && exec_free(p->conn, sqlite3_mprintf("DROP INDEX %.*s", (int)(ne - name), name),
				tag, err) < 0)
		return -EINVAL;
	return exec_free(p->conn,
			 sqlite3_mprintf("CREATE INDEX %.*s ON %.*s%.*s", (int)(ne - name), name,
					 (int)(te - tab), tab, (int)(close - cols), cols),
			 tag, err);
}

/* ---------------------------------------------------------------- INCLUDE ---- */

/* How deep modules may include modules; ours nest two or three levels. */
#define INCLUDE_MAX_DEPTH 16
/* Longest module name, dots included. */
#define INCLUDE_MAX_NAME 256

static bool is_module_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '*';
}

/*
 * If @sql starts with "INCLUDE PERFETTO MODULE <name>" and then ';' or
 * the end, copies the name into @name and returns the position after the
 * statement; otherwise NULL (SQLite then reports what is wrong).
 */
static const char *parse_include(const char *sql, char name[INCLUDE_MAX_NAME])
{
	const char *p = psql_skip_space(sql), *start;
	size_t n;

	if (!(p = psql_keyword(p, "INCLUDE")) || !(p = psql_keyword(p, "PERFETTO")) ||
	    !(p = psql_keyword(p, "MODULE")))
		return NULL;
	start = p;
	while (is_module_char(*p))
		p++;
	n = (size_t)(p - start);
	if (n == 0 || n >= INCLUDE_MAX_NAME)
		return NULL;
	memcpy(name, start, n);
	name[n] = '\0';
	p = psql_skip_space(p);
	if (*p == ';')
		return p + 1;
	return *p ? NULL : p;
}

/* Runs every statement of module @module's text @sql; an INCLUDE among
 * them recurses. */
static int run_module_text(struct tp_psql *p, const char *module, const char *sql, int depth,
			   char **err)
{
	char name[INCLUDE_MAX_NAME];
	const char *pos = sql, *tail;
	sqlite3_stmt *st;
	int rc, saved;

	while (*(pos = psql_skip_space(pos))) {
		tail = parse_include(pos, name);
		if (tail) {
			rc = include_name(p, name, depth + 1, err);
			if (rc < 0)
				return rc;
			pos = tail;
			continue;
		}
		st = NULL;
		tail = NULL;
		saved = p->include_depth;
		p->include_depth = depth + 1;
		rc = tp_psql_prepare(p, pos, &st, &tail);
		p->include_depth = saved;
		if (rc == SQLITE_OK && st) {
			while ((rc = sqlite3_step(st)) == SQLITE_ROW)
				;
			if (rc == SQLITE_DONE)
				rc = SQLITE_OK;
		}
		if (rc != SQLITE_OK) {
			*err = sqlite3_mprintf("INCLUDE: error in module '%s': %s", module,
					      sqlite3_errmsg(p->conn));
			sqlite3_finalize(st);
			return rc == SQLITE_NOMEM ? -ENOMEM : -EINVAL;
		}
		sqlite3_finalize(st);
		if (!tail || tail == pos)
			break;
		pos = tail;
	}
	return 0;
}

struct include_ctx {
	struct tp_psql *p;
	int depth;
	char **err;
};

static int include_one(void *ctx, struct psql_module *m)
{
	struct include_ctx *c = ctx;
	int rc;

	if (m->included)
		return 0;
	if (c->depth > INCLUDE_MAX_DEPTH) {
		*c->err = sqlite3_mprintf("INCLUDE: modules nested too deep at '%s'", m->name);
		return -EINVAL;
	}
	/* Marked first, so a module that includes itself back stops here. */
	m->included = true;
	rc = run_module_text(c->p, m->name, m->sql, c->depth, c->err);
	if (rc < 0)
		m->included = false;
	return rc;
}

/* Includes module @name (or every one a wildcard names); *@err on failure. */
static int include_name(struct tp_psql *p, const char *name, int depth, char **err)
{
	struct include_ctx c = {p, depth, err};

	return psql_modules_match(p->modules, name, include_one, &c, err);
}

/*
 * If @sql is an INCLUDE, runs it: *@out is then a statement with no
 * columns, or one failing with the message, and *@out_tail the position
 * after it. Return: 1 if it was an INCLUDE, 0 if not, -ENOMEM or -EIO.
 */
static int include_stmt(struct tp_psql *p, const char *sql, sqlite3_stmt **out,
			const char **out_tail)
{
	char name[INCLUDE_MAX_NAME], *err = NULL;
	const char *tail = parse_include(sql, name);
	int rc;

	if (!tail)
		return 0;
	rc = include_name(p, name, p->include_depth, &err);
	if (rc == -ENOMEM && !err)
		return -ENOMEM;
	/* The error comes out when the statement runs, as SQLite's do. */
	rc = rc < 0 ? psql_error_stmt(p->conn, err ? err : "INCLUDE failed", out)
		    : psql_done_stmt(p->conn, out);
	sqlite3_free(err);
	if (rc != SQLITE_OK) {
		sqlite3_finalize(*out);
		*out = NULL;
		return rc == SQLITE_NOMEM ? -ENOMEM : -EIO;
	}
	*out_tail = tail;
	return 1;
}

/* ---------------------------------------------------------------- dispatch ---- */

enum kind { K_NONE, K_TABLE, K_VIEW, K_FUNCTION, K_MACRO, K_INDEX, K_DROP_INDEX, K_BAD_DROP, K_BAD };

/* What PerfettoSQL statement starts at @s; *@rest: after its kind word. */
static enum kind classify(const char *s, bool *replace, const char **rest)
{
	static const struct {
		const char *word;
		enum kind kind;
	} k_kinds[] = {
		{"TABLE", K_TABLE}, {"VIEW", K_VIEW},   {"FUNCTION", K_FUNCTION},
		{"MACRO", K_MACRO}, {"INDEX", K_INDEX},
	};
	const char *q, *r;
	size_t i;

	*replace = false;
	if ((q = psql_keyword(s, "DROP")) && (q = psql_keyword(q, "PERFETTO"))) {
		*rest = psql_keyword(q, "INDEX");
		if (*rest)
			return K_DROP_INDEX;
		*rest = q;
		return K_BAD_DROP;
	}
	if (!(q = psql_keyword(s, "CREATE")))
		return K_NONE;
	if ((r = psql_keyword(q, "OR")) && (r = psql_keyword(r, "REPLACE"))) {
		*replace = true;
		q = r;
	}
	if (!(q = psql_keyword(q, "PERFETTO")))
		return K_NONE;
	for (i = 0; i < sizeof(k_kinds) / sizeof(k_kinds[0]); i++) {
		if ((*rest = psql_keyword(q, k_kinds[i].word)))
			return k_kinds[i].kind;
	}
	*rest = q;
	return K_BAD;
}

/* CREATE PERFETTO MACRO name(args) RETURNS Type AS body. */
static int create_macro(struct tp_psql *p, bool replace, const char *q, const char *end,
			char **err)
{
	const char *ne = name_end(q, end), *args, *close = NULL, *ret = NULL, *re = NULL, *body;

	args = ne ? psql_skip_space(ne) : NULL;
	if (args && args < end && *args == '(')
		close = psql_close_paren(args, end);
	if (close)
		ret = psql_keyword(psql_skip_space(close), "RETURNS");
	if (ret)
		re = name_end(ret, end);
	body = re ? psql_keyword(psql_skip_space(re), "AS") : NULL;
	if (!body || body > end) {
		*err = syntax_error("CREATE PERFETTO MACRO", q, end);
		return -EINVAL;
	}
	return psql_macro_define(p->macros, replace, q, (size_t)(ne - q), args + 1, close - 1, ret,
				 (size_t)(re - ret), body, end, err);
}

/* Runs the PerfettoSQL statement [@s, @end) of kind @k. */
static int run(struct tp_psql *p, enum kind k, bool replace, const char *rest, const char *end,
	       char **err)
{
	switch (k) {
	case K_TABLE:
	case K_VIEW:
		return create_relation(p, k == K_TABLE, replace, rest, end, err);
	case K_FUNCTION:
		return psql_function_define(p->functions, replace, rest, end, err);
	case K_MACRO:
		return create_macro(p, replace, rest, end, err);
	case K_INDEX:
	case K_DROP_INDEX:
		return index_stmt(p, k == K_DROP_INDEX, replace, rest, end, err);
	case K_BAD_DROP:
		*err = sqlite3_mprintf("DROP PERFETTO: expected INDEX at '%.*s'",
				       (int)(end - rest > 40 ? 40 : end - rest), rest);
		return -EINVAL;
	default:
		*err = sqlite3_mprintf("CREATE PERFETTO: expected TABLE, VIEW, FUNCTION, MACRO or "
				       "INDEX at '%.*s'",
				       (int)(end - rest > 40 ? 40 : end - rest), rest);
		return -EINVAL;
	}
}

/* SQLite's prepare of [@s, @end) (one statement), then the native path. */
static int prepare_sqlite(struct tp_psql *p, const char *s, int len, sqlite3_stmt **out,
			  const char **tail)
{
	int rc = sqlite3_prepare_v2(p->conn, s, len, out, tail);

	if (rc != SQLITE_OK)
		return rc;
	if (!*tail)
		*tail = s + (len < 0 ? (int)strlen(s) : len);
	if (*out && p->agg)
		tp_agg_prepare(p->agg, s, *tail, out);
	return SQLITE_OK;
}

/* A statement of ours is done: *@out is the no-op or the error. */
static int finish(struct tp_psql *p, int rc, char *err, sqlite3_stmt **out)
{
	int src;

	if (rc == -ENOMEM && !err)
		return SQLITE_NOMEM;
	src = rc < 0 ? psql_error_stmt(p->conn, err ? err : "out of memory", out)
		     : psql_done_stmt(p->conn, out);
	sqlite3_free(err);
	return src;
}

int tp_psql_prepare(struct tp_psql *p, const char *sql, struct sqlite3_stmt **out,
		    const char **out_tail)
{
	const char *s = psql_skip_space(sql), *end = psql_statement_end(s), *next, *rest = NULL;
	const char *e, *t = NULL;
	char *text = NULL, *err = NULL;
	bool replace;
	enum kind k;
	int rc;

	*out = NULL;
	next = *end == ';' ? end + 1 : end;
	k = classify(s, &replace, &rest);
	if (k == K_MACRO) {
		/* A macro's body is expanded where it is used, not here. */
		*out_tail = next;
		rc = create_macro(p, replace, rest, end, &err);
		return finish(p, rc, err, out);
	}
	if (psql_has_macro_call(s, end)) {
		text = psql_macro_expand(p->macros, s, end, &err);
		*out_tail = next;
		if (!text)
			return finish(p, -EINVAL, err, out);
		s = psql_skip_space(text);
		end = text + strlen(text);
		k = classify(s, &replace, &rest);
	}
	e = end;
	if (k == K_NONE) {
		rc = include_stmt(p, s, out, &t);
		if (rc == 0 && !text) {
			rc = prepare_sqlite(p, sql, -1, out, out_tail);
		} else if (rc == 0) {
			rc = prepare_sqlite(p, s, (int)(e - s), out, &t);
			if (rc == SQLITE_OK && *psql_skip_space(t) && *psql_skip_space(t) != ';') {
				sqlite3_finalize(*out);
				rc = finish(p, -EINVAL,
					    sqlite3_mprintf("a macro expanded to more than one "
							    "statement: %s", s),
					    out);
			}
		} else {
			if (!text)
				*out_tail = t;
			rc = rc < 0 ? (rc == -ENOMEM ? SQLITE_NOMEM : SQLITE_ERROR) : SQLITE_OK;
		}
		sqlite3_free(text);
		return rc;
	}
	if (!text)
		*out_tail = next;
	rc = run(p, k, replace, rest, e, &err);
	sqlite3_free(text);
	return finish(p, rc, err, out);
}

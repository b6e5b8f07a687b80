// SPDX-License-Identifier: Apache-2.0
/*
 * psql_function.c - CREATE PERFETTO FUNCTION (psql_int.h), and the legacy
 * create_function() and EXPERIMENTAL_MEMOIZE() it shares with upstream:
 *   - a scalar function runs its body, one SELECT reading its arguments
 *     as $name, prepared when the function is created (its errors are
 *     reported then; a body that failed to prepare leaves the function
 *     defined but failing, and a later CREATE may define it again) and
 *     again per level of recursion; the first row's single column is the
 *     result, no row is NULL, a second row is an error. Memoized
 *     functions (one integer argument) remember each result;
 *   - RETURNS TABLE(...) makes a table function (psql_table_fn.c);
 *   - DELEGATES TO target makes another name for a built-in function,
 *     variadic ("args ANY...") or not.
 * Arguments are type-checked as upstream does (NULL always passes).
 */
#include "trace_processor/sql/psql/psql_int.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Results a memoized function keeps at most. */
#define MEMO_MAX (1u << 20)

int psql_functions_create(struct sqlite3 *conn, struct psql_functions **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->conn = conn;
	return 0;
}

/* ------------------------------------------------------------------ memo ---- */

struct memo_slot {
	int64_t key;
	sqlite3_value *value; /* NULL: empty slot */
};

struct psql_memo {
	struct memo_slot *slots;
	size_t cap, n; /* cap: a power of two */
};

static void memo_free(struct psql_memo *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->cap; i++)
		sqlite3_value_free(m->slots[i].value);
	free(m->slots);
	free(m);
}

static size_t memo_hash(int64_t k, size_t cap)
{
	uint64_t h = (uint64_t)k * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 17) & (cap - 1);
}

static const sqlite3_value *memo_get(const struct psql_memo *m, int64_t k)
{
	size_t i;

	if (!m || !m->cap)
		return NULL;
	for (i = memo_hash(k, m->cap); m->slots[i].value; i = (i + 1) & (m->cap - 1))
		if (m->slots[i].key == k)
			return m->slots[i].value;
	return NULL;
}

static void memo_put(struct psql_memo *m, int64_t k, sqlite3_value *v)
{
	size_t i;

	if (!v || m->n >= MEMO_MAX) {
		sqlite3_value_free(v);
		return;
	}
	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64, j;
		struct memo_slot *s = calloc(cap, sizeof(*s));

		if (!s) {
			sqlite3_value_free(v);
			return;
		}
		for (j = 0; j < m->cap; j++) {
			if (!m->slots[j].value)
				continue;
			for (i = memo_hash(m->slots[j].key, cap); s[i].value; i = (i + 1) & (cap - 1))
				;
			s[i] = m->slots[j];
		}
		free(m->slots);
		m->slots = s;
		m->cap = cap;
	}
	for (i = memo_hash(k, m->cap); m->slots[i].value; i = (i + 1) & (m->cap - 1)) {
		if (m->slots[i].key == k) {
			sqlite3_value_free(m->slots[i].value);
			m->slots[i].value = v;
			return;
		}
	}
	m->slots[i].key = k;
	m->slots[i].value = v;
	m->n++;
}

/* ------------------------------------------------------------- functions ---- */

static void def_free(struct psql_fn *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->n_stmts; i++)
		sqlite3_finalize(d->stmts[i]);
	free(d->stmts);
	for (i = 0; i < d->n_args; i++)
		free(d->args[i]);
	for (i = 0; i < d->n_cols; i++)
		free(d->cols[i]);
	memo_free(d->memo);
	free(d->name);
	free(d->proto);
	free(d->body);
	free(d->delegate);
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

/* The statement of the current level of recursion, prepared if new. */
static sqlite3_stmt *level_stmt(struct psql_fn *d, sqlite3 *db, char **err)
{
	sqlite3_stmt **v;

	if (d->level < d->n_stmts)
		return d->stmts[d->level];
	v = realloc(d->stmts, (d->n_stmts + 1) * sizeof(*v));
	if (!v)
		return NULL;
	d->stmts = v;
	if (sqlite3_prepare_v2(db, d->body, -1, &d->stmts[d->n_stmts], NULL) != SQLITE_OK) {
		*err = sqlite3_mprintf("%s", sqlite3_errmsg(db));
		sqlite3_finalize(d->stmts[d->n_stmts]);
		return NULL;
	}
	return d->stmts[d->n_stmts++];
}

static void set_error(sqlite3_context *ctx, struct psql_fn *d, char *msg)
{
	sqlite3_result_error(ctx, msg ? msg : "out of memory", -1);
	sqlite3_free(msg);
	d->owner->inner_error = true;
}

/* Runs @st (bound) for @d: the result, as upstream's EvaluateScalarStatement. */
static void run_body(sqlite3_context *ctx, struct psql_fn *d, sqlite3_stmt *st, int64_t *memo_key)
{
	sqlite3 *db = sqlite3_db_handle(st);
	int rc = sqlite3_step(st);

	if (rc == SQLITE_DONE) {
		sqlite3_result_null(ctx);
		if (memo_key)
			memo_put(d->memo, *memo_key, sqlite3_value_dup(NULL));
		return;
	}
	if (rc != SQLITE_ROW)
		goto sql_error;
	if (sqlite3_column_count(st) != 1) {
		set_error(ctx, d, sqlite3_mprintf("%s: SQL definition should only return one "
						  "column: returned %d columns",
						  d->name, sqlite3_column_count(st)));
		return;
	}
	sqlite3_result_value(ctx, sqlite3_column_value(st, 0));
	if (memo_key)
		memo_put(d->memo, *memo_key, sqlite3_value_dup(sqlite3_column_value(st, 0)));
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		char *sql = sqlite3_expanded_sql(st);

		set_error(ctx, d, sqlite3_mprintf("%s: multiple values were returned when "
						  "executing function body. Executed SQL was %s",
						  d->name, sql ? sql : d->body));
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
		set_error(ctx, d, sqlite3_mprintf("%s: SQLite error while executing function "
						  "body: %s",
						  d->name, sqlite3_errmsg(db)));
		return;
	}
	d->owner->inner_error = true;
}

static void fn_call(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct psql_fn *d = sqlite3_user_data(ctx);
	int64_t key, *memo_key = NULL;
	char *msg = NULL;
	sqlite3_stmt *st;

	if (d->owner->depth == 0)
		d->owner->inner_error = false;
	if ((size_t)argc != d->n_args) {
		set_error(ctx, d, sqlite3_mprintf("%s: invalid number of args; expected %d, "
						  "received %d",
						  d->name, (int)d->n_args, argc));
		return;
	}
	msg = psql_fn_check_args(d, argc, argv);
	if (msg || d->owner->depth >= PSQL_FN_MAX_DEPTH) {
		if (!msg)
			msg = sqlite3_mprintf("%s: SQL functions nested deeper than %d", d->name,
					      PSQL_FN_MAX_DEPTH);
		set_error(ctx, d, msg);
		return;
	}
	if (d->memo && argc == 1 && sqlite3_value_type(argv[0]) == SQLITE_INTEGER) {
		const sqlite3_value *v;

		key = sqlite3_value_int64(argv[0]);
		v = memo_get(d->memo, key);
		if (v) {
			sqlite3_result_value(ctx, (sqlite3_value *)v);
			return;
		}
		memo_key = &key;
	}
	st = level_stmt(d, sqlite3_context_db_handle(ctx), &msg);
	if (!st) {
		if (msg)
			set_error(ctx, d, msg);
		else
			sqlite3_result_error_nomem(ctx);
		return;
	}
	psql_fn_bind(d, st, argc, argv);
	d->level++;
	d->owner->depth++;
	run_body(ctx, d, st, memo_key);
	d->owner->depth--;
	d->level--;
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
}

/* DELEGATES TO: runs "SELECT target(?1, ...)" with the call's arguments. */
static void fn_delegate(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct psql_fn *d = sqlite3_user_data(ctx);
	sqlite3 *db = sqlite3_context_db_handle(ctx);
	sqlite3_str *s = sqlite3_str_new(NULL);
	sqlite3_stmt *st = NULL;
	char *sql;
	int i, rc;

	sqlite3_str_appendf(s, "SELECT \"%w\"(", d->delegate);
	for (i = 0; i < argc; i++)
		sqlite3_str_appendf(s, "%s?%d", i ? ", " : "", i + 1);
	sqlite3_str_appendall(s, ")");
	sql = sqlite3_str_finish(s);
	if (!sql) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK) {
		sqlite3_result_error(ctx, sqlite3_errmsg(db), -1);
		return;
	}
	for (i = 0; i < argc; i++)
		sqlite3_bind_value(st, i + 1, argv[i]);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		sqlite3_result_value(ctx, sqlite3_column_value(st, 0));
	else if (rc != SQLITE_DONE)
		sqlite3_result_error(ctx, sqlite3_errmsg(db), -1);
	sqlite3_finalize(st);
}

/* -------------------------------------------------------------- parsing ---- */

bool psql_parse_type(const char *t, size_t n, enum fn_type *out)
{
	static const struct {
		const char *name;
		enum fn_type type;
	} k_map[] = {
		{"bool", T_BOOL},       {"long", T_LONG},   {"timestamp", T_LONG},
		{"duration", T_LONG},   {"id", T_LONG},     {"joinid", T_LONG},
		{"argsetid", T_LONG},   {"int", T_LONG},    {"uint", T_LONG},
		{"double", T_DOUBLE},   {"float", T_DOUBLE}, {"string", T_STRING},
		{"bytes", T_BYTES},     {"proto", T_BYTES}, {"any", T_ANY},
	};
	const char *paren = memchr(t, '(', n);
	size_t i, base = paren ? (size_t)(paren - t) : n;

	for (i = 0; i < sizeof(k_map) / sizeof(k_map[0]); i++) {
		if (strlen(k_map[i].name) == base && strncasecmp(k_map[i].name, t, base) == 0) {
			*out = k_map[i].type;
			return true;
		}
	}
	return false;
}

const char *psql_type_name(enum fn_type t)
{
	static const char *const k_names[] = {"ANY", "LONG", "BOOL", "DOUBLE", "STRING", "BYTES"};

	return k_names[t];
}

struct arg_ctx {
	struct psql_fn *d;
	bool cols;
	char **err;
};

static int add_arg(void *ctx, const char *name, size_t name_len, const char *type, size_t type_len)
{
	struct arg_ctx *a = ctx;
	struct psql_fn *d = a->d;
	size_t base = type_len, *n = a->cols ? &d->n_cols : &d->n_args;
	bool variadic = type_len > 3 && strncmp(type + type_len - 3, "...", 3) == 0;
	enum fn_type t;
	char *copy;

	if (variadic)
		type_len -= 3;
	base = type_len;
	if (memchr(type, '(', type_len))
		base = (size_t)((const char *)memchr(type, '(', type_len) - type);
	if (!psql_parse_type(type, base, &t)) {
		*a->err = sqlite3_mprintf("Unknown argument type: %.*s", (int)base, type);
		return -EINVAL;
	}
	if (*n == PSQL_FN_MAX_ARGS) {
		*a->err = sqlite3_mprintf("more than %d %s", PSQL_FN_MAX_ARGS,
					  a->cols ? "columns" : "arguments");
		return -EINVAL;
	}
	if (d->variadic && !a->cols) {
		*a->err = sqlite3_mprintf("Variadic argument must be the last argument");
		return -EINVAL;
	}
	if (variadic && a->cols) {
		*a->err = sqlite3_mprintf("syntax error near '...'");
		return -EINVAL;
	}
	copy = malloc(name_len + 2);
	if (!copy)
		return -ENOMEM;
	if (a->cols) {
		memcpy(copy, name, name_len);
		copy[name_len] = '\0';
		d->cols[*n] = copy;
		d->col_types[*n] = t;
	} else {
		copy[0] = '$';
		memcpy(copy + 1, name, name_len);
		copy[name_len + 1] = '\0';
		d->args[*n] = copy;
		d->types[*n] = t;
		d->variadic = variadic;
	}
	(*n)++;
	return 0;
}

/* "name(a LONG, b STRING)": the prototype as upstream prints it. */
static char *proto_string(const struct psql_fn *d)
{
	sqlite3_str *s = sqlite3_str_new(NULL);
	char *text, *copy;
	size_t i;

	sqlite3_str_appendf(s, "%s(", d->name);
	for (i = 0; i < d->n_args; i++)
		sqlite3_str_appendf(s, "%s%s %s%s", i ? ", " : "", d->args[i] + 1,
				    psql_type_name(d->types[i]),
				    d->variadic && i + 1 == d->n_args ? "..." : "");

	sqlite3_str_appendall(s, ")");
	text = sqlite3_str_finish(s);
	copy = text ? strdup(text) : NULL;
	sqlite3_free(text);
	return copy;
}

/* The parts of a CREATE PERFETTO FUNCTION. */
struct parsed {
	const char *body;          /* AS: the SELECT; NULL for DELEGATES TO */
	size_t body_len;
	const struct psql_tok *bad; /* a syntax error here */
	struct psql_tok bad_tok;
};

/* Parses "name(args) RETURNS type AS body" (or TABLE(cols), or DELEGATES TO x) into @d. */
static int parse(struct psql_fn *d, const char *p, const char *end, struct parsed *out,
		 char **err)
{
	struct psql_tok t;
	const char *close, *q;
	int rc;

	q = psql_lex_sig(p, end, &t);
	if (t.type != TK_ID && t.type != TK_QID)
		goto bad;
	d->name = t.type == TK_ID ? strndup(t.p, t.n) : strndup(t.p + 1, t.n >= 2 ? t.n - 2 : 0);
	if (!d->name)
		return -ENOMEM;
	q = psql_lex_sig(q, end, &t);
	if (t.type != TK_LP)
		goto bad;
	close = psql_close_paren(t.p, end);
	/* Unclosed: the arguments up to the end show where it went wrong. */
	rc = psql_arg_list(t.p + 1, close ? close - 1 : end, add_arg,
			   &(struct arg_ctx){d, false, err}, err, &out->bad_tok);
	if (rc == 0 && !close) {
		t.type = TK_EOF;
		t.p = end;
		t.n = 0;
		goto bad;
	}
	if (rc < 0) {
		if (!*err)
			out->bad = &out->bad_tok;
		return rc;
	}
	q = psql_lex_sig(close, end, &t);
	if (!psql_tok_is(&t, "RETURNS"))
		goto bad;
	q = psql_lex_sig(q, end, &t);
	if (psql_tok_is(&t, "TABLE")) {
		q = psql_lex_sig(q, end, &t);
		if (t.type != TK_LP)
			goto bad;
		close = psql_close_paren(t.p, end);
		if (!close) {
			t.type = TK_EOF;
			t.p = end;
			t.n = 0;
			goto bad;
		}
		rc = psql_arg_list(t.p + 1, close - 1, add_arg, &(struct arg_ctx){d, true, err},
				   err, &out->bad_tok);
		if (rc < 0) {
			if (!*err)
				out->bad = &out->bad_tok;
			return rc;
		}
		if (d->n_cols == 0) {
			psql_lex_sig(t.p + 1, end, &t);
			goto bad;
		}
		q = close;
	} else if (t.type == TK_ID) {
		const char *ret = t.p;
		size_t ret_len = t.n;

		q = psql_lex_sig(q, end, &t);
		if (t.type == TK_LP) {
			close = psql_close_paren(t.p, end);
			if (!close)
				goto bad;
			q = close;
		} else {
			q = t.p;
		}
		if (!psql_parse_type(ret, ret_len, &d->ret)) {
			*err = sqlite3_mprintf("Unknown return type: %.*s", (int)ret_len, ret);
			return -EINVAL;
		}
	} else {
		goto bad;
	}
	q = psql_lex_sig(q, end, &t);
	if (psql_tok_is(&t, "DELEGATES")) {
		q = psql_lex_sig(q, end, &t);
		if (!psql_tok_is(&t, "TO"))
			goto bad;
		q = psql_lex_sig(q, end, &t);
		if (t.type != TK_ID)
			goto bad;
		d->delegate = strndup(t.p, t.n);
		if (!d->delegate)
			return -ENOMEM;
		psql_lex_sig(q, end, &t);
		if (t.type != TK_EOF)
			goto bad;
		out->body = NULL;
		return 0;
	}
	if (!psql_tok_is(&t, "AS"))
		goto bad;
	q = psql_lex_sig(q, end, &t);
	if (t.type == TK_EOF)
		goto bad;
	if (d->variadic) {
		*err = sqlite3_mprintf("Variadic arguments are only allowed in delegate functions "
				       "(use DELEGATES TO instead of AS)");
		return -EINVAL;
	}
	out->body = t.p;
	out->body_len = (size_t)(end - t.p);
	while (out->body_len > 0 && (out->body[out->body_len - 1] == ' ' ||
				     (out->body[out->body_len - 1] >= '\t' &&
				      out->body[out->body_len - 1] <= '\r')))
		out->body_len--;
	d->body = strndup(out->body, out->body_len);
	return d->body ? 0 : -ENOMEM;
bad:
	out->bad_tok = t;
	out->bad = &out->bad_tok;
	return -EINVAL;
}

/* Checks the body's $parameters against the arguments (upstream's messages). */
static char *check_params(const struct psql_fn *d, sqlite3_stmt *st)
{
	int i, n = sqlite3_bind_parameter_count(st);
	size_t k;

	for (i = 1; i <= n; i++) {
		const char *pn = sqlite3_bind_parameter_name(st, i);

		if (!pn)
			return sqlite3_mprintf("%s: \"Nameless\" SQL parameters cannot be used in the "
					       "SQL statements of view functions.",
					       d->name);
		if (pn[0] != '$')
			return sqlite3_mprintf("%s: invalid parameter name %s used in the SQL "
					       "definition of the view function: all parameters "
					       "must be prefixed with '$' not ':' or '@'.",
					       d->name, pn);
		for (k = 0; k < d->n_args; k++)
			if (strcmp(d->args[k], pn) == 0)
				break;
		if (k == d->n_args)
			return sqlite3_mprintf("%s: parameter %s does not appear in the list of "
					       "arguments in the prototype of the view function.",
					       d->name, pn);
	}
	return NULL;
}

/* The function named like @d: a table function of its name, or a scalar
 * one of its name and argument count. */
static struct psql_fn **find(struct psql_functions *f, const char *name, bool table, int argc)
{
	struct psql_fn **pp;

	for (pp = &f->head; *pp; pp = &(*pp)->next) {
		int n = (*pp)->variadic ? -1 : (int)(*pp)->n_args;

		if (strcasecmp((*pp)->name, name) != 0 || !(*pp)->n_cols != !table)
			continue;
		if (table || n == argc)
			return pp;
	}
	return NULL;
}

static int argc_of(const struct psql_fn *d)
{
	return d->variadic ? -1 : (int)d->n_args;
}

static int do_register(struct psql_functions *f, struct psql_fn *d)
{
	if (d->n_cols)
		return psql_table_fn_register(f->conn, d);
	return sqlite3_create_function_v2(f->conn, d->name, argc_of(d), SQLITE_UTF8, d,
					  d->delegate ? fn_delegate : fn_call, NULL, NULL, NULL);
}

bool psql_function_is_builtin(struct psql_functions *f, const char *name, int argc)
{
	sqlite3_stmt *st = NULL;
	bool found = false;

	/* Ours in C (builtin = 0 there means "not SQLite's own"). */
	if (sqlite3_prepare_v2(f->conn,
			       "SELECT 1 FROM pragma_function_list WHERE name = lower(?1) AND "
			       "(narg = ?2 OR ?2 = -2) AND builtin = 0",
			       -1, &st, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, argc);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	if (!found)
		return false;
	/* Functions defined in SQL are not built in. */
	return !find(f, name, false, argc);
}

static bool linked(const struct psql_functions *f, const struct psql_fn *d)
{
	const struct psql_fn *x;

	for (x = f->head; x; x = x->next)
		if (x == d)
			return true;
	return false;
}

/* Adds @d, replacing @old (unlinked and freed). */
static void link_fn(struct psql_functions *f, struct psql_fn *d, struct psql_fn **oldp)
{
	if (oldp) {
		struct psql_fn *old = *oldp;

		*oldp = old->next;
		def_free(old);
	}
	d->next = f->head;
	f->head = d;
}

/*
 * Moves definition @src into @dst, which SQLite keeps calling (a function
 * cannot be registered again while statements run: upstream resets the
 * registered one in place too); @src is freed.
 */
static void move_into(struct psql_fn *dst, struct psql_fn *src)
{
	struct psql_fn *next = dst->next, tmp;

	tmp = *dst;
	*dst = *src;
	*src = tmp;
	dst->next = next;
	src->next = NULL;
	def_free(src);
}

/* A scalar function whose body is prepared (or, failing that, defined anyway). */
static int define_scalar(struct psql_functions *f, struct psql_fn **dp, bool replace, char **err,
			 const char **prep_err, int *prep_off)
{
	struct psql_fn *d = *dp, **oldp = find(f, d->name, false, argc_of(d));
	const char *tail = NULL;
	sqlite3_stmt *st = NULL;
	int rc;

	if (psql_function_is_builtin(f, d->name, argc_of(d))) {
		*err = sqlite3_mprintf("CREATE PERFETTO FUNCTION[prototype=%s]: cannot redefine "
				       "built-in function with the same name and argument count",
				       d->proto);
		return -EINVAL;
	}
	if (oldp && (*oldp)->valid && !replace) {
		*err = sqlite3_mprintf("CREATE PERFETTO FUNCTION[prototype=%s]: function already "
				       "exists%s",
				       d->proto,
				       d->delegate ? ". Use CREATE OR REPLACE to overwrite." : "");
		return -EINVAL;
	}
	if (oldp && (*oldp)->level > 0) {
		*err = sqlite3_mprintf("CREATE PERFETTO FUNCTION[prototype=%s]: the function is "
				       "running",
				       d->proto);
		return -EINVAL;
	}
	if (d->delegate) {
		if (!psql_function_is_builtin(f, d->delegate, -2) &&
		    !find(f, d->delegate, false, argc_of(d))) {
			*err = sqlite3_mprintf("Target function '%s' not found in registry. Make "
					       "sure it has been registered as an available "
					       "function for delegation.",
					       d->delegate);
			return -EINVAL;
		}
		d->valid = true;
	}
	if (oldp && !!(*oldp)->delegate == !!d->delegate) {
		/* The same registration serves the new definition. */
		move_into(*oldp, d);
		*dp = d = *oldp;
	} else {
		/* Registered before the body is prepared, so the body may call it. */
		if (do_register(f, d) != SQLITE_OK) {
			*err = sqlite3_mprintf("CREATE PERFETTO FUNCTION[prototype=%s]: %s",
					       d->proto, sqlite3_errmsg(f->conn));
			return -EINVAL;
		}
		link_fn(f, d, oldp);
	}
	if (d->delegate)
		return 0;
	rc = sqlite3_prepare_v2(f->conn, d->body, -1, &st, &tail);
	if (rc == SQLITE_OK && st) {
		d->stmts = malloc(sizeof(*d->stmts));
		if (!d->stmts) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		d->stmts[0] = st;
		d->n_stmts = 1;
		d->valid = true;
		return 0;
	}
	/* Defined but invalid: calls fail, a CREATE may try again. */
	*prep_off = rc == SQLITE_OK ? -1 : sqlite3_error_offset(f->conn);
	*prep_err = rc == SQLITE_OK ? "incomplete SQL statement" : sqlite3_errmsg(f->conn);
	return -EINVAL;
}

/* A table function: its body checked, then registered. */
static int define_table(struct psql_functions *f, struct psql_fn *d, bool replace, char **err,
			bool *wrap, const char **prep_err, int *prep_off)
{
	struct psql_fn **oldp = find(f, d->name, true, 0);
	sqlite3_stmt *st = NULL;
	int rc;

	rc = sqlite3_prepare_v2(f->conn, d->body, -1, &st, NULL);
	if (rc != SQLITE_OK || !st) {
		*prep_off = rc == SQLITE_OK ? -1 : sqlite3_error_offset(f->conn);
		*prep_err = rc == SQLITE_OK ? "incomplete SQL statement" : sqlite3_errmsg(f->conn);
		sqlite3_finalize(st);
		return -EINVAL;
	}
	*err = check_params(d, st);
	if (!*err)
		*err = psql_table_fn_check(d, st);
	sqlite3_finalize(st);
	if (*err) {
		*wrap = true;
		return -EINVAL;
	}
	if (oldp && !replace) {
		*err = sqlite3_mprintf("table %s already exists", d->name);
		*wrap = true;
		return -EINVAL;
	}
	if (do_register(f, d) != SQLITE_OK) {
		*err = sqlite3_mprintf("%s", sqlite3_errmsg(f->conn));
		*wrap = true;
		if (oldp)
			do_register(f, *oldp);
		return -EINVAL;
	}
	d->valid = true;
	link_fn(f, d, oldp);
	return 0;
}

int psql_function_define(struct psql_functions *f, const struct psql_fn_def *def, char **err,
			 bool *wrap, struct psql_err *e)
{
	struct psql_fn *d = calloc(1, sizeof(*d));
	struct parsed ps = {0};
	const char *prep_err = NULL;
	int prep_off = -1, rc;

	*wrap = false;
	if (!d)
		return -ENOMEM;
	d->owner = f;
	rc = parse(d, def->text, def->end, &ps, err);
	if (rc < 0) {
		if (ps.bad) {
			rc = psql_err_syntax(e, def->layer, ps.bad);
			sqlite3_free(*err);
			*err = NULL;
		}
		def_free(d);
		return rc;
	}
	d->proto = proto_string(d);
	if (!d->proto) {
		def_free(d);
		return -ENOMEM;
	}
	if (d->n_cols) {
		if (d->delegate) {
			*err = sqlite3_mprintf("CREATE PERFETTO FUNCTION[prototype=%s]: a table "
					       "function cannot delegate",
					       d->proto);
			def_free(d);
			return -EINVAL;
		}
		rc = define_table(f, d, def->replace, err, wrap, &prep_err, &prep_off);
		if (rc < 0)
			def_free(d);
	} else {
		/* On failure after registering, @d stays (invalid). */
		rc = define_scalar(f, &d, def->replace, err, &prep_err, &prep_off);
		if (rc < 0 && !linked(f, d))
			def_free(d);
	}
	if (rc < 0 && prep_err) {
		size_t start = (size_t)(ps.body - def->layer->text);

		psql_err_at(e, def->layer, start + (prep_off < 0 ? 0 : (size_t)prep_off), start,
			    start + ps.body_len, prep_err);
	}
	return rc;
}

/* -------------------------------------------------------------- legacy ---- */

static bool valid_name(const char *s, size_t n)
{
	size_t i;

	if (n == 0)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

static void trim(const char **s, const char **e)
{
	while (*s < *e && (**s == ' ' || (**s >= '\t' && **s <= '\r')))
		(*s)++;
	while (*e > *s && ((*e)[-1] == ' ' || ((*e)[-1] >= '\t' && (*e)[-1] <= '\r')))
		(*e)--;
}

/* Upstream's ParsePrototype of "name(a TYPE, ...)" into @d. */
static char *parse_legacy(struct psql_fn *d, const char *proto)
{
	const char *open = strchr(proto, '('), *close, *p, *q, *sp;
	enum fn_type t;

	if (!open)
		return sqlite3_mprintf("unable to find bracket starting argument list");
	if (!valid_name(proto, (size_t)(open - proto)))
		return sqlite3_mprintf("function name %.*s is not alphanumeric",
				       (int)(open - proto), proto);
	close = strchr(open + 1, ')');
	if (!close)
		return sqlite3_mprintf("unable to find bracket ending argument list");
	d->name = strndup(proto, (size_t)(open - proto));
	if (!d->name)
		return NULL;
	p = open + 1;
	q = close;
	trim(&p, &q);
	while (p < q) {
		const char *arg = p, *arg_end = memchr(p, ',', (size_t)(q - p)), *n_end, *ty;

		if (!arg_end)
			arg_end = q;
		p = arg_end < q ? arg_end + 1 : q;
		trim(&arg, &arg_end);
		sp = memchr(arg, ' ', (size_t)(arg_end - arg));
		if (!sp || memchr(sp + 1, ' ', (size_t)(arg_end - sp - 1)) || sp + 1 == arg_end)
			return sqlite3_mprintf("argument '%.*s' in function prototype should be of "
					       "the form `name TYPE`",
					       (int)(arg_end - arg), arg);
		n_end = sp;
		ty = sp + 1;
		if (!valid_name(arg, (size_t)(n_end - arg)))
			return sqlite3_mprintf("argument '%.*s' is not alphanumeric",
					       (int)(arg_end - arg), arg);
		if (!psql_parse_type(ty, (size_t)(arg_end - ty), &t) ||
		    memchr(ty, '(', (size_t)(arg_end - ty)))
			return sqlite3_mprintf("unknown argument type in argument '%.*s'",
					       (int)(arg_end - arg), arg);
		if (d->n_args == PSQL_FN_MAX_ARGS)
			return sqlite3_mprintf("more than %d arguments", PSQL_FN_MAX_ARGS);
		d->args[d->n_args] = malloc((size_t)(n_end - arg) + 2);
		if (!d->args[d->n_args])
			return NULL;
		d->args[d->n_args][0] = '$';
		memcpy(d->args[d->n_args] + 1, arg, (size_t)(n_end - arg));
		d->args[d->n_args][n_end - arg + 1] = '\0';
		d->types[d->n_args++] = t;
	}
	return NULL;
}

int psql_function_legacy(struct psql_functions *f, const char *proto, const char *ret,
			 const char *body, char **err)
{
	struct psql_fn *d = calloc(1, sizeof(*d));
	const char *prep_err = NULL;
	int prep_off, rc;

	if (!d)
		return -ENOMEM;
	d->owner = f;
	*err = parse_legacy(d, proto);
	if (!*err && !d->name) {
		def_free(d);
		return -ENOMEM;
	}
	if (!*err && !psql_parse_type(ret, strlen(ret), &d->ret))
		*err = sqlite3_mprintf("CREATE_FUNCTION: unknown return type %s", ret);
	if (!*err) {
		d->body = strdup(body);
		d->proto = proto_string(d);
		if (!d->body || !d->proto) {
			def_free(d);
			return -ENOMEM;
		}
	}
	if (*err) {
		def_free(d);
		return -EINVAL;
	}
	rc = define_scalar(f, &d, true, err, &prep_err, &prep_off);
	if (rc < 0 && !*err && prep_err)
		*err = sqlite3_mprintf("%s", prep_err);
	if (rc < 0 && !linked(f, d))
		def_free(d);
	return rc;
}

int psql_function_memoize(struct psql_functions *f, const char *name, char **err)
{
	struct psql_fn **pp;

	if (psql_function_is_builtin(f, name, 1)) {
		*err = sqlite3_mprintf("EXPERIMENTAL_MEMOIZE: '%s' is a built-in function and "
				       "cannot be memoized",
				       name);
		return -EINVAL;
	}
	pp = find(f, name, false, 1);
	if (!pp || (*pp)->delegate) {
		*err = sqlite3_mprintf("EXPERIMENTAL_MEMOIZE: Function '%s'(INT) does not exist",
				       name);
		return -EINVAL;
	}
	if ((*pp)->types[0] != T_LONG && (*pp)->types[0] != T_BOOL) {
		*err = sqlite3_mprintf("EXPERIMENTAL_MEMOIZE: Function %s should take one int "
				       "argument",
				       name);
		return -EINVAL;
	}
	if (!(*pp)->memo) {
		(*pp)->memo = calloc(1, sizeof(*(*pp)->memo));
		if (!(*pp)->memo)
			return -ENOMEM;
	}
	return 0;
}

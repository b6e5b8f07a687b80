/* SPDX-License-Identifier: Apache-2.0 */
/*
 * psql_int.h - private to sql/psql/: the pieces of PerfettoSQL that
 * perfetto_sql.c puts together, from the bottom up: a token-level scanner
 * of SQL text (psql_lex.c), the macro table and its expansion
 * (psql_macro.c), the arguments of functions defined in SQL
 * (psql_fn_args.c), table functions (psql_table_fn.c) and functions
 * (psql_function.c), and the modules INCLUDE runs (psql_modules.c).
 * psql.h offers the result (tp_psql_*); nothing outside psql/ includes
 * this.
 */
#ifndef PFC_TRACE_PROCESSOR_SQL_PSQL_PSQL_INT_H
#define PFC_TRACE_PROCESSOR_SQL_PSQL_PSQL_INT_H

#include <stdbool.h>
#include <stddef.h>

struct sqlite3;
struct sqlite3_stmt;
struct sqlite3_value;
struct sqlite3_str;
struct psql_chunk;
struct tp_agg;
struct psql_macros;
struct psql_functions;
struct tp_sql_modules;
struct psql_tables;
struct tp_psql;


/* ------------------------------------------------------------ scanning ---- */

/* Token kinds, as SQLite's tokenizer splits text (psql_lex.c). */
enum psql_tk {
	TK_EOF,
	TK_SPACE,
	TK_COMMENT,
	TK_ID,      /* a name or keyword */
	TK_QID,     /* "name", `name`, [name] */
	TK_STRING,  /* 'text' */
	TK_BLOB,    /* x'..' */
	TK_NUM,
	TK_VAR,     /* $name, :name, @name, ?N */
	TK_LP,
	TK_RP,
	TK_COMMA,
	TK_SEMI,
	TK_DOT,
	TK_BANG,    /* '!' alone: a macro call's */
	TK_OP,      /* any other operator or character */
};

struct psql_tok {
	enum psql_tk type;
	const char *p;
	size_t n;
};

/*
 * psql_lex() - The token at @p (before @end or the NUL; TK_EOF there).
 * Unterminated quotes and comments end at the end of the text.
 * Return: the position after it.
 */
const char *psql_lex(const char *p, const char *end, struct psql_tok *t);

/* psql_lex() past blanks and comments: the next significant token. */
const char *psql_lex_sig(const char *p, const char *end, struct psql_tok *t);

/* True if @t is the name @kw (any case). */
bool psql_tok_is(const struct psql_tok *t, const char *kw);

/* Past blanks and SQL comments ("--" to the end of line, C-style). */
const char *psql_skip_space(const char *p);

/*
 * psql_keyword() - Match keyword @kw case-insensitively at @p, followed by
 * something that cannot continue a name.
 * Return: the position after it and any blanks, or NULL.
 */
const char *psql_keyword(const char *p, const char *kw);

/* psql_token_end() - The end of the token starting at @p (psql_lex()). */
const char *psql_token_end(const char *p);

/* True if @c may start / continue an unquoted SQL name. */
bool psql_name_start(char c);
bool psql_name_char(char c);

/*
 * psql_statement_end() - The end of the statement starting at @p: its
 * first ';' token, or the NUL. Quoted text and comments are skipped.
 */
const char *psql_statement_end(const char *p);

/*
 * psql_close_paren() - @p is at '('; the position after its matching ')',
 * or NULL if there is none before @end.
 */
const char *psql_close_paren(const char *p, const char *end);

/* ------------------------------------------------------------- sources ---- */

/*
 * Where SQL text comes from, for tracebacks as Perfetto prints them
 * (psql_source.c): a statement of the query, of a module, a macro's body.
 * Each byte of a statement, once its macros are expanded, knows its
 * origin: a position in such a text, under the macro call it came from.
 */
struct psql_src {
	const char *name; /* "File \"stdin\"", "Module include \"m\"", ... */
	const char *text; /* the text (not NUL-terminated) */
	size_t len;
	unsigned line, col; /* of text[0], from 1 */
	bool header;        /* a query's: its traceback starts with the header */
};

struct psql_org {
	const struct psql_src *src;
	size_t off;               /* in src->text */
	size_t len;               /* for a macro call: its length there */
	const struct psql_org *up; /* the macro call this was expanded from */
};

/* A run of a layer's bytes from one origin (its byte i: org->off + skip + i). */
struct psql_seg {
	size_t start, len;
	const struct psql_org *org;
	size_t skip;
};

/* A statement's text with the origin of each byte. */
struct psql_layer {
	char *text; /* NUL-terminated; malloc'd */
	size_t len, cap;
	struct psql_seg *segs; /* malloc'd, in order */
	size_t n_segs, cap_segs;
	bool expanded;         /* a macro call was expanded into it */
	bool oom;
	/* Where a parse error is shown: the query from the end of the
	 * previous statement on, and where this statement starts in it. */
	const struct psql_src *rest;
	size_t rest_at;
};

/* Allocations that live as long as one top-level statement. */
struct psql_arena {
	struct psql_chunk *head;
};

void *psql_alloc(struct psql_arena *a, size_t n);
char *psql_strndup(struct psql_arena *a, const char *s, size_t n);
void psql_arena_free(struct psql_arena *a);

/*
 * psql_src_sub() - @out: the part [@off, @off + @len) of @s, with its own
 * line and column (as Perfetto's SqlSource::Substr).
 */
void psql_src_sub(const struct psql_src *s, size_t off, size_t len, struct psql_src *out);

/* Appends [@p, @p + @n) from origin @org (NULL: the bytes' origin is not tracked). */
void psql_layer_add(struct psql_layer *l, const char *p, size_t n, const struct psql_org *org);
/* psql_layer_add(), the first byte being @skip bytes into @org's text. */
void psql_layer_add_at(struct psql_layer *l, const char *p, size_t n, const struct psql_org *org,
		       size_t skip);
/* Appends [@start, @start + @n) of @from with their origins. */
void psql_layer_copy(struct psql_layer *l, const struct psql_layer *from, size_t start, size_t n);
void psql_layer_fini(struct psql_layer *l);

/* The origin of byte @off of @l (the last byte's for @off == len). */
const struct psql_org *psql_layer_org(const struct psql_layer *l, size_t off, size_t *in_org);

/*
 * psql_traceback() - Appends to @out the traceback of byte @off of @l:
 * "Fully expanded statement" (for a query's expanded statement), the
 * header, then one frame per text from the outermost in. A frame of the
 * statement itself shows only [@sub_start, @sub_end) of it (the part
 * that was prepared; 0 and @l->len for all of it).
 */
void psql_traceback(struct sqlite3_str *out, const struct psql_layer *l, size_t off, size_t sub_start,
		    size_t sub_end);

/* Appends the frame of offset @off of @s (with the header if @s has one). */
void psql_frame(struct sqlite3_str *out, const struct psql_src *s, size_t off);

/* -------------------------------------------------------------- errors ---- */

/* An error on its way out: the message, and whether it has its traceback. */
struct psql_err {
	char *msg; /* sqlite3_malloc'd; NULL: none yet (or out of memory) */
	bool tb;
	bool oom;
	bool sqlite; /* SQLite refused to prepare: sqlite3_errmsg() holds its words */
};

/* Sets @e to @msg (taken; NULL: out of memory), without a traceback. */
void psql_err_msg(struct psql_err *e, char *msg);
/* Sets @e to the traceback of byte @off of @l (psql_traceback()) and @msg. */
void psql_err_at(struct psql_err *e, const struct psql_layer *l, size_t off, size_t sub_start,
		 size_t sub_end, const char *msg);
/* Sets @e to the frame of offset @off of @s and @msg. */
void psql_err_frame(struct psql_err *e, const struct psql_src *s, size_t off, const char *msg);
/* Gives @e the traceback of @l's start if it has none (upstream's
 * AddTracebackIfNeeded: the statement as a whole failed). */
void psql_err_wrap(struct psql_err *e, const struct psql_layer *l);
/* Puts the frame of @s at @off before @e's traceback (an INCLUDE's). */
void psql_err_under(struct psql_err *e, const struct psql_src *s, size_t off);
void psql_err_free(struct psql_err *e);
/* A parse error at token @t of @l ("syntax error near 'x'"; at TK_EOF:
 * "incomplete SQL statement"). Return: -EINVAL (-ENOMEM). */
int psql_err_syntax(struct psql_err *e, const struct psql_layer *l, const struct psql_tok *t);

/* ------------------------------------------------------------- macros ---- */

int psql_macros_create(struct psql_macros **out);
void psql_macros_destroy(struct psql_macros *m);

/* What CREATE [OR REPLACE] PERFETTO MACRO says. */
struct psql_macro_def {
	bool replace;
	const char *name;
	size_t name_len;
	const char *args, *args_end; /* "name Type, ..." between the parentheses */
	const char *ret;
	size_t ret_len;
	struct psql_src body;        /* the body, where it is written */
};

/*
 * psql_macro_define() - Remember macro @def (copied). On failure *@err
 * (sqlite3_malloc'd) says why, as Perfetto does ("Macro already exists",
 * an unknown argument or return type), and *@err_at / *@err_len the part
 * of the statement it is about (NULL: the statement).
 * Return: 0, -EINVAL or -ENOMEM.
 */
int psql_macro_define(struct psql_macros *m, const struct psql_macro_def *def, char **err,
		      const char **err_at, size_t *err_len);

/* True if a macro named [@name, @name + @n) exists. */
bool psql_macro_exists(struct psql_macros *m, const char *name, size_t n);

/* True if [@p, @end) holds a macro call ("name!(") outside quotes. */
bool psql_has_macro_call(const char *p, const char *end);

/*
 * psql_macro_expand() - Appends @in to @out with every macro call
 * expanded; the origins of the bytes live in @a.
 * Return: 0; -ENOMEM; -EINVAL with *@err (sqlite3_malloc'd) Perfetto's
 * message (an unknown macro, a wrong argument count, a macro that calls
 * itself, calls nested deeper than 16, a result over 16 MiB) and
 * *@err_off where in @in the error is (SIZE_MAX: past its end).
 */
int psql_macro_expand(struct psql_macros *m, struct psql_arena *a, const struct psql_layer *in,
		      struct psql_layer *out, char **err, size_t *err_off);

/* ---------------------------------------------------------- functions ---- */

/* Nested calls of SQL functions (each one a nested sqlite3_step()). */
#define PSQL_FN_MAX_DEPTH 100
/* Most arguments, and most columns a function's table may have. */
#define PSQL_FN_MAX_ARGS 64

/* What an argument must be (Perfetto's sql_argument::Type); T_ANY takes anything. */
enum fn_type { T_ANY, T_LONG, T_BOOL, T_DOUBLE, T_STRING, T_BYTES };

/* The type named [@t, @t + @n) ("(table.col)" after it ignored); false if none. */
bool psql_parse_type(const char *t, size_t n, enum fn_type *out);
/* The type's name in messages: "LONG", "BOOL", ... */
const char *psql_type_name(enum fn_type t);

struct psql_memo;

/* One CREATE PERFETTO FUNCTION (psql_function.c owns it). */
struct psql_fn {
	struct psql_functions *owner;
	char *name;
	char *proto; /* "name(a LONG, b STRING)" for messages */
	char *body;
	size_t n_args;
	char *args[PSQL_FN_MAX_ARGS]; /* "$name" */
	enum fn_type types[PSQL_FN_MAX_ARGS];
	enum fn_type ret;
	size_t n_cols;                /* RETURNS TABLE(...): its columns */
	char *cols[PSQL_FN_MAX_ARGS];
	enum fn_type col_types[PSQL_FN_MAX_ARGS];
	/* Scalar: the body prepared once per level of recursion. */
	struct sqlite3_stmt **stmts;
	size_t n_stmts, level;
	bool valid;                   /* its body prepared */
	struct psql_memo *memo;       /* EXPERIMENTAL_MEMOIZE'd */
	char *delegate;               /* DELEGATES TO: the target's name */
	bool variadic;
	struct psql_fn *next;
};

struct psql_functions {
	struct sqlite3 *conn;
	struct psql_fn *head;
	int depth;        /* calls running, nested */
	bool inner_error; /* a nested call failed: its message goes up as is */
};

/* psql_fn_args.c: what a function's call passes. */

/*
 * psql_fn_check_args() - Upstream's type check of a call's arguments
 * (NULL always passes).
 * Return: NULL, or the message (sqlite3_free it).
 */
char *psql_fn_check_args(const struct psql_fn *d, int argc, struct sqlite3_value **argv);

/* Binds each argument of a call to its $name in @st. */
void psql_fn_bind(const struct psql_fn *d, struct sqlite3_stmt *st, int argc,
		  struct sqlite3_value **argv);

/* psql_table_fn.c */

/*
 * psql_table_fn_register() - Make table function @d (n_cols > 0) callable
 * as "SELECT * FROM name(args)": an eponymous virtual table whose hidden
 * columns are the arguments (psql_table_fn.c). Replaces a module of the
 * same name. @d is borrowed until it is unregistered or replaced.
 * Return: SQLite's result code.
 */
int psql_table_fn_register(struct sqlite3 *conn, struct psql_fn *d);
void psql_table_fn_unregister(struct sqlite3 *conn, const char *name);

/*
 * psql_table_fn_check() - Upstream's checks of a table function's body,
 * prepared as @st, against its declared columns.
 * Return: NULL, or the message (sqlite3_free it).
 */
char *psql_table_fn_check(const struct psql_fn *d, struct sqlite3_stmt *st);

/* psql_function.c */

int psql_functions_create(struct sqlite3 *conn, struct psql_functions **out);
/* Finalizes their statements; call it before sqlite3_close(). */
void psql_functions_destroy(struct psql_functions *f);

/* CREATE [OR REPLACE] PERFETTO FUNCTION, from the name on. */
struct psql_fn_def {
	bool replace;
	const char *text, *end;       /* "name(a LONG) RETURNS LONG AS SELECT ..." */
	const struct psql_layer *layer; /* the statement @text is in */
};

/*
 * psql_function_define() - CREATE PERFETTO FUNCTION: registers a scalar
 * SQL function that runs the body with $a bound to its argument; for
 * RETURNS TABLE(col TYPE, ...), a table function (SELECT * FROM
 * name(1)); for DELEGATES TO target, another name of the built-in target.
 * Return: 0, or -EINVAL/-ENOMEM with either *@err (sqlite3_malloc'd; with
 * *@wrap if upstream points it at the statement) or @e set.
 */
int psql_function_define(struct psql_functions *f, const struct psql_fn_def *def, char **err,
			 bool *wrap, struct psql_err *e);

/*
 * psql_function_legacy() - create_function('f(x INT)', 'INT', 'SELECT ...'):
 * a scalar function from a prototype string, always replacing.
 * Return: 0, or -EINVAL/-ENOMEM with *@err set (upstream's messages).
 */
int psql_function_legacy(struct psql_functions *f, const char *proto, const char *ret,
			 const char *body, char **err);

/* EXPERIMENTAL_MEMOIZE(name). Return: 0 or -EINVAL/-ENOMEM with *@err set. */
int psql_function_memoize(struct psql_functions *f, const char *name, char **err);

/* True if @name(@argc arguments) is a function the trace processor has in C. */
bool psql_function_is_builtin(struct psql_functions *f, const char *name, int argc);

/* ------------------------------------------------------------- shared ---- */

/*
 * psql_arg_list() - Split "name TYPE, name TYPE(...)" in [@p, @end) (a
 * prototype's arguments or a schema) and call @fn with each name and type
 * (a type's parenthesised part included: "JOINID(slice.id)"); stops at
 * @fn's first non-zero return. An empty list is no call.
 * Return: 0, -EINVAL when the list is malformed (*@bad is the token where,
 * or without @bad *@err (sqlite3_malloc'd) says so), or what @fn returned.
 */
int psql_arg_list(const char *p, const char *end,
		  int (*fn)(void *ctx, const char *name, size_t name_len, const char *type,
			    size_t type_len),
		  void *ctx, char **err, struct psql_tok *bad);

/*
 * psql_type_known() - True if [@t, @t + @n) names a PerfettoSQL column
 * type (LONG, INT, UINT, BOOL, DOUBLE, FLOAT, STRING, BYTES, PROTO, ANY,
 * TIMESTAMP, DURATION, ID, JOINID, ARGSETID; any case; a "(table.col)"
 * after ID or JOINID is allowed) or, when @macro, a macro type (Expr,
 * TableOrSubquery, ColumnName, ColumnNameList, ExprList, UnparenExprList,
 * _ProjectionFragment, _TableNameList).
 */
bool psql_type_known(const char *t, size_t n, bool macro);

/* ------------------------------------------------------------ relations ---- */

/* CREATE [OR REPLACE] PERFETTO TABLE|VIEW, parsed (psql_relation.c). */
struct psql_rel {
	bool table, replace;
	const char *name;
	size_t name_len;
	const char *schema, *schema_end; /* between the parentheses; NULL: none */
	size_t sel_start, sel_end;       /* the SELECT, in the statement's layer */
};

/*
 * psql_create_relation() - Runs @r, a statement of layer @l.
 * Return: 0, or -EINVAL/-ENOMEM with @e set as upstream words it.
 */
int psql_create_relation(struct tp_psql *p, const struct psql_layer *l, const struct psql_rel *r,
			 struct psql_err *e);

/* [CREATE [OR REPLACE] | DROP] PERFETTO INDEX, parsed. */
struct psql_index {
	bool drop, replace;
	const char *name, *table;
	size_t name_len, table_len;
	const char *cols, *cols_end; /* "a, b" between the parentheses */
};

int psql_index_stmt(struct tp_psql *p, const struct psql_layer *l, const struct psql_index *ix,
		    struct psql_err *e);

/* The names of the PERFETTO tables (indexes are for them only). */
int psql_tables_create(struct psql_tables **out);
void psql_tables_destroy(struct psql_tables *t);
/* @sorted: its sorted columns to index when first searched ("a,b"), or NULL. */
void psql_perfetto_table_add(struct tp_psql *p, const char *name, size_t n, const char *sorted);
/* The @i-th PERFETTO table and its columns not yet indexed (NULL: none).
 * Return: false past the last. */
bool psql_tables_sorted(struct psql_tables *t, size_t i, const char **name, char **sorted);
/* Its columns were indexed (or cannot be). */
void psql_tables_sorted_done(struct psql_tables *t, size_t i);

/*
 * psql_sorted_before() - Before the statement @sql runs: if its plan scans
 * a table in an inner loop (a join's or a correlated subquery's) and it
 * names a PERFETTO table with sorted columns not yet indexed, index them
 * (psql_sorted.c). Return: true if an index was made (re-prepare).
 */
bool psql_sorted_before(struct tp_psql *p, const char *sql);
bool psql_perfetto_table_has(struct tp_psql *p, const char *name, size_t n);
/* True if @name is one of the trace's own tables (a virtual table). */
bool psql_is_intrinsic_table(struct tp_psql *p, const char *name, size_t n);

/* Adds the table function perfetto_table_info(name) to @p's connection
 * (psql_table_info.c). */
int psql_table_info_register(struct tp_psql *p);

/* psql_relation_register() - __tp_fill_stat(), which PERFETTO tables'
 * fills use (psql_relation.c). Return: SQLite's code. */
int psql_relation_register(struct sqlite3 *conn);

/* ------------------------------------------------------------- modules ---- */

/* Where a module is on this connection. */
enum psql_module_state {
	PSQL_MOD_NEW,
	PSQL_MOD_RUNNING,  /* being included: a module it includes comes back to it */
	PSQL_MOD_DONE,
	PSQL_MOD_POISONED, /* it failed: later INCLUDEs fail with @poison */
};

/* One module INCLUDE can run (psql_modules.c owns it). */
struct psql_module {
	const char *name; /* dotted: "linux.perf.samples" */
	const char *sql;  /* its text */
	enum psql_module_state state;
	char *poison;     /* why it failed (malloc'd) */
};


/*
 * psql_modules_match() - The modules INCLUDE PERFETTO MODULE @name means:
 * @name itself, or for "pkg.*" every module under pkg ("*": all). Calls
 * @fn with each, in name order, until it returns non-zero.
 * Return: what @fn returned last (0 if never called for a wildcard), or
 * -EINVAL with *@err (sqlite3_malloc'd) set to Perfetto's message for an
 * unknown package or module.
 */
int psql_modules_match(struct tp_sql_modules *m, const char *name,
		       int (*fn)(void *ctx, struct psql_module *mod), void *ctx, char **err);

/*
 * psql_modules_defining() - The module, but the prelude, whose text
 * creates table, view or function @name; NULL if none does.
 */
const char *psql_modules_defining(const struct tp_sql_modules *m, const char *name);

/* Calls @fn with every module and the name of its package. */
void psql_modules_each_in_package(struct tp_sql_modules *m,
				  void (*fn)(void *ctx, const char *package, struct psql_module *mod),
				  void *ctx);

/* psql_docs.c: what the modules document. */

/* Adds the table __intrinsic_stdlib_objects over @modules (borrowed) to @conn. */
int psql_docs_register(struct sqlite3 *conn, struct tp_sql_modules *modules);

/*
 * psql_module_summary() - Module @module's one-line summary: the first
 * sentence of its header comment (its first block of "--" lines, an SPDX
 * line aside, without a leading "module:").
 * Return: the text (sqlite3_free it), or NULL if it has none.
 */
char *psql_module_summary(const char *sql, const char *module);

/* Calls @fn with every module whose name starts with @prefix, in name order. */
void psql_modules_each(struct tp_sql_modules *m, const char *prefix,
		       void (*fn)(void *ctx, struct psql_module *mod), void *ctx);

/* ------------------------------------------------------------- the state ---- */

/* What tp_psql_create() makes (psql.h). */
struct tp_psql {
	struct sqlite3 *conn;
	struct tp_agg *agg;               /* may be NULL */
	struct psql_macros *macros;
	struct psql_functions *functions;
	struct tp_sql_modules *modules;
	bool own_modules;                 /* made by tp_psql_create(), not given */
	struct psql_tables *tables;       /* the PERFETTO tables */
	int include_depth;                /* INCLUDEs being run, nested */
	int metric_depth;                 /* RUN_METRIC files being run, nested */
	/* The query statement prepared last, for the traceback of its error. */
	struct psql_arena last_arena;
	struct psql_layer last_layer;
	bool has_last;
	char *last_error;                 /* its whole error if it failed to prepare */
	/* The query text prepared from last, and the line and column of its
	 * offset doc_at (lines of a long query are counted once). */
	const char *doc_text;
	size_t doc_at;
	unsigned doc_line, doc_col;
};

/* perfetto_sql.c */

/*
 * psql_include() - INCLUDE PERFETTO MODULE @name (wildcards too) for the
 * statement @stmt (its frame heads the traceback of a failure).
 * Return: 0, or -EINVAL/-ENOMEM with @e set.
 */
int psql_include(struct tp_psql *p, const char *name, const struct psql_src *stmt,
		 struct psql_err *e);

/*
 * psql_exec_internal() - Runs every statement of @sql (PerfettoSQL
 * included) to its end, as upstream's internal Execute().
 * Return: 0, or -EINVAL/-ENOMEM with *@err (sqlite3_malloc'd) the error.
 */
int psql_exec_internal(struct tp_psql *p, const char *sql, char **err);
/* psql_exec_internal() of a text named @name in tracebacks ("Metric file \"x\""). */
int psql_exec_named(struct tp_psql *p, const char *name, const char *sql, char **err);

/* psql_builtins.c */

/* IMPORT(), create_function(), create_view_function(), EXPERIMENTAL_MEMOIZE(). */
int psql_builtins_register(struct tp_psql *p);
/* psql_metric.c */

/* RUN_METRIC('path', ['key', value]...): runs a metric file of sql/metrics/. */
int psql_metric_register(struct tp_psql *p);

/* A function's "void" result: printed as nothing. */
struct sqlite3_context;
void psql_result_void(struct sqlite3_context *ctx);

#endif

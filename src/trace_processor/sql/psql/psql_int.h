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
struct tp_agg;
struct psql_macros;
struct psql_functions;
struct psql_modules;

/* What tp_psql_create() makes (psql.h). */
struct tp_psql {
	struct sqlite3 *conn;
	struct tp_agg *agg;               /* may be NULL */
	struct psql_macros *macros;
	struct psql_functions *functions;
	struct psql_modules *modules;
	int include_depth;                /* INCLUDEs being run, nested */
};

/* ------------------------------------------------------------ scanning ---- */

/* Past blanks and SQL comments ("--" to the end of line, C-style). */
const char *psql_skip_space(const char *p);

/*
 * psql_keyword() - Match keyword @kw case-insensitively at @p, followed by
 * something that cannot continue a name.
 * Return: the position after it and any blanks, or NULL.
 */
const char *psql_keyword(const char *p, const char *kw);

/*
 * psql_token_end() - The end of the token starting at @p: a quoted string
 * or name ('..', "..", `..`, [..]; unterminated ones end at the NUL), a
 * comment, a name or number, or one other character.
 */
const char *psql_token_end(const char *p);

/* True if @c may start / continue an unquoted SQL name. */
bool psql_name_start(char c);
bool psql_name_char(char c);

/*
 * psql_statement_end() - The end of the statement starting at @p: its
 * ';' at any depth, or the NUL. Quoted text and comments are skipped.
 */
const char *psql_statement_end(const char *p);

/*
 * psql_close_paren() - @p is at '('; the position after its matching ')',
 * or NULL if there is none before @end.
 */
const char *psql_close_paren(const char *p, const char *end);

/* ------------------------------------------------------------- macros ---- */

int psql_macros_create(struct psql_macros **out);
void psql_macros_destroy(struct psql_macros *m);

/*
 * psql_macro_define() - Remember macro @name. @args: "name Type, ..."
 * between the parentheses ([@args, @args_end)); @body the text it expands
 * to. @err (sqlite3_malloc'd) on failure says why, as Perfetto does
 * ("Macro already exists", an unknown argument or return type).
 * Return: 0, -EINVAL or -ENOMEM.
 */
int psql_macro_define(struct psql_macros *m, bool replace, const char *name, size_t name_len,
		      const char *args, const char *args_end, const char *ret, size_t ret_len,
		      const char *body, const char *body_end, char **err);

/* True if [@p, @end) holds a macro call ("name!(") outside quotes. */
bool psql_has_macro_call(const char *p, const char *end);

/*
 * psql_macro_expand() - Expand every macro call in [@p, @end).
 * Return: the text (sqlite3_free it), or NULL with *@err set (NULL too
 * when out of memory): an unknown macro, a wrong argument count, a macro
 * that calls itself, calls nested deeper than 16, or a result over 16 MiB.
 */
char *psql_macro_expand(struct psql_macros *m, const char *p, const char *end, char **err);

/* ---------------------------------------------------------- functions ---- */

/* Nested calls of SQL functions (each one a nested sqlite3_step()). */
#define PSQL_FN_MAX_DEPTH 100
/* Most arguments, and most columns a function's table may have. */
#define PSQL_FN_MAX_ARGS 64

/* What an argument must be; T_ANY takes anything. */
enum fn_type { T_ANY, T_LONG, T_BOOL, T_DOUBLE, T_STRING, T_BYTES };

/* One CREATE PERFETTO FUNCTION (psql_function.c owns it). */
struct psql_fn {
	struct psql_functions *owner;
	char *name;
	char *proto; /* "name(args)" for messages */
	char *body;
	size_t n_args;
	char *args[PSQL_FN_MAX_ARGS]; /* "$name" */
	enum fn_type types[PSQL_FN_MAX_ARGS];
	size_t n_cols;                /* RETURNS TABLE(...): its columns */
	char *cols[PSQL_FN_MAX_ARGS];
	struct sqlite3_stmt *stmt;    /* scalar: the body, prepared once */
	bool busy;                    /* @stmt is being stepped (a recursive call) */
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

/*
 * psql_function_define() - CREATE PERFETTO FUNCTION: @proto is the text
 * from the name to the end of the statement ("name(a LONG) RETURNS LONG
 * AS SELECT ..."). Registers a scalar SQL function that runs the body with
 * $a bound to its argument, or, for RETURNS TABLE(col TYPE, ...), a table
 * function (SELECT * FROM name(1)).
 * Return: 0, or -EINVAL/-ENOMEM with *@err (sqlite3_malloc'd) set.
 */
int psql_function_define(struct psql_functions *f, bool replace, const char *proto,
			 const char *end, char **err);

/* ------------------------------------------------------------- shared ---- */

/*
 * psql_arg_list() - Split "name TYPE, name TYPE(...)" in [@p, @end) (a
 * prototype's arguments or a schema) and call @fn with each name and type
 * (a type's parenthesised part included: "JOINID(slice.id)"); stops at
 * @fn's first non-zero return. An empty list is no call.
 * Return: 0, -EINVAL with *@err set (sqlite3_malloc'd) when the list is
 * malformed, or what @fn returned.
 */
int psql_arg_list(const char *p, const char *end,
		  int (*fn)(void *ctx, const char *name, size_t name_len, const char *type,
			    size_t type_len),
		  void *ctx, char **err);

/*
 * psql_type_known() - True if [@t, @t + @n) names a PerfettoSQL column
 * type (LONG, INT, UINT, BOOL, DOUBLE, FLOAT, STRING, BYTES, PROTO, ANY,
 * TIMESTAMP, DURATION, ID, JOINID, ARGSETID; any case; a "(table.col)"
 * after ID or JOINID is allowed) or, when @macro, a macro type (Expr,
 * TableOrSubquery, ColumnName, ColumnNameList, ExprList, UnparenExprList,
 * _ProjectionFragment, _TableNameList).
 */
bool psql_type_known(const char *t, size_t n, bool macro);

/* ------------------------------------------------------------- modules ---- */

/* One module INCLUDE can run (psql_modules.c owns it). */
struct psql_module {
	const char *name; /* dotted: "linux.perf.samples" */
	const char *sql;  /* its text */
	bool included;    /* run (or running) on this connection */
};

int psql_modules_create(struct psql_modules **out);
void psql_modules_destroy(struct psql_modules *m);

/*
 * psql_modules_match() - The modules INCLUDE PERFETTO MODULE @name means:
 * @name itself, or for "pkg.*" every module under pkg ("*": all). Calls
 * @fn with each, in name order, until it returns non-zero.
 * Return: what @fn returned last (0 if never called for a wildcard), or
 * -EINVAL with *@err (sqlite3_malloc'd) set to Perfetto's message for an
 * unknown package or module.
 */
int psql_modules_match(struct psql_modules *m, const char *name,
		       int (*fn)(void *ctx, struct psql_module *mod), void *ctx, char **err);

/*
 * psql_modules_defining() - The module, but the prelude, whose text
 * creates table, view or function @name; NULL if none does.
 */
const char *psql_modules_defining(const struct psql_modules *m, const char *name);

/* Calls @fn with every module whose name starts with @prefix, in name order. */
void psql_modules_each(struct psql_modules *m, const char *prefix,
		       void (*fn)(void *ctx, struct psql_module *mod), void *ctx);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * psql.h - sql/psql/, PerfettoSQL: the statements Perfetto adds to SQLite
 * (INCLUDE PERFETTO MODULE, CREATE [OR REPLACE] PERFETTO TABLE / VIEW /
 * FUNCTION / MACRO / INDEX, DROP PERFETTO INDEX), macros, and the modules
 * of the standard library. The one header of the folder; psql_int.h holds
 * what its files share.
 */
#ifndef PFC_TRACE_PROCESSOR_SQL_PSQL_PSQL_H
#define PFC_TRACE_PROCESSOR_SQL_PSQL_PSQL_H

#include <stdbool.h>
#include <stddef.h>

struct sqlite3;
struct sqlite3_stmt;
struct tp_agg;
struct tp_psql;
struct tp_sql_modules;

/**
 * tp_psql_modules_create() - The modules INCLUDE can run: ours (built in
 * from sql/modules/, one package per first name component), and packages
 * registered later. It may be made before any connection (the shell's
 * --add-sql-package comes before the trace) and outlives the tp_psql
 * states given it. Return: 0 or -ENOMEM.
 */
int tp_psql_modules_create(struct tp_sql_modules **out);
void tp_psql_modules_destroy(struct tp_sql_modules *m);

/*
 * tp_psql_modules_reset() - Forget which modules ran (or failed) on the
 * connection of a destroyed state, so a new one includes them again
 * (Perfetto's RestoreInitialTables).
 */
void tp_psql_modules_reset(struct tp_sql_modules *m);

/**
 * tp_psql_modules_register() - Register SQL package @name: @n modules,
 * module i named @names[i] (its include key, "name.sub.mod") with text
 * [@sqls[i], @sqls[i] + @sql_lens[i]) (copied), as Perfetto's
 * RegisterSqlPackage: a package of that name is replaced only with
 * @allow_override and none of its modules included yet; names of
 * packages are no prefixes of each other; each module's name starts with
 * "@name.".
 * Return: 0, -ENOMEM, or -EINVAL with *@err (sqlite3_malloc'd) Perfetto's
 * message.
 */
int tp_psql_modules_register(struct tp_sql_modules *m, const char *name, size_t n,
			     const char *const *names, const char *const *sqls,
			     const size_t *sql_lens, bool allow_override, char **err);

/*
 * tp_psql_modules_list() - Calls @fn with every module INCLUDE can run:
 * its name and one-line summary (the first sentence of its header
 * comment; "" if it has none), packages in registration order, modules
 * by name.
 */
void tp_psql_modules_list(struct tp_sql_modules *m,
			  void (*fn)(void *ctx, const char *name, const char *summary), void *ctx);

/**
 * tp_psql_create() - PerfettoSQL state for @conn: its macros, functions
 * and modules. The prelude modules run now.
 * @conn: a connection from tp_sql_open() (borrowed).
 * @agg: the native GROUP BY path for plain statements, or NULL.
 * @modules: the modules INCLUDE runs (borrowed; outlives the state), or
 *           NULL for ours alone.
 * @out: set to the state; free it with tp_psql_destroy() before closing
 *       @conn (its functions' statements are finalized then).
 * Return: 0, -ENOMEM, -EIO, or -EINVAL if a prelude statement failed
 * (the message goes to stderr).
 */
int tp_psql_create(struct sqlite3 *conn, struct tp_agg *agg, struct tp_sql_modules *modules,
		   struct tp_psql **out);
void tp_psql_destroy(struct tp_psql *p);

/**
 * tp_psql_prepare() - Prepare the first statement of @sql as PerfettoSQL.
 * @p: from tp_psql_create().
 * @sql: text whose first statement is to run (more may follow).
 * @out: set to the statement to step (finalize it), or NULL if @sql holds
 *       only blanks and comments.
 * @out_tail: set to where the next statement starts in @sql.
 *
 * Macro calls ("name!(args)") are expanded first. INCLUDE PERFETTO MODULE
 * runs the module now (each runs once per connection; "pkg.*" includes
 * every module under pkg; errors are Perfetto's: "INCLUDE: Package 'x'
 * not found", "INCLUDE: unknown module 'x.y'"). CREATE [OR REPLACE]
 * PERFETTO TABLE / VIEW / FUNCTION / MACRO / INDEX and DROP PERFETTO
 * INDEX run now too. For those *@out has no result columns, or fails with
 * the message when stepped. Anything else is SQLite's statement (through
 * the native GROUP BY path when @p has one).
 *
 * Return: SQLITE_OK, or SQLite's error code (sqlite3_errmsg() says why).
 * Context: runs SQL on the connection; the caller's thread.
 */
int tp_psql_prepare(struct tp_psql *p, const char *sql, struct sqlite3_stmt **out,
		    const char **out_tail);

/*
 * tp_psql_prepare_in() - tp_psql_prepare() of the statement at @sql, a
 * position in the query text @doc (lines and columns of errors count
 * from @doc's start, as Perfetto's do: "File \"stdin\" line 2 col 1").
 */
int tp_psql_prepare_in(struct tp_psql *p, const char *doc, const char *sql,
		       struct sqlite3_stmt **out, const char **out_tail);

/*
 * tp_psql_error() - The error of the statement tp_psql_prepare() gave
 * last, as Perfetto prints it: "Traceback (most recent call last):", a
 * frame per text it came through (the query, modules, macros), then the
 * message. @sqlite_msg: sqlite3_errmsg() once stepping the statement
 * failed (a statement of ours that failed to run steps to its message).
 * Return: the text (sqlite3_free it), or NULL if out of memory.
 */
char *tp_psql_error(struct tp_psql *p, const char *sqlite_msg);

/*
 * tp_psql_module_for() - The module that creates table, view or function
 * @name (case-insensitive), for the hint after "no such table"; NULL if
 * none does. The prelude, always included, is not named.
 */
const char *tp_psql_module_for(const struct tp_psql *p, const char *name);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sql.h - the SQL layer, on the storage layer only: an in-memory SQLite
 * connection where every table of struct tp_db is an eponymous virtual
 * table read in place (vtab/), Perfetto's views (sql.c) and built-in
 * functions (funcs/), the standard library's operators (ops/), the
 * native GROUP BY path (agg/), and PerfettoSQL with its modules (psql/,
 * modules/). This is the one header of the layer the others include; the
 * facade (tp.c) makes one struct tp_sql after the import. Queries run on
 * one thread while the tables do not change.
 */
#ifndef PFC_TRACE_PROCESSOR_SQL_SQL_H
#define PFC_TRACE_PROCESSOR_SQL_SQL_H

#include <stdbool.h>
#include <stddef.h>

struct sqlite3;
struct sqlite3_stmt;
struct tp_db;
struct tp_sql;
struct tp_sql_modules;

/**
 * tp_sql_open() - Open an in-memory SQLite database over @db.
 * @db: the tables (borrowed); must outlive the connection and must not
 *      change while a statement is running (strings are returned in place).
 * @out: set to the connection; close it with sqlite3_close().
 *
 * Every table of @db is an eponymous virtual table named like tp_table.name;
 * the views (sched, track, thread_track, counters, args, stats, trace_bounds,
 * ...), Perfetto's built-in functions (trace_start(), extract_arg(), ...)
 * and the operators follow Perfetto. __tp_rows_scanned() returns how many
 * rows the virtual tables have examined so far (tests use it to prove a
 * filter was pushed down). PerfettoSQL and the prelude come with
 * tp_sql_create().
 *
 * Return: 0; -ENOMEM; -EIO if SQLite refused (the reason goes to stderr).
 * Context: allocates; the caller's thread only.
 */
int tp_sql_open(struct tp_db *db, struct sqlite3 **out);

/*
 * The PerfettoSQL modules INCLUDE can run (psql/psql.h says how): ours,
 * plus SQL packages registered before or after the engine is made.
 */
int tp_sql_modules_create(struct tp_sql_modules **out);
void tp_sql_modules_destroy(struct tp_sql_modules *m);
/* Perfetto's RegisterSqlPackage (tp_psql_modules_register()); *@err: sqlite3_free() it. */
int tp_sql_modules_register(struct tp_sql_modules *m, const char *name, size_t n,
			    const char *const *names, const char *const *sqls,
			    const size_t *sql_lens, bool allow_override, char **err);

/* Forgets which modules ran: for a new engine over the same tables. */
void tp_sql_modules_reset(struct tp_sql_modules *m);

/* Calls @fn with each module of @m: its name and one-line summary. */
void tp_sql_modules_list(struct tp_sql_modules *m,
			 void (*fn)(void *ctx, const char *name, const char *summary), void *ctx);

/**
 * tp_sql_create() - The whole SQL engine over @db: tp_sql_open()'s
 * connection, the native GROUP BY path and PerfettoSQL (the prelude
 * modules run now).
 * @db: borrowed, as for tp_sql_open().
 * @modules: what INCLUDE runs (borrowed; outlives the engine), or NULL
 *           for ours alone.
 * @out: set to the engine; free it with tp_sql_destroy().
 * Return: 0, -ENOMEM, -EIO, or -EINVAL if the prelude failed (the message
 * goes to stderr).
 */
int tp_sql_create(struct tp_db *db, struct tp_sql_modules *modules, struct tp_sql **out);
void tp_sql_destroy(struct tp_sql *s);

/* The engine's connection (borrowed). */
struct sqlite3 *tp_sql_conn(const struct tp_sql *s);

/**
 * tp_sql_prepare() - Prepare the first statement of @sql as PerfettoSQL
 * (macros, INCLUDE PERFETTO MODULE, CREATE PERFETTO ...; psql/psql.h says
 * how), plain statements through the native GROUP BY path.
 * @out: set to the statement to step (finalize it), or NULL if @sql holds
 *       only blanks and comments.
 * @out_tail: set to where the next statement starts in @sql.
 * Return: SQLITE_OK, or SQLite's error code (sqlite3_errmsg() says why).
 */
int tp_sql_prepare(struct tp_sql *s, const char *sql, struct sqlite3_stmt **out,
		   const char **out_tail);

/*
 * tp_sql_prepare_in() - tp_sql_prepare() of the statement at @sql, a
 * position in the query text @doc: errors name lines and columns of @doc.
 */
int tp_sql_prepare_in(struct tp_sql *s, const char *doc, const char *sql,
		      struct sqlite3_stmt **out, const char **out_tail);

/*
 * tp_sql_error() - The error of the statement prepared last, as Perfetto
 * prints it (its traceback, then the message); @sqlite_msg is
 * sqlite3_errmsg() after stepping it failed, NULL after prepare failed.
 * Return: the text (sqlite3_free it), or NULL if out of memory.
 */
char *tp_sql_error(struct tp_sql *s, const char *sqlite_msg);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sql.h - the SQL layer, on the storage layer only: an in-memory SQLite
 * connection where every table of struct tp_db is an eponymous virtual
 * table (vtab.c) read in place, plus Perfetto's views and functions
 * (sql.c), and the native GROUP BY path that computes the common
 * aggregate queries over whole columns (agg.h). This is the one header of
 * the layer the others include. The facade (tp.c) opens it once after the
 * import; queries run on one thread while the tables do not change.
 */
#ifndef PFC_TRACE_PROCESSOR_SQL_SQL_H
#define PFC_TRACE_PROCESSOR_SQL_SQL_H

struct sqlite3;
struct sqlite3_stmt;
struct tp_agg;
struct tp_db;

/**
 * tp_sql_open() - Open an in-memory SQLite database over @db.
 * @db: the tables (borrowed); must outlive the connection and must not
 *      change while a statement is running (strings are returned in place).
 * @out: set to the connection; close it with sqlite3_close().
 *
 * Every table of @db is an eponymous virtual table named like tp_table.name;
 * the views (sched, track, thread_track, counters, args, stats, trace_bounds,
 * ...) and the functions trace_start(), trace_end() and trace_dur() follow
 * Perfetto. __tp_rows_scanned() returns how many rows the virtual tables
 * have examined so far (tests use it to prove a filter was pushed down).
 *
 * Return: 0; -ENOMEM; -EIO if SQLite refused (the reason goes to stderr).
 * Context: allocates; the caller's thread only.
 */
int tp_sql_open(struct tp_db *db, struct sqlite3 **out);

/*
 * PerfettoSQL (perfetto_sql.c): the statements Perfetto adds to SQLite.
 */
struct tp_psql;

/**
 * tp_psql_create() - PerfettoSQL state for @conn: its macros and functions.
 * @conn: a connection from tp_sql_open() (borrowed).
 * @agg: the native GROUP BY path for plain statements, or NULL.
 * @out: set to the state; free it with tp_psql_destroy() before closing
 *       @conn (its functions' statements are finalized then).
 * Return: 0 or -ENOMEM.
 */
int tp_psql_create(struct sqlite3 *conn, struct tp_agg *agg, struct tp_psql **out);
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
 * runs our module now (modules are ours, from sql/modules/; each runs
 * once per connection; "pkg.*" includes every module under pkg; errors
 * are Perfetto's: "INCLUDE: Package 'x' not found", "INCLUDE: unknown
 * module 'x.y'"). CREATE [OR REPLACE] PERFETTO TABLE / VIEW / FUNCTION /
 * MACRO / INDEX and DROP PERFETTO INDEX run now too. For those *@out has
 * no result columns, or fails with the message when stepped. Anything
 * else is SQLite's statement (through the native GROUP BY path when
 * @p has one).
 *
 * Return: SQLITE_OK, or SQLite's error code (sqlite3_errmsg() says why).
 * Context: runs SQL on the connection; the caller's thread.
 */
int tp_psql_prepare(struct tp_psql *p, const char *sql, struct sqlite3_stmt **out,
		    const char **out_tail);

/*
 * tp_sql_include_init() - Set @conn up for INCLUDE and run the prelude
 * modules (the stack_sample views, ...). tp_sql_open() calls it.
 * Return: 0, -ENOMEM, -EIO, or -EINVAL if a prelude statement failed.
 */
int tp_sql_include_init(struct sqlite3 *conn);

/*
 * The native GROUP BY path (agg.h): SQLite reads a virtual table one row
 * and one cell at a time, which bounds "SUM(dur) FROM sched GROUP BY utid"
 * over millions of rows; statements of the common aggregate shape are
 * computed in C over whole column blocks and SQLite reads their result.
 * Anything outside the shape falls back to SQLite, so answers never
 * differ. PFC_TP_NO_FAST_AGG=1 in the environment turns it off.
 */
/*
 * tp_agg_create() - Add the __tp_agg virtual table to @conn and remember
 * its schema as it is now (tp_sql_open() done): views the user later
 * redefines are left to SQLite. PFC_TP_NO_FAST_AGG=1 turns the path off.
 * @conn, @db: borrowed; both outlive the result, and @conn is closed
 * before tp_agg_destroy().
 * Return: 0, -ENOMEM or -EIO.
 */
int tp_agg_create(struct sqlite3 *conn, struct tp_db *db, struct tp_agg **out);
void tp_agg_destroy(struct tp_agg *agg);

/*
 * tp_agg_prepare() - Try the native path for the statement [@sql, @end)
 * that SQLite already prepared as *@stmt: on success *@stmt is finalized
 * and replaced by the rewritten statement, whose result was computed now.
 * Return: 1 if replaced, 0 if left alone (not our shape, or turned off).
 */
int tp_agg_prepare(struct tp_agg *agg, const char *sql, const char *end,
		   struct sqlite3_stmt **stmt);

#endif

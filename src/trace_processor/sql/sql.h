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

/**
 * tp_sql_prepare_include() - Handle PerfettoSQL's INCLUDE PERFETTO MODULE.
 * @conn: a connection from tp_sql_open().
 * @sql: text whose first statement is to run.
 * @out: set, when the statement is an INCLUDE, to a statement to step
 *       (finalize it): it has no result columns if the module (and what it
 *       includes) is now in, or fails with Perfetto's message ("INCLUDE:
 *       Package 'x' not found", "INCLUDE: unknown module 'x.y'", or the
 *       error of a module's statement) when stepped.
 * @out_tail: set with @out: the text after the statement.
 *
 * The modules are ours (sql/modules/: linux.perf.samples, ...); each runs
 * once per connection, so including one twice does nothing. "pkg.*"
 * includes every module under pkg.
 *
 * Return: 1 if the statement was an INCLUDE (@out set), 0 if not (prepare
 * it with SQLite), -ENOMEM or -EIO.
 * Context: runs SQL on @conn; the caller's thread.
 */
int tp_sql_prepare_include(struct sqlite3 *conn, const char *sql, struct sqlite3_stmt **out,
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

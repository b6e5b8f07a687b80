/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agg.h - sql/agg/, the native GROUP BY path: the one header of the folder
 * the rest of sql/ includes (agg_int.h and agg_lex.h are its own).
 *
 * SQLite reads a virtual table one row and one cell at a time, which
 * bounds "SUM(dur) FROM sched GROUP BY utid" over millions of rows;
 * statements of the common aggregate shape are computed in C over whole
 * column blocks and SQLite reads their result. Anything outside the shape
 * falls back to SQLite, so answers never differ. PFC_TP_NO_FAST_AGG=1 in
 * the environment turns it off.
 */
#ifndef PFC_TRACE_PROCESSOR_SQL_AGG_AGG_H
#define PFC_TRACE_PROCESSOR_SQL_AGG_AGG_H

struct sqlite3;
struct sqlite3_stmt;
struct tp_agg;
struct tp_db;

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

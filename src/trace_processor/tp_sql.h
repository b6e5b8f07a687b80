/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tp_sql.h - the SQL face of the trace processor: an in-memory SQLite
 * connection where every table of struct tp_db is an eponymous virtual
 * table (tp_vtab.c) read in place, plus Perfetto's views and functions
 * (tp_sql.c). tp.c opens it once after the import; queries run on one
 * thread while the tables do not change.
 */
#ifndef PFC_TRACE_PROCESSOR_TP_SQL_H
#define PFC_TRACE_PROCESSOR_TP_SQL_H

#include <stdint.h>

struct sqlite3;
struct tp_db;
struct tp_strings;
struct tp_table;

/* Most constraints of one table scan pushed into C; the rest stay in SQLite. */
#define TP_SQL_MAX_PUSHED 16

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
 * tp_vtab_register() - Attach @t to @conn as the eponymous virtual table
 * (and module) named t->name. Internal to the trace processor.
 * @conn: the connection (borrowed).  @t: the table (borrowed; outlives @conn).
 * @strings: the pool @t's string ids point into (borrowed; outlives @conn).
 * @rows_scanned: incremented for every row a scan examines (borrowed;
 *                outlives every statement of @conn).
 *
 * Return: 0, -ENOMEM or -EIO.
 */
int tp_vtab_register(struct sqlite3 *conn, struct tp_table *t, const struct tp_strings *strings,
		     uint64_t *rows_scanned);

#endif

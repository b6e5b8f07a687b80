/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vtab.h - the SQLite virtual table over one struct tp_table (vtab.c),
 * the one header of sql/vtab/: sql.c attaches every table of the database
 * with it.
 */
#ifndef PFC_TRACE_PROCESSOR_SQL_VTAB_VTAB_H
#define PFC_TRACE_PROCESSOR_SQL_VTAB_VTAB_H

#include <stdint.h>

struct sqlite3;
struct tp_strings;
struct tp_table;

/* Most constraints of one table scan pushed into C; the rest stay in SQLite. */
#define TP_SQL_MAX_PUSHED 16

/**
 * tp_vtab_register() - Attach @t to @conn as the eponymous virtual table
 * (and module) named t->name.
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

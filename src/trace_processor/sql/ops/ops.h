/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ops.h - sql/ops/, the operators and built-ins the standard library's
 * modules stand on (span joins, interval intersection, slice and graph
 * functions, ...), one file per family: the one header of the folder.
 */
#ifndef PFC_TRACE_PROCESSOR_SQL_OPS_OPS_H
#define PFC_TRACE_PROCESSOR_SQL_OPS_OPS_H

struct sqlite3;
struct tp_db;

/*
 * tp_sql_ops_register() - Add every family's functions, table functions
 * and virtual table modules to @conn (the connection setup, sql.c, calls
 * it once, before the views and the prelude).
 * @db: the trace's tables (borrowed; outlives @conn).
 * Return: SQLITE_OK or SQLite's error code.
 */
int tp_sql_ops_register(struct sqlite3 *conn, struct tp_db *db);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ops.h - the operators and built-ins PerfettoSQL's standard library stands
 * on (sql/ops/, one file per family): table pointers, interval intersection,
 * SPAN_JOIN, mipmaps, slice layout, the slice and flow table functions, the
 * graph and tree built-ins, the array / struct / set aggregates and the
 * scalar helpers. The only header of the folder the rest of sql/ includes;
 * tp_sql_open() calls tp_ops_register() once per connection.
 */
#ifndef PFC_TRACE_PROCESSOR_SQL_OPS_OPS_H
#define PFC_TRACE_PROCESSOR_SQL_OPS_OPS_H

struct sqlite3;
struct tp_db;

/**
 * tp_ops_register() - Add every operator and built-in of sql/ops/ to @conn.
 * @conn: the connection (borrowed).
 * @db: the tables the slice, flow, args and clock built-ins read
 *      (borrowed; outlives @conn and does not change while a statement runs).
 *
 * Return: SQLITE_OK or SQLite's error code (sqlite3_errmsg() says why).
 * Context: the connection's thread; allocates.
 */
int tp_ops_register(struct sqlite3 *conn, struct tp_db *db);

#endif

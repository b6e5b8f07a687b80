/* SPDX-License-Identifier: Apache-2.0 */
/*
 * funcs.h - sql/funcs/, the scalar and table functions over the trace's
 * tables that Perfetto has built in (trace bounds, extract_arg, demangle,
 * to_ftrace, the annotated callstack, ...): the one header of the folder.
 * The standard library's operators are sql/ops/'s.
 */
#ifndef PFC_TRACE_PROCESSOR_SQL_FUNCS_FUNCS_H
#define PFC_TRACE_PROCESSOR_SQL_FUNCS_FUNCS_H

struct sqlite3;
struct tp_db;

/*
 * tp_sql_funcs_register() - Add every function of the folder to @conn.
 * @db: borrowed; outlives @conn.
 * Return: SQLITE_OK or SQLite's error code.
 */
int tp_sql_funcs_register(struct sqlite3 *conn, struct tp_db *db);

#endif

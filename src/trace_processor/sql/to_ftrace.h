/* SPDX-License-Identifier: Apache-2.0 */
/* to_ftrace.h - private to sql/: the to_ftrace(id) SQL function. */
#ifndef PFC_TRACE_PROCESSOR_SQL_TO_FTRACE_H
#define PFC_TRACE_PROCESSOR_SQL_TO_FTRACE_H

struct sqlite3;
struct tp_db;

/*
 * tp_sql_add_to_ftrace() - Add to_ftrace(id) to @conn: the ftrace_event
 * row @id as its systrace text line, as Perfetto prints it (to_ftrace.c).
 * Return: a SQLite result code.
 */
int tp_sql_add_to_ftrace(struct sqlite3 *conn, struct tp_db *db);

#endif

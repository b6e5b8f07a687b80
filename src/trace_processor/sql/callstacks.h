/* SPDX-License-Identifier: Apache-2.0 */
/*
 * callstacks.h - private to sql/: Perfetto's SQL helpers for profiler
 * callstacks (callstacks.c), added by tp_sql_open().
 */
#ifndef PFC_TRACE_PROCESSOR_SQL_CALLSTACKS_H
#define PFC_TRACE_PROCESSOR_SQL_CALLSTACKS_H

struct sqlite3;
struct tp_db;

/*
 * tp_sql_add_callstacks() - Add demangle() (and __intrinsic_demangle())
 * and the table function experimental_annotated_callstack(callsite_id)
 * over @db's stack_profile_* tables to @conn. @db is borrowed and
 * outlives @conn.
 * Return: SQLITE_OK or SQLite's error code.
 */
int tp_sql_add_callstacks(struct sqlite3 *conn, struct tp_db *db);

#endif

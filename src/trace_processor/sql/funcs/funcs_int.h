/* SPDX-License-Identifier: Apache-2.0 */
/*
 * funcs_int.h - private to sql/funcs/: the families of built-in functions
 * funcs.c registers, one file each.
 */
#ifndef PFC_TRACE_PROCESSOR_SQL_FUNCS_FUNCS_INT_H
#define PFC_TRACE_PROCESSOR_SQL_FUNCS_FUNCS_INT_H

#include <stddef.h>
#include <stdint.h>

struct sqlite3;
struct tp_db;

/*
 * tp_sql_add_callstacks() - Add demangle() (and __intrinsic_demangle())
 * and the table function experimental_annotated_callstack(callsite_id)
 * over @db's stack_profile_* tables to @conn (callstacks.c). @db is
 * borrowed and outlives @conn.
 * Return: SQLITE_OK or SQLite's error code.
 */
int tp_sql_add_callstacks(struct sqlite3 *conn, struct tp_db *db);

/*
 * tp_sql_add_to_ftrace() - Add to_ftrace(id) to @conn: the ftrace_event
 * row @id as its systrace text line, as Perfetto prints it (to_ftrace.c).
 * Return: a SQLite result code.
 */
int tp_sql_add_to_ftrace(struct sqlite3 *conn, struct tp_db *db);

/*
 * tp_gfp_flags_str() - @value of a gfp_flags field by flag names, as
 * upstream's to_ftrace() prints it, into @out (NUL-terminated, cut to
 * @cap) (gfp_flags.c). Return: its length.
 */
size_t tp_gfp_flags_str(uint64_t value, char *out, size_t cap);

/*
 * tp_sql_add_text() - Add str_split(), hash() and unhex() to @conn
 * (text.c).
 * Return: a SQLite result code.
 */
int tp_sql_add_text(struct sqlite3 *conn);

/*
 * tp_sql_add_metadata() - Add extract_metadata() and its per-machine and
 * per-trace forms to @conn (metadata.c).
 * Return: a SQLite result code.
 */
int tp_sql_add_metadata(struct sqlite3 *conn);

/*
 * tp_sql_add_regexp() - Add regexp() (2 and 3 arguments, so SQLite's
 * REGEXP operator too), regexp_extract(), regexp_replace_simple() and their
 * __intrinsic_ names to @conn (regexp.c).
 * Return: a SQLite result code.
 */
int tp_sql_add_regexp(struct sqlite3 *conn);

/*
 * tp_sql_add_window() - Add the window functions LAST_NON_NULL(x) and
 * INTERNAL_LAYOUT(ts, dur) to @conn (window.c).
 * Return: a SQLite result code.
 */
int tp_sql_add_window(struct sqlite3 *conn);

/*
 * tp_sql_add_string_agg() - Add STRING_AGG(value, separator), aggregate
 * and window function, to @conn where SQLite lacks it (string_agg.c).
 */
int tp_sql_add_string_agg(struct sqlite3 *conn);

/* tp_sql_add_zstd() - Add __intrinsic_zstd_compress() to @conn (zstd.c). */
int tp_sql_add_zstd(struct sqlite3 *conn);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shell_int.h - private to shell/: what shell.c asks of hint.c.
 */
#ifndef PFC_TRACE_PROCESSOR_SHELL_SHELL_INT_H
#define PFC_TRACE_PROCESSOR_SHELL_SHELL_INT_H

#include <stddef.h>

struct buf;
struct sqlite3;

/*
 * shell_column_hint() - Explain a "no such column: X" error: which table of
 * the statement lacks X, and either the table (joined through utid, upid or
 * track_id) that has it, or the nearest column name of the table.
 * @db:      the connection the statement failed on (borrowed; only read).
 * @errmsg:  SQLite's message for the failure.
 * @sql:     the failing statement, @sql_len bytes (not NUL-terminated).
 * @out:     receives one line of text, without "Hint: " or a newline.
 * Return: 1 if a hint was appended to @out, 0 if there is none (not a
 * missing column, or no table of the statement found), -ENOMEM.
 */
int shell_column_hint(struct sqlite3 *db, const char *errmsg, const char *sql, size_t sql_len,
		      struct buf *out);

/*
 * shell_module_hint() - For "no such table: X" or "no such function: X"
 * when a module of the standard library defines X: appends the module's
 * name to @out.
 * Return: 1 if appended, 0 if no module defines it, -ENOMEM.
 */
int shell_module_hint(struct sqlite3 *db, const char *errmsg, struct buf *out);

#endif

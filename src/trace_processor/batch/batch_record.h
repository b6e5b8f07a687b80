/* SPDX-License-Identifier: Apache-2.0 */
/*
 * batch_record.h - the file a pfc_batch_query worker writes for one trace
 * and the parent reads back: one line per fact, fields split by tabs,
 * tabs, newlines and backslashes in text escaped (\t \n \r \\).
 *   M <start_ns> <end_ns> <machines>   the trace imported (values typed)
 *   X <message>                        the trace failed to import
 *   C <query> <column>...              the query's result columns
 *   R <query> <value>...               one result row
 *   E <query> <message>                the query failed
 *   Z                                  the trace is done (a file without
 *                                      it was cut short: its worker died)
 * A value is its type letter then its text: n (NULL), i (integer), f
 * (real, %.17g), s (text), b (blob, hex).
 */
#ifndef PFC_TRACE_PROCESSOR_BATCH_BATCH_RECORD_H
#define PFC_TRACE_PROCESSOR_BATCH_BATCH_RECORD_H

#include <stddef.h>
#include <stdio.h>

struct sqlite3_stmt;

void batch_record_meta(FILE *f, struct sqlite3_stmt *st);
void batch_record_failed(FILE *f, const char *msg);
void batch_record_columns(FILE *f, size_t query, struct sqlite3_stmt *st);
void batch_record_row(FILE *f, size_t query, struct sqlite3_stmt *st);
void batch_record_error(FILE *f, size_t query, const char *msg);
void batch_record_done(FILE *f);

/* One value as read back: @type is n, i, f, s or b; @text is unescaped. */
struct batch_value {
	char type;
	char *text;
};

/* One line as read back; owns its fields until the next read or fini. */
struct batch_line {
	char kind;               /* M, X, C, R, E or Z */
	size_t query;            /* C, R, E */
	struct batch_value *v;   /* M: 3 values; C: names (type 's'); R: values */
	size_t n;
	char *msg;               /* X, E */
	char *raw;               /* the line, split in place */
	size_t raw_cap;
	size_t v_cap;
};

/*
 * batch_record_next() - Read the next line of @f into @line.
 * Return: 1 for a line, 0 at the end, -1 for a malformed line (which a
 * worker that was killed mid-write leaves: the caller reports it).
 */
int batch_record_next(FILE *f, struct batch_line *line);
void batch_line_fini(struct batch_line *line);

#endif

// SPDX-License-Identifier: Apache-2.0
/*
 * text.c - string built-ins the standard library's modules call, with
 * Perfetto's behaviour: str_split(text, delimiter, n), the n-th field
 * (from 0) of text cut at each delimiter, NULL past the last field or for
 * a non-text input; an empty or non-text delimiter, or a negative or
 * non-integer field number, is an error.
 */
#include <sqlite3.h>
#include <string.h>

#include "trace_processor/sql/funcs/funcs_int.h"

static void fn_str_split(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *s, *delim, *hit;
	size_t dlen;
	sqlite3_int64 field;

	(void)argc;
	if (sqlite3_value_type(argv[1]) != SQLITE_TEXT ||
	    !(delim = (const char *)sqlite3_value_text(argv[1])) || !*delim) {
		sqlite3_result_error(ctx, "str_split: delimiter must be a non-empty string", -1);
		return;
	}
	if (sqlite3_value_type(argv[2]) != SQLITE_INTEGER ||
	    (field = sqlite3_value_int64(argv[2])) < 0) {
		sqlite3_result_error(ctx, "str_split: field number must be a non-negative integer",
				     -1);
		return;
	}
	if (sqlite3_value_type(argv[0]) != SQLITE_TEXT ||
	    !(s = (const char *)sqlite3_value_text(argv[0])))
		return;
	dlen = strlen(delim);
	/* Skip @field delimiters; then the field runs to the next one. */
	for (; field > 0; field--) {
		hit = strstr(s, delim);
		if (!hit)
			return;
		s = hit + dlen;
	}
	hit = strstr(s, delim);
	sqlite3_result_text(ctx, s, hit ? (int)(hit - s) : -1, SQLITE_TRANSIENT);
}

int tp_sql_add_text(struct sqlite3 *conn)
{
	return sqlite3_create_function_v2(conn, "str_split", 3,
					  SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
					  fn_str_split, NULL, NULL, NULL);
}

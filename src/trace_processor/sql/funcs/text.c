// SPDX-License-Identifier: Apache-2.0
/*
 * text.c - string built-ins the standard library's modules call, with
 * Perfetto's behaviour: str_split(text, delimiter, n), the n-th field
 * (from 0) of text cut at each delimiter, NULL past the last field or for
 * a non-text input; an empty or non-text delimiter, or a negative or
 * non-integer field number, is an error.
 */
#include <ctype.h>
#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <stdint.h>
#include <stdio.h>
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

#define FNV_OFFSET 14695981039346656037ULL
#define FNV_PRIME 1099511628211ULL

static uint64_t fnv_bytes(uint64_t h, const unsigned char *p, size_t n)
{
	while (n--)
		h = (h ^ *p++) * FNV_PRIME;
	return h;
}

static void fn_hash(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	uint64_t h = FNV_OFFSET;
	unsigned char le[8];
	int i, b;

	for (i = 0; i < argc; i++) {
		uint64_t v;
		const unsigned char *s;

		switch (sqlite3_value_type(argv[i])) {
		case SQLITE_INTEGER:
			v = (uint64_t)sqlite3_value_int64(argv[i]);
			for (b = 0; b < 8; b++)
				le[b] = (unsigned char)(v >> (8 * b));
			h = fnv_bytes(h, le, sizeof(le));
			break;
		case SQLITE_TEXT:
			s = sqlite3_value_text(argv[i]);
			h = fnv_bytes(h, s, strlen((const char *)s));
			break;
		default: {
			char msg[48];

			snprintf(msg, sizeof(msg), "HASH: arg %d has unknown type", i);
			sqlite3_result_error(ctx, msg, -1);
			return;
		}
		}
	}
	sqlite3_result_int64(ctx, (sqlite3_int64)h);
}

static void fn_unhex(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *s, *p;
	char *end;
	long long v;

	(void)argc;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
		return;
	if (sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
		sqlite3_result_error(ctx, "UNHEX: argument must be text", -1);
		return;
	}
	s = (const char *)sqlite3_value_text(argv[0]);
	for (p = s; *p && isspace((unsigned char)*p); p++)
		;
	if (!*p) {
		sqlite3_result_error(ctx, "UNHEX: input is empty or only whitespace", -1);
		return;
	}
	errno = 0;
	v = strtoll(p, &end, 16);
	while (*end && isspace((unsigned char)*end))
		end++;
	if (errno || end == p || *end) {
		sqlite3_result_error(ctx, "UNHEX: invalid or out of range hex string", -1);
		return;
	}
	sqlite3_result_int64(ctx, v);
}

/* @name and __intrinsic_@name. */
static int add_pair(struct sqlite3 *conn, const char *name, int n,
		    void (*fn)(sqlite3_context *, int, sqlite3_value **))
{
	char intrinsic[64];
	int rc;

	snprintf(intrinsic, sizeof(intrinsic), "__intrinsic_%s", name);
	rc = sqlite3_create_function_v2(conn, name, n,
					SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL, fn,
					NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(conn, intrinsic, n,
						SQLITE_UTF8 | SQLITE_DETERMINISTIC |
							SQLITE_INNOCUOUS,
						NULL, fn, NULL, NULL, NULL);
	return rc;
}

int tp_sql_add_text(struct sqlite3 *conn)
{
	int rc = sqlite3_create_function_v2(conn, "str_split", 3,
					    SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
					    NULL, fn_str_split, NULL, NULL, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(conn, "hash", -1,
						SQLITE_UTF8 | SQLITE_DETERMINISTIC |
							SQLITE_INNOCUOUS,
						NULL, fn_hash, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = add_pair(conn, "unhex", 1, fn_unhex);
	return rc;
}

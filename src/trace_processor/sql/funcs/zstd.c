// SPDX-License-Identifier: Apache-2.0
/*
 * zstd.c - __intrinsic_zstd_compress(x) (funcs_int.h): x, a string or a
 * blob, as one zstd frame (a blob), at upstream's level; NULL gives NULL,
 * a number is an error, with upstream's messages.
 */
#include <limits.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <zstd.h>

#include "trace_processor/sql/funcs/funcs_int.h"

/* Upstream's level: a good ratio for text at a fair speed. */
#define ZSTD_LEVEL 9

static void fn_zstd_compress(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const void *src;
	size_t n, cap, out_n;
	void *out;

	(void)argc;
	switch (sqlite3_value_type(argv[0])) {
	case SQLITE_NULL:
		return;
	case SQLITE_TEXT:
		src = sqlite3_value_text(argv[0]);
		break;
	case SQLITE_BLOB:
		src = sqlite3_value_blob(argv[0]);
		break;
	default:
		sqlite3_result_error(ctx, "ZSTD: argument must be a string or blob", -1);
		return;
	}
	n = (size_t)sqlite3_value_bytes(argv[0]);
	cap = ZSTD_compressBound(n);
	out = malloc(cap ? cap : 1);
	if (!out) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	out_n = ZSTD_compress(out, cap, src ? src : "", n, ZSTD_LEVEL);
	if (ZSTD_isError(out_n) || out_n > INT_MAX) {
		free(out);
		sqlite3_result_error(ctx, "ZSTD: compression failed", -1);
		return;
	}
	sqlite3_result_blob(ctx, out, (int)out_n, free);
}

int tp_sql_add_zstd(struct sqlite3 *conn)
{
	return sqlite3_create_function_v2(conn, "__intrinsic_zstd_compress", 1,
					  SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
					  fn_zstd_compress, NULL, NULL, NULL);
}

// SPDX-License-Identifier: Apache-2.0
/*
 * psql_fuzz.c - libFuzzer target for PerfettoSQL (sql/psql/perfetto_sql.c and
 * the macro, function and scanner files under it): the input is SQL text,
 * run statement by statement through tp_prepare() as the shell runs a -q
 * file, on a trace processor with an empty trace. Statements may define
 * tables, views, functions and macros that later ones use. SQLite's own
 * work is bounded (a progress handler stops a statement after a few
 * million steps) so that a recursive CTE is not reported as a hang.
 * Crashes, leaks, UB, hangs and a tail that does not move forward are
 * findings.
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/trace_processor.h"

/* Longest input tried, and SQLite steps allowed per statement. */
#define PSQL_FUZZ_MAX_BYTES 4096
#define PSQL_FUZZ_MAX_STEPS 200000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int stop_long(void *user)
{
	int *left = user;

	return --*left <= 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tp *tp = NULL;
	const char *pos, *tail;
	sqlite3_stmt *st;
	sqlite3 *conn;
	char *sql;
	int left;

	if (size > PSQL_FUZZ_MAX_BYTES)
		return 0;
	sql = malloc(size + 1);
	if (!sql)
		return 0;
	memcpy(sql, data, size);
	sql[size] = '\0';
	if (tp_create(NULL, &tp) < 0 || !(conn = tp_sqlite(tp)))
		goto out;
	sqlite3_progress_handler(conn, 100, stop_long, &left);
	for (pos = sql; *pos; pos = tail) {
		st = NULL;
		tail = NULL;
		left = PSQL_FUZZ_MAX_STEPS / 100;
		if (tp_prepare(tp, pos, &st, &tail) != SQLITE_OK)
			break;
		if (!tail || tail <= pos || tail > sql + size)
			abort(); /* the shell would loop or read past the text */
		if (st)
			while (sqlite3_step(st) == SQLITE_ROW)
				;
		sqlite3_finalize(st);
	}
out:
	tp_destroy(tp);
	free(sql);
	return 0;
}

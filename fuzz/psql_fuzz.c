// SPDX-License-Identifier: Apache-2.0
/*
 * psql_fuzz.c - libFuzzer target for PerfettoSQL (sql/psql/: the scanner,
 * macros and intrinsics, the CREATE PERFETTO statements, functions, the
 * legacy SQL functions, INCLUDE and packages, tracebacks): the input is
 * SQL text, run statement by statement through tp_prepare_in() as the
 * shell runs a -q file, on a trace processor with an empty trace and a
 * small SQL package of its own (modules that include each other, one in a
 * cycle, one failing, one with a macro), so INCLUDE's paths are reachable.
 * Statements may define tables, views, functions and macros that later
 * ones use, and the operators of sql/ops/ over them (SPAN_JOIN and its
 * left and outer forms over overlapping, negative-dur, NULL- or
 * text-partitioned spans; the clock built-ins): seeds in corpus/psql/. Every failure's traceback is built (tp_error()), as the shell
 * prints it. SQLite's own
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

/* The package every run has: name, then module name and text pairs. */
static const char *const k_package[] = {
	"fz.a", "INCLUDE PERFETTO MODULE fz.b; CREATE PERFETTO VIEW fz_a AS SELECT b FROM fz_b;",
	"fz.b", ("CREATE PERFETTO TABLE fz_b AS SELECT 1 AS b;\n"
		 "CREATE PERFETTO MACRO fz_m(x Expr) RETURNS Expr AS ($x + 1);"),
	"fz.loop", "INCLUDE PERFETTO MODULE fz.loop2;",
	"fz.loop2", "INCLUDE PERFETTO MODULE fz.loop;",
	"fz.bad", ("CREATE PERFETTO TABLE fz_ok AS SELECT 1 AS x;\n"
		   "SELECT nope FROM fz_ok;"),
	"fz.sub.c", "CREATE PERFETTO FUNCTION fz_c(x LONG) RETURNS LONG AS SELECT fz_m!($x);",
};

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
	if (tp_create(NULL, &tp) < 0)
		goto out;
	{
		const char *names[6], *sqls[6];
		size_t lens[6], i;
		char *err = NULL;

		for (i = 0; i < 6; i++) {
			names[i] = k_package[2 * i];
			sqls[i] = k_package[2 * i + 1];
			lens[i] = strlen(sqls[i]);
		}
		if (tp_register_sql_package(tp, "fz", 6, names, sqls, lens, false, &err) < 0)
			abort(); /* a valid package must register */
		free(err);
	}
	if (!(conn = tp_sqlite(tp)))
		goto out;
	sqlite3_progress_handler(conn, 100, stop_long, &left);
	for (pos = sql; *pos; pos = tail) {
		st = NULL;
		tail = NULL;
		left = PSQL_FUZZ_MAX_STEPS / 100;
		if (tp_prepare_in(tp, sql, pos, &st, &tail) != SQLITE_OK) {
			sqlite3_free(tp_error(tp, NULL));
			break;
		}
		if (!tail || tail <= pos || tail > sql + size)
			abort(); /* the shell would loop or read past the text */
		if (st) {
			int rc;

			while ((rc = sqlite3_step(st)) == SQLITE_ROW)
				;
			if (rc != SQLITE_DONE)
				sqlite3_free(tp_error(tp, sqlite3_errmsg(conn)));
		}
		sqlite3_finalize(st);
	}
out:
	tp_destroy(tp);
	free(sql);
	return 0;
}

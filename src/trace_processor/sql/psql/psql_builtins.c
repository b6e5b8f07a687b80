// SPDX-License-Identifier: Apache-2.0
/*
 * psql_builtins.c - the SQL functions that drive PerfettoSQL from a query
 * (psql_int.h), as upstream has them: IMPORT('module') (an INCLUDE),
 * create_function('f(x INT)', 'INT', 'SELECT ...') (a scalar function,
 * replacing), create_view_function('f(x INT)', 'col INT', 'SELECT ...')
 * (CREATE OR REPLACE PERFETTO FUNCTION ... RETURNS TABLE) and
 * EXPERIMENTAL_MEMOIZE('f'). Each returns "void": a NULL carrying the
 * pointer type "VOID", which the shell prints nothing for.
 */
#include "trace_processor/sql/psql/psql_int.h"

#include <sqlite3.h>
#include <stddef.h>
#include <string.h>

void psql_result_void(struct sqlite3_context *ctx)
{
	static char k_void;

	sqlite3_result_pointer(ctx, &k_void, "VOID", NULL);
}

static void fail(sqlite3_context *ctx, char *msg)
{
	if (msg)
		sqlite3_result_error(ctx, msg, -1);
	else
		sqlite3_result_error_nomem(ctx);
	sqlite3_free(msg);
}

static void fn_import(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct tp_psql *p = sqlite3_user_data(ctx);
	char *sql, *err = NULL;

	(void)argc;
	if (sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
		sqlite3_result_error(ctx, "IMPORT: argument must be string", -1);
		return;
	}
	sql = sqlite3_mprintf("INCLUDE PERFETTO MODULE %s;", sqlite3_value_text(argv[0]));
	if (!sql) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	if (psql_exec_internal(p, sql, &err) < 0)
		fail(ctx, err);
	else
		psql_result_void(ctx);
	sqlite3_free(sql);
}

static void fn_create_function(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct tp_psql *p = sqlite3_user_data(ctx);
	char *err = NULL;

	(void)argc;
	if (sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
		sqlite3_result_error(ctx,
				     "CREATE_FUNCTION: function prototype (first argument) must be "
				     "string",
				     -1);
		return;
	}
	if (sqlite3_value_type(argv[1]) != SQLITE_TEXT) {
		sqlite3_result_error(ctx,
				     "CREATE_FUNCTION: return type (second argument) must be string",
				     -1);
		return;
	}
	if (sqlite3_value_type(argv[2]) != SQLITE_TEXT) {
		sqlite3_result_error(ctx,
				     "CREATE_FUNCTION: SQL definition (third argument) must be "
				     "string",
				     -1);
		return;
	}
	if (psql_function_legacy(p->functions, (const char *)sqlite3_value_text(argv[0]),
				 (const char *)sqlite3_value_text(argv[1]),
				 (const char *)sqlite3_value_text(argv[2]), &err) < 0)
		fail(ctx, err);
	else
		psql_result_void(ctx);
}

static void fn_create_view_function(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct tp_psql *p = sqlite3_user_data(ctx);
	const char *proto = (const char *)sqlite3_value_text(argv[0]), *paren;
	char *sql, *err = NULL;
	size_t i;

	(void)argc;
	if (sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
		sqlite3_result_error(ctx,
				     "CREATE_VIEW_FUNCTION: function prototype (first argument) "
				     "must be string",
				     -1);
		return;
	}
	if (sqlite3_value_type(argv[1]) != SQLITE_TEXT) {
		sqlite3_result_error(ctx,
				     "CREATE_VIEW_FUNCTION: return prototype (second argument) "
				     "must be string",
				     -1);
		return;
	}
	if (sqlite3_value_type(argv[2]) != SQLITE_TEXT) {
		sqlite3_result_error(ctx,
				     "CREATE_VIEW_FUNCTION: SQL definition (third argument) must "
				     "be string",
				     -1);
		return;
	}
	paren = proto ? strchr(proto, '(') : NULL;
	if (!paren) {
		sqlite3_result_error(ctx, "unable to find bracket starting argument list", -1);
		return;
	}
	for (i = 0; proto + i < paren; i++) {
		char c = proto[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_') ||
		    paren == proto) {
			fail(ctx, sqlite3_mprintf("function name %.*s is not alphanumeric",
						  (int)(paren - proto), proto));
			return;
		}
	}
	sql = sqlite3_mprintf("CREATE OR REPLACE PERFETTO FUNCTION %s RETURNS TABLE(%s) AS %s;",
			      proto, sqlite3_value_text(argv[1]), sqlite3_value_text(argv[2]));
	if (!sql) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	if (psql_exec_internal(p, sql, &err) < 0)
		fail(ctx, err);
	else
		psql_result_void(ctx);
	sqlite3_free(sql);
}

static void fn_memoize(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct tp_psql *p = sqlite3_user_data(ctx);
	char *err = NULL;

	(void)argc;
	if (sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
		sqlite3_result_error(ctx, "EXPERIMENTAL_MEMOIZE: function_name must be string", -1);
		return;
	}
	if (psql_function_memoize(p->functions, (const char *)sqlite3_value_text(argv[0]), &err) <
	    0)
		fail(ctx, err);
	else
		psql_result_void(ctx);
}

int psql_builtins_register(struct tp_psql *p)
{
	static const struct {
		const char *name;
		int argc;
		void (*fn)(sqlite3_context *, int, sqlite3_value **);
	} k_fns[] = {
		{"import", 1, fn_import},
		{"create_function", 3, fn_create_function},
		{"create_view_function", 3, fn_create_view_function},
		{"experimental_memoize", 1, fn_memoize},
	};
	size_t i;
	int rc = SQLITE_OK;

	for (i = 0; i < sizeof(k_fns) / sizeof(k_fns[0]) && rc == SQLITE_OK; i++)
		rc = sqlite3_create_function_v2(p->conn, k_fns[i].name, k_fns[i].argc, SQLITE_UTF8,
						p, k_fns[i].fn, NULL, NULL, NULL);
	return rc;
}

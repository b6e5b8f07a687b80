// SPDX-License-Identifier: Apache-2.0
/*
 * psql.c - PerfettoSQL's state on one connection (psql.h: tp_psql_create,
 * tp_psql_destroy, tp_psql_module_for): its macros, functions, modules and
 * PERFETTO tables, the functions that drive it from SQL (psql_builtins.c)
 * and the prelude, run when it is made. Statements are perfetto_sql.c's.
 */
#include "trace_processor/sql/psql/psql.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

#include "trace_processor/sql/psql/psql_int.h"

/* __tp_module_for(name): the module that makes @name, for the shell's hint. */
static void fn_module_for(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const struct tp_psql *p = sqlite3_user_data(ctx);
	const char *m = tp_psql_module_for(p, (const char *)sqlite3_value_text(argv[0]));

	(void)argc;
	if (m)
		sqlite3_result_text(ctx, m, -1, SQLITE_TRANSIENT);
}

const char *tp_psql_module_for(const struct tp_psql *p, const char *name)
{
	return psql_modules_defining(p->modules, name);
}

/* __tp_error(msg): fails with @msg; what a failed PerfettoSQL statement steps. */
static void fn_error(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *msg = (const char *)sqlite3_value_text(argv[0]);

	(void)argc;
	sqlite3_result_error(ctx, msg ? msg : "PerfettoSQL statement failed", -1);
}

int tp_psql_create(struct sqlite3 *conn, struct tp_agg *agg, struct tp_sql_modules *modules,
		   struct tp_psql **out)
{
	struct tp_psql *p = calloc(1, sizeof(*p));
	struct psql_src none = {.name = "Trace Processor Internal", .text = "", .line = 1,
				.col = 1};
	struct psql_err e = {0};
	int rc;

	if (!p)
		return -ENOMEM;
	p->conn = conn;
	p->agg = agg;
	p->modules = modules;
	p->own_modules = !modules;
	if (psql_macros_create(&p->macros) < 0 || psql_functions_create(conn, &p->functions) < 0 ||
	    (!modules && tp_psql_modules_create(&p->modules) < 0) ||
	    psql_tables_create(&p->tables) < 0) {
		tp_psql_destroy(p);
		return -ENOMEM;
	}
	rc = sqlite3_create_function_v2(conn, "__tp_error", 1, SQLITE_UTF8, NULL, fn_error, NULL,
					NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(conn, "__tp_module_for", 1, SQLITE_UTF8, p,
						fn_module_for, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(conn, "CREATE TEMP TABLE IF NOT EXISTS __tp_psql_noop(x)", NULL,
				  NULL, NULL);
	if (rc == SQLITE_OK)
		rc = psql_builtins_register(p);
	if (rc == SQLITE_OK)
		rc = psql_metric_register(p);
	if (rc == SQLITE_OK)
		rc = psql_docs_register(conn, p->modules);
	if (rc == SQLITE_OK)
		rc = psql_table_info_register(p);
	if (rc == SQLITE_OK)
		rc = psql_relation_register(conn);
	if (rc != SQLITE_OK) {
		tp_psql_destroy(p);
		return rc == SQLITE_NOMEM ? -ENOMEM : -EIO;
	}
	/* The prelude is there before any query, as Perfetto's. */
	rc = psql_include(p, "prelude.*", &none, &e);
	if (rc < 0) {
		fprintf(stderr, "trace_processor: %s\n", e.msg ? e.msg : "out of memory");
		psql_err_free(&e);
		tp_psql_destroy(p);
		return rc;
	}
	psql_err_free(&e);
	*out = p;
	return 0;
}

void tp_psql_destroy(struct tp_psql *p)
{
	static const char *const k_fns[] = {"import", "create_function", "create_view_function",
					    "experimental_memoize"};
	size_t i;

	if (!p)
		return;
	/* Nothing on the connection may reach @p once it is gone. */
	if (p->conn) {
		sqlite3_create_function_v2(p->conn, "__tp_module_for", 1, SQLITE_UTF8, NULL, NULL,
					   NULL, NULL, NULL);
		for (i = 0; i < sizeof(k_fns) / sizeof(k_fns[0]); i++)
			sqlite3_create_function_v2(p->conn, k_fns[i], i == 0 || i == 3 ? 1 : 3,
						   SQLITE_UTF8, NULL, NULL, NULL, NULL, NULL);
	}
	psql_macros_destroy(p->macros);
	psql_functions_destroy(p->functions);
	if (p->own_modules)
		tp_psql_modules_destroy(p->modules);
	psql_tables_destroy(p->tables);
	psql_layer_fini(&p->last_layer);
	psql_arena_free(&p->last_arena);
	free(p->last_error);
	free(p);
}

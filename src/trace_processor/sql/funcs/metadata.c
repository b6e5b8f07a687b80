// SPDX-License-Identifier: Apache-2.0
/*
 * metadata.c - the metadata lookups Perfetto has built in:
 * extract_metadata(name), extract_metadata_for_machine(machine_id, name),
 * extract_metadata_for_trace(trace_id, name) and
 * extract_exact_metadata(machine_id, trace_id, name): the first metadata
 * row (by id) of that name (and machine, trace), its string value if it
 * has one, else its integer value; NULL if no row matches or an argument
 * is NULL. They read the metadata table through SQL: a handful of rows.
 */
#include <sqlite3.h>
#include <stddef.h>

#include "trace_processor/sql/funcs/funcs_int.h"

/* The WHERE clause of each lookup after the name (?1); its arguments
 * follow the name in the call as ?2, ?3. */
static const char *const k_lookup[] = {
	"",
	" AND machine_id = ?2",
	" AND trace_id = ?2",
	" AND machine_id = ?2 AND trace_id = ?3",
};

static void lookup(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	sqlite3 *conn = sqlite3_context_db_handle(ctx);
	int kind = (int)(sqlite3_int64)sqlite3_user_data(ctx);
	sqlite3_stmt *st = NULL;
	char *sql;
	int i, rc;

	for (i = 0; i < argc; i++)
		if (sqlite3_value_type(argv[i]) == SQLITE_NULL)
			return;
	sql = sqlite3_mprintf("SELECT str_value, int_value FROM metadata WHERE name = ?1%s "
			      "ORDER BY id LIMIT 1",
			      k_lookup[kind]);
	if (!sql) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	rc = sqlite3_prepare_v2(conn, sql, -1, &st, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK) {
		sqlite3_result_error(ctx, sqlite3_errmsg(conn), -1);
		return;
	}
	/* The name is the last argument; the ids come before it. */
	sqlite3_bind_value(st, 1, argv[argc - 1]);
	for (i = 0; i < argc - 1; i++)
		sqlite3_bind_value(st, i + 2, argv[i]);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		int col = sqlite3_column_type(st, 0) != SQLITE_NULL ? 0 : 1;

		sqlite3_result_value(ctx, sqlite3_column_value(st, col));
	} else if (rc != SQLITE_DONE) {
		sqlite3_result_error(ctx, sqlite3_errmsg(conn), -1);
	}
	sqlite3_finalize(st);
}

int tp_sql_add_metadata(struct sqlite3 *conn)
{
	static const struct {
		const char *name;
		int n_args;
	} k_fns[] = {
		{"extract_metadata", 1},
		{"extract_metadata_for_machine", 2},
		{"extract_metadata_for_trace", 2},
		{"extract_exact_metadata", 3},
	};
	size_t i;
	int rc = SQLITE_OK;

	for (i = 0; i < sizeof(k_fns) / sizeof(k_fns[0]) && rc == SQLITE_OK; i++)
		rc = sqlite3_create_function_v2(conn, k_fns[i].name, k_fns[i].n_args, SQLITE_UTF8,
						(void *)(sqlite3_int64)i, lookup, NULL, NULL, NULL);
	return rc;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * ops.c - registers the operator families of sql/ops/ (ops.h): each family
 * file offers one registration call, listed here.
 */
#include "trace_processor/sql/ops/ops.h"

#include <sqlite3.h>
#include <stddef.h>

int tp_sql_ops_register(struct sqlite3 *conn, struct tp_db *db)
{
	static int (*const k_families[])(struct sqlite3 *, struct tp_db *) = {
		NULL, /* no family yet */
	};
	size_t i;
	int rc = SQLITE_OK;

	for (i = 0; i < sizeof(k_families) / sizeof(k_families[0]) && rc == SQLITE_OK; i++)
		if (k_families[i])
			rc = k_families[i](conn, db);
	return rc;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * ops.c - adds every family of sql/ops/ to a connection; tp_sql_open()
 * calls it once, before the views and the prelude modules that use them.
 */
#include "trace_processor/sql/ops/ops.h"

#include <sqlite3.h>

#include "trace_processor/sql/ops/ops_int.h"

int tp_ops_register(sqlite3 *conn, struct tp_db *db)
{
	int rc = ops_table_ptr_register(conn);

	if (rc == SQLITE_OK)
		rc = ops_types_register(conn);
	if (rc == SQLITE_OK)
		rc = ops_interval_register(conn);
	if (rc == SQLITE_OK)
		rc = ops_counter_register(conn);
	if (rc == SQLITE_OK)
		rc = ops_mipmap_register(conn);
	if (rc == SQLITE_OK)
		rc = ops_layout_register(conn, db);
	if (rc == SQLITE_OK)
		rc = ops_slice_fns_register(conn, db);
	if (rc == SQLITE_OK)
		rc = ops_args_register(conn, db);
	if (rc == SQLITE_OK)
		rc = ops_flamegraph_register(conn);
	if (rc == SQLITE_OK)
		rc = ops_heap_graph_fg_register(conn, db);
	if (rc == SQLITE_OK)
		rc = ops_winscope_sf_register(conn, db);
	if (rc == SQLITE_OK)
		rc = ops_winscope_args_register(conn, db);
	if (rc == SQLITE_OK)
		rc = ops_span_join_register(conn);
	if (rc == SQLITE_OK)
		rc = ops_clock_register(conn, db);
	if (rc == SQLITE_OK)
		rc = ops_graph_search_register(conn);
	if (rc == SQLITE_OK)
		rc = ops_critical_path_register(conn);
	if (rc == SQLITE_OK)
		rc = ops_dominator_register(conn);
	if (rc == SQLITE_OK)
		rc = ops_tree_partition_register(conn);
	if (rc == SQLITE_OK)
		rc = ops_graph_scan_register(conn);
	if (rc == SQLITE_OK)
		rc = ops_tree_table_register(conn);
	return rc;
}

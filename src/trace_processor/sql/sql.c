// SPDX-License-Identifier: Apache-2.0
/*
 * sql.c - opens the in-memory SQLite connection over a struct tp_db
 * (tp_sql_open): one eponymous virtual table per table (vtab/), the
 * built-in functions (funcs/) and operators (ops/), then Perfetto's views
 * on top. engine.c puts PerfettoSQL over it.
 */
#include "trace_processor/sql/sql.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/sql/funcs/funcs.h"
#include "trace_processor/sql/ops/ops.h"
#include "trace_processor/sql/vtab/vtab.h"
#include "trace_processor/storage/storage.h"

/* Owned by the connection: the __tp_rows_scanned() function frees it. */
struct sql_ctx {
	uint64_t rows_scanned;
};

#define TRACK_COLS                                                                   \
	"id, name, type, dimension_arg_set_id, parent_id, source_arg_set_id, machine_id, " \
	"track_group_id"
/* The typed track views (thread_track, process_counter_track, ...) leave out
 * dimension_arg_set_id and track_group_id, as Perfetto's do. */
#define TYPED_TRACK_COLS "id, name, type, parent_id, source_arg_set_id, machine_id"
#define SCHED_SELECT                                                                 \
	"SELECT id, ts, dur, cpu, utid, end_state, priority, ucpu, ts + dur AS ts_end " \
	"FROM __intrinsic_sched"

/* Perfetto's views, with its names and column order. The track views pick
 * tracks by the hidden classification columns of __intrinsic_track. */
static const char *const k_views[] = {
	"CREATE VIEW sched AS " SCHED_SELECT,
	"CREATE VIEW sched_slice AS " SCHED_SELECT,
	"CREATE VIEW raw AS SELECT * FROM ftrace_event",
	/* Perfetto's instant: the slices of no duration. */
	"CREATE VIEW instant AS SELECT ts, track_id, name, arg_set_id FROM slice WHERE dur = 0",
	"CREATE VIEW cpu AS SELECT * FROM __intrinsic_cpu WHERE cpu IS NOT NULL",
	"CREATE VIEW cpu_available_frequencies AS SELECT id, ucpu AS cpu, freq, ucpu "
	"FROM __intrinsic_cpu_freq",
	"CREATE VIEW track AS SELECT " TRACK_COLS " FROM __intrinsic_track",
	"CREATE VIEW thread_track AS SELECT " TYPED_TRACK_COLS ", utid FROM __intrinsic_track "
	"WHERE is_counter = 0 AND utid IS NOT NULL",
	"CREATE VIEW process_track AS SELECT " TYPED_TRACK_COLS ", upid FROM __intrinsic_track "
	"WHERE is_counter = 0 AND upid IS NOT NULL AND utid IS NULL",
	"CREATE VIEW cpu_track AS SELECT " TYPED_TRACK_COLS ", cpu FROM __intrinsic_track "
	"WHERE is_counter = 0 AND cpu IS NOT NULL",
	"CREATE VIEW counter_track AS SELECT id, name, parent_id, type, dimension_arg_set_id, "
	"source_arg_set_id, machine_id, unit, description "
	"FROM __intrinsic_track WHERE is_counter = 1",
	/* linux.perf's sessions and their counters (import/profiling). */
	"CREATE VIEW perf_session AS SELECT id, perf_session_id, cmdline "
	"FROM __intrinsic_profiler_session_rows WHERE source = 'linux.perf'",
	"CREATE VIEW perf_counter_track AS SELECT " TYPED_TRACK_COLS ", unit, description, "
	"extract_arg(dimension_arg_set_id, 'perf_session_id') AS perf_session_id, "
	"extract_arg(dimension_arg_set_id, 'cpu') AS cpu, "
	"extract_arg(source_arg_set_id, 'is_timebase') AS is_timebase "
	"FROM __intrinsic_track WHERE is_counter = 1 AND type IN ('perf_cpu_counter', "
	"'perf_global_counter')",
	"CREATE VIEW cpu_counter_track AS SELECT " TYPED_TRACK_COLS ", unit, description, cpu "
	"FROM __intrinsic_track WHERE is_counter = 1 AND cpu IS NOT NULL",
	"CREATE VIEW process_counter_track AS SELECT " TYPED_TRACK_COLS ", unit, description, upid "
	"FROM __intrinsic_track WHERE is_counter = 1 AND upid IS NOT NULL AND utid IS NULL",
	"CREATE VIEW thread_counter_track AS SELECT " TYPED_TRACK_COLS ", unit, description, utid "
	"FROM __intrinsic_track WHERE is_counter = 1 AND utid IS NOT NULL",
	/* State tracks (is_counter = 2) and their values, as Perfetto's. */
	"CREATE VIEW state AS SELECT id, ts, dur, track_id, category, value, arg_set_id "
	"FROM __intrinsic_state",
	"CREATE VIEW state_track AS SELECT id, name, parent_id, type, dimension_arg_set_id, "
	"source_arg_set_id, machine_id FROM __intrinsic_track WHERE is_counter = 2",
	"CREATE VIEW process_state_track AS SELECT " TYPED_TRACK_COLS ", upid "
	"FROM __intrinsic_track WHERE is_counter = 2 AND upid IS NOT NULL AND utid IS NULL",
	"CREATE VIEW thread_state_track AS SELECT " TYPED_TRACK_COLS ", utid "
	"FROM __intrinsic_track WHERE is_counter = 2 AND utid IS NOT NULL",
	"CREATE VIEW counters AS SELECT c.*, t.name AS name, t.unit AS unit "
	"FROM counter c JOIN __intrinsic_track t ON c.track_id = t.id ORDER BY c.ts",
	/* Perfetto's slice view adds two aliases (track events join on slice_id). */
	"CREATE VIEW slice AS SELECT *, category AS cat, id AS slice_id FROM __intrinsic_slice",
	"CREATE VIEW slices AS SELECT * FROM slice",
	/* display_value of numbers is made here, not stored per arg. */
	"CREATE VIEW args AS SELECT id, arg_set_id, flat_key, key, int_value, string_value,"
	" real_value, value_type,"
	" CASE WHEN display_value IS NOT NULL THEN display_value"
	" WHEN value_type = 'int' THEN CAST(int_value AS TEXT)"
	" WHEN value_type = 'uint' THEN printf('%llu', int_value)"
	" WHEN value_type = 'bool' THEN CASE WHEN int_value THEN 'true' ELSE 'false' END"
	" WHEN value_type = 'pointer' THEN printf('0x%x', int_value)"
	" WHEN value_type = 'real' THEN CAST(real_value AS TEXT)"
	" ELSE NULL END AS display_value FROM __intrinsic_args",
	"CREATE VIEW stats AS SELECT id, name, key, idx, severity, source, value, description, "
	"machine_id, trace_id FROM __intrinsic_stats",
	/* heapprofd dumps (import/profiling). */
	"CREATE VIEW heap_profile AS SELECT * FROM __intrinsic_heap_profile",
	"CREATE VIEW heap_profile_allocation AS SELECT * FROM __intrinsic_heap_profile_allocation",
	/* Winscope SurfaceFlinger snapshots (import/android/winscope_sf.c). */
	"CREATE VIEW surfaceflinger_layers_snapshot AS SELECT * FROM "
	"__intrinsic_surfaceflinger_layers_snapshot",
	"CREATE VIEW surfaceflinger_layer AS SELECT * FROM __intrinsic_surfaceflinger_layer",
	"CREATE VIEW trace_bounds AS SELECT trace_start() AS start_ts, trace_end() AS end_ts",
};

static void fn_rows_scanned(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const struct sql_ctx *s = sqlite3_user_data(ctx);

	(void)argc;
	(void)argv;
	sqlite3_result_int64(ctx, (sqlite3_int64)s->rows_scanned);
}

int tp_sql_open(struct tp_db *db, struct sqlite3 **out)
{
	sqlite3 *conn = NULL;
	struct sql_ctx *s;
	size_t i;
	int rc, err = -EIO;

	/* One thread uses a connection at a time (the engine serves one
	 * query after another), and nothing reads SQLite's memory statistics:
	 * no mutex on each call and each allocation (in bulk copies, such as
	 * a PERFETTO table's fill, they were a sixth of the CPU). The
	 * statistics can only be turned off before SQLite starts: a no-op
	 * after the first connection. */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	rc = sqlite3_open_v2(":memory:", &conn,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		err = rc == SQLITE_NOMEM ? -ENOMEM : -EIO;
		goto fail;
	}
	s = malloc(sizeof(*s));
	if (!s) {
		err = -ENOMEM;
		goto fail;
	}
	s->rows_scanned = 0;
	/* The function owns @s; SQLite frees it even if this fails. */
	rc = sqlite3_create_function_v2(conn, "__tp_rows_scanned", 0,
					SQLITE_UTF8 | SQLITE_INNOCUOUS, s, fn_rows_scanned, NULL,
					NULL, free);
	if (rc == SQLITE_OK)
		rc = tp_sql_funcs_register(conn, db);
	if (rc == SQLITE_OK)
		rc = tp_ops_register(conn, db);
	if (rc != SQLITE_OK)
		goto fail;

	for (i = 0; i < TP_DB_N_TABLES; i++) {
		err = tp_vtab_register(conn, tp_db_table(db, i), &db->strings, &s->rows_scanned);
		if (err < 0)
			goto fail;
	}
	err = -EIO;
	for (i = 0; i < sizeof(k_views) / sizeof(k_views[0]); i++) {
		rc = sqlite3_exec(conn, k_views[i], NULL, NULL, NULL);
		if (rc != SQLITE_OK)
			goto fail;
	}
	*out = conn;
	return 0;
fail:
	if (conn)
		fprintf(stderr, "trace_processor: cannot set up SQL: %s\n", sqlite3_errmsg(conn));
	if (rc == SQLITE_NOMEM)
		err = -ENOMEM;
	sqlite3_close(conn);
	return err;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * sql.c - opens the in-memory SQLite connection over a struct tp_db: one
 * eponymous virtual table per table (vtab.c), then Perfetto's views and
 * the trace bounds functions on top. The facade (tp.c) calls it once,
 * after the import.
 */
#include "trace_processor/sql/sql.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/sql/callstacks.h"
#include "trace_processor/sql/ops/ops.h"
#include "trace_processor/sql/to_ftrace.h"
#include "trace_processor/sql/vtab.h"
#include "trace_processor/storage/storage.h"

/* Owned by the connection: the trace_start() function frees it. */
struct sql_ctx {
	struct tp_db *db;
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
	/* The counters of linux.perf sessions (import/profiling). */
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
	"CREATE VIEW trace_bounds AS SELECT trace_start() AS start_ts, trace_end() AS end_ts",
};

/* Perfetto reports 0 for both bounds of a trace without timestamps. */
static int64_t bound_or_zero(int64_t ts)
{
	return ts == TP_NULL_INT ? 0 : ts;
}

static void fn_trace_start(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const struct sql_ctx *s = sqlite3_user_data(ctx);

	(void)argc;
	(void)argv;
	sqlite3_result_int64(ctx, bound_or_zero(s->db->trace_start_ts));
}

static void fn_trace_end(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const struct sql_ctx *s = sqlite3_user_data(ctx);

	(void)argc;
	(void)argv;
	sqlite3_result_int64(ctx, bound_or_zero(s->db->trace_end_ts));
}

static void fn_trace_dur(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const struct sql_ctx *s = sqlite3_user_data(ctx);

	(void)argc;
	(void)argv;
	/* Bounds of a hostile trace may be INT64_MIN and INT64_MAX: wrap, no UB. */
	sqlite3_result_int64(ctx, (int64_t)((uint64_t)bound_or_zero(s->db->trace_end_ts) -
					    (uint64_t)bound_or_zero(s->db->trace_start_ts)));
}

static void fn_rows_scanned(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const struct sql_ctx *s = sqlite3_user_data(ctx);

	(void)argc;
	(void)argv;
	sqlite3_result_int64(ctx, (sqlite3_int64)s->rows_scanned);
}

/* The first row of arg set @set in the args table (sorted by arg_set_id). */
static size_t args_lower_bound(const struct tp_table *t, int64_t set)
{
	size_t lo = 0, hi = t->n_rows;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (tp_get_int(t, ARGS_ARG_SET_ID, mid) < set)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * extract_arg(arg_set_id, key): the value of @key in the arg set, as
 * Perfetto's function gives it: integers (int, uint, bool, pointer) as
 * int_value, strings and JSON as string_value, reals as real_value; NULL
 * when the set or the key is absent.
 */
static void fn_extract_arg(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const struct sql_ctx *s = sqlite3_user_data(ctx);
	const struct tp_table *t = &s->db->args;
	const char *key;
	uint32_t key_id, type_id;
	int64_t set;
	size_t row;

	(void)argc;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL)
		return;
	set = sqlite3_value_int64(argv[0]);
	key = (const char *)sqlite3_value_text(argv[1]);
	if (!key)
		return;
	key_id = tp_str_find(&s->db->strings, key, (size_t)sqlite3_value_bytes(argv[1]));
	if (key_id == TP_NULL_STR)
		return;
	for (row = args_lower_bound(t, set);
	     row < t->n_rows && tp_get_int(t, ARGS_ARG_SET_ID, row) == set; row++) {
		const char *type;

		if (tp_get_str(t, ARGS_KEY, row) != key_id)
			continue;
		type_id = tp_get_str(t, ARGS_VALUE_TYPE, row);
		type = type_id ? tp_str_get(&s->db->strings, type_id) : "";
		if (!strcmp(type, "string") || !strcmp(type, "json")) {
			uint32_t v = tp_get_str(t, ARGS_STRING_VALUE, row);

			if (v)
				sqlite3_result_text(ctx, tp_str_get(&s->db->strings, v), -1,
						    SQLITE_TRANSIENT);
		} else if (!strcmp(type, "real")) {
			double d = tp_get_real(t, ARGS_REAL_VALUE, row);

			if (!isnan(d))
				sqlite3_result_double(ctx, d);
		} else {
			int64_t v = tp_get_int(t, ARGS_INT_VALUE, row);

			if (v != TP_NULL_INT)
				sqlite3_result_int64(ctx, v);
		}
		return;
	}
}

/*
 * __intrinsic_perf_counter_for_sample(sample_id, counter_name), also named
 * linux_perf_counter_for_sample as module linux.perf.counters names it:
 * the value of the counter track @counter_name recorded with perf sample
 * @sample_id, or NULL. A counter set's rows are consecutive from the row
 * that names it (import/profiling).
 */
static void fn_perf_counter_for_sample(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const struct sql_ctx *s = sqlite3_user_data(ctx);
	const struct tp_db *db = s->db;
	const struct tp_table *pcs = &db->profiler_counter_set;
	int64_t sample, set;
	uint32_t name;
	size_t row;

	(void)argc;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
		return;
	if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER) {
		sqlite3_result_error(ctx,
				     "__intrinsic_perf_counter_for_sample: 1st argument should be "
				     "sample id",
				     -1);
		return;
	}
	if (sqlite3_value_type(argv[1]) != SQLITE_TEXT) {
		sqlite3_result_error(ctx,
				     "__intrinsic_perf_counter_for_sample: 2nd argument should be "
				     "counter name",
				     -1);
		return;
	}
	sample = sqlite3_value_int64(argv[0]);
	if (sample < 0 || (uint64_t)sample >= db->perf_sample.n_rows) {
		sqlite3_result_error(ctx, "__intrinsic_perf_counter_for_sample: invalid sample id",
				     -1);
		return;
	}
	set = tp_get_int(&db->perf_sample, PERF_COUNTER_SET_ID, (size_t)sample);
	if (set == TP_NULL_INT || set < 0)
		return;
	name = tp_str_find(&db->strings, (const char *)sqlite3_value_text(argv[1]),
			   (size_t)sqlite3_value_bytes(argv[1]));
	if (name == TP_NULL_STR)
		return;
	for (row = (size_t)set; row < pcs->n_rows && tp_get_int(pcs, PCS_COUNTER_SET_ID, row) == set;
	     row++) {
		int64_t counter = tp_get_int(pcs, PCS_COUNTER_ID, row), track;

		if (counter < 0 || (uint64_t)counter >= db->counter.n_rows)
			continue;
		track = tp_get_int(&db->counter, COUNTER_TRACK_ID, (size_t)counter);
		if (track < 0 || (uint64_t)track >= db->track.n_rows)
			continue;
		if (tp_get_str(&db->track, TRACK_NAME, (size_t)track) == name) {
			sqlite3_result_double(ctx,
					      tp_get_real(&db->counter, COUNTER_VALUE, (size_t)counter));
			return;
		}
	}
}

static int add_function(sqlite3 *conn, const char *name,
			void (*fn)(sqlite3_context *, int, sqlite3_value **), struct sql_ctx *s,
			void (*destroy)(void *))
{
	/* Not deterministic: the bounds may change between statements. */
	return sqlite3_create_function_v2(conn, name, 0, SQLITE_UTF8 | SQLITE_INNOCUOUS, s, fn,
					  NULL, NULL, destroy);
}

int tp_sql_open(struct tp_db *db, struct sqlite3 **out)
{
	sqlite3 *conn = NULL;
	struct sql_ctx *s;
	size_t i;
	int rc, err = -EIO;

	rc = sqlite3_open_v2(":memory:", &conn, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
	if (rc != SQLITE_OK) {
		err = rc == SQLITE_NOMEM ? -ENOMEM : -EIO;
		goto fail;
	}
	s = malloc(sizeof(*s));
	if (!s) {
		err = -ENOMEM;
		goto fail;
	}
	s->db = db;
	s->rows_scanned = 0;
	/* The first function owns @s; SQLite frees it even if this fails. */
	rc = add_function(conn, "trace_start", fn_trace_start, s, free);
	if (rc == SQLITE_OK)
		rc = add_function(conn, "trace_end", fn_trace_end, s, NULL);
	if (rc == SQLITE_OK)
		rc = add_function(conn, "trace_dur", fn_trace_dur, s, NULL);
	if (rc == SQLITE_OK)
		rc = add_function(conn, "__tp_rows_scanned", fn_rows_scanned, s, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(conn, "extract_arg", 2,
						SQLITE_UTF8 | SQLITE_INNOCUOUS, s, fn_extract_arg,
						NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(conn, "__intrinsic_perf_counter_for_sample", 2,
						SQLITE_UTF8 | SQLITE_INNOCUOUS, s,
						fn_perf_counter_for_sample, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(conn, "linux_perf_counter_for_sample", 2,
						SQLITE_UTF8 | SQLITE_INNOCUOUS, s,
						fn_perf_counter_for_sample, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = tp_sql_add_to_ftrace(conn, db);
	if (rc == SQLITE_OK)
		rc = tp_sql_add_callstacks(conn, db);
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
	err = tp_sql_include_init(conn);
	if (err < 0)
		goto fail;
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

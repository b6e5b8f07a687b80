// SPDX-License-Identifier: Apache-2.0
/*
 * funcs.c - registers the built-in functions of sql/funcs/ (funcs.h) and
 * holds the small ones: trace_start(), trace_end(), trace_dur(),
 * extract_arg() and the perf counter of a sample. demangle() and the
 * annotated callstack are callstacks.c's, to_ftrace() is to_ftrace.c's,
 * str_split() text.c's, the extract_metadata() family metadata.c's.
 */
#include "trace_processor/sql/funcs/funcs.h"

#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <string.h>

#include "trace_processor/sql/funcs/funcs_int.h"
#include "trace_processor/storage/storage.h"

/* Perfetto reports 0 for both bounds of a trace without timestamps. */
static int64_t bound_or_zero(int64_t ts)
{
	return ts == TP_NULL_INT ? 0 : ts;
}

/* The end bound; a trace whose events are all at one instant ends 1 ns
 * after it, as Perfetto pins a collapsed interval. */
static int64_t end_bound(const struct tp_db *db)
{
	int64_t end = bound_or_zero(db->trace_end_ts);

	if (db->trace_start_ts != TP_NULL_INT && db->trace_start_ts == db->trace_end_ts &&
	    end < INT64_MAX)
		end++;
	return end;
}

static void fn_trace_start(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const struct tp_db *db = sqlite3_user_data(ctx);

	(void)argc;
	(void)argv;
	sqlite3_result_int64(ctx, bound_or_zero(db->trace_start_ts));
}

static void fn_trace_end(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const struct tp_db *db = sqlite3_user_data(ctx);

	(void)argc;
	(void)argv;
	sqlite3_result_int64(ctx, end_bound(db));
}

static void fn_trace_dur(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const struct tp_db *db = sqlite3_user_data(ctx);

	(void)argc;
	(void)argv;
	/* Bounds of a hostile trace may be INT64_MIN and INT64_MAX: wrap, no UB. */
	sqlite3_result_int64(ctx, (int64_t)((uint64_t)end_bound(db) -
					    (uint64_t)bound_or_zero(db->trace_start_ts)));
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
	const struct tp_db *db = sqlite3_user_data(ctx);
	const struct tp_table *t = &db->args;
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
	key_id = tp_str_find(&db->strings, key, (size_t)sqlite3_value_bytes(argv[1]));
	if (key_id == TP_NULL_STR)
		return;
	for (row = args_lower_bound(t, set);
	     row < t->n_rows && tp_get_int(t, ARGS_ARG_SET_ID, row) == set; row++) {
		const char *type;

		if (tp_get_str(t, ARGS_KEY, row) != key_id)
			continue;
		type_id = tp_get_str(t, ARGS_VALUE_TYPE, row);
		type = type_id ? tp_str_get(&db->strings, type_id) : "";
		if (!strcmp(type, "string") || !strcmp(type, "json")) {
			uint32_t v = tp_get_str(t, ARGS_STRING_VALUE, row);

			if (v)
				sqlite3_result_text(ctx, tp_str_get(&db->strings, v), -1,
						    SQLITE_TRANSIENT);
		} else if (!strcmp(type, "real")) {
			double d = tp_get_real(t, ARGS_REAL_VALUE, row);

			if (!isnan(d))
				sqlite3_result_double(ctx, d);
		} else {
			int64_t v = tp_get_int(t, ARGS_INT_VALUE, row);

			if (v != TP_NULL_INT || tp_int_is_min(t, ARGS_INT_VALUE, row))
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
	const struct tp_db *db = sqlite3_user_data(ctx);
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

int tp_sql_funcs_register(struct sqlite3 *conn, struct tp_db *db)
{
	/* Not deterministic: the bounds may change between statements. */
	static const struct {
		const char *name;
		int n_args;
		void (*fn)(sqlite3_context *, int, sqlite3_value **);
	} k_funcs[] = {
		{"trace_start", 0, fn_trace_start},
		{"trace_end", 0, fn_trace_end},
		{"trace_dur", 0, fn_trace_dur},
		{"extract_arg", 2, fn_extract_arg},
		{"__intrinsic_perf_counter_for_sample", 2, fn_perf_counter_for_sample},
		{"linux_perf_counter_for_sample", 2, fn_perf_counter_for_sample},
	};
	size_t i;
	int rc = SQLITE_OK;

	for (i = 0; i < sizeof(k_funcs) / sizeof(k_funcs[0]) && rc == SQLITE_OK; i++)
		rc = sqlite3_create_function_v2(conn, k_funcs[i].name, k_funcs[i].n_args,
						SQLITE_UTF8 | SQLITE_INNOCUOUS, db, k_funcs[i].fn,
						NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = tp_sql_add_to_ftrace(conn, db);
	if (rc == SQLITE_OK)
		rc = tp_sql_add_callstacks(conn, db);
	if (rc == SQLITE_OK)
		rc = tp_sql_add_text(conn);
	if (rc == SQLITE_OK)
		rc = tp_sql_add_metadata(conn);
	if (rc == SQLITE_OK)
		rc = tp_sql_add_regexp(conn);
	if (rc == SQLITE_OK)
		rc = tp_sql_add_window(conn);
	if (rc == SQLITE_OK)
		rc = tp_sql_add_zstd(conn);
	if (rc == SQLITE_OK)
		rc = tp_sql_add_string_agg(conn);
	return rc;
}

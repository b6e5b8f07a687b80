// SPDX-License-Identifier: Apache-2.0
/*
 * counter.c - __intrinsic_counter_intervals('leading', trace_end, counters):
 * the counter values __intrinsic_counter_per_track_agg kept, as intervals
 * (a value holds until the next one of its track, the last until
 * @trace_end): a TABLE of id, ts, dur, track_id, value, next_value and
 * delta_value, track after track. counters.intervals' macro calls it.
 */
#include <sqlite3.h>
#include <strings.h>

#include "trace_processor/sql/ops/ops_int.h"

static void fn_counter_intervals(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	static const char *const names[] = {"id",    "ts",         "dur",        "track_id",
					    "value", "next_value", "delta_value"};
	const struct ops_counters *c;
	const char *mode = (const char *)sqlite3_value_text(argv[0]);
	struct ops_table *t;
	int64_t trace_end;
	size_t i, k;

	(void)argc;
	if (!mode) {
		sqlite3_result_error(ctx, "interval intersect: column list cannot be null", -1);
		return;
	}
	if (strcasecmp(mode, "lagging") == 0) {
		sqlite3_result_error(ctx, "interval intersect: 'lagging' is not implemented", -1);
		return;
	}
	if (strcasecmp(mode, "leading") != 0) {
		sqlite3_result_error(ctx,
				     "interval intersect: second argument has to be either "
				     "'leading' or 'lagging",
				     -1);
		return;
	}
	trace_end = sqlite3_value_int64(argv[1]);
	t = ops_table_create(7, names);
	if (!t)
		goto nomem;
	c = sqlite3_value_pointer(argv[2], OPS_PTR_COUNTERS);
	for (k = 0; c && k < c->n; k++) {
		const struct ops_counter_track *tr = &c->tracks[k];

		if (ops_table_reserve(t, t->n_rows + tr->n) < 0)
			goto nomem;
		for (i = 0; i < tr->n; i++) {
			size_t r = (size_t)ops_table_append(t);
			bool last = i + 1 == tr->n;

			ops_set_int(t, 0, r, tr->id[i]);
			ops_set_int(t, 1, r, tr->ts[i]);
			ops_set_int(t, 2, r, (last ? trace_end : tr->ts[i + 1]) - tr->ts[i]);
			ops_set_int(t, 3, r, tr->track_id);
			ops_set_real(t, 4, r, tr->val[i]);
			if (!last)
				ops_set_real(t, 5, r, tr->val[i + 1]);
			if (i)
				ops_set_real(t, 6, r, tr->val[i] - tr->val[i - 1]);
		}
	}
	ops_table_result(ctx, t);
	return;
nomem:
	ops_table_destroy(t);
	sqlite3_result_error_nomem(ctx);
}

int ops_counter_register(sqlite3 *conn)
{
	return sqlite3_create_function_v2(conn, "__intrinsic_counter_intervals", 3,
					  SQLITE_UTF8 | SQLITE_INNOCUOUS, NULL, fn_counter_intervals,
					  NULL, NULL, NULL);
}

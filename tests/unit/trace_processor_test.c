// SPDX-License-Identifier: Apache-2.0
/*
 * trace_processor_test.c - unit tests for src/trace_processor: first the SQL
 * layer (tp_sql.c, tp_vtab.c) over a hand-built tp_db, checked against plain
 * SQLite tables holding the same rows and through the rows-scanned counter
 * that proves each filter is pushed down; then the importer.
 */
#include "harness.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/flamegraph/flamegraph_int.h"
#include "trace_processor/sql/agg/agg.h"
#include "trace_processor/sql/psql/psql.h"
#include "trace_processor/sql/sql.h"
#include "trace_processor/storage/storage.h"

/* ================================================================ */
/* SQL layer: virtual tables, pushdown, views and functions over a  */
/* tp_db built by hand (sq_ helpers). Run alone with `sql_`.        */
/* ================================================================ */

#define SQ_SCHED_ROWS 1000
#define SQ_THREADS 10
#define SQ_OUT_BYTES (1 << 18)

static char g_sq_a[SQ_OUT_BYTES], g_sq_b[SQ_OUT_BYTES];

/*
 * The fixture. sched: ts = 1000 + 10 * (i / 2) (sorted, each value twice),
 * dur = i % 7 or NULL when i % 5 == 4, cpu = i % 4, utid = i % 10,
 * end_state "R" / "S" / NULL by i % 3, priority 120 + i % 2.
 * thread: tid 100 + i, name "thread-<i>" (NULL for 7), upid i / 4.
 */
static void sq_fill(struct tp_db *db)
{
	struct tp_table *t = &db->sched;
	size_t i;
	int64_t r;

	ASSERT_EQ(tp_db_init(db), 0);
	for (i = 0; i < SQ_SCHED_ROWS; i++) {
		r = tp_table_append(t);
		ASSERT_EQ(r, (int64_t)i);
		tp_set_int(t, SCHED_TS, i, 1000 + 10 * (int64_t)(i / 2));
		if (i % 5 != 4)
			tp_set_int(t, SCHED_DUR, i, (int64_t)(i % 7));
		tp_set_int(t, SCHED_CPU, i, (int64_t)(i % 4));
		tp_set_int(t, SCHED_UTID, i, (int64_t)(i % SQ_THREADS));
		if (i % 3 != 2)
			tp_set_str(t, SCHED_END_STATE, i, tp_db_str(db, i % 3 ? "S" : "R"));
		tp_set_int(t, SCHED_PRIORITY, i, 120 + (int64_t)(i % 2));
		tp_set_int(t, SCHED_UCPU, i, (int64_t)(i % 4));
	}
	t = &db->thread;
	for (i = 0; i < SQ_THREADS; i++) {
		char name[32];

		r = tp_table_append(t);
		ASSERT_EQ(r, (int64_t)i);
		snprintf(name, sizeof(name), "thread-%zu", i);
		tp_set_int(t, THREAD_TID, i, 100 + (int64_t)i);
		if (i != 7)
			tp_set_str(t, THREAD_NAME, i, tp_db_str(db, name));
		tp_set_int(t, THREAD_UPID, i, (int64_t)(i / 4));
	}
}

/* Tracks of every kind, counters on two of them, and a few small tables. */
static void sq_fill_tracks(struct tp_db *db)
{
	static const struct {
		const char *name, *unit;
		int is_counter;
		int64_t cpu, utid, upid;
	} tracks[] = {
		{"thread_slices", NULL, 0, TP_NULL_INT, 2, 0},
		{"process_slices", NULL, 0, TP_NULL_INT, TP_NULL_INT, 1},
		{"cpu_slices", NULL, 0, 1, TP_NULL_INT, TP_NULL_INT},
		{"mem.total", "bytes", 1, TP_NULL_INT, TP_NULL_INT, TP_NULL_INT},
		{"cpufreq", "kHz", 1, 0, TP_NULL_INT, TP_NULL_INT},
		{"rss", "bytes", 1, TP_NULL_INT, TP_NULL_INT, 2},
		{"thread_counter", NULL, 1, TP_NULL_INT, 4, 1},
	};
	struct tp_table *t = &db->track;
	size_t i;

	for (i = 0; i < sizeof(tracks) / sizeof(tracks[0]); i++) {
		ASSERT_EQ(tp_table_append(t), (int64_t)i);
		tp_set_str(t, TRACK_NAME, i, tp_db_str(db, tracks[i].name));
		tp_set_str(t, TRACK_UNIT, i, tp_db_str(db, tracks[i].unit));
		tp_set_int(t, TRACK_IS_COUNTER, i, tracks[i].is_counter);
		tp_set_int(t, TRACK_CPU, i, tracks[i].cpu);
		tp_set_int(t, TRACK_UTID, i, tracks[i].utid);
		tp_set_int(t, TRACK_UPID, i, tracks[i].upid);
	}
	t = &db->counter;
	for (i = 0; i < 6; i++) {
		ASSERT_EQ(tp_table_append(t), (int64_t)i);
		tp_set_int(t, COUNTER_TS, i, 100 + 10 * (int64_t)i);
		tp_set_int(t, COUNTER_TRACK_ID, i, i % 2 ? 4 : 3);
		if (i != 5)
			tp_set_real(t, COUNTER_VALUE, i, 1.5 * (double)i);
	}
	t = &db->instant;
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(tp_table_append(t), (int64_t)i);
		tp_set_int(t, INSTANT_TS, i, 50 + (int64_t)i);
		tp_set_str(t, INSTANT_NAME, i, tp_db_str(db, "mark"));
	}
	t = &db->stats;
	ASSERT_EQ(tp_table_append(t), 0);
	tp_set_str(t, STATS_NAME, 0, tp_db_str(db, "ftrace_bundle_errors"));
	tp_set_str(t, STATS_SEVERITY, 0, tp_db_str(db, "error"));
	tp_set_str(t, STATS_SOURCE, 0, tp_db_str(db, "trace"));
	tp_set_int(t, STATS_VALUE, 0, 3);
	t = &db->args;
	ASSERT_EQ(tp_table_append(t), 0);
	tp_set_int(t, ARGS_ARG_SET_ID, 0, 1);
	tp_set_str(t, ARGS_KEY, 0, tp_db_str(db, "prev_comm"));
	tp_set_str(t, ARGS_STRING_VALUE, 0, tp_db_str(db, "swapper"));
	tp_set_str(t, ARGS_DISPLAY_VALUE, 0, tp_db_str(db, "swapper"));
}

static sqlite3 *sq_open(struct tp_db *db)
{
	sqlite3 *conn = NULL;

	ASSERT_EQ(tp_sql_open(db, &conn), 0);
	ASSERT_TRUE(conn != NULL);
	return conn;
}

static void sq_exec(sqlite3 *conn, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(conn, sql, NULL, NULL, &err) != SQLITE_OK)
		FAIL("%s: %s", sql, err ? err : "?");
}

static sqlite3_stmt *sq_prepare(sqlite3 *conn, const char *sql)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(conn, sql, -1, &st, NULL) != SQLITE_OK)
		FAIL("%s: %s", sql, sqlite3_errmsg(conn));
	return st;
}

/* Every row of @st as "a|b|NULL\n" lines into @out; finalizes @st. */
static const char *sq_render_stmt(sqlite3 *conn, sqlite3_stmt *st, char *out)
{
	size_t len = 0;
	int rc, i;

	out[0] = '\0';
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (i = 0; i < sqlite3_column_count(st); i++) {
			const char *v = (const char *)sqlite3_column_text(st, i);
			int n = snprintf(out + len, SQ_OUT_BYTES - len, "%s%s", i ? "|" : "",
					 v ? v : "NULL");

			ASSERT_TRUE(n >= 0 && (size_t)n < SQ_OUT_BYTES - len);
			len += (size_t)n;
		}
		ASSERT_TRUE(len + 1 < SQ_OUT_BYTES);
		out[len++] = '\n';
		out[len] = '\0';
	}
	if (rc != SQLITE_DONE)
		FAIL("%s: %s", sqlite3_sql(st), sqlite3_errmsg(conn));
	sqlite3_finalize(st);
	return out;
}

static const char *sq_render(sqlite3 *conn, const char *sql, char *out)
{
	return sq_render_stmt(conn, sq_prepare(conn, sql), out);
}

static int64_t sq_int(sqlite3 *conn, const char *sql)
{
	sqlite3_stmt *st = sq_prepare(conn, sql);
	int64_t v;

	if (sqlite3_step(st) != SQLITE_ROW)
		FAIL("%s: no row (%s)", sql, sqlite3_errmsg(conn));
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* Rows the virtual tables examined while running @sql to the end. */
static int64_t sq_scanned(sqlite3 *conn, const char *sql)
{
	int64_t before = sq_int(conn, "SELECT __tp_rows_scanned()");

	sq_render(conn, sql, g_sq_b);
	return sq_int(conn, "SELECT __tp_rows_scanned()") - before;
}

/* EXPLAIN QUERY PLAN details (the fourth column), one per line. */
static const char *sq_plan(sqlite3 *conn, const char *sql)
{
	sqlite3_stmt *st;
	size_t len = 0;
	char q[1024];

	snprintf(q, sizeof(q), "EXPLAIN QUERY PLAN %s", sql);
	st = sq_prepare(conn, q);
	g_sq_b[0] = '\0';
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *d = (const char *)sqlite3_column_text(st, 3);
		int n = snprintf(g_sq_b + len, SQ_OUT_BYTES - len, "%s\n", d ? d : "");

		ASSERT_TRUE(n >= 0 && (size_t)n < SQ_OUT_BYTES - len);
		len += (size_t)n;
	}
	sqlite3_finalize(st);
	return g_sq_b;
}

/* Plain SQLite copies of the virtual tables, with the same declared types
 * (and rowid = id, as in the virtual tables). */
static void sq_copy_tables(sqlite3 *conn)
{
	sq_exec(conn, "CREATE TABLE copy_sched(id INT, ts INT, dur INT, cpu INT, utid INT, "
		      "end_state TEXT, priority INT, ucpu INT);"
		      "INSERT INTO copy_sched(rowid, id, ts, dur, cpu, utid, end_state, "
		      "priority, ucpu) SELECT id, * FROM __intrinsic_sched;"
		      "CREATE TABLE copy_thread(id INT, utid INT, tid INT, name TEXT, "
		      "start_ts INT, end_ts INT, upid INT, is_main_thread INT, is_idle INT, "
		      "machine_id INT, arg_set_id INT);"
		      "INSERT INTO copy_thread SELECT * FROM thread;");
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM copy_sched"), SQ_SCHED_ROWS);
}

/* @sql_fmt has one %s for the table: its output must match on the copy. */
static void sq_same(sqlite3 *conn, const char *sql_fmt, const char *vtab, const char *copy)
{
	char q[1024];

	snprintf(q, sizeof(q), sql_fmt, vtab);
	sq_render(conn, q, g_sq_a);
	snprintf(q, sizeof(q), sql_fmt, copy);
	sq_render(conn, q, g_sq_b);
	if (strcmp(g_sq_a, g_sq_b) != 0) {
		snprintf(q, sizeof(q), sql_fmt, vtab);
		FAIL("%s differs from the plain table:\n--- vtab\n%.2000s--- copy\n%.2000s", q,
		     g_sq_a, g_sq_b);
	}
}

TEST(sql_select_star_columns_and_types)
{
	struct tp_db db;
	sqlite3 *conn;
	sqlite3_stmt *st;
	static const char *const sched_cols[] = {"id", "ts", "dur", "cpu", "utid", "end_state",
						 "priority", "ucpu"};
	static const char *const view_cols[] = {"id", "ts", "dur", "cpu", "utid", "end_state",
						"priority", "ucpu", "ts_end"};
	int i;

	sq_fill(&db);
	sq_fill_tracks(&db);
	conn = sq_open(&db);
	st = sq_prepare(conn, "SELECT * FROM __intrinsic_sched");
	ASSERT_EQ(sqlite3_column_count(st), 8);
	for (i = 0; i < 8; i++)
		ASSERT_STREQ(sqlite3_column_name(st, i), sched_cols[i]);
	sqlite3_finalize(st);
	st = sq_prepare(conn, "SELECT * FROM sched");
	ASSERT_EQ(sqlite3_column_count(st), 9);
	for (i = 0; i < 9; i++)
		ASSERT_STREQ(sqlite3_column_name(st, i), view_cols[i]);
	sqlite3_finalize(st);

	/* Hidden columns stay out of SELECT * but can be named. */
	st = sq_prepare(conn, "SELECT * FROM __intrinsic_instant");
	ASSERT_EQ(sqlite3_column_count(st), 4);
	ASSERT_STREQ(sqlite3_column_name(st, 0), "ts");
	sqlite3_finalize(st);
	ASSERT_STREQ(sq_render(conn, "SELECT id, ts FROM __intrinsic_instant WHERE id = 2", g_sq_a),
		     "2|52\n");

	ASSERT_STREQ(sq_render(conn,
			       "SELECT typeof(id), typeof(ts), typeof(dur), typeof(end_state) "
			       "FROM __intrinsic_sched WHERE id IN (0, 2, 4) ORDER BY id",
			       g_sq_a),
		     "integer|integer|integer|text\n"
		     "integer|integer|integer|null\n"
		     "integer|integer|null|text\n");
	ASSERT_STREQ(sq_render(conn, "SELECT typeof(value), value FROM counter ORDER BY id",
			       g_sq_a),
		     "real|0.0\nreal|1.5\nreal|3.0\nreal|4.5\nreal|6.0\nnull|NULL\n");
	/* Declared types give the columns their affinity in views and copies. */
	ASSERT_STREQ(sq_render(conn,
			       "SELECT name, type FROM pragma_table_info('__intrinsic_sched') "
			       "WHERE name IN ('ts', 'end_state')",
			       g_sq_a),
		     "ts|INT\nend_state|TEXT\n");
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM __intrinsic_sched"), SQ_SCHED_ROWS);
	sqlite3_close(conn);
	tp_db_fini(&db);
}

TEST(sql_nulls_and_strings)
{
	struct tp_db db;
	sqlite3 *conn;

	sq_fill(&db);
	conn = sq_open(&db);
	ASSERT_STREQ(sq_render(conn, "SELECT utid, tid, name, start_ts FROM thread "
				     "WHERE utid >= 6 AND utid < 9",
			       g_sq_a),
		     "6|106|thread-6|NULL\n7|107|NULL|NULL\n8|108|thread-8|NULL\n");
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM thread WHERE name IS NULL"), 1);
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM __intrinsic_sched WHERE dur IS NULL"),
		  SQ_SCHED_ROWS / 5);
	ASSERT_EQ(sq_int(conn, "SELECT length(group_concat(name, '')) FROM thread"), 9 * 8);
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM thread WHERE name LIKE 'thread-%'"), 9);
	sqlite3_close(conn);
	tp_db_fini(&db);
}

TEST(sql_id_lookup_visits_one_row)
{
	struct tp_db db;
	sqlite3 *conn;

	sq_fill(&db);
	conn = sq_open(&db);
	ASSERT_STREQ(sq_render(conn, "SELECT id, ts, utid FROM __intrinsic_sched WHERE id = 501",
			       g_sq_a),
		     "501|3500|1\n");
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE id = 501"), 1);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE rowid = 501"), 1);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM sched WHERE id = 501"), 1);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM thread WHERE utid = 3"), 1);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE id = 5000"), 0);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE id = -1"), 0);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE id = 501.0"), 1);
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM __intrinsic_sched WHERE id = 501.5"), 0);
	ASSERT_TRUE(strstr(sq_plan(conn, "SELECT * FROM __intrinsic_sched WHERE id = 501"),
			   "id id=") != NULL);
	/* Without pushdown the same query would visit every row. */
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE +id = 501"),
		  SQ_SCHED_ROWS);
	sqlite3_close(conn);
	tp_db_fini(&db);
}

TEST(sql_equality_uses_index)
{
	struct tp_db db;
	sqlite3 *conn;

	sq_fill(&db);
	conn = sq_open(&db);
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM __intrinsic_sched WHERE utid = 3"), 100);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE utid = 3"), 100);
	ASSERT_TRUE(strstr(sq_plan(conn, "SELECT * FROM __intrinsic_sched WHERE utid = 3"),
			   "index utid=") != NULL);
	/* Two equalities: the smaller lookup drives, the other is checked. */
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM __intrinsic_sched "
			       "WHERE utid = 3 AND cpu = 1"),
		  50);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE utid = 3 AND cpu = 1"),
		  100);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE utid = 42"), 0);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE utid = NULL"), 0);
	/* A small id range is filtered row by row instead. */
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched "
				   "WHERE utid = 3 AND id BETWEEN 10 AND 19"),
		  10);
	/* A bound parameter is not known when planning; it still drives the lookup. */
	{
		sqlite3_stmt *st = sq_prepare(conn, "SELECT count(*) FROM __intrinsic_sched "
						    "WHERE utid = ?");
		ASSERT_EQ(sqlite3_bind_int64(st, 1, 4), SQLITE_OK);
		ASSERT_STREQ(sq_render_stmt(conn, st, g_sq_a), "100\n");
	}
	sqlite3_close(conn);
	tp_db_fini(&db);
}

TEST(sql_string_equality)
{
	struct tp_db db;
	sqlite3 *conn;

	sq_fill(&db);
	conn = sq_open(&db);
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM __intrinsic_sched WHERE end_state = 'R'"),
		  334);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE end_state = 'R'"),
		  334);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE end_state = 'never'"),
		  0);
	ASSERT_STREQ(sq_render(conn, "SELECT utid, tid FROM thread WHERE name = 'thread-4'",
			       g_sq_a),
		     "4|104\n");
	/* A different collation is SQLite's business, and still right. */
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM __intrinsic_sched "
			       "WHERE end_state = 'r' COLLATE NOCASE"),
		  334);
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM __intrinsic_sched WHERE end_state = 'r'"),
		  0);
	sqlite3_close(conn);
	tp_db_fini(&db);
}

TEST(sql_sorted_ranges)
{
	struct tp_db db;
	sqlite3 *conn;

	sq_fill(&db);
	conn = sq_open(&db);
	/* ts = 1000 + 10 * (i / 2): each value on two rows, 1000 .. 5990. */
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM __intrinsic_sched WHERE ts = 1500"), 2);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE ts = 1500"), 2);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE ts = 1505"), 0);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched "
				   "WHERE ts BETWEEN 1100 AND 1200"),
		  22);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched "
				   "WHERE ts > 1100 AND ts < 1200"),
		  18);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched "
				   "WHERE ts >= 1100 AND ts < 1200"),
		  20);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched "
				   "WHERE ts > 1100 AND ts <= 1200"),
		  20);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE ts < 1020"), 4);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE ts >= 5980"), 4);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched "
				   "WHERE ts > 1200 AND ts < 1100"),
		  0);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE ts < 0"), 0);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE ts > 100000"), 0);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE ts >= 0"),
		  SQ_SCHED_ROWS);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched "
				   "WHERE ts < 9223372036854775807"),
		  SQ_SCHED_ROWS);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched "
				   "WHERE ts > -9223372036854775808"),
		  SQ_SCHED_ROWS);
	/* Reals: ts < 1029.5 is ts <= 1020. */
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE ts < 1029.5"), 6);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE ts >= 5980.5"), 2);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE ts < 1e300"),
		  SQ_SCHED_ROWS);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE ts > 1e300"), 0);
	/* Id ranges. */
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE id BETWEEN 10 AND 19"),
		  10);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE id > 990"), 9);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE id < -5"), 0);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE id >= 1000"), 0);
	/* Id and ts together: the intersection. */
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched "
				   "WHERE id < 100 AND ts >= 1400"),
		  20);
	ASSERT_TRUE(strstr(sq_plan(conn, "SELECT * FROM __intrinsic_sched "
					 "WHERE ts BETWEEN 1100 AND 1200"),
			   "sorted ts>= ts<=") != NULL);
	/* Views push down too. */
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM sched WHERE ts BETWEEN 1100 AND 1200"), 22);
	ASSERT_STREQ(sq_render(conn, "SELECT id, ts, dur, ts_end FROM sched "
				     "WHERE ts = 1010 ORDER BY id",
			       g_sq_a),
		     "2|1010|2|1012\n3|1010|3|1013\n");
	sqlite3_close(conn);
	tp_db_fini(&db);
}

TEST(sql_in_lists)
{
	struct tp_db db;
	sqlite3 *conn;

	sq_fill(&db);
	conn = sq_open(&db);
	ASSERT_STREQ(sq_render(conn, "SELECT id, ts FROM __intrinsic_sched "
				     "WHERE id IN (7, 3, 999, 5000, 3) ORDER BY id",
			       g_sq_a),
		     "3|1010\n7|1030\n999|5990\n");
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE id IN (7, 3, 999, 5000)"),
		  3);
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM __intrinsic_sched WHERE utid IN (1, 2)"),
		  200);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE utid IN (1, 2)"), 200);
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM thread "
			       "WHERE name IN ('thread-1', 'thread-2', 'nobody')"),
		  2);
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM __intrinsic_sched "
			       "WHERE id IN (SELECT utid FROM thread)"),
		  SQ_THREADS);
	sqlite3_close(conn);
	tp_db_fini(&db);
}

TEST(sql_order_by_sorted_column)
{
	struct tp_db db;
	sqlite3 *conn;
	const char *plan;

	sq_fill(&db);
	conn = sq_open(&db);
	plan = sq_plan(conn, "SELECT * FROM __intrinsic_sched ORDER BY ts");
	ASSERT_TRUE(strstr(plan, "TEMP B-TREE") == NULL);
	plan = sq_plan(conn, "SELECT * FROM __intrinsic_sched WHERE utid = 3 ORDER BY ts, id");
	ASSERT_TRUE(strstr(plan, "TEMP B-TREE") == NULL);
	plan = sq_plan(conn, "SELECT * FROM __intrinsic_sched ORDER BY id");
	ASSERT_TRUE(strstr(plan, "TEMP B-TREE") == NULL);
	plan = sq_plan(conn, "SELECT * FROM __intrinsic_sched ORDER BY ts DESC");
	ASSERT_TRUE(strstr(plan, "TEMP B-TREE") != NULL);
	/* Unsorted columns (one or two) are read through a cached row order. */
	plan = sq_plan(conn, "SELECT * FROM __intrinsic_sched ORDER BY dur");
	ASSERT_TRUE(strstr(plan, "TEMP B-TREE") == NULL);
	ASSERT_TRUE(strstr(plan, "order") != NULL);
	plan = sq_plan(conn, "SELECT * FROM __intrinsic_sched ORDER BY ts, dur");
	ASSERT_TRUE(strstr(plan, "TEMP B-TREE") == NULL);
	/* Text is ordered by the string (ranks of the text), not by its id... */
	plan = sq_plan(conn, "SELECT * FROM __intrinsic_sched ORDER BY end_state");
	ASSERT_TRUE(strstr(plan, "TEMP B-TREE") == NULL);
	/* ...descending orders are SQLite's to make... */
	plan = sq_plan(conn, "SELECT * FROM __intrinsic_sched ORDER BY dur DESC");
	ASSERT_TRUE(strstr(plan, "TEMP B-TREE") != NULL);
	/* ...and grouping reads the same order. */
	plan = sq_plan(conn, "SELECT utid, end_state, count(*) FROM __intrinsic_sched "
			     "GROUP BY utid, end_state");
	ASSERT_TRUE(strstr(plan, "TEMP B-TREE FOR GROUP BY") == NULL);

	/* The order is really there, also through an index lookup. */
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM (SELECT id, ts, lag(ts) OVER () AS p "
			       "FROM (SELECT * FROM __intrinsic_sched WHERE utid = 3 ORDER BY ts)) "
			       "WHERE p > ts"),
		  0);
	ASSERT_STREQ(sq_render(conn, "SELECT id FROM __intrinsic_sched WHERE utid = 3 "
				     "ORDER BY ts LIMIT 3",
			       g_sq_a),
		     "3\n13\n23\n");
	ASSERT_STREQ(sq_render(conn, "SELECT id FROM __intrinsic_sched WHERE id IN (9, 2, 5) "
				     "ORDER BY ts",
			       g_sq_a),
		     "2\n5\n9\n");
	ASSERT_STREQ(sq_render(conn, "SELECT id FROM __intrinsic_sched WHERE id < 3 "
				     "ORDER BY ts DESC, id DESC",
			       g_sq_a),
		     "2\n1\n0\n");
	sqlite3_close(conn);
	tp_db_fini(&db);
}

/* Results through the row-order path equal plain SQLite's. */
TEST(sql_order_path_matches_plain_sqlite)
{
	static const char *const queries[] = {
		"SELECT id, dur FROM %s ORDER BY dur",
		"SELECT id, dur, cpu FROM %s ORDER BY cpu, dur",
		"SELECT utid, SUM(dur), COUNT(*) FROM %s GROUP BY utid ORDER BY utid",
		("SELECT utid, end_state, COUNT(*), SUM(dur) FROM %s GROUP BY utid, end_state "
		 "ORDER BY 4 DESC, 1, 2"),
		"SELECT cpu, MAX(ts) FROM %s WHERE ts > 2000 AND utid != 4 GROUP BY cpu",
		"SELECT DISTINCT priority FROM %s ORDER BY priority",
		"SELECT id FROM %s WHERE id < 100 ORDER BY dur, id",
		/* Strings order by text, not by when they were first seen; and
		 * SQLite 3.40 trusts a vtab's order for GROUP BY x ORDER BY x DESC. */
		"SELECT end_state, COUNT(*) FROM %s GROUP BY end_state ORDER BY end_state",
		"SELECT end_state, COUNT(*) FROM %s GROUP BY end_state ORDER BY end_state DESC",
		"SELECT utid, COUNT(*) FROM %s GROUP BY utid ORDER BY utid DESC",
		"SELECT DISTINCT end_state FROM %s ORDER BY end_state",
		"SELECT id, end_state FROM %s ORDER BY end_state, id",
		"SELECT utid, end_state, COUNT(*) FROM %s GROUP BY utid, end_state ORDER BY utid, end_state",
	};
	struct tp_db db;
	sqlite3 *conn;
	size_t i;

	sq_fill(&db);
	/* "A" is interned last but sorts first. */
	tp_set_str(&db.sched, SCHED_END_STATE, 10, tp_db_str(&db, "A"));
	tp_set_str(&db.sched, SCHED_END_STATE, 11, tp_db_str(&db, "Q"));
	conn = sq_open(&db);
	sq_copy_tables(conn);
	for (i = 0; i < sizeof(queries) / sizeof(queries[0]); i++)
		sq_same(conn, queries[i], "__intrinsic_sched", "copy_sched");
	/* A change to the table rebuilds the cached order. */
	sq_render(conn, "SELECT id FROM __intrinsic_sched ORDER BY dur LIMIT 1", g_sq_a);
	tp_set_int(&db.sched, SCHED_DUR, 500, -5);
	ASSERT_STREQ(sq_render(conn, "SELECT id FROM __intrinsic_sched WHERE dur IS NOT NULL "
				     "ORDER BY dur LIMIT 1",
			       g_sq_a),
		     "500\n");
	sqlite3_close(conn);
	tp_db_fini(&db);
}

TEST(sql_join_using_utid)
{
	struct tp_db db;
	sqlite3 *conn;

	sq_fill(&db);
	conn = sq_open(&db);
	ASSERT_STREQ(sq_render(conn, "SELECT s.id, utid, t.tid, t.name FROM __intrinsic_sched s "
				     "JOIN thread t USING (utid) WHERE s.id BETWEEN 5 AND 8 "
				     "ORDER BY s.id",
			       g_sq_a),
		     "5|5|105|thread-5\n6|6|106|thread-6\n7|7|107|NULL\n8|8|108|thread-8\n");
	ASSERT_STREQ(sq_render(conn, "SELECT t.utid, count(*) FROM thread t "
				     "JOIN sched s USING (utid) WHERE t.name = 'thread-2' "
				     "GROUP BY t.utid",
			       g_sq_a),
		     "2|100\n");
	/* A join visits each sched row once plus one thread row per lookup. */
	ASSERT_LE(sq_scanned(conn, "SELECT * FROM __intrinsic_sched s JOIN thread t "
				   "USING (utid)"),
		  2 * SQ_SCHED_ROWS + SQ_THREADS);
	sq_copy_tables(conn);
	sq_same(conn, "SELECT s.id, t.tid, t.name FROM %s s JOIN copy_thread t USING (utid) "
		      "ORDER BY s.id",
		"__intrinsic_sched", "copy_sched");
	sq_same(conn, "SELECT t.utid, t.name, count(*), sum(s.dur) FROM __intrinsic_sched s "
		      "JOIN %s t ON s.utid = t.utid WHERE t.upid = 1 GROUP BY 1 ORDER BY 1",
		"thread", "copy_thread");
	sq_same(conn, "SELECT s.id, t.tid FROM copy_sched s JOIN %s t ON t.tid = s.utid + 100 "
		      "WHERE s.ts < 1100 ORDER BY s.id",
		"thread", "copy_thread");
	sqlite3_close(conn);
	tp_db_fini(&db);
}

/* Filters of every shape and value type must match SQLite's own answers. */
TEST(sql_filters_match_plain_sqlite)
{
	static const char *const sched_where[] = {
		"id = 5", "id = 5.0", "id = 5.5", "id = '5'", "id = 'x'", "id < 3", "id <= 3",
		"id > 995", "id >= 998", "id > 2000", "id < -1", "id BETWEEN 10 AND 20",
		"rowid = 7", "rowid BETWEEN 3 AND 5", "id IN (1, 3, 999, 5000)", "id = NULL",
		"id IS NULL", "id > 10 AND id < 5", "id > 10.5 AND id <= 12.5", "id > 2.5e30",
		"ts = 1050", "ts = 1055", "ts < 1030", "ts <= 1030", "ts > 5980", "ts >= 5990",
		"ts BETWEEN 1100 AND 1200", "ts > 1100 AND ts < 1200", "ts >= 1100 AND ts <= 1100",
		"ts < 1030.5", "ts <= 1030.5", "ts > 1029.5", "ts >= 1029.5", "ts = 1030.0",
		"ts < '1030'", "ts = '1030'", "ts > '1030.5'", "ts > 'abc'", "ts < 'abc'",
		"ts = x'00'", "ts < x'00'", "ts < 9.3e18", "ts > -9.3e18", "ts < -9.3e18",
		"ts > 9.3e18", "ts = 9223372036854775807", "ts < -9223372036854775808",
		"ts <= -9223372036854775808", "ts > 9223372036854775807",
		"ts >= 9223372036854775807", "ts < 9223372036854775807.0",
		"ts > -9223372036854775808.0", "cpu = 2", "cpu = 2 AND utid = 3",
		"utid = 3 AND ts > 2000", "utid IN (1, 2)", "utid = '3'", "utid = ' 3'",
		"utid = 3.0", "utid = 3.5", "utid < 3.5", "utid > 2.5 AND utid < 4",
		"dur = 0", "dur IS NULL", "dur < 3", "dur > -100", "dur >= 6", "dur != 2",
		"end_state = 'R'", "end_state = 'nope'", "end_state = 'r' COLLATE NOCASE",
		"end_state = 5", "end_state > 'R'", "end_state < 'S'", "end_state IS NULL",
		"end_state = ''", "end_state IN ('R', 'x')", "end_state = 'R' AND utid = 3",
		"priority = 120 AND cpu = 1 AND id > 500", "ucpu = cpu", "5 = utid",
		"1100 < ts AND 1200 >= ts", "ts = 1100 AND ts = 1110", "utid = 3 AND utid = 4",
		"end_state = 'R' AND end_state = 'S'", "ts + 0 = 1050",
		"id = ts", "ts > 1000 OR utid = 3", "utid = 3 OR id < 10",
	};
	static const char *const thread_where[] = {
		"name = 'thread-3'", "name = 'thread-7'", "name IS NULL", "name = 3",
		"name = 'thread-3' COLLATE NOCASE", "name > 'thread-5'", "utid = 3", "id = 3",
		"utid BETWEEN 2 AND 4 AND name != 'thread-3'", "tid = 105", "tid = '105'",
		"upid = 1", "upid = 1 AND utid > 4",
	};
	struct tp_db db;
	sqlite3 *conn;
	char q[512];
	size_t i;

	sq_fill(&db);
	conn = sq_open(&db);
	sq_copy_tables(conn);
	for (i = 0; i < sizeof(sched_where) / sizeof(sched_where[0]); i++) {
		snprintf(q, sizeof(q), "SELECT * FROM %%s WHERE %s ORDER BY id", sched_where[i]);
		sq_same(conn, q, "__intrinsic_sched", "copy_sched");
		snprintf(q, sizeof(q), "SELECT count(*), sum(dur) FROM %%s WHERE %s",
			 sched_where[i]);
		sq_same(conn, q, "__intrinsic_sched", "copy_sched");
	}
	for (i = 0; i < sizeof(thread_where) / sizeof(thread_where[0]); i++) {
		snprintf(q, sizeof(q), "SELECT * FROM %%s WHERE %s ORDER BY id", thread_where[i]);
		sq_same(conn, q, "thread", "copy_thread");
	}
	sqlite3_close(conn);
	tp_db_fini(&db);
}

TEST(sql_index_follows_table_changes)
{
	struct tp_db db;
	sqlite3 *conn;
	int64_t r;
	size_t i;

	sq_fill(&db);
	conn = sq_open(&db);
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM __intrinsic_sched WHERE utid = 3"), 100);
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM __intrinsic_sched WHERE end_state = 'S'"),
		  333);
	/* Move ten rows from utid 3 to 4, add rows, and a new string. */
	for (i = 3; i < 103; i += 10)
		tp_set_int(&db.sched, SCHED_UTID, i, 4);
	for (i = 0; i < 50; i++) {
		r = tp_table_append(&db.sched);
		ASSERT_EQ(r, SQ_SCHED_ROWS + (int64_t)i);
		tp_set_int(&db.sched, SCHED_TS, (size_t)r, 7000 + (int64_t)i);
		tp_set_int(&db.sched, SCHED_UTID, (size_t)r, 3);
		tp_set_str(&db.sched, SCHED_END_STATE, (size_t)r, tp_db_str(&db, "D"));
	}
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM __intrinsic_sched WHERE utid = 3"),
		  100 - 10 + 50);
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM __intrinsic_sched WHERE utid = 4"), 110);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE utid = 4"), 110);
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM __intrinsic_sched WHERE end_state = 'D'"),
		  50);
	ASSERT_EQ(sq_int(conn, "SELECT min(id) FROM __intrinsic_sched WHERE utid = 3 "
			       "AND ts >= 7000"),
		  SQ_SCHED_ROWS);
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM __intrinsic_sched WHERE id >= 1000"), 50);
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM __intrinsic_sched WHERE ts > 6000"), 50);
	sqlite3_close(conn);
	tp_db_fini(&db);
}

TEST(sql_empty_tables)
{
	struct tp_db db;
	sqlite3 *conn;

	ASSERT_EQ(tp_db_init(&db), 0);
	conn = sq_open(&db);
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM slice"), 0);
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM slice WHERE id = 0"), 0);
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM slice WHERE ts BETWEEN 0 AND 10"), 0);
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM slice WHERE name = 'x'"), 0);
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM slice WHERE track_id = 1"), 0);
	ASSERT_STREQ(sq_render(conn, "SELECT * FROM trace_bounds", g_sq_a), "0|0\n");
	ASSERT_EQ(sq_int(conn, "SELECT trace_dur()"), 0);
	sqlite3_close(conn);
	tp_db_fini(&db);
}

TEST(sql_views_and_functions)
{
	struct tp_db db;
	sqlite3 *conn;
	sqlite3_stmt *st;

	sq_fill(&db);
	sq_fill_tracks(&db);
	conn = sq_open(&db);
	ASSERT_STREQ(sq_render(conn, "SELECT id, name FROM thread_track", g_sq_a),
		     "0|thread_slices\n");
	ASSERT_STREQ(sq_render(conn, "SELECT id, upid FROM process_track", g_sq_a), "1|1\n");
	ASSERT_STREQ(sq_render(conn, "SELECT id, cpu FROM cpu_track", g_sq_a), "2|1\n");
	ASSERT_STREQ(sq_render(conn, "SELECT id, name, unit FROM counter_track", g_sq_a),
		     "3|mem.total|bytes\n4|cpufreq|kHz\n5|rss|bytes\n6|thread_counter|NULL\n");
	ASSERT_STREQ(sq_render(conn, "SELECT id, cpu FROM cpu_counter_track", g_sq_a), "4|0\n");
	ASSERT_STREQ(sq_render(conn, "SELECT id, upid FROM process_counter_track", g_sq_a),
		     "5|2\n");
	ASSERT_STREQ(sq_render(conn, "SELECT id, utid FROM thread_counter_track", g_sq_a),
		     "6|4\n");
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM track"), 7);
	st = sq_prepare(conn, "SELECT * FROM track");
	ASSERT_EQ(sqlite3_column_count(st), 8);
	ASSERT_STREQ(sqlite3_column_name(st, 7), "track_group_id");
	sqlite3_finalize(st);
	/* Perfetto's typed track views have no dimension_arg_set_id nor track_group_id. */
	st = sq_prepare(conn, "SELECT * FROM cpu_counter_track");
	ASSERT_EQ(sqlite3_column_count(st), 9);
	ASSERT_STREQ(sqlite3_column_name(st, 8), "cpu");
	sqlite3_finalize(st);

	ASSERT_STREQ(sq_render(conn, "SELECT * FROM counters", g_sq_a),
		     "0|100|3|0.0|NULL|mem.total|bytes\n"
		     "1|110|4|1.5|NULL|cpufreq|kHz\n"
		     "2|120|3|3.0|NULL|mem.total|bytes\n"
		     "3|130|4|4.5|NULL|cpufreq|kHz\n"
		     "4|140|3|6.0|NULL|mem.total|bytes\n"
		     "5|150|4|NULL|NULL|cpufreq|kHz\n");
	/* Perfetto's columns: id, name, key (NULL: not one of Perfetto's stats), idx, ... */
	ASSERT_STREQ(sq_render(conn, "SELECT * FROM stats", g_sq_a),
		     "0|ftrace_bundle_errors|NULL|NULL|error|trace|3|NULL|NULL|NULL\n");
	ASSERT_STREQ(sq_render(conn, "SELECT arg_set_id, key, display_value FROM args", g_sq_a),
		     "1|prev_comm|swapper\n");
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM raw"), 0);
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM slices"), 0);
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM sched_slice WHERE utid = 1"), 100);
	ASSERT_EQ(sq_int(conn, "SELECT sum(ts_end - ts - dur) FROM sched"), 0);

	ASSERT_STREQ(sq_render(conn, "SELECT start_ts, end_ts FROM trace_bounds", g_sq_a),
		     "0|0\n");
	db.trace_start_ts = 1000;
	db.trace_end_ts = 6000;
	ASSERT_STREQ(sq_render(conn, "SELECT * FROM trace_bounds", g_sq_a), "1000|6000\n");
	ASSERT_STREQ(sq_render(conn, "SELECT trace_start(), trace_end(), trace_dur()", g_sq_a),
		     "1000|6000|5000\n");
	sqlite3_close(conn);
	tp_db_fini(&db);
}

/* ------------------------------------------------------- PerfettoSQL ---- */

/*
 * Runs every statement of @sql through tp_psql_prepare() as the shell does
 * (each tail is the next start); @out: the rows of the last statement with
 * rows, as sq_render_stmt() prints them, or "error: <message>" for the
 * first statement that fails (the ones after it do not run).
 */
static const char *ps_run(struct tp_psql *p, sqlite3 *conn, const char *sql, char *out)
{
	const char *pos = sql, *tail;
	sqlite3_stmt *st;
	size_t len;
	int rc, i;

	out[0] = '\0';
	while (*pos) {
		st = NULL;
		tail = NULL;
		if (tp_psql_prepare(p, pos, &st, &tail) != SQLITE_OK) {
			snprintf(out, SQ_OUT_BYTES, "error: %s", sqlite3_errmsg(conn));
			return out;
		}
		ASSERT_TRUE(tail != NULL && tail > pos && tail <= pos + strlen(pos));
		pos = tail;
		if (!st)
			continue;
		len = 0;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			if (len == 0)
				out[0] = '\0';
			for (i = 0; i < sqlite3_column_count(st); i++) {
				const char *v = (const char *)sqlite3_column_text(st, i);
				int n = snprintf(out + len, SQ_OUT_BYTES - len, "%s%s", i ? "|" : "",
						 v ? v : "NULL");

				ASSERT_TRUE(n >= 0 && (size_t)n < SQ_OUT_BYTES - len);
				len += (size_t)n;
			}
			ASSERT_TRUE(len + 1 < SQ_OUT_BYTES);
			out[len++] = '\n';
			out[len] = '\0';
		}
		if (rc != SQLITE_DONE) {
			snprintf(out, SQ_OUT_BYTES, "error: %s", sqlite3_errmsg(conn));
			sqlite3_finalize(st);
			return out;
		}
		sqlite3_finalize(st);
	}
	return out;
}

static struct tp_psql *ps_open(struct tp_db *db, sqlite3 **conn)
{
	struct tp_psql *p = NULL;

	sq_fill(db);
	*conn = sq_open(db);
	ASSERT_EQ(tp_psql_create(*conn, NULL, NULL, &p), 0);
	return p;
}

static void ps_close(struct tp_db *db, sqlite3 *conn, struct tp_psql *p)
{
	tp_psql_destroy(p);
	ASSERT_EQ(sqlite3_close(conn), SQLITE_OK);
	tp_db_fini(db);
}

/* The start of @out is "error: " and it holds @want. */
#define ASSERT_PS_ERROR(out, want)                                                   \
	do {                                                                         \
		const char *o_ = (out);                                              \
		if (strncmp(o_, "error: ", 7) != 0 || !strstr(o_, (want)))          \
			FAIL("want an error with '%s', got '%s'", (want), o_);       \
	} while (0)

TEST(sql_psql_table_and_view)
{
	struct tp_db db;
	sqlite3 *conn;
	struct tp_psql *p = ps_open(&db, &conn);
	char *o = g_sq_a;

	ASSERT_STREQ(ps_run(p, conn,
			    "CREATE PERFETTO TABLE busy(utid JOINID(thread.id), n LONG) AS "
			    "SELECT utid, count(*) AS n FROM sched WHERE utid < 2 GROUP BY utid;"
			    "SELECT * FROM busy ORDER BY utid",
			    o),
		     "0|100\n1|100\n");
	/* A real table: it keeps its rows, and is listed as one. */
	ASSERT_STREQ(ps_run(p, conn, "SELECT type FROM sqlite_master WHERE name = 'busy'", o),
		     "table\n");
	ASSERT_PS_ERROR(ps_run(p, conn, "CREATE PERFETTO TABLE busy AS SELECT 1 AS a", o),
			"already exists");
	ASSERT_STREQ(ps_run(p, conn,
			    "create or replace perfetto table busy as select 7 as a; "
			    "select * from busy",
			    o),
		     "7\n");
	ASSERT_STREQ(ps_run(p, conn,
			    "CREATE PERFETTO VIEW v(a LONG, b STRING) AS SELECT a, 'x' AS b FROM "
			    "busy; SELECT * FROM v; SELECT type FROM sqlite_master WHERE name = 'v'",
			    o),
		     "view\n");
	ASSERT_STREQ(ps_run(p, conn,
			    "CREATE OR REPLACE PERFETTO VIEW v AS SELECT a + 1 AS c FROM busy;"
			    "SELECT c FROM v",
			    o),
		     "8\n");
	/* Schema checks, with upstream's messages; nothing is created. */
	ASSERT_PS_ERROR(ps_run(p, conn, "CREATE PERFETTO TABLE t(a LONG) AS SELECT 1 AS a, 2 AS b",
			       o),
			"CREATE PERFETTO TABLE: the following columns are missing from the "
			"schema: b");
	ASSERT_PS_ERROR(ps_run(p, conn,
			       "CREATE PERFETTO TABLE t(a LONG, c LONG) AS SELECT 1 AS a, 2 AS b",
			       o),
			"declared in the schema, but do not exist: c; and the following columns "
			"exist, but are not declared: b");
	ASSERT_PS_ERROR(ps_run(p, conn, "CREATE PERFETTO VIEW t(a LONG, z INT) AS SELECT 1 AS a", o),
			"CREATE PERFETTO VIEW: the following columns are declared in the schema, "
			"but do not exist: z");
	ASSERT_PS_ERROR(ps_run(p, conn, "CREATE PERFETTO TABLE t AS SELECT 1 AS a, 2 AS a", o),
			"multiple columns are named: a");
	ASSERT_PS_ERROR(ps_run(p, conn, "CREATE PERFETTO TABLE t AS SELECT count(*) FROM sched", o),
			"CREATE PERFETTO TABLE: Column 0: name 'count(*)' has to contain only "
			"alphanumeric characters and underscores.");
	ASSERT_PS_ERROR(ps_run(p, conn, "CREATE PERFETTO TABLE t AS SELECT 1", o),
			"CREATE PERFETTO TABLE: Column 0: name '1' has to start with a letter or "
			"underscore.");
	/* A view is checked only against a schema, as upstream's. */
	ASSERT_STREQ(ps_run(p, conn, "CREATE PERFETTO VIEW any_names AS SELECT 1, 2 AS a, 3 AS a;"
			    "SELECT * FROM any_names",
			    o),
		     "1|2|3\n");
	ASSERT_PS_ERROR(ps_run(p, conn, "CREATE PERFETTO TABLE t(a WHATEVER) AS SELECT 1 AS a", o),
			"Unknown argument type: WHATEVER");
	ASSERT_PS_ERROR(ps_run(p, conn, "CREATE PERFETTO TABLE t(a BYTES) AS SELECT x'00' AS a", o),
			"CREATE PERFETTO TABLE(t): Bytes type is not supported");
	ASSERT_PS_ERROR(ps_run(p, conn, "CREATE PERFETTO TABLE t(a ANY) AS SELECT 1 AS a", o),
			"CREATE PERFETTO TABLE(t): ANY type cannot be used in table columns");
	ASSERT_STREQ(ps_run(p, conn, "CREATE PERFETTO VIEW vb(a BYTES) AS SELECT x'00' AS a;"
			    "SELECT length(a) FROM vb",
			    o),
		     "1\n");
	ASSERT_PS_ERROR(ps_run(p, conn, "SELECT * FROM t", o), "no such table: t");
	/* A failed OR REPLACE leaves the old one. */
	ASSERT_PS_ERROR(ps_run(p, conn, "CREATE OR REPLACE PERFETTO TABLE busy AS SELECT * FROM nope",
			       o),
			"no such table: nope");
	ASSERT_STREQ(ps_run(p, conn, "SELECT * FROM busy", o), "7\n");
	/* Types in any case, id types with their reference. */
	ASSERT_STREQ(ps_run(p, conn,
			    "CREATE PERFETTO TABLE ty(a long, b Timestamp, c DURATION, d "
			    "ID(sched.id), e ARGSETID, f bool, g double, h string, i uint, j int) "
			    "AS SELECT 1 AS a, 2 AS b, 3 AS c, 4 AS d, 5 AS e, 1 AS f, 0.5 AS g, "
			    "'s' AS h, x'00' AS i, 9 AS j; SELECT a, j FROM ty",
			    o),
		     "1|9\n");
	ps_close(&db, conn, p);
}

TEST(sql_psql_index)
{
	struct tp_db db;
	sqlite3 *conn;
	struct tp_psql *p = ps_open(&db, &conn);
	char *o = g_sq_a;

	ASSERT_STREQ(ps_run(p, conn,
			    "CREATE PERFETTO TABLE s AS SELECT ts, utid FROM sched;"
			    "CREATE PERFETTO INDEX s_utid ON s(utid);"
			    "SELECT name, tbl_name FROM sqlite_master WHERE type = 'index'",
			    o),
		     "s_utid|s\n");
	ASSERT_PS_ERROR(ps_run(p, conn, "CREATE PERFETTO INDEX s_utid ON s(ts)", o),
			"CREATE PERFETTO INDEX: Index 's_utid' already exists");
	ASSERT_STREQ(ps_run(p, conn,
			    "CREATE OR REPLACE PERFETTO INDEX s_utid ON s(utid, ts);"
			    "SELECT sql FROM sqlite_master WHERE type = 'index'",
			    o),
		     "CREATE INDEX s_utid ON s(utid, ts)\n");
	ASSERT_PS_ERROR(ps_run(p, conn, "CREATE PERFETTO INDEX x ON nope(a)", o),
			"CREATE PERFETTO INDEX: table 'nope' does not exist");
	ASSERT_STREQ(ps_run(p, conn,
			    "DROP PERFETTO INDEX s_utid ON s;"
			    "SELECT count(*) FROM sqlite_master WHERE type = 'index'",
			    o),
		     "0\n");
	ASSERT_PS_ERROR(ps_run(p, conn, "DROP PERFETTO INDEX s_utid ON s", o),
			"DROP PERFETTO INDEX: Index 's_utid' not found");
	ps_close(&db, conn, p);
}

TEST(sql_psql_function)
{
	struct tp_db db;
	sqlite3 *conn;
	struct tp_psql *p = ps_open(&db, &conn);
	char *o = g_sq_a;

	ASSERT_STREQ(ps_run(p, conn,
			    "CREATE PERFETTO FUNCTION plus(x LONG, y LONG) RETURNS LONG AS "
			    "SELECT $x + $y;"
			    "SELECT plus(1, 2), plus(NULL, 2), plus(utid, 1) FROM thread WHERE "
			    "utid = 3",
			    o),
		     "3|NULL|4\n");
	/* No row is NULL; the body reads tables. */
	ASSERT_STREQ(ps_run(p, conn,
			    "CREATE PERFETTO FUNCTION name_of(u LONG) RETURNS STRING AS "
			    "SELECT name FROM thread WHERE utid = $u;"
			    "SELECT name_of(2), name_of(99)",
			    o),
		     "thread-2|NULL\n");
	ASSERT_STREQ(ps_run(p, conn,
			    "CREATE PERFETTO FUNCTION fact(n INT) RETURNS LONG AS "
			    "SELECT IIF($n <= 1, 1, $n * fact($n - 1)); SELECT fact(10)",
			    o),
		     "3628800\n");
	ASSERT_PS_ERROR(ps_run(p, conn,
			       "CREATE PERFETTO FUNCTION plus(x LONG, y LONG) RETURNS LONG AS "
			       "SELECT 0",
			       o),
			"CREATE PERFETTO FUNCTION[prototype=plus(x LONG, y LONG)]: function "
			"already exists");
	ASSERT_STREQ(ps_run(p, conn,
			    "CREATE OR REPLACE PERFETTO FUNCTION plus(x LONG, y LONG) RETURNS LONG "
			    "AS SELECT $x * $y; SELECT plus(3, 4)",
			    o),
		     "12\n");
	/* As upstream: a scalar body's unknown $name is a NULL; a body that
	 * fails to prepare leaves the function failing, and defined anew by
	 * a later CREATE. */
	ASSERT_STREQ(ps_run(p, conn,
			    "CREATE OR REPLACE PERFETTO FUNCTION plus(x LONG, y LONG) RETURNS "
			    "LONG AS SELECT $z; SELECT plus(3, 4)",
			    o),
		     "NULL\n");
	ASSERT_PS_ERROR(ps_run(p, conn,
			       "CREATE OR REPLACE PERFETTO FUNCTION plus(x LONG, y LONG) RETURNS "
			       "LONG AS SELECT nocol",
			       o),
			"no such column: nocol");
	ASSERT_PS_ERROR(ps_run(p, conn, "SELECT plus(3, 4)", o), "no such column: nocol");
	ASSERT_STREQ(ps_run(p, conn,
			    "CREATE PERFETTO FUNCTION plus(x LONG, y LONG) RETURNS LONG AS SELECT "
			    "$x * $y; SELECT plus(3, 4)",
			    o),
		     "12\n");
	ASSERT_PS_ERROR(ps_run(p, conn, "SELECT plus('a', 4)", o),
			"plus[arg=a]: argument 0 does not have expected type: expected LONG, "
			"actual STRING");
	ASSERT_PS_ERROR(ps_run(p, conn,
			       "CREATE PERFETTO FUNCTION two() RETURNS LONG AS SELECT 1 UNION ALL "
			       "SELECT 2; SELECT two()",
			       o),
			"two: multiple values were returned");
	ASSERT_PS_ERROR(ps_run(p, conn,
			       "CREATE PERFETTO FUNCTION loop(x LONG) RETURNS LONG AS "
			       "SELECT loop($x); SELECT loop(1)",
			       o),
			"loop: SQL functions nested deeper than 100");
	ASSERT_PS_ERROR(ps_run(p, conn, "CREATE PERFETTO FUNCTION f(x FOO) RETURNS LONG AS SELECT 1",
			       o),
			"Unknown argument type: FOO");
	ASSERT_PS_ERROR(ps_run(p, conn, "CREATE PERFETTO FUNCTION f() RETURNS FOO AS SELECT 1", o),
			"Unknown return type: FOO");
	ASSERT_PS_ERROR(ps_run(p, conn, "CREATE PERFETTO FUNCTION f() RETURNS LONG AS SELECT * FROM nope", o),
			"no such table: nope");
	ps_close(&db, conn, p);
}

TEST(sql_psql_table_function)
{
	struct tp_db db;
	sqlite3 *conn;
	struct tp_psql *p = ps_open(&db, &conn);
	char *o = g_sq_a;

	ASSERT_STREQ(ps_run(p, conn,
			    "CREATE PERFETTO FUNCTION runs_of(u JOINID(thread.id), min_ts TIMESTAMP) "
			    "RETURNS TABLE(ts TIMESTAMP, cpu LONG) AS SELECT ts, cpu FROM sched "
			    "WHERE utid = $u AND ts >= $min_ts ORDER BY ts LIMIT 3;"
			    "SELECT * FROM runs_of(3, 1100)",
			    o),
		     "1110|3\n1160|1\n1210|3\n");
	/* Arguments from another table (a join per row); NULL matches nothing. */
	ASSERT_STREQ(ps_run(p, conn,
			    "SELECT t.utid, count(r.ts) FROM thread AS t JOIN runs_of(t.utid, 0) AS r "
			    "WHERE t.utid < 2 GROUP BY t.utid",
			    o),
		     "0|3\n1|3\n");
	ASSERT_STREQ(ps_run(p, conn, "SELECT count(*) FROM runs_of(NULL, 0)", o), "0\n");
	ASSERT_STREQ(ps_run(p, conn,
			    "CREATE OR REPLACE PERFETTO FUNCTION runs_of(u LONG, min_ts LONG) "
			    "RETURNS TABLE(n LONG) AS SELECT $u + $min_ts AS n;"
			    "SELECT n FROM runs_of(1, 2)",
			    o),
		     "3\n");
	ASSERT_PS_ERROR(ps_run(p, conn,
			       "CREATE PERFETTO FUNCTION runs_of(u LONG) RETURNS TABLE(n LONG) AS "
			       "SELECT 1 AS n",
			       o),
			"table runs_of already exists");
	ASSERT_PS_ERROR(ps_run(p, conn, "SELECT * FROM runs_of(1)", o),
			"runs_of: invalid number of args; expected 2, received 1");
	ASSERT_PS_ERROR(ps_run(p, conn, "SELECT * FROM runs_of('a', 1)", o),
			"runs_of[arg=a]: argument 0 does not have expected type");
	ASSERT_PS_ERROR(ps_run(p, conn,
			       "CREATE PERFETTO FUNCTION t2() RETURNS TABLE(a LONG, b LONG) AS "
			       "SELECT 1 AS a",
			       o),
			"t2: number of return values 1 does not match SQL statement column count 2.");
	ASSERT_PS_ERROR(ps_run(p, conn,
			       "CREATE PERFETTO FUNCTION t2() RETURNS TABLE(a LONG) AS SELECT 1 AS b",
			       o),
			"t2: column b at index 0 does not match return value name a.");
	ASSERT_PS_ERROR(ps_run(p, conn, "SELECT * FROM t2()", o), "no such table: t2");
	/* A body cannot name its own function before it exists (upstream's
	 * "no such table"), but a replacement can. */
	ASSERT_PS_ERROR(ps_run(p, conn,
			       "CREATE PERFETTO FUNCTION deep(x LONG) RETURNS TABLE(a LONG) AS "
			       "SELECT a FROM deep($x)",
			       o),
			"no such table: deep");
	ASSERT_PS_ERROR(ps_run(p, conn,
			       "CREATE PERFETTO FUNCTION deep(x LONG) RETURNS TABLE(a LONG) AS "
			       "SELECT 1 AS a; CREATE OR REPLACE PERFETTO FUNCTION deep(x LONG) "
			       "RETURNS TABLE(a LONG) AS SELECT a FROM deep($x); SELECT * FROM "
			       "deep(1)",
			       o),
			"deep: SQL functions nested deeper than 100");
	ps_close(&db, conn, p);
}

TEST(sql_psql_macro)
{
	struct tp_db db;
	sqlite3 *conn;
	struct tp_psql *p = ps_open(&db, &conn);
	char *o = g_sq_a, text[4096];
	size_t len = 0;
	int i;

	ASSERT_STREQ(ps_run(p, conn,
			    "CREATE PERFETTO MACRO diff(a Expr, b Expr) RETURNS Expr AS $a - $b;"
			    "SELECT diff!(123, 100) AS r",
			    o),
		     "23\n");
	/* Arguments are SQL text, commas inside parentheses included; macros
	 * call macros; a call can be a whole statement, and the statement after
	 * it still runs. */
	ASSERT_STREQ(ps_run(p, conn,
			    "CREATE PERFETTO MACRO rows_of(t TableOrSubquery, c ColumnName) "
			    "RETURNS TableOrSubquery AS (SELECT $c FROM $t WHERE $c < diff!(3, 1));"
			    "SELECT count(*) FROM rows_of!((SELECT utid FROM thread WHERE "
			    "utid IN (0, 1, 5)), utid); SELECT 'next'",
			    o),
		     "next\n");
	ASSERT_STREQ(ps_run(p, conn, "SELECT count(*) FROM rows_of!(thread, utid)", o), "2\n");
	ASSERT_STREQ(ps_run(p, conn,
			    "CREATE PERFETTO MACRO whole(b Expr) RETURNS TableOrSubquery AS "
			    "SELECT $b AS v; whole!(diff!(5, 1))",
			    o),
		     "4\n");
	ASSERT_PS_ERROR(ps_run(p, conn, "CREATE PERFETTO MACRO diff() RETURNS Expr AS 1", o),
			"Macro already exists");
	ASSERT_STREQ(ps_run(p, conn,
			    "CREATE OR REPLACE PERFETTO MACRO diff(a Expr, b Expr) RETURNS Expr AS "
			    "$b - $a; SELECT diff!(1, 10)",
			    o),
		     "9\n");
	/* Quoted text and comments are not expanded; stringify. */
	ASSERT_STREQ(ps_run(p, conn,
			    "SELECT 'diff!(1, 2)', __intrinsic_stringify!(foo bar) /* x!(1) */",
			    o),
		     "diff!(1, 2)|foo bar\n");
	ASSERT_PS_ERROR(ps_run(p, conn, "SELECT nope!(1)", o), "unknown macro 'nope'");
	ASSERT_PS_ERROR(ps_run(p, conn, "SELECT diff!(1)", o),
			"syntax error near '!'");
	ASSERT_PS_ERROR(ps_run(p, conn, "SELECT diff!(1, (2)", o), "unknown macro 'diff'");
	ASSERT_PS_ERROR(ps_run(p, conn,
			       "CREATE PERFETTO MACRO self(a Expr) RETURNS Expr AS self!($a);"
			       "SELECT self!(1)",
			       o),
			"recursive macro expansion: 'self'");
	ASSERT_PS_ERROR(ps_run(p, conn, "CREATE PERFETTO MACRO m(a Foo) RETURNS Expr AS 1", o),
			"Macro 'm' argument 'a' is unknown type 'Foo'");
	ASSERT_PS_ERROR(ps_run(p, conn, "CREATE PERFETTO MACRO m() RETURNS Long AS 1", o),
			"Macro m return type Long is unknown");
	/* Sixteen levels expand, seventeen do not. */
	for (i = 0; i < 17; i++) {
		if (i == 0)
			len += (size_t)snprintf(text + len, sizeof(text) - len,
						"CREATE PERFETTO MACRO l0() RETURNS Expr AS 1;");
		else
			len += (size_t)snprintf(text + len, sizeof(text) - len,
						"CREATE PERFETTO MACRO l%d() RETURNS Expr AS "
						"l%d!() + 1;",
						i, i - 1);
	}
	ASSERT_TRUE(len < sizeof(text));
	ASSERT_STREQ(ps_run(p, conn, text, o), "");
	ASSERT_STREQ(ps_run(p, conn, "SELECT l15!()", o), "16\n");
	ASSERT_PS_ERROR(ps_run(p, conn, "SELECT l16!()", o),
			"macro expansion depth limit exceeded (16)");
	/* Tripling at each level stops at the size bound, not memory. */
	len = 0;
	for (i = 0; i < 15; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"CREATE PERFETTO MACRO d%d(x Expr) RETURNS Expr AS "
					"d%d!($x) + d%d!($x) + d%d!($x);",
					i + 1, i, i, i);
	ASSERT_STREQ(ps_run(p, conn,
			    "CREATE PERFETTO MACRO d0(x Expr) RETURNS Expr AS "
			    "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
			    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
			    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'",
			    o),
		     "");
	ASSERT_STREQ(ps_run(p, conn, text, o), "");
	ASSERT_PS_ERROR(ps_run(p, conn, "SELECT d15!(1)", o), "macro expansion larger than");
	ps_close(&db, conn, p);
}

/* Registers package @name with the @n modules of @mods (name, text pairs). */
static int ps_package(struct tp_sql_modules *m, const char *name, const char *const *mods,
		      size_t n, bool allow_override, char **err)
{
	const char *names[8], *sqls[8];
	size_t lens[8], i;

	ASSERT_TRUE(n <= 8);
	for (i = 0; i < n; i++) {
		names[i] = mods[2 * i];
		sqls[i] = mods[2 * i + 1];
		lens[i] = strlen(sqls[i]);
	}
	return tp_psql_modules_register(m, name, n, names, sqls, lens, allow_override, err);
}

TEST(sql_psql_packages)
{
	static const char *const k_pkg[] = {
		"pkg.a", "INCLUDE PERFETTO MODULE pkg.b; CREATE PERFETTO VIEW pkg_a AS SELECT b + 1 "
			 "AS a FROM pkg_b;",
		"pkg.b", "CREATE PERFETTO TABLE pkg_b AS SELECT 41 AS b;",
		"pkg.sub.c", "CREATE PERFETTO MACRO pkg_c() RETURNS Expr AS 7;",
		"pkg.bad", "CREATE PERFETTO TABLE pkg_ok AS SELECT 1 AS x;\n"
			   "CREATE PERFETTO TABLE pkg_bad AS\nSELECT nope FROM pkg_ok;",
		"pkg.loop1", "INCLUDE PERFETTO MODULE pkg.loop2;",
		"pkg.loop2", "INCLUDE PERFETTO MODULE pkg.loop1;",
	};
	static const char *const k_bad_name[] = {"other.x", "SELECT 1;"};
	struct tp_sql_modules *m = NULL;
	struct tp_psql *p = NULL;
	struct tp_db db;
	sqlite3 *conn;
	char *o = g_sq_a, *err = NULL, *text;

	ASSERT_EQ(tp_psql_modules_create(&m), 0);
	ASSERT_EQ(ps_package(m, "pkg", k_pkg, 6, false, &err), 0);
	/* Upstream's rules and words. */
	ASSERT_EQ(ps_package(m, "pkg", k_pkg, 1, false, &err), -EINVAL);
	ASSERT_TRUE(strstr(err, "Package 'pkg' is already registered.") != NULL);
	sqlite3_free(err);
	ASSERT_EQ(ps_package(m, "pkg.x", k_pkg, 0, false, &err), -EINVAL);
	ASSERT_STREQ(err, "Package 'pkg.x' clashes with existing package 'pkg'. Package names "
			  "cannot be prefixes of each other.");
	sqlite3_free(err);
	ASSERT_EQ(ps_package(m, "mine", k_bad_name, 1, false, &err), -EINVAL);
	ASSERT_STREQ(err, "Module name 'other.x' must start with package name 'mine.' as prefix.");
	sqlite3_free(err);

	sq_fill(&db);
	conn = sq_open(&db);
	ASSERT_EQ(tp_psql_create(conn, NULL, m, &p), 0);
	ASSERT_STREQ(ps_run(p, conn, "INCLUDE PERFETTO MODULE pkg.a; SELECT a FROM pkg_a", o),
		     "42\n");
	ASSERT_STREQ(ps_run(p, conn, "INCLUDE PERFETTO MODULE pkg.sub.*; SELECT pkg_c!()", o),
		     "7\n");
	ASSERT_PS_ERROR(ps_run(p, conn, "INCLUDE PERFETTO MODULE pkg.none", o),
			"INCLUDE: unknown module 'pkg.none'");
	ASSERT_PS_ERROR(ps_run(p, conn, "INCLUDE PERFETTO MODULE nopkg.x", o),
			"INCLUDE: Package 'nopkg.x' not found");
	/* A module that failed fails again with its reason; its traceback
	 * names the module and the line in it. */
	ASSERT_PS_ERROR(ps_run(p, conn, "INCLUDE PERFETTO MODULE pkg.bad", o),
			"no such column: nope");
	text = tp_psql_error(p, "no such column: nope");
	ASSERT_STREQ(text, "Traceback (most recent call last):\n"
			   "  File \"stdin\" line 1 col 1\n"
			   "    INCLUDE PERFETTO MODULE pkg.bad\n"
			   "    ^\n"
			   "  Module include \"pkg.bad\" line 3 col 8\n"
			   "    SELECT nope FROM pkg_ok\n"
			   "           ^\n"
			   "no such column: nope");
	sqlite3_free(text);
	ASSERT_PS_ERROR(ps_run(p, conn, "INCLUDE PERFETTO MODULE pkg.bad", o),
			"INCLUDE: module 'pkg.bad' poisoned by earlier failure: ");
	ASSERT_PS_ERROR(ps_run(p, conn, "INCLUDE PERFETTO MODULE pkg.loop1", o),
			"INCLUDE: cycle detected \xe2\x80\x94 module 'pkg.loop1' is already "
			"mid-import in this execution.");
	/* Included modules cannot be replaced; a fresh package can come in. */
	ASSERT_EQ(ps_package(m, "pkg", k_pkg, 2, true, &err), -EINVAL);
	ASSERT_TRUE(strstr(err, "module 'pkg.a' has already been included") != NULL);
	sqlite3_free(err);
	ASSERT_EQ(ps_package(m, "late", (const char *const[]){"late.m", "SELECT 1 AS x WHERE 0;"},
			     1, false, &err),
		  0);
	ASSERT_STREQ(ps_run(p, conn, "INCLUDE PERFETTO MODULE late.m; SELECT 5", o), "5\n");
	tp_psql_destroy(p);
	ASSERT_EQ(sqlite3_close(conn), SQLITE_OK);
	tp_psql_modules_destroy(m);
	tp_db_fini(&db);
}

TEST(sql_psql_bad_syntax_never_crashes)
{
	static const char *const k_bad[] = {
		"CREATE PERFETTO TABL t AS SELECT 1",
		"CREATE PERFETTO",
		"CREATE OR REPLACE PERFETTO",
		"DROP PERFETTO TABLE t",
		"CREATE PERFETTO TABLE",
		"CREATE PERFETTO TABLE t",
		"CREATE PERFETTO TABLE t AS",
		"CREATE PERFETTO TABLE t(a LONG AS SELECT 1 AS a",
		"CREATE PERFETTO TABLE t(a) AS SELECT 1 AS a",
		"CREATE PERFETTO TABLE 't' AS SELECT 1",
		"CREATE PERFETTO VIEW v AS SELECT",
		"CREATE PERFETTO FUNCTION",
		"CREATE PERFETTO FUNCTION f",
		"CREATE PERFETTO FUNCTION f(",
		"CREATE PERFETTO FUNCTION f() RETURNS",
		"CREATE PERFETTO FUNCTION f() RETURNS LONG",
		"CREATE PERFETTO FUNCTION f() RETURNS LONG AS",
		"CREATE PERFETTO FUNCTION f(a LONG,) RETURNS LONG AS SELECT 1",
		"CREATE PERFETTO FUNCTION f(a LONG) RETURNS LONG AS SELECT 1; SELECT f()",
		"CREATE PERFETTO MACRO",
		"CREATE PERFETTO MACRO m",
		"CREATE PERFETTO MACRO m() RETURNS",
		"CREATE PERFETTO MACRO m() RETURNS Expr",
		"CREATE PERFETTO INDEX",
		"CREATE PERFETTO INDEX i ON",
		"CREATE PERFETTO INDEX i ON t(",
		"DROP PERFETTO INDEX i",
		"SELECT m!(",
		"SELECT m!('",
		"SELECT m!(\"",
		"SELECT m!(/*",
	};
	static const char k_full[] =
		"CREATE OR REPLACE PERFETTO FUNCTION f(a LONG, b JOINID(slice.id)) RETURNS LONG "
		"AS SELECT $a + 1; CREATE OR REPLACE PERFETTO MACRO m(a Expr) RETURNS Expr AS "
		"($a + f(1, 2)); SELECT m!(f(m!(1), 2)) /* c */ -- d";
	struct tp_db db;
	sqlite3 *conn;
	struct tp_psql *p = ps_open(&db, &conn);
	char *o = g_sq_a, prefix[sizeof(k_full)];
	size_t i;

	for (i = 0; i < sizeof(k_bad) / sizeof(k_bad[0]); i++)
		ASSERT_PS_ERROR(ps_run(p, conn, k_bad[i], o), "");
	/* Every prefix of a valid text runs or fails cleanly. */
	for (i = 0; i <= strlen(k_full); i++) {
		memcpy(prefix, k_full, i);
		prefix[i] = '\0';
		ps_run(p, conn, prefix, o);
	}
	ASSERT_STREQ(ps_run(p, conn, k_full, o), "6\n");
	ps_close(&db, conn, p);
}

/* ---------------------------------------------- native GROUP BY path ---- */

/* Two processes (upid 2 has none: LEFT JOIN vs JOIN differ), pid 1000 + i,
 * the second without a name; a big-valued column for SUM overflow. */
static void sq_fill_processes(struct tp_db *db)
{
	size_t i;

	for (i = 0; i < 2; i++) {
		ASSERT_EQ(tp_table_append(&db->process), (int64_t)i);
		tp_set_int(&db->process, PROCESS_PID, i, 1000 + (int64_t)i);
		if (i == 0)
			tp_set_str(&db->process, PROCESS_NAME, i, tp_db_str(db, "proc-0"));
		tp_set_int(&db->process, PROCESS_UID, i, INT64_MAX - 5);
	}
}

/* Column names, then the rows sorted (the paths may order ties apart). */
static const char *sq_render_sorted(sqlite3 *conn, sqlite3_stmt *st, char *out)
{
	char names[512] = "";
	char *lines[4096], *copy, *p;
	size_t n = 0, len = 0, i;
	int c;

	for (c = 0; c < sqlite3_column_count(st); c++) {
		size_t used = strlen(names);

		snprintf(names + used, sizeof(names) - used, "%s%s", c ? "|" : "",
			 sqlite3_column_name(st, c));
	}
	sq_render_stmt(conn, st, out);
	copy = strdup(out);
	ASSERT_TRUE(copy != NULL);
	for (p = strtok(copy, "\n"); p && n < 4096; p = strtok(NULL, "\n"))
		lines[n++] = p;
	for (i = 1; i < n; i++) {
		char *v = lines[i];
		size_t j = i;

		for (; j > 0 && strcmp(lines[j - 1], v) > 0; j--)
			lines[j] = lines[j - 1];
		lines[j] = v;
	}
	len = (size_t)snprintf(out, SQ_OUT_BYTES, "%s\n", names);
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(out + len, SQ_OUT_BYTES - len, "%s\n", lines[i]);
	free(copy);
	return out;
}

/* Runs @sql both ways; the native path must be taken iff @is_native. */
static void sq_agg_same(struct tp_agg *agg, sqlite3 *conn, const char *sql, bool is_native)
{
	sqlite3_stmt *st = sq_prepare(conn, sql);
	int taken = tp_agg_prepare(agg, sql, sql + strlen(sql), &st);

	if (taken != (is_native ? 1 : 0))
		FAIL("native path %s for: %s", taken ? "taken" : "not taken", sql);
	sq_render_sorted(conn, st, g_sq_a);
	sq_render_sorted(conn, sq_prepare(conn, sql), g_sq_b);
	if (strcmp(g_sq_a, g_sq_b) != 0)
		FAIL("%s: native and SQLite differ:\n--- native\n%.3000s--- sqlite\n%.3000s", sql,
		     g_sq_a, g_sq_b);
}

TEST(sql_native_group_by_matches_sqlite)
{
	static const char *const native[] = {
		"SELECT utid, SUM(dur) AS total FROM sched GROUP BY utid ORDER BY total DESC, utid LIMIT 5",
		"SELECT utid, sum(dur), count(*), count(dur), min(dur), max(dur), avg(dur), total(dur) "
		"FROM sched GROUP BY utid",
		"select UTID, Sum(Dur) from SCHED group by Utid",
		"SELECT utid, end_state, COUNT(*), SUM(dur) FROM sched GROUP BY utid, end_state "
		"ORDER BY 4 DESC, 1, 2",
		"SELECT end_state, COUNT(*) FROM sched GROUP BY end_state",
		"SELECT cpu, MAX(ts) FROM sched WHERE ts > 2000 AND utid != 4 GROUP BY cpu",
		"SELECT cpu, MAX(ts) FROM sched WHERE ts >= 2000 AND ts <= 3000 AND cpu <> 1 "
		"GROUP BY cpu",
		"SELECT cpu, COUNT(*) FROM sched WHERE ts BETWEEN 1100 AND 1200 GROUP BY cpu",
		"SELECT cpu, COUNT(*) FROM sched WHERE 1100 < ts AND -5 < dur GROUP BY cpu",
		"SELECT utid, COUNT(*) FROM sched WHERE end_state = 'R' GROUP BY utid",
		"SELECT utid, COUNT(*) FROM sched WHERE end_state != 'R' GROUP BY utid",
		"SELECT utid, COUNT(*) FROM sched WHERE end_state = 'never seen' GROUP BY utid",
		"SELECT utid, COUNT(*) FROM sched WHERE end_state <> 'never seen' GROUP BY utid",
		"SELECT utid, COUNT(*) FROM sched WHERE end_state IS NULL GROUP BY utid",
		"SELECT utid, COUNT(*) FROM sched WHERE dur IS NOT NULL GROUP BY utid",
		"SELECT COUNT(*), SUM(dur), MIN(ts), MAX(ts), AVG(dur) FROM sched",
		"SELECT COUNT(*), SUM(dur), MIN(ts), TOTAL(dur), AVG(dur) FROM sched WHERE ts < 0",
		"SELECT COUNT(*) FROM sched WHERE end_state = 'nope'",
		"SELECT t.utid, t.tid, t.name AS thread, p.pid, p.name AS process, SUM(s.dur) AS running "
		"FROM sched s JOIN thread t USING (utid) LEFT JOIN process p USING (upid) "
		"GROUP BY t.utid ORDER BY running DESC, t.utid LIMIT 10",
		"SELECT p.upid, p.pid, p.name, SUM(s.dur) / 1e9 AS running_s FROM sched s "
		"JOIN thread t USING (utid) JOIN process p USING (upid) GROUP BY p.upid "
		"ORDER BY running_s DESC",
		"SELECT p.upid, p.name, SUM(s.dur) FROM sched s JOIN thread t ON s.utid = t.utid "
		"LEFT JOIN process p ON p.upid = t.upid GROUP BY p.upid",
		"SELECT t.upid, COUNT(*) FROM sched AS s INNER JOIN thread AS t ON t.id = s.utid "
		"GROUP BY t.upid",
		"SELECT t.name, SUM(s.dur) FROM sched s JOIN thread t USING (utid) GROUP BY t.name",
		"SELECT utid, t.name, COUNT(*) FROM sched JOIN thread t USING (utid) GROUP BY utid",
		"SELECT s.utid, t.name FROM sched s JOIN thread t USING (utid) GROUP BY s.utid",
		"SELECT utid, COUNT(*) c FROM sched JOIN thread USING (utid) WHERE thread.name = 'thread-2' "
		"GROUP BY utid",
		"SELECT utid, COUNT(*) FROM sched JOIN thread USING (utid) WHERE upid = 1 AND "
		"thread.tid > 104 GROUP BY utid",
		"SELECT p.name, COUNT(*) FROM sched s JOIN thread t USING (utid) LEFT JOIN process p "
		"USING (upid) WHERE p.name IS NULL GROUP BY p.name",
		"SELECT utid, SUM(dur) * 2 + 1, round(AVG(dur), 2), max(SUM(dur), 300), "
		"CASE WHEN COUNT(*) > 99 THEN 'many' ELSE 'few' END AS size FROM sched GROUP BY utid",
		"SELECT utid, SUM(dur) FROM sched GROUP BY utid HAVING SUM(dur) > 250 AND utid < 8",
		"SELECT utid, SUM(dur) AS d FROM sched GROUP BY utid ORDER BY d + 0, utid DESC",
		"SELECT utid, SUM(dur) AS d FROM sched GROUP BY utid ORDER BY -utid LIMIT 3 OFFSET 2",
		"SELECT utid + 1 AS u, 'x' || utid, COUNT(*) FROM sched GROUP BY utid;",
		"SELECT utid AS \"the utid\", COUNT(*) AS \"n\" FROM sched GROUP BY utid",
		"SELECT track_id, SUM(value), MIN(value), MAX(value), AVG(value), COUNT(value), "
		"TOTAL(value) FROM counter GROUP BY track_id",
		"SELECT id, COUNT(*) FROM thread GROUP BY id",
		"SELECT upid, COUNT(*), MIN(tid) FROM thread GROUP BY upid",
		"SELECT cat, COUNT(*) FROM slice GROUP BY cat",
		"SELECT utid, priority, cpu, COUNT(*) FROM sched_slice GROUP BY utid, priority, cpu",
		"SELECT ucpu, COUNT(*) FROM sched GROUP BY ucpu ORDER BY COUNT(*) DESC, ucpu",
		"SELECT upid, SUM(uid) FROM process GROUP BY upid",
		"SELECT t.upid, MIN(s.dur), MAX(s.dur), MIN(s.ts), MAX(s.ts), AVG(s.dur), COUNT(s.dur) "
		"FROM sched s JOIN thread t USING (utid) GROUP BY t.upid",
		"SELECT p.name, MIN(s.priority), MAX(s.cpu) FROM sched s JOIN thread t USING (utid) "
		"LEFT JOIN process p USING (upid) WHERE s.dur > 2 AND t.tid < 108 GROUP BY p.name",
		"SELECT t.tid, t.name, SUM(s.dur) FROM sched s JOIN thread t USING (utid) "
		"WHERE t.name GLOB 'thread-[2-5]*' GROUP BY t.utid",
		"SELECT t.name, COUNT(*) FROM sched s JOIN thread t USING (utid) "
		"WHERE t.name NOT GLOB '*3' AND t.name LIKE 'THREAD-%' GROUP BY t.name",
		"SELECT t.name, COUNT(*) FROM sched s JOIN thread t USING (utid) "
		"WHERE t.name NOT LIKE '%1_' GROUP BY t.name",
		"SELECT end_state, COUNT(*) FROM sched WHERE end_state GLOB 'R' GROUP BY end_state",
		"SELECT utid, COUNT(*) FROM sched WHERE cpu IN (1, 3) AND utid NOT IN (2, -4) GROUP BY utid",
		"SELECT utid, COUNT(*) FROM sched WHERE end_state IN ('S', 'nope') GROUP BY utid",
		"SELECT utid, COUNT(*) FROM sched WHERE end_state NOT IN ('S', 'nope') GROUP BY utid",
		"SELECT utid, COUNT(*) FROM sched WHERE end_state IN ('nope') GROUP BY utid",
		"SELECT COUNT(*) FROM sched WHERE end_state LIKE 'r'",
		"SELECT utid, SUM(dur) FROM sched WHERE utid IN (1, 2) GROUP BY utid",
	};
	static const char *const not_native[] = {
		"SELECT utid, SUM(dur) FROM sched WHERE utid = 1 OR utid = 2 GROUP BY utid",
		"SELECT utid, cpu, SUM(dur) FROM sched GROUP BY utid",
		"SELECT utid, COUNT(DISTINCT cpu) FROM sched GROUP BY utid",
		"SELECT utid, SUM(dur) FROM (SELECT * FROM sched) GROUP BY utid",
		"SELECT utid, SUM(ts_end - ts) FROM sched GROUP BY utid",
		"SELECT utid, SUM(dur + 1) FROM sched GROUP BY utid",
		"SELECT utid, group_concat(cpu) FROM sched GROUP BY utid",
		"SELECT utid, CAST(SUM(dur) AS TEXT) FROM sched GROUP BY utid",
		"SELECT utid, SUM(dur) OVER () FROM sched",
		"SELECT DISTINCT utid FROM sched",
		"SELECT utid FROM sched WHERE dur > 3",
		"SELECT utid, SUM(dur) FROM sched WHERE dur > 2.5 GROUP BY utid",
		"SELECT utid, SUM(dur) FROM sched GROUP BY 1",
		"SELECT t.upid, SUM(s.dur) FROM thread t JOIN sched s USING (utid) GROUP BY t.upid",
		"SELECT utid, SUM(dur) FROM sched, thread USING (utid) GROUP BY utid",
		"SELECT utid, SUM(dur) FROM sched /* comment */ GROUP BY utid",
		"SELECT utid, SUM(dur) FROM sched WHERE cpu = ?1 GROUP BY utid",
		"SELECT utid, SUM(dur) FROM sched GROUP BY utid UNION ALL SELECT 1, 2",
		"SELECT ts, COUNT(*) FROM counter GROUP BY value",
		"SELECT utid, COUNT(*) FROM sched WHERE cpu GLOB '1' GROUP BY utid",
		"SELECT utid, COUNT(*) FROM sched WHERE end_state LIKE 'r' ESCAPE 'x' GROUP BY utid",
		"SELECT utid, COUNT(*) FROM sched WHERE utid IN (SELECT 1) GROUP BY utid",
		"SELECT utid, COUNT(*) FROM sched WHERE cpu NOT BETWEEN 1 AND 2 GROUP BY utid",
	};
	static const char overflow[] = "SELECT SUM(uid) FROM process";
	struct tp_agg *agg = NULL;
	struct tp_db db;
	sqlite3_stmt *st;
	sqlite3 *conn;
	size_t i;

	sq_fill(&db);
	sq_fill_tracks(&db);
	sq_fill_processes(&db);
	conn = sq_open(&db);
	ASSERT_EQ(tp_agg_create(conn, &db, &agg), 0);
	for (i = 0; i < sizeof(native) / sizeof(native[0]); i++)
		sq_agg_same(agg, conn, native[i], true);
	for (i = 0; i < sizeof(not_native) / sizeof(not_native[0]); i++)
		sq_agg_same(agg, conn, not_native[i], false);
	/* SUM overflow: SQLite reports it, the native path must not hide it. */
	st = sq_prepare(conn, overflow);
	ASSERT_EQ(tp_agg_prepare(agg, overflow, overflow + strlen(overflow), &st), 0);
	ASSERT_EQ(sqlite3_step(st), SQLITE_ERROR);
	ASSERT_TRUE(strstr(sqlite3_errmsg(conn), "overflow") != NULL);
	sqlite3_finalize(st);

	/* Joins from a sched row whose thread is missing, and negative values
	 * under AVG: the per-utid roll-up steps aside, answers stay SQLite's. */
	tp_set_int(&db.sched, SCHED_UTID, 999, 50);
	tp_set_int(&db.sched, SCHED_DUR, 998, -3);
	for (i = 0; i < sizeof(native) / sizeof(native[0]); i++)
		sq_agg_same(agg, conn, native[i], true);
	sq_agg_same(agg, conn, "SELECT p.upid, AVG(s.dur), TOTAL(s.dur), COUNT(*) FROM sched s "
			       "LEFT JOIN thread t USING (utid) LEFT JOIN process p USING (upid) "
			       "GROUP BY p.upid", true);
	sq_agg_same(agg, conn, "SELECT t.name, SUM(s.dur), MIN(s.dur), MAX(s.ts) FROM sched s "
			       "LEFT JOIN thread t USING (utid) WHERE s.cpu = 1 GROUP BY t.name", true);

	/* A temp table that shadows ours, or a redefined view, is SQLite's. */
	sq_exec(conn, "CREATE VIEW mine AS SELECT 1");
	sq_agg_same(agg, conn, "SELECT utid, SUM(dur) FROM sched GROUP BY utid", true);
	sq_exec(conn, "CREATE TEMP TABLE thread(utid INT, name TEXT); "
		      "INSERT INTO thread VALUES (1, 'shadow')");
	sq_agg_same(agg, conn, "SELECT t.name, SUM(s.dur) FROM sched s JOIN thread t USING (utid) "
			       "GROUP BY t.name", false);
	sq_exec(conn, "DROP TABLE temp.thread; DROP VIEW sched; "
		      "CREATE VIEW sched AS SELECT * FROM __intrinsic_sched WHERE utid = 1");
	sq_agg_same(agg, conn, "SELECT utid, SUM(dur) FROM sched GROUP BY utid", false);
	ASSERT_STREQ(sq_render(conn, "SELECT COUNT(DISTINCT utid) FROM sched", g_sq_a), "1\n");

	/* Results expire after a while; an old handle is an error, not a crash. */
	st = sq_prepare(conn, "SELECT __c0 FROM __tp_agg WHERE __handle = 1");
	ASSERT_EQ(sqlite3_step(st), SQLITE_ERROR);
	sqlite3_finalize(st);
	st = sq_prepare(conn, "SELECT __c0 FROM __tp_agg");
	ASSERT_EQ(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	sqlite3_close(conn);
	tp_agg_destroy(agg);
	tp_db_fini(&db);
}

TEST(sql_storage_str_find)
{
	struct tp_strings s;
	uint32_t id;

	ASSERT_EQ(tp_strings_init(&s), 0);
	id = tp_str_intern_c(&s, "hello");
	ASSERT_NE(id, 0);
	ASSERT_EQ(tp_str_find(&s, "hello", 5), id);
	ASSERT_EQ(tp_str_find(&s, "hell", 4), 0);
	ASSERT_EQ(tp_str_find(&s, "hello!", 6), 0);
	ASSERT_EQ(tp_str_find(&s, "hello\0x", 7), 0);
	ASSERT_EQ(tp_str_find(&s, "", 0), 0);
	ASSERT_EQ(s.n, 2);
	tp_strings_fini(&s);
}

/*
 * Adaptive-width columns (storage/cells.c): a table of our own with one column
 * of each kind; st_check() compares every cell with what the test stored.
 */
static const struct tp_col_spec k_st_specs[] = {
	{"id", TP_ID, 0},
	{"ts", TP_INT, TP_SORTED},
	{"v", TP_NARROW, 0},
	{"s", TP_STR, 0},
	{"r", TP_REAL, 0},
};
enum { ST_ID, ST_TS, ST_V, ST_S, ST_R, ST_N_COLS };

#define ST_ROWS 600

static void st_check(const struct tp_table *t, uint32_t c, const int64_t *want)
{
	size_t i;

	ASSERT_EQ(t->n_rows, ST_ROWS);
	for (i = 0; i < ST_ROWS; i++) {
		if (tp_get_int(t, c, i) != want[i])
			FAIL("row %zu: %lld, want %lld (encoding %d)", i,
			     (long long)tp_get_int(t, c, i), (long long)want[i],
			     (int)t->cols[c].enc);
	}
}

/* Row i holds a small value of either sign, every 7th row NULL. */
static void st_fill(struct tp_table *t, int64_t *want)
{
	size_t i;

	ASSERT_EQ(tp_table_init(t, "st", k_st_specs, ST_N_COLS), 0);
	for (i = 0; i < ST_ROWS; i++) {
		ASSERT_EQ(tp_table_append(t), (int64_t)i);
		want[i] = i % 7 == 0 ? TP_NULL_INT : (int64_t)(i % 5) - 2;
		if (want[i] != TP_NULL_INT)
			ASSERT_EQ(tp_set_int(t, ST_V, i, want[i]), 0);
		tp_set_int(t, ST_TS, i, (int64_t)i);
	}
}

TEST(sql_storage_narrow_widens_step_by_step)
{
	struct tp_table t;
	int64_t want[ST_ROWS];

	st_fill(&t, want);
	/* -2..2 and NULL: 3 bits a cell (codes 1..7: base .. base + 6). */
	ASSERT_EQ(t.cols[ST_V].enc, TP_ENC_BITS);
	ASSERT_EQ(t.cols[ST_V].bits, 3);
	ASSERT_TRUE(t.cols[ST_V].base <= -2 && t.cols[ST_V].base + 6 >= 2);
	st_check(&t, ST_V, want);

	/* Both ends of the range fit; one past the top repacks into more bits. */
	want[3] = t.cols[ST_V].base + 6;
	ASSERT_EQ(tp_set_int(&t, ST_V, 3, want[3]), 0);
	want[4] = t.cols[ST_V].base;
	ASSERT_EQ(tp_set_int(&t, ST_V, 4, want[4]), 0);
	ASSERT_EQ(t.cols[ST_V].bits, 3);
	want[5] = want[3] + 1;
	ASSERT_EQ(tp_set_int(&t, ST_V, 5, want[5]), 0);
	ASSERT_EQ(t.cols[ST_V].bits, 4);
	st_check(&t, ST_V, want);
	/* Below the base: the spare codes go below it (the top stays). */
	want[6] = want[4] - 1;
	ASSERT_EQ(tp_set_int(&t, ST_V, 6, want[6]), 0);
	ASSERT_EQ(t.cols[ST_V].enc, TP_ENC_BITS);
	ASSERT_EQ(t.cols[ST_V].bits, 4);
	ASSERT_EQ(t.cols[ST_V].base, want[5] - 14);
	st_check(&t, ST_V, want);
	want[9] = INT8_MIN;
	ASSERT_EQ(tp_set_int(&t, ST_V, 9, want[9]), 0);
	ASSERT_EQ(t.cols[ST_V].bits, 8);
	st_check(&t, ST_V, want);

	want[ST_ROWS - 1] = INT16_MIN;
	ASSERT_EQ(tp_set_int(&t, ST_V, ST_ROWS - 1, want[ST_ROWS - 1]), 0);
	ASSERT_EQ(t.cols[ST_V].enc, TP_ENC_BITS);
	ASSERT_EQ(t.cols[ST_V].bits, 16);
	st_check(&t, ST_V, want);

	/* 31 bits at most: a range past them goes to 32-bit cells. */
	want[0] = INT32_MAX; /* row 0 was NULL */
	ASSERT_EQ(tp_set_int(&t, ST_V, 0, want[0]), 0);
	ASSERT_EQ(t.cols[ST_V].enc, TP_ENC_X32);
	st_check(&t, ST_V, want);
	want[8] = INT32_MIN;
	ASSERT_EQ(tp_set_int(&t, ST_V, 8, want[8]), 0);
	/* A rare value past 32 bits is kept aside; the cells stay 32-bit. */
	ASSERT_EQ(t.cols[ST_V].enc, TP_ENC_X32);
	st_check(&t, ST_V, want);

	/* NULL stays settable at every width; extremes stay exact. */
	want[1] = TP_NULL_INT;
	ASSERT_EQ(tp_set_int(&t, ST_V, 1, TP_NULL_INT), 0);
	want[2] = INT64_MAX;
	ASSERT_EQ(tp_set_int(&t, ST_V, 2, INT64_MAX), 0);
	want[4] = INT64_MIN + 1;
	ASSERT_EQ(tp_set_int(&t, ST_V, 4, INT64_MIN + 1), 0);
	st_check(&t, ST_V, want);
	tp_table_fini(&t);
}

TEST(sql_storage_narrow_jumps_and_appends_after_widening)
{
	struct tp_table t;
	int64_t want[ST_ROWS];
	size_t i;

	st_fill(&t, want);
	/* Straight from 8 bits to 32 with an exception: old cells and NULLs survive. */
	want[10] = (int64_t)1 << 40;
	ASSERT_EQ(tp_set_int(&t, ST_V, 10, want[10]), 0);
	ASSERT_EQ(t.cols[ST_V].enc, TP_ENC_X32);
	st_check(&t, ST_V, want);
	tp_table_fini(&t);

	/* Widen early (few rows, small capacity), then grow the table past
	 * several reallocations: new rows start NULL at the new width and
	 * cells set after the append keep their values. */
	ASSERT_EQ(tp_table_init(&t, "st", k_st_specs, ST_N_COLS), 0);
	ASSERT_EQ(tp_table_append(&t), 0);
	ASSERT_EQ(tp_set_int(&t, ST_V, 0, -300), 0);
	ASSERT_EQ(t.cols[ST_V].enc, TP_ENC_BITS);
	ASSERT_EQ(t.cols[ST_V].bits, 1);
	want[0] = -300;
	for (i = 1; i < ST_ROWS; i++) {
		ASSERT_EQ(tp_table_append(&t), (int64_t)i);
		ASSERT_EQ(tp_get_int(&t, ST_V, i), TP_NULL_INT);
		ASSERT_EQ(tp_get_str(&t, ST_S, i), TP_NULL_STR);
		ASSERT_TRUE(isnan(tp_get_real(&t, ST_R, i)));
		want[i] = i % 3 ? TP_NULL_INT : -(int64_t)i * 1000;
	}
	for (i = 1; i < ST_ROWS; i++)
		if (want[i] != TP_NULL_INT)
			ASSERT_EQ(tp_set_int(&t, ST_V, i, want[i]), 0);
	ASSERT_EQ(t.cols[ST_V].enc, TP_ENC_BITS);
	ASSERT_TRUE(t.cols[ST_V].bits > 8 && t.cols[ST_V].bits < 31);
	st_check(&t, ST_V, want);
	tp_table_fini(&t);
}

/*
 * Values past 32 bits among 32-bit cells (TP_ENC_X32): kept by row while
 * rare, replaced and dropped like any cell, and once they are too many
 * the column goes 64-bit with every value intact.
 */
TEST(sql_storage_narrow_rare_wide_values)
{
	struct tp_table t;
	int64_t want[ST_ROWS];
	size_t i, n_wide = 0;

	st_fill(&t, want);
	want[1] = INT32_MAX; /* a plain 32-bit cell, the escape value of X32 */
	ASSERT_EQ(tp_set_int(&t, ST_V, 1, want[1]), 0);
	ASSERT_EQ(t.cols[ST_V].enc, TP_ENC_X32);
	st_check(&t, ST_V, want);
	want[2] = -((int64_t)1 << 33);
	ASSERT_EQ(tp_set_int(&t, ST_V, 2, want[2]), 0);
	ASSERT_EQ(t.cols[ST_V].enc, TP_ENC_X32);
	st_check(&t, ST_V, want);
	/* An exception replaced by a small value, by NULL, by INT32_MAX. */
	want[2] = 5;
	ASSERT_EQ(tp_set_int(&t, ST_V, 2, want[2]), 0);
	want[1] = TP_NULL_INT;
	ASSERT_EQ(tp_set_int(&t, ST_V, 1, want[1]), 0);
	want[3] = INT32_MAX;
	ASSERT_EQ(tp_set_int(&t, ST_V, 3, want[3]), 0);
	ASSERT_EQ(t.cols[ST_V].enc, TP_ENC_X32);
	st_check(&t, ST_V, want);
	/* A few dozen wide values stay exceptions; many make the column int64. */
	for (i = 10; i < ST_ROWS && t.cols[ST_V].enc == TP_ENC_X32; i += 3, n_wide++) {
		want[i] = ((int64_t)i << 36) * (i % 2 ? -1 : 1);
		ASSERT_EQ(tp_set_int(&t, ST_V, i, want[i]), 0);
		if (n_wide == 40) {
			ASSERT_EQ(t.cols[ST_V].enc, TP_ENC_X32);
			st_check(&t, ST_V, want);
		}
	}
	ASSERT_EQ(t.cols[ST_V].enc, TP_ENC_I64);
	ASSERT_TRUE(n_wide > 40 && n_wide < ST_ROWS / 3);
	st_check(&t, ST_V, want);
	/* Appended rows after it are NULL. */
	ASSERT_EQ(tp_table_append(&t), ST_ROWS);
	ASSERT_EQ(tp_get_int(&t, ST_V, ST_ROWS), TP_NULL_INT);
	tp_table_fini(&t);
}

/* Appends make runs of NULL rows ahead; widening must carry them over. */
TEST(sql_storage_rows_filled_ahead_stay_null_after_widening)
{
	static const int64_t wide[] = {1000, 100000, INT64_C(1) << 40};
	struct tp_table t;
	uint32_t c;
	size_t i, k;

	ASSERT_EQ(tp_table_init(&t, "st", k_st_specs, ST_N_COLS), 0);
	for (k = 0; k < 3; k++) {
		ASSERT_EQ(tp_table_append(&t), (int64_t)k);
		ASSERT_TRUE(t.n_filled > t.n_rows);
		ASSERT_EQ(tp_set_int(&t, ST_V, k, wide[k]), 0);
		ASSERT_EQ(tp_set_str(&t, ST_S, k, (uint32_t)wide[k] & 0xffffff), 0);
		/* A timestamp far from the block base: sorted cells go 64-bit. */
		ASSERT_EQ(tp_set_int(&t, ST_TS, k, (int64_t)k << 40), 0);
	}
	for (i = 3; i < 2000; i++)
		ASSERT_EQ(tp_table_append(&t), (int64_t)i);
	for (i = 3; i < 2000; i++) {
		for (c = ST_TS; c < ST_R; c++) {
			if (tp_get_int(&t, c, i) != (c == ST_S ? 0 : TP_NULL_INT))
				FAIL("column %u row %zu: %lld, not NULL", c, i,
				     (long long)tp_get_int(&t, c, i));
		}
		ASSERT_TRUE(isnan(tp_get_real(&t, ST_R, i)));
	}
	for (k = 0; k < 3; k++)
		ASSERT_EQ(tp_get_int(&t, ST_V, k), wide[k]);
	tp_table_fini(&t);
}

/*
 * Packed cells (TP_ENC_BITS) against a plain array: values of growing
 * magnitude and either sign, NULLs and overwrites, appended in runs so
 * that NULL runs, repacks and growth meet at every bit offset.
 */
TEST(sql_storage_packed_cells_match_a_plain_array)
{
	enum { N = 5000 };
	static int64_t want[N];
	struct tp_table t;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	size_t i, k;

	ASSERT_EQ(tp_table_init(&t, "st", k_st_specs, ST_N_COLS), 0);
	for (i = 0; i < N; i++) {
		int64_t mag = (int64_t)1 << (i * 30 / N);

		ASSERT_EQ(tp_table_append(&t), (int64_t)i);
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		want[i] = x >> 60 == 0 ? TP_NULL_INT : (int64_t)(x >> 33) % mag * (x & 1 ? -1 : 1);
		if (want[i] != TP_NULL_INT)
			ASSERT_EQ(tp_set_int(&t, ST_V, i, want[i]), 0);
		if (i % 97 == 0 && i) {
			/* Overwrite an earlier cell: with NULL or a value. */
			k = (size_t)(x >> 20) % i;
			want[k] = x & 2 ? TP_NULL_INT : -(int64_t)k;
			ASSERT_EQ(tp_set_int(&t, ST_V, k, want[k]), 0);
		}
	}
	ASSERT_EQ(t.cols[ST_V].enc, TP_ENC_BITS);
	ASSERT_TRUE(t.cols[ST_V].bits <= 31);
	for (i = 0; i < N; i++)
		if (tp_get_int(&t, ST_V, i) != want[i])
			FAIL("row %zu: %lld, want %lld", i, (long long)tp_get_int(&t, ST_V, i),
			     (long long)want[i]);
	/* Falling values repack a few times, not once a row. */
	tp_table_fini(&t);
	ASSERT_EQ(tp_table_init(&t, "st", k_st_specs, ST_N_COLS), 0);
	for (i = 0; i < N; i++) {
		ASSERT_EQ(tp_table_append(&t), (int64_t)i);
		ASSERT_EQ(tp_set_int(&t, ST_V, i, 1000 - (int64_t)i * 3), 0);
	}
	ASSERT_EQ(t.cols[ST_V].bits, 14);
	for (i = 0; i < N; i++)
		ASSERT_EQ(tp_get_int(&t, ST_V, i), 1000 - (int64_t)i * 3);
	tp_table_fini(&t);
}

/* Sets cell @row of the bare packed column @col (@n cells in use, room for @cap). */
static int col_put(struct tp_col *col, size_t cap, size_t n, size_t row, int64_t v)
{
	uint64_t code = v == TP_NULL_INT ? 0 : (uint64_t)(v - col->base) + 1;

	if (col->bits && v >= col->base && code <= col->mask) {
		tp_bits_put(col->data, col->bits, col->mask, row, code);
		return 0;
	}
	return tp_col_set_wide(col, cap, n, row, v);
}

/*
 * Widening in place (more bits, same base): from every width to wider
 * ones up to 30 bits (past them integers leave the packing), at cell
 * counts that end anywhere in a 32-bit word, with NULLs
 * among the cells: every cell must survive the repack.
 */
TEST(sql_storage_packed_cells_widen_in_place_at_every_offset)
{
	enum { N = 80 };
	static const struct tp_col_spec spec = {"v", TP_NARROW, 0};
	int64_t want[N];
	uint32_t from, to;
	size_t n, i;

	for (from = 1; from < 30; from++) {
		for (to = from + 1; to <= 30; to += 1 + (to - from) / 4) {
			for (n = 2; n < N; n += 1 + n / 16) {
				struct tp_col col;

				memset(&col, 0, sizeof(col));
				ASSERT_EQ(tp_col_init(&col, &spec), 0);
				ASSERT_EQ(tp_col_grow(&col, 0, N), 0);
				/* Values 0 .. 2^from - 2 from base 0: exactly @from bits. */
				for (i = 0; i < n; i++) {
					want[i] = i % 5 == 3 ? TP_NULL_INT
							     : (int64_t)((i * 2654435761u) % (((uint64_t)1 << from) - 1));
					if (i == 0)
						want[i] = 0;
					if (i == 1)
						want[i] = (int64_t)(((uint64_t)1 << from) - 2);
					if (want[i] != TP_NULL_INT)
						ASSERT_EQ(col_put(&col, N, i + 1, i, want[i]), 0);
					else if (col.bits)
						tp_bits_put(col.data, col.bits, col.mask, i, 0);
				}
				ASSERT_EQ(col.enc, TP_ENC_BITS);
				ASSERT_EQ(col.bits, from);
				ASSERT_EQ(col.base, 0);
				/* One past the top: a repack into @to bits, in place. */
				want[n - 1] = (int64_t)(((uint64_t)1 << to) - 2);
				ASSERT_EQ(col_put(&col, N, n, n - 1, want[n - 1]), 0);
				ASSERT_EQ(col.enc, TP_ENC_BITS);
				ASSERT_TRUE(col.bits >= to);
				ASSERT_EQ(col.base, 0);
				for (i = 0; i < n; i++)
					if (tp_cell_get(&col, i) != want[i])
						FAIL("%u->%u bits, %zu cells, row %zu: %lld, want %lld", from,
						     to, n, i, (long long)tp_cell_get(&col, i),
						     (long long)want[i]);
				tp_col_free(&col);
			}
		}
	}
}

TEST(sql_storage_narrow_string_ids)
{
	struct tp_table t;
	int64_t want[ST_ROWS];
	size_t i;

	st_fill(&t, want);
	for (i = 0; i < ST_ROWS; i++) {
		want[i] = i % 4 == 0 ? TP_NULL_STR : (int64_t)(i % 256);
		ASSERT_EQ(tp_set_str(&t, ST_S, i, (uint32_t)want[i]), 0);
	}
	/* Ids up to 255: 8 bits (the code is the id). */
	ASSERT_EQ(t.cols[ST_S].enc, TP_ENC_BITS);
	ASSERT_EQ(t.cols[ST_S].bits, 8);
	st_check(&t, ST_S, want);
	want[1] = 256;
	ASSERT_EQ(tp_set_str(&t, ST_S, 1, 256), 0);
	ASSERT_EQ(t.cols[ST_S].bits, 9);
	st_check(&t, ST_S, want);
	want[2] = UINT32_MAX;
	ASSERT_EQ(tp_set_str(&t, ST_S, 2, UINT32_MAX), 0);
	ASSERT_EQ(t.cols[ST_S].enc, TP_ENC_BITS);
	ASSERT_EQ(t.cols[ST_S].bits, 32);
	st_check(&t, ST_S, want);
	ASSERT_EQ(tp_get_str(&t, ST_S, 2), UINT32_MAX);

	/* An integer NULL is a string NULL; no id is negative or past 32 bits. */
	want[3] = TP_NULL_STR;
	ASSERT_EQ(tp_set_int(&t, ST_S, 3, TP_NULL_INT), 0);
	ASSERT_EQ(tp_set_int(&t, ST_S, 5, -1), -ERANGE);
	ASSERT_EQ(tp_set_int(&t, ST_S, 5, (int64_t)1 << 32), -ERANGE);
	st_check(&t, ST_S, want);
	/* Columns without integer cells refuse integers. */
	ASSERT_EQ(tp_set_int(&t, ST_R, 5, 1), -ERANGE);
	ASSERT_TRUE(isnan(tp_get_real(&t, ST_R, 5)));
	tp_table_fini(&t);
}

/* Sorted integer columns: 32-bit offsets from a base per block of rows. */
/* A cursor's row order stays readable when other cursors make the cache
 * (4 orders a table) drop it; released, it goes. */
TEST(sql_storage_held_order_outlives_the_cache)
{
	const uint32_t *held, *other, *again;
	struct tp_db db;
	uint32_t *copy;
	int64_t n;
	int c;

	sq_fill(&db);
	n = tp_table_order(&db.sched, SCHED_DUR, -1, NULL, &held);
	ASSERT_EQ(n, SQ_SCHED_ROWS);
	tp_rows_hold(held);
	copy = malloc((size_t)n * sizeof(*copy));
	ASSERT_TRUE(copy != NULL);
	memcpy(copy, held, (size_t)n * sizeof(*copy));
	/* Four other orders evict the first from the cache. */
	for (c = SCHED_CPU; c <= SCHED_UCPU; c++)
		ASSERT_EQ(tp_table_order(&db.sched, (uint32_t)c, SCHED_DUR, NULL, &other), n);
	ASSERT_TRUE(memcmp(copy, held, (size_t)n * sizeof(*copy)) == 0);
	tp_rows_release(held);
	ASSERT_EQ(tp_table_order(&db.sched, SCHED_DUR, -1, NULL, &again), n);
	ASSERT_TRUE(memcmp(copy, again, (size_t)n * sizeof(*copy)) == 0);
	free(copy);
	tp_db_fini(&db);
}

TEST(sql_storage_sorted_offsets_per_block)
{
	const size_t n = 3 * TP_D32_BLOCK_ROWS + 5;
	int64_t *want = malloc(n * sizeof(*want));
	struct tp_table t;
	size_t i;

	ASSERT_TRUE(want != NULL);
	ASSERT_EQ(tp_table_init(&t, "st", k_st_specs, ST_N_COLS), 0);
	ASSERT_EQ(t.cols[ST_TS].enc, TP_ENC_D32);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(tp_table_append(&t), (int64_t)i);
		/* Leading NULLs (INT64_MIN sorts first), then times 1000 s in. */
		want[i] = i < 3 ? TP_NULL_INT : (int64_t)1000000000000 + (int64_t)i * 1000;
		if (i >= 3)
			ASSERT_EQ(tp_set_int(&t, ST_TS, i, want[i]), 0);
	}
	ASSERT_EQ(t.cols[ST_TS].enc, TP_ENC_D32);
	for (i = 0; i < n; i++)
		ASSERT_EQ(tp_get_int(&t, ST_TS, i), want[i]);
	/* One block spans at most 2^32 - 2 past its base... */
	i = 2 * TP_D32_BLOCK_ROWS + 7;
	want[i] = want[2 * TP_D32_BLOCK_ROWS] + (int64_t)UINT32_MAX - 1;
	ASSERT_EQ(tp_set_int(&t, ST_TS, i, want[i]), 0);
	ASSERT_EQ(t.cols[ST_TS].enc, TP_ENC_D32);
	want[i + 1] = TP_NULL_INT;
	ASSERT_EQ(tp_set_int(&t, ST_TS, i + 1, TP_NULL_INT), 0);
	/* ...one more and the column becomes plain int64, values intact. */
	want[i + 2] = want[i] + 1;
	ASSERT_EQ(tp_set_int(&t, ST_TS, i + 2, want[i + 2]), 0);
	ASSERT_EQ(t.cols[ST_TS].enc, TP_ENC_I64);
	ASSERT_TRUE(t.cols[ST_TS].bases == NULL);
	for (i = 0; i < n; i++)
		ASSERT_EQ(tp_get_int(&t, ST_TS, i), want[i]);
	tp_table_fini(&t);

	/* A value below its block's base widens too; so do the extremes. */
	ASSERT_EQ(tp_table_init(&t, "st", k_st_specs, ST_N_COLS), 0);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(tp_table_append(&t), (int64_t)i);
	ASSERT_EQ(tp_set_int(&t, ST_TS, 0, 100), 0);
	ASSERT_EQ(tp_set_int(&t, ST_TS, 1, INT64_MAX - 5), 0);
	ASSERT_EQ(t.cols[ST_TS].enc, TP_ENC_I64);
	ASSERT_EQ(tp_get_int(&t, ST_TS, 0), 100);
	ASSERT_EQ(tp_get_int(&t, ST_TS, 1), INT64_MAX - 5);
	ASSERT_EQ(tp_get_int(&t, ST_TS, 2), TP_NULL_INT);
	tp_table_fini(&t);
	ASSERT_EQ(tp_table_init(&t, "st", k_st_specs, ST_N_COLS), 0);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(tp_table_append(&t), (int64_t)i);
	ASSERT_EQ(tp_set_int(&t, ST_TS, 1, -50), 0);
	ASSERT_EQ(tp_set_int(&t, ST_TS, 2, -40), 0);
	ASSERT_EQ(t.cols[ST_TS].enc, TP_ENC_D32);
	ASSERT_EQ(tp_set_int(&t, ST_TS, 0, -60), 0);
	ASSERT_EQ(t.cols[ST_TS].enc, TP_ENC_I64);
	ASSERT_EQ(tp_get_int(&t, ST_TS, 0), -60);
	ASSERT_EQ(tp_get_int(&t, ST_TS, 1), -50);
	ASSERT_EQ(tp_get_int(&t, ST_TS, 2), -40);
	ASSERT_EQ(tp_get_int(&t, ST_TS, 3), TP_NULL_INT);
	tp_table_fini(&t);
	free(want);
}

/* Rows of @t whose ST_V cell is @v, counted by scanning. */
static size_t st_count(const struct tp_table *t, int64_t v)
{
	size_t i, n = 0;

	for (i = 0; i < t->n_rows; i++)
		n += tp_get_int(t, ST_V, i) == v;
	return n;
}

/* The lookup of @v gives exactly the rows holding it, ascending. */
static void st_check_lookup(struct tp_table *t, int64_t v)
{
	const uint32_t *rows;
	int64_t n = tp_col_lookup(t, ST_V, v, &rows), i;

	ASSERT_EQ(n, (int64_t)st_count(t, v));
	for (i = 0; i < n; i++) {
		ASSERT_EQ(tp_get_int(t, ST_V, rows[i]), v);
		if (i)
			ASSERT_LT(rows[i - 1], rows[i]);
	}
}

/* The order on ST_V lists every row once: NULLs first, values ascending,
 * rows ascending among equal values. */
static void st_check_order(struct tp_table *t)
{
	const uint32_t *rows;
	int64_t n = tp_table_order(t, ST_V, -1, NULL, &rows), i;
	char *seen = calloc(t->n_rows, 1);

	ASSERT_TRUE(seen != NULL);
	ASSERT_EQ(n, (int64_t)t->n_rows);
	for (i = 0; i < n; i++) {
		ASSERT_FALSE(seen[rows[i]]);
		seen[rows[i]] = 1;
		if (i == 0)
			continue;
		ASSERT_LE(tp_get_int(t, ST_V, rows[i - 1]), tp_get_int(t, ST_V, rows[i]));
		if (tp_get_int(t, ST_V, rows[i - 1]) == tp_get_int(t, ST_V, rows[i]))
			ASSERT_LT(rows[i - 1], rows[i]);
	}
	free(seen);
}

TEST(sql_storage_narrow_index_and_order_after_widening)
{
	struct tp_table t;
	int64_t want[ST_ROWS];
	const uint32_t *rows;

	st_fill(&t, want);
	st_check_lookup(&t, -2);
	st_check_lookup(&t, TP_NULL_INT);
	st_check_order(&t);
	ASSERT_EQ(tp_col_distinct_hint(&t, ST_V), 6); /* -2..2 and NULL */

	/* Widening changes the table: the index and the order are rebuilt. */
	ASSERT_EQ(tp_set_int(&t, ST_V, 11, 100000), 0);
	ASSERT_EQ(tp_set_int(&t, ST_V, 12, -100000), 0);
	ASSERT_EQ(t.cols[ST_V].enc, TP_ENC_BITS);
	ASSERT_EQ(t.cols[ST_V].bits, 18);
	ASSERT_EQ(tp_col_lookup(&t, ST_V, 100000, &rows), 1);
	ASSERT_EQ(rows[0], 11);
	ASSERT_EQ(tp_col_lookup(&t, ST_V, -100000, &rows), 1);
	ASSERT_EQ(rows[0], 12);
	st_check_lookup(&t, -2);
	st_check_lookup(&t, 1);
	st_check_lookup(&t, TP_NULL_INT);
	ASSERT_EQ(tp_col_lookup(&t, ST_V, 3, &rows), 0);
	st_check_order(&t);
	ASSERT_EQ(tp_table_order(&t, ST_V, -1, NULL, &rows), ST_ROWS);
	ASSERT_EQ(tp_get_int(&t, ST_V, rows[0]), TP_NULL_INT);
	ASSERT_EQ(rows[ST_ROWS - 1], 11);
	ASSERT_EQ(tp_col_distinct_hint(&t, ST_V), 8);
	tp_table_fini(&t);
}

/* SQL reads narrow cells of every width, filters and orders them. */
TEST(sql_narrow_columns_through_sql)
{
	struct tp_db db;
	sqlite3 *conn;

	sq_fill(&db);
	conn = sq_open(&db);
	ASSERT_EQ(db.sched.cols[SCHED_UTID].enc, TP_ENC_BITS);
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM __intrinsic_sched WHERE utid = 3"), 100);
	tp_set_int(&db.sched, SCHED_DUR, 10, (int64_t)5 << 40);
	tp_set_int(&db.sched, SCHED_UTID, 13, -70000);
	tp_set_int(&db.sched, SCHED_CPU, 12, INT8_MIN);
	ASSERT_EQ(db.sched.cols[SCHED_DUR].enc, TP_ENC_X32);
	ASSERT_EQ(db.sched.cols[SCHED_UTID].enc, TP_ENC_BITS);
	ASSERT_EQ(db.sched.cols[SCHED_CPU].enc, TP_ENC_BITS);
	ASSERT_EQ(sq_int(conn, "SELECT dur FROM __intrinsic_sched WHERE id = 10"), (int64_t)5 << 40);
	ASSERT_EQ(sq_int(conn, "SELECT id FROM __intrinsic_sched WHERE utid = -70000"), 13);
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM __intrinsic_sched WHERE utid = 3"), 99);
	ASSERT_EQ(sq_int(conn, "SELECT cpu FROM __intrinsic_sched WHERE id = 12"), INT8_MIN);
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM __intrinsic_sched WHERE dur IS NULL"), 200);
	/* A sorted column, first as offsets, then widened: ranges bisect both. */
	ASSERT_EQ(db.sched.cols[SCHED_TS].enc, TP_ENC_D32);
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM __intrinsic_sched WHERE ts BETWEEN 1100 AND "
			       "1200"), 22);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE ts >= 5990"), 2);
	tp_set_int(&db.sched, SCHED_TS, SQ_SCHED_ROWS - 1, (int64_t)1 << 40);
	ASSERT_EQ(db.sched.cols[SCHED_TS].enc, TP_ENC_I64);
	ASSERT_EQ(sq_int(conn, "SELECT count(*) FROM __intrinsic_sched WHERE ts BETWEEN 1100 AND "
			       "1200"), 22);
	ASSERT_EQ(sq_int(conn, "SELECT id FROM __intrinsic_sched WHERE ts > 6000"),
		  SQ_SCHED_ROWS - 1);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE ts >= 5990"), 2);
	ASSERT_EQ(sq_scanned(conn, "SELECT * FROM __intrinsic_sched WHERE ts >= 6000"), 1);
	sq_copy_tables(conn);
	sq_same(conn, "SELECT * FROM %s WHERE dur > 5 OR dur IS NULL ORDER BY id",
		"__intrinsic_sched", "copy_sched");
	sq_same(conn, "SELECT utid, count(*) FROM %s GROUP BY utid ORDER BY utid",
		"__intrinsic_sched", "copy_sched");
	sq_same(conn, "SELECT utid, sum(dur), max(dur) FROM %s GROUP BY utid ORDER BY utid",
		"__intrinsic_sched", "copy_sched");
	sq_same(conn, "SELECT * FROM %s WHERE cpu < 0 ORDER BY id", "__intrinsic_sched",
		"copy_sched");
	sqlite3_close(conn);
	tp_db_fini(&db);
}

/* ================================================================ */
/* Importer tests go below.                                          */
/* ================================================================ */

/*
 * Importer tests: traces written with src/protozero (im_ helpers), fed to
 * tp_import_fd() through a memfd, read back with SQL. Run alone with `im_`.
 */
#include <sys/mman.h>
#include <unistd.h>

#include "base/hash.h"
#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/trace_processor.h"

#include <zlib.h>

#define IM_TRACE_BYTES (1 << 20)

struct im_trace {
	uint8_t *buf;
	struct pz_stream s;
	struct pz_msg trace;
	struct pz_msg pkt;
};

static void im_begin(struct im_trace *t)
{
	t->buf = malloc(IM_TRACE_BYTES);
	pz_stream_init_flat(&t->s, t->buf, IM_TRACE_BYTES);
	pz_msg_begin(&t->trace, &t->s, NULL);
}

/* Opens a packet with a timestamp (< 0: none) on sequence @seq (0: none). */
static struct pz_msg *im_packet(struct im_trace *t, int64_t ts, uint32_t seq)
{
	pz_begin_nested(&t->trace, PB_TRACE__PACKET, &t->pkt);
	if (ts >= 0)
		pz_append_varint(&t->pkt, PB_TRACE_PACKET__TIMESTAMP, (uint64_t)ts);
	if (seq)
		pz_append_varint(&t->pkt, PB_TRACE_PACKET__TRUSTED_PACKET_SEQUENCE_ID, seq);
	return &t->pkt;
}

static void im_end_packet(struct im_trace *t)
{
	pz_end(&t->pkt);
}

/* An ftrace bundle packet for @cpu; the caller adds events to *bundle. */
static void im_bundle(struct im_trace *t, uint32_t cpu, struct pz_msg *bundle)
{
	im_packet(t, -1, 0);
	pz_begin_nested(&t->pkt, PB_TRACE_PACKET__FTRACE_EVENTS, bundle);
	pz_append_varint(bundle, PB_FTRACE_EVENT_BUNDLE__CPU, cpu);
}

static void im_switch(struct pz_msg *bundle, int64_t ts, const char *prev_comm, int64_t prev_pid,
		      int64_t prev_state, const char *next_comm, int64_t next_pid)
{
	struct pz_msg ev, sw;

	pz_begin_nested(bundle, PB_FTRACE_EVENT_BUNDLE__EVENT, &ev);
	pz_append_varint(&ev, PB_FTRACE_EVENT__TIMESTAMP, (uint64_t)ts);
	pz_append_varint(&ev, PB_FTRACE_EVENT__PID, 0);
	pz_begin_nested(&ev, PB_FTRACE_EVENT__SCHED_SWITCH, &sw);
	pz_append_string(&sw, PB_SCHED_SWITCH_FTRACE_EVENT__PREV_COMM, prev_comm);
	pz_append_varint(&sw, PB_SCHED_SWITCH_FTRACE_EVENT__PREV_PID, (uint64_t)prev_pid);
	pz_append_varint(&sw, PB_SCHED_SWITCH_FTRACE_EVENT__PREV_PRIO, 120);
	pz_append_varint(&sw, PB_SCHED_SWITCH_FTRACE_EVENT__PREV_STATE, (uint64_t)prev_state);
	pz_append_string(&sw, PB_SCHED_SWITCH_FTRACE_EVENT__NEXT_COMM, next_comm);
	pz_append_varint(&sw, PB_SCHED_SWITCH_FTRACE_EVENT__NEXT_PID, (uint64_t)next_pid);
	pz_append_varint(&sw, PB_SCHED_SWITCH_FTRACE_EVENT__NEXT_PRIO, 120);
	pz_end(&sw);
	pz_end(&ev);
}

static void im_waking(struct pz_msg *bundle, int64_t ts, int64_t waker_pid, int64_t pid)
{
	struct pz_msg ev, wk;

	pz_begin_nested(bundle, PB_FTRACE_EVENT_BUNDLE__EVENT, &ev);
	pz_append_varint(&ev, PB_FTRACE_EVENT__TIMESTAMP, (uint64_t)ts);
	pz_append_varint(&ev, PB_FTRACE_EVENT__PID, (uint64_t)waker_pid);
	pz_begin_nested(&ev, PB_FTRACE_EVENT__SCHED_WAKING, &wk);
	pz_append_string(&wk, PB_SCHED_WAKING_FTRACE_EVENT__COMM, "x");
	pz_append_varint(&wk, PB_SCHED_WAKING_FTRACE_EVENT__PID, (uint64_t)pid);
	pz_append_varint(&wk, PB_SCHED_WAKING_FTRACE_EVENT__TARGET_CPU, 0);
	pz_end(&wk);
	pz_end(&ev);
}

static void im_print(struct pz_msg *bundle, int64_t ts, int64_t pid, const char *buf)
{
	struct pz_msg ev, pr;

	pz_begin_nested(bundle, PB_FTRACE_EVENT_BUNDLE__EVENT, &ev);
	pz_append_varint(&ev, PB_FTRACE_EVENT__TIMESTAMP, (uint64_t)ts);
	pz_append_varint(&ev, PB_FTRACE_EVENT__PID, (uint64_t)pid);
	pz_begin_nested(&ev, PB_FTRACE_EVENT__PRINT, &pr);
	pz_append_string(&pr, PB_PRINT_FTRACE_EVENT__BUF, buf);
	pz_end(&pr);
	pz_end(&ev);
}

static void im_end_bundle(struct im_trace *t, struct pz_msg *bundle)
{
	pz_end(bundle);
	im_end_packet(t);
}

/* Imports the trace; returns the processor (the caller destroys it). */
static struct tp *im_import(struct im_trace *t)
{
	struct tp *tp = NULL;
	int fd;

	pz_end(&t->trace);
	if (!pz_stream_ok(&t->s))
		return NULL;
	fd = memfd_create("im_trace", MFD_CLOEXEC);
	if (fd < 0 || write(fd, t->buf, t->s.n_bytes) != (ssize_t)t->s.n_bytes ||
	    lseek(fd, 0, SEEK_SET) != 0 || tp_create(NULL, &tp) < 0 ||
	    tp_import_fd(tp, fd, "im_trace") < 0) {
		if (fd >= 0)
			close(fd);
		tp_destroy(tp);
		free(t->buf);
		return NULL;
	}
	close(fd);
	free(t->buf);
	return tp;
}

/* Every row of @sql as "a,b;c,d;" (NULL as "-"), into a static buffer. */
static const char *im_rows(struct tp *tp, const char *sql)
{
	static char out[8192];
	sqlite3_stmt *st = NULL;
	size_t n = 0;
	int i;

	out[0] = '\0';
	if (sqlite3_prepare_v2(tp_sqlite(tp), sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(out, sizeof(out), "SQL error: %s", sqlite3_errmsg(tp_sqlite(tp)));
		return out;
	}
	while (sqlite3_step(st) == SQLITE_ROW && n + 256 < sizeof(out)) {
		for (i = 0; i < sqlite3_column_count(st); i++) {
			const char *v = (const char *)sqlite3_column_text(st, i);

			n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%s", i ? "," : "",
					      v ? v : "-");
		}
		n += (size_t)snprintf(out + n, sizeof(out) - n, ";");
	}
	sqlite3_finalize(st);
	return out;
}

TEST(im_sched_and_thread_state)
{
	struct im_trace t;
	struct pz_msg b;
	struct tp *tp;

	im_begin(&t);
	im_bundle(&t, 0, &b);
	im_switch(&b, 100, "swapper/0", 0, 0, "a", 10);
	im_switch(&b, 200, "a", 10, 1 /* S */, "b", 20);
	im_waking(&b, 250, 20, 10);
	im_switch(&b, 300, "b", 20, 0x100 /* preempted */, "a", 10);
	im_switch(&b, 400, "a", 10, 2 /* D */, "swapper/0", 0);
	im_end_bundle(&t, &b);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT ts, dur, cpu, t.tid, end_state FROM sched JOIN thread t "
				 "USING (utid) ORDER BY ts"),
		     "100,100,0,10,S;200,100,0,20,R+;300,100,0,10,D;400,-1,0,0,-;");
	/* a: Running, S until the waking, R (woken by b) until it runs, ... */
	ASSERT_STREQ(im_rows(tp, "SELECT ts, dur, state, waker_utid IS NOT NULL, cpu FROM "
				 "thread_state JOIN thread USING (utid) WHERE tid = 10 ORDER BY ts"),
		     "100,100,Running,0,0;200,50,S,0,-;250,50,R,1,-;300,100,Running,0,0;400,-1,D,0,-;");
	ASSERT_STREQ(im_rows(tp, "SELECT t.name FROM thread_state s JOIN thread t ON t.utid = "
				 "s.waker_utid WHERE s.state = 'R'"),
		     "b;");
	ASSERT_STREQ(im_rows(tp, "SELECT name FROM thread WHERE tid IN (0, 10, 20) ORDER BY tid"),
		     "swapper;a;b;");
	ASSERT_STREQ(im_rows(tp, "SELECT start_ts, end_ts FROM trace_bounds"), "100,400;");
	tp_destroy(tp);
}

/*
 * As in Perfetto: a switch whose prev_pid is not the pid the CPU's last
 * switch put there leaves that slice open (dur -1, no end_state), counted
 * as an analysis error; the switch's own slice starts as usual.
 */
TEST(im_sched_mismatched_prev_pid_leaves_slice_open)
{
	struct im_trace t;
	struct pz_msg b;
	struct tp *tp;

	im_begin(&t);
	im_bundle(&t, 0, &b);
	im_switch(&b, 100, "swapper/0", 0, 0, "a", 10);
	im_switch(&b, 200, "c", 30, 1 /* S: not a, events were lost */, "b", 20);
	im_switch(&b, 300, "b", 20, 1, "a", 10);
	im_end_bundle(&t, &b);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT ts, dur, t.tid, end_state FROM sched JOIN thread t "
				 "USING (utid) ORDER BY ts"),
		     "100,-1,10,-;200,100,20,S;300,-1,10,-;");
	ASSERT_STREQ(im_rows(tp, "SELECT value, severity, source, machine_id, trace_id FROM stats "
				 "WHERE name = 'mismatched_sched_switch_tids'"),
		     "1,error,analysis,0,0;");
	tp_destroy(tp);
}

/*
 * Every ftrace event's row has its fields as args (sched ones too), in
 * payload order; rows whose fields are equal share one arg set. An event
 * without common_flags has 0.
 */
TEST(im_ftrace_event_args_shared)
{
	struct im_trace t;
	struct pz_msg b;
	struct tp *tp;

	im_begin(&t);
	im_bundle(&t, 0, &b);
	im_switch(&b, 100, "swapper/0", 0, 0, "a", 10);
	im_switch(&b, 200, "a", 10, 0, "swapper/0", 0);
	im_switch(&b, 300, "swapper/0", 0, 0, "a", 10);
	im_end_bundle(&t, &b);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT COUNT(DISTINCT arg_set_id), COUNT(arg_set_id), "
				 "SUM(arg_set_id IS NULL), SUM(common_flags IS NULL) FROM ftrace_event"),
		     "2,3,0,0;");
	ASSERT_STREQ(im_rows(tp, "SELECT a.key, a.display_value FROM ftrace_event e JOIN args a "
				 "USING (arg_set_id) WHERE e.ts = 300 AND a.key GLOB 'next_*' "
				 "ORDER BY a.id"),
		     "next_comm,a;next_pid,10;next_prio,120;");
	ASSERT_STREQ(im_rows(tp, "SELECT e1.arg_set_id = e3.arg_set_id FROM ftrace_event e1, "
				 "ftrace_event e3 WHERE e1.ts = 100 AND e3.ts = 300"),
		     "1;");
	tp_destroy(tp);
}

/* Per CPU, sched slices never overlap and never outrun the trace. */
TEST(im_sched_two_cpus_sum_within_bounds)
{
	struct im_trace t;
	struct pz_msg b;
	struct tp *tp;
	int i;

	im_begin(&t);
	for (i = 0; i < 2; i++) {
		im_bundle(&t, (uint32_t)i, &b);
		im_switch(&b, 1000 + i, "swapper", 0, 0, "w", 30 + i);
		im_switch(&b, 5000 + i, "w", 30 + i, 1, "swapper", 0);
		im_switch(&b, 9000, "swapper", 0, 0, "w", 30 + i);
		im_end_bundle(&t, &b);
	}
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT cpu, SUM(dur) <= (SELECT end_ts - start_ts FROM trace_bounds) "
				 "FROM sched WHERE dur > 0 GROUP BY cpu"),
		     "0,1;1,1;");
	ASSERT_STREQ(im_rows(tp, "SELECT COUNT(*) FROM cpu"), "2;");
	tp_destroy(tp);
}

/* A second clock linked by snapshots: packets on it land in BOOTTIME. */
TEST(im_clock_conversion_two_clocks)
{
	struct im_trace t;
	struct pz_msg *p, cs, c, pt;
	struct tp *tp;
	int k;

	im_begin(&t);
	for (k = 0; k < 2; k++) {
		/* MONOTONIC (3) = BOOTTIME (6) - 1000, then - 2000 after boot 10000. */
		p = im_packet(&t, -1, 1);
		pz_begin_nested(p, PB_TRACE_PACKET__CLOCK_SNAPSHOT, &cs);
		pz_begin_nested(&cs, PB_CLOCK_SNAPSHOT__CLOCKS, &c);
		pz_append_varint(&c, PB_CLOCK_SNAPSHOT_CLOCK__CLOCK_ID, 6);
		pz_append_varint(&c, PB_CLOCK_SNAPSHOT_CLOCK__TIMESTAMP, k ? 10000 : 5000);
		pz_end(&c);
		pz_begin_nested(&cs, PB_CLOCK_SNAPSHOT__CLOCKS, &c);
		pz_append_varint(&c, PB_CLOCK_SNAPSHOT_CLOCK__CLOCK_ID, 3);
		pz_append_varint(&c, PB_CLOCK_SNAPSHOT_CLOCK__TIMESTAMP, k ? 8000 : 4000);
		pz_end(&c);
		pz_end(&cs);
		im_end_packet(&t);
	}
	/* Process stats stamped in MONOTONIC at 4500 and at 8500. */
	for (k = 0; k < 2; k++) {
		struct pz_msg pr;

		p = im_packet(&t, k ? 8500 : 4500, 2);
		pz_append_varint(p, PB_TRACE_PACKET__TIMESTAMP_CLOCK_ID, 3);
		pz_begin_nested(p, PB_TRACE_PACKET__PROCESS_STATS, &pt);
		pz_begin_nested(&pt, PB_PROCESS_STATS__PROCESSES, &pr);
		pz_append_varint(&pr, PB_PROCESS_STATS_PROCESS__PID, 5);
		pz_append_varint(&pr, PB_PROCESS_STATS_PROCESS__VM_RSS_KB, (uint64_t)(k + 1));
		pz_end(&pr);
		pz_end(&pt);
		im_end_packet(&t);
	}
	/* An unknown clock: dropped and counted. */
	p = im_packet(&t, 77, 2);
	pz_append_varint(p, PB_TRACE_PACKET__TIMESTAMP_CLOCK_ID, 200);
	im_end_packet(&t);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT ts, clock_id, clock_value FROM clock_snapshot "
				 "ORDER BY snapshot_id, clock_id"),
		     "5000,3,4000;5000,6,5000;10000,3,8000;10000,6,10000;");
	/* 4500 MONOTONIC -> 5500 BOOTTIME; 8500 -> 10500 (the later snapshot). */
	ASSERT_STREQ(im_rows(tp, "SELECT c.ts, c.value FROM counter c JOIN process_counter_track t "
				 "ON c.track_id = t.id WHERE t.name = 'mem.rss' ORDER BY c.ts"),
		     "5500,1024.0;10500,2048.0;");
	ASSERT_STREQ(im_rows(tp, "SELECT value FROM stats "
				 "WHERE name = 'clock_sync_failure_unknown_source_clock'"),
		     "1;");
	tp_destroy(tp);
}

/*
 * clock_sync_cache_miss counts the lookups that miss Perfetto's 8-slot
 * conversion cache: emptied by each snapshot, whose clock_snapshot rows
 * convert each non-trace clock (3 misses each); a new entry goes to slot
 * minstd_rand() % 8 (7, 2, 6, 5, 1, 3, 1, 1, ...); a failed conversion
 * misses but caches nothing.
 */
TEST(im_clock_sync_cache_misses)
{
	static const uint64_t clk[4] = {6, 3, 1, 4};
	static const uint64_t val[2][4] = {{5000, 4000, 1000000, 3000},
					   {10000, 8000, 2000000, 7000}};
	/* Packets: clock, time. */
	static const uint64_t pk[5][2] = {{3, 4500}, {1, 2500000}, {3, 4600}, {3, 8500}, {200, 77}};
	struct im_trace t;
	struct pz_msg *p, cs, c;
	struct tp *tp;
	int k, i;

	im_begin(&t);
	for (k = 0; k < 2; k++) {
		p = im_packet(&t, -1, 1);
		pz_begin_nested(p, PB_TRACE_PACKET__CLOCK_SNAPSHOT, &cs);
		for (i = 0; i < 4; i++) {
			pz_begin_nested(&cs, PB_CLOCK_SNAPSHOT__CLOCKS, &c);
			pz_append_varint(&c, PB_CLOCK_SNAPSHOT_CLOCK__CLOCK_ID, clk[i]);
			pz_append_varint(&c, PB_CLOCK_SNAPSHOT_CLOCK__TIMESTAMP, val[k][i]);
			pz_end(&c);
		}
		pz_end(&cs);
		im_end_packet(&t);
	}
	/*
	 * Snapshot 1 leaves MONOTONIC [8000, max) in slot 5, REALTIME
	 * [2000000, max) in 1, MONOTONIC_RAW in 3. MONOTONIC 4500 misses and
	 * takes slot 1; so REALTIME 2500000 misses and takes slot 1 back;
	 * MONOTONIC 4600 misses again; 8500 hits slot 5; clock 200 misses.
	 */
	for (k = 0; k < 5; k++) {
		p = im_packet(&t, (int64_t)pk[k][1], 2);
		pz_append_varint(p, PB_TRACE_PACKET__TIMESTAMP_CLOCK_ID, pk[k][0]);
		im_end_packet(&t);
	}
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT value FROM stats WHERE name = 'clock_sync_cache_miss'"),
		     "10;");
	tp_destroy(tp);
}

/* Clock ids 64..127 mean different clocks on different sequences. */
TEST(im_sequence_scoped_clocks)
{
	struct im_trace t;
	struct pz_msg *p, cs, c, pt, pr;
	struct tp *tp;
	uint32_t seq;

	im_begin(&t);
	for (seq = 1; seq <= 2; seq++) {
		/* Clock 64 on sequence 1 is BOOTTIME - 100; on sequence 2, - 200. */
		p = im_packet(&t, -1, seq);
		pz_begin_nested(p, PB_TRACE_PACKET__CLOCK_SNAPSHOT, &cs);
		pz_begin_nested(&cs, PB_CLOCK_SNAPSHOT__CLOCKS, &c);
		pz_append_varint(&c, PB_CLOCK_SNAPSHOT_CLOCK__CLOCK_ID, 6);
		pz_append_varint(&c, PB_CLOCK_SNAPSHOT_CLOCK__TIMESTAMP, 1000);
		pz_end(&c);
		pz_begin_nested(&cs, PB_CLOCK_SNAPSHOT__CLOCKS, &c);
		pz_append_varint(&c, PB_CLOCK_SNAPSHOT_CLOCK__CLOCK_ID, 64);
		pz_append_varint(&c, PB_CLOCK_SNAPSHOT_CLOCK__TIMESTAMP, 1000 - 100 * seq);
		pz_end(&c);
		pz_end(&cs);
		im_end_packet(&t);
	}
	for (seq = 1; seq <= 2; seq++) {
		p = im_packet(&t, 2000, seq);
		pz_append_varint(p, PB_TRACE_PACKET__TIMESTAMP_CLOCK_ID, 64);
		pz_begin_nested(p, PB_TRACE_PACKET__PROCESS_STATS, &pt);
		pz_begin_nested(&pt, PB_PROCESS_STATS__PROCESSES, &pr);
		pz_append_varint(&pr, PB_PROCESS_STATS_PROCESS__PID, seq);
		pz_append_varint(&pr, PB_PROCESS_STATS_PROCESS__VM_RSS_KB, 1);
		pz_end(&pr);
		pz_end(&pt);
		im_end_packet(&t);
	}
	/* Sequence 3 never defined clock 64: unconvertible. */
	p = im_packet(&t, 2000, 3);
	pz_append_varint(p, PB_TRACE_PACKET__TIMESTAMP_CLOCK_ID, 64);
	im_end_packet(&t);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT p.pid, c.ts FROM counter c JOIN process_counter_track t ON "
				 "c.track_id = t.id JOIN process p USING (upid) ORDER BY p.pid"),
		     "1,2100;2,2200;");
	ASSERT_STREQ(im_rows(tp, "SELECT value FROM stats "
				 "WHERE name = 'clock_sync_failure_unknown_source_clock'"),
		     "1;");
	tp_destroy(tp);
}

/* previous_packet_dropped after a sequence's first packet is data loss. */
TEST(im_dropped_packets_counted)
{
	struct im_trace t;
	struct pz_msg *p, ts, w;
	struct tp *tp;
	int i;

	im_begin(&t);
	for (i = 0; i < 4; i++) {
		p = im_packet(&t, 10 + i, 7);
		if (i == 0 || i == 2 || i == 3)
			pz_append_varint(p, PB_TRACE_PACKET__PREVIOUS_PACKET_DROPPED, 1);
		im_end_packet(&t);
	}
	p = im_packet(&t, 20, 1);
	pz_begin_nested(p, PB_TRACE_PACKET__TRACE_STATS, &ts);
	pz_begin_nested(&ts, PB_TRACE_STATS__WRITER_STATS, &w);
	pz_append_varint(&w, PB_TRACE_STATS_WRITER_STATS__SEQUENCE_ID, 7);
	pz_append_varint(&w, PB_TRACE_STATS_WRITER_STATS__BUFFER, 1);
	pz_end(&w);
	pz_end(&ts);
	im_end_packet(&t);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT idx, value FROM stats WHERE name = "
				 "'traced_buf_sequence_packet_loss'"),
		     "1,2;");
	tp_destroy(tp);
}

/*
 * The DATA_LOSS_* bits of previous_packet_dropped, per cause and buffer,
 * and sequences whose every packet needing incremental state was skipped.
 */
TEST(im_data_loss_causes)
{
	/* seq 7: the first packet's bits do not count; then overwrite, read gap + SMB full, both. */
	static const uint32_t drops[] = {0x3, 0x41, 0, 0x103, 0x43};
	struct im_trace t;
	struct pz_msg *p, ts, w;
	struct tp *tp;
	unsigned i;

	im_begin(&t);
	for (i = 0; i < sizeof(drops) / sizeof(drops[0]); i++) {
		p = im_packet(&t, 10 + i, 7);
		if (drops[i])
			pz_append_varint(p, PB_TRACE_PACKET__PREVIOUS_PACKET_DROPPED, drops[i]);
		im_end_packet(&t);
	}
	/* seq 8 never gets incremental state: both its packets are skipped. */
	for (i = 0; i < 2; i++) {
		p = im_packet(&t, 30 + i, 8);
		pz_append_varint(p, PB_TRACE_PACKET__SEQUENCE_FLAGS,
				 PBE_TRACE_PACKET_SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE);
		im_end_packet(&t);
	}
	p = im_packet(&t, 40, 1);
	pz_begin_nested(p, PB_TRACE_PACKET__TRACE_STATS, &ts);
	pz_begin_nested(&ts, PB_TRACE_STATS__WRITER_STATS, &w);
	pz_append_varint(&w, PB_TRACE_STATS_WRITER_STATS__SEQUENCE_ID, 7);
	pz_append_varint(&w, PB_TRACE_STATS_WRITER_STATS__BUFFER, 0);
	pz_end(&w);
	pz_begin_nested(&ts, PB_TRACE_STATS__WRITER_STATS, &w);
	pz_append_varint(&w, PB_TRACE_STATS_WRITER_STATS__SEQUENCE_ID, 8);
	pz_append_varint(&w, PB_TRACE_STATS_WRITER_STATS__BUFFER, 2);
	pz_end(&w);
	pz_end(&ts);
	im_end_packet(&t);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT name, idx, value FROM stats WHERE name GLOB "
				 "'traced_buf_*' AND value > 0 ORDER BY name, idx"),
		     "traced_buf_data_loss_overwrite,0,2;traced_buf_data_loss_read_gap,0,2;"
		     "traced_buf_data_loss_smb_full,0,1;"
		     "traced_buf_incremental_sequences_dropped,2,1;"
		     "traced_buf_sequence_packet_loss,0,3;");
	tp_destroy(tp);
}

/* trace_marker lines in atrace form: nested slices, counters, instants. */
TEST(im_atrace_prints)
{
	struct im_trace t;
	struct pz_msg b, *p, pt, pr;
	struct tp *tp;

	im_begin(&t);
	p = im_packet(&t, 1, 0);
	pz_begin_nested(p, PB_TRACE_PACKET__PROCESS_TREE, &pt);
	pz_begin_nested(&pt, PB_PROCESS_TREE__PROCESSES, &pr);
	pz_append_varint(&pr, PB_PROCESS_TREE_PROCESS__PID, 40);
	pz_append_varint(&pr, PB_PROCESS_TREE_PROCESS__PPID, 1);
	pz_append_string(&pr, PB_PROCESS_TREE_PROCESS__CMDLINE, "/bin/app");
	pz_append_string(&pr, PB_PROCESS_TREE_PROCESS__CMDLINE, "--fast");
	pz_end(&pr);
	pz_begin_nested(&pt, PB_PROCESS_TREE__THREADS, &pr);
	pz_append_varint(&pr, PB_PROCESS_TREE_THREAD__TID, 41);
	pz_append_varint(&pr, PB_PROCESS_TREE_THREAD__TGID, 40);
	pz_append_string(&pr, PB_PROCESS_TREE_THREAD__NAME, "worker");
	pz_end(&pr);
	pz_end(&pt);
	im_end_packet(&t);
	im_bundle(&t, 1, &b);
	im_print(&b, 100, 41, "B|40|outer\n");
	im_print(&b, 110, 41, "B|40|inner");
	im_print(&b, 120, 41, "E|40");
	im_print(&b, 130, 41, "C|40|queue_depth|7");
	im_print(&b, 140, 41, "E|40\n");
	im_print(&b, 150, 41, "I|40|tick");
	im_print(&b, 160, 41, "B|not a pid|x");
	im_print(&b, 170, 41, "E|40");
	im_end_bundle(&t, &b);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT s.ts, s.dur, s.name, s.depth, s.parent_id IS NOT NULL, th.tid "
				 "FROM slice s JOIN thread_track tt ON s.track_id = tt.id "
				 "JOIN thread th USING (utid) ORDER BY s.ts"),
		     "100,40,outer,0,0,41;110,10,inner,1,1,41;150,0,tick,0,0,41;");
	ASSERT_STREQ(im_rows(tp, "SELECT c.ts, c.value, t.name, p.pid FROM counter c JOIN "
				 "process_counter_track t ON c.track_id = t.id JOIN process p USING (upid)"),
		     "130,7.0,queue_depth,40;");
	ASSERT_STREQ(im_rows(tp, "SELECT ts, name FROM instant"), "150,tick;");
	ASSERT_STREQ(im_rows(tp, "SELECT name, value FROM stats WHERE name IN "
				 "('misplaced_end_event', 'systrace_parse_failure') ORDER BY name"),
		     "misplaced_end_event,0;systrace_parse_failure,1;");
	ASSERT_STREQ(im_rows(tp, "SELECT p.name, p.cmdline, t.name, t.is_main_thread FROM thread t "
				 "JOIN process p USING (upid) WHERE t.tid = 41"),
		     "/bin/app,/bin/app --fast,worker,0;");
	/* Every print is an ftrace_event row with its fields as args. */
	ASSERT_STREQ(im_rows(tp, "SELECT COUNT(*) FROM ftrace_event WHERE name = 'print'"), "8;");
	ASSERT_STREQ(im_rows(tp, "SELECT a.display_value FROM ftrace_event e JOIN args a USING "
				 "(arg_set_id) WHERE e.ts = 150 AND a.key = 'buf'"),
		     "I|40|tick;");
	tp_destroy(tp);
}

/*
 * Atrace counters as Perfetto's systrace parser: integer values only (1.5
 * and an empty name are parse failures), full names, ScreenState on the
 * global screen_state track, kill_one_process also an LMK instant on the
 * killed process (not for 0).
 */
TEST(im_atrace_counter_rules)
{
	static const char long_name[] = "a_counter_name_longer_than_sixty_four_bytes_"
					"so_that_nothing_may_truncate_it_xxxxxxxxxx";
	char line[256];
	struct im_trace t;
	struct pz_msg b;
	struct tp *tp;

	im_begin(&t);
	im_bundle(&t, 0, &b);
	im_print(&b, 100, 10, "C|10|ScreenState|2\n");
	im_print(&b, 200, 10, "C|10|kill_one_process|42");
	im_print(&b, 300, 10, "C|10|kill_one_process|0");
	im_print(&b, 400, 10, "C|10|frac|1.5");
	im_print(&b, 500, 10, "C|10||3");
	snprintf(line, sizeof(line), "C|10|%s|7", long_name);
	im_print(&b, 600, 10, line);
	im_end_bundle(&t, &b);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT c.ts, t.name, t.type, c.value FROM counter c "
				 "JOIN track t ON c.track_id = t.id ORDER BY c.ts"),
		     "100,ScreenState,screen_state,2.0;200,kill_one_process,atrace_counter,42.0;"
		     "300,kill_one_process,atrace_counter,0.0;600,a_counter_name_longer_than_sixty_"
		     "four_bytes_so_that_nothing_may_truncate_it_xxxxxxxxxx,atrace_counter,7.0;");
	ASSERT_STREQ(im_rows(tp, "SELECT s.ts, s.dur, s.name, t.name, t.type, p.pid FROM slice s "
				 "JOIN process_track t ON s.track_id = t.id JOIN process p USING (upid)"),
		     "200,0,mem.lmk,LMK,android_lmk,42;");
	ASSERT_STREQ(im_rows(tp, "SELECT value FROM stats WHERE name = 'systrace_parse_failure'"),
		     "2;");
	tp_destroy(tp);
}

/*
 * atrace async slices: S/F pair by cookie on per-process tracks named after
 * the slice, a repeated S while one is open is only counted; G/H use the
 * named track (H with or without the name), N is an instant there.
 */
TEST(im_atrace_async)
{
	struct im_trace t;
	struct pz_msg b;
	struct tp *tp;

	im_begin(&t);
	im_bundle(&t, 0, &b);
	im_print(&b, 100, 51, "S|50|load|7\n");
	im_print(&b, 105, 51, "S|50|load|7");
	im_print(&b, 110, 52, "S|50|load|8");
	im_print(&b, 120, 53, "F|50|load|7");
	im_print(&b, 130, 51, "S|50|load|9");
	im_print(&b, 140, 51, "F|50|load|8");
	im_print(&b, 150, 51, "F|50|load|9");
	im_print(&b, 200, 61, "G|60|net|req|1");
	im_print(&b, 210, 61, "G|60|net|req|2");
	im_print(&b, 220, 62, "H|60|net|1");
	im_print(&b, 230, 62, "H|60|net|req|2");
	im_print(&b, 240, 61, "N|60|net|ping");
	im_print(&b, 250, 61, "S|60|x|notanumber");
	im_print(&b, 260, 61, "G|60|net|req");
	im_end_bundle(&t, &b);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT s.ts, s.dur, s.name, t.name, t.type, p.pid, "
				 "s.track_id = (SELECT MIN(track_id) FROM slice) "
				 "FROM slice s JOIN process_track t ON s.track_id = t.id "
				 "JOIN process p USING (upid) ORDER BY s.ts"),
		     "100,20,load,load,atrace_async_slice,50,1;"
		     "110,30,load,load,atrace_async_slice,50,0;"
		     "130,20,load,load,atrace_async_slice,50,1;"
		     "200,20,req,net,atrace_async_slice_for_track,60,0;"
		     "210,20,req,net,atrace_async_slice_for_track,60,0;"
		     "240,0,ping,net,atrace_async_slice_for_track,60,0;");
	/* load: 7 and 9 share a track, 8 overlaps; net: two cookies and the instants. */
	ASSERT_STREQ(im_rows(tp, "SELECT COUNT(DISTINCT track_id) FROM slice"), "5;");
	ASSERT_STREQ(im_rows(tp, "SELECT a.key, a.int_value FROM slice s JOIN args a USING "
				 "(arg_set_id) WHERE s.ts = 100 ORDER BY a.key"),
		     "cookie,7;legacy_unnestable_begin_count,2;legacy_unnestable_last_begin_ts,105;");
	ASSERT_STREQ(im_rows(tp, "SELECT value FROM stats WHERE name = "
				 "'systrace_parse_failure'"),
		     "2;");
	tp_destroy(tp);
}

static void im_blocked(struct pz_msg *bundle, int64_t ts, int64_t pid, uint64_t caller)
{
	struct pz_msg ev, br;

	pz_begin_nested(bundle, PB_FTRACE_EVENT_BUNDLE__EVENT, &ev);
	pz_append_varint(&ev, PB_FTRACE_EVENT__TIMESTAMP, (uint64_t)ts);
	pz_append_varint(&ev, PB_FTRACE_EVENT__PID, 0);
	pz_begin_nested(&ev, PB_FTRACE_EVENT__SCHED_BLOCKED_REASON, &br);
	pz_append_varint(&br, PB_SCHED_BLOCKED_REASON_FTRACE_EVENT__PID, (uint64_t)pid);
	pz_append_varint(&br, PB_SCHED_BLOCKED_REASON_FTRACE_EVENT__CALLER, caller);
	pz_append_varint(&br, PB_SCHED_BLOCKED_REASON_FTRACE_EVENT__IO_WAIT, 1);
	pz_end(&br);
	pz_end(&ev);
}

/* Closes a bundle opened on a sequence; a clear comes with kernel symbol @sym as iid 1. */
static void im_end_seq_bundle(struct im_trace *t, struct pz_msg *bundle, const char *sym)
{
	struct pz_msg in, ks;

	pz_end(bundle);
	pz_append_varint(&t->pkt, PB_TRACE_PACKET__TRUSTED_PACKET_SEQUENCE_ID, 5);
	if (sym) {
		pz_append_varint(&t->pkt, PB_TRACE_PACKET__SEQUENCE_FLAGS,
				 PBE_TRACE_PACKET_SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED);
		pz_begin_nested(&t->pkt, PB_TRACE_PACKET__INTERNED_DATA, &in);
		pz_begin_nested(&in, PB_INTERNED_DATA__KERNEL_SYMBOLS, &ks);
		pz_append_varint(&ks, PB_INTERNED_STRING__IID, 1);
		pz_append_string(&ks, PB_INTERNED_STRING__STR, sym);
		pz_end(&ks);
		pz_end(&in);
	}
	im_end_packet(t);
}

/*
 * sched_blocked_reason's caller names a kernel symbol interned on the
 * bundle's sequence, as of that bundle (a later clear re-defines iid 1);
 * an unknown iid leaves blocked_function NULL.
 */
TEST(im_blocked_reason_symbolized)
{
	struct im_trace t;
	struct pz_msg b;
	struct tp *tp;

	im_begin(&t);
	im_bundle(&t, 0, &b);
	im_switch(&b, 100, "swapper/0", 0, 0, "t10", 10);
	im_switch(&b, 200, "t10", 10, 2, "swapper/0", 0);
	im_blocked(&b, 201, 10, 1);
	im_end_seq_bundle(&t, &b, "fn_a");
	im_bundle(&t, 0, &b);
	im_switch(&b, 300, "swapper/0", 0, 0, "t10", 10);
	im_switch(&b, 400, "t10", 10, 2, "swapper/0", 0);
	im_blocked(&b, 401, 10, 1);
	im_switch(&b, 500, "swapper/0", 0, 0, "t10", 10);
	im_switch(&b, 600, "t10", 10, 2, "swapper/0", 0);
	im_blocked(&b, 601, 10, 9);
	im_end_seq_bundle(&t, &b, "fn_b");
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT ts, io_wait, blocked_function FROM thread_state "
				 "WHERE state = 'D' ORDER BY ts"),
		     "200,1,fn_a;400,1,fn_b;600,1,-;");
	tp_destroy(tp);
}

/*
 * Equal times across CPUs merge like Perfetto's per-CPU queues: the CPU
 * being drained keeps its events up to the next CPU's first one, ties
 * included; a fresh pick takes the lowest CPU.
 */
TEST(im_ftrace_cpu_ties)
{
	struct im_trace t;
	struct pz_msg b;
	struct tp *tp;

	im_begin(&t);
	im_bundle(&t, 1, &b);
	im_switch(&b, 50, "swapper/1", 0, 0, "t11", 11);
	im_switch(&b, 999, "t11", 11, 1, "t12", 12);
	im_end_bundle(&t, &b);
	im_bundle(&t, 2, &b);
	im_switch(&b, 60, "swapper/2", 0, 0, "t21", 21);
	im_switch(&b, 999, "t21", 21, 1, "t22", 22);
	im_end_bundle(&t, &b);
	im_bundle(&t, 3, &b);
	im_switch(&b, 60, "swapper/3", 0, 0, "t31", 31);
	im_switch(&b, 999, "t31", 31, 1, "t32", 32);
	im_end_bundle(&t, &b);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	/*
	 * 50 (cpu 1); at 60 cpu 2 wins the pick, then cpu 3 (next event of
	 * cpu 2 is later); cpu 3 keeps going through 999; then cpu 1 (lowest).
	 */
	ASSERT_STREQ(im_rows(tp, "SELECT ts, cpu FROM sched ORDER BY id"),
		     "50,1;60,2;60,3;999,3;999,1;999,2;");
	tp_destroy(tp);
}

/* Appends @n varints as one packed field. */
static void im_packed(struct pz_msg *m, uint32_t id, const int64_t *v, size_t n)
{
	uint8_t buf[256];
	size_t len = 0, i;

	for (i = 0; i < n; i++)
		len += pz_varint_encode((uint64_t)v[i], buf + len);
	pz_append_bytes(m, id, buf, len);
}

/* compact_sched: delta timestamps, interned comms; prev_pid is implied. */
TEST(im_compact_sched)
{
	static const int64_t sw_ts[] = {1000, 100, 100}, sw_state[] = {1, 0, 2},
			     sw_pid[] = {50, 51, 50}, sw_prio[] = {120, 110, 120},
			     sw_comm[] = {0, 1, 0};
	static const int64_t wk_ts[] = {1150}, wk_pid[] = {50}, wk_cpu[] = {2}, wk_prio[] = {120},
			     wk_comm[] = {0}, wk_flags[] = {1};
	struct im_trace t;
	struct pz_msg b, cs;
	struct tp *tp;

	im_begin(&t);
	im_bundle(&t, 2, &b);
	pz_begin_nested(&b, PB_FTRACE_EVENT_BUNDLE__COMPACT_SCHED, &cs);
	pz_append_string(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__INTERN_TABLE, "fifty");
	pz_append_string(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__INTERN_TABLE, "fiftyone");
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_TIMESTAMP, sw_ts, 3);
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_PREV_STATE, sw_state, 3);
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_NEXT_PID, sw_pid, 3);
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_NEXT_PRIO, sw_prio, 3);
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_NEXT_COMM_INDEX, sw_comm, 3);
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__WAKING_TIMESTAMP, wk_ts, 1);
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__WAKING_PID, wk_pid, 1);
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__WAKING_TARGET_CPU, wk_cpu, 1);
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__WAKING_PRIO, wk_prio, 1);
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__WAKING_COMM_INDEX, wk_comm, 1);
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__WAKING_COMMON_FLAGS, wk_flags, 1);
	pz_end(&cs);
	im_end_bundle(&t, &b);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	/*
	 * Switches at 1000, 1100, 1200; each slice ends in the next one's
	 * prev_state. As in Perfetto, the CPU's first compact switch only says
	 * who runs (50): no slice, no state, no ftrace_event row, counted.
	 */
	ASSERT_STREQ(im_rows(tp, "SELECT ts, dur, cpu, t.tid, t.name, end_state, priority FROM sched "
				 "JOIN thread t USING (utid) ORDER BY ts"),
		     "1100,100,2,51,fiftyone,D,110;1200,-1,2,50,fifty,-,120;");
	/* 50 was preempted (R) at 1100, so the waking at 1150 changes nothing. */
	ASSERT_STREQ(im_rows(tp, "SELECT ts, state FROM thread_state JOIN thread USING (utid) "
				 "WHERE tid = 50 ORDER BY ts"),
		     "1100,R;1200,Running;");
	/* The switches and the waking are ftrace_event rows too (utid: who ran). */
	ASSERT_STREQ(im_rows(tp, "SELECT e.ts, e.name, t.tid, e.common_flags FROM ftrace_event e "
				 "JOIN thread t USING (utid) ORDER BY e.ts"),
		     "1100,sched_switch,50,0;1150,sched_waking,51,1;1200,sched_switch,51,0;");
	/*
	 * Their args as Perfetto gives them: a switch's prev_* are the thread
	 * the CPU's last switch ran (its name, pid and priority).
	 */
	ASSERT_STREQ(im_rows(tp, "SELECT group_concat(a.key || '=' || a.display_value, ' ') FROM "
				 "ftrace_event e JOIN args a USING (arg_set_id) GROUP BY e.id "
				 "ORDER BY e.ts"),
		     "prev_comm=fifty prev_pid=50 prev_prio=120 prev_state=0 next_comm=fiftyone "
		     "next_pid=51 next_prio=110;"
		     "comm=fifty pid=50 prio=120 target_cpu=2;"
		     "prev_comm=fiftyone prev_pid=51 prev_prio=110 prev_state=2 next_comm=fifty "
		     "next_pid=50 next_prio=120;");
	/* As in Perfetto, every single stat has a row, 0 until counted. */
	ASSERT_STREQ(im_rows(tp, "SELECT name, value FROM stats WHERE name GLOB 'compact*'"),
		     "compact_sched_has_parse_errors,0;compact_sched_switch_skipped,1;"
		     "compact_sched_waking_skipped,0;");
	tp_destroy(tp);
}

/* One side of a sync entry: a ClockSnapshot with BOOTTIME only. */
static void im_sync_side(struct pz_msg *entry, uint32_t field, int64_t boot)
{
	struct pz_msg cs, c;

	pz_begin_nested(entry, field, &cs);
	pz_begin_nested(&cs, PB_CLOCK_SNAPSHOT__CLOCKS, &c);
	pz_append_varint(&c, PB_CLOCK_SNAPSHOT_CLOCK__CLOCK_ID, 6);
	pz_append_varint(&c, PB_CLOCK_SNAPSHOT_CLOCK__TIMESTAMP, (uint64_t)boot);
	pz_end(&c);
	pz_end(&cs);
}

/*
 * A RemoteClockSync packet of @machine for one round starting at host time
 * @host with the client's BOOTTIME @offset ahead, 25 us each way (so both
 * estimates are exact).
 */
static void im_sync_round(struct im_trace *t, uint32_t machine, int64_t host, int64_t offset)
{
	struct pz_msg *p = im_packet(t, -1, 0), sync, e;
	int k;

	pz_append_varint(p, PB_TRACE_PACKET__MACHINE_ID, machine);
	pz_begin_nested(p, PB_TRACE_PACKET__REMOTE_CLOCK_SYNC, &sync);
	for (k = 0; k < 2; k++) {
		pz_begin_nested(&sync, PB_REMOTE_CLOCK_SYNC__SYNCED_CLOCKS, &e);
		im_sync_side(&e, PB_REMOTE_CLOCK_SYNC_SYNCED_CLOCKS__CLIENT_CLOCKS,
			     host + offset + 50000 * k);
		im_sync_side(&e, PB_REMOTE_CLOCK_SYNC_SYNCED_CLOCKS__HOST_CLOCKS,
			     host + 25000 + 50000 * k);
		pz_end(&e);
	}
	pz_end(&sync);
	im_end_packet(t);
}

/*
 * compact_sched of another machine converts through its clock sync rounds,
 * each record by the round in force at its time: the guest is 1000 s ahead
 * at host 10 s, and 1000.002 s ahead at host 20 s.
 */
TEST(im_remote_compact_sched_two_rounds)
{
	static const int64_t sw_ts[] = {1015000000000, 10000000000}, sw_state[] = {0, 1},
			     sw_pid[] = {50, 51}, sw_prio[] = {120, 120}, sw_comm[] = {0, 1};
	static const int64_t wk_ts[] = {1025000500000}, wk_pid[] = {50}, wk_cpu[] = {1},
			     wk_prio[] = {120}, wk_comm[] = {0};
	struct im_trace t;
	struct pz_msg b, cs;
	struct tp *tp;

	im_begin(&t);
	im_bundle(&t, 0, &b);
	im_switch(&b, 5000000000, "swapper/0", 0, 0, "host", 10);
	im_end_bundle(&t, &b);
	im_sync_round(&t, 3, 10000000000, 1000000000000);
	im_sync_round(&t, 3, 20000000000, 1000002000000);
	im_bundle(&t, 1, &b);
	pz_begin_nested(&b, PB_FTRACE_EVENT_BUNDLE__COMPACT_SCHED, &cs);
	pz_append_string(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__INTERN_TABLE, "fifty");
	pz_append_string(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__INTERN_TABLE, "fiftyone");
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_TIMESTAMP, sw_ts, 2);
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_PREV_STATE, sw_state, 2);
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_NEXT_PID, sw_pid, 2);
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_NEXT_PRIO, sw_prio, 2);
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_NEXT_COMM_INDEX, sw_comm, 2);
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__WAKING_TIMESTAMP, wk_ts, 1);
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__WAKING_PID, wk_pid, 1);
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__WAKING_TARGET_CPU, wk_cpu, 1);
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__WAKING_PRIO, wk_prio, 1);
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__WAKING_COMM_INDEX, wk_comm, 1);
	pz_end(&cs);
	pz_end(&b);
	pz_append_varint(&t.pkt, PB_TRACE_PACKET__MACHINE_ID, 3);
	im_end_packet(&t);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	/*
	 * Guest 1015 s -> host 15 s (round 1: the CPU's first compact switch,
	 * which only says 50 runs); 1025 s -> 25 s - 2 ms (round 2).
	 */
	ASSERT_STREQ(im_rows(tp, "SELECT s.ts, s.ucpu, c.cpu, c.machine_id, t.tid FROM sched s "
				 "JOIN cpu c USING (ucpu) JOIN thread t USING (utid) ORDER BY s.ts"),
		     "5000000000,0,0,0,10;24998000000,4097,1,1,51;");
	ASSERT_STREQ(im_rows(tp, "SELECT ts, state FROM thread_state JOIN thread t USING (utid) "
				 "WHERE t.tid = 50 ORDER BY ts"),
		     "24998000000,S;24998500000,R;");
	ASSERT_STREQ(im_rows(tp, "SELECT e.ts, e.name, c.machine_id FROM ftrace_event e "
				 "JOIN cpu c USING (ucpu) WHERE c.machine_id = 1 ORDER BY e.ts"),
		     "24998000000,sched_switch,1;24998500000,sched_waking,1;");
	ASSERT_STREQ(im_rows(tp, "SELECT id, raw_id FROM machine"), "0,0;1,3;");
	tp_destroy(tp);
}

/* A compressed_packets blob holds packets that are imported like others. */
TEST(im_compressed_packets)
{
	struct im_trace inner, t;
	struct pz_msg b, *p;
	uint8_t *z;
	uLongf zlen;
	struct tp *tp;

	im_begin(&inner);
	im_bundle(&inner, 0, &b);
	im_switch(&b, 10, "swapper", 0, 0, "zipped", 77);
	im_switch(&b, 20, "zipped", 77, 1, "swapper", 0);
	im_end_bundle(&inner, &b);
	pz_end(&inner.trace);
	zlen = compressBound(inner.s.n_bytes);
	z = malloc(zlen);
	ASSERT_EQ(compress(z, &zlen, inner.buf, inner.s.n_bytes), Z_OK);
	free(inner.buf);
	im_begin(&t);
	p = im_packet(&t, -1, 1);
	pz_append_bytes(p, PB_TRACE_PACKET__COMPRESSED_PACKETS, z, zlen);
	im_end_packet(&t);
	/* A corrupt blob is counted, not fatal. */
	p = im_packet(&t, -1, 1);
	pz_append_bytes(p, PB_TRACE_PACKET__COMPRESSED_PACKETS, "not zlib", 8);
	im_end_packet(&t);
	free(z);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT ts, dur, t.name FROM sched JOIN thread t USING (utid) "
				 "WHERE t.tid = 77"),
		     "10,10,zipped;");
	ASSERT_STREQ(im_rows(tp, "SELECT value FROM stats WHERE name = 'compressed_packets_invalid'"),
		     "1;");
	tp_destroy(tp);
}

/*
 * Threads and processes: newtask (thread vs process), rename, exit. As in
 * Perfetto, a process tree entry makes its parent process with its main
 * thread (pid 1 here), and sched_process_exit ends nothing (the task is a
 * zombie until sched_process_free).
 */
TEST(im_process_tracking)
{
	struct im_trace t;
	struct pz_msg b, ev, nt, *p, pt, pr;
	struct tp *tp;
	int i;

	im_begin(&t);
	p = im_packet(&t, 1, 0);
	pz_begin_nested(p, PB_TRACE_PACKET__PROCESS_TREE, &pt);
	pz_begin_nested(&pt, PB_PROCESS_TREE__PROCESSES, &pr);
	pz_append_varint(&pr, PB_PROCESS_TREE_PROCESS__PID, 100);
	pz_append_varint(&pr, PB_PROCESS_TREE_PROCESS__PPID, 1);
	pz_append_string(&pr, PB_PROCESS_TREE_PROCESS__CMDLINE, "server");
	pz_end(&pr);
	pz_end(&pt);
	im_end_packet(&t);
	im_bundle(&t, 0, &b);
	for (i = 0; i < 2; i++) {
		/* 100 creates thread 101 (CLONE_THREAD), then process 200. */
		pz_begin_nested(&b, PB_FTRACE_EVENT_BUNDLE__EVENT, &ev);
		pz_append_varint(&ev, PB_FTRACE_EVENT__TIMESTAMP, 10 + (uint64_t)i);
		pz_append_varint(&ev, PB_FTRACE_EVENT__PID, 100);
		pz_begin_nested(&ev, PB_FTRACE_EVENT__TASK_NEWTASK, &nt);
		pz_append_varint(&nt, PB_TASK_NEWTASK_FTRACE_EVENT__PID, i ? 200 : 101);
		pz_append_string(&nt, PB_TASK_NEWTASK_FTRACE_EVENT__COMM, i ? "child" : "server");
		pz_append_varint(&nt, PB_TASK_NEWTASK_FTRACE_EVENT__CLONE_FLAGS, i ? 0 : 0x10000);
		pz_end(&nt);
		pz_end(&ev);
	}
	pz_begin_nested(&b, PB_FTRACE_EVENT_BUNDLE__EVENT, &ev);
	pz_append_varint(&ev, PB_FTRACE_EVENT__TIMESTAMP, 20);
	pz_append_varint(&ev, PB_FTRACE_EVENT__PID, 101);
	pz_begin_nested(&ev, PB_FTRACE_EVENT__TASK_RENAME, &nt);
	pz_append_varint(&nt, PB_TASK_RENAME_FTRACE_EVENT__PID, 101);
	pz_append_string(&nt, PB_TASK_RENAME_FTRACE_EVENT__NEWCOMM, "io-worker");
	pz_end(&nt);
	pz_end(&ev);
	pz_begin_nested(&b, PB_FTRACE_EVENT_BUNDLE__EVENT, &ev);
	pz_append_varint(&ev, PB_FTRACE_EVENT__TIMESTAMP, 30);
	pz_append_varint(&ev, PB_FTRACE_EVENT__PID, 200);
	pz_begin_nested(&ev, PB_FTRACE_EVENT__SCHED_PROCESS_EXIT, &nt);
	pz_append_varint(&nt, PB_SCHED_PROCESS_EXIT_FTRACE_EVENT__PID, 200);
	pz_end(&nt);
	pz_end(&ev);
	im_end_bundle(&t, &b);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT t.tid, t.name, t.start_ts, t.end_ts, p.pid, p.name, "
				 "t.is_main_thread FROM thread t LEFT JOIN process p USING (upid) "
				 "WHERE t.tid > 0 ORDER BY t.tid"),
		     "1,-,-,-,1,-,1;100,-,-,-,100,server,1;101,io-worker,10,-,100,server,0;"
		     "200,child,11,-,200,child,1;");
	ASSERT_STREQ(im_rows(tp, "SELECT pp.pid FROM process p JOIN process pp ON p.parent_upid = "
				 "pp.upid WHERE p.pid = 200"),
		     "100;");
	tp_destroy(tp);
}

/* A process_tree entry of @pid with parent @ppid and name @cmd. */
static void im_tree_process(struct im_trace *t, int64_t ts, int64_t pid, int64_t ppid,
			    const char *cmd)
{
	struct pz_msg *p = im_packet(t, ts, 0), pt, pr;

	pz_begin_nested(p, PB_TRACE_PACKET__PROCESS_TREE, &pt);
	pz_begin_nested(&pt, PB_PROCESS_TREE__PROCESSES, &pr);
	pz_append_varint(&pr, PB_PROCESS_TREE_PROCESS__PID, (uint64_t)pid);
	pz_append_varint(&pr, PB_PROCESS_TREE_PROCESS__PPID, (uint64_t)ppid);
	pz_append_string(&pr, PB_PROCESS_TREE_PROCESS__CMDLINE, cmd);
	pz_end(&pr);
	pz_end(&pt);
	im_end_packet(t);
}

/*
 * A changed ppid is reparenting (the first parent stays, counted in stats);
 * sched_process_free of a main thread ends its process, and the pid seen
 * again is a new process. The free's own ftrace_event row names the thread
 * it freed, not a new one.
 */
TEST(im_process_reparent_and_reuse)
{
	struct im_trace t;
	struct pz_msg b, ev, fr;
	struct tp *tp;

	im_begin(&t);
	im_tree_process(&t, 1, 100, 1, "parent");
	im_tree_process(&t, 1, 200, 100, "child");
	im_tree_process(&t, 2, 300, 1, "orig");
	im_bundle(&t, 0, &b);
	im_print(&b, 10, 300, "B|300|work");
	pz_begin_nested(&b, PB_FTRACE_EVENT_BUNDLE__EVENT, &ev);
	pz_append_varint(&ev, PB_FTRACE_EVENT__TIMESTAMP, 20);
	pz_append_varint(&ev, PB_FTRACE_EVENT__PID, 300);
	pz_begin_nested(&ev, PB_FTRACE_EVENT__SCHED_PROCESS_FREE, &fr);
	pz_append_varint(&fr, PB_SCHED_PROCESS_FREE_FTRACE_EVENT__PID, 300);
	pz_end(&fr);
	pz_end(&ev);
	im_end_bundle(&t, &b);
	im_tree_process(&t, 30, 200, 1, "child");
	im_tree_process(&t, 40, 300, 2000, "reused");
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT p.pid, p.name, p.end_ts, pp.pid FROM process p LEFT JOIN "
				 "process pp ON p.parent_upid = pp.upid WHERE p.pid IN (200, 300) "
				 "ORDER BY p.upid"),
		     "200,child,-,100;300,orig,20,1;300,reused,-,2000;");
	/* The reused pid's process gets a new main thread (Perfetto's GetOrCreateProcess). */
	ASSERT_STREQ(im_rows(tp, "SELECT tid, end_ts FROM thread WHERE tid = 300"), "300,20;300,-;");
	ASSERT_STREQ(im_rows(tp, "SELECT t.end_ts FROM ftrace_event e JOIN thread t USING (utid) "
				 "WHERE e.name = 'sched_process_free'"),
		     "20;");
	ASSERT_STREQ(im_rows(tp, "SELECT value FROM stats WHERE name = "
				 "'process_tracker_parent_pid_changed'"),
		     "1;");
	tp_destroy(tp);
}

/*
 * Every packet carries machine_id 7 and none is the host's: machine 7 is
 * adopted as row 0. A thread cloned (CLONE_THREAD) by a thread of an
 * unknown process joins that process once a process tree names it, and
 * so does the thread it cloned in turn.
 */
TEST(im_machine_adopted_and_pending_threads)
{
	struct im_trace t;
	struct pz_msg b, ev, nt, *p, pt, pr;
	struct tp *tp;
	int i;

	im_begin(&t);
	im_bundle(&t, 0, &b);
	for (i = 0; i < 2; i++) {
		/* 21 clones thread 22, which clones thread 23. */
		pz_begin_nested(&b, PB_FTRACE_EVENT_BUNDLE__EVENT, &ev);
		pz_append_varint(&ev, PB_FTRACE_EVENT__TIMESTAMP, 12 + (uint64_t)i);
		pz_append_varint(&ev, PB_FTRACE_EVENT__PID, 21 + (uint64_t)i);
		pz_begin_nested(&ev, PB_FTRACE_EVENT__TASK_NEWTASK, &nt);
		pz_append_varint(&nt, PB_TASK_NEWTASK_FTRACE_EVENT__PID, 22 + (uint64_t)i);
		pz_append_string(&nt, PB_TASK_NEWTASK_FTRACE_EVENT__COMM, "worker");
		pz_append_varint(&nt, PB_TASK_NEWTASK_FTRACE_EVENT__CLONE_FLAGS, 0x10000);
		pz_end(&nt);
		pz_end(&ev);
	}
	pz_end(&b);
	pz_append_varint(&t.pkt, PB_TRACE_PACKET__MACHINE_ID, 7);
	im_end_packet(&t);
	p = im_packet(&t, 15, 0);
	pz_begin_nested(p, PB_TRACE_PACKET__PROCESS_TREE, &pt);
	pz_begin_nested(&pt, PB_PROCESS_TREE__PROCESSES, &pr);
	pz_append_varint(&pr, PB_PROCESS_TREE_PROCESS__PID, 20);
	pz_append_varint(&pr, PB_PROCESS_TREE_PROCESS__PPID, 1);
	pz_append_string(&pr, PB_PROCESS_TREE_PROCESS__CMDLINE, "app");
	pz_end(&pr);
	pz_begin_nested(&pt, PB_PROCESS_TREE__THREADS, &pr);
	pz_append_varint(&pr, PB_PROCESS_TREE_THREAD__TID, 21);
	pz_append_varint(&pr, PB_PROCESS_TREE_THREAD__TGID, 20);
	pz_end(&pr);
	pz_end(&pt);
	pz_append_varint(p, PB_TRACE_PACKET__MACHINE_ID, 7);
	im_end_packet(&t);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT id, raw_id FROM machine"), "0,7;");
	ASSERT_STREQ(im_rows(tp, "SELECT t.tid, p.pid, t.machine_id, t.is_main_thread FROM thread t "
				 "LEFT JOIN process p USING (upid) WHERE t.tid > 0 ORDER BY t.tid"),
		     "1,1,0,1;20,20,0,1;21,20,0,0;22,20,0,0;23,20,0,0;");
	tp_destroy(tp);
}

/*
 * A tid freed and then switched to again is a new thread for the hot
 * sched_switch path too (its tid -> utid cache forgets the freed thread).
 */
TEST(im_freed_tid_reused_by_switch)
{
	struct im_trace t;
	struct pz_msg b, ev, fr;
	struct tp *tp;

	im_begin(&t);
	im_bundle(&t, 0, &b);
	im_switch(&b, 100, "swapper/0", 0, 0, "a", 10);
	im_switch(&b, 200, "a", 10, 1, "swapper/0", 0);
	pz_begin_nested(&b, PB_FTRACE_EVENT_BUNDLE__EVENT, &ev);
	pz_append_varint(&ev, PB_FTRACE_EVENT__TIMESTAMP, 300);
	pz_append_varint(&ev, PB_FTRACE_EVENT__PID, 0);
	pz_begin_nested(&ev, PB_FTRACE_EVENT__SCHED_PROCESS_FREE, &fr);
	pz_append_varint(&fr, PB_SCHED_PROCESS_FREE_FTRACE_EVENT__PID, 10);
	pz_end(&fr);
	pz_end(&ev);
	im_switch(&b, 400, "swapper/0", 0, 0, "b", 10);
	im_switch(&b, 500, "b", 10, 1, "swapper/0", 0);
	im_end_bundle(&t, &b);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT s.ts, t.name, t.end_ts FROM sched s JOIN thread t "
				 "USING (utid) WHERE t.tid = 10 ORDER BY s.ts"),
		     "100,a,300;400,b,-;");
	ASSERT_STREQ(im_rows(tp, "SELECT COUNT(*) FROM thread WHERE tid = 10"), "2;");
	tp_destroy(tp);
}

/* system_info and ftrace_stats: metadata, the machine row, stats. */
TEST(im_system_info_and_ftrace_stats)
{
	struct im_trace t;
	struct pz_msg *p, si, u, fs, cs;
	struct tp *tp;
	int phase;

	im_begin(&t);
	p = im_packet(&t, 5, 0);
	pz_begin_nested(p, PB_TRACE_PACKET__SYSTEM_INFO, &si);
	pz_begin_nested(&si, PB_SYSTEM_INFO__UTSNAME, &u);
	pz_append_string(&u, PB_UTSNAME__SYSNAME, "Linux");
	pz_append_string(&u, PB_UTSNAME__RELEASE, "6.1.0");
	pz_append_string(&u, PB_UTSNAME__MACHINE, "x86_64");
	pz_end(&u);
	pz_append_varint(&si, PB_SYSTEM_INFO__NUM_CPUS, 2);
	pz_append_varint(&si, PB_SYSTEM_INFO__SYSTEM_RAM_BYTES, 25000000000ull);
	pz_end(&si);
	im_end_packet(&t);
	for (phase = 1; phase <= 2; phase++) {
		p = im_packet(&t, phase * 100, 0);
		pz_begin_nested(p, PB_TRACE_PACKET__FTRACE_STATS, &fs);
		pz_append_varint(&fs, PB_FTRACE_STATS__PHASE, (uint64_t)phase);
		pz_begin_nested(&fs, PB_FTRACE_STATS__CPU_STATS, &cs);
		pz_append_varint(&cs, PB_FTRACE_CPU_STATS__CPU, 1);
		pz_append_varint(&cs, PB_FTRACE_CPU_STATS__ENTRIES, 10 * (uint64_t)phase);
		pz_append_varint(&cs, PB_FTRACE_CPU_STATS__OVERRUN, phase == 2 ? 3 : 0);
		pz_end(&cs);
		pz_end(&fs);
		im_end_packet(&t);
	}
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT id, sysname, release, arch, num_cpus, system_ram_gb FROM "
				 "machine"),
		     "0,Linux,6.1.0,x86_64,2,25;");
	ASSERT_STREQ(im_rows(tp, "SELECT name, COALESCE(str_value, int_value) FROM metadata WHERE "
				 "name LIKE 'system_%' ORDER BY name"),
		     "system_machine,x86_64;system_name,Linux;system_ram_bytes,25000000000;"
		     "system_ram_gb,25;system_release,6.1.0;");
	/*
	 * As Perfetto records them: every counter of each phase (absent ones 0),
	 * and at the end each one's change since the start.
	 */
	ASSERT_STREQ(im_rows(tp, "SELECT name, idx, value FROM stats WHERE name LIKE 'ftrace_cpu_%' "
				 "AND name NOT LIKE '%ts_%' AND (value != 0 OR name LIKE 'ftrace_cpu_entries%') "
				 "ORDER BY name"),
		     "ftrace_cpu_entries_begin,1,10;ftrace_cpu_entries_delta,1,10;"
		     "ftrace_cpu_entries_end,1,20;ftrace_cpu_overrun_delta,1,3;"
		     "ftrace_cpu_overrun_end,1,3;");
	ASSERT_STREQ(im_rows(tp, "SELECT COUNT(*) FROM stats WHERE name LIKE 'ftrace_cpu_%'"), "22;");
	tp_destroy(tp);
}

/* ftrace data older than the service's tracing_started is stale: dropped. */
TEST(im_ftrace_before_tracing_started_dropped)
{
	struct im_trace t;
	struct pz_msg b, *p, se;
	struct tp *tp;

	im_begin(&t);
	p = im_packet(&t, 500, 1);
	pz_begin_nested(p, PB_TRACE_PACKET__SERVICE_EVENT, &se);
	pz_append_bool(&se, PB_TRACING_SERVICE_EVENT__TRACING_STARTED, true);
	pz_end(&se);
	im_end_packet(&t);
	im_bundle(&t, 0, &b);
	im_switch(&b, 400, "swapper", 0, 0, "old", 5);
	im_switch(&b, 600, "old", 5, 1, "new", 6);
	im_switch(&b, 700, "new", 6, 1, "swapper", 0);
	im_end_bundle(&t, &b);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT ts, dur, t.tid FROM sched JOIN thread t USING (utid) ORDER BY ts"),
		     "600,100,6;700,-1,0;");
	ASSERT_STREQ(im_rows(tp, "SELECT int_value FROM metadata WHERE name = 'tracing_started_ns'"),
		     "500;");
	ASSERT_STREQ(im_rows(tp, "SELECT value FROM stats WHERE name = "
				 "'ftrace_packet_before_tracing_start'"),
		     "1;");
	tp_destroy(tp);
}

/*
 * Until every CPU's data is whole (the latest first-bundle
 * previous_bundle_end_timestamp, here CPU 1's 1000), ftrace events only
 * make ftrace_event rows, as Perfetto's soft drop: a full sched_switch
 * makes nothing, a waking no state, a compact switch its row and who runs
 * but no slice. Older than tracing_started (500) is dropped and counted.
 */
TEST(im_ftrace_soft_drop_until_all_cpus_valid)
{
	static const int64_t sw_ts[] = {800, 100, 150}, zero[] = {0, 0, 0},
			     sw_pid[] = {10, 11, 12}, sw_prio[] = {120, 120, 120};
	struct im_trace t;
	struct pz_msg b, *p, se, cs;
	struct tp *tp;

	im_begin(&t);
	p = im_packet(&t, 500, 1);
	pz_begin_nested(p, PB_TRACE_PACKET__SERVICE_EVENT, &se);
	pz_append_bool(&se, PB_TRACING_SERVICE_EVENT__TRACING_STARTED, true);
	pz_end(&se);
	im_end_packet(&t);
	im_bundle(&t, 0, &b);
	pz_append_varint(&b, PB_FTRACE_EVENT_BUNDLE__PREVIOUS_BUNDLE_END_TIMESTAMP, 450);
	im_switch(&b, 400, "swapper", 0, 0, "old", 4);
	im_switch(&b, 600, "old", 4, 1, "a", 5);
	im_waking(&b, 700, 5, 6);
	im_switch(&b, 1100, "a", 5, 1, "b", 6);
	im_switch(&b, 1200, "b", 6, 0, "swapper", 0);
	im_end_bundle(&t, &b);
	im_bundle(&t, 1, &b);
	pz_append_varint(&b, PB_FTRACE_EVENT_BUNDLE__PREVIOUS_BUNDLE_END_TIMESTAMP, 1000);
	pz_begin_nested(&b, PB_FTRACE_EVENT_BUNDLE__COMPACT_SCHED, &cs);
	pz_append_string(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__INTERN_TABLE, "cs");
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_TIMESTAMP, sw_ts, 3);
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_PREV_STATE, zero, 3);
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_NEXT_PID, sw_pid, 3);
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_NEXT_PRIO, sw_prio, 3);
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_NEXT_COMM_INDEX, zero, 3);
	pz_end(&cs);
	im_end_bundle(&t, &b);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT ts, dur, cpu, t.tid FROM sched JOIN thread t USING (utid) "
				 "ORDER BY ts"),
		     "1050,-1,1,12;1100,100,0,6;1200,-1,0,0;");
	ASSERT_STREQ(im_rows(tp, "SELECT ts, state FROM thread_state JOIN thread USING (utid) "
				 "WHERE tid = 6 ORDER BY ts"),
		     "1100,Running;1200,R;");
	ASSERT_STREQ(im_rows(tp, "SELECT e.ts, e.name, e.cpu FROM ftrace_event e ORDER BY e.ts"),
		     "700,sched_waking,0;900,sched_switch,1;1050,sched_switch,1;"
		     "1100,sched_switch,0;1200,sched_switch,0;");
	ASSERT_STREQ(im_rows(tp, "SELECT int_value FROM metadata WHERE name = "
				 "'ftrace_latest_data_start_ns'"),
		     "1000;");
	ASSERT_STREQ(im_rows(tp, "SELECT name, value FROM stats WHERE name IN "
				 "('ftrace_packet_before_tracing_start', 'compact_sched_switch_skipped') "
				 "ORDER BY name"),
		     "compact_sched_switch_skipped,1;ftrace_packet_before_tracing_start,1;");
	tp_destroy(tp);
}

/* --no-ftrace-raw: no ftrace_event rows; sched and slices are still built. */
TEST(im_no_ftrace_raw)
{
	struct tp_options opt = {.no_ftrace_raw = true};
	struct im_trace t;
	struct pz_msg b;
	struct tp *tp = NULL;
	int fd;

	im_begin(&t);
	im_bundle(&t, 0, &b);
	im_switch(&b, 10, "swapper", 0, 0, "a", 5);
	im_print(&b, 15, 5, "B|5|work");
	im_print(&b, 18, 5, "E|5");
	im_switch(&b, 20, "a", 5, 1, "swapper", 0);
	im_end_bundle(&t, &b);
	pz_end(&t.trace);
	fd = memfd_create("im_trace", MFD_CLOEXEC);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, t.buf, t.s.n_bytes), (ssize_t)t.s.n_bytes);
	ASSERT_EQ(lseek(fd, 0, SEEK_SET), 0);
	ASSERT_EQ(tp_create(&opt, &tp), 0);
	ASSERT_EQ(tp_import_fd(tp, fd, "im_trace"), 0);
	close(fd);
	free(t.buf);
	ASSERT_STREQ(im_rows(tp, "SELECT COUNT(*) FROM ftrace_event"), "0;");
	ASSERT_STREQ(im_rows(tp, "SELECT COUNT(*) FROM sched"), "2;");
	ASSERT_STREQ(im_rows(tp, "SELECT name, dur FROM slice"), "work,3;");
	tp_destroy(tp);
}

/* ------------------------------------------------------ generic kernel ---- */

#define IM_GK_STATE(x) PBE_GENERIC_KERNEL_TASK_STATE_EVENT_TASK_STATE_ENUM__TASK_STATE_##x
#define IM_GK_RUNNING IM_GK_STATE(RUNNING)
#define IM_GK_SLEEP IM_GK_STATE(INTERRUPTIBLE_SLEEP)
#define IM_GK_DSLEEP IM_GK_STATE(UNINTERRUPTIBLE_SLEEP)
#define IM_GK_CREATED IM_GK_STATE(CREATED)
#define IM_GK_DEAD IM_GK_STATE(DEAD)
#define IM_GK_DESTROYED IM_GK_STATE(DESTROYED)

/* A GenericKernelTaskStateEvent packet; @cpu -1 and @comm NULL are left out. */
static void im_gk_task(struct im_trace *t, int64_t ts, int32_t cpu, int64_t tid, uint32_t state,
		       const char *comm)
{
	struct pz_msg *p = im_packet(t, ts, 1), ev;

	pz_begin_nested(p, PB_TRACE_PACKET__GENERIC_KERNEL_TASK_STATE_EVENT, &ev);
	if (cpu != -1)
		pz_append_int(&ev, PB_GENERIC_KERNEL_TASK_STATE_EVENT__CPU, cpu);
	if (comm)
		pz_append_string(&ev, PB_GENERIC_KERNEL_TASK_STATE_EVENT__COMM, comm);
	pz_append_int(&ev, PB_GENERIC_KERNEL_TASK_STATE_EVENT__TID, tid);
	pz_append_varint(&ev, PB_GENERIC_KERNEL_TASK_STATE_EVENT__STATE, state);
	pz_append_int(&ev, PB_GENERIC_KERNEL_TASK_STATE_EVENT__PRIO, 120);
	pz_end(&ev);
	im_end_packet(t);
}

/* Both orders of a context switch: "a stops, b runs" and "b runs, a stops". */
TEST(im_generic_kernel_context_switch)
{
	struct im_trace t;
	struct tp *tp;

	im_begin(&t);
	im_gk_task(&t, 100, 0, 10, IM_GK_RUNNING, "a");
	im_gk_task(&t, 200, 0, 20, IM_GK_RUNNING, "b");
	im_gk_task(&t, 200, 0, 10, IM_GK_SLEEP, NULL);
	im_gk_task(&t, 300, 0, 20, IM_GK_DSLEEP, NULL);
	im_gk_task(&t, 400, 1, 10, IM_GK_RUNNING, NULL);
	im_gk_task(&t, 500, 1, 20, IM_GK_RUNNING, "b2");
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT ts, dur, cpu, t.tid, end_state, priority FROM sched "
				 "JOIN thread t USING (utid) ORDER BY ts"),
		     "100,100,0,10,S,120;200,100,0,20,D,120;400,100,1,10,-,120;"
		     "500,-1,1,20,-,120;");
	ASSERT_STREQ(im_rows(tp, "SELECT ts, dur, cpu, t.tid, state FROM thread_state "
				 "JOIN thread t USING (utid) ORDER BY t.tid, ts"),
		     "100,100,0,10,Running;200,200,-,10,S;400,100,1,10,Running;500,-1,-,10,-;"
		     "200,100,0,20,Running;300,200,-,20,D;500,-1,1,20,Running;");
	ASSERT_STREQ(im_rows(tp, "SELECT tid, name FROM thread WHERE tid > 0 ORDER BY tid"),
		     "10,a;20,b2;");
	ASSERT_STREQ(im_rows(tp, "SELECT COUNT(*) FROM stats WHERE name LIKE 'generic%' AND value != 0"),
		     "0;");
	tp_destroy(tp);
}

/* Out-of-order events are dropped and counted as an analysis error. */
TEST(im_generic_kernel_invalid_order)
{
	struct im_trace t;
	struct tp *tp;

	im_begin(&t);
	im_gk_task(&t, 100, 0, 10, IM_GK_RUNNING, "a");
	im_gk_task(&t, 150, 0, 10, IM_GK_RUNNING, "a");   /* running twice */
	im_gk_task(&t, 160, -1, 10, IM_GK_CREATED, "a");  /* created while alive */
	im_gk_task(&t, 200, -1, 30, IM_GK_DEAD, "c");
	im_gk_task(&t, 250, 1, 30, IM_GK_RUNNING, "c");   /* running after dead */
	im_gk_task(&t, 300, -1, 30, IM_GK_DESTROYED, NULL);
	im_gk_task(&t, 300, -1, 40, IM_GK_SLEEP, "d");
	im_gk_task(&t, 300, -1, 40, IM_GK_DSLEEP, "d");  /* two states at once */
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT name, severity, source, value, description FROM stats "
				 "WHERE name = 'generic_task_state_invalid_order'"),
		     "generic_task_state_invalid_order,error,analysis,4,Invalid order of generic "
		     "task state events. Should never happen.;");
	ASSERT_STREQ(im_rows(tp, "SELECT COUNT(*) FROM sched"), "1;");
	ASSERT_STREQ(im_rows(tp, "SELECT ts, state FROM thread_state JOIN thread t USING (utid) "
				 "WHERE t.tid = 30 ORDER BY ts"),
		     "200,Z;300,X;");
	ASSERT_STREQ(im_rows(tp, "SELECT end_ts FROM thread WHERE tid = 30"), "300;");
	tp_destroy(tp);
}

/* int64 tids stay apart even when their low 32 bits match; a destroyed tid is new. */
TEST(im_generic_kernel_wide_tids)
{
	struct im_trace t;
	struct tp *tp;

	im_begin(&t);
	im_gk_task(&t, 100, -1, 1, IM_GK_CREATED, "one");
	im_gk_task(&t, 110, -1, 4294967297LL, IM_GK_CREATED, "wide");
	im_gk_task(&t, 120, -1, 9023372036854775807LL, IM_GK_CREATED, "huge");
	im_gk_task(&t, 130, -1, 4294967297LL, IM_GK_DESTROYED, NULL);
	im_gk_task(&t, 140, 0, 4294967297LL, IM_GK_RUNNING, "again");
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT utid, tid, name, start_ts, end_ts FROM thread "
				 "ORDER BY utid"),
		     "0,0,swapper,-,-;1,1,one,100,-;2,4294967297,wide,110,130;"
		     "3,9023372036854775807,huge,120,-;4,4294967297,again,-,-;");
	ASSERT_STREQ(im_rows(tp, "SELECT utid FROM sched"), "4;");
	tp_destroy(tp);
}

/* Process trees name processes and threads; renames follow main threads. */
TEST(im_generic_kernel_process_tree_and_rename)
{
	struct im_trace t;
	struct pz_msg *p, tree, e;
	struct tp *tp;

	im_begin(&t);
	p = im_packet(&t, 100, 1);
	pz_begin_nested(p, PB_TRACE_PACKET__GENERIC_KERNEL_PROCESS_TREE, &tree);
	pz_begin_nested(&tree, PB_GENERIC_KERNEL_PROCESS_TREE__THREADS, &e);
	pz_append_int(&e, PB_GENERIC_KERNEL_PROCESS_TREE_THREAD__TID, 50);
	pz_append_int(&e, PB_GENERIC_KERNEL_PROCESS_TREE_THREAD__PID, 50);
	pz_append_string(&e, PB_GENERIC_KERNEL_PROCESS_TREE_THREAD__COMM, "main");
	pz_append_bool(&e, PB_GENERIC_KERNEL_PROCESS_TREE_THREAD__IS_MAIN_THREAD, true);
	pz_end(&e);
	pz_begin_nested(&tree, PB_GENERIC_KERNEL_PROCESS_TREE__THREADS, &e);
	pz_append_int(&e, PB_GENERIC_KERNEL_PROCESS_TREE_THREAD__TID, 51);
	pz_append_int(&e, PB_GENERIC_KERNEL_PROCESS_TREE_THREAD__PID, 50);
	pz_append_string(&e, PB_GENERIC_KERNEL_PROCESS_TREE_THREAD__COMM, "worker");
	pz_append_bool(&e, PB_GENERIC_KERNEL_PROCESS_TREE_THREAD__IS_IDLE, true);
	pz_end(&e);
	/* Processes come after threads on the wire, yet are parsed first. */
	pz_begin_nested(&tree, PB_GENERIC_KERNEL_PROCESS_TREE__PROCESSES, &e);
	pz_append_int(&e, PB_GENERIC_KERNEL_PROCESS_TREE_PROCESS__PID, 50);
	pz_append_int(&e, PB_GENERIC_KERNEL_PROCESS_TREE_PROCESS__PPID, 1);
	pz_append_string(&e, PB_GENERIC_KERNEL_PROCESS_TREE_PROCESS__CMDLINE, "/bin/app -x");
	pz_end(&e);
	pz_begin_nested(&tree, PB_GENERIC_KERNEL_PROCESS_TREE__PROCESSES, &e);
	pz_append_int(&e, PB_GENERIC_KERNEL_PROCESS_TREE_PROCESS__PID, 77); /* no cmdline */
	pz_end(&e);
	pz_end(&tree);
	im_end_packet(&t);
	/* Task comms and renames rank below process tree names, as in Perfetto. */
	im_gk_task(&t, 200, 0, 51, IM_GK_RUNNING, "comm51");
	p = im_packet(&t, 300, 1);
	pz_begin_nested(p, PB_TRACE_PACKET__GENERIC_KERNEL_TASK_RENAME_EVENT, &e);
	pz_append_int(&e, PB_GENERIC_KERNEL_TASK_RENAME_EVENT__TID, 50);
	pz_append_string(&e, PB_GENERIC_KERNEL_TASK_RENAME_EVENT__COMM, "renamed");
	pz_end(&e);
	im_end_packet(&t);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	/* The rename names the process of its main thread, not the thread itself. */
	ASSERT_STREQ(im_rows(tp, "SELECT p.pid, p.name, p.cmdline, pp.pid FROM process p LEFT JOIN "
				 "process pp ON pp.upid = p.parent_upid ORDER BY p.upid"),
		     "0,-,-,-;1,-,-,-;50,renamed,/bin/app -x,1;");
	ASSERT_STREQ(im_rows(tp, "SELECT t.tid, t.name, p.pid, is_main_thread, is_idle FROM "
				 "thread t LEFT JOIN process p USING (upid) WHERE t.tid > 0 "
				 "ORDER BY t.tid"),
		     "50,main,50,1,0;51,worker,50,0,1;");
	tp_destroy(tp);
}

/* CPU frequency events are cpufreq counters in kHz. */
TEST(im_generic_kernel_cpu_frequency)
{
	struct im_trace t;
	struct pz_msg *p, e;
	struct tp *tp;
	int i;

	im_begin(&t);
	for (i = 0; i < 3; i++) {
		p = im_packet(&t, 100 + i, 1);
		pz_begin_nested(p, PB_TRACE_PACKET__GENERIC_KERNEL_CPU_FREQ_EVENT, &e);
		pz_append_int(&e, PB_GENERIC_KERNEL_CPU_FREQUENCY_EVENT__CPU, i == 2 ? -1 : i);
		pz_append_int(&e, PB_GENERIC_KERNEL_CPU_FREQUENCY_EVENT__FREQ_HZ,
			      1500000000LL * (i + 1));
		pz_end(&e);
		im_end_packet(&t);
	}
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT c.ts, t.cpu, c.value, t.name, t.type FROM counter c JOIN "
				 "cpu_counter_track t ON c.track_id = t.id ORDER BY c.ts"),
		     "100,0,1500000.0,cpufreq,cpu_frequency;"
		     "101,1,3000000.0,cpufreq,cpu_frequency;");
	ASSERT_STREQ(im_rows(tp, "SELECT value FROM stats WHERE name = "
				 "'generic_kernel_invalid_cpu'"),
		     "1;");
	tp_destroy(tp);
}

/* Broken payloads are counted and skipped; nothing else is made of them. */
TEST(im_generic_kernel_malformed)
{
	static const uint8_t truncated[] = {0x18}; /* tid tag, no value */
	static const uint8_t comm_as_varint[] = {0x10, 0x05, 0x18, 0x07, 0x20, 0x03};
	struct im_trace t;
	struct pz_msg *p, e;
	struct tp *tp;

	im_begin(&t);
	p = im_packet(&t, 100, 1);
	pz_append_bytes(p, PB_TRACE_PACKET__GENERIC_KERNEL_TASK_STATE_EVENT, truncated,
			sizeof(truncated));
	im_end_packet(&t);
	p = im_packet(&t, 110, 1);
	pz_append_bytes(p, PB_TRACE_PACKET__GENERIC_KERNEL_TASK_STATE_EVENT, comm_as_varint,
			sizeof(comm_as_varint));
	im_end_packet(&t);
	p = im_packet(&t, 120, 1);
	pz_append_bytes(p, PB_TRACE_PACKET__GENERIC_KERNEL_PROCESS_TREE, truncated,
			sizeof(truncated));
	im_end_packet(&t);
	p = im_packet(&t, 130, 1);
	pz_begin_nested(p, PB_TRACE_PACKET__GENERIC_KERNEL_PROCESS_TREE, &e);
	pz_append_varint(&e, PB_GENERIC_KERNEL_PROCESS_TREE__THREADS, 3); /* not a message */
	pz_end(&e);
	im_end_packet(&t);
	im_gk_task(&t, 140, 0, 8, 99 /* no such state */, "x");
	im_gk_task(&t, 150, 0, 8, 0 /* unknown */, "x");
	im_gk_task(&t, 160, -7, 8, IM_GK_RUNNING, "x");
	im_gk_task(&t, 170, 70000, 8, IM_GK_RUNNING, "x");
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT name, value, severity FROM stats WHERE name IN "
				 "('generic_kernel_malformed', 'task_state_invalid', "
				 "'generic_kernel_invalid_cpu') ORDER BY name"),
		     "generic_kernel_invalid_cpu,2,error;generic_kernel_malformed,4,error;"
		     "task_state_invalid,2,error;");
	ASSERT_STREQ(im_rows(tp, "SELECT COUNT(*) FROM thread"), "1;");
	ASSERT_STREQ(im_rows(tp, "SELECT COUNT(*) FROM sched"), "0;");
	ASSERT_STREQ(im_rows(tp, "SELECT COUNT(*) FROM cpu"), "0;");
	tp_destroy(tp);
}

/* sched_cpu_util_cfs: three counters of the CPU the event names (not the bundle's). */
TEST(im_sched_cpu_util_cfs)
{
	struct im_trace t;
	struct pz_msg b, ev, u;
	struct tp *tp;

	im_begin(&t);
	im_bundle(&t, 3, &b);
	pz_begin_nested(&b, PB_FTRACE_EVENT_BUNDLE__EVENT, &ev);
	pz_append_varint(&ev, PB_FTRACE_EVENT__TIMESTAMP, 100);
	pz_append_varint(&ev, PB_FTRACE_EVENT__PID, 5);
	pz_begin_nested(&ev, PB_FTRACE_EVENT__SCHED_CPU_UTIL_CFS, &u);
	pz_append_varint(&u, PB_SCHED_CPU_UTIL_CFS_FTRACE_EVENT__CPU, 2);
	pz_append_varint(&u, PB_SCHED_CPU_UTIL_CFS_FTRACE_EVENT__CPU_UTIL, 43);
	pz_append_varint(&u, PB_SCHED_CPU_UTIL_CFS_FTRACE_EVENT__CAPACITY, 760);
	pz_append_varint(&u, PB_SCHED_CPU_UTIL_CFS_FTRACE_EVENT__SPARE_CAP, 717);
	pz_end(&u);
	pz_end(&ev);
	im_end_bundle(&t, &b);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT t.name, t.type, t.cpu, c.ts, c.value, "
				 "(SELECT int_value FROM args a WHERE a.arg_set_id = "
				 "(SELECT dimension_arg_set_id FROM track WHERE id = t.id) "
				 "AND a.key = 'cpu') FROM counter c JOIN "
				 "cpu_counter_track t ON c.track_id = t.id ORDER BY c.id"),
		     "Cpu 2 Util,cpu_utilization,2,100,43.0,2;"
		     "Cpu 2 Cap,cpu_capacity,2,100,760.0,2;"
		     "Cpu 2 Nr Running,cpu_nr_running,2,100,0.0,2;");
	tp_destroy(tp);
}

/*
 * sys_stats cpu_stat: all eight cpustat counters per CPU (absent ones as 0),
 * dimension args {cpu, cpustat_key} shared by equal tracks of two machines,
 * arg set ids that are their first row's id; no cpu_id is an error stat.
 */
TEST(im_sys_stats_cpu_times)
{
	struct im_trace t;
	struct pz_msg *p, ss, ct;
	struct tp *tp;
	int m, cpu;

	im_begin(&t);
	for (m = 0; m < 2; m++) {
		p = im_packet(&t, 100 + m, 1);
		if (m)
			pz_append_varint(p, PB_TRACE_PACKET__MACHINE_ID, 1001);
		pz_begin_nested(p, PB_TRACE_PACKET__SYS_STATS, &ss);
		for (cpu = 0; cpu < 2; cpu++) {
			pz_begin_nested(&ss, PB_SYS_STATS__CPU_STAT, &ct);
			pz_append_varint(&ct, PB_SYS_STATS_CPU_TIMES__CPU_ID, (uint64_t)cpu);
			pz_append_varint(&ct, PB_SYS_STATS_CPU_TIMES__USER_NS, 1000u * (cpu + 1));
			pz_append_varint(&ct, PB_SYS_STATS_CPU_TIMES__STEAL_NS, 7);
			pz_end(&ct);
		}
		pz_begin_nested(&ss, PB_SYS_STATS__CPU_STAT, &ct);
		pz_append_varint(&ct, PB_SYS_STATS_CPU_TIMES__USER_NS, 5);
		pz_end(&ct);
		pz_end(&ss);
		im_end_packet(&t);
	}
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT COUNT(*), COUNT(DISTINCT t.id), SUM(c.value) FROM counter c "
				 "JOIN cpu_counter_track t ON c.track_id = t.id WHERE t.type = "
				 "'cpustat'"),
		     "32,32,6028.0;");
	ASSERT_STREQ(im_rows(tp, "SELECT t.name, t.cpu, c.value FROM counter c JOIN "
				 "cpu_counter_track t ON c.track_id = t.id WHERE c.ts = 101 AND t.cpu = 1 "
				 "ORDER BY c.id"),
		     "cpu.times.user_ns,1,2000.0;cpu.times.user_nice_ns,1,0.0;"
		     "cpu.times.system_mode_ns,1,0.0;cpu.times.idle_ns,1,0.0;"
		     "cpu.times.io_wait_ns,1,0.0;cpu.times.irq_ns,1,0.0;"
		     "cpu.times.softirq_ns,1,0.0;cpu.times.steal_ns,1,7.0;");
	ASSERT_STREQ(im_rows(tp, "SELECT id, arg_set_id FROM args WHERE flat_key = 'cpustat_key' "
				 "AND display_value = 'user_ns'"),
		     "1,0;17,16;");
	ASSERT_STREQ(im_rows(tp, "SELECT COUNT(DISTINCT dimension_arg_set_id) FROM track WHERE "
				 "type = 'cpustat'"),
		     "16;");
	ASSERT_STREQ(im_rows(tp, "SELECT machine_id, value, severity FROM stats WHERE name = "
				 "'invalid_cpu_times' ORDER BY machine_id"),
		     "0,1,error;1,1,error;");
	tp_destroy(tp);
}

/* A BOOTTIME-only clock snapshot on sequence 1 (stamped @ts). */
static void im_boottime_snapshot(struct im_trace *t, int64_t ts)
{
	struct pz_msg *p = im_packet(t, ts, 1), cs, c;

	pz_begin_nested(p, PB_TRACE_PACKET__CLOCK_SNAPSHOT, &cs);
	pz_begin_nested(&cs, PB_CLOCK_SNAPSHOT__CLOCKS, &c);
	pz_append_varint(&c, PB_CLOCK_SNAPSHOT_CLOCK__CLOCK_ID, 6);
	pz_append_varint(&c, PB_CLOCK_SNAPSHOT_CLOCK__TIMESTAMP, (uint64_t)ts);
	pz_end(&c);
	pz_end(&cs);
	im_end_packet(t);
}

/*
 * ChromeMetadataPacket: "cr-a-*" rows for the first instance, "cr-b-*" for
 * the next; background tracing metadata as base64 and its scenario hash;
 * a ChromeTrigger's hash. The trace_time_clock_id is BOOTTIME (the first
 * snapshot came before any conversion); trace_uuid is the file's hash.
 */
TEST(im_chrome_metadata)
{
	static const uint8_t bg[] = {0x1d, 0x91, 0xce, 0x24, 0xb3}; /* scenario_name_hash */
	struct im_trace t;
	struct pz_msg *p, m, h;
	struct tp *tp;
	char want[64];
	uint64_t hash;
	int k, i;

	im_begin(&t);
	im_boottime_snapshot(&t, 1000);
	for (k = 0; k < 2; k++) {
		p = im_packet(&t, 1000, 1);
		pz_begin_nested(p, PB_TRACE_PACKET__CHROME_METADATA, &m);
		if (!k)
			pz_append_bytes(&m, PB_CHROME_METADATA_PACKET__BACKGROUND_TRACING_METADATA, bg,
					sizeof(bg));
		pz_append_varint(&m, PB_CHROME_METADATA_PACKET__CHROME_VERSION_CODE, 101u + k);
		pz_append_string(&m, PB_CHROME_METADATA_PACKET__OS_NAME, k ? "Linux" : "Android");
		for (i = 0; i < 3 - k; i++) {
			pz_begin_nested(&m, PB_CHROME_METADATA_PACKET__FIELD_TRIAL_HASHES, &h);
			pz_append_varint(&h, PB_CHROME_METADATA_PACKET_FINCH_HASH__NAME, 10u + i);
			pz_append_varint(&h, PB_CHROME_METADATA_PACKET_FINCH_HASH__GROUP, 20u + i);
			pz_end(&h);
		}
		pz_end(&m);
		im_end_packet(&t);
	}
	p = im_packet(&t, 1100, 1);
	pz_begin_nested(p, PB_TRACE_PACKET__CHROME_TRIGGER, &m);
	pz_append_fixed32(&m, PB_CHROME_TRIGGER__TRIGGER_NAME_HASH, 1595654158u);
	pz_end(&m);
	im_end_packet(&t);
	hash = fnv1a64(t.buf, t.s.n_bytes < 4096 ? t.s.n_bytes : 4096);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT name, key_type, int_value, str_value, machine_id FROM "
				 "metadata WHERE name GLOB 'cr-*' ORDER BY name"),
		     "cr-a-field_trial_hashes,single,-,{ name: 10, group: 20 } { name: 11, group: "
		     "21 } \n{ name: 12, group: 22 } ,0;"
		     "cr-a-os-name,single,-,Android,0;cr-a-playstore_version_code,single,101,-,0;"
		     "cr-b-field_trial_hashes,single,-,{ name: 10, group: 20 } { name: 11, group: "
		     "21 } ,0;"
		     "cr-b-os-name,single,-,Linux,0;cr-b-playstore_version_code,single,102,-,0;"
		     "cr-background_tracing_metadata,single,-,HZHOJLM=,0;"
		     "cr-scenario_name_hash,single,3005533841,-,0;"
		     "cr-triggered_rule_name_hash,single,1595654158,-,0;");
	ASSERT_STREQ(im_rows(tp, "SELECT int_value FROM metadata WHERE name = "
				 "'trace_time_clock_id'"),
		     "6;");
	snprintf(want, sizeof(want), "00000000-0000-0000-%04x-%012llx;", (unsigned)(hash >> 48),
		 (unsigned long long)(hash & 0xffffffffffffull));
	ASSERT_STREQ(im_rows(tp, "SELECT str_value FROM metadata WHERE name = 'trace_uuid'"), want);
	tp_destroy(tp);
}

/*
 * trace_uuid: a TraceUuid packet beats the file hash and a TraceConfig's
 * uuid; a snapshot after a converted timestamp sets no trace_time_clock_id.
 */
TEST(im_trace_uuid_and_clock_id)
{
	struct im_trace t;
	struct pz_msg *p, m;
	struct tp *tp;

	im_begin(&t);
	p = im_packet(&t, 500, 1);
	pz_begin_nested(p, PB_TRACE_PACKET__TRACE_UUID, &m);
	pz_append_varint(&m, PB_TRACE_UUID__MSB, 0x0123456789abcdefull);
	pz_append_varint(&m, PB_TRACE_UUID__LSB, 2);
	pz_end(&m);
	im_end_packet(&t);
	p = im_packet(&t, 600, 1);
	pz_begin_nested(p, PB_TRACE_PACKET__TRACE_CONFIG, &m);
	pz_append_varint(&m, PB_TRACE_CONFIG__TRACE_UUID_MSB, 7);
	pz_append_varint(&m, PB_TRACE_CONFIG__TRACE_UUID_LSB, 7);
	pz_end(&m);
	im_end_packet(&t);
	im_boottime_snapshot(&t, 1000);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT str_value, trace_id FROM metadata WHERE name = "
				 "'trace_uuid'"),
		     "01234567-89ab-cdef-0000-000000000002,0;");
	ASSERT_STREQ(im_rows(tp, "SELECT COUNT(*) FROM metadata WHERE name = "
				 "'trace_time_clock_id'"),
		     "0;");
	tp_destroy(tp);

	/* Only the config names the trace (a zero TraceUuid is no uuid). */
	im_begin(&t);
	p = im_packet(&t, 600, 1);
	pz_begin_nested(p, PB_TRACE_PACKET__TRACE_CONFIG, &m);
	pz_append_varint(&m, PB_TRACE_CONFIG__TRACE_UUID_MSB, 7);
	pz_append_varint(&m, PB_TRACE_CONFIG__TRACE_UUID_LSB, 7);
	pz_end(&m);
	im_end_packet(&t);
	p = im_packet(&t, 700, 1);
	pz_begin_nested(p, PB_TRACE_PACKET__TRACE_UUID, &m);
	pz_append_varint(&m, PB_TRACE_UUID__MSB, 0);
	pz_append_varint(&m, PB_TRACE_UUID__LSB, 0);
	pz_end(&m);
	im_end_packet(&t);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT str_value FROM metadata WHERE name = 'trace_uuid'"),
		     "00000000-0000-0007-0000-000000000007;");
	tp_destroy(tp);
}

/* One EntityStateResidency power_entity_state / residency pair. */
static void im_entity_state(struct pz_msg *e, uint32_t field, int entity, int state,
			    const char *ename, const char *sname, uint64_t ms)
{
	struct pz_msg m;

	pz_begin_nested(e, field, &m);
	pz_append_varint(&m, 1, (uint64_t)entity); /* entity_index */
	pz_append_varint(&m, 2, (uint64_t)state);  /* state_index */
	if (ename) {
		pz_append_string(&m, PB_ENTITY_STATE_RESIDENCY_POWER_ENTITY_STATE__ENTITY_NAME, ename);
		pz_append_string(&m, PB_ENTITY_STATE_RESIDENCY_POWER_ENTITY_STATE__STATE_NAME, sname);
	} else {
		pz_append_varint(&m, PB_ENTITY_STATE_RESIDENCY_STATE_RESIDENCY__TOTAL_TIME_IN_STATE_MS,
				 ms);
	}
	pz_end(&m);
}

/*
 * EntityStateResidency: a counter track per named (entity, state) with
 * dimension args; a packet without residencies, or naming an unknown state,
 * is counted.
 */
TEST(im_entity_state_residency)
{
	const uint32_t names = PB_ENTITY_STATE_RESIDENCY__POWER_ENTITY_STATE;
	const uint32_t res = PB_ENTITY_STATE_RESIDENCY__RESIDENCY;
	struct im_trace t;
	struct pz_msg *p, e;
	struct tp *tp;
	int k;

	im_begin(&t);
	for (k = 0; k < 3; k++) {
		p = im_packet(&t, 10 + k, 1);
		pz_begin_nested(p, PB_TRACE_PACKET__ENTITY_STATE_RESIDENCY, &e);
		if (k == 0) {
			im_entity_state(&e, names, 0, 0, "Modem", "UP", 0);
			im_entity_state(&e, names, 0, 1, "Modem", "DOWN", 0);
		}
		if (k < 2) {
			im_entity_state(&e, res, 0, 1, NULL, NULL, 20u + k);
			im_entity_state(&e, res, 0, 0, NULL, NULL, 10u + k);
		}
		if (k == 1)
			im_entity_state(&e, res, 3, 3, NULL, NULL, 1);
		pz_end(&e);
		im_end_packet(&t);
	}
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT c.ts, t.name, t.type, c.value, (SELECT GROUP_CONCAT("
				 "a.key || '=' || a.string_value) FROM args a WHERE a.arg_set_id = "
				 "t.dimension_arg_set_id) FROM counter c JOIN counter_track t ON "
				 "c.track_id = t.id ORDER BY c.id"),
		     "10,Entity residency: Modem is DOWN,entity_state,20.0,entity_name=Modem,"
		     "state_name=DOWN;"
		     "10,Entity residency: Modem is UP,entity_state,10.0,entity_name=Modem,"
		     "state_name=UP;"
		     "11,Entity residency: Modem is DOWN,entity_state,21.0,entity_name=Modem,"
		     "state_name=DOWN;"
		     "11,Entity residency: Modem is UP,entity_state,11.0,entity_name=Modem,"
		     "state_name=UP;");
	ASSERT_STREQ(im_rows(tp, "SELECT name, value FROM stats WHERE name GLOB "
				 "'entity_state_residency_*' ORDER BY name"),
		     "entity_state_residency_invalid,1;entity_state_residency_lookup_failed,1;");
	tp_destroy(tp);
}

/* Opens ftrace event @field at @ts from @pid in @bundle; the caller fills *payload. */
static void im_ft_begin(struct pz_msg *bundle, struct pz_msg *ev, struct pz_msg *payload,
			int64_t ts, int64_t pid, uint32_t field)
{
	pz_begin_nested(bundle, PB_FTRACE_EVENT_BUNDLE__EVENT, ev);
	pz_append_varint(ev, PB_FTRACE_EVENT__TIMESTAMP, (uint64_t)ts);
	pz_append_varint(ev, PB_FTRACE_EVENT__PID, (uint64_t)pid);
	pz_begin_nested(ev, field, payload);
}

static void im_ft_end(struct pz_msg *ev, struct pz_msg *payload)
{
	pz_end(payload);
	pz_end(ev);
}

static void im_rss(struct pz_msg *b, int64_t ts, int64_t pid, int64_t member, int64_t size,
		   int64_t mm_id, int curr)
{
	struct pz_msg ev, r;

	im_ft_begin(b, &ev, &r, ts, pid, PB_FTRACE_EVENT__RSS_STAT);
	pz_append_varint(&r, PB_RSS_STAT_FTRACE_EVENT__MEMBER, (uint64_t)member);
	pz_append_varint(&r, PB_RSS_STAT_FTRACE_EVENT__SIZE, (uint64_t)size);
	if (mm_id)
		pz_append_varint(&r, PB_RSS_STAT_FTRACE_EVENT__MM_ID, (uint64_t)mm_id);
	if (curr >= 0)
		pz_append_varint(&r, PB_RSS_STAT_FTRACE_EVENT__CURR, (uint64_t)curr);
	im_ft_end(&ev, &r);
}

/*
 * rss_stat as Perfetto's RssStatTracker: members 4 (unreclaimable) and
 * past it ("unknown") have tracks, a negative size is counted and
 * dropped, an mm_id without curr is the event's own thread's, and an mm
 * whose thread was freed is unknown (counted). Threads that never join a
 * process keep their values on process_memory_thread_fallback tracks.
 */
TEST(im_rss_stat_rules)
{
	struct im_trace t;
	struct pz_msg b, ev, fr;
	struct tp *tp;

	im_begin(&t);
	im_bundle(&t, 0, &b);
	im_rss(&b, 100, 10, 1, 4096, 0xabc, 1);
	im_rss(&b, 110, 20, 1, 8192, 0xabc, 0); /* 20 changes 10's mm */
	im_rss(&b, 120, 10, 4, 1, 0, -1);
	im_rss(&b, 130, 10, 9, 2, 0, -1);
	im_rss(&b, 140, 10, 0, -5, 0, -1);
	im_rss(&b, 150, 20, 2, 3, 0xdef, -1); /* no curr: 20's own */
	im_ft_begin(&b, &ev, &fr, 200, 0, PB_FTRACE_EVENT__SCHED_PROCESS_FREE);
	pz_append_varint(&fr, PB_SCHED_PROCESS_FREE_FTRACE_EVENT__PID, 10);
	im_ft_end(&ev, &fr);
	im_rss(&b, 210, 20, 1, 0, 0xabc, 0);
	im_end_bundle(&t, &b);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT c.ts, t.name, th.tid, c.value FROM counter c JOIN "
				 "thread_counter_track t ON c.track_id = t.id JOIN thread th "
				 "USING (utid) WHERE t.type = 'process_memory_thread_fallback' "
				 "ORDER BY c.ts"),
		     "100,mem.rss.anon,10,4096.0;110,mem.rss.anon,10,8192.0;"
		     "120,mem.unreclaimable,10,1.0;130,mem.unknown,10,2.0;150,mem.swap,20,3.0;");
	ASSERT_STREQ(im_rows(tp, "SELECT name, value FROM stats WHERE name GLOB 'rss_stat*' "
				 "ORDER BY name"),
		     "rss_stat_negative_size,1;rss_stat_unknown_keys,0;"
		     "rss_stat_unknown_thread_for_mm_id,1;");
	tp_destroy(tp);
}

static void im_wakeup(struct pz_msg *b, int64_t ts, bool activate, const char *name)
{
	struct pz_msg ev, w;

	im_ft_begin(b, &ev, &w, ts, 7,
		    activate ? PB_FTRACE_EVENT__WAKEUP_SOURCE_ACTIVATE
			     : PB_FTRACE_EVENT__WAKEUP_SOURCE_DEACTIVATE);
	pz_append_string(&w, PB_WAKEUP_SOURCE_ACTIVATE_FTRACE_EVENT__NAME, name);
	im_ft_end(&ev, &w);
}

/*
 * Wakeup sources: one "Wakelock(name)" slice per source from its first
 * activation to the deactivation balancing them all, on a track per source
 * (type and dimension arg as Perfetto's); names are cut at 31 bytes.
 */
TEST(im_wakesource)
{
	struct im_trace t;
	struct pz_msg b;
	struct tp *tp;

	im_begin(&t);
	im_bundle(&t, 0, &b);
	im_wakeup(&b, 10, true, "a");
	im_wakeup(&b, 12, true, "a");
	im_wakeup(&b, 15, true, "abcdefghijklmnopqrstuvwxyz");
	im_wakeup(&b, 20, false, "a");
	im_wakeup(&b, 25, false, "a");
	im_wakeup(&b, 26, false, "a");
	im_wakeup(&b, 27, true, "a");
	im_wakeup(&b, 30, false, "abcdefghijklmnopqrstuvwxyz");
	im_end_bundle(&t, &b);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT s.ts, s.dur, s.name, t.name, t.type, (SELECT "
				 "a.key || '=' || a.string_value FROM args a WHERE a.arg_set_id = "
				 "t.dimension_arg_set_id) FROM slice s JOIN track t ON s.track_id = "
				 "t.id ORDER BY s.ts"),
		     "10,15,Wakelock(a),Wakelock(a),wakesource_wakelock,wakelock_event=a;"
		     "15,15,Wakelock(abcdefghijklmnopqrstuv,Wakelock(abcdefghijklmnopqrstuv,"
		     "wakesource_wakelock,wakelock_event=abcdefghijklmnopqrstuvwxyz;"
		     "27,-1,Wakelock(a),Wakelock(a),wakesource_wakelock,wakelock_event=a;");
	tp_destroy(tp);
}

/*
 * Display drivers' marker events: mdss begin/end and sde B/E (by
 * trace_begin) make thread slices in the payload's process, sde 'C' a
 * process counter; an sde event with neither type nor begin is counted.
 */
TEST(im_ftrace_mark)
{
	struct im_trace t;
	struct pz_msg b, ev, m;
	struct tp *tp;
	int i;

	im_begin(&t);
	im_bundle(&t, 0, &b);
	for (i = 0; i < 2; i++) {
		im_ft_begin(&b, &ev, &m, 100 + 100 * i, 584, PB_FTRACE_EVENT__TRACING_MARK_WRITE);
		pz_append_varint(&m, PB_TRACING_MARK_WRITE_FTRACE_EVENT__PID, 580);
		pz_append_string(&m, PB_TRACING_MARK_WRITE_FTRACE_EVENT__TRACE_NAME, "mdss");
		pz_append_varint(&m, PB_TRACING_MARK_WRITE_FTRACE_EVENT__TRACE_BEGIN, i == 0);
		im_ft_end(&ev, &m);
	}
	for (i = 0; i < 2; i++) {
		im_ft_begin(&b, &ev, &m, 300 + i, 403, PB_FTRACE_EVENT__SDE_TRACING_MARK_WRITE);
		pz_append_varint(&m, PB_SDE_TRACING_MARK_WRITE_FTRACE_EVENT__PID, 403);
		pz_append_string(&m, PB_SDE_TRACING_MARK_WRITE_FTRACE_EVENT__TRACE_NAME, "sde");
		pz_append_varint(&m, PB_SDE_TRACING_MARK_WRITE_FTRACE_EVENT__TRACE_BEGIN, i == 0);
		im_ft_end(&ev, &m);
	}
	im_ft_begin(&b, &ev, &m, 400, 403, PB_FTRACE_EVENT__SDE_TRACING_MARK_WRITE);
	pz_append_varint(&m, PB_SDE_TRACING_MARK_WRITE_FTRACE_EVENT__PID, 403);
	pz_append_string(&m, PB_SDE_TRACING_MARK_WRITE_FTRACE_EVENT__TRACE_NAME, "fps");
	pz_append_varint(&m, PB_SDE_TRACING_MARK_WRITE_FTRACE_EVENT__TRACE_TYPE, 'C');
	pz_append_varint(&m, PB_SDE_TRACING_MARK_WRITE_FTRACE_EVENT__VALUE, 60);
	im_ft_end(&ev, &m);
	im_ft_begin(&b, &ev, &m, 500, 403, PB_FTRACE_EVENT__SDE_TRACING_MARK_WRITE);
	pz_append_string(&m, PB_SDE_TRACING_MARK_WRITE_FTRACE_EVENT__TRACE_NAME, "bad");
	im_ft_end(&ev, &m);
	im_end_bundle(&t, &b);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT s.name, s.ts, s.dur, th.tid, p.pid FROM slice s JOIN "
				 "thread_track tt ON s.track_id = tt.id JOIN thread th USING(utid) "
				 "LEFT JOIN process p USING(upid) ORDER BY s.ts"),
		     "mdss,100,100,584,580;sde,300,1,403,403;");
	ASSERT_STREQ(im_rows(tp, "SELECT t.name, c.ts, c.value FROM counter c JOIN "
				 "process_counter_track t ON c.track_id = t.id"),
		     "fps,400,60.0;");
	ASSERT_STREQ(im_rows(tp, "SELECT value FROM stats WHERE name = 'systrace_parse_failure'"),
		     "1;");
	tp_destroy(tp);
}

static void im_dma(struct pz_msg *b, int64_t ts, uint64_t inode, int64_t len, uint64_t total)
{
	struct pz_msg ev, d;

	im_ft_begin(b, &ev, &d, ts, 1, PB_FTRACE_EVENT__DMA_HEAP_STAT);
	pz_append_varint(&d, PB_DMA_HEAP_STAT_FTRACE_EVENT__INODE, inode);
	pz_append_varint(&d, PB_DMA_HEAP_STAT_FTRACE_EVENT__LEN, (uint64_t)len);
	pz_append_varint(&d, PB_DMA_HEAP_STAT_FTRACE_EVENT__TOTAL_ALLOCATED, total);
	im_ft_end(&ev, &d);
}

/*
 * dma_heap_stat: the heap total and per-thread changes as counters, and a
 * slice per live buffer; overlapping buffers take separate mem.dma_buffer
 * tracks and a freed track is reused.
 */
TEST(im_dma_heap_stat)
{
	struct im_trace t;
	struct pz_msg b;
	struct tp *tp;

	im_begin(&t);
	im_bundle(&t, 0, &b);
	im_dma(&b, 100, 1, 2048, 2048);
	im_dma(&b, 150, 2, 4096, 6144);
	im_dma(&b, 200, 1, -2048, 4096);
	im_dma(&b, 250, 3, 1024, 5120);
	im_dma(&b, 300, 2, -4096, 1024);
	im_end_bundle(&t, &b);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT s.ts, s.dur, s.name, t.name, t.type, s.track_id FROM "
				 "slice s JOIN track t ON s.track_id = t.id ORDER BY s.ts"),
		     "100,100,2 kB,mem.dma_buffer,android_dma_allocations,2;"
		     "150,150,4 kB,mem.dma_buffer,android_dma_allocations,3;"
		     "250,-1,1 kB,mem.dma_buffer,android_dma_allocations,2;");
	ASSERT_STREQ(im_rows(tp, "SELECT t.name, GROUP_CONCAT(CAST(c.value AS INT), ' ') FROM "
				 "counter c JOIN counter_track t ON c.track_id = t.id "
				 "GROUP BY t.name ORDER BY t.name"),
		     "mem.dma_heap,2048 6144 4096 5120 1024;"
		     "mem.dma_heap_change,2048 4096 -2048 1024 -4096;");
	tp_destroy(tp);
}

static void im_adreno(struct pz_msg *b, int64_t ts, uint32_t field, uint32_t stamp,
		      uint64_t a, uint64_t c)
{
	struct pz_msg ev, k;

	im_ft_begin(b, &ev, &k, ts, 100, field);
	pz_append_varint(&k, PB_KGSL_ADRENO_CMDBATCH_RETIRED_FTRACE_EVENT__ID, 1);
	pz_append_varint(&k, PB_KGSL_ADRENO_CMDBATCH_RETIRED_FTRACE_EVENT__TIMESTAMP, stamp);
	if (field == PB_FTRACE_EVENT__KGSL_ADRENO_CMDBATCH_SYNC) {
		pz_append_varint(&k, PB_KGSL_ADRENO_CMDBATCH_SYNC_FTRACE_EVENT__TICKS, a);
		pz_append_varint(&k, PB_KGSL_ADRENO_CMDBATCH_SYNC_FTRACE_EVENT__PRIO, 2);
	} else if (field == PB_FTRACE_EVENT__KGSL_ADRENO_CMDBATCH_RETIRED) {
		pz_append_varint(&k, PB_KGSL_ADRENO_CMDBATCH_RETIRED_FTRACE_EVENT__START, a);
		pz_append_varint(&k, PB_KGSL_ADRENO_CMDBATCH_RETIRED_FTRACE_EVENT__RETIRE, c);
		pz_append_varint(&k, PB_KGSL_ADRENO_CMDBATCH_RETIRED_FTRACE_EVENT__PRIO, 2);
	}
	im_ft_end(&ev, &k);
}

/*
 * Adreno command batches: a "GPU" slice at the GPU start time (from the
 * batch's sync point, whichever of sync and retired comes first), on the
 * track of (context, prio) named after the queuing process; overlapping
 * batches take a second track.
 */
TEST(im_adreno_cmdbatch)
{
	const uint32_t q = PB_FTRACE_EVENT__KGSL_ADRENO_CMDBATCH_QUEUED;
	const uint32_t s = PB_FTRACE_EVENT__KGSL_ADRENO_CMDBATCH_SYNC;
	const uint32_t r = PB_FTRACE_EVENT__KGSL_ADRENO_CMDBATCH_RETIRED;
	struct im_trace t;
	struct pz_msg b;
	struct tp *tp;

	im_begin(&t);
	im_tree_process(&t, 1, 100, 1, "app");
	im_bundle(&t, 0, &b);
	im_adreno(&b, 900000000, q, 42, 0, 0);
	im_adreno(&b, 1000000000, s, 42, 19200000, 0);
	im_adreno(&b, 3100000000, r, 42, 38400000, 57600000);
	/* Retired before its sync; overlaps the first batch. */
	im_adreno(&b, 3200000000, r, 43, 19200000, 38400000);
	im_adreno(&b, 3300000000, s, 43, 0, 0);
	im_end_bundle(&t, &b);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT s.name, s.ts, s.dur, t.name, t.type, (SELECT "
				 "GROUP_CONCAT(a.key || '=' || a.int_value) FROM args a WHERE "
				 "a.arg_set_id = t.dimension_arg_set_id) FROM slice s JOIN track t "
				 "ON s.track_id = t.id ORDER BY s.ts"),
		     "GPU,2000000000,1000000000,GPU app (Ctx=1, Prio=2),adreno_gpu_cmdbatch,"
		     "context_id=1,prio=2;"
		     "GPU,4300000000,1000000000,GPU app (Ctx=1, Prio=2),adreno_gpu_cmdbatch,"
		     "context_id=1,prio=2;");
	ASSERT_STREQ(im_rows(tp, "SELECT COUNT(DISTINCT track_id) FROM slice"), "1;");
	tp_destroy(tp);
}

static void im_energy(struct im_trace *t, int64_t ts, int consumer, int64_t uws, int uid)
{
	struct pz_msg *p = im_packet(t, ts, 9), e, u;

	pz_begin_nested(p, PB_TRACE_PACKET__ANDROID_ENERGY_ESTIMATION_BREAKDOWN, &e);
	pz_append_varint(&e, PB_ANDROID_ENERGY_ESTIMATION_BREAKDOWN__ENERGY_CONSUMER_ID,
			 (uint64_t)consumer);
	pz_append_varint(&e, PB_ANDROID_ENERGY_ESTIMATION_BREAKDOWN__ENERGY_UWS, (uint64_t)uws);
	if (uid) {
		pz_begin_nested(&e, PB_ANDROID_ENERGY_ESTIMATION_BREAKDOWN__PER_UID_BREAKDOWN, &u);
		pz_append_varint(&u, PB_ANDROID_ENERGY_ESTIMATION_BREAKDOWN_ENERGY_UID_BREAKDOWN__UID,
				 (uint64_t)uid);
		pz_append_varint(&u,
				 PB_ANDROID_ENERGY_ESTIMATION_BREAKDOWN_ENERGY_UID_BREAKDOWN__ENERGY_UWS,
				 (uint64_t)(uws / 2));
		pz_end(&u);
	}
	pz_end(&e);
	im_end_packet(t);
}

/*
 * Energy estimation breakdown: a descriptor (no timestamp) names consumers;
 * each breakdown is a counter on its consumer's track, per-uid shares on
 * per-(consumer, uid) tracks; an unnamed consumer is counted.
 */
TEST(im_energy_breakdown)
{
	struct im_trace t;
	struct pz_msg *p, e, d, c;
	struct tp *tp;

	im_begin(&t);
	p = im_packet(&t, -1, 9);
	pz_begin_nested(p, PB_TRACE_PACKET__ANDROID_ENERGY_ESTIMATION_BREAKDOWN, &e);
	pz_begin_nested(&e, PB_ANDROID_ENERGY_ESTIMATION_BREAKDOWN__ENERGY_CONSUMER_DESCRIPTOR, &d);
	pz_begin_nested(&d, PB_ANDROID_ENERGY_CONSUMER_DESCRIPTOR__ENERGY_CONSUMERS, &c);
	pz_append_varint(&c, PB_ANDROID_ENERGY_CONSUMER__ENERGY_CONSUMER_ID, 0);
	pz_append_string(&c, PB_ANDROID_ENERGY_CONSUMER__TYPE, "CPU_CLUSTER");
	pz_append_string(&c, PB_ANDROID_ENERGY_CONSUMER__NAME, "CPUCL0");
	pz_end(&c);
	pz_end(&d);
	pz_end(&e);
	im_end_packet(&t);
	im_energy(&t, 1000, 0, 500, 0);
	im_energy(&t, 2000, 0, 800, 10010);
	im_energy(&t, 3000, 5, 1, 0);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT c.ts, c.value, t.name, t.type FROM counter c JOIN "
				 "counter_track t ON c.track_id = t.id ORDER BY c.ts, t.type"),
		     "1000,500.0,CPUCL0,android_energy_estimation_breakdown;"
		     "2000,800.0,CPUCL0,android_energy_estimation_breakdown;"
		     "2000,400.0,CPUCL0,android_energy_estimation_breakdown_per_uid;");
	ASSERT_STREQ(im_rows(tp, "SELECT value FROM stats WHERE name = "
				 "'energy_breakdown_missing_values'"),
		     "1;");
	tp_destroy(tp);
}

static void im_sysprop(struct im_trace *t, int64_t ts, const char *name, const char *value)
{
	struct pz_msg *p = im_packet(t, ts, 0), s, v;

	pz_begin_nested(p, PB_TRACE_PACKET__ANDROID_SYSTEM_PROPERTY, &s);
	pz_begin_nested(&s, PB_ANDROID_SYSTEM_PROPERTY__VALUES, &v);
	pz_append_string(&v, PB_ANDROID_SYSTEM_PROPERTY_PROPERTY_VALUE__NAME, name);
	pz_append_string(&v, PB_ANDROID_SYSTEM_PROPERTY_PROPERTY_VALUE__VALUE, value);
	pz_end(&v);
	pz_end(&s);
	im_end_packet(t);
}

/*
 * battery_stats.* from system properties and from atrace counters share one
 * global battery_stats track per name; screen_state is a ScreenState
 * counter; non-integer values are ignored.
 */
TEST(im_battery_stats_and_sysprops)
{
	struct im_trace t;
	struct pz_msg b;
	struct tp *tp;

	im_begin(&t);
	im_sysprop(&t, 1000, "debug.tracing.battery_stats.screen", "1");
	im_sysprop(&t, 1500, "debug.tracing.battery_stats.wifi", "on");
	im_sysprop(&t, 1600, "debug.tracing.screen_state", "2");
	im_bundle(&t, 0, &b);
	im_print(&b, 2000, 1000, "C|1000|battery_stats.screen|0");
	im_end_bundle(&t, &b);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT t.name, t.type, c.ts, c.value, (SELECT a.string_value "
				 "FROM args a WHERE a.arg_set_id = t.dimension_arg_set_id) FROM "
				 "counter c JOIN counter_track t ON c.track_id = t.id ORDER BY c.ts"),
		     "battery_stats.screen,battery_stats,1000,1.0,battery_stats.screen;"
		     "ScreenState,screen_state,1600,2.0,-;"
		     "battery_stats.screen,battery_stats,2000,0.0,battery_stats.screen;");
	tp_destroy(tp);
}

/* A ProcessTree.Process with every field the rules look at (@uid < 0: none). */
static void im_tree_entry(struct pz_msg *pt, int64_t pid, int64_t ppid, const char *const *argv,
			  int argc, int64_t uid, int is_kthread, bool cmdline_is_comm)
{
	struct pz_msg pr;
	int i;

	pz_begin_nested(pt, PB_PROCESS_TREE__PROCESSES, &pr);
	pz_append_varint(&pr, PB_PROCESS_TREE_PROCESS__PID, (uint64_t)pid);
	pz_append_varint(&pr, PB_PROCESS_TREE_PROCESS__PPID, (uint64_t)ppid);
	for (i = 0; i < argc; i++)
		pz_append_string(&pr, PB_PROCESS_TREE_PROCESS__CMDLINE, argv[i]);
	if (uid >= 0)
		pz_append_varint(&pr, PB_PROCESS_TREE_PROCESS__UID, (uint64_t)uid);
	if (is_kthread >= 0)
		pz_append_varint(&pr, PB_PROCESS_TREE_PROCESS__IS_KTHREAD, (uint64_t)is_kthread);
	if (cmdline_is_comm)
		pz_append_varint(&pr, PB_PROCESS_TREE_PROCESS__CMDLINE_IS_COMM, 1);
	pz_end(&pr);
}

/*
 * Perfetto's process tree rules: an entry without a cmdline is skipped; a
 * kworker child of kthreadd loses its "-<workqueue>" suffix in its name,
 * its cmdline and (as a main thread) its thread's name; a lone cmdline is
 * cut at its first space for the name; cmdline_is_comm names the thread
 * (above any sched_switch comm); the uid gives android_appid and
 * android_user_id; is_kthread is a process arg; the parent (pid 0 too)
 * is made with its main thread, before the child.
 */
TEST(im_process_tree_rules)
{
	static const char *const kw[] = {"kworker/1:2-events"};
	static const char *const sh[] = {"bash -c 'sleep 1'"};
	static const char *const app[] = {"/bin/app", "--flag"};
	static const char *const kthreadd[] = {"kthreadd"};
	struct im_trace t;
	struct pz_msg b, *p, pt, th;
	struct tp *tp;

	im_begin(&t);
	p = im_packet(&t, 1, 0);
	pz_begin_nested(p, PB_TRACE_PACKET__PROCESS_TREE, &pt);
	im_tree_entry(&pt, 2, 0, kthreadd, 1, 0, 1, true);
	im_tree_entry(&pt, 50, 2, kw, 1, 0, 1, true);
	im_tree_entry(&pt, 60, 1, sh, 1, 10123, 0, false);
	im_tree_entry(&pt, 70, 60, app, 2, 1010123, -1, false);
	im_tree_entry(&pt, 80, 1, NULL, 0, 0, -1, false);
	pz_begin_nested(&pt, PB_PROCESS_TREE__THREADS, &th);
	pz_append_varint(&th, PB_PROCESS_TREE_THREAD__TID, 50);
	pz_append_varint(&th, PB_PROCESS_TREE_THREAD__TGID, 50);
	pz_append_string(&th, PB_PROCESS_TREE_THREAD__NAME, "kworker/1:2+wq");
	pz_end(&th);
	pz_end(&pt);
	im_end_packet(&t);
	im_bundle(&t, 0, &b);
	im_switch(&b, 10, "swapper/0", 0, 0, "kworker/1:2-ev", 50);
	im_end_bundle(&t, &b);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT upid, pid, name, cmdline, parent_upid, uid, android_appid, "
				 "android_user_id FROM process ORDER BY upid"),
		     "0,0,-,-,-,-,-,-;1,2,kthreadd,kthreadd,0,0,0,0;"
		     "2,50,kworker/1:2,kworker/1:2,1,0,0,0;3,1,-,-,-,-,-,-;"
		     "4,60,bash,bash -c 'sleep 1',3,10123,10123,0;"
		     "5,70,/bin/app,/bin/app --flag,4,1010123,10123,10;");
	ASSERT_STREQ(im_rows(tp, "SELECT utid, tid, name, upid, is_main_thread FROM thread "
				 "ORDER BY utid"),
		     "0,0,swapper,0,1;1,2,kthreadd,1,1;2,50,kworker/1:2,2,1;3,1,-,3,1;"
		     "4,60,-,4,1;5,70,-,5,1;");
	ASSERT_STREQ(im_rows(tp, "SELECT p.pid, a.key, a.display_value FROM process p JOIN args a "
				 "USING (arg_set_id) ORDER BY p.upid"),
		     "2,is_kthread,true;50,is_kthread,true;60,is_kthread,false;");
	/*
	 * The sets are made at the end in the slot order of Perfetto's hash map
	 * of upids (upid 4 hashes to slot 117, 1 to 812, 2 to 999 of 1024),
	 * not by upid: false (pid 60) gets the first set.
	 */
	ASSERT_STREQ(im_rows(tp, "SELECT pid FROM process WHERE arg_set_id IS NOT NULL "
				 "ORDER BY arg_set_id, upid"),
		     "60;2;50;");
	tp_destroy(tp);
}

/*
 * Perfetto's ftrace thread rules: the event's own task gets its thread
 * first (the ftrace_event row), then a fork (task_newtask without
 * CLONE_THREAD) starts a process named by the comm whose parent is the
 * creator's process once that is known; the new task's first state is R
 * woken by its creator; sched_waking names the wakee; task_rename of a
 * main thread renames its process; sched_process_exit ends nothing;
 * sched_process_free ends the thread and, for a main thread, its
 * process, and a later event of that tid is a new thread.
 */
TEST(im_ftrace_thread_rules)
{
	struct im_trace t;
	struct pz_msg b, ev, pl, *p, pt, th;
	struct tp *tp;

	im_begin(&t);
	im_bundle(&t, 0, &b);
	/* 90 (process unknown yet) forks 91. */
	im_ft_begin(&b, &ev, &pl, 10, 90, PB_FTRACE_EVENT__TASK_NEWTASK);
	pz_append_varint(&pl, PB_TASK_NEWTASK_FTRACE_EVENT__PID, 91);
	pz_append_string(&pl, PB_TASK_NEWTASK_FTRACE_EVENT__COMM, "forked");
	pz_append_varint(&pl, PB_TASK_NEWTASK_FTRACE_EVENT__CLONE_FLAGS, 0x11);
	im_ft_end(&ev, &pl);
	im_waking(&b, 15, 90, 92);
	im_ft_begin(&b, &ev, &pl, 20, 91, PB_FTRACE_EVENT__TASK_RENAME);
	pz_append_varint(&pl, PB_TASK_RENAME_FTRACE_EVENT__PID, 91);
	pz_append_string(&pl, PB_TASK_RENAME_FTRACE_EVENT__NEWCOMM, "renamed");
	im_ft_end(&ev, &pl);
	im_ft_begin(&b, &ev, &pl, 30, 91, PB_FTRACE_EVENT__SCHED_PROCESS_EXIT);
	pz_append_varint(&pl, PB_SCHED_PROCESS_EXIT_FTRACE_EVENT__PID, 91);
	im_ft_end(&ev, &pl);
	im_ft_begin(&b, &ev, &pl, 40, 0, PB_FTRACE_EVENT__SCHED_PROCESS_FREE);
	pz_append_varint(&pl, PB_SCHED_PROCESS_FREE_FTRACE_EVENT__PID, 91);
	im_ft_end(&ev, &pl);
	im_waking(&b, 50, 90, 91);
	im_end_bundle(&t, &b);
	/* Later, a scan puts 90 in process 89: 91's parent becomes 89's process. */
	p = im_packet(&t, 60, 0);
	pz_begin_nested(p, PB_TRACE_PACKET__PROCESS_TREE, &pt);
	pz_begin_nested(&pt, PB_PROCESS_TREE__THREADS, &th);
	pz_append_varint(&th, PB_PROCESS_TREE_THREAD__TID, 90);
	pz_append_varint(&th, PB_PROCESS_TREE_THREAD__TGID, 89);
	pz_end(&th);
	pz_end(&pt);
	im_end_packet(&t);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT utid, tid, name, start_ts, end_ts, upid FROM thread "
				 "ORDER BY utid"),
		     "0,0,swapper,-,-,0;1,90,-,-,-,2;2,91,renamed,10,40,1;3,92,x,-,-,-;"
		     "4,91,x,-,-,-;5,89,-,-,-,2;");
	ASSERT_STREQ(im_rows(tp, "SELECT upid, pid, name, start_ts, end_ts, parent_upid FROM process "
				 "ORDER BY upid"),
		     "0,0,-,-,-,-;1,91,renamed,10,40,2;2,89,-,-,-,-;");
	ASSERT_STREQ(im_rows(tp, "SELECT ts, utid, state, waker_utid, irq_context FROM thread_state "
				 "WHERE utid = 2"),
		     "10,2,R,1,0;");
	tp_destroy(tp);
}

/*
 * trace_config_pbtxt: the TraceConfig as Perfetto's protozero_to_text
 * prints it: wire order, nested and empty messages, repeated strings,
 * enums by name (an unknown value by field number), packed enums one line
 * each, escapes (\' too, other bytes in octal), negative int64, and fields
 * the config does not have by number (varint, quoted bytes, fixed32 hex).
 */
TEST(im_trace_config_pbtxt)
{
	static const char name[] = "a\"b\\c'd\n\x01\xff";
	static const uint8_t quirks[] = {1, 2, 7};
	struct im_trace t;
	struct pz_msg *p, m, b, ds, dc, sub;
	struct tp *tp;

	im_begin(&t);
	im_boottime_snapshot(&t, 1000);
	p = im_packet(&t, 1000, 1);
	pz_begin_nested(p, PB_TRACE_PACKET__TRACE_CONFIG, &m);
	pz_begin_nested(&m, PB_TRACE_CONFIG__BUFFERS, &b);
	pz_append_varint(&b, PB_TRACE_CONFIG_BUFFER_CONFIG__SIZE_KB, 1024);
	pz_append_varint(&b, PB_TRACE_CONFIG_BUFFER_CONFIG__FILL_POLICY, 2);
	pz_end(&b);
	pz_begin_nested(&m, PB_TRACE_CONFIG__DATA_SOURCES, &ds);
	pz_begin_nested(&ds, PB_TRACE_CONFIG_DATA_SOURCE__CONFIG, &dc);
	pz_append_bytes(&dc, PB_DATA_SOURCE_CONFIG__NAME, name, sizeof(name) - 1);
	pz_begin_nested(&dc, PB_DATA_SOURCE_CONFIG__FTRACE_CONFIG, &sub);
	pz_append_string(&sub, PB_FTRACE_CONFIG__ATRACE_CATEGORIES, "gfx");
	pz_append_string(&sub, PB_FTRACE_CONFIG__ATRACE_CATEGORIES, "view");
	pz_end(&sub);
	pz_begin_nested(&dc, PB_DATA_SOURCE_CONFIG__PROCESS_STATS_CONFIG, &sub);
	pz_append_bytes(&sub, PB_PROCESS_STATS_CONFIG__QUIRKS, quirks, sizeof(quirks));
	pz_end(&sub);
	pz_end(&dc);
	pz_end(&ds);
	pz_append_varint(&m, PB_TRACE_CONFIG__LOCKDOWN_MODE, 77);
	pz_begin_nested(&m, PB_TRACE_CONFIG__STATSD_METADATA, &sub);
	pz_end(&sub);
	pz_append_varint(&m, 999, 5);
	pz_append_string(&m, 1000, "x\ty");
	pz_append_fixed32(&m, 1001, 0xab);
	pz_append_int(&m, PB_TRACE_CONFIG__TRACE_UUID_LSB, -2);
	pz_append_varint(&m, PB_TRACE_CONFIG__DURATION_MS, 3000);
	pz_end(&m);
	im_end_packet(&t);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT str_value FROM metadata WHERE name = "
				 "'trace_config_pbtxt'"),
		     "buffers {\n"
		     "  size_kb: 1024\n"
		     "  fill_policy: DISCARD\n"
		     "}\n"
		     "data_sources {\n"
		     "  config {\n"
		     "    name: \"a\\\"b\\\\c\\'d\\n\\001\\377\"\n"
		     "    ftrace_config {\n"
		     "      atrace_categories: \"gfx\"\n"
		     "      atrace_categories: \"view\"\n"
		     "    }\n"
		     "    process_stats_config {\n"
		     "      quirks: DISABLE_INITIAL_DUMP\n"
		     "      quirks: DISABLE_ON_DEMAND\n"
		     "      1: 7\n"
		     "    }\n"
		     "  }\n"
		     "}\n"
		     "5: 77\n"
		     "statsd_metadata {\n"
		     "}\n"
		     "999: 5\n"
		     "1000: \"x\\ty\"\n"
		     "1001: 0x000000ab\n"
		     "trace_uuid_lsb: -2\n"
		     "duration_ms: 3000;");
	/* Rows in Perfetto's order, with its scopes' machine_id and trace_id. */
	ASSERT_STREQ(im_rows(tp, "SELECT name, machine_id, trace_id FROM metadata "
				 "WHERE name != 'trace_config_pbtxt' ORDER BY id"),
		     "trace_uuid,-,0;trace_type,-,0;trace_time_clock_id,-,-;trace_size_bytes,-,0;");
	tp_destroy(tp);
}

/*
 * compact_sched switches, comm "cs": at @ts0 to @next_pid - 1 unless @ts0
 * < 0 (where who ran is unknown, no ftrace_event row), at @ts to @next_pid.
 */
static void im_compact_switch(struct pz_msg *bundle, int64_t ts0, int64_t ts, int64_t next_pid)
{
	const int64_t zero[2] = {0, 0}, prio[2] = {120, 120};
	int64_t pid[2] = {next_pid - 1, next_pid}, delta[2] = {ts0, ts - ts0};
	size_t n = 2;
	struct pz_msg cs;

	if (ts0 < 0) {
		n = 1;
		pid[0] = next_pid;
		delta[0] = ts;
	}

	pz_begin_nested(bundle, PB_FTRACE_EVENT_BUNDLE__COMPACT_SCHED, &cs);
	pz_append_string(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__INTERN_TABLE, "cs");
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_TIMESTAMP, delta, n);
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_PREV_STATE, zero, n);
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_NEXT_PID, pid, n);
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_NEXT_PRIO, prio, n);
	im_packed(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_NEXT_COMM_INDEX, zero, n);
	pz_end(&cs);
}

/*
 * Events at one time go as Perfetto's sorter merges its queues, one per
 * (CPU, kind), numbered as first pushed to (a kind's lower CPUs too): a
 * fresh pick takes the lowest number, not the lowest CPU; a queue being
 * drained goes on at a tie, but a CPU's other kind does not.
 */
TEST(im_sorter_queue_ties)
{
	struct im_trace t;
	struct pz_msg b;
	struct tp *tp;

	im_begin(&t);
	/* Events of CPU 1 first: event queues of CPUs 0 and 1 (2, 3). */
	im_bundle(&t, 1, &b);
	im_waking(&b, 100, 10, 11);
	im_end_bundle(&t, &b);
	/*
	 * CPU 0: its compact switches get queue 4, after CPU 1's events; a
	 * full switch at 50 (queue 2) tells who runs.
	 */
	im_bundle(&t, 0, &b);
	im_compact_switch(&b, -1, 100, 12);
	im_switch(&b, 50, "a", 10, 1, "b", 11);
	im_waking(&b, 100, 10, 13);
	im_end_bundle(&t, &b);
	/* CPU 1: a switch at 200 (queue 5), then its event at 300 ties CPU 0's. */
	im_bundle(&t, 1, &b);
	im_compact_switch(&b, 150, 200, 14);
	im_waking(&b, 300, 10, 15);
	im_end_bundle(&t, &b);
	im_bundle(&t, 0, &b);
	im_waking(&b, 300, 10, 16);
	im_end_bundle(&t, &b);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	/*
	 * At 100: CPU 0's event (queue 2, drained on from 50), CPU 1's (3),
	 * then CPU 0's compact switch (4). At 300: CPU 1's switch queue is
	 * done, its event queue (3) waits for CPU 0's (2).
	 */
	ASSERT_STREQ(im_rows(tp, "SELECT ts, name, cpu FROM ftrace_event ORDER BY id"),
		     "50,sched_switch,0;100,sched_waking,0;100,sched_waking,1;100,sched_switch,0;"
		     "200,sched_switch,1;300,sched_waking,0;300,sched_waking,1;");
	tp_destroy(tp);
}

/*
 * Tracks carry Perfetto's dimension arg sets, made when the track is,
 * after the args of the event that made it: every number an int.
 */
TEST(im_track_dimension_args)
{
	struct im_trace t;
	struct pz_msg b, ev, pl;
	struct tp *tp;

	im_begin(&t);
	im_bundle(&t, 1, &b);
	im_ft_begin(&b, &ev, &pl, 10, 0, PB_FTRACE_EVENT__CPU_IDLE);
	pz_append_varint(&pl, PB_CPU_IDLE_FTRACE_EVENT__STATE, 1);
	pz_append_varint(&pl, PB_CPU_IDLE_FTRACE_EVENT__CPU_ID, 1);
	im_ft_end(&ev, &pl);
	im_print(&b, 20, 50, "B|50|work\n");
	im_print(&b, 30, 50, "C|50|depth|3\n");
	im_print(&b, 40, 50, "E|50\n");
	im_end_bundle(&t, &b);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT t.id, t.type, a.key, a.value_type, a.display_value "
				 "FROM track t JOIN args a ON a.arg_set_id = t.dimension_arg_set_id "
				 "ORDER BY t.id, a.id"),
		     "0,cpu_idle,cpu,int,1;1,thread_execution,utid,int,1;"
		     "2,atrace_counter,upid,int,1;2,atrace_counter,name,string,depth;");
	/* The cpu_idle event's args come first: the track's set is the next. */
	ASSERT_STREQ(im_rows(tp, "SELECT arg_set_id, key FROM args WHERE arg_set_id <= "
				 "(SELECT dimension_arg_set_id FROM track WHERE id = 0) ORDER BY id"),
		     "0,state;0,cpu_id;2,cpu;");
	tp_destroy(tp);
}

/*
 * The recorder's setup errors at the start: logged once per sequence
 * (another start on it adds nothing), each counted with its message as an
 * arg set made then: failed events, then unknown ones (whatever the field
 * order), then atrace errors.
 */
TEST(im_ftrace_setup_error_args)
{
	struct im_trace t;
	struct pz_msg *p, fs;
	struct tp *tp;
	int i;

	im_begin(&t);
	for (i = 0; i < 2; i++) {
		p = im_packet(&t, 100 + i, 7);
		pz_begin_nested(p, PB_TRACE_PACKET__FTRACE_STATS, &fs);
		pz_append_varint(&fs, PB_FTRACE_STATS__PHASE, PBE_FTRACE_STATS_PHASE__START_OF_TRACE);
		pz_append_string(&fs, PB_FTRACE_STATS__UNKNOWN_FTRACE_EVENTS, "power/clock_enable");
		pz_append_string(&fs, PB_FTRACE_STATS__FAILED_FTRACE_EVENTS, "ftrace/print");
		pz_append_string(&fs, PB_FTRACE_STATS__ATRACE_ERRORS, "gfx");
		pz_end(&fs);
		im_end_packet(&t);
	}
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT arg_set_id, key, display_value FROM args ORDER BY id"),
		     "0,message,Ftrace event failed: ftrace/print;"
		     "1,message,Ftrace event unknown: power/clock_enable;"
		     "2,message,Atrace failures: gfx;");
	ASSERT_STREQ(im_rows(tp, "SELECT value FROM stats WHERE name = 'ftrace_setup_errors'"),
		     "3;");
	tp_destroy(tp);
}

/*
 * A switch away from a thread whose last state is not Running (its
 * switch in was lost): that state keeps dur -1, as Perfetto closes it
 * with data loss; a Running one gets its dur.
 */
TEST(im_switch_out_of_not_running_keeps_dur)
{
	struct im_trace t;
	struct pz_msg b;
	struct tp *tp;

	im_begin(&t);
	im_bundle(&t, 0, &b);
	im_switch(&b, 10, "idle", 0, 0, "w", 70);
	im_switch(&b, 20, "w", 70, 1, "idle", 0);
	im_end_bundle(&t, &b);
	im_bundle(&t, 1, &b);
	im_switch(&b, 50, "w", 70, 0, "idle", 0);
	im_end_bundle(&t, &b);
	tp = im_import(&t);
	ASSERT_TRUE(tp != NULL);
	ASSERT_STREQ(im_rows(tp, "SELECT ts.ts, ts.dur, ts.state FROM thread_state ts JOIN thread "
				 "USING (utid) WHERE tid = 70 ORDER BY ts.ts"),
		     "10,10,Running;20,-1,S;50,-1,R;");
	tp_destroy(tp);
}

/* ------------------------------------------------ flamegraph (pfc_flamegraph) ---- */

/* Names as the folded format and XML carry them. */
TEST(flamegraph_name_sanitize)
{
	char out[64];

	ASSERT_EQ(fg_name_sanitize("a;b\x01" "c", 5, out, sizeof(out), true), 5);
	ASSERT_STREQ(out, "a:b?c");
	fg_name_sanitize("a;b", 3, out, sizeof(out), false);
	ASSERT_STREQ(out, "a;b");
	/* UTF-8 stays; a stray byte, an overlong form and a surrogate do not. */
	fg_name_sanitize("caf\xc3\xa9", 5, out, sizeof(out), true);
	ASSERT_STREQ(out, "caf\xc3\xa9");
	fg_name_sanitize("\xff" "x\xc0\xaf" "y\xed\xa0\x80", 8, out, sizeof(out), true);
	ASSERT_STREQ(out, "?x??y???");
	/* Cut to fit, never inside a character. */
	ASSERT_EQ(fg_name_sanitize("ab\xc3\xa9", 4, out, 4, true), 2);
	ASSERT_STREQ(out, "ab");
}

/*
 * Folded text sorts frame by frame (';' first), so a stack's callees
 * follow it and "a b" (another frame) comes after every stack under "a";
 * equal stacks add up; a line without a count is refused with its number.
 */
TEST(flamegraph_folded_parse_sorts_frame_by_frame)
{
	static const char in[] = "a b;c 1\na;b 2\n# comment\n\na 3\r\na;b 4\n";
	struct fg_folded f;
	size_t bad = 0;
	char *text = NULL;
	size_t len = 0;
	FILE *m;

	ASSERT_EQ(fg_folded_parse(in, sizeof(in) - 1, &f, &bad), 0);
	ASSERT_EQ(f.n, 3);
	ASSERT_EQ(f.total, 10);
	m = open_memstream(&text, &len);
	ASSERT_TRUE(m != NULL);
	ASSERT_EQ(fg_folded_write(&f, m), 0);
	fclose(m);
	ASSERT_STREQ(text, "a 3\na;b 6\na b;c 1\n");
	free(text);
	fg_folded_fini(&f);
	ASSERT_EQ(fg_folded_parse("a;b 1\nno count here\n", 20, &f, &bad), -EINVAL);
	ASSERT_EQ(bad, 2);
	fg_folded_fini(&f);
}

/*
 * The SVG tree: callees at the left of their caller, the caller's own
 * samples at its right, frames in preorder, widths from the counts
 * (1180 px for 4 samples: 295 px each).
 */
TEST(flamegraph_svg_layout)
{
	static const char in[] = "a;b 2\na 1\nc_[k] 1\n";
	struct fg_svg_opts opt = {.title = "T & <t>", .width_px = 1200, .min_width_px = 0.1,
				  .count_name = "samples"};
	struct fg_folded f;
	size_t bad = 0, len = 0;
	char *svg = NULL;
	const char *a, *b, *c;
	FILE *m;

	ASSERT_EQ(fg_folded_parse(in, sizeof(in) - 1, &f, &bad), 0);
	m = open_memstream(&svg, &len);
	ASSERT_TRUE(m != NULL);
	ASSERT_EQ(fg_svg_write(&f, &opt, m), 4);
	fclose(m);
	ASSERT_TRUE(strstr(svg, ">T &amp; &lt;t&gt;</text>") != NULL);
	a = strstr(svg, "<title>a (3 samples, 75.00%)</title><rect x=\"10.00\" y=\"76\" "
			"width=\"885.00\"");
	b = strstr(svg, "<title>b (2 samples, 50.00%)</title><rect x=\"10.00\" y=\"60\" "
			"width=\"590.00\"");
	c = strstr(svg, "<title>c (1 sample, 25.00%)</title><rect x=\"895.00\" y=\"76\" "
			"width=\"295.00\"");
	ASSERT_TRUE(a != NULL && b != NULL && c != NULL);
	ASSERT_TRUE(strstr(svg, "<title>all (4 samples, 100.00%)") < a);
	ASSERT_TRUE(a < b && b < c);
	/* Kernel frames ("_[k]", shown without it) are blue. */
	ASSERT_TRUE(strstr(c, "fill=\"rgb(") != NULL);
	{
		int r = 0, g = 0, bl = 0;

		ASSERT_EQ(sscanf(strstr(c, "fill=\"rgb("), "fill=\"rgb(%d,%d,%d)", &r, &g, &bl), 3);
		ASSERT_TRUE(bl > r);
	}
	free(svg);
	fg_folded_fini(&f);
}

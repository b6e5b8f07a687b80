// SPDX-License-Identifier: Apache-2.0
/*
 * tp_fuzz.c - libFuzzer target for the trace processor's import: the input
 * is a trace file, imported by tp_import_fd() twice, from a memfd (a
 * regular file: the mapped path) and from a pipe (the read path), which
 * must fill the tables alike; then a few queries over the main tables and
 * views run through tp_sqlite() so the SQL layer reads whatever the
 * importer stored, and GROUP BY queries run both through the native path
 * (tp_prepare) and through SQLite alone, which must agree. Crashes, leaks,
 * UB, hangs and a mismatch are findings.
 */
#include <fcntl.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "trace_processor/storage/storage.h"
#include "trace_processor/trace_processor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const k_queries[] = {
	"SELECT COUNT(*) FROM sched",
	"SELECT COUNT(*) FROM thread_state",
	"SELECT COUNT(*) FROM counter",
	"SELECT COUNT(*) FROM slice",
	"SELECT COUNT(*) FROM instant",
	"SELECT COUNT(*) FROM ftrace_event",
	"SELECT COUNT(*) FROM args",
	"SELECT COUNT(*) FROM clock_snapshot",
	"SELECT COUNT(*) FROM cpu",
	"SELECT * FROM machine",
	"SELECT * FROM metadata",
	"SELECT name, idx, severity, value FROM stats WHERE value != 0",
	"SELECT start_ts, end_ts, trace_dur() FROM trace_bounds",
	"SELECT s.ts, s.dur, s.ts_end, s.cpu, s.end_state, t.tid, t.name, p.pid, p.name "
	"FROM sched s JOIN thread t USING (utid) LEFT JOIN process p USING (upid) "
	"ORDER BY s.ts LIMIT 200",
	"SELECT ts.ts, ts.dur, ts.state, ts.io_wait, t.tid, w.tid FROM thread_state ts "
	"JOIN thread t USING (utid) LEFT JOIN thread w ON w.utid = ts.waker_utid "
	"WHERE ts.utid = 1 OR ts.dur > 0 LIMIT 200",
	"SELECT p.upid, p.pid, p.cmdline, pp.pid, COUNT(t.utid) FROM process p "
	"LEFT JOIN process pp ON pp.upid = p.parent_upid "
	"LEFT JOIN thread t ON t.upid = p.upid GROUP BY p.upid LIMIT 200",
	"SELECT c.ts, c.value, t.name, t.type FROM counter c "
	"JOIN counter_track t ON t.id = c.track_id LIMIT 200",
	"SELECT e.ts, e.name, e.cpu, a.key, a.display_value FROM ftrace_event e "
	"JOIN args a USING (arg_set_id) LIMIT 200",
	"SELECT s.ts, s.dur, s.name, s.depth, t.utid FROM slice s "
	"JOIN thread_track t ON t.id = s.track_id LIMIT 200",
	/* Winscope: the layers' protos read back by the table functions. */
	"SELECT COUNT(*), MAX(layer_id) FROM __intrinsic_winscope_surfaceflinger_hierarchy_path()",
	"SELECT COUNT(*), MAX(key) FROM "
	"__intrinsic_winscope_proto_to_args_with_defaults('surfaceflinger_layers_snapshot')",
	"SELECT COUNT(*), MAX(key) FROM "
	"__intrinsic_winscope_proto_to_args_with_defaults('surfaceflinger_layer')",
};

/* Native GROUP BY vs SQLite: integer sums and order-free aggregates only
 * (double sums may round apart when rows are added in another order). */
static const char *const k_agg_queries[] = {
	"SELECT utid, SUM(dur), COUNT(*), MIN(ts), MAX(dur), AVG(dur), COUNT(end_state) "
	"FROM sched GROUP BY utid",
	"SELECT end_state, cpu, COUNT(*), TOTAL(dur) FROM sched WHERE dur >= 0 GROUP BY end_state, cpu",
	"SELECT t.upid, p.name, SUM(s.dur), COUNT(*) FROM sched s JOIN thread t USING (utid) "
	"LEFT JOIN process p USING (upid) GROUP BY t.upid",
	"SELECT p.upid, p.pid, SUM(s.dur) / 1e9 FROM sched s JOIN thread t USING (utid) "
	"JOIN process p USING (upid) WHERE t.tid != 0 GROUP BY p.upid",
	"SELECT utid, state, COUNT(*), SUM(dur) FROM thread_state GROUP BY utid, state",
	"SELECT track_id, COUNT(*), MIN(value), MAX(value), COUNT(value) FROM counter GROUP BY track_id",
	"SELECT name, COUNT(*), MAX(ts) FROM ftrace_event WHERE cpu BETWEEN 0 AND 3 GROUP BY name",
	"SELECT COUNT(*), SUM(dur), MIN(depth) FROM slice WHERE depth = 0",
	"SELECT t.name, COUNT(*) FROM slice s LEFT JOIN thread_track t ON t.id = s.track_id "
	"GROUP BY s.track_id",
};

struct text {
	char *buf;
	size_t len, cap;
	bool is_full;
};

static void text_add(struct text *t, const char *s)
{
	size_t n = strlen(s);

	if (t->is_full || t->len + n + 1 > t->cap) {
		t->is_full = true;
		return;
	}
	memcpy(t->buf + t->len, s, n + 1);
	t->len += n;
}

static int cmp_lines(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Rows of @st as sorted lines (names first) into @out. Return: false on error. */
static bool render_sorted(sqlite3_stmt *st, struct text *out)
{
	char cell[64], **lines = NULL, *copy, *p;
	size_t n = 0, cap = 0, i;
	int c, rc;
	struct text rows = {malloc(1 << 20), 0, 1 << 20, false};

	out->len = 0;
	out->is_full = false;
	if (!rows.buf)
		return false;
	rows.buf[0] = '\0';
	for (c = 0; c < sqlite3_column_count(st); c++) {
		text_add(out, sqlite3_column_name(st, c));
		text_add(out, "|");
	}
	text_add(out, "\n");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (c = 0; c < sqlite3_column_count(st); c++) {
			const char *v = (const char *)sqlite3_column_text(st, c);

			snprintf(cell, sizeof(cell), "%d:", sqlite3_column_type(st, c));
			text_add(&rows, cell);
			text_add(&rows, v ? v : "NULL");
			text_add(&rows, "|");
		}
		text_add(&rows, "\n");
	}
	copy = rows.buf;
	for (p = strtok(copy, "\n"); p; p = strtok(NULL, "\n")) {
		if (n == cap) {
			char **l = realloc(lines, (cap ? cap * 2 : 64) * sizeof(*l));

			if (!l)
				break;
			lines = l;
			cap = cap ? cap * 2 : 64;
		}
		lines[n++] = p;
	}
	if (n)
		qsort(lines, n, sizeof(*lines), cmp_lines);
	for (i = 0; i < n; i++) {
		text_add(out, lines[i]);
		text_add(out, "\n");
	}
	free(lines);
	free(rows.buf);
	return rc == SQLITE_DONE && !rows.is_full;
}

/* The native GROUP BY path and plain SQLite must give the same rows. */
static void agg_same(struct tp *tp, sqlite3 *db, const char *sql)
{
	static char a_buf[1 << 20], b_buf[1 << 20];
	struct text a = {a_buf, 0, sizeof(a_buf), false}, b = {b_buf, 0, sizeof(b_buf), false};
	sqlite3_stmt *native = NULL, *plain = NULL;
	const char *tail;
	bool ok_a, ok_b;

	if (tp_prepare(tp, sql, &native, &tail) != SQLITE_OK || !native)
		return;
	if (sqlite3_prepare_v2(db, sql, -1, &plain, NULL) != SQLITE_OK) {
		sqlite3_finalize(native);
		return;
	}
	ok_a = render_sorted(native, &a);
	ok_b = render_sorted(plain, &b);
	sqlite3_finalize(native);
	sqlite3_finalize(plain);
	if (ok_a && ok_b && !a.is_full && !b.is_full && strcmp(a.buf, b.buf) != 0) {
		fprintf(stderr, "tp_fuzz: native GROUP BY differs from SQLite for %s\n"
				"--- native\n%.2000s--- sqlite\n%.2000s", sql, a.buf, b.buf);
		abort();
	}
}

static void query(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int i;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return;
	while (sqlite3_step(st) == SQLITE_ROW)
		for (i = 0; i < sqlite3_column_count(st); i++)
			(void)sqlite3_column_text(st, i);
	sqlite3_finalize(st);
}

static bool write_all(int fd, const uint8_t *data, size_t size)
{
	size_t off = 0;

	while (off < size) {
		ssize_t n = write(fd, data + off, size - off);

		if (n <= 0)
			return false;
		off += (size_t)n;
	}
	return true;
}

/* The whole input in a memfd positioned at 0; -1 if that failed. */
static int input_memfd(const uint8_t *data, size_t size)
{
	int fd = memfd_create("tp_fuzz", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (!write_all(fd, data, size) || lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The whole input in a pipe whose write end is closed, so a reader sees
 * EOF after it; -1 if the input does not fit in the pipe's buffer.
 */
static int input_pipe(const uint8_t *data, size_t size)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	if (size > 65536 && fcntl(p[1], F_SETPIPE_SZ, (int)size) < (int)size) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (!write_all(p[1], data, size)) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	close(p[1]);
	return p[0];
}

/* Imports from @fd: the processor (NULL if it could not be created) and *out_rc. */
static struct tp *import(int fd, int *out_rc)
{
	struct tp *tp = NULL;

	*out_rc = tp_create(NULL, &tp);
	if (*out_rc < 0)
		return NULL;
	*out_rc = tp_import_fd(tp, fd, "fuzz input");
	return tp;
}

/*
 * A column flagged TP_SORTED is searched by bisection in SQL: whatever the
 * input, the importer must keep it non-decreasing. (A time of INT64_MIN
 * reads as NULL, but it sorts first, so bisection still works.)
 */
static void check_sorted(struct tp *tp)
{
	unsigned i, c;
	size_t r;

	for (i = 0; i < TP_DB_N_TABLES; i++) {
		const struct tp_table *t = tp_db_table(tp_get_db(tp), i);

		for (c = 0; c < t->n_cols; c++) {
			if (t->specs[c].type != TP_INT || !(t->specs[c].flags & TP_SORTED))
				continue;
			for (r = 1; r < t->n_rows; r++) {
				int64_t v = tp_get_int(t, c, r), prev = tp_get_int(t, c, r - 1);

				if (v >= prev)
					continue;
				fprintf(stderr, "tp_fuzz: %s.%s row %zu is %lld after %lld\n", t->name,
					t->specs[c].name, r, (long long)v, (long long)prev);
				abort();
			}
		}
	}
}

/* Both read paths must give the same tables (row counts) and the same verdict. */
static void compare(struct tp *a, int rc_a, struct tp *b, int rc_b)
{
	unsigned i;

	if (rc_a != rc_b) {
		fprintf(stderr, "tp_fuzz: mapped import returned %d, piped %d\n", rc_a, rc_b);
		abort();
	}
	if (rc_a < 0)
		return;
	for (i = 0; i < TP_DB_N_TABLES; i++) {
		const struct tp_table *x = tp_db_table(tp_get_db(a), i);
		const struct tp_table *y = tp_db_table(tp_get_db(b), i);

		if (x->n_rows != y->n_rows) {
			fprintf(stderr, "tp_fuzz: table %s has %zu rows mapped, %zu piped\n",
				x->name, x->n_rows, y->n_rows);
			abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tp *tp = NULL, *piped = NULL;
	int fd, pfd, rc = -1, rc_piped = -1;
	sqlite3 *db;
	size_t i;

	fd = input_memfd(data, size);
	if (fd < 0)
		return 0;
	tp = import(fd, &rc);
	close(fd);
	pfd = input_pipe(data, size);
	if (pfd >= 0) {
		piped = import(pfd, &rc_piped);
		close(pfd);
		if (tp && piped)
			compare(tp, rc, piped, rc_piped);
		tp_destroy(piped);
	}
	if (!tp || rc < 0)
		goto out;
	check_sorted(tp);
	db = tp_sqlite(tp);
	if (!db)
		goto out;
	for (i = 0; i < sizeof(k_queries) / sizeof(k_queries[0]); i++)
		query(db, k_queries[i]);
	for (i = 0; i < sizeof(k_agg_queries) / sizeof(k_agg_queries[0]); i++)
		agg_same(tp, db, k_agg_queries[i]);
out:
	tp_destroy(tp);
	return 0;
}

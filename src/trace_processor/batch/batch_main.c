// SPDX-License-Identifier: Apache-2.0
/*
 * batch_main.c - pfc_batch_query: the same SQL over many traces, results appended to
 * one metrics file: every .sql file of the query folders runs on every
 * trace (one worker process per core, one trace at a time each), and each
 * result row is appended with the trace's path, start and end time and
 * machine names. The workers write their results to private files; the
 * parent appends them in trace order, so a run's output does not depend
 * on which worker finished first.
 *   pfc_batch_query [-j N] -s SQL_DIR_OR_FILE... -o OUT.csv|OUT.sqlite TRACE_OR_DIR...
 * Import and query failures are reported on stderr and in the output (a
 * batch_errors table, or an "error" row in CSV); the other traces go on,
 * and the exit status is 1. With --dask ADDR the traces run on a Dask
 * cluster's workers instead (batch_dask.c), which leave the same files.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/sort.h"
#include "trace_processor/batch/batch.h"
#include "trace_processor/batch/batch_dask.h"
#include "trace_processor/batch/batch_out.h"
#include "trace_processor/batch/batch_record.h"
#include "trace_processor/trace_processor.h"

#define MAX_WORKERS 256

struct list {
	char **v;
	size_t n, cap;
};

static int list_add(struct list *l, const char *s)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		char **v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n] = strdup(s);
	if (!l->v[l->n])
		return -ENOMEM;
	l->n++;
	return 0;
}

static void list_free(struct list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Adds PATH, or the regular files in folder PATH (sorted; with @suffix,
 * only those ending in it; names starting with '.' skipped). */
static int add_path(struct list *l, const char *path, const char *suffix)
{
	struct stat st;
	struct list here = {0};
	struct dirent *e;
	DIR *d;
	size_t i;
	int rc = 0;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "pfc_batch_query: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return list_add(l, path) ? -1 : 0;
	d = opendir(path);
	if (!d) {
		fprintf(stderr, "pfc_batch_query: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		char full[4096];

		if (e->d_name[0] == '.' || (suffix && !has_suffix(e->d_name, suffix)))
			continue;
		if ((size_t)snprintf(full, sizeof(full), "%s/%s", path, e->d_name) >= sizeof(full))
			continue;
		if (stat(full, &st) == 0 && S_ISREG(st.st_mode) && list_add(&here, full)) {
			rc = -1;
			break;
		}
	}
	closedir(d);
	if (here.n)
		sort_n(here.v, here.n, sizeof(*here.v), cmp_str);
	for (i = 0; i < here.n; i++) {
		if (rc == 0 && list_add(l, here.v[i]))
			rc = -1;
		free(here.v[i]);
	}
	free(here.v);
	return rc;
}

static char *read_text(const char *path)
{
	struct buf b = BUF_INIT;
	char tmp[16384];
	size_t n;
	FILE *f = fopen(path, "re");

	if (!f)
		return NULL;
	while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0) {
		if (buf_append(&b, tmp, n)) {
			fclose(f);
			buf_fini(&b);
			return NULL;
		}
	}
	fclose(f);
	if (buf_append(&b, "", 1)) {
		buf_fini(&b);
		return NULL;
	}
	return (char *)b.data;
}

/* Runs every statement of @sql; the rows of the last one with columns are
 * the result. Writes C/R lines, or one E line on failure. */
static void run_query(struct tp *tp, size_t qi, const char *sql, FILE *res)
{
	struct buf rows = BUF_INIT;
	sqlite3 *db = tp_sqlite(tp);
	const char *tail = sql;
	char *header = NULL;
	size_t header_len = 0;
	FILE *hf;

	while (tail && *tail) {
		sqlite3_stmt *st = NULL;
		const char *next = NULL;
		FILE *rf = NULL;
		char *rbuf = NULL;
		size_t rlen = 0;
		int ncol, rc;

		if (tp_prepare(tp, tail, &st, &next) != SQLITE_OK) {
			batch_record_error(res, qi, sqlite3_errmsg(db));
			goto out;
		}
		tail = next;
		if (!st)
			continue;
		ncol = sqlite3_column_count(st);
		if (ncol > 0) {
			rf = open_memstream(&rbuf, &rlen);
			free(header);
			header = NULL;
			hf = open_memstream(&header, &header_len);
			if (!rf || !hf) {
				batch_record_error(res, qi, "out of memory");
				if (rf)
					fclose(rf);
				if (hf)
					fclose(hf);
				free(rbuf);
				sqlite3_finalize(st);
				goto out;
			}
			batch_record_columns(hf, qi, st);
			fclose(hf);
		}
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			if (rf)
				batch_record_row(rf, qi, st);
		}
		if (rf) {
			fclose(rf);
			rows.len = 0;
			buf_append(&rows, rbuf, rlen);
			free(rbuf);
		}
		if (rc != SQLITE_DONE) {
			batch_record_error(res, qi, sqlite3_errmsg(db));
			sqlite3_finalize(st);
			goto out;
		}
		sqlite3_finalize(st);
	}
	if (!header) {
		batch_record_error(res, qi, "no statement returned rows");
		goto out;
	}
	fwrite(header, 1, header_len, res);
	fwrite(rows.data, 1, rows.len, res);
out:
	free(header);
	buf_fini(&rows);
}

static const char k_meta_sql[] =
	"SELECT (SELECT start_ts FROM trace_bounds), (SELECT end_ts FROM trace_bounds), "
	"(SELECT group_concat(n, ',') FROM (SELECT COALESCE(NULLIF(name, ''), "
	"CASE WHEN raw_id = 0 THEN 'host' ELSE 'machine ' || raw_id END) AS n "
	"FROM machine ORDER BY id))";

static void run_trace(const char *path, const struct list *queries, char **texts, FILE *res)
{
	struct tp_options opt = {0};
	struct tp *tp = NULL;
	sqlite3_stmt *st = NULL;
	const char *tail;
	size_t i;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		batch_record_failed(res, strerror(errno));
		return;
	}
	if (tp_create(&opt, &tp)) {
		close(fd);
		batch_record_failed(res, "out of memory");
		return;
	}
	rc = tp_import_fd(tp, fd, path);
	close(fd);
	if (rc) {
		batch_record_failed(res, rc == -EINVAL ? "not a Perfetto trace" : strerror(-rc));
		tp_destroy(tp);
		return;
	}
	if (!tp_sqlite(tp) || tp_prepare(tp, k_meta_sql, &st, &tail) != SQLITE_OK || !st ||
	    sqlite3_step(st) != SQLITE_ROW) {
		batch_record_failed(res, "the trace's bounds cannot be read");
	} else {
		batch_record_meta(res, st);
		for (i = 0; i < queries->n; i++)
			run_query(tp, i, texts[i], res);
	}
	sqlite3_finalize(st);
	tp_destroy(tp);
}

/* A worker: takes the next trace index from the shared counter until none
 * is left; each trace's results go to DIR/<index>. */
static void worker(const struct list *traces, const struct list *queries, char **texts,
		   const char *dir, unsigned *next)
{
	for (;;) {
		unsigned i = __atomic_fetch_add(next, 1, __ATOMIC_RELAXED);
		char path[4096];
		FILE *res;

		if (i >= traces->n)
			break;
		snprintf(path, sizeof(path), "%s/%u", dir, i);
		res = fopen(path, "we");
		if (!res)
			_exit(3);
		run_trace(traces->v[i], queries, texts, res);
		batch_record_done(res);
		if (fclose(res) != 0)
			_exit(3);
	}
	_exit(0);
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: pfc_batch_query [-j N] -s SQL... -o OUT TRACE_OR_FOLDER...\n"
		"\n"
		"Runs every query on every trace and appends the results to OUT.\n"
		"\n"
		"  -s, --sql PATH     A .sql file, or a folder whose *.sql files are the\n"
		"                     queries (repeatable). A file may hold several\n"
		"                     statements; the rows of the last one that returns\n"
		"                     columns are its result. The query's name is the\n"
		"                     file name without .sql.\n"
		"  -o, --out FILE     Appended to. FILE.sqlite or FILE.db (or --format\n"
		"                     sqlite): one table per query with columns trace,\n"
		"                     trace_start_ns, trace_end_ns, machines, run_at, row\n"
		"                     and the query's own columns (added as new ones\n"
		"                     appear), and a batch_errors table. Otherwise CSV:\n"
		"                     trace,trace_start_ns,trace_end_ns,machines,run_at,\n"
		"                     query,row,result,error with the row's columns as a\n"
		"                     JSON object in result.\n"
		"      --format F     csv or sqlite (default: from OUT's name).\n"
		"  -j, --jobs N       Worker processes (default: one per CPU).\n"
		"      --dask ADDR    Run the traces on the workers of the Dask scheduler\n"
		"                     at ADDR (host:port) instead, each on a worker that\n"
		"                     can read it, through the Python module\n"
		"                     perfetto_c.batch_query_dask (python3-distributed;\n"
		"                     $PFC_PYTHON names the interpreter, $PFC_DASK_TP the\n"
		"                     workers' trace_processor_shell, else their own).\n"
		"                     A trace path missing here is given to the\n"
		"                     workers as it is (one may read it).\n"
		"  -h, --help\n"
		"\n"
		"TRACE_OR_FOLDER: trace files, or folders whose files are traces.\n"
		"Exit status: 0, or 1 if a trace or query failed (the rest is still\n"
		"written), 2 for a bad command line.\n");
}

int batch_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"sql", required_argument, NULL, 's'}, {"out", required_argument, NULL, 'o'},
		{"jobs", required_argument, NULL, 'j'}, {"format", required_argument, NULL, 'F'},
		{"help", no_argument, NULL, 'h'},      {"dask", required_argument, NULL, 'D'},
		{NULL, 0, NULL, 0},
	};
	struct list queries = {0}, traces = {0};
	const char *out = NULL, *format = NULL, *dask = NULL;
	char tmpdir[] = "/tmp/pfc_batch_query.XXXXXX";
	long jobs = sysconf(_SC_NPROCESSORS_ONLN);
	char **texts = NULL;
	unsigned *next = MAP_FAILED;
	pid_t pids[MAX_WORKERS];
	int c, status = 0, n_workers = 0, i;
	size_t k;

	while ((c = getopt_long(argc, argv, "s:o:j:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (add_path(&queries, optarg, ".sql")) {
				status = 2;
				goto out;
			}
			break;
		case 'o':
			out = optarg;
			break;
		case 'j':
			jobs = strtol(optarg, NULL, 10);
			break;
		case 'F':
			format = optarg;
			break;
		case 'D':
			dask = optarg;
			break;
		case 'h':
			usage(stdout);
			status = 0;
			goto out;
		default:
			usage(stderr);
			status = 2;
			goto out;
		}
	}
	for (i = optind; i < argc; i++) {
		/* With --dask a path missing here may be one the workers read. */
		if (dask && access(argv[i], F_OK) != 0) {
			if (list_add(&traces, argv[i])) {
				status = 1;
				goto out;
			}
			continue;
		}
		if (add_path(&traces, argv[i], NULL)) {
			status = 2;
			goto out;
		}
	}
	if (!out || queries.n == 0 || traces.n == 0 || jobs < 1) {
		fprintf(stderr, "pfc_batch_query: %s\n",
			!out ? "-o OUT is required" :
			queries.n == 0 ? "no queries (-s FILE.sql or a folder with .sql files)" :
			traces.n == 0 ? "no trace files given" : "-j must be at least 1");
		usage(stderr);
		status = 2;
		goto out;
	}
	if (format && strcmp(format, "csv") != 0 && strcmp(format, "sqlite") != 0) {
		fprintf(stderr, "pfc_batch_query: --format is csv or sqlite, not '%s'\n", format);
		status = 2;
		goto out;
	}
	if (!format)
		format = has_suffix(out, ".sqlite") || has_suffix(out, ".db") ? "sqlite" : "csv";
	if (jobs > MAX_WORKERS)
		jobs = MAX_WORKERS;
	if ((size_t)jobs > traces.n)
		jobs = (long)traces.n;

	texts = calloc(queries.n, sizeof(*texts));
	if (!texts) {
		status = 1;
		goto out;
	}
	for (k = 0; k < queries.n; k++) {
		texts[k] = read_text(queries.v[k]);
		if (!texts[k]) {
			fprintf(stderr, "pfc_batch_query: cannot read %s: %s\n", queries.v[k],
				strerror(errno));
			status = 2;
			goto out;
		}
	}
	/* The output must open before any work is done. */
	if (batch_out_check(out, format)) {
		status = 2;
		goto out;
	}
	if (!mkdtemp(tmpdir)) {
		fprintf(stderr, "pfc_batch_query: mkdtemp: %s\n", strerror(errno));
		status = 1;
		goto out;
	}
	next = mmap(NULL, sizeof(*next), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (next == MAP_FAILED) {
		fprintf(stderr, "pfc_batch_query: mmap: %s\n", strerror(errno));
		status = 1;
		goto out;
	}
	*next = 0;
	fflush(NULL);
	if (dask && batch_dask_run(dask, tmpdir, queries.v, queries.n, traces.v, traces.n) != 0) {
		fprintf(stderr, "pfc_batch_query: --dask %s: nothing written\n", dask);
		status = 1;
		goto cleanup;
	}
	for (i = 0; !dask && i < jobs; i++) {
		pid_t p = fork();

		if (p == 0)
			worker(&traces, &queries, texts, tmpdir, next);
		if (p < 0) {
			fprintf(stderr, "pfc_batch_query: fork: %s\n", strerror(errno));
			status = 1;
			break;
		}
		pids[n_workers++] = p;
	}
	for (i = 0; i < n_workers; i++) {
		int ws;

		while (waitpid(pids[i], &ws, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
			fprintf(stderr, "pfc_batch_query: a worker %s\n",
				WIFSIGNALED(ws) ? "was killed by a signal" : "failed");
			status = 1;
		}
	}
	if (batch_out_write(out, format, tmpdir, traces.v, traces.n, queries.v, queries.n) != 0)
		status = 1;
cleanup:
	for (k = 0; k < traces.n; k++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/%zu", tmpdir, k);
		unlink(path);
	}
	rmdir(tmpdir);
	munmap(next, sizeof(*next));
out:
	for (k = 0; texts && k < queries.n; k++)
		free(texts[k]);
	free(texts);
	list_free(&queries);
	list_free(&traces);
	return status;
}

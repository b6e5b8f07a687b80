// SPDX-License-Identifier: Apache-2.0
/*
 * convert.c - `trace_processor_shell convert [FLAGS] profile [TRACE]`, as
 * Perfetto's (traceconv profile): imports the trace and writes each heap
 * dump (process, dump time, heap) as a pprof profile
 * heap_dump.N.PID.HEAP.pb in --output-dir, or in a new directory
 * $TMPDIR/heap_profile-<date><5 letters>; the file is the serialized
 * profile.proto, as upstream writes it (pprof reads it as it is or
 * gzipped). Only heap profiles: perf and Java heap graphs are refused
 * with the reason.
 */
#include "trace_processor/convert/convert.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/file.h"
#include "trace_processor/convert/convert_int.h"
#include "trace_processor/trace_processor.h"

#define PROG "trace_processor_shell convert"
#define MAX_TIMESTAMPS 1024

enum { OPT_PID = 256, OPT_TIMESTAMPS, OPT_ALLOC, OPT_PERF, OPT_JAVA_HEAP, OPT_NO_ANNOTATIONS,
       OPT_OUTPUT_DIR, OPT_VERBOSE };

struct args {
	const char *format, *input, *output_dir;
	int64_t pid;
	int64_t timestamps[MAX_TIMESTAMPS];
	size_t n_timestamps;
	bool perf, java_heap, verbose;
};

static void usage(FILE *out)
{
	fputs("Usage: trace_processor_shell convert [FLAGS] profile [TRACE]\n"
	      "Writes the heap profiles of TRACE (stdin if absent or '-') as pprof\n"
	      "profiles: one file heap_dump.N.PID.HEAP.pb per process, dump and heap,\n"
	      "holding a serialized perftools.profiles.Profile (go tool pprof reads it)\n"
	      "with the total and unreleased counts and bytes of each stack.\n"
	      "  --output-dir DIR     where (default: a new $TMPDIR/heap_profile-...)\n"
	      "  --pid PID            only the dumps of process PID\n"
	      "  --timestamps T,...   only the dumps taken at these trace times\n"
	      "  --alloc              heap profiles (the only kind converted here)\n"
	      "  --no-annotations     accepted; frames carry no annotations here\n"
	      "  --verbose            say what is written\n"
	      "Other formats of Perfetto's convert (systrace, json, ctrace, text,\n"
	      "firefox) and --perf / --java-heap profiles are not converted.\n",
	      out);
}

static int parse_i64(const char *s, int64_t *out)
{
	char *end = NULL;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || !end || end == s || *end || v < 0)
		return -1;
	*out = v;
	return 0;
}

static int parse_timestamps(struct args *a, const char *s)
{
	char *copy = strdup(s), *tok, *save = NULL;
	int rc = 0;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (a->n_timestamps == MAX_TIMESTAMPS ||
		    parse_i64(tok, &a->timestamps[a->n_timestamps]) < 0) {
			rc = -1;
			break;
		}
		a->n_timestamps++;
	}
	free(copy);
	return rc;
}

/* Return: 0 to run, 1 for --help, -1 on a bad command line. */
static int parse_args(int argc, char **argv, struct args *a)
{
	static const struct option opts[] = {
		{"pid", required_argument, NULL, OPT_PID},
		{"timestamps", required_argument, NULL, OPT_TIMESTAMPS},
		{"alloc", no_argument, NULL, OPT_ALLOC},
		{"perf", no_argument, NULL, OPT_PERF},
		{"java-heap", no_argument, NULL, OPT_JAVA_HEAP},
		{"no-annotations", no_argument, NULL, OPT_NO_ANNOTATIONS},
		{"output-dir", required_argument, NULL, OPT_OUTPUT_DIR},
		{"verbose", no_argument, NULL, OPT_VERBOSE},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	memset(a, 0, sizeof(*a));
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'h': return 1;
		case OPT_PID:
			if (parse_i64(optarg, &a->pid) < 0) {
				fprintf(stderr, PROG ": --pid '%s' is not a number\n", optarg);
				return -1;
			}
			break;
		case OPT_TIMESTAMPS:
			if (parse_timestamps(a, optarg) < 0) {
				fprintf(stderr, PROG ": --timestamps '%s' is not a list of numbers\n",
					optarg);
				return -1;
			}
			break;
		case OPT_ALLOC: break;
		case OPT_PERF: a->perf = true; break;
		case OPT_JAVA_HEAP: a->java_heap = true; break;
		case OPT_NO_ANNOTATIONS: break;
		case OPT_OUTPUT_DIR: a->output_dir = optarg; break;
		case OPT_VERBOSE: a->verbose = true; break;
		default: return -1;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, PROG ": no format given\n");
		return -1;
	}
	a->format = argv[optind++];
	if (optind < argc)
		a->input = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, PROG ": profile writes into --output-dir, not '%s'\n", argv[optind]);
		return -1;
	}
	return 0;
}

static int64_t count_of(struct tp *tp, const char *sql)
{
	sqlite3_stmt *st = NULL;
	const char *tail;
	int64_t n = -1;

	if (tp_prepare(tp, sql, &st, &tail) == SQLITE_OK && st && sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

/* The output directory into @dir (made if missing). */
static int out_dir(const struct args *a, char *dir, size_t size)
{
	if (a->output_dir) {
		snprintf(dir, size, "%s", a->output_dir);
	} else {
		const char *tmp = getenv("TMPDIR");
		char when[32], rnd[6];
		time_t now = time(NULL);
		struct tm tm;
		unsigned seed = (unsigned)now ^ (unsigned)getpid();

		if (!tmp)
			tmp = getenv("TEMP");
		if (!tmp)
			tmp = "/tmp";
		localtime_r(&now, &tm);
		/* Upstream's name: the year in two digits. */
		snprintf(when, sizeof(when), "%02d%02d%02d%02d%02d%02d", tm.tm_year % 100,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
		for (int i = 0; i < 5; i++)
			rnd[i] = (char)('a' + rand_r(&seed) % 25);
		rnd[5] = '\0';
		snprintf(dir, size, "%s/heap_profile-%s%s", tmp, when, rnd);
	}
	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		fprintf(stderr, PROG ": failed to create output directory %s: %s\n", dir,
			strerror(errno));
		return -1;
	}
	return 0;
}

static bool wanted(const struct args *a, const struct pprof_dump *d)
{
	size_t i;

	if (a->pid > 0 && d->pid != a->pid)
		return false;
	if (!a->n_timestamps)
		return true;
	for (i = 0; i < a->n_timestamps; i++)
		if (a->timestamps[i] == d->ts)
			return true;
	return false;
}

/* The heap's name as a file name part: no '/', no leading '.'. */
static void file_part(const char *heap, char *out, size_t size)
{
	size_t i;

	for (i = 0; heap[i] && i + 1 < size; i++)
		out[i] = heap[i] == '/' || (i == 0 && heap[i] == '.') ? '_' : heap[i];
	out[i] = '\0';
}

static int write_file(const char *path, const struct buf *b)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0700);
	int rc;

	if (fd < 0) {
		fprintf(stderr, PROG ": failed to open %s: %s\n", path, strerror(errno));
		return -1;
	}
	rc = file_write_all(fd, b->data, b->len);
	if (close(fd) < 0 && rc >= 0)
		rc = -errno;
	if (rc < 0) {
		fprintf(stderr, PROG ": failed to write %s: %s\n", path, strerror(-rc));
		return -1;
	}
	return 0;
}

/* Warns, as upstream, about a dump that is not the whole truth. Return:
 * whether it did. */
static bool warn_stats(struct tp *tp, int64_t pid)
{
	bool warned = false;

	static const struct {
		const char *stat, *what;
	} k[] = {{"heapprofd_buffer_corrupted",
		  "ended early due to a buffer corruption. THIS IS ALWAYS A BUG IN HEAPPROFD OR "
		  "CLIENT MEMORY CORRUPTION."},
		 {"heapprofd_buffer_overran", "ended early due to a buffer overrun."},
		 {"heapprofd_rejected_concurrent", "was rejected due to a concurrent profile."}};
	char sql[256];

	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		snprintf(sql, sizeof(sql),
			 "SELECT coalesce(sum(value), 0) FROM stats WHERE name = '%s' AND idx = %" PRId64,
			 k[i].stat, pid);
		if (count_of(tp, sql) > 0) {
			fprintf(stderr, "WARNING: The profile for %" PRId64 " %s\n", pid, k[i].what);
			warned = true;
		}
	}
	return warned;
}

static int convert_profile(const struct args *a)
{
	struct tp_options opt = {0};
	struct tp *tp = NULL;
	struct pprof_stacks *stacks = NULL;
	struct buf out = BUF_INIT;
	sqlite3_stmt *st = NULL;
	const char *tail, *in = a->input ? a->input : "-";
	char dir[4096], path[4096 + 512], heap[256];
	int fd, rc = -1, idx = 0;
	int64_t n, warned_pid = -1;
	bool any_warning = false;

	if (a->perf || a->java_heap) {
		fprintf(stderr, PROG ": profile: only heap profiles (--alloc) are converted here, "
				"not %s\n", a->perf ? "perf profiles" : "Java heap graphs");
		return -1;
	}
	fd = strcmp(in, "-") == 0 ? STDIN_FILENO : open(in, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, PROG ": cannot open trace file '%s': %s\n", in, strerror(errno));
		return -1;
	}
	rc = tp_create(&opt, &tp);
	if (rc == 0)
		rc = tp_import_fd(tp, fd, fd == STDIN_FILENO ? "stdin" : in);
	if (fd != STDIN_FILENO)
		close(fd);
	if (rc < 0 || !tp_sqlite(tp)) {
		fprintf(stderr, PROG ": failed to read trace '%s': %s\n", in, strerror(-rc));
		rc = -1;
		goto done;
	}
	rc = -1;
	n = count_of(tp, "SELECT count(*) FROM heap_profile_allocation");
	if (n <= 0) {
		fprintf(stderr, PROG ": profile: %s\n",
			count_of(tp, "SELECT count(*) FROM perf_sample") > 0
				? "the trace has perf samples and no heap profile: only heap "
				  "profiles are converted here"
				: "no profile found in the trace");
		goto done;
	}
	if (pprof_stacks_load(tp, &stacks) < 0) {
		fprintf(stderr, PROG ": cannot read the callstacks\n");
		goto done;
	}
	if (tp_prepare(tp,
		       "SELECT DISTINCT hpa.upid, hpa.ts, p.pid, hpa.heap_name "
		       "FROM heap_profile_allocation hpa, process p WHERE p.upid = hpa.upid",
		       &st, &tail) != SQLITE_OK || !st) {
		fprintf(stderr, PROG ": cannot list the heap dumps\n");
		goto done;
	}
	dir[0] = '\0';
	while (sqlite3_step(st) == SQLITE_ROW) {
		struct pprof_dump d;
		const char *h = (const char *)sqlite3_column_text(st, 3);

		d.upid = sqlite3_column_int64(st, 0);
		d.ts = sqlite3_column_int64(st, 1);
		d.pid = sqlite3_column_int64(st, 2);
		snprintf(d.heap, sizeof(d.heap), "%s", h ? h : "");
		if (!wanted(a, &d))
			continue;
		if (!dir[0] && out_dir(a, dir, sizeof(dir)) < 0)
			goto done;
		if (d.pid != warned_pid && warn_stats(tp, d.pid))
			any_warning = true;
		warned_pid = d.pid;
		buf_reset(&out);
		if (pprof_heap_dump(tp, stacks, &d, &out) < 0) {
			fprintf(stderr, PROG ": cannot build the profile of pid %" PRId64 "\n", d.pid);
			goto done;
		}
		file_part(d.heap, heap, sizeof(heap));
		snprintf(path, sizeof(path), "%s/heap_dump.%d.%" PRId64 ".%s.pb", dir, ++idx, d.pid,
			 heap);
		if (write_file(path, &out) < 0)
			goto done;
		if (a->verbose)
			fprintf(stderr, "%s: %zu bytes\n", path, out.len);
	}
	if (any_warning)
		fprintf(stderr, "One or more of your profiles had an issue. Please consult "
				"https://perfetto.dev/docs/data-sources/"
				"native-heap-profiler#troubleshooting\n");
	if (dir[0])
		fprintf(stderr, "Wrote profiles to %s\n", dir);
	rc = 0;
done:
	sqlite3_finalize(st);
	pprof_stacks_free(stacks);
	buf_fini(&out);
	tp_destroy(tp);
	return rc;
}

int tp_convert_main(int argc, char **argv)
{
	struct args a;

	switch (parse_args(argc, argv, &a)) {
	case 1: usage(stdout); return 0;
	case 0: break;
	default: usage(stderr); return 1;
	}
	if (strcmp(a.format, "profile") != 0) {
		fprintf(stderr, PROG ": format '%s' is not converted by this trace processor "
				"(only profile)\n", a.format);
		return 1;
	}
	return convert_profile(&a) < 0 ? 1 : 0;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * cli.c - pfc_flamegraph's command line: parses the options, imports the
 * trace (or reads folded stacks), has select.c count the chosen samples
 * and fold.c fold them, and writes the folded text and/or the SVG of
 * svg.c. Says clearly why when there is nothing to draw. Called from
 * main.c only; one trace, one thread, blocking stdio.
 */
#include "trace_processor/flamegraph/flamegraph.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/file.h"
#include "base/version.h"
#include "trace_processor/flamegraph/flamegraph_int.h"
#include "trace_processor/trace_processor.h"

/* Largest --from-folded file read into memory. */
#define FG_MAX_FOLDED_BYTES (1ull << 30)
#define FG_MAX_WIDTH_PX     100000

enum {
	OPT_PID = 256,
	OPT_TID,
	OPT_UTID,
	OPT_PROCESS_NAME,
	OPT_THREAD_NAME,
	OPT_START,
	OPT_END,
	OPT_SQL,
	OPT_SVG,
	OPT_PER_PROCESS,
	OPT_PER_THREAD,
	OPT_ANNOTATE_KERNEL,
	OPT_WEIGHT,
	OPT_TITLE,
	OPT_WIDTH,
	OPT_MIN_WIDTH,
	OPT_FROM_FOLDED,
	OPT_STATS,
	OPT_REVERSE,
	OPT_HEAP,
};

static struct {
	const char *trace_path;
	const char *folded_path;
	const char *svg_path;
	const char *from_folded;
	const char *title;
	unsigned width_px;
	double min_width_px;
	bool stats;
	struct fg_selection sel;
	struct fg_fold_opts fold;
	struct buf desc; /* the selection options as given, for messages */
} g_args;

static void usage(FILE *out)
{
	fputs("Usage: " FG_PROG " [OPTIONS] TRACE\n"
	      "       " FG_PROG " --from-folded FILE --svg OUT.svg [--title TEXT]\n"
	      "Folds the CPU samples of a Perfetto trace (linux.perf, the perf_sample\n"
	      "table), or with --heap its heap profile, into stacks: folded text, one\n"
	      "\"root;caller;...;leaf COUNT\" line per distinct stack as flamegraph.pl\n"
	      "and similar tools read it, and/or a\n"
	      "self-contained SVG flame graph to open in a browser (click a frame to\n"
	      "zoom, Search or Ctrl-F to highlight, Escape to reset). TRACE '-' is stdin.\n"
	      "\n"
	      "Which samples (all by default; the values of one option are OR-ed, the\n"
	      "options AND-ed; each may be repeated):\n"
	      "  --pid PID             of process PID\n"
	      "  --tid TID             of thread TID\n"
	      "  --utid UTID           of the trace processor's thread UTID\n"
	      "  --process-name GLOB   of processes whose name matches GLOB (SQLite GLOB:\n"
	      "                        * and ?, case-sensitive; no wildcard = exact)\n"
	      "  --thread-name GLOB    of threads whose name matches GLOB\n"
	      "  --start TIME          at or after TIME\n"
	      "  --end TIME            before TIME. TIME is a trace timestamp in ns, or\n"
	      "                        N[.N] with a unit ns, us, ms or s; +TIME counts\n"
	      "                        from the first timestamp of the trace, -TIME back\n"
	      "                        from its last (--start -2s: the last two seconds)\n"
	      "  --sql QUERY           the samples of QUERY's rows: with a callsite_id\n"
	      "                        column, each row is one sample of that leaf callsite\n"
	      "                        (and of the thread of a utid column, weighing a\n"
	      "                        weight column if any); otherwise an id column names\n"
	      "                        perf_sample rows, which the options above narrow\n"
	      "\n"
	      "What to write (folded text on stdout if neither is given):\n"
	      "  -o, --folded FILE     folded stacks into FILE ('-': stdout), sorted frame\n"
	      "                        by frame\n"
	      "  --svg FILE            an SVG flame graph into FILE ('-': stdout)\n"
	      "  --per-process         stacks start with a frame PROCESS-PID\n"
	      "  --per-thread          stacks start with PROCESS-PID;THREAD-TID\n"
	      "  --annotate-kernel     kernel frames end in _[k] in the folded text (the SVG\n"
	      "                        always draws them in blue)\n"
	      "  --reverse             stacks from the leaf to the root (after the\n"
	      "                        process/thread frames): who calls the hot functions\n"
	      "  --heap[=WHAT]         a heap profile (heapprofd: heap_profile_allocation)\n"
	      "                        instead of CPU samples, in bytes per stack: WHAT is\n"
	      "                        unreleased (default: allocated and not freed by the\n"
	      "                        end of the window) or allocated (all allocations,\n"
	      "                        freed or not). Takes --pid, --process-name, --start,\n"
	      "                        --end (dump times) and --per-process\n"
	      "  --weight WHAT         samples (default: each sample counts 1) or timebase\n"
	      "                        (each sample weighs its timebase count: ns of\n"
	      "                        cpu-clock, cycles, ...)\n"
	      "  --title TEXT          the SVG's title (default \"Flame Graph\")\n"
	      "  --width PX            the SVG's width (default 1200)\n"
	      "  --min-width PX        leave out frames narrower than PX (default 0.1)\n"
	      "  --from-folded FILE    draw folded stacks read from FILE ('-': stdin)\n"
	      "                        instead of a trace's samples\n"
	      "  --stats               print the samples, stacks and time of each step on\n"
	      "                        stderr\n"
	      "  -h, --help            this text;  -v, --version  the version\n"
	      "\n"
	      "Frames are named by their function (deobfuscated if known); an unnamed frame\n"
	      "is MODULE+0xREL_PC (MODULE: the file name of its mapping) or [unknown]\n"
	      "without one. In names ';' becomes ':', control bytes and bytes that are not\n"
	      "UTF-8 '?'. Samples without a callstack are left out (a note says how many).\n"
	      "Exit status: 0, or 1 on an error or when no sample has a stack to show.\n"
	      "Example: " FG_PROG " --pid 1234 --start +1s --end +3s --svg app.svg trace.pftrace\n",
	      out);
}

/* Adds " --NAME VALUE" to the description of the selection. */
static void describe(const char *name, const char *value)
{
	buf_appendf(&g_args.desc, "%s--%s %s", g_args.desc.len ? " " : "", name, value);
}

static int add_int(int64_t *list, size_t *n, const char *name, const char *v)
{
	int64_t x;

	if (*n == FG_MAX_FILTERS) {
		fprintf(stderr, FG_PROG ": at most %d --%s options\n", FG_MAX_FILTERS, name);
		return -1;
	}
	if (sv_parse_i64(sv_from_cstr(v), 0, INT64_MAX, &x) < 0) {
		fprintf(stderr, FG_PROG ": --%s '%s' is not a number\n", name, v);
		return -1;
	}
	list[(*n)++] = x;
	describe(name, v);
	return 0;
}

static int add_str(const char **list, size_t *n, const char *name, const char *v)
{
	if (*n == FG_MAX_FILTERS) {
		fprintf(stderr, FG_PROG ": at most %d --%s options\n", FG_MAX_FILTERS, name);
		return -1;
	}
	list[(*n)++] = v;
	describe(name, v);
	return 0;
}

enum parse_result { PARSE_RUN, PARSE_HELP, PARSE_VERSION, PARSE_ERROR };

static int parse_opt(int c)
{
	struct fg_selection *s = &g_args.sel;
	uint64_t v;

	switch (c) {
	case OPT_PID: return add_int(s->pids, &s->n_pids, "pid", optarg);
	case OPT_TID: return add_int(s->tids, &s->n_tids, "tid", optarg);
	case OPT_UTID: return add_int(s->utids, &s->n_utids, "utid", optarg);
	case OPT_PROCESS_NAME:
		return add_str(s->process_names, &s->n_process_names, "process-name", optarg);
	case OPT_THREAD_NAME:
		return add_str(s->thread_names, &s->n_thread_names, "thread-name", optarg);
	case OPT_START:
		s->start = optarg;
		describe("start", optarg);
		return 0;
	case OPT_END:
		s->end = optarg;
		describe("end", optarg);
		return 0;
	case OPT_SQL:
		s->sql = optarg;
		describe("sql", "QUERY");
		return 0;
	case 'o': g_args.folded_path = optarg; return 0;
	case OPT_SVG: g_args.svg_path = optarg; return 0;
	case OPT_PER_PROCESS: g_args.fold.group = FG_GROUP_PROCESS; return 0;
	case OPT_PER_THREAD: g_args.fold.group = FG_GROUP_THREAD; return 0;
	case OPT_ANNOTATE_KERNEL: g_args.fold.annotate_kernel = true; return 0;
	case OPT_REVERSE: g_args.fold.reverse = true; return 0;
	case OPT_WEIGHT:
		if (strcmp(optarg, "samples") == 0 || strcmp(optarg, "timebase") == 0) {
			s->weight_timebase = optarg[0] == 't';
			return 0;
		}
		fprintf(stderr, FG_PROG ": --weight is samples or timebase, not '%s'\n", optarg);
		return -1;
	case OPT_HEAP:
		if (!optarg || strcmp(optarg, "unreleased") == 0) {
			s->heap = FG_HEAP_UNRELEASED;
			return 0;
		}
		if (strcmp(optarg, "allocated") == 0) {
			s->heap = FG_HEAP_ALLOCATED;
			return 0;
		}
		fprintf(stderr, FG_PROG ": --heap is unreleased or allocated, not '%s'\n", optarg);
		return -1;
	case OPT_TITLE: g_args.title = optarg; return 0;
	case OPT_WIDTH:
		if (sv_parse_u64(sv_from_cstr(optarg), FG_MAX_WIDTH_PX, &v) < 0 || v < 100) {
			fprintf(stderr, FG_PROG ": --width is 100 to %d pixels\n", FG_MAX_WIDTH_PX);
			return -1;
		}
		g_args.width_px = (unsigned)v;
		return 0;
	case OPT_MIN_WIDTH: {
		char *end = NULL;

		g_args.min_width_px = strtod(optarg, &end);
		if (!end || *end || end == optarg || !(g_args.min_width_px >= 0) ||
		    g_args.min_width_px > 1000) {
			fprintf(stderr, FG_PROG ": --min-width is 0 to 1000 pixels\n");
			return -1;
		}
		return 0;
	}
	case OPT_FROM_FOLDED: g_args.from_folded = optarg; return 0;
	case OPT_STATS: g_args.stats = true; return 0;
	default: return -1;
	}
}

static enum parse_result parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{"pid", required_argument, NULL, OPT_PID},
		{"tid", required_argument, NULL, OPT_TID},
		{"utid", required_argument, NULL, OPT_UTID},
		{"process-name", required_argument, NULL, OPT_PROCESS_NAME},
		{"thread-name", required_argument, NULL, OPT_THREAD_NAME},
		{"start", required_argument, NULL, OPT_START},
		{"end", required_argument, NULL, OPT_END},
		{"sql", required_argument, NULL, OPT_SQL},
		{"folded", required_argument, NULL, 'o'},
		{"svg", required_argument, NULL, OPT_SVG},
		{"per-process", no_argument, NULL, OPT_PER_PROCESS},
		{"per-thread", no_argument, NULL, OPT_PER_THREAD},
		{"annotate-kernel", no_argument, NULL, OPT_ANNOTATE_KERNEL},
		{"weight", required_argument, NULL, OPT_WEIGHT},
		{"title", required_argument, NULL, OPT_TITLE},
		{"width", required_argument, NULL, OPT_WIDTH},
		{"min-width", required_argument, NULL, OPT_MIN_WIDTH},
		{"from-folded", required_argument, NULL, OPT_FROM_FOLDED},
		{"stats", no_argument, NULL, OPT_STATS},
		{"reverse", no_argument, NULL, OPT_REVERSE},
		{"heap", optional_argument, NULL, OPT_HEAP},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'v'},
		{NULL, 0, NULL, 0},
	};
	int c;

	g_args.title = "Flame Graph";
	g_args.width_px = 1200;
	g_args.min_width_px = 0.1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "ho:v", opts, NULL)) != -1) {
		if (c == 'h')
			return PARSE_HELP;
		if (c == 'v')
			return PARSE_VERSION;
		if (c == '?' || parse_opt(c) < 0)
			return PARSE_ERROR;
	}
	if (g_args.from_folded) {
		if (optind != argc || g_args.desc.len || g_args.sel.weight_timebase ||
		    g_args.sel.heap) {
			fprintf(stderr,
				FG_PROG ": --from-folded takes no trace and no selection\n");
			return PARSE_ERROR;
		}
		return PARSE_RUN;
	}
	if (g_args.sel.heap && g_args.fold.group == FG_GROUP_THREAD) {
		fprintf(stderr, FG_PROG ": --heap draws per process, not per thread\n");
		return PARSE_ERROR;
	}
	if (optind + 1 != argc) {
		fprintf(stderr, FG_PROG ": %s\n",
			optind == argc ? "no trace file given" : "more than one trace file given");
		return PARSE_ERROR;
	}
	g_args.trace_path = argv[optind];
	return PARSE_RUN;
}

/* Opens @path for writing ('-': stdout); prints why not. */
static FILE *open_out(const char *path)
{
	FILE *f;

	if (strcmp(path, "-") == 0)
		return stdout;
	f = fopen(path, "we");
	if (!f)
		fprintf(stderr, FG_PROG ": cannot write '%s': %s\n", path, strerror(errno));
	return f;
}

static int close_out(FILE *f, const char *path)
{
	int bad = ferror(f) != 0;

	if (f == stdout)
		bad |= fflush(f) != 0;
	else
		bad |= fclose(f) != 0;
	if (bad)
		fprintf(stderr, FG_PROG ": writing '%s' failed\n", path);
	return bad ? -1 : 0;
}

/* What the weights count: "samples", or "<the timebase counter's name> counts". */
static void count_name(struct tp *tp, char *out, size_t size)
{
	sqlite3_stmt *st = NULL;
	const char *name = NULL;

	snprintf(out, size, g_args.sel.heap ? "bytes" : "samples");
	if (!g_args.sel.weight_timebase)
		return;
	snprintf(out, size, "timebase counts");
	if (fg_prepare(tp, "SELECT DISTINCT name FROM perf_counter_track WHERE is_timebase", &st) <
	    0)
		return;
	if (sqlite3_step(st) == SQLITE_ROW)
		name = (const char *)sqlite3_column_text(st, 0);
	if (name && sqlite3_step(st) == SQLITE_DONE)
		snprintf(out, size, "%.100s counts", name);
	sqlite3_finalize(st);
}

/* The trace's samples: imports it, selects and checks there is something to show. */
static int samples_of_trace(struct tp **out_tp, struct fg_counts *counts, uint64_t *out_import_ns)
{
	struct tp_options opt = {0};
	const char *path = g_args.trace_path;
	char why[512];
	int64_t n_trace = 0;
	int fd, rc;

	fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, FG_PROG ": cannot open trace file '%s': %s\n", path,
			strerror(errno));
		return -1;
	}
	*out_import_ns = clock_monotonic_ns();
	rc = tp_create(&opt, out_tp);
	if (rc == 0)
		rc = tp_import_fd(*out_tp, fd, fd == STDIN_FILENO ? "stdin" : path);
	*out_import_ns = clock_monotonic_ns() - *out_import_ns;
	if (fd != STDIN_FILENO)
		fd_close(fd);
	if (rc < 0) {
		fprintf(stderr, FG_PROG ": cannot import '%s': %s\n", path, strerror(-rc));
		return -1;
	}
	if (!tp_sqlite(*out_tp) ||
	    (g_args.sel.heap ? fg_trace_heap_count(*out_tp, &n_trace)
			     : fg_trace_sample_count(*out_tp, &n_trace)) < 0) {
		fprintf(stderr, FG_PROG ": cannot query '%s'\n", path);
		return -1;
	}
	if (n_trace == 0 && g_args.sel.heap) {
		fprintf(stderr,
			FG_PROG ": '%s' has no heap profile (no heap_profile_allocation rows): "
				"record it with the android.heapprofd data source\n",
			path);
		return -1;
	}
	if (n_trace == 0) {
		int64_t n_heap = 0;

		fg_trace_heap_count(*out_tp, &n_heap);
		fprintf(stderr,
			FG_PROG ": '%s' has no CPU samples (no perf_sample rows): record it with "
				"the linux.perf data source%s\n",
			path, n_heap > 0 ? " (it has a heap profile: try --heap)" : "");
		return -1;
	}
	rc = fg_select(*out_tp, &g_args.sel, g_args.fold.group, counts, why, sizeof(why));
	if (rc < 0) {
		fprintf(stderr, FG_PROG ": %s\n", why[0] ? why : strerror(-rc));
		return -1;
	}
	if (g_args.sel.heap && counts->weight_total == 0) {
		fprintf(stderr,
			FG_PROG ": no %s bytes match the selection (%s); the trace has %" PRId64
				" heap_profile_allocation rows\n",
			g_args.sel.heap == FG_HEAP_ALLOCATED ? "allocated" : "unreleased",
			g_args.desc.len ? buf_cstr(&g_args.desc) : "all", n_trace);
		return -1;
	}
	if (counts->n_samples == 0) {
		fprintf(stderr,
			FG_PROG ": no samples match the selection (%s); the trace has %" PRId64
				" samples\n",
			buf_cstr(&g_args.desc), n_trace);
		return -1;
	}
	if (counts->n_no_stack == counts->n_samples) {
		fprintf(stderr,
			FG_PROG ": none of the %" PRIu64 " selected samples has a callstack\n",
			counts->n_samples);
		return -1;
	}
	if (counts->n_no_stack)
		fprintf(stderr,
			FG_PROG ": note: %" PRIu64 " of the %" PRIu64
				" selected samples have no callstack and are left out\n",
			counts->n_no_stack, counts->n_samples);
	if (counts->weight_total == 0) {
		fprintf(stderr, FG_PROG ": the selected samples have no timebase counts\n");
		return -1;
	}
	return 0;
}

/* Return: the frames drawn, or -1. */
/* @v with thousands separators ("1,000,000") into @out. */
static const char *with_commas(uint64_t v, char *out, size_t size)
{
	char digits[32];
	int n = snprintf(digits, sizeof(digits), "%" PRIu64, v), i;
	size_t o = 0;

	for (i = 0; i < n && o + 2 < size; i++) {
		if (i && (n - i) % 3 == 0)
			out[o++] = ',';
		out[o++] = digits[i];
	}
	out[o] = '\0';
	return out;
}

static int write_svg(const struct fg_folded *f, const char *unit, const char *subtitle)
{
	struct fg_svg_opts so = {.title = g_args.title,
				 .subtitle = subtitle,
				 .width_px = g_args.width_px,
				 .min_width_px = g_args.min_width_px,
				 .count_name = unit};
	FILE *out = open_out(g_args.svg_path);
	int rc;

	if (!out)
		return -1;
	so.group_levels = g_args.fold.group == FG_GROUP_THREAD    ? 2
			  : g_args.fold.group == FG_GROUP_PROCESS ? 1
								  : 0;
	rc = fg_svg_write(f, &so, out);
	if (rc < 0)
		fprintf(stderr, FG_PROG ": cannot draw '%s': %s\n", g_args.svg_path, strerror(-rc));
	return close_out(out, g_args.svg_path) < 0 || rc < 0 ? -1 : rc;
}

static int write_folded(const struct fg_folded *f)
{
	const char *path = g_args.folded_path ? g_args.folded_path : "-";
	FILE *out = open_out(path);

	if (!out)
		return -1;
	fg_folded_write(f, out);
	return close_out(out, path);
}

static int run_folded_file(void)
{
	struct buf in = BUF_INIT;
	struct fg_folded f = {0};
	size_t bad = 0;
	int rc = -1, n;

	n = strcmp(g_args.from_folded, "-") == 0
		    ? file_read_all("/dev/stdin", &in, FG_MAX_FOLDED_BYTES)
		    : file_read_all(g_args.from_folded, &in, FG_MAX_FOLDED_BYTES);
	if (n < 0) {
		fprintf(stderr, FG_PROG ": cannot read '%s': %s\n", g_args.from_folded,
			strerror(-n));
		goto out;
	}
	n = fg_folded_parse((const char *)in.data, in.len, &f, &bad);
	if (n == -EINVAL) {
		fprintf(stderr,
			FG_PROG ": %s:%zu: not a folded stack (\"frame;frame;... COUNT\")\n",
			g_args.from_folded, bad);
		goto out;
	}
	if (n < 0 || f.n == 0) {
		fprintf(stderr, FG_PROG ": %s: %s\n", g_args.from_folded,
			n < 0 ? strerror(-n) : "no stacks");
		goto out;
	}
	if (g_args.svg_path && write_svg(&f, "samples", NULL) < 0)
		goto out;
	if ((g_args.folded_path || !g_args.svg_path) && write_folded(&f) < 0)
		goto out;
	rc = 0;
out:
	fg_folded_fini(&f);
	buf_fini(&in);
	return rc;
}

static int run_trace(void)
{
	struct tp *tp = NULL;
	struct fg_counts counts = {0};
	struct fg_folded folded = {0}, drawn = {0};
	struct fg_fold_opts svg_fold = g_args.fold;
	const char *base = strcmp(g_args.trace_path, "-") == 0 ? "/stdin"
							     : strrchr(g_args.trace_path, '/');
	char unit[128], subtitle[1024], total[32];
	uint64_t import_ns = 0, t0 = 0, select_ns = 0, fold_ns = 0, svg_ns = 0;
	bool want_folded = g_args.folded_path || !g_args.svg_path;
	int rc = -1, n_frames = 0;

	hmap_init(&counts.by_key);
	t0 = clock_monotonic_ns();
	if (samples_of_trace(&tp, &counts, &import_ns) < 0)
		goto out;
	select_ns = clock_monotonic_ns() - t0 - import_ns;
	count_name(tp, unit, sizeof(unit));
	t0 = clock_monotonic_ns();
	if (want_folded && (rc = fg_fold(tp, &counts, &g_args.fold, &folded)) < 0)
		goto fold_failed;
	fold_ns = clock_monotonic_ns() - t0;
	if (g_args.svg_path) {
		t0 = clock_monotonic_ns();
		/* The SVG colours kernel frames by their "_[k]". */
		svg_fold.annotate_kernel = true;
		rc = fg_fold(tp, &counts, &svg_fold, &drawn);
		if (rc < 0)
			goto fold_failed;
		snprintf(subtitle, sizeof(subtitle), "%s: %s %s%s%s",
			 base ? base + 1 : g_args.trace_path,
			 with_commas(drawn.total, total, sizeof(total)), unit,
			 g_args.desc.len ? ", " : "",
			 g_args.desc.len ? buf_cstr(&g_args.desc) : "");
		n_frames = write_svg(&drawn, unit, subtitle);
		rc = -1;
		if (n_frames < 0)
			goto out;
		svg_ns = clock_monotonic_ns() - t0;
	}
	rc = -1;
	if (want_folded && write_folded(&folded) < 0)
		goto out;
	if (g_args.stats) {
		fprintf(stderr,
			FG_PROG ": stats: import %.3f s; select %.3f s (%" PRIu64
				" samples, %" PRIu64 " without a callstack, %zu distinct leaves)",
			(double)import_ns / 1e9, (double)select_ns / 1e9, counts.n_samples,
			counts.n_no_stack, hmap_len(&counts.by_key));
		if (want_folded)
			fprintf(stderr, "; fold %.3f s (%zu stacks)", (double)fold_ns / 1e9,
				folded.n);
		if (g_args.svg_path)
			fprintf(stderr, "; svg %.3f s (%zu stacks, %d frames)",
				(double)svg_ns / 1e9, drawn.n, n_frames);
		fputc('\n', stderr);
	}
	rc = 0;
	goto out;
fold_failed:
	fprintf(stderr, FG_PROG ": cannot read the stacks: %s\n", strerror(-rc));
	rc = -1;
out:
	fg_folded_fini(&folded);
	fg_folded_fini(&drawn);
	fg_counts_fini(&counts);
	tp_destroy(tp);
	return rc;
}

int tp_flamegraph_main(int argc, char **argv)
{
	int rc;

	buf_init(&g_args.desc);
	switch (parse_args(argc, argv)) {
	case PARSE_HELP:
		usage(stdout);
		rc = 0;
		break;
	case PARSE_VERSION:
		printf("%s\n", PFC_VERSION_STRING);
		rc = 0;
		break;
	case PARSE_ERROR:
		fprintf(stderr, "Try '" FG_PROG " --help'.\n");
		rc = 1;
		break;
	default: rc = (g_args.from_folded ? run_folded_file() : run_trace()) < 0 ? 1 : 0; break;
	}
	buf_fini(&g_args.desc);
	return rc;
}

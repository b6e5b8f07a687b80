// SPDX-License-Identifier: Apache-2.0
/*
 * shell.c - trace_processor_shell: Perfetto's classic flat command line
 * over the trace processor library. It imports one trace (a file, or '-'
 * for stdin), runs -q/-Q SQL and prints each statement's result as CSV
 * byte for byte like Perfetto (the diff tests compare it), exports every
 * table and view into a SQLite file (-e) and runs a libedit REPL (-i).
 * Called from cli.c only; one trace, one thread, blocking stdio.
 */
#include <editline/readline.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/compiler.h"
#include "base/file.h"
#include "base/sort.h"
#include "base/version.h"
#include "trace_processor/shell/shell_int.h"
#include "trace_processor/shell/subcommand.h"
#include "trace_processor/storage/storage.h"
#include "trace_processor/trace_processor.h"

#define PROG "trace_processor_shell"

/* Largest -q file read into memory. */
#define TP_SHELL_MAX_QUERY_BYTES (64u << 20)
/* Interactive tables take their column widths from this many leading rows. */
#define TP_SHELL_SAMPLE_ROWS 1000
/* Interactive cells wider than this are cut, unless -W. */
#define TP_SHELL_MAX_COL_WIDTH 40
#define TP_SHELL_HISTORY_LEN 1000
/* The schema name the export database is attached under. */
#define TP_SHELL_EXPORT_SCHEMA "perfetto_export"

enum {
	OPT_FULL_SORT = 256,
	OPT_NO_FTRACE_RAW,
	OPT_ANALYZE_CONTENT,
	OPT_CROP_TRACK_EVENTS,
	OPT_ADD_SQL_PACKAGE,
	OPT_OVERRIDE_SQL_PACKAGE,
	OPT_OVERRIDE_STDLIB,
	OPT_DEV,
	OPT_DEV_FLAG,
	OPT_LIST_MODULES,
	OPT_HTTP_PORT,
	OPT_HTTP_IP,
	OPT_HTTP_CORS,
	OPT_STDIOD,
	OPT_UNIXD,
	OPT_UNIXD_NAME,
	OPT_UNIXD_IDLE_MS,
	OPT_UNIXD_IDLE_START,
	OPT_UNIXD_DAEMONIZE,
	OPT_IGNORED,
	OPT_METRICS,
};

/* Most --add-sql-package and --override-sql-package flags of one command. */
#define TP_SHELL_MAX_PACKAGES 64

static struct {
	const char *trace_path;
	const char *query_file;
	const char *query_string;
	const char *export_path;
	const char *perf_path;
	bool interactive;
	bool full_sort;
	bool no_ftrace_raw;
	bool analyze_content;
	bool crop_track_events;
	bool wide;
	bool httpd;
	struct shell_httpd http;
	const char *add_pkgs[TP_SHELL_MAX_PACKAGES];
	const char *override_pkgs[TP_SHELL_MAX_PACKAGES];
	struct shell_sql_packages packages;
} g_args;

static const struct option k_options[] = {
	{"query-file", required_argument, NULL, 'q'},
	{"query-string", required_argument, NULL, 'Q'},
	{"query", required_argument, NULL, 'Q'},
	{"interactive", no_argument, NULL, 'i'},
	{"export", required_argument, NULL, 'e'},
	{"perf-file", required_argument, NULL, 'p'},
	{"wide", no_argument, NULL, 'W'},
	{"full-sort", no_argument, NULL, OPT_FULL_SORT},
	{"version", no_argument, NULL, 'v'},
	{"help", no_argument, NULL, 'h'},
	/* Perfetto's diff tests pass these; they change nothing here. */
	{"analyze-trace-proto-content", no_argument, NULL, OPT_ANALYZE_CONTENT},
	{"crop-track-events", no_argument, NULL, OPT_CROP_TRACK_EVENTS},
	{"extra-checks", no_argument, NULL, OPT_IGNORED},
	{"no-ftrace-raw", no_argument, NULL, OPT_NO_FTRACE_RAW},
	{"dev", no_argument, NULL, OPT_DEV},
	{"dev-flag", required_argument, NULL, OPT_DEV_FLAG},
	{"allow-sql-file-access", no_argument, NULL, OPT_IGNORED},
	{"add-sql-package", required_argument, NULL, OPT_ADD_SQL_PACKAGE},
	{"override-sql-package", required_argument, NULL, OPT_OVERRIDE_SQL_PACKAGE},
	{"override-stdlib", required_argument, NULL, OPT_OVERRIDE_STDLIB},
	{"list-modules", no_argument, NULL, OPT_LIST_MODULES},
	{"httpd", no_argument, NULL, 'D'},
	{"stdiod", no_argument, NULL, OPT_STDIOD},
	{"unixd", required_argument, NULL, OPT_UNIXD},
	{"unixd-name", required_argument, NULL, OPT_UNIXD_NAME},
	{"unixd-idle-ms", required_argument, NULL, OPT_UNIXD_IDLE_MS},
	{"unixd-idle-start", required_argument, NULL, OPT_UNIXD_IDLE_START},
	{"unixd-daemonize", no_argument, NULL, OPT_UNIXD_DAEMONIZE},
	{"http-port", required_argument, NULL, OPT_HTTP_PORT},
	{"http-ip-address", required_argument, NULL, OPT_HTTP_IP},
	{"http-additional-cors-origins", required_argument, NULL, OPT_HTTP_CORS},
	/* Upstream's metrics, not here yet: refused with the reason. */
	{"run-metrics", required_argument, NULL, OPT_METRICS},
	{"metrics-output", required_argument, NULL, OPT_METRICS},
	{"pre-metrics", required_argument, NULL, OPT_METRICS},
	{"metric-extension", required_argument, NULL, OPT_METRICS},
	{NULL, 0, NULL, 0},
};

/* Width of the module list of --help, and of its name column. */
#define TP_SHELL_HELP_WIDTH 100
#define TP_SHELL_HELP_NAME 34

/* One line of the module list of --help: the name, the summary cut to fit. */
static void print_module(void *ctx, const char *name, const char *summary)
{
	FILE *f = ctx;
	int pad = TP_SHELL_HELP_NAME - (int)strlen(name), room;
	size_t n = strlen(summary), cut;

	if (strncmp(name, "prelude.", 8) == 0)
		return; /* always there, never included */
	if (pad < 2)
		pad = 2;
	room = TP_SHELL_HELP_WIDTH - 2 - (int)strlen(name) - pad;
	if (room < 20)
		room = 20;
	if (n <= (size_t)room) {
		fprintf(f, "  %s%*s%s\n", name, pad, "", summary);
		return;
	}
	/* Cut at a blank, leaving room for "...". */
	for (cut = (size_t)room - 3; cut > 0 && summary[cut] != ' '; cut--)
		;
	if (cut == 0)
		cut = (size_t)room - 3;
	while (cut > 0 && (summary[cut - 1] == ' ' || summary[cut - 1] == ',' ||
			   summary[cut - 1] == ':' || summary[cut - 1] == ';'))
		cut--;
	fprintf(f, "  %s%*s%.*s...\n", name, pad, "", (int)cut, summary);
}

/* One line of --list-modules: the name, a tab, the whole summary. */
static void list_module(void *ctx, const char *name, const char *summary)
{
	if (strncmp(name, "prelude.", 8) != 0)
		fprintf(ctx, "%s\t%s\n", name, summary);
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " [FLAGS] TRACE_FILE\n"
		"       " PROG " COMMAND [FLAGS] ...\n"
		"\n");
	shell_subcommands_usage(f);
	fprintf(f,
		"\n"
		"Classic flags: imports TRACE_FILE ('-' reads stdin) and queries it\n"
		"with SQL. With no -q, -Q, -e, --httpd or --stdiod the interactive\n"
		"shell starts.\n"
		"\n"
		"  -q, --query-file FILE     Run the SQL statements in FILE; print each\n"
		"                            one's result as CSV (a blank line between).\n"
		"  -Q, --query-string SQL    Same, with the SQL on the command line\n"
		"                            (--query SQL is a synonym).\n"
		"  -i, --interactive         Start the interactive shell after any queries.\n"
		"  -e, --export FILE         Write every table and view into the SQLite\n"
		"                            database FILE (overwritten).\n"
		"  -p, --perf-file FILE      Write 'load_ns,query_ns' timings to FILE.\n"
		"  -W, --wide                Do not cut wide cells in the interactive shell.\n"
		"      --full-sort           Sort all events before parsing them.\n"
		"      --no-ftrace-raw       Leave ftrace events out of ftrace_event/raw\n"
		"                            (their sched, counter and slice rows stay);\n"
		"                            saves memory on big traces.\n"
		"      --analyze-trace-proto-content\n"
		"                            Add an arg set per (category, name) of the\n"
		"                            track events (Perfetto's content analysis).\n"
		"      --crop-track-events   Drop track events before the trace's\n"
		"                            TrackEventRangeOfInterest start.\n"
		"      --add-sql-package PATH[@PKG]\n"
		"                            Register the .sql files under PATH as the\n"
		"                            modules of package PKG (default: PATH's\n"
		"                            name): PATH/a/b.sql is PKG.a.b, for\n"
		"                            INCLUDE PERFETTO MODULE.\n"
		"      --override-sql-package PATH[@PKG]\n"
		"                            Same, replacing a package of that name\n"
		"                            (one of ours too).\n"
		"      --override-stdlib PATH  With --dev: each folder under PATH\n"
		"                            replaces the standard library package\n"
		"                            of its name.\n"
		"      --dev                 Enable development features (--override-stdlib).\n"
		"      --list-modules        Print the PerfettoSQL modules below, one a line:\n"
		"                            the name, a tab, the summary; then exit.\n"
		"  -D, --httpd               Serve the trace (or one sent later) to Perfetto's\n"
		"                            UI and Python API over HTTP and WebSocket;\n"
		"                            TRACE_FILE is optional.\n"
		"      --stdiod              Serve the RPC stream of --httpd's WebSocket on\n"
		"                            stdin/stdout instead (Perfetto's --stdiod).\n"
		"      --unixd PATH          Serve it on the AF_UNIX socket PATH instead, kept\n"
		"                            warm for `query --remote` (`server unix`), with\n"
		"                            --unixd-name NAME, --unixd-idle-ms MS (0: never),\n"
		"                            --unixd-idle-start auto|orphaned|last-query,\n"
		"                            --unixd-daemonize.\n"
		"      --http-port PORT      Port of --httpd (default 9001; 0 picks one).\n"
		"      --http-ip-address IP  Address of --httpd (default 127.0.0.1).\n"
		"      --http-additional-cors-origins ORIGIN1,ORIGIN2,...\n"
		"                            Origins allowed besides https://ui.perfetto.dev\n"
		"                            and http://localhost:10000, http://127.0.0.1:10000.\n"
		"  -v, --version             Print the version and exit.\n"
		"  -h, --help                Print this help and exit.\n"
		"\n"
		"Accepted for compatibility and ignored: --extra-checks, --dev-flag,\n"
		"--allow-sql-file-access (no SQL function reads files here).\n");
	if (f == stdout) {
		fprintf(f, "\nPerfettoSQL modules (INCLUDE PERFETTO MODULE NAME; PKG.* includes a\n"
			   "package, * all of them):\n");
		tp_list_sql_modules(print_module, f);
	}
}

enum parse_result { PARSE_RUN, PARSE_HELP, PARSE_VERSION, PARSE_LIST_MODULES, PARSE_ERROR };

static enum parse_result parse_args(int argc, char **argv)
{
	int c;

	memset(&g_args, 0, sizeof(g_args));
	g_args.packages.add = g_args.add_pkgs;
	g_args.packages.override = g_args.override_pkgs;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":q:Q:ie:p:WDvh", k_options, NULL)) != -1) {
		switch (c) {
		case 'q':
			g_args.query_file = optarg;
			break;
		case 'Q':
			g_args.query_string = optarg;
			break;
		case 'i':
			g_args.interactive = true;
			break;
		case 'e':
			g_args.export_path = optarg;
			break;
		case 'p':
			g_args.perf_path = optarg;
			break;
		case 'W':
			g_args.wide = true;
			break;
		case 'D':
			g_args.httpd = true;
			break;
		case OPT_STDIOD:
			g_args.httpd = true;
			g_args.http.stdio = true;
			break;
		case OPT_UNIXD:
			g_args.httpd = true;
			g_args.http.unix_path = optarg;
			break;
		case OPT_UNIXD_NAME:
			g_args.http.unix_name = optarg;
			break;
		case OPT_UNIXD_IDLE_MS:
			g_args.http.unix_idle_ms = optarg;
			break;
		case OPT_UNIXD_IDLE_START:
			g_args.http.unix_idle_start = optarg;
			break;
		case OPT_UNIXD_DAEMONIZE:
			g_args.http.unix_daemonize = true;
			break;
		case OPT_HTTP_PORT:
			g_args.http.port = optarg;
			break;
		case OPT_HTTP_IP:
			g_args.http.ip = optarg;
			break;
		case OPT_HTTP_CORS:
			g_args.http.cors = optarg;
			break;
		case OPT_NO_FTRACE_RAW:
			g_args.no_ftrace_raw = true;
			break;
		case OPT_ANALYZE_CONTENT:
			g_args.analyze_content = true;
			break;
		case OPT_CROP_TRACK_EVENTS:
			g_args.crop_track_events = true;
			break;
		case OPT_FULL_SORT:
			g_args.full_sort = true;
			break;
		case OPT_ADD_SQL_PACKAGE:
		case OPT_OVERRIDE_SQL_PACKAGE:
			if (g_args.packages.n_add + g_args.packages.n_override ==
			    TP_SHELL_MAX_PACKAGES) {
				fprintf(stderr, PROG ": more than %d SQL packages\n",
					TP_SHELL_MAX_PACKAGES);
				return PARSE_ERROR;
			}
			if (c == OPT_ADD_SQL_PACKAGE)
				g_args.add_pkgs[g_args.packages.n_add++] = optarg;
			else
				g_args.override_pkgs[g_args.packages.n_override++] = optarg;
			break;
		case OPT_OVERRIDE_STDLIB:
			g_args.packages.override_stdlib = optarg;
			break;
		case OPT_DEV:
			g_args.packages.dev = true;
			break;
		case OPT_DEV_FLAG:
			/* Development flags of Perfetto's importers: none here. */
			break;
		case OPT_IGNORED:
			break;
		case OPT_METRICS:
			fprintf(stderr,
				PROG ": %s: metrics (--run-metrics, --metrics-output) are not "
				     "supported yet; RUN_METRIC('path') runs our metric files "
				     "from SQL (docs/trace-processor.md)\n",
				argv[optind - 1 - (optarg && optarg == argv[optind - 1])]);
			return PARSE_ERROR;
		case 'v':
			return PARSE_VERSION;
		case OPT_LIST_MODULES:
			return PARSE_LIST_MODULES;
		case 'h':
			return PARSE_HELP;
		case ':':
			fprintf(stderr, PROG ": option '%s' needs an argument\n", argv[optind - 1]);
			return PARSE_ERROR;
		default:
			if (optopt && optopt < 256)
				fprintf(stderr, PROG ": unknown option '-%c'\n", optopt);
			else
				fprintf(stderr, PROG ": unknown option '%s'\n", argv[optind - 1]);
			return PARSE_ERROR;
		}
	}
	if (g_args.query_file && g_args.query_string) {
		fprintf(stderr, PROG ": give either -q/--query-file or -Q/--query-string\n");
		return PARSE_ERROR;
	}
	if (g_args.http.stdio && optind < argc && strcmp(argv[optind], "-") == 0) {
		fprintf(stderr, PROG ": --stdiod reads requests on stdin: the trace cannot "
				     "come from there\n");
		return PARSE_ERROR;
	}
	if (optind >= argc && g_args.httpd)
		return PARSE_RUN;
	if (optind >= argc) {
		fprintf(stderr, PROG ": no trace file given\n");
		return PARSE_ERROR;
	}
	if (argc - optind > 1) {
		fprintf(stderr, PROG ": one trace file only, got '%s' and '%s'\n", argv[optind],
			argv[optind + 1]);
		return PARSE_ERROR;
	}
	g_args.trace_path = argv[optind];
	return PARSE_RUN;
}

/* ---------------------------------------------------------- statements ---- */

/* Skips what SQLite would parse as nothing: blanks, comments and ';'. */
static const char *skip_blank(const char *p)
{
	const char *e;

	for (;;) {
		while (*p == ';' || *p == ' ' || (*p >= '\t' && *p <= '\r'))
			p++;
		if (p[0] == '-' && p[1] == '-') {
			e = strchr(p, '\n');
			p = e ? e + 1 : p + strlen(p);
		} else if (p[0] == '/' && p[1] == '*') {
			/* SQLite takes an unterminated comment to the end of the text. */
			e = strstr(p + 2, "*/");
			p = e ? e + 2 : p + strlen(p);
		} else {
			return p;
		}
	}
}

/*
 * The end of the statement starting at @p when SQLite could not prepare it:
 * just past the first ';' that makes the text a complete statement.
 */
static const char *statement_end(const char *p)
{
	const char *semi = p;
	char *prefix;
	int complete;

	while ((semi = strchr(semi, ';')) != NULL) {
		prefix = strndup(p, (size_t)(semi + 1 - p));
		if (!prefix)
			break;
		complete = sqlite3_complete(prefix);
		free(prefix);
		if (complete)
			return semi + 1;
		semi++;
	}
	return p + strlen(p);
}

/* Prints "Error: MESSAGE" and the failing statement [start, end), indented. */
static void report_sql_error(const char *msg, const char *start, const char *end)
{
	const char *nl;

	while (end > start && (end[-1] == ' ' || (end[-1] >= '\t' && end[-1] <= '\r')))
		end--;
	fprintf(stderr, "Error: %s\n", msg);
	while (start < end) {
		nl = memchr(start, '\n', (size_t)(end - start));
		if (!nl)
			nl = end;
		fprintf(stderr, "    %.*s\n", (int)(nl - start), start);
		start = nl + 1;
	}
}

static int step_all(sqlite3_stmt *stmt)
{
	int rc;

	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		;
	return rc;
}

/* ----------------------------------------------------------------- CSV ---- */

/* print_csv()'s result for a statement without output: done, nothing printed. */
#define SQLITE_VOID_DONE (-1)

/*
 * Perfetto's CSV: quoted column names; integers in decimal, reals with "%f",
 * strings in double quotes with nothing escaped, NULL as "[NULL]". The
 * whole result goes into @out first, as Perfetto materializes it: a
 * statement that fails on any row prints nothing of itself.
 * Return: SQLITE_DONE, an SQLite error, or SQLITE_NOMEM.
 */
static int print_csv(sqlite3_stmt *stmt, struct buf *out)
{
	int n = sqlite3_column_count(stmt);
	const char *name, *s;
	int i, rc, err = 0;

	rc = sqlite3_step(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return rc;
	/* A "void" function's statement (IMPORT(), create_function(), ...)
	 * has no output, as in Perfetto. */
	if (rc == SQLITE_ROW && n == 1 &&
	    sqlite3_value_pointer(sqlite3_column_value(stmt, 0), "VOID")) {
		rc = step_all(stmt);
		return rc == SQLITE_DONE ? SQLITE_VOID_DONE : rc;
	}
	for (i = 0; i < n; i++) {
		name = sqlite3_column_name(stmt, i);
		err |= buf_appendf(out, "%s\"%s\"", i ? "," : "", name ? name : "");
	}
	err |= buf_append_byte(out, '\n');
	for (; rc == SQLITE_ROW && err >= 0; rc = sqlite3_step(stmt)) {
		for (i = 0; i < n; i++) {
			if (i)
				err |= buf_append_byte(out, ',');
			switch (sqlite3_column_type(stmt, i)) {
			case SQLITE_INTEGER:
				err |= buf_appendf(out, "%" PRId64,
						   (int64_t)sqlite3_column_int64(stmt, i));
				break;
			case SQLITE_FLOAT:
				err |= buf_appendf(out, "%f", sqlite3_column_double(stmt, i));
				break;
			case SQLITE_TEXT:
				s = (const char *)sqlite3_column_text(stmt, i);
				err |= buf_appendf(out, "\"%s\"", s ? s : "");
				break;
			case SQLITE_BLOB:
				err |= buf_append_str(out, "\"<raw bytes>\"");
				break;
			default:
				err |= buf_append_str(out, "\"[NULL]\"");
				break;
			}
		}
		err |= buf_append_byte(out, '\n');
	}
	return err < 0 ? SQLITE_NOMEM : rc;
}

/* A result set the CSV output shows (see run_sql()). */
static bool has_output(sqlite3_stmt *stmt)
{
	int n = sqlite3_column_count(stmt);
	const char *name = n == 1 ? sqlite3_column_name(stmt, 0) : NULL;

	return n > 0 && !(name && strcmp(name, "suppress_query_output") == 0);
}

/* ---------------------------------------------------------- text table ---- */

/* Characters on screen: UTF-8 continuation bytes take no column. */
static size_t display_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

/* Byte length of the first @cols characters of @s. */
static size_t prefix_bytes(const char *s, size_t cols)
{
	size_t i = 0;

	while (s[i]) {
		if (((unsigned char)s[i] & 0xc0) != 0x80) {
			if (cols == 0)
				break;
			cols--;
		}
		i++;
	}
	return i;
}

/* One cell as text: @tmp holds numbers; strings are borrowed from @stmt. */
static const char *cell_text(sqlite3_stmt *stmt, int i, char *tmp, size_t tmp_size,
			     bool *out_is_num)
{
	const char *s;

	*out_is_num = false;
	switch (sqlite3_column_type(stmt, i)) {
	case SQLITE_INTEGER:
		snprintf(tmp, tmp_size, "%" PRId64, (int64_t)sqlite3_column_int64(stmt, i));
		*out_is_num = true;
		return tmp;
	case SQLITE_FLOAT:
		snprintf(tmp, tmp_size, "%f", sqlite3_column_double(stmt, i));
		*out_is_num = true;
		return tmp;
	case SQLITE_TEXT:
		s = (const char *)sqlite3_column_text(stmt, i);
		return s ? s : "";
	case SQLITE_BLOB:
		return "<raw bytes>";
	default:
		return "[NULL]";
	}
}

/* Prints @s in @width columns, cut with "..." if wider, then the gap to the next. */
static void print_cell(const char *s, size_t width, bool right, bool last)
{
	size_t w = display_width(s), pad = 0;
	int len = (int)strlen(s);
	const char *cut = "";

	if (w > width) {
		cut = width > 3 ? "..." : "";
		len = (int)prefix_bytes(s, width > 3 ? width - 3 : width);
	} else {
		pad = width - w;
	}
	if (right)
		printf("%*s", (int)pad, "");
	printf("%.*s%s", len, s, cut);
	if (!last)
		printf("%*s  ", right ? 0 : (int)pad, "");
}

struct sampled_cell {
	size_t off;     /* into the text buffer */
	bool is_num;
};

/*
 * Prints a result as an aligned table: widths come from the column names
 * and the first TP_SHELL_SAMPLE_ROWS rows; later rows reuse them.
 */
static int print_table(sqlite3_stmt *stmt)
{
	int n = sqlite3_column_count(stmt);
	struct buf text = BUF_INIT, cells = BUF_INIT;
	struct sampled_cell cell, *sampled;
	size_t *widths = NULL, n_rows = 0, r, w;
	const char *s;
	char tmp[64];
	int i, rc = SQLITE_DONE;

	if (n == 0)
		return step_all(stmt);
	widths = calloc((size_t)n, sizeof(*widths));
	if (!widths)
		return SQLITE_NOMEM;
	for (i = 0; i < n; i++) {
		s = sqlite3_column_name(stmt, i);
		widths[i] = display_width(s ? s : "");
	}
	while (n_rows < TP_SHELL_SAMPLE_ROWS && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		for (i = 0; i < n; i++) {
			s = cell_text(stmt, i, tmp, sizeof(tmp), &cell.is_num);
			cell.off = text.len;
			if (buf_append(&text, s, strlen(s) + 1) < 0 ||
			    buf_append(&cells, &cell, sizeof(cell)) < 0) {
				rc = SQLITE_NOMEM;
				goto out;
			}
			w = display_width(s);
			widths[i] = PFC_MAX(widths[i], w);
		}
		n_rows++;
	}
	if (n_rows < TP_SHELL_SAMPLE_ROWS && rc != SQLITE_DONE)
		goto out;
	for (i = 0; i < n; i++) {
		if (!g_args.wide)
			widths[i] = PFC_MIN(widths[i], (size_t)TP_SHELL_MAX_COL_WIDTH);
		widths[i] = PFC_MAX(widths[i], (size_t)1);
	}

	for (i = 0; i < n; i++) {
		s = sqlite3_column_name(stmt, i);
		print_cell(s ? s : "", widths[i], false, i == n - 1);
	}
	putchar('\n');
	for (i = 0; i < n; i++) {
		for (w = 0; w < widths[i]; w++)
			putchar('-');
		if (i < n - 1)
			fputs("  ", stdout);
	}
	putchar('\n');
	sampled = (struct sampled_cell *)cells.data;
	for (r = 0; r < n_rows; r++) {
		for (i = 0; i < n; i++) {
			cell = sampled[r * (size_t)n + (size_t)i];
			print_cell((const char *)text.data + cell.off, widths[i], cell.is_num,
				   i == n - 1);
		}
		putchar('\n');
	}
	if (n_rows == TP_SHELL_SAMPLE_ROWS) {
		while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
			for (i = 0; i < n; i++) {
				s = cell_text(stmt, i, tmp, sizeof(tmp), &cell.is_num);
				print_cell(s, widths[i], cell.is_num, i == n - 1);
			}
			putchar('\n');
			n_rows++;
		}
	}
	if (rc == SQLITE_DONE)
		printf("\n%zu row%s\n", n_rows, n_rows == 1 ? "" : "s");
out:
	buf_fini(&text);
	buf_fini(&cells);
	free(widths);
	return rc;
}

/* ------------------------------------------------------------- running ---- */

enum out_mode { OUT_CSV, OUT_TABLE };

/*
 * Prints the error of the statement prepared last as Perfetto does (its
 * traceback, then the message; tp_error()), the module to include when
 * the message names a table or function only a module defines ("no such
 * table: x; INCLUDE PERFETTO MODULE m"), then, for a column the
 * statement's tables lack, a "Hint: " line saying which table lacks it and
 * what to join or type instead (hint.c). @step_msg: SQLite's message when
 * stepping failed, NULL when preparing did.
 */
static void report_stmt_error(struct tp *tp, sqlite3 *db, const char *step_msg,
			      const char *start, const char *end)
{
	struct buf hint = BUF_INIT, module = BUF_INIT;
	char *copy = strdup(step_msg ? step_msg : sqlite3_errmsg(db));
	char *text = tp_error(tp, step_msg);
	const char *msg = copy ? copy : "out of memory";

	if (shell_module_hint(db, msg, &module) > 0)
		fprintf(stderr, "%s; INCLUDE PERFETTO MODULE %s\n", text ? text : msg,
			buf_cstr(&module));
	else
		fprintf(stderr, "%s\n", text ? text : msg);
	if (shell_column_hint(db, msg, start, (size_t)(end - start), &hint) > 0)
		fprintf(stderr, "Hint: %s\n", buf_cstr(&hint));
	sqlite3_free(text);
	free(copy);
	buf_fini(&hint);
	buf_fini(&module);
}

/*
 * Runs every statement of @sql in order. In CSV mode (-q/-Q) each result
 * set is printed, as Perfetto's shell (v58) does: statements without
 * columns (CREATE, INSERT, INCLUDE PERFETTO MODULE...) and a lone
 * "suppress_query_output" column print nothing, an empty result still
 * prints its header, and one blank line separates consecutive result sets.
 * A result is printed only once all its rows are read: when a statement
 * fails, the results before it are out, nothing of it (nor a separator),
 * and the statements after it do not run. Text with no statement at all
 * is an error. The table mode (the REPL) prints the last statement's
 * result only.
 * Return: 0, or -EINVAL after printing the SQL error on stderr.
 */
static int run_sql(struct tp *tp, sqlite3 *db, const char *sql, enum out_mode mode)
{
	const char *pos = sql, *tail;
	struct buf csv = BUF_INIT;
	sqlite3_stmt *stmt;
	bool is_last, printed = false, ran = false;
	int rc, err = -EINVAL;

	/* Each statement starts right after the previous one's ';', blanks
	 * included, as Perfetto's do (its errors show them). */
	while (*skip_blank(pos)) {
		stmt = NULL;
		tail = NULL;
		if (tp_prepare_in(tp, sql, pos, &stmt, &tail) != SQLITE_OK) {
			report_stmt_error(tp, db, NULL, skip_blank(pos),
					  statement_end(skip_blank(pos)));
			goto out;
		}
		if (!tail)
			tail = pos + strlen(pos);
		if (stmt) {
			ran = true;
			is_last = *skip_blank(tail) == '\0';
			if (mode == OUT_CSV && has_output(stmt)) {
				buf_reset(&csv);
				rc = print_csv(stmt, &csv);
				if (rc == SQLITE_VOID_DONE) {
					rc = SQLITE_DONE;
				} else if (rc == SQLITE_DONE) {
					if (printed)
						putchar('\n');
					printed = true;
					fwrite(csv.data, 1, csv.len, stdout);
				}
			} else if (mode == OUT_CSV || !is_last) {
				rc = step_all(stmt);
			} else {
				rc = print_table(stmt);
			}
			if (rc != SQLITE_DONE) {
				report_stmt_error(tp, db,
						  rc == SQLITE_NOMEM ? "out of memory"
								     : sqlite3_errmsg(db),
						  skip_blank(pos), tail);
				sqlite3_finalize(stmt);
				goto out;
			}
			sqlite3_finalize(stmt);
		}
		pos = tail;
	}
	if (!ran && mode == OUT_CSV) {
		fprintf(stderr, "No valid SQL to run\n");
		goto out;
	}
	err = 0;
out:
	buf_fini(&csv);
	return err;
}

/* ----------------------------------------------------- tables and views ---- */

struct name_list {
	char **v;
	size_t n, cap;
};

static void names_fini(struct name_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* Adds @name unless it is internal or already there. Return: 0 or -ENOMEM. */
static int names_add(struct name_list *l, const char *name)
{
	char **v;
	size_t i;

	if (strncmp(name, "__", 2) == 0 || strncmp(name, "sqlite_", 7) == 0)
		return 0;
	for (i = 0; i < l->n; i++) {
		if (strcmp(l->v[i], name) == 0)
			return 0;
	}
	if (l->n == l->cap) {
		v = realloc(l->v, (l->cap ? l->cap * 2 : 32) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = l->cap ? l->cap * 2 : 32;
	}
	l->v[l->n] = strdup(name);
	if (!l->v[l->n])
		return -ENOMEM;
	l->n++;
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Every table and view a user can query, sorted: the importer's tables
 * (eponymous virtual tables, so not in sqlite_master) and what
 * sqlite_master and sqlite_temp_master list. "__" names are internal.
 * Return: 0, -ENOMEM or -EINVAL (SQL error, printed).
 */
static int list_relations(struct tp *tp, sqlite3 *db, struct name_list *out)
{
	static const char k_sql[] =
		"SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
		"UNION SELECT name FROM sqlite_temp_master WHERE type IN ('table', 'view')";
	struct tp_db *tdb = tp_get_db(tp);
	sqlite3_stmt *stmt = NULL;
	const char *name;
	unsigned i;
	int rc = 0;

	for (i = 0; tdb && i < TP_DB_N_TABLES && rc == 0; i++)
		rc = names_add(out, tp_db_table(tdb, i)->name);
	if (rc < 0)
		return rc;
	if (sqlite3_prepare_v2(db, k_sql, -1, &stmt, NULL) != SQLITE_OK) {
		fprintf(stderr, "Error: %s\n", sqlite3_errmsg(db));
		return -EINVAL;
	}
	while (rc == 0 && sqlite3_step(stmt) == SQLITE_ROW) {
		name = (const char *)sqlite3_column_text(stmt, 0);
		if (name)
			rc = names_add(out, name);
	}
	sqlite3_finalize(stmt);
	if (rc == 0)
		sort_n(out->v, out->n, sizeof(*out->v), cmp_names);
	return rc;
}

/* Runs one statement that returns nothing. Return: 0 or -EINVAL (printed). */
static int exec_sql(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	report_sql_error(msg ? msg : sqlite3_errmsg(db), sql, sql + strlen(sql));
	sqlite3_free(msg);
	return -EINVAL;
}

/*
 * -e FILE: a fresh SQLite database with one real table per table and view
 * (views are materialized, since what they read is not exported).
 * Return: 0 or a negative errno (message printed).
 */
static int export_db(struct tp *tp, sqlite3 *db, const char *path)
{
	struct name_list names = {0};
	sqlite3_stmt *attach = NULL;
	bool attached = false, in_txn = false;
	char *sql;
	size_t i;
	int fd, rc;

	/* An empty file is an empty database: start from nothing. */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = -errno;
		fprintf(stderr, PROG ": cannot create '%s': %s\n", path, strerror(-rc));
		return rc;
	}
	fd_close(fd);
	rc = list_relations(tp, db, &names);
	if (rc < 0)
		goto out;
	rc = -EINVAL;
	if (sqlite3_prepare_v2(db, "ATTACH DATABASE ?1 AS " TP_SHELL_EXPORT_SCHEMA, -1, &attach,
			       NULL) != SQLITE_OK ||
	    sqlite3_bind_text(attach, 1, path, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_step(attach) != SQLITE_DONE) {
		fprintf(stderr, PROG ": cannot open '%s' as a database: %s\n", path,
			sqlite3_errmsg(db));
		goto out;
	}
	attached = true;
	if (exec_sql(db, "BEGIN") < 0)
		goto out;
	in_txn = true;
	for (i = 0; i < names.n; i++) {
		sql = sqlite3_mprintf("CREATE TABLE " TP_SHELL_EXPORT_SCHEMA
				      ".\"%w\" AS SELECT * FROM \"%w\"",
				      names.v[i], names.v[i]);
		if (!sql) {
			rc = -ENOMEM;
			goto out;
		}
		rc = exec_sql(db, sql);
		sqlite3_free(sql);
		if (rc < 0)
			goto out;
	}
	rc = exec_sql(db, "COMMIT");
	in_txn = rc < 0;
out:
	if (in_txn)
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_finalize(attach);
	if (attached && exec_sql(db, "DETACH DATABASE " TP_SHELL_EXPORT_SCHEMA) < 0 && rc == 0)
		rc = -EINVAL;
	names_fini(&names);
	return rc;
}

/* --------------------------------------------------------- interactive ---- */

/*
 * Appends "col TYPE" for every column of @name to @out, joined by @sep.
 * Return: the number of columns, 0 if @name is unknown, or -ENOMEM.
 */
static int schema_columns(sqlite3 *db, const char *name, const char *sep, struct buf *out)
{
	sqlite3_stmt *stmt = NULL;
	const char *col, *type;
	char *sql;
	int n = 0, i, rc = 0;

	if (sqlite3_prepare_v2(db, "SELECT name, type FROM pragma_table_info(?1)", -1, &stmt,
			       NULL) == SQLITE_OK &&
	    sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC) == SQLITE_OK) {
		while (rc == 0 && sqlite3_step(stmt) == SQLITE_ROW) {
			col = (const char *)sqlite3_column_text(stmt, 0);
			type = (const char *)sqlite3_column_text(stmt, 1);
			rc = buf_appendf(out, "%s%s%s%s", n ? sep : "", col ? col : "",
					 type && *type ? " " : "", type ? type : "");
			n++;
		}
	}
	sqlite3_finalize(stmt);
	stmt = NULL;
	if (rc < 0)
		return rc;
	if (n > 0)
		return n;

	/* Some virtual tables are missing from table_info: ask a statement. */
	sql = sqlite3_mprintf("SELECT * FROM \"%w\" LIMIT 0", name);
	if (!sql)
		return -ENOMEM;
	if (sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) == SQLITE_OK && stmt) {
		for (i = 0; rc == 0 && i < sqlite3_column_count(stmt); i++) {
			col = sqlite3_column_name(stmt, i);
			type = sqlite3_column_decltype(stmt, i);
			rc = buf_appendf(out, "%s%s%s%s", i ? sep : "", col ? col : "",
					 type && *type ? " " : "", type ? type : "");
			n++;
		}
	}
	sqlite3_finalize(stmt);
	sqlite3_free(sql);
	return rc < 0 ? rc : n;
}

static void dot_help(void)
{
	printf(".help            this text\n"
	       ".tables          list the tables and views\n"
	       ".schema [NAME]   the columns of NAME, or of every table and view\n"
	       ".quit, .exit     leave (so does Ctrl-D)\n"
	       "Anything else is SQL, run when a line ends the statement with ';'.\n");
}

static void dot_tables(struct tp *tp, sqlite3 *db)
{
	struct name_list names = {0};
	size_t i;

	if (list_relations(tp, db, &names) == 0) {
		for (i = 0; i < names.n; i++)
			printf("%s\n", names.v[i]);
	}
	names_fini(&names);
}

static void dot_schema(struct tp *tp, sqlite3 *db, const char *name)
{
	struct name_list names = {0};
	struct buf cols = BUF_INIT;
	size_t i;
	int n;

	if (*name) {
		n = schema_columns(db, name, "\n  ", &cols);
		if (n > 0)
			printf("%s\n  %s\n", name, buf_cstr(&cols));
		else if (n == 0)
			fprintf(stderr, "Error: no such table or view: %s\n", name);
		buf_fini(&cols);
		return;
	}
	if (list_relations(tp, db, &names) == 0) {
		for (i = 0; i < names.n; i++) {
			buf_reset(&cols);
			if (schema_columns(db, names.v[i], ", ", &cols) >= 0)
				printf("%s(%s)\n", names.v[i], buf_cstr(&cols));
		}
	}
	buf_fini(&cols);
	names_fini(&names);
}

/* Return: true if the shell should stop. */
static bool dot_command(struct tp *tp, sqlite3 *db, char *line)
{
	char *arg = line, *end;

	while (*arg && *arg != ' ' && *arg != '\t')
		arg++;
	if (*arg)
		*arg++ = '\0';
	while (*arg == ' ' || *arg == '\t')
		arg++;
	end = arg + strlen(arg);
	while (end > arg && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == ';'))
		*--end = '\0';

	if (strcmp(line, ".quit") == 0 || strcmp(line, ".exit") == 0 || strcmp(line, ".q") == 0)
		return true;
	if (strcmp(line, ".help") == 0)
		dot_help();
	else if (strcmp(line, ".tables") == 0)
		dot_tables(tp, db);
	else if (strcmp(line, ".schema") == 0)
		dot_schema(tp, db, arg);
	else
		fprintf(stderr, "Error: unknown command '%s'; try .help\n", line);
	return false;
}

/* ~/.config/perfetto-c/tp_history, or ~/.tp_history; "" if there is no home. */
static void history_path(char *out, size_t size)
{
	const char *home = getenv("HOME");
	char dir[PATH_MAX];
	int n;

	out[0] = '\0';
	if (!home || !*home)
		return;
	n = snprintf(dir, sizeof(dir), "%s/.config/perfetto-c", home);
	if (n > 0 && (size_t)n < sizeof(dir) && mkdir_p(dir, 0700) == 0)
		n = snprintf(out, size, "%s/tp_history", dir);
	else
		n = snprintf(out, size, "%s/.tp_history", home);
	if (n < 0 || (size_t)n >= size)
		out[0] = '\0';
}

/* One line without its newline (free() it), or NULL at end of input. */
static char *read_line(bool is_tty, const char *prompt)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (is_tty)
		return readline(prompt);
	n = getline(&line, &cap, stdin);
	if (n < 0) {
		free(line);
		return NULL;
	}
	if (n > 0 && line[n - 1] == '\n')
		line[n - 1] = '\0';
	return line;
}

static void run_pending(struct tp *tp, sqlite3 *db, struct buf *pending, bool is_tty)
{
	const char *sql = buf_cstr(pending);
	uint64_t t0;
	size_t len = pending->len;

	if (*skip_blank(sql) == '\0') {
		buf_reset(pending);
		return;
	}
	if (is_tty) {
		while (len > 0 && pending->data[len - 1] == '\n')
			len--;
		pending->data[len] = '\0';
		add_history(sql);
	}
	t0 = clock_monotonic_ns();
	if (run_sql(tp, db, sql, OUT_TABLE) == 0)
		printf("Query executed in %.3f ms\n\n", (double)(clock_monotonic_ns() - t0) / 1e6);
	fflush(stdout);
	buf_reset(pending);
}

/*
 * The REPL: lines are collected until they make a complete SQL statement
 * (sqlite3_complete) or a dot-command comes. Off a terminal it reads plain
 * lines without prompt or history, so it can be driven through a pipe.
 */
static void run_interactive(struct tp *tp, sqlite3 *db)
{
	bool is_tty = isatty(STDIN_FILENO);
	struct buf pending = BUF_INIT;
	char hist[PATH_MAX] = "";
	char *line, *p;
	bool quit = false;

	if (is_tty) {
		rl_readline_name = PROG;
		stifle_history(TP_SHELL_HISTORY_LEN);
		history_path(hist, sizeof(hist));
		if (hist[0])
			read_history(hist);
		fprintf(stderr, "Enter SQL ending with ';', .help for commands, Ctrl-D to quit.\n");
	}
	for (;;) {
		line = read_line(is_tty, pending.len ? "...> " : "> ");
		if (!line) {
			/* Ctrl-D: end the prompt's line. */
			if (is_tty)
				putchar('\n');
			break;
		}
		p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '.') {
			run_pending(tp, db, &pending, is_tty);
			if (is_tty)
				add_history(p);
			quit = dot_command(tp, db, p);
			fflush(stdout);
		} else if (pending.len > 0 || *p) {
			if (buf_append_str(&pending, line) < 0 || buf_append_byte(&pending, '\n') < 0) {
				fprintf(stderr, PROG ": out of memory\n");
				buf_reset(&pending);
			} else if (sqlite3_complete(buf_cstr(&pending))) {
				run_pending(tp, db, &pending, is_tty);
			}
		}
		free(line);
		if (quit)
			break;
	}
	/* A last statement without ';' at end of input still runs. */
	run_pending(tp, db, &pending, is_tty);
	if (is_tty && hist[0])
		write_history(hist);
	buf_fini(&pending);
}

/* ---------------------------------------------------------------- main ---- */

static int write_perf_file(const char *path, uint64_t load_ns, uint64_t query_ns)
{
	FILE *f = fopen(path, "we");
	int rc = 0;

	if (!f)
		return -errno;
	fprintf(f, "%" PRIu64 ",%" PRIu64 "\n", load_ns, query_ns);
	if (ferror(f))
		rc = -EIO;
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	return rc;
}

int shell_classic_main(int argc, char **argv)
{
	struct tp_options opt = {0};
	struct buf query_buf = BUF_INIT;
	const char *query = NULL, *name;
	struct tp *tp = NULL;
	bool interactive;
	uint64_t t0, load_ns, query_ns = 0;
	struct stat st;
	sqlite3 *db;
	int fd = -1, exit_code = 1, rc;

	switch (parse_args(argc, argv)) {
	case PARSE_HELP:
		usage(stdout);
		return 0;
	case PARSE_VERSION:
		printf("%s\n", PFC_VERSION_STRING);
		return 0;
	case PARSE_LIST_MODULES:
		return tp_list_sql_modules(list_module, stdout) < 0 || fflush(stdout) != 0 ? 1 : 0;
	case PARSE_ERROR:
		usage(stderr);
		return 1;
	case PARSE_RUN:
		break;
	}
	interactive = !g_args.httpd &&
		      (g_args.interactive ||
		       (!g_args.query_file && !g_args.query_string && !g_args.export_path));
	if (g_args.httpd && !g_args.trace_path) {
		opt.no_ftrace_raw = g_args.no_ftrace_raw;
		opt.analyze_proto_content = g_args.analyze_content;
		opt.crop_track_events = g_args.crop_track_events;
		return shell_httpd(&opt, &g_args.packages, NULL, NULL, 0, &g_args.http);
	}

	/* Read the queries first: a typo in the path should not cost an import. */
	if (g_args.query_file) {
		rc = file_read_all(g_args.query_file, &query_buf, TP_SHELL_MAX_QUERY_BYTES);
		if (rc < 0) {
			fprintf(stderr, PROG ": cannot read query file '%s': %s\n",
				g_args.query_file, strerror(-rc));
			goto out;
		}
		query = buf_cstr(&query_buf);
	} else if (g_args.query_string) {
		query = g_args.query_string;
	}

	if (strcmp(g_args.trace_path, "-") == 0) {
		fd = STDIN_FILENO;
		name = "stdin";
	} else {
		fd = open(g_args.trace_path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, PROG ": cannot open trace file '%s': %s\n",
				g_args.trace_path, strerror(errno));
			goto out;
		}
		name = g_args.trace_path;
	}
	opt.full_sort = g_args.full_sort;
	opt.no_ftrace_raw = g_args.no_ftrace_raw;
	opt.analyze_proto_content = g_args.analyze_content;
	opt.crop_track_events = g_args.crop_track_events;
	opt.progress = isatty(STDERR_FILENO);
	rc = tp_create(&opt, &tp);
	if (rc < 0) {
		fprintf(stderr, PROG ": %s\n", strerror(-rc));
		goto out;
	}
	/* Before the trace, as Perfetto's shell: a bad package costs no import. */
	if (shell_sql_packages(tp, &g_args.packages) < 0)
		goto out;
	t0 = clock_monotonic_ns();
	rc = tp_import_fd(tp, fd, name);
	if (rc < 0) {
		fprintf(stderr, PROG ": cannot import '%s': %s\n", name, strerror(-rc));
		goto out;
	}
	db = tp_sqlite(tp);
	if (!db) {
		fprintf(stderr, PROG ": cannot start SQLite\n");
		goto out;
	}
	load_ns = clock_monotonic_ns() - t0;
	if (interactive) {
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
			fprintf(stderr, "Loaded %s (%.1f MB) in %.3f s\n", name,
				(double)st.st_size / (1024.0 * 1024.0), (double)load_ns / 1e9);
		else
			fprintf(stderr, "Loaded %s in %.3f s\n", name, (double)load_ns / 1e9);
	}

	if (query) {
		t0 = clock_monotonic_ns();
		rc = run_sql(tp, db, query, OUT_CSV);
		query_ns = clock_monotonic_ns() - t0;
		if (fflush(stdout) != 0 || rc < 0)
			goto out;
	}
	if (g_args.export_path && export_db(tp, db, g_args.export_path) < 0)
		goto out;
	if (g_args.perf_path) {
		rc = write_perf_file(g_args.perf_path, load_ns, query_ns);
		if (rc < 0) {
			fprintf(stderr, PROG ": cannot write '%s': %s\n", g_args.perf_path,
				strerror(-rc));
			goto out;
		}
	}
	if (g_args.httpd) {
		rc = shell_httpd(&opt, NULL, tp, name,
				 fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? (uint64_t)st.st_size
									    : 0,
				 &g_args.http);
		tp = NULL; /* the server owned it */
		if (rc != 0)
			goto out;
	}
	if (interactive)
		run_interactive(tp, db);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, PROG ": writing the output failed\n");
		goto out;
	}
	exit_code = 0;
out:
	tp_destroy(tp);
	if (fd != STDIN_FILENO)
		fd_close(fd);
	buf_fini(&query_buf);
	return exit_code;
}

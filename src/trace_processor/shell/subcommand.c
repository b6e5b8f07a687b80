// SPDX-License-Identifier: Apache-2.0
/*
 * subcommand.c - Perfetto's command-style interface of trace_processor_shell
 * (`query TRACE SQL`, `interactive`, `server http|stdio`, `export sqlite`,
 * `help CMD`), as its docs use it: each command line is checked as
 * Perfetto's shell checks it and turned into the classic flat flags that
 * shell.c runs (query -f FILE is -q FILE, server http --port N is
 * --httpd --http-port N, ...). SQL read from stdin (`-f -`, or no SQL
 * given) is read here and passed as -Q. Commands this trace processor
 * lacks (metrics, summarize, bundle, util) are refused with
 * the reason. `server unix`/`kill` and `query --remote` (Perfetto's warm
 * sessions) are handed to session.c. Called by cli.c only; knows nothing
 * of the engine.
 */
#include "trace_processor/shell/subcommand.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/file.h"

#define PROG "trace_processor_shell"
/* Largest SQL text read from stdin. */
#define SUB_MAX_STDIN_SQL (64u << 20)

enum flag_kind {
	F_PASS,    /* a classic flag of the same spelling */
	F_RENAME,  /* a classic flag spelled differently (->classic, with its dashes) */
	F_LOCAL,   /* handled here (->classic names it) */
	F_REFUSE,  /* not available here: ->classic says why */
};

struct flag {
	const char *cmds;    /* commands it belongs to, " query server "; NULL: every one */
	char short_name;     /* 0: none */
	const char *name;    /* long name, without "--" */
	bool has_arg;
	enum flag_kind kind;
	const char *classic; /* F_RENAME: the classic long name; F_LOCAL: an id; F_REFUSE: why */
};

static const struct flag k_flags[] = {
	/* Global flags: every command. */
	{NULL, 'h', "help", false, F_LOCAL, "help"},
	{NULL, 'v', "version", false, F_PASS, NULL},
	{NULL, 0, "full-sort", false, F_PASS, NULL},
	{NULL, 0, "no-ftrace-raw", false, F_PASS, NULL},
	{NULL, 0, "analyze-trace-proto-content", false, F_PASS, NULL},
	{NULL, 0, "crop-track-events", false, F_PASS, NULL},
	{NULL, 0, "allow-sql-file-access", false, F_PASS, NULL},
	{NULL, 0, "dev", false, F_PASS, NULL},
	{NULL, 0, "dev-flag", true, F_PASS, NULL},
	{NULL, 0, "extra-checks", false, F_PASS, NULL},
	{NULL, 0, "add-sql-package", true, F_PASS, NULL},
	{NULL, 0, "override-sql-package", true, F_PASS, NULL},
	{NULL, 0, "override-stdlib", true, F_PASS, NULL},
	{NULL, 'm', "metatrace", true, F_REFUSE, "metatracing is not supported here"},
	{NULL, 0, "metatrace-buffer-capacity", true, F_REFUSE, "metatracing is not supported here"},
	{NULL, 0, "metatrace-categories", true, F_REFUSE, "metatracing is not supported here"},
	{NULL, 0, "register-files-dir", true, F_REFUSE,
	 "no importer here reads registered files"},
	{NULL, 0, "metric-extension", true, F_REFUSE, "v1 metrics are not supported here"},
	{NULL, 0, "remote", true, F_LOCAL, "remote"},
	/* query */
	{" query ", 'f', "query-file", true, F_LOCAL, "query-file"},
	{" query ", 0, "structured-query-id", true, F_REFUSE,
	 "structured queries (trace summary specs) are not supported here"},
	{" query ", 0, "summary-spec", true, F_REFUSE,
	 "structured queries (trace summary specs) are not supported here"},
	{" query ", 'i', "interactive", false, F_PASS, NULL},
	{" query interactive ", 'W', "wide", false, F_PASS, NULL},
	{" query ", 0, "perf-file", true, F_PASS, NULL},
	/* server */
	{" server ", 0, "port", true, F_RENAME, "--http-port"},
	{" server ", 0, "ip-address", true, F_RENAME, "--http-ip-address"},
	{" server ", 0, "additional-cors-origins", true, F_RENAME, "--http-additional-cors-origins"},
	{" server ", 0, "idle-timeout", true, F_LOCAL, "idle-timeout"},
	{" server ", 0, "idle-start", true, F_LOCAL, "idle-start"},
	{" server ", 0, "name", true, F_LOCAL, "name"},
	{" server ", 0, "path", true, F_LOCAL, "path"},
	{" server ", 0, "daemonize", false, F_LOCAL, "daemonize"},
	/* export */
	{" export ", 'o', "output", true, F_LOCAL, "output"},
};

struct cmd_help {
	const char *name;
	const char *usage;
	const char *text;
};

static const struct cmd_help k_cmds[] = {
	{"query", "query [FLAGS] TRACE_FILE|--remote NAME [SQL]",
	 "Load a trace and run SQL on it: every statement's result is printed as CSV,\n"
	 "one blank line between results. The SQL comes from the argument, from\n"
	 "-f FILE ('-' for stdin) or, when neither is given, from stdin.\n"
	 "With --remote NAME|PATH|HOST:PORT the SQL runs on a `server unix`\n"
	 "session (or a `server http`) instead: no TRACE_FILE; the session keeps\n"
	 "its tables between calls.\n\n"
	 "  -f, --query-file FILE   Read the SQL from FILE ('-': stdin).\n"
	 "  -i, --interactive       Start the interactive shell after the queries.\n"
	 "  -W, --wide              Do not cut wide cells in the interactive shell.\n"
	 "      --perf-file FILE    Write 'load_ns,query_ns' timings to FILE.\n"},
	{"interactive", "interactive [FLAGS] TRACE_FILE|--remote NAME",
	 "Open the interactive SQL shell on a trace (the default without a command),\n"
	 "or with --remote NAME|PATH|HOST:PORT on a session (.quit the only\n"
	 "dot-command there).\n\n"
	 "  -W, --wide              Do not cut wide cells.\n"},
	{"server", "server [FLAGS] http|stdio|unix|kill [TRACE_FILE|NAME]",
	 "Serve the trace processor to other programs.\n"
	 "  http   HTTP and WebSocket on 127.0.0.1:9001: what Perfetto's UI\n"
	 "         (ui.perfetto.dev) and its Python API connect to.\n"
	 "  stdio  The TraceProcessorRpc stream on stdin/stdout, for tools that run\n"
	 "         the trace processor as a child process.\n"
	 "  unix   The same stream on an AF_UNIX socket, the trace kept warm for\n"
	 "         repeated `query --remote NAME` calls: --name picks the name (else\n"
	 "         one is made up), --path an explicit socket. The socket is\n"
	 "         $XDG_RUNTIME_DIR/perfetto/NAME.sock ($TMPDIR or /tmp without it).\n"
	 "  kill   Stop a `server unix` session by name or socket path.\n"
	 "The trace file is optional: a client can send one later.\n\n"
	 "      --port PORT         HTTP port (default 9001; 0 picks a free one).\n"
	 "      --ip-address IP     HTTP address (default 127.0.0.1).\n"
	 "      --additional-cors-origins ORIGIN1,ORIGIN2,...\n"
	 "                          Origins allowed besides https://ui.perfetto.dev\n"
	 "                          and http://localhost:10000, http://127.0.0.1:10000.\n"
	 "      --name NAME         unix: the session's name ([A-Za-z0-9][A-Za-z0-9_-]*).\n"
	 "      --path PATH         unix: the socket's path instead.\n"
	 "      --daemonize         unix: detach; the startup record is printed first.\n"
	 "      --idle-timeout auto|never|0|DUR\n"
	 "                          unix: stop after DUR (30s, 5m, 2h) without a client;\n"
	 "                          auto = 30m. http/stdio run until stopped.\n"
	 "      --idle-start auto|orphaned|last-query\n"
	 "                          unix: when the idle clock runs (auto: once the\n"
	 "                          parent exits if started in the foreground).\n"},
	{"export", "export [FLAGS] FORMAT -o FILE TRACE_FILE",
	 "Load a trace and write its tables to a file.\n"
	 "  sqlite     Every table and view as a SQLite database.\n"
	 "(Perfetto's arrow_tar and perfetto formats are not supported here.)\n\n"
	 "  -o, --output FILE       The file to write (overwritten).\n"},
	{"convert", "convert [FLAGS] profile [TRACE_FILE]",
	 "Write the heap profiles of a trace as pprof files (see `convert --help`).\n"},
};

/* Commands of Perfetto's shell that this one does not have, and why. */
static const struct {
	const char *name, *why;
} k_missing[] = {
	{"metrics", "v1 metrics are not supported here; RUN_METRIC('path') runs our metric "
		    "files from SQL (docs/trace-processor.md)"},
	{"summarize", "trace summarization (summary specs, v2 metrics) is not supported here"},
	{"bundle", "bundling symbols and deobfuscation maps is not supported here"},
	{"util", "the low-level utilities (merge, symbolize, deobfuscate, "
		 "decompress_packets, text_to_binary) are not supported here"},
};

static const struct cmd_help *find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(k_cmds) / sizeof(k_cmds[0]); i++)
		if (strcmp(k_cmds[i].name, name) == 0)
			return &k_cmds[i];
	return NULL;
}

static const char *missing_why(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(k_missing) / sizeof(k_missing[0]); i++)
		if (strcmp(k_missing[i].name, name) == 0)
			return k_missing[i].why;
	return NULL;
}

bool shell_is_subcommand(const char *arg)
{
	return arg && (find_cmd(arg) || missing_why(arg) || strcmp(arg, "help") == 0);
}

static void cmd_usage(FILE *f, const struct cmd_help *c)
{
	fprintf(f, "Usage: " PROG " %s\n\n%s", c->usage, c->text);
	fputs("\nGlobal flags (every command): --full-sort, --no-ftrace-raw,\n"
	      "--add-sql-package PATH[@PKG], --override-sql-package PATH[@PKG],\n"
	      "--override-stdlib PATH with --dev, --analyze-trace-proto-content,\n"
	      "--crop-track-events, -v/--version, -h/--help.\n",
	      f);
}

void shell_subcommands_usage(FILE *f)
{
	size_t i;

	fputs("Commands (Perfetto's command style; `" PROG " help CMD` for one):\n", f);
	for (i = 0; i < sizeof(k_cmds) / sizeof(k_cmds[0]); i++)
		fprintf(f, "  " PROG " %s\n", k_cmds[i].usage);
}

static bool flag_in_cmd(const struct flag *fl, const char *cmd)
{
	char key[32];

	if (!fl->cmds)
		return true;
	snprintf(key, sizeof(key), " %s ", cmd);
	return strstr(fl->cmds, key) != NULL;
}

/* The flag @arg names for @cmd; *out_value: its "=value" part, or NULL. */
static const struct flag *find_flag(const char *cmd, const char *arg, const char **out_value)
{
	size_t i, n;

	*out_value = NULL;
	for (i = 0; i < sizeof(k_flags) / sizeof(k_flags[0]); i++) {
		const struct flag *fl = &k_flags[i];

		if (!flag_in_cmd(fl, cmd))
			continue;
		if (arg[1] != '-') {
			if (fl->short_name && arg[1] == fl->short_name && arg[2] == '\0')
				return fl;
			continue;
		}
		n = strlen(fl->name);
		if (strncmp(arg + 2, fl->name, n) != 0)
			continue;
		if (arg[2 + n] == '\0')
			return fl;
		if (arg[2 + n] == '=' && fl->has_arg) {
			*out_value = arg + 3 + n;
			return fl;
		}
	}
	return NULL;
}

static int push(struct shell_argv *a, const char *s)
{
	char **v;

	if (a->n + 2 > a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 16;

		v = realloc(a->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = (char *)s;
	a->v[a->n] = NULL;
	return 0;
}

/* Reads all of stdin into @a->sql. Return: 0, or -errno. */
static int read_stdin_sql(struct shell_argv *a)
{
	char chunk[65536];
	ssize_t n;

	for (;;) {
		n = read(STDIN_FILENO, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		if (a->sql.len + (size_t)n > SUB_MAX_STDIN_SQL)
			return -EFBIG;
		if (buf_append(&a->sql, chunk, (size_t)n) < 0)
			return -ENOMEM;
	}
	return buf_cstr(&a->sql) ? 0 : -ENOMEM;
}

static bool blank(const char *s)
{
	for (; *s; s++)
		if (*s != ' ' && (*s < '\t' || *s > '\r'))
			return false;
	return true;
}

/* server --idle-timeout/--idle-start: only values meaning "run until stopped". */
static bool idle_value_ok(const char *id, const char *v)
{
	if (strcmp(id, "idle-start") == 0)
		return strcmp(v, "auto") == 0;
	return strcmp(v, "auto") == 0 || strcmp(v, "never") == 0 || strcmp(v, "0") == 0;
}

/*
 * `server unix`'s flags as the classic ones: --unixd PATH (from --path, or
 * --name's socket in the sessions folder), --unixd-name, --unixd-idle-ms,
 * --unixd-idle-start, --unixd-daemonize. Return: 0, -ENOMEM, or -EINVAL
 * after saying why.
 */
static int server_unix_args(struct shell_argv *out, const char *name, const char *path,
			    const char *idle_timeout, const char *idle_start, bool daemonize)
{
	uint32_t ms = 30u * 60u * 1000u; /* Perfetto's "auto" for unix */
	char cwd[4096];
	int n;

	if (name && path) {
		fprintf(stderr, PROG " server unix: --path and --name are mutually exclusive\n");
		return -EINVAL;
	}
	if (idle_timeout && strcmp(idle_timeout, "auto") != 0 &&
	    shell_session_parse_ms(idle_timeout, &ms) < 0) {
		fprintf(stderr,
			PROG " server unix: Invalid duration '%s' (expected e.g. 30s, 5m, 2h, or "
			     "'never')\n",
			idle_timeout);
		return -EINVAL;
	}
	if (!idle_start)
		idle_start = "auto";
	if (strcmp(idle_start, "auto") != 0 && strcmp(idle_start, "orphaned") != 0 &&
	    strcmp(idle_start, "last-query") != 0) {
		fprintf(stderr,
			PROG " server unix: Invalid --idle-start '%s' (expected auto, orphaned or "
			     "last-query)\n",
			idle_start);
		return -EINVAL;
	}
	if (path) {
		/* Absolute before binding: a daemon leaves the directory. */
		if (path[0] == '/')
			n = snprintf(out->socket_path, sizeof(out->socket_path), "%s", path);
		else if (getcwd(cwd, sizeof(cwd)))
			n = snprintf(out->socket_path, sizeof(out->socket_path), "%s/%s", cwd,
				     path);
		else
			n = -1;
		if (n < 0 || n + 1 > 104) {
			fprintf(stderr, PROG " server unix: Socket path is too long (limit 103 "
					     "bytes): %s\n",
				path);
			return -EINVAL;
		}
		snprintf(out->session_name, sizeof(out->session_name), "%.79s",
			 out->socket_path);
	} else {
		if (name && !shell_session_name_ok(name)) {
			fprintf(stderr,
				PROG " server unix: invalid --name '%s' (must match "
				     "[A-Za-z0-9][A-Za-z0-9_-]*)\n",
				name);
			return -EINVAL;
		}
		if (name)
			snprintf(out->session_name, sizeof(out->session_name), "%s", name);
		else
			shell_session_new_name(out->session_name, sizeof(out->session_name));
		if (shell_session_path(out->session_name, out->socket_path,
				       sizeof(out->socket_path)) < 0)
			return -EINVAL;
	}
	snprintf(out->idle_ms, sizeof(out->idle_ms), "%" PRIu32, ms);
	if (push(out, "--unixd") < 0 || push(out, out->socket_path) < 0 ||
	    push(out, "--unixd-name") < 0 ||
	    push(out, path ? out->socket_path : out->session_name) < 0 ||
	    push(out, "--unixd-idle-ms") < 0 || push(out, out->idle_ms) < 0 ||
	    push(out, "--unixd-idle-start") < 0 || push(out, idle_start) < 0 ||
	    (daemonize && push(out, "--unixd-daemonize") < 0))
		return -ENOMEM;
	return 0;
}

#define MAX_POS 8

enum sub_result shell_subcommand(int argc, char **argv, struct shell_argv *out)
{
	const char *cmd = argv[1], *pos[MAX_POS], *query_file = NULL, *output = NULL;
	const char *why, *trace, *sql = NULL, *mode = NULL, *format = NULL;
	const char *remote = NULL, *name = NULL, *path = NULL, *loading = NULL;
	const char *idle_timeout = NULL, *idle_start = NULL;
	bool daemonize = false, perf_file = false;
	const struct cmd_help *help;
	size_t n_pos = 0, p0;
	bool want_help = false, dashdash = false;
	int i, rc = 0;

	memset(out, 0, sizeof(*out));
	out->sql = (struct buf)BUF_INIT;
	if (strcmp(cmd, "help") == 0) {
		if (argc < 3)
			return SUB_USAGE;
		help = find_cmd(argv[2]);
		if (!help) {
			why = missing_why(argv[2]);
			fprintf(stderr, PROG ": %s: %s\n", argv[2], why ? why : "unknown command");
			return SUB_ERROR;
		}
		cmd_usage(stdout, help);
		return SUB_DONE;
	}
	why = missing_why(cmd);
	if (why) {
		fprintf(stderr, PROG " %s: %s\n", cmd, why);
		return SUB_ERROR;
	}
	help = find_cmd(cmd);
	if (push(out, argv[0]) < 0)
		goto nomem;
	for (i = 2; i < argc; i++) {
		const char *arg = argv[i], *value;
		const struct flag *fl;
		bool inline_value;

		if (dashdash || arg[0] != '-' || arg[1] == '\0') {
			if (n_pos == MAX_POS) {
				fprintf(stderr, PROG " %s: too many arguments\n", cmd);
				return SUB_ERROR;
			}
			pos[n_pos++] = arg;
			continue;
		}
		if (strcmp(arg, "--") == 0) {
			dashdash = true;
			continue;
		}
		fl = find_flag(cmd, arg, &value);
		if (!fl) {
			fprintf(stderr, PROG " %s: unknown option '%s' (" PROG " help %s)\n", cmd,
				arg, cmd);
			return SUB_ERROR;
		}
		inline_value = value != NULL;
		if (fl->has_arg && !value) {
			if (i + 1 >= argc) {
				fprintf(stderr, PROG " %s: option '%s' needs an argument\n", cmd, arg);
				return SUB_ERROR;
			}
			value = argv[++i];
		}
		switch (fl->kind) {
		case F_PASS:
			/* A flag of the trace's loading: --remote has none to load. */
			if (!fl->cmds && fl->short_name != 'v' && !loading)
				loading = fl->name;
			if (fl->short_name == 'W')
				out->wide = true;
			if (fl->short_name == 'i')
				out->then_repl = true;
			if (strcmp(fl->name, "perf-file") == 0)
				perf_file = true;
			/* The classic parser spells it the same: pass it on as typed. */
			if (push(out, arg) < 0 ||
			    (fl->has_arg && !inline_value && push(out, value) < 0))
				goto nomem;
			break;
		case F_RENAME:
			if (push(out, fl->classic) < 0 || push(out, value) < 0)
				goto nomem;
			break;
		case F_LOCAL:
			if (strcmp(fl->classic, "help") == 0)
				want_help = true;
			else if (strcmp(fl->classic, "query-file") == 0)
				query_file = value;
			else if (strcmp(fl->classic, "output") == 0)
				output = value;
			else if (strcmp(fl->classic, "remote") == 0)
				remote = value;
			else if (strcmp(fl->classic, "name") == 0)
				name = value;
			else if (strcmp(fl->classic, "path") == 0)
				path = value;
			else if (strcmp(fl->classic, "daemonize") == 0)
				daemonize = true;
			else if (strcmp(fl->classic, "idle-timeout") == 0)
				idle_timeout = value;
			else
				idle_start = value;
			break;
		case F_REFUSE:
			fprintf(stderr, PROG " %s: --%s: %s\n", cmd, fl->name, fl->classic);
			return SUB_ERROR;
		}
	}
	if (want_help) {
		cmd_usage(stdout, help);
		return SUB_DONE;
	}
	if (remote && strcmp(cmd, "query") != 0 && strcmp(cmd, "interactive") != 0) {
		fprintf(stderr, PROG " %s: --remote: only `query` and `interactive` run on a "
				     "session here\n",
			cmd);
		return SUB_ERROR;
	}
	if (remote && loading) {
		fprintf(stderr,
			"--%s cannot be combined with --remote: the trace is already loaded and "
			"configured by the session. Pass this flag to `tp server unix` when "
			"starting the session instead.\n",
			loading);
		return SUB_ERROR;
	}
	p0 = 0;
	if (strcmp(cmd, "server") == 0 || strcmp(cmd, "export") == 0) {
		if (n_pos == 0) {
			fprintf(stderr, PROG " %s: the %s is required (" PROG " help %s)\n", cmd,
				cmd[0] == 's' ? "mode (http, stdio, unix or kill)" : "format", cmd);
			return SUB_ERROR;
		}
		if (cmd[0] == 's')
			mode = pos[0];
		else
			format = pos[0];
		p0 = 1;
	}
	trace = n_pos > p0 ? pos[p0] : NULL;
	if (strcmp(cmd, "interactive") == 0 && remote) {
		if (n_pos > 0) {
			fprintf(stderr, PROG " interactive: --remote takes no trace file\n");
			return SUB_ERROR;
		}
		out->remote = remote;
		return SUB_REMOTE;
	}
	if (strcmp(cmd, "query") == 0 && remote) {
		if (perf_file) {
			fprintf(stderr, PROG " query: --perf-file is not supported with --remote "
					     "here (nothing is loaded)\n");
			return SUB_ERROR;
		}
		/* No trace: the first argument is the SQL. */
		if (n_pos > 1) {
			fprintf(stderr, PROG " query: give the SQL as one argument (quote it)\n");
			return SUB_ERROR;
		}
		sql = n_pos == 1 ? pos[0] : NULL;
		if (sql && query_file) {
			fprintf(stderr, PROG " query: give the SQL either as an argument or "
					     "with -f, not both\n");
			return SUB_ERROR;
		}
		if (!sql && (!query_file || strcmp(query_file, "-") == 0))
			rc = read_stdin_sql(out);
		else if (!sql)
			rc = file_read_all(query_file, &out->sql, SUB_MAX_STDIN_SQL);
		if (rc < 0) {
			fprintf(stderr, PROG " query: cannot read the SQL from %s: %s\n",
				query_file && strcmp(query_file, "-") != 0 ? query_file : "stdin",
				strerror(-rc));
			return SUB_ERROR;
		}
		if (!sql)
			sql = buf_cstr(&out->sql);
		if (!sql || blank(sql)) {
			fprintf(stderr, PROG " query: no SQL provided. Use positional arg, -f "
					     "FILE, or pipe to stdin.\n");
			return SUB_ERROR;
		}
		out->remote = remote;
		out->remote_sql = sql;
		return SUB_REMOTE;
	}
	if (strcmp(cmd, "query") == 0) {
		if (!trace) {
			fprintf(stderr, PROG " query: trace file is required\n");
			return SUB_ERROR;
		}
		if (n_pos > 2) {
			fprintf(stderr, PROG " query: give the SQL as one argument (quote it)\n");
			return SUB_ERROR;
		}
		sql = n_pos == 2 ? pos[1] : NULL;
		if (sql && query_file) {
			fprintf(stderr, PROG " query: give the SQL either as an argument or "
					     "with -f, not both\n");
			return SUB_ERROR;
		}
		if (!sql && (!query_file || strcmp(query_file, "-") == 0)) {
			rc = read_stdin_sql(out);
			if (rc < 0) {
				fprintf(stderr, PROG " query: cannot read SQL from stdin: %s\n",
					strerror(-rc));
				return SUB_ERROR;
			}
			sql = buf_cstr(&out->sql);
		}
		if (sql && blank(sql)) {
			fprintf(stderr, PROG " query: no SQL provided. Use positional arg, -f "
					     "FILE, or pipe to stdin.\n");
			return SUB_ERROR;
		}
		if ((sql && (push(out, "-Q") < 0 || push(out, sql) < 0)) ||
		    (!sql && (push(out, "-q") < 0 || push(out, query_file) < 0)))
			goto nomem;
	} else if (strcmp(cmd, "interactive") == 0) {
		if (!trace) {
			fprintf(stderr, PROG " interactive: trace file is required\n");
			return SUB_ERROR;
		}
		if (n_pos > 1)
			goto extra;
	} else if (strcmp(cmd, "server") == 0) {
		if (strcmp(mode, "kill") == 0) {
			if (!trace) {
				fprintf(stderr, PROG " server kill: a session name or socket path "
						     "is required\n");
				return SUB_ERROR;
			}
			if (n_pos > 2)
				goto extra;
			return shell_server_kill(trace) == 0 ? SUB_DONE : SUB_ERROR;
		}
		if (strcmp(mode, "unix") != 0 && (name || path || daemonize)) {
			fprintf(stderr, PROG " server %s: --name, --path and --daemonize are "
					     "for `server unix`\n",
				mode);
			return SUB_ERROR;
		}
		if (strcmp(mode, "unix") != 0 &&
		    ((idle_timeout && !idle_value_ok("idle-timeout", idle_timeout)) ||
		     (idle_start && !idle_value_ok("idle-start", idle_start)))) {
			fprintf(stderr,
				PROG " server: --idle-timeout/--idle-start: the %s server here "
				     "runs until it is stopped (SIGINT or SIGTERM); only auto, "
				     "never or 0\n",
				mode);
			return SUB_ERROR;
		}
		if (strcmp(mode, "unix") == 0) {
			rc = server_unix_args(out, name, path, idle_timeout, idle_start,
					      daemonize);
			if (rc == -ENOMEM)
				goto nomem;
			if (rc < 0)
				return SUB_ERROR;
		} else if (strcmp(mode, "http") == 0) {
			rc = push(out, "--httpd");
		} else if (strcmp(mode, "stdio") == 0) {
			rc = push(out, "--stdiod");
		} else {
			fprintf(stderr, PROG " server: unknown mode '%s' (expected http, stdio, "
					     "unix or kill)\n",
				mode);
			return SUB_ERROR;
		}
		if (rc < 0)
			goto nomem;
		if (n_pos > 2)
			goto extra;
	} else if (strcmp(cmd, "export") == 0) {
		if (strcmp(format, "arrow_tar") == 0 || strcmp(format, "perfetto") == 0) {
			fprintf(stderr, PROG " export: the %s format is not supported here; "
					     "sqlite is\n",
				format);
			return SUB_ERROR;
		}
		if (strcmp(format, "sqlite") != 0) {
			fprintf(stderr, PROG " export: unknown format '%s' (expected sqlite, "
					     "arrow_tar, or perfetto)\n",
				format);
			return SUB_ERROR;
		}
		if (!output) {
			fprintf(stderr, PROG " export: -o FILE is required\n");
			return SUB_ERROR;
		}
		if (!trace) {
			fprintf(stderr, PROG " export: trace file is required\n");
			return SUB_ERROR;
		}
		if (n_pos > 2)
			goto extra;
		if (push(out, "-e") < 0 || push(out, output) < 0)
			goto nomem;
	}
	/* The classic parser takes the trace after "--", so it may start with '-'. */
	if (trace && (push(out, "--") < 0 || push(out, trace) < 0))
		goto nomem;
	return SUB_RUN;
extra:
	fprintf(stderr, PROG " %s: unexpected argument '%s' (" PROG " help %s)\n", cmd,
		pos[n_pos - 1], cmd);
	return SUB_ERROR;
nomem:
	fprintf(stderr, PROG ": %s\n", strerror(ENOMEM));
	return SUB_ERROR;
}

void shell_argv_fini(struct shell_argv *a)
{
	free(a->v);
	buf_fini(&a->sql);
	memset(a, 0, sizeof(*a));
}

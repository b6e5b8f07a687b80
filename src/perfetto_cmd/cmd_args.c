// SPDX-License-Identifier: Apache-2.0
/*
 * cmd_args.c - parses the perfetto command line (Perfetto's flags; the
 * Android-only upload flags are refused with a clear message) and checks
 * which combinations make sense before anything connects to the service.
 */
#include "perfetto_cmd/cmd_args.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"

enum {
	OPT_TXT = 1000,
	OPT_NO_CLOBBER,
	OPT_NOTIFY_FD,
	OPT_ADD_ATTRIBUTE,
	OPT_VERSION,
	OPT_QUERY,
	OPT_QUERY_RAW,
	OPT_LONG,
	OPT_DETACH,
	OPT_ATTACH,
	OPT_IS_DETACHED,
	OPT_STOP,
	OPT_CLONE,
	OPT_CLONE_BY_NAME,
	OPT_CLONE_FOR_BUGREPORT,
	OPT_ROTATE_SECONDS,
	OPT_ROTATE_MB,
	OPT_KEEP,
	OPT_CPU_PROFILE,
	OPT_ANDROID_ONLY,
};

static const struct option k_options[] = {
	{"config", required_argument, NULL, 'c'},
	{"txt", no_argument, NULL, OPT_TXT},
	{"out", required_argument, NULL, 'o'},
	{"no-clobber", no_argument, NULL, OPT_NO_CLOBBER},
	{"background", no_argument, NULL, 'd'},
	{"background-wait", no_argument, NULL, 'D'},
	{"notify-fd", required_argument, NULL, OPT_NOTIFY_FD},
	{"add-attribute", required_argument, NULL, OPT_ADD_ATTRIBUTE},
	{"time", required_argument, NULL, 't'},
	{"buffer", required_argument, NULL, 'b'},
	{"size", required_argument, NULL, 's'},
	{"app", required_argument, NULL, 'a'},
	{"query", no_argument, NULL, OPT_QUERY},
	{"query-raw", no_argument, NULL, OPT_QUERY_RAW},
	{"long", no_argument, NULL, OPT_LONG},
	{"detach", required_argument, NULL, OPT_DETACH},
	{"attach", required_argument, NULL, OPT_ATTACH},
	{"is_detached", required_argument, NULL, OPT_IS_DETACHED},
	{"stop", no_argument, NULL, OPT_STOP},
	{"clone", required_argument, NULL, OPT_CLONE},
	{"clone-by-name", required_argument, NULL, OPT_CLONE_BY_NAME},
	{"clone-for-bugreport", no_argument, NULL, OPT_CLONE_FOR_BUGREPORT},
	{"rotate-seconds", required_argument, NULL, OPT_ROTATE_SECONDS},
	{"cpu-profile", required_argument, NULL, OPT_CPU_PROFILE},
	{"rotate-mb", required_argument, NULL, OPT_ROTATE_MB},
	{"keep", required_argument, NULL, OPT_KEEP},
	{"version", no_argument, NULL, OPT_VERSION},
	{"help", no_argument, NULL, 'h'},
	/* Android-only: accepted by name so the error says why. */
	{"upload", no_argument, NULL, OPT_ANDROID_ONLY},
	{"dropbox", required_argument, NULL, OPT_ANDROID_ONLY},
	{"save-for-bugreport", no_argument, NULL, OPT_ANDROID_ONLY},
	{"save-all-for-bugreport", no_argument, NULL, OPT_ANDROID_ONLY},
	{"alert-id", required_argument, NULL, OPT_ANDROID_ONLY},
	{"config-id", required_argument, NULL, OPT_ANDROID_ONLY},
	{"config-uid", required_argument, NULL, OPT_ANDROID_ONLY},
	{"subscription-id", required_argument, NULL, OPT_ANDROID_ONLY},
	{"no-guardrails", no_argument, NULL, OPT_ANDROID_ONLY},
	{"reset-guardrails", no_argument, NULL, OPT_ANDROID_ONLY},
	{NULL, 0, NULL, 0},
};

void cmd_args_usage(FILE *f)
{
	fprintf(f,
		"Usage: perfetto\n"
		"  --background     -d     : Exits immediately and continues in the background.\n"
		"                            Prints the PID of the background process.\n"
		"  --background-wait -D    : Like --background, but waits (up to 30s) for all data\n"
		"                            sources to be started before exiting.\n"
		"  --config         -c     : /path/to/trace/config/file or - for stdin\n"
		"  --out            -o     : /path/to/out/trace/file or - for stdout\n"
		"  --txt                   : Parse config as pbtxt (text format).\n"
		"  --no-clobber            : Do not overwrite an existing output file.\n"
		"  --notify-fd FD          : Write 0 to FD when tracing started (or 1 on failure).\n"
		"  --add-attribute K[=V]   : Add a trace attribute (shows in the metadata table).\n"
		"  --query [--long]        : Query the service state: producers, data sources,\n"
		"                            tracing sessions.\n"
		"  --query-raw             : Like --query, but prints the raw TracingServiceState.\n"
		"  --version               : Print the version and exit.\n"
		"  --help           -h     : This text.\n"
		"\n"
		"Light configuration flags (not with --config):\n"
		"  --time           -t     : Trace duration N[s,m,h] (default: 10s)\n"
		"  --buffer         -b     : Ring buffer size N[mb,gb] (default: 32mb)\n"
		"  --size           -s     : Max file size N[mb,gb], streams to the file\n"
		"                            (default: in-memory ring buffer only)\n"
		"  ATRACE_CAT              : Record a category, e.g. sched, freq, idle (expanded to\n"
		"                            ftrace events by traced_probes)\n"
		"  FTRACE_GROUP/FTRACE_NAME: Record an ftrace event, e.g. sched/sched_switch\n"
		"  --cpu-profile HZ        : Also sample every CPU HZ times a second with kernel\n"
		"                            and user callstacks (linux.perf, served by\n"
		"                            traced_perf; perfetto-c extension), e.g.\n"
		"                            perfetto -t 10s sched --cpu-profile 99\n"
		"\n"
		"Detach mode (the session outlives this process):\n"
		"  --detach=KEY            : Detach from the session once it started.\n"
		"  --attach=KEY            : Re-attach to the session (with --stop to end it,\n"
		"                            then write the trace to --out).\n"
		"  --is_detached=KEY       : Exit 0 if a session is detached with KEY, 2 if not.\n"
		"\n"
		"Snapshots:\n"
		"  --clone TSID            : Write a snapshot of the running session TSID to --out.\n"
		"  --clone-by-name NAME    : Same, by the session's unique_session_name.\n"
		"  With CLONE_SNAPSHOT triggers in the config, each trigger writes a snapshot\n"
		"  to a new file with a counter suffix: OUT.0, OUT.1, ...\n"
		"\n"
		"Rotating files (perfetto-c extension; always-on recording):\n"
		"  --rotate-seconds N      : Start a new file every N seconds: OUT.0, OUT.1, ...\n"
		"  --rotate-mb N           : Start a new file when the current one reaches N MiB.\n"
		"  --keep K                : Keep only the newest K files (default: all).\n"
		"                            Each file is a trace of its own. Before the file\n"
		"                            system fills up the oldest files are deleted; if\n"
		"                            none is left the recording stops. Not with\n"
		"                            write_into_file, compression or CLONE_SNAPSHOT.\n"
		"\n"
		"Socket: $PERFETTO_CONSUMER_SOCK_NAME (default /run/perfetto/traced-consumer.sock\n"
		"or /tmp/perfetto-consumer).\n");
}

static int fail(char *err, size_t n, const char *fmt, ...) PFC_PRINTF(3, 4);

static int fail(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Checks which flags may go together, after all were read. */
static int check_combination(struct cmd_args *a, bool light, char *err, size_t n)
{
	if (a->mode == CMD_MODE_HELP || a->mode == CMD_MODE_VERSION)
		return 0;
	if (a->mode == CMD_MODE_QUERY || a->mode == CMD_MODE_IS_DETACHED)
		return 0;
	if (a->mode != CMD_MODE_TRACE && (a->rotate_seconds || a->rotate_mb || a->has_keep))
		return fail(err, n, "--rotate-seconds/--rotate-mb/--keep only go with recording");
	if (a->mode == CMD_MODE_ATTACH || a->mode == CMD_MODE_CLONE) {
		if (a->config_path || light)
			return fail(err, n, "--attach/--clone take no config");
		if (!a->out_path && !(a->mode == CMD_MODE_ATTACH && a->detach_key))
			return fail(err, n, "--out is required to write the trace");
		return 0;
	}
	if (a->config_path && light)
		return fail(err, n,
			    "cannot specify both -c/--config and any of --time, --size, --buffer, "
			    "--app, ATRACE_CAT, FTRACE_EVENT");
	if (!a->config_path && !light)
		return fail(err, n, "either pass a config with -c/--config or use light mode "
			    "(e.g. perfetto -o trace -t 10s sched); see --help");
	/* A config file may only fire triggers (activate_triggers): then no
	 * output is needed; perfetto_cmd checks once it has read the config. */
	if (!a->out_path && !a->detach_key && !a->config_path)
		return fail(err, n, "--out is required (use '-o -' for stdout)");
	if (a->background && a->out_path && strcmp(a->out_path, "-") == 0)
		return fail(err, n, "--background cannot write the trace to stdout");
	if (a->rotate_seconds || a->rotate_mb) {
		if (!a->out_path || strcmp(a->out_path, "-") == 0)
			return fail(err, n, "--rotate-seconds/--rotate-mb need -o FILE (files FILE.0, "
					    "FILE.1, ...)");
		if (a->detach_key)
			return fail(err, n, "--rotate-* cannot be used with --detach");
	} else if (a->has_keep) {
		return fail(err, n, "--keep needs --rotate-seconds or --rotate-mb");
	}
	return 0;
}

int cmd_args_parse(int argc, char **argv, struct cmd_args *a, char *err, size_t n)
{
	uint64_t u;
	bool light = false;
	int c;

	memset(a, 0, sizeof(*a));
	a->notify_fd = -1;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:c:o:dDt:b:s:a:h", k_options, NULL)) != -1) {
		switch (c) {
		case 'c':
			a->config_path = optarg;
			break;
		case OPT_TXT:
			a->config_is_text = true;
			break;
		case 'o':
			a->out_path = optarg;
			break;
		case OPT_NO_CLOBBER:
			a->no_clobber = true;
			break;
		case 'd':
			a->background = true;
			break;
		case 'D':
			a->background = true;
			a->background_wait = true;
			break;
		case OPT_NOTIFY_FD:
			if (sv_parse_u64(sv_from_cstr(optarg), 1024 * 1024, &u))
				return fail(err, n, "--notify-fd needs a file descriptor number, got '%s'",
					    optarg);
			a->notify_fd = (int)u;
			break;
		case OPT_ADD_ATTRIBUTE:
			if (a->n_attributes >= CMD_MAX_ATTRIBUTES)
				return fail(err, n, "at most %d --add-attribute flags", CMD_MAX_ATTRIBUTES);
			a->attributes[a->n_attributes++] = optarg;
			break;
		case 't':
			a->time = optarg;
			light = true;
			break;
		case 'b':
			a->buffer_size = optarg;
			light = true;
			break;
		case 's':
			a->max_file_size = optarg;
			light = true;
			break;
		case 'a':
			return fail(err, n, "--app (atrace apps) is Android-only");
		case OPT_QUERY:
			a->mode = CMD_MODE_QUERY;
			break;
		case OPT_QUERY_RAW:
			a->mode = CMD_MODE_QUERY;
			a->query_raw = true;
			break;
		case OPT_LONG:
			a->query_long = true;
			break;
		case OPT_DETACH:
			a->detach_key = optarg;
			break;
		case OPT_ATTACH:
			a->mode = CMD_MODE_ATTACH;
			a->attach_key = optarg;
			break;
		case OPT_IS_DETACHED:
			a->mode = CMD_MODE_IS_DETACHED;
			a->attach_key = optarg;
			break;
		case OPT_STOP:
			a->stop_after_attach = true;
			break;
		case OPT_CLONE:
			if (sv_parse_u64(sv_from_cstr(optarg), UINT64_MAX, &u) || u == 0)
				return fail(err, n, "--clone needs a tracing session id, got '%s'", optarg);
			a->mode = CMD_MODE_CLONE;
			a->clone_id = u;
			break;
		case OPT_CLONE_BY_NAME:
			a->mode = CMD_MODE_CLONE;
			a->clone_name = optarg;
			break;
		case OPT_CLONE_FOR_BUGREPORT:
			a->clone_for_bugreport = true;
			break;
		case OPT_ROTATE_SECONDS:
			if (sv_parse_u64(sv_from_cstr(optarg), 7ull * 24 * 3600, &u) || u == 0)
				return fail(err, n, "--rotate-seconds needs a number of seconds, got '%s'",
					    optarg);
			a->rotate_seconds = u;
			break;
		case OPT_ROTATE_MB:
			if (sv_parse_u64(sv_from_cstr(optarg), 1024ull * 1024, &u) || u == 0)
				return fail(err, n, "--rotate-mb needs a number of MiB, got '%s'", optarg);
			a->rotate_mb = u;
			break;
		case OPT_KEEP:
			if (sv_parse_u64(sv_from_cstr(optarg), 1000000, &u) || u == 0)
				return fail(err, n, "--keep needs a number of files >= 1, got '%s'", optarg);
			a->keep = (unsigned)u;
			a->has_keep = true;
			break;
		case OPT_CPU_PROFILE:
			if (sv_parse_u64(sv_from_cstr(optarg), CMD_MAX_CPU_PROFILE_HZ, &u) || u == 0)
				return fail(err, n, "--cpu-profile needs a sampling frequency in Hz "
					    "(1 to %u), got '%s'", CMD_MAX_CPU_PROFILE_HZ, optarg);
			a->cpu_profile_hz = (unsigned)u;
			light = true;
			break;
		case OPT_VERSION:
			a->mode = CMD_MODE_VERSION;
			return 0;
		case 'h':
			a->mode = CMD_MODE_HELP;
			return 0;
		case OPT_ANDROID_ONLY:
			return fail(err, n, "%s is only available on Android", argv[optind - 1]);
		case ':':
			return fail(err, n, "option %s needs an argument", argv[optind - 1]);
		default:
			return fail(err, n, "unknown option '%s'; see --help", argv[optind - 1]);
		}
	}
	if (optind < argc) {
		int i;

		/* Options stop at the first category: one after them would be taken
		 * for a category and silently do nothing. */
		for (i = optind; i < argc; i++) {
			if (argv[i][0] == '-')
				return fail(err, n, "'%s' comes after the categories: put options "
					    "before them (perfetto [options] CATEGORY...)", argv[i]);
		}
		a->categories = argv + optind;
		a->n_categories = (size_t)(argc - optind);
		light = true;
	}
	if (a->stop_after_attach && a->mode != CMD_MODE_ATTACH)
		return fail(err, n, "--stop is only meaningful with --attach");
	return check_combination(a, light, err, n);
}

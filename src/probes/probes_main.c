// SPDX-License-Identifier: Apache-2.0
/*
 * probes_main.c - the `traced_probes` command line: Perfetto's flags
 * (--background, --version, --reset-ftrace, --cleanup-after-crash),
 * readiness through TRACED_PROBES_NOTIFY_FD once the data sources are
 * registered, and a shutdown on SIGTERM/SIGINT that puts ftrace back.
 */
#include "probes/probes.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/daemon.h"
#include "base/evloop.h"
#include "base/log.h"
#include "base/version.h"
#include "probes/ftrace_categories.h"
#include "probes/ftrace_source.h"

void probes_usage(FILE *f)
{
	fprintf(f,
		"Usage: traced_probes [options]\n"
		"Records what the kernel (ftrace) and /proc see for traced's sessions:\n"
		"data sources linux.ftrace, linux.process_stats, linux.sys_stats,\n"
		"linux.system_info. Connects to $PERFETTO_PRODUCER_SOCK_NAME.\n"
		"  --background           Fork into the background.\n"
		"  --reset-ftrace         Put back the ftrace state left by a traced_probes that\n"
		"                         died, then run.\n"
		"  --cleanup-after-crash  Only do that, and exit.\n"
		"  --version              Print the version and exit.\n"
		"Readiness: TRACED_PROBES_NOTIFY_FD=N gets '1' once the data sources are\n"
		"registered.\n\n"
		"Categories (FtraceConfig.atrace_categories, or perfetto/tracebox light mode\n"
		"words) and the ftrace events they enable:\n");
	ftrace_categories_print(f);
}

static void on_signal(int signo, void *user)
{
	LOG_I("received signal %d, stopping", signo);
	evloop_quit(user);
}

int probes_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"background", no_argument, NULL, 'b'},
		{"reset-ftrace", no_argument, NULL, 'r'},
		{"cleanup-after-crash", no_argument, NULL, 'c'},
		{"version", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct evloop *loop = NULL;
	struct probes *pr = NULL;
	bool bg = false, reset = false;
	int c, rc;

	log_set_prefix("traced_probes");
	log_init_from_env();
	optind = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			bg = true;
			break;
		case 'r':
			reset = true;
			break;
		case 'c':
			rc = ftrace_cleanup_after_crash(true);
			if (rc < 0) {
				fprintf(stderr, "traced_probes: cleanup failed: %s\n", strerror(-rc));
				return 1;
			}
			return 0;
		case 'v':
			printf("%s\n", PFC_VERSION_STRING);
			return 0;
		case 'h':
			probes_usage(stdout);
			return 0;
		default:
			probes_usage(stderr);
			return 1;
		}
	}
	if (reset && ftrace_cleanup_after_crash(false) < 0)
		LOG_W("--reset-ftrace: tracefs is not available");
	if (bg && daemon_detach() < 0) {
		fprintf(stderr, "traced_probes: cannot fork: %s\n", strerror(errno));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	rc = evloop_create(&loop);
	if (rc == 0)
		rc = probes_create(loop, &pr);
	if (rc < 0) {
		fprintf(stderr, "traced_probes: cannot start: %s\n", strerror(-rc));
		evloop_destroy(loop);
		return 1;
	}
	evloop_add_signal(loop, SIGTERM, on_signal, loop, NULL);
	evloop_add_signal(loop, SIGINT, on_signal, loop, NULL);
	evloop_run(loop);
	probes_destroy(pr);
	/* Tasks the producer posted still hold it: let them run and free it. */
	evloop_run_once(loop, 0);
	evloop_destroy(loop);
	return 0;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * perf_main.c - the `traced_perf` command line: Perfetto's flags
 * (--background, --version), readiness through TRACED_PERF_NOTIFY_FD once
 * linux.perf is registered, and a clean stop on SIGTERM/SIGINT.
 */
#include "perf/perf.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/daemon.h"
#include "base/evloop.h"
#include "base/log.h"
#include "base/version.h"
#include "perf/perf_config.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: traced_perf [options]\n"
		   "Serves the linux.perf data source (CPU profiling with perf events:\n"
		   "counters, callstacks) for traced's sessions. Connects to\n"
		   "$PERFETTO_PRODUCER_SOCK_NAME. Needs perf_event_open for all processes\n"
		   "(root, CAP_PERFMON, or perf_event_paranoid <= -1) to sample every CPU.\n"
		   "  --background  Fork into the background.\n"
		   "  --stack-kb N  User stack KiB each callstack sample copies for DWARF\n"
		   "                unwinding (4-64; default 63.75, as Perfetto's): less costs\n"
		   "                the sampled programs less, deeper stacks are cut short.\n"
		   "  --version     Print the version and exit.\n"
		   "Readiness: TRACED_PERF_NOTIFY_FD=N gets '1' once linux.perf is registered.\n");
}

static void on_signal(int signo, void *user)
{
	LOG_I("received signal %d, stopping", signo);
	evloop_quit(user);
}

int perf_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"background", no_argument, NULL, 'b'},
		{"stack-kb", required_argument, NULL, 's'},
		{"version", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct evloop *loop = NULL;
	struct perf_daemon *d = NULL;
	bool bg = false;
	int c, rc;

	log_set_prefix("traced_perf");
	log_init_from_env();
	optind = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			bg = true;
			break;
		case 's': {
			char *end;
			unsigned long kb = strtoul(optarg, &end, 10);

			if (*end || end == optarg || kb > 64 ||
			    perf_config_set_stack_user_bytes((uint32_t)(kb * 1024 > PERF_STACK_USER_BYTES
									   ? PERF_STACK_USER_BYTES
									   : kb * 1024))) {
				fprintf(stderr, "traced_perf: --stack-kb takes 4 to 64, not '%s'\n",
					optarg);
				return 1;
			}
			break;
		}
		case 'v':
			printf("%s\n", PFC_VERSION_STRING);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (bg && daemon_detach() < 0) {
		fprintf(stderr, "traced_perf: cannot fork: %s\n", strerror(errno));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	rc = evloop_create(&loop);
	if (rc == 0)
		rc = perf_daemon_create(loop, &d);
	if (rc < 0) {
		fprintf(stderr, "traced_perf: cannot start: %s\n", strerror(-rc));
		evloop_destroy(loop);
		return 1;
	}
	evloop_add_signal(loop, SIGTERM, on_signal, loop, NULL);
	evloop_add_signal(loop, SIGINT, on_signal, loop, NULL);
	evloop_run(loop);
	perf_daemon_destroy(d);
	evloop_run_once(loop, 0);
	evloop_destroy(loop);
	return 0;
}

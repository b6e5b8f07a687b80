// SPDX-License-Identifier: Apache-2.0
/*
 * hp_main.c - the `heapprofd` command line: central mode (listen on
 * $PERFETTO_HEAPPROFD_SOCK_NAME or /run/perfetto/heapprofd.sock, for
 * processes started with the preload library), or child mode, as the
 * client starts it (--exclusive-for-pid, --inherit-socket-fd). Readiness
 * through HEAPPROFD_NOTIFY_FD once android.heapprofd is registered.
 */
#include "heapprofd/heapprofd.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/daemon.h"
#include "base/evloop.h"
#include "base/log.h"
#include "base/version.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: heapprofd [options]\n"
		   "Serves the android.heapprofd data source (native heap profiles) for\n"
		   "traced's sessions, for processes run with libheapprofd_glibc_preload.so.\n"
		   "Connects to $PERFETTO_PRODUCER_SOCK_NAME.\n"
		   "  --socket NAME             Central mode: listen on NAME (a path or @abstract;\n"
		   "                            default $PERFETTO_HEAPPROFD_SOCK_NAME or\n"
		   "                            /run/perfetto/heapprofd.sock).\n"
		   "  --exclusive-for-pid PID   Child mode: serve only PID ...\n"
		   "  --inherit-socket-fd FD    ... whose client socket is FD (the preload\n"
		   "                            library starts heapprofd so).\n"
		   "  --background              Fork into the background.\n"
		   "  --version                 Print the version and exit.\n"
		   "Readiness: HEAPPROFD_NOTIFY_FD=N gets '1' once android.heapprofd is registered.\n");
}

static void on_signal(int signo, void *user)
{
	LOG_I("received signal %d, stopping", signo);
	evloop_quit(user);
}

int heapprofd_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"socket", required_argument, NULL, 's'},
		{"exclusive-for-pid", required_argument, NULL, 'p'},
		{"inherit-socket-fd", required_argument, NULL, 'f'},
		{"background", no_argument, NULL, 'b'},
		{"version", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct hp_daemon_opts o = {.inherit_fd = -1};
	struct evloop *loop = NULL;
	struct hp_daemon *d = NULL;
	bool bg = false;
	uint64_t v;
	int c, rc;

	log_set_prefix("heapprofd");
	log_init_from_env();
	optind = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			o.listen_name = optarg;
			break;
		case 'p':
			if (sv_parse_u64(sv_from_cstr(optarg), UINT32_MAX, &v) < 0 || !v) {
				fprintf(stderr, "heapprofd: --exclusive-for-pid takes a pid, not '%s'\n",
					optarg);
				return 1;
			}
			o.exclusive_pid = (uint32_t)v;
			break;
		case 'f':
			if (sv_parse_u64(sv_from_cstr(optarg), 65535, &v) < 0) {
				fprintf(stderr, "heapprofd: --inherit-socket-fd takes an fd, not '%s'\n",
					optarg);
				return 1;
			}
			o.inherit_fd = (int)v;
			break;
		case 'b':
			bg = true;
			break;
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
	if ((o.inherit_fd >= 0) != (o.exclusive_pid != 0)) {
		fprintf(stderr, "heapprofd: --exclusive-for-pid and --inherit-socket-fd go together\n");
		return 1;
	}
	if (bg && daemon_detach() < 0) {
		fprintf(stderr, "heapprofd: cannot fork: %s\n", strerror(errno));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	rc = evloop_create(&loop);
	if (rc == 0) {
		evloop_add_signal(loop, SIGTERM, on_signal, loop, NULL);
		evloop_add_signal(loop, SIGINT, on_signal, loop, NULL);
		rc = hp_daemon_create(loop, &o, &d);
	}
	if (rc < 0) {
		fprintf(stderr, "heapprofd: cannot start: %s\n", strerror(-rc));
		evloop_destroy(loop);
		return 1;
	}
	evloop_run(loop);
	hp_daemon_destroy(d);
	evloop_run_once(loop, 0);
	evloop_destroy(loop);
	return 0;
}

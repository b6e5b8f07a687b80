// SPDX-License-Identifier: Apache-2.0
/*
 * tracebox.c - every program in one binary. The applet is argv[0]'s base
 * name or argv[1] (traced, traced_probes, traced_relay, perfetto,
 * traced_perf, trigger_perfetto).
 * With no applet, tracebox is `perfetto` with its own traced, traced_probes
 * and traced_perf (idle until a session asks for linux.perf, so always
 * started): it starts them on private abstract sockets (unless
 * PERFETTO_*_SOCK_NAME are set), waits until they are ready, runs the
 * perfetto command and stops them afterwards.
 */
#include "tracebox/tracebox.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/compiler.h"
#include "base/subproc.h"
#include "base/version.h"
#include "heapprofd/heapprofd.h"
#include "perf/perf.h"
#include "perfetto_cmd/perfetto_cmd.h"
#include "probes/ftrace_categories.h"
#include "probes/probes.h"
#include "relay/relay.h"
#include "traced/traced.h"

/* How long tracebox waits for each daemon to be ready. */
#define TRACEBOX_READY_TIMEOUT_MS 10000
#define TRACEBOX_STOP_TIMEOUT_MS 5000

struct applet {
	const char *name;
	int (*main_fn)(int argc, char **argv);
};

static const struct applet k_applets[] = {
	{"traced", traced_main},
	{"traced_probes", probes_main},
	{"traced_perf", perf_main},
	{"heapprofd", heapprofd_main},
	{"traced_relay", relay_main},
	{"perfetto", perfetto_cmd_main},
	{"trigger_perfetto", trigger_perfetto_main},
};

static const struct applet *find_applet(const char *name)
{
	const char *base = strrchr(name, '/');
	size_t i;

	base = base ? base + 1 : name;
	for (i = 0; i < PFC_ARRAY_SIZE(k_applets); i++) {
		if (strcmp(base, k_applets[i].name) == 0)
			return &k_applets[i];
	}
	return NULL;
}

static void usage(FILE *f)
{
	size_t i;

	fprintf(f,
		"Usage: tracebox [APPLET] [args]\n"
		"       tracebox [perfetto args]   (starts its own traced, traced_probes, traced_perf)\n"
		"\n"
		"Applets:");
	for (i = 0; i < PFC_ARRAY_SIZE(k_applets); i++)
		fprintf(f, " %s", k_applets[i].name);
	fprintf(f, "\n\n"
		   "Examples:\n"
		   "  tracebox -o trace.pftrace -t 10s sched freq idle\n"
		   "  tracebox --txt -c config.pbtxt -o trace.pftrace\n"
		   "  tracebox traced --background\n"
		   "\n"
		   "Light-mode categories:\n");
	ftrace_categories_print(f);
}

/* Starts `<self> APPLET ARGS` with a readiness fd; waits until it is ready. */
static int start_daemon(const char *self, const char *applet, const char *extra_arg,
			const char *notify_env, struct subproc **out)
{
	const char *argv[4] = {self, applet, extra_arg, NULL};
	struct subproc_opts o;
	int rc;

	subproc_opts_init(&o);
	o.argv = argv;
	o.notify_env = notify_env;
	/* Its own process group: Ctrl-C in the terminal reaches only perfetto. */
	o.is_new_pgrp = true;
	rc = subproc_spawn(&o, out);
	if (rc < 0)
		return rc;
	rc = subproc_wait_ready(*out, TRACEBOX_READY_TIMEOUT_MS);
	if (rc < 0) {
		subproc_signal(*out, SIGKILL);
		subproc_wait(*out, TRACEBOX_STOP_TIMEOUT_MS, true, NULL);
		subproc_destroy(*out);
		*out = NULL;
	}
	return rc;
}

static void stop_daemon(struct subproc *p)
{
	if (!p)
		return;
	subproc_signal(p, SIGTERM);
	subproc_wait(p, TRACEBOX_STOP_TIMEOUT_MS, true, NULL);
	subproc_destroy(p);
}

/* The binary to re-execute for the daemons. */
static const char *self_path(const char *argv0)
{
	static char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	if (n > 0) {
		path[n] = '\0';
		return path;
	}
	return argv0;
}

static int autostart(int argc, char **argv)
{
	struct subproc *traced = NULL, *probes = NULL, *perf = NULL;
	const char *self = self_path(argv[0]);
	char prod[64], cons[64];
	int rc;

	/* Help, version and bad flags need no daemons. */
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "--version"))
		return perfetto_cmd_main(argc, argv);
	if (!getenv("PERFETTO_PRODUCER_SOCK_NAME")) {
		snprintf(prod, sizeof(prod), "@traced-p-%d", (int)getpid());
		setenv("PERFETTO_PRODUCER_SOCK_NAME", prod, 1);
	}
	if (!getenv("PERFETTO_CONSUMER_SOCK_NAME")) {
		snprintf(cons, sizeof(cons), "@traced-c-%d", (int)getpid());
		setenv("PERFETTO_CONSUMER_SOCK_NAME", cons, 1);
	}
	/* The daemons report only problems unless the user asked for more. */
	if (!getenv("PFC_LOG_LEVEL"))
		setenv("PFC_LOG_LEVEL", "warn", 1);
	rc = start_daemon(self, "traced", NULL, "TRACED_NOTIFY_FD", &traced);
	if (rc < 0) {
		fprintf(stderr, "tracebox: traced did not start: %s\n", strerror(-rc));
		return 1;
	}
	rc = start_daemon(self, "traced_probes", "--reset-ftrace", "TRACED_PROBES_NOTIFY_FD",
			  &probes);
	if (rc < 0) {
		fprintf(stderr, "tracebox: traced_probes did not start: %s\n", strerror(-rc));
		stop_daemon(traced);
		return 1;
	}
	/* Without it only linux.perf is missing: say so and go on. */
	rc = start_daemon(self, "traced_perf", NULL, "TRACED_PERF_NOTIFY_FD", &perf);
	if (rc < 0)
		fprintf(stderr, "tracebox: traced_perf did not start (%s): no linux.perf\n",
			strerror(-rc));
	argv[0] = (char *)"perfetto";
	rc = perfetto_cmd_main(argc, argv);
	/* Probes first: they put ftrace back while traced is still there. */
	stop_daemon(perf);
	stop_daemon(probes);
	stop_daemon(traced);
	return rc;
}

int tracebox_main(int argc, char **argv)
{
	const struct applet *a = find_applet(argv[0]);

	if (a)
		return a->main_fn(argc, argv);
	if (argc >= 2 && (a = find_applet(argv[1])) != NULL)
		return a->main_fn(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "--list-applets")) {
		size_t i;

		for (i = 0; i < PFC_ARRAY_SIZE(k_applets); i++)
			printf("%s\n", k_applets[i].name);
		return 0;
	}
	return autostart(argc, argv);
}

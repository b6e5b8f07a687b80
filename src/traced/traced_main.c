// SPDX-License-Identifier: Apache-2.0
/*
 * traced_main.c - the `traced` command line: socket names from the
 * environment (a comma-separated producer list), Perfetto's flags
 * (--background, --version, --set-socket-permissions,
 * --enable-relay-endpoint[-on]), readiness through TRACED_NOTIFY_FD, and a
 * clean shutdown on SIGTERM/SIGINT.
 */
#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/daemon.h"
#include "base/evloop.h"
#include "base/log.h"
#include "base/sock_default.h"
#include "base/subproc.h"
#include "base/version.h"
#include "traced/traced.h"

#define PRODUCER_LIST_MAX 1024

static struct {
	bool background;
	bool relay_all;
	const char *relay_on[SVC_MAX_PRODUCER_SOCKETS];
	size_t n_relay_on;
	const char *permissions;
} g_args;

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: traced [options]\n"
		"  --background                  Fork into the background; prints the PID.\n"
		"  --version                     Print the version and exit.\n"
		"  --set-socket-permissions PROD_GROUP:PROD_MODE:CONS_GROUP:CONS_MODE\n"
		"                                chgrp/chmod the producer and consumer sockets\n"
		"                                (e.g. traced-producer:0660:traced-consumer:0660).\n"
		"  --enable-relay-endpoint       Serve RelayPort (traced_relay) on every producer socket.\n"
		"  --enable-relay-endpoint-on S  Serve RelayPort only on producer socket S.\n"
		"Environment: PERFETTO_PRODUCER_SOCK_NAME (comma-separated list allowed),\n"
		"PERFETTO_CONSUMER_SOCK_NAME, TRACED_NOTIFY_FD.\n");
}

static int parse_mode(const char *s, mode_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 8);
	if (errno || end == s || *end || v > 07777)
		return -EINVAL;
	*out = (mode_t)v;
	return 0;
}

/* "pgroup:pmode:cgroup:cmode", exactly four non-empty parts. */
static int parse_permissions(char *spec, struct svc_options *o)
{
	char *parts[4], *save = NULL, *tok;
	int n = 0;

	for (tok = strtok_r(spec, ":", &save); tok && n < 5; tok = strtok_r(NULL, ":", &save))
		parts[n < 4 ? n : 3] = tok, n++;
	if (n != 4 || parse_mode(parts[1], &o->producer_mode) || parse_mode(parts[3], &o->consumer_mode))
		return -EINVAL;
	o->producer_group = parts[0];
	o->consumer_group = parts[2];
	o->has_permissions = true;
	return 0;
}

static void on_signal(int signo, void *user)
{
	LOG_I("received signal %d, shutting down", signo);
	evloop_quit(user);
}

int traced_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"background", no_argument, NULL, 'b'},
		{"version", no_argument, NULL, 'v'},
		{"set-socket-permissions", required_argument, NULL, 'p'},
		{"enable-relay-endpoint", no_argument, NULL, 'r'},
		{"enable-relay-endpoint-on", required_argument, NULL, 'R'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	char producer_list[PRODUCER_LIST_MAX], *save = NULL, *tok;
	struct svc_options o;
	struct evloop *loop = NULL;
	struct svc *svc = NULL;
	int c, rc, ready_fd = -1;
	size_t i, k;

	/* IPC frames are decoded into ~128 KiB allocations; keep them on the
	 * heap instead of an mmap/munmap (and page faults) per frame. */
	mallopt(M_MMAP_THRESHOLD, 8 << 20);
	log_set_prefix("traced");
	log_init_from_env();
	memset(&o, 0, sizeof(o));
	optind = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			g_args.background = true;
			break;
		case 'v':
			printf("%s\n", PFC_VERSION_STRING);
			return 0;
		case 'p':
			g_args.permissions = optarg;
			break;
		case 'r':
			g_args.relay_all = true;
			break;
		case 'R':
			if (g_args.n_relay_on < SVC_MAX_PRODUCER_SOCKETS)
				g_args.relay_on[g_args.n_relay_on++] = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (g_args.permissions) {
		static char spec[256];

		snprintf(spec, sizeof(spec), "%s", g_args.permissions);
		if (parse_permissions(spec, &o) < 0) {
			fprintf(stderr, "traced: --set-socket-permissions wants "
					"PROD_GROUP:PROD_MODE:CONS_GROUP:CONS_MODE, got '%s'\n",
				g_args.permissions);
			return 1;
		}
	}
	if (snprintf(producer_list, sizeof(producer_list), "%s", sock_default_producer()) >=
	    (int)sizeof(producer_list)) {
		fprintf(stderr, "traced: PERFETTO_PRODUCER_SOCK_NAME is too long\n");
		return 1;
	}
	for (tok = strtok_r(producer_list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!*tok)
			continue;
		if (o.n_producer_socks == SVC_MAX_PRODUCER_SOCKETS) {
			fprintf(stderr, "traced: at most %d producer sockets\n", SVC_MAX_PRODUCER_SOCKETS);
			return 1;
		}
		o.producer_socks[o.n_producer_socks++] = tok;
	}
	o.consumer_sock = sock_default_consumer();
	for (k = 0; k < g_args.n_relay_on; k++) {
		for (i = 0; i < o.n_producer_socks; i++) {
			if (strcmp(o.producer_socks[i], g_args.relay_on[k]) == 0)
				break;
		}
		if (i == o.n_producer_socks) {
			fprintf(stderr, "traced: --enable-relay-endpoint-on %s is not one of the producer "
					"sockets\n", g_args.relay_on[k]);
			return 1;
		}
		o.relay_mask |= 1u << i;
	}
	if (g_args.relay_all)
		o.relay_mask = (1u << o.n_producer_socks) - 1;

	if (g_args.background && (rc = daemon_fork(&ready_fd)) < 0) {
		fprintf(stderr, "traced: cannot fork: %s\n", strerror(-rc));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	rc = evloop_create(&loop);
	if (rc == 0)
		rc = svc_create(loop, &o, &svc);
	if (rc < 0) {
		fprintf(stderr, "traced: cannot start: %s\n", strerror(-rc));
		evloop_destroy(loop);
		return 1;
	}
	evloop_add_signal(loop, SIGTERM, on_signal, loop, NULL);
	evloop_add_signal(loop, SIGINT, on_signal, loop, NULL);
	LOG_I("Started traced, listening on %s %s", o.producer_socks[0], o.consumer_sock);
	notify_ready_from_env("TRACED_NOTIFY_FD");
	daemon_ready(ready_fd);
	evloop_run(loop);
	svc_destroy(svc);
	evloop_destroy(loop);
	for (i = 0; i < o.n_producer_socks; i++) {
		if (o.producer_socks[i][0] == '/')
			unlink(o.producer_socks[i]);
	}
	if (o.consumer_sock[0] == '/')
		unlink(o.consumer_sock);
	return 0;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * relay_main.c - the `traced_relay` command line, as Perfetto's
 * RelayServiceMain: flags (--background, --set-socket-permissions
 * GROUP:MODE, --version, --help), PERFETTO_RELAY_SOCK_NAME (required),
 * listening on this machine's producer socket unless a traced serves it,
 * readiness through TRACED_RELAY_NOTIFY_FD, and a clean exit on SIGTERM or
 * SIGINT. The proxy and the control connection share one event loop.
 */
#include "relay/relay.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/daemon.h"
#include "base/evloop.h"
#include "base/log.h"
#include "base/sock.h"
#include "base/sock_default.h"
#include "base/subproc.h"
#include "base/version.h"
#include "relay/relay_int.h"

/* Longest GROUP:MODE argument. */
#define PERMISSIONS_ARG_MAX 256

static struct {
	bool background;
	bool has_permissions;
	char group[PERMISSIONS_ARG_MAX];
	mode_t mode;
} g_args;

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"Usage: %s [OPTION]...\n"
		"Forwards the producers of this machine to the tracing service (traced) of\n"
		"another machine, the host. It takes the place of traced on this machine and\n"
		"cannot run next to it: both serve the local producer socket.\n"
		"\n"
		"Options:\n"
		"  --background            Detach; print the PID once the socket listens.\n"
		"  --set-socket-permissions GROUP:MODE\n"
		"                          Give the listening socket file this group (name or\n"
		"                          id) and mode (4 octal digits), e.g.\n"
		"                          traced-producer:0660.\n"
		"  --version               Print the version and exit.\n"
		"  -h, --help              Print this text and exit.\n"
		"\n"
		"Environment:\n"
		"  PERFETTO_RELAY_SOCK_NAME     Required: the address of the host's traced\n"
		"                               relay endpoint, such as 192.168.0.1:20001 (TCP)\n"
		"                               or vsock://2:20001 (vsock: CID 2 is the host).\n"
		"  PERFETTO_PRODUCER_SOCK_NAME  The socket local producers connect to (default\n"
		"                               /run/perfetto/traced-producer.sock, or\n"
		"                               /tmp/perfetto-producer without /run/perfetto).\n"
		"  PERFETTO_MACHINE_NAME        This machine's name in traces and in\n"
		"                               machine_name_filter (default: uname -s).\n"
		"  TRACED_RELAY_NOTIFY_FD       An fd that gets \"1\" once the socket listens.\n"
		"\n"
		"Example:\n"
		"  PERFETTO_RELAY_SOCK_NAME=vsock://2:20001 %s --background\n",
		prog, prog);
}

/* "GROUP:MODE": exactly two non-empty parts, MODE four octal digits. */
static int parse_permissions(const char *arg)
{
	const char *colon = strchr(arg, ':');
	struct strview mode;
	uint64_t v;
	size_t i;

	if (!colon || colon == arg || strchr(colon + 1, ':') || !colon[1])
		return -EINVAL;
	if ((size_t)(colon - arg) >= sizeof(g_args.group))
		return -EINVAL;
	mode = sv_from_cstr(colon + 1);
	if (mode.len != 4)
		return -EINVAL;
	for (i = 0; i < mode.len; i++) {
		if (mode.ptr[i] < '0' || mode.ptr[i] > '7')
			return -EINVAL;
	}
	v = (uint64_t)(mode.ptr[0] - '0') << 9 | (uint64_t)(mode.ptr[1] - '0') << 6 |
	    (uint64_t)(mode.ptr[2] - '0') << 3 | (uint64_t)(mode.ptr[3] - '0');
	memcpy(g_args.group, arg, (size_t)(colon - arg));
	g_args.group[colon - arg] = '\0';
	g_args.mode = (mode_t)v;
	g_args.has_permissions = true;
	return 0;
}

/* True for a UNIX socket with a file (not abstract, not TCP/vsock). */
static bool is_path_socket(const char *name)
{
	struct sock_addr a;

	if (name[0] == '@' || sock_addr_parse(name, &a) < 0 || a.family != AF_UNIX)
		return false;
	return ((const struct sockaddr_un *)&a.ss)->sun_path[0] != '\0';
}

static int apply_permissions(const char *path)
{
	struct group *gr;
	uint64_t gid;
	int rc;

	rc = sv_parse_u64(sv_from_cstr(g_args.group), (gid_t)-1 - 1, &gid);
	if (rc < 0) {
		gr = getgrnam(g_args.group);
		if (!gr) {
			fprintf(stderr, "traced_relay: --set-socket-permissions: unknown group '%s'\n",
				g_args.group);
			return -ENOENT;
		}
		gid = gr->gr_gid;
	}
	if (chown(path, (uid_t)-1, (gid_t)gid) < 0) {
		rc = -errno;
		fprintf(stderr, "traced_relay: cannot change the group of %s to %s: %s\n", path,
			g_args.group, strerror(-rc));
		return rc;
	}
	if (chmod(path, g_args.mode) < 0) {
		rc = -errno;
		fprintf(stderr, "traced_relay: cannot change the mode of %s: %s\n", path,
			strerror(-rc));
		return rc;
	}
	return 0;
}

static void on_signal(int signo, void *user)
{
	LOG_I("received signal %d, exiting", signo);
	evloop_quit(user);
}

/* Listens on @name and serves until a signal; the CLI's checks are done. */
static int run(const char *listen_name, const char *remote, const struct relay_identity *id)
{
	struct relay_proxy_options po;
	struct relay_client_options co;
	struct relay_proxy *proxy = NULL;
	struct relay_client *client = NULL;
	struct evloop *loop = NULL;
	bool is_path = is_path_socket(listen_name);
	int rc, listen_fd = -1, ready_fd = -1, status = 1;

	if (g_args.background && (rc = daemon_fork(&ready_fd)) < 0) {
		fprintf(stderr, "traced_relay: cannot fork: %s\n", strerror(-rc));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	rc = relay_listen(listen_name, &listen_fd);
	if (rc == -EBUSY) {
		fprintf(stderr,
			"traced_relay: %s is already served by another process, probably traced.\n"
			"traced_relay takes traced's place on a machine that forwards its producers "
			"to another one; stop traced first (or use another "
			"PERFETTO_PRODUCER_SOCK_NAME).\n",
			listen_name);
		return 1;
	}
	if (rc < 0) {
		fprintf(stderr, "traced_relay: cannot listen on %s: %s\n", listen_name, strerror(-rc));
		return 1;
	}
	/* Listening created the socket file, so its permissions come after. */
	if (g_args.has_permissions && !is_path)
		LOG_W("--set-socket-permissions: %s has no socket file, ignoring", listen_name);
	else if (g_args.has_permissions && apply_permissions(listen_name) < 0)
		goto out;
	rc = evloop_create(&loop);
	if (rc < 0)
		goto fail;
	memset(&po, 0, sizeof(po));
	po.remote_name = remote;
	po.identity = id;
	rc = relay_proxy_create(loop, listen_fd, &po, &proxy);
	listen_fd = -1; /* the proxy owns it now, also on failure */
	if (rc < 0)
		goto fail;
	memset(&co, 0, sizeof(co));
	co.remote_name = remote;
	co.identity = id;
	rc = relay_client_create(loop, &co, &client);
	if (rc < 0)
		goto fail;
	evloop_add_signal(loop, SIGTERM, on_signal, loop, NULL);
	evloop_add_signal(loop, SIGINT, on_signal, loop, NULL);
	LOG_I("Started traced_relay, listening on %s, forwarding to %s", listen_name, remote);
	rc = notify_ready_from_env("TRACED_RELAY_NOTIFY_FD");
	if (rc < 0 && rc != -ENOENT)
		LOG_W("cannot write to TRACED_RELAY_NOTIFY_FD: %s, ignoring", strerror(-rc));
	daemon_ready(ready_fd);
	ready_fd = -1;
	rc = evloop_run(loop);
	status = rc < 0 ? 1 : 0;
	goto out;
fail:
	fprintf(stderr, "traced_relay: cannot start: %s\n", strerror(-rc));
out:
	relay_client_destroy(client);
	relay_proxy_destroy(proxy);
	evloop_destroy(loop);
	if (listen_fd >= 0)
		close(listen_fd);
	if (ready_fd >= 0)
		close(ready_fd);
	if (is_path)
		unlink(listen_name);
	return status;
}

int relay_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"background", no_argument, NULL, 'b'},
		{"version", no_argument, NULL, 'v'},
		{"set-socket-permissions", required_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *prog = argc > 0 && argv[0] ? argv[0] : "traced_relay";
	const char *remote, *listen_name;
	struct relay_identity id;
	int c, rc;

	log_set_prefix("traced_relay");
	log_init_from_env();
	memset(&g_args, 0, sizeof(g_args));
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
			if (parse_permissions(optarg) < 0) {
				fprintf(stderr,
					"traced_relay: --set-socket-permissions wants GROUP:MODE "
					"(e.g. traced-producer:0660), got '%s'\n",
					optarg);
				return 1;
			}
			break;
		case 'h':
			usage(stdout, prog);
			return 0;
		default:
			usage(stderr, prog);
			return 1;
		}
	}
	remote = getenv("PERFETTO_RELAY_SOCK_NAME");
	if (!remote || !*remote) {
		usage(stderr, prog);
		return 1;
	}
	listen_name = sock_default_producer();
	rc = relay_identity_init(&id, NULL);
	if (rc < 0) {
		fprintf(stderr, "traced_relay: PERFETTO_MACHINE_NAME is longer than %d bytes\n",
			RELAY_MACHINE_NAME_MAX - 1);
		return 1;
	}
	return run(listen_name, remote, &id);
}

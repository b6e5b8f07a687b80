// SPDX-License-Identifier: Apache-2.0
/*
 * fake_relay.c - a scripted RelayPort client for the service tests
 * (tests/integration/relay_port.sh). It plays one traced_relay control
 * connection: SetPeerIdentity, bind RelayPort, InitRelay with a SystemInfo
 * the test chooses, then clock-sync rounds whose client readings can be
 * shifted by a known offset, so a test knows the answer. Or it misbehaves on
 * a raw connection, to check the service keeps serving everyone else.
 *
 *   fake_relay --sock NAME [--hint H] [--name N] [--no-identity]
 *              [--sysname S] [--release R] [--cpus N]
 *              [--rounds N] [--offset-ns X] [--interval-ms MS] [--hold]
 *   fake_relay --sock NAME --fault garbage|stall|oversized [--hold-ms MS]
 *
 * Normal mode writes "1" to $FAKE_RELAY_NOTIFY_FD after --rounds rounds and
 * prints "next_sync_delay_ms=<v>" (the host's pacing, 0 if absent); with
 * --hold it keeps running rounds until SIGTERM. Exit 0 on success, 1 on
 * any failure. Faults exit 0 once the bytes are sent and held.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/evloop.h"
#include "base/sock.h"
#include "base/subproc.h"
#include "common/system_info.pb-c.h"
#include "ipc/ipc.h"
#include "ipc/relay_port.pb-c.h"

#define NOTIFY_ENV "FAKE_RELAY_NOTIFY_FD"

static struct {
	const char *sock;
	const char *hint;
	const char *name;
	bool no_identity;
	const char *sysname;
	const char *release;
	unsigned cpus;
	unsigned rounds;
	int64_t offset_ns;
	unsigned interval_ms;
	bool hold;
	const char *fault;
	unsigned hold_ms;
} g_args = {.hint = "fake-relay-boot-id", .name = "fake", .sysname = "FakeOS",
	    .release = "0.0-fake", .cpus = 3, .rounds = 1, .interval_ms = 0, .hold_ms = 2000};

struct app {
	struct evloop *loop;
	struct ipc_client *c;
	struct ipc_binding *b;
	unsigned rounds_done;
	bool in_update;
	uint32_t host_delay_ms;
	int exit_code;
	bool notified;
};

static void usage(void)
{
	fprintf(stderr, "usage: fake_relay --sock NAME [--hint H] [--name N] [--no-identity]\n"
			"  [--sysname S] [--release R] [--cpus N] [--rounds N]\n"
			"  [--offset-ns X] [--interval-ms MS] [--hold]\n"
			"       fake_relay --sock NAME --fault garbage|stall|oversized [--hold-ms MS]\n");
	exit(2);
}

static void parse_args(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--no-identity")) {
			g_args.no_identity = true;
			continue;
		}
		if (!strcmp(a, "--hold")) {
			g_args.hold = true;
			continue;
		}
		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--sock"))
			g_args.sock = v;
		else if (!strcmp(a, "--hint"))
			g_args.hint = v;
		else if (!strcmp(a, "--name"))
			g_args.name = v;
		else if (!strcmp(a, "--sysname"))
			g_args.sysname = v;
		else if (!strcmp(a, "--release"))
			g_args.release = v;
		else if (!strcmp(a, "--cpus"))
			g_args.cpus = (unsigned)strtoul(v, NULL, 10);
		else if (!strcmp(a, "--rounds"))
			g_args.rounds = (unsigned)strtoul(v, NULL, 10);
		else if (!strcmp(a, "--offset-ns"))
			g_args.offset_ns = strtoll(v, NULL, 10);
		else if (!strcmp(a, "--interval-ms"))
			g_args.interval_ms = (unsigned)strtoul(v, NULL, 10);
		else if (!strcmp(a, "--fault"))
			g_args.fault = v;
		else if (!strcmp(a, "--hold-ms"))
			g_args.hold_ms = (unsigned)strtoul(v, NULL, 10);
		else
			usage();
	}
	if (!g_args.sock)
		usage();
}

/* ----------------------------------------------------------- faults ---- */

static int send_all(int fd, const void *data, size_t len)
{
	const uint8_t *p = data;

	while (len) {
		ssize_t n = sock_send(fd, p, len);

		if (n < 0)
			return (int)n;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int run_fault(void)
{
	/* IPCFrame{request_id: 0, set_peer_identity{machine_id_hint: "fault"}}. */
	static const uint8_t k_identity[] = {0x0d, 0, 0, 0, 0x10, 0x00, 0x42, 0x07,
					     0x1a, 0x05, 'f', 'a', 'u', 'l', 't'};
	uint8_t buf[4096];
	int fd = -1, rc;

	rc = sock_connect(g_args.sock, &fd);
	if (rc < 0) {
		fprintf(stderr, "fake_relay: connect %s: %s\n", g_args.sock, strerror(-rc));
		return 1;
	}
	rc = send_all(fd, k_identity, sizeof(k_identity));
	if (!rc && !strcmp(g_args.fault, "garbage")) {
		/* A well-sized frame that is not an IPCFrame. */
		memset(buf, 0xff, 64);
		buf[0] = 60, buf[1] = buf[2] = buf[3] = 0;
		rc = send_all(fd, buf, 64);
	} else if (!rc && !strcmp(g_args.fault, "stall")) {
		/* A header announcing 1000 bytes, then only 10 of them. */
		memset(buf, 0, sizeof(buf));
		buf[0] = 0xe8, buf[1] = 0x03;
		rc = send_all(fd, buf, 14);
	} else if (!rc && !strcmp(g_args.fault, "oversized")) {
		/* A header announcing 1 MiB, then 64 KiB of it. */
		memset(buf, 0x5a, sizeof(buf));
		buf[0] = 0, buf[1] = 0, buf[2] = 0x10, buf[3] = 0;
		for (size_t i = 0; i < 16 && !rc; i++)
			rc = send_all(fd, buf, sizeof(buf));
		/* The host may close first; that is the expected outcome. */
		if (rc == -EPIPE || rc == -ECONNRESET)
			rc = 0;
	} else if (!rc) {
		fprintf(stderr, "fake_relay: unknown fault '%s'\n", g_args.fault);
		close(fd);
		return 2;
	}
	if (rc < 0) {
		fprintf(stderr, "fake_relay: send: %s\n", strerror(-rc));
		close(fd);
		return 1;
	}
	notify_ready_from_env(NOTIFY_ENV);
	usleep((useconds_t)g_args.hold_ms * 1000);
	close(fd);
	return 0;
}

/* ----------------------------------------------------------- rounds ---- */

static void fail(struct app *a, const char *what)
{
	fprintf(stderr, "fake_relay: %s\n", what);
	a->exit_code = 1;
	evloop_quit(a->loop);
}

static void send_sync(struct app *a, bool update);

static void on_sync_reply(const struct ipc_reply *r, void *user)
{
	struct app *a = user;
	const Perfetto__Protos__SyncClockResponse *resp = (const void *)r->msg;

	if (!r->success) {
		fail(a, "SyncClock failed");
		return;
	}
	if (!a->in_update) {
		send_sync(a, true);
		return;
	}
	a->host_delay_ms = resp && resp->has_next_sync_delay_ms ? resp->next_sync_delay_ms : 0;
	a->rounds_done++;
	if (a->rounds_done == g_args.rounds && !a->notified) {
		a->notified = true;
		printf("next_sync_delay_ms=%u\n", a->host_delay_ms);
		fflush(stdout);
		notify_ready_from_env(NOTIFY_ENV);
		if (!g_args.hold) {
			evloop_quit(a->loop);
			return;
		}
	}
	if (g_args.interval_ms)
		usleep((useconds_t)g_args.interval_ms * 1000);
	send_sync(a, false);
}

static void send_sync(struct app *a, bool update)
{
	Perfetto__Protos__SyncClockRequest req = PERFETTO__PROTOS__SYNC_CLOCK_REQUEST__INIT;
	Perfetto__Protos__SyncClockRequest__Clock cl[CLOCK_SNAPSHOT_CLOCKS], *ptrs[CLOCK_SNAPSHOT_CLOCKS];
	struct clock_snapshot cs;
	size_t i;

	clock_snapshot_capture(&cs);
	for (i = 0; i < CLOCK_SNAPSHOT_CLOCKS; i++) {
		perfetto__protos__sync_clock_request__clock__init(&cl[i]);
		cl[i].has_clock_id = 1;
		cl[i].clock_id = cs.clocks[i].id;
		cl[i].has_timestamp = 1;
		cl[i].timestamp = (uint64_t)((int64_t)cs.clocks[i].ts_ns + g_args.offset_ns);
		ptrs[i] = &cl[i];
	}
	req.has_phase = 1;
	req.phase = update ? PERFETTO__PROTOS__SYNC_CLOCK_REQUEST__PHASE__UPDATE
			   : PERFETTO__PROTOS__SYNC_CLOCK_REQUEST__PHASE__PING;
	req.n_clocks = CLOCK_SNAPSHOT_CLOCKS;
	req.clocks = ptrs;
	a->in_update = update;
	if (ipc_client_invoke(a->c, a->b, "SyncClock", &req.base, -1, on_sync_reply, a, false) < 0)
		fail(a, "cannot invoke SyncClock");
}

static void on_init_reply(const struct ipc_reply *r, void *user)
{
	struct app *a = user;

	if (!r->success) {
		fail(a, "InitRelay failed");
		return;
	}
	if (g_args.rounds == 0) {
		notify_ready_from_env(NOTIFY_ENV);
		if (!g_args.hold)
			evloop_quit(a->loop);
		return;
	}
	send_sync(a, false);
}

static void on_bound(struct ipc_binding *b, bool success, void *user)
{
	struct app *a = user;
	Perfetto__Protos__InitRelayRequest req = PERFETTO__PROTOS__INIT_RELAY_REQUEST__INIT;
	Perfetto__Protos__SystemInfo si = PERFETTO__PROTOS__SYSTEM_INFO__INIT;
	Perfetto__Protos__Utsname un = PERFETTO__PROTOS__UTSNAME__INIT;

	(void)b;
	if (!success) {
		fail(a, "RelayPort is not served on this socket");
		return;
	}
	un.sysname = (char *)g_args.sysname;
	un.release = (char *)g_args.release;
	un.version = (char *)"#1 fake";
	un.machine = (char *)"x86_64";
	si.utsname = &un;
	si.has_num_cpus = 1;
	si.num_cpus = g_args.cpus;
	si.tracing_service_version = (char *)"fake_relay";
	req.system_info = &si;
	if (ipc_client_invoke(a->c, a->b, "InitRelay", &req.base, -1, on_init_reply, a, false) < 0)
		fail(a, "cannot invoke InitRelay");
}

static void on_disconnected(struct ipc_client *c, int err, void *user)
{
	struct app *a = user;

	(void)c;
	if (a->exit_code == 0 && !(g_args.hold && a->notified))
		fprintf(stderr, "fake_relay: disconnected: %s\n", strerror(err ? -err : EPIPE));
	if (!(g_args.hold && a->notified))
		a->exit_code = 1;
	evloop_quit(a->loop);
}

static void on_signal(int signo, void *user)
{
	(void)signo;
	evloop_quit(user);
}

int main(int argc, char **argv)
{
	struct ipc_client_callbacks cbs = {.on_disconnected = on_disconnected};
	struct app a = {0};
	int rc;

	parse_args(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	if (g_args.fault)
		return run_fault();
	if (evloop_create(&a.loop) < 0)
		return 1;
	evloop_add_signal(a.loop, SIGTERM, on_signal, a.loop, NULL);
	rc = ipc_client_connect(a.loop, g_args.sock, &cbs, &a, &a.c);
	if (rc < 0) {
		fprintf(stderr, "fake_relay: connect %s: %s\n", g_args.sock, strerror(-rc));
		return 1;
	}
	if (!g_args.no_identity &&
	    ipc_client_send_peer_identity(a.c, (int32_t)getpid(), (int32_t)geteuid(), g_args.hint,
					  g_args.name) < 0) {
		fprintf(stderr, "fake_relay: cannot queue SetPeerIdentity\n");
		return 1;
	}
	if (ipc_client_bind(a.c, &perfetto__protos__relay_port__descriptor, on_bound, &a, &a.b) < 0) {
		fprintf(stderr, "fake_relay: cannot bind RelayPort\n");
		return 1;
	}
	evloop_run(a.loop);
	ipc_client_destroy(a.c);
	evloop_destroy(a.loop);
	return a.exit_code;
}

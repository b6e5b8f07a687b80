// SPDX-License-Identifier: Apache-2.0
/*
 * relay_test.c - unit tests for src/relay: the identity (frame bytes,
 * boot id, pseudo boot id, machine name, SystemInfo), clock capture, the
 * pacing and backoff rules, the control connection against a fake host
 * (an ipc_host on TCP loopback serving RelayPort), the byte proxy against
 * raw loopback and abstract sockets (back-pressure, fd dropping, limits,
 * closing), and the command line. Everything runs in this process on one
 * evloop, except the command line cases that need a daemon (forked).
 */
#include "relay/relay.h"
#include "relay/relay_int.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/evloop.h"
#include "base/file.h"
#include "base/hash.h"
#include "base/log.h"
#include "base/sock.h"
#include "base/version.h"
#include "common/builtin_clock.pb-c.h"
#include "harness.h"
#include "ipc/producer_port.pb-c.h"

/* ----------------------------------------------------------- helpers --- */

static uint64_t now_ms(void)
{
	return clock_monotonic_ns() / NS_PER_MS;
}

static void pump_for(struct evloop *loop, int ms)
{
	uint64_t end = now_ms() + (uint64_t)ms;

	while (now_ms() < end)
		evloop_run_once(loop, 5);
}

/* Runs the loop until *v >= want or @ms pass; returns *v. */
static int pump_until(struct evloop *loop, const int *v, int want, int ms)
{
	uint64_t end = now_ms() + (uint64_t)ms;

	while (*v < want && now_ms() < end)
		ASSERT_GE(evloop_run_once(loop, 5), 0);
	return *v;
}

static void test_identity(struct relay_identity *id)
{
	memset(id, 0, sizeof(*id));
	snprintf(id->machine_id_hint, sizeof(id->machine_id_hint), "%s", "test-boot-id-42");
	snprintf(id->machine_name, sizeof(id->machine_name), "%s", "guest-test");
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	ASSERT_GE(fd, 0);
	ASSERT_EQ(file_write_all(fd, text, strlen(text)), 0);
	close(fd);
}

/* A unique abstract socket name for this test process. */
static const char *abstract_name(const char *tag)
{
	static char names[4][64];
	static int next;
	char *n = names[next++ % 4];

	snprintf(n, 64, "@pfc-relay-test-%d-%s", (int)getpid(), tag);
	return n;
}

/* ---------------------------------------------------------- identity --- */

TEST(identity_frame_bytes)
{
	static const uint8_t want[] = {
		0x1c, 0x00, 0x00, 0x00,             /* payload length, little-endian */
		0x10, 0x00,                         /* request_id: 0, present */
		0x42, 0x18,                         /* set_peer_identity (8), 24 bytes */
		0x08, 0xd2, 0x09,                   /* pid 1234 */
		0x10, 0xae, 0x2c,                   /* uid 5678 */
		0x1a, 0x09, 'b', 'o', 'o', 't', '-', '1', '2', '3', '4',
		0x22, 0x05, 'g', 'u', 'e', 's', 't',
	};
	static const uint8_t want_unknown[] = {
		0x1e, 0x00, 0x00, 0x00, 0x10, 0x00, 0x42, 0x1a,
		0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, /* pid -1 */
		0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, /* uid -1 */
		0x1a, 0x00, 0x22, 0x00, /* empty strings are still sent */
	};
	struct relay_identity id;
	struct buf b = BUF_INIT;

	memset(&id, 0, sizeof(id));
	strcpy(id.machine_id_hint, "boot-1234");
	strcpy(id.machine_name, "guest");
	ASSERT_EQ(relay_peer_identity_frame(1234, 5678, &id, &b), (int)sizeof(want));
	ASSERT_EQ(b.len, sizeof(want));
	ASSERT_MEMEQ(b.data, want, sizeof(want));
	buf_reset(&b);
	memset(&id, 0, sizeof(id));
	ASSERT_EQ(relay_peer_identity_frame(-1, -1, &id, &b), (int)sizeof(want_unknown));
	ASSERT_MEMEQ(b.data, want_unknown, sizeof(want_unknown));
	buf_fini(&b);
}

TEST(identity_boot_id_strips_one_newline)
{
	static const struct {
		const char *content, *want;
	} cases[] = {
		{"0d6f0e58-1c7b-4a1e-9f0a-3b5c2d1e0f99\n", "0d6f0e58-1c7b-4a1e-9f0a-3b5c2d1e0f99"},
		{"no-newline", "no-newline"},
		{"two\n\n", "two\n"},
		{"", ""},
		{"\n", ""},
	};
	char path[512], out[RELAY_MACHINE_ID_HINT_MAX];
	size_t i;

	snprintf(path, sizeof(path), "%s/boot_id", test_tmpdir());
	for (i = 0; i < PFC_ARRAY_SIZE(cases); i++) {
		write_file(path, cases[i].content);
		ASSERT_EQ(relay_machine_id_hint(path, out, sizeof(out)), 0);
		ASSERT_STREQ(out, cases[i].want);
	}
	/* Too small a destination is an error, not a truncated hint. */
	write_file(path, "0123456789\n");
	ASSERT_EQ(relay_machine_id_hint(path, out, 5), -ENAMETOOLONG);
}

TEST(identity_pseudo_boot_id_vector)
{
	struct statx_timestamp bt;
	struct utsname u;
	char out[32];

	/* Expected value computed independently (FNV-1a 64 over the 16
	 * timestamp bytes, then the 390 utsname bytes, NUL-padded). */
	ASSERT_EQ(sizeof(bt), 16);
	ASSERT_EQ(sizeof(u), 390);
	memset(&bt, 0, sizeof(bt));
	memset(&u, 0, sizeof(u));
	bt.tv_sec = 1700000000;
	bt.tv_nsec = 123456789;
	snprintf(u.sysname, sizeof(u.sysname), "%s", "Linux");
	snprintf(u.nodename, sizeof(u.nodename), "%s", "vm1");
	snprintf(u.release, sizeof(u.release), "%s", "6.1.0");
	snprintf(u.version, sizeof(u.version), "%s", "#1 SMP");
	snprintf(u.machine, sizeof(u.machine), "%s", "x86_64");
	snprintf(u.domainname, sizeof(u.domainname), "%s", "(none)");
	ASSERT_U64_EQ(relay_boot_hash(&bt, &u), 0xb0c9546f8c7a24ddull);
	ASSERT_EQ(relay_pseudo_boot_id(&bt, &u, out, sizeof(out)), 0);
	ASSERT_STREQ(out, "b0c9546f8c7a24dd");
	/* A digest under 2^56: no zero padding, as Perfetto writes it. */
	bt.tv_nsec = 258;
	ASSERT_EQ(relay_pseudo_boot_id(&bt, &u, out, sizeof(out)), 0);
	ASSERT_STREQ(out, "c3b3710321613c");
	ASSERT_EQ(relay_pseudo_boot_id(&bt, &u, out, 14), -ENAMETOOLONG);
	bt.tv_nsec = 123456789;
	/* Both sources count. */
	bt.tv_nsec++;
	ASSERT_TRUE(relay_boot_hash(&bt, &u) != 0xb0c9546f8c7a24ddull);
	bt.tv_nsec--;
	u.domainname[0] = 'X';
	ASSERT_TRUE(relay_boot_hash(&bt, &u) != 0xb0c9546f8c7a24ddull);
}

TEST(identity_fallback_when_boot_id_unreadable)
{
	char path[512], out[RELAY_MACHINE_ID_HINT_MAX], want[32];
	struct statx stx;
	struct utsname u;
	size_t i;

	snprintf(path, sizeof(path), "%s/no-such-boot-id", test_tmpdir());
	memset(&stx, 0, sizeof(stx));
	memset(&u, 0, sizeof(u));
	if (statx(AT_FDCWD, "/dev", 0, STATX_BTIME, &stx) != 0 || uname(&u) != 0)
		SKIP("statx(/dev) or uname() fails here: the fallback is the empty string");
	snprintf(want, sizeof(want), "%llx",
		 (unsigned long long)relay_boot_hash(&stx.stx_btime, &u));
	ASSERT_EQ(relay_machine_id_hint(path, out, sizeof(out)), 0);
	ASSERT_STREQ(out, want);
	/* Lower-case hex, no prefix, no padding: at most 16 digits. */
	ASSERT_TRUE(strlen(out) >= 1 && strlen(out) <= 16);
	for (i = 0; out[i]; i++)
		ASSERT_TRUE((out[i] >= '0' && out[i] <= '9') || (out[i] >= 'a' && out[i] <= 'f'));
	/* A boot id file too big to be one is not used either. */
	{
		char big[RELAY_MACHINE_ID_HINT_MAX * 2];

		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		snprintf(path, sizeof(path), "%s/big-boot-id", test_tmpdir());
		write_file(path, big);
		ASSERT_EQ(relay_machine_id_hint(path, out, sizeof(out)), 0);
		ASSERT_STREQ(out, want);
	}
}

TEST(identity_live_boot_id)
{
	struct buf b = BUF_INIT;
	struct relay_identity id;

	if (file_read_all(RELAY_BOOT_ID_PATH, &b, 4096) < 0)
		SKIP("no %s here", RELAY_BOOT_ID_PATH);
	ASSERT_EQ(relay_identity_init(&id, NULL), 0);
	ASSERT_EQ(strlen(id.machine_id_hint) + 1, b.len);
	ASSERT_MEMEQ(id.machine_id_hint, b.data, b.len - 1);
	buf_fini(&b);
}

TEST(identity_machine_name)
{
	char out[RELAY_MACHINE_NAME_MAX], big[RELAY_MACHINE_NAME_MAX + 8];
	struct utsname u;

	ASSERT_EQ(uname(&u), 0);
	unsetenv("PERFETTO_MACHINE_NAME");
	ASSERT_EQ(relay_machine_name(out, sizeof(out)), 0);
	ASSERT_STREQ(out, u.sysname);
	setenv("PERFETTO_MACHINE_NAME", "vm-a", 1);
	ASSERT_EQ(relay_machine_name(out, sizeof(out)), 0);
	ASSERT_STREQ(out, "vm-a");
	/* Set but empty still counts, as in Perfetto's GetPerfettoMachineName. */
	setenv("PERFETTO_MACHINE_NAME", "", 1);
	ASSERT_EQ(relay_machine_name(out, sizeof(out)), 0);
	ASSERT_STREQ(out, "");
	memset(big, 'n', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	setenv("PERFETTO_MACHINE_NAME", big, 1);
	ASSERT_EQ(relay_machine_name(out, sizeof(out)), -ENAMETOOLONG);
	unsetenv("PERFETTO_MACHINE_NAME");
}

TEST(identity_system_info)
{
	struct relay_system_info s;
	struct utsname u;
	struct sysinfo si;

	ASSERT_EQ(uname(&u), 0);
	ASSERT_EQ(sysinfo(&si), 0);
	relay_system_info_init(&s, "vm-b");
	ASSERT_STREQ(s.si.tracing_service_version, PFC_VERSION_STRING);
	ASSERT_TRUE(s.si.utsname != NULL);
	ASSERT_STREQ(s.si.utsname->sysname, u.sysname);
	ASSERT_STREQ(s.si.utsname->release, u.release);
	ASSERT_STREQ(s.si.utsname->version, u.version);
	ASSERT_STREQ(s.si.utsname->machine, u.machine);
	ASSERT_TRUE(s.si.has_page_size);
	ASSERT_EQ(s.si.page_size, sysconf(_SC_PAGESIZE));
	ASSERT_TRUE(s.si.has_num_cpus);
	ASSERT_EQ(s.si.num_cpus, sysconf(_SC_NPROCESSORS_CONF));
	ASSERT_TRUE(s.si.has_system_ram_bytes);
	ASSERT_U64_EQ(s.si.system_ram_bytes, (uint64_t)si.totalram * si.mem_unit);
	ASSERT_TRUE(s.si.has_timezone_off_mins);
	ASSERT_STREQ(s.si.machine_name, "vm-b");
	ASSERT_FALSE(s.si.has_hz);
}

/* ------------------------------------------------------------ clocks --- */

/* ------------------------------------------------------ timing rules --- */

TEST(rules_retry_backoff)
{
	static const uint32_t want[] = {2000, 4000, 8000, 16000, 30000, 30000};
	uint32_t d = RELAY_RETRY_INITIAL_MS;
	size_t i;

	ASSERT_EQ(RELAY_RETRY_INITIAL_MS, 1000);
	ASSERT_EQ(RELAY_RETRY_MAX_MS, 30000);
	for (i = 0; i < PFC_ARRAY_SIZE(want); i++) {
		d = relay_retry_next_ms(d, RELAY_RETRY_MAX_MS);
		ASSERT_EQ(d, want[i]);
	}
	ASSERT_EQ(relay_retry_next_ms(0x90000000u, 0xffffffffu), 0xffffffffu);
}

TEST(rules_sync_delay)
{
	Perfetto__Protos__SyncClockResponse r = PERFETTO__PROTOS__SYNC_CLOCK_RESPONSE__INIT;
	static const struct {
		uint32_t in, want;
	} cases[] = {
		{100, 100}, {150, 150}, {2500, 2500},
		{30000, 30000}, {30001, 30000}, {0xffffffffu, 30000},
	};
	uint32_t quick = 0;
	size_t i;

	ASSERT_EQ(relay_sync_delay_ms(NULL, &quick), 30000);
	ASSERT_EQ(relay_sync_delay_ms(&r, &quick), 30000);
	r.next_sync_delay_ms = 500; /* present only with the has_ bit */
	ASSERT_EQ(relay_sync_delay_ms(&r, &quick), 30000);
	r.has_next_sync_delay_ms = true;
	for (i = 0; i < PFC_ARRAY_SIZE(cases); i++) {
		r.next_sync_delay_ms = cases[i].in;
		ASSERT_EQ(relay_sync_delay_ms(&r, &quick), cases[i].want);
	}
	/* Shorter pauses, down to none, but never more than 8 in a row. */
	for (i = 0; i < 3; i++) {
		r.next_sync_delay_ms = (uint32_t)i * 40;
		ASSERT_EQ(relay_sync_delay_ms(&r, &quick), i * 40);
	}
	r.next_sync_delay_ms = 0;
	for (i = 3; i < RELAY_SYNC_MAX_QUICK; i++)
		ASSERT_EQ(relay_sync_delay_ms(&r, &quick), 0);
	ASSERT_EQ(relay_sync_delay_ms(&r, &quick), RELAY_SYNC_MIN_MS);
	ASSERT_EQ(relay_sync_delay_ms(&r, &quick), 0);
	/* A real pause ends the run. */
	r.next_sync_delay_ms = 5000;
	ASSERT_EQ(relay_sync_delay_ms(&r, &quick), 5000);
	ASSERT_EQ(quick, 0);
}

/* --------------------------------------------------------- fake host --- */

#define MAX_SYNCS 64
#define MAX_ACCEPTS 64

struct sync_event {
	int phase;
	size_t n_clocks;
	uint32_t ids[CLOCK_SNAPSHOT_CLOCKS];
	uint64_t ts[CLOCK_SNAPSHOT_CLOCKS];
	uint64_t arrival_boot_ns;
	uint64_t arrival_ms;
};

static struct {
	struct evloop *loop;
	struct ipc_host *host;
	char name[SOCK_NAME_MAX];
	int n_connect, n_init, n_sync;
	struct sync_event ev[MAX_SYNCS];
	/* The InitRelay that arrived, copied. */
	char version[128], sysname[128], release[128], uversion[256], machine[128], mname[256];
	bool has_utsname, has_page, has_cpus, has_ram, has_tz;
	uint32_t page_size, num_cpus;
	uint64_t ram;
	/* Who sent it. */
	struct ipc_client_info info;
	char info_name[256];
	/* How to answer SyncClock. */
	bool has_next_delay;
	uint32_t next_delay_ms;
	uint32_t ping_reply_delay_ms;
	struct ipc_call deferred;
	/* A raw listener that accepts and hangs up at once. */
	int raw_fd;
	uint64_t raw_watch;
	int n_accepts;
	uint64_t accept_ms[MAX_ACCEPTS];
	/* Log lines seen. */
	int n_warn_no_port;
} g;

static void copy_str(char *dst, size_t size, const char *s)
{
	snprintf(dst, size, "%s", s ? s : "(null)");
}

static void h_init_relay(struct ipc_host *host, const struct ipc_call *call,
			 const ProtobufCMessage *args, void *user)
{
	const Perfetto__Protos__InitRelayRequest *req = (const void *)args;
	const Perfetto__Protos__SystemInfo *si = req->system_info;

	(void)user;
	g.n_init++;
	ASSERT_EQ(ipc_host_client_info(host, call->client_id, &g.info), 0);
	copy_str(g.info_name, sizeof(g.info_name), g.info.machine_name);
	ASSERT_TRUE(si != NULL);
	copy_str(g.version, sizeof(g.version), si->tracing_service_version);
	copy_str(g.mname, sizeof(g.mname), si->machine_name);
	g.has_utsname = si->utsname != NULL;
	if (si->utsname) {
		copy_str(g.sysname, sizeof(g.sysname), si->utsname->sysname);
		copy_str(g.release, sizeof(g.release), si->utsname->release);
		copy_str(g.uversion, sizeof(g.uversion), si->utsname->version);
		copy_str(g.machine, sizeof(g.machine), si->utsname->machine);
	}
	g.has_page = si->has_page_size;
	g.page_size = si->page_size;
	g.has_cpus = si->has_num_cpus;
	g.num_cpus = si->num_cpus;
	g.has_ram = si->has_system_ram_bytes;
	g.ram = si->system_ram_bytes;
	g.has_tz = si->has_timezone_off_mins;
	ASSERT_EQ(ipc_host_reply(host, call, NULL, false, -1), 0);
}

static void reply_sync(const struct ipc_call *call)
{
	Perfetto__Protos__SyncClockResponse r = PERFETTO__PROTOS__SYNC_CLOCK_RESPONSE__INIT;

	r.has_next_sync_delay_ms = g.has_next_delay;
	r.next_sync_delay_ms = g.next_delay_ms;
	ipc_host_reply(g.host, call, &r.base, false, -1);
}

static void on_deferred_reply(void *user)
{
	(void)user;
	reply_sync(&g.deferred);
}

static void h_sync_clock(struct ipc_host *host, const struct ipc_call *call,
			 const ProtobufCMessage *args, void *user)
{
	const Perfetto__Protos__SyncClockRequest *req = (const void *)args;
	struct sync_event *e;
	size_t i;

	(void)host;
	(void)user;
	ASSERT_LT(g.n_sync, MAX_SYNCS);
	e = &g.ev[g.n_sync++];
	e->arrival_boot_ns = clock_boottime_ns();
	e->arrival_ms = now_ms();
	e->phase = req->has_phase ? (int)req->phase : 0;
	e->n_clocks = req->n_clocks;
	for (i = 0; i < req->n_clocks && i < CLOCK_SNAPSHOT_CLOCKS; i++) {
		e->ids[i] = req->clocks[i]->clock_id;
		e->ts[i] = req->clocks[i]->timestamp;
	}
	if (e->phase == PERFETTO__PROTOS__SYNC_CLOCK_REQUEST__PHASE__PING &&
	    g.ping_reply_delay_ms) {
		g.deferred = *call;
		ASSERT_EQ(evloop_add_timer(g.loop, g.ping_reply_delay_ms, 0, on_deferred_reply, NULL,
					   NULL),
			  0);
		return;
	}
	reply_sync(call);
}

static void h_connect(struct ipc_host *host, uint64_t client_id, void *user)
{
	(void)host;
	(void)client_id;
	(void)user;
	g.n_connect++;
}

/* A host on @name (NULL: a new loopback port), with or without RelayPort. */
static void host_start(const char *name, bool with_relay_port)
{
	static const ipc_method_cb handlers[] = {h_init_relay, h_sync_clock};
	struct ipc_service_def def;

	if (!g.loop)
		ASSERT_EQ(evloop_create(&g.loop), 0);
	ASSERT_EQ(ipc_host_create(g.loop, name ? name : "127.0.0.1:0", NULL, &g.host), 0);
	ASSERT_EQ(sock_local_name(ipc_host_listen_fd(g.host), g.name, sizeof(g.name)), 0);
	memset(&def, 0, sizeof(def));
	def.on_connect = h_connect;
	if (with_relay_port) {
		def.desc = &perfetto__protos__relay_port__descriptor;
		def.handlers = handlers;
		def.n_handlers = PFC_ARRAY_SIZE(handlers);
	} else {
		/* A traced without --enable-relay-endpoint: producers only. */
		def.desc = &perfetto__protos__producer_port__descriptor;
	}
	ASSERT_EQ(ipc_host_expose(g.host, &def, NULL), 0);
}

static void host_stop(void)
{
	ipc_host_destroy(g.host);
	g.host = NULL;
}

static void on_raw_accept(int fd, unsigned revents, void *user)
{
	int cfd;

	(void)revents;
	(void)user;
	while (sock_accept(fd, &cfd) == 0) {
		if (g.n_accepts < MAX_ACCEPTS)
			g.accept_ms[g.n_accepts] = now_ms();
		g.n_accepts++;
		close(cfd);
	}
}

/* A listener on g.name that hangs up on every connection at once. */
static void raw_start(void)
{
	ASSERT_EQ(sock_listen(g.name, 16, &g.raw_fd), 0);
	ASSERT_EQ(evloop_add_fd(g.loop, g.raw_fd, EVLOOP_READ, on_raw_accept, NULL, &g.raw_watch), 0);
}

static void raw_stop(void)
{
	evloop_del(g.loop, g.raw_watch);
	close(g.raw_fd);
	g.raw_fd = -1;
}

static void count_log(enum log_level level, const char *line, void *user)
{
	(void)user;
	if (level == LOG_LEVEL_WARN && strstr(line, "does not serve RelayPort") &&
	    strstr(line, "--enable-relay-endpoint"))
		g.n_warn_no_port++;
}

static struct relay_client *client_start(const struct relay_identity *id, uint32_t initial_ms,
					 uint32_t max_ms)
{
	struct relay_client_options o;
	struct relay_client *c = NULL;

	memset(&o, 0, sizeof(o));
	o.remote_name = g.name;
	o.identity = id;
	o.retry_initial_ms = initial_ms;
	o.retry_max_ms = max_ms;
	ASSERT_EQ(relay_client_create(g.loop, &o, &c), 0);
	return c;
}

static void check_capture(const struct sync_event *e)
{
	static const uint32_t want_ids[CLOCK_SNAPSHOT_CLOCKS] = {6, 2, 4, 1, 3, 5};
	size_t i;

	ASSERT_EQ(e->n_clocks, CLOCK_SNAPSHOT_CLOCKS);
	for (i = 0; i < CLOCK_SNAPSHOT_CLOCKS; i++)
		ASSERT_EQ(e->ids[i], want_ids[i]);
	/* Same machine: the relay's BOOTTIME was read just before sending. */
	ASSERT_LE(e->ts[0], e->arrival_boot_ns);
	ASSERT_LT(e->arrival_boot_ns - e->ts[0], 100 * NS_PER_MS);
}

/* ---------------------------------------------------- control client --- */

TEST(client_init_relay_contents_and_identity)
{
	struct relay_identity id;
	struct relay_client *c;
	struct utsname u;

	test_identity(&id);
	host_start(NULL, true);
	c = client_start(&id, 0, 0);
	ASSERT_EQ(pump_until(g.loop, &g.n_init, 1, 5000), 1);
	ASSERT_EQ(uname(&u), 0);
	ASSERT_STREQ(g.version, PFC_VERSION_STRING);
	ASSERT_TRUE(g.has_utsname);
	ASSERT_STREQ(g.sysname, u.sysname);
	ASSERT_STREQ(g.release, u.release);
	ASSERT_STREQ(g.uversion, u.version);
	ASSERT_STREQ(g.machine, u.machine);
	ASSERT_TRUE(g.has_page && g.page_size == (uint32_t)sysconf(_SC_PAGESIZE));
	ASSERT_TRUE(g.has_cpus && g.num_cpus == (uint32_t)sysconf(_SC_NPROCESSORS_CONF));
	ASSERT_TRUE(g.has_ram && g.ram > 0);
	ASSERT_TRUE(g.has_tz);
	ASSERT_STREQ(g.mname, "guest-test");
	/* SetPeerIdentity came first, with the relay's own pid and euid. */
	ASSERT_EQ(g.info.family, AF_INET);
	ASSERT_EQ(g.info.pid, getpid());
	ASSERT_EQ(g.info.uid, geteuid());
	ASSERT_U64_EQ(g.info.machine_id, (uint32_t)fnv1a64(id.machine_id_hint,
							    strlen(id.machine_id_hint)));
	ASSERT_STREQ(g.info_name, "guest-test");
	relay_client_destroy(c);
	host_stop();
}

TEST(client_ping_update_then_host_paced_pause)
{
	struct relay_identity id;
	struct relay_client_stats st;
	struct relay_client *c;
	uint64_t pause;
	int i;

	test_identity(&id);
	host_start(NULL, true);
	g.has_next_delay = true;
	g.next_delay_ms = 250;
	c = client_start(&id, 0, 0);
	ASSERT_EQ(pump_until(g.loop, &g.n_sync, 4, 5000), 4);
	ASSERT_EQ(g.n_init, 1);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(g.ev[i].phase, i % 2 ? PERFETTO__PROTOS__SYNC_CLOCK_REQUEST__PHASE__UPDATE
					       : PERFETTO__PROTOS__SYNC_CLOCK_REQUEST__PHASE__PING);
		check_capture(&g.ev[i]);
	}
	/* UPDATE goes out as soon as the PING is answered... */
	ASSERT_LT(g.ev[1].arrival_ms - g.ev[0].arrival_ms, 100);
	/* ...and the next PING waits what the host asked for. */
	pause = g.ev[2].arrival_ms - g.ev[1].arrival_ms;
	ASSERT_GE(pause, 240);
	ASSERT_LT(pause, 1000);
	relay_client_get_stats(c, &st);
	ASSERT_GE(st.n_rounds, 1);
	ASSERT_EQ(st.sync_delay_ms, 250);
	ASSERT_EQ(st.n_bound, 1);
	relay_client_destroy(c);
	host_stop();
}

TEST(client_update_capture_taken_after_ping_reply)
{
	struct relay_identity id;
	struct relay_client *c;

	test_identity(&id);
	host_start(NULL, true);
	g.ping_reply_delay_ms = 300;
	c = client_start(&id, 0, 0);
	ASSERT_EQ(pump_until(g.loop, &g.n_sync, 2, 5000), 2);
	ASSERT_EQ(g.ev[1].phase, PERFETTO__PROTOS__SYNC_CLOCK_REQUEST__PHASE__UPDATE);
	/* A fresh capture, not the PING's readings again. */
	ASSERT_GE(g.ev[1].ts[0] - g.ev[0].ts[0], 290 * NS_PER_MS);
	check_capture(&g.ev[1]);
	relay_client_destroy(c);
	host_stop();
}

/* A host asking for no pause gets RELAY_SYNC_MAX_QUICK quick rounds, then
 * a RELAY_SYNC_MIN_MS pause, and so on: the relay never spins. */
TEST(client_sync_short_delays_limited)
{
	struct relay_identity id;
	struct relay_client *c;
	uint64_t pause;
	unsigned k;

	test_identity(&id);
	host_start(NULL, true);
	g.has_next_delay = true;
	g.next_delay_ms = 1;
	c = client_start(&id, 0, 0);
	ASSERT_EQ(pump_until(g.loop, &g.n_sync, 2 * RELAY_SYNC_MAX_QUICK + 3, 5000),
		  2 * RELAY_SYNC_MAX_QUICK + 3);
	for (k = 0; k < RELAY_SYNC_MAX_QUICK; k++) {
		pause = g.ev[2 * k + 2].arrival_ms - g.ev[2 * k + 1].arrival_ms;
		ASSERT_LT(pause, 60);
	}
	pause = g.ev[2 * k + 2].arrival_ms - g.ev[2 * k + 1].arrival_ms;
	ASSERT_GE(pause, 95);
	ASSERT_LT(pause, 600);
	relay_client_destroy(c);
	host_stop();
}

TEST(client_sync_default_interval_without_host_value)
{
	struct relay_identity id;
	struct relay_client_stats st;
	struct relay_client *c;

	test_identity(&id);
	host_start(NULL, true);
	c = client_start(&id, 0, 0);
	ASSERT_EQ(pump_until(g.loop, &g.n_sync, 2, 5000), 2);
	pump_for(g.loop, 1500);
	/* Perfetto's 30 s: nothing more for now. */
	ASSERT_EQ(g.n_sync, 2);
	relay_client_get_stats(c, &st);
	ASSERT_EQ(st.state, RELAY_CLIENT_IDLE);
	ASSERT_EQ(st.sync_delay_ms, 30000);
	relay_client_destroy(c);
	host_stop();
}

TEST(client_bind_refused_warns_once_and_retries)
{
	struct relay_identity id;
	struct relay_client_stats st;
	struct relay_client *c;

	test_identity(&id);
	log_set_sink(count_log, NULL);
	host_start(NULL, false);
	c = client_start(&id, 50, 200);
	ASSERT_EQ(pump_until(g.loop, &g.n_connect, 4, 5000), 4);
	relay_client_get_stats(c, &st);
	ASSERT_GE(st.n_bind_refused, 3);
	ASSERT_EQ(st.n_bound, 0);
	ASSERT_EQ(g.n_warn_no_port, 1);
	ASSERT_EQ(g.n_init, 0);
	/* Once the host serves RelayPort, the relay gets there by itself. */
	{
		char name[SOCK_NAME_MAX];

		snprintf(name, sizeof(name), "%s", g.name);
		host_stop();
		host_start(name, true);
	}
	ASSERT_EQ(pump_until(g.loop, &g.n_init, 1, 5000), 1);
	relay_client_get_stats(c, &st);
	ASSERT_EQ(st.n_bound, 1);
	ASSERT_EQ(st.retry_delay_ms, 50);
	relay_client_destroy(c);
	host_stop();
	log_set_sink(NULL, NULL);
}

/* Gap between accept @i-1 and @i. */
static uint64_t accept_gap(int i)
{
	return g.accept_ms[i] - g.accept_ms[i - 1];
}

TEST(client_reconnect_backoff_and_reset)
{
	struct relay_identity id;
	struct relay_client_stats st;
	struct relay_client *c;
	char name[SOCK_NAME_MAX];
	uint64_t t0;

	test_identity(&id);
	host_start(NULL, true);
	snprintf(name, sizeof(name), "%s", g.name);
	c = client_start(&id, 100, 400);
	ASSERT_EQ(pump_until(g.loop, &g.n_sync, 2, 5000), 2);
	/* The host goes away; something that hangs up takes its port. */
	host_stop();
	t0 = now_ms();
	raw_start();
	ASSERT_EQ(pump_until(g.loop, &g.n_accepts, 5, 5000), 5);
	/* Waits of 100, 200, 400 ms, then capped at 400 ms. */
	ASSERT_GE(g.accept_ms[0] - t0, 90);
	ASSERT_LT(g.accept_ms[0] - t0, 300);
	ASSERT_GE(accept_gap(1), 190);
	ASSERT_LT(accept_gap(1), 400);
	ASSERT_GE(accept_gap(2), 390);
	ASSERT_LT(accept_gap(2), 700);
	ASSERT_GE(accept_gap(3), 390);
	ASSERT_LT(accept_gap(3), 700);
	ASSERT_GE(accept_gap(4), 390);
	ASSERT_LT(accept_gap(4), 700);
	/* The host is back: the relay binds again and syncs. */
	raw_stop();
	host_start(name, true);
	ASSERT_EQ(pump_until(g.loop, &g.n_init, 2, 5000), 2);
	ASSERT_EQ(pump_until(g.loop, &g.n_sync, 4, 5000), 4);
	relay_client_get_stats(c, &st);
	ASSERT_EQ(st.n_bound, 2);
	ASSERT_EQ(st.retry_delay_ms, 100);
	/* It goes away again: the backoff starts over from 100 ms. */
	host_stop();
	t0 = now_ms();
	g.n_accepts = 0;
	raw_start();
	ASSERT_EQ(pump_until(g.loop, &g.n_accepts, 2, 5000), 2);
	ASSERT_GE(g.accept_ms[0] - t0, 90);
	ASSERT_LT(g.accept_ms[0] - t0, 300);
	ASSERT_GE(accept_gap(1), 190);
	ASSERT_LT(accept_gap(1), 400);
	relay_client_destroy(c);
	raw_stop();
}

TEST(client_default_backoff_starts_at_one_second)
{
	struct relay_identity id;
	struct relay_client_stats st;
	struct relay_client *c;

	test_identity(&id);
	ASSERT_EQ(evloop_create(&g.loop), 0);
	snprintf(g.name, sizeof(g.name), "%s", "127.0.0.1:0");
	{
		/* A free port first, then the hang-up listener on it. */
		int fd;

		ASSERT_EQ(sock_listen(g.name, 1, &fd), 0);
		ASSERT_EQ(sock_local_name(fd, g.name, sizeof(g.name)), 0);
		close(fd);
	}
	raw_start();
	c = client_start(&id, 0, 0);
	ASSERT_EQ(pump_until(g.loop, &g.n_accepts, 2, 5000), 2);
	ASSERT_GE(accept_gap(1), 950);
	ASSERT_LT(accept_gap(1), 1800);
	pump_for(g.loop, 50);
	relay_client_get_stats(c, &st);
	ASSERT_EQ(st.state, RELAY_CLIENT_WAITING);
	ASSERT_EQ(st.retry_delay_ms, 4000);
	relay_client_destroy(c);
	raw_stop();
}

TEST(client_host_down_from_the_start_keeps_retrying)
{
	struct relay_identity id;
	struct relay_client_stats st;
	struct relay_client *c;
	int fd;

	test_identity(&id);
	ASSERT_EQ(evloop_create(&g.loop), 0);
	ASSERT_EQ(sock_listen("127.0.0.1:0", 1, &fd), 0);
	ASSERT_EQ(sock_local_name(fd, g.name, sizeof(g.name)), 0);
	close(fd); /* nobody listens there now: connection refused */
	c = client_start(&id, 50, 100);
	pump_for(g.loop, 600);
	relay_client_get_stats(c, &st);
	ASSERT_GE(st.n_attempts, 4);
	ASSERT_EQ(st.n_bound, 0);
	ASSERT_EQ(st.retry_delay_ms, 100);
	relay_client_destroy(c);
}

/* ------------------------------------------------------------- proxy --- */

struct proxy_fixture {
	struct evloop *loop;
	struct relay_identity id;
	struct relay_proxy *proxy;
	char local[SOCK_NAME_MAX];
	char remote[SOCK_NAME_MAX];
	int up_listen;
};

static struct proxy_fixture pf;

/* The proxy on an abstract socket, forwarding to a raw listener on
 * @remote ("127.0.0.1:0" or an abstract name) that the test drives. */
static void proxy_start(const char *remote, size_t max_connections)
{
	struct relay_proxy_options o;
	int lfd;

	ASSERT_EQ(evloop_create(&pf.loop), 0);
	test_identity(&pf.id);
	ASSERT_EQ(sock_listen(remote, 16, &pf.up_listen), 0);
	ASSERT_EQ(sock_local_name(pf.up_listen, pf.remote, sizeof(pf.remote)), 0);
	snprintf(pf.local, sizeof(pf.local), "%s", abstract_name("local"));
	ASSERT_EQ(relay_listen(pf.local, &lfd), 0);
	memset(&o, 0, sizeof(o));
	o.remote_name = pf.remote;
	o.identity = &pf.id;
	o.max_connections = max_connections;
	ASSERT_EQ(relay_proxy_create(pf.loop, lfd, &o, &pf.proxy), 0);
}

static void proxy_stop(void)
{
	relay_proxy_destroy(pf.proxy);
	close(pf.up_listen);
	evloop_destroy(pf.loop);
}

/* A producer: connected to the relay, non-blocking. */
static int local_connect(void)
{
	int fd;

	ASSERT_EQ(sock_connect(pf.local, &fd), 0);
	ASSERT_EQ(fd_set_nonblock(fd), 0);
	return fd;
}

/* The relay's upstream connection, as the host accepts it. */
static int up_accept(void)
{
	uint64_t end = now_ms() + 5000;
	int fd, rc;

	while (now_ms() < end) {
		rc = sock_accept(pf.up_listen, &fd);
		if (rc == 0)
			return fd;
		ASSERT_EQ(rc, -EAGAIN);
		evloop_run_once(pf.loop, 5);
	}
	FAIL("the relay did not connect upstream within 5 s");
}

/* Reads exactly @len bytes from @fd while running the relay. */
static void read_exact(int fd, void *dst, size_t len)
{
	uint64_t end = now_ms() + 10000;
	size_t got = 0;

	while (got < len) {
		ssize_t n = sock_recv(fd, (uint8_t *)dst + got, len - got);

		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		ASSERT_EQ(n, -EAGAIN);
		ASSERT_LT(now_ms(), end);
		evloop_run_once(pf.loop, 5);
	}
}

/* Waits for end of stream on @fd (after any bytes); returns the bytes seen. */
static size_t read_to_eof(int fd, int ms)
{
	uint64_t end = now_ms() + (uint64_t)ms;
	uint8_t tmp[4096];
	size_t total = 0;

	while (now_ms() < end) {
		ssize_t n = sock_recv(fd, tmp, sizeof(tmp));

		if (n == 0 || n == -ECONNRESET)
			return total;
		if (n > 0) {
			total += (size_t)n;
			continue;
		}
		ASSERT_EQ(n, -EAGAIN);
		evloop_run_once(pf.loop, 5);
	}
	FAIL("no end of stream within %d ms (%zu bytes seen)", ms, total);
}

/* Reads the relay's first frame from @fd and checks it is the identity. */
static void expect_identity(int fd, pid_t pid, uid_t uid)
{
	Perfetto__Protos__IPCFrame *f = NULL;
	uint8_t hdr[4], *payload;
	uint32_t len;

	read_exact(fd, hdr, 4);
	len = (uint32_t)hdr[0] | (uint32_t)hdr[1] << 8 | (uint32_t)hdr[2] << 16 |
	      (uint32_t)hdr[3] << 24;
	ASSERT_LT(len, 1024);
	payload = malloc(len);
	read_exact(fd, payload, len);
	f = perfetto__protos__ipcframe__unpack(NULL, len, payload);
	ASSERT_TRUE(f != NULL);
	ASSERT_TRUE(f->has_request_id);
	ASSERT_EQ(f->request_id, 0);
	ASSERT_EQ(f->msg_case, PERFETTO__PROTOS__IPCFRAME__MSG_SET_PEER_IDENTITY);
	ASSERT_EQ(f->set_peer_identity->pid, pid);
	ASSERT_EQ(f->set_peer_identity->uid, (int32_t)uid);
	ASSERT_STREQ(f->set_peer_identity->machine_id_hint, pf.id.machine_id_hint);
	ASSERT_STREQ(f->set_peer_identity->machine_name, pf.id.machine_name);
	ipc_frame_free(f);
	free(payload);
}

static void send_all(int fd, const void *data, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = sock_send(fd, (const uint8_t *)data + off, len - off);

		if (n == -EAGAIN) {
			evloop_run_once(pf.loop, 5);
			continue;
		}
		ASSERT_GT(n, 0);
		off += (size_t)n;
	}
}

TEST(proxy_identity_first_then_bytes_both_ways)
{
	struct relay_proxy_stats st;
	char buf[16];
	int l, u;

	proxy_start("127.0.0.1:0", 0);
	l = local_connect();
	send_all(l, "hello", 5);
	u = up_accept();
	expect_identity(u, getpid(), geteuid());
	read_exact(u, buf, 5);
	ASSERT_MEMEQ(buf, "hello", 5);
	send_all(u, "world!", 6);
	read_exact(l, buf, 6);
	ASSERT_MEMEQ(buf, "world!", 6);
	relay_proxy_get_stats(pf.proxy, &st);
	ASSERT_EQ(st.n_connections, 1);
	ASSERT_EQ(st.n_accepted, 1);
	ASSERT_EQ(st.buffered_bytes, 0);
	close(l);
	close(u);
	proxy_stop();
}

TEST(proxy_identity_carries_the_producers_pid)
{
	int ready[2], u, status;
	pid_t child;
	char c = 0;

	proxy_start("127.0.0.1:0", 0);
	ASSERT_EQ(pipe(ready), 0);
	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		int fd;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(ready[1]);
		if (sock_connect(pf.local, &fd) != 0)
			_exit(2);
		if (read(ready[0], &c, 1) != 1)
			_exit(3);
		_exit(0);
	}
	close(ready[0]);
	/* The child's connection, not ours: pid and uid come from SO_PEERCRED. */
	u = -1;
	{
		uint64_t end = now_ms() + 5000;

		while (u < 0 && now_ms() < end) {
			if (sock_accept(pf.up_listen, &u) < 0)
				u = -1;
			evloop_run_once(pf.loop, 5);
		}
	}
	ASSERT_GE(u, 0);
	expect_identity(u, child, geteuid());
	ASSERT_EQ(write(ready[1], "x", 1), 1);
	ASSERT_EQ(waitpid(child, &status, 0), child);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* The producer is gone: the relay closes its host side. */
	read_to_eof(u, 3000);
	close(u);
	close(ready[1]);
	proxy_stop();
}

TEST(proxy_host_unreachable_closes_producer)
{
	struct relay_proxy_stats st;
	int l;

	proxy_start("127.0.0.1:0", 0);
	/* Nothing listens on the remote address any more (the fixture's
	 * listener is replaced by one on another port). */
	close(pf.up_listen);
	ASSERT_EQ(sock_listen("127.0.0.1:0", 1, &pf.up_listen), 0);
	l = local_connect();
	ASSERT_EQ(read_to_eof(l, 3000), 0);
	relay_proxy_get_stats(pf.proxy, &st);
	ASSERT_EQ(st.n_upstream_failed, 1);
	ASSERT_EQ(st.n_connections, 0);
	close(l);
	proxy_stop();
}

static void fill_pattern(uint8_t *p, size_t n, size_t start)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)((start + i) * 131 + ((start + i) >> 12));
}

/* The producer writes and exits while the host reads slowly: what the relay
 * holds when the producer's end closes must still reach the host. */
TEST(proxy_producer_close_flushes_everything_first)
{
	const size_t len = 1024 * 1024;
	uint8_t *data = malloc(len), *got = malloc(len);
	struct relay_proxy_stats st;
	size_t total = 0;
	uint64_t end;
	int u, status;
	pid_t child;

	proxy_start(abstract_name("host"), 0);
	fill_pattern(data, len, 0);
	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		int fd;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (sock_connect(pf.local, &fd) != 0 || file_write_all(fd, data, len) != 0)
			_exit(2);
		_exit(0);
	}
	u = up_accept();
	pump_for(pf.loop, 200);
	expect_identity(u, child, geteuid());
	end = now_ms() + 10000;
	while (now_ms() < end) {
		size_t want = len - total < 8192 ? len - total : 8192;
		ssize_t n = want ? sock_recv(u, got + total, want) : sock_recv(u, got, 1);

		if (n == 0)
			break;
		if (n > 0)
			total += (size_t)n;
		else
			ASSERT_EQ(n, -EAGAIN);
		pump_for(pf.loop, 2);
	}
	ASSERT_EQ(waitpid(child, &status, 0), child);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_EQ(total, len);
	ASSERT_MEMEQ(got, data, len);
	pump_for(pf.loop, 20);
	relay_proxy_get_stats(pf.proxy, &st);
	ASSERT_EQ(st.n_connections, 0);
	close(u);
	free(data);
	free(got);
	proxy_stop();
}

TEST(proxy_host_close_closes_producer)
{
	struct relay_proxy_stats st;
	char buf[8];
	int l, u;

	proxy_start("127.0.0.1:0", 0);
	l = local_connect();
	u = up_accept();
	expect_identity(u, getpid(), geteuid());
	send_all(u, "bye", 3);
	close(u);
	read_exact(l, buf, 3);
	ASSERT_MEMEQ(buf, "bye", 3);
	ASSERT_EQ(read_to_eof(l, 3000), 0);
	pump_for(pf.loop, 20);
	relay_proxy_get_stats(pf.proxy, &st);
	ASSERT_EQ(st.n_connections, 0);
	close(l);
	proxy_stop();
}

/* A host that never reads: the producer's writes must stop succeeding while
 * the relay holds at most its two fixed buffers. */
TEST(proxy_backpressure_bounds_memory)
{
	const size_t chunk = 64 * 1024, budget = 64u * 1024 * 1024;
	uint8_t *data = malloc(chunk), *got = malloc(chunk);
	struct relay_proxy_stats st;
	size_t written = 0, checked = 0;
	int l, u, idle = 0;

	proxy_start("127.0.0.1:0", 0);
	l = local_connect();
	u = up_accept();
	while (idle < 25 && written < budget) {
		bool progress = false;

		for (;;) {
			ssize_t n;

			fill_pattern(data, chunk, written);
			n = sock_send(l, data, chunk);
			if (n <= 0)
				break;
			written += (size_t)n;
			progress = true;
		}
		pump_for(pf.loop, 20);
		idle = progress ? 0 : idle + 1;
	}
	/* Kernel buffers (loopback TCP, the UNIX socket) plus the relay's
	 * own: far below what the producer tried to push. */
	ASSERT_LT(written, 32u * 1024 * 1024);
	relay_proxy_get_stats(pf.proxy, &st);
	ASSERT_EQ(st.n_connections, 1);
	ASSERT_LE(st.buffered_bytes, 2 * RELAY_PROXY_BUF_BYTES);
	ASSERT_GT(st.buffered_bytes, 0);
	/* Stalled, the relay sleeps: it does not poll the full direction. */
	{
		uint64_t end = now_ms() + 200;
		int callbacks = 0;

		while (now_ms() < end)
			callbacks += evloop_run_once(pf.loop, 20);
		ASSERT_LT(callbacks, 20);
	}
	/* The host starts reading: every byte arrives, in order. */
	expect_identity(u, getpid(), geteuid());
	while (checked < written) {
		size_t n = written - checked < chunk ? written - checked : chunk;

		read_exact(u, got, n);
		fill_pattern(data, n, checked);
		ASSERT_MEMEQ(got, data, n);
		checked += n;
	}
	close(l);
	ASSERT_EQ(read_to_eof(u, 3000), 0);
	close(u);
	free(data);
	free(got);
	proxy_stop();
}

/* Sends @len bytes with @n_fds copies of @fd attached. */
static void send_with_fds(int sock, const char *data, size_t len, int fd, size_t n_fds)
{
	int fds[8];
	size_t i;

	for (i = 0; i < n_fds; i++)
		fds[i] = fd;
	ASSERT_EQ(sock_send_with_fds(sock, data, len, fds, n_fds), (ssize_t)len);
}

TEST(proxy_drops_fds_from_producers)
{
	struct relay_proxy_stats st;
	int l, u, p[2], got_fds[SOCK_MAX_FDS];
	size_t n_fds = 0, total = 0, i;
	uint64_t end;
	char buf[16];
	ssize_t n;

	/* An AF_UNIX host could receive fds: it must get none. */
	proxy_start(abstract_name("host"), 0);
	l = local_connect();
	u = up_accept();
	expect_identity(u, getpid(), geteuid());
	ASSERT_EQ(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
	send_with_fds(l, "one", 3, p[1], 1);
	send_with_fds(l, "three", 5, p[1], 3);
	close(p[1]);
	end = now_ms() + 5000;
	while (total < 8 && now_ms() < end) {
		n = sock_recv_with_fds(u, buf + total, sizeof(buf) - total, got_fds,
				       PFC_ARRAY_SIZE(got_fds), &n_fds);
		if (n > 0) {
			ASSERT_EQ(n_fds, 0);
			total += (size_t)n;
		}
		evloop_run_once(pf.loop, 5);
	}
	ASSERT_EQ(total, 8);
	ASSERT_MEMEQ(buf, "onethree", 8);
	/* Every copy the relay received is closed: the pipe sees EOF. */
	end = now_ms() + 3000;
	while ((n = read(p[0], buf, sizeof(buf))) < 0 && errno == EAGAIN && now_ms() < end)
		evloop_run_once(pf.loop, 5);
	ASSERT_EQ(n, 0);
	relay_proxy_get_stats(pf.proxy, &st);
	ASSERT_EQ(st.n_fds_dropped, 4);
	for (i = 0; i < n_fds; i++)
		close(got_fds[i]);
	close(p[0]);
	close(l);
	close(u);
	proxy_stop();
}

TEST(proxy_connection_limit)
{
	struct relay_proxy_stats st;
	int l[3], u[2], i;
	char c;

	proxy_start("127.0.0.1:0", 2);
	for (i = 0; i < 2; i++) {
		l[i] = local_connect();
		u[i] = up_accept();
		expect_identity(u[i], getpid(), geteuid());
	}
	l[2] = local_connect();
	ASSERT_EQ(read_to_eof(l[2], 3000), 0);
	relay_proxy_get_stats(pf.proxy, &st);
	ASSERT_EQ(st.n_rejected, 1);
	ASSERT_EQ(st.n_connections, 2);
	/* The first two still work. */
	for (i = 0; i < 2; i++) {
		c = (char)('a' + i);
		send_all(l[i], &c, 1);
		read_exact(u[i], &c, 1);
		ASSERT_EQ(c, 'a' + i);
	}
	/* A slot frees up when one goes away. */
	close(l[0]);
	ASSERT_EQ(read_to_eof(u[0], 3000), 0);
	close(u[0]);
	close(l[2]);
	l[2] = local_connect();
	u[0] = up_accept();
	expect_identity(u[0], getpid(), geteuid());
	relay_proxy_get_stats(pf.proxy, &st);
	ASSERT_EQ(st.n_connections, 2);
	ASSERT_EQ(RELAY_MAX_CONNECTIONS, 64);
	close(l[1]);
	close(l[2]);
	close(u[0]);
	close(u[1]);
	proxy_stop();
}

TEST(proxy_default_limit_is_enforced)
{
	struct relay_proxy_stats st;
	int l[RELAY_MAX_CONNECTIONS + 1], i;

	proxy_start("127.0.0.1:0", 0);
	for (i = 0; i < RELAY_MAX_CONNECTIONS + 1; i++) {
		l[i] = local_connect();
		pump_for(pf.loop, 2);
	}
	pump_for(pf.loop, 100);
	relay_proxy_get_stats(pf.proxy, &st);
	ASSERT_EQ(st.n_connections, RELAY_MAX_CONNECTIONS);
	ASSERT_EQ(st.n_rejected, 1);
	for (i = 0; i < RELAY_MAX_CONNECTIONS + 1; i++)
		close(l[i]);
	proxy_stop();
}

TEST(listen_refuses_a_served_socket_and_replaces_a_stale_one)
{
	char path[512];
	int busy, fd = -1;
	struct stat stt;

	ASSERT_EQ(sock_listen(abstract_name("busy"), 4, &busy), 0);
	ASSERT_EQ(relay_listen(abstract_name("busy"), &fd), -EBUSY);
	close(busy);
	/* A socket file whose server died is replaced. */
	snprintf(path, sizeof(path), "%s/p.sock", test_tmpdir());
	ASSERT_EQ(sock_listen(path, 4, &busy), 0);
	ASSERT_EQ(relay_listen(path, &fd), -EBUSY);
	close(busy);
	ASSERT_EQ(stat(path, &stt), 0);
	ASSERT_EQ(relay_listen(path, &fd), 0);
	ASSERT_GE(fd, 0);
	ASSERT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	ASSERT_TRUE(fcntl(fd, F_GETFL) & O_NONBLOCK);
	close(fd);
}

/* --------------------------------------------------------------- cli --- */

struct cli_result {
	int rc;
	char out[8192];
	char err[8192];
};

static void slurp(const char *path, char *dst, size_t size)
{
	struct buf b = BUF_INIT;

	dst[0] = '\0';
	if (file_read_all(path, &b, size - 1) >= 0)
		snprintf(dst, size, "%s", buf_cstr(&b));
	buf_fini(&b);
}

/* Runs relay_main(@argv) in this process with stdout/stderr captured. */
static void run_cli(struct cli_result *r, const char *const *argv)
{
	char out_path[512], err_path[512];
	int argc = 0, saved_out, saved_err, fo, fe;

	while (argv[argc])
		argc++;
	/* Never the system's default socket, even if the code under test
	 * went further than it should. */
	if (!getenv("PERFETTO_PRODUCER_SOCK_NAME"))
		setenv("PERFETTO_PRODUCER_SOCK_NAME", abstract_name("cli"), 1);
	snprintf(out_path, sizeof(out_path), "%s/stdout", test_tmpdir());
	snprintf(err_path, sizeof(err_path), "%s/stderr", test_tmpdir());
	fflush(NULL);
	saved_out = dup(1);
	saved_err = dup(2);
	fo = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	fe = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ASSERT_TRUE(fo >= 0 && fe >= 0);
	dup2(fo, 1);
	dup2(fe, 2);
	r->rc = relay_main(argc, (char **)argv);
	fflush(NULL);
	dup2(saved_out, 1);
	dup2(saved_err, 2);
	close(saved_out);
	close(saved_err);
	close(fo);
	close(fe);
	slurp(out_path, r->out, sizeof(r->out));
	slurp(err_path, r->err, sizeof(r->err));
}

static void check_usage(const char *text)
{
	ASSERT_TRUE(strstr(text, "Usage: traced_relay") != NULL);
	ASSERT_TRUE(strstr(text, "PERFETTO_RELAY_SOCK_NAME") != NULL);
	ASSERT_TRUE(strstr(text, "192.168.0.1:20001") != NULL);
	ASSERT_TRUE(strstr(text, "vsock://2:20001") != NULL);
	ASSERT_TRUE(strstr(text, "--set-socket-permissions") != NULL);
}

TEST(cli_missing_or_empty_relay_socket_prints_usage)
{
	static const char *const argv[] = {"traced_relay", NULL};
	struct cli_result r;

	unsetenv("PERFETTO_RELAY_SOCK_NAME");
	run_cli(&r, argv);
	ASSERT_EQ(r.rc, 1);
	check_usage(r.err);
	ASSERT_STREQ(r.out, "");
	setenv("PERFETTO_RELAY_SOCK_NAME", "", 1);
	run_cli(&r, argv);
	ASSERT_EQ(r.rc, 1);
	check_usage(r.err);
}

TEST(cli_version_and_help)
{
	static const char *const version[] = {"traced_relay", "--version", NULL};
	static const char *const help[] = {"traced_relay", "--help", NULL};
	static const char *const h[] = {"traced_relay", "-h", NULL};
	static const char *const bad[] = {"traced_relay", "--no-such-flag", NULL};
	struct cli_result r;

	/* Neither needs PERFETTO_RELAY_SOCK_NAME. */
	unsetenv("PERFETTO_RELAY_SOCK_NAME");
	run_cli(&r, version);
	ASSERT_EQ(r.rc, 0);
	ASSERT_STREQ(r.out, PFC_VERSION_STRING "\n");
	run_cli(&r, help);
	ASSERT_EQ(r.rc, 0);
	check_usage(r.out);
	run_cli(&r, h);
	ASSERT_EQ(r.rc, 0);
	check_usage(r.out);
	run_cli(&r, bad);
	ASSERT_EQ(r.rc, 1);
	check_usage(r.err);
}

TEST(cli_bad_socket_permissions_exit_1)
{
	static const char *const bad[] = {
		"foo", "a:b:c", ":0660", "grp:", ":", "grp:0x60", "grp:066", "grp:06600", "grp:0668",
		"grp:0660:", "",
	};
	const char *argv[] = {"traced_relay", "--set-socket-permissions", NULL, NULL};
	struct cli_result r;
	size_t i;

	setenv("PERFETTO_RELAY_SOCK_NAME", "127.0.0.1:1", 1);
	for (i = 0; i < PFC_ARRAY_SIZE(bad); i++) {
		argv[2] = bad[i];
		run_cli(&r, argv);
		if (r.rc != 1)
			FAIL("'%s' gave exit %d", bad[i], r.rc);
		ASSERT_TRUE(strstr(r.err, "GROUP:MODE") != NULL);
	}
}

TEST(cli_refuses_a_socket_traced_serves)
{
	static const char *const argv[] = {"traced_relay", NULL};
	struct cli_result r;
	int busy;

	ASSERT_EQ(sock_listen(abstract_name("traced"), 4, &busy), 0);
	setenv("PERFETTO_PRODUCER_SOCK_NAME", abstract_name("traced"), 1);
	setenv("PERFETTO_RELAY_SOCK_NAME", "127.0.0.1:1", 1);
	run_cli(&r, argv);
	ASSERT_EQ(r.rc, 1);
	ASSERT_TRUE(strstr(r.err, "already served") != NULL);
	ASSERT_TRUE(strstr(r.err, abstract_name("traced")) != NULL);
	close(busy);
}

/* Starts relay_main(@argv) in a child; returns its pid once it is ready. */
static pid_t spawn_relay(const char *const *argv)
{
	int p[2], argc = 0;
	char env[16], c;
	pid_t pid;

	while (argv[argc])
		argc++;
	ASSERT_EQ(pipe(p), 0);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		/* A failed test must not leave a daemon behind. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(p[0]);
		snprintf(env, sizeof(env), "%d", p[1]);
		setenv("TRACED_RELAY_NOTIFY_FD", env, 1);
		_exit(relay_main(argc, (char **)argv));
	}
	close(p[1]);
	ASSERT_EQ(read(p[0], &c, 1), 1);
	ASSERT_EQ(c, '1');
	close(p[0]);
	return pid;
}

TEST(cli_serves_stale_path_applies_permissions_and_exits_on_sigterm)
{
	char path[512], perm[64];
	const char *argv[] = {"traced_relay", "--set-socket-permissions", perm, NULL};
	struct stat st;
	int fd, status;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/producer.sock", test_tmpdir());
	ASSERT_EQ(sock_listen(path, 1, &fd), 0);
	close(fd); /* a stale socket file stays behind */
	snprintf(perm, sizeof(perm), "%u:0640", (unsigned)getegid());
	setenv("PERFETTO_PRODUCER_SOCK_NAME", path, 1);
	setenv("PERFETTO_RELAY_SOCK_NAME", "127.0.0.1:1", 1);
	pid = spawn_relay(argv);
	ASSERT_EQ(stat(path, &st), 0);
	ASSERT_TRUE(S_ISSOCK(st.st_mode));
	ASSERT_EQ(st.st_mode & 07777, 0640);
	ASSERT_EQ(st.st_gid, getegid());
	ASSERT_EQ(sock_connect(path, &fd), 0);
	close(fd);
	ASSERT_EQ(kill(pid, SIGTERM), 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	/* It removes its socket file on the way out. */
	ASSERT_TRUE(stat(path, &st) != 0);
}

TEST(cli_unknown_group_exit_1)
{
	static const char *const argv[] = {"traced_relay", "--set-socket-permissions",
					   "no-such-group-pfc:0660", NULL};
	char path[512];
	struct cli_result r;
	struct stat st;

	snprintf(path, sizeof(path), "%s/producer.sock", test_tmpdir());
	setenv("PERFETTO_PRODUCER_SOCK_NAME", path, 1);
	setenv("PERFETTO_RELAY_SOCK_NAME", "127.0.0.1:1", 1);
	run_cli(&r, argv);
	ASSERT_EQ(r.rc, 1);
	ASSERT_TRUE(strstr(r.err, "no-such-group-pfc") != NULL);
	ASSERT_TRUE(stat(path, &st) != 0);
}

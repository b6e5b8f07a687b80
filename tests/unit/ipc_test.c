// SPDX-License-Identifier: Apache-2.0
/*
 * ipc_test.c - unit tests for src/ipc: the frame codec (splits, coalescing,
 * the 128 KiB limit, garbage), and a host with clients in one process on
 * one evloop over UNIX, abstract and TCP loopback sockets, plus raw sockets
 * that speak the wire format by hand to play a hostile peer or host.
 */
#include "ipc/ipc.h"
#include "ipc/ipc_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/evloop.h"
#include "base/hash.h"
#include "base/sock.h"
#include "harness.h"
#include "ipc/consumer_port.pb-c.h"
#include "ipc/producer_port.pb-c.h"
#include "ipc/relay_port.pb-c.h"

typedef Perfetto__Protos__IPCFrame frame_t;

/* ----------------------------------------------------------- helpers --- */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Runs the loop until *flag becomes >= want or 5 s pass; returns *flag. */
static int pump_until(struct evloop *loop, const int *flag, int want)
{
	uint64_t end = now_ms() + 5000;

	while (*flag < want && now_ms() < end)
		ASSERT_GE(evloop_run_once(loop, 10), 0);
	return *flag;
}

static void pump_for(struct evloop *loop, int ms)
{
	uint64_t end = now_ms() + (uint64_t)ms;

	while (now_ms() < end)
		evloop_run_once(loop, 5);
}

static void encode_bind(struct buf *b, uint64_t req, const char *name)
{
	frame_t f = PERFETTO__PROTOS__IPCFRAME__INIT;
	Perfetto__Protos__IPCFrame__BindService bs = PERFETTO__PROTOS__IPCFRAME__BIND_SERVICE__INIT;

	f.has_request_id = true;
	f.request_id = req;
	f.msg_case = PERFETTO__PROTOS__IPCFRAME__MSG_MSG_BIND_SERVICE;
	f.msg_bind_service = &bs;
	bs.service_name = (char *)name;
	ASSERT_GT(ipc_frame_encode(&f, b), 0);
}

static void encode_invoke(struct buf *b, uint64_t req, uint32_t svc, uint32_t method)
{
	frame_t f = PERFETTO__PROTOS__IPCFRAME__INIT;
	Perfetto__Protos__IPCFrame__InvokeMethod im = PERFETTO__PROTOS__IPCFRAME__INVOKE_METHOD__INIT;

	f.has_request_id = true;
	f.request_id = req;
	f.msg_case = PERFETTO__PROTOS__IPCFRAME__MSG_MSG_INVOKE_METHOD;
	f.msg_invoke_method = &im;
	im.has_service_id = im.has_method_id = true;
	im.service_id = svc;
	im.method_id = method;
	ASSERT_GT(ipc_frame_encode(&f, b), 0);
}

static void encode_identity(struct buf *b, int32_t pid, const char *hint, const char *name)
{
	frame_t f = PERFETTO__PROTOS__IPCFRAME__INIT;
	Perfetto__Protos__IPCFrame__SetPeerIdentity id =
		PERFETTO__PROTOS__IPCFRAME__SET_PEER_IDENTITY__INIT;

	f.has_request_id = true;
	f.msg_case = PERFETTO__PROTOS__IPCFRAME__MSG_SET_PEER_IDENTITY;
	f.set_peer_identity = &id;
	id.has_pid = id.has_uid = true;
	id.pid = pid;
	id.uid = pid + 1;
	id.machine_id_hint = (char *)hint;
	id.machine_name = (char *)name;
	ASSERT_GT(ipc_frame_encode(&f, b), 0);
}

static void raw_send(int fd, const struct buf *b)
{
	size_t off = 0;

	while (off < b->len) {
		ssize_t n = sock_send(fd, b->data + off, b->len - off);

		ASSERT_GT(n, 0);
		off += (size_t)n;
	}
}

/* Reads one frame from a raw non-blocking socket while running the loop.
 * Returns 1 with a frame, 0 at end of stream. */
static int raw_read_frame(struct evloop *loop, int fd, struct ipc_frame_reader *r, frame_t **out)
{
	uint64_t end = now_ms() + 5000;

	while (now_ms() < end) {
		uint8_t tmp[4096];
		ssize_t n;
		int got = ipc_frame_reader_pop(r, out);

		ASSERT_GE(got, 0);
		if (got == 1)
			return 1;
		n = recv(fd, tmp, sizeof(tmp), MSG_DONTWAIT);
		if (n == 0)
			return 0;
		if (n < 0) {
			ASSERT_TRUE(errno == EAGAIN || errno == ECONNRESET);
			if (errno == ECONNRESET)
				return 0;
			evloop_run_once(loop, 5);
			continue;
		}
		ASSERT_EQ(ipc_frame_reader_feed(r, tmp, (size_t)n), n);
	}
	FAIL("no frame within 5 s");
}

/* ------------------------------------------------------------ frames --- */

static void make_frames(struct buf *b)
{
	encode_bind(b, 1, "ConsumerPort");
	encode_invoke(b, 2, 1, 3);
	encode_identity(b, 42, "hint", "name");
}

static void check_frames(frame_t **f)
{
	ASSERT_EQ(f[0]->request_id, 1);
	ASSERT_EQ(f[0]->msg_case, PERFETTO__PROTOS__IPCFRAME__MSG_MSG_BIND_SERVICE);
	ASSERT_STREQ(f[0]->msg_bind_service->service_name, "ConsumerPort");
	ASSERT_EQ(f[1]->request_id, 2);
	ASSERT_EQ(f[1]->msg_invoke_method->method_id, 3);
	ASSERT_EQ(f[2]->set_peer_identity->pid, 42);
	ASSERT_STREQ(f[2]->set_peer_identity->machine_name, "name");
}

TEST(frame_byte_by_byte)
{
	struct buf b = BUF_INIT;
	struct ipc_frame_reader r;
	frame_t *f[4] = {NULL};
	size_t i, n = 0;

	make_frames(&b);
	ipc_frame_reader_init(&r);
	for (i = 0; i < b.len; i++) {
		ASSERT_EQ(ipc_frame_reader_feed(&r, b.data + i, 1), 1);
		while (n < 4) {
			int got = ipc_frame_reader_pop(&r, &f[n]);

			ASSERT_GE(got, 0);
			if (!got)
				break;
			n++;
		}
	}
	ASSERT_EQ(n, 3);
	check_frames(f);
	for (i = 0; i < 3; i++)
		ipc_frame_free(f[i]);
	ipc_frame_reader_fini(&r);
	buf_fini(&b);
}

TEST(frame_coalesced_and_split_anywhere)
{
	struct buf b = BUF_INIT;
	size_t cut, i;

	make_frames(&b);
	make_frames(&b);
	for (cut = 0; cut <= b.len; cut++) {
		struct ipc_frame_reader r;
		frame_t *f[6];
		size_t n = 0;
		int got;

		ipc_frame_reader_init(&r);
		ASSERT_EQ(ipc_frame_reader_feed(&r, b.data, cut), (int)cut);
		while ((got = ipc_frame_reader_pop(&r, &f[n])) == 1)
			n++;
		ASSERT_EQ(got, 0);
		ASSERT_EQ(ipc_frame_reader_feed(&r, b.data + cut, b.len - cut), (int)(b.len - cut));
		while (n < 6 && (got = ipc_frame_reader_pop(&r, &f[n])) == 1)
			n++;
		ASSERT_EQ(n, 6);
		ASSERT_EQ(ipc_frame_reader_pop(&r, &f[0]), 0);
		check_frames(f);
		check_frames(f + 3);
		for (i = 0; i < 6; i++)
			ipc_frame_free(f[i]);
		ipc_frame_reader_fini(&r);
	}
	buf_fini(&b);
}

TEST(frame_oversize_declared_length_rejected_at_header)
{
	static const uint8_t hdr1[4] = {0xfd, 0xff, 0x01, 0x00}; /* 131069 + 4 > 128 KiB */
	static const uint8_t hdr2[4] = {0xff, 0xff, 0xff, 0xff};
	struct ipc_frame_reader r;
	const uint8_t *p;
	size_t len;
	frame_t *f;

	ASSERT_EQ(ipc_frame_next(hdr1, 4, &p, &len), -EMSGSIZE);
	ASSERT_EQ(ipc_frame_next(hdr2, 4, &p, &len), -EMSGSIZE);
	ASSERT_EQ(ipc_frame_next(hdr1, 3, &p, &len), 0);
	ipc_frame_reader_init(&r);
	ASSERT_EQ(ipc_frame_reader_feed(&r, hdr1, 4), 4);
	ASSERT_EQ(ipc_frame_reader_pop(&r, &f), -EMSGSIZE);
	ipc_frame_reader_fini(&r);
}

TEST(frame_exact_limit_boundary)
{
	frame_t f = PERFETTO__PROTOS__IPCFRAME__INIT;
	ProtobufCBinaryData d;
	struct ipc_frame_reader r;
	struct buf b = BUF_INIT;
	frame_t *got = NULL;
	size_t n;

	f.n_data_for_testing = 1;
	f.data_for_testing = &d;
	d.len = IPC_MAX_FRAME_BYTES;
	d.data = calloc(1, d.len + 1);
	/* Shrink the payload until the whole frame is exactly 128 KiB. */
	while (perfetto__protos__ipcframe__get_packed_size(&f) + 4 > IPC_MAX_FRAME_BYTES)
		d.len--;
	ASSERT_EQ(perfetto__protos__ipcframe__get_packed_size(&f) + 4, IPC_MAX_FRAME_BYTES);
	ASSERT_EQ(ipc_frame_encode(&f, &b), (int)IPC_MAX_FRAME_BYTES);
	ipc_frame_reader_init(&r);
	ASSERT_EQ(ipc_frame_reader_feed(&r, b.data, b.len), (int)IPC_MAX_FRAME_BYTES);
	ASSERT_EQ(ipc_frame_reader_pop(&r, &got), 1);
	ASSERT_EQ(got->data_for_testing[0].len, d.len);
	ipc_frame_free(got);

	/* One byte more is refused by the encoder and by the decoder. */
	d.len++;
	n = b.len;
	ASSERT_EQ(ipc_frame_encode(&f, &b), -EMSGSIZE);
	ASSERT_EQ(b.len, n);
	b.data[0]++; /* the same frame, declared one byte longer */
	ASSERT_EQ(ipc_frame_reader_feed(&r, b.data, 4), 4);
	ASSERT_EQ(ipc_frame_reader_pop(&r, &got), -EMSGSIZE);
	ipc_frame_reader_fini(&r);
	free(d.data);
	buf_fini(&b);
}

TEST(frame_garbage_rejected_empty_skipped)
{
	static const uint8_t empty_then_bad[] = {0, 0, 0, 0, 3, 0, 0, 0, 0xff, 0xff, 0xff};
	struct ipc_frame_reader r;
	frame_t *f;

	ipc_frame_reader_init(&r);
	ASSERT_EQ(ipc_frame_reader_feed(&r, empty_then_bad, sizeof(empty_then_bad)),
		  (int)sizeof(empty_then_bad));
	ASSERT_EQ(ipc_frame_reader_pop(&r, &f), -EBADMSG);
	ipc_frame_reader_fini(&r);
}

TEST(frame_reader_buffer_is_bounded)
{
	struct ipc_frame_reader r;
	uint8_t *big = calloc(1, 3 * IPC_MAX_FRAME_BYTES);
	uint8_t *p;
	size_t room;

	/* Three frames of 128 KiB declared: only as much as fits goes in. */
	big[0] = 0xfc;
	big[1] = 0xff;
	big[2] = 0x01;
	ipc_frame_reader_init(&r);
	ASSERT_EQ(ipc_frame_reader_feed(&r, big, 3 * IPC_MAX_FRAME_BYTES), (int)IPC_MAX_FRAME_BYTES);
	ASSERT_EQ(r.cap, IPC_MAX_FRAME_BYTES);
	ASSERT_EQ(ipc_frame_reader_space(&r, &p, &room), -ENOBUFS);
	ipc_frame_reader_fini(&r);
	free(big);
}

/* ------------------------------------------------------- host fixture --- */

static struct {
	struct evloop *loop;
	struct ipc_host *host;
	int n_connect, n_disconnect, n_calls;
	uint64_t last_disconnected;
	struct ipc_call saved;
	int saved_n;
	struct ipc_client_info info;
	char info_name[64];
	int info_n;
	int fd_written;
	int overflow_err;
} g;

static void record_info(const struct ipc_call *call)
{
	ASSERT_EQ(ipc_host_client_info(g.host, call->client_id, &g.info), 0);
	snprintf(g.info_name, sizeof(g.info_name), "%s", g.info.machine_name);
	g.info.machine_name = g.info_name;
	g.info_n++;
}

/* ConsumerPort.EnableTracing: echoes, and records who called. */
static void h_enable(struct ipc_host *h, const struct ipc_call *call, const ProtobufCMessage *args,
		     void *user)
{
	Perfetto__Protos__EnableTracingResponse r = PERFETTO__PROTOS__ENABLE_TRACING_RESPONSE__INIT;
	const Perfetto__Protos__EnableTracingRequest *req = (const void *)args;

	(void)user;
	g.n_calls++;
	record_info(call);
	r.state_case = PERFETTO__PROTOS__ENABLE_TRACING_RESPONSE__STATE_DISABLED;
	r.disabled = true;
	r.error = req->attach_notification_only ? "attach" : "echo";
	ASSERT_EQ(ipc_host_reply(h, call, &r.base, false, -1), 0);
}

/* ConsumerPort.ReadBuffers: three has_more replies, then a final one. */
static void h_read_buffers(struct ipc_host *h, const struct ipc_call *call,
			   const ProtobufCMessage *args, void *user)
{
	int i;

	(void)args;
	(void)user;
	g.n_calls++;
	for (i = 0; i < 4; i++) {
		Perfetto__Protos__ReadBuffersResponse r = PERFETTO__PROTOS__READ_BUFFERS_RESPONSE__INIT;
		Perfetto__Protos__ReadBuffersResponse__Slice s =
			PERFETTO__PROTOS__READ_BUFFERS_RESPONSE__SLICE__INIT;
		Perfetto__Protos__ReadBuffersResponse__Slice *sp = &s;
		char data[8];

		data[0] = 's';
		data[1] = (char)('0' + i);
		data[2] = '\0';
		s.has_data = true;
		s.data.data = (uint8_t *)data;
		s.data.len = strlen(data);
		r.n_slices = 1;
		r.slices = &sp;
		ASSERT_EQ(ipc_host_reply(h, call, &r.base, i < 3, -1), 0);
	}
}

/* ConsumerPort.Flush / ObserveEvents: answered later by the test. */
static void h_save(struct ipc_host *h, const struct ipc_call *call, const ProtobufCMessage *args,
		   void *user)
{
	(void)h;
	(void)args;
	(void)user;
	g.n_calls++;
	g.saved = *call;
	g.saved_n++;
}

/* ConsumerPort.GetTraceStats: floods a client that does not read. */
static void h_flood(struct ipc_host *h, const struct ipc_call *call, const ProtobufCMessage *args,
		    void *user)
{
	Perfetto__Protos__ReadBuffersResponse r = PERFETTO__PROTOS__READ_BUFFERS_RESPONSE__INIT;
	Perfetto__Protos__ReadBuffersResponse__Slice s =
		PERFETTO__PROTOS__READ_BUFFERS_RESPONSE__SLICE__INIT;
	Perfetto__Protos__ReadBuffersResponse__Slice *sp = &s;
	int i, err = 0;

	(void)args;
	(void)user;
	s.has_data = true;
	s.data.len = 60000;
	s.data.data = calloc(1, s.data.len);
	r.n_slices = 1;
	r.slices = &sp;
	for (i = 0; i < 1000 && err == 0; i++)
		err = ipc_host_reply(h, call, &r.base, true, -1);
	g.overflow_err = err;
	/* The client is gone for the host from now on. */
	ASSERT_EQ(ipc_host_reply(h, call, &r.base, true, -1), -ENOTCONN);
	free(s.data.data);
}

/* ConsumerPort.Attach: a reply over the frame limit is refused, not sent. */
static void h_too_big(struct ipc_host *h, const struct ipc_call *call,
		      const ProtobufCMessage *args, void *user)
{
	Perfetto__Protos__ReadBuffersResponse r = PERFETTO__PROTOS__READ_BUFFERS_RESPONSE__INIT;
	Perfetto__Protos__ReadBuffersResponse__Slice s =
		PERFETTO__PROTOS__READ_BUFFERS_RESPONSE__SLICE__INIT;
	Perfetto__Protos__ReadBuffersResponse__Slice *sp = &s;

	(void)args;
	(void)user;
	s.has_data = true;
	s.data.len = IPC_MAX_FRAME_BYTES;
	s.data.data = calloc(1, s.data.len);
	r.n_slices = 1;
	r.slices = &sp;
	ASSERT_EQ(ipc_host_reply(h, call, &r.base, false, -1), -EMSGSIZE);
	ASSERT_EQ(ipc_host_reply_error(h, call), 0);
	free(s.data.data);
}

/* ProducerPort.InitializeConnection: writes into the fd the producer sent. */
static void h_init_conn(struct ipc_host *h, const struct ipc_call *call,
			const ProtobufCMessage *args, void *user)
{
	Perfetto__Protos__InitializeConnectionResponse r =
		PERFETTO__PROTOS__INITIALIZE_CONNECTION_RESPONSE__INIT;
	int fd = ipc_host_take_fd(h, call->client_id);

	(void)args;
	(void)user;
	g.n_calls++;
	record_info(call);
	if (fd >= 0) {
		ASSERT_EQ(write(fd, "hello", 5), 5);
		close(fd);
		g.fd_written = 1;
	}
	r.has_use_shmem_emulation = true;
	r.use_shmem_emulation = ipc_host_use_shmem_emulation(h);
	ASSERT_EQ(ipc_host_reply(h, call, &r.base, false, -1), 0);
}

/* ProducerPort.GetAsyncCommand: replies with the read end of a pipe. */
static void h_async_cmd(struct ipc_host *h, const struct ipc_call *call,
			const ProtobufCMessage *args, void *user)
{
	Perfetto__Protos__GetAsyncCommandResponse r =
		PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__INIT;
	int p[2];

	(void)args;
	(void)user;
	ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
	ASSERT_EQ(write(p[1], "world", 5), 5);
	close(p[1]);
	ASSERT_EQ(ipc_host_reply(h, call, &r.base, true, p[0]), 0);
	close(p[0]); /* the host sent its own duplicate */
}

static void on_connect(struct ipc_host *h, uint64_t client_id, void *user)
{
	(void)h;
	(void)client_id;
	if (user == (void *)1) /* counted for the consumer service only */
		g.n_connect++;
}

static void on_disconnect(struct ipc_host *h, uint64_t client_id, void *user)
{
	struct ipc_client_info info;

	/* Still known while its disconnect callbacks run. */
	ASSERT_EQ(ipc_host_client_info(h, client_id, &info), 0);
	if (user == (void *)1) {
		g.n_disconnect++;
		g.last_disconnected = client_id;
	}
}

static void start_host(const char *name, const struct ipc_host_options *opts)
{
	static const ipc_method_cb consumer[] = {
		h_enable, NULL, h_read_buffers, NULL, h_save, NULL, NULL,
		NULL,     h_too_big, h_flood,   h_save,
	};
	static const ipc_method_cb producer[] = {h_init_conn, NULL, NULL, NULL, h_async_cmd};
	struct ipc_service_def c = {&perfetto__protos__consumer_port__descriptor, consumer,
				    PFC_ARRAY_SIZE(consumer), on_connect, on_disconnect, (void *)1};
	struct ipc_service_def p = {&perfetto__protos__producer_port__descriptor, producer,
				    PFC_ARRAY_SIZE(producer), on_connect, on_disconnect, (void *)2};
	uint32_t id = 0;

	ASSERT_EQ(evloop_create(&g.loop), 0);
	ASSERT_EQ(ipc_host_create(g.loop, name, opts, &g.host), 0);
	ASSERT_EQ(ipc_host_expose(g.host, &c, &id), 0);
	ASSERT_EQ(id, 1);
	ASSERT_EQ(ipc_host_expose(g.host, &p, &id), 0);
	ASSERT_EQ(id, 2);
	ASSERT_EQ(ipc_host_expose(g.host, &p, &id), -EEXIST);
}

static void stop_host(void)
{
	ipc_host_destroy(g.host);
	evloop_destroy(g.loop);
}

static const char *unix_name(void)
{
	static char path[256];

	snprintf(path, sizeof(path), "%s/ipc.sock", test_tmpdir());
	return path;
}

static const char *tcp_name(void)
{
	static char name[SOCK_NAME_MAX];

	ASSERT_EQ(sock_local_name(ipc_host_listen_fd(g.host), name, sizeof(name)), 0);
	return name;
}

/* ----------------------------------------------------- client fixture --- */

struct cl {
	struct ipc_client *c;
	struct ipc_binding *b;
	int connected, disconnected, bound, bind_ok, replies, finals, fails;
	int err;
	char last[64];
	int fd;
};

static void cl_connected(struct ipc_client *c, void *user)
{
	struct cl *x = user;

	(void)c;
	x->connected++;
}

static void cl_disconnected(struct ipc_client *c, int err, void *user)
{
	struct cl *x = user;

	(void)c;
	x->disconnected++;
	x->err = err;
}

static void cl_bound(struct ipc_binding *b, bool ok, void *user)
{
	struct cl *x = user;

	(void)b;
	x->bound++;
	x->bind_ok = ok;
}

static void cl_reply(const struct ipc_reply *r, void *user)
{
	struct cl *x = user;

	x->replies++;
	if (!r->has_more)
		x->finals++;
	if (!r->success) {
		x->fails++;
		ASSERT_FALSE(r->has_more);
		return;
	}
	ASSERT_TRUE(r->msg != NULL);
	if (r->desc == &perfetto__protos__enable_tracing_response__descriptor) {
		const Perfetto__Protos__EnableTracingResponse *m = (const void *)r->msg;

		snprintf(x->last, sizeof(x->last), "%s", m->error);
	} else if (r->desc == &perfetto__protos__read_buffers_response__descriptor) {
		const Perfetto__Protos__ReadBuffersResponse *m = (const void *)r->msg;

		if (m->n_slices == 1)
			snprintf(x->last + strlen(x->last), sizeof(x->last) - strlen(x->last),
				 "%.*s,", (int)m->slices[0]->data.len,
				 (const char *)m->slices[0]->data.data);
	}
	if (r->fd >= 0) {
		ASSERT_EQ(x->fd, -1);
		x->fd = r->fd;
	}
}

static void cl_open(struct cl *x, const char *name, const ProtobufCServiceDescriptor *svc)
{
	struct ipc_client_callbacks cbs = {cl_connected, cl_disconnected};

	memset(x, 0, sizeof(*x));
	x->fd = -1;
	ASSERT_EQ(ipc_client_connect(g.loop, name, &cbs, x, &x->c), 0);
	if (svc) {
		ASSERT_EQ(ipc_client_bind(x->c, svc, cl_bound, x, &x->b), 0);
		ASSERT_EQ(pump_until(g.loop, &x->bound, 1), 1);
		ASSERT_EQ(x->connected, 1);
	}
}

static void cl_enable(struct cl *x, bool attach)
{
	Perfetto__Protos__EnableTracingRequest req = PERFETTO__PROTOS__ENABLE_TRACING_REQUEST__INIT;
	int want = x->finals + 1;

	req.has_attach_notification_only = true;
	req.attach_notification_only = attach;
	x->last[0] = '\0';
	ASSERT_EQ(ipc_client_invoke(x->c, x->b, "EnableTracing", &req.base, -1, cl_reply, x, false),
		  0);
	ASSERT_EQ(pump_until(g.loop, &x->finals, want), want);
}

/* --------------------------------------------------------- host tests --- */

static const char *const k_consumer_methods[] = {
	"EnableTracing", "DisableTracing",    "ReadBuffers",   "FreeBuffers",
	"Flush",         "StartTracing",      "ChangeTraceConfig", "Detach",
	"Attach",        "GetTraceStats",     "ObserveEvents", "QueryServiceState",
	"QueryCapabilities", "SaveTraceForBugreport", "CloneSession",
};
static const char *const k_producer_methods[] = {
	"InitializeConnection",  "RegisterDataSource",      "UnregisterDataSource",
	"CommitData",            "GetAsyncCommand",         "RegisterTraceWriter",
	"UnregisterTraceWriter", "NotifyDataSourceStarted", "NotifyDataSourceStopped",
	"ActivateTriggers",      "Sync",                    "UpdateDataSource",
};

static void check_bind_and_call(const char *name)
{
	struct cl a, p;
	size_t i;

	cl_open(&a, name, &perfetto__protos__consumer_port__descriptor);
	ASSERT_TRUE(a.bind_ok);
	ASSERT_EQ(ipc_binding_service_id(a.b), 1);
	for (i = 0; i < PFC_ARRAY_SIZE(k_consumer_methods); i++)
		ASSERT_EQ(ipc_binding_method_id(a.b, k_consumer_methods[i]), i + 1);
	cl_open(&p, name, &perfetto__protos__producer_port__descriptor);
	ASSERT_TRUE(p.bind_ok);
	ASSERT_EQ(ipc_binding_service_id(p.b), 2);
	for (i = 0; i < PFC_ARRAY_SIZE(k_producer_methods); i++)
		ASSERT_EQ(ipc_binding_method_id(p.b, k_producer_methods[i]), i + 1);
	cl_enable(&a, false);
	ASSERT_STREQ(a.last, "echo");
	cl_enable(&a, true);
	ASSERT_STREQ(a.last, "attach");
	ASSERT_EQ(a.fails, 0);
	ASSERT_EQ(g.n_connect, 2);
	ipc_client_destroy(a.c);
	ipc_client_destroy(p.c);
	ASSERT_EQ(pump_until(g.loop, &g.n_disconnect, 2), 2);
}

TEST(host_unix_bind_ids_and_call)
{
	start_host(unix_name(), NULL);
	ASSERT_FALSE(ipc_host_use_shmem_emulation(g.host));
	check_bind_and_call(unix_name());
	stop_host();
}

TEST(host_abstract_bind_ids_and_call)
{
	char name[64];

	snprintf(name, sizeof(name), "@pfc-ipc-test-%d", (int)getpid());
	start_host(name, NULL);
	check_bind_and_call(name);
	stop_host();
}

TEST(host_tcp_bind_ids_and_call)
{
	start_host("127.0.0.1:0", NULL);
	ASSERT_TRUE(ipc_host_use_shmem_emulation(g.host));
	check_bind_and_call(tcp_name());
	stop_host();
}

TEST(host_streaming_reply)
{
	struct cl a;

	start_host(unix_name(), NULL);
	cl_open(&a, unix_name(), &perfetto__protos__consumer_port__descriptor);
	ASSERT_EQ(ipc_client_invoke(a.c, a.b, "ReadBuffers", NULL, -1, cl_reply, &a, false), 0);
	ASSERT_EQ(pump_until(g.loop, &a.finals, 1), 1);
	ASSERT_EQ(a.replies, 4);
	ASSERT_STREQ(a.last, "s0,s1,s2,s3,");
	/* A stream's call is gone after its last reply: more is ignored. */
	ipc_client_destroy(a.c);
	stop_host();
}

TEST(host_deferred_reply_and_drop_reply)
{
	Perfetto__Protos__FlushResponse fr = PERFETTO__PROTOS__FLUSH_RESPONSE__INIT;
	struct cl a;

	start_host(unix_name(), NULL);
	cl_open(&a, unix_name(), &perfetto__protos__consumer_port__descriptor);
	/* drop_reply: the handler runs, its reply goes nowhere. */
	ASSERT_EQ(ipc_client_invoke(a.c, a.b, "Flush", NULL, -1, NULL, NULL, true), 0);
	ASSERT_EQ(pump_until(g.loop, &g.saved_n, 1), 1);
	ASSERT_TRUE(g.saved.drop_reply);
	ASSERT_EQ(ipc_host_reply(g.host, &g.saved, &fr.base, false, -1), 0);
	/* Answered after the handler returned. */
	ASSERT_EQ(ipc_client_invoke(a.c, a.b, "Flush", NULL, -1, cl_reply, &a, false), 0);
	ASSERT_EQ(pump_until(g.loop, &g.saved_n, 2), 2);
	ASSERT_FALSE(g.saved.drop_reply);
	ASSERT_EQ(g.saved.request_id, 3); /* bind=1, dropped flush=2 */
	pump_for(g.loop, 20);
	ASSERT_EQ(a.replies, 0);
	ASSERT_EQ(ipc_host_reply(g.host, &g.saved, &fr.base, false, -1), 0);
	ASSERT_EQ(pump_until(g.loop, &a.finals, 1), 1);
	pump_for(g.loop, 20);
	ASSERT_EQ(a.replies, 1);
	ASSERT_EQ(a.fails, 0);
	ipc_client_destroy(a.c);
	stop_host();
}

TEST(host_unknown_service_unimplemented_and_unknown_method)
{
	struct ipc_frame_reader r;
	struct buf b = BUF_INIT;
	struct cl a, x;
	frame_t *f;
	int fd;

	start_host(unix_name(), NULL);
	cl_open(&x, unix_name(), &perfetto__protos__relay_port__descriptor);
	ASSERT_FALSE(x.bind_ok);
	ASSERT_EQ(ipc_binding_service_id(x.b), 0);
	ASSERT_EQ(ipc_client_invoke(x.c, x.b, "InitRelay", NULL, -1, cl_reply, &x, false),
		  -ENOTCONN);
	/* A method with no handler answers success=false. */
	cl_open(&a, unix_name(), &perfetto__protos__consumer_port__descriptor);
	ASSERT_EQ(ipc_client_invoke(a.c, a.b, "DisableTracing", NULL, -1, cl_reply, &a, false), 0);
	ASSERT_EQ(pump_until(g.loop, &a.finals, 1), 1);
	ASSERT_EQ(a.fails, 1);
	ASSERT_EQ(ipc_client_invoke(a.c, a.b, "NoSuchMethod", NULL, -1, cl_reply, &a, false),
		  -ENOENT);

	/* Raw: bind by the wire name, unknown method id, unknown service id,
	 * and a frame with no msg. */
	ASSERT_EQ(sock_connect(unix_name(), &fd), 0);
	encode_bind(&b, 4, "ProducerPort");
	encode_invoke(&b, 5, 1, 99);
	encode_invoke(&b, 6, 9, 1);
	{
		frame_t empty = PERFETTO__PROTOS__IPCFRAME__INIT;

		empty.has_request_id = true;
		empty.request_id = 7;
		ASSERT_GT(ipc_frame_encode(&empty, &b), 0);
	}
	raw_send(fd, &b);
	ipc_frame_reader_init(&r);
	ASSERT_EQ(raw_read_frame(g.loop, fd, &r, &f), 1);
	ASSERT_EQ(f->request_id, 4);
	ASSERT_TRUE(f->msg_bind_service_reply->success);
	ASSERT_EQ(f->msg_bind_service_reply->service_id, 2);
	ASSERT_EQ(f->msg_bind_service_reply->n_methods, 12);
	ASSERT_STREQ(f->msg_bind_service_reply->methods[11]->name, "UpdateDataSource");
	ASSERT_EQ(f->msg_bind_service_reply->methods[11]->id, 12);
	ipc_frame_free(f);
	ASSERT_EQ(raw_read_frame(g.loop, fd, &r, &f), 1);
	ASSERT_EQ(f->request_id, 5);
	ASSERT_EQ(f->msg_case, PERFETTO__PROTOS__IPCFRAME__MSG_MSG_INVOKE_METHOD_REPLY);
	ASSERT_FALSE(f->msg_invoke_method_reply->success);
	ipc_frame_free(f);
	ASSERT_EQ(raw_read_frame(g.loop, fd, &r, &f), 1);
	ASSERT_EQ(f->request_id, 6);
	ASSERT_FALSE(f->msg_invoke_method_reply->success);
	ipc_frame_free(f);
	ASSERT_EQ(raw_read_frame(g.loop, fd, &r, &f), 1);
	ASSERT_EQ(f->request_id, 7);
	ASSERT_EQ(f->msg_case, PERFETTO__PROTOS__IPCFRAME__MSG_MSG_REQUEST_ERROR);
	ASSERT_STREQ(f->msg_request_error->error, "unknown request");
	ipc_frame_free(f);
	ipc_frame_reader_fini(&r);
	close(fd);
	buf_fini(&b);
	ipc_client_destroy(a.c);
	ipc_client_destroy(x.c);
	stop_host();
}

TEST(host_fd_passing_both_ways)
{
	Perfetto__Protos__InitializeConnectionRequest req =
		PERFETTO__PROTOS__INITIALIZE_CONNECTION_REQUEST__INIT;
	struct cl p;
	char got[8] = {0};
	int pp[2];

	start_host(unix_name(), NULL);
	cl_open(&p, unix_name(), &perfetto__protos__producer_port__descriptor);
	ASSERT_TRUE(ipc_client_supports_fds(p.c));
	/* Producer -> host: the host writes into our pipe. */
	ASSERT_EQ(pipe2(pp, O_CLOEXEC), 0);
	ASSERT_EQ(ipc_client_invoke(p.c, p.b, "InitializeConnection", &req.base, pp[1], cl_reply, &p,
				    false),
		  0);
	close(pp[1]);
	ASSERT_EQ(pump_until(g.loop, &p.finals, 1), 1);
	ASSERT_EQ(g.fd_written, 1);
	ASSERT_EQ(read(pp[0], got, sizeof(got)), 5);
	ASSERT_STREQ(got, "hello");
	close(pp[0]);
	/* Host -> producer: a pipe comes with a streamed command. */
	ASSERT_EQ(ipc_client_invoke(p.c, p.b, "GetAsyncCommand", NULL, -1, cl_reply, &p, false), 0);
	ASSERT_EQ(pump_until(g.loop, &p.replies, 2), 2);
	ASSERT_GE(p.fd, 0);
	memset(got, 0, sizeof(got));
	ASSERT_EQ(read(p.fd, got, sizeof(got)), 5);
	ASSERT_STREQ(got, "world");
	close(p.fd);
	ASSERT_EQ(ipc_client_take_fd(p.c), -ENOENT);
	ipc_client_destroy(p.c);
	stop_host();
}

TEST(host_unix_peer_cred_and_identity_ignored)
{
	struct ipc_host_options opts = {.machine_name = "hostbox"};
	struct cl a;

	start_host(unix_name(), &opts);
	cl_open(&a, unix_name(), NULL);
	ASSERT_EQ(ipc_client_send_peer_identity(a.c, 77, 88, "some-boot-id", "guest"), 0);
	ASSERT_EQ(ipc_client_send_peer_identity(a.c, 77, 88, "x", "y"), -EBUSY);
	ASSERT_EQ(ipc_client_bind(a.c, &perfetto__protos__consumer_port__descriptor, cl_bound, &a,
				  &a.b),
		  0);
	ASSERT_EQ(pump_until(g.loop, &a.bound, 1), 1);
	cl_enable(&a, false);
	ASSERT_EQ(g.info_n, 1);
	ASSERT_EQ(g.info.family, AF_UNIX);
	ASSERT_TRUE(g.info.supports_fds);
	ASSERT_EQ(g.info.pid, getpid());
	ASSERT_EQ(g.info.uid, getuid());
	ASSERT_EQ(g.info.machine_id, 0);
	ASSERT_STREQ(g.info.machine_name, "hostbox");
	ipc_client_destroy(a.c);
	stop_host();
}

TEST(host_tcp_set_peer_identity)
{
	const char *hint = "0a1b2c3d-boot-id";
	uint32_t want = (uint32_t)fnv1a64(hint, strlen(hint));
	struct cl a;

	start_host("127.0.0.1:0", NULL);
	cl_open(&a, tcp_name(), NULL);
	ASSERT_EQ(ipc_client_send_peer_identity(a.c, 1234, 5678, hint, "guest-vm"), 0);
	ASSERT_EQ(ipc_client_bind(a.c, &perfetto__protos__consumer_port__descriptor, cl_bound, &a,
				  &a.b),
		  0);
	ASSERT_EQ(pump_until(g.loop, &a.bound, 1), 1);
	ASSERT_FALSE(ipc_client_supports_fds(a.c));
	cl_enable(&a, false);
	ASSERT_NE(want, 0);
	ASSERT_U64_EQ(g.info.machine_id, want);
	ASSERT_STREQ(g.info.machine_name, "guest-vm");
	ASSERT_EQ(g.info.pid, 1234);
	ASSERT_EQ(g.info.uid, 5678);
	ASSERT_EQ(g.info.family, AF_INET);
	ASSERT_FALSE(g.info.supports_fds);
	ipc_client_destroy(a.c);
	stop_host();
}

TEST(host_tcp_second_identity_ignored_and_empty_hint)
{
	struct ipc_frame_reader r;
	struct buf b = BUF_INIT;
	frame_t *f;
	int fd;

	start_host("127.0.0.1:0", NULL);
	ASSERT_EQ(sock_connect(tcp_name(), &fd), 0);
	encode_identity(&b, 10, "first-hint", "first");
	encode_identity(&b, 20, "second-hint", "second");
	encode_invoke(&b, 1, 1, 1);
	raw_send(fd, &b);
	ipc_frame_reader_init(&r);
	ASSERT_EQ(raw_read_frame(g.loop, fd, &r, &f), 1);
	ASSERT_TRUE(f->msg_invoke_method_reply->success);
	ipc_frame_free(f);
	ASSERT_U64_EQ(g.info.machine_id, (uint32_t)fnv1a64("first-hint", 10));
	ASSERT_STREQ(g.info.machine_name, "first");
	ASSERT_EQ(g.info.pid, 10);
	ASSERT_EQ(g.info.uid, 11);
	ipc_frame_reader_fini(&r);
	close(fd);

	/* No hint: the host's own address without the port is hashed. */
	buf_reset(&b);
	ASSERT_EQ(sock_connect(tcp_name(), &fd), 0);
	encode_identity(&b, 10, NULL, NULL);
	encode_invoke(&b, 1, 1, 1);
	raw_send(fd, &b);
	ipc_frame_reader_init(&r);
	ASSERT_EQ(raw_read_frame(g.loop, fd, &r, &f), 1);
	ipc_frame_free(f);
	ASSERT_U64_EQ(g.info.machine_id, (uint32_t)fnv1a64("127.0.0.1", 9));
	ASSERT_STREQ(g.info.machine_name, "");
	ipc_frame_reader_fini(&r);
	close(fd);

	/* No SetPeerIdentity at all over TCP: uid 0, pid unknown, machine 0. */
	buf_reset(&b);
	ASSERT_EQ(sock_connect(tcp_name(), &fd), 0);
	encode_invoke(&b, 1, 1, 1);
	raw_send(fd, &b);
	ipc_frame_reader_init(&r);
	ASSERT_EQ(raw_read_frame(g.loop, fd, &r, &f), 1);
	ipc_frame_free(f);
	ASSERT_EQ(g.info.machine_id, 0);
	ASSERT_EQ(g.info.uid, 0);
	ASSERT_EQ(g.info.pid, -1);
	ipc_frame_reader_fini(&r);
	close(fd);
	buf_fini(&b);
	stop_host();
}

TEST(host_oversize_client_dropped_others_keep_working)
{
	static const uint8_t hdr[4] = {0xfd, 0xff, 0x01, 0x00}; /* one byte over */
	struct cl a;
	char tmp[16];
	int fd;

	start_host(unix_name(), NULL);
	cl_open(&a, unix_name(), &perfetto__protos__consumer_port__descriptor);
	ASSERT_EQ(sock_connect(unix_name(), &fd), 0);
	ASSERT_EQ(pump_until(g.loop, &g.n_connect, 2), 2);
	ASSERT_EQ(sock_send(fd, hdr, sizeof(hdr)), 4);
	ASSERT_EQ(pump_until(g.loop, &g.n_disconnect, 1), 1);
	ASSERT_EQ(recv(fd, tmp, sizeof(tmp), 0), 0); /* the host hung up */
	close(fd);
	ASSERT_EQ(ipc_host_n_clients(g.host), 1);
	cl_enable(&a, false);
	ASSERT_STREQ(a.last, "echo");
	ASSERT_EQ(a.disconnected, 0);
	ipc_client_destroy(a.c);
	stop_host();
}

TEST(host_garbage_frame_drops_client)
{
	static const uint8_t bad[] = {2, 0, 0, 0, 0xff, 0xff};
	char tmp[16];
	int fd;

	start_host(unix_name(), NULL);
	ASSERT_EQ(sock_connect(unix_name(), &fd), 0);
	ASSERT_EQ(sock_send(fd, bad, sizeof(bad)), (ssize_t)sizeof(bad));
	ASSERT_EQ(pump_until(g.loop, &g.n_disconnect, 1), 1);
	ASSERT_EQ(recv(fd, tmp, sizeof(tmp), 0), 0);
	close(fd);
	stop_host();
}

TEST(host_reply_after_client_left_is_harmless)
{
	Perfetto__Protos__ObserveEventsResponse ev = PERFETTO__PROTOS__OBSERVE_EVENTS_RESPONSE__INIT;
	struct cl a;
	uint64_t id;

	start_host(unix_name(), NULL);
	cl_open(&a, unix_name(), &perfetto__protos__consumer_port__descriptor);
	ASSERT_EQ(ipc_client_invoke(a.c, a.b, "ObserveEvents", NULL, -1, cl_reply, &a, false), 0);
	ASSERT_EQ(pump_until(g.loop, &g.saved_n, 1), 1);
	ASSERT_EQ(ipc_host_reply(g.host, &g.saved, &ev.base, true, -1), 0);
	ASSERT_EQ(pump_until(g.loop, &a.replies, 1), 1);
	id = g.saved.client_id;
	ipc_client_destroy(a.c); /* mid-stream */
	ASSERT_EQ(pump_until(g.loop, &g.n_disconnect, 1), 1);
	ASSERT_EQ(g.last_disconnected, id);
	ASSERT_EQ(ipc_host_reply(g.host, &g.saved, &ev.base, true, -1), -ENOTCONN);
	ASSERT_EQ(ipc_host_reply_error(g.host, &g.saved), -ENOTCONN);
	ASSERT_EQ(ipc_host_take_fd(g.host, id), -ENOENT);
	ASSERT_EQ(ipc_host_drop_client(g.host, id), -ENOENT);
	stop_host();
}

TEST(host_drop_client_fails_pending_calls)
{
	struct cl a;

	start_host(unix_name(), NULL);
	cl_open(&a, unix_name(), &perfetto__protos__consumer_port__descriptor);
	ASSERT_EQ(ipc_client_invoke(a.c, a.b, "Flush", NULL, -1, cl_reply, &a, false), 0);
	ASSERT_EQ(pump_until(g.loop, &g.saved_n, 1), 1);
	ASSERT_EQ(ipc_host_drop_client(g.host, g.saved.client_id), 0);
	ASSERT_EQ(g.n_disconnect, 0); /* deferred to the loop */
	ASSERT_EQ(pump_until(g.loop, &a.disconnected, 1), 1);
	ASSERT_EQ(a.finals, 1);
	ASSERT_EQ(a.fails, 1);
	ASSERT_FALSE(ipc_client_is_connected(a.c));
	ASSERT_EQ(ipc_client_invoke(a.c, a.b, "Flush", NULL, -1, cl_reply, &a, false), -ENOTCONN);
	ASSERT_EQ(pump_until(g.loop, &g.n_disconnect, 1), 1);
	ipc_client_destroy(a.c);
	stop_host();
}

TEST(host_send_queue_limit_drops_slow_reader)
{
	struct ipc_host_options opts = {.max_send_queue_bytes = 256 * 1024};
	struct buf b = BUF_INIT;
	struct cl a;
	int fd;

	start_host(unix_name(), &opts);
	ASSERT_EQ(sock_connect(unix_name(), &fd), 0);
	encode_invoke(&b, 1, 1, 10); /* GetTraceStats -> h_flood; never read */
	raw_send(fd, &b);
	ASSERT_EQ(pump_until(g.loop, &g.n_disconnect, 1), 1);
	ASSERT_EQ(g.overflow_err, -ENOBUFS);
	close(fd);
	cl_open(&a, unix_name(), &perfetto__protos__consumer_port__descriptor);
	cl_enable(&a, false);
	ASSERT_STREQ(a.last, "echo");
	ipc_client_destroy(a.c);
	buf_fini(&b);
	stop_host();
}

TEST(host_many_clients)
{
	enum { N = 50 };
	static struct cl cls[N];
	int i, finals = 0;

	start_host(unix_name(), NULL);
	for (i = 0; i < N; i++) {
		struct ipc_client_callbacks cbs = {cl_connected, cl_disconnected};

		memset(&cls[i], 0, sizeof(cls[i]));
		cls[i].fd = -1;
		ASSERT_EQ(ipc_client_connect(g.loop, unix_name(), &cbs, &cls[i], &cls[i].c), 0);
		ASSERT_EQ(ipc_client_bind(cls[i].c, &perfetto__protos__consumer_port__descriptor,
					  cl_bound, &cls[i], &cls[i].b),
			  0);
	}
	for (i = 0; i < N; i++)
		ASSERT_EQ(pump_until(g.loop, &cls[i].bound, 1), 1);
	for (i = 0; i < N; i++)
		ASSERT_EQ(ipc_client_invoke(cls[i].c, cls[i].b, "ReadBuffers", NULL, -1, cl_reply,
					    &cls[i], false),
			  0);
	for (i = 0; i < N; i++) {
		ASSERT_EQ(pump_until(g.loop, &cls[i].finals, 1), 1);
		ASSERT_STREQ(cls[i].last, "s0,s1,s2,s3,");
		finals += cls[i].finals;
	}
	ASSERT_EQ(finals, N);
	ASSERT_EQ(g.n_connect, N);
	ASSERT_EQ(ipc_host_n_clients(g.host), N);
	for (i = 0; i < N; i++)
		ipc_client_destroy(cls[i].c);
	ASSERT_EQ(pump_until(g.loop, &g.n_disconnect, N), N);
	ASSERT_EQ(ipc_host_n_clients(g.host), 0);
	stop_host();
}

/* ------------------------------------------------------- client tests --- */

TEST(client_connect_failures)
{
	struct ipc_client_callbacks cbs = {cl_connected, cl_disconnected};
	struct ipc_client *c = NULL;
	struct cl x;
	char name[64];
	int lfd;

	ASSERT_EQ(evloop_create(&g.loop), 0);
	snprintf(name, sizeof(name), "%s/nobody", test_tmpdir());
	ASSERT_EQ(ipc_client_connect(g.loop, name, &cbs, NULL, &c), -ENOENT);
	ASSERT_TRUE(c == NULL);
	/* A TCP port nobody listens on: refused, reported by the loop. */
	ASSERT_EQ(sock_listen("127.0.0.1:0", 1, &lfd), 0);
	ASSERT_EQ(sock_local_name(lfd, name, sizeof(name)), 0);
	close(lfd);
	memset(&x, 0, sizeof(x));
	if (ipc_client_connect(g.loop, name, &cbs, &x, &x.c) == 0) {
		ASSERT_EQ(ipc_client_bind(x.c, &perfetto__protos__consumer_port__descriptor,
					  cl_bound, &x, &x.b),
			  0);
		ASSERT_EQ(pump_until(g.loop, &x.disconnected, 1), 1);
		ASSERT_EQ(x.connected, 0);
		ASSERT_EQ(x.err, -ECONNREFUSED);
		ASSERT_EQ(x.bound, 1);
		ASSERT_FALSE(x.bind_ok);
		ipc_client_destroy(x.c);
	}
	evloop_destroy(g.loop);
}

/* A host played by hand: it offers only EnableTracing, under id 7. */
TEST(client_resolves_method_ids_by_name)
{
	Perfetto__Protos__IPCFrame__BindServiceReply__MethodInfo mi =
		PERFETTO__PROTOS__IPCFRAME__BIND_SERVICE_REPLY__METHOD_INFO__INIT;
	Perfetto__Protos__IPCFrame__BindServiceReply__MethodInfo *mip = &mi;
	Perfetto__Protos__IPCFrame__BindServiceReply br =
		PERFETTO__PROTOS__IPCFRAME__BIND_SERVICE_REPLY__INIT;
	frame_t out = PERFETTO__PROTOS__IPCFRAME__INIT;
	struct ipc_frame_reader r;
	struct buf b = BUF_INIT;
	frame_t *f;
	struct cl x;
	int lfd, fd = -1;

	ASSERT_EQ(evloop_create(&g.loop), 0);
	ASSERT_EQ(sock_listen(unix_name(), 1, &lfd), 0);
	cl_open(&x, unix_name(), NULL);
	ASSERT_EQ(ipc_client_bind(x.c, &perfetto__protos__consumer_port__descriptor, cl_bound, &x,
				  &x.b),
		  0);
	ASSERT_EQ(ipc_client_invoke(x.c, x.b, "EnableTracing", NULL, -1, cl_reply, &x, false),
		  -EAGAIN);
	while (fd < 0) {
		evloop_run_once(g.loop, 5);
		sock_accept(lfd, &fd);
	}
	ipc_frame_reader_init(&r);
	ASSERT_EQ(raw_read_frame(g.loop, fd, &r, &f), 1);
	ASSERT_EQ(f->request_id, 1);
	ASSERT_STREQ(f->msg_bind_service->service_name, "ConsumerPort");
	ipc_frame_free(f);
	mi.has_id = true;
	mi.id = 7;
	mi.name = "EnableTracing";
	br.has_success = br.success = br.has_service_id = true;
	br.service_id = 3;
	br.n_methods = 1;
	br.methods = &mip;
	out.has_request_id = true;
	out.request_id = 1;
	out.msg_case = PERFETTO__PROTOS__IPCFRAME__MSG_MSG_BIND_SERVICE_REPLY;
	out.msg_bind_service_reply = &br;
	ASSERT_GT(ipc_frame_encode(&out, &b), 0);
	raw_send(fd, &b);
	ASSERT_EQ(pump_until(g.loop, &x.bound, 1), 1);
	ASSERT_TRUE(x.bind_ok);
	ASSERT_EQ(ipc_client_invoke(x.c, x.b, "DisableTracing", NULL, -1, cl_reply, &x, false),
		  -EOPNOTSUPP);
	ASSERT_EQ(ipc_client_invoke(x.c, x.b, "EnableTracing", NULL, -1, cl_reply, &x, false), 0);
	ASSERT_EQ(raw_read_frame(g.loop, fd, &r, &f), 1);
	ASSERT_EQ(f->request_id, 2);
	ASSERT_EQ(f->msg_invoke_method->service_id, 3);
	ASSERT_EQ(f->msg_invoke_method->method_id, 7);
	ipc_frame_free(f);
	/* The host goes away: the pending call fails, then the disconnect. */
	close(fd);
	ASSERT_EQ(pump_until(g.loop, &x.disconnected, 1), 1);
	ASSERT_EQ(x.fails, 1);
	ASSERT_EQ(x.err, 0);
	ipc_client_destroy(x.c);
	ipc_frame_reader_fini(&r);
	buf_fini(&b);
	close(lfd);
	evloop_destroy(g.loop);
}

static void destroy_in_reply(const struct ipc_reply *r, void *user)
{
	struct cl *x = user;

	(void)r;
	x->replies++;
	ipc_client_destroy(x->c);
}

TEST(client_destroy_inside_stream_callback)
{
	struct cl a;

	start_host(unix_name(), NULL);
	cl_open(&a, unix_name(), &perfetto__protos__consumer_port__descriptor);
	ASSERT_EQ(ipc_client_invoke(a.c, a.b, "ReadBuffers", NULL, -1, destroy_in_reply, &a, false),
		  0);
	ASSERT_EQ(pump_until(g.loop, &a.replies, 1), 1);
	ASSERT_EQ(pump_until(g.loop, &g.n_disconnect, 1), 1);
	ASSERT_EQ(a.replies, 1); /* no callback after destroy */
	ASSERT_EQ(a.disconnected, 0);
	stop_host();
}

TEST(host_oversize_reply_refused_client_stays)
{
	struct cl a;

	start_host(unix_name(), NULL);
	cl_open(&a, unix_name(), &perfetto__protos__consumer_port__descriptor);
	ASSERT_EQ(ipc_client_invoke(a.c, a.b, "Attach", NULL, -1, cl_reply, &a, false), 0);
	ASSERT_EQ(pump_until(g.loop, &a.finals, 1), 1);
	ASSERT_EQ(a.fails, 1);
	cl_enable(&a, false);
	ASSERT_STREQ(a.last, "echo");
	ipc_client_destroy(a.c);
	stop_host();
}

TEST(host_max_clients_limit)
{
	struct ipc_host_options opts = {.max_clients = 3};
	struct cl x[4];
	int i;

	start_host(unix_name(), &opts);
	for (i = 0; i < 3; i++) {
		cl_open(&x[i], unix_name(), &perfetto__protos__consumer_port__descriptor);
		ASSERT_TRUE(x[i].bind_ok);
	}
	/* The fourth is accepted by the kernel, then closed by the host. */
	cl_open(&x[3], unix_name(), &perfetto__protos__consumer_port__descriptor);
	ASSERT_FALSE(x[3].bind_ok);
	ASSERT_EQ(pump_until(g.loop, &x[3].disconnected, 1), 1);
	ASSERT_EQ(g.n_connect, 3);
	ASSERT_EQ(ipc_host_n_clients(g.host), 3);
	/* A slot that frees up can be reused. */
	ipc_client_destroy(x[0].c);
	ASSERT_EQ(pump_until(g.loop, &g.n_disconnect, 1), 1);
	cl_open(&x[0], unix_name(), &perfetto__protos__consumer_port__descriptor);
	ASSERT_TRUE(x[0].bind_ok);
	for (i = 0; i < 4; i++)
		ipc_client_destroy(x[i].c);
	stop_host();
}

/* The send queue stops at its bound, and fds arrive with their frames. */
TEST(conn_send_queue_limit_and_fds)
{
	frame_t f = PERFETTO__PROTOS__IPCFRAME__INIT;
	ProtobufCBinaryData d;
	struct ipc_conn tx, rx;
	size_t queued = 0, got = 0;
	char word[8] = {0};
	int sv[2], p[2], fd, err, i;

	ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
	ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
	ASSERT_EQ(write(p[1], "pipe", 4), 4);
	close(p[1]);
	ipc_conn_init(&tx, sv[0], true, 64 * 1024);
	ipc_conn_init(&rx, sv[1], true, 0);
	d.len = 10000;
	d.data = calloc(1, d.len);
	f.n_data_for_testing = 1;
	f.data_for_testing = &d;
	ASSERT_EQ(ipc_conn_queue(&tx, &f, -1), 0);
	ASSERT_EQ(ipc_conn_queue(&tx, &f, p[0]), 0);
	close(p[0]); /* the queue holds its own duplicate */
	queued = 2;
	while ((err = ipc_conn_queue(&tx, &f, -1)) == 0)
		queued++;
	ASSERT_EQ(err, -ENOBUFS);
	ASSERT_EQ(queued, 6);
	ASSERT_LE(ipc_conn_pending(&tx), 64 * 1024);
	ASSERT_EQ(ipc_conn_flush(&tx), 0);
	ASSERT_EQ(ipc_conn_pending(&tx), 0);
	for (i = 0; i < 100 && got < queued; i++) {
		frame_t *in;
		int n = ipc_conn_recv(&rx);

		ASSERT_TRUE(n > 0 || n == -EAGAIN);
		while (ipc_frame_reader_pop(&rx.rd, &in) == 1) {
			ASSERT_EQ(in->data_for_testing[0].len, 10000);
			ipc_frame_free(in);
			got++;
		}
	}
	ASSERT_EQ(got, queued);
	fd = ipc_conn_take_fd(&rx);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(read(fd, word, sizeof(word)), 4);
	ASSERT_STREQ(word, "pipe");
	close(fd);
	ASSERT_EQ(ipc_conn_take_fd(&rx), -ENOENT);
	/* At most IPC_MAX_QUEUED_FDS fds wait in one queue. */
	tx.max_queue_bytes = IPC_MAX_SEND_QUEUE_BYTES;
	d.len = 1;
	for (i = 0; i < (int)IPC_MAX_QUEUED_FDS; i++)
		ASSERT_EQ(ipc_conn_queue(&tx, &f, sv[1]), 0);
	ASSERT_EQ(ipc_conn_queue(&tx, &f, sv[1]), -ENOBUFS);
	free(d.data);
	ipc_conn_fini(&tx);
	ipc_conn_fini(&rx);
}

// SPDX-License-Identifier: Apache-2.0
/*
 * host.c - the IPC host: one listening socket, the services exposed on it
 * and the connected clients. traced runs one per socket (producer, consumer,
 * relay endpoints) on its evloop. Peers are untrusted: bad frames drop them,
 * and a slow reader is dropped when its send queue reaches its bound.
 */
#include "ipc/ipc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "base/evloop.h"
#include "base/hash.h"
#include "base/hmap.h"
#include "base/log.h"
#include "base/sock.h"
#include "ipc/ipc_int.h"
#include "pb_fields.h"

/* Connections accepted per wakeup of the listening socket. */
#define HOST_ACCEPTS_PER_WAKEUP 16

struct host_service {
	uint32_t id;
	const ProtobufCServiceDescriptor *desc;
	ipc_method_cb *handlers; /* desc->n_methods entries */
	ipc_client_event_cb on_connect;
	ipc_client_event_cb on_disconnect;
	void *user;
};

struct host_client {
	uint64_t id;
	struct ipc_host *host;
	struct ipc_conn conn;
	uint64_t watch_id;
	unsigned watch_events;
	int family;
	pid_t cred_pid; /* SO_PEERCRED on AF_UNIX */
	uid_t cred_uid;
	pid_t pid_override; /* SetPeerIdentity on other families; -1 unset */
	uid_t uid_override;
	uint32_t machine_id;
	char *machine_name; /* owned; NULL = empty */
	bool is_dead;       /* connection closed, disconnect callbacks pending */
	struct host_client *next_dead;
};

struct ipc_host {
	struct evloop *loop;
	int listen_fd;
	uint64_t listen_watch;
	int family;
	bool use_shmem_emulation;
	char *machine_name;
	size_t max_send_queue_bytes;
	size_t max_clients;
	struct host_service services[IPC_HOST_MAX_SERVICES];
	size_t n_services;
	struct hmap clients; /* id -> struct host_client *, live and dead */
	size_t n_live;
	uint64_t last_client_id;
	struct host_client *dead; /* awaiting disconnect callbacks */
	uint64_t reap_timer;
	bool reap_armed;
};

static struct host_client *client_get(struct ipc_host *h, uint64_t id)
{
	uint64_t v;

	if (!hmap_get(&h->clients, id, &v))
		return NULL;
	return (struct host_client *)(uintptr_t)v;
}

static void client_free(struct host_client *c)
{
	ipc_conn_fini(&c->conn);
	free(c->machine_name);
	free(c);
}

/* Runs the disconnect callbacks of dead clients and frees them. Called from
 * the loop only (a timer, or the end of an I/O callback). */
static void host_reap(struct ipc_host *h)
{
	if (h->reap_armed) {
		evloop_del(h->loop, h->reap_timer);
		h->reap_armed = false;
	}
	while (h->dead) {
		struct host_client *c = h->dead;
		size_t i;

		h->dead = c->next_dead;
		for (i = 0; i < h->n_services; i++) {
			struct host_service *s = &h->services[i];

			if (s->on_disconnect)
				s->on_disconnect(h, c->id, s->user);
		}
		hmap_del(&h->clients, c->id, NULL);
		client_free(c);
	}
}

static void reap_timer_cb(void *user)
{
	struct ipc_host *h = user;

	h->reap_armed = false; /* a one-shot timer removes itself */
	host_reap(h);
}

/* Closes the connection now; callbacks and the memory go later. */
static void client_kill(struct host_client *c)
{
	struct ipc_host *h = c->host;

	if (c->is_dead)
		return;
	c->is_dead = true;
	evloop_del(h->loop, c->watch_id);
	ipc_conn_fini(&c->conn);
	h->n_live--;
	c->next_dead = h->dead;
	h->dead = c;
	if (!h->reap_armed && evloop_add_timer(h->loop, 0, 0, reap_timer_cb, h, &h->reap_timer) == 0)
		h->reap_armed = true;
}

static void client_update_watch(struct host_client *c)
{
	unsigned want = EVLOOP_READ;

	if (ipc_conn_pending(&c->conn) > 0)
		want |= EVLOOP_WRITE;
	if (want != c->watch_events && evloop_mod_fd(c->host->loop, c->watch_id, want) == 0)
		c->watch_events = want;
}

/* Queues a frame and sends what the socket takes. A failure other than
 * -EMSGSIZE kills the client. */
static int client_send(struct host_client *c, const Perfetto__Protos__IPCFrame *f, int fd)
{
	int err;

	if (c->is_dead)
		return -ENOTCONN;
	err = ipc_conn_queue(&c->conn, f, fd);
	if (err == -EMSGSIZE)
		return err;
	if (err == 0)
		err = ipc_conn_flush(&c->conn);
	if (err < 0) {
		LOG_D("ipc host: dropping client %llu: send: %d", (unsigned long long)c->id, err);
		client_kill(c);
		return err;
	}
	client_update_watch(c);
	return 0;
}

/* InvokeMethodReply; the payload is sent only when @success. */
static int send_invoke_reply(struct host_client *c, uint64_t request_id, bool success,
			     bool has_more, const uint8_t *data, size_t len, int fd)
{
	Perfetto__Protos__IPCFrame f = PERFETTO__PROTOS__IPCFRAME__INIT;
	Perfetto__Protos__IPCFrame__InvokeMethodReply r =
		PERFETTO__PROTOS__IPCFRAME__INVOKE_METHOD_REPLY__INIT;

	f.has_request_id = true;
	f.request_id = request_id;
	f.msg_case = PERFETTO__PROTOS__IPCFRAME__MSG_MSG_INVOKE_METHOD_REPLY;
	f.msg_invoke_method_reply = &r;
	r.has_success = true;
	r.success = success;
	r.has_has_more = true;
	r.has_more = has_more;
	if (success) {
		r.has_reply_proto = true;
		r.reply_proto.data = (uint8_t *)data;
		r.reply_proto.len = len;
	}
	return client_send(c, &f, fd);
}

static void on_bind_service(struct host_client *c, const Perfetto__Protos__IPCFrame *req)
{
	struct ipc_host *h = c->host;
	Perfetto__Protos__IPCFrame f = PERFETTO__PROTOS__IPCFRAME__INIT;
	Perfetto__Protos__IPCFrame__BindServiceReply r =
		PERFETTO__PROTOS__IPCFRAME__BIND_SERVICE_REPLY__INIT;
	Perfetto__Protos__IPCFrame__BindServiceReply__MethodInfo *infos = NULL;
	Perfetto__Protos__IPCFrame__BindServiceReply__MethodInfo **ptrs = NULL;
	const char *name = req->msg_bind_service->service_name;
	struct host_service *s = NULL;
	size_t i;

	for (i = 0; name && i < h->n_services; i++) {
		if (strcmp(h->services[i].desc->short_name, name) == 0)
			s = &h->services[i];
	}
	f.has_request_id = true;
	f.request_id = req->request_id;
	f.msg_case = PERFETTO__PROTOS__IPCFRAME__MSG_MSG_BIND_SERVICE_REPLY;
	f.msg_bind_service_reply = &r;
	r.has_success = true;
	if (s && s->desc->n_methods > 0) {
		size_t n = s->desc->n_methods;

		infos = calloc(n, sizeof(*infos));
		ptrs = calloc(n, sizeof(*ptrs));
		if (!infos || !ptrs) {
			client_kill(c);
			goto out;
		}
		for (i = 0; i < n; i++) {
			perfetto__protos__ipcframe__bind_service_reply__method_info__init(&infos[i]);
			infos[i].has_id = true;
			infos[i].id = (uint32_t)(i + 1);
			infos[i].name = (char *)s->desc->methods[i].name;
			ptrs[i] = &infos[i];
		}
		r.n_methods = n;
		r.methods = ptrs;
	}
	if (s) {
		r.success = true;
		r.has_service_id = true;
		r.service_id = s->id;
	}
	client_send(c, &f, -1);
out:
	free(ptrs);
	free(infos);
}

static void on_invoke_method(struct host_client *c, const Perfetto__Protos__IPCFrame *req)
{
	struct ipc_host *h = c->host;
	const Perfetto__Protos__IPCFrame__InvokeMethod *m = req->msg_invoke_method;
	const ProtobufCMethodDescriptor *md;
	struct host_service *s;
	ProtobufCMessage *args;
	struct ipc_call call;
	ipc_method_cb handler;

	/* Failures are answered even with drop_reply, as Perfetto does. */
	if (m->service_id == 0 || m->service_id > h->n_services)
		goto fail;
	s = &h->services[m->service_id - 1];
	if (m->method_id == 0 || m->method_id > s->desc->n_methods)
		goto fail;
	handler = s->handlers[m->method_id - 1];
	if (!handler)
		goto fail;
	md = &s->desc->methods[m->method_id - 1];
	args = protobuf_c_message_unpack(md->input, NULL, m->has_args_proto ? m->args_proto.len : 0,
					 m->has_args_proto ? m->args_proto.data : NULL);
	if (!args)
		goto fail;
	memset(&call, 0, sizeof(call));
	call.client_id = c->id;
	call.request_id = req->request_id;
	call.service_id = s->id;
	call.method_id = m->method_id;
	call.drop_reply = m->drop_reply;
	handler(h, &call, args, s->user);
	protobuf_c_message_free_unpacked(args, NULL);
	return;
fail:
	send_invoke_reply(c, req->request_id, false, false, NULL, 0, -1);
}

/* FNV-1a 64 of the hint, lower 32 bits, 0 mapped to 1 (Perfetto's rule). */
static uint32_t machine_id_from_hint(struct host_client *c, const char *hint)
{
	char addr[SOCK_NAME_MAX];
	uint32_t digest;

	if (hint && hint[0]) {
		digest = (uint32_t)fnv1a64(hint, strlen(hint));
	} else {
		/* Perfetto falls back to the socket's own (local) address
		 * without the port; mirror it so ids match across hosts. */
		char *colon;

		if (sock_local_name(c->conn.fd, addr, sizeof(addr)) < 0)
			addr[0] = '\0';
		colon = strrchr(addr, ':');
		if (colon)
			*colon = '\0';
		digest = (uint32_t)fnv1a64(addr, strlen(addr));
	}
	return digest == IPC_DEFAULT_MACHINE_ID ? 1u : digest;
}

static void on_set_peer_identity(struct host_client *c, const Perfetto__Protos__IPCFrame *req)
{
	const Perfetto__Protos__IPCFrame__SetPeerIdentity *id = req->set_peer_identity;
	char *name = NULL;

	/* Local peers are identified by the kernel; elsewhere only the first
	 * identity counts (the relay sends it before anything else). */
	if (c->family == AF_UNIX)
		return;
	if (c->pid_override != (pid_t)-1 || c->uid_override != (uid_t)-1)
		return;
	if (id->machine_name) {
		name = strdup(id->machine_name);
		if (!name) {
			client_kill(c);
			return;
		}
	}
	c->pid_override = id->pid;
	c->uid_override = (uid_t)id->uid;
	c->machine_id = machine_id_from_hint(c, id->machine_id_hint);
	free(c->machine_name);
	c->machine_name = name;
}

static void on_frame(struct host_client *c, const Perfetto__Protos__IPCFrame *f)
{
	Perfetto__Protos__IPCFrame reply = PERFETTO__PROTOS__IPCFRAME__INIT;
	Perfetto__Protos__IPCFrame__RequestError err =
		PERFETTO__PROTOS__IPCFRAME__REQUEST_ERROR__INIT;

	switch (f->msg_case) {
	case PERFETTO__PROTOS__IPCFRAME__MSG_MSG_BIND_SERVICE:
		on_bind_service(c, f);
		return;
	case PERFETTO__PROTOS__IPCFRAME__MSG_MSG_INVOKE_METHOD:
		on_invoke_method(c, f);
		return;
	case PERFETTO__PROTOS__IPCFRAME__MSG_SET_PEER_IDENTITY:
		on_set_peer_identity(c, f);
		return;
	default:
		break;
	}
	reply.has_request_id = true;
	reply.request_id = f->request_id;
	reply.msg_case = PERFETTO__PROTOS__IPCFRAME__MSG_MSG_REQUEST_ERROR;
	reply.msg_request_error = &err;
	err.error = (char *)"unknown request";
	client_send(c, &reply, -1);
}

static void client_read(struct host_client *c)
{
	int i;

	for (i = 0; i < IPC_MAX_RECVS_PER_WAKEUP && !c->is_dead; i++) {
		Perfetto__Protos__IPCFrame *f = NULL;
		int n = ipc_conn_recv(&c->conn);
		int got;

		if (n == -EAGAIN)
			return;
		/* Frames that arrived before an end of stream still count. */
		while (!c->is_dead && (got = ipc_frame_reader_pop(&c->conn.rd, &f)) != 0) {
			if (got < 0) {
				LOG_D("ipc host: dropping client %llu: bad frame: %d",
				      (unsigned long long)c->id, got);
				client_kill(c);
				return;
			}
			on_frame(c, f);
			ipc_frame_free(f);
		}
		if (c->is_dead)
			return;
		if (n <= 0) {
			client_kill(c);
			return;
		}
	}
}

static void client_io_cb(int fd, unsigned revents, void *user)
{
	struct host_client *c = user;
	struct ipc_host *h = c->host;

	(void)fd;
	if (revents & EVLOOP_WRITE) {
		if (ipc_conn_flush(&c->conn) < 0)
			client_kill(c);
		else
			client_update_watch(c);
	}
	if (!c->is_dead && (revents & (EVLOOP_READ | EVLOOP_HUP | EVLOOP_ERROR)))
		client_read(c);
	/* Nothing of the owner's is on the stack here, so callbacks may run. */
	if (h->dead)
		host_reap(h);
}

static void host_accept_one(struct ipc_host *h, int fd)
{
	struct host_client *c = NULL;
	size_t i;
	int family;

	if (h->n_live >= h->max_clients) {
		LOG_D("ipc host: refusing connection: %zu clients", h->n_live);
		close(fd);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	family = sock_family_of_fd(fd);
	c->host = h;
	c->id = ++h->last_client_id;
	c->family = family < 0 ? h->family : family;
	c->cred_pid = -1;
	c->cred_uid = (uid_t)-1;
	c->pid_override = -1;
	c->uid_override = (uid_t)-1;
	c->machine_id = IPC_DEFAULT_MACHINE_ID;
	ipc_conn_init(&c->conn, fd, sock_family_supports_fds(c->family), h->max_send_queue_bytes);
	if (c->family == AF_UNIX) {
		pid_t pid;
		uid_t uid;

		if (sock_peer_cred(fd, &pid, &uid) == 0) {
			c->cred_pid = pid;
			c->cred_uid = uid;
		}
		c->machine_name = strdup(h->machine_name);
		if (!c->machine_name)
			goto fail;
	}
	if (hmap_put(&h->clients, c->id, (uint64_t)(uintptr_t)c) < 0)
		goto fail;
	if (evloop_add_fd(h->loop, fd, EVLOOP_READ, client_io_cb, c, &c->watch_id) < 0) {
		hmap_del(&h->clients, c->id, NULL);
		goto fail;
	}
	c->watch_events = EVLOOP_READ;
	h->n_live++;
	for (i = 0; i < h->n_services; i++) {
		struct host_service *s = &h->services[i];

		if (s->on_connect && !c->is_dead)
			s->on_connect(h, c->id, s->user);
	}
	return;
fail:
	client_free(c);
}

static void listen_cb(int fd, unsigned revents, void *user)
{
	struct ipc_host *h = user;
	int i;

	(void)revents;
	for (i = 0; i < HOST_ACCEPTS_PER_WAKEUP; i++) {
		int cfd;

		if (sock_accept(fd, &cfd) < 0)
			break;
		host_accept_one(h, cfd);
	}
	if (h->dead)
		host_reap(h);
}

static char *default_machine_name(void)
{
	const char *env = getenv("PERFETTO_MACHINE_NAME");
	struct utsname u;

	if (env)
		return strdup(env);
	if (uname(&u) != 0)
		return strdup("");
	return strdup(u.sysname);
}

int ipc_host_create_from_fd(struct evloop *loop, int listen_fd, const struct ipc_host_options *opts,
			    struct ipc_host **out)
{
	struct ipc_host *h = NULL;
	int err, family;

	if (listen_fd < 0)
		return -EINVAL;
	family = sock_family_of_fd(listen_fd);
	if (family < 0) {
		err = family;
		goto fail;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		err = -ENOMEM;
		goto fail;
	}
	h->loop = loop;
	h->listen_fd = listen_fd;
	h->family = family;
	h->use_shmem_emulation = !sock_family_supports_fds(family) ||
				 (opts && opts->force_shmem_emulation);
	h->max_send_queue_bytes = opts && opts->max_send_queue_bytes ? opts->max_send_queue_bytes
								      : IPC_MAX_SEND_QUEUE_BYTES;
	h->max_clients = opts && opts->max_clients ? opts->max_clients : IPC_HOST_MAX_CLIENTS;
	h->machine_name = opts && opts->machine_name ? strdup(opts->machine_name)
						     : default_machine_name();
	hmap_init(&h->clients);
	if (!h->machine_name) {
		err = -ENOMEM;
		goto fail;
	}
	err = evloop_add_fd(loop, listen_fd, EVLOOP_READ, listen_cb, h, &h->listen_watch);
	if (err < 0)
		goto fail;
	*out = h;
	return 0;
fail:
	if (h) {
		free(h->machine_name);
		free(h);
	}
	close(listen_fd);
	return err;
}

int ipc_host_create(struct evloop *loop, const char *sock_name, const struct ipc_host_options *opts,
		    struct ipc_host **out)
{
	int fd = -1;
	int err;

	err = sock_listen(sock_name, SOMAXCONN, &fd);
	if (err < 0)
		return err;
	return ipc_host_create_from_fd(loop, fd, opts, out);
}

void ipc_host_destroy(struct ipc_host *h)
{
	struct hmap_iter it;
	uint64_t v;
	size_t i;

	if (!h)
		return;
	if (h->reap_armed)
		evloop_del(h->loop, h->reap_timer);
	hmap_iter_init(&it, &h->clients);
	while (hmap_iter_next(&it, NULL, &v)) {
		struct host_client *c = (struct host_client *)(uintptr_t)v;

		if (!c->is_dead)
			evloop_del(h->loop, c->watch_id);
		client_free(c);
	}
	hmap_fini(&h->clients);
	evloop_del(h->loop, h->listen_watch);
	close(h->listen_fd);
	for (i = 0; i < h->n_services; i++)
		free(h->services[i].handlers);
	free(h->machine_name);
	free(h);
}

int ipc_host_expose(struct ipc_host *h, const struct ipc_service_def *def, uint32_t *out_service_id)
{
	struct host_service *s;
	size_t i;

	if (!def || !def->desc || !def->desc->short_name || (def->n_handlers && !def->handlers) ||
	    def->n_handlers > def->desc->n_methods)
		return -EINVAL;
	for (i = 0; i < h->n_services; i++) {
		if (strcmp(h->services[i].desc->short_name, def->desc->short_name) == 0)
			return -EEXIST;
	}
	if (h->n_services == IPC_HOST_MAX_SERVICES)
		return -ENOSPC;
	s = &h->services[h->n_services];
	s->handlers = calloc(def->desc->n_methods + 1, sizeof(*s->handlers));
	if (!s->handlers)
		return -ENOMEM;
	for (i = 0; i < def->n_handlers; i++)
		s->handlers[i] = def->handlers[i];
	s->desc = def->desc;
	s->on_connect = def->on_connect;
	s->on_disconnect = def->on_disconnect;
	s->user = def->user;
	s->id = (uint32_t)++h->n_services;
	if (out_service_id)
		*out_service_id = s->id;
	return 0;
}

int ipc_host_reply(struct ipc_host *h, const struct ipc_call *call, const ProtobufCMessage *reply,
		   bool has_more, int fd_to_send)
{
	struct host_client *c;
	uint8_t stack[512];
	uint8_t *data = stack;
	size_t len = 0;
	int err;

	if (call->drop_reply)
		return 0;
	c = client_get(h, call->client_id);
	if (!c || c->is_dead)
		return -ENOTCONN;
	if (reply) {
		len = protobuf_c_message_get_packed_size(reply);
		if (len > IPC_MAX_FRAME_BYTES)
			return -EMSGSIZE;
		if (len > sizeof(stack)) {
			data = malloc(len);
			if (!data)
				return -ENOMEM;
		}
		protobuf_c_message_pack(reply, data);
	}
	err = send_invoke_reply(c, call->request_id, true, has_more, data, len, fd_to_send);
	if (data != stack)
		free(data);
	return err;
}

/* The frame header, fields of IPCFrame and of its InvokeMethodReply. */
#define RAW_REPLY_OVERHEAD_BYTES 32u

int ipc_host_reply_begin(struct ipc_host *h, const struct ipc_call *call,
			 struct ipc_raw_reply *r, struct pz_msg **out_proto)
{
	struct host_client *c;
	struct ipc_conn *conn;
	uint8_t *start;

	memset(r, 0, sizeof(*r));
	if (call->drop_reply)
		return -EPERM;
	c = client_get(h, call->client_id);
	if (!c || c->is_dead)
		return -ENOTCONN;
	conn = &c->conn;
	if (ipc_conn_pending(conn) + IPC_MAX_FRAME_BYTES > conn->max_queue_bytes)
		return -ENOBUFS;
	/* Reclaim the sent prefix once it dominates the buffer. */
	if (conn->out_off > 0 && conn->out_off >= conn->out.len / 2) {
		buf_consume(&conn->out, conn->out_off);
		conn->out_off = 0;
	}
	if (buf_reserve(&conn->out, IPC_MAX_FRAME_BYTES) < 0)
		return -ENOMEM;
	r->host = h;
	r->client_id = call->client_id;
	r->frame_off = conn->out.len;
	start = conn->out.data + conn->out.len + IPC_FRAME_HEADER_BYTES;
	pz_stream_init_flat(&r->s, start, IPC_MAX_FRAME_BYTES - IPC_FRAME_HEADER_BYTES);
	pz_msg_begin(&r->frame, &r->s, NULL);
	pz_append_varint(&r->frame, PB_IPC_FRAME__REQUEST_ID, call->request_id);
	pz_begin_nested(&r->frame, PB_IPC_FRAME__MSG_INVOKE_METHOD_REPLY, &r->reply);
	pz_append_bool(&r->reply, PB_IPC_FRAME_INVOKE_METHOD_REPLY__SUCCESS, true);
	pz_begin_nested(&r->reply, PB_IPC_FRAME_INVOKE_METHOD_REPLY__REPLY_PROTO, &r->proto);
	r->active = true;
	*out_proto = &r->proto;
	return 0;
}

size_t ipc_raw_reply_room(const struct ipc_raw_reply *r)
{
	size_t left = (size_t)(r->s.end - r->s.cur);

	return r->active && pz_stream_ok(&r->s) && left > RAW_REPLY_OVERHEAD_BYTES
		       ? left - RAW_REPLY_OVERHEAD_BYTES
		       : 0;
}

void ipc_host_reply_abort(struct ipc_raw_reply *r)
{
	r->active = false;
}

int ipc_host_reply_end(struct ipc_raw_reply *r, bool has_more)
{
	struct host_client *c;
	uint32_t size;
	uint8_t *hdr;
	int err;

	if (!r->active)
		return -EINVAL;
	r->active = false;
	pz_end(&r->proto);
	pz_append_bool(&r->reply, PB_IPC_FRAME_INVOKE_METHOD_REPLY__HAS_MORE, has_more);
	size = pz_end(&r->frame);
	if (!pz_stream_ok(&r->s))
		return -EMSGSIZE;
	c = client_get(r->host, r->client_id);
	if (!c || c->is_dead)
		return -ENOTCONN;
	hdr = c->conn.out.data + r->frame_off;
	hdr[0] = (uint8_t)size;
	hdr[1] = (uint8_t)(size >> 8);
	hdr[2] = (uint8_t)(size >> 16);
	hdr[3] = (uint8_t)(size >> 24);
	c->conn.out.len += IPC_FRAME_HEADER_BYTES + size;
	err = ipc_conn_flush(&c->conn);
	if (err < 0) {
		LOG_D("ipc host: dropping client %llu: send: %d", (unsigned long long)c->id, err);
		client_kill(c);
		return err;
	}
	client_update_watch(c);
	return 0;
}

int ipc_host_reply_error(struct ipc_host *h, const struct ipc_call *call)
{
	struct host_client *c;

	if (call->drop_reply)
		return 0;
	c = client_get(h, call->client_id);
	if (!c || c->is_dead)
		return -ENOTCONN;
	return send_invoke_reply(c, call->request_id, false, false, NULL, 0, -1);
}

int ipc_host_take_fd(struct ipc_host *h, uint64_t client_id)
{
	struct host_client *c = client_get(h, client_id);

	if (!c || c->is_dead)
		return -ENOENT;
	return ipc_conn_take_fd(&c->conn);
}

int ipc_host_client_info(struct ipc_host *h, uint64_t client_id, struct ipc_client_info *out)
{
	struct host_client *c = client_get(h, client_id);
	struct ipc_client_info info;

	if (!c)
		return -ENOENT;
	memset(&info, 0, sizeof(info));
	info.client_id = c->id;
	info.family = c->family;
	info.supports_fds = sock_family_supports_fds(c->family);
	if (c->family == AF_UNIX) {
		info.uid = c->cred_uid;
		info.pid = c->cred_pid;
	} else {
		/* Without an identity the uid is 0, never "invalid", as the
		 * service's packet validator expects (Perfetto does the same). */
		info.uid = c->uid_override != (uid_t)-1 ? c->uid_override : 0;
		info.pid = c->pid_override;
	}
	info.machine_id = c->machine_id;
	info.machine_name = c->machine_name ? c->machine_name : "";
	*out = info;
	return 0;
}

int ipc_host_drop_client(struct ipc_host *h, uint64_t client_id)
{
	struct host_client *c = client_get(h, client_id);

	if (!c || c->is_dead)
		return -ENOENT;
	client_kill(c);
	return 0;
}

size_t ipc_host_pending_bytes(struct ipc_host *h, uint64_t client_id)
{
	struct host_client *c = client_get(h, client_id);

	if (!c || c->is_dead)
		return 0;
	return ipc_conn_pending(&c->conn);
}

bool ipc_host_use_shmem_emulation(const struct ipc_host *h)
{
	return h->use_shmem_emulation;
}

int ipc_host_listen_fd(const struct ipc_host *h)
{
	return h->listen_fd;
}

size_t ipc_host_n_clients(const struct ipc_host *h)
{
	return h->n_live;
}

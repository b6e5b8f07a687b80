// SPDX-License-Identifier: Apache-2.0
/*
 * client.c - the IPC client: one connection to a host, services bound by
 * name with method ids learned from BindServiceReply, calls matched to
 * replies by request id (streams keep their call until has_more is false).
 * Used by producers, consumers and the relay on their evloop thread.
 */
#include "ipc/ipc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/evloop.h"
#include "base/hmap.h"
#include "base/log.h"
#include "base/sock.h"
#include "base/sort.h"
#include "ipc/ipc_int.h"
#include "pb_fields.h"

enum client_state { CLIENT_CONNECTING, CLIENT_CONNECTED, CLIENT_DISCONNECTED };
enum call_kind { CALL_BIND, CALL_INVOKE };

struct ipc_binding {
	struct ipc_client *client;
	const ProtobufCServiceDescriptor *desc;
	uint32_t service_id; /* 0 until bound */
	uint32_t *method_ids; /* per desc method index; 0 = not offered */
	bool is_answered;
	ipc_bind_cb cb;
	void *user;
	struct ipc_binding *next;
};

struct client_call {
	uint64_t request_id;
	enum call_kind kind;
	struct ipc_binding *binding;
	const ProtobufCMessageDescriptor *out_desc;
	bool raw;   /* hand over reply bytes only; do not decode them */
	ipc_reply_cb cb;
	void *user;
};

struct ipc_client {
	struct evloop *loop;
	struct ipc_conn conn;
	uint64_t watch_id;
	unsigned watch_events;
	bool has_watch;
	enum client_state state;
	struct ipc_client_callbacks cbs;
	void *user;
	uint64_t last_request_id;
	bool any_frame_queued;
	struct hmap calls; /* request id -> struct client_call * */
	struct ipc_binding *bindings;
	unsigned cb_depth;    /* > 0 while an owner callback may be running */
	bool destroy_pending; /* ipc_client_destroy() ran inside a callback */
};

static void client_free(struct ipc_client *c)
{
	struct hmap_iter it;
	uint64_t v;

	hmap_iter_init(&it, &c->calls);
	while (hmap_iter_next(&it, NULL, &v))
		free((void *)(uintptr_t)v);
	hmap_fini(&c->calls);
	while (c->bindings) {
		struct ipc_binding *b = c->bindings;

		c->bindings = b->next;
		free(b->method_ids);
		free(b);
	}
	ipc_conn_fini(&c->conn);
	free(c);
}

static void close_socket(struct ipc_client *c)
{
	if (c->has_watch)
		evloop_del(c->loop, c->watch_id);
	c->has_watch = false;
	ipc_conn_fini(&c->conn);
}

static void update_watch(struct ipc_client *c)
{
	unsigned want;

	if (!c->has_watch)
		return;
	if (c->state == CLIENT_CONNECTING)
		want = EVLOOP_WRITE;
	else
		want = EVLOOP_READ | (ipc_conn_pending(&c->conn) ? EVLOOP_WRITE : 0);
	if (want != c->watch_events && evloop_mod_fd(c->loop, c->watch_id, want) == 0)
		c->watch_events = want;
}

static void fail_call(struct ipc_client *c, struct client_call *call)
{
	struct ipc_reply r;

	if (c->destroy_pending)
		return;
	if (call->kind == CALL_BIND) {
		call->binding->is_answered = true;
		if (call->binding->cb)
			call->binding->cb(call->binding, false, call->binding->user);
		return;
	}
	memset(&r, 0, sizeof(r));
	r.desc = call->out_desc;
	r.fd = -1;
	if (call->cb)
		call->cb(&r, call->user);
}

static int cmp_call(const void *a, const void *b)
{
	const struct client_call *x = *(struct client_call *const *)a;
	const struct client_call *y = *(struct client_call *const *)b;

	return x->request_id < y->request_id ? -1 : x->request_id > y->request_id;
}

/* Ends the connection: fails every pending call, then tells the owner. */
static void disconnect(struct ipc_client *c, int err)
{
	struct client_call **pending = NULL;
	struct ipc_binding *b;
	struct hmap_iter it;
	size_t n = 0, i;
	uint64_t v;

	if (c->state == CLIENT_DISCONNECTED)
		return;
	c->state = CLIENT_DISCONNECTED;
	close_socket(c);
	for (b = c->bindings; b; b = b->next)
		b->service_id = 0;
	/* Detach every call first: callbacks may start new ones (which fail
	 * at once now) or destroy the client. */
	pending = calloc(hmap_len(&c->calls) + 1, sizeof(*pending));
	hmap_iter_init(&it, &c->calls);
	while (hmap_iter_next(&it, NULL, &v)) {
		if (pending)
			pending[n++] = (struct client_call *)(uintptr_t)v;
		else
			free((void *)(uintptr_t)v);
		hmap_iter_del(&it);
	}
	c->cb_depth++;
	/* Oldest first, so the owner sees calls end in the order it made them. */
	if (n > 1)
		sort_n(pending, n, sizeof(*pending), cmp_call);
	for (i = 0; i < n; i++) {
		fail_call(c, pending[i]);
		free(pending[i]);
	}
	free(pending);
	if (!c->destroy_pending && c->cbs.on_disconnected)
		c->cbs.on_disconnected(c, err, c->user);
	c->cb_depth--;
}

static void on_bind_reply(struct ipc_client *c, struct client_call *call,
			  const Perfetto__Protos__IPCFrame__BindServiceReply *r)
{
	struct ipc_binding *b = call->binding;
	size_t i;

	b->is_answered = true;
	if (!r->success) {
		if (b->cb)
			b->cb(b, false, b->user);
		return;
	}
	for (i = 0; i < r->n_methods; i++) {
		const Perfetto__Protos__IPCFrame__BindServiceReply__MethodInfo *mi = r->methods[i];
		const ProtobufCMethodDescriptor *md;

		if (!mi->name || !mi->name[0] || mi->id == 0)
			continue;
		md = protobuf_c_service_descriptor_get_method_by_name(b->desc, mi->name);
		if (md)
			b->method_ids[md - b->desc->methods] = mi->id;
	}
	b->service_id = r->service_id;
	(void)c;
	if (b->cb)
		b->cb(b, true, b->user);
}

static void on_invoke_reply(struct ipc_client *c, struct client_call *call,
			    const Perfetto__Protos__IPCFrame__InvokeMethodReply *r)
{
	ProtobufCMessage *msg = NULL;
	struct ipc_reply rep;

	memset(&rep, 0, sizeof(rep));
	rep.has_more = r->has_more;
	rep.desc = call->out_desc;
	rep.data = r->reply_proto.data;
	rep.len = r->reply_proto.len;
	if (r->success && call->raw) {
		rep.success = true;
	} else if (r->success) {
		msg = protobuf_c_message_unpack(call->out_desc, NULL, r->reply_proto.len,
						r->reply_proto.data);
		rep.success = msg != NULL;
		rep.msg = msg;
	}
	rep.fd = ipc_conn_take_fd(&c->conn);
	if (rep.fd < 0)
		rep.fd = -1;
	if (call->cb)
		call->cb(&rep, call->user);
	else if (rep.fd >= 0)
		close(rep.fd);
	if (msg)
		protobuf_c_message_free_unpacked(msg, NULL);
}

static void on_frame(struct ipc_client *c, const Perfetto__Protos__IPCFrame *f)
{
	struct client_call *call;
	bool keep = false;
	uint64_t v;

	if (!hmap_get(&c->calls, f->request_id, &v)) {
		LOG_D("ipc client: reply to unknown request %llu, ignoring",
		      (unsigned long long)f->request_id);
		return;
	}
	call = (struct client_call *)(uintptr_t)v;
	if (call->kind == CALL_INVOKE &&
	    f->msg_case == PERFETTO__PROTOS__IPCFRAME__MSG_MSG_INVOKE_METHOD_REPLY)
		keep = f->msg_invoke_method_reply->has_more;
	/* A finished call leaves the table before its callback runs, so the
	 * callback may destroy the client. */
	if (!keep)
		hmap_del(&c->calls, f->request_id, NULL);
	if (call->kind == CALL_BIND &&
	    f->msg_case == PERFETTO__PROTOS__IPCFRAME__MSG_MSG_BIND_SERVICE_REPLY)
		on_bind_reply(c, call, f->msg_bind_service_reply);
	else if (call->kind == CALL_INVOKE &&
		 f->msg_case == PERFETTO__PROTOS__IPCFRAME__MSG_MSG_INVOKE_METHOD_REPLY)
		on_invoke_reply(c, call, f->msg_invoke_method_reply);
	else
		fail_call(c, call); /* RequestError, or a reply of the wrong kind */
	if (!keep)
		free(call);
}

/*
 * The fast path of streamed replies (ReadBuffers): an InvokeMethodReply to
 * a raw call is parsed in place, so its reply bytes reach the callback
 * straight from the receive buffer. Return: true if handled.
 */
static bool try_raw_reply(struct ipc_client *c, const uint8_t *data, size_t len)
{
	struct pz_reader r, rr;
	struct pz_field f, rf;
	const uint8_t *reply = NULL;
	size_t reply_len = 0;
	uint64_t request_id = 0, v;
	bool success = false, has_more = false, seen = false;
	struct client_call *call;
	struct ipc_reply rep;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id == PB_IPC_FRAME__REQUEST_ID && f.wire_type == PZ_WIRE_VARINT) {
			request_id = f.value;
		} else if (f.id == PB_IPC_FRAME__MSG_INVOKE_METHOD_REPLY && f.wire_type == PZ_WIRE_LEN &&
			   !seen) {
			seen = true;
			pz_reader_init(&rr, f.data, f.size);
			while (pz_reader_next(&rr, &rf) > 0) {
				if (rf.id == PB_IPC_FRAME_INVOKE_METHOD_REPLY__SUCCESS)
					success = rf.value != 0;
				else if (rf.id == PB_IPC_FRAME_INVOKE_METHOD_REPLY__HAS_MORE)
					has_more = rf.value != 0;
				else if (rf.id == PB_IPC_FRAME_INVOKE_METHOD_REPLY__REPLY_PROTO &&
					 rf.wire_type == PZ_WIRE_LEN) {
					reply = rf.data;
					reply_len = rf.size;
				}
			}
			if (rr.err)
				return false;
		} else {
			return false; /* anything else takes the general path */
		}
	}
	if (r.err || !seen || !hmap_get(&c->calls, request_id, &v))
		return false;
	call = (struct client_call *)(uintptr_t)v;
	if (call->kind != CALL_INVOKE || !call->raw || !success)
		return false;
	if (!has_more)
		hmap_del(&c->calls, request_id, NULL);
	memset(&rep, 0, sizeof(rep));
	rep.success = true;
	rep.has_more = has_more;
	rep.desc = call->out_desc;
	rep.data = reply;
	rep.len = reply_len;
	rep.fd = ipc_conn_take_fd(&c->conn);
	if (rep.fd < 0)
		rep.fd = -1;
	if (call->cb)
		call->cb(&rep, call->user);
	else if (rep.fd >= 0)
		close(rep.fd);
	if (!has_more)
		free(call);
	return true;
}

static void read_frames(struct ipc_client *c)
{
	int i;

	for (i = 0; i < IPC_MAX_RECVS_PER_WAKEUP; i++) {
		Perfetto__Protos__IPCFrame *f = NULL;
		int n = ipc_conn_recv(&c->conn);
		const uint8_t *payload;
		size_t len;
		int got;

		if (n == -EAGAIN)
			return;
		while (c->state == CLIENT_CONNECTED && !c->destroy_pending &&
		       (got = ipc_frame_reader_pop_raw(&c->conn.rd, &payload, &len)) != 0) {
			if (got < 0) {
				LOG_D("ipc client: bad frame from host: %d", got);
				disconnect(c, got);
				return;
			}
			if (try_raw_reply(c, payload, len))
				continue;
			f = perfetto__protos__ipcframe__unpack(NULL, len, payload);
			if (!f) {
				LOG_D("ipc client: undecodable frame from host");
				disconnect(c, -EBADMSG);
				return;
			}
			on_frame(c, f);
			ipc_frame_free(f);
		}
		if (c->state != CLIENT_CONNECTED || c->destroy_pending)
			return;
		if (n <= 0) {
			disconnect(c, n);
			return;
		}
	}
}

static void flush(struct ipc_client *c)
{
	int err;

	if (c->state != CLIENT_CONNECTED)
		return;
	err = ipc_conn_flush(&c->conn);
	if (err < 0) {
		disconnect(c, err);
		return;
	}
	update_watch(c);
}

static void io_cb(int fd, unsigned revents, void *user)
{
	struct ipc_client *c = user;

	(void)fd;
	c->cb_depth++;
	if (c->state == CLIENT_CONNECTING) {
		int err = sock_connect_finish(c->conn.fd);

		if (err < 0) {
			disconnect(c, err);
			goto out;
		}
		c->state = CLIENT_CONNECTED;
		c->conn.supports_fds = sock_family_supports_fds(sock_family_of_fd(c->conn.fd));
		update_watch(c);
		if (c->cbs.on_connected)
			c->cbs.on_connected(c, c->user);
		if (!c->destroy_pending)
			flush(c);
		goto out;
	}
	if (revents & EVLOOP_WRITE)
		flush(c);
	if (c->state == CLIENT_CONNECTED && !c->destroy_pending &&
	    (revents & (EVLOOP_READ | EVLOOP_HUP | EVLOOP_ERROR)))
		read_frames(c);
out:
	c->cb_depth--;
	if (c->destroy_pending && c->cb_depth == 0)
		client_free(c);
}

int ipc_client_connect(struct evloop *loop, const char *sock_name,
		       const struct ipc_client_callbacks *cbs, void *user, struct ipc_client **out)
{
	struct ipc_client *c = NULL;
	int fd = -1;
	int err;

	err = sock_connect_nonblock(sock_name, &fd);
	if (err < 0 && err != -EINPROGRESS)
		return err;
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return -ENOMEM;
	}
	c->loop = loop;
	c->user = user;
	if (cbs)
		c->cbs = *cbs;
	c->state = CLIENT_CONNECTING;
	hmap_init(&c->calls);
	ipc_conn_init(&c->conn, fd, false, IPC_MAX_SEND_QUEUE_BYTES);
	/* Even an immediate connect is reported from the loop, so the owner
	 * always sees on_connected after this returns. */
	err = evloop_add_fd(loop, fd, EVLOOP_WRITE, io_cb, c, &c->watch_id);
	if (err < 0) {
		client_free(c);
		return err;
	}
	c->has_watch = true;
	c->watch_events = EVLOOP_WRITE;
	*out = c;
	return 0;
}

void ipc_client_destroy(struct ipc_client *c)
{
	if (!c)
		return;
	if (c->cb_depth > 0) {
		c->destroy_pending = true;
		c->state = CLIENT_DISCONNECTED;
		close_socket(c);
		return;
	}
	close_socket(c);
	client_free(c);
}

/* Queues a frame and tries to send it. */
static int queue_frame(struct ipc_client *c, const Perfetto__Protos__IPCFrame *f, int fd)
{
	int err;

	if (c->state == CLIENT_DISCONNECTED || c->destroy_pending)
		return -ENOTCONN;
	err = ipc_conn_queue(&c->conn, f, fd);
	if (err < 0)
		return err;
	c->any_frame_queued = true;
	if (c->state == CLIENT_CONNECTED) {
		/* A send error shows up in the loop as an error event, where
		 * tearing down cannot surprise the caller. */
		if (ipc_conn_flush(&c->conn) < 0 && c->has_watch)
			evloop_mod_fd(c->loop, c->watch_id, EVLOOP_READ | EVLOOP_WRITE);
		else
			update_watch(c);
	}
	return 0;
}

int ipc_client_send_peer_identity(struct ipc_client *c, int32_t pid, int32_t uid,
				  const char *machine_id_hint, const char *machine_name)
{
	Perfetto__Protos__IPCFrame f = PERFETTO__PROTOS__IPCFRAME__INIT;
	Perfetto__Protos__IPCFrame__SetPeerIdentity id =
		PERFETTO__PROTOS__IPCFRAME__SET_PEER_IDENTITY__INIT;

	if (c->any_frame_queued)
		return -EBUSY;
	f.has_request_id = true;
	f.request_id = 0;
	f.msg_case = PERFETTO__PROTOS__IPCFRAME__MSG_SET_PEER_IDENTITY;
	f.set_peer_identity = &id;
	id.has_pid = true;
	id.pid = pid;
	id.has_uid = true;
	id.uid = uid;
	id.machine_id_hint = (char *)machine_id_hint;
	id.machine_name = (char *)machine_name;
	return queue_frame(c, &f, -1);
}

static int add_call(struct ipc_client *c, struct client_call *call)
{
	int err = hmap_put(&c->calls, call->request_id, (uint64_t)(uintptr_t)call);

	return err < 0 ? err : 0;
}

int ipc_client_bind(struct ipc_client *c, const ProtobufCServiceDescriptor *desc, ipc_bind_cb cb,
		    void *user, struct ipc_binding **out_binding)
{
	Perfetto__Protos__IPCFrame f = PERFETTO__PROTOS__IPCFRAME__INIT;
	Perfetto__Protos__IPCFrame__BindService bs = PERFETTO__PROTOS__IPCFRAME__BIND_SERVICE__INIT;
	struct ipc_binding *b = NULL;
	struct client_call *call = NULL;
	int err;

	if (!desc || !desc->short_name)
		return -EINVAL;
	if (c->state == CLIENT_DISCONNECTED || c->destroy_pending)
		return -ENOTCONN;
	b = calloc(1, sizeof(*b));
	call = calloc(1, sizeof(*call));
	if (!b || !call) {
		err = -ENOMEM;
		goto fail;
	}
	b->method_ids = calloc(desc->n_methods + 1, sizeof(*b->method_ids));
	if (!b->method_ids) {
		err = -ENOMEM;
		goto fail;
	}
	b->client = c;
	b->desc = desc;
	b->cb = cb;
	b->user = user;
	call->request_id = c->last_request_id + 1;
	call->kind = CALL_BIND;
	call->binding = b;
	err = add_call(c, call);
	if (err < 0)
		goto fail;
	f.has_request_id = true;
	f.request_id = call->request_id;
	f.msg_case = PERFETTO__PROTOS__IPCFRAME__MSG_MSG_BIND_SERVICE;
	f.msg_bind_service = &bs;
	bs.service_name = (char *)desc->short_name;
	err = queue_frame(c, &f, -1);
	if (err < 0) {
		hmap_del(&c->calls, call->request_id, NULL);
		goto fail;
	}
	c->last_request_id++;
	b->next = c->bindings;
	c->bindings = b;
	*out_binding = b;
	return 0;
fail:
	if (b)
		free(b->method_ids);
	free(b);
	free(call);
	return err;
}

static int invoke_impl(struct ipc_client *c, struct ipc_binding *b, const char *method,
		       const ProtobufCMessage *args, int fd_to_send, ipc_reply_cb cb, void *user,
		       bool drop_reply, bool raw)
{
	Perfetto__Protos__IPCFrame f = PERFETTO__PROTOS__IPCFRAME__INIT;
	Perfetto__Protos__IPCFrame__InvokeMethod im = PERFETTO__PROTOS__IPCFRAME__INVOKE_METHOD__INIT;
	const ProtobufCMethodDescriptor *md;
	struct client_call *call = NULL;
	uint8_t *data = NULL;
	size_t len = 0;
	uint32_t method_id;
	int err;

	if (!b || b->client != c || !method || (!cb && !drop_reply))
		return -EINVAL;
	if (c->state == CLIENT_DISCONNECTED || c->destroy_pending)
		return -ENOTCONN;
	md = protobuf_c_service_descriptor_get_method_by_name(b->desc, method);
	if (!md)
		return -ENOENT;
	if (args && args->descriptor != md->input)
		return -EINVAL;
	if (!b->is_answered)
		return -EAGAIN;
	if (b->service_id == 0)
		return -ENOTCONN;
	method_id = b->method_ids[md - b->desc->methods];
	if (method_id == 0)
		return -EOPNOTSUPP;
	if (args) {
		len = protobuf_c_message_get_packed_size(args);
		if (len > IPC_MAX_FRAME_BYTES)
			return -EMSGSIZE;
		data = malloc(len ? len : 1);
		if (!data)
			return -ENOMEM;
		protobuf_c_message_pack(args, data);
	}
	if (!drop_reply) {
		call = calloc(1, sizeof(*call));
		if (!call) {
			err = -ENOMEM;
			goto out;
		}
		call->request_id = c->last_request_id + 1;
		call->kind = CALL_INVOKE;
		call->binding = b;
		call->out_desc = md->output;
		call->raw = raw;
		call->cb = cb;
		call->user = user;
		err = add_call(c, call);
		if (err < 0)
			goto out;
	}
	f.has_request_id = true;
	f.request_id = c->last_request_id + 1;
	f.msg_case = PERFETTO__PROTOS__IPCFRAME__MSG_MSG_INVOKE_METHOD;
	f.msg_invoke_method = &im;
	im.has_service_id = true;
	im.service_id = b->service_id;
	im.has_method_id = true;
	im.method_id = method_id;
	im.has_args_proto = true;
	im.args_proto.data = data;
	im.args_proto.len = len;
	if (drop_reply) {
		im.has_drop_reply = true;
		im.drop_reply = true;
	}
	err = queue_frame(c, &f, fd_to_send);
	if (err < 0) {
		if (call)
			hmap_del(&c->calls, call->request_id, NULL);
		goto out;
	}
	c->last_request_id++;
	call = NULL; /* owned by the table now */
out:
	free(call);
	free(data);
	return err;
}

int ipc_client_invoke(struct ipc_client *c, struct ipc_binding *b, const char *method,
		      const ProtobufCMessage *args, int fd_to_send, ipc_reply_cb cb, void *user,
		      bool drop_reply)
{
	return invoke_impl(c, b, method, args, fd_to_send, cb, user, drop_reply, false);
}

int ipc_client_invoke_raw(struct ipc_client *c, struct ipc_binding *b, const char *method,
			  const ProtobufCMessage *args, int fd_to_send, ipc_reply_cb cb, void *user)
{
	return invoke_impl(c, b, method, args, fd_to_send, cb, user, false, true);
}

int ipc_client_take_fd(struct ipc_client *c)
{
	return ipc_conn_take_fd(&c->conn);
}

int ipc_client_socket_fd(const struct ipc_client *client)
{
	return client ? client->conn.fd : -1;
}

bool ipc_client_is_connected(const struct ipc_client *c)
{
	return c->state == CLIENT_CONNECTED && !c->destroy_pending;
}

bool ipc_client_supports_fds(const struct ipc_client *c)
{
	return c->state == CLIENT_CONNECTED && c->conn.supports_fds;
}

uint32_t ipc_binding_service_id(const struct ipc_binding *b)
{
	return b->service_id;
}

uint32_t ipc_binding_method_id(const struct ipc_binding *b, const char *method)
{
	const ProtobufCMethodDescriptor *md;

	if (!b->service_id)
		return 0;
	md = protobuf_c_service_descriptor_get_method_by_name(b->desc, method);
	return md ? b->method_ids[md - b->desc->methods] : 0;
}

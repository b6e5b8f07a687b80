// SPDX-License-Identifier: Apache-2.0
/*
 * consumer.c - the ConsumerPort client behind the perfetto CLI: one call
 * context per pending request (streams keep theirs until the last reply),
 * packet reassembly from ReadBuffers slices, merging of streamed service
 * state, and the buffered Trace file writer. Loop thread only; replies are
 * parsed in place with the protozero reader where they carry trace data.
 */
#include "tracing/consumer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/file.h"
#include "base/log.h"
#include "base/sock_default.h"
#include "pb_fields.h"
#include "config/trace_config.pb-c.h"
#include "ipc/consumer_port.pb-c.h"
#include "ipc/ipc.h"
#include "tracing/tracing_int.h"

enum call_kind {
	CALL_ENABLE,
	CALL_DONE,
	CALL_FLUSH,
	CALL_READ,
	CALL_BYTES,
	CALL_STATE,
	CALL_CLONE,
	CALL_EVENTS,
};

struct ccall {
	struct consumer *c;
	struct ccall *prev, *next;
	enum call_kind kind;
	void *user;
	union {
		consumer_disabled_cb disabled;
		consumer_done_cb done;
		consumer_bytes_cb bytes;
		consumer_state_cb state;
		consumer_clone_cb clone;
		consumer_events_cb events;
	} cb;
	/* CALL_READ */
	consumer_packet_cb on_packet;
	bool is_dropping; /* skipping the rest of an oversized packet */
	size_t max_packet_bytes;
	int err;
	/* CALL_READ: the packet being reassembled; CALL_STATE: merged bytes. */
	struct buf acc;
};

struct consumer {
	struct evloop *loop;
	struct ipc_client *ipc;
	struct ipc_binding *port;
	struct consumer_callbacks cbs;
	void *user;
	bool is_bound;
	bool is_gone; /* disconnected */
	bool is_dead; /* consumer_destroy() ran */
	unsigned cb_depth;
	size_t max_packet_bytes;
	struct ccall *calls;
};

/* ---------------------------------------------------- plumbing ---- */

static void call_free(struct ccall *k)
{
	buf_fini(&k->acc);
	free(k);
}

static void call_unlink(struct ccall *k)
{
	if (k->prev)
		k->prev->next = k->next;
	else
		k->c->calls = k->next;
	if (k->next)
		k->next->prev = k->prev;
	k->prev = k->next = NULL;
}

static void cb_enter(struct consumer *c)
{
	c->cb_depth++;
}

/* Return: true if @c is gone (freed, or destroyed and freed later). */
static bool cb_leave(struct consumer *c)
{
	c->cb_depth--;
	if (c->is_dead && c->cb_depth == 0) {
		free(c);
		return true;
	}
	return c->is_dead;
}

static struct ccall *call_new(struct consumer *c, enum call_kind kind, void *user)
{
	struct ccall *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	k->c = c;
	k->kind = kind;
	k->user = user;
	buf_init(&k->acc);
	return k;
}

static void on_reply(const struct ipc_reply *r, void *user);

/* Sends @msg (or raw bytes when @raw) and links @k, which then belongs to
 * the consumer. On failure @k is freed. */
static int invoke(struct consumer *c, const char *method, const ProtobufCMessage *msg, int fd,
		  struct ccall *k)
{
	int err;

	if (c->is_gone || !c->is_bound) {
		err = -ENOTCONN;
		goto fail;
	}
	/* Trace data is parsed in place; no need to decode it into structs first. */
	if (k && k->kind == CALL_READ)
		err = ipc_client_invoke_raw(c->ipc, c->port, method, msg, fd, on_reply, k);
	else
		err = ipc_client_invoke(c->ipc, c->port, method, msg, fd, k ? on_reply : NULL, k, !k);
	if (err < 0)
		goto fail;
	if (k) {
		k->next = c->calls;
		if (c->calls)
			c->calls->prev = k;
		c->calls = k;
	}
	return 0;
fail:
	if (k)
		call_free(k);
	return err;
}

/* The payload of the last field @id of a message, or (NULL, 0). */
static int find_bytes_field(const uint8_t *data, size_t len, uint32_t id, const uint8_t **out,
			    size_t *out_len)
{
	struct pz_reader rd;
	struct pz_field f;
	int got;

	*out = NULL;
	*out_len = 0;
	pz_reader_init(&rd, data, len);
	while ((got = pz_reader_next(&rd, &f)) == 1) {
		if (f.id == id && f.wire_type == PZ_WIRE_LEN) {
			*out = f.data;
			*out_len = f.size;
		}
	}
	return got < 0 ? -EBADMSG : 0;
}

static int reply_err(const struct consumer *c, const struct ipc_reply *r)
{
	if (r->success)
		return 0;
	return c->is_gone || !c->ipc || !ipc_client_is_connected(c->ipc) ? -ECONNRESET : -EIO;
}

/* ------------------------------------------------ read buffers ---- */

/* Feeds one ReadBuffersResponse. Return: true if @c went away meanwhile. */
static bool read_slices(struct ccall *k, const uint8_t *data, size_t len)
{
	struct consumer *c = k->c;
	struct pz_reader rd, srd;
	struct pz_field f, sf;
	int got;

	pz_reader_init(&rd, data, len);
	while ((got = pz_reader_next(&rd, &f)) == 1) {
		const uint8_t *slice = NULL;
		size_t slice_len = 0;
		bool is_last = false;

		if (f.id != 2 || f.wire_type != PZ_WIRE_LEN)
			continue;
		pz_reader_init(&srd, f.data, f.size);
		while ((got = pz_reader_next(&srd, &sf)) == 1) {
			if (sf.id == 1 && sf.wire_type == PZ_WIRE_LEN) {
				slice = sf.data;
				slice_len = sf.size;
			} else if (sf.id == 2 && sf.wire_type == PZ_WIRE_VARINT) {
				is_last = sf.value != 0;
			}
		}
		if (got < 0)
			break;
		if (k->is_dropping) {
			k->is_dropping = !is_last;
			continue;
		}
		if (k->acc.len == 0 && is_last && slice_len <= k->max_packet_bytes) {
			/* The common case: a whole packet in one slice, no copy. */
			cb_enter(c);
			k->on_packet(slice, slice_len, k->user);
			if (cb_leave(c))
				return true;
			continue;
		}
		if (slice_len > k->max_packet_bytes - k->acc.len ||
		    buf_append(&k->acc, slice, slice_len) < 0) {
			k->err = slice_len > k->max_packet_bytes - k->acc.len ? -EMSGSIZE : -ENOMEM;
			buf_fini(&k->acc);
			buf_init(&k->acc);
			k->is_dropping = !is_last;
			continue;
		}
		if (is_last) {
			cb_enter(c);
			k->on_packet(k->acc.data, k->acc.len, k->user);
			if (cb_leave(c))
				return true;
			/* Keep the storage for the next split packet. */
			buf_reset(&k->acc);
		}
	}
	if (got < 0 && !k->err)
		k->err = -EBADMSG;
	return false;
}

/* --------------------------------------------------- replies ---- */

static void finish_enable(struct ccall *k, const struct ipc_reply *r)
{
	const Perfetto__Protos__EnableTracingResponse *resp = (const void *)r->msg;
	const char *error = NULL;

	if (!r->success)
		error = "the tracing service connection ended";
	else if (resp && resp->error && resp->error[0])
		error = resp->error;
	k->cb.disabled(error, k->user);
}

static void finish_state(struct ccall *k, int err)
{
	Perfetto__Protos__TracingServiceState *st = NULL;

	if (!err) {
		st = perfetto__protos__tracing_service_state__unpack(NULL, k->acc.len, k->acc.data);
		if (!st)
			err = -EBADMSG;
	}
	k->cb.state(err, st, err ? NULL : k->acc.data, err ? 0 : k->acc.len, k->user);
	if (st)
		perfetto__protos__tracing_service_state__free_unpacked(st, NULL);
}

static void finish_clone(struct ccall *k, const struct ipc_reply *r)
{
	const Perfetto__Protos__CloneSessionResponse *resp = (const void *)r->msg;
	struct consumer_clone_result res = {0};

	res.err = reply_err(k->c, r);
	if (!res.err && resp) {
		res.success = resp->success;
		res.error = resp->error;
		res.uuid_msb = resp->uuid_msb;
		res.uuid_lsb = resp->uuid_lsb;
		res.was_write_into_file = resp->was_write_into_file;
	}
	k->cb.clone(&res, k->user);
}

/* Handles one reply of @k's call. Return: true if @c went away. */
static bool handle_reply(struct ccall *k, const struct ipc_reply *r)
{
	struct consumer *c = k->c;
	const uint8_t *p = NULL;
	size_t n = 0;
	int err = reply_err(c, r);

	switch (k->kind) {
	case CALL_ENABLE:
		if (!r->has_more)
			finish_enable(k, r);
		break;
	case CALL_DONE:
		if (!r->has_more && k->cb.done)
			k->cb.done(err, k->user);
		break;
	case CALL_FLUSH:
		if (!r->has_more && k->cb.done)
			k->cb.done(err == -EIO ? -ETIMEDOUT : err, k->user);
		break;
	case CALL_READ:
		if (!err && read_slices(k, r->data, r->len))
			return true;
		if (!r->has_more)
			k->cb.done(err ? err : k->err, k->user);
		break;
	case CALL_BYTES:
		if (!err)
			err = find_bytes_field(r->data, r->len, 1, &p, &n);
		if (!r->has_more)
			k->cb.bytes(err, err ? NULL : p, err ? 0 : n, k->user);
		break;
	case CALL_STATE:
		if (!err && !k->err) {
			err = find_bytes_field(r->data, r->len, 1, &p, &n);
			if (!err && n > CONSUMER_MAX_QUERY_BYTES - k->acc.len)
				err = -EMSGSIZE;
			/* Concatenated messages merge: repeated fields append. */
			if (!err && n)
				err = buf_append(&k->acc, p, n);
			k->err = err;
		}
		if (!r->has_more)
			finish_state(k, err ? err : k->err);
		break;
	case CALL_CLONE:
		if (!r->has_more)
			finish_clone(k, r);
		break;
	case CALL_EVENTS:
		if (!err)
			err = find_bytes_field(r->data, r->len, 1, &p, &n);
		if (r->success || !r->has_more)
			k->cb.events(err, err ? NULL : p, err ? 0 : n, !r->has_more, k->user);
		break;
	}
	return c->is_dead;
}

static void on_reply(const struct ipc_reply *r, void *user)
{
	struct ccall *k = user;
	struct consumer *c = k->c;

	if (r->fd >= 0)
		close(r->fd);
	/* A finished call leaves the list first: its callback may destroy @c. */
	if (!r->has_more)
		call_unlink(k);
	cb_enter(c);
	handle_reply(k, r);
	if (!r->has_more)
		call_free(k);
	cb_leave(c);
}

/* ------------------------------------------------- connection ---- */

static void on_bind(struct ipc_binding *b, bool success, void *user)
{
	struct consumer *c = user;

	(void)b;
	if (!success) {
		if (c->ipc && ipc_client_is_connected(c->ipc)) {
			/* Not a tracing service: end the connection. */
			c->is_gone = true;
			ipc_client_destroy(c->ipc);
			c->ipc = NULL;
			if (c->cbs.on_disconnected) {
				cb_enter(c);
				c->cbs.on_disconnected(c, -EPROTONOSUPPORT, c->user);
				cb_leave(c);
			}
		}
		return;
	}
	c->is_bound = true;
	if (c->cbs.on_connected) {
		cb_enter(c);
		c->cbs.on_connected(c, c->user);
		cb_leave(c);
	}
}

static void on_ipc_disconnected(struct ipc_client *ic, int err, void *user)
{
	struct consumer *c = user;

	(void)ic;
	if (c->is_gone)
		return;
	c->is_gone = true;
	if (c->cbs.on_disconnected) {
		cb_enter(c);
		c->cbs.on_disconnected(c, err, c->user);
		cb_leave(c);
	}
}

int consumer_connect(struct evloop *loop, const char *sock_name,
		     const struct consumer_callbacks *cbs, void *user, struct consumer **out)
{
	struct ipc_client_callbacks icbs = {.on_disconnected = on_ipc_disconnected};
	struct consumer *c;
	int err;

	if (!loop || !out)
		return -EINVAL;
	if (!sock_name)
		sock_name = sock_default_consumer();
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->loop = loop;
	c->user = user;
	c->max_packet_bytes = CONSUMER_MAX_PACKET_BYTES;
	if (cbs)
		c->cbs = *cbs;
	err = ipc_client_connect(loop, sock_name, &icbs, c, &c->ipc);
	if (err < 0)
		goto fail;
	err = ipc_client_bind(c->ipc, &perfetto__protos__consumer_port__descriptor, on_bind, c,
			      &c->port);
	if (err < 0)
		goto fail;
	*out = c;
	return 0;
fail:
	ipc_client_destroy(c->ipc);
	free(c);
	return err;
}

void consumer_destroy(struct consumer *c)
{
	if (!c || c->is_dead)
		return;
	c->is_dead = true;
	c->is_gone = true;
	ipc_client_destroy(c->ipc);
	c->ipc = NULL;
	while (c->calls) {
		struct ccall *k = c->calls;

		call_unlink(k);
		call_free(k);
	}
	if (c->cb_depth == 0)
		free(c);
}

bool consumer_is_connected(const struct consumer *c)
{
	return c && c->is_bound && !c->is_gone;
}

int consumer_set_max_packet_bytes(struct consumer *c, size_t max_bytes)
{
	if (!c || max_bytes == 0 || max_bytes > CONSUMER_MAX_PACKET_BYTES)
		return -EINVAL;
	c->max_packet_bytes = max_bytes;
	return 0;
}

/* ------------------------------------------------------- calls ---- */

/* Serialized request {@field_id: @data} of @desc's type, as raw bytes. */
static int invoke_wrapped(struct consumer *c, const char *method,
			  const ProtobufCMessageDescriptor *desc, uint32_t field_id,
			  const uint8_t *data, size_t len, int fd, struct ccall *k)
{
	struct pb_raw_msg m;
	uint8_t *buf = NULL;
	size_t hdr;
	int err;

	buf = malloc(2 * PZ_MAX_VARINT_BYTES + len);
	if (!buf) {
		err = -ENOMEM;
		goto fail;
	}
	hdr = pz_varint_encode(pz_make_tag(field_id, PZ_WIRE_LEN), buf);
	hdr += pz_varint_encode(len, buf + hdr);
	if (len)
		memcpy(buf + hdr, data, len);
	err = pb_raw_msg_init(&m, desc, buf, hdr + len);
	if (err < 0)
		goto fail;
	err = invoke(c, method, &m.u.base, fd, k);
	free(buf);
	return err;
fail:
	free(buf);
	if (k)
		call_free(k);
	return err;
}

static int check_config(const uint8_t *cfg, size_t len)
{
	Perfetto__Protos__TraceConfig *tc;

	if (!cfg && len)
		return -EINVAL;
	tc = perfetto__protos__trace_config__unpack(NULL, len, cfg);
	if (!tc)
		return -EINVAL;
	perfetto__protos__trace_config__free_unpacked(tc, NULL);
	return 0;
}

int consumer_enable_tracing(struct consumer *c, const uint8_t *cfg, size_t len, int out_fd,
			    consumer_disabled_cb on_disabled, void *user)
{
	struct ccall *k;

	if (!c || !on_disabled || check_config(cfg, len) < 0)
		return -EINVAL;
	k = call_new(c, CALL_ENABLE, user);
	if (!k)
		return -ENOMEM;
	k->cb.disabled = on_disabled;
	return invoke_wrapped(c, "EnableTracing", &perfetto__protos__enable_tracing_request__descriptor,
			      1, cfg, len, out_fd, k);
}

int consumer_enable_tracing_notify(struct consumer *c, consumer_disabled_cb on_disabled,
				   void *user)
{
	Perfetto__Protos__EnableTracingRequest req = PERFETTO__PROTOS__ENABLE_TRACING_REQUEST__INIT;
	struct ccall *k;

	if (!c || !on_disabled)
		return -EINVAL;
	k = call_new(c, CALL_ENABLE, user);
	if (!k)
		return -ENOMEM;
	k->cb.disabled = on_disabled;
	req.has_attach_notification_only = 1;
	req.attach_notification_only = 1;
	return invoke(c, "EnableTracing", &req.base, -1, k);
}

int consumer_change_trace_config(struct consumer *c, const uint8_t *cfg, size_t len)
{
	if (!c || check_config(cfg, len) < 0)
		return -EINVAL;
	return invoke_wrapped(c, "ChangeTraceConfig",
			      &perfetto__protos__change_trace_config_request__descriptor, 1, cfg, len,
			      -1, NULL);
}

/* A call whose reply carries nothing: @cb optional. */
static int simple_call(struct consumer *c, const char *method, const ProtobufCMessage *msg,
		       enum call_kind kind, consumer_done_cb cb, void *user)
{
	struct ccall *k = NULL;

	if (!c)
		return -EINVAL;
	if (cb) {
		k = call_new(c, kind, user);
		if (!k)
			return -ENOMEM;
		k->cb.done = cb;
	}
	return invoke(c, method, msg, -1, k);
}

int consumer_start_tracing(struct consumer *c)
{
	Perfetto__Protos__StartTracingRequest req = PERFETTO__PROTOS__START_TRACING_REQUEST__INIT;

	return simple_call(c, "StartTracing", &req.base, CALL_DONE, NULL, NULL);
}

int consumer_disable_tracing(struct consumer *c)
{
	Perfetto__Protos__DisableTracingRequest req = PERFETTO__PROTOS__DISABLE_TRACING_REQUEST__INIT;

	return simple_call(c, "DisableTracing", &req.base, CALL_DONE, NULL, NULL);
}

int consumer_flush(struct consumer *c, uint32_t timeout_ms, uint64_t flags, consumer_done_cb cb,
		   void *user)
{
	Perfetto__Protos__FlushRequest req = PERFETTO__PROTOS__FLUSH_REQUEST__INIT;

	if (timeout_ms) {
		req.has_timeout_ms = true;
		req.timeout_ms = timeout_ms;
	}
	if (flags) {
		req.has_flags = true;
		req.flags = flags;
	}
	return simple_call(c, "Flush", &req.base, CALL_FLUSH, cb, user);
}

int consumer_read_buffers(struct consumer *c, consumer_packet_cb on_packet,
			  consumer_done_cb on_done, void *user)
{
	Perfetto__Protos__ReadBuffersRequest req = PERFETTO__PROTOS__READ_BUFFERS_REQUEST__INIT;
	struct ccall *k;

	if (!c || !on_packet || !on_done)
		return -EINVAL;
	k = call_new(c, CALL_READ, user);
	if (!k)
		return -ENOMEM;
	k->on_packet = on_packet;
	k->cb.done = on_done;
	k->max_packet_bytes = c->max_packet_bytes;
	return invoke(c, "ReadBuffers", &req.base, -1, k);
}

int consumer_free_buffers(struct consumer *c, consumer_done_cb cb, void *user)
{
	Perfetto__Protos__FreeBuffersRequest req = PERFETTO__PROTOS__FREE_BUFFERS_REQUEST__INIT;

	return simple_call(c, "FreeBuffers", &req.base, CALL_DONE, cb, user);
}

static bool key_ok(const char *key)
{
	return key && strnlen(key, CONSUMER_MAX_KEY_BYTES + 1) <= CONSUMER_MAX_KEY_BYTES;
}

int consumer_detach(struct consumer *c, const char *key, consumer_done_cb cb, void *user)
{
	Perfetto__Protos__DetachRequest req = PERFETTO__PROTOS__DETACH_REQUEST__INIT;

	if (!key_ok(key))
		return -EINVAL;
	req.key = (char *)key;
	return simple_call(c, "Detach", &req.base, CALL_DONE, cb, user);
}

static int bytes_call(struct consumer *c, const char *method, const ProtobufCMessage *msg,
		      consumer_bytes_cb cb, void *user)
{
	struct ccall *k;

	if (!c || !cb)
		return -EINVAL;
	k = call_new(c, CALL_BYTES, user);
	if (!k)
		return -ENOMEM;
	k->cb.bytes = cb;
	return invoke(c, method, msg, -1, k);
}

int consumer_attach(struct consumer *c, const char *key, consumer_bytes_cb cb, void *user)
{
	Perfetto__Protos__AttachRequest req = PERFETTO__PROTOS__ATTACH_REQUEST__INIT;

	if (!key_ok(key))
		return -EINVAL;
	req.key = (char *)key;
	return bytes_call(c, "Attach", &req.base, cb, user);
}

int consumer_get_trace_stats(struct consumer *c, consumer_bytes_cb cb, void *user)
{
	Perfetto__Protos__GetTraceStatsRequest req = PERFETTO__PROTOS__GET_TRACE_STATS_REQUEST__INIT;

	return bytes_call(c, "GetTraceStats", &req.base, cb, user);
}

int consumer_query_capabilities(struct consumer *c, consumer_bytes_cb cb, void *user)
{
	Perfetto__Protos__QueryCapabilitiesRequest req =
		PERFETTO__PROTOS__QUERY_CAPABILITIES_REQUEST__INIT;

	return bytes_call(c, "QueryCapabilities", &req.base, cb, user);
}

int consumer_query_service_state(struct consumer *c, bool sessions_only, consumer_state_cb cb,
				 void *user)
{
	Perfetto__Protos__QueryServiceStateRequest req =
		PERFETTO__PROTOS__QUERY_SERVICE_STATE_REQUEST__INIT;
	struct ccall *k;

	if (!c || !cb)
		return -EINVAL;
	if (sessions_only) {
		req.has_sessions_only = true;
		req.sessions_only = true;
	}
	k = call_new(c, CALL_STATE, user);
	if (!k)
		return -ENOMEM;
	k->cb.state = cb;
	return invoke(c, "QueryServiceState", &req.base, -1, k);
}

int consumer_clone_session(struct consumer *c, const struct consumer_clone_args *a,
			   consumer_clone_cb cb, void *user)
{
	Perfetto__Protos__CloneSessionRequest req = PERFETTO__PROTOS__CLONE_SESSION_REQUEST__INIT;
	struct ccall *k;

	if (!c || !a || !cb || (a->unique_session_name && !key_ok(a->unique_session_name)) ||
	    (a->clone_trigger_name && !key_ok(a->clone_trigger_name)) ||
	    (a->clone_trigger_producer_name && !key_ok(a->clone_trigger_producer_name)))
		return -EINVAL;
	if (a->unique_session_name) {
		req.selector_case = PERFETTO__PROTOS__CLONE_SESSION_REQUEST__SELECTOR_UNIQUE_SESSION_NAME;
		req.unique_session_name = (char *)a->unique_session_name;
	} else {
		req.selector_case = PERFETTO__PROTOS__CLONE_SESSION_REQUEST__SELECTOR_SESSION_ID;
		req.session_id = a->session_id;
	}
	if (a->skip_trace_filter)
		req.has_skip_trace_filter = req.skip_trace_filter = true;
	if (a->for_bugreport)
		req.has_for_bugreport = req.for_bugreport = true;
	req.clone_trigger_name = (char *)a->clone_trigger_name;
	if (a->clone_trigger_name) {
		req.clone_trigger_producer_name = (char *)a->clone_trigger_producer_name;
		req.has_clone_trigger_trusted_producer_uid = 1;
		req.clone_trigger_trusted_producer_uid = a->clone_trigger_trusted_producer_uid;
		req.has_clone_trigger_boot_time_ns = 1;
		req.clone_trigger_boot_time_ns = a->clone_trigger_boot_time_ns;
		req.has_clone_trigger_delay_ms = 1;
		req.clone_trigger_delay_ms = a->clone_trigger_delay_ms;
	}
	k = call_new(c, CALL_CLONE, user);
	if (!k)
		return -ENOMEM;
	k->cb.clone = cb;
	return invoke(c, "CloneSession", &req.base, -1, k);
}

int consumer_observe_events(struct consumer *c, const int *types, size_t n, consumer_events_cb cb,
			    void *user)
{
	Perfetto__Protos__ObserveEventsRequest req = PERFETTO__PROTOS__OBSERVE_EVENTS_REQUEST__INIT;
	Perfetto__Protos__ObservableEvents__Type *t = NULL;
	struct ccall *k;
	size_t i;
	int err;

	if (!c || !cb || (n && !types) || n > 64)
		return -EINVAL;
	if (n) {
		t = calloc(n, sizeof(*t));
		if (!t)
			return -ENOMEM;
		for (i = 0; i < n; i++)
			t[i] = (Perfetto__Protos__ObservableEvents__Type)types[i];
	}
	req.n_events_to_observe = n;
	req.events_to_observe = t;
	k = call_new(c, CALL_EVENTS, user);
	if (!k) {
		free(t);
		return -ENOMEM;
	}
	k->cb.events = cb;
	err = invoke(c, "ObserveEvents", &req.base, -1, k);
	free(t);
	return err;
}

/* ------------------------------------------------- trace files ---- */

int trace_file_writer_init(struct trace_file_writer *w, int fd, size_t buf_bytes)
{
	if (!w || fd < 0)
		return -EINVAL;
	memset(w, 0, sizeof(*w));
	w->fd = fd;
	w->cap = buf_bytes ? buf_bytes : TRACE_FILE_BUF_BYTES;
	if (w->cap < 2 * PZ_MAX_VARINT_BYTES)
		w->cap = 2 * PZ_MAX_VARINT_BYTES;
	w->buf = malloc(w->cap);
	return w->buf ? 0 : -ENOMEM;
}

int trace_file_writer_flush(struct trace_file_writer *w)
{
	int err;

	if (w->err)
		return w->err;
	if (!w->len)
		return 0;
	err = file_write_all(w->fd, w->buf, w->len);
	w->len = 0;
	if (err < 0)
		w->err = err;
	return w->err;
}

int trace_file_write_packet(struct trace_file_writer *w, const uint8_t *packet, size_t len)
{
	uint8_t hdr[1 + PZ_MAX_VARINT_BYTES];
	size_t n_hdr;
	int err;

	if (w->err)
		return w->err;
	if (!packet && len)
		return -EINVAL;
	hdr[0] = (uint8_t)pz_make_tag(PB_TRACE__PACKET, PZ_WIRE_LEN);
	n_hdr = 1 + pz_varint_encode(len, hdr + 1);
	if (w->len + n_hdr + len > w->cap) {
		err = trace_file_writer_flush(w);
		if (err < 0)
			return err;
	}
	memcpy(w->buf + w->len, hdr, n_hdr);
	w->len += n_hdr;
	if (w->len + len > w->cap) {
		/* Bigger than the buffer: write it straight through. */
		err = trace_file_writer_flush(w);
		if (!err && len)
			err = file_write_all(w->fd, packet, len);
		if (err < 0) {
			w->err = err;
			return err;
		}
	} else if (len) {
		memcpy(w->buf + w->len, packet, len);
		w->len += len;
	}
	w->bytes_written += n_hdr + len;
	w->packets++;
	return 0;
}

int trace_file_writer_fini(struct trace_file_writer *w)
{
	int err;

	if (!w || !w->buf)
		return 0;
	err = trace_file_writer_flush(w);
	free(w->buf);
	w->buf = NULL;
	return err;
}

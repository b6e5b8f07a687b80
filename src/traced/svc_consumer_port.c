// SPDX-License-Identifier: Apache-2.0
/*
 * svc_consumer_port.c - the ConsumerPort service: consumers start sessions
 * (EnableTracing), read and free their buffers, flush, detach and attach,
 * clone running sessions and ask about the service. A consumer owns at most
 * one session per connection; a session whose consumer goes away is freed
 * unless it was detached.
 */
#include "traced/svc_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/version.h"
#include "ipc/consumer_port.pb-c.h"
#include "pb_fields.h"

static struct svc_session *own_session(struct svc *svc, struct ipc_host *host,
				       const struct ipc_call *call)
{
	return svc_session_by_consumer(svc, host, call->client_id);
}

static uid_t caller_uid(struct ipc_host *host, uint64_t client_id)
{
	struct ipc_client_info info;

	return ipc_host_client_info(host, client_id, &info) == 0 ? info.uid : (uid_t)-1;
}

void svc_consumer_notify_disabled(struct svc *svc, struct svc_session *s, const char *error)
{
	Perfetto__Protos__EnableTracingResponse resp;

	if (!s->has_enable_call)
		return;
	s->has_enable_call = false;
	perfetto__protos__enable_tracing_response__init(&resp);
	resp.state_case = PERFETTO__PROTOS__ENABLE_TRACING_RESPONSE__STATE_DISABLED;
	resp.disabled = 1;
	resp.error = (char *)error;
	ipc_host_reply(svc->consumer_host, &s->enable_call, &resp.base, false, -1);
}

static void on_enable(struct ipc_host *host, const struct ipc_call *call,
		      const ProtobufCMessage *args, void *user)
{
	const Perfetto__Protos__EnableTracingRequest *req = (const void *)args;
	Perfetto__Protos__EnableTracingResponse resp;
	struct svc *svc = user;
	struct svc_session *s = own_session(svc, host, call);
	char err[256] = "";
	int fd, rc;

	if (req->has_attach_notification_only && req->attach_notification_only) {
		if (!s) {
			ipc_host_reply_error(host, call);
			return;
		}
		if (s->state == SESSION_STOPPED) {
			s->enable_call = *call;
			s->has_enable_call = true;
			svc_consumer_notify_disabled(svc, s, NULL);
			return;
		}
		s->enable_call = *call;
		s->has_enable_call = true;
		return;
	}
	fd = ipc_host_take_fd(host, call->client_id);
	if (s) {
		snprintf(err, sizeof(err), "this consumer already has a tracing session");
		rc = -EBUSY;
	} else if (!req->trace_config) {
		snprintf(err, sizeof(err), "EnableTracing without a trace config");
		rc = -EINVAL;
	} else {
		rc = svc_session_enable(svc, host, call->client_id, caller_uid(host, call->client_id),
					req->trace_config, fd < 0 ? -1 : fd, call, err, sizeof(err));
	}
	if (rc < 0) {
		if (fd >= 0)
			close(fd);
		LOG_W("EnableTracing refused: %s", err[0] ? err : strerror(-rc));
		perfetto__protos__enable_tracing_response__init(&resp);
		resp.state_case = PERFETTO__PROTOS__ENABLE_TRACING_RESPONSE__STATE_DISABLED;
		resp.disabled = 1;
		resp.error = err[0] ? err : (char *)strerror(-rc);
		ipc_host_reply(host, call, &resp.base, false, -1);
	}
}

static void on_disable(struct ipc_host *host, const struct ipc_call *call,
		       const ProtobufCMessage *args, void *user)
{
	struct svc *svc = user;
	struct svc_session *s = own_session(svc, host, call);

	(void)args;
	if (s)
		svc_session_disable(svc, s);
	svc_reply_empty(host, call, &perfetto__protos__disable_tracing_response__descriptor);
}

static void on_read(struct ipc_host *host, const struct ipc_call *call,
		    const ProtobufCMessage *args, void *user)
{
	struct svc *svc = user;
	struct svc_session *s = own_session(svc, host, call);

	(void)args;
	if (!s || s->read_pending) {
		ipc_host_reply_error(host, call);
		return;
	}
	svc_read_to_consumer(svc, s, call);
}

static void on_free(struct ipc_host *host, const struct ipc_call *call,
		    const ProtobufCMessage *args, void *user)
{
	struct svc *svc = user;
	struct svc_session *s = own_session(svc, host, call);

	(void)args;
	if (s) {
		s->has_enable_call = false;
		svc_session_free(svc, s);
	}
	svc_reply_empty(host, call, &perfetto__protos__free_buffers_response__descriptor);
}

struct pending_reply {
	struct ipc_host *host;
	struct ipc_call call;
};

static void on_flush_done(struct svc *svc, uint64_t session_id, bool ok, void *user)
{
	struct pending_reply *pr = user;

	(void)svc;
	(void)session_id;
	if (ok)
		svc_reply_empty(pr->host, &pr->call, &perfetto__protos__flush_response__descriptor);
	else
		ipc_host_reply_error(pr->host, &pr->call);
	free(pr);
}

static void on_flush(struct ipc_host *host, const struct ipc_call *call,
		     const ProtobufCMessage *args, void *user)
{
	const Perfetto__Protos__FlushRequest *req = (const void *)args;
	struct svc *svc = user;
	struct svc_session *s = own_session(svc, host, call);
	struct pending_reply *pr;

	if (!s || s->state != SESSION_STARTED || !(pr = calloc(1, sizeof(*pr)))) {
		ipc_host_reply_error(host, call);
		return;
	}
	pr->host = host;
	pr->call = *call;
	if (svc_flush_start(svc, s, req->has_timeout_ms && req->timeout_ms ? req->timeout_ms : 5000,
			    req->has_flags ? req->flags : 4u /* explicit */, on_flush_done, pr) < 0) {
		free(pr);
		ipc_host_reply_error(host, call);
	}
}

static void on_start(struct ipc_host *host, const struct ipc_call *call,
		     const ProtobufCMessage *args, void *user)
{
	struct svc *svc = user;
	struct svc_session *s = own_session(svc, host, call);

	(void)args;
	if (!s || svc_session_start(svc, s) < 0) {
		ipc_host_reply_error(host, call);
		return;
	}
	svc_reply_empty(host, call, &perfetto__protos__start_tracing_response__descriptor);
}

static void on_change_config(struct ipc_host *host, const struct ipc_call *call,
			     const ProtobufCMessage *args, void *user)
{
	const Perfetto__Protos__ChangeTraceConfigRequest *req = (const void *)args;
	struct svc *svc = user;
	struct svc_session *s = own_session(svc, host, call);
	const Perfetto__Protos__TraceConfig *nc = req->trace_config;
	size_t i, k;

	/* As in Perfetto, only the producer filters of existing data sources
	 * may change: producers that now match join the session. */
	if (!s || !nc || nc->n_data_sources != s->config->n_data_sources) {
		ipc_host_reply_error(host, call);
		return;
	}
	for (i = 0; i < nc->n_data_sources; i++) {
		Perfetto__Protos__TraceConfig__DataSource *old = s->config->data_sources[i];
		const Perfetto__Protos__TraceConfig__DataSource *nw = nc->data_sources[i];
		char **names;

		if (!nw->config || !nw->config->name || strcmp(nw->config->name, old->config->name)) {
			ipc_host_reply_error(host, call);
			return;
		}
		names = calloc(nw->n_producer_name_filter + 1, sizeof(*names));
		if (!names) {
			ipc_host_reply_error(host, call);
			return;
		}
		for (k = 0; k < nw->n_producer_name_filter; k++)
			names[k] = strdup(nw->producer_name_filter[k]);
		for (k = 0; k < old->n_producer_name_filter; k++)
			free(old->producer_name_filter[k]);
		free(old->producer_name_filter);
		old->producer_name_filter = names;
		old->n_producer_name_filter = nw->n_producer_name_filter;
	}
	k = s->n_instances;
	svc_instances_create_all(svc, s);
	for (i = k; i < s->n_instances && s->state == SESSION_STARTED; i++)
		svc_instance_start(svc, s, &s->instances[i]);
	svc_reply_empty(host, call, &perfetto__protos__change_trace_config_response__descriptor);
}

static void on_detach(struct ipc_host *host, const struct ipc_call *call,
		      const ProtobufCMessage *args, void *user)
{
	const Perfetto__Protos__DetachRequest *req = (const void *)args;
	struct svc *svc = user;
	struct svc_session *s = own_session(svc, host, call);
	struct svc_session *it;

	if (!s || !req->key || !*req->key || strlen(req->key) >= SVC_MAX_DETACH_KEY) {
		ipc_host_reply_error(host, call);
		return;
	}
	for (it = svc->sessions; it; it = it->next) {
		if (it->detached && it->consumer_uid == s->consumer_uid &&
		    strcmp(it->detach_key, req->key) == 0) {
			ipc_host_reply_error(host, call);
			return;
		}
	}
	snprintf(s->detach_key, sizeof(s->detach_key), "%s", req->key);
	s->detached = true;
	/* Whoever attaches later asks for the end-of-tracing notification again. */
	s->has_enable_call = false;
	s->consumer_client_id = 0;
	LOG_I("session %llu detached with key '%s'", (unsigned long long)s->id, s->detach_key);
	svc_reply_empty(host, call, &perfetto__protos__detach_response__descriptor);
}

static void on_attach(struct ipc_host *host, const struct ipc_call *call,
		      const ProtobufCMessage *args, void *user)
{
	const Perfetto__Protos__AttachRequest *req = (const void *)args;
	Perfetto__Protos__AttachResponse resp;
	struct svc *svc = user;
	struct svc_session *s;
	uid_t uid = caller_uid(host, call->client_id);

	if (!req->key || own_session(svc, host, call)) {
		ipc_host_reply_error(host, call);
		return;
	}
	for (s = svc->sessions; s; s = s->next) {
		if (s->detached && s->consumer_uid == uid && strcmp(s->detach_key, req->key) == 0)
			break;
	}
	if (!s) {
		ipc_host_reply_error(host, call);
		return;
	}
	s->detached = false;
	s->detach_key[0] = '\0';
	s->consumer_host = host;
	s->consumer_client_id = call->client_id;
	perfetto__protos__attach_response__init(&resp);
	resp.trace_config = s->config;
	ipc_host_reply(host, call, &resp.base, false, -1);
}

static void on_get_stats(struct ipc_host *host, const struct ipc_call *call,
			 const ProtobufCMessage *args, void *user)
{
	Perfetto__Protos__GetTraceStatsResponse resp;
	struct svc *svc = user;
	struct svc_session *s = own_session(svc, host, call);
	struct pz_chunks c;
	struct pz_msg m;
	uint8_t *bytes;
	size_t n;

	(void)args;
	if (pz_chunks_init(&c, 4096, 1u << 20) < 0) {
		ipc_host_reply_error(host, call);
		return;
	}
	pz_msg_begin(&m, &c.s, NULL);
	svc_write_trace_stats(svc, s, &m);
	pz_end(&m);
	n = pz_chunks_size(&c);
	bytes = malloc(n ? n : 1);
	if (!bytes || !pz_stream_ok(&c.s)) {
		free(bytes);
		pz_chunks_fini(&c);
		ipc_host_reply_error(host, call);
		return;
	}
	pz_chunks_copy(&c, bytes, n);
	pz_chunks_fini(&c);
	perfetto__protos__get_trace_stats_response__init(&resp);
	resp.trace_stats = perfetto__protos__trace_stats__unpack(NULL, n, bytes);
	free(bytes);
	if (!resp.trace_stats) {
		ipc_host_reply_error(host, call);
		return;
	}
	ipc_host_reply(host, call, &resp.base, false, -1);
	perfetto__protos__trace_stats__free_unpacked(resp.trace_stats, NULL);
}

static void on_observe(struct ipc_host *host, const struct ipc_call *call,
		       const ProtobufCMessage *args, void *user)
{
	const Perfetto__Protos__ObserveEventsRequest *req = (const void *)args;
	struct svc *svc = user;
	struct svc_observer *o;
	size_t i;

	if (svc->n_observers >= PFC_ARRAY_SIZE(svc->observers)) {
		ipc_host_reply_error(host, call);
		return;
	}
	o = &svc->observers[svc->n_observers++];
	memset(o, 0, sizeof(*o));
	o->host = host;
	o->client_id = call->client_id;
	o->call = *call;
	for (i = 0; i < req->n_events_to_observe; i++) {
		if (req->events_to_observe[i] == 1)
			o->instances = true;
		else if (req->events_to_observe[i] == 2)
			o->all_started = true;
		else if (req->events_to_observe[i] == 4)
			o->clone_trigger_hit = true;
	}
}

static void on_capabilities(struct ipc_host *host, const struct ipc_call *call,
			    const ProtobufCMessage *args, void *user)
{
	Perfetto__Protos__QueryCapabilitiesResponse resp;
	Perfetto__Protos__TracingServiceCapabilities caps;
	Perfetto__Protos__ObservableEvents__Type events[] = {
		PERFETTO__PROTOS__OBSERVABLE_EVENTS__TYPE__TYPE_DATA_SOURCES_INSTANCES,
		PERFETTO__PROTOS__OBSERVABLE_EVENTS__TYPE__TYPE_ALL_DATA_SOURCES_STARTED,
		PERFETTO__PROTOS__OBSERVABLE_EVENTS__TYPE__TYPE_CLONE_TRIGGER_HIT,
	};

	(void)args;
	(void)user;
	perfetto__protos__tracing_service_capabilities__init(&caps);
	caps.has_has_query_capabilities = 1;
	caps.has_query_capabilities = 1;
	caps.n_observable_events = PFC_ARRAY_SIZE(events);
	caps.observable_events = events;
	caps.has_has_trace_config_output_path = 1;
	caps.has_trace_config_output_path = 1;
	caps.has_has_clone_session = 1;
	caps.has_clone_session = 1;
	perfetto__protos__query_capabilities_response__init(&resp);
	resp.capabilities = &caps;
	ipc_host_reply(host, call, &resp.base, false, -1);
}

static void on_bugreport(struct ipc_host *host, const struct ipc_call *call,
			 const ProtobufCMessage *args, void *user)
{
	Perfetto__Protos__SaveTraceForBugreportResponse resp;

	(void)args;
	(void)user;
	perfetto__protos__save_trace_for_bugreport_response__init(&resp);
	resp.has_success = 1;
	resp.success = 0;
	resp.msg = "SaveTraceForBugreport is not supported on Linux";
	ipc_host_reply(host, call, &resp.base, false, -1);
}

struct clone_ctx {
	struct ipc_host *host;
	struct ipc_call call;
	uid_t uid;
	bool has_trigger;
	struct svc_trigger_info trigger; /* owned */
	uint64_t t0_ns;
};

static void clone_ctx_free(struct clone_ctx *c)
{
	svc_trigger_info_fini(&c->trigger);
	free(c);
}

static void clone_reply(struct clone_ctx *c, struct svc_session *clone, const char *error)
{
	Perfetto__Protos__CloneSessionResponse resp;

	perfetto__protos__clone_session_response__init(&resp);
	resp.has_success = 1;
	resp.success = clone != NULL;
	resp.error = (char *)error;
	if (clone) {
		resp.has_uuid_msb = 1;
		resp.uuid_msb = (int64_t)clone->uuid_msb;
		resp.has_uuid_lsb = 1;
		resp.uuid_lsb = (int64_t)clone->uuid_lsb;
	}
	ipc_host_reply(c->host, &c->call, &resp.base, false, -1);
}

static void on_clone_flushed(struct svc *svc, uint64_t session_id, bool ok, void *user)
{
	struct clone_ctx *c = user;
	struct svc_session *src = svc_session_by_id(svc, session_id), *clone = NULL;
	uint64_t flushed_ns = clock_monotonic_ns();

	(void)ok;
	if (!src)
		clone_reply(c, NULL, "the session ended before it could be cloned");
	else if (svc_session_by_consumer(svc, c->host, c->call.client_id))
		clone_reply(c, NULL, "this consumer already has a tracing session");
	else if (svc_session_clone(svc, src, c->host, c->call.client_id, c->uid,
				   c->has_trigger ? &c->trigger : NULL, &clone) < 0)
		clone_reply(c, NULL, "out of memory while cloning");
	else
		clone_reply(c, clone, NULL);
	if (clone)
		LOG_I("session %llu cloned: flush %.1f ms, copy %.1f ms", (unsigned long long)src->id,
		      (flushed_ns - c->t0_ns) / 1e6, (clock_monotonic_ns() - flushed_ns) / 1e6);
	clone_ctx_free(c);
}

static void on_clone(struct ipc_host *host, const struct ipc_call *call,
		     const ProtobufCMessage *args, void *user)
{
	const Perfetto__Protos__CloneSessionRequest *req = (const void *)args;
	struct svc *svc = user;
	struct svc_session *s;
	struct clone_ctx *c;
	uid_t uid = caller_uid(host, call->client_id);

	for (s = svc->sessions; s; s = s->next) {
		if (s->is_clone)
			continue;
		if (req->selector_case == PERFETTO__PROTOS__CLONE_SESSION_REQUEST__SELECTOR_SESSION_ID &&
		    s->id == req->session_id)
			break;
		if (req->selector_case ==
			    PERFETTO__PROTOS__CLONE_SESSION_REQUEST__SELECTOR_UNIQUE_SESSION_NAME &&
		    s->unique_name && req->unique_session_name &&
		    strcmp(s->unique_name, req->unique_session_name) == 0)
			break;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		ipc_host_reply_error(host, call);
		return;
	}
	c->host = host;
	c->call = *call;
	c->uid = uid;
	c->t0_ns = clock_monotonic_ns();
	if (req->clone_trigger_name && *req->clone_trigger_name) {
		c->has_trigger = true;
		c->trigger.name = strdup(req->clone_trigger_name);
		c->trigger.producer_name =
			strdup(req->clone_trigger_producer_name ? req->clone_trigger_producer_name : "");
		c->trigger.producer_uid = (uint32_t)req->clone_trigger_trusted_producer_uid;
		c->trigger.boot_time_ns = req->clone_trigger_boot_time_ns;
		c->trigger.delay_ms = req->clone_trigger_delay_ms;
		if (!c->trigger.name || !c->trigger.producer_name) {
			clone_ctx_free(c);
			ipc_host_reply_error(host, call);
			return;
		}
	}
	if (!s) {
		clone_reply(c, NULL, "no such tracing session");
		clone_ctx_free(c);
		return;
	}
	if (uid != 0 && uid != s->consumer_uid) {
		clone_reply(c, NULL, "not allowed to clone another user's session");
		clone_ctx_free(c);
		return;
	}
	/* Flush first (reason: clone) so the snapshot has everything written. */
	if (s->state != SESSION_STARTED ||
	    svc_flush_start(svc, s, 5000, 3u | (1u << 4), on_clone_flushed, c) < 0)
		on_clone_flushed(svc, s->id, true, c);
}

static void on_connect(struct ipc_host *host, uint64_t client_id, void *user)
{
	(void)host;
	(void)client_id;
	(void)user;
}

static void on_disconnect(struct ipc_host *host, uint64_t client_id, void *user)
{
	struct svc *svc = user;
	struct svc_session *s = svc_session_by_consumer(svc, host, client_id);
	size_t i;

	for (i = 0; i < svc->n_observers;) {
		if (svc->observers[i].host == host && svc->observers[i].client_id == client_id)
			svc->observers[i] = svc->observers[--svc->n_observers];
		else
			i++;
	}
	if (s) {
		LOG_I("consumer of session %llu went away, freeing it", (unsigned long long)s->id);
		s->has_enable_call = false;
		svc_session_free(svc, s);
	}
}

/* In ConsumerPort declaration order. */
static const ipc_method_cb k_handlers[] = {
	on_enable, on_disable,     on_read,     on_free,        on_flush,
	on_start,  on_change_config, on_detach, on_attach,      on_get_stats,
	on_observe, svc_query_service_state,      on_capabilities, on_bugreport, on_clone,
};

int svc_consumer_port_expose(struct svc *svc, struct ipc_host *host)
{
	struct ipc_service_def def = {
		.desc = &perfetto__protos__consumer_port__descriptor,
		.handlers = k_handlers,
		.n_handlers = PFC_ARRAY_SIZE(k_handlers),
		.on_connect = on_connect,
		.on_disconnect = on_disconnect,
		.user = svc,
	};

	return ipc_host_expose(host, &def, NULL);
}

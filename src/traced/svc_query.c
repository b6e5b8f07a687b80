// SPDX-License-Identifier: Apache-2.0
/*
 * svc_query.c - ConsumerPort.QueryServiceState: the producers, their data
 * sources and the sessions the caller may see, in Perfetto's order
 * (producers and sessions by id, data sources by name) so `perfetto
 * --query` lists them as upstream does. Machine id and name are set only
 * for producers on another machine. Data sources go in batches: every
 * reply but the last has has_more, each under the frame limit.
 */
#include "traced/svc_int.h"

#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "base/version.h"
#include "ipc/consumer_port.pb-c.h"

/* Data sources per QueryServiceState reply, to stay under the frame limit. */
#define SVC_QUERY_DS_PER_REPLY 32

struct ds_ref {
	const struct svc_producer *p;
	const struct svc_data_source *ds;
	size_t order; /* registration order within its producer */
};

static const char *session_state_name(const struct svc_session *s)
{
	if (s->is_clone)
		return "CLONED_READ_ONLY";
	switch (s->state) {
	case SESSION_CONFIGURED:
		return "CONFIGURED";
	case SESSION_STARTED:
		return "STARTED";
	case SESSION_STOPPING:
		return "STOP_WAIT";
	case SESSION_STOPPED:
		return "DISABLED";
	}
	return "UNKNOWN";
}

static int cmp_producer(const void *a, const void *b)
{
	const struct svc_producer *x = *(const struct svc_producer *const *)a;
	const struct svc_producer *y = *(const struct svc_producer *const *)b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_session(const void *a, const void *b)
{
	const struct svc_session *x = *(const struct svc_session *const *)a;
	const struct svc_session *y = *(const struct svc_session *const *)b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* By name, then producer id, then registration order (a stable multimap). */
static int cmp_ds(const void *a, const void *b)
{
	const struct ds_ref *x = a, *y = b;
	int c = strcmp(x->ds->name, y->ds->name);

	if (c)
		return c;
	if (x->p->id != y->p->id)
		return x->p->id < y->p->id ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The producers, sorted by id; NULL if out of memory. */
static struct svc_producer **sorted_producers(struct svc *svc)
{
	struct svc_producer **v = calloc(svc->n_producers + 1, sizeof(*v)), *p;
	size_t n = 0;

	if (!v)
		return NULL;
	for (p = svc->producers; p && n < svc->n_producers; p = p->next)
		v[n++] = p;
	sort_n(v, n, sizeof(*v), cmp_producer);
	return v;
}

/* Every data source of every producer, sorted; *out_n set. */
static struct ds_ref *sorted_data_sources(struct svc *svc, size_t *out_n)
{
	const struct svc_producer *p;
	const struct svc_data_source *ds;
	struct ds_ref *v;
	size_t n = 0, total = 0, k;

	for (p = svc->producers; p; p = p->next)
		total += p->n_data_sources;
	v = calloc(total + 1, sizeof(*v));
	if (!v)
		return NULL;
	for (p = svc->producers; p; p = p->next) {
		/* The list is newest first: count down for registration order. */
		k = p->n_data_sources;
		for (ds = p->data_sources; ds && n < total; ds = ds->next) {
			v[n].p = p;
			v[n].ds = ds;
			v[n].order = k--;
			n++;
		}
	}
	sort_n(v, n, sizeof(*v), cmp_ds);
	*out_n = n;
	return v;
}

/* Sessions @uid may see (all for root), sorted by id; *out_n set. */
static struct svc_session **visible_sessions(struct svc *svc, uid_t uid, size_t *out_n)
{
	struct svc_session **v = calloc(svc->n_sessions + 1, sizeof(*v)), *s;
	size_t n = 0;

	if (!v)
		return NULL;
	for (s = svc->sessions; s && n < svc->n_sessions; s = s->next) {
		if (uid == 0 || s->consumer_uid == uid)
			v[n++] = s;
	}
	sort_n(v, n, sizeof(*v), cmp_session);
	*out_n = n;
	return v;
}

static uid_t caller_uid(struct ipc_host *host, uint64_t client_id)
{
	struct ipc_client_info info;

	return ipc_host_client_info(host, client_id, &info) == 0 ? info.uid : (uid_t)-1;
}

static void fill_producer(Perfetto__Protos__TracingServiceState__Producer *out,
			  const struct svc_producer *p)
{
	perfetto__protos__tracing_service_state__producer__init(out);
	out->has_id = 1;
	out->id = (int32_t)p->id;
	out->name = p->name;
	out->has_uid = 1;
	out->uid = (int32_t)p->uid;
	out->has_pid = 1;
	out->pid = p->pid;
	out->sdk_version = p->sdk_version;
	out->has_frozen = 1;
	if (p->machine_id != IPC_DEFAULT_MACHINE_ID) {
		out->has_machine_id = 1;
		out->machine_id = p->machine_id;
		if (p->machine_name && *p->machine_name)
			out->machine_name = p->machine_name;
	}
}

static int fill_session(Perfetto__Protos__TracingServiceState__TracingSession *t,
			const struct svc_session *s)
{
	size_t i;

	perfetto__protos__tracing_service_state__tracing_session__init(t);
	t->has_id = 1;
	t->id = s->id;
	t->has_consumer_uid = 1;
	t->consumer_uid = (int32_t)s->consumer_uid;
	t->state = (char *)session_state_name(s);
	t->unique_session_name = s->unique_name;
	t->has_duration_ms = 1;
	t->duration_ms = s->config->duration_ms;
	t->has_num_data_sources = 1;
	t->num_data_sources = (uint32_t)s->n_instances;
	t->has_start_realtime_ns = s->start_realtime_ns != 0;
	t->start_realtime_ns = (int64_t)s->start_realtime_ns;
	t->has_is_started = 1;
	t->is_started = s->state == SESSION_STARTED && !s->is_clone;
	t->buffer_size_kb = calloc(s->config->n_buffers + 1, sizeof(*t->buffer_size_kb));
	if (!t->buffer_size_kb)
		return -1;
	for (i = 0; i < s->config->n_buffers; i++)
		t->buffer_size_kb[i] = s->config->buffers[i]->size_kb;
	t->n_buffer_size_kb = s->config->n_buffers;
	return 0;
}

void svc_query_service_state(struct ipc_host *host, const struct ipc_call *call,
			     const ProtobufCMessage *args, void *user)
{
	const Perfetto__Protos__QueryServiceStateRequest *req = (const void *)args;
	bool sessions_only = req->has_sessions_only && req->sessions_only;
	Perfetto__Protos__QueryServiceStateResponse resp;
	Perfetto__Protos__TracingServiceState st;
	Perfetto__Protos__TracingServiceState__Producer *prods = NULL, **pprods = NULL;
	Perfetto__Protos__TracingServiceState__TracingSession *sess = NULL, **psess = NULL;
	Perfetto__Protos__TracingServiceState__DataSource dss[SVC_QUERY_DS_PER_REPLY];
	Perfetto__Protos__TracingServiceState__DataSource *pdss[SVC_QUERY_DS_PER_REPLY];
	Perfetto__Protos__DataSourceDescriptor *descs[SVC_QUERY_DS_PER_REPLY];
	struct svc *svc = user;
	struct svc_producer **producers = NULL;
	struct svc_session **sessions = NULL;
	struct ds_ref *refs = NULL;
	size_t i, n_sessions = 0, n_refs = 0, n_started = 0, k = 0;
	struct svc_session *s;

	perfetto__protos__tracing_service_state__init(&st);
	producers = sorted_producers(svc);
	refs = sorted_data_sources(svc, &n_refs);
	sessions = visible_sessions(svc, caller_uid(host, call->client_id), &n_sessions);
	prods = calloc(svc->n_producers + 1, sizeof(*prods));
	pprods = calloc(svc->n_producers + 1, sizeof(*pprods));
	sess = calloc(n_sessions + 1, sizeof(*sess));
	psess = calloc(n_sessions + 1, sizeof(*psess));
	if (!producers || !refs || !sessions || !prods || !pprods || !sess || !psess)
		goto fail;
	for (i = 0; i < svc->n_producers && !sessions_only; i++) {
		fill_producer(&prods[i], producers[i]);
		pprods[i] = &prods[i];
		st.n_producers = i + 1;
	}
	st.producers = pprods;
	for (i = 0; i < n_sessions; i++) {
		if (fill_session(&sess[i], sessions[i]) < 0)
			goto fail;
		psess[i] = &sess[i];
		st.n_tracing_sessions = i + 1;
	}
	st.tracing_sessions = psess;
	for (s = svc->sessions; s; s = s->next)
		n_started += s->state == SESSION_STARTED && !s->is_clone;
	st.has_num_sessions = 1;
	st.num_sessions = (int32_t)svc->n_sessions;
	st.has_num_sessions_started = 1;
	st.num_sessions_started = (int32_t)n_started;
	st.tracing_service_version = PFC_VERSION_STRING;
	st.has_supports_tracing_sessions = 1;
	st.supports_tracing_sessions = 1;
	perfetto__protos__query_service_state_response__init(&resp);
	resp.service_state = &st;

	for (i = 0; i < n_refs && !sessions_only; i++) {
		perfetto__protos__tracing_service_state__data_source__init(&dss[k]);
		descs[k] = perfetto__protos__data_source_descriptor__unpack(
			NULL, refs[i].ds->descriptor_len, refs[i].ds->descriptor);
		dss[k].ds_descriptor = descs[k];
		dss[k].has_producer_id = 1;
		dss[k].producer_id = (int32_t)refs[i].p->id;
		pdss[k] = &dss[k];
		if (++k == SVC_QUERY_DS_PER_REPLY && i + 1 < n_refs) {
			st.n_data_sources = k;
			st.data_sources = pdss;
			ipc_host_reply(host, call, &resp.base, true, -1);
			while (k)
				perfetto__protos__data_source_descriptor__free_unpacked(descs[--k], NULL);
			/* Later replies carry only data sources. */
			st.n_producers = 0;
			st.n_tracing_sessions = 0;
		}
	}
	st.n_data_sources = k;
	st.data_sources = pdss;
	ipc_host_reply(host, call, &resp.base, false, -1);
	while (k)
		perfetto__protos__data_source_descriptor__free_unpacked(descs[--k], NULL);
	goto out;
fail:
	ipc_host_reply_error(host, call);
out:
	for (i = 0; sess && i < n_sessions; i++)
		free(sess[i].buffer_size_kb);
	free(producers);
	free(refs);
	free(sessions);
	free(prods);
	free(pprods);
	free(sess);
	free(psess);
}

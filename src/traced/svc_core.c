// SPDX-License-Identifier: Apache-2.0
/*
 * svc_core.c - the service object: it listens on the producer and consumer
 * sockets, keeps the registries of producers and sessions, and provides the
 * lookups and small helpers the ports and the session code share.
 */
#include "traced/svc_int.h"

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/evloop.h"
#include "base/log.h"
#include "ipc/consumer_port.pb-c.h"
#include "ipc/producer_port.pb-c.h"
#include "traced/svc_packets.h"

struct svc_producer *svc_producer_by_id(struct svc *svc, uint32_t id)
{
	struct svc_producer *p;

	for (p = svc->producers; p; p = p->next) {
		if (p->id == id)
			return p;
	}
	return NULL;
}

struct svc_producer *svc_producer_by_client(struct svc *svc, struct ipc_host *host,
					    uint64_t client_id)
{
	struct svc_producer *p;

	for (p = svc->producers; p; p = p->next) {
		if (p->host == host && p->client_id == client_id)
			return p;
	}
	return NULL;
}

struct svc_session *svc_session_by_id(struct svc *svc, uint64_t id)
{
	struct svc_session *s;

	for (s = svc->sessions; s; s = s->next) {
		if (s->id == id)
			return s;
	}
	return NULL;
}

struct svc_session *svc_session_by_consumer(struct svc *svc, struct ipc_host *host,
					    uint64_t client_id)
{
	struct svc_session *s;

	for (s = svc->sessions; s; s = s->next) {
		if (!s->detached && s->consumer_host == host && s->consumer_client_id == client_id)
			return s;
	}
	return NULL;
}

struct svc_buffer *svc_buffer_by_global_id(struct svc *svc, uint32_t global_id,
					   struct svc_session **out_session)
{
	struct svc_session *s;
	uint64_t sid;
	size_t i;

	if (!hmap_get(&svc->buffers_by_id, global_id, &sid))
		return NULL;
	s = svc_session_by_id(svc, sid);
	if (!s)
		return NULL;
	for (i = 0; i < s->n_buffers; i++) {
		if (s->buffers[i].global_id == global_id) {
			if (out_session)
				*out_session = s;
			return &s->buffers[i];
		}
	}
	return NULL;
}

void svc_reply_empty(struct ipc_host *host, const struct ipc_call *call,
		     const ProtobufCMessageDescriptor *desc)
{
	ProtobufCMessage *m = calloc(1, desc->sizeof_message);

	if (!m) {
		ipc_host_reply_error(host, call);
		return;
	}
	desc->message_init(m);
	ipc_host_reply(host, call, m, false, -1);
	free(m);
}

int svc_send_async(struct svc *svc, struct svc_producer *p, const ProtobufCMessage *cmd, int fd)
{
	(void)svc;
	if (!p->has_async_stream)
		return -ENOTCONN;
	return ipc_host_reply(p->host, &p->async_call, cmd, true, fd);
}

uint32_t svc_sequence_id(struct svc *svc, uint32_t machine_id, uint32_t producer_id,
			 uint16_t writer_id)
{
	/* Producer ids are < 2^24 (SVC_MAX_PRODUCERS is far below), writer ids 16 bits. */
	uint64_t key = ((uint64_t)machine_id << 40) | ((uint64_t)(producer_id & 0xffffff) << 16) |
		       writer_id;
	uint64_t v;

	if (hmap_get(&svc->sequence_ids, key, &v))
		return (uint32_t)v;
	v = svc->next_sequence_id++;
	if (hmap_put(&svc->sequence_ids, key, v) < 0)
		return 0;
	return (uint32_t)v;
}

static void free_data_sources(struct svc_data_source *ds)
{
	while (ds) {
		struct svc_data_source *next = ds->next;

		free(ds->name);
		free(ds->descriptor);
		free(ds);
		ds = next;
	}
}

void svc_producer_destroy(struct svc *svc, struct svc_producer *p)
{
	struct svc_producer **pp;

	for (pp = &svc->producers; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			svc->n_producers--;
			break;
		}
	}
	/* Its SMB may hold what it wrote but never committed. */
	svc_scrape_on_producer_gone(svc, p);
	svc_session_on_producer_gone(svc, p->id);
	free_data_sources(p->data_sources);
	shm_destroy(p->smb);
	/* After the unlink above, so its own entries go too. */
	svc_gc_sequence_ids(svc);
	hmap_fini(&p->writer_buffers);
	free(p->name);
	free(p->sdk_version);
	free(p->machine_name);
	free(p);
}

static void notify_observers(struct svc *svc, const Perfetto__Protos__ObservableEvents *ev,
			     bool want_instances)
{
	Perfetto__Protos__ObserveEventsResponse resp;
	size_t i;

	perfetto__protos__observe_events_response__init(&resp);
	resp.events = (Perfetto__Protos__ObservableEvents *)ev;
	for (i = 0; i < svc->n_observers; i++) {
		struct svc_observer *o = &svc->observers[i];

		if (want_instances ? o->instances : o->all_started)
			ipc_host_reply(o->host, &o->call, &resp.base, true, -1);
	}
}

void svc_notify_observers_instance(struct svc *svc, const char *producer_name,
				   const char *ds_name, int state)
{
	Perfetto__Protos__ObservableEvents ev;
	Perfetto__Protos__ObservableEvents__DataSourceInstanceStateChange ch, *chp = &ch;

	if (!svc->n_observers)
		return;
	perfetto__protos__observable_events__init(&ev);
	perfetto__protos__observable_events__data_source_instance_state_change__init(&ch);
	ch.producer_name = (char *)producer_name;
	ch.data_source_name = (char *)ds_name;
	ch.has_state = 1;
	ch.state = state;
	ev.n_instance_state_changes = 1;
	ev.instance_state_changes = &chp;
	notify_observers(svc, &ev, true);
}

void svc_notify_observers_all_started(struct svc *svc)
{
	Perfetto__Protos__ObservableEvents ev;

	if (!svc->n_observers)
		return;
	perfetto__protos__observable_events__init(&ev);
	ev.has_all_data_sources_started = 1;
	ev.all_data_sources_started = 1;
	notify_observers(svc, &ev, false);
}

void svc_notify_clone_trigger(struct svc *svc, const struct svc_session *s,
			      const struct svc_trigger_info *t)
{
	Perfetto__Protos__ObserveEventsResponse resp;
	Perfetto__Protos__ObservableEvents ev;
	Perfetto__Protos__ObservableEvents__CloneTriggerHit hit;
	size_t i;

	perfetto__protos__observable_events__init(&ev);
	perfetto__protos__observable_events__clone_trigger_hit__init(&hit);
	hit.has_tracing_session_id = 1;
	hit.tracing_session_id = (int64_t)s->id;
	hit.trigger_name = t->name;
	hit.producer_name = t->producer_name;
	hit.has_producer_uid = 1;
	hit.producer_uid = t->producer_uid;
	hit.has_boot_time_ns = 1;
	hit.boot_time_ns = t->boot_time_ns;
	hit.has_trigger_delay_ms = 1;
	hit.trigger_delay_ms = t->delay_ms;
	ev.clone_trigger_hit = &hit;
	perfetto__protos__observe_events_response__init(&resp);
	resp.events = &ev;
	/* Only the session's own consumer hears of it, as in Perfetto. */
	for (i = 0; i < svc->n_observers; i++) {
		struct svc_observer *o = &svc->observers[i];

		if (o->clone_trigger_hit && s->consumer_host && o->host == s->consumer_host &&
		    o->client_id == s->consumer_client_id) {
			ipc_host_reply(o->host, &o->call, &resp.base, true, -1);
			return;
		}
	}
	LOG_W("session %llu: trigger '%s' wants a snapshot but its consumer does not observe "
	      "clone triggers, ignoring",
	      (unsigned long long)s->id, t->name);
}

/* Applies --set-socket-permissions to an AF_UNIX path socket. */
static int apply_permissions(const char *path, const char *group, mode_t mode)
{
	struct group *gr;

	if (!path || path[0] != '/')
		return 0;
	if (group && *group) {
		gr = getgrnam(group);
		if (!gr) {
			LOG_E("unknown group '%s' for %s", group, path);
			return -ENOENT;
		}
		if (chown(path, (uid_t)-1, gr->gr_gid) < 0) {
			PLOG_E("chown %s", path);
			return -errno;
		}
	}
	if (chmod(path, mode) < 0) {
		PLOG_E("chmod %s", path);
		return -errno;
	}
	return 0;
}

int svc_create(struct evloop *loop, const struct svc_options *opts, struct svc **out)
{
	struct svc *svc;
	size_t i;
	int rc;

	if (!opts->consumer_sock || opts->n_producer_socks == 0 ||
	    opts->n_producer_socks > SVC_MAX_PRODUCER_SOCKETS)
		return -EINVAL;
	svc = calloc(1, sizeof(*svc));
	if (!svc)
		return -ENOMEM;
	svc->loop = loop;
	svc->opts = *opts;
	svc->next_producer_id = 1;
	svc->next_session_id = 1;
	svc->next_instance_id = 1;
	svc->next_buffer_id = 1;
	svc->next_flush_id = 1;
	svc->next_sequence_id = SVC_PACKET_SEQUENCE_ID + 1;
	hmap_init(&svc->buffers_by_id);
	hmap_init(&svc->sequence_ids);
	buf_init(&svc->scratch);
	snprintf(svc->machine_name, sizeof(svc->machine_name), "%s", svc_machine_name());

	for (i = 0; i < opts->n_producer_socks; i++) {
		const char *name = opts->producer_socks[i];

		rc = ipc_host_create(loop, name, NULL, &svc->producer_hosts[i]);
		if (rc < 0) {
			LOG_E("cannot listen on producer socket %s: %s", name, strerror(-rc));
			goto fail;
		}
		svc->n_producer_hosts++;
		rc = svc_producer_port_expose(svc, svc->producer_hosts[i]);
		if (rc == 0 && (opts->relay_mask & (1u << i)))
			rc = svc_relay_port_expose(svc, svc->producer_hosts[i]);
		if (rc < 0)
			goto fail;
		if (opts->has_permissions &&
		    apply_permissions(name, opts->producer_group, opts->producer_mode) < 0) {
			rc = -EPERM;
			goto fail;
		}
	}
	rc = ipc_host_create(loop, opts->consumer_sock, NULL, &svc->consumer_host);
	if (rc < 0) {
		LOG_E("cannot listen on consumer socket %s: %s", opts->consumer_sock,
		      strerror(-rc));
		goto fail;
	}
	rc = svc_consumer_port_expose(svc, svc->consumer_host);
	if (rc < 0)
		goto fail;
	if (opts->consumer_sock[0] == '/') {
		/* Consumers can read every trace: not world-writable by default. */
		rc = apply_permissions(opts->consumer_sock,
				       opts->has_permissions ? opts->consumer_group : NULL,
				       opts->has_permissions ? opts->consumer_mode : 0660);
		if (rc < 0)
			goto fail;
	}
	if (opts->producer_socks[0][0] == '/' && !opts->has_permissions) {
		/* Anyone may produce data, as with Perfetto's default. */
		for (i = 0; i < opts->n_producer_socks; i++)
			apply_permissions(opts->producer_socks[i], NULL, 0666);
	}
	*out = svc;
	return 0;
fail:
	svc_destroy(svc);
	return rc;
}

void svc_destroy(struct svc *svc)
{
	size_t i;

	if (!svc)
		return;
	while (svc->sessions)
		svc_session_free(svc, svc->sessions);
	while (svc->producers)
		svc_producer_destroy(svc, svc->producers);
	svc_relays_destroy(svc);
	for (i = 0; i < svc->n_producer_hosts; i++)
		ipc_host_destroy(svc->producer_hosts[i]);
	ipc_host_destroy(svc->consumer_host);
	hmap_fini(&svc->buffers_by_id);
	hmap_fini(&svc->sequence_ids);
	buf_fini(&svc->scratch);
	free(svc->trigger_history);
	free(svc);
}

// SPDX-License-Identifier: Apache-2.0
/*
 * svc_producer_port.c - the ProducerPort service: producers connect,
 * register data sources, receive commands on their GetAsyncCommand stream
 * and commit chunks. Every request comes from an untrusted peer: names are
 * bounded, counts limited, and a misbehaving producer loses only its own
 * connection.
 */
#include "traced/svc_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "ipc/producer_port.pb-c.h"

#define SVC_MAX_NAME_BYTES 256

static char *dup_bounded(const char *s)
{
	size_t n;
	char *d;

	if (!s)
		return strdup("");
	n = strnlen(s, SVC_MAX_NAME_BYTES);
	d = malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static struct svc_producer *caller(struct svc *svc, struct ipc_host *host,
				   const struct ipc_call *call)
{
	struct svc_producer *p = svc_producer_by_client(svc, host, call->client_id);

	return p && p->initialized ? p : NULL;
}

/*
 * SDKs that trace from process start allocate the SMB themselves and send
 * it with InitializeConnection. Accept it if it is a sane, sealed memfd
 * with the page size the producer announced; otherwise the producer falls
 * back to an SMB from us at SetupTracing.
 */
static bool adopt_producer_smb(struct svc_producer *p,
			       const Perfetto__Protos__InitializeConnectionRequest *req,
			       struct ipc_host *host, uint64_t client_id)
{
	int fd = ipc_host_take_fd(host, client_id);
	size_t page = p->page_size_hint;

	if (fd < 0)
		return false;
	if (!(req->has_producer_provided_shmem && req->producer_provided_shmem) || p->emulation ||
	    page == 0 || page > SVC_MAX_PAGE_BYTES || page % 4096 || (page & (page - 1))) {
		close(fd);
		return false;
	}
	/* shm_map_fd() owns the fd from here, success or not. */
	if (shm_map_fd(fd, 0, page, SHM_MAP_REQUIRE_SEALS, &p->smb) < 0)
		return false;
	if (smb_init(&p->smb_view, p->smb->base, p->smb->size, page) < 0) {
		shm_destroy(p->smb);
		p->smb = NULL;
		return false;
	}
	p->page_size = page;
	p->smb_provided_by_producer = true;
	LOG_I("producer %u brought its own %zu-byte SMB", p->id, p->smb->size);
	return true;
}

static void on_initialize(struct ipc_host *host, const struct ipc_call *call,
			  const ProtobufCMessage *args, void *user)
{
	const Perfetto__Protos__InitializeConnectionRequest *req = (const void *)args;
	Perfetto__Protos__InitializeConnectionResponse resp;
	struct svc *svc = user;
	struct ipc_client_info info;
	struct svc_producer *p;

	if (svc_producer_by_client(svc, host, call->client_id) ||
	    svc->n_producers >= SVC_MAX_PRODUCERS ||
	    ipc_host_client_info(host, call->client_id, &info) < 0) {
		ipc_host_reply_error(host, call);
		return;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		ipc_host_reply_error(host, call);
		return;
	}
	p->id = svc->next_producer_id++;
	if (svc->next_producer_id >= (1u << 24))
		svc->next_producer_id = 1;
	p->host = host;
	p->client_id = call->client_id;
	p->name = dup_bounded(req->producer_name);
	p->sdk_version = dup_bounded(req->sdk_version);
	p->machine_name = dup_bounded(info.machine_name);
	p->uid = info.uid;
	p->pid = info.pid;
	p->machine_id = info.machine_id;
	p->emulation = ipc_host_use_shmem_emulation(host) || !info.supports_fds;
	p->smb_size_hint = req->has_shared_memory_size_hint_bytes ? req->shared_memory_size_hint_bytes : 0;
	p->page_size_hint =
		req->has_shared_memory_page_size_hint_bytes ? req->shared_memory_page_size_hint_bytes : 0;
	p->initialized = true;
	/* Perfetto's service default is off; its SDK asks for it. */
	p->smb_scraping = req->has_smb_scraping_mode &&
			  req->smb_scraping_mode ==
				  PERFETTO__PROTOS__INITIALIZE_CONNECTION_REQUEST__PRODUCER_SMBSCRAPING_MODE__SMB_SCRAPING_ENABLED;
	hmap_init(&p->writer_buffers);
	if (!p->name || !p->sdk_version || !p->machine_name) {
		free(p->name);
		free(p->sdk_version);
		free(p->machine_name);
		free(p);
		ipc_host_reply_error(host, call);
		return;
	}
	p->next = svc->producers;
	svc->producers = p;
	svc->n_producers++;
	svc->producers_seen++;
	LOG_I("producer %u connected: '%s' pid %d uid %u machine %u%s", p->id, p->name,
	      (int)p->pid, (unsigned)p->uid, p->machine_id, p->emulation ? " (shmem emulation)" : "");

	perfetto__protos__initialize_connection_response__init(&resp);
	resp.has_using_shmem_provided_by_producer = 1;
	resp.using_shmem_provided_by_producer = adopt_producer_smb(p, req, host, call->client_id);
	resp.has_direct_smb_patching_supported = 1;
	resp.direct_smb_patching_supported = 0;
	resp.has_use_shmem_emulation = 1;
	resp.use_shmem_emulation = p->emulation;
	ipc_host_reply(host, call, &resp.base, false, -1);
}

static struct svc_data_source *find_ds(struct svc_producer *p, const char *name)
{
	struct svc_data_source *ds;

	for (ds = p->data_sources; ds; ds = ds->next) {
		if (strcmp(ds->name, name) == 0)
			return ds;
	}
	return NULL;
}

static int fill_ds(struct svc_data_source *ds, const Perfetto__Protos__DataSourceDescriptor *d)
{
	size_t n = perfetto__protos__data_source_descriptor__get_packed_size(d);
	uint8_t *bytes = malloc(n ? n : 1);

	if (!bytes)
		return -ENOMEM;
	perfetto__protos__data_source_descriptor__pack(d, bytes);
	free(ds->descriptor);
	ds->descriptor = bytes;
	ds->descriptor_len = n;
	ds->id = d->has_id ? d->id : 0;
	ds->will_notify_on_start = d->has_will_notify_on_start && d->will_notify_on_start;
	ds->will_notify_on_stop = d->has_will_notify_on_stop && d->will_notify_on_stop;
	ds->handles_incremental_state_clear =
		d->has_handles_incremental_state_clear && d->handles_incremental_state_clear;
	return 0;
}

static void on_register_ds(struct ipc_host *host, const struct ipc_call *call,
			   const ProtobufCMessage *args, void *user)
{
	const Perfetto__Protos__RegisterDataSourceRequest *req = (const void *)args;
	Perfetto__Protos__RegisterDataSourceResponse resp;
	struct svc *svc = user;
	struct svc_producer *p = caller(svc, host, call);
	const Perfetto__Protos__DataSourceDescriptor *d = req->data_source_descriptor;
	struct svc_data_source *ds;
	const char *error = NULL;

	perfetto__protos__register_data_source_response__init(&resp);
	if (!p) {
		ipc_host_reply_error(host, call);
		return;
	}
	if (!d || !d->name || !*d->name || strlen(d->name) > SVC_MAX_NAME_BYTES)
		error = "data source descriptor has no valid name";
	else if (find_ds(p, d->name))
		error = "data source already registered by this producer";
	else if (p->n_data_sources >= SVC_MAX_DATA_SOURCES_PER_PRODUCER)
		error = "too many data sources for one producer";
	if (error) {
		resp.error = (char *)error;
		ipc_host_reply(host, call, &resp.base, false, -1);
		return;
	}
	ds = calloc(1, sizeof(*ds));
	if (!ds || !(ds->name = strdup(d->name)) || fill_ds(ds, d) < 0) {
		if (ds)
			free(ds->name);
		free(ds);
		ipc_host_reply_error(host, call);
		return;
	}
	ds->next = p->data_sources;
	p->data_sources = ds;
	p->n_data_sources++;
	svc->data_sources_seen++;
	LOG_I("producer %u ('%s') registered data source '%s'", p->id, p->name, ds->name);
	ipc_host_reply(host, call, &resp.base, false, -1);
	svc_session_on_ds_registered(svc, p, ds);
}

static void on_unregister_ds(struct ipc_host *host, const struct ipc_call *call,
			     const ProtobufCMessage *args, void *user)
{
	const Perfetto__Protos__UnregisterDataSourceRequest *req = (const void *)args;
	struct svc *svc = user;
	struct svc_producer *p = caller(svc, host, call);
	struct svc_data_source **pp;

	if (!p) {
		ipc_host_reply_error(host, call);
		return;
	}
	for (pp = &p->data_sources; req->data_source_name && *pp; pp = &(*pp)->next) {
		if (strcmp((*pp)->name, req->data_source_name) == 0) {
			struct svc_data_source *ds = *pp;

			*pp = ds->next;
			p->n_data_sources--;
			free(ds->name);
			free(ds->descriptor);
			free(ds);
			break;
		}
	}
	svc_reply_empty(host, call, &perfetto__protos__unregister_data_source_response__descriptor);
}

static void on_update_ds(struct ipc_host *host, const struct ipc_call *call,
			 const ProtobufCMessage *args, void *user)
{
	const Perfetto__Protos__UpdateDataSourceRequest *req = (const void *)args;
	const Perfetto__Protos__DataSourceDescriptor *d = req->data_source_descriptor;
	struct svc *svc = user;
	struct svc_producer *p = caller(svc, host, call);
	struct svc_data_source *ds;

	if (!p || !d) {
		ipc_host_reply_error(host, call);
		return;
	}
	for (ds = p->data_sources; ds; ds = ds->next) {
		if ((d->has_id && d->id && ds->id == d->id) || (d->name && !strcmp(ds->name, d->name)))
			break;
	}
	if (ds)
		fill_ds(ds, d);
	svc_reply_empty(host, call, &perfetto__protos__update_data_source_response__descriptor);
}

static void on_commit(struct ipc_host *host, const struct ipc_call *call,
		      const ProtobufCMessage *args, void *user)
{
	struct svc *svc = user;
	struct svc_producer *p = caller(svc, host, call);

	if (!p) {
		ipc_host_reply_error(host, call);
		return;
	}
	svc_commit_data(svc, p, (const Perfetto__Protos__CommitDataRequest *)args);
	svc_reply_empty(host, call, &perfetto__protos__commit_data_response__descriptor);
}

static void on_get_async(struct ipc_host *host, const struct ipc_call *call,
			 const ProtobufCMessage *args, void *user)
{
	struct svc *svc = user;
	struct svc_producer *p = caller(svc, host, call);

	(void)args;
	if (!p || p->has_async_stream) {
		ipc_host_reply_error(host, call);
		return;
	}
	p->async_call = *call;
	p->has_async_stream = true;
}

static void on_register_writer(struct ipc_host *host, const struct ipc_call *call,
			       const ProtobufCMessage *args, void *user)
{
	const Perfetto__Protos__RegisterTraceWriterRequest *req = (const void *)args;
	struct svc *svc = user;
	struct svc_producer *p = caller(svc, host, call);

	if (!p) {
		ipc_host_reply_error(host, call);
		return;
	}
	if (req->trace_writer_id && req->trace_writer_id <= 0xffff &&
	    hmap_len(&p->writer_buffers) < SVC_MAX_TRACE_WRITERS_PER_PRODUCER)
		hmap_put(&p->writer_buffers, req->trace_writer_id, req->target_buffer);
	svc_reply_empty(host, call, &perfetto__protos__register_trace_writer_response__descriptor);
}

static void on_unregister_writer(struct ipc_host *host, const struct ipc_call *call,
				 const ProtobufCMessage *args, void *user)
{
	const Perfetto__Protos__UnregisterTraceWriterRequest *req = (const void *)args;
	struct svc *svc = user;
	struct svc_producer *p = caller(svc, host, call);

	if (!p) {
		ipc_host_reply_error(host, call);
		return;
	}
	hmap_del(&p->writer_buffers, req->trace_writer_id, NULL);
	svc_reply_empty(host, call, &perfetto__protos__unregister_trace_writer_response__descriptor);
}

static void on_ds_started(struct ipc_host *host, const struct ipc_call *call,
			  const ProtobufCMessage *args, void *user)
{
	const Perfetto__Protos__NotifyDataSourceStartedRequest *req = (const void *)args;
	struct svc *svc = user;
	struct svc_producer *p = caller(svc, host, call);

	if (!p) {
		ipc_host_reply_error(host, call);
		return;
	}
	svc_reply_empty(host, call, &perfetto__protos__notify_data_source_started_response__descriptor);
	svc_session_on_ds_started(svc, p->id, req->data_source_id);
}

static void on_ds_stopped(struct ipc_host *host, const struct ipc_call *call,
			  const ProtobufCMessage *args, void *user)
{
	const Perfetto__Protos__NotifyDataSourceStoppedRequest *req = (const void *)args;
	struct svc *svc = user;
	struct svc_producer *p = caller(svc, host, call);

	if (!p) {
		ipc_host_reply_error(host, call);
		return;
	}
	svc_reply_empty(host, call, &perfetto__protos__notify_data_source_stopped_response__descriptor);
	svc_session_on_ds_stopped(svc, p->id, req->data_source_id);
}

static void on_triggers(struct ipc_host *host, const struct ipc_call *call,
			const ProtobufCMessage *args, void *user)
{
	const Perfetto__Protos__ActivateTriggersRequest *req = (const void *)args;
	struct svc *svc = user;
	struct svc_producer *p = caller(svc, host, call);

	if (!p) {
		ipc_host_reply_error(host, call);
		return;
	}
	svc_reply_empty(host, call, &perfetto__protos__activate_triggers_response__descriptor);
	svc_session_on_triggers(svc, p, req->trigger_names, req->n_trigger_names);
}

static void on_sync(struct ipc_host *host, const struct ipc_call *call,
		    const ProtobufCMessage *args, void *user)
{
	(void)args;
	(void)user;
	/* One thread handles requests in order: everything before this is done. */
	svc_reply_empty(host, call, &perfetto__protos__sync_response__descriptor);
}

static void on_disconnect(struct ipc_host *host, uint64_t client_id, void *user)
{
	struct svc *svc = user;
	struct svc_producer *p = svc_producer_by_client(svc, host, client_id);

	if (p) {
		LOG_I("producer %u ('%s') disconnected", p->id, p->name);
		svc_producer_destroy(svc, p);
	}
}

/* In ProducerPort declaration order. */
static const ipc_method_cb k_handlers[] = {
	on_initialize,        on_register_ds,      on_unregister_ds, on_commit,
	on_get_async,         on_register_writer,  on_unregister_writer,
	on_ds_started,        on_ds_stopped,       on_triggers,      on_sync,
	on_update_ds,
};

int svc_producer_port_expose(struct svc *svc, struct ipc_host *host)
{
	struct ipc_service_def def = {
		.desc = &perfetto__protos__producer_port__descriptor,
		.handlers = k_handlers,
		.n_handlers = PFC_ARRAY_SIZE(k_handlers),
		.on_disconnect = on_disconnect,
		.user = svc,
	};

	return ipc_host_expose(host, &def, NULL);
}

// SPDX-License-Identifier: Apache-2.0
/*
 * svc_instances.c - data source instances: which registered data sources a
 * session's config selects (by name, producer name or regex, machine), the
 * shared memory buffer a producer gets on its first session, and the
 * Setup/Start/Stop commands sent down its GetAsyncCommand stream.
 */
#include "traced/svc_int.h"

#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "ipc/producer_port.pb-c.h"

/* Full-string match of a POSIX extended regex, as std::regex_match does. */
bool svc_regex_full_match(const char *pattern, const char *s)
{
	char anchored[512];
	regex_t re;
	bool ok;

	if (snprintf(anchored, sizeof(anchored), "^(%s)$", pattern) >= (int)sizeof(anchored))
		return false;
	if (regcomp(&re, anchored, REG_EXTENDED | REG_NOSUB) != 0)
		return false;
	ok = regexec(&re, s, 0, NULL, 0) == 0;
	regfree(&re);
	return ok;
}

bool svc_producer_matches(const struct svc_session *s,
			  const Perfetto__Protos__TraceConfig__DataSource *cds,
			  const struct svc_producer *p)
{
	size_t i;
	bool ok;

	if (cds->n_producer_name_filter || cds->n_producer_name_regex_filter) {
		ok = false;
		for (i = 0; i < cds->n_producer_name_filter && !ok; i++)
			ok = strcmp(cds->producer_name_filter[i], p->name) == 0;
		for (i = 0; i < cds->n_producer_name_regex_filter && !ok; i++)
			ok = svc_regex_full_match(cds->producer_name_regex_filter[i], p->name);
		if (!ok)
			return false;
	}
	if (cds->n_machine_name_filter) {
		for (i = 0; i < cds->n_machine_name_filter; i++) {
			const char *m = cds->machine_name_filter[i];

			if ((strcmp(m, "host") == 0 && p->machine_id == 0) ||
			    strcmp(m, p->machine_name) == 0)
				return true;
		}
		return false;
	}
	/* Without a filter, other machines take part only with trace_all_machines. */
	return p->machine_id == 0 ||
	       (s->config->has_trace_all_machines && s->config->trace_all_machines);
}

/* Picks the SMB geometry: config override, else the producer's hints, else defaults. */
static void smb_geometry(const struct svc_session *s, const struct svc_producer *p,
			 size_t *out_size, size_t *out_page)
{
	size_t size = p->smb_size_hint, page = p->page_size_hint, i;

	for (i = 0; i < s->config->n_producers; i++) {
		const Perfetto__Protos__TraceConfig__ProducerConfig *pc = s->config->producers[i];

		if (pc->producer_name && strcmp(pc->producer_name, p->name) == 0) {
			if (pc->has_shm_size_kb && pc->shm_size_kb)
				size = (size_t)pc->shm_size_kb * 1024;
			if (pc->has_page_size_kb && pc->page_size_kb)
				page = (size_t)pc->page_size_kb * 1024;
		}
	}
	if (page == 0 || page > SVC_MAX_PAGE_BYTES || page % 4096 || (page & (page - 1)))
		page = SVC_DEFAULT_PAGE_BYTES;
	if (size == 0 || shm_check_size(size, page) < 0)
		size = SVC_DEFAULT_SMB_BYTES;
	if (shm_check_size(size, page) < 0) {
		size = SVC_DEFAULT_SMB_BYTES;
		page = SVC_DEFAULT_PAGE_BYTES;
	}
	*out_size = size;
	*out_page = page;
}

/* Sends SetupTracing the first time a producer takes part in any session. */
static int setup_producer(struct svc *svc, struct svc_session *s, struct svc_producer *p)
{
	Perfetto__Protos__GetAsyncCommandResponse cmd;
	Perfetto__Protos__GetAsyncCommandResponse__SetupTracing st;
	size_t size, page;
	int rc;

	if (p->setup_sent)
		return 0;
	smb_geometry(s, p, &size, &page);
	if (p->smb_provided_by_producer) {
		page = p->page_size;
	} else if (!p->emulation) {
		rc = shm_create(size, page, &p->smb);
		if (rc < 0) {
			LOG_W("cannot create a %zu-byte SMB for producer %u: %s", size, p->id,
			      strerror(-rc));
			return rc;
		}
		rc = smb_init(&p->smb_view, p->smb->base, size, page);
		if (rc < 0) {
			shm_destroy(p->smb);
			p->smb = NULL;
			return rc;
		}
	}
	p->page_size = page;
	perfetto__protos__get_async_command_response__init(&cmd);
	perfetto__protos__get_async_command_response__setup_tracing__init(&st);
	st.has_shared_buffer_page_size_kb = 1;
	st.shared_buffer_page_size_kb = (uint32_t)(page / 1024);
	cmd.cmd_case = PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_SETUP_TRACING;
	cmd.setup_tracing = &st;
	/* The producer already has its own SMB: send no fd then. */
	rc = svc_send_async(svc, p, &cmd.base,
			    p->smb && !p->smb_provided_by_producer ? p->smb->fd : -1);
	if (rc < 0)
		return rc;
	p->setup_sent = true;
	return 0;
}

/* Sends SetupDataSource or StartDataSource with the instance's config. */
static int send_ds_command(struct svc *svc, struct svc_producer *p,
			   const struct svc_ds_instance *inst, bool start)
{
	Perfetto__Protos__GetAsyncCommandResponse cmd;
	Perfetto__Protos__GetAsyncCommandResponse__SetupDataSource setup;
	Perfetto__Protos__GetAsyncCommandResponse__StartDataSource st;
	Perfetto__Protos__DataSourceConfig *cfg;
	int rc;

	cfg = perfetto__protos__data_source_config__unpack(NULL, inst->config_len, inst->config);
	if (!cfg)
		return -ENOMEM;
	perfetto__protos__get_async_command_response__init(&cmd);
	if (start) {
		perfetto__protos__get_async_command_response__start_data_source__init(&st);
		st.has_new_instance_id = 1;
		st.new_instance_id = inst->instance_id;
		st.config = cfg;
		cmd.cmd_case = PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_START_DATA_SOURCE;
		cmd.start_data_source = &st;
	} else {
		perfetto__protos__get_async_command_response__setup_data_source__init(&setup);
		setup.has_new_instance_id = 1;
		setup.new_instance_id = inst->instance_id;
		setup.config = cfg;
		cmd.cmd_case = PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_SETUP_DATA_SOURCE;
		cmd.setup_data_source = &setup;
	}
	rc = svc_send_async(svc, p, &cmd.base, -1);
	perfetto__protos__data_source_config__free_unpacked(cfg, NULL);
	return rc;
}

int svc_instance_start(struct svc *svc, struct svc_session *s, struct svc_ds_instance *inst)
{
	struct svc_producer *p = svc_producer_by_id(svc, inst->producer_id);

	(void)s;
	if (!p || inst->state != DS_CONFIGURED)
		return -ENOENT;
	inst->state = inst->will_notify_on_start ? DS_STARTING : DS_STARTED;
	if (inst->state == DS_STARTED)
		svc_notify_observers_instance(svc, p->name, inst->ds_name, SVC_DS_OBSERVED_STARTED);
	return send_ds_command(svc, p, inst, true);
}

void svc_instance_stop(struct svc *svc, struct svc_ds_instance *inst)
{
	Perfetto__Protos__GetAsyncCommandResponse cmd;
	Perfetto__Protos__GetAsyncCommandResponse__StopDataSource stop;
	struct svc_producer *p = svc_producer_by_id(svc, inst->producer_id);

	if (inst->state == DS_STOPPED || inst->state == DS_STOPPING)
		return;
	if (!p) {
		inst->state = DS_STOPPED;
		return;
	}
	perfetto__protos__get_async_command_response__init(&cmd);
	perfetto__protos__get_async_command_response__stop_data_source__init(&stop);
	stop.has_instance_id = 1;
	stop.instance_id = inst->instance_id;
	cmd.cmd_case = PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_STOP_DATA_SOURCE;
	cmd.stop_data_source = &stop;
	inst->state = inst->will_notify_on_stop ? DS_STOPPING : DS_STOPPED;
	if (svc_send_async(svc, p, &cmd.base, -1) < 0)
		inst->state = DS_STOPPED;
	if (inst->state == DS_STOPPED)
		svc_notify_observers_instance(svc, p->name, inst->ds_name, SVC_DS_OBSERVED_STOPPED);
}

/* The DataSourceConfig a producer receives: the session's, with the
 * buffer index turned into a global buffer id and the session's limits. */
static int instance_config(const struct svc_session *s, const Perfetto__Protos__DataSourceConfig *src,
			   uint32_t buffer_index, uint8_t **out, size_t *out_len)
{
	Perfetto__Protos__DataSourceConfig cfg = *src;
	size_t n;
	uint8_t *bytes;

	cfg.has_target_buffer = 1;
	cfg.target_buffer = s->buffers[buffer_index].global_id;
	cfg.has_tracing_session_id = 1;
	cfg.tracing_session_id = s->id;
	if (s->config->has_duration_ms) {
		cfg.has_trace_duration_ms = 1;
		cfg.trace_duration_ms = s->config->duration_ms;
	}
	cfg.has_stop_timeout_ms = 1;
	cfg.stop_timeout_ms = s->config->has_data_source_stop_timeout_ms &&
					      s->config->data_source_stop_timeout_ms
				      ? s->config->data_source_stop_timeout_ms
				      : SVC_DEFAULT_STOP_TIMEOUT_MS;
	n = perfetto__protos__data_source_config__get_packed_size(&cfg);
	bytes = malloc(n ? n : 1);
	if (!bytes)
		return -ENOMEM;
	perfetto__protos__data_source_config__pack(&cfg, bytes);
	*out = bytes;
	*out_len = n;
	return 0;
}

/* The buffer index a config data source writes to, or -EINVAL. */
int svc_target_buffer_index(const struct svc_session *s,
			    const Perfetto__Protos__DataSourceConfig *c)
{
	size_t i;

	if (c->target_buffer_name && *c->target_buffer_name) {
		for (i = 0; i < s->config->n_buffers; i++) {
			const char *n = s->config->buffers[i]->name;

			if (n && strcmp(n, c->target_buffer_name) == 0)
				return (int)i;
		}
		return -EINVAL;
	}
	if (c->target_buffer >= s->n_buffers)
		return -EINVAL;
	return (int)c->target_buffer;
}

static bool has_instance(const struct svc_session *s, uint32_t producer_id, const char *name)
{
	size_t i;

	for (i = 0; i < s->n_instances; i++) {
		if (s->instances[i].producer_id == producer_id &&
		    strcmp(s->instances[i].ds_name, name) == 0)
			return true;
	}
	return false;
}

/*
 * svc_instance_create() - Make (and set up) an instance of @ds on @p for
 * config entry @cds, sending SetupTracing first if needed.
 */
int svc_instance_create(struct svc *svc, struct svc_session *s, struct svc_producer *p,
			const struct svc_data_source *ds,
			const Perfetto__Protos__TraceConfig__DataSource *cds)
{
	struct svc_ds_instance *inst, *grown;
	int idx, rc;

	if (!p->has_async_stream || has_instance(s, p->id, ds->name))
		return 0;
	if (s->n_instances >= SVC_MAX_DS_INSTANCES_PER_SESSION)
		return -ENOSPC;
	idx = svc_target_buffer_index(s, cds->config);
	if (idx < 0)
		return idx;
	rc = setup_producer(svc, s, p);
	if (rc < 0)
		return rc;
	grown = realloc(s->instances, (s->n_instances + 1) * sizeof(*s->instances));
	if (!grown)
		return -ENOMEM;
	s->instances = grown;
	inst = &s->instances[s->n_instances];
	memset(inst, 0, sizeof(*inst));
	inst->instance_id = svc->next_instance_id++;
	inst->producer_id = p->id;
	inst->ds_name = strdup(ds->name);
	inst->will_notify_on_start = ds->will_notify_on_start;
	inst->will_notify_on_stop = ds->will_notify_on_stop;
	inst->handles_incremental_state_clear = ds->handles_incremental_state_clear;
	inst->state = DS_CONFIGURED;
	if (!inst->ds_name)
		return -ENOMEM;
	rc = instance_config(s, cds->config, (uint32_t)idx, &inst->config, &inst->config_len);
	if (rc < 0) {
		free(inst->ds_name);
		return rc;
	}
	s->n_instances++;
	return send_ds_command(svc, p, inst, false);
}

/* Creates instances for every (config data source, registered producer) match. */
int svc_instances_create_all(struct svc *svc, struct svc_session *s)
{
	struct svc_producer *p;
	struct svc_data_source *ds;
	size_t i;
	int rc;

	for (i = 0; i < s->config->n_data_sources; i++) {
		const Perfetto__Protos__TraceConfig__DataSource *cds = s->config->data_sources[i];

		if (!cds->config || !cds->config->name)
			continue;
		for (p = svc->producers; p; p = p->next) {
			if (!svc_producer_matches(s, cds, p))
				continue;
			for (ds = p->data_sources; ds; ds = ds->next) {
				if (strcmp(ds->name, cds->config->name) != 0)
					continue;
				rc = svc_instance_create(svc, s, p, ds, cds);
				if (rc < 0)
					LOG_W("session %llu: cannot set up '%s' on producer %u: %s",
					      (unsigned long long)s->id, ds->name, p->id, strerror(-rc));
			}
		}
	}
	return 0;
}

void svc_instance_free(struct svc_ds_instance *inst)
{
	free(inst->ds_name);
	free(inst->config);
}

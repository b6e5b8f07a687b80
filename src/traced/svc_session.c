// SPDX-License-Identifier: Apache-2.0
/*
 * svc_session.c - a tracing session's life: EnableTracing checks the
 * config and sets up buffers and data source instances; start; the timers
 * (duration, periodic flush, snapshots, file writes); the stop sequence
 * (final flush, StopDataSource, wait for acks, tell the consumer); free.
 */
#include "traced/svc_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/evloop.h"
#include "base/file.h"
#include "base/log.h"
#include "pb_fields.h"

/* FlushFlags: reason in bits 0-3, initiator in bits 4-7. */
#define FLUSH_REASON_PERIODIC 1u
#define FLUSH_REASON_TRACE_STOP 2u
#define FLUSH_INITIATOR_TRACED (1u << 4)

static void cancel_timer(struct svc *svc, uint64_t *id)
{
	if (*id) {
		evloop_del(svc->loop, *id);
		*id = 0;
	}
}

static void cancel_all_timers(struct svc *svc, struct svc_session *s)
{
	cancel_timer(svc, &s->duration_timer);
	cancel_timer(svc, &s->flush_timer);
	cancel_timer(svc, &s->clear_timer);
	cancel_timer(svc, &s->snapshot_timer);
	cancel_timer(svc, &s->file_timer);
	cancel_timer(svc, &s->trigger_timer);
	cancel_timer(svc, &s->stop_timer);
	cancel_timer(svc, &s->start_timer);
	cancel_timer(svc, &s->read_timer);
}

struct svc_timer_ctx *svc_session_timer_ctx(struct svc *svc, struct svc_session *s)
{
	struct svc_timer_ctx *t = s->timer_ctx;

	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t)
			return NULL;
		t->svc = svc;
		t->session_id = s->id;
		s->timer_ctx = t;
	}
	return t;
}

static struct svc_session *timer_session(void *user)
{
	struct svc_timer_ctx *t = user;

	return svc_session_by_id(t->svc, t->session_id);
}

uint64_t svc_session_add_timer(struct svc *svc, struct svc_session *s, uint64_t first_ms,
			       uint64_t period_ms, evloop_task_cb cb)
{
	struct svc_timer_ctx *t = svc_session_timer_ctx(svc, s);
	uint64_t id = 0;

	if (!t || evloop_add_timer(svc->loop, first_ms ? first_ms : 1, period_ms, cb, t, &id) < 0)
		return 0;
	return id;
}

static uint64_t add_timer(struct svc *svc, struct svc_session *s, uint64_t first_ms,
			  uint64_t period_ms, evloop_task_cb cb)
{
	return svc_session_add_timer(svc, s, first_ms, period_ms, cb);
}

/* ------------------------------------------------------------ stopping ---- */

static void finalize(struct svc *svc, struct svc_session *s)
{
	if (s->state == SESSION_STOPPED)
		return;
	cancel_all_timers(svc, s);
	/* What producers wrote but did not commit, before the final read. */
	svc_scrape_session(svc, s);
	s->state = SESSION_STOPPED;
	svc_queue_service_event(svc, s, PB_TRACING_SERVICE_EVENT__TRACING_DISABLED);
	if (s->file_fd >= 0) {
		svc_read_to_file(svc, s, true);
		fd_close(s->file_fd);
		s->file_fd = -1;
	}
	/* No TraceStats field counts scraped chunks (Perfetto has none): the log does. */
	LOG_I("session %llu stopped, %llu chunks scraped from producers' SMBs",
	      (unsigned long long)s->id, (unsigned long long)s->chunks_scraped);
	svc_consumer_notify_disabled(svc, s, NULL);
}

static bool any_stopping(const struct svc_session *s)
{
	size_t i;

	for (i = 0; i < s->n_instances; i++) {
		if (s->instances[i].state == DS_STOPPING)
			return true;
	}
	return false;
}

static void on_stop_timeout(void *user)
{
	struct svc_session *s = timer_session(user);

	if (s) {
		s->stop_timer = 0;
		LOG_W("session %llu: data sources did not acknowledge the stop in time",
		      (unsigned long long)s->id);
		finalize(((struct svc_timer_ctx *)user)->svc, s);
	}
}

static void stop_instances(struct svc *svc, struct svc_session *s)
{
	uint32_t timeout_ms;
	size_t i;

	for (i = 0; i < s->n_instances; i++)
		svc_instance_stop(svc, &s->instances[i]);
	if (!any_stopping(s)) {
		finalize(svc, s);
		return;
	}
	timeout_ms = s->config->has_data_source_stop_timeout_ms &&
				     s->config->data_source_stop_timeout_ms
			     ? s->config->data_source_stop_timeout_ms
			     : SVC_DEFAULT_STOP_TIMEOUT_MS;
	s->stop_timer = add_timer(svc, s, timeout_ms, 0, on_stop_timeout);
}

static void on_final_flush(struct svc *svc, uint64_t session_id, bool ok, void *user)
{
	struct svc_session *s = svc_session_by_id(svc, session_id);

	(void)user;
	(void)ok;
	if (s && s->state == SESSION_STOPPING)
		stop_instances(svc, s);
}

static uint32_t flush_timeout(const struct svc_session *s)
{
	return s->config->has_flush_timeout_ms && s->config->flush_timeout_ms
		       ? s->config->flush_timeout_ms
		       : SVC_DEFAULT_FLUSH_TIMEOUT_MS;
}

void svc_session_disable(struct svc *svc, struct svc_session *s)
{
	if (s->state == SESSION_STOPPING || s->state == SESSION_STOPPED)
		return;
	cancel_all_timers(svc, s);
	if (s->state == SESSION_CONFIGURED) {
		s->state = SESSION_STOPPING;
		stop_instances(svc, s);
		return;
	}
	s->state = SESSION_STOPPING;
	/* Everything written so far must reach the buffers before the stop. */
	if (svc_flush_start(svc, s, flush_timeout(s), FLUSH_REASON_TRACE_STOP | FLUSH_INITIATOR_TRACED,
			    on_final_flush, NULL) < 0)
		stop_instances(svc, s);
}

/* ------------------------------------------------------------ timers ------ */

static void on_duration(void *user)
{
	struct svc_session *s = timer_session(user);

	if (s) {
		s->duration_timer = 0;
		svc_session_disable(((struct svc_timer_ctx *)user)->svc, s);
	}
}

static void on_flush_period(void *user)
{
	struct svc_session *s = timer_session(user);

	if (s && s->state == SESSION_STARTED)
		svc_flush_start(((struct svc_timer_ctx *)user)->svc, s, flush_timeout(s),
				FLUSH_REASON_PERIODIC | FLUSH_INITIATOR_TRACED, NULL, NULL);
}

static void on_clear_period(void *user)
{
	struct svc_session *s = timer_session(user);

	if (s && s->state == SESSION_STARTED)
		svc_clear_incremental_state(((struct svc_timer_ctx *)user)->svc, s);
}

static bool clock_snapshots_enabled(const struct svc_session *s)
{
	const Perfetto__Protos__TraceConfig__BuiltinDataSource *b = s->config->builtin_data_sources;

	return !(b && b->has_disable_clock_snapshotting && b->disable_clock_snapshotting);
}

static void on_snapshot(void *user)
{
	struct svc_session *s = timer_session(user);
	struct svc *svc = ((struct svc_timer_ctx *)user)->svc;

	if (s && s->state == SESSION_STARTED) {
		if (clock_snapshots_enabled(s))
			svc_clocks_maybe_snapshot(s);
		svc_queue_trace_stats(svc, s);
	}
}

static void on_file_write(void *user)
{
	struct svc_session *s = timer_session(user);
	struct svc *svc = ((struct svc_timer_ctx *)user)->svc;

	if (!s || s->file_fd < 0 || s->state != SESSION_STARTED)
		return;
	if (svc_read_to_file(svc, s, false) < 0 || s->file_full) {
		LOG_I("session %llu: output file reached %llu bytes, stopping",
		      (unsigned long long)s->id, (unsigned long long)s->bytes_written_into_file);
		svc_session_disable(svc, s);
	}
}

static void on_trigger_timeout(void *user)
{
	struct svc_session *s = timer_session(user);

	if (!s || s->trigger_fired)
		return;
	s->trigger_timer = 0;
	if (svc_session_reads_nothing(s)) {
		/* CLONE_SNAPSHOT: trigger_timeout_ms is the session's duration. */
		LOG_I("session %llu: trigger_timeout_ms elapsed, stopping",
		      (unsigned long long)s->id);
	} else {
		/* No trigger came: the data is not wanted. */
		LOG_I("session %llu: no trigger within trigger_timeout_ms, discarding",
		      (unsigned long long)s->id);
	}
	s->discard_data = true;
	svc_session_disable(((struct svc_timer_ctx *)user)->svc, s);
}

void svc_session_on_stop_delay(void *user)
{
	struct svc_session *s = timer_session(user);

	if (s) {
		s->stop_timer = 0;
		svc_session_disable(((struct svc_timer_ctx *)user)->svc, s);
	}
}

/* ------------------------------------------------------------ starting ---- */

static void maybe_all_started(struct svc *svc, struct svc_session *s)
{
	size_t i;

	if (s->did_notify_all_started || s->state != SESSION_STARTED)
		return;
	for (i = 0; i < s->n_instances; i++) {
		if (s->instances[i].state == DS_STARTING || s->instances[i].state == DS_CONFIGURED)
			return;
	}
	s->did_notify_all_started = true;
	svc_queue_service_event(svc, s, PB_TRACING_SERVICE_EVENT__ALL_DATA_SOURCES_STARTED);
	svc_notify_observers_all_started(svc);
}

int svc_session_start(struct svc *svc, struct svc_session *s)
{
	const Perfetto__Protos__TraceConfig *c = s->config;
	uint32_t snap_ms = SVC_DEFAULT_SNAPSHOT_INTERVAL_MS;
	size_t i;

	if (s->state != SESSION_CONFIGURED)
		return -EBUSY;
	s->state = SESSION_STARTED;
	s->start_realtime_ns = clock_realtime_ns();
	/* Kept apart from the ring so later snapshots never push it out. */
	if (clock_snapshots_enabled(s))
		svc_clocks_snapshot_initial(s);
	svc_relays_on_session_start(svc, s);
	svc_queue_service_event(svc, s, PB_TRACING_SERVICE_EVENT__TRACING_STARTED);
	for (i = 0; i < s->n_instances; i++)
		svc_instance_start(svc, s, &s->instances[i]);
	if (c->has_duration_ms && c->duration_ms)
		s->duration_timer = add_timer(svc, s, c->duration_ms, 0, on_duration);
	if (c->has_flush_period_ms && c->flush_period_ms)
		s->flush_timer = add_timer(svc, s, c->flush_period_ms, c->flush_period_ms,
					   on_flush_period);
	/* Producers forget their interned data and descriptors now and then,
	 * so a ring buffer that wrapped past them is readable again. */
	if (c->incremental_state_config && c->incremental_state_config->has_clear_period_ms &&
	    c->incremental_state_config->clear_period_ms)
		s->clear_timer = add_timer(svc, s, c->incremental_state_config->clear_period_ms,
					   c->incremental_state_config->clear_period_ms,
					   on_clear_period);
	if (c->builtin_data_sources && c->builtin_data_sources->has_snapshot_interval_ms &&
	    c->builtin_data_sources->snapshot_interval_ms)
		snap_ms = c->builtin_data_sources->snapshot_interval_ms;
	s->snapshot_timer = add_timer(svc, s, snap_ms, snap_ms, on_snapshot);
	if (s->file_fd >= 0) {
		uint32_t period = c->has_file_write_period_ms && c->file_write_period_ms
					  ? c->file_write_period_ms
					  : SVC_DEFAULT_FILE_WRITE_PERIOD_MS;

		if (period < SVC_MIN_FILE_WRITE_PERIOD_MS)
			period = SVC_MIN_FILE_WRITE_PERIOD_MS;
		s->file_timer = add_timer(svc, s, period, period, on_file_write);
	}
	LOG_I("session %llu started: %zu buffers, %zu data source instances",
	      (unsigned long long)s->id, s->n_buffers, s->n_instances);
	maybe_all_started(svc, s);
	return 0;
}

/* ------------------------------------------------------------ enabling ---- */

static int check_config(struct svc *svc, uid_t uid, const Perfetto__Protos__TraceConfig *c,
			int out_fd, char *err, size_t n)
{
	const struct svc_session *s;
	uint64_t total_kb = 0;
	size_t i, per_uid = 0;

	if (svc->n_sessions >= SVC_MAX_SESSIONS) {
		snprintf(err, n, "too many concurrent tracing sessions (%d)", SVC_MAX_SESSIONS);
		return -EBUSY;
	}
	for (s = svc->sessions; s; s = s->next) {
		if (s->consumer_uid == uid)
			per_uid++;
		if (c->unique_session_name && *c->unique_session_name && s->unique_name &&
		    strcmp(s->unique_name, c->unique_session_name) == 0) {
			snprintf(err, n, "a session named '%s' already exists",
				 c->unique_session_name);
			return -EEXIST;
		}
	}
	if (per_uid >= SVC_MAX_SESSIONS_PER_UID) {
		snprintf(err, n, "too many concurrent tracing sessions for uid %u (%d)",
			 (unsigned)uid, SVC_MAX_SESSIONS_PER_UID);
		return -EBUSY;
	}
	if (c->n_buffers == 0) {
		snprintf(err, n, "the config has no buffers");
		return -EINVAL;
	}
	if (c->n_buffers > SVC_MAX_BUFFERS_PER_SESSION) {
		snprintf(err, n, "too many buffers (%zu, at most %d)", c->n_buffers,
			 SVC_MAX_BUFFERS_PER_SESSION);
		return -EINVAL;
	}
	for (i = 0; i < c->n_buffers; i++) {
		if (!c->buffers[i]->has_size_kb || c->buffers[i]->size_kb == 0) {
			snprintf(err, n, "buffers[%zu] has no size_kb", i);
			return -EINVAL;
		}
		total_kb += c->buffers[i]->size_kb;
	}
	if (total_kb > SVC_MAX_TOTAL_BUFFER_KB) {
		snprintf(err, n, "buffers total %llu KB, more than the %u KB limit",
			 (unsigned long long)total_kb, SVC_MAX_TOTAL_BUFFER_KB);
		return -EINVAL;
	}
	if (c->has_duration_ms && c->duration_ms > SVC_MAX_DURATION_MS) {
		snprintf(err, n, "duration_ms %u is longer than 7 days", c->duration_ms);
		return -EINVAL;
	}
	if (c->trigger_config && c->trigger_config->has_trigger_mode &&
	    c->trigger_config->trigger_mode &&
	    (!c->trigger_config->has_trigger_timeout_ms || !c->trigger_config->trigger_timeout_ms)) {
		snprintf(err, n, "trigger_config needs a trigger_timeout_ms > 0");
		return -EINVAL;
	}
	if (c->trigger_config && c->trigger_config->has_trigger_mode &&
	    c->trigger_config->trigger_mode && c->has_duration_ms && c->duration_ms) {
		/* As in Perfetto: trigger_timeout_ms and stop_delay_ms bound it. */
		snprintf(err, n, "duration_ms was set, this must not be set for traces with "
				 "triggers (trigger_timeout_ms bounds the session)");
		return -EINVAL;
	}
	if (c->trigger_config && c->trigger_config->has_trigger_mode &&
	    (c->trigger_config->trigger_mode ==
		     PERFETTO__PROTOS__TRACE_CONFIG__TRIGGER_CONFIG__TRIGGER_MODE__STOP_TRACING ||
	     c->trigger_config->trigger_mode ==
		     PERFETTO__PROTOS__TRACE_CONFIG__TRIGGER_CONFIG__TRIGGER_MODE__CLONE_SNAPSHOT) &&
	    c->has_write_into_file && c->write_into_file) {
		/* As in Perfetto. */
		snprintf(err, n, "Specifying trigger mode STOP_TRACING/CLONE_SNAPSHOT and "
				 "write_into_file together is unsupported");
		return -EINVAL;
	}
	if (c->has_write_into_file && c->write_into_file && out_fd < 0 &&
	    !(c->output_path && *c->output_path)) {
		snprintf(err, n, "write_into_file needs an output file (or output_path)");
		return -EINVAL;
	}
	for (i = 0; i < c->n_data_sources; i++) {
		const Perfetto__Protos__DataSourceConfig *dc = c->data_sources[i]->config;

		if (!dc || !dc->name || !*dc->name) {
			snprintf(err, n, "data_sources[%zu] has no name", i);
			return -EINVAL;
		}
	}
	return 0;
}

static int create_buffers(struct svc *svc, struct svc_session *s, char *err, size_t n)
{
	size_t i;
	int rc;

	s->buffers = calloc(s->config->n_buffers, sizeof(*s->buffers));
	if (!s->buffers)
		return -ENOMEM;
	for (i = 0; i < s->config->n_buffers; i++) {
		const Perfetto__Protos__TraceConfig__BufferConfig *b = s->config->buffers[i];
		enum tb_fill_policy pol =
			b->has_fill_policy && b->fill_policy == 2 ? TB_DISCARD : TB_RING_BUFFER;

		rc = tb_create((size_t)b->size_kb * 1024, pol, &s->buffers[i].tb);
		if (rc < 0) {
			snprintf(err, n, "cannot allocate buffers[%zu] (%u KB): %s", i, b->size_kb,
				 strerror(-rc));
			return rc;
		}
		s->buffers[i].global_id = svc->next_buffer_id++;
		if (svc->next_buffer_id > 0xffff)
			svc->next_buffer_id = 1;
		s->n_buffers++;
		hmap_put(&svc->buffers_by_id, s->buffers[i].global_id, s->id);
	}
	return 0;
}

static int open_output(struct svc_session *s, int out_fd, char *err, size_t n)
{
	const Perfetto__Protos__TraceConfig *c = s->config;

	s->file_fd = -1;
	if (!(c->has_write_into_file && c->write_into_file))
		return 0;
	if (out_fd >= 0) {
		s->file_fd = out_fd;
	} else {
		/* The service creates the file; it must not exist already. */
		s->file_fd = open(c->output_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (s->file_fd < 0) {
			snprintf(err, n, "cannot create output_path %s: %s", c->output_path,
				 strerror(errno));
			return -errno;
		}
	}
	s->max_file_size_bytes = c->has_max_file_size_bytes ? c->max_file_size_bytes : 0;
	return 0;
}

struct svc_session *svc_session_new(struct svc *svc, struct ipc_host *host, uint64_t client_id,
				    uid_t uid, enum session_state state)
{
	struct svc_session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->id = svc->next_session_id++;
	s->svc = svc;
	s->file_fd = -1;
	s->state = state;
	s->consumer_uid = uid;
	s->consumer_host = host;
	s->consumer_client_id = client_id;
	buf_init(&s->pending_service_packets);
	return s;
}

int svc_session_enable(struct svc *svc, struct ipc_host *host, uint64_t client_id, uid_t uid,
		       const Perfetto__Protos__TraceConfig *cfg, int out_fd,
		       const struct ipc_call *call, char *err, size_t err_size)
{
	const Perfetto__Protos__TraceConfig__TriggerConfig *tc;
	struct svc_session *s;
	uint64_t rnd[2];
	int rc;

	rc = check_config(svc, uid, cfg, out_fd, err, err_size);
	if (rc < 0)
		return rc;
	s = svc_session_new(svc, host, client_id, uid, SESSION_CONFIGURED);
	if (!s)
		return -ENOMEM;
	if (call) {
		s->enable_call = *call;
		s->has_enable_call = true;
	}
	s->config_len = perfetto__protos__trace_config__get_packed_size(cfg);
	s->config_bytes = malloc(s->config_len ? s->config_len : 1);
	if (!s->config_bytes) {
		free(s);
		return -ENOMEM;
	}
	perfetto__protos__trace_config__pack(cfg, s->config_bytes);
	s->config = perfetto__protos__trace_config__unpack(NULL, s->config_len, s->config_bytes);
	if (!s->config) {
		free(s->config_bytes);
		free(s);
		return -ENOMEM;
	}
	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd)) {
		rnd[0] = clock_realtime_ns();
		rnd[1] = clock_boottime_ns() ^ ((uint64_t)getpid() << 32);
	}
	s->uuid_msb = rnd[0];
	s->uuid_lsb = rnd[1];
	if (cfg->unique_session_name && *cfg->unique_session_name)
		s->unique_name = strdup(cfg->unique_session_name);
	s->next = svc->sessions;
	svc->sessions = s;
	svc->n_sessions++;

	rc = create_buffers(svc, s, err, err_size);
	if (rc == 0)
		rc = open_output(s, out_fd, err, err_size);
	if (rc < 0) {
		/* The consumer gets the error as the EnableTracing reply instead. */
		s->has_enable_call = false;
		if (s->file_fd == out_fd)
			s->file_fd = -1;
		svc_session_free(svc, s);
		return rc;
	}
	svc_instances_create_all(svc, s);
	LOG_I("session %llu enabled by uid %u: %zu buffers, %zu data source instances",
	      (unsigned long long)s->id, (unsigned)uid, s->n_buffers, s->n_instances);

	tc = cfg->trigger_config;
	if (tc && tc->has_trigger_mode && tc->trigger_mode)
		s->trigger_timer = add_timer(svc, s, tc->trigger_timeout_ms, 0, on_trigger_timeout);
	if (tc && tc->has_trigger_mode &&
	    tc->trigger_mode == PERFETTO__PROTOS__TRACE_CONFIG__TRIGGER_CONFIG__TRIGGER_MODE__START_TRACING)
		return 0;
	if (cfg->has_deferred_start && cfg->deferred_start)
		return 0;
	svc_session_start(svc, s);
	return 0;
}

/* ------------------------------------------------------------- events ----- */

void svc_session_on_ds_registered(struct svc *svc, struct svc_producer *p,
				  struct svc_data_source *ds)
{
	struct svc_session *s;
	size_t i, before;

	for (s = svc->sessions; s; s = s->next) {
		if (s->is_clone || (s->state != SESSION_CONFIGURED && s->state != SESSION_STARTED))
			continue;
		for (i = 0; i < s->config->n_data_sources; i++) {
			const Perfetto__Protos__TraceConfig__DataSource *cds = s->config->data_sources[i];

			if (!cds->config || strcmp(cds->config->name, ds->name) != 0 ||
			    !svc_producer_matches(s, cds, p))
				continue;
			before = s->n_instances;
			if (svc_instance_create(svc, s, p, ds, cds) == 0 && s->n_instances > before &&
			    s->state == SESSION_STARTED)
				svc_instance_start(svc, s, &s->instances[s->n_instances - 1]);
		}
	}
}

static struct svc_ds_instance *find_instance(struct svc *svc, uint32_t producer_id,
					     uint64_t instance_id, struct svc_session **out_s)
{
	struct svc_session *s;
	size_t i;

	for (s = svc->sessions; s; s = s->next) {
		for (i = 0; i < s->n_instances; i++) {
			if (s->instances[i].instance_id == instance_id &&
			    s->instances[i].producer_id == producer_id) {
				*out_s = s;
				return &s->instances[i];
			}
		}
	}
	return NULL;
}

void svc_session_on_ds_started(struct svc *svc, uint32_t producer_id, uint64_t instance_id)
{
	struct svc_session *s = NULL;
	struct svc_ds_instance *inst = find_instance(svc, producer_id, instance_id, &s);
	struct svc_producer *p = svc_producer_by_id(svc, producer_id);

	if (!inst || inst->state != DS_STARTING)
		return;
	inst->state = DS_STARTED;
	if (p)
		svc_notify_observers_instance(svc, p->name, inst->ds_name, SVC_DS_OBSERVED_STARTED);
	maybe_all_started(svc, s);
}

void svc_session_on_ds_stopped(struct svc *svc, uint32_t producer_id, uint64_t instance_id)
{
	struct svc_session *s = NULL;
	struct svc_ds_instance *inst = find_instance(svc, producer_id, instance_id, &s);
	struct svc_producer *p = svc_producer_by_id(svc, producer_id);

	if (!inst || inst->state != DS_STOPPING)
		return;
	inst->state = DS_STOPPED;
	if (p)
		svc_notify_observers_instance(svc, p->name, inst->ds_name, SVC_DS_OBSERVED_STOPPED);
	if (s->state == SESSION_STOPPING && !any_stopping(s))
		finalize(svc, s);
}

void svc_session_on_producer_gone(struct svc *svc, uint32_t producer_id)
{
	struct svc_session *s, *next;
	size_t i;

	svc_flush_on_producer_gone(svc, producer_id);
	for (s = svc->sessions; s; s = next) {
		bool touched = false;

		next = s->next;
		for (i = 0; i < s->n_instances; i++) {
			if (s->instances[i].producer_id == producer_id &&
			    s->instances[i].state != DS_STOPPED) {
				s->instances[i].state = DS_STOPPED;
				touched = true;
			}
		}
		if (touched && s->state == SESSION_STOPPING && !any_stopping(s))
			finalize(svc, s);
		else if (touched)
			maybe_all_started(svc, s);
	}
}

/* ------------------------------------------------------------ freeing ----- */

void svc_session_free(struct svc *svc, struct svc_session *s)
{
	struct svc_session **pp;
	size_t i;

	for (pp = &svc->sessions; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			svc->n_sessions--;
			break;
		}
	}
	cancel_all_timers(svc, s);
	svc_flush_on_session_gone(svc, s->id);
	for (i = 0; i < s->n_instances; i++) {
		svc_instance_stop(svc, &s->instances[i]);
		svc_instance_free(&s->instances[i]);
	}
	free(s->instances);
	for (i = 0; i < s->n_buffers; i++) {
		hmap_del(&svc->buffers_by_id, s->buffers[i].global_id, NULL);
		tb_destroy(s->buffers[i].tb);
	}
	free(s->buffers);
	for (i = 0; i < s->n_fired_triggers; i++) {
		free(s->fired_triggers[i]);
		free(s->fired_trigger_producers[i]);
	}
	svc_triggers_session_gone(svc, s);
	if (s->file_fd >= 0)
		fd_close(s->file_fd);
	if (s->has_enable_call)
		svc_consumer_notify_disabled(svc, s, NULL);
	buf_fini(&s->pending_service_packets);
	free(s->rounds);
	free(s->sysinfo_machines);
	if (s->config)
		perfetto__protos__trace_config__free_unpacked(s->config, NULL);
	free(s->config_bytes);
	free(s->unique_name);
	free(s->timer_ctx);
	free(s);
	svc_gc_sequence_ids(svc);
}

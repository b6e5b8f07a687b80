// SPDX-License-Identifier: Apache-2.0
/*
 * producer_daemon.c - keeps a daemon's producer connected (see
 * producer_daemon.h): connect, register, notify readiness after a sync,
 * and on loss drop the instances and retry, 100 ms doubling to 30 s.
 */
#include "tracing/producer_daemon.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/evloop.h"
#include "base/log.h"
#include "base/subproc.h"

struct producer_daemon {
	struct evloop *loop;
	struct producer_daemon_spec spec;
	void *user;
	struct producer *p;
	uint32_t backoff_ms;
	uint64_t reconnect_timer;
	bool notified_ready;
};

static void connect_now(struct producer_daemon *pd);

static void on_reconnect_timer(void *user)
{
	struct producer_daemon *pd = user;

	pd->reconnect_timer = 0;
	connect_now(pd);
}

static void schedule_reconnect(struct producer_daemon *pd)
{
	if (pd->reconnect_timer)
		return;
	evloop_add_timer(pd->loop, pd->backoff_ms, 0, on_reconnect_timer, pd,
			 &pd->reconnect_timer);
	pd->backoff_ms = pd->backoff_ms * 2 > PRODUCER_DAEMON_BACKOFF_MAX_MS
				 ? PRODUCER_DAEMON_BACKOFF_MAX_MS
				 : pd->backoff_ms * 2;
}

static void on_synced(struct producer *p, bool success, void *user)
{
	struct producer_daemon *pd = user;

	(void)p;
	if (success && pd->spec.on_synced)
		pd->spec.on_synced(pd->user);
	if (success && !pd->notified_ready) {
		pd->notified_ready = true;
		if (pd->spec.notify_env)
			notify_ready_from_env(pd->spec.notify_env);
	}
}

static void on_connected(struct producer *p, void *user)
{
	struct producer_daemon *pd = user;

	pd->backoff_ms = PRODUCER_DAEMON_BACKOFF_MIN_MS;
	LOG_I("connected to the tracing service");
	/* Ready once the registrations have reached the service. */
	producer_sync(p, on_synced, pd);
}

static void on_disconnected(struct producer *p, int err, void *user)
{
	struct producer_daemon *pd = user;

	(void)p;
	LOG_W("disconnected from the tracing service (%s); reconnecting",
	      err ? strerror(-err) : "closed");
	if (pd->spec.on_lost)
		pd->spec.on_lost(pd->user);
	/* Destroying from inside its own callback is allowed. */
	producer_destroy(pd->p);
	pd->p = NULL;
	schedule_reconnect(pd);
}

/* The data source callbacks get the daemon's user pointer, not ours. */
static void fwd_setup(struct producer *p, void *user)
{
	struct producer_daemon *pd = user;

	pd->spec.cbs.on_tracing_setup(p, pd->user);
}

static void fwd_setup_ds(struct producer *p, uint64_t id, const Perfetto__Protos__DataSourceConfig *cfg,
			 void *user)
{
	struct producer_daemon *pd = user;

	pd->spec.cbs.setup_ds(p, id, cfg, pd->user);
}

static void fwd_start_ds(struct producer *p, uint64_t id, const Perfetto__Protos__DataSourceConfig *cfg,
			 void *user)
{
	struct producer_daemon *pd = user;

	pd->spec.cbs.start_ds(p, id, cfg, pd->user);
}

static void fwd_stop_ds(struct producer *p, uint64_t id, void *user)
{
	struct producer_daemon *pd = user;

	pd->spec.cbs.stop_ds(p, id, pd->user);
}

static void fwd_flush(struct producer *p, const uint64_t *ids, size_t n, uint64_t request_id,
		      uint64_t flags, void *user)
{
	struct producer_daemon *pd = user;

	pd->spec.cbs.flush(p, ids, n, request_id, flags, pd->user);
}

static void fwd_clear(struct producer *p, const uint64_t *ids, size_t n, void *user)
{
	struct producer_daemon *pd = user;

	pd->spec.cbs.clear_incremental_state(p, ids, n, pd->user);
}

static void connect_now(struct producer_daemon *pd)
{
	const struct producer_callbacks *u = &pd->spec.cbs;
	struct producer_callbacks cbs = {
		.on_connected = on_connected,
		.on_disconnected = on_disconnected,
		.on_tracing_setup = u->on_tracing_setup ? fwd_setup : NULL,
		.setup_ds = u->setup_ds ? fwd_setup_ds : NULL,
		.start_ds = u->start_ds ? fwd_start_ds : NULL,
		.stop_ds = u->stop_ds ? fwd_stop_ds : NULL,
		.flush = u->flush ? fwd_flush : NULL,
		.clear_incremental_state = u->clear_incremental_state ? fwd_clear : NULL,
	};
	size_t i;
	int rc;

	rc = producer_connect(pd->loop, NULL, pd->spec.name, &pd->spec.opts, &cbs, pd, &pd->p);
	if (rc < 0) {
		LOG_D("cannot connect to the tracing service: %s", strerror(-rc));
		pd->p = NULL;
		schedule_reconnect(pd);
		return;
	}
	for (i = 0; i < pd->spec.n_descs; i++)
		producer_register_ds(pd->p, &pd->spec.descs[i]);
}

int producer_daemon_create(struct evloop *loop, const struct producer_daemon_spec *spec,
			   void *user, struct producer_daemon **out)
{
	struct producer_daemon *pd = calloc(1, sizeof(*pd));

	if (!pd)
		return -ENOMEM;
	pd->loop = loop;
	pd->spec = *spec;
	pd->user = user;
	/* The writers live on the loop thread: never stall it waiting for a
	 * chunk. They commit on every flush themselves, so the service need
	 * not scrape (SMB_SCRAPING_DISABLED, as traced_probes asks upstream). */
	pd->spec.opts.full_policy = ARB_FULL_DROP;
	pd->spec.opts.smb_scraping_mode = 2;
	pd->backoff_ms = PRODUCER_DAEMON_BACKOFF_MIN_MS;
	*out = pd;
	connect_now(pd);
	return 0;
}

struct producer *producer_daemon_producer(const struct producer_daemon *pd)
{
	return pd ? pd->p : NULL;
}

void producer_daemon_destroy(struct producer_daemon *pd)
{
	if (!pd)
		return;
	if (pd->reconnect_timer)
		evloop_del(pd->loop, pd->reconnect_timer);
	producer_destroy(pd->p);
	free(pd);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * producer_daemon.h - a producer that stays connected: for daemons
 * (traced_probes, traced_perf) that serve data sources for as long as they
 * run. It connects, registers the data sources, tells systemd it is ready
 * once the registrations reached the service, and when the service goes
 * away asks its owner to drop every instance, then reconnects with
 * exponential backoff.
 */
#ifndef PFC_TRACING_PRODUCER_DAEMON_H
#define PFC_TRACING_PRODUCER_DAEMON_H

#include <stddef.h>
#include <stdint.h>

#include "tracing/producer.h"

struct evloop;
struct producer_daemon;

#define PRODUCER_DAEMON_BACKOFF_MIN_MS 100u
#define PRODUCER_DAEMON_BACKOFF_MAX_MS 30000u

struct producer_daemon_spec {
	const char *name;                     /* the producer's name */
	/* SMB sizes; the writers are taken to live on the loop thread, so a
	 * full SMB drops (ARB_FULL_DROP) and scraping is disabled. */
	struct producer_opts opts;
	const struct producer_ds_desc *descs; /* registered on each connection */
	size_t n_descs;
	/* The data source callbacks; on_connected and on_disconnected are the
	 * daemon's own and ignored here. */
	struct producer_callbacks cbs;
	/* Lost the service: stop every instance. The old producer still
	 * works during the call (to destroy writers), and is destroyed after. */
	void (*on_lost)(void *user);
	/* Optional: the registrations of a connection reached the service
	 * (after them, it has started every instance it wants started). */
	void (*on_synced)(void *user);
	/* Environment variable naming the READY=1 descriptor (subproc.h), or
	 * NULL. */
	const char *notify_env;
};

/*
 * producer_daemon_create() - Start connecting (now, then with backoff).
 * @spec is copied; the strings and @descs it points to must outlive the
 * daemon. Return: 0 or -ENOMEM.
 */
int producer_daemon_create(struct evloop *loop, const struct producer_daemon_spec *spec,
			   void *user, struct producer_daemon **out);

/* The current connection, or NULL while there is none. */
struct producer *producer_daemon_producer(const struct producer_daemon *pd);

/* Disconnects. Stop the instances first (their writers need the producer). */
void producer_daemon_destroy(struct producer_daemon *pd);

#endif

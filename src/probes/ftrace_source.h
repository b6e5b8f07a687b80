/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ftrace_source.h - the linux.ftrace data source of traced_probes: one
 * controller owns tracefs and the per-CPU trace_pipe_raw readers; each
 * session's instance asks for a set of events and gets bundles of exactly
 * those, written through its own trace writer. The kernel runs with the
 * union of every instance's events; its previous state is saved before the
 * first instance and restored after the last. Runs on the producer's loop.
 */
#ifndef PFC_PROBES_FTRACE_SOURCE_H
#define PFC_PROBES_FTRACE_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include "config/ftrace_config.pb-c.h"
#include "tracing/tracing.h"

/* Most pages read from one CPU per drain tick (Perfetto's bound). */
#define FTRACE_MAX_PAGES_PER_CPU_PER_TICK 256
/* Rounds of one drain while some CPU still hits that bound. */
#define FTRACE_MAX_DRAIN_ROUNDS 4
/* Distinct pids collected in one drain before process_stats gets a batch. */
#define FTRACE_MAX_PIDS_PER_DRAIN 4096
#define FTRACE_DEFAULT_DRAIN_PERIOD_MS 100
/* Per-CPU kernel buffer when the config does not say: 2 MiB, or 8 MiB on
 * machines with at least 7 GiB of RAM. */
#define FTRACE_DEFAULT_BUFFER_KB 2048
#define FTRACE_LARGE_BUFFER_KB 8192
#define FTRACE_MAX_BUFFER_KB (256 * 1024)
/* Events one instance may ask for after wildcards and categories. */
#define FTRACE_MAX_EVENTS_PER_INSTANCE 2048

struct evloop;
struct ftrace_ctl;
struct ftrace_instance;

/* Called once per drain with the pids/tids it saw, sorted, no repeats
 * (for process_stats). */
typedef void (*ftrace_pids_cb)(const int32_t *pids, size_t n, void *user);

/* Return: 0, -ENOMEM. The controller opens tracefs on the first start. */
int ftrace_ctl_create(struct evloop *loop, struct ftrace_ctl **out);
/* Stops every instance and restores the kernel's state. NULL is allowed. */
void ftrace_ctl_destroy(struct ftrace_ctl *c);
/* Where newly seen pids go (NULL to stop). */
void ftrace_ctl_set_pids_cb(struct ftrace_ctl *c, ftrace_pids_cb cb, void *user);

/*
 * ftrace_instance_start() - Start recording what @cfg asks for into @tw.
 * @tw: the instance's trace writer (borrowed; used on the loop thread only,
 * until ftrace_instance_stop()).
 * Return: 0, -ENOENT (no tracefs), -EACCES (not root), -EINVAL (no events
 * at all), -ENOMEM. Events the kernel lacks are reported in FtraceStats.
 */
int ftrace_instance_start(struct ftrace_ctl *c, uint64_t id, const Perfetto__Protos__FtraceConfig *cfg,
			  struct trace_writer *tw, struct ftrace_instance **out);
/* Drains what is left, writes the end stats, releases the events. */
void ftrace_instance_stop(struct ftrace_ctl *c, struct ftrace_instance *inst);
/* Reads every CPU's pages now (used on flush). */
void ftrace_ctl_drain(struct ftrace_ctl *c);

/*
 * Restores the kernel state saved by a traced_probes that died. Without a
 * saved state, @hard_reset_without_state turns tracing off and disables
 * every event (`--cleanup-after-crash`); otherwise nothing changes
 * (`--reset-ftrace`, which must not wipe what someone else set up).
 */
int ftrace_cleanup_after_crash(bool hard_reset_without_state);

#endif

// SPDX-License-Identifier: Apache-2.0
/*
 * perf_producer.c - traced_perf's producer (see perf.h): registers
 * linux.perf, starts one perf_ds per data source instance (a config it
 * cannot serve is refused with one log line and the service is told the
 * instance started, so it never waits), drains on flush, clears interning
 * on request, and once a second stops early any instance whose
 * max_daemon_memory_kb the daemon's RssAnon + swap exceeds (as upstream);
 * producer_daemon.c reconnects when the service goes away.
 */
#include "perf/perf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/compiler.h"
#include "base/evloop.h"
#include "base/log.h"
#include "perf/perf_ds.h"
#include "tracing/producer.h"
#include "tracing/producer_daemon.h"

struct inst {
	struct inst *next;
	uint64_t id;
	struct trace_writer *tw;
	struct perf_ds *ds;
};

/* How often the memory guardrail is checked (upstream's period). */
#define PERF_GUARDRAIL_PERIOD_MS 1000u

struct perf_daemon {
	struct evloop *loop;
	struct producer_daemon *pd;
	struct perf_shared sh;
	struct inst *instances;
	uint64_t guardrail_timer;
};

static struct inst *find(struct perf_daemon *d, uint64_t id)
{
	struct inst *i;

	for (i = d->instances; i; i = i->next) {
		if (i->id == id)
			return i;
	}
	return NULL;
}

static void log_stats(struct perf_daemon *d, struct inst *in)
{
	struct perf_ds_stats st;
	struct unwind_stats us;

	if (!in->ds)
		return;
	perf_ds_get_stats(in->ds, &st);
	unwinder_get_stats(d->sh.unwinder, &us);
	LOG_I("linux.perf instance %llu: %llu samples, %llu out of scope, %llu over the "
	      "footprint, %llu records lost by the kernel (%llu of them in no LOST record), "
	      "%llu throttles, %llu malformed, %llu unwind errors; user stacks: %llu KiB "
	      "copied by the kernel, %llu KiB of them queued for unwinding",
	      (unsigned long long)in->id, (unsigned long long)st.samples,
	      (unsigned long long)st.skipped_scope, (unsigned long long)st.skipped_footprint,
	      (unsigned long long)st.records_lost, (unsigned long long)st.lost_unreported,
	      (unsigned long long)st.throttles,
	      (unsigned long long)st.malformed, (unsigned long long)st.unwind_errors,
	      (unsigned long long)(st.stack_bytes_copied >> 10),
	      (unsigned long long)(st.stack_bytes_queued >> 10));
	LOG_I("unwinder (daemon lifetime): %llu DWARF stacks by cached CFI rules, %llu by libdw; "
	      "crosscheck: %llu compared, %llu differ",
	      (unsigned long long)us.fast_unwinds, (unsigned long long)us.libdw_unwinds,
	      (unsigned long long)us.crosscheck_compared, (unsigned long long)us.crosscheck_differ);
	if (d->sh.test_stack_cut_check)
		LOG_I("stack cut check: %llu compared, %llu differ",
		      (unsigned long long)st.stack_cut_compared,
		      (unsigned long long)st.stack_cut_differ);
}

/* Ends an instance: stopped (what the kernel holds is read and written
 * first) or, when @purge, cut short by the guardrail. */
static void end_inst(struct perf_daemon *d, struct inst *in, bool purge)
{
	struct inst **pp;

	for (pp = &d->instances; *pp; pp = &(*pp)->next) {
		if (*pp == in) {
			*pp = in->next;
			break;
		}
	}
	if (purge)
		perf_ds_purge(in->ds);
	else
		perf_ds_stop(in->ds);
	log_stats(d, in);
	perf_ds_destroy(in->ds);
	if (in->tw && producer_daemon_producer(d->pd))
		producer_destroy_writer(producer_daemon_producer(d->pd), in->tw);
	free(in);
}

static void destroy_inst(struct perf_daemon *d, struct inst *in)
{
	end_inst(d, in, false);
}

/* RssAnon + VmSwap of this process in KiB, from /proc/self/status; -1 if
 * unreadable. */
static long self_anon_swap_kb(void)
{
	char line[256];
	long total = -1, v;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "RssAnon: %ld", &v) == 1 || sscanf(line, "VmSwap: %ld", &v) == 1)
			total = (total < 0 ? 0 : total) + v;
	}
	fclose(f);
	return total;
}

/* The memory guardrail: an instance whose max_daemon_memory_kb the daemon
 * is over is stopped with a PROFILER_STOP_GUARDRAIL packet; the service
 * still stops it later (on_stop then has nothing left to do but ack). */
static void on_guardrail_tick(void *user)
{
	struct perf_daemon *d = user;
	struct inst *in, *next;
	long kb = -2;

	for (in = d->instances; in; in = next) {
		uint32_t limit = perf_ds_memory_limit_kb(in->ds);

		next = in->next;
		if (!limit)
			continue;
		if (kb == -2)
			kb = self_anon_swap_kb();
		if (kb < 0 || (unsigned long)kb <= limit)
			continue;
		LOG_E("linux.perf instance %llu stopped: traced_perf holds %ld KiB (RssAnon + swap), "
		      "over its max_daemon_memory_kb %u",
		      (unsigned long long)in->id, kb, limit);
		end_inst(d, in, true);
	}
}

static void on_start(struct producer *p, uint64_t id, const Perfetto__Protos__DataSourceConfig *cfg,
		     void *user)
{
	struct perf_daemon *d = user;
	struct inst *in;
	char err[256] = "";
	int rc;

	if (find(d, id) || !cfg->name || strcmp(cfg->name, PERF_DATA_SOURCE_NAME) != 0)
		goto out;
	in = calloc(1, sizeof(*in));
	if (!in)
		goto out;
	in->id = id;
	rc = producer_create_writer(p, (uint16_t)cfg->target_buffer, &in->tw);
	if (rc < 0) {
		LOG_E("linux.perf instance %llu: no trace writer: %s", (unsigned long long)id,
		      strerror(-rc));
		free(in);
		goto out;
	}
	rc = perf_ds_create(d->loop, &d->sh, in->tw, id, cfg->perf_event_config, &in->ds, err,
			    sizeof(err));
	if (rc < 0) {
		LOG_E("linux.perf instance %llu refused: %s", (unsigned long long)id,
		      err[0] ? err : strerror(-rc));
		producer_destroy_writer(p, in->tw);
		free(in);
		goto out;
	}
	in->next = d->instances;
	d->instances = in;
	LOG_I("linux.perf instance %llu started", (unsigned long long)id);
out:
	producer_notify_started(p, id);
}

static void on_stop(struct producer *p, uint64_t id, void *user)
{
	struct perf_daemon *d = user;
	struct inst *in = find(d, id);

	if (in)
		destroy_inst(d, in);
	producer_notify_stopped(p, id);
}

static void on_flush(struct producer *p, const uint64_t *ids, size_t n, uint64_t request_id,
		     uint64_t flags, void *user)
{
	struct perf_daemon *d = user;
	size_t i;

	(void)flags;
	for (i = 0; i < n; i++) {
		struct inst *in = find(d, ids[i]);

		if (in)
			perf_ds_drain(in->ds);
	}
	producer_flush_ack(p, request_id);
}

static void on_clear_incremental(struct producer *p, const uint64_t *ids, size_t n, void *user)
{
	struct perf_daemon *d = user;
	size_t i;

	(void)p;
	for (i = 0; i < n; i++) {
		struct inst *in = find(d, ids[i]);

		if (in)
			perf_ds_clear_incremental(in->ds);
	}
}

/* ------------------------------------------------------- connection ---- */

static void stop_all(void *user)
{
	struct perf_daemon *d = user;

	while (d->instances)
		destroy_inst(d, d->instances);
}

static const struct producer_ds_desc k_desc = {
	.name = PERF_DATA_SOURCE_NAME,
	.will_notify_on_start = true,
	.will_notify_on_stop = true,
	.handles_incremental_state_clear = true,
};

int perf_daemon_create(struct evloop *loop, struct perf_daemon **out)
{
	struct perf_daemon *d = calloc(1, sizeof(*d));
	struct producer_daemon_spec spec = {
		.name = PERF_PRODUCER_NAME,
		.descs = &k_desc,
		.n_descs = 1,
		.cbs = {
			.start_ds = on_start,
			.stop_ds = on_stop,
			.flush = on_flush,
			.clear_incremental_state = on_clear_incremental,
		},
		.on_lost = stop_all,
		.notify_env = "TRACED_PERF_NOTIFY_FD",
	};
	int rc;

	if (!d)
		return -ENOMEM;
	d->loop = loop;
	if (getenv("TRACED_PERF_TEST_UNWIND_DELAY_US"))
		d->sh.test_unwind_delay_us =
			(uint32_t)strtoul(getenv("TRACED_PERF_TEST_UNWIND_DELAY_US"), NULL, 10);
	rc = unwinder_create(&d->sh.unwinder);
	if (rc < 0) {
		free(d);
		return rc;
	}
	/* Tests only: every stack the cached CFI rules unwind, libdw unwinds
	 * again; differences are counted in the instance's closing log line. */
	if (getenv("TRACED_PERF_TEST_UNWIND_CROSSCHECK"))
		unwinder_set_crosscheck(d->sh.unwinder, true);
	d->sh.test_stack_cut_check = getenv("TRACED_PERF_TEST_STACK_CUT_CHECK") != NULL;
	spec.opts.smb_size_hint_bytes = PERF_SMB_BYTES;
	spec.opts.page_size_hint_bytes = PERF_SMB_PAGE_BYTES;
	rc = producer_daemon_create(loop, &spec, d, &d->pd);
	if (rc < 0) {
		unwinder_destroy(d->sh.unwinder);
		free(d);
		return rc;
	}
	rc = evloop_add_timer(loop, PERF_GUARDRAIL_PERIOD_MS, PERF_GUARDRAIL_PERIOD_MS,
			      on_guardrail_tick, d, &d->guardrail_timer);
	if (rc < 0) {
		perf_daemon_destroy(d);
		return rc;
	}
	*out = d;
	return 0;
}

void perf_daemon_destroy(struct perf_daemon *d)
{
	if (!d)
		return;
	if (d->guardrail_timer)
		evloop_del(d->loop, d->guardrail_timer);
	stop_all(d);
	producer_daemon_destroy(d->pd);
	unwinder_destroy(d->sh.unwinder);
	if (d->sh.ksyms_loaded)
		kallsyms_fini(&d->sh.ksyms);
	free(d);
}

// SPDX-License-Identifier: Apache-2.0
/*
 * probes_producer.c - traced_probes' producer (see probes.h): data source
 * instances per session, each with its own trace writer on the loop
 * thread; ftrace drains on a timer and on flush; process_stats takes the
 * pids ftrace saw; sys_stats polls on its period. A lost connection stops
 * everything (putting ftrace back) and reconnects (producer_daemon.c).
 */
#include "probes/probes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/evloop.h"
#include "base/log.h"
#include "pb_fields.h"
#include "probes/ftrace_source.h"
#include "probes/proc_stats.h"
#include "probes/sys_stats.h"
#include "probes/system_info.h"
#include "tracing/producer.h"
#include "tracing/producer_daemon.h"

enum ds_kind { DS_FTRACE, DS_PROCESS_STATS, DS_SYS_STATS, DS_SYSTEM_INFO };

static const struct {
	const char *name;
	enum ds_kind kind;
	bool clears_incremental_state;
} k_sources[] = {
	{"linux.ftrace", DS_FTRACE, false},
	{"linux.process_stats", DS_PROCESS_STATS, true},
	{"linux.sys_stats", DS_SYS_STATS, false},
	{"linux.system_info", DS_SYSTEM_INFO, false},
};

struct ds_inst {
	struct ds_inst *next;
	struct probes *pr;
	uint64_t id;
	enum ds_kind kind;
	struct trace_writer *tw;
	struct ftrace_instance *ftrace;
	struct ps_state ps;
	bool has_ps;
	bool ps_cleared; /* the next process_stats packet says so */
	struct ss_state ss;
	bool has_ss;
	uint64_t timer;
};

struct probes {
	struct evloop *loop;
	struct producer_daemon *pd;
	struct producer_ds_desc descs[PFC_ARRAY_SIZE(k_sources)]; /* as registered */
	struct ftrace_ctl *ftrace;
	struct ds_inst *instances;
};

static struct ds_inst *find(struct probes *pr, uint64_t id)
{
	struct ds_inst *d;

	for (d = pr->instances; d; d = d->next) {
		if (d->id == id)
			return d;
	}
	return NULL;
}

/* ------------------------------------------------------ process stats ---- */

/*
 * A packet of a process_stats instance. The first one after an incremental
 * state clear carries SEQ_INCREMENTAL_STATE_CLEARED, as Perfetto's does:
 * readers (and rotation, cmd_rotate.c) know the sequence starts afresh.
 */
static struct pz_msg *ps_packet(struct ds_inst *d)
{
	struct pz_msg *pkt = tw_new_packet(d->tw);

	if (d->ps_cleared) {
		pz_append_varint(pkt, PB_TRACE_PACKET__SEQUENCE_FLAGS,
				 PBE_TRACE_PACKET_SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED);
		d->ps_cleared = false;
	}
	return pkt;
}

/* Pids ftrace saw: every process_stats instance names the new ones. */
static void on_pids(const int32_t *pids, size_t n, void *user)
{
	struct probes *pr = user;
	struct ds_inst *d;

	for (d = pr->instances; d; d = d->next) {
		struct pz_msg *pkt;

		if (d->kind != DS_PROCESS_STATS || !d->has_ps || !d->ps.cfg.on_demand_enabled ||
		    !ps_count_unseen(&d->ps, pids, n))
			continue;
		pkt = ps_packet(d);
		ps_lookup_pids(&d->ps, pids, n, pkt);
		tw_finish_packet(d->tw);
		ps_maybe_prune(&d->ps);
	}
}

/* The ftrace controller walks its pages for pids only while someone asks. */
static void update_pids_cb(struct probes *pr)
{
	struct ds_inst *d;

	for (d = pr->instances; d; d = d->next) {
		if (d->kind == DS_PROCESS_STATS && d->has_ps && d->ps.cfg.on_demand_enabled)
			break;
	}
	ftrace_ctl_set_pids_cb(pr->ftrace, d ? on_pids : NULL, pr);
}

static void on_ps_poll(void *user)
{
	struct ds_inst *d = user;
	struct pz_msg *pkt = ps_packet(d);
	int queued = ps_poll_stats(&d->ps, pkt);

	tw_finish_packet(d->tw);
	/* Processes the poll met for the first time get named too. */
	if (queued > 0) {
		pkt = ps_packet(d);
		ps_write_pending(&d->ps, pkt);
		tw_finish_packet(d->tw);
	}
	ps_maybe_prune(&d->ps);
}

static void on_ss_poll(void *user)
{
	struct ds_inst *d = user;
	struct pz_msg *pkt = tw_new_packet(d->tw);

	ss_poll(&d->ss, pkt);
	tw_finish_packet(d->tw);
}

/* ------------------------------------------------------------ start ---- */

static int start_kind(struct probes *pr, struct ds_inst *d,
		      const Perfetto__Protos__DataSourceConfig *cfg)
{
	Perfetto__Protos__FtraceConfig empty_ftrace;
	struct pz_msg *pkt;
	struct ps_config psc;
	int rc;

	switch (d->kind) {
	case DS_FTRACE:
		perfetto__protos__ftrace_config__init(&empty_ftrace);
		return ftrace_instance_start(pr->ftrace, d->id,
					     cfg->ftrace_config ? cfg->ftrace_config : &empty_ftrace,
					     d->tw, &d->ftrace);
	case DS_PROCESS_STATS:
		ps_config_from_proto(cfg->process_stats_config, &psc);
		rc = ps_init(&d->ps, "/", &psc);
		if (rc < 0)
			return rc;
		d->has_ps = true;
		if (psc.scan_all_processes_on_start) {
			pkt = tw_new_packet(d->tw);
			ps_scan_all(&d->ps, pkt);
			tw_finish_packet(d->tw);
		}
		if (psc.poll_ms)
			evloop_add_timer(pr->loop, psc.poll_ms, psc.poll_ms, on_ps_poll, d, &d->timer);
		return 0;
	case DS_SYS_STATS:
		rc = ss_init(&d->ss, "/", cfg->sys_stats_config);
		if (rc < 0)
			return rc;
		d->has_ss = true;
		if (ss_tick_period_ms(&d->ss))
			evloop_add_timer(pr->loop, ss_tick_period_ms(&d->ss), ss_tick_period_ms(&d->ss),
					 on_ss_poll, d, &d->timer);
		return 0;
	case DS_SYSTEM_INFO:
		pkt = tw_new_packet(d->tw);
		rc = si_write_cpu_info("/", pkt);
		tw_finish_packet(d->tw);
		return rc < 0 ? rc : 0;
	}
	return -EINVAL;
}

static void destroy_inst(struct probes *pr, struct ds_inst *d)
{
	struct ds_inst **pp;

	for (pp = &pr->instances; *pp; pp = &(*pp)->next) {
		if (*pp == d) {
			*pp = d->next;
			break;
		}
	}
	update_pids_cb(pr);
	if (d->timer)
		evloop_del(pr->loop, d->timer);
	if (d->ftrace)
		ftrace_instance_stop(pr->ftrace, d->ftrace);
	if (d->has_ps)
		ps_fini(&d->ps);
	if (d->has_ss)
		ss_fini(&d->ss);
	if (d->tw && producer_daemon_producer(pr->pd))
		producer_destroy_writer(producer_daemon_producer(pr->pd), d->tw);
	free(d);
}

static void on_start(struct producer *p, uint64_t id, const Perfetto__Protos__DataSourceConfig *cfg,
		     void *user)
{
	struct probes *pr = user;
	struct ds_inst *d;
	size_t i;
	int rc;

	if (find(pr, id) || !cfg->name)
		return;
	for (i = 0; i < PFC_ARRAY_SIZE(k_sources); i++) {
		if (strcmp(cfg->name, k_sources[i].name) == 0)
			break;
	}
	if (i == PFC_ARRAY_SIZE(k_sources) || !(d = calloc(1, sizeof(*d))))
		return;
	d->pr = pr;
	d->id = id;
	d->kind = k_sources[i].kind;
	rc = producer_create_writer(p, (uint16_t)cfg->target_buffer, &d->tw);
	if (rc == 0) {
		d->next = pr->instances;
		pr->instances = d;
		rc = start_kind(pr, d, cfg);
		update_pids_cb(pr);
	} else {
		free(d);
		d = NULL;
	}
	if (rc < 0) {
		LOG_W("cannot start %s (instance %llu): %s", cfg->name, (unsigned long long)id,
		      strerror(-rc));
		if (d)
			destroy_inst(pr, d);
	}
	/* Started, or failed: either way the service must not wait for us. */
	producer_notify_started(p, id);
}

static void on_stop(struct producer *p, uint64_t id, void *user)
{
	struct probes *pr = user;
	struct ds_inst *d = find(pr, id);

	if (d)
		destroy_inst(pr, d);
	producer_notify_stopped(p, id);
}

static void on_flush(struct producer *p, const uint64_t *ids, size_t n, uint64_t request_id,
		     uint64_t flags, void *user)
{
	struct probes *pr = user;
	size_t i;

	(void)flags;
	/* Everything the kernel holds goes out before the ack. */
	ftrace_ctl_drain(pr->ftrace);
	for (i = 0; i < n; i++) {
		struct ds_inst *d = find(pr, ids[i]);

		if (d && d->tw)
			tw_flush(d->tw);
	}
	producer_flush_ack(p, request_id);
}

static void on_clear_incremental(struct producer *p, const uint64_t *ids, size_t n, void *user)
{
	struct probes *pr = user;
	size_t i;

	(void)p;
	for (i = 0; i < n; i++) {
		struct ds_inst *d = find(pr, ids[i]);

		if (!d || !d->has_ps)
			continue;
		ps_clear_incremental_state(&d->ps);
		d->ps_cleared = true;
		/*
		 * Our addition to Perfetto's behaviour: with scan_all_processes_on_start
		 * the whole process tree is written again after each clear, so a ring
		 * buffer that wrapped, a snapshot or a rotated file (each cut follows a
		 * clear) still names every process, not only those seen since.
		 */
		if (d->ps.cfg.scan_all_processes_on_start) {
			struct pz_msg *pkt = ps_packet(d);

			ps_scan_all(&d->ps, pkt);
			tw_finish_packet(d->tw);
		}
	}
}

/* ------------------------------------------------------- connection ---- */

static void stop_all(void *user)
{
	struct probes *pr = user;

	while (pr->instances)
		destroy_inst(pr, pr->instances);
}


int probes_create(struct evloop *loop, struct probes **out)
{
	struct probes *pr = calloc(1, sizeof(*pr));
	struct producer_daemon_spec spec = {
		.name = PROBES_PRODUCER_NAME,
		.n_descs = PFC_ARRAY_SIZE(k_sources),
		.cbs = {
			.start_ds = on_start,
			.stop_ds = on_stop,
			.flush = on_flush,
			.clear_incremental_state = on_clear_incremental,
		},
		.on_lost = stop_all,
		.notify_env = "TRACED_PROBES_NOTIFY_FD",
	};
	size_t i;
	int rc;

	if (!pr)
		return -ENOMEM;
	pr->loop = loop;
	for (i = 0; i < PFC_ARRAY_SIZE(k_sources); i++) {
		pr->descs[i].name = k_sources[i].name;
		pr->descs[i].will_notify_on_start = true;
		pr->descs[i].will_notify_on_stop = true;
		pr->descs[i].handles_incremental_state_clear = k_sources[i].clears_incremental_state;
	}
	spec.descs = pr->descs;
	rc = ftrace_ctl_create(loop, &pr->ftrace);
	if (rc < 0) {
		free(pr);
		return rc;
	}
	spec.opts.smb_size_hint_bytes = PROBES_SMB_BYTES;
	spec.opts.page_size_hint_bytes = PROBES_SMB_PAGE_BYTES;
	rc = producer_daemon_create(loop, &spec, pr, &pr->pd);
	if (rc < 0) {
		ftrace_ctl_destroy(pr->ftrace);
		free(pr);
		return rc;
	}
	*out = pr;
	return 0;
}

void probes_destroy(struct probes *pr)
{
	if (!pr)
		return;
	stop_all(pr);
	producer_daemon_destroy(pr->pd);
	ftrace_ctl_destroy(pr->ftrace);
	free(pr);
}

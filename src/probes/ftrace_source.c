// SPDX-License-Identifier: Apache-2.0
/*
 * ftrace_source.c - the linux.ftrace controller (see ftrace_source.h):
 * setting the kernel up (saved state, clock, buffer size, the union of the
 * instances' events), a drain timer that reads every CPU's trace_pipe_raw
 * without blocking until it catches up with the writer (a bounded number
 * of pages per tick), hands the pages to each instance's bundlers and the
 * drain's pids to process_stats, and FtraceStats at start and end.
 */
#include "probes/ftrace_source.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/evloop.h"
#include "base/file.h"
#include "base/hmap.h"
#include "base/log.h"
#include "base/sort.h"
#include "pb_fields.h"
#include "probes/ftrace_bundle.h"
#include "probes/ftrace_categories.h"
#include "probes/ftrace_cpu_reader.h"
#include "probes/tracefs.h"

struct ftrace_instance {
	struct ftrace_instance *next;
	uint64_t id;
	struct trace_writer *tw;
	struct ftrace_event_table *table;
	uint32_t *event_ids;          /* held references, one per enabled event */
	size_t n_event_ids;
	struct ftrace_compact_format compact_fmt;
	struct ftrace_compact_sched *compact;   /* NULL: compact_sched off */
	struct ftrace_bundler *bundlers;        /* one per CPU */
	struct pz_msg bundle;         /* open while a CPU is drained */
	bool bundle_open;
	uint32_t drain_ms;
	struct buf unknown;           /* events asked for that the kernel lacks */
	struct buf failed;            /* events that exist but could not be enabled */
};

struct ftrace_ctl {
	struct evloop *loop;
	struct tracefs fs;
	bool fs_open;
	struct ftrace_page_layout layout;
	size_t page_size;
	struct tracefs_state saved;
	bool changed;                 /* the kernel state is ours until restored */
	struct ftrace_cpu_reader *cpus;
	unsigned n_cpus;
	struct hmap refs;             /* event id -> instances using it */
	struct hmap formats;          /* event id -> struct ftrace_format * */
	struct ftrace_instance *instances;
	uint64_t drain_timer;
	uint32_t drain_ms;
	bool read_error_logged;
	ftrace_pids_cb pids_cb;
	void *pids_user;
	int32_t *pids;                /* pids seen in this drain, for pids_cb */
	size_t n_pids;
};

int ftrace_ctl_create(struct evloop *loop, struct ftrace_ctl **out)
{
	struct ftrace_ctl *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->pids = malloc(FTRACE_MAX_PIDS_PER_DRAIN * sizeof(*c->pids));
	if (!c->pids) {
		free(c);
		return -ENOMEM;
	}
	c->loop = loop;
	hmap_init(&c->refs);
	hmap_init(&c->formats);
	*out = c;
	return 0;
}

void ftrace_ctl_set_pids_cb(struct ftrace_ctl *c, ftrace_pids_cb cb, void *user)
{
	c->pids_cb = cb;
	c->pids_user = user;
}

/* -------------------------------------------------------------- setup ---- */

static int open_tracefs(struct ftrace_ctl *c)
{
	struct buf b = BUF_INIT;
	unsigned i;
	int rc;

	if (c->fs_open)
		return 0;
	rc = tracefs_open(&c->fs, NULL);
	if (rc < 0)
		return rc;
	ftrace_page_layout_default(&c->layout);
	if (tracefs_read(&c->fs, "events/header_page", &b) >= 0 &&
	    ftrace_header_page_parse((const char *)b.data, b.len, &c->layout) < 0)
		LOG_W("cannot parse events/header_page; assuming a 64-bit layout");
	buf_reset(&b);
	if (tracefs_read(&c->fs, "events/header_event", &b) >= 0 &&
	    ftrace_header_event_parse((const char *)b.data, b.len) < 0) {
		buf_fini(&b);
		LOG_E("this kernel's ring buffer record header is not one we can decode");
		return -EPROTONOSUPPORT;
	}
	buf_fini(&b);
	c->page_size = c->layout.data_offset + c->layout.data_size;
	if (c->page_size < 4096 || c->page_size > (1u << 20))
		c->page_size = 4096;
	c->n_cpus = c->fs.n_cpus;
	c->cpus = calloc(c->n_cpus ? c->n_cpus : 1, sizeof(*c->cpus));
	if (!c->cpus)
		return -ENOMEM;
	for (i = 0; i < c->n_cpus; i++)
		c->cpus[i].fd = -1;
	c->fs_open = true;
	return 0;
}

static uint32_t buffer_kb_for(const Perfetto__Protos__FtraceConfig *cfg)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	uint64_t ram = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0;

	if (cfg->has_buffer_size_kb && cfg->buffer_size_kb)
		return cfg->buffer_size_kb > FTRACE_MAX_BUFFER_KB ? FTRACE_MAX_BUFFER_KB
								  : cfg->buffer_size_kb;
	return ram >= (7ull << 30) ? FTRACE_LARGE_BUFFER_KB : FTRACE_DEFAULT_BUFFER_KB;
}

/* Takes the kernel over for the first instance: save, clock, buffers. */
static int claim_kernel(struct ftrace_ctl *c, uint32_t buffer_kb)
{
	unsigned i;
	int rc;

	if (c->changed)
		return 0;
	rc = tracefs_save(&c->fs, &c->saved);
	if (rc < 0)
		return rc;
	/* Kept on disk so --cleanup-after-crash can undo us after a SIGKILL. */
	if (tracefs_state_store(&c->saved, tracefs_state_file()) < 0)
		LOG_W("cannot write %s; a crash would leave ftrace changed", tracefs_state_file());
	c->changed = true;
	tracefs_set_tracing_on(&c->fs, false);
	tracefs_clear_events(&c->fs);
	if (tracefs_set_clock(&c->fs, "boot") < 0)
		LOG_W("the kernel has no 'boot' trace clock; timestamps may not match");
	rc = tracefs_set_buffer_size_kb(&c->fs, buffer_kb);
	if (rc < 0)
		LOG_W("cannot set buffer_size_kb to %u: %s", buffer_kb, strerror(-rc));
	tracefs_clear_buffers(&c->fs);
	for (i = 0; i < c->n_cpus; i++) {
		char rel[64];
		char path[TRACEFS_PATH_MAX * 2];

		snprintf(rel, sizeof(rel), "per_cpu/cpu%u/trace_pipe_raw", i);
		rc = tracefs_path(&c->fs, rel, path, sizeof(path));
		if (rc == 0)
			rc = ftrace_cpu_reader_open(&c->cpus[i], path, c->page_size);
		if (rc < 0) {
			c->cpus[i].fd = -1;
			LOG_W("cannot open %s: %s", rel, strerror(-rc));
		}
	}
	return tracefs_set_tracing_on(&c->fs, true);
}

static void release_kernel(struct ftrace_ctl *c)
{
	unsigned i;
	int rc;

	if (!c->changed)
		return;
	for (i = 0; i < c->n_cpus; i++)
		ftrace_cpu_reader_close(&c->cpus[i]);
	rc = tracefs_restore(&c->fs, &c->saved);
	if (rc < 0)
		LOG_W("restoring the kernel's ftrace state: %s", strerror(-rc));
	else
		unlink(tracefs_state_file());
	tracefs_state_fini(&c->saved);
	c->changed = false;
}

/* A parsed format and the group it lives in (formats name only the event). */
struct cached_format {
	struct ftrace_format fmt;
	char group[FTRACE_NAME_MAX];
};

/* The parsed format of "group/name" (cached by id), or NULL. */
static const struct ftrace_format *load_format(struct ftrace_ctl *c, const char *group,
					       const char *name)
{
	char rel[TRACEFS_PATH_MAX];
	struct cached_format *cf;
	struct buf b = BUF_INIT;
	uint64_t v;
	int rc;

	if (snprintf(rel, sizeof(rel), "events/%s/%s/format", group, name) >= (int)sizeof(rel) ||
	    strlen(group) >= FTRACE_NAME_MAX)
		return NULL;
	rc = tracefs_read(&c->fs, rel, &b);
	cf = rc >= 0 ? malloc(sizeof(*cf)) : NULL;
	if (!cf || ftrace_format_parse((const char *)b.data, b.len, &cf->fmt) < 0) {
		free(cf);
		buf_fini(&b);
		return NULL;
	}
	buf_fini(&b);
	snprintf(cf->group, sizeof(cf->group), "%s", group);
	if (hmap_get(&c->formats, cf->fmt.id, &v)) {
		free(cf);
		return &((const struct cached_format *)(uintptr_t)v)->fmt;
	}
	if (hmap_put(&c->formats, cf->fmt.id, (uint64_t)(uintptr_t)cf) < 0) {
		free(cf);
		return NULL;
	}
	return &cf->fmt;
}

struct add_ctx {
	struct ftrace_ctl *c;
	struct ftrace_instance *inst;
	int err;
};

static void note(struct buf *list, const char *group, const char *name)
{
	if (list->len < 64 * 1024)
		buf_appendf(list, "%s%s/%s", list->len ? "," : "", group, name);
}

/* Adds one event to the instance: table entry, kernel enable, reference. */
static void add_event(const char *group, const char *name, bool exists, void *user)
{
	struct add_ctx *a = user;
	struct ftrace_instance *inst = a->inst;
	const struct ftrace_format *fmt;
	uint64_t refs = 0;
	uint32_t *ids;

	if (!exists) {
		note(&inst->unknown, group, name);
		return;
	}
	fmt = load_format(a->c, group, name);
	if (!fmt || inst->n_event_ids >= FTRACE_MAX_EVENTS_PER_INSTANCE) {
		note(&inst->failed, group, name);
		return;
	}
	if (ftrace_event_table_has(inst->table, (uint16_t)fmt->id))
		return;
	if (ftrace_event_table_add(inst->table, fmt, 0) < 0) {
		note(&inst->failed, group, name);
		return;
	}
	hmap_get(&a->c->refs, fmt->id, &refs);
	if (refs == 0 && tracefs_set_event(&a->c->fs, group, name, true) < 0) {
		note(&inst->failed, group, name);
		return;
	}
	ids = realloc(inst->event_ids, (inst->n_event_ids + 1) * sizeof(*ids));
	if (!ids) {
		a->err = -ENOMEM;
		return;
	}
	inst->event_ids = ids;
	inst->event_ids[inst->n_event_ids++] = fmt->id;
	hmap_put(&a->c->refs, fmt->id, refs + 1);
}

static void add_pattern(struct add_ctx *a, const char *pattern)
{
	if (tracefs_expand_event(&a->c->fs, pattern, add_event, a) < 0)
		buf_appendf(&a->inst->unknown, "%s%s", a->inst->unknown.len ? "," : "", pattern);
}

/* Releases the instance's events; the kernel disables those nobody uses. */
static void drop_events(struct ftrace_ctl *c, struct ftrace_instance *inst)
{
	size_t i;

	for (i = 0; i < inst->n_event_ids; i++) {
		uint64_t refs = 0, v;

		hmap_get(&c->refs, inst->event_ids[i], &refs);
		if (refs > 1) {
			hmap_put(&c->refs, inst->event_ids[i], refs - 1);
			continue;
		}
		hmap_del(&c->refs, inst->event_ids[i], NULL);
		if (hmap_get(&c->formats, inst->event_ids[i], &v)) {
			const struct cached_format *cf = (const void *)(uintptr_t)v;

			tracefs_set_event(&c->fs, cf->group, cf->fmt.name, false);
		}
	}
	inst->n_event_ids = 0;
}

/* ------------------------------------------------------------- stats ---- */

static void write_stats(struct ftrace_ctl *c, struct ftrace_instance *inst, uint32_t phase)
{
	struct pz_msg *pkt = tw_new_packet(inst->tw);
	struct pz_msg st, cs;
	const char *p, *end;
	unsigned i;

	pz_append_varint(pkt, PB_TRACE_PACKET__TIMESTAMP, clock_boottime_ns());
	pz_begin_nested(pkt, PB_TRACE_PACKET__FTRACE_STATS, &st);
	pz_append_varint(&st, PB_FTRACE_STATS__PHASE, phase);
	for (i = 0; i < c->n_cpus; i++) {
		struct tracefs_cpu_stats s;

		if (tracefs_cpu_stats(&c->fs, i, &s) < 0)
			continue;
		pz_begin_nested(&st, PB_FTRACE_STATS__CPU_STATS, &cs);
		pz_append_varint(&cs, PB_FTRACE_CPU_STATS__CPU, i);
		pz_append_varint(&cs, PB_FTRACE_CPU_STATS__ENTRIES, s.entries);
		pz_append_varint(&cs, PB_FTRACE_CPU_STATS__OVERRUN, s.overrun);
		pz_append_varint(&cs, PB_FTRACE_CPU_STATS__COMMIT_OVERRUN, s.commit_overrun);
		pz_append_varint(&cs, PB_FTRACE_CPU_STATS__BYTES_READ, c->cpus[i].bytes_read);
		pz_append_double(&cs, PB_FTRACE_CPU_STATS__OLDEST_EVENT_TS,
				 (double)s.oldest_event_ts_ns / 1e9);
		pz_append_double(&cs, PB_FTRACE_CPU_STATS__NOW_TS, (double)s.now_ts_ns / 1e9);
		pz_append_varint(&cs, PB_FTRACE_CPU_STATS__DROPPED_EVENTS, s.dropped_events);
		pz_append_varint(&cs, PB_FTRACE_CPU_STATS__READ_EVENTS, s.read_events);
		pz_end(&cs);
	}
	/* Comma-separated lists become repeated strings. */
	for (i = 0; i < 2; i++) {
		const struct buf *list = i ? &inst->failed : &inst->unknown;
		uint32_t field = i ? PB_FTRACE_STATS__FAILED_FTRACE_EVENTS
				   : PB_FTRACE_STATS__UNKNOWN_FTRACE_EVENTS;

		p = (const char *)list->data;
		end = p ? p + list->len : NULL;
		while (p && p < end) {
			const char *comma = memchr(p, ',', (size_t)(end - p));
			size_t n = (size_t)((comma ? comma : end) - p);

			pz_append_bytes(&st, field, p, n);
			p += n + 1;
		}
	}
	pz_end(&st);
	tw_finish_packet(inst->tw);
}

/* ------------------------------------------------------------- drain ---- */

static void begin_bundle(struct ftrace_instance *inst, unsigned cpu)
{
	struct pz_msg *pkt = tw_new_packet(inst->tw);

	pz_begin_nested(pkt, PB_TRACE_PACKET__FTRACE_EVENTS, &inst->bundle);
	ftrace_bundler_begin(&inst->bundlers[cpu], &inst->bundle);
	inst->bundle_open = true;
}

static void end_bundle(struct ftrace_instance *inst, unsigned cpu)
{
	if (!inst->bundle_open)
		return;
	ftrace_bundler_end(&inst->bundlers[cpu], &inst->bundle);
	pz_end(&inst->bundle);
	tw_finish_packet(inst->tw);
	inst->bundle_open = false;
}

static void add_page(struct ftrace_instance *inst, unsigned cpu, const uint8_t *page,
		     size_t page_size)
{
	if (!inst->bundle_open)
		begin_bundle(inst, cpu);
	if (ftrace_bundler_add(&inst->bundlers[cpu], page, page_size, &inst->bundle))
		return;
	end_bundle(inst, cpu);
	begin_bundle(inst, cpu);
	ftrace_bundler_add(&inst->bundlers[cpu], page, page_size, &inst->bundle);
}

static int cmp_pid(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

/* Sorts the drain's pids and drops repeats. */
static void dedup_pids(struct ftrace_ctl *c)
{
	size_t i, n = 0;

	sort_n(c->pids, c->n_pids, sizeof(*c->pids), cmp_pid);
	for (i = 0; i < c->n_pids; i++) {
		if (n == 0 || c->pids[n - 1] != c->pids[i])
			c->pids[n++] = c->pids[i];
	}
	c->n_pids = n;
}

/* Hands the drain's pids to process_stats, once, without repeats. */
static void flush_pids(struct ftrace_ctl *c)
{
	if (!c->n_pids)
		return;
	dedup_pids(c);
	if (c->pids_cb)
		c->pids_cb(c->pids, c->n_pids, c->pids_user);
	c->n_pids = 0;
}

/*
 * Collects the pids of a page for process_stats (common_pid). They are
 * handed over once per drain, not per page: a pid that is gone from /proc
 * (a short-lived process) then costs one failed lookup per drain, not one
 * per page it appears in.
 */
static void report_pids(struct ftrace_ctl *c, const uint8_t *page)
{
	struct ftrace_page_iter it;
	struct ftrace_page_header hdr;
	struct ftrace_raw_event ev;
	int32_t last = 0;

	if (!c->pids_cb || ftrace_page_begin(&c->layout, page, c->page_size, &it, &hdr) < 0)
		return;
	while (ftrace_page_next(&it, &ev) > 0) {
		int32_t pid;

		/* common_pid follows common_type, flags and preempt_count. */
		if (ev.len < 8)
			continue;
		memcpy(&pid, ev.data + 4, sizeof(pid));
		if (pid <= 0 || pid == last)
			continue;
		last = pid;
		if (c->n_pids == FTRACE_MAX_PIDS_PER_DRAIN) {
			dedup_pids(c);
			if (c->n_pids > FTRACE_MAX_PIDS_PER_DRAIN / 2)
				flush_pids(c);
		}
		c->pids[c->n_pids++] = pid;
	}
}

/*
 * Whether the reader has caught up with the writer: the page just read
 * holds less than half a page of records. Pages behind the writer are full
 * but for the last record that did not fit, so a page this empty is the one
 * the kernel is still filling (copied out record by record); reading on
 * would return a few records per read(), and with syscall events on, the
 * records of those very reads. A record of more than half a page makes a
 * false positive: the rest waits for the next tick.
 */
static bool is_caught_up(const struct ftrace_ctl *c, const uint8_t *page)
{
	struct ftrace_page_iter it;
	struct ftrace_page_header hdr;

	if (ftrace_page_begin(&c->layout, page, c->page_size, &it, &hdr) < 0)
		return true;
	return hdr.data_bytes < c->layout.data_size / 2;
}

/*
 * Reads one CPU's pages, up to the per-tick bound, until it catches up
 * with the writer, and hands each page to every instance as soon as it is
 * read. The first page of a drain may be small without meaning anything:
 * it is the rest of the page the last drain stopped in. Returns the pages
 * read; *@out_done is false if the bound stopped it.
 */
static size_t drain_cpu(struct ftrace_ctl *c, unsigned cpu, bool is_first_in_drain,
			bool *out_done)
{
	struct ftrace_cpu_reader *r = &c->cpus[cpu];
	struct ftrace_instance *inst;
	const uint8_t *page;
	size_t n = 0;
	int rc = 0;

	*out_done = false;
	while (n < FTRACE_MAX_PAGES_PER_CPU_PER_TICK) {
		page = ftrace_cpu_reader_next(r, &rc);
		if (!page) {
			*out_done = true;
			break;
		}
		n++;
		report_pids(c, page);
		for (inst = c->instances; inst; inst = inst->next)
			add_page(inst, cpu, page, c->page_size);
		if (is_caught_up(c, page) && !(is_first_in_drain && n == 1)) {
			*out_done = true;
			break;
		}
	}
	for (inst = c->instances; inst; inst = inst->next)
		end_bundle(inst, cpu);
	if (rc < 0 && !c->read_error_logged) {
		LOG_W("reading cpu%u's ring buffer: %s", cpu, strerror(-rc));
		c->read_error_logged = true;
	}
	return n;
}

void ftrace_ctl_drain(struct ftrace_ctl *c)
{
	unsigned cpu;
	int rounds;

	if (!c->changed)
		return;
	/*
	 * A CPU that hit the per-tick bound gets a few more rounds: a busy CPU
	 * may hold more than one tick's worth. The others are not read again.
	 */
	for (cpu = 0; cpu < c->n_cpus; cpu++)
		c->cpus[cpu].is_behind = true;
	for (rounds = 0; rounds < FTRACE_MAX_DRAIN_ROUNDS; rounds++) {
		bool any_behind = false;

		for (cpu = 0; cpu < c->n_cpus; cpu++) {
			bool done;

			if (!c->cpus[cpu].is_behind)
				continue;
			drain_cpu(c, cpu, rounds == 0, &done);
			c->cpus[cpu].is_behind = !done;
			any_behind |= !done;
		}
		if (!any_behind)
			break;
	}
	flush_pids(c);
}

static void on_drain_timer(void *user)
{
	ftrace_ctl_drain(user);
}

static void update_drain_timer(struct ftrace_ctl *c)
{
	struct ftrace_instance *inst;
	uint32_t ms = 0;

	for (inst = c->instances; inst; inst = inst->next) {
		if (!ms || inst->drain_ms < ms)
			ms = inst->drain_ms;
	}
	if (ms == c->drain_ms && (c->drain_timer != 0) == (ms != 0))
		return;
	if (c->drain_timer) {
		evloop_del(c->loop, c->drain_timer);
		c->drain_timer = 0;
	}
	c->drain_ms = ms;
	if (ms)
		evloop_add_timer(c->loop, ms, ms, on_drain_timer, c, &c->drain_timer);
}

/* --------------------------------------------------------- instances ---- */

static void instance_free(struct ftrace_instance *inst)
{
	if (!inst)
		return;
	ftrace_event_table_destroy(inst->table);
	ftrace_compact_destroy(inst->compact);
	free(inst->bundlers);
	free(inst->event_ids);
	buf_fini(&inst->unknown);
	buf_fini(&inst->failed);
	free(inst);
}

static const struct ftrace_format *format_by_name(struct ftrace_ctl *c, const char *group,
						  const char *name)
{
	return tracefs_has_event(&c->fs, group, name) ? load_format(c, group, name) : NULL;
}

int ftrace_instance_start(struct ftrace_ctl *c, uint64_t id, const Perfetto__Protos__FtraceConfig *cfg,
			  struct trace_writer *tw, struct ftrace_instance **out)
{
	struct ftrace_instance *inst;
	struct add_ctx a;
	bool compact;
	size_t i, k;
	int rc;

	rc = open_tracefs(c);
	if (rc < 0)
		return rc;
	inst = calloc(1, sizeof(*inst));
	if (!inst)
		return -ENOMEM;
	inst->id = id;
	inst->tw = tw;
	buf_init(&inst->unknown);
	buf_init(&inst->failed);
	inst->table = ftrace_event_table_create();
	inst->bundlers = calloc(c->n_cpus ? c->n_cpus : 1, sizeof(*inst->bundlers));
	if (!inst->table || !inst->bundlers) {
		instance_free(inst);
		return -ENOMEM;
	}
	inst->drain_ms = cfg->has_drain_period_ms && cfg->drain_period_ms
				 ? cfg->drain_period_ms
				 : FTRACE_DEFAULT_DRAIN_PERIOD_MS;
	rc = claim_kernel(c, buffer_kb_for(cfg));
	if (rc < 0) {
		instance_free(inst);
		return rc;
	}
	a.c = c;
	a.inst = inst;
	a.err = 0;
	for (i = 0; i < cfg->n_ftrace_events; i++)
		add_pattern(&a, cfg->ftrace_events[i]);
	for (i = 0; i < cfg->n_atrace_categories; i++) {
		const struct ftrace_category *cat = ftrace_category_find(cfg->atrace_categories[i]);

		if (!cat) {
			buf_appendf(&inst->unknown, "%scategory:%s", inst->unknown.len ? "," : "",
				    cfg->atrace_categories[i]);
			continue;
		}
		for (k = 0; cat->events[k]; k++)
			add_pattern(&a, cat->events[k]);
	}
	/* trace_marker writes arrive as print events when userspace asks. */
	if (cfg->n_atrace_apps || cfg->n_atrace_categories)
		add_pattern(&a, "ftrace/print");
	if (a.err < 0 || inst->n_event_ids == 0) {
		LOG_W("ftrace instance %llu: no event could be enabled (unknown: %s)",
		      (unsigned long long)id, inst->unknown.len ? (char *)inst->unknown.data : "-");
		rc = a.err < 0 ? a.err : -EINVAL;
		drop_events(c, inst);
		instance_free(inst);
		if (!c->instances)
			release_kernel(c);
		return rc;
	}
	/* compact_sched is on unless the config turns it off (Perfetto's default). */
	compact = !(cfg->compact_sched && cfg->compact_sched->has_enabled &&
		    !cfg->compact_sched->enabled);
	if (compact) {
		const struct ftrace_format *sw = format_by_name(c, "sched", "sched_switch");
		const struct ftrace_format *wk = format_by_name(c, "sched", "sched_waking");

		if (sw && !ftrace_event_table_has(inst->table, (uint16_t)sw->id))
			sw = NULL;
		if (wk && !ftrace_event_table_has(inst->table, (uint16_t)wk->id))
			wk = NULL;
		if ((sw || wk) && ftrace_compact_format_init(&inst->compact_fmt, sw, wk) == 0)
			inst->compact = ftrace_compact_create();
	}
	for (i = 0; i < c->n_cpus; i++)
		ftrace_bundler_init(&inst->bundlers[i], &c->layout, inst->table,
				    inst->compact ? &inst->compact_fmt : NULL, inst->compact,
				    (uint32_t)i);
	inst->next = c->instances;
	c->instances = inst;
	write_stats(c, inst, PBE_FTRACE_STATS_PHASE__START_OF_TRACE);
	update_drain_timer(c);
	LOG_I("ftrace instance %llu: %zu events%s%s%s", (unsigned long long)id, inst->n_event_ids,
	      inst->compact ? ", compact_sched" : "", inst->unknown.len ? "; unknown: " : "",
	      inst->unknown.len ? (char *)inst->unknown.data : "");
	*out = inst;
	return 0;
}

void ftrace_instance_stop(struct ftrace_ctl *c, struct ftrace_instance *inst)
{
	struct ftrace_instance **pp;

	if (!inst)
		return;
	/* What the kernel holds now belongs to this session too. */
	ftrace_ctl_drain(c);
	write_stats(c, inst, PBE_FTRACE_STATS_PHASE__END_OF_TRACE);
	for (pp = &c->instances; *pp; pp = &(*pp)->next) {
		if (*pp == inst) {
			*pp = inst->next;
			break;
		}
	}
	drop_events(c, inst);
	instance_free(inst);
	update_drain_timer(c);
	if (!c->instances)
		release_kernel(c);
}

void ftrace_ctl_destroy(struct ftrace_ctl *c)
{
	struct hmap_iter it;
	uint64_t k, v;

	if (!c)
		return;
	while (c->instances) {
		struct ftrace_instance *inst = c->instances;

		c->instances = inst->next;
		drop_events(c, inst);
		instance_free(inst);
	}
	if (c->drain_timer)
		evloop_del(c->loop, c->drain_timer);
	release_kernel(c);
	hmap_iter_init(&it, &c->formats);
	while (hmap_iter_next(&it, &k, &v))
		free((void *)(uintptr_t)v);
	hmap_fini(&c->formats);
	hmap_fini(&c->refs);
	free(c->cpus);
	free(c->pids);
	free(c);
}

int ftrace_cleanup_after_crash(bool hard_reset_without_state)
{
	struct tracefs_state st;
	struct tracefs fs;
	int rc = tracefs_open(&fs, NULL);

	if (rc < 0)
		return rc;
	if (tracefs_state_load(tracefs_state_file(), &st) == 0) {
		rc = tracefs_restore(&fs, &st);
		tracefs_state_fini(&st);
		if (rc == 0)
			unlink(tracefs_state_file());
		return rc;
	}
	return hard_reset_without_state ? tracefs_hard_reset(&fs) : 0;
}

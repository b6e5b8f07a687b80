// SPDX-License-Identifier: Apache-2.0
/*
 * perf_ds.c - one linux.perf instance (see perf_ds.h). Its reader thread
 * (perf_reader.c) empties the CPUs' rings into a queue and classifies the
 * samples; here, on the loop thread, each queued record is used in order:
 * mappings and forks go to the unwinder, and a sample is written
 * counter-only, skipped (out of scope, over the footprint), or with its
 * callstack (kernel frames from the callchain named by kallsyms, then the
 * user frames unwound here, then an "ERROR" frame if unwinding stopped
 * early). The queue is drained every 20 ms (sooner when much waits) in
 * slices of 10 ms, so the loop stays responsive.
 */
#include "perf/perf_ds.h"

#include <errno.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/evloop.h"
#include "base/hmap.h"
#include "base/log.h"
#include "pb_fields.h"
#include "perf/perf_config.h"
#include "perf/perf_intern.h"
#include "perf/perf_packets.h"
#include "perf/perf_reader.h"
#include "perf/ring/stack_tops.h"
#include "perf/ring/perf_record.h"
#include "perf/ring/perf_ring.h"
#include "tracing/tracing.h"

#define PERF_MAX_CPUS 1024u
/* Kernel frames kept per sample (the kernel's own limit is 127). */
#define PERF_MAX_KERNEL_FRAMES 128u
#define PERF_MAX_FRAMES (PERF_MAX_KERNEL_FRAMES + UNWIND_MAX_FRAMES + 1)
/* The loop uses what the reader queued every PERF_DRAIN_PERIOD_MS, or
 * sooner once PERF_DRAIN_NOTIFY_BYTES wait, for at most PERF_DRAIN_SLICE_NS
 * at a time before other events get a turn. Each wake-up costs (50 us
 * of context switch on a paravirtualized VM): at 1 kHz on two CPUs a
 * 250 ms period queues ~0.7 MB of stacks cut at their threads' tops,
 * under the notify mark (whole stacks, before the tops are known, reach
 * it sooner). */
#define PERF_DRAIN_PERIOD_MS 250u
#define PERF_DRAIN_NOTIFY_BYTES (4u << 20)
#define PERF_DRAIN_SLICE_NS 10000000ull
/* Queue room beyond the footprint limit, for samples queued without their
 * stack, counter-only samples and side-band records. */
#define PERF_QUEUE_HEADROOM_BYTES (8u << 20)

enum { SKIP_UNWIND_ENQUEUE = 3, SKIP_NOT_IN_SCOPE = 4 };
/* Rings whose heads a flush keeps on its stack (one per CPU). */
enum { PERF_DS_MAX_RINGS_ON_STACK = 256 };
/* A flush unwinds for at most this long (traced waits 5 s for its ack by
 * default); what is left is unwound after, in slices of the loop. */
#define PERF_FLUSH_BUDGET_NS (2ull * 1000 * 1000 * 1000)

struct perf_ds {
	struct evloop *loop;
	struct perf_shared *sh;
	struct trace_writer *tw;
	uint64_t id;
	struct perf_config cfg;
	bool has_cfg;
	struct perf_sample_layout layout;
	struct perf_ring **rings;
	uint64_t *ring_lost; /* records lost that PERF_RECORD_LOSTs reported, per ring */
	size_t cur_ring;
	bool stopped;
	size_t n_rings;
	struct rec_queue queue;
	bool has_queue;
	struct stack_tops tops; /* per thread: how much stack the reader queues */
	bool has_tops;
	struct perf_reader *reader;
	int notify_fd; /* eventfd: the reader queued records */
	uint64_t notify_watch;
	atomic_bool notified; /* the reader wrote notify_fd since the last drain */
	uint64_t drain_timer;
	struct perf_intern intern;
	bool needs_defaults;
	uint32_t cur_cpu;
	struct perf_ds_stats stats;
	struct unwind_result unwound;
	struct unwind_result cut_unwound; /* sh->test_stack_cut_check */
	uint64_t cut_keep;		  /* ... the stack bytes it kept */
	struct intern_frame frames[PERF_MAX_FRAMES];
	struct perf_sample sample;
};

/* ---------------------------------------------------------- samples ---- */

static void write_defaults_if_needed(struct perf_ds *ds)
{
	if (!ds->needs_defaults)
		return;
	perf_write_defaults(tw_new_packet(ds->tw), &ds->cfg);
	tw_finish_packet(ds->tw);
	ds->needs_defaults = false;
}

static void emit_plain(struct perf_ds *ds, const struct perf_sample *s, int skip_reason)
{
	struct pz_msg *pkt, ps;

	write_defaults_if_needed(ds);
	pkt = tw_new_packet(ds->tw);
	perf_write_sample_header(pkt, s->ts);
	pz_begin_nested(pkt, PB_TRACE_PACKET__PERF_SAMPLE, &ps);
	perf_write_sample_common(&ps, ds->cur_cpu, s);
	if (skip_reason)
		pz_append_varint(&ps, PB_PERF_SAMPLE__SAMPLE_SKIPPED_REASON, (uint64_t)skip_reason);
	pz_end(&ps);
	tw_finish_packet(ds->tw);
}

/* Kernel frames of the callchain (leaf first) into ds->frames. */
static size_t kernel_frames(struct perf_ds *ds, const struct perf_sample *s)
{
	uint64_t i;
	size_t n = 0;

	if (!s->n_ips || perf_sample_ip(s, 0) != PERF_CONTEXT_KERNEL)
		return 0;
	for (i = 1; i < s->n_ips && n < PERF_MAX_KERNEL_FRAMES; i++) {
		uint64_t ip = perf_sample_ip(s, i);
		struct intern_frame *f = &ds->frames[n];

		if (ip >= (uint64_t)PERF_CONTEXT_MAX)
			break;
		memset(f, 0, sizeof(*f));
		f->function = ds->sh->ksyms_loaded ? kallsyms_lookup(&ds->sh->ksyms, ip) : NULL;
		/* One mapping for the whole kernel, named as upstream names it; a
		 * frame without a name keeps its address apart from the others. */
		f->map_path = "kernel";
		if (!f->function)
			f->rel_pc = ip;
		n++;
	}
	return n;
}

/* The user part of a kernel-walked callchain (after PERF_CONTEXT_USER). */
static size_t kernel_user_pcs(const struct perf_sample *s, uint64_t *pcs, size_t max)
{
	uint64_t i;
	size_t n = 0;
	bool user = false;

	for (i = 0; i < s->n_ips && n < max; i++) {
		uint64_t ip = perf_sample_ip(s, i);

		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			user = ip == (uint64_t)PERF_CONTEXT_USER;
			continue;
		}
		if (user)
			pcs[n++] = ip;
	}
	return n;
}

/* Tests: unwinds @s cut as the reader would cut it now (before this
 * sample teaches anything), into ds->cut_unwound (n = 0: not cut). */
static void unwind_cut(struct perf_ds *ds, const struct perf_sample *s)
{
	struct perf_sample cut = *s;

	ds->cut_unwound.n = 0;
	cut.stack_bytes = stack_tops_keep(&ds->tops, s->pid, s->tid, perf_sample_user_sp(s),
					  s->stack_bytes);
	ds->cut_keep = cut.stack_bytes;
	if (cut.stack_bytes < s->stack_bytes)
		unwind_sample(ds->sh->unwinder, &cut, PERF_UNWIND_DWARF, &ds->cut_unwound);
}

/* Tests: the cut stack's frames and error against the whole stack's. */
static void check_cut(struct perf_ds *ds, const struct perf_sample *s)
{
	const struct unwind_result *a = &ds->cut_unwound, *b = &ds->unwound;
	size_t i;
	bool same = a->n == b->n && a->error == b->error;

	for (i = 0; same && i < a->n; i++)
		same = a->frames[i].pc == b->frames[i].pc;
	ds->stats.stack_cut_compared++;
	if (!same && ++ds->stats.stack_cut_differ <= 5)
		LOG_W("stack cut check: pid %u tid %u: %llu bytes of %llu gave %zu frames (error %d), "
		      "the whole stack %zu (error %d)",
		      s->pid, s->tid, (unsigned long long)ds->cut_keep,
		      (unsigned long long)s->stack_bytes, a->n, (int)a->error, b->n, (int)b->error);
	ds->cut_unwound.n = 0;
}

static void emit_with_callstack(struct perf_ds *ds, const struct perf_sample *s)
{
	struct unwind_result *u = &ds->unwound;
	enum unwind_error err = UNWIND_ERR_NONE;
	size_t n, i;
	struct pz_msg *pkt, interned, ps;
	uint64_t cs;
	bool unwound = false;

	if (ds->sh->test_unwind_delay_us)
		usleep(ds->sh->test_unwind_delay_us);
	n = ds->cfg.kernel_frames ? kernel_frames(ds, s) : 0;
	u->n = 0;
	u->stack_top = 0;
	u->past_copy = false;
	if (ds->cfg.unwind == PERF_UNWIND_KERNEL_FRAME_POINTER) {
		uint64_t pcs[UNWIND_MAX_FRAMES];
		size_t n_pcs = kernel_user_pcs(s, pcs, UNWIND_MAX_FRAMES);

		if (n_pcs) {
			unwind_symbolize(ds->sh->unwinder, s->pid, pcs, n_pcs, u);
			unwound = true;
		}
	} else if ((ds->cfg.unwind == PERF_UNWIND_DWARF ||
		    ds->cfg.unwind == PERF_UNWIND_FRAME_POINTER) &&
		   s->has_regs) {
		if (ds->sh->test_stack_cut_check && ds->cfg.unwind == PERF_UNWIND_DWARF)
			unwind_cut(ds, s);
		unwind_sample(ds->sh->unwinder, s, ds->cfg.unwind, u);
		if (ds->cut_unwound.n)
			check_cut(ds, s);
		unwound = true;
	}
	if (unwound) {
		for (i = 0; i < u->n; i++) {
			struct intern_frame *f = &ds->frames[n++];
			const struct unwind_module *m = u->frames[i].module;

			memset(f, 0, sizeof(*f));
			f->function = u->frames[i].function;
			f->rel_pc = u->frames[i].rel_pc;
			if (m) {
				f->map_path = m->path;
				f->build_id = m->build_id;
				f->build_id_len = m->build_id_len;
				f->map_start = m->start;
				f->map_end = m->end;
			} else {
				f->map_path = "";
				f->rel_pc = u->frames[i].pc;
			}
		}
		err = u->error;
		if (u->stack_top)
			stack_tops_learn(&ds->tops, s->pid, s->tid, u->stack_top);
		else if (u->past_copy)
			stack_tops_forget(&ds->tops, s->pid, s->tid); /* maybe cut too short */
		if (err != UNWIND_ERR_NONE) {
			struct intern_frame *f = &ds->frames[n++];

			memset(f, 0, sizeof(*f));
			f->function = unwind_error_frame_name(err);
			ds->stats.unwind_errors++;
		}
	}
	write_defaults_if_needed(ds);
	pkt = tw_new_packet(ds->tw);
	perf_write_sample_header(pkt, s->ts);
	pz_begin_nested(pkt, PB_TRACE_PACKET__INTERNED_DATA, &interned);
	cs = perf_intern_callstack(&ds->intern, ds->frames, n, &interned);
	pz_end(&interned);
	pz_begin_nested(pkt, PB_TRACE_PACKET__PERF_SAMPLE, &ps);
	perf_write_sample_common(&ps, ds->cur_cpu, s);
	if (cs)
		pz_append_varint(&ps, PB_PERF_SAMPLE__CALLSTACK_IID, cs);
	if (err != UNWIND_ERR_NONE)
		pz_append_varint(&ps, PB_PERF_SAMPLE__UNWIND_ERROR, err);
	pz_end(&ps);
	tw_finish_packet(ds->tw);
}

/* A sample as the reader classified it (enum perf_sample_class). */
static void on_sample(struct perf_ds *ds, const struct perf_sample *s, unsigned cls)
{
	ds->stats.samples++;
	switch (cls) {
	case PERF_CLASS_CALLSTACK:
		emit_with_callstack(ds, s);
		break;
	case PERF_CLASS_OUT_OF_SCOPE:
		ds->stats.skipped_scope++;
		emit_plain(ds, s, SKIP_NOT_IN_SCOPE);
		break;
	case PERF_CLASS_OVER_FOOTPRINT:
		ds->stats.skipped_footprint++;
		emit_plain(ds, s, SKIP_UNWIND_ENQUEUE);
		break;
	default:
		emit_plain(ds, s, 0);
		break;
	}
}

/* Mappings and forks: what the unwinder must know before the samples the
 * reader queued after them. */
static void on_sideband(struct perf_ds *ds, const uint8_t *rec, size_t len)
{
	struct perf_fork fk;
	struct perf_mmap2 mm;

	switch (perf_record_type(rec)) {
	case PERF_RECORD_MMAP2:
		if (perf_parse_mmap2(rec, len, &mm) == PERF_PARSE_OK)
			unwinder_note_mmap(ds->sh->unwinder, &mm);
		else
			ds->stats.malformed++;
		break;
	case PERF_RECORD_FORK:
		if (perf_parse_fork(rec, len, &fk) == PERF_PARSE_OK && fk.pid != fk.ppid)
			unwinder_note_fork(ds->sh->unwinder, fk.ppid, fk.pid);
		break;
	default:
		break;
	}
}

static void on_record(struct perf_ds *ds, const uint8_t *rec, size_t len, unsigned cls)
{
	struct perf_exit ex;
	struct perf_comm cm;
	uint64_t lost;

	switch (perf_record_type(rec)) {
	case PERF_RECORD_SAMPLE:
		if (perf_parse_sample(&ds->layout, rec, len, &ds->sample) != PERF_PARSE_OK) {
			ds->stats.malformed++;
			break;
		}
		on_sample(ds, &ds->sample, cls);
		break;
	case PERF_RECORD_LOST:
		if (perf_parse_lost(rec, len, &lost) != PERF_PARSE_OK) {
			ds->stats.malformed++;
			break;
		}
		ds->stats.records_lost += lost;
		ds->ring_lost[ds->cur_ring] += lost;
		write_defaults_if_needed(ds);
		perf_write_lost(tw_new_packet(ds->tw), ds->cur_cpu, lost);
		tw_finish_packet(ds->tw);
		break;
	case PERF_RECORD_THROTTLE:
		ds->stats.throttles++;
		break;
	case PERF_RECORD_EXIT:
		if (perf_parse_exit(rec, len, &ex) != PERF_PARSE_OK)
			break;
		stack_tops_forget(&ds->tops, ex.pid, ex.tid);
		if (ex.pid == ex.tid) {
			stack_tops_unblock_pid(&ds->tops, ex.pid);
			unwinder_forget(ds->sh->unwinder, ex.pid);
		}
		break;
	case PERF_RECORD_COMM:
		/* An execve, in its place among the samples: those before it
		 * are used, the new program's stack tops are learned from here. */
		if (perf_parse_comm(rec, len, &cm) == PERF_PARSE_OK && cm.exec)
			stack_tops_unblock_pid(&ds->tops, cm.pid);
		break;
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_FORK:
		on_sideband(ds, rec, len);
		break;
	default:
		break;
	}
}

/* Uses queued records for up to @budget_ns (0: no time bound), and only
 * up to @n_max records (0: until the queue is empty).
 * Return: true if some are left. */
static bool drain_queue_n(struct perf_ds *ds, uint64_t budget_ns, uint64_t n_max)
{
	uint64_t end = budget_ns ? clock_monotonic_ns() + budget_ns : 0;
	struct rq_entry e;
	size_t n = 0;

	atomic_store(&ds->notified, false);
	while ((!n_max || n < n_max) && rq_peek(&ds->queue, &e)) {
		if (end && (n & 15) == 15 && clock_monotonic_ns() >= end)
			break;
		if (e.tag < ds->n_rings && e.len >= 8) {
			ds->cur_ring = e.tag;
			ds->cur_cpu = (uint32_t)perf_ring_cpu(ds->rings[e.tag]);
			on_record(ds, e.data, e.len, e.flags);
		}
		rq_pop(&ds->queue);
		n++;
	}
	return rq_peek(&ds->queue, &e);
}

static bool drain_queue(struct perf_ds *ds, uint64_t budget_ns)
{
	return drain_queue_n(ds, budget_ns, 0);
}

/* A slice of the queue; what is left waits for the loop's other events
 * (a wake-up of our own, on this thread: no IPI). */
static void drain_slice(struct perf_ds *ds)
{
	uint64_t one = 1;

	if (drain_queue(ds, PERF_DRAIN_SLICE_NS) && write(ds->notify_fd, &one, sizeof(one)) < 0) {
		/* only on counter overflow, when a wake-up is pending anyway */
	}
}

/* The reader says much is queued (or a slice left some). */
static void on_queued(int fd, unsigned revents, void *user)
{
	struct perf_ds *ds = user;
	uint64_t v;

	(void)revents;
	if (read(fd, &v, sizeof(v)) < 0) {
		/* EAGAIN: another wake-up read it */
	}
	drain_slice(ds);
}

static void on_drain_tick(void *user)
{
	drain_slice(user);
}

/* Everything the kernel holds now, read and used on this thread (while
 * the queue is at its budget: read, use, read again). */
static void read_all_now(struct perf_ds *ds)
{
	enum perf_read_rc rc;

	do {
		rc = perf_reader_read(ds->reader, true);
		drain_queue(ds, 0);
	} while (rc == PERF_READ_QUEUE_FULL);
}

/* What the rings and the queue held when called, read and used (for up
 * to PERF_FLUSH_BUDGET_NS): the reader thread goes on meanwhile, so under
 * a storm of samples that are slow to unwind, "until nothing is left"
 * would never come (a flush must end; what came after it, or did not fit
 * in the budget, waits for the next slices). */
static void read_upto_now(struct perf_ds *ds)
{
	uint64_t heads[PERF_DS_MAX_RINGS_ON_STACK];
	uint64_t *h = heads;
	size_t n = perf_reader_rings(ds->reader);
	enum perf_read_rc rc;
	uint64_t target, popped, deadline, now;

	if (n > PERF_DS_MAX_RINGS_ON_STACK) {
		h = malloc(n * sizeof(*h));
		if (!h) {
			read_all_now(ds);
			return;
		}
	}
	perf_reader_heads(ds->reader, h);
	deadline = clock_monotonic_ns() + PERF_FLUSH_BUDGET_NS;
	do {
		rc = perf_reader_read_upto(ds->reader, h);
		/* This thread alone pops: what was committed now is used. */
		target = rq_committed(&ds->queue);
		popped = rq_popped(&ds->queue);
		now = clock_monotonic_ns();
		if (now >= deadline)
			break; /* the rest is unwound after the flush is acked */
		if (target > popped)
			drain_queue_n(ds, deadline - now, target - popped);
	} while (rc == PERF_READ_QUEUE_FULL && clock_monotonic_ns() < deadline);
	if (rq_committed(&ds->queue) > rq_popped(&ds->queue)) {
		uint64_t one = 1;

		/* Left for the loop's next slices: wake it for them. */
		if (write(ds->notify_fd, &one, sizeof(one)) < 0) {
			/* EAGAIN: a wake-up is pending anyway */
		}
	}
	if (h != heads)
		free(h);
}

void perf_ds_drain(struct perf_ds *ds)
{
	if (ds->reader && !ds->stopped)
		read_upto_now(ds);
	else if (ds->reader)
		read_all_now(ds);
	tw_flush(ds->tw);
}

void perf_ds_clear_incremental(struct perf_ds *ds)
{
	perf_intern_clear(&ds->intern);
	ds->needs_defaults = true;
}

/* ------------------------------------------------------------ setup ---- */

static int open_rings(struct perf_ds *ds, char *err, size_t err_len)
{
	struct perf_event_attr leader, followers[PERF_MAX_FOLLOWERS];
	const char *filters[PERF_MAX_FOLLOWERS + 1];
	long n_cpus = sysconf(_SC_NPROCESSORS_CONF);
	size_t i, n_want;
	int rc = 0;

	perf_config_leader_attr(&ds->cfg, &leader);
	/* The kernel's own count of what it could not write: the losses no
	 * PERF_RECORD_LOST reports (perf_ds_stop()). Kernels before 6.0
	 * refuse the bit (EINVAL): the first ring retries without it. */
	leader.read_format |= PFC_PERF_FORMAT_LOST;
	filters[0] = ds->cfg.timebase.tp_filter;
	for (i = 0; i < ds->cfg.n_followers; i++) {
		perf_config_follower_attr(&ds->cfg, i, &followers[i]);
		filters[i + 1] = ds->cfg.followers[i].tp_filter;
	}
	ds->layout.sample_type = leader.sample_type;
	ds->layout.read_format = leader.read_format;
	ds->layout.n_followers = (uint32_t)ds->cfg.n_followers;
	ds->layout.n_user_regs = (uint32_t)__builtin_popcountll(leader.sample_regs_user);
	if (n_cpus < 1)
		n_cpus = 1;
	if ((size_t)n_cpus > PERF_MAX_CPUS)
		n_cpus = PERF_MAX_CPUS;
	n_want = ds->cfg.n_target_cpus ? ds->cfg.n_target_cpus : (size_t)n_cpus;
	ds->cfg.ring_pages = perf_config_ring_pages(&ds->cfg, n_want);
	ds->rings = calloc(n_want, sizeof(*ds->rings));
	ds->ring_lost = calloc(n_want, sizeof(*ds->ring_lost));
	if (!ds->rings || !ds->ring_lost)
		return -ENOMEM;
	for (i = 0; i < n_want; i++) {
		int cpu = ds->cfg.n_target_cpus ? (int)ds->cfg.target_cpus[i] : (int)i;
		struct perf_ring *r;

		if (cpu >= n_cpus)
			continue;
		rc = perf_ring_open(&leader, followers, ds->cfg.n_followers, filters, cpu,
				    ds->cfg.ring_pages, &r);
		if (rc == -EINVAL && !ds->n_rings && (leader.read_format & PFC_PERF_FORMAT_LOST)) {
			leader.read_format &= ~(uint64_t)PFC_PERF_FORMAT_LOST;
			ds->layout.read_format = leader.read_format;
			rc = perf_ring_open(&leader, followers, ds->cfg.n_followers, filters, cpu,
					    ds->cfg.ring_pages, &r);
		}
		if ((rc == -EPERM || rc == -ENOMEM) && ds->cfg.ring_pages_auto &&
		    ds->cfg.ring_pages > PERF_DEFAULT_RING_PAGES) {
			/* Over the locked-memory limit (perf_event_mlock_kb, not
			 * root): the grown default falls back to upstream's. */
			ds->cfg.ring_pages = PERF_DEFAULT_RING_PAGES;
			rc = perf_ring_open(&leader, followers, ds->cfg.n_followers, filters, cpu,
					    ds->cfg.ring_pages, &r);
		}
		if (rc == -ENODEV && !ds->cfg.n_target_cpus) {
			rc = 0; /* an offline CPU */
			continue;
		}
		if (rc < 0) {
			if (ds->cfg.ignore_open_failure) {
				rc = 0;
				continue;
			}
			snprintf(err, err_len, "perf_event_open on cpu %d failed: %s%s", cpu,
				 strerror(-rc),
				 (rc == -ENOENT || rc == -EOPNOTSUPP) && leader.type == PERF_TYPE_HARDWARE
					 ? " (no hardware PMU for this counter on this machine)"
				 : rc == -EINVAL && ds->cfg.timebase.tp_filter[0]
					 ? " (is the tracepoint filter valid?)"
					 : "");
			return rc;
		}
		ds->rings[ds->n_rings++] = r;
	}
	if (!ds->n_rings) {
		snprintf(err, err_len, "no CPU could be opened");
		return -ENODEV;
	}
	return 0;
}

/* The queue, its reader and the loop's watch on it (the thread starts
 * once the events are enabled). */
static int start_queue(struct perf_ds *ds, char *err, size_t err_len)
{
	uint64_t limit = ds->cfg.max_enqueued_footprint_bytes ? ds->cfg.max_enqueued_footprint_bytes
							       : PERF_DEFAULT_ENQUEUED_BYTES;
	struct perf_reader_spec spec = {
		.rings = ds->rings,
		.n_rings = ds->n_rings,
		.cfg = &ds->cfg,
		.layout = &ds->layout,
		.queue = &ds->queue,
		.footprint_limit = limit,
		.footprint = &ds->sh->enqueued_bytes,
		.max_records = (size_t)ds->cfg.samples_per_tick_limit,
		.notify_bytes = PERF_DRAIN_NOTIFY_BYTES,
		.notified = &ds->notified,
		.tops = ds->sh->test_stack_cut_check ? NULL : &ds->tops,
		.watch_rings = perf_config_ring_ms(&ds->cfg, ds->cfg.ring_pages) <
			       (uint64_t)PERF_TIMER_ONLY_PERIODS * ds->cfg.read_period_ms,
	};
	int rc;

	rc = stack_tops_init(&ds->tops);
	if (rc < 0)
		goto fail;
	ds->has_tops = true;
	rc = rq_init(&ds->queue, limit + PERF_QUEUE_HEADROOM_BYTES, &ds->sh->enqueued_bytes);
	if (rc < 0)
		goto fail;
	ds->has_queue = true;
	ds->notify_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ds->notify_fd < 0) {
		rc = -errno;
		goto fail;
	}
	spec.notify_fd = ds->notify_fd;
	LOG_I("linux.perf instance %llu: %zu rings of %u pages, read every %u ms%s",
	      (unsigned long long)ds->id, ds->n_rings, ds->cfg.ring_pages, ds->cfg.read_period_ms,
	      spec.watch_rings ? " and on their wake-ups" : " (they hold over two periods)");
	rc = perf_reader_create(&spec, &ds->reader);
	if (rc < 0)
		goto fail;
	rc = evloop_add_fd(ds->loop, ds->notify_fd, EVLOOP_READ, on_queued, ds, &ds->notify_watch);
	if (rc < 0)
		goto fail;
	rc = evloop_add_timer(ds->loop, PERF_DRAIN_PERIOD_MS, PERF_DRAIN_PERIOD_MS, on_drain_tick,
			      ds, &ds->drain_timer);
	if (rc < 0)
		goto fail;
	return 0;
fail:
	snprintf(err, err_len, "cannot set up the ring reader: %s", strerror(-rc));
	return rc;
}

int perf_ds_create(struct evloop *loop, struct perf_shared *sh, struct trace_writer *tw,
		   uint64_t id, const Perfetto__Protos__PerfEventConfig *cfg, struct perf_ds **out,
		   char *err, size_t err_len)
{
	struct perf_ds *ds = calloc(1, sizeof(*ds));
	size_t i;
	int rc;

	if (!ds)
		return -ENOMEM;
	ds->loop = loop;
	ds->sh = sh;
	ds->tw = tw;
	ds->id = id;
	ds->notify_fd = -1;
	perf_intern_init(&ds->intern);
	rc = perf_config_parse(cfg, NULL, &ds->cfg, err, err_len);
	if (rc < 0)
		goto fail;
	ds->has_cfg = true;
	if (ds->cfg.kernel_frames && !sh->ksyms_loaded) {
		if (kallsyms_load(&sh->ksyms, "/proc/kallsyms") == 0)
			sh->ksyms_loaded = true;
		else
			LOG_W("cannot read /proc/kallsyms: kernel frames stay unnamed");
	}
	rc = open_rings(ds, err, err_len);
	if (rc < 0)
		goto fail;
	rc = start_queue(ds, err, err_len);
	if (rc < 0)
		goto fail;
	ds->needs_defaults = true;
	write_defaults_if_needed(ds);
	for (i = 0; i < ds->n_rings; i++) {
		rc = perf_ring_enable(ds->rings[i]);
		if (rc < 0) {
			snprintf(err, err_len, "cannot enable the events: %s", strerror(-rc));
			goto fail;
		}
	}
	rc = perf_reader_start(ds->reader);
	if (rc < 0) {
		snprintf(err, err_len, "cannot start the ring reader: %s", strerror(-rc));
		goto fail;
	}
	*out = ds;
	return 0;
fail:
	perf_ds_destroy(ds);
	return rc;
}

/* Losses the kernel counted (PERF_FORMAT_LOST) beyond what its LOST
 * records said: a ring whose every record was too big for it never gets a
 * LOST record, nor do losses after the last record that fit. Written as
 * one more kernel_records_lost packet per ring, so the trace's count is the
 * kernel's. */
static void report_unwritten_losses(struct perf_ds *ds)
{
	uint8_t buf[8 * (4 + 3 * (PERF_MAX_FOLLOWERS + 1))];
	size_t i;

	if (!(ds->layout.read_format & PFC_PERF_FORMAT_LOST))
		return;
	for (i = 0; i < ds->n_rings; i++) {
		uint64_t total = 0;
		int n = perf_ring_read_values(ds->rings[i], buf, sizeof(buf));

		if (n <= 0 || perf_parse_read_lost(&ds->layout, buf, (size_t)n, &total) !=
				      PERF_PARSE_OK) {
			ds->stats.malformed++;
			continue;
		}
		if (total <= ds->ring_lost[i])
			continue;
		ds->stats.records_lost += total - ds->ring_lost[i];
		ds->stats.lost_unreported += total - ds->ring_lost[i];
		write_defaults_if_needed(ds);
		perf_write_lost(tw_new_packet(ds->tw), (uint32_t)perf_ring_cpu(ds->rings[i]),
				total - ds->ring_lost[i]);
		tw_finish_packet(ds->tw);
		ds->ring_lost[i] = total;
	}
}

/* Ends the instance's events, reader thread and wake-ups (once): the
 * rings and the queue are this thread's from then on. Return: false if it
 * was already stopped. */
static bool quiesce(struct perf_ds *ds)
{
	size_t i;

	if (!ds || ds->stopped)
		return false;
	ds->stopped = true;
	for (i = 0; i < ds->n_rings; i++)
		perf_ring_disable(ds->rings[i]);
	perf_reader_stop(ds->reader);
	if (ds->notify_watch)
		evloop_del(ds->loop, ds->notify_watch);
	ds->notify_watch = 0;
	if (ds->drain_timer)
		evloop_del(ds->loop, ds->drain_timer);
	ds->drain_timer = 0;
	return true;
}

void perf_ds_stop(struct perf_ds *ds)
{
	if (!quiesce(ds) || !ds->reader)
		return;
	read_all_now(ds);
	report_unwritten_losses(ds);
	tw_flush(ds->tw);
}

void perf_ds_purge(struct perf_ds *ds)
{
	struct rq_entry e;

	if (!quiesce(ds))
		return;
	while (ds->has_queue && rq_peek(&ds->queue, &e))
		rq_pop(&ds->queue);
	perf_write_guardrail_stop(tw_new_packet(ds->tw));
	tw_finish_packet(ds->tw);
	tw_flush(ds->tw);
}

uint32_t perf_ds_memory_limit_kb(const struct perf_ds *ds)
{
	return ds->cfg.max_daemon_memory_kb;
}

void perf_ds_destroy(struct perf_ds *ds)
{
	size_t i;

	if (!ds)
		return;
	perf_ds_stop(ds);
	perf_reader_destroy(ds->reader);
	if (ds->notify_fd >= 0)
		close(ds->notify_fd);
	if (ds->has_queue)
		rq_fini(&ds->queue);
	if (ds->has_tops)
		stack_tops_fini(&ds->tops);
	for (i = 0; i < ds->n_rings; i++)
		perf_ring_close(ds->rings[i]);
	free(ds->rings);
	free(ds->ring_lost);
	if (ds->has_cfg)
		perf_config_fini(&ds->cfg);
	perf_intern_fini(&ds->intern);
	free(ds);
}

uint64_t perf_ds_id(const struct perf_ds *ds)
{
	return ds->id;
}

void perf_ds_get_stats(const struct perf_ds *ds, struct perf_ds_stats *out)
{
	struct perf_reader_stats rs;

	*out = ds->stats;
	if (ds->reader) {
		perf_reader_get_stats(ds->reader, &rs);
		out->malformed += rs.malformed;
		out->stack_bytes_copied = rs.stack_bytes_copied;
		out->stack_bytes_queued = rs.stack_bytes_queued;
	}
}

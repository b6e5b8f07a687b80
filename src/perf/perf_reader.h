/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perf_reader.h - the thread that empties one linux.perf instance's
 * per-CPU rings into its rec_queue, so the kernel's rings never wait on
 * unwinding: a cold start (every binary's ELF, CFI and symbols read for
 * the first time) can keep the loop thread busy for tens of milliseconds,
 * while a 1 MiB ring of 64 KiB stack samples fills in 16 ms at 1 kHz.
 *
 * Each pass first scans every ring for mappings and forks (queued first,
 * left in the ring), then takes the records up to the heads seen before
 * that scan, so a sample always follows its process's mappings in the
 * queue. A sample is classified here, while its process still exists
 * (scope by pid and cmdline, kernel threads, the footprint budget), and
 * queued with its user stack cut to what the kernel really copied
 * (dyn_size) or dropped when it will not be unwound.
 */
#ifndef PFC_PERF_PERF_READER_H
#define PFC_PERF_PERF_READER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf/perf_config.h"
#include "perf/ring/perf_record.h"
#include "perf/ring/perf_ring.h"
#include "perf/ring/rec_queue.h"

/* What the reader decided about a queued sample (rq_entry.flags). */
enum perf_sample_class {
	PERF_CLASS_PLAIN = 0,	    /* written without a callstack */
	PERF_CLASS_CALLSTACK = 1,  /* to be unwound */
	PERF_CLASS_OUT_OF_SCOPE = 2,
	PERF_CLASS_OVER_FOOTPRINT = 3,
};

/* Result of one pass. */
enum perf_read_rc {
	PERF_READ_DONE = 0,	 /* every ring read up to its bound */
	PERF_READ_QUEUE_FULL = 1 /* stopped early: the queue is at its budget */
};

struct perf_reader;

struct stack_tops;

struct perf_reader_spec {
	struct perf_ring *const *rings; /* borrowed; rq_entry.tag is the index */
	size_t n_rings;
	const struct perf_config *cfg;	       /* borrowed, read-only */
	const struct perf_sample_layout *layout; /* borrowed, read-only */
	struct rec_queue *queue;		       /* borrowed */
	/* An eventfd written after a pass that left at least @notify_bytes
	 * queued, once until *@notified is cleared again (by the consumer,
	 * before it drains): the consumer otherwise drains on its own timer,
	 * since every cross-thread wake-up costs (IPIs, context switches). */
	int notify_fd;
	size_t notify_bytes;
	atomic_bool *notified;
	/* Queued bytes (@footprint: the queue's shared_bytes, every
	 * instance's) past which a sample with a stack is queued without it,
	 * as PERF_CLASS_OVER_FOOTPRINT; 0: no limit. */
	uint64_t footprint_limit;
	_Atomic uint64_t *footprint;
	size_t max_records; /* per ring and pass; 0: no bound */
	/* Per thread, how much of a sample's stack to queue (the rest is
	 * above the thread's outermost frame); NULL: all of it. */
	struct stack_tops *tops;
	/* Wait on the rings' own wake-ups too (else the read period alone
	 * wakes the thread: rings that hold several periods, see
	 * perf_config_ring_ms()). */
	bool watch_rings;
};

/* Return: 0 and *out, or -errno. The thread starts with perf_reader_start(). */
int perf_reader_create(const struct perf_reader_spec *spec, struct perf_reader **out);
/* Starts the thread: it reads on each ring's wake-up and every read period. */
int perf_reader_start(struct perf_reader *r);
/* Stops and joins the thread (idempotent); the rings are then read only by
 * perf_reader_read() on the caller's thread. */
void perf_reader_stop(struct perf_reader *r);
void perf_reader_destroy(struct perf_reader *r);

/**
 * perf_reader_read() - One pass now, on the calling thread (flush, stop),
 * serialized with the reader thread's own passes.
 * @all: every record up to the heads, not max_records per ring.
 * Return: enum perf_read_rc.
 */
enum perf_read_rc perf_reader_read(struct perf_reader *r, bool all);
/* The number of rings, and each ring's write position now, into @heads
 * (perf_reader_rings() of them): the bound of a flush. */
size_t perf_reader_rings(const struct perf_reader *r);
void perf_reader_heads(struct perf_reader *r, uint64_t *heads);
/**
 * perf_reader_read_upto() - perf_reader_read(r, true) that reads no ring
 * past @limits (from perf_reader_heads()): a flush under a sample storm
 * ends once what was there when it began is read, however fast more comes.
 */
enum perf_read_rc perf_reader_read_upto(struct perf_reader *r, const uint64_t *limits);

struct perf_reader_stats {
	uint64_t malformed;	     /* records dropped as malformed */
	uint64_t stack_bytes_copied; /* user stack bytes the kernel copied (dyn_size)
				      * for samples to unwind (in scope) */
	uint64_t stack_bytes_queued; /* ... and the reader queued (spec.tops) */
};

void perf_reader_get_stats(struct perf_reader *r, struct perf_reader_stats *out);

#endif

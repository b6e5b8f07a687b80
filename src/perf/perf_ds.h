/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perf_ds.h - one linux.perf data source instance: its events on every
 * CPU, the reader thread that empties their rings into a queue
 * (perf_reader.h), the per-sample work on the loop thread (unwinding,
 * kernel symbols) and the packets of its sequence. Created and driven by
 * traced_perf's producer on its loop thread.
 */
#ifndef PFC_PERF_PERF_DS_H
#define PFC_PERF_PERF_DS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "config/perf_event_config.pb-c.h"
#include "perf/unwind/kallsyms.h"
#include "perf/unwind/unwind.h"

struct evloop;
struct trace_writer;
struct perf_ds;

/* State shared by every instance of the daemon (borrowed by each). */
struct perf_shared {
	struct unwinder *unwinder;
	struct kallsyms ksyms;
	bool ksyms_loaded;
	/* Bytes every instance's reader has queued and the loop has not used
	 * yet: max_enqueued_footprint_kb counts them all, as upstream's. */
	_Atomic uint64_t enqueued_bytes;
	/* Tests only (TRACED_PERF_TEST_UNWIND_DELAY_US): each unwind first
	 * sleeps this long, as a slow unwinder (a cold cache, a big binary). */
	uint32_t test_unwind_delay_us;
	/* Tests only (TRACED_PERF_TEST_STACK_CUT_CHECK): the reader queues
	 * whole stacks, and each DWARF stack is unwound twice, cut as the
	 * reader would have cut it and whole; differences are counted. */
	bool test_stack_cut_check;
};

/* Counters of one instance, logged when it stops. */
struct perf_ds_stats {
	uint64_t samples;
	uint64_t skipped_scope;
	uint64_t skipped_footprint;
	uint64_t records_lost;    /* all of them, the kernel's count at stop */
	uint64_t lost_unreported; /* of those, what no PERF_RECORD_LOST said */
	uint64_t throttles;
	uint64_t malformed;
	uint64_t unwind_errors;
	uint64_t stack_bytes_copied; /* by the kernel, with the samples */
	uint64_t stack_bytes_queued; /* of those, kept for unwinding */
	uint64_t stack_cut_compared; /* test_stack_cut_check */
	uint64_t stack_cut_differ;
};

/**
 * perf_ds_create() - Parse @cfg, open and enable the events on every CPU,
 * write the sequence's defaults and start the read timer.
 * @tw: the instance's trace writer (borrowed; outlives the instance).
 * @err: a one-line reason on failure.
 * Return: 0 and *out (perf_ds_destroy()), or -errno: -EINVAL/-ENOENT for a
 * bad config, -ENOENT/-EOPNOTSUPP when the event does not exist here (no
 * PMU), -EACCES/-EPERM when not allowed.
 */
int perf_ds_create(struct evloop *loop, struct perf_shared *sh, struct trace_writer *tw,
		   uint64_t id, const Perfetto__Protos__PerfEventConfig *cfg, struct perf_ds **out,
		   char *err, size_t err_len);
/* Stops the events and reads what they left (and the kernel's count of
 * lost records) into the writer; once. Accepts NULL. */
void perf_ds_stop(struct perf_ds *ds);
/* The memory guardrail fired: stops the events, drops what is queued
 * (unwinding it is what costs memory), writes the guardrail stop packet
 * and flushes; once, like perf_ds_stop(). */
void perf_ds_purge(struct perf_ds *ds);
/* The config's max_daemon_memory_kb (0: none). */
uint32_t perf_ds_memory_limit_kb(const struct perf_ds *ds);
/* perf_ds_stop() if not yet, then frees. Accepts NULL. */
void perf_ds_destroy(struct perf_ds *ds);
/* Reads every ring to the kernel's head now (flush). */
void perf_ds_drain(struct perf_ds *ds);
/* The sequence's interning starts again (defaults re-emitted). */
void perf_ds_clear_incremental(struct perf_ds *ds);
uint64_t perf_ds_id(const struct perf_ds *ds);
void perf_ds_get_stats(const struct perf_ds *ds, struct perf_ds_stats *out);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hp_dump.h - writing a heap's bookkeeping as Perfetto's heapprofd does:
 * the callstacks new to the sequence as InternedData (frames, mappings,
 * strings, interned as traced_perf interns them), then ProfilePackets
 * whose ProcessHeapSamples carry one HeapSample per callstack (cumulative
 * bytes and counts, or the peak with dump_at_max), split into packets of
 * bounded size with continued set on all but the last. Main thread.
 */
#ifndef PFC_HEAPPROFD_HP_DUMP_H
#define PFC_HEAPPROFD_HP_DUMP_H

#include <stdbool.h>
#include <stdint.h>

#include "heapprofd/hp_book.h"
#include "heapprofd/hp_unwinder.h"
#include "perf/perf_intern.h"

struct trace_writer;

/* One packet sequence (a data source instance's writer). */
struct hp_seq {
	struct trace_writer *tw;
	struct perf_intern intern;
	uint64_t next_index;
	bool started;
};

struct hp_dump_hdr {
	uint32_t pid;
	bool from_startup, disconnected, buffer_corrupted, buffer_overran, dump_at_max;
	uint32_t client_error;
	const char *heap_name;
	uint64_t interval;
	uint64_t ts_start, ts_end; /* CLOCK_MONOTONIC_COARSE, as upstream */
	uint64_t unwinding_errors, heap_samples, unwind_us, blocked_us;
};

typedef const struct hp_cstack *(*hp_cstack_lookup_cb)(uint64_t id, void *user);

void hp_seq_init(struct hp_seq *q, struct trace_writer *tw);
void hp_seq_fini(struct hp_seq *q);
/* Forget what the sequence interned (the service cleared it). */
void hp_seq_clear(struct hp_seq *q);
/* Dump @b under @h. Return: 0 or -ENOMEM. */
int hp_dump_write(struct hp_seq *q, const struct hp_dump_hdr *h, const struct hp_book *b,
		  hp_cstack_lookup_cb lookup, void *user);
/* A ProcessHeapSamples with rejected_concurrent for @pid (a process
 * another session profiles already). */
void hp_dump_rejected(struct hp_seq *q, uint32_t pid);
/* CLOCK_MONOTONIC_COARSE now, in ns. */
uint64_t hp_now_coarse_ns(void);

#endif

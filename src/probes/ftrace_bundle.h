/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ftrace_bundle.h - writes an FtraceEventBundle for a batch of pages read
 * from one CPU: decodes each page (ftrace_page.h), routes sched_switch and
 * sched_waking to compact_sched when enabled (ftrace_compact.h) and
 * translates everything else (ftrace_translate.h). The per-CPU reader owns
 * the TracePacket; it opens TracePacket.ftrace_events, then hands pages
 * over one at a time as it reads them (ftrace_bundler_begin/add/end: each
 * page is decoded while it is still in the cache) or a batch already in
 * memory (ftrace_bundler_write()).
 */
#ifndef PFC_PROBES_FTRACE_BUNDLE_H
#define PFC_PROBES_FTRACE_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probes/ftrace_compact.h"
#include "probes/ftrace_format.h"
#include "probes/ftrace_page.h"
#include "probes/ftrace_translate.h"
#include "protozero/protozero.h"

/* Counters for FtraceStats and debugging; they only ever grow. */
struct ftrace_bundle_stats {
	uint64_t n_pages;
	uint64_t n_events;          /* written as FtraceEvent */
	uint64_t n_compact;         /* written into compact_sched */
	uint64_t n_skipped;         /* IDs not in the table (not enabled) */
	uint64_t n_bad_pages;       /* pages with a header or record error */
	uint64_t n_bad_events;      /* records shorter than their format */
	uint64_t n_partial_events;  /* written without a malformed dynamic field */
	uint64_t n_lost_pages;      /* pages flagged with lost events before them */
	uint64_t lost_events;       /* sum of the counts the kernel stored */
};

/* Per-CPU state; caller storage, set up with ftrace_bundler_init(). */
struct ftrace_bundler {
	const struct ftrace_page_layout *layout;
	const struct ftrace_event_table *table;
	const struct ftrace_compact_format *compact_fmt; /* NULL: no compact_sched */
	struct ftrace_compact_sched *compact;            /* NULL: no compact_sched */
	uint32_t cpu;
	uint32_t max_records_per_page;
	uint64_t last_event_ts;     /* of the previous bundle, for field 10 */
	uint32_t n_in_bundle;       /* pages added since ftrace_bundler_begin() */
	struct ftrace_bundle_stats stats;
};

/*
 * ftrace_bundler_init() - Set up a bundler for one CPU.
 * @layout, @table: borrowed; must outlive @b.
 * @compact_fmt, @compact: borrowed, both NULL to write every record as an
 * FtraceEvent. @compact may be shared by the bundlers of one thread (each
 * ftrace_bundler_write() leaves it empty).
 * Context: setup; never allocates.
 */
void ftrace_bundler_init(struct ftrace_bundler *b, const struct ftrace_page_layout *layout,
			 const struct ftrace_event_table *table,
			 const struct ftrace_compact_format *compact_fmt,
			 struct ftrace_compact_sched *compact, uint32_t cpu);

/*
 * ftrace_bundler_begin() - Start a bundle in @bundle (an open, empty
 * FtraceEventBundle, e.g. TracePacket field 1): writes the cpu.
 * Context: hot path; never allocates.
 */
void ftrace_bundler_begin(struct ftrace_bundler *b, struct pz_msg *bundle);

/*
 * ftrace_bundler_add() - Decode one page of @page_size bytes (borrowed)
 * into the bundle begun with ftrace_bundler_begin().
 * Return: true when written; false, with nothing written, when the page
 * belongs in a new bundle (it reports lost events before it, or
 * compact_sched is full): end this one, begin another, add it again (the
 * first page of a bundle is always taken).
 * Context: hot path; never allocates.
 */
bool ftrace_bundler_add(struct ftrace_bundler *b, const uint8_t *page, size_t page_size,
			struct pz_msg *bundle);

/* ftrace_bundler_end() - Write compact_sched; the bundle is complete. */
void ftrace_bundler_end(struct ftrace_bundler *b, struct pz_msg *bundle);

/*
 * ftrace_bundler_write() - Fill one FtraceEventBundle from whole pages.
 * @pages: @n_pages pages of @page_size bytes each (borrowed).
 * @bundle: an open, empty FtraceEventBundle (e.g. TracePacket field 1).
 *
 * Writes cpu, previous_bundle_end_timestamp, lost_events (when the first
 * page says events were lost), the events, compact_sched and one error
 * entry per corrupt page (whose decodable records are kept). Stops early,
 * so the caller starts another bundle, before a later page that reports
 * lost events and when compact_sched has no room for another page.
 *
 * Return: pages consumed, >= 1 if @n_pages >= 1 (0 if @n_pages is 0).
 * Context: hot path; never allocates.
 */
size_t ftrace_bundler_write(struct ftrace_bundler *b, const uint8_t *pages, size_t n_pages,
			    size_t page_size, struct pz_msg *bundle);

#endif

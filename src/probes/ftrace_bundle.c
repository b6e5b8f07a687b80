// SPDX-License-Identifier: Apache-2.0
/*
 * ftrace_bundle.c - one FtraceEventBundle from a batch of pages of one CPU.
 * Called by the per-CPU reader every drain period with up to a few hundred
 * pages; the loop per record is decode -> compact or translate, with
 * nothing allocated and per-record problems counted, never logged.
 */
#include "probes/ftrace_bundle.h"

#include <errno.h>
#include <string.h>

#include "base/compiler.h"
#include "pb_fields.h"

/* Page statuses go into FtraceEventBundle.error as FtraceParseStatus values. */
_Static_assert(FTRACE_PAGE_OK == PBE_FTRACE_PARSE_STATUS__FTRACE_STATUS_OK, "status");
_Static_assert(FTRACE_PAGE_BAD_HEADER ==
		       PBE_FTRACE_PARSE_STATUS__FTRACE_STATUS_ABI_INVALID_PAGE_HEADER,
	       "status");
_Static_assert(FTRACE_PAGE_SHORT_EVENT_HEADER ==
		       PBE_FTRACE_PARSE_STATUS__FTRACE_STATUS_ABI_SHORT_EVENT_HEADER,
	       "status");
_Static_assert(FTRACE_PAGE_SHORT_PADDING_LENGTH ==
		       PBE_FTRACE_PARSE_STATUS__FTRACE_STATUS_ABI_SHORT_PADDING_LENGTH,
	       "status");
_Static_assert(FTRACE_PAGE_BAD_PADDING_LENGTH ==
		       PBE_FTRACE_PARSE_STATUS__FTRACE_STATUS_ABI_INVALID_PADDING_LENGTH,
	       "status");
_Static_assert(FTRACE_PAGE_SHORT_TIME_EXTEND ==
		       PBE_FTRACE_PARSE_STATUS__FTRACE_STATUS_ABI_SHORT_TIME_EXTEND,
	       "status");
_Static_assert(FTRACE_PAGE_SHORT_TIME_STAMP ==
		       PBE_FTRACE_PARSE_STATUS__FTRACE_STATUS_ABI_SHORT_TIME_STAMP,
	       "status");
_Static_assert(FTRACE_PAGE_SHORT_DATA_LENGTH ==
		       PBE_FTRACE_PARSE_STATUS__FTRACE_STATUS_ABI_SHORT_DATA_LENGTH,
	       "status");
_Static_assert(FTRACE_PAGE_ZERO_DATA_LENGTH ==
		       PBE_FTRACE_PARSE_STATUS__FTRACE_STATUS_ABI_ZERO_DATA_LENGTH,
	       "status");
_Static_assert(FTRACE_PAGE_BAD_DATA_LENGTH ==
		       PBE_FTRACE_PARSE_STATUS__FTRACE_STATUS_ABI_INVALID_DATA_LENGTH,
	       "status");
_Static_assert(FTRACE_PAGE_SHORT_EVENT_ID ==
		       PBE_FTRACE_PARSE_STATUS__FTRACE_STATUS_ABI_SHORT_EVENT_ID,
	       "status");
_Static_assert(FTRACE_PAGE_END_OVERFLOW ==
		       PBE_FTRACE_PARSE_STATUS__FTRACE_STATUS_ABI_END_OVERFLOW,
	       "status");

void ftrace_bundler_init(struct ftrace_bundler *b, const struct ftrace_page_layout *layout,
			 const struct ftrace_event_table *table,
			 const struct ftrace_compact_format *compact_fmt,
			 struct ftrace_compact_sched *compact, uint32_t cpu)
{
	memset(b, 0, sizeof(*b));
	b->layout = layout;
	b->table = table;
	b->compact_fmt = compact && compact_fmt ? compact_fmt : NULL;
	b->compact = compact && compact_fmt ? compact : NULL;
	b->cpu = cpu;
	/* The smallest data record is a 4-byte header plus 4 bytes. */
	b->max_records_per_page = layout->data_size / 8 + 1;
}

static void write_error(struct pz_msg *bundle, uint64_t ts, enum ftrace_page_status status)
{
	struct pz_msg e;

	pz_begin_nested(bundle, PB_FTRACE_EVENT_BUNDLE__ERROR, &e);
	if (ts)
		pz_append_varint(&e, PB_FTRACE_EVENT_BUNDLE_FTRACE_ERROR__TIMESTAMP, ts);
	pz_append_varint(&e, PB_FTRACE_EVENT_BUNDLE_FTRACE_ERROR__STATUS, (uint64_t)status);
	pz_end(&e);
}

/* Decodes one page into @bundle. */
static void write_page(struct ftrace_bundler *b, struct ftrace_page_iter *it,
		       struct pz_msg *bundle)
{
	struct ftrace_raw_event ev;
	int r;

	while ((r = ftrace_page_next(it, &ev)) > 0) {
		if (b->compact) {
			r = ftrace_compact_add(b->compact, b->compact_fmt, &ev);
			if (PFC_LIKELY(r > 0)) {
				b->stats.n_compact++;
				b->last_event_ts = ev.ts;
				continue;
			}
			if (r == -EBADMSG) {
				b->stats.n_bad_events++;
				continue;
			}
			/* Not a sched record, or no room: write it in full. */
		}
		r = ftrace_translate_event(b->table, &ev, bundle);
		if (PFC_LIKELY(r >= 0)) {
			b->stats.n_events++;
			b->last_event_ts = ev.ts;
			if (PFC_UNLIKELY(r == FTRACE_XLAT_PARTIAL))
				b->stats.n_partial_events++;
		} else if (r == -ENOENT) {
			b->stats.n_skipped++;
		} else {
			b->stats.n_bad_events++;
		}
	}
	if (r < 0) {
		b->stats.n_bad_pages++;
		write_error(bundle, it->ts, it->status);
	}
}

void ftrace_bundler_begin(struct ftrace_bundler *b, struct pz_msg *bundle)
{
	b->n_in_bundle = 0;
	pz_append_varint(bundle, PB_FTRACE_EVENT_BUNDLE__CPU, b->cpu);
}

bool ftrace_bundler_add(struct ftrace_bundler *b, const uint8_t *page, size_t page_size,
			struct pz_msg *bundle)
{
	struct ftrace_page_header hdr;
	struct ftrace_page_iter it;
	int r = ftrace_page_begin(b->layout, page, page_size, &it, &hdr);

	if (r == 0 && hdr.has_lost_events) {
		if (b->n_in_bundle > 0)
			return false; /* lost_events describes a whole bundle */
		pz_append_bool(bundle, PB_FTRACE_EVENT_BUNDLE__LOST_EVENTS, true);
		b->stats.n_lost_pages++;
		if (hdr.has_lost_count)
			b->stats.lost_events += hdr.lost_count;
	}
	if (b->n_in_bundle == 0)
		pz_append_varint(bundle, PB_FTRACE_EVENT_BUNDLE__PREVIOUS_BUNDLE_END_TIMESTAMP,
				 b->last_event_ts);
	else if (b->compact && !ftrace_compact_has_room(b->compact, b->max_records_per_page))
		return false;
	b->n_in_bundle++;
	b->stats.n_pages++;
	if (r < 0) {
		b->stats.n_bad_pages++;
		write_error(bundle, 0, it.status);
		return true;
	}
	write_page(b, &it, bundle);
	return true;
}

void ftrace_bundler_end(struct ftrace_bundler *b, struct pz_msg *bundle)
{
	if (b->compact)
		ftrace_compact_write(b->compact, bundle);
	b->n_in_bundle = 0;
}

size_t ftrace_bundler_write(struct ftrace_bundler *b, const uint8_t *pages, size_t n_pages,
			    size_t page_size, struct pz_msg *bundle)
{
	size_t i;

	if (n_pages == 0)
		return 0;
	ftrace_bundler_begin(b, bundle);
	for (i = 0; i < n_pages; i++) {
		if (!ftrace_bundler_add(b, pages + i * page_size, page_size, bundle))
			break;
	}
	ftrace_bundler_end(b, bundle);
	return i;
}

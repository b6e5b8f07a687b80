/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ftrace_page.h - decoder for one kernel ring buffer page as read from
 * per_cpu/cpuN/trace_pipe_raw. The per-CPU reader reads whole pages and
 * walks each with an iterator (or a callback) that yields raw records with
 * absolute timestamps; ftrace_translate.h turns them into protos. Pages are
 * untrusted: every length is checked against the page's commit size, a
 * corrupt page stops with a status and never reads out of bounds.
 *
 * Page layout (64-bit kernel, from events/header_page):
 *
 *   0        8                 16                      16 + commit
 *   | ts u64 | commit (local_t) | record | record | ... | [lost count] | 0...
 *              bits 0..26  data bytes
 *              bit 30      RB_MISSED_STORED: lost count stored after the data
 *              bit 31      RB_MISSED_EVENTS: events were lost before this page
 *
 * Record: u32 header { type_len:5, time_delta:27 } then
 *   type_len 1..28  4 * type_len bytes of data
 *   type_len 0      u32 length (itself included), then length - 4 bytes of data
 *   29 padding      u32 length (itself included) of bytes to skip; with
 *                   time_delta 0 it ends the page
 *   30 time_extend  u32 high bits: ts += array << 27 | time_delta
 *   31 time_stamp   u32 high bits: ts = array << 27 | time_delta (absolute)
 */
#ifndef PFC_PROBES_FTRACE_PAGE_H
#define PFC_PROBES_FTRACE_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probes/ftrace_format.h"

/*
 * Why a page stopped decoding. The values are FtraceParseStatus's, so they
 * go into FtraceEventBundle.error as they are.
 */
enum ftrace_page_status {
	FTRACE_PAGE_OK = 1,
	FTRACE_PAGE_BAD_HEADER = 4,        /* page shorter than its header or commit */
	FTRACE_PAGE_SHORT_EVENT_HEADER = 5,
	FTRACE_PAGE_SHORT_PADDING_LENGTH = 7,
	FTRACE_PAGE_BAD_PADDING_LENGTH = 8,
	FTRACE_PAGE_SHORT_TIME_EXTEND = 9,
	FTRACE_PAGE_SHORT_TIME_STAMP = 10,
	FTRACE_PAGE_SHORT_DATA_LENGTH = 11,
	FTRACE_PAGE_ZERO_DATA_LENGTH = 12,
	FTRACE_PAGE_BAD_DATA_LENGTH = 13,
	FTRACE_PAGE_SHORT_EVENT_ID = 14,
	FTRACE_PAGE_END_OVERFLOW = 15,     /* a record runs past the commit size */
};

struct ftrace_page_header {
	uint64_t ts;             /* base timestamp of the first record */
	uint32_t data_bytes;     /* valid record bytes after the header */
	bool has_lost_events;    /* the kernel overwrote events before this page */
	bool has_lost_count;     /* ... and stored how many in lost_count */
	uint64_t lost_count;
};

/* One data record: a view into the page. */
struct ftrace_raw_event {
	uint64_t ts;
	const uint8_t *data;     /* the record, starting at common_type */
	uint32_t len;            /* bytes (>= 2), rounded up to 4 by the kernel */
	uint16_t id;             /* common_type: the event's format ID */
};

struct ftrace_page_iter {
	const uint8_t *page;
	const uint8_t *p;
	const uint8_t *end;      /* data + data_bytes */
	uint64_t ts;
	enum ftrace_page_status status; /* FTRACE_PAGE_OK until a failure */
	uint32_t err_offset;     /* offset in the page of the bad record */
};

/*
 * ftrace_page_begin() - Parse a page header and start iterating its records.
 * @layout: from ftrace_header_page_parse() (borrowed).
 * @page: the page bytes (borrowed; must outlive @it). @len: bytes read.
 * @it: iterator to set up (caller storage). @out_hdr: the page header.
 *
 * Return: 0; -EBADMSG if @len is shorter than the header or the commit size
 * runs past @len (it->status = FTRACE_PAGE_BAD_HEADER; nothing to iterate).
 * Context: any thread; never allocates.
 */
int ftrace_page_begin(const struct ftrace_page_layout *layout, const uint8_t *page, size_t len,
		      struct ftrace_page_iter *it, struct ftrace_page_header *out_hdr);

/*
 * ftrace_page_next() - Yield the next data record of the page.
 * Padding and time records are consumed on the way.
 * Return: 1 with *out set; 0 at the end of the data; -EBADMSG on a corrupt
 * record (it->status and it->err_offset say what and where; later calls
 * keep returning -EBADMSG).
 * Context: any thread; never allocates; hot path.
 */
int ftrace_page_next(struct ftrace_page_iter *it, struct ftrace_raw_event *out);

/* Called per record; a non-zero return stops the walk and is returned. */
typedef int (*ftrace_event_cb)(const struct ftrace_raw_event *ev, void *user);

/*
 * ftrace_page_decode() - Walk a whole page, calling @cb for each record.
 * @out_hdr: optional (may be NULL). @out_status: optional; why it stopped.
 * Return: records delivered (>= 0); -EBADMSG on a corrupt header or record
 * (after delivering the records before it); or @cb's non-zero value.
 * Context: any thread; never allocates.
 */
int ftrace_page_decode(const struct ftrace_page_layout *layout, const uint8_t *page, size_t len,
		       ftrace_event_cb cb, void *user, struct ftrace_page_header *out_hdr,
		       enum ftrace_page_status *out_status);

#endif

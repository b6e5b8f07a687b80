// SPDX-License-Identifier: Apache-2.0
/*
 * ftrace_page.c - decodes ring buffer pages from trace_pipe_raw (layout in
 * ftrace_page.h). Runs on the probes thread for every page read, at up to
 * millions of records per second: no allocation, and each record costs one
 * header load, a switch and a bounds check against the commit size.
 */
#include "probes/ftrace_page.h"

#include <errno.h>
#include <string.h>

#include "base/compiler.h"

enum {
	TYPE_DATA_MAX = 28,
	TYPE_PADDING = 29,
	TYPE_TIME_EXTEND = 30,
	TYPE_TIME_STAMP = 31,
	TS_SHIFT = 27,
	/* Data bytes are the low bits of commit; 30 and 31 are loss flags. */
	COMMIT_SIZE_MASK = (1u << 27) - 1,
	COMMIT_MISSED_STORED = 1u << 30,
};

#define COMMIT_MISSED_EVENTS (1u << 31)
/* Absolute time stamps carry 59 bits; the top 5 come from the running time. */
#define TS_MSB (0xf8ull << 56)

static inline uint32_t load_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t load_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Reads a 4- or 8-byte native-endian word. */
static inline uint64_t load_word(const uint8_t *p, uint16_t size)
{
	return size == 8 ? load_u64(p) : load_u32(p);
}

int ftrace_page_begin(const struct ftrace_page_layout *layout, const uint8_t *page, size_t len,
		      struct ftrace_page_iter *it, struct ftrace_page_header *out_hdr)
{
	struct ftrace_page_header h = {0};
	uint32_t commit;
	size_t room;

	it->page = page;
	it->p = page;
	it->end = page;
	it->ts = 0;
	it->err_offset = 0;
	it->status = FTRACE_PAGE_BAD_HEADER;
	if (!page || len < layout->data_offset ||
	    len < (size_t)layout->commit_offset + layout->commit_size ||
	    len < (size_t)layout->ts_offset + 8)
		return -EBADMSG;
	h.ts = load_u64(page + layout->ts_offset);
	/* The flags sit in bits 30-31 whatever the width of local_t. */
	commit = (uint32_t)load_word(page + layout->commit_offset, layout->commit_size);
	h.data_bytes = commit & COMMIT_SIZE_MASK;
	h.has_lost_events = (commit & COMMIT_MISSED_EVENTS) != 0;
	room = len - layout->data_offset;
	if (h.data_bytes > room)
		return -EBADMSG;
	if ((commit & COMMIT_MISSED_STORED) && room - h.data_bytes >= layout->commit_size) {
		/* The count is an unsigned long, as wide as the commit word. */
		h.has_lost_count = true;
		h.lost_count = load_word(page + layout->data_offset + h.data_bytes,
					 layout->commit_size);
	}
	it->p = page + layout->data_offset;
	it->end = it->p + h.data_bytes;
	it->ts = h.ts;
	it->status = FTRACE_PAGE_OK;
	*out_hdr = h;
	return 0;
}

static int fail(struct ftrace_page_iter *it, enum ftrace_page_status status)
{
	it->status = status;
	it->err_offset = (uint32_t)(it->p - it->page);
	it->end = it->p; /* later calls see no data and keep failing */
	return -EBADMSG;
}

static inline uint64_t fix_abs_ts(uint64_t abs, uint64_t prev)
{
	if (prev & TS_MSB) {
		abs |= prev & TS_MSB;
		if (abs < prev)
			abs += 1ull << 59;
	}
	return abs;
}

int ftrace_page_next(struct ftrace_page_iter *it, struct ftrace_raw_event *out)
{
	const uint8_t *p = it->p;
	const uint8_t *end = it->end;

	if (PFC_UNLIKELY(it->status != FTRACE_PAGE_OK))
		return -EBADMSG;
	while (p < end) {
		const uint8_t *rec = p;
		size_t avail = (size_t)(end - p);
		uint32_t hdr, type_len, delta, arg, data_len;

		if (PFC_UNLIKELY(avail < 4)) {
			it->p = p;
			return fail(it, FTRACE_PAGE_SHORT_EVENT_HEADER);
		}
		hdr = load_u32(p);
		type_len = hdr & 31;
		delta = hdr >> 5;
		if (PFC_LIKELY(type_len != 0 && type_len <= TYPE_DATA_MAX)) {
			data_len = 4 * type_len;
			if (PFC_UNLIKELY(avail - 4 < data_len)) {
				it->p = p;
				return fail(it, FTRACE_PAGE_END_OVERFLOW);
			}
			it->ts += delta;
			out->data = p + 4;
			p += 4 + data_len;
			goto emit;
		}
		if (type_len == 0) {
			if (avail < 8) {
				it->p = p;
				return fail(it, FTRACE_PAGE_SHORT_DATA_LENGTH);
			}
			arg = load_u32(p + 4);
			if (arg == 0 || arg < 4) {
				it->p = p;
				return fail(it, arg == 0 ? FTRACE_PAGE_ZERO_DATA_LENGTH
						       : FTRACE_PAGE_BAD_DATA_LENGTH);
			}
			if (avail - 4 < arg) {
				it->p = p;
				return fail(it, FTRACE_PAGE_END_OVERFLOW);
			}
			data_len = arg - 4;
			it->ts += delta;
			out->data = p + 8;
			p += 4 + (size_t)arg;
			goto emit;
		}
		if (type_len == TYPE_PADDING) {
			if (delta == 0) {
				/* Null padding: the rest of the page is unused. */
				p = end;
				break;
			}
			if (avail < 8) {
				it->p = p;
				return fail(it, FTRACE_PAGE_SHORT_PADDING_LENGTH);
			}
			arg = load_u32(p + 4);
			if (arg < 4) {
				it->p = p;
				return fail(it, FTRACE_PAGE_BAD_PADDING_LENGTH);
			}
			if (avail - 4 < arg) {
				it->p = p;
				return fail(it, FTRACE_PAGE_END_OVERFLOW);
			}
			/* A discarded record keeps its delta; later ones count from it. */
			it->ts += delta;
			p += 4 + (size_t)arg;
			continue;
		}
		if (avail < 8) {
			it->p = p;
			return fail(it, type_len == TYPE_TIME_EXTEND ? FTRACE_PAGE_SHORT_TIME_EXTEND
								      : FTRACE_PAGE_SHORT_TIME_STAMP);
		}
		arg = load_u32(p + 4);
		if (type_len == TYPE_TIME_EXTEND)
			it->ts += ((uint64_t)arg << TS_SHIFT) | delta;
		else
			it->ts = fix_abs_ts(((uint64_t)arg << TS_SHIFT) | delta, it->ts);
		p += 8;
		continue;
emit:
		if (PFC_UNLIKELY(data_len < 2)) {
			it->p = rec;
			return fail(it, FTRACE_PAGE_SHORT_EVENT_ID);
		}
		it->p = p;
		out->ts = it->ts;
		out->len = data_len;
		memcpy(&out->id, out->data, sizeof(out->id));
		return 1;
	}
	it->p = p;
	return 0;
}

int ftrace_page_decode(const struct ftrace_page_layout *layout, const uint8_t *page, size_t len,
		       ftrace_event_cb cb, void *user, struct ftrace_page_header *out_hdr,
		       enum ftrace_page_status *out_status)
{
	struct ftrace_page_header hdr;
	struct ftrace_page_iter it;
	struct ftrace_raw_event ev;
	int n = 0, r;

	r = ftrace_page_begin(layout, page, len, &it, &hdr);
	if (r < 0)
		goto out;
	if (out_hdr)
		*out_hdr = hdr;
	while ((r = ftrace_page_next(&it, &ev)) > 0) {
		int stop = cb(&ev, user);

		if (stop)
			return stop;
		n++;
	}
out:
	if (out_status)
		*out_status = it.status;
	return r < 0 ? r : n;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * perf_record.c - records out of the ring and their decoding (see
 * perf_record.h). Field order follows the kernel's perf_event.h
 * documentation of PERF_RECORD_SAMPLE for the sample_type bits we set.
 */
#include "perf/ring/perf_record.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

static uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

int perf_ring_take(const uint8_t *data, uint64_t data_size, uint64_t head, uint64_t *tail,
		   uint8_t *scratch, const uint8_t **out_rec)
{
	return perf_ring_take_types(data, data_size, head, tail, scratch, ~(uint64_t)0, out_rec);
}

int perf_ring_take_types(const uint8_t *data, uint64_t data_size, uint64_t head, uint64_t *tail,
			 uint8_t *scratch, uint64_t type_mask, const uint8_t **out_rec)
{
	struct perf_event_header h;
	uint64_t avail = head - *tail, off, first;

	if (avail == 0)
		return 0;
	if (avail < sizeof(h) || avail > data_size)
		goto bad;
	off = *tail & (data_size - 1);
	/* Records are 8-byte aligned, so a header never wraps; copy anyway. */
	first = data_size - off;
	if (first >= sizeof(h)) {
		memcpy(&h, data + off, sizeof(h));
	} else {
		memcpy(&h, data + off, (size_t)first);
		memcpy((uint8_t *)&h + first, data, sizeof(h) - (size_t)first);
	}
	if (h.size < sizeof(h) || h.size > avail)
		goto bad;
	/* All ones: every type, also those past 63 no mask bit can name. */
	if (type_mask != ~(uint64_t)0 && (h.type >= 64 || !(type_mask & (1ull << h.type)))) {
		*out_rec = NULL; /* not wanted: stepped over, never copied */
	} else if (first >= h.size) {
		/* Most records do not wrap: read them in place (64 KiB stacks). */
		*out_rec = data + off;
	} else {
		memcpy(scratch, data + off, (size_t)first);
		memcpy(scratch + first, data, h.size - (size_t)first);
		*out_rec = scratch;
	}
	*tail += h.size;
	return h.size;
bad:
	*tail = head;
	return -EBADMSG;
}

uint32_t perf_record_type(const uint8_t *rec)
{
	struct perf_event_header h;

	memcpy(&h, rec, sizeof(h));
	return h.type;
}

uint64_t perf_sample_ip(const struct perf_sample *s, uint64_t i)
{
	return load64(s->ips + i * 8);
}

/* A cursor over one record: every read checks what is left. */
struct cur {
	const uint8_t *p;
	size_t left;
};

static bool take64(struct cur *c, uint64_t *out)
{
	if (c->left < 8)
		return false;
	*out = load64(c->p);
	c->p += 8;
	c->left -= 8;
	return true;
}

static bool skip(struct cur *c, uint64_t n)
{
	if (n > c->left)
		return false;
	c->p += n;
	c->left -= (size_t)n;
	return true;
}

/*
 * The values of a read_format (a sample's READ part, or what read() of the
 * leader returns): @out's timebase_count and follower counts, and the
 * leader's count of records the kernel could not write (PFC_PERF_FORMAT_LOST)
 * in *@lost when asked.
 */
static enum perf_parse_err parse_read(struct cur *c, const struct perf_sample_layout *l,
				      struct perf_sample *out, uint64_t *lost)
{
	uint64_t id = !!(l->read_format & PERF_FORMAT_ID);
	uint64_t has_lost = !!(l->read_format & PFC_PERF_FORMAT_LOST);
	uint64_t times = !!(l->read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) +
			 !!(l->read_format & PERF_FORMAT_TOTAL_TIME_RUNNING);
	uint64_t nr, i, v;

	if (!(l->read_format & PERF_FORMAT_GROUP)) {
		/* value, [enabled], [running], [id], [lost] */
		if (!take64(c, &out->timebase_count) || !skip(c, (times + id) * 8))
			return PERF_PARSE_TRUNCATED;
		if (has_lost && !take64(c, &v))
			return PERF_PARSE_TRUNCATED;
		if (has_lost && lost)
			*lost = v;
		return PERF_PARSE_OK;
	}
	/* nr, [enabled], [running], then nr x { value, [id], [lost] } */
	if (!take64(c, &nr))
		return PERF_PARSE_TRUNCATED;
	if (nr == 0 || nr > 1 + PERF_MAX_FOLLOWER_COUNTS || nr != 1 + l->n_followers)
		return PERF_PARSE_BAD_VALUE;
	if (!skip(c, times * 8))
		return PERF_PARSE_TRUNCATED;
	for (i = 0; i < nr; i++) {
		if (!take64(c, &v) || !skip(c, id * 8))
			return PERF_PARSE_TRUNCATED;
		if (i == 0)
			out->timebase_count = v;
		else
			out->follower_counts[i - 1] = v;
		if (has_lost && !take64(c, &v))
			return PERF_PARSE_TRUNCATED;
		if (has_lost && i == 0 && lost)
			*lost = v;
	}
	out->n_followers = (uint32_t)(nr - 1);
	return PERF_PARSE_OK;
}

enum perf_parse_err perf_parse_read_lost(const struct perf_sample_layout *l, const uint8_t *buf,
					 size_t len, uint64_t *out_lost)
{
	struct perf_sample s;
	struct cur c = {buf, len};

	if (!(l->read_format & PFC_PERF_FORMAT_LOST))
		return PERF_PARSE_BAD_VALUE;
	return parse_read(&c, l, &s, out_lost);
}

enum perf_parse_err perf_parse_sample(const struct perf_sample_layout *l, const uint8_t *rec,
				      size_t len, struct perf_sample *out)
{
	struct perf_event_header h;
	struct cur c;
	uint64_t v, i;

	if (len < sizeof(h))
		return PERF_PARSE_TRUNCATED;
	memcpy(&h, rec, sizeof(h));
	if (h.size > len)
		return PERF_PARSE_TRUNCATED;
	memset(out, 0, offsetof(struct perf_sample, follower_counts));
	out->n_followers = 0;
	out->ips = NULL;
	out->n_ips = 0;
	out->has_regs = false;
	out->stack = NULL;
	out->stack_bytes = 0;
	out->cpu_mode = h.misc & PERF_RECORD_MISC_CPUMODE_MASK;
	c.p = rec + sizeof(h);
	c.left = h.size - sizeof(h);

	if ((l->sample_type & PERF_SAMPLE_IDENTIFIER) && !skip(&c, 8))
		return PERF_PARSE_TRUNCATED;
	if ((l->sample_type & PERF_SAMPLE_IP) && !skip(&c, 8))
		return PERF_PARSE_TRUNCATED;
	if (l->sample_type & PERF_SAMPLE_TID) {
		if (!take64(&c, &v))
			return PERF_PARSE_TRUNCATED;
		out->pid = (uint32_t)v;
		out->tid = (uint32_t)(v >> 32);
	}
	if ((l->sample_type & PERF_SAMPLE_TIME) && !take64(&c, &out->ts))
		return PERF_PARSE_TRUNCATED;
	if ((l->sample_type & PERF_SAMPLE_ADDR) && !skip(&c, 8))
		return PERF_PARSE_TRUNCATED;
	if ((l->sample_type & PERF_SAMPLE_ID) && !skip(&c, 8))
		return PERF_PARSE_TRUNCATED;
	if ((l->sample_type & PERF_SAMPLE_STREAM_ID) && !skip(&c, 8))
		return PERF_PARSE_TRUNCATED;
	if ((l->sample_type & PERF_SAMPLE_CPU) && !skip(&c, 8))
		return PERF_PARSE_TRUNCATED;
	if ((l->sample_type & PERF_SAMPLE_PERIOD) && !skip(&c, 8))
		return PERF_PARSE_TRUNCATED;
	if (l->sample_type & PERF_SAMPLE_READ) {
		enum perf_parse_err e = parse_read(&c, l, out, NULL);

		if (e != PERF_PARSE_OK)
			return e;
	}
	if (l->sample_type & PERF_SAMPLE_CALLCHAIN) {
		if (!take64(&c, &v))
			return PERF_PARSE_TRUNCATED;
		if (v > c.left / 8)
			return PERF_PARSE_BAD_VALUE;
		out->ips = c.p;
		out->n_ips = v;
		skip(&c, v * 8);
	}
	if (l->sample_type & PERF_SAMPLE_RAW) {
		uint32_t raw;

		if (c.left < 4)
			return PERF_PARSE_TRUNCATED;
		memcpy(&raw, c.p, 4);
		if (!skip(&c, 4) || !skip(&c, raw))
			return PERF_PARSE_TRUNCATED;
	}
	if (l->sample_type & PERF_SAMPLE_REGS_USER) {
		if (!take64(&c, &v))
			return PERF_PARSE_TRUNCATED;
		if (v != PERF_SAMPLE_REGS_ABI_NONE) {
			if (l->n_user_regs > PERF_MAX_USER_REGS)
				return PERF_PARSE_BAD_VALUE;
			for (i = 0; i < l->n_user_regs; i++) {
				if (!take64(&c, &out->regs[i]))
					return PERF_PARSE_TRUNCATED;
			}
			out->has_regs = true;
		}
	}
	if (l->sample_type & PERF_SAMPLE_STACK_USER) {
		uint64_t size, dyn;

		if (!take64(&c, &size))
			return PERF_PARSE_TRUNCATED;
		if (size) {
			const uint8_t *data = c.p;

			if (!skip(&c, size))
				return PERF_PARSE_TRUNCATED;
			if (!take64(&c, &dyn))
				return PERF_PARSE_TRUNCATED;
			out->stack = data;
			/* A dyn_size above what was copied is clamped, never trusted. */
			out->stack_bytes = dyn < size ? dyn : size;
		}
	}
	return PERF_PARSE_OK;
}

/* Where @s's stack field lies in @rec: its bytes at *off (the size word
 * before them), and the fields after its dyn_size at *tail_off. Return:
 * @keep, lowered if needed so that, padded to 8, it fits the field (a
 * size that is not a multiple of 8 never comes from the kernel). */
static uint64_t stack_span(const uint8_t *rec, const struct perf_sample *s, uint64_t keep,
			   size_t *off, size_t *tail_off)
{
	uint64_t size;

	*off = (size_t)(s->stack - rec);
	memcpy(&size, rec + *off - 8, 8);
	*tail_off = *off + (size_t)size + 8;
	if (keep > s->stack_bytes)
		keep = s->stack_bytes;
	if (((keep + 7) & ~(uint64_t)7) > size)
		keep = size & ~(uint64_t)7;
	return keep;
}

static uint64_t round8(uint64_t n)
{
	return (n + 7) & ~(uint64_t)7;
}

size_t perf_sample_cut_len(const uint8_t *rec, size_t len, const struct perf_sample *s,
			   uint64_t keep)
{
	size_t off, tail_off;

	if (!s->stack)
		return len;
	keep = stack_span(rec, s, keep, &off, &tail_off);
	return (keep ? off + (size_t)round8(keep) + 8 : off) + (len - tail_off);
}

void perf_sample_cut_stack(const uint8_t *rec, size_t len, const struct perf_sample *s,
			   uint64_t keep, uint8_t *out)
{
	size_t off, tail_off, pad, out_len;
	uint64_t size;
	uint16_t hsz;

	if (!s->stack) {
		memcpy(out, rec, len);
		return;
	}
	keep = stack_span(rec, s, keep, &off, &tail_off);
	out_len = perf_sample_cut_len(rec, len, s, keep);
	pad = (size_t)(round8(keep) - keep);
	memcpy(out, rec, off);
	size = keep + pad;
	memcpy(out + off - 8, &size, 8);
	if (keep) {
		memcpy(out + off, s->stack, keep);
		memset(out + off + keep, 0, pad);
		memcpy(out + off + keep + pad, &keep, 8);
		off += keep + pad + 8;
	}
	memcpy(out + off, rec + tail_off, len - tail_off);
	hsz = (uint16_t)out_len; /* header.size: shorter now, still a u16 */
	memcpy(out + 6, &hsz, 2);
}

enum perf_parse_err perf_parse_lost(const uint8_t *rec, size_t len, uint64_t *out_lost)
{
	struct perf_event_header h;

	if (len < sizeof(h))
		return PERF_PARSE_TRUNCATED;
	memcpy(&h, rec, sizeof(h));
	if (h.size > len || h.size < sizeof(h) + 16)
		return PERF_PARSE_TRUNCATED;
	*out_lost = load64(rec + sizeof(h) + 8);
	return PERF_PARSE_OK;
}

enum perf_parse_err perf_parse_exit(const uint8_t *rec, size_t len, struct perf_exit *out)
{
	/* EXIT has FORK's layout: pid, ppid, tid, ptid, time. */
	struct perf_fork f;
	enum perf_parse_err rc = perf_parse_fork(rec, len, &f);

	if (rc == PERF_PARSE_OK) {
		out->pid = f.pid;
		out->tid = f.tid;
	}
	return rc;
}

enum perf_parse_err perf_parse_comm(const uint8_t *rec, size_t len, struct perf_comm *out)
{
	struct perf_event_header h;
	uint32_t v[2];

	if (len < sizeof(h))
		return PERF_PARSE_TRUNCATED;
	memcpy(&h, rec, sizeof(h));
	if (h.size > len || h.size < sizeof(h) + sizeof(v))
		return PERF_PARSE_TRUNCATED;
	memcpy(v, rec + sizeof(h), sizeof(v));
	out->pid = v[0];
	out->tid = v[1];
	out->exec = (h.misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
	return PERF_PARSE_OK;
}

enum perf_parse_err perf_parse_fork(const uint8_t *rec, size_t len, struct perf_fork *out)
{
	struct perf_event_header h;
	uint32_t v[4];

	if (len < sizeof(h))
		return PERF_PARSE_TRUNCATED;
	memcpy(&h, rec, sizeof(h));
	if (h.size > len || h.size < sizeof(h) + sizeof(v))
		return PERF_PARSE_TRUNCATED;
	memcpy(v, rec + sizeof(h), sizeof(v));
	out->pid = v[0];
	out->ppid = v[1];
	out->tid = v[2];
	out->ptid = v[3];
	return PERF_PARSE_OK;
}

/* Byte offsets in a PERF_RECORD_MMAP2 (header included). */
enum {
	MMAP2_PID = 8,
	MMAP2_ADDR = 16,
	MMAP2_LEN = 24,
	MMAP2_PGOFF = 32,
	MMAP2_MAJ = 40,
	MMAP2_MIN = 44,
	MMAP2_INO = 48,
	MMAP2_PROT = 64,
	MMAP2_FLAGS = 68,
	MMAP2_PATH = 72,
};

enum perf_parse_err perf_parse_mmap2(const uint8_t *rec, size_t len, struct perf_mmap2 *out)
{
	struct perf_event_header h;
	const uint8_t *path, *nul;
	uint32_t v[2];

	if (len < sizeof(h))
		return PERF_PARSE_TRUNCATED;
	memcpy(&h, rec, sizeof(h));
	if (h.size > len || h.size <= MMAP2_PATH)
		return PERF_PARSE_TRUNCATED;
	memcpy(v, rec + MMAP2_PID, sizeof(v));
	out->pid = v[0];
	out->tid = v[1];
	out->addr = load64(rec + MMAP2_ADDR);
	out->len = load64(rec + MMAP2_LEN);
	out->pgoff = load64(rec + MMAP2_PGOFF);
	if (h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		out->maj = out->min = 0;
		out->ino = 0;
	} else {
		memcpy(&out->maj, rec + MMAP2_MAJ, 4);
		memcpy(&out->min, rec + MMAP2_MIN, 4);
		out->ino = load64(rec + MMAP2_INO);
	}
	memcpy(&out->prot, rec + MMAP2_PROT, 4);
	memcpy(&out->flags, rec + MMAP2_FLAGS, 4);
	path = rec + MMAP2_PATH;
	nul = memchr(path, 0, h.size - MMAP2_PATH);
	if (!nul || out->len == 0 || out->addr + out->len < out->addr)
		return PERF_PARSE_BAD_VALUE;
	out->path = (const char *)path;
	return PERF_PARSE_OK;
}

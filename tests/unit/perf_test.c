// SPDX-License-Identifier: Apache-2.0
/*
 * perf_test.c - unit tests for src/perf (traced_perf): the ring record
 * parser on crafted and malformed records, taking records out of a
 * wrapping ring, kallsyms parsing and lookup, the frame-pointer walk on
 * synthetic stacks, PerfEventConfig translation (with a fake tracefs),
 * the process scope, per-sequence interning and the reader's queue (with
 * a producer thread). No kernel needed.
 */
#include "harness.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pb_fields.h"
#include "perf/unwind/fp_walk.h"
#include "perf/unwind/kallsyms.h"
#include "perf/unwind/mmap_log.h"
#include "perf/perf_config.h"
#include "perf/perf_intern.h"
#include "perf/unwind/cfi_rule.h"
#include "perf/ring/perf_record.h"
#include "perf/perf_scope.h"
#include "perf/ring/rec_queue.h"
#include "perf/ring/stack_tops.h"
#include "perf/unwind/symtab.h"
#include "perf/unwind/unwind.h"
#include "protozero/protozero.h"

/* ------------------------------------------------------ record parser ---- */

/* A record builder: u64 words after an 8-byte header. */
struct rec {
	uint8_t b[PERF_RECORD_MAX_BYTES];
	size_t len;
};

static void rec_begin(struct rec *r, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = {.type = type, .misc = misc, .size = 0};

	memset(r->b, 0, sizeof(r->b));
	memcpy(r->b, &h, sizeof(h));
	r->len = sizeof(h);
}

static void rec_u64(struct rec *r, uint64_t v)
{
	memcpy(r->b + r->len, &v, 8);
	r->len += 8;
}

static void rec_end(struct rec *r)
{
	uint16_t size = (uint16_t)r->len;

	memcpy(r->b + 6, &size, 2);
}

static const struct perf_sample_layout k_layout = {
	.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_READ |
		       PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
	.read_format = PERF_FORMAT_GROUP,
	.n_followers = 2,
	.n_user_regs = 3,
};

/* A full sample: pid 7 tid 8, ts 1000, counts 11/22/33, 3 ips, 3 regs,
 * a 64-byte stack of which @dyn bytes are valid. */
static void make_sample(struct rec *r, uint64_t dyn)
{
	int i;

	rec_begin(r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	rec_u64(r, 7 | (8ull << 32));
	rec_u64(r, 1000);
	rec_u64(r, 3);
	rec_u64(r, 11);
	rec_u64(r, 22);
	rec_u64(r, 33);
	rec_u64(r, 3);
	rec_u64(r, (uint64_t)PERF_CONTEXT_KERNEL);
	rec_u64(r, 0xffffffff81000100ull);
	rec_u64(r, 0xffffffff81000200ull);
	rec_u64(r, PERF_SAMPLE_REGS_ABI_64);
	rec_u64(r, 0x100);
	rec_u64(r, 0x200);
	rec_u64(r, 0x300);
	rec_u64(r, 64);
	for (i = 0; i < 8; i++)
		rec_u64(r, 0xabc0 + (uint64_t)i);
	rec_u64(r, dyn);
	rec_end(r);
}

TEST(perf_parse_sample_reads_every_field)
{
	static struct rec r;
	struct perf_sample s;

	make_sample(&r, 48);
	ASSERT_EQ(perf_parse_sample(&k_layout, r.b, r.len, &s), PERF_PARSE_OK);
	ASSERT_EQ(s.pid, 7);
	ASSERT_EQ(s.tid, 8);
	ASSERT_U64_EQ(s.ts, 1000);
	ASSERT_EQ(s.cpu_mode, PERF_RECORD_MISC_USER);
	ASSERT_U64_EQ(s.timebase_count, 11);
	ASSERT_EQ(s.n_followers, 2);
	ASSERT_U64_EQ(s.follower_counts[0], 22);
	ASSERT_U64_EQ(s.follower_counts[1], 33);
	ASSERT_U64_EQ(s.n_ips, 3);
	ASSERT_U64_EQ(perf_sample_ip(&s, 2), 0xffffffff81000200ull);
	ASSERT_TRUE(s.has_regs);
	ASSERT_U64_EQ(s.regs[2], 0x300);
	ASSERT_U64_EQ(s.stack_bytes, 48);
	ASSERT_TRUE(s.stack != NULL);
}

/* PERF_FORMAT_LOST: a lost count after each group entry's value (and id),
 * in samples and in read() of the leader; the last one of a lone leader. */
TEST(perf_parse_read_format_lost)
{
	static const uint64_t group[] = {2, 500, 41, 7, 600, 42, 0};
	static const uint64_t lone[] = {500, 900, 800, 3};
	struct perf_sample_layout gl = {
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_READ,
		.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PFC_PERF_FORMAT_LOST,
		.n_followers = 1,
	};
	struct perf_sample_layout ll = {
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
			       PFC_PERF_FORMAT_LOST,
	};
	static struct rec r;
	struct perf_sample s;
	uint64_t lost = 0;
	size_t i, cut;

	ASSERT_EQ(perf_parse_read_lost(&gl, (const uint8_t *)group, sizeof(group), &lost),
		  PERF_PARSE_OK);
	ASSERT_U64_EQ(lost, 7);
	ASSERT_EQ(perf_parse_read_lost(&ll, (const uint8_t *)lone, sizeof(lone), &lost),
		  PERF_PARSE_OK);
	ASSERT_U64_EQ(lost, 3);
	for (cut = 0; cut < sizeof(group); cut += 8)
		ASSERT_EQ(perf_parse_read_lost(&gl, (const uint8_t *)group, cut, &lost),
			  PERF_PARSE_TRUNCATED);
	gl.read_format &= ~(uint64_t)PFC_PERF_FORMAT_LOST;
	ASSERT_EQ(perf_parse_read_lost(&gl, (const uint8_t *)group, sizeof(group), &lost),
		  PERF_PARSE_BAD_VALUE);
	gl.read_format |= PFC_PERF_FORMAT_LOST;

	/* The same values inside a sample: the follower's count is not
	 * taken for a lost count, nor the other way round. */
	rec_begin(&r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	rec_u64(&r, 7 | (8ull << 32));
	for (i = 0; i < sizeof(group) / sizeof(group[0]); i++)
		rec_u64(&r, group[i]);
	rec_end(&r);
	ASSERT_EQ(perf_parse_sample(&gl, r.b, r.len, &s), PERF_PARSE_OK);
	ASSERT_U64_EQ(s.timebase_count, 500);
	ASSERT_U64_EQ(s.follower_counts[0], 600);
	ASSERT_EQ(perf_parse_sample(&gl, r.b, r.len - 8, &s), PERF_PARSE_TRUNCATED);
}

TEST(perf_parse_sample_clamps_dyn_size_to_the_copy)
{
	static struct rec r;
	struct perf_sample s;

	make_sample(&r, 1u << 20);
	ASSERT_EQ(perf_parse_sample(&k_layout, r.b, r.len, &s), PERF_PARSE_OK);
	ASSERT_U64_EQ(s.stack_bytes, 64);
}

/* Cutting the stack to what was copied keeps every other field, and the
 * result parses; 0 empties the field (no dyn_size), as the kernel does. */
TEST(perf_sample_cut_stack_keeps_the_rest)
{
	static struct rec r;
	static uint8_t out[PERF_RECORD_MAX_BYTES];
	struct perf_sample s, c;
	uint64_t keeps[] = { 20, 24, 64, 0 }, i;

	make_sample(&r, 20);
	ASSERT_EQ(perf_parse_sample(&k_layout, r.b, r.len, &s), PERF_PARSE_OK);
	for (i = 0; i < sizeof(keeps) / sizeof(keeps[0]); i++) {
		uint64_t keep = keeps[i] < s.stack_bytes ? keeps[i] : s.stack_bytes;
		size_t n = perf_sample_cut_len(r.b, r.len, &s, keeps[i]);
		uint16_t hsz;

		/* 64 stack bytes of which 20 valid: 24 (20 + pad) are kept. */
		ASSERT_EQ(n, keep ? r.len - 64 + 24 : r.len - 64 - 8);
		memset(out, 0xee, sizeof(out));
		perf_sample_cut_stack(r.b, r.len, &s, keeps[i], out);
		memcpy(&hsz, out + 6, 2);
		ASSERT_EQ(hsz, n);
		ASSERT_EQ(perf_parse_sample(&k_layout, out, n, &c), PERF_PARSE_OK);
		ASSERT_EQ(c.pid, 7);
		ASSERT_EQ(c.tid, 8);
		ASSERT_U64_EQ(c.ts, 1000);
		ASSERT_U64_EQ(c.follower_counts[1], 33);
		ASSERT_U64_EQ(c.n_ips, 3);
		ASSERT_U64_EQ(perf_sample_ip(&c, 2), 0xffffffff81000200ull);
		ASSERT_TRUE(c.has_regs);
		ASSERT_U64_EQ(c.regs[2], 0x300);
		ASSERT_U64_EQ(c.stack_bytes, keep);
		if (keep)
			ASSERT_MEMEQ(c.stack, s.stack, keep);
		else
			ASSERT_TRUE(c.stack == NULL);
	}
}

TEST(perf_parse_sample_rejects_every_truncation)
{
	static struct rec r, t;
	struct perf_sample s;
	size_t len;

	make_sample(&r, 48);
	/* The same bytes with a header claiming fewer: never OK, never past. */
	for (len = sizeof(struct perf_event_header); len < r.len; len += 8) {
		uint16_t size = (uint16_t)len;
		uint8_t *copy = malloc(len);

		memcpy(copy, r.b, len);
		memcpy(copy + 6, &size, 2);
		ASSERT_NE(perf_parse_sample(&k_layout, copy, len, &s), PERF_PARSE_OK);
		free(copy);
	}
	/* A header claiming more than the buffer holds. */
	t = r;
	ASSERT_EQ(perf_parse_sample(&k_layout, t.b, r.len - 8, &s), PERF_PARSE_TRUNCATED);
}

TEST(perf_parse_sample_rejects_bad_counts)
{
	static struct rec r;
	struct perf_sample s;
	uint64_t v;

	/* A callchain count beyond the record. */
	make_sample(&r, 48);
	v = 1ull << 40;
	memcpy(r.b + 8 + 6 * 8, &v, 8);
	ASSERT_EQ(perf_parse_sample(&k_layout, r.b, r.len, &s), PERF_PARSE_BAD_VALUE);
	/* A group of another size than the config's. */
	make_sample(&r, 48);
	v = 5;
	memcpy(r.b + 8 + 2 * 8, &v, 8);
	ASSERT_EQ(perf_parse_sample(&k_layout, r.b, r.len, &s), PERF_PARSE_BAD_VALUE);
	/* A stack size beyond the record. */
	make_sample(&r, 48);
	v = 4096;
	memcpy(r.b + 8 + 14 * 8, &v, 8);
	ASSERT_EQ(perf_parse_sample(&k_layout, r.b, r.len, &s), PERF_PARSE_TRUNCATED);
}

TEST(perf_parse_sample_kernel_thread_has_no_regs)
{
	static struct rec r;
	struct perf_sample s;
	struct perf_sample_layout l = k_layout;

	l.sample_type &= ~(uint64_t)PERF_SAMPLE_CALLCHAIN;
	rec_begin(&r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
	rec_u64(&r, 0);
	rec_u64(&r, 5);
	rec_u64(&r, 3);
	rec_u64(&r, 1);
	rec_u64(&r, 2);
	rec_u64(&r, 3);
	rec_u64(&r, PERF_SAMPLE_REGS_ABI_NONE);
	rec_u64(&r, 0);
	rec_end(&r);
	ASSERT_EQ(perf_parse_sample(&l, r.b, r.len, &s), PERF_PARSE_OK);
	ASSERT_FALSE(s.has_regs);
	ASSERT_U64_EQ(s.stack_bytes, 0);
	ASSERT_EQ(s.cpu_mode, PERF_RECORD_MISC_KERNEL);
}

TEST(perf_parse_lost_and_exit)
{
	static struct rec r;
	struct perf_exit ex;
	uint64_t lost = 0;

	rec_begin(&r, PERF_RECORD_LOST, 0);
	rec_u64(&r, 1);
	rec_u64(&r, 42);
	rec_end(&r);
	ASSERT_EQ(perf_parse_lost(r.b, r.len, &lost), PERF_PARSE_OK);
	ASSERT_U64_EQ(lost, 42);
	ASSERT_EQ(perf_parse_lost(r.b, 16, &lost), PERF_PARSE_TRUNCATED);
	rec_begin(&r, PERF_RECORD_EXIT, 0);
	rec_u64(&r, 100 | (1ull << 32));
	rec_u64(&r, 100 | (1ull << 32));
	rec_u64(&r, 5);
	rec_end(&r);
	ASSERT_EQ(perf_parse_exit(r.b, r.len, &ex), PERF_PARSE_OK);
	ASSERT_EQ(ex.pid, 100);
	ASSERT_EQ(ex.tid, 100);
	ASSERT_EQ(perf_parse_exit(r.b, 12, &ex), PERF_PARSE_TRUNCATED);
}

TEST(perf_parse_comm_tells_an_exec)
{
	static struct rec r;
	struct perf_comm c;

	rec_begin(&r, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	rec_u64(&r, 300 | (301ull << 32));
	rec_u64(&r, 0x746f685f66726570ull); /* "perf_hot" */
	rec_u64(&r, 0);
	rec_end(&r);
	ASSERT_EQ(perf_parse_comm(r.b, r.len, &c), PERF_PARSE_OK);
	ASSERT_EQ(c.pid, 300);
	ASSERT_EQ(c.tid, 301);
	ASSERT_TRUE(c.exec);
	ASSERT_EQ(perf_parse_comm(r.b, 12, &c), PERF_PARSE_TRUNCATED);
	/* A rename (prctl PR_SET_NAME) is no exec. */
	rec_begin(&r, PERF_RECORD_COMM, 0);
	rec_u64(&r, 300 | (300ull << 32));
	rec_u64(&r, 0);
	rec_end(&r);
	ASSERT_EQ(perf_parse_comm(r.b, r.len, &c), PERF_PARSE_OK);
	ASSERT_FALSE(c.exec);
}

TEST(perf_parse_fork_and_mmap2)
{
	static struct rec r;
	struct perf_fork fk;
	struct perf_mmap2 mm;
	static const char path[] = "/usr/lib/libx.so"; /* 17 bytes with NUL */

	rec_begin(&r, PERF_RECORD_FORK, 0);
	rec_u64(&r, 200 | (100ull << 32));
	rec_u64(&r, 200 | (101ull << 32));
	rec_u64(&r, 12345);
	rec_end(&r);
	ASSERT_EQ(perf_parse_fork(r.b, r.len, &fk), PERF_PARSE_OK);
	ASSERT_EQ(fk.pid, 200);
	ASSERT_EQ(fk.ppid, 100);
	ASSERT_EQ(fk.tid, 200);
	ASSERT_EQ(fk.ptid, 101);
	ASSERT_EQ(perf_parse_fork(r.b, 20, &fk), PERF_PARSE_TRUNCATED);

	rec_begin(&r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	rec_u64(&r, 300 | (301ull << 32));
	rec_u64(&r, 0x7f0000001000ull);
	rec_u64(&r, 0x5000);
	rec_u64(&r, 0x1000);
	rec_u64(&r, 8 | (1ull << 32)); /* maj 8, min 1 */
	rec_u64(&r, 4242);
	rec_u64(&r, 0);
	rec_u64(&r, 5 | (2ull << 32)); /* PROT_READ|PROT_EXEC, MAP_PRIVATE */
	memcpy(r.b + r.len, path, sizeof(path));
	memset(r.b + r.len + sizeof(path), 0, 24 - sizeof(path));
	r.len += 24;
	rec_end(&r);
	ASSERT_EQ(perf_parse_mmap2(r.b, r.len, &mm), PERF_PARSE_OK);
	ASSERT_EQ(mm.pid, 300);
	ASSERT_EQ(mm.tid, 301);
	ASSERT_U64_EQ(mm.addr, 0x7f0000001000ull);
	ASSERT_U64_EQ(mm.len, 0x5000);
	ASSERT_U64_EQ(mm.pgoff, 0x1000);
	ASSERT_EQ(mm.maj, 8);
	ASSERT_EQ(mm.min, 1);
	ASSERT_U64_EQ(mm.ino, 4242);
	ASSERT_EQ(mm.prot, 5);
	ASSERT_STREQ(mm.path, path);
	/* Cut before the path's NUL, or before the path: refused. */
	ASSERT_EQ(perf_parse_mmap2(r.b, 72 + 8, &mm), PERF_PARSE_TRUNCATED);
	{
		struct perf_event_header h;

		memcpy(&h, r.b, sizeof(h));
		h.size = 72 + 8;
		memcpy(r.b, &h, sizeof(h));
		ASSERT_EQ(perf_parse_mmap2(r.b, 72 + 8, &mm), PERF_PARSE_BAD_VALUE);
		h.size = 72;
		memcpy(r.b, &h, sizeof(h));
		ASSERT_EQ(perf_parse_mmap2(r.b, 72, &mm), PERF_PARSE_TRUNCATED);
	}
}

TEST(mmap_log_replaces_overlaps_forks_and_expires)
{
	struct mmap_log l;
	struct buf t;
	struct mmap_log_map a = {.addr = 0x401000, .len = 0x1000, .pgoff = 0x1000,
				 .maj = 8, .min = 1, .ino = 7, .path = "/bin/a"};
	struct mmap_log_map b = {.addr = 0x7f0000002000ull, .len = 0x3000, .pgoff = 0x2000,
				 .maj = 8, .min = 1, .ino = 9, .path = "/lib/b.so"};
	struct mmap_log_map c = {.addr = 0x401800, .len = 0x100, .pgoff = 0,
				 .maj = 0, .min = 0, .ino = 0, .path = "/bin/c"};
	struct mmap_log_map anon = {.addr = 0x1000, .len = 0x1000, .path = "//anon"};
	unsigned i;

	mmap_log_init(&l);
	buf_init(&t);
	ASSERT_EQ(mmap_log_maps_text(&l, 10, &t), -ENOENT);
	mmap_log_add(&l, 10, &b);
	mmap_log_add(&l, 10, &a);
	anon.path = "[anon:x]";
	mmap_log_add(&l, 10, &anon); /* not a file: ignored */
	ASSERT_EQ(mmap_log_maps_text(&l, 10, &t), 0);
	/* Sorted; each range starts where file offset 0 would be mapped. */
	ASSERT_STREQ(buf_cstr(&t), "400000-402000 r-xp 00000000 08:01 7 /bin/a\n"
				   "7f0000000000-7f0000005000 r-xp 00000000 08:01 9 /lib/b.so\n");
	/* Child of a fork: a copy; the parent keeps its own. */
	mmap_log_fork(&l, 10, 11);
	/* c overlaps a: a goes (an exec or a remap); no device: a made-up inode. */
	mmap_log_add(&l, 10, &c);
	ASSERT_EQ(mmap_log_maps_text(&l, 10, &t), 0);
	ASSERT_TRUE(strstr(buf_cstr(&t), "/bin/a") == NULL);
	ASSERT_TRUE(strstr(buf_cstr(&t), "401800-401900 r-xp 00000000 00:00 ") != NULL);
	ASSERT_EQ(mmap_log_maps_text(&l, 11, &t), 0);
	ASSERT_TRUE(strstr(buf_cstr(&t), "/bin/a") != NULL);
	/* Exited: still there during the grace period, gone after. */
	mmap_log_exited(&l, 11, 1000);
	mmap_log_expire(&l, 1000 + MMAP_LOG_EXIT_GRACE_NS - 1);
	ASSERT_EQ(mmap_log_maps_text(&l, 11, &t), 0);
	mmap_log_expire(&l, 1000 + MMAP_LOG_EXIT_GRACE_NS);
	ASSERT_EQ(mmap_log_maps_text(&l, 11, &t), -ENOENT);
	ASSERT_EQ(mmap_log_maps_text(&l, 10, &t), 0);
	/* Bounded: the oldest process goes when the table is full. */
	for (i = 0; i < MMAP_LOG_MAX_PROCS + 5; i++)
		mmap_log_add(&l, 1000 + i, &a);
	ASSERT_EQ(l.procs.len, MMAP_LOG_MAX_PROCS);
	ASSERT_GE(l.procs_evicted, 5);
	ASSERT_EQ(mmap_log_maps_text(&l, 1000 + MMAP_LOG_MAX_PROCS + 4, &t), 0);
	buf_fini(&t);
	mmap_log_fini(&l);
}

/* --------------------------------------------------------------- ring ---- */

TEST(perf_ring_take_unwraps_and_stops_at_garbage)
{
	static uint8_t out[PERF_RECORD_MAX_BYTES];
	uint8_t ring[64];
	const uint8_t *rec = NULL;
	struct perf_event_header h = {.type = PERF_RECORD_SAMPLE, .misc = 0, .size = 24};
	uint64_t tail = 48, head, v = 0x1122334455667788ull;
	int i;

	memset(ring, 0, sizeof(ring));
	/* A 24-byte record at 48: header and one word before the wrap. */
	memcpy(ring + 48, &h, 8);
	memcpy(ring + 56, &v, 8);
	for (i = 0; i < 8; i++)
		ring[i] = (uint8_t)(0xa0 + i);
	head = 48 + 24;
	ASSERT_EQ(perf_ring_take(ring, sizeof(ring), head, &tail, out, &rec), 24);
	ASSERT_U64_EQ(tail, head);
	ASSERT_TRUE(rec == out); /* wrapped: copied */
	ASSERT_MEMEQ(out + 8, &v, 8);
	ASSERT_EQ(out[16], 0xa0);
	ASSERT_EQ(out[23], 0xa7);
	ASSERT_EQ(perf_ring_take(ring, sizeof(ring), head, &tail, out, &rec), 0);
	/* A record that does not wrap is read in place. */
	tail = 8;
	memcpy(ring + 8, &h, 8);
	ASSERT_EQ(perf_ring_take(ring, sizeof(ring), 32, &tail, out, &rec), 24);
	ASSERT_TRUE(rec == ring + 8);

	/* A header of size 0 (or past the head): everything to the head goes. */
	tail = 0;
	memset(ring, 0, sizeof(ring));
	ASSERT_EQ(perf_ring_take(ring, sizeof(ring), 32, &tail, out, &rec), -EBADMSG);
	ASSERT_U64_EQ(tail, 32);
	h.size = 40;
	tail = 0;
	memcpy(ring, &h, 8);
	ASSERT_EQ(perf_ring_take(ring, sizeof(ring), 32, &tail, out, &rec), -EBADMSG);
	/* A head more than a ring ahead is garbage too. */
	tail = 0;
	ASSERT_EQ(perf_ring_take(ring, sizeof(ring), 1000, &tail, out, &rec), -EBADMSG);
}

/* The side-band scan's filter: other types are stepped over uncopied (a
 * wrapped 64 KiB sample), the named ones taken; no filter takes any type,
 * also one past 63 that no mask bit can name. */
TEST(perf_ring_take_types_steps_over_the_others)
{
	static uint8_t out[PERF_RECORD_MAX_BYTES];
	uint8_t ring[64];
	const uint8_t *rec;
	struct perf_event_header s = {.type = PERF_RECORD_SAMPLE, .size = 24};
	struct perf_event_header m = {.type = PERF_RECORD_MMAP2, .size = 16};
	struct perf_event_header odd = {.type = 100, .size = 8};
	uint64_t mask = 1ull << PERF_RECORD_MMAP2, tail = 48;

	memset(ring, 0, sizeof(ring));
	memcpy(ring + 48, &s, 8); /* 48..72: wraps */
	memcpy(ring + 8, &m, 8);  /* 72..88 */
	memcpy(ring + 24, &odd, 8); /* 88..96 */
	memset(out, 0x55, 64);
	rec = ring;
	ASSERT_EQ(perf_ring_take_types(ring, sizeof(ring), 96, &tail, out, mask, &rec), 24);
	ASSERT_TRUE(rec == NULL);
	ASSERT_EQ(out[0], 0x55); /* not copied */
	ASSERT_EQ(perf_ring_take_types(ring, sizeof(ring), 96, &tail, out, mask, &rec), 16);
	ASSERT_TRUE(rec == ring + 8);
	ASSERT_EQ(perf_ring_take_types(ring, sizeof(ring), 96, &tail, out, mask, &rec), 8);
	ASSERT_TRUE(rec == NULL);
	ASSERT_U64_EQ(tail, 96);
	tail = 88;
	ASSERT_EQ(perf_ring_take(ring, sizeof(ring), 96, &tail, out, &rec), 8);
	ASSERT_TRUE(rec == ring + 24);
	ASSERT_EQ(perf_record_type(rec), 100);
}

/* ----------------------------------------------------------- kallsyms ---- */

TEST(kallsyms_parses_sorts_and_looks_up)
{
	static const char text[] = "ffffffff81000200 T second\n"
				   "ffffffff81000100 t first\n"
				   "ffffffff81000300 D data_symbol\n"
				   "garbage line\n"
				   "ffffffffc0000000 t mod_fn\t[some_module]\n"
				   "ffffffff81000400 W weak_fn";
	struct kallsyms ks;

	ASSERT_EQ(kallsyms_parse(&ks, text, sizeof(text) - 1), 0);
	ASSERT_EQ(ks.n_syms, 4);
	ASSERT_TRUE(kallsyms_lookup(&ks, 0xffffffff810000ffull) == NULL);
	ASSERT_STREQ(kallsyms_lookup(&ks, 0xffffffff81000100ull), "first");
	ASSERT_STREQ(kallsyms_lookup(&ks, 0xffffffff810001ffull), "first");
	ASSERT_STREQ(kallsyms_lookup(&ks, 0xffffffff81000350ull), "second");
	ASSERT_STREQ(kallsyms_lookup(&ks, 0xffffffff81000401ull), "weak_fn");
	ASSERT_STREQ(kallsyms_lookup(&ks, 0xffffffffc0000010ull), "mod_fn");
	kallsyms_fini(&ks);
}

TEST(kallsyms_restricted_addresses_give_an_empty_table)
{
	static const char text[] = "0000000000000000 T a\n0000000000000000 t b\n";
	struct kallsyms ks;

	ASSERT_EQ(kallsyms_parse(&ks, text, sizeof(text) - 1), 0);
	ASSERT_EQ(ks.n_syms, 0);
	ASSERT_TRUE(kallsyms_lookup(&ks, 0x1234) == NULL);
	kallsyms_fini(&ks);
}

/* ---------------------------------------------------------- fp walk ---- */

/* A stack copied from sp = 0x7000: frames at 0x7010 -> 0x7040 -> 0x7080. */
static void fp_stack(uint8_t *st, uint64_t last_fp)
{
	uint64_t w[2];

	memset(st, 0, 256);
	w[0] = 0x7040, w[1] = 0x401111;
	memcpy(st + 0x10, w, 16);
	w[0] = 0x7080, w[1] = 0x402222;
	memcpy(st + 0x40, w, 16);
	w[0] = last_fp, w[1] = 0x403333;
	memcpy(st + 0x80, w, 16);
}

TEST(fp_walk_follows_the_chain)
{
	uint8_t st[256];
	uint64_t pcs[16];
	enum fp_walk_end end;

	fp_stack(st, 0);
	ASSERT_EQ(fp_walk(0x400000, 0x7010, 0x7000, st, sizeof(st), pcs, 16, &end), 4);
	ASSERT_EQ(end, FP_WALK_DONE);
	ASSERT_U64_EQ(pcs[0], 0x400000);
	ASSERT_U64_EQ(pcs[1], 0x401111);
	ASSERT_U64_EQ(pcs[3], 0x403333);
}

TEST(fp_walk_stops_outside_the_copy_on_loops_and_at_max)
{
	uint8_t st[256];
	uint64_t pcs[16];
	enum fp_walk_end end;

	fp_stack(st, 0x9000);
	ASSERT_EQ(fp_walk(0x400000, 0x7010, 0x7000, st, sizeof(st), pcs, 16, &end), 4);
	ASSERT_EQ(end, FP_WALK_OUT_OF_STACK);
	/* The copy ends before the last frame record. */
	ASSERT_EQ(fp_walk(0x400000, 0x7010, 0x7000, st, 0x88, pcs, 16, &end), 3);
	ASSERT_EQ(end, FP_WALK_OUT_OF_STACK);
	fp_stack(st, 0x7010);
	ASSERT_EQ(fp_walk(0x400000, 0x7010, 0x7000, st, sizeof(st), pcs, 16, &end), 4);
	ASSERT_EQ(end, FP_WALK_NOT_ASCENDING);
	fp_stack(st, 0);
	ASSERT_EQ(fp_walk(0x400000, 0x7010, 0x7000, st, sizeof(st), pcs, 2, &end), 2);
	ASSERT_EQ(end, FP_WALK_MAX_FRAMES);
	/* Misaligned or below sp: nothing but the pc. */
	ASSERT_EQ(fp_walk(0x400000, 0x7011, 0x7000, st, sizeof(st), pcs, 16, &end), 1);
	ASSERT_EQ(fp_walk(0x400000, 0x6ff0, 0x7000, st, sizeof(st), pcs, 16, &end), 1);
	ASSERT_EQ(end, FP_WALK_OUT_OF_STACK);
}

/* ------------------------------------------------------------ config ---- */

static const char *fake_tracefs(void)
{
	static char root[512];
	char path[600];
	FILE *f;

	snprintf(root, sizeof(root), "%s/tracefs", test_tmpdir());
	snprintf(path, sizeof(path), "%s/events", root);
	mkdir(root, 0755);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/events/sched", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/events/sched/sched_switch", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/events/sched/sched_switch/id", root);
	f = fopen(path, "w");
	fputs("316\n", f);
	fclose(f);
	return root;
}

TEST(perf_config_defaults_are_upstreams)
{
	struct perf_config c;
	struct perf_event_attr a;
	char err[128];

	ASSERT_EQ(perf_config_parse(NULL, "/nonexistent", &c, err, sizeof(err)), 0);
	ASSERT_U64_EQ(c.frequency, PERF_DEFAULT_FREQUENCY_HZ);
	ASSERT_EQ(c.ring_pages, PERF_DEFAULT_RING_PAGES);
	ASSERT_EQ(c.read_period_ms, PERF_DEFAULT_READ_PERIOD_MS);
	ASSERT_EQ(c.unwind, PERF_UNWIND_SKIP);
	ASSERT_EQ(c.builtin_clock, 5); /* MONOTONIC_RAW */
	perf_config_leader_attr(&c, &a);
	ASSERT_EQ(a.type, PERF_TYPE_SOFTWARE);
	ASSERT_U64_EQ(a.config, PERF_COUNT_SW_CPU_CLOCK);
	ASSERT_U64_EQ(a.sample_type, PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_READ);
	ASSERT_TRUE(a.disabled);
	perf_config_fini(&c);
}

TEST(perf_config_callstacks_followers_and_tracepoints)
{
	Perfetto__Protos__PerfEventConfig pb = PERFETTO__PROTOS__PERF_EVENT_CONFIG__INIT;
	Perfetto__Protos__PerfEvents__Timebase tb = PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__INIT;
	Perfetto__Protos__PerfEvents__Tracepoint tp = PERFETTO__PROTOS__PERF_EVENTS__TRACEPOINT__INIT;
	Perfetto__Protos__FollowerEvent fo = PERFETTO__PROTOS__FOLLOWER_EVENT__INIT, *fos[1] = {&fo};
	Perfetto__Protos__PerfEventConfig__CallstackSampling cs =
		PERFETTO__PROTOS__PERF_EVENT_CONFIG__CALLSTACK_SAMPLING__INIT;
	struct perf_config c;
	struct perf_event_attr a, f;
	char err[128];

	tp.name = (char *)"sched:sched_switch";
	tb.event_case = PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__EVENT_TRACEPOINT;
	tb.tracepoint = &tp;
	tb.interval_case = PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__INTERVAL_PERIOD;
	tb.period = 1;
	fo.event_case = PERFETTO__PROTOS__FOLLOWER_EVENT__EVENT_COUNTER;
	fo.counter = PERFETTO__PROTOS__PERF_EVENTS__COUNTER__SW_PAGE_FAULTS;
	cs.kernel_frames = 1;
	pb.timebase = &tb;
	pb.n_followers = 1;
	pb.followers = fos;
	pb.callstack_sampling = &cs;
	ASSERT_EQ(perf_config_parse(&pb, fake_tracefs(), &c, err, sizeof(err)), 0);
	ASSERT_EQ(c.unwind, PERF_UNWIND_DWARF); /* unset means DWARF */
	ASSERT_TRUE(c.kernel_frames);
	perf_config_leader_attr(&c, &a);
	ASSERT_EQ(a.type, PERF_TYPE_TRACEPOINT);
	ASSERT_U64_EQ(a.config, 316);
	ASSERT_U64_EQ(a.sample_period, 1);
	ASSERT_U64_EQ(a.read_format, PERF_FORMAT_GROUP);
	ASSERT_TRUE(a.sample_type & PERF_SAMPLE_CALLCHAIN);
	ASSERT_FALSE(a.exclude_callchain_kernel);
	ASSERT_TRUE(a.exclude_callchain_user);
#if defined(__x86_64__)
	ASSERT_TRUE(a.sample_type & PERF_SAMPLE_STACK_USER);
	ASSERT_EQ(__builtin_popcountll(a.sample_regs_user), 17);
#endif
	perf_config_follower_attr(&c, 0, &f);
	ASSERT_U64_EQ(f.config, PERF_COUNT_SW_PAGE_FAULTS);
	/* A follower never samples: no stack, register or callchain bits
	 * (without their sizes they make perf_event_open fail). */
	ASSERT_U64_EQ(f.sample_type, PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_READ);
	ASSERT_FALSE(f.disabled);
	perf_config_fini(&c);

	{
		static char long_filter[PERF_FILTER_BYTES + 8];

		memset(long_filter, 'x', sizeof(long_filter) - 1);
		tp.filter = long_filter;
		ASSERT_EQ(perf_config_parse(&pb, fake_tracefs(), &c, err, sizeof(err)), -EINVAL);
		ASSERT_TRUE(strstr(err, "too long") != NULL);
		tp.filter = (char *)"prev_pid == 1";
		ASSERT_EQ(perf_config_parse(&pb, fake_tracefs(), &c, err, sizeof(err)), 0);
		ASSERT_STREQ(c.timebase.tp_filter, "prev_pid == 1");
		perf_config_fini(&c);
		tp.filter = NULL;
	}
	tp.name = (char *)"sched:no_such_event";
	ASSERT_EQ(perf_config_parse(&pb, fake_tracefs(), &c, err, sizeof(err)), -ENOENT);
	ASSERT_TRUE(strstr(err, "sched:no_such_event") != NULL);
	tp.name = (char *)"no_separator";
	ASSERT_EQ(perf_config_parse(&pb, fake_tracefs(), &c, err, sizeof(err)), -EINVAL);
	tp.name = (char *)"../../etc:passwd";
	ASSERT_EQ(perf_config_parse(&pb, fake_tracefs(), &c, err, sizeof(err)), -EINVAL);
}

TEST(perf_config_ring_pages_grow_for_stacks_when_unset)
{
	Perfetto__Protos__PerfEventConfig pb = PERFETTO__PROTOS__PERF_EVENT_CONFIG__INIT;
	Perfetto__Protos__PerfEvents__Timebase tb = PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__INIT;
	Perfetto__Protos__PerfEventConfig__CallstackSampling cs =
		PERFETTO__PROTOS__PERF_EVENT_CONFIG__CALLSTACK_SAMPLING__INIT;
	struct perf_config c;
	char err[128];

	tb.interval_case = PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__INTERVAL_FREQUENCY;
	tb.frequency = 1000;
	pb.timebase = &tb;
	pb.callstack_sampling = &cs;
	ASSERT_EQ(perf_config_parse(&pb, "/nonexistent", &c, err, sizeof(err)), 0);
	ASSERT_EQ(c.ring_pages, PERF_DEFAULT_RING_PAGES);
#if defined(__x86_64__)
	/* 64 KiB a sample at 1 kHz: 256 ms is ~16.8 MB, capped at 16 MiB a
	 * ring, which holds ~250 ms: read on the 100 ms period alone. */
	ASSERT_EQ(perf_config_ring_pages(&c, 2), PERF_AUTO_RING_MAX_PAGES);
	ASSERT_EQ(PERF_AUTO_RING_MAX_PAGES, 4096);
	ASSERT_EQ(perf_config_ring_ms(&c, 4096), 251);
	ASSERT_GE(perf_config_ring_ms(&c, 4096), PERF_TIMER_ONLY_PERIODS * c.read_period_ms);
	/* 64 MiB across 64 rings leaves each upstream's 1 MiB (15 ms: the
	 * rings' own wake-ups are waited on). */
	ASSERT_EQ(perf_config_ring_pages(&c, 64), 256);
	ASSERT_EQ(perf_config_ring_ms(&c, 256), 15);
	ASSERT_EQ(perf_config_ring_pages(&c, 16), 1024);
	c.frequency = 100; /* 256 ms of samples fit in 2 MiB */
	ASSERT_EQ(perf_config_ring_pages(&c, 2), 512);
	c.frequency = 50;
	ASSERT_EQ(perf_config_ring_pages(&c, 2), 256);
	/* A period timebase: no known rate. */
	c.frequency = 0;
	ASSERT_EQ(perf_config_ring_ms(&c, 4096), 0);
#endif
	perf_config_fini(&c);

	/* Set by the user: kept as given. */
	pb.ring_buffer_pages = 128;
	ASSERT_EQ(perf_config_parse(&pb, "/nonexistent", &c, err, sizeof(err)), 0);
	ASSERT_EQ(perf_config_ring_pages(&c, 2), 128);
	perf_config_fini(&c);
	/* No user stacks: nothing grows. */
	pb.ring_buffer_pages = 0;
	pb.callstack_sampling = NULL;
	ASSERT_EQ(perf_config_parse(&pb, "/nonexistent", &c, err, sizeof(err)), 0);
	ASSERT_EQ(perf_config_ring_pages(&c, 2), PERF_DEFAULT_RING_PAGES);
	perf_config_fini(&c);
}

TEST(perf_config_refusals)
{
	Perfetto__Protos__PerfEventConfig pb = PERFETTO__PROTOS__PERF_EVENT_CONFIG__INIT;
	Perfetto__Protos__PerfEvents__Timebase tb = PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__INIT;
	struct perf_config c;
	char err[128];

	tb.event_case = PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__EVENT_COUNTER;
	tb.counter = 99;
	pb.timebase = &tb;
	ASSERT_EQ(perf_config_parse(&pb, "/x", &c, err, sizeof(err)), -EINVAL);
	ASSERT_TRUE(strstr(err, "unknown perf counter 99") != NULL);
	tb.counter = PERFETTO__PROTOS__PERF_EVENTS__COUNTER__HW_CPU_CYCLES;
	ASSERT_EQ(perf_config_parse(&pb, "/x", &c, err, sizeof(err)), 0);
	ASSERT_EQ(c.timebase.type, PERF_TYPE_HARDWARE);
	perf_config_fini(&c);
	pb.ring_buffer_pages = 3;
	ASSERT_EQ(perf_config_parse(&pb, "/x", &c, err, sizeof(err)), -EINVAL);
	ASSERT_TRUE(strstr(err, "power of two") != NULL);
	pb.ring_buffer_pages = 0;
}

/* PERF_MAX_FOLLOWERS followers are taken, one more is refused. */
TEST(perf_config_followers_at_the_limit)
{
	Perfetto__Protos__PerfEventConfig pb = PERFETTO__PROTOS__PERF_EVENT_CONFIG__INIT;
	Perfetto__Protos__FollowerEvent fo = PERFETTO__PROTOS__FOLLOWER_EVENT__INIT;
	Perfetto__Protos__FollowerEvent *fos[PERF_MAX_FOLLOWERS + 1];
	struct perf_config c;
	char err[128];
	size_t i;

	fo.event_case = PERFETTO__PROTOS__FOLLOWER_EVENT__EVENT_COUNTER;
	fo.counter = PERFETTO__PROTOS__PERF_EVENTS__COUNTER__SW_CONTEXT_SWITCHES;
	for (i = 0; i <= PERF_MAX_FOLLOWERS; i++)
		fos[i] = &fo;
	pb.followers = fos;
	pb.n_followers = PERF_MAX_FOLLOWERS;
	ASSERT_EQ(perf_config_parse(&pb, "/x", &c, err, sizeof(err)), 0);
	ASSERT_EQ(c.n_followers, PERF_MAX_FOLLOWERS);
	perf_config_fini(&c);
	pb.n_followers = PERF_MAX_FOLLOWERS + 1;
	ASSERT_EQ(perf_config_parse(&pb, "/x", &c, err, sizeof(err)), -EINVAL);
}

/* ------------------------------------------------------------- scope ---- */

TEST(perf_scope_targets_excludes_and_globs)
{
	struct perf_scope s;
	char c0[] = "perf_hot*", c1[] = "/usr/bin/bash";

	memset(&s, 0, sizeof(s));
	ASSERT_TRUE(perf_scope_accepts(&s, 5, "anything"));
	s.pids[0] = 10;
	s.n_pids = 1;
	s.cmdlines[0] = c0;
	s.n_cmdlines = 1;
	ASSERT_TRUE(perf_scope_accepts(&s, 10, ""));
	ASSERT_TRUE(perf_scope_accepts(&s, 11, "/work/out/perf_hot_nofp"));
	ASSERT_FALSE(perf_scope_accepts(&s, 12, "/usr/bin/sleep"));
	s.exclude_pids[0] = 10;
	s.n_exclude_pids = 1;
	ASSERT_FALSE(perf_scope_accepts(&s, 10, ""));
	memset(&s, 0, sizeof(s));
	s.exclude_cmdlines[0] = c1;
	s.n_exclude_cmdlines = 1;
	ASSERT_FALSE(perf_scope_accepts(&s, 3, "/usr/bin/bash"));
	ASSERT_TRUE(perf_scope_accepts(&s, 3, "/bin/bash"));
	s.shard_count = 4;
	s.chosen_shard = 1;
	ASSERT_TRUE(perf_scope_accepts(&s, 5, "x"));
	ASSERT_FALSE(perf_scope_accepts(&s, 6, "x"));
}

/* ------------------------------------------------------------ intern ---- */

static size_t count_field(const uint8_t *buf, size_t len, uint32_t id)
{
	struct pz_reader r;
	struct pz_field f;
	size_t n = 0;

	pz_reader_init(&r, buf, len);
	while (pz_reader_next(&r, &f) > 0)
		n += f.id == id;
	return n;
}

TEST(perf_intern_defines_once_and_again_after_clear)
{
	static uint8_t buf[4096];
	struct perf_intern in;
	struct intern_frame fr[3];
	struct pz_stream s;
	struct pz_msg m;
	uint64_t a, b, c;
	size_t len1, len2;
	static const uint8_t bid[4] = {1, 2, 3, 4};

	memset(fr, 0, sizeof(fr));
	fr[0].function = "leaf";
	fr[0].map_path = "/usr/lib/libx.so";
	fr[0].build_id = bid;
	fr[0].build_id_len = 4;
	fr[0].rel_pc = 0x10;
	fr[1] = fr[0];
	fr[1].function = "caller";
	fr[1].rel_pc = 0x20;
	fr[2].function = "main";
	fr[2].map_path = "kernel";
	perf_intern_init(&in);

	pz_stream_init_flat(&s, buf, sizeof(buf));
	pz_msg_begin(&m, &s, NULL);
	a = perf_intern_callstack(&in, fr, 3, &m);
	len1 = m.size;
	ASSERT_EQ(a, 1);
	ASSERT_EQ(count_field(buf, len1, PB_INTERNED_DATA__FRAMES), 3);
	ASSERT_EQ(count_field(buf, len1, PB_INTERNED_DATA__FUNCTION_NAMES), 3);
	ASSERT_EQ(count_field(buf, len1, PB_INTERNED_DATA__MAPPINGS), 2);
	ASSERT_EQ(count_field(buf, len1, PB_INTERNED_DATA__BUILD_IDS), 1);
	/* usr, lib, libx.so, kernel */
	ASSERT_EQ(count_field(buf, len1, PB_INTERNED_DATA__MAPPING_PATHS), 4);
	ASSERT_EQ(count_field(buf, len1, PB_INTERNED_DATA__CALLSTACKS), 1);

	pz_stream_init_flat(&s, buf, sizeof(buf));
	pz_msg_begin(&m, &s, NULL);
	b = perf_intern_callstack(&in, fr, 3, &m);
	ASSERT_EQ(b, a);
	ASSERT_EQ(m.size, 0); /* nothing new */
	c = perf_intern_callstack(&in, fr + 1, 2, &m);
	ASSERT_EQ(c, 2);
	ASSERT_EQ(count_field(buf, m.size, PB_INTERNED_DATA__FRAMES), 0);
	ASSERT_EQ(count_field(buf, m.size, PB_INTERNED_DATA__CALLSTACKS), 1);

	perf_intern_clear(&in);
	pz_stream_init_flat(&s, buf, sizeof(buf));
	pz_msg_begin(&m, &s, NULL);
	ASSERT_EQ(perf_intern_callstack(&in, fr, 3, &m), 1);
	len2 = m.size;
	ASSERT_EQ(len2, len1);
	perf_intern_fini(&in);
}

/* One frame stepped with packed rules over a hand-made stack copy. */
TEST(cfi_rule_steps_frames)
{
	uint64_t stack[8] = {0}, base = 0x7ffd0000;
	struct cfi_regs r = {.pc = 0x401000, .sp = base, .bp = 0x1234, .bp_known = true};
	uint64_t rule;

	/* push rbp; sub rsp, 24: CFA = rsp + 40, rip at CFA - 8, rbp at CFA - 16 */
	stack[3] = 0x7ffd0100; /* saved rbp */
	stack[4] = 0x401234;   /* return address */
	rule = cfi_rule_pack(false, 40, false, -8, 1, -16);
	ASSERT_TRUE(rule != CFI_RULE_NONE);
	ASSERT_EQ(cfi_rule_step(rule, &r, (const uint8_t *)stack, sizeof(stack), base), CFI_STEP_OK);
	ASSERT_U64_EQ(r.pc, 0x401234);
	ASSERT_U64_EQ(r.sp, base + 40);
	ASSERT_U64_EQ(r.bp, 0x7ffd0100);
	/* The caller keeps a CFA in rbp: rbp + 16, rbp unchanged, rip at -8. */
	r.bp = base + 40; /* frame at stack[5..] */
	stack[6] = 0x405678;
	rule = cfi_rule_pack(true, 16, false, -8, 0, 0);
	ASSERT_EQ(cfi_rule_step(rule, &r, (const uint8_t *)stack, sizeof(stack), base), CFI_STEP_OK);
	ASSERT_U64_EQ(r.pc, 0x405678);
	ASSERT_U64_EQ(r.sp, base + 56);
	ASSERT_U64_EQ(r.bp, base + 40);
	/* Beyond the copy: failed, registers kept. */
	rule = cfi_rule_pack(false, 64, false, -8, 0, 0);
	ASSERT_EQ(cfi_rule_step(rule, &r, (const uint8_t *)stack, sizeof(stack), base), CFI_STEP_FAILED);
	ASSERT_U64_EQ(r.pc, 0x405678);
	/* No return address: the outermost frame. */
	rule = cfi_rule_pack(false, 8, true, 0, 2, 0);
	ASSERT_EQ(cfi_rule_step(rule, &r, (const uint8_t *)stack, sizeof(stack), base), CFI_STEP_END);
	/* rbp undefined, then a CFA from rbp: failed. */
	r = (struct cfi_regs){.pc = 1, .sp = base, .bp = 0, .bp_known = true};
	stack[0] = 0x401111;
	ASSERT_EQ(cfi_rule_step(cfi_rule_pack(false, 8, false, -8, 2, 0), &r, (const uint8_t *)stack,
				sizeof(stack), base), CFI_STEP_OK);
	ASSERT_FALSE(r.bp_known);
	ASSERT_EQ(cfi_rule_step(cfi_rule_pack(true, 16, false, -8, 0, 0), &r, (const uint8_t *)stack,
				sizeof(stack), base), CFI_STEP_FAILED);
	/* A CFA under the stack copy's start (wrapping): failed. */
	r = (struct cfi_regs){.pc = 1, .sp = base, .bp = 0, .bp_known = true};
	ASSERT_EQ(cfi_rule_step(cfi_rule_pack(false, -64, false, -8, 0, 0), &r,
				(const uint8_t *)stack, sizeof(stack), base), CFI_STEP_FAILED);
	/* Offsets that do not fit, an unknown rbp rule, and NONE itself. */
	ASSERT_U64_EQ(cfi_rule_pack(false, 1 << 23, false, -8, 0, 0), CFI_RULE_NONE);
	ASSERT_U64_EQ(cfi_rule_pack(false, 8, false, 1 << 15, 0, 0), CFI_RULE_NONE);
	ASSERT_U64_EQ(cfi_rule_pack(false, 8, false, -8, 1, 1 << 14), CFI_RULE_NONE);
	ASSERT_U64_EQ(cfi_rule_pack(false, 8, false, -8, 3, 0), CFI_RULE_NONE);
	ASSERT_EQ(cfi_rule_step(CFI_RULE_NONE, &r, (const uint8_t *)stack, sizeof(stack), base),
		  CFI_STEP_FAILED);
	/* Negative offsets survive packing. */
	r = (struct cfi_regs){.pc = 1, .sp = base + 32, .bp = 0, .bp_known = true};
	stack[1] = 0x409999;
	ASSERT_EQ(cfi_rule_step(cfi_rule_pack(false, -16, false, -8, 0, 0), &r,
				(const uint8_t *)stack, sizeof(stack), base), CFI_STEP_OK);
	ASSERT_U64_EQ(r.pc, 0x409999);
	ASSERT_U64_EQ(r.sp, base + 16);
}

/* Mappings are told apart by content, whatever pointers name them; a
 * frame without a mapping between two of one module changes nothing. */
/* How much of a sample's stack the reader queues, per thread. */
TEST(stack_tops_keep_learn_forget)
{
	struct stack_tops t;
	uint64_t sp = 0x7ffd0000;

	ASSERT_EQ(stack_tops_init(&t), 0);
	/* Unknown thread: all of it. */
	ASSERT_U64_EQ(stack_tops_keep(&t, 10, 11, sp, 20000), 20000);
	stack_tops_learn(&t, 10, 11, sp + 1000);
	ASSERT_U64_EQ(stack_tops_keep(&t, 10, 11, sp, 20000), 1000 + STACK_TOPS_SLACK);
	/* Deeper samples keep more; the top is per thread and per process. */
	ASSERT_U64_EQ(stack_tops_keep(&t, 10, 11, sp - 4000, 20000), 5000 + STACK_TOPS_SLACK);
	ASSERT_U64_EQ(stack_tops_keep(&t, 10, 12, sp, 20000), 20000);
	ASSERT_U64_EQ(stack_tops_keep(&t, 11, 11, sp, 20000), 20000);
	/* A copy not longer than top + slack, an sp above the top: as copied. */
	ASSERT_U64_EQ(stack_tops_keep(&t, 10, 11, sp, 1200), 1200);
	ASSERT_U64_EQ(stack_tops_keep(&t, 10, 11, sp + 1000, 20000), 20000);
	ASSERT_U64_EQ(stack_tops_keep(&t, 10, 11, sp + 5000, 20000), 20000);
	/* The top only grows. */
	stack_tops_learn(&t, 10, 11, sp + 800);
	ASSERT_U64_EQ(stack_tops_keep(&t, 10, 11, sp, 20000), 1000 + STACK_TOPS_SLACK);
	stack_tops_learn(&t, 10, 11, sp + 3000);
	ASSERT_U64_EQ(stack_tops_keep(&t, 10, 11, sp, 20000), 3000 + STACK_TOPS_SLACK);
	stack_tops_forget(&t, 10, 11);
	ASSERT_U64_EQ(stack_tops_keep(&t, 10, 11, sp, 20000), 20000);
	stack_tops_fini(&t);
}

TEST(stack_tops_blocked_across_an_exec)
{
	struct stack_tops t;
	uint64_t sp = 0x7ffd00000000ull;

	ASSERT_EQ(stack_tops_init(&t), 0);
	stack_tops_learn(&t, 20, 20, sp + 3000);
	/* The reader sees the exec: whole copies from now on... */
	stack_tops_block_pid(&t, 20);
	ASSERT_U64_EQ(stack_tops_keep(&t, 20, 20, sp, 20000), 20000);
	/* ...and the samples queued before it teach nothing (old program). */
	stack_tops_learn(&t, 20, 20, sp + 1000);
	ASSERT_U64_EQ(stack_tops_keep(&t, 20, 20, sp, 20000), 20000);
	/* Other processes are not affected. */
	stack_tops_learn(&t, 21, 21, sp + 3000);
	ASSERT_U64_EQ(stack_tops_keep(&t, 21, 21, sp, 20000), 3000 + STACK_TOPS_SLACK);
	/* The loop thread reaches the exec: the new program's tops are learned. */
	stack_tops_unblock_pid(&t, 20);
	ASSERT_U64_EQ(stack_tops_keep(&t, 20, 20, sp, 20000), 20000);
	stack_tops_learn(&t, 20, 20, sp + 5000);
	ASSERT_U64_EQ(stack_tops_keep(&t, 20, 20, sp, 20000), 5000 + STACK_TOPS_SLACK);
	stack_tops_fini(&t);
}

TEST(perf_intern_mappings_by_content)
{
	static uint8_t buf[8192];
	static char path_a[] = "/usr/lib/liby.so", path_b[] = "/usr/lib/liby.so";
	struct perf_intern in;
	struct intern_frame fr[5];
	struct pz_stream s;
	struct pz_msg m;

	memset(fr, 0, sizeof(fr));
	fr[0].function = "f0";
	fr[0].map_path = path_a;
	fr[0].map_start = 0x1000;
	fr[0].map_end = 0x2000;
	fr[1] = fr[0];
	fr[1].function = "f1";
	fr[1].map_path = path_b; /* same content, another pointer */
	fr[2].function = "error frame"; /* no mapping */
	fr[3] = fr[1]; /* fr[1]'s pointers again, after the unmapped frame */
	fr[3].function = "f3";
	fr[4] = fr[0];
	fr[4].function = "f4";
	fr[4].map_start = 0x3000; /* same path pointer, another range */
	fr[4].map_end = 0x4000;
	perf_intern_init(&in);
	pz_stream_init_flat(&s, buf, sizeof(buf));
	pz_msg_begin(&m, &s, NULL);
	ASSERT_EQ(perf_intern_callstack(&in, fr, 5, &m), 1);
	ASSERT_EQ(count_field(buf, m.size, PB_INTERNED_DATA__FRAMES), 5);
	ASSERT_EQ(count_field(buf, m.size, PB_INTERNED_DATA__MAPPINGS), 2);
	/* Same name and rel_pc in the other mapping: another frame. */
	fr[0].map_start = 0x3000;
	fr[0].map_end = 0x4000;
	pz_stream_init_flat(&s, buf, sizeof(buf));
	pz_msg_begin(&m, &s, NULL);
	ASSERT_EQ(perf_intern_callstack(&in, fr, 1, &m), 2);
	ASSERT_EQ(count_field(buf, m.size, PB_INTERNED_DATA__FRAMES), 1);
	ASSERT_EQ(count_field(buf, m.size, PB_INTERNED_DATA__MAPPINGS), 0);
	perf_intern_fini(&in);
}

/* Callstacks list frames root first: the last frame given is the first id. */
TEST(perf_intern_callstack_is_root_first)
{
	static uint8_t buf[4096];
	struct perf_intern in;
	struct intern_frame fr[2];
	struct pz_stream s;
	struct pz_msg m;
	struct pz_reader r, r2;
	struct pz_field f, g;
	uint64_t ids[2];
	size_t n = 0;

	memset(fr, 0, sizeof(fr));
	fr[0].function = "leaf";
	fr[1].function = "root";
	perf_intern_init(&in);
	pz_stream_init_flat(&s, buf, sizeof(buf));
	pz_msg_begin(&m, &s, NULL);
	perf_intern_callstack(&in, fr, 2, &m);
	pz_reader_init(&r, buf, m.size);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id != PB_INTERNED_DATA__CALLSTACKS)
			continue;
		pz_reader_init(&r2, f.data, f.size);
		while (pz_reader_next(&r2, &g) > 0) {
			if (g.id == PB_CALLSTACK__FRAME_IDS && n < 2)
				ids[n++] = g.value;
		}
	}
	ASSERT_EQ(n, 2);
	/* Frame iids are given in order: leaf 1, root 2. */
	ASSERT_U64_EQ(ids[0], 2);
	ASSERT_U64_EQ(ids[1], 1);
	perf_intern_fini(&in);
}

/* ------------------------------------------------------------ symtab ---- */

TEST(symtab_lookup_sizes_aliases_and_sharing)
{
	struct symtab_cache c;
	struct symtab *t, *t2;

	symtab_cache_init(&c);
	ASSERT_TRUE(symtab_cache_get(&c, 42) == NULL);
	t = symtab_cache_create(&c, 42);
	ASSERT_TRUE(t != NULL);
	ASSERT_EQ(symtab_add(t, 0x2000, 0x100, "second"), 0);
	ASSERT_EQ(symtab_add(t, 0x1000, 0x10, "first"), 0);
	ASSERT_EQ(symtab_add(t, 0x2000, 0, "second_alias"), 0);
	ASSERT_EQ(symtab_add(t, 0x3000, 0, "unsized"), 0);
	symtab_finish(t);
	ASSERT_TRUE(symtab_lookup(t, 0xfff) == NULL);
	ASSERT_STREQ(symtab_lookup(t, 0x1000), "first");
	ASSERT_STREQ(symtab_lookup(t, 0x100f), "first");
	ASSERT_TRUE(symtab_lookup(t, 0x1010) == NULL); /* past its size */
	ASSERT_STREQ(symtab_lookup(t, 0x20ff), "second");
	ASSERT_STREQ(symtab_lookup(t, 0x3fff), "unsized");
	/* A second process mapping the same ELF shares the table. */
	t2 = symtab_cache_get(&c, 42);
	ASSERT_TRUE(t2 == t);
	ASSERT_EQ(t->refs, 2);
	symtab_cache_put(&c, t2);
	symtab_cache_put(&c, t);
	ASSERT_EQ(t->refs, 0);
	symtab_cache_fini(&c);
}

TEST(symtab_many_symbols_stay_sorted)
{
	struct symtab_cache c;
	struct symtab *t;
	char name[32];
	uint64_t i;

	symtab_cache_init(&c);
	t = symtab_cache_create(&c, 1);
	for (i = 5000; i > 0; i--) {
		snprintf(name, sizeof(name), "f%llu", (unsigned long long)i);
		ASSERT_EQ(symtab_add(t, i * 16, 16, name), 0);
	}
	symtab_finish(t);
	ASSERT_EQ(t->n_syms, 5000);
	ASSERT_STREQ(symtab_lookup(t, 1234 * 16 + 3), "f1234");
	ASSERT_STREQ(symtab_lookup(t, 5000 * 16 + 15), "f5000");
	symtab_cache_fini(&c);
}

/* ------------------------------------------------ unwind (libdw, live) ---- */

#if defined(__x86_64__)
/* A sample of this very thread, as the kernel would write it: the user
 * registers in perf's order (ax bx cx dx si di bp sp ip r8..r15) and a copy
 * of the stack from sp. Taken inside a function with a known caller. */
static uint8_t g_stack_copy[16384];

/* Bytes of the mapping holding @sp above it (the stack's end), from maps. */
static size_t stack_room(uint64_t sp)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	size_t room = 0;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;

		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && sp >= lo && sp < hi)
			room = (size_t)(hi - sp);
	}
	if (f)
		fclose(f);
	return room;
}

/* Copies live stack (other frames' redzones included, under ASan): as the
 * kernel does, byte by byte and unchecked. */
__attribute__((no_sanitize_address, noinline)) static void copy_stack(uint8_t *dst, uint64_t src,
								  size_t n)
{
	const volatile uint8_t *p = (const volatile uint8_t *)(uintptr_t)src;
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] = p[i];
}

__attribute__((noinline)) static void take_sample(struct perf_sample *s)
{
	uint64_t ip, sp, bp;
	size_t n;

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(bp));
	memset(s, 0, sizeof(*s));
	s->pid = (uint32_t)getpid();
	s->tid = s->pid;
	s->has_regs = true;
	s->regs[6] = bp;
	s->regs[7] = sp;
	s->regs[8] = ip;
	n = stack_room(sp);
	if (n > sizeof(g_stack_copy))
		n = sizeof(g_stack_copy);
	copy_stack(g_stack_copy, sp, n);
	s->stack = g_stack_copy;
	s->stack_bytes = n;
}

__attribute__((noinline)) static void caller_of_take_sample(struct perf_sample *s)
{
	take_sample(s);
	__asm__ volatile("" ::: "memory");
}

static bool has_frame(const struct unwind_result *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		if (r->frames[i].function && !strcmp(r->frames[i].function, name))
			return true;
	}
	return false;
}
#endif

TEST(unwind_own_stack_by_dwarf_with_names_and_build_id)
{
#if defined(__x86_64__)
	static struct unwind_result r;
	struct perf_sample s;
	struct unwinder *u;
	struct unwind_stats st;
	uint64_t whole;
	size_t n;

	caller_of_take_sample(&s);
	ASSERT_EQ(unwinder_create(&u), 0);
	unwind_sample(u, &s, PERF_UNWIND_DWARF, &r);
	ASSERT_GE(r.n, 3);
	ASSERT_STREQ(r.frames[0].function, "take_sample");
	ASSERT_TRUE(has_frame(&r, "caller_of_take_sample"));
	ASSERT_TRUE(r.frames[0].module != NULL);
	ASSERT_TRUE(strstr(r.frames[0].module->path, "perf_test") != NULL);
	ASSERT_GT(r.frames[0].module->build_id_len, 0);
	/* rel_pc is the ELF address: within the test binary, not the mapping. */
	ASSERT_LT(r.frames[0].rel_pc, r.frames[0].pc);
	/* A second sample of the same process reuses its state and tables. */
	unwind_sample(u, &s, PERF_UNWIND_DWARF, &r);
	unwinder_get_stats(u, &st);
	ASSERT_EQ(st.procs_created, 1);
	ASSERT_TRUE(has_frame(&r, "caller_of_take_sample"));
	/* The whole stack was copied: the unwind reached _start, and says how
	 * high it read. Cut there, the same frames; a word lower, it runs off
	 * the copy and says so (traced_perf's reader cuts stacks by this). */
	ASSERT_FALSE(r.past_copy);
	ASSERT_GT(r.stack_top, s.regs[7]);
	ASSERT_LE(r.stack_top - s.regs[7], s.stack_bytes);
	n = r.n;
	whole = s.stack_bytes;
	s.stack_bytes = r.stack_top - s.regs[7];
	unwind_sample(u, &s, PERF_UNWIND_DWARF, &r);
	ASSERT_EQ(r.n, n);
	ASSERT_FALSE(r.past_copy);
	s.stack_bytes -= 8;
	unwind_sample(u, &s, PERF_UNWIND_DWARF, &r);
	ASSERT_TRUE(r.past_copy);
	ASSERT_U64_EQ(r.stack_top, 0);
	s.stack_bytes = whole;
	/* A stack copy cut short: fewer frames or an error, never a crash. */
	s.stack_bytes = 16;
	unwind_sample(u, &s, PERF_UNWIND_DWARF, &r);
	ASSERT_GE(r.n, 1);
	ASSERT_TRUE(r.past_copy);
	ASSERT_STREQ(r.frames[0].function, "take_sample");
	s.stack_bytes = 0;
	s.stack = NULL;
	unwind_sample(u, &s, PERF_UNWIND_DWARF, &r);
	ASSERT_GE(r.n, 1);
	unwinder_forget(u, s.pid);
	unwinder_destroy(u);
#else
	SKIP("user unwinding is x86-64 only");
#endif
}

#if defined(__x86_64__)
/* Feeds @u what the kernel would have sent for this process's executable
 * mappings (PERF_RECORD_MMAP2), under @pid. Return: how many. */
static int note_own_mappings(struct unwinder *u, uint32_t pid)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	int n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off, ino;
		unsigned maj, min;
		char perm[8], path[3000];
		struct perf_mmap2 m;

		path[0] = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %2999s", &lo, &hi, perm, &off, &maj,
			   &min, &ino, path) < 8 || perm[2] != 'x' || path[0] != '/')
			continue;
		memset(&m, 0, sizeof(m));
		m.pid = m.tid = pid;
		m.addr = lo;
		m.len = hi - lo;
		m.pgoff = off;
		m.maj = maj;
		m.min = min;
		m.ino = ino;
		m.prot = 5; /* PROT_READ | PROT_EXEC */
		m.path = path;
		unwinder_note_mmap(u, &m);
		n++;
	}
	fclose(f);
	return n;
}
#endif

TEST(unwind_exited_process_from_mmap_records)
{
#if defined(__x86_64__)
	static struct unwind_result r;
	struct perf_sample s;
	struct unwinder *u;
	struct unwind_stats st;
	const uint32_t gone = 0x3ffffff1; /* above pid_max: no /proc entry */

	caller_of_take_sample(&s);
	s.pid = s.tid = gone;
	ASSERT_EQ(unwinder_create(&u), 0);
	ASSERT_GT(note_own_mappings(u, gone), 0);
	/* Its exit came first (another CPU's ring): the log keeps it a while. */
	unwinder_forget(u, gone);
	unwind_sample(u, &s, PERF_UNWIND_DWARF, &r);
	ASSERT_EQ(r.error, UNWIND_ERR_NONE);
	ASSERT_GE(r.n, 3);
	ASSERT_STREQ(r.frames[0].function, "take_sample");
	ASSERT_TRUE(has_frame(&r, "caller_of_take_sample"));
	ASSERT_TRUE(strstr(r.frames[0].module->path, "perf_test") != NULL);
	ASSERT_GT(r.frames[0].module->build_id_len, 0);
	unwinder_get_stats(u, &st);
	ASSERT_EQ(st.maps_from_records, 1);
	/* A forked child that never exec'd has its parent's mappings. */
	unwinder_note_fork(u, gone, gone + 1);
	s.pid = s.tid = gone + 1;
	unwind_sample(u, &s, PERF_UNWIND_DWARF, &r);
	ASSERT_TRUE(has_frame(&r, "caller_of_take_sample"));
	unwinder_destroy(u);
#else
	SKIP("user unwinding is x86-64 only");
#endif
}

TEST(unwind_gone_process_gives_an_error_not_a_crash)
{
#if defined(__x86_64__)
	static struct unwind_result r;
	struct perf_sample s;
	struct unwinder *u;

	caller_of_take_sample(&s);
	s.pid = s.tid = 0x3ffffff0; /* above pid_max: no such process */
	ASSERT_EQ(unwinder_create(&u), 0);
	unwind_sample(u, &s, PERF_UNWIND_DWARF, &r);
	ASSERT_EQ(r.error, UNWIND_ERR_MAPS_PARSE);
	ASSERT_LE(r.n, 1);
	unwinder_destroy(u);
#else
	SKIP("user unwinding is x86-64 only");
#endif
}

/* --------------------------------------------------------- rec_queue ---- */

/* Entry @i: i % 3000 + 1 bytes of (i & 0xff), tag i & 0xffff, flags i % 4. */
static size_t q_len(uint32_t i)
{
	return i % 3000 + 1;
}

static bool q_push(struct rec_queue *q, uint32_t i)
{
	uint8_t *room = rq_reserve(q, q_len(i));

	if (!room)
		return false;
	memset(room, (int)(i & 0xff), q_len(i));
	rq_commit(q, q_len(i), (uint16_t)i, (uint16_t)(i % 4));
	return true;
}

static bool q_check(const struct rq_entry *e, uint32_t i)
{
	size_t k;

	if (e->len != q_len(i) || e->tag != (uint16_t)i || e->flags != i % 4)
		return false;
	for (k = 0; k < e->len; k++) {
		if (e->data[k] != (uint8_t)i)
			return false;
	}
	return true;
}

TEST(rec_queue_in_order_across_blocks_within_its_budget)
{
	struct rec_queue q;
	_Atomic uint64_t shared = 0;
	struct rq_entry e;
	uint32_t i, n = 0;

	ASSERT_EQ(rq_init(&q, 4u << 20, &shared), 0);
	ASSERT_FALSE(rq_peek(&q, &e));
	/* Fill to the budget: about 4 MiB of 1..3000-byte entries, over
	 * several 1 MiB blocks; the one that does not fit is refused. */
	while (q_push(&q, n))
		n++;
	ASSERT_GT(n, 2000);
	ASSERT_LE(rq_bytes(&q), 4u << 20);
	ASSERT_GT(rq_bytes(&q) + 8 + q_len(n), 4u << 20);
	ASSERT_U64_EQ(atomic_load(&shared), rq_bytes(&q));
	for (i = 0; i < n / 2; i++) {
		ASSERT_TRUE(rq_peek(&q, &e));
		ASSERT_TRUE(q_check(&e, i));
		rq_pop(&q);
	}
	/* Room again: the producer goes on while half is still queued. */
	while (q_push(&q, n))
		n++;
	for (; i < n; i++) {
		ASSERT_TRUE(rq_peek(&q, &e));
		ASSERT_TRUE(q_check(&e, i));
		rq_pop(&q);
	}
	ASSERT_FALSE(rq_peek(&q, &e));
	ASSERT_EQ(rq_bytes(&q), 0);
	ASSERT_U64_EQ(atomic_load(&shared), 0);
	/* Empty: the next entry starts at the block's start again. */
	ASSERT_TRUE(q_push(&q, 7));
	ASSERT_TRUE(rq_peek(&q, &e));
	ASSERT_TRUE(q_check(&e, 7));
	rq_fini(&q);
	ASSERT_U64_EQ(atomic_load(&shared), 0);
}

TEST(rec_queue_counts_entries_committed_and_popped)
{
	struct rec_queue q;
	struct rq_entry e;
	uint32_t i;

	ASSERT_EQ(rq_init(&q, 1u << 20, NULL), 0);
	ASSERT_U64_EQ(rq_committed(&q), 0);
	ASSERT_U64_EQ(rq_popped(&q), 0);
	for (i = 0; i < 10; i++)
		ASSERT_TRUE(q_push(&q, i));
	/* Reserved but not committed: not counted. */
	ASSERT_TRUE(rq_reserve(&q, 100) != NULL);
	ASSERT_U64_EQ(rq_committed(&q), 10);
	for (i = 0; i < 4; i++) {
		ASSERT_TRUE(rq_peek(&q, &e));
		rq_pop(&q);
	}
	ASSERT_U64_EQ(rq_popped(&q), 4);
	/* A flush bounded by the count committed when it began stops there
	 * although more arrives meanwhile. */
	ASSERT_TRUE(q_push(&q, 10));
	ASSERT_U64_EQ(rq_committed(&q), 11);
	ASSERT_U64_EQ(rq_committed(&q) - rq_popped(&q), 7);
	rq_fini(&q);
}

TEST(rec_queue_entry_bigger_than_a_block)
{
	struct rec_queue q;
	struct rq_entry e;
	uint8_t *room;

	ASSERT_EQ(rq_init(&q, 8u << 20, NULL), 0);
	ASSERT_TRUE(q_push(&q, 1));
	room = rq_reserve(&q, 3u << 20);
	ASSERT_TRUE(room != NULL);
	memset(room, 0x5a, 3u << 20);
	rq_commit(&q, 3u << 20, 2, 1);
	ASSERT_TRUE(q_push(&q, 3));
	ASSERT_TRUE(rq_peek(&q, &e));
	ASSERT_TRUE(q_check(&e, 1));
	rq_pop(&q);
	ASSERT_TRUE(rq_peek(&q, &e));
	ASSERT_EQ(e.len, 3u << 20);
	ASSERT_EQ(e.data[(3u << 20) - 1], 0x5a);
	rq_pop(&q);
	ASSERT_TRUE(rq_peek(&q, &e));
	ASSERT_TRUE(q_check(&e, 3));
	rq_pop(&q);
	ASSERT_FALSE(rq_peek(&q, &e));
	/* Past the budget at once: refused, nothing queued. */
	ASSERT_TRUE(rq_reserve(&q, 9u << 20) == NULL);
	ASSERT_FALSE(rq_peek(&q, &e));
	rq_fini(&q);
}

struct q_thread {
	struct rec_queue *q;
	uint32_t n;
};

static void *q_producer(void *arg)
{
	struct q_thread *t = arg;
	uint32_t i;

	for (i = 0; i < t->n;) {
		if (q_push(t->q, i))
			i++;
		else
			rq_wait_space(t->q, 10);
	}
	return NULL;
}

/* A producer thread and this consumer, through a small budget: every
 * entry arrives once, in order, intact. */
TEST(rec_queue_two_threads_in_order)
{
	struct rec_queue q;
	struct q_thread t = { &q, 50000 };
	struct rq_entry e;
	pthread_t th;
	uint32_t i = 0;

	ASSERT_EQ(rq_init(&q, 256u << 10, NULL), 0);
	ASSERT_EQ(pthread_create(&th, NULL, q_producer, &t), 0);
	while (i < t.n) {
		if (!rq_peek(&q, &e)) {
			usleep(50);
			continue;
		}
		if (!q_check(&e, i))
			break;
		rq_pop(&q);
		i++;
	}
	pthread_join(th, NULL);
	ASSERT_EQ(i, t.n);
	ASSERT_FALSE(rq_peek(&q, &e));
	rq_fini(&q);
}

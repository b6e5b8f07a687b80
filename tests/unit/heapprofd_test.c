// SPDX-License-Identifier: Apache-2.0
/*
 * heapprofd_test.c - heapprofd's pieces without a daemon: the shared ring
 * (records in order across the wrap, full and shut-down rings refuse
 * writers, the reader's sleep handshake, garbage a client writes is
 * caught, many writer threads against one reader lose nothing), record
 * parsing, the control messages, the per-heap bookkeeping (frees of
 * unknown blocks, the peak for dump_at_max) and the config's matching.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "heapprofd/hp_book.h"
#include "heapprofd/hp_config.h"
#include "heapprofd/ring/hp_ring.h"
#include "heapprofd/ring/hp_wire.h"

/* A ring mapped twice, as the client and the daemon each map it. */
static void open_ring(uint64_t size, struct hp_ring *w, struct hp_ring *r)
{
	int fd = hp_ring_create_memfd(size);

	ASSERT_GE(fd, 0);
	memset(w, 0, sizeof(*w));
	memset(r, 0, sizeof(*r));
	ASSERT_EQ(hp_ring_map(fd, 0, w), 0);
	ASSERT_EQ(hp_ring_map(fd, size, r), 0);
	close(fd);
}

#define H ((uint32_t)sizeof(struct hp_rec_hdr))

static void put(struct hp_ring *w, uint32_t payload, uint8_t fill)
{
	uint32_t len = H + payload;
	uint64_t pos;
	uint8_t *rec = hp_ring_reserve(w, len, &pos);

	ASSERT_TRUE(rec != NULL);
	memset(rec + H, fill, payload);
	hp_ring_publish(w, rec, pos, len, HP_REC_FREE);
}

/* A record header at @pos as a writer publishes it, whatever its length. */
static void fake_header(struct hp_ring *w, uint64_t pos, uint32_t len)
{
	struct hp_rec_hdr *rh = (struct hp_rec_hdr *)(w->data + (pos & (w->data_size - 1)));

	rh->len = len;
	rh->type = HP_REC_FREE;
	rh->stamp = pos ^ w->stamp_key;
}

TEST(ring_order_across_wrap)
{
	struct hp_ring w, r;
	unsigned i, got = 0;

	open_ring(HP_RING_MIN_DATA_BYTES, &w, &r);
	for (i = 0; i < 200; i++) {
		const uint8_t *rec;
		uint32_t len, type, payload = 8 + (i * 37) % 300;

		put(&w, payload, (uint8_t)i);
		ASSERT_EQ(hp_ring_peek(&r, &rec, &len, &type), HP_RING_RECORD);
		ASSERT_EQ(len, (H + payload + 7) & ~7u);
		ASSERT_EQ(type, HP_REC_FREE);
		ASSERT_EQ(rec[H], (uint8_t)i);
		ASSERT_EQ(rec[H + payload - 1], (uint8_t)i);
		hp_ring_consume(&r, len);
		got++;
	}
	ASSERT_EQ(got, 200u);
	ASSERT_GT(r.read_pos, (uint64_t)HP_RING_MIN_DATA_BYTES); /* it wrapped */
	hp_ring_unmap(&w);
	hp_ring_unmap(&r);
}

TEST(ring_full_and_shutdown)
{
	struct hp_ring w, r;
	unsigned n = 0;
	uint64_t pos;

	open_ring(HP_RING_MIN_DATA_BYTES, &w, &r);
	while (hp_ring_reserve(&w, 1024, &pos)) {
		n++;
		ASSERT_LT(n, 100u);
	}
	ASSERT_EQ(n, HP_RING_MIN_DATA_BYTES / 1024);
	/* More than half the ring is never one record. */
	ASSERT_TRUE(hp_ring_reserve(&w, HP_RING_MIN_DATA_BYTES / 2 + 8, &pos) == NULL);
	hp_ring_unmap(&w);
	hp_ring_unmap(&r);
	open_ring(HP_RING_MIN_DATA_BYTES, &w, &r);
	hp_ring_shutdown(&r);
	ASSERT_TRUE(hp_ring_reserve(&w, 64, &pos) == NULL);
	hp_ring_unmap(&w);
	hp_ring_unmap(&r);
}

TEST(ring_sleep_handshake)
{
	struct hp_ring w, r;
	const uint8_t *rec;
	uint32_t len, type;
	uint64_t pos;
	uint8_t *p;

	open_ring(HP_RING_MIN_DATA_BYTES, &w, &r);
	ASSERT_EQ(hp_ring_peek(&r, &rec, &len, &type), HP_RING_EMPTY);
	ASSERT_TRUE(hp_ring_sleep(&r));
	/* Reserved but not published: still empty for the reader. */
	p = hp_ring_reserve(&w, 16, &pos);
	ASSERT_EQ(hp_ring_peek(&r, &rec, &len, &type), HP_RING_EMPTY);
	/* A small record does not wake a sleeping reader (its periodic look
	 * finds it); the record that fills the ring to 1/HP_RING_WAKE_SHARE
	 * asks for one wake-up, once. */
	ASSERT_FALSE(hp_ring_publish(&w, p, pos, 16, HP_REC_FREE));
	ASSERT_EQ(hp_ring_peek(&r, &rec, &len, &type), HP_RING_RECORD);
	p = hp_ring_reserve(&w, HP_RING_MIN_DATA_BYTES / HP_RING_WAKE_SHARE, &pos);
	ASSERT_TRUE(p != NULL);
	ASSERT_TRUE(hp_ring_publish(&w, p, pos, HP_RING_MIN_DATA_BYTES / HP_RING_WAKE_SHARE,
				    HP_REC_FREE));
	put(&w, 8, 1);
	hp_ring_unmap(&w);
	hp_ring_unmap(&r);
}

TEST(ring_garbage_is_caught)
{
	struct hp_ring w, r;
	const uint8_t *rec;
	uint32_t len, type;

	open_ring(HP_RING_MIN_DATA_BYTES, &w, &r);
	/* A stamp of another position: not published yet. */
	fake_header(&w, 8, 64);
	ASSERT_EQ(hp_ring_peek(&r, &rec, &len, &type), HP_RING_EMPTY);
	/* A length no writer reserved. */
	fake_header(&w, 0, 4096);
	ASSERT_EQ(hp_ring_peek(&r, &rec, &len, &type), HP_RING_CORRUPT);
	/* Unaligned, and shorter than a header. */
	atomic_store(&w.hdr->write_pos, 64);
	fake_header(&w, 0, 13);
	ASSERT_EQ(hp_ring_peek(&r, &rec, &len, &type), HP_RING_CORRUPT);
	fake_header(&w, 0, 8);
	ASSERT_EQ(hp_ring_peek(&r, &rec, &len, &type), HP_RING_CORRUPT);
	/* write_pos more than a ring ahead. */
	fake_header(&w, 0, 16);
	atomic_store(&w.hdr->write_pos, 3 * HP_RING_MIN_DATA_BYTES);
	ASSERT_EQ(hp_ring_peek(&r, &rec, &len, &type), HP_RING_CORRUPT);
	hp_ring_unmap(&w);
	hp_ring_unmap(&r);
	/* A file of the wrong size or magic is no ring. */
	{
		int fd = hp_ring_create_memfd(HP_RING_MIN_DATA_BYTES);
		struct hp_ring x;

		ASSERT_EQ(hp_ring_map(fd, 2 * HP_RING_MIN_DATA_BYTES, &x), -EINVAL);
		ASSERT_EQ(pwrite(fd, "XXXX", 4, 0), 4);
		ASSERT_EQ(hp_ring_map(fd, 0, &x), -EINVAL);
		close(fd);
	}
	ASSERT_EQ(hp_ring_create_memfd(12345), -EINVAL);
}

#define N_WRITERS 4
#define PER_WRITER 20000u

struct writer_arg {
	struct hp_ring *w;
	uint32_t id;
};

static void *writer(void *arg)
{
	struct writer_arg *a = arg;
	uint32_t i;

	for (i = 0; i < PER_WRITER; i++) {
		uint32_t payload = 16 + (i % 13) * 8;
		uint64_t pos;
		uint8_t *rec;

		while (!(rec = hp_ring_reserve(a->w, H + payload, &pos)))
			sched_yield();
		memcpy(rec + H, &a->id, 4);
		memcpy(rec + H + 4, &i, 4);
		hp_ring_publish(a->w, rec, pos, H + payload, HP_REC_FREE);
	}
	return NULL;
}

TEST(ring_many_writers_one_reader)
{
	struct hp_ring w, r;
	pthread_t t[N_WRITERS];
	struct writer_arg args[N_WRITERS];
	uint32_t next[N_WRITERS] = {0}, total = 0, i;

	open_ring(1u << 16, &w, &r);
	for (i = 0; i < N_WRITERS; i++) {
		args[i].w = &w;
		args[i].id = i;
		ASSERT_EQ(pthread_create(&t[i], NULL, writer, &args[i]), 0);
	}
	while (total < N_WRITERS * PER_WRITER) {
		const uint8_t *rec;
		uint32_t len, type, id, seq;
		enum hp_ring_read rr = hp_ring_peek(&r, &rec, &len, &type);

		ASSERT_NE(rr, HP_RING_CORRUPT);
		if (rr == HP_RING_EMPTY) {
			sched_yield();
			continue;
		}
		memcpy(&id, rec + H, 4);
		memcpy(&seq, rec + H + 4, 4);
		ASSERT_LT(id, (uint32_t)N_WRITERS);
		/* Each writer's records arrive in its order, none lost. */
		ASSERT_EQ(seq, next[id]);
		next[id]++;
		total++;
		hp_ring_consume(&r, len);
	}
	for (i = 0; i < N_WRITERS; i++)
		pthread_join(t[i], NULL);
	hp_ring_unmap(&w);
	hp_ring_unmap(&r);
}

TEST(record_parse)
{
	uint8_t rec[512];
	struct hp_rec_alloc a, got;
	struct hp_rec_free f;
	const uint8_t *stack;

	memset(rec, 0, sizeof(rec));
	memset(&a, 0, sizeof(a));
	a.heap_id = 1;
	a.stack_len = 100;
	memcpy(rec + H, &a, sizeof(a));
	ASSERT_EQ(hp_rec_parse_alloc(rec, H + sizeof(a) + 100, &got, &stack), 0);
	ASSERT_TRUE(stack == rec + H + sizeof(a));
	/* The stack runs past the record. */
	ASSERT_EQ(hp_rec_parse_alloc(rec, H + sizeof(a) + 99, &got, &stack), -EBADMSG);
	ASSERT_EQ(hp_rec_parse_alloc(rec, H + sizeof(a) - 1, &got, &stack), -EBADMSG);
	a.heap_id = 0;
	memcpy(rec + H, &a, sizeof(a));
	ASSERT_EQ(hp_rec_parse_alloc(rec, H + sizeof(a) + 100, &got, &stack), -EBADMSG);
	f.heap_id = 300;
	f.addr = 1;
	memcpy(rec + H, &f, sizeof(f));
	ASSERT_EQ(hp_rec_parse_free(rec, H + sizeof(f), &f), -EBADMSG);
}

TEST(wire_round_trip_and_bounds)
{
	uint8_t buf[64];
	struct hp_wire_out w;
	struct hp_wire_in in;
	struct hp_wire_field f;
	uint32_t type;

	hp_wire_begin(&w, buf, sizeof(buf), HP_MSG_HEAP);
	hp_wire_u64(&w, HP_F_HEAP_ID, 7);
	hp_wire_str(&w, HP_F_HEAP_NAME, "arena", 5);
	ASSERT_FALSE(w.overflow);
	ASSERT_EQ(hp_wire_parse(buf, w.len, &type, &in), 0);
	ASSERT_EQ(type, (uint32_t)HP_MSG_HEAP);
	ASSERT_EQ(hp_wire_next(&in, &f), 1);
	ASSERT_EQ(hp_wire_field_u64(&f), 7u);
	ASSERT_EQ(hp_wire_next(&in, &f), 1);
	ASSERT_EQ(f.len, 5);
	ASSERT_EQ(hp_wire_next(&in, &f), 0);
	/* A field that claims more than the message holds. */
	ASSERT_EQ(hp_wire_parse(buf, w.len - 1, &type, &in), 0);
	ASSERT_EQ(hp_wire_next(&in, &f), 1);
	ASSERT_EQ(hp_wire_next(&in, &f), -EBADMSG);
	ASSERT_EQ(hp_wire_parse(buf, 3, &type, &in), -EBADMSG);
	hp_wire_begin(&w, buf, 10, HP_MSG_HEAP);
	hp_wire_u64(&w, HP_F_HEAP_ID, 7);
	ASSERT_TRUE(w.overflow);
}

TEST(book_totals_peak_and_unknown_frees)
{
	struct hp_book b;
	uint64_t bytes, count;

	hp_book_init(&b);
	ASSERT_EQ(hp_book_alloc(&b, 0x1000, 100, 1), 0);
	ASSERT_EQ(hp_book_alloc(&b, 0x2000, 300, 2), 0);
	hp_book_free(&b, 0x1000);
	hp_book_free(&b, 0x9999); /* allocated before profiling */
	ASSERT_EQ(b.frees_unknown, 1u);
	ASSERT_EQ(b.n_sites, 2u);
	ASSERT_EQ(b.sites[0].allocated, 100u);
	ASSERT_EQ(b.sites[0].freed, 100u);
	ASSERT_EQ(b.sites[1].allocated, 300u);
	/* The peak was 400 bytes: 100 at site 1, 300 at site 2. */
	hp_book_alloc(&b, 0x3000, 50, 2);
	hp_book_peak(&b, &b.sites[0], &bytes, &count);
	ASSERT_EQ(bytes, 100u);
	ASSERT_EQ(count, 1u);
	hp_book_peak(&b, &b.sites[1], &bytes, &count);
	ASSERT_EQ(bytes, 300u);
	/* A new peak (450) moves every site's share. */
	hp_book_alloc(&b, 0x4000, 100, 1);
	hp_book_peak(&b, &b.sites[0], &bytes, &count);
	ASSERT_EQ(bytes, 100u);
	hp_book_peak(&b, &b.sites[1], &bytes, &count);
	ASSERT_EQ(bytes, 350u);
	ASSERT_EQ(b.max_bytes, 450u);
	/* An allocation at a live address: its free was lost. */
	hp_book_alloc(&b, 0x4000, 10, 1);
	ASSERT_EQ(b.sites[0].freed, 200u);
	hp_book_fini(&b);
}

TEST(config_matching_and_heaps)
{
	Perfetto__Protos__HeapprofdConfig c = PERFETTO__PROTOS__HEAPPROFD_CONFIG__INIT;
	char *cmd[] = {"hp_*"};
	char *heaps[] = {"libc.malloc", "arena"};
	uint64_t ivs[] = {0, 65536};
	struct hp_config cfg;
	char err[128];

	c.n_process_cmdline = 1;
	c.process_cmdline = cmd;
	c.has_sampling_interval_bytes = 1;
	c.sampling_interval_bytes = 1000;
	ASSERT_EQ(hp_config_parse(&c, &cfg, err, sizeof(err)), 0);
	ASSERT_TRUE(hp_config_matches(&cfg, 1, "/x/y/hp_known"));
	ASSERT_FALSE(hp_config_matches(&cfg, 1, "/x/y/other"));
	ASSERT_EQ(hp_config_heap_interval(&cfg, "libc.malloc"), 1000u);
	ASSERT_EQ(hp_config_heap_interval(&cfg, "arena"), 0u);
	ASSERT_EQ(cfg.shmem_bytes, (uint64_t)HP_RING_DEFAULT_DATA_BYTES);
	hp_config_fini(&cfg);
	c.n_heaps = 2;
	c.heaps = heaps;
	c.n_heap_sampling_intervals = 2;
	c.heap_sampling_intervals = ivs;
	ASSERT_EQ(hp_config_parse(&c, &cfg, err, sizeof(err)), 0);
	ASSERT_EQ(hp_config_heap_interval(&cfg, "libc.malloc"), 1000u);
	ASSERT_EQ(hp_config_heap_interval(&cfg, "arena"), 65536u);
	hp_config_fini(&cfg);
	c.n_heap_sampling_intervals = 1;
	ASSERT_EQ(hp_config_parse(&c, &cfg, err, sizeof(err)), -EINVAL);
}

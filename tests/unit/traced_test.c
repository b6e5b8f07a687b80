// SPDX-License-Identifier: Apache-2.0
/*
 * traced_test.c - unit tests for the service (src/traced). So far the
 * central trace buffer: packets round-trip whole and reassembled across
 * chunks, out-of-order and wrapped chunk ids, ring overwrite and DISCARD
 * accounting, patches, scraped-chunk recommits, hostile chunks, clones and
 * the BufferStats encoding. Chunks are built in memory as a producer would.
 */
#include "harness.h"

#include <errno.h>
#include <stdlib.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "traced/trace_buffer.h"

#define LOSS_PRESENT PBE_TRACE_PACKET_DATA_LOSS_REASON__DATA_LOSS_PRESENT
#define LOSS_READ_GAP PBE_TRACE_PACKET_DATA_LOSS_REASON__DATA_LOSS_READ_GAP
#define LOSS_CORRUPTED PBE_TRACE_PACKET_DATA_LOSS_REASON__DATA_LOSS_CHUNK_CORRUPTED
#define LOSS_ORPHAN PBE_TRACE_PACKET_DATA_LOSS_REASON__DATA_LOSS_ORPHAN_CONTINUATION
#define LOSS_REASM_GAP PBE_TRACE_PACKET_DATA_LOSS_REASON__DATA_LOSS_REASSEMBLY_GAP
#define LOSS_BROKEN PBE_TRACE_PACKET_DATA_LOSS_REASON__DATA_LOSS_REASSEMBLY_BROKEN_CHAIN
#define LOSS_OVERWRITE PBE_TRACE_PACKET_DATA_LOSS_REASON__DATA_LOSS_OVERWRITE
#define LOSS_ABORT PBE_TRACE_PACKET_DATA_LOSS_REASON__DATA_LOSS_WRITER_ABORT

#define FIRST TB_CHUNK_FIRST_CONTINUES
#define LAST TB_CHUNK_LAST_CONTINUES
#define PATCH TB_CHUNK_NEEDS_PATCHING

/* A chunk payload as a trace writer lays it out. */
struct chunk {
	uint8_t buf[16384];
	size_t len;
	uint16_t n_frags;
};

static void ck_reset(struct chunk *c)
{
	c->len = 0;
	c->n_frags = 0;
}

static void ck_add(struct chunk *c, const void *data, size_t len)
{
	if (c->len + 4 + len > sizeof(c->buf))
		FAIL("test chunk too small");
	pz_write_redundant_varint(c->buf + c->len, (uint32_t)len);
	memcpy(c->buf + c->len + 4, data, len);
	c->len += 4 + len;
	c->n_frags++;
}

/* A fragment of @len bytes: @tag then a counter, so contents are checkable. */
static void ck_add_fill(struct chunk *c, size_t len, uint8_t tag)
{
	uint8_t tmp[16384];
	size_t i;

	for (i = 0; i < len; i++)
		tmp[i] = (uint8_t)(i == 0 ? tag : (uint8_t)(tag + i));
	ck_add(c, tmp, len);
}

static const struct tb_client k_client = {.producer_id = 1, .uid = 1000, .pid = 42};

static int commit(struct trace_buffer *tb, uint16_t writer, uint32_t chunk_id, uint8_t flags,
		  const struct chunk *c)
{
	return tb_copy_chunk(tb, &k_client, writer, chunk_id, c->n_frags, flags, c->buf, c->len,
			     true);
}

/* Commits a chunk holding one whole packet of @len bytes starting with @tag. */
static int commit_one(struct trace_buffer *tb, uint16_t writer, uint32_t chunk_id, size_t len,
		      uint8_t tag)
{
	struct chunk c;

	ck_reset(&c);
	ck_add_fill(&c, len, tag);
	return commit(tb, writer, chunk_id, 0, &c);
}

struct pkt {
	uint8_t data[65536];
	size_t len;
	size_t n_slices;
	uint32_t dropped;
	uint16_t writer_id;
	struct tb_client client;
};

/* Return: 1 with the next packet flattened into @p, 0 when there is none. */
static int next_pkt(struct trace_buffer *tb, struct pkt *p)
{
	struct tb_packet tp;
	size_t i;
	int r = tb_read_next_packet(tb, &tp);

	if (r <= 0)
		return r;
	p->len = 0;
	for (i = 0; i < tp.n_slices; i++) {
		if (p->len + tp.slices[i].size > sizeof(p->data))
			FAIL("packet too big for the test");
		memcpy(p->data + p->len, tp.slices[i].data, tp.slices[i].size);
		p->len += tp.slices[i].size;
	}
	ASSERT_EQ(p->len, tp.size_bytes);
	p->n_slices = tp.n_slices;
	p->dropped = tp.previous_packet_dropped;
	p->writer_id = tp.writer_id;
	p->client = tp.client;
	return 1;
}

static size_t count_packets(struct trace_buffer *tb, bool is_final)
{
	struct pkt *p = malloc(sizeof(*p));
	size_t n = 0;

	tb_begin_read(tb, is_final);
	while (next_pkt(tb, p) == 1)
		n++;
	free(p);
	return n;
}

static struct trace_buffer *make_tb(size_t size, enum tb_fill_policy policy)
{
	struct trace_buffer *tb = NULL;

	ASSERT_EQ(tb_create(size, policy, &tb), 0);
	ASSERT_TRUE(tb != NULL);
	return tb;
}

/* Checks that @p is the @len-byte fill packet with @tag. */
static void expect_fill(const struct pkt *p, size_t len, uint8_t tag)
{
	size_t i;

	ASSERT_EQ(p->len, len);
	for (i = 0; i < len; i++)
		if (p->data[i] != (uint8_t)(i == 0 ? tag : (uint8_t)(tag + i)))
			FAIL("byte %zu of packet %u differs", i, tag);
}

/* Reads the next packet and checks it is fill(@len, @tag) with loss @bits. */
#define EXPECT_NEXT(tb, p, len, tag, bits)                                             \
	do {                                                                           \
		ASSERT_EQ(next_pkt(tb, p), 1);                                         \
		expect_fill(p, len, tag);                                              \
		ASSERT_EQ((p)->dropped, bits);                                         \
	} while (0)

/* ------------------------------------------------------------------------ */

TEST(create_rejects_bad_arguments)
{
	struct trace_buffer *tb = NULL;

	ASSERT_EQ(tb_create(0, TB_RING_BUFFER, &tb), -EINVAL);
	ASSERT_EQ(tb_create(4096, (enum tb_fill_policy)7, &tb), -EINVAL);
	ASSERT_EQ(tb_create((size_t)TB_MAX_SIZE_BYTES + 1, TB_RING_BUFFER, &tb), -EINVAL);
	ASSERT_TRUE(tb == NULL);
	ASSERT_EQ(tb_create(5000, TB_DISCARD, &tb), 0);
	ASSERT_EQ(tb_size(tb), 8192);
	tb_destroy(tb);
	tb_destroy(NULL);
}

TEST(single_fragment_packets_round_trip)
{
	struct trace_buffer *tb = make_tb(65536, TB_RING_BUFFER);
	struct pkt *p = malloc(sizeof(*p));
	struct tb_stats st;
	struct chunk c;
	int i;

	ck_reset(&c);
	ck_add_fill(&c, 10, 'a');
	ck_add_fill(&c, 200, 'b');
	ck_add_fill(&c, 1, 'c');
	ASSERT_EQ(commit(tb, 1, 0, 0, &c), 0);
	ck_reset(&c);
	ck_add_fill(&c, 30, 'd');
	ck_add_fill(&c, 0, 'x'); /* empty packets are skipped */
	ck_add_fill(&c, 40, 'e');
	ASSERT_EQ(commit(tb, 1, 1, 0, &c), 0);

	tb_begin_read(tb, false);
	for (i = 0; i < 5; i++) {
		static const size_t lens[] = {10, 200, 1, 30, 40};
		static const char tags[] = "abcde";

		EXPECT_NEXT(tb, p, lens[i], (uint8_t)tags[i], 0);
		ASSERT_EQ(p->n_slices, 1);
		ASSERT_EQ(p->dropped, 0);
		ASSERT_EQ(p->writer_id, 1);
		ASSERT_EQ(p->client.uid, 1000);
		ASSERT_EQ(p->client.pid, 42);
		ASSERT_EQ(p->client.producer_id, 1);
	}
	ASSERT_EQ(next_pkt(tb, p), 0);
	/* Consumed: a new pass sees nothing. */
	ASSERT_EQ(count_packets(tb, false), 0);
	tb_stats(tb, &st);
	ASSERT_EQ(st.chunks_written, 2);
	ASSERT_EQ(st.chunks_read, 2);
	ASSERT_EQ(st.bytes_read, st.bytes_written);
	ASSERT_EQ(st.bytes_written, tb_record_size(3 * 4 + 211) + tb_record_size(3 * 4 + 70));
	ASSERT_EQ(st.abi_violations, 0);
	/* New data after the read comes out alone and without a loss flag. */
	ASSERT_EQ(commit_one(tb, 1, 2, 50, 'f'), 0);
	tb_begin_read(tb, false);
	EXPECT_NEXT(tb, p, 50, 'f', 0);
	ASSERT_EQ(next_pkt(tb, p), 0);
	free(p);
	tb_destroy(tb);
}

TEST(packet_spans_two_chunks)
{
	struct trace_buffer *tb = make_tb(65536, TB_RING_BUFFER);
	struct pkt *p = malloc(sizeof(*p));
	uint8_t whole[300];
	struct tb_stats st;
	struct chunk c;
	size_t i;

	for (i = 0; i < sizeof(whole); i++)
		whole[i] = (uint8_t)(i * 7);
	ck_reset(&c);
	ck_add_fill(&c, 20, 'a');
	ck_add(&c, whole, 100);
	ASSERT_EQ(commit(tb, 3, 7, LAST, &c), 0);
	/* The second half is not there yet: only the first packet comes out. */
	tb_begin_read(tb, false);
	EXPECT_NEXT(tb, p, 20, 'a', 0);
	ASSERT_EQ(next_pkt(tb, p), 0);

	ck_reset(&c);
	ck_add(&c, whole + 100, 200);
	ck_add_fill(&c, 5, 'c');
	ASSERT_EQ(commit(tb, 3, 8, FIRST, &c), 0);
	tb_begin_read(tb, false);
	ASSERT_EQ(next_pkt(tb, p), 1);
	ASSERT_EQ(p->n_slices, 2);
	ASSERT_EQ(p->len, 300);
	ASSERT_MEMEQ(p->data, whole, 300);
	ASSERT_EQ(p->dropped, 0);
	EXPECT_NEXT(tb, p, 5, 'c', 0);
	ASSERT_EQ(next_pkt(tb, p), 0);
	tb_stats(tb, &st);
	ASSERT_EQ(st.readaheads_succeeded, 1);
	ASSERT_EQ(st.readaheads_failed, 1);
	ASSERT_EQ(st.chunks_read, 2);
	free(p);
	tb_destroy(tb);
}

TEST(packet_spans_ten_chunks)
{
	struct trace_buffer *tb = make_tb(65536, TB_RING_BUFFER);
	struct pkt *p = malloc(sizeof(*p));
	uint8_t big[5000];
	struct chunk c;
	size_t i, off = 0;

	for (i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 13 + 1);
	/* Chunk 100: a packet, then the start of the big one; 101..108 carry
	 * one middle fragment each; 109 ends it and has one more packet. */
	ck_reset(&c);
	ck_add_fill(&c, 8, 'a');
	ck_add(&c, big, 500);
	off = 500;
	ASSERT_EQ(commit(tb, 1, 100, LAST, &c), 0);
	for (i = 101; i <= 108; i++) {
		ck_reset(&c);
		ck_add(&c, big + off, 500);
		off += 500;
		ASSERT_EQ(commit(tb, 1, (uint32_t)i, FIRST | LAST, &c), 0);
	}
	ASSERT_EQ(count_packets(tb, false), 1); /* only 'a' */
	ck_reset(&c);
	ck_add(&c, big + off, sizeof(big) - off);
	ck_add_fill(&c, 9, 'z');
	ASSERT_EQ(commit(tb, 1, 109, FIRST, &c), 0);

	tb_begin_read(tb, false);
	ASSERT_EQ(next_pkt(tb, p), 1);
	ASSERT_EQ(p->n_slices, 10);
	ASSERT_EQ(p->len, sizeof(big));
	ASSERT_MEMEQ(p->data, big, sizeof(big));
	ASSERT_EQ(p->dropped, 0);
	EXPECT_NEXT(tb, p, 9, 'z', 0);
	ASSERT_EQ(next_pkt(tb, p), 0);
	free(p);
	tb_destroy(tb);
}

TEST(packet_spanning_many_chunks_grows_slice_table)
{
	struct trace_buffer *tb = make_tb(1 << 20, TB_RING_BUFFER);
	struct tb_packet tp;
	struct chunk c;
	uint32_t i, n = 300;

	for (i = 0; i < n; i++) {
		uint8_t flags = (i > 0 ? FIRST : 0) | (i + 1 < n ? LAST : 0);

		ck_reset(&c);
		ck_add_fill(&c, 16, (uint8_t)i);
		ASSERT_EQ(commit(tb, 1, i, flags, &c), 0);
	}
	tb_begin_read(tb, false);
	ASSERT_EQ(tb_read_next_packet(tb, &tp), 1);
	ASSERT_EQ(tp.n_slices, n);
	ASSERT_EQ(tp.size_bytes, 16 * n);
	ASSERT_EQ(tp.slices[n - 1].data[0], (uint8_t)(n - 1));
	ASSERT_EQ(tb_read_next_packet(tb, &tp), 0);
	tb_destroy(tb);
}

TEST(out_of_order_commits_read_in_chunk_order)
{
	struct trace_buffer *tb = make_tb(65536, TB_RING_BUFFER);
	struct pkt *p = malloc(sizeof(*p));
	static const uint32_t order[] = {0, 2, 1, 4, 3};
	struct tb_stats st;
	size_t i;

	for (i = 0; i < PFC_ARRAY_SIZE(order); i++)
		ASSERT_EQ(commit_one(tb, 5, order[i], 10 + order[i], (uint8_t)order[i]), 0);
	tb_begin_read(tb, false);
	for (i = 0; i < 5; i++) {
		EXPECT_NEXT(tb, p, 10 + i, (uint8_t)i, 0);
	}
	ASSERT_EQ(next_pkt(tb, p), 0);
	tb_stats(tb, &st);
	ASSERT_EQ(st.chunks_committed_out_of_order, 2);
	free(p);
	tb_destroy(tb);
}

TEST(out_of_order_fragments_reassemble)
{
	struct trace_buffer *tb = make_tb(65536, TB_RING_BUFFER);
	struct pkt *p = malloc(sizeof(*p));
	struct chunk c;

	/* Scraping commits the tail first. */
	ck_reset(&c);
	ck_add(&c, "world", 5);
	ASSERT_EQ(commit(tb, 1, 11, FIRST, &c), 0);
	ck_reset(&c);
	ck_add(&c, "hello ", 6);
	ASSERT_EQ(commit(tb, 1, 10, LAST, &c), 0);
	tb_begin_read(tb, false);
	ASSERT_EQ(next_pkt(tb, p), 1);
	ASSERT_EQ(p->len, 11);
	ASSERT_MEMEQ(p->data, "hello world", 11);
	ASSERT_EQ(p->dropped, 0);
	ASSERT_EQ(next_pkt(tb, p), 0);
	free(p);
	tb_destroy(tb);
}

/* A record of exactly 1 KiB: 40 bytes of header, a 4-byte fragment header
 * and 980 bytes of packet. Four fill a 4 KiB buffer with no padding. */
#define KIB_PACKET 980

TEST(ring_buffer_overwrites_oldest_exactly)
{
	struct trace_buffer *tb = make_tb(4096, TB_RING_BUFFER);
	struct pkt *p = malloc(sizeof(*p));
	struct tb_stats st;
	uint32_t i;

	ASSERT_EQ(tb_record_size(4 + KIB_PACKET), 1024);
	for (i = 0; i < 10; i++)
		ASSERT_EQ(commit_one(tb, 1, i, KIB_PACKET, (uint8_t)i), 0);
	tb_stats(tb, &st);
	ASSERT_EQ(st.chunks_written, 10);
	ASSERT_EQ(st.bytes_written, 10 * 1024);
	ASSERT_EQ(st.chunks_overwritten, 6);
	ASSERT_EQ(st.bytes_overwritten, 6 * 1024);
	ASSERT_EQ(st.write_wrap_count, 2);
	ASSERT_EQ(st.padding_bytes_written, 0);
	ASSERT_EQ(st.buffer_size, 4096);

	tb_begin_read(tb, false);
	for (i = 6; i < 10; i++) {
		uint32_t bits = i == 6 ? (LOSS_PRESENT | LOSS_OVERWRITE) : 0;

		EXPECT_NEXT(tb, p, KIB_PACKET, (uint8_t)i, bits);
	}
	ASSERT_EQ(next_pkt(tb, p), 0);
	tb_stats(tb, &st);
	ASSERT_EQ(st.chunks_read, 4);
	ASSERT_EQ(st.bytes_read + st.bytes_overwritten, st.bytes_written);

	/* Read chunks are overwritten without loss. */
	for (i = 10; i < 14; i++)
		ASSERT_EQ(commit_one(tb, 1, i, KIB_PACKET, (uint8_t)i), 0);
	tb_stats(tb, &st);
	ASSERT_EQ(st.chunks_overwritten, 6);
	tb_begin_read(tb, false);
	for (i = 10; i < 14; i++) {
		EXPECT_NEXT(tb, p, KIB_PACKET, (uint8_t)i, 0);
	}
	free(p);
	tb_destroy(tb);
}

TEST(ring_buffer_padding_and_other_sequences)
{
	struct trace_buffer *tb = make_tb(4096, TB_RING_BUFFER);
	struct pkt *p = malloc(sizeof(*p));
	struct tb_stats st;
	uint32_t i;

	/* 1048-byte records: three fit, the 952-byte tail becomes padding. */
	ASSERT_EQ(tb_record_size(4 + 1004), 1048);
	for (i = 0; i < 7; i++)
		ASSERT_EQ(commit_one(tb, (uint16_t)(1 + i % 2), i / 2, 1004, (uint8_t)i), 0);
	tb_stats(tb, &st);
	ASSERT_EQ(st.write_wrap_count, 2);
	ASSERT_EQ(st.padding_bytes_written, 2 * 952);
	ASSERT_EQ(st.padding_bytes_cleared, 952);
	ASSERT_EQ(st.chunks_overwritten, 4);
	ASSERT_EQ(st.bytes_overwritten, 4 * 1048);
	/* Writer 1 wrote tags 0,2,4,6 (ids 0..3), writer 2 tags 1,3,5 (ids 0..2).
	 * Tags 4, 5, 6 survive. */
	tb_begin_read(tb, false);
	ASSERT_EQ(next_pkt(tb, p), 1);
	ASSERT_EQ(p->writer_id, 1);
	expect_fill(p, 1004, 4);
	ASSERT_EQ(p->dropped, LOSS_PRESENT | LOSS_OVERWRITE);
	ASSERT_EQ(next_pkt(tb, p), 1);
	ASSERT_EQ(p->writer_id, 1);
	expect_fill(p, 1004, 6);
	ASSERT_EQ(p->dropped, 0);
	ASSERT_EQ(next_pkt(tb, p), 1);
	ASSERT_EQ(p->writer_id, 2);
	expect_fill(p, 1004, 5);
	ASSERT_EQ(p->dropped, LOSS_PRESENT | LOSS_OVERWRITE);
	ASSERT_EQ(next_pkt(tb, p), 0);
	free(p);
	tb_destroy(tb);
}

TEST(overwritten_start_makes_orphan_continuation)
{
	struct trace_buffer *tb = make_tb(4096, TB_RING_BUFFER);
	struct pkt *p = malloc(sizeof(*p));
	struct chunk c;
	uint32_t i;

	ck_reset(&c);
	ck_add_fill(&c, KIB_PACKET, 0);
	ASSERT_EQ(commit(tb, 1, 0, LAST, &c), 0);
	ck_reset(&c);
	ck_add_fill(&c, 500, 1);
	ck_add_fill(&c, KIB_PACKET - 504, 2);
	ASSERT_EQ(commit(tb, 1, 1, FIRST, &c), 0);
	/* Another writer fills the ring: chunk 0 of writer 1 goes. */
	for (i = 0; i < 3; i++)
		ASSERT_EQ(commit_one(tb, 2, i, KIB_PACKET, (uint8_t)(10 + i)), 0);
	tb_begin_read(tb, false);
	ASSERT_EQ(next_pkt(tb, p), 1);
	ASSERT_EQ(p->writer_id, 1);
	expect_fill(p, KIB_PACKET - 504, 2);
	ASSERT_EQ(p->dropped, LOSS_PRESENT | LOSS_OVERWRITE | LOSS_ORPHAN);
	ASSERT_EQ(count_packets(tb, false), 3);
	free(p);
	tb_destroy(tb);
}

TEST(discard_stops_accepting_when_full)
{
	struct trace_buffer *tb = make_tb(4096, TB_DISCARD);
	struct pkt *p = malloc(sizeof(*p));
	struct tb_stats st;
	uint32_t i;

	for (i = 0; i < 4; i++)
		ASSERT_EQ(commit_one(tb, 1, i, KIB_PACKET, (uint8_t)i), 0);
	for (i = 4; i < 7; i++)
		ASSERT_EQ(commit_one(tb, 1, i, KIB_PACKET, (uint8_t)i), -ENOSPC);
	/* Even a tiny chunk of another writer is refused. */
	ASSERT_EQ(commit_one(tb, 2, 0, 1, 'x'), -ENOSPC);
	tb_stats(tb, &st);
	ASSERT_EQ(st.chunks_discarded, 4);
	ASSERT_EQ(st.chunks_written, 4);
	ASSERT_EQ(st.chunks_overwritten, 0);
	ASSERT_EQ(st.write_wrap_count, 0);

	tb_begin_read(tb, false);
	for (i = 0; i < 4; i++) {
		EXPECT_NEXT(tb, p, KIB_PACKET, (uint8_t)i, 0);
	}
	ASSERT_EQ(next_pkt(tb, p), 0);
	/* Reading does not reopen a DISCARD buffer. */
	ASSERT_EQ(commit_one(tb, 1, 7, 10, 'y'), -ENOSPC);
	tb_stats(tb, &st);
	ASSERT_EQ(st.chunks_discarded, 5);
	free(p);
	tb_destroy(tb);
}

TEST(patches_apply_and_gate_reads)
{
	struct trace_buffer *tb = make_tb(65536, TB_RING_BUFFER);
	struct pkt *p = malloc(sizeof(*p));
	static const uint8_t patch1[4] = {0xde, 0xad, 0xbe, 0xef};
	static const uint8_t patch2[4] = {1, 2, 3, 4};
	uint8_t body[64] = {0};
	struct tb_client other = k_client;
	struct tb_stats st;
	struct chunk c;

	/* Chunk 0: a whole packet, then the start of a packet whose size
	 * fields are patched later. Chunk 1 ends it. */
	ck_reset(&c);
	ck_add_fill(&c, 8, 'w');
	ck_add(&c, body, 16);
	ASSERT_EQ(commit(tb, 1, 0, LAST | PATCH, &c), 0);
	ck_reset(&c);
	ck_add(&c, body, 10);
	ASSERT_EQ(commit(tb, 1, 1, FIRST, &c), 0);
	ASSERT_EQ(count_packets(tb, false), 0);

	/* Offsets are from the payload start: the second fragment's bytes
	 * start at 4 + 8 + 4 = 16. */
	ASSERT_EQ(tb_try_patch(tb, 1, 1, 0, 16, patch1, true), 0);
	ASSERT_EQ(count_packets(tb, false), 0);
	ASSERT_EQ(tb_try_patch(tb, 1, 1, 0, 28, patch2, false), 0);

	/* Failures: wrong producer, wrong writer, missing chunk, bad offsets. */
	ASSERT_EQ(tb_try_patch(tb, 2, 1, 0, 16, patch2, false), -ENOENT);
	ASSERT_EQ(tb_try_patch(tb, 1, 9, 0, 16, patch2, false), -ENOENT);
	ASSERT_EQ(tb_try_patch(tb, 1, 1, 5, 16, patch2, false), -ENOENT);
	ASSERT_EQ(tb_try_patch(tb, 1, 1, 0, 29, patch2, false), -ERANGE);
	ASSERT_EQ(tb_try_patch(tb, 1, 1, 0, UINT32_MAX, patch2, false), -ERANGE);
	ASSERT_EQ(tb_try_patch(tb, 1, 1, 0, UINT32_MAX - 2, patch2, false), -ERANGE);
	tb_stats(tb, &st);
	ASSERT_EQ(st.patches_succeeded, 2);
	ASSERT_EQ(st.patches_failed, 6);

	tb_begin_read(tb, false);
	EXPECT_NEXT(tb, p, 8, 'w', 0);
	ASSERT_EQ(next_pkt(tb, p), 1);
	ASSERT_EQ(p->len, 26);
	ASSERT_MEMEQ(p->data, patch1, 4);
	ASSERT_EQ(p->data[4], 0);
	ASSERT_MEMEQ(p->data + 12, patch2, 4);
	ASSERT_EQ(p->data[16], 0);
	ASSERT_EQ(next_pkt(tb, p), 0);

	/* Once read, the chunk is gone: a late patch fails. */
	ASSERT_EQ(tb_try_patch(tb, 1, 1, 0, 16, patch2, false), -ENOENT);
	/* A chunk of another producer with the same writer id is not ours. */
	other.producer_id = 2;
	ck_reset(&c);
	ck_add(&c, body, 8);
	ASSERT_EQ(tb_copy_chunk(tb, &other, 1, 2, 1, 0, c.buf, c.len, true), 0);
	ASSERT_EQ(tb_try_patch(tb, 1, 1, 2, 4, patch2, false), -ENOENT);
	ASSERT_EQ(tb_try_patch(tb, 2, 1, 2, 4, patch2, false), 0);
	free(p);
	tb_destroy(tb);
}

TEST(unpatched_chunk_stalls_only_its_sequence)
{
	struct trace_buffer *tb = make_tb(65536, TB_RING_BUFFER);
	struct pkt *p = malloc(sizeof(*p));
	struct tb_stats st;
	struct chunk c;

	ck_reset(&c);
	ck_add_fill(&c, 12, 'p');
	ASSERT_EQ(commit(tb, 1, 0, PATCH, &c), 0);
	ASSERT_EQ(commit_one(tb, 1, 1, 12, 'q'), 0);
	ASSERT_EQ(commit_one(tb, 2, 0, 12, 'r'), 0);
	tb_begin_read(tb, false);
	ASSERT_EQ(next_pkt(tb, p), 1);
	ASSERT_EQ(p->writer_id, 2);
	ASSERT_EQ(next_pkt(tb, p), 0);
	/* The final read gives up waiting and reads what is there. */
	tb_begin_read(tb, true);
	EXPECT_NEXT(tb, p, 12, 'p', 0);
	EXPECT_NEXT(tb, p, 12, 'q', 0);
	ASSERT_EQ(next_pkt(tb, p), 0);
	tb_stats(tb, &st);
	ASSERT_EQ(st.bytes_read, st.bytes_written);
	free(p);
	tb_destroy(tb);
}

TEST(hostile_chunks_are_counted_and_contained)
{
	struct trace_buffer *tb = make_tb(8192, TB_RING_BUFFER);
	struct pkt *p = malloc(sizeof(*p));
	uint8_t *huge = calloc(1, 20000);
	static const uint8_t long_varint[12] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
						0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
	struct tb_stats st;
	struct chunk c;

	ASSERT_EQ(commit_one(tb, 1, 0, 20, 'a'), 0);
	/* 1: a fragment length past the payload end. */
	ck_reset(&c);
	ck_add_fill(&c, 30, 'h');
	pz_write_redundant_varint(c.buf, 31);
	ASSERT_EQ(commit(tb, 2, 0, 0, &c), -EBADMSG);
	/* 2: more fragments than the payload holds (the first one is valid). */
	ck_reset(&c);
	ck_add_fill(&c, 30, 'v');
	ASSERT_EQ(tb_copy_chunk(tb, &k_client, 2, 1, 1023, 0, c.buf, c.len, true), -EBADMSG);
	/* 3: zero-length payload claiming a fragment. */
	ASSERT_EQ(tb_copy_chunk(tb, &k_client, 2, 2, 1, 0, c.buf, 0, true), -EBADMSG);
	/* 4: a chunk larger than the whole buffer. */
	pz_write_redundant_varint(huge, 19000);
	ASSERT_EQ(tb_copy_chunk(tb, &k_client, 2, 3, 1, 0, huge, 20000, true), -EMSGSIZE);
	/* 5: a varint header that never ends. */
	ASSERT_EQ(tb_copy_chunk(tb, &k_client, 2, 4, 1, 0, long_varint, sizeof(long_varint),
			       true),
		  -EBADMSG);
	/* 6: absurd sizes and NULL payloads. */
	ASSERT_EQ(tb_copy_chunk(tb, &k_client, 2, 5, 1, 0, huge, (size_t)1 << 40, true), -EMSGSIZE);
	ASSERT_EQ(tb_copy_chunk(tb, &k_client, 2, 5, 1, 0, NULL, 10, true), -EINVAL);
	/* An empty chunk (no fragments at all) is legal. */
	ASSERT_EQ(tb_copy_chunk(tb, &k_client, 2, 5, 0, 0, NULL, 0, true), 0);
	tb_stats(tb, &st);
	ASSERT_EQ(st.abi_violations, 6);

	ASSERT_EQ(commit_one(tb, 1, 1, 20, 'b'), 0);
	ASSERT_EQ(commit_one(tb, 2, 6, 20, 'g'), 0);
	tb_begin_read(tb, false);
	EXPECT_NEXT(tb, p, 20, 'a', 0);
	EXPECT_NEXT(tb, p, 20, 'b', 0);
	/* Writer 2: the valid prefix of chunk 1 survives, then the loss shows. */
	ASSERT_EQ(next_pkt(tb, p), 1);
	ASSERT_EQ(p->writer_id, 2);
	expect_fill(p, 30, 'v');
	/* Chunk 3 (too big) was dropped whole: a gap as well. */
	EXPECT_NEXT(tb, p, 20, 'g', LOSS_PRESENT | LOSS_READ_GAP | LOSS_CORRUPTED);
	ASSERT_EQ(next_pkt(tb, p), 0);
	free(huge);
	free(p);
	tb_destroy(tb);
}

TEST(patch_that_breaks_a_fragment_header_is_caught_at_read)
{
	struct trace_buffer *tb = make_tb(8192, TB_RING_BUFFER);
	struct pkt *p = malloc(sizeof(*p));
	static const uint8_t evil[4] = {0xff, 0xff, 0xff, 0x7f};
	struct tb_stats st;
	struct chunk c;

	ck_reset(&c);
	ck_add_fill(&c, 10, 'a');
	ck_add_fill(&c, 10, 'b');
	ASSERT_EQ(commit(tb, 1, 0, 0, &c), 0);
	ASSERT_EQ(tb_try_patch(tb, 1, 1, 0, 14, evil, false), 0);
	ASSERT_EQ(commit_one(tb, 1, 1, 10, 'c'), 0);
	tb_begin_read(tb, false);
	EXPECT_NEXT(tb, p, 10, 'a', 0);
	EXPECT_NEXT(tb, p, 10, 'c', LOSS_PRESENT | LOSS_CORRUPTED);
	tb_stats(tb, &st);
	ASSERT_EQ(st.abi_violations, 1);
	free(p);
	tb_destroy(tb);
}

TEST(writer_abort_marker_sets_loss)
{
	struct trace_buffer *tb = make_tb(8192, TB_RING_BUFFER);
	struct pkt *p = malloc(sizeof(*p));
	struct tb_stats st;
	struct chunk c;

	ck_reset(&c);
	ck_add_fill(&c, 10, 'a');
	pz_write_redundant_varint(c.buf + c.len, TB_PACKET_SIZE_DROP);
	c.len += 4;
	c.n_frags++;
	ASSERT_EQ(commit(tb, 1, 0, LAST, &c), 0);
	ASSERT_EQ(commit_one(tb, 1, 1, 10, 'b'), 0);
	tb_begin_read(tb, false);
	EXPECT_NEXT(tb, p, 10, 'a', 0);
	EXPECT_NEXT(tb, p, 10, 'b', LOSS_PRESENT | LOSS_ABORT);
	tb_stats(tb, &st);
	ASSERT_EQ(st.trace_writer_packet_loss, 1);
	ASSERT_EQ(st.abi_violations, 0);
	free(p);
	tb_destroy(tb);
}

TEST(data_loss_reasons)
{
	struct trace_buffer *tb = make_tb(65536, TB_RING_BUFFER);
	struct pkt *p = malloc(sizeof(*p));
	struct chunk c;

	/* Read gap: chunk 1 never arrives. */
	ASSERT_EQ(commit_one(tb, 1, 0, 10, 'a'), 0);
	ASSERT_EQ(count_packets(tb, false), 1);
	ASSERT_EQ(commit_one(tb, 1, 2, 10, 'b'), 0);
	tb_begin_read(tb, false);
	ASSERT_EQ(next_pkt(tb, p), 1);
	ASSERT_EQ(p->dropped, LOSS_PRESENT | LOSS_READ_GAP);

	/* Broken chain: a begin followed by a chunk that does not continue it. */
	ck_reset(&c);
	ck_add_fill(&c, 10, 'c');
	ASSERT_EQ(commit(tb, 2, 0, LAST, &c), 0);
	ASSERT_EQ(commit_one(tb, 2, 1, 10, 'd'), 0);
	tb_begin_read(tb, false);
	EXPECT_NEXT(tb, p, 10, 'd', LOSS_PRESENT | LOSS_BROKEN);

	/* Reassembly gap: 0 begins, 1 is missing, 2 ends, 3 is whole. */
	ck_reset(&c);
	ck_add_fill(&c, 10, 'e');
	ASSERT_EQ(commit(tb, 3, 0, LAST, &c), 0);
	ck_reset(&c);
	ck_add_fill(&c, 10, 'f');
	ASSERT_EQ(commit(tb, 3, 2, FIRST, &c), 0);
	ASSERT_EQ(commit_one(tb, 3, 3, 10, 'g'), 0);
	tb_begin_read(tb, false);
	EXPECT_NEXT(tb, p, 10, 'g', LOSS_PRESENT | LOSS_READ_GAP | LOSS_REASM_GAP | LOSS_ORPHAN);

	/* Orphan: the first chunk seen continues a packet we never had. */
	ck_reset(&c);
	ck_add_fill(&c, 10, 'h');
	ck_add_fill(&c, 10, 'i');
	ASSERT_EQ(commit(tb, 4, 0, FIRST, &c), 0);
	tb_begin_read(tb, false);
	EXPECT_NEXT(tb, p, 10, 'i', LOSS_PRESENT | LOSS_ORPHAN);
	ASSERT_EQ(next_pkt(tb, p), 0);
	free(p);
	tb_destroy(tb);
}

TEST(chunk_id_wraps_at_2_pow_32)
{
	struct trace_buffer *tb = make_tb(65536, TB_RING_BUFFER);
	struct pkt *p = malloc(sizeof(*p));
	struct tb_stats st;
	struct chunk c;

	ck_reset(&c);
	ck_add_fill(&c, 5, 'a');
	ck_add(&c, "abc", 3);
	ASSERT_EQ(commit(tb, 1, UINT32_MAX - 1, LAST, &c), 0);
	/* The end arrives before the middle (out of order across the wrap). */
	ck_reset(&c);
	ck_add(&c, "ghi", 3);
	ck_add_fill(&c, 7, 'z');
	ASSERT_EQ(commit(tb, 1, 0, FIRST, &c), 0);
	ck_reset(&c);
	ck_add(&c, "def", 3);
	ASSERT_EQ(commit(tb, 1, UINT32_MAX, FIRST | LAST, &c), 0);
	ASSERT_EQ(commit_one(tb, 1, 1, 4, 'y'), 0);

	tb_begin_read(tb, false);
	EXPECT_NEXT(tb, p, 5, 'a', 0);
	ASSERT_EQ(next_pkt(tb, p), 1);
	ASSERT_EQ(p->len, 9);
	ASSERT_MEMEQ(p->data, "abcdefghi", 9);
	ASSERT_EQ(p->dropped, 0);
	EXPECT_NEXT(tb, p, 7, 'z', 0);
	EXPECT_NEXT(tb, p, 4, 'y', 0);
	ASSERT_EQ(next_pkt(tb, p), 0);
	/* The next id after the wrap continues without a gap. */
	ASSERT_EQ(commit_one(tb, 1, 2, 4, 'x'), 0);
	tb_begin_read(tb, false);
	ASSERT_EQ(next_pkt(tb, p), 1);
	ASSERT_EQ(p->dropped, 0);
	tb_stats(tb, &st);
	ASSERT_EQ(st.chunks_committed_out_of_order, 1);
	free(p);
	tb_destroy(tb);
}

TEST(interleaved_producers_and_writers_stay_intact)
{
	struct trace_buffer *tb = make_tb(1 << 20, TB_RING_BUFFER);
	struct pkt *p = malloc(sizeof(*p));
	uint32_t next_pkt_no[3][3] = {{0}};
	uint32_t got[3][3] = {{0}};
	struct chunk c;
	uint32_t round, prod, wr;
	size_t n = 0;

	/* Each sequence writes packets numbered 0, 1, 2, ...; every third
	 * chunk ends with a packet that continues into the next chunk. */
	for (round = 0; round < 20; round++) {
		for (prod = 0; prod < 3; prod++) {
			for (wr = 0; wr < 3; wr++) {
				struct tb_client cl = {.producer_id = 10 + prod,
						       .uid = 100 + prod,
						       .pid = (int32_t)(200 + prod),
						       .machine_id = prod};
				uint8_t flags = 0;
				uint32_t *np = &next_pkt_no[prod][wr];
				uint8_t b[8];

				ck_reset(&c);
				if (round % 3 == 1) {
					flags |= FIRST;
					memcpy(b, "tail", 4);
					ck_add(&c, b, 4);
				}
				memcpy(b, np, 4);
				b[4] = (uint8_t)prod;
				b[5] = (uint8_t)wr;
				ck_add(&c, b, 6);
				(*np)++;
				if (round % 3 == 0 && round != 19) {
					flags |= LAST;
					memcpy(b, np, 4);
					b[4] = (uint8_t)prod;
					b[5] = (uint8_t)wr;
					ck_add(&c, b, 6);
					(*np)++;
				}
				int r = tb_copy_chunk(tb, &cl, (uint16_t)(wr + 1), round,
						      c.n_frags, flags, c.buf, c.len, true);

				ASSERT_EQ(r, 0);
			}
		}
	}
	tb_begin_read(tb, false);
	while (next_pkt(tb, p) == 1) {
		uint32_t no;

		prod = p->client.producer_id - 10;
		wr = p->writer_id - 1u;
		ASSERT_LT(prod, 3);
		ASSERT_LT(wr, 3);
		ASSERT_EQ(p->client.uid, 100 + prod);
		ASSERT_EQ(p->client.pid, 200 + prod);
		ASSERT_EQ(p->client.machine_id, prod);
		ASSERT_EQ(p->dropped, 0);
		memcpy(&no, p->data, 4);
		ASSERT_EQ(no, got[prod][wr]);
		ASSERT_EQ(p->data[4], prod);
		ASSERT_EQ(p->data[5], wr);
		if (p->len == 10)
			ASSERT_MEMEQ(p->data + 6, "tail", 4);
		else
			ASSERT_EQ(p->len, 6);
		got[prod][wr]++;
		n++;
	}
	for (prod = 0; prod < 3; prod++)
		for (wr = 0; wr < 3; wr++)
			ASSERT_EQ(got[prod][wr], next_pkt_no[prod][wr]);
	ASSERT_GT(n, 9 * 20);
	free(p);
	tb_destroy(tb);
}

TEST(scraped_chunk_is_replaced_by_its_commit)
{
	struct trace_buffer *tb = make_tb(65536, TB_RING_BUFFER);
	struct pkt *p = malloc(sizeof(*p));
	struct tb_stats st;
	struct chunk c;

	/* Scraped while the writer was in its third packet. */
	ck_reset(&c);
	ck_add_fill(&c, 10, 'a');
	ck_add_fill(&c, 11, 'b');
	ck_add_fill(&c, 3, 'c');
	memset(c.buf + c.len, 0, 200); /* rest of the SMB chunk */
	ASSERT_EQ(tb_copy_chunk(tb, &k_client, 1, 0, 3, 0, c.buf, c.len + 200, false), 0);
	tb_begin_read(tb, false);
	EXPECT_NEXT(tb, p, 10, 'a', 0);
	EXPECT_NEXT(tb, p, 11, 'b', 0);
	ASSERT_EQ(next_pkt(tb, p), 0);
	/* Scraped again with nothing new: ignored. */
	ASSERT_EQ(tb_copy_chunk(tb, &k_client, 1, 0, 3, 0, c.buf, c.len + 200, false), 0);
	ASSERT_EQ(count_packets(tb, false), 0);

	/* The real commit: packet c finished, d and e added, e continues. */
	ck_reset(&c);
	ck_add_fill(&c, 10, 'a');
	ck_add_fill(&c, 11, 'b');
	ck_add_fill(&c, 30, 'c');
	ck_add_fill(&c, 40, 'd');
	ck_add(&c, "he", 2);
	ASSERT_EQ(commit(tb, 1, 0, LAST, &c), 0);
	ck_reset(&c);
	ck_add(&c, "llo", 3);
	ASSERT_EQ(commit(tb, 1, 1, FIRST, &c), 0);
	tb_begin_read(tb, false);
	EXPECT_NEXT(tb, p, 30, 'c', 0);
	EXPECT_NEXT(tb, p, 40, 'd', 0);
	ASSERT_EQ(next_pkt(tb, p), 1);
	ASSERT_EQ(p->len, 5);
	ASSERT_MEMEQ(p->data, "hello", 5);
	ASSERT_EQ(next_pkt(tb, p), 0);
	tb_stats(tb, &st);
	ASSERT_EQ(st.chunks_rewritten, 1);
	ASSERT_EQ(st.chunks_written, 2);
	ASSERT_EQ(st.abi_violations, 0);
	/* A late duplicate of a consumed chunk is refused. */
	ASSERT_EQ(commit(tb, 1, 0, LAST, &c), -ESTALE);
	free(p);
	tb_destroy(tb);
}

TEST(final_read_drops_unfinished_packets)
{
	struct trace_buffer *tb = make_tb(65536, TB_RING_BUFFER);
	struct tb_stats st;
	struct chunk c;

	ck_reset(&c);
	ck_add_fill(&c, 10, 'a');
	ck_add_fill(&c, 10, 'b');
	ASSERT_EQ(commit(tb, 1, 0, LAST, &c), 0);
	ASSERT_EQ(count_packets(tb, false), 1);
	ASSERT_EQ(count_packets(tb, false), 0);
	ASSERT_EQ(count_packets(tb, true), 0);
	tb_stats(tb, &st);
	ASSERT_EQ(st.packets_dropped_final, 1);
	ASSERT_EQ(st.bytes_read, st.bytes_written);
	ASSERT_EQ(st.chunks_read, 1);
	tb_destroy(tb);
}

TEST(sequence_table_limit)
{
	struct trace_buffer *tb = make_tb(4096, TB_RING_BUFFER);
	struct tb_stats st;
	uint32_t i, n_ok = 0;
	int r;

	/* 4 KiB provisions 66 sequences; 48-byte records leave room for 85. */
	for (i = 0; i < 80; i++) {
		r = commit_one(tb, (uint16_t)(i + 1), 0, 1, 'a');
		if (r == 0)
			n_ok++;
		else
			ASSERT_EQ(r, -ENOSPC);
	}
	ASSERT_EQ(n_ok, 4096 / 2048 + 64);
	tb_stats(tb, &st);
	ASSERT_EQ(st.chunks_dropped_seq_limit, 80 - n_ok);
	/* Once read, idle sequences are recycled for new writers. */
	ASSERT_EQ(count_packets(tb, false), n_ok);
	ASSERT_EQ(commit_one(tb, 500, 0, 1, 'b'), 0);
	ASSERT_EQ(count_packets(tb, false), 1);
	tb_destroy(tb);
}

TEST(clone_returns_the_same_packets)
{
	struct trace_buffer *tb = make_tb(8192, TB_RING_BUFFER);
	struct trace_buffer *copy = NULL;
	struct pkt *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct tb_stats sa, sb;
	struct chunk c;
	uint32_t i;
	size_t n = 0;

	for (i = 0; i < 12; i++)
		ASSERT_EQ(commit_one(tb, (uint16_t)(1 + i % 3), i / 3, 900, (uint8_t)i), 0);
	ck_reset(&c);
	ck_add(&c, "pending", 7);
	ASSERT_EQ(commit(tb, 1, 4, LAST, &c), 0);
	ASSERT_EQ(tb_clone(tb, &copy), 0);
	tb_stats(tb, &sa);
	tb_stats(copy, &sb);
	ASSERT_EQ(memcmp(&sa, &sb, sizeof(sa)), 0);
	ASSERT_EQ(commit_one(copy, 1, 5, 10, 'x'), -EPERM);
	ASSERT_EQ(tb_try_patch(copy, 1, 1, 4, 0, (const uint8_t *)"abcd", false), -EPERM);

	tb_begin_read(tb, false);
	tb_begin_read(copy, false);
	for (;;) {
		int ra = next_pkt(tb, a), rb = next_pkt(copy, b);

		ASSERT_EQ(ra, rb);
		if (ra == 0)
			break;
		ASSERT_EQ(a->len, b->len);
		ASSERT_MEMEQ(a->data, b->data, a->len);
		ASSERT_EQ(a->dropped, b->dropped);
		ASSERT_EQ(a->writer_id, b->writer_id);
		n++;
	}
	ASSERT_GT(n, 3);
	/* The original keeps working after the clone is gone. */
	tb_destroy(copy);
	ck_reset(&c);
	ck_add(&c, "!", 1);
	ASSERT_EQ(commit(tb, 1, 5, FIRST, &c), 0);
	tb_begin_read(tb, false);
	ASSERT_EQ(next_pkt(tb, a), 1);
	ASSERT_EQ(a->len, 8);
	ASSERT_MEMEQ(a->data, "pending!", 8);
	free(a);
	free(b);
	tb_destroy(tb);
}

TEST(stats_encode_and_decode)
{
	struct trace_buffer *tb = make_tb(4096, TB_RING_BUFFER);
	struct pz_field slots[32];
	struct pz_stream s;
	struct pz_msg root, bs;
	struct pz_field f;
	struct pz_reader r;
	struct tb_stats st;
	uint8_t out[512];
	uint32_t i;
	size_t len;

	for (i = 0; i < 9; i++)
		ASSERT_EQ(commit_one(tb, 1, i, KIB_PACKET, (uint8_t)i), 0);
	ASSERT_EQ(commit_one(tb, 1, 20, 0, 'x'), 0);
	tb_try_patch(tb, 1, 1, 999, 0, (const uint8_t *)"abcd", false);
	tb_copy_chunk(tb, &k_client, 3, 0, 1, 0, (const uint8_t *)"\x05", 1, true);
	count_packets(tb, false);
	tb_stats(tb, &st);
	ASSERT_GT(st.chunks_overwritten, 0);
	ASSERT_GT(st.bytes_read, 0);
	ASSERT_GT(st.abi_violations, 0);

	pz_stream_init_flat(&s, out, sizeof(out));
	pz_msg_begin(&root, &s, NULL);
	pz_begin_nested(&root, PB_TRACE_STATS__BUFFER_STATS, &bs);
	tb_write_stats(tb, &bs);
	pz_end(&root);
	ASSERT_TRUE(pz_stream_ok(&s));
	len = (size_t)(s.cur - out);

	pz_reader_init(&r, out, len);
	ASSERT_EQ(pz_reader_next(&r, &f), 1);
	ASSERT_EQ(f.id, PB_TRACE_STATS__BUFFER_STATS);
	ASSERT_EQ(pz_decode_table(f.data, f.size, slots, PFC_ARRAY_SIZE(slots)), PZ_OK);
#define CHECK_FIELD(name, num)                                                         \
	do {                                                                           \
		ASSERT_EQ(slots[num].id, num);                                         \
		ASSERT_U64_EQ(slots[num].value, st.name);                              \
	} while (0)
	CHECK_FIELD(buffer_size, PB_TRACE_STATS_BUFFER_STATS__BUFFER_SIZE);
	CHECK_FIELD(bytes_written, PB_TRACE_STATS_BUFFER_STATS__BYTES_WRITTEN);
	CHECK_FIELD(bytes_overwritten, PB_TRACE_STATS_BUFFER_STATS__BYTES_OVERWRITTEN);
	CHECK_FIELD(bytes_read, PB_TRACE_STATS_BUFFER_STATS__BYTES_READ);
	CHECK_FIELD(padding_bytes_written, PB_TRACE_STATS_BUFFER_STATS__PADDING_BYTES_WRITTEN);
	CHECK_FIELD(padding_bytes_cleared, PB_TRACE_STATS_BUFFER_STATS__PADDING_BYTES_CLEARED);
	CHECK_FIELD(chunks_written, PB_TRACE_STATS_BUFFER_STATS__CHUNKS_WRITTEN);
	CHECK_FIELD(chunks_rewritten, PB_TRACE_STATS_BUFFER_STATS__CHUNKS_REWRITTEN);
	CHECK_FIELD(chunks_overwritten, PB_TRACE_STATS_BUFFER_STATS__CHUNKS_OVERWRITTEN);
	CHECK_FIELD(chunks_discarded, PB_TRACE_STATS_BUFFER_STATS__CHUNKS_DISCARDED);
	CHECK_FIELD(chunks_read, PB_TRACE_STATS_BUFFER_STATS__CHUNKS_READ);
	CHECK_FIELD(chunks_committed_out_of_order,
		    PB_TRACE_STATS_BUFFER_STATS__CHUNKS_COMMITTED_OUT_OF_ORDER);
	CHECK_FIELD(write_wrap_count, PB_TRACE_STATS_BUFFER_STATS__WRITE_WRAP_COUNT);
	CHECK_FIELD(patches_succeeded, PB_TRACE_STATS_BUFFER_STATS__PATCHES_SUCCEEDED);
	CHECK_FIELD(patches_failed, PB_TRACE_STATS_BUFFER_STATS__PATCHES_FAILED);
	CHECK_FIELD(readaheads_succeeded, PB_TRACE_STATS_BUFFER_STATS__READAHEADS_SUCCEEDED);
	CHECK_FIELD(readaheads_failed, PB_TRACE_STATS_BUFFER_STATS__READAHEADS_FAILED);
	CHECK_FIELD(abi_violations, PB_TRACE_STATS_BUFFER_STATS__ABI_VIOLATIONS);
	CHECK_FIELD(trace_writer_packet_loss,
		    PB_TRACE_STATS_BUFFER_STATS__TRACE_WRITER_PACKET_LOSS);
#undef CHECK_FIELD
	ASSERT_EQ(st.patches_failed, 1);
	ASSERT_EQ(st.write_wrap_count, 2);
	tb_destroy(tb);
}

static uint32_t rnd(uint64_t *state)
{
	*state = *state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*state >> 33);
}

/* Random commits (some hostile, scraped or out of order), patches, reads
 * and clones: nothing may crash (ASan runs this too), and once a final
 * read has drained the buffer every byte written was either read or
 * overwritten. */
static void random_operations(enum tb_fill_policy policy, uint64_t seed)
{
	struct trace_buffer *tb = make_tb(8192, policy);
	struct trace_buffer *copy = NULL;
	uint32_t next_id[4] = {0};
	struct tb_packet tp;
	struct tb_stats st;
	struct chunk c;
	int i, k;

	for (i = 0; i < 20000; i++) {
		uint32_t op = rnd(&seed) % 16, w = rnd(&seed) % 4;

		if (op < 10) {
			uint32_t id = next_id[w]++, n = rnd(&seed) % 4;
			uint8_t flags = (uint8_t)(rnd(&seed) % 8);
			bool is_complete = rnd(&seed) % 8 != 0;

			if (rnd(&seed) % 8 == 0)
				id -= rnd(&seed) % 3; /* recommit or out of order */
			ck_reset(&c);
			for (k = 0; k < (int)n; k++)
				ck_add_fill(&c, rnd(&seed) % 700, (uint8_t)k);
			if (rnd(&seed) % 16 == 0 && c.len > 0)
				c.buf[rnd(&seed) % c.len] = (uint8_t)rnd(&seed);
			tb_copy_chunk(tb, &k_client, (uint16_t)(w + 1), id,
				      (uint16_t)(n + rnd(&seed) % 2), flags, c.buf,
				      c.len + rnd(&seed) % 64, is_complete);
		} else if (op < 13) {
			uint8_t data[4] = {0x80, 0x80, 0x80, 0};

			tb_try_patch(tb, 1, (uint16_t)(w + 1), next_id[w] - 1 - rnd(&seed) % 2,
				     rnd(&seed) % 2000, data, rnd(&seed) % 2);
		} else if (op < 15) {
			tb_begin_read(tb, false);
			while (tb_read_next_packet(tb, &tp) == 1)
				ASSERT_GT(tp.n_slices, 0);
		} else if (copy == NULL) {
			ASSERT_EQ(tb_clone(tb, &copy), 0);
		}
	}
	count_packets(tb, true);
	tb_stats(tb, &st);
	ASSERT_EQ(st.bytes_read + st.bytes_overwritten, st.bytes_written);
	ASSERT_EQ(st.chunks_read + st.chunks_overwritten, st.chunks_written);
	ASSERT_LE(st.padding_bytes_written - st.padding_bytes_cleared, 8192);
	ASSERT_GT(st.abi_violations, 0);
	if (copy)
		count_packets(copy, true);
	tb_destroy(copy);
	tb_destroy(tb);
}

TEST(random_operations_ring)
{
	random_operations(TB_RING_BUFFER, 1);
	random_operations(TB_RING_BUFFER, 2);
}

TEST(random_operations_discard)
{
	random_operations(TB_DISCARD, 3);
}

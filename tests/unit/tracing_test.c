// SPDX-License-Identifier: Apache-2.0
/*
 * tracing_test.c - unit tests of the SMB ABI, shared memory, arbiter, trace
 * writer, and the producer and consumer clients. A small service simulator
 * receives CommitDataRequests, copies and frees chunks, applies patches and
 * reassembles packets per writer, so every test checks what a real service
 * would see; the clients talk to minimal fake ProducerPort/ConsumerPort
 * hosts built on src/ipc in the same process.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "pb_fields.h"
#include "protozero/protozero.h"
#include "base/buf.h"
#include "base/compiler.h"
#include "base/evloop.h"
#include "base/file.h"
#include "base/sock.h"
#include "ipc/consumer_port.pb-c.h"
#include "ipc/ipc.h"
#include "ipc/producer_port.pb-c.h"
#include "tracing/consumer.h"
#include "tracing/producer.h"
#include "tracing/tracing.h"
#include "tracing/tracing_int.h"

/* ------------------------------------------------ service simulator ---- */

struct sim_chunk {
	uint16_t writer_id;
	uint32_t chunk_id;
	uint32_t size;
	uint8_t *bytes;
	bool needs_patching;
	bool has_final_patch;
};

struct sim_ref {
	uint32_t page;
	uint32_t idx;
};

struct sim_packet {
	uint16_t writer_id;
	uint8_t *data;
	size_t len;
};

struct sim {
	const struct smb *smb; /* NULL in emulation mode */
	struct arbiter *arb;   /* emulation mode: releases the chunks it was sent */
	bool is_slow;          /* defer freeing chunks until sim_drain() */
	struct sim_chunk *chunks;
	size_t n_chunks, cap_chunks;
	struct sim_ref *deferred;
	size_t n_deferred, cap_deferred;
	size_t n_commits, n_moves, n_patches, n_final_patches, max_packed;
	size_t n_moves_with_data;
	uint64_t last_flush_id;
	int errors;
	/* reassembly output */
	struct sim_packet *packets;
	size_t n_packets, cap_packets;
	size_t n_gaps, n_dropped_frags, n_discarded;
};

#define GROW(arr, n, cap)                                                            \
	do {                                                                         \
		if ((n) == (cap)) {                                                  \
			(cap) = (cap) ? 2 * (cap) : 64;                              \
			(arr) = realloc((arr), (cap) * sizeof(*(arr)));              \
			ASSERT_TRUE((arr) != NULL);                                  \
		}                                                                    \
	} while (0)

static void sim_error(struct sim *sim, int line)
{
	if (getenv("TRACING_TEST_VERBOSE"))
		fprintf(stderr, "sim error at line %d\n", line);
	sim->errors++;
}

static void sim_store(struct sim *sim, const uint8_t *bytes, size_t size)
{
	struct smb_frag_iter it;
	struct sim_chunk *c;

	if (smb_chunk_parse(&it, bytes, size) < 0) {
		sim_error(sim, __LINE__);
		return;
	}
	GROW(sim->chunks, sim->n_chunks, sim->cap_chunks);
	c = &sim->chunks[sim->n_chunks++];
	c->writer_id = it.info.writer_id;
	c->chunk_id = it.info.chunk_id;
	c->size = (uint32_t)size;
	c->bytes = malloc(size);
	ASSERT_TRUE(c->bytes != NULL);
	memcpy(c->bytes, bytes, size);
	c->needs_patching = it.info.flags & SMB_CHUNK_NEEDS_PATCHING;
	c->has_final_patch = false;
}

static void sim_drain(struct sim *sim)
{
	struct smb_chunk c;
	size_t i;

	for (i = 0; i < sim->n_deferred; i++) {
		if (sim->arb) {
			/* Emulation: the commit has now "left the process". */
			if (arb_emulated_release(sim->arb, (uint32_t)sim->deferred[i].page,
						 (uint32_t)sim->deferred[i].idx) < 0)
				sim_error(sim, __LINE__);
			continue;
		}
		/* Taken for reading in sim_commit(); only the free was late. */
		if (smb_chunk_resolve(sim->smb, sim->deferred[i].page, sim->deferred[i].idx,
				      &c) < 0 ||
		    smb_chunk_release_free(sim->smb, &c) < 0)
			sim_error(sim, __LINE__);
	}
	sim->n_deferred = 0;
}

static struct sim_chunk *sim_find(struct sim *sim, uint16_t writer_id, uint32_t chunk_id)
{
	size_t i;

	for (i = sim->n_chunks; i-- > 0;)
		if (sim->chunks[i].writer_id == writer_id && sim->chunks[i].chunk_id == chunk_id)
			return &sim->chunks[i];
	return NULL;
}

static int sim_commit(const struct Perfetto__Protos__CommitDataRequest *req, void *user)
{
	struct sim *sim = user;
	struct smb_chunk c;
	size_t i, j, packed;

	sim->n_commits++;
	packed = protobuf_c_message_get_packed_size(&req->base);
	if (packed > sim->max_packed)
		sim->max_packed = packed;
	if (req->has_flush_request_id)
		sim->last_flush_id = req->flush_request_id;
	for (i = 0; i < req->n_chunks_to_move; i++) {
		const struct Perfetto__Protos__CommitDataRequest__ChunksToMove *m =
			req->chunks_to_move[i];

		sim->n_moves++;
		if (m->has_data) {
			sim->n_moves_with_data++;
			sim_store(sim, m->data.data, m->data.len);
			/* Without an arbiter this is the service end of a socket. */
			if (sim->arb && sim->is_slow) {
				GROW(sim->deferred, sim->n_deferred, sim->cap_deferred);
				sim->deferred[sim->n_deferred].page = m->page;
				sim->deferred[sim->n_deferred++].idx = m->chunk;
			} else if (sim->arb && arb_emulated_release(sim->arb, m->page, m->chunk) < 0) {
				sim_error(sim, __LINE__);
			}
			continue;
		}
		if (!sim->smb || smb_chunk_try_acquire_read(sim->smb, m->page, m->chunk, &c) < 0) {
			sim_error(sim, __LINE__);
			continue;
		}
		sim_store(sim, c.begin, c.size);
		if (sim->is_slow) {
			GROW(sim->deferred, sim->n_deferred, sim->cap_deferred);
			sim->deferred[sim->n_deferred].page = c.page;
			sim->deferred[sim->n_deferred++].idx = c.idx;
			continue;
		}
		if (smb_chunk_release_free(sim->smb, &c) < 0)
			sim_error(sim, __LINE__);
	}
	for (i = 0; i < req->n_chunks_to_patch; i++) {
		const struct Perfetto__Protos__CommitDataRequest__ChunkToPatch *p =
			req->chunks_to_patch[i];
		struct sim_chunk *sc = sim_find(sim, (uint16_t)p->writer_id, p->chunk_id);

		if (!sc) {
			sim_error(sim, __LINE__);
			continue;
		}
		for (j = 0; j < p->n_patches; j++) {
			const struct Perfetto__Protos__CommitDataRequest__ChunkToPatch__Patch *pp =
				p->patches[j];

			sim->n_patches++;
			if (pp->data.len != 4 ||
			    pp->offset + 4 > sc->size - SMB_CHUNK_HEADER_SIZE) {
				sim_error(sim, __LINE__);
				continue;
			}
			memcpy(sc->bytes + SMB_CHUNK_HEADER_SIZE + pp->offset, pp->data.data, 4);
		}
		if (!p->has_more_patches) {
			sc->has_final_patch = true;
			sim->n_final_patches++;
		}
	}
	return 0;
}

static int cmp_chunk(const void *a, const void *b)
{
	const struct sim_chunk *x = a, *y = b;

	if (x->writer_id != y->writer_id)
		return x->writer_id < y->writer_id ? -1 : 1;
	if (x->chunk_id != y->chunk_id)
		return x->chunk_id < y->chunk_id ? -1 : 1;
	return 0;
}

static void emit(struct sim *sim, uint16_t writer_id, const uint8_t *data, size_t len)
{
	struct sim_packet *p;

	GROW(sim->packets, sim->n_packets, sim->cap_packets);
	p = &sim->packets[sim->n_packets++];
	p->writer_id = writer_id;
	p->data = malloc(len ? len : 1);
	ASSERT_TRUE(p->data != NULL);
	if (len)
		memcpy(p->data, data, len);
	p->len = len;
}

/* Glues fragments in (writer, chunk id) order, like TraceBuffer does. */
static void sim_reassemble(struct sim *sim)
{
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, i;
	bool is_open = false;
	uint16_t wid = 0;
	uint32_t expect = 0;

	qsort(sim->chunks, sim->n_chunks, sizeof(*sim->chunks), cmp_chunk);
	for (i = 0; i < sim->n_chunks; i++) {
		struct sim_chunk *c = &sim->chunks[i];
		struct smb_frag_iter it;
		struct smb_frag f;
		int r;

		if (i > 0 && c->writer_id == wid && c->chunk_id == expect - 1)
			sim_error(sim, __LINE__); /* the same chunk twice */
		if (i == 0 || c->writer_id != wid) {
			wid = c->writer_id;
			is_open = false;
		} else if (c->chunk_id != expect) {
			sim->n_gaps++;
			if (is_open)
				sim->n_discarded++;
			is_open = false;
		}
		expect = c->chunk_id + 1;
		if (c->needs_patching && !c->has_final_patch)
			sim_error(sim, __LINE__);
		if (smb_chunk_parse(&it, c->bytes, c->size) < 0) {
			sim_error(sim, __LINE__);
			continue;
		}
		while ((r = smb_frag_next(&it, &f)) == 1) {
			if (f.is_dropped) {
				sim->n_dropped_frags++;
				is_open = false;
				break;
			}
			if (f.continues_prev) {
				if (!is_open)
					continue; /* its start was lost */
			} else {
				if (is_open)
					sim->n_discarded++;
				len = 0;
			}
			if (len + f.size > cap) {
				cap = (len + f.size) * 2;
				buf = realloc(buf, cap);
				ASSERT_TRUE(buf != NULL);
			}
			if (f.size)
				memcpy(buf + len, f.data, f.size);
			len += f.size;
			is_open = f.continues_next;
			if (!is_open)
				emit(sim, wid, buf, len);
		}
		if (r < 0)
			sim_error(sim, __LINE__);
	}
	free(buf);
}

static void sim_fini(struct sim *sim)
{
	size_t i;

	for (i = 0; i < sim->n_chunks; i++)
		free(sim->chunks[i].bytes);
	for (i = 0; i < sim->n_packets; i++)
		free(sim->packets[i].data);
	free(sim->chunks);
	free(sim->packets);
	free(sim->deferred);
}

/* ------------------------------------------------ packet contents ---- */

static uint8_t pattern_byte(unsigned tag, unsigned seq, size_t i)
{
	return (uint8_t)(tag * 31 + seq * 7 + i * 13 + (i >> 8));
}

/* TracePacket{timestamp=seq, for_testing{seq_value=seq, counter=tag, str=len bytes}} */
static void write_packet(struct trace_writer *tw, unsigned tag, unsigned seq, size_t len,
			 uint8_t *scratch)
{
	struct pz_msg *root = tw_new_packet(tw);
	struct pz_msg ev;
	size_t i;

	for (i = 0; i < len; i++)
		scratch[i] = pattern_byte(tag, seq, i);
	pz_append_varint(root, PB_TRACE_PACKET__TIMESTAMP, seq);
	pz_begin_nested(root, PB_TRACE_PACKET__FOR_TESTING, &ev);
	pz_append_varint(&ev, PB_TEST_EVENT__SEQ_VALUE, seq);
	pz_append_varint(&ev, PB_TEST_EVENT__COUNTER, tag);
	pz_append_bytes(&ev, PB_TEST_EVENT__STR, scratch, len);
	tw_finish_packet(tw);
}

/* Checks a reassembled packet written by write_packet(); returns its seq. */
static int check_packet(const struct sim_packet *p, unsigned tag, size_t *out_len)
{
	struct pz_reader r, er;
	struct pz_field f, ef;
	int64_t ts = -1, seq = -2, counter = -1;
	const uint8_t *str = NULL;
	size_t len = 0, i;

	pz_reader_init(&r, p->data, p->len);
	while (pz_reader_next(&r, &f) == 1) {
		if (f.id == PB_TRACE_PACKET__TIMESTAMP)
			ts = (int64_t)f.value;
		if (f.id != PB_TRACE_PACKET__FOR_TESTING)
			continue;
		pz_reader_init(&er, f.data, f.size);
		while (pz_reader_next(&er, &ef) == 1) {
			if (ef.id == PB_TEST_EVENT__SEQ_VALUE)
				seq = (int64_t)ef.value;
			else if (ef.id == PB_TEST_EVENT__COUNTER)
				counter = (int64_t)ef.value;
			else if (ef.id == PB_TEST_EVENT__STR)
				str = ef.data, len = ef.size;
		}
		ASSERT_EQ(er.err, PZ_OK);
	}
	ASSERT_EQ(r.err, PZ_OK);
	ASSERT_EQ(ts, seq);
	ASSERT_EQ(counter, tag);
	ASSERT_TRUE(str != NULL || len == 0);
	for (i = 0; i < len; i++)
		if (str[i] != pattern_byte(tag, (unsigned)seq, i))
			FAIL("packet %lld byte %zu corrupt", (long long)seq, i);
	*out_len = len;
	return (int)seq;
}

/* ------------------------------------------------ fixtures ---- */

struct fixture {
	struct shm *shm;
	struct arbiter *arb;
	struct sim sim;
};

static void fixture_init(struct fixture *fx, size_t smb_size, size_t page_size,
			 enum smb_layout layout, bool is_emulation, bool batch)
{
	struct arb_config cfg = {0};

	memset(fx, 0, sizeof(*fx));
	if (is_emulation)
		ASSERT_EQ(shm_create_private(smb_size, page_size, &fx->shm), 0);
	else
		ASSERT_EQ(shm_create(smb_size, page_size, &fx->shm), 0);
	cfg.smb_base = fx->shm->base;
	cfg.smb_size = smb_size;
	cfg.page_size = page_size;
	cfg.layout = layout;
	cfg.is_emulation = is_emulation;
	cfg.batch_commits = batch;
	cfg.commit_cb = sim_commit;
	cfg.user = &fx->sim;
	ASSERT_EQ(arb_create(&cfg, &fx->arb), 0);
	fx->sim.smb = is_emulation ? NULL : arb_smb(fx->arb);
	fx->sim.arb = is_emulation ? fx->arb : NULL;
}

static void fixture_fini(struct fixture *fx)
{
	arb_destroy(fx->arb);
	shm_destroy(fx->shm);
	sim_fini(&fx->sim);
}

/* Every packet of writer @wid arrives once, in order, intact; returns count. */
static size_t check_writer_packets(struct sim *sim, uint16_t wid, unsigned tag,
				   const size_t *expected_lens, size_t n_expected)
{
	size_t i, n = 0, len;
	int seq;

	for (i = 0; i < sim->n_packets; i++) {
		if (sim->packets[i].writer_id != wid)
			continue;
		seq = check_packet(&sim->packets[i], tag, &len);
		ASSERT_EQ(seq, n);
		if (expected_lens)
			ASSERT_EQ(len, expected_lens[n]);
		n++;
	}
	if (n_expected != (size_t)-1)
		ASSERT_EQ(n, n_expected);
	return n;
}

/* ------------------------------------------------ ABI ---- */

TEST(abi_constants_match_perfetto)
{
	static const uint32_t sizes_4k[] = {0, 4088, 2044, 1020, 584, 292, 0, 0};
	static const unsigned n_chunks[] = {0, 1, 2, 4, 7, 14, 0, 0};
	unsigned l;

	for (l = 0; l < 8; l++) {
		ASSERT_EQ(smb_chunk_size_for_layout(4096, l), sizes_4k[l]);
		ASSERT_EQ(smb_layout_n_chunks(l), n_chunks[l]);
		if (n_chunks[l]) {
			ASSERT_EQ(smb_chunk_size_for_layout(4096, l) % 4, 0);
			ASSERT_LE(8 + n_chunks[l] * smb_chunk_size_for_layout(4096, l), 4096);
		}
	}
	ASSERT_EQ(smb_chunk_size_for_layout(32768, SMB_LAYOUT_DIV14), 2340);
	ASSERT_EQ(sizeof(struct smb_page_header), 8);
	ASSERT_EQ(sizeof(struct smb_chunk_header), 8);
	ASSERT_EQ(SMB_LAYOUT_MASK, 0x70000000u);
	ASSERT_EQ(SMB_ALL_CHUNKS_MASK, 0x0FFFFFFFu);
	ASSERT_EQ(SMB_PACKET_SIZE_DROP, 268435455);
	ASSERT_EQ(SMB_MAX_WRITER_ID, 1023);
	ASSERT_EQ(SMB_CHUNK_FIRST_CONTINUES, 1);
	ASSERT_EQ(SMB_CHUNK_LAST_CONTINUES, 2);
	ASSERT_EQ(SMB_CHUNK_NEEDS_PATCHING, 4);
	/* count:10 in the low bits, flags:6 above, as the C++ bitfield lays out. */
	ASSERT_EQ(smb_packets_pack(5, SMB_CHUNK_LAST_CONTINUES), 0x0805);
	ASSERT_EQ(ARB_MAX_COMMIT_BYTES, 128 * 1024 - 512);
}

TEST(abi_chunk_header_bytes_are_little_endian)
{
	_Alignas(4096) static uint8_t mem[4096];
	struct smb_chunk_init init = {.chunk_id = 0x01020304, .writer_id = 0x0506,
				      .packets = 0};
	struct smb smb;
	struct smb_chunk c;

	ASSERT_EQ(smb_init(&smb, mem, sizeof(mem), 4096), 0);
	ASSERT_EQ(smb_page_try_partition(&smb, 0, SMB_LAYOUT_DIV2), 0);
	init.writer_id = 0x0306;
	ASSERT_EQ(smb_chunk_try_acquire_write(&smb, 0, 1, &init, &c), 0);
	ASSERT_EQ(c.begin - mem, 8 + 2044);
	smb_chunk_inc_packet_count(&c);
	smb_chunk_set_flags(&c, SMB_CHUNK_NEEDS_PATCHING);
	{
		const uint8_t want[8] = {0x04, 0x03, 0x02, 0x01, 0x06, 0x03, 0x01, 0x10};
		ASSERT_MEMEQ(c.begin, want, 8);
	}
	/* layout Div2 (2) in bits 30..28, chunk 1 BeingWritten in bits 3..2 */
	ASSERT_U64_EQ(smb_page_bitmap(&smb, 0), 0x20000004u);
}

TEST(abi_page_partition_and_state_transitions)
{
	_Alignas(4096) static uint8_t mem[4 * 4096];
	struct smb_chunk_init init = {.chunk_id = 7, .writer_id = 1};
	struct smb smb;
	struct smb_chunk c, r, c2;

	ASSERT_EQ(smb_init(&smb, mem, sizeof(mem), 3000), -EINVAL);
	ASSERT_EQ(smb_init(&smb, mem, 4096 * 3 + 1, 4096), -EINVAL);
	ASSERT_EQ(smb_init(&smb, mem, sizeof(mem), 4096), 0);
	ASSERT_EQ(smb.n_pages, 4);
	ASSERT_TRUE(smb_page_is_free(&smb, 2));
	ASSERT_EQ(smb_page_free_chunks(&smb, 2), 0);
	ASSERT_EQ(smb_chunk_try_acquire_write(&smb, 2, 0, &init, &c), -EBUSY);
	ASSERT_EQ(smb_page_try_partition(&smb, 2, SMB_LAYOUT_DIV4), 0);
	ASSERT_EQ(smb_page_try_partition(&smb, 2, SMB_LAYOUT_DIV1), -EBUSY);
	ASSERT_EQ(smb_page_try_partition(&smb, 9, SMB_LAYOUT_DIV1), -EINVAL);
	ASSERT_EQ(smb_page_try_partition(&smb, 1, (enum smb_layout)6), -EINVAL);
	ASSERT_EQ(smb_page_free_chunks(&smb, 2), 0xf);
	ASSERT_EQ(smb_chunk_try_acquire_write(&smb, 2, 4, &init, &c), -ERANGE);

	ASSERT_EQ(smb_chunk_try_acquire_write(&smb, 2, 3, &init, &c), 0);
	ASSERT_EQ(smb_chunk_state(&smb, 2, 3), SMB_CHUNK_BEING_WRITTEN);
	ASSERT_EQ(smb_page_free_chunks(&smb, 2), 0x7);
	ASSERT_EQ(smb_chunk_try_acquire_write(&smb, 2, 3, &init, &c2), -EBUSY);
	ASSERT_EQ(c.size, 1020);
	ASSERT_EQ(smb_chunk_payload_size(&c), 1012);
	ASSERT_EQ(atomic_load(&smb_chunk_header(&c)->chunk_id), 7);
	/* The service may not read a chunk still being written. */
	ASSERT_EQ(smb_chunk_try_acquire_read(&smb, 2, 3, &r), -EBUSY);
	ASSERT_EQ(smb_chunk_release_free(&smb, &c), -EINVAL);
	ASSERT_EQ(smb_chunk_mark_complete(&smb, &c), 0);
	ASSERT_EQ(smb_chunk_mark_complete(&smb, &c), -EINVAL);
	ASSERT_EQ(smb_chunk_state(&smb, 2, 3), SMB_CHUNK_COMPLETE);
	ASSERT_EQ(smb_chunk_try_acquire_read(&smb, 2, 3, &r), 0);
	ASSERT_TRUE(r.begin == c.begin);
	ASSERT_EQ(smb_chunk_state(&smb, 2, 3), SMB_CHUNK_BEING_READ);
	ASSERT_EQ(smb_chunk_release_free(&smb, &r), 0);
	/* The last chunk freed returns the page to "not partitioned". */
	ASSERT_U64_EQ(smb_page_bitmap(&smb, 2), 0);
	ASSERT_TRUE(smb_page_is_free(&smb, 2));

	/* With another chunk in use the layout stays. */
	ASSERT_EQ(smb_page_try_partition(&smb, 2, SMB_LAYOUT_DIV14), 0);
	ASSERT_EQ(smb_chunk_try_acquire_write(&smb, 2, 0, &init, &c), 0);
	ASSERT_EQ(smb_chunk_try_acquire_write(&smb, 2, 13, &init, &c2), 0);
	ASSERT_EQ(smb_chunk_mark_complete(&smb, &c2), 0);
	ASSERT_EQ(smb_chunk_free_emulated(&smb, &c2), 0);
	ASSERT_EQ(smb_bitmap_layout(smb_page_bitmap(&smb, 2)), SMB_LAYOUT_DIV14);
	ASSERT_EQ(smb_chunk_state(&smb, 2, 13), SMB_CHUNK_FREE);
}

struct acq_thread {
	struct smb *smb;
	uint16_t id;
	size_t n;
	struct smb_chunk got[1024];
};

static void *acq_main(void *arg)
{
	struct acq_thread *t = arg;
	struct smb_chunk_init init = {.writer_id = t->id};
	size_t page;
	unsigned idx;
	bool any = true;

	while (any) {
		any = false;
		for (page = 0; page < t->smb->n_pages; page++) {
			uint32_t free_chunks;

			if (smb_page_is_free(t->smb, page))
				smb_page_try_partition(t->smb, page, (enum smb_layout)(1 + page % 5));
			free_chunks = smb_page_free_chunks(t->smb, page);
			for (idx = 0; free_chunks; idx++, free_chunks >>= 1) {
				struct smb_chunk *c = &t->got[t->n];

				if (!(free_chunks & 1))
					continue;
				init.chunk_id = (uint32_t)t->n;
				if (smb_chunk_try_acquire_write(t->smb, page, idx, &init, c) == 0) {
					/* Scribble over the whole chunk as its owner. */
					memset(smb_chunk_payload(c), t->id, smb_chunk_payload_size(c));
					t->n++;
					any = true;
				}
			}
		}
	}
	return NULL;
}

TEST(abi_concurrent_acquisition_never_hands_a_chunk_twice)
{
	enum { N_THREADS = 4, N_PAGES = 64 };
	static struct acq_thread th[N_THREADS];
	pthread_t tid[N_THREADS];
	struct smb smb;
	uint8_t *mem;
	size_t total = 0, expected = 0, i, j, k;
	int round;

	mem = mmap(NULL, N_PAGES * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	ASSERT_TRUE(mem != MAP_FAILED);
	ASSERT_EQ(smb_init(&smb, mem, N_PAGES * 4096, 4096), 0);
	for (i = 0; i < N_PAGES; i++)
		expected += smb_layout_n_chunks(1 + i % 5);
	for (round = 0; round < 20; round++) {
		total = 0;
		for (i = 0; i < N_THREADS; i++) {
			th[i].smb = &smb;
			th[i].id = (uint16_t)(i + 1);
			th[i].n = 0;
			ASSERT_EQ(pthread_create(&tid[i], NULL, acq_main, &th[i]), 0);
		}
		for (i = 0; i < N_THREADS; i++)
			pthread_join(tid[i], NULL);
		for (i = 0; i < N_THREADS; i++) {
			for (j = 0; j < th[i].n; j++) {
				struct smb_chunk *c = &th[i].got[j];
				const uint8_t *p = smb_chunk_payload(c);

				/* Nobody else wrote into a chunk we own. */
				for (k = 0; k < smb_chunk_payload_size(c); k++)
					if (p[k] != th[i].id)
						FAIL("chunk %u/%u shared", c->page, c->idx);
				ASSERT_EQ(atomic_load(&smb_chunk_header(c)->writer_id), th[i].id);
				ASSERT_EQ(smb_chunk_mark_complete(&smb, c), 0);
			}
			total += th[i].n;
		}
		ASSERT_EQ(total, expected);
		/* Service side: read and free everything, so pages get reused. */
		for (i = 0; i < N_PAGES; i++) {
			unsigned n = smb_layout_n_chunks(smb_bitmap_layout(smb_page_bitmap(&smb, i)));
			struct smb_chunk c;

			for (j = 0; j < n; j++) {
				ASSERT_EQ(smb_chunk_try_acquire_read(&smb, i, j, &c), 0);
				ASSERT_EQ(smb_chunk_release_free(&smb, &c), 0);
			}
			ASSERT_TRUE(smb_page_is_free(&smb, i));
		}
	}
	munmap(mem, N_PAGES * 4096);
}

/* ------------------------------------------------ service-side validation ---- */

static void put_chunk_header(uint8_t *b, uint32_t chunk_id, uint16_t writer, unsigned count,
			     unsigned flags)
{
	uint16_t packets = smb_packets_pack(count, flags);

	b[0] = (uint8_t)chunk_id;
	b[1] = (uint8_t)(chunk_id >> 8);
	b[2] = (uint8_t)(chunk_id >> 16);
	b[3] = (uint8_t)(chunk_id >> 24);
	b[4] = (uint8_t)writer;
	b[5] = (uint8_t)(writer >> 8);
	b[6] = (uint8_t)packets;
	b[7] = (uint8_t)(packets >> 8);
}

TEST(validation_rejects_bad_refs_and_layouts)
{
	_Alignas(4096) static uint8_t mem[2 * 4096];
	struct smb smb;
	struct smb_chunk c;
	struct smb_page_header *ph;

	ASSERT_EQ(smb_init(&smb, mem, sizeof(mem), 4096), 0);
	ASSERT_EQ(smb_chunk_resolve(&smb, 2, 0, &c), -ERANGE);
	ASSERT_EQ(smb_chunk_resolve(&smb, (size_t)-1, 0, &c), -ERANGE);
	ASSERT_EQ(smb_chunk_try_acquire_read(&smb, 5, 0, &c), -ERANGE);
	/* Not partitioned. */
	ASSERT_EQ(smb_chunk_resolve(&smb, 0, 0, &c), -EBADMSG);
	/* A peer wrote a reserved layout (6, 7) with "complete" chunk states. */
	ph = smb_page_header(&smb, 0);
	atomic_store(&ph->header_bitmap, (6u << SMB_LAYOUT_SHIFT) | 0x3);
	ASSERT_EQ(smb_chunk_try_acquire_read(&smb, 0, 0, &c), -EBADMSG);
	atomic_store(&ph->header_bitmap, (7u << SMB_LAYOUT_SHIFT) | 0x0FFFFFFF);
	ASSERT_EQ(smb_chunk_resolve(&smb, 0, 3, &c), -EBADMSG);
	ASSERT_EQ(smb_chunk_state(&smb, 0, 3), -EBADMSG);
	/* Div2 has chunks 0 and 1 only. */
	atomic_store(&ph->header_bitmap, (2u << SMB_LAYOUT_SHIFT) | 0x0FFFFFFF);
	ASSERT_EQ(smb_chunk_try_acquire_read(&smb, 0, 2, &c), -ERANGE);
	ASSERT_EQ(smb_chunk_try_acquire_read(&smb, 0, 14, &c), -ERANGE);
	ASSERT_EQ(smb_chunk_try_acquire_read(&smb, 0, 1, &c), 0);
	ASSERT_EQ(c.begin - mem, 8 + 2044);
	ASSERT_LE(c.begin + c.size - mem, 4096);
}

TEST(validation_fragment_parser_is_bounds_checked)
{
	uint8_t chunk[292];
	struct smb_frag_iter it;
	struct smb_frag f;

	/* Two good fragments; the second continues on the next chunk. */
	memset(chunk, 0, sizeof(chunk));
	put_chunk_header(chunk, 9, 3, 2, SMB_CHUNK_LAST_CONTINUES | SMB_CHUNK_FIRST_CONTINUES);
	pz_write_redundant_varint(chunk + 8, 10);
	pz_write_redundant_varint(chunk + 22, 292 - 26);
	ASSERT_EQ(smb_chunk_parse(&it, chunk, sizeof(chunk)), 0);
	ASSERT_EQ(it.info.chunk_id, 9);
	ASSERT_EQ(it.info.writer_id, 3);
	ASSERT_EQ(smb_frag_next(&it, &f), 1);
	ASSERT_EQ(f.size, 10);
	ASSERT_TRUE(f.continues_prev && !f.continues_next);
	ASSERT_EQ(smb_frag_next(&it, &f), 1);
	ASSERT_EQ(f.size, 292 - 26);
	ASSERT_TRUE(!f.continues_prev && f.continues_next);
	ASSERT_TRUE(f.data + f.size == chunk + sizeof(chunk));
	ASSERT_EQ(smb_frag_next(&it, &f), 0);

	/* Length one byte past the end of the chunk. */
	pz_write_redundant_varint(chunk + 22, 292 - 26 + 1);
	ASSERT_EQ(smb_chunk_parse(&it, chunk, sizeof(chunk)), 0);
	ASSERT_EQ(smb_frag_next(&it, &f), 1);
	ASSERT_EQ(smb_frag_next(&it, &f), -EBADMSG);
	ASSERT_EQ(smb_frag_next(&it, &f), 0);

	/* A size that is not a varint within 4 bytes. */
	memset(chunk + 22, 0xff, 4);
	ASSERT_EQ(smb_chunk_parse(&it, chunk, sizeof(chunk)), 0);
	ASSERT_EQ(smb_frag_next(&it, &f), 1);
	ASSERT_EQ(smb_frag_next(&it, &f), -EBADMSG);

	/* More packets claimed than there are fragments: the third header lands
	 * in zeros (size 0, fine) ... and the count runs off the end. */
	put_chunk_header(chunk, 9, 3, 3, 0);
	pz_write_redundant_varint(chunk + 22, 292 - 26);
	ASSERT_EQ(smb_chunk_parse(&it, chunk, sizeof(chunk)), 0);
	ASSERT_EQ(smb_frag_next(&it, &f), 1);
	ASSERT_EQ(smb_frag_next(&it, &f), 1);
	ASSERT_EQ(smb_frag_next(&it, &f), -EBADMSG);

	/* A count the payload could never hold. */
	put_chunk_header(chunk, 9, 3, 1023, 0);
	ASSERT_EQ(smb_chunk_parse(&it, chunk, sizeof(chunk)), -EBADMSG);
	/* Writer 0 or 1024, a truncated header. */
	put_chunk_header(chunk, 9, 0, 1, 0);
	ASSERT_EQ(smb_chunk_parse(&it, chunk, sizeof(chunk)), -EBADMSG);
	put_chunk_header(chunk, 9, 1024, 1, 0);
	ASSERT_EQ(smb_chunk_parse(&it, chunk, sizeof(chunk)), -EBADMSG);
	/* Flag bits from a newer producer are ignored, not fatal. */
	put_chunk_header(chunk, 9, 3, 1, 0x8 | SMB_CHUNK_LAST_CONTINUES);
	ASSERT_EQ(smb_chunk_parse(&it, chunk, sizeof(chunk)), 0);
	ASSERT_EQ(it.info.flags, SMB_CHUNK_LAST_CONTINUES);
	ASSERT_EQ(smb_chunk_parse(&it, chunk, 7), -EBADMSG);

	/* The writer's "drop this packet" marker ends the chunk. */
	put_chunk_header(chunk, 9, 3, 2, 0);
	pz_write_redundant_varint(chunk + 8, 10);
	pz_write_redundant_varint(chunk + 22, SMB_PACKET_SIZE_DROP);
	ASSERT_EQ(smb_chunk_parse(&it, chunk, sizeof(chunk)), 0);
	ASSERT_EQ(smb_frag_next(&it, &f), 1);
	ASSERT_EQ(smb_frag_next(&it, &f), 1);
	ASSERT_TRUE(f.is_dropped);
	ASSERT_EQ(smb_frag_next(&it, &f), 0);

	/* A short (1-byte) varint size is accepted, as Perfetto's reader does. */
	put_chunk_header(chunk, 9, 3, 1, 0);
	chunk[8] = 5;
	ASSERT_EQ(smb_chunk_parse(&it, chunk, sizeof(chunk)), 0);
	ASSERT_EQ(smb_frag_next(&it, &f), 1);
	ASSERT_EQ(f.size, 5);
	ASSERT_TRUE(f.data == chunk + 9);
}

/* Random bytes in exactly-sized heap blocks (ASan sees any overread); every
 * fragment handed out must lie inside the chunk. */
TEST(validation_fragment_parser_survives_random_chunks)
{
	uint32_t x = 12345;
	int round, n_ok = 0;

	for (round = 0; round < 20000; round++) {
		size_t size = 8 + (x = x * 1103515245 + 12345) % 600, i;
		uint8_t *chunk = malloc(size);
		struct smb_frag_iter it;
		struct smb_frag f;

		ASSERT_TRUE(chunk != NULL);
		for (i = 0; i < size; i++) {
			x = x * 1103515245 + 12345;
			/* Mostly small sizes so that some chunks parse. */
			chunk[i] = (uint8_t)(i >= 8 && (x >> 16) % 4 ? (x >> 20) % 16 : x >> 24);
		}
		chunk[4] = 1;
		chunk[5] = 0;
		chunk[7] &= 0x3;
		if (smb_chunk_parse(&it, chunk, size) == 0) {
			while (smb_frag_next(&it, &f) == 1) {
				ASSERT_TRUE(f.data >= chunk + 8 && f.data <= chunk + size);
				ASSERT_TRUE(f.is_dropped || f.size <= (size_t)(chunk + size - f.data));
				n_ok++;
			}
		}
		free(chunk);
	}
	ASSERT_GT(n_ok, 1000);
}

/* ------------------------------------------------ shm ---- */

TEST(shm_memfd_is_sealed_and_maps_by_fd)
{
	struct shm *a = NULL, *b = NULL;
	int seals, fd;

	ASSERT_EQ(shm_create(64 * 1024, 4096, &a), 0);
	ASSERT_EQ(a->size, 64 * 1024);
	seals = fcntl(a->fd, F_GET_SEALS);
	if (seals < 0)
		SKIP("no memfd seals here (O_TMPFILE fallback)");
	ASSERT_EQ(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
		  F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
	ASSERT_TRUE(ftruncate(a->fd, 4096) < 0);
	ASSERT_EQ(fcntl(a->fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);

	fd = dup(a->fd);
	ASSERT_EQ(shm_map_fd(fd, 64 * 1024, 4096, SHM_MAP_REQUIRE_SEALS, &b), 0);
	a->base[5000] = 0x5a;
	ASSERT_EQ(b->base[5000], 0x5a);
	shm_destroy(b);
	shm_destroy(a);
	shm_destroy(NULL);
}

TEST(shm_map_rejects_wrong_sizes)
{
	struct shm *a = NULL, *b = NULL;
	char path[512];
	int fd;

	ASSERT_EQ(shm_create(64 * 1024, 4096, &a), 0);
	/* Not what SetupTracing announced. */
	ASSERT_EQ(shm_map_fd(dup(a->fd), 128 * 1024, 4096, 0, &b), -EINVAL);
	ASSERT_EQ(shm_map_fd(dup(a->fd), 32 * 1024, 4096, 0, &b), -EINVAL);
	/* Fine for any size, but not with 48 KiB pages (not a power of two
	 * multiple) or 3 KiB pages. */
	ASSERT_EQ(shm_map_fd(dup(a->fd), 0, 16384, 0, &b), 0);
	shm_destroy(b);
	ASSERT_EQ(shm_map_fd(dup(a->fd), 0, 3072, 0, &b), -EINVAL);
	ASSERT_EQ(shm_map_fd(-1, 0, 4096, 0, &b), -EBADF);
	shm_destroy(a);

	/* A plain file of an odd size, and one that is not sealed. */
	snprintf(path, sizeof(path), "%s/smb", test_tmpdir());
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(ftruncate(fd, 5000), 0);
	ASSERT_EQ(shm_map_fd(fd, 0, 4096, 0, &b), -EINVAL);
	fd = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_EQ(ftruncate(fd, 3 * 4096), 0);
	ASSERT_EQ(shm_map_fd(fd, 0, 4096, 0, &b), -EINVAL);
	fd = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_EQ(ftruncate(fd, 4 * 4096), 0);
	ASSERT_EQ(shm_map_fd(fd, 0, 4096, SHM_MAP_REQUIRE_SEALS, &b), -EINVAL);
	fd = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_EQ(shm_map_fd(fd, 4 * 4096, 4096, 0, &b), 0);
	shm_destroy(b);

	ASSERT_EQ(shm_check_size(SHM_MAX_SIZE_BYTES, 4096), 0);
	ASSERT_EQ(shm_check_size(2 * SHM_MAX_SIZE_BYTES, 4096), -EINVAL);
	ASSERT_EQ(shm_check_size(3 * 4096, 4096), -EINVAL);
	ASSERT_EQ(shm_check_size(128 * 1024, 128 * 1024), -EINVAL);
	ASSERT_EQ(shm_create(3 * 4096, 4096, &b), -EINVAL);
	ASSERT_EQ(shm_create_private(SHM_EMULATION_SIZE_BYTES, 4096, &b), 0);
	ASSERT_EQ(b->fd, -1);
	ASSERT_EQ(b->base[SHM_EMULATION_SIZE_BYTES - 1], 0);
	shm_destroy(b);
}

/* ------------------------------------------------ writer ids ---- */

TEST(arbiter_writer_ids_are_1_to_1023)
{
	struct fixture fx;
	int id, i;

	fixture_init(&fx, 16 * 4096, 4096, SMB_LAYOUT_DIV1, false, false);
	for (i = 1; i <= (int)SMB_MAX_WRITER_ID; i++) {
		id = arb_writer_id_alloc(fx.arb);
		ASSERT_EQ(id, i);
	}
	ASSERT_EQ(arb_writer_id_alloc(fx.arb), -EBUSY);
	arb_writer_id_free(fx.arb, 7);
	ASSERT_EQ(arb_writer_id_alloc(fx.arb), 7);
	arb_writer_id_free(fx.arb, 0);
	fixture_fini(&fx);
}

/* ------------------------------------------------ trace writer ---- */

TEST(writer_one_thread_small_packets)
{
	struct tw_config twc = {.target_buffer = 3, .policy = ARB_FULL_STALL};
	struct trace_writer *tw;
	struct fixture fx;
	uint8_t scratch[64];
	struct tw_stats st;
	unsigned i;

	fixture_init(&fx, 16 * 4096, 4096, SMB_LAYOUT_DIV4, false, false);
	ASSERT_EQ(tw_create(fx.arb, &twc, &tw), 0);
	ASSERT_EQ(tw_writer_id(tw), 1);
	for (i = 0; i < 5000; i++)
		write_packet(tw, 11, i, 10, scratch);
	tw_get_stats(tw, &st);
	tw_destroy(tw);
	ASSERT_EQ(fx.sim.errors, 0);
	ASSERT_EQ(st.packets_written, 5000);
	ASSERT_EQ(st.packets_dropped, 0);
	/* tw_destroy() returned the last chunk after the stats were taken. */
	ASSERT_EQ(fx.sim.n_moves, st.chunks_committed + 1);
	sim_reassemble(&fx.sim);
	ASSERT_EQ(fx.sim.errors, 0);
	ASSERT_EQ(fx.sim.n_gaps, 0);
	check_writer_packets(&fx.sim, 1, 11, NULL, 5000);
	/* Everything was freed by the service. */
	for (i = 0; i < 16; i++)
		ASSERT_TRUE(smb_page_is_free(arb_smb(fx.arb), i));
	fixture_fini(&fx);
}

TEST(writer_max_packets_per_chunk)
{
	struct tw_config twc = {0};
	struct trace_writer *tw;
	struct fixture fx;
	size_t i;

	fixture_init(&fx, 4 * 32768, 32768, SMB_LAYOUT_DIV1, false, false);
	ASSERT_EQ(tw_create(fx.arb, &twc, &tw), 0);
	for (i = 0; i < 3000; i++)
		tw_new_packet(tw); /* empty packets: 4 bytes each */
	tw_destroy(tw);
	for (i = 0; i < fx.sim.n_chunks; i++) {
		struct smb_frag_iter it;

		ASSERT_EQ(smb_chunk_parse(&it, fx.sim.chunks[i].bytes, fx.sim.chunks[i].size), 0);
		ASSERT_LE(it.info.n_packets, SMB_MAX_PACKETS_PER_CHUNK);
	}
	ASSERT_EQ(fx.sim.n_chunks, 3);
	sim_reassemble(&fx.sim);
	ASSERT_EQ(fx.sim.n_packets, 3000);
	ASSERT_EQ(fx.sim.errors, 0);
	fixture_fini(&fx);
}

static void run_sizes(const size_t *lens, size_t n, size_t smb_size, enum smb_layout layout,
		      bool is_emulation, struct fixture *fx)
{
	struct tw_config twc = {.target_buffer = 1, .policy = ARB_FULL_STALL,
				.stall_timeout_ms = 5000};
	struct trace_writer *tw;
	size_t i, max = 0;
	uint8_t *scratch;
	struct tw_stats st;

	for (i = 0; i < n; i++)
		max = lens[i] > max ? lens[i] : max;
	scratch = malloc(max + 1);
	ASSERT_TRUE(scratch != NULL);
	fixture_init(fx, smb_size, 4096, layout, is_emulation, false);
	ASSERT_EQ(tw_create(fx->arb, &twc, &tw), 0);
	for (i = 0; i < n; i++)
		write_packet(tw, 5, (unsigned)i, lens[i], scratch);
	tw_get_stats(tw, &st);
	tw_destroy(tw);
	free(scratch);
	ASSERT_EQ(st.packets_dropped, 0);
	ASSERT_EQ(fx->sim.errors, 0);
	sim_reassemble(&fx->sim);
	ASSERT_EQ(fx->sim.errors, 0);
	ASSERT_EQ(fx->sim.n_gaps, 0);
	ASSERT_EQ(fx->sim.n_discarded, 0);
	check_writer_packets(&fx->sim, 1, 5, lens, n);
}

TEST(writer_packet_sizes_up_to_larger_than_the_smb)
{
	/* 10 bytes; a chunk's payload + 1 byte (the encoded packet is a bit
	 * larger still); 3 pages; 200 KiB through a 64 KiB SMB; then small
	 * packets again to check the writer recovers its framing. */
	const size_t lens[] = {10, 4080 + 1, 3 * 4096, 200 * 1024, 10, 4070, 4071, 4072, 1, 0};
	struct fixture fx;

	run_sizes(lens, PFC_ARRAY_SIZE(lens), 64 * 1024, SMB_LAYOUT_DIV1, false, &fx);
	/* A 200 KiB packet through a 64 KiB SMB needs the service to free
	 * chunks while it is written. */
	ASSERT_GT(fx.sim.n_moves, 16);
	fixture_fini(&fx);
}

TEST(writer_packet_sizes_small_chunks)
{
	size_t lens[300];
	struct fixture fx;
	size_t i;

	for (i = 0; i < PFC_ARRAY_SIZE(lens); i++)
		lens[i] = (i * 7919) % 1500;
	run_sizes(lens, PFC_ARRAY_SIZE(lens), 8 * 4096, SMB_LAYOUT_DIV14, false, &fx);
	fixture_fini(&fx);
}

struct writer_thread {
	struct arbiter *arb;
	unsigned tag;
	unsigned n_packets;
	uint16_t writer_id;
	size_t *lens;
};

static void *writer_main(void *arg)
{
	struct writer_thread *t = arg;
	struct tw_config twc = {.target_buffer = 2, .policy = ARB_FULL_STALL};
	struct trace_writer *tw;
	uint8_t *scratch = malloc(8192);
	unsigned i;

	if (!scratch || tw_create(t->arb, &twc, &tw) < 0)
		abort();
	t->writer_id = tw_writer_id(tw);
	for (i = 0; i < t->n_packets; i++) {
		t->lens[i] = (i * 2654435761u + t->tag * 97) % (i % 50 == 0 ? 8000 : 300);
		write_packet(tw, t->tag, i, t->lens[i], scratch);
		if (i % 1000 == 999)
			tw_flush(tw);
	}
	tw_destroy(tw);
	free(scratch);
	return NULL;
}

static void run_threads(bool is_emulation, bool batch)
{
	enum { N_THREADS = 4, N_PACKETS = 3000 };
	struct writer_thread th[N_THREADS];
	pthread_t tid[N_THREADS];
	struct fixture fx;
	size_t i;

	fixture_init(&fx, is_emulation ? SHM_EMULATION_SIZE_BYTES : 64 * 1024, 4096,
		     SMB_LAYOUT_DIV4, is_emulation, batch);
	for (i = 0; i < N_THREADS; i++) {
		th[i].arb = fx.arb;
		th[i].tag = (unsigned)(100 + i);
		th[i].n_packets = N_PACKETS;
		th[i].lens = calloc(N_PACKETS, sizeof(size_t));
		ASSERT_EQ(pthread_create(&tid[i], NULL, writer_main, &th[i]), 0);
	}
	for (i = 0; i < N_THREADS; i++)
		pthread_join(tid[i], NULL);
	ASSERT_EQ(fx.sim.errors, 0);
	sim_reassemble(&fx.sim);
	ASSERT_EQ(fx.sim.errors, 0);
	ASSERT_EQ(fx.sim.n_gaps, 0);
	ASSERT_EQ(fx.sim.n_packets, N_THREADS * N_PACKETS);
	for (i = 0; i < N_THREADS; i++) {
		check_writer_packets(&fx.sim, th[i].writer_id, th[i].tag, th[i].lens, N_PACKETS);
		free(th[i].lens);
	}
	ASSERT_LT(fx.sim.max_packed, ARB_MAX_COMMIT_BYTES);
	fixture_fini(&fx);
}

TEST(writer_four_threads_smb)
{
	run_threads(false, false);
}

TEST(writer_four_threads_smb_batched)
{
	run_threads(false, true);
}

TEST(writer_four_threads_emulation)
{
	run_threads(true, true);
}

/* A packet whose nested messages stay open across many chunks. */
TEST(writer_nested_messages_spanning_chunks_are_patched)
{
	struct tw_config twc = {.target_buffer = 0};
	struct trace_writer *tw;
	struct fixture fx;
	struct pz_msg *root, ev, pl, n1, n2;
	static uint8_t big[5000];
	struct pz_reader r;
	struct pz_field f, slots[16], pslots[8], n1slots[8], n2slots[8];
	size_t i, n_patch_flagged = 0;
	int64_t small;

	for (i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 3);
	/* Div14: 292-byte chunks, so every message spans several of them. */
	fixture_init(&fx, 16 * 4096, 4096, SMB_LAYOUT_DIV14, false, false);
	ASSERT_EQ(tw_create(fx.arb, &twc, &tw), 0);
	for (small = 0; small < 3; small++) {
		root = tw_new_packet(tw);
		pz_append_varint(root, PB_TRACE_PACKET__TIMESTAMP, 42);
		pz_begin_nested(root, PB_TRACE_PACKET__FOR_TESTING, &ev);
		pz_append_string(&ev, PB_TEST_EVENT__STR, "outer");
		pz_begin_nested(&ev, PB_TEST_EVENT__PAYLOAD, &pl);
		pz_begin_nested(&pl, PB_TEST_EVENT_TEST_PAYLOAD__NESTED, &n1);
		pz_append_bytes(&n1, PB_TEST_EVENT_TEST_PAYLOAD__STR, big, 1000);
		pz_begin_nested(&n1, PB_TEST_EVENT_TEST_PAYLOAD__NESTED, &n2);
		pz_append_bytes(&n2, PB_TEST_EVENT_TEST_PAYLOAD__STR, big, sizeof(big));
		pz_append_varint(&n2, PB_TEST_EVENT_TEST_PAYLOAD__SINGLE_INT, 7);
		pz_end(&n2);
		pz_append_varint(&n1, PB_TEST_EVENT_TEST_PAYLOAD__SINGLE_INT, 8);
		/* n1 and pl end with the packet. */
		pz_append_varint(&pl, PB_TEST_EVENT_TEST_PAYLOAD__SINGLE_INT, 9 + small);
		pz_end(&ev);
		pz_append_varint(root, PB_TRACE_PACKET__TIMESTAMP_CLOCK_ID, 6);
	}
	tw_destroy(tw);
	ASSERT_EQ(fx.sim.errors, 0);
	ASSERT_GT(fx.sim.n_patches, 0);
	for (i = 0; i < fx.sim.n_chunks; i++)
		n_patch_flagged += fx.sim.chunks[i].needs_patching;
	ASSERT_GT(n_patch_flagged, 0);
	ASSERT_EQ(fx.sim.n_final_patches, n_patch_flagged);
	sim_reassemble(&fx.sim);
	ASSERT_EQ(fx.sim.errors, 0);
	ASSERT_EQ(fx.sim.n_packets, 3);

	for (small = 0; small < 3; small++) {
		const struct sim_packet *p = &fx.sim.packets[small];

		ASSERT_EQ(pz_decode_table(p->data, p->len, slots, 9), PZ_OK);
		ASSERT_EQ(slots[PB_TRACE_PACKET__TIMESTAMP].value, 42);
		/* for_testing is field 900: find it by hand. */
		pz_reader_init(&r, p->data, p->len);
		while (pz_reader_next(&r, &f) == 1 && f.id != PB_TRACE_PACKET__FOR_TESTING)
			;
		ASSERT_EQ(f.id, PB_TRACE_PACKET__FOR_TESTING);
		ASSERT_EQ(pz_decode_table(f.data, f.size, slots, 8), PZ_OK);
		ASSERT_EQ(slots[PB_TEST_EVENT__STR].size, 5);
		ASSERT_EQ(pz_decode_table(slots[PB_TEST_EVENT__PAYLOAD].data,
					  slots[PB_TEST_EVENT__PAYLOAD].size, pslots, 8),
			  PZ_OK);
		ASSERT_EQ(pslots[PB_TEST_EVENT_TEST_PAYLOAD__SINGLE_INT].value, 9 + small);
		ASSERT_EQ(pz_decode_table(pslots[PB_TEST_EVENT_TEST_PAYLOAD__NESTED].data,
					  pslots[PB_TEST_EVENT_TEST_PAYLOAD__NESTED].size, n1slots,
					  8),
			  PZ_OK);
		ASSERT_EQ(n1slots[PB_TEST_EVENT_TEST_PAYLOAD__STR].size, 1000);
		ASSERT_EQ(n1slots[PB_TEST_EVENT_TEST_PAYLOAD__SINGLE_INT].value, 8);
		ASSERT_EQ(pz_decode_table(n1slots[PB_TEST_EVENT_TEST_PAYLOAD__NESTED].data,
					  n1slots[PB_TEST_EVENT_TEST_PAYLOAD__NESTED].size, n2slots,
					  8),
			  PZ_OK);
		ASSERT_EQ(n2slots[PB_TEST_EVENT_TEST_PAYLOAD__STR].size, sizeof(big));
		ASSERT_MEMEQ(n2slots[PB_TEST_EVENT_TEST_PAYLOAD__STR].data, big, sizeof(big));
		ASSERT_EQ(n2slots[PB_TEST_EVENT_TEST_PAYLOAD__SINGLE_INT].value, 7);
	}
	fixture_fini(&fx);
}

TEST(writer_emulation_copies_whole_chunks_under_the_commit_limit)
{
	struct tw_config twc = {.target_buffer = 4};
	struct trace_writer *tw;
	struct fixture fx;
	uint8_t scratch[3000];
	size_t lens[4000];
	unsigned i;

	fixture_init(&fx, SHM_EMULATION_SIZE_BYTES, 4096, SMB_LAYOUT_DIV1, true, true);
	ASSERT_EQ(tw_create(fx.arb, &twc, &tw), 0);
	for (i = 0; i < 4000; i++) {
		lens[i] = (i * 37) % 2500;
		write_packet(tw, 9, i, lens[i], scratch);
	}
	/* Batched: no commit has gone out until the batch fills up. */
	ASSERT_GT(fx.sim.n_commits, 0);
	tw_flush(tw);
	ASSERT_EQ(arb_flush(fx.arb, 77), 0);
	ASSERT_EQ(fx.sim.last_flush_id, 77);
	/* Every chunk was freed locally after being copied. */
	for (i = 0; i < 256; i++)
		ASSERT_TRUE(smb_page_is_free(arb_smb(fx.arb), i));
	tw_destroy(tw);
	ASSERT_EQ(fx.sim.errors, 0);
	ASSERT_EQ(fx.sim.n_moves_with_data, fx.sim.n_moves);
	for (i = 0; i < fx.sim.n_chunks; i++)
		ASSERT_EQ(fx.sim.chunks[i].size, 4088);
	/* Several chunks per commit, each commit under 128 KiB - 512. */
	ASSERT_LT(fx.sim.n_commits, fx.sim.n_moves);
	ASSERT_GT(fx.sim.max_packed, 64 * 1024);
	ASSERT_LE(fx.sim.max_packed, ARB_MAX_COMMIT_BYTES);
	sim_reassemble(&fx.sim);
	ASSERT_EQ(fx.sim.errors, 0);
	check_writer_packets(&fx.sim, 1, 9, lens, 4000);
	fixture_fini(&fx);
}

TEST(writer_flush_commits_a_partial_chunk)
{
	struct tw_config twc = {0};
	struct trace_writer *tw;
	struct fixture fx;
	uint8_t scratch[16];
	struct smb_frag_iter it;

	fixture_init(&fx, 16 * 4096, 4096, SMB_LAYOUT_DIV1, false, true);
	ASSERT_EQ(tw_create(fx.arb, &twc, &tw), 0);
	write_packet(tw, 1, 0, 10, scratch);
	write_packet(tw, 1, 1, 10, scratch);
	ASSERT_EQ(fx.sim.n_commits, 0);
	tw_flush(tw);
	ASSERT_EQ(fx.sim.n_commits, 1);
	ASSERT_EQ(fx.sim.n_chunks, 1);
	ASSERT_EQ(smb_chunk_parse(&it, fx.sim.chunks[0].bytes, fx.sim.chunks[0].size), 0);
	ASSERT_EQ(it.info.n_packets, 2);
	ASSERT_EQ(it.info.flags, 0);
	ASSERT_EQ(arb_flush(fx.arb, 5), 0);
	ASSERT_EQ(fx.sim.n_commits, 2);
	ASSERT_EQ(fx.sim.last_flush_id, 5);
	write_packet(tw, 1, 2, 10, scratch);
	tw_destroy(tw);
	sim_reassemble(&fx.sim);
	ASSERT_EQ(fx.sim.n_gaps, 0);
	check_writer_packets(&fx.sim, 1, 1, NULL, 3);
	fixture_fini(&fx);
}

static bool has_previous_packet_dropped(const struct sim_packet *p)
{
	struct pz_reader r;
	struct pz_field f;

	pz_reader_init(&r, p->data, p->len);
	while (pz_reader_next(&r, &f) == 1)
		if (f.id == PB_TRACE_PACKET__PREVIOUS_PACKET_DROPPED && f.value)
			return true;
	return false;
}

TEST(writer_smb_full_drop_policy_loses_data_visibly)
{
	struct tw_config twc = {.policy = ARB_FULL_DROP};
	struct trace_writer *tw;
	struct fixture fx;
	uint8_t scratch[3000];
	struct tw_stats st;
	struct arb_stats as;
	size_t i, n_seen, lens[400];
	int prev = -1, seq;

	/* 4 chunks; a slow service that frees nothing until told to. */
	fixture_init(&fx, 4 * 4096, 4096, SMB_LAYOUT_DIV1, false, false);
	fx.sim.is_slow = true;
	ASSERT_EQ(tw_create(fx.arb, &twc, &tw), 0);
	for (i = 0; i < 200; i++) {
		lens[i] = 300 + (i % 3) * 1000;
		write_packet(tw, 3, (unsigned)i, lens[i], scratch);
	}
	tw_get_stats(tw, &st);
	ASSERT_GT(st.packets_dropped, 0);
	/* The service catches up; the writer gets chunks again. */
	sim_drain(&fx.sim);
	for (; i < 400; i++) {
		lens[i] = 300;
		write_packet(tw, 3, (unsigned)i, lens[i], scratch);
		if (i % 20 == 0)
			sim_drain(&fx.sim);
	}
	tw_get_stats(tw, &st);
	tw_destroy(tw);
	sim_drain(&fx.sim);
	arb_get_stats(fx.arb, &as);
	ASSERT_GT(as.chunks_dropped, 0);
	ASSERT_EQ(fx.sim.errors, 0);
	sim_reassemble(&fx.sim);
	ASSERT_EQ(fx.sim.errors, 0);
	/* The loss shows as a chunk id gap and a marked packet... */
	ASSERT_GT(fx.sim.n_gaps, 0);
	/* ...and a packet cut off by the drop was marked for discarding. */
	ASSERT_GT(fx.sim.n_dropped_frags, 0);
	/* Whatever arrived is intact, in order, and flagged after each gap. */
	n_seen = 0;
	for (i = 0; i < fx.sim.n_packets; i++) {
		size_t len;

		seq = check_packet(&fx.sim.packets[i], 3, &len);
		ASSERT_GT(seq, prev);
		ASSERT_EQ(len, lens[seq]);
		ASSERT_EQ(has_previous_packet_dropped(&fx.sim.packets[i]), seq != prev + 1);
		prev = seq;
		n_seen++;
	}
	ASSERT_EQ(prev, 399);
	ASSERT_EQ(n_seen + st.packets_dropped, 400);
	fixture_fini(&fx);
}

/* Emulation: chunks stay taken until their commit has left the process, so
 * a slow link makes writers run out of chunks (and drop, counted) instead of
 * the producer dropping whole commits it has no room to queue. */
TEST(writer_emulation_chunks_held_until_sent)
{
	struct tw_config twc = {.policy = ARB_FULL_DROP};
	struct trace_writer *tw;
	struct fixture fx;
	uint8_t scratch[3000];
	struct tw_stats st;
	struct arb_stats as;
	size_t i;

	fixture_init(&fx, 4 * 4096, 4096, SMB_LAYOUT_DIV1, true, false);
	fx.sim.is_slow = true;
	ASSERT_EQ(tw_create(fx.arb, &twc, &tw), 0);
	for (i = 0; i < 40; i++)
		write_packet(tw, 5, (unsigned)i, 2000, scratch);
	tw_get_stats(tw, &st);
	arb_get_stats(fx.arb, &as);
	ASSERT_GT(st.packets_dropped, 0);
	ASSERT_GT(as.chunks_dropped, 0);
	/* Sent: the chunks are free again and writing resumes. */
	sim_drain(&fx.sim);
	ASSERT_EQ(fx.sim.errors, 0);
	for (i = 40; i < 42; i++)
		write_packet(tw, 5, (unsigned)i, 500, scratch);
	tw_destroy(tw);
	sim_drain(&fx.sim);
	ASSERT_EQ(fx.sim.errors, 0);
	sim_reassemble(&fx.sim);
	ASSERT_EQ(fx.sim.errors, 0);
	ASSERT_GT(fx.sim.n_gaps, 0);
	{
		size_t len;

		ASSERT_EQ(check_packet(&fx.sim.packets[fx.sim.n_packets - 1], 5, &len), 41);
	}
	fixture_fini(&fx);
}

TEST(writer_smb_full_stall_policy_times_out)
{
	struct tw_config twc = {.policy = ARB_FULL_STALL, .stall_timeout_ms = 30};
	struct trace_writer *tw;
	struct fixture fx;
	uint8_t scratch[3000];
	struct arb_stats as;
	struct tw_stats st;
	size_t i;

	fixture_init(&fx, 4 * 4096, 4096, SMB_LAYOUT_DIV1, false, true);
	fx.sim.is_slow = true;
	ASSERT_EQ(tw_create(fx.arb, &twc, &tw), 0);
	for (i = 0; i < 20; i++)
		write_packet(tw, 3, (unsigned)i, 2000, scratch);
	arb_get_stats(fx.arb, &as);
	tw_get_stats(tw, &st);
	ASSERT_GT(as.stalls, 0);
	/* Stalling made the arbiter commit its batch so the service could help. */
	ASSERT_GT(fx.sim.n_commits, 0);
	ASSERT_GT(st.packets_dropped, 0);
	sim_drain(&fx.sim);
	tw_destroy(tw);
	sim_drain(&fx.sim);
	ASSERT_EQ(fx.sim.errors, 0);
	fixture_fini(&fx);
}

/* Every residue of "bytes left in the chunk" when a nested message starts,
 * including fewer than the 4 bytes its size field needs. */
TEST(writer_nested_message_at_every_chunk_offset)
{
	struct tw_config twc = {0};
	struct trace_writer *tw;
	struct fixture fx;
	static uint8_t pad[400];
	struct pz_msg *root, a, b;
	struct pz_field top[64], as[16], bs[16];
	size_t i;

	fixture_init(&fx, 8 * 4096, 4096, SMB_LAYOUT_DIV14, false, false);
	ASSERT_EQ(tw_create(fx.arb, &twc, &tw), 0);
	for (i = 0; i < 600; i++) {
		root = tw_new_packet(tw);
		pz_append_bytes(root, PB_TRACE_PACKET__SYNCHRONIZATION_MARKER, pad, i % 300);
		pz_begin_nested(root, PB_TRACE_PACKET__CLOCK_SNAPSHOT, &a);
		pz_begin_nested(&a, 1, &b);
		pz_append_varint(&b, 1, i);
		pz_append_bytes(&b, 2, pad, (i * 7) % 200);
		pz_end(&b);
		pz_append_varint(&a, 3, i + 1);
	}
	tw_destroy(tw);
	ASSERT_EQ(fx.sim.errors, 0);
	sim_reassemble(&fx.sim);
	ASSERT_EQ(fx.sim.errors, 0);
	ASSERT_EQ(fx.sim.n_packets, 600);
	for (i = 0; i < 600; i++) {
		const struct sim_packet *p = &fx.sim.packets[i];

		ASSERT_EQ(pz_decode_table(p->data, p->len, top, 64), PZ_OK);
		ASSERT_EQ(top[PB_TRACE_PACKET__SYNCHRONIZATION_MARKER].size, i % 300);
		ASSERT_EQ(pz_decode_table(top[PB_TRACE_PACKET__CLOCK_SNAPSHOT].data,
					  top[PB_TRACE_PACKET__CLOCK_SNAPSHOT].size, as, 16),
			  PZ_OK);
		ASSERT_EQ(as[3].value, i + 1);
		ASSERT_EQ(pz_decode_table(as[1].data, as[1].size, bs, 16), PZ_OK);
		ASSERT_EQ(bs[1].value, i);
		ASSERT_EQ(bs[2].size, (i * 7) % 200);
	}
	fixture_fini(&fx);
}

/* More open nested messages crossing chunks than the writer has patch slots:
 * that packet is dropped cleanly and the next one is intact. */
TEST(writer_patch_slot_exhaustion_drops_one_packet)
{
	enum { DEPTH = 300 };
	struct tw_config twc = {0};
	struct trace_writer *tw;
	struct fixture fx;
	static struct pz_msg msgs[DEPTH];
	struct pz_msg *root;
	uint8_t scratch[16];
	struct tw_stats st;
	size_t i, len;

	fixture_init(&fx, 8 * 4096, 4096, SMB_LAYOUT_DIV14, false, false);
	ASSERT_EQ(tw_create(fx.arb, &twc, &tw), 0);
	write_packet(tw, 2, 0, 10, scratch);
	root = tw_new_packet(tw);
	pz_begin_nested(root, PB_TRACE_PACKET__FOR_TESTING, &msgs[0]);
	for (i = 1; i < DEPTH; i++) {
		pz_append_varint(&msgs[i - 1], PB_TEST_EVENT__COUNTER, i);
		pz_begin_nested(&msgs[i - 1], PB_TEST_EVENT__PAYLOAD, &msgs[i]);
	}
	tw_finish_packet(tw);
	write_packet(tw, 2, 1, 10, scratch);
	tw_get_stats(tw, &st);
	tw_destroy(tw);
	ASSERT_EQ(st.packets_dropped, 1);
	ASSERT_EQ(fx.sim.errors, 0);
	sim_reassemble(&fx.sim);
	ASSERT_EQ(fx.sim.errors, 0);
	ASSERT_EQ(fx.sim.n_dropped_frags, 1);
	ASSERT_EQ(fx.sim.n_packets, 2);
	ASSERT_EQ(check_packet(&fx.sim.packets[0], 2, &len), 0);
	ASSERT_EQ(check_packet(&fx.sim.packets[1], 2, &len), 1);
	ASSERT_TRUE(has_previous_packet_dropped(&fx.sim.packets[1]));
	fixture_fini(&fx);
}

struct sched_ctx {
	struct sim sim; /* first: sim_commit() gets the same pointer */
	int n_scheduled;
};

static void count_schedule(void *user)
{
	((struct sched_ctx *)user)->n_scheduled++;
}

TEST(arbiter_batching_schedules_once_and_commits_on_demand)
{
	struct sched_ctx ctx;
	struct arb_config cfg = {0};
	struct tw_config twc = {0};
	struct trace_writer *tw;
	struct arbiter *arb;
	struct shm *shm;
	uint8_t scratch[6000];
	unsigned i;

	memset(&ctx, 0, sizeof(ctx));
	ASSERT_EQ(shm_create(64 * 4096, 4096, &shm), 0);
	cfg.smb_base = shm->base;
	cfg.smb_size = shm->size;
	cfg.page_size = 4096;
	cfg.batch_commits = true;
	cfg.schedule_cb = count_schedule;
	cfg.user = &ctx;
	ASSERT_EQ(arb_create(&cfg, &arb), -EINVAL); /* no commit_cb */
	cfg.commit_cb = sim_commit;
	ASSERT_EQ(arb_create(&cfg, &arb), 0);
	ctx.sim.smb = arb_smb(arb);
	ASSERT_EQ(tw_create(arb, &twc, &tw), 0);
	for (i = 0; i < 10; i++)
		write_packet(tw, 4, i, 3000, scratch);
	ASSERT_EQ(ctx.sim.n_commits, 0);
	ASSERT_EQ(ctx.n_scheduled, 1);
	arb_commit_pending(arb);
	ASSERT_EQ(ctx.sim.n_commits, 1);
	ASSERT_GE(ctx.sim.n_moves, 6);
	arb_commit_pending(arb); /* nothing pending: no empty commit */
	ASSERT_EQ(ctx.sim.n_commits, 1);
	write_packet(tw, 4, 10, 5000, scratch);
	ASSERT_EQ(ctx.n_scheduled, 2);
	tw_destroy(tw);
	arb_destroy(arb);
	shm_destroy(shm);
	sim_reassemble(&ctx.sim);
	ASSERT_EQ(ctx.sim.errors, 0);
	check_writer_packets(&ctx.sim, 1, 4, NULL, 11);
	sim_fini(&ctx.sim);
}

/* ------------------------------------------------ fake ProducerPort ---- */

#define FAKE_SMB_BYTES (64u * 1024)
#define FAKE_PAGE_BYTES 4096u

struct fake_svc {
	struct evloop *loop;
	struct ipc_host *host;
	char sock_name[128];
	struct shm *shm; /* the service's SMB, shared with the producer */
	struct smb smb;
	struct sim sim;
	struct ipc_call cmd_call;
	bool has_cmd_call;
	char producer_name[64];
	char sdk_version[64];
	char ds_name[64];
	bool ds_notify_on_stop;
	size_t n_init, n_ds, n_writers, n_unreg_writers, n_started, n_stopped, n_flush_acks;
	size_t n_triggers, n_syncs, n_commit_requests;
	uint32_t writer_ids[64];
	uint32_t writer_targets[64];
	uint64_t last_notified;
	char trigger[64];
};

static void copy_str(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

static void fp_init(struct ipc_host *h, const struct ipc_call *call, const ProtobufCMessage *args,
		    void *user)
{
	const Perfetto__Protos__InitializeConnectionRequest *req = (const void *)args;
	Perfetto__Protos__InitializeConnectionResponse resp =
		PERFETTO__PROTOS__INITIALIZE_CONNECTION_RESPONSE__INIT;
	struct fake_svc *f = user;

	f->n_init++;
	copy_str(f->producer_name, sizeof(f->producer_name), req->producer_name);
	copy_str(f->sdk_version, sizeof(f->sdk_version), req->sdk_version);
	if (ipc_host_use_shmem_emulation(h)) {
		resp.has_use_shmem_emulation = true;
		resp.use_shmem_emulation = true;
	}
	ipc_host_reply(h, call, &resp.base, false, -1);
}

static void fp_register_ds(struct ipc_host *h, const struct ipc_call *call,
			   const ProtobufCMessage *args, void *user)
{
	const Perfetto__Protos__RegisterDataSourceRequest *req = (const void *)args;
	Perfetto__Protos__RegisterDataSourceResponse resp =
		PERFETTO__PROTOS__REGISTER_DATA_SOURCE_RESPONSE__INIT;
	struct fake_svc *f = user;

	f->n_ds++;
	if (req->data_source_descriptor) {
		copy_str(f->ds_name, sizeof(f->ds_name), req->data_source_descriptor->name);
		f->ds_notify_on_stop = req->data_source_descriptor->will_notify_on_stop;
	}
	ipc_host_reply(h, call, &resp.base, false, -1);
}

static void fp_commit(struct ipc_host *h, const struct ipc_call *call, const ProtobufCMessage *args,
		      void *user)
{
	const Perfetto__Protos__CommitDataRequest *req = (const void *)args;
	struct fake_svc *f = user;

	f->n_commit_requests++;
	if (req->has_flush_request_id)
		f->n_flush_acks++;
	sim_commit(req, &f->sim);
	ipc_host_reply(h, call, NULL, false, -1);
}

static void fp_get_cmd(struct ipc_host *h, const struct ipc_call *call,
		       const ProtobufCMessage *args, void *user)
{
	struct fake_svc *f = user;

	(void)h;
	(void)args;
	f->cmd_call = *call;
	f->has_cmd_call = true;
}

static void fp_reg_writer(struct ipc_host *h, const struct ipc_call *call,
			  const ProtobufCMessage *args, void *user)
{
	const Perfetto__Protos__RegisterTraceWriterRequest *req = (const void *)args;
	struct fake_svc *f = user;

	if (f->n_writers < 64) {
		f->writer_ids[f->n_writers] = req->trace_writer_id;
		f->writer_targets[f->n_writers] = req->target_buffer;
	}
	f->n_writers++;
	ipc_host_reply(h, call, NULL, false, -1);
}

static void fp_unreg_writer(struct ipc_host *h, const struct ipc_call *call,
			    const ProtobufCMessage *args, void *user)
{
	struct fake_svc *f = user;

	(void)args;
	f->n_unreg_writers++;
	ipc_host_reply(h, call, NULL, false, -1);
}

static void fp_started(struct ipc_host *h, const struct ipc_call *call,
		       const ProtobufCMessage *args, void *user)
{
	const Perfetto__Protos__NotifyDataSourceStartedRequest *req = (const void *)args;
	struct fake_svc *f = user;

	f->n_started++;
	f->last_notified = req->data_source_id;
	ipc_host_reply(h, call, NULL, false, -1);
}

static void fp_stopped(struct ipc_host *h, const struct ipc_call *call,
		       const ProtobufCMessage *args, void *user)
{
	const Perfetto__Protos__NotifyDataSourceStoppedRequest *req = (const void *)args;
	struct fake_svc *f = user;

	f->n_stopped++;
	f->last_notified = req->data_source_id;
	ipc_host_reply(h, call, NULL, false, -1);
}

static void fp_triggers(struct ipc_host *h, const struct ipc_call *call,
			const ProtobufCMessage *args, void *user)
{
	const Perfetto__Protos__ActivateTriggersRequest *req = (const void *)args;
	struct fake_svc *f = user;

	f->n_triggers += req->n_trigger_names;
	if (req->n_trigger_names)
		copy_str(f->trigger, sizeof(f->trigger), req->trigger_names[0]);
	ipc_host_reply(h, call, NULL, false, -1);
}

static void fp_sync(struct ipc_host *h, const struct ipc_call *call, const ProtobufCMessage *args,
		    void *user)
{
	struct fake_svc *f = user;

	(void)args;
	f->n_syncs++;
	ipc_host_reply(h, call, NULL, false, -1);
}

static const ipc_method_cb fake_producer_handlers[] = {
	fp_init,       fp_register_ds, NULL,       fp_commit,   fp_get_cmd, fp_reg_writer,
	fp_unreg_writer, fp_started,   fp_stopped, fp_triggers, fp_sync,
};

static void fake_svc_init(struct fake_svc *f, bool is_tcp)
{
	struct ipc_service_def def = {0};
	char name[64];

	memset(f, 0, sizeof(*f));
	ASSERT_EQ(evloop_create(&f->loop), 0);
	if (is_tcp)
		snprintf(name, sizeof(name), "127.0.0.1:0");
	else
		snprintf(name, sizeof(name), "@pfc-tracing-test-%d", (int)getpid());
	ASSERT_EQ(ipc_host_create(f->loop, name, NULL, &f->host), 0);
	ASSERT_EQ(sock_local_name(ipc_host_listen_fd(f->host), f->sock_name, sizeof(f->sock_name)),
		  0);
	def.desc = &perfetto__protos__producer_port__descriptor;
	def.handlers = fake_producer_handlers;
	def.n_handlers = PFC_ARRAY_SIZE(fake_producer_handlers);
	def.user = f;
	ASSERT_EQ(ipc_host_expose(f->host, &def, NULL), 0);
}

static void fake_svc_fini(struct fake_svc *f)
{
	ipc_host_destroy(f->host);
	evloop_destroy(f->loop);
	shm_destroy(f->shm);
	sim_fini(&f->sim);
}

static void send_cmd(struct fake_svc *f, Perfetto__Protos__GetAsyncCommandResponse *cmd, int fd)
{
	ASSERT_TRUE(f->has_cmd_call);
	ASSERT_EQ(ipc_host_reply(f->host, &f->cmd_call, &cmd->base, true, fd), 0);
}

/* SetupTracing with the SMB fd (none on TCP). */
static void send_setup_tracing(struct fake_svc *f)
{
	Perfetto__Protos__GetAsyncCommandResponse cmd =
		PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__INIT;
	Perfetto__Protos__GetAsyncCommandResponse__SetupTracing st =
		PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__SETUP_TRACING__INIT;

	ASSERT_EQ(shm_create(FAKE_SMB_BYTES, FAKE_PAGE_BYTES, &f->shm), 0);
	ASSERT_EQ(smb_init(&f->smb, f->shm->base, f->shm->size, FAKE_PAGE_BYTES), 0);
	if (!ipc_host_use_shmem_emulation(f->host))
		f->sim.smb = &f->smb;
	st.has_shared_buffer_page_size_kb = true;
	st.shared_buffer_page_size_kb = FAKE_PAGE_BYTES / 1024;
	cmd.cmd_case = PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_SETUP_TRACING;
	cmd.setup_tracing = &st;
	send_cmd(f, &cmd, f->shm->fd);
}

static void send_start(struct fake_svc *f, uint64_t id, uint32_t target_buffer)
{
	Perfetto__Protos__GetAsyncCommandResponse cmd =
		PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__INIT;
	Perfetto__Protos__GetAsyncCommandResponse__StartDataSource sd =
		PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__START_DATA_SOURCE__INIT;
	Perfetto__Protos__DataSourceConfig cfg = PERFETTO__PROTOS__DATA_SOURCE_CONFIG__INIT;

	cfg.name = (char *)"test.ds";
	cfg.has_target_buffer = true;
	cfg.target_buffer = target_buffer;
	sd.has_new_instance_id = true;
	sd.new_instance_id = id;
	sd.config = &cfg;
	cmd.cmd_case = PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_START_DATA_SOURCE;
	cmd.start_data_source = &sd;
	send_cmd(f, &cmd, -1);
}

static void send_flush(struct fake_svc *f, uint64_t id, uint64_t request_id)
{
	Perfetto__Protos__GetAsyncCommandResponse cmd =
		PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__INIT;
	Perfetto__Protos__GetAsyncCommandResponse__Flush fl =
		PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__FLUSH__INIT;

	fl.n_data_source_ids = 1;
	fl.data_source_ids = &id;
	fl.has_request_id = true;
	fl.request_id = request_id;
	cmd.cmd_case = PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_FLUSH;
	cmd.flush = &fl;
	send_cmd(f, &cmd, -1);
}

static void send_stop(struct fake_svc *f, uint64_t id)
{
	Perfetto__Protos__GetAsyncCommandResponse cmd =
		PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__INIT;
	Perfetto__Protos__GetAsyncCommandResponse__StopDataSource sd =
		PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__STOP_DATA_SOURCE__INIT;

	sd.has_instance_id = true;
	sd.instance_id = id;
	cmd.cmd_case = PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_STOP_DATA_SOURCE;
	cmd.stop_data_source = &sd;
	send_cmd(f, &cmd, -1);
}

/* Runs @loop until *@flag (a size_t or bool read through @get) reaches @want. */
#define RUN_UNTIL(loop, cond)                                                        \
	do {                                                                         \
		int i_;                                                              \
		for (i_ = 0; i_ < 5000 && !(cond); i_++)                             \
			evloop_run_once((loop), 2);                                  \
		if (!(cond))                                                         \
			FAIL("timed out waiting for %s", #cond);                     \
	} while (0)

/* --------------------------------------------------- test producer ---- */

struct tp {
	struct fake_svc *f;
	struct producer *p;
	bool is_connected;
	int disconnect_err;
	bool is_disconnected;
	bool is_setup;
	uint64_t started_id;
	uint32_t target_buffer;
	size_t n_started, n_stopped, n_flushes, n_syncs;
	uint64_t flush_request_id;
};

static void tp_connected(struct producer *p, void *user)
{
	struct tp *t = user;

	(void)p;
	t->is_connected = true;
}

static void tp_disconnected(struct producer *p, int err, void *user)
{
	struct tp *t = user;

	(void)p;
	t->is_disconnected = true;
	t->disconnect_err = err;
}

static void tp_setup(struct producer *p, void *user)
{
	struct tp *t = user;

	(void)p;
	t->is_setup = true;
}

static void tp_start(struct producer *p, uint64_t id, const Perfetto__Protos__DataSourceConfig *cfg,
		     void *user)
{
	struct tp *t = user;

	(void)p;
	t->n_started++;
	t->started_id = id;
	t->target_buffer = cfg->target_buffer;
}

static void tp_stop(struct producer *p, uint64_t id, void *user)
{
	struct tp *t = user;

	t->n_stopped++;
	ASSERT_EQ(producer_notify_stopped(p, id), 0);
}

static void tp_flush(struct producer *p, const uint64_t *ids, size_t n, uint64_t request_id,
		     uint64_t flags, void *user)
{
	struct tp *t = user;

	(void)p;
	(void)flags;
	ASSERT_EQ(n, 1);
	ASSERT_EQ(ids[0], t->started_id);
	t->n_flushes++;
	t->flush_request_id = request_id;
}

static void tp_synced(struct producer *p, bool success, void *user)
{
	struct tp *t = user;

	(void)p;
	ASSERT_TRUE(success);
	t->n_syncs++;
}

static void tp_connect(struct tp *t, struct fake_svc *f, bool has_flush_cb)
{
	struct producer_callbacks cbs = {0};
	struct producer_ds_desc ds = {0};

	memset(t, 0, sizeof(*t));
	t->f = f;
	cbs.on_connected = tp_connected;
	cbs.on_disconnected = tp_disconnected;
	cbs.on_tracing_setup = tp_setup;
	cbs.start_ds = tp_start;
	cbs.stop_ds = tp_stop;
	if (has_flush_cb)
		cbs.flush = tp_flush;
	ASSERT_EQ(producer_connect(f->loop, f->sock_name, "unit.producer", NULL, &cbs, t, &t->p),
		  0);
	ds.name = "test.ds";
	ds.will_notify_on_stop = true;
	/* Queued until the connection is initialized. */
	ASSERT_EQ(producer_register_ds(t->p, &ds), 0);
	ASSERT_EQ(producer_register_ds(t->p, &ds), -EEXIST);
	RUN_UNTIL(f->loop, t->is_connected && f->n_ds == 1 && f->has_cmd_call);
	ASSERT_STREQ(f->producer_name, "unit.producer");
	ASSERT_TRUE(strncmp(f->sdk_version, "perfetto-c", 10) == 0);
	ASSERT_STREQ(f->ds_name, "test.ds");
	ASSERT_TRUE(f->ds_notify_on_stop);
}

/* Connect, set up, start, write @n packets on the loop thread, flush, stop. */
static void run_producer_session(bool is_tcp)
{
	struct fake_svc f;
	struct tp t;
	struct trace_writer *tw = NULL;
	struct producer_stats st;
	uint8_t scratch[1000];
	unsigned i, n = 60;
	uint16_t wid;

	fake_svc_init(&f, is_tcp);
	tp_connect(&t, &f, false);
	ASSERT_EQ(producer_create_writer(t.p, 0, &tw), -EAGAIN); /* no SMB yet */
	send_setup_tracing(&f);
	send_start(&f, 7, 3);
	RUN_UNTIL(f.loop, (t.is_setup && t.n_started == 1) || t.is_disconnected);
	ASSERT_EQ(t.disconnect_err, 0);
	ASSERT_EQ(producer_uses_shmem_emulation(t.p), is_tcp);
	ASSERT_EQ(t.started_id, 7);
	ASSERT_EQ(t.target_buffer, 3);
	ASSERT_EQ(producer_create_writer(t.p, (uint16_t)t.target_buffer, &tw), 0);
	wid = tw_writer_id(tw);
	for (i = 0; i < n; i++)
		write_packet(tw, 5, i, (i * 37) % sizeof(scratch), scratch);
	/* The default flush (no flush callback) flushes the writer and acks. */
	send_flush(&f, 7, 42);
	RUN_UNTIL(f.loop, f.sim.last_flush_id == 42);
	ASSERT_EQ(f.n_flush_acks, 1);
	ASSERT_EQ(f.n_writers, 1);
	ASSERT_EQ(f.writer_ids[0], wid);
	ASSERT_EQ(f.writer_targets[0], 3);
	send_stop(&f, 7);
	RUN_UNTIL(f.loop, f.n_stopped == 1);
	ASSERT_EQ(f.last_notified, 7);
	producer_destroy_writer(t.p, tw);
	RUN_UNTIL(f.loop, f.n_unreg_writers == 1);
	ASSERT_EQ(f.sim.errors, 0);
	if (is_tcp)
		ASSERT_EQ(f.sim.n_moves_with_data, f.sim.n_moves);
	else
		ASSERT_EQ(f.sim.n_moves_with_data, 0);
	ASSERT_GT(f.sim.n_moves, 0);
	sim_reassemble(&f.sim);
	check_writer_packets(&f.sim, wid, 5, NULL, n);
	ASSERT_EQ(f.sim.n_gaps, 0);
	producer_get_stats(t.p, &st);
	ASSERT_EQ(st.commits_dropped, 0);
	ASSERT_EQ(st.commits_sent, f.n_commit_requests);
	ASSERT_EQ(st.flushes_acked, 1);
	producer_destroy(t.p);
	fake_svc_fini(&f);
}

TEST(producer_session_over_unix_socket_uses_the_shared_smb)
{
	run_producer_session(false);
}

TEST(producer_session_over_tcp_sends_chunks_inline)
{
	run_producer_session(true);
}

struct tp_thread {
	struct producer *p;
	uint16_t target_buffer;
	unsigned tag;
	unsigned n;
	uint16_t writer_id;
	int err;
};

static void *tp_thread_main(void *arg)
{
	struct tp_thread *a = arg;
	struct trace_writer *tw = NULL;
	uint8_t scratch[5000];
	unsigned i;

	a->err = producer_create_writer(a->p, a->target_buffer, &tw);
	if (a->err < 0)
		return NULL;
	a->writer_id = tw_writer_id(tw);
	for (i = 0; i < a->n; i++)
		write_packet(tw, a->tag, i, (i * 101 + a->tag) % sizeof(scratch), scratch);
	tw_flush(tw);
	producer_destroy_writer(a->p, tw);
	return NULL;
}

static void run_threads_through_producer(bool is_tcp)
{
	enum { N_THREADS = 4, N_PACKETS = 1500 };
	struct tp_thread a[N_THREADS];
	pthread_t th[N_THREADS];
	struct fake_svc f;
	struct tp t;
	int i;

	fake_svc_init(&f, is_tcp);
	tp_connect(&t, &f, true);
	send_setup_tracing(&f);
	send_start(&f, 9, 1);
	RUN_UNTIL(f.loop, t.n_started == 1);
	for (i = 0; i < N_THREADS; i++) {
		a[i] = (struct tp_thread){.p = t.p, .target_buffer = 1, .tag = 10 + i, .n = N_PACKETS};
		ASSERT_EQ(pthread_create(&th[i], NULL, tp_thread_main, &a[i]), 0);
	}
	/* The loop keeps draining commits (and the service frees chunks)
	 * while the threads write far more than the 64 KiB SMB holds. */
	RUN_UNTIL(f.loop, f.n_unreg_writers == N_THREADS);
	for (i = 0; i < N_THREADS; i++) {
		pthread_join(th[i], NULL);
		ASSERT_EQ(a[i].err, 0);
	}
	/* With a flush callback the embedder acks when its writers are done. */
	send_flush(&f, 9, 77);
	RUN_UNTIL(f.loop, t.n_flushes == 1);
	ASSERT_EQ(t.flush_request_id, 77);
	ASSERT_EQ(producer_flush_ack(t.p, t.flush_request_id), 0);
	RUN_UNTIL(f.loop, f.sim.last_flush_id == 77);
	ASSERT_EQ(f.sim.errors, 0);
	{
		struct producer_stats st;

		producer_get_stats(t.p, &st);
		ASSERT_EQ(st.commits_dropped, 0);
	}
	sim_reassemble(&f.sim);
	ASSERT_EQ(f.sim.n_gaps, 0);
	for (i = 0; i < N_THREADS; i++)
		check_writer_packets(&f.sim, a[i].writer_id, a[i].tag, NULL, N_PACKETS);
	ASSERT_EQ(f.sim.n_gaps, 0);
	ASSERT_EQ(f.n_writers, N_THREADS);
	producer_destroy(t.p);
	fake_svc_fini(&f);
}

TEST(producer_writers_on_four_threads_unix)
{
	run_threads_through_producer(false);
}

TEST(producer_writers_on_four_threads_tcp_emulation)
{
	run_threads_through_producer(true);
}

TEST(producer_notifications_triggers_and_sync_keep_order)
{
	const char *names[] = {"trig.a", "trig.b"};
	struct fake_svc f;
	struct tp t;

	fake_svc_init(&f, false);
	tp_connect(&t, &f, false);
	ASSERT_EQ(producer_notify_started(t.p, 5), 0);
	ASSERT_EQ(producer_activate_triggers(t.p, names, 2), 0);
	/* Sync is answered after everything queued before it. */
	ASSERT_EQ(producer_sync(t.p, tp_synced, &t), 0);
	RUN_UNTIL(f.loop, t.n_syncs == 1);
	ASSERT_EQ(f.n_started, 1);
	ASSERT_EQ(f.last_notified, 5);
	ASSERT_EQ(f.n_triggers, 2);
	ASSERT_STREQ(f.trigger, "trig.a");
	/* A flush before SetupTracing is still acknowledged. */
	send_flush(&f, 5, 3);
	RUN_UNTIL(f.loop, f.n_flush_acks == 1);
	ASSERT_EQ(f.sim.last_flush_id, 3);
	producer_destroy(t.p);
	fake_svc_fini(&f);
}

TEST(producer_reports_disconnect_when_the_service_goes_away)
{
	struct fake_svc f;
	struct tp t;

	fake_svc_init(&f, false);
	tp_connect(&t, &f, false);
	ipc_host_destroy(f.host);
	f.host = NULL;
	RUN_UNTIL(f.loop, t.is_disconnected);
	ASSERT_FALSE(producer_is_connected(t.p));
	ASSERT_EQ(producer_notify_started(t.p, 1), -ENOTCONN);
	producer_destroy(t.p);
	fake_svc_fini(&f);
}

TEST(producer_rejects_bad_arguments_and_missing_service)
{
	struct evloop *loop = NULL;
	struct producer *p = NULL;
	struct producer_callbacks cbs = {0};
	char name[300];

	ASSERT_EQ(evloop_create(&loop), 0);
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	ASSERT_EQ(producer_connect(loop, "@nobody-here", NULL, NULL, &cbs, NULL, &p), -EINVAL);
	ASSERT_EQ(producer_connect(loop, "@nobody-here", name, NULL, &cbs, NULL, &p), -EINVAL);
	ASSERT_LT(producer_connect(loop, "/nonexistent/dir/sock", "x", NULL, &cbs, NULL, &p), 0);
	evloop_destroy(loop);
}

TEST(pb_raw_msg_packs_exactly_the_given_bytes)
{
	Perfetto__Protos__CommitDataRequest req = PERFETTO__PROTOS__COMMIT_DATA_REQUEST__INIT;
	Perfetto__Protos__CommitDataRequest__ChunksToMove m =
		PERFETTO__PROTOS__COMMIT_DATA_REQUEST__CHUNKS_TO_MOVE__INIT;
	Perfetto__Protos__CommitDataRequest__ChunksToMove *mp = &m;
	uint8_t data[100], in[200], out[200];
	struct pb_raw_msg raw;
	size_t len;

	memset(data, 0xab, sizeof(data));
	m.has_page = m.has_chunk = m.has_data = true;
	m.page = 300;
	m.chunk = 2;
	m.data.data = data;
	m.data.len = sizeof(data);
	req.n_chunks_to_move = 1;
	req.chunks_to_move = &mp;
	req.has_flush_request_id = true;
	req.flush_request_id = 1ull << 40;
	len = protobuf_c_message_pack(&req.base, in);
	ASSERT_EQ(pb_raw_msg_init(&raw, &perfetto__protos__commit_data_request__descriptor, in, len),
		  0);
	ASSERT_EQ(protobuf_c_message_get_packed_size(&raw.u.base), len);
	ASSERT_EQ(protobuf_c_message_pack(&raw.u.base, out), len);
	ASSERT_MEMEQ(out, in, len);
	ASSERT_EQ(pb_raw_msg_init(&raw, &perfetto__protos__commit_data_request__descriptor, in, 0),
		  0);
	ASSERT_EQ(protobuf_c_message_get_packed_size(&raw.u.base), 0);
	in[0] = 0x0b; /* wire type 3 (groups) */
	ASSERT_EQ(pb_raw_msg_init(&raw, &perfetto__protos__commit_data_request__descriptor, in, len),
		  -EINVAL);
}

/* ------------------------------------------------ fake ConsumerPort ---- */

#define FC_MAX_SLICES 16

/* What the fake streams back for ReadBuffers: replies of slices. */
struct fc_slice {
	size_t reply; /* which reply carries it */
	const uint8_t *data;
	size_t len;
	bool is_last;
};

struct fake_consumer_svc {
	struct evloop *loop;
	struct ipc_host *host;
	char sock_name[128];
	struct ipc_call enable_call;
	bool has_enable_call;
	uint32_t duration_ms;
	size_t n_disable;
	struct fc_slice slices[FC_MAX_SLICES];
	size_t n_slices, n_replies;
	size_t n_state_replies;
};

static void fcs_enable(struct ipc_host *h, const struct ipc_call *call,
		       const ProtobufCMessage *args, void *user)
{
	const Perfetto__Protos__EnableTracingRequest *req = (const void *)args;
	struct fake_consumer_svc *f = user;

	(void)h;
	f->enable_call = *call;
	f->has_enable_call = true;
	if (req->trace_config)
		f->duration_ms = req->trace_config->duration_ms;
}

static void fcs_disable(struct ipc_host *h, const struct ipc_call *call,
			const ProtobufCMessage *args, void *user)
{
	Perfetto__Protos__EnableTracingResponse resp = PERFETTO__PROTOS__ENABLE_TRACING_RESPONSE__INIT;
	struct fake_consumer_svc *f = user;

	(void)args;
	f->n_disable++;
	ipc_host_reply(h, call, NULL, false, -1);
	resp.state_case = PERFETTO__PROTOS__ENABLE_TRACING_RESPONSE__STATE_DISABLED;
	resp.disabled = true;
	ipc_host_reply(h, &f->enable_call, &resp.base, false, -1);
}

static void fcs_read(struct ipc_host *h, const struct ipc_call *call, const ProtobufCMessage *args,
		     void *user)
{
	struct fake_consumer_svc *f = user;
	size_t r, i;

	(void)args;
	for (r = 0; r < f->n_replies; r++) {
		Perfetto__Protos__ReadBuffersResponse resp =
			PERFETTO__PROTOS__READ_BUFFERS_RESPONSE__INIT;
		Perfetto__Protos__ReadBuffersResponse__Slice sl[FC_MAX_SLICES];
		Perfetto__Protos__ReadBuffersResponse__Slice *ptrs[FC_MAX_SLICES];

		for (i = 0; i < f->n_slices; i++) {
			if (f->slices[i].reply != r)
				continue;
			perfetto__protos__read_buffers_response__slice__init(&sl[resp.n_slices]);
			sl[resp.n_slices].has_data = true;
			sl[resp.n_slices].data.data = (uint8_t *)f->slices[i].data;
			sl[resp.n_slices].data.len = f->slices[i].len;
			sl[resp.n_slices].has_last_slice_for_packet = true;
			sl[resp.n_slices].last_slice_for_packet = f->slices[i].is_last;
			ptrs[resp.n_slices] = &sl[resp.n_slices];
			resp.n_slices++;
		}
		resp.slices = ptrs;
		ASSERT_EQ(ipc_host_reply(h, call, &resp.base, r + 1 < f->n_replies, -1), 0);
	}
}

static void fcs_state(struct ipc_host *h, const struct ipc_call *call,
		      const ProtobufCMessage *args, void *user)
{
	struct fake_consumer_svc *f = user;
	size_t r;

	(void)args;
	for (r = 0; r < f->n_state_replies; r++) {
		Perfetto__Protos__QueryServiceStateResponse resp =
			PERFETTO__PROTOS__QUERY_SERVICE_STATE_RESPONSE__INIT;
		Perfetto__Protos__TracingServiceState st = PERFETTO__PROTOS__TRACING_SERVICE_STATE__INIT;
		Perfetto__Protos__TracingServiceState__Producer pr =
			PERFETTO__PROTOS__TRACING_SERVICE_STATE__PRODUCER__INIT;
		Perfetto__Protos__TracingServiceState__Producer *prp = &pr;
		char name[32];

		snprintf(name, sizeof(name), "producer.%zu", r);
		pr.name = name;
		st.n_producers = 1;
		st.producers = &prp;
		resp.service_state = &st;
		ASSERT_EQ(ipc_host_reply(h, call, &resp.base, r + 1 < f->n_state_replies, -1), 0);
	}
}

static const ipc_method_cb fake_consumer_handlers[] = {
	fcs_enable, fcs_disable, fcs_read, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, fcs_state,
};

static void fcs_init(struct fake_consumer_svc *f)
{
	struct ipc_service_def def = {0};
	char name[64];

	memset(f, 0, sizeof(*f));
	ASSERT_EQ(evloop_create(&f->loop), 0);
	snprintf(name, sizeof(name), "@pfc-tracing-ctest-%d", (int)getpid());
	ASSERT_EQ(ipc_host_create(f->loop, name, NULL, &f->host), 0);
	ASSERT_EQ(sock_local_name(ipc_host_listen_fd(f->host), f->sock_name, sizeof(f->sock_name)),
		  0);
	def.desc = &perfetto__protos__consumer_port__descriptor;
	def.handlers = fake_consumer_handlers;
	def.n_handlers = PFC_ARRAY_SIZE(fake_consumer_handlers);
	def.user = f;
	ASSERT_EQ(ipc_host_expose(f->host, &def, NULL), 0);
}

static void fcs_fini(struct fake_consumer_svc *f)
{
	ipc_host_destroy(f->host);
	evloop_destroy(f->loop);
}

struct tc {
	bool is_connected;
	bool is_disabled;
	char disabled_error[64];
	uint8_t *packets[16];
	size_t lens[16];
	size_t n_packets;
	bool is_done;
	int done_err;
	size_t n_state_producers;
	char state_names[3][32];
	bool has_state;
};

static void tc_connected(struct consumer *c, void *user)
{
	(void)c;
	((struct tc *)user)->is_connected = true;
}

static void tc_disabled(const char *error, void *user)
{
	struct tc *t = user;

	t->is_disabled = true;
	copy_str(t->disabled_error, sizeof(t->disabled_error), error);
}

static void tc_packet(const uint8_t *data, size_t len, void *user)
{
	struct tc *t = user;

	ASSERT_LT(t->n_packets, 16);
	t->packets[t->n_packets] = malloc(len + 1);
	memcpy(t->packets[t->n_packets], data, len);
	t->lens[t->n_packets++] = len;
}

static void tc_done(int err, void *user)
{
	struct tc *t = user;

	t->is_done = true;
	t->done_err = err;
}

static void tc_state(int err, const Perfetto__Protos__TracingServiceState *st, const uint8_t *data,
		     size_t len, void *user)
{
	struct tc *t = user;
	size_t i;

	ASSERT_EQ(err, 0);
	ASSERT_TRUE(st != NULL);
	ASSERT_GT(len, 0);
	ASSERT_TRUE(data != NULL);
	t->n_state_producers = st->n_producers;
	for (i = 0; i < st->n_producers && i < 3; i++)
		copy_str(t->state_names[i], sizeof(t->state_names[i]), st->producers[i]->name);
	t->has_state = true;
}

static struct consumer *tc_connect(struct fake_consumer_svc *f, struct tc *t)
{
	struct consumer_callbacks cbs = {.on_connected = tc_connected};
	struct consumer *c = NULL;

	memset(t, 0, sizeof(*t));
	ASSERT_EQ(consumer_connect(f->loop, f->sock_name, &cbs, t, &c), 0);
	ASSERT_EQ(consumer_disable_tracing(c), -ENOTCONN); /* not bound yet */
	RUN_UNTIL(f->loop, t->is_connected);
	return c;
}

static void fill(uint8_t *p, size_t len, uint8_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

TEST(consumer_enable_then_disable_reports_the_end)
{
	Perfetto__Protos__TraceConfig cfg;
	struct fake_consumer_svc f;
	struct consumer *c;
	uint8_t bytes[64];
	size_t len;
	struct tc t;

	fcs_init(&f);
	c = tc_connect(&f, &t);
	/* The INIT macro touches deprecated fields (clang warns). */
	perfetto__protos__trace_config__init(&cfg);
	cfg.has_duration_ms = true;
	cfg.duration_ms = 1234;
	len = protobuf_c_message_pack(&cfg.base, bytes);
	ASSERT_EQ(consumer_enable_tracing(c, (const uint8_t *)"\xff", 1, -1, tc_disabled, &t),
		  -EINVAL);
	ASSERT_EQ(consumer_enable_tracing(c, bytes, len, -1, tc_disabled, &t), 0);
	RUN_UNTIL(f.loop, f.has_enable_call);
	ASSERT_EQ(f.duration_ms, 1234);
	ASSERT_EQ(consumer_disable_tracing(c), 0);
	RUN_UNTIL(f.loop, t.is_disabled);
	ASSERT_EQ(f.n_disable, 1);
	ASSERT_STREQ(t.disabled_error, "");
	consumer_destroy(c);
	fcs_fini(&f);
}

TEST(consumer_read_buffers_reassembles_split_packets_and_enforces_the_limit)
{
	static uint8_t p1[100], p2[2500], p3[1], big[1001], exact[1000];
	struct fake_consumer_svc f;
	struct consumer *c;
	struct tc t;
	size_t i;

	fill(p1, sizeof(p1), 1);
	fill(p2, sizeof(p2), 2);
	fill(p3, sizeof(p3), 3);
	fill(big, sizeof(big), 4);
	fill(exact, sizeof(exact), 5);
	fcs_init(&f);
	/* p2 in three slices across the first two replies; big (over the
	 * limit) in two slices across replies 2 and 3; exact at the limit. */
	f.slices[0] = (struct fc_slice){0, p1, sizeof(p1), true};
	f.slices[1] = (struct fc_slice){0, p2, 1000, false};
	f.slices[2] = (struct fc_slice){1, p2 + 1000, 1000, false};
	f.slices[3] = (struct fc_slice){1, p2 + 2000, 500, true};
	f.slices[4] = (struct fc_slice){1, big, 600, false};
	f.slices[5] = (struct fc_slice){2, big + 600, 401, true};
	f.slices[6] = (struct fc_slice){2, p3, sizeof(p3), true};
	f.slices[7] = (struct fc_slice){2, exact, 999, false};
	f.slices[8] = (struct fc_slice){2, exact + 999, 1, true};
	f.n_slices = 9;
	f.n_replies = 3;
	c = tc_connect(&f, &t);
	ASSERT_EQ(consumer_set_max_packet_bytes(c, 0), -EINVAL);
	ASSERT_EQ(consumer_set_max_packet_bytes(c, 2500), 0);
	ASSERT_EQ(consumer_read_buffers(c, tc_packet, tc_done, &t), 0);
	RUN_UNTIL(f.loop, t.is_done);
	ASSERT_EQ(t.done_err, 0);
	ASSERT_EQ(t.n_packets, 5);
	ASSERT_EQ(t.lens[0], sizeof(p1));
	ASSERT_MEMEQ(t.packets[0], p1, sizeof(p1));
	ASSERT_EQ(t.lens[1], sizeof(p2));
	ASSERT_MEMEQ(t.packets[1], p2, sizeof(p2));
	ASSERT_EQ(t.lens[2], sizeof(big));
	ASSERT_MEMEQ(t.packets[2], big, sizeof(big));
	ASSERT_EQ(t.lens[3], sizeof(p3));
	ASSERT_MEMEQ(t.packets[3], p3, sizeof(p3));
	ASSERT_EQ(t.lens[4], sizeof(exact));
	ASSERT_MEMEQ(t.packets[4], exact, sizeof(exact));
	/* At a limit of 1000 p2 and big are dropped; exact is at the limit. */
	for (i = 0; i < t.n_packets; i++)
		free(t.packets[i]);
	t.n_packets = 0;
	t.is_done = false;
	ASSERT_EQ(consumer_set_max_packet_bytes(c, 1000), 0);
	ASSERT_EQ(consumer_read_buffers(c, tc_packet, tc_done, &t), 0);
	RUN_UNTIL(f.loop, t.is_done);
	ASSERT_EQ(t.done_err, -EMSGSIZE);
	ASSERT_EQ(t.n_packets, 3);
	ASSERT_MEMEQ(t.packets[0], p1, sizeof(p1));
	ASSERT_EQ(t.lens[1], sizeof(p3));
	ASSERT_MEMEQ(t.packets[1], p3, sizeof(p3));
	ASSERT_EQ(t.lens[2], sizeof(exact));
	ASSERT_MEMEQ(t.packets[2], exact, sizeof(exact));
	for (i = 0; i < t.n_packets; i++)
		free(t.packets[i]);
	consumer_destroy(c);
	fcs_fini(&f);
}

TEST(consumer_query_service_state_merges_streamed_replies)
{
	struct fake_consumer_svc f;
	struct consumer *c;
	struct tc t;

	fcs_init(&f);
	f.n_state_replies = 3;
	c = tc_connect(&f, &t);
	ASSERT_EQ(consumer_query_service_state(c, false, tc_state, &t), 0);
	RUN_UNTIL(f.loop, t.has_state);
	ASSERT_EQ(t.n_state_producers, 3);
	ASSERT_STREQ(t.state_names[0], "producer.0");
	ASSERT_STREQ(t.state_names[2], "producer.2");
	consumer_destroy(c);
	fcs_fini(&f);
}

TEST(consumer_calls_fail_when_the_service_goes_away)
{
	struct fake_consumer_svc f;
	struct consumer *c;
	struct tc t;

	fcs_init(&f);
	c = tc_connect(&f, &t);
	ASSERT_EQ(consumer_enable_tracing(c, NULL, 0, -1, tc_disabled, &t), 0);
	RUN_UNTIL(f.loop, f.has_enable_call);
	ipc_host_destroy(f.host);
	f.host = NULL;
	RUN_UNTIL(f.loop, t.is_disabled);
	ASSERT_TRUE(strlen(t.disabled_error) > 0);
	ASSERT_FALSE(consumer_is_connected(c));
	ASSERT_EQ(consumer_read_buffers(c, tc_packet, tc_done, &t), -ENOTCONN);
	consumer_destroy(c);
	fcs_fini(&f);
}

TEST(trace_file_writer_frames_packets_as_a_trace)
{
	static const size_t sizes[] = {0, 1, 127, 128, 5000, 16383, 16384, 300000};
	struct trace_file_writer w;
	struct pz_reader r;
	struct pz_field fl;
	uint8_t *pkt = malloc(300000), *all = NULL;
	char path[512];
	size_t i, n = 0;
	struct buf b;
	int fd;

	ASSERT_TRUE(pkt != NULL);
	snprintf(path, sizeof(path), "%s/trace", test_tmpdir());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(trace_file_writer_init(&w, fd, 4096), 0);
	for (i = 0; i < PFC_ARRAY_SIZE(sizes); i++) {
		fill(pkt, sizes[i], (uint8_t)i);
		ASSERT_EQ(trace_file_write_packet(&w, pkt, sizes[i]), 0);
	}
	ASSERT_EQ(w.packets, PFC_ARRAY_SIZE(sizes));
	ASSERT_EQ(trace_file_writer_fini(&w), 0);
	close(fd);
	buf_init(&b);
	ASSERT_GE(file_read_all(path, &b, 1u << 20), 0);
	ASSERT_EQ(b.len, w.bytes_written);
	all = b.data;
	pz_reader_init(&r, all, b.len);
	while (pz_reader_next(&r, &fl) == 1) {
		ASSERT_EQ(fl.id, 1);
		ASSERT_EQ(fl.wire_type, PZ_WIRE_LEN);
		ASSERT_LT(n, PFC_ARRAY_SIZE(sizes));
		ASSERT_EQ(fl.size, sizes[n]);
		fill(pkt, sizes[n], (uint8_t)n);
		ASSERT_MEMEQ(fl.data, pkt, sizes[n]);
		n++;
	}
	ASSERT_EQ(r.err, PZ_OK);
	ASSERT_EQ(n, PFC_ARRAY_SIZE(sizes));
	/* Errors stick: a closed fd fails the flush and every later call. */
	ASSERT_EQ(trace_file_writer_init(&w, fd, 4096), 0);
	ASSERT_EQ(trace_file_write_packet(&w, pkt, 10), 0);
	ASSERT_LT(trace_file_writer_flush(&w), 0);
	ASSERT_LT(trace_file_write_packet(&w, pkt, 10), 0);
	trace_file_writer_fini(&w);
	buf_fini(&b);
	free(pkt);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_buffer_int.h - private layout of the central trace buffer, shared by
 * trace_buffer.c (copy, evict, patch, clone, stats) and trace_buffer_read.c
 * (packet reassembly). Nothing outside these two files may include it.
 * All cross-references are 32-bit offsets into the arena or indices into
 * the sequence table, so a clone is a plain copy.
 */
#ifndef PFC_TRACED_TRACE_BUFFER_INT_H
#define PFC_TRACED_TRACE_BUFFER_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "base/hmap.h"
#include "pb_fields.h"
#include "traced/trace_buffer.h"

/* TracePacket.DataLossReason bits, as set in previous_packet_dropped. */
#define TB_LOSS_PRESENT PBE_TRACE_PACKET_DATA_LOSS_REASON__DATA_LOSS_PRESENT
#define TB_LOSS_READ_GAP PBE_TRACE_PACKET_DATA_LOSS_REASON__DATA_LOSS_READ_GAP
#define TB_LOSS_CHUNK_CORRUPTED PBE_TRACE_PACKET_DATA_LOSS_REASON__DATA_LOSS_CHUNK_CORRUPTED
#define TB_LOSS_ORPHAN_CONTINUATION PBE_TRACE_PACKET_DATA_LOSS_REASON__DATA_LOSS_ORPHAN_CONTINUATION
#define TB_LOSS_REASSEMBLY_GAP PBE_TRACE_PACKET_DATA_LOSS_REASON__DATA_LOSS_REASSEMBLY_GAP
#define TB_LOSS_REASSEMBLY_BROKEN_CHAIN \
	PBE_TRACE_PACKET_DATA_LOSS_REASON__DATA_LOSS_REASSEMBLY_BROKEN_CHAIN
#define TB_LOSS_OVERWRITE PBE_TRACE_PACKET_DATA_LOSS_REASON__DATA_LOSS_OVERWRITE
#define TB_LOSS_WRITER_ABORT PBE_TRACE_PACKET_DATA_LOSS_REASON__DATA_LOSS_WRITER_ABORT

#define TB_NIL UINT32_MAX
#define TB_ALIGN 8u
#define TB_PAGE 4096u

enum tb_rec_kind {
	TB_REC_PAD = 1,   /* space nobody uses, until the writer comes by */
	TB_REC_CHUNK = 2, /* a chunk with fragments left to read */
	TB_REC_FREE = 3,  /* a chunk read to the end */
};

/* Record flags beyond the ABI bits 0..2 (TB_CHUNK_*). */
#define TB_RF_INCOMPLETE (1u << 3)   /* scraped: more may come in a recommit */
#define TB_RF_ENTERED (1u << 4)      /* the reader checked its chunk id gap */
#define TB_RF_CORRUPTED (1u << 5)    /* fragments were cut at copy time */
#define TB_RF_WRITER_ABORT (1u << 6) /* ended with a TB_PACKET_SIZE_DROP marker */

/*
 * Common prefix of every record. Pad and free records are read only
 * through this (a pad can be as small as 8 bytes).
 */
struct tb_hdr {
	uint32_t size; /* whole record, a multiple of TB_ALIGN */
	uint8_t kind;  /* enum tb_rec_kind */
	uint8_t flags; /* TB_CHUNK_* | TB_RF_* (chunks only) */
	uint16_t reserved;
};
_Static_assert(sizeof(struct tb_hdr) == 8, "tb_hdr layout");

/*
 *   +0  tb_hdr      +8  chunk_id   +12 seq (table index)
 *   +16 prev        +20 next        (offsets of neighbours in chunk id order)
 *   +24 payload_size (fragment bytes stored)
 *   +28 capacity     (bytes reserved; > payload_size only for scraped chunks)
 *   +32 read_off     (fragment bytes consumed)      +36 reserved
 *   +40 fragments: [redundant varint size][bytes] ...
 */
struct tb_chunk {
	struct tb_hdr h;
	uint32_t chunk_id;
	uint32_t seq;
	uint32_t prev;
	uint32_t next;
	uint32_t payload_size;
	uint32_t capacity;
	uint32_t read_off;
	uint32_t reserved;
};
_Static_assert(sizeof(struct tb_chunk) == TB_CHUNK_HEADER_BYTES, "tb_chunk layout");

enum tb_seq_state {
	TB_SEQ_FREE = 0,   /* slot unused (on the free list) */
	TB_SEQ_EMPTY = 1,  /* known, no chunks (LRU list, recycled first) */
	TB_SEQ_ACTIVE = 2, /* has chunks (read-order list) */
};

struct tb_seq {
	struct tb_client client;
	uint16_t writer_id;
	uint8_t state;         /* enum tb_seq_state */
	bool has_last_read;    /* last_read_id is meaningful */
	uint32_t last_read_id; /* last chunk id consumed or lost at the head */
	uint32_t loss;         /* DataLossReason bits for the next packet */
	uint32_t head, tail;   /* chunk record offsets, oldest and newest id */
	uint32_t prev, next;   /* links in the free / empty / active list */
};

struct tb_list {
	uint32_t head, tail;
};

struct trace_buffer {
	uint8_t *mem;
	uint32_t size;
	uint32_t wr;       /* where the next record goes */
	uint32_t used_end; /* records tile [0, used_end) */
	uint8_t policy;    /* enum tb_fill_policy */
	bool is_discarding;
	bool is_read_only;

	struct tb_seq *seqs;
	uint32_t n_seqs;
	struct hmap seq_map; /* (producer_id << 16 | writer_id) -> seqs index */
	struct tb_list free_seqs, empty_seqs, active_seqs;

	/* Read pass. */
	uint32_t rd_seq; /* sequence being read, TB_NIL when done */
	bool is_final_read;
	struct tb_slice *slices;
	size_t slices_cap;

	struct tb_stats stats;
};

static inline struct tb_hdr *tb_hdr_at(const struct trace_buffer *tb, uint32_t off)
{
	return (struct tb_hdr *)(void *)(tb->mem + off);
}

static inline struct tb_chunk *tb_chunk_at(const struct trace_buffer *tb, uint32_t off)
{
	return (struct tb_chunk *)(void *)(tb->mem + off);
}

static inline uint32_t tb_off_of(const struct trace_buffer *tb, const struct tb_chunk *c)
{
	return (uint32_t)((const uint8_t *)c - tb->mem);
}

static inline uint8_t *tb_payload(struct tb_chunk *c)
{
	return (uint8_t *)(c + 1);
}

/* Chunk ids wrap at 2^32: @a comes before @b if it is less than 2^31 behind. */
static inline bool tb_id_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static inline void tb_add_loss(struct tb_seq *s, uint32_t reason)
{
	s->loss |= TB_LOSS_PRESENT | reason;
}

/*
 * Asks for every cache line of [@p, @p + @len) at once: walking fragment
 * headers is a chain of dependent loads, one miss each when cold.
 */
static inline void tb_prefetch(const uint8_t *p, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i += 64)
		__builtin_prefetch(p + i);
}

/*
 * Parses the fragment header at @off of a chunk payload of @size bytes.
 * Return: 1 with *out_data_off / *out_len set, 0 for a writer-abort
 * marker, -EBADMSG if the header or the fragment runs past @size.
 */
int tb_frag_parse(const uint8_t *payload, uint32_t size, uint32_t off, uint32_t *out_data_off,
		  uint32_t *out_len);

/*
 * Retires chunk @c of sequence @s: unlinks it, makes its record free (or,
 * if @is_lost, counts it as overwritten) and moves the sequence to the
 * empty list when it was its last chunk.
 */
void tb_chunk_retire(struct trace_buffer *tb, struct tb_chunk *c, bool is_lost);

#endif

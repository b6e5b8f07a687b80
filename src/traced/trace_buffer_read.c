// SPDX-License-Identifier: Apache-2.0
/*
 * trace_buffer_read.c - read side of the central trace buffer: walks each
 * sequence's chunks in chunk id order, returns whole packets (reassembling
 * the ones split across consecutive chunks as slices into the arena),
 * consumes what it returns and reports what was lost before each packet as
 * TracePacket.previous_packet_dropped bits. Called by the service for
 * ReadBuffers and periodic file writes; linear in the bytes it consumes.
 */
#include <errno.h>
#include <stdlib.h>

#include "base/compiler.h"
#include "pb_fields.h"
#include "traced/trace_buffer_int.h"

enum reasm_result {
	REASM_OK,   /* the packet is complete */
	REASM_WAIT, /* a continuation is not here (or not patched) yet */
	REASM_LOST, /* the chain is broken: the packet can never complete */
};

void tb_begin_read(struct trace_buffer *tb, bool is_final)
{
	tb->rd_seq = tb->active_seqs.head;
	tb->is_final_read = is_final;
}

static int slices_reserve(struct trace_buffer *tb, size_t n)
{
	struct tb_slice *p;
	size_t cap = tb->slices_cap;

	if (n <= cap)
		return 0;
	while (cap < n)
		cap *= 2;
	p = realloc(tb->slices, cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	tb->slices = p;
	tb->slices_cap = cap;
	return 0;
}

/*
 * Follows a packet that begins with the last fragment of @c through the
 * next chunks of the sequence. Every chunk in between must hold a single
 * fragment that continues on both sides, and the chunk ids must be
 * consecutive. Fills tb->slices; consumes nothing.
 * Return: an enum reasm_result (with *out_reason for REASM_LOST and
 * *out_n / *out_end for REASM_OK), or -ENOMEM.
 */
static int reassemble(struct trace_buffer *tb, struct tb_chunk *c, uint32_t data_off,
		      uint32_t len, size_t *out_n, struct tb_chunk **out_end,
		      uint32_t *out_reason)
{
	uint32_t prev_id = c->chunk_id, off = c->next, d_off = 0, d_len = 0;
	size_t n = 0;

	tb->slices[n].data = tb_payload(c) + data_off;
	tb->slices[n++].size = len;
	if (c->h.flags & TB_CHUNK_NEEDS_PATCHING)
		return REASM_WAIT;
	for (;;) {
		struct tb_chunk *x;

		if (off == TB_NIL)
			return REASM_WAIT;
		x = tb_chunk_at(tb, off);
		if (x->chunk_id != prev_id + 1) {
			*out_reason = TB_LOSS_REASSEMBLY_GAP;
			return REASM_LOST;
		}
		if (x->h.flags & TB_CHUNK_NEEDS_PATCHING)
			return REASM_WAIT;
		if (x->payload_size == 0) {
			/* An empty chunk in the middle of a chain is legal. */
			if (x->h.flags & TB_RF_INCOMPLETE)
				return REASM_WAIT;
			prev_id = x->chunk_id;
			off = x->next;
			continue;
		}
		if (!(x->h.flags & TB_CHUNK_FIRST_CONTINUES) || x->read_off != 0) {
			*out_reason = TB_LOSS_REASSEMBLY_BROKEN_CHAIN;
			return REASM_LOST;
		}
		if (tb_frag_parse(tb_payload(x), x->payload_size, 0, &d_off, &d_len) != 1) {
			*out_reason = TB_LOSS_CHUNK_CORRUPTED;
			return REASM_LOST;
		}
		if (slices_reserve(tb, n + 1) < 0)
			return -ENOMEM;
		tb->slices[n].data = tb_payload(x) + d_off;
		tb->slices[n++].size = d_len;
		if (d_off + d_len == x->payload_size && (x->h.flags & TB_CHUNK_LAST_CONTINUES)) {
			prev_id = x->chunk_id;
			off = x->next;
			continue;
		}
		x->h.flags |= TB_RF_ENTERED;
		x->read_off = d_off + d_len;
		*out_n = n;
		*out_end = x;
		return REASM_OK;
	}
}

static void emit(struct tb_seq *s, const struct tb_slice *slices, size_t n,
		 struct tb_packet *out)
{
	size_t i, total = 0;

	for (i = 0; i < n; i++)
		total += slices[i].size;
	out->slices = slices;
	out->n_slices = n;
	out->size_bytes = total;
	out->client = s->client;
	out->writer_id = s->writer_id;
	out->previous_packet_dropped = s->loss;
	s->loss = 0;
}

/* Retires @c if the reader is done with it; a scraped chunk stays until its
 * real commit (or the final read), as that may add fragments. */
static void retire_if_done(struct trace_buffer *tb, struct tb_chunk *c)
{
	if (c->read_off >= c->payload_size &&
	    (!(c->h.flags & TB_RF_INCOMPLETE) || tb->is_final_read))
		tb_chunk_retire(tb, c, false);
}

/* Return: 1 with a packet of sequence @idx, 0 if it has none to give now. */
static int read_seq(struct trace_buffer *tb, uint32_t idx, struct tb_packet *out)
{
	struct tb_seq *s = &tb->seqs[idx];
	bool is_final = tb->is_final_read;
	uint32_t d_off = 0, len = 0, end, reason = 0;
	struct tb_chunk *c, *last = NULL;
	size_t n = 0;
	int r;

	for (;;) {
		if (s->head == TB_NIL)
			return 0;
		c = tb_chunk_at(tb, s->head);
		if (!(c->h.flags & TB_RF_ENTERED)) {
			if (s->has_last_read && c->chunk_id != s->last_read_id + 1)
				tb_add_loss(s, TB_LOSS_READ_GAP);
			c->h.flags |= TB_RF_ENTERED;
			tb_prefetch(tb_payload(c), c->payload_size);
		}
		if ((c->h.flags & TB_CHUNK_NEEDS_PATCHING) && !is_final)
			return 0;
		if (c->read_off >= c->payload_size) {
			if ((c->h.flags & TB_RF_INCOMPLETE) && !is_final)
				return 0;
			tb_chunk_retire(tb, c, false);
			continue;
		}
		/* Checked at copy time, but a patch may have rewritten a header. */
		if (tb_frag_parse(tb_payload(c), c->payload_size, c->read_off, &d_off, &len) != 1) {
			tb->stats.abi_violations++;
			tb_add_loss(s, TB_LOSS_CHUNK_CORRUPTED);
			c->read_off = c->payload_size;
			continue;
		}
		end = d_off + len;
		if (c->read_off == 0 && (c->h.flags & TB_CHUNK_FIRST_CONTINUES)) {
			/* The start of this packet was in a chunk we no longer have. */
			tb_add_loss(s, TB_LOSS_ORPHAN_CONTINUATION);
			c->read_off = end;
			continue;
		}
		if (end == c->payload_size && (c->h.flags & TB_CHUNK_LAST_CONTINUES)) {
			r = reassemble(tb, c, d_off, len, &n, &last, &reason);
			if (r < 0)
				return r;
			if (r == REASM_WAIT) {
				tb->stats.readaheads_failed++;
				if (!is_final)
					return 0;
				tb->stats.packets_dropped_final++;
				tb_add_loss(s, 0);
				c->read_off = end;
				continue;
			}
			if (r == REASM_LOST) {
				tb->stats.readaheads_failed++;
				tb_add_loss(s, reason);
				c->read_off = end;
				continue;
			}
			tb->stats.readaheads_succeeded++;
			emit(s, tb->slices, n, out);
			/* Every chunk before the last one is now read to its end. */
			while (tb_chunk_at(tb, s->head) != last) {
				c = tb_chunk_at(tb, s->head);
				c->h.flags |= TB_RF_ENTERED;
				c->read_off = c->payload_size;
				tb_chunk_retire(tb, c, false);
			}
			retire_if_done(tb, last);
			return 1;
		}
		c->read_off = end;
		if (len == 0) {
			retire_if_done(tb, c);
			continue;
		}
		tb->slices[0].data = tb_payload(c) + d_off;
		tb->slices[0].size = len;
		emit(s, tb->slices, 1, out);
		retire_if_done(tb, c);
		return 1;
	}
}

int tb_read_next_packet(struct trace_buffer *tb, struct tb_packet *out_packet)
{
	while (tb->rd_seq != TB_NIL) {
		uint32_t idx = tb->rd_seq;
		int r = read_seq(tb, idx, out_packet);

		if (r != 0)
			return r;
		/* A sequence that ran out of chunks already moved the cursor on. */
		if (tb->rd_seq == idx)
			tb->rd_seq = tb->seqs[idx].next;
	}
	return 0;
}

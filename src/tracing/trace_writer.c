// SPDX-License-Identifier: Apache-2.0
/*
 * trace_writer.c - one writer per thread streaming TracePackets straight into
 * SMB chunks through protozero. When a chunk fills mid-packet the grow
 * callback closes the fragment, moves size fields of still-open nested
 * messages into patch slots, returns the chunk to the arbiter and continues
 * in a new one. Lock-free except for that chunk switch; never allocates.
 */
#include "tracing/tracing_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/compiler.h"
#include "pb_fields.h"

/* Where packets go while the SMB is full (never read). */
#define TW_GARBAGE_BYTES 1024u
/* A packet is not started with less room than its header and this much. */
#define TW_MIN_PACKET_ROOM 8u

struct trace_writer {
	struct arbiter *arb;
	uint16_t writer_id;
	uint16_t target_buffer;
	enum arb_full_policy policy;
	uint32_t stall_timeout_ms;

	struct pz_stream s;
	struct pz_msg packet;
	struct smb_chunk chunk;
	uint32_t next_chunk_id;
	uint8_t *frag_hdr;   /* size field of the current fragment, or NULL */
	uint8_t *frag_start; /* first byte after it */
	bool has_chunk;
	bool is_packet_open;
	bool is_dropping;       /* writing into garbage */
	bool retry_after_packet; /* try for a chunk at the next packet */
	bool is_chunk_at_max;   /* SMB_MAX_PACKETS_PER_CHUNK reached */

	struct tw_stats stats;
	struct tw_patch_list patches;
	uint8_t garbage[TW_GARBAGE_BYTES];
};

static int tw_grow(struct pz_stream *s, void *user);

int tw_create(struct arbiter *arb, const struct tw_config *cfg, struct trace_writer **out)
{
	struct trace_writer *tw;
	int id;

	if (!arb || !cfg)
		return -EINVAL;
	tw = calloc(1, sizeof(*tw));
	if (!tw)
		return -ENOMEM;
	id = arb_writer_id_alloc(arb);
	if (id < 0) {
		free(tw);
		return id;
	}
	tw->arb = arb;
	tw->writer_id = (uint16_t)id;
	tw->target_buffer = cfg->target_buffer;
	tw->policy = cfg->policy;
	tw->stall_timeout_ms = cfg->stall_timeout_ms;
	tw->s.grow = tw_grow;
	tw->s.user = tw;
	/* An empty range: the first packet asks for a chunk. */
	tw->s.cur = tw->garbage;
	tw->s.end = tw->garbage;
	tw->packet.ended = true;
	*out = tw;
	return 0;
}

uint16_t tw_writer_id(const struct trace_writer *tw)
{
	return tw->writer_id;
}

void tw_get_stats(const struct trace_writer *tw, struct tw_stats *out)
{
	*out = tw->stats;
}

static bool in_chunk(const struct smb_chunk *c, const uint8_t *p)
{
	return p && p >= smb_chunk_payload(c) && p + PZ_SIZE_FIELD_BYTES <= c->begin + c->size;
}

static struct tw_patch_slot *patch_slot_alloc(struct tw_patch_list *pl)
{
	unsigned i;

	for (i = 0; i < TW_MAX_PATCH_SLOTS; i++) {
		if (!pl->slots[i].in_use) {
			pl->slots[i].in_use = true;
			memset(pl->slots[i].data, 0, sizeof(pl->slots[i].data));
			pl->n_in_use++;
			return &pl->slots[i];
		}
	}
	return NULL;
}

static void use_garbage(struct trace_writer *tw)
{
	tw->s.cur = tw->garbage;
	tw->s.end = tw->garbage + sizeof(tw->garbage);
}

static void return_chunk(struct trace_writer *tw)
{
	arb_chunk_return(tw->arb, &tw->chunk, tw->writer_id, tw->target_buffer, &tw->patches);
	tw->has_chunk = false;
	tw->stats.chunks_committed++;
}

/*
 * The SMB is full (or the patch pool is): abandon the packet being written,
 * if any, and write into garbage until a later packet finds a chunk.
 */
static void enter_drop_mode(struct trace_writer *tw, bool is_fragmenting)
{
	struct pz_msg *m;

	if (is_fragmenting && tw->has_chunk && tw->frag_hdr) {
		/* Too big to be a real fragment: the service discards the packet. */
		pz_write_redundant_varint(tw->frag_hdr, SMB_PACKET_SIZE_DROP);
		for (m = tw->packet.child; m; m = m->child)
			if (in_chunk(&tw->chunk, m->size_field))
				m->size_field = NULL;
	}
	if (tw->has_chunk)
		return_chunk(tw);
	if (is_fragmenting)
		tw->stats.packets_dropped++;
	/* Skip a chunk id once per episode so the service sees the loss even if
	 * it ignores previous_packet_dropped. */
	if (!tw->is_dropping)
		tw->next_chunk_id++;
	tw->is_dropping = true;
	tw->is_chunk_at_max = false;
	tw->frag_hdr = NULL;
	tw->frag_start = tw->garbage;
	use_garbage(tw);
}

/* Ends the current fragment in the old chunk and routes open size fields
 * that point into it to patch slots. */
static void close_fragment(struct trace_writer *tw)
{
	struct smb_chunk *c = &tw->chunk;
	bool needs_patching = false;
	struct pz_msg *m;

	pz_write_redundant_varint(tw->frag_hdr, (uint32_t)(tw->s.cur - tw->frag_start));
	for (m = tw->packet.child; m; m = m->child) {
		struct tw_patch_slot *slot;

		if (!in_chunk(c, m->size_field))
			continue; /* already in a patch slot */
		slot = patch_slot_alloc(&tw->patches);
		slot->chunk_id = atomic_load_explicit(&smb_chunk_header(c)->chunk_id,
						      memory_order_relaxed);
		slot->offset = (uint16_t)(m->size_field - smb_chunk_payload(c));
		m->size_field = slot->data;
		needs_patching = true;
	}
	smb_chunk_set_flags(c, SMB_CHUNK_LAST_CONTINUES |
				       (needs_patching ? SMB_CHUNK_NEEDS_PATCHING : 0));
}

static unsigned count_open_in_chunk(const struct trace_writer *tw)
{
	const struct pz_msg *m;
	unsigned n = 0;

	for (m = tw->packet.child; m; m = m->child)
		n += in_chunk(&tw->chunk, m->size_field);
	return n;
}

/* Moves the stream to a new chunk; @is_fragmenting when a packet continues. */
static void switch_chunk(struct trace_writer *tw, bool is_fragmenting)
{
	struct smb_chunk_init init;
	struct smb_chunk next;
	bool is_patch_pool_full = false;
	uint8_t *p;
	int err;

	if (is_fragmenting && tw->is_dropping) {
		/* Part of this packet is already lost: keep dropping until it ends. */
		tw->retry_after_packet = true;
		use_garbage(tw);
		return;
	}
	if (is_fragmenting && tw->has_chunk)
		is_patch_pool_full =
			count_open_in_chunk(tw) > TW_MAX_PATCH_SLOTS - tw->patches.n_in_use;

	init.chunk_id = tw->next_chunk_id;
	init.writer_id = tw->writer_id;
	init.packets = is_fragmenting ? smb_packets_pack(1, SMB_CHUNK_FIRST_CONTINUES) : 0;
	err = is_patch_pool_full ? -ENOSPC
				 : arb_chunk_acquire(tw->arb, &init, tw->policy,
						     tw->stall_timeout_ms, &next);
	if (err < 0) {
		enter_drop_mode(tw, is_fragmenting);
		tw->retry_after_packet = is_patch_pool_full;
		return;
	}
	if (is_fragmenting && tw->has_chunk)
		close_fragment(tw);
	if (tw->has_chunk)
		return_chunk(tw);

	tw->chunk = next;
	tw->has_chunk = true;
	tw->next_chunk_id++;
	tw->is_dropping = false;
	tw->retry_after_packet = false;
	tw->is_chunk_at_max = false;
	p = smb_chunk_payload(&next);
	if (is_fragmenting) {
		tw->frag_hdr = p;
		memset(p, 0, SMB_PACKET_HEADER_SIZE);
		p += SMB_PACKET_HEADER_SIZE;
		tw->frag_start = p;
	}
	tw->s.cur = p;
	tw->s.end = next.begin + next.size;
}

static int tw_grow(struct pz_stream *s, void *user)
{
	struct trace_writer *tw = user;

	(void)s;
	switch_chunk(tw, tw->is_packet_open);
	return 0;
}

static void send_ready_patches(struct trace_writer *tw)
{
	unsigned i;

	if (!tw->patches.n_in_use)
		return;
	for (i = 0; i < TW_MAX_PATCH_SLOTS; i++) {
		if (tw_patch_slot_ready(&tw->patches.slots[i])) {
			arb_chunk_return(tw->arb, NULL, tw->writer_id, tw->target_buffer,
					 &tw->patches);
			return;
		}
	}
}

void tw_finish_packet(struct trace_writer *tw)
{
	if (!tw->is_packet_open)
		return;
	pz_end(&tw->packet);
	if (!tw->is_dropping && tw->frag_hdr)
		pz_write_redundant_varint(tw->frag_hdr, (uint32_t)(tw->s.cur - tw->frag_start));
	tw->is_packet_open = false;
	tw->frag_hdr = NULL;
	/* The packet's nested messages are all closed now, so the patches made
	 * when it crossed chunks are complete: let the service read them. */
	send_ready_patches(tw);
}

struct pz_msg *tw_new_packet(struct trace_writer *tw)
{
	bool was_dropping;
	size_t room;

	tw_finish_packet(tw);
	was_dropping = tw->is_dropping;
	room = (size_t)(tw->s.end - tw->s.cur);
	if ((!tw->has_chunk && !tw->is_dropping) ||
	    room < SMB_PACKET_HEADER_SIZE + TW_MIN_PACKET_ROOM || tw->is_chunk_at_max ||
	    tw->retry_after_packet)
		switch_chunk(tw, false);

	tw->frag_hdr = tw->s.cur;
	memset(tw->s.cur, 0, SMB_PACKET_HEADER_SIZE);
	tw->s.cur += SMB_PACKET_HEADER_SIZE;
	tw->frag_start = tw->s.cur;
	tw->s.err = 0;
	pz_msg_begin(&tw->packet, &tw->s, NULL);
	tw->is_packet_open = true;

	if (tw->is_dropping) {
		tw->frag_hdr = NULL;
		tw->stats.packets_dropped++;
		return &tw->packet;
	}
	tw->is_chunk_at_max = smb_chunk_inc_packet_count(&tw->chunk) >= SMB_MAX_PACKETS_PER_CHUNK;
	tw->stats.packets_written++;
	if (was_dropping)
		pz_append_bool(&tw->packet, PB_TRACE_PACKET__PREVIOUS_PACKET_DROPPED, true);
	return &tw->packet;
}

void tw_flush(struct trace_writer *tw)
{
	tw_finish_packet(tw);
	if (tw->has_chunk)
		return_chunk(tw);
	/* An empty range: the next packet asks for a chunk, even after drops. */
	tw->s.cur = tw->garbage;
	tw->s.end = tw->garbage;
	send_ready_patches(tw);
	arb_commit_pending(tw->arb);
}

void tw_destroy(struct trace_writer *tw)
{
	if (!tw)
		return;
	tw_flush(tw);
	arb_writer_id_free(tw->arb, tw->writer_id);
	free(tw);
}

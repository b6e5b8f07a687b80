// SPDX-License-Identifier: Apache-2.0
/*
 * smb_abi.c - page partitioning, chunk state transitions (lock-free CAS on the
 * page header bitmap) and the bounds-checked chunk fragment parser. Called by
 * the arbiter and trace writers on the producer side and by the service on
 * memory it must not trust; nothing here allocates or blocks.
 */
#include "tracing/smb_abi.h"

#include <errno.h>
#include <string.h>

static const uint8_t k_chunks_for_layout[8] = {0, 1, 2, 4, 7, 14, 0, 0};

unsigned smb_layout_n_chunks(unsigned layout)
{
	return layout < 8 ? k_chunks_for_layout[layout] : 0;
}

uint32_t smb_chunk_size_for_layout(size_t page_size, unsigned layout)
{
	unsigned n = smb_layout_n_chunks(layout);

	if (!n || page_size < SMB_PAGE_HEADER_SIZE)
		return 0;
	return (uint32_t)(((page_size - SMB_PAGE_HEADER_SIZE) / n) & ~(size_t)(SMB_CHUNK_ALIGN - 1));
}

int smb_init(struct smb *smb, void *base, size_t size, size_t page_size)
{
	if (!base || page_size < SMB_MIN_PAGE_SIZE || page_size > SMB_MAX_PAGE_SIZE ||
	    page_size % SMB_MIN_PAGE_SIZE || size == 0 || size % page_size)
		return -EINVAL;
	smb->base = base;
	smb->size = size;
	smb->page_size = page_size;
	smb->n_pages = size / page_size;
	return 0;
}

uint32_t smb_page_bitmap(const struct smb *smb, size_t page)
{
	if (page >= smb->n_pages)
		return 0;
	return atomic_load_explicit(&smb_page_header(smb, page)->header_bitmap,
				    memory_order_acquire);
}

bool smb_page_is_free(const struct smb *smb, size_t page)
{
	return page < smb->n_pages &&
	       atomic_load_explicit(&smb_page_header(smb, page)->header_bitmap,
				    memory_order_relaxed) == 0;
}

uint32_t smb_page_free_chunks(const struct smb *smb, size_t page)
{
	uint32_t bitmap = smb_page_bitmap(smb, page);
	unsigned n = smb_layout_n_chunks(smb_bitmap_layout(bitmap));
	uint32_t res = 0;
	unsigned i;

	for (i = 0; i < n; i++)
		if (smb_bitmap_chunk_state(bitmap, i) == SMB_CHUNK_FREE)
			res |= 1u << i;
	return res;
}

int smb_page_try_partition(const struct smb *smb, size_t page, enum smb_layout layout)
{
	uint32_t expected = 0;
	uint32_t next;

	if (page >= smb->n_pages || layout < SMB_LAYOUT_DIV1 || layout > SMB_LAYOUT_DIV14)
		return -EINVAL;
	/* All chunk states become Free (0) together with the layout. */
	next = ((uint32_t)layout << SMB_LAYOUT_SHIFT) & SMB_LAYOUT_MASK;
	if (!atomic_compare_exchange_strong_explicit(&smb_page_header(smb, page)->header_bitmap,
						     &expected, next, memory_order_acq_rel,
						     memory_order_relaxed))
		return -EBUSY;
	return 0;
}

int smb_chunk_resolve(const struct smb *smb, size_t page, size_t idx, struct smb_chunk *out)
{
	uint32_t bitmap, chunk_size;
	unsigned layout, n;
	size_t off;

	if (page >= smb->n_pages || idx >= SMB_MAX_CHUNKS_PER_PAGE)
		return -ERANGE;
	bitmap = smb_page_bitmap(smb, page);
	layout = smb_bitmap_layout(bitmap);
	n = smb_layout_n_chunks(layout);
	if (n == 0)
		return -EBADMSG;
	if (idx >= n)
		return -ERANGE;
	chunk_size = smb_chunk_size_for_layout(smb->page_size, layout);
	off = page * smb->page_size + SMB_PAGE_HEADER_SIZE + idx * chunk_size;
	/* Holds by construction; kept because the geometry came from a peer. */
	if (chunk_size < SMB_CHUNK_HEADER_SIZE || off + chunk_size > smb->size)
		return -ERANGE;
	out->begin = smb->base + off;
	out->size = chunk_size;
	out->page = (uint32_t)page;
	out->idx = (uint32_t)idx;
	return 0;
}

/*
 * Moves chunk @idx of @page from @from to @to with one CAS, retrying while
 * other chunks of the page change underneath. When @to is Free and every
 * chunk ends up Free, the page goes back to "not partitioned".
 */
static int chunk_transition(const struct smb *smb, size_t page, size_t idx, unsigned layout,
			    enum smb_chunk_state from, enum smb_chunk_state to)
{
	_Atomic uint32_t *bm = &smb_page_header(smb, page)->header_bitmap;
	uint32_t cur = atomic_load_explicit(bm, memory_order_relaxed);
	unsigned shift = (unsigned)idx * SMB_CHUNK_STATE_BITS;
	uint32_t next;

	for (;;) {
		if (layout != SMB_LAYOUT_NONE && smb_bitmap_layout(cur) != layout)
			return -EBUSY;
		if (idx >= smb_layout_n_chunks(smb_bitmap_layout(cur)))
			return -EBUSY;
		if (smb_bitmap_chunk_state(cur, (unsigned)idx) != from)
			return -EBUSY;
		next = (cur & ~(SMB_CHUNK_STATE_MASK << shift)) | ((uint32_t)to << shift);
		if (to == SMB_CHUNK_FREE && (next & SMB_ALL_CHUNKS_MASK) == 0)
			next = 0;
		if (atomic_compare_exchange_weak_explicit(bm, &cur, next, memory_order_acq_rel,
							  memory_order_relaxed))
			return 0;
	}
}

int smb_chunk_try_acquire_write(const struct smb *smb, size_t page, size_t idx,
				const struct smb_chunk_init *init, struct smb_chunk *out)
{
	struct smb_chunk c;
	struct smb_chunk_header *h;
	int err;

	if (!init || init->writer_id == 0 || init->writer_id > SMB_MAX_WRITER_ID)
		return -EINVAL;
	err = smb_chunk_resolve(smb, page, idx, &c);
	if (err < 0)
		return err == -EBADMSG ? -EBUSY : err;
	err = chunk_transition(smb, page, idx, SMB_LAYOUT_NONE, SMB_CHUNK_FREE,
			       SMB_CHUNK_BEING_WRITTEN);
	if (err < 0)
		return err;
	/* The page may have been repartitioned between resolve and the CAS only
	 * if every chunk was freed, which cannot happen once we own one. Resolve
	 * again to use the layout our CAS actually saw. */
	err = smb_chunk_resolve(smb, page, idx, &c);
	if (err < 0)
		return err;
	h = smb_chunk_header(&c);
	atomic_store_explicit(&h->packets, init->packets, memory_order_relaxed);
	atomic_store_explicit(&h->writer_id, init->writer_id, memory_order_relaxed);
	atomic_store_explicit(&h->chunk_id, init->chunk_id, memory_order_release);
	*out = c;
	return 0;
}

int smb_chunk_mark_complete(const struct smb *smb, const struct smb_chunk *c)
{
	return chunk_transition(smb, c->page, c->idx, SMB_LAYOUT_NONE, SMB_CHUNK_BEING_WRITTEN,
				SMB_CHUNK_COMPLETE) < 0 ? -EINVAL : 0;
}

int smb_chunk_try_acquire_read(const struct smb *smb, size_t page, size_t idx,
			       struct smb_chunk *out)
{
	struct smb_chunk c;
	uint32_t bitmap;
	int err;

	err = smb_chunk_resolve(smb, page, idx, &c);
	if (err < 0)
		return err;
	bitmap = smb_page_bitmap(smb, page);
	err = chunk_transition(smb, page, idx, smb_bitmap_layout(bitmap), SMB_CHUNK_COMPLETE,
			       SMB_CHUNK_BEING_READ);
	if (err < 0)
		return err;
	*out = c;
	return 0;
}

int smb_chunk_release_free(const struct smb *smb, const struct smb_chunk *c)
{
	return chunk_transition(smb, c->page, c->idx, SMB_LAYOUT_NONE, SMB_CHUNK_BEING_READ,
				SMB_CHUNK_FREE) < 0 ? -EINVAL : 0;
}

int smb_chunk_free_emulated(const struct smb *smb, const struct smb_chunk *c)
{
	return chunk_transition(smb, c->page, c->idx, SMB_LAYOUT_NONE, SMB_CHUNK_COMPLETE,
				SMB_CHUNK_FREE) < 0 ? -EINVAL : 0;
}

int smb_chunk_state(const struct smb *smb, size_t page, size_t idx)
{
	struct smb_chunk c;
	int err = smb_chunk_resolve(smb, page, idx, &c);

	if (err < 0)
		return err;
	return (int)smb_bitmap_chunk_state(smb_page_bitmap(smb, page), (unsigned)idx);
}

unsigned smb_chunk_inc_packet_count(const struct smb_chunk *c)
{
	_Atomic uint16_t *p = &smb_chunk_header(c)->packets;
	uint16_t v = atomic_load_explicit(p, memory_order_relaxed);
	unsigned count = smb_packets_count(v) + 1;

	/* Only this chunk's writer stores here, so load + store is enough. */
	atomic_store_explicit(p, smb_packets_pack(count, smb_packets_flags(v)),
			      memory_order_release);
	return count;
}

void smb_chunk_set_flags(const struct smb_chunk *c, unsigned flags)
{
	_Atomic uint16_t *p = &smb_chunk_header(c)->packets;
	uint16_t v = atomic_load_explicit(p, memory_order_relaxed);

	atomic_store_explicit(p, (uint16_t)(v | (flags << SMB_PACKET_FLAGS_SHIFT)),
			      memory_order_release);
}

/* ------------------------------------------------ fragment parsing ---- */

int smb_chunk_parse(struct smb_frag_iter *it, const uint8_t *chunk, size_t size)
{
	uint8_t h[SMB_CHUNK_HEADER_SIZE];
	uint16_t packets;

	memset(it, 0, sizeof(*it));
	if (!chunk || size < SMB_CHUNK_HEADER_SIZE || size > SMB_MAX_PAGE_SIZE)
		return -EBADMSG;
	/* One snapshot of the header: the producer may still change it. */
	memcpy(h, chunk, sizeof(h));
	it->info.chunk_id = (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 |
			    (uint32_t)h[3] << 24;
	it->info.writer_id = (uint16_t)(h[4] | h[5] << 8);
	packets = (uint16_t)(h[6] | h[7] << 8);
	it->info.n_packets = (uint16_t)smb_packets_count(packets);
	/* Flag bits we do not know may come from a newer producer: ignore them. */
	it->info.flags = (uint8_t)(smb_packets_flags(packets) & SMB_CHUNK_KNOWN_FLAGS);
	if (it->info.writer_id == 0 || it->info.writer_id > SMB_MAX_WRITER_ID)
		return -EBADMSG;
	/* Every fragment needs at least a 1-byte size (a 4-byte one from our
	 * writers); a count the payload cannot hold is a lie. */
	if ((size_t)it->info.n_packets > size - SMB_CHUNK_HEADER_SIZE)
		return -EBADMSG;
	it->p = chunk + SMB_CHUNK_HEADER_SIZE;
	it->end = chunk + size;
	it->done = it->info.n_packets == 0;
	return 0;
}

int smb_frag_next(struct smb_frag_iter *it, struct smb_frag *out)
{
	const uint8_t *p = it->p;
	const uint8_t *hdr_end;
	uint32_t size = 0;
	unsigned shift = 0;
	bool terminated = false;

	if (it->done)
		return 0;
	hdr_end = (size_t)(it->end - p) < SMB_PACKET_HEADER_SIZE ? it->end
								 : p + SMB_PACKET_HEADER_SIZE;
	while (p < hdr_end) {
		uint8_t b = *p++;

		size |= (uint32_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			terminated = true;
			break;
		}
	}
	if (!terminated) {
		it->done = true;
		return -EBADMSG;
	}
	memset(out, 0, sizeof(*out));
	out->continues_prev = it->idx == 0 && (it->info.flags & SMB_CHUNK_FIRST_CONTINUES);
	if (size == SMB_PACKET_SIZE_DROP) {
		out->data = p;
		out->is_dropped = true;
		it->done = true;
		return 1;
	}
	if (size > (size_t)(it->end - p)) {
		it->done = true;
		return -EBADMSG;
	}
	out->data = p;
	out->size = size;
	it->p = p + size;
	it->idx++;
	if (it->idx == it->info.n_packets) {
		it->done = true;
		out->continues_next = (it->info.flags & SMB_CHUNK_LAST_CONTINUES) != 0;
	}
	return 1;
}

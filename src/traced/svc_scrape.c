// SPDX-License-Identifier: Apache-2.0
/*
 * svc_scrape.c - SMB scraping: copies the chunks a producer wrote but did
 * not (yet) commit from its shared memory buffer into the session's
 * buffers, as Perfetto does when a flush completes or times out, when the
 * producer disconnects and when a session stops. Complete chunks are
 * copied whole; a chunk still being written is copied without its last
 * packet (which the writer may be in the middle of), and a later commit of
 * the same chunk replaces the copy. Only producers that asked for it
 * (InitializeConnection.smb_scraping_mode) are scraped. The SMB is
 * untrusted and may change under us: every page and chunk bound is checked
 * here, and the trace buffer validates the fragments again on read.
 */
#include "traced/svc_int.h"

#include <stdatomic.h>

#include "base/log.h"
#include "tracing/smb_abi.h"

/* True if @p has a data source instance in @s. */
static bool in_session(const struct svc_session *s, const struct svc_producer *p)
{
	size_t i;

	for (i = 0; i < s->n_instances; i++) {
		if (s->instances[i].producer_id == p->id)
			return true;
	}
	return false;
}

/* The buffer of @s that writer @writer_id of @p writes into, or NULL. */
static struct trace_buffer *writer_buffer(struct svc *svc, const struct svc_session *s,
					  const struct svc_producer *p, uint16_t writer_id)
{
	struct svc_session *owner = NULL;
	struct svc_buffer *b;
	uint64_t global_id;

	if (!hmap_get(&p->writer_buffers, writer_id, &global_id) || global_id > UINT32_MAX)
		return NULL;
	b = svc_buffer_by_global_id(svc, (uint32_t)global_id, &owner);
	return b && owner == s ? b->tb : NULL;
}

/*
 * Copies one used chunk of page @page (whose header read @bitmap) if it
 * holds something to keep. Return: 1 if copied, 0 if not.
 */
static int scrape_chunk(struct svc *svc, struct svc_session *s, struct svc_producer *p,
			size_t page, uint32_t bitmap, unsigned idx)
{
	const struct smb *smb = &p->smb_view;
	enum smb_chunk_state state = smb_bitmap_chunk_state(bitmap, idx);
	struct tb_client client = {p->id, (uint32_t)p->uid, (int32_t)p->pid, p->machine_id};
	struct smb_chunk_header *h;
	struct trace_buffer *tb;
	uint32_t chunk_size, chunk_id;
	uint16_t packets, writer_id;
	unsigned count;
	size_t off;
	bool is_complete;

	if (state != SMB_CHUNK_BEING_WRITTEN && state != SMB_CHUNK_COMPLETE)
		return 0;
	is_complete = state == SMB_CHUNK_COMPLETE;
	chunk_size = smb_chunk_size_for_layout(smb->page_size, smb_bitmap_layout(bitmap));
	off = page * smb->page_size + SMB_PAGE_HEADER_SIZE + (size_t)idx * chunk_size;
	if (chunk_size <= SMB_CHUNK_HEADER_SIZE || off + chunk_size > smb->size)
		return 0;
	h = (struct smb_chunk_header *)(smb->base + off);
	/* Acquire: the header fields were stored before the count went up. */
	packets = atomic_load_explicit(&h->packets, memory_order_acquire);
	count = smb_packets_count(packets);
	/* The count includes the packet being written: a chunk still being
	 * written is worth copying only once one packet in it is whole. A
	 * Complete one is copied even when empty, so its id leaves no gap. */
	if (!is_complete && count < 2)
		return 0;
	writer_id = atomic_load_explicit(&h->writer_id, memory_order_relaxed);
	chunk_id = atomic_load_explicit(&h->chunk_id, memory_order_relaxed);
	if (writer_id == 0 || writer_id > SMB_MAX_WRITER_ID)
		return 0;
	tb = writer_buffer(svc, s, p, writer_id);
	if (!tb)
		return 0;
	/* Errors (ABI violations, a full DISCARD buffer) are counted by the buffer. */
	tb_copy_chunk(tb, &client, writer_id, chunk_id, (uint16_t)count,
		      (uint8_t)smb_packets_flags(packets), smb->base + off + SMB_CHUNK_HEADER_SIZE,
		      chunk_size - SMB_CHUNK_HEADER_SIZE, is_complete);
	return 1;
}

size_t svc_scrape_producer(struct svc *svc, struct svc_session *s, struct svc_producer *p)
{
	const struct smb *smb = &p->smb_view;
	size_t page, n = 0;

	if (!p->smb_scraping || !p->smb || p->emulation || s->is_clone ||
	    s->state == SESSION_STOPPED)
		return 0;
	if (hmap_len(&p->writer_buffers) == 0 || !in_session(s, p))
		return 0;
	/* n_pages and page_size are ours (from the mapping), not the producer's. */
	for (page = 0; page < smb->n_pages; page++) {
		uint32_t bitmap = smb_page_bitmap(smb, page);
		unsigned idx, n_chunks = smb_layout_n_chunks(smb_bitmap_layout(bitmap));

		for (idx = 0; idx < n_chunks; idx++)
			n += (size_t)scrape_chunk(svc, s, p, page, bitmap, idx);
	}
	if (n) {
		s->chunks_scraped += n;
		LOG_D("session %llu: scraped %zu chunks of producer %u",
		      (unsigned long long)s->id, n, p->id);
	}
	return n;
}

void svc_scrape_session(struct svc *svc, struct svc_session *s)
{
	struct svc_producer *p;

	for (p = svc->producers; p; p = p->next)
		svc_scrape_producer(svc, s, p);
}

void svc_scrape_on_producer_gone(struct svc *svc, struct svc_producer *p)
{
	struct svc_session *s;
	size_t n = 0;

	for (s = svc->sessions; s; s = s->next)
		n += svc_scrape_producer(svc, s, p);
	if (n)
		LOG_I("producer %u gone: scraped %zu uncommitted chunks from its SMB", p->id, n);
}

// SPDX-License-Identifier: Apache-2.0
/*
 * svc_commit.c - CommitData: moves the chunks a producer finished from its
 * shared memory buffer (or, with SMB emulation, from the request itself)
 * into the sessions' central buffers, then applies patches and acks
 * flushes. The producer is untrusted: indices, states, headers and target
 * buffers are all checked. Chunk bytes go from shared memory straight into
 * the trace buffer, which checks them again when it reads them back, so a
 * producer rewriting them meanwhile only garbles its own data.
 */
#include "traced/svc_int.h"

#include <errno.h>
#include <string.h>

#include "base/log.h"

/* True if @p has a data source instance in the session that owns @global_id. */
static struct trace_buffer *allowed_buffer(struct svc *svc, struct svc_producer *p,
					   uint32_t global_id)
{
	struct svc_session *s = NULL;
	struct svc_buffer *b = svc_buffer_by_global_id(svc, global_id, &s);
	size_t i;

	if (!b || s->is_clone || s->state == SESSION_STOPPED)
		return NULL;
	for (i = 0; i < s->n_instances; i++) {
		if (s->instances[i].producer_id == p->id)
			return b->tb;
	}
	return NULL;
}

static uint32_t load_u32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static uint16_t load_u16(const uint8_t *b)
{
	return (uint16_t)(b[0] | b[1] << 8);
}

static void copy_chunk(struct svc_producer *p, struct trace_buffer *tb,
		       const uint8_t *chunk, size_t size, bool complete)
{
	struct tb_client client = {p->id, (uint32_t)p->uid, (int32_t)p->pid, p->machine_id};
	uint32_t chunk_id;
	uint16_t writer_id, packets;

	if (size < sizeof(struct smb_chunk_header)) {
		tb_note_abi_violation(tb);
		return;
	}
	chunk_id = load_u32(chunk);
	writer_id = load_u16(chunk + 4);
	packets = load_u16(chunk + 6);
	if (writer_id == 0) {
		tb_note_abi_violation(tb);
		return;
	}
	/* ABI violations and DISCARD drops are counted by the buffer itself. */
	tb_copy_chunk(tb, &client, writer_id, chunk_id, (uint16_t)smb_packets_count(packets),
			   (uint8_t)smb_packets_flags(packets), chunk + sizeof(struct smb_chunk_header),
		      size - sizeof(struct smb_chunk_header), complete);
}

/* A chunk the producer marked complete in its SMB: copy it out, then free it. */
static void move_from_smb(struct svc_producer *p, struct trace_buffer *tb,
			  uint32_t page, uint32_t idx)
{
	struct smb_chunk c;
	int rc;

	if (!p->smb) {
		tb_note_abi_violation(tb);
		return;
	}
	rc = smb_chunk_resolve(&p->smb_view, page, idx, &c);
	if (rc == 0)
		rc = smb_chunk_try_acquire_read(&p->smb_view, page, idx, &c);
	if (rc < 0) {
		/* Counted where the trace will show it: the target buffer's stats. */
		tb_note_abi_violation(tb);
		return;
	}
	if (tb)
		copy_chunk(p, tb, c.begin, c.size, true);
	smb_chunk_release_free(&p->smb_view, &c);
}

static void apply_patches(struct svc *svc, struct svc_producer *p,
			  const Perfetto__Protos__CommitDataRequest__ChunkToPatch *cp)
{
	struct trace_buffer *tb = allowed_buffer(svc, p, cp->target_buffer);
	size_t i;

	if (!tb || cp->writer_id == 0 || cp->writer_id > 0xffff) {
		svc->patches_discarded += cp->n_patches;
		return;
	}
	for (i = 0; i < cp->n_patches; i++) {
		const Perfetto__Protos__CommitDataRequest__ChunkToPatch__Patch *pt = cp->patches[i];
		bool more = i + 1 < cp->n_patches || (cp->has_has_more_patches && cp->has_more_patches);

		if (!pt->has_data || pt->data.len != TB_PATCH_SIZE) {
			svc->patches_discarded++;
			continue;
		}
		tb_try_patch(tb, p->id, (uint16_t)cp->writer_id, cp->chunk_id, pt->offset,
			     pt->data.data, more);
	}
}

void svc_commit_data(struct svc *svc, struct svc_producer *p,
		     const Perfetto__Protos__CommitDataRequest *req)
{
	size_t i;

	for (i = 0; i < req->n_chunks_to_move; i++) {
		const Perfetto__Protos__CommitDataRequest__ChunksToMove *m = req->chunks_to_move[i];
		struct trace_buffer *tb = allowed_buffer(svc, p, m->target_buffer);

		if (m->has_data) {
			/* SMB emulation: the whole chunk, header included, is inline. */
			bool complete = !(m->has_chunk_incomplete && m->chunk_incomplete);

			if (tb)
				copy_chunk(p, tb, m->data.data, m->data.len, complete);
			else
				svc->chunks_discarded++;
			continue;
		}
		/* Free the chunk even when its target is gone, or the producer stalls. */
		if (!tb)
			svc->chunks_discarded++;
		move_from_smb(p, tb, m->page, m->chunk);
	}
	for (i = 0; i < req->n_chunks_to_patch; i++)
		apply_patches(svc, p, req->chunks_to_patch[i]);
	if (req->has_flush_request_id && req->flush_request_id)
		svc_flush_on_ack(svc, p->id, req->flush_request_id);
}

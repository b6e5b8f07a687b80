// SPDX-License-Identifier: Apache-2.0
/*
 * arbiter.c - the producer-side owner of an SMB: hands free chunks to trace
 * writers (one mutex, taken only when a writer changes chunks), allocates
 * writer ids, and batches completed chunks and patches into one preallocated
 * CommitDataRequest that goes to the embedder through commit_cb. In emulation
 * mode chunk bytes are copied into the request and the chunk freed at once.
 */
#include "tracing/tracing_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/compiler.h"

/* Upper bounds of the serialized size of each part of a request. */
#define EST_REQUEST_BYTES 16u
#define EST_MOVE_BYTES 32u
#define EST_CTP_BYTES 32u
#define EST_PATCH_BYTES 16u
#define STALL_MAX_SLEEP_US 100000u

struct arbiter {
	struct smb smb;
	enum smb_layout layout;
	bool is_emulation;
	bool batch_commits;
	size_t commit_at_bytes;
	arb_commit_cb commit_cb;
	arb_schedule_cb schedule_cb;
	void *user;

	pthread_mutex_t lock; /* everything below */
	size_t next_page;
	uint16_t last_writer_id;
	uint8_t writer_ids[(SMB_MAX_WRITER_ID + 8) / 8];

	/* The batch being built; storage sized at create time. */
	struct Perfetto__Protos__CommitDataRequest req;
	struct Perfetto__Protos__CommitDataRequest__ChunksToMove *moves;
	struct Perfetto__Protos__CommitDataRequest__ChunksToMove **move_ptrs;
	size_t n_moves;
	size_t cap_moves;
	struct Perfetto__Protos__CommitDataRequest__ChunkToPatch ctps[ARB_MAX_PATCHES];
	struct Perfetto__Protos__CommitDataRequest__ChunkToPatch *ctp_ptrs[ARB_MAX_PATCHES];
	size_t n_ctps;
	struct Perfetto__Protos__CommitDataRequest__ChunkToPatch__Patch patches[ARB_MAX_PATCHES];
	struct Perfetto__Protos__CommitDataRequest__ChunkToPatch__Patch *patch_ptrs[ARB_MAX_PATCHES];
	uint8_t patch_data[ARB_MAX_PATCHES][PZ_SIZE_FIELD_BYTES];
	size_t n_patches;
	uint8_t *data; /* emulation: chunk copies, ARB_MAX_COMMIT_BYTES */
	size_t data_used;
	size_t est_bytes;
	size_t smb_bytes_pending;
	bool is_scheduled;

	struct arb_stats stats;
};

int arb_create(const struct arb_config *cfg, struct arbiter **out)
{
	struct arbiter *arb = NULL;
	enum smb_layout layout;
	size_t n_chunks;
	int err;

	if (!cfg || !cfg->commit_cb)
		return -EINVAL;
	layout = cfg->layout ? cfg->layout : SMB_LAYOUT_DIV1;
	if (layout > SMB_LAYOUT_DIV14 || shm_check_size(cfg->smb_size, cfg->page_size) < 0)
		return -EINVAL;
	arb = calloc(1, sizeof(*arb));
	if (!arb)
		return -ENOMEM;
	err = smb_init(&arb->smb, cfg->smb_base, cfg->smb_size, cfg->page_size);
	if (err < 0)
		goto fail;
	arb->layout = layout;
	arb->is_emulation = cfg->is_emulation;
	arb->batch_commits = cfg->batch_commits;
	arb->commit_at_bytes = cfg->commit_at_bytes;
	if (arb->commit_at_bytes == 0 || arb->commit_at_bytes > arb->smb.size / 2)
		arb->commit_at_bytes = arb->smb.size / 2;
	arb->commit_cb = cfg->commit_cb;
	arb->schedule_cb = cfg->schedule_cb;
	arb->user = cfg->user;

	/* A chunk is in the batch at most once until the service frees it, and
	 * in emulation mode the byte limit caps the batch first. */
	n_chunks = arb->smb.n_pages * smb_layout_n_chunks(layout);
	arb->cap_moves = n_chunks;
	err = -ENOMEM;
	arb->moves = calloc(n_chunks, sizeof(*arb->moves));
	arb->move_ptrs = calloc(n_chunks, sizeof(*arb->move_ptrs));
	if (!arb->moves || !arb->move_ptrs)
		goto fail;
	if (arb->is_emulation) {
		arb->data = malloc(ARB_MAX_COMMIT_BYTES);
		if (!arb->data)
			goto fail;
	}
	if (pthread_mutex_init(&arb->lock, NULL) != 0)
		goto fail;
	arb->est_bytes = EST_REQUEST_BYTES;
	*out = arb;
	return 0;
fail:
	free(arb->data);
	free(arb->moves);
	free(arb->move_ptrs);
	free(arb);
	return err;
}

void arb_destroy(struct arbiter *arb)
{
	if (!arb)
		return;
	pthread_mutex_destroy(&arb->lock);
	free(arb->data);
	free(arb->moves);
	free(arb->move_ptrs);
	free(arb);
}

const struct smb *arb_smb(const struct arbiter *arb)
{
	return &arb->smb;
}

void arb_get_stats(struct arbiter *arb, struct arb_stats *out)
{
	pthread_mutex_lock(&arb->lock);
	*out = arb->stats;
	pthread_mutex_unlock(&arb->lock);
}

int arb_writer_id_alloc(struct arbiter *arb)
{
	unsigned i, id;
	int res = -EBUSY;

	pthread_mutex_lock(&arb->lock);
	/* Cycle through ids so a just-released id is not reused at once: the
	 * service may still hold chunks of the old writer. */
	for (i = 0; i < SMB_MAX_WRITER_ID; i++) {
		id = (arb->last_writer_id + i) % SMB_MAX_WRITER_ID + 1;
		if (!(arb->writer_ids[id / 8] & (1u << (id % 8)))) {
			arb->writer_ids[id / 8] |= (uint8_t)(1u << (id % 8));
			arb->last_writer_id = (uint16_t)id;
			res = (int)id;
			break;
		}
	}
	pthread_mutex_unlock(&arb->lock);
	return res;
}

void arb_writer_id_free(struct arbiter *arb, uint16_t writer_id)
{
	if (writer_id == 0 || writer_id > SMB_MAX_WRITER_ID)
		return;
	pthread_mutex_lock(&arb->lock);
	arb->writer_ids[writer_id / 8] &= (uint8_t)~(1u << (writer_id % 8));
	pthread_mutex_unlock(&arb->lock);
}

/* ------------------------------------------------------- batching ---- */

static bool batch_is_empty(const struct arbiter *arb)
{
	return arb->n_moves == 0 && arb->n_ctps == 0;
}

static void batch_reset(struct arbiter *arb)
{
	arb->n_moves = 0;
	arb->n_ctps = 0;
	arb->n_patches = 0;
	arb->data_used = 0;
	arb->est_bytes = EST_REQUEST_BYTES;
	arb->smb_bytes_pending = 0;
	arb->is_scheduled = false;
}

static void commit_locked(struct arbiter *arb, bool has_flush_id, uint64_t flush_request_id)
{
	struct Perfetto__Protos__CommitDataRequest *req = &arb->req;

	perfetto__protos__commit_data_request__init(req);
	req->n_chunks_to_move = arb->n_moves;
	req->chunks_to_move = arb->n_moves ? arb->move_ptrs : NULL;
	req->n_chunks_to_patch = arb->n_ctps;
	req->chunks_to_patch = arb->n_ctps ? arb->ctp_ptrs : NULL;
	req->has_flush_request_id = has_flush_id;
	req->flush_request_id = flush_request_id;
	arb->stats.commits++;
	arb->stats.chunks_committed += arb->n_moves;
	if (arb->commit_cb(req, arb->user) < 0 && arb->is_emulation) {
		size_t i;

		/* Not taken: nothing will release these chunks later. */
		arb->stats.chunks_dropped += arb->n_moves;
		for (i = 0; i < arb->n_moves; i++)
			arb_emulated_release(arb, arb->moves[i].page, arb->moves[i].chunk);
	}
	batch_reset(arb);
}

/* Commits first if @move_bytes more and @n_patches more would not fit. */
static void ensure_room(struct arbiter *arb, size_t move_bytes, size_t n_patches)
{
	size_t est = arb->est_bytes + move_bytes + n_patches * (EST_PATCH_BYTES + EST_CTP_BYTES);

	if (batch_is_empty(arb))
		return;
	if (est > ARB_MAX_COMMIT_BYTES || (move_bytes && arb->n_moves == arb->cap_moves) ||
	    arb->n_patches + n_patches > ARB_MAX_PATCHES ||
	    arb->n_ctps + n_patches > ARB_MAX_PATCHES)
		commit_locked(arb, false, 0);
}

static void add_move(struct arbiter *arb, const struct smb_chunk *c, uint16_t target_buffer)
{
	struct Perfetto__Protos__CommitDataRequest__ChunksToMove *m = &arb->moves[arb->n_moves];

	perfetto__protos__commit_data_request__chunks_to_move__init(m);
	m->has_page = true;
	m->page = c->page;
	m->has_chunk = true;
	m->chunk = c->idx;
	m->has_target_buffer = true;
	m->target_buffer = target_buffer;
	if (arb->is_emulation) {
		/* The whole chunk, header included, as Perfetto's emulation does. */
		uint8_t *dst = arb->data + arb->data_used;

		/* Freed by arb_emulated_release() once the commit is sent. */
		smb_chunk_mark_complete(&arb->smb, c);
		memcpy(dst, c->begin, c->size);
		arb->data_used += c->size;
		m->has_data = true;
		m->data.data = dst;
		m->data.len = c->size;
		arb->est_bytes += c->size;
	} else {
		smb_chunk_mark_complete(&arb->smb, c);
		arb->smb_bytes_pending += c->size;
	}
	arb->est_bytes += EST_MOVE_BYTES;
	arb->move_ptrs[arb->n_moves++] = m;
}

static bool has_unready_patch_for(const struct tw_patch_list *pl, uint32_t chunk_id)
{
	unsigned i;

	for (i = 0; i < TW_MAX_PATCH_SLOTS; i++)
		if (pl->slots[i].in_use && pl->slots[i].chunk_id == chunk_id &&
		    !tw_patch_slot_ready(&pl->slots[i]))
			return true;
	return false;
}

/* Moves every ready slot of @pl into the batch, grouped by chunk. Return: count. */
static size_t add_patches(struct arbiter *arb, uint16_t writer_id, uint16_t target_buffer,
			  struct tw_patch_list *pl)
{
	size_t n_sent = 0;
	unsigned i, j;

	for (i = 0; i < TW_MAX_PATCH_SLOTS && pl->n_in_use; i++) {
		struct tw_patch_slot *s = &pl->slots[i];
		struct Perfetto__Protos__CommitDataRequest__ChunkToPatch *ctp;
		uint32_t chunk_id;

		if (!tw_patch_slot_ready(s))
			continue;
		chunk_id = s->chunk_id;
		ctp = &arb->ctps[arb->n_ctps];
		perfetto__protos__commit_data_request__chunk_to_patch__init(ctp);
		ctp->has_target_buffer = true;
		ctp->target_buffer = target_buffer;
		ctp->has_writer_id = true;
		ctp->writer_id = writer_id;
		ctp->has_chunk_id = true;
		ctp->chunk_id = chunk_id;
		ctp->patches = &arb->patch_ptrs[arb->n_patches];
		for (j = i; j < TW_MAX_PATCH_SLOTS; j++) {
			struct tw_patch_slot *t = &pl->slots[j];
			struct Perfetto__Protos__CommitDataRequest__ChunkToPatch__Patch *p;

			if (!tw_patch_slot_ready(t) || t->chunk_id != chunk_id)
				continue;
			p = &arb->patches[arb->n_patches];
			perfetto__protos__commit_data_request__chunk_to_patch__patch__init(p);
			memcpy(arb->patch_data[arb->n_patches], t->data, PZ_SIZE_FIELD_BYTES);
			p->has_offset = true;
			p->offset = t->offset;
			p->has_data = true;
			p->data.data = arb->patch_data[arb->n_patches];
			p->data.len = PZ_SIZE_FIELD_BYTES;
			arb->patch_ptrs[arb->n_patches++] = p;
			ctp->n_patches++;
			t->in_use = false;
			memset(t->data, 0, sizeof(t->data));
			pl->n_in_use--;
			arb->est_bytes += EST_PATCH_BYTES;
		}
		/* Perfetto's service keeps a chunk unreadable until it sees false. */
		ctp->has_has_more_patches = true;
		ctp->has_more_patches = has_unready_patch_for(pl, chunk_id);
		arb->ctp_ptrs[arb->n_ctps++] = ctp;
		arb->est_bytes += EST_CTP_BYTES;
		n_sent += ctp->n_patches;
	}
	return n_sent;
}

void arb_chunk_return(struct arbiter *arb, const struct smb_chunk *chunk, uint16_t writer_id,
		      uint16_t target_buffer, struct tw_patch_list *patches)
{
	size_t n_ready = 0, move_bytes = 0, n_sent = 0;
	bool was_empty;
	unsigned i;

	pthread_mutex_lock(&arb->lock);
	if (patches && patches->n_in_use)
		for (i = 0; i < TW_MAX_PATCH_SLOTS; i++)
			n_ready += tw_patch_slot_ready(&patches->slots[i]);
	if (chunk)
		move_bytes = EST_MOVE_BYTES + (arb->is_emulation ? chunk->size : 0);
	ensure_room(arb, move_bytes, n_ready);
	was_empty = batch_is_empty(arb);
	if (chunk)
		add_move(arb, chunk, target_buffer);
	if (n_ready)
		n_sent = add_patches(arb, writer_id, target_buffer, patches);
	arb->stats.patches_sent += n_sent;
	if (batch_is_empty(arb))
		goto out;
	/* Half the SMB waiting for the service risks stalling writers. Patches
	 * ride with the batch: Perfetto posts them at once, but an embedder's
	 * batching timer is short and a commit per patched chunk would defeat
	 * batching in emulation mode. */
	if (!arb->batch_commits || arb->smb_bytes_pending >= arb->commit_at_bytes) {
		commit_locked(arb, false, 0);
	} else if (was_empty && !arb->is_scheduled) {
		arb->is_scheduled = true;
		if (arb->schedule_cb)
			arb->schedule_cb(arb->user);
	}
out:
	pthread_mutex_unlock(&arb->lock);
}

int arb_commit_pending(struct arbiter *arb)
{
	pthread_mutex_lock(&arb->lock);
	if (!batch_is_empty(arb))
		commit_locked(arb, false, 0);
	pthread_mutex_unlock(&arb->lock);
	return 0;
}

int arb_emulated_release(struct arbiter *arb, uint32_t page, uint32_t idx)
{
	struct smb_chunk c;

	if (!arb->is_emulation || smb_chunk_resolve(&arb->smb, page, idx, &c) < 0)
		return -EINVAL;
	return smb_chunk_free_emulated(&arb->smb, &c);
}

int arb_flush(struct arbiter *arb, uint64_t flush_request_id)
{
	pthread_mutex_lock(&arb->lock);
	commit_locked(arb, true, flush_request_id);
	pthread_mutex_unlock(&arb->lock);
	return 0;
}

/* ------------------------------------------------------ acquiring ---- */

static int try_acquire_locked(struct arbiter *arb, const struct smb_chunk_init *init,
			      struct smb_chunk *out)
{
	size_t i, page;
	uint32_t free_chunks;
	unsigned idx;

	for (i = 0; i < arb->smb.n_pages; i++) {
		page = (arb->next_page + i) % arb->smb.n_pages;
		if (smb_page_is_free(&arb->smb, page))
			smb_page_try_partition(&arb->smb, page, arb->layout);
		free_chunks = smb_page_free_chunks(&arb->smb, page);
		for (idx = 0; free_chunks; idx++, free_chunks >>= 1) {
			if (!(free_chunks & 1))
				continue;
			if (smb_chunk_try_acquire_write(&arb->smb, page, idx, init, out) == 0) {
				arb->next_page = page;
				arb->stats.chunks_acquired++;
				return 0;
			}
		}
	}
	return -ENOSPC;
}

static void sleep_us(unsigned us)
{
	struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000};

	nanosleep(&ts, NULL);
}

int arb_chunk_acquire(struct arbiter *arb, const struct smb_chunk_init *init,
		      enum arb_full_policy policy, uint32_t stall_timeout_ms, struct smb_chunk *out)
{
	uint64_t deadline_ns = 0;
	unsigned interval_us = 0;
	int err;

	for (;;) {
		pthread_mutex_lock(&arb->lock);
		err = try_acquire_locked(arb, init, out);
		if (err == 0 || policy == ARB_FULL_DROP) {
			if (err < 0)
				arb->stats.chunks_dropped++;
			pthread_mutex_unlock(&arb->lock);
			return err;
		}
		/* The service frees chunks only after it hears about them. */
		if (!batch_is_empty(arb))
			commit_locked(arb, false, 0);
		if (!deadline_ns) {
			arb->stats.stalls++;
			deadline_ns = clock_monotonic_ns() +
				      (uint64_t)(stall_timeout_ms ? stall_timeout_ms
								  : ARB_DEFAULT_STALL_TIMEOUT_MS) *
					      NS_PER_MS;
		} else if (clock_monotonic_ns() >= deadline_ns) {
			arb->stats.chunks_dropped++;
			pthread_mutex_unlock(&arb->lock);
			return -ENOSPC;
		}
		pthread_mutex_unlock(&arb->lock);
		sleep_us(interval_us);
		interval_us = PFC_MIN(STALL_MAX_SLEEP_US, (interval_us + 1) * 8);
	}
}

// SPDX-License-Identifier: Apache-2.0
/*
 * rec_queue.c - see rec_queue.h. Entries are an 8-byte header (length,
 * tag, flags) and their bytes padded to 8, packed into blocks of at least
 * RQ_BLOCK_BYTES. The producer fills reserved room without the lock (the
 * consumer never reads past committed entries); block links, counts and
 * positions change under it. A drained block goes back to the system,
 * but one is kept for the next burst.
 */
#include "perf/ring/rec_queue.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RQ_BLOCK_BYTES (1u << 20)
#define RQ_HDR_BYTES 8u

struct rq_block {
	struct rq_block *next;
	size_t used; /* committed bytes */
	size_t cap;
	uint8_t data[];
};

struct rq_hdr {
	uint32_t len;
	uint16_t tag;
	uint16_t flags;
};

static size_t entry_bytes(size_t len)
{
	return RQ_HDR_BYTES + ((len + 7) & ~(size_t)7);
}

int rq_init(struct rec_queue *q, size_t max_bytes, _Atomic uint64_t *shared_bytes)
{
	pthread_condattr_t ca;
	int rc;

	memset(q, 0, sizeof(*q));
	q->max_bytes = max_bytes;
	q->shared_bytes = shared_bytes;
	rc = pthread_mutex_init(&q->lock, NULL);
	if (rc)
		return -rc;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	rc = pthread_cond_init(&q->space, &ca);
	pthread_condattr_destroy(&ca);
	if (rc) {
		pthread_mutex_destroy(&q->lock);
		return -rc;
	}
	return 0;
}

void rq_fini(struct rec_queue *q)
{
	struct rq_block *b = q->head, *next;

	for (; b; b = next) {
		next = b->next;
		free(b);
	}
	free(q->spare);
	if (q->shared_bytes)
		atomic_fetch_sub(q->shared_bytes, q->bytes);
	pthread_cond_destroy(&q->space);
	pthread_mutex_destroy(&q->lock);
	memset(q, 0, sizeof(*q));
}

static void release_block(struct rec_queue *q, struct rq_block *b)
{
	if (!q->spare && b->cap == RQ_BLOCK_BYTES) {
		b->next = NULL;
		b->used = 0;
		q->spare = b;
	} else {
		free(b);
	}
}

/* Frees drained blocks in front of the one being written. Lock held. */
static void advance_locked(struct rec_queue *q)
{
	while (q->head && q->head != q->tail && q->head_off >= q->head->used) {
		struct rq_block *b = q->head;

		q->head = b->next;
		q->head_off = 0;
		release_block(q, b);
	}
}

uint8_t *rq_reserve(struct rec_queue *q, size_t len)
{
	size_t need = entry_bytes(len);
	uint8_t *room = NULL;

	if (len > UINT32_MAX)
		return NULL;
	pthread_mutex_lock(&q->lock);
	q->pending = NULL;
	if (q->bytes + need > q->max_bytes)
		goto out;
	if (!q->tail || q->tail->cap - q->tail->used < need) {
		size_t cap = need > RQ_BLOCK_BYTES ? need : RQ_BLOCK_BYTES;
		struct rq_block *b;

		if (q->spare && q->spare->cap >= need) {
			b = q->spare;
			q->spare = NULL;
		} else {
			b = malloc(sizeof(*b) + cap);
			if (!b)
				goto out;
			b->cap = cap;
		}
		b->next = NULL;
		b->used = 0;
		if (q->tail)
			q->tail->next = b;
		else
			q->head = b;
		q->tail = b;
		advance_locked(q);
	}
	room = q->tail->data + q->tail->used + RQ_HDR_BYTES;
	q->pending = room;
	q->pending_cap = len;
out:
	pthread_mutex_unlock(&q->lock);
	return room;
}

void rq_commit(struct rec_queue *q, size_t len, uint16_t tag, uint16_t flags)
{
	struct rq_hdr h = { .tag = tag, .flags = flags };
	size_t sz;

	pthread_mutex_lock(&q->lock);
	if (!q->pending || len > q->pending_cap) {
		pthread_mutex_unlock(&q->lock);
		return;
	}
	h.len = (uint32_t)len;
	memcpy(q->pending - RQ_HDR_BYTES, &h, sizeof(h));
	sz = entry_bytes(len);
	q->tail->used += sz;
	q->bytes += sz;
	q->n_committed++;
	if (q->shared_bytes)
		atomic_fetch_add(q->shared_bytes, sz);
	q->pending = NULL;
	pthread_mutex_unlock(&q->lock);
}

bool rq_peek(struct rec_queue *q, struct rq_entry *out)
{
	struct rq_hdr h;
	bool ok = false;

	pthread_mutex_lock(&q->lock);
	advance_locked(q);
	if (q->head && q->head_off < q->head->used) {
		memcpy(&h, q->head->data + q->head_off, sizeof(h));
		out->data = q->head->data + q->head_off + RQ_HDR_BYTES;
		out->len = h.len;
		out->tag = h.tag;
		out->flags = h.flags;
		ok = true;
	}
	pthread_mutex_unlock(&q->lock);
	return ok;
}

void rq_pop(struct rec_queue *q)
{
	struct rq_hdr h;
	size_t sz;

	pthread_mutex_lock(&q->lock);
	advance_locked(q);
	if (!q->head || q->head_off >= q->head->used) {
		pthread_mutex_unlock(&q->lock);
		return;
	}
	memcpy(&h, q->head->data + q->head_off, sizeof(h));
	sz = entry_bytes(h.len);
	q->head_off += sz;
	q->bytes -= sz;
	q->n_popped++;
	if (q->shared_bytes)
		atomic_fetch_sub(q->shared_bytes, sz);
	advance_locked(q);
	/* Empty, and nothing reserved in it: write from its start again. */
	if (q->head == q->tail && q->head_off >= q->head->used && !q->pending)
		q->head->used = q->head_off = 0;
	if (q->bytes <= q->max_bytes / 2)
		pthread_cond_broadcast(&q->space);
	pthread_mutex_unlock(&q->lock);
}

size_t rq_bytes(struct rec_queue *q)
{
	size_t n;

	pthread_mutex_lock(&q->lock);
	n = q->bytes;
	pthread_mutex_unlock(&q->lock);
	return n;
}

uint64_t rq_committed(struct rec_queue *q)
{
	uint64_t n;

	pthread_mutex_lock(&q->lock);
	n = q->n_committed;
	pthread_mutex_unlock(&q->lock);
	return n;
}

uint64_t rq_popped(struct rec_queue *q)
{
	uint64_t n;

	pthread_mutex_lock(&q->lock);
	n = q->n_popped;
	pthread_mutex_unlock(&q->lock);
	return n;
}

void rq_wait_space(struct rec_queue *q, unsigned timeout_ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&q->lock);
	while (q->bytes > q->max_bytes / 2) {
		if (pthread_cond_timedwait(&q->space, &q->lock, &ts) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&q->lock);
}

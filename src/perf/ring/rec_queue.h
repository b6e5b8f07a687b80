/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rec_queue.h - the FIFO between traced_perf's ring reader thread and its
 * loop thread: variable-size entries (a perf record, compacted, with the
 * ring it came from and what the reader decided about it) in 1 MiB blocks
 * that are returned to the system as the queue empties, under a byte
 * budget. One producer and one consumer at a time; thread-safe.
 */
#ifndef PFC_PERF_REC_QUEUE_H
#define PFC_PERF_REC_QUEUE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rq_block;

struct rec_queue {
	pthread_mutex_t lock; /* everything below */
	pthread_cond_t space; /* signalled when bytes falls to half of max_bytes */
	struct rq_block *head, *tail;
	size_t head_off; /* next entry to consume in head */
	struct rq_block *spare;
	size_t bytes;     /* committed, not yet popped (entry headers included) */
	size_t max_bytes; /* reserve() fails past this */
	uint8_t *pending; /* reserved, not yet committed */
	size_t pending_cap;
	/* Optional: bytes of every queue sharing it (a daemon-wide footprint). */
	_Atomic uint64_t *shared_bytes;
	/* Entries committed and popped since rq_init (a flush drains up to
	 * the count committed when it began, not what arrives meanwhile). */
	uint64_t n_committed, n_popped;
};

/* An entry as the consumer sees it. */
struct rq_entry {
	const uint8_t *data;
	uint32_t len;
	uint16_t tag;
	uint16_t flags;
};

/* Return: 0 or -errno (pthread init). @shared_bytes may be NULL. */
int rq_init(struct rec_queue *q, size_t max_bytes, _Atomic uint64_t *shared_bytes);
/* Frees every block; entries left are dropped. */
void rq_fini(struct rec_queue *q);

/**
 * rq_reserve() - Room for one entry of up to @len bytes, to be filled and
 * then rq_commit()ed (or abandoned by the next reserve).
 * Return: the room, or NULL when the entry would take the queue past its
 * budget (or memory is short).
 * Context: the producer; allocates a block when the last one is full.
 */
uint8_t *rq_reserve(struct rec_queue *q, size_t len);
/* Publishes the reserved entry with its first @len bytes (<= reserved). */
void rq_commit(struct rec_queue *q, size_t len, uint16_t tag, uint16_t flags);

/**
 * rq_peek() - The oldest entry, left in the queue: its bytes stay valid
 * until rq_pop(). Return: false when the queue is empty.
 * Context: the consumer.
 */
bool rq_peek(struct rec_queue *q, struct rq_entry *out);
/* Drops the entry rq_peek() returned. */
void rq_pop(struct rec_queue *q);

/* Bytes queued now (entry headers included). */
size_t rq_bytes(struct rec_queue *q);
/* Entries committed / popped since rq_init(). */
uint64_t rq_committed(struct rec_queue *q);
uint64_t rq_popped(struct rec_queue *q);
/* Blocks until the queue holds at most half its budget, or @timeout_ms. */
void rq_wait_space(struct rec_queue *q, unsigned timeout_ms);

#endif

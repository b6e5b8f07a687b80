/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stack_tops.h - how much of a sampled thread's stack the unwinder needs.
 * The kernel copies up to 64 KiB above the sampled rsp, but a thread's
 * outermost frame (clone3, _start) sits at one address for its whole
 * life, and no unwind reads past it. The loop thread records, per thread,
 * the highest stack address a complete unwind read; the ring reader then
 * queues each sample's stack only up to there (plus slack), not the whole
 * copy. A thread whose stack was cut too short (a new stack at the old
 * tid: exec, a lost EXIT) fails one unwind with a read outside the copy,
 * is forgotten, and is learned again from its next, whole, copy.
 * Shared by a reader thread and a loop thread; thread-safe.
 */
#ifndef PFC_PERF_STACK_TOPS_H
#define PFC_PERF_STACK_TOPS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/hmap.h"

/* Threads remembered at most; past this all are forgotten at once. */
#define STACK_TOPS_MAX 65536u
/* Bytes kept above a thread's known top (rounding, a frame that reads a
 * little higher than the one the top was learned from). */
#define STACK_TOPS_SLACK 512u

struct stack_tops {
	pthread_mutex_t lock; /* the map */
	struct hmap tops;     /* pid << 32 | tid -> highest stack address needed + 1 */
};

/* Return: 0 or -errno (mutex init). */
int stack_tops_init(struct stack_tops *t);
void stack_tops_fini(struct stack_tops *t);

/**
 * stack_tops_learn() - A complete unwind of thread @tid of @pid read its
 * stack up to (not including) address @top. The known top only grows.
 */
void stack_tops_learn(struct stack_tops *t, uint32_t pid, uint32_t tid, uint64_t top);
/* @tid of @pid exited, or its known top proved too low. */
void stack_tops_forget(struct stack_tops *t, uint32_t pid, uint32_t tid);

/**
 * stack_tops_block_pid() - @pid ran execve (seen by the reader ahead of the
 * samples still queued): its tops are unknown and none is learned from
 * the samples queued before the exec, until stack_tops_unblock_pid(),
 * called when the exec's own place in the queue is reached (or its exit).
 * Meanwhile its samples keep their whole copies.
 */
void stack_tops_block_pid(struct stack_tops *t, uint32_t pid);
void stack_tops_unblock_pid(struct stack_tops *t, uint32_t pid);

/**
 * stack_tops_keep() - Stack bytes worth queueing for a sample of @tid of
 * @pid taken at @sp with @copied bytes of stack: @copied when the thread's
 * top is unknown or not above @sp, else up to the top plus slack.
 */
uint64_t stack_tops_keep(struct stack_tops *t, uint32_t pid, uint32_t tid, uint64_t sp,
			 uint64_t copied);

#endif

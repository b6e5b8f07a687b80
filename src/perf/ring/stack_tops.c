// SPDX-License-Identifier: Apache-2.0
/*
 * stack_tops.c - see stack_tops.h: one mutex over a pid/tid map; each
 * sample takes it once on the reader thread and once on the loop thread.
 */
#include "perf/ring/stack_tops.h"

static uint64_t key_of(uint32_t pid, uint32_t tid)
{
	return (uint64_t)pid << 32 | tid;
}

int stack_tops_init(struct stack_tops *t)
{
	hmap_init(&t->tops);
	return -pthread_mutex_init(&t->lock, NULL);
}

void stack_tops_fini(struct stack_tops *t)
{
	hmap_fini(&t->tops);
	pthread_mutex_destroy(&t->lock);
}

/* The tid of the entry that marks a pid blocked (no thread has it). */
#define BLOCKED_TID UINT32_MAX

static bool blocked_locked(struct stack_tops *t, uint32_t pid)
{
	return hmap_get(&t->tops, key_of(pid, BLOCKED_TID), NULL);
}

void stack_tops_block_pid(struct stack_tops *t, uint32_t pid)
{
	pthread_mutex_lock(&t->lock);
	hmap_del(&t->tops, key_of(pid, pid), NULL);
	if (hmap_len(&t->tops) >= STACK_TOPS_MAX)
		hmap_clear(&t->tops);
	/* On ENOMEM the stale top may cut a stack short: one failed unwind
	 * forgets it, as without the block. */
	hmap_put(&t->tops, key_of(pid, BLOCKED_TID), 1);
	pthread_mutex_unlock(&t->lock);
}

void stack_tops_unblock_pid(struct stack_tops *t, uint32_t pid)
{
	pthread_mutex_lock(&t->lock);
	hmap_del(&t->tops, key_of(pid, BLOCKED_TID), NULL);
	hmap_del(&t->tops, key_of(pid, pid), NULL);
	pthread_mutex_unlock(&t->lock);
}

void stack_tops_learn(struct stack_tops *t, uint32_t pid, uint32_t tid, uint64_t top)
{
	uint64_t key = key_of(pid, tid), old;

	pthread_mutex_lock(&t->lock);
	if (blocked_locked(t, pid)) {
		/* A sample from before the exec: its top is the old program's. */
	} else if (!hmap_get(&t->tops, key, &old) || old < top) {
		if (hmap_len(&t->tops) >= STACK_TOPS_MAX)
			hmap_clear(&t->tops);
		/* On ENOMEM the thread's stacks stay whole. */
		hmap_put(&t->tops, key, top);
	}
	pthread_mutex_unlock(&t->lock);
}

void stack_tops_forget(struct stack_tops *t, uint32_t pid, uint32_t tid)
{
	pthread_mutex_lock(&t->lock);
	hmap_del(&t->tops, key_of(pid, tid), NULL);
	pthread_mutex_unlock(&t->lock);
}

uint64_t stack_tops_keep(struct stack_tops *t, uint32_t pid, uint32_t tid, uint64_t sp,
			 uint64_t copied)
{
	uint64_t top, need;
	bool known;

	pthread_mutex_lock(&t->lock);
	known = !blocked_locked(t, pid) && hmap_get(&t->tops, key_of(pid, tid), &top);
	pthread_mutex_unlock(&t->lock);
	if (!known || top <= sp)
		return copied;
	need = top - sp;
	if (need > copied || copied - need <= STACK_TOPS_SLACK)
		return copied;
	return need + STACK_TOPS_SLACK;
}

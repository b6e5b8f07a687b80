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

void stack_tops_learn(struct stack_tops *t, uint32_t pid, uint32_t tid, uint64_t top)
{
	uint64_t key = key_of(pid, tid), old;

	pthread_mutex_lock(&t->lock);
	if (!hmap_get(&t->tops, key, &old) || old < top) {
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
	known = hmap_get(&t->tops, key_of(pid, tid), &top);
	pthread_mutex_unlock(&t->lock);
	if (!known || top <= sp)
		return copied;
	need = top - sp;
	if (need > copied || copied - need <= STACK_TOPS_SLACK)
		return copied;
	return need + STACK_TOPS_SLACK;
}

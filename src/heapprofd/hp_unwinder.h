/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hp_unwinder.h - heapprofd's unwinder thread: it owns every client's
 * shared ring (maps it, reads it, unmaps it) and traced_perf's unwinder,
 * turns ring records into allocations with a callstack id and frees, and
 * hands them to the main thread in batches (the batch and every callstack
 * defined in it become the main thread's). The main thread talks to it
 * only by posting tasks; neither touches the other's objects.
 */
#ifndef PFC_HEAPPROFD_HP_UNWINDER_H
#define PFC_HEAPPROFD_HP_UNWINDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct evloop;
struct hp_unwinder;

/* A frame of a callstack as the main thread interns it. */
struct hp_frame {
	const char *function; /* NULL: unknown */
	const char *map_path; /* NULL: no mapping (an error frame) */
	const uint8_t *build_id;
	uint32_t build_id_len;
	uint64_t map_start, map_end, rel_pc;
};

/* A callstack seen for the first time: frames leaf first; the strings
 * live in the same allocation. Free with free(). */
struct hp_cstack {
	struct hp_cstack *next;
	uint64_t id;
	size_t n;
	struct hp_frame frames[];
};

enum hp_item_kind { HP_ITEM_ALLOC = 1, HP_ITEM_FREE = 2 };

struct hp_item {
	uint32_t kind;
	uint32_t heap;
	uint64_t addr;
	uint64_t size;   /* sample size (ALLOC) */
	uint64_t ts_ns;  /* the client's (ALLOC) */
	uint64_t cstack; /* ALLOC */
};

#define HP_BATCH_ITEMS 2048u

/* What one client's ring gave since the last batch. */
struct hp_batch {
	uint32_t client_id;
	bool gone;      /* the client's ring is closed: last batch for it */
	bool exited;    /* ... because the client closed its end (it exited) */
	bool drained;   /* answer to hp_unwinder_drain() */
	uint64_t drain_token;
	bool corrupt;   /* the ring held garbage: reading stopped */
	uint64_t unwind_errors, unwind_us, records, malformed;
	/* Counters the client keeps in the ring's header (latest values). */
	uint64_t client_dropped, client_blocked_us;
	uint32_t client_error;
	struct hp_cstack *stacks; /* new callstacks, before the items using them */
	size_t n;
	struct hp_item items[HP_BATCH_ITEMS];
};

typedef void (*hp_batch_cb)(struct hp_batch *b, void *user);

/**
 * hp_unwinder_create() - Start the thread. @cb runs on @main_loop's thread
 * for every batch and takes ownership of it (free() it and its stacks).
 * Return: 0 or -errno.
 */
int hp_unwinder_create(struct evloop *main_loop, hp_batch_cb cb, void *user,
		       struct hp_unwinder **out);
/* Stop the thread, drop every ring (no more batches). */
void hp_unwinder_destroy(struct hp_unwinder *u);
/**
 * hp_unwinder_add() - Read a client's ring. Takes ownership of @ring_fd
 * and @wake_fd (the daemon's end of the wake-up socket).
 * Context: main thread; the work happens on the unwinder thread.
 */
int hp_unwinder_add(struct hp_unwinder *u, uint32_t client_id, uint32_t pid, int ring_fd,
		    uint64_t ring_bytes, int wake_fd);
/* Read what the client's ring holds now, then answer with a batch whose
 * drained is set (and @token). */
int hp_unwinder_drain(struct hp_unwinder *u, uint32_t client_id, uint64_t token);
/* Read what is left, shut the ring down and close it: answered by a batch
 * with gone set. */
int hp_unwinder_remove(struct hp_unwinder *u, uint32_t client_id);

#endif

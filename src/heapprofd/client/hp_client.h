/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hp_client.h - the heapprofd client inside a profiled process: the
 * connection to heapprofd (a private one it forks, or a central daemon),
 * the per-thread Poisson sampler, and the writing of sampled allocations
 * and their frees into the shared ring. Used by the malloc wrappers
 * (hp_hooks_glibc.c) and the custom-heap API (hp_api.c). Everything here
 * may run inside malloc: no allocation, no lock a thread could wait on
 * forever, fork- and recursion-safe.
 *
 * The process has one malloc, so the client's state is one static object
 * (the only mutable global of the project's libraries, by necessity).
 */
#ifndef PFC_HEAPPROFD_CLIENT_HP_CLIENT_H
#define PFC_HEAPPROFD_CLIENT_HP_CLIENT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heapprofd/ring/hp_wire.h"

#define HP_HEAP_MALLOC 1u /* "libc.malloc", registered by the malloc wrappers */
#define HP_HIDDEN __attribute__((visibility("hidden")))
#define HP_TLS __thread __attribute__((tls_model("initial-exec")))

/* Bytes a thread allocates between two looks at the control socket while
 * no session profiles the process (a session started later is noticed). */
#define HP_POLL_BYTES (256u << 10)
/* The longest a thread whose poll budget ran out waits for another thread
 * that is reading the control socket (taking a START, mapping the ring). */
#define HP_POLL_WAIT_MS 200u
/* Without block_client, the longest a writer that found the ring full
 * sleeps (on the ring's futex, woken when heapprofd made room) before it
 * drops the record. */
#define HP_FULL_WAIT_MS 40u
/* ... as long as the reader's position moved within this (else drop at
 * once: heapprofd stopped, or far behind). */
#define HP_FULL_PATIENCE_MS 50u
/* The most stack one sample copies. */
#define HP_MAX_STACK_COPY (128u << 10)

/* A thread's sampler: the fast path of every malloc reads these two. */
struct hp_thread {
	uint64_t left;     /* bytes until the next sample (or poll) */
	uint32_t gen;      /* hp_gen when left was set */
	uint32_t in_hook;  /* inside the client: allocations go straight through */
	uint64_t rng;
	uint64_t stack_lo, stack_hi; /* this thread's stack, when known */
	uint64_t stack_top;          /* ... where its frames end (copied up to) */
	uint64_t interval; /* libc.malloc's sampling interval for this gen */
	uint32_t since_poll; /* samples since this thread looked at the socket */
};

extern HP_HIDDEN _Atomic uint32_t hp_gen;
extern HP_HIDDEN uint64_t hp_cookie;
extern HP_HIDDEN HP_TLS struct hp_thread hp_tls;

/* Connect and set up (the preload library's constructor; the first hook
 * call when the client is linked into a program). Idempotent. */
HP_HIDDEN void hp_client_init(void);
/**
 * hp_thread_refresh() - The calling thread's sampler after hp_gen moved:
 * the interval of the current session, or a poll budget, or off. Polls
 * the control socket when a poll budget ran out.
 */
HP_HIDDEN void hp_thread_refresh(struct hp_thread *t);
/* Bytes the next sample of libc.malloc stands for when @size bytes are
 * allocated (0: not sampled); updates t->left. */
HP_HIDDEN uint64_t hp_sample_size(struct hp_thread *t, uint64_t size);
/* Write a sampled allocation / a free of a sampled one into the ring.
 * Return: false when the record was dropped. */
HP_HIDDEN bool hp_record_alloc(uint32_t heap, uint64_t addr, uint64_t sample_size,
			       uint64_t alloc_size);
HP_HIDDEN bool hp_record_free(uint32_t heap, uint64_t addr);
/* Samples a thread writes between two looks at the control socket while
 * a session profiles the process (its stop, or heapprofd's death). */
#define HP_ACTIVE_POLL_SAMPLES 64u
/* After a sample was written (or dropped: @written false, which counts
 * as 8): every HP_ACTIVE_POLL_SAMPLES samples, read the daemon's
 * messages (a STOP; a closed socket: heapprofd died) and stop sampling if
 * the session is over. Call outside the ring (not from a record). */
HP_HIDDEN void hp_client_after_sample(struct hp_thread *t, bool written);
/* The process is about to exit or exec: wake heapprofd and wait until it
 * read the ring (at most 500 ms), while the maps it unwinds with are
 * still this image's. */
HP_HIDDEN void hp_client_flush(void);
/* Whether a session profiles @heap now, and its interval. */
HP_HIDDEN uint64_t hp_heap_interval(uint32_t heap);
/* A custom heap was registered (hp_api.c): tell the daemon. */
HP_HIDDEN void hp_client_heap_registered(uint32_t heap, const char *name);
/* Called with the session's intervals; hp_api.c runs the enable/disable
 * callbacks. @interval 0: disabled. */
HP_HIDDEN void hp_api_heap_state(uint32_t heap, uint64_t interval);
/* Heap names registered so far (hp_api.c), for a new connection. */
HP_HIDDEN const char *hp_api_heap_name(uint32_t heap);
HP_HIDDEN uint32_t hp_api_heap_count(void);

/* The caller's registers at its call site, perf_regs order (hp_regs.c). */
HP_HIDDEN void hp_get_regs(uint64_t *regs);
HP_HIDDEN uint64_t hp_get_sp(void);

#endif

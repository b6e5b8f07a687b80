// SPDX-License-Identifier: Apache-2.0
/*
 * sdk_writer.c - per-thread writers. Each application thread has one
 * writer per session (instance slot) it writes for; a writer owns one chunk
 * of the shared memory buffer at a time and appends whole packets to it,
 * fragmenting the rare ones that do not fit. Only the owning thread touches
 * a writer, except under the steal protocol, which lets the control thread
 * take a chunk back (from an idle thread, for a flush, at disconnect):
 *
 *   writer:  busy = 1; [fence]; if (steal) back off; ...event...; busy = 0
 *   control: steal = 1; heavy fence; wait for busy == 0; take; steal = 0
 *
 * The writer's fence is only a compiler barrier when membarrier(2)'s
 * private expedited command exists: the heavy fence then runs a barrier on
 * every CPU that runs one of our threads (as userspace RCU does), so a
 * writer either sees steal set or was seen busy. Without membarrier both
 * sides use full fences.
 */
#include "sdk/sdk_int.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/hash.h"
#include "tracing/producer.h"
#include "tracing/tracing.h"

__thread struct sdk_thread *sdk_t_self __attribute__((tls_model("initial-exec")));
static __thread bool t_exiting __attribute__((tls_model("initial-exec")));
static pthread_key_t g_exit_key;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;
bool sdk_fence_is_light;

/* ------------------------------------------------------------- fences ---- */

void sdk_fence_init(void)
{
	sdk_fence_is_light =
		syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

void sdk_fence_heavy(void)
{
	if (!sdk_fence_is_light ||
	    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
		atomic_thread_fence(memory_order_seq_cst);
}

/* ------------------------------------------------------------- chunks ---- */

static struct arbiter *arb_now(void)
{
	return atomic_load_explicit(&sdk_g.arb, memory_order_acquire);
}

void sdk_writer_release_chunk(struct sdk_writer *w)
{
	struct arbiter *arb = arb_now();

	if (!w->has_chunk)
		return;
	w->has_chunk = false;
	w->cur = w->end = NULL;
	if (!arb)
		return;
	atomic_store_explicit(&smb_chunk_header(&w->chunk)->packets,
			      smb_packets_pack(w->n_packets, w->chunk_flags), memory_order_release);
	arb_chunk_return(arb, &w->chunk, w->writer_id, w->target_buffer, NULL);
	sdk_stat_add(&sdk_g.stats.chunks_committed, 1);
}

/* Waits @us microseconds outside the busy section, so the control thread
 * can steal (and send commits) meanwhile. Return: false if @w was dropped
 * or the connection went away in the meantime. */
static bool stall_pause(struct sdk_writer *w, unsigned us)
{
	struct sdk_thread *t = w->owner;
	struct timespec ts = {0, (long)us * 1000};

	sdk_leave(t, t->last_event_ns);
	nanosleep(&ts, NULL);
	while (!sdk_enter(t))
		sched_yield();
	return !w->dead && w->writer_id && arb_now() != NULL;
}

/* Takes a new chunk; @continues: its first fragment ends a packet. With
 * a stalling policy (the session's buffer_exhausted_policy) a full SMB is
 * waited on for up to SDK_STALL_TIMEOUT_MS, else the data is dropped. */
static bool take_chunk(struct sdk_writer *w, bool continues)
{
	struct smb_chunk_init init;
	struct arbiter *arb = arb_now();
	uint64_t deadline = 0;
	unsigned us = 20;

	if (!arb || !w->writer_id)
		return false;
	init.chunk_id = w->next_chunk_id++;
	init.writer_id = w->writer_id;
	init.packets = 0;
	/* A failed acquisition still uses the chunk id: the gap tells the
	 * service (and the trace) that data was lost here. */
	while (arb_chunk_acquire(arb, &init, ARB_FULL_DROP, 0, &w->chunk) < 0) {
		uint64_t now = sdk_clock_boottime();

		/* Chunks waiting for the batch to be committed come back to us
		 * only once the service has them. */
		if (!deadline)
			arb_commit_pending(arb);

		if (!atomic_load_explicit(&sdk_g.inst[w->slot].stall, memory_order_relaxed))
			goto lost;
		if (!deadline)
			deadline = now + (uint64_t)SDK_STALL_TIMEOUT_MS * 1000 * 1000;
		if (now >= deadline || !stall_pause(w, us))
			goto lost;
		arb = arb_now();
		us = us * 2 > 1000 ? 1000 : us * 2;
	}
	w->has_chunk = true;
	w->n_packets = 0;
	w->chunk_flags = continues ? SMB_CHUNK_FIRST_CONTINUES : 0;
	w->cur = smb_chunk_payload(&w->chunk);
	w->end = w->chunk.begin + w->chunk.size;
	return true;
lost:
	if (!w->dead)
		w->lost = true;
	return false;
}

uint8_t *sdk_writer_reserve(struct sdk_writer *w, size_t len)
{
	if (w->has_chunk && (size_t)(w->end - w->cur) >= len &&
	    w->n_packets < SMB_MAX_PACKETS_PER_CHUNK)
		return w->cur;
	sdk_writer_release_chunk(w);
	if (!take_chunk(w, false) || (size_t)(w->end - w->cur) < len)
		return NULL;
	return w->cur;
}

/* The redundant 4-byte varint of a fragment's size. */
static inline void frag_size(uint8_t *p, uint32_t n)
{
	p[0] = (uint8_t)(n | 0x80);
	p[1] = (uint8_t)((n >> 7) | 0x80);
	p[2] = (uint8_t)((n >> 14) | 0x80);
	p[3] = (uint8_t)(n >> 21);
}

int sdk_writer_append(struct sdk_writer *w, const uint8_t *pkt, size_t len)
{
	bool continues = false;
	size_t off = 0;

	if (len >= SMB_PACKET_SIZE_DROP)
		return -ENOSPC;
	for (;;) {
		size_t room, take;

		if (!w->has_chunk || w->n_packets >= SMB_MAX_PACKETS_PER_CHUNK ||
		    (size_t)(w->end - w->cur) < SMB_PACKET_HEADER_SIZE + 1) {
			sdk_writer_release_chunk(w);
			if (!take_chunk(w, continues))
				return -ENOSPC;
		}
		room = (size_t)(w->end - w->cur) - SMB_PACKET_HEADER_SIZE;
		take = len - off < room ? len - off : room;
		frag_size(w->cur, (uint32_t)take);
		memcpy(w->cur + SMB_PACKET_HEADER_SIZE, pkt + off, take);
		w->cur += SMB_PACKET_HEADER_SIZE + take;
		w->n_packets++;
		off += take;
		if (off == len)
			return 0;
		/* The rest goes on in the next chunk. */
		w->chunk_flags |= SMB_CHUNK_LAST_CONTINUES;
		continues = true;
		sdk_writer_release_chunk(w);
	}
}

/* ------------------------------------------------------------ threads ---- */


/* Gives up @t's writers: chunks back, ids unregistered. The owner frees
 * them (@owner: at thread exit); a stealer leaves them for the owner to
 * free (sdk_thread_reap()), since the owner may be stalled inside one. */
static void drop_writers(struct sdk_thread *t, int slot, bool owner)
{
	struct producer *p = atomic_load(&sdk_g.producer);
	unsigned i;

	for (i = 0; i < SDK_MAX_INSTANCES; i++) {
		struct sdk_writer *w = t->w[i];

		if (!w || (slot >= 0 && (int)i != slot))
			continue;
		sdk_writer_release_chunk(w);
		if (w->writer_id && p) {
			sdk_g.next_chunk_id[w->writer_id] = w->next_chunk_id;
			producer_unregister_writer_id(p, w->writer_id);
		}
		w->writer_id = 0;
		t->w[i] = NULL;
		if (owner) {
			free(w);
		} else {
			w->dead = true;
			w->next_dead = t->dead;
			t->dead = w;
		}
		sdk_stat_add(&sdk_g.stats.writers, (uint64_t)-1);
	}
}

void sdk_thread_reap(struct sdk_thread *t)
{
	struct sdk_writer *w = t->dead, *next;

	t->dead = NULL;
	for (; w; w = next) {
		next = w->next_dead;
		free(w);
	}
}

static void on_thread_exit(void *arg)
{
	struct sdk_thread *t = arg, **pp;

	t_exiting = true;
	sdk_t_self = NULL;
	pthread_mutex_lock(&sdk_g.lock);
	/* The thread's own chunks: no one else writes them, and the control
	 * thread only looks at threads in the registry, under the lock. */
	drop_writers(t, -1, true);
	sdk_thread_reap(t);
	sdk_g.retired_written += t->n_written;
	sdk_g.retired_dropped += t->n_dropped;
	for (pp = &sdk_g.threads; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	}
	pthread_mutex_unlock(&sdk_g.lock);
	free(t->scratch);
	free(t);
}

static bool g_key_made;

static void make_key(void)
{
	g_key_made = pthread_key_create(&g_exit_key, on_thread_exit) == 0;
}

struct sdk_thread *sdk_thread_get(void)
{
	struct sdk_thread *t = sdk_t_self;
	char comm[17] = {0};

	if (PFC_LIKELY_(t != NULL))
		return t;
	if (t_exiting || !sdk_g.initialized)
		return NULL;
	pthread_once(&g_key_once, make_key);
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->scratch = malloc(SDK_MAX_EVENT_BYTES);
	if (!t->scratch) {
		free(t);
		return NULL;
	}
	t->tid = (pid_t)syscall(SYS_gettid);
	if (prctl(PR_GET_NAME, comm, 0, 0, 0) == 0)
		snprintf(t->name, sizeof(t->name), "%s", comm);
	t->track_uuid = fnv1a64(&t->tid, sizeof(t->tid)) ^ sdk_g.process_uuid;
	pthread_mutex_lock(&sdk_g.lock);
	t->next = sdk_g.threads;
	sdk_g.threads = t;
	pthread_mutex_unlock(&sdk_g.lock);
	pthread_setspecific(g_exit_key, t);
	sdk_t_self = t;
	return t;
}

struct sdk_writer *sdk_writer_get(struct sdk_thread *t, unsigned slot)
{
	struct producer *p = atomic_load(&sdk_g.producer);
	struct sdk_writer *w = t->w[slot];
	struct sdk_instance *in = &sdk_g.inst[slot];

	if (w && w->writer_id)
		return w;
	if (!atomic_load(&in->active) || !p)
		return NULL;
	if (!w) {
		w = calloc(1, sizeof(*w));
		if (!w)
			return NULL;
		w->owner = t;
		w->slot = (uint8_t)slot;
		t->w[slot] = w;
		sdk_stat_add(&sdk_g.stats.writers, 1);
	}
	w->target_buffer = in->target_buffer;
	if (producer_register_writer_id(p, w->target_buffer, &w->writer_id) < 0) {
		w->writer_id = 0;
		return NULL;
	}
	w->next_chunk_id = sdk_g.next_chunk_id[w->writer_id];
	/* gen + 1 never matches: the first event resets the sequence. */
	w->gen = atomic_load(&in->gen) + 1;
	return w;
}

/* ------------------------------------------------------------- steals ---- */

static void wait_not_busy(struct sdk_thread *t)
{
	unsigned spins = 0;

	while (__atomic_load_n(&t->busy, __ATOMIC_ACQUIRE)) {
		if (++spins > 64)
			sched_yield();
	}
}

/* Steals from every registered thread @pick selects; runs @take on each.
 * Return: threads stolen from. Caller holds sdk_g.lock. */
static size_t steal_threads(bool (*pick)(struct sdk_thread *, void *),
			    void (*take)(struct sdk_thread *, void *), void *arg)
{
	struct sdk_thread *t;
	size_t n = 0;

	for (t = sdk_g.threads; t; t = t->next) {
		if (pick(t, arg)) {
			__atomic_store_n(&t->steal, 1, __ATOMIC_RELAXED);
			n++;
		}
	}
	if (!n)
		return 0;
	sdk_fence_heavy();
	for (t = sdk_g.threads; t; t = t->next) {
		if (!__atomic_load_n(&t->steal, __ATOMIC_RELAXED))
			continue;
		wait_not_busy(t);
		take(t, arg);
		__atomic_store_n(&t->steal, 0, __ATOMIC_RELEASE);
	}
	return n;
}

struct reclaim_arg {
	int slot;
	uint64_t idle_ns, now;
	size_t chunks;
	bool drop;       /* forget the writers too (instance stopped) */
	bool forget;     /* the connection is gone: forget, do not return */
	uint64_t lost;   /* events in the chunks forgotten */
};

static bool pick_reclaim(struct sdk_thread *t, void *arg)
{
	struct reclaim_arg *a = arg;
	unsigned i;

	if (a->forget)
		return true;
	if (a->idle_ns && a->now - __atomic_load_n(&t->last_event_ns, __ATOMIC_RELAXED) < a->idle_ns)
		return false;
	for (i = 0; i < SDK_MAX_INSTANCES; i++) {
		if (t->w[i] && (a->slot < 0 || (int)i == a->slot) &&
		    (t->w[i]->has_chunk || a->drop || a->forget))
			return true;
	}
	return false;
}

static void take_reclaim(struct sdk_thread *t, void *arg)
{
	struct reclaim_arg *a = arg;
	unsigned i;

	if (a->drop) {
		drop_writers(t, a->slot, false);
		return;
	}
	for (i = 0; i < SDK_MAX_INSTANCES; i++) {
		struct sdk_writer *w = t->w[i];

		if (!w || (a->slot >= 0 && (int)i != a->slot))
			continue;
		if (a->forget) {
			/* The arbiter is going: nothing to return the chunk to. */
			if (w->has_chunk)
				a->lost += w->n_packets;
			w->has_chunk = false;
			w->cur = w->end = NULL;
			w->writer_id = 0;
			continue;
		}
		if (w->has_chunk) {
			sdk_writer_release_chunk(w);
			a->chunks++;
		}
	}
}

size_t sdk_writers_reclaim(int slot, uint64_t idle_ns)
{
	struct reclaim_arg a = {.slot = slot, .idle_ns = idle_ns};

	if (idle_ns) {
		uint32_t ver;

		a.now = sdk_clock_now(&ver);
	}
	pthread_mutex_lock(&sdk_g.lock);
	steal_threads(pick_reclaim, take_reclaim, &a);
	pthread_mutex_unlock(&sdk_g.lock);
	sdk_stat_add(&sdk_g.stats.chunks_reclaimed, a.chunks);
	return a.chunks;
}

void sdk_writers_drop_slot(unsigned slot)
{
	struct reclaim_arg a = {.slot = (int)slot, .drop = true};

	pthread_mutex_lock(&sdk_g.lock);
	steal_threads(pick_reclaim, take_reclaim, &a);
	pthread_mutex_unlock(&sdk_g.lock);
}

uint64_t sdk_writers_disconnect(void)
{
	struct reclaim_arg a = {.slot = -1, .forget = true};

	pthread_mutex_lock(&sdk_g.lock);
	steal_threads(pick_reclaim, take_reclaim, &a);
	memset(sdk_g.next_chunk_id, 0, sizeof(sdk_g.next_chunk_id));
	pthread_mutex_unlock(&sdk_g.lock);
	return a.lost;
}

void sdk_writers_after_fork(void)
{
	struct sdk_thread *t = sdk_g.threads, *next;
	unsigned i;

	for (; t; t = next) {
		next = t->next;
		for (i = 0; i < SDK_MAX_INSTANCES; i++)
			free(t->w[i]);
		sdk_thread_reap(t);
		free(t->scratch);
		free(t);
	}
	sdk_g.threads = NULL;
	sdk_t_self = NULL;
	if (g_key_made)
		pthread_setspecific(g_exit_key, NULL);
	memset(sdk_g.next_chunk_id, 0, sizeof(sdk_g.next_chunk_id));
	atomic_store(&sdk_g.stats.writers, 0);
}

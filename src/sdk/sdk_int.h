/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sdk_int.h - private to src/sdk: the state behind include/perfetto-c/pfc.h.
 *
 *   sdk_main.c       pfc_init/shutdown/flush, the control thread (an evloop)
 *                    that owns the producer, reconnects, steals chunks back
 *                    from idle threads; fork and stats
 *   sdk_category.c   the category registry, the descriptor, config matching
 *   sdk_clock.c      TSC -> ns (the kernel's perf mapping, or calibrated)
 *   sdk_writer.c     per-thread writers: chunks of the SMB, fragments, the
 *                    steal protocol (asymmetric fences with membarrier)
 *   sdk_event.c      event encoding: the fast paths and the general one,
 *                    interning, the incremental-state packets
 *   sdk_track.c      named tracks
 *   sdk_inprocess.c  the in-process backend (a private service)
 *
 * Threads: application threads write events, each into its own writer; the
 * control thread handles everything else. A writer is touched by another
 * thread only under the steal protocol (sdk_writer.c).
 */
#ifndef PFC_SDK_SDK_INT_H
#define PFC_SDK_SDK_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "perfetto-c/pfc.h"
#include "tracing/smb_abi.h"

struct arbiter;
struct producer;

/* Sessions that record track events at once (bits of a category's flag). */
#define SDK_MAX_INSTANCES 8
/* Event names one writer remembers by address (direct-mapped). */
#define SDK_NAME_SLOTS 256
/* Annotation names, categories and named tracks one writer remembers. */
#define SDK_ARG_NAME_SLOTS 64
#define SDK_CAT_SLOTS 64
#define SDK_TRACK_SLOTS 32
/* Annotations on one event, and bytes of one event built off the fast path. */
#define SDK_MAX_ARGS 32
#define SDK_MAX_EVENT_BYTES (64u * 1024)
/* A writer that wrote nothing for this long gives its chunk back. */
#define SDK_IDLE_RECLAIM_MS 100
/* Clock snapshots on a sequence at least this often while it writes. */
#define SDK_SNAPSHOT_PERIOD_NS (1000ull * 1000 * 1000)
/* A stalling writer waits this long for a free chunk, then drops. */
#define SDK_STALL_TIMEOUT_MS 3000u
/* Reconnect backoff: 100 ms doubling to 5 s. */
#define SDK_RETRY_MIN_MS 100u
#define SDK_RETRY_MAX_MS 5000u
/* The sequence-scoped clock of event timestamps (delta-encoded, ns). */
#define SDK_CLOCK_ID 64u

/* ------------------------------------------------------------ clock ---- */

/* tsc -> ns: ns = base_ns + ((tsc - base_tsc) * mult) >> shift. */
struct sdk_clock_map {
	uint64_t base_tsc, base_ns;
	uint32_t mult, shift;
	uint32_t version;            /* changes with every new map */
};

extern bool sdk_clock_use_tsc;                /* set once by sdk_clock_init() */
/* The current map. A new one is written into another slot of a small ring
 * before it is published, so a reader holding the old one reads it whole
 * (maps change a few times in the first 300 ms, then once a second). */
extern const struct sdk_clock_map *_Atomic sdk_clock_cur;

void sdk_clock_init(void);
/* Recalibrates from a longer interval (control thread, now and then). */
void sdk_clock_refine(void);
/* BOOTTIME now (ns). */
uint64_t sdk_clock_boottime(void);

static inline uint64_t sdk_rdtsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#else
	return 0;
#endif
}

/* Now on the SDK's clock (ns) and the version of the map it used; the
 * version changes when the map does, and sequences then snapshot anew. */
static inline uint64_t sdk_clock_now(uint32_t *out_version)
{
	const struct sdk_clock_map *m;
	uint64_t tsc;

	if (!sdk_clock_use_tsc) {
		*out_version = 0;
		return sdk_clock_boottime();
	}
	m = atomic_load_explicit(&sdk_clock_cur, memory_order_acquire);
	*out_version = m->version;
	tsc = sdk_rdtsc();
	if (PFC_UNLIKELY_(tsc < m->base_tsc))
		return m->base_ns;
	return m->base_ns + (uint64_t)(((unsigned __int128)(tsc - m->base_tsc) * m->mult) >> m->shift);
}

/* ------------------------------------------------------- categories ---- */

struct pfc_category {
	uint32_t index;
	char *name;
	char *description;
	char **tags;
	size_t n_tags;
};

/* Bit i of sdk_cat_flags[c]: instance slot i records category c. */
extern volatile uint8_t sdk_cat_flags[PFC_MAX_CATEGORIES];

/* The serialized TrackEventDescriptor of every registered category, as a
 * DataSourceDescriptor fragment (field 6); caller frees. NULL on OOM. */
uint8_t *sdk_categories_descriptor(size_t *out_len);
/* Sets slot @slot's bit on the categories @cfg (a TrackEventConfig,
 * serialized; NULL = none) enables. */
void sdk_categories_enable(unsigned slot, const uint8_t *cfg, size_t len);
void sdk_categories_disable(unsigned slot);
/* A forked child: no session's config applies any more. */
void sdk_categories_forget_sessions(void);
/* The registry's lock-free view: category @index or NULL. */
struct pfc_category *sdk_category_get(uint32_t index);
/* Registered categories so far (their indexes are 0..n-1). */
uint32_t sdk_categories_count(void);

/* ------------------------------------------------------------- tracks ---- */

struct pfc_track {
	uint64_t uuid;
	enum pfc_track_kind kind;
	char *name;
};

/* ---------------------------------------------------------- instances ---- */

struct sdk_instance {
	_Atomic bool active;
	uint64_t instance_id;
	uint16_t target_buffer;
	_Atomic bool stall;          /* buffer_exhausted_policy: stall, then drop */
	_Atomic uint32_t gen;        /* incremental state generation */
	bool filter_debug_annotations;
};

/* ----------------------------------------------------------- writers ---- */

/* One (thread, instance slot) sequence. */
/* One slot of a writer's direct-mapped table of strings interned by
 * address. */
struct sdk_interned {
	const void *key;
	uint32_t iid;
	uint32_t len;  /* the string's length, so a known one needs no strlen */
};

struct sdk_writer {
	uint8_t *cur, *end;          /* room in the current chunk; NULL: none */
	struct sdk_thread *owner;
	uint8_t slot;                /* the instance slot it writes for */
	bool dead;                   /* dropped by a stealer; the owner frees it */
	struct sdk_writer *next_dead;
	uint32_t n_packets;          /* in the current chunk */
	uint32_t gen;                /* the instance's gen at the last reset */
	uint32_t clock_version;      /* the clock map the last snapshot used */
	bool lost;                   /* events were dropped: reset before the next */
	bool has_chunk;
	uint8_t chunk_flags;         /* first packet continues from the last chunk */
	uint16_t writer_id;          /* 0: not registered */
	uint16_t target_buffer;
	uint32_t next_chunk_id;
	uint32_t desc_version;       /* the thread's, at the last descriptor */
	uint32_t next_iid;
	uint64_t last_ts;            /* the sequence clock's last value */
	uint64_t snap_sdk, snap_boot; /* the last snapshot's pair; 0: none yet */
	uint64_t snapshot_due_ns;    /* a clock snapshot is due at this time */
	struct smb_chunk chunk;
	/* Interned event names, by address (direct-mapped). */
	struct sdk_interned names[SDK_NAME_SLOTS];
	/* Interned annotation names, by address. */
	struct sdk_interned arg_names[SDK_ARG_NAME_SLOTS];
	/* Interned categories, by index. */
	struct {
		uint32_t index_plus1;
		uint32_t iid;
	} cats[SDK_CAT_SLOTS];
	/* Named tracks described on this sequence since the last reset, by
	 * uuid (direct-mapped: a collision only repeats a descriptor). */
	uint64_t tracks_seen[SDK_TRACK_SLOTS];
};

struct sdk_thread {
	struct sdk_thread *next;     /* registry (sdk_lock) */
	pid_t tid;
	/* The steal protocol: busy is the owner's, steal the control thread's. */
	volatile uint32_t busy;
	volatile uint32_t steal;
	uint32_t desc_version;       /* bumped when the name changes */
	uint64_t last_event_ns;      /* for idle reclaim (owner writes, relaxed) */
	uint64_t n_written, n_dropped; /* owner writes, relaxed; summed by stats */
	char name[64];
	uint64_t track_uuid;
	struct sdk_writer *w[SDK_MAX_INSTANCES];
	struct sdk_writer *dead;     /* dropped writers the owner frees */
	/* Scratch for building events off the fast path. */
	uint8_t *scratch;
};

/* The calling thread's state (sdk_writer.c); NULL until its first event. */
extern __thread struct sdk_thread *sdk_t_self __attribute__((tls_model("initial-exec")));

/* --------------------------------------------------------- the SDK ---- */

/* Counters that are not per thread (the per-thread ones are summed). */
struct sdk_stats_atomic {
	_Atomic uint64_t events_dropped_no_service;
	_Atomic uint64_t chunks_committed, chunks_reclaimed, writers, connections;
};

struct sdk {
	pthread_mutex_t lock;        /* registry, instances, lifecycle */
	bool initialized;
	enum pfc_backend backend;
	/* The connection; NULL while disconnected. Writers use them only while
	 * busy (sdk_writer.c), so the control thread can take them away. */
	struct producer *_Atomic producer;
	struct arbiter *_Atomic arb;
	struct sdk_instance inst[SDK_MAX_INSTANCES];
	struct sdk_thread *threads;
	/* Chunk ids go on where a reused writer id's last writer stopped, so
	 * the service never sees an id twice on one sequence. */
	uint32_t next_chunk_id[SMB_MAX_WRITER_ID + 1];
	struct sdk_stats_atomic stats;
	uint64_t retired_written, retired_dropped; /* of exited threads (lock) */
	pid_t pid;
	uint64_t process_uuid;
	char process_name[64];
};

extern struct sdk sdk_g;

/* sdk_writer.c */
/* The calling thread's state, created on first use; NULL if out of memory
 * or the SDK is not running. */
struct sdk_thread *sdk_thread_get(void);
/* The owner frees the writers a stealer dropped (while busy). */
void sdk_thread_reap(struct sdk_thread *t);
/* The writer of (@t, @slot), created and registered if needed; NULL if the
 * slot's instance is gone or no writer can be made (the event is dropped). */
struct sdk_writer *sdk_writer_get(struct sdk_thread *t, unsigned slot);
/* Room for @len contiguous bytes (one fragment) in @w's chunk, taking a new
 * chunk if needed. Return: the place, or NULL (no room: drop). */
uint8_t *sdk_writer_reserve(struct sdk_writer *w, size_t len);
/* Appends a whole packet of @len bytes, split into fragments over chunks as
 * needed. Return: 0 or -ENOSPC (dropped, counted by the caller). */
int sdk_writer_append(struct sdk_writer *w, const uint8_t *pkt, size_t len);
/* Gives the chunk back to the arbiter (complete). Owner or stealer. */
void sdk_writer_release_chunk(struct sdk_writer *w);
/* Control thread: takes back the chunks of every writer of instance @slot
 * (all slots with @slot < 0), or only of those idle for @idle_ns (0: all),
 * under the steal protocol. Return: chunks taken. */
size_t sdk_writers_reclaim(int slot, uint64_t idle_ns);
/* Control thread: instance @slot stopped; return its writers' chunks and
 * free the writers. */
void sdk_writers_drop_slot(unsigned slot);
/* Control thread: the connection ended (sdk_g.producer and arb are NULL
 * already); forget every writer's chunk and id. Return: events lost in the
 * chunks forgotten. */
uint64_t sdk_writers_disconnect(void);
/* A forked child: free the parent's threads' state (their writers point
 * into the parent's SMB); the calling thread starts afresh. */
void sdk_writers_after_fork(void);
/* Asymmetric fence of the steal protocol (membarrier, or a full fence). */
void sdk_fence_init(void);
void sdk_fence_heavy(void);
extern bool sdk_fence_is_light;

/*
 * The owner's half of the steal protocol, around everything it does with
 * its writers: false if the control thread is taking them (the caller
 * drops the event, or retries).
 */
static inline bool sdk_enter(struct sdk_thread *t)
{
	__atomic_store_n(&t->busy, 1, __ATOMIC_RELAXED);
	if (PFC_LIKELY_(sdk_fence_is_light))
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	else
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (PFC_UNLIKELY_(__atomic_load_n(&t->steal, __ATOMIC_ACQUIRE))) {
		__atomic_store_n(&t->busy, 0, __ATOMIC_RELEASE);
		return false;
	}
	return true;
}

static inline void sdk_leave(struct sdk_thread *t, uint64_t now)
{
	__atomic_store_n(&t->last_event_ns, now, __ATOMIC_RELAXED);
	__atomic_store_n(&t->busy, 0, __ATOMIC_RELEASE);
}

/* sdk_main.c */
/* A category was registered: the service should hear of it. */
void sdk_on_categories_changed(void);
/* This process's random uuid (its track), made once per process. */
uint64_t sdk_process_uuid(void);
void sdk_stat_add(_Atomic uint64_t *c, uint64_t n);

/* sdk_inprocess.c (the control thread, except _start before it runs) */
struct evloop;
/* Starts the private service on @loop and its consumer (which starts the
 * session once the loop runs); @out_socket receives the producer socket.
 * Return: 0 or -errno (the file, the sockets, a bad @cfg). */
int sdk_inprocess_start(struct evloop *loop, const char *path, const uint8_t *cfg,
			size_t cfg_len, char *out_socket, size_t size);
/* Flushes and stops the session; @done runs when the file is complete.
 * Return: 0, or -ENOTCONN (no session: nothing to wait for). */
int sdk_inprocess_finish(uint32_t timeout_ms, void (*done)(void *user), void *user);
/* Tears the service down and closes the file. */
void sdk_inprocess_stop(void);
/* A forked child: forget the parent's service without touching it. */
void sdk_inprocess_forget(void);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pfc.h - the perfetto-c SDK: an application's own events (slices,
 * instants, counters, flows, annotations) in the same trace as the kernel's,
 * on Perfetto's TrackEvent wire format. One header, C99, usable from C++.
 *
 *   static PFC_CATEGORY(train);              // a category, off until a session asks
 *   pfc_init(PFC_BACKEND_SYSTEM, "trainer"); // connect to traced (or traced_relay)
 *   pfc_category_register(&train, "train", "training loop", NULL, 0);
 *   PFC_SLICE_BEGIN(train, "optimizer.step");
 *   ...
 *   PFC_SLICE_END(train);
 *   { PFC_SCOPED_SLICE(train, "load_batch"); ... }   // ends at the closing brace
 *
 * A disabled event costs one load and one predictable branch (the macros
 * test the category's flag before any call). An enabled one is written by
 * the calling thread into its own chunk of shared memory, without locks.
 * An event call waits on nothing but the SDK's own control thread while it
 * hands the thread's chunk over (microseconds: a flush, an idle thread's
 * chunk taken back), or on free room when the session asks writers to
 * stall; nothing here aborts, exits or prints (set
 * PFC_LOG_LEVEL=debug to see the connection's log on stderr). Without a
 * tracing service there are no sessions, so categories are off; the SDK
 * connects when the service appears, and events a lost connection takes
 * with it are counted (pfc_get_stats()). Functions that can fail return 0
 * or -errno.
 * Every function may be called from any thread once pfc_init() returned,
 * except where it says otherwise.
 */
#ifndef PERFETTO_C_PFC_H
#define PERFETTO_C_PFC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PFC_API __attribute__((visibility("default")))

#if defined(__GNUC__) || defined(__clang__)
#define PFC_LIKELY_(x) __builtin_expect(!!(x), 1)
#define PFC_UNLIKELY_(x) __builtin_expect(!!(x), 0)
#else
#define PFC_LIKELY_(x) (x)
#define PFC_UNLIKELY_(x) (x)
#endif

/* ------------------------------------------------------------ lifecycle ---- */

enum pfc_backend {
	/* A producer on traced's producer socket ($PERFETTO_PRODUCER_SOCK_NAME
	 * or the default), shared memory included; on another machine, the
	 * socket of traced_relay. Sessions are started by `perfetto`. */
	PFC_BACKEND_SYSTEM = 1,
	/* A private tracing service inside the process that records into the
	 * file set with pfc_set_in_process_output(), from pfc_init() until
	 * pfc_shutdown(); no daemon needed. */
	PFC_BACKEND_IN_PROCESS = 2,
};

/**
 * pfc_set_socket() - The producer socket for PFC_BACKEND_SYSTEM, in
 * Perfetto's grammar (a path, @abstract, host:port, vsock://cid:port).
 * @name: copied; NULL restores the default.
 * Return: 0; -EBUSY after pfc_init(); -EINVAL; -ENOMEM.
 * Context: before pfc_init().
 */
PFC_API int pfc_set_socket(const char *name);

/**
 * pfc_set_shm_size_kb() - The shared memory buffer size to ask for
 * (a multiple of 4 KiB pages; 0: the service's default).
 * Return: 0; -EBUSY after pfc_init(); -EINVAL.
 */
PFC_API int pfc_set_shm_size_kb(uint32_t kb);

/**
 * pfc_set_in_process_output() - Where PFC_BACKEND_IN_PROCESS writes.
 * @path: the trace file (created or truncated at pfc_init()); copied.
 * @trace_config: a serialized TraceConfig (copied; write_into_file is
 *	forced on), or NULL for the default: a 64 MiB ring buffer with every
 *	category, written to the file every second and at pfc_shutdown(),
 *	with writers that wait (up to 3 s) rather than drop when the shared
 *	memory is full (buffer_exhausted_policy STALL_THEN_DROP).
 * @len: its size in bytes.
 * Return: 0; -EBUSY after pfc_init(); -EINVAL; -ENOMEM.
 */
PFC_API int pfc_set_in_process_output(const char *path, const void *trace_config, size_t len);

/**
 * pfc_init() - Start the SDK.
 *
 * A session's data source config may ask writers to wait for room in the
 * shared memory instead of dropping (buffer_exhausted_policy:
 * BUFFER_EXHAUSTED_STALL_THEN_DROP; STALL_THEN_ABORT is taken as the same,
 * the SDK never aborts): an event then waits up to 3 s for a free chunk.
 * @backend: PFC_BACKEND_SYSTEM or PFC_BACKEND_IN_PROCESS.
 * @producer_name: how the service lists this process (copied); NULL for
 *	"pfc.<program name>".
 *
 * Starts a background thread for the connection. With PFC_BACKEND_SYSTEM it
 * returns at once, connected or not (it keeps trying, up to every 5 s).
 * Return: 0; -EALREADY (already initialized); -EINVAL; -ENOMEM; for the
 * in-process backend, -errno of the output file or the private service.
 */
PFC_API int pfc_init(enum pfc_backend backend, const char *producer_name);

/**
 * pfc_flush() - Hand every thread's buffered events to the service and wait
 * until it has them, at most @timeout_ms.
 * Return: 0; -ETIMEDOUT; -ENOTCONN (no service: nothing to flush into);
 * -EPERM (not initialized).
 * Context: any thread but one inside an event; may block up to @timeout_ms.
 */
PFC_API int pfc_flush(uint32_t timeout_ms);

/**
 * pfc_shutdown() - Flush (at most 1 s), disconnect, stop the background
 * thread; for the in-process backend, finish the trace file. Events after it
 * are dropped. NULL-safe to call twice.
 * Context: not from an atexit handler of a thread that still traces.
 */
PFC_API void pfc_shutdown(void);

/* Counters about this process's events, for tests and health checks. */
struct pfc_stats {
	uint64_t events_written;     /* events that went into shared memory */
	uint64_t events_dropped;     /* with no service, no session or no room */
	uint64_t events_dropped_no_service; /* of which: not connected */
	uint64_t chunks_committed;   /* chunks handed to the service */
	uint64_t chunks_reclaimed;   /* taken back from idle or exited threads */
	uint64_t writers;            /* live per-thread writers */
	uint64_t connections;        /* times the SDK connected to a service */
};

/**
 * pfc_get_stats() - Copy the counters.
 * @out: filled; @size: sizeof(*out) as the caller knows it (older callers
 * get the fields they know).
 * Return: 0; -EINVAL.
 */
PFC_API int pfc_get_stats(struct pfc_stats *out, size_t size);

/* ----------------------------------------------------------- categories ---- */

struct pfc_category; /* opaque */

/*
 * What the macros read: the enabled flag first (a byte that is non-zero
 * while some session records the category), then the category. Define one
 * per category with PFC_CATEGORY(); it reads as disabled until registered.
 */
struct pfc_category_ref {
	const volatile uint8_t *enabled;
	struct pfc_category *cat;
};

/* A byte that stays 0: where unregistered categories point. */
PFC_API extern const volatile uint8_t pfc_disabled_flag;

#define PFC_CATEGORY_REF_INIT {&pfc_disabled_flag, 0}
#define PFC_CATEGORY(var) struct pfc_category_ref var = PFC_CATEGORY_REF_INIT

/**
 * pfc_category_register() - Announce a category to the service and make
 * @ref follow it. A session records it by its track_event_config, with the
 * rules of Perfetto's C SDK: exact names before patterns ("gpu*", "*");
 * enabled_categories, then enabled_tags, then disabled_categories, then
 * disabled_tags; the first rule that matches decides, and a category no
 * rule matches is off (so a config without track_event_config records none).
 * @ref: the PFC_CATEGORY() variable (borrowed: must outlive the SDK).
 * @name: e.g. "train" (copied).  @description: or NULL (copied).
 * @tags: @n_tags tag names (copied), e.g. "slow", "debug".
 * Return: 0; -EINVAL; -EEXIST (a category with that name exists: @ref
 * follows it); -ENOSPC (over PFC_MAX_CATEGORIES); -ENOMEM.
 * Context: any thread, before or after pfc_init().
 */
PFC_API int pfc_category_register(struct pfc_category_ref *ref, const char *name,
				  const char *description, const char *const *tags,
				  size_t n_tags);

#define PFC_MAX_CATEGORIES 1024

/* ------------------------------------------------------------- tracks ---- */

struct pfc_track; /* opaque */

enum pfc_track_kind {
	/* Slices nested like a thread's (begin and end on any thread). */
	PFC_TRACK_SLICES = 0,
	/* The same, for operations that move between threads; slices on one
	 * track still nest, so give overlapping operations a track each (a
	 * uuid per request, say). */
	PFC_TRACK_ASYNC = 1,
	/* Integer or double samples (pfc_te_counter_*). */
	PFC_TRACK_COUNTER = 2,
};

/**
 * pfc_track_create() - A named track of this process, besides the threads'
 * own (which carry their thread's name).
 * @name: copied.  @kind: what goes on it.
 * @uuid: its TrackDescriptor uuid, or 0 for one derived from the name and
 *	the process (two processes naming a track alike get two tracks).
 * @out: the track, valid until pfc_shutdown().
 * Return: 0; -EINVAL; -ENOMEM.
 */
PFC_API int pfc_track_create(const char *name, enum pfc_track_kind kind, uint64_t uuid,
			     struct pfc_track **out);

/** pfc_track_destroy() - Free @track (NULL is allowed) once no thread uses it. */
PFC_API void pfc_track_destroy(struct pfc_track *track);

/** pfc_track_uuid() - The TrackDescriptor uuid of @track (0 for NULL). */
PFC_API uint64_t pfc_track_uuid(const struct pfc_track *track);

/* ------------------------------------------------------------- events ---- */

enum pfc_arg_type {
	PFC_ARG_INT = 1,
	PFC_ARG_UINT = 2,
	PFC_ARG_DOUBLE = 3,
	PFC_ARG_BOOL = 4,
	PFC_ARG_STRING = 5, /* copied into the event */
	PFC_ARG_POINTER = 6,
};

/* A debug annotation; its name should be a string literal (it is interned
 * by address; see PFC_EVENT_DYNAMIC_NAMES). */
struct pfc_arg {
	const char *name;
	enum pfc_arg_type type;
	union {
		int64_t i;
		uint64_t u;
		double d;
		bool b;
		const char *s;
		const void *p;
	} v;
};

static inline struct pfc_arg pfc_arg_int(const char *name, int64_t v)
{
	struct pfc_arg a;

	a.name = name;
	a.type = PFC_ARG_INT;
	a.v.i = v;
	return a;
}

static inline struct pfc_arg pfc_arg_uint(const char *name, uint64_t v)
{
	struct pfc_arg a;

	a.name = name;
	a.type = PFC_ARG_UINT;
	a.v.u = v;
	return a;
}

static inline struct pfc_arg pfc_arg_double(const char *name, double v)
{
	struct pfc_arg a;

	a.name = name;
	a.type = PFC_ARG_DOUBLE;
	a.v.d = v;
	return a;
}

static inline struct pfc_arg pfc_arg_bool(const char *name, bool v)
{
	struct pfc_arg a;

	a.name = name;
	a.type = PFC_ARG_BOOL;
	a.v.b = v;
	return a;
}

static inline struct pfc_arg pfc_arg_string(const char *name, const char *v)
{
	struct pfc_arg a;

	a.name = name;
	a.type = PFC_ARG_STRING;
	a.v.s = v;
	return a;
}

static inline struct pfc_arg pfc_arg_pointer(const char *name, const void *v)
{
	struct pfc_arg a;

	a.name = name;
	a.type = PFC_ARG_POINTER;
	a.v.p = v;
	return a;
}

enum pfc_event_type {
	PFC_EVENT_SLICE_BEGIN = 1,
	PFC_EVENT_SLICE_END = 2,
	PFC_EVENT_INSTANT = 3,
	PFC_EVENT_COUNTER = 4,
};

/* pfc_event.flags */
/* The event name and annotation names are not string literals (they may be
 * freed or reused after the call): interned by content, not by address. */
#define PFC_EVENT_DYNAMIC_NAMES (1u << 0)
/* value_double holds the counter value (else value_int). */
#define PFC_EVENT_COUNTER_DOUBLE (1u << 1)

/* Everything an event may carry. Zero-initialize, then set what you need. */
struct pfc_event {
	enum pfc_event_type type;
	uint32_t flags;
	const char *name;             /* slices and instants */
	const struct pfc_track *track; /* NULL: the calling thread's track */
	int64_t value_int;            /* counters */
	double value_double;
	/* Flows: an id joins this slice to the slices that carry the same id
	 * (also in other processes and on other machines); 0 = none. */
	uint64_t flow_id;
	uint64_t terminating_flow_id; /* the flow ends at this slice */
	const struct pfc_arg *args;
	size_t n_args;
};

/**
 * pfc_te_event() - Write one event of category @cat (for every session that
 * records it). Events are dropped (and counted) when they cannot be
 * written: no room in shared memory, the service gone, or a malformed
 * event (a counter off a counter track, a slice on one, no name). An event
 * is at most 64 KiB encoded and carries at most 32 annotations.
 * @cat: a registered category (the macros pass ref.cat).
 * @e: the event (borrowed for the call).
 * Context: any thread; waits only as the header's first comment says;
 * allocates only for a thread's first event of a session.
 */
PFC_API void pfc_te_event(struct pfc_category *cat, const struct pfc_event *e);

/* The common events, on the calling thread's track; @name a string literal. */
PFC_API void pfc_te_slice_begin(struct pfc_category *cat, const char *name);
PFC_API void pfc_te_slice_end(struct pfc_category *cat);
PFC_API void pfc_te_instant(struct pfc_category *cat, const char *name);
PFC_API void pfc_te_counter_int(struct pfc_category *cat, const struct pfc_track *track,
				int64_t value);
PFC_API void pfc_te_counter_double(struct pfc_category *cat, const struct pfc_track *track,
				   double value);

/**
 * pfc_thread_set_name() - Name the calling thread's track (default: the
 * thread's name from the kernel when it first traces, as `ps` shows it).
 * @name: copied (at most 63 bytes kept).
 * Return: 0; -EINVAL; -EPERM (before pfc_init()); -ENOMEM.
 */
PFC_API int pfc_thread_set_name(const char *name);

/* ------------------------------------------------------------- macros ---- */

#define PFC_ENABLED(ref) PFC_UNLIKELY_(*(ref).enabled)

#define PFC_SLICE_BEGIN(ref, name)                                                     \
	do {                                                                           \
		if (PFC_ENABLED(ref))                                                  \
			pfc_te_slice_begin((ref).cat, (name));                         \
	} while (0)

#define PFC_SLICE_END(ref)                                                             \
	do {                                                                           \
		if (PFC_ENABLED(ref))                                                  \
			pfc_te_slice_end((ref).cat);                                   \
	} while (0)

#define PFC_INSTANT(ref, name)                                                         \
	do {                                                                           \
		if (PFC_ENABLED(ref))                                                  \
			pfc_te_instant((ref).cat, (name));                             \
	} while (0)

#define PFC_COUNTER_INT(ref, track, value)                                             \
	do {                                                                           \
		if (PFC_ENABLED(ref))                                                  \
			pfc_te_counter_int((ref).cat, (track), (value));               \
	} while (0)

#define PFC_COUNTER_DOUBLE(ref, track, value)                                          \
	do {                                                                           \
		if (PFC_ENABLED(ref))                                                  \
			pfc_te_counter_double((ref).cat, (track), (value));            \
	} while (0)

/* Any event: PFC_EVENT(cat, &(struct pfc_event){...}) in C. */
#define PFC_EVENT(ref, event)                                                          \
	do {                                                                           \
		if (PFC_ENABLED(ref))                                                  \
			pfc_te_event((ref).cat, (event));                              \
	} while (0)

/*
 * A slice that ends when the enclosing block does (the compiler's cleanup
 * attribute; GCC and Clang). It ends only if it began: a category enabled
 * in between does not make an end without a begin.
 */
struct pfc_scope_ {
	struct pfc_category *cat;
};

static inline struct pfc_scope_ pfc_scope_begin_(const struct pfc_category_ref *ref,
						  const char *name)
{
	struct pfc_scope_ s;

	s.cat = 0;
	if (PFC_ENABLED(*ref)) {
		s.cat = ref->cat;
		pfc_te_slice_begin(s.cat, name);
	}
	return s;
}

static inline void pfc_scope_end_(struct pfc_scope_ *s)
{
	if (s->cat)
		pfc_te_slice_end(s->cat);
}

#define PFC_CAT2_(a, b) a##b
#define PFC_CAT_(a, b) PFC_CAT2_(a, b)
#define PFC_SCOPED_SLICE(ref, name)                                                    \
	struct pfc_scope_ PFC_CAT_(pfc_scope_, __LINE__)                               \
		__attribute__((cleanup(pfc_scope_end_), unused)) =                      \
			pfc_scope_begin_(&(ref), (name))

#ifdef __cplusplus
}
#endif

#endif

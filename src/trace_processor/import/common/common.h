/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common.h - the import's common layer: what every importer builds on,
 * below the importers (import/<family>/) and the read layer, above the
 * storage. Each part keeps its state private and is reached through the
 * functions below:
 *
 *   struct tp_import  the import context every importer is called with:
 *                     the tables, the options, each part's state (opaque)
 *   array.c       growable arrays
 *   clock.c       the clock graph, clocks qualified by machine or sequence
 *   clock_sync.c  ClockSnapshot and RemoteClockSync packets into the graph
 *                 and clock_snapshot; per-machine trace time; clock units
 *   sequence.c    packet sequences: incremental state, interned data
 *   process.c     threads and processes (tid -> utid, pid -> upid)
 *   sched.c       sched slices, thread states, CPUs
 *   track.c       tracks and counter values
 *   slice.c       slice stacks (and the hooks an importer can register)
 *   args.c        the args table and deduplicated arg sets
 *   stats.c       stats and metadata rows, trace_uuid
 *   proto_text.c  a TraceConfig as text (metadata.trace_config_pbtxt)
 *
 * Everything runs on the parsing thread but sequences and clocks, which
 * the tokenizer feeds in file order, and the clock graph, which the merge
 * worker reads (tp_clock_graph()) while nothing writes it.
 */
#ifndef PFC_TRACE_PROCESSOR_IMPORT_COMMON_COMMON_H
#define PFC_TRACE_PROCESSOR_IMPORT_COMMON_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/hash.h"
#include "base/hmap.h"
#include "trace_processor/storage/storage.h"

/* ------------------------------------------------------------- memory ---- */

/*
 * tp_array_grow() - Make room for @need elements of @elem bytes in *@arr
 * (capacity *@cap, starting at @first, doubling). Return: 0 or -ENOMEM
 * (the array is unchanged then).
 */
int tp_array_grow(void **arr, size_t *cap, size_t need, size_t elem, size_t first);

/* ------------------------------------------------------------- clocks ---- */

#define TP_CLOCK_REALTIME 1
#define TP_CLOCK_REALTIME_COARSE 2
#define TP_CLOCK_MONOTONIC 3
#define TP_CLOCK_MONOTONIC_COARSE 4
#define TP_CLOCK_MONOTONIC_RAW 5
#define TP_CLOCK_BOOTTIME 6
#define TP_CLOCK_TRACE_FILE 11
#define TP_CLOCK_MAX_SNAPSHOTS (1u << 20)
#define TP_CLOCK_MAX_SNAPSHOT_CLOCKS 64

/*
 * Clock ids in the graph are qualified: the raw id in the low 32 bits, and
 * above it the sequence for ids 64..127 (sequence-scoped) or the machine
 * row for the others. The host's clocks are their raw ids.
 */
static inline bool tp_clock_is_sequence(uint64_t id)
{
	return (uint32_t)id >= 64 && (uint32_t)id < 128;
}

static inline uint64_t tp_clock_qualify(uint64_t raw_id, uint32_t seq_id, uint32_t machine)
{
	if (raw_id > UINT32_MAX)
		raw_id = UINT32_MAX; /* no such clock: never in a snapshot */
	if (tp_clock_is_sequence(raw_id))
		return ((uint64_t)seq_id << 32) | raw_id;
	return ((uint64_t)machine << 32) | raw_id;
}

struct tp_clock_graph;

/* One clock of a snapshot: its qualified id and its reading in ns. */
struct tp_clock_reading {
	uint64_t id;
	int64_t value;
	uint64_t unit_ns;             /* 0 or 1: ns */
	bool incremental;
};

/* A conversion: out = ts + shift, for every ts in [lo, hi) of the source. */
struct tp_clock_span {
	int64_t shift;
	int64_t lo, hi;
};

int tp_clock_create(struct tp_clock_graph **out);
void tp_clock_destroy(struct tp_clock_graph *g);
/* The clock trace time is expressed in (BOOTTIME unless the trace says). */
void tp_clock_set_trace_clock(struct tp_clock_graph *g, uint64_t clock_id);
uint64_t tp_clock_trace_clock(const struct tp_clock_graph *g);
/*
 * The trace clock chosen before the first conversion (a primary_trace_clock,
 * or BOOTTIME from a snapshot holding it but not TRACE_FILE), or -1.
 */
int64_t tp_clock_claimed_trace_clock(const struct tp_clock_graph *g);
/*
 * tp_clock_add_snapshot() - @n clocks read at the same instant. Every call
 * takes the next snapshot id (as Perfetto numbers them), refused or not.
 * @is_bridge: an assumed relation (clocks taken to be aligned), which any
 * real snapshot of the same two clocks replaces.
 * @out_id: the snapshot's id, on success.
 * Return: 0; -EINVAL if refused (Perfetto's invalid_clock_snapshots: a
 * clock listed twice, a global incremental clock, a unit or encoding that
 * changed, the trace clock not in ns or going backwards); -E2BIG past the
 * limits; -ENOMEM.
 */
int tp_clock_add_snapshot(struct tp_clock_graph *g, const struct tp_clock_reading *r, size_t n,
			  bool is_bridge, uint32_t *out_id);
/* Whether some chain of snapshots leads from @from to @to. */
bool tp_clock_has_path(struct tp_clock_graph *g, uint64_t from, uint64_t to);
/*
 * tp_clock_convert_span() - How @ts of @from converts to @to, and the range
 * of @from's values that convert the same way (for callers that cache it).
 * Return: 0 and *out; -ENOENT if @from is in no snapshot, -EDOM if @to is
 * in none, -ENOLINK if no chain of snapshots links them.
 */
int tp_clock_convert_span(struct tp_clock_graph *g, uint64_t from, int64_t ts, uint64_t to,
			  struct tp_clock_span *out);
/* @ts of @from in @to; errors as tp_clock_convert_span(). Not counted as a conversion. */
int tp_clock_convert(struct tp_clock_graph *g, uint64_t from, int64_t ts, uint64_t to,
		     int64_t *out);
/*
 * tp_clock_convert_cached() - tp_clock_convert() as Perfetto's
 * ClockSynchronizer::Convert does it: through its cache of the last 8
 * conversions (each with the range of source values it holds for; emptied
 * by every snapshot; a new one replaces the slot a std::minstd_rand picks),
 * counting a miss (clock_sync_cache_miss) on every lookup that finds none,
 * failed ones included. Only for the conversions Perfetto makes.
 */
int tp_clock_convert_cached(struct tp_clock_graph *g, uint64_t from, int64_t ts, uint64_t to,
			    int64_t *out);
/* Lookups tp_clock_convert_cached() found no cached conversion for. */
uint64_t tp_clock_cache_misses(const struct tp_clock_graph *g);
/*
 * tp_clock_to_trace() - Convert @ts of clock @clock_id to trace time,
 * through tp_clock_convert_cached() when @cached (Perfetto's ToTraceTime).
 * Return: 0 and *out; errors as tp_clock_convert_span().
 */
int tp_clock_to_trace(struct tp_clock_graph *g, uint64_t clock_id, int64_t ts, bool cached,
		      int64_t *out);

/* ------------------------------------------------------------- events ---- */

/* What the read layer sorts and hands the importers, one at a time. */
enum tp_event_kind {
	TP_EV_PACKET,         /* a whole TracePacket: data/len */
	TP_EV_FTRACE,         /* one FtraceEvent: data/len, cpu */
	TP_EV_BUNDLE,         /* an FtraceEventBundle: data/len, cpu (bundle.c) */
	TP_EV_TRACK_EVENT,    /* one TrackEvent: data/len, record #aux (te_token.c) */
	TP_EV_POWER_RAIL,     /* one PowerRails.EnergyData: data/len, packet #aux */
};

struct tp_event {
	int64_t ts;
	const uint8_t *data;
	uint32_t len;
	uint16_t kind;
	uint16_t seq_idx;     /* packet's sequence slot (TP_EV_PACKET) */
	uint32_t cpu;
	uint32_t aux;         /* free for the kinds that need it; bundles and
			       * their events: track event generation + 1 */
	uint32_t machine;     /* machine row (0 = host) */
};

/* ---------------------------------------------------- import context ---- */

#define TP_MAX_SEQUENCES 4096
/* Direct-mapped cache of tid lookups, in front of a hash map (process.c). */
#define TP_TID_CACHE 1024         /* (machine, tid) -> utid */
#define TP_MAX_CPUS_PER_MACHINE 4096 /* ucpu = machine * this + cpu, as Perfetto */
#define TP_MAX_CPU_MACHINES 1024  /* machines whose CPUs get rows */

/*
 * A slot of the tid cache. It is written wherever the tid map is, so it
 * only ever holds the value the lookup would return: a miss costs one
 * lookup, a hit never changes a result.
 */
struct tp_tid_slot {
	uint64_t key;                 /* the tid map's key */
	int64_t utid_plus1;           /* 0: empty */
};

/*
 * The import context, one per trace: what every importer is called with.
 * The read layer makes it (read/reader.c) and drives the importers with
 * it. Each state below belongs to one part of the import, opaque to all
 * the others, which reach it only through the owner's functions; the
 * importers' states hang here too (as Perfetto's TraceProcessorContext
 * holds its trackers), defined and touched only in their own folders.
 */
struct tp_import {
	struct tp_db *db;             /* the tables (storage.h): every part appends rows */
	/* options (struct tp_options) */
	bool no_ftrace_raw;           /* no ftrace_event rows */
	bool analyze_proto_content;   /* arg sets of track event (category, name) pairs */
	bool crop_track_events;       /* drop track events before the range of interest */
	/* import/common */
	struct tp_stats *stats;       /* stats and metadata rows (stats.c) */
	struct tp_clock_sync *clock_sync; /* the clock graph and more (clock_sync.c) */
	struct tp_sequences *seqs;    /* packet sequences (sequence.c) */
	struct tp_args_state *args;   /* arg sets (args.c) */
	struct tp_slices *slices;     /* open slices (slice.c) */
	struct tp_states *states;     /* values held by state tracks (state.c) */
	struct tp_tracks *tracks;     /* tracks (track.c) */
	struct tp_procs *procs;       /* processes and threads (process.c) */
	struct tp_tid_slot *tids;     /* its tid cache, read by tp_proc_get_thread() */
	struct tp_sched *sched;       /* sched slices and thread states (sched.c) */
	/* import/<family> */
	struct tp_ftrace *ftrace;     /* ftrace/ */
	struct tp_te *te;             /* track_event/; NULL until the first one */
	struct tp_android *android;   /* android/ */
	struct tp_chrome *chrome;     /* chrome/ */
	struct tp_system *system;     /* system/ */
	struct tp_gk *gk;             /* generic_kernel/; NULL until the first packet */
	struct tp_profiling *profiling; /* profiling/; NULL until the first sample */
	/* set by system/ (a start-of-trace FtraceStats), read by ftrace/ */
	bool ftrace_preserve_buffer;  /* the ftrace buffer was not cleared: drop nothing */
};

/* -------------------------------------------------------- clock sync ---- */

/* clock_sync.c */
/* The clock graph and what the import tracks about clocks; 0 or -ENOMEM. */
int tp_clock_sync_init(struct tp_import *imp);
void tp_clock_sync_fini(struct tp_import *imp);
/* The clock graph (borrowed; the merge worker converts ftrace times with it). */
struct tp_clock_graph *tp_clock_graph(struct tp_import *imp);
/*
 * tp_clock_to_ns() - @ts of @clock_id in ns: scaled by the unit a snapshot
 * gave the clock, or accumulated if it is incremental (unchanged for the
 * others).
 */
int64_t tp_clock_to_ns(struct tp_import *imp, uint64_t clock_id, int64_t ts);
/*
 * tp_clock_snapshot_packet() - A ClockSnapshot of @machine on sequence
 * @seq_id into the graph and clock_snapshot. Return: its time in trace
 * time, or -1 if none of its clocks converts.
 */
int64_t tp_clock_snapshot_packet(struct tp_import *imp, const uint8_t *data, size_t len,
				 uint32_t seq_id, uint32_t machine);
/*
 * tp_remote_clock_sync() - A RemoteClockSync of @machine (its rounds with
 * the host): the client's snapshots, and per clock a link host <-> client
 * at the offset the rounds measured (Perfetto's CalculateClockOffsets).
 */
void tp_remote_clock_sync(struct tp_import *imp, const uint8_t *data, size_t len,
			  uint32_t machine);
/*
 * tp_to_trace_time() - @ts of the qualified clock @clock_id of @machine in
 * trace time. A machine's first call relates its BOOTTIME to trace time if
 * nothing does yet (Perfetto's rule: clock_sync.c). Failures are
 * counted in stats when @count_failure. Through Perfetto's conversion
 * cache (tp_clock_convert_cached()) unless @uncached: for conversions
 * Perfetto does not make.
 * Return: 0 and *out, or the error of tp_clock_to_trace().
 */
int tp_to_trace_time(struct tp_import *imp, uint64_t clock_id, uint32_t machine, int64_t ts,
		     bool count_failure, bool uncached, int64_t *out);
/* Records the conversion cache's misses as clock_sync_cache_miss; once, at the end. */
void tp_clock_sync_finish(struct tp_import *imp);

/* ---------------------------------------------------------- sequences ---- */

/* The TracePacket fields the tokenizer reads before the payload. */
struct tp_packet_hdr {
	uint64_t ts;
	bool has_ts;
	bool has_seq_id;
	bool cleared;                 /* incremental_state_cleared or the flag */
	bool dropped;                 /* previous_packet_dropped */
	uint32_t dropped_causes;      /* its bits (DATA_LOSS_*; bit 0: any loss) */
	bool first_on_seq;
	uint32_t seq_id;
	uint32_t seq_flags;
	uint32_t machine;
	const uint8_t *defaults;      /* TracePacketDefaults, or NULL */
	uint32_t defaults_len;
	const uint8_t *interned;      /* InternedData, or NULL */
	uint32_t interned_len;
};

/*
 * A generation: the incremental state of one sequence between two changes
 * (cleared, packet loss, new defaults, new thread descriptor). Events
 * carry the generation they were tokenized in (sequence.c).
 */
struct tp_seq_gen {
	uint32_t slot;           /* the sequence's slot */
	uint32_t intern_gen;     /* interned data generation (new on every clear) */
	const uint8_t *defaults; /* TrackEventDefaults bytes, or NULL */
	uint32_t defaults_len;
	const uint8_t *perf_defaults; /* PerfSampleDefaults bytes, or NULL */
	uint32_t perf_defaults_len;
	const uint8_t *ss_defaults; /* StackSampleDefaults bytes, or NULL */
	uint32_t ss_defaults_len;
	bool valid;              /* incremental state valid */
	bool has_thread;         /* TrackEvent thread descriptor seen */
	int32_t pid;
	int64_t tid;
};

/* An interned entry: the message bytes (in a packet) and its string value. */
struct tp_interned {
	uint64_t iid;
	uint32_t intern_gen;
	uint32_t field;
	const uint8_t *msg;
	uint32_t len;
	uint32_t str; /* field 2 as a string id, 0 if none */
};

int tp_seq_init(struct tp_import *imp);
void tp_seq_fini(struct tp_import *imp);
/* The slot of sequence @seq_id (made on first sight), or -1 past TP_MAX_SEQUENCES. */
int tp_seq_slot(struct tp_import *imp, uint32_t seq_id);
/* The trusted_packet_sequence_id of @slot. */
uint32_t tp_seq_id(const struct tp_import *imp, uint32_t slot);
/* The sequence's TracePacketDefaults.timestamp_clock_id; 0: none. */
uint64_t tp_seq_default_clock(const struct tp_import *imp, uint32_t slot);
/* The data losses of a sequence, as TraceStats sums them per buffer. */
struct tp_seq_loss {
	uint64_t lost;                /* packets after the first saying previous_packet_dropped */
	uint64_t causes[8];           /* of those, how many had DATA_LOSS_* bit i + 1 */
	bool incremental_dropped;     /* every packet needing incremental state was skipped */
};
/* The losses of sequence @seq_id (false if it was never seen). */
bool tp_seq_loss(const struct tp_import *imp, uint64_t seq_id, struct tp_seq_loss *out);
/* Whether a packet of sequence @seq_id said first_packet_on_sequence. */
bool tp_seq_had_first_packet(const struct tp_import *imp, uint32_t seq_id);

#define TP_SEQ_RESET (1u << 0) /* the incremental state was cleared or lost */
#define TP_SEQ_DROP (1u << 1)  /* the packet needs state the sequence lacks (counted) */
/*
 * tp_seq_on_packet() - One packet of @slot, in file order: counts, the
 * default clock, clears, losses, defaults and interned data.
 * Return: TP_SEQ_* flags.
 */
unsigned tp_seq_on_packet(struct tp_import *imp, uint32_t slot, const struct tp_packet_hdr *h);
/* The current generation of @slot; UINT32_MAX if none (or no such slot). */
uint32_t tp_seq_gen_of(const struct tp_import *imp, uint32_t slot);
/* The current generation of @slot, made (invalid) if none; UINT32_MAX on OOM. */
uint32_t tp_seq_cur_gen(struct tp_import *imp, uint32_t slot);
/*
 * tp_seq_new_gen() - A new generation of @slot, a copy of the current one,
 * for the caller to change. Return: it; past the limits (counted), the
 * current one, or NULL if there is none.
 */
struct tp_seq_gen *tp_seq_new_gen(struct tp_import *imp, uint32_t slot);
/* Generation @gen (borrowed, valid until the next new one), or NULL. */
struct tp_seq_gen *tp_seq_gen(const struct tp_import *imp, uint32_t gen);
/* Interned entry @iid of InternedData field @field in generation @gen, or NULL (counted). */
const struct tp_interned *tp_seq_interned(struct tp_import *imp, uint32_t gen, uint32_t field,
					  uint64_t iid);
/* The same, not counted (Perfetto counts a miss of InternedStringId too). */
const struct tp_interned *tp_seq_interned_quiet(struct tp_import *imp, uint32_t gen,
						uint32_t field, uint64_t iid);
/* A number that stays @e's (an entry of tp_seq_interned()) for the whole import. */
uint64_t tp_seq_interned_index(const struct tp_import *imp, const struct tp_interned *e);

/* --------------------------------------------------------------- args ---- */

/*
 * args.c. A new arg set id (the id of the next args row); tp_arg_*
 * append to it (@key: an interned string id). A set left empty must not
 * be used.
 */
int64_t tp_args_new_set(struct tp_import *imp);
void tp_arg_int(struct tp_import *imp, int64_t set, uint32_t key, int64_t v);
void tp_arg_uint(struct tp_import *imp, int64_t set, uint32_t key, uint64_t v);
void tp_arg_real(struct tp_import *imp, int64_t set, uint32_t key, double v);
void tp_arg_str(struct tp_import *imp, int64_t set, uint32_t key, const char *s, size_t len);

/* The args of one set before it is stored (struct tp_argset). */
#define TP_ARGSET_MAX 4096      /* args one set can hold */

enum tp_arg_type {
	TP_ARG_INT,
	TP_ARG_UINT,
	TP_ARG_STR,
	TP_ARG_REAL,
	TP_ARG_PTR,
	TP_ARG_BOOL,
	TP_ARG_NULL,
	TP_ARG_JSON,
};

struct tp_arg {
	uint32_t flat_key; /* string ids */
	uint32_t key;
	uint8_t type;        /* enum tp_arg_type */
	bool skip_if_exists; /* a later arg with the same key does not replace it */
	union {
		int64_t i;
		double d;
		uint32_t s; /* string id; 0 is a NULL string */
	} v;
};

/* Args being collected for one row; committed as one (deduplicated) set. */
struct tp_argset {
	struct tp_arg *a;
	uint32_t n, cap;
	uint32_t *arr; /* (key, next index) pairs of the set's arrays */
	uint32_t n_arr, cap_arr;
};

int tp_args_init(struct tp_import *imp);
void tp_args_fini(struct tp_import *imp);
void tp_argset_int(struct tp_import *imp, struct tp_argset *b, uint32_t key, int64_t v);
void tp_argset_uint(struct tp_import *imp, struct tp_argset *b, uint32_t key, uint64_t v);
void tp_argset_str(struct tp_import *imp, struct tp_argset *b, uint32_t key, uint32_t str);
void tp_argset_bool(struct tp_import *imp, struct tp_argset *b, uint32_t key, bool v);
/* The general form: @flat_key differs from @key inside arrays ("a.b" vs "a[0].b"). */
void tp_argset_add(struct tp_import *imp, struct tp_argset *b, const struct tp_arg *arg);
/*
 * tp_argset_commit() - Store @b as an arg set (an identical set is reused)
 * and empty @b. Return: the arg_set_id, or TP_NULL_INT when @b is empty.
 */
int64_t tp_argset_commit(struct tp_import *imp, struct tp_argset *b);
/*
 * The next index of array @key (a string id) in @b, and its increment
 * (returning the new next index): as Perfetto's, counted per set, so args
 * added later (an end event's) continue an array. Reset by a commit.
 */
uint32_t tp_argset_array_next(const struct tp_argset *b, uint32_t key);
uint32_t tp_argset_array_inc(struct tp_argset *b, uint32_t key);
void tp_argset_fini(struct tp_argset *b);

/* ------------------------------------------------------------- states ---- */

/* state.c: the state table (Perfetto's StateTracker). */
int tp_state_init(struct tp_import *imp);
void tp_state_fini(struct tp_import *imp);
/*
 * tp_state_update() - At @ts state track @track takes @value (a string id;
 * 0: none). A different value, or none, ends the value held (its dur is
 * the gap); @value starts a row of @category (0: NULL) and dur -1; the
 * same value again continues the row held. Return: the pending args of
 * the row now held (add to them; stored when it ends), or NULL when none
 * is held (or on OOM).
 */
struct tp_argset *tp_state_update(struct tp_import *imp, int64_t ts, int64_t track,
				  uint32_t value, uint32_t category);
/* At the end of the trace: the args of the values still held are stored. */
void tp_state_finish(struct tp_import *imp);

/* ------------------------------------------------------------- slices ---- */

/*
 * What an importer can ask of every slice (tp_slice_set_hooks()); any may
 * be NULL. @user is the hooks' own.
 */
struct tp_slice_hooks {
	/* The name a slice is stored, and an end matched, under. */
	uint32_t (*name)(void *user, uint32_t name);
	/* Slice @row just began on @track. */
	void (*begun)(void *user, int64_t track, uint32_t row);
	/* Whether @args must wait for the end of the trace (tp_slice_finish()). */
	bool (*defer)(void *user, const struct tp_argset *args);
	/* Rewrites @args just before they are stored. */
	void (*rewrite)(void *user, struct tp_argset *args);
	void *user;
};

int tp_slice_init(struct tp_import *imp);
void tp_slice_fini(struct tp_import *imp);
/* Installs @hooks (copied) in place of the previous ones. */
void tp_slice_set_hooks(struct tp_import *imp, const struct tp_slice_hooks *hooks);
/*
 * Slices on a track, nested by a stack per track (slice.c). Return: the
 * slice row, or -1 when nothing was begun/ended (counted in stats).
 */
int64_t tp_slice_begin(struct tp_import *imp, int64_t ts, int64_t track, uint32_t cat,
		       uint32_t name);
int64_t tp_slice_end(struct tp_import *imp, int64_t ts, int64_t track, uint32_t cat,
		     uint32_t name);
/* A slice of known duration (0 for instants). */
int64_t tp_slice_scoped(struct tp_import *imp, int64_t ts, int64_t dur, int64_t track,
			uint32_t cat, uint32_t name);
/* An end in two steps, so that end args join the slice before it is popped. */
int64_t tp_slice_end_start(struct tp_import *imp, int64_t ts, int64_t track, uint32_t cat,
			   uint32_t name);
void tp_slice_end_done(struct tp_import *imp, int64_t track, uint32_t row);
/* The pending args of open slice @row on @track (NULL if it left the stack). */
struct tp_argset *tp_slice_args(struct tp_import *imp, int64_t track, uint32_t row);
/* The innermost open slice on @track, or -1. */
int64_t tp_slice_top(struct tp_import *imp, int64_t track);
/* The end of the trace: held-back args, then every open slice's, are stored. */
void tp_slice_finish(struct tp_import *imp);
/*
 * The order Perfetto's slice tracker walks its stacks of tracks @keys
 * (given in creation order) at the end: @order gets the indexes of @keys,
 * n of them (track_order.c). Return: 0, or -ENOMEM.
 */
int tp_track_map_order(const uint32_t *keys, size_t n, uint32_t *order);

/* ---------------------------------------------------------- processes ---- */

/* process.c */

/* Who named a thread or process; a name is replaced only by one ranked as high (Perfetto's). */
enum tp_name_prio {
	TP_NAME_OTHER = 0,
	TP_NAME_FTRACE = 1,             /* sched_switch, sched_waking, task_* comms */
	TP_NAME_PROCESS_TREE = 2,       /* /proc scans */
	TP_NAME_TRACK_DESCRIPTOR_THREAD_TYPE = 3,
	TP_NAME_TRACK_DESCRIPTOR = 4,
	TP_NAME_SYSTEM = 4,             /* process names from the kernel or /proc */
	TP_NAME_CONSTANT = 5,           /* "swapper" */
};

int tp_proc_init(struct tp_import *imp);
/*
 * tp_proc_add_idle() - The idle process and thread (pid and tid 0,
 * "swapper") of a machine, made with its machine row as Perfetto does.
 * Return: 0 or -ENOMEM.
 */
int tp_proc_add_idle(struct tp_import *imp, uint32_t machine);
void tp_proc_fini(struct tp_import *imp);
/*
 * The tid_to_utid key of (machine, tid) when tid fits 32 bits (wider ones
 * are hashed: process.c), and its slot in the lookup cache.
 */
static inline bool tp_proc_narrow_key(uint32_t machine, int64_t tid, uint64_t *out)
{
	if (tid < INT32_MIN || tid > (int64_t)UINT32_MAX)
		return false;
	*out = ((uint64_t)machine << 32) | (uint32_t)tid;
	return true;
}

static inline struct tp_tid_slot *tp_proc_tid_slot(struct tp_import *imp, uint64_t k)
{
	return &imp->tids[(k ^ (k >> 29)) & (TP_TID_CACHE - 1)];
}

int64_t tp_proc_get_thread_slow(struct tp_import *imp, uint32_t machine, int64_t tid);
/*
 * The thread for @tid now (created if new, with no process yet). Ftrace
 * events ask several times each: a cache hit costs no call.
 */
static inline int64_t tp_proc_get_thread(struct tp_import *imp, uint32_t machine, int64_t tid)
{
	const struct tp_tid_slot *s;
	uint64_t k;

	if (tp_proc_narrow_key(machine, tid, &k)) {
		s = tp_proc_tid_slot(imp, k);
		if (s->utid_plus1 && s->key == k)
			return s->utid_plus1 - 1;
	}
	return tp_proc_get_thread_slow(imp, machine, tid);
}
/* The newest thread of @tid, or -1 if there is none (never creates one). */
int64_t tp_proc_find_thread(struct tp_import *imp, uint32_t machine, int64_t tid);
/* A new thread row for @tid (start @ts or TP_NULL_INT), the one @tid now means. */
int64_t tp_proc_start_thread(struct tp_import *imp, uint32_t machine, int64_t ts, int64_t tid);
/* A thread for @tid starting at @ts: ends the previous one of that tid. */
int64_t tp_proc_new_thread(struct tp_import *imp, uint32_t machine, int64_t ts, int64_t tid);
/* The newest process of @pid, or -1 if there is none (never creates one). */
int64_t tp_proc_find_process(struct tp_import *imp, uint32_t machine, int64_t pid);
/* The process of @pid, created if none (without a main thread). */
int64_t tp_proc_get_process(struct tp_import *imp, uint32_t machine, int64_t pid);
/*
 * tp_proc_get_process_main() - The process of @pid; a new one gets its
 * main thread (tid @pid: the live one if it is in no other process, else
 * a new row), as Perfetto's GetOrCreateProcess.
 */
int64_t tp_proc_get_process_main(struct tp_import *imp, uint32_t machine, int64_t pid);
/*
 * tp_proc_update_thread() - Thread @tid of process @pid (Perfetto's
 * UpdateThread): the process is made with its main thread if new; the
 * live thread of @tid is taken if it is in that process or in none, else
 * a new one is made; threads paired with it join the process too.
 */
int64_t tp_proc_update_thread(struct tp_import *imp, uint32_t machine, int64_t tid, int64_t pid);
/*
 * tp_proc_start_process() - A process @pid that starts at @ts (a fork):
 * the old process of @pid and every thread of tid @pid are forgotten; a
 * new main thread named @name (@prio) is made; the process is named @name.
 */
int64_t tp_proc_start_process(struct tp_import *imp, uint32_t machine, int64_t ts, int64_t pid,
			      uint32_t name, enum tp_name_prio prio);
/* The parent of @upid is the process of thread @parent_utid, now or once it is known. */
void tp_proc_set_parent_thread(struct tp_import *imp, int64_t upid, int64_t parent_utid);
/* The parent of @upid is @parent_upid, unless it had another (counted). */
void tp_proc_set_parent(struct tp_import *imp, int64_t upid, int64_t parent_upid);
int64_t tp_proc_new_process(struct tp_import *imp, uint32_t machine, int64_t ts, int64_t pid);
/* Links @utid to the process @pid (tgid). */
void tp_proc_set_thread_process(struct tp_import *imp, int64_t utid, uint32_t machine, int64_t pid);
/* Names @utid @name (a string id; 0 does nothing) unless a higher-ranked source named it. */
void tp_proc_update_thread_name(struct tp_import *imp, int64_t utid, uint32_t name,
				enum tp_name_prio prio);
/* tp_proc_update_thread_name() by a track descriptor. */
void tp_proc_set_thread_name(struct tp_import *imp, int64_t utid, uint32_t name);
void tp_proc_update_process_name(struct tp_import *imp, int64_t upid, uint32_t name,
				 enum tp_name_prio prio);
/* A thread renamed itself: its name, and its process's if it is the main thread. */
void tp_proc_rename_thread(struct tp_import *imp, int64_t utid, uint32_t name,
			   enum tp_name_prio prio);
void tp_proc_end_thread(struct tp_import *imp, int64_t ts, int64_t utid);
/*
 * tp_proc_associate() - Threads @utid_a and @utid_b share a process: one
 * that has it gives it to the other, else the pair waits until one gets
 * it, as Perfetto's AssociateThreads (two different processes: counted
 * in process_tracker_errors).
 */
void tp_proc_associate(struct tp_import *imp, int64_t utid_a, int64_t utid_b);
/*
 * tp_proc_free_thread() - sched_process_free of @tid: ends its live thread
 * and stops tracking it; for a process's main thread, ends and forgets the
 * process, so a reused pid or tid gets new rows.
 */
void tp_proc_free_thread(struct tp_import *imp, uint32_t machine, int64_t ts, int64_t tid);
/* The is_kthread arg of process @upid (stored by tp_proc_finish()). */
void tp_proc_set_kthread(struct tp_import *imp, int64_t upid, bool is_kthread);
/*
 * tp_proc_add_arg() - @arg for process @id (or thread @id if @thread),
 * stored with the others at the end of the trace, as Perfetto's
 * AddArgsToProcess/AddArgsToThread.
 */
void tp_proc_add_arg(struct tp_import *imp, bool thread, int64_t id, const struct tp_arg *arg);
/* The {process,thread}_sort_index_hint arg of @id (the last one set). */
void tp_proc_set_sort_index(struct tp_import *imp, bool thread, int64_t id, int32_t sort_index);
/* The end of the trace: the processes' args are stored, by upid. */
void tp_proc_finish(struct tp_import *imp);

/* -------------------------------------------------------------- sched ---- */

/* sched.c */
int tp_sched_init(struct tp_import *imp);
void tp_sched_fini(struct tp_import *imp);
/* @prev_utid: the thread leaving the CPU, or -1 to look @prev_pid up now. */
void tp_sched_switch(struct tp_import *imp, uint32_t machine, uint32_t cpu, int64_t ts,
		     int64_t prev_pid, int64_t prev_utid, int64_t prev_state, int64_t next_pid,
		     uint32_t next_comm, int64_t next_prio);
/*
 * tp_sched_waking() - @pid woken at @ts on @cpu by @waker_utid (-1:
 * unknown): a blocked thread becomes runnable, with the waker (and its
 * running row) and @irq_context (TP_NULL_INT: unknown).
 */
void tp_sched_waking(struct tp_import *imp, uint32_t machine, uint32_t cpu, int64_t ts,
		     int64_t pid, int64_t waker_utid, int64_t irq_context);
void tp_sched_finish(struct tp_import *imp);
/* The cpu table row of (@machine, @cpu), created on first use; -1 on OOM. */
int64_t tp_sched_ucpu(struct tp_import *imp, uint32_t machine, uint32_t cpu);
/* The cpu table row of (@machine, @cpu) if it has one, else -1. */
int64_t tp_sched_find_ucpu(struct tp_import *imp, uint32_t machine, uint32_t cpu);
/* The thread running on @ucpu (a row tp_sched_ucpu() gave) as far as we know; -1: unknown. */
int64_t tp_sched_running(struct tp_import *imp, int64_t ucpu);
void tp_sched_set_running(struct tp_import *imp, int64_t ucpu, int64_t utid);
/*
 * tp_sched_new_task() - A task @utid was created at @ts by @waker_utid:
 * its first state is runnable, woken by its creator (Perfetto's
 * PushNewTaskEvent).
 */
void tp_sched_new_task(struct tp_import *imp, int64_t ts, int64_t utid, int64_t waker_utid);
/* The priority the CPU's last switch gave the thread it runs (0: none yet). */
int64_t tp_sched_last_prio(struct tp_import *imp, int64_t ucpu);
void tp_sched_set_last_prio(struct tp_import *imp, int64_t ucpu, int64_t prio);
/* The open thread_state row of @utid, or -1. */
int64_t tp_sched_open_state(struct tp_import *imp, int64_t utid);
/* Changes the state of @utid's open thread_state row, if any. */
void tp_sched_set_open_state(struct tp_import *imp, int64_t utid, uint32_t state);
/*
 * tp_sched_push_state() - A thread_state row for @utid from @ts on, ending
 * its open one there (@state: a string id, 0 for NULL; @cpu and @ucpu may
 * be TP_NULL_INT). Return: the row, or -1 for the idle thread or on OOM.
 */
int64_t tp_sched_push_state(struct tp_import *imp, int64_t utid, int64_t ts, uint32_t state,
			    int64_t cpu, int64_t ucpu);

/* ------------------------------------------------------------- tracks ---- */

enum tp_dim_kind { TP_DIM_STR, TP_DIM_INT, TP_DIM_UINT };

/* One dimension of a track: @v is a string id for TP_DIM_STR. */
struct tp_dim {
	const char *key;
	enum tp_dim_kind kind;
	int64_t v;
};

/*
 * tp_track_dims() - The track of Perfetto's @type with dimensions @dims
 * (stored as its dimension arg set) on @machine, created named @name (a
 * string id, 0 for none) on first use; @idx tells apart tracks a
 * compressor spreads overlapping slices over (0 otherwise). Return: the
 * track id, or -1 on OOM (track.c).
 */
int64_t tp_track_dims(struct tp_import *imp, const char *type, uint32_t name, bool is_counter,
		      uint32_t machine, const struct tp_dim *dims, size_t n_dims, uint32_t idx);
/* The global battery_stats.* counter @name (atrace or system property). */
void tp_battery_stats_counter(struct tp_import *imp, uint32_t machine, int64_t ts,
			      const char *name, size_t len, double value);

/* track.c */
int tp_track_init(struct tp_import *imp);
void tp_track_fini(struct tp_import *imp);
int64_t tp_track_cpu_counter(struct tp_import *imp, const char *name, uint32_t machine, int64_t cpu);
/*
 * tp_track_cpu_counter_dims() - The counter track @name of (@machine, @cpu)
 * with Perfetto's track @type and dimension args: cpu, then @dim_key =
 * @dim_val (a string) unless @dim_key is NULL. Return: the track id, or < 0.
 */
int64_t tp_track_cpu_counter_dims(struct tp_import *imp, const char *name, const char *type,
				  uint32_t machine, int64_t cpu, const char *dim_key,
				  const char *dim_val);
/*
 * tp_track_process_counter() - The counter track @name of process @upid,
 * created with Perfetto's track @type and dimension args: upid, then
 * @dim_key = @dim_val (a string) unless @dim_key is NULL.
 */
int64_t tp_track_process_counter(struct tp_import *imp, const char *name, const char *type,
				 int64_t upid, const char *dim_key, const char *dim_val);
/*
 * tp_track_group_new() - A new track_group_id: one per set of tracks a
 * track compressor spreads slices over, numbered across all importers in
 * the order the sets are first seen (Perfetto's track_group_idx_state).
 */
uint32_t tp_track_group_new(struct tp_import *imp);
int64_t tp_track_global_counter(struct tp_import *imp, const char *name, uint32_t machine);
int64_t tp_track_thread(struct tp_import *imp, int64_t utid);
/* A counter value on @track (< 0: none); Return: its row, or -1. */
int64_t tp_counter_add(struct tp_import *imp, int64_t ts, int64_t track, double value);
/*
 * tp_counter_set_utid() - The counter row @row gets the arg set {utid:
 * @utid (uint)}, made now: the thread behind a process-scoped value (as
 * Perfetto records it for atrace counters and process counters pushed by
 * a thread). Nothing when @row or @utid is < 0.
 */
void tp_counter_set_utid(struct tp_import *imp, int64_t row, int64_t utid);
/*
 * tp_counter_for_thread() - A process counter value pushed by thread
 * @utid (Perfetto's PushProcessCounterForThread): stored now with a utid
 * arg; tp_counter_finish() puts it on the "mem.<@mem_key>" process_memory
 * track (@mem_key NULL: "oom_score_adj") of the process the thread
 * belongs to at the end of the trace, or on the thread's
 * *_thread_fallback track. @mem_key is borrowed and must outlive the
 * import (a literal). Return: the counter row, or -1.
 */
int64_t tp_counter_for_thread(struct tp_import *imp, int64_t ts, double value, int64_t utid,
			      const char *mem_key);
/* Gives the counters of tp_counter_for_thread() their tracks (once, at the end). */
void tp_counter_finish(struct tp_import *imp);

/* -------------------------------------------------- stats, metadata ---- */

/* proto_text.c */
struct buf;
/* Messages nested deeper than this print as raw bytes (no recursion). */
#define TP_PROTO_TEXT_MAX_DEPTH 64
/*
 * tp_trace_config_text() - Append the TraceConfig @data (@len bytes) as the
 * protobuf text Perfetto's trace processor makes of it (protozero_to_text
 * with new lines: wire order, two-space indent, unknown fields by number).
 * Return: 0, or -ENOMEM (@out then holds what was printed so far).
 */
int tp_trace_config_text(const uint8_t *data, size_t len, struct buf *out);
/* The name of @value of the config enum @enum_name ("VmstatCounters"), or NULL. */
const char *tp_proto_enum_name(const char *enum_name, int32_t value);

/* stats.c */
int tp_stats_init(struct tp_import *imp);
void tp_stats_fini(struct tp_import *imp);
/* The machine of stats that belong to no machine (Perfetto's global ones). */
#define TP_STAT_GLOBAL UINT32_MAX
/* Adds @value to (or sets) the stat; idx -1 for single stats. */
void tp_stat_add(struct tp_import *imp, const char *name, int64_t idx, uint32_t machine,
		 int64_t value);
void tp_stat_set(struct tp_import *imp, const char *name, int64_t idx, uint32_t machine,
		 int64_t value);
/* The stats row of a stat (created, at 0, on first use); -1 on OOM. */
int64_t tp_stat_row(struct tp_import *imp, const char *name, int64_t idx, uint32_t machine);
/* Whether the stat has a row (then its value in *out_value); makes none. */
bool tp_stat_get(struct tp_import *imp, const char *name, int64_t idx, uint32_t machine,
		 int64_t *out_value);
/* tp_stat_add() for a row from tp_stat_row(). */
void tp_stat_add_row(struct tp_import *imp, int64_t row, int64_t value);
void tp_metadata_set_int(struct tp_import *imp, const char *name, uint32_t machine, int64_t v);
void tp_metadata_set_str(struct tp_import *imp, const char *name, uint32_t machine,
			 const char *s, size_t len);
/* A row of a multi-valued key (one per call). */
void tp_metadata_add_int(struct tp_import *imp, const char *name, int64_t v);
void tp_metadata_add_str(struct tp_import *imp, const char *name, const char *s, size_t len);
/*
 * tp_metadata_finish() - Once everything is set: number the rows in the
 * order Perfetto sets its keys (its passes over the trace), not the order
 * the import set them.
 */
void tp_metadata_finish(struct tp_import *imp);
/*
 * tp_metadata_append() - A new "single" row @name of @machine on every call
 * (Perfetto's dynamic keys, e.g. Chrome's "cr-*"): the string @s of @len
 * bytes, or @v when @s is NULL.
 */
void tp_metadata_append(struct tp_import *imp, const char *name, uint32_t machine, int64_t v,
			const char *s, size_t len);
/*
 * tp_trace_uuid_hash() - Feed the file's next @len bytes (from its start):
 * until a TraceUuid packet says otherwise, trace_uuid is a hash of the
 * first 4 KiB, as Perfetto names traces (stats.c).
 */
void tp_trace_uuid_hash(struct tp_import *imp, const uint8_t *data, size_t len);
/*
 * tp_trace_uuid_set() - trace_uuid from a uuid's halves ((0, 0) is none and
 * is ignored): a TraceUuid packet's, or a TraceConfig's (@from_config),
 * which is ignored once the trace gave one.
 */
void tp_trace_uuid_set(struct tp_import *imp, uint64_t msb, uint64_t lsb, bool from_config);

/* ---------------------------------------------------------- arithmetic ---- */

/*
 * Times, deltas and offsets read from a trace can be anything: they are
 * added and subtracted with two's-complement wrap-around (a nonsense value
 * for nonsense input), never with signed overflow, which is undefined.
 */
static inline int64_t tp_ts_add(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}

static inline int64_t tp_ts_sub(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a - (uint64_t)b);
}

/* Products and sums of trace values that saturate instead of overflowing. */
static inline int64_t tp_sat_mul(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_mul_overflow(a, b, &r))
		return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
	return r;
}

static inline int64_t tp_sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b < 0 ? INT64_MIN : INT64_MAX;
	return r;
}

/* A hash of a NUL-terminated name and two numbers (keys of rows by name). */
static inline uint64_t tp_hash_name(const char *name, uint64_t a, uint64_t b)
{
	uint64_t h = fnv1a64(name, strlen(name));

	h = fnv1a64_update(h, &a, sizeof(a));
	return fnv1a64_update(h, &b, sizeof(b));
}

/* Folds @v into the hash @h (keys of the importers' hash maps). */
static inline uint64_t tp_hash_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

#endif

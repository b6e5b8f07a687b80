/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read_int.h - what the read layer's files share, private to them:
 *
 *   reader.c  sets the import up; reads the file, frames Trace.packet
 *   token.c   tokenizer: per-packet timestamps, clocks, sequences,
 *                compressed packets, machines; pushes everything timed
 *                into the sorter (an ftrace bundle as one entry)
 *   sort.c    sorts the pushed events by trace time (stable)
 *   pipe.c    the parse stage: a worker merges sorted entries and ftrace
 *                bundles (bundle.c) into ops that the caller's thread
 *                applies through the dispatch (parse.c)
 *   arena.c   memory that lives until parsing ends
 */
#ifndef PFC_TRACE_PROCESSOR_READ_READ_INT_H
#define PFC_TRACE_PROCESSOR_READ_READ_INT_H

#include "trace_processor/import/common/common.h"
#include "trace_processor/import/ftrace/ftrace.h"
#include "trace_processor/read/read.h"

/* ------------------------------------------------------------- memory ---- */

/* Bytes that stay alive until the import ends (chunks, inflated packets). */
struct tp_arena {
	struct tp_block *blocks;
	size_t bytes;
};

void tp_arena_init(struct tp_arena *a);
void tp_arena_fini(struct tp_arena *a);
/* Return: @size bytes owned by the arena, or NULL. */
uint8_t *tp_arena_alloc(struct tp_arena *a, size_t size);

/* -------------------------------------------------------------- sorter ---- */

struct tp_sorter {
	struct tp_event *ev;
	size_t n, cap;
};

int tp_sorter_push(struct tp_sorter *s, const struct tp_event *ev);
/* Sorts by ts, keeping push order among equal timestamps. */
int tp_sorter_sort(struct tp_sorter *s);
void tp_sorter_fini(struct tp_sorter *s);

/* ------------------------------------------------------------ bundles ---- */

struct tp_bundle_event {
	struct tp_ftrace_header h;
	uint32_t order;
	struct tp_ftrace_hot hot;
};

/* A string of a bundle's compact_sched intern table: bytes in the trace. */
struct tp_comm_src {
	const uint8_t *data;
	uint32_t len;
};

/*
 * One open bundle during parsing: three sorted streams (bundle.c). The
 * merge worker (pipe.c) fills and advances it; the parsing thread reads
 * the records the worker's ops point at, and fills comm_ids.
 */
#define TP_BUNDLE_MAX_NOTES 8
/*
 * The queues of Perfetto's sorter a bundle's events go to: one per CPU and
 * kind, created (numbered) as the tokenizer first pushes to them, in this
 * order within a bundle. tp_bundle_first_ts() sets bit 1 << kind in
 * *out_queues for each kind the bundle has.
 */
enum tp_queue_kind { TP_Q_SWITCH, TP_Q_WAKING, TP_Q_FTRACE, TP_Q_KINDS };

struct tp_bundle_cursor {
	uint32_t machine, cpu;
	uint32_t gen;                 /* tp_event.aux of the bundle */
	int64_t offset;               /* ftrace clock -> boot clock */
	struct tp_bundle_event *ev;
	size_t n_ev, i_ev, cap_ev;
	struct tp_compact_switch *sw;
	size_t n_sw, i_sw, cap_sw;
	struct tp_compact_waking *wk;
	size_t n_wk, i_wk, cap_wk;
	struct tp_comm_src *comm_src; /* compact_sched intern table */
	size_t n_comms, cap_comm_src;
	uint32_t *comm_ids;           /* its string ids, interned by the parsing thread */
	size_t cap_comm_ids;
	uint64_t n_clock_errors;
	struct tp_clock_span span;    /* the last conversion to trace time, if has_span */
	bool has_span;
	int64_t head_ts;              /* time of the next event, if has_head */
	bool has_head;
	uint8_t head_kind;            /* enum tp_queue_kind of the next event */
	uint32_t rank[TP_Q_KINDS];    /* each kind's queue number (set by the opener) */
	/* What opening it found besides events, for the parser, in order. */
	struct tp_bundle_note {
		const char *stat;     /* a stat to add @value to; NULL: intern comm_src */
		int64_t value;
	} notes[TP_BUNDLE_MAX_NOTES];
	uint32_t n_notes;
};

struct pz_field;
struct tp_import;
struct tp_pipe;
struct tp_clock_graph;
/*
 * The CPU of a bundle and its earliest event time. Return: 1 and both; 0
 * and *@out_cpu if it has no events; -EBADMSG if it is malformed.
 */
int tp_bundle_first_ts(const uint8_t *data, size_t len, uint64_t *out_cpu, int64_t *out_ts,
		       unsigned *out_queues);

/*
 * Decodes a bundle entry into @c (whose buffers are reused); what the
 * parser must hear before its events is in c->notes. Context: the merge
 * worker.
 */
int tp_bundle_open(struct tp_clock_graph *clocks, struct tp_bundle_cursor *c,
		   const struct tp_event *ev);
/*
 * The time of the cursor's next event: false when it is done. Its next
 * event is the earliest of its kinds' next ones, at equal times the one
 * whose queue has the lowest number (as Perfetto's sorter picks a queue).
 */
bool tp_bundle_peek(const struct tp_bundle_cursor *c, int64_t *out_ts);
/*
 * tp_bundle_stick() - Perfetto's sorter drains the queue it picked while
 * its next event is no later than every other queue's first: if the next
 * event of @kind is no later than @rival_ts and than the cursor's other
 * kinds' next ones, it becomes the next event (true).
 */
bool tp_bundle_stick(struct tp_bundle_cursor *c, unsigned kind, int64_t rival_ts);
/* Re-picks the next event as tp_bundle_peek() says (after a stick). */
void tp_bundle_unstick(struct tp_bundle_cursor *c);
enum tp_bundle_item {
	TP_BUNDLE_NONE,       /* the cursor is done */
	TP_BUNDLE_LATE,       /* an event before the newest time handed on: dropped */
	TP_BUNDLE_FTRACE,     /* *out_rec: a struct tp_bundle_event */
	TP_BUNDLE_SWITCH,     /* *out_rec: a struct tp_compact_switch */
	TP_BUNDLE_WAKING,     /* *out_rec: a struct tp_compact_waking */
};
/*
 * tp_bundle_next() - The cursor's next event, and its time; advances. An
 * event before *@parse_ts, the newest time handed on so far, is late;
 * otherwise it becomes *@parse_ts.
 */
enum tp_bundle_item tp_bundle_next(struct tp_bundle_cursor *c, int64_t *parse_ts,
				   const void **out_rec, int64_t *out_ts);
void tp_bundle_close(struct tp_bundle_cursor *c);
void tp_bundle_fini(struct tp_bundle_cursor *c);

/* ---------------------------------------------------------- parse pipe ---- */

/*
 * pipe.c: the parse stage. A worker thread merges the sorted entries
 * and the bundles' events into ops in trace time order; the caller's
 * thread applies them to the tables.
 */
typedef void (*tp_pipe_drop_cb)(void *user);
typedef void (*tp_guard_cb)(void *user);

/*
 * tp_pipe_run() - Parse every sorted entry of @imp. @drop, if not NULL, is
 * called (on the worker) every @drop_every events: it may drop pages of a
 * mapped trace. @guard runs the worker's body so that a SIGBUS on the
 * mapping ends it (reader.c). Return: 0; -EIO if the worker's guard tripped
 * (the ops before it are parsed).
 * Context: the caller's thread parses; one worker thread while it runs.
 */
int tp_pipe_run(struct tp_read *r, tp_pipe_drop_cb drop, uint64_t drop_every,
		int (*guard)(tp_guard_cb fn, void *arg, void *user), void *user);
/* Stops and frees a pipe whose caller left tp_pipe_run() by a signal. */
void tp_pipe_abort(struct tp_pipe *p);

/* --------------------------------------------------------------- read ---- */

/* One trace's import: the importers' context and the reader's own state. */
/* ftrace_cpu_start's value for a CPU whose first bundle gave no start. */
#define FTRACE_START_NONE UINT64_MAX

/* The key of a (machine, kind, cpu) queue in tp_read.queue_rank. */
static inline uint64_t tp_queue_key(uint32_t machine, unsigned kind, uint32_t cpu)
{
	return (uint64_t)machine << 32 | (uint64_t)kind << 24 | cpu;
}

struct tp_read {
	struct tp_import imp;
	bool progress;                /* MB read and MB/s on stderr */
	struct tp_arena arena;
	struct tp_sorter sorter;
	bool imported;
	uint8_t *map;                 /* a regular file, mapped instead of read */
	size_t map_len;
	/* tokenizer (token.c) */
	bool in_compressed;           /* tokenizing the packets of compressed_packets */
	int64_t latest_ts;            /* newest timestamp tokenized */
	struct hmap ftrace_cpu_start; /* (machine << 32 | cpu) -> data start (token.c) */

	struct hmap queue_rank;       /* tp_queue_key() -> sorter queue number */
	uint32_t n_queues;            /* queues numbered (0, 1: packets, track events) */
	struct hmap machine_rows;     /* raw machine id -> machine row (host: none) */
	bool host_has_packets;        /* a packet without machine_id was seen */
	bool machine_adoption_done;   /* the first machine_id was resolved */
	uint64_t n_packets;
	uint64_t bytes_read;
	/* parse stage (pipe.c) */
	uint64_t n_parsed;            /* events merged so far (the merge worker's) */
	struct tp_pipe *pipe;         /* while parsing */
};

/* token.c */
int tp_tokenize_packet(struct tp_read *r, const uint8_t *data, size_t len, uint32_t machine);

/* parse.c */
void tp_parse_event(struct tp_import *imp, const struct tp_event *ev);
/* Before the first event is parsed: what the importers need from the whole tokenized trace. */
void tp_parse_begin(struct tp_read *r);
void tp_parse_finish(struct tp_read *r);

#endif

// SPDX-License-Identifier: Apache-2.0
/*
 * pipe.c - the parse stage on two threads. A worker walks the sorted
 * entries, opens each ftrace bundle when its entry comes up (bundle.c)
 * and merges the open bundles' events by time, turning everything into
 * ops in trace time order; the caller's thread applies the ops to the
 * tables (parse.c, ftrace.c). The worker touches only the trace
 * bytes, the clock graph and its cursors: stats and strings it would
 * write travel as ops too, so the tables see exactly the sequence one
 * thread would produce. Ops go in fixed batches through a queue of
 * N_BATCHES under one mutex; without a thread, each batch is applied as
 * it fills. The other way, the parsing thread hands the worker the pages
 * its tables will need next (base/bigmem.h populators): the worker maps
 * them between batches, so zeroing fresh memory is off the parsing
 * thread, the one that sets the pace.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/bigmem.h"
#include "base/compiler.h"
#include "trace_processor/read/read_int.h"

#define OPS_PER_BATCH 2048
#define N_BATCHES 8
/* Page ranges the parsing thread asked the worker to map, at most. */
#define N_POPULATE 64

enum op_kind {
	OP_PACKET,     /* ptr: a sorted tp_event */
	OP_FTRACE,     /* ptr: a tp_bundle_event */
	OP_SWITCH,     /* ptr: a tp_compact_switch of cursor c */
	OP_WAKING,     /* ptr: a tp_compact_waking of cursor c */
	OP_STAT,       /* ptr: the stat's name (static); value */
	OP_COMMS,      /* intern c's table */
	OP_DONE,       /* c is no longer referenced: back to the spares */
};

struct op {
	const void *ptr;
	struct tp_bundle_cursor *c;
	int64_t ts_or_value;
	uint32_t machine, cpu;
	uint32_t kind;
	uint32_t aux;  /* the event's tp_event.aux (its bundle's generation + 1) */
};

struct batch {
	struct op ops[OPS_PER_BATCH];
	size_t n;
};

/*
 * Open cursors, a min-heap on (next event time, its queue's number, entry
 * index). Ties go as in Perfetto's sorter, which merges one queue per CPU
 * and kind (ftrace events, compact switches, compact wakings), numbered as
 * the tokenizer first pushed to them: a fresh pick takes the lowest
 * number, but the queue being drained keeps going while its next event is
 * no later than every other queue's first (sticky: the root cursor's kind
 * is that queue, and wins ties even against packets, queue 0).
 */
struct heap_ent {
	int64_t ts;
	uint32_t rank;
	size_t seq;
	struct tp_bundle_cursor *c;
};

struct tp_pipe {
	struct tp_read *r;

	/* Shared, under mu. */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct batch *batches;
	size_t full[N_BATCHES], full_head, n_full;  /* FIFO of filled batches */
	size_t free_[N_BATCHES], n_free;            /* batches to fill */
	struct tp_bundle_cursor **spares;            /* cursors to reuse */
	size_t n_spares, cap_spares;
	bool done, stop, failed;
	struct populate_req {
		void *addr;
		size_t len;
	} pop[N_POPULATE];                           /* FIFO of page ranges to map */
	size_t pop_head, n_pop;

	bool threaded;
	pthread_t thread;

	/* The worker's. */
	struct batch *cur;
	bool stopping;                               /* it saw stop */
	struct heap_ent *heap;
	size_t n_heap, cap_heap;
	bool sticky;                                 /* heap[0] drains its ties */
	struct tp_bundle_cursor **all;               /* every cursor, to free */
	size_t n_all, cap_all;
	int64_t parse_ts;
	tp_pipe_drop_cb drop;
	uint64_t drop_every, dropped_at;
	void *user;
	int (*guard)(tp_guard_cb fn, void *arg, void *user);
};

/* ------------------------------------------------------------ parsing ---- */

/* The string id of a compact record's comm (index + 1 into c's table). */
static uint32_t comm_id(const struct tp_bundle_cursor *c, uint32_t idx)
{
	return idx && idx <= c->n_comms ? c->comm_ids[idx - 1] : 0;
}

static void apply(struct tp_pipe *p, const struct op *o)
{
	struct tp_import *imp = &p->r->imp;
	struct tp_event ev = {0};
	size_t i;

	ev.ts = o->ts_or_value;
	ev.cpu = o->cpu;
	ev.machine = o->machine;
	ev.aux = o->aux;
	switch (o->kind) {
	case OP_PACKET:
		tp_parse_event(imp, o->ptr);
		break;
	case OP_FTRACE: {
		const struct tp_bundle_event *be = o->ptr;

		ev.kind = TP_EV_FTRACE;
		tp_ftrace_parse_event(imp, &ev, &be->h, &be->hot);
		break;
	}
	case OP_SWITCH: {
		struct tp_compact_switch s = *(const struct tp_compact_switch *)o->ptr;

		s.next_comm = comm_id(o->c, s.next_comm);
		tp_ftrace_parse_compact_switch(imp, &ev, &s);
		break;
	}
	case OP_WAKING: {
		struct tp_compact_waking w = *(const struct tp_compact_waking *)o->ptr;

		w.comm = comm_id(o->c, w.comm);
		tp_ftrace_parse_compact_waking(imp, &ev, &w);
		break;
	}
	case OP_STAT:
		tp_stat_add(imp, o->ptr, -1, o->machine, o->ts_or_value);
		break;
	case OP_COMMS: {
		struct tp_bundle_cursor *c = o->c;

		if (tp_array_grow((void **)&c->comm_ids, &c->cap_comm_ids, c->n_comms,
				  sizeof(*c->comm_ids), 64) < 0) {
			c->n_comms = 0;
			break;
		}
		for (i = 0; i < c->n_comms; i++)
			c->comm_ids[i] = tp_str_intern(&imp->db->strings,
						       (const char *)c->comm_src[i].data,
						       c->comm_src[i].len);
		break;
	}
	case OP_DONE:
		pthread_mutex_lock(&p->mu);
		/* Room for every cursor was made when it was created. */
		p->spares[p->n_spares++] = o->c;
		pthread_mutex_unlock(&p->mu);
		break;
	}
}

/* Records an op points at were written on the other core: fetched ahead. */
#define PREFETCH_OPS 8

static void apply_batch(struct tp_pipe *p, struct batch *b)
{
	size_t i;

	for (i = 0; i < b->n; i++) {
		if (i + PREFETCH_OPS < b->n) {
			const struct op *o = &b->ops[i + PREFETCH_OPS];

			if (o->kind == OP_FTRACE) {
				const struct tp_bundle_event *be = o->ptr;

				PFC_PREFETCH(be);
				PFC_PREFETCH(&be->hot);
			}
		}
		apply(p, &b->ops[i]);
	}
	b->n = 0;
}

/*
 * The parsing thread's populator: while batches wait for this thread (the
 * worker is ahead), the worker maps the pages when it next hands on a
 * batch; when none wait (the worker sets the pace), once it is done, or
 * with its queue full, they are mapped here and now.
 */
static void populate_on_worker(void *ctx, void *addr, size_t len)
{
	struct tp_pipe *p = ctx;
	bool queued = false;

	pthread_mutex_lock(&p->mu);
	if (!p->done && p->n_full && p->n_pop < N_POPULATE) {
		p->pop[(p->pop_head + p->n_pop) % N_POPULATE] = (struct populate_req){addr, len};
		p->n_pop++;
		queued = true;
		pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
	if (!queued)
		bigmem_populate_now(addr, len);
}

/* The parsing thread: applies batches until the worker is done. */
static void consume(struct tp_pipe *p)
{
	for (;;) {
		struct batch *b;
		size_t idx;

		pthread_mutex_lock(&p->mu);
		while (!p->n_full && !p->done)
			pthread_cond_wait(&p->cv, &p->mu);
		if (!p->n_full) {
			pthread_mutex_unlock(&p->mu);
			return;
		}
		idx = p->full[p->full_head];
		p->full_head = (p->full_head + 1) % N_BATCHES;
		p->n_full--;
		pthread_mutex_unlock(&p->mu);
		b = &p->batches[idx];
		apply_batch(p, b);
		pthread_mutex_lock(&p->mu);
		p->free_[p->n_free++] = idx;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
	}
}

/* ------------------------------------------------------------- worker ---- */

/* Queues the worker's batch for the parsing thread. Context: under mu. */
static void enqueue(struct tp_pipe *p)
{
	p->full[(p->full_head + p->n_full) % N_BATCHES] = (size_t)(p->cur - p->batches);
	p->n_full++;
	pthread_cond_broadcast(&p->cv);
}

/*
 * Hands the worker's full batch on and takes an empty one (without a
 * thread: applies it). Sets p->stopping if the parsing thread gave up.
 */
static void publish(struct tp_pipe *p)
{
	if (!p->threaded) {
		apply_batch(p, p->cur);
		return;
	}
	pthread_mutex_lock(&p->mu);
	enqueue(p);
	for (;;) {
		if (p->n_pop && !p->stop) {
			struct populate_req q = p->pop[p->pop_head];

			p->pop_head = (p->pop_head + 1) % N_POPULATE;
			p->n_pop--;
			pthread_mutex_unlock(&p->mu);
			bigmem_populate_now(q.addr, q.len);
			pthread_mutex_lock(&p->mu);
			continue;
		}
		if (p->n_free || p->stop)
			break;
		pthread_cond_wait(&p->cv, &p->mu);
	}
	if (p->stop)
		p->stopping = true;
	else
		p->cur = &p->batches[p->free_[--p->n_free]];
	pthread_mutex_unlock(&p->mu);
}

static void push_aux(struct tp_pipe *p, enum op_kind kind, const void *ptr,
		     struct tp_bundle_cursor *c, int64_t ts_or_value, uint32_t machine, uint32_t cpu,
		     uint32_t aux)
{
	struct op *o = &p->cur->ops[p->cur->n++];

	o->kind = kind;
	o->ptr = ptr;
	o->c = c;
	o->ts_or_value = ts_or_value;
	o->machine = machine;
	o->cpu = cpu;
	o->aux = aux;
	if (p->cur->n < OPS_PER_BATCH)
		return;
	publish(p);
	if (p->stopping)
		p->cur->n = 0; /* nobody applies it any more */
}

static void push(struct tp_pipe *p, enum op_kind kind, const void *ptr, struct tp_bundle_cursor *c,
		 int64_t ts_or_value, uint32_t machine, uint32_t cpu)
{
	push_aux(p, kind, ptr, c, ts_or_value, machine, cpu, 0);
}

static void push_stat(struct tp_pipe *p, const char *name, uint32_t machine, int64_t value)
{
	push(p, OP_STAT, name, NULL, value, machine, 0);
}

/* Hands on what opening @c found (stats, its intern table), in order. */
static void push_notes(struct tp_pipe *p, struct tp_bundle_cursor *c)
{
	uint32_t i;

	for (i = 0; i < c->n_notes; i++) {
		if (c->notes[i].stat)
			push_stat(p, c->notes[i].stat, c->machine, c->notes[i].value);
		else
			push(p, OP_COMMS, NULL, c, 0, c->machine, c->cpu);
	}
}

/* Hands on @c's next event (or counts it as late) and advances @c. */
static void push_next(struct tp_pipe *p, struct tp_bundle_cursor *c)
{
	const void *rec = NULL;
	int64_t ts = 0;

	switch (tp_bundle_next(c, &p->parse_ts, &rec, &ts)) {
	case TP_BUNDLE_NONE:
		break;
	case TP_BUNDLE_LATE:
		push_stat(p, "sorter_push_event_out_of_order", TP_STAT_GLOBAL, 1);
		break;
	case TP_BUNDLE_FTRACE:
		push_aux(p, OP_FTRACE, rec, NULL, ts, c->machine, c->cpu, c->gen);
		break;
	case TP_BUNDLE_SWITCH:
		push_aux(p, OP_SWITCH, rec, c, ts, c->machine, c->cpu, c->gen);
		break;
	case TP_BUNDLE_WAKING:
		push_aux(p, OP_WAKING, rec, c, ts, c->machine, c->cpu, c->gen);
		break;
	}
}

/* A cursor to fill: a spare one, or a new one; NULL on OOM. */
static struct tp_bundle_cursor *cursor_get(struct tp_pipe *p)
{
	struct tp_bundle_cursor *c = NULL;

	pthread_mutex_lock(&p->mu);
	if (p->n_spares)
		c = p->spares[--p->n_spares];
	pthread_mutex_unlock(&p->mu);
	if (c)
		return c;
	if (tp_array_grow((void **)&p->all, &p->cap_all, p->n_all + 1, sizeof(*p->all), 16) < 0)
		return NULL;
	pthread_mutex_lock(&p->mu);
	/* Room in spares for every cursor, so that OP_DONE never allocates. */
	if (tp_array_grow((void **)&p->spares, &p->cap_spares, p->n_all + 1, sizeof(*p->spares),
			  16) < 0) {
		pthread_mutex_unlock(&p->mu);
		return NULL;
	}
	pthread_mutex_unlock(&p->mu);
	c = calloc(1, sizeof(*c));
	if (c)
		p->all[p->n_all++] = c;
	return c;
}

static bool heap_less(const struct heap_ent *a, const struct heap_ent *b)
{
	if (a->ts != b->ts)
		return a->ts < b->ts;
	if (a->rank != b->rank)
		return a->rank < b->rank;
	return a->seq < b->seq;
}

static void heap_sift_down(struct tp_pipe *p, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, s = i;
		struct heap_ent t;

		if (l < p->n_heap && heap_less(&p->heap[l], &p->heap[s]))
			s = l;
		if (r < p->n_heap && heap_less(&p->heap[r], &p->heap[s]))
			s = r;
		if (s == i)
			return;
		t = p->heap[i];
		p->heap[i] = p->heap[s];
		p->heap[s] = t;
		i = s;
	}
}

static int heap_push(struct tp_pipe *p, const struct heap_ent *e)
{
	size_t i;

	if (tp_array_grow((void **)&p->heap, &p->cap_heap, p->n_heap + 1, sizeof(*p->heap), 16) < 0)
		return -ENOMEM;
	if (p->sticky && heap_less(e, &p->heap[0])) {
		/* The drained queue's run ends: its cursor's next is picked afresh. */
		p->sticky = false;
		tp_bundle_unstick(p->heap[0].c);
		p->heap[0].rank = p->heap[0].c->rank[p->heap[0].c->head_kind];
		heap_sift_down(p, 0);
	}
	i = p->n_heap++;
	p->heap[i] = *e;
	while (i > 0) {
		size_t up = (i - 1) / 2;
		struct heap_ent t;

		if (!heap_less(&p->heap[i], &p->heap[up]))
			break;
		t = p->heap[i];
		p->heap[i] = p->heap[up];
		p->heap[up] = t;
		i = up;
	}
	if (i == 0)
		p->sticky = false;
	return 0;
}

/* Counts an event handed on; every so often, the mapped pages are dropped. */
static void parsed_one(struct tp_pipe *p)
{
	struct tp_read *r = p->r;

	if (p->drop && ++r->n_parsed - p->dropped_at >= p->drop_every) {
		p->drop(p->user);
		p->dropped_at = r->n_parsed;
	}
}

/*
 * Hands on the open bundles' events earlier than @limit (all of them if
 * @drain), in heap order; a sticky root also hands on its events at
 * @limit. The cursor on top keeps going while its next event is no later
 * than both children's (it stays sticky), which is what emitting one event
 * at a time and reheaping unless sticky would do.
 */
static void merge_until(struct tp_pipe *p, int64_t limit, bool drain)
{
	while (p->n_heap && !p->stopping &&
	       (drain || p->heap[0].ts < limit || (p->sticky && p->heap[0].ts == limit))) {
		struct heap_ent *top = &p->heap[0];
		int64_t rival_ts = INT64_MAX, ts;
		bool more, stick;

		if (p->n_heap > 1)
			rival_ts = p->heap[1].ts;
		if (p->n_heap > 2 && p->heap[2].ts < rival_ts)
			rival_ts = p->heap[2].ts;
		do {
			unsigned kind = top->c->head_kind;

			push_next(p, top->c);
			parsed_one(p);
			more = tp_bundle_peek(top->c, &ts);
			/* The same queue goes on while no other one is earlier. */
			stick = more && tp_bundle_stick(top->c, kind, rival_ts);
			if (stick)
				tp_bundle_peek(top->c, &ts);
		} while (stick && (drain || ts <= limit));
		if (more) {
			p->sticky = stick;
			top->ts = ts;
			top->rank = top->c->rank[top->c->head_kind];
			if (p->sticky)
				continue;
		} else {
			p->sticky = false;
			tp_bundle_close(top->c);
			push(p, OP_DONE, NULL, top->c, 0, 0, 0);
			p->heap[0] = p->heap[--p->n_heap];
		}
		if (p->n_heap)
			heap_sift_down(p, 0);
	}
}

/* The queue numbers of @c's kinds (token.c numbered them) and its first event. */
static void set_ranks(struct tp_read *r, struct tp_bundle_cursor *c, const struct tp_event *ev)
{
	uint64_t v;
	unsigned k;

	for (k = 0; k < TP_Q_KINDS; k++)
		c->rank[k] = hmap_get(&r->queue_rank, tp_queue_key(ev->machine, k, ev->cpu), &v)
				     ? (uint32_t)v
				     : UINT32_MAX;
	tp_bundle_unstick(c);
}

/* The worker's body: every sorted entry, merged with the bundles' events. */
static void produce(void *user)
{
	struct tp_pipe *p = user;
	struct tp_read *r = p->r;
	size_t i;

	for (i = 0; i < r->sorter.n && !p->stopping; i++) {
		const struct tp_event *ev = &r->sorter.ev[i];
		struct heap_ent e;

		if (p->drop && r->n_parsed - p->dropped_at >= p->drop_every) {
			p->drop(p->user);
			p->dropped_at = r->n_parsed;
		}
		/* Bundle events earlier than this entry go first. */
		merge_until(p, ev->ts, false);
		r->n_parsed++;
		if (ev->kind != TP_EV_BUNDLE) {
			p->sticky = false;
			if (ev->ts > p->parse_ts)
				p->parse_ts = ev->ts;
			push(p, OP_PACKET, ev, NULL, ev->ts, ev->machine, ev->cpu);
			continue;
		}
		e.c = cursor_get(p);
		if (!e.c) {
			push_stat(p, "parser_out_of_memory", ev->machine, 1);
			continue;
		}
		e.seq = i;
		if (tp_bundle_open(tp_clock_graph(&r->imp), e.c, ev) < 0) {
			tp_bundle_close(e.c);
			push(p, OP_DONE, NULL, e.c, 0, 0, 0);
			continue;
		}
		set_ranks(r, e.c, ev);
		e.rank = e.c->rank[e.c->head_kind];
		push_notes(p, e.c);
		if (!tp_bundle_peek(e.c, &e.ts) || heap_push(p, &e) < 0) {
			tp_bundle_close(e.c);
			push(p, OP_DONE, NULL, e.c, 0, 0, 0);
		}
	}
	merge_until(p, 0, true);
}

/* The worker's last batch goes out, and the parsing thread hears it is done. */
static void finish(struct tp_pipe *p)
{
	if (!p->threaded) {
		apply_batch(p, p->cur);
		return;
	}
	pthread_mutex_lock(&p->mu);
	if (!p->stopping && p->cur->n)
		enqueue(p);
	p->done = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

static void *worker_main(void *arg)
{
	struct tp_pipe *p = arg;

	if (p->guard(produce, p, p->user) < 0)
		p->failed = true; /* read before done is set, under mu */
	finish(p);
	return NULL;
}

/* ------------------------------------------------------------- setup ---- */

static void pipe_destroy(struct tp_pipe *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->n_all; i++) {
		tp_bundle_fini(p->all[i]);
		free(p->all[i]);
	}
	free(p->all);
	free(p->spares);
	free(p->heap);
	free(p->batches);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

void tp_pipe_abort(struct tp_pipe *p)
{
	if (!p)
		return;
	if (p->threaded) {
		pthread_mutex_lock(&p->mu);
		p->stop = true;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->thread, NULL);
	}
	if (p->r)
		p->r->pipe = NULL;
	pipe_destroy(p);
}

int tp_pipe_run(struct tp_read *r, tp_pipe_drop_cb drop, uint64_t drop_every,
		int (*guard)(tp_guard_cb fn, void *arg, void *user), void *user)
{
	struct tp_pipe *p = calloc(1, sizeof(*p));
	bool failed;
	size_t i;

	if (!p)
		return -ENOMEM;
	p->batches = calloc(N_BATCHES, sizeof(*p->batches));
	if (!p->batches) {
		free(p);
		return -ENOMEM;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->r = r;
	p->parse_ts = INT64_MIN;
	p->drop = drop;
	p->drop_every = drop_every;
	p->user = user;
	p->guard = guard;
	for (i = 1; i < N_BATCHES; i++)
		p->free_[p->n_free++] = i;
	p->cur = &p->batches[0];
	r->pipe = p;
	/* The worker reads p->threaded: it is set before the worker starts. */
	p->threaded = true;
	if (pthread_create(&p->thread, NULL, worker_main, p) != 0)
		p->threaded = false;
	if (p->threaded) {
		bigmem_set_populator(populate_on_worker, p);
		consume(p);
		bigmem_set_populator(NULL, NULL);
		pthread_join(p->thread, NULL);
	} else {
		worker_main(p);
	}
	failed = p->failed;
	r->pipe = NULL;
	pipe_destroy(p);
	return failed ? -EIO : 0;
}

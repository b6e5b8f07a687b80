// SPDX-License-Identifier: Apache-2.0
/*
 * tp_ftrace_hot.c - the ftrace events that make up most of a sched trace
 * (sched_switch, sched_waking, sched_wakeup, cpu_idle), parsed without the
 * generic table-driven decode of tp_ftrace.c: one inlined pass reads their
 * few fields, and comms and counter tracks come from per-import caches.
 * tp_ftrace_parse_event() tries it first; the results are the generic
 * parser's, and anything it does not handle (malformed payloads included)
 * is left to that parser.
 */
#include <string.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/tp_int.h"

/* The fields of one payload that a hot event reads; id 0: absent. */
#define HOT_SLOTS 8

struct hot_fields {
	struct pz_field f[HOT_SLOTS];
};

/*
 * Decodes the payload as pz_decode_table() would into HOT_SLOTS slots:
 * every field is checked, the last occurrence of each id wins.
 */
static bool decode(const struct tp_ftrace_header *h, struct hot_fields *out)
{
	struct pz_reader r;
	struct pz_field f;
	int rc;
	uint32_t i;

	for (i = 0; i < HOT_SLOTS; i++)
		out->f[i].id = 0;
	pz_reader_init(&r, h->payload, h->payload_len);
	while ((rc = pz_reader_next_inline(&r, &f)) > 0)
		if (f.id < HOT_SLOTS)
			out->f[f.id] = f;
	return rc == 0;
}

/* As tp_ftrace.c reads them: absent ints are 0, strings need bytes. */
static int64_t fint(const struct hot_fields *p, uint32_t id)
{
	return p->f[id].id ? (int64_t)p->f[id].value : 0;
}

/*
 * The string id of a comm. A thread keeps its comm for long, so the id
 * its tid had last is tried first, compared by bytes; misses intern as
 * tp_str_intern() always did, so ids come out in the same order.
 */
static uint32_t comm(struct tp_import *imp, const struct hot_fields *p, uint32_t id, int64_t tid)
{
	const struct pz_field *f = &p->f[id];
	struct tp_comm_slot *s = &imp->fc.comms[(uint64_t)tid & (TP_COMM_CACHE - 1)];
	const char *have;
	uint32_t sid;

	if (!f->id || f->wire_type != PZ_WIRE_LEN)
		return 0;
	if (s->id && s->len == f->size) {
		have = tp_str_get(&imp->db->strings, s->id);
		if (have && memcmp(have, f->data, f->size) == 0)
			return s->id;
	}
	sid = tp_str_intern(&imp->db->strings, (const char *)f->data, f->size);
	/* A comm holding a NUL is interned cut short: not cached. */
	if (sid && !memchr(f->data, '\0', f->size)) {
		s->id = sid;
		s->len = f->size;
	}
	return sid;
}

static int64_t idle_track(struct tp_import *imp, uint32_t machine, int64_t cpu)
{
	int64_t *slot;

	if (machine != 0 || cpu < 0 || cpu >= TP_CPU_CACHE)
		return tp_track_cpu_counter(imp, "cpuidle", machine, cpu);
	slot = &imp->fc.idle_track_plus1[cpu];
	if (!*slot) {
		int64_t t = tp_track_cpu_counter(imp, "cpuidle", machine, cpu);

		if (t < 0)
			return t;
		*slot = t + 1;
	}
	return *slot - 1;
}

static void sched_switch(struct tp_import *imp, const struct tp_event *ev,
			 const struct hot_fields *p)
{
	int64_t prev = fint(p, PB_SCHED_SWITCH_FTRACE_EVENT__PREV_PID);
	int64_t next = fint(p, PB_SCHED_SWITCH_FTRACE_EVENT__NEXT_PID);
	uint32_t prev_comm = comm(imp, p, PB_SCHED_SWITCH_FTRACE_EVENT__PREV_COMM, prev);
	uint32_t next_comm;

	if (prev != 0 && prev_comm) {
		int64_t pu = tp_proc_get_thread(imp, ev->machine, prev);

		if (pu >= 0 && !tp_col_str(&imp->db->thread, THREAD_NAME)[pu])
			tp_proc_set_thread_name(imp, pu, prev_comm);
	}
	next_comm = comm(imp, p, PB_SCHED_SWITCH_FTRACE_EVENT__NEXT_COMM, next);
	tp_sched_switch(imp, ev->machine, ev->cpu, ev->ts, prev,
			fint(p, PB_SCHED_SWITCH_FTRACE_EVENT__PREV_STATE), next, next_comm,
			fint(p, PB_SCHED_SWITCH_FTRACE_EVENT__NEXT_PRIO));
}

bool tp_ftrace_hot_parse(struct tp_import *imp, const struct tp_event *ev,
			 const struct tp_ftrace_header *h)
{
	struct hot_fields p;
	const char *name;

	switch (h->payload_id) {
	case PB_FTRACE_EVENT__SCHED_SWITCH:
		name = "sched_switch";
		break;
	case PB_FTRACE_EVENT__SCHED_WAKING:
		name = "sched_waking";
		break;
	case PB_FTRACE_EVENT__SCHED_WAKEUP:
		name = "sched_wakeup";
		break;
	case PB_FTRACE_EVENT__CPU_IDLE:
		name = "cpu_idle";
		break;
	default:
		return false;
	}
	if (!decode(h, &p))
		return false;
	switch (h->payload_id) {
	case PB_FTRACE_EVENT__SCHED_SWITCH:
		sched_switch(imp, ev, &p);
		break;
	case PB_FTRACE_EVENT__SCHED_WAKING:
		tp_sched_waking(imp, ev->machine, ev->cpu, ev->ts,
				fint(&p, PB_SCHED_WAKING_FTRACE_EVENT__PID));
		break;
	case PB_FTRACE_EVENT__CPU_IDLE:
		tp_counter_add(imp, ev->ts,
			       idle_track(imp, ev->machine,
					  fint(&p, PB_CPU_IDLE_FTRACE_EVENT__CPU_ID)),
			       (double)(uint32_t)fint(&p, PB_CPU_IDLE_FTRACE_EVENT__STATE));
		break;
	default:
		break;
	}
	tp_bounds_add(imp->db, ev->ts);
	if (!imp->no_ftrace_raw)
		tp_ftrace_raw_append(imp, ev, h->payload_id, name,
				     tp_proc_get_thread(imp, ev->machine, h->pid),
				     h->common_flags);
	return true;
}

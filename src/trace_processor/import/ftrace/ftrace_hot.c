// SPDX-License-Identifier: Apache-2.0
/*
 * ftrace_hot.c - the ftrace events that make up most of a sched trace
 * (sched_switch, sched_waking, sched_wakeup, cpu_idle), parsed without the
 * generic table-driven decode of ftrace.c: one inlined pass reads their
 * few fields when their bundle opens (bundle.c), and comms and counter
 * tracks come from per-import caches. The results are the generic
 * parser's; anything else (malformed payloads included) is left to it.
 */
#include <string.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/ftrace/ftrace_int.h"

/* The hot events' field ids are all below this. */
#define HOT_SLOTS 8

/*
 * Decodes the payload as the generic parser's pz_decode_table() does:
 * every field is checked, and the last occurrence of an id wins.
 */
static bool decode_slots(const struct tp_ftrace_header *h, struct pz_field *slots)
{
	struct pz_reader r;
	struct pz_field f;
	int rc;
	uint32_t i;

	for (i = 0; i < HOT_SLOTS; i++)
		slots[i].id = 0;
	pz_reader_init(&r, h->payload, h->payload_len);
	while ((rc = pz_reader_next_inline(&r, &f)) > 0)
		if (f.id < HOT_SLOTS)
			slots[f.id] = f;
	return rc == 0;
}

/* As ftrace.c reads them: absent ints are 0, strings need bytes. */
static int64_t fint(const struct pz_field *slots, uint32_t id)
{
	return slots[id].id ? (int64_t)slots[id].value : 0;
}

static struct tp_comm_ref fbytes(const struct pz_field *slots, uint32_t id)
{
	struct tp_comm_ref s;

	memset(&s, 0, sizeof(s));
	if (!slots[id].id || slots[id].wire_type != PZ_WIRE_LEN)
		return s;
	s.present = true;
	s.len = slots[id].size;
	if (s.len <= TP_COMM_INLINE)
		memcpy(s.w, slots[id].data, s.len);
	else
		s.data = slots[id].data;
	return s;
}

void tp_ftrace_hot_decode(const struct tp_ftrace_header *h, struct tp_ftrace_hot *out)
{
	struct pz_field f[HOT_SLOTS];

	out->is_hot = false;
	switch (h->payload_id) {
	case PB_FTRACE_EVENT__SCHED_SWITCH:
	case PB_FTRACE_EVENT__SCHED_WAKING:
	case PB_FTRACE_EVENT__SCHED_WAKEUP:
	case PB_FTRACE_EVENT__CPU_IDLE:
		break;
	default:
		return;
	}
	/* Malformed payloads are the generic parser's to count. */
	if (!decode_slots(h, f))
		return;
	switch (h->payload_id) {
	case PB_FTRACE_EVENT__SCHED_SWITCH:
		out->sw.prev_pid = fint(f, PB_SCHED_SWITCH_FTRACE_EVENT__PREV_PID);
		out->sw.prev_state = fint(f, PB_SCHED_SWITCH_FTRACE_EVENT__PREV_STATE);
		out->sw.next_pid = fint(f, PB_SCHED_SWITCH_FTRACE_EVENT__NEXT_PID);
		out->sw.next_prio = fint(f, PB_SCHED_SWITCH_FTRACE_EVENT__NEXT_PRIO);
		out->sw.prev_comm = fbytes(f, PB_SCHED_SWITCH_FTRACE_EVENT__PREV_COMM);
		out->sw.next_comm = fbytes(f, PB_SCHED_SWITCH_FTRACE_EVENT__NEXT_COMM);
		break;
	case PB_FTRACE_EVENT__SCHED_WAKING:
		out->waking.pid = fint(f, PB_SCHED_WAKING_FTRACE_EVENT__PID);
		out->waking.comm = fbytes(f, PB_SCHED_WAKING_FTRACE_EVENT__COMM);
		break;
	case PB_FTRACE_EVENT__CPU_IDLE:
		out->idle.cpu_id = fint(f, PB_CPU_IDLE_FTRACE_EVENT__CPU_ID);
		out->idle.state = fint(f, PB_CPU_IDLE_FTRACE_EVENT__STATE);
		break;
	default:
		break;
	}
	out->is_hot = true;
}

/*
 * The string id of a comm. A thread keeps its comm for long, so the id
 * its tid had last is tried first, compared by bytes; misses intern as
 * tp_str_intern() always did, so ids come out in the same order.
 */
static uint32_t comm(struct tp_import *imp, const struct tp_comm_ref *s, int64_t tid)
{
	struct tp_comm_slot *slot = &imp->ftrace->comms[(uint64_t)tid & (FT_COMM_CACHE - 1)];
	const char *bytes;
	uint32_t id;

	if (!s->present)
		return 0;
	if (s->len > TP_COMM_INLINE)
		return tp_str_intern(&imp->db->strings, (const char *)s->data, s->len);
	if (slot->id && slot->len == s->len && slot->w[0] == s->w[0] && slot->w[1] == s->w[1])
		return slot->id;
	bytes = (const char *)s->w;
	id = tp_str_intern(&imp->db->strings, bytes, s->len);
	/* A comm holding a NUL is interned cut short: not cached. */
	if (id && !memchr(bytes, '\0', s->len)) {
		memcpy(slot->w, s->w, sizeof(slot->w));
		slot->id = id;
		slot->len = s->len;
	}
	return id;
}

static int64_t idle_track(struct tp_import *imp, uint32_t machine, int64_t cpu)
{
	int64_t *slot;

	if (machine != 0 || cpu < 0 || cpu >= FT_IDLE_CACHE)
		return tp_track_cpu_counter(imp, "cpuidle", machine, cpu);
	slot = &imp->ftrace->idle_track_plus1[cpu];
	if (!*slot) {
		int64_t t = tp_track_cpu_counter(imp, "cpuidle", machine, cpu);

		if (t < 0)
			return t;
		*slot = t + 1;
	}
	return *slot - 1;
}

static void sched_switch(struct tp_import *imp, const struct tp_event *ev,
			 const struct tp_ftrace_hot *p)
{
	int64_t prev = p->sw.prev_pid;
	uint32_t prev_comm = comm(imp, &p->sw.prev_comm, prev);
	uint32_t next_comm;

	next_comm = comm(imp, &p->sw.next_comm, p->sw.next_pid);
	tp_ftrace_name_switch(imp, ev->machine, prev, prev_comm, p->sw.next_pid, next_comm);
	tp_sched_switch(imp, ev->machine, ev->cpu, ev->ts, prev, -1, p->sw.prev_state,
			p->sw.next_pid, next_comm, p->sw.next_prio);
}

void tp_ftrace_hot_parse(struct tp_import *imp, const struct tp_event *ev,
			 const struct tp_ftrace_header *h, const struct tp_ftrace_hot *hot)
{
	/* As in the generic parser, the row names the thread as it was before the event. */
	if (!imp->no_ftrace_raw) {
		struct pz_field payload = {.id = h->payload_id, .wire_type = PZ_WIRE_LEN,
					   .data = h->payload, .size = h->payload_len};

		/* A sched_switch's row is its prev_pid's (the same task on real kernels). */
		tp_ftrace_raw_event(imp, ev, tp_ftrace_event_desc(h->payload_id), &payload,
				    tp_proc_get_thread(imp, ev->machine,
						       h->payload_id == PB_FTRACE_EVENT__SCHED_SWITCH
							       ? hot->sw.prev_pid
							       : h->pid),
				    h->common_flags);
	}
	switch (h->payload_id) {
	case PB_FTRACE_EVENT__SCHED_SWITCH:
		sched_switch(imp, ev, hot);
		break;
	case PB_FTRACE_EVENT__SCHED_WAKING:
		/* The wakee is named by its comm. */
		tp_proc_update_thread_name(imp, tp_proc_get_thread(imp, ev->machine, hot->waking.pid),
					   comm(imp, &hot->waking.comm, hot->waking.pid),
					   TP_NAME_FTRACE);
		tp_sched_waking(imp, ev->machine, ev->cpu, ev->ts, hot->waking.pid,
				tp_proc_get_thread(imp, ev->machine, h->pid), TP_NULL_INT);
		break;
	case PB_FTRACE_EVENT__SCHED_WAKEUP:
		break;
	default:
		tp_counter_add(imp, ev->ts, idle_track(imp, ev->machine, hot->idle.cpu_id),
			       (double)(uint32_t)hot->idle.state);
		break;
	}
	tp_bounds_add(imp->db, ev->ts);
}

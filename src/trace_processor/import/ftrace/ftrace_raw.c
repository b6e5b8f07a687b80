// SPDX-License-Identifier: Apache-2.0
/*
 * ftrace_raw.c - the ftrace_event table: one row per event (name, cpu,
 * thread, common_flags), its fields as args named from the generated
 * pb_ftrace_table.h. Called by ftrace.c and ftrace_hot.c per event,
 * in time order; key and name strings are interned once.
 */
#include <stdlib.h>
#include <string.h>

#include "pb_fields.h"
#include "pb_ftrace_table.h"
#include "protozero/protozero.h"
#include "trace_processor/import/ftrace/ftrace_int.h"

const struct pb_ft_event *tp_ftrace_event_desc(uint32_t id)
{
	size_t lo = 0, hi = sizeof(pb_ft_events) / sizeof(pb_ft_events[0]);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pb_ft_events[mid].id == id)
			return &pb_ft_events[mid];
		if (pb_ft_events[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static const struct pb_ft_field *field_desc(const struct pb_ft_event *e, uint32_t id)
{
	uint32_t i;

	for (i = 0; e && i < e->n_fields; i++)
		if (e->fields[i].id == id)
			return &e->fields[i];
	return NULL;
}

static uint32_t key_id(struct tp_import *imp, const struct pb_ft_event *d,
		       const struct pb_ft_field *fd)
{
	uint64_t k = ((uint64_t)d->id << 16) | fd->id, v;
	uint32_t id;

	if (hmap_get(&imp->ftrace->keys, k, &v))
		return (uint32_t)v;
	id = tp_db_str(imp->db, fd->name);
	hmap_put(&imp->ftrace->keys, k, id);
	return id;
}

int64_t tp_ftrace_raw_append(struct tp_import *imp, const struct tp_event *ev, uint32_t event_id,
			     const char *name, int64_t utid, int64_t common_flags)
{
	struct tp_table *t = &imp->db->ftrace_event;
	int64_t row, ucpu;
	uint32_t name_id;

	row = tp_table_append(t);
	if (row < 0)
		return -1;
	/* Names are interned when first needed, here, as they always were. */
	if (event_id < FT_NAME_CACHE) {
		if (!imp->ftrace->names[event_id])
			imp->ftrace->names[event_id] = tp_db_str(imp->db, name);
		name_id = imp->ftrace->names[event_id];
	} else {
		name_id = tp_db_str(imp->db, name);
	}
	tp_set_int(t, FTRACE_TS, (size_t)row, ev->ts);
	tp_set_str(t, FTRACE_NAME, (size_t)row, name_id);
	tp_set_int(t, FTRACE_CPU, (size_t)row, ev->cpu);
	tp_set_int(t, FTRACE_UTID, (size_t)row, utid);
	ucpu = tp_sched_ucpu(imp, ev->machine, ev->cpu);
	if (ucpu >= 0)
		tp_set_int(t, FTRACE_UCPU, (size_t)row, ucpu);
	/* As in Perfetto, an event without common_flags has 0. */
	tp_set_int(t, FTRACE_COMMON_FLAGS, (size_t)row,
		   common_flags != TP_NULL_INT ? common_flags : 0);
	return row;
}

/*
 * An event's args follow from its type and payload bytes alone, and a
 * busy trace repeats them (the same two threads switching, the same
 * wakee): a payload equal to one recently stored reuses its arg set
 * without decoding, interning or hashing the args again. The set is the
 * one the full path would find, as equal sets are shared.
 */
#define MEMO_SLOTS 4096u
#define MEMO_MAX_BYTES 88u

struct tp_payload_memo {
	uint64_t hash;
	int64_t set;
	uint32_t event_id;
	uint32_t len;                 /* 0: empty slot */
	uint8_t bytes[MEMO_MAX_BYTES];
};

static uint64_t payload_hash(uint32_t event_id, const uint8_t *p, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ ((uint64_t)event_id << 32) ^ n, w;

	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 29;
	}
	w = 0;
	memcpy(&w, p, n);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 32);
}

static struct tp_payload_memo *memo_slot(struct tp_import *imp, uint64_t h)
{
	if (!imp->ftrace->memo)
		imp->ftrace->memo = calloc(MEMO_SLOTS, sizeof(*imp->ftrace->memo));
	return imp->ftrace->memo ? &imp->ftrace->memo[h & (MEMO_SLOTS - 1)] : NULL;
}

/*
 * The uint64 fields Perfetto stores as the kernel symbol interned on the
 * bundle's sequence when there is one (activate_work and execute_end use
 * execute_start's field number, as Perfetto does). Return: the field, or 0.
 */
static uint32_t kernel_fn_field(uint32_t event_id)
{
	switch (event_id) {
	case PB_FTRACE_EVENT__SCHED_BLOCKED_REASON:
		return PB_SCHED_BLOCKED_REASON_FTRACE_EVENT__CALLER;
	case PB_FTRACE_EVENT__WORKQUEUE_QUEUE_WORK:
		return PB_WORKQUEUE_QUEUE_WORK_FTRACE_EVENT__FUNCTION;
	case PB_FTRACE_EVENT__WORKQUEUE_ACTIVATE_WORK:
	case PB_FTRACE_EVENT__WORKQUEUE_EXECUTE_START:
	case PB_FTRACE_EVENT__WORKQUEUE_EXECUTE_END:
		return PB_WORKQUEUE_EXECUTE_START_FTRACE_EVENT__FUNCTION;
	case PB_FTRACE_EVENT__FUNCGRAPH_ENTRY:
		return PB_FUNCGRAPH_ENTRY_FTRACE_EVENT__FUNC;
	case PB_FTRACE_EVENT__FUNCGRAPH_EXIT:
		return PB_FUNCGRAPH_EXIT_FTRACE_EVENT__FUNC;
	case PB_FTRACE_EVENT__MM_SHRINK_SLAB_START:
		return PB_MM_SHRINK_SLAB_START_FTRACE_EVENT__SHRINK;
	case PB_FTRACE_EVENT__HRTIMER_EXPIRE_ENTRY:
		return PB_HRTIMER_EXPIRE_ENTRY_FTRACE_EVENT__FUNCTION;
	default:
		return 0;
	}
}

/*
 * A legacy GenericFtraceEvent (a tracepoint the recorder had no proto for):
 * its row is named by its event_name, its args are its fields by name,
 * integers (signed or not) as int and strings as string, as in Perfetto.
 */
static void legacy_generic(struct tp_import *imp, const struct tp_event *ev,
			   const struct pz_field *payload, int64_t utid, int64_t common_flags)
{
	struct tp_argset *b = &imp->ftrace->raw_args;
	char name[256];
	struct pz_reader r;
	struct pz_field f;
	int64_t row, set;
	size_t n = 0;

	pz_reader_init(&r, payload->data, payload->size);
	while (pz_reader_next(&r, &f) > 0)
		if (f.id == PB_GENERIC_FTRACE_EVENT__EVENT_NAME && f.wire_type == PZ_WIRE_LEN)
			n = f.size < sizeof(name) - 1 ? f.size : sizeof(name) - 1,
			memcpy(name, f.data, n);
	name[n] = 0;
	row = tp_ftrace_raw_append(imp, ev, UINT32_MAX, name, utid, common_flags);
	if (row < 0)
		return;
	b->n = 0;
	pz_reader_init(&r, payload->data, payload->size);
	while (pz_reader_next(&r, &f) > 0) {
		struct pz_field v[6];
		uint32_t key;

		if (f.id != PB_GENERIC_FTRACE_EVENT__FIELD || f.wire_type != PZ_WIRE_LEN ||
		    pz_decode_table(f.data, f.size, v, 6) != PZ_OK ||
		    v[PB_GENERIC_FTRACE_EVENT_FIELD__NAME].wire_type != PZ_WIRE_LEN)
			continue;
		key = tp_str_intern(&imp->db->strings,
				    (const char *)v[PB_GENERIC_FTRACE_EVENT_FIELD__NAME].data,
				    v[PB_GENERIC_FTRACE_EVENT_FIELD__NAME].size);
		if (v[PB_GENERIC_FTRACE_EVENT_FIELD__INT_VALUE].id)
			tp_argset_int(imp, b, key,
				      (int64_t)v[PB_GENERIC_FTRACE_EVENT_FIELD__INT_VALUE].value);
		else if (v[PB_GENERIC_FTRACE_EVENT_FIELD__UINT_VALUE].id)
			tp_argset_int(imp, b, key,
				      (int64_t)v[PB_GENERIC_FTRACE_EVENT_FIELD__UINT_VALUE].value);
		else if (v[PB_GENERIC_FTRACE_EVENT_FIELD__STR_VALUE].id &&
			 v[PB_GENERIC_FTRACE_EVENT_FIELD__STR_VALUE].wire_type == PZ_WIRE_LEN)
			tp_argset_str(imp, b, key,
				      tp_str_intern(&imp->db->strings,
						    (const char *)v[PB_GENERIC_FTRACE_EVENT_FIELD__STR_VALUE].data,
						    v[PB_GENERIC_FTRACE_EVENT_FIELD__STR_VALUE].size));
	}
	set = tp_argset_commit(imp, b);
	if (set != TP_NULL_INT)
		tp_set_int(&imp->db->ftrace_event, FTRACE_ARG_SET_ID, (size_t)row, set);
}

static uint32_t field_key(struct tp_import *imp, uint32_t event_id, uint32_t field);

/*
 * A sched_switch that lacks some of its seven fields (kernels send all):
 * Perfetto's row has them all the same, in field order, 0 (or "") for
 * those missing, so ours is rebuilt so.
 */
static void full_switch_args(struct tp_import *imp, struct tp_argset *b,
			     const struct pz_field *payload)
{
	const uint32_t id = PB_FTRACE_EVENT__SCHED_SWITCH;
	struct pz_field f[8];

	if (pz_decode_table(payload->data, payload->size, f, 8) != PZ_OK)
		return;
	b->n = 0;
	for (uint32_t i = PB_SCHED_SWITCH_FTRACE_EVENT__PREV_COMM;
	     i <= PB_SCHED_SWITCH_FTRACE_EVENT__NEXT_PRIO; i++) {
		uint32_t key = field_key(imp, id, i);

		if (i == PB_SCHED_SWITCH_FTRACE_EVENT__PREV_COMM ||
		    i == PB_SCHED_SWITCH_FTRACE_EVENT__NEXT_COMM)
			tp_argset_str(imp, b, key,
				      f[i].id && f[i].wire_type == PZ_WIRE_LEN
					      ? tp_str_intern(&imp->db->strings,
							      (const char *)f[i].data, f[i].size)
					      : tp_db_str(imp->db, ""));
		else
			tp_argset_int(imp, b, key,
				      f[i].id && f[i].wire_type != PZ_WIRE_LEN ? (int64_t)f[i].value
									      : 0);
	}
}

void tp_ftrace_raw_event(struct tp_import *imp, const struct tp_event *ev,
			 const struct pb_ft_event *d, const struct pz_field *payload, int64_t utid,
			 int64_t common_flags)
{
	struct tp_argset *b = &imp->ftrace->raw_args;
	struct tp_payload_memo *m = NULL;
	struct pz_reader r;
	struct pz_field f;
	int64_t row, set;
	uint64_t h = 0;
	uint32_t fn_field;

	if (d && d->id == PB_FTRACE_EVENT__GENERIC) {
		legacy_generic(imp, ev, payload, utid, common_flags);
		return;
	}
	row = tp_ftrace_raw_append(imp, ev, d ? d->id : 0, d ? d->name : "unknown", utid,
				   common_flags);
	if (row < 0 || !d || !payload->size)
		return;
	/* A symbolized field depends on the sequence, not only the bytes. */
	fn_field = kernel_fn_field(d->id);
	if (payload->size <= MEMO_MAX_BYTES && !fn_field) {
		h = payload_hash(d->id, payload->data, payload->size);
		m = memo_slot(imp, h);
		if (m && m->len == payload->size && m->hash == h && m->event_id == d->id &&
		    !memcmp(m->bytes, payload->data, payload->size)) {
			tp_set_int(&imp->db->ftrace_event, FTRACE_ARG_SET_ID, (size_t)row, m->set);
			return;
		}
	}
	/* The fields in payload order, stored as one set (an equal set is shared). */
	b->n = 0;
	pz_reader_init(&r, payload->data, payload->size);
	while (pz_reader_next(&r, &f) > 0) {
		const struct pb_ft_field *fd = field_desc(d, f.id);
		struct tp_arg a = {0};

		if (!fd)
			continue;
		switch (fd->kind) {
		case PB_FT_STRING:
		case PB_FT_BYTES:
			if (f.wire_type == PZ_WIRE_LEN)
				tp_argset_str(imp, b, key_id(imp, d, fd),
					      tp_str_intern(&imp->db->strings, (const char *)f.data,
							    f.size));
			break;
		case PB_FT_SINT:
			tp_argset_int(imp, b, key_id(imp, d, fd), pz_field_sint64(&f));
			break;
		case PB_FT_FLOAT:
		case PB_FT_DOUBLE:
			a.key = a.flat_key = key_id(imp, d, fd);
			a.type = TP_ARG_REAL;
			a.v.d = fd->kind == PB_FT_FLOAT ? pz_field_float(&f) : pz_field_double(&f);
			tp_argset_add(imp, b, &a);
			break;
		case PB_FT_UINT:
		case PB_FT_FIXED32:
		case PB_FT_FIXED64:
			if (fn_field && f.id == fn_field && f.wire_type == PZ_WIRE_VARINT) {
				/* Perfetto looks every such field up, and counts a miss. */
				const struct tp_interned *sym = tp_seq_interned(
					imp, ev->aux - 1, PB_INTERNED_DATA__KERNEL_SYMBOLS, f.value);

				if (sym && sym->str) {
					tp_argset_str(imp, b, key_id(imp, d, fd), sym->str);
					break;
				}
			}
			if (f.wire_type != PZ_WIRE_LEN)
				tp_argset_uint(imp, b, key_id(imp, d, fd), f.value);
			break;
		default:
			if (f.wire_type != PZ_WIRE_LEN)
				tp_argset_int(imp, b, key_id(imp, d, fd), (int64_t)f.value);
			break;
		}
	}
	if (d->id == PB_FTRACE_EVENT__SCHED_SWITCH && b->n != 7)
		full_switch_args(imp, b, payload);
	set = tp_argset_commit(imp, b);
	if (set == TP_NULL_INT)
		return;
	tp_set_int(&imp->db->ftrace_event, FTRACE_ARG_SET_ID, (size_t)row, set);
	if (m) {
		m->hash = h;
		m->set = set;
		m->event_id = d->id;
		m->len = (uint32_t)payload->size;
		memcpy(m->bytes, payload->data, payload->size);
	}
}

/* The interned name of field @field of event @event_id, as a key. */
static uint32_t field_key(struct tp_import *imp, uint32_t event_id, uint32_t field)
{
	const struct pb_ft_event *d = tp_ftrace_event_desc(event_id);
	const struct pb_ft_field *fd = field_desc(d, field);

	return fd ? key_id(imp, d, fd) : 0;
}

void tp_ftrace_raw_compact_switch(struct tp_import *imp, int64_t row, uint32_t prev_comm,
				  int64_t prev_pid, int64_t prev_prio,
				  const struct tp_compact_switch *s)
{
	const uint32_t id = PB_FTRACE_EVENT__SCHED_SWITCH;
	struct tp_argset *b = &imp->ftrace->raw_args;
	int64_t set;

	b->n = 0;
	tp_argset_str(imp, b, field_key(imp, id, PB_SCHED_SWITCH_FTRACE_EVENT__PREV_COMM), prev_comm);
	tp_argset_int(imp, b, field_key(imp, id, PB_SCHED_SWITCH_FTRACE_EVENT__PREV_PID), prev_pid);
	tp_argset_int(imp, b, field_key(imp, id, PB_SCHED_SWITCH_FTRACE_EVENT__PREV_PRIO), prev_prio);
	tp_argset_int(imp, b, field_key(imp, id, PB_SCHED_SWITCH_FTRACE_EVENT__PREV_STATE),
		      s->prev_state);
	tp_argset_str(imp, b, field_key(imp, id, PB_SCHED_SWITCH_FTRACE_EVENT__NEXT_COMM),
		      s->next_comm);
	tp_argset_int(imp, b, field_key(imp, id, PB_SCHED_SWITCH_FTRACE_EVENT__NEXT_PID), s->next_pid);
	tp_argset_int(imp, b, field_key(imp, id, PB_SCHED_SWITCH_FTRACE_EVENT__NEXT_PRIO),
		      s->next_prio);
	set = tp_argset_commit(imp, b);
	if (row >= 0 && set != TP_NULL_INT)
		tp_set_int(&imp->db->ftrace_event, FTRACE_ARG_SET_ID, (size_t)row, set);
}

void tp_ftrace_raw_compact_waking(struct tp_import *imp, int64_t row,
				  const struct tp_compact_waking *w)
{
	const uint32_t id = PB_FTRACE_EVENT__SCHED_WAKING;
	struct tp_argset *b = &imp->ftrace->raw_args;
	int64_t set;

	b->n = 0;
	tp_argset_str(imp, b, field_key(imp, id, PB_SCHED_WAKING_FTRACE_EVENT__COMM), w->comm);
	tp_argset_int(imp, b, field_key(imp, id, PB_SCHED_WAKING_FTRACE_EVENT__PID), w->pid);
	tp_argset_int(imp, b, field_key(imp, id, PB_SCHED_WAKING_FTRACE_EVENT__PRIO), w->prio);
	tp_argset_int(imp, b, field_key(imp, id, PB_SCHED_WAKING_FTRACE_EVENT__TARGET_CPU),
		      w->target_cpu);
	set = tp_argset_commit(imp, b);
	if (row >= 0 && set != TP_NULL_INT)
		tp_set_int(&imp->db->ftrace_event, FTRACE_ARG_SET_ID, (size_t)row, set);
}

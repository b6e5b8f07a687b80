// SPDX-License-Identifier: Apache-2.0
/*
 * ftrace_compact.c - columnar buffering of sched_switch / sched_waking and
 * their CompactSched encoding. Hot path: ftrace_compact_add() is a few loads,
 * a hash probe for the comm and stores into preallocated columns; writing a
 * bundle encodes each column into a preallocated scratch area and appends it
 * as one packed field.
 */
#include "probes/ftrace_compact.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/compiler.h"
#include "pb_fields.h"

/* Open-addressing slots for the comm intern table (a power of two). */
#define COMM_SLOTS 4096u

struct ftrace_compact_sched {
	uint32_t n_switch;
	uint32_t n_waking;
	uint32_t n_comms;
	uint32_t gen;                 /* slot entries of other generations are empty */
	uint64_t sw_ts[FTRACE_COMPACT_MAX_EVENTS];
	int64_t sw_prev_state[FTRACE_COMPACT_MAX_EVENTS];
	int32_t sw_next_pid[FTRACE_COMPACT_MAX_EVENTS];
	int32_t sw_next_prio[FTRACE_COMPACT_MAX_EVENTS];
	uint32_t sw_next_comm[FTRACE_COMPACT_MAX_EVENTS];
	uint64_t wk_ts[FTRACE_COMPACT_MAX_EVENTS];
	int32_t wk_pid[FTRACE_COMPACT_MAX_EVENTS];
	int32_t wk_target_cpu[FTRACE_COMPACT_MAX_EVENTS];
	int32_t wk_prio[FTRACE_COMPACT_MAX_EVENTS];
	uint32_t wk_comm[FTRACE_COMPACT_MAX_EVENTS];
	uint32_t wk_flags[FTRACE_COMPACT_MAX_EVENTS];
	uint8_t comm_len[FTRACE_COMPACT_MAX_COMMS];
	uint64_t comms[FTRACE_COMPACT_MAX_COMMS][2]; /* 16 bytes, zero after the NUL */
	uint32_t slots[COMM_SLOTS];   /* gen << 16 | (index + 1) */
	uint8_t scratch[FTRACE_COMPACT_MAX_EVENTS * PZ_MAX_VARINT_BYTES];
};

_Static_assert(FTRACE_COMPACT_MAX_COMMS < 0xffff, "comm index must fit the slot's low 16 bits");
_Static_assert(COMM_SLOTS >= 2 * FTRACE_COMPACT_MAX_COMMS, "intern table load factor");

static const struct ftrace_field *field_sized(const struct ftrace_format *fmt, const char *name,
					      uint16_t size)
{
	const struct ftrace_field *f = ftrace_format_field(fmt, name);

	return f && f->size == size ? f : NULL;
}

static const struct ftrace_field *comm_field(const struct ftrace_format *fmt, const char *name)
{
	const struct ftrace_field *f = ftrace_format_field(fmt, name);

	return f && f->kind == FTRACE_FIELD_CHAR_ARRAY && f->size == FTRACE_COMPACT_COMM_LEN ? f
													       : NULL;
}

int ftrace_compact_format_init(struct ftrace_compact_format *f,
			       const struct ftrace_format *sched_switch,
			       const struct ftrace_format *sched_waking)
{
	const struct ftrace_field *a, *b, *c, *d, *e;

	memset(f, 0, sizeof(*f));
	if (sched_switch) {
		a = ftrace_format_field(sched_switch, "prev_state");
		b = comm_field(sched_switch, "next_comm");
		c = field_sized(sched_switch, "next_pid", 4);
		d = field_sized(sched_switch, "next_prio", 4);
		if (a && (a->size == 4 || a->size == 8) && a->kind == FTRACE_FIELD_INT && b && c &&
		    d) {
			f->has_switch = true;
			f->switch_id = (uint16_t)sched_switch->id;
			f->switch_min_size = sched_switch->min_size;
			f->sw_prev_state = a->offset;
			f->sw_prev_state_size = a->size;
			f->sw_next_comm = b->offset;
			f->sw_next_pid = c->offset;
			f->sw_next_prio = d->offset;
		}
	}
	if (sched_waking) {
		a = comm_field(sched_waking, "comm");
		b = field_sized(sched_waking, "pid", 4);
		c = field_sized(sched_waking, "prio", 4);
		d = field_sized(sched_waking, "target_cpu", 4);
		e = field_sized(sched_waking, "common_flags", 1);
		if (a && b && c && d && e) {
			f->has_waking = true;
			f->waking_id = (uint16_t)sched_waking->id;
			f->waking_min_size = sched_waking->min_size;
			f->wk_comm = a->offset;
			f->wk_pid = b->offset;
			f->wk_prio = c->offset;
			f->wk_target_cpu = d->offset;
			f->wk_common_flags = e->offset;
		}
	}
	return f->has_switch || f->has_waking ? 0 : -ENOTSUP;
}

struct ftrace_compact_sched *ftrace_compact_create(void)
{
	struct ftrace_compact_sched *c = malloc(sizeof(*c));

	if (!c)
		return NULL;
	memset(c->slots, 0, sizeof(c->slots));
	c->gen = 1;
	c->n_switch = c->n_waking = c->n_comms = 0;
	return c;
}

void ftrace_compact_destroy(struct ftrace_compact_sched *c)
{
	free(c);
}

void ftrace_compact_reset(struct ftrace_compact_sched *c)
{
	c->n_switch = c->n_waking = c->n_comms = 0;
	/* Bumping the generation empties every slot without touching them. */
	if (++c->gen > 0xffff) {
		memset(c->slots, 0, sizeof(c->slots));
		c->gen = 1;
	}
}

bool ftrace_compact_has_room(const struct ftrace_compact_sched *c, size_t n)
{
	return c->n_switch + n <= FTRACE_COMPACT_MAX_EVENTS &&
	       c->n_waking + n <= FTRACE_COMPACT_MAX_EVENTS &&
	       c->n_comms <= FTRACE_COMPACT_COMM_THRESHOLD &&
	       c->n_comms + n <= FTRACE_COMPACT_MAX_COMMS;
}

bool ftrace_compact_is_empty(const struct ftrace_compact_sched *c)
{
	return c->n_switch == 0 && c->n_waking == 0;
}

/* Return: the comm's index in the intern table, or -ENOSPC. */
static PFC_ALWAYS_INLINE int intern_comm(struct ftrace_compact_sched *c, const uint8_t *p)
{
	const uint64_t lo = 0x0101010101010101ull, hi = 0x8080808080808080ull;
	uint64_t key[2], za, zb, h;
	size_t len = FTRACE_COMPACT_COMM_LEN;
	uint32_t i, s;

	/* Find the NUL a word at a time and zero everything from it on, so
	 * stale bytes after the NUL do not split one comm into two keys. */
	memcpy(key, p, 16);
	za = (key[0] - lo) & ~key[0] & hi;
	zb = (key[1] - lo) & ~key[1] & hi;
	if (za) {
		len = (size_t)__builtin_ctzll(za) / 8;
		key[0] &= len ? ~0ull >> (64 - 8 * len) : 0;
		key[1] = 0;
	} else if (zb) {
		len = 8 + (size_t)__builtin_ctzll(zb) / 8;
		key[1] &= len > 8 ? ~0ull >> (64 - 8 * (len - 8)) : 0;
	}
	h = (key[0] ^ (key[1] * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
	i = (uint32_t)(h >> 40) & (COMM_SLOTS - 1);
	for (;;) {
		s = c->slots[i];
		if ((s >> 16) != c->gen)
			break;
		s = (s & 0xffff) - 1;
		if (c->comms[s][0] == key[0] && c->comms[s][1] == key[1])
			return (int)s;
		i = (i + 1) & (COMM_SLOTS - 1);
	}
	if (c->n_comms == FTRACE_COMPACT_MAX_COMMS)
		return -ENOSPC;
	s = c->n_comms++;
	c->comms[s][0] = key[0];
	c->comms[s][1] = key[1];
	c->comm_len[s] = (uint8_t)len;
	c->slots[i] = (c->gen << 16) | (s + 1);
	return (int)s;
}

static PFC_ALWAYS_INLINE int32_t load_i32(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

int ftrace_compact_add(struct ftrace_compact_sched *c, const struct ftrace_compact_format *f,
		       const struct ftrace_raw_event *ev)
{
	const uint8_t *d = ev->data;
	uint32_t n;
	int comm;

	if (f->has_switch && ev->id == f->switch_id) {
		if (PFC_UNLIKELY(ev->len < f->switch_min_size))
			return -EBADMSG;
		n = c->n_switch;
		if (PFC_UNLIKELY(n == FTRACE_COMPACT_MAX_EVENTS))
			return -ENOSPC;
		comm = intern_comm(c, d + f->sw_next_comm);
		if (PFC_UNLIKELY(comm < 0))
			return comm;
		c->sw_ts[n] = ev->ts;
		if (f->sw_prev_state_size == 8)
			memcpy(&c->sw_prev_state[n], d + f->sw_prev_state, 8);
		else
			c->sw_prev_state[n] = load_i32(d + f->sw_prev_state);
		c->sw_next_pid[n] = load_i32(d + f->sw_next_pid);
		c->sw_next_prio[n] = load_i32(d + f->sw_next_prio);
		c->sw_next_comm[n] = (uint32_t)comm;
		c->n_switch = n + 1;
		return 1;
	}
	if (f->has_waking && ev->id == f->waking_id) {
		if (PFC_UNLIKELY(ev->len < f->waking_min_size))
			return -EBADMSG;
		n = c->n_waking;
		if (PFC_UNLIKELY(n == FTRACE_COMPACT_MAX_EVENTS))
			return -ENOSPC;
		comm = intern_comm(c, d + f->wk_comm);
		if (PFC_UNLIKELY(comm < 0))
			return comm;
		c->wk_ts[n] = ev->ts;
		c->wk_pid[n] = load_i32(d + f->wk_pid);
		c->wk_target_cpu[n] = load_i32(d + f->wk_target_cpu);
		c->wk_prio[n] = load_i32(d + f->wk_prio);
		c->wk_comm[n] = (uint32_t)comm;
		c->wk_flags[n] = d[f->wk_common_flags];
		c->n_waking = n + 1;
		return 1;
	}
	return 0;
}

/* Column writers: encode into scratch, append as one packed field. */
static void put_deltas(struct ftrace_compact_sched *c, struct pz_msg *m, uint32_t id,
		       const uint64_t *v, uint32_t n)
{
	uint64_t prev = 0;
	size_t len = 0;
	uint32_t i;

	for (i = 0; i < n; i++) {
		len += pz_varint_encode(v[i] - prev, c->scratch + len);
		prev = v[i];
	}
	pz_append_bytes(m, id, c->scratch, len);
}

static void put_i64(struct ftrace_compact_sched *c, struct pz_msg *m, uint32_t id,
		    const int64_t *v, uint32_t n)
{
	size_t len = 0;
	uint32_t i;

	for (i = 0; i < n; i++)
		len += pz_varint_encode((uint64_t)v[i], c->scratch + len);
	pz_append_bytes(m, id, c->scratch, len);
}

/* int32 values are sign-extended to 64 bits, as protobuf encodes them. */
static void put_i32(struct ftrace_compact_sched *c, struct pz_msg *m, uint32_t id,
		    const int32_t *v, uint32_t n)
{
	size_t len = 0;
	uint32_t i;

	for (i = 0; i < n; i++)
		len += pz_varint_encode((uint64_t)(int64_t)v[i], c->scratch + len);
	pz_append_bytes(m, id, c->scratch, len);
}

static void put_u32(struct ftrace_compact_sched *c, struct pz_msg *m, uint32_t id,
		    const uint32_t *v, uint32_t n)
{
	size_t len = 0;
	uint32_t i;

	for (i = 0; i < n; i++)
		len += pz_varint_encode(v[i], c->scratch + len);
	pz_append_bytes(m, id, c->scratch, len);
}

void ftrace_compact_write(struct ftrace_compact_sched *c, struct pz_msg *bundle)
{
	struct pz_msg cs;
	uint32_t i;

	if (ftrace_compact_is_empty(c)) {
		ftrace_compact_reset(c);
		return;
	}
	pz_begin_nested(bundle, PB_FTRACE_EVENT_BUNDLE__COMPACT_SCHED, &cs);
	for (i = 0; i < c->n_comms; i++)
		pz_append_bytes(&cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__INTERN_TABLE,
				c->comms[i], c->comm_len[i]);
	if (c->n_switch) {
		put_deltas(c, &cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_TIMESTAMP, c->sw_ts,
			   c->n_switch);
		put_i64(c, &cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_PREV_STATE,
			c->sw_prev_state, c->n_switch);
		put_i32(c, &cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_NEXT_PID,
			c->sw_next_pid, c->n_switch);
		put_i32(c, &cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_NEXT_PRIO,
			c->sw_next_prio, c->n_switch);
		put_u32(c, &cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_NEXT_COMM_INDEX,
			c->sw_next_comm, c->n_switch);
	}
	if (c->n_waking) {
		put_deltas(c, &cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__WAKING_TIMESTAMP,
			   c->wk_ts, c->n_waking);
		put_i32(c, &cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__WAKING_PID, c->wk_pid,
			c->n_waking);
		put_i32(c, &cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__WAKING_TARGET_CPU,
			c->wk_target_cpu, c->n_waking);
		put_i32(c, &cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__WAKING_PRIO, c->wk_prio,
			c->n_waking);
		put_u32(c, &cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__WAKING_COMM_INDEX,
			c->wk_comm, c->n_waking);
		put_u32(c, &cs, PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__WAKING_COMMON_FLAGS,
			c->wk_flags, c->n_waking);
	}
	pz_end(&cs);
	ftrace_compact_reset(c);
}

// SPDX-License-Identifier: Apache-2.0
/*
 * sdk_event.c - events as TracePackets with a TrackEvent, written by the
 * calling thread straight into its chunk. The common events (a slice begin
 * or end, an instant, on the thread's track, names already interned) take a
 * fast path of about twenty bytes: a delta timestamp on the sequence's
 * incremental clock, the type, the category and name iids. Everything else
 * (first use of a name, annotations, flows, counters, named tracks, a due
 * clock snapshot, a new session or a cleared state) takes the general path,
 * which also emits the sequence's incremental state:
 *
 *   1  SEQ_INCREMENTAL_STATE_CLEARED, TracePacketDefaults (clock 64, the
 *      thread's track), previous_packet_dropped after a loss
 *   2  ClockSnapshot: clock 64 (incremental, ns) <-> BOOTTIME, every second
 *   3  the process's and the thread's TrackDescriptors
 *
 * Interned data (event names, categories, annotation names) rides in the
 * packet that first uses it. A packet that cannot be written marks the
 * writer lost: the next event starts the sequence's state afresh, as the
 * trace processor drops incremental packets after a gap until then.
 */
#include "sdk/sdk_int.h"

#include <sched.h>
#include <string.h>

#include "pb_fields.h"
#include "protozero/protozero.h"

/* Wire tags (field << 3 | type) this file writes. */
#define VARINT 0u
#define FIXED64 1u
#define LEN 2u
#define TAG(id, wt) (((uint32_t)(id) << 3) | (wt))

/* The fast path's worst case: fragment size 4, track event 2 + type 2 +
 * category 1 + 2 + name 1 + 2, sequence flags 2, timestamp 1 + 3. */
#define FAST_MAX_BYTES 24u
/* The second fast path (write_fast_args): at most this many annotations,
 * string values of at most FAST_MAX_STR bytes, and the room its worst case
 * needs in the chunk: 4 + 2 + type 2 + track 11 + category 3 + name 3,
 * counter value 12, per annotation 2 + 3 + 2 + FAST_MAX_STR (or 11), then
 * 2 + 4. */
#define FAST_MAX_ARGS 4u
#define FAST_MAX_STR 32u
#define FAST_ARGS_ROOM (4u + 2 + 2 + 11 + 3 + 3 + 12 + FAST_MAX_ARGS * (7 + FAST_MAX_STR) + 6)
/* Events up to this bound are built on the stack when they do not fit. */
#define STACK_EVENT_BYTES 512u

static const uint8_t k_seq_needs_state =
	PBE_TRACE_PACKET_SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE;

/* ---------------------------------------------------------- encoding ---- */

static PFC_ALWAYS_INLINE uint8_t *put_var(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline uint8_t *put_fixed64(uint8_t *p, uint64_t v)
{
	unsigned i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return p + 8;
}

static inline uint8_t *put_bytes(uint8_t *p, uint32_t tag, const void *s, size_t n)
{
	p = put_var(p, tag);
	p = put_var(p, n);
	memcpy(p, s, n);
	return p + n;
}

/* A length of @width bytes, redundant if need be (written after the fact). */
static inline void put_len_fixed(uint8_t *p, size_t len, unsigned width)
{
	unsigned i;

	for (i = 0; i + 1 < width; i++)
		p[i] = (uint8_t)((len >> (7 * i)) | 0x80);
	p[width - 1] = (uint8_t)(len >> (7 * (width - 1)));
}

static inline unsigned len_width(size_t bound)
{
	return bound < (1u << 7) ? 1 : bound < (1u << 14) ? 2 : bound < (1u << 21) ? 3 : 4;
}

/* A nested message begun: the tag, then room for a length of @width. */
struct nest {
	uint8_t *len_at;
	unsigned width;
};

static inline uint8_t *nest_begin(uint8_t *p, uint32_t id, size_t bound, struct nest *n)
{
	p = put_var(p, TAG(id, LEN));
	n->len_at = p;
	n->width = len_width(bound);
	return p + n->width;
}

static inline void nest_end(const struct nest *n, const uint8_t *end)
{
	put_len_fixed(n->len_at, (size_t)(end - n->len_at) - n->width, n->width);
}

static inline uint32_t name_slot(const void *key)
{
	return (uint32_t)(((uintptr_t)key * 0x9E3779B97F4A7C15ull) >> 56) & (SDK_NAME_SLOTS - 1);
}

static inline uint32_t arg_slot(const void *key)
{
	return (uint32_t)(((uintptr_t)key * 0x9E3779B97F4A7C15ull) >> 58) & (SDK_ARG_NAME_SLOTS - 1);
}

static inline uint64_t seq_delta(struct sdk_writer *w, uint64_t now)
{
	uint64_t d = now > w->last_ts ? now - w->last_ts : 0;

	w->last_ts += d;
	return d;
}

static inline void count(uint64_t *c)
{
	__atomic_store_n(c, *c + 1, __ATOMIC_RELAXED);
}

/* -------------------------------------------------- packets of state ---- */

/* Writes the packet [@buf, @end) or marks the writer lost. */
static int emit(struct sdk_writer *w, const uint8_t *buf, const uint8_t *end)
{
	if (sdk_writer_append(w, buf, (size_t)(end - buf)) < 0) {
		w->lost = true;
		w->snapshot_due_ns = 0;
		return -1;
	}
	return 0;
}

static uint8_t *put_boot_ts(uint8_t *p, uint64_t boot)
{
	*p++ = TAG(PB_TRACE_PACKET__TIMESTAMP, VARINT);
	p = put_var(p, boot);
	p = put_var(p, TAG(PB_TRACE_PACKET__TIMESTAMP_CLOCK_ID, VARINT));
	return put_var(p, PBE_BUILTIN_CLOCK__BUILTIN_CLOCK_BOOTTIME);
}

/*
 * A ClockSnapshot of the sequence's clock against BOOTTIME, from a fresh
 * pair of readings (the TSC on both sides of a clock_gettime, so the
 * pair's error is half that call); the event that asked for it may have
 * read the clock long before (its first event also registers the writer).
 */
static int emit_snapshot(struct sdk_writer *w)
{
	uint8_t buf[96], *p = buf;
	struct nest snap, c;
	uint32_t ver;
	uint64_t a = sdk_clock_now(&ver), boot = sdk_clock_boottime(), b = sdk_clock_now(&ver);
	uint64_t now = a + (b - a) / 2;

	/* The map moved back since this sequence's last event (a refinement
	 * re-anchored it): the sequence's clock must not go back, so the pair
	 * is taken where it reaches last_ts, @boot moved by the same amount.
	 * Only events in that gap then read later than they were. */
	if (now < w->last_ts) {
		boot += w->last_ts - now;
		now = w->last_ts;
	}
	/* Nor may the trace's time go back: the sequence's last event, mapped
	 * by the previous pair, must not come after the events that follow
	 * this one (the two pairs' reading errors could put it there, and an
	 * end would then sort after the next begin). */
	if (w->snap_boot && w->last_ts >= w->snap_sdk &&
	    boot < w->snap_boot + (w->last_ts - w->snap_sdk))
		boot = w->snap_boot + (w->last_ts - w->snap_sdk);
	p = put_boot_ts(p, boot);
	p = nest_begin(p, PB_TRACE_PACKET__CLOCK_SNAPSHOT, 64, &snap);
	p = nest_begin(p, PB_CLOCK_SNAPSHOT__CLOCKS, 32, &c);
	*p++ = TAG(PB_CLOCK_SNAPSHOT_CLOCK__CLOCK_ID, VARINT);
	p = put_var(p, PBE_BUILTIN_CLOCK__BUILTIN_CLOCK_BOOTTIME);
	*p++ = TAG(PB_CLOCK_SNAPSHOT_CLOCK__TIMESTAMP, VARINT);
	p = put_var(p, boot);
	nest_end(&c, p);
	p = nest_begin(p, PB_CLOCK_SNAPSHOT__CLOCKS, 32, &c);
	*p++ = TAG(PB_CLOCK_SNAPSHOT_CLOCK__CLOCK_ID, VARINT);
	p = put_var(p, SDK_CLOCK_ID);
	*p++ = TAG(PB_CLOCK_SNAPSHOT_CLOCK__TIMESTAMP, VARINT);
	p = put_var(p, now);
	*p++ = TAG(PB_CLOCK_SNAPSHOT_CLOCK__IS_INCREMENTAL, VARINT);
	*p++ = 1;
	nest_end(&c, p);
	nest_end(&snap, p);
	if (emit(w, buf, p) < 0)
		return -1;
	w->snap_sdk = now;
	w->snap_boot = boot;
	w->last_ts = now;
	w->clock_version = ver;
	w->snapshot_due_ns = now + SDK_SNAPSHOT_PERIOD_NS;
	return 0;
}

static int emit_thread_descriptor(struct sdk_thread *t, struct sdk_writer *w, uint64_t boot)
{
	uint8_t buf[256], *p = buf;
	struct nest td, th;

	p = put_boot_ts(p, boot);
	p = nest_begin(p, PB_TRACE_PACKET__TRACK_DESCRIPTOR, 200, &td);
	*p++ = TAG(PB_TRACK_DESCRIPTOR__UUID, VARINT);
	p = put_var(p, t->track_uuid);
	*p++ = TAG(PB_TRACK_DESCRIPTOR__PARENT_UUID, VARINT);
	p = put_var(p, sdk_g.process_uuid);
	p = nest_begin(p, PB_TRACK_DESCRIPTOR__THREAD, 100, &th);
	*p++ = TAG(PB_THREAD_DESCRIPTOR__PID, VARINT);
	p = put_var(p, (uint32_t)sdk_g.pid);
	*p++ = TAG(PB_THREAD_DESCRIPTOR__TID, VARINT);
	p = put_var(p, (uint32_t)t->tid);
	if (t->name[0])
		p = put_bytes(p, TAG(PB_THREAD_DESCRIPTOR__THREAD_NAME, LEN), t->name,
			      strnlen(t->name, sizeof(t->name) - 1));
	nest_end(&th, p);
	nest_end(&td, p);
	if (emit(w, buf, p) < 0)
		return -1;
	w->desc_version = t->desc_version;
	return 0;
}

static int emit_process_descriptor(struct sdk_writer *w, uint64_t boot)
{
	uint8_t buf[200], *p = buf;
	struct nest td, pr;

	p = put_boot_ts(p, boot);
	p = nest_begin(p, PB_TRACE_PACKET__TRACK_DESCRIPTOR, 150, &td);
	*p++ = TAG(PB_TRACK_DESCRIPTOR__UUID, VARINT);
	p = put_var(p, sdk_g.process_uuid);
	p = nest_begin(p, PB_TRACK_DESCRIPTOR__PROCESS, 100, &pr);
	*p++ = TAG(PB_PROCESS_DESCRIPTOR__PID, VARINT);
	p = put_var(p, (uint32_t)sdk_g.pid);
	if (sdk_g.process_name[0])
		p = put_bytes(p, TAG(PB_PROCESS_DESCRIPTOR__PROCESS_NAME, LEN),
			      sdk_g.process_name,
			      strnlen(sdk_g.process_name, sizeof(sdk_g.process_name) - 1));
	nest_end(&pr, p);
	nest_end(&td, p);
	return emit(w, buf, p);
}

/* Cleared state, defaults, a snapshot and the descriptors. */
static int emit_reset(struct sdk_thread *t, struct sdk_writer *w, unsigned slot)
{
	uint8_t buf[96], *p = buf;
	struct nest def, ted;
	uint64_t boot = sdk_clock_boottime();
	bool was_lost = w->lost;

	/* Everything interned so far is forgotten with the state. */
	memset(w->names, 0, sizeof(w->names));
	memset(w->arg_names, 0, sizeof(w->arg_names));
	memset(w->cats, 0, sizeof(w->cats));
	memset(w->tracks_seen, 0, sizeof(w->tracks_seen));
	w->next_iid = 1;
	w->lost = false;
	w->gen = atomic_load_explicit(&sdk_g.inst[slot].gen, memory_order_acquire);

	*p++ = TAG(PB_TRACE_PACKET__SEQUENCE_FLAGS, VARINT);
	*p++ = PBE_TRACE_PACKET_SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED;
	if (was_lost) {
		p = put_var(p, TAG(PB_TRACE_PACKET__PREVIOUS_PACKET_DROPPED, VARINT));
		*p++ = 1;
	}
	p = put_boot_ts(p, boot);
	p = nest_begin(p, PB_TRACE_PACKET__TRACE_PACKET_DEFAULTS, 64, &def);
	p = put_var(p, TAG(PB_TRACE_PACKET_DEFAULTS__TIMESTAMP_CLOCK_ID, VARINT));
	p = put_var(p, SDK_CLOCK_ID);
	p = nest_begin(p, PB_TRACE_PACKET_DEFAULTS__TRACK_EVENT_DEFAULTS, 32, &ted);
	*p++ = TAG(PB_TRACK_EVENT_DEFAULTS__TRACK_UUID, VARINT);
	p = put_var(p, t->track_uuid);
	nest_end(&ted, p);
	nest_end(&def, p);
	if (emit(w, buf, p) < 0 || emit_snapshot(w) < 0 ||
	    emit_process_descriptor(w, boot) < 0 || emit_thread_descriptor(t, w, boot) < 0) {
		w->lost = true;
		w->snapshot_due_ns = 0;
		return -1;
	}
	return 0;
}

/* Whatever the sequence needs before an event at @now. */
static int prepare(struct sdk_thread *t, struct sdk_writer *w, unsigned slot, uint64_t now,
		   uint32_t ver)
{
	if (w->lost || w->gen != atomic_load_explicit(&sdk_g.inst[slot].gen, memory_order_acquire))
		return emit_reset(t, w, slot);
	if (w->clock_version != ver || now >= w->snapshot_due_ns) {
		if (emit_snapshot(w) < 0)
			return -1;
	}
	if (w->desc_version != t->desc_version)
		return emit_thread_descriptor(t, w, sdk_clock_boottime());
	return 0;
}

/* A track's slot in a writer's table of tracks described. */
static inline uint32_t track_slot(uint64_t uuid)
{
	return (uint32_t)((uuid * 0x9E3779B97F4A7C15ull) >> 59) & (SDK_TRACK_SLOTS - 1);
}

static int describe_track(struct sdk_writer *w, const struct pfc_track *tr)
{
	uint32_t i = track_slot(tr->uuid);
	uint8_t buf[STACK_EVENT_BYTES], *p = buf;
	size_t n = strlen(tr->name);
	struct nest td, ctr;

	if (w->tracks_seen[i] == tr->uuid)
		return 0;
	if (n > STACK_EVENT_BYTES - 64)
		n = STACK_EVENT_BYTES - 64;
	p = put_boot_ts(p, sdk_clock_boottime());
	p = nest_begin(p, PB_TRACE_PACKET__TRACK_DESCRIPTOR, n + 48, &td);
	*p++ = TAG(PB_TRACK_DESCRIPTOR__UUID, VARINT);
	p = put_var(p, tr->uuid);
	*p++ = TAG(PB_TRACK_DESCRIPTOR__PARENT_UUID, VARINT);
	p = put_var(p, sdk_g.process_uuid);
	p = put_bytes(p, TAG(PB_TRACK_DESCRIPTOR__NAME, LEN), tr->name, n);
	if (tr->kind == PFC_TRACK_COUNTER) {
		p = nest_begin(p, PB_TRACK_DESCRIPTOR__COUNTER, 0, &ctr);
		nest_end(&ctr, p);
	}
	nest_end(&td, p);
	if (emit(w, buf, p) < 0)
		return -1;
	w->tracks_seen[i] = tr->uuid;
	return 0;
}

/* ------------------------------------------------------ the general path ---- */

/* What one event interns, and the lengths of the strings it writes out
 * (only those: an interned name already sent costs no strlen); filled
 * before encoding. */
struct intern {
	uint32_t cat_iid, name_iid;
	bool new_cat, new_name;
	size_t name_len;                   /* where the name is written */
	uint32_t arg_iid[SDK_MAX_ARGS];
	bool new_arg[SDK_MAX_ARGS];
	size_t arg_name_len[SDK_MAX_ARGS]; /* every annotation's */
	size_t arg_str_len[SDK_MAX_ARGS];  /* string values */
};

static uint32_t intern_cat(struct sdk_writer *w, const struct pfc_category *c, bool *is_new)
{
	uint32_t s = c->index & (SDK_CAT_SLOTS - 1);

	*is_new = w->cats[s].index_plus1 != c->index + 1;
	if (*is_new) {
		w->cats[s].index_plus1 = c->index + 1;
		w->cats[s].iid = w->next_iid++;
	}
	return w->cats[s].iid;
}

/* The iid of the string at @key in @slot (of a writer's table), a new one (and
 * *is_new) when the slot held another string. */
static uint32_t intern_ptr(struct sdk_writer *w, struct sdk_interned *slot, const char *key,
			   size_t len, bool *is_new)
{
	*is_new = slot->key != key;
	if (*is_new) {
		slot->key = key;
		slot->iid = w->next_iid++;
		slot->len = (uint32_t)len;
	}
	return slot->iid;
}

static uint32_t intern_name(struct sdk_writer *w, const char *name, size_t len, bool *is_new)
{
	return intern_ptr(w, &w->names[name_slot(name)], name, len, is_new);
}

static uint32_t intern_arg(struct sdk_writer *w, const char *name, size_t len, bool *is_new)
{
	return intern_ptr(w, &w->arg_names[arg_slot(name)], name, len, is_new);
}

static inline size_t safe_strlen(const char *s)
{
	return s ? strlen(s) : 0;
}

/* An upper bound of the packet's size. */
static uint8_t *put_interned(uint8_t *p, uint32_t field, uint32_t iid, const char *s,
			     size_t len)
{
	struct nest n;

	p = nest_begin(p, field, len + 16, &n);
	*p++ = TAG(PB_EVENT_NAME__IID, VARINT);
	p = put_var(p, iid);
	p = put_bytes(p, TAG(PB_EVENT_NAME__NAME, LEN), s, len);
	nest_end(&n, p);
	return p;
}

/* An annotation's value (its type's field); @slen: a string value's
 * length. */
static inline uint8_t *put_arg_value(uint8_t *p, const struct pfc_arg *a, size_t slen)
{
	switch (a->type) {
	case PFC_ARG_INT:
		*p++ = TAG(PB_DEBUG_ANNOTATION__INT_VALUE, VARINT);
		p = put_var(p, (uint64_t)a->v.i);
		break;
	case PFC_ARG_UINT:
		*p++ = TAG(PB_DEBUG_ANNOTATION__UINT_VALUE, VARINT);
		p = put_var(p, a->v.u);
		break;
	case PFC_ARG_DOUBLE: {
		uint64_t bits;

		memcpy(&bits, &a->v.d, sizeof(bits));
		*p++ = TAG(PB_DEBUG_ANNOTATION__DOUBLE_VALUE, FIXED64);
		p = put_fixed64(p, bits);
		break;
	}
	case PFC_ARG_BOOL:
		*p++ = TAG(PB_DEBUG_ANNOTATION__BOOL_VALUE, VARINT);
		*p++ = a->v.b ? 1 : 0;
		break;
	case PFC_ARG_STRING:
		p = put_bytes(p, TAG(PB_DEBUG_ANNOTATION__STRING_VALUE, LEN), a->v.s ? a->v.s : "",
			      slen);
		break;
	case PFC_ARG_POINTER:
		*p++ = TAG(PB_DEBUG_ANNOTATION__POINTER_VALUE, VARINT);
		p = put_var(p, (uint64_t)(uintptr_t)a->v.p);
		break;
	}
	return p;
}

/* @name_len: the name's length where it is written out (@dynamic);
 * @slen: a string value's. */
static uint8_t *put_arg(uint8_t *p, const struct pfc_arg *a, uint32_t iid, bool dynamic,
			size_t name_len, size_t slen)
{
	struct nest n;

	p = nest_begin(p, PB_TRACK_EVENT__DEBUG_ANNOTATIONS, 40 + name_len + slen, &n);
	if (dynamic) {
		p = put_bytes(p, TAG(PB_DEBUG_ANNOTATION__NAME, LEN), a->name ? a->name : "",
			      name_len);
	} else {
		*p++ = TAG(PB_DEBUG_ANNOTATION__NAME_IID, VARINT);
		p = put_var(p, iid);
	}
	p = put_arg_value(p, a, slen);
	nest_end(&n, p);
	return p;
}

/* The packet of @e into @out (room for packet_bound()); returns its end. */
static uint8_t *encode(struct sdk_writer *w, const struct pfc_category *cat,
		       const struct pfc_event *e, size_t n_args, const struct intern *in,
		       uint64_t now, size_t bound, uint8_t *out)
{
	bool dynamic = e->flags & PFC_EVENT_DYNAMIC_NAMES;
	bool has_name = e->name && e->type != PFC_EVENT_SLICE_END && e->type != PFC_EVENT_COUNTER;
	uint8_t *p = out;
	struct nest idata, te;
	size_t i;
	bool any_new = in->new_cat || (in->new_name && has_name && !dynamic);

	for (i = 0; i < n_args && !dynamic; i++)
		any_new |= in->new_arg[i];
	if (any_new) {
		p = nest_begin(p, PB_TRACE_PACKET__INTERNED_DATA, bound, &idata);
		if (in->new_cat)
			p = put_interned(p, PB_INTERNED_DATA__EVENT_CATEGORIES, in->cat_iid,
					 cat->name, strlen(cat->name));
		if (in->new_name && has_name && !dynamic)
			p = put_interned(p, PB_INTERNED_DATA__EVENT_NAMES, in->name_iid, e->name,
					 in->name_len);
		for (i = 0; i < n_args && !dynamic; i++) {
			if (in->new_arg[i])
				p = put_interned(p, PB_INTERNED_DATA__DEBUG_ANNOTATION_NAMES,
						 in->arg_iid[i], e->args[i].name,
						 in->arg_name_len[i]);
		}
		nest_end(&idata, p);
	}
	*p++ = TAG(PB_TRACE_PACKET__TIMESTAMP, VARINT);
	p = put_var(p, seq_delta(w, now));
	p = nest_begin(p, PB_TRACE_PACKET__TRACK_EVENT, bound, &te);
	*p++ = TAG(PB_TRACK_EVENT__TYPE, VARINT);
	*p++ = (uint8_t)e->type;
	if (e->track) {
		*p++ = TAG(PB_TRACK_EVENT__TRACK_UUID, VARINT);
		p = put_var(p, e->track->uuid);
	}
	*p++ = TAG(PB_TRACK_EVENT__CATEGORY_IIDS, VARINT);
	p = put_var(p, in->cat_iid);
	if (has_name && dynamic) {
		p = put_bytes(p, TAG(PB_TRACK_EVENT__NAME, LEN), e->name, in->name_len);
	} else if (has_name) {
		*p++ = TAG(PB_TRACK_EVENT__NAME_IID, VARINT);
		p = put_var(p, in->name_iid);
	}
	if (e->type == PFC_EVENT_COUNTER) {
		if (e->flags & PFC_EVENT_COUNTER_DOUBLE) {
			uint64_t bits;

			memcpy(&bits, &e->value_double, sizeof(bits));
			p = put_var(p, TAG(PB_TRACK_EVENT__DOUBLE_COUNTER_VALUE, FIXED64));
			p = put_fixed64(p, bits);
		} else {
			p = put_var(p, TAG(PB_TRACK_EVENT__COUNTER_VALUE, VARINT));
			p = put_var(p, (uint64_t)e->value_int);
		}
	}
	if (e->flow_id) {
		p = put_var(p, TAG(PB_TRACK_EVENT__FLOW_IDS, FIXED64));
		p = put_fixed64(p, e->flow_id);
	}
	if (e->terminating_flow_id) {
		p = put_var(p, TAG(PB_TRACK_EVENT__TERMINATING_FLOW_IDS, FIXED64));
		p = put_fixed64(p, e->terminating_flow_id);
	}
	for (i = 0; i < n_args; i++)
		p = put_arg(p, &e->args[i], in->arg_iid[i], dynamic || !e->args[i].name,
			    in->arg_name_len[i], in->arg_str_len[i]);
	nest_end(&te, p);
	*p++ = TAG(PB_TRACE_PACKET__SEQUENCE_FLAGS, VARINT);
	*p++ = k_seq_needs_state;
	return p;
}

static void fragment_header(uint8_t *p, size_t n)
{
	put_len_fixed(p, n, SMB_PACKET_HEADER_SIZE);
}

/*
 * An upper bound of @e's packet, and the lengths of its strings into @in,
 * without interning anything yet. A name this sequence interned before
 * has its length in its slot, so only new names and string values cost a
 * strlen. Every annotation name counts in the bound, sent before or not:
 * two annotations of one event may take the same slot in turn, so one
 * that looks known here may be sent anew.
 */
static size_t packet_bound(const struct sdk_writer *w, const struct pfc_category *cat,
			   const struct pfc_event *e, size_t n_args, struct intern *in)
{
	bool dynamic = e->flags & PFC_EVENT_DYNAMIC_NAMES;
	bool has_name = e->name && e->type != PFC_EVENT_SLICE_END && e->type != PFC_EVENT_COUNTER;
	const struct sdk_interned *slot;
	size_t b = 96, i;

	if (w->cats[cat->index & (SDK_CAT_SLOTS - 1)].index_plus1 != cat->index + 1)
		b += strlen(cat->name) + 16;
	in->name_len = 0;
	if (has_name) {
		slot = &w->names[name_slot(e->name)];
		if (!dynamic && slot->key == e->name) {
			in->name_len = slot->len;
		} else {
			in->name_len = strlen(e->name);
			b += in->name_len + 16;
		}
	}
	for (i = 0; i < n_args; i++) {
		const struct pfc_arg *a = &e->args[i];

		slot = a->name ? &w->arg_names[arg_slot(a->name)] : NULL;
		if (!dynamic && slot && slot->key == a->name)
			in->arg_name_len[i] = slot->len;
		else
			in->arg_name_len[i] = safe_strlen(a->name);
		in->arg_str_len[i] = a->type == PFC_ARG_STRING ? safe_strlen(a->v.s) : 0;
		b += 48 + in->arg_name_len[i] + in->arg_str_len[i];
	}
	return b;
}

/* One event for instance @slot. Return: true if written. */
static bool write_general(struct sdk_thread *t, unsigned slot, const struct pfc_category *cat,
			  const struct pfc_event *e, uint64_t now, uint32_t ver)
{
	struct sdk_writer *w = t->w[slot];
	struct intern in;
	uint8_t stack_buf[STACK_EVENT_BYTES], *buf, *end;
	size_t n_args = e->n_args, bound, i;
	bool dynamic = e->flags & PFC_EVENT_DYNAMIC_NAMES;

	if (!w || !w->writer_id)
		w = sdk_writer_get(t, slot);
	if (!w)
		return false;
	if (n_args > SDK_MAX_ARGS)
		n_args = SDK_MAX_ARGS;
	if (n_args && !e->args)
		n_args = 0;
	if (prepare(t, w, slot, now, ver) < 0)
		return false;
	if (e->track && describe_track(w, e->track) < 0)
		return false;
	bound = packet_bound(w, cat, e, n_args, &in);
	if (bound > SDK_MAX_EVENT_BYTES)
		return false;

	/* Only now, so an event too large to write interns nothing. */
	in.cat_iid = intern_cat(w, cat, &in.new_cat);
	in.new_name = false;
	in.name_iid = 0;
	if (e->name && !dynamic && e->type != PFC_EVENT_SLICE_END && e->type != PFC_EVENT_COUNTER)
		in.name_iid = intern_name(w, e->name, in.name_len, &in.new_name);
	for (i = 0; i < n_args; i++) {
		in.new_arg[i] = false;
		in.arg_iid[i] = 0;
		if (!dynamic && e->args[i].name)
			in.arg_iid[i] = intern_arg(w, e->args[i].name, in.arg_name_len[i],
						   &in.new_arg[i]);
	}
	/* Straight into the chunk when it fits, else built and fragmented. */
	buf = sdk_writer_reserve(w, bound + SMB_PACKET_HEADER_SIZE);
	if (buf && w->n_packets < SMB_MAX_PACKETS_PER_CHUNK) {
		end = encode(w, cat, e, n_args, &in, now, bound, buf + SMB_PACKET_HEADER_SIZE);
		fragment_header(buf, (size_t)(end - buf) - SMB_PACKET_HEADER_SIZE);
		w->cur = end;
		w->n_packets++;
		return true;
	}
	buf = bound <= sizeof(stack_buf) ? stack_buf : t->scratch;
	end = encode(w, cat, e, n_args, &in, now, bound, buf);
	return emit(w, buf, end) == 0;
}

/* ------------------------------------------------------ the fast path ---- */

/* A 1- or 2-byte varint (@v < 2^14). */
static PFC_ALWAYS_INLINE uint8_t *put_small(uint8_t *q, uint32_t v)
{
	if (v < 0x80) {
		*q = (uint8_t)v;
		return q + 1;
	}
	q[0] = (uint8_t)(v | 0x80);
	q[1] = (uint8_t)(v >> 7);
	return q + 2;
}

/*
 * The fast path's packet; false if @w is not ready for it. Its layout does
 * not depend on the timestamp, which goes last in three bytes (a
 * redundant varint, deltas under 2 ms), so the stores need not wait for
 * the TSC:
 *
 *   size(4) | 5a len 48 type 18 cat [50 name] | 68 02 | 40 t0 t1 t2
 */
/* Whether @w can take a fast-path packet of up to @room bytes now: its
 * chunk has room, its state, clock and category are current. */
static PFC_ALWAYS_INLINE bool fast_ready(const struct sdk_writer *w, unsigned slot,
					 const struct pfc_category *cat, size_t room, uint32_t ver,
					 uint32_t *out_cat_iid)
{
	uint32_t cs = cat->index & (SDK_CAT_SLOTS - 1);

	if (PFC_UNLIKELY_(!w || (size_t)(w->end - w->cur) < room ||
			  w->n_packets >= SMB_MAX_PACKETS_PER_CHUNK || w->clock_version != ver ||
			  w->gen != atomic_load_explicit(&sdk_g.inst[slot].gen,
							 memory_order_relaxed) ||
			  w->cats[cs].index_plus1 != cat->index + 1))
		return false;
	*out_cat_iid = w->cats[cs].iid;
	return true;
}

static PFC_ALWAYS_INLINE bool write_fast(struct sdk_writer *w, unsigned slot,
					 const struct pfc_category *cat, const char *name,
					 unsigned type, uint64_t now, uint32_t ver)
{
	uint32_t cat_iid, name_iid = 0, size;
	uint64_t d;
	uint8_t *p, *q;

	if (!fast_ready(w, slot, cat, FAST_MAX_BYTES, ver, &cat_iid))
		return false;
	if (name) {
		uint32_t ns = name_slot(name);

		if (PFC_UNLIKELY_(w->names[ns].key != name))
			return false;
		name_iid = w->names[ns].iid;
	}
	d = now - w->last_ts;
	if (PFC_UNLIKELY_((cat_iid | name_iid) >= (1u << 14) || now < w->last_ts ||
			  d >= (1u << 21) || now >= w->snapshot_due_ns))
		return false;
	p = w->cur;
	q = p + SMB_PACKET_HEADER_SIZE;
	q[0] = TAG(PB_TRACE_PACKET__TRACK_EVENT, LEN);
	q[2] = TAG(PB_TRACK_EVENT__TYPE, VARINT);
	q[3] = (uint8_t)type;
	q[4] = TAG(PB_TRACK_EVENT__CATEGORY_IIDS, VARINT);
	q = put_small(q + 5, cat_iid);
	if (name) {
		*q++ = TAG(PB_TRACK_EVENT__NAME_IID, VARINT);
		q = put_small(q, name_iid);
	}
	p[SMB_PACKET_HEADER_SIZE + 1] = (uint8_t)(q - (p + SMB_PACKET_HEADER_SIZE + 2));
	q[0] = TAG(PB_TRACE_PACKET__SEQUENCE_FLAGS, VARINT);
	q[1] = k_seq_needs_state;
	q[2] = TAG(PB_TRACE_PACKET__TIMESTAMP, VARINT);
	q[3] = (uint8_t)(d | 0x80);
	q[4] = (uint8_t)((d >> 7) | 0x80);
	q[5] = (uint8_t)(d >> 14);
	q += 6;
	/* The fragment's size as the 4-byte redundant varint of a size < 128. */
	size = 0x00808080u | (uint32_t)(q - p - SMB_PACKET_HEADER_SIZE);
	memcpy(p, &size, sizeof(size));
	w->cur = q;
	w->n_packets++;
	w->last_ts = now;
	return true;
}

/* One annotation of the fast path at @q (its name's iid @iid); NULL when
 * its value does not fit the fast path. */
static inline uint8_t *put_fast_arg(uint8_t *q, const struct pfc_arg *a, uint32_t iid)
{
	uint8_t *ann = q;
	size_t n = 0;

	q[0] = TAG(PB_TRACK_EVENT__DEBUG_ANNOTATIONS, LEN);
	q[2] = TAG(PB_DEBUG_ANNOTATION__NAME_IID, VARINT);
	q = put_small(q + 3, iid);
	if (a->type < PFC_ARG_INT || a->type > PFC_ARG_POINTER)
		return NULL;
	if (a->type == PFC_ARG_STRING &&
	    (!a->v.s || (n = strnlen(a->v.s, FAST_MAX_STR + 1)) > FAST_MAX_STR))
		return NULL;
	q = put_arg_value(q, a, n);
	ann[1] = (uint8_t)(q - ann - 2);
	return q;
}

/*
 * The fast path of pfc_te_event(): any event without flows or dynamic
 * names whose category, name, annotation names and track this sequence
 * has interned or described before, with at most FAST_MAX_ARGS
 * annotations (scalars, or strings of at most FAST_MAX_STR bytes) and a
 * TrackEvent under 128 bytes. The layout is write_fast()'s with the track,
 * the counter value and the annotations in the TrackEvent. False when @e
 * does not fit: the general path then writes it (and interns or describes
 * what is new), and nothing was written.
 */
static bool write_fast_args(struct sdk_writer *w, unsigned slot, const struct pfc_category *cat,
			    const struct pfc_event *e, uint64_t now, uint32_t ver)
{
	uint32_t cat_iid, name_iid = 0, iid;
	const struct sdk_interned *in;
	uint64_t d;
	uint8_t *p, *q, *te;
	size_t i;

	bool has_name = e->type != PFC_EVENT_SLICE_END && e->type != PFC_EVENT_COUNTER;

	if (e->n_args > FAST_MAX_ARGS || (e->n_args && !e->args) || e->flow_id ||
	    e->terminating_flow_id || (e->flags & PFC_EVENT_DYNAMIC_NAMES) ||
	    !fast_ready(w, slot, cat, FAST_ARGS_ROOM, ver, &cat_iid) ||
	    (e->track && w->tracks_seen[track_slot(e->track->uuid)] != e->track->uuid))
		return false;
	if (has_name) {
		in = &w->names[name_slot(e->name)];
		if (in->key != e->name)
			return false;
		name_iid = in->iid;
	}
	d = now - w->last_ts;
	if ((cat_iid | name_iid) >= (1u << 14) || now < w->last_ts || d >= (1u << 21) ||
	    now >= w->snapshot_due_ns)
		return false;
	p = w->cur;
	te = p + SMB_PACKET_HEADER_SIZE;
	te[0] = TAG(PB_TRACE_PACKET__TRACK_EVENT, LEN);
	te[2] = TAG(PB_TRACK_EVENT__TYPE, VARINT);
	te[3] = (uint8_t)e->type;
	q = te + 4;
	if (e->track) {
		*q++ = TAG(PB_TRACK_EVENT__TRACK_UUID, VARINT);
		q = put_var(q, e->track->uuid);
	}
	*q++ = TAG(PB_TRACK_EVENT__CATEGORY_IIDS, VARINT);
	q = put_small(q, cat_iid);
	if (has_name) {
		*q++ = TAG(PB_TRACK_EVENT__NAME_IID, VARINT);
		q = put_small(q, name_iid);
	} else if (e->type == PFC_EVENT_COUNTER && (e->flags & PFC_EVENT_COUNTER_DOUBLE)) {
		uint64_t bits;

		memcpy(&bits, &e->value_double, sizeof(bits));
		q = put_var(q, TAG(PB_TRACK_EVENT__DOUBLE_COUNTER_VALUE, FIXED64));
		q = put_fixed64(q, bits);
	} else if (e->type == PFC_EVENT_COUNTER) {
		q = put_var(q, TAG(PB_TRACK_EVENT__COUNTER_VALUE, VARINT));
		q = put_var(q, (uint64_t)e->value_int);
	}
	for (i = 0; i < e->n_args; i++) {
		if (!e->args[i].name)
			return false;
		in = &w->arg_names[arg_slot(e->args[i].name)];
		iid = in->iid;
		if (in->key != e->args[i].name || iid >= (1u << 14) ||
		    !(q = put_fast_arg(q, &e->args[i], iid)))
			return false;
	}
	if (q - te - 2 >= 128)
		return false;
	te[1] = (uint8_t)(q - te - 2);
	q[0] = TAG(PB_TRACE_PACKET__SEQUENCE_FLAGS, VARINT);
	q[1] = k_seq_needs_state;
	q[2] = TAG(PB_TRACE_PACKET__TIMESTAMP, VARINT);
	q[3] = (uint8_t)(d | 0x80);
	q[4] = (uint8_t)((d >> 7) | 0x80);
	q[5] = (uint8_t)(d >> 14);
	q += 6;
	fragment_header(p, (size_t)(q - p) - SMB_PACKET_HEADER_SIZE);
	w->cur = q;
	w->n_packets++;
	w->last_ts = now;
	return true;
}

/* The general path of a simple event (kept out of line: the fast path
 * stays small). */
static __attribute__((noinline)) void simple_slow(struct sdk_thread *t, unsigned slot,
						  const struct pfc_category *cat,
						  const char *name, unsigned type, uint64_t now,
						  uint32_t ver)
{
	struct pfc_event e;

	memset(&e, 0, sizeof(e));
	e.type = (enum pfc_event_type)type;
	e.name = name;
	if (write_general(t, slot, cat, &e, now, ver))
		count(&t->n_written);
	else
		count(&t->n_dropped);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* The control thread is taking this thread's chunks (a flush, an idle
 * reclaim): that takes microseconds, so wait rather than lose the event. */
static __attribute__((noinline)) void enter_slow(struct sdk_thread *t)
{
	unsigned spins = 0;

	while (!sdk_enter(t)) {
		if (++spins < 64)
			cpu_relax();
		else
			sched_yield();
	}
}

static __attribute__((noinline)) struct sdk_thread *thread_slow(void)
{
	return sdk_thread_get();
}

static PFC_ALWAYS_INLINE void simple_event(struct pfc_category *cat, const char *name,
					   unsigned type)
{
	struct sdk_thread *t = sdk_t_self;
	unsigned mask;
	uint64_t now;
	uint32_t ver;

	if (PFC_UNLIKELY_(!cat))
		return;
	mask = sdk_cat_flags[cat->index];
	if (PFC_UNLIKELY_(!t)) {
		if (!mask || !(t = thread_slow()))
			return;
	}
	if (PFC_UNLIKELY_(!sdk_enter(t)))
		enter_slow(t);
	if (PFC_UNLIKELY_(t->dead != NULL))
		sdk_thread_reap(t);
	now = sdk_clock_now(&ver);
	while (mask) {
		unsigned slot = (unsigned)__builtin_ctz(mask);

		mask &= mask - 1;
		if (PFC_LIKELY_(write_fast(t->w[slot], slot, cat, name, type, now, ver)))
			count(&t->n_written);
		else
			simple_slow(t, slot, cat, name, type, now, ver);
	}
	sdk_leave(t, now);
}

/* ------------------------------------------------------------ the API ---- */

PFC_API void pfc_te_slice_begin(struct pfc_category *cat, const char *name)
{
	simple_event(cat, name, PFC_EVENT_SLICE_BEGIN);
}

PFC_API void pfc_te_slice_end(struct pfc_category *cat)
{
	simple_event(cat, NULL, PFC_EVENT_SLICE_END);
}

PFC_API void pfc_te_instant(struct pfc_category *cat, const char *name)
{
	simple_event(cat, name, PFC_EVENT_INSTANT);
}

PFC_API void pfc_te_event(struct pfc_category *cat, const struct pfc_event *e)
{
	struct sdk_thread *t = sdk_t_self;
	unsigned mask;
	uint64_t now;
	uint32_t ver;

	if (PFC_UNLIKELY_(!cat || !e))
		return;
	mask = sdk_cat_flags[cat->index];
	if (!mask)
		return;
	if (PFC_UNLIKELY_(!t) && !(t = sdk_thread_get()))
		return;
	if (e->type < PFC_EVENT_SLICE_BEGIN || e->type > PFC_EVENT_COUNTER ||
	    (e->type == PFC_EVENT_COUNTER) != (e->track && e->track->kind == PFC_TRACK_COUNTER) ||
	    ((e->type == PFC_EVENT_SLICE_BEGIN || e->type == PFC_EVENT_INSTANT) && !e->name)) {
		count(&t->n_dropped);
		return;
	}
	if (PFC_UNLIKELY_(!sdk_enter(t)))
		enter_slow(t);
	if (PFC_UNLIKELY_(t->dead != NULL))
		sdk_thread_reap(t);
	now = sdk_clock_now(&ver);
	while (mask) {
		unsigned slot = (unsigned)__builtin_ctz(mask);

		mask &= mask - 1;
		if (write_fast_args(t->w[slot], slot, cat, e, now, ver) ||
		    write_general(t, slot, cat, e, now, ver))
			count(&t->n_written);
		else
			count(&t->n_dropped);
	}
	sdk_leave(t, now);
}

static void counter(struct pfc_category *cat, const struct pfc_track *track, int64_t vi,
		    double vd, bool is_double)
{
	struct pfc_event e;

	memset(&e, 0, sizeof(e));
	e.type = PFC_EVENT_COUNTER;
	e.track = track;
	e.value_int = vi;
	e.value_double = vd;
	e.flags = is_double ? PFC_EVENT_COUNTER_DOUBLE : 0;
	pfc_te_event(cat, &e);
}

PFC_API void pfc_te_counter_int(struct pfc_category *cat, const struct pfc_track *track,
				int64_t value)
{
	counter(cat, track, value, 0, false);
}

PFC_API void pfc_te_counter_double(struct pfc_category *cat, const struct pfc_track *track,
				   double value)
{
	counter(cat, track, 0, value, true);
}

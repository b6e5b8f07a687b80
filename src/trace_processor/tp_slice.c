// SPDX-License-Identifier: Apache-2.0
/*
 * tp_slice.c - slices, their args and flows, in parse (time) order. Each
 * track has a stack of open slices; a slice's args collect while it is on
 * the stack (begin and end events both add to them) and become one arg set
 * when it leaves. Identical arg sets are stored once. Flows link slices by
 * id: v2 flow ids, legacy bind ids and v1 flow events.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/tp_track_event.h"

#define MAX_DEPTH 512
#define PENDING (-1)
#define NO_ARGS UINT32_MAX

/* Slice ends saturate: a nonsense duration must not wrap around in comparisons. */
static int64_t end_of(int64_t ts, int64_t dur)
{
	int64_t r;

	if (__builtin_add_overflow(ts, dur, &r))
		return dur < 0 ? INT64_MIN : INT64_MAX;
	return r;
}

/* ------------------------------------------------------------------ args ---- */

static void arg_push(struct tp_import *imp, struct te_args *b, const struct te_arg *a)
{
	if (b->n == b->cap) {
		uint32_t cap = b->cap ? 2 * b->cap : 8;
		struct te_arg *p;

		if (b->n >= TE_MAX_ARGS_PER_SET) {
			tp_stat_add(imp, "track_event_parser_errors", -1, 0, 1);
			return;
		}
		p = realloc(b->a, cap * sizeof(*p));
		if (!p) {
			tp_stat_add(imp, "track_event_parser_errors", -1, 0, 1);
			return;
		}
		b->a = p;
		b->cap = cap;
	}
	b->a[b->n++] = *a;
}

void te_args_add(struct tp_import *imp, struct te_args *b, const struct te_arg *arg)
{
	if (b)
		arg_push(imp, b, arg);
}

void te_args_int(struct tp_import *imp, struct te_args *b, uint32_t key, int64_t v)
{
	struct te_arg a = {.flat_key = key, .key = key, .type = TE_ARG_INT, .v.i = v};

	te_args_add(imp, b, &a);
}

void te_args_uint(struct tp_import *imp, struct te_args *b, uint32_t key, uint64_t v)
{
	struct te_arg a = {.flat_key = key, .key = key, .type = TE_ARG_UINT, .v.i = (int64_t)v};

	te_args_add(imp, b, &a);
}

void te_args_real(struct tp_import *imp, struct te_args *b, uint32_t key, double v)
{
	struct te_arg a = {.flat_key = key, .key = key, .type = TE_ARG_REAL, .v.d = v};

	te_args_add(imp, b, &a);
}

void te_args_str(struct tp_import *imp, struct te_args *b, uint32_t key, uint32_t str)
{
	struct te_arg a = {.flat_key = key, .key = key, .type = TE_ARG_STR, .v.s = str};

	te_args_add(imp, b, &a);
}

void te_args_bool(struct tp_import *imp, struct te_args *b, uint32_t key, bool v)
{
	struct te_arg a = {.flat_key = key, .key = key, .type = TE_ARG_BOOL, .v.i = v};

	te_args_add(imp, b, &a);
}

void te_args_fini(struct te_args *b)
{
	if (!b)
		return;
	free(b->a);
	b->a = NULL;
	b->n = b->cap = 0;
}

static const char *const k_value_types[] = {
	[TE_ARG_INT] = "int",   [TE_ARG_UINT] = "uint",   [TE_ARG_STR] = "string",
	[TE_ARG_REAL] = "real", [TE_ARG_PTR] = "pointer", [TE_ARG_BOOL] = "bool",
	[TE_ARG_NULL] = "null", [TE_ARG_JSON] = "json",
};

static uint64_t arg_hash(const struct te_arg *a, uint32_t n)
{
	uint64_t h = 0x51ed270b27a1f3c5ull;
	uint32_t i;

	for (i = 0; i < n; i++) {
		uint64_t v = 0;

		h = tp_hash_mix(h, a[i].key);
		h = tp_hash_mix(h, a[i].type);
		switch (a[i].type) {
		case TE_ARG_STR:
		case TE_ARG_JSON:
			v = a[i].v.s;
			break;
		case TE_ARG_REAL:
			memcpy(&v, &a[i].v.d, sizeof(v));
			break;
		case TE_ARG_NULL:
			break;
		default:
			v = (uint64_t)a[i].v.i;
			break;
		}
		h = tp_hash_mix(h, v);
	}
	return h;
}

/* Whether the @n args at @row of the args table are exactly @a. */
static bool rows_equal(struct tp_import *imp, size_t row, const struct te_arg *a, uint32_t n)
{
	struct tp_table *t = &imp->db->args;
	int64_t set;
	uint32_t i;

	if (row + n > t->n_rows)
		return false;
	set = tp_get_int(t, ARGS_ARG_SET_ID, row);
	if (row + n < t->n_rows && tp_get_int(t, ARGS_ARG_SET_ID, row + n) == set)
		return false;
	for (i = 0; i < n; i++, row++) {
		if (tp_get_int(t, ARGS_ARG_SET_ID, row) != set ||
		    tp_get_str(t, ARGS_KEY, row) != a[i].key ||
		    tp_get_str(t, ARGS_FLAT_KEY, row) != a[i].flat_key ||
		    tp_get_str(t, ARGS_VALUE_TYPE, row) !=
			    tp_db_str(imp->db, k_value_types[a[i].type]))
			return false;
		switch (a[i].type) {
		case TE_ARG_STR:
		case TE_ARG_JSON:
			if (tp_get_str(t, ARGS_STRING_VALUE, row) != a[i].v.s)
				return false;
			break;
		case TE_ARG_REAL:
			if (memcmp(&tp_col_real(t, ARGS_REAL_VALUE)[row], &a[i].v.d,
				   sizeof(double)))
				return false;
			break;
		case TE_ARG_NULL:
			break;
		default:
			if (tp_get_int(t, ARGS_INT_VALUE, row) != a[i].v.i)
				return false;
			break;
		}
	}
	return true;
}

int64_t te_args_commit(struct tp_import *imp, struct te_args *b)
{
	struct tp_table *t = &imp->db->args;
	struct tp_te *te;
	uint32_t i, n = 0;
	uint64_t h, v;
	int64_t set;
	size_t first;
	int probe;

	/* Other importers commit sets too: the dedup map may not exist yet. */
	if (!b || !b->n || !(te = te_get(imp)))
		return TP_NULL_INT;
	/* A repeated key replaces the previous value unless it only fills a gap. */
	for (i = 0; i < b->n; i++) {
		if (n && b->a[n - 1].key == b->a[i].key) {
			if (!b->a[i].skip_if_exists)
				b->a[n - 1] = b->a[i];
			continue;
		}
		b->a[n++] = b->a[i];
	}
	b->n = 0;
	h = arg_hash(b->a, n);
	for (probe = 0; probe < 8; probe++, h++) {
		if (!hmap_get(&te->arg_sets, h, &v))
			break;
		if (rows_equal(imp, (size_t)v, b->a, n))
			return tp_get_int(t, ARGS_ARG_SET_ID, v);
	}
	set = tp_args_new_set(imp);
	first = t->n_rows;
	for (i = 0; i < n; i++) {
		const struct te_arg *a = &b->a[i];
		int64_t row = tp_table_append(t);

		if (row < 0)
			break;
		tp_set_int(t, ARGS_ARG_SET_ID, (size_t)row, set);
		tp_set_str(t, ARGS_FLAT_KEY, (size_t)row, a->flat_key);
		tp_set_str(t, ARGS_KEY, (size_t)row, a->key);
		tp_set_str(t, ARGS_VALUE_TYPE, (size_t)row,
			   tp_db_str(imp->db, k_value_types[a->type]));
		switch (a->type) {
		case TE_ARG_STR:
		case TE_ARG_JSON:
			if (a->v.s) {
				tp_set_str(t, ARGS_STRING_VALUE, (size_t)row, a->v.s);
				tp_set_str(t, ARGS_DISPLAY_VALUE, (size_t)row, a->v.s);
			}
			break;
		case TE_ARG_REAL:
			tp_set_real(t, ARGS_REAL_VALUE, (size_t)row, a->v.d);
			break;
		case TE_ARG_NULL:
			break;
		default:
			tp_set_int(t, ARGS_INT_VALUE, (size_t)row, a->v.i);
			break;
		}
	}
	if (probe < 8)
		hmap_put(&te->arg_sets, h, first);
	return set;
}

/* ---------------------------------------------------------------- stacks ---- */

static struct te_stack *stack_for(struct tp_import *imp, int64_t track, bool create)
{
	struct tp_te *te = te_get(imp);
	uint64_t v;

	if (!te)
		return NULL;
	if (hmap_get(&te->stacks_by_track, (uint64_t)track, &v))
		return &te->stacks[v];
	if (!create)
		return NULL;
	if (te->n_stacks == te->cap_stacks) {
		size_t cap = te->cap_stacks ? 2 * te->cap_stacks : 64;
		struct te_stack *p = realloc(te->stacks, cap * sizeof(*p));

		if (!p)
			return NULL;
		te->stacks = p;
		te->cap_stacks = cap;
	}
	if (hmap_put(&te->stacks_by_track, (uint64_t)track, te->n_stacks) < 0)
		return NULL;
	memset(&te->stacks[te->n_stacks], 0, sizeof(te->stacks[0]));
	te->stacks[te->n_stacks].track = track;
	return &te->stacks[te->n_stacks++];
}

static uint32_t pool_get(struct tp_te *te)
{
	if (te->n_free)
		return te->free_args[--te->n_free];
	if (te->n_pool == te->cap_pool) {
		uint32_t cap = te->cap_pool ? 2 * te->cap_pool : 64;
		struct te_args *p = realloc(te->arg_pool, cap * sizeof(*p));

		if (!p)
			return NO_ARGS;
		te->arg_pool = p;
		te->cap_pool = cap;
	}
	memset(&te->arg_pool[te->n_pool], 0, sizeof(te->arg_pool[0]));
	return te->n_pool++;
}

static void pool_put(struct tp_te *te, uint32_t i)
{
	if (te->n_free == te->cap_free) {
		uint32_t cap = te->cap_free ? 2 * te->cap_free : 64;
		uint32_t *p = realloc(te->free_args, cap * sizeof(*p));

		if (!p) {
			te_args_fini(&te->arg_pool[i]);
			return;
		}
		te->free_args = p;
		te->cap_free = cap;
	}
	te->free_args[te->n_free++] = i;
}

/* Stores a frame's pending args on its slice. */
static void frame_commit(struct tp_import *imp, struct te_frame *f)
{
	struct tp_te *te = imp->te;
	int64_t set;

	if (f->args == NO_ARGS)
		return;
	/* Symbols may come later in the trace: such args wait for te_slice_finish(). */
	if (te_symbols_pending(te, &te->arg_pool[f->args]) &&
	    tp_array_grow((void **)&te->deferred, &te->cap_deferred, te->n_deferred + 1,
			  sizeof(*te->deferred), 16) == 0) {
		te->deferred[te->n_deferred++] = *f;
		f->args = NO_ARGS;
		return;
	}
	te_symbols_translate(imp, &te->arg_pool[f->args]);
	te_translate_args(imp, &te->arg_pool[f->args]);
	set = te_args_commit(imp, &te->arg_pool[f->args]);
	if (set != TP_NULL_INT)
		tp_set_int(&imp->db->slice, SLICE_ARG_SET_ID, f->row, set);
	pool_put(te, f->args);
	f->args = NO_ARGS;
}

static void pop(struct tp_import *imp, struct te_stack *st)
{
	frame_commit(imp, &st->f[st->n - 1]);
	st->n--;
}

static int push(struct te_stack *st, uint32_t row)
{
	if (st->n == st->cap) {
		uint32_t cap = st->cap ? 2 * st->cap : 4;
		struct te_frame *p = realloc(st->f, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		st->f = p;
		st->cap = cap;
	}
	st->f[st->n].row = row;
	st->f[st->n].args = NO_ARGS;
	st->n++;
	return 0;
}

/*
 * Pops the slices that ended before @ts; truncates open slices that
 * outlive their completed parent. Return: false if a slice of @dur at @ts
 * would partially overlap a completed one (it is dropped).
 */
static bool close_stack(struct tp_import *imp, struct te_stack *st, int64_t ts, int64_t dur)
{
	struct tp_table *s = &imp->db->slice;
	bool incomplete_child = false;
	int64_t i;

	for (i = (int64_t)st->n - 1; i >= 0; i--) {
		uint32_t row;
		int64_t start, d, end;

		if ((uint32_t)i >= st->n)
			continue;
		row = st->f[i].row;
		start = tp_get_int(s, SLICE_TS, row);
		d = tp_get_int(s, SLICE_DUR, row);
		end = end_of(start, d);
		if (d == PENDING) {
			incomplete_child = true;
			continue;
		}
		if (incomplete_child) {
			if (ts <= end)
				continue;
			/* Open children cannot outlive a parent that has ended. */
			tp_stat_add(imp, "misplaced_end_event", -1, 0, 1);
			while (st->n > (uint32_t)i + 1) {
				uint32_t c = st->f[st->n - 1].row;

				tp_set_int(s, SLICE_DUR, c,
					   tp_ts_sub(end, tp_get_int(s, SLICE_TS, c)));
				pop(imp, st);
			}
			pop(imp, st);
			incomplete_child = false;
			continue;
		}
		if (end < ts || (end == ts && !(d == 0 && dur == 0))) {
			pop(imp, st);
			continue;
		}
		if (dur == PENDING)
			continue;
		if (ts < end && end_of(ts, dur) > end) {
			tp_stat_add(imp, "slice_drop_overlapping_complete_event", -1, 0, 1);
			return false;
		}
	}
	return true;
}

static void close_pending_flows(struct tp_import *imp, int64_t track, uint32_t row);

static int64_t start_slice(struct tp_import *imp, int64_t ts, int64_t dur, int64_t track,
			   uint32_t cat, uint32_t name)
{
	struct tp_te *te = te_get(imp);
	struct tp_table *s = &imp->db->slice;
	struct te_stack *st;
	int64_t row;

	if (!te || track < 0)
		return -1;
	name = te_translate(&te->tr_slice_name, name);
	st = stack_for(imp, track, true);
	if (!st)
		return -1;
	if (!close_stack(imp, st, ts, dur))
		return -1;
	if (st->n >= MAX_DEPTH) {
		tp_stat_add(imp, "slice_max_depth_exceeded", -1, 0, 1);
		return -1;
	}
	row = tp_table_append(s);
	if (row < 0)
		return -1;
	tp_set_int(s, SLICE_TS, (size_t)row, ts);
	tp_set_int(s, SLICE_DUR, (size_t)row, dur);
	tp_set_int(s, SLICE_TRACK_ID, (size_t)row, track);
	if (cat)
		tp_set_str(s, SLICE_CATEGORY, (size_t)row, cat);
	if (name)
		tp_set_str(s, SLICE_NAME, (size_t)row, name);
	tp_set_int(s, SLICE_DEPTH, (size_t)row, st->n);
	if (st->n)
		tp_set_int(s, SLICE_PARENT_ID, (size_t)row, st->f[st->n - 1].row);
	if (push(st, (uint32_t)row) < 0)
		return -1;
	tp_bounds_add(imp->db, ts);
	if (dur > 0)
		tp_bounds_add(imp->db, end_of(ts, dur));
	close_pending_flows(imp, track, (uint32_t)row);
	return row;
}

int64_t tp_slice_begin(struct tp_import *imp, int64_t ts, int64_t track, uint32_t cat,
		       uint32_t name)
{
	return start_slice(imp, ts, PENDING, track, cat, name);
}

int64_t tp_slice_scoped(struct tp_import *imp, int64_t ts, int64_t dur, int64_t track, uint32_t cat,
			uint32_t name)
{
	if (dur < 0) {
		tp_stat_add(imp, "slice_negative_duration", -1, 0, 1);
		return -1;
	}
	return start_slice(imp, ts, dur, track, cat, name);
}

/* The open slice matching @cat and @name (0 matches anything), top first. */
static int64_t matching(struct tp_import *imp, const struct te_stack *st, uint32_t cat,
			uint32_t name)
{
	struct tp_table *s = &imp->db->slice;
	int64_t i;

	for (i = (int64_t)st->n - 1; i >= 0; i--) {
		uint32_t row = st->f[i].row, c, n;

		if (tp_get_int(s, SLICE_DUR, row) != PENDING)
			continue;
		c = tp_get_str(s, SLICE_CATEGORY, row);
		n = tp_get_str(s, SLICE_NAME, row);
		if (cat && c != cat)
			continue;
		if (name && n && name != n)
			continue;
		return i;
	}
	return -1;
}

int64_t te_slice_end_start(struct tp_import *imp, int64_t ts, int64_t track, uint32_t cat,
			   uint32_t name)
{
	struct tp_te *te = te_get(imp);
	struct tp_table *s = &imp->db->slice;
	struct te_stack *st;
	int64_t i;
	uint32_t row;

	if (!te || track < 0)
		return -1;
	name = te_translate(&te->tr_slice_name, name);
	st = stack_for(imp, track, false);
	if (!st || !close_stack(imp, st, ts, PENDING) || !st->n)
		return -1;
	i = matching(imp, st, cat, name);
	if (i < 0)
		return -1;
	row = st->f[i].row;
	tp_set_int(s, SLICE_DUR, row, tp_ts_sub(ts, tp_get_int(s, SLICE_TS, row)));
	tp_bounds_add(imp->db, ts);
	return row;
}

void te_slice_end_done(struct tp_import *imp, int64_t track, uint32_t row)
{
	struct te_stack *st = stack_for(imp, track, false);

	if (st && st->n && st->f[st->n - 1].row == row)
		pop(imp, st);
}

int64_t tp_slice_end(struct tp_import *imp, int64_t ts, int64_t track, uint32_t cat, uint32_t name)
{
	int64_t row = te_slice_end_start(imp, ts, track, cat, name);

	if (row >= 0)
		te_slice_end_done(imp, track, (uint32_t)row);
	return row;
}

struct te_args *te_slice_args(struct tp_import *imp, int64_t track, uint32_t row)
{
	struct tp_te *te = imp->te;
	struct te_stack *st = stack_for(imp, track, false);
	int64_t i;

	if (!st)
		return NULL;
	for (i = (int64_t)st->n - 1; i >= 0; i--) {
		struct te_frame *f = &st->f[i];

		if (f->row != row)
			continue;
		if (f->args == NO_ARGS)
			f->args = pool_get(te);
		return f->args == NO_ARGS ? NULL : &te->arg_pool[f->args];
	}
	return NULL;
}

/* The innermost slice on @track's stack, or -1. */
static int64_t topmost(struct tp_import *imp, int64_t track)
{
	struct te_stack *st = stack_for(imp, track, false);

	return st && st->n ? (int64_t)st->f[st->n - 1].row : -1;
}

/* ---------------------------------------------------------------- flows ---- */

static void insert_flow(struct tp_import *imp, uint64_t flow_id, uint32_t out, uint32_t in)
{
	struct tp_te *te = imp->te;
	struct tp_table *f = &imp->db->flow;
	int64_t row = tp_table_append(f);
	uint64_t v;

	if (row < 0)
		return;
	tp_set_int(f, FLOW_SLICE_OUT, (size_t)row, out);
	tp_set_int(f, FLOW_SLICE_IN, (size_t)row, in);
	tp_set_int(f, FLOW_TRACE_ID, (size_t)row, (int64_t)flow_id);
	if (hmap_get(&te->v1_flow_names, flow_id, &v)) {
		struct te_args a = {0};
		int64_t set;

		te_args_str(imp, &a, te->k.name, (uint32_t)(v >> 32));
		te_args_str(imp, &a, te->k.cat, (uint32_t)v);
		set = te_args_commit(imp, &a);
		te_args_fini(&a);
		if (set != TP_NULL_INT)
			tp_set_int(f, FLOW_ARG_SET_ID, (size_t)row, set);
	}
}

/*
 * Flow ids are per machine, as in Perfetto (a flow tracker per machine
 * context): the map's key is the id on the host and a bijective mix of id
 * and machine elsewhere, so two machines' ids never meet.
 */
static uint64_t flow_key(uint32_t machine, uint64_t flow_id)
{
	return machine ? hash_mix64(flow_id ^ ((uint64_t)machine * 0x9e3779b97f4a7c15ull)) : flow_id;
}

static void flow_begin(struct tp_import *imp, uint64_t key, uint32_t row)
{
	if (hmap_get(&imp->te->flows, key, NULL)) {
		tp_stat_add(imp, "flow_duplicate_id", -1, 0, 1);
		return;
	}
	hmap_put(&imp->te->flows, key, row);
}

/* Links the flow's last slice and @row, earlier slice first. */
static void flow_link(struct tp_import *imp, uint64_t key, uint64_t flow_id, uint32_t row,
		      bool step, bool close)
{
	struct tp_table *s = &imp->db->slice;
	uint64_t v;
	uint32_t old, out, in;

	if (!hmap_get(&imp->te->flows, key, &v)) {
		tp_stat_add(imp, step ? "flow_step_without_start" : "flow_end_without_start", -1, 0,
			    1);
		return;
	}
	old = (uint32_t)v;
	out = tp_get_int(s, SLICE_TS, old) > tp_get_int(s, SLICE_TS, row) ? row : old;
	in = out == row ? old : row;
	if (step)
		hmap_put(&imp->te->flows, key, row);
	else if (close)
		hmap_del(&imp->te->flows, key, NULL);
	insert_flow(imp, flow_id, out, in);
}

/* One v2 id of @row (a slice of @machine). */
static void flow_id_v2(struct tp_import *imp, uint32_t machine, uint64_t id, uint32_t row,
		       bool terminating)
{
	uint64_t k = flow_key(machine, id);

	if (terminating) {
		if (hmap_get(&imp->te->flows, k, NULL))
			flow_link(imp, k, id, row, false, true);
	} else if (!hmap_get(&imp->te->flows, k, NULL)) {
		flow_begin(imp, k, row);
	} else {
		flow_link(imp, k, id, row, true, false);
	}
}

/* Each id of repeated fixed64/varint field @id of @msg. */
static void each_id(struct tp_import *imp, uint32_t machine, const uint8_t *msg, size_t len,
		    uint32_t id, uint32_t row, bool terminating)
{
	struct pz_reader r;
	struct pz_field f;

	pz_reader_init(&r, msg, len);
	while (pz_reader_next(&r, &f) > 0) {
		struct pz_packed it;
		uint64_t v;

		if (f.id != id)
			continue;
		if (f.wire_type != PZ_WIRE_LEN) {
			flow_id_v2(imp, machine, f.value, row, terminating);
			continue;
		}
		pz_packed_init(&it, &f);
		while ((id == PB_TRACK_EVENT__FLOW_IDS || id == PB_TRACK_EVENT__TERMINATING_FLOW_IDS
				? pz_packed_next_fixed64(&it, &v)
				: pz_packed_next_varint(&it, &v)) > 0)
			flow_id_v2(imp, machine, v, row, terminating);
	}
}

static bool has_field(const uint8_t *msg, size_t len, uint32_t id)
{
	struct pz_reader r;
	struct pz_field f;

	pz_reader_init(&r, msg, len);
	while (pz_reader_next(&r, &f) > 0)
		if (f.id == id)
			return true;
	return false;
}

void te_flow_v2(struct tp_import *imp, uint32_t machine, uint32_t row, const uint8_t *event,
		size_t len)
{
	if (has_field(event, len, PB_TRACK_EVENT__FLOW_IDS))
		each_id(imp, machine, event, len, PB_TRACK_EVENT__FLOW_IDS, row, false);
	else
		each_id(imp, machine, event, len, PB_TRACK_EVENT__FLOW_IDS_OLD, row, false);
	if (has_field(event, len, PB_TRACK_EVENT__TERMINATING_FLOW_IDS))
		each_id(imp, machine, event, len, PB_TRACK_EVENT__TERMINATING_FLOW_IDS, row, true);
	else
		each_id(imp, machine, event, len, PB_TRACK_EVENT__TERMINATING_FLOW_IDS_OLD, row,
			true);
}

void te_flow_end(struct tp_import *imp, uint32_t machine, uint64_t flow_id, uint32_t row)
{
	uint64_t k = flow_key(machine, flow_id);

	if (hmap_get(&imp->te->flows, k, NULL))
		flow_link(imp, k, flow_id, row, false, true);
}

void te_flow_bind(struct tp_import *imp, uint32_t machine, uint32_t row, uint64_t bind_id,
		  uint64_t direction)
{
	uint64_t k = flow_key(machine, bind_id);

	switch (direction) {
	case PBE_TRACK_EVENT_LEGACY_EVENT_FLOW_DIRECTION__FLOW_OUT:
		flow_begin(imp, k, row);
		break;
	case PBE_TRACK_EVENT_LEGACY_EVENT_FLOW_DIRECTION__FLOW_INOUT:
		flow_link(imp, k, bind_id, row, true, false);
		break;
	case PBE_TRACK_EVENT_LEGACY_EVENT_FLOW_DIRECTION__FLOW_IN:
		flow_link(imp, k, bind_id, row, false, false);
		break;
	default:
		tp_stat_add(imp, "flow_without_direction", -1, 0, 1);
		break;
	}
}

void te_flow_v1(struct tp_import *imp, uint32_t machine, int64_t track, char phase,
		uint64_t source_id, uint32_t cat, uint32_t name, bool bind_enclosing)
{
	struct tp_te *te = imp->te;
	uint64_t k = tp_hash_mix(tp_hash_mix(tp_hash_mix(source_id, cat), name), machine);
	uint64_t flow_id, v;
	int64_t row;

	if (hmap_get(&te->v1_flows, k, &v)) {
		flow_id = v;
	} else {
		flow_id = te->next_v1_flow++;
		hmap_put(&te->v1_flows, k, flow_id);
		hmap_put(&te->v1_flow_names, flow_id, ((uint64_t)name << 32) | cat);
	}
	if (phase == 'f' && !bind_enclosing) {
		struct te_pending *p;

		if (!hmap_get(&te->pending_flows, (uint64_t)track, &v)) {
			if (te->n_pending == te->cap_pending) {
				size_t cap = te->cap_pending ? 2 * te->cap_pending : 16;
				struct te_pending *np = realloc(te->pending, cap * sizeof(*np));

				if (!np)
					return;
				te->pending = np;
				te->cap_pending = cap;
			}
			memset(&te->pending[te->n_pending], 0, sizeof(te->pending[0]));
			te->pending[te->n_pending].track = track;
			v = te->n_pending++;
			hmap_put(&te->pending_flows, (uint64_t)track, v);
		}
		p = &te->pending[v];
		if (p->n == p->cap) {
			uint32_t cap = p->cap ? 2 * p->cap : 4;
			uint64_t *ids;

			if (cap > 65536)
				return;
			ids = realloc(p->ids, cap * sizeof(*ids));
			if (!ids)
				return;
			p->ids = ids;
			p->cap = cap;
		}
		p->ids[p->n++] = flow_id;
		return;
	}
	row = topmost(imp, track);
	if (row < 0) {
		tp_stat_add(imp, "flow_no_enclosing_slice", -1, 0, 1);
		return;
	}
	/* v1 ids are numbered per (source id, category, name, machine): unique. */
	if (phase == 's')
		flow_begin(imp, flow_id, (uint32_t)row);
	else
		flow_link(imp, flow_id, flow_id, (uint32_t)row, phase == 't', false);
}

static void close_pending_flows(struct tp_import *imp, int64_t track, uint32_t row)
{
	struct tp_te *te = imp->te;
	struct te_pending *p;
	uint64_t v, out;
	uint32_t i;

	if (!te->n_pending || !hmap_get(&te->pending_flows, (uint64_t)track, &v))
		return;
	p = &te->pending[v];
	for (i = 0; i < p->n; i++)
		if (hmap_get(&te->flows, p->ids[i], &out))
			insert_flow(imp, p->ids[i], (uint32_t)out, row);
	p->n = 0;
}

/* ---------------------------------------------------------------- finish ---- */

/* Open slices keep dur -1, but their args are stored now. */
static void flush_stacks(struct tp_import *imp)
{
	struct tp_te *te = imp->te;
	size_t i;
	uint32_t j;

	for (i = 0; i < te->n_stacks; i++)
		for (j = 0; j < te->stacks[i].n; j++)
			frame_commit(imp, &te->stacks[i].f[j]);
}

/* Open slices' deferred args first, then all of them, as Perfetto orders them. */
static void commit_deferred(struct tp_import *imp)
{
	struct tp_te *te = imp->te;
	size_t i;
	uint32_t j;

	for (i = 0; i < te->n_stacks; i++)
		for (j = 0; j < te->stacks[i].n; j++)
			if (te->stacks[i].f[j].args != NO_ARGS &&
			    te_symbols_pending(te, &te->arg_pool[te->stacks[i].f[j].args]))
				frame_commit(imp, &te->stacks[i].f[j]);
	for (i = 0; i < te->n_deferred; i++) {
		struct te_frame *f = &te->deferred[i];
		int64_t set;

		te_symbols_translate(imp, &te->arg_pool[f->args]);
		te_translate_args(imp, &te->arg_pool[f->args]);
		set = te_args_commit(imp, &te->arg_pool[f->args]);
		if (set != TP_NULL_INT)
			tp_set_int(&imp->db->slice, SLICE_ARG_SET_ID, f->row, set);
		pool_put(te, f->args);
	}
	te->n_deferred = 0;
}

void te_slice_finish(struct tp_import *imp)
{
	if (!imp->te)
		return;
	commit_deferred(imp);
	flush_stacks(imp);
}

void te_slice_fini(struct tp_te *te)
{
	size_t i;

	for (i = 0; i < te->n_stacks; i++)
		free(te->stacks[i].f);
	free(te->stacks);
	hmap_fini(&te->stacks_by_track);
	for (i = 0; i < te->n_pool; i++)
		te_args_fini(&te->arg_pool[i]);
	free(te->arg_pool);
	free(te->free_args);
	free(te->deferred);
	hmap_fini(&te->arg_sets);
	hmap_fini(&te->flows);
	hmap_fini(&te->v1_flows);
	hmap_fini(&te->v1_flow_names);
	hmap_fini(&te->pending_flows);
	for (i = 0; i < te->n_pending; i++)
		free(te->pending[i].ids);
	free(te->pending);
}

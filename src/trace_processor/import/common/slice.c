// SPDX-License-Identifier: Apache-2.0
/*
 * slice.c - slices and their args, in parse (time) order, for every
 * importer. Each track has a stack of open slices; a slice's args collect
 * while it is on the stack (begin and end events both add to them) and
 * become one arg set when it leaves. An importer that must see slices
 * begin, rename them, hold their args back or rewrite them registers
 * hooks (TrackEvent does: translation tables, v1 flows, native symbols).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/import/common/common.h"

#define MAX_DEPTH 512
#define PENDING (-1)
#define NO_ARGS UINT32_MAX

struct frame {
	uint32_t row;  /* slice row */
	uint32_t args; /* index in the arg pool, or NO_ARGS */
};

struct stack {
	struct frame *f;
	uint32_t n, cap;
	int64_t track;
};

struct tp_slices {
	struct hmap stacks_by_track; /* track id -> index in stacks */
	struct stack *stacks;
	size_t n_stacks, cap_stacks;
	/* The pending args of open slices, reused once stored. */
	struct tp_argset *arg_pool;
	uint32_t n_pool, cap_pool;
	uint32_t *free_args;
	uint32_t n_free, cap_free;
	/* Frames whose args wait for the end of the trace (hooks.defer). */
	struct frame *deferred;
	size_t n_deferred, cap_deferred;
	struct tp_slice_hooks hooks;
};

int tp_slice_init(struct tp_import *imp)
{
	imp->slices = calloc(1, sizeof(*imp->slices));
	return imp->slices ? 0 : -ENOMEM;
}

void tp_slice_set_hooks(struct tp_import *imp, const struct tp_slice_hooks *hooks)
{
	imp->slices->hooks = *hooks;
}

/* Slice ends saturate: a nonsense duration must not wrap around in comparisons. */
static int64_t end_of(int64_t ts, int64_t dur)
{
	int64_t r;

	if (__builtin_add_overflow(ts, dur, &r))
		return dur < 0 ? INT64_MIN : INT64_MAX;
	return r;
}

static uint32_t hooked_name(struct tp_slices *sl, uint32_t name)
{
	return sl->hooks.name ? sl->hooks.name(sl->hooks.user, name) : name;
}

/* ---------------------------------------------------------------- stacks ---- */

static struct stack *stack_for(struct tp_slices *sl, int64_t track, bool create)
{
	uint64_t v;

	if (hmap_get(&sl->stacks_by_track, (uint64_t)track, &v))
		return &sl->stacks[v];
	if (!create)
		return NULL;
	if (sl->n_stacks == sl->cap_stacks) {
		size_t cap = sl->cap_stacks ? 2 * sl->cap_stacks : 64;
		struct stack *p = realloc(sl->stacks, cap * sizeof(*p));

		if (!p)
			return NULL;
		sl->stacks = p;
		sl->cap_stacks = cap;
	}
	if (hmap_put(&sl->stacks_by_track, (uint64_t)track, sl->n_stacks) < 0)
		return NULL;
	memset(&sl->stacks[sl->n_stacks], 0, sizeof(sl->stacks[0]));
	sl->stacks[sl->n_stacks].track = track;
	return &sl->stacks[sl->n_stacks++];
}

static uint32_t pool_get(struct tp_slices *sl)
{
	if (sl->n_free)
		return sl->free_args[--sl->n_free];
	if (sl->n_pool == sl->cap_pool) {
		uint32_t cap = sl->cap_pool ? 2 * sl->cap_pool : 64;
		struct tp_argset *p = realloc(sl->arg_pool, cap * sizeof(*p));

		if (!p)
			return NO_ARGS;
		sl->arg_pool = p;
		sl->cap_pool = cap;
	}
	memset(&sl->arg_pool[sl->n_pool], 0, sizeof(sl->arg_pool[0]));
	return sl->n_pool++;
}

static void pool_put(struct tp_slices *sl, uint32_t i)
{
	if (sl->n_free == sl->cap_free) {
		uint32_t cap = sl->cap_free ? 2 * sl->cap_free : 64;
		uint32_t *p = realloc(sl->free_args, cap * sizeof(*p));

		if (!p) {
			tp_argset_fini(&sl->arg_pool[i]);
			return;
		}
		sl->free_args = p;
		sl->cap_free = cap;
	}
	sl->free_args[sl->n_free++] = i;
}

/* Rewrites, stores and releases a frame's pending args (set on its slice). */
static void store_args(struct tp_import *imp, struct tp_slices *sl, const struct frame *f)
{
	int64_t set;

	if (sl->hooks.rewrite)
		sl->hooks.rewrite(sl->hooks.user, &sl->arg_pool[f->args]);
	set = tp_argset_commit(imp, &sl->arg_pool[f->args]);
	if (set != TP_NULL_INT)
		tp_set_int(&imp->db->slice, SLICE_ARG_SET_ID, f->row, set);
	pool_put(sl, f->args);
}

static bool defers(struct tp_slices *sl, uint32_t args)
{
	return sl->hooks.defer && sl->hooks.defer(sl->hooks.user, &sl->arg_pool[args]);
}

/* Stores a frame's pending args on its slice. */
static void frame_commit(struct tp_import *imp, struct frame *f)
{
	struct tp_slices *sl = imp->slices;

	if (f->args == NO_ARGS)
		return;
	/* Some args may only be complete at the end: they wait for tp_slice_finish(). */
	if (defers(sl, f->args) &&
	    tp_array_grow((void **)&sl->deferred, &sl->cap_deferred, sl->n_deferred + 1,
			  sizeof(*sl->deferred), 16) == 0) {
		sl->deferred[sl->n_deferred++] = *f;
		f->args = NO_ARGS;
		return;
	}
	store_args(imp, sl, f);
	f->args = NO_ARGS;
}

static void pop(struct tp_import *imp, struct stack *st)
{
	frame_commit(imp, &st->f[st->n - 1]);
	st->n--;
}

static int push(struct stack *st, uint32_t row)
{
	if (st->n == st->cap) {
		uint32_t cap = st->cap ? 2 * st->cap : 4;
		struct frame *p = realloc(st->f, cap * sizeof(*p));

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
static bool close_stack(struct tp_import *imp, struct stack *st, int64_t ts, int64_t dur)
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

/*
 * A slice deeper than MAX_DEPTH is dropped; like upstream's import log of it,
 * an arg set names the slice on top of the stack and the dropped one.
 */
static void log_max_depth(struct tp_import *imp, const struct stack *st, uint32_t name)
{
	struct tp_strings *strs = &imp->db->strings;
	struct tp_argset b = {0};
	uint32_t parent = tp_get_str(&imp->db->slice, SLICE_NAME, st->f[st->n - 1].row);

	tp_stat_add(imp, "slice_max_depth_exceeded", -1, 0, 1);
	tp_argset_str(imp, &b, tp_str_intern_c(strs, "parent_slice_name"), parent);
	tp_argset_str(imp, &b, tp_str_intern_c(strs, "current_slice_name"), name);
	tp_argset_commit(imp, &b);
	tp_argset_fini(&b);
}

static int64_t start_slice(struct tp_import *imp, int64_t ts, int64_t dur, int64_t track,
			   uint32_t cat, uint32_t name)
{
	struct tp_slices *sl = imp->slices;
	struct tp_table *s = &imp->db->slice;
	struct stack *st;
	int64_t row;

	if (track < 0)
		return -1;
	name = hooked_name(sl, name);
	st = stack_for(sl, track, true);
	if (!st)
		return -1;
	if (!close_stack(imp, st, ts, dur))
		return -1;
	if (st->n >= MAX_DEPTH) {
		log_max_depth(imp, st, name);
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
	if (sl->hooks.begun)
		sl->hooks.begun(sl->hooks.user, track, (uint32_t)row);
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
static int64_t matching(struct tp_import *imp, const struct stack *st, uint32_t cat,
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

int64_t tp_slice_end_start(struct tp_import *imp, int64_t ts, int64_t track, uint32_t cat,
			   uint32_t name)
{
	struct tp_slices *sl = imp->slices;
	struct tp_table *s = &imp->db->slice;
	struct stack *st;
	int64_t i;
	uint32_t row;

	if (track < 0)
		return -1;
	name = hooked_name(sl, name);
	st = stack_for(sl, track, false);
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

void tp_slice_end_done(struct tp_import *imp, int64_t track, uint32_t row)
{
	struct stack *st = stack_for(imp->slices, track, false);

	if (st && st->n && st->f[st->n - 1].row == row)
		pop(imp, st);
}

int64_t tp_slice_end(struct tp_import *imp, int64_t ts, int64_t track, uint32_t cat, uint32_t name)
{
	int64_t row = tp_slice_end_start(imp, ts, track, cat, name);

	if (row >= 0)
		tp_slice_end_done(imp, track, (uint32_t)row);
	return row;
}

struct tp_argset *tp_slice_args(struct tp_import *imp, int64_t track, uint32_t row)
{
	struct tp_slices *sl = imp->slices;
	struct stack *st = stack_for(sl, track, false);
	int64_t i;

	if (!st)
		return NULL;
	for (i = (int64_t)st->n - 1; i >= 0; i--) {
		struct frame *f = &st->f[i];

		if (f->row != row)
			continue;
		if (f->args == NO_ARGS)
			f->args = pool_get(sl);
		return f->args == NO_ARGS ? NULL : &sl->arg_pool[f->args];
	}
	return NULL;
}

int64_t tp_slice_top(struct tp_import *imp, int64_t track)
{
	struct stack *st = stack_for(imp->slices, track, false);

	return st && st->n ? (int64_t)st->f[st->n - 1].row : -1;
}

/* ---------------------------------------------------------------- finish ---- */

/*
 * The stacks in the order Perfetto walks them at the end (its hash map's
 * slot order, track_order.c); creation order if memory runs out. Each
 * stack's own slices go bottom to top.
 */
static uint32_t *stack_order(struct tp_slices *sl)
{
	uint32_t *keys, *order;
	size_t i;

	keys = malloc((sl->n_stacks ? sl->n_stacks : 1) * sizeof(*keys));
	order = malloc((sl->n_stacks ? sl->n_stacks : 1) * sizeof(*order));
	if (keys && order) {
		for (i = 0; i < sl->n_stacks; i++)
			keys[i] = (uint32_t)sl->stacks[i].track;
		if (tp_track_map_order(keys, sl->n_stacks, order) == 0) {
			free(keys);
			return order;
		}
	}
	free(keys);
	if (order)
		for (i = 0; i < sl->n_stacks; i++)
			order[i] = (uint32_t)i;
	return order;
}

static struct stack *nth_stack(struct tp_slices *sl, const uint32_t *order, size_t i)
{
	return &sl->stacks[order ? order[i] : i];
}

/* Open slices keep dur -1, but their args are stored now. */
static void flush_stacks(struct tp_import *imp, const uint32_t *order)
{
	struct tp_slices *sl = imp->slices;
	size_t i;
	uint32_t j;

	for (i = 0; i < sl->n_stacks; i++) {
		struct stack *st = nth_stack(sl, order, i);

		for (j = 0; j < st->n; j++)
			frame_commit(imp, &st->f[j]);
	}
}

/* Open slices' deferred args first, then all of them, as Perfetto orders them. */
static void commit_deferred(struct tp_import *imp, const uint32_t *order)
{
	struct tp_slices *sl = imp->slices;
	size_t i;
	uint32_t j;

	for (i = 0; i < sl->n_stacks; i++) {
		struct stack *st = nth_stack(sl, order, i);

		for (j = 0; j < st->n; j++)
			if (st->f[j].args != NO_ARGS && defers(sl, st->f[j].args))
				frame_commit(imp, &st->f[j]);
	}
	for (i = 0; i < sl->n_deferred; i++)
		store_args(imp, sl, &sl->deferred[i]);
	sl->n_deferred = 0;
}

void tp_slice_finish(struct tp_import *imp)
{
	uint32_t *order = stack_order(imp->slices);

	commit_deferred(imp, order);
	flush_stacks(imp, order);
	free(order);
}

void tp_slice_fini(struct tp_import *imp)
{
	struct tp_slices *sl = imp->slices;
	size_t i;

	if (!sl)
		return;
	for (i = 0; i < sl->n_stacks; i++)
		free(sl->stacks[i].f);
	free(sl->stacks);
	hmap_fini(&sl->stacks_by_track);
	for (i = 0; i < sl->n_pool; i++)
		tp_argset_fini(&sl->arg_pool[i]);
	free(sl->arg_pool);
	free(sl->free_args);
	free(sl->deferred);
	free(sl);
	imp->slices = NULL;
}

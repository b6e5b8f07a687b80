// SPDX-License-Identifier: Apache-2.0
/*
 * state.c - values of state tracks (the state table), for every importer.
 * A state track holds at most one value at a time: a new value ends the
 * one before it (its dur becomes the gap), the same value again continues
 * it (and adds to its args), no value ends it. A value still held at the
 * end of the trace keeps dur -1. The args of a value collect while it
 * holds and become one arg set when it ends.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hmap.h"
#include "trace_processor/import/common/common.h"

/* The value a track holds now. */
struct held {
	int64_t track;
	uint32_t row;   /* state row */
	uint32_t value; /* string id */
	struct tp_argset args;
};

struct tp_states {
	struct hmap by_track; /* track id -> index in held */
	struct held *held;
	size_t n_held, cap_held;
};

int tp_state_init(struct tp_import *imp)
{
	imp->states = calloc(1, sizeof(*imp->states));
	return imp->states ? 0 : -ENOMEM;
}

static void store_args(struct tp_import *imp, struct held *h)
{
	int64_t set = tp_argset_commit(imp, &h->args);

	if (set != TP_NULL_INT)
		tp_set_int(&imp->db->state, STATE_ARG_SET_ID, h->row, set);
}

/* Ends the value held at index @i at @ts (its args are stored now). */
static void end_held(struct tp_import *imp, size_t i, int64_t ts)
{
	struct tp_states *st = imp->states;
	struct held *h = &st->held[i];
	struct tp_table *t = &imp->db->state;

	tp_set_int(t, STATE_DUR, h->row, tp_ts_sub(ts, tp_get_int(t, STATE_TS, h->row)));
	store_args(imp, h);
	tp_argset_fini(&h->args);
	hmap_del(&st->by_track, (uint64_t)h->track, NULL);
	if (i + 1 < st->n_held) {
		st->held[i] = st->held[st->n_held - 1];
		hmap_put(&st->by_track, (uint64_t)st->held[i].track, i);
	}
	st->n_held--;
}

struct tp_argset *tp_state_update(struct tp_import *imp, int64_t ts, int64_t track,
				  uint32_t value, uint32_t category)
{
	struct tp_states *st = imp->states;
	struct tp_table *t = &imp->db->state;
	struct held *h;
	uint64_t i;
	int64_t row;

	if (track < 0)
		return NULL;
	if (hmap_get(&st->by_track, (uint64_t)track, &i)) {
		if (value && st->held[i].value == value)
			return &st->held[i].args;
		end_held(imp, (size_t)i, ts);
	}
	if (!value)
		return NULL;
	if (tp_array_grow((void **)&st->held, &st->cap_held, st->n_held + 1, sizeof(*st->held),
			  16) < 0)
		return NULL;
	row = tp_table_append(t);
	if (row < 0)
		return NULL;
	tp_set_int(t, STATE_TS, (size_t)row, ts);
	tp_set_int(t, STATE_DUR, (size_t)row, -1);
	tp_set_int(t, STATE_TRACK_ID, (size_t)row, track);
	if (category)
		tp_set_str(t, STATE_CATEGORY, (size_t)row, category);
	tp_set_str(t, STATE_VALUE, (size_t)row, value);
	if (hmap_put(&st->by_track, (uint64_t)track, st->n_held) < 0)
		return NULL;
	h = &st->held[st->n_held++];
	memset(h, 0, sizeof(*h));
	h->track = track;
	h->row = (uint32_t)row;
	h->value = value;
	return &h->args;
}

void tp_state_finish(struct tp_import *imp)
{
	struct tp_states *st = imp->states;
	size_t i;

	if (!st)
		return;
	/* Values still held keep dur -1; their args are stored now. */
	for (i = 0; i < st->n_held; i++)
		store_args(imp, &st->held[i]);
}

void tp_state_fini(struct tp_import *imp)
{
	struct tp_states *st = imp->states;
	size_t i;

	if (!st)
		return;
	for (i = 0; i < st->n_held; i++)
		tp_argset_fini(&st->held[i].args);
	free(st->held);
	hmap_fini(&st->by_track);
	free(st);
	imp->states = NULL;
}

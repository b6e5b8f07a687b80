// SPDX-License-Identifier: Apache-2.0
/*
 * tp_track_dims.c - tracks identified, as in Perfetto, by a type and a list
 * of dimensions (wakelock name, GPU context, energy consumer, ...), which
 * become the track's dimension arg set. Used by the small event parsers;
 * one hash lookup per event.
 */
#include <string.h>

#include "base/hash.h"
#include "trace_processor/tp_int.h"

static uint64_t identity(const char *type, uint32_t machine, const struct tp_dim *dims,
			 size_t n, uint32_t idx)
{
	uint64_t h = fnv1a64(type, strlen(type) + 1);
	size_t i;

	h = fnv1a64_update(h, &machine, sizeof(machine));
	h = fnv1a64_update(h, &idx, sizeof(idx));
	for (i = 0; i < n; i++) {
		h = fnv1a64_update(h, dims[i].key, strlen(dims[i].key) + 1);
		h = fnv1a64_update(h, &dims[i].v, sizeof(dims[i].v));
	}
	return h;
}

int64_t tp_track_dims(struct tp_import *imp, const char *type, uint32_t name, bool is_counter,
		      uint32_t machine, const struct tp_dim *dims, size_t n_dims, uint32_t idx)
{
	struct tp_table *t = &imp->db->track;
	uint64_t k = identity(type, machine, dims, n_dims, idx), v;
	struct tp_argset args = {0};
	int64_t row, set;
	size_t i;

	if (hmap_get(&imp->dim_tracks, k, &v))
		return (int64_t)v;
	row = tp_table_append(t);
	if (row < 0)
		return -1;
	if (name)
		tp_set_str(t, TRACK_NAME, (size_t)row, name);
	tp_set_str(t, TRACK_TYPE, (size_t)row, tp_db_str(imp->db, type));
	tp_set_int(t, TRACK_IS_COUNTER, (size_t)row, is_counter);
	tp_set_int(t, TRACK_MACHINE_ID, (size_t)row, machine);
	for (i = 0; i < n_dims; i++) {
		uint32_t key = tp_db_str(imp->db, dims[i].key);

		if (dims[i].kind == TP_DIM_STR)
			tp_argset_str(imp, &args, key, (uint32_t)dims[i].v);
		else if (dims[i].kind == TP_DIM_UINT)
			tp_argset_uint(imp, &args, key, (uint64_t)dims[i].v);
		else
			tp_argset_int(imp, &args, key, dims[i].v);
	}
	set = tp_argset_commit(imp, &args);
	tp_argset_fini(&args);
	if (set != TP_NULL_INT)
		tp_set_int(t, TRACK_DIMENSION_ARG_SET_ID, (size_t)row, set);
	if (hmap_put(&imp->dim_tracks, k, (uint64_t)row) < 0)
		return -1;
	return row;
}

void tp_battery_stats_counter(struct tp_import *imp, uint32_t machine, int64_t ts,
			      const char *name, size_t len, double value)
{
	uint32_t key = tp_str_intern(&imp->db->strings, name, len);
	struct tp_dim dim = {"counter_key", TP_DIM_STR, key};

	tp_counter_add(imp, ts, tp_track_dims(imp, "battery_stats", key, true, machine, &dim, 1, 0),
		       value);
}

// SPDX-License-Identifier: Apache-2.0
/*
 * entity_state.c - EntityStateResidency packets (Android power HAL):
 * each (entity, state) named by a power_entity_state becomes the counter
 * track "Entity residency: <entity> is <state>" holding the cumulative time
 * in that state (ms). Called by the read layer per packet, in time order.
 */
#include <stdio.h>
#include <string.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/android/android_int.h"

static uint64_t state_key(uint64_t entity, uint64_t state)
{
	return (uint64_t)(uint32_t)entity << 32 | (uint32_t)state;
}

/* Remembers the names of one (entity, state); the first naming wins. */
static void descriptor(struct tp_import *imp, const struct pz_field *f)
{
	struct pz_field d[5];
	uint32_t entity, state;
	uint64_t k;

	if (f->wire_type != PZ_WIRE_LEN || pz_decode_table(f->data, f->size, d, 5) != PZ_OK ||
	    !d[PB_ENTITY_STATE_RESIDENCY_POWER_ENTITY_STATE__ENTITY_INDEX].id ||
	    !d[PB_ENTITY_STATE_RESIDENCY_POWER_ENTITY_STATE__STATE_INDEX].id) {
		tp_stat_add(imp, "energy_descriptor_invalid", -1, 0, 1);
		return;
	}
	k = state_key(d[PB_ENTITY_STATE_RESIDENCY_POWER_ENTITY_STATE__ENTITY_INDEX].value,
		      d[PB_ENTITY_STATE_RESIDENCY_POWER_ENTITY_STATE__STATE_INDEX].value);
	if (hmap_get(&imp->android->entity_states, k, NULL))
		return;
	entity = d[PB_ENTITY_STATE_RESIDENCY_POWER_ENTITY_STATE__ENTITY_NAME].wire_type == PZ_WIRE_LEN
			 ? tp_str_intern(&imp->db->strings,
					 (const char *)d[PB_ENTITY_STATE_RESIDENCY_POWER_ENTITY_STATE__ENTITY_NAME].data,
					 d[PB_ENTITY_STATE_RESIDENCY_POWER_ENTITY_STATE__ENTITY_NAME].size)
			 : 0;
	state = d[PB_ENTITY_STATE_RESIDENCY_POWER_ENTITY_STATE__STATE_NAME].wire_type == PZ_WIRE_LEN
			? tp_str_intern(&imp->db->strings,
					(const char *)d[PB_ENTITY_STATE_RESIDENCY_POWER_ENTITY_STATE__STATE_NAME].data,
					d[PB_ENTITY_STATE_RESIDENCY_POWER_ENTITY_STATE__STATE_NAME].size)
			: 0;
	hmap_put(&imp->android->entity_states, k, (uint64_t)entity << 32 | state);
}

static const char *str(struct tp_import *imp, uint32_t id)
{
	const char *s = id ? tp_str_get(&imp->db->strings, id) : NULL;

	return s ? s : "";
}

/* The counter track of a named (entity, state), with its dimension args. */
static int64_t state_track(struct tp_import *imp, uint32_t machine, uint64_t names)
{
	struct tp_table *t = &imp->db->track;
	uint32_t entity = (uint32_t)(names >> 32), state = (uint32_t)names;
	char name[512];
	int64_t track, set;

	snprintf(name, sizeof(name), "Entity residency: %s is %s",
		 str(imp, entity), str(imp, state));
	track = tp_track_global_counter(imp, name, machine);
	if (track < 0 || tp_get_int(t, TRACK_DIMENSION_ARG_SET_ID, (size_t)track) != TP_NULL_INT)
		return track;
	{
		struct tp_argset dims = {0};

		tp_argset_str(imp, &dims, tp_db_str(imp->db, "entity_name"), entity);
		tp_argset_str(imp, &dims, tp_db_str(imp->db, "state_name"), state);
		set = tp_argset_commit(imp, &dims);
		tp_argset_fini(&dims);
	}
	tp_set_str(t, TRACK_TYPE, (size_t)track, tp_db_str(imp->db, "entity_state"));
	if (set != TP_NULL_INT)
		tp_set_int(t, TRACK_DIMENSION_ARG_SET_ID, (size_t)track, set);
	return track;
}

void tp_entity_state_residency(struct tp_import *imp, const struct tp_event *ev,
			       const uint8_t *data, size_t len)
{
	struct pz_reader r;
	struct pz_field f;
	bool any = false;

	/* Names first: a packet may name the states it then reports. */
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id == PB_ENTITY_STATE_RESIDENCY__POWER_ENTITY_STATE)
			descriptor(imp, &f);
		any |= f.id == PB_ENTITY_STATE_RESIDENCY__RESIDENCY;
	}
	if (!any) {
		tp_stat_add(imp, "entity_state_residency_invalid", -1, ev->machine, 1);
		return;
	}
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		struct pz_field s[4];
		uint64_t names;

		if (f.id != PB_ENTITY_STATE_RESIDENCY__RESIDENCY || f.wire_type != PZ_WIRE_LEN ||
		    pz_decode_table(f.data, f.size, s, 4) != PZ_OK)
			continue;
		if (!hmap_get(&imp->android->entity_states,
			      state_key(s[PB_ENTITY_STATE_RESIDENCY_STATE_RESIDENCY__ENTITY_INDEX].value,
					s[PB_ENTITY_STATE_RESIDENCY_STATE_RESIDENCY__STATE_INDEX].value),
			      &names)) {
			/* Like Perfetto, an unnamed state ends the packet. */
			tp_stat_add(imp, "entity_state_residency_lookup_failed", -1, ev->machine, 1);
			return;
		}
		tp_counter_add(imp, ev->ts, state_track(imp, ev->machine, names),
			       (double)s[PB_ENTITY_STATE_RESIDENCY_STATE_RESIDENCY__TOTAL_TIME_IN_STATE_MS].value);
	}
}

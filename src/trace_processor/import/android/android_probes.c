// SPDX-License-Identifier: Apache-2.0
/*
 * android_probes.c - Android power packets: energy estimation breakdowns
 * (a descriptor naming the consumers, then per-consumer and per-uid energy
 * counters) and system property snapshots (debug.tracing.battery_stats.*
 * and screen_state become global counters, battery_stats.* the same
 * tracks as atrace's). Called by the read layer in time order; owns the
 * Android importer's state.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/android/android_int.h"

#define SYSPROP_PREFIX "debug.tracing."

/* The global counter atrace's ScreenState and the screen_state property feed. */
static int64_t screen_state_track(struct tp_import *imp, uint32_t machine)
{
	return tp_track_dims(imp, "screen_state", tp_db_str(imp->db, "ScreenState"), true, machine,
			     NULL, 0, 0);
}

int tp_android_init(struct tp_import *imp)
{
	imp->android = calloc(1, sizeof(*imp->android));
	return imp->android ? 0 : -ENOMEM;
}

void tp_android_fini(struct tp_import *imp)
{
	if (!imp->android)
		return;
	hmap_fini(&imp->android->energy_consumers);
	hmap_fini(&imp->android->energy_ordinals);
	hmap_fini(&imp->android->entity_states);
	free(imp->android->rails);
	free(imp->android->rail_packets);
	free(imp->android);
	imp->android = NULL;
}

static uint32_t bytes_str(struct tp_import *imp, const struct pz_field *f)
{
	if (!f->id || f->wire_type != PZ_WIRE_LEN)
		return tp_str_intern(&imp->db->strings, "", 0);
	return tp_str_intern(&imp->db->strings, (const char *)f->data, f->size);
}

static void energy_descriptor(struct tp_import *imp, const uint8_t *data, size_t len)
{
	struct pz_reader r;
	struct pz_field f;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		struct pz_field c[5];

		if (f.id != PB_ANDROID_ENERGY_CONSUMER_DESCRIPTOR__ENERGY_CONSUMERS ||
		    f.wire_type != PZ_WIRE_LEN)
			continue;
		if (pz_decode_table(f.data, f.size, c, 5) != PZ_OK ||
		    !c[PB_ANDROID_ENERGY_CONSUMER__ENERGY_CONSUMER_ID].id) {
			tp_stat_add(imp, "energy_descriptor_invalid", -1, 0, 1);
			continue;
		}
		hmap_put(&imp->android->energy_consumers,
			 (uint32_t)c[PB_ANDROID_ENERGY_CONSUMER__ENERGY_CONSUMER_ID].value,
			 (uint64_t)bytes_str(imp, &c[PB_ANDROID_ENERGY_CONSUMER__NAME]) << 32 |
				 bytes_str(imp, &c[PB_ANDROID_ENERGY_CONSUMER__TYPE]));
		hmap_put(&imp->android->energy_ordinals,
			 (uint32_t)c[PB_ANDROID_ENERGY_CONSUMER__ENERGY_CONSUMER_ID].value,
			 (uint64_t)(int64_t)(int32_t)c[PB_ANDROID_ENERGY_CONSUMER__ORDINAL].value);
	}
}

static void per_uid(struct tp_import *imp, const struct tp_event *ev, uint32_t consumer,
		    uint32_t name, const struct pz_field *f)
{
	struct pz_field u[3];
	struct tp_dim dims[2] = {{"energy_consumer_id", TP_DIM_UINT, consumer},
				 {"uid", TP_DIM_UINT, 0}};

	if (f->wire_type != PZ_WIRE_LEN || pz_decode_table(f->data, f->size, u, 3) != PZ_OK ||
	    !u[PB_ANDROID_ENERGY_ESTIMATION_BREAKDOWN_ENERGY_UID_BREAKDOWN__UID].id ||
	    !u[PB_ANDROID_ENERGY_ESTIMATION_BREAKDOWN_ENERGY_UID_BREAKDOWN__ENERGY_UWS].id) {
		tp_stat_add(imp, "energy_uid_breakdown_missing_values", -1, ev->machine, 1);
		return;
	}
	dims[1].v = (uint32_t)u[PB_ANDROID_ENERGY_ESTIMATION_BREAKDOWN_ENERGY_UID_BREAKDOWN__UID].value;
	tp_counter_add(imp, ev->ts,
		       tp_track_dims(imp, "android_energy_estimation_breakdown_per_uid", name, true,
				     ev->machine, dims, 2, 0),
		       (double)(int64_t)u[PB_ANDROID_ENERGY_ESTIMATION_BREAKDOWN_ENERGY_UID_BREAKDOWN__ENERGY_UWS].value);
}

void tp_android_energy_breakdown(struct tp_import *imp, const struct tp_event *ev,
				 const uint8_t *data, size_t len)
{
	struct pz_field f[5];
	struct pz_reader r;
	struct pz_field u;
	struct tp_dim dim = {"energy_consumer_id", TP_DIM_UINT, 0};
	uint64_t names;
	uint32_t consumer, name;
	int64_t track;

	if (pz_decode_table(data, len, f, 5) != PZ_OK)
		return;
	/* A descriptor packet only names consumers (Perfetto reads it at tokenization). */
	if (f[PB_ANDROID_ENERGY_ESTIMATION_BREAKDOWN__ENERGY_CONSUMER_DESCRIPTOR].id) {
		energy_descriptor(imp, f[PB_ANDROID_ENERGY_ESTIMATION_BREAKDOWN__ENERGY_CONSUMER_DESCRIPTOR].data,
				  f[PB_ANDROID_ENERGY_ESTIMATION_BREAKDOWN__ENERGY_CONSUMER_DESCRIPTOR].size);
		return;
	}
	consumer = (uint32_t)f[PB_ANDROID_ENERGY_ESTIMATION_BREAKDOWN__ENERGY_CONSUMER_ID].value;
	if (!f[PB_ANDROID_ENERGY_ESTIMATION_BREAKDOWN__ENERGY_CONSUMER_ID].id ||
	    !f[PB_ANDROID_ENERGY_ESTIMATION_BREAKDOWN__ENERGY_UWS].id ||
	    !hmap_get(&imp->android->energy_consumers, consumer, &names)) {
		tp_stat_add(imp, "energy_breakdown_missing_values", -1, ev->machine, 1);
		return;
	}
	name = (uint32_t)(names >> 32);
	dim.v = consumer;
	track = tp_track_dims(imp, "android_energy_estimation_breakdown", name, true, ev->machine,
			      &dim, 1, 0);
	/* A new track gets the consumer's type and ordinal as its source args. */
	if (track >= 0 &&
	    tp_get_int(&imp->db->track, TRACK_SOURCE_ARG_SET_ID, (size_t)track) == TP_NULL_INT) {
		struct tp_argset src = {0};
		uint64_t ordinal = 0;
		int64_t set;

		hmap_get(&imp->android->energy_ordinals, consumer, &ordinal);
		tp_argset_str(imp, &src, tp_db_str(imp->db, "consumer_type"), (uint32_t)names);
		tp_argset_int(imp, &src, tp_db_str(imp->db, "ordinal"), (int64_t)ordinal);
		set = tp_argset_commit(imp, &src);
		tp_argset_fini(&src);
		if (set != TP_NULL_INT)
			tp_set_int(&imp->db->track, TRACK_SOURCE_ARG_SET_ID, (size_t)track, set);
	}
	tp_counter_add(imp, ev->ts, track,
		       (double)(int64_t)f[PB_ANDROID_ENERGY_ESTIMATION_BREAKDOWN__ENERGY_UWS].value);
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &u) > 0)
		if (u.id == PB_ANDROID_ENERGY_ESTIMATION_BREAKDOWN__PER_UID_BREAKDOWN)
			per_uid(imp, ev, consumer, name, &u);
}

/* A whole-string int32, as system properties hold them; false otherwise. */
static bool parse_i32(const struct pz_field *f, int64_t *out)
{
	char tmp[16], *end;
	long long v;

	if (!f->id || f->wire_type != PZ_WIRE_LEN || f->size == 0 || f->size >= sizeof(tmp))
		return false;
	memcpy(tmp, f->data, f->size);
	tmp[f->size] = '\0';
	v = strtoll(tmp, &end, 10);
	if (*end != '\0' || v < INT32_MIN || v > INT32_MAX)
		return false;
	*out = v;
	return true;
}

static void property(struct tp_import *imp, const struct tp_event *ev, const struct pz_field *p)
{
	static const size_t plen = sizeof(SYSPROP_PREFIX) - 1;
	struct pz_field kv[3];
	const char *name;
	size_t nlen;
	int64_t v;

	if (p->wire_type != PZ_WIRE_LEN || pz_decode_table(p->data, p->size, kv, 3) != PZ_OK ||
	    kv[PB_ANDROID_SYSTEM_PROPERTY_PROPERTY_VALUE__NAME].wire_type != PZ_WIRE_LEN ||
	    !parse_i32(&kv[PB_ANDROID_SYSTEM_PROPERTY_PROPERTY_VALUE__VALUE], &v))
		return;
	name = (const char *)kv[PB_ANDROID_SYSTEM_PROPERTY_PROPERTY_VALUE__NAME].data;
	nlen = kv[PB_ANDROID_SYSTEM_PROPERTY_PROPERTY_VALUE__NAME].size;
	if (nlen <= plen || memcmp(name, SYSPROP_PREFIX, plen) != 0)
		return;
	name += plen;
	nlen -= plen;
	if (nlen == 12 && !memcmp(name, "screen_state", 12)) {
		tp_counter_add(imp, ev->ts, screen_state_track(imp, ev->machine), (double)v);
	} else if (nlen > 14 && !memcmp(name, "battery_stats.", 14)) {
		/* The same track as atrace's battery_stats.* counters. */
		tp_battery_stats_counter(imp, ev->machine, ev->ts, name, nlen, (double)v);
	}
}

void tp_android_initial_display_state(struct tp_import *imp, const struct tp_event *ev,
				      const uint8_t *data, size_t len)
{
	struct pz_reader r;
	struct pz_field f;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0)
		if (f.id == PB_INITIAL_DISPLAY_STATE__DISPLAY_STATE && f.wire_type == PZ_WIRE_VARINT)
			tp_counter_add(imp, ev->ts, screen_state_track(imp, ev->machine),
				       (double)(int32_t)f.value);
}

void tp_android_system_property(struct tp_import *imp, const struct tp_event *ev,
				const uint8_t *data, size_t len)
{
	struct pz_reader r;
	struct pz_field f;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0)
		if (f.id == PB_ANDROID_SYSTEM_PROPERTY__VALUES)
			property(imp, ev, &f);
}

/* One PackageInfo: a package_list row, unless a row of that name exists. */
static void package(struct tp_import *imp, const uint8_t *data, size_t len)
{
	struct pz_field p[PB_PACKAGES_LIST_PACKAGE_INFO__VERSION_CODE + 1];
	const struct pz_field *name = &p[PB_PACKAGES_LIST_PACKAGE_INFO__NAME];
	struct tp_table *t = &imp->db->package_list;
	uint32_t name_id;
	int64_t row;
	size_t i;

	if (pz_decode_table(data, len, p, PB_PACKAGES_LIST_PACKAGE_INFO__VERSION_CODE + 1) != PZ_OK)
		return;
	name_id = name->id && name->wire_type == PZ_WIRE_LEN
			  ? tp_str_intern(&imp->db->strings, (const char *)name->data, name->size)
			  : tp_str_intern(&imp->db->strings, "", 0);
	for (i = 0; i < t->n_rows; i++)
		if (tp_get_str(t, PKG_PACKAGE_NAME, i) == name_id)
			return;
	row = tp_table_append(t);
	if (row < 0)
		return;
	tp_set_str(t, PKG_PACKAGE_NAME, (size_t)row, name_id);
	tp_set_int(t, PKG_UID, (size_t)row, (int64_t)p[PB_PACKAGES_LIST_PACKAGE_INFO__UID].value);
	tp_set_int(t, PKG_DEBUGGABLE, (size_t)row,
		   p[PB_PACKAGES_LIST_PACKAGE_INFO__DEBUGGABLE].value != 0);
	tp_set_int(t, PKG_PROFILEABLE_FROM_SHELL, (size_t)row,
		   p[PB_PACKAGES_LIST_PACKAGE_INFO__PROFILEABLE_FROM_SHELL].value != 0);
	tp_set_int(t, PKG_VERSION_CODE, (size_t)row,
		   (int64_t)p[PB_PACKAGES_LIST_PACKAGE_INFO__VERSION_CODE].value);
}

void tp_android_packages_list(struct tp_import *imp, const struct tp_event *ev,
			      const uint8_t *data, size_t len)
{
	struct pz_reader r;
	struct pz_field f;
	bool parse_error = false, read_error = false;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id == PB_PACKAGES_LIST__PACKAGES && f.wire_type == PZ_WIRE_LEN)
			package(imp, f.data, f.size);
		else if (f.id == PB_PACKAGES_LIST__PARSE_ERROR && f.wire_type == PZ_WIRE_VARINT)
			parse_error = f.value != 0;
		else if (f.id == PB_PACKAGES_LIST__READ_ERROR && f.wire_type == PZ_WIRE_VARINT)
			read_error = f.value != 0;
	}
	tp_stat_set(imp, "packages_list_has_read_errors", -1, ev->machine, read_error);
	tp_stat_set(imp, "packages_list_has_parse_errors", -1, ev->machine, parse_error);
}

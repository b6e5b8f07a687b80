// SPDX-License-Identifier: Apache-2.0
/*
 * power_rails.c - PowerRails packets (on-device power monitors). At
 * tokenization, as Perfetto does, each rail descriptor makes the counter
 * track of its (machine, rail name, session): "power.rails.<friendly>" for rails
 * of a known Pixel name, else "power.<rail>_uws", with the raw name and
 * subsystem as the track's source args; each energy reading then becomes
 * an event of its own, sorted at its reading time (timestamp_ms, boot
 * time) and parsed into one counter row with the packet's time as its
 * packet_ts arg.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/android/android_int.h"

#define MAX_RAIL_INDEX 256

/* Suffixes of Pixel ODPM rail names and the name their track gets. */
static const struct {
	const char *suffix;
	const char *friendly;
} known_rails[] = {
	{"M_VDD_CPUCL0", "cpu.little"},
	{"M_VDD_CPUCL0_M", "cpu.little.mem"},
	{"M_VDD_CPUCL1", "cpu.mid"},
	{"M_VDD_CPUCL1_M", "cpu.mid.mem"},
	{"M_VDD_CPUCL2", "cpu.big"},
	{"M_VDD_INT", "system.fabric"},
	{"M_VDD_TPU", "tpu"},
	{"VSYS_PWR_DISP", "display"},
	{"VSYS_PWR_DISPLAY", "display"},
	{"M_DISP", "ldo.main.a.display"},
	{"VSYS_PWR_MODEM", "modem"},
	{"M_VDD_MIF", "memory.interface"},
	{"VSYS_PWR_WLAN_BT", "wifi.bt"},
	{"VSYS_PWR_MMWAVE", "mmwave"},
	{"S_VDD_AOC_RET", "aoc.memory"},
	{"S_VDD_AOC", "aoc.logic"},
	{"S_VDDQ_MEM", "ddr.a"},
	{"S_VDD2L", "ddr.b"},
	{"S_VDD2L_MEM", "ddr.b"},
	{"S_VDD2H_MEM", "ddr.c"},
	{"S_VDD_G3D", "gpu"},
	{"S_VDD_G3D_L2", "gpu.l2"},
	{"S_GNSS_CORE", "gps"},
	{"VSYS_PWR_RFFE", "radio.frontend"},
	{"VSYS_PWR_CAMERA", "camera"},
	{"S_VDD_CAM", "multimedia"},
	{"S_UDFPS", "udfps"},
	{"S_PLL_MIPI_UFS", "ufs"},
	{"M_LLDO1", "ldo.main.a"},
	{"M_LLDO2", "ldo.main.b"},
	{"S_LLDO1", "ldo.sub"},
};

static const char *friendly_name(const uint8_t *name, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(known_rails) / sizeof(known_rails[0]); i++) {
		size_t n = strlen(known_rails[i].suffix);

		if (len >= n && !memcmp(name + len - n, known_rails[i].suffix, n))
			return known_rails[i].friendly;
	}
	return NULL;
}

/* The track of rail @index in @session of @machine (< 0: none named). */
static int64_t rail_track(struct tp_android *a, uint32_t machine, uint64_t session, uint32_t index)
{
	size_t i;

	for (i = 0; i < a->n_rails; i++)
		if (a->rails[i].session == session && a->rails[i].index == index &&
		    a->rails[i].machine == machine)
			return a->rails[i].track;
	return -1;
}

static void set_rail_track(struct tp_android *a, uint32_t machine, uint64_t session,
			   uint32_t index, int64_t track)
{
	size_t i;

	for (i = 0; i < a->n_rails; i++)
		if (a->rails[i].session == session && a->rails[i].index == index &&
		    a->rails[i].machine == machine) {
			a->rails[i].track = track;
			return;
		}
	if (a->n_rails == a->cap_rails) {
		size_t cap = a->cap_rails ? 2 * a->cap_rails : 16;
		void *p = realloc(a->rails, cap * sizeof(*a->rails));

		if (!p)
			return;
		a->rails = p;
		a->cap_rails = cap;
	}
	a->rails[a->n_rails].session = session;
	a->rails[a->n_rails].index = index;
	a->rails[a->n_rails].machine = machine;
	a->rails[a->n_rails].track = track;
	a->n_rails++;
}

static void rail_descriptor(struct tp_import *imp, uint64_t session, uint32_t machine,
			    const struct pz_field *f)
{
	struct pz_field d[PB_POWER_RAILS_RAIL_DESCRIPTOR__SAMPLING_RATE + 1];
	const struct pz_field *name = &d[PB_POWER_RAILS_RAIL_DESCRIPTOR__RAIL_NAME];
	const struct pz_field *subsys = &d[PB_POWER_RAILS_RAIL_DESCRIPTOR__SUBSYS_NAME];
	struct tp_dim dims[2] = {{"name", TP_DIM_STR, 0}, {"session_uuid", TP_DIM_UINT, 0}};
	const uint8_t *nm = (const uint8_t *)"";
	size_t nlen = 0;
	const char *friendly;
	char buf[300];
	uint32_t index;
	int64_t track;

	if (f->wire_type != PZ_WIRE_LEN ||
	    pz_decode_table(f->data, f->size, d, PB_POWER_RAILS_RAIL_DESCRIPTOR__SAMPLING_RATE + 1) !=
		    PZ_OK)
		return;
	index = (uint32_t)d[PB_POWER_RAILS_RAIL_DESCRIPTOR__INDEX].value;
	if (index > MAX_RAIL_INDEX)
		return;
	if (name->id && name->wire_type == PZ_WIRE_LEN) {
		nm = name->data;
		nlen = name->size;
	}
	friendly = friendly_name(nm, nlen);
	if (friendly)
		snprintf(buf, sizeof(buf), "power.rails.%s", friendly);
	else
		snprintf(buf, sizeof(buf), "power.%.*s_uws", (int)(nlen > 255 ? 255 : nlen),
			 (const char *)nm);
	dims[0].v = tp_str_intern(&imp->db->strings, (const char *)nm, nlen);
	dims[1].v = (int64_t)session;
	track = tp_track_dims(imp, "power_rails", tp_db_str(imp->db, buf), true, machine, dims, 2,
			      0);
	if (track < 0)
		return;
	/* A new track gets the rail's raw name and subsystem as its source args. */
	if (tp_get_int(&imp->db->track, TRACK_SOURCE_ARG_SET_ID, (size_t)track) == TP_NULL_INT) {
		struct tp_argset src = {0};
		int64_t set;

		tp_argset_str(imp, &src, tp_db_str(imp->db, "raw_name"), (uint32_t)dims[0].v);
		tp_argset_str(imp, &src, tp_db_str(imp->db, "subsystem_name"),
			      subsys->id && subsys->wire_type == PZ_WIRE_LEN
				      ? tp_str_intern(&imp->db->strings, (const char *)subsys->data,
						      subsys->size)
				      : tp_str_intern(&imp->db->strings, "", 0));
		set = tp_argset_commit(imp, &src);
		tp_argset_fini(&src);
		if (set != TP_NULL_INT)
			tp_set_int(&imp->db->track, TRACK_SOURCE_ARG_SET_ID, (size_t)track, set);
	}
	set_rail_track(imp->android, machine, session, index, track);
}

int64_t tp_power_rails_tokenize(struct tp_import *imp, const uint8_t *data, size_t len,
				uint32_t machine, int64_t packet_ts, bool *has_energy)
{
	struct tp_android *a = imp->android;
	struct pz_reader r;
	struct pz_field f;
	uint64_t session = 0;

	*has_energy = false;
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0)
		if (f.id == PB_POWER_RAILS__SESSION_UUID && f.wire_type == PZ_WIRE_VARINT)
			session = f.value;
		else if (f.id == PB_POWER_RAILS__ENERGY_DATA)
			*has_energy = true;
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0)
		if (f.id == PB_POWER_RAILS__RAIL_DESCRIPTOR)
			rail_descriptor(imp, session, machine, &f);
	if (!*has_energy) {
		tp_stat_add(imp, "power_rail_empty_packet", -1, machine, 1);
		return -1;
	}
	if (a->n_packets == a->cap_packets) {
		size_t cap = a->cap_packets ? 2 * a->cap_packets : 16;
		void *p = realloc(a->rail_packets, cap * sizeof(*a->rail_packets));

		if (!p)
			return -1;
		a->rail_packets = p;
		a->cap_packets = cap;
	}
	a->rail_packets[a->n_packets].session = session;
	a->rail_packets[a->n_packets].packet_ts = packet_ts;
	return (int64_t)a->n_packets++;
}

void tp_power_rail_energy(struct tp_import *imp, const struct tp_event *ev)
{
	struct tp_android *a = imp->android;
	struct pz_field e[PB_POWER_RAILS_ENERGY_DATA__ENERGY + 1];
	struct tp_argset args = {0};
	int64_t track, row, set;

	if (ev->aux >= a->n_packets ||
	    pz_decode_table(ev->data, ev->len, e, PB_POWER_RAILS_ENERGY_DATA__ENERGY + 1) != PZ_OK)
		return;
	track = rail_track(a, ev->machine, a->rail_packets[ev->aux].session,
			   (uint32_t)e[PB_POWER_RAILS_ENERGY_DATA__INDEX].value);
	if (track < 0) {
		tp_stat_add(imp, "power_rail_unknown_index", -1, ev->machine, 1);
		return;
	}
	row = tp_counter_add(imp, ev->ts, track, (double)e[PB_POWER_RAILS_ENERGY_DATA__ENERGY].value);
	if (row < 0)
		return;
	tp_argset_uint(imp, &args, tp_db_str(imp->db, "packet_ts"),
		       (uint64_t)a->rail_packets[ev->aux].packet_ts);
	set = tp_argset_commit(imp, &args);
	tp_argset_fini(&args);
	if (set != TP_NULL_INT)
		tp_set_int(&imp->db->counter, COUNTER_ARG_SET_ID, (size_t)row, set);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * android_int.h - what the Android importer's files share, private to
 * them: its state (android_probes.c, entity_state.c and power_rails.c
 * each keep to their own maps).
 */
#ifndef PFC_TRACE_PROCESSOR_IMPORT_ANDROID_ANDROID_INT_H
#define PFC_TRACE_PROCESSOR_IMPORT_ANDROID_ANDROID_INT_H

#include "trace_processor/import/android/android.h"
#include "trace_processor/import/common/common.h"

struct tp_android {
	struct hmap energy_consumers; /* consumer id -> name << 32 | type */
	struct hmap energy_ordinals;  /* energy consumer id -> its ordinal */
	struct hmap entity_states;    /* (entity << 32 | state) -> names */
	/* power_rails.c: the track of each (machine, session, rail index) */
	struct tp_rail {
		uint64_t session;
		uint32_t index;
		uint32_t machine;
		int64_t track;
	} *rails;
	size_t n_rails, cap_rails;
	/* power_rails.c: per PowerRails packet with readings, for its events */
	struct tp_rail_packet {
		uint64_t session;
		int64_t packet_ts;
	} *rail_packets;
	size_t n_packets, cap_packets;
};

#endif

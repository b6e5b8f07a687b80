/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tp_android_int.h - what the Android importer's files share, private to
 * them: its state (tp_android_probes.c and tp_entity_state.c each keep to
 * their own map).
 */
#ifndef PFC_TRACE_PROCESSOR_TP_ANDROID_INT_H
#define PFC_TRACE_PROCESSOR_TP_ANDROID_INT_H

#include "trace_processor/tp_android.h"
#include "trace_processor/tp_int.h"

struct tp_android {
	struct hmap energy_consumers; /* consumer id -> name << 32 | type */
	struct hmap entity_states;    /* (entity << 32 | state) -> names */
};

#endif

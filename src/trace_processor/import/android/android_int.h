/* SPDX-License-Identifier: Apache-2.0 */
/*
 * android_int.h - what the Android importer's files share, private to
 * them: its state (android_probes.c and entity_state.c each keep to
 * their own map).
 */
#ifndef PFC_TRACE_PROCESSOR_IMPORT_ANDROID_ANDROID_INT_H
#define PFC_TRACE_PROCESSOR_IMPORT_ANDROID_ANDROID_INT_H

#include "trace_processor/import/android/android.h"
#include "trace_processor/import/common/common.h"

struct tp_android {
	struct hmap energy_consumers; /* consumer id -> name << 32 | type */
	struct hmap energy_ordinals;  /* energy consumer id -> its ordinal */
	struct hmap entity_states;    /* (entity << 32 | state) -> names */
};

#endif

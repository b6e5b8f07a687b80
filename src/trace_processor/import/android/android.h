/* SPDX-License-Identifier: Apache-2.0 */
/*
 * android.h - the Android importer: power HAL packets (energy estimation
 * breakdowns, entity state residency), Winscope's SurfaceFlinger layers
 * snapshots and system property snapshots,
 * parsed in trace time order; what the read layer calls.
 */
#ifndef PFC_TRACE_PROCESSOR_IMPORT_ANDROID_ANDROID_H
#define PFC_TRACE_PROCESSOR_IMPORT_ANDROID_ANDROID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tp_event;
struct tp_import;

/* The Android importer's state; 0 or -ENOMEM. */
int tp_android_init(struct tp_import *imp);
void tp_android_fini(struct tp_import *imp);
/* Android probes packets (android_probes.c). */
void tp_android_energy_breakdown(struct tp_import *imp, const struct tp_event *ev,
				 const uint8_t *data, size_t len);
void tp_android_system_property(struct tp_import *imp, const struct tp_event *ev,
				const uint8_t *data, size_t len);
/* InitialDisplayState: the first value of the global ScreenState counter. */
void tp_android_initial_display_state(struct tp_import *imp, const struct tp_event *ev,
				      const uint8_t *data, size_t len);
/* PackagesList: package_list rows, the first of each name kept, and the
 * packages_list_has_{read,parse}_errors stats. */
void tp_android_packages_list(struct tp_import *imp, const struct tp_event *ev,
			      const uint8_t *data, size_t len);
/*
 * tp_sf_layers_snapshot() - A SurfaceFlinger layers snapshot (Winscope,
 * TracePacket field 93; winscope_sf.c): its row and its layers' rows.
 */
void tp_sf_layers_snapshot(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
			   size_t len);
/* EntityStateResidency: per-state residency counters (entity_state.c). */
void tp_entity_state_residency(struct tp_import *imp, const struct tp_event *ev,
			       const uint8_t *data, size_t len);

/*
 * tp_power_rails_tokenize() - A PowerRails packet at tokenization
 * (power_rails.c): its rail descriptors make their tracks now; *has_energy
 * tells whether it has readings, which the caller then pushes as events of
 * kind TP_EV_POWER_RAIL, each with the returned index as its aux.
 * Return: that index, or -1 (no readings: counted as power_rail_empty_packet).
 */
int64_t tp_power_rails_tokenize(struct tp_import *imp, const uint8_t *data, size_t len,
				uint32_t machine, int64_t packet_ts, bool *has_energy);
/* One EnergyData of a PowerRails packet, sorted: a counter row. */
void tp_power_rail_energy(struct tp_import *imp, const struct tp_event *ev);

#endif

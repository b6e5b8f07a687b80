// SPDX-License-Identifier: Apache-2.0
/*
 * parse.c - the parser stage's dispatch: each sorted packet's payload
 * goes to the importer of its kind (system and service packets, track
 * events, Android, Chrome, generic kernel); ftrace bundles were merged by
 * the pipe (pipe.c) and clock snapshots done by the tokenizer. At the
 * end, the importers finish in a fixed order and the trace's own metadata
 * is written.
 */
#include <stdlib.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/android/android.h"
#include "trace_processor/import/chrome/chrome.h"
#include "trace_processor/import/generic_kernel/generic_kernel.h"
#include "trace_processor/import/profiling/profiling.h"
#include "trace_processor/import/system/system.h"
#include "trace_processor/import/track_event/track_event.h"
#include "trace_processor/read/read_int.h"

/* TracePacket's Winscope extension field (upstream declares it out of tree). */
#define TP_TRACE_PACKET_SURFACEFLINGER_LAYERS_SNAPSHOT 93

/* ------------------------------------------------------------- driver ---- */

void tp_parse_event(struct tp_import *imp, const struct tp_event *ev)
{
	struct pz_reader r;
	struct pz_field f;

	switch (ev->kind) {
	case TP_EV_FTRACE:
	case TP_EV_BUNDLE:
		return; /* merged by the pipe (pipe.c) */
	case TP_EV_TRACK_EVENT:
		tp_te_parse_event(imp, ev);
		return;
	case TP_EV_POWER_RAIL:
		tp_power_rail_energy(imp, ev);
		return;
	default:
		break;
	}
	pz_reader_init(&r, ev->data, ev->len);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.wire_type != PZ_WIRE_LEN)
			continue;
		switch (f.id) {
		case PB_TRACE_PACKET__PROCESS_TREE:
		case PB_TRACE_PACKET__PROCESS_STATS:
		case PB_TRACE_PACKET__SYS_STATS:
		case PB_TRACE_PACKET__BATTERY:
		case PB_TRACE_PACKET__SYSTEM_INFO:
		case PB_TRACE_PACKET__CPU_INFO:
		case PB_TRACE_PACKET__INTERRUPT_INFO:
		case PB_TRACE_PACKET__TRACE_STATS:
		case PB_TRACE_PACKET__FTRACE_STATS:
		case PB_TRACE_PACKET__TRACE_UUID:
		case PB_TRACE_PACKET__SERVICE_EVENT:
		case PB_TRACE_PACKET__TRACE_CONFIG:
		case PB_TRACE_PACKET__TRACE_ATTRIBUTES:
		case PB_TRACE_PACKET__CLONE_SNAPSHOT_TRIGGER:
		case PB_TRACE_PACKET__TRIGGER:
		case PB_TRACE_PACKET__CONCURRENT_SESSION_EVENT:
			tp_system_packet(imp, ev, f.id, f.data, f.size);
			break;
		case PB_TRACE_PACKET__CLOCK_SNAPSHOT:
			/* Its clock_snapshot rows were written as it entered the graph. */
			break;
		case PB_TRACE_PACKET__ENTITY_STATE_RESIDENCY:
			tp_entity_state_residency(imp, ev, f.data, f.size);
			break;
		case PB_TRACE_PACKET__CHROME_METADATA:
			tp_chrome_metadata(imp, ev, f.data, f.size);
			break;
		case PB_TRACE_PACKET__ANDROID_ENERGY_ESTIMATION_BREAKDOWN:
			tp_android_energy_breakdown(imp, ev, f.data, f.size);
			break;
		case TP_TRACE_PACKET_SURFACEFLINGER_LAYERS_SNAPSHOT:
			tp_sf_layers_snapshot(imp, ev, f.data, f.size);
			break;
		case PB_TRACE_PACKET__ANDROID_SYSTEM_PROPERTY:
			tp_android_system_property(imp, ev, f.data, f.size);
			break;
		case PB_TRACE_PACKET__INITIAL_DISPLAY_STATE:
			tp_android_initial_display_state(imp, ev, f.data, f.size);
			break;
		case PB_TRACE_PACKET__JOURNALD_EVENT:
			tp_journald_event(imp, ev, f.data, f.size);
			break;
		case PB_TRACE_PACKET__PACKAGES_LIST:
			tp_android_packages_list(imp, ev, f.data, f.size);
			break;
		case PB_TRACE_PACKET__TRACK_DESCRIPTOR:
		case PB_TRACE_PACKET__THREAD_DESCRIPTOR:
		case PB_TRACE_PACKET__PROCESS_DESCRIPTOR:
		case PB_TRACE_PACKET__CHROME_TRIGGER:
			tp_te_parse_packet(imp, ev, f.id, f.data, f.size);
			break;
		case PB_TRACE_PACKET__MODULE_SYMBOLS:
			tp_prof_module_symbols(imp, f.data, f.size, ev->machine,
					       tp_te_module_symbols(imp, f.data, f.size));
			break;
		case PB_TRACE_PACKET__GENERIC_KERNEL_TASK_STATE_EVENT:
		case PB_TRACE_PACKET__GENERIC_KERNEL_TASK_RENAME_EVENT:
		case PB_TRACE_PACKET__GENERIC_KERNEL_PROCESS_TREE:
		case PB_TRACE_PACKET__GENERIC_KERNEL_CPU_FREQ_EVENT:
			tp_gk_parse_packet(imp, ev, f.id, f.data, f.size);
			break;
		case PB_TRACE_PACKET__PERF_SAMPLE:
			tp_perf_sample(imp, ev, f.data, f.size);
			break;
		case PB_TRACE_PACKET__STACK_SAMPLE:
			tp_stack_sample(imp, ev, f.data, f.size);
			break;
		case PB_TRACE_PACKET__PROFILE_PACKET:
			tp_profile_packet(imp, ev, f.data, f.size);
			break;
		case PB_TRACE_PACKET__SMAPS_PACKET:
			tp_smaps_packet(imp, ev, f.data, f.size);
			break;
		case PB_TRACE_PACKET__ART_PROCESS_METADATA:
			tp_art_process_metadata(imp, ev, f.data, f.size);
			break;
		case PB_TRACE_PACKET__HEAP_GRAPH:
			tp_heap_graph_packet(imp, ev, f.data, f.size);
			break;
		case PB_TRACE_PACKET__DEOBFUSCATION_MAPPING:
			tp_deobfuscation_mapping(imp, f.data, f.size);
			break;
		default:
			break;
		}
	}
}

/*
 * Per machine, the latest of the CPUs' data starts (token.c, which also
 * keeps it as metadata): to the ftrace importer before the first event is
 * parsed.
 */
static void ftrace_latest_data_start(struct tp_read *r)
{
	struct hmap latest = HMAP_INIT;
	struct hmap_iter it;
	uint64_t k, v, cur;

	hmap_iter_init(&it, &r->ftrace_cpu_start);
	while (hmap_iter_next(&it, &k, &v)) {
		uint64_t machine = k >> 32;

		if (v == FTRACE_START_NONE)
			continue;
		if (!hmap_get(&latest, machine, &cur) || (int64_t)v > (int64_t)cur)
			hmap_put(&latest, machine, v);
	}
	hmap_iter_init(&it, &latest);
	while (hmap_iter_next(&it, &k, &v)) {
		tp_ftrace_data_start(&r->imp, (uint32_t)k, (int64_t)v);
	}
	hmap_fini(&latest);
}

void tp_parse_begin(struct tp_read *r)
{
	ftrace_latest_data_start(r);
}

void tp_parse_finish(struct tp_read *r)
{
	struct tp_import *imp = &r->imp;

	tp_system_finish(imp);
	tp_clock_sync_finish(imp);
	if (tp_clock_claimed_trace_clock(tp_clock_graph(imp)) >= 0)
		tp_metadata_set_int(imp, "trace_time_clock_id", 0,
				    tp_clock_claimed_trace_clock(tp_clock_graph(imp)));
	tp_metadata_set_str(imp, "trace_type", 0, "proto", 5);
	tp_metadata_set_int(imp, "trace_size_bytes", 0, (int64_t)r->bytes_read);
	tp_metadata_finish(imp);
	tp_sched_finish(imp);
	tp_te_finish(imp);
	tp_profiling_finish(imp);
	tp_state_finish(imp);
	/* As Perfetto at the end: processes' args, pending counters, then open slices'. */
	tp_proc_finish(imp);
	tp_counter_finish(imp);
	tp_slice_finish(imp);
	tp_system_diagnostics(imp);
}

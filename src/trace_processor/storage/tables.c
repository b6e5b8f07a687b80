// SPDX-License-Identifier: Apache-2.0
/*
 * tables.c - column specs of every table (from the schema lists in
 * storage.h) and the database that owns them.
 */
#include "trace_processor/storage/storage.h"

#include <errno.h>
#include <string.h>

#define TP_COL_SPEC(t, c, name, type, flags) {name, type, flags},

static const struct tp_col_spec sched_specs[] = {TP_SCHED_COLS(TP_COL_SPEC)};
static const struct tp_col_spec thread_state_specs[] = {TP_THREAD_STATE_COLS(TP_COL_SPEC)};
static const struct tp_col_spec thread_specs[] = {TP_THREAD_COLS(TP_COL_SPEC)};
static const struct tp_col_spec process_specs[] = {TP_PROCESS_COLS(TP_COL_SPEC)};
static const struct tp_col_spec cpu_specs[] = {TP_CPU_COLS(TP_COL_SPEC)};
static const struct tp_col_spec machine_specs[] = {TP_MACHINE_COLS(TP_COL_SPEC)};
static const struct tp_col_spec track_specs[] = {TP_TRACK_COLS(TP_COL_SPEC)};
static const struct tp_col_spec counter_specs[] = {TP_COUNTER_COLS(TP_COL_SPEC)};
static const struct tp_col_spec slice_specs[] = {TP_SLICE_COLS(TP_COL_SPEC)};
static const struct tp_col_spec instant_specs[] = {TP_INSTANT_COLS(TP_COL_SPEC)};
static const struct tp_col_spec state_specs[] = {TP_STATE_COLS(TP_COL_SPEC)};
static const struct tp_col_spec flow_specs[] = {TP_FLOW_COLS(TP_COL_SPEC)};
static const struct tp_col_spec ftrace_specs[] = {TP_FTRACE_EVENT_COLS(TP_COL_SPEC)};
static const struct tp_col_spec args_specs[] = {TP_ARGS_COLS(TP_COL_SPEC)};
static const struct tp_col_spec stats_specs[] = {TP_STATS_COLS(TP_COL_SPEC)};
static const struct tp_col_spec metadata_specs[] = {TP_METADATA_COLS(TP_COL_SPEC)};
static const struct tp_col_spec clocks_specs[] = {TP_CLOCK_SNAPSHOT_COLS(TP_COL_SPEC)};
static const struct tp_col_spec cpu_freq_specs[] = {TP_CPU_FREQ_COLS(TP_COL_SPEC)};
static const struct tp_col_spec sp_mapping_specs[] = {TP_SP_MAPPING_COLS(TP_COL_SPEC)};
static const struct tp_col_spec sp_frame_specs[] = {TP_SP_FRAME_COLS(TP_COL_SPEC)};
static const struct tp_col_spec sp_callsite_specs[] = {TP_SP_CALLSITE_COLS(TP_COL_SPEC)};
static const struct tp_col_spec perf_sample_specs[] = {TP_PERF_SAMPLE_COLS(TP_COL_SPEC)};
static const struct tp_col_spec perf_session_specs[] = {TP_PERF_SESSION_COLS(TP_COL_SPEC)};
static const struct tp_col_spec pcs_specs[] = {TP_PROFILER_COUNTER_SET_COLS(TP_COL_SPEC)};
static const struct tp_col_spec hp_specs[] = {TP_HEAP_PROFILE_COLS(TP_COL_SPEC)};
static const struct tp_col_spec hpa_specs[] = {TP_HEAP_PROFILE_ALLOCATION_COLS(TP_COL_SPEC)};
static const struct tp_col_spec package_list_specs[] = {TP_PACKAGE_LIST_COLS(TP_COL_SPEC)};
static const struct tp_col_spec log_specs[] = {TP_LOG_COLS(TP_COL_SPEC)};
static const struct tp_col_spec hg_specs[] = {TP_HEAP_GRAPH_COLS(TP_COL_SPEC)};
static const struct tp_col_spec hgo_specs[] = {TP_HEAP_GRAPH_OBJECT_COLS(TP_COL_SPEC)};
static const struct tp_col_spec hgc_specs[] = {TP_HEAP_GRAPH_CLASS_COLS(TP_COL_SPEC)};
static const struct tp_col_spec hgr_specs[] = {TP_HEAP_GRAPH_REFERENCE_COLS(TP_COL_SPEC)};
static const struct tp_col_spec tdiag_specs[] = {TP_TRACE_DIAGNOSTICS_COLS(TP_COL_SPEC)};
static const struct tp_col_spec irqmap_specs[] = {TP_IRQ_MAPPING_COLS(TP_COL_SPEC)};
static const struct tp_col_spec sfsnap_specs[] = {TP_SF_SNAPSHOT_COLS(TP_COL_SPEC)};
static const struct tp_col_spec sflayer_specs[] = {TP_SF_LAYER_COLS(TP_COL_SPEC)};
static const struct tp_col_spec hgp_specs[] = {TP_HEAP_GRAPH_PRIMITIVE_COLS(TP_COL_SPEC)};
static const struct tp_col_spec hgd_specs[] = {TP_HEAP_GRAPH_OBJECT_DATA_COLS(TP_COL_SPEC)};
static const struct tp_col_spec ss_specs[] = {TP_SS_SAMPLE_COLS(TP_COL_SPEC)};
static const struct tp_col_spec ss_task_specs[] = {TP_SS_TASK_COLS(TP_COL_SPEC)};
static const struct tp_col_spec ss_exec_specs[] = {TP_SS_EXEC_COLS(TP_COL_SPEC)};
static const struct tp_col_spec ss_async_specs[] = {TP_SS_ASYNC_COLS(TP_COL_SPEC)};
static const struct tp_col_spec sp_sym_specs[] = {TP_SP_SYMBOL_COLS(TP_COL_SPEC)};
static const struct tp_col_spec hg_oome_specs[] = {TP_HG_OOME_COLS(TP_COL_SPEC)};
static const struct tp_col_spec hg_tcs_specs[] = {TP_HG_THREAD_CS_COLS(TP_COL_SPEC)};
static const struct tp_col_spec te_cs_specs[] = {TP_TE_CALLSTACK_COLS(TP_COL_SPEC)};
static const struct tp_col_spec smaps_specs[] = {TP_SMAPS_COLS(TP_COL_SPEC)};

#define N(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))

struct table_def {
	size_t offset;
	const char *name;
	const struct tp_col_spec *specs;
	uint32_t n;
};

/* SQL names: "__" tables are wrapped by views in sql/sql.c. */
static const struct table_def k_tables[TP_DB_N_TABLES] = {
	{offsetof(struct tp_db, sched), "__intrinsic_sched", sched_specs, N(sched_specs)},
	{offsetof(struct tp_db, thread_state), "thread_state", thread_state_specs,
	 N(thread_state_specs)},
	{offsetof(struct tp_db, thread), "thread", thread_specs, N(thread_specs)},
	{offsetof(struct tp_db, process), "process", process_specs, N(process_specs)},
	{offsetof(struct tp_db, cpu), "__intrinsic_cpu", cpu_specs, N(cpu_specs)},
	{offsetof(struct tp_db, machine), "machine", machine_specs, N(machine_specs)},
	{offsetof(struct tp_db, track), "__intrinsic_track", track_specs, N(track_specs)},
	{offsetof(struct tp_db, counter), "counter", counter_specs, N(counter_specs)},
	{offsetof(struct tp_db, slice), "__intrinsic_slice", slice_specs, N(slice_specs)},
	{offsetof(struct tp_db, instant), "__intrinsic_instant", instant_specs, N(instant_specs)},
	{offsetof(struct tp_db, state), "__intrinsic_state", state_specs, N(state_specs)},
	{offsetof(struct tp_db, flow), "flow", flow_specs, N(flow_specs)},
	{offsetof(struct tp_db, ftrace_event), "ftrace_event", ftrace_specs, N(ftrace_specs)},
	{offsetof(struct tp_db, args), "__intrinsic_args", args_specs, N(args_specs)},
	{offsetof(struct tp_db, stats), "__intrinsic_stats", stats_specs, N(stats_specs)},
	{offsetof(struct tp_db, metadata), "metadata", metadata_specs, N(metadata_specs)},
	{offsetof(struct tp_db, clock_snapshot), "clock_snapshot", clocks_specs, N(clocks_specs)},
	{offsetof(struct tp_db, cpu_freq), "__intrinsic_cpu_freq", cpu_freq_specs,
	 N(cpu_freq_specs)},
	{offsetof(struct tp_db, sp_mapping), "stack_profile_mapping", sp_mapping_specs,
	 N(sp_mapping_specs)},
	{offsetof(struct tp_db, sp_frame), "stack_profile_frame", sp_frame_specs,
	 N(sp_frame_specs)},
	{offsetof(struct tp_db, sp_callsite), "stack_profile_callsite", sp_callsite_specs,
	 N(sp_callsite_specs)},
	{offsetof(struct tp_db, perf_sample), "perf_sample", perf_sample_specs,
	 N(perf_sample_specs)},
	{offsetof(struct tp_db, perf_session), "__intrinsic_profiler_session_rows", perf_session_specs,
	 N(perf_session_specs)},
	{offsetof(struct tp_db, profiler_counter_set), "__intrinsic_profiler_counter_set",
	 pcs_specs, N(pcs_specs)},
	{offsetof(struct tp_db, heap_profile), "__intrinsic_heap_profile", hp_specs, N(hp_specs)},
	{offsetof(struct tp_db, heap_profile_allocation), "__intrinsic_heap_profile_allocation",
	 hpa_specs, N(hpa_specs)},
	{offsetof(struct tp_db, package_list), "package_list", package_list_specs,
	 N(package_list_specs)},
	{offsetof(struct tp_db, logs), "__intrinsic_logs", log_specs, N(log_specs)},
	{offsetof(struct tp_db, heap_graph), "heap_graph", hg_specs, N(hg_specs)},
	{offsetof(struct tp_db, heap_graph_object), "heap_graph_object", hgo_specs, N(hgo_specs)},
	{offsetof(struct tp_db, heap_graph_class), "heap_graph_class", hgc_specs, N(hgc_specs)},
	{offsetof(struct tp_db, heap_graph_reference), "heap_graph_reference", hgr_specs,
	 N(hgr_specs)},
	{offsetof(struct tp_db, trace_diagnostics), "__intrinsic_trace_diagnostics", tdiag_specs,
	 N(tdiag_specs)},
	{offsetof(struct tp_db, irq_mapping), "_linux_interrupt_mapping", irqmap_specs,
	 N(irqmap_specs)},
	{offsetof(struct tp_db, heap_graph_primitive), "heap_graph_primitive", hgp_specs,
	 N(hgp_specs)},
	{offsetof(struct tp_db, heap_graph_object_data), "heap_graph_object_data", hgd_specs,
	 N(hgd_specs)},
	{offsetof(struct tp_db, sf_snapshot), "__intrinsic_surfaceflinger_layers_snapshot",
	 sfsnap_specs, N(sfsnap_specs)},
	{offsetof(struct tp_db, sf_layer), "__intrinsic_surfaceflinger_layer", sflayer_specs,
	 N(sflayer_specs)},
	{offsetof(struct tp_db, ss_sample), "__intrinsic_ss_sample", ss_specs, N(ss_specs)},
	{offsetof(struct tp_db, ss_task), "__intrinsic_ss_task_context", ss_task_specs,
	 N(ss_task_specs)},
	{offsetof(struct tp_db, ss_exec), "__intrinsic_ss_execution_context", ss_exec_specs,
	 N(ss_exec_specs)},
	{offsetof(struct tp_db, ss_async), "__intrinsic_ss_async_context", ss_async_specs,
	 N(ss_async_specs)},
	{offsetof(struct tp_db, sp_symbol), "stack_profile_symbol", sp_sym_specs,
	 N(sp_sym_specs)},
	{offsetof(struct tp_db, hg_oome), "__intrinsic_heap_graph_java_oome_details",
	 hg_oome_specs, N(hg_oome_specs)},
	{offsetof(struct tp_db, hg_thread_cs), "heap_graph_thread_callsite", hg_tcs_specs,
	 N(hg_tcs_specs)},
	{offsetof(struct tp_db, te_callstacks), "__intrinsic_track_event_callstacks", te_cs_specs,
	 N(te_cs_specs)},
	{offsetof(struct tp_db, smaps), "profiler_smaps", smaps_specs, N(smaps_specs)},
};

struct tp_table *tp_db_table(struct tp_db *db, unsigned i)
{
	return i < TP_DB_N_TABLES ? (struct tp_table *)((char *)db + k_tables[i].offset) : NULL;
}

int tp_db_init(struct tp_db *db)
{
	unsigned i;
	int rc;

	memset(db, 0, sizeof(*db));
	db->trace_start_ts = TP_NULL_INT;
	db->trace_end_ts = TP_NULL_INT;
	rc = tp_strings_init(&db->strings);
	for (i = 0; rc == 0 && i < TP_DB_N_TABLES; i++)
		rc = tp_table_init(tp_db_table(db, i), k_tables[i].name, k_tables[i].specs,
				   k_tables[i].n);
	if (rc < 0)
		tp_db_fini(db);
	return rc;
}

void tp_db_fini(struct tp_db *db)
{
	unsigned i;

	for (i = 0; i < TP_DB_N_TABLES; i++)
		tp_table_fini(tp_db_table(db, i));
	tp_strings_fini(&db->strings);
}

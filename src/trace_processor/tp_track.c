// SPDX-License-Identifier: Apache-2.0
/*
 * tp_track.c - tracks (one per thread, per counter and CPU, per counter
 * and process, global counters), counter values, arg sets, stats and
 * metadata rows. Lookups are by a hash of the track's identity.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "trace_processor/tp_int.h"
#include "trace_processor/tp_track_event.h"

static uint64_t ident(const char *name, uint64_t a, uint64_t b)
{
	uint64_t h = fnv1a64(name, strlen(name));

	h = fnv1a64_update(h, &a, sizeof(a));
	return fnv1a64_update(h, &b, sizeof(b));
}

static int64_t new_track(struct tp_import *imp, const char *name, const char *type,
			 bool counter, uint32_t machine)
{
	struct tp_table *t = &imp->db->track;
	int64_t row = tp_table_append(t);

	if (row < 0)
		return row;
	if (name)
		tp_set_str(t, TRACK_NAME, (size_t)row, tp_db_str(imp->db, name));
	tp_set_str(t, TRACK_TYPE, (size_t)row, tp_db_str(imp->db, type));
	tp_set_int(t, TRACK_IS_COUNTER, (size_t)row, counter);
	tp_set_int(t, TRACK_MACHINE_ID, (size_t)row, machine);
	return row;
}

/* Perfetto's track type for the counters we know; "<name>" otherwise. */
static const char *cpu_counter_type(const char *name)
{
	if (!strcmp(name, "cpufreq"))
		return "cpu_frequency";
	if (!strcmp(name, "cpuidle"))
		return "cpu_idle";
	return name;
}

static int64_t cpu_counter(struct tp_import *imp, const char *name, const char *type,
			   uint32_t machine, int64_t cpu, const char *dim_key, const char *dim_val)
{
	uint64_t k = ident(name, machine, (uint64_t)cpu), v;
	int64_t row;

	if (hmap_get(&imp->cpu_counter_tracks, k, &v))
		return (int64_t)v;
	row = new_track(imp, name, type, true, machine);
	if (row < 0)
		return row;
	tp_set_int(&imp->db->track, TRACK_CPU, (size_t)row, cpu);
	if (dim_key) {
		struct te_args dims = {0};
		int64_t set;

		/* Perfetto's dimensions: the CPU, then the key naming the counter. */
		te_args_uint(imp, &dims, tp_db_str(imp->db, "cpu"), (uint64_t)cpu);
		if (*dim_key)
			te_args_str(imp, &dims, tp_db_str(imp->db, dim_key), tp_db_str(imp->db, dim_val));
		set = te_args_commit(imp, &dims);
		te_args_fini(&dims);
		if (set != TP_NULL_INT)
			tp_set_int(&imp->db->track, TRACK_DIMENSION_ARG_SET_ID, (size_t)row, set);
	}
	hmap_put(&imp->cpu_counter_tracks, k, (uint64_t)row);
	return row;
}

int64_t tp_track_cpu_counter(struct tp_import *imp, const char *name, uint32_t machine, int64_t cpu)
{
	return cpu_counter(imp, name, cpu_counter_type(name), machine, cpu, NULL, NULL);
}

int64_t tp_track_cpu_counter_dims(struct tp_import *imp, const char *name, const char *type,
				  uint32_t machine, int64_t cpu, const char *dim_key,
				  const char *dim_val)
{
	return cpu_counter(imp, name, type, machine, cpu, dim_key ? dim_key : "", dim_val);
}

int64_t tp_track_process_counter(struct tp_import *imp, const char *name, int64_t upid)
{
	uint64_t k = ident(name, (uint64_t)upid, 0), v;
	int64_t row;
	uint32_t machine = 0;

	if (hmap_get(&imp->process_counter_tracks, k, &v))
		return (int64_t)v;
	if (upid >= 0 && (size_t)upid < imp->db->process.n_rows)
		machine = (uint32_t)tp_col_int(&imp->db->process, PROCESS_MACHINE_ID)[upid];
	row = new_track(imp, name, name, true, machine);
	if (row < 0)
		return row;
	tp_set_int(&imp->db->track, TRACK_UPID, (size_t)row, upid);
	hmap_put(&imp->process_counter_tracks, k, (uint64_t)row);
	return row;
}

int64_t tp_track_global_counter(struct tp_import *imp, const char *name, uint32_t machine)
{
	uint64_t k = ident(name, machine, 1), v;
	int64_t row;

	if (hmap_get(&imp->global_counter_tracks, k, &v))
		return (int64_t)v;
	row = new_track(imp, name, name, true, machine);
	if (row >= 0)
		hmap_put(&imp->global_counter_tracks, k, (uint64_t)row);
	return row;
}

int64_t tp_track_thread(struct tp_import *imp, int64_t utid)
{
	uint64_t v;
	int64_t row;
	uint32_t machine = 0;

	if (hmap_get(&imp->thread_tracks, (uint64_t)utid, &v))
		return (int64_t)v;
	if (utid >= 0 && (size_t)utid < imp->db->thread.n_rows)
		machine = (uint32_t)tp_col_int(&imp->db->thread, THREAD_MACHINE_ID)[utid];
	row = new_track(imp, NULL, "thread", false, machine);
	if (row < 0)
		return row;
	tp_set_int(&imp->db->track, TRACK_UTID, (size_t)row, utid);
	hmap_put(&imp->thread_tracks, (uint64_t)utid, (uint64_t)row);
	return row;
}

void tp_counter_add(struct tp_import *imp, int64_t ts, int64_t track, double value)
{
	struct tp_table *c = &imp->db->counter;
	int64_t row;

	if (track < 0)
		return;
	row = tp_table_append(c);
	if (row < 0)
		return;
	tp_set_int(c, COUNTER_TS, (size_t)row, ts);
	tp_set_int(c, COUNTER_TRACK_ID, (size_t)row, track);
	tp_set_real(c, COUNTER_VALUE, (size_t)row, value);
	tp_bounds_add(imp->db, ts);
}

/* ---------------------------------------------------------------- stats ---- */

static const char *severity(const char *name)
{
	static const char *const loss[] = {
		"ftrace_cpu_has_data_loss", "ftrace_cpu_overrun_end", "packet_loss",
		"traced_buf_chunks_overwritten", "traced_buf_chunks_discarded",
		"traced_buf_abi_violations", "traced_buf_trace_writer_packet_loss",
		"ftrace_cpu_dropped_events_end", "proto_trace_truncated",
	};
	size_t i;

	for (i = 0; i < sizeof(loss) / sizeof(loss[0]); i++)
		if (!strcmp(name, loss[i]))
			return "data_loss";
	if (strstr(name, "malformed") || strstr(name, "invalid") || strstr(name, "error") ||
	    strstr(name, "failure") || strstr(name, "out_of_memory"))
		return "error";
	return "info";
}

/*
 * Stats whose row says more than the defaults (severity from the name,
 * source "trace", no description): found by analysing the events rather
 * than reported by the trace, or described.
 */
static const struct stat_info {
	const char *name;
	const char *severity;
	const char *source;
	const char *description;      /* NULL: none */
} known_stats[] = {
	{"generic_task_state_invalid_order", "error", "analysis",
	 "Invalid order of generic task state events. Should never happen."},
	{"task_state_invalid", "error", "analysis", NULL},
	{"invalid_cpu_times", "error", "analysis", NULL},
	{"entity_state_residency_invalid", "error", "analysis", NULL},
	{"entity_state_residency_lookup_failed", "error", "analysis", NULL},
	{"energy_descriptor_invalid", "error", "analysis", NULL},
	{"energy_breakdown_missing_values", "error", "analysis", NULL},
	{"energy_uid_breakdown_missing_values", "error", "analysis", NULL},
	{"systrace_parse_failure", "error", "analysis", NULL},
	{"process_tracker_parent_pid_changed", "info", "analysis",
	 "A process was seen with a changed parent pid and was kept as the same process, "
	 "reparented; its first parent is kept."},
	{"generic_kernel_malformed", "error", "trace",
	 "A generic kernel packet could not be decoded; it was skipped."},
	{"generic_kernel_invalid_cpu", "error", "trace",
	 "A generic kernel event named a CPU out of range; it was skipped."},
	{"ftrace_abi_errors_skipped_zero_data_length", "info", "trace",
	 "traced_probes skipped ftrace records with a zero data length (a known kernel quirk)."},
	{"ftrace_abi_errors", "data_loss", "trace",
	 "traced_probes met ftrace pages it could not decode; their events are missing."},
};

static const struct stat_info *stat_info(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(known_stats) / sizeof(known_stats[0]); i++)
		if (!strcmp(name, known_stats[i].name))
			return &known_stats[i];
	return NULL;
}

static int64_t stat_row(struct tp_import *imp, const char *name, int64_t idx, uint32_t machine)
{
	const struct stat_info *info;
	struct tp_table *s = &imp->db->stats;
	uint64_t k = ident(name, (uint64_t)idx, machine), v;
	int64_t row;

	if (hmap_get(&imp->stats_rows, k, &v))
		return (int64_t)v;
	row = tp_table_append(s);
	if (row < 0)
		return row;
	tp_set_str(s, STATS_NAME, (size_t)row, tp_db_str(imp->db, name));
	if (idx >= 0)
		tp_set_int(s, STATS_IDX, (size_t)row, idx);
	info = stat_info(name);
	tp_set_str(s, STATS_SEVERITY, (size_t)row,
		   tp_db_str(imp->db, info ? info->severity : severity(name)));
	tp_set_str(s, STATS_SOURCE, (size_t)row,
		   tp_db_str(imp->db, info ? info->source : "trace"));
	if (info && info->description)
		tp_set_str(s, STATS_DESCRIPTION, (size_t)row, tp_db_str(imp->db, info->description));
	tp_set_int(s, STATS_VALUE, (size_t)row, 0);
	if (machine != TP_STAT_GLOBAL) {
		tp_set_int(s, STATS_MACHINE_ID, (size_t)row, machine);
		tp_set_int(s, STATS_TRACE_ID, (size_t)row, 0);
	}
	hmap_put(&imp->stats_rows, k, (uint64_t)row);
	return row;
}

int64_t tp_stat_row(struct tp_import *imp, const char *name, int64_t idx, uint32_t machine)
{
	return stat_row(imp, name, idx, machine);
}

void tp_stat_add_row(struct tp_import *imp, int64_t row, int64_t value)
{
	if (row >= 0)
		tp_set_int(&imp->db->stats, STATS_VALUE, (size_t)row,
			   tp_col_int(&imp->db->stats, STATS_VALUE)[row] + value);
}

void tp_stat_add(struct tp_import *imp, const char *name, int64_t idx, uint32_t machine,
		 int64_t value)
{
	tp_stat_add_row(imp, stat_row(imp, name, idx, machine), value);
}

void tp_stat_set(struct tp_import *imp, const char *name, int64_t idx, uint32_t machine,
		 int64_t value)
{
	int64_t row = stat_row(imp, name, idx, machine);

	if (row >= 0)
		tp_set_int(&imp->db->stats, STATS_VALUE, (size_t)row, value);
}

/* ------------------------------------------------------------- metadata ---- */

/* Keys that describe a machine carry its id; the others belong to the trace. */
static bool machine_key(const char *name)
{
	return !strncmp(name, "system_", 7) || !strcmp(name, "timezone_off_mins") ||
	       !strncmp(name, "android_", 8) || !strncmp(name, "ftrace_", 7);
}

/* The key of a metadata row in meta_rows (UINT32_MAX: the trace's). */
static uint64_t meta_key(uint32_t name_id, bool per_machine, uint32_t machine)
{
	return ((uint64_t)name_id << 32) | (per_machine ? machine : UINT32_MAX);
}

static int64_t meta_row(struct tp_import *imp, const char *name, uint32_t machine)
{
	struct tp_table *m = &imp->db->metadata;
	uint32_t id = tp_db_str(imp->db, name);
	bool per_machine = machine_key(name);
	uint64_t v;
	int64_t row;

	if (hmap_get(&imp->meta_rows, meta_key(id, per_machine, machine), &v))
		return (int64_t)v;
	row = tp_table_append(m);
	if (row < 0 || hmap_put(&imp->meta_rows, meta_key(id, per_machine, machine), (uint64_t)row) < 0)
		return -ENOMEM;
	tp_set_str(m, META_NAME, (size_t)row, id);
	tp_set_str(m, META_KEY_TYPE, (size_t)row, tp_db_str(imp->db, "single"));
	if (per_machine)
		tp_set_int(m, META_MACHINE_ID, (size_t)row, machine);
	if (!per_machine || !strncmp(name, "ftrace_", 7))
		tp_set_int(m, META_TRACE_ID, (size_t)row, 0);
	return row;
}

void tp_metadata_set_int(struct tp_import *imp, const char *name, uint32_t machine, int64_t v)
{
	int64_t row = meta_row(imp, name, machine);

	if (row >= 0)
		tp_set_int(&imp->db->metadata, META_INT_VALUE, (size_t)row, v);
}

void tp_metadata_set_str(struct tp_import *imp, const char *name, uint32_t machine,
			 const char *s, size_t len)
{
	int64_t row = meta_row(imp, name, machine);

	if (row >= 0)
		tp_set_str(&imp->db->metadata, META_STR_VALUE, (size_t)row,
			   tp_str_intern(&imp->db->strings, s, len));
}

void tp_metadata_add_int(struct tp_import *imp, const char *name, int64_t v)
{
	struct tp_table *m = &imp->db->metadata;
	int64_t row = tp_table_append(m);
	uint32_t id = tp_db_str(imp->db, name);

	if (row < 0)
		return;
	/* A single-valued lookup of this name finds its first row, as it did. */
	if (!hmap_get(&imp->meta_rows, meta_key(id, false, 0), NULL))
		hmap_put(&imp->meta_rows, meta_key(id, false, 0), (uint64_t)row);
	tp_set_str(m, META_NAME, (size_t)row, id);
	tp_set_str(m, META_KEY_TYPE, (size_t)row, tp_db_str(imp->db, "multi"));
	tp_set_int(m, META_INT_VALUE, (size_t)row, v);
	tp_set_int(m, META_TRACE_ID, (size_t)row, 0);
}

void tp_metadata_append(struct tp_import *imp, const char *name, uint32_t machine, int64_t v,
			const char *s, size_t len)
{
	struct tp_table *m = &imp->db->metadata;
	int64_t row = tp_table_append(m);

	if (row < 0)
		return;
	tp_set_str(m, META_NAME, (size_t)row, tp_db_str(imp->db, name));
	tp_set_str(m, META_KEY_TYPE, (size_t)row, tp_db_str(imp->db, "single"));
	tp_set_int(m, META_MACHINE_ID, (size_t)row, machine);
	tp_set_int(m, META_TRACE_ID, (size_t)row, 0);
	if (s)
		tp_set_str(m, META_STR_VALUE, (size_t)row, tp_str_intern(&imp->db->strings, s, len));
	else
		tp_set_int(m, META_INT_VALUE, (size_t)row, v);
}

/* ----------------------------------------------------------------- args ---- */

/* Like Perfetto, a set's id is the id of its first row: append its rows next. */
int64_t tp_args_new_set(struct tp_import *imp)
{
	return (int64_t)imp->db->args.n_rows;
}

static int64_t arg_row(struct tp_import *imp, int64_t set, uint32_t key, const char *type)
{
	struct tp_table *a = &imp->db->args;
	int64_t row = tp_table_append(a);

	if (row < 0)
		return row;
	tp_set_int(a, ARGS_ARG_SET_ID, (size_t)row, set);
	tp_set_str(a, ARGS_FLAT_KEY, (size_t)row, key);
	tp_set_str(a, ARGS_KEY, (size_t)row, key);
	tp_set_str(a, ARGS_VALUE_TYPE, (size_t)row, tp_db_str(imp->db, type));
	return row;
}

/* display_value of numbers is computed by the args view (tp_sql.c). */
void tp_arg_int(struct tp_import *imp, int64_t set, uint32_t key, int64_t v)
{
	int64_t row = arg_row(imp, set, key, "int");

	if (row >= 0)
		tp_set_int(&imp->db->args, ARGS_INT_VALUE, (size_t)row, v);
}

void tp_arg_uint(struct tp_import *imp, int64_t set, uint32_t key, uint64_t v)
{
	int64_t row = arg_row(imp, set, key, "uint");

	if (row >= 0)
		tp_set_int(&imp->db->args, ARGS_INT_VALUE, (size_t)row, (int64_t)v);
}

void tp_arg_real(struct tp_import *imp, int64_t set, uint32_t key, double v)
{
	int64_t row = arg_row(imp, set, key, "real");

	if (row >= 0)
		tp_set_real(&imp->db->args, ARGS_REAL_VALUE, (size_t)row, v);
}

void tp_arg_str(struct tp_import *imp, int64_t set, uint32_t key, const char *s, size_t len)
{
	int64_t row = arg_row(imp, set, key, "string");
	uint32_t id;

	if (row < 0)
		return;
	id = tp_str_intern(&imp->db->strings, s, len);
	tp_set_str(&imp->db->args, ARGS_STRING_VALUE, (size_t)row, id);
	tp_set_str(&imp->db->args, ARGS_DISPLAY_VALUE, (size_t)row, id);
}

void tp_track_fini(struct tp_import *imp)
{
	hmap_fini(&imp->cpu_counter_tracks);
	hmap_fini(&imp->thread_tracks);
	hmap_fini(&imp->process_counter_tracks);
	hmap_fini(&imp->global_counter_tracks);
	hmap_fini(&imp->stats_rows);
	hmap_fini(&imp->meta_rows);
}

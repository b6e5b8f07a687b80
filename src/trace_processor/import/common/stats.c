// SPDX-License-Identifier: Apache-2.0
/*
 * stats.c - the stats table (what the import counted: losses, malformed
 * input, analysis findings; with Perfetto's names, severities and
 * sources) and the metadata table (one row per key, per machine for the
 * keys that describe one; trace_uuid). Every layer of the import counts
 * here, so it uses nothing but the tables. Lookups are by a hash of the
 * row's name.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/import/common/common.h"

struct tp_stats {
	struct hmap rows;             /* hash(name, idx, machine) -> stats row */
	struct hmap meta_rows;        /* (name id << 32 | machine) -> metadata row */
	uint64_t uuid_hash;           /* FNV-1a of the file's first bytes */
	size_t uuid_hashed;           /* bytes in uuid_hash */
	bool uuid_in_trace;           /* a TraceUuid packet or config named the trace */
};

int tp_stats_init(struct tp_import *imp)
{
	imp->stats = calloc(1, sizeof(*imp->stats));
	return imp->stats ? 0 : -ENOMEM;
}

void tp_stats_fini(struct tp_import *imp)
{
	if (!imp->stats)
		return;
	hmap_fini(&imp->stats->rows);
	hmap_fini(&imp->stats->meta_rows);
	free(imp->stats);
	imp->stats = NULL;
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
	{"truncated_sys_write_duration", "info", "analysis",
	 "sys_write slices ended early, where their thread wrote an atrace line, so that the "
	 "atrace slice nests; the ftrace_event rows keep the real exit."},
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
	uint64_t k = tp_hash_name(name, (uint64_t)idx, machine), v;
	int64_t row;

	if (hmap_get(&imp->stats->rows, k, &v))
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
	hmap_put(&imp->stats->rows, k, (uint64_t)row);
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

	if (hmap_get(&imp->stats->meta_rows, meta_key(id, per_machine, machine), &v))
		return (int64_t)v;
	row = tp_table_append(m);
	if (row < 0 || hmap_put(&imp->stats->meta_rows, meta_key(id, per_machine, machine), (uint64_t)row) < 0)
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
	if (!hmap_get(&imp->stats->meta_rows, meta_key(id, false, 0), NULL))
		hmap_put(&imp->stats->meta_rows, meta_key(id, false, 0), (uint64_t)row);
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

/* ---------------------------------------------------------- trace uuid ---- */

/*
 * The trace_uuid metadata row. The reader feeds the file's first bytes
 * here before anything is parsed, so a trace without a TraceUuid packet is
 * still named (by an FNV-1a hash of its first 4 KiB, as Perfetto does); a
 * TraceUuid packet parsed later replaces it.
 */
#define UUID_HASH_BYTES 4096

static void set_row(struct tp_import *imp, uint64_t msb, uint64_t lsb)
{
	char s[40];

	snprintf(s, sizeof(s), "%08" PRIx64 "-%04" PRIx64 "-%04" PRIx64 "-%04" PRIx64 "-%012" PRIx64,
		 msb >> 32, (msb >> 16) & 0xffff, msb & 0xffff, lsb >> 48,
		 lsb & (uint64_t)0xffffffffffff);
	tp_metadata_set_str(imp, "trace_uuid", 0, s, strlen(s));
}

void tp_trace_uuid_set(struct tp_import *imp, uint64_t msb, uint64_t lsb, bool from_config)
{
	/* A TraceUuid packet always wins; the config's (deprecated) uuid only if first. */
	if ((!msb && !lsb) || (from_config && imp->stats->uuid_in_trace))
		return;
	set_row(imp, msb, lsb);
	imp->stats->uuid_in_trace = true;
}

void tp_trace_uuid_hash(struct tp_import *imp, const uint8_t *data, size_t len)
{
	size_t n = UUID_HASH_BYTES - imp->stats->uuid_hashed;

	if (!len || !n)
		return;
	if (!imp->stats->uuid_hashed)
		imp->stats->uuid_hash = FNV1A64_OFFSET_BASIS;
	if (n > len)
		n = len;
	imp->stats->uuid_hash = fnv1a64_update(imp->stats->uuid_hash, data, n);
	imp->stats->uuid_hashed += n;
	/* The hash is the uuid's low half. */
	set_row(imp, 0, imp->stats->uuid_hash);
}

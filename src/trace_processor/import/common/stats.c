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

#include "base/sort.h"
#include "trace_processor/import/common/common.h"

struct tp_stats {
	struct hmap rows;             /* hash(name, idx, machine) -> stats row */
	struct hmap meta_rows;        /* (name id << 32 | machine) -> metadata row */
	struct hmap keys;             /* hash(stat name) -> index in k_stats */
	bool keys_ready;
	uint64_t uuid_hash;           /* FNV-1a of the file's first bytes */
	size_t uuid_hashed;           /* bytes in uuid_hash */
	bool uuid_in_trace;           /* a TraceUuid packet or config named the trace */
};

static int zero_single_stats(struct tp_import *imp, bool global, uint32_t machine);

int tp_stats_init(struct tp_import *imp)
{
	imp->stats = calloc(1, sizeof(*imp->stats));
	if (!imp->stats)
		return -ENOMEM;
	if (zero_single_stats(imp, true, TP_STAT_GLOBAL) < 0 || zero_single_stats(imp, false, 0) < 0)
		return -ENOMEM;
	return 0;
}

void tp_stats_fini(struct tp_import *imp)
{
	if (!imp->stats)
		return;
	hmap_fini(&imp->stats->rows);
	hmap_fini(&imp->stats->meta_rows);
	hmap_fini(&imp->stats->keys);
	free(imp->stats);
	imp->stats = NULL;
}

/* ---------------------------------------------------------------- stats ---- */

enum stat_scope {
	TP_STAT_SCOPE_GLOBAL,         /* the import's: machine_id, trace_id NULL */
	TP_STAT_SCOPE_TRACE,          /* a trace's: machine_id NULL */
	TP_STAT_SCOPE_MACHINE,        /* a machine's: trace_id NULL */
	TP_STAT_SCOPE_MACHINE_TRACE,  /* a machine's in a trace */
};

/*
 * Perfetto's stats, in its key order (a stat's key is its index): the
 * table shows them with these names, severities, sources and descriptions.
 */
static const struct stat_info {
	const char *name;
	bool is_indexed;
	const char *severity;
	const char *source;
	enum stat_scope scope;
	const char *description;
} k_stats[] = {
#include "trace_processor/import/common/stats_catalog.h"
};

#define N_STATS (sizeof(k_stats) / sizeof(k_stats[0]))

/* Stats of ours that Perfetto does not have: severity from the name, source "trace". */
static const char *severity(const char *name)
{
	if (strstr(name, "malformed") || strstr(name, "invalid") || strstr(name, "error") ||
	    strstr(name, "failure") || strstr(name, "out_of_memory"))
		return "error";
	return "info";
}

/* The catalog index of stat @name, or -1. */
static int64_t stat_key(struct tp_import *imp, const char *name)
{
	uint64_t h = tp_hash_name(name, UINT64_MAX, UINT32_MAX - 1), v;
	size_t i;

	if (!imp->stats->keys_ready) {
		for (i = 0; i < N_STATS; i++)
			hmap_put(&imp->stats->keys,
				 tp_hash_name(k_stats[i].name, UINT64_MAX, UINT32_MAX - 1), i);
		imp->stats->keys_ready = true;
	}
	if (hmap_get(&imp->stats->keys, h, &v) && !strcmp(k_stats[v].name, name))
		return (int64_t)v;
	for (i = 0; i < N_STATS; i++)
		if (!strcmp(k_stats[i].name, name))
			return (int64_t)i;
	return -1;
}

/* A new row of stat @name (catalog index @key, -1 if not Perfetto's). */
static int64_t new_row(struct tp_import *imp, const char *name, int64_t key, int64_t idx,
		       uint32_t machine)
{
	struct tp_table *s = &imp->db->stats;
	const struct stat_info *info = key >= 0 ? &k_stats[key] : NULL;
	int64_t row = tp_table_append(s);

	if (row < 0)
		return row;
	tp_set_str(s, STATS_NAME, (size_t)row, tp_db_str(imp->db, name));
	if (key >= 0)
		tp_set_int(s, STATS_KEY, (size_t)row, key);
	if (idx >= 0)
		tp_set_int(s, STATS_IDX, (size_t)row, idx);
	tp_set_str(s, STATS_SEVERITY, (size_t)row,
		   tp_db_str(imp->db, info ? info->severity : severity(name)));
	tp_set_str(s, STATS_SOURCE, (size_t)row, tp_db_str(imp->db, info ? info->source : "trace"));
	tp_set_str(s, STATS_DESCRIPTION, (size_t)row,
		   tp_db_str(imp->db, info ? info->description : ""));
	tp_set_int(s, STATS_VALUE, (size_t)row, 0);
	if (machine != TP_STAT_GLOBAL) {
		enum stat_scope scope = info ? info->scope : TP_STAT_SCOPE_MACHINE_TRACE;

		if (scope != TP_STAT_SCOPE_TRACE)
			tp_set_int(s, STATS_MACHINE_ID, (size_t)row, machine);
		if (scope != TP_STAT_SCOPE_MACHINE)
			tp_set_int(s, STATS_TRACE_ID, (size_t)row, 0);
	}
	if (hmap_put(&imp->stats->rows, tp_hash_name(name, (uint64_t)idx, machine), (uint64_t)row) < 0)
		return -ENOMEM;
	return row;
}

/*
 * As Perfetto does, every single stat has a row from the start, at 0: the
 * global ones first, then those of machine 0 in trace 0, each in key
 * order. Indexed stats get rows when first counted.
 */
static int zero_single_stats(struct tp_import *imp, bool global, uint32_t machine)
{
	size_t i;

	for (i = 0; i < N_STATS; i++) {
		if (k_stats[i].is_indexed || (k_stats[i].scope == TP_STAT_SCOPE_GLOBAL) != global)
			continue;
		if (new_row(imp, k_stats[i].name, (int64_t)i, -1, machine) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int64_t stat_row(struct tp_import *imp, const char *name, int64_t idx, uint32_t machine)
{
	uint64_t v;
	int64_t key;

	if (hmap_get(&imp->stats->rows, tp_hash_name(name, (uint64_t)idx, machine), &v))
		return (int64_t)v;
	key = stat_key(imp, name);
	/* A global stat counted for a machine is still the global one. */
	if (key >= 0 && k_stats[key].scope == TP_STAT_SCOPE_GLOBAL && machine != TP_STAT_GLOBAL) {
		machine = TP_STAT_GLOBAL;
		if (hmap_get(&imp->stats->rows, tp_hash_name(name, (uint64_t)idx, machine), &v))
			return (int64_t)v;
	}
	return new_row(imp, name, key, idx, machine);
}

int64_t tp_stat_row(struct tp_import *imp, const char *name, int64_t idx, uint32_t machine)
{
	return stat_row(imp, name, idx, machine);
}

bool tp_stat_get(struct tp_import *imp, const char *name, int64_t idx, uint32_t machine,
		 int64_t *out_value)
{
	uint64_t v;

	if (!hmap_get(&imp->stats->rows, tp_hash_name(name, (uint64_t)idx, machine), &v))
		return false;
	*out_value = tp_col_int(&imp->db->stats, STATS_VALUE)[v];
	return true;
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

/*
 * Perfetto's scope of a metadata key says which of machine_id and trace_id
 * its rows carry: a global key neither, a machine's key the machine, a
 * trace's key the trace (0), the machine's part of a trace both. Keys not
 * listed (trace_uuid, trace_config_pbtxt, ...) are the trace's.
 */
enum meta_scope { SCOPE_GLOBAL, SCOPE_TRACE, SCOPE_MACHINE, SCOPE_MACHINE_TRACE };

static enum meta_scope meta_scope(const char *name)
{
	static const char *const machine_trace[] = {
		"all_data_source_flushed_ns", "all_data_source_started_ns",
		"ftrace_latest_data_start_ns", "slow_start_data_source",
		"tracing_disabled_ns", "tracing_started_ns",
	};
	size_t i;

	if (!strcmp(name, "trace_time_clock_id"))
		return SCOPE_GLOBAL;
	for (i = 0; i < sizeof(machine_trace) / sizeof(machine_trace[0]); i++)
		if (!strcmp(name, machine_trace[i]))
			return SCOPE_MACHINE_TRACE;
	if (!strncmp(name, "system_", 7) || !strncmp(name, "android_", 8) ||
	    !strcmp(name, "timezone_off_mins") || !strcmp(name, "tracing_service_version"))
		return SCOPE_MACHINE;
	return SCOPE_TRACE;
}

static void set_scope_cols(struct tp_table *m, size_t row, enum meta_scope scope, uint32_t machine)
{
	if (scope == SCOPE_MACHINE || scope == SCOPE_MACHINE_TRACE)
		tp_set_int(m, META_MACHINE_ID, row, machine);
	if (scope == SCOPE_TRACE || scope == SCOPE_MACHINE_TRACE)
		tp_set_int(m, META_TRACE_ID, row, 0);
}

static bool per_machine_scope(enum meta_scope scope)
{
	return scope == SCOPE_MACHINE || scope == SCOPE_MACHINE_TRACE;
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
	enum meta_scope scope = meta_scope(name);
	bool per_machine = per_machine_scope(scope);
	uint64_t v;
	int64_t row;

	if (hmap_get(&imp->stats->meta_rows, meta_key(id, per_machine, machine), &v))
		return (int64_t)v;
	row = tp_table_append(m);
	if (row < 0 || hmap_put(&imp->stats->meta_rows, meta_key(id, per_machine, machine), (uint64_t)row) < 0)
		return -ENOMEM;
	tp_set_str(m, META_NAME, (size_t)row, id);
	tp_set_str(m, META_KEY_TYPE, (size_t)row, tp_db_str(imp->db, "single"));
	set_scope_cols(m, (size_t)row, scope, machine);
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

static void metadata_add(struct tp_import *imp, const char *name, int64_t v, const char *s,
			 size_t len)
{
	struct tp_table *m = &imp->db->metadata;
	int64_t row = tp_table_append(m);
	uint32_t id = tp_db_str(imp->db, name);
	enum meta_scope scope = meta_scope(name);
	uint64_t key = meta_key(id, per_machine_scope(scope), 0);

	if (row < 0)
		return;

	/* A single-valued lookup of this name finds its first row, as it did. */
	if (!hmap_get(&imp->stats->meta_rows, key, NULL))
		hmap_put(&imp->stats->meta_rows, key, (uint64_t)row);
	tp_set_str(m, META_NAME, (size_t)row, id);
	tp_set_str(m, META_KEY_TYPE, (size_t)row, tp_db_str(imp->db, "multi"));
	if (s)
		tp_set_str(m, META_STR_VALUE, (size_t)row, tp_str_intern(&imp->db->strings, s, len));
	else
		tp_set_int(m, META_INT_VALUE, (size_t)row, v);
	set_scope_cols(m, (size_t)row, scope, 0);
}

void tp_metadata_add_int(struct tp_import *imp, const char *name, int64_t v)
{
	metadata_add(imp, name, v, NULL, 0);
}

void tp_metadata_add_str(struct tp_import *imp, const char *name, const char *s, size_t len)
{
	metadata_add(imp, name, 0, s, len);
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

/*
 * Perfetto numbers metadata rows as keys are first set, and sets them in
 * three passes over the trace: the trace's name and type and the trace
 * clock first; then, in file order as packets are tokenized, the config's
 * attributes, SystemInfo's keys, the service's events and each CPU's first
 * ftrace bundle (the last two interleaved as the file has them, and also
 * set here while tokenizing); then, in
 * timestamp order, what parsing sets (the config as text, triggers,
 * Chrome's keys); the trace's size last. The import sets them in one pass
 * after sorting, so this puts the rows in that order (stably).
 */
static int meta_stage(const char *name)
{
	enum meta_scope scope = meta_scope(name);

	if (!strcmp(name, "trace_uuid"))
		return 0;
	if (!strcmp(name, "trace_type"))
		return 1;
	if (!strcmp(name, "trace_time_clock_id"))
		return 2;
	if (!strncmp(name, "trace_attribute.", 16))
		return 3;
	if (scope == SCOPE_MACHINE)
		return 4;
	if (scope == SCOPE_MACHINE_TRACE)
		return 5;
	if (!strcmp(name, "trace_size_bytes"))
		return 8;
	return 7;
}

struct meta_cells {
	int stage;
	size_t row;
	int64_t cell[META_N_COLS];
};

static int cmp_meta_cells(const void *a, const void *b)
{
	const struct meta_cells *x = a, *y = b;

	if (x->stage != y->stage)
		return x->stage < y->stage ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

void tp_metadata_finish(struct tp_import *imp)
{
	struct tp_table *m = &imp->db->metadata;
	struct meta_cells *rows;
	size_t n = m->n_rows, i;
	uint32_t c;

	if (n < 2)
		return;
	rows = calloc(n, sizeof(*rows));
	if (!rows)
		return; /* the rows keep the order they were set in */
	for (i = 0; i < n; i++) {
		rows[i].row = i;
		for (c = META_ID + 1; c < META_N_COLS; c++)
			rows[i].cell[c] = tp_get_int(m, c, i);
		rows[i].stage = meta_stage(tp_str_get(&imp->db->strings,
						      (uint32_t)rows[i].cell[META_NAME]));
	}
	sort_n(rows, n, sizeof(*rows), cmp_meta_cells);
	hmap_clear(&imp->stats->meta_rows);
	for (i = 0; i < n; i++) {
		const char *name = tp_str_get(&imp->db->strings, (uint32_t)rows[i].cell[META_NAME]);
		int64_t machine = rows[i].cell[META_MACHINE_ID];
		uint64_t key = meta_key((uint32_t)rows[i].cell[META_NAME],
					per_machine_scope(meta_scope(name)),
					machine == TP_NULL_INT ? 0 : (uint32_t)machine);

		for (c = META_ID + 1; c < META_N_COLS; c++)
			tp_set_int(m, c, i, rows[i].cell[c]);
		if (!hmap_get(&imp->stats->meta_rows, key, NULL))
			hmap_put(&imp->stats->meta_rows, key, i);
	}
	free(rows);
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

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * storage.h - the storage layer, the bottom of the trace processor: a
 * string pool and tables whose columns are flat arrays (cells.h), one row
 * per index, and the schema of every table the trace processor fills, with
 * Perfetto's table and column names, in struct tp_db. The import layers
 * append rows and set cells; the SQL layer reads the cells in place. This
 * is the one header of the layer the others include; it uses only base/.
 *
 * The row index is the table's `id`. Integer and string-id columns of big
 * tables are stored as narrow as their values allow, and sorted integer
 * columns as 32-bit offsets from a base per block of rows (cells.c). Read
 * cells with tp_get_int(), tp_get_str() and tp_get_real(); tp_col_int()
 * and tp_col_real() are the raw arrays of unsorted TP_INT and of TP_REAL
 * columns only.
 */
#ifndef PFC_TRACE_PROCESSOR_STORAGE_STORAGE_H
#define PFC_TRACE_PROCESSOR_STORAGE_STORAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/compiler.h"
#include "base/hmap.h"
#include "base/log.h"
#include "trace_processor/storage/cells.h"

/* ------------------------------------------------------------ strings ---- */

/* Interned strings; ids are dense from 1 (0 is NULL). */
struct tp_strings {
	char *blob;          /* NUL-terminated strings back to back */
	size_t blob_len, blob_cap;
	uint64_t *offs;      /* id -> offset in blob */
	uint32_t n, cap;
	struct hmap index;   /* FNV-1a of the bytes -> id (collisions chained by probing) */
};

int tp_strings_init(struct tp_strings *s);
void tp_strings_fini(struct tp_strings *s);
/* Return: the id of @len bytes at @str (interned on first sight); 0 if out of memory. */
uint32_t tp_str_intern(struct tp_strings *s, const char *str, size_t len);
uint32_t tp_str_intern_c(struct tp_strings *s, const char *str);
/*
 * tp_str_find() - The id of exactly the @len bytes at @str if they are
 * interned, without interning them (SQL equality filters use it).
 * Return: the id, or 0 if absent; bytes holding a NUL are never interned.
 */
uint32_t tp_str_find(const struct tp_strings *s, const char *str, size_t len);
/* Return: the string (NUL-terminated, borrowed), or NULL for id 0 or a bad id. */
const char *tp_str_get(const struct tp_strings *s, uint32_t id);

/* ------------------------------------------------------------- tables ---- */

struct tp_order;

struct tp_table {
	const char *name;
	const struct tp_col_spec *specs;
	uint32_t n_cols;
	struct tp_col *cols;
	size_t n_rows, cap;
	size_t n_filled;            /* cells [n_rows, n_filled) already hold NULL */
	size_t n_mapped;            /* cells below this row have their pages mapped */
	uint64_t generation;        /* bumped on every change: indexes go stale */
	struct tp_order *orders;    /* cached row orders (tp_table_order) */
	uint32_t n_orders;
	struct tp_int_min *mins;    /* cells holding INT64_MIN itself (int_min.c) */
	size_t n_mins, cap_mins;
};

int tp_table_init(struct tp_table *t, const char *name, const struct tp_col_spec *specs,
		  uint32_t n_cols);
void tp_table_fini(struct tp_table *t);

/* Appends a row of NULLs. Return: its index, or -ENOMEM. */
int64_t tp_table_append(struct tp_table *t);

/* The raw cells of an unsorted TP_INT column (always int64). */
static inline int64_t *tp_col_int(const struct tp_table *t, uint32_t c)
{
	DCHECK(t->cols[c].enc == TP_ENC_I64);
	return (int64_t *)t->cols[c].data;
}
/* The raw cells of a TP_REAL column. */
static inline double *tp_col_real(const struct tp_table *t, uint32_t c)
{
	DCHECK(t->cols[c].enc == TP_ENC_F64);
	return (double *)t->cols[c].data;
}

/* Any integer-like cell (TP_INT, TP_NARROW, TP_ID, a TP_STR id); TP_NULL_INT for NULL. */
static PFC_ALWAYS_INLINE int64_t tp_get_int(const struct tp_table *t, uint32_t c, size_t row)
{
	return tp_cell_get(&t->cols[c], row);
}

/*
 * INT64_MIN is the NULL marker of int cells, so a cell whose value is
 * INT64_MIN itself (an unsigned arg of 2^63) is stored as NULL and listed
 * by tp_set_int_min() (int_min.c); readers that must tell the two apart
 * (the SQL layer) ask tp_int_is_min() when a cell reads TP_NULL_INT. Rare:
 * the list is sorted by (column, row) and searched by bisection. A later
 * tp_set_int() of such a cell to a value wins over the list.
 */
struct tp_int_min {
	uint32_t col;
	uint64_t row;
};
int tp_set_int_min(struct tp_table *t, uint32_t c, size_t row);
bool tp_int_is_min(const struct tp_table *t, uint32_t c, size_t row);
/* Whether column @c has any cell listed by tp_set_int_min(). */
bool tp_col_has_min(const struct tp_table *t, uint32_t c);

/* A string-id cell (TP_STR); TP_NULL_STR for NULL. */
static inline uint32_t tp_get_str(const struct tp_table *t, uint32_t c, size_t row)
{
	return (uint32_t)tp_get_int(t, c, row);
}

/* A TP_REAL cell; NaN for NULL. */
static inline double tp_get_real(const struct tp_table *t, uint32_t c, size_t row)
{
	return ((const double *)t->cols[c].data)[row];
}

/*
 * Setters mark the table changed (cached indexes are rebuilt on use).
 * tp_set_int() takes any integer-like column; TP_NULL_INT stores NULL.
 * Return: 0 or the errors of tp_col_set_wide().
 */
static PFC_ALWAYS_INLINE int tp_set_int(struct tp_table *t, uint32_t c, size_t row, int64_t v)
{
	struct tp_col *col = &t->cols[c];

	t->generation++;
	switch (col->enc) {
	case TP_ENC_BITS:
		if (v == TP_NULL_INT) {
			tp_bits_put(col->data, col->bits, col->mask, row, 0);
			return 0;
		}
		/* Fits if v - base < 2^bits - 1 (a code of all ones is fine). */
		if ((uint64_t)v - (uint64_t)col->base < col->mask) {
			tp_bits_put(col->data, col->bits, col->mask, row,
				    (uint64_t)v - (uint64_t)col->base + 1);
			return 0;
		}
		break;
	case TP_ENC_I64:
		((int64_t *)col->data)[row] = v;
		return 0;
	case TP_ENC_I8:
		if (v == TP_NULL_INT || (v > INT8_MIN && v <= INT8_MAX)) {
			((int8_t *)col->data)[row] = v == TP_NULL_INT ? INT8_MIN : (int8_t)v;
			return 0;
		}
		break;
	case TP_ENC_I16:
		if (v == TP_NULL_INT || (v > INT16_MIN && v <= INT16_MAX)) {
			((int16_t *)col->data)[row] = v == TP_NULL_INT ? INT16_MIN : (int16_t)v;
			return 0;
		}
		break;
	case TP_ENC_I32:
		if (v == TP_NULL_INT || (v > INT32_MIN && v <= INT32_MAX)) {
			((int32_t *)col->data)[row] = v == TP_NULL_INT ? INT32_MIN : (int32_t)v;
			return 0;
		}
		break;
	case TP_ENC_X32:
		/* A cell that held an exception drops it (tp_col_set_wide()). */
		if ((v == TP_NULL_INT || (v > INT32_MIN && v < INT32_MAX)) &&
		    ((int32_t *)col->data)[row] != INT32_MAX) {
			((int32_t *)col->data)[row] = v == TP_NULL_INT ? INT32_MIN : (int32_t)v;
			return 0;
		}
		break;
	case TP_ENC_U8:
		if (v >= 0 && v <= UINT8_MAX) {
			((uint8_t *)col->data)[row] = (uint8_t)v;
			return 0;
		}
		break;
	case TP_ENC_U16:
		if (v >= 0 && v <= UINT16_MAX) {
			((uint16_t *)col->data)[row] = (uint16_t)v;
			return 0;
		}
		break;
	case TP_ENC_U32:
		if (v >= 0 && v <= UINT32_MAX) {
			((uint32_t *)col->data)[row] = (uint32_t)v;
			return 0;
		}
		break;
	case TP_ENC_D32: {
		int64_t *base = &col->bases[row >> TP_D32_BLOCK_SHIFT];

		if (v == TP_NULL_INT) {
			((uint32_t *)col->data)[row] = UINT32_MAX;
			return 0;
		}
		if (*base == TP_NULL_INT)
			*base = v;
		if (v >= *base && (uint64_t)v - (uint64_t)*base < UINT32_MAX) {
			((uint32_t *)col->data)[row] = (uint32_t)((uint64_t)v - (uint64_t)*base);
			return 0;
		}
		break;
	}
	case TP_ENC_ROW:
	case TP_ENC_F64:
		break;
	}
	return tp_col_set_wide(col, t->cap, t->n_filled > t->n_rows ? t->n_filled : t->n_rows, row,
			       v);
}
static inline void tp_set_real(struct tp_table *t, uint32_t c, size_t row, double v)
{
	tp_col_real(t, c)[row] = v;
	t->generation++;
}
static inline int tp_set_str(struct tp_table *t, uint32_t c, size_t row, uint32_t v)
{
	return tp_set_int(t, c, row, v);
}

/*
 * tp_col_lookup() - Rows whose integer or string-id cell equals @v, from a
 * sorted index built on first use (and rebuilt when the table changed).
 * Return: the number of rows; *out_rows points at them in ascending row
 * order (borrowed, valid until the table changes); -ENOMEM.
 */
int64_t tp_col_lookup(struct tp_table *t, uint32_t c, int64_t v, const uint32_t **out_rows);

/* Builds the equality index of column @c now (e.g. after an import). */
int tp_col_index_build(struct tp_table *t, uint32_t c);
/*
 * tp_col_index_count() - What the planner needs of column @c's index
 * after an import: its count of distinct values, counted in one pass over
 * a packed column of few bits; the index's rows (4 bytes a row) are then
 * left to the first tp_col_lookup(). Other columns get the whole index.
 * Return: 0 or -ENOMEM.
 */
int tp_col_index_count(struct tp_table *t, uint32_t c);

/* Distinct values in column @c when its index was last built or counted; 0: unknown. */
size_t tp_col_distinct_hint(const struct tp_table *t, uint32_t c);

/*
 * tp_table_order() - Every row, ordered by the cells of column @c1, then
 * of @c2 (-1: none), then by row. NULLs come first. String columns order
 * by their text in byte order (SQLite's BINARY) given @strings, the pool
 * their ids point into; without it (NULL) by string id, which only groups.
 * Built with a counting sort when the key range is small, else a
 * comparison sort, and cached until the table changes (callers must pass
 * the same @strings each time).
 * Return: n_rows and *out_rows (borrowed: see tp_rows_hold()); -ENOMEM.
 */
int64_t tp_table_order(struct tp_table *t, uint32_t c1, int c2, const struct tp_strings *strings,
		       const uint32_t **out_rows);

/*
 * tp_rows_hold(), tp_rows_release() - Keep the rows tp_table_order() gave
 * alive while reading them (the cache keeps 4 orders per table and drops
 * the oldest when a fifth is asked for, maybe by another cursor of the
 * same statement). Every hold needs one release; NULL is ignored.
 */
void tp_rows_hold(const uint32_t *rows);
void tp_rows_release(const uint32_t *rows);

/* ------------------------------------------------------------- schema ---- */

/*
 * Each table is an X-macro list (prefix, column, SQL name, type, flags):
 * one list gives both the column enum (SCHED_TS, ...) and the spec array
 * (tables.c). Tables whose SQL name starts with "__" are exposed through
 * views (the SQL layer) that rename, filter or add computed columns.
 */

#define TP_SCHED_COLS(X)                                \
	X(SCHED, ID, "id", TP_ID, 0)                    \
	X(SCHED, TS, "ts", TP_INT, TP_SORTED)           \
	X(SCHED, DUR, "dur", TP_NARROW, 0)              \
	X(SCHED, CPU, "cpu", TP_NARROW, 0)              \
	X(SCHED, UTID, "utid", TP_NARROW, 0)            \
	X(SCHED, END_STATE, "end_state", TP_STR, 0)     \
	X(SCHED, PRIORITY, "priority", TP_NARROW, 0)    \
	X(SCHED, UCPU, "ucpu", TP_NARROW, 0)

#define TP_THREAD_STATE_COLS(X)                                 \
	X(TSTATE, ID, "id", TP_ID, 0)                           \
	X(TSTATE, TS, "ts", TP_INT, TP_SORTED)                  \
	X(TSTATE, DUR, "dur", TP_NARROW, 0)                     \
	X(TSTATE, CPU, "cpu", TP_NARROW, 0)                     \
	X(TSTATE, UTID, "utid", TP_NARROW, 0)                   \
	X(TSTATE, STATE, "state", TP_STR, 0)                    \
	X(TSTATE, IO_WAIT, "io_wait", TP_NARROW, 0)             \
	X(TSTATE, BLOCKED_FUNCTION, "blocked_function", TP_STR, 0) \
	X(TSTATE, WAKER_UTID, "waker_utid", TP_NARROW, 0)       \
	X(TSTATE, WAKER_ID, "waker_id", TP_NARROW, 0)           \
	X(TSTATE, IRQ_CONTEXT, "irq_context", TP_NARROW, 0)     \
	X(TSTATE, UCPU, "ucpu", TP_NARROW, 0)

#define TP_THREAD_COLS(X)                                       \
	X(THREAD, UTID, "utid", TP_ID, 0)                       \
	X(THREAD, ID, "id", TP_ID, 0)                           \
	X(THREAD, TID, "tid", TP_INT, 0)                        \
	X(THREAD, NAME, "name", TP_STR, 0)                      \
	X(THREAD, START_TS, "start_ts", TP_INT, 0)              \
	X(THREAD, END_TS, "end_ts", TP_INT, 0)                  \
	X(THREAD, UPID, "upid", TP_INT, 0)                      \
	X(THREAD, IS_MAIN_THREAD, "is_main_thread", TP_INT, 0)  \
	X(THREAD, IS_IDLE, "is_idle", TP_INT, 0)                \
	X(THREAD, MACHINE_ID, "machine_id", TP_INT, 0)          \
	X(THREAD, ARG_SET_ID, "arg_set_id", TP_INT, 0)

#define TP_PROCESS_COLS(X)                                      \
	X(PROCESS, UPID, "upid", TP_ID, 0)                      \
	X(PROCESS, ID, "id", TP_ID, 0)                          \
	X(PROCESS, PID, "pid", TP_INT, 0)                       \
	X(PROCESS, NAME, "name", TP_STR, 0)                     \
	X(PROCESS, START_TS, "start_ts", TP_INT, 0)             \
	X(PROCESS, END_TS, "end_ts", TP_INT, 0)                 \
	X(PROCESS, PARENT_UPID, "parent_upid", TP_INT, 0)       \
	X(PROCESS, UID, "uid", TP_INT, 0)                       \
	X(PROCESS, ANDROID_APPID, "android_appid", TP_INT, 0)   \
	X(PROCESS, ANDROID_USER_ID, "android_user_id", TP_INT, 0) \
	X(PROCESS, CMDLINE, "cmdline", TP_STR, 0)               \
	X(PROCESS, ARG_SET_ID, "arg_set_id", TP_INT, 0)         \
	X(PROCESS, MACHINE_ID, "machine_id", TP_INT, 0)

#define TP_CPU_COLS(X)                                          \
	X(CPU, ID, "id", TP_ID, 0)                              \
	X(CPU, UCPU, "ucpu", TP_ID, 0)                          \
	X(CPU, CPU, "cpu", TP_INT, 0)                           \
	X(CPU, CLUSTER_ID, "cluster_id", TP_INT, 0)             \
	X(CPU, PROCESSOR, "processor", TP_STR, 0)               \
	X(CPU, MACHINE_ID, "machine_id", TP_INT, 0)             \
	X(CPU, CAPACITY, "capacity", TP_INT, 0)                 \
	X(CPU, ARG_SET_ID, "arg_set_id", TP_INT, 0)

#define TP_MACHINE_COLS(X)                                      \
	X(MACHINE, ID, "id", TP_ID, 0)                          \
	X(MACHINE, RAW_ID, "raw_id", TP_INT, 0)                 \
	X(MACHINE, NAME, "name", TP_STR, 0)                     \
	X(MACHINE, SYSNAME, "sysname", TP_STR, 0)               \
	X(MACHINE, RELEASE, "release", TP_STR, 0)               \
	X(MACHINE, VERSION, "version", TP_STR, 0)               \
	X(MACHINE, ARCH, "arch", TP_STR, 0)                     \
	X(MACHINE, NUM_CPUS, "num_cpus", TP_INT, 0)             \
	X(MACHINE, ANDROID_BUILD_FINGERPRINT, "android_build_fingerprint", TP_STR, 0) \
	X(MACHINE, ANDROID_DEVICE_MANUFACTURER, "android_device_manufacturer", TP_STR, 0) \
	X(MACHINE, ANDROID_SDK_VERSION, "android_sdk_version", TP_INT, 0) \
	X(MACHINE, SYSTEM_RAM_BYTES, "system_ram_bytes", TP_INT, 0) \
	X(MACHINE, SYSTEM_RAM_GB, "system_ram_gb", TP_INT, 0)   \
	X(MACHINE, LABEL_INDEX, "label_index", TP_INT, 0)

/* Every track; the *_track views pick by the hidden classification columns
 * (is_counter: 0 a slice track, 1 a counter track, 2 a state track). */
#define TP_TRACK_COLS(X)                                        \
	X(TRACK, ID, "id", TP_ID, 0)                            \
	X(TRACK, NAME, "name", TP_STR, 0)                       \
	X(TRACK, TYPE, "type", TP_STR, 0)                       \
	X(TRACK, DIMENSION_ARG_SET_ID, "dimension_arg_set_id", TP_INT, 0) \
	X(TRACK, PARENT_ID, "parent_id", TP_INT, 0)             \
	X(TRACK, SOURCE_ARG_SET_ID, "source_arg_set_id", TP_INT, 0) \
	X(TRACK, MACHINE_ID, "machine_id", TP_INT, 0)           \
	X(TRACK, TRACK_GROUP_ID, "track_group_id", TP_INT, 0)   \
	X(TRACK, IS_COUNTER, "is_counter", TP_INT, 0)           \
	X(TRACK, CPU, "cpu", TP_INT, 0)                         \
	X(TRACK, UTID, "utid", TP_INT, 0)                       \
	X(TRACK, UPID, "upid", TP_INT, 0)                       \
	X(TRACK, UNIT, "unit", TP_STR, 0)                       \
	X(TRACK, DESCRIPTION, "description", TP_STR, 0)

#define TP_COUNTER_COLS(X)                                      \
	X(COUNTER, ID, "id", TP_ID, 0)                          \
	X(COUNTER, TS, "ts", TP_INT, TP_SORTED)                 \
	X(COUNTER, TRACK_ID, "track_id", TP_NARROW, 0)          \
	X(COUNTER, VALUE, "value", TP_REAL, 0)                  \
	X(COUNTER, ARG_SET_ID, "arg_set_id", TP_NARROW, 0)

#define TP_SLICE_COLS(X)                                        \
	X(SLICE, ID, "id", TP_ID, 0)                            \
	X(SLICE, TS, "ts", TP_INT, TP_SORTED)                   \
	X(SLICE, DUR, "dur", TP_NARROW, 0)                      \
	X(SLICE, TRACK_ID, "track_id", TP_NARROW, 0)            \
	X(SLICE, CATEGORY, "category", TP_STR, 0)               \
	X(SLICE, NAME, "name", TP_STR, 0)                       \
	X(SLICE, DEPTH, "depth", TP_NARROW, 0)                  \
	X(SLICE, PARENT_ID, "parent_id", TP_NARROW, 0)          \
	X(SLICE, ARG_SET_ID, "arg_set_id", TP_NARROW, 0)        \
	X(SLICE, THREAD_TS, "thread_ts", TP_NARROW, 0)          \
	X(SLICE, THREAD_DUR, "thread_dur", TP_NARROW, 0)        \
	X(SLICE, THREAD_INSTRUCTION_COUNT, "thread_instruction_count", TP_NARROW, 0) \
	X(SLICE, THREAD_INSTRUCTION_DELTA, "thread_instruction_delta", TP_NARROW, 0)

#define TP_INSTANT_COLS(X)                                      \
	X(INSTANT, ID, "id", TP_ID, TP_HIDDEN)                  \
	X(INSTANT, TS, "ts", TP_INT, TP_SORTED)                 \
	X(INSTANT, TRACK_ID, "track_id", TP_NARROW, 0)          \
	X(INSTANT, NAME, "name", TP_STR, 0)                     \
	X(INSTANT, ARG_SET_ID, "arg_set_id", TP_NARROW, 0)

/* Perfetto's __intrinsic_state: one row per value of a state track; dur -1
 * while the value still holds at the end of the trace. */
#define TP_STATE_COLS(X)                                        \
	X(STATE, ID, "id", TP_ID, 0)                            \
	X(STATE, TS, "ts", TP_INT, TP_SORTED)                   \
	X(STATE, DUR, "dur", TP_INT, 0)                         \
	X(STATE, TRACK_ID, "track_id", TP_NARROW, 0)            \
	X(STATE, CATEGORY, "category", TP_STR, 0)               \
	X(STATE, VALUE, "value", TP_STR, 0)                     \
	X(STATE, ARG_SET_ID, "arg_set_id", TP_NARROW, 0)

#define TP_FLOW_COLS(X)                                         \
	X(FLOW, ID, "id", TP_ID, 0)                             \
	X(FLOW, SLICE_OUT, "slice_out", TP_NARROW, 0)           \
	X(FLOW, SLICE_IN, "slice_in", TP_NARROW, 0)             \
	X(FLOW, TRACE_ID, "trace_id", TP_NARROW, 0)             \
	X(FLOW, ARG_SET_ID, "arg_set_id", TP_NARROW, 0)

#define TP_FTRACE_EVENT_COLS(X)                                 \
	X(FTRACE, ID, "id", TP_ID, 0)                           \
	X(FTRACE, TS, "ts", TP_INT, TP_SORTED)                  \
	X(FTRACE, NAME, "name", TP_STR, 0)                      \
	X(FTRACE, CPU, "cpu", TP_NARROW, 0)                     \
	X(FTRACE, UTID, "utid", TP_NARROW, 0)                   \
	X(FTRACE, ARG_SET_ID, "arg_set_id", TP_NARROW, 0)       \
	X(FTRACE, COMMON_FLAGS, "common_flags", TP_NARROW, 0)   \
	X(FTRACE, UCPU, "ucpu", TP_NARROW, 0)

#define TP_ARGS_COLS(X)                                         \
	X(ARGS, ID, "id", TP_ID, 0)                             \
	X(ARGS, ARG_SET_ID, "arg_set_id", TP_INT, TP_SORTED)    \
	X(ARGS, FLAT_KEY, "flat_key", TP_STR, 0)                \
	X(ARGS, KEY, "key", TP_STR, 0)                          \
	X(ARGS, INT_VALUE, "int_value", TP_NARROW, 0)           \
	X(ARGS, STRING_VALUE, "string_value", TP_STR, 0)        \
	X(ARGS, REAL_VALUE, "real_value", TP_REAL, 0)           \
	X(ARGS, VALUE_TYPE, "value_type", TP_STR, 0)            \
	X(ARGS, DISPLAY_VALUE, "display_value", TP_STR, 0)

#define TP_STATS_COLS(X)                                        \
	X(STATS, ID, "id", TP_ID, 0)                            \
	X(STATS, NAME, "name", TP_STR, 0)                       \
	X(STATS, KEY, "key", TP_INT, 0)                         \
	X(STATS, IDX, "idx", TP_INT, 0)                         \
	X(STATS, SEVERITY, "severity", TP_STR, 0)               \
	X(STATS, SOURCE, "source", TP_STR, 0)                   \
	X(STATS, VALUE, "value", TP_INT, 0)                     \
	X(STATS, DESCRIPTION, "description", TP_STR, 0)         \
	X(STATS, MACHINE_ID, "machine_id", TP_INT, 0)           \
	X(STATS, TRACE_ID, "trace_id", TP_INT, 0)

#define TP_METADATA_COLS(X)                                     \
	X(META, ID, "id", TP_ID, 0)                             \
	X(META, NAME, "name", TP_STR, 0)                        \
	X(META, KEY_TYPE, "key_type", TP_STR, 0)                \
	X(META, INT_VALUE, "int_value", TP_INT, 0)              \
	X(META, STR_VALUE, "str_value", TP_STR, 0)              \
	X(META, MACHINE_ID, "machine_id", TP_INT, 0)            \
	X(META, TRACE_ID, "trace_id", TP_INT, 0)

#define TP_CLOCK_SNAPSHOT_COLS(X)                               \
	X(CLOCKS, ID, "id", TP_ID, 0)                           \
	X(CLOCKS, TS, "ts", TP_INT, 0)                          \
	X(CLOCKS, CLOCK_ID, "clock_id", TP_INT, 0)              \
	X(CLOCKS, CLOCK_NAME, "clock_name", TP_STR, 0)          \
	X(CLOCKS, CLOCK_VALUE, "clock_value", TP_INT, 0)        \
	X(CLOCKS, SNAPSHOT_ID, "snapshot_id", TP_INT, 0)        \
	X(CLOCKS, MACHINE_ID, "machine_id", TP_INT, 0)

/* The frequencies each CPU can run at (cpu_available_frequencies). */
#define TP_CPU_FREQ_COLS(X)                                     \
	X(CPU_FREQ, ID, "id", TP_ID, 0)                         \
	X(CPU_FREQ, UCPU, "ucpu", TP_INT, 0)                    \
	X(CPU_FREQ, FREQ, "freq", TP_INT, 0)

/* Profilers' interned mappings, frames and callsites (stack_profile_*). */
#define TP_SP_MAPPING_COLS(X)                                   \
	X(SP_MAP, ID, "id", TP_ID, 0)                           \
	X(SP_MAP, BUILD_ID, "build_id", TP_STR, 0)              \
	X(SP_MAP, EXACT_OFFSET, "exact_offset", TP_INT, 0)      \
	X(SP_MAP, START_OFFSET, "start_offset", TP_INT, 0)      \
	X(SP_MAP, START, "start", TP_INT, 0)                    \
	X(SP_MAP, END, "end", TP_INT, 0)                        \
	X(SP_MAP, LOAD_BIAS, "load_bias", TP_INT, 0)            \
	X(SP_MAP, NAME, "name", TP_STR, 0)

#define TP_SP_FRAME_COLS(X)                                     \
	X(SP_FRAME, ID, "id", TP_ID, 0)                         \
	X(SP_FRAME, NAME, "name", TP_STR, 0)                    \
	X(SP_FRAME, MAPPING, "mapping", TP_INT, 0)              \
	X(SP_FRAME, REL_PC, "rel_pc", TP_INT, 0)                \
	X(SP_FRAME, SYMBOL_SET_ID, "symbol_set_id", TP_INT, 0)  \
	X(SP_FRAME, DEOBFUSCATED_NAME, "deobfuscated_name", TP_STR, 0) \
	X(SP_FRAME, TYPE, "type", TP_STR, 0)

#define TP_SP_CALLSITE_COLS(X)                                  \
	X(SP_CS, ID, "id", TP_ID, 0)                            \
	X(SP_CS, DEPTH, "depth", TP_INT, 0)                     \
	X(SP_CS, PARENT_ID, "parent_id", TP_INT, 0)             \
	X(SP_CS, FRAME_ID, "frame_id", TP_INT, 0)

/* linux.perf samples (traced_perf) and their sessions. */
#define TP_PERF_SAMPLE_COLS(X)                                  \
	X(PERF, ID, "id", TP_ID, 0)                             \
	X(PERF, TS, "ts", TP_INT, 0)                            \
	X(PERF, UTID, "utid", TP_INT, 0)                        \
	X(PERF, CPU, "cpu", TP_INT, 0)                          \
	X(PERF, CPU_MODE, "cpu_mode", TP_STR, 0)                \
	X(PERF, CALLSITE_ID, "callsite_id", TP_INT, 0)          \
	X(PERF, UNWIND_ERROR, "unwind_error", TP_STR, 0)        \
	X(PERF, PERF_SESSION_ID, "perf_session_id", TP_INT, 0)  \
	X(PERF, COUNTER_SET_ID, "counter_set_id", TP_INT, TP_HIDDEN) \
	X(PERF, UCPU, "ucpu", TP_INT, TP_HIDDEN)

/* Every profiler session, as Perfetto's __intrinsic_profiler_session:
 * linux.perf's (source "linux.perf", the perf_session view of sql/sql.c)
 * and StackSample streams'. timebase_unit: what the session's timebase
 * counts ("ns", "cycles", "instructions", "count", ...), read by the
 * stack_sample views of sql/. */
#define TP_PERF_SESSION_COLS(X)                                 \
	X(PERF_SESS, ID, "id", TP_ID, 0)                        \
	X(PERF_SESS, PERF_SESSION_ID, "perf_session_id", TP_INT, 0) \
	X(PERF_SESS, CMDLINE, "cmdline", TP_STR, 0)             \
	X(PERF_SESS, TIMEBASE_UNIT, "timebase_unit", TP_STR, TP_HIDDEN) \
	X(PERF_SESS, SOURCE, "source", TP_STR, TP_HIDDEN)

/* The counter values recorded with one sample: a set is named by the row
 * of its first member, as Perfetto's __intrinsic_profiler_counter_set. */
#define TP_PROFILER_COUNTER_SET_COLS(X)                         \
	X(PCS, ID, "id", TP_ID, 0)                              \
	X(PCS, COUNTER_SET_ID, "counter_set_id", TP_INT, 0)     \
	X(PCS, COUNTER_ID, "counter_id", TP_INT, 0)

/* TracePacket.stack_sample (import/profiling/stack_sample.c): samples,
 * the interned task, execution and async contexts (their sessions are
 * rows of perf_session); the views of sql/ number them after
 * linux.perf's. */
#define TP_SS_SAMPLE_COLS(X)                                    \
	X(SS, ID, "id", TP_ID, 0)                               \
	X(SS, TS, "ts", TP_INT, 0)                              \
	X(SS, SOURCE, "source", TP_STR, 0)                      \
	X(SS, TASK_CONTEXT_ID, "task_context_id", TP_INT, 0)    \
	X(SS, EXECUTION_CONTEXT_ID, "execution_context_id", TP_INT, 0) \
	X(SS, CALLSITE_ID, "callsite_id", TP_INT, 0)            \
	X(SS, SESSION_ID, "session_id", TP_INT, 0)              \
	X(SS, COUNTER_SET_ID, "counter_set_id", TP_INT, 0)

#define TP_SS_TASK_COLS(X)                                      \
	X(SS_TASK, ID, "id", TP_ID, 0)                          \
	X(SS_TASK, UPID, "upid", TP_INT, 0)                     \
	X(SS_TASK, UTID, "utid", TP_INT, 0)                     \
	X(SS_TASK, ASYNC_CONTEXT_ID, "async_context_id", TP_INT, 0)

#define TP_SS_EXEC_COLS(X)                                      \
	X(SS_EXEC, ID, "id", TP_ID, 0)                          \
	X(SS_EXEC, UCPU, "ucpu", TP_INT, 0)                     \
	X(SS_EXEC, CPU_MODE, "cpu_mode", TP_STR, 0)

#define TP_SS_ASYNC_COLS(X)                                     \
	X(SS_ASYNC, ID, "id", TP_ID, 0)                         \
	X(SS_ASYNC, NAME, "name", TP_STR, 0)                    \
	X(SS_ASYNC, KIND, "kind", TP_STR, 0)                    \
	X(SS_ASYNC, PARENT_ID, "parent_id", TP_INT, 0)

/* TracePacket.art_process_metadata (import/profiling/art_metadata.c):
 * the OutOfMemoryError of a Java heap dump and the stack that threw it. */
#define TP_HG_OOME_COLS(X)                                      \
	X(HG_OOME, ID, "id", TP_ID, 0)                          \
	X(HG_OOME, HEAP_GRAPH_ID, "heap_graph_id", TP_INT, 0)   \
	X(HG_OOME, ALLOCATION_SIZE_BYTES, "allocation_size_bytes", TP_INT, 0) \
	X(HG_OOME, TOTAL_BYTES_FREE, "total_bytes_free", TP_INT, 0) \
	X(HG_OOME, FREE_BYTES_UNTIL_OOM, "free_bytes_until_oom", TP_INT, 0) \
	X(HG_OOME, ERROR_MSG, "error_msg", TP_STR, 0)

#define TP_HG_THREAD_CS_COLS(X)                                 \
	X(HG_TCS, ID, "id", TP_ID, 0)                           \
	X(HG_TCS, HEAP_GRAPH_ID, "heap_graph_id", TP_INT, 0)    \
	X(HG_TCS, UTID, "utid", TP_INT, 0)                      \
	X(HG_TCS, CALLSITE_ID, "callsite_id", TP_INT, 0)

/* The callstacks of track events (import/track_event): one row per slice
 * begin (callsite_id) or end (end_callsite_id) that carried one. */
#define TP_TE_CALLSTACK_COLS(X)                                 \
	X(TE_CS, ID, "id", TP_ID, 0)                            \
	X(TE_CS, SLICE_ID, "slice_id", TP_INT, 0)               \
	X(TE_CS, TRACK_ID, "track_id", TP_INT, 0)               \
	X(TE_CS, CALLSITE_ID, "callsite_id", TP_INT, 0)         \
	X(TE_CS, END_CALLSITE_ID, "end_callsite_id", TP_INT, 0) \
	X(TE_CS, WEIGHT, "weight", TP_REAL, 0)

/* TracePacket.smaps_packet (import/profiling/smaps.c), as Perfetto's
 * profiler_smaps. */
#define TP_SMAPS_COLS(X)                                        \
	X(SMAPS, ID, "id", TP_ID, 0)                            \
	X(SMAPS, UPID, "upid", TP_INT, 0) \
	X(SMAPS, TS, "ts", TP_INT, 0) \
	X(SMAPS, PATH, "path", TP_STR, 0) \
	X(SMAPS, PATH_TRIMMED, "path_trimmed", TP_STR, 0) \
	X(SMAPS, AGGREGATE_COUNT, "aggregate_count", TP_INT, 0) \
	X(SMAPS, IS_DELETED, "is_deleted", TP_INT, 0) \
	X(SMAPS, SIZE_KB, "size_kb", TP_INT, 0) \
	X(SMAPS, PRIVATE_DIRTY_KB, "private_dirty_kb", TP_INT, 0) \
	X(SMAPS, SWAP_KB, "swap_kb", TP_INT, 0) \
	X(SMAPS, FILE_NAME, "file_name", TP_STR, 0) \
	X(SMAPS, START_ADDRESS, "start_address", TP_INT, 0) \
	X(SMAPS, MODULE_TIMESTAMP, "module_timestamp", TP_INT, 0) \
	X(SMAPS, MODULE_DEBUGID, "module_debugid", TP_STR, 0) \
	X(SMAPS, MODULE_DEBUG_PATH, "module_debug_path", TP_STR, 0) \
	X(SMAPS, PROTECTION_FLAGS, "protection_flags", TP_INT, 0) \
	X(SMAPS, PRIVATE_CLEAN_RESIDENT_KB, "private_clean_resident_kb", TP_INT, 0) \
	X(SMAPS, SHARED_DIRTY_RESIDENT_KB, "shared_dirty_resident_kb", TP_INT, 0) \
	X(SMAPS, SHARED_CLEAN_RESIDENT_KB, "shared_clean_resident_kb", TP_INT, 0) \
	X(SMAPS, LOCKED_KB, "locked_kb", TP_INT, 0) \
	X(SMAPS, PROPORTIONAL_RESIDENT_KB, "proportional_resident_kb", TP_INT, 0) \
	X(SMAPS, RSS_KB, "rss_kb", TP_INT, 0) \
	X(SMAPS, ANONYMOUS_KB, "anonymous_kb", TP_INT, 0) \
	X(SMAPS, PSS_DIRTY_KB, "pss_dirty_kb", TP_INT, 0) \
	X(SMAPS, SWAP_PSS_KB, "swap_pss_kb", TP_INT, 0)

/* Symbols of frames (source file and line), rows of one frame sharing a
 * symbol_set_id, as Perfetto's stack_profile_symbol. */
#define TP_SP_SYMBOL_COLS(X)                                    \
	X(SP_SYM, ID, "id", TP_ID, 0)                           \
	X(SP_SYM, SYMBOL_SET_ID, "symbol_set_id", TP_INT, 0)    \
	X(SP_SYM, NAME, "name", TP_STR, 0)                      \
	X(SP_SYM, SOURCE_FILE, "source_file", TP_STR, 0)        \
	X(SP_SYM, LINE_NUMBER, "line_number", TP_INT, 0)        \
	X(SP_SYM, INLINED, "inlined", TP_INT, 0)

/* heapprofd dumps (import/profiling): the window each dump of a heap
 * covers, and per callsite the allocations (count, size > 0) and frees
 * (< 0) since the previous dump, as Perfetto's heap_profile(_allocation). */
#define TP_HEAP_PROFILE_COLS(X)                                 \
	X(HP, ID, "id", TP_ID, 0)                               \
	X(HP, TS, "ts", TP_INT, 0)                              \
	X(HP, TS_END, "ts_end", TP_INT, 0)                      \
	X(HP, DUR, "dur", TP_INT, 0)                            \
	X(HP, UPID, "upid", TP_INT, 0)                          \
	X(HP, HEAP_NAME, "heap_name", TP_STR, 0)

#define TP_HEAP_PROFILE_ALLOCATION_COLS(X)                      \
	X(HPA, ID, "id", TP_ID, 0)                              \
	X(HPA, TS, "ts", TP_INT, 0)                             \
	X(HPA, UPID, "upid", TP_INT, 0)                         \
	X(HPA, HEAP_NAME, "heap_name", TP_STR, 0)               \
	X(HPA, CALLSITE_ID, "callsite_id", TP_INT, 0)           \
	X(HPA, COUNT, "count", TP_INT, 0)                       \
	X(HPA, SIZE, "size", TP_INT, 0)
/* Android's installed packages (packages_list), each name once. */
#define TP_PACKAGE_LIST_COLS(X)                                          \
	X(PKG, ID, "id", TP_ID, 0)                                       \
	X(PKG, PACKAGE_NAME, "package_name", TP_STR, 0)                  \
	X(PKG, UID, "uid", TP_INT, 0)                                    \
	X(PKG, DEBUGGABLE, "debuggable", TP_INT, 0)                      \
	X(PKG, PROFILEABLE_FROM_SHELL, "profileable_from_shell", TP_INT, 0) \
	X(PKG, VERSION_CODE, "version_code", TP_INT, 0)

/* Log entries (systemd's journal; Android's logcat would join them),
 * Perfetto's __intrinsic_logs. */
#define TP_LOG_COLS(X)                                   \
	X(LOG, ID, "id", TP_ID, 0)                       \
	X(LOG, TS, "ts", TP_INT, 0)                      \
	X(LOG, UTID, "utid", TP_INT, 0)                  \
	X(LOG, PRIO, "prio", TP_INT, 0)                  \
	X(LOG, LOG_SOURCE, "log_source", TP_STR, 0)      \
	X(LOG, TAG, "tag", TP_STR, 0)                    \
	X(LOG, MSG, "msg", TP_STR, 0)                    \
	X(LOG, ARG_SET_ID, "arg_set_id", TP_INT, 0)

/* ART's Java heap dumps (import/profiling/heap_graph.c), as Perfetto's
 * heap_graph, heap_graph_object, heap_graph_class, heap_graph_reference:
 * one heap_graph row per dump (process, timestamp); an object's outgoing
 * references are the rows of its reference_set_id. */
#define TP_HEAP_GRAPH_COLS(X)                                   \
	X(HG, ID, "id", TP_ID, 0)                               \
	X(HG, TS, "ts", TP_INT, 0)                              \
	X(HG, UPID, "upid", TP_INT, 0)                          \
	X(HG, DUMP_REASON, "dump_reason", TP_STR, 0)            \
	X(HG, HEAP_SIZE, "heap_size", TP_INT, 0)                \
	X(HG, TRUNCATED, "truncated", TP_INT, 0)

#define TP_HEAP_GRAPH_OBJECT_COLS(X)                            \
	X(HGO, ID, "id", TP_ID, 0)                              \
	X(HGO, UPID, "upid", TP_INT, 0)                         \
	X(HGO, GRAPH_SAMPLE_TS, "graph_sample_ts", TP_INT, 0)   \
	X(HGO, SELF_SIZE, "self_size", TP_INT, 0)               \
	X(HGO, NATIVE_SIZE, "native_size", TP_INT, 0)           \
	X(HGO, REFERENCE_SET_ID, "reference_set_id", TP_INT, 0) \
	X(HGO, REACHABLE, "reachable", TP_INT, 0)               \
	X(HGO, HEAP_TYPE, "heap_type", TP_STR, 0)               \
	X(HGO, TYPE_ID, "type_id", TP_INT, 0)                   \
	X(HGO, ROOT_TYPE, "root_type", TP_STR, 0)               \
	X(HGO, ROOT_DISTANCE, "root_distance", TP_INT, 0)       \
	X(HGO, OBJECT_DATA_ID, "object_data_id", TP_INT, 0)

#define TP_HEAP_GRAPH_CLASS_COLS(X)                             \
	X(HGC, ID, "id", TP_ID, 0)                              \
	X(HGC, NAME, "name", TP_STR, 0)                         \
	X(HGC, DEOBFUSCATED_NAME, "deobfuscated_name", TP_STR, 0) \
	X(HGC, LOCATION, "location", TP_STR, 0)                 \
	X(HGC, SUPERCLASS_ID, "superclass_id", TP_INT, 0)       \
	X(HGC, CLASSLOADER_ID, "classloader_id", TP_INT, 0)     \
	X(HGC, KIND, "kind", TP_STR, 0)

#define TP_HEAP_GRAPH_REFERENCE_COLS(X)                         \
	X(HGR, ID, "id", TP_ID, 0)                              \
	X(HGR, REFERENCE_SET_ID, "reference_set_id", TP_INT, 0) \
	X(HGR, OWNER_ID, "owner_id", TP_INT, 0)                 \
	X(HGR, OWNED_ID, "owned_id", TP_INT, 0)                 \
	X(HGR, FIELD_NAME, "field_name", TP_STR, 0)             \
	X(HGR, FIELD_TYPE_NAME, "field_type_name", TP_STR, 0)   \
	X(HGR, DEOBFUSCATED_FIELD_NAME, "deobfuscated_field_name", TP_STR, 0)

/* Advice on the trace's config (import/system/diagnostics.c), as
 * Perfetto's __intrinsic_trace_diagnostics. */
#define TP_TRACE_DIAGNOSTICS_COLS(X)                            \
	X(TDIAG, ID, "id", TP_ID, 0)                            \
	X(TDIAG, KEY, "key", TP_STR, 0)                         \
	X(TDIAG, TITLE, "title", TP_STR, 0)                     \
	X(TDIAG, DESCRIPTION, "description", TP_STR, 0)         \
	X(TDIAG, REMEDIATION, "remediation", TP_STR, 0)         \
	X(TDIAG, CONFIDENCE, "confidence", TP_REAL, 0)          \
	X(TDIAG, TRACE_ID, "trace_id", TP_INT, 0)

/* IRQ numbers and names (TracePacket.interrupt_info), each irq once per machine. */
#define TP_IRQ_MAPPING_COLS(X)                                  \
	X(IRQMAP, ID, "id", TP_ID, 0)                           \
	X(IRQMAP, IRQ_ID, "irq_id", TP_INT, 0)                  \
	X(IRQMAP, NAME, "name", TP_STR, 0)                      \
	X(IRQMAP, MACHINE_ID, "machine_id", TP_INT, 0)

/* Primitive fields of heap graph objects (a Bitmap's id, source id, width
 * and height), a set per object, and the object's data row naming it. */
#define TP_HEAP_GRAPH_PRIMITIVE_COLS(X)                         \
	X(HGP, ID, "id", TP_ID, 0)                              \
	X(HGP, FIELD_SET_ID, "field_set_id", TP_INT, 0)         \
	X(HGP, FIELD_NAME, "field_name", TP_STR, 0)             \
	X(HGP, FIELD_TYPE, "field_type", TP_STR, 0)             \
	X(HGP, BOOL_VALUE, "bool_value", TP_INT, 0)             \
	X(HGP, BYTE_VALUE, "byte_value", TP_INT, 0)             \
	X(HGP, CHAR_VALUE, "char_value", TP_INT, 0)             \
	X(HGP, SHORT_VALUE, "short_value", TP_INT, 0)           \
	X(HGP, INT_VALUE, "int_value", TP_INT, 0)               \
	X(HGP, LONG_VALUE, "long_value", TP_INT, 0)             \
	X(HGP, FLOAT_VALUE, "float_value", TP_REAL, 0)          \
	X(HGP, DOUBLE_VALUE, "double_value", TP_REAL, 0)

#define TP_HEAP_GRAPH_OBJECT_DATA_COLS(X)                       \
	X(HGD, ID, "id", TP_ID, 0)                              \
	X(HGD, FIELD_SET_ID, "field_set_id", TP_INT, 0)         \
	X(HGD, VALUE_STRING, "value_string", TP_STR, 0)         \
	X(HGD, ARRAY_ELEMENT_TYPE, "array_element_type", TP_STR, 0) \
	X(HGD, ARRAY_ELEMENT_COUNT, "array_element_count", TP_INT, 0) \
	X(HGD, ARRAY_DATA_ID, "array_data_id", TP_INT, 0)       \
	X(HGD, ARRAY_DATA_HASH, "array_data_hash", TP_INT, 0)

/* SurfaceFlinger layers snapshots (TracePacket field 93, Winscope), as
 * Perfetto's __intrinsic_surfaceflinger_layers_snapshot: the snapshot's
 * proto kept whole, as base64 in the string pool (base64_proto_id, a
 * string id). */
#define TP_SF_SNAPSHOT_COLS(X)                                  \
	X(SFSNAP, ID, "id", TP_ID, 0)                           \
	X(SFSNAP, TS, "ts", TP_INT, 0)                          \
	X(SFSNAP, ARG_SET_ID, "arg_set_id", TP_INT, 0)          \
	X(SFSNAP, BASE64_PROTO_ID, "base64_proto_id", TP_INT, 0) \
	X(SFSNAP, SEQUENCE_ID, "sequence_id", TP_INT, 0)        \
	X(SFSNAP, HAS_INVALID_ELAPSED_TS, "has_invalid_elapsed_ts", TP_INT, 0)

/* Each layer of each snapshot, as __intrinsic_surfaceflinger_layer, with
 * the columns read from the layer's proto (not the computed visibility
 * and rectangles). */
#define TP_SF_LAYER_COLS(X)                                     \
	X(SFLAYER, ID, "id", TP_ID, 0)                          \
	X(SFLAYER, SNAPSHOT_ID, "snapshot_id", TP_INT, 0)       \
	X(SFLAYER, ARG_SET_ID, "arg_set_id", TP_INT, 0)         \
	X(SFLAYER, BASE64_PROTO_ID, "base64_proto_id", TP_INT, 0) \
	X(SFLAYER, LAYER_ID, "layer_id", TP_INT, 0)             \
	X(SFLAYER, LAYER_NAME, "layer_name", TP_STR, 0)         \
	X(SFLAYER, PARENT, "parent", TP_INT, 0)                 \
	X(SFLAYER, HWC_COMPOSITION_TYPE, "hwc_composition_type", TP_INT, 0) \
	X(SFLAYER, Z_ORDER_RELATIVE_OF, "z_order_relative_of", TP_INT, 0)

#define TP_COL_ENUM(t, c, name, type, flags) t##_##c,
enum { TP_SCHED_COLS(TP_COL_ENUM) SCHED_N_COLS };
enum { TP_THREAD_STATE_COLS(TP_COL_ENUM) TSTATE_N_COLS };
enum { TP_THREAD_COLS(TP_COL_ENUM) THREAD_N_COLS };
enum { TP_PROCESS_COLS(TP_COL_ENUM) PROCESS_N_COLS };
enum { TP_CPU_COLS(TP_COL_ENUM) CPU_N_COLS };
enum { TP_MACHINE_COLS(TP_COL_ENUM) MACHINE_N_COLS };
enum { TP_TRACK_COLS(TP_COL_ENUM) TRACK_N_COLS };
enum { TP_COUNTER_COLS(TP_COL_ENUM) COUNTER_N_COLS };
enum { TP_SLICE_COLS(TP_COL_ENUM) SLICE_N_COLS };
enum { TP_INSTANT_COLS(TP_COL_ENUM) INSTANT_N_COLS };
enum { TP_STATE_COLS(TP_COL_ENUM) STATE_N_COLS };
enum { TP_FLOW_COLS(TP_COL_ENUM) FLOW_N_COLS };
enum { TP_FTRACE_EVENT_COLS(TP_COL_ENUM) FTRACE_N_COLS };
enum { TP_ARGS_COLS(TP_COL_ENUM) ARGS_N_COLS };
enum { TP_STATS_COLS(TP_COL_ENUM) STATS_N_COLS };
enum { TP_METADATA_COLS(TP_COL_ENUM) META_N_COLS };
enum { TP_CLOCK_SNAPSHOT_COLS(TP_COL_ENUM) CLOCKS_N_COLS };
enum { TP_CPU_FREQ_COLS(TP_COL_ENUM) CPU_FREQ_N_COLS };
enum { TP_SP_MAPPING_COLS(TP_COL_ENUM) SP_MAP_N_COLS };
enum { TP_SP_FRAME_COLS(TP_COL_ENUM) SP_FRAME_N_COLS };
enum { TP_SP_CALLSITE_COLS(TP_COL_ENUM) SP_CS_N_COLS };
enum { TP_PERF_SAMPLE_COLS(TP_COL_ENUM) PERF_N_COLS };
enum { TP_PERF_SESSION_COLS(TP_COL_ENUM) PERF_SESS_N_COLS };
enum { TP_PROFILER_COUNTER_SET_COLS(TP_COL_ENUM) PCS_N_COLS };
enum { TP_HEAP_PROFILE_COLS(TP_COL_ENUM) HP_N_COLS };
enum { TP_HEAP_PROFILE_ALLOCATION_COLS(TP_COL_ENUM) HPA_N_COLS };
enum { TP_PACKAGE_LIST_COLS(TP_COL_ENUM) PKG_N_COLS };
enum { TP_LOG_COLS(TP_COL_ENUM) LOG_N_COLS };
enum { TP_HEAP_GRAPH_COLS(TP_COL_ENUM) HG_N_COLS };
enum { TP_HEAP_GRAPH_OBJECT_COLS(TP_COL_ENUM) HGO_N_COLS };
enum { TP_HEAP_GRAPH_CLASS_COLS(TP_COL_ENUM) HGC_N_COLS };
enum { TP_HEAP_GRAPH_REFERENCE_COLS(TP_COL_ENUM) HGR_N_COLS };
enum { TP_TRACE_DIAGNOSTICS_COLS(TP_COL_ENUM) TDIAG_N_COLS };
enum { TP_IRQ_MAPPING_COLS(TP_COL_ENUM) IRQMAP_N_COLS };
enum { TP_HEAP_GRAPH_PRIMITIVE_COLS(TP_COL_ENUM) HGP_N_COLS };
enum { TP_HEAP_GRAPH_OBJECT_DATA_COLS(TP_COL_ENUM) HGD_N_COLS };
enum { TP_SF_SNAPSHOT_COLS(TP_COL_ENUM) SFSNAP_N_COLS };
enum { TP_SF_LAYER_COLS(TP_COL_ENUM) SFLAYER_N_COLS };
enum { TP_SS_SAMPLE_COLS(TP_COL_ENUM) SS_N_COLS };
enum { TP_SS_TASK_COLS(TP_COL_ENUM) SS_TASK_N_COLS };
enum { TP_SS_EXEC_COLS(TP_COL_ENUM) SS_EXEC_N_COLS };
enum { TP_SS_ASYNC_COLS(TP_COL_ENUM) SS_ASYNC_N_COLS };
enum { TP_SP_SYMBOL_COLS(TP_COL_ENUM) SP_SYM_N_COLS };
enum { TP_HG_OOME_COLS(TP_COL_ENUM) HG_OOME_N_COLS };
enum { TP_HG_THREAD_CS_COLS(TP_COL_ENUM) HG_TCS_N_COLS };
enum { TP_TE_CALLSTACK_COLS(TP_COL_ENUM) TE_CS_N_COLS };
enum { TP_SMAPS_COLS(TP_COL_ENUM) SMAPS_N_COLS };
#undef TP_COL_ENUM

/* Every table; tp_db_table(db, i) walks them in this order. */
struct tp_db {
	struct tp_strings strings;
	struct tp_table sched;
	struct tp_table thread_state;
	struct tp_table thread;
	struct tp_table process;
	struct tp_table cpu;
	struct tp_table machine;
	struct tp_table track;
	struct tp_table counter;
	struct tp_table slice;
	struct tp_table instant;
	struct tp_table state;
	struct tp_table flow;
	struct tp_table ftrace_event;
	struct tp_table args;
	struct tp_table stats;
	struct tp_table metadata;
	struct tp_table clock_snapshot;
	struct tp_table cpu_freq;
	struct tp_table sp_mapping;
	struct tp_table sp_frame;
	struct tp_table sp_callsite;
	struct tp_table perf_sample;
	struct tp_table perf_session;
	struct tp_table profiler_counter_set;
	struct tp_table heap_profile;
	struct tp_table heap_profile_allocation;
	struct tp_table package_list;
	struct tp_table logs;
	struct tp_table heap_graph;
	struct tp_table heap_graph_object;
	struct tp_table heap_graph_class;
	struct tp_table heap_graph_reference;
	struct tp_table trace_diagnostics;
	struct tp_table irq_mapping;
	struct tp_table heap_graph_primitive;
	struct tp_table heap_graph_object_data;
	struct tp_table sf_snapshot;
	struct tp_table sf_layer;
	struct tp_table ss_sample;
	struct tp_table ss_task;
	struct tp_table ss_exec;
	struct tp_table ss_async;
	struct tp_table sp_symbol;
	struct tp_table hg_oome;
	struct tp_table hg_thread_cs;
	struct tp_table te_callstacks;
	struct tp_table smaps;
	/* trace_bounds: first and last timestamp of any event (TP_NULL_INT: none). */
	int64_t trace_start_ts, trace_end_ts;
};

#define TP_DB_N_TABLES 47

int tp_db_init(struct tp_db *db);
void tp_db_fini(struct tp_db *db);
struct tp_table *tp_db_table(struct tp_db *db, unsigned i);

/* String shorthand. */
static inline uint32_t tp_db_str(struct tp_db *db, const char *s)
{
	return tp_str_intern_c(&db->strings, s);
}

/* Grows the trace bounds to include @ts. */
static inline void tp_bounds_add(struct tp_db *db, int64_t ts)
{
	if (db->trace_start_ts == TP_NULL_INT || ts < db->trace_start_ts)
		db->trace_start_ts = ts;
	if (db->trace_end_ts == TP_NULL_INT || ts > db->trace_end_ts)
		db->trace_end_ts = ts;
}

#endif

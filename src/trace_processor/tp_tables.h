/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tp_tables.h - the schema of every table the trace processor fills, with
 * Perfetto's table and column names, and struct tp_db that holds them.
 * Each table is an X-macro list (prefix, column, SQL name, type, flags):
 * one list gives both the column enum (SCHED_TS, ...) and the spec array.
 * Tables whose SQL name starts with "__" are exposed through views
 * (tp_sql.c) that rename, filter or add computed columns.
 */
#ifndef PFC_TRACE_PROCESSOR_TP_TABLES_H
#define PFC_TRACE_PROCESSOR_TP_TABLES_H

#include "trace_processor/tp_storage.h"

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
	X(THREAD, ID, "id", TP_ID, 0)                           \
	X(THREAD, UTID, "utid", TP_ID, 0)                       \
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
	X(PROCESS, ID, "id", TP_ID, 0)                          \
	X(PROCESS, UPID, "upid", TP_ID, 0)                      \
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

/* Every track; the *_track views pick by the hidden classification columns. */
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
	X(STATS, ID, "id", TP_ID, TP_HIDDEN)                    \
	X(STATS, NAME, "name", TP_STR, 0)                       \
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
enum { TP_FLOW_COLS(TP_COL_ENUM) FLOW_N_COLS };
enum { TP_FTRACE_EVENT_COLS(TP_COL_ENUM) FTRACE_N_COLS };
enum { TP_ARGS_COLS(TP_COL_ENUM) ARGS_N_COLS };
enum { TP_STATS_COLS(TP_COL_ENUM) STATS_N_COLS };
enum { TP_METADATA_COLS(TP_COL_ENUM) META_N_COLS };
enum { TP_CLOCK_SNAPSHOT_COLS(TP_COL_ENUM) CLOCKS_N_COLS };
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
	struct tp_table flow;
	struct tp_table ftrace_event;
	struct tp_table args;
	struct tp_table stats;
	struct tp_table metadata;
	struct tp_table clock_snapshot;
	/* trace_bounds: first and last timestamp of any event (TP_NULL_INT: none). */
	int64_t trace_start_ts, trace_end_ts;
};

#define TP_DB_N_TABLES 16

int tp_db_init(struct tp_db *db);
void tp_db_fini(struct tp_db *db);
struct tp_table *tp_db_table(struct tp_db *db, unsigned i);

/* String shorthand. */
static inline uint32_t tp_db_str(struct tp_db *db, const char *s)
{
	return tp_str_intern_c(&db->strings, s);
}

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracefs.h - the kernel side of linux.ftrace: finding (or mounting) tracefs,
 * reading and writing its control files, enabling events, the per-CPU buffer
 * size and clock, per-CPU stats, and saving the kernel's ftrace state before
 * we touch it so it can be put back when the last session ends, on SIGTERM,
 * or after a crash (`traced_probes --cleanup-after-crash`, from a state file).
 */
#ifndef PFC_PROBES_TRACEFS_H
#define PFC_PROBES_TRACEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

#define TRACEFS_PATH_MAX 256
/* Enabled events remembered in a saved state. */
#define TRACEFS_MAX_SAVED_EVENTS 4096

struct tracefs {
	char root[TRACEFS_PATH_MAX]; /* e.g. /sys/kernel/tracing (or an instance) */
	unsigned n_cpus;             /* per_cpu/cpuN directories */
};

/* Per-CPU counters from per_cpu/cpuN/stats. */
struct tracefs_cpu_stats {
	uint64_t entries;
	uint64_t overrun;
	uint64_t commit_overrun;
	uint64_t bytes;
	uint64_t oldest_event_ts_ns;
	uint64_t now_ts_ns;
	uint64_t dropped_events;
	uint64_t read_events;
};

/* What we change, as it was before. */
struct tracefs_state {
	bool valid;
	bool tracing_on;
	/* The effective size: the "expanded" one while the kernel has not
	 * allocated the buffer yet ("7 (expanded: 1408)"). */
	uint32_t buffer_size_kb;
	char clock[32];
	char current_tracer[64];
	struct buf set_event;        /* contents of set_event (one group:event per line) */
};

/*
 * tracefs_open() - Find tracefs: /sys/kernel/tracing, then
 * /sys/kernel/debug/tracing; mount it at /sys/kernel/tracing when absent
 * and allowed. @instance: NULL for the top-level buffer, or an instance
 * name (instances/<name> must exist).
 * Return: 0, -ENOENT (no tracefs), -EACCES (not writable), -errno.
 */
int tracefs_open(struct tracefs *fs, const char *instance);

/* Builds "<root>/<rel>" into @out. Return: 0 or -ENAMETOOLONG. */
int tracefs_path(const struct tracefs *fs, const char *rel, char *out, size_t size);
/* Reads a control file (appended to @out, NUL-kept). Return: bytes or -errno. */
int tracefs_read(const struct tracefs *fs, const char *rel, struct buf *out);
/* Writes @s to a control file (O_WRONLY | O_TRUNC). Return: 0 or -errno. */
int tracefs_write(const struct tracefs *fs, const char *rel, const char *s);
/* Appends @s (O_APPEND), as `echo s >> file` does for set_event. */
int tracefs_append(const struct tracefs *fs, const char *rel, const char *s);

int tracefs_set_tracing_on(const struct tracefs *fs, bool on);
int tracefs_set_buffer_size_kb(const struct tracefs *fs, uint32_t kb);
/* Prefers "boot"; returns the clock name actually set (static string). */
int tracefs_set_clock(const struct tracefs *fs, const char *clock);
/* The clock in use: the [bracketed] entry of trace_clock. */
int tracefs_get_clock(const struct tracefs *fs, char *out, size_t size);
/* Enables or disables one event (events/<group>/<name>/enable). */
int tracefs_set_event(const struct tracefs *fs, const char *group, const char *name, bool on);
/* True if events/<group>/<name> exists. */
bool tracefs_has_event(const struct tracefs *fs, const char *group, const char *name);
/* Disables every event (writes "" to set_event) and empties the buffers. */
int tracefs_clear_events(const struct tracefs *fs);
int tracefs_clear_buffers(const struct tracefs *fs);
/* Reads per_cpu/cpuN/stats. */
int tracefs_cpu_stats(const struct tracefs *fs, unsigned cpu, struct tracefs_cpu_stats *out);
/* Parses the text of a per_cpu stats file (exposed for tests). */
int tracefs_parse_cpu_stats(const char *text, size_t len, struct tracefs_cpu_stats *out);

/*
 * Lists the events of a "group/name" pattern; a name of "*" expands to
 * every event of the group (a wildcard group is not supported). @cb gets
 * each existing event; a pattern that matches nothing is reported once
 * with exists=false.
 */
typedef void (*tracefs_event_cb)(const char *group, const char *name, bool exists, void *user);
int tracefs_expand_event(const struct tracefs *fs, const char *pattern, tracefs_event_cb cb,
			 void *user);

/* The effective per-CPU size from the text of buffer_size_kb. */
uint32_t tracefs_parse_buffer_size_kb(const char *text);
/* Saves what tracefs_restore() puts back. */
int tracefs_save(const struct tracefs *fs, struct tracefs_state *out);
int tracefs_restore(const struct tracefs *fs, const struct tracefs_state *st);
void tracefs_state_fini(struct tracefs_state *st);
/* Writes / reads a saved state to a file, for recovery after a crash. */
int tracefs_state_store(const struct tracefs_state *st, const char *path);
int tracefs_state_load(const char *path, struct tracefs_state *out);
/* Where traced_probes keeps the saved state while it has ftrace changed. */
const char *tracefs_state_file(void);

/*
 * tracefs_hard_reset() - What --reset-ftrace does with no saved state:
 * tracing off, every event disabled, nop tracer, buffers emptied.
 */
int tracefs_hard_reset(const struct tracefs *fs);

#endif

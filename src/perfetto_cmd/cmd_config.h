/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_config.h - how the perfetto command gets its TraceConfig: from a file
 * (binary or --txt text format) or built from light-mode flags
 * (`-t 10s -b 32mb sched freq sched/sched_switch`). Pure functions, tested
 * without a service.
 */
#ifndef PFC_PERFETTO_CMD_CMD_CONFIG_H
#define PFC_PERFETTO_CMD_CMD_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

/* Light-mode defaults, as Perfetto's CLI has them. */
#define CMD_DEFAULT_TIME "10s"
#define CMD_DEFAULT_BUFFER "32mb"
/* Light mode flushes every 30 s so long traces reorder little. */
#define CMD_LIGHT_FLUSH_PERIOD_MS 30000
/* Largest config file accepted. */
#define CMD_MAX_CONFIG_BYTES (16u << 20)

struct cmd_light_opts {
	const char *time;            /* "10s", "500ms", "2m", "1h"; NULL = default */
	const char *buffer_size;     /* "32mb", "1gb", "512kb"; NULL = default */
	const char *max_file_size;   /* "" / NULL = none; enables write_into_file */
	const char *const *categories; /* "group/event" or category names */
	size_t n_categories;
	unsigned cpu_profile_hz;     /* 0, or linux.perf sampling at this rate */
};

/*
 * cmd_parse_time_ms() - "10s" -> 10000. Units ms, s, m, h; a bare "0" or ""
 * is 0. Return: 0 or -EINVAL (unknown unit, no digits) / -ERANGE.
 */
int cmd_parse_time_ms(const char *arg, uint64_t *out_ms);
/* "32mb" -> 32768. Units kb/k, mb/m, gb/g. Same errors. */
int cmd_parse_size_kb(const char *arg, uint64_t *out_kb);

/*
 * cmd_config_from_light_opts() - Build the TraceConfig of light mode: one
 * ring buffer, duration, linux.ftrace with the "group/event" arguments as
 * ftrace_events and the others as atrace_categories (traced_probes expands
 * categories such as sched, freq, idle), and linux.process_stats.
 * @out: the binary TraceConfig is appended.  @err: message on failure.
 * Return: 0, -EINVAL (bad flag value; @err names it) or -ENOMEM.
 */
int cmd_config_from_light_opts(const struct cmd_light_opts *o, struct buf *out, char *err,
			       size_t err_size);

/*
 * cmd_config_load() - Read a config from @path ("-" = stdin). With @is_text,
 * parse it as text format; otherwise check that it decodes as a TraceConfig.
 * @out: binary TraceConfig appended.  @err: "file:line:col: message" style.
 * Return: 0, -EINVAL (bad config), -ENOENT/-errno (I/O), -EFBIG.
 */
int cmd_config_load(const char *path, bool is_text, struct buf *out, char *err, size_t err_size);

#endif

// SPDX-License-Identifier: Apache-2.0
/*
 * cmd_config.c - the perfetto command's config sources: light-mode flags
 * turned into a TraceConfig (built with the protobuf-c structs, packed
 * once) and config files in binary or text format, checked before they are
 * sent so a bad config fails here with a clear message.
 */
#include "perfetto_cmd/cmd_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "config/perf_event_config.pb-c.h"
#include "config/trace_config.pb-c.h"
#include "pbtxt/pbtxt.h"

struct unit {
	const char *name;
	uint64_t mult;
};

static int parse_with_units(const char *arg, const struct unit *units, size_t n_units,
			    uint64_t *out)
{
	uint64_t v = 0;
	const char *p = arg;
	size_t i;

	if (!arg || !*arg || strcmp(arg, "0") == 0) {
		*out = 0;
		return 0;
	}
	if (*p < '0' || *p > '9')
		return -EINVAL;
	while (*p >= '0' && *p <= '9') {
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*p - '0');
		p++;
	}
	for (i = 0; i < n_units; i++) {
		if (strcmp(p, units[i].name) == 0) {
			if (units[i].mult && v > UINT64_MAX / units[i].mult)
				return -ERANGE;
			*out = v * units[i].mult;
			return 0;
		}
	}
	return -EINVAL;
}

int cmd_parse_time_ms(const char *arg, uint64_t *out_ms)
{
	static const struct unit units[] = {
		{"ms", 1}, {"s", 1000}, {"m", 60 * 1000}, {"h", 3600 * 1000},
	};

	return parse_with_units(arg, units, PFC_ARRAY_SIZE(units), out_ms);
}

int cmd_parse_size_kb(const char *arg, uint64_t *out_kb)
{
	static const struct unit units[] = {
		{"kb", 1}, {"mb", 1024}, {"gb", 1024 * 1024},
		{"k", 1},  {"m", 1024},  {"g", 1024 * 1024},
	};

	return parse_with_units(arg, units, PFC_ARRAY_SIZE(units), out_kb);
}

int cmd_config_from_light_opts(const struct cmd_light_opts *o, struct buf *out, char *err,
			       size_t err_size)
{
	/* The *_init() functions, not the INIT macros: the macros name deprecated
	 * fields, which clang rejects under -Werror. */
	Perfetto__Protos__TraceConfig cfg;
	Perfetto__Protos__TraceConfig__BufferConfig bufcfg;
	Perfetto__Protos__TraceConfig__BufferConfig *bufs[1] = {&bufcfg};
	Perfetto__Protos__TraceConfig__DataSource ds[3];
	Perfetto__Protos__TraceConfig__DataSource *dsp[3] = {&ds[0], &ds[1], &ds[2]};
	Perfetto__Protos__DataSourceConfig ftrace_ds, ps_ds, perf_ds;
	Perfetto__Protos__FtraceConfig ftrace;
	Perfetto__Protos__PerfEventConfig perf;
	Perfetto__Protos__PerfEvents__Timebase timebase;
	Perfetto__Protos__PerfEventConfig__CallstackSampling callstacks;
	char **events = NULL, **cats = NULL;
	uint64_t duration_ms, buffer_kb, max_file_kb;
	size_t i, n;
	int rc;

	if (cmd_parse_time_ms(o->time ? o->time : CMD_DEFAULT_TIME, &duration_ms) ||
	    duration_ms > UINT32_MAX) {
		snprintf(err, err_size, "--time argument is invalid: '%s' (use e.g. 10s, 500ms, 2m)",
			 o->time);
		return -EINVAL;
	}
	if (cmd_parse_size_kb(o->buffer_size ? o->buffer_size : CMD_DEFAULT_BUFFER, &buffer_kb) ||
	    buffer_kb == 0 || buffer_kb > UINT32_MAX) {
		snprintf(err, err_size, "--buffer argument is invalid: '%s' (use e.g. 32mb, 512kb)",
			 o->buffer_size);
		return -EINVAL;
	}
	if (cmd_parse_size_kb(o->max_file_size, &max_file_kb) ||
	    max_file_kb > UINT64_MAX / 1024) {
		snprintf(err, err_size, "--size argument is invalid: '%s' (use e.g. 100mb, 2gb)",
			 o->max_file_size);
		return -EINVAL;
	}

	perfetto__protos__trace_config__init(&cfg);
	perfetto__protos__trace_config__buffer_config__init(&bufcfg);
	perfetto__protos__trace_config__data_source__init(&ds[0]);
	perfetto__protos__trace_config__data_source__init(&ds[1]);
	perfetto__protos__trace_config__data_source__init(&ds[2]);
	perfetto__protos__data_source_config__init(&ftrace_ds);
	perfetto__protos__data_source_config__init(&ps_ds);
	perfetto__protos__ftrace_config__init(&ftrace);
	events = calloc(o->n_categories + 1, sizeof(*events));
	cats = calloc(o->n_categories + 1, sizeof(*cats));
	if (!events || !cats) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < o->n_categories; i++) {
		char *c = (char *)o->categories[i];

		if (strchr(c, '/'))
			events[ftrace.n_ftrace_events++] = c;
		else
			cats[ftrace.n_atrace_categories++] = c;
	}
	ftrace.ftrace_events = events;
	ftrace.atrace_categories = cats;
	ftrace.has_symbolize_ksyms = 1;
	ftrace.symbolize_ksyms = 1;

	ftrace_ds.name = "linux.ftrace";
	ftrace_ds.ftrace_config = &ftrace;
	ps_ds.name = "linux.process_stats";
	ps_ds.has_target_buffer = 1;
	ps_ds.target_buffer = 0;
	ds[0].config = &ftrace_ds;
	ds[1].config = &ps_ds;

	bufcfg.has_size_kb = 1;
	bufcfg.size_kb = (uint32_t)buffer_kb;
	cfg.n_buffers = 1;
	cfg.buffers = bufs;
	cfg.n_data_sources = 2;
	cfg.data_sources = dsp;
	if (o->cpu_profile_hz) {
		/* --cpu-profile HZ: every CPU, kernel and DWARF-unwound user stacks. */
		perfetto__protos__data_source_config__init(&perf_ds);
		perfetto__protos__perf_event_config__init(&perf);
		perfetto__protos__perf_events__timebase__init(&timebase);
		perfetto__protos__perf_event_config__callstack_sampling__init(&callstacks);
		timebase.interval_case = PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__INTERVAL_FREQUENCY;
		timebase.frequency = o->cpu_profile_hz;
		timebase.event_case = PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__EVENT_COUNTER;
		timebase.counter = PERFETTO__PROTOS__PERF_EVENTS__COUNTER__SW_CPU_CLOCK;
		callstacks.has_kernel_frames = 1;
		callstacks.kernel_frames = 1;
		callstacks.has_user_frames = 1;
		callstacks.user_frames = PERFETTO__PROTOS__PERF_EVENT_CONFIG__UNWIND_MODE__UNWIND_DWARF;
		perf.timebase = &timebase;
		perf.callstack_sampling = &callstacks;
		perf_ds.name = "linux.perf";
		perf_ds.perf_event_config = &perf;
		ds[2].config = &perf_ds;
		cfg.n_data_sources = 3;
	}
	cfg.has_duration_ms = 1;
	cfg.duration_ms = (uint32_t)duration_ms;
	cfg.has_flush_period_ms = 1;
	cfg.flush_period_ms = CMD_LIGHT_FLUSH_PERIOD_MS;
	cfg.has_max_file_size_bytes = 1;
	cfg.max_file_size_bytes = max_file_kb * 1024;
	if (max_file_kb) {
		cfg.has_write_into_file = 1;
		cfg.write_into_file = 1;
	}

	n = perfetto__protos__trace_config__get_packed_size(&cfg);
	rc = buf_reserve(out, n);
	if (rc == 0)
		out->len += perfetto__protos__trace_config__pack(&cfg, out->data + out->len);
out:
	free(events);
	free(cats);
	return rc;
}

static int read_all(const char *path, struct buf *out)
{
	FILE *f = stdin;
	char tmp[65536];
	size_t n;
	int rc = 0;

	if (strcmp(path, "-") != 0) {
		f = fopen(path, "rbe");
		if (!f)
			return err_from_errno();
	}
	while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0) {
		if (out->len + n > CMD_MAX_CONFIG_BYTES) {
			rc = -EFBIG;
			break;
		}
		rc = buf_append(out, tmp, n);
		if (rc)
			break;
	}
	if (!rc && ferror(f))
		rc = -EIO;
	if (f != stdin)
		fclose(f);
	return rc;
}

int cmd_config_load(const char *path, bool is_text, struct buf *out, char *err, size_t err_size)
{
	const ProtobufCMessageDescriptor *desc = &perfetto__protos__trace_config__descriptor;
	struct buf raw = BUF_INIT;
	struct pbtxt_error perr;
	ProtobufCMessage *m;
	int rc;

	rc = read_all(path, &raw);
	if (rc) {
		snprintf(err, err_size, "cannot read config %s: %s", path, err_str(rc));
		goto out;
	}
	if (is_text) {
		rc = pbtxt_parse(desc, (const char *)raw.data, raw.len, out, &perr);
		if (rc)
			snprintf(err, err_size, "%s: %s", strcmp(path, "-") ? path : "stdin",
				 perr.msg[0] ? perr.msg : err_str(rc));
		goto out;
	}
	m = protobuf_c_message_unpack(desc, NULL, raw.len, raw.data);
	if (!m) {
		snprintf(err, err_size,
			 "%s is not a binary TraceConfig (for a text config, pass --txt)", path);
		rc = -EINVAL;
		goto out;
	}
	protobuf_c_message_free_unpacked(m, NULL);
	rc = buf_append(out, raw.data, raw.len);
out:
	buf_fini(&raw);
	return rc;
}

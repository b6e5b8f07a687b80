// SPDX-License-Identifier: Apache-2.0
/*
 * diagnostics.c - __intrinsic_trace_diagnostics: advice on the trace's own
 * config, as Perfetto's trace processor gives it, run once when the import
 * ends (on the last TraceConfig seen, with the stats and metadata known).
 * Each rule that fires adds a row: a key (Perfetto's), a title, what is
 * wrong, what to do (our own wording) and a confidence in [0, 1]. The rules
 * look at every ftrace / data source config of the trace:
 *   preserve_ftrace_buffer_late_start  preserve_ftrace_buffer, tracing
 *                                      started > 5 min after boot
 *   tiny_ftrace_buffer                 buffer_size_kb in (0, 1024)
 *   low_ftrace_drain_bandwidth         buffer_size_kb / drain_period_ms < 5 MB/s
 *   extreme_ftrace_drain_period        drain_period_ms outside [100, 60000]
 *   syscalls_without_filter            raw_syscalls without syscall_events
 *   function_graph_requires_symbolize_ksyms, events_require_symbolize_ksyms
 *   discard_buffer_for_streaming       ftrace / track_event into a DISCARD
 *                                      buffer of a streamed trace
 *   heapprofd_sampling_interval_too_low  sampling_interval_bytes < 100 KiB
 *   display_video_not_enabled          display video asked on a user build
 *                                      and nothing came, no error either
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/common/common.h"
#include "trace_processor/import/system/system.h"

#define MAX_DS 256 /* data sources looked at */

struct diag {
	struct tp_import *imp;
	bool has_ftrace_loss; /* ftrace_cpu_has_data_loss / *_overrun_delta > 0 */
	bool has_traced_loss;
	bool has_heapprofd_error;
	bool has_video_error;
};

static void add(struct diag *d, const char *key, const char *title, const char *desc,
		const char *what_to_do, double confidence)
{
	struct tp_table *t = &d->imp->db->trace_diagnostics;
	int64_t r = tp_table_append(t);

	if (r < 0)
		return;
	tp_set_str(t, TDIAG_KEY, (size_t)r, tp_db_str(d->imp->db, key));
	tp_set_str(t, TDIAG_TITLE, (size_t)r, tp_db_str(d->imp->db, title));
	tp_set_str(t, TDIAG_DESCRIPTION, (size_t)r, tp_db_str(d->imp->db, desc));
	tp_set_str(t, TDIAG_REMEDIATION, (size_t)r, tp_db_str(d->imp->db, what_to_do));
	tp_set_real(t, TDIAG_CONFIDENCE, (size_t)r, confidence);
	tp_set_int(t, TDIAG_TRACE_ID, (size_t)r, 0);
}

static bool starts_with(const char *s, const char *prefix)
{
	return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

/* What the stats say (any positive value of the kinds the rules ask about). */
static void scan_stats(struct diag *d)
{
	struct tp_table *t = &d->imp->db->stats;
	const struct tp_strings *s = &d->imp->db->strings;

	for (size_t r = 0; r < t->n_rows; r++) {
		const char *name = tp_str_get(s, tp_get_str(t, STATS_NAME, r));
		const char *sev = tp_str_get(s, tp_get_str(t, STATS_SEVERITY, r));
		int64_t v = tp_get_int(t, STATS_VALUE, r);
		bool error = sev && strcmp(sev, "error") == 0;
		bool loss = sev && strcmp(sev, "data_loss") == 0;

		if (v == TP_NULL_INT || v <= 0 || !name)
			continue;
		if (strcmp(name, "ftrace_cpu_has_data_loss") == 0 ||
		    strcmp(name, "ftrace_cpu_overrun_delta") == 0 ||
		    strcmp(name, "ftrace_cpu_commit_overrun_delta") == 0)
			d->has_ftrace_loss = true;
		if (loss && starts_with(name, "traced_"))
			d->has_traced_loss = true;
		if (error && starts_with(name, "heapprofd"))
			d->has_heapprofd_error = true;
		if ((error || loss) && starts_with(name, "android_video_"))
			d->has_video_error = true;
	}
}

/* A metadata row of the host: *@out_int / *@out_str (borrowed). */
static bool metadata(struct diag *d, const char *name, int64_t *out_int, const char **out_str)
{
	struct tp_table *t = &d->imp->db->metadata;
	uint32_t id = tp_str_find(&d->imp->db->strings, name, strlen(name));

	for (size_t r = 0; id && r < t->n_rows; r++) {
		if (tp_get_str(t, META_NAME, r) != id)
			continue;
		if (out_int)
			*out_int = tp_get_int(t, META_INT_VALUE, r);
		if (out_str)
			*out_str = tp_str_get(&d->imp->db->strings, tp_get_str(t, META_STR_VALUE, r));
		return true;
	}
	return false;
}

/* The build type of the Android build fingerprint ("...:user/release-keys"). */
static bool is_user_build(struct diag *d)
{
	const char *fp = NULL, *colon, *slash;
	size_t len;

	if (!metadata(d, "android_build_fingerprint", NULL, &fp) || !fp)
		return false;
	colon = strrchr(fp, ':');
	if (!colon)
		return false;
	slash = strchr(colon + 1, '/');
	len = slash ? (size_t)(slash - colon - 1) : strlen(colon + 1);
	return len == 4 && memcmp(colon + 1, "user", 4) == 0;
}

/* Nanoseconds since boot when tracing started, or -1. */
static int64_t started_since_boot(struct diag *d)
{
	int64_t v = TP_NULL_INT, boot;
	uint64_t clock;

	if (!metadata(d, "tracing_started_ns", &v, NULL) || v == TP_NULL_INT)
		return -1;
	clock = tp_clock_trace_clock(tp_clock_graph(d->imp));
	if (clock != TP_CLOCK_BOOTTIME &&
	    tp_clock_convert(tp_clock_graph(d->imp), clock, v, TP_CLOCK_BOOTTIME, &boot) == 0)
		return boot;
	return v;
}

struct ftrace_cfg {
	bool has_buffer_kb, has_period, preserve, syscall_filter, ksyms, function_graph;
	uint64_t buffer_kb, period_ms;
	const char *ksym_event; /* the first event needing ksyms, or NULL */
	bool raw_syscalls;
};

static bool event_is(const struct pz_field *f, const char *name)
{
	return f->size == strlen(name) && memcmp(f->data, name, f->size) == 0;
}

static void read_ftrace(const uint8_t *data, size_t len, struct ftrace_cfg *c)
{
	static const char *const k_ksym_events[] = {
		"workqueue/workqueue_execute_start",
		"sched/sched_blocked_reason",
	};
	struct pz_reader r;
	struct pz_field f;

	memset(c, 0, sizeof(*c));
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		switch (f.id) {
		case PB_FTRACE_CONFIG__BUFFER_SIZE_KB:
			c->has_buffer_kb = true;
			c->buffer_kb = (uint32_t)f.value;
			break;
		case PB_FTRACE_CONFIG__DRAIN_PERIOD_MS:
			c->has_period = true;
			c->period_ms = (uint32_t)f.value;
			break;
		case PB_FTRACE_CONFIG__PRESERVE_FTRACE_BUFFER: c->preserve = f.value != 0; break;
		case PB_FTRACE_CONFIG__SYMBOLIZE_KSYMS: c->ksyms = f.value != 0; break;
		case PB_FTRACE_CONFIG__ENABLE_FUNCTION_GRAPH: c->function_graph = f.value != 0; break;
		case PB_FTRACE_CONFIG__SYSCALL_EVENTS: c->syscall_filter = true; break;
		case PB_FTRACE_CONFIG__FTRACE_EVENTS:
			if (f.wire_type != PZ_WIRE_LEN)
				break;
			if (event_is(&f, "raw_syscalls/sys_enter") ||
			    event_is(&f, "raw_syscalls/sys_exit"))
				c->raw_syscalls = true;
			for (size_t i = 0; !c->ksym_event && i < 2; i++) {
				if (event_is(&f, k_ksym_events[i]))
					c->ksym_event = k_ksym_events[i];
			}
			break;
		default:
			break;
		}
	}
}

static void ftrace_rule(struct diag *d, const struct ftrace_cfg *c, int rule)
{
	char desc[320];
	double conf;

	if (rule == 0 && c->preserve) {
		int64_t boot = started_since_boot(d);

		if (boot > 5ll * 60 * 1000 * 1000 * 1000)
			add(d, "preserve_ftrace_buffer_late_start", "preserve_ftrace_buffer not needed",
			    "preserve_ftrace_buffer is set, yet tracing began minutes after boot: the "
			    "kept kernel buffer can hold old events that mislead.",
			    "Drop preserve_ftrace_buffer unless tracing starts right after boot.", 0.7);
	}
	if (rule == 1 && c->has_buffer_kb && c->buffer_kb && c->buffer_kb < 1024) {
		conf = c->buffer_kb <= 64
			? 0.9
			: 0.9 - 0.7 * (double)(c->buffer_kb - 64) / (1024 - 64);
		if (d->has_ftrace_loss)
			conf = 0.9;
		snprintf(desc, sizeof(desc),
			 "The ftrace buffer_size_kb is %llu KB, under 1 MB: under load the kernel "
			 "buffer can overrun and lose events.",
			 (unsigned long long)c->buffer_kb);
		add(d, "tiny_ftrace_buffer", "Small ftrace buffer", desc,
		    "Leave buffer_size_kb unset: the default suits most traces.", conf);
	}
	if (rule == 2 && c->has_buffer_kb && c->has_period && c->buffer_kb && c->period_ms) {
		double mbps = ((double)c->buffer_kb / 1024.0) / ((double)c->period_ms / 1000.0);

		if (mbps < 5.0) {
			conf = mbps <= 1.0 ? 0.9 : 0.9 * (5.0 - mbps) / 4.0;
			if (d->has_ftrace_loss)
				conf = 0.9;
			snprintf(desc, sizeof(desc),
				 "buffer_size_kb=%llu read every drain_period_ms=%llu drains under "
				 "5 MB/s: a burst of events can fill the buffer before it is read.",
				 (unsigned long long)c->buffer_kb, (unsigned long long)c->period_ms);
			add(d, "low_ftrace_drain_bandwidth", "Slow ftrace drain", desc,
			    "Leave buffer_size_kb and drain_period_ms unset, or give a bigger "
			    "buffer or a shorter period (over 5 MB/s).",
			    conf);
		}
	}
	if (rule == 3 && c->has_period && (c->period_ms < 100 || c->period_ms > 60000)) {
		snprintf(desc, sizeof(desc),
			 "drain_period_ms is %llu, outside [100, 60000]: too many wakeups or "
			 "buffer overruns.",
			 (unsigned long long)c->period_ms);
		add(d, "extreme_ftrace_drain_period", "Unusual ftrace drain period", desc,
		    "Leave drain_period_ms unset, or keep it in [100, 60000].", 0.6);
	}
	if (rule == 4 && c->raw_syscalls && !c->syscall_filter)
		add(d, "syscalls_without_filter", "Every syscall traced",
		    "raw_syscalls sys_enter/sys_exit are on with no syscall_events filter: each "
		    "syscall is recorded, which makes traces large and costly.",
		    "List the syscalls needed in syscall_events.", d->has_ftrace_loss ? 0.9 : 0.3);
	if (rule == 5 && !c->ksyms) {
		if (c->function_graph)
			add(d, "function_graph_requires_symbolize_ksyms",
			    "Function graph without symbolize_ksyms",
			    "enable_function_graph records kernel addresses; without symbolize_ksyms "
			    "they cannot be turned into names later.",
			    "Set symbolize_ksyms: true in the ftrace config.", 1.0);
		if (c->ksym_event) {
			snprintf(desc, sizeof(desc),
				 "%s is traced without symbolize_ksyms: its kernel symbol fields stay "
				 "raw addresses that cannot be named later.",
				 c->ksym_event);
			add(d, "events_require_symbolize_ksyms", "Events need symbolize_ksyms", desc,
			    "Set symbolize_ksyms: true in the ftrace config.", 0.6);
		}
	}
}

static void heapprofd_rule(struct diag *d, const uint8_t *data, size_t len)
{
	struct pz_reader r;
	struct pz_field f;
	char desc[200];

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id != PB_HEAPPROFD_CONFIG__SAMPLING_INTERVAL_BYTES ||
		    f.wire_type != PZ_WIRE_VARINT || f.value == 0 || f.value >= 100 * 1024)
			continue;
		snprintf(desc, sizeof(desc),
			 "heapprofd samples every %llu bytes (under 100 KB): more overhead, hardly "
			 "more accuracy.",
			 (unsigned long long)f.value);
		add(d, "heapprofd_sampling_interval_too_low", "Heapprofd samples too often", desc,
		    "Raise sampling_interval_bytes to 100 KB or more.",
		    d->has_heapprofd_error ? 0.9 : 0.3);
	}
}

/* The config of data source @ds (TraceConfig.DataSource), or false. */
static bool ds_config(const struct pz_field *ds, struct pz_field *out)
{
	struct pz_reader r;
	struct pz_field f;
	bool found = false;

	pz_reader_init(&r, ds->data, ds->size);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id == PB_TRACE_CONFIG_DATA_SOURCE__CONFIG && f.wire_type == PZ_WIRE_LEN) {
			*out = f;
			found = true;
		}
	}
	return found;
}

void tp_diagnostics_run(struct tp_import *imp, const uint8_t *cfg, size_t len)
{
	struct diag d = {imp, false, false, false, false};
	struct pz_reader r, rc;
	struct pz_field f, c, b;
	bool into_file = false, display_video = false;
	uint64_t period = 0;
	bool discard[MAX_DS];
	struct ftrace_cfg *fcs = NULL;
	size_t n_buffers = 0, n_fcs = 0;

	if (!cfg || !len)
		return;
	scan_stats(&d);
	pz_reader_init(&r, cfg, len);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id == PB_TRACE_CONFIG__WRITE_INTO_FILE && f.wire_type == PZ_WIRE_VARINT) {
			into_file = f.value != 0;
		} else if (f.id == PB_TRACE_CONFIG__FILE_WRITE_PERIOD_MS &&
			   f.wire_type == PZ_WIRE_VARINT) {
			period = (uint32_t)f.value;
		} else if (f.id == PB_TRACE_CONFIG__BUFFERS && f.wire_type == PZ_WIRE_LEN &&
			   n_buffers < MAX_DS) {
			discard[n_buffers] = false;
			pz_reader_init(&rc, f.data, f.size);
			while (pz_reader_next(&rc, &b) > 0) {
				if (b.id == PB_TRACE_CONFIG_BUFFER_CONFIG__FILL_POLICY)
					discard[n_buffers] =
						b.value == PBE_TRACE_CONFIG_BUFFER_CONFIG_FILL_POLICY__DISCARD;
			}
			n_buffers++;
		}
	}
	/* The per data source rules, in Perfetto's rule order. */
	for (int pass = 0; pass < 3; pass++) {
		/* Each ftrace rule over every ftrace config, rule after rule. */
		for (int rule = 0; pass == 1 && rule < 6; rule++) {
			for (size_t i = 0; i < n_fcs; i++)
				ftrace_rule(&d, &fcs[i], rule);
		}
		pz_reader_init(&r, cfg, len);
		while (pz_reader_next(&r, &f) > 0) {
			if (f.id != PB_TRACE_CONFIG__DATA_SOURCES || f.wire_type != PZ_WIRE_LEN ||
			    !ds_config(&f, &c))
				continue;
			pz_reader_init(&rc, c.data, c.size);
			while (pz_reader_next(&rc, &b) > 0) {
				if (b.wire_type != PZ_WIRE_LEN)
					continue;
				if (pass == 0 && b.id == PB_DATA_SOURCE_CONFIG__FTRACE_CONFIG) {
					struct ftrace_cfg *a = realloc(fcs, (n_fcs + 1) * sizeof(*a));

					if (!a)
						continue;
					fcs = a;
					read_ftrace(b.data, b.size, &fcs[n_fcs++]);
				} else if (pass == 2 && b.id == PB_DATA_SOURCE_CONFIG__HEAPPROFD_CONFIG) {
					heapprofd_rule(&d, b.data, b.size);
				} else if (pass == 2 && b.id == PB_DATA_SOURCE_CONFIG__NAME &&
					   b.size == 21 && memcmp(b.data, "android.display.video", 21) == 0) {
					display_video = true;
				}
			}
			if (pass == 1 && into_file && period < 604800000u) {
				struct pz_field name = {0};
				uint64_t target = 0;
				char desc[256];

				pz_reader_init(&rc, c.data, c.size);
				while (pz_reader_next(&rc, &b) > 0) {
					if (b.id == PB_DATA_SOURCE_CONFIG__NAME && b.wire_type == PZ_WIRE_LEN)
						name = b;
					else if (b.id == PB_DATA_SOURCE_CONFIG__TARGET_BUFFER)
						target = (uint32_t)b.value;
				}
				if (!(event_is(&name, "linux.ftrace") || event_is(&name, "track_event")) ||
				    target >= n_buffers || !discard[target])
					continue;
				snprintf(desc, sizeof(desc),
					 "\"%.*s\" writes into a DISCARD buffer of a trace streamed into a "
					 "file: the buffer stops taking data once full, cutting long "
					 "traces short.",
					 (int)name.size, (const char *)name.data);
				add(&d, "discard_buffer_for_streaming", "DISCARD buffer while streaming",
				    desc,
				    "Back ftrace and track_event with a RING_BUFFER (the default) "
				    "buffer in long traces.",
				    0.8);
			}
		}
	}
	free(fcs);
	/* Display video frames are not imported: none ever came, for us. */
	if (display_video && is_user_build(&d) && !d.has_video_error)
		add(&d, "display_video_not_enabled", "No display video captured",
		    "android.display.video was asked for, yet no frame came and the producer "
		    "reported no error: user builds keep display video off until the "
		    "debug.tracing_video_allowed property is set (until the next reboot).",
		    "adb shell setprop debug.tracing_video_allowed true, then record again.", 0.7);
	(void)d.has_traced_loss;
}

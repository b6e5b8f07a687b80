// SPDX-License-Identifier: Apache-2.0
/*
 * ftrace_mark.c - display drivers' marker tracepoints (mdss
 * tracing_mark_write, sde_tracing_mark_write, Pixel's dpu and g2d
 * tracing_mark_write) carry atrace events of a process (tgid in the
 * payload): each is rewritten as the atrace line it stands for and parsed
 * like a trace_marker print. Called by ftrace.c.
 */
#include <stdio.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/ftrace/ftrace_int.h"

/* Enough for a phase, a pid, a value and a long slice name. */
#define MARK_LINE_BYTES 1024

void tp_ftrace_mark(struct tp_import *imp, const struct tp_event *ev, int64_t tid,
		    enum tp_mark_kind kind, const uint8_t *data, size_t len)
{
	struct pz_field f[7];
	const struct pz_field *name_f;
	char line[MARK_LINE_BYTES], phase;
	int name_len = 0, n;
	int64_t tgid, value = 0;
	const char *name = "";
	bool has_begin;
	uint64_t type = 0;

	if (pz_decode_table(data, len, f, 7) != PZ_OK) {
		tp_stat_add(imp, "systrace_parse_failure", -1, ev->machine, 1);
		return;
	}
	/* Both payloads share pid (1) and trace_name (2). */
	tgid = (int32_t)f[PB_TRACING_MARK_WRITE_FTRACE_EVENT__PID].value;
	name_f = &f[PB_TRACING_MARK_WRITE_FTRACE_EVENT__TRACE_NAME];
	if (name_f->id && name_f->wire_type == PZ_WIRE_LEN) {
		name = (const char *)name_f->data;
		name_len = name_f->size < MARK_LINE_BYTES ? (int)name_f->size : MARK_LINE_BYTES;
	}
	if (kind == TP_MARK_DPU || kind == TP_MARK_G2D) {
		/* dpu and g2d: name (4), a phase letter in type (5), value (6). */
		name_f = &f[PB_DPU_TRACING_MARK_WRITE_FTRACE_EVENT__NAME];
		name = "";
		name_len = 0;
		if (name_f->id && name_f->wire_type == PZ_WIRE_LEN) {
			name = (const char *)name_f->data;
			name_len = name_f->size < MARK_LINE_BYTES ? (int)name_f->size
								  : MARK_LINE_BYTES;
		}
		type = f[PB_DPU_TRACING_MARK_WRITE_FTRACE_EVENT__TYPE].value;
		value = (int32_t)f[PB_DPU_TRACING_MARK_WRITE_FTRACE_EVENT__VALUE].value;
		if (type == 0)
			goto bad;
		phase = 'E';
		/*
		 * As Perfetto: dpu drivers name other processes' tgids for slices,
		 * so only its counters keep the payload's tgid.
		 */
		if (kind == TP_MARK_DPU && type != 'C')
			tgid = 0;
	} else if (kind == TP_MARK_SDE) {
		has_begin = f[PB_SDE_TRACING_MARK_WRITE_FTRACE_EVENT__TRACE_BEGIN].id;
		type = f[PB_SDE_TRACING_MARK_WRITE_FTRACE_EVENT__TRACE_TYPE].value;
		value = (int32_t)f[PB_SDE_TRACING_MARK_WRITE_FTRACE_EVENT__VALUE].value;
		phase = f[PB_SDE_TRACING_MARK_WRITE_FTRACE_EVENT__TRACE_BEGIN].value ? 'B' : 'E';
		if (!has_begin && !f[PB_SDE_TRACING_MARK_WRITE_FTRACE_EVENT__TRACE_TYPE].id)
			goto bad;
	} else {
		has_begin = f[PB_TRACING_MARK_WRITE_FTRACE_EVENT__TRACE_BEGIN].id;
		phase = f[PB_TRACING_MARK_WRITE_FTRACE_EVENT__TRACE_BEGIN].value ? 'B' : 'E';
		if (!has_begin)
			goto bad;
	}
	/* Some kernels fill trace_type with the phase letter, others only trace_begin. */
	if (type == 'B' || type == 'E' || type == 'C' || type == 'I')
		phase = (char)type;
	else if (type != 0)
		goto bad;
	switch (phase) {
	case 'E':
		n = snprintf(line, sizeof(line), "E|%lld", (long long)tgid);
		break;
	case 'C':
		n = snprintf(line, sizeof(line), "C|%lld|%.*s|%lld", (long long)tgid, name_len, name,
			     (long long)value);
		break;
	default:
		n = snprintf(line, sizeof(line), "%c|%lld|%.*s", phase, (long long)tgid, name_len,
			     name);
		break;
	}
	if (n < 0 || (size_t)n >= sizeof(line))
		goto bad;
	tp_ftrace_atrace(imp, ev, tid, line, (size_t)n);
	return;
bad:
	tp_stat_add(imp, "systrace_parse_failure", -1, ev->machine, 1);
}

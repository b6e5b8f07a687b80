// SPDX-License-Identifier: Apache-2.0
/*
 * irq.c - irq_handler_entry/exit and softirq_entry/exit as slices of
 * category "irq" on per-CPU tracks, as Perfetto makes them: "IRQ (<name>)"
 * on "Irq Cpu <n>" (type cpu_irq; the exit adds ret "handled" or
 * "unhandled"), the softirq's action name on "SoftIrq Cpu <n>" (type
 * cpu_softirq; the exit adds vec). A softirq vector with no name (10 and
 * up) makes no slice.
 */
#include <stdio.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/ftrace/ftrace_int.h"

/* The kernel's softirq vectors, by number (BLOCK_IOPOLL is today's IRQ_POLL). */
static const char *const softirq_names[] = {
	"HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "BLOCK_IOPOLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
};

static int64_t cpu_track(struct tp_import *imp, const struct tp_event *ev, bool soft)
{
	struct tp_dim dim = {"cpu", TP_DIM_UINT, ev->cpu};
	char name[48];
	int64_t track;

	snprintf(name, sizeof(name), "%s Cpu %u", soft ? "SoftIrq" : "Irq", (unsigned)ev->cpu);
	track = tp_track_dims(imp, soft ? "cpu_softirq" : "cpu_irq",
			      tp_str_intern_c(&imp->db->strings, name), false, ev->machine, &dim, 1, 0);
	/* A CPU's track: in cpu_track. */
	if (track >= 0)
		tp_set_int(&imp->db->track, TRACK_CPU, (size_t)track, ev->cpu);
	return track;
}

void tp_irq_event(struct tp_import *imp, const struct tp_event *ev, uint32_t event_id,
		  const uint8_t *data, size_t len)
{
	uint32_t cat = tp_str_intern_c(&imp->db->strings, "irq");
	struct pz_field f[4];
	int64_t track, row;
	struct tp_argset *b;
	char name[300];

	if (pz_decode_table(data, len, f, 4) != PZ_OK)
		return;
	switch (event_id) {
	case PB_FTRACE_EVENT__IRQ_HANDLER_ENTRY: {
		const struct pz_field *n = &f[PB_IRQ_HANDLER_ENTRY_FTRACE_EVENT__NAME];

		track = cpu_track(imp, ev, false);
		if (track < 0)
			return;
		snprintf(name, sizeof(name), "IRQ (%.*s)",
			 n->id && n->wire_type == PZ_WIRE_LEN ? (int)n->size : 0,
			 n->id && n->wire_type == PZ_WIRE_LEN ? (const char *)n->data : "");
		tp_slice_begin(imp, ev->ts, track, cat, tp_str_intern_c(&imp->db->strings, name));
		return;
	}
	case PB_FTRACE_EVENT__SOFTIRQ_ENTRY: {
		uint64_t vec = (uint32_t)f[PB_SOFTIRQ_ENTRY_FTRACE_EVENT__VEC].value;

		if (vec >= sizeof(softirq_names) / sizeof(softirq_names[0]))
			return;
		track = cpu_track(imp, ev, true);
		if (track >= 0)
			tp_slice_begin(imp, ev->ts, track, cat,
				       tp_str_intern_c(&imp->db->strings, softirq_names[vec]));
		return;
	}
	case PB_FTRACE_EVENT__IRQ_HANDLER_EXIT:
	case PB_FTRACE_EVENT__SOFTIRQ_EXIT:
		break;
	default:
		return;
	}
	track = cpu_track(imp, ev, event_id == PB_FTRACE_EVENT__SOFTIRQ_EXIT);
	if (track < 0)
		return;
	row = tp_slice_end_start(imp, ev->ts, track, cat, 0);
	if (row < 0)
		return;
	b = tp_slice_args(imp, track, (uint32_t)row);
	if (b && event_id == PB_FTRACE_EVENT__IRQ_HANDLER_EXIT)
		tp_argset_str(imp, b, tp_str_intern_c(&imp->db->strings, "ret"),
			      tp_str_intern_c(&imp->db->strings,
					      f[PB_IRQ_HANDLER_EXIT_FTRACE_EVENT__RET].value == 1
						      ? "handled"
						      : "unhandled"));
	else if (b)
		tp_argset_int(imp, b, tp_str_intern_c(&imp->db->strings, "vec"),
			      (int32_t)f[PB_SOFTIRQ_EXIT_FTRACE_EVENT__VEC].value);
	tp_slice_end_done(imp, track, (uint32_t)row);
}

// SPDX-License-Identifier: Apache-2.0
/*
 * cpu_util.c - the sched_cpu_util_cfs ftrace event (vendor
 * scheduler) as three per-CPU counters: "Cpu N Util", "Cpu N Cap" and
 * "Cpu N Nr Running". Called by ftrace.c once per event, in time order.
 */
#include <stdio.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/ftrace/ftrace_int.h"

/* A varint field's value; 0 when absent or of another wire type. */
static double value(const struct pz_field *f)
{
	return f->id && f->wire_type == PZ_WIRE_VARINT ? (double)f->value : 0.0;
}

void tp_ftrace_cpu_util_cfs(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
			    size_t len)
{
	static const struct {
		uint32_t field;
		const char *what, *type;
	} counters[] = {
		{PB_SCHED_CPU_UTIL_CFS_FTRACE_EVENT__CPU_UTIL, "Util", "cpu_utilization"},
		{PB_SCHED_CPU_UTIL_CFS_FTRACE_EVENT__CAPACITY, "Cap", "cpu_capacity"},
		{PB_SCHED_CPU_UTIL_CFS_FTRACE_EVENT__NR_RUNNING, "Nr Running",
		 "cpu_nr_running"},
	};
	struct pz_field f[16];
	uint32_t cpu;
	size_t i;

	if (pz_decode_table(data, len, f, 16) != PZ_OK)
		return;
	/* The event names the CPU it describes; absent fields count as 0. */
	cpu = (uint32_t)value(&f[PB_SCHED_CPU_UTIL_CFS_FTRACE_EVENT__CPU]);
	for (i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		char name[64];
		int64_t track;

		snprintf(name, sizeof(name), "Cpu %u %s", cpu, counters[i].what);
		track = tp_track_cpu_counter_dims(imp, name, counters[i].type, ev->machine, cpu,
						  NULL, NULL);
		tp_counter_add(imp, ev->ts, track, value(&f[counters[i].field]));
	}
}

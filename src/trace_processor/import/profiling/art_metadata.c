// SPDX-License-Identifier: Apache-2.0
/*
 * art_metadata.c - TracePacket.art_process_metadata as Perfetto imports
 * it: the process (name, uid, package) ART dumped the Java heap of gets
 * a heap_graph row of its own (dump_reason "OOME" when an
 * OutOfMemoryError caused it, with the error's details and the stack of
 * the thread that threw it: frames on a dummy mapping, outermost first).
 * A heap graph of the same process and time fills in that row.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/common/common.h"
#include "trace_processor/import/profiling/profiling.h"
#include "trace_processor/import/profiling/profiling_int.h"

#define MAX_JAVA_FRAMES 1024

static bool has_str(const struct pz_field *f)
{
	return f->id && f->wire_type == PZ_WIRE_LEN;
}

/*
 * Adds (@name, @uid) to package_list. Perfetto means to skip a pair it has
 * already, but its lookup never finds one (v58.2 adds a row per packet,
 * even beside a packages_list entry): so do we.
 */
static void package(struct tp_import *imp, uint32_t name, int64_t uid)
{
	struct tp_table *t = &imp->db->package_list;
	int64_t row = tp_table_append(t);
	if (row < 0)
		return;
	tp_set_str(t, PKG_PACKAGE_NAME, (size_t)row, name);
	tp_set_int(t, PKG_UID, (size_t)row, uid);
	tp_set_int(t, PKG_DEBUGGABLE, (size_t)row, 0);
	tp_set_int(t, PKG_PROFILEABLE_FROM_SHELL, (size_t)row, 0);
	tp_set_int(t, PKG_VERSION_CODE, (size_t)row, 0);
}

/* The method of a Java frame: what precedes '(', after the last ' ' (the
 * return type). */
static uint32_t method_name(struct tp_import *imp, const uint8_t *b, uint32_t n)
{
	const uint8_t *paren = memchr(b, '(', n);
	uint32_t end = paren ? (uint32_t)(paren - b) : n, start = 0;

	for (uint32_t i = end; i > 0; i--)
		if (b[i - 1] == ' ') {
			start = i;
			break;
		}
	return tp_str_intern(&imp->db->strings, (const char *)b + start, end - start);
}

/* The leaf callsite of a JavaStack (innermost frame first), or -1. */
static int64_t java_stack(struct tp_import *imp, struct tp_profiling *p, const uint8_t *d,
			  uint32_t len)
{
	struct pz_field frames[MAX_JAVA_FRAMES];
	struct pz_reader r;
	struct pz_field f;
	uint32_t n = 0, depth = 0;
	int64_t parent = -1;

	pz_reader_init(&r, d, len);
	while (pz_reader_next(&r, &f) > 0 && n < MAX_JAVA_FRAMES)
		if (f.id == PB_JAVA_STACK__FRAMES && f.wire_type == PZ_WIRE_LEN)
			frames[n++] = f;
	while (n > 0) {
		struct pz_field jf[4];
		uint32_t name, file = 0;
		int64_t line = TP_NULL_INT, frame;

		n--;
		if (pz_decode_table(frames[n].data, frames[n].size, jf, 4) != PZ_OK ||
		    !has_str(&jf[PB_JAVA_FRAME__METHOD_NAME]))
			continue;
		name = method_name(imp, jf[PB_JAVA_FRAME__METHOD_NAME].data,
				   jf[PB_JAVA_FRAME__METHOD_NAME].size);
		if (has_str(&jf[PB_JAVA_FRAME__SOURCE_FILE]))
			file = tp_str_intern(&imp->db->strings,
					     (const char *)jf[PB_JAVA_FRAME__SOURCE_FILE].data,
					     jf[PB_JAVA_FRAME__SOURCE_FILE].size);
		if (jf[PB_JAVA_FRAME__LINE_NUMBER].id)
			line = (uint32_t)jf[PB_JAVA_FRAME__LINE_NUMBER].value;
		frame = tp_prof_dummy_frame(imp, p, &p->art_meta_mapping, "art_process_metadata",
					    name, file, line);
		if (frame < 0)
			return -1;
		parent = tp_prof_callsite(imp, p, parent, frame, depth++);
		if (parent < 0)
			return -1;
	}
	return parent;
}

void tp_art_process_metadata(struct tp_import *imp, const struct tp_event *ev,
			     const uint8_t *data, size_t len)
{
	struct tp_profiling *p = tp_prof_state(imp);
	struct pz_field f[10];
	struct tp_table *hg = &imp->db->heap_graph, *proc = &imp->db->process;
	uint32_t pid;
	int64_t upid, graph;

	if (!p || pz_decode_table(data, len, f, 10) != PZ_OK)
		return;
	pid = (uint32_t)f[PB_ART_PROCESS_METADATA__PID].value;
	tp_proc_update_thread(imp, ev->machine, pid, pid);
	upid = tp_proc_get_process_main(imp, ev->machine, pid);
	if (upid < 0)
		return;
	if (has_str(&f[PB_ART_PROCESS_METADATA__PROCESS_NAME]))
		tp_proc_update_process_name(
			imp, upid,
			tp_str_intern(&imp->db->strings,
				      (const char *)f[PB_ART_PROCESS_METADATA__PROCESS_NAME].data,
				      f[PB_ART_PROCESS_METADATA__PROCESS_NAME].size),
			TP_NAME_TRACK_DESCRIPTOR);
	if (f[PB_ART_PROCESS_METADATA__UID].id) {
		uint32_t uid = (uint32_t)f[PB_ART_PROCESS_METADATA__UID].value;

		tp_set_int(proc, PROCESS_UID, (size_t)upid, uid);
		tp_set_int(proc, PROCESS_ANDROID_APPID, (size_t)upid, uid % 100000);
		tp_set_int(proc, PROCESS_ANDROID_USER_ID, (size_t)upid, uid / 100000);
		if (has_str(&f[PB_ART_PROCESS_METADATA__PACKAGE_NAME]))
			package(imp,
				tp_str_intern(&imp->db->strings,
					      (const char *)f[PB_ART_PROCESS_METADATA__PACKAGE_NAME]
						      .data,
					      f[PB_ART_PROCESS_METADATA__PACKAGE_NAME].size),
				(int32_t)f[PB_ART_PROCESS_METADATA__UID].value);
	}

	graph = tp_table_append(hg);
	if (graph < 0)
		return;
	tp_set_int(hg, HG_TS, (size_t)graph, ev->ts);
	tp_set_int(hg, HG_UPID, (size_t)graph, upid);
	tp_set_int(hg, HG_TRUNCATED, (size_t)graph, 0);
	if (!f[PB_ART_PROCESS_METADATA__OOM_ALLOCATION_SIZE].id)
		return;
	tp_set_str(hg, HG_DUMP_REASON, (size_t)graph, tp_db_str(imp->db, "OOME"));

	{
		struct tp_table *t = &imp->db->hg_oome;
		int64_t row = tp_table_append(t);

		if (row < 0)
			return;
		tp_set_int(t, HG_OOME_HEAP_GRAPH_ID, (size_t)row, graph);
		tp_set_int(t, HG_OOME_ALLOCATION_SIZE_BYTES, (size_t)row,
			   (int64_t)f[PB_ART_PROCESS_METADATA__OOM_ALLOCATION_SIZE].value);
		tp_set_int(t, HG_OOME_TOTAL_BYTES_FREE, (size_t)row,
			   (int64_t)f[PB_ART_PROCESS_METADATA__OOM_TOTAL_BYTES_FREE].value);
		tp_set_int(t, HG_OOME_FREE_BYTES_UNTIL_OOM, (size_t)row,
			   (int64_t)f[PB_ART_PROCESS_METADATA__OOM_FREE_BYTES_UNTIL_OOM].value);
		if (has_str(&f[PB_ART_PROCESS_METADATA__OOM_ERROR_MSG]))
			tp_set_str(t, HG_OOME_ERROR_MSG, (size_t)row,
				   tp_str_intern(&imp->db->strings,
						 (const char *)f[PB_ART_PROCESS_METADATA__OOM_ERROR_MSG]
							 .data,
						 f[PB_ART_PROCESS_METADATA__OOM_ERROR_MSG].size));
	}
	if (f[PB_ART_PROCESS_METADATA__OOM_THREAD_JAVA_STACK].id &&
	    f[PB_ART_PROCESS_METADATA__OOM_THREAD_JAVA_STACK].wire_type == PZ_WIRE_LEN) {
		struct tp_table *t = &imp->db->hg_thread_cs;
		int64_t cs = java_stack(imp, p, f[PB_ART_PROCESS_METADATA__OOM_THREAD_JAVA_STACK].data,
					f[PB_ART_PROCESS_METADATA__OOM_THREAD_JAVA_STACK].size);
		int64_t utid = tp_proc_update_thread(imp, ev->machine, pid, pid);
		int64_t row = tp_table_append(t);

		if (row < 0)
			return;
		tp_set_int(t, HG_TCS_HEAP_GRAPH_ID, (size_t)row, graph);
		if (utid >= 0)
			tp_set_int(t, HG_TCS_UTID, (size_t)row, utid);
		if (cs >= 0)
			tp_set_int(t, HG_TCS_CALLSITE_ID, (size_t)row, cs);
	}
}

// SPDX-License-Identifier: Apache-2.0
/*
 * ion.c - ion heap ftrace events, as Perfetto imports them:
 *
 *   ion_heap_grow, ion_heap_shrink (Pixel kernels)  the heap's size after
 *       the change as counter "mem.ion.<heap>" (type "ion", dimension
 *       heap_name, "unknown" when the event has none) and the change, signed,
 *       as the thread's counter "mem.ion_change.<heap>" (type "ion_change",
 *       dimensions heap_name and utid);
 *   ion_stat (4.19+ kernels)  the same two counters with no heap name
 *       ("mem.ion", "mem.ion_change", heap_name a null string), and each live
 *       buffer (by buffer_id) as an "<n> kB" slice on a "mem.ion_buffer"
 *       track of type android_ion_allocations (tp_buffer_slice()).
 *
 * Called by ftrace.c in time order.
 */
#include <stdio.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/ftrace/ftrace_int.h"

/* The track names Perfetto gives: "<prefix>" alone for an empty heap name. */
static uint32_t heap_track_name(struct tp_import *imp, const char *prefix, const char *heap,
				size_t heap_len)
{
	char name[255];

	if (heap_len == 0)
		return tp_db_str(imp->db, prefix);
	snprintf(name, sizeof(name), "%s.%.*s", prefix, (int)heap_len, heap);
	return tp_db_str(imp->db, name);
}

/*
 * The heap total @total and the change @change of thread @tid, on the
 * tracks of heap @heap (a string id, 0 for ion_stat's null name).
 */
static void push_counters(struct tp_import *imp, const struct tp_event *ev, int64_t tid,
			  uint32_t heap, const char *heap_s, size_t heap_len, double total,
			  double change)
{
	struct tp_dim dims[2] = {{"heap_name", TP_DIM_STR, heap}, {"utid", TP_DIM_UINT, 0}};
	int64_t track, utid;

	track = tp_track_dims(imp, "ion", heap_track_name(imp, "mem.ion", heap_s, heap_len), true,
			      ev->machine, dims, 1, 0);
	tp_counter_add(imp, ev->ts, track, total);
	utid = tp_proc_get_thread(imp, ev->machine, tid);
	if (utid < 0)
		return;
	dims[1].v = utid;
	track = tp_track_dims(imp, "ion_change",
			      heap_track_name(imp, "mem.ion_change", heap_s, heap_len), true,
			      ev->machine, dims, 2, 0);
	if (track >= 0)
		tp_set_int(&imp->db->track, TRACK_UTID, (size_t)track, utid);
	tp_counter_add(imp, ev->ts, track, change);
}

void tp_ion_heap_change(struct tp_import *imp, const struct tp_event *ev, int64_t tid, bool grow,
			const uint8_t *data, size_t len)
{
	struct pz_field f[4];
	const char *heap = "unknown";
	size_t heap_len = 7;
	int64_t change, total;

	/* ion_heap_grow and ion_heap_shrink share their field numbers. */
	_Static_assert(PB_ION_HEAP_GROW_FTRACE_EVENT__HEAP_NAME ==
				       PB_ION_HEAP_SHRINK_FTRACE_EVENT__HEAP_NAME &&
			       PB_ION_HEAP_GROW_FTRACE_EVENT__LEN == PB_ION_HEAP_SHRINK_FTRACE_EVENT__LEN &&
			       PB_ION_HEAP_GROW_FTRACE_EVENT__TOTAL_ALLOCATED ==
				       PB_ION_HEAP_SHRINK_FTRACE_EVENT__TOTAL_ALLOCATED,
		       "ion_heap_grow and ion_heap_shrink differ");
	if (pz_decode_table(data, len, f, 4) != PZ_OK)
		return;
	if (f[PB_ION_HEAP_GROW_FTRACE_EVENT__HEAP_NAME].id) {
		heap = (const char *)f[PB_ION_HEAP_GROW_FTRACE_EVENT__HEAP_NAME].data;
		heap_len = f[PB_ION_HEAP_GROW_FTRACE_EVENT__HEAP_NAME].size;
	}
	/* total_allocated is the heap's size before the change. */
	change = (int64_t)f[PB_ION_HEAP_GROW_FTRACE_EVENT__LEN].value * (grow ? 1 : -1);
	total = (int64_t)f[PB_ION_HEAP_GROW_FTRACE_EVENT__TOTAL_ALLOCATED].value + change;
	push_counters(imp, ev, tid, tp_str_intern(&imp->db->strings, heap, heap_len), heap,
		      heap_len, (double)total, (double)change);
}

void tp_ion_stat(struct tp_import *imp, const struct tp_event *ev, int64_t tid,
		 const uint8_t *data, size_t len)
{
	struct pz_field f[4];
	int64_t change;

	if (pz_decode_table(data, len, f, 4) != PZ_OK)
		return;
	change = (int64_t)f[PB_ION_STAT_FTRACE_EVENT__LEN].value;
	push_counters(imp, ev, tid, 0, NULL, 0,
		      (double)f[PB_ION_STAT_FTRACE_EVENT__TOTAL_ALLOCATED].value, (double)change);
	tp_buffer_slice(imp, ev, &imp->ftrace->ion_pool, "android_ion_allocations",
			"mem.ion_buffer", (uint32_t)f[PB_ION_STAT_FTRACE_EVENT__BUFFER_ID].value,
			change);
}

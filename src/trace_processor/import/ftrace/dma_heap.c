// SPDX-License-Identifier: Apache-2.0
/*
 * dma_heap.c - dma_heap_stat ftrace events (dma-buf heap allocations and
 * frees): the heap total as counter "mem.dma_heap", each change as the
 * allocating thread's "mem.dma_heap_change" counter, and each live buffer
 * (by inode) as an "<n> kB" slice on a "mem.dma_buffer" track, spread over
 * as many tracks as buffers overlap. Called by ftrace.c in time order.
 */
#include <stdio.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/ftrace/ftrace_int.h"

/* Buffers alive at once beyond this share the last track. */
#define DMA_MAX_TRACKS 4096

static int64_t buffer_track(struct tp_import *imp, uint32_t machine, uint32_t idx)
{
	return tp_track_dims(imp, "android_dma_allocations", tp_db_str(imp->db, "mem.dma_buffer"),
			     false, machine, NULL, 0, idx);
}

/* The pool index a new buffer @inode takes: its own if still open, else the first free one. */
static uint32_t take_slot(struct tp_import *imp, uint64_t inode)
{
	uint64_t v = 0, open;
	uint32_t i;

	if (hmap_get(&imp->ftrace->dma_buffers, inode, &v) && v > 0) {
		i = (uint32_t)(v - 1);
	} else {
		for (i = 0; i < DMA_MAX_TRACKS - 1; i++)
			if (!hmap_get(&imp->ftrace->dma_busy, i, &open) || open == 0)
				break;
		hmap_put(&imp->ftrace->dma_buffers, inode, (uint64_t)i + 1);
	}
	open = 0;
	hmap_get(&imp->ftrace->dma_busy, i, &open);
	hmap_put(&imp->ftrace->dma_busy, i, open + 1);
	return i;
}

static void buffers(struct tp_import *imp, const struct tp_event *ev, uint64_t inode, int64_t len)
{
	uint64_t v, open = 0;
	uint32_t i;
	char name[32];

	if (len > 0) {
		i = take_slot(imp, inode);
		snprintf(name, sizeof(name), "%lld kB", (long long)(len / 1024));
		tp_slice_begin(imp, ev->ts, buffer_track(imp, ev->machine, i), 0,
			       tp_db_str(imp->db, name));
		return;
	}
	if (!hmap_get(&imp->ftrace->dma_buffers, inode, &v) || v == 0) {
		tp_stat_add(imp, "misplaced_end_event", -1, 0, 1);
		return;
	}
	i = (uint32_t)(v - 1);
	if (tp_slice_end(imp, ev->ts, buffer_track(imp, ev->machine, i), 0, 0) < 0)
		tp_stat_add(imp, "misplaced_end_event", -1, 0, 1);
	hmap_get(&imp->ftrace->dma_busy, i, &open);
	hmap_put(&imp->ftrace->dma_busy, i, open > 0 ? open - 1 : 0);
	if (open <= 1)
		hmap_del(&imp->ftrace->dma_buffers, inode, NULL);
}

void tp_dma_heap_stat(struct tp_import *imp, const struct tp_event *ev, int64_t tid,
		      const uint8_t *data, size_t len)
{
	struct pz_field f[4];
	struct tp_dim dim;
	int64_t utid, track, change;
	uint64_t inode;

	if (pz_decode_table(data, len, f, 4) != PZ_OK)
		return;
	inode = f[PB_DMA_HEAP_STAT_FTRACE_EVENT__INODE].value;
	change = (int64_t)f[PB_DMA_HEAP_STAT_FTRACE_EVENT__LEN].value;
	track = tp_track_dims(imp, "android_dma_heap", tp_db_str(imp->db, "mem.dma_heap"), true,
			      ev->machine, NULL, 0, 0);
	tp_counter_add(imp, ev->ts, track,
		       (double)f[PB_DMA_HEAP_STAT_FTRACE_EVENT__TOTAL_ALLOCATED].value);
	utid = tp_proc_get_thread(imp, ev->machine, tid);
	if (utid >= 0) {
		dim = (struct tp_dim){"utid", TP_DIM_UINT, utid};
		track = tp_track_dims(imp, "android_dma_heap_change",
				      tp_db_str(imp->db, "mem.dma_heap_change"), true, ev->machine,
				      &dim, 1, 0);
		if (track >= 0)
			tp_set_int(&imp->db->track, TRACK_UTID, (size_t)track, utid);
		tp_counter_add(imp, ev->ts, track, (double)change);
	}
	buffers(imp, ev, inode, change);
}

// SPDX-License-Identifier: Apache-2.0
/*
 * dma_heap.c - dma_heap_stat ftrace events (dma-buf heap allocations and
 * frees): the heap total as counter "mem.dma_heap", each change as the
 * allocating thread's "mem.dma_heap_change" counter, and each live buffer
 * (by inode) as an "<n> kB" slice on a "mem.dma_buffer" track, spread over
 * as many tracks as buffers overlap (tp_buffer_slice(), which ion.c's
 * ion_stat shares). Called by ftrace.c in time order.
 */
#include <stdio.h>
#include <stdlib.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/ftrace/ftrace_int.h"

static int64_t buffer_track(struct tp_import *imp, const char *type, const char *name,
			    uint32_t machine, uint32_t idx)
{
	return tp_track_dims(imp, type, tp_db_str(imp->db, name), false, machine, NULL, 0, idx);
}

/*
 * The pool index of buffer @key (Perfetto's track compressor): the slot it
 * had, else the first slot with nothing open (adopted for @key), else a new
 * one. An end with an unknown @key takes a slot too. Return: -1 on OOM.
 */
static int64_t slot_for(struct tp_buffer_pool *pool, uint64_t key)
{
	struct tp_buffer_slot *s;
	size_t i;

	for (i = 0; i < pool->n; i++)
		if (pool->slots[i].key == key)
			return (int64_t)i;
	for (i = 0; i < pool->n; i++)
		if (pool->slots[i].open == 0) {
			pool->slots[i].key = key;
			return (int64_t)i;
		}
	if (pool->n == pool->cap) {
		size_t cap = pool->cap ? pool->cap * 2 : 8;

		s = realloc(pool->slots, cap * sizeof(*s));
		if (!s)
			return -1;
		pool->slots = s;
		pool->cap = cap;
	}
	pool->slots[pool->n] = (struct tp_buffer_slot){key, 0};
	return (int64_t)pool->n++;
}

void tp_buffer_slice(struct tp_import *imp, const struct tp_event *ev,
		     struct tp_buffer_pool *pool, const char *type, const char *name,
		     uint64_t key, int64_t len)
{
	int64_t i = slot_for(pool, key);
	char label[32];

	if (i < 0)
		return;
	if (len > 0) {
		pool->slots[i].open++;
		snprintf(label, sizeof(label), "%lld kB", (long long)(len / 1024));
		tp_slice_begin(imp, ev->ts, buffer_track(imp, type, name, ev->machine, (uint32_t)i),
			       0, tp_db_str(imp->db, label));
		return;
	}
	if (pool->slots[i].open > 0)
		pool->slots[i].open--;
	if (tp_slice_end(imp, ev->ts, buffer_track(imp, type, name, ev->machine, (uint32_t)i), 0,
			 0) < 0)
		tp_stat_add(imp, "misplaced_end_event", -1, 0, 1);
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
	tp_buffer_slice(imp, ev, &imp->ftrace->dma_pool, "android_dma_allocations", "mem.dma_buffer",
			inode, change);
}

// SPDX-License-Identifier: Apache-2.0
/*
 * adreno.c - Adreno (kgsl) GPU command batches: queued names the thread
 * (so the process) of a GPU context, sync pairs a batch's GPU tick count
 * with CPU time, and retired gives the batch's start and retire ticks,
 * which become a "GPU" slice at the GPU's start time on the track of its
 * (context, priority), one more track per overlapping batch. Called by
 * ftrace.c in time order; a retired event waits for its sync.
 */
#include <stdio.h>

#include "base/hash.h"
#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/ftrace/ftrace_int.h"

/* The GPU always-on counter runs at 19.2 MHz. */
#define ADRENO_XO_FREQ_HZ 19200000
/* Overlapping batches of one context beyond this share the last track. */
#define ADRENO_MAX_TRACKS 64

/* Keys of imp->ftrace->adreno: a kind in the top byte, then the id. */
enum adreno_key {
	AK_CTX_TID = 1,   /* context id -> queuing tid + 1 */
	AK_SYNC_TS,       /* batch timestamp -> sync CPU time */
	AK_SYNC_TICKS,    /* batch timestamp -> sync GPU ticks */
	AK_PEND_START,    /* batch timestamp -> start ticks of a retired waiting for sync */
	AK_PEND_RETIRE,   /* ... its retire ticks */
	AK_PEND_CTX,      /* ... its context id << 32 | prio */
	AK_TRACK_END,     /* hash(ctx, prio, idx) -> end of the track's last slice */
};

static uint64_t key(enum adreno_key kind, uint64_t id)
{
	return (uint64_t)kind << 56 | (id & 0x00ffffffffffffffull);
}

static int64_t ticks_to_ns(int64_t ticks)
{
	return ticks * 1000000000 / ADRENO_XO_FREQ_HZ;
}

/* The name of the process that queued on @ctx, or NULL. */
static const char *ctx_process(struct tp_import *imp, uint32_t machine, uint32_t ctx)
{
	uint64_t tid;
	int64_t utid, upid, name;

	if (!hmap_get(&imp->ftrace->adreno, key(AK_CTX_TID, ctx), &tid) || !tid)
		return NULL;
	utid = tp_proc_get_thread(imp, machine, (int64_t)tid - 1);
	if (utid < 0)
		return NULL;
	upid = tp_get_int(&imp->db->thread, THREAD_UPID, (size_t)utid);
	if (upid == TP_NULL_INT)
		return NULL;
	name = tp_get_int(&imp->db->process, PROCESS_NAME, (size_t)upid);
	return name ? tp_str_get(&imp->db->strings, (uint32_t)name) : NULL;
}

static void batch_slice(struct tp_import *imp, uint32_t machine, int64_t ts, int64_t dur,
			uint32_t ctx, uint32_t prio)
{
	struct tp_dim dims[2] = {{"context_id", TP_DIM_UINT, ctx}, {"prio", TP_DIM_UINT, prio}};
	const char *pname = ctx_process(imp, machine, ctx);
	char title[256];
	uint32_t name, idx;
	uint64_t end_k = 0, end;
	int64_t track;

	if (pname)
		snprintf(title, sizeof(title), "GPU %s (Ctx=%u, Prio=%u)", pname, ctx, prio);
	else
		snprintf(title, sizeof(title), "GPU (Ctx=%u, Prio=%u)", ctx, prio);
	name = tp_db_str(imp->db, title);
	for (idx = 0; idx < ADRENO_MAX_TRACKS - 1; idx++) {
		uint64_t h = hash_mix64((uint64_t)ctx << 32 | prio) ^ hash_mix64(idx + 1);

		end_k = key(AK_TRACK_END, h);
		if (!hmap_get(&imp->ftrace->adreno, end_k, &end) || (int64_t)end <= ts)
			break;
	}
	track = tp_track_dims(imp, "adreno_gpu_cmdbatch", name, false, machine, dims, 2, idx);
	if (track < 0)
		return;
	/* A track made before the process was known gets its name now. */
	if (pname)
		tp_set_str(&imp->db->track, TRACK_NAME, (size_t)track, name);
	hmap_put(&imp->ftrace->adreno, end_k, (uint64_t)(ts + dur));
	tp_slice_scoped(imp, ts, dur, track, 0, tp_db_str(imp->db, "GPU"));
}

/* Emits the batch @stamp once both its sync and retired events are known. */
static void try_emit(struct tp_import *imp, uint32_t machine, uint64_t stamp)
{
	uint64_t sync_ts, ticks, start, retire, ctx;

	if (!hmap_get(&imp->ftrace->adreno, key(AK_SYNC_TS, stamp), &sync_ts) ||
	    !hmap_get(&imp->ftrace->adreno, key(AK_SYNC_TICKS, stamp), &ticks) ||
	    !hmap_get(&imp->ftrace->adreno, key(AK_PEND_START, stamp), &start) ||
	    !hmap_get(&imp->ftrace->adreno, key(AK_PEND_RETIRE, stamp), &retire) ||
	    !hmap_get(&imp->ftrace->adreno, key(AK_PEND_CTX, stamp), &ctx))
		return;
	hmap_del(&imp->ftrace->adreno, key(AK_SYNC_TS, stamp), NULL);
	hmap_del(&imp->ftrace->adreno, key(AK_SYNC_TICKS, stamp), NULL);
	hmap_del(&imp->ftrace->adreno, key(AK_PEND_START, stamp), NULL);
	hmap_del(&imp->ftrace->adreno, key(AK_PEND_RETIRE, stamp), NULL);
	hmap_del(&imp->ftrace->adreno, key(AK_PEND_CTX, stamp), NULL);
	batch_slice(imp, machine, (int64_t)sync_ts + ticks_to_ns((int64_t)(start - ticks)),
		    ticks_to_ns((int64_t)(retire - start)), (uint32_t)(ctx >> 32), (uint32_t)ctx);
}

void tp_adreno_cmdbatch(struct tp_import *imp, const struct tp_event *ev, int64_t tid,
			uint32_t event_id, const uint8_t *data, size_t len)
{
	struct pz_field f[18];
	uint64_t stamp, start, retire;

	if (pz_decode_table(data, len, f, 18) != PZ_OK)
		return;
	/* Every cmdbatch event has id (1) and timestamp (2). */
	stamp = (uint32_t)f[PB_KGSL_ADRENO_CMDBATCH_SYNC_FTRACE_EVENT__TIMESTAMP].value;
	switch (event_id) {
	case PB_FTRACE_EVENT__KGSL_ADRENO_CMDBATCH_QUEUED:
		hmap_put(&imp->ftrace->adreno,
			 key(AK_CTX_TID, (uint32_t)f[PB_KGSL_ADRENO_CMDBATCH_QUEUED_FTRACE_EVENT__ID].value),
			 (uint64_t)tid + 1);
		return;
	case PB_FTRACE_EVENT__KGSL_ADRENO_CMDBATCH_SYNC:
		hmap_put(&imp->ftrace->adreno, key(AK_SYNC_TS, stamp), (uint64_t)ev->ts);
		hmap_put(&imp->ftrace->adreno, key(AK_SYNC_TICKS, stamp),
			 f[PB_KGSL_ADRENO_CMDBATCH_SYNC_FTRACE_EVENT__TICKS].value);
		try_emit(imp, ev->machine, stamp);
		return;
	default:
		break;
	}
	start = f[PB_KGSL_ADRENO_CMDBATCH_RETIRED_FTRACE_EVENT__START].value;
	retire = f[PB_KGSL_ADRENO_CMDBATCH_RETIRED_FTRACE_EVENT__RETIRE].value;
	if (retire < start)
		return;
	hmap_put(&imp->ftrace->adreno, key(AK_PEND_START, stamp), start);
	hmap_put(&imp->ftrace->adreno, key(AK_PEND_RETIRE, stamp), retire);
	hmap_put(&imp->ftrace->adreno, key(AK_PEND_CTX, stamp),
		 (uint64_t)(uint32_t)f[PB_KGSL_ADRENO_CMDBATCH_RETIRED_FTRACE_EVENT__ID].value << 32 |
			 (uint32_t)f[PB_KGSL_ADRENO_CMDBATCH_RETIRED_FTRACE_EVENT__PRIO].value);
	try_emit(imp, ev->machine, stamp);
}

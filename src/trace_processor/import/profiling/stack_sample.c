// SPDX-License-Identifier: Apache-2.0
/*
 * stack_sample.c - TracePacket.stack_sample, the profiler-neutral sample
 * (a Python wall-clock sampler, a runtime, ...), as Perfetto imports it:
 * one session per sequence (a perf_session row, not a linux.perf one),
 * named by the sequence's
 * StackSampleDefaults.source; the task (process, thread, async context)
 * and execution (cpu, mode) contexts interned by value; the weights as
 * counters on one track per (session, counter) or per (session, counter,
 * cpu), grouped in a counter set; the callstack either interned on the
 * sequence or given inline (frames by name and source position, on a
 * mapping of their own, each with a stack_profile_symbol row).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/common/common.h"
#include "trace_processor/import/profiling/profiling.h"
#include "trace_processor/import/profiling/profiling_int.h"

#define MAX_FOLLOWERS 64    /* follower counters of one sample */
#define MAX_ASYNC_DEPTH 256 /* ancestors of one async context */

/* What one sample needs to know while it is parsed. */
struct ss_ctx {
	struct tp_import *imp;
	struct tp_profiling *p;
	uint32_t gen;     /* sequence generation, UINT32_MAX: none */
	uint32_t machine;
	int64_t ts;
	int64_t session;  /* row of perf_session (every profiler's sessions) */
	uint32_t source;  /* string id, 0: none */
	bool has_cpu;
	uint32_t cpu;
	int64_t set;      /* counter set, -1: none yet */
};

static const struct tp_interned *interned(const struct ss_ctx *c, uint32_t field, uint64_t iid)
{
	if (c->gen == UINT32_MAX || iid == 0)
		return NULL;
	return tp_seq_interned_quiet(c->imp, c->gen, field, iid);
}

static uint32_t str_of(struct tp_import *imp, const struct pz_field *f)
{
	return tp_str_intern(&imp->db->strings, (const char *)f->data, f->size);
}

/* ------------------------------------------------------------ sessions ---- */

static int64_t session_of(struct ss_ctx *c, uint32_t seq_id)
{
	struct key k = {KEY_SS_SESSION, seq_id, 0, 0, 0};
	struct tp_table *t = &c->imp->db->perf_session;
	uint64_t h;
	int64_t row = tp_prof_key_find(c->p, &k, &h);

	if (row >= 0)
		return row;
	row = tp_table_append(t);
	if (row < 0)
		return -1;
	tp_set_int(t, PERF_SESS_PERF_SESSION_ID, (size_t)row, row);
	if (c->source)
		tp_set_str(t, PERF_SESS_SOURCE, (size_t)row, c->source);
	tp_prof_key_put(c->p, h, &k, row);
	return row;
}

/* ----------------------------------------------------------- counters ---- */

static const char *unit_name(uint64_t unit)
{
	static const char *const names[] = {
		"",           "ns",           "cycles",           "instructions", "bytes",
		"page-faults", "cache-misses", "cache-references", "branch-misses", "count"};

	return unit < sizeof(names) / sizeof(names[0]) ? names[unit] : "";
}

/*
 * The counter track a CounterDescriptor (@d, @len) describes in the
 * sample's session; a timebase names the session's unit if it has none.
 * Return: its row, or -1 (a per-cpu counter of a sample without a cpu).
 */
static int64_t counter_track(struct ss_ctx *c, const uint8_t *d, uint32_t len, bool is_timebase)
{
	struct tp_import *imp = c->imp;
	struct pz_field f[8];
	uint32_t name, unit = 0, src = c->source ? c->source : tp_db_str(imp->db, "");
	struct tp_dim dims[4];
	size_t n = 0;
	struct tp_argset args = {0};
	bool per_cpu;
	int64_t row, set;

	if (pz_decode_table(d, len, f, 8) != PZ_OK)
		return -1;
	name = f[PB_STACK_SAMPLE_COUNTER_DESCRIPTOR__NAME].wire_type == PZ_WIRE_LEN &&
			       f[PB_STACK_SAMPLE_COUNTER_DESCRIPTOR__NAME].id
		       ? str_of(imp, &f[PB_STACK_SAMPLE_COUNTER_DESCRIPTOR__NAME])
		       : tp_db_str(imp->db, "");
	if (f[PB_STACK_SAMPLE_COUNTER_DESCRIPTOR__UNIT].id &&
	    f[PB_STACK_SAMPLE_COUNTER_DESCRIPTOR__UNIT].value != 0)
		unit = tp_db_str(imp->db, unit_name(f[PB_STACK_SAMPLE_COUNTER_DESCRIPTOR__UNIT].value));
	else if (f[PB_STACK_SAMPLE_COUNTER_DESCRIPTOR__UNIT_STR].id &&
		 f[PB_STACK_SAMPLE_COUNTER_DESCRIPTOR__UNIT_STR].wire_type == PZ_WIRE_LEN &&
		 f[PB_STACK_SAMPLE_COUNTER_DESCRIPTOR__UNIT_STR].size > 0)
		unit = str_of(imp, &f[PB_STACK_SAMPLE_COUNTER_DESCRIPTOR__UNIT_STR]);
	if (is_timebase && unit &&
	    tp_get_str(&imp->db->perf_session, PERF_SESS_TIMEBASE_UNIT, (size_t)c->session) ==
		    TP_NULL_STR)
		tp_set_str(&imp->db->perf_session, PERF_SESS_TIMEBASE_UNIT, (size_t)c->session, unit);

	per_cpu = f[PB_STACK_SAMPLE_COUNTER_DESCRIPTOR__SCOPE].id &&
		  f[PB_STACK_SAMPLE_COUNTER_DESCRIPTOR__SCOPE].value ==
			  PBE_STACK_SAMPLE_COUNTER_DESCRIPTOR_SCOPE__SCOPE_CPU;
	if (per_cpu) {
		if (!c->has_cpu)
			return -1;
		dims[n++] = (struct tp_dim){"cpu", TP_DIM_UINT, c->cpu};
	}
	dims[n++] = (struct tp_dim){"session_id", TP_DIM_UINT, c->session};
	dims[n++] = (struct tp_dim){"source", TP_DIM_STR, src};
	dims[n++] = (struct tp_dim){"counter_name", TP_DIM_STR, name};
	row = tp_track_dims(imp, per_cpu ? "stack_sample_cpu_counter" : "stack_sample_session_counter",
			    name, true, c->machine, dims, n, 0);
	if (row < 0)
		return -1;
	if (tp_get_int(&imp->db->track, TRACK_SOURCE_ARG_SET_ID, (size_t)row) != TP_NULL_INT)
		return row; /* not new */
	if (unit)
		tp_set_str(&imp->db->track, TRACK_UNIT, (size_t)row, unit);
	tp_argset_bool(imp, &args, tp_db_str(imp->db, "is_timebase"), is_timebase);
	if (f[PB_STACK_SAMPLE_COUNTER_DESCRIPTOR__UNIT_MULTIPLIER].id)
		tp_argset_int(imp, &args, tp_db_str(imp->db, "unit_multiplier"),
			      (int64_t)f[PB_STACK_SAMPLE_COUNTER_DESCRIPTOR__UNIT_MULTIPLIER].value);
	if (f[PB_STACK_SAMPLE_COUNTER_DESCRIPTOR__DESCRIPTION].id &&
	    f[PB_STACK_SAMPLE_COUNTER_DESCRIPTOR__DESCRIPTION].wire_type == PZ_WIRE_LEN &&
	    f[PB_STACK_SAMPLE_COUNTER_DESCRIPTOR__DESCRIPTION].size > 0)
		tp_argset_str(imp, &args, tp_db_str(imp->db, "description"),
			      str_of(imp, &f[PB_STACK_SAMPLE_COUNTER_DESCRIPTOR__DESCRIPTION]));
	set = tp_argset_commit(imp, &args);
	tp_argset_fini(&args);
	if (set != TP_NULL_INT)
		tp_set_int(&imp->db->track, TRACK_SOURCE_ARG_SET_ID, (size_t)row, set);
	return row;
}

static void push_counter(struct ss_ctx *c, int64_t track, uint64_t v)
{
	if (track >= 0)
		tp_prof_counter_set_add(c->imp, &c->set, tp_counter_add(c->imp, c->ts, track, (double)v));
}

/* The counter track of interned CounterDescriptor @iid, or -1. */
static int64_t interned_counter_track(struct ss_ctx *c, uint64_t iid, bool is_timebase)
{
	const struct tp_interned *e =
		interned(c, PB_INTERNED_DATA__STACK_SAMPLE_COUNTER_DESCRIPTORS, iid);

	return e ? counter_track(c, e->msg, e->len, is_timebase) : -1;
}

/*
 * The weights of sample @s: the primary one on the timebase (the sample's
 * descriptor, else the defaults'), then the followers by position (the
 * sample's descriptors, else their iids, else the defaults').
 */
static void weights(struct ss_ctx *c, const uint8_t *s, uint32_t len,
		    const struct pz_field *sf, const uint8_t *defs, uint32_t defs_len)
{
	int64_t tracks[MAX_FOLLOWERS], timebase = -1;
	uint32_t n = 0, i = 0;
	struct pz_reader r;
	struct pz_field f;
	bool have_primary = false;

	if (sf[PB_STACK_SAMPLE__PRIMARY_DESCRIPTOR].id &&
	    sf[PB_STACK_SAMPLE__PRIMARY_DESCRIPTOR].wire_type == PZ_WIRE_LEN) {
		timebase = counter_track(c, sf[PB_STACK_SAMPLE__PRIMARY_DESCRIPTOR].data,
					 sf[PB_STACK_SAMPLE__PRIMARY_DESCRIPTOR].size, true);
		have_primary = true;
	} else if (sf[PB_STACK_SAMPLE__PRIMARY_DESCRIPTOR_IID].id) {
		timebase = interned_counter_track(c, sf[PB_STACK_SAMPLE__PRIMARY_DESCRIPTOR_IID].value,
						  true);
		have_primary = true;
	}
	if (!have_primary && defs) {
		pz_reader_init(&r, defs, defs_len);
		while (pz_reader_next(&r, &f) > 0)
			if (f.id == PB_STACK_SAMPLE_DEFAULTS__PRIMARY_DESCRIPTOR &&
			    f.wire_type == PZ_WIRE_LEN)
				timebase = counter_track(c, f.data, f.size, true);
	}
	if (timebase >= 0 && sf[PB_STACK_SAMPLE__PRIMARY_WEIGHT].id)
		push_counter(c, timebase, sf[PB_STACK_SAMPLE__PRIMARY_WEIGHT].value);

	/* Followers: inline descriptors. */
	pz_reader_init(&r, s, len);
	while (pz_reader_next(&r, &f) > 0 && n < MAX_FOLLOWERS)
		if (f.id == PB_STACK_SAMPLE__FOLLOWER_DESCRIPTORS && f.wire_type == PZ_WIRE_LEN)
			tracks[n++] = counter_track(c, f.data, f.size, false);
	/* Else interned ones. */
	if (n == 0) {
		pz_reader_init(&r, s, len);
		while (pz_reader_next(&r, &f) > 0) {
			struct pz_varints it;
			uint64_t iid;

			if (f.id != PB_STACK_SAMPLE__FOLLOWER_DESCRIPTOR_IIDS)
				continue;
			pz_varints_init(&it, &f);
			while (n < MAX_FOLLOWERS &&
			       pz_varints_next(&it, &iid)) {
				tracks[n++] = interned_counter_track(c, iid, false);
			}
		}
	}
	/* Else the defaults'. */
	if (n == 0 && defs) {
		pz_reader_init(&r, defs, defs_len);
		while (pz_reader_next(&r, &f) > 0 && n < MAX_FOLLOWERS)
			if (f.id == PB_STACK_SAMPLE_DEFAULTS__FOLLOWER_DESCRIPTORS &&
			    f.wire_type == PZ_WIRE_LEN)
				tracks[n++] = counter_track(c, f.data, f.size, false);
	}
	pz_reader_init(&r, s, len);
	while (pz_reader_next(&r, &f) > 0 && i < n) {
		struct pz_varints it;
		uint64_t v;

		if (f.id != PB_STACK_SAMPLE__FOLLOWER_WEIGHTS)
			continue;
		pz_varints_init(&it, &f);
		while (i < n && pz_varints_next(&it, &v)) {
			push_counter(c, tracks[i++], v);
		}
	}
}

/* ----------------------------------------------------------- contexts ---- */

/*
 * The async context of interned descriptor @iid: it and the ancestors not
 * yet seen get rows, the oldest first. Return: its row, or -1 (unknown).
 */
static int64_t async_context(struct ss_ctx *c, uint64_t iid)
{
	const struct tp_interned *chain[MAX_ASYNC_DEPTH];
	struct tp_table *t = &c->imp->db->ss_async;
	int64_t parent = -1;
	uint32_t n = 0;

	while (iid && n < MAX_ASYNC_DEPTH) {
		const struct tp_interned *e =
			interned(c, PB_INTERNED_DATA__STACK_SAMPLE_ASYNC_CONTEXT_DESCRIPTORS, iid);
		struct key k = {KEY_SS_ASYNC, 0, 0, 0, 0};
		struct pz_field f[5];
		uint64_t h;
		uint32_t i;
		bool loop = false;

		if (!e)
			break;
		k.a = tp_seq_interned_index(c->imp, e);
		parent = tp_prof_key_find(c->p, &k, &h);
		if (parent >= 0)
			break;
		for (i = 0; i < n; i++)
			loop |= chain[i] == e;
		if (loop)
			break;
		chain[n++] = e;
		iid = pz_decode_table(e->msg, e->len, f, 5) == PZ_OK &&
				      f[PB_STACK_SAMPLE_ASYNC_CONTEXT_DESCRIPTOR__PARENT_IID].id
			      ? f[PB_STACK_SAMPLE_ASYNC_CONTEXT_DESCRIPTOR__PARENT_IID].value
			      : 0;
	}
	while (n > 0) {
		const struct tp_interned *e = chain[--n];
		struct key k = {KEY_SS_ASYNC, tp_seq_interned_index(c->imp, e), 0, 0, 0};
		struct pz_field f[5];
		int64_t row = tp_table_append(t);

		if (row < 0)
			return -1;
		if (pz_decode_table(e->msg, e->len, f, 5) == PZ_OK) {
			const struct pz_field *nm = &f[PB_STACK_SAMPLE_ASYNC_CONTEXT_DESCRIPTOR__NAME];
			const struct pz_field *kd = &f[PB_STACK_SAMPLE_ASYNC_CONTEXT_DESCRIPTOR__KIND];

			if (nm->id && nm->wire_type == PZ_WIRE_LEN && nm->size > 0)
				tp_set_str(t, SS_ASYNC_NAME, (size_t)row, str_of(c->imp, nm));
			if (kd->id && kd->wire_type == PZ_WIRE_LEN && kd->size > 0)
				tp_set_str(t, SS_ASYNC_KIND, (size_t)row, str_of(c->imp, kd));
		}
		if (parent >= 0)
			tp_set_int(t, SS_ASYNC_PARENT_ID, (size_t)row, parent);
		tp_prof_key_set(c->p, &k, row);
		parent = row;
	}
	return parent;
}

/* The task context a TaskContext (@d, @len) names; *@upid: its process (-1: none). */
static int64_t task_context(struct ss_ctx *c, const uint8_t *d, uint32_t len, int64_t *upid)
{
	struct tp_table *t = &c->imp->db->ss_task;
	struct pz_field f[5];
	int64_t utid = -1, async = -1, row;
	struct key k = {KEY_SS_TASK, 0, 0, 0, 0};
	uint64_t h;

	if (pz_decode_table(d, len, f, 5) != PZ_OK)
		return -1;
	if (f[PB_STACK_SAMPLE_TASK_CONTEXT__PID].id)
		*upid = tp_proc_get_process_main(c->imp, c->machine,
						 (uint32_t)f[PB_STACK_SAMPLE_TASK_CONTEXT__PID].value);
	if (f[PB_STACK_SAMPLE_TASK_CONTEXT__TID].id) {
		uint32_t tid = (uint32_t)f[PB_STACK_SAMPLE_TASK_CONTEXT__TID].value;

		utid = f[PB_STACK_SAMPLE_TASK_CONTEXT__PID].id
			       ? tp_proc_update_thread(
					 c->imp, c->machine, tid,
					 (uint32_t)f[PB_STACK_SAMPLE_TASK_CONTEXT__PID].value)
			       : tp_proc_get_thread(c->imp, c->machine, tid);
	}
	if (f[PB_STACK_SAMPLE_TASK_CONTEXT__ASYNC_ID].id)
		async = async_context(c, f[PB_STACK_SAMPLE_TASK_CONTEXT__ASYNC_ID].value);
	k.a = (uint64_t)(*upid + 1);
	k.b = (uint64_t)(utid + 1);
	k.c = (uint64_t)(async + 1);
	row = tp_prof_key_find(c->p, &k, &h);
	if (row >= 0)
		return row;
	row = tp_table_append(t);
	if (row < 0)
		return -1;
	if (*upid >= 0)
		tp_set_int(t, SS_TASK_UPID, (size_t)row, *upid);
	if (utid >= 0)
		tp_set_int(t, SS_TASK_UTID, (size_t)row, utid);
	if (async >= 0)
		tp_set_int(t, SS_TASK_ASYNC_CONTEXT_ID, (size_t)row, async);
	tp_prof_key_put(c->p, h, &k, row);
	return row;
}

/* The execution context an ExecutionContext (@d, @len) names. */
static int64_t execution_context(struct ss_ctx *c, const uint8_t *d, uint32_t len)
{
	static const char *const modes[] = {NULL,         "user",       "kernel",
					    "hypervisor", "guest_user", "guest_kernel"};
	struct tp_table *t = &c->imp->db->ss_exec;
	struct pz_field f[4];
	int64_t ucpu = -1, row;
	uint32_t mode = 0;
	struct key k = {KEY_SS_EXEC, 0, 0, 0, 0};
	uint64_t h;

	if (pz_decode_table(d, len, f, 4) != PZ_OK)
		return -1;
	if (f[PB_STACK_SAMPLE_EXECUTION_CONTEXT__CPU].id) {
		c->has_cpu = true;
		c->cpu = (uint32_t)f[PB_STACK_SAMPLE_EXECUTION_CONTEXT__CPU].value;
		ucpu = tp_sched_ucpu(c->imp, c->machine, c->cpu);
	}
	if (f[PB_STACK_SAMPLE_EXECUTION_CONTEXT__MODE].id) {
		uint64_t m = f[PB_STACK_SAMPLE_EXECUTION_CONTEXT__MODE].value;

		if (m < sizeof(modes) / sizeof(modes[0]) && modes[m])
			mode = tp_db_str(c->imp->db, modes[m]);
	}
	k.a = (uint64_t)(ucpu + 1);
	k.b = mode;
	row = tp_prof_key_find(c->p, &k, &h);
	if (row >= 0)
		return row;
	row = tp_table_append(t);
	if (row < 0)
		return -1;
	if (ucpu >= 0)
		tp_set_int(t, SS_EXEC_UCPU, (size_t)row, ucpu);
	if (mode)
		tp_set_str(t, SS_EXEC_CPU_MODE, (size_t)row, mode);
	tp_prof_key_put(c->p, h, &k, row);
	return row;
}

/* ---------------------------------------------------------- callstack ---- */

/* ------------------------------------------------------------- sample ---- */

void tp_stack_sample(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
		     size_t len)
{
	struct tp_profiling *p = tp_prof_state(imp);
	struct pz_field f[15];
	struct ss_ctx c;
	const struct tp_seq_gen *g = NULL;
	const uint8_t *defs = NULL;
	uint32_t defs_len = 0;
	int64_t upid = -1, task = -1, exec = -1, cs = -1, row;
	struct tp_table *t = &imp->db->ss_sample;

	if (!p || len > UINT32_MAX || pz_decode_table(data, len, f, 15) != PZ_OK)
		return;
	memset(&c, 0, sizeof(c));
	c.imp = imp;
	c.p = p;
	c.gen = ev->aux ? ev->aux - 1 : UINT32_MAX;
	c.machine = ev->machine;
	c.ts = ev->ts;
	c.set = -1;
	if (c.gen != UINT32_MAX)
		g = tp_seq_gen(imp, c.gen);
	if (g && g->ss_defaults) {
		struct pz_field d[4];

		defs = g->ss_defaults;
		defs_len = g->ss_defaults_len;
		if (pz_decode_table(defs, defs_len, d, 4) == PZ_OK &&
		    d[PB_STACK_SAMPLE_DEFAULTS__SOURCE].id &&
		    d[PB_STACK_SAMPLE_DEFAULTS__SOURCE].wire_type == PZ_WIRE_LEN &&
		    d[PB_STACK_SAMPLE_DEFAULTS__SOURCE].size > 0)
			c.source = str_of(imp, &d[PB_STACK_SAMPLE_DEFAULTS__SOURCE]);
	}

	if (f[PB_STACK_SAMPLE__TASK_CONTEXT].id &&
	    f[PB_STACK_SAMPLE__TASK_CONTEXT].wire_type == PZ_WIRE_LEN) {
		task = task_context(&c, f[PB_STACK_SAMPLE__TASK_CONTEXT].data,
				    f[PB_STACK_SAMPLE__TASK_CONTEXT].size, &upid);
	} else if (f[PB_STACK_SAMPLE__TASK_CONTEXT_IID].id) {
		const struct tp_interned *e = interned(&c, PB_INTERNED_DATA__STACK_SAMPLE_TASK_CONTEXTS,
						       f[PB_STACK_SAMPLE__TASK_CONTEXT_IID].value);

		if (e)
			task = task_context(&c, e->msg, e->len, &upid);
	}
	if (f[PB_STACK_SAMPLE__EXECUTION_CONTEXT].id &&
	    f[PB_STACK_SAMPLE__EXECUTION_CONTEXT].wire_type == PZ_WIRE_LEN) {
		exec = execution_context(&c, f[PB_STACK_SAMPLE__EXECUTION_CONTEXT].data,
					 f[PB_STACK_SAMPLE__EXECUTION_CONTEXT].size);
	} else if (f[PB_STACK_SAMPLE__EXECUTION_CONTEXT_IID].id) {
		const struct tp_interned *e =
			interned(&c, PB_INTERNED_DATA__STACK_SAMPLE_EXECUTION_CONTEXTS,
				 f[PB_STACK_SAMPLE__EXECUTION_CONTEXT_IID].value);

		if (e)
			exec = execution_context(&c, e->msg, e->len);
	}
	c.session = session_of(&c, tp_seq_id(imp, ev->seq_idx));
	if (c.session < 0)
		return;
	weights(&c, data, (uint32_t)len, f, defs, defs_len);

	if (f[PB_STACK_SAMPLE__CALLSTACK_IID].id) {
		if (c.gen == UINT32_MAX)
			tp_stat_add(imp, "stackprofile_invalid_callstack_id", -1, ev->machine, 1);
		else
			cs = tp_prof_callstack(imp, p, c.gen, upid,
					       f[PB_STACK_SAMPLE__CALLSTACK_IID].value, ev->machine);
	} else if (f[PB_STACK_SAMPLE__CALLSTACK].id &&
		   f[PB_STACK_SAMPLE__CALLSTACK].wire_type == PZ_WIRE_LEN) {
		cs = tp_prof_inline_callstack(imp, p, &p->ss_inline_mapping, "stack_sample_inline",
					      f[PB_STACK_SAMPLE__CALLSTACK].data,
					      f[PB_STACK_SAMPLE__CALLSTACK].size);
	}

	row = tp_table_append(t);
	if (row < 0)
		return;
	tp_set_int(t, SS_TS, (size_t)row, ev->ts);
	if (c.source)
		tp_set_str(t, SS_SOURCE, (size_t)row, c.source);
	if (task >= 0)
		tp_set_int(t, SS_TASK_CONTEXT_ID, (size_t)row, task);
	if (exec >= 0)
		tp_set_int(t, SS_EXECUTION_CONTEXT_ID, (size_t)row, exec);
	if (cs >= 0)
		tp_set_int(t, SS_CALLSITE_ID, (size_t)row, cs);
	tp_set_int(t, SS_SESSION_ID, (size_t)row, c.session);
	if (c.set >= 0)
		tp_set_int(t, SS_COUNTER_SET_ID, (size_t)row, c.set);
}

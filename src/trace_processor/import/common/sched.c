// SPDX-License-Identifier: Apache-2.0
/*
 * sched.c - sched slices and thread states from sched_switch and
 * sched_waking, in trace time order. Each CPU has one open sched slice
 * (closed by the next switch on that CPU; still open at the end: dur -1).
 * Each thread has one open thread_state row: Running while on a CPU, then
 * the letters of its prev_state (S, D, R, R+, ...) until a waking makes it
 * R (with the waker, the thread running where the waking happened) or a
 * switch runs it again. The idle thread (utid 0) has no thread states.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/import/common/common.h"

#define STATE_CACHE 0x200         /* prev_state values whose letters are cached */
#define CPU_CACHE 256             /* host CPUs whose ucpu is cached */

/* Per-CPU state of the sched parser (indexed by ucpu). */
struct cpu_state {
	int64_t sched_row;            /* open sched slice or -1 */
	int64_t running_utid;         /* -1: unknown */
	int64_t last_pid;             /* next_pid of the last switch */
	int64_t last_prio;            /* next_prio of the last switch */
	int64_t last_ts;
};

/* Per-thread state of the thread_state builder (indexed by utid). */
struct thread_state {
	int64_t open_row;             /* open thread_state row or -1 */
	int64_t open_ts;              /* its ts and state, kept here so that */
	uint32_t open_state;          /* closing it reads no table (a cache miss) */
};

struct tp_sched {
	uint32_t state_ids[STATE_CACHE]; /* end_state strings of prev_state values */
	uint32_t running_id;
	struct hmap cpu_rows;         /* (machine << 32 | cpu) -> ucpu */
	struct cpu_state *cpus;
	size_t n_cpus;
	struct thread_state *threads;
	size_t cap_threads;
	/*
	 * Caches of lookups every event repeats: each only ever holds the
	 * value the lookup would return.
	 */
	uint32_t ucpu_plus1[CPU_CACHE]; /* machine 0; 0: not looked up */
	int64_t mismatch_stat_plus1;  /* machine 0 stats row */
};

int tp_sched_init(struct tp_import *imp)
{
	imp->sched = calloc(1, sizeof(*imp->sched));
	return imp->sched ? 0 : -ENOMEM;
}

void tp_sched_fini(struct tp_import *imp)
{
	struct tp_sched *s = imp->sched;

	if (!s)
		return;
	hmap_fini(&s->cpu_rows);
	free(s->cpus);
	free(s->threads);
	free(s);
	imp->sched = NULL;
}

/*
 * The state of thread @utid (> 0), made if @grow (NULL on OOM); without
 * @grow, NULL for a thread that never had one.
 */
static struct thread_state *thread_of(struct tp_sched *s, int64_t utid, bool grow)
{
	size_t cap = s->cap_threads ? s->cap_threads : 256, i;
	struct thread_state *t;

	if ((size_t)utid < s->cap_threads)
		return &s->threads[utid];
	if (!grow)
		return NULL;
	while (cap <= (size_t)utid)
		cap *= 2;
	t = realloc(s->threads, cap * sizeof(*t));
	if (!t)
		return NULL;
	for (i = s->cap_threads; i < cap; i++)
		t[i].open_row = -1;
	s->threads = t;
	s->cap_threads = cap;
	return &t[utid];
}

/*
 * Every ftrace event asks for its CPU's row: the host's are cached. As in
 * Perfetto, a machine's CPUs are the rows from machine * 4096 on (ucpu =
 * cpu on the host); rows of CPUs never seen have a NULL cpu, and the cpu
 * view leaves them out.
 */
int64_t tp_sched_ucpu(struct tp_import *imp, uint32_t machine, uint32_t cpu)
{
	uint64_t k = ((uint64_t)machine << 32) | cpu, v;
	struct tp_sched *s = imp->sched;
	struct tp_table *c = &imp->db->cpu;
	bool cacheable = machine == 0 && cpu < CPU_CACHE;
	int64_t row;

	if (cacheable && s->ucpu_plus1[cpu])
		return (int64_t)s->ucpu_plus1[cpu] - 1;
	if (hmap_get(&s->cpu_rows, k, &v)) {
		if (cacheable)
			s->ucpu_plus1[cpu] = (uint32_t)v + 1;
		return (int64_t)v;
	}
	if (cpu >= TP_MAX_CPUS_PER_MACHINE)
		return -1;
	if (machine >= TP_MAX_CPU_MACHINES) {
		tp_stat_add(imp, "cpu_machine_limit_exceeded", -1, machine, 1);
		return -1;
	}
	row = (int64_t)machine * TP_MAX_CPUS_PER_MACHINE + cpu;
	while ((int64_t)c->n_rows <= row) {
		int64_t r = tp_table_append(c);

		if (r < 0)
			return -1;
		/* Perfetto's cluster_id is never NULL: 0 until a CpuInfo says. */
		tp_set_int(c, CPU_MACHINE_ID, (size_t)r, r / TP_MAX_CPUS_PER_MACHINE);
		tp_set_int(c, CPU_CLUSTER_ID, (size_t)r, 0);
	}
	tp_set_int(c, CPU_CPU, (size_t)row, cpu);
	if (hmap_put(&s->cpu_rows, k, (uint64_t)row) < 0)
		return -1;
	if ((size_t)row >= s->n_cpus) {
		size_t n = (size_t)row + 1, i;
		struct cpu_state *cs = realloc(s->cpus, n * sizeof(*cs));

		if (!cs)
			return -1;
		for (i = s->n_cpus; i < n; i++) {
			cs[i].sched_row = -1;
			cs[i].running_utid = -1;
			cs[i].last_pid = -1;
			cs[i].last_prio = 0;
			cs[i].last_ts = 0;
		}
		s->cpus = cs;
		s->n_cpus = n;
	}
	return row;
}

int64_t tp_sched_find_ucpu(struct tp_import *imp, uint32_t machine, uint32_t cpu)
{
	uint64_t v;

	if (!hmap_get(&imp->sched->cpu_rows, ((uint64_t)machine << 32) | cpu, &v))
		return -1;
	return (int64_t)v;
}

int64_t tp_sched_running(struct tp_import *imp, int64_t ucpu)
{
	return imp->sched->cpus[ucpu].running_utid;
}

void tp_sched_set_running(struct tp_import *imp, int64_t ucpu, int64_t utid)
{
	imp->sched->cpus[ucpu].running_utid = utid;
}

int64_t tp_sched_last_prio(struct tp_import *imp, int64_t ucpu)
{
	return imp->sched->cpus[ucpu].last_prio;
}

void tp_sched_set_last_prio(struct tp_import *imp, int64_t ucpu, int64_t prio)
{
	imp->sched->cpus[ucpu].last_prio = prio;
}

/* The letters of a prev_state, interned (see state_str()). */
static uint32_t state_letters(struct tp_import *imp, int64_t prev_state)
{
	/* Linux >= 4.14 report bits (TASK_REPORT), then the preemption bit. */
	static const char letters[] = "SDTtXZPI";
	char s[16];
	size_t n = 0, i;

	if (prev_state == 0)
		return tp_db_str(imp->db, "R");
	if (prev_state & 0x100)
		return tp_db_str(imp->db, "R+");
	for (i = 0; i < 8; i++)
		if (prev_state & (1 << i))
			s[n++] = letters[i];
	if (n == 0)
		return tp_db_str(imp->db, "?");
	s[n] = '\0';
	return tp_db_str(imp->db, s);
}

/*
 * The end_state letters of a prev_state value: every switch asks, so the
 * common values are interned once.
 */
static uint32_t state_str(struct tp_import *imp, int64_t prev_state)
{
	uint32_t *slot;

	if (prev_state < 0 || prev_state >= STATE_CACHE)
		return state_letters(imp, prev_state);
	slot = &imp->sched->state_ids[prev_state];
	if (!*slot)
		*slot = state_letters(imp, prev_state);
	return *slot;
}

static uint32_t running_str(struct tp_import *imp)
{
	if (!imp->sched->running_id)
		imp->sched->running_id = tp_db_str(imp->db, "Running");
	return imp->sched->running_id;
}

/* Closes @utid's open thread state at @ts. */
static void close_state(struct tp_import *imp, int64_t utid, int64_t ts)
{
	struct tp_table *t = &imp->db->thread_state;
	struct thread_state *th;

	if (utid <= 0 || !(th = thread_of(imp->sched, utid, false)) || th->open_row < 0)
		return;
	tp_set_int(t, TSTATE_DUR, (size_t)th->open_row, tp_ts_sub(ts, th->open_ts));
	th->open_row = -1;
}

static int64_t open_state(struct tp_import *imp, int64_t utid, int64_t ts, uint32_t state,
			  int64_t cpu, int64_t ucpu)
{
	struct tp_table *t = &imp->db->thread_state;
	struct thread_state *th;
	int64_t row;

	if (utid <= 0 || !(th = thread_of(imp->sched, utid, true)))
		return -1;
	close_state(imp, utid, ts);
	row = tp_table_append(t);
	if (row < 0)
		return -1;
	tp_set_int(t, TSTATE_TS, (size_t)row, ts);
	tp_set_int(t, TSTATE_DUR, (size_t)row, -1);
	tp_set_int(t, TSTATE_UTID, (size_t)row, utid);
	tp_set_str(t, TSTATE_STATE, (size_t)row, state);
	tp_set_int(t, TSTATE_CPU, (size_t)row, cpu);
	tp_set_int(t, TSTATE_UCPU, (size_t)row, ucpu);
	th->open_row = row;
	th->open_ts = ts;
	th->open_state = state;
	return row;
}

/* A switch away from a thread other than the one running: lost events. */
static void mismatched_tids(struct tp_import *imp, uint32_t machine)
{
	static const char name[] = "mismatched_sched_switch_tids";
	int64_t row;

	if (machine != 0) {
		tp_stat_add(imp, name, -1, machine, 1);
		return;
	}
	/* A busy trace has millions: its stats row is looked up once. */
	if (!imp->sched->mismatch_stat_plus1) {
		row = tp_stat_row(imp, name, -1, 0);
		if (row < 0)
			return;
		imp->sched->mismatch_stat_plus1 = row + 1;
	}
	tp_stat_add_row(imp, imp->sched->mismatch_stat_plus1 - 1, 1);
}

void tp_sched_switch(struct tp_import *imp, uint32_t machine, uint32_t cpu, int64_t ts,
		     int64_t prev_pid, int64_t prev_utid, int64_t prev_state, int64_t next_pid,
		     uint32_t next_comm, int64_t next_prio)
{
	struct tp_table *s = &imp->db->sched;
	int64_t ucpu = tp_sched_ucpu(imp, machine, cpu);
	int64_t next_utid, row;
	struct cpu_state *c;
	uint32_t end_state;

	if (ucpu < 0)
		return;
	c = &imp->sched->cpus[ucpu];
	if (prev_utid < 0)
		prev_utid = tp_proc_get_thread(imp, machine, prev_pid);
	next_utid = tp_proc_get_thread(imp, machine, next_pid);
	if (prev_utid < 0 || next_utid < 0)
		return;
	(void)next_comm; /* the importer named the threads (tp_ftrace_name_switch()) */
	end_state = state_str(imp, prev_state);
	if (c->sched_row >= 0) {
		if (prev_pid != c->last_pid) {
			mismatched_tids(imp, machine);
		} else {
			tp_set_int(s, SCHED_DUR, (size_t)c->sched_row,
				   tp_ts_sub(ts, tp_get_int(s, SCHED_TS, c->sched_row)));
			tp_set_str(s, SCHED_END_STATE, (size_t)c->sched_row, end_state);
		}
	}
	/*
	 * The previous thread leaves the CPU in its new state. If its last
	 * state was not Running, events were lost: that state keeps dur -1
	 * (Perfetto's ClosePendingState with data loss).
	 */
	if (prev_utid > 0) {
		struct thread_state *th = thread_of(imp->sched, prev_utid, false);

		if (th && th->open_row >= 0 && th->open_state != running_str(imp))
			th->open_row = -1;
		open_state(imp, prev_utid, ts, end_state, TP_NULL_INT, TP_NULL_INT);
	}
	row = tp_table_append(s);
	if (row < 0)
		return;
	tp_set_int(s, SCHED_TS, (size_t)row, ts);
	tp_set_int(s, SCHED_DUR, (size_t)row, -1);
	tp_set_int(s, SCHED_CPU, (size_t)row, cpu);
	tp_set_int(s, SCHED_UTID, (size_t)row, next_utid);
	tp_set_int(s, SCHED_PRIORITY, (size_t)row, next_prio);
	tp_set_int(s, SCHED_UCPU, (size_t)row, ucpu);
	c->sched_row = row;
	c->running_utid = next_utid;
	c->last_pid = next_pid;
	c->last_prio = next_prio;
	c->last_ts = ts;
	if (next_utid > 0)
		open_state(imp, next_utid, ts, running_str(imp), cpu, ucpu);
	tp_bounds_add(imp->db, ts);
}

/* The waker's row a new state points at: its last one, if it is running. */
static void set_waker(struct tp_import *imp, int64_t row, int64_t waker_utid)
{
	struct tp_table *t = &imp->db->thread_state;
	const struct thread_state *w;

	if (waker_utid < 0)
		return;
	tp_set_int(t, TSTATE_WAKER_UTID, (size_t)row, waker_utid);
	w = waker_utid > 0 ? thread_of(imp->sched, waker_utid, false) : NULL;
	if (w && w->open_row >= 0 && w->open_state == running_str(imp))
		tp_set_int(t, TSTATE_WAKER_ID, (size_t)row, w->open_row);
}

void tp_sched_waking(struct tp_import *imp, uint32_t machine, uint32_t cpu, int64_t ts,
		     int64_t pid, int64_t waker_utid, int64_t irq_context)
{
	struct tp_table *t = &imp->db->thread_state;
	int64_t utid = tp_proc_get_thread(imp, machine, pid);
	int64_t ucpu = tp_sched_ucpu(imp, machine, cpu);
	const struct thread_state *th;
	int64_t row;

	if (utid <= 0 || ucpu < 0)
		return;
	th = thread_of(imp->sched, utid, false);
	if (th && th->open_row >= 0) {
		uint32_t st = th->open_state;

		/*
		 * Already runnable or running: a waking changes nothing. R+
		 * (preempted) counts as blocked, as in Perfetto.
		 */
		if (st == running_str(imp) || st == state_str(imp, 0))
			return;
	}
	row = open_state(imp, utid, ts, state_str(imp, 0), TP_NULL_INT, TP_NULL_INT);
	if (row >= 0) {
		set_waker(imp, row, waker_utid);
		tp_set_int(t, TSTATE_IRQ_CONTEXT, (size_t)row, irq_context);
	}
	tp_bounds_add(imp->db, ts);
}

int64_t tp_sched_push_state(struct tp_import *imp, int64_t utid, int64_t ts, uint32_t state,
			    int64_t cpu, int64_t ucpu)
{
	int64_t row = open_state(imp, utid, ts, state, cpu, ucpu);

	if (row >= 0)
		tp_bounds_add(imp->db, ts);
	return row;
}

int64_t tp_sched_open_state(struct tp_import *imp, int64_t utid)
{
	const struct thread_state *th;

	if (utid <= 0 || !(th = thread_of(imp->sched, utid, false)))
		return -1;
	return th->open_row;
}

void tp_sched_set_open_state(struct tp_import *imp, int64_t utid, uint32_t state)
{
	struct thread_state *th;

	if (utid <= 0 || !(th = thread_of(imp->sched, utid, false)) || th->open_row < 0)
		return;
	tp_set_str(&imp->db->thread_state, TSTATE_STATE, (size_t)th->open_row, state);
	th->open_state = state;
}

void tp_sched_new_task(struct tp_import *imp, int64_t ts, int64_t utid, int64_t waker_utid)
{
	struct tp_table *t = &imp->db->thread_state;
	int64_t row = open_state(imp, utid, ts, state_str(imp, 0), TP_NULL_INT, TP_NULL_INT);

	if (row < 0)
		return;
	set_waker(imp, row, waker_utid);
	tp_set_int(t, TSTATE_IRQ_CONTEXT, (size_t)row, 0);
	tp_bounds_add(imp->db, ts);
}

void tp_sched_finish(struct tp_import *imp)
{
	hmap_fini(&imp->sched->cpu_rows);
}

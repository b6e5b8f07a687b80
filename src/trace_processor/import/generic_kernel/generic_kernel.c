// SPDX-License-Identifier: Apache-2.0
/*
 * generic_kernel.c - the kernel-agnostic GenericKernel* packets, called
 * by parse.c in trace time order: task state changes become sched
 * slices and thread states, renames and process trees fill the thread and
 * process tables, CPU frequency events become cpufreq counters.
 *
 * A task state event describes one task only, so a context switch arrives
 * as two events in either order: "A stops, B runs" or "B runs, A stops".
 * Each CPU remembers its running slice; when B replaces A before A's end
 * state is known, A's slice ends with no end state and A gets a thread
 * state with no state, both filled in if A's end state comes at that very
 * timestamp.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/common/common.h"
#include "trace_processor/import/generic_kernel/generic_kernel.h"

/* CPU numbers accepted in events (a CPU table row is made per CPU seen). */
#define GK_MAX_CPU 65536

/* The TaskStateEnum values (generic_kernel.proto). */
enum gk_task_state {
	GK_UNKNOWN = PBE_GENERIC_KERNEL_TASK_STATE_EVENT_TASK_STATE_ENUM__TASK_STATE_UNKNOWN,
	GK_CREATED = PBE_GENERIC_KERNEL_TASK_STATE_EVENT_TASK_STATE_ENUM__TASK_STATE_CREATED,
	GK_RUNNING = PBE_GENERIC_KERNEL_TASK_STATE_EVENT_TASK_STATE_ENUM__TASK_STATE_RUNNING,
	GK_DEAD = PBE_GENERIC_KERNEL_TASK_STATE_EVENT_TASK_STATE_ENUM__TASK_STATE_DEAD,
	GK_DESTROYED = PBE_GENERIC_KERNEL_TASK_STATE_EVENT_TASK_STATE_ENUM__TASK_STATE_DESTROYED,
	GK_N_STATES,
};

/* thread_state / end_state text of each TaskStateEnum value. */
static const char *const state_names[GK_N_STATES] = {
	"Unknown", "Created", "R", "Running", "S", "D", "T", "Z", "X",
};

/* The slice running on one CPU (indexed by ucpu). */
struct gk_cpu {
	int64_t slice_row;            /* open sched row, or -1 */
	int64_t tid;
	int64_t utid;
};

/* Per-thread state (indexed by utid). */
struct gk_thread {
	int64_t hanging_row;          /* sched row ended with no end state, or -1 */
	bool named_by_tree;           /* its name came from a process tree */
};

struct tp_gk {
	struct gk_cpu *cpus;
	size_t n_cpus;
	struct gk_thread *threads;
	size_t n_threads;
	uint32_t state_ids[GK_N_STATES];
};

static struct tp_gk *gk_get(struct tp_import *imp)
{
	struct tp_gk *gk = imp->gk;
	size_t i;

	if (gk)
		return gk;
	gk = calloc(1, sizeof(*gk));
	if (!gk)
		return NULL;
	for (i = 0; i < GK_N_STATES; i++)
		gk->state_ids[i] = tp_db_str(imp->db, state_names[i]);
	imp->gk = gk;
	return gk;
}

void tp_gk_fini(struct tp_import *imp)
{
	struct tp_gk *gk = imp->gk;

	if (!gk)
		return;
	free(gk->cpus);
	free(gk->threads);
	free(gk);
	imp->gk = NULL;
}

/* The entry of @utid (grown on demand), or NULL on OOM or a bad utid. */
static struct gk_thread *thread_get(struct tp_import *imp, struct tp_gk *gk, int64_t utid)
{
	if (utid < 0 || (size_t)utid >= imp->db->thread.n_rows)
		return NULL;
	if ((size_t)utid >= gk->n_threads) {
		size_t n = gk->n_threads ? gk->n_threads : 64, i;
		struct gk_thread *t;

		while (n <= (size_t)utid)
			n *= 2;
		t = realloc(gk->threads, n * sizeof(*t));
		if (!t)
			return NULL;
		for (i = gk->n_threads; i < n; i++) {
			t[i].hanging_row = -1;
			t[i].named_by_tree = false;
		}
		gk->threads = t;
		gk->n_threads = n;
	}
	return &gk->threads[utid];
}

/* The state of @cpu if it ever ran a task here; NULL otherwise. */
static struct gk_cpu *cpu_find(struct tp_import *imp, struct tp_gk *gk, uint32_t machine,
			       uint32_t cpu)
{
	int64_t ucpu = tp_sched_find_ucpu(imp, machine, cpu);

	if (ucpu < 0 || (size_t)ucpu >= gk->n_cpus)
		return NULL;
	return &gk->cpus[ucpu];
}

/* The state of @cpu, made with its CPU row if new; NULL on OOM. */
static struct gk_cpu *cpu_get(struct tp_import *imp, struct tp_gk *gk, uint32_t machine,
			      uint32_t cpu, int64_t *out_ucpu)
{
	int64_t ucpu = tp_sched_ucpu(imp, machine, cpu);

	if (ucpu < 0)
		return NULL;
	if ((size_t)ucpu >= gk->n_cpus) {
		size_t n = (size_t)ucpu + 1, i;
		struct gk_cpu *c = realloc(gk->cpus, n * sizeof(*c));

		if (!c)
			return NULL;
		for (i = gk->n_cpus; i < n; i++) {
			c[i].slice_row = -1;
			c[i].tid = 0;
			c[i].utid = -1;
		}
		gk->cpus = c;
		gk->n_cpus = n;
	}
	*out_ucpu = ucpu;
	return &gk->cpus[ucpu];
}

/* ------------------------------------------------------------ threads ---- */

/* The live thread of @tid: -1 if none, or if it was destroyed. */
static int64_t live_thread(struct tp_import *imp, uint32_t machine, int64_t tid)
{
	int64_t utid = tp_proc_find_thread(imp, machine, tid);

	if (utid > 0 && tp_col_int(&imp->db->thread, THREAD_END_TS)[utid] != TP_NULL_INT)
		return -1;
	return utid;
}

/* A task's name: task events rank below process trees, like ftrace comms. */
static void set_task_name(struct tp_import *imp, struct tp_gk *gk, int64_t utid,
			  const struct pz_field *comm, bool from_tree)
{
	struct gk_thread *t = thread_get(imp, gk, utid);
	uint32_t name;

	/* utid 0 is the idle thread, always named "swapper". */
	if (!t || utid == 0 || !comm->id || comm->size == 0)
		return;
	if (!from_tree && t->named_by_tree)
		return;
	name = tp_str_intern(&imp->db->strings, (const char *)comm->data, comm->size);
	tp_proc_set_thread_name(imp, utid, name);
	if (from_tree)
		t->named_by_tree = true;
}

/* Ends @utid at @ts; a main thread ends its process too. */
static void end_thread(struct tp_import *imp, int64_t ts, int64_t utid)
{
	struct tp_table *th = &imp->db->thread, *p = &imp->db->process;
	int64_t upid;

	if (utid <= 0 || (size_t)utid >= th->n_rows)
		return;
	tp_proc_end_thread(imp, ts, utid);
	upid = tp_col_int(th, THREAD_UPID)[utid];
	if (upid <= 0 || (size_t)upid >= p->n_rows)
		return;
	if (tp_col_int(p, PROCESS_PID)[upid] == tp_col_int(th, THREAD_TID)[utid] &&
	    tp_col_int(p, PROCESS_END_TS)[upid] == TP_NULL_INT)
		tp_set_int(p, PROCESS_END_TS, (size_t)upid, ts);
}

/* The state of @utid's latest thread_state row (0: none). */
static uint32_t last_state(struct tp_import *imp, int64_t utid)
{
	int64_t row = tp_sched_open_state(imp, utid);

	if (row < 0)
		return 0;
	return tp_get_str(&imp->db->thread_state, TSTATE_STATE, row);
}

/*
 * The thread a task state event is about, or -1 when the event is out of
 * order (counted): created twice, running twice in a row, or anything but
 * destroyed after dead.
 */
static int64_t event_thread(struct tp_import *imp, struct tp_gk *gk, const struct tp_event *ev,
			    int64_t tid, uint32_t state, const struct pz_field *comm)
{
	int64_t utid = live_thread(imp, ev->machine, tid);
	bool is_new = utid < 0;

	switch (state) {
	case GK_CREATED:
		if (!is_new) {
			tp_stat_add(imp, "generic_task_state_invalid_order", -1, ev->machine, 1);
			return -1;
		}
		utid = tp_proc_new_thread(imp, ev->machine, ev->ts, tid);
		break;
	case GK_DESTROYED:
		if (is_new)
			utid = tp_proc_new_thread(imp, ev->machine, TP_NULL_INT, tid);
		else
			comm = NULL; /* a known thread keeps its name */
		end_thread(imp, ev->ts, utid);
		break;
	default:
		if (!is_new) {
			uint32_t prev = last_state(imp, utid);

			if (prev && (prev == gk->state_ids[GK_DEAD] ||
				     (state == GK_RUNNING && prev == gk->state_ids[GK_RUNNING]))) {
				tp_stat_add(imp, "generic_task_state_invalid_order", -1,
					    ev->machine, 1);
				return -1;
			}
		} else {
			utid = tp_proc_new_thread(imp, ev->machine, TP_NULL_INT, tid);
		}
		break;
	}
	if (utid >= 0 && comm)
		set_task_name(imp, gk, utid, comm, false);
	return utid;
}

/* ------------------------------------------------------- sched states ---- */

/* A new thread state for @utid at @ts; two at the same time are out of order. */
static void push_state(struct tp_import *imp, const struct tp_event *ev, int64_t utid,
		       uint32_t state, int64_t cpu, int64_t ucpu)
{
	struct tp_table *t = &imp->db->thread_state;
	int64_t row;

	if (utid <= 0)
		return;
	row = tp_sched_open_state(imp, utid);
	if (row >= 0 && tp_get_int(t, TSTATE_TS, row) == ev->ts)
		tp_stat_add(imp, "generic_task_state_invalid_order", -1, ev->machine, 1);
	tp_sched_push_state(imp, utid, ev->ts, state, cpu, ucpu);
}

static void close_slice(struct tp_import *imp, int64_t row, int64_t ts, uint32_t end_state)
{
	struct tp_table *s = &imp->db->sched;

	tp_set_int(s, SCHED_DUR, (size_t)row, ts - tp_get_int(s, SCHED_TS, row));
	tp_set_str(s, SCHED_END_STATE, (size_t)row, end_state);
}

/* @utid starts running on @cpu: the task it replaces ends with no state. */
static void task_runs(struct tp_import *imp, struct tp_gk *gk, const struct tp_event *ev,
		      uint32_t cpu, int64_t tid, int64_t utid, int64_t prio)
{
	struct tp_table *s = &imp->db->sched;
	struct gk_cpu *c;
	int64_t ucpu, row, prev_utid = -1;

	c = cpu_get(imp, gk, ev->machine, cpu, &ucpu);
	if (!c)
		return;
	if (c->slice_row >= 0) {
		struct gk_thread *pt = thread_get(imp, gk, c->utid);

		close_slice(imp, c->slice_row, ev->ts, 0);
		if (pt)
			pt->hanging_row = c->slice_row;
		prev_utid = c->utid;
		c->slice_row = -1;
	}
	row = tp_table_append(s);
	if (row < 0)
		return;
	tp_set_int(s, SCHED_TS, (size_t)row, ev->ts);
	tp_set_int(s, SCHED_DUR, (size_t)row, -1);
	tp_set_int(s, SCHED_CPU, (size_t)row, cpu);
	tp_set_int(s, SCHED_UTID, (size_t)row, utid);
	tp_set_int(s, SCHED_PRIORITY, (size_t)row, prio);
	tp_set_int(s, SCHED_UCPU, (size_t)row, ucpu);
	c->slice_row = row;
	c->tid = tid;
	c->utid = utid;
	if (prev_utid >= 0)
		push_state(imp, ev, prev_utid, 0, TP_NULL_INT, TP_NULL_INT);
	push_state(imp, ev, utid, gk->state_ids[GK_RUNNING], cpu, ucpu);
}

/* @utid is in a state other than running (@cpu is where it may have run). */
static void task_stops(struct tp_import *imp, struct tp_gk *gk, const struct tp_event *ev,
		       uint32_t cpu, int64_t tid, int64_t utid, uint32_t state)
{
	struct gk_cpu *c = cpu_find(imp, gk, ev->machine, cpu);
	struct gk_thread *t = thread_get(imp, gk, utid);
	struct tp_table *s = &imp->db->sched;

	/* It was running there: its slice ends in this state. */
	if (c && c->slice_row >= 0 && c->tid == tid) {
		close_slice(imp, c->slice_row, ev->ts, state);
		c->slice_row = -1;
		c->utid = -1;
		push_state(imp, ev, utid, state, TP_NULL_INT, TP_NULL_INT);
		return;
	}
	/* It was replaced at this very time: the end state arrives late. */
	if (t && t->hanging_row >= 0) {
		int64_t row = t->hanging_row;

		if (tp_get_int(s, SCHED_TS, row) + tp_get_int(s, SCHED_DUR, row) == ev->ts) {
			tp_set_str(s, SCHED_END_STATE, (size_t)row, state);
			t->hanging_row = -1;
			tp_sched_set_open_state(imp, utid, state);
			return;
		}
	}
	push_state(imp, ev, utid, state, TP_NULL_INT, TP_NULL_INT);
}

/* A varint field's value, or @def when absent; false if it is not a varint. */
static bool varint_or(const struct pz_field *f, int64_t def, int64_t *out)
{
	if (!f->id) {
		*out = def;
		return true;
	}
	if (f->wire_type != PZ_WIRE_VARINT)
		return false;
	*out = (int64_t)f->value;
	return true;
}

static bool string_ok(const struct pz_field *f)
{
	return !f->id || f->wire_type == PZ_WIRE_LEN;
}

static void task_state(struct tp_import *imp, struct tp_gk *gk, const struct tp_event *ev,
		       const uint8_t *data, size_t len)
{
	struct pz_field f[6];
	int64_t cpu, tid, state, prio, utid;

	if (pz_decode_table(data, len, f, 6) != PZ_OK ||
	    !varint_or(&f[PB_GENERIC_KERNEL_TASK_STATE_EVENT__CPU], 0, &cpu) ||
	    !varint_or(&f[PB_GENERIC_KERNEL_TASK_STATE_EVENT__TID], 0, &tid) ||
	    !varint_or(&f[PB_GENERIC_KERNEL_TASK_STATE_EVENT__STATE], GK_UNKNOWN, &state) ||
	    !varint_or(&f[PB_GENERIC_KERNEL_TASK_STATE_EVENT__PRIO], 0, &prio) ||
	    !string_ok(&f[PB_GENERIC_KERNEL_TASK_STATE_EVENT__COMM])) {
		tp_stat_add(imp, "generic_kernel_malformed", -1, ev->machine, 1);
		return;
	}
	prio = (int32_t)prio;
	if (state <= GK_UNKNOWN || state >= GK_N_STATES) {
		tp_stat_add(imp, "task_state_invalid", -1, ev->machine, 1);
		return;
	}
	/* Only a running task needs its CPU to exist (it makes a CPU row). */
	if (state == GK_RUNNING && ((int32_t)cpu < 0 || (int32_t)cpu >= GK_MAX_CPU)) {
		tp_stat_add(imp, "generic_kernel_invalid_cpu", -1, ev->machine, 1);
		return;
	}
	utid = event_thread(imp, gk, ev, tid, (uint32_t)state,
			    &f[PB_GENERIC_KERNEL_TASK_STATE_EVENT__COMM]);
	if (utid < 0)
		return;
	if (state == GK_RUNNING)
		task_runs(imp, gk, ev, (uint32_t)cpu, tid, utid, prio);
	else
		task_stops(imp, gk, ev, (uint32_t)cpu, tid, utid, gk->state_ids[state]);
	tp_bounds_add(imp->db, ev->ts);
}

/* ------------------------------------------------- names and processes ---- */

static void task_rename(struct tp_import *imp, struct tp_gk *gk, const struct tp_event *ev,
			const uint8_t *data, size_t len)
{
	struct pz_field f[3];
	const struct pz_field *comm = &f[PB_GENERIC_KERNEL_TASK_RENAME_EVENT__COMM];
	struct tp_table *th = &imp->db->thread, *p = &imp->db->process;
	int64_t tid, utid, upid;

	if (pz_decode_table(data, len, f, 3) != PZ_OK ||
	    !varint_or(&f[PB_GENERIC_KERNEL_TASK_RENAME_EVENT__TID], 0, &tid) || !string_ok(comm)) {
		tp_stat_add(imp, "generic_kernel_malformed", -1, ev->machine, 1);
		return;
	}
	utid = live_thread(imp, ev->machine, tid);
	if (utid < 0)
		utid = tp_proc_new_thread(imp, ev->machine, TP_NULL_INT, tid);
	if (utid <= 0 || !comm->id || comm->size == 0)
		return;
	set_task_name(imp, gk, utid, comm, false);
	/* A main thread's new name (exec, prctl) is its process's name too. */
	upid = tp_col_int(th, THREAD_UPID)[utid];
	if (upid > 0 && (size_t)upid < p->n_rows && tp_col_int(p, PROCESS_PID)[upid] == tid)
		tp_set_str(p, PROCESS_NAME, (size_t)upid,
			   tp_str_intern(&imp->db->strings, (const char *)comm->data, comm->size));
}

static void tree_process(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
			 size_t len)
{
	struct pz_field f[4];
	const struct pz_field *cmd = &f[PB_GENERIC_KERNEL_PROCESS_TREE_PROCESS__CMDLINE];
	struct tp_table *p = &imp->db->process;
	int64_t pid, ppid, upid, parent;
	const char *sp;
	size_t name_len;

	if (pz_decode_table(data, len, f, 4) != PZ_OK ||
	    !varint_or(&f[PB_GENERIC_KERNEL_PROCESS_TREE_PROCESS__PID], 0, &pid) ||
	    !varint_or(&f[PB_GENERIC_KERNEL_PROCESS_TREE_PROCESS__PPID], 0, &ppid) ||
	    !string_ok(cmd)) {
		tp_stat_add(imp, "generic_kernel_malformed", -1, ev->machine, 1);
		return;
	}
	/* Without a command line there is nothing to say about the process. */
	if (!cmd->id)
		return;
	parent = tp_proc_get_process(imp, ev->machine, ppid);
	upid = tp_proc_get_process(imp, ev->machine, pid);
	if (upid < 0 || parent < 0)
		return;
	/* The first parent is kept (a reparenting is less informative). */
	if (parent != upid && tp_col_int(p, PROCESS_PARENT_UPID)[upid] == TP_NULL_INT)
		tp_set_int(p, PROCESS_PARENT_UPID, (size_t)upid, parent);
	/* The name is argv[0]: the command line up to its first space. */
	sp = cmd->size ? memchr(cmd->data, ' ', cmd->size) : NULL;
	name_len = sp ? (size_t)(sp - (const char *)cmd->data) : cmd->size;
	if (name_len)
		tp_set_str(p, PROCESS_NAME, (size_t)upid,
			   tp_str_intern(&imp->db->strings, (const char *)cmd->data, name_len));
	tp_set_str(p, PROCESS_CMDLINE, (size_t)upid,
		   tp_str_intern(&imp->db->strings, (const char *)cmd->data, cmd->size));
}

static void tree_thread(struct tp_import *imp, struct tp_gk *gk, const struct tp_event *ev,
			const uint8_t *data, size_t len)
{
	struct pz_field f[6];
	struct tp_table *th = &imp->db->thread;
	int64_t tid, pid, is_main, is_idle, upid, utid, cur;

	if (pz_decode_table(data, len, f, 6) != PZ_OK ||
	    !varint_or(&f[PB_GENERIC_KERNEL_PROCESS_TREE_THREAD__TID], 0, &tid) ||
	    !varint_or(&f[PB_GENERIC_KERNEL_PROCESS_TREE_THREAD__PID], 0, &pid) ||
	    !varint_or(&f[PB_GENERIC_KERNEL_PROCESS_TREE_THREAD__IS_MAIN_THREAD], 0, &is_main) ||
	    !varint_or(&f[PB_GENERIC_KERNEL_PROCESS_TREE_THREAD__IS_IDLE], 0, &is_idle) ||
	    !string_ok(&f[PB_GENERIC_KERNEL_PROCESS_TREE_THREAD__COMM])) {
		tp_stat_add(imp, "generic_kernel_malformed", -1, ev->machine, 1);
		return;
	}
	upid = tp_proc_get_process(imp, ev->machine, pid);
	if (upid < 0)
		return;
	/* A live thread of that tid in another process is an older task. */
	utid = live_thread(imp, ev->machine, tid);
	if (utid >= 0) {
		cur = tp_col_int(th, THREAD_UPID)[utid];
		if (cur != TP_NULL_INT && cur != upid)
			utid = -1;
	}
	if (utid < 0) {
		utid = tp_proc_new_thread(imp, ev->machine, TP_NULL_INT, tid);
		/* tid 0 is always the idle thread of process 0. */
		if (utid <= 0)
			return;
		tp_set_int(th, THREAD_UPID, (size_t)utid, TP_NULL_INT);
	}
	if (tp_col_int(th, THREAD_UPID)[utid] == TP_NULL_INT)
		tp_set_int(th, THREAD_UPID, (size_t)utid, upid);
	tp_set_int(th, THREAD_IS_MAIN_THREAD, (size_t)utid, is_main != 0);
	tp_set_int(th, THREAD_IS_IDLE, (size_t)utid, is_idle != 0);
	set_task_name(imp, gk, utid, &f[PB_GENERIC_KERNEL_PROCESS_TREE_THREAD__COMM], true);
}

/* Processes first, so that threads find their process's row. */
static void process_tree(struct tp_import *imp, struct tp_gk *gk, const struct tp_event *ev,
			 const uint8_t *data, size_t len)
{
	struct pz_reader r;
	struct pz_field f;
	uint32_t pass;

	for (pass = 0; pass < 2; pass++) {
		uint32_t want = pass ? PB_GENERIC_KERNEL_PROCESS_TREE__THREADS
				     : PB_GENERIC_KERNEL_PROCESS_TREE__PROCESSES;

		pz_reader_init(&r, data, len);
		while (pz_reader_next(&r, &f) > 0) {
			if (f.id != want)
				continue;
			if (f.wire_type != PZ_WIRE_LEN) {
				tp_stat_add(imp, "generic_kernel_malformed", -1, ev->machine, 1);
				continue;
			}
			if (pass)
				tree_thread(imp, gk, ev, f.data, f.size);
			else
				tree_process(imp, ev, f.data, f.size);
		}
		if (r.err != PZ_OK) {
			tp_stat_add(imp, "generic_kernel_malformed", -1, ev->machine, 1);
			return;
		}
	}
}

/* ---------------------------------------------------------- frequency ---- */

static void cpu_frequency(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
			  size_t len)
{
	struct pz_field f[3];
	int64_t cpu, hz;

	if (pz_decode_table(data, len, f, 3) != PZ_OK ||
	    !varint_or(&f[PB_GENERIC_KERNEL_CPU_FREQUENCY_EVENT__CPU], 0, &cpu) ||
	    !varint_or(&f[PB_GENERIC_KERNEL_CPU_FREQUENCY_EVENT__FREQ_HZ], 0, &hz)) {
		tp_stat_add(imp, "generic_kernel_malformed", -1, ev->machine, 1);
		return;
	}
	cpu = (int32_t)cpu;
	if (cpu < 0 || cpu >= GK_MAX_CPU) {
		tp_stat_add(imp, "generic_kernel_invalid_cpu", -1, ev->machine, 1);
		return;
	}
	/* cpufreq counters are in kHz, like the ftrace cpu_frequency event. */
	tp_counter_add(imp, ev->ts, tp_track_cpu_counter(imp, "cpufreq", ev->machine, cpu),
		       (double)hz / 1000.0);
}

/* ------------------------------------------------------------- driver ---- */

void tp_gk_parse_packet(struct tp_import *imp, const struct tp_event *ev, uint32_t field,
			const uint8_t *data, size_t len)
{
	struct tp_gk *gk = gk_get(imp);

	if (!gk)
		return;
	switch (field) {
	case PB_TRACE_PACKET__GENERIC_KERNEL_TASK_STATE_EVENT:
		task_state(imp, gk, ev, data, len);
		break;
	case PB_TRACE_PACKET__GENERIC_KERNEL_TASK_RENAME_EVENT:
		task_rename(imp, gk, ev, data, len);
		break;
	case PB_TRACE_PACKET__GENERIC_KERNEL_PROCESS_TREE:
		process_tree(imp, gk, ev, data, len);
		break;
	case PB_TRACE_PACKET__GENERIC_KERNEL_CPU_FREQ_EVENT:
		cpu_frequency(imp, ev, data, len);
		break;
	default:
		break;
	}
}

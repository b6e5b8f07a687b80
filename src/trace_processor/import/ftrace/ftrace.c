// SPDX-License-Identifier: Apache-2.0
/*
 * ftrace.c - parses ftrace events in trace time order: sched_switch and
 * sched_waking (and compact_sched records) feed sched.c; task and
 * process events feed process.c; cpu_frequency and cpu_idle become CPU
 * counters; print (trace_marker) lines go to atrace.c, other events
 * of one kind each to their own file; and every event becomes an
 * ftrace_event row whose fields are args (ftrace_raw.c). The top of the
 * ftrace importer: the read layer calls it, and it owns the state.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pb_fields.h"
#include "pb_ftrace_table.h"
#include "protozero/protozero.h"
#include "trace_processor/import/ftrace/ftrace_int.h"

#define CLONE_THREAD 0x00010000

/* The payload's fields by number (small messages: slots up to 32). */
#define MAX_SLOTS 32

struct payload {
	struct pz_field f[MAX_SLOTS];
	bool ok;
};

static int64_t fint(const struct payload *p, uint32_t id)
{
	return p->f[id].id ? (int64_t)p->f[id].value : 0;
}

static uint32_t fstr(struct tp_import *imp, const struct payload *p, uint32_t id)
{
	if (!p->f[id].id || p->f[id].wire_type != PZ_WIRE_LEN)
		return 0;
	return tp_str_intern(&imp->db->strings, (const char *)p->f[id].data, p->f[id].size);
}

/* -------------------------------------------------------------- state ---- */

int tp_ftrace_init(struct tp_import *imp)
{
	imp->ftrace = calloc(1, sizeof(*imp->ftrace));
	if (!imp->ftrace)
		return -ENOMEM;
	imp->ftrace->tracing_started_ts = TP_NULL_INT;
	return 0;
}

void tp_ftrace_fini(struct tp_import *imp)
{
	struct tp_ftrace *ft = imp->ftrace;

	if (!ft)
		return;
	tp_atrace_async_fini(imp);
	hmap_fini(&ft->mm_to_utid);
	hmap_fini(&ft->keys);
	tp_argset_fini(&ft->raw_args);
	free(ft->memo);
	hmap_fini(&ft->wakelocks);
	free(ft->dma_pool.slots);
	free(ft->ion_pool.slots);
	hmap_fini(&ft->adreno);
	hmap_fini(&ft->in_sys_write);
	tp_kernel_fini(imp);
	hmap_fini(&ft->data_start);
	free(ft);
	imp->ftrace = NULL;
}

/* The last one counts: Perfetto overwrites its tracing_started_ns. */
void tp_ftrace_tracing_started(struct tp_import *imp, int64_t ts)
{
	imp->ftrace->tracing_started_ts = ts;
}

void tp_ftrace_data_start(struct tp_import *imp, uint32_t machine, int64_t ts)
{
	hmap_put(&imp->ftrace->data_start, machine, (uint64_t)ts);
}

/* ------------------------------------------------------------- events ---- */

/*
 * A sched_switch's comms name its threads, the next one first, then the
 * previous one (a comm changed while running wins): Perfetto's order,
 * which is also the order new threads get their utids in.
 */
void tp_ftrace_name_switch(struct tp_import *imp, uint32_t machine, int64_t prev,
			   uint32_t prev_comm, int64_t next, uint32_t next_comm)
{
	tp_proc_update_thread_name(imp, tp_proc_get_thread(imp, machine, next), next_comm,
				   TP_NAME_FTRACE);
	tp_proc_update_thread_name(imp, tp_proc_get_thread(imp, machine, prev), prev_comm,
				   TP_NAME_FTRACE);
}

/*
 * task_newtask: a fork starts a new process (its main thread named by the
 * comm) whose parent is the creator's process, now or once that is known;
 * a CLONE_THREAD clone starts a thread paired with its creator, so both
 * end up in the same process. The new thread's first state is runnable,
 * woken by its creator.
 */
static void task_newtask(struct tp_import *imp, const struct tp_event *ev, int64_t parent_tid,
			 const struct payload *p)
{
	int64_t tid = fint(p, PB_TASK_NEWTASK_FTRACE_EVENT__PID);
	int64_t flags = fint(p, PB_TASK_NEWTASK_FTRACE_EVENT__CLONE_FLAGS);
	uint32_t comm = fstr(imp, p, PB_TASK_NEWTASK_FTRACE_EVENT__COMM);
	int64_t parent_utid, utid;

	/* Boot-time tracing sees init create the idle tasks: not threads. */
	if (tid == 0)
		return;
	if (!(flags & CLONE_THREAD)) {
		int64_t upid = tp_proc_start_process(imp, ev->machine, ev->ts, tid, comm,
						     TP_NAME_FTRACE);

		parent_utid = tp_proc_get_thread(imp, ev->machine, parent_tid);
		utid = tp_proc_get_thread(imp, ev->machine, tid);
		if (upid >= 0)
			tp_proc_set_parent_thread(imp, upid, parent_utid);
	} else {
		parent_utid = tp_proc_get_thread(imp, ev->machine, parent_tid);
		utid = tp_proc_start_thread(imp, ev->machine, ev->ts, tid);
		tp_proc_update_thread_name(imp, utid, comm, TP_NAME_FTRACE);
		tp_proc_associate(imp, parent_utid, utid);
	}
	if (utid > 0)
		tp_sched_new_task(imp, ev->ts, utid, parent_utid);
}

/*
 * Perfetto's IsThreadAlive(), short of the pid reuse check: a thread that
 * ended, or whose process ended, is dead.
 */
static bool thread_alive(struct tp_import *imp, int64_t utid)
{
	const struct tp_db *db = imp->db;
	int64_t upid;

	if (utid < 0 || (size_t)utid >= db->thread.n_rows)
		return false;
	if (tp_col_int(&db->thread, THREAD_END_TS)[utid] != TP_NULL_INT)
		return false;
	upid = tp_col_int(&db->thread, THREAD_UPID)[utid];
	if (upid == TP_NULL_INT || upid < 0 || (size_t)upid >= db->process.n_rows)
		return true;
	return tp_col_int(&db->process, PROCESS_END_TS)[upid] == TP_NULL_INT;
}

/*
 * rss_stat: a process's memory counter (member: file, anon, swap, shmem,
 * unreclaimable pages, any other "unknown"; size in bytes, a negative one
 * counted and dropped), as Perfetto's RssStatTracker. With mm_id and curr,
 * curr says whether the mm is the current task's; other mms are the thread
 * seen with curr before, while it lives.
 */
static void rss_stat(struct tp_import *imp, const struct tp_event *ev, int64_t pid,
		     const struct payload *p)
{
	static const char *const names[] = {"mem.rss.file", "mem.rss.anon", "mem.swap",
					    "mem.rss.shmem", "mem.unreclaimable", "mem.unknown"};
	uint64_t member = (uint32_t)fint(p, PB_RSS_STAT_FTRACE_EVENT__MEMBER), v;
	int64_t utid;
	const char *name;

	name = names[member < 5 ? member : 5];
	if (fint(p, PB_RSS_STAT_FTRACE_EVENT__SIZE) < 0) {
		tp_stat_add(imp, "rss_stat_negative_size", -1, ev->machine, 1);
		return;
	}
	if (p->f[PB_RSS_STAT_FTRACE_EVENT__MM_ID].id && p->f[PB_RSS_STAT_FTRACE_EVENT__CURR].id) {
		uint64_t mm = (uint64_t)fint(p, PB_RSS_STAT_FTRACE_EVENT__MM_ID);

		if (fint(p, PB_RSS_STAT_FTRACE_EVENT__CURR)) {
			utid = tp_proc_get_thread(imp, ev->machine, pid);
			if (utid >= 0)
				hmap_put(&imp->ftrace->mm_to_utid, mm, (uint64_t)utid);
		} else if (hmap_get(&imp->ftrace->mm_to_utid, mm, &v) &&
			   thread_alive(imp, (int64_t)v)) {
			utid = (int64_t)v;
		} else {
			/* An mm whose owner was freed may be reused: forget it. */
			hmap_del(&imp->ftrace->mm_to_utid, mm, NULL);
			tp_stat_add(imp, "rss_stat_unknown_thread_for_mm_id", -1, ev->machine, 1);
			return;
		}
	} else {
		utid = tp_proc_get_thread(imp, ev->machine, pid);
	}
	/* "mem.<key>" of the thread's process, known by the end, or its own. */
	tp_counter_for_thread(imp, ev->ts, (double)fint(p, PB_RSS_STAT_FTRACE_EVENT__SIZE), utid,
			      name + 4);
}

/* sched_blocked_reason: why the thread @pid is in D (io_wait, caller). */
static void blocked_reason(struct tp_import *imp, const struct tp_event *ev,
			   const struct payload *p)
{
	int64_t utid = tp_proc_get_thread(imp, ev->machine,
					  fint(p, PB_SCHED_BLOCKED_REASON_FTRACE_EVENT__PID));
	int64_t row;
	/* caller: a kernel symbol interned on the bundle's sequence, if symbolized. */
	const struct tp_interned *sym =
		tp_seq_interned(imp, ev->aux - 1, PB_INTERNED_DATA__KERNEL_SYMBOLS,
				(uint64_t)fint(p, PB_SCHED_BLOCKED_REASON_FTRACE_EVENT__CALLER));

	row = tp_sched_open_state(imp, utid);
	if (row < 0)
		return;
	if (p->f[PB_SCHED_BLOCKED_REASON_FTRACE_EVENT__IO_WAIT].id)
		tp_set_int(&imp->db->thread_state, TSTATE_IO_WAIT, (size_t)row,
			   fint(p, PB_SCHED_BLOCKED_REASON_FTRACE_EVENT__IO_WAIT) != 0);
	if (sym && sym->str)
		tp_set_str(&imp->db->thread_state, TSTATE_BLOCKED_FUNCTION, (size_t)row, sym->str);
}

/*
 * funcgraph_entry/exit (the function_graph tracer): a slice per call on
 * the thread's "Funcgraph" track, or for the idle task (pid 0, one per
 * CPU) on the CPU's "swapper<cpu> -funcgraph" track; named by the kernel
 * symbol interned on the bundle's sequence, else by the address in hex.
 */
static void funcgraph(struct tp_import *imp, const struct tp_event *ev, int64_t pid,
		      const struct payload *p, bool is_entry)
{
	uint64_t func = (uint64_t)fint(p, is_entry ? PB_FUNCGRAPH_ENTRY_FTRACE_EVENT__FUNC
						   : PB_FUNCGRAPH_EXIT_FTRACE_EVENT__FUNC);
	const struct tp_interned *sym =
		tp_seq_interned(imp, ev->aux - 1, PB_INTERNED_DATA__KERNEL_SYMBOLS, func);
	uint32_t name;
	int64_t track;
	char buf[32];

	if (sym && sym->str) {
		name = sym->str;
	} else {
		if (func)
			snprintf(buf, sizeof(buf), "%#llx", (unsigned long long)func);
		else
			snprintf(buf, sizeof(buf), "0");
		name = tp_str_intern_c(&imp->db->strings, buf);
	}
	if (pid != 0) {
		int64_t utid = tp_proc_get_thread(imp, ev->machine, pid);
		struct tp_dim dim = {"utid", TP_DIM_UINT, utid};

		if (utid < 0)
			return;
		track = tp_track_dims(imp, "thread_funcgraph", tp_db_str(imp->db, "Funcgraph"),
				      false, ev->machine, &dim, 1, 0);
		if (track >= 0)
			tp_set_int(&imp->db->track, TRACK_UTID, (size_t)track, utid);
	} else {
		struct tp_dim dim = {"cpu", TP_DIM_UINT, ev->cpu};

		snprintf(buf, sizeof(buf), "swapper%u -funcgraph", (unsigned)ev->cpu);
		track = tp_track_dims(imp, "cpu_funcgraph", tp_str_intern_c(&imp->db->strings, buf),
				      false, ev->machine, &dim, 1, 0);
		if (track >= 0)
			tp_set_int(&imp->db->track, TRACK_CPU, (size_t)track, ev->cpu);
	}
	if (track < 0)
		return;
	if (is_entry)
		tp_slice_begin(imp, ev->ts, track, 0, name);
	else
		tp_slice_end(imp, ev->ts, track, 0, name);
}

/* Slots needed to decode an event's fields by number (all for unknown ones). */
static uint32_t n_slots(const struct pb_ft_event *d)
{
	uint32_t i, n = 1;

	if (!d)
		return MAX_SLOTS;
	for (i = 0; i < d->n_fields; i++)
		if (d->fields[i].id >= n)
			n = d->fields[i].id + 1;
	return n < MAX_SLOTS ? n : MAX_SLOTS;
}

void tp_ftrace_header_read(const uint8_t *data, size_t len, struct tp_ftrace_header *h)
{
	struct pz_reader r;
	struct pz_field f;

	h->ts = 0;
	h->pid = 0;
	h->common_flags = TP_NULL_INT;
	h->payload = NULL;
	h->payload_len = 0;
	h->payload_id = 0;
	h->has_ts = false;
	pz_reader_init(&r, data, len);
	while (pz_reader_next_inline(&r, &f) > 0) {
		if (f.id == PB_FTRACE_EVENT__TIMESTAMP) {
			h->ts = (int64_t)f.value;
			h->has_ts = f.wire_type == PZ_WIRE_VARINT;
		} else if (f.id == PB_FTRACE_EVENT__PID) {
			h->pid = (int64_t)f.value;
		} else if (f.id == PB_FTRACE_EVENT__COMMON_FLAGS) {
			h->common_flags = (int64_t)f.value;
		} else if (f.wire_type == PZ_WIRE_LEN && !h->payload_id) {
			h->payload = f.data;
			h->payload_len = f.size;
			h->payload_id = f.id;
		}
	}
	if (r.err != PZ_OK)
		h->payload_id = 0;
}

enum window { WIN_PARSE, WIN_RAW_ONLY, WIN_DROP };

/*
 * Where an ftrace event falls, as Perfetto's FtraceParser decides it at its
 * first ftrace event: before the service started tracing (0 if it did not
 * say, or if the ftrace buffer was preserved; so a negative time too) it is
 * dropped and counted; before every CPU of its machine has whole data
 * (the soft drop) it only makes its ftrace_event row.
 */
static enum window window(struct tp_import *imp, const struct tp_event *ev)
{
	struct tp_ftrace *ft = imp->ftrace;
	uint64_t v;

	if (!ft->window_set) {
		ft->window_set = true;
		ft->drop_before_ts = imp->ftrace_preserve_buffer ||
						     ft->tracing_started_ts == TP_NULL_INT
					     ? 0
					     : ft->tracing_started_ts;
	}
	if (ev->ts < ft->drop_before_ts) {
		tp_stat_add(imp, "ftrace_packet_before_tracing_start", -1, ev->machine, 1);
		return WIN_DROP;
	}
	if (hmap_get(&ft->data_start, ev->machine, &v) && ev->ts < (int64_t)v)
		return WIN_RAW_ONLY;
	return WIN_PARSE;
}

/*
 * An event of the soft-drop window: its ftrace_event row only; a full
 * sched_switch, whose row its parser makes, makes none.
 */
static void raw_only(struct tp_import *imp, const struct tp_event *ev,
		     const struct tp_ftrace_header *h)
{
	struct pz_field payload = {.id = h->payload_id, .wire_type = PZ_WIRE_LEN,
				   .data = h->payload, .size = h->payload_len};
	const struct pb_ft_event *d;

	if (h->payload_id == PB_FTRACE_EVENT__SCHED_SWITCH)
		return;
	d = tp_ftrace_event_desc(h->payload_id);
	if (!d)
		tp_stat_add(imp, "ftrace_event_unknown", -1, ev->machine, 1);
	if (imp->no_ftrace_raw)
		return;
	tp_ftrace_raw_event(imp, ev, d, &payload, tp_proc_get_thread(imp, ev->machine, h->pid),
			    h->common_flags);
	tp_bounds_add(imp->db, ev->ts);
}

void tp_ftrace_parse_event(struct tp_import *imp, const struct tp_event *ev,
			   const struct tp_ftrace_header *h, const struct tp_ftrace_hot *hot)
{
	struct pz_field payload = {0};
	int64_t pid = h->pid, common_flags = h->common_flags, utid;
	const struct pb_ft_event *d;
	struct payload p;

	enum window win = window(imp, ev);

	if (win == WIN_DROP)
		return;
	if (!h->payload_id) {
		tp_stat_add(imp, "ftrace_event_malformed", -1, ev->machine, 1);
		return;
	}
	if (win == WIN_RAW_ONLY) {
		raw_only(imp, ev, h);
		return;
	}
	if (hot->is_hot) {
		tp_ftrace_hot_parse(imp, ev, h, hot);
		return;
	}
	payload.id = h->payload_id;
	payload.wire_type = PZ_WIRE_LEN;
	payload.data = h->payload;
	payload.size = h->payload_len;
	d = tp_ftrace_event_desc(payload.id);
	if (!d)
		tp_stat_add(imp, "ftrace_event_unknown", -1, ev->machine, 1);
	p.ok = pz_decode_table(payload.data, payload.size, p.f, n_slots(d)) == PZ_OK;
	if (!p.ok) {
		tp_stat_add(imp, "ftrace_event_malformed", -1, ev->machine, 1);
		return;
	}
	/* The row names the thread as it was before the event (a free ends it);
	 * a sched_switch's is its prev_pid's, as in Perfetto. */
	if (!imp->no_ftrace_raw) {
		utid = tp_proc_get_thread(imp, ev->machine,
					  payload.id == PB_FTRACE_EVENT__SCHED_SWITCH
						  ? fint(&p, PB_SCHED_SWITCH_FTRACE_EVENT__PREV_PID)
						  : pid);
		tp_ftrace_raw_event(imp, ev, d, &payload, utid, common_flags);
	}
	switch (payload.id) {
	case PB_FTRACE_EVENT__SCHED_SWITCH: {
		int64_t prev = fint(&p, PB_SCHED_SWITCH_FTRACE_EVENT__PREV_PID);
		uint32_t prev_comm = fstr(imp, &p, PB_SCHED_SWITCH_FTRACE_EVENT__PREV_COMM);

		int64_t next = fint(&p, PB_SCHED_SWITCH_FTRACE_EVENT__NEXT_PID);
		uint32_t next_comm = fstr(imp, &p, PB_SCHED_SWITCH_FTRACE_EVENT__NEXT_COMM);

		tp_ftrace_name_switch(imp, ev->machine, prev, prev_comm, next, next_comm);
		tp_sched_switch(imp, ev->machine, ev->cpu, ev->ts, prev, -1,
				fint(&p, PB_SCHED_SWITCH_FTRACE_EVENT__PREV_STATE), next, next_comm,
				fint(&p, PB_SCHED_SWITCH_FTRACE_EVENT__NEXT_PRIO));
		break;
	}
	case PB_FTRACE_EVENT__SCHED_WAKING:
		/* The wakee is named by its comm. */
		tp_proc_update_thread_name(
			imp, tp_proc_get_thread(imp, ev->machine, fint(&p, PB_SCHED_WAKING_FTRACE_EVENT__PID)),
			fstr(imp, &p, PB_SCHED_WAKING_FTRACE_EVENT__COMM), TP_NAME_FTRACE);
		/* The waker is the event's task; its flags are not looked at (Perfetto's rule). */
		tp_sched_waking(imp, ev->machine, ev->cpu, ev->ts,
				fint(&p, PB_SCHED_WAKING_FTRACE_EVENT__PID),
				tp_proc_get_thread(imp, ev->machine, pid), TP_NULL_INT);
		break;
	case PB_FTRACE_EVENT__CPU_FREQUENCY:
		tp_counter_add(imp, ev->ts,
			       tp_track_cpu_counter(imp, "cpufreq", ev->machine,
						    fint(&p, PB_CPU_FREQUENCY_FTRACE_EVENT__CPU_ID)),
			       (double)(uint32_t)fint(&p, PB_CPU_FREQUENCY_FTRACE_EVENT__STATE));
		break;
	case PB_FTRACE_EVENT__CPU_IDLE:
		tp_counter_add(imp, ev->ts,
			       tp_track_cpu_counter(imp, "cpuidle", ev->machine,
						    fint(&p, PB_CPU_IDLE_FTRACE_EVENT__CPU_ID)),
			       (double)(uint32_t)fint(&p, PB_CPU_IDLE_FTRACE_EVENT__STATE));
		break;
	case PB_FTRACE_EVENT__PRINT:
		tp_syscall_marker_write(imp, ev, pid);
		if (p.f[PB_PRINT_FTRACE_EVENT__BUF].id)
			tp_ftrace_atrace(imp, ev, pid,
					 (const char *)p.f[PB_PRINT_FTRACE_EVENT__BUF].data,
					 p.f[PB_PRINT_FTRACE_EVENT__BUF].size);
		break;
	case PB_FTRACE_EVENT__TASK_NEWTASK:
		task_newtask(imp, ev, pid, &p);
		break;
	case PB_FTRACE_EVENT__TASK_RENAME:
		utid = tp_proc_get_thread(imp, ev->machine, fint(&p, PB_TASK_RENAME_FTRACE_EVENT__PID));
		tp_proc_rename_thread(imp, utid, fstr(imp, &p, PB_TASK_RENAME_FTRACE_EVENT__NEWCOMM),
				      TP_NAME_FTRACE);
		break;
	/*
	 * sched_process_exit ends nothing: an exited task lives on as a
	 * zombie until sched_process_free, which ends it (as in Perfetto).
	 */
	case PB_FTRACE_EVENT__CPU_FREQUENCY_LIMITS: {
		int64_t cpu = fint(&p, PB_CPU_FREQUENCY_LIMITS_FTRACE_EVENT__CPU_ID);
		char name[64];

		snprintf(name, sizeof(name), "Cpu %lld Max Freq Limit", (long long)cpu);
		tp_counter_add(imp, ev->ts, tp_track_cpu_counter(imp, name, ev->machine, cpu),
			       (double)(uint32_t)fint(&p, PB_CPU_FREQUENCY_LIMITS_FTRACE_EVENT__MAX_FREQ));
		snprintf(name, sizeof(name), "Cpu %lld Min Freq Limit", (long long)cpu);
		tp_counter_add(imp, ev->ts, tp_track_cpu_counter(imp, name, ev->machine, cpu),
			       (double)(uint32_t)fint(&p, PB_CPU_FREQUENCY_LIMITS_FTRACE_EVENT__MIN_FREQ));
		break;
	}
	case PB_FTRACE_EVENT__RSS_STAT:
		rss_stat(imp, ev, pid, &p);
		break;
	case PB_FTRACE_EVENT__SCHED_BLOCKED_REASON:
		blocked_reason(imp, ev, &p);
		break;
	case PB_FTRACE_EVENT__FUNCGRAPH_ENTRY:
	case PB_FTRACE_EVENT__FUNCGRAPH_EXIT:
		funcgraph(imp, ev, pid, &p, payload.id == PB_FTRACE_EVENT__FUNCGRAPH_ENTRY);
		break;
	case PB_FTRACE_EVENT__SCHED_CPU_UTIL_CFS:
		tp_ftrace_cpu_util_cfs(imp, ev, payload.data, payload.size);
		break;
	case PB_FTRACE_EVENT__WAKEUP_SOURCE_ACTIVATE:
	case PB_FTRACE_EVENT__WAKEUP_SOURCE_DEACTIVATE:
		tp_wakesource(imp, ev, payload.id == PB_FTRACE_EVENT__WAKEUP_SOURCE_ACTIVATE,
			      payload.data, payload.size);
		break;
	case PB_FTRACE_EVENT__TRACING_MARK_WRITE:
		tp_ftrace_mark(imp, ev, pid, TP_MARK_MDSS, payload.data, payload.size);
		break;
	case PB_FTRACE_EVENT__SDE_TRACING_MARK_WRITE:
		tp_ftrace_mark(imp, ev, pid, TP_MARK_SDE, payload.data, payload.size);
		break;
	case PB_FTRACE_EVENT__DPU_TRACING_MARK_WRITE:
		tp_ftrace_mark(imp, ev, pid, TP_MARK_DPU, payload.data, payload.size);
		break;
	case PB_FTRACE_EVENT__G2D_TRACING_MARK_WRITE:
		tp_ftrace_mark(imp, ev, pid, TP_MARK_G2D, payload.data, payload.size);
		break;
	case PB_FTRACE_EVENT__THERMAL_EXYNOS_ACPM_BULK:
	case PB_FTRACE_EVENT__THERMAL_EXYNOS_ACPM_HIGH_OVERHEAD:
		tp_thermal_exynos(imp, ev, payload.id == PB_FTRACE_EVENT__THERMAL_EXYNOS_ACPM_BULK,
				  payload.data, payload.size);
		break;
	case PB_FTRACE_EVENT__UFSHCD_COMMAND:
		tp_ufshcd_command(imp, ev, payload.data, payload.size);
		break;
	case PB_FTRACE_EVENT__DMA_HEAP_STAT:
		tp_dma_heap_stat(imp, ev, pid, payload.data, payload.size);
		break;
	case PB_FTRACE_EVENT__ION_HEAP_GROW:
	case PB_FTRACE_EVENT__ION_HEAP_SHRINK:
		tp_ion_heap_change(imp, ev, pid, payload.id == PB_FTRACE_EVENT__ION_HEAP_GROW,
				   payload.data, payload.size);
		break;
	case PB_FTRACE_EVENT__ION_STAT:
		tp_ion_stat(imp, ev, pid, payload.data, payload.size);
		break;
	case PB_FTRACE_EVENT__KGSL_ADRENO_CMDBATCH_QUEUED:
	case PB_FTRACE_EVENT__KGSL_ADRENO_CMDBATCH_SYNC:
	case PB_FTRACE_EVENT__KGSL_ADRENO_CMDBATCH_RETIRED:
		tp_adreno_cmdbatch(imp, ev, pid, payload.id, payload.data, payload.size);
		break;
	case PB_FTRACE_EVENT__SCHED_PROCESS_FREE:
		tp_proc_free_thread(imp, ev->machine, ev->ts,
				    fint(&p, PB_SCHED_PROCESS_FREE_FTRACE_EVENT__PID));
		break;
	case PB_FTRACE_EVENT__SYS_ENTER:
		tp_syscall_enter(imp, ev, pid, payload.data, payload.size);
		break;
	case PB_FTRACE_EVENT__SYS_EXIT:
		tp_syscall_exit(imp, ev, pid, payload.data, payload.size);
		break;
	case PB_FTRACE_EVENT__SUSPEND_RESUME:
		tp_suspend_resume(imp, ev, pid, payload.data, payload.size);
		break;
	case PB_FTRACE_EVENT__BLOCK_IO_START:
	case PB_FTRACE_EVENT__BLOCK_IO_DONE:
		tp_block_io(imp, ev, payload.id == PB_FTRACE_EVENT__BLOCK_IO_START, payload.data,
			    payload.size);
		break;
	case PB_FTRACE_EVENT__CMA_ALLOC_START:
	case PB_FTRACE_EVENT__CMA_ALLOC_INFO:
	case PB_FTRACE_EVENT__CMA_ALLOC_FINISH:
	case PB_FTRACE_EVENT__MM_ALLOC_CONTIG_MIGRATE_RANGE_INFO:
		tp_cma_event(imp, ev, pid, payload.id, payload.data, payload.size);
		break;
	case PB_FTRACE_EVENT__F2FS_IOSTAT:
	case PB_FTRACE_EVENT__F2FS_IOSTAT_LATENCY:
		tp_f2fs_iostat(imp, ev, payload.id == PB_FTRACE_EVENT__F2FS_IOSTAT_LATENCY,
			       payload.data, payload.size);
		break;
	case PB_FTRACE_EVENT__MARK_VICTIM:
		tp_oom_mark_victim(imp, ev, payload.data, payload.size);
		break;
	case PB_FTRACE_EVENT__IRQ_HANDLER_ENTRY:
	case PB_FTRACE_EVENT__IRQ_HANDLER_EXIT:
	case PB_FTRACE_EVENT__SOFTIRQ_ENTRY:
	case PB_FTRACE_EVENT__SOFTIRQ_EXIT:
		tp_irq_event(imp, ev, payload.id, payload.data, payload.size);
		break;
	case PB_FTRACE_EVENT__KPROBE_EVENT:
		tp_kprobe(imp, ev, pid, payload.data, payload.size);
		break;
	case PB_FTRACE_EVENT__WORKQUEUE_EXECUTE_START:
		tp_workqueue_start(imp, ev, pid,
				   (uint64_t)fint(&p, PB_WORKQUEUE_EXECUTE_START_FTRACE_EVENT__FUNCTION));
		break;
	case PB_FTRACE_EVENT__WORKQUEUE_EXECUTE_END:
		tp_workqueue_end(imp, ev, pid);
		break;
	case PB_FTRACE_EVENT__SIGNAL_GENERATE:
		tp_signal(imp, ev, fint(&p, PB_SIGNAL_GENERATE_FTRACE_EVENT__PID), true,
			  fint(&p, PB_SIGNAL_GENERATE_FTRACE_EVENT__SIG));
		break;
	case PB_FTRACE_EVENT__SIGNAL_DELIVER:
		tp_signal(imp, ev, pid, false, fint(&p, PB_SIGNAL_DELIVER_FTRACE_EVENT__SIG));
		break;
	case PB_FTRACE_EVENT__OOM_SCORE_ADJ_UPDATE:
		/* int16: old tracers encoded negative values wrongly (Perfetto's cast). */
		tp_counter_for_thread(
			imp, ev->ts,
			(double)(int16_t)fint(&p, PB_OOM_SCORE_ADJ_UPDATE_FTRACE_EVENT__OOM_SCORE_ADJ),
			tp_proc_get_thread(imp, ev->machine,
					   (uint32_t)fint(&p, PB_OOM_SCORE_ADJ_UPDATE_FTRACE_EVENT__PID)),
			NULL);
		break;
	default:
		break;
	}
	tp_bounds_add(imp->db, ev->ts);
}

/*
 * compact_sched leaves out the prev_* fields: the previous thread is
 * whoever the CPU's last switch put there. As in Perfetto, a CPU's first
 * compact switch only says who runs (it makes no slice and no row), and a
 * waking before it has no known waker and is dropped; both are counted.
 */
void tp_ftrace_parse_compact_switch(struct tp_import *imp, const struct tp_event *ev,
				    const struct tp_compact_switch *s)
{
	int64_t ucpu, prev, next_utid, running;
	enum window win = window(imp, ev);

	if (win == WIN_DROP)
		return;
	ucpu = tp_sched_ucpu(imp, ev->machine, ev->cpu);
	if (ucpu < 0)
		return;
	running = tp_sched_running(imp, ucpu);
	if (running < 0) {
		tp_stat_add(imp, "compact_sched_switch_skipped", -1, ev->machine, 1);
		next_utid = tp_proc_get_thread(imp, ev->machine, s->next_pid);
		if (next_utid < 0)
			return;
		tp_proc_update_thread_name(imp, next_utid, s->next_comm, TP_NAME_FTRACE);
		tp_sched_set_running(imp, ucpu, next_utid);
		tp_sched_set_last_prio(imp, ucpu, s->next_prio);
		return;
	}
	/* The next thread is named first; prev is the running one, named already. */
	tp_proc_update_thread_name(imp, tp_proc_get_thread(imp, ev->machine, s->next_pid),
				   s->next_comm, TP_NAME_FTRACE);
	prev = tp_col_int(&imp->db->thread, THREAD_TID)[running];
	/* Perfetto's row for a switch has no common_flags: 0. */
	if (!imp->no_ftrace_raw) {
		int64_t row = tp_ftrace_raw_append(imp, ev, PB_FTRACE_EVENT__SCHED_SWITCH,
						   "sched_switch", running, 0);

		tp_ftrace_raw_compact_switch(imp, row,
					     tp_get_str(&imp->db->thread, THREAD_NAME, (size_t)running),
					     prev, tp_sched_last_prio(imp, ucpu), s);
	}
	if (win == WIN_RAW_ONLY) {
		/* As a CPU's first switch: who runs now, but no slice or state. */
		next_utid = tp_proc_get_thread(imp, ev->machine, s->next_pid);
		if (next_utid >= 0)
			tp_sched_set_running(imp, ucpu, next_utid);
		tp_sched_set_last_prio(imp, ucpu, s->next_prio);
		tp_bounds_add(imp->db, ev->ts);
		return;
	}
	/* As Perfetto, the thread leaving is the one that came in, not a new lookup. */
	tp_sched_switch(imp, ev->machine, ev->cpu, ev->ts, prev, running, s->prev_state,
			s->next_pid, s->next_comm, s->next_prio);
}

void tp_ftrace_parse_compact_waking(struct tp_import *imp, const struct tp_event *ev,
				    const struct tp_compact_waking *w)
{
	int64_t utid, ucpu;
	enum window win = window(imp, ev);

	if (win == WIN_DROP)
		return;
	ucpu = tp_sched_ucpu(imp, ev->machine, ev->cpu);
	if (ucpu < 0)
		return;
	if (tp_sched_running(imp, ucpu) < 0) {
		tp_stat_add(imp, "compact_sched_waking_skipped", -1, ev->machine, 1);
		return;
	}
	if (!imp->no_ftrace_raw)
		tp_ftrace_raw_compact_waking(
			imp,
			tp_ftrace_raw_append(imp, ev, PB_FTRACE_EVENT__SCHED_WAKING, "sched_waking",
					     tp_sched_running(imp, ucpu), w->common_flags),
			w);
	if (win == WIN_RAW_ONLY) {
		tp_bounds_add(imp->db, ev->ts);
		return;
	}
	/* Unlike a full sched_waking, a compact one does not name the wakee (Perfetto's rule). */
	utid = tp_proc_get_thread(imp, ev->machine, w->pid);
	(void)utid;
	/* The waker is the CPU's running thread; hard or soft irq flags make irq_context 1. */
	tp_sched_waking(imp, ev->machine, ev->cpu, ev->ts, w->pid, tp_sched_running(imp, ucpu),
			(w->common_flags & (0x08 | 0x10)) ? 1 : 0);
}

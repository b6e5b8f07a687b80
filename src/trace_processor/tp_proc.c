// SPDX-License-Identifier: Apache-2.0
/*
 * tp_proc.c - threads and processes. A tid maps to its newest thread row
 * (utid) and a pid to its newest process row (upid), per machine; a thread
 * that starts again (fork, newtask, a reused tid) gets a new row. utid 0 is
 * the idle thread (tid 0, "swapper") of process upid 0 (pid 0).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "trace_processor/tp_int.h"

/*
 * Map key of (machine, id). Ids that fit 32 bits keep the plain layout
 * (tp_parse.c builds it by hand); wider ids (the int64 tids of generic
 * kernel traces) are hashed into keys with the top bit set, so that they
 * never alias a 32-bit id.
 */
static uint64_t key(uint32_t machine, int64_t id)
{
	uint64_t h;

	if (tp_proc_narrow_key(machine, id, &h))
		return h;
	h = fnv1a64(&machine, sizeof(machine));
	h = fnv1a64_update(h, &id, sizeof(id));
	return (1ull << 63) | (h >> 1);
}

/*
 * The tid lookups of ftrace events go through a direct-mapped cache. It is
 * written wherever tid_to_utid is, so a hit is the map's current answer.
 */
static struct tp_tid_slot *tid_slot(struct tp_import *imp, uint64_t k)
{
	return tp_proc_tid_slot(imp, k);
}

static bool tid_lookup(struct tp_import *imp, uint64_t k, int64_t *out_utid)
{
	struct tp_tid_slot *s = tid_slot(imp, k);
	uint64_t v;

	if (s->utid_plus1 && s->key == k) {
		*out_utid = s->utid_plus1 - 1;
		return true;
	}
	if (!hmap_get(&imp->tid_to_utid, k, &v))
		return false;
	s->key = k;
	s->utid_plus1 = (int64_t)v + 1;
	*out_utid = (int64_t)v;
	return true;
}

static int grow_threads(struct tp_import *imp, size_t n)
{
	size_t cap = imp->cap_threads ? imp->cap_threads : 256, i;
	struct tp_thread_state *t;

	if (n <= imp->cap_threads)
		return 0;
	while (cap < n)
		cap *= 2;
	t = realloc(imp->threads, cap * sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (i = imp->cap_threads; i < cap; i++)
		t[i].open_row = -1;
	imp->threads = t;
	imp->cap_threads = cap;
	return 0;
}

static int64_t add_thread(struct tp_import *imp, uint32_t machine, int64_t tid)
{
	struct tp_table *t = &imp->db->thread;
	int64_t row = tp_table_append(t);
	uint64_t v;

	if (row < 0 || grow_threads(imp, (size_t)row + 1) < 0)
		return -ENOMEM;
	tp_set_int(t, THREAD_TID, (size_t)row, tid);
	tp_set_int(t, THREAD_MACHINE_ID, (size_t)row, machine);
	tp_set_int(t, THREAD_IS_IDLE, (size_t)row, tid == 0);
	if (hmap_put(&imp->tid_to_utid, key(machine, tid), (uint64_t)row) >= 0) {
		struct tp_tid_slot *s = tid_slot(imp, key(machine, tid));

		s->key = key(machine, tid);
		s->utid_plus1 = row + 1;
	}
	/* A tid equal to a known pid is that process's main thread. */
	if (tid != 0 && hmap_get(&imp->pid_to_upid, key(machine, tid), &v)) {
		tp_set_int(t, THREAD_UPID, (size_t)row, (int64_t)v);
		tp_set_int(t, THREAD_IS_MAIN_THREAD, (size_t)row, 1);
	}
	return row;
}

static int64_t add_process(struct tp_import *imp, uint32_t machine, int64_t pid)
{
	struct tp_table *p = &imp->db->process;
	int64_t row = tp_table_append(p);

	if (row < 0)
		return -ENOMEM;
	tp_set_int(p, PROCESS_PID, (size_t)row, pid);
	tp_set_int(p, PROCESS_MACHINE_ID, (size_t)row, machine);
	hmap_put(&imp->pid_to_upid, key(machine, pid), (uint64_t)row);
	return row;
}

int tp_proc_add_idle(struct tp_import *imp, uint32_t machine)
{
	int64_t utid, upid;

	upid = add_process(imp, machine, 0);
	utid = add_thread(imp, machine, 0);
	if (upid < 0 || utid < 0)
		return -ENOMEM;
	tp_set_str(&imp->db->thread, THREAD_NAME, (size_t)utid, tp_db_str(imp->db, "swapper"));
	tp_set_int(&imp->db->thread, THREAD_UPID, (size_t)utid, upid);
	tp_set_int(&imp->db->thread, THREAD_IS_MAIN_THREAD, (size_t)utid, 1);
	return 0;
}

int tp_proc_init(struct tp_import *imp)
{
	int64_t m;

	hmap_init(&imp->tid_to_utid);
	hmap_init(&imp->pid_to_upid);
	m = tp_table_append(&imp->db->machine);
	if (m < 0)
		return -ENOMEM;
	tp_set_int(&imp->db->machine, MACHINE_RAW_ID, (size_t)m, 0);
	tp_set_int(&imp->db->machine, MACHINE_LABEL_INDEX, (size_t)m, 0);
	return tp_proc_add_idle(imp, 0);
}

void tp_proc_fini(struct tp_import *imp)
{
	hmap_fini(&imp->tid_to_utid);
	memset(imp->fc.tids, 0, sizeof(imp->fc.tids));
	hmap_fini(&imp->pid_to_upid);
	hmap_fini(&imp->ftrace_cpu_start);
	free(imp->threads);
	imp->threads = NULL;
	imp->cap_threads = 0;
}

int64_t tp_proc_get_thread_slow(struct tp_import *imp, uint32_t machine, int64_t tid)
{
	int64_t utid;

	if (tid_lookup(imp, key(machine, tid), &utid))
		return utid;
	return add_thread(imp, machine, tid);
}

int64_t tp_proc_find_thread(struct tp_import *imp, uint32_t machine, int64_t tid)
{
	int64_t utid;

	if (tid_lookup(imp, key(machine, tid), &utid))
		return utid;
	return -1;
}

int64_t tp_proc_new_thread(struct tp_import *imp, uint32_t machine, int64_t ts, int64_t tid)
{
	uint64_t v;
	int64_t row;

	/* tid 0 is always the idle thread ("swapper/N" per CPU in the kernel). */
	if (tid == 0)
		return tp_proc_get_thread(imp, machine, 0);
	if (hmap_get(&imp->tid_to_utid, key(machine, tid), &v))
		tp_proc_end_thread(imp, ts, (int64_t)v);
	row = add_thread(imp, machine, tid);
	if (row >= 0)
		tp_set_int(&imp->db->thread, THREAD_START_TS, (size_t)row, ts);
	return row;
}

int64_t tp_proc_get_process(struct tp_import *imp, uint32_t machine, int64_t pid)
{
	uint64_t v;

	if (hmap_get(&imp->pid_to_upid, key(machine, pid), &v))
		return (int64_t)v;
	return add_process(imp, machine, pid);
}

int64_t tp_proc_new_process(struct tp_import *imp, uint32_t machine, int64_t ts, int64_t pid)
{
	uint64_t v;
	int64_t row;

	if (hmap_get(&imp->pid_to_upid, key(machine, pid), &v)) {
		struct tp_table *p = &imp->db->process;

		if (tp_col_int(p, PROCESS_END_TS)[v] == TP_NULL_INT)
			tp_set_int(p, PROCESS_END_TS, (size_t)v, ts);
	}
	row = add_process(imp, machine, pid);
	if (row >= 0 && ts != TP_NULL_INT)
		tp_set_int(&imp->db->process, PROCESS_START_TS, (size_t)row, ts);
	return row;
}

void tp_proc_set_thread_process(struct tp_import *imp, int64_t utid, uint32_t machine, int64_t pid)
{
	struct tp_table *t = &imp->db->thread;
	int64_t upid = tp_proc_get_process(imp, machine, pid);

	if (upid < 0 || utid < 0)
		return;
	tp_set_int(t, THREAD_UPID, (size_t)utid, upid);
	tp_set_int(t, THREAD_IS_MAIN_THREAD, (size_t)utid,
		   tp_col_int(t, THREAD_TID)[utid] == pid);
	tp_proc_assoc_resolve(imp, utid);
}

void tp_proc_set_thread_name(struct tp_import *imp, int64_t utid, uint32_t name)
{
	if (utid >= 0 && name)
		tp_set_str(&imp->db->thread, THREAD_NAME, (size_t)utid, name);
}

void tp_proc_end_thread(struct tp_import *imp, int64_t ts, int64_t utid)
{
	struct tp_table *t = &imp->db->thread;

	if (utid <= 0 || (size_t)utid >= t->n_rows)
		return;
	if (tp_col_int(t, THREAD_END_TS)[utid] == TP_NULL_INT)
		tp_set_int(t, THREAD_END_TS, (size_t)utid, ts);
}

void tp_proc_free_thread(struct tp_import *imp, uint32_t machine, int64_t ts, int64_t tid)
{
	struct tp_table *t = &imp->db->thread, *p = &imp->db->process;
	struct tp_tid_slot *s;
	uint64_t v, pv;
	int64_t upid = TP_NULL_INT;

	if (tid == 0)
		return;
	if (hmap_get(&imp->tid_to_utid, key(machine, tid), &v)) {
		tp_proc_end_thread(imp, ts, (int64_t)v);
		upid = tp_col_int(t, THREAD_UPID)[v];
		/* Later events with this tid are a new thread: the cache forgets it too. */
		hmap_del(&imp->tid_to_utid, key(machine, tid), NULL);
		s = tid_slot(imp, key(machine, tid));
		if (s->key == key(machine, tid))
			s->utid_plus1 = 0;
	}
	/*
	 * The main thread's free ends its process (the kernel frees the group
	 * leader last); a process whose main thread we never saw ends too.
	 */
	if (!hmap_get(&imp->pid_to_upid, key(machine, tid), &pv))
		return;
	if (upid != TP_NULL_INT && (uint64_t)upid != pv)
		return;
	if (tp_col_int(p, PROCESS_END_TS)[pv] == TP_NULL_INT)
		tp_set_int(p, PROCESS_END_TS, (size_t)pv, ts);
	hmap_del(&imp->pid_to_upid, key(machine, tid), NULL);
}

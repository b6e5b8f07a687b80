// SPDX-License-Identifier: Apache-2.0
/*
 * process.c - threads and processes. A tid maps to its newest thread row
 * (utid) and a pid to its newest process row (upid), per machine; a thread
 * that starts again (fork, newtask, a reused tid) gets a new row. utid 0 is
 * the idle thread (tid 0, "swapper") of process upid 0 (pid 0).
 *
 * Threads known to share a process before the process is known (a
 * task_newtask with CLONE_THREAD from a thread whose process is not known
 * yet) are recorded as a pair; when either later gets its process (a
 * process tree, an atrace pid, ...), the process spreads along every
 * recorded pair. Pairs are few (one per such clone); each thread's pairs
 * form a list.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "trace_processor/import/common/common.h"

/* A client can make us remember this many pairs; later ones are dropped. */
#define ASSOC_MAX_PAIRS (1u << 22)

struct assoc_ent {
	int64_t other;
	uint32_t next; /* index of the next entry of the same thread, or NONE */
};

#define NONE UINT32_MAX

struct assoc {
	struct hmap heads; /* utid -> first entry */
	struct assoc_ent *ent;
	size_t n, cap;
};

struct tp_procs {
	struct hmap tid_to_utid;      /* key(machine, tid) -> utid (newest) */
	struct hmap pid_to_upid;      /* key(machine, pid) -> upid (newest) */
	struct assoc assoc;           /* threads paired before their process is known */
};

/*
 * Map key of (machine, id). Ids that fit 32 bits keep the plain layout;
 * wider ids (the int64 tids of generic
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
	if (!hmap_get(&imp->procs->tid_to_utid, k, &v))
		return false;
	s->key = k;
	s->utid_plus1 = (int64_t)v + 1;
	*out_utid = (int64_t)v;
	return true;
}

static int64_t add_thread(struct tp_import *imp, uint32_t machine, int64_t tid)
{
	struct tp_table *t = &imp->db->thread;
	int64_t row = tp_table_append(t);
	uint64_t v;

	if (row < 0)
		return -ENOMEM;
	tp_set_int(t, THREAD_TID, (size_t)row, tid);
	tp_set_int(t, THREAD_MACHINE_ID, (size_t)row, machine);
	tp_set_int(t, THREAD_IS_IDLE, (size_t)row, tid == 0);
	if (hmap_put(&imp->procs->tid_to_utid, key(machine, tid), (uint64_t)row) >= 0) {
		struct tp_tid_slot *s = tid_slot(imp, key(machine, tid));

		s->key = key(machine, tid);
		s->utid_plus1 = row + 1;
	}
	/* A tid equal to a known pid is that process's main thread. */
	if (tid != 0 && hmap_get(&imp->procs->pid_to_upid, key(machine, tid), &v)) {
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
	hmap_put(&imp->procs->pid_to_upid, key(machine, pid), (uint64_t)row);
	return row;
}

/* ----------------------------------------------------- associations ---- */

static int add_entry(struct assoc *a, int64_t utid, int64_t other)
{
	uint64_t head;

	if (a->n >= ASSOC_MAX_PAIRS * 2)
		return -1;
	if (tp_array_grow((void **)&a->ent, &a->cap, a->n + 1, sizeof(*a->ent), 64) < 0)
		return -1;
	a->ent[a->n].other = other;
	a->ent[a->n].next = hmap_get(&a->heads, (uint64_t)utid, &head) ? (uint32_t)head : NONE;
	if (hmap_put(&a->heads, (uint64_t)utid, a->n) < 0)
		return -1;
	a->n++;
	return 0;
}

static int64_t upid_of(struct tp_import *imp, int64_t utid)
{
	return tp_col_int(&imp->db->thread, THREAD_UPID)[utid];
}

/* Puts @utid in @upid (main thread if its tid is the pid). */
static void join(struct tp_import *imp, int64_t utid, int64_t upid)
{
	struct tp_table *t = &imp->db->thread;

	tp_set_int(t, THREAD_UPID, (size_t)utid, upid);
	tp_set_int(t, THREAD_IS_MAIN_THREAD, (size_t)utid,
		   tp_col_int(t, THREAD_TID)[utid] ==
			   tp_col_int(&imp->db->process, PROCESS_PID)[upid]);
}

/* @utid just got its process: spread it along the pairs waiting on it. */
static void assoc_resolve(struct tp_import *imp, int64_t utid)
{
	struct assoc *a = &imp->procs->assoc;
	int64_t *stack = NULL, upid;
	size_t n = 0, cap = 0;
	uint64_t head;

	if (!hmap_len(&a->heads))
		return;
	if (tp_array_grow((void **)&stack, &cap, 1, sizeof(*stack), 16) < 0)
		return;
	stack[n++] = utid;
	/* Each thread's list is taken once, so this ends. */
	while (n) {
		int64_t u = stack[--n];
		uint32_t i;

		if (hmap_del(&a->heads, (uint64_t)u, &head) < 0)
			continue;
		upid = upid_of(imp, u);
		for (i = (uint32_t)head; i != NONE; i = a->ent[i].next) {
			int64_t o = a->ent[i].other;

			if (upid_of(imp, o) != TP_NULL_INT)
				continue;
			join(imp, o, upid);
			if (tp_array_grow((void **)&stack, &cap, n + 1, sizeof(*stack), 16) < 0)
				break;
			stack[n++] = o;
		}
	}
	free(stack);
}

void tp_proc_associate(struct tp_import *imp, int64_t utid_a, int64_t utid_b)
{
	struct assoc *a = &imp->procs->assoc;
	int64_t ua, ub;

	if (utid_a <= 0 || utid_b <= 0 || utid_a == utid_b)
		return;
	ua = upid_of(imp, utid_a);
	ub = upid_of(imp, utid_b);
	if (ua != TP_NULL_INT && ub == TP_NULL_INT) {
		join(imp, utid_b, ua);
		assoc_resolve(imp, utid_b);
		return;
	}
	if (ub != TP_NULL_INT && ua == TP_NULL_INT) {
		join(imp, utid_a, ub);
		assoc_resolve(imp, utid_a);
		return;
	}
	if (ua != TP_NULL_INT)
		return;
	if (add_entry(a, utid_a, utid_b) < 0 || add_entry(a, utid_b, utid_a) < 0)
		tp_stat_add(imp, "process_tracker_pending_associations_dropped", -1, 0, 1);
}

/* ---------------------------------------------------------- lookups ---- */

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

	imp->procs = calloc(1, sizeof(*imp->procs));
	imp->tids = calloc(TP_TID_CACHE, sizeof(*imp->tids));
	if (!imp->procs || !imp->tids)
		return -ENOMEM;
	hmap_init(&imp->procs->tid_to_utid);
	hmap_init(&imp->procs->pid_to_upid);
	hmap_init(&imp->procs->assoc.heads);
	m = tp_table_append(&imp->db->machine);
	if (m < 0)
		return -ENOMEM;
	tp_set_int(&imp->db->machine, MACHINE_RAW_ID, (size_t)m, 0);
	tp_set_int(&imp->db->machine, MACHINE_LABEL_INDEX, (size_t)m, 0);
	return tp_proc_add_idle(imp, 0);
}

void tp_proc_fini(struct tp_import *imp)
{
	struct tp_procs *p = imp->procs;

	free(imp->tids);
	imp->tids = NULL;
	if (!p)
		return;
	hmap_fini(&p->tid_to_utid);
	hmap_fini(&p->pid_to_upid);
	hmap_fini(&p->assoc.heads);
	free(p->assoc.ent);
	free(p);
	imp->procs = NULL;
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
	if (hmap_get(&imp->procs->tid_to_utid, key(machine, tid), &v))
		tp_proc_end_thread(imp, ts, (int64_t)v);
	row = add_thread(imp, machine, tid);
	if (row >= 0)
		tp_set_int(&imp->db->thread, THREAD_START_TS, (size_t)row, ts);
	return row;
}

int64_t tp_proc_find_process(struct tp_import *imp, uint32_t machine, int64_t pid)
{
	uint64_t v;

	return hmap_get(&imp->procs->pid_to_upid, key(machine, pid), &v) ? (int64_t)v : -1;
}

int64_t tp_proc_get_process(struct tp_import *imp, uint32_t machine, int64_t pid)
{
	uint64_t v;

	if (hmap_get(&imp->procs->pid_to_upid, key(machine, pid), &v))
		return (int64_t)v;
	return add_process(imp, machine, pid);
}

int64_t tp_proc_new_process(struct tp_import *imp, uint32_t machine, int64_t ts, int64_t pid)
{
	uint64_t v;
	int64_t row;

	if (hmap_get(&imp->procs->pid_to_upid, key(machine, pid), &v)) {
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
	assoc_resolve(imp, utid);
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
	if (hmap_get(&imp->procs->tid_to_utid, key(machine, tid), &v)) {
		tp_proc_end_thread(imp, ts, (int64_t)v);
		upid = tp_col_int(t, THREAD_UPID)[v];
		/* Later events with this tid are a new thread: the cache forgets it too. */
		hmap_del(&imp->procs->tid_to_utid, key(machine, tid), NULL);
		s = tid_slot(imp, key(machine, tid));
		if (s->key == key(machine, tid))
			s->utid_plus1 = 0;
	}
	/*
	 * The main thread's free ends its process (the kernel frees the group
	 * leader last); a process whose main thread we never saw ends too.
	 */
	if (!hmap_get(&imp->procs->pid_to_upid, key(machine, tid), &pv))
		return;
	if (upid != TP_NULL_INT && (uint64_t)upid != pv)
		return;
	if (tp_col_int(p, PROCESS_END_TS)[pv] == TP_NULL_INT)
		tp_set_int(p, PROCESS_END_TS, (size_t)pv, ts);
	hmap_del(&imp->procs->pid_to_upid, key(machine, tid), NULL);
}

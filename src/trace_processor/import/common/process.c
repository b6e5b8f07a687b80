// SPDX-License-Identifier: Apache-2.0
/*
 * process.c - threads and processes, with the rules of Perfetto's
 * ProcessTracker. A tid maps to its live thread row (utid) and a pid to
 * its newest process row (upid), per machine. Each tid keeps the list of
 * its threads not ended yet: a lookup with a pid takes the newest one that
 * is alive (not ended, its process neither ended nor replaced by a newer
 * process of that pid) and in that process or in none. A new process of a
 * pid (fork) forgets every thread of that tid. utid 0 is the idle thread
 * (tid 0, "swapper") of process upid 0 (pid 0). Names have priorities: a
 * source overwrites a name only if it ranks at least as high as the one
 * that set it (enum tp_name_prio).
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
#include "base/sort.h"
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

/* The threads of one tid (or of one process) still tracked, oldest first. */
struct idvec {
	int64_t *v;
	uint32_t n, cap;
};

struct pair {
	int64_t a, b;
};

/* Args given to processes or threads, stored at the end of the trace. */
struct pending_arg {
	uint32_t id; /* upid or utid */
	uint32_t seq;
	struct tp_arg arg;
};

struct proc_args {
	struct pending_arg *a;
	size_t n, cap;
	uint32_t *ids; /* the ids with args, in the order they got them (threads only) */
	size_t n_ids, cap_ids;
	struct hmap id_set;
	struct hmap sort_index; /* id -> sort index hint (int32) */
	uint32_t *sort_ids;     /* its keys in insertion order */
	size_t n_sort_ids, cap_sort_ids;
};

static void proc_args_fini(struct proc_args *pa);
static int note_id(uint32_t **ids, size_t *n, size_t *cap, struct hmap *set, uint32_t id);

struct tp_procs {
	struct hmap tid_to_utid;      /* key(machine, tid) -> utid: the live thread */
	struct hmap pid_to_upid;      /* key(machine, pid) -> upid (newest) */
	struct hmap tid_lists;        /* key(machine, tid) -> index in lists */
	struct idvec *lists;          /* threads of a tid not ended yet */
	size_t n_lists, cap_lists;
	struct idvec *proc_threads;   /* upid -> threads put in it */
	size_t cap_proc_threads;
	struct assoc assoc;           /* threads paired before their process is known */
	struct pair *parents;         /* (parent utid, child upid) waiting on the parent's process */
	size_t n_parents, cap_parents;
	uint8_t *tname_prio;          /* utid -> priority of its name (enum tp_name_prio) */
	size_t cap_tname_prio;
	uint8_t *pname_prio;          /* upid -> priority of its name */
	size_t cap_pname_prio;
	int8_t *kthread;              /* upid -> is_kthread arg: -1 none, 0, 1 */
	size_t cap_kthread;
	uint32_t *arg_upids;          /* the upids with args, in the order they got them */
	size_t n_arg_upids, cap_arg_upids;
	struct hmap arg_upid_set;     /* upid -> 1: in arg_upids */
	struct proc_args threads;     /* thread args, by utid */
	struct proc_args procs;       /* process args other than is_kthread, by upid */
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

static void live_set(struct tp_import *imp, uint64_t k, int64_t utid)
{
	struct tp_tid_slot *s = tid_slot(imp, k);

	if (hmap_put(&imp->procs->tid_to_utid, k, (uint64_t)utid) < 0) {
		if (s->key == k)
			s->utid_plus1 = 0;
		return;
	}
	s->key = k;
	s->utid_plus1 = utid + 1;
}

static void live_del(struct tp_import *imp, uint64_t k)
{
	struct tp_tid_slot *s = tid_slot(imp, k);

	hmap_del(&imp->procs->tid_to_utid, k, NULL);
	if (s->key == k)
		s->utid_plus1 = 0;
}

static int idvec_push(struct idvec *v, int64_t id)
{
	size_t cap = v->cap;

	if (tp_array_grow((void **)&v->v, &cap, v->n + 1, sizeof(*v->v), 4) < 0)
		return -ENOMEM;
	v->cap = (uint32_t)cap;
	v->v[v->n++] = id;
	return 0;
}

static void idvec_remove(struct idvec *v, int64_t id)
{
	uint32_t i, j = 0;

	for (i = 0; i < v->n; i++)
		if (v->v[i] != id)
			v->v[j++] = v->v[i];
	v->n = j;
}

/* The list of threads of key @k; NULL if none and !@create (or OOM). */
static struct idvec *tid_list(struct tp_procs *p, uint64_t k, bool create)
{
	uint64_t v;

	if (hmap_get(&p->tid_lists, k, &v))
		return &p->lists[v];
	if (!create)
		return NULL;
	if (tp_array_grow((void **)&p->lists, &p->cap_lists, p->n_lists + 1, sizeof(*p->lists),
			  64) < 0)
		return NULL;
	if (hmap_put(&p->tid_lists, k, p->n_lists) < 0)
		return NULL;
	memset(&p->lists[p->n_lists], 0, sizeof(*p->lists));
	return &p->lists[p->n_lists++];
}

static bool grow_prio(uint8_t **a, size_t *cap, int64_t id)
{
	size_t old = *cap;

	if (id < 0)
		return false;
	if ((size_t)id < old)
		return true;
	if (tp_array_grow((void **)a, cap, (size_t)id + 1, 1, 256) < 0)
		return false;
	memset(*a + old, 0, *cap - old);
	return true;
}

static int64_t thread_upid(struct tp_import *imp, int64_t utid)
{
	return tp_col_int(&imp->db->thread, THREAD_UPID)[utid];
}

static int64_t process_pid(struct tp_import *imp, int64_t upid)
{
	return tp_col_int(&imp->db->process, PROCESS_PID)[upid];
}

/* Perfetto's StartNewThread: a new row for @tid, the one its tid now means. */
static int64_t add_thread(struct tp_import *imp, uint32_t machine, int64_t ts, int64_t tid)
{
	struct tp_table *t = &imp->db->thread;
	int64_t row = tp_table_append(t);
	struct idvec *l;

	if (row < 0)
		return -ENOMEM;
	tp_set_int(t, THREAD_TID, (size_t)row, tid);
	tp_set_int(t, THREAD_MACHINE_ID, (size_t)row, machine);
	tp_set_int(t, THREAD_IS_IDLE, (size_t)row, 0);
	if (ts != TP_NULL_INT)
		tp_set_int(t, THREAD_START_TS, (size_t)row, ts);
	l = tid_list(imp->procs, key(machine, tid), true);
	if (l)
		idvec_push(l, row);
	live_set(imp, key(machine, tid), row);
	if (grow_prio(&imp->procs->tname_prio, &imp->procs->cap_tname_prio, row))
		imp->procs->tname_prio[row] = TP_NAME_OTHER;
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

/*
 * Perfetto's IsThreadAlive: not ended, and its process (if known) neither
 * ended nor replaced by a newer process of the same pid.
 */
static bool thread_alive(struct tp_import *imp, int64_t utid)
{
	struct tp_table *t = &imp->db->thread, *p = &imp->db->process;
	int64_t upid;
	uint64_t v;

	if (tp_col_int(t, THREAD_END_TS)[utid] != TP_NULL_INT)
		return false;
	upid = thread_upid(imp, utid);
	if (upid == TP_NULL_INT)
		return true;
	if (tp_col_int(p, PROCESS_END_TS)[upid] != TP_NULL_INT)
		return false;
	if (!hmap_get(&imp->procs->pid_to_upid,
		      key((uint32_t)tp_col_int(p, PROCESS_MACHINE_ID)[upid], process_pid(imp, upid)),
		      &v))
		return true;
	return (int64_t)v == upid;
}

/* The live thread of a tid: its newest thread still alive. */
static void refresh_live(struct tp_import *imp, uint64_t k)
{
	struct idvec *l = tid_list(imp->procs, k, false);
	uint32_t i;

	for (i = l ? l->n : 0; i-- > 0;) {
		if (thread_alive(imp, l->v[i])) {
			live_set(imp, k, l->v[i]);
			return;
		}
	}
	live_del(imp, k);
}

static void invalidate_process_threads(struct tp_import *imp, int64_t upid)
{
	struct tp_procs *p = imp->procs;
	struct tp_table *t = &imp->db->thread;
	struct idvec *v;
	uint32_t i;

	if ((size_t)upid >= p->cap_proc_threads)
		return;
	v = &p->proc_threads[upid];
	for (i = 0; i < v->n; i++)
		refresh_live(imp, key((uint32_t)tp_col_int(t, THREAD_MACHINE_ID)[v->v[i]],
				      tp_col_int(t, THREAD_TID)[v->v[i]]));
}

/*
 * Perfetto's GetThreadOrNull(tid, pid): the newest live thread of @tid
 * whose process is unknown or has pid @pid; -1 if none.
 */
static int64_t thread_of_pid(struct tp_import *imp, uint32_t machine, int64_t tid, int64_t pid)
{
	struct idvec *l = tid_list(imp->procs, key(machine, tid), false);
	uint32_t i;

	for (i = l ? l->n : 0; i-- > 0;) {
		int64_t utid = l->v[i], upid;

		if (!thread_alive(imp, utid))
			continue;
		upid = thread_upid(imp, utid);
		if (upid == TP_NULL_INT || process_pid(imp, upid) == pid)
			return utid;
	}
	return -1;
}

/* Puts @utid in @upid. */
static void join_main(struct tp_import *imp, int64_t utid, int64_t upid, bool is_main)
{
	struct tp_procs *p = imp->procs;
	struct tp_table *t = &imp->db->thread;

	tp_set_int(t, THREAD_UPID, (size_t)utid, upid);
	tp_set_int(t, THREAD_IS_MAIN_THREAD, (size_t)utid, is_main);
	if ((size_t)upid >= p->cap_proc_threads) {
		size_t old = p->cap_proc_threads;

		if (tp_array_grow((void **)&p->proc_threads, &p->cap_proc_threads,
				  (size_t)upid + 1, sizeof(*p->proc_threads), 64) < 0)
			return;
		memset(p->proc_threads + old, 0,
		       (p->cap_proc_threads - old) * sizeof(*p->proc_threads));
	}
	idvec_push(&p->proc_threads[upid], utid);
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

/* Processes waiting for @utid's process as their parent get it. */
static void resolve_parents(struct tp_import *imp, int64_t utid, int64_t upid)
{
	struct tp_procs *p = imp->procs;
	size_t i = 0;

	while (i < p->n_parents) {
		if (p->parents[i].a != utid) {
			i++;
			continue;
		}
		tp_set_int(&imp->db->process, PROCESS_PARENT_UPID, (size_t)p->parents[i].b, upid);
		p->parents[i] = p->parents[--p->n_parents];
	}
}

/*
 * Perfetto's ResolvePendingAssociations: @utid is now in @upid; so are
 * the threads paired with it, and theirs, and the processes waiting on
 * any of them as a parent thread get @upid as their parent.
 */
static void resolve(struct tp_import *imp, int64_t utid, int64_t upid, bool assoc_main)
{
	struct assoc *a = &imp->procs->assoc;
	int64_t *stack = NULL;
	size_t n = 0, cap = 0;
	uint64_t head;

	if (!hmap_len(&a->heads) && !imp->procs->n_parents)
		return;
	if (tp_array_grow((void **)&stack, &cap, 1, sizeof(*stack), 16) < 0)
		return;
	stack[n++] = utid;
	/* Each thread's list is taken once, so this ends. */
	while (n) {
		int64_t u = stack[--n];
		uint32_t i;

		if (imp->procs->n_parents)
			resolve_parents(imp, u, upid);
		if (hmap_del(&a->heads, (uint64_t)u, &head) < 0)
			continue;
		for (i = (uint32_t)head; i != NONE; i = a->ent[i].next) {
			int64_t o = a->ent[i].other;

			if (thread_upid(imp, o) != TP_NULL_INT)
				continue;
			join_main(imp, o, upid,
				  assoc_main && tp_col_int(&imp->db->thread, THREAD_TID)[o] ==
							process_pid(imp, upid));
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
	struct tp_table *t = &imp->db->thread;
	int64_t ua, ub;

	if (utid_a < 0 || utid_b < 0 || utid_a == utid_b)
		return;
	ua = thread_upid(imp, utid_a);
	ub = thread_upid(imp, utid_b);
	if (ua != TP_NULL_INT && ub == TP_NULL_INT) {
		join_main(imp, utid_b, ua, tp_col_int(t, THREAD_TID)[utid_b] == process_pid(imp, ua));
		resolve(imp, utid_b, ua, true);
		return;
	}
	if (ub != TP_NULL_INT && ua == TP_NULL_INT) {
		join_main(imp, utid_a, ub, tp_col_int(t, THREAD_TID)[utid_a] == process_pid(imp, ub));
		resolve(imp, utid_a, ub, true);
		return;
	}
	if (ua != TP_NULL_INT && ua != ub) {
		tp_stat_add(imp, "process_tracker_errors", -1, 0, 1);
		return;
	}
	if (ua != TP_NULL_INT)
		return;
	if (add_entry(a, utid_a, utid_b) < 0 || add_entry(a, utid_b, utid_a) < 0)
		tp_stat_add(imp, "process_tracker_pending_associations_dropped", -1, 0, 1);
}

void tp_proc_set_parent_thread(struct tp_import *imp, int64_t upid, int64_t parent_utid)
{
	struct tp_procs *p = imp->procs;
	int64_t pupid;

	if (upid < 0 || parent_utid < 0)
		return;
	pupid = thread_upid(imp, parent_utid);
	if (pupid != TP_NULL_INT) {
		tp_set_int(&imp->db->process, PROCESS_PARENT_UPID, (size_t)upid, pupid);
		return;
	}
	if (p->n_parents >= ASSOC_MAX_PAIRS ||
	    tp_array_grow((void **)&p->parents, &p->cap_parents, p->n_parents + 1,
			  sizeof(*p->parents), 16) < 0) {
		tp_stat_add(imp, "process_tracker_pending_associations_dropped", -1, 0, 1);
		return;
	}
	p->parents[p->n_parents].a = parent_utid;
	p->parents[p->n_parents].b = upid;
	p->n_parents++;
}

void tp_proc_set_parent(struct tp_import *imp, int64_t upid, int64_t parent_upid)
{
	struct tp_table *p = &imp->db->process;
	int64_t old;

	if (upid < 0 || parent_upid < 0)
		return;
	/* A changed parent is the process being reparented: the first says more. */
	old = tp_col_int(p, PROCESS_PARENT_UPID)[upid];
	if (old == TP_NULL_INT)
		tp_set_int(p, PROCESS_PARENT_UPID, (size_t)upid, parent_upid);
	else if (old != parent_upid)
		tp_stat_add(imp, "process_tracker_parent_pid_changed", -1,
			    (uint32_t)tp_col_int(p, PROCESS_MACHINE_ID)[upid], 1);
}

/* ------------------------------------------------------------- names ---- */

void tp_proc_update_thread_name(struct tp_import *imp, int64_t utid, uint32_t name,
				enum tp_name_prio prio)
{
	struct tp_procs *p = imp->procs;

	if (utid < 0 || !name || !grow_prio(&p->tname_prio, &p->cap_tname_prio, utid))
		return;
	if (prio < p->tname_prio[utid])
		return;
	tp_set_str(&imp->db->thread, THREAD_NAME, (size_t)utid, name);
	p->tname_prio[utid] = (uint8_t)prio;
}

void tp_proc_set_thread_name(struct tp_import *imp, int64_t utid, uint32_t name)
{
	tp_proc_update_thread_name(imp, utid, name, TP_NAME_TRACK_DESCRIPTOR);
}

void tp_proc_update_process_name(struct tp_import *imp, int64_t upid, uint32_t name,
				 enum tp_name_prio prio)
{
	struct tp_procs *p = imp->procs;

	if (upid < 0 || !name || !grow_prio(&p->pname_prio, &p->cap_pname_prio, upid))
		return;
	if (prio < p->pname_prio[upid])
		return;
	tp_set_str(&imp->db->process, PROCESS_NAME, (size_t)upid, name);
	p->pname_prio[upid] = (uint8_t)prio;
}

void tp_proc_rename_thread(struct tp_import *imp, int64_t utid, uint32_t name,
			   enum tp_name_prio prio)
{
	int64_t upid;

	if (utid < 0)
		return;
	tp_proc_update_thread_name(imp, utid, name, prio);
	upid = thread_upid(imp, utid);
	if (upid != TP_NULL_INT &&
	    process_pid(imp, upid) == tp_col_int(&imp->db->thread, THREAD_TID)[utid])
		tp_proc_update_process_name(imp, upid, name, TP_NAME_SYSTEM);
}

/* ---------------------------------------------------------- lookups ---- */

int tp_proc_add_idle(struct tp_import *imp, uint32_t machine)
{
	int64_t utid, upid;

	upid = add_process(imp, machine, 0);
	utid = add_thread(imp, machine, TP_NULL_INT, 0);
	if (upid < 0 || utid < 0)
		return -ENOMEM;
	tp_set_int(&imp->db->thread, THREAD_IS_IDLE, (size_t)utid, 1);
	tp_proc_update_thread_name(imp, utid, tp_db_str(imp->db, "swapper"), TP_NAME_CONSTANT);
	join_main(imp, utid, upid, true);
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
	hmap_init(&imp->procs->tid_lists);
	hmap_init(&imp->procs->assoc.heads);
	hmap_init(&imp->procs->arg_upid_set);
	hmap_init(&imp->procs->threads.id_set);
	hmap_init(&imp->procs->threads.sort_index);
	hmap_init(&imp->procs->procs.id_set);
	hmap_init(&imp->procs->procs.sort_index);
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
	size_t i;

	free(imp->tids);
	imp->tids = NULL;
	if (!p)
		return;
	hmap_fini(&p->tid_to_utid);
	hmap_fini(&p->pid_to_upid);
	hmap_fini(&p->tid_lists);
	hmap_fini(&p->assoc.heads);
	for (i = 0; i < p->n_lists; i++)
		free(p->lists[i].v);
	free(p->lists);
	for (i = 0; i < p->cap_proc_threads; i++)
		free(p->proc_threads[i].v);
	free(p->proc_threads);
	free(p->assoc.ent);
	free(p->parents);
	free(p->tname_prio);
	free(p->pname_prio);
	free(p->kthread);
	free(p->arg_upids);
	hmap_fini(&p->arg_upid_set);
	proc_args_fini(&p->threads);
	proc_args_fini(&p->procs);
	free(p);
	imp->procs = NULL;
}

int64_t tp_proc_get_thread_slow(struct tp_import *imp, uint32_t machine, int64_t tid)
{
	int64_t utid;

	if (tid_lookup(imp, key(machine, tid), &utid))
		return utid;
	return add_thread(imp, machine, TP_NULL_INT, tid);
}

int64_t tp_proc_find_thread(struct tp_import *imp, uint32_t machine, int64_t tid)
{
	int64_t utid;

	if (tid_lookup(imp, key(machine, tid), &utid))
		return utid;
	return -1;
}

int64_t tp_proc_start_thread(struct tp_import *imp, uint32_t machine, int64_t ts, int64_t tid)
{
	return add_thread(imp, machine, ts, tid);
}

int64_t tp_proc_new_thread(struct tp_import *imp, uint32_t machine, int64_t ts, int64_t tid)
{
	int64_t utid;

	/* tid 0 is always the idle thread ("swapper/N" per CPU in the kernel). */
	if (tid == 0)
		return tp_proc_get_thread(imp, machine, 0);
	if (tid_lookup(imp, key(machine, tid), &utid))
		tp_proc_end_thread(imp, ts, utid);
	return add_thread(imp, machine, ts, tid);
}

int64_t tp_proc_find_process(struct tp_import *imp, uint32_t machine, int64_t pid)
{
	uint64_t v;

	return hmap_get(&imp->procs->pid_to_upid, key(machine, pid), &v) ? (int64_t)v : -1;
}

static int64_t get_process(struct tp_import *imp, uint32_t machine, int64_t pid, bool main);

/*
 * Perfetto's GetOrCreateThreadWithParent: the live thread of @tid in
 * @upid (or in no process yet), else a new one; put in @upid if in none.
 */
static int64_t thread_in(struct tp_import *imp, uint32_t machine, int64_t tid, int64_t upid,
			 bool is_main, bool assoc_main)
{
	int64_t utid = thread_of_pid(imp, machine, tid, process_pid(imp, upid));

	if (utid >= 0) {
		/*
		 * Reaffirmed in its process: it becomes the tid's live thread and
		 * the newest of its list, so bare lookups find it from now on.
		 */
		uint64_t k = key(machine, tid);
		struct idvec *l = tid_list(imp->procs, k, false);

		live_set(imp, k, utid);
		if (l && l->n && l->v[l->n - 1] != utid) {
			idvec_remove(l, utid);
			idvec_push(l, utid);
		}
	} else {
		utid = add_thread(imp, machine, TP_NULL_INT, tid);
	}
	if (utid < 0)
		return utid;
	if (thread_upid(imp, utid) == TP_NULL_INT)
		join_main(imp, utid, upid, is_main);
	resolve(imp, utid, thread_upid(imp, utid), assoc_main);
	return utid;
}

int64_t tp_proc_update_thread(struct tp_import *imp, uint32_t machine, int64_t tid, int64_t pid)
{
	int64_t upid = get_process(imp, machine, pid, true);

	if (upid < 0)
		return upid;
	return thread_in(imp, machine, tid, upid, tid == pid, true);
}

/* Perfetto's GetOrCreateProcess(WithoutMainThread). */
static int64_t get_process(struct tp_import *imp, uint32_t machine, int64_t pid, bool main)
{
	uint64_t v;
	int64_t upid;

	if (hmap_get(&imp->procs->pid_to_upid, key(machine, pid), &v))
		return (int64_t)v;
	upid = add_process(imp, machine, pid);
	if (upid < 0)
		return upid;
	/* The main thread may have been seen already: it is looked up, not started. */
	if (main)
		tp_proc_update_thread(imp, machine, pid, pid);
	return upid;
}

int64_t tp_proc_get_process(struct tp_import *imp, uint32_t machine, int64_t pid)
{
	return get_process(imp, machine, pid, false);
}

int64_t tp_proc_get_process_main(struct tp_import *imp, uint32_t machine, int64_t pid)
{
	return get_process(imp, machine, pid, true);
}

int64_t tp_proc_start_process(struct tp_import *imp, uint32_t machine, int64_t ts, int64_t pid,
			      uint32_t name, enum tp_name_prio prio)
{
	struct tp_procs *p = imp->procs;
	struct idvec *l;
	int64_t recycled = -1, upid, utid;
	uint64_t v;

	/* A new process of a pid replaces the old one and all threads of that tid. */
	if (hmap_get(&p->pid_to_upid, key(machine, pid), &v))
		recycled = (int64_t)v;
	hmap_del(&p->pid_to_upid, key(machine, pid), NULL);
	l = tid_list(p, key(machine, pid), false);
	if (l)
		l->n = 0;
	live_del(imp, key(machine, pid));
	utid = add_thread(imp, machine, ts, pid);
	if (utid >= 0)
		tp_proc_update_thread_name(imp, utid, name, prio);
	upid = get_process(imp, machine, pid, true);
	if (upid < 0)
		return upid;
	if (ts != TP_NULL_INT)
		tp_set_int(&imp->db->process, PROCESS_START_TS, (size_t)upid, ts);
	tp_proc_update_process_name(imp, upid, name, TP_NAME_SYSTEM);
	if (recycled >= 0)
		invalidate_process_threads(imp, recycled);
	return upid;
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
	join_main(imp, utid, upid, tp_col_int(t, THREAD_TID)[utid] == pid);
	resolve(imp, utid, upid, true);
}

void tp_proc_end_thread(struct tp_import *imp, int64_t ts, int64_t utid)
{
	struct tp_table *t = &imp->db->thread;

	if (utid <= 0 || (size_t)utid >= t->n_rows)
		return;
	if (tp_col_int(t, THREAD_END_TS)[utid] == TP_NULL_INT)
		tp_set_int(t, THREAD_END_TS, (size_t)utid, ts);
}

/*
 * Perfetto's EndThread: the live thread of @tid ends and is no longer
 * tracked; a main thread ends its process too (the kernel frees the group
 * leader last).
 */
void tp_proc_free_thread(struct tp_import *imp, uint32_t machine, int64_t ts, int64_t tid)
{
	struct tp_table *t = &imp->db->thread, *p = &imp->db->process;
	uint64_t k = key(machine, tid);
	struct idvec *l;
	int64_t utid, upid;

	if (tid == 0 || !tid_lookup(imp, k, &utid))
		return;
	tp_set_int(t, THREAD_END_TS, (size_t)utid, ts);
	l = tid_list(imp->procs, k, false);
	if (l)
		idvec_remove(l, utid);
	refresh_live(imp, k);
	upid = thread_upid(imp, utid);
	if (upid == TP_NULL_INT || process_pid(imp, upid) != tid)
		return;
	tp_set_int(p, PROCESS_END_TS, (size_t)upid, ts);
	hmap_del(&imp->procs->pid_to_upid, key(machine, tid), NULL);
	invalidate_process_threads(imp, upid);
}

/* ------------------------------------------------------------- args ---- */

void tp_proc_set_kthread(struct tp_import *imp, int64_t upid, bool is_kthread)
{
	struct tp_procs *p = imp->procs;
	size_t old = p->cap_kthread;

	if (upid < 0 || upid > UINT32_MAX)
		return;
	if ((size_t)upid >= old) {
		if (tp_array_grow((void **)&p->kthread, &p->cap_kthread, (size_t)upid + 1, 1, 256) < 0)
			return;
		memset(p->kthread + old, -1, p->cap_kthread - old);
	}
	if (note_id(&p->arg_upids, &p->n_arg_upids, &p->cap_arg_upids, &p->arg_upid_set,
		    (uint32_t)upid) < 0)
		return;
	p->kthread[upid] = is_kthread;
}

static void proc_args_fini(struct proc_args *pa)
{
	free(pa->a);
	free(pa->ids);
	hmap_fini(&pa->id_set);
	hmap_fini(&pa->sort_index);
	free(pa->sort_ids);
}

/* Adds @id to the list @ids (insertion order) unless @set has it. */
static int note_id(uint32_t **ids, size_t *n, size_t *cap, struct hmap *set, uint32_t id)
{
	uint64_t v;

	if (hmap_get(set, id, &v))
		return 0;
	if (tp_array_grow((void **)ids, cap, *n + 1, sizeof(**ids), 64) < 0)
		return -ENOMEM;
	if (hmap_put(set, id, 1) < 0)
		return -ENOMEM;
	(*ids)[(*n)++] = id;
	return 0;
}

static void add_pending(struct tp_procs *p, bool thread, uint32_t id, const struct tp_arg *arg)
{
	struct proc_args *pa = thread ? &p->threads : &p->procs;
	int rc;

	if (thread)
		rc = note_id(&pa->ids, &pa->n_ids, &pa->cap_ids, &pa->id_set, id);
	else
		rc = note_id(&p->arg_upids, &p->n_arg_upids, &p->cap_arg_upids, &p->arg_upid_set,
			     id);
	if (rc < 0 || tp_array_grow((void **)&pa->a, &pa->cap, pa->n + 1, sizeof(*pa->a), 16) < 0)
		return;
	pa->a[pa->n].id = id;
	pa->a[pa->n].seq = (uint32_t)pa->n;
	pa->a[pa->n].arg = *arg;
	pa->n++;
}

void tp_proc_add_arg(struct tp_import *imp, bool thread, int64_t id, const struct tp_arg *arg)
{
	if (!imp->procs || id < 0 || id > UINT32_MAX)
		return;
	add_pending(imp->procs, thread, (uint32_t)id, arg);
}

void tp_proc_set_sort_index(struct tp_import *imp, bool thread, int64_t id, int32_t sort_index)
{
	struct proc_args *pa;
	uint64_t v;

	if (!imp->procs || id < 0 || id > UINT32_MAX)
		return;
	pa = thread ? &imp->procs->threads : &imp->procs->procs;
	if (!hmap_get(&pa->sort_index, (uint64_t)id, &v)) {
		if (tp_array_grow((void **)&pa->sort_ids, &pa->cap_sort_ids, pa->n_sort_ids + 1,
				  sizeof(*pa->sort_ids), 16) < 0)
			return;
		pa->sort_ids[pa->n_sort_ids++] = (uint32_t)id;
	}
	hmap_put(&pa->sort_index, (uint64_t)id, (uint64_t)(uint32_t)sort_index);
}

/* Perfetto's MurmurHash of an integer key. */
static uint64_t murmur_mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

/* Puts @key in the first free slot of its quadratic probe sequence. */
static void probe_insert(uint32_t *slots, uint8_t *used, size_t cap, uint32_t key)
{
	uint64_t h = murmur_mix(key), s;

	for (s = 0; s < cap; s++) {
		size_t i = (size_t)((h + 2 * s * s + s) & (cap - 1));

		if (!used[i]) {
			used[i] = 1;
			slots[i] = key;
			return;
		}
	}
}

/*
 * The order Perfetto commits the processes' args in: it keeps one arg
 * inserter per upid in a FlatHashMap (MurmurHash, quadratic probing, 75%
 * load, capacity 1024 at the first insert and 8x, then 2x past 1 MB of
 * 44-byte entries, rehashed in slot order) and commits them as it clears
 * the map, slot by slot. @upids (in insertion order) are reordered so.
 * Return: 0, or -ENOMEM (then @upids is unchanged).
 */
static int map_clear_order(uint32_t *upids, size_t n)
{
	uint32_t *slots = NULL, *tmp;
	uint8_t *used = NULL, *tused;
	size_t cap = 0, size = 0, i, j;

	for (i = 0; i < n; i++) {
		if (size >= cap * 75 / 100) {
			size_t ncap = cap * 44 < (1u << 20) ? cap * 8 : cap * 2;

			if (ncap < 1024)
				ncap = 1024;
			tmp = malloc(ncap * sizeof(*tmp));
			tused = calloc(ncap, 1);
			if (!tmp || !tused) {
				free(tmp);
				free(tused);
				free(slots);
				free(used);
				return -ENOMEM;
			}
			for (j = 0; j < cap; j++)
				if (used[j])
					probe_insert(tmp, tused, ncap, slots[j]);
			free(slots);
			free(used);
			slots = tmp;
			used = tused;
			cap = ncap;
		}
		probe_insert(slots, used, cap, upids[i]);
		size++;
	}
	for (i = 0, j = 0; i < cap; i++)
		if (used[i])
			upids[j++] = slots[i];
	free(slots);
	free(used);
	return 0;
}

static int cmp_pending(const void *a, const void *b)
{
	const struct pending_arg *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The sort index hints of @pa become args, as Perfetto adds them last. */
static void add_sort_hints(struct tp_import *imp, bool thread, struct proc_args *pa)
{
	struct tp_arg arg = {0};
	size_t i;

	arg.key = arg.flat_key =
		tp_db_str(imp->db, thread ? "thread_sort_index_hint" : "process_sort_index_hint");
	arg.type = TP_ARG_INT;
	if (map_clear_order(pa->sort_ids, pa->n_sort_ids) < 0)
		return;
	for (i = 0; i < pa->n_sort_ids; i++) {
		uint64_t v = 0;

		hmap_get(&pa->sort_index, pa->sort_ids[i], &v);
		arg.v.i = (int32_t)(uint32_t)v;
		add_pending(imp->procs, thread, pa->sort_ids[i], &arg);
	}
}

/* The pending args of @id in @pa (sorted by id), into @b. */
static void take_pending(struct tp_import *imp, const struct proc_args *pa, uint32_t id,
			 struct tp_argset *b)
{
	size_t lo = 0, hi = pa->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pa->a[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < pa->n && pa->a[lo].id == id; lo++)
		tp_argset_add(imp, b, &pa->a[lo].arg);
}

/* Stores the args of the threads, in the order Perfetto commits them. */
static void thread_args_finish(struct tp_import *imp)
{
	struct proc_args *pa = &imp->procs->threads;
	struct tp_argset b = {0};
	size_t i;

	if (!pa->n_ids || map_clear_order(pa->ids, pa->n_ids) < 0)
		return;
	if (pa->n)
		sort_n(pa->a, pa->n, sizeof(*pa->a), cmp_pending);
	for (i = 0; i < pa->n_ids; i++) {
		uint32_t utid = pa->ids[i];
		int64_t set;

		if (utid >= imp->db->thread.n_rows)
			continue;
		take_pending(imp, pa, utid, &b);
		set = tp_argset_commit(imp, &b);
		if (set >= 0)
			tp_set_int(&imp->db->thread, THREAD_ARG_SET_ID, utid, set);
	}
	tp_argset_fini(&b);
}

void tp_proc_finish(struct tp_import *imp)
{
	struct tp_procs *p = imp->procs;
	struct tp_argset b = {0};
	uint32_t k;
	size_t i;

	if (!p)
		return;
	add_sort_hints(imp, false, &p->procs);
	add_sort_hints(imp, true, &p->threads);
	k = tp_db_str(imp->db, "is_kthread");
	/* Perfetto stores the args it gathered per process at the end, then
	 * those per thread. */
	if (p->n_arg_upids && map_clear_order(p->arg_upids, p->n_arg_upids) == 0) {
		if (p->procs.n)
			sort_n(p->procs.a, p->procs.n, sizeof(*p->procs.a), cmp_pending);
		for (i = 0; i < p->n_arg_upids; i++) {
			uint32_t upid = p->arg_upids[i];
			int64_t set;

			if (upid >= imp->db->process.n_rows)
				continue;
			b.n = 0;
			if (upid < p->cap_kthread && p->kthread[upid] >= 0)
				tp_argset_bool(imp, &b, k, p->kthread[upid] != 0);
			take_pending(imp, &p->procs, upid, &b);
			set = tp_argset_commit(imp, &b);
			if (set >= 0)
				tp_set_int(&imp->db->process, PROCESS_ARG_SET_ID, upid, set);
		}
	}
	tp_argset_fini(&b);
	thread_args_finish(imp);
}

// SPDX-License-Identifier: Apache-2.0
/*
 * tp_proc_assoc.c - threads known to share a process before the process is
 * known: task_newtask with CLONE_THREAD from a thread whose process is not
 * known yet records the pair; when either thread later gets its process
 * (a process tree, an atrace pid, ...), tp_proc.c calls back here and the
 * process spreads along every recorded pair. Pairs are few (one per such
 * clone); each thread's pairs form a list.
 */
#include <stdlib.h>

#include "base/hmap.h"
#include "trace_processor/tp_int.h"

/* A client can make us remember this many pairs; later ones are dropped. */
#define ASSOC_MAX_PAIRS (1u << 22)

struct assoc_ent {
	int64_t other;
	uint32_t next; /* index of the next entry of the same thread, or NONE */
};

#define NONE UINT32_MAX

struct tp_proc_assoc {
	struct hmap heads; /* utid -> first entry */
	struct assoc_ent *ent;
	size_t n, cap;
};

static int add_entry(struct tp_proc_assoc *a, int64_t utid, int64_t other)
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

void tp_proc_assoc_resolve(struct tp_import *imp, int64_t utid)
{
	struct tp_proc_assoc *a = imp->proc_assoc;
	int64_t *stack = NULL, upid;
	size_t n = 0, cap = 0;
	uint64_t head;

	if (!a || !hmap_len(&a->heads))
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
	struct tp_proc_assoc *a = imp->proc_assoc;
	int64_t ua, ub;

	if (utid_a <= 0 || utid_b <= 0 || utid_a == utid_b)
		return;
	ua = upid_of(imp, utid_a);
	ub = upid_of(imp, utid_b);
	if (ua != TP_NULL_INT && ub == TP_NULL_INT) {
		join(imp, utid_b, ua);
		tp_proc_assoc_resolve(imp, utid_b);
		return;
	}
	if (ub != TP_NULL_INT && ua == TP_NULL_INT) {
		join(imp, utid_a, ub);
		tp_proc_assoc_resolve(imp, utid_a);
		return;
	}
	if (ua != TP_NULL_INT)
		return;
	if (!a) {
		a = calloc(1, sizeof(*a));
		if (!a)
			return;
		hmap_init(&a->heads);
		imp->proc_assoc = a;
	}
	if (add_entry(a, utid_a, utid_b) < 0 || add_entry(a, utid_b, utid_a) < 0)
		tp_stat_add(imp, "process_tracker_pending_associations_dropped", -1, 0, 1);
}

void tp_proc_assoc_fini(struct tp_import *imp)
{
	struct tp_proc_assoc *a = imp->proc_assoc;

	if (!a)
		return;
	hmap_fini(&a->heads);
	free(a->ent);
	free(a);
	imp->proc_assoc = NULL;
}

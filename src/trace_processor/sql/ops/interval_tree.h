/* SPDX-License-Identifier: Apache-2.0 */
/*
 * interval_tree.h - private to sql/ops/: finding the intervals of a sorted
 * set that overlap a query interval (interval_tree.c), by binary search
 * when the set does not overlap itself, a linear scan for a few queries,
 * or a centered interval tree. Interval intersection (interval.c) uses it;
 * the tree visits nodes in upstream's order, so results come in its order.
 */
#ifndef PFC_TRACE_PROCESSOR_SQL_OPS_INTERVAL_TREE_H
#define PFC_TRACE_PROCESSOR_SQL_OPS_INTERVAL_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace_processor/sql/ops/ops_int.h"

enum ops_isect_mode { OPS_ISECT_BINARY, OPS_ISECT_LINEAR, OPS_ISECT_TREE };

struct ops_itree_node;

struct ops_intersector {
	const struct ops_interval *v; /* borrowed: sorted by start */
	size_t n;
	enum ops_isect_mode mode;
	struct ops_itree_node *nodes; /* tree mode */
	size_t n_nodes;
	struct ops_interval *node_ivs; /* the intervals of each node, by node */
	uint32_t *stack;
	size_t stack_cap;
};

/*
 * ops_intersector_init() - Prepare to query @v (@n intervals sorted by
 * start; borrowed, outlives @is) about @n_queries times.
 * @nonoverlapping: no interval starts before the previous one ends.
 * Return: 0 or -ENOMEM.
 */
int ops_intersector_init(struct ops_intersector *is, const struct ops_interval *v, size_t n,
			 bool nonoverlapping, size_t n_queries);
void ops_intersector_fini(struct ops_intersector *is);

/* Whether [s, e] overlaps @iv: instants count when inside (not at the end). */
bool ops_overlaps(uint64_t s, uint64_t e, const struct ops_interval *iv);

typedef void (*ops_overlap_cb)(void *user, const struct ops_interval *clipped);

/*
 * ops_intersector_find() - Call @cb with every interval overlapping
 * [@s, @e], clipped to it (an instant query or interval stays an instant).
 * Return: 0, or -ENOMEM (tree mode's stack could not grow).
 */
int ops_intersector_find(struct ops_intersector *is, uint64_t s, uint64_t e, ops_overlap_cb cb,
			 void *user);

#endif

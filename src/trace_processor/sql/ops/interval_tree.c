// SPDX-License-Identifier: Apache-2.0
/*
 * interval_tree.c - the overlap queries of interval intersection: binary
 * search over non-overlapping sorted intervals, a linear scan when few
 * queries come, else a centered interval tree (each node holds the
 * intervals crossing its center, in start order; those ending before it go
 * left, those starting after it right). The tree is built and walked with
 * explicit stacks, so a degenerate input cannot exhaust the C stack.
 */
#include "trace_processor/sql/ops/interval_tree.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Below this many queries a scan beats building a tree. */
#define LINEAR_MAX_QUERIES 5
#define NO_NODE UINT32_MAX

struct ops_itree_node {
	uint64_t center;
	size_t first, count; /* into node_ivs */
	uint32_t left, right;
};

/* A buffer of intervals shared by the work items that point into it. */
struct shared_buf {
	struct ops_interval *v;
	size_t refs;
};

struct work {
	const struct ops_interval *v;
	size_t n;
	uint32_t node;
	struct shared_buf *buf; /* NULL: the caller's array */
};

bool ops_overlaps(uint64_t s, uint64_t e, const struct ops_interval *iv)
{
	bool q_instant = s == e, i_instant = iv->start == iv->end;

	if (q_instant && i_instant)
		return s == iv->start;
	if (q_instant)
		return iv->start <= s && s < iv->end;
	if (i_instant)
		return s <= iv->start && iv->start < e;
	return e > iv->start && s < iv->end;
}

static void emit(uint64_t s, uint64_t e, const struct ops_interval *iv, ops_overlap_cb cb,
		 void *user)
{
	struct ops_interval out = {.id = iv->id};

	if (s == e) {
		out.start = out.end = s;
	} else if (iv->start == iv->end) {
		out.start = out.end = iv->start;
	} else {
		out.start = s > iv->start ? s : iv->start;
		out.end = e < iv->end ? e : iv->end;
	}
	cb(user, &out);
}

static void buf_release(struct shared_buf *b)
{
	if (b && --b->refs == 0) {
		free(b->v);
		free(b);
	}
}

static int new_node(struct ops_intersector *is, size_t *cap)
{
	struct ops_itree_node *n;

	if (ops_grow((void **)&is->nodes, cap, is->n_nodes + 1, sizeof(*is->nodes)) < 0)
		return -ENOMEM;
	n = &is->nodes[is->n_nodes++];
	n->left = n->right = NO_NODE;
	n->first = n->count = 0;
	n->center = 0;
	return (int)(is->n_nodes - 1);
}

static int build_tree(struct ops_intersector *is)
{
	struct work *stack = NULL;
	size_t stack_n = 0, stack_cap = 0, nodes_cap = 0, ivs_n = 0;
	int err = 0, root;

	is->node_ivs = malloc(is->n * sizeof(*is->node_ivs));
	if (!is->node_ivs)
		return -ENOMEM;
	root = new_node(is, &nodes_cap);
	if (root < 0 || ops_grow((void **)&stack, &stack_cap, 1, sizeof(*stack)) < 0) {
		free(stack);
		return -ENOMEM;
	}
	stack[stack_n++] = (struct work){is->v, is->n, (uint32_t)root, NULL};
	while (stack_n && !err) {
		struct work w = stack[--stack_n];
		const struct ops_interval *mid = &w.v[w.n / 2];
		uint64_t center = (mid->start + mid->end) / 2;
		struct shared_buf *left = NULL;
		size_t n_left = 0, i;

		is->nodes[w.node].center = center;
		is->nodes[w.node].first = ivs_n;
		for (i = 0; i < w.n; i++) {
			const struct ops_interval *iv = &w.v[i];

			if (iv->start > center) {
				/* The rest starts after the center too: the right child. */
				int child = new_node(is, &nodes_cap);

				if (child < 0 || ops_grow((void **)&stack, &stack_cap, stack_n + 2,
							  sizeof(*stack)) < 0) {
					err = -ENOMEM;
					break;
				}
				is->nodes[w.node].right = (uint32_t)child;
				if (w.buf)
					w.buf->refs++;
				stack[stack_n++] = (struct work){iv, w.n - i, (uint32_t)child, w.buf};
				break;
			}
			if (iv->end < center) {
				if (!left) {
					left = calloc(1, sizeof(*left));
					if (left)
						left->v = malloc((w.n - i) * sizeof(*left->v));
					if (!left || !left->v) {
						free(left);
						left = NULL;
						err = -ENOMEM;
						break;
					}
					left->refs = 1;
				}
				left->v[n_left++] = *iv;
			} else {
				is->node_ivs[ivs_n++] = *iv;
			}
		}
		is->nodes[w.node].count = ivs_n - is->nodes[w.node].first;
		if (left && !err) {
			int child = new_node(is, &nodes_cap);

			if (child < 0 ||
			    ops_grow((void **)&stack, &stack_cap, stack_n + 1, sizeof(*stack)) < 0) {
				err = -ENOMEM;
				buf_release(left);
			} else {
				is->nodes[w.node].left = (uint32_t)child;
				stack[stack_n++] = (struct work){left->v, n_left, (uint32_t)child, left};
			}
		} else if (left) {
			buf_release(left);
		}
		buf_release(w.buf);
	}
	while (stack_n)
		buf_release(stack[--stack_n].buf);
	free(stack);
	return err;
}

int ops_intersector_init(struct ops_intersector *is, const struct ops_interval *v, size_t n,
			 bool nonoverlapping, size_t n_queries)
{
	int err;

	memset(is, 0, sizeof(*is));
	is->v = v;
	is->n = n;
	if (!n || nonoverlapping)
		is->mode = OPS_ISECT_BINARY;
	else if (n_queries < LINEAR_MAX_QUERIES)
		is->mode = OPS_ISECT_LINEAR;
	else
		is->mode = OPS_ISECT_TREE;
	if (is->mode != OPS_ISECT_TREE)
		return 0;
	err = build_tree(is);
	if (err)
		ops_intersector_fini(is);
	return err;
}

void ops_intersector_fini(struct ops_intersector *is)
{
	free(is->nodes);
	free(is->node_ivs);
	free(is->stack);
	memset(is, 0, sizeof(*is));
}

int ops_intersector_find(struct ops_intersector *is, uint64_t s, uint64_t e, ops_overlap_cb cb,
			 void *user)
{
	size_t i, n_stack;

	if (is->mode == OPS_ISECT_LINEAR) {
		for (i = 0; i < is->n; i++) {
			if (ops_overlaps(s, e, &is->v[i]))
				emit(s, e, &is->v[i], cb, user);
		}
		return 0;
	}
	if (is->mode == OPS_ISECT_BINARY) {
		size_t lo = 0, hi = is->n;

		/* The first interval ending at or after s; the one before may overlap too. */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (is->v[mid].end < s)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo)
			lo--;
		for (i = lo; i < is->n; i++) {
			if (s == e ? is->v[i].start > s : is->v[i].start >= e)
				break;
			if (ops_overlaps(s, e, &is->v[i]))
				emit(s, e, &is->v[i], cb, user);
		}
		return 0;
	}
	if (ops_grow((void **)&is->stack, &is->stack_cap, 1, sizeof(*is->stack)) < 0)
		return -ENOMEM;
	n_stack = 0;
	is->stack[n_stack++] = 0;
	while (n_stack) {
		const struct ops_itree_node *n = &is->nodes[is->stack[--n_stack]];

		for (i = 0; i < n->count; i++) {
			const struct ops_interval *iv = &is->node_ivs[n->first + i];

			/* Node intervals cross the center: none after this one can overlap. */
			if (iv->start > e)
				break;
			if (ops_overlaps(s, e, iv))
				emit(s, e, iv, cb, user);
		}
		if (ops_grow((void **)&is->stack, &is->stack_cap, n_stack + 2, sizeof(*is->stack)) <
		    0)
			return -ENOMEM;
		if (e > n->center && n->right != NO_NODE)
			is->stack[n_stack++] = n->right;
		if (s < n->center && n->left != NO_NODE)
			is->stack[n_stack++] = n->left;
	}
	return 0;
}

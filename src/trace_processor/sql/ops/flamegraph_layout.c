// SPDX-License-Identifier: Apache-2.0
/*
 * flamegraph_layout.c - the geometry of a built flamegraph
 * (flamegraph_int.h): the render order and each node's x, as upstream lays
 * it out (fg_layout()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "trace_processor/sql/ops/flamegraph_int.h"

struct by_width {
	double w;
	uint32_t node;
};

static int cmp_width(const void *a, const void *b)
{
	const struct by_width *x = a, *y = b;

	if (x->w != y->w)
		return x->w > y->w ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

int fg_layout(const int64_t *depth, const uint32_t *parent, const double *width, size_t n,
	      uint32_t *order, uint32_t *parent_row, double *x_start)
{
	struct by_width *sorted = malloc((n + 1) * sizeof(*sorted));
	uint32_t *off = calloc(n + 2, sizeof(*off)), *fill = malloc((n + 1) * sizeof(*fill));
	uint32_t *kids = malloc((n + 1) * sizeof(*kids));
	uint32_t *down = malloc((n + 1) * sizeof(*down)), *up = malloc((n + 1) * sizeof(*up));
	double *x = malloc((n + 1) * sizeof(*x));
	size_t nd = 0, nu = 0, di = 0, ui = 0, tail = 0, i, row;
	double strip;
	int rc = -ENOMEM;

	if (!sorted || !off || !fill || !kids || !down || !up || !x)
		goto out;
	for (i = 0; i < n; i++) {
		sorted[i].w = width[i];
		sorted[i].node = (uint32_t)i;
		if (parent[i] != FG_NONE)
			off[parent[i] + 1]++;
	}
	sort_n(sorted, n, sizeof(*sorted), cmp_width);
	for (i = 0; i < n; i++)
		off[i + 1] += off[i];
	memcpy(fill, off, n * sizeof(*fill));
	for (i = 0; i < n; i++) {
		uint32_t node = sorted[i].node;

		if (parent[node] != FG_NONE)
			kids[fill[parent[node]]++] = node;
		else if (depth[node] >= 0)
			down[nd++] = node;
		else
			up[nu++] = node;
	}
	for (strip = 0, i = 0; i < nd; i++) {
		x[down[i]] = strip;
		strip += width[down[i]];
	}
	for (strip = 0, i = 0; i < nu; i++) {
		x[up[i]] = strip;
		strip += width[up[i]];
	}
	while (di < nd || ui < nu) {
		uint32_t node;

		if (ui >= nu || (di < nd && x[down[di]] <= x[up[ui]]))
			node = down[di++];
		else
			node = up[ui++];
		order[tail] = node;
		parent_row[tail] = FG_NONE;
		x_start[tail++] = x[node];
	}
	for (row = 0; row < tail; row++) {
		uint32_t node = order[row];
		double at = x_start[row];

		for (i = off[node]; i < off[node + 1]; i++) {
			uint32_t kid = kids[i];

			x[kid] = at;
			at += width[kid];
			order[tail] = kid;
			parent_row[tail] = (uint32_t)row;
			x_start[tail++] = x[kid];
		}
	}
	rc = 0;
out:
	free(sorted);
	free(off);
	free(fill);
	free(kids);
	free(down);
	free(up);
	free(x);
	return rc;
}

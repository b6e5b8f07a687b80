// SPDX-License-Identifier: Apache-2.0
/*
 * tp_clock.c - the clock graph. Each ClockSnapshot says "these clocks read
 * these values at one instant"; two clocks in one snapshot are linked. A
 * timestamp converts to trace time along the shortest chain of links
 * (breadth-first), each hop using the snapshot whose source value is the
 * latest one <= the timestamp (the first snapshot for earlier times).
 * Per-pair tables of (source value, target value) are built on demand and
 * extended with the snapshots that arrived since. As in Perfetto, a clock
 * that goes backwards between snapshots is never a source of a hop (a value
 * of it could stand for two times), so every table in use is sorted as it
 * is appended to; a snapshot where the trace clock goes backwards is
 * refused.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/tp_int.h"

#define MAX_CLOCKS 256
#define MAX_HOPS 8

struct clock_value {
	uint64_t id;
	int64_t value;
};

struct snapshot {
	uint32_t first;   /* index in values */
	uint32_t n;
};

struct pair_table {
	uint64_t from, to;
	size_t n_seen;        /* snapshots looked at so far */
	size_t n, cap;
	int64_t *from_vals;   /* non-decreasing: @from is monotonic */
	int64_t *to_vals;
};

struct tp_clock_graph {
	uint64_t trace_clock;
	/*
	 * The trace clock chosen before any timestamp was converted (-1: none),
	 * which Perfetto reports as trace_time_clock_id; later choices are not.
	 */
	int64_t claimed_clock;
	bool primary_claimed;
	uint64_t n_conversions;
	struct snapshot *snaps;
	size_t n_snaps, cap_snaps;
	struct clock_value *values;
	size_t n_values, cap_values;
	uint64_t clocks[MAX_CLOCKS];
	size_t n_clocks;
	bool linked[MAX_CLOCKS][MAX_CLOCKS];
	int64_t last_value[MAX_CLOCKS];   /* in the latest snapshot holding the clock */
	bool has_value[MAX_CLOCKS];
	bool non_monotonic[MAX_CLOCKS];   /* went backwards: no hop starts at it */
	uint64_t generation;
	struct pair_table *pairs;
	size_t n_pairs, cap_pairs;
	/* Last path found, reused while the graph does not change. */
	uint64_t path_from, path_gen;
	uint64_t path[MAX_HOPS + 1];
	size_t path_len;
};

int tp_clock_create(struct tp_clock_graph **out)
{
	struct tp_clock_graph *g = calloc(1, sizeof(*g));

	if (!g)
		return -ENOMEM;
	g->trace_clock = TP_CLOCK_BOOTTIME;
	g->claimed_clock = -1;
	*out = g;
	return 0;
}

void tp_clock_destroy(struct tp_clock_graph *g)
{
	size_t i;

	if (!g)
		return;
	for (i = 0; i < g->n_pairs; i++) {
		free(g->pairs[i].from_vals);
		free(g->pairs[i].to_vals);
	}
	free(g->pairs);
	free(g->snaps);
	free(g->values);
	free(g);
}

void tp_clock_set_trace_clock(struct tp_clock_graph *g, uint64_t clock_id)
{
	g->trace_clock = clock_id;
	g->generation++;
	if (!g->n_conversions) {
		g->claimed_clock = (int64_t)clock_id;
		g->primary_claimed = true;
	}
}

int64_t tp_clock_claimed_trace_clock(const struct tp_clock_graph *g)
{
	return g->claimed_clock;
}

uint64_t tp_clock_trace_clock(const struct tp_clock_graph *g)
{
	return g->trace_clock;
}

static int clock_index(struct tp_clock_graph *g, uint64_t id, bool add)
{
	size_t i;

	for (i = 0; i < g->n_clocks; i++)
		if (g->clocks[i] == id)
			return (int)i;
	if (!add || g->n_clocks == MAX_CLOCKS)
		return -1;
	g->clocks[g->n_clocks] = id;
	return (int)g->n_clocks++;
}

int tp_clock_add_snapshot(struct tp_clock_graph *g, const uint64_t *ids, const int64_t *values,
			  size_t n)
{
	bool boottime = false, trace_file = false;
	size_t i, j;
	int ix[64];

	/* A snapshot with BOOTTIME but no TRACE_FILE makes BOOTTIME the trace clock. */
	for (i = 0; i < n; i++) {
		boottime |= ids[i] == TP_CLOCK_BOOTTIME;
		trace_file |= ids[i] == TP_CLOCK_TRACE_FILE;
	}
	if (boottime && !trace_file && !g->n_conversions && !g->primary_claimed)
		g->claimed_clock = TP_CLOCK_BOOTTIME;
	if (n < 2)
		return 0;
	if (n > 64 || g->n_snaps >= TP_CLOCK_MAX_SNAPSHOTS)
		return -E2BIG;
	if (g->n_snaps == g->cap_snaps) {
		size_t cap = g->cap_snaps ? 2 * g->cap_snaps : 16;
		struct snapshot *s = realloc(g->snaps, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		g->snaps = s;
		g->cap_snaps = cap;
	}
	while (g->n_values + n > g->cap_values) {
		size_t cap = g->cap_values ? 2 * g->cap_values : 64;
		struct clock_value *v = realloc(g->values, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		g->values = v;
		g->cap_values = cap;
	}
	for (i = 0; i < n; i++) {
		ix[i] = clock_index(g, ids[i], true);
		if (ix[i] < 0)
			return -E2BIG;
	}
	for (i = 0; i < n; i++)
		if (ids[i] == g->trace_clock && g->has_value[ix[i]] &&
		    values[i] < g->last_value[ix[i]])
			return -EINVAL;
	for (i = 0; i < n; i++) {
		if (g->has_value[ix[i]] && values[i] < g->last_value[ix[i]])
			g->non_monotonic[ix[i]] = true;
		g->has_value[ix[i]] = true;
		g->last_value[ix[i]] = values[i];
	}
	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++)
			if (i != j)
				g->linked[ix[i]][ix[j]] = true;
	g->snaps[g->n_snaps].first = (uint32_t)g->n_values;
	g->snaps[g->n_snaps].n = (uint32_t)n;
	g->n_snaps++;
	for (i = 0; i < n; i++) {
		g->values[g->n_values].id = ids[i];
		g->values[g->n_values].value = values[i];
		g->n_values++;
	}
	g->generation++;
	return 0;
}

/* The (from, to) table, extended with the snapshots added since its last use. */
static struct pair_table *pair_get(struct tp_clock_graph *g, uint64_t from, uint64_t to)
{
	struct pair_table *t = NULL;
	size_t i, k;

	for (i = 0; i < g->n_pairs; i++) {
		if (g->pairs[i].from == from && g->pairs[i].to == to) {
			t = &g->pairs[i];
			break;
		}
	}
	if (!t) {
		if (g->n_pairs == g->cap_pairs) {
			size_t cap = g->cap_pairs ? 2 * g->cap_pairs : 8;
			struct pair_table *p = realloc(g->pairs, cap * sizeof(*p));

			if (!p)
				return NULL;
			g->pairs = p;
			g->cap_pairs = cap;
		}
		t = &g->pairs[g->n_pairs++];
		memset(t, 0, sizeof(*t));
		t->from = from;
		t->to = to;
	}
	for (; t->n_seen < g->n_snaps; t->n_seen++) {
		const struct snapshot *sn = &g->snaps[t->n_seen];
		const struct clock_value *cv = g->values + sn->first;
		bool ha = false, hb = false;
		int64_t a = 0, b = 0;

		for (k = 0; k < sn->n; k++) {
			if (cv[k].id == from)
				ha = true, a = cv[k].value;
			else if (cv[k].id == to)
				hb = true, b = cv[k].value;
		}
		if (!ha || !hb)
			continue;
		if (t->n == t->cap) {
			size_t cap = t->cap ? 2 * t->cap : 16;
			int64_t *fv = realloc(t->from_vals, cap * sizeof(*fv)), *tv;

			if (!fv)
				return NULL;
			t->from_vals = fv;
			tv = realloc(t->to_vals, cap * sizeof(*tv));
			if (!tv)
				return NULL;
			t->to_vals = tv;
			t->cap = cap;
		}
		t->from_vals[t->n] = a;
		t->to_vals[t->n] = b;
		t->n++;
	}
	return t;
}

static int convert_hop(struct tp_clock_graph *g, uint64_t from, uint64_t to, int64_t ts,
		       int64_t *out)
{
	struct pair_table *t = pair_get(g, from, to);
	size_t lo = 0, hi;

	if (!t || t->n == 0)
		return -ENOENT;
	hi = t->n;
	/* Last snapshot with from_vals <= ts; the first one for earlier ts. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->from_vals[mid] <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0)
		lo--;
	*out = tp_ts_add(tp_ts_sub(ts, t->from_vals[lo]), t->to_vals[lo]);
	return 0;
}

/* Breadth-first path from @from to the trace clock; fills g->path. */
static int find_path(struct tp_clock_graph *g, uint64_t from)
{
	int prev[MAX_CLOCKS], queue[MAX_CLOCKS], src, dst, head = 0, tail = 0;
	size_t i, n;
	int cur;

	if (g->path_gen == g->generation && g->path_from == from && g->path_len)
		return 0;
	src = clock_index(g, from, false);
	dst = clock_index(g, g->trace_clock, false);
	if (src < 0 || dst < 0)
		return -ENOENT;
	for (i = 0; i < MAX_CLOCKS; i++)
		prev[i] = -2;
	prev[src] = -1;
	queue[tail++] = src;
	while (head < tail) {
		cur = queue[head++];
		if (cur == dst)
			break;
		if (g->non_monotonic[cur])
			continue;
		for (i = 0; i < g->n_clocks; i++) {
			if (g->linked[cur][i] && prev[i] == -2) {
				prev[i] = cur;
				queue[tail++] = (int)i;
			}
		}
	}
	if (prev[dst] == -2)
		return -ENOENT;
	n = 0;
	for (cur = dst; cur != -1 && n <= MAX_HOPS; cur = prev[cur])
		n++;
	if (n > MAX_HOPS + 1)
		return -ENOENT;
	g->path_len = n;
	for (cur = dst, i = n; cur != -1; cur = prev[cur])
		g->path[--i] = g->clocks[cur];
	g->path_from = from;
	g->path_gen = g->generation;
	return 0;
}

int tp_clock_to_trace(struct tp_clock_graph *g, uint64_t clock_id, int64_t ts, int64_t *out)
{
	size_t i;
	int rc;

	g->n_conversions++;
	if (clock_id == g->trace_clock) {
		*out = ts;
		return 0;
	}
	rc = find_path(g, clock_id);
	if (rc < 0)
		return rc;
	for (i = 0; i + 1 < g->path_len; i++) {
		rc = convert_hop(g, g->path[i], g->path[i + 1], ts, &ts);
		if (rc < 0)
			return rc;
	}
	*out = ts;
	return 0;
}

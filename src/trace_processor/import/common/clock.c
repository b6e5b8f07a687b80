// SPDX-License-Identifier: Apache-2.0
/*
 * clock.c - the clock graph. Each snapshot says "these clocks read these
 * values at one instant"; two clocks in one snapshot are linked. A
 * timestamp converts along the shortest chain of links (breadth-first,
 * neighbours in clock id order, at most four hops, as Perfetto), each hop
 * using the snapshot whose source value is the latest one <= the timestamp
 * (the first snapshot for earlier times). Clock ids arrive qualified by
 * machine or sequence (tp_clock_qualify()), so the clocks of every machine
 * live in this one graph and a cross-machine sync is one more snapshot.
 *
 * Monotonicity is judged, as in Perfetto, per clock within the snapshots
 * of one shape (the same clocks in the same order): a clock that goes
 * backwards there is never a source of a hop (a value of it could stand
 * for two times), and a snapshot in which the trace clock does is refused.
 * Per-pair tables of (source value, target value) are built on demand from
 * every snapshot holding both clocks, kept sorted by the source value.
 * Called by the tokenizer in file order, and by the parse stage's merge
 * worker once tokenizing is over (one thread at a time).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/hmap.h"
#include "trace_processor/import/common/common.h"

#define MAX_CLOCKS 1024 /* machines times their clocks, and sequence clocks */
#define MAX_HOPS 4 /* edges in a path */
#define N_PATHS 4  /* paths remembered between snapshots */
#define N_CACHED 8 /* conversions remembered, as Perfetto's ClockSynchronizer */

/*
 * A conversion remembered: @from's values in [lo, hi) go to @to shifted by
 * @shift. from == to == 0: an empty slot (never looked up: from != to).
 */
struct cached_conv {
	uint64_t from, to;
	int64_t lo, hi, shift;
};

struct clock_value {
	uint64_t id;
	int64_t value;
};

struct snapshot {
	uint32_t first;   /* index in values */
	uint32_t n;
	bool is_bridge;
};

/* One shape of snapshot: its clocks (indices) in order, and their last values. */
struct shape {
	uint32_t off;     /* in shape_clocks / shape_last */
	uint32_t n;
	bool has_last;
};

struct pair_table {
	uint64_t from, to;
	size_t n_seen;        /* snapshots looked at so far */
	size_t n, cap;
	int64_t *from_vals;   /* sorted (non-decreasing) */
	int64_t *to_vals;
	bool has_real;        /* holds real snapshots: bridges are left out */
};

struct clock_path {
	uint64_t from, to, gen;
	uint64_t ids[MAX_HOPS + 1];
	size_t len;           /* clocks in ids; 0: empty slot */
};

struct clock_info {
	uint64_t id;
	int64_t unit_ns;
	bool incremental;
	bool non_monotonic;   /* went backwards: no hop starts at it */
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
	uint32_t next_snapshot_id;
	struct snapshot *snaps;
	size_t n_snaps, cap_snaps;
	struct clock_value *values;
	size_t n_values, cap_values;
	struct clock_info clocks[MAX_CLOCKS];
	size_t n_clocks;
	uint16_t order[MAX_CLOCKS];       /* clock indices sorted by clock id */
	bool linked[MAX_CLOCKS][MAX_CLOCKS];
	struct shape *shapes;
	size_t n_shapes, cap_shapes;
	uint16_t *shape_clocks;
	int64_t *shape_last;
	size_t n_shape_vals, cap_shape_clocks, cap_shape_last;
	struct hmap shape_index;          /* hash of the clock list -> shape */
	uint64_t generation;
	struct pair_table *pairs;
	size_t n_pairs, cap_pairs;
	struct hmap pair_index;           /* hash of (from, to) -> pair */
	struct clock_path paths[N_PATHS];
	size_t next_path;
	/*
	 * Perfetto's conversion cache, whose misses it reports as
	 * clock_sync_cache_miss: emptied by every snapshot, a new entry in
	 * the slot a std::minstd_rand of the default seed (1) picks.
	 */
	struct cached_conv cache[N_CACHED];
	uint32_t cache_rnd;
	uint64_t cache_misses;
};

int tp_clock_create(struct tp_clock_graph **out)
{
	struct tp_clock_graph *g = calloc(1, sizeof(*g));

	if (!g)
		return -ENOMEM;
	g->trace_clock = TP_CLOCK_BOOTTIME;
	g->claimed_clock = -1;
	g->cache_rnd = 1;
	hmap_init(&g->shape_index);
	hmap_init(&g->pair_index);
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
	free(g->shapes);
	free(g->shape_clocks);
	free(g->shape_last);
	hmap_fini(&g->shape_index);
	hmap_fini(&g->pair_index);
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

/* Perfetto orders clocks by raw id, then by what qualifies them. */
static bool id_less(uint64_t a, uint64_t b)
{
	if ((uint32_t)a != (uint32_t)b)
		return (uint32_t)a < (uint32_t)b;
	return (a >> 32) < (b >> 32);
}

static int clock_index(const struct tp_clock_graph *g, uint64_t id)
{
	size_t i;

	for (i = 0; i < g->n_clocks; i++)
		if (g->clocks[i].id == id)
			return (int)i;
	return -1;
}

/* A new clock; keeps g->order sorted. Return: its index, or -1 when full. */
static int clock_add(struct tp_clock_graph *g, uint64_t id, int64_t unit_ns, bool incremental)
{
	size_t i, pos;
	int ix;

	if (g->n_clocks == MAX_CLOCKS)
		return -1;
	ix = (int)g->n_clocks++;
	g->clocks[ix].id = id;
	g->clocks[ix].unit_ns = unit_ns;
	g->clocks[ix].incremental = incremental;
	g->clocks[ix].non_monotonic = false;
	for (pos = 0; pos < (size_t)ix && id_less(g->clocks[g->order[pos]].id, id); pos++)
		;
	for (i = (size_t)ix; i > pos; i--)
		g->order[i] = g->order[i - 1];
	g->order[pos] = (uint16_t)ix;
	return ix;
}

/* ------------------------------------------------------------ shapes ---- */

static uint64_t shape_hash(const uint64_t *ids, size_t n)
{
	uint64_t h = 0x5ca1ab1e;
	size_t i;

	for (i = 0; i < n; i++)
		h = hash_mix64(h ^ ids[i]) + i;
	return h;
}

static bool shape_is(const struct tp_clock_graph *g, const struct shape *s, const int *ix,
		     size_t n)
{
	size_t i;

	if (s->n != n)
		return false;
	for (i = 0; i < n; i++)
		if (g->shape_clocks[s->off + i] != (uint16_t)ix[i])
			return false;
	return true;
}

/*
 * The shape of a snapshot of clocks @ix (all known), created if new.
 * Return: its index, or -ENOMEM.
 */
static int shape_get(struct tp_clock_graph *g, const uint64_t *ids, const int *ix, size_t n,
		     bool create)
{
	uint64_t h = shape_hash(ids, n), v;
	struct shape *s;
	size_t i;

	/* Colliding shapes take the next key along. */
	for (;; h++) {
		if (!hmap_get(&g->shape_index, h, &v))
			break;
		if (shape_is(g, &g->shapes[v], ix, n))
			return (int)v;
	}
	if (!create)
		return -ENOENT;
	if (tp_array_grow((void **)&g->shapes, &g->cap_shapes, g->n_shapes + 1, sizeof(*g->shapes),
			  8) < 0 ||
	    tp_array_grow((void **)&g->shape_clocks, &g->cap_shape_clocks, g->n_shape_vals + n,
			  sizeof(*g->shape_clocks), 64) < 0 ||
	    tp_array_grow((void **)&g->shape_last, &g->cap_shape_last, g->n_shape_vals + n,
			  sizeof(*g->shape_last), 64) < 0 ||
	    hmap_put(&g->shape_index, h, g->n_shapes) < 0)
		return -ENOMEM;
	s = &g->shapes[g->n_shapes];
	s->off = (uint32_t)g->n_shape_vals;
	s->n = (uint32_t)n;
	s->has_last = false;
	for (i = 0; i < n; i++)
		g->shape_clocks[s->off + i] = (uint16_t)ix[i];
	g->n_shape_vals += n;
	return (int)g->n_shapes++;
}

/* ---------------------------------------------------------- snapshots ---- */

static int reserve_snapshot(struct tp_clock_graph *g, size_t n)
{
	if (tp_array_grow((void **)&g->snaps, &g->cap_snaps, g->n_snaps + 1, sizeof(*g->snaps),
			  16) < 0 ||
	    tp_array_grow((void **)&g->values, &g->cap_values, g->n_values + n, sizeof(*g->values),
			  64) < 0)
		return -ENOMEM;
	return 0;
}

int tp_clock_add_snapshot(struct tp_clock_graph *g, const struct tp_clock_reading *r, size_t n,
			  bool is_bridge, uint32_t *out_id)
{
	uint32_t id = g->next_snapshot_id++;
	uint64_t ids[TP_CLOCK_MAX_SNAPSHOT_CLOCKS];
	int ix[TP_CLOCK_MAX_SNAPSHOT_CLOCKS];
	bool boottime = false, trace_file = false, backwards[TP_CLOCK_MAX_SNAPSHOT_CLOCKS];
	const struct shape *s = NULL;
	size_t i, j;
	int sh = -ENOENT, rc;

	/* Perfetto empties its conversion cache first, whatever comes of the snapshot. */
	memset(g->cache, 0, sizeof(g->cache));
	/* A snapshot with BOOTTIME but no TRACE_FILE makes BOOTTIME the trace clock. */
	for (i = 0; i < n; i++) {
		boottime |= r[i].id == TP_CLOCK_BOOTTIME;
		trace_file |= r[i].id == TP_CLOCK_TRACE_FILE;
	}
	if (boottime && !trace_file && !g->n_conversions && !g->primary_claimed)
		g->claimed_clock = TP_CLOCK_BOOTTIME;
	if (n > TP_CLOCK_MAX_SNAPSHOT_CLOCKS || g->n_snaps >= TP_CLOCK_MAX_SNAPSHOTS)
		return -E2BIG;
	if (n == 0) {
		*out_id = id;
		return 0;
	}
	/*
	 * Refused as a whole (Perfetto counts these as invalid_clock_snapshots):
	 * a clock listed twice; a global clock with incremental encoding; a
	 * clock whose unit or encoding differs from its first snapshot's; the
	 * trace clock in units other than ns, or going backwards.
	 */
	for (i = 0; i < n; i++) {
		int64_t unit = r[i].unit_ns > 1 ? (int64_t)r[i].unit_ns : 1;

		ids[i] = r[i].id;
		ix[i] = clock_index(g, r[i].id);
		for (j = 0; j < i; j++)
			if (ids[j] == ids[i])
				return -EINVAL;
		if (ix[i] < 0) {
			if (r[i].incremental && !tp_clock_is_sequence(r[i].id))
				return -EINVAL;
		} else if (g->clocks[ix[i]].unit_ns != unit ||
			   g->clocks[ix[i]].incremental != r[i].incremental) {
			return -EINVAL;
		}
		if (r[i].id == g->trace_clock && unit != 1)
			return -EINVAL;
	}
	for (i = 0, j = 0; i < n; i++)
		j += ix[i] < 0;
	if (g->n_clocks + j > MAX_CLOCKS)
		return -E2BIG;
	if (j == 0) {
		sh = shape_get(g, ids, ix, n, false);
		s = sh >= 0 ? &g->shapes[sh] : NULL;
	}
	for (i = 0; i < n; i++) {
		backwards[i] = s && s->has_last && r[i].value < g->shape_last[s->off + i];
		if (backwards[i] && r[i].id == g->trace_clock)
			return -EINVAL;
	}
	rc = reserve_snapshot(g, n);
	if (rc < 0)
		return rc;
	for (i = 0; i < n; i++)
		if (ix[i] < 0)
			ix[i] = clock_add(g, r[i].id, r[i].unit_ns > 1 ? (int64_t)r[i].unit_ns : 1,
					  r[i].incremental);
	if (sh < 0) {
		sh = shape_get(g, ids, ix, n, true);
		if (sh < 0)
			return sh;
	}
	s = &g->shapes[sh];
	for (i = 0; i < n; i++) {
		if (backwards[i])
			g->clocks[ix[i]].non_monotonic = true;
		g->shape_last[s->off + i] = r[i].value;
	}
	g->shapes[sh].has_last = true;
	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++)
			if (i != j)
				g->linked[ix[i]][ix[j]] = true;
	g->snaps[g->n_snaps].first = (uint32_t)g->n_values;
	g->snaps[g->n_snaps].n = (uint32_t)n;
	g->snaps[g->n_snaps].is_bridge = is_bridge;
	g->n_snaps++;
	for (i = 0; i < n; i++) {
		g->values[g->n_values].id = r[i].id;
		g->values[g->n_values].value = r[i].value;
		g->n_values++;
	}
	g->generation++;
	*out_id = id;
	return 0;
}

/* ------------------------------------------------------- pair tables ---- */

static int pair_insert(struct pair_table *t, int64_t a, int64_t b)
{
	size_t lo = 0, hi = t->n;

	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		int64_t *fv = realloc(t->from_vals, cap * sizeof(*fv)), *tv;

		if (!fv)
			return -ENOMEM;
		t->from_vals = fv;
		tv = realloc(t->to_vals, cap * sizeof(*tv));
		if (!tv)
			return -ENOMEM;
		t->to_vals = tv;
		t->cap = cap;
	}
	/* After the entries <= a: a monotonic source appends. */
	if (t->n && t->from_vals[t->n - 1] > a) {
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (t->from_vals[mid] <= a)
				lo = mid + 1;
			else
				hi = mid;
		}
		memmove(t->from_vals + lo + 1, t->from_vals + lo, (t->n - lo) * sizeof(int64_t));
		memmove(t->to_vals + lo + 1, t->to_vals + lo, (t->n - lo) * sizeof(int64_t));
	} else {
		lo = t->n;
	}
	t->from_vals[lo] = a;
	t->to_vals[lo] = b;
	t->n++;
	return 0;
}

/* The (from, to) table, extended with the snapshots added since its last use. */
static struct pair_table *pair_get(struct tp_clock_graph *g, uint64_t from, uint64_t to)
{
	struct pair_table *t = NULL;
	uint64_t h = hash_mix64(from) ^ to, v;
	size_t k;

	/* Colliding pairs take the next key along. */
	for (;; h++) {
		if (!hmap_get(&g->pair_index, h, &v))
			break;
		if (g->pairs[v].from == from && g->pairs[v].to == to) {
			t = &g->pairs[v];
			break;
		}
	}
	if (!t) {
		if (tp_array_grow((void **)&g->pairs, &g->cap_pairs, g->n_pairs + 1,
				  sizeof(*g->pairs), 8) < 0 ||
		    hmap_put(&g->pair_index, h, g->n_pairs) < 0)
			return NULL;
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
		if (!ha || !hb || (sn->is_bridge && t->has_real))
			continue;
		/* A real relation of the two clocks replaces assumed ones. */
		if (!sn->is_bridge && !t->has_real) {
			t->has_real = true;
			t->n = 0;
		}
		if (pair_insert(t, a, b) < 0)
			return NULL;
	}
	return t;
}

/*
 * One hop: @ts of @from in @to, and the range of @from's values [*lo, *hi)
 * that the same snapshot serves (INT64_MIN / INT64_MAX: unbounded).
 */
static int convert_hop(struct tp_clock_graph *g, uint64_t from, uint64_t to, int64_t ts,
		       int64_t *out, int64_t *lo_out, int64_t *hi_out)
{
	struct pair_table *t = pair_get(g, from, to);
	size_t lo = 0, hi;

	if (!t || t->n == 0)
		return -ENOLINK;
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
	*lo_out = lo == 0 ? INT64_MIN : t->from_vals[lo];
	*hi_out = lo + 1 < t->n ? t->from_vals[lo + 1] : INT64_MAX;
	return 0;
}

/* --------------------------------------------------------------- paths ---- */

/* Breadth-first path from @from to @to. Return: the path, or NULL. */
static const struct clock_path *find_path(struct tp_clock_graph *g, uint64_t from, uint64_t to,
					  int *err)
{
	int prev[MAX_CLOCKS], depth[MAX_CLOCKS], queue[MAX_CLOCKS], src, dst, head = 0, tail = 0;
	struct clock_path *p;
	size_t i, n;
	int cur;

	for (i = 0; i < N_PATHS; i++) {
		p = &g->paths[i];
		if (p->len && p->gen == g->generation && p->from == from && p->to == to)
			return p;
	}
	src = clock_index(g, from);
	dst = clock_index(g, to);
	if (src < 0 || dst < 0) {
		*err = src < 0 ? -ENOENT : -EDOM;
		return NULL;
	}
	for (i = 0; i < g->n_clocks; i++)
		prev[i] = -2;
	prev[src] = -1;
	depth[src] = 0;
	queue[tail++] = src;
	while (head < tail && prev[dst] == -2) {
		cur = queue[head++];
		if (g->clocks[cur].non_monotonic || depth[cur] == MAX_HOPS)
			continue;
		for (i = 0; i < g->n_clocks; i++) {
			int next = g->order[i];

			if (g->linked[cur][next] && prev[next] == -2) {
				prev[next] = cur;
				depth[next] = depth[cur] + 1;
				queue[tail++] = next;
			}
		}
	}
	if (prev[dst] == -2) {
		*err = -ENOLINK;
		return NULL;
	}
	p = &g->paths[g->next_path];
	g->next_path = (g->next_path + 1) % N_PATHS;
	n = (size_t)depth[dst] + 1;
	for (cur = dst, i = n; cur != -1; cur = prev[cur])
		p->ids[--i] = g->clocks[cur].id;
	p->len = n;
	p->from = from;
	p->to = to;
	p->gen = g->generation;
	return p;
}

bool tp_clock_has_path(struct tp_clock_graph *g, uint64_t from, uint64_t to)
{
	int err;

	return from == to || find_path(g, from, to, &err) != NULL;
}

/* Moves a bound of a later hop's range back into the source clock's values. */
static int64_t bound_back(int64_t bound, int64_t shift, bool is_lo, int64_t ts)
{
	int64_t v;

	if (bound == INT64_MIN || bound == INT64_MAX)
		return bound;
	if (__builtin_sub_overflow(bound, shift, &v))
		return is_lo ? ts : ts + 1;   /* only @ts itself is known to map so */
	return v;
}

int tp_clock_convert_span(struct tp_clock_graph *g, uint64_t from, int64_t ts, uint64_t to,
			  struct tp_clock_span *out)
{
	const struct clock_path *p;
	int64_t v = ts, lo = INT64_MIN, hi = INT64_MAX, hlo, hhi, next;
	size_t i;
	int err = 0;

	if (from == to) {
		out->shift = 0;
		out->lo = INT64_MIN;
		out->hi = INT64_MAX;
		return 0;
	}
	p = find_path(g, from, to, &err);
	if (!p)
		return err;
	for (i = 0; i + 1 < p->len; i++) {
		int64_t shift = tp_ts_sub(v, ts);
		int rc = convert_hop(g, p->ids[i], p->ids[i + 1], v, &next, &hlo, &hhi);

		if (rc < 0)
			return rc;
		hlo = bound_back(hlo, shift, true, ts);
		hhi = bound_back(hhi, shift, false, ts);
		if (hlo > lo)
			lo = hlo;
		if (hhi < hi)
			hi = hhi;
		v = next;
	}
	out->shift = tp_ts_sub(v, ts);
	out->lo = lo;
	out->hi = hi;
	return 0;
}

int tp_clock_convert(struct tp_clock_graph *g, uint64_t from, int64_t ts, uint64_t to,
		     int64_t *out)
{
	struct tp_clock_span s;
	int rc = tp_clock_convert_span(g, from, ts, to, &s);

	if (rc < 0)
		return rc;
	*out = tp_ts_add(ts, s.shift);
	return 0;
}

/*
 * std::minstd_rand: x = x * 48271 mod (2^31 - 1), the new x returned.
 * Fits in 64 bits: x < 2^31, 48271 < 2^16.
 */
static uint32_t minstd_next(uint32_t *x)
{
	*x = (uint32_t)((uint64_t)*x * 48271u % 2147483647u);
	return *x;
}

int tp_clock_convert_cached(struct tp_clock_graph *g, uint64_t from, int64_t ts, uint64_t to,
			    int64_t *out)
{
	struct tp_clock_span s;
	struct cached_conv *c;
	size_t i;
	int rc;

	if (from == to) {
		*out = ts;
		return 0;
	}
	for (i = 0; i < N_CACHED; i++) {
		c = &g->cache[i];
		if (c->from == from && c->to == to && ts >= c->lo && ts < c->hi) {
			*out = tp_ts_add(ts, c->shift);
			return 0;
		}
	}
	g->cache_misses++;
	rc = tp_clock_convert_span(g, from, ts, to, &s);
	if (rc < 0)
		return rc;
	c = &g->cache[minstd_next(&g->cache_rnd) % N_CACHED];
	c->from = from;
	c->to = to;
	c->lo = s.lo;
	c->hi = s.hi;
	c->shift = s.shift;
	*out = tp_ts_add(ts, s.shift);
	return 0;
}

uint64_t tp_clock_cache_misses(const struct tp_clock_graph *g)
{
	return g->cache_misses;
}

int tp_clock_to_trace(struct tp_clock_graph *g, uint64_t clock_id, int64_t ts, bool cached,
		      int64_t *out)
{
	g->n_conversions++;
	if (clock_id == g->trace_clock) {
		*out = ts;
		return 0;
	}
	if (cached)
		return tp_clock_convert_cached(g, clock_id, ts, g->trace_clock, out);
	return tp_clock_convert(g, clock_id, ts, g->trace_clock, out);
}

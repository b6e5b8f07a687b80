// SPDX-License-Identifier: Apache-2.0
/*
 * slice_fns.c - the table functions over the slice, callsite and flow
 * tables: ancestor_slice(id), descendant_slice(id),
 * experimental_ancestor_stack_profile_callsite(id), and the flow walks
 * directly_connected_flow(id), following_flow(id) (outgoing flows and the
 * descendants of what they reach) and preceding_flow(id) (incoming flows
 * and ancestors), with upstream's columns, order and errors. They read
 * the tables in place; descendants come from the track's equality index
 * narrowed by ts, so a call costs O(log n + the slices of its time range
 * on that track).
 */
#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/sql/ops/ops_int.h"
#include "trace_processor/storage/storage.h"

enum flow_mode { FLOW_DIRECT, FLOW_FOLLOWING, FLOW_PRECEDING };

struct slice_fns {
	struct tp_db *db;
	/* Flows by slice: out_start[s]..out_start[s+1] index out_rows (and in_*),
	 * rows in flow order; built on first use. */
	uint32_t *out_start, *out_rows, *in_start, *in_rows;
	size_t n_slices;
	bool flows_built;
};

struct flow_fn {
	struct slice_fns *sf;
	enum flow_mode mode;
};

/* The 13 columns of upstream's slice subset, in order. */
static const char *const k_slice_cols[] = {
	"id INTEGER",        "ts INTEGER",         "dur INTEGER",
	"track_id INTEGER",  "category TEXT",      "name TEXT",
	"depth INTEGER",     "parent_id INTEGER",  "arg_set_id INTEGER",
	"thread_ts INTEGER", "thread_dur INTEGER", "thread_instruction_count INTEGER",
	"thread_instruction_delta INTEGER",
};
static const uint32_t k_slice_src[] = {
	SLICE_ID,        SLICE_TS,         SLICE_DUR,
	SLICE_TRACK_ID,  SLICE_CATEGORY,   SLICE_NAME,
	SLICE_DEPTH,     SLICE_PARENT_ID,  SLICE_ARG_SET_ID,
	SLICE_THREAD_TS, SLICE_THREAD_DUR, SLICE_THREAD_INSTRUCTION_COUNT,
	SLICE_THREAD_INSTRUCTION_DELTA,
};
#define N_SLICE_COLS (sizeof(k_slice_src) / sizeof(k_slice_src[0]))

static const char *const k_callsite_cols[] = {"id INTEGER", "depth INTEGER", "parent_id INTEGER",
					      "frame_id INTEGER"};
static const char *const k_flow_cols[] = {"id INTEGER", "slice_out INTEGER", "slice_in INTEGER",
					  "trace_id INTEGER", "arg_set_id INTEGER"};

/* Appends slice @row with its columns. Return: 0 or -ENOMEM. */
static int add_slice(const struct tp_db *db, struct ops_table *out, size_t row)
{
	const struct tp_table *sl = &db->slice;
	int64_t r = ops_table_append(out);
	uint32_t c;

	if (r < 0)
		return -ENOMEM;
	for (c = 0; c < N_SLICE_COLS; c++) {
		uint32_t src = k_slice_src[c];

		switch (sl->specs[src].type) {
		case TP_ID:
			ops_set_int(out, c, (size_t)r, (int64_t)row);
			break;
		case TP_STR:
			ops_set_static_text(out, c, (size_t)r,
					    tp_str_get(&db->strings, tp_get_str(sl, src, row)));
			break;
		default:
			ops_set_int_or_null(out, c, (size_t)r, tp_get_int(sl, src, row));
			break;
		}
	}
	return 0;
}

/* Checks the start id argument. Return: 1 to go on, 0 for an empty result
 * (NULL), -1 with *@err set. */
static int start_id(sqlite3_value *v, size_t n_rows, const char *missing_fmt, int64_t *out,
		    char **err)
{
	int64_t id;

	if (sqlite3_value_type(v) == SQLITE_NULL)
		return 0;
	if (sqlite3_value_type(v) != SQLITE_INTEGER) {
		*err = sqlite3_mprintf("start id should be an integer.");
		return -1;
	}
	id = sqlite3_value_int64(v);
	if (id < 0 || (uint64_t)id >= n_rows) {
		*err = sqlite3_mprintf(missing_fmt, (long long)id);
		return -1;
	}
	*out = id;
	return 1;
}

/* ----------------------------------------------------------- ancestors ---- */

/* The ancestors of slice @id, root first, into *@out (grown as needed). */
static int ancestors(const struct tp_table *sl, int64_t id, uint32_t **out, size_t *n,
		     size_t *cap)
{
	int64_t p = tp_get_int(sl, SLICE_PARENT_ID, (size_t)id);
	size_t first = *n, i;

	/* A parent always has a smaller id: this also bounds a corrupt chain. */
	while (p != TP_NULL_INT && p >= 0 && p < id) {
		if (ops_grow((void **)out, cap, *n + 1, sizeof(**out)) < 0)
			return -ENOMEM;
		(*out)[(*n)++] = (uint32_t)p;
		id = p;
		p = tp_get_int(sl, SLICE_PARENT_ID, (size_t)p);
	}
	for (i = 0; i < (*n - first) / 2; i++) {
		uint32_t t = (*out)[first + i];

		(*out)[first + i] = (*out)[*n - 1 - i];
		(*out)[*n - 1 - i] = t;
	}
	return 0;
}

static int run_ancestor_slice(void *user, sqlite3_value **argv, struct ops_table *out, char **err)
{
	struct slice_fns *sf = user;
	uint32_t *rows = NULL;
	size_t n = 0, cap = 0, i;
	int64_t id;
	int rc = start_id(argv[0], sf->db->slice.n_rows, "no row with id %lld", &id, err);

	if (rc <= 0)
		return rc;
	rc = ancestors(&sf->db->slice, id, &rows, &n, &cap);
	for (i = 0; i < n && !rc; i++)
		rc = add_slice(sf->db, out, rows[i]);
	free(rows);
	return rc < 0 ? -1 : 0;
}

static int run_ancestor_callsite(void *user, sqlite3_value **argv, struct ops_table *out,
				 char **err)
{
	struct slice_fns *sf = user;
	const struct tp_table *cs = &sf->db->sp_callsite;
	uint32_t *rows = NULL;
	size_t n = 0, cap = 0, i, k;
	int64_t id, p;
	int rc = start_id(argv[0], cs->n_rows, "no row with id %lld", &id, err);

	if (rc <= 0)
		return rc;
	for (p = tp_get_int(cs, SP_CS_PARENT_ID, (size_t)id); p != TP_NULL_INT && p >= 0 && p < id;
	     p = tp_get_int(cs, SP_CS_PARENT_ID, (size_t)p)) {
		if (ops_grow((void **)&rows, &cap, n + 1, sizeof(*rows)) < 0) {
			free(rows);
			return -1;
		}
		rows[n++] = (uint32_t)p;
		id = p;
	}
	for (k = n; k-- > 0;) {
		int64_t r = ops_table_append(out);

		if (r < 0) {
			free(rows);
			return -1;
		}
		i = rows[k];
		ops_set_int(out, 0, (size_t)r, (int64_t)i);
		ops_set_int_or_null(out, 1, (size_t)r, tp_get_int(cs, SP_CS_DEPTH, i));
		ops_set_int_or_null(out, 2, (size_t)r, tp_get_int(cs, SP_CS_PARENT_ID, i));
		ops_set_int_or_null(out, 3, (size_t)r, tp_get_int(cs, SP_CS_FRAME_ID, i));
	}
	free(rows);
	return 0;
}

/* --------------------------------------------------------- descendants ---- */

/* True if @anc is an ancestor of slice @row (whose depth is over @anc_depth). */
static bool is_ancestor(const struct tp_table *sl, size_t row, int64_t anc, int64_t anc_depth)
{
	int64_t p = tp_get_int(sl, SLICE_PARENT_ID, row);

	while (p != TP_NULL_INT && p >= 0 && (size_t)p < row) {
		if (p == anc)
			return true;
		if (tp_get_int(sl, SLICE_DEPTH, (size_t)p) <= anc_depth)
			return false;
		row = (size_t)p;
		p = tp_get_int(sl, SLICE_PARENT_ID, row);
	}
	return false;
}

/*
 * The descendants of slice @id, in id order, appended to *@out: the slices
 * of its track deeper than it that start within [ts, ts + dur] (an open
 * slice reaches the end of time); those starting exactly at either end are
 * checked by their parent chain, since a neighbour can start there too.
 */
static int descendants(struct tp_table *sl, int64_t id, uint32_t **out, size_t *n, size_t *cap)
{
	int64_t ts = tp_get_int(sl, SLICE_TS, (size_t)id);
	int64_t dur = tp_get_int(sl, SLICE_DUR, (size_t)id);
	int64_t depth = tp_get_int(sl, SLICE_DEPTH, (size_t)id);
	int64_t track = tp_get_int(sl, SLICE_TRACK_ID, (size_t)id);
	int64_t end = dur >= 0 && dur != TP_NULL_INT ? ts + dur : INT64_MAX;
	const uint32_t *rows;
	int64_t m = tp_col_lookup(sl, SLICE_TRACK_ID, track, &rows);
	size_t lo = 0, hi, i;

	if (m < 0)
		return -ENOMEM;
	hi = (size_t)m;
	/* The track's rows are in id order, hence in ts order. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (tp_get_int(sl, SLICE_TS, rows[mid]) < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < (size_t)m; i++) {
		size_t row = rows[i];
		int64_t t = tp_get_int(sl, SLICE_TS, row);

		if (t > end)
			break;
		if (tp_get_int(sl, SLICE_DEPTH, row) <= depth)
			continue;
		if ((t == ts || t == end) && !is_ancestor(sl, row, id, depth))
			continue;
		if (ops_grow((void **)out, cap, *n + 1, sizeof(**out)) < 0)
			return -ENOMEM;
		(*out)[(*n)++] = (uint32_t)row;
	}
	return 0;
}

static int run_descendant_slice(void *user, sqlite3_value **argv, struct ops_table *out,
				char **err)
{
	struct slice_fns *sf = user;
	uint32_t *rows = NULL;
	size_t n = 0, cap = 0, i;
	int64_t id;
	int rc = start_id(argv[0], sf->db->slice.n_rows, "no row with id %lld", &id, err);

	if (rc <= 0)
		return rc;
	rc = descendants(&sf->db->slice, id, &rows, &n, &cap);
	if (!rc)
		rc = ops_table_reserve(out, n);
	for (i = 0; i < n && !rc; i++)
		rc = add_slice(sf->db, out, rows[i]);
	free(rows);
	return rc < 0 ? -1 : 0;
}

/* --------------------------------------------------------------- flows ---- */

static int build_flows(struct slice_fns *sf)
{
	const struct tp_table *fl = &sf->db->flow;
	size_t n = sf->db->slice.n_rows, i;
	uint32_t *fill_out = NULL, *fill_in = NULL;

	sf->n_slices = n;
	sf->out_start = calloc(n + 1, sizeof(uint32_t));
	sf->in_start = calloc(n + 1, sizeof(uint32_t));
	sf->out_rows = malloc((fl->n_rows ? fl->n_rows : 1) * sizeof(uint32_t));
	sf->in_rows = malloc((fl->n_rows ? fl->n_rows : 1) * sizeof(uint32_t));
	fill_out = calloc(n + 1, sizeof(uint32_t));
	fill_in = calloc(n + 1, sizeof(uint32_t));
	if (!sf->out_start || !sf->in_start || !sf->out_rows || !sf->in_rows || !fill_out ||
	    !fill_in)
		goto fail;
	for (i = 0; i < fl->n_rows; i++) {
		int64_t o = tp_get_int(fl, FLOW_SLICE_OUT, i), in = tp_get_int(fl, FLOW_SLICE_IN, i);

		if (o >= 0 && (uint64_t)o < n)
			sf->out_start[o + 1]++;
		if (in >= 0 && (uint64_t)in < n)
			sf->in_start[in + 1]++;
	}
	for (i = 0; i < n; i++) {
		sf->out_start[i + 1] += sf->out_start[i];
		sf->in_start[i + 1] += sf->in_start[i];
	}
	for (i = 0; i < fl->n_rows; i++) {
		int64_t o = tp_get_int(fl, FLOW_SLICE_OUT, i), in = tp_get_int(fl, FLOW_SLICE_IN, i);

		if (o >= 0 && (uint64_t)o < n)
			sf->out_rows[sf->out_start[o] + fill_out[o]++] = (uint32_t)i;
		if (in >= 0 && (uint64_t)in < n)
			sf->in_rows[sf->in_start[in] + fill_in[in]++] = (uint32_t)i;
	}
	free(fill_out);
	free(fill_in);
	sf->flows_built = true;
	return 0;
fail:
	free(fill_out);
	free(fill_in);
	free(sf->out_start);
	free(sf->in_start);
	free(sf->out_rows);
	free(sf->in_rows);
	sf->out_start = sf->in_start = sf->out_rows = sf->in_rows = NULL;
	return -ENOMEM;
}

enum visit { V_START, V_INCOMING, V_OUTGOING, V_RELATIVE };

struct bfs {
	struct slice_fns *sf;
	uint8_t *known;    /* per slice */
	uint32_t *queue;   /* slice ids */
	uint8_t *qtype;    /* enum visit of each */
	size_t q_head, q_n, q_cap;
	uint32_t *flows;   /* flow rows found, in order */
	size_t n_flows, flows_cap;
	uint32_t *rel;
	size_t n_rel, rel_cap;
};

static int bfs_push(struct bfs *b, uint32_t slice, enum visit type)
{
	if (b->q_n == b->q_cap) {
		size_t cap = b->q_cap;

		if (ops_grow((void **)&b->queue, &cap, b->q_n + 1, sizeof(*b->queue)) < 0)
			return -ENOMEM;
		cap = b->q_cap;
		if (ops_grow((void **)&b->qtype, &cap, b->q_n + 1, sizeof(*b->qtype)) < 0)
			return -ENOMEM;
		b->q_cap = cap;
	}
	b->known[slice] = 1;
	b->queue[b->q_n] = slice;
	b->qtype[b->q_n++] = (uint8_t)type;
	return 0;
}

static int by_flow(struct bfs *b, uint32_t slice, bool outgoing)
{
	const struct slice_fns *sf = b->sf;
	const struct tp_table *fl = &sf->db->flow;
	const uint32_t *start = outgoing ? sf->out_start : sf->in_start;
	const uint32_t *rows = outgoing ? sf->out_rows : sf->in_rows;
	uint32_t k;

	for (k = start[slice]; k < start[slice + 1]; k++) {
		int64_t next = tp_get_int(fl, outgoing ? FLOW_SLICE_IN : FLOW_SLICE_OUT, rows[k]);

		if (ops_grow((void **)&b->flows, &b->flows_cap, b->n_flows + 1, sizeof(*b->flows)) <
		    0)
			return -ENOMEM;
		b->flows[b->n_flows++] = rows[k];
		if (next < 0 || (uint64_t)next >= sf->n_slices || b->known[next])
			continue;
		if (bfs_push(b, (uint32_t)next, outgoing ? V_OUTGOING : V_INCOMING) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int to_relatives(struct bfs *b, uint32_t slice, enum flow_mode mode)
{
	struct tp_table *sl = &b->sf->db->slice;
	size_t i;
	int err;

	b->n_rel = 0;
	if (mode == FLOW_PRECEDING)
		err = ancestors(sl, slice, &b->rel, &b->n_rel, &b->rel_cap);
	else
		err = descendants(sl, slice, &b->rel, &b->n_rel, &b->rel_cap);
	for (i = 0; i < b->n_rel && !err; i++) {
		if (!b->known[b->rel[i]])
			err = bfs_push(b, b->rel[i], V_RELATIVE);
	}
	return err;
}

static int run_flow(void *user, sqlite3_value **argv, struct ops_table *out, char **err)
{
	const struct flow_fn *ff = user;
	struct slice_fns *sf = ff->sf;
	const struct tp_table *fl = &sf->db->flow;
	struct bfs b = {.sf = sf};
	int64_t id;
	int rc = start_id(argv[0], sf->db->slice.n_rows, "invalid slice id %lld", &id, err);
	size_t i;

	if (rc <= 0)
		return rc;
	if (!sf->flows_built && build_flows(sf) < 0)
		return -1;
	b.known = calloc(sf->n_slices ? sf->n_slices : 1, 1);
	rc = b.known ? bfs_push(&b, (uint32_t)id, V_START) : -ENOMEM;
	while (!rc && b.q_head < b.q_n) {
		uint32_t slice = b.queue[b.q_head];
		enum visit type = (enum visit)b.qtype[b.q_head++];

		if (ff->mode != FLOW_DIRECT && type != V_RELATIVE)
			rc = to_relatives(&b, slice, ff->mode);
		/* A slice reached by a flow does not go back along it. */
		if (!rc && ff->mode != FLOW_FOLLOWING && type != V_OUTGOING)
			rc = by_flow(&b, slice, false);
		if (!rc && ff->mode != FLOW_PRECEDING && type != V_INCOMING)
			rc = by_flow(&b, slice, true);
	}
	for (i = 0; !rc && i < b.n_flows; i++) {
		int64_t r = ops_table_append(out);
		uint32_t f = b.flows[i];

		if (r < 0) {
			rc = -ENOMEM;
			break;
		}
		ops_set_int(out, 0, (size_t)r, r);
		ops_set_int_or_null(out, 1, (size_t)r, tp_get_int(fl, FLOW_SLICE_OUT, f));
		ops_set_int_or_null(out, 2, (size_t)r, tp_get_int(fl, FLOW_SLICE_IN, f));
		ops_set_int_or_null(out, 3, (size_t)r, tp_get_int(fl, FLOW_TRACE_ID, f));
		ops_set_int_or_null(out, 4, (size_t)r, tp_get_int(fl, FLOW_ARG_SET_ID, f));
	}
	free(b.known);
	free(b.queue);
	free(b.qtype);
	free(b.flows);
	free(b.rel);
	return rc < 0 ? -1 : 0;
}

/* ---------------------------------------------------------- registration ---- */

static void slice_fns_destroy(void *p)
{
	struct slice_fns *sf = p;

	if (!sf)
		return;
	free(sf->out_start);
	free(sf->in_start);
	free(sf->out_rows);
	free(sf->in_rows);
	free(sf);
}

int ops_slice_fns_register(sqlite3 *conn, struct tp_db *db)
{
	struct slice_fns *sf = calloc(1, sizeof(*sf));
	struct flow_fn *ff = calloc(3, sizeof(*ff));
	const struct ops_tfn fns[] = {
		{"ancestor_slice", k_slice_cols, N_SLICE_COLS, 1, run_ancestor_slice, sf},
		{"descendant_slice", k_slice_cols, N_SLICE_COLS, 1, run_descendant_slice, sf},
		{"experimental_ancestor_stack_profile_callsite", k_callsite_cols, 4, 1,
		 run_ancestor_callsite, sf},
		{"directly_connected_flow", k_flow_cols, 5, 1, run_flow, &ff[0]},
		{"following_flow", k_flow_cols, 5, 1, run_flow, &ff[1]},
		{"preceding_flow", k_flow_cols, 5, 1, run_flow, &ff[2]},
	};
	size_t i;
	int rc;

	if (!sf || !ff) {
		free(sf);
		free(ff);
		return SQLITE_NOMEM;
	}
	sf->db = db;
	for (i = 0; i < 3; i++) {
		ff[i].sf = sf;
		ff[i].mode = (enum flow_mode)i;
	}
	/* The first module owns @sf, the fourth @ff; the others borrow them. */
	rc = ops_tfn_register_owned(conn, &fns[0], slice_fns_destroy);
	for (i = 1; i < sizeof(fns) / sizeof(fns[0]) && rc == SQLITE_OK; i++)
		rc = ops_tfn_register_owned(conn, &fns[i], i == 3 ? free : NULL);
	if (rc != SQLITE_OK && i <= 3)
		free(ff);
	return rc;
}

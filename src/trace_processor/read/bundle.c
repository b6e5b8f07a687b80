// SPDX-License-Identifier: Apache-2.0
/*
 * bundle.c - ftrace bundles as already-sorted streams. The kernel writes
 * each CPU's events in time order, so the tokenizer pushes one sort entry
 * per bundle (its first event's time) instead of one per event, and the
 * parse stage's merge worker opens a cursor per bundle when its entry
 * comes up and merges the open cursors by time (pipe.c). A cursor holds
 * the bundle's FtraceEvents (headers and hot-event fields decoded; sorted
 * by time if the kernel's order was broken) and its compact_sched records
 * (switches and wakings: two more sorted streams), all decoded in one
 * pass when it opens, and yields the earliest of the three. It runs on the
 * worker and writes nothing: what the tables must learn besides the
 * events (stats, a compact_sched intern table) it leaves as notes for the
 * merge worker to pass on in order, and it hands each event back to it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/read/read_int.h"

/* ------------------------------------------------------------ compact ---- */

/* Next value of a packed varint column, 0 past its end (counted by caller). */
static bool next_varint(struct pz_packed *it, uint64_t *out)
{
	if (pz_packed_next_varint(it, out) > 0)
		return true;
	*out = 0;
	return false;
}

static void packed(struct pz_packed *it, const struct pz_field *f)
{
	static const uint8_t empty[1];
	struct pz_field none = {0};

	none.data = empty;
	pz_packed_init(it, f->id && f->wire_type == PZ_WIRE_LEN ? f : &none);
}

/* Records what the parser must hear before the bundle's events, in order. */
static void note(struct tp_bundle_cursor *c, const char *stat, int64_t value)
{
	if (c->n_notes == TP_BUNDLE_MAX_NOTES)
		return;
	c->notes[c->n_notes].stat = stat;
	c->notes[c->n_notes++].value = value;
}

/*
 * Decodes compact_sched into the cursor's record arrays (timestamps made
 * absolute and shifted by the bundle's clock offset). Columns shorter than
 * the timestamp column are an error: the records past them are dropped.
 */
static void decode_compact(struct tp_bundle_cursor *c, const uint8_t *data, size_t len)
{
	struct pz_field f[13];
	struct pz_reader r;
	struct pz_field fl;
	struct pz_packed ts_it, a, b, d, e, g;
	size_t n_comms;
	uint64_t v, w, x, y, z, q;
	int64_t ts;
	bool bad = false;

	if (pz_decode_table(data, len, f, 13) != PZ_OK) {
		note(c, "compact_sched_has_parse_errors", 1);
		return;
	}
	/* The parsing thread interns the table (records hold index + 1). */
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &fl) > 0) {
		if (fl.id != PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__INTERN_TABLE ||
		    fl.wire_type != PZ_WIRE_LEN)
			continue;
		if (tp_array_grow((void **)&c->comm_src, &c->cap_comm_src, c->n_comms + 1,
				  sizeof(*c->comm_src), 64) < 0)
			break;
		c->comm_src[c->n_comms].data = fl.data;
		c->comm_src[c->n_comms++].len = fl.size;
	}
	n_comms = c->n_comms;
	if (n_comms)
		note(c, NULL, 0);
	/* Switches. */
	packed(&ts_it, &f[PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_TIMESTAMP]);
	packed(&a, &f[PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_PREV_STATE]);
	packed(&b, &f[PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_NEXT_PID]);
	packed(&d, &f[PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_NEXT_PRIO]);
	packed(&e, &f[PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_NEXT_COMM_INDEX]);
	ts = 0;
	while (pz_packed_next_varint(&ts_it, &v) > 0) {
		struct tp_compact_switch *s;

		if (!next_varint(&a, &w) || !next_varint(&b, &x) || !next_varint(&d, &y) ||
		    !next_varint(&e, &z)) {
			bad = true;
			break;
		}
		if (tp_array_grow((void **)&c->sw, &c->cap_sw, c->n_sw + 1, sizeof(*c->sw), 64) < 0)
			break;
		ts = tp_ts_add(ts, (int64_t)v);
		s = &c->sw[c->n_sw++];
		s->ts = tp_ts_add(ts, c->offset);
		s->prev_state = (int64_t)w;
		s->next_pid = (int32_t)x;
		s->next_prio = (int32_t)y;
		s->next_comm = z < n_comms ? (uint32_t)z + 1 : 0;
		if (z >= n_comms)
			bad = true;
	}
	/* Wakings. */
	packed(&ts_it, &f[PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__WAKING_TIMESTAMP]);
	packed(&a, &f[PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__WAKING_PID]);
	packed(&b, &f[PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__WAKING_TARGET_CPU]);
	packed(&d, &f[PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__WAKING_PRIO]);
	packed(&e, &f[PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__WAKING_COMM_INDEX]);
	packed(&g, &f[PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__WAKING_COMMON_FLAGS]);
	ts = 0;
	while (pz_packed_next_varint(&ts_it, &v) > 0) {
		struct tp_compact_waking *k;

		if (!next_varint(&a, &w) || !next_varint(&b, &x) || !next_varint(&d, &y) ||
		    !next_varint(&e, &z)) {
			bad = true;
			break;
		}
		next_varint(&g, &q); /* common_flags came later; 0 when absent */
		if (tp_array_grow((void **)&c->wk, &c->cap_wk, c->n_wk + 1, sizeof(*c->wk), 64) < 0)
			break;
		ts = tp_ts_add(ts, (int64_t)v);
		k = &c->wk[c->n_wk++];
		k->ts = tp_ts_add(ts, c->offset);
		k->pid = (int32_t)w;
		k->target_cpu = (int32_t)x;
		k->prio = (int32_t)y;
		k->comm = z < n_comms ? (uint32_t)z + 1 : 0;
		k->common_flags = (uint32_t)q;
		if (z >= n_comms)
			bad = true;
	}
	if (bad)
		note(c, "compact_sched_has_parse_errors", 1);
}

/* ------------------------------------------------------------- events ---- */

/* The timestamp of the FtraceEvent at @data; false if it has none. */
static bool event_ts(const uint8_t *data, size_t len, int64_t *out)
{
	struct pz_reader r;
	struct pz_field f;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id == PB_FTRACE_EVENT__TIMESTAMP && f.wire_type == PZ_WIRE_VARINT) {
			*out = (int64_t)f.value;
			return true;
		}
	}
	return false;
}

static int cmp_event(const void *a, const void *b)
{
	const struct tp_bundle_event *x = a, *y = b;

	if (x->h.ts != y->h.ts)
		return x->h.ts < y->h.ts ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * Offset from the bundle's ftrace clock to boot time (0 for the boot
 * clock): a non-boot ftrace clock comes with one (ftrace, boot) pair per
 * bundle.
 */
static int64_t clock_offset(const struct pz_field *f)
{
	if (f[PB_FTRACE_EVENT_BUNDLE__FTRACE_CLOCK].id &&
	    f[PB_FTRACE_EVENT_BUNDLE__FTRACE_CLOCK].value &&
	    f[PB_FTRACE_EVENT_BUNDLE__FTRACE_TIMESTAMP].id &&
	    f[PB_FTRACE_EVENT_BUNDLE__BOOT_TIMESTAMP].id)
		return tp_ts_sub((int64_t)f[PB_FTRACE_EVENT_BUNDLE__BOOT_TIMESTAMP].value,
				 (int64_t)f[PB_FTRACE_EVENT_BUNDLE__FTRACE_TIMESTAMP].value);
	return 0;
}

int tp_bundle_first_ts(const uint8_t *data, size_t len, uint64_t *out_cpu, int64_t *out_ts,
		       unsigned *out_queues)
{
	struct pz_field f[11], cs[13];
	struct pz_reader r;
	struct pz_field e;
	int64_t best = INT64_MAX, ts = 0, offset;
	bool have_ts = false;
	uint64_t v;
	int k, rc;

	/*
	 * One pass: the bundle's fields (as pz_decode_table() fills them) and
	 * its first event that has a time. The kernel writes a CPU's events in
	 * order: that first one is the earliest.
	 */
	memset(f, 0, sizeof(f));
	pz_reader_init(&r, data, len);
	while ((rc = pz_reader_next_inline(&r, &e)) > 0) {
		if (e.id < 11)
			f[e.id] = e;
		if (!have_ts && e.id == PB_FTRACE_EVENT_BUNDLE__EVENT && e.wire_type == PZ_WIRE_LEN)
			have_ts = event_ts(e.data, e.size, &ts);
	}
	if (rc < 0)
		return -EBADMSG;
	*out_cpu = f[PB_FTRACE_EVENT_BUNDLE__CPU].value;
	offset = clock_offset(f);
	*out_queues = 0;
	if (have_ts) {
		best = tp_ts_add(ts, offset);
		*out_queues |= 1u << TP_Q_FTRACE;
	}
	/* compact_sched columns are deltas from 0: their first value is absolute. */
	if (f[PB_FTRACE_EVENT_BUNDLE__COMPACT_SCHED].id &&
	    pz_decode_table(f[PB_FTRACE_EVENT_BUNDLE__COMPACT_SCHED].data,
			    f[PB_FTRACE_EVENT_BUNDLE__COMPACT_SCHED].size, cs, 13) == PZ_OK) {
		for (k = 0; k < 2; k++) {
			const struct pz_field *c =
				&cs[k ? PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__WAKING_TIMESTAMP
				      : PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__SWITCH_TIMESTAMP];
			struct pz_packed it;

			if (!c->id || c->wire_type != PZ_WIRE_LEN)
				continue;
			pz_packed_init(&it, c);
			if (pz_packed_next_varint(&it, &v) <= 0)
				continue;
			*out_queues |= 1u << (k ? TP_Q_WAKING : TP_Q_SWITCH);
			if (tp_ts_add((int64_t)v, offset) < best)
				best = tp_ts_add((int64_t)v, offset);
		}
	}
	if (best == INT64_MAX)
		return 0;
	*out_ts = best;
	return 1;
}

/*
 * Converts a time of the cursor's machine's boot clock to trace time: the
 * host's is trace time by default; otherwise through the clock graph, the
 * conversion reused while the times stay in the range it holds for.
 */
static int64_t to_trace(struct tp_clock_graph *clocks, struct tp_bundle_cursor *c, int64_t ts)
{
	uint64_t boot = tp_clock_qualify(TP_CLOCK_BOOTTIME, 0, c->machine);

	if (boot == tp_clock_trace_clock(clocks))
		return ts;
	if (c->has_span && ts >= c->span.lo && ts < c->span.hi)
		return tp_ts_add(ts, c->span.shift);
	if (tp_clock_convert_span(clocks, boot, ts, tp_clock_trace_clock(clocks), &c->span) == 0) {
		c->has_span = true;
		return tp_ts_add(ts, c->span.shift);
	}
	c->n_clock_errors++;
	return ts;
}

/* Finds the cursor's next event: the earliest head of its three streams. */
/* The time of @c's next event of @kind: false if it has none left. */
static bool kind_ts(const struct tp_bundle_cursor *c, unsigned kind, int64_t *out_ts)
{
	switch (kind) {
	case TP_Q_SWITCH:
		if (c->i_sw >= c->n_sw)
			return false;
		*out_ts = c->sw[c->i_sw].ts;
		return true;
	case TP_Q_WAKING:
		if (c->i_wk >= c->n_wk)
			return false;
		*out_ts = c->wk[c->i_wk].ts;
		return true;
	default:
		if (c->i_ev >= c->n_ev)
			return false;
		*out_ts = c->ev[c->i_ev].h.ts;
		return true;
	}
}

static void set_head(struct tp_bundle_cursor *c)
{
	int64_t best = INT64_MAX, ts;
	bool any = false;
	unsigned k;

	for (k = 0; k < TP_Q_KINDS; k++) {
		if (!kind_ts(c, k, &ts))
			continue;
		if (!any || ts < best || (ts == best && c->rank[k] < c->rank[c->head_kind])) {
			best = ts;
			c->head_kind = (uint8_t)k;
			any = true;
		}
	}
	c->head_ts = best;
	c->has_head = any;
}

bool tp_bundle_stick(struct tp_bundle_cursor *c, unsigned kind, int64_t rival_ts)
{
	int64_t ts, other;
	unsigned k;

	if (!kind_ts(c, kind, &ts) || ts > rival_ts)
		return false;
	for (k = 0; k < TP_Q_KINDS; k++)
		if (k != kind && kind_ts(c, k, &other) && other < ts)
			return false;
	c->head_kind = (uint8_t)kind;
	c->head_ts = ts;
	c->has_head = true;
	return true;
}

void tp_bundle_unstick(struct tp_bundle_cursor *c)
{
	set_head(c);
}

/* What one pass over a bundle's bytes found besides its events. */
struct bundle_scan {
	struct pz_field f[11];        /* its own fields, as pz_decode_table() fills them */
	uint64_t n_errors;            /* FtraceEventBundle.error entries */
	uint64_t n_no_ts;             /* events without a timestamp (dropped) */
	bool errors_first;            /* the first of those two was an error */
};

/*
 * Reads the bundle's fields and every event's header into c->ev in one
 * pass (times still in the ftrace clock). Return: 0, or -EBADMSG with
 * nothing read if the bundle is malformed.
 */
static int scan(struct tp_bundle_cursor *c, const uint8_t *data, size_t len,
		struct bundle_scan *out)
{
	struct pz_reader r;
	struct pz_field e;
	bool full = false;           /* out of memory: later events are left out */
	int rc;

	memset(out, 0, sizeof(*out));
	pz_reader_init(&r, data, len);
	while ((rc = pz_reader_next_inline(&r, &e)) > 0) {
		struct tp_bundle_event *be;

		if (e.id < 11)
			out->f[e.id] = e;
		if (full)
			continue;
		if (e.id == PB_FTRACE_EVENT_BUNDLE__ERROR) {
			if (!out->n_errors++ && !out->n_no_ts)
				out->errors_first = true;
			continue;
		}
		if (e.id != PB_FTRACE_EVENT_BUNDLE__EVENT || e.wire_type != PZ_WIRE_LEN)
			continue;
		if (tp_array_grow((void **)&c->ev, &c->cap_ev, c->n_ev + 1, sizeof(*c->ev), 64) < 0) {
			full = true;
			continue;
		}
		be = &c->ev[c->n_ev];
		tp_ftrace_header_read(e.data, e.size, &be->h);
		if (!be->h.has_ts) {
			out->n_no_ts++;
			continue;
		}
		tp_ftrace_hot_decode(&be->h, &be->hot);
		be->order = (uint32_t)c->n_ev;
		c->n_ev++;
	}
	if (rc < 0) {
		c->n_ev = 0;
		return -EBADMSG;
	}
	return 0;
}

int tp_bundle_open(struct tp_clock_graph *clocks, struct tp_bundle_cursor *c,
		   const struct tp_event *ev)
{
	struct bundle_scan s;
	bool sorted = true, identity;
	uint64_t boot;
	size_t i;

	c->machine = ev->machine;
	c->cpu = ev->cpu;
	c->gen = ev->aux;
	c->n_ev = c->i_ev = c->n_sw = c->n_wk = c->i_sw = c->i_wk = 0;
	c->n_comms = 0;
	c->n_notes = 0;
	c->n_clock_errors = 0;
	c->has_head = false;
	if (scan(c, ev->data, ev->len, &s) < 0)
		return -EBADMSG;
	c->offset = clock_offset(s.f);
	if (s.f[PB_FTRACE_EVENT_BUNDLE__COMPACT_SCHED].id &&
	    s.f[PB_FTRACE_EVENT_BUNDLE__COMPACT_SCHED].wire_type == PZ_WIRE_LEN)
		decode_compact(c, s.f[PB_FTRACE_EVENT_BUNDLE__COMPACT_SCHED].data,
			       s.f[PB_FTRACE_EVENT_BUNDLE__COMPACT_SCHED].size);
	/* Stats in the order their first cases came in the bundle. */
	if (s.n_errors && s.errors_first)
		note(c, "ftrace_abi_errors", (int64_t)s.n_errors);
	if (s.n_no_ts)
		note(c, "ftrace_event_without_timestamp", (int64_t)s.n_no_ts);
	if (s.n_errors && !s.errors_first)
		note(c, "ftrace_abi_errors", (int64_t)s.n_errors);
	c->has_span = false;
	boot = tp_clock_qualify(TP_CLOCK_BOOTTIME, 0, c->machine);
	identity = tp_clock_trace_clock(clocks) == boot;
	for (i = 0; i < c->n_ev; i++) {
		int64_t ts = tp_ts_add(c->ev[i].h.ts, c->offset);

		c->ev[i].h.ts = identity ? ts : to_trace(clocks, c, ts);
		if (i && c->ev[i].h.ts < c->ev[i - 1].h.ts)
			sorted = false;
	}
	if (!sorted) {
		note(c, "ftrace_bundle_out_of_order", 1);
		sort_n(c->ev, c->n_ev, sizeof(*c->ev), cmp_event);
	}
	for (i = 0; i < c->n_sw; i++)
		c->sw[i].ts = to_trace(clocks, c, c->sw[i].ts);
	for (i = 0; i < c->n_wk; i++)
		c->wk[i].ts = to_trace(clocks, c, c->wk[i].ts);
	if (c->n_clock_errors)
		note(c, "clock_sync_failure_no_path", (int64_t)c->n_clock_errors);
	set_head(c);
	return 0;
}

bool tp_bundle_peek(const struct tp_bundle_cursor *c, int64_t *out_ts)
{
	*out_ts = c->head_ts;
	return c->has_head;
}

enum tp_bundle_item tp_bundle_next(struct tp_bundle_cursor *c, int64_t *parse_ts,
				   const void **out_rec, int64_t *out_ts)
{
	enum tp_bundle_item item;
	int64_t ts = c->head_ts;
	bool late;

	if (!c->has_head)
		return TP_BUNDLE_NONE;
	/*
	 * Tables get rows in time order (SQL bisects their ts columns). An
	 * event earlier than one already parsed (its bundle keyed by a later
	 * first event, compact deltas that wrapped, odd clock snapshots) is
	 * dropped, as Perfetto's sorter drops what comes too late.
	 */
	late = ts < *parse_ts;
	if (!late)
		*parse_ts = ts;
	*out_ts = ts;
	/* The head's kind: set_head()'s pick, or tp_bundle_stick()'s. */
	if (c->head_kind == TP_Q_FTRACE) {
		*out_rec = &c->ev[c->i_ev++];
		item = TP_BUNDLE_FTRACE;
	} else if (c->head_kind == TP_Q_SWITCH) {
		*out_rec = &c->sw[c->i_sw++];
		item = TP_BUNDLE_SWITCH;
	} else {
		*out_rec = &c->wk[c->i_wk++];
		item = TP_BUNDLE_WAKING;
	}
	set_head(c);
	return late ? TP_BUNDLE_LATE : item;
}

void tp_bundle_close(struct tp_bundle_cursor *c)
{
	c->n_ev = c->i_ev = c->n_sw = c->n_wk = c->i_sw = c->i_wk = 0;
	c->has_head = false;
}

void tp_bundle_fini(struct tp_bundle_cursor *c)
{
	free(c->ev);
	free(c->sw);
	free(c->wk);
	free(c->comm_src);
	free(c->comm_ids);
	memset(c, 0, sizeof(*c));
}

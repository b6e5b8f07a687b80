// SPDX-License-Identifier: Apache-2.0
/*
 * atrace.c - atrace lines (trace_marker prints, display drivers' marks):
 * B|pid|name and E|pid slices on the thread's track, C|pid|name|value
 * counters, I|pid|name instants, and the async forms on process-scoped
 * tracks: S|pid|name|cookie and F|pid|name|cookie (one track set per
 * process and slice name), and G|pid|track|name|cookie,
 * H|pid|track|[name|]cookie, N|pid|track|name (one set per process and
 * track name). Within a set, slices with one cookie stay on one track and
 * a track whose slices have all ended is reused for the next cookie, so
 * overlapping slices land on separate tracks. Few sets, few tracks each:
 * linear scans within a set. Called by ftrace.c and ftrace_mark.c.
 */
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "trace_processor/import/ftrace/ftrace_int.h"

/* A client can open this many tracks per set (distinct live cookies). */
#define AA_MAX_SLOTS 4096

enum aa_kind { AA_SLICE, AA_FOR_TRACK };

/* One track of a set: keyed by cookie, or (instants) by when it frees up. */
struct aa_slot {
	bool is_cookie;
	int64_t cookie;
	uint32_t nest;     /* begins minus ends seen for the cookie (S: 0 or 1) */
	int64_t free_ts;   /* instants: the slot is free from this time */
	int64_t track;     /* -1 until created */
	int64_t open_row;  /* S slices: the open slice, or -1 */
	int64_t n_begins;  /* S slices: begins seen on this track */
	int64_t last_begin_ts;
};

struct aa_set {
	uint8_t kind;
	int64_t upid;
	uint32_t name; /* slice name (S/F) or track name (G/H/N) */
	uint32_t group; /* track_group_id of its tracks */
	struct aa_slot *slots;
	uint32_t n, cap;
};

struct tp_atrace_async {
	struct aa_set *sets;
	size_t n, cap;
	struct hmap by_hash; /* hash(kind, upid, name) + probe -> index in sets */
	uint32_t k_upid, k_name, k_idx, k_cookie, k_utid, k_end_utid, k_count, k_last_ts;
};

static uint32_t str(struct tp_import *imp, const char *s)
{
	return tp_db_str(imp->db, s);
}

static struct tp_atrace_async *state(struct tp_import *imp)
{
	struct tp_atrace_async *a = imp->ftrace->atrace_async;

	if (a)
		return a;
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	hmap_init(&a->by_hash);
	a->k_upid = str(imp, "upid");
	a->k_name = str(imp, "name");
	a->k_idx = str(imp, "track_compressor_idx");
	a->k_cookie = str(imp, "cookie");
	a->k_utid = str(imp, "utid");
	a->k_end_utid = str(imp, "end_utid");
	a->k_count = str(imp, "legacy_unnestable_begin_count");
	a->k_last_ts = str(imp, "legacy_unnestable_last_begin_ts");
	imp->ftrace->atrace_async = a;
	return a;
}

static struct aa_set *set_for(struct tp_import *imp, struct tp_atrace_async *a,
			      enum aa_kind kind, int64_t upid, uint32_t name)
{
	uint64_t h = hash_mix64(((uint64_t)kind << 32 | name) ^ hash_mix64((uint64_t)upid)), v;
	struct aa_set *s;
	size_t i;

	for (i = 0; hmap_get(&a->by_hash, h + i, &v); i++) {
		s = &a->sets[v];
		if (s->kind == kind && s->upid == upid && s->name == name)
			return s;
	}
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 16;
		struct aa_set *p = realloc(a->sets, cap * sizeof(*p));

		if (!p)
			return NULL;
		a->sets = p;
		a->cap = cap;
	}
	if (hmap_put(&a->by_hash, h + i, a->n) < 0)
		return NULL;
	s = &a->sets[a->n++];
	memset(s, 0, sizeof(*s));
	s->kind = (uint8_t)kind;
	s->upid = upid;
	s->name = name;
	s->group = tp_track_group_new(imp);
	return s;
}

static struct aa_slot *slot_new(struct aa_set *s)
{
	struct aa_slot *sl;

	if (s->n == s->cap) {
		uint32_t cap = s->cap ? 2 * s->cap : 4;
		struct aa_slot *p;

		if (cap > AA_MAX_SLOTS)
			return NULL;
		p = realloc(s->slots, cap * sizeof(*p));
		if (!p)
			return NULL;
		s->slots = p;
		s->cap = cap;
	}
	sl = &s->slots[s->n++];
	memset(sl, 0, sizeof(*sl));
	sl->track = -1;
	sl->open_row = -1;
	return sl;
}

/* The cookie's own track, else a cookie track with nothing open, else a new one. */
static struct aa_slot *slot_for_cookie(struct aa_set *s, int64_t cookie)
{
	struct aa_slot *sl;
	uint32_t i;

	for (i = 0; i < s->n; i++)
		if (s->slots[i].is_cookie && s->slots[i].cookie == cookie)
			return &s->slots[i];
	for (i = 0; i < s->n; i++) {
		if (s->slots[i].is_cookie && s->slots[i].nest == 0) {
			s->slots[i].cookie = cookie;
			return &s->slots[i];
		}
	}
	sl = slot_new(s);
	if (sl) {
		sl->is_cookie = true;
		sl->cookie = cookie;
	}
	return sl;
}

/* Instants: the first instant track that is free at @ts, else a new one. */
static struct aa_slot *slot_for_instant(struct aa_set *s, int64_t ts)
{
	struct aa_slot *sl;
	uint32_t i;

	for (i = 0; i < s->n; i++)
		if (!s->slots[i].is_cookie && s->slots[i].free_ts <= ts)
			return &s->slots[i];
	sl = slot_new(s);
	return sl;
}

static int64_t slot_track(struct tp_import *imp, struct tp_atrace_async *a, struct aa_set *s,
			  struct aa_slot *sl)
{
	struct tp_table *t = &imp->db->track;
	struct tp_argset dims = {0};
	int64_t row, set;

	if (sl->track >= 0)
		return sl->track;
	row = tp_table_append(t);
	if (row < 0)
		return -1;
	tp_set_str(t, TRACK_NAME, (size_t)row, s->name);
	tp_set_str(t, TRACK_TYPE, (size_t)row,
		   str(imp, s->kind == AA_SLICE ? "atrace_async_slice"
						: "atrace_async_slice_for_track"));
	tp_set_int(t, TRACK_IS_COUNTER, (size_t)row, 0);
	tp_set_int(t, TRACK_UPID, (size_t)row, s->upid);
	if (s->upid >= 0 && (size_t)s->upid < imp->db->process.n_rows)
		tp_set_int(t, TRACK_MACHINE_ID, (size_t)row,
			   tp_col_int(&imp->db->process, PROCESS_MACHINE_ID)[s->upid]);
	/* Perfetto's dimensions are ints, whatever their C type. */
	tp_argset_int(imp, &dims, a->k_upid, s->upid);
	tp_argset_str(imp, &dims, a->k_name, s->name);
	tp_argset_int(imp, &dims, a->k_idx, (int64_t)(sl - s->slots));
	set = tp_argset_commit(imp, &dims);
	tp_argset_fini(&dims);
	if (set != TP_NULL_INT)
		tp_set_int(t, TRACK_DIMENSION_ARG_SET_ID, (size_t)row, set);
	tp_set_int(t, TRACK_TRACK_GROUP_ID, (size_t)row, s->group);
	sl->track = row;
	return row;
}

static void arg_int(struct tp_import *imp, int64_t track, int64_t row, uint32_t key, int64_t v)
{
	struct tp_argset *b = row >= 0 ? tp_slice_args(imp, track, (uint32_t)row) : NULL;

	if (b)
		tp_argset_int(imp, b, key, v);
}

static void arg_uint(struct tp_import *imp, int64_t track, int64_t row, uint32_t key, uint64_t v)
{
	struct tp_argset *b = row >= 0 ? tp_slice_args(imp, track, (uint32_t)row) : NULL;

	if (b)
		tp_argset_uint(imp, b, key, v);
}

/*
 * An S (@begin) or F line of process @tgid: begins or ends slice @name (a
 * string id) on the track its @cookie maps to.
 */
static void async_slice(struct tp_import *imp, uint32_t machine, int64_t ts, bool begin,
			int64_t tgid, uint32_t name, int64_t cookie)
{
	struct tp_atrace_async *a = state(imp);
	int64_t upid = tp_proc_get_process_main(imp, machine, tgid), track, row;
	struct aa_set *s;
	struct aa_slot *sl;

	if (!a || upid < 0 || !(s = set_for(imp, a, AA_SLICE, upid, name)))
		return;
	sl = slot_for_cookie(s, cookie);
	if (!sl)
		return;
	/* Begins saturate: one end frees the track for other cookies. */
	if (begin)
		sl->nest = 1;
	else
		sl->nest = 0;
	track = slot_track(imp, a, s, sl);
	if (track < 0)
		return;
	if (begin) {
		/*
		 * These tracks cannot nest: a begin while a slice is open is
		 * only counted (Android emits repeated begins and expects the
		 * first to stand).
		 */
		sl->n_begins++;
		sl->last_begin_ts = ts;
		if (sl->open_row >= 0)
			return;
		sl->open_row = tp_slice_begin(imp, ts, track, 0, name);
		arg_int(imp, track, sl->open_row, a->k_cookie, cookie);
		return;
	}
	/* An end with nothing open is dropped without a stat, as in Perfetto. */
	row = tp_slice_end_start(imp, ts, track, 0, 0);
	if (row < 0)
		return;
	arg_int(imp, track, row, a->k_count, sl->n_begins);
	arg_int(imp, track, row, a->k_last_ts, sl->last_begin_ts);
	tp_slice_end_done(imp, track, (uint32_t)row);
	sl->open_row = -1;
}

/*
 * A G (begin), H (end) or N (instant) line from thread @tid of process
 * @tgid on the track named @track_name; @name is 0 for H, @cookie unused
 * for N.
 */
static void async_track(struct tp_import *imp, uint32_t machine, int64_t ts, char phase,
			int64_t tid, int64_t tgid, uint32_t track_name, uint32_t name,
			int64_t cookie)
{
	struct tp_atrace_async *a = state(imp);
	int64_t upid = tp_proc_get_process_main(imp, machine, tgid), track, row, utid;
	struct aa_set *s;
	struct aa_slot *sl;

	if (!a || upid < 0 || !(s = set_for(imp, a, AA_FOR_TRACK, upid, track_name)))
		return;
	if (phase == 'N') {
		sl = slot_for_instant(s, ts);
		if (sl)
			sl->free_ts = ts;
	} else {
		sl = slot_for_cookie(s, cookie);
		if (sl && phase == 'G')
			sl->nest++;
		else if (sl && sl->nest > 0)
			sl->nest--;
	}
	track = sl ? slot_track(imp, a, s, sl) : -1;
	utid = tp_proc_get_thread(imp, machine, tid);
	if (track < 0 || utid < 0)
		return;
	switch (phase) {
	case 'N':
		row = tp_slice_scoped(imp, ts, 0, track, 0, name);
		arg_uint(imp, track, row, a->k_utid, (uint64_t)utid);
		return;
	case 'G':
		row = tp_slice_begin(imp, ts, track, 0, name);
		arg_uint(imp, track, row, a->k_utid, (uint64_t)utid);
		return;
	default:
		row = tp_slice_end_start(imp, ts, track, 0, 0);
		if (row < 0)
			return;
		arg_uint(imp, track, row, a->k_end_utid, (uint64_t)utid);
		tp_slice_end_done(imp, track, (uint32_t)row);
		return;
	}
}

/* -------------------------------------------------------------- lines ---- */

/* atrace B/E share the slice stacks of track events (slice.c). */
static void slice_begin(struct tp_import *imp, int64_t ts, int64_t track, const char *name,
			size_t len)
{
	tp_slice_begin(imp, ts, track, 0, tp_str_intern(&imp->db->strings, name, len));
}

/*
 * An E with nothing open is dropped without a stat, as in Perfetto (its
 * misplaced_end_event counts only children cut short by a parent's end).
 */
static void slice_end(struct tp_import *imp, int64_t ts, int64_t track)
{
	tp_slice_end(imp, ts, track, 0, 0);
}

/* Splits the next '|'-separated field of [*p, end). */
static bool next_field(const char **p, const char *end, const char **out, size_t *len)
{
	const char *bar;

	if (*p > end)
		return false;
	bar = memchr(*p, '|', (size_t)(end - *p));
	*out = *p;
	*len = (size_t)((bar ? bar : end) - *p);
	*p = bar ? bar + 1 : end + 1;
	return true;
}

static bool parse_i64(const char *s, size_t len, int64_t *out)
{
	char tmp[32], *e;

	if (len == 0 || len >= sizeof(tmp))
		return false;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	*out = strtoll(tmp, &e, 10);
	return *e == '\0';
}

/*
 * The async forms after "X|pid|": S and F name|cookie; G track|name|cookie;
 * H track|cookie or track|name|cookie; N track|name. Return: false if
 * malformed.
 */
static bool atrace_async(struct tp_import *imp, const struct tp_event *ev, int64_t tid,
			 int64_t pid, char phase, const char *p, const char *end)
{
	struct tp_strings *st = &imp->db->strings;
	const char *a = NULL, *b = NULL, *c = NULL;
	size_t na = 0, nb = 0, nc = 0;
	int64_t cookie = 0;

	next_field(&p, end, &a, &na);
	next_field(&p, end, &b, &nb);
	next_field(&p, end, &c, &nc);
	if (!na)
		return false;
	switch (phase) {
	case 'S':
	case 'F':
		if (!parse_i64(b, nb, &cookie))
			return false;
		async_slice(imp, ev->machine, ev->ts, phase == 'S', pid,
				      tp_str_intern(st, a, na), cookie);
		return true;
	case 'G':
		if (!nb || !parse_i64(c, nc, &cookie))
			return false;
		break;
	case 'H':
		if (!parse_i64(nc ? c : b, nc ? nc : nb, &cookie))
			return false;
		nb = 0;
		break;
	default:
		if (!nb)
			return false;
		break;
	}
	async_track(imp, ev->machine, ev->ts, phase, tid, pid, tp_str_intern(st, a, na),
			      nb ? tp_str_intern(st, b, nb) : 0, cookie);
	return true;
}

/* The writer of a B or I line: in process @tgid if it says (not 0). */
static int64_t atrace_thread(struct tp_import *imp, uint32_t machine, int64_t tid, int64_t tgid)
{
	if (tgid == 0)
		return tp_proc_get_thread(imp, machine, tid);
	return tp_proc_update_thread(imp, machine, tid, tgid);
}

/* Counter names are kept up to this many bytes, with the NUL. */
#define MARK_NAME_BYTES 1024

/*
 * Android's userspace LMK writes the killed pid as counter
 * kill_one_process: an instant mem.lmk on that process's "LMK" track, as
 * the kernel's own LMK events (Perfetto's android_lmk track).
 */
static void lmk_instant(struct tp_import *imp, const struct tp_event *ev, int64_t killed_pid)
{
	int64_t upid = tp_proc_get_process_main(imp, ev->machine, (int64_t)(uint32_t)killed_pid);
	struct tp_dim dim = {"upid", TP_DIM_INT, upid};
	int64_t track;

	if (upid < 0)
		return;
	track = tp_track_dims(imp, "android_lmk", tp_db_str(imp->db, "LMK"), false, ev->machine,
			      &dim, 1, 0);
	if (track < 0)
		return;
	tp_set_int(&imp->db->track, TRACK_UPID, (size_t)track, upid);
	tp_slice_scoped(imp, ev->ts, 0, track, 0, tp_db_str(imp->db, "mem.lmk"));
}

/*
 * trace_marker lines in atrace form: B|pid|name, E|pid, C|pid|name|value,
 * I|pid|name (instant), and the async forms above. Others are left to the
 * ftrace_event table.
 */
void tp_ftrace_atrace(struct tp_import *imp, const struct tp_event *ev, int64_t tid,
		      const char *buf, size_t len)
{
	const char *p = buf, *end, *f;
	size_t n;
	int64_t pid = 0, utid, track;

	while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\0'))
		len--;
	/* Before any pointer arithmetic: a buf that is not bytes has no data. */
	if (len < 1 || (len > 1 && buf[1] != '|'))
		return;
	end = buf + len;
	p = buf + 2;
	switch (buf[0]) {
	case 'B':
		if (!next_field(&p, end, &f, &n) || !parse_i64(f, n, &pid))
			goto bad;
		utid = atrace_thread(imp, ev->machine, tid, pid);
		if (utid < 0)
			return;
		track = tp_track_thread(imp, utid);
		/* "B|pid" and "B|pid|" name their slice as Perfetto does. */
		if (p >= end)
			slice_begin(imp, ev->ts, track, "[empty slice name]", 18);
		else
			slice_begin(imp, ev->ts, track, p, (size_t)(end - p));
		return;
	case 'E':
		/* E|pid: that thread of that process; a bare E: the thread if known. */
		if (next_field(&p, end, &f, &n) && parse_i64(f, n, &pid) && pid != 0)
			utid = tp_proc_update_thread(imp, ev->machine, tid, pid);
		else
			utid = tp_proc_find_thread(imp, ev->machine, tid);
		if (utid < 0)
			return;
		slice_end(imp, ev->ts, tp_track_thread(imp, utid));
		return;
	case 'C': {
		/*
		 * C|tgid|name|value: an integer (a fraction or an empty name
		 * is malformed, as in Perfetto), on the process's counter
		 * track; some names are Android's own (below).
		 */
		const char *name, *val;
		size_t nlen, vlen;
		char cname[MARK_NAME_BYTES];
		int64_t upid, v;

		if (!next_field(&p, end, &f, &n) || !parse_i64(f, n, &pid) ||
		    !next_field(&p, end, &name, &nlen) || !next_field(&p, end, &val, &vlen) ||
		    nlen == 0 || !parse_i64(val, vlen, &v))
			goto bad;
		if (nlen > 14 && !memcmp(name, "battery_stats.", 14)) {
			tp_battery_stats_counter(imp, ev->machine, ev->ts, name, nlen, (double)v);
			return;
		}
		if (nlen == 11 && !memcmp(name, "ScreenState", 11)) {
			/* The global counter the screen_state property feeds too. */
			tp_counter_add(imp, ev->ts,
				       tp_track_dims(imp, "screen_state",
						     tp_db_str(imp->db, "ScreenState"), true,
						     ev->machine, NULL, 0, 0),
				       (double)v);
			return;
		}
		if (nlen == 16 && !memcmp(name, "kill_one_process", 16) && v != 0)
			lmk_instant(imp, ev, v); /* and a counter value too */
		if (nlen >= sizeof(cname))
			nlen = sizeof(cname) - 1;
		memcpy(cname, name, nlen);
		cname[nlen] = '\0';
		upid = tp_proc_get_process_main(imp, ev->machine, pid);
		/* The writing thread, if known (never made): the counter's utid arg. */
		utid = tp_proc_find_thread(imp, ev->machine, tid);
		tp_counter_set_utid(imp,
				    tp_counter_add(imp, ev->ts,
						   tp_track_process_counter(imp, cname, "atrace_counter",
									    upid, "name", cname),
						   (double)v),
				    utid);
		return;
	}
	case 'I': {
		/* A slice of no duration on the thread's track (Perfetto's instant view). */
		const char *name;
		size_t nlen;

		if (!next_field(&p, end, &f, &n) || !parse_i64(f, n, &pid) ||
		    !next_field(&p, end, &name, &nlen) || nlen == 0)
			goto bad;
		utid = atrace_thread(imp, ev->machine, tid, pid);
		if (utid < 0)
			return;
		/* The name is the field after the pid: "I|pid|name|..." drops the rest. */
		tp_slice_scoped(imp, ev->ts, 0, tp_track_thread(imp, utid), 0,
				tp_str_intern(&imp->db->strings, name, nlen));
		return;
	}
	case 'S':
	case 'F':
	case 'G':
	case 'H':
	case 'N':
		if (!next_field(&p, end, &f, &n) || !parse_i64(f, n, &pid) ||
		    !atrace_async(imp, ev, tid, pid, buf[0], p, end))
			goto bad;
		return;
	default:
		return;
	}
bad:
	tp_stat_add(imp, "systrace_parse_failure", -1, ev->machine, 1);
}

void tp_atrace_async_fini(struct tp_import *imp)
{
	struct tp_atrace_async *a = imp->ftrace->atrace_async;
	size_t i;

	if (!a)
		return;
	for (i = 0; i < a->n; i++)
		free(a->sets[i].slots);
	free(a->sets);
	hmap_fini(&a->by_hash);
	free(a);
	imp->ftrace->atrace_async = NULL;
}

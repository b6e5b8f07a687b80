// SPDX-License-Identifier: Apache-2.0
/*
 * heap_profile.c - heapprofd's ProfilePackets as Perfetto imports them.
 * A dump (one or more packets, continued on all but the last) carries per
 * process the cumulative bytes and counts allocated and freed at each
 * callstack; the callstacks are interned on the sequence (InternedData,
 * as linux.perf's) or in the packets themselves (older producers: the
 * strings, mappings, frames and callstacks fields, valid until the dump
 * ends). Each dump becomes one heap_profile row per (process, heap, end
 * of window), and, per callsite, the change since the previous dump of
 * the sequence: a row of allocations (count and size > 0) and a row of
 * frees (< 0); a total that went down is a malformed packet (counted).
 */
#include <stdlib.h>
#include <string.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/common/common.h"
#include "trace_processor/import/profiling/profiling.h"
#include "trace_processor/import/profiling/profiling_int.h"

#define MAX_NAME_BYTES 4096
#define MAX_BLOB_BYTES (1u << 30) /* inline strings kept at once */
#define ART_HEAP "com.android.art" /* reports allocations, never frees */

/* A sample held until its dump ends. */
struct pending {
	uint64_t pid, iid, self_allocated, self_freed, alloc_count, free_count;
	int64_t ts;
	uint32_t heap, machine;
};

/* Cumulative totals of a callsite: allocations (>= 0) and frees (<= 0). */
struct totals {
	int64_t a_count, a_size, f_count, f_size;
};

struct seq_state {
	uint32_t epoch; /* inline interned data of epochs before this one is gone */
	bool has_index;
	uint64_t prev_index;
	struct pending *pending;
	size_t n_pending, cap_pending;
};

struct span {
	size_t off;
	uint32_t len;
};

struct tp_heap_profile {
	struct seq_state *seqs;
	size_t n_seqs, cap_seqs;
	char *blob;
	size_t blob_len, blob_cap;
	struct span *strs;
	size_t n_strs, cap_strs;
	struct totals *totals;
	size_t n_totals, cap_totals;
	uint32_t s_unknown, s_art;
};

void tp_heap_profile_fini(struct tp_profiling *p)
{
	struct tp_heap_profile *h = p->heap;

	if (!h)
		return;
	for (size_t i = 0; i < h->n_seqs; i++)
		free(h->seqs[i].pending);
	free(h->seqs);
	free(h->blob);
	free(h->strs);
	free(h->totals);
	free(h);
	p->heap = NULL;
}

/* Grows *@arr (of @size-byte items) to hold one more than *@n. */
static bool grow(void **arr, size_t *cap, size_t n, size_t size)
{
	size_t c;
	void *a;

	if (n < *cap)
		return true;
	c = *cap ? *cap * 2 : 16;
	a = realloc(*arr, c * size);
	if (!a)
		return false;
	*arr = a;
	*cap = c;
	return true;
}

static struct tp_heap_profile *heap_state(struct tp_import *imp, struct tp_profiling *p)
{
	if (!p->heap) {
		p->heap = calloc(1, sizeof(*p->heap));
		if (p->heap) {
			p->heap->s_unknown = tp_db_str(imp->db, "unknown");
			p->heap->s_art = tp_db_str(imp->db, ART_HEAP);
		}
	}
	return p->heap;
}

/* The index of the state of sequence @seq_id, or -1. */
static int64_t seq_of(struct tp_profiling *p, struct tp_heap_profile *h, uint32_t seq_id)
{
	struct key k = {KEY_HP_SEQ, seq_id, 0, 0, 0};
	uint64_t hh;
	int64_t row = tp_prof_key_find(p, &k, &hh);

	if (row >= 0)
		return row;
	if (!grow((void **)&h->seqs, &h->cap_seqs, h->n_seqs, sizeof(*h->seqs)))
		return -1;
	memset(&h->seqs[h->n_seqs], 0, sizeof(h->seqs[0]));
	row = (int64_t)h->n_seqs++;
	tp_prof_key_put(p, hh, &k, row);
	return row;
}

/* The key prefix of what a ProfilePacket interns in the current epoch. */
static uint64_t scope(const struct tp_heap_profile *h, int64_t seq)
{
	return ((uint64_t)seq << 32) | h->seqs[seq].epoch;
}

static int64_t find(struct tp_profiling *p, uint64_t kind, uint64_t a, uint64_t b, uint64_t c)
{
	struct key k = {kind, a, b, c, 0};
	uint64_t hh;

	return tp_prof_key_find(p, &k, &hh);
}

/* Remembers @row for the key (replacing what an earlier entry said). */
static void remember(struct tp_profiling *p, uint64_t kind, uint64_t a, uint64_t b, uint64_t c,
		     int64_t row)
{
	struct key k = {kind, a, b, c, 0};

	tp_prof_key_set(p, &k, row);
}

/* ------------------------------------------------- inline interning ---- */

/* The bytes of inline string @iid of the epoch (iid 0: ""); false if none. */
static bool string_of(struct tp_profiling *p, struct tp_heap_profile *h, uint64_t sc,
		      uint64_t iid, const char **out, uint32_t *out_len)
{
	int64_t i;

	if (iid == 0) {
		*out = "";
		*out_len = 0;
		return true;
	}
	i = find(p, KEY_HP_STRING, sc, iid, 0);
	if (i < 0)
		return false;
	*out = h->blob + h->strs[i].off;
	*out_len = h->strs[i].len;
	return true;
}

static void add_string(struct tp_profiling *p, struct tp_heap_profile *h, uint64_t sc,
		       const uint8_t *msg, size_t len)
{
	struct pz_field f[3];
	size_t need;

	if (pz_decode_table(msg, len, f, 3) != PZ_OK || !f[PB_INTERNED_STRING__IID].value)
		return;
	need = h->blob_len + f[PB_INTERNED_STRING__STR].size;
	if (need > MAX_BLOB_BYTES)
		return;
	if (need > h->blob_cap) {
		size_t c = h->blob_cap ? h->blob_cap : 4096;
		char *b;

		while (c < need)
			c *= 2;
		b = realloc(h->blob, c);
		if (!b)
			return;
		h->blob = b;
		h->blob_cap = c;
	}
	if (!grow((void **)&h->strs, &h->cap_strs, h->n_strs, sizeof(*h->strs)))
		return;
	if (f[PB_INTERNED_STRING__STR].size)
		memcpy(h->blob + h->blob_len, f[PB_INTERNED_STRING__STR].data,
		       f[PB_INTERNED_STRING__STR].size);
	h->strs[h->n_strs].off = h->blob_len;
	h->strs[h->n_strs].len = (uint32_t)f[PB_INTERNED_STRING__STR].size;
	h->blob_len = need;
	remember(p, KEY_HP_STRING, sc, f[PB_INTERNED_STRING__IID].value, 0, (int64_t)h->n_strs++);
}

/* An inline Mapping: shared by every equal mapping, as Perfetto's. */
static void add_mapping(struct tp_import *imp, struct tp_profiling *p, struct tp_heap_profile *h,
			uint64_t sc, const uint8_t *msg, size_t len, uint32_t machine)
{
	struct pz_reader r;
	struct pz_field f;
	uint64_t v[5] = {0}, iid = 0, bid = 0;
	char name[MAX_NAME_BYTES];
	size_t name_len = 0;
	const char *s;
	uint32_t sl;
	bool path_ok = true;
	int64_t row;

	pz_reader_init(&r, msg, len);
	while (pz_reader_next(&r, &f) > 0) {
		switch (f.id) {
		case PB_MAPPING__IID: iid = f.value; break;
		case PB_MAPPING__BUILD_ID: bid = f.value; break;
		case PB_MAPPING__EXACT_OFFSET: v[0] = f.value; break;
		case PB_MAPPING__START_OFFSET: v[1] = f.value; break;
		case PB_MAPPING__START: v[2] = f.value; break;
		case PB_MAPPING__END: v[3] = f.value; break;
		case PB_MAPPING__LOAD_BIAS: v[4] = f.value; break;
		default: break;
		}
	}
	if (!string_of(p, h, sc, bid, &s, &sl)) {
		tp_stat_add(imp, "stackprofile_invalid_string_id", -1, machine, 1);
		return;
	}
	{
		uint32_t build_id = tp_prof_build_id_hex(imp, (const uint8_t *)s, sl);

		/* Path components, packed or not, each with a '/' before it; an
		 * unknown one ends the path (counted). */
		pz_reader_init(&r, msg, len);
		while (path_ok && pz_reader_next(&r, &f) > 0) {
			struct pz_varints it;
			uint64_t sid;

			if (f.id != PB_MAPPING__PATH_STRING_IDS)
				continue;
			pz_varints_init(&it, &f);
			while (pz_varints_next(&it, &sid)) {
				if (!string_of(p, h, sc, sid, &s, &sl)) {
					tp_stat_add(imp, "stackprofile_invalid_string_id", -1, machine,
						    1);
					path_ok = false;
					break;
				}
				if (name_len + 1 + sl <= sizeof(name)) {
					name[name_len++] = '/';
					memcpy(name + name_len, s, sl);
					name_len += sl;
				}
			}
		}
		if (name_len >= 2 && name[0] == '/' && name[1] == '/') {
			memmove(name, name + 1, name_len - 1);
			name_len--;
		}
		row = tp_prof_shared_mapping(imp, p, build_id,
					     tp_str_intern(&imp->db->strings, name, name_len), v);
	}
	if (row >= 0)
		remember(p, KEY_HP_MAPPING, sc, iid, 0, row);
}

static void add_frame(struct tp_import *imp, struct tp_profiling *p, struct tp_heap_profile *h,
		      uint64_t sc, const uint8_t *msg, size_t len, uint32_t machine)
{
	struct pz_field f[5];
	const char *s;
	uint32_t sl;
	int64_t mapping, row;

	if (pz_decode_table(msg, len, f, 5) != PZ_OK)
		return;
	mapping = find(p, KEY_HP_MAPPING, sc, f[PB_FRAME__MAPPING_ID].value, 0);
	if (mapping < 0) {
		tp_stat_add(imp, "stackprofile_invalid_mapping_id", -1, machine, 1);
		return;
	}
	if (!string_of(p, h, sc, f[PB_FRAME__FUNCTION_NAME_ID].value, &s, &sl)) {
		tp_stat_add(imp, "stackprofile_invalid_string_id", -1, machine, 1);
		return;
	}
	row = tp_prof_frame_row(imp, p, mapping, f[PB_FRAME__REL_PC].value,
				tp_str_intern(&imp->db->strings, s, sl));
	if (row >= 0)
		remember(p, KEY_HP_FRAME, sc, f[PB_FRAME__IID].value, 0, row);
}

static void add_callstack(struct tp_import *imp, struct tp_profiling *p, uint64_t sc,
			  const uint8_t *msg, size_t len, uint32_t machine)
{
	struct pz_reader r;
	struct pz_field f;
	uint64_t iid = 0;
	int64_t parent = -1;
	uint32_t depth = 0;

	pz_reader_init(&r, msg, len);
	while (pz_reader_next(&r, &f) > 0) {
		struct pz_varints it;
		uint64_t fid;

		if (f.id == PB_CALLSTACK__IID) {
			iid = f.value;
			continue;
		}
		if (f.id != PB_CALLSTACK__FRAME_IDS)
			continue;
		pz_varints_init(&it, &f);
		while (pz_varints_next(&it, &fid)) {
			int64_t frame = find(p, KEY_HP_FRAME, sc, fid, 0);

			if (frame < 0) {
				tp_stat_add(imp, "stackprofile_invalid_frame_id", -1, machine, 1);
				return;
			}
			parent = tp_prof_callsite(imp, p, parent, frame, depth++);
			if (parent < 0)
				return;
		}
	}
	if (parent < 0) {
		tp_stat_add(imp, "stackprofile_empty_callstack", -1, machine, 1);
		return;
	}
	remember(p, KEY_HP_CALLSTACK, sc, iid, 0, parent);
}

/* ------------------------------------------------------- allocations ---- */

static int64_t new_totals(struct tp_heap_profile *h)
{
	if (!grow((void **)&h->totals, &h->cap_totals, h->n_totals, sizeof(*h->totals)))
		return -1;
	memset(&h->totals[h->n_totals], 0, sizeof(h->totals[0]));
	return (int64_t)h->n_totals++;
}

static void alloc_row(struct tp_import *imp, int64_t ts, int64_t upid, uint32_t heap,
		      int64_t callsite, int64_t count, int64_t size)
{
	struct tp_table *t = &imp->db->heap_profile_allocation;
	int64_t row = tp_table_append(t);

	if (row < 0)
		return;
	tp_set_int(t, HPA_TS, (size_t)row, ts);
	tp_set_int(t, HPA_UPID, (size_t)row, upid);
	tp_set_str(t, HPA_HEAP_NAME, (size_t)row, heap);
	tp_set_int(t, HPA_CALLSITE_ID, (size_t)row, callsite);
	tp_set_int(t, HPA_COUNT, (size_t)row, count);
	tp_set_int(t, HPA_SIZE, (size_t)row, size);
	tp_bounds_add(imp->db, ts); /* the allocations bound the trace, as Perfetto's */
}

/*
 * One sample of a finished dump: the change of its callsite's totals since
 * the sequence's previous dump. A callstack id that now resolves to a
 * callsite it did not before continues from that callsite's totals.
 */
static void commit(struct tp_import *imp, struct tp_profiling *p, struct tp_heap_profile *h,
		   int64_t seq, uint32_t gen, const struct pending *a)
{
	int64_t upid = tp_proc_get_process_main(imp, a->machine, (int64_t)a->pid);
	int64_t cs, prev, corr;
	struct totals now, d;
	uint64_t hh;
	struct key seen;

	if (upid < 0)
		return;
	cs = find(p, KEY_HP_CALLSTACK, scope(h, seq), a->iid, 0);
	if (cs < 0) {
		if (gen == UINT32_MAX) {
			tp_stat_add(imp, "stackprofile_invalid_callstack_id", -1, a->machine, 1);
			return;
		}
		cs = tp_prof_callstack(imp, p, gen, upid, a->iid, a->machine);
		if (cs < 0)
			return;
	}
	prev = find(p, KEY_HP_PREV, (uint64_t)seq, (uint64_t)upid, (uint64_t)cs);
	if (prev < 0) {
		prev = new_totals(h);
		if (prev < 0)
			return;
		remember(p, KEY_HP_PREV, (uint64_t)seq, (uint64_t)upid, (uint64_t)cs, prev);
	}
	seen = (struct key){KEY_HP_SEEN, ((uint64_t)seq << 32) | (uint64_t)upid, a->iid,
			    ((uint64_t)a->heap << 32) | (uint64_t)cs, 0};
	if (tp_prof_key_find(p, &seen, &hh) < 0) {
		tp_prof_key_put(p, hh, &seen, 0);
		corr = find(p, KEY_HP_CORR, (uint64_t)seq, a->iid, 0);
		if (corr < 0) {
			corr = new_totals(h);
			if (corr < 0)
				return;
			remember(p, KEY_HP_CORR, (uint64_t)seq, a->iid, 0, corr);
		}
		h->totals[corr] = h->totals[prev];
	}
	corr = find(p, KEY_HP_CORR, (uint64_t)seq, a->iid, 0);

	now.a_count = (int64_t)a->alloc_count;
	now.a_size = (int64_t)a->self_allocated;
	now.f_count = -(int64_t)a->free_count;
	now.f_size = -(int64_t)a->self_freed;
	if (corr >= 0) {
		now.a_count += h->totals[corr].a_count;
		now.a_size += h->totals[corr].a_size;
		now.f_count += h->totals[corr].f_count;
		now.f_size += h->totals[corr].f_size;
	}
	d.a_count = now.a_count - h->totals[prev].a_count;
	d.a_size = now.a_size - h->totals[prev].a_size;
	d.f_count = now.f_count - h->totals[prev].f_count;
	d.f_size = now.f_size - h->totals[prev].f_size;
	if (d.a_count < 0 || d.a_size < 0 || d.f_count > 0 || d.f_size > 0) {
		tp_stat_add(imp, "heapprofd_malformed_packet", upid, a->machine, 1);
		return;
	}
	if (d.a_count || d.a_size)
		alloc_row(imp, a->ts, upid, a->heap, cs, d.a_count, d.a_size);
	if (a->heap != h->s_art && (d.f_count || d.f_size))
		alloc_row(imp, a->ts, upid, a->heap, cs, d.f_count, d.f_size);
	h->totals[prev] = now;
}

/* ------------------------------------------------------------ dumps ---- */

static bool to_trace(struct tp_import *imp, uint32_t seq_id, uint32_t machine, uint64_t ts,
		     int64_t *out)
{
	uint64_t clock = tp_clock_qualify(PBE_BUILTIN_CLOCK__BUILTIN_CLOCK_MONOTONIC_COARSE, seq_id,
					  machine);

	return tp_to_trace_time(imp, clock, machine, (int64_t)ts, true, false, out) == 0;
}

/* One ProcessHeapSamples: its heap_profile row, stats and samples. */
static void process_dump(struct tp_import *imp, struct tp_profiling *p, struct tp_heap_profile *h,
			 int64_t seq, const struct tp_event *ev, uint32_t seq_id,
			 const uint8_t *data, size_t len)
{
	struct pz_field f[16], st[7];
	struct pz_reader r;
	struct pz_field sf;
	int64_t end, start, upid, pid;
	uint32_t heap = 0, alloc_heap, m = ev->machine;
	bool has_heap, trust_max_count;
	struct seq_state *s = &h->seqs[seq];

	if (pz_decode_table(data, len, f, 16) != PZ_OK)
		return;
	if (!to_trace(imp, seq_id, m, f[PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__TIMESTAMP].value,
		      &end))
		return;
	start = end;
	if (f[PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__START_TIMESTAMP].id &&
	    !to_trace(imp, seq_id, m,
		      f[PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__START_TIMESTAMP].value, &start))
		start = end;
	pid = (int64_t)(uint32_t)f[PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__PID].value;
	tp_stat_set(imp, "heapprofd_last_profile_timestamp", pid, m, ev->ts);
	has_heap = f[PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__HEAP_NAME].size != 0;
	if (has_heap)
		heap = tp_str_intern(&imp->db->strings,
				     (const char *)f[PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__HEAP_NAME].data,
				     f[PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__HEAP_NAME].size);
	upid = tp_proc_get_process_main(imp, m, pid);
	if (upid >= 0 &&
	    find(p, KEY_HP_DUMP, (uint64_t)upid, (uint64_t)end, has_heap ? heap + 1ull : 0) < 0) {
		struct tp_table *t = &imp->db->heap_profile;
		int64_t row = tp_table_append(t);

		if (row >= 0) {
			tp_set_int(t, HP_TS, (size_t)row, start);
			tp_set_int(t, HP_TS_END, (size_t)row, end);
			tp_set_int(t, HP_DUR, (size_t)row, end - start);
			tp_set_int(t, HP_UPID, (size_t)row, upid);
			if (has_heap)
				tp_set_str(t, HP_HEAP_NAME, (size_t)row, heap);
			remember(p, KEY_HP_DUMP, (uint64_t)upid, (uint64_t)end,
				 has_heap ? heap + 1ull : 0, row);
		}
	}
	if (f[PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__DISCONNECTED].value)
		tp_stat_add(imp, "heapprofd_client_disconnected", pid, m, 1);
	if (f[PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__BUFFER_CORRUPTED].value)
		tp_stat_add(imp, "heapprofd_buffer_corrupted", pid, m, 1);
	if (f[PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__BUFFER_OVERRAN].value ||
	    f[PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__CLIENT_ERROR].value ==
		    PBE_PROFILE_PACKET_PROCESS_HEAP_SAMPLES_CLIENT_ERROR__CLIENT_ERROR_HIT_TIMEOUT)
		tp_stat_add(imp, "heapprofd_buffer_overran", pid, m, 1);
	if (f[PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__CLIENT_ERROR].value)
		tp_stat_set(imp, "heapprofd_client_error", pid, m,
			    (int64_t)f[PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__CLIENT_ERROR].value);
	if (f[PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__REJECTED_CONCURRENT].value)
		tp_stat_add(imp, "heapprofd_rejected_concurrent", pid, m, 1);
	if (f[PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__HIT_GUARDRAIL].value)
		tp_stat_add(imp, "heapprofd_hit_guardrail", pid, m, 1);
	if (f[PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__ORIG_SAMPLING_INTERVAL_BYTES].value)
		tp_stat_set(
			imp, "heapprofd_sampling_interval_adjusted", pid, m,
			(int64_t)f[PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__SAMPLING_INTERVAL_BYTES].value -
				(int64_t)f[PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__ORIG_SAMPLING_INTERVAL_BYTES]
					.value);
	memset(st, 0, sizeof(st));
	if (f[PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__STATS].wire_type == PZ_WIRE_LEN &&
	    pz_decode_table(f[PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__STATS].data,
			    f[PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__STATS].size, st, 7) != PZ_OK)
		memset(st, 0, sizeof(st));
	tp_stat_add(imp, "heapprofd_unwind_time_us", pid, m,
		    (int64_t)st[PB_PROFILE_PACKET_PROCESS_STATS__TOTAL_UNWINDING_TIME_US].value);
	tp_stat_add(imp, "heapprofd_unwind_samples", pid, m,
		    (int64_t)st[PB_PROFILE_PACKET_PROCESS_STATS__HEAP_SAMPLES].value);
	tp_stat_add(imp, "heapprofd_client_spinlock_blocked", pid, m,
		    (int64_t)st[PB_PROFILE_PACKET_PROCESS_STATS__CLIENT_SPINLOCK_BLOCKED_US].value);

	/* A fixed producer sets orig_sampling_interval_bytes: only then is
	 * self_max_count to be trusted. */
	trust_max_count = f[PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__ORIG_SAMPLING_INTERVAL_BYTES].value > 0;
	alloc_heap = has_heap ? heap : h->s_unknown;
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &sf) > 0) {
		struct pz_field x[10];
		struct pending *a;

		if (sf.id != PB_PROFILE_PACKET_PROCESS_HEAP_SAMPLES__SAMPLES ||
		    sf.wire_type != PZ_WIRE_LEN)
			continue;
		if (pz_decode_table(sf.data, sf.size, x, 10) != PZ_OK)
			continue;
		if (!grow((void **)&s->pending, &s->cap_pending, s->n_pending, sizeof(*s->pending)))
			return;
		a = &s->pending[s->n_pending++];
		memset(a, 0, sizeof(*a));
		a->pid = (uint64_t)pid;
		a->heap = alloc_heap;
		a->ts = end;
		a->machine = m;
		a->iid = x[PB_PROFILE_PACKET_HEAP_SAMPLE__CALLSTACK_ID].value;
		if (x[PB_PROFILE_PACKET_HEAP_SAMPLE__SELF_MAX].id) {
			a->self_allocated = x[PB_PROFILE_PACKET_HEAP_SAMPLE__SELF_MAX].value;
			if (trust_max_count)
				a->alloc_count = x[PB_PROFILE_PACKET_HEAP_SAMPLE__SELF_MAX_COUNT].value;
		} else {
			a->self_allocated = x[PB_PROFILE_PACKET_HEAP_SAMPLE__SELF_ALLOCATED].value;
			a->self_freed = x[PB_PROFILE_PACKET_HEAP_SAMPLE__SELF_FREED].value;
			a->alloc_count = x[PB_PROFILE_PACKET_HEAP_SAMPLE__ALLOC_COUNT].value;
			a->free_count = x[PB_PROFILE_PACKET_HEAP_SAMPLE__FREE_COUNT].value;
		}
	}
}

void tp_profile_packet(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
		       size_t len)
{
	struct tp_profiling *p = tp_prof_state(imp);
	struct tp_heap_profile *h = p ? heap_state(imp, p) : NULL;
	uint32_t seq_id, gen, m = ev->machine;
	struct pz_field top[8];
	struct seq_state *s;
	int64_t seq;
	uint64_t sc, index;
	static const uint32_t order[] = {PB_PROFILE_PACKET__STRINGS, PB_PROFILE_PACKET__MAPPINGS,
					 PB_PROFILE_PACKET__FRAMES, PB_PROFILE_PACKET__CALLSTACKS,
					 PB_PROFILE_PACKET__PROCESS_DUMPS};

	if (!h || pz_decode_table(data, len, top, 8) != PZ_OK)
		return;
	seq_id = tp_seq_id(imp, ev->seq_idx);
	seq = seq_of(p, h, seq_id);
	if (seq < 0)
		return;
	s = &h->seqs[seq];
	gen = ev->aux ? ev->aux - 1 : UINT32_MAX;

	/* heapprofd numbers its packets from 0: a gap is a lost packet. */
	index = top[PB_PROFILE_PACKET__INDEX].value;
	if ((!s->has_index && index != 0) || (s->has_index && s->prev_index + 1 != index))
		tp_stat_add(imp, "heapprofd_missing_packet", -1, m, 1);
	s->has_index = true;
	s->prev_index = index;

	/* What the packet interns, kind by kind, then its dumps. */
	sc = scope(h, seq);
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		struct pz_reader r;
		struct pz_field f;

		pz_reader_init(&r, data, len);
		while (pz_reader_next(&r, &f) > 0) {
			if (f.id != order[i] || f.wire_type != PZ_WIRE_LEN)
				continue;
			switch (f.id) {
			case PB_PROFILE_PACKET__STRINGS: add_string(p, h, sc, f.data, f.size); break;
			case PB_PROFILE_PACKET__MAPPINGS:
				add_mapping(imp, p, h, sc, f.data, f.size, m);
				break;
			case PB_PROFILE_PACKET__FRAMES:
				add_frame(imp, p, h, sc, f.data, f.size, m);
				break;
			case PB_PROFILE_PACKET__CALLSTACKS:
				add_callstack(imp, p, sc, f.data, f.size, m);
				break;
			default:
				process_dump(imp, p, h, seq, ev, seq_id, f.data, f.size);
				s = &h->seqs[seq];
				break;
			}
		}
	}
	if (top[PB_PROFILE_PACKET__CONTINUED].value)
		return;
	/* The dump is whole: its samples become rows, what it interned goes. */
	for (size_t i = 0; i < s->n_pending; i++)
		commit(imp, p, h, seq, gen, &s->pending[i]);
	s->n_pending = 0;
	s->epoch++;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * pprof.c - heap dumps as pprof profiles (perftools.profiles.Profile), as
 * Perfetto's traceconv makes them: a function per distinct (name,
 * system name) of the frames (the name demangled or deobfuscated, the
 * system name as recorded), a location per (mapping, function), samples
 * per callsite with their locations leaf first; the sample types by heap
 * (libc.malloc: total and unreleased malloc count and size). Each profile
 * holds only the locations, functions, mappings and strings its samples
 * reach; ids are the row or intern index + 1, string 0 is "".
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/hmap.h"
#include "trace_processor/convert/convert_int.h"
#include "trace_processor/trace_processor.h"

/* Profile and its messages' field numbers (profile.proto). */
enum {
	P_SAMPLE_TYPE = 1, P_SAMPLE = 2, P_MAPPING = 3, P_LOCATION = 4, P_FUNCTION = 5,
	P_STRING_TABLE = 6,
	VT_TYPE = 1, VT_UNIT = 2,
	S_LOCATION_ID = 1, S_VALUE = 2,
	M_ID = 1, M_MEMORY_START = 2, M_MEMORY_LIMIT = 3, M_FILE_OFFSET = 4, M_FILENAME = 5,
	M_BUILD_ID = 6,
	L_ID = 1, L_MAPPING_ID = 2, L_LINE = 4,
	LN_FUNCTION_ID = 1,
	F_ID = 1, F_NAME = 2, F_SYSTEM_NAME = 3,
};

#define MAX_DEPTH 65536 /* a cycle in the callsites stops here */

struct str_ref {
	size_t off;
	uint32_t len;
};

struct pprof_stacks {
	/* Strings interned by content: index -> bytes in blob. */
	struct buf blob;
	struct str_ref *strs;
	size_t n_strs, cap_strs;
	struct hmap str_index; /* hash (probing) -> string index */
	/* Functions: (name, system name) string pairs. */
	uint32_t (*funcs)[2];
	size_t n_funcs, cap_funcs;
	struct hmap func_index; /* name << 32 | system name -> function */
	/* Locations: (mapping row, function). */
	struct {
		int64_t mapping;
		uint32_t func;
	} *locs;
	size_t n_locs, cap_locs;
	struct hmap loc_index; /* mapping << 32 | function -> location */
	/* Per frame row: its location (or UINT32_MAX); per callsite row:
	 * parent (-1 for a root) and frame. */
	uint32_t *frame_loc;
	size_t n_frames;
	int64_t *cs_parent, *cs_frame;
	size_t n_cs;
	/* Mappings by row. */
	struct {
		int64_t start, end, offset;
		uint32_t name, build_id;
		bool valid;
	} *maps;
	size_t n_maps;
};

static bool grow(void **p, size_t *cap, size_t n, size_t size)
{
	size_t c;
	void *q;

	if (n < *cap)
		return true;
	c = *cap ? *cap * 2 : 64;
	q = realloc(*p, c * size);
	if (!q)
		return false;
	*p = q;
	*cap = c;
	return true;
}

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h;
}

/* The index of string @s (@n bytes), interned; UINT32_MAX on OOM. */
static uint32_t intern(struct pprof_stacks *s, const char *str, size_t n)
{
	uint64_t h = hash_bytes(str, n), v;

	while (hmap_get(&s->str_index, h, &v)) {
		const struct str_ref *r = &s->strs[v];

		if (r->len == n && memcmp(s->blob.data + r->off, str, n) == 0)
			return (uint32_t)v;
		h++;
	}
	if (!grow((void **)&s->strs, &s->cap_strs, s->n_strs, sizeof(*s->strs)) ||
	    buf_append(&s->blob, str, n) < 0 ||
	    hmap_put(&s->str_index, h, s->n_strs) < 0)
		return UINT32_MAX;
	s->strs[s->n_strs].off = s->blob.len - n;
	s->strs[s->n_strs].len = (uint32_t)n;
	return (uint32_t)s->n_strs++;
}

static uint32_t intern_col(struct pprof_stacks *s, sqlite3_stmt *st, int col)
{
	const char *t = (const char *)sqlite3_column_text(st, col);

	return intern(s, t ? t : "", t ? (size_t)sqlite3_column_bytes(st, col) : 0);
}

static uint32_t func_of(struct pprof_stacks *s, uint32_t name, uint32_t sys)
{
	uint64_t k = (uint64_t)name << 32 | sys, v;

	if (hmap_get(&s->func_index, k, &v))
		return (uint32_t)v;
	if (!grow((void **)&s->funcs, &s->cap_funcs, s->n_funcs, sizeof(*s->funcs)) ||
	    hmap_put(&s->func_index, k, s->n_funcs) < 0)
		return UINT32_MAX;
	s->funcs[s->n_funcs][0] = name;
	s->funcs[s->n_funcs][1] = sys;
	return (uint32_t)s->n_funcs++;
}

static uint32_t loc_of(struct pprof_stacks *s, int64_t mapping, uint32_t func)
{
	uint64_t k = (uint64_t)mapping << 32 | func, v;

	if (hmap_get(&s->loc_index, k, &v))
		return (uint32_t)v;
	if (!grow((void **)&s->locs, &s->cap_locs, s->n_locs, sizeof(*s->locs)) ||
	    hmap_put(&s->loc_index, k, s->n_locs) < 0)
		return UINT32_MAX;
	s->locs[s->n_locs].mapping = mapping;
	s->locs[s->n_locs].func = func;
	return (uint32_t)s->n_locs++;
}

void pprof_stacks_free(struct pprof_stacks *s)
{
	if (!s)
		return;
	buf_fini(&s->blob);
	free(s->strs);
	hmap_fini(&s->str_index);
	free(s->funcs);
	hmap_fini(&s->func_index);
	free(s->locs);
	hmap_fini(&s->loc_index);
	free(s->frame_loc);
	free(s->cs_parent);
	free(s->cs_frame);
	free(s->maps);
	free(s);
}

/* The largest id of @table plus one (0 if empty), or -1. */
static int64_t n_rows(struct tp *tp, const char *sql)
{
	sqlite3_stmt *st = NULL;
	const char *tail;
	int64_t n = -1;

	if (tp_prepare(tp, sql, &st, &tail) == SQLITE_OK && st && sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_type(st, 0) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, 0) + 1;
	sqlite3_finalize(st);
	return n;
}

int pprof_stacks_load(struct tp *tp, struct pprof_stacks **out)
{
	struct pprof_stacks *s = calloc(1, sizeof(*s));
	sqlite3_stmt *st = NULL;
	const char *tail;
	int64_t nf, nc, nm;
	int rc = -EIO;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	buf_init(&s->blob);
	hmap_init(&s->str_index);
	hmap_init(&s->func_index);
	hmap_init(&s->loc_index);
	if (intern(s, "", 0) != 0)
		goto fail;
	nf = n_rows(tp, "SELECT max(id) FROM stack_profile_frame");
	nc = n_rows(tp, "SELECT max(id) FROM stack_profile_callsite");
	nm = n_rows(tp, "SELECT max(id) FROM stack_profile_mapping");
	if (nf < 0 || nc < 0 || nm < 0)
		goto fail;
	rc = -ENOMEM;
	s->n_frames = (size_t)nf;
	s->n_cs = (size_t)nc;
	s->n_maps = (size_t)nm;
	s->frame_loc = malloc((s->n_frames + 1) * sizeof(*s->frame_loc));
	s->cs_parent = malloc((s->n_cs + 1) * sizeof(*s->cs_parent));
	s->cs_frame = malloc((s->n_cs + 1) * sizeof(*s->cs_frame));
	s->maps = calloc(s->n_maps + 1, sizeof(*s->maps));
	if (!s->frame_loc || !s->cs_parent || !s->cs_frame || !s->maps)
		goto fail;
	for (size_t i = 0; i < s->n_frames; i++)
		s->frame_loc[i] = UINT32_MAX;
	for (size_t i = 0; i < s->n_cs; i++)
		s->cs_frame[i] = -1;

	rc = -EIO;
	if (tp_prepare(tp,
		       "SELECT id, mapping, name, coalesce(deobfuscated_name, demangle(name), name) "
		       "FROM stack_profile_frame",
		       &st, &tail) != SQLITE_OK || !st)
		goto fail;
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		uint32_t sys = intern_col(s, st, 2), name = intern_col(s, st, 3), fn;

		if (id < 0 || (size_t)id >= s->n_frames)
			continue;
		fn = sys == UINT32_MAX || name == UINT32_MAX ? UINT32_MAX : func_of(s, name, sys);
		if (fn == UINT32_MAX) {
			rc = -ENOMEM;
			goto fail;
		}
		s->frame_loc[id] = loc_of(s, sqlite3_column_int64(st, 1), fn);
	}
	sqlite3_finalize(st);
	st = NULL;

	if (tp_prepare(tp, "SELECT id, parent_id, frame_id FROM stack_profile_callsite", &st,
		       &tail) != SQLITE_OK || !st)
		goto fail;
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);

		if (id < 0 || (size_t)id >= s->n_cs)
			continue;
		s->cs_parent[id] = sqlite3_column_type(st, 1) == SQLITE_NULL
					   ? -1
					   : sqlite3_column_int64(st, 1);
		s->cs_frame[id] = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	st = NULL;

	if (tp_prepare(tp, "SELECT id, exact_offset, start, end, name, build_id "
			   "FROM stack_profile_mapping",
		       &st, &tail) != SQLITE_OK || !st)
		goto fail;
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);

		if (id < 0 || (size_t)id >= s->n_maps)
			continue;
		s->maps[id].offset = sqlite3_column_int64(st, 1);
		s->maps[id].start = sqlite3_column_int64(st, 2);
		s->maps[id].end = sqlite3_column_int64(st, 3);
		s->maps[id].name = intern_col(s, st, 4);
		s->maps[id].build_id = intern_col(s, st, 5);
		s->maps[id].valid = true;
	}
	sqlite3_finalize(st);
	*out = s;
	return 0;
fail:
	sqlite3_finalize(st);
	pprof_stacks_free(s);
	return rc;
}

/* ------------------------------------------------------------ encoding ---- */

static void put_varint(struct buf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			tmp[n] |= 0x80;
		n++;
	} while (v);
	buf_append(b, tmp, n);
}

static void put_uint(struct buf *b, uint32_t id, uint64_t v)
{
	put_varint(b, (uint64_t)id << 3);
	put_varint(b, v);
}

static void put_bytes(struct buf *b, uint32_t id, const void *data, size_t len)
{
	put_varint(b, (uint64_t)id << 3 | 2);
	put_varint(b, len);
	buf_append(b, data, len);
}

/* The strings of one profile: global string index -> its string_table index. */
struct strtab {
	struct hmap index;
	uint32_t *order;
	size_t n, cap;
};

static int64_t str_id(struct strtab *t, uint32_t global)
{
	uint64_t v;

	if (hmap_get(&t->index, global, &v))
		return (int64_t)v;
	if (!grow((void **)&t->order, &t->cap, t->n, sizeof(*t->order)) ||
	    hmap_put(&t->index, global, t->n) < 0)
		return -1;
	t->order[t->n] = global;
	return (int64_t)t->n++;
}

/* What a sample of each heap counts (Perfetto's views). */
struct view {
	const char *type, *unit;
};

static const struct view k_malloc[] = {{"Total malloc count", "count"},
				       {"Total malloc size", "bytes"},
				       {"Unreleased malloc count", "count"},
				       {"Unreleased malloc size", "bytes"}};
static const struct view k_generic[] = {{"Total count", "count"},
					{"Total size", "bytes"},
					{"Unreleased count", "count"},
					{"Unreleased size", "bytes"}};
static const struct view k_art[] = {{"Total allocation count", "count"},
				    {"Total allocation size", "bytes"}};

int pprof_heap_dump(struct tp *tp, const struct pprof_stacks *cs, const struct pprof_dump *d,
		    struct buf *out)
{
	struct pprof_stacks *s = (struct pprof_stacks *)cs; /* interns the view names */
	const struct view *views = k_generic;
	size_t n_views = 4, i;
	struct strtab t = {HMAP_INIT, NULL, 0, 0};
	struct buf msg = BUF_INIT, packed = BUF_INIT, vals = BUF_INIT;
	uint8_t *loc_seen = calloc(s->n_locs + 1, 1), *fn_seen = calloc(s->n_funcs + 1, 1);
	uint8_t *map_seen = calloc(s->n_maps + 1, 1);
	sqlite3_stmt *st = NULL;
	const char *tail;
	int rc = -ENOMEM;

	if (!loc_seen || !fn_seen || !map_seen)
		goto out;
	if (strcmp(d->heap, "libc.malloc") == 0) {
		views = k_malloc;
	} else if (strcmp(d->heap, "com.android.art") == 0) {
		views = k_art;
		n_views = 2;
	}
	if (str_id(&t, 0) != 0)
		goto out;
	for (i = 0; i < n_views; i++) {
		uint32_t ty = intern(s, views[i].type, strlen(views[i].type));
		uint32_t un = intern(s, views[i].unit, strlen(views[i].unit));
		int64_t a, b;

		if (ty == UINT32_MAX || un == UINT32_MAX || (a = str_id(&t, ty)) < 0 ||
		    (b = str_id(&t, un)) < 0)
			goto out;
		buf_reset(&msg);
		put_uint(&msg, VT_TYPE, (uint64_t)a);
		put_uint(&msg, VT_UNIT, (uint64_t)b);
		put_bytes(out, P_SAMPLE_TYPE, msg.data, msg.len);
	}

	rc = -EIO;
	if (tp_prepare(tp,
		       "SELECT callsite_id, "
		       "sum(CASE WHEN size >= 0 THEN count ELSE 0 END), "
		       "sum(CASE WHEN size >= 0 THEN size ELSE 0 END), sum(count), sum(size) "
		       "FROM heap_profile_allocation WHERE callsite_id >= 0 AND upid = ?1 "
		       "AND ts <= ?2 AND heap_name = ?3 GROUP BY callsite_id",
		       &st, &tail) != SQLITE_OK || !st)
		goto out;
	sqlite3_bind_int64(st, 1, d->upid);
	sqlite3_bind_int64(st, 2, d->ts);
	sqlite3_bind_text(st, 3, d->heap, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t c = sqlite3_column_int64(st, 0);
		size_t depth = 0;

		buf_reset(&packed);
		/* Leaf first: the callsite, then its parents. */
		while (c >= 0 && (size_t)c < s->n_cs && depth++ < MAX_DEPTH) {
			int64_t f = s->cs_frame[c];

			if (f >= 0 && (size_t)f < s->n_frames && s->frame_loc[f] != UINT32_MAX) {
				uint32_t l = s->frame_loc[f];

				put_varint(&packed, (uint64_t)l + 1);
				loc_seen[l] = 1;
			}
			c = s->cs_parent[c];
		}
		if (!packed.len)
			continue;
		buf_reset(&vals);
		for (i = 0; i < n_views; i++)
			put_varint(&vals, (uint64_t)sqlite3_column_int64(st, (int)i + 1));
		buf_reset(&msg);
		put_bytes(&msg, S_LOCATION_ID, packed.data, packed.len);
		put_bytes(&msg, S_VALUE, vals.data, vals.len);
		put_bytes(out, P_SAMPLE, msg.data, msg.len);
	}
	if (rc != SQLITE_DONE) {
		rc = -EIO;
		goto out;
	}
	rc = -ENOMEM;
	for (i = 0; i < s->n_locs; i++) {
		struct buf line = BUF_INIT;

		if (!loc_seen[i])
			continue;
		fn_seen[s->locs[i].func] = 1;
		if (s->locs[i].mapping >= 0 && (size_t)s->locs[i].mapping < s->n_maps)
			map_seen[s->locs[i].mapping] = 1;
		buf_reset(&msg);
		put_uint(&msg, L_ID, i + 1);
		put_uint(&msg, L_MAPPING_ID, (uint64_t)s->locs[i].mapping + 1);
		put_uint(&line, LN_FUNCTION_ID, (uint64_t)s->locs[i].func + 1);
		put_bytes(&msg, L_LINE, line.data, line.len);
		buf_fini(&line);
		put_bytes(out, P_LOCATION, msg.data, msg.len);
	}
	for (i = 0; i < s->n_funcs; i++) {
		int64_t a, b;

		if (!fn_seen[i])
			continue;
		if ((a = str_id(&t, s->funcs[i][0])) < 0 || (b = str_id(&t, s->funcs[i][1])) < 0)
			goto out;
		buf_reset(&msg);
		put_uint(&msg, F_ID, i + 1);
		put_uint(&msg, F_NAME, (uint64_t)a);
		put_uint(&msg, F_SYSTEM_NAME, (uint64_t)b);
		put_bytes(out, P_FUNCTION, msg.data, msg.len);
	}
	for (i = 0; i < s->n_maps; i++) {
		int64_t a, b;

		if (!map_seen[i] || !s->maps[i].valid)
			continue;
		if ((a = str_id(&t, s->maps[i].name)) < 0 ||
		    (b = str_id(&t, s->maps[i].build_id)) < 0)
			goto out;
		buf_reset(&msg);
		put_uint(&msg, M_ID, i + 1);
		put_uint(&msg, M_FILE_OFFSET, (uint64_t)s->maps[i].offset);
		put_uint(&msg, M_MEMORY_START, (uint64_t)s->maps[i].start);
		put_uint(&msg, M_MEMORY_LIMIT, (uint64_t)s->maps[i].end);
		put_uint(&msg, M_FILENAME, (uint64_t)a);
		put_uint(&msg, M_BUILD_ID, (uint64_t)b);
		put_bytes(out, P_MAPPING, msg.data, msg.len);
	}
	for (i = 0; i < t.n; i++) {
		const struct str_ref *r = &s->strs[t.order[i]];

		put_bytes(out, P_STRING_TABLE, s->blob.data + r->off, r->len);
	}
	rc = out->data || out->len == 0 ? 0 : -ENOMEM;
out:
	sqlite3_finalize(st);
	hmap_fini(&t.index);
	free(t.order);
	free(loc_seen);
	free(fn_seen);
	free(map_seen);
	buf_fini(&msg);
	buf_fini(&packed);
	buf_fini(&vals);
	return rc;
}

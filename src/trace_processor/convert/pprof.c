// SPDX-License-Identifier: Apache-2.0
/*
 * pprof.c - heap dumps as pprof profiles (perftools.profiles.Profile), as
 * Perfetto's traceconv makes them: a function per distinct (name,
 * system name) of the frames (the name demangled or deobfuscated, the
 * system name as recorded), a location per (mapping, function); a frame
 * with symbols (stack_profile_symbol, from ModuleSymbols) is a location
 * with a line per symbol (inlined functions first), each a function of
 * the symbol's name and source file with its line number; samples
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
	LN_FUNCTION_ID = 1, LN_LINE = 2,
	F_ID = 1, F_NAME = 2, F_SYSTEM_NAME = 3, F_FILENAME = 4,
};

#define NO_FILE UINT32_MAX /* a function without a file name field */

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
	/* Functions: (name, system name, file name or NO_FILE) strings. */
	uint32_t (*funcs)[3];
	size_t n_funcs, cap_funcs;
	struct hmap func_index; /* hash (probing) -> function */
	/* Lines of locations: function and line number (symbols' only). */
	struct pprof_line {
		uint32_t func;
		bool has_line;
		uint32_t line;
	} *lines;
	size_t n_lines, cap_lines;
	/* Locations: (mapping row, function) or (mapping row, symbol set):
	 * lines [first_line, first_line + n_lines). */
	struct {
		int64_t mapping;
		uint64_t what; /* function, or symbol set id | 1 << 63 */
		uint32_t first_line, n_lines;
	} *locs;
	size_t n_locs, cap_locs;
	struct hmap loc_index; /* hash (probing) -> location */
	/* Symbol sets: set id -> lines, as loaded (first index, count). */
	struct hmap set_lines; /* set id -> first line << 32 | count */
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

static uint64_t mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 0x9e3779b97f4a7c15ull + (h >> 29);
}

static uint32_t func_of(struct pprof_stacks *s, uint32_t name, uint32_t sys, uint32_t file)
{
	uint64_t h = mix(mix(mix(17, name), sys), file), v;

	while (hmap_get(&s->func_index, h, &v)) {
		const uint32_t *f = s->funcs[v];

		if (f[0] == name && f[1] == sys && f[2] == file)
			return (uint32_t)v;
		h++;
	}
	if (!grow((void **)&s->funcs, &s->cap_funcs, s->n_funcs, sizeof(*s->funcs)) ||
	    hmap_put(&s->func_index, h, s->n_funcs) < 0)
		return UINT32_MAX;
	s->funcs[s->n_funcs][0] = name;
	s->funcs[s->n_funcs][1] = sys;
	s->funcs[s->n_funcs][2] = file;
	return (uint32_t)s->n_funcs++;
}

static uint32_t add_line(struct pprof_stacks *s, uint32_t func, bool has_line, uint32_t line)
{
	if (!grow((void **)&s->lines, &s->cap_lines, s->n_lines, sizeof(*s->lines)))
		return UINT32_MAX;
	s->lines[s->n_lines].func = func;
	s->lines[s->n_lines].has_line = has_line;
	s->lines[s->n_lines].line = line;
	return (uint32_t)s->n_lines++;
}

/*
 * The location of @mapping and @what (a function, or a symbol set id |
 * 1 << 63 whose lines are [@first, @first + @n)); a plain function's
 * location gets its one line here.
 */
static uint32_t loc_of(struct pprof_stacks *s, int64_t mapping, uint64_t what, uint32_t first,
		       uint32_t n)
{
	uint64_t h = mix(mix(31, (uint64_t)mapping), what), v;

	while (hmap_get(&s->loc_index, h, &v)) {
		if (s->locs[v].mapping == mapping && s->locs[v].what == what)
			return (uint32_t)v;
		h++;
	}
	if (!(what >> 63)) {
		first = add_line(s, (uint32_t)what, false, 0);
		n = 1;
		if (first == UINT32_MAX)
			return UINT32_MAX;
	}
	if (!grow((void **)&s->locs, &s->cap_locs, s->n_locs, sizeof(*s->locs)) ||
	    hmap_put(&s->loc_index, h, s->n_locs) < 0)
		return UINT32_MAX;
	s->locs[s->n_locs].mapping = mapping;
	s->locs[s->n_locs].what = what;
	s->locs[s->n_locs].first_line = first;
	s->locs[s->n_locs].n_lines = n;
	return (uint32_t)s->n_locs++;
}

/* Each symbol a line of its set: a function of its name and file, its line. */
static int load_symbols(struct tp *tp, struct pprof_stacks *s)
{
	sqlite3_stmt *st = NULL;
	const char *tail;
	int64_t cur = -1;
	uint32_t first = 0, n = 0;
	int rc = -EIO;

	if (tp_prepare(tp,
		       "SELECT symbol_set_id, name, source_file, line_number "
		       "FROM stack_profile_symbol WHERE symbol_set_id IS NOT NULL "
		       "ORDER BY symbol_set_id, id",
		       &st, &tail) != SQLITE_OK || !st)
		goto out;
	rc = -ENOMEM;
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t set = sqlite3_column_int64(st, 0);
		uint32_t name = intern_col(s, st, 1), file = intern_col(s, st, 2), fn, ln;

		if (name == UINT32_MAX || file == UINT32_MAX ||
		    (fn = func_of(s, name, name, file)) == UINT32_MAX)
			goto out;
		ln = add_line(s, fn, true, (uint32_t)sqlite3_column_int64(st, 3));
		if (ln == UINT32_MAX)
			goto out;
		if (set != cur) {
			if (cur >= 0 &&
			    hmap_put(&s->set_lines, (uint64_t)cur, (uint64_t)first << 32 | n) < 0)
				goto out;
			cur = set;
			first = ln;
			n = 0;
		}
		n++;
	}
	if (cur >= 0 && hmap_put(&s->set_lines, (uint64_t)cur, (uint64_t)first << 32 | n) < 0)
		goto out;
	rc = 0;
out:
	sqlite3_finalize(st);
	return rc;
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
	free(s->lines);
	hmap_fini(&s->set_lines);
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
	hmap_init(&s->set_lines);
	if (intern(s, "", 0) != 0)
		goto fail;
	rc = load_symbols(tp, s);
	if (rc < 0)
		goto fail;
	rc = -EIO;
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
		       "SELECT id, mapping, name, coalesce(deobfuscated_name, demangle(name), name), "
		       "symbol_set_id FROM stack_profile_frame",
		       &st, &tail) != SQLITE_OK || !st)
		goto fail;
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0), mapping = sqlite3_column_int64(st, 1);
		uint64_t lines;

		if (id < 0 || (size_t)id >= s->n_frames)
			continue;
		/* A frame with symbols: their lines, else the frame's own function. */
		if (sqlite3_column_type(st, 4) != SQLITE_NULL &&
		    hmap_get(&s->set_lines, (uint64_t)sqlite3_column_int64(st, 4), &lines)) {
			s->frame_loc[id] = loc_of(s, mapping,
						  (uint64_t)sqlite3_column_int64(st, 4) | 1ull << 63,
						  (uint32_t)(lines >> 32), (uint32_t)lines);
		} else {
			uint32_t sys = intern_col(s, st, 2), name = intern_col(s, st, 3), fn;

			fn = sys == UINT32_MAX || name == UINT32_MAX
				     ? UINT32_MAX
				     : func_of(s, name, sys, NO_FILE);
			s->frame_loc[id] =
				fn == UINT32_MAX ? UINT32_MAX : loc_of(s, mapping, fn, 0, 0);
		}
		if (s->frame_loc[id] == UINT32_MAX) {
			rc = -ENOMEM;
			goto fail;
		}
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
		uint32_t j;

		if (!loc_seen[i])
			continue;
		if (s->locs[i].mapping >= 0 && (size_t)s->locs[i].mapping < s->n_maps)
			map_seen[s->locs[i].mapping] = 1;
		buf_reset(&msg);
		put_uint(&msg, L_ID, i + 1);
		put_uint(&msg, L_MAPPING_ID, (uint64_t)s->locs[i].mapping + 1);
		for (j = 0; j < s->locs[i].n_lines; j++) {
			const struct pprof_line *l = &s->lines[s->locs[i].first_line + j];

			fn_seen[l->func] = 1;
			buf_reset(&line);
			put_uint(&line, LN_FUNCTION_ID, (uint64_t)l->func + 1);
			if (l->has_line)
				put_uint(&line, LN_LINE, l->line);
			put_bytes(&msg, L_LINE, line.data, line.len);
		}
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
		if (s->funcs[i][2] != NO_FILE) {
			if ((a = str_id(&t, s->funcs[i][2])) < 0)
				goto out;
			put_uint(&msg, F_FILENAME, (uint64_t)a);
		}
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

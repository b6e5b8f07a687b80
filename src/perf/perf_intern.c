// SPDX-License-Identifier: Apache-2.0
/*
 * perf_intern.c - per-sequence interning (see perf_intern.h). Tables map
 * a 64-bit content hash to an iid (two different contents sharing a hash
 * is ~1e-8 likely over a million entries: accepted). Callstack frame ids
 * are written root first, as Perfetto's profilers write them.
 */
#include "perf/perf_intern.h"

#include <string.h>

#include "base/compiler.h"
#include "base/hash.h"
#include "pb_fields.h"

enum { T_NAMES, T_PATHS, T_BUILD_IDS, T_MAPPINGS, T_FRAMES, T_CALLSTACKS };

/* Callstacks deeper than this are cut at the root end. */
#define INTERN_MAX_DEPTH 512u

void perf_intern_init(struct perf_intern *in)
{
	size_t i;

	memset(in, 0, sizeof(*in));
	hmap_init(&in->names);
	hmap_init(&in->paths);
	hmap_init(&in->build_ids);
	hmap_init(&in->mappings);
	hmap_init(&in->frames);
	hmap_init(&in->callstacks);
	for (i = 0; i < 6; i++)
		in->next_iid[i] = 1;
}

void perf_intern_fini(struct perf_intern *in)
{
	hmap_fini(&in->names);
	hmap_fini(&in->paths);
	hmap_fini(&in->build_ids);
	hmap_fini(&in->mappings);
	hmap_fini(&in->frames);
	hmap_fini(&in->callstacks);
}

void perf_intern_clear(struct perf_intern *in)
{
	perf_intern_fini(in);
	perf_intern_init(in);
}

/* iid of @h in @m; *is_new when just assigned. 0 on ENOMEM. */
static uint64_t get_or_add(struct perf_intern *in, struct hmap *m, int table, uint64_t h,
			   bool *is_new)
{
	uint64_t iid;

	*is_new = false;
	if (hmap_get(m, h, &iid))
		return iid;
	iid = in->next_iid[table];
	if (hmap_put(m, h, iid) < 0)
		return 0;
	in->next_iid[table]++;
	*is_new = true;
	return iid;
}

/* The iid of @data (hash @h) in @m, emitted as an InternedString in
 * @field when new. */
static uint64_t intern_hashed(struct perf_intern *in, struct hmap *m, int table, uint32_t field,
			      uint64_t h, const void *data, size_t len, struct pz_msg *out)
{
	bool is_new;
	uint64_t iid = get_or_add(in, m, table, h, &is_new);

	if (iid && is_new) {
		struct pz_msg s;

		pz_begin_nested(out, field, &s);
		pz_append_varint(&s, PB_INTERNED_STRING__IID, iid);
		pz_append_bytes(&s, PB_INTERNED_STRING__STR, data, len);
		pz_end(&s);
	}
	return iid;
}

static uint64_t intern_bytes(struct perf_intern *in, struct hmap *m, int table, uint32_t field,
			     const void *data, size_t len, struct pz_msg *out)
{
	return intern_hashed(in, m, table, field, hash_bytes64(data, len, (uint64_t)table), data,
			     len, out);
}

/* Path components of @path (split at '/'), interned; their iids in @ids. */
static size_t intern_path(struct perf_intern *in, const char *path, uint64_t *ids, size_t max,
			  struct pz_msg *out)
{
	size_t n = 0;

	while (*path && n < max) {
		const char *end = strchr(path, '/');
		size_t len = end ? (size_t)(end - path) : strlen(path);

		if (len) {
			ids[n] = intern_bytes(in, &in->paths, T_PATHS, PB_INTERNED_DATA__MAPPING_PATHS,
					      path, len, out);
			if (!ids[n])
				return 0;
			n++;
		}
		path += len + (end ? 1 : 0);
	}
	return n;
}

/* What identifies a mapping: path, build id, range and bias. */
static uint64_t mapping_hash(const struct intern_frame *f)
{
	uint64_t h = hash_bytes64(f->map_path, strlen(f->map_path), T_MAPPINGS);

	h ^= hash_mix64(hash_bytes64(f->build_id, f->build_id_len, T_BUILD_IDS));
	return hash_mix64(h ^ f->map_start) ^ hash_mix64(f->map_end + 0x9e3779b97f4a7c15ull) ^
	       f->load_bias;
}

/* Whether @a and @b name one mapping by the same borrowed pointers (both
 * live for the whole callstack, so equal pointers mean equal content). */
static bool same_mapping(const struct intern_frame *a, const struct intern_frame *b)
{
	return a->map_path == b->map_path && a->build_id == b->build_id &&
	       a->build_id_len == b->build_id_len && a->map_start == b->map_start &&
	       a->map_end == b->map_end && a->load_bias == b->load_bias;
}

/* @h: mapping_hash(@f). */
static uint64_t intern_mapping(struct perf_intern *in, const struct intern_frame *f, uint64_t h,
			       struct pz_msg *out)
{
	uint64_t bid = 0, path_ids[64], iid;
	size_t n_path, i;
	bool is_new;

	iid = get_or_add(in, &in->mappings, T_MAPPINGS, h, &is_new);
	if (!iid || !is_new)
		return iid;
	if (f->build_id_len)
		bid = intern_bytes(in, &in->build_ids, T_BUILD_IDS, PB_INTERNED_DATA__BUILD_IDS,
				   f->build_id, f->build_id_len, out);
	n_path = intern_path(in, f->map_path, path_ids, PFC_ARRAY_SIZE(path_ids), out);
	{
		struct pz_msg m;

		pz_begin_nested(out, PB_INTERNED_DATA__MAPPINGS, &m);
		pz_append_varint(&m, PB_MAPPING__IID, iid);
		if (bid)
			pz_append_varint(&m, PB_MAPPING__BUILD_ID, bid);
		pz_append_varint(&m, PB_MAPPING__START, f->map_start);
		pz_append_varint(&m, PB_MAPPING__END, f->map_end);
		if (f->load_bias)
			pz_append_varint(&m, PB_MAPPING__LOAD_BIAS, f->load_bias);
		for (i = 0; i < n_path; i++)
			pz_append_varint(&m, PB_MAPPING__PATH_STRING_IDS, path_ids[i]);
		pz_end(&m);
	}
	return iid;
}

/* A frame is keyed by its content (function name, mapping, rel_pc), so a
 * frame seen before costs one lookup; its name and mapping are interned
 * only when it is new. @map_h: mapping_hash(@f), or 0 without a mapping. */
static uint64_t intern_frame(struct perf_intern *in, const struct intern_frame *f,
			     uint64_t map_h, struct pz_msg *out)
{
	size_t name_len = f->function ? strlen(f->function) : 0;
	uint64_t name_h = name_len ? hash_bytes64(f->function, name_len, T_NAMES) : 0;
	uint64_t name = 0, map = 0, h, iid;
	bool is_new;

	h = hash_mix64(name_h * 0x100000001b3ull ^ hash_mix64(map_h + 1) ^ hash_mix64(f->rel_pc + 7));
	if (hmap_get(&in->frames, h, &iid))
		return iid;
	if (name_len) {
		name = intern_hashed(in, &in->names, T_NAMES, PB_INTERNED_DATA__FUNCTION_NAMES, name_h,
				     f->function, name_len, out);
		if (!name)
			return 0;
	}
	if (f->map_path) {
		map = intern_mapping(in, f, map_h, out);
		if (!map)
			return 0;
	}
	iid = get_or_add(in, &in->frames, T_FRAMES, h, &is_new);
	if (iid && is_new) {
		struct pz_msg m;

		pz_begin_nested(out, PB_INTERNED_DATA__FRAMES, &m);
		pz_append_varint(&m, PB_FRAME__IID, iid);
		if (name)
			pz_append_varint(&m, PB_FRAME__FUNCTION_NAME_ID, name);
		if (map)
			pz_append_varint(&m, PB_FRAME__MAPPING_ID, map);
		pz_append_varint(&m, PB_FRAME__REL_PC, f->rel_pc);
		pz_end(&m);
	}
	return iid;
}

uint64_t perf_intern_callstack(struct perf_intern *in, const struct intern_frame *frames,
			       size_t n, struct pz_msg *interned)
{
	uint64_t ids[INTERN_MAX_DEPTH], h = 0xcbf29ce484222325ull, iid;
	size_t i;
	bool is_new;

	const struct intern_frame *last_map = NULL;
	uint64_t map_h = 0;

	if (n > INTERN_MAX_DEPTH)
		n = INTERN_MAX_DEPTH;
	for (i = 0; i < n; i++) {
		const struct intern_frame *f = &frames[i];

		/* Frames of one module sit together: hash its mapping once. */
		if (!f->map_path) {
			map_h = 0;
			last_map = NULL;
		} else if (!last_map || !same_mapping(last_map, f)) {
			map_h = mapping_hash(f);
			last_map = f;
		}
		ids[i] = intern_frame(in, f, map_h, interned);
		if (!ids[i])
			return 0;
		h = hash_mix64(h ^ ids[i]) + i;
	}
	iid = get_or_add(in, &in->callstacks, T_CALLSTACKS, hash_mix64(h ^ n), &is_new);
	if (iid && is_new) {
		struct pz_msg m;

		pz_begin_nested(interned, PB_INTERNED_DATA__CALLSTACKS, &m);
		pz_append_varint(&m, PB_CALLSTACK__IID, iid);
		for (i = n; i > 0; i--)
			pz_append_varint(&m, PB_CALLSTACK__FRAME_IDS, ids[i - 1]);
		pz_end(&m);
	}
	return iid;
}

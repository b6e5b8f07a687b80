// SPDX-License-Identifier: Apache-2.0
/*
 * module_symbols.c - offline symbolization: a ModuleSymbols packet (what
 * Perfetto's `traceconv symbolize` writes, appended to a trace whose
 * profiles were recorded without symbols) names the addresses of one
 * binary. As Perfetto's importer: the packet's path and build id pick
 * every stack_profile_mapping of that name and build id; each of its
 * AddressSymbols with lines becomes a stack_profile_symbol set (a row per
 * line: the inlined functions, then the one they were inlined into, as
 * the packet lists them), and every frame of those mappings at that
 * rel_pc points to the set (symbol_set_id). Addresses no frame has count
 * stackprofile_invalid_frame_id; a binary no mapping has,
 * stackprofile_invalid_mapping_id. Frames are found through a sorted
 * (mapping, rel_pc) list kept for the import, rebuilt only when frames
 * were added since (symbols come in one packet per binary, after the
 * profiles).
 */
#include <stdlib.h>
#include <string.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/common/common.h"
#include "trace_processor/import/profiling/profiling.h"
#include "trace_processor/import/profiling/profiling_int.h"
#include "trace_processor/storage/storage.h"

struct frame_key {
	int64_t mapping;
	uint64_t rel_pc;
	uint32_t row;
};

/* The frames by (mapping, rel_pc): kept for the import while valid. */
struct tp_symbol_frames {
	struct frame_key *keys;
	size_t n;
};

static int frame_key_cmp(const void *a, const void *b)
{
	const struct frame_key *x = a, *y = b;

	if (x->mapping != y->mapping)
		return x->mapping < y->mapping ? -1 : 1;
	if (x->rel_pc != y->rel_pc)
		return x->rel_pc < y->rel_pc ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

/* (Re)builds @f from the frame table when it has rows @f has not seen. */
static int frames_index(struct tp_import *imp, struct tp_symbol_frames *f)
{
	const struct tp_table *t = &imp->db->sp_frame;
	size_t i;

	if (f->keys && f->n == t->n_rows)
		return 0;
	free(f->keys);
	f->n = 0;
	f->keys = malloc((t->n_rows ? t->n_rows : 1) * sizeof(*f->keys));
	if (!f->keys)
		return -1;
	for (i = 0; i < t->n_rows; i++) {
		f->keys[i].mapping = tp_get_int(t, SP_FRAME_MAPPING, i);
		f->keys[i].rel_pc = (uint64_t)tp_get_int(t, SP_FRAME_REL_PC, i);
		f->keys[i].row = (uint32_t)i;
	}
	f->n = t->n_rows;
	qsort(f->keys, f->n, sizeof(*f->keys), frame_key_cmp);
	return 0;
}

/* Sets @set on every frame of @mapping at @rel_pc. Return: how many. */
static size_t name_frames(struct tp_import *imp, const struct tp_symbol_frames *f, int64_t mapping,
			  uint64_t rel_pc, int64_t set)
{
	struct tp_table *t = &imp->db->sp_frame;
	size_t lo = 0, hi = f->n, n = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct frame_key *k = &f->keys[mid];

		if (k->mapping < mapping || (k->mapping == mapping && k->rel_pc < rel_pc))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < f->n && f->keys[lo].mapping == mapping && f->keys[lo].rel_pc == rel_pc; lo++) {
		tp_set_int(t, SP_FRAME_SYMBOL_SET_ID, f->keys[lo].row, set);
		n++;
	}
	return n;
}

/* A string field as an interned id: NULL when absent, as Perfetto's pool. */
static uint32_t str_or_null(struct tp_import *imp, const struct pz_field *f)
{
	if (!f->id)
		return TP_NULL_STR;
	return tp_str_intern(&imp->db->strings, (const char *)f->data, f->size);
}

/* One AddressSymbols: its symbol set, named on the frames of @maps. */
static void address_symbols(struct tp_import *imp, struct tp_symbol_frames *f, const uint8_t *data,
			    size_t len, const int64_t *maps, size_t n_maps, uint32_t machine)
{
	struct tp_table *t = &imp->db->sp_symbol;
	struct pz_reader r;
	struct pz_field fd;
	uint64_t address = 0;
	int64_t set = (int64_t)t->n_rows;
	bool has_lines = false;
	size_t i, found = 0;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &fd) > 0)
		if (fd.id == PB_ADDRESS_SYMBOLS__ADDRESS && fd.wire_type == PZ_WIRE_VARINT)
			address = fd.value;
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &fd) > 0) {
		struct pz_field l[4];
		const struct pz_field *file;
		int64_t row;

		if (fd.id != PB_ADDRESS_SYMBOLS__LINES || fd.wire_type != PZ_WIRE_LEN ||
		    pz_decode_table(fd.data, fd.size, l, 4) != PZ_OK)
			continue;
		row = tp_table_append(t);
		if (row < 0)
			return;
		file = &l[PB_LINE__SOURCE_FILE_NAME];
		tp_set_int(t, SP_SYM_SYMBOL_SET_ID, (size_t)row, set);
		tp_set_str(t, SP_SYM_NAME, (size_t)row,
			   str_or_null(imp, &l[PB_LINE__FUNCTION_NAME]));
		/* No file: no file and no line, whatever the line says. */
		if (file->id && file->size) {
			tp_set_str(t, SP_SYM_SOURCE_FILE, (size_t)row, str_or_null(imp, file));
			if (l[PB_LINE__LINE_NUMBER].id)
				tp_set_int(t, SP_SYM_LINE_NUMBER, (size_t)row,
					   (int64_t)(uint32_t)l[PB_LINE__LINE_NUMBER].value);
		}
		has_lines = true;
	}
	if (!has_lines)
		return;
	if (n_maps && frames_index(imp, f) == 0)
		for (i = 0; i < n_maps; i++)
			found += name_frames(imp, f, maps[i], address, set);
	if (!found)
		tp_stat_add(imp, "stackprofile_invalid_frame_id", -1, machine, 1);
}

void tp_prof_module_symbols(struct tp_import *imp, const uint8_t *data, size_t len,
			    uint32_t machine, bool other_mappings)
{
	struct tp_table *maps_t = &imp->db->sp_mapping;
	struct tp_profiling *p = tp_prof_state(imp);
	struct pz_field m[4];
	struct pz_reader r;
	struct pz_field f;
	const uint32_t *rows;
	int64_t *maps = NULL, n_rows;
	uint32_t name, build_id;
	size_t n = 0, i;

	if (!p || pz_decode_table(data, len, m, 4) != PZ_OK)
		return;
	if (!p->symbol_frames) {
		p->symbol_frames = calloc(1, sizeof(*p->symbol_frames));
		if (!p->symbol_frames)
			return;
	}
	/* The mappings' names and build ids (hex) are interned: an unknown one names none. */
	name = tp_str_find(&imp->db->strings,
			   m[PB_MODULE_SYMBOLS__PATH].id ? (const char *)m[PB_MODULE_SYMBOLS__PATH].data
							 : "",
			   m[PB_MODULE_SYMBOLS__PATH].id ? m[PB_MODULE_SYMBOLS__PATH].size : 0);
	build_id = m[PB_MODULE_SYMBOLS__BUILD_ID].id
			   ? tp_prof_build_id_hex(imp, m[PB_MODULE_SYMBOLS__BUILD_ID].data,
						  (uint32_t)m[PB_MODULE_SYMBOLS__BUILD_ID].size)
			   : tp_db_str(imp->db, "");
	n_rows = name != TP_NULL_STR ? tp_col_lookup(maps_t, SP_MAP_NAME, name, &rows) : 0;
	if (n_rows > 0) {
		maps = malloc((size_t)n_rows * sizeof(*maps));
		for (i = 0; maps && i < (size_t)n_rows; i++)
			if (tp_get_str(maps_t, SP_MAP_BUILD_ID, rows[i]) == build_id)
				maps[n++] = rows[i];
	}
	if (!n && !other_mappings) {
		tp_stat_add(imp, "stackprofile_invalid_mapping_id", -1, machine, 1);
		goto out;
	}
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0)
		if (f.id == PB_MODULE_SYMBOLS__ADDRESS_SYMBOLS && f.wire_type == PZ_WIRE_LEN)
			address_symbols(imp, p->symbol_frames, f.data, f.size, maps, n, machine);
out:
	free(maps);
}

void tp_prof_symbol_frames_fini(struct tp_profiling *p)
{
	if (!p->symbol_frames)
		return;
	free(p->symbol_frames->keys);
	free(p->symbol_frames);
	p->symbol_frames = NULL;
}

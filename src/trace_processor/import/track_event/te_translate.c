// SPDX-License-Identifier: Apache-2.0
/*
 * te_translate.c - TranslationTable packets (tokenizer order): Chrome
 * histogram, performance mark and study hashes to names, deobfuscated
 * slice and process track names. Slice names are translated for every
 * importer's slices (through the slice hooks of te_parse.c), process
 * track names by te_track.c, hashed args just before a set is stored.
 */
#include <string.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/track_event/te_int.h"

uint32_t te_translate(const struct hmap *m, uint32_t str)
{
	uint64_t v;

	if (str && hmap_len(m) && hmap_get(m, str, &v))
		return (uint32_t)v;
	return str;
}

/* The map<K, string> in field @id of a table into @m (string keys when @str_keys). */
static void translation_map(struct tp_import *imp, struct hmap *m, const struct pz_field *table,
			    uint32_t id, bool str_keys)
{
	struct pz_reader r;
	struct pz_field f;

	pz_reader_init(&r, table->data, table->wire_type == PZ_WIRE_LEN ? table->size : 0);
	while (pz_reader_next(&r, &f) > 0) {
		struct pz_field e[3];
		uint64_t key;

		if (f.id != id || f.wire_type != PZ_WIRE_LEN ||
		    pz_decode_table(f.data, f.size, e, 3) != PZ_OK || !e[2].id)
			continue;
		key = str_keys ? te_str(imp, &e[1]) : e[1].value;
		if (str_keys && !key)
			continue;
		hmap_put(m, key, te_str(imp, &e[2]));
	}
}

void te_translation_table(struct tp_import *imp, const uint8_t *data, size_t len)
{
	struct tp_te *te = te_get(imp);
	struct pz_field t[7];

	if (!te || pz_decode_table(data, len, t, 7) != PZ_OK) {
		tp_stat_add(imp, "translation_table_malformed", -1, 0, 1);
		return;
	}
	if (t[PB_TRANSLATION_TABLE__CHROME_HISTOGRAM].id)
		translation_map(imp, &te->tr_histogram, &t[PB_TRANSLATION_TABLE__CHROME_HISTOGRAM],
				PB_CHROME_HISTORGRAM_TRANSLATION_TABLE__HASH_TO_NAME, false);
	if (t[PB_TRANSLATION_TABLE__CHROME_PERFORMANCE_MARK].id) {
		translation_map(
			imp, &te->tr_perf_site, &t[PB_TRANSLATION_TABLE__CHROME_PERFORMANCE_MARK],
			PB_CHROME_PERFORMANCE_MARK_TRANSLATION_TABLE__SITE_HASH_TO_NAME, false);
		translation_map(
			imp, &te->tr_perf_mark, &t[PB_TRANSLATION_TABLE__CHROME_PERFORMANCE_MARK],
			PB_CHROME_PERFORMANCE_MARK_TRANSLATION_TABLE__MARK_HASH_TO_NAME, false);
	}
	if (t[PB_TRANSLATION_TABLE__CHROME_STUDY].id)
		translation_map(imp, &te->tr_study, &t[PB_TRANSLATION_TABLE__CHROME_STUDY],
				PB_CHROME_STUDY_TRANSLATION_TABLE__HASH_TO_NAME, false);
	if (t[PB_TRANSLATION_TABLE__SLICE_NAME].id)
		translation_map(imp, &te->tr_slice_name, &t[PB_TRANSLATION_TABLE__SLICE_NAME],
				PB_SLICE_NAME_TRANSLATION_TABLE__RAW_TO_DEOBFUSCATED_NAME, true);
	if (t[PB_TRANSLATION_TABLE__PROCESS_TRACK_NAME].id)
		translation_map(
			imp, &te->tr_process_track, &t[PB_TRANSLATION_TABLE__PROCESS_TRACK_NAME],
			PB_PROCESS_TRACK_NAME_TRANSLATION_TABLE__RAW_TO_DEOBFUSCATED_NAME, true);
}

void te_translate_args(struct tp_import *imp, struct tp_argset *b)
{
	struct tp_te *te = imp->te;
	const struct {
		uint32_t hash_key, name_key;
		const struct hmap *map;
	} k[] = {
		{te->k.hist_name_hash, te->k.hist_name, &te->tr_histogram},
		{te->k.perf_site_hash, te->k.perf_site, &te->tr_perf_site},
		{te->k.perf_mark_hash, te->k.perf_mark, &te->tr_perf_mark},
		{te->k.trigger_name_hash, te->k.trigger_name, &te->tr_study},
	};
	uint32_t i, j;
	uint64_t v;

	if (!hmap_len(&te->tr_histogram) && !hmap_len(&te->tr_perf_site) &&
	    !hmap_len(&te->tr_perf_mark) && !hmap_len(&te->tr_study))
		return;
	for (i = 0; i < b->n; i++) {
		if (b->a[i].type != TP_ARG_UINT)
			continue;
		for (j = 0; j < sizeof(k) / sizeof(k[0]); j++) {
			struct tp_arg name;

			if (b->a[i].key != k[j].hash_key ||
			    !hmap_get(k[j].map, (uint64_t)b->a[i].v.i, &v))
				continue;
			/* The name goes right after its hash. */
			memset(&name, 0, sizeof(name));
			name.flat_key = name.key = k[j].name_key;
			name.type = TP_ARG_STR;
			name.v.s = (uint32_t)v;
			tp_argset_add(imp, b, &name);
			if (b->a[b->n - 1].key == k[j].name_key && i + 1 < b->n - 1) {
				memmove(&b->a[i + 2], &b->a[i + 1],
					(b->n - 2 - i) * sizeof(b->a[0]));
				b->a[i + 1] = name;
			}
			i++;
			break;
		}
	}
}

void te_translate_fini(struct tp_te *te)
{
	hmap_fini(&te->tr_slice_name);
	hmap_fini(&te->tr_process_track);
	hmap_fini(&te->tr_histogram);
	hmap_fini(&te->tr_perf_site);
	hmap_fini(&te->tr_perf_mark);
	hmap_fini(&te->tr_study);
}

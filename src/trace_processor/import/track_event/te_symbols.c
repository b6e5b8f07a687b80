// SPDX-License-Identifier: Apache-2.0
/*
 * te_symbols.c - native symbols for track event args: interned Mappings
 * (build id and path) become mapping ids, ModuleSymbols packets name
 * (mapping, rel_pc) pairs, and at the end of the trace slice args holding
 * an unsymbolized Mojo method are rewritten to its method and interface.
 * Called by te_mojo.c (parse order), the read layer's dispatch
 * (ModuleSymbols) and te_parse.c's slice hooks; a trace has a handful of
 * mappings, so they are scanned linearly.
 */
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/track_event/te_int.h"

#define MAX_MAPPINGS 65536
#define MAX_PATH_BYTES 4096
#define RULE_PROBES 8

struct sym_mapping {
	char *name;
	size_t name_len;
	uint8_t *build_id; /* raw bytes; empty means none */
	size_t build_id_len;
	uint64_t start, end, start_offset, load_bias, exact_offset;
};

struct sym_rule {
	uint64_t mapping;
	uint64_t rel_pc;
	uint32_t function; /* string id */
};

struct te_symbols {
	struct sym_mapping *maps; /* index = mapping id */
	size_t n_maps, cap_maps;
	struct hmap by_entry; /* te.intern index of a Mapping -> mapping id */
	struct hmap rules_by_key; /* hash(mapping, rel_pc) -> index in rules */
	struct sym_rule *rules;
	size_t n_rules, cap_rules;
	uint32_t k_mapping_id, k_rel_pc, k_method, k_interface;
};

static struct te_symbols *symbols_get(struct tp_import *imp)
{
	struct tp_te *te = te_get(imp);
	struct te_symbols *s;

	if (!te)
		return NULL;
	if (te->symbols)
		return te->symbols;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->k_mapping_id = tp_db_str(imp->db, TE_MOJO_NATIVE_SYMBOL ".mapping_id");
	s->k_rel_pc = tp_db_str(imp->db, TE_MOJO_NATIVE_SYMBOL ".rel_pc");
	s->k_method = tp_db_str(imp->db, "chrome_mojo_event_info.mojo_method_name");
	s->k_interface = tp_db_str(imp->db, "chrome_mojo_event_info.mojo_interface_tag");
	te->symbols = s;
	return s;
}

/* Field 2 (the bytes) of interned string @iid in @field; false if absent. */
static bool interned_bytes(struct tp_import *imp, uint32_t gen, uint32_t field, uint64_t iid,
			   const uint8_t **out, size_t *out_len)
{
	const struct tp_interned *i = tp_seq_interned(imp, gen, field, iid);
	struct pz_field s[3];

	if (!i || pz_decode_table(i->msg, i->len, s, 3) != PZ_OK)
		return false;
	*out = s[PB_INTERNED_STRING__STR].id ? s[PB_INTERNED_STRING__STR].data : NULL;
	*out_len = s[PB_INTERNED_STRING__STR].id ? s[PB_INTERNED_STRING__STR].size : 0;
	return true;
}

static bool same_mapping(const struct sym_mapping *a, const struct sym_mapping *b)
{
	return a->name_len == b->name_len && !memcmp(a->name, b->name, a->name_len) &&
	       a->build_id_len == b->build_id_len &&
	       !memcmp(a->build_id, b->build_id, a->build_id_len) && a->start == b->start &&
	       a->end == b->end && a->start_offset == b->start_offset &&
	       a->load_bias == b->load_bias && a->exact_offset == b->exact_offset;
}

/* The mapping's name: its path components, each after a '/' ("//x" is "/x"). */
static bool mapping_name(struct tp_import *imp, uint32_t gen, const uint8_t *data, size_t len,
			 char *buf, size_t *out_len)
{
	struct pz_reader r;
	struct pz_field f;
	size_t n = 0;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		struct pz_varints it;
		uint64_t iid;

		if (f.id != PB_MAPPING__PATH_STRING_IDS)
			continue;
		/* The ids come one per field or packed. */
		pz_varints_init(&it, &f);
		while (pz_varints_next(&it, &iid)) {
			const uint8_t *p;
			size_t plen;

			/* A missing component ends the name rather than failing it. */
			if (!interned_bytes(imp, gen, PB_INTERNED_DATA__MAPPING_PATHS, iid, &p,
					    &plen))
				goto done;
			if (n + 1 + plen > MAX_PATH_BYTES)
				return false;
			buf[n++] = '/';
			if (plen)
				memcpy(buf + n, p, plen);
			n += plen;
		}
	}
done:
	if (n >= 2 && buf[0] == '/' && buf[1] == '/') {
		memmove(buf, buf + 1, n - 1);
		n--;
	}
	*out_len = n;
	return true;
}

int64_t te_symbols_mapping(struct tp_import *imp, uint32_t gen, uint32_t machine, uint64_t iid)
{
	struct te_symbols *s = symbols_get(imp);
	const struct tp_interned *e;
	struct sym_mapping m = {0};
	struct pz_field d[9];
	const uint8_t *bid = (const uint8_t *)"";
	char name[MAX_PATH_BYTES];
	uint64_t key, v;
	size_t i;

	if (!s)
		return -1;
	e = tp_seq_interned(imp, gen, PB_INTERNED_DATA__MAPPINGS, iid);
	if (!e || pz_decode_table(e->msg, e->len, d, 9) != PZ_OK) {
		tp_stat_add(imp, "stackprofile_invalid_mapping_id", -1, machine, 1);
		return -1;
	}
	key = tp_seq_interned_index(imp, e);
	if (hmap_get(&s->by_entry, key, &v))
		return (int64_t)v;
	/* A build id of 0 means "none"; any other must be interned. */
	if (d[PB_MAPPING__BUILD_ID].value &&
	    !interned_bytes(imp, gen, PB_INTERNED_DATA__BUILD_IDS, d[PB_MAPPING__BUILD_ID].value,
			    &bid, &m.build_id_len)) {
		tp_stat_add(imp, "stackprofile_invalid_string_id", -1, machine, 1);
		return -1;
	}
	if (!mapping_name(imp, gen, e->msg, e->len, name, &m.name_len))
		return -1;
	m.name = name;
	m.build_id = (uint8_t *)bid;
	m.start = d[PB_MAPPING__START].value;
	m.end = d[PB_MAPPING__END].value;
	m.start_offset = d[PB_MAPPING__START_OFFSET].value;
	m.load_bias = d[PB_MAPPING__LOAD_BIAS].value;
	m.exact_offset = d[PB_MAPPING__EXACT_OFFSET].value;
	/* Mappings with the same fields are one mapping, whichever sequence names them. */
	for (i = 0; i < s->n_maps; i++)
		if (same_mapping(&s->maps[i], &m))
			goto found;
	if (s->n_maps >= MAX_MAPPINGS ||
	    tp_array_grow((void **)&s->maps, &s->cap_maps, s->n_maps + 1, sizeof(*s->maps), 8) < 0)
		return -1;
	m.name = malloc(m.name_len + 1);
	m.build_id = malloc(m.build_id_len + 1);
	if (!m.name || !m.build_id) {
		free(m.name);
		free(m.build_id);
		return -1;
	}
	memcpy(m.name, name, m.name_len);
	if (m.build_id_len)
		memcpy(m.build_id, bid, m.build_id_len);
	s->maps[s->n_maps++] = m;
found:
	hmap_put(&s->by_entry, key, i);
	return (int64_t)i;
}

static uint64_t rule_key(uint64_t mapping, uint64_t rel_pc)
{
	return hash_mix64(hash_mix64(mapping) ^ rel_pc);
}

static const struct sym_rule *rule_find(const struct te_symbols *s, uint64_t mapping,
					uint64_t rel_pc, uint64_t *out_slot)
{
	uint64_t k = rule_key(mapping, rel_pc), v;
	int i;

	for (i = 0; i < RULE_PROBES; i++, k++) {
		if (!hmap_get(&s->rules_by_key, k, &v))
			break;
		if (s->rules[v].mapping == mapping && s->rules[v].rel_pc == rel_pc)
			return &s->rules[v];
	}
	*out_slot = i < RULE_PROBES ? k : UINT64_MAX;
	return NULL;
}

/* The first rule for a (mapping, address) stays. */
static void rule_add(struct te_symbols *s, uint64_t mapping, uint64_t rel_pc, uint32_t function)
{
	uint64_t slot;

	if (rule_find(s, mapping, rel_pc, &slot) || slot == UINT64_MAX)
		return;
	if (tp_array_grow((void **)&s->rules, &s->cap_rules, s->n_rules + 1, sizeof(*s->rules),
			  64) < 0 ||
	    hmap_put(&s->rules_by_key, slot, s->n_rules) < 0)
		return;
	s->rules[s->n_rules].mapping = mapping;
	s->rules[s->n_rules].rel_pc = rel_pc;
	s->rules[s->n_rules].function = function;
	s->n_rules++;
}

/* One AddressSymbols: its last line's function names the address in every mapping. */
static void address_symbols(struct tp_import *imp, struct te_symbols *s, const uint8_t *data,
			    size_t len, const uint64_t *maps, size_t n_maps)
{
	struct pz_reader r;
	struct pz_field f;
	uint64_t address = 0;
	uint32_t function = 0;
	bool has_lines = false;
	size_t i;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		struct pz_field l[4];

		if (f.id == PB_ADDRESS_SYMBOLS__ADDRESS && f.wire_type == PZ_WIRE_VARINT) {
			address = f.value;
		} else if (f.id == PB_ADDRESS_SYMBOLS__LINES && f.wire_type == PZ_WIRE_LEN &&
			   pz_decode_table(f.data, f.size, l, 4) == PZ_OK) {
			const struct pz_field *fn = &l[PB_LINE__FUNCTION_NAME];

			function = tp_str_intern(&imp->db->strings,
						 fn->id ? (const char *)fn->data : "",
						 fn->id ? fn->size : 0);
			has_lines = true;
		}
	}
	if (!has_lines || !function)
		return;
	for (i = 0; i < n_maps; i++)
		rule_add(s, maps[i], address, function);
}

bool tp_te_module_symbols(struct tp_import *imp, const uint8_t *data, size_t len)
{
	struct te_symbols *s = symbols_get(imp);
	struct pz_field m[4];
	struct pz_reader r;
	struct pz_field f;
	uint64_t *maps = NULL;
	size_t n = 0, cap = 0, i;
	const struct pz_field *path, *bid;

	if (!s || pz_decode_table(data, len, m, 4) != PZ_OK)
		return false;
	path = &m[PB_MODULE_SYMBOLS__PATH];
	bid = &m[PB_MODULE_SYMBOLS__BUILD_ID];
	/* Symbols name every mapping with this exact path and build id. */
	for (i = 0; i < s->n_maps; i++) {
		const struct sym_mapping *mp = &s->maps[i];
		size_t plen = path->id ? path->size : 0, blen = bid->id ? bid->size : 0;

		if (mp->name_len != plen || (plen && memcmp(mp->name, path->data, plen)) ||
		    mp->build_id_len != blen || (blen && memcmp(mp->build_id, bid->data, blen)))
			continue;
		if (tp_array_grow((void **)&maps, &cap, n + 1, sizeof(*maps), 4) < 0)
			break;
		maps[n++] = i;
	}
	if (!n)
		goto out;
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0)
		if (f.id == PB_MODULE_SYMBOLS__ADDRESS_SYMBOLS && f.wire_type == PZ_WIRE_LEN)
			address_symbols(imp, s, f.data, f.size, maps, n);
out:
	free(maps);
	return n > 0;
}

bool te_symbols_pending(const struct tp_te *te, const struct tp_argset *b)
{
	const struct te_symbols *s = te->symbols;
	uint32_t i;

	if (!s)
		return false;
	for (i = 0; i < b->n; i++)
		if (b->a[i].type == TP_ARG_UINT &&
		    (b->a[i].key == s->k_mapping_id || b->a[i].key == s->k_rel_pc))
			return true;
	return false;
}

/* Adds a string arg; with @skip_if_exists, only if @b has no @key yet. */
static void add_str(struct tp_import *imp, struct tp_argset *b, uint32_t key, const char *str,
		    size_t len, bool skip_if_exists)
{
	uint32_t i;

	for (i = 0; skip_if_exists && i < b->n; i++)
		if (b->a[i].key == key)
			return;
	tp_argset_str(imp, b, key, tp_str_intern(&imp->db->strings, str, len));
}

/* "ns::Iface::Method_Sym::IPCStableHash[()]" names method "ns::Iface::Method". */
static size_t method_len(const char *fn, size_t n)
{
	static const char sym[] = "_Sym::IPCStableHash";

	if (n >= 2 && !memcmp(fn + n - 2, "()", 2))
		n -= 2;
	if (n >= sizeof(sym) - 1 && !memcmp(fn + n - (sizeof(sym) - 1), sym, sizeof(sym) - 1))
		n -= sizeof(sym) - 1;
	return n;
}

/* ... and interface "ns.Iface": the "::" parts but the last two, joined by '.'. */
static void interface_tag(struct tp_import *imp, struct tp_argset *b, uint32_t key, const char *fn)
{
	const char *parts[64];
	size_t lens[64], n = 0, i, len = 0;
	const char *p = fn;
	char *out;

	while (*p && n < 64) {
		const char *e = strstr(p, "::");
		size_t l = e ? (size_t)(e - p) : strlen(p);

		if (l) {
			parts[n] = p;
			lens[n++] = l;
		}
		p += l + (e ? 2 : 0);
	}
	if (n <= 2 || *p) {
		add_str(imp, b, key, fn, strlen(fn), true);
		return;
	}
	out = malloc(strlen(fn) + 1);
	if (!out)
		return;
	for (i = 0; i + 2 < n; i++) {
		if (i)
			out[len++] = '.';
		memcpy(out + len, parts[i], lens[i]);
		len += lens[i];
	}
	add_str(imp, b, key, out, len, true);
	free(out);
}

void te_symbols_translate(struct tp_import *imp, struct tp_argset *b)
{
	struct te_symbols *s = imp->te ? imp->te->symbols : NULL;
	const struct sym_rule *rule;
	uint64_t mapping = 0, rel_pc = 0, slot;
	bool has_mapping = false, has_pc = false;
	uint32_t i, n = 0;

	if (!s)
		return;
	/* The raw pair leaves the set; what replaces it goes at the end. */
	for (i = 0; i < b->n; i++) {
		const struct tp_arg *a = &b->a[i];

		if (a->type == TP_ARG_UINT && a->key == s->k_mapping_id) {
			mapping = (uint64_t)a->v.i;
			has_mapping = true;
		} else if (a->type == TP_ARG_UINT && a->key == s->k_rel_pc) {
			rel_pc = (uint64_t)a->v.i;
			has_pc = true;
		} else {
			b->a[n++] = *a;
		}
	}
	b->n = n;
	if (!has_mapping || !has_pc)
		return;
	rule = rule_find(s, mapping, rel_pc, &slot);
	if (rule) {
		const char *fn = tp_str_get(&imp->db->strings, rule->function);

		if (!fn)
			return;
		add_str(imp, b, s->k_method, fn, method_len(fn, strlen(fn)), false);
		/* A plain interface tag from the trace wins over the derived one. */
		interface_tag(imp, b, s->k_interface, fn);
	} else {
		/* Unknown symbol: keep the raw pair rather than lose it. */
		tp_argset_uint(imp, b, s->k_mapping_id, mapping);
		tp_argset_uint(imp, b, s->k_rel_pc, rel_pc);
	}
}

void te_symbols_fini(struct tp_te *te)
{
	struct te_symbols *s = te->symbols;
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n_maps; i++) {
		free(s->maps[i].name);
		free(s->maps[i].build_id);
	}
	free(s->maps);
	hmap_fini(&s->by_entry);
	hmap_fini(&s->rules_by_key);
	free(s->rules);
	free(s);
	te->symbols = NULL;
}

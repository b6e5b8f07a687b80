// SPDX-License-Identifier: Apache-2.0
/*
 * heap_graph.c - ART's Java heap dumps (TracePacket.heap_graph) as
 * Perfetto imports them. A dump is a run of packets on one sequence
 * (index 0, 1, ...; `continued` on all but the last) carrying objects
 * (id or delta from the previous, class, size, outgoing references), the
 * classes interned by id, the field and location names interned by id,
 * and the roots. Objects become heap_graph_object rows as they come, their
 * references heap_graph_reference rows (an object's references are the
 * consecutive rows of its reference_set_id) and classes heap_graph_class
 * rows when first named. When the dump ends (or the trace does):
 *  - objects with no size take their class's object_size, and references
 *    given without field ids are named from the class's fields, then its
 *    superclasses';
 *  - roots are marked (a root type of higher precedence wins) and every
 *    object reachable from a root is flagged (the referent of a weak,
 *    finalizer or phantom reference does not count); zygote and boot
 *    image objects are roots of type ROOT_VM_INTERNAL;
 *  - a class whose java.lang.Class object names a superClass gets its
 *    superclass_id; an object a sun.misc.Cleaner cleans gets the native
 *    size its NativeAllocationRegistry records;
 *  - the dump gets its heap_graph row (truncated if a packet was missing).
 * At the end of the trace the DeobfuscationMapping packets name the
 * obfuscated classes (of their package, or of none) and fields, and
 * (deobfuscate_frames.c) the Java frames of the profiles.
 */
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/common/common.h"
#include "trace_processor/import/profiling/profiling.h"
#include "trace_processor/import/profiling/profiling_int.h"

#define NONE (-1)
#define MAX_MAPPINGS_BYTES (256u << 20) /* deobfuscation mappings kept at once */

static const char *const k_root_types[] = {
	"ROOT_UNKNOWN",         "ROOT_JNI_GLOBAL",        "ROOT_JNI_LOCAL",
	"ROOT_JAVA_FRAME",      "ROOT_NATIVE_STACK",      "ROOT_STICKY_CLASS",
	"ROOT_THREAD_BLOCK",    "ROOT_MONITOR_USED",      "ROOT_THREAD_OBJECT",
	"ROOT_INTERNED_STRING", "ROOT_FINALIZING",        "ROOT_DEBUGGER",
	"ROOT_REFERENCE_CLEANUP", "ROOT_VM_INTERNAL",     "ROOT_JNI_MONITOR",
};
#define N_ROOT_TYPES (sizeof(k_root_types) / sizeof(k_root_types[0]))
#define ROOT_VM_INTERNAL 13

static const char *const k_kinds[] = {
	"KIND_UNKNOWN",         "KIND_NORMAL",           "KIND_NOREFERENCES",
	"KIND_STRING",          "KIND_ARRAY",            "KIND_CLASS",
	"KIND_CLASSLOADER",     "KIND_DEXCACHE",         "KIND_SOFT_REFERENCE",
	"KIND_WEAK_REFERENCE",  "KIND_FINALIZER_REFERENCE", "KIND_PHANTOM_REFERENCE",
};
#define N_KINDS (sizeof(k_kinds) / sizeof(k_kinds[0]))
enum { KIND_NOREFERENCES = 2, KIND_STRING = 3, KIND_ARRAY = 4, KIND_WEAK = 9,
       KIND_FINALIZER = 10, KIND_PHANTOM = 11 };

static const char *const k_heap_types[] = {
	"HEAP_TYPE_UNKNOWN", "HEAP_TYPE_APP", "HEAP_TYPE_ZYGOTE", "HEAP_TYPE_BOOT_IMAGE",
};
enum { HEAP_UNKNOWN = 0, HEAP_ZYGOTE = 2, HEAP_BOOT_IMAGE = 3 };

/* A class as a dump interns it. */
struct itype {
	uint64_t id, location_id, object_size, superclass_id, classloader_id;
	bool has_location, no_fields;
	uint32_t name, kind;
	uint64_t *fields;
	size_t n_fields;
};

struct root {
	uint64_t object_id;
	uint32_t type;
};

/* A row waiting for its class (deferred size / reference names). */
struct pending_row {
	int64_t class_row, row;
};

/* The dump in progress on one sequence. */
struct hg_seq {
	uint32_t seq_id;
	bool live;
	int64_t upid, ts; /* 0: not yet known, as Perfetto */
	uint64_t last_object_id;
	uint32_t last_heap_type;
	bool has_prev_index, truncated, has_heap_size;
	uint64_t prev_index;
	int64_t heap_size;
	size_t first_object_row;
	struct hmap objects;   /* object id -> heap_graph_object row */
	struct hmap classes;   /* type id -> heap_graph_class row */
	struct hmap type_idx;  /* type id -> index in types */
	struct hmap fields;    /* field iid -> name << 32 | type name */
	struct hmap locations; /* location iid -> string id */
	struct hmap field_refs; /* field iid -> head in links (references to name) */
	struct hmap nar_size;  /* object row -> NativeAllocationRegistry size */
	struct itype *types;
	size_t n_types, cap_types;
	struct root *roots;
	size_t n_roots, cap_roots;
	uint64_t *vm_roots;
	size_t n_vm_roots, cap_vm_roots;
	struct pending_row *dsize, *drefs;
	size_t n_dsize, cap_dsize, n_drefs, cap_drefs;
};

/* Singly linked lists of rows, heads in hash maps. */
struct link {
	int64_t row;
	int64_t next; /* index in links, or NONE */
};

struct tp_heap_graph {
	struct hg_seq *seqs;
	size_t n_seqs, cap_seqs;
	struct link *links;
	size_t n_links, cap_links;
	struct hmap field_rows; /* field name -> head: references with that name */
	struct hmap class_rows; /* package << 32 | normalized name -> head: classes */
	uint8_t *maps;          /* DeobfuscationMapping payloads, length-prefixed */
	size_t maps_len, maps_cap;
	uint32_t s_root[N_ROOT_TYPES], s_kind[N_KINDS], s_heap[4];
	uint32_t s_referent, s_thunk, s_this0, s_next, s_superclass, s_runtime_internal;
};

/* --------------------------------------------------------------- helpers ---- */

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

static void link_push(struct tp_heap_graph *g, struct hmap *heads, uint64_t key, int64_t row)
{
	uint64_t head;

	if (!grow((void **)&g->links, &g->cap_links, g->n_links, sizeof(*g->links)))
		return;
	g->links[g->n_links].row = row;
	g->links[g->n_links].next = hmap_get(heads, key, &head) ? (int64_t)head : NONE;
	if (hmap_put(heads, key, g->n_links) >= 0)
		g->n_links++;
}

static void seq_free(struct hg_seq *s)
{
	hmap_fini(&s->objects);
	hmap_fini(&s->classes);
	hmap_fini(&s->type_idx);
	hmap_fini(&s->fields);
	hmap_fini(&s->locations);
	hmap_fini(&s->field_refs);
	hmap_fini(&s->nar_size);
	for (size_t i = 0; i < s->n_types; i++)
		free(s->types[i].fields);
	free(s->types);
	free(s->roots);
	free(s->vm_roots);
	free(s->dsize);
	free(s->drefs);
	memset(s, 0, sizeof(*s));
}

void tp_heap_graph_fini(struct tp_profiling *p)
{
	struct tp_heap_graph *g = p->graph;

	if (!g)
		return;
	for (size_t i = 0; i < g->n_seqs; i++)
		seq_free(&g->seqs[i]);
	free(g->seqs);
	free(g->links);
	hmap_fini(&g->field_rows);
	hmap_fini(&g->class_rows);
	free(g->maps);
	free(g);
	p->graph = NULL;
}

static struct tp_heap_graph *graph_state(struct tp_import *imp)
{
	struct tp_profiling *p = tp_prof_state(imp);
	struct tp_heap_graph *g;

	if (!p)
		return NULL;
	if (p->graph)
		return p->graph;
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	for (size_t i = 0; i < N_ROOT_TYPES; i++)
		g->s_root[i] = tp_db_str(imp->db, k_root_types[i]);
	for (size_t i = 0; i < N_KINDS; i++)
		g->s_kind[i] = tp_db_str(imp->db, k_kinds[i]);
	for (size_t i = 0; i < 4; i++)
		g->s_heap[i] = tp_db_str(imp->db, k_heap_types[i]);
	g->s_referent = tp_db_str(imp->db, "java.lang.ref.Reference.referent");
	g->s_thunk = tp_db_str(imp->db, "sun.misc.Cleaner.thunk");
	g->s_this0 = tp_db_str(imp->db, "libcore.util.NativeAllocationRegistry$CleanerThunk.this$0");
	g->s_next = tp_db_str(imp->db, "sun.misc.Cleaner.next");
	g->s_superclass = tp_db_str(imp->db, "java.lang.Class.superClass");
	g->s_runtime_internal = tp_db_str(imp->db, "runtimeInternalObjects");
	p->graph = g;
	return g;
}

static struct hg_seq *seq_get(struct tp_heap_graph *g, uint32_t seq_id)
{
	struct hg_seq *free_slot = NULL;

	for (size_t i = 0; i < g->n_seqs; i++) {
		if (g->seqs[i].live && g->seqs[i].seq_id == seq_id)
			return &g->seqs[i];
		if (!g->seqs[i].live && !free_slot)
			free_slot = &g->seqs[i];
	}
	if (!free_slot) {
		if (!grow((void **)&g->seqs, &g->cap_seqs, g->n_seqs, sizeof(*g->seqs)))
			return NULL;
		free_slot = &g->seqs[g->n_seqs++];
	}
	memset(free_slot, 0, sizeof(*free_slot));
	free_slot->live = true;
	free_slot->seq_id = seq_id;
	free_slot->first_object_row = SIZE_MAX;
	return free_slot;
}

/* Java type names: "java.lang.Class<T>" is T's class object; "[]" suffixes arrays. */
struct norm {
	const char *name;
	size_t len, arrays;
	bool is_static_class;
};

static struct norm normalize(const char *s)
{
	static const char k_cls[] = "java.lang.Class<";
	struct norm n = {s ? s : "", s ? strlen(s) : 0, 0, false};

	if (n.len > sizeof(k_cls) - 1 && n.name[n.len - 1] == '>' &&
	    memcmp(n.name, k_cls, sizeof(k_cls) - 1) == 0) {
		n.name += sizeof(k_cls) - 1;
		n.len -= sizeof(k_cls);
		n.is_static_class = true;
	}
	while (n.len >= 2 * (n.arrays + 1) &&
	       memcmp(n.name + n.len - 2 * (n.arrays + 1), "[]", 2) == 0)
		n.arrays++;
	n.len -= 2 * n.arrays;
	return n;
}

static uint32_t intern_norm(struct tp_import *imp, const struct norm *n)
{
	return tp_str_intern(&imp->db->strings, n->name, n->len);
}

/*
 * The app package of a class's location: /data/app/[~~X/]pkg-Y/... or a
 * dex extracted in memory from such a path. Return: its string id, or 0.
 */
uint32_t tp_prof_package_of_location(struct tp_import *imp, const char *loc)
{
	static const char k_app[] = "/data/app/";
	static const char k_inmem[] = "dex extracted in memory from /data/app/";
	const char *p, *start, *slash, *end, *minus;
	size_t len;

	if (!loc)
		return 0;
	if (strncmp(loc, k_app, sizeof(k_app) - 1) == 0) {
		p = loc;
	} else {
		p = strstr(loc, k_inmem);
		if (!p)
			return 0;
		p += sizeof(k_inmem) - sizeof(k_app);
	}
	p += sizeof(k_app) - 1;
	start = p;
	if (*p == '~') {
		slash = strchr(p, '/');
		if (!slash)
			goto bad;
		start = slash + 1;
	}
	if (!*start)
		goto bad;
	end = strchr(start + 1, '/');
	if (!end)
		goto bad;
	/* Perfetto takes (end - p) bytes from start: the '-' may lie past end. */
	len = strlen(start);
	if ((size_t)(end - p) < len)
		len = (size_t)(end - p);
	minus = memchr(start, '-', len);
	if (!minus)
		goto bad;
	return tp_str_intern(&imp->db->strings, start, (size_t)(minus - start));
bad:
	tp_stat_add(imp, "deobfuscate_location_parse_error", -1, 0, 1);
	return 0;
}

/* ------------------------------------------------------------- the rows ---- */

static int64_t object_row(struct tp_import *imp, struct hg_seq *s, uint64_t object_id)
{
	struct tp_table *t = &imp->db->heap_graph_object;
	uint64_t row;
	int64_t r;

	if (hmap_get(&s->objects, object_id, &row))
		return (int64_t)row;
	r = tp_table_append(t);
	if (r < 0)
		return NONE;
	if (s->first_object_row == SIZE_MAX)
		s->first_object_row = (size_t)r;
	tp_set_int(t, HGO_UPID, (size_t)r, s->upid);
	tp_set_int(t, HGO_GRAPH_SAMPLE_TS, (size_t)r, s->ts);
	tp_set_int(t, HGO_SELF_SIZE, (size_t)r, -1);
	tp_set_int(t, HGO_NATIVE_SIZE, (size_t)r, 0);
	tp_set_int(t, HGO_REACHABLE, (size_t)r, 0);
	tp_set_int(t, HGO_TYPE_ID, (size_t)r, 0);
	tp_set_int(t, HGO_ROOT_DISTANCE, (size_t)r, -1);
	if (hmap_put(&s->objects, object_id, (uint64_t)r) < 0)
		return NONE;
	return r;
}

static int64_t class_row(struct tp_import *imp, struct hg_seq *s, uint64_t type_id)
{
	uint64_t row;
	int64_t r;

	if (hmap_get(&s->classes, type_id, &row))
		return (int64_t)row;
	r = tp_table_append(&imp->db->heap_graph_class);
	if (r < 0 || hmap_put(&s->classes, type_id, (uint64_t)r) < 0)
		return NONE;
	return r;
}

/* Perfetto's rule: a dump belongs to one process at one time. */
static bool set_pid_ts(struct tp_import *imp, struct hg_seq *s, int64_t upid, int64_t ts)
{
	if ((s->upid != 0 && s->upid != upid) || (s->ts != 0 && s->ts != ts)) {
		tp_stat_add(imp, "heap_graph_non_finalized_graph", -1, 0, 1);
		return false;
	}
	s->upid = upid;
	s->ts = ts;
	return true;
}

/* Reads a repeated uint64 (packed or not) field into *@arr. */
static bool push_u64(uint64_t **arr, size_t *n, size_t *cap, const struct pz_field *f)
{
	if (f->wire_type == PZ_WIRE_LEN) {
		struct pz_packed it;
		uint64_t v;
		int rc;

		pz_packed_init(&it, f);
		while ((rc = pz_packed_next_varint(&it, &v)) > 0) {
			if (!grow((void **)arr, cap, *n, sizeof(**arr)))
				return false;
			(*arr)[(*n)++] = v;
		}
		return rc == 0;
	}
	if (f->wire_type != PZ_WIRE_VARINT)
		return false;
	if (!grow((void **)arr, cap, *n, sizeof(**arr)))
		return false;
	(*arr)[(*n)++] = f->value;
	return true;
}

struct obj {
	uint64_t id, type_id, self_size, base;
	uint32_t heap_type;
	bool has_nar;
	int64_t nar;
	bool has_bitmap[4]; /* id, source id, width, height */
	int64_t bitmap[4];
	uint64_t *field_ids, *refs, *internal;
	size_t n_field_ids, n_refs, n_internal, cap_f, cap_r, cap_i;
};

/* A Bitmap's primitive fields: one field set, named by an object data row. */
static void bitmap_fields(struct tp_import *imp, const struct obj *o, int64_t owner)
{
	static const char *const k_names[4] = {
		"android.graphics.Bitmap.mId", "android.graphics.Bitmap.mSourceId",
		"android.graphics.Bitmap.mWidth", "android.graphics.Bitmap.mHeight",
	};
	struct tp_table *prim = &imp->db->heap_graph_primitive;
	struct tp_table *data = &imp->db->heap_graph_object_data;
	int64_t set = (int64_t)prim->n_rows, d;

	if (!o->has_bitmap[0] && !o->has_bitmap[1] && !o->has_bitmap[2] && !o->has_bitmap[3])
		return;
	for (int i = 0; i < 4; i++) {
		int64_t r;

		if (!o->has_bitmap[i])
			continue;
		r = tp_table_append(prim);
		if (r < 0)
			return;
		tp_set_int(prim, HGP_FIELD_SET_ID, (size_t)r, set);
		tp_set_str(prim, HGP_FIELD_NAME, (size_t)r, tp_db_str(imp->db, k_names[i]));
		tp_set_str(prim, HGP_FIELD_TYPE, (size_t)r, tp_db_str(imp->db, i < 2 ? "long" : "int"));
		tp_set_int(prim, i < 2 ? HGP_LONG_VALUE : HGP_INT_VALUE, (size_t)r, o->bitmap[i]);
	}
	d = tp_table_append(data);
	if (d < 0)
		return;
	tp_set_int(data, HGD_FIELD_SET_ID, (size_t)d, set);
	tp_set_int(&imp->db->heap_graph_object, HGO_OBJECT_DATA_ID, (size_t)owner, d);
}

static void add_object(struct tp_import *imp, struct tp_heap_graph *g, struct hg_seq *s,
		       const struct obj *o)
{
	struct tp_table *objs = &imp->db->heap_graph_object;
	struct tp_table *refs = &imp->db->heap_graph_reference;
	int64_t owner, cls, rsid;
	bool any_refs = false, any_internal = false;

	s->last_object_id = o->id;
	s->last_heap_type = o->heap_type;
	owner = object_row(imp, s, o->id);
	cls = class_row(imp, s, o->type_id);
	if (owner < 0 || cls < 0)
		return;
	tp_set_int(objs, HGO_SELF_SIZE, (size_t)owner, (int64_t)o->self_size);
	tp_set_int(objs, HGO_TYPE_ID, (size_t)owner, cls);
	if (o->heap_type != HEAP_UNKNOWN && o->heap_type < 4) {
		tp_set_str(objs, HGO_HEAP_TYPE, (size_t)owner, g->s_heap[o->heap_type]);
		if (o->heap_type == HEAP_ZYGOTE || o->heap_type == HEAP_BOOT_IMAGE) {
			if (grow((void **)&s->vm_roots, &s->cap_vm_roots, s->n_vm_roots,
				 sizeof(*s->vm_roots)))
				s->vm_roots[s->n_vm_roots++] = o->id;
		}
	}
	if (o->self_size == 0 &&
	    grow((void **)&s->dsize, &s->cap_dsize, s->n_dsize, sizeof(*s->dsize)))
		s->dsize[s->n_dsize++] = (struct pending_row){cls, owner};
	rsid = (int64_t)refs->n_rows;
	for (size_t i = 0; i < o->n_refs; i++) {
		int64_t owned = o->refs[i] ? object_row(imp, s, o->refs[i]) : NONE;
		int64_t r = tp_table_append(refs);

		if (r < 0)
			return;
		tp_set_int(refs, HGR_REFERENCE_SET_ID, (size_t)r, rsid);
		tp_set_int(refs, HGR_OWNER_ID, (size_t)r, owner);
		if (owned >= 0)
			tp_set_int(refs, HGR_OWNED_ID, (size_t)r, owned);
		if (o->n_field_ids)
			link_push(g, &s->field_refs, o->field_ids[i], r);
		any_refs = true;
	}
	for (size_t i = 0; i < o->n_internal; i++) {
		int64_t owned = object_row(imp, s, o->internal[i]);
		int64_t r = tp_table_append(refs);

		if (r < 0 || owned < 0)
			return;
		tp_set_int(refs, HGR_REFERENCE_SET_ID, (size_t)r, rsid);
		tp_set_int(refs, HGR_OWNER_ID, (size_t)r, owner);
		tp_set_int(refs, HGR_OWNED_ID, (size_t)r, owned);
		tp_set_str(refs, HGR_FIELD_NAME, (size_t)r, g->s_runtime_internal);
		any_internal = true;
	}
	if (any_refs || any_internal)
		tp_set_int(objs, HGO_REFERENCE_SET_ID, (size_t)owner, rsid);
	if (any_refs && !o->n_field_ids &&
	    grow((void **)&s->drefs, &s->cap_drefs, s->n_drefs, sizeof(*s->drefs)))
		s->drefs[s->n_drefs++] = (struct pending_row){cls, owner};
	if (o->has_nar)
		hmap_put(&s->nar_size, (uint64_t)owner, (uint64_t)o->nar);
	bitmap_fields(imp, o, owner);
}

/* Return: false if the packet's remaining objects must be dropped (Perfetto stops there). */
static bool parse_object(struct tp_import *imp, struct tp_heap_graph *g, struct hg_seq *s,
			 int64_t upid, int64_t ts, const struct pz_field *blob)
{
	struct obj o;
	struct pz_reader r;
	struct pz_field f;
	bool has_id_delta = false, has_heap = false, bad = false;
	uint64_t id_delta = 0;

	memset(&o, 0, sizeof(o));
	pz_reader_init(&r, blob->data, blob->size);
	while (pz_reader_next(&r, &f) > 0 && !bad) {
		switch (f.id) {
		case PB_HEAP_GRAPH_OBJECT__ID: o.id = f.value; break;
		case PB_HEAP_GRAPH_OBJECT__ID_DELTA: id_delta = f.value; has_id_delta = true; break;
		case PB_HEAP_GRAPH_OBJECT__TYPE_ID: o.type_id = f.value; break;
		case PB_HEAP_GRAPH_OBJECT__SELF_SIZE: o.self_size = f.value; break;
		case PB_HEAP_GRAPH_OBJECT__REFERENCE_FIELD_ID_BASE: o.base = f.value; break;
		case PB_HEAP_GRAPH_OBJECT__HEAP_TYPE_DELTA:
			o.heap_type = (uint32_t)f.value;
			has_heap = true;
			break;
		case PB_HEAP_GRAPH_OBJECT__NATIVE_ALLOCATION_REGISTRY_SIZE_FIELD:
			o.nar = (int64_t)f.value;
			o.has_nar = true;
			break;
		case PB_HEAP_GRAPH_OBJECT__BITMAP_ID_FIELD:
		case PB_HEAP_GRAPH_OBJECT__BITMAP_SOURCE_ID_FIELD:
			o.has_bitmap[f.id == PB_HEAP_GRAPH_OBJECT__BITMAP_ID_FIELD ? 0 : 1] = true;
			o.bitmap[f.id == PB_HEAP_GRAPH_OBJECT__BITMAP_ID_FIELD ? 0 : 1] = (int64_t)f.value;
			break;
		case PB_HEAP_GRAPH_OBJECT__BITMAP_WIDTH_FIELD:
		case PB_HEAP_GRAPH_OBJECT__BITMAP_HEIGHT_FIELD:
			o.has_bitmap[f.id == PB_HEAP_GRAPH_OBJECT__BITMAP_WIDTH_FIELD ? 2 : 3] = true;
			o.bitmap[f.id == PB_HEAP_GRAPH_OBJECT__BITMAP_WIDTH_FIELD ? 2 : 3] =
				(uint32_t)f.value;
			break;
		case PB_HEAP_GRAPH_OBJECT__REFERENCE_FIELD_ID:
			bad = !push_u64(&o.field_ids, &o.n_field_ids, &o.cap_f, &f);
			break;
		case PB_HEAP_GRAPH_OBJECT__REFERENCE_OBJECT_ID:
			bad = !push_u64(&o.refs, &o.n_refs, &o.cap_r, &f);
			break;
		case PB_HEAP_GRAPH_OBJECT__RUNTIME_INTERNAL_OBJECT_ID:
			bad = !push_u64(&o.internal, &o.n_internal, &o.cap_i, &f);
			break;
		default:
			break;
		}
	}
	if (has_id_delta && id_delta)
		o.id = s->last_object_id + id_delta;
	if (!has_heap)
		o.heap_type = s->last_heap_type;
	for (size_t i = 0; i < o.n_refs; i++) {
		if (o.refs[i])
			o.refs[i] += o.base;
	}
	if (bad || (o.n_field_ids && o.n_field_ids != o.n_refs))
		tp_stat_add(imp, "heap_graph_malformed_packet", upid, 0, 1);
	else if (set_pid_ts(imp, s, upid, ts))
		add_object(imp, g, s, &o);
	free(o.field_ids);
	free(o.refs);
	free(o.internal);
	return !bad;
}

static void parse_type(struct tp_import *imp, struct hg_seq *s, int64_t upid,
		       const struct pz_field *blob)
{
	struct itype t;
	struct pz_reader r;
	struct pz_field f;
	size_t cap = 0;
	uint64_t kind = 0, idx;
	bool bad = false;

	memset(&t, 0, sizeof(t));
	pz_reader_init(&r, blob->data, blob->size);
	while (pz_reader_next(&r, &f) > 0 && !bad) {
		switch (f.id) {
		case PB_HEAP_GRAPH_TYPE__ID: t.id = f.value; break;
		case PB_HEAP_GRAPH_TYPE__LOCATION_ID:
			t.location_id = f.value;
			t.has_location = true;
			break;
		case PB_HEAP_GRAPH_TYPE__CLASS_NAME:
			if (f.wire_type == PZ_WIRE_LEN)
				t.name = tp_str_intern(&imp->db->strings, (const char *)f.data, f.size);
			break;
		case PB_HEAP_GRAPH_TYPE__OBJECT_SIZE: t.object_size = f.value; break;
		case PB_HEAP_GRAPH_TYPE__SUPERCLASS_ID: t.superclass_id = f.value; break;
		case PB_HEAP_GRAPH_TYPE__CLASSLOADER_ID: t.classloader_id = f.value; break;
		case PB_HEAP_GRAPH_TYPE__KIND: kind = f.value; break;
		case PB_HEAP_GRAPH_TYPE__REFERENCE_FIELD_ID:
			bad = !push_u64(&t.fields, &t.n_fields, &cap, &f);
			break;
		default:
			break;
		}
	}
	if (bad) {
		free(t.fields);
		tp_stat_add(imp, "heap_graph_malformed_packet", upid, 0, 1);
		return;
	}
	t.no_fields = kind == KIND_NOREFERENCES || kind == KIND_ARRAY || kind == KIND_STRING;
	t.kind = kind < N_KINDS ? (uint32_t)kind : 0;
	if (hmap_get(&s->type_idx, t.id, &idx)) {
		free(s->types[idx].fields);
		s->types[idx] = t;
		return;
	}
	if (!grow((void **)&s->types, &s->cap_types, s->n_types, sizeof(*s->types)) ||
	    hmap_put(&s->type_idx, t.id, s->n_types) < 0) {
		free(t.fields);
		return;
	}
	s->types[s->n_types++] = t;
}

/* InternedString {iid, str}. Return: false if it has no iid. */
static bool interned(const struct pz_field *blob, uint64_t *iid, const char **str, size_t *len)
{
	struct pz_reader r;
	struct pz_field f;

	*iid = 0;
	*str = "";
	*len = 0;
	pz_reader_init(&r, blob->data, blob->size);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id == PB_INTERNED_STRING__IID && f.wire_type == PZ_WIRE_VARINT) {
			*iid = f.value;
		} else if (f.id == PB_INTERNED_STRING__STR && f.wire_type == PZ_WIRE_LEN) {
			*str = (const char *)f.data;
			*len = f.size;
		}
	}
	return true;
}

/* A field name "[type ]Class.field"; names the references waiting for it. */
static void field_name(struct tp_import *imp, struct tp_heap_graph *g, struct hg_seq *s,
		       const struct pz_field *blob)
{
	struct tp_table *refs = &imp->db->heap_graph_reference;
	const char *str, *space;
	size_t len;
	uint64_t iid, head;
	uint32_t name, type;

	interned(blob, &iid, &str, &len);
	space = memchr(str, ' ', len);
	if (space) {
		type = tp_str_intern(&imp->db->strings, str, (size_t)(space - str));
		name = tp_str_intern(&imp->db->strings, space + 1, len - (size_t)(space - str) - 1);
	} else {
		type = TP_NULL_STR;
		name = tp_str_intern(&imp->db->strings, str, len);
	}
	hmap_put(&s->fields, iid, (uint64_t)name << 32 | type);
	if (!hmap_get(&s->field_refs, iid, &head))
		return;
	for (int64_t i = (int64_t)head; i != NONE; i = g->links[i].next) {
		size_t row = (size_t)g->links[i].row;

		tp_set_str(refs, HGR_FIELD_NAME, row, name);
		tp_set_str(refs, HGR_FIELD_TYPE_NAME, row, type);
		link_push(g, &g->field_rows, name, (int64_t)row);
	}
}

static void parse_root(struct tp_import *imp, struct hg_seq *s, int64_t upid, int64_t ts,
		       const struct pz_field *blob, bool *stop)
{
	struct pz_reader r;
	struct pz_field f;
	uint64_t *ids = NULL, type = 0;
	size_t n = 0, cap = 0;
	bool bad = false;

	pz_reader_init(&r, blob->data, blob->size);
	while (pz_reader_next(&r, &f) > 0 && !bad) {
		if (f.id == PB_HEAP_GRAPH_ROOT__OBJECT_IDS)
			bad = !push_u64(&ids, &n, &cap, &f);
		else if (f.id == PB_HEAP_GRAPH_ROOT__ROOT_TYPE)
			type = f.value;
	}
	if (type >= N_ROOT_TYPES)
		type = 0;
	if (bad) {
		tp_stat_add(imp, "heap_graph_malformed_packet", upid, 0, 1);
		*stop = true;
	} else if (set_pid_ts(imp, s, upid, ts)) {
		for (size_t i = 0; i < n; i++) {
			if (!grow((void **)&s->roots, &s->cap_roots, s->n_roots, sizeof(*s->roots)))
				break;
			s->roots[s->n_roots++] = (struct root){ids[i], (uint32_t)type};
		}
	}
	free(ids);
}

/* ------------------------------------------------------------ finalize ---- */

/* The first reference of @obj named @field: its owned row (NONE if null or absent). */
static int64_t ref_by_field(struct tp_import *imp, int64_t obj, uint32_t field, bool *found)
{
	struct tp_table *objs = &imp->db->heap_graph_object;
	struct tp_table *refs = &imp->db->heap_graph_reference;
	int64_t rsid = tp_get_int(objs, HGO_REFERENCE_SET_ID, (size_t)obj);

	*found = false;
	if (rsid == TP_NULL_INT)
		return NONE;
	for (size_t r = (size_t)rsid; r < refs->n_rows &&
	     tp_get_int(refs, HGR_REFERENCE_SET_ID, r) == rsid; r++) {
		if (tp_get_str(refs, HGR_FIELD_NAME, r) == field) {
			int64_t owned = tp_get_int(refs, HGR_OWNED_ID, r);

			*found = true;
			return owned == TP_NULL_INT ? NONE : owned;
		}
	}
	return NONE;
}

static struct itype *type_by_id(struct hg_seq *s, uint64_t id)
{
	uint64_t idx;

	return hmap_get(&s->type_idx, id, &idx) ? &s->types[idx] : NULL;
}

/* Names the references of @obj (given without field ids) from its class chain. */
static void name_refs(struct tp_import *imp, struct tp_heap_graph *g, struct hg_seq *s,
		      const struct itype *type, int64_t obj)
{
	struct tp_table *objs = &imp->db->heap_graph_object;
	struct tp_table *refs = &imp->db->heap_graph_reference;
	int64_t rsid = tp_get_int(objs, HGO_REFERENCE_SET_ID, (size_t)obj);
	const struct itype *cur = type;
	size_t off = 0;

	if (rsid == TP_NULL_INT || type->no_fields)
		return;
	for (size_t r = (size_t)rsid; r < refs->n_rows &&
	     tp_get_int(refs, HGR_REFERENCE_SET_ID, r) == rsid; r++) {
		uint64_t v;

		while (cur && off >= cur->n_fields) {
			size_t prev = cur->n_fields;

			cur = cur->superclass_id ? type_by_id(s, cur->superclass_id) : NULL;
			if (!cur)
				tp_stat_add(imp, "heap_graph_malformed_packet", s->upid, 0, 1);
			off -= prev;
		}
		if (!cur)
			return;
		if (!hmap_get(&s->fields, cur->fields[off++], &v)) {
			tp_stat_add(imp, "heap_graph_malformed_packet", s->upid, 0, 1);
			continue;
		}
		tp_set_str(refs, HGR_FIELD_NAME, r, (uint32_t)(v >> 32));
		tp_set_str(refs, HGR_FIELD_TYPE_NAME, r, (uint32_t)v);
		link_push(g, &g->field_rows, v >> 32, (int64_t)r);
	}
}

static size_t rank_root(const struct tp_heap_graph *g, uint32_t type)
{
	/* Sticky class, JNI global, JNI local win over the rest, in this order. */
	static const int k_order[] = {5, 1, 2};
	size_t i;

	for (i = 0; i < 3; i++) {
		if (type == g->s_root[k_order[i]])
			break;
	}
	return i;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Marks @obj a root of @type and everything it reaches reachable. */
static void mark_root(struct tp_import *imp, struct tp_heap_graph *g, int64_t obj, uint32_t type)
{
	struct tp_table *objs = &imp->db->heap_graph_object;
	struct tp_table *refs = &imp->db->heap_graph_reference;
	struct tp_table *cls = &imp->db->heap_graph_class;
	uint32_t cur_type = tp_get_str(objs, HGO_ROOT_TYPE, (size_t)obj);
	int64_t *stack = NULL, *kids = NULL;
	size_t n = 0, cap = 0, nk = 0, capk = 0;

	if (cur_type != TP_NULL_STR) {
		if (rank_root(g, type) < rank_root(g, cur_type))
			tp_set_str(objs, HGO_ROOT_TYPE, (size_t)obj, type);
		return;
	}
	tp_set_str(objs, HGO_ROOT_TYPE, (size_t)obj, type);
	if (!grow((void **)&stack, &cap, n, sizeof(*stack)))
		return;
	stack[n++] = obj;
	while (n) {
		int64_t o = stack[--n], rsid, c;
		uint32_t kind;
		bool weak;

		if (tp_get_int(objs, HGO_REACHABLE, (size_t)o) == 1)
			continue;
		tp_set_int(objs, HGO_REACHABLE, (size_t)o, 1);
		rsid = tp_get_int(objs, HGO_REFERENCE_SET_ID, (size_t)o);
		if (rsid == TP_NULL_INT)
			continue;
		c = tp_get_int(objs, HGO_TYPE_ID, (size_t)o);
		kind = c >= 0 && (size_t)c < cls->n_rows ? tp_get_str(cls, HGC_KIND, (size_t)c)
							: TP_NULL_STR;
		weak = kind == g->s_kind[KIND_WEAK] || kind == g->s_kind[KIND_FINALIZER] ||
		       kind == g->s_kind[KIND_PHANTOM];
		nk = 0;
		for (size_t r = (size_t)rsid; r < refs->n_rows &&
		     tp_get_int(refs, HGR_REFERENCE_SET_ID, r) == rsid; r++) {
			int64_t owned = tp_get_int(refs, HGR_OWNED_ID, r);

			if (owned == TP_NULL_INT)
				continue;
			if (weak && tp_get_str(refs, HGR_FIELD_NAME, r) == g->s_referent)
				continue;
			if (!grow((void **)&kids, &capk, nk, sizeof(*kids)))
				break;
			kids[nk++] = owned;
		}
		if (nk > 1)
			sort_n(kids, nk, sizeof(*kids), cmp_i64);
		for (size_t i = 0; i < nk; i++) {
			if (i && kids[i] == kids[i - 1])
				continue;
			if (!grow((void **)&stack, &cap, n, sizeof(*stack)))
				break;
			stack[n++] = kids[i];
		}
	}
	free(stack);
	free(kids);
}

/* A class as Perfetto compares them: name and location. */
struct desc {
	uint32_t name, location;
};

/* superClass links of this dump's class objects: class -> superclass. */
static void superclasses(struct tp_import *imp, struct hg_seq *s)
{
	struct tp_table *objs = &imp->db->heap_graph_object;
	struct tp_table *cls = &imp->db->heap_graph_class;
	struct tp_heap_graph *g = tp_prof_state(imp)->graph;
	struct hmap sup = HMAP_INIT;   /* name << 32 | location -> super's, same packing */
	struct hmap by_desc = HMAP_INIT; /* name << 32 | location -> class row */
	uint64_t v;

	if (s->first_object_row == SIZE_MAX)
		return;
	for (size_t o = s->first_object_row; o < objs->n_rows; o++) {
		int64_t c = tp_get_int(objs, HGO_TYPE_ID, o), super, sc;
		struct norm n, sn;
		bool found;

		if (tp_get_int(objs, HGO_UPID, o) != s->upid ||
		    tp_get_int(objs, HGO_GRAPH_SAMPLE_TS, o) != s->ts)
			continue;
		n = normalize(tp_str_get(&imp->db->strings, tp_get_str(cls, HGC_NAME, (size_t)c)));
		if (!n.is_static_class || n.arrays)
			continue;
		super = ref_by_field(imp, (int64_t)o, g->s_superclass, &found);
		if (super < 0)
			continue;
		sc = tp_get_int(objs, HGO_TYPE_ID, (size_t)super);
		sn = normalize(tp_str_get(&imp->db->strings, tp_get_str(cls, HGC_NAME, (size_t)sc)));
		hmap_put(&sup, (uint64_t)intern_norm(imp, &n) << 32 | tp_get_str(cls, HGC_LOCATION, (size_t)c),
			 (uint64_t)intern_norm(imp, &sn) << 32 |
				 tp_get_str(cls, HGC_LOCATION, (size_t)sc));
	}
	if (!hmap_len(&sup))
		goto out;
	for (size_t c = 0; c < cls->n_rows; c++)
		hmap_put(&by_desc, (uint64_t)tp_get_str(cls, HGC_NAME, c) << 32 |
				   tp_get_str(cls, HGC_LOCATION, c), c);
	for (size_t c = 0; c < cls->n_rows; c++) {
		struct norm n = normalize(tp_str_get(&imp->db->strings, tp_get_str(cls, HGC_NAME, c)));
		uint64_t row;

		if (n.is_static_class || n.arrays)
			continue;
		if (!hmap_get(&sup, (uint64_t)intern_norm(imp, &n) << 32 |
					    tp_get_str(cls, HGC_LOCATION, c), &v))
			continue;
		if (hmap_get(&by_desc, v, &row))
			tp_set_int(cls, HGC_SUPERCLASS_ID, c, (int64_t)row);
	}
out:
	hmap_fini(&sup);
	hmap_fini(&by_desc);
}

/* Native sizes of the objects sun.misc.Cleaners clean. */
static void native_sizes(struct tp_import *imp, struct tp_heap_graph *g, struct hg_seq *s)
{
	struct tp_table *objs = &imp->db->heap_graph_object;
	struct tp_table *cls = &imp->db->heap_graph_class;
	uint32_t cleaner = tp_str_find(&imp->db->strings, "sun.misc.Cleaner", 16);

	if (!cleaner || s->first_object_row == SIZE_MAX || !hmap_len(&s->nar_size))
		return;
	for (size_t o = s->first_object_row; o < objs->n_rows; o++) {
		int64_t c = tp_get_int(objs, HGO_TYPE_ID, o), referent, thunk, next, this0;
		bool f1, f2, f3;
		uint64_t nar;

		if (tp_get_str(cls, HGC_NAME, (size_t)c) != cleaner ||
		    tp_get_int(objs, HGO_UPID, o) != s->upid ||
		    tp_get_int(objs, HGO_GRAPH_SAMPLE_TS, o) != s->ts)
			continue;
		referent = ref_by_field(imp, (int64_t)o, g->s_referent, &f1);
		thunk = ref_by_field(imp, (int64_t)o, g->s_thunk, &f2);
		if (referent < 0 || thunk < 0)
			continue;
		next = ref_by_field(imp, (int64_t)o, g->s_next, &f3);
		if (next == (int64_t)o)
			continue;
		this0 = ref_by_field(imp, thunk, g->s_this0, &f3);
		if (this0 < 0 || !hmap_get(&s->nar_size, (uint64_t)this0, &nar))
			continue;
		tp_set_int(objs, HGO_NATIVE_SIZE, (size_t)referent,
			   tp_get_int(objs, HGO_NATIVE_SIZE, (size_t)referent) +
				   (int64_t)(nar & ~(uint64_t)1));
	}
}

static int cmp_type(const void *a, const void *b)
{
	const struct itype *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The package of a class: from its location, else the process's app. */
static uint32_t class_package(struct tp_import *imp, struct hg_seq *s, uint32_t location)
{
	struct tp_table *proc = &imp->db->process, *pkg = &imp->db->package_list;
	uint32_t p = location ? tp_prof_package_of_location(imp, tp_str_get(&imp->db->strings, location)) : 0;
	int64_t appid;

	if (p || s->upid < 0 || (size_t)s->upid >= proc->n_rows)
		return p;
	appid = tp_get_int(proc, PROCESS_ANDROID_APPID, (size_t)s->upid);
	if (appid == TP_NULL_INT)
		return 0;
	for (size_t i = 0; i < pkg->n_rows; i++) {
		if (tp_get_int(pkg, PKG_UID, i) == appid)
			return tp_get_str(pkg, PKG_PACKAGE_NAME, i);
	}
	return 0;
}

static void finalize(struct tp_import *imp, struct tp_heap_graph *g, struct hg_seq *s)
{
	struct tp_table *objs = &imp->db->heap_graph_object;
	struct tp_table *cls = &imp->db->heap_graph_class;
	struct tp_table *hg = &imp->db->heap_graph;
	int64_t row = NONE;

	sort_n(s->types, s->n_types, sizeof(*s->types), cmp_type);
	hmap_clear(&s->type_idx);
	for (size_t i = 0; i < s->n_types; i++)
		hmap_put(&s->type_idx, s->types[i].id, i);
	for (size_t i = 0; i < s->n_types; i++) {
		const struct itype *t = &s->types[i];
		uint32_t location = 0;
		uint64_t v;
		int64_t c = class_row(imp, s, t->id);
		struct norm n;

		if (c < 0)
			continue;
		if (t->has_location) {
			if (hmap_get(&s->locations, t->location_id, &v))
				location = (uint32_t)v;
			else
				tp_stat_add(imp, "heap_graph_invalid_string_id", s->upid, 0, 1);
		}
		for (size_t k = 0; k < s->n_dsize; k++) {
			if (s->dsize[k].class_row == c) {
				tp_set_int(objs, HGO_SELF_SIZE, (size_t)s->dsize[k].row,
					   (int64_t)t->object_size);
				s->dsize[k].class_row = NONE;
			}
		}
		for (size_t k = 0; k < s->n_drefs; k++) {
			if (s->drefs[k].class_row == c) {
				name_refs(imp, g, s, t, s->drefs[k].row);
				s->drefs[k].class_row = NONE;
			}
		}
		tp_set_str(cls, HGC_NAME, (size_t)c, t->name);
		if (t->classloader_id) {
			int64_t o = object_row(imp, s, t->classloader_id);

			if (o >= 0)
				tp_set_int(cls, HGC_CLASSLOADER_ID, (size_t)c, o);
		}
		if (location)
			tp_set_str(cls, HGC_LOCATION, (size_t)c, location);
		tp_set_str(cls, HGC_KIND, (size_t)c, g->s_kind[t->kind]);
		n = normalize(tp_str_get(&imp->db->strings, t->name));
		link_push(g, &g->class_rows,
			  (uint64_t)class_package(imp, s, location) << 32 | intern_norm(imp, &n), c);
	}
	for (size_t k = 0; k < s->n_dsize || k < s->n_drefs; k++) {
		if ((k < s->n_dsize && s->dsize[k].class_row != NONE) ||
		    (k < s->n_drefs && s->drefs[k].class_row != NONE)) {
			tp_stat_add(imp, "heap_graph_malformed_packet", s->upid, 0, 1);
			break;
		}
	}
	for (size_t i = 0; i < s->n_roots; i++) {
		uint64_t o;

		if (hmap_get(&s->objects, s->roots[i].object_id, &o))
			mark_root(imp, g, (int64_t)o, g->s_root[s->roots[i].type]);
	}
	for (size_t i = 0; i < s->n_vm_roots; i++) {
		uint64_t o;

		if (hmap_get(&s->objects, s->vm_roots[i], &o))
			mark_root(imp, g, (int64_t)o, g->s_root[ROOT_VM_INTERNAL]);
	}
	superclasses(imp, s);
	native_sizes(imp, g, s);
	for (size_t r = 0; r < hg->n_rows; r++) {
		if (tp_get_int(hg, HG_UPID, r) == s->upid && tp_get_int(hg, HG_TS, r) == s->ts) {
			row = (int64_t)r;
			break;
		}
	}
	if (row < 0) {
		row = tp_table_append(hg);
		if (row >= 0) {
			tp_set_int(hg, HG_UPID, (size_t)row, s->upid);
			tp_set_int(hg, HG_TS, (size_t)row, s->ts);
			tp_set_int(hg, HG_TRUNCATED, (size_t)row, 0);
		}
	}
	if (row >= 0) {
		if (s->has_heap_size)
			tp_set_int(hg, HG_HEAP_SIZE, (size_t)row, s->heap_size);
		if (s->truncated)
			tp_set_int(hg, HG_TRUNCATED, (size_t)row, 1);
	}
	seq_free(s);
}

/* -------------------------------------------------------------- packets ---- */

void tp_heap_graph_packet(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
			  size_t len)
{
	struct tp_heap_graph *g = graph_state(imp);
	struct hg_seq *s;
	struct pz_reader r;
	struct pz_field f;
	int64_t pid = 0, upid;
	uint64_t index = 0;
	bool continued = false, stop_objects = false, stop_roots = false;

	if (!g)
		return;
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id == PB_HEAP_GRAPH__PID)
			pid = (int32_t)f.value;
		else if (f.id == PB_HEAP_GRAPH__INDEX)
			index = f.value;
		else if (f.id == PB_HEAP_GRAPH__CONTINUED)
			continued = f.value != 0;
	}
	s = seq_get(g, tp_seq_id(imp, ev->seq_idx));
	upid = tp_proc_get_process_main(imp, ev->machine, pid);
	if (!s || upid < 0)
		return;
	if ((!s->has_prev_index && index != 0) || (s->has_prev_index && s->prev_index + 1 != index)) {
		s->truncated = true;
		tp_stat_add(imp, "heap_graph_missing_packet", s->upid, ev->machine, 1);
	}
	s->has_prev_index = true;
	s->prev_index = index;
	/* The parts in Perfetto's order: objects, types, field and location names, roots. */
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id == PB_HEAP_GRAPH__HEAP_BYTES_ALLOCATED && f.wire_type == PZ_WIRE_VARINT) {
			s->heap_size = (int64_t)f.value;
			s->has_heap_size = true;
		} else if (f.id == PB_HEAP_GRAPH__OBJECTS && f.wire_type == PZ_WIRE_LEN &&
			   !stop_objects) {
			stop_objects = !parse_object(imp, g, s, upid, ev->ts, &f);
		}
	}
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id == PB_HEAP_GRAPH__TYPES && f.wire_type == PZ_WIRE_LEN)
			parse_type(imp, s, upid, &f);
	}
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id == PB_HEAP_GRAPH__FIELD_NAMES && f.wire_type == PZ_WIRE_LEN)
			field_name(imp, g, s, &f);
	}
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id == PB_HEAP_GRAPH__LOCATION_NAMES && f.wire_type == PZ_WIRE_LEN) {
			const char *str;
			size_t n;
			uint64_t iid;

			interned(&f, &iid, &str, &n);
			hmap_put(&s->locations, iid, tp_str_intern(&imp->db->strings, str, n));
		}
	}
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0 && !stop_roots) {
		if (f.id == PB_HEAP_GRAPH__ROOTS && f.wire_type == PZ_WIRE_LEN)
			parse_root(imp, s, upid, ev->ts, &f, &stop_roots);
	}
	if (!continued)
		finalize(imp, g, s);
}

void tp_deobfuscation_mapping(struct tp_import *imp, const uint8_t *data, size_t len)
{
	struct tp_heap_graph *g = graph_state(imp);
	uint32_t n = (uint32_t)len;

	if (!g || len > MAX_MAPPINGS_BYTES || g->maps_len + 4 + len > MAX_MAPPINGS_BYTES)
		return;
	if (g->maps_len + 4 + len > g->maps_cap) {
		size_t cap = (g->maps_len + 4 + len) * 2;
		uint8_t *m = realloc(g->maps, cap);

		if (!m)
			return;
		g->maps = m;
		g->maps_cap = cap;
	}
	memcpy(g->maps + g->maps_len, &n, 4);
	memcpy(g->maps + g->maps_len + 4, data, len);
	g->maps_len += 4 + len;
}

/* ------------------------------------------------------- deobfuscation ---- */

/* Sets deobfuscated_name on the classes (package, obfuscated name). */
static void deobf_classes(struct tp_import *imp, struct tp_heap_graph *g, uint32_t package,
			  uint32_t obf, const char *deobf, size_t deobf_len)
{
	struct tp_table *cls = &imp->db->heap_graph_class;
	uint64_t head;
	char *buf;

	if (!hmap_get(&g->class_rows, (uint64_t)package << 32 | obf, &head))
		return;
	for (int64_t i = (int64_t)head; i != NONE; i = g->links[i].next) {
		size_t c = (size_t)g->links[i].row;
		struct norm n = normalize(tp_str_get(&imp->db->strings, tp_get_str(cls, HGC_NAME, c)));
		size_t len = deobf_len + 2 * n.arrays + (n.is_static_class ? 17 : 0), o = 0;

		buf = malloc(len + 1);
		if (!buf)
			return;
		if (n.is_static_class) {
			memcpy(buf, "java.lang.Class<", 16);
			o = 16;
		}
		memcpy(buf + o, deobf, deobf_len);
		o += deobf_len;
		for (size_t k = 0; k < n.arrays; k++, o += 2)
			memcpy(buf + o, "[]", 2);
		if (n.is_static_class)
			buf[o++] = '>';
		tp_set_str(cls, HGC_DEOBFUSCATED_NAME, c, tp_str_intern(&imp->db->strings, buf, o));
		free(buf);
	}
}

static void deobf_member(struct tp_import *imp, struct tp_heap_graph *g,
			 const struct pz_field *cls_obf, const struct pz_field *cls_deobf,
			 const struct pz_field *blob)
{
	struct tp_table *refs = &imp->db->heap_graph_reference;
	struct pz_reader r;
	struct pz_field f, obf = {0}, deobf = {0};
	char *buf;
	size_t n;
	uint32_t id, name;
	uint64_t head;

	pz_reader_init(&r, blob->data, blob->size);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.wire_type != PZ_WIRE_LEN)
			continue;
		if (f.id == PB_OBFUSCATED_MEMBER__OBFUSCATED_NAME)
			obf = f;
		else if (f.id == PB_OBFUSCATED_MEMBER__DEOBFUSCATED_NAME)
			deobf = f;
	}
	n = cls_obf->size + 1 + obf.size;
	if (cls_deobf->size + 1 + deobf.size > n)
		n = cls_deobf->size + 1 + deobf.size;
	buf = malloc(n + 1);
	if (!buf)
		return;
	if (cls_obf->size)
		memcpy(buf, cls_obf->data, cls_obf->size);
	buf[cls_obf->size] = '.';
	if (obf.size)
		memcpy(buf + cls_obf->size + 1, obf.data, obf.size);
	id = tp_str_find(&imp->db->strings, buf, cls_obf->size + 1 + obf.size);
	if (!id || !hmap_get(&g->field_rows, id, &head))
		goto out;
	if (deobf.size && memchr(deobf.data, '.', deobf.size)) {
		name = tp_str_intern(&imp->db->strings, (const char *)deobf.data, deobf.size);
	} else {
		if (cls_deobf->size)
			memcpy(buf, cls_deobf->data, cls_deobf->size);
		buf[cls_deobf->size] = '.';
		if (deobf.size)
			memcpy(buf + cls_deobf->size + 1, deobf.data, deobf.size);
		name = tp_str_intern(&imp->db->strings, buf, cls_deobf->size + 1 + deobf.size);
	}
	for (int64_t i = (int64_t)head; i != NONE; i = g->links[i].next)
		tp_set_str(refs, HGR_DEOBFUSCATED_FIELD_NAME, (size_t)g->links[i].row, name);
out:
	free(buf);
}

static void deobfuscate(struct tp_import *imp, struct tp_heap_graph *g, const uint8_t *data,
			size_t len)
{
	struct pz_reader r, rc;
	struct pz_field f, c;
	uint32_t package = 0;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id == PB_DEOBFUSCATION_MAPPING__PACKAGE_NAME && f.wire_type == PZ_WIRE_LEN &&
		    f.size)
			package = tp_str_find(&imp->db->strings, (const char *)f.data, f.size);
	}
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		struct pz_field obf = {0}, deobf = {0};
		uint32_t obf_id;

		if (f.id != PB_DEOBFUSCATION_MAPPING__OBFUSCATED_CLASSES || f.wire_type != PZ_WIRE_LEN)
			continue;
		pz_reader_init(&rc, f.data, f.size);
		while (pz_reader_next(&rc, &c) > 0) {
			if (c.wire_type != PZ_WIRE_LEN)
				continue;
			if (c.id == PB_OBFUSCATED_CLASS__OBFUSCATED_NAME)
				obf = c;
			else if (c.id == PB_OBFUSCATED_CLASS__DEOBFUSCATED_NAME)
				deobf = c;
		}
		obf_id = obf.size ? tp_str_find(&imp->db->strings, (const char *)obf.data, obf.size)
				  : 0;
		if (obf_id) {
			deobf_classes(imp, g, 0, obf_id, (const char *)deobf.data, deobf.size);
			if (package)
				deobf_classes(imp, g, package, obf_id, (const char *)deobf.data,
					      deobf.size);
		}
		pz_reader_init(&rc, f.data, f.size);
		while (pz_reader_next(&rc, &c) > 0) {
			if (c.id == PB_OBFUSCATED_CLASS__OBFUSCATED_MEMBERS && c.wire_type == PZ_WIRE_LEN)
				deobf_member(imp, g, &obf, &deobf, &c);
		}
	}
}

void tp_heap_graph_finish(struct tp_import *imp)
{
	struct tp_profiling *p = tp_prof_state(imp);
	struct tp_heap_graph *g = p ? p->graph : NULL;
	bool any = false;

	if (!g)
		return;
	for (size_t i = 0; i < g->n_seqs; i++)
		any |= g->seqs[i].live;
	if (any)
		tp_stat_add(imp, "heap_graph_non_finalized_graph", -1, 0, 1);
	for (size_t i = 0; i < g->n_seqs; i++) {
		if (g->seqs[i].live)
			finalize(imp, g, &g->seqs[i]);
	}
	tp_prof_deobfuscate_frames(imp, g->maps, g->maps_len);
	for (size_t off = 0; off + 4 <= g->maps_len;) {
		uint32_t n;

		memcpy(&n, g->maps + off, 4);
		deobfuscate(imp, g, g->maps + off + 4, n);
		off += 4 + n;
	}
}

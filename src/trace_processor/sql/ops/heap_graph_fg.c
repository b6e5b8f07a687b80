// SPDX-License-Identifier: Apache-2.0
/*
 * heap_graph_fg.c - experimental_flamegraph(profile_type, ts, ts_constraint,
 * upid, upid_group, focus_str) for Java heap graphs ('graph'), as upstream
 * computes it: the dump of (upid, ts) is walked breadth first from its
 * roots (ordered by class name, then id; each object's references by the
 * referred object's id; the referent of a weak, finalizer or phantom
 * reference is not followed), each object hanging under the object that
 * reached it first. Each object is a frame named by its (deobfuscated)
 * class, plus " [ROOT_TYPE]" for roots, of size self_size; an object with
 * a native size has a child frame "[native] <name>" of that size. Frames
 * of the same name under the same merged parent merge (count and size
 * add up). Rows come out in the order their frames are first met when the
 * objects are taken by class row, then id (as upstream's query joins
 * them), a frame's parent before it; the native frames after all others. A dump with no roots gives no rows, or, when it
 * was truncated, the one row upstream prints to say so. Other profile
 * types are not supported (an error); focus_str keeps the frames whose
 * name contains it, their ancestors and descendants.
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "trace_processor/sql/ops/ops_int.h"
#include "trace_processor/storage/storage.h"

#define NONE UINT32_MAX

static const char *const k_cols[] = {
	"id INTEGER",
	"profile_type TEXT",
	"ts_in INTEGER",
	"ts_constraint TEXT",
	"upid INTEGER",
	"upid_group TEXT",
	"focus_str TEXT",
	"ts INTEGER",
	"depth INTEGER",
	"name TEXT",
	"map_name TEXT",
	"count INTEGER",
	"cumulative_count INTEGER",
	"size INTEGER",
	"cumulative_size INTEGER",
	"alloc_count INTEGER",
	"cumulative_alloc_count INTEGER",
	"alloc_size INTEGER",
	"cumulative_alloc_size INTEGER",
	"parent_id INTEGER",
	"source_file TEXT",
	"line_number INTEGER",
};
#define N_COLS (sizeof(k_cols) / sizeof(k_cols[0]))
enum { C_ID, C_TYPE, C_TS_IN, C_TS_CONSTRAINT, C_UPID, C_UPID_GROUP, C_FOCUS, C_TS, C_DEPTH,
       C_NAME, C_MAP, C_COUNT, C_CUM_COUNT, C_SIZE, C_CUM_SIZE, C_ALLOC_COUNT,
       C_CUM_ALLOC_COUNT, C_ALLOC_SIZE, C_CUM_ALLOC_SIZE, C_PARENT, C_SOURCE, C_LINE };

/* A merged frame. */
struct node {
	uint32_t parent, first_child, last_child, next_sibling;
	char *name; /* owned */
	int64_t count, size, cum_count, cum_size;
};

struct fg {
	struct node *nodes;
	size_t n, cap;
	char *err;
};

/* The child of @parent (NONE: a root, listed under @roots) named @name. */
static uint32_t child(struct fg *f, uint32_t *roots_first, uint32_t *roots_last,
		      uint32_t parent, const char *name)
{
	uint32_t *first = parent == NONE ? roots_first : &f->nodes[parent].first_child;
	uint32_t *last = parent == NONE ? roots_last : &f->nodes[parent].last_child;
	struct node *nd;

	for (uint32_t c = *first; c != NONE; c = f->nodes[c].next_sibling) {
		if (strcmp(f->nodes[c].name, name) == 0)
			return c;
	}
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 64;
		struct node *a = realloc(f->nodes, cap * sizeof(*a));

		if (!a)
			return NONE;
		f->nodes = a;
		f->cap = cap;
	}
	nd = &f->nodes[f->n];
	memset(nd, 0, sizeof(*nd));
	nd->name = malloc(strlen(name) + 1);
	if (!nd->name)
		return NONE;
	memcpy(nd->name, name, strlen(name) + 1);
	nd->parent = parent;
	nd->first_child = nd->last_child = nd->next_sibling = NONE;
	if (*last != NONE)
		f->nodes[*last].next_sibling = (uint32_t)f->n;
	else
		*first = (uint32_t)f->n;
	*last = (uint32_t)f->n;
	return (uint32_t)f->n++;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

struct root_key {
	const char *name;
	uint32_t obj;
};

static int cmp_root(const void *a, const void *b)
{
	const struct root_key *x = a, *y = b;
	int c;

	if (!x->name || !y->name)
		c = (x->name != NULL) - (y->name != NULL);
	else
		c = strcmp(x->name, y->name);
	return c ? c : (x->obj < y->obj ? -1 : x->obj > y->obj);
}

/* The frame name of object @o: its class (deobfuscated) and root type. */
static char *frame_name(struct tp_db *db, uint32_t o, const char *prefix)
{
	struct tp_table *objs = &db->heap_graph_object, *cls = &db->heap_graph_class;
	int64_t c = tp_get_int(objs, HGO_TYPE_ID, o);
	const char *name = NULL, *root;
	uint32_t sid;
	sqlite3_str *s;

	if (c >= 0 && (size_t)c < cls->n_rows) {
		sid = tp_get_str(cls, HGC_DEOBFUSCATED_NAME, (size_t)c);
		if (sid == TP_NULL_STR)
			sid = tp_get_str(cls, HGC_NAME, (size_t)c);
		name = tp_str_get(&db->strings, sid);
	}
	root = tp_str_get(&db->strings, tp_get_str(objs, HGO_ROOT_TYPE, o));
	s = sqlite3_str_new(NULL);
	sqlite3_str_appendf(s, "%s%s", prefix, name ? name : "");
	if (root)
		sqlite3_str_appendf(s, " [%s]", root);
	return sqlite3_str_finish(s);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Where a frame stands to focus_str (upstream's three states). */
enum { NOT_FOCUSED, FOCUSED_DOWN, FOCUSED_PATH };

/* Case-insensitive substring. */
static bool contains_ci(const char *s, const char *needle)
{
	size_t n = strlen(needle);

	for (; *s; s++) {
		if (sqlite3_strnicmp(s, needle, (int)n) == 0)
			return true;
	}
	return n == 0;
}

/*
 * The merged frames, in creation order (a parent is made before its
 * children). With a non-empty @focus, only the frames whose name contains
 * it (any case), their ancestors and their descendants stay, and the
 * cumulative values count the kept frames only.
 */
static int emit(struct fg *f, struct ops_table *out, sqlite3_value **argv, int64_t ts,
		int64_t upid, const char *focus)
{
	uint32_t *depth = malloc((f->n + 1) * sizeof(*depth));
	uint32_t *row_of = malloc((f->n + 1) * sizeof(*row_of));
	uint8_t *state = malloc(f->n + 1);
	int rc = 0;

	if (!depth || !row_of || !state) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < f->n; i++) {
		struct node *nd = &f->nodes[i];

		if (!focus || !*focus) {
			state[i] = FOCUSED_DOWN;
		} else if (contains_ci(nd->name, focus)) {
			state[i] = FOCUSED_DOWN;
			for (uint32_t p = nd->parent; p != NONE && state[p] == NOT_FOCUSED;
			     p = f->nodes[p].parent)
				state[p] = FOCUSED_PATH;
		} else {
			state[i] = nd->parent != NONE && state[nd->parent] == FOCUSED_DOWN
				? FOCUSED_DOWN : NOT_FOCUSED;
		}
	}
	/* Cumulative values: children were made after their parents. */
	for (size_t i = f->n; i-- > 0;) {
		struct node *nd = &f->nodes[i];

		if (state[i] == NOT_FOCUSED)
			continue;
		nd->cum_count += nd->count;
		nd->cum_size += nd->size;
		if (nd->parent != NONE) {
			f->nodes[nd->parent].cum_count += nd->cum_count;
			f->nodes[nd->parent].cum_size += nd->cum_size;
		}
	}
	for (uint32_t id = 0; id < f->n; id++) {
		struct node *nd = &f->nodes[id];
		int64_t r;

		if (state[id] == NOT_FOCUSED)
			continue;
		r = ops_table_append(out);
		if (r < 0) {
			rc = -ENOMEM;
			goto out;
		}
		row_of[id] = (uint32_t)r;
		depth[id] = nd->parent == NONE ? 0 : depth[nd->parent] + 1;
		ops_set_int(out, C_ID, (size_t)r, r);
		ops_set_value(out, C_TYPE, (size_t)r, argv[0]);
		ops_set_int(out, C_UPID, (size_t)r, upid);
		ops_set_int(out, C_TS, (size_t)r, ts);
		ops_set_int(out, C_DEPTH, (size_t)r, depth[id]);
		if (ops_set_text(out, C_NAME, (size_t)r, nd->name, strlen(nd->name)) < 0) {
			rc = -ENOMEM;
			goto out;
		}
		ops_set_static_text(out, C_MAP, (size_t)r, "JAVA");
		ops_set_int(out, C_COUNT, (size_t)r, nd->count);
		ops_set_int(out, C_CUM_COUNT, (size_t)r, nd->cum_count);
		ops_set_int(out, C_SIZE, (size_t)r, nd->size);
		ops_set_int(out, C_CUM_SIZE, (size_t)r, nd->cum_size);
		ops_set_int(out, C_ALLOC_COUNT, (size_t)r, 0);
		ops_set_int(out, C_CUM_ALLOC_COUNT, (size_t)r, 0);
		ops_set_int(out, C_ALLOC_SIZE, (size_t)r, 0);
		ops_set_int(out, C_CUM_ALLOC_SIZE, (size_t)r, 0);
		if (nd->parent != NONE)
			ops_set_int(out, C_PARENT, (size_t)r, row_of[nd->parent]);
	}
out:
	free(depth);
	free(row_of);
	free(state);
	return rc;
}

static int run_graph(struct tp_db *db, sqlite3_value **argv, struct ops_table *out, char **err)
{
	struct tp_table *objs = &db->heap_graph_object, *refs = &db->heap_graph_reference;
	struct tp_table *cls = &db->heap_graph_class, *hg = &db->heap_graph;
	int64_t ts = sqlite3_value_int64(argv[1]), upid = sqlite3_value_int64(argv[3]);
	uint32_t *sel = NULL, *parent = NULL, *queue = NULL, *merged = NULL, *kids = NULL;
	uint32_t s_referent, s_weak, s_fin, s_phantom, roots_first = NONE, roots_last = NONE;
	struct root_key *roots = NULL;
	size_t n_sel = 0, n_roots = 0, qh = 0, qt = 0, cap_k = 0;
	uint8_t *seen = NULL;
	uint64_t *keys = NULL;
	struct fg f = {0};
	int64_t truncated = TP_NULL_INT;
	bool dump = false;
	int rc = -1;

	for (size_t r = 0; r < hg->n_rows; r++) {
		if (tp_get_int(hg, HG_UPID, r) == upid && tp_get_int(hg, HG_TS, r) == ts) {
			dump = true;
			truncated = tp_get_int(hg, HG_TRUNCATED, r);
		}
	}
	sel = malloc((objs->n_rows + 1) * sizeof(*sel));
	parent = malloc((objs->n_rows + 1) * sizeof(*parent));
	queue = malloc((objs->n_rows + 1) * sizeof(*queue));
	merged = malloc((objs->n_rows + 1) * sizeof(*merged));
	roots = malloc((objs->n_rows + 1) * sizeof(*roots));
	seen = calloc(objs->n_rows + 1, 1);
	if (!sel || !parent || !queue || !merged || !roots || !seen)
		goto oom;
	for (size_t o = 0; o < objs->n_rows; o++) {
		if (tp_get_int(objs, HGO_UPID, o) != upid ||
		    tp_get_int(objs, HGO_GRAPH_SAMPLE_TS, o) != ts)
			continue;
		dump = true;
		sel[n_sel++] = (uint32_t)o;
		if (tp_get_str(objs, HGO_ROOT_TYPE, o) != TP_NULL_STR) {
			int64_t c = tp_get_int(objs, HGO_TYPE_ID, o);

			roots[n_roots].obj = (uint32_t)o;
			roots[n_roots].name = c >= 0 && (size_t)c < cls->n_rows
				? tp_str_get(&db->strings, tp_get_str(cls, HGC_NAME, (size_t)c)) : NULL;
			n_roots++;
		}
	}
	if (!dump) {
		*err = sqlite3_mprintf("Failed to build flamegraph");
		goto out;
	}
	if (!n_roots) {
		if (truncated == 1) {
			int64_t r = ops_table_append(out);

			if (r < 0)
				goto oom;
			ops_set_int(out, C_ID, 0, 0);
			ops_set_value(out, C_TYPE, 0, argv[0]);
			ops_set_int(out, C_UPID, 0, upid);
			ops_set_int(out, C_TS, 0, ts);
			ops_set_int(out, C_DEPTH, 0, 0);
			ops_set_static_text(out, C_NAME, 0,
					    "ERROR: INCOMPLETE GRAPH (try increasing buffer size)");
			ops_set_static_text(out, C_MAP, 0, "JAVA");
			for (int c = C_COUNT; c <= C_CUM_SIZE; c++)
				ops_set_int(out, (uint32_t)c, 0, 1);
			for (int c = C_ALLOC_COUNT; c <= C_CUM_ALLOC_SIZE; c++)
				ops_set_int(out, (uint32_t)c, 0, 0);
		}
		rc = 0;
		goto out;
	}
	s_referent = tp_str_find(&db->strings, "java.lang.ref.Reference.referent", 32);
	s_weak = tp_str_find(&db->strings, "KIND_WEAK_REFERENCE", 19);
	s_fin = tp_str_find(&db->strings, "KIND_FINALIZER_REFERENCE", 24);
	s_phantom = tp_str_find(&db->strings, "KIND_PHANTOM_REFERENCE", 22);
	/* Breadth first from every root at once. */
	sort_n(roots, n_roots, sizeof(*roots), cmp_root);
	for (size_t i = 0; i < n_roots; i++) {
		if (seen[roots[i].obj])
			continue;
		seen[roots[i].obj] = 1;
		parent[roots[i].obj] = NONE;
		queue[qt++] = roots[i].obj;
	}
	while (qh < qt) {
		uint32_t o = queue[qh++], kind = TP_NULL_STR;
		int64_t rsid = tp_get_int(objs, HGO_REFERENCE_SET_ID, o), c;
		size_t nk = 0;
		bool weak;

		if (rsid == TP_NULL_INT)
			continue;
		c = tp_get_int(objs, HGO_TYPE_ID, o);
		if (c >= 0 && (size_t)c < cls->n_rows)
			kind = tp_get_str(cls, HGC_KIND, (size_t)c);
		weak = kind != TP_NULL_STR && (kind == s_weak || kind == s_fin || kind == s_phantom);
		for (size_t r = (size_t)rsid; r < refs->n_rows &&
		     tp_get_int(refs, HGR_REFERENCE_SET_ID, r) == rsid; r++) {
			int64_t owned = tp_get_int(refs, HGR_OWNED_ID, r);

			if (owned == TP_NULL_INT || owned < 0 || (size_t)owned >= objs->n_rows)
				continue;
			if (weak && s_referent && tp_get_str(refs, HGR_FIELD_NAME, r) == s_referent)
				continue;
			if (nk == cap_k) {
				size_t cap = cap_k ? cap_k * 2 : 16;
				uint32_t *a = realloc(kids, cap * sizeof(*a));

				if (!a)
					goto oom;
				kids = a;
				cap_k = cap;
			}
			kids[nk++] = (uint32_t)owned;
		}
		sort_n(kids, nk, sizeof(*kids), cmp_u32);
		for (size_t i = 0; i < nk; i++) {
			if (seen[kids[i]])
				continue;
			seen[kids[i]] = 1;
			parent[kids[i]] = o;
			queue[qt++] = kids[i];
		}
	}
	/* Merge the tree's objects in that order (a parent may come after its child). */
	/* By class row, then id: the order upstream's frames query yields. */
	keys = malloc((n_sel + 1) * sizeof(*keys));
	if (!keys)
		goto oom;
	for (size_t i = 0; i < n_sel; i++)
		keys[i] = (uint64_t)(uint32_t)tp_get_int(objs, HGO_TYPE_ID, sel[i]) << 32 | sel[i];
	sort_n(keys, n_sel, sizeof(*keys), cmp_u64);
	for (size_t i = 0; i < n_sel; i++)
		sel[i] = (uint32_t)keys[i];
	for (size_t i = 0; i < objs->n_rows; i++)
		merged[i] = NONE;
	for (size_t i = 0; i < n_sel; i++) {
		uint32_t o = sel[i], chain_len = 0;

		if (!seen[o] || merged[o] != NONE)
			continue;
		/* Walk up to the first merged ancestor, then merge back down. */
		for (uint32_t a = o; a != NONE && merged[a] == NONE; a = parent[a])
			queue[chain_len++] = a;
		while (chain_len) {
			uint32_t a = queue[--chain_len];
			uint32_t p = parent[a] == NONE ? NONE : merged[parent[a]];
			char *name = frame_name(db, a, "");
			uint32_t m;

			if (!name)
				goto oom;
			m = child(&f, &roots_first, &roots_last, p, name);
			sqlite3_free(name);
			if (m == NONE)
				goto oom;
			merged[a] = m;
			f.nodes[m].count++;
			f.nodes[m].size += tp_get_int(objs, HGO_SELF_SIZE, a);
		}
	}
	/* The native sizes, as children, after every object. */
	for (size_t i = 0; i < n_sel; i++) {
		uint32_t o = sel[i], m;
		int64_t native = tp_get_int(objs, HGO_NATIVE_SIZE, o);
		char *name;

		if (!seen[o] || native == 0 || native == TP_NULL_INT)
			continue;
		name = frame_name(db, o, "[native] ");
		if (!name)
			goto oom;
		m = child(&f, &roots_first, &roots_last, merged[o], name);
		sqlite3_free(name);
		if (m == NONE)
			goto oom;
		f.nodes[m].count++;
		f.nodes[m].size += native;
	}
	if (emit(&f, out, argv, ts, upid, (const char *)sqlite3_value_text(argv[5])) < 0)
		goto oom;
	rc = 0;
	goto out;
oom:
	*err = sqlite3_mprintf("experimental_flamegraph: out of memory");
	rc = -1;
out:
	for (size_t i = 0; i < f.n; i++)
		free(f.nodes[i].name);
	free(f.nodes);
	free(sel);
	free(parent);
	free(queue);
	free(merged);
	free(roots);
	free(seen);
	free(kids);
	free(keys);
	return rc;
}

static int run(void *user, sqlite3_value **argv, struct ops_table *out, char **err)
{
	const char *type = (const char *)sqlite3_value_text(argv[0]);

	if (!type || strcmp(type, "graph") != 0) {
		*err = sqlite3_mprintf("experimental_flamegraph: profile type '%s' is not supported "
				       "(only 'graph', Java heap graphs)",
				       type ? type : "NULL");
		return -1;
	}
	if (sqlite3_value_type(argv[5]) != SQLITE_NULL && sqlite3_value_type(argv[5]) != SQLITE_TEXT) {
		*err = sqlite3_mprintf("experimental_flamegraph: focus_str must be an string");
		return -1;
	}
	if (sqlite3_value_type(argv[1]) == SQLITE_NULL || sqlite3_value_type(argv[3]) == SQLITE_NULL) {
		*err = sqlite3_mprintf(
			"experimental_flamegraph: ts and upid must be present for heap graph");
		return -1;
	}
	return run_graph(user, argv, out, err);
}

int ops_heap_graph_fg_register(sqlite3 *conn, struct tp_db *db)
{
	static struct ops_tfn fn = {"experimental_flamegraph", k_cols, N_COLS, 6, run, NULL};
	struct ops_tfn copy = fn;

	copy.user = db;
	return ops_tfn_register_owned(conn, &copy, NULL);
}

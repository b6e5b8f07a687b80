// SPDX-License-Identifier: Apache-2.0
/*
 * winscope_sf.c - __intrinsic_winscope_surfaceflinger_hierarchy_path(), as
 * upstream has it: for each SurfaceFlinger layers snapshot (in table
 * order) and each of its layers with an id, a row per layer on the way
 * from the root down to the layer itself (ancestor_id), found by
 * following `parent` (0 when unset) through the snapshot's layers by id
 * (the first layer of an id wins). A layer that is its own parent ends the
 * walk (as upstream); so does a layer already on the path (a longer
 * cycle, which upstream would follow forever).
 * Ids are shown as unsigned 32-bit numbers. The snapshots' protos come
 * from the string pool (base64, import/android/winscope_sf.c).
 */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "base/hmap.h"
#include "protozero/protozero.h"
#include "trace_processor/sql/ops/ops_int.h"
#include "trace_processor/storage/storage.h"

/* LayersSnapshotProto.layers, LayersProto.layers, LayerProto.id / .parent. */
#define SNAP_LAYERS 3
#define LAYERS_LAYERS 1
#define LAYER_ID 1
#define LAYER_PARENT 25

static const char *const k_cols[] = {
	"id INTEGER",
	"snapshot_id INTEGER",
	"layer_id INTEGER",
	"ancestor_id INTEGER",
};

struct layer {
	int32_t id, parent;
	bool has_id;
};

int winscope_proto_bytes(struct tp_db *db, int64_t str_id, uint8_t **out, size_t *len)
{
	const char *text = str_id > 0 && str_id <= UINT32_MAX
				   ? tp_str_get(&db->strings, (uint32_t)str_id)
				   : NULL;
	size_t n;
	long got;

	*out = NULL;
	*len = 0;
	if (!text)
		return -1;
	n = strlen(text);
	*out = malloc(n / 4 * 3 + 3);
	if (!*out)
		return -1;
	got = base64_decode(text, n, *out);
	if (got < 0) {
		free(*out);
		*out = NULL;
		return -1;
	}
	*len = (size_t)got;
	return 0;
}

/* The layers of snapshot proto [@p, @p + @n) into *@out (malloc'd). Return: count or -1. */
static long read_layers(const uint8_t *p, size_t n, struct layer **out)
{
	struct pz_reader r, lr, fr;
	struct pz_field f, lf, ff;
	struct layer *v = NULL;
	size_t cnt = 0, cap = 0;

	pz_reader_init(&r, p, n);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id != SNAP_LAYERS || f.wire_type != PZ_WIRE_LEN)
			continue;
		pz_reader_init(&lr, f.data, f.size);
		while (pz_reader_next(&lr, &lf) > 0) {
			struct layer l = {0};

			if (lf.id != LAYERS_LAYERS || lf.wire_type != PZ_WIRE_LEN)
				continue;
			pz_reader_init(&fr, lf.data, lf.size);
			while (pz_reader_next(&fr, &ff) > 0) {
				if (ff.wire_type != PZ_WIRE_VARINT)
					continue;
				if (ff.id == LAYER_ID) {
					l.id = (int32_t)(uint32_t)ff.value;
					l.has_id = true;
				} else if (ff.id == LAYER_PARENT) {
					l.parent = (int32_t)(uint32_t)ff.value;
				}
			}
			if (cnt == cap) {
				struct layer *nv;

				cap = cap ? cap * 2 : 64;
				nv = realloc(v, cap * sizeof(*v));
				if (!nv) {
					free(v);
					return -1;
				}
				v = nv;
			}
			v[cnt++] = l;
		}
	}
	*out = v;
	return (long)cnt;
}

static int emit(struct ops_table *out, int64_t snapshot, int32_t layer, int32_t ancestor)
{
	int64_t r = ops_table_append(out);

	if (r < 0)
		return -1;
	ops_set_int(out, 0, (size_t)r, r);
	ops_set_int(out, 1, (size_t)r, snapshot);
	ops_set_int(out, 2, (size_t)r, (uint32_t)layer);
	ops_set_int(out, 3, (size_t)r, (uint32_t)ancestor);
	return 0;
}

/* The rows of one snapshot's layers. Return: 0 or -1 (out of memory). */
static int snapshot_paths(struct ops_table *out, int64_t snapshot, const struct layer *l, size_t n)
{
	struct hmap by_id = HMAP_INIT;
	int32_t *path = malloc((n + 1) * sizeof(*path));
	size_t *stamp = calloc(n + 1, sizeof(*stamp)); /* i + 1: on layer i's path */
	size_t i;
	int rc = 0;

	if (!path || !stamp) {
		free(path);
		free(stamp);
		return -1;
	}
	for (i = 0; i < n && rc == 0; i++)
		if (l[i].has_id && !hmap_get(&by_id, (uint32_t)l[i].id, NULL))
			rc = hmap_put(&by_id, (uint32_t)l[i].id, i) < 0 ? -1 : 0;
	for (i = 0; i < n && rc == 0; i++) {
		size_t len = 0, k;
		uint64_t at;
		int32_t next = l[i].parent;

		if (!l[i].has_id)
			continue;
		path[len++] = l[i].id;
		stamp[i] = i + 1;
		while (len <= n && hmap_get(&by_id, (uint32_t)next, &at)) {
			if (l[at].id == l[at].parent || stamp[at] == i + 1)
				break;
			stamp[at] = i + 1;
			path[len++] = l[at].id;
			next = l[at].parent;
		}
		for (k = len; k > 0 && rc == 0; k--)
			rc = emit(out, snapshot, l[i].id, path[k - 1]);
	}
	hmap_fini(&by_id);
	free(path);
	free(stamp);
	return rc;
}

static int run_paths(void *user, sqlite3_value **argv, struct ops_table *out, char **err)
{
	struct tp_db *db = user;
	struct tp_table *t = &db->sf_snapshot;
	size_t row;

	(void)argv;
	for (row = 0; row < t->n_rows; row++) {
		struct layer *layers = NULL;
		uint8_t *proto;
		size_t len;
		long n;
		int rc;

		if (winscope_proto_bytes(db, tp_get_int(t, SFSNAP_BASE64_PROTO_ID, row), &proto,
					 &len) < 0) {
			*err = sqlite3_mprintf("__intrinsic_winscope_surfaceflinger_hierarchy_path: "
					       "snapshot %zu has no readable proto",
					       row);
			return -1;
		}
		n = read_layers(proto, len, &layers);
		free(proto);
		rc = n < 0 ? -1 : snapshot_paths(out, (int64_t)row, layers, (size_t)n);
		free(layers);
		if (rc < 0) {
			*err = sqlite3_mprintf("out of memory");
			return -1;
		}
	}
	return 0;
}

int ops_winscope_sf_register(sqlite3 *conn, struct tp_db *db)
{
	struct ops_tfn fn = {"__intrinsic_winscope_surfaceflinger_hierarchy_path", k_cols, 4, 0,
			     run_paths, db};

	return ops_tfn_register_owned(conn, &fn, NULL);
}

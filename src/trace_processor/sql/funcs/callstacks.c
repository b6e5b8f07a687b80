// SPDX-License-Identifier: Apache-2.0
/*
 * callstacks.c - Perfetto's SQL helpers for profiler callstacks, added to
 * the connection by tp_sql_open(): demangle(name) (C++ Itanium names, by
 * the C++ runtime's __cxa_demangle when libstdc++ can be loaded) and the
 * table function experimental_annotated_callstack(callsite_id), which
 * walks a callsite to its root and marks ART's frames (interpreted, JIT,
 * AOT, and the libart frames between them) as Perfetto does.
 */
#include "trace_processor/sql/funcs/funcs_int.h"

#include <dlfcn.h>
#include <errno.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/storage/storage.h"

/* ------------------------------------------------------------ demangle ---- */

typedef char *(*cxa_demangle_cb)(const char *name, char *buf, size_t *len, int *status);

/* Owned by the demangle function: the runtime it found, if any. */
struct demangler {
	void *lib;
	cxa_demangle_cb fn;
};

static void demangler_destroy(void *p)
{
	struct demangler *d = p;

	if (d && d->lib)
		dlclose(d->lib);
	free(d);
}

/*
 * demangle(name): the demangled C++ name, or NULL when the runtime's
 * demangler rejects @name or no C++ runtime could be loaded. Every name is
 * tried, as upstream's Linux build does: a bare type encoding such as "i"
 * reads as "int", "main" is rejected.
 */
static void fn_demangle(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const struct demangler *d = sqlite3_user_data(ctx);
	const char *name;
	char *out;
	int status = 0;

	(void)argc;
	switch (sqlite3_value_type(argv[0])) {
	case SQLITE_NULL:
		return;
	case SQLITE_TEXT:
		break;
	default:
		sqlite3_result_error(ctx, "Unsupported type of arg passed to DEMANGLE", -1);
		return;
	}
	name = (const char *)sqlite3_value_text(argv[0]);
	if (!d->fn || !name)
		return;
	out = d->fn(name, NULL, NULL, &status);
	if (out && status == 0)
		sqlite3_result_text(ctx, out, -1, SQLITE_TRANSIENT);
	free(out);
}

/* ------------------------------------------- annotated callstack ---- */

enum map_kind { MAP_INTERP, MAP_JIT, MAP_AOT, MAP_LIBART, MAP_NATIVE, MAP_OTHER };

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* What a mapping holds, from its name, as Perfetto classifies it. */
static enum map_kind classify_map(const char *map)
{
	const char *slash, *dot;

	if (!map || !*map)
		return MAP_OTHER;
	if (starts_with(map, "/memfd:jit-cache") || starts_with(map, "/memfd:jit-zygote-cache"))
		return MAP_JIT;
	slash = strrchr(map, '/');
	if (slash && (starts_with(slash, "/libart.so") || starts_with(slash, "/libartd.so")))
		return MAP_LIBART;
	dot = strrchr(map, '.');
	if (!dot)
		return MAP_OTHER;
	if (starts_with(dot, ".so"))
		return MAP_NATIVE;
	if (starts_with(dot, ".dex") || starts_with(dot, ".vdex") || starts_with(dot, ".jar") ||
	    starts_with(dot, ".apk"))
		return MAP_INTERP;
	if (starts_with(dot, ".oat") || starts_with(dot, ".odex"))
		return MAP_AOT;
	return MAP_OTHER;
}

/* Deepest callsite chains we walk; deeper ones are cut at the root end. */
#define ANNOTATED_MAX_DEPTH 4096

enum { EAC_ID, EAC_DEPTH, EAC_PARENT_ID, EAC_FRAME_ID, EAC_ANNOTATION, EAC_START_ID };

struct eac_vtab {
	sqlite3_vtab base;
	struct tp_db *db;
};

/* One walk: the callsites leaf first and their annotations. */
struct eac_cursor {
	sqlite3_vtab_cursor base;
	int64_t *rows;
	const char **notes;
	size_t n, i;
};

static int eac_connect(sqlite3 *conn, void *aux, int argc, const char *const *argv,
		       sqlite3_vtab **out, char **err)
{
	struct eac_vtab *v;
	int rc;

	(void)argc;
	(void)argv;
	(void)err;
	rc = sqlite3_declare_vtab(conn, "CREATE TABLE x(id INTEGER, depth INTEGER, "
					"parent_id INTEGER, frame_id INTEGER, annotation TEXT, "
					"start_id HIDDEN)");
	if (rc != SQLITE_OK)
		return rc;
	v = sqlite3_malloc(sizeof(*v));
	if (!v)
		return SQLITE_NOMEM;
	memset(v, 0, sizeof(*v));
	v->db = aux;
	*out = &v->base;
	return SQLITE_OK;
}

static int eac_disconnect(sqlite3_vtab *vt)
{
	sqlite3_free(vt);
	return SQLITE_OK;
}

/* The callsite argument is required: an equality on start_id. */
static int eac_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
	int i;

	(void)vt;
	for (i = 0; i < info->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &info->aConstraint[i];

		if (c->iColumn != EAC_START_ID || c->op != SQLITE_INDEX_CONSTRAINT_EQ)
			continue;
		if (!c->usable)
			return SQLITE_CONSTRAINT;
		info->aConstraintUsage[i].argvIndex = 1;
		info->aConstraintUsage[i].omit = 1;
		info->idxNum = 1;
		info->estimatedCost = 10;
		return SQLITE_OK;
	}
	info->idxNum = 0;
	info->estimatedCost = 1e12;
	return SQLITE_OK;
}

static int eac_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
	struct eac_cursor *c = sqlite3_malloc(sizeof(*c));

	(void)vt;
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	*out = &c->base;
	return SQLITE_OK;
}

static void eac_reset(struct eac_cursor *c)
{
	free(c->rows);
	free(c->notes);
	c->rows = NULL;
	c->notes = NULL;
	c->n = c->i = 0;
}

static int eac_close(sqlite3_vtab_cursor *cur)
{
	struct eac_cursor *c = (struct eac_cursor *)cur;

	eac_reset(c);
	sqlite3_free(c);
	return SQLITE_OK;
}

static const char *str_or_empty(const struct tp_db *db, uint32_t id)
{
	return id ? tp_str_get(&db->strings, id) : "";
}

/*
 * Annotates the walk root first, as Perfetto: an ART frame (interpreted,
 * JIT or AOT code) is so named, and from the first of them on, libart's
 * own frames are "common-frame" ("common-frame-interp" for the
 * interpreter's entry points); art_jni_trampoline is a common frame and
 * the frame after it keeps no annotation.
 */
static void annotate(const struct tp_db *db, struct eac_cursor *c)
{
	enum { INITIAL, ERASE_LIBART, KEEP_NEXT } state = INITIAL;
	size_t k;

	for (k = c->n; k-- > 0;) {
		size_t cs = (size_t)c->rows[k];
		int64_t frame = tp_get_int(&db->sp_callsite, SP_CS_FRAME_ID, cs);
		int64_t mapping = -1;
		const char *fname = "", *mname = "";
		enum map_kind kind;

		c->notes[k] = NULL;
		if (frame >= 0 && (size_t)frame < db->sp_frame.n_rows) {
			fname = str_or_empty(db, tp_get_str(&db->sp_frame, SP_FRAME_NAME,
							    (size_t)frame));
			mapping = tp_get_int(&db->sp_frame, SP_FRAME_MAPPING, (size_t)frame);
		}
		if (mapping >= 0 && (size_t)mapping < db->sp_mapping.n_rows)
			mname = str_or_empty(db, tp_get_str(&db->sp_mapping, SP_MAP_NAME,
							    (size_t)mapping));
		if (state == KEEP_NEXT) {
			state = ERASE_LIBART;
			continue;
		}
		if (strcmp(fname, "art_jni_trampoline") == 0) {
			c->notes[k] = "common-frame";
			state = KEEP_NEXT;
			continue;
		}
		kind = classify_map(mname);
		if (kind == MAP_INTERP || kind == MAP_JIT || kind == MAP_AOT) {
			c->notes[k] = kind == MAP_INTERP ? "interp" : kind == MAP_JIT ? "jit" : "aot";
			if (state == INITIAL)
				state = ERASE_LIBART;
			continue;
		}
		if (state == ERASE_LIBART && kind == MAP_LIBART) {
			bool interp = starts_with(fname, "nterp_") || starts_with(fname, "Nterp") ||
				      starts_with(fname, "ExecuteNterp") ||
				      starts_with(fname, "ExecuteSwitchImpl") ||
				      starts_with(fname, "_ZN3art11interpreter");

			c->notes[k] = interp ? "common-frame-interp" : "common-frame";
		}
	}
}

static int eac_filter(sqlite3_vtab_cursor *cur, int idx_num, const char *idx_str, int argc,
		      sqlite3_value **argv)
{
	struct eac_cursor *c = (struct eac_cursor *)cur;
	const struct tp_db *db = ((struct eac_vtab *)cur->pVtab)->db;
	const struct tp_table *cs = &db->sp_callsite;
	int64_t id;

	(void)idx_str;
	eac_reset(c);
	if (idx_num != 1 || argc < 1 || sqlite3_value_type(argv[0]) == SQLITE_NULL)
		return SQLITE_OK;
	if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER) {
		cur->pVtab->zErrMsg = sqlite3_mprintf("invalid input callsite id");
		return SQLITE_ERROR;
	}
	id = sqlite3_value_int64(argv[0]);
	if (id < 0 || (uint64_t)id >= cs->n_rows) {
		cur->pVtab->zErrMsg = sqlite3_mprintf("callsite with id %lld not found",
						      (long long)id);
		return SQLITE_ERROR;
	}
	c->rows = malloc(ANNOTATED_MAX_DEPTH * sizeof(*c->rows));
	c->notes = malloc(ANNOTATED_MAX_DEPTH * sizeof(*c->notes));
	if (!c->rows || !c->notes) {
		eac_reset(c);
		return SQLITE_NOMEM;
	}
	while (id >= 0 && (uint64_t)id < cs->n_rows && c->n < ANNOTATED_MAX_DEPTH) {
		c->rows[c->n++] = id;
		id = tp_get_int(cs, SP_CS_PARENT_ID, (size_t)id);
	}
	annotate(db, c);
	return SQLITE_OK;
}

static int eac_next(sqlite3_vtab_cursor *cur)
{
	((struct eac_cursor *)cur)->i++;
	return SQLITE_OK;
}

static int eac_eof(sqlite3_vtab_cursor *cur)
{
	const struct eac_cursor *c = (const struct eac_cursor *)cur;

	return c->i >= c->n;
}

static void result_int_or_null(sqlite3_context *ctx, int64_t v)
{
	if (v == TP_NULL_INT)
		sqlite3_result_null(ctx);
	else
		sqlite3_result_int64(ctx, v);
}

static int eac_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	const struct eac_cursor *c = (const struct eac_cursor *)cur;
	const struct tp_db *db = ((struct eac_vtab *)cur->pVtab)->db;
	size_t row = (size_t)c->rows[c->i];

	switch (col) {
	case EAC_ID:
		sqlite3_result_int64(ctx, c->rows[c->i]);
		break;
	case EAC_DEPTH:
		result_int_or_null(ctx, tp_get_int(&db->sp_callsite, SP_CS_DEPTH, row));
		break;
	case EAC_PARENT_ID:
		result_int_or_null(ctx, tp_get_int(&db->sp_callsite, SP_CS_PARENT_ID, row));
		break;
	case EAC_FRAME_ID:
		result_int_or_null(ctx, tp_get_int(&db->sp_callsite, SP_CS_FRAME_ID, row));
		break;
	case EAC_ANNOTATION:
		if (c->notes[c->i])
			sqlite3_result_text(ctx, c->notes[c->i], -1, SQLITE_STATIC);
		break;
	default:
		break;
	}
	return SQLITE_OK;
}

static int eac_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out)
{
	*out = (sqlite3_int64)((const struct eac_cursor *)cur)->i;
	return SQLITE_OK;
}

static const sqlite3_module k_eac_module = {
	.iVersion = 0,
	.xConnect = eac_connect,
	.xBestIndex = eac_best_index,
	.xDisconnect = eac_disconnect,
	.xOpen = eac_open,
	.xClose = eac_close,
	.xFilter = eac_filter,
	.xNext = eac_next,
	.xEof = eac_eof,
	.xColumn = eac_column,
	.xRowid = eac_rowid,
};

int tp_sql_add_callstacks(struct sqlite3 *conn, struct tp_db *db)
{
	struct demangler *d = calloc(1, sizeof(*d));
	int rc;

	if (!d)
		return SQLITE_NOMEM;
	/* No link-time tie to C++: without the runtime nothing is demangled. */
	d->lib = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
	if (d->lib)
		d->fn = (cxa_demangle_cb)(uintptr_t)dlsym(d->lib, "__cxa_demangle");
	/* The first registration owns @d; SQLite frees it even on failure. */
	rc = sqlite3_create_function_v2(conn, "demangle", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
					d, fn_demangle, NULL, NULL, demangler_destroy);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(conn, "__intrinsic_demangle", 1,
						SQLITE_UTF8 | SQLITE_DETERMINISTIC, d, fn_demangle,
						NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_module_v2(conn, "experimental_annotated_callstack",
					      &k_eac_module, db, NULL);
	return rc;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * te_parse.c - the TrackEvent parser: runs on sorted events and turns
 * each into slices (begin/end, complete, instants as 0-length slices),
 * counter values, flows and args, on the track its uuid, the sequence's
 * defaults or its thread descriptor name. Also the parse-time side of
 * track/thread/process descriptors (thread and process names), Chrome
 * triggers, the per-(category, name) annotations of
 * --analyze-trace-proto-content, and the hooks every slice goes through
 * (translated names, v1 flows, native symbols). The top of the TrackEvent
 * importer: it finishes and frees the state.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/profiling/profiling.h"
#include "trace_processor/import/track_event/te_int.h"


/* Everything the importer works out about one event. */
struct ev_ctx {
	struct tp_import *imp;
	struct tp_te *te;
	const struct tp_event *ev;
	const struct te_rec *rec;
	struct te_rec rec_storage;
	const struct tp_seq_gen *gen;
	struct pz_field e[58]; /* TrackEvent fields (last occurrence) */
	struct pz_field l[20]; /* LegacyEvent fields */
	bool has_legacy;
	uint32_t cat, name;
	uint64_t uuid;
	uint32_t seq_id;
	int64_t utid, upid;       /* -1: none */
	int64_t passthrough_utid; /* -1: none */
	int64_t source_id;        /* a legacy async event's id */
	bool has_source_id;
	bool fallback;            /* legacy pid/tid thread track */
	int64_t thread_ts, thread_instr;
	bool has_thread_ts, has_thread_instr;
};

static uint32_t intern(struct tp_import *imp, const void *s, size_t n)
{
	return tp_str_intern(&imp->db->strings, (const char *)s, n);
}

static void parse_error(struct ev_ctx *c)
{
	tp_stat_add(c->imp, "track_event_parser_errors", -1, c->ev->machine, 1);
}

/* ----------------------------------------------------------- name and cat ---- */

static uint32_t interned_str(struct ev_ctx *c, uint32_t field, uint64_t iid)
{
	const struct tp_interned *i = tp_seq_interned(c->imp, c->rec->gen, field, iid);

	return i ? i->str : 0;
}

static uint32_t parse_category(struct ev_ctx *c)
{
	struct pz_reader r;
	struct pz_field f;
	char buf[4096];
	size_t n = 0, count = 0;
	uint32_t only = 0;
	bool only_iid = false;

	if (!c->e[PB_TRACK_EVENT__CATEGORIES].id && !c->e[PB_TRACK_EVENT__CATEGORY_IIDS].id)
		return 0;
	/* Categories are joined with ',' into the single category column. */
	pz_reader_init(&r, c->ev->data, c->ev->len);
	while (pz_reader_next(&r, &f) > 0) {
		const char *p = NULL;
		size_t len = 0;

		if (f.id == PB_TRACK_EVENT__CATEGORY_IIDS) {
			struct pz_packed it;
			uint64_t v;

			if (f.wire_type == PZ_WIRE_VARINT) {
				v = f.value;
				goto iid;
			}
			if (f.wire_type != PZ_WIRE_LEN)
				continue;
			pz_packed_init(&it, &f);
			while (pz_packed_next_varint(&it, &v) > 0) {
				uint32_t id;
				const char *sv;
iid:
				id = interned_str(c, PB_INTERNED_DATA__EVENT_CATEGORIES, v);
				count++;
				if (count == 1) {
					only = id;
					only_iid = true;
					if (!id) {
						char u[48];

						snprintf(u, sizeof(u), "unknown(%" PRIu64 ")", v);
						only = tp_db_str(c->imp->db, u);
					}
				}
				sv = id ? tp_str_get(&c->imp->db->strings, id) : NULL;
				if (sv && n + strlen(sv) + 2 < sizeof(buf)) {
					if (n)
						buf[n++] = ',';
					memcpy(buf + n, sv, strlen(sv));
					n += strlen(sv);
				}
				if (f.wire_type == PZ_WIRE_VARINT)
					break;
			}
			continue;
		}
		if (f.id != PB_TRACK_EVENT__CATEGORIES || f.wire_type != PZ_WIRE_LEN)
			continue;
		p = (const char *)f.data;
		len = f.size;
		count++;
		if (count == 1) {
			only = intern(c->imp, p, len);
			only_iid = false;
		}
		if (n + len + 2 < sizeof(buf)) {
			if (n)
				buf[n++] = ',';
			memcpy(buf + n, p, len);
			n += len;
		}
	}
	(void)only_iid;
	if (count == 0)
		return 0;
	if (count == 1)
		return only;
	return n ? intern(c->imp, buf, n) : 0;
}

static uint32_t parse_name(struct ev_ctx *c)
{
	uint64_t iid = c->e[PB_TRACK_EVENT__NAME_IID].value;

	if (!iid && c->has_legacy)
		iid = c->l[PB_TRACK_EVENT_LEGACY_EVENT__NAME_IID].value;
	if (iid)
		return interned_str(c, PB_INTERNED_DATA__EVENT_NAMES, iid);
	return te_str(c->imp, &c->e[PB_TRACK_EVENT__NAME]);
}

/* A distinct (category, name) pair for the proto content annotations. */
static void annotate(struct ev_ctx *c)
{
	struct tp_te *te = c->te;
	uint64_t k = ((uint64_t)c->cat << 32) | c->name;

	if (!c->imp->analyze_proto_content || hmap_get(&te->annot_seen, k, NULL))
		return;
	if (te->n_annot + 2 > te->cap_annot) {
		size_t cap = te->cap_annot ? 2 * te->cap_annot : 64;
		uint32_t *p = realloc(te->annot, cap * sizeof(*p));

		if (!p)
			return;
		te->annot = p;
		te->cap_annot = cap;
	}
	hmap_put(&te->annot_seen, k, 1);
	te->annot[te->n_annot++] = c->cat;
	te->annot[te->n_annot++] = c->name;
}

/* ------------------------------------------------------------------ args ---- */

struct key_buf {
	char key[TE_KEY_MAX];
	char flat[TE_KEY_MAX];
	size_t n_key, n_flat;
};

static bool key_push(struct key_buf *k, const char *part, size_t len, bool array, size_t index)
{
	char tmp[32];

	if (array) {
		int n = snprintf(tmp, sizeof(tmp), "[%zu]", index);

		if (n < 0 || k->n_key + (size_t)n >= TE_KEY_MAX)
			return false;
		memcpy(k->key + k->n_key, tmp, (size_t)n);
		k->n_key += (size_t)n;
		return true;
	}
	if (k->n_key + len + 2 >= TE_KEY_MAX || k->n_flat + len + 2 >= TE_KEY_MAX)
		return false;
	if (k->n_key)
		k->key[k->n_key++] = '.';
	if (k->n_flat)
		k->flat[k->n_flat++] = '.';
	memcpy(k->key + k->n_key, part, len);
	memcpy(k->flat + k->n_flat, part, len);
	k->n_key += len;
	k->n_flat += len;
	return true;
}

/* One event's debug annotations being flattened into @b. */
struct da_ctx {
	struct ev_ctx *c;
	struct tp_argset *b;
};

static void add_arg(struct da_ctx *x, const struct key_buf *k, uint8_t type, int64_t i, double d,
		    uint32_t str)
{
	struct tp_arg a = {0};

	a.flat_key = intern(x->c->imp, k->flat, k->n_flat);
	a.key = intern(x->c->imp, k->key, k->n_key);
	a.type = type;
	if (type == TP_ARG_REAL)
		a.v.d = d;
	else if (type == TP_ARG_STR)
		a.v.s = str;
	else
		a.v.i = i;
	tp_argset_add(x->c->imp, x->b, &a);
}

/* Debug annotation names cannot contain the key syntax. */
static size_t sanitize(const uint8_t *in, size_t len, char *out, size_t cap)
{
	size_t i;

	if (len >= cap)
		len = cap - 1;
	for (i = 0; i < len; i++) {
		char ch = (char)in[i];

		out[i] = ch == '.' || ch == '[' || ch == ']' ? '_' : ch;
	}
	return len;
}

/*
 * The annotations below return -1 on an error, which stops the whole
 * annotation (the args already added stay, as in Perfetto), else 1 if an
 * arg was added under them (only then does an enclosing array's index
 * advance) and 0 if not.
 */
static int nested_value(struct da_ctx *x, struct key_buf *k, const uint8_t *data, size_t len,
			int depth);

/* Pushes the annotation's name (interned or inline) onto @k. */
static int annotation_name(struct da_ctx *x, const struct pz_field *d, struct key_buf *k)
{
	char name[256];
	size_t n;

	if (d[PB_DEBUG_ANNOTATION__NAME_IID].value) {
		uint32_t id = interned_str(x->c, PB_INTERNED_DATA__DEBUG_ANNOTATION_NAMES,
					   d[PB_DEBUG_ANNOTATION__NAME_IID].value);
		const char *sv = id ? tp_str_get(&x->c->imp->db->strings, id) : NULL;

		if (!sv)
			return -1;
		n = sanitize((const uint8_t *)sv, strlen(sv), name, sizeof(name));
	} else if (d[PB_DEBUG_ANNOTATION__NAME].id &&
		   d[PB_DEBUG_ANNOTATION__NAME].wire_type == PZ_WIRE_LEN) {
		n = sanitize(d[PB_DEBUG_ANNOTATION__NAME].data, d[PB_DEBUG_ANNOTATION__NAME].size,
			     name, sizeof(name));
	} else {
		return -1;
	}
	return key_push(k, name, n, false, 0) ? 0 : -1;
}

/* The type name of a proto_value, inline or interned; 0 if none. */
static uint32_t proto_type_name(struct da_ctx *x, const struct pz_field *d)
{
	if (d[PB_DEBUG_ANNOTATION__PROTO_TYPE_NAME].id)
		return te_str(x->c->imp, &d[PB_DEBUG_ANNOTATION__PROTO_TYPE_NAME]);
	if (d[PB_DEBUG_ANNOTATION__PROTO_TYPE_NAME_IID].id)
		return interned_str(x->c, PB_INTERNED_DATA__DEBUG_ANNOTATION_VALUE_TYPE_NAMES,
				    d[PB_DEBUG_ANNOTATION__PROTO_TYPE_NAME_IID].value);
	return 0;
}

static int annotation(struct da_ctx *x, struct key_buf *k, const uint8_t *data, size_t len,
		      int depth, bool named)
{
	struct ev_ctx *c = x->c;
	struct pz_field d[18];
	struct key_buf saved = *k;
	struct pz_reader r;
	struct pz_field f;
	int added = 0, rc = 0;

	if (depth > TE_MAX_ARG_DEPTH || pz_decode_table(data, len, d, 18) != PZ_OK)
		return -1;
	if (named && annotation_name(x, d, k) < 0) {
		*k = saved;
		return -1;
	}
	if (d[PB_DEBUG_ANNOTATION__DICT_ENTRIES].id) {
		pz_reader_init(&r, data, len);
		while (rc >= 0 && pz_reader_next(&r, &f) > 0)
			if (f.id == PB_DEBUG_ANNOTATION__DICT_ENTRIES && f.wire_type == PZ_WIRE_LEN)
				rc = annotation(x, k, f.data, f.size, depth + 1, true);
		added = 1;
	} else if (d[PB_DEBUG_ANNOTATION__ARRAY_VALUES].id) {
		uint32_t index = tp_argset_array_next(x->b, intern(c->imp, k->key, k->n_key));

		pz_reader_init(&r, data, len);
		while (rc >= 0 && pz_reader_next(&r, &f) > 0) {
			struct key_buf sub = *k;

			if (f.id != PB_DEBUG_ANNOTATION__ARRAY_VALUES || f.wire_type != PZ_WIRE_LEN)
				continue;
			if (!key_push(&sub, NULL, 0, true, index)) {
				rc = -1;
				break;
			}
			rc = annotation(x, &sub, f.data, f.size, depth + 1, false);
			if (rc > 0) {
				index = tp_argset_array_inc(x->b, intern(c->imp, k->key, k->n_key));
				added = 1;
			}
		}
	} else if (d[PB_DEBUG_ANNOTATION__BOOL_VALUE].id) {
		add_arg(x, k, TP_ARG_BOOL, d[PB_DEBUG_ANNOTATION__BOOL_VALUE].value != 0, 0, 0);
		added = 1;
	} else if (d[PB_DEBUG_ANNOTATION__UINT_VALUE].id) {
		add_arg(x, k, TP_ARG_UINT, (int64_t)d[PB_DEBUG_ANNOTATION__UINT_VALUE].value, 0, 0);
		added = 1;
	} else if (d[PB_DEBUG_ANNOTATION__INT_VALUE].id) {
		add_arg(x, k, TP_ARG_INT, (int64_t)d[PB_DEBUG_ANNOTATION__INT_VALUE].value, 0, 0);
		added = 1;
	} else if (d[PB_DEBUG_ANNOTATION__DOUBLE_VALUE].id) {
		add_arg(x, k, TP_ARG_REAL, 0, pz_field_double(&d[PB_DEBUG_ANNOTATION__DOUBLE_VALUE]),
			0);
		added = 1;
	} else if (d[PB_DEBUG_ANNOTATION__STRING_VALUE].id) {
		add_arg(x, k, TP_ARG_STR, 0, 0, te_str(c->imp, &d[PB_DEBUG_ANNOTATION__STRING_VALUE]));
		added = 1;
	} else if (d[PB_DEBUG_ANNOTATION__STRING_VALUE_IID].id) {
		const struct tp_interned *i = tp_seq_interned(
			c->imp, c->rec->gen, PB_INTERNED_DATA__DEBUG_ANNOTATION_STRING_VALUES,
			d[PB_DEBUG_ANNOTATION__STRING_VALUE_IID].value);

		if (!i) {
			rc = -1;
		} else {
			add_arg(x, k, TP_ARG_STR, 0, 0, i->str ? i->str : tp_db_str(c->imp->db, ""));
			added = 1;
		}
	} else if (d[PB_DEBUG_ANNOTATION__POINTER_VALUE].id) {
		add_arg(x, k, TP_ARG_PTR, (int64_t)d[PB_DEBUG_ANNOTATION__POINTER_VALUE].value, 0, 0);
		added = 1;
	} else if (d[PB_DEBUG_ANNOTATION__LEGACY_JSON_VALUE].id) {
		const struct pz_field *j = &d[PB_DEBUG_ANNOTATION__LEGACY_JSON_VALUE];

		if (j->wire_type == PZ_WIRE_LEN)
			te_json_args(c->imp, x->b, k->flat, k->n_flat, k->key, k->n_key,
				     j->data, j->size);
		added = 1;
	} else if (d[PB_DEBUG_ANNOTATION__PROTO_VALUE].id) {
		/*
		 * A nested DebugAnnotation is read as one (under its own name);
		 * other types need Perfetto's descriptor pool, which we do not
		 * carry: an error, as Perfetto's for a type it does not know.
		 */
		const char *tn = NULL;
		uint32_t id = proto_type_name(x, d);
		const struct pz_field *v = &d[PB_DEBUG_ANNOTATION__PROTO_VALUE];

		if (id)
			tn = tp_str_get(&c->imp->db->strings, id);
		if (tn && !strcmp(tn, ".perfetto.protos.DebugAnnotation") &&
		    v->wire_type == PZ_WIRE_LEN) {
			added = 1;
			rc = annotation(x, k, v->data, v->size, depth + 1, true);
		} else {
			rc = -1;
		}
	} else if (d[PB_DEBUG_ANNOTATION__NESTED_VALUE].id &&
		   d[PB_DEBUG_ANNOTATION__NESTED_VALUE].wire_type == PZ_WIRE_LEN) {
		rc = nested_value(x, k, d[PB_DEBUG_ANNOTATION__NESTED_VALUE].data,
				  d[PB_DEBUG_ANNOTATION__NESTED_VALUE].size, depth + 1);
		added = rc > 0;
	}
	*k = saved;
	return rc < 0 ? -1 : added;
}

/* Counts the occurrences of field @id in @data. */
static size_t count_field(const uint8_t *data, size_t len, uint32_t id)
{
	struct pz_reader r;
	struct pz_field f;
	size_t n = 0;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0)
		n += f.id == id && f.wire_type == PZ_WIRE_LEN;
	return n;
}

static int nested_value(struct da_ctx *x, struct key_buf *k, const uint8_t *data, size_t len,
			int depth)
{
	struct ev_ctx *c = x->c;
	struct pz_field d[9];
	struct pz_reader r;
	struct pz_field f;
	int rc = 0, added = 0;

	if (depth > TE_MAX_ARG_DEPTH || pz_decode_table(data, len, d, 9) != PZ_OK)
		return -1;
	switch (d[PB_DEBUG_ANNOTATION_NESTED_VALUE__NESTED_TYPE].value) {
	case 0:
		if (d[PB_DEBUG_ANNOTATION_NESTED_VALUE__BOOL_VALUE].id)
			add_arg(x, k, TP_ARG_BOOL,
				d[PB_DEBUG_ANNOTATION_NESTED_VALUE__BOOL_VALUE].value != 0, 0, 0);
		else if (d[PB_DEBUG_ANNOTATION_NESTED_VALUE__INT_VALUE].id)
			add_arg(x, k, TP_ARG_INT,
				(int64_t)d[PB_DEBUG_ANNOTATION_NESTED_VALUE__INT_VALUE].value, 0, 0);
		else if (d[PB_DEBUG_ANNOTATION_NESTED_VALUE__DOUBLE_VALUE].id)
			add_arg(x, k, TP_ARG_REAL, 0,
				pz_field_double(&d[PB_DEBUG_ANNOTATION_NESTED_VALUE__DOUBLE_VALUE]), 0);
		else if (d[PB_DEBUG_ANNOTATION_NESTED_VALUE__STRING_VALUE].id)
			add_arg(x, k, TP_ARG_STR, 0, 0,
				te_str(c->imp, &d[PB_DEBUG_ANNOTATION_NESTED_VALUE__STRING_VALUE]));
		else
			return 0;
		return 1;
	case 1: {
		/* Keys and values are two parallel repeated fields, equally long. */
		struct pz_reader kr;
		struct pz_field kf;

		if (count_field(data, len, PB_DEBUG_ANNOTATION_NESTED_VALUE__DICT_KEYS) !=
		    count_field(data, len, PB_DEBUG_ANNOTATION_NESTED_VALUE__DICT_VALUES))
			return -1;
		pz_reader_init(&kr, data, len);
		pz_reader_init(&r, data, len);
		while (rc >= 0) {
			struct key_buf sub = *k;
			char name[256];
			size_t n;
			bool got_k = false, got_v = false;

			while (!got_k && pz_reader_next(&kr, &kf) > 0)
				got_k = kf.id == PB_DEBUG_ANNOTATION_NESTED_VALUE__DICT_KEYS &&
					kf.wire_type == PZ_WIRE_LEN;
			while (!got_v && pz_reader_next(&r, &f) > 0)
				got_v = f.id == PB_DEBUG_ANNOTATION_NESTED_VALUE__DICT_VALUES &&
					f.wire_type == PZ_WIRE_LEN;
			if (!got_k || !got_v)
				break;
			n = sanitize(kf.data, kf.size, name, sizeof(name));
			if (!key_push(&sub, name, n, false, 0))
				return -1;
			rc = nested_value(x, &sub, f.data, f.size, depth + 1);
		}
		return rc < 0 ? -1 : 1;
	}
	case 2: {
		uint32_t index = tp_argset_array_next(x->b, intern(c->imp, k->key, k->n_key));

		pz_reader_init(&r, data, len);
		while (rc >= 0 && pz_reader_next(&r, &f) > 0) {
			struct key_buf sub = *k;

			if (f.id != PB_DEBUG_ANNOTATION_NESTED_VALUE__ARRAY_VALUES ||
			    f.wire_type != PZ_WIRE_LEN)
				continue;
			if (!key_push(&sub, NULL, 0, true, index))
				return -1;
			rc = nested_value(x, &sub, f.data, f.size, depth + 1);
			if (rc > 0) {
				index = tp_argset_array_inc(x->b, intern(c->imp, k->key, k->n_key));
				added = 1;
			}
		}
		return rc < 0 ? -1 : added;
	}
	default:
		return 0;
	}
}

/* Source locations (interned): file, function and line under @prefix keys. */
static void source_location(struct ev_ctx *c, struct tp_argset *b, uint64_t iid, uint32_t kfile,
			    uint32_t kfunc, uint32_t kline)
{
	const struct tp_interned *i =
		tp_seq_interned(c->imp, c->rec->gen, PB_INTERNED_DATA__SOURCE_LOCATIONS, iid);
	struct pz_field s[5];
	char path[1024];
	size_t n, j;

	if (!iid || !i || pz_decode_table(i->msg, i->len, s, 5) != PZ_OK) {
		parse_error(c);
		return;
	}
	/* Windows paths use '\': show them with '/' like the rest. */
	n = s[PB_SOURCE_LOCATION__FILE_NAME].id ? s[PB_SOURCE_LOCATION__FILE_NAME].size : 0;
	if (n >= sizeof(path))
		n = sizeof(path) - 1;
	for (j = 0; j < n; j++) {
		char ch = (char)s[PB_SOURCE_LOCATION__FILE_NAME].data[j];

		path[j] = ch == '\\' ? '/' : ch;
	}
	tp_argset_str(c->imp, b, kfile, intern(c->imp, path, n));
	/* A missing function name is a NULL string, as Perfetto interns it. */
	tp_argset_str(c->imp, b, kfunc,
		      s[PB_SOURCE_LOCATION__FUNCTION_NAME].id
			      ? te_str(c->imp, &s[PB_SOURCE_LOCATION__FUNCTION_NAME])
			      : 0);
	tp_argset_uint(c->imp, b, kline, (uint32_t)s[PB_SOURCE_LOCATION__LINE_NUMBER].value);
}

/*
 * A LogMessage: its interned body, its interned location (file, function,
 * line as written, not normalized; a missing string is NULL) and, if set,
 * its priority as Android's. (Perfetto also adds a row to android_logs,
 * a table we do not have.)
 */
static void log_message(struct ev_ctx *c, struct tp_argset *b, const uint8_t *data, size_t len)
{
	struct te_keys *k = &c->te->k;
	struct pz_field m[4], s[5];
	const struct tp_interned *loc = NULL;
	uint32_t body;

	if (c->utid < 0 || pz_decode_table(data, len, m, 4) != PZ_OK) {
		parse_error(c);
		return;
	}
	body = interned_str(c, PB_INTERNED_DATA__LOG_MESSAGE_BODY, m[PB_LOG_MESSAGE__BODY_IID].value);
	if (!body) {
		parse_error(c);
		return;
	}
	tp_argset_str(c->imp, b, k->log_body, body);
	if (m[PB_LOG_MESSAGE__SOURCE_LOCATION_IID].id) {
		loc = tp_seq_interned(c->imp, c->rec->gen, PB_INTERNED_DATA__SOURCE_LOCATIONS,
				      m[PB_LOG_MESSAGE__SOURCE_LOCATION_IID].value);
		if (!loc || pz_decode_table(loc->msg, loc->len, s, 5) != PZ_OK) {
			parse_error(c);
			return;
		}
		tp_argset_str(c->imp, b, k->log_file,
			      s[PB_SOURCE_LOCATION__FILE_NAME].id
				      ? te_str(c->imp, &s[PB_SOURCE_LOCATION__FILE_NAME])
				      : 0);
		tp_argset_str(c->imp, b, k->log_function,
			      s[PB_SOURCE_LOCATION__FUNCTION_NAME].id
				      ? te_str(c->imp, &s[PB_SOURCE_LOCATION__FUNCTION_NAME])
				      : 0);
		tp_argset_int(c->imp, b, k->log_line,
			      (uint32_t)s[PB_SOURCE_LOCATION__LINE_NUMBER].value);
	}
	if (m[PB_LOG_MESSAGE__PRIO].id) {
		uint64_t p = m[PB_LOG_MESSAGE__PRIO].value;

		/* LogMessage.Priority and AndroidLogPriority share their numbers. */
		tp_argset_int(c->imp, b, k->log_prio, p <= 7 ? (int64_t)p : 0);
	}
}

/* The fields of ChromeHistogramSample, as typed args. */
static void histogram_args(struct ev_ctx *c, struct tp_argset *b, const uint8_t *data, size_t len)
{
	struct te_keys *k = &c->te->k;
	struct pz_field s[5];
	struct pz_reader r;
	struct pz_field f;

	if (pz_decode_table(data, len, s, 5) != PZ_OK) {
		parse_error(c);
		return;
	}
	if (s[PB_CHROME_HISTOGRAM_SAMPLE__NAME_IID].id) {
		uint32_t id;

		if (s[PB_CHROME_HISTOGRAM_SAMPLE__NAME].id) {
			/* Only one of name and name_iid may be set. */
			parse_error(c);
		} else if (!(id = interned_str(c, PB_INTERNED_DATA__HISTOGRAM_NAMES,
					       s[PB_CHROME_HISTOGRAM_SAMPLE__NAME_IID].value))) {
			parse_error(c);
		} else {
			tp_argset_str(c->imp, b, k->hist_name, id);
		}
	}
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		switch (f.id) {
		case PB_CHROME_HISTOGRAM_SAMPLE__NAME_HASH:
			tp_argset_uint(c->imp, b, k->hist_name_hash, f.value);
			break;
		case PB_CHROME_HISTOGRAM_SAMPLE__NAME:
			tp_argset_str(c->imp, b, k->hist_name, te_str(c->imp, &f));
			break;
		case PB_CHROME_HISTOGRAM_SAMPLE__SAMPLE:
			tp_argset_int(c->imp, b, k->hist_sample, (int64_t)f.value);
			break;
		case PB_CHROME_HISTOGRAM_SAMPLE__NAME_IID:
			tp_argset_uint(c->imp, b, k->hist_name_iid, f.value);
			break;
		default:
			break;
		}
	}
}

/* ChromeHashedPerformanceMark, as typed args. */
static void performance_mark_args(struct ev_ctx *c, struct tp_argset *b, const uint8_t *data,
				  size_t len)
{
	struct te_keys *k = &c->te->k;
	struct pz_reader r;
	struct pz_field f;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		switch (f.id) {
		case PB_CHROME_HASHED_PERFORMANCE_MARK__SITE_HASH:
			tp_argset_uint(c->imp, b, k->perf_site_hash, (uint32_t)f.value);
			break;
		case PB_CHROME_HASHED_PERFORMANCE_MARK__SITE:
			tp_argset_str(c->imp, b, k->perf_site, te_str(c->imp, &f));
			break;
		case PB_CHROME_HASHED_PERFORMANCE_MARK__MARK_HASH:
			tp_argset_uint(c->imp, b, k->perf_mark_hash, (uint32_t)f.value);
			break;
		case PB_CHROME_HASHED_PERFORMANCE_MARK__MARK:
			tp_argset_str(c->imp, b, k->perf_mark, te_str(c->imp, &f));
			break;
		case PB_CHROME_HASHED_PERFORMANCE_MARK__EXECUTION_CONTEXT_ID:
			tp_argset_uint(c->imp, b, k->perf_context, (uint32_t)f.value);
			break;
		case PB_CHROME_HASHED_PERFORMANCE_MARK__SEQUENCE_NUMBER:
			tp_argset_uint(c->imp, b, k->perf_sequence, (uint32_t)f.value);
			break;
		default:
			break;
		}
	}
	if (r.err != PZ_OK)
		parse_error(c);
}

/* The event's own args: locations, typed fields, correlation ids, debug.* */
static void event_args(struct ev_ctx *c, struct tp_argset *b)
{
	struct te_keys *k = &c->te->k;
	const struct pz_field *e = c->e;
	struct pz_reader r;
	struct pz_field f;
	struct key_buf key;
	struct da_ctx da;

	if (!b)
		return;
	if (e[PB_TRACK_EVENT__SOURCE_LOCATION_IID].id)
		source_location(c, b, e[PB_TRACK_EVENT__SOURCE_LOCATION_IID].value, k->src_file,
				k->src_function, k->src_line);
	if (e[PB_TRACK_EVENT__TASK_EXECUTION].id &&
	    e[PB_TRACK_EVENT__TASK_EXECUTION].wire_type == PZ_WIRE_LEN) {
		struct pz_field t[2];

		if (pz_decode_table(e[PB_TRACK_EVENT__TASK_EXECUTION].data,
				    e[PB_TRACK_EVENT__TASK_EXECUTION].size, t, 2) == PZ_OK)
			source_location(c, b, t[PB_TASK_EXECUTION__POSTED_FROM_IID].value,
					k->task_file, k->task_function, k->task_line);
		else
			parse_error(c);
	}
	if (e[PB_TRACK_EVENT__LOG_MESSAGE].id &&
	    e[PB_TRACK_EVENT__LOG_MESSAGE].wire_type == PZ_WIRE_LEN)
		log_message(c, b, e[PB_TRACK_EVENT__LOG_MESSAGE].data,
			    e[PB_TRACK_EVENT__LOG_MESSAGE].size);
	if (e[PB_TRACK_EVENT__CHROME_HISTOGRAM_SAMPLE].id &&
	    e[PB_TRACK_EVENT__CHROME_HISTOGRAM_SAMPLE].wire_type == PZ_WIRE_LEN)
		histogram_args(c, b, e[PB_TRACK_EVENT__CHROME_HISTOGRAM_SAMPLE].data,
			       e[PB_TRACK_EVENT__CHROME_HISTOGRAM_SAMPLE].size);
	if (e[PB_TRACK_EVENT__CHROME_MOJO_EVENT_INFO].id &&
	    e[PB_TRACK_EVENT__CHROME_MOJO_EVENT_INFO].wire_type == PZ_WIRE_LEN)
		te_mojo_args(c->imp, c->rec->gen, c->ev->machine, b,
			     e[PB_TRACK_EVENT__CHROME_MOJO_EVENT_INFO].data,
			     e[PB_TRACK_EVENT__CHROME_MOJO_EVENT_INFO].size);
	/* Extension fields (1000 and up) are not in e[]: one pass finds them. */
	pz_reader_init(&r, c->ev->data, c->ev->len);
	while (pz_reader_next(&r, &f) > 0)
		if (f.id == PB_CHROME_TRACK_EVENT__CHROME_HASHED_PERFORMANCE_MARK &&
		    f.wire_type == PZ_WIRE_LEN)
			performance_mark_args(c, b, f.data, f.size);
	if (e[PB_TRACK_EVENT__CORRELATION_ID].id) {
		char id[64];

		snprintf(id, sizeof(id), "tp:#%" PRIu64, e[PB_TRACK_EVENT__CORRELATION_ID].value);
		tp_argset_str(c->imp, b, k->correlation_id, tp_db_str(c->imp->db, id));
	}
	if (e[PB_TRACK_EVENT__CORRELATION_ID_STR].id)
		tp_argset_str(c->imp, b, k->correlation_id,
			      te_str(c->imp, &e[PB_TRACK_EVENT__CORRELATION_ID_STR]));
	if (e[PB_TRACK_EVENT__CORRELATION_ID_STR_IID].id) {
		uint32_t id = interned_str(c, PB_INTERNED_DATA__CORRELATION_ID_STR,
					   e[PB_TRACK_EVENT__CORRELATION_ID_STR_IID].value);

		if (id)
			tp_argset_str(c->imp, b, k->correlation_id, id);
	}
	if (c->has_source_id)
		tp_argset_int(c->imp, b, k->legacy_source_id, c->source_id);
	pz_reader_init(&r, c->ev->data, e[PB_TRACK_EVENT__DEBUG_ANNOTATIONS].id ? c->ev->len : 0);
	/* Debug annotations come after the typed args, as in Perfetto. */
	da.c = c;
	da.b = b;
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id != PB_TRACK_EVENT__DEBUG_ANNOTATIONS || f.wire_type != PZ_WIRE_LEN)
			continue;
		memset(&key, 0, sizeof(key));
		key_push(&key, "debug", 5, false, 0);
		if (annotation(&da, &key, f.data, f.size, 0, true) < 0)
			parse_error(c);
	}
	if (c->passthrough_utid >= 0) {
		struct tp_arg a = {
			.flat_key = k->legacy_passthrough,
			.key = k->legacy_passthrough,
			.type = TP_ARG_UINT,
			.skip_if_exists = true,
			.v.i = c->passthrough_utid,
		};

		tp_argset_add(c->imp, b, &a);
	}
}

/* --------------------------------------------------------------- tracks ---- */

static int64_t thread_upid(struct tp_import *imp, int64_t utid)
{
	int64_t v;

	if (utid < 0 || (size_t)utid >= imp->db->thread.n_rows)
		return -1;
	v = tp_col_int(&imp->db->thread, THREAD_UPID)[utid];
	return v == TP_NULL_INT ? -1 : v;
}

static bool legacy_phase(const struct ev_ctx *c, int32_t *out)
{
	if (!c->has_legacy || !c->l[PB_TRACK_EVENT_LEGACY_EVENT__PHASE].id)
		return false;
	*out = pz_field_int32(&c->l[PB_TRACK_EVENT_LEGACY_EVENT__PHASE]);
	return true;
}

static bool is_async_phase(int32_t p)
{
	return p == 'b' || p == 'e' || p == 'n' || p == 'S' || p == 'T' || p == 'p' || p == 'F';
}

/* Thread timestamps go to slices on a thread, not to legacy async ones. */
static bool on_thread(const struct ev_ctx *c)
{
	int32_t p;

	return c->utid >= 0 && !(legacy_phase(c, &p) && is_async_phase(p));
}

/* Works out utid/upid from the uuid, or the sequence's thread. */
static bool initial_association(struct ev_ctx *c)
{
	const struct tp_seq_gen *g = c->gen;
	uint32_t m = c->ev->machine;
	int32_t phase;

	if (c->e[PB_TRACK_EVENT__TRACK_UUID].id) {
		c->uuid = c->e[PB_TRACK_EVENT__TRACK_UUID].value;
	} else if (g->defaults) {
		struct pz_field d[12];

		if (pz_decode_table(g->defaults, g->defaults_len, d, 12) == PZ_OK)
			c->uuid = d[PB_TRACK_EVENT_DEFAULTS__TRACK_UUID].value;
	}
	if (c->uuid) {
		struct te_track *t = te_track_resolve(c->imp, c->uuid, m);

		if (!t)
			return false;
		switch (t->scope) {
		case TE_SCOPE_THREAD:
			c->utid = t->utid;
			c->upid = thread_upid(c->imp, c->utid);
			break;
		case TE_SCOPE_PROCESS:
			c->upid = t->upid;
			if (g->has_thread) {
				int64_t cand = te_update_thread(c->imp, m, g->tid, g->pid);

				if (cand >= 0 && thread_upid(c->imp, cand) == c->upid)
					c->passthrough_utid = cand;
			}
			break;
		default:
			if (g->has_thread)
				c->passthrough_utid = te_update_thread(c->imp, m, g->tid, g->pid);
			break;
		}
	} else {
		bool valid = g->has_thread;
		int64_t pid = g->pid, tid = g->tid;

		/* Only legacy events (or events without a uuid) use the sequence's thread. */
		c->fallback =
			(!c->e[PB_TRACK_EVENT__TRACK_UUID].id || !c->e[PB_TRACK_EVENT__TYPE].id) &&
			valid;
		if (c->has_legacy && c->l[PB_TRACK_EVENT_LEGACY_EVENT__PID_OVERRIDE].id) {
			c->fallback = true;
			pid = pz_field_int32(&c->l[PB_TRACK_EVENT_LEGACY_EVENT__PID_OVERRIDE]);
		}
		if (c->has_legacy && c->l[PB_TRACK_EVENT_LEGACY_EVENT__TID_OVERRIDE].id && valid) {
			c->fallback = true;
			tid = pz_field_int32(&c->l[PB_TRACK_EVENT_LEGACY_EVENT__TID_OVERRIDE]);
		}
		if (c->fallback) {
			if (!pid || !tid)
				return false;
			c->utid = te_update_thread(c->imp, m, tid, pid);
			if (c->utid < 0)
				return false;
			c->upid = thread_upid(c->imp, c->utid);
		}
	}
	if (!legacy_phase(c, &phase))
		return true;
	if (is_async_phase(phase)) {
		c->passthrough_utid = c->utid;
	} else if (phase == 'i' || phase == 'I') {
		switch (c->l[PB_TRACK_EVENT_LEGACY_EVENT__INSTANT_EVENT_SCOPE].value) {
		case PBE_TRACK_EVENT_LEGACY_EVENT_INSTANT_EVENT_SCOPE__SCOPE_GLOBAL:
			c->passthrough_utid = c->utid;
			c->utid = -1;
			break;
		case PBE_TRACK_EVENT_LEGACY_EVENT_INSTANT_EVENT_SCOPE__SCOPE_PROCESS:
			if (c->upid < 0)
				return false;
			c->passthrough_utid = c->utid;
			c->utid = -1;
			break;
		default:
			if (c->utid < 0)
				return false;
			break;
		}
	}
	return true;
}

/*
 * The track of a legacy async event, by its id: unscoped, global, or local
 * to the process (Perfetto's ParseTrackAssociationInternal). Slices of
 * nestable phases are told apart by category, of the older ones ('S', 'T',
 * 'p', 'F') by name; an id_scope makes the scope "category:id_scope".
 */
static int64_t legacy_async_track(struct ev_ctx *c, int32_t phase)
{
	const struct pz_field *l = c->l;
	struct tp_db *db = c->imp->db;
	bool local = false, old_style = phase == 'S' || phase == 'T' || phase == 'p' ||
					phase == 'F';
	uint32_t scope = old_style ? c->name : c->cat;
	enum te_async_kind kind;
	int64_t id;

	if (l[PB_TRACK_EVENT_LEGACY_EVENT__UNSCOPED_ID].id) {
		id = (int64_t)l[PB_TRACK_EVENT_LEGACY_EVENT__UNSCOPED_ID].value;
	} else if (l[PB_TRACK_EVENT_LEGACY_EVENT__GLOBAL_ID].id) {
		id = (int64_t)l[PB_TRACK_EVENT_LEGACY_EVENT__GLOBAL_ID].value;
	} else if (l[PB_TRACK_EVENT_LEGACY_EVENT__LOCAL_ID].id) {
		if (c->upid < 0)
			return -1; /* local_id without a process */
		id = (int64_t)l[PB_TRACK_EVENT_LEGACY_EVENT__LOCAL_ID].value;
		local = true;
	} else {
		return -1; /* async event without an id */
	}
	if (l[PB_TRACK_EVENT_LEGACY_EVENT__ID_SCOPE].id &&
	    l[PB_TRACK_EVENT_LEGACY_EVENT__ID_SCOPE].wire_type == PZ_WIRE_LEN) {
		const char *cat = c->cat ? tp_str_get(&db->strings, c->cat) : NULL;
		size_t cl = cat ? strlen(cat) : 0, sl = l[PB_TRACK_EVENT_LEGACY_EVENT__ID_SCOPE].size;
		char *buf = malloc(cl + sl + 2);

		if (!buf)
			return -1;
		if (cl)
			memcpy(buf, cat, cl);
		buf[cl] = ':';
		memcpy(buf + cl + 1, l[PB_TRACK_EVENT_LEGACY_EVENT__ID_SCOPE].data, sl);
		scope = tp_str_intern(&db->strings, buf, cl + 1 + sl);
		free(buf);
	}
	c->source_id = id;
	c->has_source_id = true;
	if (phase == 'b' || phase == 'S')
		kind = TE_ASYNC_BEGIN;
	else if (phase == 'e' || phase == 'T')
		kind = TE_ASYNC_END;
	else
		kind = TE_ASYNC_INSTANT;
	return te_legacy_async_track(c->imp, c->ev->machine, c->name, c->upid < 0 ? 0 : c->upid,
				     id, local, scope, kind);
}

/* The track for this event; -1 if it has none. */
static int64_t track_for(struct ev_ctx *c, enum te_use use)
{
	bool legacy = !c->uuid && c->fallback;
	int64_t id = -1;
	int32_t phase;

	if (!legacy)
		id = te_track_for_event(c->imp, c->uuid, c->name, use, c->ev->machine, c->seq_id);
	if (legacy_phase(c, &phase)) {
		if (is_async_phase(phase))
			return legacy_async_track(c, phase);
		if (phase == 'i' || phase == 'I') {
			switch (c->l[PB_TRACK_EVENT_LEGACY_EVENT__INSTANT_EVENT_SCOPE].value) {
			case PBE_TRACK_EVENT_LEGACY_EVENT_INSTANT_EVENT_SCOPE__SCOPE_GLOBAL:
				return te_legacy_instant_track(c->imp, -1, true);
			case PBE_TRACK_EVENT_LEGACY_EVENT_INSTANT_EVENT_SCOPE__SCOPE_PROCESS:
				return te_legacy_instant_track(c->imp, c->upid, false);
			default:
				break;
			}
		}
	}
	if (legacy)
		return te_thread_track(c->imp, c->utid);
	return id;
}

/* ---------------------------------------------------------------- slices ---- */

static void slice_thread_fields(struct ev_ctx *c, uint32_t row, bool instant)
{
	struct tp_table *s = &c->imp->db->slice;

	if (c->has_thread_ts) {
		tp_set_int(s, SLICE_THREAD_TS, row, c->thread_ts);
		if (instant)
			tp_set_int(s, SLICE_THREAD_DUR, row, 0);
	}
	if (c->has_thread_instr) {
		tp_set_int(s, SLICE_THREAD_INSTRUCTION_COUNT, row, c->thread_instr);
		if (instant)
			tp_set_int(s, SLICE_THREAD_INSTRUCTION_DELTA, row, 0);
	}
}

static void flows(struct ev_ctx *c, uint32_t row)
{
	const struct pz_field *l = c->l;

	if (c->has_legacy && l[PB_TRACK_EVENT_LEGACY_EVENT__BIND_ID].id) {
		if (!l[PB_TRACK_EVENT_LEGACY_EVENT__FLOW_DIRECTION].id)
			tp_stat_add(c->imp, "flow_without_direction", -1, 0, 1);
		else
			te_flow_bind(c->imp, c->ev->machine, row,
				     l[PB_TRACK_EVENT_LEGACY_EVENT__BIND_ID].value,
				     l[PB_TRACK_EVENT_LEGACY_EVENT__FLOW_DIRECTION].value);
	}
	if (c->e[PB_TRACK_EVENT__FLOW_IDS].id || c->e[PB_TRACK_EVENT__FLOW_IDS_OLD].id ||
	    c->e[PB_TRACK_EVENT__TERMINATING_FLOW_IDS].id ||
	    c->e[PB_TRACK_EVENT__TERMINATING_FLOW_IDS_OLD].id)
		te_flow_v2(c->imp, c->ev->machine, row, c->ev->data, c->ev->len);
}

/*
 * The event's callstack (inline or interned), if it has one, on the slice
 * @row it began (callsite_id) or ended (end_callsite_id), with its weight.
 */
static void callstack(struct ev_ctx *c, int64_t track, uint32_t row, bool end)
{
	const struct pz_field *in = &c->e[PB_TRACK_EVENT__CALLSTACK];
	const struct pz_field *iid = &c->e[PB_TRACK_EVENT__CALLSTACK_IID];
	const struct pz_field *w = &c->e[PB_TRACK_EVENT__CALLSTACK_WEIGHT];
	struct tp_table *t = &c->imp->db->te_callstacks;
	int64_t cs = -1, r;

	if (iid->id && iid->wire_type == PZ_WIRE_VARINT) {
		if (c->rec->gen != UINT32_MAX)
			cs = tp_prof_event_callstack(c->imp, c->rec->gen, c->upid, iid->value, NULL, 0,
						     c->ev->machine);
	} else if (in->id && in->wire_type == PZ_WIRE_LEN) {
		cs = tp_prof_event_callstack(c->imp, 0, -1, 0, in->data, in->size, c->ev->machine);
	}
	if (cs < 0)
		return;
	r = tp_table_append(t);
	if (r < 0)
		return;
	tp_set_int(t, TE_CS_SLICE_ID, (size_t)r, row);
	tp_set_int(t, TE_CS_TRACK_ID, (size_t)r, track);
	tp_set_int(t, end ? TE_CS_END_CALLSITE_ID : TE_CS_CALLSITE_ID, (size_t)r, cs);
	if (w->id && w->wire_type == PZ_WIRE_FIXED64)
		tp_set_real(t, TE_CS_WEIGHT, (size_t)r, pz_field_double(w));
}

static void add_phase_arg(struct ev_ctx *c, struct tp_argset *b, char phase)
{
	char p[2] = {phase, 0};

	tp_argset_str(c->imp, b, c->te->k.legacy_phase, tp_db_str(c->imp->db, p));
}

static void begin_event(struct ev_ctx *c, char phase)
{
	int64_t track = track_for(c, TE_USE_BEGIN), row;

	if (track < 0)
		goto fail;
	row = tp_slice_begin(c->imp, c->ev->ts, track, c->cat, c->name);
	if (row < 0)
		return;
	{
		struct tp_argset *b = tp_slice_args(c->imp, track, (uint32_t)row);

		event_args(c, b);
		if (phase == 'S' && b)
			add_phase_arg(c, b, phase);
	}
	if (on_thread(c))
		slice_thread_fields(c, (uint32_t)row, false);
	flows(c, (uint32_t)row);
	callstack(c, track, (uint32_t)row, false);
	return;
fail:
	parse_error(c);
}

static void end_event(struct ev_ctx *c)
{
	struct tp_table *s = &c->imp->db->slice;
	int64_t track = track_for(c, TE_USE_END), row;

	if (track < 0) {
		parse_error(c);
		return;
	}
	row = tp_slice_end_start(c->imp, c->ev->ts, track, c->cat, c->name);
	if (row < 0)
		return;
	event_args(c, tp_slice_args(c->imp, track, (uint32_t)row));
	flows(c, (uint32_t)row);
	callstack(c, track, (uint32_t)row, true);
	if (on_thread(c)) {
		int64_t tts = tp_get_int(s, SLICE_THREAD_TS, row);
		int64_t tic = tp_get_int(s, SLICE_THREAD_INSTRUCTION_COUNT, row);

		if (tts != TP_NULL_INT && c->has_thread_ts && c->thread_ts != tts)
			tp_set_int(s, SLICE_THREAD_DUR, (size_t)row, tp_ts_sub(c->thread_ts, tts));
		if (tic != TP_NULL_INT && c->has_thread_instr)
			tp_set_int(s, SLICE_THREAD_INSTRUCTION_DELTA, (size_t)row,
				   tp_ts_sub(c->thread_instr, tic));
	}
	tp_slice_end_done(c->imp, track, (uint32_t)row);
}

static void scoped_event(struct ev_ctx *c, int64_t dur, enum te_use use, char phase_arg)
{
	int64_t track = track_for(c, use), row;

	if (track < 0) {
		parse_error(c);
		return;
	}
	row = tp_slice_scoped(c->imp, c->ev->ts, dur, track, c->cat, c->name);
	if (row < 0)
		return;
	{
		struct tp_argset *b = tp_slice_args(c->imp, track, (uint32_t)row);

		event_args(c, b);
		if (phase_arg && b)
			add_phase_arg(c, b, phase_arg);
	}
	if (on_thread(c) && dur == 0)
		slice_thread_fields(c, (uint32_t)row, true);
	if (phase_arg != 'T' && phase_arg != 'p')
		flows(c, (uint32_t)row);
	callstack(c, track, (uint32_t)row, false);
}

static void complete_event(struct ev_ctx *c)
{
	struct tp_table *s = &c->imp->db->slice;
	int64_t dur = pz_field_int64(&c->l[PB_TRACK_EVENT_LEGACY_EVENT__DURATION_US]), track, row;

	if (c->utid < 0 || dur < 0 || dur > INT64_MAX / 1000) {
		parse_error(c);
		return;
	}
	track = track_for(c, TE_USE_OTHER);
	if (track < 0) {
		parse_error(c);
		return;
	}
	row = tp_slice_scoped(c->imp, c->ev->ts, dur * 1000, track, c->cat, c->name);
	if (row < 0)
		return;
	event_args(c, tp_slice_args(c->imp, track, (uint32_t)row));
	if (c->has_thread_ts) {
		int64_t tdur = pz_field_int64(&c->l[PB_TRACK_EVENT_LEGACY_EVENT__THREAD_DURATION_US]);

		tp_set_int(s, SLICE_THREAD_TS, (size_t)row, c->thread_ts);
		tp_set_int(s, SLICE_THREAD_DUR, (size_t)row,
			   (int64_t)((uint64_t)tdur * 1000u)); /* nonsense in, nonsense out */
	}
	if (c->has_thread_instr) {
		tp_set_int(s, SLICE_THREAD_INSTRUCTION_COUNT, (size_t)row, c->thread_instr);
		tp_set_int(s, SLICE_THREAD_INSTRUCTION_DELTA, (size_t)row,
			   pz_field_int64(
				   &c->l[PB_TRACK_EVENT_LEGACY_EVENT__THREAD_INSTRUCTION_DELTA]));
	}
	flows(c, (uint32_t)row);
	callstack(c, track, (uint32_t)row, false);
}

static void flow_v1_event(struct ev_ctx *c, char phase)
{
	int64_t track;

	if (!c->l[PB_TRACK_EVENT_LEGACY_EVENT__UNSCOPED_ID].id) {
		tp_stat_add(c->imp, "flow_invalid_id", -1, 0, 1);
		parse_error(c);
		return;
	}
	track = track_for(c, TE_USE_OTHER);
	if (track < 0) {
		parse_error(c);
		return;
	}
	te_flow_v1(c->imp, c->ev->machine, track, phase,
		   c->l[PB_TRACK_EVENT_LEGACY_EVENT__UNSCOPED_ID].value,
		   c->cat, c->name,
		   c->l[PB_TRACK_EVENT_LEGACY_EVENT__BIND_TO_ENCLOSING].value != 0);
}

/* 'M' events name threads and processes from their first debug annotation. */
static void metadata_event(struct ev_ctx *c)
{
	const char *name = c->name ? tp_str_get(&c->imp->db->strings, c->name) : NULL;
	const struct pz_field *a = &c->e[PB_TRACK_EVENT__DEBUG_ANNOTATIONS];
	struct pz_reader r;
	struct pz_field f, d[18];
	uint32_t value;

	if (!name)
		goto fail;
	pz_reader_init(&r, c->ev->data, c->ev->len);
	a = NULL;
	while (pz_reader_next(&r, &f) > 0)
		if (f.id == PB_TRACK_EVENT__DEBUG_ANNOTATIONS && f.wire_type == PZ_WIRE_LEN) {
			a = &f;
			break;
		}
	if (strcmp(name, "thread_name") && strcmp(name, "process_name"))
		return;
	if (!a || pz_decode_table(a->data, a->size, d, 18) != PZ_OK)
		goto fail;
	if (!d[PB_DEBUG_ANNOTATION__STRING_VALUE].id || !d[PB_DEBUG_ANNOTATION__STRING_VALUE].size)
		return;
	value = te_str(c->imp, &d[PB_DEBUG_ANNOTATION__STRING_VALUE]);
	if (!strcmp(name, "thread_name")) {
		if (c->utid < 0)
			goto fail;
		tp_proc_set_thread_name(c->imp, c->utid, value);
	} else {
		if (c->upid < 0)
			goto fail;
		if (tp_get_str(&c->imp->db->process, PROCESS_NAME, c->upid) == TP_NULL_STR ||
		    hmap_get(&c->te->named_by_descriptor, (uint64_t)c->upid | (1ull << 63), NULL)) {
			tp_set_str(&c->imp->db->process, PROCESS_NAME, (size_t)c->upid, value);
			hmap_put(&c->te->named_by_descriptor, (uint64_t)c->upid | (1ull << 63), 1);
		}
	}
	return;
fail:
	parse_error(c);
}

/* --------------------------------------------------------------- counters ---- */

static void legacy_thread_counters(struct ev_ctx *c)
{
	if (c->utid < 0)
		return;
	if (c->has_thread_ts)
		tp_counter_add(c->imp, c->ev->ts, te_legacy_counter_track(c->imp, c->utid, false),
			       (double)c->thread_ts);
	if (c->has_thread_instr)
		tp_counter_add(c->imp, c->ev->ts, te_legacy_counter_track(c->imp, c->utid, true),
			       (double)c->thread_instr);
}

static void extra_counters(struct ev_ctx *c)
{
	struct tp_te *te = c->te;
	uint32_t i;

	for (i = 0; i < c->rec->n_extra; i++) {
		const struct te_extra *x = &c->rec->extra[i];
		int64_t track = te_track_for_event(c->imp, x->uuid, 0, TE_USE_OTHER, c->ev->machine,
						   c->seq_id);
		uint32_t name;

		if (track < 0)
			continue;
		tp_counter_add(c->imp, c->ev->ts, track, x->value);
		/* Thread time and instruction counters also fill the slice columns. */
		name = tp_get_str(&c->imp->db->track, TRACK_NAME, track);
		if (name && name == te->k.thread_time) {
			c->thread_ts = (int64_t)x->value;
			c->has_thread_ts = true;
		} else if (name && name == te->k.thread_instruction_count) {
			c->thread_instr = (int64_t)x->value;
			c->has_thread_instr = true;
		}
	}
}

static void counter_event(struct ev_ctx *c)
{
	struct tp_table *t = &c->imp->db->counter;
	int64_t track = track_for(c, TE_USE_OTHER), row;
	struct tp_argset b = {0};

	if (track < 0) {
		parse_error(c);
		return;
	}
	row = (int64_t)t->n_rows;
	tp_counter_add(c->imp, c->ev->ts, track, c->rec->counter_value);
	if ((size_t)row >= t->n_rows)
		return;
	event_args(c, &b);
	row = tp_argset_commit(c->imp, &b);
	if (row != TP_NULL_INT)
		tp_set_int(t, COUNTER_ARG_SET_ID, t->n_rows - 1, row);
	tp_argset_fini(&b);
}

/*
 * A TYPE_STATE event: its name (or interned name) is the value its state
 * track takes; no name (or an unknown iid) ends the value held. Only a
 * descriptor track with a StateDescriptor takes them.
 */
static void state_event(struct ev_ctx *c)
{
	const struct te_track *t;
	struct tp_argset *b;
	uint32_t value = 0;
	int64_t track;

	if (!c->uuid && c->fallback)
		goto fail;
	track = te_track_for_event(c->imp, c->uuid, c->name, TE_USE_OTHER, c->ev->machine,
				   c->seq_id);
	t = te_track_find(c->imp, c->ev->machine, c->uuid);
	if (track < 0 || !t || !t->is_state)
		goto fail;
	if (c->e[PB_TRACK_EVENT__NAME_IID].id)
		value = interned_str(c, PB_INTERNED_DATA__EVENT_NAMES,
				     c->e[PB_TRACK_EVENT__NAME_IID].value);
	else if (c->e[PB_TRACK_EVENT__NAME].id)
		value = te_str(c->imp, &c->e[PB_TRACK_EVENT__NAME]);
	b = tp_state_update(c->imp, c->ev->ts, track, value, value ? c->cat : 0);
	if (b)
		event_args(c, b);
	return;
fail:
	parse_error(c);
}

/* ---------------------------------------------------------------- events ---- */

void tp_te_parse_event(struct tp_import *imp, const struct tp_event *ev)
{
	struct tp_te *te = imp->te;
	struct ev_ctx *c;
	uint64_t type;
	int32_t phase = 0;

	if (!te)
		return;
	if (imp->crop_track_events && te->has_roi &&
	    (te->roi_start_us > INT64_MAX / 1000 ||
	     (te->roi_start_us >= INT64_MIN / 1000 && ev->ts < te->roi_start_us * 1000))) {
		tp_stat_add(imp, "track_event_dropped_packets_outside_of_range_of_interest", -1,
			    ev->machine, 1);
		return;
	}
	/* One context, reused: the parse loop allocates nothing per event. */
	if (!te->parse_ctx && !(te->parse_ctx = malloc(sizeof(*c))))
		return;
	c = te->parse_ctx;
	c->has_legacy = false;
	c->uuid = 0;
	c->fallback = false;
	c->imp = imp;
	c->te = te;
	c->ev = ev;
	if (!te_rec_load(imp, ev, &c->rec_storage))
		return;
	c->rec = &c->rec_storage;
	c->gen = tp_seq_gen(imp, c->rec->gen);
	c->seq_id = tp_seq_id(imp, ev->seq_idx);
	c->utid = c->upid = c->passthrough_utid = -1;
	c->has_source_id = false;
	c->thread_ts = c->rec->thread_ts;
	c->has_thread_ts = c->rec->flags & TE_REC_THREAD_TS;
	c->thread_instr = c->rec->thread_instr;
	c->has_thread_instr = c->rec->flags & TE_REC_THREAD_INSTR;
	if (pz_decode_table(ev->data, ev->len, c->e, 58) != PZ_OK)
		goto fail;
	if (c->e[PB_TRACK_EVENT__LEGACY_EVENT].id &&
	    c->e[PB_TRACK_EVENT__LEGACY_EVENT].wire_type == PZ_WIRE_LEN) {
		if (pz_decode_table(c->e[PB_TRACK_EVENT__LEGACY_EVENT].data,
				    c->e[PB_TRACK_EVENT__LEGACY_EVENT].size, c->l, 20) != PZ_OK)
			goto fail;
		c->has_legacy = true;
	}
	type = c->e[PB_TRACK_EVENT__TYPE].value;
	if (!type && !legacy_phase(c, &phase))
		goto fail;
	c->cat = parse_category(c);
	c->name = parse_name(c);
	annotate(c);
	if (!initial_association(c))
		goto fail;
	legacy_thread_counters(c);
	extra_counters(c);
	if (type == PBE_TRACK_EVENT_TYPE__TYPE_COUNTER) {
		counter_event(c);
		return;
	}
	if (type == PBE_TRACK_EVENT_TYPE__TYPE_STATE) {
		state_event(c);
		return;
	}
	if (!legacy_phase(c, &phase)) {
		switch (type) {
		case PBE_TRACK_EVENT_TYPE__TYPE_SLICE_BEGIN:
			phase = c->utid >= 0 ? 'B' : 'b';
			break;
		case PBE_TRACK_EVENT_TYPE__TYPE_SLICE_END:
			phase = c->utid >= 0 ? 'E' : 'e';
			break;
		case PBE_TRACK_EVENT_TYPE__TYPE_INSTANT:
			phase = c->utid >= 0 ? 'i' : 'n';
			break;
		default:
			goto fail;
		}
	}
	switch (phase) {
	case 'B':
		if (c->utid < 0)
			goto fail;
		begin_event(c, 'B');
		break;
	case 'E':
		if (c->utid < 0)
			goto fail;
		end_event(c);
		break;
	case 'X':
		complete_event(c);
		break;
	case 's':
	case 't':
	case 'f':
		flow_v1_event(c, (char)phase);
		break;
	case 'i':
	case 'I':
	case 'R':
		scoped_event(c, 0, TE_USE_INSTANT, phase == 'R' ? 'R' : 0);
		break;
	case 'b':
	case 'S':
		begin_event(c, (char)phase);
		break;
	case 'e':
	case 'F':
		end_event(c);
		break;
	case 'n':
		scoped_event(c, 0, TE_USE_INSTANT, 0);
		break;
	case 'T':
	case 'p':
		scoped_event(c, 0, TE_USE_INSTANT, (char)phase);
		break;
	case 'M':
		metadata_event(c);
		break;
	default:
		/* Other legacy phases only matter to JSON export. */
		break;
	}
	return;
fail:
	parse_error(c);
}

/* ----------------------------------------------------------- descriptors ---- */

static int64_t thread_from_descriptor(struct tp_import *imp, uint32_t machine, const uint8_t *data,
				      size_t len)
{
	struct pz_field d[9];
	int64_t utid;
	uint32_t name;

	if (pz_decode_table(data, len, d, 9) != PZ_OK)
		return -1;
	utid = te_update_thread(imp, machine, pz_field_int64(&d[PB_THREAD_DESCRIPTOR__TID]),
				pz_field_int32(&d[PB_THREAD_DESCRIPTOR__PID]));
	name = d[PB_THREAD_DESCRIPTOR__THREAD_NAME].size
		       ? te_str(imp, &d[PB_THREAD_DESCRIPTOR__THREAD_NAME])
		       : 0;
	/* Descriptor names win over names from the kernel. */
	if (utid >= 0 && name)
		tp_proc_set_thread_name(imp, utid, name);
	return utid;
}

static int64_t process_from_descriptor(struct tp_import *imp, int64_t ts, uint32_t machine,
				       const uint8_t *data, size_t len)
{
	struct tp_table *p = &imp->db->process;
	struct pz_field d[9];
	int64_t upid;
	uint64_t k;

	if (pz_decode_table(data, len, d, 9) != PZ_OK)
		return -1;
	upid = te_get_process(imp, machine, pz_field_int32(&d[PB_PROCESS_DESCRIPTOR__PID]));
	if (upid < 0)
		return -1;
	(void)ts;
	k = (uint64_t)upid | (1ull << 63);
	/* Names from the system (process tree) outrank descriptor names. */
	if (d[PB_PROCESS_DESCRIPTOR__PROCESS_NAME].size &&
	    (tp_get_str(p, PROCESS_NAME, upid) == TP_NULL_STR ||
	     hmap_get(&imp->te->named_by_descriptor, k, NULL))) {
		tp_set_str(p, PROCESS_NAME, (size_t)upid,
			   te_str(imp, &d[PB_PROCESS_DESCRIPTOR__PROCESS_NAME]));
		hmap_put(&imp->te->named_by_descriptor, k, 1);
	}
	if (pz_field_int64(&d[PB_PROCESS_DESCRIPTOR__START_TIMESTAMP_NS]) > 0 &&
	    tp_col_int(p, PROCESS_START_TS)[upid] == TP_NULL_INT)
		tp_set_int(p, PROCESS_START_TS, (size_t)upid,
			   pz_field_int64(&d[PB_PROCESS_DESCRIPTOR__START_TIMESTAMP_NS]));
	return upid;
}

/* ChromeProcessDescriptor: process args, as Perfetto's. */
static void chrome_process(struct tp_import *imp, int64_t upid, const uint8_t *data, size_t len)
{
	struct pz_field d[6];
	struct tp_arg a = {0};

	if (upid < 0 || pz_decode_table(data, len, d, 6) != PZ_OK)
		return;
	/* Only an unspecified type is recorded (as NULL): Perfetto also names
	 * the other types and renames the process by Chrome's priorities,
	 * which our process names do not model (docs/trace-processor.md). */
	if (!d[PB_CHROME_PROCESS_DESCRIPTOR__PROCESS_TYPE].value) {
		a.key = a.flat_key = tp_db_str(imp->db, "chrome.process_type");
		a.type = TP_ARG_STR;
		a.v.s = 0;
		tp_proc_add_arg(imp, false, upid, &a);
	}
	if (d[PB_CHROME_PROCESS_DESCRIPTOR__HOST_APP_PACKAGE_NAME].id) {
		a.key = a.flat_key = tp_db_str(imp->db, "chrome.host_app_package_name");
		a.type = TP_ARG_STR;
		a.v.s = te_str(imp, &d[PB_CHROME_PROCESS_DESCRIPTOR__HOST_APP_PACKAGE_NAME]);
		tp_proc_add_arg(imp, false, upid, &a);
	}
	if (d[PB_CHROME_PROCESS_DESCRIPTOR__CRASH_TRACE_ID].id) {
		a.key = a.flat_key = tp_db_str(imp->db, "chrome.crash_trace_id");
		a.type = TP_ARG_UINT;
		a.v.i = (int64_t)d[PB_CHROME_PROCESS_DESCRIPTOR__CRASH_TRACE_ID].value;
		tp_proc_add_arg(imp, false, upid, &a);
	}
}

static void track_descriptor(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
			     size_t len)
{
	struct pz_field d[7];

	if (pz_decode_table(data, len, d, 7) != PZ_OK ||
	    !te_track_resolve(imp, d[PB_TRACK_DESCRIPTOR__UUID].value, ev->machine)) {
		tp_stat_add(imp, "track_event_parser_errors", -1, ev->machine, 1);
		return;
	}
	if (d[PB_TRACK_DESCRIPTOR__THREAD].id &&
	    d[PB_TRACK_DESCRIPTOR__THREAD].wire_type == PZ_WIRE_LEN)
		thread_from_descriptor(imp, ev->machine, d[PB_TRACK_DESCRIPTOR__THREAD].data,
				       d[PB_TRACK_DESCRIPTOR__THREAD].size);
	else if (d[PB_TRACK_DESCRIPTOR__PROCESS].id &&
		 d[PB_TRACK_DESCRIPTOR__PROCESS].wire_type == PZ_WIRE_LEN)
	{
		int64_t upid = process_from_descriptor(imp, ev->ts, ev->machine,
						       d[PB_TRACK_DESCRIPTOR__PROCESS].data,
						       d[PB_TRACK_DESCRIPTOR__PROCESS].size);

		if (d[PB_TRACK_DESCRIPTOR__CHROME_PROCESS].id &&
		    d[PB_TRACK_DESCRIPTOR__CHROME_PROCESS].wire_type == PZ_WIRE_LEN)
			chrome_process(imp, upid, d[PB_TRACK_DESCRIPTOR__CHROME_PROCESS].data,
				       d[PB_TRACK_DESCRIPTOR__CHROME_PROCESS].size);
	}
}

static void chrome_trigger(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
			   size_t len);

void tp_te_parse_packet(struct tp_import *imp, const struct tp_event *ev, uint32_t field,
			const uint8_t *data, size_t len)
{
	if (!te_get(imp))
		return;
	switch (field) {
	case PB_TRACE_PACKET__TRACK_DESCRIPTOR:
		track_descriptor(imp, ev, data, len);
		break;
	case PB_TRACE_PACKET__THREAD_DESCRIPTOR:
		thread_from_descriptor(imp, ev->machine, data, len);
		break;
	case PB_TRACE_PACKET__PROCESS_DESCRIPTOR:
		process_from_descriptor(imp, ev->ts, ev->machine, data, len);
		break;
	case PB_TRACE_PACKET__CHROME_TRIGGER:
		chrome_trigger(imp, ev, data, len);
		break;
	default:
		break;
	}
}

/* ---------------------------------------------------------------- finish ---- */

void tp_te_finish(struct tp_import *imp)
{
	struct tp_te *te = imp->te;
	size_t i;

	if (!te)
		return;
	for (i = 0; i + 1 < te->n_annot; i += 2) {
		struct tp_argset b = {0};

		tp_argset_str(imp, &b, te->k.event_category, te->annot[i]);
		tp_argset_str(imp, &b, te->k.event_name, te->annot[i + 1]);
		tp_argset_commit(imp, &b);
		tp_argset_fini(&b);
	}
	if (te->skipped_invalid) {
		struct tp_argset b = {0};

		tp_argset_str(imp, &b, te->k.skipped_packet, te->k.invalid_incremental_state);
		tp_argset_commit(imp, &b);
		tp_argset_fini(&b);
	}
}

/* ---------------------------------------------------------- slice hooks ---- */

/* Slice names of the translation tables, for every importer's slices. */
static uint32_t hook_name(void *user, uint32_t name)
{
	struct tp_import *imp = user;

	return imp->te ? te_translate(&imp->te->tr_slice_name, name) : name;
}

/* v1 flows bound to the next slice on a track end on this one. */
static void hook_begun(void *user, int64_t track, uint32_t row)
{
	struct tp_import *imp = user;

	if (imp->te)
		te_flow_begun(imp, track, row);
}

/* Native symbols may come later in the trace: such args wait for its end. */
static bool hook_defer(void *user, const struct tp_argset *args)
{
	struct tp_import *imp = user;

	return imp->te && te_symbols_pending(imp->te, args);
}

static void hook_rewrite(void *user, struct tp_argset *args)
{
	struct tp_import *imp = user;

	if (!imp->te)
		return;
	te_symbols_translate(imp, args);
	te_translate_args(imp, args);
}

void tp_te_init(struct tp_import *imp)
{
	const struct tp_slice_hooks hooks = {
		.name = hook_name,
		.begun = hook_begun,
		.defer = hook_defer,
		.rewrite = hook_rewrite,
		.user = imp,
	};

	tp_slice_set_hooks(imp, &hooks);
}

static void parse_fini(struct tp_te *te)
{
	hmap_fini(&te->annot_seen);
	free(te->annot);
	free(te->parse_ctx);
}

/* Chrome's triggers: instants on the trace's trigger track. */
static void chrome_trigger(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
			   size_t len)
{
	struct tp_te *te = imp->te;
	struct pz_field t[4];
	uint64_t k = 0x7472696767657273ull, v; /* one track: the misc key "triggers" */
	struct tp_argset *b;
	int64_t track, row;
	uint32_t name;

	if (pz_decode_table(data, len, t, 4) != PZ_OK) {
		tp_stat_add(imp, "chrome_trigger_malformed", -1, ev->machine, 1);
		return;
	}
	if (hmap_get(&te->misc_tracks, k, &v)) {
		track = (int64_t)v;
	} else {
		struct tp_table *tt = &imp->db->track;

		track = tp_table_append(tt);
		if (track < 0)
			return;
		tp_set_str(tt, TRACK_NAME, (size_t)track, te->k.triggers);
		tp_set_str(tt, TRACK_TYPE, (size_t)track, tp_db_str(imp->db, "triggers"));
		tp_set_int(tt, TRACK_IS_COUNTER, (size_t)track, 0);
		tp_set_int(tt, TRACK_MACHINE_ID, (size_t)track, ev->machine);
		hmap_put(&te->misc_tracks, k, (uint64_t)track);
	}
	name = t[PB_CHROME_TRIGGER__TRIGGER_NAME].id
		       ? te_str(imp, &t[PB_CHROME_TRIGGER__TRIGGER_NAME])
		       : tp_db_str(imp->db, "chrome_trigger");
	/* Every trigger also leaves its hash in metadata, as Perfetto's does. */
	tp_metadata_append(imp, "cr-triggered_rule_name_hash", ev->machine,
			   (uint32_t)t[PB_CHROME_TRIGGER__TRIGGER_NAME_HASH].value, NULL, 0);
	row = tp_slice_scoped(imp, ev->ts, 0, track, 0, name);
	if (row < 0)
		return;
	b = tp_slice_args(imp, track, (uint32_t)row);
	tp_argset_uint(imp, b, te->k.trigger_name_hash,
		       (uint32_t)t[PB_CHROME_TRIGGER__TRIGGER_NAME_HASH].value);
	if (t[PB_CHROME_TRIGGER__TRIGGER_NAME].id)
		tp_argset_str(imp, b, te->k.trigger_name, name);
	if (t[PB_CHROME_TRIGGER__FLOW_ID].id)
		te_flow_end(imp, ev->machine, t[PB_CHROME_TRIGGER__FLOW_ID].value, (uint32_t)row);
}

void tp_te_fini(struct tp_import *imp)
{
	struct tp_te *te = imp->te;
	size_t i;

	if (!te)
		return;
	for (i = 0; i < TP_MAX_SEQUENCES; i++)
		hmap_fini(&te->seqs[i].counters);
	free(te->seqs);
	free(te->vals);
	te_track_fini(te);
	te_flow_fini(te);
	parse_fini(te);
	te_symbols_fini(te);
	te_translate_fini(te);
	free(te);
	imp->te = NULL;
}

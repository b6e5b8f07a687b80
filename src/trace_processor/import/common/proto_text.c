// SPDX-License-Identifier: Apache-2.0
/*
 * proto_text.c - a TraceConfig as protobuf text, printed the way Perfetto's
 * trace processor prints it into metadata.trace_config_pbtxt (its
 * protozero_to_text, one field per line), from the table that
 * tools/gen_field_ids.c --config makes of protos/ (pb_config_table.h), so
 * no protobuf-c at run time. This is not pbtxt/print.c: the quirks are
 * Perfetto's and must be kept:
 *
 *   - fields in wire order; two spaces of indent per level; "name {" and a
 *     lone "}" around a message, "name {\n}" when it is empty;
 *   - every field is preceded by "\n" and the indent once anything was
 *     printed, even a field that then prints nothing (an empty packed one);
 *   - strings and bytes alike: double-quoted, \a \b \f \n \r \t \v \\ \'
 *     \" escaped, other bytes outside 0x20..0x7e as three octal digits;
 *   - enums by value name; a value the enum lacks as "<field id>: <int>";
 *   - float and double as "%f";
 *   - a field the message lacks, or whose wire type its type cannot have,
 *     by number: varints as int64, fixed32/fixed64 as 0x%08x/0x%016x
 *     hex, length-delimited as a quoted string;
 *   - packed numbers one "name: value" line per element; packed bool,
 *     sint32 and sint64 (which Perfetto cannot decode packed) as a comment
 *     line and then the raw quoted bytes by number;
 *   - bytes a field cannot be read from end the message with
 *     "# Extra bytes: "<quoted>"\n".
 */
#include "trace_processor/import/common/common.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "base/buf.h"
#include "pb_config_table.h"
#include "protozero/protozero.h"

/* Perfetto's FieldDescriptorProto type numbers, named in its comments. */
#define DESC_TYPE_BOOL 8
#define DESC_TYPE_SINT32 17
#define DESC_TYPE_SINT64 18

struct printer {
	struct buf *out;
	struct buf indent; /* the current indent: two spaces per level */
	int rc;
};

static void put(struct printer *p, const char *s, size_t len)
{
	if (!p->rc)
		p->rc = buf_append(p->out, s, len);
}

static void put_str(struct printer *p, const char *s)
{
	put(p, s, strlen(s));
}

static void putf(struct printer *p, const char *fmt, ...) PFC_PRINTF(2, 3);
static void putf(struct printer *p, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	put(p, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static void put_indent(struct printer *p)
{
	if (p->indent.len)
		put(p, (const char *)p->indent.data, p->indent.len);
}

static void put_quoted(struct printer *p, const uint8_t *s, size_t len)
{
	size_t i;

	put_str(p, "\"");
	for (i = 0; i < len; i++) {
		uint8_t c = s[i];
		char esc[5];

		switch (c) {
		case '\a': put_str(p, "\\a"); break;
		case '\b': put_str(p, "\\b"); break;
		case '\f': put_str(p, "\\f"); break;
		case '\n': put_str(p, "\\n"); break;
		case '\r': put_str(p, "\\r"); break;
		case '\t': put_str(p, "\\t"); break;
		case '\v': put_str(p, "\\v"); break;
		case '\\': put_str(p, "\\\\"); break;
		case '\'': put_str(p, "\\'"); break;
		case '"': put_str(p, "\\\""); break;
		default:
			if (c >= 0x20 && c <= 0x7e) {
				put(p, (const char *)&c, 1);
			} else {
				esc[0] = '\\';
				esc[1] = (char)('0' + ((c >> 6) & 3));
				esc[2] = (char)('0' + ((c >> 3) & 7));
				esc[3] = (char)('0' + (c & 7));
				put(p, esc, 4);
			}
		}
	}
	put_str(p, "\"");
}

static const struct pb_ct_field *find_field(const struct pb_ct_message *m, uint32_t id)
{
	uint32_t lo = 0, hi = m->n_fields;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (m->fields[mid].id == id)
			return &m->fields[mid];
		if (m->fields[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void put_enum(struct printer *p, const struct pb_ct_field *fd, uint32_t id, int32_t v)
{
	const struct pb_ct_enum *e = &pb_ct_enums[fd->sub];
	uint32_t i;

	for (i = 0; i < e->n_values; i++) {
		if (e->values[i].value == v) {
			putf(p, "%s: %s", fd->name, e->values[i].name);
			return;
		}
	}
	putf(p, "%" PRIu32 ": %" PRId64, id, (int64_t)v);
}

static int32_t unzigzag32(uint32_t v)
{
	return (int32_t)((v >> 1) ^ (0u - (v & 1)));
}

static void put_varint(struct printer *p, const struct pb_ct_field *fd, const struct pz_field *f)
{
	uint64_t v = f->value;

	switch (fd ? fd->type : UINT16_MAX) {
	case PB_CT_INT32:
		putf(p, "%s: %" PRId32, fd->name, (int32_t)(uint32_t)v);
		return;
	case PB_CT_SINT32:
		putf(p, "%s: %" PRId32, fd->name, unzigzag32((uint32_t)v));
		return;
	case PB_CT_UINT32:
		putf(p, "%s: %" PRIu32, fd->name, (uint32_t)v);
		return;
	case PB_CT_INT64:
		putf(p, "%s: %" PRId64, fd->name, (int64_t)v);
		return;
	case PB_CT_SINT64:
		putf(p, "%s: %" PRId64, fd->name, pz_unzigzag64(v));
		return;
	case PB_CT_UINT64:
		putf(p, "%s: %" PRIu64, fd->name, v);
		return;
	case PB_CT_BOOL:
		putf(p, "%s: %s", fd->name, v ? "true" : "false");
		return;
	case PB_CT_ENUM:
		put_enum(p, fd, f->id, (int32_t)(uint32_t)v);
		return;
	default:
		putf(p, "%" PRIu32 ": %" PRId64, f->id, (int64_t)v);
	}
}

static float as_float(uint32_t bits)
{
	float x;

	memcpy(&x, &bits, sizeof(x));
	return x;
}

static double as_double(uint64_t bits)
{
	double x;

	memcpy(&x, &bits, sizeof(x));
	return x;
}

static void put_fixed32(struct printer *p, const struct pb_ct_field *fd, const struct pz_field *f)
{
	uint32_t v = (uint32_t)f->value;

	switch (fd ? fd->type : UINT16_MAX) {
	case PB_CT_SFIXED32:
		putf(p, "%s: %" PRId32, fd->name, (int32_t)v);
		return;
	case PB_CT_FIXED32:
		putf(p, "%s: %" PRIu32, fd->name, v);
		return;
	case PB_CT_FLOAT:
		putf(p, "%s: %f", fd->name, (double)as_float(v));
		return;
	default:
		putf(p, "%" PRIu32 ": 0x%08" PRIx32, f->id, v);
	}
}

static void put_fixed64(struct printer *p, const struct pb_ct_field *fd, const struct pz_field *f)
{
	uint64_t v = f->value;

	switch (fd ? fd->type : UINT16_MAX) {
	case PB_CT_SFIXED64:
		putf(p, "%s: %" PRId64, fd->name, (int64_t)v);
		return;
	case PB_CT_FIXED64:
		putf(p, "%s: %" PRIu64, fd->name, v);
		return;
	case PB_CT_DOUBLE:
		putf(p, "%s: %f", fd->name, as_double(v));
		return;
	default:
		putf(p, "%" PRIu32 ": 0x%016" PRIx64, f->id, v);
	}
}

/* One element of a packed field of @fd's type. */
static void put_packed_value(struct printer *p, const struct pb_ct_field *fd, uint32_t id,
			     uint64_t v)
{
	switch (fd->type) {
	case PB_CT_DOUBLE:
		putf(p, "%s: %f", fd->name, as_double(v));
		break;
	case PB_CT_FLOAT:
		putf(p, "%s: %f", fd->name, (double)as_float((uint32_t)v));
		break;
	case PB_CT_INT64:
	case PB_CT_SFIXED64:
		putf(p, "%s: %" PRId64, fd->name, (int64_t)v);
		break;
	case PB_CT_INT32:
	case PB_CT_SFIXED32:
		putf(p, "%s: %" PRId32, fd->name, (int32_t)(uint32_t)v);
		break;
	case PB_CT_UINT32:
	case PB_CT_FIXED32:
		putf(p, "%s: %" PRIu32, fd->name, (uint32_t)v);
		break;
	case PB_CT_ENUM:
		put_enum(p, fd, id, (int32_t)(uint32_t)v);
		break;
	default:
		putf(p, "%s: %" PRIu64, fd->name, v);
	}
}

static void put_packed(struct printer *p, const struct pb_ct_field *fd, const struct pz_field *f)
{
	const uint8_t *q = f->data, *end = f->data + f->size;
	unsigned width = 0;
	bool first = true, err = false;

	if (fd->type == PB_CT_DOUBLE || fd->type == PB_CT_FIXED64 || fd->type == PB_CT_SFIXED64)
		width = 8;
	else if (fd->type == PB_CT_FLOAT || fd->type == PB_CT_FIXED32 ||
		 fd->type == PB_CT_SFIXED32)
		width = 4;
	if (width && f->size % width) {
		err = true;
		q = end;
	}
	while (q < end) {
		uint64_t v;

		if (width) {
			v = pz_load_le(q, width);
			q += width;
		} else if (pz_varint_decode(&q, end, &v) != PZ_OK) {
			err = true;
			break;
		}
		if (!first) {
			put_str(p, "\n");
			put_indent(p);
		}
		put_packed_value(p, fd, f->id, v);
		first = false;
	}
	if (err) {
		if (!first) {
			put_str(p, "\n");
			put_indent(p);
		}
		putf(p, "# Packed decoding failure for field %s\n", fd->name);
	}
}

static void put_message(struct printer *p, const struct pb_ct_message *m, const uint8_t *data,
			size_t len, int depth);

static void put_len(struct printer *p, const struct pb_ct_field *fd, const struct pz_field *f,
		    int depth)
{
	switch (fd ? fd->type : UINT16_MAX) {
	case PB_CT_STRING:
	case PB_CT_BYTES:
		putf(p, "%s: ", fd->name);
		put_quoted(p, f->data, f->size);
		return;
	case PB_CT_MESSAGE:
		putf(p, "%s {", fd->name);
		if (!p->rc)
			p->rc = buf_append(&p->indent, "  ", 2);
		put_message(p, &pb_ct_messages[fd->sub], f->data, f->size, depth + 1);
		if (p->indent.len >= 2)
			p->indent.len -= 2;
		put_str(p, "\n");
		put_indent(p);
		put_str(p, "}");
		return;
	case PB_CT_DOUBLE:
	case PB_CT_FLOAT:
	case PB_CT_INT64:
	case PB_CT_UINT64:
	case PB_CT_INT32:
	case PB_CT_FIXED64:
	case PB_CT_FIXED32:
	case PB_CT_UINT32:
	case PB_CT_SFIXED32:
	case PB_CT_SFIXED64:
	case PB_CT_ENUM:
		put_packed(p, fd, f);
		return;
	case PB_CT_BOOL:
	case PB_CT_SINT32:
	case PB_CT_SINT64:
		putf(p, "# Packed type %d not supported. Printing raw string.\n",
		     fd->type == PB_CT_BOOL ? DESC_TYPE_BOOL :
		     fd->type == PB_CT_SINT32 ? DESC_TYPE_SINT32 : DESC_TYPE_SINT64);
		put_indent(p);
		break;
	default:
		break;
	}
	putf(p, "%" PRIu32 ": ", f->id);
	put_quoted(p, f->data, f->size);
}

static void put_message(struct printer *p, const struct pb_ct_message *m, const uint8_t *data,
			size_t len, int depth)
{
	struct pz_reader r;
	struct pz_field f;

	pz_reader_init(&r, data, len);
	while (!p->rc && pz_reader_next(&r, &f) > 0) {
		const struct pb_ct_field *fd = find_field(m, f.id);

		if (p->out->len)
			put_str(p, "\n");
		put_indent(p);
		switch (f.wire_type) {
		case PZ_WIRE_VARINT:
			put_varint(p, fd, &f);
			break;
		case PZ_WIRE_FIXED32:
			put_fixed32(p, fd, &f);
			break;
		case PZ_WIRE_FIXED64:
			put_fixed64(p, fd, &f);
			break;
		default:
			/* Nested deeper than Perfetto's own configs go: print it raw. */
			if (fd && fd->type == PB_CT_MESSAGE && depth >= TP_PROTO_TEXT_MAX_DEPTH)
				fd = NULL;
			put_len(p, fd, &f, depth);
		}
	}
	if (r.err != PZ_OK && r.p < r.end) {
		if (p->out->len)
			put_str(p, "\n");
		put_indent(p);
		put_str(p, "# Extra bytes: ");
		put_quoted(p, r.p, (size_t)(r.end - r.p));
		put_str(p, "\n");
	}
}

int tp_trace_config_text(const uint8_t *data, size_t len, struct buf *out)
{
	struct buf own = BUF_INIT;
	struct printer p = {.out = &own, .indent = BUF_INIT};

	/* "Anything printed yet" is about this text, not what @out held. */
	put_message(&p, &pb_ct_messages[0], data, len, 0);
	if (!p.rc && own.len)
		p.rc = buf_append(out, own.data, own.len);
	buf_fini(&own);
	buf_fini(&p.indent);
	return p.rc;
}

const char *tp_proto_enum_name(const char *enum_name, int32_t value)
{
	size_t i;
	uint32_t j;

	for (i = 0; i < sizeof(pb_ct_enums) / sizeof(pb_ct_enums[0]); i++) {
		if (strcmp(pb_ct_enums[i].name, enum_name) != 0)
			continue;
		for (j = 0; j < pb_ct_enums[i].n_values; j++)
			if (pb_ct_enums[i].values[j].value == value)
				return pb_ct_enums[i].values[j].name;
		return NULL;
	}
	return NULL;
}

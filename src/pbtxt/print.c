// SPDX-License-Identifier: Apache-2.0
/*
 * print.c - binary protobuf to text format, driven by the descriptors. The
 * input is read with the bounds-checked protozero reader, so malformed bytes
 * give an error with their offset. Fields are printed in wire order; fields
 * the descriptor does not know (or whose wire type does not match) are
 * printed by number so nothing is hidden.
 */
#include "pbtxt/pbtxt_int.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protozero/protozero.h"

struct printer {
	struct buf *out;
	struct pbtxt_error *err;
	const uint8_t *base;    /* start of the whole input, for offsets */
	int rc;
};

static void indent(struct printer *pr, int depth)
{
	int i;

	for (i = 0; i < depth && !pr->rc; i++)
		pr->rc = buf_append(pr->out, "  ", 2);
}

static void put(struct printer *pr, const char *s)
{
	if (!pr->rc)
		pr->rc = buf_append_str(pr->out, s);
}

static void putf(struct printer *pr, const char *fmt, ...) PFC_PRINTF(2, 3);

static void putf(struct printer *pr, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	put(pr, tmp);
}

/* Length of the well-formed UTF-8 sequence at @s (non-ASCII lead byte), or 0. */
static size_t utf8_seq_len(const uint8_t *s, size_t avail)
{
	size_t n, k;
	uint32_t cp;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (n > avail)
		return 0;
	for (k = 1; k < n; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[k] & 0x3f);
	}
	/* Overlong forms, surrogates and values past U+10FFFF are not UTF-8. */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* @utf8: pass well-formed UTF-8 through (string fields); else octal-escape
 * every byte above 0x7e (bytes and unknown fields), as protoc does. */
static void put_escaped(struct printer *pr, const uint8_t *s, size_t len, bool utf8)
{
	size_t i, n;

	put(pr, "\"");
	for (i = 0; i < len && !pr->rc; i++) {
		uint8_t c = s[i];

		if (c >= 0x80 && utf8 && (n = utf8_seq_len(s + i, len - i)) > 0) {
			pr->rc = buf_append(pr->out, s + i, n);
			i += n - 1;
			continue;
		}

		switch (c) {
		case '\n': put(pr, "\\n"); break;
		case '\r': put(pr, "\\r"); break;
		case '\t': put(pr, "\\t"); break;
		case '"': put(pr, "\\\""); break;
		case '\'': put(pr, "\\'"); break;
		case '\\': put(pr, "\\\\"); break;
		default:
			/* Printable ASCII passes through. */
			if (c >= 0x20 && c < 0x7f)
				pr->rc = buf_append_byte(pr->out, c);
			else
				putf(pr, "\\%03o", c);
		}
	}
	put(pr, "\"");
}

/* Shortest %g form that reads back to the same value. */
static void put_double(struct printer *pr, double v, bool is_float)
{
	char tmp[64];
	int prec;

	if (isnan(v)) {
		put(pr, "nan");
		return;
	}
	if (isinf(v)) {
		put(pr, v < 0 ? "-inf" : "inf");
		return;
	}
	for (prec = 6; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*g", prec, v);
		if (is_float ? (float)strtod(tmp, NULL) == (float)v : strtod(tmp, NULL) == v)
			break;
	}
	put(pr, tmp);
}

static bool wire_matches(const ProtobufCFieldDescriptor *f, uint8_t wt, bool *packed)
{
	uint8_t want;

	*packed = false;
	switch (f->type) {
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_FLOAT:
		want = PZ_WIRE_FIXED32;
		break;
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		want = PZ_WIRE_FIXED64;
		break;
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_BYTES:
	case PROTOBUF_C_TYPE_MESSAGE:
		return wt == PZ_WIRE_LEN;
	default:
		want = PZ_WIRE_VARINT;
	}
	if (wt == want)
		return true;
	/* Repeated scalars may arrive packed whatever the .proto says. */
	if (wt == PZ_WIRE_LEN && f->label == PROTOBUF_C_LABEL_REPEATED) {
		*packed = true;
		return true;
	}
	return false;
}

static void put_scalar(struct printer *pr, const ProtobufCFieldDescriptor *f, uint64_t v)
{
	const ProtobufCEnumValue *ev;

	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		putf(pr, "%" PRId32, (int32_t)v);
		break;
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SINT64:
		putf(pr, "%" PRId64, pz_unzigzag64(v));
		break;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		putf(pr, "%" PRId64, (int64_t)v);
		break;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		putf(pr, "%" PRIu32, (uint32_t)v);
		break;
	case PROTOBUF_C_TYPE_BOOL:
		put(pr, v ? "true" : "false");
		break;
	case PROTOBUF_C_TYPE_FLOAT: {
		uint32_t u = (uint32_t)v;
		float x;

		memcpy(&x, &u, sizeof(x));
		put_double(pr, x, true);
		break;
	}
	case PROTOBUF_C_TYPE_DOUBLE: {
		double d;

		memcpy(&d, &v, sizeof(d));
		put_double(pr, d, false);
		break;
	}
	case PROTOBUF_C_TYPE_ENUM:
		ev = protobuf_c_enum_descriptor_get_value(f->descriptor, (int)(int32_t)v);
		if (ev)
			put(pr, ev->name);
		else
			putf(pr, "%" PRId32, (int32_t)v);
		break;
	default:
		putf(pr, "%" PRIu64, v);
	}
}

static int fail_bad(struct printer *pr, const uint8_t *at, const char *what, const char *msg_name)
{
	if (!pr->rc) {
		snprintf(pr->err->msg, sizeof(pr->err->msg),
			 "malformed %s at byte %zu: %s", msg_name, (size_t)(at - pr->base), what);
		pr->rc = -EBADMSG;
	}
	return pr->rc;
}

static void print_packed(struct printer *pr, const ProtobufCFieldDescriptor *f,
			 const struct pz_field *fld, int depth, const char *msg_name)
{
	struct pz_packed it;
	uint64_t v;
	uint32_t v32;
	int rc;

	pz_packed_init(&it, fld);
	for (;;) {
		if (f->type == PROTOBUF_C_TYPE_FIXED32 || f->type == PROTOBUF_C_TYPE_SFIXED32 ||
		    f->type == PROTOBUF_C_TYPE_FLOAT) {
			rc = pz_packed_next_fixed32(&it, &v32);
			v = v32;
		} else if (f->type == PROTOBUF_C_TYPE_FIXED64 ||
			   f->type == PROTOBUF_C_TYPE_SFIXED64 || f->type == PROTOBUF_C_TYPE_DOUBLE) {
			rc = pz_packed_next_fixed64(&it, &v);
		} else {
			rc = pz_packed_next_varint(&it, &v);
		}
		if (rc < 0) {
			fail_bad(pr, it.p, pz_read_error_str(it.err), msg_name);
			return;
		}
		if (rc == 0 || pr->rc)
			return;
		indent(pr, depth);
		putf(pr, "%s: ", f->name);
		put_scalar(pr, f, v);
		put(pr, "\n");
	}
}

static void print_unknown(struct printer *pr, const struct pz_field *fld, int depth)
{
	indent(pr, depth);
	putf(pr, "%" PRIu32 ": ", fld->id);
	if (fld->wire_type == PZ_WIRE_LEN)
		put_escaped(pr, fld->data, fld->size, false);
	else if (fld->wire_type == PZ_WIRE_FIXED32)
		putf(pr, "0x%08" PRIx64, fld->value);
	else if (fld->wire_type == PZ_WIRE_FIXED64)
		putf(pr, "0x%016" PRIx64, fld->value);
	else
		putf(pr, "%" PRIu64, fld->value);
	put(pr, "\n");
}

static void print_message(struct printer *pr, const ProtobufCMessageDescriptor *desc,
			  const uint8_t *data, size_t len, int depth)
{
	struct pz_reader r;
	struct pz_field fld;
	int rc;

	if (depth > PBTXT_MAX_DEPTH) {
		fail_bad(pr, data, "nested too deeply", pbtxt_message_name(desc));
		return;
	}
	pz_reader_init(&r, data, len);
	while (!pr->rc && (rc = pz_reader_next(&r, &fld)) > 0) {
		const ProtobufCFieldDescriptor *f =
			protobuf_c_message_descriptor_get_field(desc, (unsigned)fld.id);
		bool packed;

		if (!f || !wire_matches(f, fld.wire_type, &packed)) {
			print_unknown(pr, &fld, depth);
			continue;
		}
		if (packed) {
			print_packed(pr, f, &fld, depth, pbtxt_message_name(desc));
			continue;
		}
		indent(pr, depth);
		if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
			putf(pr, "%s {\n", f->name);
			print_message(pr, f->descriptor, fld.data, fld.size, depth + 1);
			indent(pr, depth);
			put(pr, "}\n");
		} else if (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_BYTES) {
			putf(pr, "%s: ", f->name);
			put_escaped(pr, fld.data, fld.size, f->type == PROTOBUF_C_TYPE_STRING);
			put(pr, "\n");
		} else {
			putf(pr, "%s: ", f->name);
			put_scalar(pr, f, fld.value);
			put(pr, "\n");
		}
	}
	if (!pr->rc && r.err)
		fail_bad(pr, r.p, pz_read_error_str(r.err),
			 pbtxt_message_name(desc));
}

int pbtxt_print(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len,
		struct buf *out, struct pbtxt_error *err)
{
	struct printer pr = {out, err, data, 0};

	memset(err, 0, sizeof(*err));
	print_message(&pr, desc, data, len, 0);
	return pr.rc;
}

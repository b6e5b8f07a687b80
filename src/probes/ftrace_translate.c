// SPDX-License-Identifier: Apache-2.0
/*
 * ftrace_translate.c - the per-event translation table (built at setup from
 * format files and the protobuf-c descriptors of FtraceEvent) and the hot
 * loop that turns a raw record into FtraceEvent bytes with protozero. Every
 * read of the record is checked against its length: the format promised a
 * minimum size (checked once per record) and dynamic fields are checked
 * one by one.
 */
#include "probes/ftrace_translate.h"

#include <errno.h>
#include <protobuf-c/protobuf-c.h>
#include <stdlib.h>
#include <string.h>

#include "base/compiler.h"
#include "pb_fields.h"
#include "trace/ftrace/ftrace_event.pb-c.h"

/* How to read a field out of the record. */
enum xlat_read {
	RD_INT,        /* size 1/2/4/8, sign per is_signed */
	RD_CHAR_ARRAY, /* up to size bytes, stop at NUL */
	RD_CSTRING,    /* from offset to the record end, stop at NUL */
	RD_DATA_LOC,   /* u32 len << 16 | offset from the record start */
	RD_REL_LOC,    /* u32 len << 16 | offset from the end of the field */
	RD_INT_ARRAY,  /* n_elems integers of elem_size bytes */
};

/* How to write it. */
enum xlat_enc {
	ENC_VARINT,    /* int32/int64/uint32/uint64/enum: sign-extended varint */
	ENC_BOOL,
	ENC_ZIGZAG,    /* sint32/sint64 */
	ENC_FIXED32,
	ENC_FIXED64,
	ENC_STRING,    /* stops at the first NUL */
	ENC_BYTES,     /* raw bytes */
};

struct xlat_op {
	uint16_t offset;
	uint16_t size;
	uint16_t elem_size;
	uint16_t n_elems;
	uint32_t proto_id;
	uint32_t tag;            /* proto_id with its wire type, for the flat encoder */
	uint8_t read;            /* enum xlat_read */
	uint8_t enc;             /* enum xlat_enc */
	bool is_signed;
	bool is_packed;          /* RD_INT_ARRAY into a packed repeated field */
	const char *generic_name; /* generic events: wrap in Field{name=1, value} */
	uint16_t generic_name_len;
};

struct xlat_event {
	uint32_t proto_id;       /* FtraceEvent oneof field number */
	uint32_t min_size;       /* records shorter than this are rejected */
	uint32_t n_ops;
	uint32_t fixed_max;      /* encoded bytes of everything but string payloads */
	uint32_t n_string_ops;   /* each emits at most the record's length */
	uint32_t head_max;       /* exact bound of timestamp, pid and the oneof tag */
	uint32_t body_fixed;     /* exact bound of the oneof body, dynamic payloads aside */
	uint32_t n_dyn_ops;      /* dynamic strings: each at most the record's length */
	int32_t pid_offset;      /* common_pid, or -1 */
	uint16_t pid_size;
	uint16_t name_len;
	bool is_generic;
	char name[FTRACE_NAME_MAX];
	char (*names)[FTRACE_NAME_MAX]; /* generic field names, one per op */
	struct xlat_op ops[];
};

struct ftrace_event_table {
	struct xlat_event **by_id;
	uint32_t n_ids;          /* by_id has n_ids slots */
};

struct ftrace_event_table *ftrace_event_table_create(void)
{
	return calloc(1, sizeof(struct ftrace_event_table));
}

void ftrace_event_table_destroy(struct ftrace_event_table *t)
{
	uint32_t i;

	if (!t)
		return;
	for (i = 0; i < t->n_ids; i++) {
		if (t->by_id[i]) {
			free(t->by_id[i]->names);
			free(t->by_id[i]);
		}
	}
	free(t->by_id);
	free(t);
}

bool ftrace_event_table_has(const struct ftrace_event_table *t, uint16_t id)
{
	return id < t->n_ids && t->by_id[id] != NULL;
}

uint32_t ftrace_proto_field_for_event(const char *event_name)
{
	const ProtobufCMessageDescriptor *d = &perfetto__protos__ftrace_event__descriptor;
	unsigned i;

	for (i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];

		if (f->type == PROTOBUF_C_TYPE_MESSAGE && strcmp(f->name, event_name) == 0)
			return f->id;
	}
	return 0;
}

static const ProtobufCMessageDescriptor *sub_message(uint32_t proto_id)
{
	const ProtobufCFieldDescriptor *f =
		protobuf_c_message_descriptor_get_field(&perfetto__protos__ftrace_event__descriptor,
							proto_id);

	return f && f->type == PROTOBUF_C_TYPE_MESSAGE ? f->descriptor : NULL;
}

static bool is_int_field(const struct ftrace_field *kf)
{
	return kf->kind == FTRACE_FIELD_INT || kf->kind == FTRACE_FIELD_POINTER ||
	       (kf->kind == FTRACE_FIELD_OTHER &&
		(kf->size == 1 || kf->size == 2 || kf->size == 4 || kf->size == 8));
}

static bool is_int_array(const struct ftrace_field *kf)
{
	return kf->kind == FTRACE_FIELD_ARRAY && kf->n_elems > 0 &&
	       (kf->elem_size == 1 || kf->elem_size == 2 || kf->elem_size == 4 ||
		kf->elem_size == 8) &&
	       (uint32_t)kf->elem_size * kf->n_elems <= kf->size;
}

/* How the kernel field is read as a string, or false if it is not one. */
static bool string_read(const struct ftrace_field *kf, uint8_t *out_read)
{
	switch (kf->kind) {
	case FTRACE_FIELD_CHAR_ARRAY:
		*out_read = RD_CHAR_ARRAY;
		return true;
	case FTRACE_FIELD_CSTRING:
		*out_read = RD_CSTRING;
		return true;
	case FTRACE_FIELD_DATA_LOC:
	case FTRACE_FIELD_REL_LOC:
		if (!kf->is_char)
			return false;
		*out_read = kf->kind == FTRACE_FIELD_DATA_LOC ? RD_DATA_LOC : RD_REL_LOC;
		return true;
	default:
		return false;
	}
}

static void op_from_field(const struct ftrace_field *kf, struct xlat_op *op)
{
	memset(op, 0, sizeof(*op));
	op->offset = kf->offset;
	op->size = kf->size;
	op->elem_size = kf->elem_size;
	op->n_elems = kf->n_elems;
	/* Pointers are addresses: never sign-extend them. */
	op->is_signed = kf->is_signed && kf->kind != FTRACE_FIELD_POINTER;
}

/*
 * Chooses the conversion of kernel field @kf into proto field @pf.
 * Return: true with *op filled, false if the pair cannot be converted.
 */
static bool plan_typed(const struct ftrace_field *kf, const ProtobufCFieldDescriptor *pf,
		       struct xlat_op *op)
{
	bool is_repeated = pf->label == PROTOBUF_C_LABEL_REPEATED;
	uint8_t rd;

	op_from_field(kf, op);
	op->proto_id = pf->id;
	switch (pf->type) {
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_BYTES:
		if (string_read(kf, &rd)) {
			op->read = rd;
			op->enc = ENC_STRING;
			return true;
		}
		if (pf->type == PROTOBUF_C_TYPE_BYTES &&
		    (kf->kind == FTRACE_FIELD_DATA_LOC || kf->kind == FTRACE_FIELD_REL_LOC)) {
			op->read = kf->kind == FTRACE_FIELD_DATA_LOC ? RD_DATA_LOC : RD_REL_LOC;
			op->enc = ENC_BYTES;
			return true;
		}
		return false;
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_ENUM:
		op->enc = ENC_VARINT;
		break;
	case PROTOBUF_C_TYPE_BOOL:
		op->enc = ENC_BOOL;
		break;
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SINT64:
		op->enc = ENC_ZIGZAG;
		break;
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_SFIXED32:
		op->enc = ENC_FIXED32;
		break;
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_SFIXED64:
		op->enc = ENC_FIXED64;
		break;
	default:
		return false;
	}
	if (is_repeated && is_int_array(kf)) {
		op->read = RD_INT_ARRAY;
		op->is_packed = (pf->flags & PROTOBUF_C_FIELD_FLAG_PACKED) != 0;
		return true;
	}
	if (is_int_field(kf)) {
		op->read = RD_INT;
		return true;
	}
	return false;
}

/* Generic events: strings, signed ints and unsigned ints (Field 3/4/5). */
static bool plan_generic(const struct ftrace_field *kf, struct xlat_op *op)
{
	uint8_t rd;

	op_from_field(kf, op);
	if (string_read(kf, &rd)) {
		op->read = rd;
		op->enc = ENC_STRING;
		op->proto_id = PB_GENERIC_FTRACE_EVENT_FIELD__STR_VALUE;
		return true;
	}
	if (is_int_field(kf))
		op->read = RD_INT;
	else if (is_int_array(kf))
		op->read = RD_INT_ARRAY;
	else
		return false;
	op->enc = ENC_VARINT;
	op->proto_id = op->is_signed ? PB_GENERIC_FTRACE_EVENT_FIELD__INT_VALUE
				     : PB_GENERIC_FTRACE_EVENT_FIELD__UINT_VALUE;
	return true;
}

/* Worst-case bytes for a tag, a length and a varint. */
#define TAG_MAX 5
#define LEN_MAX 5
#define VARINT_MAX PZ_MAX_VARINT_BYTES
/* Room for the event's own header: timestamp, pid and the oneof's tag+len. */
#define EVENT_HEAD_MAX (2 * (TAG_MAX + VARINT_MAX) + TAG_MAX + LEN_MAX)

static uint32_t wire_type_of(const struct xlat_op *op)
{
	if (op->read == RD_INT_ARRAY && op->is_packed)
		return PZ_WIRE_LEN;
	switch (op->enc) {
	case ENC_FIXED32:
		return PZ_WIRE_FIXED32;
	case ENC_FIXED64:
		return PZ_WIRE_FIXED64;
	case ENC_STRING:
	case ENC_BYTES:
		return PZ_WIRE_LEN;
	default:
		return PZ_WIRE_VARINT;
	}
}

/* Bytes of a varint field with tag @tag and any value. */
static uint32_t varint_field_max(uint32_t tag)
{
	return (uint32_t)pz_varint_size(tag) + VARINT_MAX;
}

/*
 * Exact worst cases for the direct encoder, which sizes its length fields
 * (1 or 2 bytes) from them before writing: a byte too few would corrupt
 * the stream, so every term is the true maximum for its field.
 */
static void plan_tight_bounds(struct xlat_event *xe)
{
	uint32_t body = 0, i, wrap_fixed;

	xe->head_max = varint_field_max(pz_make_tag(PB_FTRACE_EVENT__TIMESTAMP, PZ_WIRE_VARINT)) +
		       (uint32_t)pz_varint_size(pz_make_tag(xe->proto_id, PZ_WIRE_LEN));
	if (xe->pid_offset >= 0)
		xe->head_max += varint_field_max(pz_make_tag(PB_FTRACE_EVENT__PID, PZ_WIRE_VARINT));
	if (xe->is_generic)
		body += 1 + (uint32_t)pz_varint_size(xe->name_len) + xe->name_len;
	for (i = 0; i < xe->n_ops; i++) {
		const struct xlat_op *op = &xe->ops[i];
		uint32_t tag_size = (uint32_t)pz_varint_size(op->tag), value;

		/* Field{name, value}: tag, length, then the name field. */
		wrap_fixed = xe->is_generic ? 1 + LEN_MAX + 1 + 1 + op->generic_name_len : 0;
		switch (op->read) {
		case RD_INT:
			body += wrap_fixed + tag_size + VARINT_MAX;
			break;
		case RD_INT_ARRAY:
			value = xe->is_generic || !op->is_packed
					? op->n_elems * (wrap_fixed + tag_size + VARINT_MAX)
					: tag_size + LEN_MAX + op->n_elems * VARINT_MAX;
			body += value;
			break;
		case RD_CHAR_ARRAY:
			body += wrap_fixed + tag_size + (uint32_t)pz_varint_size(op->size) + op->size;
			break;
		default:
			body += wrap_fixed + tag_size + LEN_MAX;
			xe->n_dyn_ops++;
			break;
		}
	}
	xe->body_fixed = body;
}

/* Precomputes tags and the encoded-size bound used by the flat encoder. */
static void plan_bounds(struct xlat_event *xe)
{
	uint32_t i, fixed = EVENT_HEAD_MAX, per_value, wrap;

	if (xe->is_generic)
		fixed += TAG_MAX + LEN_MAX + xe->name_len;
	for (i = 0; i < xe->n_ops; i++) {
		struct xlat_op *op = &xe->ops[i];

		op->tag = pz_make_tag(op->proto_id, wire_type_of(op));
		wrap = xe->is_generic ? TAG_MAX + LEN_MAX + TAG_MAX + LEN_MAX + op->generic_name_len
				      : 0;
		per_value = TAG_MAX + VARINT_MAX + wrap;
		switch (op->read) {
		case RD_INT:
			fixed += per_value;
			break;
		case RD_INT_ARRAY:
			fixed += TAG_MAX + LEN_MAX + op->n_elems * per_value;
			break;
		default:
			fixed += TAG_MAX + LEN_MAX + wrap;
			xe->n_string_ops++;
			break;
		}
	}
	xe->fixed_max = fixed;
	plan_tight_bounds(xe);
}

static int grow_index(struct ftrace_event_table *t, uint32_t id)
{
	struct xlat_event **n;
	uint32_t want = t->n_ids ? t->n_ids : 64;

	while (want <= id)
		want *= 2;
	if (want > FTRACE_MAX_EVENT_ID + 1u)
		want = FTRACE_MAX_EVENT_ID + 1u;
	n = realloc(t->by_id, want * sizeof(*n));
	if (!n)
		return -ENOMEM;
	memset(n + t->n_ids, 0, (want - t->n_ids) * sizeof(*n));
	t->by_id = n;
	t->n_ids = want;
	return 0;
}

int ftrace_event_table_add(struct ftrace_event_table *t, const struct ftrace_format *fmt,
			   unsigned flags)
{
	const ProtobufCMessageDescriptor *md = NULL;
	const struct ftrace_field *pid;
	struct xlat_event *xe = NULL;
	uint32_t proto_id = 0, i, n_ops = 0;
	int err;

	if (fmt->id > FTRACE_MAX_EVENT_ID)
		return -ERANGE;
	if (ftrace_event_table_has(t, (uint16_t)fmt->id))
		return -EEXIST;
	if (fmt->id >= t->n_ids) {
		err = grow_index(t, fmt->id);
		if (err)
			return err;
	}
	if (!(flags & FTRACE_XLAT_GENERIC)) {
		proto_id = ftrace_proto_field_for_event(fmt->name);
		md = proto_id ? sub_message(proto_id) : NULL;
		if (!md)
			proto_id = 0;
	}
	/* Every event field yields at most one op. */
	xe = calloc(1, sizeof(*xe) + fmt->n_fields * sizeof(struct xlat_op));
	if (!xe)
		return -ENOMEM;
	xe->is_generic = proto_id == 0;
	xe->proto_id = xe->is_generic ? PB_FTRACE_EVENT__GENERIC : proto_id;
	xe->min_size = fmt->min_size;
	xe->name_len = (uint16_t)strnlen(fmt->name, sizeof(fmt->name) - 1);
	memcpy(xe->name, fmt->name, xe->name_len);
	pid = ftrace_format_field(fmt, "common_pid");
	xe->pid_offset = -1;
	if (pid && pid->kind == FTRACE_FIELD_INT) {
		xe->pid_offset = pid->offset;
		xe->pid_size = pid->size;
	}
	if (xe->is_generic) {
		xe->names = calloc(fmt->n_fields ? fmt->n_fields : 1, sizeof(*xe->names));
		if (!xe->names) {
			free(xe);
			return -ENOMEM;
		}
	}
	for (i = fmt->n_common; i < fmt->n_fields; i++) {
		const struct ftrace_field *kf = &fmt->fields[i];
		struct xlat_op *op = &xe->ops[n_ops];

		if (xe->is_generic) {
			if (!plan_generic(kf, op))
				continue;
			memcpy(xe->names[n_ops], kf->name, sizeof(kf->name));
			op->generic_name = xe->names[n_ops];
			op->generic_name_len = (uint16_t)strnlen(kf->name, sizeof(kf->name));
			n_ops++;
			continue;
		}
		{
			const ProtobufCFieldDescriptor *pf = NULL;
			unsigned j;

			for (j = 0; j < md->n_fields; j++) {
				if (strcmp(md->fields[j].name, kf->name) == 0) {
					pf = &md->fields[j];
					break;
				}
			}
			if (pf && plan_typed(kf, pf, op))
				n_ops++;
		}
	}
	xe->n_ops = n_ops;
	plan_bounds(xe);
	t->by_id[fmt->id] = xe;
	return (int)xe->proto_id;
}

/* Reads an integer of @size bytes, sign- or zero-extended to 64 bits. */
static PFC_ALWAYS_INLINE uint64_t read_int(const uint8_t *p, unsigned size, bool is_signed)
{
	switch (size) {
	case 1: {
		uint8_t v = *p;

		return is_signed ? (uint64_t)(int64_t)(int8_t)v : v;
	}
	case 2: {
		uint16_t v;

		memcpy(&v, p, sizeof(v));
		return is_signed ? (uint64_t)(int64_t)(int16_t)v : v;
	}
	case 4: {
		uint32_t v;

		memcpy(&v, p, sizeof(v));
		return is_signed ? (uint64_t)(int64_t)(int32_t)v : v;
	}
	default: {
		uint64_t v;

		memcpy(&v, p, sizeof(v));
		return v;
	}
	}
}

static PFC_ALWAYS_INLINE void write_int(struct pz_msg *m, uint32_t id, uint8_t enc, uint64_t v)
{
	switch (enc) {
	case ENC_BOOL:
		pz_append_varint(m, id, v != 0);
		break;
	case ENC_ZIGZAG:
		pz_append_sint(m, id, (int64_t)v);
		break;
	case ENC_FIXED32:
		pz_append_fixed32(m, id, (uint32_t)v);
		break;
	case ENC_FIXED64:
		pz_append_fixed64(m, id, v);
		break;
	default:
		pz_append_varint(m, id, v);
		break;
	}
}

static void write_int_array(struct pz_msg *m, const struct xlat_op *op, const uint8_t *p)
{
	struct pz_msg packed;
	unsigned i;

	if (op->is_packed && op->enc == ENC_VARINT) {
		pz_begin_nested(m, op->proto_id, &packed);
		for (i = 0; i < op->n_elems; i++)
			pz_append_raw_varint(&packed,
					     read_int(p + i * op->elem_size, op->elem_size,
						      op->is_signed));
		pz_end(&packed);
		return;
	}
	for (i = 0; i < op->n_elems; i++)
		write_int(m, op->proto_id, op->enc,
			  read_int(p + i * op->elem_size, op->elem_size, op->is_signed));
}

/*
 * Finds the bytes of a string or dynamic field. Return: false if a dynamic
 * field points outside the record (the caller drops the field).
 */
static PFC_ALWAYS_INLINE bool locate(const struct xlat_op *op, const uint8_t *rec, uint32_t len,
				     const uint8_t **out_p, size_t *out_n)
{
	uint32_t loc, off, n, base;

	switch (op->read) {
	case RD_CHAR_ARRAY:
		*out_p = rec + op->offset;
		*out_n = op->size;
		return true;
	case RD_CSTRING:
		if (op->offset > len)
			return false;
		*out_p = rec + op->offset;
		*out_n = len - op->offset;
		return true;
	default:
		memcpy(&loc, rec + op->offset, sizeof(loc));
		off = loc & 0xffff;
		n = loc >> 16;
		base = op->read == RD_REL_LOC ? (uint32_t)op->offset + 4 : 0;
		if (base + off > len || n > len - (base + off))
			return false;
		*out_p = rec + base + off;
		*out_n = n;
		return true;
	}
}

/* Writes @op's value into @m. Return: false if the field was malformed. */
static bool write_op(struct pz_msg *m, const struct xlat_op *op, const uint8_t *rec,
		     uint32_t len)
{
	const uint8_t *p;
	size_t n;

	switch (op->read) {
	case RD_INT:
		write_int(m, op->proto_id, op->enc,
			  read_int(rec + op->offset, op->size, op->is_signed));
		return true;
	case RD_INT_ARRAY:
		write_int_array(m, op, rec + op->offset);
		return true;
	default:
		if (!locate(op, rec, len, &p, &n))
			return false;
		if (op->enc == ENC_STRING) {
			const uint8_t *nul = memchr(p, 0, n);

			if (nul)
				n = (size_t)(nul - p);
		}
		pz_append_bytes(m, op->proto_id, p, n);
		return true;
	}
}

static bool write_generic(struct pz_msg *m, const struct xlat_event *xe, const uint8_t *rec,
			  uint32_t len)
{
	bool ok = true;
	uint32_t i;
	unsigned k;

	pz_append_bytes(m, PB_GENERIC_FTRACE_EVENT__EVENT_NAME, xe->name, xe->name_len);
	for (i = 0; i < xe->n_ops; i++) {
		const struct xlat_op *op = &xe->ops[i];
		struct pz_msg field;

		if (op->read == RD_INT_ARRAY) {
			/* One Field per element, all under the array's name. */
			for (k = 0; k < op->n_elems; k++) {
				pz_begin_nested(m, PB_GENERIC_FTRACE_EVENT__FIELD, &field);
				pz_append_bytes(&field, PB_GENERIC_FTRACE_EVENT_FIELD__NAME,
						op->generic_name, op->generic_name_len);
				pz_append_varint(&field, op->proto_id,
						 read_int(rec + op->offset + k * op->elem_size,
							  op->elem_size, op->is_signed));
				pz_end(&field);
			}
			continue;
		}
		pz_begin_nested(m, PB_GENERIC_FTRACE_EVENT__FIELD, &field);
		pz_append_bytes(&field, PB_GENERIC_FTRACE_EVENT_FIELD__NAME, op->generic_name,
				op->generic_name_len);
		ok &= write_op(&field, op, rec, len);
		pz_end(&field);
	}
	return ok;
}

/* Nested-message path, for events whose worst case exceeds the scratch. */
static int translate_nested(const struct xlat_event *xe, const struct ftrace_raw_event *ev,
			    struct pz_msg *bundle)
{
	struct pz_msg event, sub;
	bool ok = true;
	uint32_t i;

	pz_begin_nested(bundle, PB_FTRACE_EVENT_BUNDLE__EVENT, &event);
	pz_append_varint(&event, PB_FTRACE_EVENT__TIMESTAMP, ev->ts);
	if (xe->pid_offset >= 0)
		pz_append_int(&event, PB_FTRACE_EVENT__PID,
			      (int64_t)read_int(ev->data + xe->pid_offset, xe->pid_size, true));
	pz_begin_nested(&event, xe->proto_id, &sub);
	if (PFC_UNLIKELY(xe->is_generic)) {
		ok = write_generic(&sub, xe, ev->data, ev->len);
	} else {
		for (i = 0; i < xe->n_ops; i++)
			ok &= write_op(&sub, &xe->ops[i], ev->data, ev->len);
	}
	pz_end(&event);
	return ok ? 0 : FTRACE_XLAT_PARTIAL;
}

/* ---- flat encoder: one FtraceEvent built in a stack buffer ---- */

/* Length of a 16-byte char array up to its first NUL (16 if none). */
static PFC_ALWAYS_INLINE size_t comm_len16(const uint8_t *p)
{
	const uint64_t lo = 0x0101010101010101ull, hi = 0x8080808080808080ull;
	uint64_t a, b, za, zb;

	memcpy(&a, p, 8);
	memcpy(&b, p + 8, 8);
	/* The lowest flagged byte is exactly the first zero byte. */
	za = (a - lo) & ~a & hi;
	if (za)
		return (size_t)__builtin_ctzll(za) / 8;
	zb = (b - lo) & ~b & hi;
	if (zb)
		return 8 + (size_t)__builtin_ctzll(zb) / 8;
	return 16;
}

/* Stack scratch for one encoded FtraceEvent; larger worst cases go nested. */
#define FLAT_SCRATCH_BYTES (16 * 1024)

static PFC_ALWAYS_INLINE uint8_t *put_varint(uint8_t *p, uint32_t tag, uint64_t v)
{
	p += pz_varint_encode(tag, p);
	return p + pz_varint_encode(v, p);
}

static PFC_ALWAYS_INLINE uint8_t *put_bytes(uint8_t *p, uint32_t tag, const uint8_t *d, size_t n)
{
	p += pz_varint_encode(tag, p);
	p += pz_varint_encode(n, p);
	memcpy(p, d, n);
	return p + n;
}

static PFC_ALWAYS_INLINE uint8_t *put_int(uint8_t *p, const struct xlat_op *op, uint64_t v)
{
	switch (op->enc) {
	case ENC_BOOL:
		return put_varint(p, op->tag, v != 0);
	case ENC_ZIGZAG:
		return put_varint(p, op->tag, pz_zigzag64((int64_t)v));
	case ENC_FIXED32: {
		uint32_t x = (uint32_t)v;

		p += pz_varint_encode(op->tag, p);
		memcpy(p, &x, 4);
		return p + 4;
	}
	case ENC_FIXED64:
		p += pz_varint_encode(op->tag, p);
		memcpy(p, &v, 8);
		return p + 8;
	default:
		return put_varint(p, op->tag, v);
	}
}

/* Encodes @op's value at @p. Return: the new end, or NULL if malformed. */
static PFC_ALWAYS_INLINE uint8_t *flat_op(uint8_t *p, const struct xlat_op *op,
					  const uint8_t *rec, uint32_t len)
{
	const uint8_t *s;
	uint8_t *body;
	size_t n;
	unsigned i;

	switch (op->read) {
	case RD_INT:
		return put_int(p, op, read_int(rec + op->offset, op->size, op->is_signed));
	case RD_INT_ARRAY:
		if (op->is_packed && op->enc == ENC_VARINT) {
			p += pz_varint_encode(op->tag, p);
			/* Values go after a maximal length, then slide down. */
			body = p + LEN_MAX;
			s = body;
			for (i = 0; i < op->n_elems; i++)
				body += pz_varint_encode(read_int(rec + op->offset + i * op->elem_size,
								  op->elem_size, op->is_signed),
							 body);
			n = (size_t)(body - s);
			p += pz_varint_encode(n, p);
			memmove(p, s, n);
			return p + n;
		}
		for (i = 0; i < op->n_elems; i++)
			p = put_int(p, op,
				    read_int(rec + op->offset + i * op->elem_size, op->elem_size,
					     op->is_signed));
		return p;
	default:
		if (op->read == RD_CHAR_ARRAY && op->size == 16) {
			/* Comms: a fixed 16-byte copy (the bound allows it), then
			 * keep only the bytes before the NUL. */
			n = comm_len16(rec + op->offset);
			p += pz_varint_encode(op->tag, p);
			*p++ = (uint8_t)n;
			memcpy(p, rec + op->offset, 16);
			return p + n;
		}
		if (!locate(op, rec, len, &s, &n))
			return NULL;
		if (op->enc == ENC_STRING) {
			const uint8_t *nul = memchr(s, 0, n);

			if (nul)
				n = (size_t)(nul - s);
		}
		return put_bytes(p, op->tag, s, n);
	}
}

/* GenericFtraceEvent.Field {name, value} around one value already at @v. */
static uint8_t *flat_generic_field(uint8_t *p, const struct xlat_op *op, const uint8_t *v,
				   size_t v_len)
{
	size_t name_part = 1 + pz_varint_size(op->generic_name_len) + op->generic_name_len;

	p += pz_varint_encode(pz_make_tag(PB_GENERIC_FTRACE_EVENT__FIELD, PZ_WIRE_LEN), p);
	p += pz_varint_encode(name_part + v_len, p);
	p = put_bytes(p, pz_make_tag(PB_GENERIC_FTRACE_EVENT_FIELD__NAME, PZ_WIRE_LEN),
		      (const uint8_t *)op->generic_name, op->generic_name_len);
	memmove(p, v, v_len);
	return p + v_len;
}

static uint8_t *flat_generic(uint8_t *p, const struct xlat_event *xe, const uint8_t *rec,
			     uint32_t len, bool *ok)
{
	uint8_t tmp[TAG_MAX + VARINT_MAX];
	uint32_t i;
	unsigned k;

	p = put_bytes(p, pz_make_tag(PB_GENERIC_FTRACE_EVENT__EVENT_NAME, PZ_WIRE_LEN),
		      (const uint8_t *)xe->name, xe->name_len);
	for (i = 0; i < xe->n_ops; i++) {
		const struct xlat_op *op = &xe->ops[i];
		const uint8_t *s;
		size_t n;

		switch (op->read) {
		case RD_INT:
			n = (size_t)(put_varint(tmp, op->tag, read_int(rec + op->offset, op->size,
								       op->is_signed)) -
				     tmp);
			p = flat_generic_field(p, op, tmp, n);
			break;
		case RD_INT_ARRAY:
			for (k = 0; k < op->n_elems; k++) {
				n = (size_t)(put_varint(tmp, op->tag,
							read_int(rec + op->offset + k * op->elem_size,
								 op->elem_size, op->is_signed)) -
					     tmp);
				p = flat_generic_field(p, op, tmp, n);
			}
			break;
		default:
			if (!locate(op, rec, len, &s, &n)) {
				*ok = false;
				/* Keep the field's name, as the nested path does. */
				p = flat_generic_field(p, op, tmp, 0);
				break;
			}
			{
				const uint8_t *nul = memchr(s, 0, n);
				uint8_t head[TAG_MAX + LEN_MAX];
				size_t h;

				if (nul)
					n = (size_t)(nul - s);
				h = (size_t)(put_varint(head, op->tag, n) - head);
				/* Field{name, str_value}: header, then the string bytes. */
				p += pz_varint_encode(
					pz_make_tag(PB_GENERIC_FTRACE_EVENT__FIELD, PZ_WIRE_LEN), p);
				p += pz_varint_encode(1 + pz_varint_size(op->generic_name_len) +
							      op->generic_name_len + h + n,
						      p);
				p = put_bytes(p,
					      pz_make_tag(PB_GENERIC_FTRACE_EVENT_FIELD__NAME,
							  PZ_WIRE_LEN),
					      (const uint8_t *)op->generic_name,
					      op->generic_name_len);
				memcpy(p, head, h);
				memcpy(p + h, s, n);
				p += h + n;
			}
			break;
		}
	}
	return p;
}

/* Writes a length in exactly @w bytes (1, or 2 as a redundant varint). */
static PFC_ALWAYS_INLINE void put_len(uint8_t *p, unsigned w, size_t v)
{
	if (w == 1) {
		p[0] = (uint8_t)v;
	} else {
		p[0] = (uint8_t)(0x80 | (v & 0x7f));
		p[1] = (uint8_t)(v >> 7);
	}
}

/*
 * The common case: the event is encoded straight into @bundle's stream,
 * with its two lengths sized from the precomputed bounds (so nothing is
 * copied twice). Return: 0, FTRACE_XLAT_PARTIAL, or -ENOSPC if the stream's
 * current range is too small or the event too large (use another path).
 */
static PFC_ALWAYS_INLINE int translate_direct(const struct xlat_event *xe,
					      const struct ftrace_raw_event *ev,
					      struct pz_msg *bundle)
{
	struct pz_stream *s = bundle->s;
	uint64_t body_max = xe->body_fixed + (uint64_t)xe->n_dyn_ops * ev->len;
	uint64_t content_max = xe->head_max + 1 + body_max;
	uint8_t *p, *ev_len, *body_len_at, *body;
	unsigned w = 1;
	bool ok = true;
	uint32_t i;
	size_t total;

	if (content_max > 127) {
		w = 2;
		content_max += 1;
		if (content_max > 16383)
			return -ENOSPC;
	}
	if (PFC_UNLIKELY(bundle->child != NULL))
		pz_end_children(bundle);
	if (PFC_UNLIKELY((uint64_t)(s->end - s->cur) < 1 + w + content_max || s->err))
		return -ENOSPC;
	p = s->cur;
	*p++ = (uint8_t)pz_make_tag(PB_FTRACE_EVENT_BUNDLE__EVENT, PZ_WIRE_LEN);
	ev_len = p;
	p += w;
	p = put_varint(p, pz_make_tag(PB_FTRACE_EVENT__TIMESTAMP, PZ_WIRE_VARINT), ev->ts);
	if (xe->pid_offset >= 0)
		p = put_varint(p, pz_make_tag(PB_FTRACE_EVENT__PID, PZ_WIRE_VARINT),
			       read_int(ev->data + xe->pid_offset, xe->pid_size, true));
	p += pz_varint_encode(pz_make_tag(xe->proto_id, PZ_WIRE_LEN), p);
	body_len_at = p;
	p += w;
	body = p;
	if (PFC_UNLIKELY(xe->is_generic)) {
		p = flat_generic(p, xe, ev->data, ev->len, &ok);
	} else {
		for (i = 0; i < xe->n_ops; i++) {
			uint8_t *q = flat_op(p, &xe->ops[i], ev->data, ev->len);

			if (PFC_UNLIKELY(!q)) {
				ok = false;
				continue;
			}
			p = q;
		}
	}
	put_len(body_len_at, w, (size_t)(p - body));
	put_len(ev_len, w, (size_t)(p - (ev_len + w)));
	total = (size_t)(p - s->cur);
	/* What pz_stream_write() and the append helpers account. */
	s->cur = p;
	s->n_bytes += total;
	bundle->size += (uint32_t)total;
	return ok ? 0 : FTRACE_XLAT_PARTIAL;
}

int ftrace_translate_event(const struct ftrace_event_table *t, const struct ftrace_raw_event *ev,
			   struct pz_msg *bundle)
{
	uint8_t buf[FLAT_SCRATCH_BYTES];
	uint8_t head[EVENT_HEAD_MAX];
	const struct xlat_event *xe;
	uint8_t *body, *p, *h;
	bool ok = true;
	size_t body_len, head_len;
	uint32_t i;
	int r;

	if (PFC_UNLIKELY(ev->id >= t->n_ids || !t->by_id[ev->id]))
		return -ENOENT;
	xe = t->by_id[ev->id];
	if (PFC_UNLIKELY(ev->len < xe->min_size))
		return -EBADMSG;
	r = translate_direct(xe, ev, bundle);
	if (PFC_LIKELY(r != -ENOSPC))
		return r;
	if (PFC_UNLIKELY((uint64_t)xe->fixed_max + (uint64_t)xe->n_string_ops * ev->len >
			 sizeof(buf) - EVENT_HEAD_MAX))
		return translate_nested(xe, ev, bundle);

	/* The oneof body first, after room for the event's head. */
	body = buf + EVENT_HEAD_MAX;
	p = body;
	if (PFC_UNLIKELY(xe->is_generic)) {
		p = flat_generic(p, xe, ev->data, ev->len, &ok);
	} else {
		for (i = 0; i < xe->n_ops; i++) {
			uint8_t *q = flat_op(p, &xe->ops[i], ev->data, ev->len);

			if (PFC_UNLIKELY(!q)) {
				ok = false;
				continue;
			}
			p = q;
		}
	}
	body_len = (size_t)(p - body);
	/* Then the head {timestamp, pid, oneof tag + length}, placed just before. */
	h = put_varint(head, pz_make_tag(PB_FTRACE_EVENT__TIMESTAMP, PZ_WIRE_VARINT), ev->ts);
	if (xe->pid_offset >= 0)
		h = put_varint(h, pz_make_tag(PB_FTRACE_EVENT__PID, PZ_WIRE_VARINT),
			       read_int(ev->data + xe->pid_offset, xe->pid_size, true));
	h += pz_varint_encode(pz_make_tag(xe->proto_id, PZ_WIRE_LEN), h);
	h += pz_varint_encode(body_len, h);
	head_len = (size_t)(h - head);
	memcpy(body - head_len, head, head_len);
	pz_append_bytes(bundle, PB_FTRACE_EVENT_BUNDLE__EVENT, body - head_len, head_len + body_len);
	return ok ? 0 : FTRACE_XLAT_PARTIAL;
}

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

int ftrace_translate_event(const struct ftrace_event_table *t, const struct ftrace_raw_event *ev,
			   struct pz_msg *bundle)
{
	const struct xlat_event *xe;
	struct pz_msg event, sub;
	bool ok = true;
	uint32_t i;

	if (PFC_UNLIKELY(ev->id >= t->n_ids || !t->by_id[ev->id]))
		return -ENOENT;
	xe = t->by_id[ev->id];
	if (PFC_UNLIKELY(ev->len < xe->min_size))
		return -EBADMSG;
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

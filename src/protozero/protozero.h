/* SPDX-License-Identifier: Apache-2.0 */
/*
 * protozero.h - zero-copy protobuf writer and reader for the hot paths:
 * trace writers appending packets into shared-memory chunks, the service
 * stamping packets, and the trace processor decoding them. Neither side
 * allocates: the writer appends into caller-provided ranges (a flat buffer
 * or a chain of fixed-size chunks) and the reader returns views into the
 * input. Field numbers come from the generated pb_fields.h.
 *
 * Writer model (one writer per stream, one thread):
 *
 *   stream: [cur ........ end)   grow() hands out the next range when full
 *   message: a pz_msg counts the bytes appended through it; a nested
 *   message reserves 4 bytes for its length as a redundant varint
 *   (0x80|b0, 0x80|b1, 0x80|b2, b3), filled in when it ends.
 *
 *   TracePacket { ftrace_events { event { sched_switch {...} } } }
 *      ^ root      ^ child          ^ grandchild  ^ open chain: root->child->...
 *
 * Appending to a message whose child is still open ends the child first.
 * A grow callback may move the size fields of open messages (walk
 * stream->root and its ->child chain) when the range they point into is
 * handed away, e.g. to route them into a patch list.
 */
#ifndef PFC_PROTOZERO_PROTOZERO_H
#define PFC_PROTOZERO_PROTOZERO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/compiler.h"

/* ------------------------------------------------------------ common ---- */

enum pz_wire_type {
	PZ_WIRE_VARINT = 0,
	PZ_WIRE_FIXED64 = 1,
	PZ_WIRE_LEN = 2,
	PZ_WIRE_FIXED32 = 5,
};

#define PZ_MAX_FIELD_ID ((1u << 29) - 1)
#define PZ_MAX_VARINT_BYTES 10
/* A nested length is a 4-byte redundant varint, so a message is < 2^28. */
#define PZ_SIZE_FIELD_BYTES 4
#define PZ_MAX_NESTED_SIZE ((1u << 28) - 1)

static inline uint64_t pz_zigzag64(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t pz_unzigzag64(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static inline uint32_t pz_make_tag(uint32_t id, enum pz_wire_type wt)
{
	return (id << 3) | (uint32_t)wt;
}

/* Encodes @v at @out (room for PZ_MAX_VARINT_BYTES). Return: bytes written. */
static PFC_ALWAYS_INLINE size_t pz_varint_encode(uint64_t v, uint8_t *out)
{
	size_t n = 0;

	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

static inline size_t pz_varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Writes @v as a PZ_SIZE_FIELD_BYTES redundant varint (v < 2^28). */
static inline void pz_write_redundant_varint(uint8_t *out, uint32_t v)
{
	out[0] = (uint8_t)(0x80 | (v & 0x7f));
	out[1] = (uint8_t)(0x80 | ((v >> 7) & 0x7f));
	out[2] = (uint8_t)(0x80 | ((v >> 14) & 0x7f));
	out[3] = (uint8_t)((v >> 21) & 0x7f);
}

/* ------------------------------------------------------------ writer ---- */

struct pz_stream;
struct pz_msg;

/*
 * Called when [cur, end) is exhausted. It must set @s->cur and @s->end to a
 * fresh range of at least PZ_SIZE_FIELD_BYTES bytes, or return -errno.
 * When called, @s->cur is where the last range stopped being used: bytes
 * between it and the old end are not part of the stream.
 */
typedef int (*pz_grow_cb)(struct pz_stream *s, void *user);

struct pz_stream {
	uint8_t *cur;
	uint8_t *end;
	pz_grow_cb grow;
	void *user;
	struct pz_msg *root;  /* outermost open message, for grow callbacks */
	uint64_t n_bytes;     /* bytes appended since init */
	int err;              /* sticky: 0, or the -errno of the failed grow/overflow */
	uint8_t scratch[32];  /* where writes go after a failure */
};

struct pz_msg {
	struct pz_stream *s;
	uint8_t *size_field;  /* PZ_SIZE_FIELD_BYTES to fill on end, or NULL */
	struct pz_msg *parent;
	struct pz_msg *child; /* open nested message, if any */
	uint32_t size;        /* bytes appended inside this message so far */
	bool ended;
};

/* A stream over one fixed buffer; running out of room sets err = -ENOSPC. */
void pz_stream_init_flat(struct pz_stream *s, uint8_t *buf, size_t len);
/* A stream whose ranges come from @grow (which is called for the first one). */
int pz_stream_init(struct pz_stream *s, pz_grow_cb grow, void *user);

static inline bool pz_stream_ok(const struct pz_stream *s)
{
	return s->err == 0;
}

/* Slow path of every append: copies across range boundaries. */
void pz_stream_write_slow(struct pz_stream *s, const uint8_t *data, size_t len);

static PFC_ALWAYS_INLINE void pz_stream_write(struct pz_stream *s, const void *data, size_t len)
{
	if (PFC_LIKELY((size_t)(s->end - s->cur) >= len)) {
		memcpy(s->cur, data, len);
		s->cur += len;
		s->n_bytes += len;
		return;
	}
	pz_stream_write_slow(s, data, len);
}

/*
 * pz_msg_begin() - Start a top-level message on @s.
 * @size_field: PZ_SIZE_FIELD_BYTES bytes to receive the final length as a
 * redundant varint (e.g. an SMB packet header), or NULL.
 */
void pz_msg_begin(struct pz_msg *m, struct pz_stream *s, uint8_t *size_field);
/* Starts @child as field @id of @m. @child is caller storage (e.g. on the stack). */
void pz_begin_nested(struct pz_msg *m, uint32_t id, struct pz_msg *child);
/* Ends @m (and any open child); writes its size field. Return: its size. */
uint32_t pz_end(struct pz_msg *m);
/* Ends the open descendants of @m; called by appends. */
void pz_end_children(struct pz_msg *m);

static PFC_ALWAYS_INLINE void pz_append_tagged_varint_(struct pz_msg *m, uint32_t tag, uint64_t v)
{
	struct pz_stream *s = m->s;
	uint8_t tmp[2 * PZ_MAX_VARINT_BYTES];
	size_t n;

	if (PFC_UNLIKELY(m->child != NULL))
		pz_end_children(m);
	if (PFC_LIKELY(s->end - s->cur >= 2 * PZ_MAX_VARINT_BYTES)) {
		n = pz_varint_encode(tag, s->cur);
		n += pz_varint_encode(v, s->cur + n);
		s->cur += n;
		s->n_bytes += n;
	} else {
		n = pz_varint_encode(tag, tmp);
		n += pz_varint_encode(v, tmp + n);
		pz_stream_write_slow(s, tmp, n);
	}
	m->size += (uint32_t)n;
}

/* uint32/uint64/enum fields; also int32/int64 with non-negative values. */
static PFC_ALWAYS_INLINE void pz_append_varint(struct pz_msg *m, uint32_t id, uint64_t v)
{
	pz_append_tagged_varint_(m, pz_make_tag(id, PZ_WIRE_VARINT), v);
}

/* int32/int64 fields: negative values take 10 bytes, as protobuf requires. */
static PFC_ALWAYS_INLINE void pz_append_int(struct pz_msg *m, uint32_t id, int64_t v)
{
	pz_append_tagged_varint_(m, pz_make_tag(id, PZ_WIRE_VARINT), (uint64_t)v);
}

/* sint32/sint64 fields (zigzag). */
static PFC_ALWAYS_INLINE void pz_append_sint(struct pz_msg *m, uint32_t id, int64_t v)
{
	pz_append_tagged_varint_(m, pz_make_tag(id, PZ_WIRE_VARINT), pz_zigzag64(v));
}

static PFC_ALWAYS_INLINE void pz_append_bool(struct pz_msg *m, uint32_t id, bool v)
{
	pz_append_tagged_varint_(m, pz_make_tag(id, PZ_WIRE_VARINT), v ? 1 : 0);
}

void pz_append_fixed32(struct pz_msg *m, uint32_t id, uint32_t v);
void pz_append_fixed64(struct pz_msg *m, uint32_t id, uint64_t v);
void pz_append_float(struct pz_msg *m, uint32_t id, float v);
void pz_append_double(struct pz_msg *m, uint32_t id, double v);
void pz_append_bytes(struct pz_msg *m, uint32_t id, const void *data, size_t len);
void pz_append_string(struct pz_msg *m, uint32_t id, const char *str);
/* Appends already-encoded bytes (tags included) to @m. */
void pz_append_raw(struct pz_msg *m, const void *data, size_t len);
/* For packed fields: a varint with no tag, inside a nested message. */
void pz_append_raw_varint(struct pz_msg *m, uint64_t v);

/* Chain of fixed-size heap chunks: a growable stream whose pointers stay put. */
struct pz_chunk {
	struct pz_chunk *next;
	size_t used;
	uint8_t data[];
};

struct pz_chunks {
	struct pz_stream s;
	struct pz_chunk *head;
	struct pz_chunk *tail;
	size_t chunk_size;
	size_t max_bytes;     /* 0 = unlimited; beyond it err = -EFBIG */
	size_t allocated;
};

/* Return: 0 or -ENOMEM (or -EINVAL for a chunk size under 16). */
int pz_chunks_init(struct pz_chunks *c, size_t chunk_size, size_t max_bytes);
void pz_chunks_fini(struct pz_chunks *c);
/* Bytes written so far, across all chunks. */
size_t pz_chunks_size(const struct pz_chunks *c);
/* Copies the stream into @dst. Return: bytes copied or -ENOSPC. */
int64_t pz_chunks_copy(const struct pz_chunks *c, uint8_t *dst, size_t cap);

/* ------------------------------------------------------------ reader ---- */

enum pz_read_error {
	PZ_OK = 0,
	PZ_ERR_TRUNCATED_VARINT,
	PZ_ERR_VARINT_TOO_LONG,
	PZ_ERR_TRUNCATED_FIXED,
	PZ_ERR_LENGTH_PAST_END,
	PZ_ERR_BAD_WIRE_TYPE,
	PZ_ERR_BAD_FIELD_ID,
};

struct pz_field {
	uint32_t id;
	uint8_t wire_type;
	uint64_t value;        /* varint and fixed fields */
	const uint8_t *data;   /* length-delimited fields: view into the input */
	uint32_t size;
};

struct pz_reader {
	const uint8_t *p;
	const uint8_t *end;
	const uint8_t *begin;
	enum pz_read_error err; /* sticky once set */
};

static inline void pz_reader_init(struct pz_reader *r, const void *data, size_t len)
{
	static const uint8_t empty[1];

	/* (NULL, 0) is a valid empty message; pointer arithmetic on NULL is not. */
	if (!data)
		data = empty, len = 0;
	r->p = data;
	r->begin = data;
	r->end = r->p + len;
	r->err = PZ_OK;
}

/*
 * Reads a varint at [*pp, end). Return: 0 and advances *pp, or a
 * pz_read_error. Never reads at or past @end.
 */
static PFC_ALWAYS_INLINE enum pz_read_error pz_varint_decode(const uint8_t **pp,
							     const uint8_t *end, uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;
	unsigned shift;

	if (PFC_LIKELY(p < end && *p < 0x80)) {
		*out = *p;
		*pp = p + 1;
		return PZ_OK;
	}
	for (shift = 0; shift < 64; shift += 7) {
		if (p >= end)
			return PZ_ERR_TRUNCATED_VARINT;
		v |= (uint64_t)(*p & 0x7f) << shift;
		if (!(*p++ & 0x80)) {
			*out = v;
			*pp = p;
			return PZ_OK;
		}
	}
	return PZ_ERR_VARINT_TOO_LONG;
}

/*
 * pz_reader_next() - Read the next field.
 * Return: 1 with *out filled, 0 at the clean end of the message, or -1 on
 * malformed input (r->err says why; later calls keep returning -1).
 * Context: never allocates; views in *out point into the input.
 */
int pz_reader_next(struct pz_reader *r, struct pz_field *out);

static PFC_ALWAYS_INLINE uint64_t pz_load_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	unsigned i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static inline int pz_reader_fail(struct pz_reader *r, enum pz_read_error err)
{
	/* r->p stays at the start of the bad field, for error offsets. */
	r->err = err;
	return -1;
}

/*
 * pz_reader_next_inline() - pz_reader_next(), inlined into the caller: for
 * the loops that decode millions of small messages (the trace processor's
 * ftrace events), where the call and the stores of fields the caller never
 * reads cost more than the decoding itself. Same contract and checks.
 */
static PFC_ALWAYS_INLINE int pz_reader_next_inline(struct pz_reader *r, struct pz_field *out)
{
	const uint8_t *p = r->p;
	enum pz_read_error err;
	uint64_t tag, len;

	if (r->err)
		return -1;
	if (p >= r->end)
		return 0;
	err = pz_varint_decode(&p, r->end, &tag);
	if (err)
		return pz_reader_fail(r, err);
	if ((tag >> 3) == 0 || (tag >> 3) > PZ_MAX_FIELD_ID)
		return pz_reader_fail(r, PZ_ERR_BAD_FIELD_ID);
	out->id = (uint32_t)(tag >> 3);
	out->wire_type = (uint8_t)(tag & 7);
	out->data = NULL;
	out->size = 0;
	out->value = 0;
	switch (out->wire_type) {
	case PZ_WIRE_VARINT:
		err = pz_varint_decode(&p, r->end, &out->value);
		if (err)
			return pz_reader_fail(r, err);
		break;
	case PZ_WIRE_FIXED64:
		if (r->end - p < 8)
			return pz_reader_fail(r, PZ_ERR_TRUNCATED_FIXED);
		out->value = pz_load_le(p, 8);
		p += 8;
		break;
	case PZ_WIRE_FIXED32:
		if (r->end - p < 4)
			return pz_reader_fail(r, PZ_ERR_TRUNCATED_FIXED);
		out->value = pz_load_le(p, 4);
		p += 4;
		break;
	case PZ_WIRE_LEN:
		err = pz_varint_decode(&p, r->end, &len);
		if (err)
			return pz_reader_fail(r, err);
		if (len > (uint64_t)(r->end - p) || len > UINT32_MAX)
			return pz_reader_fail(r, PZ_ERR_LENGTH_PAST_END);
		out->data = p;
		out->size = (uint32_t)len;
		p += len;
		break;
	default:
		return pz_reader_fail(r, PZ_ERR_BAD_WIRE_TYPE);
	}
	r->p = p;
	return 1;
}

/* Offset of the reader in its input (for error messages). */
static inline size_t pz_reader_offset(const struct pz_reader *r)
{
	return (size_t)(r->p - r->begin);
}

const char *pz_read_error_str(enum pz_read_error err);

/*
 * Decodes every field of a message into @slots[id] for id < @n_slots (the
 * last occurrence wins; a slot with id == 0 was absent). Larger ids are
 * skipped. Return: PZ_OK or the first error.
 */
enum pz_read_error pz_decode_table(const void *data, size_t len, struct pz_field *slots,
				   uint32_t n_slots);

/* Value accessors with protobuf's conversions. */
static inline int32_t pz_field_int32(const struct pz_field *f)
{
	return (int32_t)f->value;
}
static inline int64_t pz_field_int64(const struct pz_field *f)
{
	return (int64_t)f->value;
}
static inline int64_t pz_field_sint64(const struct pz_field *f)
{
	return pz_unzigzag64(f->value);
}
static inline bool pz_field_bool(const struct pz_field *f)
{
	return f->value != 0;
}
static inline double pz_field_double(const struct pz_field *f)
{
	double d;

	memcpy(&d, &f->value, sizeof(d));
	return d;
}
static inline float pz_field_float(const struct pz_field *f)
{
	uint32_t u = (uint32_t)f->value;
	float x;

	memcpy(&x, &u, sizeof(x));
	return x;
}

/* Iterator over a packed repeated field's payload. */
struct pz_packed {
	const uint8_t *p;
	const uint8_t *end;
	enum pz_read_error err;
};

static inline void pz_packed_init(struct pz_packed *it, const struct pz_field *f)
{
	it->p = f->data;
	it->end = f->data + f->size;
	it->err = PZ_OK;
}

/* Return: 1 with a value, 0 at the end, -1 on malformed input (it->err). */
int pz_packed_next_varint(struct pz_packed *it, uint64_t *out);
int pz_packed_next_fixed32(struct pz_packed *it, uint32_t *out);
int pz_packed_next_fixed64(struct pz_packed *it, uint64_t *out);

/*
 * The values of a repeated varint field met as @f, whether its writer
 * packed them (one length-delimited field) or not (one varint field each,
 * met one at a time): a packed field yields each of its values, a varint
 * field its one value.
 */
struct pz_varints {
	struct pz_packed packed;
	uint64_t single;
	bool is_packed;
	bool done;
};

static inline void pz_varints_init(struct pz_varints *it, const struct pz_field *f)
{
	it->is_packed = f->wire_type == PZ_WIRE_LEN;
	it->done = false;
	it->single = f->value;
	if (it->is_packed)
		pz_packed_init(&it->packed, f);
}

/* Return: true with the next value in @out; false at the end or on a
 * malformed packed payload. */
static inline bool pz_varints_next(struct pz_varints *it, uint64_t *out)
{
	if (it->is_packed)
		return pz_packed_next_varint(&it->packed, out) > 0;
	if (it->done)
		return false;
	it->done = true;
	*out = it->single;
	return true;
}

#endif

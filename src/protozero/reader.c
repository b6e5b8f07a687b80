// SPDX-License-Identifier: Apache-2.0
/*
 * reader.c - field-by-field protobuf decoding over a (ptr, len) view. Every
 * length and varint is checked against the end of the input; malformed
 * input yields an error code, never a read out of bounds. Used on untrusted
 * bytes: trace files, SMB chunks and IPC frames.
 */
#include "protozero/protozero.h"

static inline uint64_t load_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	unsigned i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static int reader_fail(struct pz_reader *r, enum pz_read_error err)
{
	/* r->p stays at the start of the bad field, for error offsets. */
	r->err = err;
	return -1;
}

int pz_reader_next(struct pz_reader *r, struct pz_field *out)
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
		return reader_fail(r, err);
	if ((tag >> 3) == 0 || (tag >> 3) > PZ_MAX_FIELD_ID)
		return reader_fail(r, PZ_ERR_BAD_FIELD_ID);
	out->id = (uint32_t)(tag >> 3);
	out->wire_type = (uint8_t)(tag & 7);
	out->data = NULL;
	out->size = 0;
	out->value = 0;
	switch (out->wire_type) {
	case PZ_WIRE_VARINT:
		err = pz_varint_decode(&p, r->end, &out->value);
		if (err)
			return reader_fail(r, err);
		break;
	case PZ_WIRE_FIXED64:
		if (r->end - p < 8)
			return reader_fail(r, PZ_ERR_TRUNCATED_FIXED);
		out->value = load_le(p, 8);
		p += 8;
		break;
	case PZ_WIRE_FIXED32:
		if (r->end - p < 4)
			return reader_fail(r, PZ_ERR_TRUNCATED_FIXED);
		out->value = load_le(p, 4);
		p += 4;
		break;
	case PZ_WIRE_LEN:
		err = pz_varint_decode(&p, r->end, &len);
		if (err)
			return reader_fail(r, err);
		if (len > (uint64_t)(r->end - p) || len > UINT32_MAX)
			return reader_fail(r, PZ_ERR_LENGTH_PAST_END);
		out->data = p;
		out->size = (uint32_t)len;
		p += len;
		break;
	default:
		return reader_fail(r, PZ_ERR_BAD_WIRE_TYPE);
	}
	r->p = p;
	return 1;
}

const char *pz_read_error_str(enum pz_read_error err)
{
	switch (err) {
	case PZ_OK:
		return "ok";
	case PZ_ERR_TRUNCATED_VARINT:
		return "truncated varint";
	case PZ_ERR_VARINT_TOO_LONG:
		return "varint longer than 10 bytes";
	case PZ_ERR_TRUNCATED_FIXED:
		return "truncated fixed-size field";
	case PZ_ERR_LENGTH_PAST_END:
		return "length past the end of the message";
	case PZ_ERR_BAD_WIRE_TYPE:
		return "unsupported wire type";
	case PZ_ERR_BAD_FIELD_ID:
		return "invalid field number";
	}
	return "unknown error";
}

enum pz_read_error pz_decode_table(const void *data, size_t len, struct pz_field *slots,
				   uint32_t n_slots)
{
	struct pz_reader r;
	struct pz_field f;
	int rc;

	memset(slots, 0, sizeof(*slots) * n_slots);
	pz_reader_init(&r, data, len);
	while ((rc = pz_reader_next(&r, &f)) > 0) {
		if (f.id < n_slots)
			slots[f.id] = f;
	}
	return rc < 0 ? r.err : PZ_OK;
}

int pz_packed_next_varint(struct pz_packed *it, uint64_t *out)
{
	enum pz_read_error err;

	if (it->err)
		return -1;
	if (it->p >= it->end)
		return 0;
	err = pz_varint_decode(&it->p, it->end, out);
	if (err) {
		it->err = err;
		return -1;
	}
	return 1;
}

static int packed_next_fixed(struct pz_packed *it, unsigned n, uint64_t *out)
{
	if (it->err)
		return -1;
	if (it->p >= it->end)
		return 0;
	if ((size_t)(it->end - it->p) < n) {
		it->err = PZ_ERR_TRUNCATED_FIXED;
		return -1;
	}
	*out = load_le(it->p, n);
	it->p += n;
	return 1;
}

int pz_packed_next_fixed32(struct pz_packed *it, uint32_t *out)
{
	uint64_t v;
	int rc = packed_next_fixed(it, 4, &v);

	if (rc > 0)
		*out = (uint32_t)v;
	return rc;
}

int pz_packed_next_fixed64(struct pz_packed *it, uint64_t *out)
{
	return packed_next_fixed(it, 8, out);
}

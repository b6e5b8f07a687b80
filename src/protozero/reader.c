// SPDX-License-Identifier: Apache-2.0
/*
 * reader.c - field-by-field protobuf decoding over a (ptr, len) view. Every
 * length and varint is checked against the end of the input; malformed
 * input yields an error code, never a read out of bounds. Used on untrusted
 * bytes: trace files, SMB chunks and IPC frames.
 */
#include "protozero/protozero.h"

int pz_reader_next(struct pz_reader *r, struct pz_field *out)
{
	return pz_reader_next_inline(r, out);
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
	while ((rc = pz_reader_next_inline(&r, &f)) > 0) {
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
	*out = pz_load_le(it->p, n);
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

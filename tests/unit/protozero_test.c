// SPDX-License-Identifier: Apache-2.0
/*
 * protozero_test.c - unit tests for the zero-copy protobuf writer and
 * reader: every field type round-trips, nested lengths are backfilled on
 * flat buffers and chunk chains alike, and hostile input (truncation at
 * every byte, huge lengths, bad wire types, deep nesting) is reported, not
 * read out of bounds.
 */
#include "harness.h"

#include <errno.h>
#include <stdlib.h>

#include "protozero/protozero.h"

static const uint64_t k_varints[] = {
	0, 1, 127, 128, 255, 300, 16383, 16384, (1u << 21) - 1, 1u << 21, (1u << 28) - 1,
	1u << 28, UINT32_MAX, (uint64_t)UINT32_MAX + 1, (uint64_t)INT64_MAX, UINT64_MAX,
};

TEST(varint_round_trip)
{
	uint8_t buf[PZ_MAX_VARINT_BYTES];
	size_t i, n;

	for (i = 0; i < PFC_ARRAY_SIZE(k_varints); i++) {
		const uint8_t *p = buf;
		uint64_t v = 0;

		n = pz_varint_encode(k_varints[i], buf);
		ASSERT_EQ(n, pz_varint_size(k_varints[i]));
		ASSERT_EQ(pz_varint_decode(&p, buf + n, &v), PZ_OK);
		ASSERT_U64_EQ(v, k_varints[i]);
		ASSERT_TRUE(p == buf + n);
		/* One byte short is always a truncation. */
		p = buf;
		ASSERT_EQ(pz_varint_decode(&p, buf + n - 1, &v), PZ_ERR_TRUNCATED_VARINT);
	}
	ASSERT_EQ(pz_varint_size(UINT64_MAX), 10);
}

TEST(zigzag)
{
	ASSERT_U64_EQ(pz_zigzag64(0), 0);
	ASSERT_U64_EQ(pz_zigzag64(-1), 1);
	ASSERT_U64_EQ(pz_zigzag64(1), 2);
	ASSERT_U64_EQ(pz_zigzag64(INT64_MIN), UINT64_MAX);
	ASSERT_EQ(pz_unzigzag64(pz_zigzag64(INT64_MIN)), INT64_MIN);
	ASSERT_EQ(pz_unzigzag64(pz_zigzag64(INT64_MAX)), INT64_MAX);
	ASSERT_EQ(pz_unzigzag64(pz_zigzag64(-123456789)), -123456789);
}

TEST(redundant_varint_decodes_to_value)
{
	uint8_t b[4];
	const uint8_t *p = b;
	uint64_t v = 0;

	pz_write_redundant_varint(b, 0);
	ASSERT_EQ(pz_varint_decode(&p, b + 4, &v), PZ_OK);
	ASSERT_EQ(v, 0);
	ASSERT_TRUE(p == b + 4);
	p = b;
	pz_write_redundant_varint(b, PZ_MAX_NESTED_SIZE);
	ASSERT_EQ(pz_varint_decode(&p, b + 4, &v), PZ_OK);
	ASSERT_EQ(v, PZ_MAX_NESTED_SIZE);
}

/* Writes one of everything; used by several tests. */
static void write_sample(struct pz_msg *root)
{
	struct pz_msg a, b;

	pz_append_varint(root, 1, 42);
	pz_append_int(root, 2, -5);
	pz_append_sint(root, 3, -7);
	pz_append_bool(root, 4, true);
	pz_append_fixed32(root, 5, 0xdeadbeef);
	pz_append_fixed64(root, 6, 0x0123456789abcdefull);
	pz_append_double(root, 7, 3.5);
	pz_append_float(root, 8, -0.25f);
	pz_append_string(root, 9, "hello");
	pz_begin_nested(root, 10, &a);
	pz_append_varint(&a, 1, 1000);
	pz_begin_nested(&a, 2, &b);
	pz_append_string(&b, 1, "deep");
	pz_end(&b);
	pz_append_varint(&a, 3, 3);
	pz_end(&a);
	pz_append_bytes(root, 11, "\0\1\2", 3);
	pz_append_varint(root, PZ_MAX_FIELD_ID, 9);
}

static void check_sample(const uint8_t *data, size_t len)
{
	struct pz_reader r, ra, rb;
	struct pz_field f, fa, fb;

	pz_reader_init(&r, data, len);
	ASSERT_EQ(pz_reader_next(&r, &f), 1);
	ASSERT_EQ(f.id, 1);
	ASSERT_EQ(f.wire_type, PZ_WIRE_VARINT);
	ASSERT_EQ(f.value, 42);
	ASSERT_EQ(pz_reader_next(&r, &f), 1);
	ASSERT_EQ(pz_field_int64(&f), -5);
	ASSERT_EQ(pz_field_int32(&f), -5);
	ASSERT_EQ(pz_reader_next(&r, &f), 1);
	ASSERT_EQ(pz_field_sint64(&f), -7);
	ASSERT_EQ(pz_reader_next(&r, &f), 1);
	ASSERT_TRUE(pz_field_bool(&f));
	ASSERT_EQ(pz_reader_next(&r, &f), 1);
	ASSERT_EQ(f.wire_type, PZ_WIRE_FIXED32);
	ASSERT_U64_EQ(f.value, 0xdeadbeef);
	ASSERT_EQ(pz_reader_next(&r, &f), 1);
	ASSERT_EQ(f.wire_type, PZ_WIRE_FIXED64);
	ASSERT_U64_EQ(f.value, 0x0123456789abcdefull);
	ASSERT_EQ(pz_reader_next(&r, &f), 1);
	ASSERT_TRUE(pz_field_double(&f) == 3.5);
	ASSERT_EQ(pz_reader_next(&r, &f), 1);
	ASSERT_TRUE(pz_field_float(&f) == -0.25f);
	ASSERT_EQ(pz_reader_next(&r, &f), 1);
	ASSERT_EQ(f.size, 5);
	ASSERT_MEMEQ(f.data, "hello", 5);
	ASSERT_EQ(pz_reader_next(&r, &f), 1);
	ASSERT_EQ(f.id, 10);
	ASSERT_EQ(f.wire_type, PZ_WIRE_LEN);
	pz_reader_init(&ra, f.data, f.size);
	ASSERT_EQ(pz_reader_next(&ra, &fa), 1);
	ASSERT_EQ(fa.value, 1000);
	ASSERT_EQ(pz_reader_next(&ra, &fa), 1);
	ASSERT_EQ(fa.id, 2);
	pz_reader_init(&rb, fa.data, fa.size);
	ASSERT_EQ(pz_reader_next(&rb, &fb), 1);
	ASSERT_EQ(fb.size, 4);
	ASSERT_MEMEQ(fb.data, "deep", 4);
	ASSERT_EQ(pz_reader_next(&rb, &fb), 0);
	ASSERT_EQ(pz_reader_next(&ra, &fa), 1);
	ASSERT_EQ(fa.id, 3);
	ASSERT_EQ(pz_reader_next(&ra, &fa), 0);
	ASSERT_EQ(pz_reader_next(&r, &f), 1);
	ASSERT_EQ(f.id, 11);
	ASSERT_MEMEQ(f.data, "\0\1\2", 3);
	ASSERT_EQ(pz_reader_next(&r, &f), 1);
	ASSERT_EQ(f.id, PZ_MAX_FIELD_ID);
	ASSERT_EQ(pz_reader_next(&r, &f), 0);
	ASSERT_EQ(r.err, PZ_OK);
}

TEST(flat_round_trip_every_type)
{
	uint8_t buf[512];
	struct pz_stream s;
	struct pz_msg root;

	pz_stream_init_flat(&s, buf, sizeof(buf));
	pz_msg_begin(&root, &s, NULL);
	write_sample(&root);
	ASSERT_EQ(pz_end(&root), (uint32_t)(s.cur - buf));
	ASSERT_TRUE(pz_stream_ok(&s));
	ASSERT_EQ(s.n_bytes, (uint64_t)(s.cur - buf));
	check_sample(buf, (size_t)(s.cur - buf));
}

TEST(nested_length_is_redundant_varint)
{
	uint8_t buf[64];
	struct pz_stream s;
	struct pz_msg root, child;
	static const uint8_t expect[] = {0x0a, 0x82, 0x80, 0x80, 0x00, 0x08, 0x05};

	pz_stream_init_flat(&s, buf, sizeof(buf));
	pz_msg_begin(&root, &s, NULL);
	pz_begin_nested(&root, 1, &child);
	pz_append_varint(&child, 1, 5);
	ASSERT_EQ(pz_end(&root), sizeof(expect));
	ASSERT_EQ(s.cur - buf, sizeof(expect));
	ASSERT_MEMEQ(buf, expect, sizeof(expect));
}

TEST(appending_to_parent_ends_open_child)
{
	uint8_t buf[64];
	struct pz_stream s;
	struct pz_msg root, child, grandchild;
	struct pz_reader r;
	struct pz_field f;

	pz_stream_init_flat(&s, buf, sizeof(buf));
	pz_msg_begin(&root, &s, NULL);
	pz_begin_nested(&root, 1, &child);
	pz_begin_nested(&child, 2, &grandchild);
	pz_append_varint(&grandchild, 3, 7);
	/* No pz_end for child or grandchild: the parent's next append ends them. */
	pz_append_varint(&root, 4, 8);
	ASSERT_TRUE(child.ended);
	ASSERT_TRUE(grandchild.ended);
	pz_end(&root);
	pz_reader_init(&r, buf, (size_t)(s.cur - buf));
	ASSERT_EQ(pz_reader_next(&r, &f), 1);
	ASSERT_EQ(f.id, 1);
	ASSERT_EQ(f.size, 1 + 4 + 2); /* tag, size field, grandchild */
	ASSERT_EQ(pz_reader_next(&r, &f), 1);
	ASSERT_EQ(f.id, 4);
	ASSERT_EQ(f.value, 8);
	ASSERT_EQ(pz_reader_next(&r, &f), 0);
}

TEST(root_size_field_is_filled)
{
	uint8_t buf[64], hdr[4];
	struct pz_stream s;
	struct pz_msg root;
	const uint8_t *p = hdr;
	uint64_t v = 0;

	pz_stream_init_flat(&s, buf, sizeof(buf));
	pz_msg_begin(&root, &s, hdr);
	pz_append_string(&root, 1, "abc");
	ASSERT_EQ(pz_end(&root), 5);
	ASSERT_EQ(pz_varint_decode(&p, hdr + 4, &v), PZ_OK);
	ASSERT_EQ(v, 5);
	ASSERT_TRUE(s.root == NULL);
}

TEST(flat_overflow_is_sticky_and_bounded)
{
	uint8_t buf[40];
	struct pz_stream s;
	struct pz_msg root;
	int i;

	memset(buf, 0xaa, sizeof(buf));
	pz_stream_init_flat(&s, buf, 32);
	pz_msg_begin(&root, &s, NULL);
	for (i = 0; i < 100; i++)
		pz_append_string(&root, 1, "0123456789");
	pz_end(&root);
	ASSERT_EQ(s.err, -ENOSPC);
	ASSERT_FALSE(pz_stream_ok(&s));
	for (i = 32; i < 40; i++)
		ASSERT_EQ(buf[i], 0xaa);
}

/* The same sequence through tiny chunks must equal the flat output. */
TEST(chunk_chain_matches_flat_output)
{
	static uint8_t flat[1 << 16], copy[1 << 16];
	size_t sizes[] = {16, 17, 23, 64, 4096};
	struct pz_stream fs;
	struct pz_msg root;
	size_t flat_len, k;
	int i;

	pz_stream_init_flat(&fs, flat, sizeof(flat));
	pz_msg_begin(&root, &fs, NULL);
	for (i = 0; i < 50; i++)
		write_sample(&root);
	pz_end(&root);
	ASSERT_TRUE(pz_stream_ok(&fs));
	flat_len = (size_t)(fs.cur - flat);

	for (k = 0; k < PFC_ARRAY_SIZE(sizes); k++) {
		struct pz_chunks c;
		int64_t n;

		ASSERT_EQ(pz_chunks_init(&c, sizes[k], 0), 0);
		pz_msg_begin(&root, &c.s, NULL);
		for (i = 0; i < 50; i++)
			write_sample(&root);
		pz_end(&root);
		ASSERT_TRUE(pz_stream_ok(&c.s));
		ASSERT_EQ(pz_chunks_size(&c), flat_len);
		n = pz_chunks_copy(&c, copy, sizeof(copy));
		ASSERT_EQ(n, (int64_t)flat_len);
		ASSERT_MEMEQ(copy, flat, flat_len);
		ASSERT_EQ(pz_chunks_copy(&c, copy, flat_len - 1), -ENOSPC);
		pz_chunks_fini(&c);
	}
	check_sample(flat, flat_len / 50);
}

TEST(chunk_chain_limit)
{
	struct pz_chunks c;
	struct pz_msg root;
	int i;

	ASSERT_EQ(pz_chunks_init(&c, 8, 0), -EINVAL);
	ASSERT_EQ(pz_chunks_init(&c, 64, 256), 0);
	pz_msg_begin(&root, &c.s, NULL);
	for (i = 0; i < 100; i++)
		pz_append_string(&root, 1, "0123456789");
	pz_end(&root);
	ASSERT_EQ(c.s.err, -EFBIG);
	ASSERT_LE(pz_chunks_size(&c), 256);
	pz_chunks_fini(&c);
}

TEST(packed_varints_round_trip)
{
	uint8_t buf[256];
	struct pz_stream s;
	struct pz_msg root, packed;
	struct pz_reader r;
	struct pz_field f;
	struct pz_packed it;
	uint64_t v = 0;
	size_t i = 0;

	pz_stream_init_flat(&s, buf, sizeof(buf));
	pz_msg_begin(&root, &s, NULL);
	pz_begin_nested(&root, 1, &packed);
	for (i = 0; i < PFC_ARRAY_SIZE(k_varints); i++)
		pz_append_raw_varint(&packed, k_varints[i]);
	pz_end(&root);
	pz_reader_init(&r, buf, (size_t)(s.cur - buf));
	ASSERT_EQ(pz_reader_next(&r, &f), 1);
	pz_packed_init(&it, &f);
	i = 0;
	while (pz_packed_next_varint(&it, &v) > 0)
		ASSERT_U64_EQ(v, k_varints[i++]);
	ASSERT_EQ(it.err, PZ_OK);
	ASSERT_EQ(i, PFC_ARRAY_SIZE(k_varints));

	/* Drop the last byte of the payload: the last varint is truncated. */
	f.size--;
	pz_packed_init(&it, &f);
	while (pz_packed_next_varint(&it, &v) > 0)
		;
	ASSERT_EQ(it.err, PZ_ERR_TRUNCATED_VARINT);
}

TEST(packed_fixed)
{
	static const uint8_t data[] = {1, 0, 0, 0, 2, 0, 0, 0, 3, 0};
	struct pz_field f = {.id = 1, .wire_type = PZ_WIRE_LEN, .data = data, .size = 10};
	struct pz_packed it;
	uint32_t v32;
	uint64_t v64;
	int n = 0;

	pz_packed_init(&it, &f);
	while (pz_packed_next_fixed32(&it, &v32) > 0)
		ASSERT_EQ(v32, (uint32_t)++n);
	ASSERT_EQ(n, 2);
	ASSERT_EQ(it.err, PZ_ERR_TRUNCATED_FIXED);
	f.size = 8;
	pz_packed_init(&it, &f);
	ASSERT_EQ(pz_packed_next_fixed64(&it, &v64), 1);
	ASSERT_U64_EQ(v64, 0x0000000200000001ull);
	ASSERT_EQ(pz_packed_next_fixed64(&it, &v64), 0);
}

/* Reads every field (and nested ones) of any input; returns the error. */
static enum pz_read_error walk(const uint8_t *data, size_t len, int depth, int *max_depth)
{
	struct pz_reader r;
	struct pz_field f;
	int rc;

	if (depth > *max_depth)
		*max_depth = depth;
	pz_reader_init(&r, data, len);
	while ((rc = pz_reader_next(&r, &f)) > 0) {
		if (f.wire_type == PZ_WIRE_LEN && depth < 2000) {
			int dummy = 0;

			ASSERT_TRUE(f.data >= data && f.data + f.size <= data + len);
			(void)walk(f.data, f.size, depth + 1, max_depth ? max_depth : &dummy);
		}
	}
	return rc < 0 ? r.err : PZ_OK;
}

TEST(truncation_at_every_byte)
{
	uint8_t buf[512];
	bool boundary[513] = {false};
	struct pz_stream s;
	struct pz_msg root;
	struct pz_reader r;
	struct pz_field f;
	size_t len, cut;

	pz_stream_init_flat(&s, buf, sizeof(buf));
	pz_msg_begin(&root, &s, NULL);
	write_sample(&root);
	pz_end(&root);
	len = (size_t)(s.cur - buf);
	/* Offsets where a top-level field ends: the only clean cut points. */
	pz_reader_init(&r, buf, len);
	boundary[0] = true;
	while (pz_reader_next(&r, &f) > 0)
		boundary[pz_reader_offset(&r)] = true;
	for (cut = 0; cut <= len; cut++) {
		/* An exact-size heap copy lets ASan catch any read past the end. */
		uint8_t *copy = malloc(cut ? cut : 1);
		int depth = 0;

		memcpy(copy, buf, cut);
		if (boundary[cut])
			ASSERT_EQ(walk(copy, cut, 0, &depth), PZ_OK);
		else
			ASSERT_NE(walk(copy, cut, 0, &depth), PZ_OK);
		free(copy);
	}
}

TEST(hostile_headers)
{
	static const uint8_t huge_len[] = {0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00};
	static const uint8_t len_past_end[] = {0x0a, 0x05, 'a', 'b'};
	static const uint8_t group_start[] = {0x0b};
	static const uint8_t wire6[] = {0x0e, 0x00};
	static const uint8_t wire7[] = {0x0f, 0x00};
	static const uint8_t field0[] = {0x00, 0x01};
	static const uint8_t long_varint[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff,
					      0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
	static const uint8_t trunc_fixed64[] = {0x09, 1, 2, 3};
	static const uint8_t trunc_fixed32[] = {0x0d, 1, 2};
	static const uint8_t trunc_tag[] = {0x80};
	struct {
		const uint8_t *data;
		size_t len;
		enum pz_read_error err;
	} cases[] = {
		{huge_len, sizeof(huge_len), PZ_ERR_LENGTH_PAST_END},
		{len_past_end, sizeof(len_past_end), PZ_ERR_LENGTH_PAST_END},
		{group_start, sizeof(group_start), PZ_ERR_BAD_WIRE_TYPE},
		{wire6, sizeof(wire6), PZ_ERR_BAD_WIRE_TYPE},
		{wire7, sizeof(wire7), PZ_ERR_BAD_WIRE_TYPE},
		{field0, sizeof(field0), PZ_ERR_BAD_FIELD_ID},
		{long_varint, sizeof(long_varint), PZ_ERR_VARINT_TOO_LONG},
		{trunc_fixed64, sizeof(trunc_fixed64), PZ_ERR_TRUNCATED_FIXED},
		{trunc_fixed32, sizeof(trunc_fixed32), PZ_ERR_TRUNCATED_FIXED},
		{trunc_tag, sizeof(trunc_tag), PZ_ERR_TRUNCATED_VARINT},
	};
	size_t i;

	for (i = 0; i < PFC_ARRAY_SIZE(cases); i++) {
		struct pz_reader r;
		struct pz_field f;

		pz_reader_init(&r, cases[i].data, cases[i].len);
		ASSERT_EQ(pz_reader_next(&r, &f), -1);
		ASSERT_EQ(r.err, cases[i].err);
		/* Sticky: the reader stays failed. */
		ASSERT_EQ(pz_reader_next(&r, &f), -1);
		ASSERT_TRUE(strlen(pz_read_error_str(r.err)) > 0);
	}
}

TEST(deep_nesting)
{
	enum { DEPTH = 1000 };
	static struct pz_msg msgs[DEPTH + 1];
	static uint8_t buf[DEPTH * 8 + 64];
	struct pz_stream s;
	int i, depth = 0;

	pz_stream_init_flat(&s, buf, sizeof(buf));
	pz_msg_begin(&msgs[0], &s, NULL);
	for (i = 0; i < DEPTH; i++)
		pz_begin_nested(&msgs[i], 1, &msgs[i + 1]);
	pz_append_varint(&msgs[DEPTH], 2, 77);
	pz_end(&msgs[0]);
	ASSERT_TRUE(pz_stream_ok(&s));
	ASSERT_EQ(walk(buf, (size_t)(s.cur - buf), 0, &depth), PZ_OK);
	ASSERT_EQ(depth, DEPTH);
}

TEST(random_bytes_never_overread)
{
	uint32_t seed = 12345;
	int iter;

	for (iter = 0; iter < 20000; iter++) {
		size_t len = 1 + (size_t)(iter % 64), i;
		uint8_t *data = malloc(len);
		int depth = 0;

		for (i = 0; i < len; i++) {
			seed = seed * 1103515245u + 12345u;
			data[i] = (uint8_t)(seed >> 16);
		}
		(void)walk(data, len, 0, &depth);
		free(data);
	}
}

TEST(decode_table)
{
	uint8_t buf[128];
	struct pz_stream s;
	struct pz_msg root;
	struct pz_field slots[8];

	pz_stream_init_flat(&s, buf, sizeof(buf));
	pz_msg_begin(&root, &s, NULL);
	pz_append_varint(&root, 1, 10);
	pz_append_varint(&root, 1, 11);
	pz_append_string(&root, 3, "x");
	pz_append_varint(&root, 100, 5);
	pz_end(&root);
	ASSERT_EQ(pz_decode_table(buf, (size_t)(s.cur - buf), slots, 8), PZ_OK);
	ASSERT_EQ(slots[1].id, 1);
	ASSERT_EQ(slots[1].value, 11);
	ASSERT_EQ(slots[2].id, 0);
	ASSERT_EQ(slots[3].size, 1);
	buf[0] = 0x80;
	ASSERT_EQ(pz_decode_table(buf, 1, slots, 8), PZ_ERR_TRUNCATED_VARINT);
}

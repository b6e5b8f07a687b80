// SPDX-License-Identifier: Apache-2.0
/*
 * protozero_fuzz.c - libFuzzer target for the zero-copy reader: walks the
 * input as a protobuf message, descending into every length-delimited field
 * and iterating it as packed varints and fixed values too. Any read outside
 * the input is caught by ASan.
 */
#include "protozero/protozero.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void walk(const uint8_t *data, size_t len, int depth)
{
	struct pz_reader r;
	struct pz_field f, table[16];
	struct pz_packed it;
	uint64_t v;
	uint32_t v32;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.wire_type != PZ_WIRE_LEN)
			continue;
		pz_packed_init(&it, &f);
		while (pz_packed_next_varint(&it, &v) > 0)
			;
		pz_packed_init(&it, &f);
		while (pz_packed_next_fixed32(&it, &v32) > 0)
			;
		if (depth < 64)
			walk(f.data, f.size, depth + 1);
	}
	(void)pz_decode_table(data, len, table, 16);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	walk(data, size, 0);
	return 0;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * hp_ring_fuzz.c - libFuzzer target for heapprofd's reading of a client's
 * shared ring: the input's first 8 bytes are the write position a client
 * claims, the rest the ring's data (its header page untouched; a record's
 * stamp is its position, the key being 0 here); heapprofd's
 * reader then takes records as it does (peek, parse, consume) until the
 * ring is empty or found corrupt. A hostile client controls exactly
 * these bytes.
 */
#include <string.h>
#include <unistd.h>

#include "heapprofd/ring/hp_ring.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct hp_ring r;
	static int ready;
	uint64_t w = 0;
	unsigned n;

	if (!ready) {
		int fd = hp_ring_create_memfd(HP_RING_MIN_DATA_BYTES);

		if (fd < 0 || hp_ring_map(fd, HP_RING_MIN_DATA_BYTES, &r) < 0)
			return 0;
		close(fd);
		/* Stamps are then the positions themselves, which an input can
		 * hold (the key is random in a real ring). */
		r.stamp_key = 0;
		ready = 1;
	}
	memset(r.data, 0, r.data_size);
	if (size >= 8) {
		memcpy(&w, data, 8);
		data += 8;
		size -= 8;
	}
	if (size > r.data_size)
		size = (size_t)r.data_size;
	memcpy(r.data, data, size);
	r.read_pos = 0;
	atomic_store(&r.hdr->read_pos, 0);
	atomic_store(&r.hdr->write_pos, w);
	for (n = 0; n < 4096; n++) {
		const uint8_t *rec, *stack;
		uint32_t len, type;
		struct hp_rec_alloc a;
		struct hp_rec_free f;
		volatile uint8_t sink = 0;

		if (hp_ring_peek(&r, &rec, &len, &type) != HP_RING_RECORD)
			break;
		if (type == HP_REC_ALLOC && hp_rec_parse_alloc(rec, len, &a, &stack) == 0) {
			if (a.stack_len)
				sink = stack[a.stack_len - 1];
		} else if (type == HP_REC_FREE) {
			(void)hp_rec_parse_free(rec, len, &f);
		}
		(void)sink;
		hp_ring_consume(&r, len);
	}
	return 0;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * fp_walk.c - the frame-pointer walk (see fp_walk.h). x86-64 and arm64
 * frame records are the same pair: [fp] = caller's fp, [fp + 8] = return
 * address. Every read is checked against the copy's bounds.
 */
#include "perf/unwind/fp_walk.h"

#include <string.h>

size_t fp_walk(uint64_t pc, uint64_t fp, uint64_t sp, const uint8_t *stack, size_t stack_len,
	       uint64_t *out_pcs, size_t max, enum fp_walk_end *out_end)
{
	size_t n = 0;

	if (max == 0) {
		*out_end = FP_WALK_MAX_FRAMES;
		return 0;
	}
	out_pcs[n++] = pc;
	for (;;) {
		uint64_t off, next_fp, ret;

		if (fp == 0) {
			*out_end = FP_WALK_DONE;
			return n;
		}
		if (fp < sp || (fp & 7) || fp - sp > stack_len || stack_len - (fp - sp) < 16) {
			*out_end = FP_WALK_OUT_OF_STACK;
			return n;
		}
		off = fp - sp;
		memcpy(&next_fp, stack + off, 8);
		memcpy(&ret, stack + off + 8, 8);
		if (ret == 0) {
			*out_end = FP_WALK_DONE;
			return n;
		}
		if (n == max) {
			*out_end = FP_WALK_MAX_FRAMES;
			return n;
		}
		out_pcs[n++] = ret;
		if (next_fp != 0 && next_fp <= fp) {
			*out_end = FP_WALK_NOT_ASCENDING;
			return n;
		}
		fp = next_fp;
	}
}

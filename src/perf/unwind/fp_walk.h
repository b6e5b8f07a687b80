/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fp_walk.h - frame-pointer unwinding over a copied user stack: each
 * frame's saved frame pointer and return address are read from the copy
 * (never from the live process). Pure, so it is tested on synthetic
 * stacks; the unwinder uses it for UNWIND_FRAME_POINTER and as the
 * fallback when DWARF unwinding gets nowhere.
 */
#ifndef PFC_PERF_FP_WALK_H
#define PFC_PERF_FP_WALK_H

#include <stddef.h>
#include <stdint.h>

enum fp_walk_end {
	FP_WALK_DONE = 0,      /* reached a zero frame pointer */
	FP_WALK_OUT_OF_STACK,  /* a frame pointer outside the copy */
	FP_WALK_MAX_FRAMES,    /* @max pcs collected */
	FP_WALK_NOT_ASCENDING, /* a frame pointer that does not grow: a loop */
};

/**
 * fp_walk() - Collect return addresses along the frame-pointer chain.
 * @pc, @fp, @sp: the sampled user registers (sp = the copy's address).
 * @stack, @stack_len: the copied stack (borrowed).
 * @out_pcs: pcs, leaf first: @pc, then each return address.
 * @max: capacity of @out_pcs (>= 1).
 * @out_end: why the walk stopped.
 * Return: the number of pcs written.
 */
size_t fp_walk(uint64_t pc, uint64_t fp, uint64_t sp, const uint8_t *stack, size_t stack_len,
	       uint64_t *out_pcs, size_t max, enum fp_walk_end *out_end);

#endif

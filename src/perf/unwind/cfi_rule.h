/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cfi_rule.h - the common shapes of x86-64 call frame information packed
 * into 64 bits, and one unwinding step with them. A rule says where the
 * caller's frame starts (the CFA: rsp or rbp plus an offset), where the
 * return address was saved and what became of rbp. The unwinder caches a
 * rule per pc (reading it from libdw once) and steps most frames with it;
 * whatever does not fit these shapes (expressions, signal frames, other
 * base registers) is left to libdw whole.
 */
#ifndef PFC_PERF_UNWIND_CFI_RULE_H
#define PFC_PERF_UNWIND_CFI_RULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A pc whose CFI has no packed shape: unwind the sample with libdw. */
#define CFI_RULE_NONE 1ull

/* The registers a step reads and writes. */
struct cfi_regs {
	uint64_t pc;
	uint64_t sp;
	uint64_t bp;
	bool bp_known; /* false once a frame's CFI left rbp undefined */
	uint64_t read_end; /* one past the highest stack byte a step read */
	bool past_copy;    /* a step wanted a word above the copied stack */
};

enum cfi_step {
	CFI_STEP_OK,      /* regs now describe the caller */
	CFI_STEP_END,     /* the return address is undefined: the outermost frame */
	CFI_STEP_FAILED,  /* a read outside @stack, an unknown rbp, a bad rule */
};

/**
 * cfi_rule_pack() - Pack a rule from its parts.
 * @cfa_is_bp: the CFA is rbp + @cfa_off (else rsp + @cfa_off).
 * @ra_undefined: no return address (the outermost frame); @ra_off unused.
 * @ra_off: the return address is saved at CFA + @ra_off.
 * @bp_rule: 0 rbp unchanged, 1 saved at CFA + @bp_off, 2 undefined.
 *
 * Return: the packed rule, or CFI_RULE_NONE when an offset does not fit
 * (|cfa_off| < 2^23, |ra_off| < 2^15, |bp_off| < 2^14).
 * Context: pure.
 */
uint64_t cfi_rule_pack(bool cfa_is_bp, int64_t cfa_off, bool ra_undefined, int64_t ra_off,
		       int bp_rule, int64_t bp_off);

/**
 * cfi_rule_step() - Unwind one frame with @rule.
 * @regs: the frame's registers; the caller's on CFI_STEP_OK.
 * @stack: the sample's copy of the stack, which starts at @stack_base
 *         (the sampled rsp); @len bytes.
 *
 * Return: enum cfi_step. Reads only inside @stack.
 * Context: pure.
 */
enum cfi_step cfi_rule_step(uint64_t rule, struct cfi_regs *regs, const uint8_t *stack,
			    size_t len, uint64_t stack_base);

/**
 * cfi_rule_read() - The packed rule libdw's CFI gives for one address.
 * @cfi: a module's .eh_frame CFI (libdw's Dwarf_CFI).
 * @addr: the address in the module's ELF (pc - bias; for a caller's
 *        frame, one byte before its return address).
 *
 * Return: the rule, or CFI_RULE_NONE: no FDE for @addr, a signal frame,
 * a return address column other than rip's, a CFA that is not rsp or rbp
 * plus an offset, an rsp that is not the CFA, an expression.
 * Context: loop thread (libdw's CFI cache).
 */
struct Dwarf_CFI_s;
uint64_t cfi_rule_read(struct Dwarf_CFI_s *cfi, uint64_t addr);

#endif

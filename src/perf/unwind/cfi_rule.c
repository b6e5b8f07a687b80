// SPDX-License-Identifier: Apache-2.0
/*
 * cfi_rule.c - packed x86-64 CFI rules and the step that uses them (see
 * cfi_rule.h). Layout of a rule: bit 63 set (a valid rule), bit 1 CFA
 * from rbp, bit 2 no return address, bits 3-4 the rbp rule, bits 8-31 the
 * CFA offset, bits 32-47 the return address offset, bits 48-62 the saved
 * rbp offset (signed fields).
 */
#include "perf/unwind/cfi_rule.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>

#define VALID (1ull << 63)
#define CFA_BP (1ull << 1)
#define RA_UNDEF (1ull << 2)
#define BP_SHIFT 3
#define CFA_SHIFT 8
#define RA_SHIFT 32
#define BPOFF_SHIFT 48

enum { BP_SAME, BP_SAVED, BP_UNDEF };

/* DWARF register numbers on x86-64. */
enum { DW_RBP = 6, DW_RSP = 7, DW_RIP = 16 };

static bool fits(int64_t v, unsigned bits)
{
	int64_t lim = (int64_t)1 << (bits - 1);

	return v >= -lim && v < lim;
}

static int64_t field(uint64_t rule, unsigned shift, unsigned bits)
{
	uint64_t v = (rule >> shift) & ((1ull << bits) - 1);

	/* sign-extend */
	return (int64_t)(v ^ (1ull << (bits - 1))) - ((int64_t)1 << (bits - 1));
}

uint64_t cfi_rule_pack(bool cfa_is_bp, int64_t cfa_off, bool ra_undefined, int64_t ra_off,
		       int bp_rule, int64_t bp_off)
{
	uint64_t r = VALID;

	if (!fits(cfa_off, 24) || !fits(ra_off, 16) || !fits(bp_off, 15) || bp_rule < BP_SAME ||
	    bp_rule > BP_UNDEF)
		return CFI_RULE_NONE;
	if (cfa_is_bp)
		r |= CFA_BP;
	if (ra_undefined)
		r |= RA_UNDEF;
	r |= (uint64_t)bp_rule << BP_SHIFT;
	r |= ((uint64_t)cfa_off & 0xffffffull) << CFA_SHIFT;
	r |= ((uint64_t)ra_off & 0xffffull) << RA_SHIFT;
	r |= ((uint64_t)bp_off & 0x7fffull) << BPOFF_SHIFT;
	return r;
}

static bool read_word(const uint8_t *stack, size_t len, uint64_t base, uint64_t addr,
		      uint64_t *out, struct cfi_regs *regs)
{
	uint64_t off = addr - base;

	if (addr < base)
		return false;
	if (off > len || len - off < 8) {
		regs->past_copy = true;
		return false;
	}
	memcpy(out, stack + off, 8);
	if (addr + 8 > regs->read_end)
		regs->read_end = addr + 8;
	return true;
}

enum cfi_step cfi_rule_step(uint64_t rule, struct cfi_regs *regs, const uint8_t *stack,
			    size_t len, uint64_t stack_base)
{
	uint64_t cfa, ra, bp = regs->bp;
	int bp_rule;

	if (!(rule & VALID))
		return CFI_STEP_FAILED;
	if (rule & CFA_BP) {
		if (!regs->bp_known)
			return CFI_STEP_FAILED;
		cfa = regs->bp + (uint64_t)field(rule, CFA_SHIFT, 24);
	} else {
		cfa = regs->sp + (uint64_t)field(rule, CFA_SHIFT, 24);
	}
	if (rule & RA_UNDEF)
		return CFI_STEP_END;
	if (!read_word(stack, len, stack_base, cfa + (uint64_t)field(rule, RA_SHIFT, 16), &ra,
		       regs))
		return CFI_STEP_FAILED;
	bp_rule = (int)((rule >> BP_SHIFT) & 3);
	if (bp_rule == BP_SAVED &&
	    !read_word(stack, len, stack_base, cfa + (uint64_t)field(rule, BPOFF_SHIFT, 15), &bp,
		       regs))
		return CFI_STEP_FAILED;
	regs->bp = bp;
	if (bp_rule == BP_UNDEF)
		regs->bp_known = false;
	else if (bp_rule == BP_SAVED)
		regs->bp_known = true;
	regs->sp = cfa;
	regs->pc = ra;
	return CFI_STEP_OK;
}

/* "at CFA + N" as libdw spells it: DW_OP_call_frame_cfa, then nothing
 * (N = 0) or DW_OP_plus_uconst N. */
static bool cfa_plus(const Dwarf_Op *ops, size_t n, int64_t *off)
{
	if (n < 1 || n > 2 || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (n == 1) {
		*off = 0;
		return true;
	}
	if (ops[1].atom != DW_OP_plus_uconst)
		return false;
	*off = (int64_t)ops[1].number;
	return true;
}

uint64_t cfi_rule_read(struct Dwarf_CFI_s *cfi, uint64_t addr)
{
	Dwarf_Frame *frame = NULL;
	Dwarf_Op mem[3], *ops;
	size_t n;
	bool signal = false, cfa_is_bp, ra_undef = false;
	int64_t cfa_off, ra_off = 0, bp_off = 0;
	int bp_rule;
	uint64_t rule = CFI_RULE_NONE;

	if (!cfi || dwarf_cfi_addrframe(cfi, addr, &frame) != 0)
		return CFI_RULE_NONE;
	if (dwarf_frame_info(frame, NULL, NULL, &signal) != DW_RIP || signal)
		goto out;
	/* CFA: DW_OP_bregx reg offset. */
	if (dwarf_frame_cfa(frame, &ops, &n) != 0 || n != 1 || ops[0].atom != DW_OP_bregx ||
	    (ops[0].number != DW_RSP && ops[0].number != DW_RBP))
		goto out;
	cfa_is_bp = ops[0].number == DW_RBP;
	cfa_off = (int64_t)ops[0].number2;
	/* rsp: the CFA itself (DW_OP_call_frame_cfa, DW_OP_stack_value). */
	if (dwarf_frame_register(frame, DW_RSP, mem, &ops, &n) != 0 || n != 2 ||
	    ops[0].atom != DW_OP_call_frame_cfa || ops[1].atom != DW_OP_stack_value)
		goto out;
	/* rip: saved at CFA + N, or undefined (nothing, in ops_mem). */
	if (dwarf_frame_register(frame, DW_RIP, mem, &ops, &n) != 0)
		goto out;
	if (n == 0 && ops == mem)
		ra_undef = true;
	else if (!cfa_plus(ops, n, &ra_off))
		goto out;
	/* rbp: unchanged (nothing, NULL), undefined (nothing, ops_mem) or
	 * saved at CFA + N. */
	if (dwarf_frame_register(frame, DW_RBP, mem, &ops, &n) != 0)
		goto out;
	if (n == 0)
		bp_rule = ops ? BP_UNDEF : BP_SAME;
	else if (cfa_plus(ops, n, &bp_off))
		bp_rule = BP_SAVED;
	else
		goto out;
	rule = cfi_rule_pack(cfa_is_bp, cfa_off, ra_undef, ra_off, bp_rule, bp_off);
out:
	free(frame);
	return rule;
}

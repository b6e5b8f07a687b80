// SPDX-License-Identifier: Apache-2.0
/*
 * hp_regs.c - hp_get_regs(): the registers a DWARF unwinder needs at the
 * caller's return address (callee-saved ones, sp and ip), stored in
 * perf_regs.h order so heapprofd hands them to traced_perf's unwinder as
 * a perf sample's. Written in assembly: nothing of this function's own
 * frame may be seen (the state is the caller's after the call returns).
 */
#include "heapprofd/client/hp_client.h"

#if defined(__x86_64__)
/* perf order: ax 0, bx 1, cx 2, dx 3, si 4, di 5, bp 6, sp 7, ip 8,
 * r8-r15 9-16. */
__asm__(".text\n"
	".globl hp_get_regs\n"
	".hidden hp_get_regs\n"
	".type hp_get_regs, @function\n"
	"hp_get_regs:\n"
	"\tmovq %rbx, 8(%rdi)\n"
	"\tmovq %rbp, 48(%rdi)\n"
	"\tleaq 8(%rsp), %rax\n"
	"\tmovq %rax, 56(%rdi)\n"
	"\tmovq (%rsp), %rax\n"
	"\tmovq %rax, 64(%rdi)\n"
	"\tmovq %r12, 104(%rdi)\n"
	"\tmovq %r13, 112(%rdi)\n"
	"\tmovq %r14, 120(%rdi)\n"
	"\tmovq %r15, 128(%rdi)\n"
	"\tret\n"
	".size hp_get_regs, .-hp_get_regs\n"
	/* The caller's sp after the call returns: the same as hp_get_regs
	 * stores, so a record can be reserved before the registers are
	 * written straight into it. */
	".globl hp_get_sp\n"
	".hidden hp_get_sp\n"
	".type hp_get_sp, @function\n"
	"hp_get_sp:\n"
	"\tleaq 8(%rsp), %rax\n"
	"\tret\n"
	".size hp_get_sp, .-hp_get_sp\n");
#else
void hp_get_regs(uint64_t *regs)
{
	(void)regs;
}

uint64_t hp_get_sp(void)
{
	return 0;
}
#endif

// SPDX-License-Identifier: Apache-2.0
/*
 * gfp_flags.c - a gfp_flags value as the kernel's trace output spells it
 * (show_gfp_flags: the names of the flag groups and flags it holds, each
 * taken out of the value in table order, joined by '|', any bits left in
 * hex), for to_ftrace(). The names and bits changed with the kernel;
 * upstream's to_ftrace() prints every trace's with the table of kernel
 * 4.4 (whatever release the trace's system_info names: measured with its
 * v58.2 shell on 3.4, 3.18, 4.9 and 6.1 releases), so this is that table.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "trace_processor/sql/funcs/funcs_int.h"

struct gfp_flag {
	uint64_t mask;
	const char *name;
};

/* Single bits. */
#define B_HIGHMEM 0x02u
#define B_MOVABLE 0x08u
#define B_IO 0x40u
#define B_FS 0x80u
#define B_COLD 0x100u
#define B_NOWARN 0x200u
#define B_REPEAT 0x400u
#define B_NOFAIL 0x800u
#define B_NORETRY 0x1000u
#define B_MEMALLOC 0x2000u
#define B_COMP 0x4000u
#define B_ZERO 0x8000u
#define B_NOMEMALLOC 0x10000u
#define B_HARDWALL 0x20000u
#define B_THISNODE 0x40000u

/* 4.4 to 4.13: reclaim is DIRECT_RECLAIM | KSWAPD_RECLAIM. */
#define K44_RECLAIM (0x400000u | 0x2000000u)
#define K44_USER (K44_RECLAIM | B_IO | B_FS | B_HARDWALL)
static const struct gfp_flag v4_4[] = {
	{(K44_USER | B_HIGHMEM | B_MOVABLE | B_COMP | B_NOMEMALLOC | B_NORETRY | B_NOWARN) &
		 ~0x2000000u,
	 "GFP_TRANSHUGE"},
	{K44_USER | B_HIGHMEM | B_MOVABLE, "GFP_HIGHUSER_MOVABLE"},
	{K44_USER | B_HIGHMEM, "GFP_HIGHUSER"},
	{K44_USER, "GFP_USER"},
	{K44_RECLAIM | B_IO | B_FS | 0x10u, "GFP_TEMPORARY"},
	{K44_RECLAIM | B_IO | B_FS, "GFP_KERNEL"},
	{K44_RECLAIM | B_IO, "GFP_NOFS"},
	{0x20u | 0x80000u | 0x2000000u, "GFP_ATOMIC"},
	{K44_RECLAIM, "GFP_NOIO"},
	{0x20u, "GFP_HIGH"},
	{0x80000u, "GFP_ATOMIC"},
	{B_IO, "GFP_IO"},
	{B_COLD, "GFP_COLD"},
	{B_NOWARN, "GFP_NOWARN"},
	{B_REPEAT, "GFP_REPEAT"},
	{B_NOFAIL, "GFP_NOFAIL"},
	{B_NORETRY, "GFP_NORETRY"},
	{B_COMP, "GFP_COMP"},
	{B_ZERO, "GFP_ZERO"},
	{B_NOMEMALLOC, "GFP_NOMEMALLOC"},
	{B_MEMALLOC, "GFP_MEMALLOC"},
	{B_HARDWALL, "GFP_HARDWALL"},
	{B_THISNODE, "GFP_THISNODE"},
	{0x10u, "GFP_RECLAIMABLE"},
	{B_MOVABLE, "GFP_MOVABLE"},
	{0x200000u, "GFP_NOTRACK"},
	{0x400000u, "GFP_DIRECT_RECLAIM"},
	{0x2000000u, "GFP_KSWAPD_RECLAIM"},
	{0x800000u, "GFP_OTHER_NODE"},
	{0, NULL},
};

size_t tp_gfp_flags_str(uint64_t value, char *out, size_t cap)
{
	const struct gfp_flag *t = v4_4;
	size_t n = 0;
	int w;

	if (cap == 0)
		return 0;
	out[0] = '\0';
	if (value == 0)
		return (size_t)snprintf(out, cap, "GFP_NOWAIT");
	for (; t->name; t++) {
		if ((value & t->mask) != t->mask)
			continue;
		value &= ~t->mask;
		w = snprintf(out + n, cap - n, "%s|", t->name);
		if (w < 0 || (size_t)w >= cap - n)
			return n;
		n += (size_t)w;
	}
	if (value) {
		w = snprintf(out + n, cap - n, "0x%" PRIx64, value);
		if (w > 0 && (size_t)w < cap - n)
			n += (size_t)w;
	} else if (n > 0) {
		out[--n] = '\0';
	}
	return n;
}

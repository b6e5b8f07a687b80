// SPDX-License-Identifier: Apache-2.0
/*
 * convert_int.h - the parts of `convert`: convert.c (the command line,
 * the output files) over pprof.c (one heap dump as a serialized
 * perftools.profiles.Profile, built from the trace processor's tables).
 */
#ifndef PFC_TRACE_PROCESSOR_CONVERT_CONVERT_INT_H
#define PFC_TRACE_PROCESSOR_CONVERT_CONVERT_INT_H

#include <stdint.h>

#include "base/buf.h"

struct tp;

/* One heap dump: a process's heap as of a dump's time. */
struct pprof_dump {
	int64_t upid, ts, pid;
	char heap[256];
};

/* The stacks of every callsite (built once, shared by the dumps). */
struct pprof_stacks;

int pprof_stacks_load(struct tp *tp, struct pprof_stacks **out);
void pprof_stacks_free(struct pprof_stacks *s);
/*
 * pprof_heap_dump() - The Profile of @d into @out: per callsite the total
 * and unreleased counts and bytes of the allocations up to d->ts.
 * Return: 0, -ENOMEM or -EIO (a query failed).
 */
int pprof_heap_dump(struct tp *tp, const struct pprof_stacks *s, const struct pprof_dump *d,
		    struct buf *out);

#endif

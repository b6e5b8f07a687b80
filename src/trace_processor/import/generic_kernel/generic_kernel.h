/* SPDX-License-Identifier: Apache-2.0 */
/*
 * generic_kernel.h - the generic kernel importer: the kernel-agnostic
 * GenericKernel* packets (task states, renames, process trees, CPU
 * frequencies), parsed in trace time order; what the read layer calls.
 */
#ifndef PFC_TRACE_PROCESSOR_IMPORT_GENERIC_KERNEL_GENERIC_KERNEL_H
#define PFC_TRACE_PROCESSOR_IMPORT_GENERIC_KERNEL_GENERIC_KERNEL_H

#include <stddef.h>
#include <stdint.h>

struct tp_event;
struct tp_import;

/*
 * tp_gk_parse_packet() - Parse a GenericKernel* TracePacket payload (task
 * state, task rename, process tree, CPU frequency; @field is its
 * TracePacket field number) at @ev's time (generic_kernel.c).
 */
void tp_gk_parse_packet(struct tp_import *imp, const struct tp_event *ev, uint32_t field,
			const uint8_t *data, size_t len);
/* Frees the generic kernel parser's state (NULL-safe). */
void tp_gk_fini(struct tp_import *imp);

#endif

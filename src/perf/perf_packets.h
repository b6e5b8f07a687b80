/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perf_packets.h - the TracePackets of a linux.perf sequence, as Perfetto's
 * traced_perf writes them: the defaults packet that opens each incremental
 * state generation (timestamp clock, PerfSampleDefaults), samples, and
 * kernel ring buffer loss notes.
 */
#ifndef PFC_PERF_PERF_PACKETS_H
#define PFC_PERF_PERF_PACKETS_H

#include <stdint.h>

#include "perf/perf_config.h"
#include "perf/ring/perf_record.h"
#include "protozero/protozero.h"

/* Writes the defaults packet into @pkt (a fresh TracePacket). */
void perf_write_defaults(struct pz_msg *pkt, const struct perf_config *c);

/* Packet header of a sample: timestamp and SEQ_NEEDS_INCREMENTAL_STATE. */
void perf_write_sample_header(struct pz_msg *pkt, uint64_t ts);

/* PerfSample fields shared by every kind of sample (no callstack). */
void perf_write_sample_common(struct pz_msg *perf_sample, uint32_t cpu,
			      const struct perf_sample *s);

/* A note that the kernel lost @lost records of @cpu's ring. */
void perf_write_lost(struct pz_msg *pkt, uint32_t cpu, uint64_t lost);
/* The data source stopped early by the memory guardrail (BOOTTIME now):
 * PerfSample.producer_event.source_stop_reason = PROFILER_STOP_GUARDRAIL. */
void perf_write_guardrail_stop(struct pz_msg *pkt);

#endif

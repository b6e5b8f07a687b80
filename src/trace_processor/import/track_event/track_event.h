/* SPDX-License-Identifier: Apache-2.0 */
/*
 * track_event.h - the TrackEvent importer: what the read layer hands it.
 * The tokenizer calls it in file order (sequence resets, descriptors,
 * event timestamps and counter values), the parser in trace time order
 * (events into slices, counters, flows and args; descriptor packets;
 * ModuleSymbols), and it finishes at the end of the trace. Its slices go
 * through the common slice code with the hooks tp_te_init() registers.
 */
#ifndef PFC_TRACE_PROCESSOR_IMPORT_TRACK_EVENT_TRACK_EVENT_H
#define PFC_TRACE_PROCESSOR_IMPORT_TRACK_EVENT_TRACK_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tp_event;
struct tp_import;
struct tp_packet_hdr;

/* A sequence's incremental state was reset (tp_seq_on_packet()): TrackEvent deltas too. */
void tp_te_seq_reset(struct tp_import *imp, uint32_t slot);
/* A packet was dropped for the incremental state it lacked (for --analyze-trace-proto-content). */
void tp_te_seq_skipped(struct tp_import *imp);
/*
 * tp_te_tokenize() - Tokenize a track event, track/thread descriptor,
 * streaming profile or translation table payload (@field is its
 * TracePacket field number).
 * @trace_ts: the packet's timestamp in trace time, or NULL if it has none.
 * Return: true to push @ev (filled in for track events, left alone for
 * descriptors), false when the payload was consumed or dropped.
 */
bool tp_te_tokenize(struct tp_import *imp, int slot, const struct tp_packet_hdr *h,
		    const int64_t *trace_ts, uint32_t field, const uint8_t *data, size_t len,
		    struct tp_event *ev);
/* Parse-time hooks (te_parse.c): TP_EV_TRACK_EVENT and packet payloads. */
void tp_te_parse_event(struct tp_import *imp, const struct tp_event *ev);
void tp_te_parse_packet(struct tp_import *imp, const struct tp_event *ev, uint32_t field,
			const uint8_t *data, size_t len);
void tp_te_finish(struct tp_import *imp);
/*
 * Records the function names of a ModuleSymbols packet for its mappings
 * (te_symbols.c). Return: true if the track events had a mapping of it.
 */
bool tp_te_module_symbols(struct tp_import *imp, const uint8_t *data, size_t len);
/* Registers the TrackEvent hooks every slice goes through (te_parse.c). */
void tp_te_init(struct tp_import *imp);
void tp_te_fini(struct tp_import *imp);

#endif

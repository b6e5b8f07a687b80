// SPDX-License-Identifier: Apache-2.0
/*
 * profiling.h - the profilers' importer: linux.perf samples (traced_perf)
 * and heapprofd's heap dumps, with the interned mappings, frames and
 * callstacks of their sequence; ART's Java heap graphs and the
 * deobfuscation mappings that name their classes; StackSample packets
 * and ART's process metadata (OutOfMemoryErrors).
 */
#ifndef PFC_TRACE_PROCESSOR_IMPORT_PROFILING_PROFILING_H
#define PFC_TRACE_PROCESSOR_IMPORT_PROFILING_PROFILING_H

#include <stddef.h>
#include <stdint.h>

struct tp_event;
struct tp_import;

/*
 * tp_perf_sample() - One TracePacket.perf_sample (@data, @len) of event
 * @ev, whose aux is its sequence generation + 1 (0: none).
 */
void tp_perf_sample(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
		    size_t len);
/*
 * tp_stack_sample() - One TracePacket.stack_sample of event @ev, whose aux
 * is its sequence generation + 1 (0: none).
 */
void tp_stack_sample(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
		     size_t len);
/*
 * tp_profile_packet() - One TracePacket.profile_packet (heapprofd) of
 * event @ev, whose aux is its sequence generation + 1 (0: none).
 */
void tp_profile_packet(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
		       size_t len);
/*
 * tp_prof_event_callstack() - The leaf callsite of a track event's
 * callstack: the Callstack @iid interned in sequence generation @gen
 * (@data NULL) for process @upid (-1: none), or the inline frames
 * (@data, @len: a TrackEvent.InlineCallstack, frames by name, file and
 * line) on the "track_event_inline" dummy mapping. Return: -1 if none.
 */
int64_t tp_prof_event_callstack(struct tp_import *imp, uint32_t gen, int64_t upid, uint64_t iid,
				const uint8_t *data, size_t len, uint32_t machine);
/* tp_smaps_packet() - One TracePacket.smaps_packet of event @ev. */
void tp_smaps_packet(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
		     size_t len);
/* tp_art_process_metadata() - One TracePacket.art_process_metadata of event @ev. */
void tp_art_process_metadata(struct tp_import *imp, const struct tp_event *ev,
			     const uint8_t *data, size_t len);
/* tp_heap_graph_packet() - One TracePacket.heap_graph of event @ev. */
void tp_heap_graph_packet(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
			  size_t len);
/* tp_deobfuscation_mapping() - One TracePacket.deobfuscation_mapping (applied at the end). */
/*
 * tp_prof_module_symbols() - A ModuleSymbols packet: symbol sets for the
 * frames of the profile mappings of its path and build id
 * (module_symbols.c). @other_mappings: the track event importer had
 * mappings of that binary (then no stackprofile_invalid_mapping_id).
 */
void tp_prof_module_symbols(struct tp_import *imp, const uint8_t *data, size_t len,
			    uint32_t machine, bool other_mappings);
void tp_deobfuscation_mapping(struct tp_import *imp, const uint8_t *data, size_t len);
/* tp_heap_graph_finish() - Ends the dumps still open, then deobfuscates. */
void tp_heap_graph_finish(struct tp_import *imp);
/* tp_profiling_finish() - At the end of the import: the stats Perfetto
 * derives from the mappings, then tp_heap_graph_finish(). */
void tp_profiling_finish(struct tp_import *imp);
void tp_profiling_fini(struct tp_import *imp);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ftrace_translate.h - turns raw ftrace records into FtraceEvent protos.
 * At session setup the ftrace data source builds one ftrace_event_table from
 * the parsed format of every enabled event: each kernel field is matched BY
 * NAME to a field of the FtraceEvent sub-message named like the event
 * ("sched_switch" -> FtraceEvent.sched_switch), using the protobuf-c
 * descriptors, and the conversion is precomputed. Events without a message
 * (or forced generic) become GenericFtraceEvent. The per-CPU readers then
 * translate each record with a loop over that table: no allocation, no
 * string work. One table may be shared by all CPUs (it is read-only).
 */
#ifndef PFC_PROBES_FTRACE_TRANSLATE_H
#define PFC_PROBES_FTRACE_TRANSLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probes/ftrace_format.h"
#include "probes/ftrace_page.h"
#include "protozero/protozero.h"

/* Highest event ID we index (format IDs are u16 common_type values). */
#define FTRACE_MAX_EVENT_ID UINT16_MAX

/* Flags for ftrace_event_table_add(). */
#define FTRACE_XLAT_GENERIC (1u << 0) /* write GenericFtraceEvent even if a message exists */

/* ftrace_translate_event() wrote the event but dropped a malformed field. */
#define FTRACE_XLAT_PARTIAL 1

struct ftrace_event_table;

/*
 * ftrace_event_table_create() - An empty table.
 * Return: the table (destroy with ftrace_event_table_destroy()), or NULL on
 * out-of-memory. Context: setup; allocates.
 */
struct ftrace_event_table *ftrace_event_table_create(void);
void ftrace_event_table_destroy(struct ftrace_event_table *t);

/*
 * ftrace_event_table_add() - Precompute the translation of one event.
 * @fmt: its parsed format (borrowed; only copied from).
 * @flags: FTRACE_XLAT_* flags.
 *
 * Kernel fields without a same-named proto field, or whose types cannot be
 * converted (e.g. a char array into an int32), are left out; generic events
 * carry every field whose value fits a string, int64 or uint64 (integer
 * arrays become one entry per element).
 *
 * Return: the FtraceEvent field number used (327 for generic events);
 * -EEXIST if the ID was added before; -ERANGE for an ID above
 * FTRACE_MAX_EVENT_ID; -ENOMEM.
 * Context: setup; allocates.
 */
int ftrace_event_table_add(struct ftrace_event_table *t, const struct ftrace_format *fmt,
			   unsigned flags);

/* Return: true if @id was added to @t. */
bool ftrace_event_table_has(const struct ftrace_event_table *t, uint16_t id);

/*
 * ftrace_translate_event() - Append one record to a bundle as FtraceEvent.
 * @t: the table (borrowed). @ev: the record from ftrace_page_next().
 * @bundle: an open FtraceEventBundle message; the event goes into its
 * repeated field 2 as {timestamp=1, pid=2 (common_pid), <oneof>}.
 *
 * Return: 0; FTRACE_XLAT_PARTIAL if a __data_loc/__rel_loc field pointed
 * outside the record (written without that field); -ENOENT if the ID is not
 * in @t; -EBADMSG if the record is shorter than its format (nothing written).
 * Context: hot path; never allocates.
 */
int ftrace_translate_event(const struct ftrace_event_table *t, const struct ftrace_raw_event *ev,
			   struct pz_msg *bundle);

/*
 * ftrace_proto_field_for_event() - The FtraceEvent field number whose name is
 * @event_name (e.g. "sched_switch" -> 4), or 0 if there is none.
 * Context: setup; linear in the number of FtraceEvent fields.
 */
uint32_t ftrace_proto_field_for_event(const char *event_name);

#endif

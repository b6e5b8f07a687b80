/* SPDX-License-Identifier: Apache-2.0 */
/*
 * system.h - the importer of system and service packets (traced_probes'
 * process, system and CPU data; the service's stats, events, config and
 * uuid; systemd's journal, journald.c): what the read layer calls.
 */
#ifndef PFC_TRACE_PROCESSOR_IMPORT_SYSTEM_SYSTEM_H
#define PFC_TRACE_PROCESSOR_IMPORT_SYSTEM_SYSTEM_H

#include <stddef.h>
#include <stdint.h>

struct tp_event;
struct tp_import;

/* The system importer's state; 0 or -ENOMEM. */
int tp_system_init(struct tp_import *imp);
void tp_system_fini(struct tp_import *imp);
/*
 * tp_system_packet() - The TracePacket payload @field (ProcessTree,
 * ProcessStats, SysStats, SystemInfo, CpuInfo, TraceStats, FtraceStats,
 * TraceUuid, TracingServiceEvent, TraceConfig, TraceAttributes,
 * CloneSnapshotTrigger; others are ignored) at @ev's time and machine.
 */
/* A TraceConfig as the tokenizer meets it (file order): its stats of the config. */
void tp_system_trace_config_tokenized(struct tp_import *imp, const uint8_t *data, size_t len);
/* At the end of the import: the stats Perfetto derives from the trace config. */
void tp_system_finish(struct tp_import *imp);
/* Last of all: __intrinsic_trace_diagnostics from the last TraceConfig (diagnostics.c). */
void tp_system_diagnostics(struct tp_import *imp);
/* tp_diagnostics_run() - The rules of diagnostics.c on TraceConfig @cfg (@len bytes). */
void tp_diagnostics_run(struct tp_import *imp, const uint8_t *cfg, size_t len);
void tp_system_packet(struct tp_import *imp, const struct tp_event *ev, uint32_t field,
		      const uint8_t *data, size_t len);
/*
 * tp_journald_event() - A SystemdJournaldEvent (journald.c): a log entry,
 * or the journal's flush statistics.
 */
void tp_journald_event(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
		       size_t len);

#endif

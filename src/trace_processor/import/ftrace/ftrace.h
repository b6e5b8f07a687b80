/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ftrace.h - the ftrace importer: what the read layer hands it. Bundles
 * are decoded on the merge worker (tp_ftrace_header_read(),
 * tp_ftrace_hot_decode(): they touch nothing but their arguments), and the
 * events are parsed in trace time order on the parsing thread
 * (tp_ftrace_parse_event() and the compact_sched records).
 */
#ifndef PFC_TRACE_PROCESSOR_IMPORT_FTRACE_FTRACE_H
#define PFC_TRACE_PROCESSOR_IMPORT_FTRACE_FTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tp_event;
struct tp_import;

/* Decoded compact_sched records (the packed arrays rebuilt per event). */
struct tp_compact_switch {
	int64_t ts;
	int64_t prev_state;
	int32_t next_pid;
	int32_t next_prio;
	uint32_t next_comm;   /* string id (in a cursor: intern table index + 1, 0: none) */
};

struct tp_compact_waking {
	int64_t ts;
	int32_t pid;
	int32_t target_cpu;
	int32_t prio;
	uint32_t comm;        /* string id (in a cursor: intern table index + 1, 0: none) */
	uint32_t common_flags;
};

/* An FtraceEvent's common fields, read once when its bundle opens. */
struct tp_ftrace_header {
	int64_t ts;
	int64_t pid;
	int64_t common_flags;         /* TP_NULL_INT when absent */
	const uint8_t *payload;       /* the event message (oneof member) */
	uint32_t payload_len;
	uint32_t payload_id;          /* 0: none (malformed) */
	bool has_ts;
};

/*
 * A comm of a hot event. Kernel comms are at most 16 bytes: those are
 * copied (zero-padded), so parsing compares two words, not trace bytes.
 */
#define TP_COMM_INLINE 16
struct tp_comm_ref {
	union {
		uint64_t w[TP_COMM_INLINE / 8];  /* len <= TP_COMM_INLINE */
		const uint8_t *data;             /* longer: the bytes in the trace */
	};
	uint32_t len;
	bool present;                 /* false: absent or not bytes */
};

/*
 * The fields of a hot event (ftrace_hot.c), decoded with its header
 * when its bundle opens; absent ints are 0, as the generic parser reads
 * them. is_hot false: the generic parser decodes the payload itself.
 */
struct tp_ftrace_hot {
	bool is_hot;
	union {
		struct {
			int64_t prev_pid, prev_state, next_pid, next_prio;
			struct tp_comm_ref prev_comm, next_comm;
		} sw;
		struct {
			int64_t pid;
			struct tp_comm_ref comm;
		} waking;
		struct {
			int64_t cpu_id, state;
		} idle;
	};
};

/* The ftrace importer's state; 0 or -ENOMEM. */
int tp_ftrace_init(struct tp_import *imp);
void tp_ftrace_fini(struct tp_import *imp);
/* The service said tracing started at @ts (the first time counts): ftrace before it is dropped. */
void tp_ftrace_tracing_started(struct tp_import *imp, int64_t ts);
/*
 * tp_ftrace_data_start() - From @ts on, every CPU of @machine has whole
 * ftrace data (the latest of its CPUs' first bundles' previous bundle end):
 * before it, ftrace events only make ftrace_event rows. Called before the
 * first event is parsed.
 */
void tp_ftrace_data_start(struct tp_import *imp, uint32_t machine, int64_t ts);
/*
 * tp_ftrace_system_info() - A SystemInfo packet, seen in file order: its
 * utsname.machine picks the syscall table (an unknown one changes nothing).
 */
void tp_ftrace_system_info(struct tp_import *imp, const uint8_t *data, size_t len);
/* Reads an FtraceEvent's timestamp, pid, common_flags and payload. */
void tp_ftrace_header_read(const uint8_t *data, size_t len, struct tp_ftrace_header *h);
/*
 * tp_ftrace_hot_decode() - Reads the fields of a hot event (sets
 * @out->is_hot; touches nothing else, so any thread may call it).
 */
void tp_ftrace_hot_decode(const struct tp_ftrace_header *h, struct tp_ftrace_hot *out);
/* One FtraceEvent at @ev's time, CPU and machine (@ev->aux: its bundle's generation + 1). */
void tp_ftrace_parse_event(struct tp_import *imp, const struct tp_event *ev,
			   const struct tp_ftrace_header *h, const struct tp_ftrace_hot *hot);
void tp_ftrace_parse_compact_switch(struct tp_import *imp, const struct tp_event *ev,
				    const struct tp_compact_switch *s);
void tp_ftrace_parse_compact_waking(struct tp_import *imp, const struct tp_event *ev,
				    const struct tp_compact_waking *w);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ftrace_compact.h - Perfetto's compact_sched encoding: sched_switch and
 * sched_waking records of one bundle stored as columns in
 * FtraceEventBundle.compact_sched (field 4) instead of one FtraceEvent each.
 * Timestamps are deltas (the first from 0), comms are indices into a
 * per-bundle intern table, and a switch's prev_* fields are left out (the
 * reader knows them from the CPU's previous switch). Used by ftrace_bundle.c
 * while it walks pages; one buffer can serve every CPU of a thread in turn.
 */
#ifndef PFC_PROBES_FTRACE_COMPACT_H
#define PFC_PROBES_FTRACE_COMPACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probes/ftrace_format.h"
#include "probes/ftrace_page.h"
#include "protozero/protozero.h"

/* Switches, and separately wakings, held per bundle. */
#define FTRACE_COMPACT_MAX_EVENTS 4096
/* Distinct comms held per bundle. */
#define FTRACE_COMPACT_MAX_COMMS 1024
/* Past this many comms a bundle should end at the next page boundary, so
 * that interning stays cheap (Perfetto uses the same threshold). */
#define FTRACE_COMPACT_COMM_THRESHOLD 64
#define FTRACE_COMPACT_COMM_LEN 16

/* Where compact_sched finds its fields; from the kernel's format files. */
struct ftrace_compact_format {
	bool has_switch;
	bool has_waking;
	uint16_t switch_id;
	uint16_t waking_id;
	uint32_t switch_min_size;
	uint32_t waking_min_size;
	uint16_t sw_prev_state;
	uint16_t sw_prev_state_size;  /* 4 or 8, signed */
	uint16_t sw_next_comm;
	uint16_t sw_next_pid;
	uint16_t sw_next_prio;
	uint16_t wk_comm;
	uint16_t wk_pid;
	uint16_t wk_prio;
	uint16_t wk_target_cpu;
	uint16_t wk_common_flags;
};

/*
 * ftrace_compact_format_init() - Check the sched_switch and sched_waking
 * layouts and record their offsets.
 * @sched_switch, @sched_waking: parsed formats (borrowed), either may be NULL.
 * Return: 0 if at least one of them can be compacted; -ENOTSUP if neither
 * can (missing fields, or sizes other than next_pid/prio/target_cpu/pid
 * 4 bytes, prev_state 4 or 8, comm char[16], common_flags 1 byte).
 * Context: setup; never allocates.
 */
int ftrace_compact_format_init(struct ftrace_compact_format *f,
			       const struct ftrace_format *sched_switch,
			       const struct ftrace_format *sched_waking);

struct ftrace_compact_sched;

/* Return: an empty buffer (about 250 KiB), or NULL on out-of-memory.
 * Destroy with ftrace_compact_destroy(). Context: setup; allocates. */
struct ftrace_compact_sched *ftrace_compact_create(void);
void ftrace_compact_destroy(struct ftrace_compact_sched *c);
/* Forgets everything buffered (the intern table included). */
void ftrace_compact_reset(struct ftrace_compact_sched *c);

/*
 * ftrace_compact_add() - Buffer @ev if it is a switch or waking.
 * Return: 1 if buffered; 0 if @ev is neither (translate it normally);
 * -EBADMSG if it is shorter than its format; -ENOSPC if the buffer is full
 * (nothing buffered; write the bundle out or translate @ev normally).
 * Context: hot path; never allocates.
 */
int ftrace_compact_add(struct ftrace_compact_sched *c, const struct ftrace_compact_format *f,
		       const struct ftrace_raw_event *ev);

/* True if @c can take @n more records of each kind without exceeding its
 * capacity or the comm threshold. */
bool ftrace_compact_has_room(const struct ftrace_compact_sched *c, size_t n);
bool ftrace_compact_is_empty(const struct ftrace_compact_sched *c);

/*
 * ftrace_compact_write() - Write the buffered records as CompactSched
 * (FtraceEventBundle field 4) into @bundle, then reset @c. Writes nothing
 * if @c is empty.
 * Context: never allocates.
 */
void ftrace_compact_write(struct ftrace_compact_sched *c, struct pz_msg *bundle);

#endif

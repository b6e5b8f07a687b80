/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mmap_log.h - the executable file mappings of processes as the kernel
 * reported them (PERF_RECORD_MMAP2, copied to children at fork), so a
 * process that exited before its samples were read still unwinds and
 * symbolizes: /proc/<pid>/maps is gone by then, this log is not. A process
 * stays in the log a few seconds after its exit (samples on other CPUs'
 * rings are read later). Bounded: MMAP_LOG_MAX_PROCS processes,
 * MMAP_LOG_MAX_MAPS per process. Runs on traced_perf's loop thread.
 */
#ifndef PFC_PERF_MMAP_LOG_H
#define PFC_PERF_MMAP_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/hmap.h"

#define MMAP_LOG_MAX_PROCS 4096u
#define MMAP_LOG_MAX_MAPS 1024u
#define MMAP_LOG_EXIT_GRACE_NS 5000000000ull

struct mmap_log_exit {
	uint32_t pid;
	uint64_t ns;
};

struct mmap_log {
	struct hmap procs;            /* pid -> struct mlog_proc * */
	struct mmap_log_exit *exits;  /* in exit order, from exits_head */
	size_t n_exits, exits_head, cap_exits;
	uint64_t tick;
	uint64_t maps_dropped;        /* over MMAP_LOG_MAX_MAPS */
	uint64_t procs_evicted;       /* over MMAP_LOG_MAX_PROCS */
};

/* One mapping as the kernel described it. */
struct mmap_log_map {
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino;
	const char *path; /* copied */
};

void mmap_log_init(struct mmap_log *l);
void mmap_log_fini(struct mmap_log *l);

/* Records @m for @pid: mappings it overlaps are replaced (an exec, or a
 * remap). Only file mappings (paths starting with '/') are kept. */
void mmap_log_add(struct mmap_log *l, uint32_t pid, const struct mmap_log_map *m);

/* @child starts with a copy of @parent's mappings (if any are logged). */
void mmap_log_fork(struct mmap_log *l, uint32_t parent, uint32_t child);

/* @pid exited at @now_ns: dropped MMAP_LOG_EXIT_GRACE_NS later by
 * mmap_log_expire(). */
void mmap_log_exited(struct mmap_log *l, uint32_t pid, uint64_t now_ns);
void mmap_log_expire(struct mmap_log *l, uint64_t now_ns);

/*
 * mmap_log_maps_text() - @pid's mappings as /proc/<pid>/maps lines into
 * @out (reset first), each line's range starting at the address of file
 * offset 0 (where the ELF's first segment is), as libdwfl expects.
 * Return: 0, -ENOENT if nothing is logged for @pid, -ENOMEM.
 */
int mmap_log_maps_text(const struct mmap_log *l, uint32_t pid, struct buf *out);

#endif

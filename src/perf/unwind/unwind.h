/* SPDX-License-Identifier: Apache-2.0 */
/*
 * unwind.h - user callstacks of sampled threads, with elfutils' libdw: a
 * Dwfl per process (modules from /proc/<pid>/maps, cached; rebuilt when a
 * pc falls outside every module; dropped when the process exits; from the
 * kernel's MMAP2 records, mmap_log.h, once /proc has nothing), unwound
 * by DWARF CFI from the sample's registers and copied stack (the target is
 * never ptrace'd), or along frame pointers. Frames are symbolized from the
 * ELF .symtab/.dynsym (MiniDebugInfo included) and carry their module's
 * path and build id. Runs on traced_perf's loop thread.
 */
#ifndef PFC_PERF_UNWIND_H
#define PFC_PERF_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf/ring/perf_record.h"

/* How user frames are found (PerfEventConfig's unwind_mode numbers). */
enum perf_unwind_mode {
	PERF_UNWIND_SKIP = 1,
	PERF_UNWIND_DWARF = 2,
	PERF_UNWIND_FRAME_POINTER = 3,
	PERF_UNWIND_KERNEL_FRAME_POINTER = 4,
};

#define UNWIND_MAX_FRAMES 128u
/* Processes whose unwinding state is kept (least recently used go). */
#define UNWIND_MAX_PROCS 256u
#define UNWIND_BUILD_ID_MAX 64u

/* Profiling.StackUnwindError values we produce. */
enum unwind_error {
	UNWIND_ERR_NONE = 1,
	UNWIND_ERR_MEMORY_INVALID = 2,
	UNWIND_ERR_UNWIND_INFO = 3,
	UNWIND_ERR_UNSUPPORTED = 4,
	UNWIND_ERR_INVALID_MAP = 5,
	UNWIND_ERR_MAX_FRAMES_EXCEEDED = 6,
	UNWIND_ERR_REPEATED_FRAME = 7,
	UNWIND_ERR_INVALID_ELF = 8,
	UNWIND_ERR_THREAD_DOES_NOT_EXIST = 11,
	UNWIND_ERR_BAD_ARCH = 12,
	UNWIND_ERR_MAPS_PARSE = 13,
};

struct symtab;

/* A binary mapped by a process: what an interned Mapping needs, and its
 * ELF's function table (shared with other processes mapping the same ELF;
 * libdw's own lookup is a linear scan per call, this a binary search). */
struct unwind_module {
	struct symtab *tab; /* a reference into the unwinder's cache, or NULL */
	char *path;
	uint8_t build_id[UNWIND_BUILD_ID_MAX];
	uint32_t build_id_len;
	uint64_t start, end;
	uint64_t bias; /* pc - bias = the address in the ELF (rel_pc) */
	uint64_t key_hash; /* of path, start and build id (callers' interning) */
	bool reading_symbols; /* separate debuginfo may be looked up now */
};

struct unwind_frame {
	uint64_t pc;
	uint64_t rel_pc;
	const char *function;              /* borrowed; NULL if unknown */
	const struct unwind_module *module; /* borrowed; NULL outside every module */
};

/* Frames leaf first; valid until the next unwind_sample() or forget. */
struct unwind_result {
	struct unwind_frame frames[UNWIND_MAX_FRAMES];
	size_t n;
	enum unwind_error error;
	/* DWARF unwinds that reached the outermost frame: one past the
	 * highest stack address read (see perf/ring/stack_tops.h); else 0. */
	uint64_t stack_top;
	/* The unwind wanted stack words above the copy's end (a deep stack,
	 * or one cut too short). */
	bool past_copy;
};

struct unwind_stats {
	uint64_t procs_created;
	uint64_t procs_evicted;
	uint64_t maps_reparsed;
	uint64_t fp_fallbacks;
	uint64_t symtabs_loaded; /* ELF symbol tables read (not from the cache) */
	uint64_t maps_from_records; /* module lists built from MMAP2 records */
	uint64_t fast_unwinds;  /* DWARF stacks unwound with cached CFI rules */
	uint64_t libdw_unwinds; /* ... and by libdw (a frame the rules cannot do) */
	uint64_t crosscheck_compared; /* unwinder_set_crosscheck() */
	uint64_t crosscheck_differ;
};

struct unwinder;

int unwinder_create(struct unwinder **out);
/**
 * unwinder_set_crosscheck() - Tests: unwind every stack the cached CFI
 * rules unwound with libdw as well, keep libdw's frames, count (and print
 * the first few of) the stacks where the two differ.
 */
void unwinder_set_crosscheck(struct unwinder *u, bool on);
void unwinder_destroy(struct unwinder *u);

/**
 * unwind_sample() - Unwind the user part of @s (which must have regs).
 * @mode: PERF_UNWIND_DWARF or PERF_UNWIND_FRAME_POINTER.
 * Context: loop thread; allocates only for a process or module seen for
 * the first time.
 */
void unwind_sample(struct unwinder *u, const struct perf_sample *s, enum perf_unwind_mode mode,
		   struct unwind_result *out);
/**
 * unwind_symbolize() - Frames for pcs the kernel already walked
 * (UNWIND_KERNEL_FRAME_POINTER): @pcs (@n, leaf first, return addresses
 * after the first) of process @pid, symbolized like unwound ones.
 */
void unwind_symbolize(struct unwinder *u, uint32_t pid, const uint64_t *pcs, size_t n,
		      struct unwind_result *out);
/**
 * unwinder_reparse_pc() - @pc (a frame of @pid's last unwind) is in none
 * of its known modules, or in one where the unwind failed (maps read
 * before a dlopen were seen to put the new library's pcs in libc's
 * module): reread its maps now, however recently they were read, unless they were read after the sample was taken (@sample_ns,
 * CLOCK_MONOTONIC; 0: unknown) or this function reread them in the last
 * 100 ms. For a caller whose samples may come from a library
 * mapped since (a dlopen'd library's frames in a heap sample).
 * Return: true if @pc is in a module now (unwind the sample again).
 */
bool unwinder_reparse_pc(struct unwinder *u, uint32_t pid, uint64_t pc, uint64_t sample_ns);
/* Drop @pid's state (it exited). */
/* @pid exited: its unwinding state goes now, its logged mappings a few
 * seconds later (samples of it may still wait in other CPUs' rings). */
void unwinder_forget(struct unwinder *u, uint32_t pid);
/* A PERF_RECORD_MMAP2 / a new process (FORK with pid != ppid): logged, so
 * a process that exits before its samples are read still unwinds. */
void unwinder_note_mmap(struct unwinder *u, const struct perf_mmap2 *m);
void unwinder_note_fork(struct unwinder *u, uint32_t parent, uint32_t child);
void unwinder_get_stats(const struct unwinder *u, struct unwind_stats *out);
/* "ERROR <name>" for the synthetic frame of a failed unwind. */
const char *unwind_error_frame_name(enum unwind_error e);

#endif

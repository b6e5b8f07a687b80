/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proc_stats.h - the linux.process_stats collector: ProcessTree snapshots of
 * /proc (all processes, or pids first seen in ftrace) and polled ProcessStats
 * memory counters. The producer glue begins each TracePacket and calls in
 * from the event loop; every /proc read goes through one reusable buffer and
 * a process that vanishes mid-scan is skipped. Reads from <root>/proc, so
 * tests can point it at a recorded tree.
 */
#ifndef PFC_PROBES_PROC_STATS_H
#define PFC_PROBES_PROC_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hmap.h"

struct pz_msg;
struct Perfetto__Protos__ProcessStatsConfig;

#define PS_MAX_ROOT_BYTES 512
/* /proc/pid/status, stat, smaps_rollup: status is ~1.5 KiB plus Groups. */
#define PS_READ_BUF_BYTES (64 * 1024)
/* Longer command lines are cut here (the kernel allows up to ARG_MAX). */
#define PS_MAX_CMDLINE_BYTES (128 * 1024)
/* PID namespace nesting depth of the kernel (MAX_PID_NS_LEVEL) plus root. */
#define PS_MAX_NS_LEVELS 33
/* "Name:" of /proc/pid/status: a 15-byte comm, escaped at most 4x. */
#define PS_NAME_BYTES 64
/* Perfetto's floor for proc_stats_poll_ms. */
#define PS_MIN_POLL_MS 100
/* Pids in the seen and kernel-thread sets before dead ones are dropped. */
#define PS_PRUNE_MIN_ENTRIES 4096u

struct ps_config {
	bool scan_all_processes_on_start; /* for the glue: call ps_scan_all() */
	bool record_thread_names;
	bool record_process_age;     /* Process.process_start_from_boot */
	bool record_process_runtime; /* ProcessStats runtime_user/kernel_mode */
	bool resolve_process_fds;    /* ProcessStats.fds: fd number and path */
	bool scan_smaps_rollup;      /* ProcessStats.smr_* */
	bool record_process_dmabuf_rss;
	bool skip_main_thread_message;
	bool on_demand_enabled;   /* false with quirk DISABLE_ON_DEMAND */
	uint32_t poll_ms;         /* 0: no polling, else >= PS_MIN_POLL_MS */
	uint32_t cache_ttl_polls; /* unchanged counters are omitted for this many polls */
};

/* Memory counters of /proc/pid/status and smaps_rollup, in kB. */
enum ps_mem {
	PS_MEM_VM_SIZE,
	PS_MEM_VM_RSS,
	PS_MEM_RSS_ANON,
	PS_MEM_RSS_FILE,
	PS_MEM_RSS_SHMEM,
	PS_MEM_VM_SWAP,
	PS_MEM_VM_LOCKED,
	PS_MEM_VM_HWM,
	PS_MEM_SMR_RSS,
	PS_MEM_SMR_PSS,
	PS_MEM_SMR_PSS_ANON,
	PS_MEM_SMR_PSS_FILE,
	PS_MEM_SMR_PSS_SHMEM,
	PS_MEM_SMR_SWAP_PSS,
	PS_MEM_N,
};

enum ps_status_has {
	PS_HAS_NAME = 1u << 0,
	PS_HAS_TGID = 1u << 1,
	PS_HAS_PID = 1u << 2,
	PS_HAS_PPID = 1u << 3,
	PS_HAS_UID = 1u << 4,
	PS_HAS_KTHREAD = 1u << 5,
};

/* The parts of /proc/pid/status the collector uses. */
struct ps_status {
	uint32_t has;      /* PS_HAS_* */
	uint32_t mem_has;  /* 1u << enum ps_mem */
	char name[PS_NAME_BYTES]; /* comm, as the kernel escapes it */
	int32_t tgid, pid, ppid, uid;
	bool is_kthread;   /* valid with PS_HAS_KTHREAD (Linux >= 6.4) */
	uint32_t n_nspid;  /* NSpid: the root-namespace id, then nested ones */
	int32_t nspid[PS_MAX_NS_LEVELS];
	uint64_t mem_kb[PS_MEM_N];
};

/* The parts of /proc/pid/stat the collector uses; times in clock ticks. */
struct ps_stat {
	int32_t pid;
	const char *comm; /* view into the input, between '(' and the last ')' */
	size_t comm_len;
	char state;
	int32_t ppid;
	uint64_t utime, stime, starttime;
};

struct ps_cached; /* private: last values written per pid */

struct ps_state {
	char root[PS_MAX_ROOT_BYTES]; /* "" for the real / */
	struct ps_config cfg;
	uint64_t ns_per_tick;
	char *buf;              /* PS_MAX_CMDLINE_BYTES, reused by every read */
	struct hmap seen;       /* tid -> tgid: already in a ProcessTree */
	struct hmap skip_mem;   /* pids whose status has no Vm* (kernel threads) */
	struct hmap cache_idx;  /* pid -> index into cache */
	struct ps_cached *cache;
	size_t n_cache, cap_cache;
	struct hmap seen_fds;   /* pid << 32 | fd, cleared with the cache */
	uint32_t cache_polls;
	int32_t *pending;       /* pids the last poll saw but no tree had */
	size_t n_pending, cap_pending;
	/* Counters for the glue to report. */
	uint64_t n_vanished;    /* processes gone between readdir and read */
	uint64_t n_bad_files;   /* /proc files that did not parse */
	size_t prune_at;        /* ps_maybe_prune() sweeps at this many pids */
};

/**
 * ps_config_from_proto() - Translate a ProcessStatsConfig with Perfetto's
 * defaults and clamps (poll period >= 100 ms, cache TTL >= one poll).
 * @pb: the decoded config (borrowed), or NULL for all defaults.
 * @out: filled completely.
 * Context: any thread; pure.
 */
void ps_config_from_proto(const struct Perfetto__Protos__ProcessStatsConfig *pb,
			  struct ps_config *out);

/**
 * ps_init() - Prepare a collector for one data source instance.
 * @st: caller storage.  @root: directory holding proc/ ("/" or NULL for the
 * live system; copied).  @cfg: options (copied).
 *
 * Return: 0, -ENAMETOOLONG (root too long) or -ENOMEM.
 * Context: allocates; ps_fini() frees.
 */
int ps_init(struct ps_state *st, const char *root, const struct ps_config *cfg);

/** ps_fini() - Free what ps_init() and later calls allocated; @st may be NULL. */
void ps_fini(struct ps_state *st);

/**
 * ps_scan_all() - Write TracePacket.timestamp and a ProcessTree of every
 * process and thread in <root>/proc into @pkt.
 * @st: the collector; every pid written joins its seen-set.
 * @pkt: a TracePacket begun by the caller (borrowed); still open afterwards.
 *
 * Each process gets pid, ppid, uid, cmdline (its NUL-separated words, or
 * its comm with cmdline_is_comm when empty, as for kernel threads), nspid,
 * is_kthread (Linux >= 6.4), process_start_from_boot if record_process_age,
 * and a Thread entry for its main thread unless skip_main_thread_message.
 * Other threads get tid and tgid, plus name if record_thread_names and
 * nstid when namespaced. Vanished processes are skipped.
 *
 * Return: processes written, -ENOMEM, or the -errno of opening <root>/proc.
 * Context: event loop; blocks on procfs reads; may grow the seen-set.
 */
int ps_scan_all(struct ps_state *st, struct pz_msg *pkt);

/**
 * ps_count_unseen() - How many of @pids ps_lookup_pids() would write.
 * @st: the collector.  @pids: tids or pids (borrowed).  @n: their count.
 *
 * Return: the count of ids > 0 not yet in the seen-set (duplicates counted).
 * Context: never allocates.
 */
size_t ps_count_unseen(const struct ps_state *st, const int32_t *pids, size_t n);

/**
 * ps_lookup_pids() - Write a ProcessTree for the ids in @pids that no
 * earlier tree had (ids from ftrace: each may be a thread).
 * @st: the collector.  @pids: ids (borrowed); 0, negatives and ids already
 * seen are ignored.  @n: their count.  @pkt: a TracePacket begun by the caller.
 *
 * A thread id is resolved to its process through /proc/<tid>/status Tgid;
 * the process is written first if new, then the thread. When nothing is
 * new, nothing is written (ps_count_unseen() tells in advance).
 *
 * Return: entries (processes + threads) written, or -ENOMEM.
 * Context: event loop; blocks on procfs reads.
 */
int ps_lookup_pids(struct ps_state *st, const int32_t *pids, size_t n, struct pz_msg *pkt);

/**
 * ps_poll_stats() - Write TracePacket.timestamp and a ProcessStats with the
 * memory counters of every process that has them.
 * @st: the collector.  @pkt: a TracePacket begun by the caller.
 *
 * Counters equal to the last value written within the cache TTL are left
 * out, and a process with nothing new is left out (as Perfetto does). Kernel
 * threads (no VmSize) are remembered and not read again. Processes not yet
 * in any ProcessTree are queued: write them with ps_write_pending() into a
 * new packet.
 *
 * Return: the number of queued pids (>= 0), -ENOMEM, or the -errno of
 * opening <root>/proc.
 * Context: event loop; blocks on procfs reads.
 */
int ps_poll_stats(struct ps_state *st, struct pz_msg *pkt);

/**
 * ps_write_pending() - Write a ProcessTree for the pids ps_poll_stats()
 * queued, and empty the queue.
 * Return: as ps_lookup_pids().
 */
int ps_write_pending(struct ps_state *st, struct pz_msg *pkt);

/**
 * ps_forget_pids() - Drop @pids from the seen-set so they are looked up
 * again (after a task_rename: the cmdline may have changed).
 */
void ps_forget_pids(struct ps_state *st, const int32_t *pids, size_t n);

/**
 * ps_clear_incremental_state() - Forget every pid, cached counter and
 * kernel-thread mark, as when the trace config clears incremental state.
 * The glue sets incremental_state_cleared on its next packet.
 */
void ps_clear_incremental_state(struct ps_state *st);

/**
 * ps_parse_status() - Parse the contents of /proc/pid/status.
 * @buf: the bytes (borrowed; need not be NUL-terminated).  @len: their count.
 * @out: cleared, then filled with the keys found; a truncated file gives
 * the keys before the cut.
 *
 * Return: 0, or -EINVAL if neither Pid nor Name is present.
 * Context: any thread; pure.
 */
int ps_parse_status(const char *buf, size_t len, struct ps_status *out);

/**
 * ps_parse_mem() - Add the memory keys of @buf (status or smaps_rollup
 * lines, "Key:  123 kB") to @out without clearing it.
 */
void ps_parse_mem(const char *buf, size_t len, struct ps_status *out);

/**
 * ps_parse_stat() - Parse /proc/pid/stat; the comm may hold any bytes,
 * including ") (", so fields are counted from its last ')'.
 * @buf: the bytes (borrowed).  @len: their count.  @out: filled on success;
 * out->comm points into @buf.
 *
 * Return: 0, or -EINVAL for a malformed or truncated line.
 * Context: any thread; pure.
 */
int ps_parse_stat(const char *buf, size_t len, struct ps_stat *out);

/**
 * ps_maybe_prune() - Drop pids that exited from the seen and kernel-thread
 * sets, when they have grown enough since the last time (see
 * PS_PRUNE_MIN_ENTRIES); cheap otherwise.
 * @st: the collector.
 *
 * Return: how many pids were dropped.
 * Context: probes loop; one access() per remembered pid when it sweeps.
 */
size_t ps_maybe_prune(struct ps_state *st);

#endif

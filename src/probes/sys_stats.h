/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sys_stats.h - the linux.sys_stats collector: polls /proc/meminfo, vmstat,
 * stat, buddyinfo, diskstats, pressure/ and /sys cpufreq, cpuidle, devfreq,
 * thermal and GPU frequency files into SysStats packets. The producer glue
 * calls ss_poll() every ss_tick_period_ms() on the event loop; each section
 * is read on the ticks its own period divides, as in Perfetto. The /proc
 * files stay open and are re-read from offset 0 into one reusable buffer.
 */
#ifndef PFC_PROBES_SYS_STATS_H
#define PFC_PROBES_SYS_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hmap.h"

struct pz_msg;
struct Perfetto__Protos__SysStatsConfig;

#define SS_MAX_ROOT_BYTES 512
/* Read buffer: starts here and doubles while a file fills it. */
#define SS_READ_BUF_BYTES (64 * 1024)
/* Files larger than this (a huge /proc/stat intr line) are cut. */
#define SS_MAX_READ_BYTES (4 * 1024 * 1024)
/* Perfetto's floor for every *_period_ms. */
#define SS_MIN_PERIOD_MS 10
/* CPUs looked at for cpufreq and cpuidle. */
#define SS_MAX_CPUS 4096
/* Longest meminfo/vmstat key we match. */
#define SS_MAX_KEY_BYTES 48

enum ss_section {
	SS_MEMINFO,
	SS_VMSTAT,
	SS_STAT,
	SS_DEVFREQ,
	SS_CPUFREQ,
	SS_BUDDYINFO,
	SS_DISKSTAT,
	SS_PSI,
	SS_THERMAL,
	SS_CPUIDLE,
	SS_GPUFREQ,
	SS_SLAB,
	SS_N_SECTIONS,
};

/* The /proc files kept open between polls. */
enum ss_file {
	SS_FILE_MEMINFO,
	SS_FILE_VMSTAT,
	SS_FILE_STAT,
	SS_FILE_BUDDYINFO,
	SS_FILE_DISKSTATS,
	SS_FILE_PSI_CPU,
	SS_FILE_PSI_IO,
	SS_FILE_PSI_MEMORY,
	SS_FILE_SLABINFO,
	SS_N_FILES,
};

struct ss_key {
	char name[SS_MAX_KEY_BYTES];
	uint32_t id;
};

struct ss_state {
	char root[SS_MAX_ROOT_BYTES]; /* "" for the real / */
	uint32_t tick_period_ms;      /* 0: nothing to poll */
	uint32_t ticks[SS_N_SECTIONS]; /* read every Nth tick; 0 = off */
	uint64_t tick;
	uint32_t stat_mask;           /* 1u << SysStatsConfig.StatCounters */
	struct ss_key *meminfo_keys;  /* enabled counters */
	size_t n_meminfo_keys;
	struct hmap meminfo_idx;      /* fnv1a64(key) -> index */
	struct ss_key *vmstat_keys;
	size_t n_vmstat_keys;
	struct hmap vmstat_idx;
	int fds[SS_N_FILES];          /* -1 when absent */
	char *buf;
	size_t buf_cap;
	uint32_t n_cpus;              /* cpuN directories under /sys/devices/system/cpu */
	uint64_t ns_per_tick;         /* /proc/stat times are in USER_HZ */
	uint64_t n_read_errors;       /* counter for the glue to report */
};

/**
 * ss_init() - Prepare a collector from a SysStatsConfig.
 * @st: caller storage.  @root: directory holding proc/ and sys/ ("/" or NULL
 * for the live system; copied).  @cfg: the decoded config (borrowed), or
 * NULL to poll nothing.
 *
 * Periods under SS_MIN_PERIOD_MS are raised to it. An empty counter list
 * means every counter (meminfo, vmstat, stat), as in Perfetto.
 *
 * Return: 0; -EINVAL if the enabled periods are not all multiples of the
 * shortest (nothing will be polled then, as in Perfetto); -ENAMETOOLONG;
 * -ENOMEM. ss_fini() is safe after any return.
 * Context: allocates; opens files.
 */
int ss_init(struct ss_state *st, const char *root, const struct Perfetto__Protos__SysStatsConfig *cfg);

/** ss_fini() - Close the files and free the buffers; @st may be NULL. */
void ss_fini(struct ss_state *st);

/** ss_tick_period_ms() - How often to call ss_poll(); 0 means never. */
static inline uint32_t ss_tick_period_ms(const struct ss_state *st)
{
	return st->tick_period_ms;
}

/**
 * ss_poll() - One tick: write TracePacket.timestamp and a SysStats holding
 * the sections due on this tick, plus collection_end_timestamp.
 * @st: the collector.  @pkt: a TracePacket begun by the caller (borrowed).
 *
 * Return: a mask of 1u << enum ss_section read this tick (>= 0).
 * Context: event loop; blocks on procfs/sysfs reads; allocates only when a
 * file outgrows the read buffer.
 */
int ss_poll(struct ss_state *st, struct pz_msg *pkt);

/* Parsers of recorded bytes, each writing into an open SysStats message.
 * @buf need not be NUL-terminated; malformed lines are skipped. */
void ss_parse_meminfo(const struct ss_state *st, const char *buf, size_t len,
		      struct pz_msg *sys_stats);
void ss_parse_vmstat(const struct ss_state *st, const char *buf, size_t len,
		     struct pz_msg *sys_stats);
void ss_parse_stat(const struct ss_state *st, const char *buf, size_t len,
		   struct pz_msg *sys_stats);
void ss_parse_buddyinfo(const char *buf, size_t len, struct pz_msg *sys_stats);
void ss_parse_diskstats(const char *buf, size_t len, struct pz_msg *sys_stats);
/* @some, @full: the PsiResource values of this file's "some" and "full" lines. */
void ss_parse_psi(const char *buf, size_t len, uint32_t some, uint32_t full,
		  struct pz_msg *sys_stats);
void ss_parse_slabinfo(const char *buf, size_t len, struct pz_msg *sys_stats);

/**
 * ss_meminfo_key() - The /proc/meminfo key of a MeminfoCounters value.
 * Return: a static string, or NULL for an unknown value.
 */
const char *ss_meminfo_key(uint32_t id);

#endif

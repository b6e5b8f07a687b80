/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perf_config.h - PerfEventConfig (linux.perf) turned into what the
 * kernel takes: the timebase and follower perf_event_attrs, the callstack
 * mode, the process scope and the ring buffer sizes. Parsing is separate
 * from opening events so a bad config is refused before touching the
 * kernel; traced_perf's producer calls it once per data source instance.
 */
#ifndef PFC_PERF_PERF_CONFIG_H
#define PFC_PERF_PERF_CONFIG_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/perf_event_config.pb-c.h"
#include "perf/unwind/unwind.h"

/* Named limits of one config. */
#define PERF_MAX_FOLLOWERS 16u
#define PERF_MAX_SCOPE_ENTRIES 64u
#define PERF_NAME_BYTES 128u
#define PERF_FILTER_BYTES 1024u
/* Upstream's defaults. */
#define PERF_DEFAULT_FREQUENCY_HZ 10u
#define PERF_DEFAULT_RING_PAGES 256u
#define PERF_DEFAULT_READ_PERIOD_MS 100u
/* Bytes queued for unwinding when max_enqueued_footprint_kb is unset. */
#define PERF_DEFAULT_ENQUEUED_BYTES (64ull << 20)
/* Bytes of user stack each sample copies (< 64 KiB, low 8 bits clear). */
#define PERF_STACK_USER_BYTES ((1u << 16) - 256)
#define PERF_MAX_RING_PAGES (1u << 16)
/* ring_buffer_pages unset with user stacks at a known frequency: each ring
 * holds PERF_AUTO_RING_MS of samples, up to PERF_AUTO_RING_MAX_PAGES a
 * ring and PERF_AUTO_RING_TOTAL_BYTES for all rings together, never under
 * the default. */
#define PERF_AUTO_RING_MS 256u
#define PERF_AUTO_RING_MAX_PAGES 4096u
/* Rings that hold this many read periods of samples at the config's
 * frequency are read on the read period alone (see perf_config_ring_ms()). */
#define PERF_TIMER_ONLY_PERIODS 2u
#define PERF_AUTO_RING_TOTAL_BYTES (64ull << 20)

/* One event: how it was described (for PerfSampleDefaults) and its attr. */
struct perf_event_desc {
	enum { PERF_EV_COUNTER, PERF_EV_TRACEPOINT, PERF_EV_RAW } kind;
	uint32_t counter; /* PerfEvents.Counter, for PERF_EV_COUNTER */
	char name[PERF_NAME_BYTES];       /* user-given name, may be empty */
	char tp_name[PERF_NAME_BYTES];    /* "group:name" */
	char tp_filter[PERF_FILTER_BYTES];
	uint32_t type;
	uint64_t config, config1, config2;
	bool exclude_user, exclude_kernel, exclude_hv;
};

/* Which processes' samples are kept. Cmdlines are globs (fnmatch). */
struct perf_scope {
	int32_t pids[PERF_MAX_SCOPE_ENTRIES];
	size_t n_pids;
	int32_t exclude_pids[PERF_MAX_SCOPE_ENTRIES];
	size_t n_exclude_pids;
	char *cmdlines[PERF_MAX_SCOPE_ENTRIES]; /* owned */
	size_t n_cmdlines;
	char *exclude_cmdlines[PERF_MAX_SCOPE_ENTRIES]; /* owned */
	size_t n_exclude_cmdlines;
	uint32_t shard_count; /* 0: no sharding */
	uint32_t chosen_shard;
};

struct perf_config {
	struct perf_event_desc timebase;
	struct perf_event_desc followers[PERF_MAX_FOLLOWERS];
	size_t n_followers;
	uint64_t frequency; /* exactly one of frequency and period is set */
	uint64_t period;
	int clockid;            /* attr.clockid */
	uint32_t builtin_clock; /* the same clock as a BuiltinClock */
	bool kernel_frames;
	enum perf_unwind_mode unwind;
	bool has_scope; /* false: every process */
	struct perf_scope scope;
	uint32_t ring_pages;
	bool ring_pages_auto; /* ring_buffer_pages unset: see perf_config_ring_pages() */
	uint32_t read_period_ms;
	uint64_t samples_per_tick_limit;
	uint64_t max_enqueued_footprint_bytes;
	uint32_t max_daemon_memory_kb; /* 0: no guardrail */
	uint32_t stack_user_bytes;
	bool ignore_open_failure;
	uint32_t target_cpus[PERF_MAX_SCOPE_ENTRIES];
	size_t n_target_cpus; /* 0: all */
};

/**
 * perf_config_parse() - Check and translate a PerfEventConfig.
 * @pb: the config (borrowed; NULL means all defaults).
 * @tracefs: tracefs mount point for tracepoint ids (borrowed), e.g.
 *           "/sys/kernel/tracing"; NULL: perf_tracefs_find(), only if the
 *           config names a tracepoint.
 * @out: filled on success; release with perf_config_fini().
 * @err: a one-line reason on failure (@err_len bytes).
 *
 * Return: 0, -EINVAL (unknown counter or unwind mode, malformed tracepoint
 * name, ring buffer pages not a power of two, too many followers or scope
 * entries), -ENOENT (a tracepoint that does not exist), -ENOMEM.
 * Context: reads tracefs; allocates the scope's strings.
 */
int perf_config_parse(const Perfetto__Protos__PerfEventConfig *pb, const char *tracefs,
		      struct perf_config *out, char *err, size_t err_len);
void perf_config_fini(struct perf_config *c);

/**
 * perf_config_ring_pages() - Data pages of each of @n_rings rings.
 * @c: a parsed config.  @n_rings: the rings the session opens (CPUs).
 *
 * The config's ring_buffer_pages when set. Unset, upstream's 256, grown
 * when samples copy user stacks at a known frequency: the kernel reserves
 * the whole stack size per sample whatever it copies, so a 1 MiB ring holds
 * 16 samples and, at 1 kHz, wakes the reader 125 times a second. Grown to
 * hold PERF_AUTO_RING_MS of samples, a power of two, within
 * PERF_AUTO_RING_MAX_PAGES and PERF_AUTO_RING_TOTAL_BYTES / @n_rings.
 *
 * Return: pages, a power of two.
 * Context: pure.
 */
uint32_t perf_config_ring_pages(const struct perf_config *c, size_t n_rings);

/**
 * perf_config_ring_ms() - How long a ring of @pages data pages holds the
 * samples of @c at its frequency, counting each at its most (the whole
 * reserved stack, a full kernel callchain). The kernel wakes a ring's
 * reader every wakeup_watermark bytes written, read or not; rings that
 * hold PERF_TIMER_ONLY_PERIODS read periods are not waited on, and the
 * reader wakes on its period alone (10 times a second by default instead
 * of once per watermark per CPU).
 * Return: milliseconds; 0 for a period timebase (no known rate).
 * Context: pure.
 */
uint32_t perf_config_ring_ms(const struct perf_config *c, uint32_t pages);

/*
 * perf_config_set_stack_user_bytes() - traced_perf --stack-kb: the user
 * stack bytes each callstack sample copies from now on (default
 * PERF_STACK_USER_BYTES, upstream's). Rounded down to 256 bytes.
 * Return: 0, or -EINVAL outside 4 KiB .. PERF_STACK_USER_BYTES.
 */
int perf_config_set_stack_user_bytes(uint32_t bytes);

/* The leader's attr (disabled, to be enabled with an ioctl). */
void perf_config_leader_attr(const struct perf_config *c, struct perf_event_attr *out);
/* Follower @i's attr (enabled with its leader). */
void perf_config_follower_attr(const struct perf_config *c, size_t i, struct perf_event_attr *out);
/* The user registers the samples copy (x86-64: 17 of them; 0 elsewhere). */
uint64_t perf_config_regs_mask(void);

/*
 * perf_tracefs_find() - Where tracefs is mounted now: /sys/kernel/tracing,
 * else /sys/kernel/debug/tracing; mounted at the first when neither is (as
 * traced_probes does; needs root). Return: a static path.
 */
const char *perf_tracefs_find(void);

/* The tracepoint id from <tracefs>/events/<group>/<name>/id; -ENOENT. */
int perf_tracepoint_id(const char *tracefs, const char *group_and_name, uint32_t *out_id);

#endif

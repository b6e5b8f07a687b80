/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hp_config.h - a data source instance's HeapprofdConfig as heapprofd
 * uses it: which processes (pid, command line globs, all), which heaps at
 * which sampling interval, the ring's size and the client's blocking,
 * the dumps. Parsed once when the instance starts; owns copies.
 */
#ifndef PFC_HEAPPROFD_HP_CONFIG_H
#define PFC_HEAPPROFD_HP_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/profiling/heapprofd_config.pb-c.h"

#define HP_DEFAULT_INTERVAL 4096u
#define HP_CFG_MAX_TARGETS 256u

struct hp_config {
	uint64_t interval;
	char **cmdlines;
	size_t n_cmdlines;
	uint64_t *pids;
	size_t n_pids;
	bool all;
	char **heaps;       /* names to profile; empty: libc.malloc */
	uint64_t *heap_intervals;
	size_t n_heaps;
	char **exclude;
	size_t n_exclude;
	bool all_heaps;
	uint64_t shmem_bytes;
	bool block_client;
	uint32_t block_timeout_us;
	uint32_t dump_phase_ms, dump_interval_ms;
	bool dump_at_max;
	bool no_startup, no_running;
};

/* Return: 0, -EINVAL (with a reason in @err), -ENOMEM. NULL @c: defaults. */
int hp_config_parse(const Perfetto__Protos__HeapprofdConfig *c, struct hp_config *out, char *err,
		    size_t err_size);
void hp_config_fini(struct hp_config *cfg);
/* Whether the config targets process @pid with command line @argv0. */
bool hp_config_matches(const struct hp_config *cfg, uint32_t pid, const char *argv0);
/* The sampling interval of heap @name under the config, 0 if not profiled. */
uint64_t hp_config_heap_interval(const struct hp_config *cfg, const char *name);

#endif

// SPDX-License-Identifier: Apache-2.0
/*
 * hp_config.c - HeapprofdConfig, checked and copied (see hp_config.h).
 * Command lines match argv[0] or its basename, with fnmatch() globs.
 */
#include "heapprofd/hp_config.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapprofd/ring/hp_ring.h"

static char **copy_strs(char **src, size_t n)
{
	char **out = calloc(n ? n : 1, sizeof(*out));
	size_t i;

	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		out[i] = strdup(src[i] ? src[i] : "");
		if (!out[i]) {
			while (i--)
				free(out[i]);
			free(out);
			return NULL;
		}
	}
	return out;
}

static void free_strs(char **s, size_t n)
{
	size_t i;

	for (i = 0; s && i < n; i++)
		free(s[i]);
	free(s);
}

int hp_config_parse(const Perfetto__Protos__HeapprofdConfig *c, struct hp_config *out, char *err,
		    size_t err_size)
{
	struct hp_config cfg;
	size_t i;

	memset(&cfg, 0, sizeof(cfg));
	cfg.interval = HP_DEFAULT_INTERVAL;
	cfg.shmem_bytes = HP_RING_DEFAULT_DATA_BYTES;
	if (c) {
		if (c->has_sampling_interval_bytes && c->sampling_interval_bytes)
			cfg.interval = c->sampling_interval_bytes;
		if (c->n_process_cmdline + c->n_pid > HP_CFG_MAX_TARGETS) {
			snprintf(err, err_size, "more than %u process_cmdline and pid entries",
				 HP_CFG_MAX_TARGETS);
			return -EINVAL;
		}
		if (c->n_heap_sampling_intervals && c->n_heap_sampling_intervals != c->n_heaps) {
			snprintf(err, err_size,
				 "heap_sampling_intervals has %zu entries, heaps %zu: they pair up",
				 c->n_heap_sampling_intervals, c->n_heaps);
			return -EINVAL;
		}
		cfg.all = c->has_all && c->all;
		cfg.all_heaps = c->has_all_heaps && c->all_heaps;
		if (c->has_shmem_size_bytes && c->shmem_size_bytes)
			cfg.shmem_bytes = hp_ring_round_size(c->shmem_size_bytes);
		cfg.block_client = c->has_block_client && c->block_client;
		cfg.block_timeout_us = c->block_client_timeout_us;
		cfg.dump_at_max = c->has_dump_at_max && c->dump_at_max;
		cfg.no_startup = c->has_no_startup && c->no_startup;
		cfg.no_running = c->has_no_running && c->no_running;
		if (c->continuous_dump_config) {
			cfg.dump_phase_ms = c->continuous_dump_config->dump_phase_ms;
			cfg.dump_interval_ms = c->continuous_dump_config->dump_interval_ms;
		}
		cfg.cmdlines = copy_strs(c->process_cmdline, c->n_process_cmdline);
		cfg.n_cmdlines = c->n_process_cmdline;
		cfg.heaps = copy_strs(c->heaps, c->n_heaps);
		cfg.n_heaps = c->n_heaps;
		cfg.exclude = copy_strs(c->exclude_heaps, c->n_exclude_heaps);
		cfg.n_exclude = c->n_exclude_heaps;
		cfg.pids = calloc(c->n_pid ? c->n_pid : 1, sizeof(*cfg.pids));
		cfg.heap_intervals = calloc(c->n_heaps ? c->n_heaps : 1, sizeof(uint64_t));
		if (!cfg.cmdlines || !cfg.heaps || !cfg.exclude || !cfg.pids || !cfg.heap_intervals) {
			hp_config_fini(&cfg);
			return -ENOMEM;
		}
		for (i = 0; i < c->n_pid; i++)
			cfg.pids[i] = c->pid[i];
		cfg.n_pids = c->n_pid;
		for (i = 0; i < c->n_heaps; i++)
			cfg.heap_intervals[i] = c->n_heap_sampling_intervals &&
							c->heap_sampling_intervals[i]
						? c->heap_sampling_intervals[i]
						: cfg.interval;
	}
	*out = cfg;
	return 0;
}

void hp_config_fini(struct hp_config *cfg)
{
	free_strs(cfg->cmdlines, cfg->n_cmdlines);
	free_strs(cfg->heaps, cfg->n_heaps);
	free_strs(cfg->exclude, cfg->n_exclude);
	free(cfg->pids);
	free(cfg->heap_intervals);
	memset(cfg, 0, sizeof(*cfg));
}

bool hp_config_matches(const struct hp_config *cfg, uint32_t pid, const char *argv0)
{
	const char *base = argv0 ? strrchr(argv0, '/') : NULL;
	size_t i;

	if (cfg->all)
		return true;
	for (i = 0; i < cfg->n_pids; i++) {
		if (cfg->pids[i] == pid)
			return true;
	}
	if (!argv0 || !argv0[0])
		return false;
	base = base ? base + 1 : argv0;
	for (i = 0; i < cfg->n_cmdlines; i++) {
		if (fnmatch(cfg->cmdlines[i], argv0, 0) == 0 || fnmatch(cfg->cmdlines[i], base, 0) == 0)
			return true;
	}
	return false;
}

uint64_t hp_config_heap_interval(const struct hp_config *cfg, const char *name)
{
	size_t i;

	for (i = 0; i < cfg->n_exclude; i++) {
		if (strcmp(cfg->exclude[i], name) == 0)
			return 0;
	}
	for (i = 0; i < cfg->n_heaps; i++) {
		if (strcmp(cfg->heaps[i], name) == 0)
			return cfg->heap_intervals[i];
	}
	if (cfg->all_heaps)
		return cfg->interval;
	if (cfg->n_heaps == 0 && strcmp(name, "libc.malloc") == 0)
		return cfg->interval;
	return 0;
}

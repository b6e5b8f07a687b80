/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perf_scope.h - does a sampled process belong to a session's callstack
 * scope (target/exclude pids and cmdlines, process shards)? Decided once
 * per pid by the data source, which reads the cmdline from /proc.
 */
#ifndef PFC_PERF_PERF_SCOPE_H
#define PFC_PERF_PERF_SCOPE_H

#include <stdbool.h>
#include <stdint.h>

#include "perf/perf_config.h"

/**
 * perf_scope_accepts() - The scope decision for one process.
 * @argv0: the process's first cmdline argument ("" for kernel threads).
 * Cmdline patterns are fnmatch globs, matched against @argv0 and, for a
 * pattern without '/', also against its base name. Excludes win; with
 * targets, only targets are kept.
 */
bool perf_scope_accepts(const struct perf_scope *s, int32_t pid, const char *argv0);

/* argv0 of @pid from /proc into @out (@cap bytes); "" if unreadable. */
void perf_read_argv0(int32_t pid, char *out, size_t cap);

#endif

// SPDX-License-Identifier: Apache-2.0
/*
 * perf_scope.c - the process scope of a linux.perf session (see
 * perf_scope.h).
 */
#include "perf/perf_scope.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static bool cmdline_matches(const char *pattern, const char *argv0)
{
	const char *base = strrchr(argv0, '/');

	if (!argv0[0])
		return false;
	if (fnmatch(pattern, argv0, 0) == 0)
		return true;
	return !strchr(pattern, '/') && base && fnmatch(pattern, base + 1, 0) == 0;
}

bool perf_scope_accepts(const struct perf_scope *s, int32_t pid, const char *argv0)
{
	size_t i;
	bool has_targets = s->n_pids || s->n_cmdlines, targeted = false;

	for (i = 0; i < s->n_exclude_pids; i++) {
		if (s->exclude_pids[i] == pid)
			return false;
	}
	for (i = 0; i < s->n_exclude_cmdlines; i++) {
		if (cmdline_matches(s->exclude_cmdlines[i], argv0))
			return false;
	}
	for (i = 0; i < s->n_pids && !targeted; i++)
		targeted = s->pids[i] == pid;
	for (i = 0; i < s->n_cmdlines && !targeted; i++)
		targeted = cmdline_matches(s->cmdlines[i], argv0);
	if (has_targets && !targeted)
		return false;
	if (s->shard_count && (uint32_t)pid % s->shard_count != s->chosen_shard)
		return false;
	return true;
}

void perf_read_argv0(int32_t pid, char *out, size_t cap)
{
	char path[64];
	ssize_t n;
	int fd;

	out[0] = '\0';
	if (cap < 2)
		return;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, out, cap - 1);
	close(fd);
	out[n > 0 ? n : 0] = '\0';
}

// SPDX-License-Identifier: Apache-2.0
/*
 * proc_stats_prune.c - keeps process_stats' per-pid sets from growing with
 * every process a long recording meets: once the seen-set and the
 * kernel-thread set hold PS_PRUNE_MIN_ENTRIES pids, and again each time
 * they double, the pids that no longer exist in /proc are dropped. A
 * dropped pid that comes back (reused) is looked up anew, so its new name
 * reaches the trace. Called by the probes glue after lookups and polls.
 */
#include "probes/proc_stats.h"

#include <stdio.h>
#include <unistd.h>

/* Drops the entries of @m whose pid (the key) has no /proc directory. */
static size_t prune_dead(const struct ps_state *st, struct hmap *m)
{
	struct hmap_iter it;
	char path[PS_MAX_ROOT_BYTES + 32];
	uint64_t key;
	size_t n = 0;

	hmap_iter_init(&it, m);
	while (hmap_iter_next(&it, &key, NULL)) {
		int len = snprintf(path, sizeof(path), "%s/proc/%d", st->root, (int)(int32_t)key);

		/* Threads are not listed in /proc, but their directories exist. */
		if (len > 0 && (size_t)len < sizeof(path) && access(path, F_OK) < 0) {
			hmap_iter_del(&it);
			n++;
		}
	}
	return n;
}

size_t ps_maybe_prune(struct ps_state *st)
{
	size_t n = hmap_len(&st->seen) + hmap_len(&st->skip_mem), dropped;

	if (n < PS_PRUNE_MIN_ENTRIES || n < st->prune_at)
		return 0;
	dropped = prune_dead(st, &st->seen) + prune_dead(st, &st->skip_mem);
	/* Amortized: the next sweep waits until the live set doubles. */
	st->prune_at = 2 * (n - dropped);
	return dropped;
}

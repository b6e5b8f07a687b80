// SPDX-License-Identifier: Apache-2.0
/*
 * svc_clocks.c - the clock data a session carries into its trace: the
 * snapshot taken at start, later snapshots (kept in a small ring, a new one
 * only when a clock drifted from BOOTTIME, as Perfetto does) and the
 * clock-sync rounds of remote machines. svc_read.c emits them in the order
 * they were taken, so a reader never sees a clock go backwards.
 */
#include "traced/svc_int.h"

#include <stdlib.h>
#include <string.h>

#include "base/log.h"

void svc_clocks_snapshot_initial(struct svc_session *s)
{
	clock_snapshot_capture(&s->initial_clocks);
	s->has_initial_clocks = true;
}

/* True if some clock moved more than SVC_CLOCK_DRIFT_NS against BOOTTIME. */
static bool drifted(const struct clock_snapshot *old, const struct clock_snapshot *now)
{
	int64_t boot = (int64_t)(now->clocks[0].ts_ns - old->clocks[0].ts_ns);
	size_t i;

	for (i = 1; i < CLOCK_SNAPSHOT_CLOCKS; i++) {
		int64_t d = (int64_t)(now->clocks[i].ts_ns - old->clocks[i].ts_ns);

		if (llabs(boot - d) >= (int64_t)SVC_CLOCK_DRIFT_NS)
			return true;
	}
	return false;
}

void svc_clocks_maybe_snapshot(struct svc_session *s)
{
	struct clock_snapshot now;

	clock_snapshot_capture(&now);
	if (s->n_clock_ring > 0 && !drifted(&s->clock_ring[s->n_clock_ring - 1], &now))
		return;
	if (s->n_clock_ring == SVC_CLOCK_RING) {
		memmove(s->clock_ring, s->clock_ring + 1, (SVC_CLOCK_RING - 1) * sizeof(now));
		s->n_clock_ring--;
	}
	s->clock_ring[s->n_clock_ring++] = now;
}

/* Drops every other round of the older half: the span stays covered. */
static void thin_rounds(struct svc_session *s)
{
	size_t half = s->n_rounds / 2, i, w = 0;

	for (i = 0; i < half; i++) {
		if (i % 2 == 0)
			s->rounds[w++] = s->rounds[i];
	}
	memmove(s->rounds + w, s->rounds + half, (s->n_rounds - half) * sizeof(*s->rounds));
	s->rounds_thinned += half - w;
	s->n_rounds = w + (s->n_rounds - half);
	if (s->rounds_thinned == half - w)
		LOG_I("session %llu: keeping every other clock-sync round of its older half "
		      "until the next read", (unsigned long long)s->id);
}

void svc_session_push_round(struct svc_session *s, const struct svc_sync_round *r)
{
	const Perfetto__Protos__TraceConfig__BuiltinDataSource *b = s->config->builtin_data_sources;

	if (b && b->has_disable_clock_snapshotting && b->disable_clock_snapshotting)
		return;
	if (s->n_rounds == SVC_MAX_PENDING_ROUNDS)
		thin_rounds(s);
	if (s->n_rounds == s->cap_rounds) {
		size_t cap = s->cap_rounds ? 2 * s->cap_rounds : 8;
		struct svc_sync_round *n = realloc(s->rounds, cap * sizeof(*n));

		if (!n) {
			LOG_W("session %llu: out of memory, dropping a clock-sync round",
			      (unsigned long long)s->id);
			return;
		}
		s->rounds = n;
		s->cap_rounds = cap;
	}
	s->rounds[s->n_rounds++] = *r;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * svc_triggers.c - ActivateTriggers against the sessions' trigger_config:
 * matching (name, producer_name_regex), Perfetto's rate limits
 * (skip_probability, max_per_24_h counted per trigger name across the
 * service) and the three modes: START_TRACING, STOP_TRACING, and
 * CLONE_SNAPSHOT, which tells the session's consumer (ObservableEvents
 * clone_trigger_hit) stop_delay_ms after the trigger so it clones the session.
 */
#include "traced/svc_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "base/clock.h"
#include "base/log.h"

#define MODE(x) PERFETTO__PROTOS__TRACE_CONFIG__TRIGGER_CONFIG__TRIGGER_MODE__##x
#define ONE_DAY_NS (24ull * 3600 * 1000 * 1000 * 1000)

struct clone_timer_ctx {
	struct svc *svc;
	uint64_t session_id;
	size_t slot;
};

void svc_trigger_info_fini(struct svc_trigger_info *t)
{
	free(t->name);
	free(t->producer_name);
	memset(t, 0, sizeof(*t));
}

static int trigger_mode(const struct svc_session *s)
{
	const Perfetto__Protos__TraceConfig__TriggerConfig *tc = s->config->trigger_config;

	return tc && tc->has_trigger_mode ? (int)tc->trigger_mode : 0;
}

bool svc_session_reads_nothing(const struct svc_session *s)
{
	return !s->is_clone && trigger_mode(s) == MODE(CLONE_SNAPSHOT);
}

static uint64_t name_hash(const char *name)
{
	uint64_t h = 14695981039346656037ull;

	for (; *name; name++)
		h = (h ^ (uint8_t)*name) * 1099511628211ull;
	return h;
}

/* Forgets triggers older than a day; returns how many of @hash remain. */
static size_t purge_and_count(struct svc *svc, uint64_t now_ns, uint64_t hash)
{
	size_t i, drop = 0, count = 0;

	for (i = 0; i < svc->n_trigger_history; i++) {
		if (svc->trigger_history[i].boot_time_ns + ONE_DAY_NS < now_ns)
			drop++;
		else if (svc->trigger_history[i].name_hash == hash)
			count++;
	}
	if (drop) {
		memmove(svc->trigger_history, svc->trigger_history + drop,
			(svc->n_trigger_history - drop) * sizeof(*svc->trigger_history));
		svc->n_trigger_history -= drop;
	}
	return count;
}

static void remember(struct svc *svc, uint64_t now_ns, uint64_t hash)
{
	if (!svc->trigger_history) {
		svc->trigger_history = calloc(SVC_MAX_TRIGGER_HISTORY, sizeof(*svc->trigger_history));
		if (!svc->trigger_history)
			return;
	}
	if (svc->n_trigger_history == SVC_MAX_TRIGGER_HISTORY) {
		memmove(svc->trigger_history, svc->trigger_history + 1,
			(SVC_MAX_TRIGGER_HISTORY - 1) * sizeof(*svc->trigger_history));
		svc->n_trigger_history--;
	}
	svc->trigger_history[svc->n_trigger_history].boot_time_ns = now_ns;
	svc->trigger_history[svc->n_trigger_history].name_hash = hash;
	svc->n_trigger_history++;
}

/* A uniform value in [0, 1). */
static double random_unit(void)
{
	uint64_t r;

	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = clock_monotonic_ns() * 6364136223846793005ull;
	return (double)(r >> 11) / (double)(1ull << 53);
}

static bool trigger_matches(const Perfetto__Protos__TraceConfig__TriggerConfig__Trigger *t,
			    const char *name, const struct svc_producer *p)
{
	if (!t->name || strcmp(t->name, name) != 0)
		return false;
	return !t->producer_name_regex || !*t->producer_name_regex ||
	       svc_regex_full_match(t->producer_name_regex, p->name);
}

static void record_trigger(struct svc_session *s, const char *name, const struct svc_producer *p,
			   uint64_t now_ns)
{
	size_t k = s->n_fired_triggers;

	if (k >= SVC_MAX_TRIGGERS_PER_SESSION)
		return;
	s->fired_triggers[k] = strdup(name);
	s->fired_trigger_producers[k] = strdup(p->name);
	s->fired_trigger_uids[k] = (uint32_t)p->uid;
	s->fired_trigger_ts[k] = now_ns;
	if (s->fired_triggers[k] && s->fired_trigger_producers[k]) {
		s->n_fired_triggers++;
	} else {
		free(s->fired_triggers[k]);
		free(s->fired_trigger_producers[k]);
	}
}

static void on_clone_delay(void *user)
{
	struct clone_timer_ctx *c = user;
	struct svc_session *s = svc_session_by_id(c->svc, c->session_id);
	struct svc_pending_clone_trigger *pc;

	if (!s)
		return;
	pc = &s->pending_clones[c->slot];
	pc->timer_id = 0;
	svc_notify_clone_trigger(c->svc, s, &pc->info);
	svc_trigger_info_fini(&pc->info);
	s->pending_clone_ctx[c->slot] = NULL;
	free(c);
}

static void clone_snapshot(struct svc *svc, struct svc_session *s, const char *name,
			   const struct svc_producer *p, uint64_t delay_ms, uint64_t now_ns)
{
	struct svc_trigger_info info = {
		.name = (char *)name,
		.producer_name = p->name,
		.producer_uid = (uint32_t)p->uid,
		.boot_time_ns = now_ns,
		.delay_ms = delay_ms,
	};
	struct svc_pending_clone_trigger *pc;
	struct clone_timer_ctx *c;
	size_t i;

	LOG_I("session %llu: trigger '%s' asks for a snapshot in %llu ms",
	      (unsigned long long)s->id, name, (unsigned long long)delay_ms);
	if (!delay_ms) {
		svc_notify_clone_trigger(svc, s, &info);
		return;
	}
	for (i = 0; i < SVC_MAX_PENDING_CLONE_TRIGGERS && s->pending_clone_ctx[i]; i++)
		;
	if (i == SVC_MAX_PENDING_CLONE_TRIGGERS) {
		LOG_W("session %llu: too many snapshots waiting, ignoring trigger '%s'",
		      (unsigned long long)s->id, name);
		return;
	}
	c = calloc(1, sizeof(*c));
	pc = &s->pending_clones[i];
	pc->info = info;
	pc->info.name = strdup(name);
	pc->info.producer_name = strdup(p->name);
	if (!c || !pc->info.name || !pc->info.producer_name ||
	    evloop_add_timer(svc->loop, delay_ms, 0, on_clone_delay, c, &pc->timer_id) < 0) {
		free(c);
		svc_trigger_info_fini(&pc->info);
		pc->timer_id = 0;
		return;
	}
	c->svc = svc;
	c->session_id = s->id;
	c->slot = i;
	s->pending_clone_ctx[i] = c;
}

void svc_triggers_session_gone(struct svc *svc, struct svc_session *s)
{
	size_t i;

	for (i = 0; i < SVC_MAX_PENDING_CLONE_TRIGGERS; i++) {
		if (!s->pending_clone_ctx[i])
			continue;
		if (s->pending_clones[i].timer_id)
			evloop_del(svc->loop, s->pending_clones[i].timer_id);
		svc_trigger_info_fini(&s->pending_clones[i].info);
		free(s->pending_clone_ctx[i]);
		s->pending_clone_ctx[i] = NULL;
	}
	svc_trigger_info_fini(&s->clone_trigger);
}

/* Returns true if the trigger matched (passed the limits). */
static bool on_trigger(struct svc *svc, struct svc_session *s,
		       const Perfetto__Protos__TraceConfig__TriggerConfig__Trigger *t,
		       const char *name, const struct svc_producer *p, size_t count_in_window,
		       uint64_t now_ns)
{
	uint32_t delay = t->has_stop_delay_ms ? t->stop_delay_ms : 0;

	if (t->has_skip_probability && random_unit() < t->skip_probability) {
		LOG_I("session %llu: trigger '%s' skipped (skip_probability)",
		      (unsigned long long)s->id, name);
		return false;
	}
	if (t->has_max_per_24_h && t->max_per_24_h && count_in_window >= t->max_per_24_h) {
		LOG_I("session %llu: trigger '%s' ignored (max_per_24_h %u reached)",
		      (unsigned long long)s->id, name, t->max_per_24_h);
		return false;
	}
	switch (trigger_mode(s)) {
	case MODE(START_TRACING):
		if (s->state != SESSION_CONFIGURED || s->trigger_fired)
			return true;
		s->trigger_fired = true;
		record_trigger(s, name, p, now_ns);
		if (s->trigger_timer) {
			evloop_del(svc->loop, s->trigger_timer);
			s->trigger_timer = 0;
		}
		LOG_I("session %llu: trigger '%s' starts tracing", (unsigned long long)s->id, name);
		svc_session_start(svc, s);
		/* Runs for stop_delay_ms after the trigger (duration_ms is not used). */
		if (s->duration_timer) {
			evloop_del(svc->loop, s->duration_timer);
			s->duration_timer = 0;
		}
		s->stop_timer = svc_session_add_timer(svc, s, delay, 0, svc_session_on_stop_delay);
		break;
	case MODE(STOP_TRACING):
		if (s->state != SESSION_STARTED || s->trigger_fired)
			return true;
		s->trigger_fired = true;
		record_trigger(s, name, p, now_ns);
		if (s->trigger_timer) {
			evloop_del(svc->loop, s->trigger_timer);
			s->trigger_timer = 0;
		}
		LOG_I("session %llu: trigger '%s' stops tracing in %u ms", (unsigned long long)s->id,
		      name, delay);
		s->stop_timer = svc_session_add_timer(svc, s, delay, 0, svc_session_on_stop_delay);
		break;
	case MODE(CLONE_SNAPSHOT):
		record_trigger(s, name, p, now_ns);
		if (s->state == SESSION_STARTED)
			clone_snapshot(svc, s, name, p, delay, now_ns);
		break;
	default:
		record_trigger(s, name, p, now_ns);
		break;
	}
	return true;
}

void svc_session_on_triggers(struct svc *svc, struct svc_producer *p, char **names, size_t n)
{
	struct svc_session *s, *next;
	uint64_t now_ns = clock_boottime_ns();
	size_t i, k, count;
	uint64_t hash;
	bool matched;

	for (i = 0; i < n; i++) {
		if (!names[i])
			continue;
		hash = name_hash(names[i]);
		count = purge_and_count(svc, now_ns, hash);
		matched = false;
		for (s = svc->sessions; s; s = next) {
			const Perfetto__Protos__TraceConfig__TriggerConfig *tc = s->config->trigger_config;

			next = s->next;
			if (!tc || !tc->has_trigger_mode || !tc->trigger_mode || s->is_clone)
				continue;
			for (k = 0; k < tc->n_triggers; k++) {
				if (trigger_matches(tc->triggers[k], names[i], p)) {
					if (on_trigger(svc, s, tc->triggers[k], names[i], p, count,
						       now_ns))
						matched = true;
					break;
				}
			}
		}
		if (matched)
			remember(svc, now_ns, hash);
	}
}

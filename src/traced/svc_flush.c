// SPDX-License-Identifier: Apache-2.0
/*
 * svc_flush.c - flushes: the service asks every producer of a session to
 * commit what it has (a Flush command naming its instances), and completes
 * when each acked with a CommitData carrying the request id, or when the
 * timeout fires. Used for periodic flushes, consumer Flush, the final
 * flush before a stop, and before cloning. Also the periodic
 * ClearIncrementalState, sent to the same producers the same way.
 */
#include "traced/svc_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/evloop.h"
#include "base/log.h"
#include "ipc/producer_port.pb-c.h"

#define FLUSH_WARN_PERIOD_MS 60000u

struct flush_timer_ctx {
	struct svc *svc;
	uint64_t request_id;
};

static struct svc_flush *find(struct svc *svc, uint64_t request_id)
{
	size_t i;

	for (i = 0; i < SVC_MAX_PENDING_FLUSHES; i++) {
		if (svc->flushes[i].in_use && svc->flushes[i].request_id == request_id)
			return &svc->flushes[i];
	}
	return NULL;
}

static void complete(struct svc *svc, struct svc_flush *f, bool ok)
{
	void (*done)(struct svc *, uint64_t, bool, void *) = f->done;
	struct svc_session *s = svc_session_by_id(svc, f->session_id);
	uint64_t sid = f->session_id;
	void *user = f->user;

	if (f->timer_id)
		evloop_del(svc->loop, f->timer_id);
	free(f->timer_ctx);
	free(f->pending_producers);
	memset(f, 0, sizeof(*f));
	if (s) {
		/* Whether or not every producer answered, keep what they wrote. */
		svc_scrape_session(svc, s);
		if (ok)
			s->flushes_succeeded++;
		else
			s->flushes_failed++;
	}
	if (done)
		done(svc, sid, ok, user);
}

/*
 * A producer that hangs fails every periodic flush of a long session: the
 * first timeout is logged with the first silent producer's name, later
 * ones at most once per FLUSH_WARN_PERIOD_MS with how many were not
 * logged (TraceStats.flushes_failed counts them all).
 */
static void warn_timeout(struct svc *svc, const struct svc_flush *f)
{
	struct svc_session *s = svc_session_by_id(svc, f->session_id);
	const struct svc_producer *p =
		f->n_pending ? svc_producer_by_id(svc, f->pending_producers[0]) : NULL;
	uint64_t now_ms = clock_monotonic_ns() / 1000000;
	const char *name = p && p->name ? p->name : "?";

	if (s && s->flush_warn_ms && now_ms - s->flush_warn_ms < FLUSH_WARN_PERIOD_MS) {
		s->flush_timeouts_quiet++;
		return;
	}
	if (s && s->flush_timeouts_quiet)
		LOG_W("session %llu: flush %llu timed out with %zu producers not answering "
		      "(first: %s); %llu more timed out in the last %u s",
		      (unsigned long long)s->id, (unsigned long long)f->request_id, f->n_pending,
		      name, (unsigned long long)s->flush_timeouts_quiet,
		      (unsigned)((now_ms - s->flush_warn_ms) / 1000));
	else
		LOG_W("flush %llu timed out with %zu producers not answering (first: %s)",
		      (unsigned long long)f->request_id, f->n_pending, name);
	if (s) {
		s->flush_warn_ms = now_ms;
		s->flush_timeouts_quiet = 0;
	}
}

static void on_timeout(void *user)
{
	struct flush_timer_ctx *t = user;
	struct svc_flush *f = find(t->svc, t->request_id);

	if (!f)
		return;
	warn_timeout(t->svc, f);
	f->timer_id = 0;
	complete(t->svc, f, false);
}

/* The ids of @p's instances in @s that are not stopped, into *@out_ids
 * (malloc'd, the caller frees). Return: how many (> 0), -ENOENT, -ENOMEM. */
static int live_instances(const struct svc_producer *p, const struct svc_session *s,
			  uint64_t **out_ids)
{
	uint64_t *ids;
	size_t i, n = 0;

	ids = malloc(s->n_instances * sizeof(*ids) + 1);
	if (!ids)
		return -ENOMEM;
	for (i = 0; i < s->n_instances; i++) {
		if (s->instances[i].producer_id == p->id && s->instances[i].state != DS_STOPPED)
			ids[n++] = s->instances[i].instance_id;
	}
	if (n == 0) {
		free(ids);
		return -ENOENT;
	}
	*out_ids = ids;
	return (int)n;
}

static int send_flush(struct svc *svc, struct svc_producer *p, const struct svc_session *s,
		      uint64_t request_id, uint64_t flags)
{
	Perfetto__Protos__GetAsyncCommandResponse cmd;
	Perfetto__Protos__GetAsyncCommandResponse__Flush fl;
	uint64_t *ids = NULL;
	int n, rc;

	n = live_instances(p, s, &ids);
	if (n < 0)
		return n;
	perfetto__protos__get_async_command_response__init(&cmd);
	perfetto__protos__get_async_command_response__flush__init(&fl);
	fl.n_data_source_ids = (size_t)n;
	fl.data_source_ids = ids;
	fl.has_request_id = 1;
	fl.request_id = request_id;
	fl.has_flags = 1;
	fl.flags = flags;
	cmd.cmd_case = PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_FLUSH;
	cmd.flush = &fl;
	rc = svc_send_async(svc, p, &cmd.base, -1);
	free(ids);
	return rc;
}

void svc_clear_incremental_state(struct svc *svc, const struct svc_session *s)
{
	Perfetto__Protos__GetAsyncCommandResponse cmd;
	Perfetto__Protos__GetAsyncCommandResponse__ClearIncrementalState cl;
	struct svc_producer *p;
	uint64_t *ids = NULL;
	int n;

	for (p = svc->producers; p; p = p->next) {
		n = live_instances(p, s, &ids);
		if (n < 0)
			continue;
		perfetto__protos__get_async_command_response__init(&cmd);
		perfetto__protos__get_async_command_response__clear_incremental_state__init(&cl);
		cl.n_data_source_ids = (size_t)n;
		cl.data_source_ids = ids;
		cmd.cmd_case = PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_CLEAR_INCREMENTAL_STATE;
		cmd.clear_incremental_state = &cl;
		if (svc_send_async(svc, p, &cmd.base, -1) < 0)
			LOG_D("ClearIncrementalState to producer %u not sent", p->id);
		free(ids);
		ids = NULL;
	}
}

int svc_flush_start(struct svc *svc, struct svc_session *s, uint32_t timeout_ms, uint64_t flags,
		    void (*done)(struct svc *, uint64_t, bool, void *), void *user)
{
	struct flush_timer_ctx *t;
	struct svc_producer *p;
	struct svc_flush *f = NULL;
	size_t i;

	for (i = 0; i < SVC_MAX_PENDING_FLUSHES; i++) {
		if (!svc->flushes[i].in_use) {
			f = &svc->flushes[i];
			break;
		}
	}
	if (!f)
		return -EBUSY;
	memset(f, 0, sizeof(*f));
	f->pending_producers = calloc(svc->n_producers + 1, sizeof(uint32_t));
	t = calloc(1, sizeof(*t));
	if (!f->pending_producers || !t) {
		free(f->pending_producers);
		free(t);
		f->pending_producers = NULL;
		return -ENOMEM;
	}
	f->in_use = true;
	f->request_id = svc->next_flush_id++;
	f->session_id = s->id;
	f->done = done;
	f->user = user;
	f->timer_ctx = t;
	s->flushes_requested++;
	for (p = svc->producers; p; p = p->next) {
		if (send_flush(svc, p, s, f->request_id, flags) == 0)
			f->pending_producers[f->n_pending++] = p->id;
	}
	if (f->n_pending == 0) {
		complete(svc, f, true);
		return 0;
	}
	t->svc = svc;
	t->request_id = f->request_id;
	if (evloop_add_timer(svc->loop, timeout_ms ? timeout_ms : 1, 0, on_timeout, t,
			     &f->timer_id) < 0) {
		complete(svc, f, false);
		return 0;
	}
	return 0;
}

/* Removes @producer_id from the pending set of @f; completes it when empty. */
static void drop_pending(struct svc *svc, struct svc_flush *f, uint32_t producer_id)
{
	size_t i;

	for (i = 0; i < f->n_pending; i++) {
		if (f->pending_producers[i] == producer_id) {
			f->pending_producers[i] = f->pending_producers[--f->n_pending];
			break;
		}
	}
	if (f->n_pending == 0)
		complete(svc, f, true);
}

void svc_flush_on_ack(struct svc *svc, uint32_t producer_id, uint64_t request_id)
{
	size_t i;

	/* An ack also covers every older flush that producer was asked for. */
	for (i = 0; i < SVC_MAX_PENDING_FLUSHES; i++) {
		struct svc_flush *f = &svc->flushes[i];

		if (f->in_use && f->request_id <= request_id)
			drop_pending(svc, f, producer_id);
	}
}

void svc_flush_on_producer_gone(struct svc *svc, uint32_t producer_id)
{
	size_t i;

	for (i = 0; i < SVC_MAX_PENDING_FLUSHES; i++) {
		if (svc->flushes[i].in_use)
			drop_pending(svc, &svc->flushes[i], producer_id);
	}
}

void svc_flush_on_session_gone(struct svc *svc, uint64_t session_id)
{
	size_t i;

	for (i = 0; i < SVC_MAX_PENDING_FLUSHES; i++) {
		struct svc_flush *f = &svc->flushes[i];

		if (f->in_use && f->session_id == session_id) {
			/* Nobody is left to tell. */
			f->done = NULL;
			complete(svc, f, false);
		}
	}
}

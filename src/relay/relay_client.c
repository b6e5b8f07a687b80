// SPDX-License-Identifier: Apache-2.0
/*
 * relay_client.c - the relay's own connection to the host's traced
 * (Perfetto's RelayClient): SetPeerIdentity with the relay's pid and euid,
 * Bind("RelayPort"), InitRelay with this machine's SystemInfo, then
 * SyncClock rounds (PING, UPDATE on its reply, a pause, again) so the host
 * can relate this machine's clocks to its own. Any failure closes the
 * connection and retries with exponential backoff. One per relay.
 */
#include "relay/relay_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/compiler.h"
#include "base/evloop.h"
#include "base/log.h"

struct relay_client {
	struct evloop *loop;
	const char *remote_name;
	const struct relay_identity *identity;
	uint32_t retry_initial_ms;
	uint32_t retry_max_ms;
	struct ipc_client *ipc;
	struct ipc_binding *binding;
	uint64_t timer; /* the next attempt, or the next round */
	bool has_timer;
	bool has_warned_unreachable; /* since RelayPort was last bound */
	bool has_warned_no_port;
	uint32_t quick_rounds; /* rounds in a row the host wanted no real pause */
	struct relay_client_stats stats;
};

static void start_connect(struct relay_client *c);

uint32_t relay_retry_next_ms(uint32_t cur_ms, uint32_t max_ms)
{
	uint64_t next = (uint64_t)cur_ms * 2;

	return next > max_ms ? max_ms : (uint32_t)next;
}

uint32_t relay_sync_delay_ms(const Perfetto__Protos__SyncClockResponse *resp,
			     uint32_t *quick_rounds)
{
	uint32_t d;

	if (!resp || !resp->has_next_sync_delay_ms)
		d = RELAY_SYNC_DEFAULT_MS;
	else if (resp->next_sync_delay_ms > RELAY_SYNC_MAX_MS)
		d = RELAY_SYNC_MAX_MS;
	else
		d = resp->next_sync_delay_ms;
	if (d >= RELAY_SYNC_MIN_MS) {
		*quick_rounds = 0;
		return d;
	}
	if (*quick_rounds >= RELAY_SYNC_MAX_QUICK) {
		*quick_rounds = 0;
		return RELAY_SYNC_MIN_MS;
	}
	(*quick_rounds)++;
	return d;
}

static void cancel_timer(struct relay_client *c)
{
	if (c->has_timer)
		evloop_del(c->loop, c->timer);
	c->has_timer = false;
}

static void on_retry_timer(void *user)
{
	struct relay_client *c = user;

	c->has_timer = false;
	start_connect(c);
}

/*
 * Drops the connection and schedules the next attempt. @why is logged
 * (NULL: the caller already said why). The wait is the current delay; the
 * one after it doubles, until a connection binds RelayPort again.
 */
static void fail(struct relay_client *c, int err, const char *why)
{
	bool was_bound = c->stats.state == RELAY_CLIENT_PING ||
			 c->stats.state == RELAY_CLIENT_UPDATE || c->stats.state == RELAY_CLIENT_IDLE;
	uint32_t wait_ms = c->stats.retry_delay_ms;

	ipc_client_destroy(c->ipc);
	c->ipc = NULL;
	c->binding = NULL;
	cancel_timer(c);
	c->stats.state = RELAY_CLIENT_WAITING;
	if (why && was_bound) {
		LOG_W("lost the control connection to the host's traced at %s (%s: %s); "
		      "reconnecting in %u ms", c->remote_name, why, strerror(-err), wait_ms);
	} else if (why && !c->has_warned_unreachable) {
		c->has_warned_unreachable = true;
		LOG_W("cannot set up the control connection to the host's traced at %s (%s: %s); "
		      "retrying in %u ms, then less often (up to every %u ms)", c->remote_name,
		      why, strerror(-err), wait_ms, c->retry_max_ms);
	} else if (why) {
		LOG_D("traced_relay: control connection to %s failed (%s: %s); retrying in %u ms",
		      c->remote_name, why, strerror(-err), wait_ms);
	}
	c->has_timer = evloop_add_timer(c->loop, wait_ms, 0, on_retry_timer, c, &c->timer) == 0;
	if (!c->has_timer)
		LOG_E("cannot schedule the reconnection to %s; clock sync stops", c->remote_name);
	c->stats.retry_delay_ms = relay_retry_next_ms(c->stats.retry_delay_ms, c->retry_max_ms);
}

static void on_sync_reply(const struct ipc_reply *reply, void *user);

/* The clocks are read last, right before the request is queued, so the
 * host's arrival time is as close to them as the network allows. */
static int send_sync(struct relay_client *c, Perfetto__Protos__SyncClockRequest__Phase phase)
{
	Perfetto__Protos__SyncClockRequest req = PERFETTO__PROTOS__SYNC_CLOCK_REQUEST__INIT;
	Perfetto__Protos__SyncClockRequest__Clock clocks[CLOCK_SNAPSHOT_CLOCKS];
	Perfetto__Protos__SyncClockRequest__Clock *ptrs[CLOCK_SNAPSHOT_CLOCKS];
	struct clock_snapshot cs;
	size_t i;

	req.has_phase = true;
	req.phase = phase;
	req.n_clocks = CLOCK_SNAPSHOT_CLOCKS;
	req.clocks = ptrs;
	/* Perfetto's six POSIX clocks, in its order (base/clock.h). */
	clock_snapshot_capture(&cs);
	for (i = 0; i < CLOCK_SNAPSHOT_CLOCKS; i++) {
		perfetto__protos__sync_clock_request__clock__init(&clocks[i]);
		clocks[i].has_clock_id = true;
		clocks[i].clock_id = cs.clocks[i].id;
		clocks[i].has_timestamp = true;
		clocks[i].timestamp = cs.clocks[i].ts_ns;
		ptrs[i] = &clocks[i];
	}
	c->stats.state = phase == PERFETTO__PROTOS__SYNC_CLOCK_REQUEST__PHASE__PING
				 ? RELAY_CLIENT_PING
				 : RELAY_CLIENT_UPDATE;
	return ipc_client_invoke(c->ipc, c->binding, "SyncClock", &req.base, -1, on_sync_reply, c,
				 false);
}

static void on_round_timer(void *user)
{
	struct relay_client *c = user;
	int rc;

	c->has_timer = false;
	rc = send_sync(c, PERFETTO__PROTOS__SYNC_CLOCK_REQUEST__PHASE__PING);
	if (rc < 0)
		fail(c, rc, "SyncClock");
}

/* A failed reply on a connection that ended is followed by on_disconnected,
 * which knows why: only a live host's refusal is handled here. */
static bool host_refused(struct relay_client *c, const struct ipc_reply *reply)
{
	if (reply->fd >= 0)
		close(reply->fd);
	return !reply->success && c->ipc && ipc_client_is_connected(c->ipc);
}

static void on_sync_reply(const struct ipc_reply *reply, void *user)
{
	struct relay_client *c = user;
	uint32_t delay;
	int rc;

	if (host_refused(c, reply)) {
		fail(c, -EPROTO, "SyncClock refused");
		return;
	}
	if (!reply->success)
		return;
	if (c->stats.state == RELAY_CLIENT_PING) {
		rc = send_sync(c, PERFETTO__PROTOS__SYNC_CLOCK_REQUEST__PHASE__UPDATE);
		if (rc < 0)
			fail(c, rc, "SyncClock");
		return;
	}
	if (c->stats.state != RELAY_CLIENT_UPDATE)
		return;
	delay = relay_sync_delay_ms((const Perfetto__Protos__SyncClockResponse *)reply->msg,
				    &c->quick_rounds);
	c->stats.n_rounds++;
	c->stats.sync_delay_ms = delay;
	c->stats.state = RELAY_CLIENT_IDLE;
	c->has_timer = evloop_add_timer(c->loop, delay, 0, on_round_timer, c, &c->timer) == 0;
	if (!c->has_timer)
		fail(c, -ENOMEM, "scheduling the next clock sync");
}

static void on_init_reply(const struct ipc_reply *reply, void *user)
{
	struct relay_client *c = user;

	if (host_refused(c, reply))
		fail(c, -EPROTO, "InitRelay refused");
}

static void on_bind(struct ipc_binding *b, bool success, void *user)
{
	Perfetto__Protos__InitRelayRequest req = PERFETTO__PROTOS__INIT_RELAY_REQUEST__INIT;
	struct relay_client *c = user;
	struct relay_system_info si;
	int rc;

	(void)b;
	if (!success) {
		if (!c->ipc || !ipc_client_is_connected(c->ipc))
			return; /* on_disconnected follows */
		c->stats.n_bind_refused++;
		if (!c->has_warned_no_port) {
			c->has_warned_no_port = true;
			LOG_W("the host's traced at %s does not serve RelayPort: start it with "
			      "--enable-relay-endpoint (or --enable-relay-endpoint-on <socket>). "
			      "Producers are still relayed, but without clock sync their "
			      "timestamps are not aligned with the host's; retrying with backoff",
			      c->remote_name);
		}
		fail(c, -EPROTONOSUPPORT, NULL);
		return;
	}
	c->stats.n_bound++;
	c->stats.retry_delay_ms = c->retry_initial_ms;
	c->has_warned_unreachable = false;
	if (c->has_warned_no_port)
		LOG_I("the host's traced at %s now serves RelayPort", c->remote_name);
	c->has_warned_no_port = false;
	relay_system_info_init(&si, c->identity->machine_name);
	req.system_info = &si.si;
	rc = ipc_client_invoke(c->ipc, c->binding, "InitRelay", &req.base, -1, on_init_reply, c,
			       false);
	if (rc < 0) {
		fail(c, rc, "InitRelay");
		return;
	}
	/* Like Perfetto, the first PING does not wait for InitRelay's reply. */
	rc = send_sync(c, PERFETTO__PROTOS__SYNC_CLOCK_REQUEST__PHASE__PING);
	if (rc < 0)
		fail(c, rc, "SyncClock");
}

static void on_disconnected(struct ipc_client *client, int err, void *user)
{
	struct relay_client *c = user;

	(void)client;
	fail(c, err ? err : -ECONNRESET, "connection closed");
}

static void start_connect(struct relay_client *c)
{
	static const struct ipc_client_callbacks cbs = {NULL, on_disconnected};
	int rc;

	c->stats.state = RELAY_CLIENT_CONNECTING;
	c->stats.n_attempts++;
	rc = ipc_client_connect(c->loop, c->remote_name, &cbs, c, &c->ipc);
	if (rc < 0) {
		c->ipc = NULL;
		fail(c, rc, "connect");
		return;
	}
	/* The host takes only the first identity, so it goes before the bind. */
	rc = ipc_client_send_peer_identity(c->ipc, (int32_t)getpid(), (int32_t)geteuid(),
					   c->identity->machine_id_hint,
					   c->identity->machine_name);
	if (rc < 0) {
		fail(c, rc, "SetPeerIdentity");
		return;
	}
	rc = ipc_client_bind(c->ipc, &perfetto__protos__relay_port__descriptor, on_bind, c,
			     &c->binding);
	if (rc < 0)
		fail(c, rc, "Bind(RelayPort)");
}

int relay_client_create(struct evloop *loop, const struct relay_client_options *o,
			struct relay_client **out)
{
	struct relay_client *c;

	if (!loop || !o || !o->remote_name || !o->identity)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->loop = loop;
	c->remote_name = o->remote_name;
	c->identity = o->identity;
	c->retry_initial_ms = o->retry_initial_ms ? o->retry_initial_ms : RELAY_RETRY_INITIAL_MS;
	c->retry_max_ms = o->retry_max_ms ? o->retry_max_ms : RELAY_RETRY_MAX_MS;
	if (c->retry_max_ms < c->retry_initial_ms)
		c->retry_max_ms = c->retry_initial_ms;
	c->stats.retry_delay_ms = c->retry_initial_ms;
	start_connect(c);
	*out = c;
	return 0;
}

void relay_client_destroy(struct relay_client *c)
{
	if (!c)
		return;
	ipc_client_destroy(c->ipc);
	cancel_timer(c);
	free(c);
}

void relay_client_get_stats(const struct relay_client *c, struct relay_client_stats *out)
{
	*out = c->stats;
}

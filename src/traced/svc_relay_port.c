// SPDX-License-Identifier: Apache-2.0
/*
 * svc_relay_port.c - the RelayPort service, served on the producer sockets
 * chosen by --enable-relay-endpoint[-on]. Each traced_relay (one per remote
 * machine) describes its machine once (InitRelay with its SystemInfo) and
 * then runs clock-sync rounds: a PING and an UPDATE, each with the relay's
 * clock readings, answered at once so the round trip stays short. The host
 * reads its own clocks as each request arrives; a completed round (the
 * best of a short burst, when the relay keeps the pace we ask for) goes to
 * every running session, which emits it as its own RemoteClockSync packet.
 * Relays are untrusted peers: sizes and counts are bounded.
 */
#include "traced/svc_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "ipc/relay_port.pb-c.h"

static struct svc_relay *relay_by_client(struct svc *svc, struct ipc_host *host,
					 uint64_t client_id)
{
	struct svc_relay *r;

	for (r = svc->relays; r; r = r->next) {
		if (r->host == host && r->client_id == client_id)
			return r;
	}
	return NULL;
}

static void relay_free(struct svc_relay *r)
{
	free(r->machine_name);
	free(r->system_info);
	free(r);
}

/*
 * The relay behind @call, created on its first call. Clients without a
 * remote machine id (a UNIX socket, or no SetPeerIdentity) describe this
 * machine, whose clocks and SystemInfo the trace already has: NULL.
 */
static struct svc_relay *relay_get(struct svc *svc, struct ipc_host *host,
				   const struct ipc_call *call)
{
	struct ipc_client_info info;
	struct svc_relay *r = relay_by_client(svc, host, call->client_id);

	if (r)
		return r;
	if (ipc_host_client_info(host, call->client_id, &info) < 0 ||
	    info.machine_id == IPC_DEFAULT_MACHINE_ID)
		return NULL;
	if (svc->n_relays >= SVC_MAX_RELAYS) {
		LOG_W("refusing relay from machine %u: %d relays connected", info.machine_id,
		      SVC_MAX_RELAYS);
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->machine_name = strdup(info.machine_name);
	if (!r->machine_name) {
		free(r);
		return NULL;
	}
	r->host = host;
	r->client_id = call->client_id;
	r->machine_id = info.machine_id;
	r->next = svc->relays;
	svc->relays = r;
	svc->n_relays++;
	LOG_I("relay connected: machine %u ('%s')", r->machine_id, r->machine_name);
	return r;
}

static void on_init_relay(struct ipc_host *host, const struct ipc_call *call,
			  const ProtobufCMessage *args, void *user)
{
	const Perfetto__Protos__InitRelayRequest *req = (const void *)args;
	Perfetto__Protos__SystemInfo si;
	Perfetto__Protos__InitRelayResponse resp = PERFETTO__PROTOS__INIT_RELAY_RESPONSE__INIT;
	struct svc *svc = user;
	struct svc_relay *r;
	uint8_t *bytes;
	size_t n;

	/* Answer first, as Perfetto does: the relay's next step waits on it. */
	ipc_host_reply(host, call, &resp.base, false, -1);
	r = relay_get(svc, host, call);
	if (!r || !req->system_info)
		return;
	/*
	 * Perfetto's relay leaves SystemInfo.machine_name unset (the name
	 * travels in SetPeerIdentity); fill it in so the trace's machine
	 * table names the machine.
	 */
	si = *req->system_info;
	if (!si.machine_name && r->machine_name[0])
		si.machine_name = r->machine_name;
	n = perfetto__protos__system_info__get_packed_size(&si);
	if (n > SVC_MAX_SYSTEM_INFO_BYTES) {
		LOG_W("machine %u: SystemInfo of %zu bytes is over the %u-byte limit, ignoring",
		      r->machine_id, n, SVC_MAX_SYSTEM_INFO_BYTES);
		return;
	}
	bytes = malloc(n ? n : 1);
	if (!bytes)
		return;
	perfetto__protos__system_info__pack(&si, bytes);
	free(r->system_info);
	r->system_info = bytes;
	r->system_info_len = n;
}

static void take_readings(struct svc_sync_exchange *x, const struct clock_snapshot *host,
			  const Perfetto__Protos__SyncClockRequest *req)
{
	size_t i;

	memset(x, 0, sizeof(*x));
	for (i = 0; i < CLOCK_SNAPSHOT_CLOCKS; i++) {
		x->host[i].clock_id = host->clocks[i].id;
		x->host[i].ts_ns = host->clocks[i].ts_ns;
	}
	x->n_host = CLOCK_SNAPSHOT_CLOCKS;
	for (i = 0; i < req->n_clocks && x->n_client < SVC_MAX_SYNC_CLOCKS; i++) {
		const Perfetto__Protos__SyncClockRequest__Clock *c = req->clocks[i];

		if (!c->has_clock_id || !c->has_timestamp)
			continue;
		x->client[x->n_client].clock_id = c->clock_id;
		x->client[x->n_client].ts_ns = c->timestamp;
		x->n_client++;
	}
}

static void round_complete(struct svc *svc, struct svc_relay *r, const struct svc_sync_round *rd)
{
	struct svc_session *s;

	if (r->n_history == SVC_RELAY_HISTORY) {
		memmove(r->history, r->history + 1, (SVC_RELAY_HISTORY - 1) * sizeof(*rd));
		r->n_history--;
	}
	r->history[r->n_history++] = *rd;
	r->n_rounds++;
	for (s = svc->sessions; s; s = s->next) {
		if (!s->is_clone && (s->state == SESSION_STARTED || s->state == SESSION_STOPPING))
			svc_session_push_round(s, rd);
	}
}

static uint64_t boottime_of(const struct svc_clock_reading *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (r[i].clock_id == CLOCK_ID_BOOTTIME)
			return r[i].ts_ns;
	}
	return 0;
}

/* The longer of the round's two round trips, client and host side. */
static uint64_t round_trip_ns(const struct svc_sync_round *rd)
{
	uint64_t c0 = boottime_of(rd->ping.client, rd->ping.n_client);
	uint64_t c1 = boottime_of(rd->update.client, rd->update.n_client);
	uint64_t h0 = boottime_of(rd->ping.host, rd->ping.n_host);
	uint64_t h1 = boottime_of(rd->update.host, rd->update.n_host);
	uint64_t c = c1 > c0 ? c1 - c0 : 0, h = h1 > h0 ? h1 - h0 : 0;

	return c > h ? c : h;
}

/* A round completed: publish it, or keep the best of the burst. Return:
 * how long the relay should wait before its next PING. */
static uint32_t on_round(struct svc *svc, struct svc_relay *r, const struct svc_sync_round *rd)
{
	uint64_t rtt = round_trip_ns(rd), ping_ns = boottime_of(rd->ping.host, rd->ping.n_host);

	if (r->n_rounds > 0 && r->last_update_ns && ping_ns > r->last_update_ns &&
	    ping_ns - r->last_update_ns < SVC_RELAY_PACED_NS)
		r->keeps_pace = true;
	r->last_update_ns = boottime_of(rd->update.host, rd->update.n_host);
	if (r->n_rounds == 0 || !r->keeps_pace) {
		round_complete(svc, r, rd);
		return SVC_RELAY_BURST_DELAY_MS;
	}
	if (r->burst_n == 0 || rtt < r->burst_best_rtt_ns) {
		r->burst_best = *rd;
		r->burst_best_rtt_ns = rtt;
	}
	if (++r->burst_n < SVC_RELAY_BURST_ROUNDS)
		return SVC_RELAY_BURST_DELAY_MS;
	r->burst_n = 0;
	round_complete(svc, r, &r->burst_best);
	return SVC_RELAY_SYNC_DELAY_MS;
}

static void on_sync_clock(struct ipc_host *host, const struct ipc_call *call,
			  const ProtobufCMessage *args, void *user)
{
	const Perfetto__Protos__SyncClockRequest *req = (const void *)args;
	Perfetto__Protos__SyncClockResponse resp = PERFETTO__PROTOS__SYNC_CLOCK_RESPONSE__INIT;
	struct svc *svc = user;
	struct clock_snapshot now;
	struct svc_sync_round rd;
	struct svc_relay *r;

	/* The host's readings belong to the moment the request arrived. */
	clock_snapshot_capture(&now);
	resp.has_next_sync_delay_ms = 1;
	resp.next_sync_delay_ms = SVC_RELAY_SYNC_DELAY_MS;
	r = relay_get(svc, host, call);
	if (!r || !req->has_phase ||
	    req->phase != PERFETTO__PROTOS__SYNC_CLOCK_REQUEST__PHASE__UPDATE || !r->has_ping) {
		/* A PING is answered before anything else, to keep its round short. */
		ipc_host_reply(host, call, &resp.base, false, -1);
		if (r && req->has_phase && req->phase == PERFETTO__PROTOS__SYNC_CLOCK_REQUEST__PHASE__PING) {
			take_readings(&r->ping, &now, req);
			r->has_ping = true;
		}
		return;
	}
	r->has_ping = false;
	rd.machine_id = r->machine_id;
	rd.ping = r->ping;
	take_readings(&rd.update, &now, req);
	resp.next_sync_delay_ms = on_round(svc, r, &rd);
	ipc_host_reply(host, call, &resp.base, false, -1);
}

static void on_disconnect(struct ipc_host *host, uint64_t client_id, void *user)
{
	struct svc *svc = user;
	struct svc_relay **pp;

	for (pp = &svc->relays; *pp; pp = &(*pp)->next) {
		struct svc_relay *r = *pp;

		if (r->host == host && r->client_id == client_id) {
			*pp = r->next;
			svc->n_relays--;
			LOG_I("relay of machine %u ('%s') disconnected after %llu clock-sync rounds",
			      r->machine_id, r->machine_name, (unsigned long long)r->n_rounds);
			relay_free(r);
			return;
		}
	}
}

void svc_relays_on_session_start(struct svc *svc, struct svc_session *s)
{
	struct svc_relay *r;

	for (r = svc->relays; r; r = r->next) {
		if (r->n_history)
			svc_session_push_round(s, &r->history[r->n_history - 1]);
	}
}

void svc_relays_on_clone(struct svc *svc, struct svc_session *clone)
{
	struct svc_relay *r;
	size_t i;

	for (r = svc->relays; r; r = r->next) {
		for (i = 0; i < r->n_history; i++)
			svc_session_push_round(clone, &r->history[i]);
	}
}

void svc_relays_destroy(struct svc *svc)
{
	while (svc->relays) {
		struct svc_relay *r = svc->relays;

		svc->relays = r->next;
		relay_free(r);
	}
	svc->n_relays = 0;
}

/* In RelayPort declaration order. */
static const ipc_method_cb k_handlers[] = {on_init_relay, on_sync_clock};

int svc_relay_port_expose(struct svc *svc, struct ipc_host *host)
{
	struct ipc_service_def def = {
		.desc = &perfetto__protos__relay_port__descriptor,
		.handlers = k_handlers,
		.n_handlers = PFC_ARRAY_SIZE(k_handlers),
		.on_disconnect = on_disconnect,
		.user = svc,
	};

	return ipc_host_expose(host, &def, NULL);
}

// SPDX-License-Identifier: Apache-2.0
/*
 * sdk_inprocess.c - PFC_BACKEND_IN_PROCESS: the tracing service itself
 * (src/traced, as a library) runs on the SDK's control thread, listening
 * on private abstract sockets named after the process; the SDK's producer
 * connects to it like to traced, and a consumer on the same loop starts
 * one session that writes the trace file (write_into_file onto the
 * caller's path). pfc_shutdown() flushes and stops that session, so the
 * file is complete when it returns.
 */
#include "sdk/sdk_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "base/evloop.h"
#include "config/trace_config.pb-c.h"
#include "traced/traced.h"
#include "tracing/consumer.h"

#define DEFAULT_BUFFER_KB (64u * 1024)
#define DEFAULT_FILE_PERIOD_MS 1000u

static struct {
	struct svc *svc;
	struct consumer *consumer;
	int fd;
	uint8_t *cfg;
	size_t cfg_len;
	char producer_sock[96];
	char consumer_sock[96];
	bool enabled;
	bool disabled;       /* the session ended */
	void (*on_done)(void *user);
	void *done_user;
} g = {.fd = -1};

/* The session's config: the caller's with write_into_file forced on, or the
 * default: every category into a 64 MiB ring buffer, written to the file
 * and flushed every second, writers stalling (then dropping) when the
 * shared memory is full. */
static int build_config(const uint8_t *user_cfg, size_t len, uint8_t **out, size_t *out_len)
{
	/* Set up by its init function: the INIT macro names deprecated fields,
	 * which clang warns about. */
	Perfetto__Protos__TraceConfig def, *cfg = &def;
	Perfetto__Protos__TraceConfig__BufferConfig buf =
		PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__INIT, *bufs[1] = {&buf};
	Perfetto__Protos__TraceConfig__DataSource ds = PERFETTO__PROTOS__TRACE_CONFIG__DATA_SOURCE__INIT,
						  *dss[1] = {&ds};
	Perfetto__Protos__DataSourceConfig dsc = PERFETTO__PROTOS__DATA_SOURCE_CONFIG__INIT;
	Perfetto__Protos__TrackEventConfig te = PERFETTO__PROTOS__TRACK_EVENT_CONFIG__INIT;
	char *all[1] = {(char *)"*"};
	Perfetto__Protos__TraceConfig *parsed = NULL;

	perfetto__protos__trace_config__init(&def);

	if (user_cfg) {
		parsed = perfetto__protos__trace_config__unpack(NULL, len, user_cfg);
		if (!parsed)
			return -EINVAL;
		cfg = parsed;
	} else {
		buf.has_size_kb = true;
		buf.size_kb = DEFAULT_BUFFER_KB;
		buf.has_fill_policy = true;
		buf.fill_policy = PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__FILL_POLICY__RING_BUFFER;
		te.n_enabled_categories = 1;
		te.enabled_categories = all;
		dsc.name = (char *)"track_event";
		dsc.track_event_config = &te;
		/* The service is ours: wait for it rather than lose events. */
		dsc.has_buffer_exhausted_policy = true;
		dsc.buffer_exhausted_policy =
			PERFETTO__PROTOS__DATA_SOURCE_CONFIG__BUFFER_EXHAUSTED_POLICY__BUFFER_EXHAUSTED_STALL_THEN_DROP;
		ds.config = &dsc;
		def.n_buffers = 1;
		def.buffers = bufs;
		def.n_data_sources = 1;
		def.data_sources = dss;
		def.has_file_write_period_ms = true;
		def.file_write_period_ms = DEFAULT_FILE_PERIOD_MS;
		def.has_flush_period_ms = true;
		def.flush_period_ms = DEFAULT_FILE_PERIOD_MS;
	}
	cfg->has_write_into_file = true;
	cfg->write_into_file = true;
	*out_len = perfetto__protos__trace_config__get_packed_size(cfg);
	*out = malloc(*out_len ? *out_len : 1);
	if (*out)
		perfetto__protos__trace_config__pack(cfg, *out);
	if (parsed)
		perfetto__protos__trace_config__free_unpacked(parsed, NULL);
	return *out ? 0 : -ENOMEM;
}

static void on_disabled(const char *error, void *user)
{
	(void)error;
	(void)user;
	g.disabled = true;
	if (g.on_done) {
		void (*cb)(void *) = g.on_done;

		g.on_done = NULL;
		cb(g.done_user);
	}
}

static void on_consumer_connected(struct consumer *c, void *user)
{
	(void)user;
	if (consumer_enable_tracing(c, g.cfg, g.cfg_len, g.fd, on_disabled, NULL) == 0)
		g.enabled = true;
}

static void on_consumer_disconnected(struct consumer *c, int err, void *user)
{
	(void)c;
	(void)err;
	(void)user;
	on_disabled(NULL, NULL);
}

int sdk_inprocess_start(struct evloop *loop, const char *path, const uint8_t *cfg,
			size_t cfg_len, char *out_socket, size_t size)
{
	struct consumer_callbacks cbs = {
		.on_connected = on_consumer_connected,
		.on_disconnected = on_consumer_disconnected,
	};
	struct svc_options opts;
	uint64_t r = 0;
	int rc;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
		r = (uint64_t)(uintptr_t)&g;
	snprintf(g.producer_sock, sizeof(g.producer_sock), "@pfc-inproc-%d-%016llx-p", (int)getpid(),
		 (unsigned long long)r);
	snprintf(g.consumer_sock, sizeof(g.consumer_sock), "@pfc-inproc-%d-%016llx-c", (int)getpid(),
		 (unsigned long long)r);
	if (strlen(g.producer_sock) >= size)
		return -ENAMETOOLONG;
	rc = build_config(cfg, cfg_len, &g.cfg, &g.cfg_len);
	if (rc < 0)
		return rc;
	g.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (g.fd < 0) {
		rc = -errno;
		goto fail;
	}
	memset(&opts, 0, sizeof(opts));
	opts.producer_socks[0] = g.producer_sock;
	opts.n_producer_socks = 1;
	opts.consumer_sock = g.consumer_sock;
	rc = svc_create(loop, &opts, &g.svc);
	if (rc < 0)
		goto fail;
	rc = consumer_connect(loop, g.consumer_sock, &cbs, NULL, &g.consumer);
	if (rc < 0)
		goto fail;
	g.enabled = g.disabled = false;
	snprintf(out_socket, size, "%s", g.producer_sock);
	return 0;
fail:
	sdk_inprocess_stop();
	return rc;
}

static void on_flushed(int err, void *user)
{
	(void)err;
	(void)user;
	if (!g.consumer || consumer_disable_tracing(g.consumer) < 0)
		on_disabled(NULL, NULL);
}

int sdk_inprocess_finish(uint32_t timeout_ms, void (*done)(void *user), void *user)
{
	if (!g.consumer || !g.enabled || g.disabled)
		return -ENOTCONN;
	g.on_done = done;
	g.done_user = user;
	if (consumer_flush(g.consumer, timeout_ms, 0, on_flushed, NULL) < 0) {
		g.on_done = NULL;
		return -ENOTCONN;
	}
	return 0;
}

void sdk_inprocess_stop(void)
{
	g.on_done = NULL;
	consumer_destroy(g.consumer);
	g.consumer = NULL;
	svc_destroy(g.svc);
	g.svc = NULL;
	if (g.fd >= 0) {
		close(g.fd);
	}
	g.fd = -1;
	free(g.cfg);
	g.cfg = NULL;
	g.enabled = false;
}

void sdk_inprocess_forget(void)
{
	/* A forked child: the service is the parent's. */
	if (g.fd >= 0)
		close(g.fd);
	memset(&g, 0, sizeof(g));
	g.fd = -1;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * deferred_start.c - test consumer for deferred_start: enables a session
 * whose config sets deferred_start, checks that the service reports it
 * as not started, waits, sends StartTracing, and when tracing ends writes
 * the trace to a file. It prints "start_ns=<BOOTTIME>" at StartTracing so a
 * script can check that no producer data predates it.
 *   deferred_start CONFIG.pbtxt OUT.pftrace [WAIT_MS]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/evloop.h"
#include "base/file.h"
#include "config/trace_config.pb-c.h"
#include "pbtxt/pbtxt.h"
#include "tracing/consumer.h"

static struct {
	struct evloop *loop;
	struct consumer *c;
	struct buf cfg;
	struct trace_file_writer w;
	uint32_t wait_ms;
	int rc;
} g = {.rc = 1};

static void on_freed(int err, void *user)
{
	(void)err;
	(void)user;
	evloop_quit(g.loop);
}

static void on_packet(const uint8_t *p, size_t n, void *user)
{
	(void)user;
	trace_file_write_packet(&g.w, p, n);
}

static void on_read(int err, void *user)
{
	(void)user;
	if (!err && trace_file_writer_flush(&g.w) == 0)
		g.rc = 0;
	if (consumer_free_buffers(g.c, on_freed, NULL) < 0)
		evloop_quit(g.loop);
}

static void on_disabled(const char *error, void *user)
{
	(void)user;
	if (error) {
		fprintf(stderr, "deferred_start: session ended: %s\n", error);
		evloop_quit(g.loop);
		return;
	}
	consumer_read_buffers(g.c, on_packet, on_read, NULL);
}

static void on_start_timer(void *user)
{
	(void)user;
	printf("start_ns=%llu\n", (unsigned long long)clock_boottime_ns());
	fflush(stdout);
	if (consumer_start_tracing(g.c) < 0) {
		fprintf(stderr, "deferred_start: StartTracing failed\n");
		evloop_quit(g.loop);
	}
}

static void on_state(int err, const Perfetto__Protos__TracingServiceState *st, const uint8_t *data,
		     size_t len, void *user)
{
	size_t i;

	(void)data;
	(void)len;
	(void)user;
	for (i = 0; !err && st && i < st->n_tracing_sessions; i++) {
		const Perfetto__Protos__TracingServiceState__TracingSession *t = st->tracing_sessions[i];

		printf("state=%s is_started=%d\n", t->state ? t->state : "-", t->is_started ? 1 : 0);
	}
	fflush(stdout);
	evloop_add_timer(g.loop, g.wait_ms, 0, on_start_timer, NULL, NULL);
}

static void on_query_timer(void *user)
{
	(void)user;
	consumer_query_service_state(g.c, true, on_state, NULL);
}

static void on_connected(struct consumer *c, void *user)
{
	(void)user;
	if (consumer_enable_tracing(c, g.cfg.data, g.cfg.len, -1, on_disabled, NULL) < 0) {
		evloop_quit(g.loop);
		return;
	}
	evloop_add_timer(g.loop, 100, 0, on_query_timer, NULL, NULL);
}

static void on_disconnected(struct consumer *c, int err, void *user)
{
	(void)c;
	(void)user;
	fprintf(stderr, "deferred_start: disconnected (%d)\n", err);
	evloop_quit(g.loop);
}

int main(int argc, char **argv)
{
	struct consumer_callbacks cbs = {on_connected, on_disconnected};
	struct buf text = BUF_INIT;
	struct pbtxt_error perr;
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: deferred_start CONFIG.pbtxt OUT.pftrace [WAIT_MS]\n");
		return 2;
	}
	g.wait_ms = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 500;
	if (file_read_all(argv[1], &text, 1 << 20) < 0 ||
	    pbtxt_parse(&perfetto__protos__trace_config__descriptor, (const char *)text.data, text.len,
			&g.cfg, &perr) < 0) {
		fprintf(stderr, "deferred_start: bad config %s %s\n", argv[1], perr.msg);
		return 2;
	}
	fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || trace_file_writer_init(&g.w, fd, 0) < 0 || evloop_create(&g.loop) < 0)
		return 2;
	if (consumer_connect(g.loop, NULL, &cbs, NULL, &g.c) < 0) {
		fprintf(stderr, "deferred_start: cannot connect\n");
		return 1;
	}
	evloop_run(g.loop);
	consumer_destroy(g.c);
	trace_file_writer_fini(&g.w);
	close(fd);
	evloop_destroy(g.loop);
	buf_fini(&text);
	buf_fini(&g.cfg);
	return g.rc;
}

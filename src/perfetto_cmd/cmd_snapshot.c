// SPDX-License-Identifier: Apache-2.0
/*
 * cmd_snapshot.c - CLONE_SNAPSHOT snapshots for the perfetto command. A
 * clone_trigger_hit event queues a snapshot; each runs on its own consumer
 * connection (a connection owns one session): CloneSession with the
 * trigger's details, ReadBuffers into OUT.<n>, FreeBuffers. Snapshots run
 * one after another, as Perfetto's single snapshot thread does.
 */
#include "perfetto_cmd/cmd_snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/file.h"
#include "base/log.h"
#include "base/sock_default.h"
#include "common/observable_events.pb-c.h"
#include "tracing/consumer.h"

/* Triggers queued while a snapshot is written; more are dropped (logged). */
#define CMD_MAX_QUEUED_SNAPSHOTS 64

struct snap_req {
	uint64_t session_id;
	unsigned index;
	char *trigger_name;
	char *producer_name;
	uint32_t producer_uid;
	uint64_t boot_time_ns;
	uint64_t delay_ms;
};

struct cmd_snapshots {
	struct evloop *loop;
	const char *out_path;
	cmd_snapshots_idle_cb idle_cb;
	void *user;
	unsigned next_index;
	struct snap_req queue[CMD_MAX_QUEUED_SNAPSHOTS];
	size_t n_queue;
	/* The snapshot in progress (queue[0]). */
	bool busy;
	struct consumer *c;
	int fd;
	char path[4096];
	struct trace_file_writer w;
	bool writer_open;
};

static void req_fini(struct snap_req *r)
{
	free(r->trigger_name);
	free(r->producer_name);
}

static void start_next(struct cmd_snapshots *s);

/* Ends the current snapshot (it may have failed) and starts the next. */
static void done(struct cmd_snapshots *s, const char *error)
{
	struct snap_req *r = &s->queue[0];
	int werr = 0;

	if (s->writer_open) {
		werr = trace_file_writer_fini(&s->w);
		s->writer_open = false;
	}
	if (s->fd >= 0) {
		if (!error && !werr)
			fdatasync(s->fd);
		close(s->fd);
		s->fd = -1;
	}
	if (error || werr) {
		fprintf(stderr, "perfetto: snapshot %u for trigger '%s' failed: %s\n", r->index,
			r->trigger_name, error ? error : strerror(-werr));
	} else {
		uint64_t now = clock_boottime_ns();

		fprintf(stderr,
			"perfetto: snapshot for trigger '%s': wrote %llu bytes to %s, %.0f ms after "
			"the trigger (%.0f ms after its stop_delay_ms)\n",
			r->trigger_name, (unsigned long long)s->w.bytes_written, s->path,
			(now - r->boot_time_ns) / 1e6,
			(now - r->boot_time_ns) / 1e6 - (double)r->delay_ms);
	}
	consumer_destroy(s->c);
	s->c = NULL;
	s->busy = false;
	req_fini(r);
	memmove(&s->queue[0], &s->queue[1], (s->n_queue - 1) * sizeof(s->queue[0]));
	s->n_queue--;
	start_next(s);
	if (!s->busy && s->idle_cb)
		s->idle_cb(s->user);
}

static void on_packet(const uint8_t *packet, size_t len, void *user)
{
	struct cmd_snapshots *s = user;

	trace_file_write_packet(&s->w, packet, len);
}

static void on_freed(int err, void *user)
{
	(void)err;
	done(user, NULL);
}

static void on_read(int err, void *user)
{
	struct cmd_snapshots *s = user;

	if (err < 0) {
		done(s, strerror(-err));
		return;
	}
	/* The clone is a session of its own: free it before the next one. */
	if (consumer_free_buffers(s->c, on_freed, s) < 0)
		done(s, NULL);
}

static void on_cloned(const struct consumer_clone_result *res, void *user)
{
	struct cmd_snapshots *s = user;
	int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;

	if (res->err || !res->success) {
		done(s, res->error ? res->error : "the service refused the clone");
		return;
	}
	s->fd = open(s->path, flags, 0600);
	if (s->fd < 0) {
		done(s, strerror(errno));
		return;
	}
	if (trace_file_writer_init(&s->w, s->fd, 0) < 0) {
		done(s, "out of memory");
		return;
	}
	s->writer_open = true;
	if (consumer_read_buffers(s->c, on_packet, on_read, s) < 0)
		done(s, "cannot read the clone's buffers");
}

static void on_connected(struct consumer *c, void *user)
{
	struct cmd_snapshots *s = user;
	struct snap_req *r = &s->queue[0];
	struct consumer_clone_args a;

	(void)c;
	memset(&a, 0, sizeof(a));
	a.session_id = r->session_id;
	a.clone_trigger_name = r->trigger_name;
	a.clone_trigger_producer_name = r->producer_name;
	a.clone_trigger_trusted_producer_uid = (int32_t)r->producer_uid;
	a.clone_trigger_boot_time_ns = r->boot_time_ns;
	a.clone_trigger_delay_ms = r->delay_ms;
	if (consumer_clone_session(s->c, &a, on_cloned, s) < 0)
		done(s, "cannot send CloneSession");
}

static void on_disconnected(struct consumer *c, int err, void *user)
{
	struct cmd_snapshots *s = user;

	(void)c;
	if (s->busy)
		done(s, err ? strerror(-err) : "the service closed the connection");
}

static void start_next(struct cmd_snapshots *s)
{
	struct consumer_callbacks cbs = {on_connected, on_disconnected};
	int rc;

	while (!s->busy && s->n_queue) {
		struct snap_req *r = &s->queue[0];

		snprintf(s->path, sizeof(s->path), "%s.%u", s->out_path, r->index);
		s->busy = true;
		rc = consumer_connect(s->loop, sock_default_consumer(), &cbs, s, &s->c);
		if (rc < 0) {
			s->c = NULL;
			/* done() starts the following one. */
			done(s, strerror(-rc));
			return;
		}
	}
}

int cmd_snapshots_on_event(struct cmd_snapshots *s, const uint8_t *ev, size_t len)
{
	Perfetto__Protos__ObservableEvents *e;
	const Perfetto__Protos__ObservableEvents__CloneTriggerHit *h;
	struct snap_req *r;

	e = perfetto__protos__observable_events__unpack(NULL, len, ev);
	if (!e)
		return -EBADMSG;
	h = e->clone_trigger_hit;
	if (!h) {
		perfetto__protos__observable_events__free_unpacked(e, NULL);
		return 0;
	}
	if (s->n_queue == CMD_MAX_QUEUED_SNAPSHOTS) {
		fprintf(stderr, "perfetto: %d snapshots already queued, ignoring trigger '%s'\n",
			CMD_MAX_QUEUED_SNAPSHOTS, h->trigger_name ? h->trigger_name : "");
		perfetto__protos__observable_events__free_unpacked(e, NULL);
		return -ENOSPC;
	}
	r = &s->queue[s->n_queue];
	memset(r, 0, sizeof(*r));
	r->session_id = (uint64_t)h->tracing_session_id;
	r->trigger_name = strdup(h->trigger_name ? h->trigger_name : "");
	r->producer_name = strdup(h->producer_name ? h->producer_name : "");
	r->producer_uid = h->producer_uid;
	r->boot_time_ns = h->boot_time_ns;
	r->delay_ms = h->trigger_delay_ms;
	perfetto__protos__observable_events__free_unpacked(e, NULL);
	if (!r->trigger_name || !r->producer_name) {
		req_fini(r);
		return -ENOMEM;
	}
	/* Numbered as the triggers arrive, as Perfetto does. */
	r->index = s->next_index++;
	s->n_queue++;
	start_next(s);
	return 1;
}

bool cmd_snapshots_idle(const struct cmd_snapshots *s)
{
	return !s || (!s->busy && !s->n_queue);
}

int cmd_snapshots_create(struct evloop *loop, const char *out_path, cmd_snapshots_idle_cb idle_cb,
			 void *user, struct cmd_snapshots **out)
{
	struct cmd_snapshots *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->loop = loop;
	s->out_path = out_path;
	s->idle_cb = idle_cb;
	s->user = user;
	s->fd = -1;
	*out = s;
	return 0;
}

void cmd_snapshots_destroy(struct cmd_snapshots *s)
{
	size_t i;

	if (!s)
		return;
	consumer_destroy(s->c);
	if (s->writer_open)
		trace_file_writer_fini(&s->w);
	if (s->fd >= 0)
		close(s->fd);
	for (i = 0; i < s->n_queue; i++)
		req_fini(&s->queue[i]);
	free(s);
}

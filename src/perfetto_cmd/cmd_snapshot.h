/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_snapshot.h - CLONE_SNAPSHOT for the perfetto command: each
 * clone_trigger_hit event of the session it owns becomes a clone of that
 * session, read over a second consumer connection into OUT.0, OUT.1, ...
 * (Perfetto's naming), one snapshot at a time, while the session records on.
 */
#ifndef PFC_PERFETTO_CMD_CMD_SNAPSHOT_H
#define PFC_PERFETTO_CMD_CMD_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct evloop;
struct cmd_snapshots;

/* Called when the last queued snapshot is written (or failed). */
typedef void (*cmd_snapshots_idle_cb)(void *user);

/**
 * cmd_snapshots_create() - Snapshots of sessions, written next to @out_path.
 * @loop: borrowed; @out_path: borrowed (argv), the -o path.
 * Return: 0 or -ENOMEM; *out is freed with cmd_snapshots_destroy().
 */
int cmd_snapshots_create(struct evloop *loop, const char *out_path, cmd_snapshots_idle_cb idle_cb,
			 void *user, struct cmd_snapshots **out);
void cmd_snapshots_destroy(struct cmd_snapshots *s);

/**
 * cmd_snapshots_on_event() - An ObservableEvents message (borrowed bytes):
 * a clone_trigger_hit queues a snapshot named OUT.<n>.
 * Return: 1 if a snapshot was queued, 0 if the event has none, -errno.
 */
int cmd_snapshots_on_event(struct cmd_snapshots *s, const uint8_t *ev, size_t len);

/* True when no snapshot is queued or being written. */
bool cmd_snapshots_idle(const struct cmd_snapshots *s);

#endif

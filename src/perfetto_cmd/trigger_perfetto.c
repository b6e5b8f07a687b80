// SPDX-License-Identifier: Apache-2.0
/*
 * trigger_perfetto.c - fires triggers: connects to traced's producer socket
 * as a short-lived producer, sends ActivateTriggers with the names given,
 * waits until the service has processed them and exits. Used as
 * `trigger_perfetto NAME...` (a tracebox applet) and by `perfetto` for
 * configs whose activate_triggers is set.
 */
#include "perfetto_cmd/perfetto_cmd.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "base/evloop.h"
#include "base/log.h"
#include "base/sock_default.h"
#include "base/version.h"
#include "tracing/producer.h"

/* How long to wait for the service before giving up. */
#define TRIGGER_TIMEOUT_MS 10000

struct trigger_run {
	struct evloop *loop;
	const char *const *names;
	size_t n;
	int exit_code;
};

static void on_synced(struct producer *p, bool success, void *user)
{
	struct trigger_run *t = user;

	(void)p;
	t->exit_code = success ? 0 : 1;
	evloop_quit(t->loop);
}

static void on_connected(struct producer *p, void *user)
{
	struct trigger_run *t = user;

	if (producer_activate_triggers(p, t->names, t->n) < 0 ||
	    producer_sync(p, on_synced, t) < 0) {
		fprintf(stderr, "trigger_perfetto: cannot send the triggers\n");
		evloop_quit(t->loop);
	}
}

static void on_disconnected(struct producer *p, int err, void *user)
{
	struct trigger_run *t = user;

	(void)p;
	fprintf(stderr, "trigger_perfetto: lost the tracing service at %s: %s\n",
		sock_default_producer_for_client(), strerror(err ? -err : EPIPE));
	evloop_quit(t->loop);
}

static void on_timeout(void *user)
{
	struct trigger_run *t = user;

	fprintf(stderr, "trigger_perfetto: the tracing service did not answer in time\n");
	evloop_quit(t->loop);
}

int cmd_send_triggers(const char *const *names, size_t n)
{
	struct producer_callbacks cbs = {.on_connected = on_connected,
					 .on_disconnected = on_disconnected};
	struct producer_opts opts;
	struct trigger_run t = {.names = names, .n = n, .exit_code = 1};
	struct producer *p = NULL;
	int rc;

	memset(&opts, 0, sizeof(opts));
	signal(SIGPIPE, SIG_IGN);
	if (evloop_create(&t.loop) < 0)
		return 1;
	rc = producer_connect(t.loop, NULL, "trigger_perfetto", &opts, &cbs, &t, &p);
	if (rc < 0) {
		fprintf(stderr, "trigger_perfetto: cannot connect to the tracing service at %s: %s\n",
			sock_default_producer_for_client(), strerror(-rc));
		evloop_destroy(t.loop);
		return 1;
	}
	evloop_add_timer(t.loop, TRIGGER_TIMEOUT_MS, 0, on_timeout, &t, NULL);
	evloop_run(t.loop);
	producer_destroy(p);
	/* Tasks the producer posted still hold it: let them run and free it. */
	evloop_run_once(t.loop, 0);
	evloop_destroy(t.loop);
	return t.exit_code;
}

int trigger_perfetto_main(int argc, char **argv)
{
	int i;

	log_set_prefix("trigger_perfetto");
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--version") == 0) {
			printf("%s\n", PFC_VERSION_STRING);
			return 0;
		}
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0 || argv[i][0] == '-') {
			printf("Usage: trigger_perfetto TRIGGER_NAME...\n"
			       "Activates the named triggers on the tracing service at\n"
			       "$PERFETTO_PRODUCER_SOCK_NAME (sessions waiting for them start or stop).\n");
			return argv[i][1] == 'h' || argv[i][2] == 'h' ? 0 : 1;
		}
	}
	if (argc < 2) {
		fprintf(stderr, "trigger_perfetto: give at least one trigger name\n");
		return 1;
	}
	return cmd_send_triggers((const char *const *)argv + 1, (size_t)(argc - 1));
}

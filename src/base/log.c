// SPDX-License-Identifier: Apache-2.0
/*
 * log.c - formats log lines as "prog LEVEL file:line message", sends them
 * to the sink (stderr by default) and keeps the last LOG_RING_LINES lines in
 * memory for crash reports. Called from any thread; the ring takes a lock.
 */
#include "base/log.h"
#include "base/err.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define LOG_RING_LINES 64
#define LOG_LINE_MAX 512

enum log_level g_log_level = LOG_LEVEL_INFO;

static char g_prefix[32];
static log_sink_cb g_sink;
static void *g_sink_user;
static char g_ring[LOG_RING_LINES][LOG_LINE_MAX];
static unsigned g_ring_next;
static pthread_mutex_t g_ring_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const g_level_names[] = {"D", "I", "W", "E", "-"};

void log_set_level(enum log_level level)
{
	g_log_level = level;
}

void log_init_from_env(void)
{
	static const char *const names[] = {"debug", "info", "warn", "error", "none"};
	const char *v = getenv("PFC_LOG_LEVEL");
	unsigned i;

	if (!v)
		return;
	for (i = 0; i < PFC_ARRAY_SIZE(names); i++) {
		if (strcasecmp(v, names[i]) == 0)
			g_log_level = (enum log_level)i;
	}
}

void log_set_prefix(const char *prog)
{
	snprintf(g_prefix, sizeof(g_prefix), "%s", prog ? prog : "");
}

void log_set_sink(log_sink_cb cb, void *user)
{
	g_sink = cb;
	g_sink_user = user;
}

void log_write(enum log_level level, const char *file, int line, int errnum, const char *fmt, ...)
{
	char msg[LOG_LINE_MAX], out[LOG_LINE_MAX + 64];
	const char *base = strrchr(file, '/');
	va_list ap;
	int n;

	if (level > LOG_LEVEL_ERROR)
		level = LOG_LEVEL_ERROR;
	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		msg[0] = '\0';
	if (errnum)
		snprintf(out, sizeof(out), "%s%s%s %s:%d %s: %s", g_prefix, g_prefix[0] ? " " : "",
			 g_level_names[level], base ? base + 1 : file, line, msg, err_str(errnum));
	else
		snprintf(out, sizeof(out), "%s%s%s %s:%d %s", g_prefix, g_prefix[0] ? " " : "",
			 g_level_names[level], base ? base + 1 : file, line, msg);

	pthread_mutex_lock(&g_ring_lock);
	memcpy(g_ring[g_ring_next % LOG_RING_LINES], out, sizeof(g_ring[0]));
	g_ring[g_ring_next % LOG_RING_LINES][LOG_LINE_MAX - 1] = '\0';
	g_ring_next++;
	pthread_mutex_unlock(&g_ring_lock);

	if (g_sink)
		g_sink(level, out, g_sink_user);
	else
		fprintf(stderr, "%s\n", out);
}

void log_dump_recent(int fd)
{
	unsigned i, start;

	/* Called from crash paths: no locks, no stdio. */
	start = g_ring_next > LOG_RING_LINES ? g_ring_next - LOG_RING_LINES : 0;
	for (i = start; i < g_ring_next; i++) {
		const char *l = g_ring[i % LOG_RING_LINES];
		ssize_t w = write(fd, l, strnlen(l, LOG_LINE_MAX));

		w = write(fd, "\n", 1);
		(void)w;
	}
}

void log_check_failed(const char *file, int line, const char *expr)
{
	log_write(LOG_LEVEL_ERROR, file, line, 0, "CHECK failed: %s", expr);
	abort();
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log.h - leveled logging with file:line for daemons and CLIs. Library code
 * logs only at debug level. The level is checked before formatting; a ring
 * of the last lines is kept so a daemon can print it when it crashes.
 */
#ifndef PFC_BASE_LOG_H
#define PFC_BASE_LOG_H

#include "base/compiler.h"

enum log_level { LOG_LEVEL_DEBUG = 0, LOG_LEVEL_INFO, LOG_LEVEL_WARN, LOG_LEVEL_ERROR, LOG_LEVEL_NONE };

/* Where lines go; the default writes to stderr. */
typedef void (*log_sink_cb)(enum log_level level, const char *line, void *user);

extern enum log_level g_log_level;

void log_set_level(enum log_level level);
/* Reads PFC_LOG_LEVEL (debug|info|warn|error|none); ignores bad values. */
void log_init_from_env(void);
void log_set_prefix(const char *prog);
void log_set_sink(log_sink_cb cb, void *user);
void log_write(enum log_level level, const char *file, int line, int errnum, const char *fmt,
	       ...) PFC_PRINTF(5, 6);
/* Writes the most recent lines (kept even when below the level) to fd. */
void log_dump_recent(int fd);

#define LOG_AT_(lvl, err, ...)                                                       \
	do {                                                                         \
		if ((lvl) >= g_log_level)                                            \
			log_write((lvl), __FILE__, __LINE__, (err), __VA_ARGS__);    \
	} while (0)

#define LOG_D(...) LOG_AT_(LOG_LEVEL_DEBUG, 0, __VA_ARGS__)
#define LOG_I(...) LOG_AT_(LOG_LEVEL_INFO, 0, __VA_ARGS__)
#define LOG_W(...) LOG_AT_(LOG_LEVEL_WARN, 0, __VA_ARGS__)
#define LOG_E(...) LOG_AT_(LOG_LEVEL_ERROR, 0, __VA_ARGS__)
/* Appends strerror(errno). */
#define PLOG_E(...) LOG_AT_(LOG_LEVEL_ERROR, errno, __VA_ARGS__)
#define PLOG_W(...) LOG_AT_(LOG_LEVEL_WARN, errno, __VA_ARGS__)

/* Always-on invariant check for our own state (never for peer input). */
#define CHECK(x)                                                                     \
	do {                                                                         \
		if (PFC_UNLIKELY(!(x)))                                              \
			log_check_failed(__FILE__, __LINE__, #x);                    \
	} while (0)
#ifdef NDEBUG
#define DCHECK(x) ((void)0)
#else
#define DCHECK(x) CHECK(x)
#endif

void log_check_failed(const char *file, int line, const char *expr) PFC_NORETURN;

#endif

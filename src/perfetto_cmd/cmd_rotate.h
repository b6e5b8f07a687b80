/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_rotate.h - rotating output for the perfetto command (--rotate-seconds,
 * --rotate-mb, --keep; our extension, no Perfetto flag does this). The
 * command reads its session's buffers every drain period and routes each
 * packet into OUT.0, OUT.1, ...: every file is a trace of its own (it
 * starts with the clock snapshot, config, uuid and system info), and each
 * packet sequence moves to the next file at its first packet after an
 * incremental state clear, so interned data and incremental timestamps
 * never refer to a file before. Only the newest K files are kept; before
 * the file system fills, the oldest go first.
 */
#ifndef PFC_PERFETTO_CMD_CMD_ROTATE_H
#define PFC_PERFETTO_CMD_CMD_ROTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

struct cmd_rotate;

struct cmd_rotate_opts {
	const char *out_path;   /* borrowed; files are OUT.<n> */
	uint64_t rotate_ms;     /* 0: no time limit */
	uint64_t rotate_bytes;  /* 0: no size limit */
	unsigned keep;          /* 0: keep every file */
	bool no_clobber;        /* --no-clobber: never overwrite an OUT.<n> */
	uint64_t end_ms;        /* CLOCK_MONOTONIC ms the config's duration_ms
				 * ends (0: none): no file starts after it */
};

/* Incremental-state clears and reads: how often, for these options. */
uint32_t cmd_rotate_clear_period_ms(const struct cmd_rotate_opts *o);
uint32_t cmd_rotate_drain_period_ms(const struct cmd_rotate_opts *o);

/**
 * cmd_rotate_prepare_config() - Checks that a TraceConfig suits rotation
 * (no write_into_file, CLONE_SNAPSHOT or compression) and sets its
 * incremental_state_config.clear_period_ms to at most
 * cmd_rotate_clear_period_ms(), so every sequence restarts its state often.
 * @cfg: the serialized config, rewritten in place.
 * Return: 0, or -EINVAL with a message in @err.
 */
int cmd_rotate_prepare_config(const struct cmd_rotate_opts *o, struct buf *cfg, char *err,
			      size_t err_size);

/** cmd_rotate_create() - Opens OUT.0. Return: 0 or -errno (message printed). */
int cmd_rotate_create(const struct cmd_rotate_opts *o, struct cmd_rotate **out);
/* Closes the open files (a final cut) and frees. NULL is fine. */
void cmd_rotate_destroy(struct cmd_rotate *r);

/* One packet read from the session (borrowed), in read order. */
void cmd_rotate_packet(struct cmd_rotate *r, const uint8_t *packet, size_t len);

/**
 * cmd_rotate_before_read() - Called before each read: starts a new file
 * when the period elapsed or the file is full, closes the previous one
 * once every sequence moved on, and guards the disk.
 * Return: 0; -ENOSPC when the file system is full and no older file is
 * left to delete (the caller stops the session; the reason was logged).
 */
int cmd_rotate_before_read(struct cmd_rotate *r);

/* Files written so far (OUT.0 .. OUT.<n-1>), and deleted ones. */
unsigned cmd_rotate_files_started(const struct cmd_rotate *r);
unsigned cmd_rotate_files_deleted(const struct cmd_rotate *r);

#endif

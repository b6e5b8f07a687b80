/* SPDX-License-Identifier: Apache-2.0 */
/*
 * file.h - small, EINTR-safe file and fd helpers: whole-file reads that work
 * on /proc and tracefs (whose sizes read as 0), full writes, control-file
 * writes, mkdir -p. Blocking calls; daemons use them at setup or on small
 * pseudo-files only.
 */
#ifndef PFC_BASE_FILE_H
#define PFC_BASE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct buf;

/**
 * file_read_all() - Append a whole file to a buffer, reading until EOF.
 * @path: file to read (borrowed).
 * @b: buffer to append to; afterwards b->data[b->len] == '\0' (not counted),
 *     so text can be parsed as a C string. Unchanged on failure.
 * @max_bytes: refuse files larger than this (a named limit at the caller).
 *
 * Return: bytes appended, -EFBIG if the file is larger than @max_bytes,
 * -ENOMEM, or the -errno of open()/read().
 * Context: blocks; allocates.
 */
int file_read_all(const char *path, struct buf *b, size_t max_bytes);

/**
 * file_write_all() - Write all of @data, retrying on EINTR and partial writes.
 * @fd: a blocking fd (on a non-blocking one, -EAGAIN may follow a partial
 *      write).  @data: bytes (borrowed).  @len: their count.
 *
 * Return: 0 or the -errno of write() (-EPIPE for a closed pipe if SIGPIPE
 * is ignored).
 * Context: blocks.
 */
int file_write_all(int fd, const void *data, size_t len);

/**
 * file_write_str() - Write a string to an existing file in one write(), as
 * tracefs/procfs control files expect ("1" into tracing_on, ...).
 * @path: the file; not created and not truncated.  @str: the text.
 *
 * Return: 0 or -errno from open()/write().
 * Context: blocks.
 */
int file_write_str(const char *path, const char *str);

/** file_exists() - Whether @path exists (follows symlinks). */
bool file_exists(const char *path);

/**
 * fd_close() - Close @fd if it is not -1, preserving errno, so it can be
 * used on every cleanup path. EINTR is not retried: on Linux the fd is
 * already gone.
 */
void fd_close(int fd);

/** fd_set_nonblock() - Set O_NONBLOCK on @fd. Return: 0 or -errno. */
int fd_set_nonblock(int fd);

/**
 * mkdir_p() - Create @path and any missing parents.
 * @path: the directory.  @mode: mode for the directories created.
 *
 * Return: 0 (also if it already existed), -ENOTDIR if a component is not a
 * directory, -ENAMETOOLONG, or the -errno of mkdir().
 * Context: blocks.
 */
int mkdir_p(const char *path, mode_t mode);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ftrace_cpu_reader.h - one CPU's kernel ring buffer as a stream of pages
 * read from per_cpu/cpuN/trace_pipe_raw without blocking, one read() per
 * page into a buffer of one page. The caller decodes each page before it
 * asks for the next, so the page is still in the cache when it is decoded.
 *
 * Why not the memory-mapped ring buffer (Linux 6.10+)? It was measured:
 * on 6.18, TRACE_MMAP_IOCTL_GET_READER walks the page's records one by one
 * with interrupts off to account them, which cost more recorder CPU (0.136
 * vs 0.102 CPU-s per million sched events) and slowed the traced workload
 * more than read()'s copy does.
 */
#ifndef PFC_PROBES_FTRACE_CPU_READER_H
#define PFC_PROBES_FTRACE_CPU_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ftrace_cpu_reader {
	int fd;                      /* -1: not open */
	size_t page_size;
	uint8_t *page;               /* the page just read */
	uint64_t bytes_read;         /* for FtraceCpuStats.bytes_read */
	bool is_behind;              /* the controller's: not caught up yet */
};

/*
 * ftrace_cpu_reader_open() - Open @path (a trace_pipe_raw) non-blocking.
 * Return: 0; -errno from open() or -ENOMEM (@r is then closed).
 */
int ftrace_cpu_reader_open(struct ftrace_cpu_reader *r, const char *path, size_t page_size);

/*
 * ftrace_cpu_reader_next() - Read the next page; a partial page (the one
 * the kernel is still writing) is zero-padded to @page_size.
 * Return: the page (valid until the next call or close); NULL when the
 * kernel has nothing more now, or on a read error (*@err = -errno, else 0).
 * Context: the probes thread; never blocks, never allocates.
 */
const uint8_t *ftrace_cpu_reader_next(struct ftrace_cpu_reader *r, int *err);

/* Closes; safe on a closed reader or one whose open failed. */
void ftrace_cpu_reader_close(struct ftrace_cpu_reader *r);

#endif

// SPDX-License-Identifier: Apache-2.0
/*
 * ftrace_cpu_reader.c - one CPU's trace_pipe_raw, a page per read() (see
 * ftrace_cpu_reader.h). The kernel swaps a full page out of the ring
 * buffer and copies it to us; a partial page is copied record by record.
 */
#include "probes/ftrace_cpu_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/file.h"

int ftrace_cpu_reader_open(struct ftrace_cpu_reader *r, const char *path, size_t page_size)
{
	memset(r, 0, sizeof(*r));
	r->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (r->fd < 0)
		return -errno;
	r->page_size = page_size;
	r->page = malloc(page_size);
	if (!r->page) {
		ftrace_cpu_reader_close(r);
		return -ENOMEM;
	}
	return 0;
}

const uint8_t *ftrace_cpu_reader_next(struct ftrace_cpu_reader *r, int *err)
{
	ssize_t n;

	*err = 0;
	if (r->fd < 0)
		return NULL;
	n = read(r->fd, r->page, r->page_size);
	if (n <= 0) {
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			*err = -errno;
		return NULL;
	}
	if ((size_t)n < r->page_size)
		memset(r->page + n, 0, r->page_size - (size_t)n);
	r->bytes_read += (uint64_t)n;
	return r->page;
}

void ftrace_cpu_reader_close(struct ftrace_cpu_reader *r)
{
	free(r->page);
	r->page = NULL;
	fd_close(r->fd);
	r->fd = -1;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * file.c - whole-file reads, full writes and directory creation. Reads loop
 * until EOF instead of trusting st_size, which is 0 for /proc and tracefs.
 */
#include "base/file.h"
#include "base/buf.h"
#include "base/compiler.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILE_READ_CHUNK 4096

static int read_fd_all(int fd, struct buf *b, size_t max_bytes, size_t *out_n)
{
	size_t total = 0, want;
	ssize_t n;
	int err;

	for (;;) {
		/* Ask for one byte past the limit to tell "exactly max" from "more". */
		want = PFC_MIN((size_t)FILE_READ_CHUNK, max_bytes - total + 1);
		err = buf_reserve(b, want + 1);
		if (err)
			return err;
		n = PFC_EINTR_RETRY(read(fd, b->data + b->len, want));
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		b->len += (size_t)n;
		total += (size_t)n;
		if (total > max_bytes)
			return -EFBIG;
	}
	*out_n = total;
	return 0;
}

int file_read_all(const char *path, struct buf *b, size_t max_bytes)
{
	size_t old_len = b->len, n = 0;
	int fd, err;

	if (max_bytes > INT_MAX)
		max_bytes = INT_MAX;
	fd = PFC_EINTR_RETRY(open(path, O_RDONLY | O_CLOEXEC));
	if (fd < 0)
		return -errno;
	err = read_fd_all(fd, b, max_bytes, &n);
	fd_close(fd);
	if (err) {
		b->len = old_len;
		if (b->cap > b->len)
			b->data[b->len] = '\0';
		return err;
	}
	b->data[b->len] = '\0';
	return (int)n;
}

int file_write_all(int fd, const void *data, size_t len)
{
	const uint8_t *p = data;
	ssize_t n;

	while (len) {
		n = PFC_EINTR_RETRY(write(fd, p, len));
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int file_write_str(const char *path, const char *str)
{
	size_t len = strlen(str);
	ssize_t n;
	int fd, err = 0;

	fd = PFC_EINTR_RETRY(open(path, O_WRONLY | O_CLOEXEC));
	if (fd < 0)
		return -errno;
	n = PFC_EINTR_RETRY(write(fd, str, len));
	if (n < 0)
		err = -errno;
	else if ((size_t)n != len)
		err = -EIO;
	fd_close(fd);
	return err;
}

bool file_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

void fd_close(int fd)
{
	int saved = errno;

	if (fd >= 0)
		close(fd);
	errno = saved;
}

int fd_set_nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0)
		return -errno;
	if (flags & O_NONBLOCK)
		return 0;
	if (fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

static int mkdir_one(const char *path, mode_t mode)
{
	struct stat st;

	if (mkdir(path, mode) == 0)
		return 0;
	if (errno != EEXIST)
		return -errno;
	if (stat(path, &st) != 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int mkdir_p(const char *path, mode_t mode)
{
	char tmp[PATH_MAX];
	size_t len = strlen(path), i;
	int err;

	if (len == 0)
		return -ENOENT;
	if (len >= sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(tmp, path, len + 1);
	for (i = 1; i < len; i++) {
		if (tmp[i] != '/' || tmp[i - 1] == '/')
			continue;
		tmp[i] = '\0';
		err = mkdir_one(tmp, mode);
		tmp[i] = '/';
		if (err)
			return err;
	}
	return mkdir_one(tmp, mode);
}

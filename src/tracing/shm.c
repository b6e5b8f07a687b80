// SPDX-License-Identifier: Apache-2.0
/*
 * shm.c - creating, mapping and unmapping shared memory buffers: sealed
 * memfds (falling back to an unlinked O_TMPFILE), fds received from a peer
 * (size checked with fstat before mmap, so a short file cannot SIGBUS us),
 * and private buffers for SMB emulation. Setup-time only; allocates.
 */
#include "tracing/tracing.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/compiler.h"

#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 0x0001u
#endif
#ifndef MFD_ALLOW_SEALING
#define MFD_ALLOW_SEALING 0x0002u
#endif
#ifndef F_ADD_SEALS
#define F_ADD_SEALS 1033
#define F_GET_SEALS 1034
#define F_SEAL_SEAL 0x0001
#define F_SEAL_SHRINK 0x0002
#define F_SEAL_GROW 0x0004
#endif

#define SHM_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

int shm_check_size(size_t size, size_t page_size)
{
	size_t n_pages;

	if (page_size < SMB_MIN_PAGE_SIZE || page_size > SMB_MAX_PAGE_SIZE ||
	    page_size % SMB_MIN_PAGE_SIZE)
		return -EINVAL;
	if (size == 0 || size > SHM_MAX_SIZE_BYTES || size % page_size)
		return -EINVAL;
	n_pages = size / page_size;
	return (n_pages & (n_pages - 1)) == 0 ? 0 : -EINVAL;
}

static int open_memfd(void)
{
	return memfd_create("perfetto_shmem", MFD_CLOEXEC | MFD_ALLOW_SEALING);
}

static int open_tmpfile(void)
{
	static const char *const dirs[] = {"/dev/shm", "/tmp"};
	size_t i;
	int fd = -1;

	for (i = 0; i < PFC_ARRAY_SIZE(dirs); i++) {
		fd = open(dirs[i], O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		if (fd >= 0)
			return fd;
	}
	return -1;
}

/* Maps @fd (or anonymous memory when @fd is -1) and wraps it; the caller
 * keeps @fd on failure. */
static int shm_map(int fd, size_t size, int map_flags, struct shm **out)
{
	struct shm *shm;
	void *base;

	base = mmap(NULL, size, PROT_READ | PROT_WRITE, map_flags, fd, 0);
	if (base == MAP_FAILED)
		return -errno;
	shm = calloc(1, sizeof(*shm));
	if (!shm) {
		munmap(base, size);
		return -ENOMEM;
	}
	shm->fd = fd;
	shm->base = base;
	shm->size = size;
	*out = shm;
	return 0;
}

int shm_create(size_t size, size_t page_size, struct shm **out)
{
	bool is_memfd = true;
	int fd = -1, err;

	err = shm_check_size(size, page_size);
	if (err < 0)
		return err;
	fd = open_memfd();
	if (fd < 0) {
		is_memfd = false;
		fd = open_tmpfile();
		if (fd < 0)
			return -errno;
	}
	if (ftruncate(fd, (off_t)size) < 0) {
		err = -errno;
		goto fail;
	}
	/* Seals stop the peer from shrinking the file under our mapping. */
	if (is_memfd && fcntl(fd, F_ADD_SEALS, SHM_SEALS) < 0) {
		err = -errno;
		goto fail;
	}
	err = shm_map(fd, size, MAP_SHARED, out);
	if (err < 0)
		goto fail;
	return 0;
fail:
	close(fd);
	return err;
}

int shm_map_fd(int fd, size_t expected_size, size_t page_size, unsigned flags,
	       struct shm **out)
{
	struct stat st;
	size_t size = 0;
	int err, seals;

	if (fd < 0)
		return -EBADF;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto fail;
	}
	if (!S_ISREG(st.st_mode) || st.st_size <= 0) {
		err = -EINVAL;
		goto fail;
	}
	size = (size_t)st.st_size;
	if ((expected_size && size != expected_size) || shm_check_size(size, page_size) < 0) {
		err = -EINVAL;
		goto fail;
	}
	if (flags & SHM_MAP_REQUIRE_SEALS) {
		seals = fcntl(fd, F_GET_SEALS);
		if (seals < 0 || (seals & SHM_SEALS) != SHM_SEALS) {
			err = -EINVAL;
			goto fail;
		}
	}
	err = shm_map(fd, size, MAP_SHARED, out);
	if (err < 0)
		goto fail;
	return 0;
fail:
	close(fd);
	return err;
}

int shm_create_private(size_t size, size_t page_size, struct shm **out)
{
	int err = shm_check_size(size, page_size);

	if (err < 0)
		return err;
	return shm_map(-1, size, MAP_PRIVATE | MAP_ANONYMOUS, out);
}

void shm_destroy(struct shm *shm)
{
	if (!shm)
		return;
	if (shm->base)
		munmap(shm->base, shm->size);
	if (shm->fd >= 0)
		close(shm->fd);
	free(shm);
}

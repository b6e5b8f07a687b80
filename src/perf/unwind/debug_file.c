// SPDX-License-Identifier: Apache-2.0
/*
 * debug_file.c - a module's separate debug file on local disk (see
 * debug_file.h): libdw's build-id lookup, then the .gnu_debuglink name in
 * the three folders GDB and libdw search, each candidate checked against
 * the module before it is used.
 */
#include "perf/unwind/debug_file.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define DEBUG_FILE_GLOBAL_DIR "/usr/lib/debug"

static bool is_same_file(int fd, const char *path)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* The CRC-32 .gnu_debuglink carries (zlib's polynomial) of the whole file. */
static bool crc_matches(int fd, uint32_t want)
{
	unsigned char chunk[65536];
	uLong crc = crc32(0, NULL, 0);
	off_t off = 0;
	ssize_t n;

	while ((n = pread(fd, chunk, sizeof(chunk), off)) > 0) {
		crc = crc32(crc, chunk, (uInt)n);
		off += n;
	}
	return n == 0 && (uint32_t)crc == want;
}

static bool build_id_matches(int fd, const unsigned char *bits, int n_bits)
{
	const void *id;
	ssize_t n;
	Elf *elf;
	bool ok;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return false;
	n = dwelf_elf_gnu_build_id(elf, &id);
	ok = n > 0 && n == n_bits && memcmp(id, bits, (size_t)n_bits) == 0;
	elf_end(elf);
	return ok;
}

/* Tries @link beside @file, in its .debug folder and under /usr/lib/debug. */
static int find_by_link(const char *file, const char *link, const unsigned char *bits,
			int n_bits, uint32_t crc, char **out_name)
{
	const char *slash = strrchr(file, '/');
	int dir_len = (int)(slash - file), i, fd;
	char path[PATH_MAX];

	for (i = 0; i < 3; i++) {
		int n = i == 0 ? snprintf(path, sizeof(path), "%.*s/%s", dir_len, file, link)
			: i == 1 ? snprintf(path, sizeof(path), "%.*s/.debug/%s", dir_len, file, link)
				 : snprintf(path, sizeof(path), DEBUG_FILE_GLOBAL_DIR "%.*s/%s",
					    dir_len, file, link);

		if (n < 0 || (size_t)n >= sizeof(path))
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!is_same_file(fd, file) &&
		    (n_bits > 0 ? build_id_matches(fd, bits, n_bits) : crc_matches(fd, crc))) {
			*out_name = strdup(path);
			if (*out_name)
				return fd;
		}
		close(fd);
	}
	return -1;
}

int debug_file_find(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		    const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
		    char **debuginfo_file_name)
{
	const unsigned char *bits = NULL;
	char real[PATH_MAX];
	GElf_Addr vaddr;
	int fd, n_bits;

	fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
					  debuglink_crc, debuginfo_file_name);
	if (fd >= 0)
		return fd;
	if (!debuglink_file || !*debuglink_file || strchr(debuglink_file, '/') || !file_name ||
	    file_name[0] != '/')
		return -1;
	n_bits = dwfl_module_build_id(mod, &bits, &vaddr);
	fd = find_by_link(file_name, debuglink_file, bits, n_bits, debuglink_crc,
			  debuginfo_file_name);
	/* A symlink's debug file may sit by its target instead. */
	if (fd < 0 && realpath(file_name, real) && strcmp(real, file_name) != 0)
		fd = find_by_link(real, debuglink_file, bits, n_bits, debuglink_crc,
				  debuginfo_file_name);
	if (fd < 0)
		errno = ENOENT;
	return fd;
}

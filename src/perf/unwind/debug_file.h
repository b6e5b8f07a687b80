/* SPDX-License-Identifier: Apache-2.0 */
/*
 * debug_file.h - a module's separate debug file, looked up on this
 * machine's disk only: by build id under the debuginfo path's .build-id
 * folders (Debian's -dbgsym packages), then by its .gnu_debuglink name
 * beside the file, in its .debug folder and under /usr/lib/debug. A
 * profiler never fetches over the network (libdw's standard lookup would
 * end in debuginfod, and loading that client alone pulls ~25 libraries
 * into the daemon in the middle of a session).
 */
#ifndef PFC_PERF_DEBUG_FILE_H
#define PFC_PERF_DEBUG_FILE_H

#include <elfutils/libdwfl.h>
#include <stdint.h>

/**
 * debug_file_find() - A Dwfl_Callbacks.find_debuginfo for local files:
 * the arguments are libdw's. A debuglink candidate is accepted when its
 * build id is the module's (or, for a module without one, when its CRC-32
 * is @debuglink_crc) and it is not the module's own file.
 * Return: an open fd (*@debuginfo_file_name set to a malloc'd path), or -1.
 */
int debug_file_find(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		    const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
		    char **debuginfo_file_name);

#endif

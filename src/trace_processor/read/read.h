/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read.h - the read layer: one trace from a file or a pipe into the
 * tables. It frames, tokenizes, sorts and parses (on two threads), and
 * drives every importer (the import layer) through the import context;
 * what the facade (tp.c) calls.
 */
#ifndef PFC_TRACE_PROCESSOR_READ_READ_H
#define PFC_TRACE_PROCESSOR_READ_READ_H

#include <stdbool.h>

struct tp_db;
struct tp_read;

struct tp_read_options {
	bool progress;              /* MB read and MB/s on stderr while importing */
	bool no_ftrace_raw;         /* no ftrace_event rows */
	bool analyze_proto_content; /* arg sets of track event (category, name) pairs */
	bool crop_track_events;     /* drop track events before the range of interest */
};

/*
 * tp_read_create() - An import into @db (borrowed; outlives the result).
 * Return: 0 and *@out (free with tp_read_destroy()), or -ENOMEM.
 */
int tp_read_create(struct tp_db *db, const struct tp_read_options *opt, struct tp_read **out);
void tp_read_destroy(struct tp_read *r);
/*
 * tp_read_fd() - Read a whole trace from @fd and import it (see
 * tp_import_fd() in trace_processor.h, which is this).
 * Return: 0; -EALREADY for a second trace; the errors of tp_import_fd().
 */
int tp_read_fd(struct tp_read *r, int fd, const char *name);

#endif

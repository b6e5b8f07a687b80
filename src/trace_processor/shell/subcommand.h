/* SPDX-License-Identifier: Apache-2.0 */
/*
 * subcommand.h - Perfetto's command-style command line (`query`,
 * `interactive`, `server`, `export`, `help`) turned into the classic flags
 * shell.c parses (subcommand.c). Used by cli.c.
 */
#ifndef PFC_TRACE_PROCESSOR_SHELL_SUBCOMMAND_H
#define PFC_TRACE_PROCESSOR_SHELL_SUBCOMMAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/buf.h"

/* A classic command line built from a command-style one. */
struct shell_argv {
	char **v;        /* NULL-terminated; the strings are borrowed or in @sql */
	size_t n, cap;
	struct buf sql;  /* SQL read from stdin, if any */
};

enum sub_result {
	SUB_RUN,   /* run the classic shell with the built command line */
	SUB_DONE,  /* done (help printed): exit 0 */
	SUB_USAGE, /* print the general help: exit 0 */
	SUB_ERROR, /* the reason was printed: exit 1 */
};

/* True if @arg (argv[1]) names a command of Perfetto's shell (ours or not). */
bool shell_is_subcommand(const char *arg);

/*
 * shell_subcommand() - Check the command line @argv (argv[1] a command)
 * as Perfetto's shell does and build the classic one in @out (free it
 * with shell_argv_fini() whatever the result). Reads stdin when the SQL
 * of `query` comes from there.
 */
enum sub_result shell_subcommand(int argc, char **argv, struct shell_argv *out);
void shell_argv_fini(struct shell_argv *a);

/* The list of commands, for the general help. */
void shell_subcommands_usage(FILE *f);

#endif

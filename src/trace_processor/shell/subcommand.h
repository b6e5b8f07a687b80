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
#include <stdint.h>
#include <stdio.h>

#include "base/buf.h"

/* A classic command line built from a command-style one. */
struct shell_argv {
	char **v;        /* NULL-terminated; the strings are borrowed or in @sql */
	size_t n, cap;
	struct buf sql;  /* SQL read from stdin, if any */
	const char *remote;       /* SUB_REMOTE: the session's address */
	const char *remote_sql;   /* SUB_REMOTE: the SQL */
	bool wide;                /* SUB_REMOTE: interactive's --wide */
	bool then_repl;           /* SUB_REMOTE: query -i: the REPL after the SQL */
	char socket_path[256];    /* server unix: the socket (--unixd's value) */
	char session_name[80];    /* server unix: the name */
	char idle_ms[16];         /* server unix: --unixd-idle-ms's value */
};

enum sub_result {
	SUB_RUN,   /* run the classic shell with the built command line */
	SUB_DONE,  /* done (help printed): exit 0 */
	SUB_USAGE, /* print the general help: exit 0 */
	SUB_ERROR, /* the reason was printed: exit 1 */
	SUB_REMOTE, /* query --remote: shell_remote_query(remote, remote_sql);
		     * interactive --remote (remote_sql NULL): shell_remote_interactive() */
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

/* session.c: Perfetto's warm sessions (`server unix`, `query --remote`). */
enum addr_kind { ADDR_NAME, ADDR_PATH, ADDR_HTTP };

bool shell_session_name_ok(const char *s);
/* A *.sock or absolute path, a session name, or (anything else) HTTP. */
enum addr_kind shell_session_addr_kind(const char *addr);
/* $XDG_RUNTIME_DIR|$TMPDIR|/tmp + /perfetto/NAME.sock (the folder made 0700).
 * Return: 0, or -errno after saying why. */
int shell_session_path(const char *name, char *out, size_t size);
void shell_session_new_name(char *out, size_t size);
/* "30s", "5m", "2h", "90" (seconds), "never"/"off"/"0". Return: 0 or -EINVAL/-ERANGE. */
int shell_session_parse_ms(const char *s, uint32_t *out);
/* `server kill ADDR`. Return: the exit code. */
int shell_server_kill(const char *addr);
struct tp_client;
/* Connect to the session at @addr (a unix session, or `server http` at
 * HOST:PORT). Return: 0, or -1 after saying why. */
int shell_session_connect(const char *addr, struct tp_client *out);
/* remote_repl.c: `interactive --remote ADDR`. Return: the exit code. */
int shell_remote_interactive(const char *addr, bool wide);
/* `query --remote ADDR SQL`: output as a local `query`. Return: the exit code. */
int shell_remote_query(const char *addr, const char *sql);

#endif

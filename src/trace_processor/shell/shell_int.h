/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shell_int.h - private to shell/: what cli.c asks of shell.c, and what
 * shell.c asks of hint.c, sql_packages.c and serve.c.
 */
#ifndef PFC_TRACE_PROCESSOR_SHELL_SHELL_INT_H
#define PFC_TRACE_PROCESSOR_SHELL_SHELL_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct buf;
struct sqlite3;
struct tp;
struct tp_options;

/*
 * shell_classic_main() - Perfetto's classic flat command line: import the
 * trace, then -q/-Q queries (CSV on stdout), -e export, --httpd/--stdiod
 * and/or the interactive shell. Return: the exit code (0, or 1).
 */
int shell_classic_main(int argc, char **argv);

/*
 * shell_column_hint() - Explain a "no such column: X" error: which table of
 * the statement lacks X, and either the table (joined through utid, upid or
 * track_id) that has it, or the nearest column name of the table.
 * @db:      the connection the statement failed on (borrowed; only read).
 * @errmsg:  SQLite's message for the failure.
 * @sql:     the failing statement, @sql_len bytes (not NUL-terminated).
 * @out:     receives one line of text, without "Hint: " or a newline.
 * Return: 1 if a hint was appended to @out, 0 if there is none (not a
 * missing column, or no table of the statement found), -ENOMEM.
 */
int shell_column_hint(struct sqlite3 *db, const char *errmsg, const char *sql, size_t sql_len,
		      struct buf *out);

/*
 * shell_module_hint() - For "no such table: X" or "no such function: X"
 * when a module of the standard library defines X: appends the module's
 * name to @out.
 * Return: 1 if appended, 0 if no module defines it, -ENOMEM.
 */
int shell_module_hint(struct sqlite3 *db, const char *errmsg, struct buf *out);

/* The SQL packages of the command line. */
struct shell_sql_packages {
	const char **add;          /* --add-sql-package PATH[@PKG], in order */
	size_t n_add;
	const char **override;     /* --override-sql-package PATH[@PKG] */
	size_t n_override;
	const char *override_stdlib; /* --override-stdlib PATH, or NULL */
	bool dev;                  /* --dev: what --override-stdlib needs */
};

/*
 * shell_sql_packages() - Register the packages of @sp with @tp, as
 * Perfetto's shell does before loading the trace: --override-stdlib (with
 * --dev only), then each --override-sql-package, then each
 * --add-sql-package. Prints Perfetto's message on stderr on failure
 * ("Couldn't add SQL package: Directory x does not exist.").
 * Return: 0 or -1.
 */
int shell_sql_packages(struct tp *tp, const struct shell_sql_packages *sp);

/* --httpd's flags as given (NULL: the default), or --stdiod. */
struct shell_httpd {
	const char *port;          /* --http-port */
	const char *ip;            /* --http-ip-address */
	const char *cors;          /* --http-additional-cors-origins, comma-separated */
	bool stdio;                /* --stdiod: the RPC stream on stdin/stdout instead */
	const char *unix_path;     /* --unixd PATH: on an AF_UNIX socket instead */
	const char *unix_name;     /* --unixd-name */
	const char *unix_idle_ms;  /* --unixd-idle-ms */
	const char *unix_idle_start; /* --unixd-idle-start */
	bool unix_daemonize;       /* --unixd-daemonize */
};

/*
 * shell_httpd() - Serve @tp (its trace imported from @name, @size bytes;
 * taken over and destroyed) or, if @tp is NULL, a new engine with @opt
 * and the SQL packages @sp, until SIGINT or SIGTERM (with @h->stdio: until
 * stdin's end).
 * Return: 0, or 1 after printing why it could not start.
 */
int shell_httpd(const struct tp_options *opt, const struct shell_sql_packages *sp, struct tp *tp,
		const char *name, uint64_t size, const struct shell_httpd *h);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_processor.h - the trace processor's interface: import a Perfetto
 * trace (read -> tokenize -> sort -> parse, see ARCHITECTURE.md) into the
 * columnar tables of storage/storage.h, then query them with SQL through
 * SQLite (sql/sql.h). trace_processor_shell (shell/) is a thin CLI over
 * this; tp.c implements it.
 *
 * The trace processor is built in layers, one folder each, and each
 * folder offers one header; a layer includes and calls only the layers
 * below it (tools/layers.rules holds this, `make check` checks it):
 *
 *   shell/                 trace_processor_shell          shell.h
 *     this header, tp.c    the facade: tables + read + SQL
 *   sql/                   SQLite over the tables         sql.h
 *   read/                  input, framing, tokenizer,     read.h
 *                          sorter, the two-thread pipe,
 *                          dispatch to the importers
 *   import/<family>/       one importer per data family:  <family>.h
 *                          ftrace, track_event, android,
 *                          chrome, generic_kernel, system
 *   import/common/         what every importer builds on: common.h
 *                          processes, threads, sched,
 *                          tracks, slices, args, stats,
 *                          metadata, clocks, sequences
 *   storage/               strings, columns, tables       storage.h
 *
 * shell -> facade -> {sql, read}; sql -> storage; read -> import/<family>
 * -> import/common -> storage. The importers do not use each other. Only
 * the facade, sql/ and shell/ use SQLite; read/ and import/ read the trace
 * with protozero/; every layer may use base/. README.md in this folder
 * says more.
 */
#ifndef PFC_TRACE_PROCESSOR_TRACE_PROCESSOR_H
#define PFC_TRACE_PROCESSOR_TRACE_PROCESSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sqlite3;
struct sqlite3_stmt;
struct tp;
struct tp_db;

struct tp_options {
	bool full_sort;          /* --full-sort (we always sort fully today) */
	bool progress;           /* print MB read and MB/s to stderr while importing */
	bool no_ftrace_raw;      /* no ftrace_event rows (Perfetto's --no-ftrace-raw) */
	bool analyze_proto_content; /* arg sets of track event (category, name) pairs */
	bool crop_track_events;  /* drop track events before the range of interest */
};

/* Return: 0 or -ENOMEM. */
int tp_create(const struct tp_options *opt, struct tp **out);
void tp_destroy(struct tp *tp);

/*
 * tp_import_fd() - Read a whole trace from @fd (a file or a pipe) and
 * import it; @name is for messages. What is malformed is skipped, counted
 * in `stats` and reported once on stderr: a truncated trace, or garbage
 * after valid packets, imports the packets before it and returns 0. An
 * empty input is an empty trace.
 * Return: 0; the -errno of a failed read (-EISDIR for a directory, -EIO,
 * ...); -EINVAL if the input is not a trace, i.e. does not start with a
 * TracePacket (the message says so); -ENOMEM.
 */
int tp_import_fd(struct tp *tp, int fd, const char *name);

/*
 * tp_sqlite() - The SQLite connection with every table and view attached
 * (created on first use, after the import).
 * Return: the connection (borrowed) or NULL if SQLite failed to start.
 */
struct sqlite3 *tp_sqlite(struct tp *tp);

/*
 * tp_prepare() - sqlite3_prepare_v2() of the first statement of @sql on
 * tp_sqlite(), where GROUP BY aggregates of the shape sql/agg/agg.h describes
 * are computed natively now and the statement reads their result.
 * *@out may be NULL (only blanks or a comment); *@out_tail is where the
 * next statement starts. PerfettoSQL (sql.h: tp_sql_prepare()): macro
 * calls are expanded first; "INCLUDE PERFETTO MODULE name;" and the
 * CREATE PERFETTO TABLE / VIEW / FUNCTION / MACRO / INDEX statements run
 * now and give a statement with no result columns, or one that fails
 * with Perfetto's message when stepped. A statement of the native path reads a result
 * kept until 8 newer ones are made: step it before preparing many more.
 * Return: SQLITE_OK, or SQLite's error code (sqlite3_errmsg() says why).
 */
int tp_prepare(struct tp *tp, const char *sql, struct sqlite3_stmt **out, const char **out_tail);

/*
 * tp_prepare_in() - tp_prepare() of the statement at @sql, a position in
 * the query text @doc (a -q file): errors name @doc's lines and columns.
 */
int tp_prepare_in(struct tp *tp, const char *doc, const char *sql, struct sqlite3_stmt **out,
		  const char **out_tail);

/*
 * tp_error() - The error of the statement prepared last, as Perfetto
 * prints it: "Traceback (most recent call last):", one frame per text
 * it came through (the query, modules, macros) with a caret, then the
 * message. @step_msg: sqlite3_errmsg() after stepping the statement
 * failed; NULL after tp_prepare*() failed.
 * Return: the text (sqlite3_free it), or NULL if out of memory.
 */
char *tp_error(struct tp *tp, const char *step_msg);

/**
 * tp_register_sql_package() - Register SQL package @name for INCLUDE
 * PERFETTO MODULE (Perfetto's RegisterSqlPackage, what the shell's
 * --add-sql-package / --override-sql-package and the RPC's
 * TPM_REGISTER_SQL_PACKAGE do), before or after the import.
 * @n: its modules; module i is named @names[i], its include key
 *     ("name.sub.mod": it must start with "@name."), and its text is
 *     [@sqls[i], @sqls[i] + @sql_lens[i]) (copied).
 * @allow_override: a package of the same name (ours included) is replaced,
 *     if none of its modules was included yet; without it that is an error.
 * Package names are no prefixes of each other ("linux.foo" clashes with
 * "linux").
 * Return: 0, -ENOMEM, or -EINVAL with *@err (free() it) Perfetto's message,
 * e.g. "Package 'linux' is already registered. Choose a different name.".
 */
int tp_register_sql_package(struct tp *tp, const char *name, size_t n, const char *const *names,
			    const char *const *sqls, const size_t *sql_lens, bool allow_override,
			    char **err);

/**
 * tp_list_sql_modules() - Calls @fn with every module of our standard
 * library, in name order: its name (what INCLUDE PERFETTO MODULE takes)
 * and a one-line summary (the first sentence of its header comment, ""
 * if it has none). Needs no trace.
 * Return: 0 or -ENOMEM.
 */
int tp_list_sql_modules(void (*fn)(void *ctx, const char *name, const char *summary), void *ctx);

/*
 * tp_restore_initial_tables() - Drop every table, view, function, macro
 * and included module that SQL added since the import (Perfetto's
 * RestoreInitialTables): the next query starts on a fresh connection
 * over the trace's tables. Registered SQL packages stay.
 */
void tp_restore_initial_tables(struct tp *tp);

/* The tables (borrowed). */
struct tp_db *tp_get_db(struct tp *tp);

#endif

// SPDX-License-Identifier: Apache-2.0
/*
 * tp.c - the trace processor's facade (trace_processor.h): one trace, its
 * tables (storage/), its import (read/, which drives the importers) and
 * the SQLite connection over the result (sql/). The shell, tests and
 * benchmarks use nothing else.
 */
#include "trace_processor/trace_processor.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "trace_processor/read/read.h"
#include "trace_processor/sql/sql.h"
#include "trace_processor/storage/storage.h"

struct tp {
	struct tp_db db;
	struct tp_read *read;
	struct tp_sql *sql;      /* made on first use, after the import */
	struct tp_sql_modules *modules; /* what INCLUDE runs: ours and packages */
};

int tp_create(const struct tp_options *opt, struct tp **out)
{
	struct tp_read_options ro = {0};
	struct tp *tp = calloc(1, sizeof(*tp));
	int rc;

	if (!tp)
		return -ENOMEM;
	if (opt) {
		ro.progress = opt->progress;
		ro.no_ftrace_raw = opt->no_ftrace_raw;
		ro.analyze_proto_content = opt->analyze_proto_content;
		ro.crop_track_events = opt->crop_track_events;
	}
	rc = tp_db_init(&tp->db);
	if (rc < 0) {
		free(tp);
		return rc;
	}
	rc = tp_sql_modules_create(&tp->modules);
	if (rc < 0) {
		tp_db_fini(&tp->db);
		free(tp);
		return rc;
	}
	rc = tp_read_create(&tp->db, &ro, &tp->read);
	if (rc < 0) {
		tp_destroy(tp);
		return rc;
	}
	*out = tp;
	return 0;
}

void tp_destroy(struct tp *tp)
{
	if (!tp)
		return;
	tp_sql_destroy(tp->sql);
	tp_sql_modules_destroy(tp->modules);
	tp_read_destroy(tp->read);
	tp_db_fini(&tp->db);
	free(tp);
}

int tp_import_fd(struct tp *tp, int fd, const char *name)
{
	return tp_read_fd(tp->read, fd, name);
}

void tp_restore_initial_tables(struct tp *tp)
{
	/* What SQL made lives on the connection: a new one has none of it. */
	tp_sql_destroy(tp->sql);
	tp->sql = NULL;
	tp_sql_modules_reset(tp->modules);
}

struct tp_db *tp_get_db(struct tp *tp)
{
	return &tp->db;
}

struct sqlite3 *tp_sqlite(struct tp *tp)
{
	if (!tp->sql && tp_sql_create(&tp->db, tp->modules, &tp->sql) < 0)
		tp->sql = NULL;
	return tp->sql ? tp_sql_conn(tp->sql) : NULL;
}

int tp_prepare(struct tp *tp, const char *sql, struct sqlite3_stmt **out, const char **out_tail)
{
	if (!tp_sqlite(tp))
		return SQLITE_NOMEM;
	return tp_sql_prepare(tp->sql, sql, out, out_tail);
}

int tp_prepare_in(struct tp *tp, const char *doc, const char *sql, struct sqlite3_stmt **out,
		  const char **out_tail)
{
	if (!tp_sqlite(tp))
		return SQLITE_NOMEM;
	return tp_sql_prepare_in(tp->sql, doc, sql, out, out_tail);
}

char *tp_error(struct tp *tp, const char *step_msg)
{
	if (!tp->sql)
		return sqlite3_mprintf("%s", step_msg ? step_msg : "cannot start SQLite");
	return tp_sql_error(tp->sql, step_msg);
}

int tp_register_sql_package(struct tp *tp, const char *name, size_t n, const char *const *names,
			    const char *const *sqls, const size_t *sql_lens, bool allow_override,
			    char **err)
{
	char *msg = NULL;
	int rc = tp_sql_modules_register(tp->modules, name, n, names, sqls, sql_lens,
					 allow_override, &msg);

	*err = NULL;
	if (msg) {
		*err = strdup(msg);
		sqlite3_free(msg);
		if (!*err)
			rc = -ENOMEM;
	}
	return rc;
}

int tp_list_sql_modules(void (*fn)(void *ctx, const char *name, const char *summary), void *ctx)
{
	struct tp_sql_modules *m;
	int rc = tp_sql_modules_create(&m);

	if (rc < 0)
		return rc;
	tp_sql_modules_list(m, fn, ctx);
	tp_sql_modules_destroy(m);
	return 0;
}

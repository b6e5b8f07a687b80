/* SPDX-License-Identifier: Apache-2.0 */
/*
 * modules.h - private to sql/: the PerfettoSQL modules we provide, built
 * from the .sql files under sql/modules/ by tools/gen_sql_modules.sh into
 * tp_sql_modules.c, and read by include.c.
 */
#ifndef PFC_TRACE_PROCESSOR_SQL_MODULES_H
#define PFC_TRACE_PROCESSOR_SQL_MODULES_H

/* One module: its dotted name ("linux.perf.samples") and its SQL. */
struct tp_sql_module {
	const char *name;
	const char *sql;
};

/* Sorted by file path; ends with {NULL, NULL}. */
extern const struct tp_sql_module tp_sql_modules[];

#endif

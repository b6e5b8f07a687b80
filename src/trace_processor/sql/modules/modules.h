/* SPDX-License-Identifier: Apache-2.0 */
/*
 * modules.h - sql/modules/, the PerfettoSQL modules we provide: the .sql
 * files of this folder, sql/modules/<package>/.../<name>.sql being module
 * <package>.....<name>, built into the library as one table by
 * tools/gen_sql_modules.sh (out/gen/tp_sql_modules.c). The one header of
 * the folder; psql/psql_modules.c reads it.
 */
#ifndef PFC_TRACE_PROCESSOR_SQL_MODULES_MODULES_H
#define PFC_TRACE_PROCESSOR_SQL_MODULES_MODULES_H

/* One module: its dotted name ("linux.perf.samples") and its SQL. */
struct tp_sql_module {
	const char *name;
	const char *sql;
};

/* Sorted by file path; ends with {NULL, NULL}. */
extern const struct tp_sql_module tp_sql_modules[];

#endif

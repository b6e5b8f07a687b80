/* SPDX-License-Identifier: Apache-2.0 */
/*
 * metrics.h - sql/metrics/, the metric files RUN_METRIC('path') runs: the
 * .sql files of this folder, sql/metrics/<dir>/<name>.sql being the file
 * "<dir>/<name>.sql" (the paths Perfetto's metrics use), built into the
 * library as one table by tools/gen_sql_metrics.sh
 * (out/gen/tp_sql_metrics.c). The one header of the folder;
 * psql/psql_metric.c reads it.
 */
#ifndef PFC_TRACE_PROCESSOR_SQL_METRICS_METRICS_H
#define PFC_TRACE_PROCESSOR_SQL_METRICS_METRICS_H

/* One metric file: its path ("android/cpu_info.sql") and its SQL. */
struct tp_sql_metric {
	const char *path;
	const char *sql;
};

/* Sorted by path; ends with {NULL, NULL}. */
extern const struct tp_sql_metric tp_sql_metrics[];

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * batch_out.h - where pfc_batch_query appends its results: a CSV file
 * (one row per trace, query and result row, the row as a JSON object) or
 * a SQLite database (a table per query with the query's own columns).
 */
#ifndef PFC_TRACE_PROCESSOR_BATCH_BATCH_OUT_H
#define PFC_TRACE_PROCESSOR_BATCH_BATCH_OUT_H

#include <stddef.h>

/* Opens @out for appending as @format ("csv" or "sqlite") and closes it,
 * so a bad output fails before any work. Return: 0, or -1 (reported). */
int batch_out_check(const char *out, const char *format);

/*
 * batch_out_write() - Append the results the workers left in @dir (one
 * file per trace, named by its index) in trace order. Failures of a trace
 * or a query are reported on stderr and written to the output too.
 * Return: 0 if every trace and query succeeded, -1 otherwise.
 */
int batch_out_write(const char *out, const char *format, const char *dir, char *const *traces,
		    size_t n_traces, char *const *queries, size_t n_queries);

#endif

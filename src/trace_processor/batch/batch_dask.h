/* SPDX-License-Identifier: Apache-2.0 */
/*
 * batch_dask.h - pfc_batch_query --dask: its traces run on a Dask
 * distributed cluster through the Python helper perfetto_c.batch_query_dask.
 */
#ifndef PFC_TRACE_PROCESSOR_BATCH_BATCH_DASK_H
#define PFC_TRACE_PROCESSOR_BATCH_BATCH_DASK_H

#include <stddef.h>

/*
 * batch_dask_run() - Run every query file on every trace on the workers of
 * the Dask scheduler at @addr; the result of trace i goes to @dir/i in the
 * format of batch_record.h. Return: 0, or -1 when the helper could not run
 * or reach the cluster (it said why on stderr).
 */
int batch_dask_run(const char *addr, const char *dir, char *const *queries, size_t n_queries,
		   char *const *traces, size_t n_traces);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * batch.h - pfc_batch_query: a folder of .sql files run over many traces,
 * one worker process per core, every result row appended to one CSV file
 * or SQLite database with the trace's path, time span and machine names
 * (the "same queries over every day's recording" metrics table).
 */
#ifndef PFC_TRACE_PROCESSOR_BATCH_BATCH_H
#define PFC_TRACE_PROCESSOR_BATCH_BATCH_H

/* The program; returns its exit status (0, 1 when a trace or query
 * failed, 2 for a bad command line). */
int batch_main(int argc, char **argv);

#endif

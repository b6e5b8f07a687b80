/* SPDX-License-Identifier: Apache-2.0 */
/*
 * flamegraph.h - the flamegraph layer, beside the shell at the top of the
 * trace processor: `pfc_flamegraph` as a library function (main.c is one
 * call). It uses the library's interface (trace_processor.h) and SQL only:
 * the samples and stack tables are read with a few queries, then folded
 * and drawn in C.
 */
#ifndef PFC_TRACE_PROCESSOR_FLAMEGRAPH_FLAMEGRAPH_H
#define PFC_TRACE_PROCESSOR_FLAMEGRAPH_FLAMEGRAPH_H

/*
 * tp_flamegraph_main() - Import the trace named on the command line and
 * write the folded stacks and/or the SVG flame graph of its CPU samples.
 * Return: the process exit code (0, or 1 on any error or nothing to show).
 * Context: the main thread of a CLI; prints, blocks.
 */
int tp_flamegraph_main(int argc, char **argv);

#endif

// SPDX-License-Identifier: Apache-2.0
/*
 * convert.h - `trace_processor_shell convert FORMAT ...`, Perfetto's
 * trace conversions (traceconv): here `profile`, a trace's heap profiles
 * as pprof profiles (profile.proto), one file per process, heap and dump.
 */
#ifndef PFC_TRACE_PROCESSOR_CONVERT_CONVERT_H
#define PFC_TRACE_PROCESSOR_CONVERT_CONVERT_H

/* argv[0] is "convert". Return: the exit status. */
int tp_convert_main(int argc, char **argv);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shell.h - the shell layer, the top of the trace processor:
 * `trace_processor_shell` as a library function, so main.c is one call and
 * tracebox could add it as an applet. It uses the library's interface
 * (trace_processor.h) and reads the tables (storage.h) to export them.
 */
#ifndef PFC_TRACE_PROCESSOR_SHELL_SHELL_H
#define PFC_TRACE_PROCESSOR_SHELL_SHELL_H

/*
 * tp_shell_main() - Import the trace named on the command line, then run
 * -q/-Q queries (CSV on stdout), -e export and/or the interactive shell.
 * Return: the process exit code (0, or 1 on any error).
 * Context: the main thread of a CLI; prints, blocks, reads stdin.
 */
int tp_shell_main(int argc, char **argv);

#endif

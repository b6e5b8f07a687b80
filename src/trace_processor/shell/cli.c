// SPDX-License-Identifier: Apache-2.0
/*
 * cli.c - trace_processor_shell's entry point: picks the command line's
 * style. `convert ...` goes to convert/, Perfetto's other commands
 * (`query`, `server`, ...) are turned into classic flags by
 * subcommand.c, and everything else is the classic command line of
 * shell.c.
 */
#include "trace_processor/shell/shell.h"

#include <malloc.h>
#include <string.h>

#include "trace_processor/convert/convert.h"
#include "trace_processor/shell/shell_int.h"
#include "trace_processor/shell/subcommand.h"

int tp_shell_main(int argc, char **argv)
{
	struct shell_argv a;
	char *help[] = {argv[0], (char *)"--help", NULL};
	int rc;

#ifdef M_MMAP_THRESHOLD
	/*
	 * The import grows and repacks column arrays of up to tens of MB. A
	 * fixed threshold keeps every such array in its own mapping (grown
	 * by mremap, returned to the system when freed); glibc's adaptive
	 * one moves them into the heap, whose holes stayed resident: 22 MB
	 * of a 200 MB storm's 210 MB peak.
	 */
	mallopt(M_MMAP_THRESHOLD, 128 << 10);
#endif
	/* Perfetto's `convert` (traceconv): its own command line. */
	if (argc >= 2 && strcmp(argv[1], "convert") == 0)
		return tp_convert_main(argc - 1, argv + 1);
	if (argc < 2 || !shell_is_subcommand(argv[1]))
		return shell_classic_main(argc, argv);
	switch (shell_subcommand(argc, argv, &a)) {
	case SUB_RUN:
		rc = shell_classic_main((int)a.n, a.v);
		break;
	case SUB_USAGE:
		rc = shell_classic_main(2, help);
		break;
	case SUB_REMOTE:
		rc = a.remote_sql ? shell_remote_query(a.remote, a.remote_sql) : 0;
		if (rc == 0 && (!a.remote_sql || a.then_repl))
			rc = shell_remote_interactive(a.remote, a.wide);
		break;
	case SUB_DONE:
		rc = 0;
		break;
	default:
		rc = 1;
		break;
	}
	shell_argv_fini(&a);
	return rc;
}

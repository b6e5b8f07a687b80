// SPDX-License-Identifier: Apache-2.0
/*
 * batch_dask.c - pfc_batch_query --dask ADDR: instead of forking its own
 * workers, runs the Python helper perfetto_c.batch_query_dask, which puts
 * every trace on a worker of the Dask cluster at ADDR that can read it and
 * writes the same per-trace result files (batch_record.h) into the run's
 * folder. The interpreter is $PFC_PYTHON, else the one named in
 * <program dir>/python/interpreter (a build tree), else python3; the
 * package is found through <program dir>/python when present, then the
 * interpreter's own path (an installed perfetto-c).
 */
#include "trace_processor/batch/batch_dask.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The folder of this program, in @dir (empty when unknown). */
static void program_dir(char *dir, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", dir, size - 1);
	char *slash;

	if (n <= 0) {
		dir[0] = '\0';
		return;
	}
	dir[n] = '\0';
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		dir[0] = '\0';
}

/* The interpreter to run, in @py. */
static void interpreter(const char *pydir, char *py, size_t size)
{
	const char *env = getenv("PFC_PYTHON");
	char path[PATH_MAX + 32];
	FILE *f;

	snprintf(py, size, "%s", env && *env ? env : "python3");
	if (env && *env)
		return;
	snprintf(path, sizeof(path), "%s/interpreter", pydir);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(py, (int)size, f))
		py[strcspn(py, "\n")] = '\0';
	if (!py[0])
		snprintf(py, size, "python3");
	fclose(f);
}

int batch_dask_run(const char *addr, const char *dir, char *const *queries, size_t n_queries,
		   char *const *traces, size_t n_traces)
{
	char exe_dir[PATH_MAX], pydir[PATH_MAX + 16], py[PATH_MAX];
	struct stat st;
	char **argv;
	size_t k, a = 0;
	pid_t pid;
	int ws;

	program_dir(exe_dir, sizeof(exe_dir));
	snprintf(pydir, sizeof(pydir), "%s/python", exe_dir);
	interpreter(pydir, py, sizeof(py));
	argv = calloc(n_queries + n_traces + 8, sizeof(*argv));
	if (!argv)
		return -1;
	argv[a++] = py;
	argv[a++] = "-m";
	argv[a++] = "perfetto_c.batch_query_dask";
	argv[a++] = (char *)addr;
	argv[a++] = (char *)dir;
	for (k = 0; k < n_queries; k++)
		argv[a++] = queries[k];
	argv[a++] = "--";
	for (k = 0; k < n_traces; k++)
		argv[a++] = traces[k];
	argv[a] = NULL;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		if (exe_dir[0] && stat(pydir, &st) == 0 && S_ISDIR(st.st_mode)) {
			const char *old = getenv("PYTHONPATH");
			size_t n = strlen(pydir) + (old ? strlen(old) : 0) + 2;
			char *pp = malloc(n);

			if (pp) {
				snprintf(pp, n, "%s%s%s", pydir, old && *old ? ":" : "",
					 old && *old ? old : "");
				setenv("PYTHONPATH", pp, 1);
			}
		}
		execvp(py, argv);
		fprintf(stderr, "pfc_batch_query: --dask needs Python (%s): %s\n", py,
			strerror(errno));
		_exit(127);
	}
	free(argv);
	if (pid < 0) {
		fprintf(stderr, "pfc_batch_query: fork: %s\n", strerror(errno));
		return -1;
	}
	while (waitpid(pid, &ws, 0) < 0) {
		if (errno != EINTR)
			return -1;
	}
	if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
		if (WIFEXITED(ws) && WEXITSTATUS(ws) == 1)
			fprintf(stderr, "pfc_batch_query: --dask: the helper perfetto_c.batch_query_dask "
					"failed (is perfetto_c with python3-distributed installed?)\n");
		return -1;
	}
	return 0;
}

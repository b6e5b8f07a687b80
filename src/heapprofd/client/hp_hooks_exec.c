// SPDX-License-Identifier: Apache-2.0
/*
 * hp_hooks_exec.c - the exec family, wrapped for heapprofd: before a
 * profiled process replaces its image, heapprofd is let read what is in
 * the ring (hp_client_flush), while the old image's maps are still there
 * to unwind those samples with (read after the exec, they would be the
 * new image's). Then glibc's own function runs. execl* build an argv and
 * call execve/execvpe inside glibc, so they are wrapped here too.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>

#include "heapprofd/client/hp_client.h"

#define EXPORT __attribute__((visibility("default")))
/* The most arguments an execl* call is given here (glibc has no limit). */
#define HP_EXECL_MAX_ARGS 1024

extern char **environ;

typedef int (*execve_fn)(const char *, char *const[], char *const[]);

static int real_execve(const char *path, char *const argv[], char *const envp[])
{
	execve_fn fn = (execve_fn)dlsym(RTLD_NEXT, "execve");

	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	return fn(path, argv, envp);
}

static int real_execvpe(const char *file, char *const argv[], char *const envp[])
{
	execve_fn fn = (execve_fn)dlsym(RTLD_NEXT, "execvpe");

	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	return fn(file, argv, envp);
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	hp_client_flush();
	return real_execve(path, argv, envp);
}

EXPORT int execv(const char *path, char *const argv[])
{
	hp_client_flush();
	return real_execve(path, argv, environ);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	hp_client_flush();
	return real_execvpe(file, argv, envp);
}

EXPORT int execvp(const char *file, char *const argv[])
{
	hp_client_flush();
	return real_execvpe(file, argv, environ);
}

/* Collects execl*'s arguments after @arg0 into @argv (NULL-terminated);
 * *@envp gets the one after the NULL when @with_env. */
#define COLLECT_ARGS(argv, arg0, ap, with_env, envp)                                          \
	do {                                                                                  \
		size_t n_ = 0;                                                                \
		(argv)[n_++] = (char *)(arg0);                                                \
		while ((argv)[n_ - 1] && n_ < HP_EXECL_MAX_ARGS)                               \
			(argv)[n_++] = va_arg(ap, char *);                                      \
		if ((argv)[n_ - 1]) {                                                         \
			va_end(ap);                                                           \
			errno = E2BIG;                                                        \
			return -1;                                                            \
		}                                                                             \
		if (with_env)                                                                 \
			*(envp) = va_arg(ap, char **);                                        \
	} while (0)

EXPORT int execl(const char *path, const char *arg0, ...)
{
	char *argv[HP_EXECL_MAX_ARGS];
	char **envp = environ;
	va_list ap;

	va_start(ap, arg0);
	COLLECT_ARGS(argv, arg0, ap, 0, &envp);
	va_end(ap);
	return execve(path, argv, envp);
}

EXPORT int execle(const char *path, const char *arg0, ...)
{
	char *argv[HP_EXECL_MAX_ARGS];
	char **envp = NULL;
	va_list ap;

	va_start(ap, arg0);
	COLLECT_ARGS(argv, arg0, ap, 1, &envp);
	va_end(ap);
	return execve(path, argv, envp);
}

EXPORT int execlp(const char *file, const char *arg0, ...)
{
	char *argv[HP_EXECL_MAX_ARGS];
	char **envp = environ;
	va_list ap;

	va_start(ap, arg0);
	COLLECT_ARGS(argv, arg0, ap, 0, &envp);
	va_end(ap);
	return execvpe(file, argv, envp);
}

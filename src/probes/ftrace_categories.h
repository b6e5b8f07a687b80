/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ftrace_categories.h - the category names of light mode and tracebox
 * (`sched`, `freq`, `idle`, ...), i.e. FtraceConfig.atrace_categories on
 * Linux, and the ftrace events each one stands for. Events the running
 * kernel lacks are skipped by the caller.
 */
#ifndef PFC_PROBES_FTRACE_CATEGORIES_H
#define PFC_PROBES_FTRACE_CATEGORIES_H

#include <stddef.h>
#include <stdio.h>

struct ftrace_category {
	const char *name;
	const char *description;
	/* "group/name", or a whole group with a name of "*"; NULL-terminated. */
	const char *const *events;
};

/* The category called @name, or NULL. */
const struct ftrace_category *ftrace_category_find(const char *name);
/* All categories, NULL-terminated by name. */
extern const struct ftrace_category ftrace_categories[];
/* Writes "  name  description: events" lines (for --help and docs). */
void ftrace_categories_print(FILE *f);

#endif

// SPDX-License-Identifier: Apache-2.0
/*
 * sort.c - the sorter: every timed event of the trace, sorted by trace
 * time with push order kept among equal timestamps (so one CPU's ftrace
 * events and one sequence's packets stay in the order they were written).
 * Pushes are mostly in order already; a stable merge sort handles that in
 * about one pass per run.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/read/read_int.h"

int tp_sorter_push(struct tp_sorter *s, const struct tp_event *ev)
{
	if (tp_array_grow((void **)&s->ev, &s->cap, s->n + 1, sizeof(*s->ev), 4096) < 0)
		return -ENOMEM;
	s->ev[s->n++] = *ev;
	return 0;
}

/* Bottom-up merge sort on ts; stable. Runs already in order are found first. */
static void merge(const struct tp_event *a, size_t na, const struct tp_event *b, size_t nb,
		  struct tp_event *out)
{
	size_t i = 0, j = 0, k = 0;

	while (i < na && j < nb) {
		if (b[j].ts < a[i].ts)
			out[k++] = b[j++];
		else
			out[k++] = a[i++];
	}
	if (i < na)
		memcpy(out + k, a + i, (na - i) * sizeof(*out));
	if (j < nb)
		memcpy(out + k + (na - i), b + j, (nb - j) * sizeof(*out));
}

int tp_sorter_sort(struct tp_sorter *s)
{
	size_t *runs, n_runs = 0, i, cap_runs = 64;
	struct tp_event *tmp, *src, *dst;

	if (s->n < 2)
		return 0;
	runs = malloc(cap_runs * sizeof(*runs));
	tmp = malloc(s->n * sizeof(*tmp));
	if (!runs || !tmp) {
		free(runs);
		free(tmp);
		return -ENOMEM;
	}
	/* Run starts: positions where ts goes down. */
	runs[n_runs++] = 0;
	for (i = 1; i < s->n; i++) {
		if (s->ev[i].ts >= s->ev[i - 1].ts)
			continue;
		if (n_runs == cap_runs) {
			size_t *r = realloc(runs, 2 * cap_runs * sizeof(*r));

			if (!r) {
				free(runs);
				free(tmp);
				return -ENOMEM;
			}
			runs = r;
			cap_runs *= 2;
		}
		runs[n_runs++] = i;
	}
	src = s->ev;
	dst = tmp;
	while (n_runs > 1) {
		size_t out_runs = 0;

		for (i = 0; i < n_runs; i += 2) {
			size_t a = runs[i];
			size_t b = i + 1 < n_runs ? runs[i + 1] : s->n;
			size_t c = i + 2 < n_runs ? runs[i + 2] : s->n;

			if (i + 1 < n_runs)
				merge(src + a, b - a, src + b, c - b, dst + a);
			else
				memcpy(dst + a, src + a, (s->n - a) * sizeof(*dst));
			runs[out_runs++] = a;
		}
		n_runs = out_runs;
		{
			struct tp_event *t = src;

			src = dst;
			dst = t;
		}
	}
	if (src != s->ev) {
		memcpy(s->ev, src, s->n * sizeof(*src));
	}
	free(tmp);
	free(runs);
	return 0;
}

void tp_sorter_fini(struct tp_sorter *s)
{
	free(s->ev);
	s->ev = NULL;
	s->n = s->cap = 0;
}

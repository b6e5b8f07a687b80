// SPDX-License-Identifier: Apache-2.0
/*
 * interval.c - __intrinsic_interval_intersect(t1, ..., tN, '(part cols)'):
 * the intersection of up to 15 sets of partitioned intervals (what
 * __intrinsic_interval_tree_intervals_agg made) as a TABLE of ts, dur,
 * id_0..id_14 and the partition columns, with upstream's rules (instants
 * inside an interval count, touching intervals do not) and row order; and
 * __intrinsic_interval_create(starts, ends), which pairs each start with
 * the first end after it. The stdlib's _interval_intersect! macros call
 * them over whole tables: work is O((n + k) log n) per partition.
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/sql/ops/interval_tree.h"
#include "trace_processor/sql/ops/ops_int.h"

#define MAX_TABLES 15
#define MAX_PARTITION_COLS 4
#define ARG_COLS 2 /* ts, dur */

/* One row of the result being built: a piece of time and the interval of
 * each table it lies in. */
struct multi {
	uint64_t start, end;
	uint32_t ids[MAX_TABLES];
};

struct multi_vec {
	struct multi *v;
	size_t n, cap;
};

static int multi_push(struct multi_vec *m, const struct multi *x)
{
	if (m->n == m->cap && ops_grow((void **)&m->v, &m->cap, m->n + 1, sizeof(*m->v)) < 0)
		return -ENOMEM;
	m->v[m->n++] = *x;
	return 0;
}

/* Collects the overlaps of one query into a multi_vec. */
struct collect {
	struct multi_vec *out;
	const struct multi *prev;
	uint32_t table;
	int err;
};

static void collect_overlap(void *user, const struct ops_interval *iv)
{
	struct collect *c = user;
	struct multi m = *c->prev;

	if (c->err)
		return;
	m.start = iv->start;
	m.end = iv->end;
	m.ids[c->table] = iv->id;
	c->err = multi_push(c->out, &m);
}

/*
 * The rows of one partition present in every table: start from the table
 * with the fewest intervals and narrow by each other table in turn, from
 * the smallest (upstream's order, so rows come out the same).
 */
static int intersect_partition(struct ops_partition *const *parts, uint32_t n_tables,
			       struct multi_vec *out)
{
	uint32_t order[MAX_TABLES], i, j;
	struct multi_vec cur = {0}, next = {0};
	int err = 0;
	size_t k;

	for (i = 0; i < n_tables; i++)
		order[i] = i;
	/* A stable insertion sort by size: ties keep the argument order. */
	for (i = 1; i < n_tables; i++) {
		uint32_t x = order[i];

		for (j = i; j > 0 && parts[order[j - 1]]->n > parts[x]->n; j--)
			order[j] = order[j - 1];
		order[j] = x;
	}
	for (k = 0; k < parts[order[0]]->n && !err; k++) {
		const struct ops_interval *iv = &parts[order[0]]->v[k];
		struct multi m;

		memset(&m, 0, sizeof(m));
		m.start = iv->start;
		m.end = iv->end;
		m.ids[order[0]] = iv->id;
		err = multi_push(&cur, &m);
	}
	for (i = 1; i < n_tables && cur.n && !err; i++) {
		const struct ops_partition *p = parts[order[i]];
		struct ops_intersector is;
		struct collect c = {.out = &next, .table = order[i]};
		struct multi_vec swap;

		next.n = 0;
		err = ops_intersector_init(&is, p->v, p->n, p->is_nonoverlapping, cur.n);
		if (err)
			break;
		for (k = 0; k < cur.n && !c.err; k++) {
			c.prev = &cur.v[k];
			if (ops_intersector_find(&is, cur.v[k].start, cur.v[k].end, collect_overlap,
						 &c) < 0)
				c.err = -ENOMEM;
		}
		ops_intersector_fini(&is);
		err = c.err;
		swap = cur;
		cur = next;
		next = swap;
	}
	/* @out is empty here (its caller empties it per partition): the rows
	 * are handed over, not copied. */
	if (!err && out->n == 0) {
		free(out->v);
		*out = cur;
		cur.v = NULL;
	}
	for (k = 0; cur.v && k < cur.n && !err; k++)
		err = multi_push(out, &cur.v[k]);
	free(cur.v);
	free(next.v);
	return err;
}

/* Splits "(a, b)" into trimmed names; empty ones are dropped. Return: count or -1. */
static int split_cols(const char *list, char names[][128], int max)
{
	int n = 0;
	const char *p = list;

	while (*p) {
		const char *start, *end;
		size_t len;

		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '(' || *p == ')')
			p++;
		start = p;
		while (*p && *p != ',')
			p++;
		end = p;
		while (end > start && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' ||
				       end[-1] == '(' || end[-1] == ')'))
			end--;
		if (*p == ',')
			p++;
		len = (size_t)(end - start);
		if (!len)
			continue;
		if (n == max || len >= 128)
			return -1;
		memcpy(names[n], start, len);
		names[n][len] = '\0';
		n++;
	}
	return n;
}

static void fn_interval_intersect(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	char part_names[MAX_PARTITION_COLS + 1][128];
	const char *names[ARG_COLS + MAX_TABLES + MAX_PARTITION_COLS];
	char id_names[MAX_TABLES][16];
	const struct ops_partitions *tables[MAX_TABLES];
	struct ops_partition *parts[MAX_TABLES];
	struct multi_vec rows = {0};
	struct ops_table *t = NULL;
	const struct ops_partitions *least;
	const char *list;
	uint32_t n_tables, i, j, part_col0;
	int n_parts;
	bool empty = false;
	size_t k, r;

	if (argc < 2) {
		sqlite3_result_error(ctx, "interval intersect: needs at least 2 arguments", -1);
		return;
	}
	n_tables = (uint32_t)argc - 1;
	if (n_tables > MAX_TABLES) {
		sqlite3_result_error(ctx, "interval intersect: Can intersect at most 15 tables",
				     -1);
		return;
	}
	list = (const char *)sqlite3_value_text(argv[argc - 1]);
	if (!list) {
		sqlite3_result_error(ctx, "interval intersect: column list cannot be null", -1);
		return;
	}
	n_parts = split_cols(list, part_names, MAX_PARTITION_COLS + 1);
	if (n_parts < 0 || n_parts > MAX_PARTITION_COLS) {
		sqlite3_result_error(ctx, "interval intersect: Can take at most 4 partitions.",
				     -1);
		return;
	}
	/* Columns ts, dur, an id per table, then one all-NULL column that
	 * every id_<k> past the tables names (the macros bind all 15: 13
	 * columns of NULLs would be most of the memory), then the partition
	 * columns. */
	part_col0 = ARG_COLS + n_tables + (n_tables < MAX_TABLES ? 1 : 0);
	names[0] = "ts";
	names[1] = "dur";
	for (i = 0; i < MAX_TABLES; i++)
		snprintf(id_names[i], sizeof(id_names[i]), "id_%u", i);
	for (i = 0; i < n_tables && i < MAX_TABLES; i++)
		names[ARG_COLS + i] = id_names[i];
	if (n_tables < MAX_TABLES)
		names[ARG_COLS + n_tables] = id_names[n_tables];
	for (i = 0; i < (uint32_t)n_parts; i++)
		names[part_col0 + i] = part_names[i];
	t = ops_table_create(part_col0 + (uint32_t)n_parts, names);
	if (!t)
		goto nomem;
	for (i = n_tables + 1; i < MAX_TABLES; i++)
		if (ops_table_alias(t, id_names[i], ARG_COLS + n_tables) < 0)
			goto nomem;

	for (i = 0; i < n_tables; i++) {
		tables[i] = sqlite3_value_pointer(argv[i], OPS_PTR_INTERVALS);
		if (!tables[i] || !tables[i]->n)
			empty = true;
	}
	if (empty) {
		ops_table_result(ctx, t);
		return;
	}
	if (tables[0]->n_keys != (uint32_t)n_parts) {
		ops_table_destroy(t);
		sqlite3_result_error(ctx,
				     "interval intersect: the number of partition columns in the "
				     "partition list does not match the number of partition columns "
				     "in the input table",
				     -1);
		return;
	}
	/* Upstream types each partition column by a non-NULL value of table 0. */
	for (j = 0; j < tables[0]->n_keys; j++) {
		for (k = 0; k < tables[0]->n; k++) {
			if (tables[0]->p[k].key[j].type != OPS_NULL)
				break;
		}
		if (k == tables[0]->n) {
			ops_table_destroy(t);
			ops_error(ctx, "Partition has unknown type in column %u", j);
			return;
		}
	}

	least = tables[0];
	for (i = 1; i < n_tables; i++) {
		if (tables[i]->n < least->n)
			least = tables[i];
	}
	/* Partitions in upstream's hash-map order of the table with fewest. */
	for (k = 0; k < least->n; k++) {
		const struct ops_partition *lp = &least->p[least->order[k]];
		size_t first = rows.n;
		bool all = true;

		for (i = 0; i < n_tables && all; i++) {
			parts[i] = ops_partitions_find(tables[i], lp->hash);
			all = parts[i] != NULL;
		}
		if (!all)
			continue;
		if (intersect_partition(parts, n_tables, &rows) < 0)
			goto nomem;
		if (ops_table_reserve(t, rows.n) < 0)
			goto nomem;
		for (r = first; r < rows.n; r++) {
			const struct multi *m = &rows.v[r];
			int64_t row = ops_table_append(t);

			ops_set_int(t, 0, (size_t)row, (int64_t)m->start);
			ops_set_int(t, 1, (size_t)row, (int64_t)(m->end - m->start));
			for (i = 0; i < n_tables; i++)
				ops_set_int(t, ARG_COLS + i, (size_t)row, m->ids[i]);
			/* The partition values are table 0's. */
			for (j = 0; j < (uint32_t)n_parts; j++) {
				if (ops_set_cell(t, part_col0 + j, (size_t)row, &parts[0]->key[j]) < 0)
					goto nomem;
			}
		}
		rows.n = 0;
	}
	free(rows.v);
	ops_table_result(ctx, t);
	return;
nomem:
	free(rows.v);
	ops_table_destroy(t);
	sqlite3_result_error_nomem(ctx);
}

/* __intrinsic_interval_create(starts, ends): each start with the first end
 * strictly after it; starts past the last end are dropped. */
static void fn_interval_create(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	static const char *const names[] = {"ts", "dur"};
	const struct ops_timestamps *starts, *ends;
	struct ops_table *t = ops_table_create(2, names);
	size_t i, e = 0;

	(void)argc;
	if (!t)
		goto nomem;
	starts = sqlite3_value_pointer(argv[0], OPS_PTR_TIMESTAMPS);
	ends = sqlite3_value_pointer(argv[1], OPS_PTR_TIMESTAMPS);
	for (i = 0; starts && ends && i < starts->n; i++) {
		int64_t row;

		while (e < ends->n && ends->ts[e] <= starts->ts[i])
			e++;
		if (e >= ends->n)
			break;
		row = ops_table_append(t);
		if (row < 0)
			goto nomem;
		ops_set_int(t, 0, (size_t)row, starts->ts[i]);
		ops_set_int(t, 1, (size_t)row, ends->ts[e] - starts->ts[i]);
	}
	ops_table_result(ctx, t);
	return;
nomem:
	ops_table_destroy(t);
	sqlite3_result_error_nomem(ctx);
}

int ops_interval_register(sqlite3 *conn)
{
	int rc = sqlite3_create_function_v2(conn, "__intrinsic_interval_intersect", -1,
					    SQLITE_UTF8 | SQLITE_INNOCUOUS, NULL,
					    fn_interval_intersect, NULL, NULL, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(conn, "__intrinsic_interval_create", 2,
						SQLITE_UTF8 | SQLITE_INNOCUOUS, NULL,
						fn_interval_create, NULL, NULL, NULL);
	return rc;
}

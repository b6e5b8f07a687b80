// SPDX-License-Identifier: Apache-2.0
/*
 * args.c - the args table. Importers either append a set's rows
 * directly (tp_args_new_set(), tp_arg_*(): ftrace event fields, one set
 * per event) or collect a set in a struct tp_argset and commit it whole
 * (tracks, slices, flows): a repeated key replaces the value before it,
 * and a set equal to one already stored is reused, found by a hash of its
 * contents. As in Perfetto, a set's id is the id of its first row.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/import/common/common.h"

/* Slots probed past a colliding content hash before a set is stored again. */
#define SET_PROBES 8

struct tp_args_state {
	struct hmap sets;             /* content hash -> first args row of the set */
};

int tp_args_init(struct tp_import *imp)
{
	imp->args = calloc(1, sizeof(*imp->args));
	return imp->args ? 0 : -ENOMEM;
}

void tp_args_fini(struct tp_import *imp)
{
	if (!imp->args)
		return;
	hmap_fini(&imp->args->sets);
	free(imp->args);
	imp->args = NULL;
}

/* -------------------------------------------------------- direct rows ---- */

int64_t tp_args_new_set(struct tp_import *imp)
{
	return (int64_t)imp->db->args.n_rows;
}

static int64_t arg_row(struct tp_import *imp, int64_t set, uint32_t key, const char *type)
{
	struct tp_table *a = &imp->db->args;
	int64_t row = tp_table_append(a);

	if (row < 0)
		return row;
	tp_set_int(a, ARGS_ARG_SET_ID, (size_t)row, set);
	tp_set_str(a, ARGS_FLAT_KEY, (size_t)row, key);
	tp_set_str(a, ARGS_KEY, (size_t)row, key);
	tp_set_str(a, ARGS_VALUE_TYPE, (size_t)row, tp_db_str(imp->db, type));
	return row;
}

/* An int_value cell; INT64_MIN (a uint of 2^63) is a value, not NULL. */
static void put_int(struct tp_table *t, size_t row, int64_t v)
{
	if (v == TP_NULL_INT)
		tp_set_int_min(t, ARGS_INT_VALUE, row);
	else
		tp_set_int(t, ARGS_INT_VALUE, row, v);
}

/* display_value of numbers is computed by the args view (the SQL layer). */
void tp_arg_int(struct tp_import *imp, int64_t set, uint32_t key, int64_t v)
{
	int64_t row = arg_row(imp, set, key, "int");

	if (row >= 0)
		put_int(&imp->db->args, (size_t)row, v);
}

void tp_arg_uint(struct tp_import *imp, int64_t set, uint32_t key, uint64_t v)
{
	int64_t row = arg_row(imp, set, key, "uint");

	if (row >= 0)
		put_int(&imp->db->args, (size_t)row, (int64_t)v);
}

void tp_arg_real(struct tp_import *imp, int64_t set, uint32_t key, double v)
{
	int64_t row = arg_row(imp, set, key, "real");

	if (row >= 0)
		tp_set_real(&imp->db->args, ARGS_REAL_VALUE, (size_t)row, v);
}

void tp_arg_str(struct tp_import *imp, int64_t set, uint32_t key, const char *s, size_t len)
{
	int64_t row = arg_row(imp, set, key, "string");
	uint32_t id;

	if (row < 0)
		return;
	id = tp_str_intern(&imp->db->strings, s, len);
	tp_set_str(&imp->db->args, ARGS_STRING_VALUE, (size_t)row, id);
	tp_set_str(&imp->db->args, ARGS_DISPLAY_VALUE, (size_t)row, id);
}

/* ----------------------------------------------------------- arg sets ---- */

static void arg_push(struct tp_import *imp, struct tp_argset *b, const struct tp_arg *a)
{
	if (b->n == b->cap) {
		uint32_t cap = b->cap ? 2 * b->cap : 8;
		struct tp_arg *p;

		if (b->n >= TP_ARGSET_MAX) {
			tp_stat_add(imp, "track_event_parser_errors", -1, 0, 1);
			return;
		}
		p = realloc(b->a, cap * sizeof(*p));
		if (!p) {
			tp_stat_add(imp, "track_event_parser_errors", -1, 0, 1);
			return;
		}
		b->a = p;
		b->cap = cap;
	}
	b->a[b->n++] = *a;
}

void tp_argset_add(struct tp_import *imp, struct tp_argset *b, const struct tp_arg *arg)
{
	if (b)
		arg_push(imp, b, arg);
}

void tp_argset_int(struct tp_import *imp, struct tp_argset *b, uint32_t key, int64_t v)
{
	struct tp_arg a = {.flat_key = key, .key = key, .type = TP_ARG_INT, .v.i = v};

	tp_argset_add(imp, b, &a);
}

void tp_argset_uint(struct tp_import *imp, struct tp_argset *b, uint32_t key, uint64_t v)
{
	struct tp_arg a = {.flat_key = key, .key = key, .type = TP_ARG_UINT, .v.i = (int64_t)v};

	tp_argset_add(imp, b, &a);
}

void tp_argset_str(struct tp_import *imp, struct tp_argset *b, uint32_t key, uint32_t str)
{
	struct tp_arg a = {.flat_key = key, .key = key, .type = TP_ARG_STR, .v.s = str};

	tp_argset_add(imp, b, &a);
}

void tp_argset_bool(struct tp_import *imp, struct tp_argset *b, uint32_t key, bool v)
{
	struct tp_arg a = {.flat_key = key, .key = key, .type = TP_ARG_BOOL, .v.i = v};

	tp_argset_add(imp, b, &a);
}

void tp_argset_fini(struct tp_argset *b)
{
	if (!b)
		return;
	free(b->a);
	free(b->arr);
	b->a = NULL;
	b->arr = NULL;
	b->n = b->cap = 0;
	b->n_arr = b->cap_arr = 0;
}

uint32_t tp_argset_array_next(const struct tp_argset *b, uint32_t key)
{
	uint32_t i;

	for (i = 0; i < b->n_arr; i++)
		if (b->arr[2 * i] == key)
			return b->arr[2 * i + 1];
	return 0;
}

uint32_t tp_argset_array_inc(struct tp_argset *b, uint32_t key)
{
	uint32_t i;

	for (i = 0; i < b->n_arr; i++)
		if (b->arr[2 * i] == key)
			return ++b->arr[2 * i + 1];
	if (b->n_arr == b->cap_arr) {
		uint32_t cap = b->cap_arr ? 2 * b->cap_arr : 4;
		uint32_t *p;

		if (cap > TP_ARGSET_MAX)
			return 0;
		p = realloc(b->arr, 2 * (size_t)cap * sizeof(*p));
		if (!p)
			return 0;
		b->arr = p;
		b->cap_arr = cap;
	}
	b->arr[2 * b->n_arr] = key;
	b->arr[2 * b->n_arr + 1] = 1;
	b->n_arr++;
	return 1;
}

static const char *const k_value_types[] = {
	[TP_ARG_INT] = "int",   [TP_ARG_UINT] = "uint",   [TP_ARG_STR] = "string",
	[TP_ARG_REAL] = "real", [TP_ARG_PTR] = "pointer", [TP_ARG_BOOL] = "bool",
	[TP_ARG_NULL] = "null", [TP_ARG_JSON] = "json",
};

static uint64_t arg_hash(const struct tp_arg *a, uint32_t n)
{
	uint64_t h = 0x51ed270b27a1f3c5ull;
	uint32_t i;

	for (i = 0; i < n; i++) {
		uint64_t v = 0;

		h = tp_hash_mix(h, a[i].key);
		h = tp_hash_mix(h, a[i].type);
		switch (a[i].type) {
		case TP_ARG_STR:
		case TP_ARG_JSON:
			v = a[i].v.s;
			break;
		case TP_ARG_REAL:
			memcpy(&v, &a[i].v.d, sizeof(v));
			break;
		case TP_ARG_NULL:
			break;
		default:
			v = (uint64_t)a[i].v.i;
			break;
		}
		h = tp_hash_mix(h, v);
	}
	return h;
}

/* Whether the @n args at @row of the args table are exactly @a. */
static bool rows_equal(struct tp_import *imp, size_t row, const struct tp_arg *a, uint32_t n)
{
	struct tp_table *t = &imp->db->args;
	int64_t set;
	uint32_t i;

	if (row + n > t->n_rows)
		return false;
	set = tp_get_int(t, ARGS_ARG_SET_ID, row);
	if (row + n < t->n_rows && tp_get_int(t, ARGS_ARG_SET_ID, row + n) == set)
		return false;
	for (i = 0; i < n; i++, row++) {
		if (tp_get_int(t, ARGS_ARG_SET_ID, row) != set ||
		    tp_get_str(t, ARGS_KEY, row) != a[i].key ||
		    tp_get_str(t, ARGS_FLAT_KEY, row) != a[i].flat_key ||
		    tp_get_str(t, ARGS_VALUE_TYPE, row) !=
			    tp_db_str(imp->db, k_value_types[a[i].type]))
			return false;
		switch (a[i].type) {
		case TP_ARG_STR:
		case TP_ARG_JSON:
			if (tp_get_str(t, ARGS_STRING_VALUE, row) != a[i].v.s)
				return false;
			break;
		case TP_ARG_REAL:
			if (memcmp(&tp_col_real(t, ARGS_REAL_VALUE)[row], &a[i].v.d,
				   sizeof(double)))
				return false;
			break;
		case TP_ARG_NULL:
			break;
		default:
			if (tp_get_int(t, ARGS_INT_VALUE, row) != a[i].v.i)
				return false;
			break;
		}
	}
	return true;
}

/*
 * A repeated key replaces the earlier value in its place (flat key and
 * value), unless it only fills a gap (skip_if_exists), as Perfetto's args
 * inserter does. Return: the args left at the front of @a.
 */
static uint32_t collapse(struct tp_arg *a, uint32_t n_in)
{
	uint32_t *slot = NULL, mask = 0, i, j, n = 0;

	if (n_in > 32) {
		for (mask = 64; mask < 2 * n_in; mask *= 2)
			;
		slot = malloc(mask * sizeof(*slot));
		if (slot)
			memset(slot, 0xff, mask * sizeof(*slot));
		mask--;
	}
	for (i = 0; i < n_in; i++) {
		uint32_t found = UINT32_MAX, h = 0;

		if (slot) {
			for (h = (a[i].key * 2654435761u) & mask; slot[h] != UINT32_MAX;
			     h = (h + 1) & mask)
				if (a[slot[h]].key == a[i].key) {
					found = slot[h];
					break;
				}
		} else {
			for (j = 0; j < n; j++)
				if (a[j].key == a[i].key) {
					found = j;
					break;
				}
		}
		if (found != UINT32_MAX) {
			if (!a[i].skip_if_exists) {
				a[found].flat_key = a[i].flat_key;
				a[found].type = a[i].type;
				a[found].v = a[i].v;
			}
			continue;
		}
		if (slot)
			slot[h] = n;
		a[n++] = a[i];
	}
	free(slot);
	return n;
}

int64_t tp_argset_commit(struct tp_import *imp, struct tp_argset *b)
{
	struct tp_table *t = &imp->db->args;
	uint32_t i, n = 0;
	uint64_t h, v;
	int64_t set;
	size_t first;
	int probe;

	if (!b)
		return TP_NULL_INT;
	b->n_arr = 0;
	if (!b->n)
		return TP_NULL_INT;
	n = collapse(b->a, b->n);
	b->n = 0;
	h = arg_hash(b->a, n);
	for (probe = 0; probe < SET_PROBES; probe++, h++) {
		if (!hmap_get(&imp->args->sets, h, &v))
			break;
		if (rows_equal(imp, (size_t)v, b->a, n))
			return tp_get_int(t, ARGS_ARG_SET_ID, v);
	}
	set = tp_args_new_set(imp);
	first = t->n_rows;
	for (i = 0; i < n; i++) {
		const struct tp_arg *a = &b->a[i];
		int64_t row = tp_table_append(t);

		if (row < 0)
			break;
		tp_set_int(t, ARGS_ARG_SET_ID, (size_t)row, set);
		tp_set_str(t, ARGS_FLAT_KEY, (size_t)row, a->flat_key);
		tp_set_str(t, ARGS_KEY, (size_t)row, a->key);
		tp_set_str(t, ARGS_VALUE_TYPE, (size_t)row,
			   tp_db_str(imp->db, k_value_types[a->type]));
		switch (a->type) {
		case TP_ARG_STR:
		case TP_ARG_JSON:
			if (a->v.s) {
				tp_set_str(t, ARGS_STRING_VALUE, (size_t)row, a->v.s);
				tp_set_str(t, ARGS_DISPLAY_VALUE, (size_t)row, a->v.s);
			}
			break;
		case TP_ARG_REAL:
			tp_set_real(t, ARGS_REAL_VALUE, (size_t)row, a->v.d);
			break;
		case TP_ARG_NULL:
			break;
		default:
			put_int(t, (size_t)row, a->v.i);
			break;
		}
	}
	if (probe < SET_PROBES)
		hmap_put(&imp->args->sets, h, first);
	return set;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * args.c - __intrinsic_arg_set_to_json(arg_set_id): an arg set as one JSON
 * object, keys split on '.' into nested objects and "[i]" into arrays
 * (missing array slots are null), values typed as upstream writes them
 * (bool, integers, "%.16g" reals, NaN and infinities as strings, pointers
 * as "0x..." strings, strings escaped to ASCII with \u escapes). The UI
 * calls it for every slice's details panel.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/sql/ops/ops_int.h"
#include "trace_processor/storage/storage.h"

/* Deepest nesting of a key ("a.b[0].c" is 4) and widest array we build. */
#define JSON_MAX_DEPTH 64
#define JSON_MAX_INDEX 100000

enum node_type { N_NULL, N_VALUE, N_ARRAY, N_DICT };

/* A node of the arg tree; children in insertion order (siblings linked). */
struct node {
	enum node_type type;
	const char *key; /* in a dict: its key (points into the pool or scratch) */
	size_t key_len;
	size_t value_row; /* N_VALUE: the args row */
	struct node *first, *last, *next;
	size_t n_children;
};

/* Nodes come from blocks that never move (nodes point at each other). */
#define NODE_BLOCK 256
struct node_block {
	struct node_block *next;
	size_t used;
	struct node v[NODE_BLOCK];
};

struct json_ctx {
	struct tp_db *db;
	struct node_block *blocks;
	char *out;
	size_t len, out_cap;
	bool oom;
};

static struct node *node_new(struct json_ctx *j)
{
	struct node *n;

	if (!j->blocks || j->blocks->used == NODE_BLOCK) {
		struct node_block *b = malloc(sizeof(*b));

		if (!b) {
			j->oom = true;
			return NULL;
		}
		b->next = j->blocks;
		b->used = 0;
		j->blocks = b;
	}
	n = &j->blocks->v[j->blocks->used++];
	memset(n, 0, sizeof(*n));
	return n;
}

static struct node *child_by_key(struct json_ctx *j, struct node *parent, const char *key,
				 size_t len)
{
	struct node *c;

	for (c = parent->first; c; c = c->next) {
		if (c->key_len == len && memcmp(c->key, key, len) == 0)
			return c;
	}
	c = node_new(j);
	if (!c)
		return NULL;
	c->key = key;
	c->key_len = len;
	if (parent->last)
		parent->last->next = c;
	else
		parent->first = c;
	parent->last = c;
	parent->n_children++;
	return c;
}

static struct node *child_at(struct json_ctx *j, struct node *parent, size_t index)
{
	struct node *c = parent->first;
	size_t i;

	while (parent->n_children <= index) {
		struct node *n = node_new(j);

		if (!n)
			return NULL;
		if (parent->last)
			parent->last->next = n;
		else
			parent->first = n;
		parent->last = n;
		parent->n_children++;
	}
	/* Arrays are mostly filled in order: the last slot is the usual one. */
	if (index + 1 == parent->n_children)
		return parent->last;
	for (i = 0, c = parent->first; i < index; i++)
		c = c->next;
	return c;
}

/* Inserts arg @row under its key path. Return: 0, or -1 with *@err set. */
static int insert(struct json_ctx *j, struct node *root, const char *key, size_t row, char **err)
{
	struct node *target = root;
	const char *p = key;

	while (*p) {
		const char *part = p, *end, *br;

		while (*p && *p != '.')
			p++;
		end = p;
		if (*p == '.')
			p++;
		if (target->type == N_NULL)
			target->type = N_DICT;
		if (target->type != N_DICT) {
			*err = sqlite3_mprintf("Failed to insert key %s: tried to insert %.*s into a "
					       "non-dictionary object",
					       key, (int)(end - part), part);
			return -1;
		}
		br = memchr(part, '[', (size_t)(end - part));
		target = child_by_key(j, target, part, (size_t)((br ? br : end) - part));
		while (target && br) {
			const char *close = memchr(br, ']', (size_t)(end - br));
			const char *d = br + 1;
			uint64_t index = 0;

			if (!close || close == d) {
				*err = sqlite3_mprintf(
					"Expected to be able to extract index from %.*s of key %s",
					(int)(end - part), part, key);
				return -1;
			}
			for (; d < close; d++) {
				if (*d < '0' || *d > '9' || index > JSON_MAX_INDEX) {
					*err = sqlite3_mprintf("Expected to be able to extract index "
							       "from %.*s of key %s",
							       (int)(end - part), part, key);
					return -1;
				}
				index = index * 10 + (uint64_t)(*d - '0');
			}
			if (index > JSON_MAX_INDEX) {
				*err = sqlite3_mprintf("arg_set_to_json: array index over %d in key %s",
						       JSON_MAX_INDEX, key);
				return -1;
			}
			if (target->type == N_NULL)
				target->type = N_ARRAY;
			if (target->type != N_ARRAY) {
				*err = sqlite3_mprintf("Failed to insert key %s: tried to insert %.*s "
						       "into a non-arrayobject",
						       key, (int)(end - part), part);
				return -1;
			}
			target = child_at(j, target, (size_t)index);
			br = memchr(close, '[', (size_t)(end - close));
		}
		if (!target)
			return -1;
	}
	/* A later arg with the same path replaces what was there. */
	target->type = N_VALUE;
	target->value_row = row;
	target->first = target->last = NULL;
	target->n_children = 0;
	return 0;
}

static void put(struct json_ctx *j, const char *s, size_t n)
{
	if (j->oom)
		return;
	if (ops_grow((void **)&j->out, &j->out_cap, j->len + n + 1, 1) < 0) {
		j->oom = true;
		return;
	}
	memcpy(j->out + j->len, s, n);
	j->len += n;
}

static void putc_(struct json_ctx *j, char c)
{
	put(j, &c, 1);
}

static void put_escaped(struct json_ctx *j, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	putc_(j, '"');
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char buf[16];

		switch (c) {
		case '"':
		case '\\':
			putc_(j, '\\');
			putc_(j, (char)c);
			continue;
		case '\n':
			put(j, "\\n", 2);
			continue;
		case '\b':
			put(j, "\\b", 2);
			continue;
		case '\f':
			put(j, "\\f", 2);
			continue;
		case '\r':
			put(j, "\\r", 2);
			continue;
		case '\t':
			put(j, "\\t", 2);
			continue;
		}
		if (c >= 0x20 && c <= 0x7e) {
			putc_(j, (char)c);
			continue;
		}
		{
			/* A UTF-8 sequence as \u escapes (a surrogate pair past the BMP). */
			size_t extra = 1 + (c >= 0xc0) + (c >= 0xe0) + (c >= 0xf0);
			size_t stop = i + extra < n ? i + extra : n, k;
			uint32_t cp = c & (0xffu >> (extra + 1));

			for (k = i + 1; k < stop; k++)
				cp = (cp << 6) | ((unsigned char)s[k] & 0x3f);
			i = stop - 1;
			if (cp <= 0xffff) {
				buf[0] = '\\';
				buf[1] = 'u';
				buf[2] = hex[(cp >> 12) & 0xf];
				buf[3] = hex[(cp >> 8) & 0xf];
				buf[4] = hex[(cp >> 4) & 0xf];
				buf[5] = hex[cp & 0xf];
				put(j, buf, 6);
			} else {
				uint32_t hi = ((cp - 0x10000) >> 10) + 0xd800, lo = (cp & 0x3ff) + 0xdc00;

				buf[0] = '\\';
				buf[1] = 'u';
				buf[2] = hex[(hi >> 12) & 0xf];
				buf[3] = hex[(hi >> 8) & 0xf];
				buf[4] = hex[(hi >> 4) & 0xf];
				buf[5] = hex[hi & 0xf];
				buf[6] = '\\';
				buf[7] = 'u';
				buf[8] = hex[(lo >> 12) & 0xf];
				buf[9] = hex[(lo >> 8) & 0xf];
				buf[10] = hex[(lo >> 4) & 0xf];
				buf[11] = hex[lo & 0xf];
				put(j, buf, 12);
			}
		}
	}
	putc_(j, '"');
}

static void put_str(struct json_ctx *j, const char *s)
{
	put(j, s, strlen(s));
}

static void put_value(struct json_ctx *j, size_t row)
{
	const struct tp_table *a = &j->db->args;
	const char *type = tp_str_get(&j->db->strings, tp_get_str(a, ARGS_VALUE_TYPE, row));
	int64_t iv = tp_get_int(a, ARGS_INT_VALUE, row);
	bool is_null = iv == TP_NULL_INT && !tp_int_is_min(a, ARGS_INT_VALUE, row);
	char buf[64];

	if (!type)
		type = "";
	if (!strcmp(type, "string") || !strcmp(type, "json")) {
		const char *s = tp_str_get(&j->db->strings, tp_get_str(a, ARGS_STRING_VALUE, row));

		if (s)
			put_escaped(j, s, strlen(s));
		else
			put_str(j, "null");
	} else if (!strcmp(type, "real")) {
		double d = tp_get_real(a, ARGS_REAL_VALUE, row);

		if (isnan(d))
			put_str(j, "\"NaN\"");
		else if (isinf(d))
			put_str(j, d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
		else {
			snprintf(buf, sizeof(buf), "%.16g", d);
			put_str(j, buf);
		}
	} else if (!strcmp(type, "bool")) {
		put_str(j, iv && !is_null ? "true" : "false");
	} else if (!strcmp(type, "int")) {
		snprintf(buf, sizeof(buf), "%" PRId64, is_null ? 0 : iv);
		put_str(j, buf);
	} else if (!strcmp(type, "uint")) {
		snprintf(buf, sizeof(buf), "%" PRIu64, (uint64_t)(is_null ? 0 : iv));
		put_str(j, buf);
	} else if (!strcmp(type, "pointer")) {
		snprintf(buf, sizeof(buf), "\"0x%" PRIx64 "\"", (uint64_t)(is_null ? 0 : iv));
		put_str(j, buf);
	} else {
		put_str(j, "null");
	}
}

/* Writes @n (depth-first, with an explicit stack: keys can nest deeply). */
static void write_node(struct json_ctx *j, const struct node *root)
{
	const struct node *stack[JSON_MAX_DEPTH + 2];
	const struct node *cur[JSON_MAX_DEPTH + 2];
	int sp = 0;

	stack[0] = root;
	cur[0] = NULL;
	putc_(j, '{');
	cur[0] = root->first;
	for (;;) {
		const struct node *parent = stack[sp], *c = cur[sp];

		if (!c) {
			putc_(j, parent->type == N_ARRAY ? ']' : '}');
			if (sp == 0)
				break;
			sp--;
			continue;
		}
		cur[sp] = c->next;
		if (c != parent->first)
			putc_(j, ',');
		if (parent->type == N_DICT) {
			put_escaped(j, c->key, c->key_len);
			putc_(j, ':');
		}
		switch (c->type) {
		case N_VALUE:
			put_value(j, c->value_row);
			break;
		case N_NULL:
			put_str(j, "null");
			break;
		default:
			if (sp + 1 > JSON_MAX_DEPTH) {
				put_str(j, "null");
				break;
			}
			putc_(j, c->type == N_ARRAY ? '[' : '{');
			stack[++sp] = c;
			cur[sp] = c->first;
			break;
		}
	}
}

/* The first args row of @set (the table is sorted by arg_set_id). */
static size_t first_row(const struct tp_table *a, int64_t set)
{
	size_t lo = 0, hi = a->n_rows;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (tp_get_int(a, ARGS_ARG_SET_ID, mid) < set)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void fn_arg_set_to_json(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct json_ctx j = {.db = sqlite3_user_data(ctx)};
	const struct tp_table *a = &j.db->args;
	struct node root = {.type = N_DICT};
	size_t row, first, n = 0;

	int64_t set;
	char *err = NULL;

	(void)argc;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
		return;
	if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER) {
		sqlite3_result_error(ctx, "PRINT_ARGS: 1st argument should be arg set id", -1);
		return;
	}
	/* Upstream reads the id as 32 bits. */
	set = (int64_t)(uint32_t)sqlite3_value_int64(argv[0]);
	first = first_row(a, set);
	for (row = first; row < a->n_rows && tp_get_int(a, ARGS_ARG_SET_ID, row) == set; row++)
		n++;
	for (row = first; row < first + n; row++) {
		const char *key = tp_str_get(&j.db->strings, tp_get_str(a, ARGS_KEY, row));

		if (insert(&j, &root, key ? key : "", row, &err) < 0) {
			if (!err)
				goto nomem;
			sqlite3_result_error(ctx, err, -1);
			sqlite3_free(err);
			goto out;
		}
	}
	write_node(&j, &root);
	if (j.oom)
		goto nomem;
	sqlite3_result_text(ctx, j.out, (int)j.len, SQLITE_TRANSIENT);
out:
	while (j.blocks) {
		struct node_block *b = j.blocks;

		j.blocks = b->next;
		free(b);
	}
	free(j.out);
	return;
nomem:
	sqlite3_result_error_nomem(ctx);
	goto out;
}

int ops_args_register(sqlite3 *conn, struct tp_db *db)
{
	return sqlite3_create_function_v2(conn, "__intrinsic_arg_set_to_json", 1,
					  SQLITE_UTF8 | SQLITE_INNOCUOUS, db, fn_arg_set_to_json,
					  NULL, NULL, NULL);
}

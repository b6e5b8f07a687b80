// SPDX-License-Identifier: Apache-2.0
/*
 * vtab.c - the SQLite virtual table over one struct tp_table, reading the
 * column arrays in place. xBestIndex pushes =, <, <=, >, >= on integer and
 * string columns down; xFilter turns them into a row range (id and sorted
 * columns, by binary search) or an equality index lookup, and checks the
 * rest in C. Assumes big append-only tables and many point lookups from joins.
 */
#include "trace_processor/sql/vtab/vtab.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/storage/storage.h"

/* The rowid is the row index, like a TP_ID column. */
#define COL_ROWID (-1)

/* INT64_MIN is the NULL sentinel, and NULL satisfies no comparison. */
#define RANGE_MIN (INT64_MIN + 1)

/* Below this many candidate rows a range is checked row by row instead of
 * looking up (and maybe first building) an equality index. */
#define INDEX_MIN_ROWS 32

/* For the planner: share of a table one equality on an unindexed-by-order
 * column is guessed to match (1/64), and one range bound (1/4). */
#define EQ_DIVISOR 64.0
#define BOUND_DIVISOR 4.0

enum op { OP_EQ, OP_LT, OP_LE, OP_GT, OP_GE };
static const char *const k_op_str[] = {"=", "<", "<=", ">", ">="};

/* The access path xBestIndex expects; idxStr starts with its name so that
 * EXPLAIN QUERY PLAN shows it. xFilter decides again from the values. */
enum path { PATH_SCAN, PATH_ID, PATH_SORTED, PATH_INDEX, PATH_ORDER };
static const char *const k_path_str[] = {"scan", "id", "sorted", "index", "order"};

/* PATH_ORDER: idxNum carries the order columns, each + 1 (0: none). */
#define ORDER_COL_SHIFT1 8
#define ORDER_COL_SHIFT2 20
#define ORDER_COL_MASK 0xfff

struct vtab_aux {
	struct tp_table *t;
	const struct tp_strings *strings;
	uint64_t *rows_scanned;
};

struct vtab {
	sqlite3_vtab base;
	struct vtab_aux aux;
};

struct pushed {
	int col; /* column index or COL_ROWID */
	enum op op;
};

/* All pushed constraints on one column, merged into an inclusive range of
 * cell values (string columns: of string ids, only by equality). */
struct filter {
	int col;
	enum tp_type type;
	bool is_sorted;
	int64_t lo, hi;
};

struct cursor {
	sqlite3_vtab_cursor base;
	/* idxStr parsed; the string lives as long as the statement. */
	const char *plan_str;
	int n_pushed;
	struct pushed pushed[TP_SQL_MAX_PUSHED];
	/* Filters the access path does not already guarantee. */
	int n_checks;
	struct filter checks[TP_SQL_MAX_PUSHED];
	/* Candidates: list[pos..end) if list, else rows pos..end-1. */
	const uint32_t *list;
	const uint32_t *held;       /* a row order kept alive (tp_rows_hold) */
	size_t pos, end;
	size_t row;
	bool eof;
};

/* Narrow integer columns behave as integers everywhere here. */
static enum tp_type col_type(const struct tp_table *t, int col)
{
	if (col == COL_ROWID)
		return TP_ID;
	return t->specs[col].type == TP_NARROW ? TP_INT : t->specs[col].type;
}

/* Only integer cells are ordered by value: string ids are not string order. */
static bool col_sorted(const struct tp_table *t, int col)
{
	return col != COL_ROWID && t->specs[col].type == TP_INT &&
	       (t->specs[col].flags & TP_SORTED);
}

static const char *col_name(const struct tp_table *t, int col)
{
	return col == COL_ROWID ? "rowid" : t->specs[col].name;
}

/* ------------------------------------------------------ connect ---- */

static const char *sql_type(enum tp_type type)
{
	switch (type) {
	case TP_INT:
	case TP_NARROW:
	case TP_ID:
		return "INT";
	case TP_REAL:
		return "REAL";
	case TP_STR:
		return "TEXT";
	}
	return "";
}

static int vt_connect(sqlite3 *conn, void *paux, int argc, const char *const *argv,
		      sqlite3_vtab **out, char **err)
{
	const struct vtab_aux *aux = paux;
	const struct tp_table *t = aux->t;
	struct vtab *vt;
	sqlite3_str *s;
	char *sql;
	uint32_t i;
	int rc;

	(void)argc;
	(void)argv;
	s = sqlite3_str_new(conn);
	sqlite3_str_appendall(s, "CREATE TABLE x(");
	for (i = 0; i < t->n_cols; i++)
		sqlite3_str_appendf(s, "%s\"%w\" %s%s", i ? ", " : "", t->specs[i].name,
				    sql_type(t->specs[i].type),
				    (t->specs[i].flags & TP_HIDDEN) ? " HIDDEN" : "");
	sqlite3_str_appendall(s, ")");
	sql = sqlite3_str_finish(s);
	if (!sql)
		return SQLITE_NOMEM;
	rc = sqlite3_declare_vtab(conn, sql);
	sqlite3_free(sql);
	if (rc != SQLITE_OK) {
		*err = sqlite3_mprintf("%s: %s", t->name, sqlite3_errmsg(conn));
		return rc;
	}
	sqlite3_vtab_config(conn, SQLITE_VTAB_INNOCUOUS);
	vt = sqlite3_malloc(sizeof(*vt));
	if (!vt)
		return SQLITE_NOMEM;
	memset(vt, 0, sizeof(*vt));
	vt->aux = *aux;
	*out = &vt->base;
	return SQLITE_OK;
}

static int vt_disconnect(sqlite3_vtab *tab)
{
	sqlite3_free(tab);
	return SQLITE_OK;
}

/* -------------------------------------------------------- plan ---- */

static bool map_op(unsigned char sqlite_op, enum op *out)
{
	switch (sqlite_op) {
	case SQLITE_INDEX_CONSTRAINT_EQ:
		*out = OP_EQ;
		return true;
	case SQLITE_INDEX_CONSTRAINT_LT:
		*out = OP_LT;
		return true;
	case SQLITE_INDEX_CONSTRAINT_LE:
		*out = OP_LE;
		return true;
	case SQLITE_INDEX_CONSTRAINT_GT:
		*out = OP_GT;
		return true;
	case SQLITE_INDEX_CONSTRAINT_GE:
		*out = OP_GE;
		return true;
	}
	return false;
}

/*
 * Whether xFilter's check of constraint @i is exactly SQLite's, so SQLite
 * may skip its own. That needs a constant right-hand side of a type we
 * compare natively: an integer or real against an integer column, text
 * against a string column, or NULL (nothing matches). Text against an
 * integer column goes through affinity rules we leave to SQLite.
 */
static bool exact_rhs(sqlite3_index_info *info, int i, enum tp_type type)
{
	sqlite3_value *v = NULL;

	if (sqlite3_vtab_rhs_value(info, i, &v) != SQLITE_OK || !v)
		return false;
	switch (sqlite3_value_type(v)) {
	case SQLITE_NULL:
		return true;
	case SQLITE_INTEGER:
	case SQLITE_FLOAT:
		return type != TP_STR;
	case SQLITE_TEXT:
		return type == TP_STR;
	}
	return false;
}

/* Rows come out in ascending row order whatever the path, so an ORDER BY of
 * ascending sorted columns, possibly ending with the id, is already met. */
static bool order_consumed(const struct tp_table *t, const sqlite3_index_info *info)
{
	int i;

	for (i = 0; i < info->nOrderBy; i++) {
		int col = info->aOrderBy[i].iColumn;

		if (info->aOrderBy[i].desc)
			return false;
		if (col_type(t, col) == TP_ID)
			return true;
		if (!col_sorted(t, col))
			return false;
	}
	return true;
}

/*
 * An ORDER BY (or GROUP BY / DISTINCT) of one or two ascending columns can
 * be met by reading rows through tp_table_order(), string columns in the
 * byte order of their text like SQLite's BINARY collation. (Grouping alone
 * would not need it, but SQLite 3.40 reports a GROUP BY x ORDER BY x as
 * grouping only and then trusts the order.) Sets the columns into *idx_num.
 */
static bool order_by_index(const struct tp_table *t, sqlite3_index_info *info, int *idx_num)
{
	int i, cols[2] = {-1, -1};

	if (info->nOrderBy < 1 || info->nOrderBy > 2)
		return false;
	for (i = 0; i < info->nOrderBy; i++) {
		int col = info->aOrderBy[i].iColumn;
		enum tp_type type;

		/* Rows come ascending: SQLite 3.40 also trusts them for a
		 * GROUP BY x ORDER BY x DESC it reported as grouping only. */
		if (info->aOrderBy[i].desc || col < 0 ||
		    (uint32_t)col >= t->n_cols || col > ORDER_COL_MASK - 1)
			return false;
		type = col_type(t, col);
		/* ORDER BY x COLLATE y never reaches us: SQLite sorts those itself. */
		if (type == TP_REAL || tp_col_has_min(t, (uint32_t)col))
			return false;
		cols[i] = col;
	}
	*idx_num = (int)PATH_ORDER | (cols[0] + 1) << ORDER_COL_SHIFT1 |
		   (cols[1] + 1) << ORDER_COL_SHIFT2;
	return true;
}

static int vt_best_index(sqlite3_vtab *tab, sqlite3_index_info *info)
{
	struct vtab *vt = (struct vtab *)tab;
	const struct tp_table *t = vt->aux.t;
	struct pushed pushed[TP_SQL_MAX_PUSHED];
	int n_pushed = 0, n_bounds = 0, n_other = 0, i;
	bool id_eq = false, sorted_eq = false, index_eq = false;
	double eq_divisor = EQ_DIVISOR;
	double n = (double)t->n_rows, visited, rows;
	enum path path = PATH_SCAN;
	sqlite3_str *s;

	for (i = 0; i < info->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &info->aConstraint[i];
		enum tp_type type;
		enum op op;
		const char *coll;

		if (!c->usable || !map_op(c->op, &op) || n_pushed == TP_SQL_MAX_PUSHED)
			continue;
		type = col_type(t, c->iColumn);
		if (type == TP_REAL)
			continue;
		/* Cells holding INT64_MIN read as NULL here: SQLite checks those. */
		if (c->iColumn >= 0 && tp_col_has_min(t, (uint32_t)c->iColumn))
			continue;
		if (type == TP_STR) {
			coll = sqlite3_vtab_collation(info, i);
			if (op != OP_EQ || (coll && sqlite3_stricmp(coll, "BINARY") != 0))
				continue;
		}
		info->aConstraintUsage[i].argvIndex = n_pushed + 1;
		info->aConstraintUsage[i].omit = exact_rhs(info, i, type);
		pushed[n_pushed].col = c->iColumn;
		pushed[n_pushed].op = op;
		n_pushed++;

		if (type == TP_ID && op == OP_EQ)
			id_eq = true;
		else if (col_sorted(t, c->iColumn) && op == OP_EQ)
			sorted_eq = true;
		else if (type == TP_ID || col_sorted(t, c->iColumn))
			n_bounds++;
		else if (op == OP_EQ) {
			/* A built index knows the average rows per value. */
			size_t d = c->iColumn >= 0 ? tp_col_distinct_hint(t, (uint32_t)c->iColumn) : 0;

			index_eq = true;
			if (d > eq_divisor)
				eq_divisor = (double)d;
		}
		else
			n_other++;
	}

	/* Guess the rows the path visits, then the rows that pass every check. */
	if (id_eq) {
		path = PATH_ID;
		visited = 1;
		info->idxFlags |= SQLITE_INDEX_SCAN_UNIQUE;
	} else {
		visited = n;
		if (sorted_eq)
			visited = 4 + n / (EQ_DIVISOR * EQ_DIVISOR);
		else if (n_bounds)
			visited = n / (n_bounds > 1 ? BOUND_DIVISOR * BOUND_DIVISOR : BOUND_DIVISOR);
		if (visited < n)
			path = PATH_SORTED;
		if (index_eq && (eq_divisor > EQ_DIVISOR ? n / eq_divisor : 1 + n / eq_divisor) < visited) {
			/* Known value counts give the exact average; guesses round up. */
			visited = eq_divisor > EQ_DIVISOR ? n / eq_divisor : 1 + n / eq_divisor;
			if (visited < 1)
				visited = 1;
			path = PATH_INDEX;
		}
	}
	rows = visited;
	for (i = 0; i < n_other; i++)
		rows /= BOUND_DIVISOR;
	info->idxNum = (int)path;
	info->estimatedRows = (sqlite3_int64)(rows < 1 ? 1 : rows);
	if (path == PATH_ID)
		info->estimatedCost = 1;
	else if (path == PATH_SCAN)
		info->estimatedCost = 10 + n;
	else
		info->estimatedCost = 5 + log2(n + 1) + visited;
	info->orderByConsumed = order_consumed(t, info);
	if (!info->orderByConsumed && path == PATH_SCAN && order_by_index(t, info, &info->idxNum)) {
		/* Rows in the order (or grouping) SQLite asked for: no sorter. */
		path = PATH_ORDER;
		info->orderByConsumed = 1;
		/* About a scan: the order is built once (in O(n) mostly) and cached. */
		info->estimatedCost = 5 + 0.5 * n;
	}

	/* idxStr: "<path> <column><op> ..." in argv order; xFilter parses it. */
	if (!n_pushed && path != PATH_ORDER)
		return SQLITE_OK;
	s = sqlite3_str_new(NULL);
	sqlite3_str_appendall(s, k_path_str[path]);
	for (i = 0; i < n_pushed; i++)
		sqlite3_str_appendf(s, " %s%s", col_name(t, pushed[i].col),
				    k_op_str[pushed[i].op]);
	info->idxStr = sqlite3_str_finish(s);
	if (!info->idxStr)
		return SQLITE_NOMEM;
	info->needToFreeIdxStr = 1;
	return SQLITE_OK;
}

/* ------------------------------------------------------ cursor ---- */

static int vt_open(sqlite3_vtab *tab, sqlite3_vtab_cursor **out)
{
	struct cursor *c = sqlite3_malloc(sizeof(*c));

	(void)tab;
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	c->eof = true;
	*out = &c->base;
	return SQLITE_OK;
}

static int vt_close(sqlite3_vtab_cursor *cur)
{
	tp_rows_release(((struct cursor *)cur)->held);
	sqlite3_free(cur);
	return SQLITE_OK;
}

static int find_col(const struct tp_table *t, const char *name, size_t len)
{
	uint32_t i;

	if (len == 5 && memcmp(name, "rowid", 5) == 0)
		return COL_ROWID;
	for (i = 0; i < t->n_cols; i++) {
		if (strlen(t->specs[i].name) == len && memcmp(t->specs[i].name, name, len) == 0)
			return (int)i;
	}
	return -2;
}

/* Parses idxStr as written by vt_best_index(). Return: 0 or -EINVAL. */
static int parse_plan(struct cursor *c, const struct tp_table *t, const char *s)
{
	int n = 0;

	s = s ? strchr(s, ' ') : NULL;
	while (s && *s) {
		const char *name, *op;
		size_t len, op_len;
		int col, k;

		while (*s == ' ')
			s++;
		name = s;
		while (*s && *s != '<' && *s != '>' && *s != '=')
			s++;
		len = (size_t)(s - name);
		op = s;
		while (*s && *s != ' ')
			s++;
		op_len = (size_t)(s - op);
		col = find_col(t, name, len);
		if (col < COL_ROWID || n == TP_SQL_MAX_PUSHED)
			return -EINVAL;
		for (k = 0; k <= OP_GE; k++) {
			if (strlen(k_op_str[k]) == op_len && memcmp(k_op_str[k], op, op_len) == 0)
				break;
		}
		if (k > OP_GE)
			return -EINVAL;
		c->pushed[n].col = col;
		c->pushed[n].op = (enum op)k;
		n++;
	}
	c->n_pushed = n;
	return 0;
}

/* Narrows @f to the cells that satisfy "cell @op @v". Return: false if none do. */
static bool narrow_int(struct filter *f, enum op op, int64_t v)
{
	switch (op) {
	case OP_EQ:
		f->lo = v > f->lo ? v : f->lo;
		f->hi = v < f->hi ? v : f->hi;
		break;
	case OP_LT:
		if (v == INT64_MIN)
			return false;
		f->hi = v - 1 < f->hi ? v - 1 : f->hi;
		break;
	case OP_LE:
		f->hi = v < f->hi ? v : f->hi;
		break;
	case OP_GT:
		if (v == INT64_MAX)
			return false;
		f->lo = v + 1 > f->lo ? v + 1 : f->lo;
		break;
	case OP_GE:
		f->lo = v > f->lo ? v : f->lo;
		break;
	}
	return f->lo <= f->hi;
}

/*
 * The same for a real @d against integer cells, exactly as SQLite compares
 * them (by value, not by converting either side): "cell < 2.5" is
 * "cell < 3", "cell = 2.5" matches nothing, bounds beyond int64 vanish.
 */
static bool narrow_real(struct filter *f, enum op op, double d)
{
	const double lim = 9223372036854775808.0; /* 2^63 */
	double r;

	if (isnan(d))
		return false;
	switch (op) {
	case OP_EQ:
		if (d < -lim || d >= lim || d != floor(d))
			return false;
		return narrow_int(f, OP_EQ, (int64_t)d);
	case OP_LT: /* cell < ceil(d) */
	case OP_GE: /* cell >= ceil(d) */
		r = ceil(d);
		break;
	case OP_LE: /* cell <= floor(d) */
	case OP_GT: /* cell > floor(d) */
		r = floor(d);
		break;
	default:
		return false;
	}
	if (r >= lim) /* above every cell */
		return (op == OP_LT || op == OP_LE) && f->lo <= f->hi;
	if (r < -lim) /* below every cell */
		return (op == OP_GT || op == OP_GE) && f->lo <= f->hi;
	return narrow_int(f, op, (int64_t)r);
}

static struct filter *filter_for(struct filter *fs, int *n, const struct tp_table *t, int col)
{
	int i;

	for (i = 0; i < *n; i++) {
		if (fs[i].col == col)
			return &fs[i];
	}
	fs[*n].col = col;
	fs[*n].type = col_type(t, col);
	fs[*n].is_sorted = col_sorted(t, col);
	fs[*n].lo = RANGE_MIN;
	fs[*n].hi = INT64_MAX;
	return &fs[(*n)++];
}

/* First row in [lo, hi) whose cell of the sorted column @col is >= @v (@upper: > @v). */
static size_t bound_rows(const struct tp_table *t, uint32_t col, size_t lo, size_t hi, int64_t v,
			 bool upper)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int64_t cell = tp_get_int(t, col, mid);

		if (cell < v || (upper && cell == v))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* First index in a sorted row list whose row is >= @row. */
static size_t bound_list(const uint32_t *rows, size_t n, size_t row)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rows[mid] < row)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool row_matches(const struct cursor *c, const struct tp_table *t, size_t row)
{
	int i;

	for (i = 0; i < c->n_checks; i++) {
		const struct filter *f = &c->checks[i];
		int64_t v;

		v = f->col == COL_ROWID ? (int64_t)row : tp_get_int(t, (uint32_t)f->col, row);
		if (v < f->lo || v > f->hi)
			return false;
	}
	return true;
}

/* Moves to the next candidate that passes the checks, or to EOF. */
static void seek(struct cursor *c)
{
	const struct vtab *vt = (const struct vtab *)c->base.pVtab;
	const struct tp_table *t = vt->aux.t;
	uint64_t visited = 0;

	c->eof = true;
	while (c->pos < c->end) {
		size_t row = c->list ? c->list[c->pos] : c->pos;

		c->pos++;
		visited++;
		if (row_matches(c, t, row)) {
			c->row = row;
			c->eof = false;
			break;
		}
	}
	*vt->aux.rows_scanned += visited;
}

/*
 * Merges the constraint values into one filter per column, then picks the
 * candidates: the id range, narrowed by binary search on sorted columns,
 * and if that is still wide, the smallest equality index lookup within it.
 * Filters the path does not guarantee are checked row by row. A value we
 * cannot compare exactly is skipped: SQLite was told to check it itself.
 */
static int vt_filter(sqlite3_vtab_cursor *cur, int idx_num, const char *idx_str, int argc,
		     sqlite3_value **argv)
{
	struct cursor *c = (struct cursor *)cur;
	const struct vtab *vt = (const struct vtab *)cur->pVtab;
	struct tp_table *t = vt->aux.t;
	struct filter fs[TP_SQL_MAX_PUSHED];
	const struct filter *best = NULL;
	const uint32_t *best_rows = NULL;
	size_t lo = 0, hi = t->n_rows, best_n = 0;
	int n_fs = 0, i;

	c->eof = true;
	c->list = NULL;
	c->n_checks = 0;
	c->pos = c->end = 0;
	if (idx_str != c->plan_str || !idx_str) {
		c->plan_str = NULL;
		if (parse_plan(c, t, idx_str) < 0) {
			sqlite3_free(cur->pVtab->zErrMsg);
			cur->pVtab->zErrMsg = sqlite3_mprintf("%s: bad plan '%s'", t->name, idx_str);
			return SQLITE_INTERNAL;
		}
		c->plan_str = idx_str;
	}
	if (argc != c->n_pushed) {
		c->plan_str = NULL;
		return SQLITE_INTERNAL;
	}

	for (i = 0; i < argc; i++) {
		const struct pushed *p = &c->pushed[i];
		enum tp_type type = col_type(t, p->col);
		struct filter *f;
		bool ok;

		switch (sqlite3_value_type(argv[i])) {
		case SQLITE_NULL:
			return SQLITE_OK; /* comparing with NULL is never true */
		case SQLITE_INTEGER:
			if (type == TP_STR)
				continue;
			f = filter_for(fs, &n_fs, t, p->col);
			ok = narrow_int(f, p->op, sqlite3_value_int64(argv[i]));
			break;
		case SQLITE_FLOAT:
			if (type == TP_STR)
				continue;
			f = filter_for(fs, &n_fs, t, p->col);
			ok = narrow_real(f, p->op, sqlite3_value_double(argv[i]));
			break;
		case SQLITE_TEXT: {
			const char *text = (const char *)sqlite3_value_text(argv[i]);
			uint32_t id;

			if (type != TP_STR || p->op != OP_EQ)
				continue;
			if (!text)
				return SQLITE_NOMEM;
			id = tp_str_find(vt->aux.strings, text,
					 (size_t)sqlite3_value_bytes(argv[i]));
			f = filter_for(fs, &n_fs, t, p->col);
			ok = id && narrow_int(f, OP_EQ, id);
			break;
		}
		default:
			continue;
		}
		if (!ok)
			return SQLITE_OK;
	}

	if ((idx_num & 0xff) == PATH_ORDER) {
		/* Every row in the asked order; every filter checked row by row. */
		int c1 = ((idx_num >> ORDER_COL_SHIFT1) & ORDER_COL_MASK) - 1;
		int c2 = ((idx_num >> ORDER_COL_SHIFT2) & ORDER_COL_MASK) - 1;
		const uint32_t *rows;
		int64_t n = c1 >= 0 ? tp_table_order(t, (uint32_t)c1, c2, vt->aux.strings, &rows)
				    : -EINVAL;

		if (n < 0)
			return n == -ENOMEM ? SQLITE_NOMEM : SQLITE_INTERNAL;
		for (i = 0; i < n_fs; i++)
			c->checks[c->n_checks++] = fs[i];
		/* Another cursor may make the cache drop this order meanwhile. */
		tp_rows_hold(rows);
		tp_rows_release(c->held);
		c->held = rows;
		c->list = rows;
		c->pos = 0;
		c->end = (size_t)n;
		seek(c);
		return SQLITE_OK;
	}
	for (i = 0; i < n_fs; i++) {
		const struct filter *f = &fs[i];

		if (f->type != TP_ID)
			continue;
		if (f->hi < 0 || (f->lo > 0 && (uint64_t)f->lo >= t->n_rows))
			return SQLITE_OK;
		if (f->lo > 0 && (size_t)f->lo > lo)
			lo = (size_t)f->lo;
		if ((uint64_t)f->hi < hi)
			hi = (size_t)f->hi + 1;
	}
	for (i = 0; i < n_fs && lo < hi; i++) {
		const struct filter *f = &fs[i];

		if (!f->is_sorted)
			continue;
		lo = bound_rows(t, (uint32_t)f->col, lo, hi, f->lo, false);
		hi = bound_rows(t, (uint32_t)f->col, lo, hi, f->hi, true);
	}
	if (lo >= hi)
		return SQLITE_OK;

	for (i = 0; i < n_fs && hi - lo > INDEX_MIN_ROWS; i++) {
		const struct filter *f = &fs[i];
		const uint32_t *rows;
		int64_t n;
		size_t a, b;

		if (f->type == TP_ID || f->is_sorted || f->lo != f->hi)
			continue;
		n = tp_col_lookup(t, (uint32_t)f->col, f->lo, &rows);
		if (n < 0)
			return SQLITE_NOMEM;
		a = bound_list(rows, (size_t)n, lo);
		b = bound_list(rows, (size_t)n, hi);
		if (!best || b - a < best_n) {
			best = f;
			best_rows = rows + a;
			best_n = b - a;
		}
	}

	for (i = 0; i < n_fs; i++) {
		if (fs[i].type != TP_ID && !fs[i].is_sorted && &fs[i] != best)
			c->checks[c->n_checks++] = fs[i];
	}
	if (best) {
		c->list = best_rows;
		c->pos = 0;
		c->end = best_n;
	} else {
		c->pos = lo;
		c->end = hi;
	}
	seek(c);
	return SQLITE_OK;
}

static int vt_next(sqlite3_vtab_cursor *cur)
{
	seek((struct cursor *)cur);
	return SQLITE_OK;
}

static int vt_eof(sqlite3_vtab_cursor *cur)
{
	return ((struct cursor *)cur)->eof;
}

static int vt_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i)
{
	const struct cursor *c = (const struct cursor *)cur;
	const struct vtab *vt = (const struct vtab *)cur->pVtab;
	const struct tp_table *t = vt->aux.t;
	size_t row = c->row;
	const char *s;
	int64_t v;
	double d;

	if (i < 0 || (uint32_t)i >= t->n_cols)
		return SQLITE_RANGE;
	switch (t->specs[i].type) {
	case TP_ID:
		sqlite3_result_int64(ctx, (sqlite3_int64)row);
		break;
	case TP_INT:
	case TP_NARROW:
		v = tp_get_int(t, (uint32_t)i, row);
		if (v != TP_NULL_INT || (t->n_mins && tp_int_is_min(t, (uint32_t)i, row)))
			sqlite3_result_int64(ctx, v);
		break;
	case TP_REAL:
		d = tp_get_real(t, (uint32_t)i, row);
		if (!isnan(d))
			sqlite3_result_double(ctx, d);
		break;
	case TP_STR:
		s = tp_str_get(vt->aux.strings, tp_get_str(t, (uint32_t)i, row));
		if (s)
			sqlite3_result_text(ctx, s, -1, SQLITE_STATIC);
		break;
	}
	return SQLITE_OK;
}

static int vt_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out)
{
	*out = (sqlite3_int64)((struct cursor *)cur)->row;
	return SQLITE_OK;
}

/* Eponymous-only (no xCreate) and read-only (no xUpdate). */
static const sqlite3_module k_module = {
	.iVersion = 1,
	.xConnect = vt_connect,
	.xBestIndex = vt_best_index,
	.xDisconnect = vt_disconnect,
	.xDestroy = vt_disconnect,
	.xOpen = vt_open,
	.xClose = vt_close,
	.xFilter = vt_filter,
	.xNext = vt_next,
	.xEof = vt_eof,
	.xColumn = vt_column,
	.xRowid = vt_rowid,
};

int tp_vtab_register(struct sqlite3 *conn, struct tp_table *t, const struct tp_strings *strings,
		     uint64_t *rows_scanned)
{
	struct vtab_aux *aux = sqlite3_malloc(sizeof(*aux));
	int rc;

	if (!aux)
		return -ENOMEM;
	aux->t = t;
	aux->strings = strings;
	aux->rows_scanned = rows_scanned;
	/* SQLite frees @aux with sqlite3_free, even when this call fails. */
	rc = sqlite3_create_module_v2(conn, t->name, &k_module, aux, sqlite3_free);
	if (rc == SQLITE_NOMEM)
		return -ENOMEM;
	return rc == SQLITE_OK ? 0 : -EIO;
}

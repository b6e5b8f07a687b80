// SPDX-License-Identifier: Apache-2.0
/*
 * flamegraph.c - the SQL face of the flamegraph operator, as upstream
 * names it:
 *   CREATE VIRTUAL TABLE fg USING __intrinsic_flamegraph((SELECT id,
 *     parent_id, name, value, <properties>...));
 *   SELECT ... FROM fg(__intrinsic_flamegraph_config('value', 'value',
 *     'view', 'TOP_DOWN', 'grouping', g, 'filter', 'SHOW_STACK', re, flags,
 *     'aggregate', 'SUM', col, col, 'view_pattern', re, flags, ...));
 * The table loads its source once (flamegraph_source.c); each query builds
 * and lays out a flamegraph (flamegraph_build.c, flamegraph_layout.c).
 * Columns: in_config (hidden), _tree_id, _tree_parent_id, depth, name,
 * self_value, cumulative_value, parent_cumulative_value, x_start, x_end,
 * each property, then self_<p> / cumulative_<p> per numeric property.
 * WHERE __intrinsic_flamegraph_find(_tree_id, 'SUPER_ROOT') selects the
 * one synthetic super root instead (the sum of the source's values).
 * The table's state outlives a disconnect (SQLite reconnects a table when
 * the schema changes): it is kept by name until DROP TABLE.
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "trace_processor/sql/ops/flamegraph_int.h"

#define FG_CONFIG_PTR "FLAMEGRAPH_CONFIG"
#define FIND_FN "__intrinsic_flamegraph_find"
#define SUPER_ROOT_OP (SQLITE_INDEX_CONSTRAINT_FUNCTION + 1)

enum {
	COL_CONFIG,
	COL_TREE_ID,
	COL_TREE_PARENT_ID,
	COL_DEPTH,
	COL_NAME,
	COL_SELF,
	COL_CUM,
	COL_PARENT_CUM,
	COL_X_START,
	COL_X_END,
	COL_PROPS
};

/* ------------------------------------------------------------- config ---- */

void fg_query_free(void *p)
{
	struct fg_query *q = p;
	size_t i;

	if (!q)
		return;
	free(q->view_pattern.pattern);
	for (i = 0; i < q->n_filters; i++)
		free(q->filters[i].re.pattern);
	for (i = 0; i < q->n_grouping; i++)
		free(q->grouping[i]);
	for (i = 0; i < q->n_values; i++)
		free(q->values[i]);
	for (i = 0; i < q->n_aggs; i++) {
		free(q->aggs[i].input);
		free(q->aggs[i].output);
	}
	free(q->filters);
	free(q->grouping);
	free(q->values);
	free(q->aggs);
	free(q);
}

/* Text argument @v or NULL with the error set. */
static const char *arg_text(sqlite3_context *ctx, const char *what, sqlite3_value *v)
{
	if (sqlite3_value_type(v) != SQLITE_TEXT) {
		ops_error(ctx, "flamegraph_config: %s: expected a string", what);
		return NULL;
	}
	return (const char *)sqlite3_value_text(v);
}

/* Index of @s in @names (NULL-terminated), or -1 with the error set. */
static int token(sqlite3_context *ctx, const char *what, sqlite3_value *v,
		 const char *const *names)
{
	const char *s = arg_text(ctx, what, v);
	int i;

	if (!s)
		return -1;
	for (i = 0; names[i]; i++) {
		if (strcmp(s, names[i]) == 0)
			return i;
	}
	ops_error(ctx, "flamegraph_config: %s: unknown value '%s'", what, s);
	return -1;
}

static int regex_arg(sqlite3_context *ctx, const char *what, sqlite3_value **v,
		     struct fg_regex *re)
{
	const char *pat = arg_text(ctx, what, v[0]), *flags;

	if (!pat || !(flags = arg_text(ctx, what, v[1])))
		return -1;
	if (flags[0] && strcmp(flags, "i") != 0) {
		ops_error(ctx, "flamegraph_config: %s: unknown regex flags '%s'", what, flags);
		return -1;
	}
	re->caseless = flags[0] == 'i';
	re->pattern = strdup(pat);
	return re->pattern ? 0 : -ENOMEM;
}

static int push_name(sqlite3_context *ctx, const char *what, sqlite3_value *v, char ***arr,
		     size_t *n, size_t *cap)
{
	const char *s = arg_text(ctx, what, v);

	if (!s)
		return -1;
	if (ops_grow((void **)arr, cap, *n + 1, sizeof(**arr)) < 0 || !((*arr)[*n] = strdup(s)))
		return -ENOMEM;
	(*n)++;
	return 0;
}

/* One tagged argument group at @argv (its tag first); the values it takes. */
static int config_group(sqlite3_context *ctx, struct fg_query *q, sqlite3_value **argv, int left)
{
	static const char *const views[] = {"TOP_DOWN", "BOTTOM_UP", "PIVOT", "FROM_FRAME", NULL};
	static const char *const filters[] = {"SHOW_STACK", "HIDE_STACK", "HIDE_FRAME", NULL};
	static const char *const aggs[] = {"SUM", "ONE_OR_SUMMARY", "CONCAT_WITH_COMMA", NULL};
	static const char *const tags[] = {"view",     "view_pattern", "filter", "grouping",
					   "value",    "aggregate",    NULL};
	static const int arity[] = {1, 2, 3, 1, 1, 3};
	int tag = token(ctx, "argument", argv[0], tags), k, rc = 0;

	if (tag < 0)
		return -1;
	if (left - 1 < arity[tag]) {
		ops_error(ctx, "flamegraph_config: '%s' takes %d values", tags[tag], arity[tag]);
		return -1;
	}
	switch (tag) {
	case 0:
		if ((k = token(ctx, "view", argv[1], views)) < 0)
			return -1;
		q->view = (enum fg_view)k;
		break;
	case 1:
		free(q->view_pattern.pattern);
		q->view_pattern.pattern = NULL;
		rc = regex_arg(ctx, "view_pattern", argv + 1, &q->view_pattern);
		q->has_view_pattern = rc == 0;
		break;
	case 2:
		if ((k = token(ctx, "filter", argv[1], filters)) < 0)
			return -1;
		if (ops_grow((void **)&q->filters, &q->cap_filters, q->n_filters + 1,
			     sizeof(*q->filters)) < 0)
			return -ENOMEM;
		q->filters[q->n_filters].kind = (enum fg_filter)k;
		q->filters[q->n_filters].re.pattern = NULL;
		rc = regex_arg(ctx, "filter", argv + 2, &q->filters[q->n_filters].re);
		q->n_filters += q->filters[q->n_filters].re.pattern != NULL;
		break;
	case 3:
		rc = push_name(ctx, "grouping", argv[1], &q->grouping, &q->n_grouping,
			       &q->cap_grouping);
		break;
	case 4:
		rc = push_name(ctx, "value", argv[1], &q->values, &q->n_values, &q->cap_values);
		break;
	default: {
		struct fg_agg_spec *a;
		const char *in, *out;

		if ((k = token(ctx, "aggregate", argv[1], aggs)) < 0 ||
		    !(in = arg_text(ctx, "aggregate", argv[2])) ||
		    !(out = arg_text(ctx, "aggregate", argv[3])))
			return -1;
		if (ops_grow((void **)&q->aggs, &q->cap_aggs, q->n_aggs + 1, sizeof(*q->aggs)) < 0)
			return -ENOMEM;
		a = &q->aggs[q->n_aggs];
		a->agg = (enum fg_agg)k;
		a->input = strdup(in);
		a->output = strdup(out);
		q->n_aggs++;
		if (!a->input || !a->output)
			return -ENOMEM;
	}
	}
	if (rc == -ENOMEM)
		return -ENOMEM;
	return rc < 0 ? -1 : 1 + arity[tag];
}

static void config_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct fg_query *q = calloc(1, sizeof(*q));
	int i = 0, used = 0;

	if (!q) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	for (i = 0; i < argc; i += used) {
		used = config_group(ctx, q, argv + i, argc - i);
		if (used < 0)
			break;
	}
	if (used == -ENOMEM) {
		sqlite3_result_error_nomem(ctx);
	} else if (used >= 0 &&
		   (q->view == FG_PIVOT || q->view == FG_FROM_FRAME) != q->has_view_pattern) {
		ops_error(ctx, "flamegraph_config: PIVOT and FROM_FRAME require a view pattern");
	} else if (used >= 0) {
		sqlite3_result_pointer(ctx, q, FG_CONFIG_PTR, fg_query_free);
		return;
	}
	fg_query_free(q);
}

static void find_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	(void)argv;
	sqlite3_result_error(ctx, FIND_FN " must constrain a flamegraph", -1);
}

/* -------------------------------------------------------------- state ---- */

/* A flamegraph table's source, kept by name across reconnects. */
struct fg_state {
	struct fg_state *next;
	char *key; /* "db.table" */
	struct fg_source src;
	uint32_t n_props;
	uint32_t *cand;  /* property columns that are numeric */
	uint32_t n_cand;
};

struct fg_module {
	struct fg_state *states;
};

struct fg_vtab {
	sqlite3_vtab base;
	struct fg_module *mod;
	struct fg_state *st;
};

struct fg_cursor {
	sqlite3_vtab_cursor base;
	struct fg_result res;
	bool super_root, value_is_int;
	int col_of[COL_PROPS]; /* result column of depth/name/self/cum, -1 */
	int *prop_col;         /* per property, then 2 per candidate; -1 */
	size_t row;
};

static void state_free(struct fg_state *st)
{
	if (!st)
		return;
	fg_source_free(&st->src);
	free(st->cand);
	sqlite3_free(st->key);
	free(st);
}

static bool reserved(const char *n)
{
	static const char *const names[] = {"in_config", "_tree_id", "_tree_parent_id", "depth",
					    "name", "self_value", "cumulative_value",
					    "parent_cumulative_value", "x_start", "x_end", NULL};
	int i;

	for (i = 0; names[i]; i++) {
		if (strcmp(n, names[i]) == 0)
			return true;
	}
	return false;
}

/* Runs "SELECT * FROM <source>" into a new state. */
static struct fg_state *load(sqlite3 *conn, const char *source, char **err)
{
	char *sql = sqlite3_mprintf("SELECT * FROM %s", source);
	struct ops_table *t = NULL;
	struct fg_state *st = NULL;
	sqlite3_stmt *stmt = NULL;
	const char *names[OPS_MAX_COLS];
	int n_cols, c, rc;

	if (!sql || sqlite3_prepare_v2(conn, sql, -1, &stmt, NULL) != SQLITE_OK) {
		*err = sqlite3_mprintf("flamegraph: %s", sql ? sqlite3_errmsg(conn) : "out of memory");
		goto fail;
	}
	n_cols = sqlite3_column_count(stmt);
	if (n_cols < 4) {
		*err = sqlite3_mprintf("flamegraph: source must contain id, parent_id, name and value");
		goto fail;
	}
	if (n_cols > OPS_MAX_COLS) {
		*err = sqlite3_mprintf("flamegraph: too many source columns");
		goto fail;
	}
	for (c = 0; c < n_cols; c++)
		names[c] = sqlite3_column_name(stmt, c);
	if (strcmp(names[0], "id") || strcmp(names[1], "parent_id") || strcmp(names[2], "name") ||
	    strcmp(names[3], "value")) {
		*err = sqlite3_mprintf(
			"flamegraph: first source columns must be id, parent_id, name, value");
		goto fail;
	}
	for (c = 4; c < n_cols; c++) {
		if (reserved(names[c])) {
			*err = sqlite3_mprintf("flamegraph: reserved property column '%s'", names[c]);
			goto fail;
		}
	}
	t = ops_table_create((uint32_t)n_cols, names);
	st = calloc(1, sizeof(*st));
	if (!t || !st)
		goto nomem;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		int64_t r = ops_table_append(t);

		if (r < 0)
			goto nomem;
		for (c = 0; c < n_cols; c++) {
			if (ops_set_value(t, (uint32_t)c, (size_t)r, sqlite3_column_value(stmt, c)) < 0)
				goto nomem;
		}
	}
	if (rc != SQLITE_DONE) {
		*err = sqlite3_mprintf("flamegraph: %s", sqlite3_errmsg(conn));
		goto fail;
	}
	sqlite3_finalize(stmt);
	stmt = NULL;
	sqlite3_free(sql);
	sql = NULL;
	rc = fg_source_load(&st->src, t, err);
	t = NULL;
	if (rc < 0)
		goto fail;
	st->n_props = (uint32_t)n_cols - 4;
	st->cand = malloc((size_t)n_cols * sizeof(*st->cand));
	if (!st->cand)
		goto nomem;
	for (c = 4; c < n_cols; c++) {
		if (st->src.kinds[c] == OPS_INT || st->src.kinds[c] == OPS_REAL)
			st->cand[st->n_cand++] = (uint32_t)c;
	}
	return st;
nomem:
	*err = sqlite3_mprintf("out of memory");
fail:
	sqlite3_finalize(stmt);
	sqlite3_free(sql);
	ops_table_destroy(t);
	state_free(st);
	return NULL;
}

static int declare(sqlite3 *conn, const struct fg_state *st, char **err)
{
	const struct ops_table *t = st->src.t;
	sqlite3_str *s = sqlite3_str_new(conn);
	uint32_t i;
	char *sql;
	int rc;

	sqlite3_str_appendall(s, "CREATE TABLE x(in_config BLOB HIDDEN, _tree_id BIGINT, "
				 "_tree_parent_id BIGINT, depth BIGINT, name TEXT, self_value, "
				 "cumulative_value, parent_cumulative_value, x_start, x_end");
	for (i = 0; i < st->n_props; i++)
		sqlite3_str_appendf(s, ", \"%w\"", t->names[4 + i]);
	for (i = 0; i < st->n_cand; i++)
		sqlite3_str_appendf(s, ", \"self_%w\", \"cumulative_%w\"", t->names[st->cand[i]],
				    t->names[st->cand[i]]);
	sqlite3_str_appendall(s, ", PRIMARY KEY(_tree_id)) WITHOUT ROWID");
	sql = sqlite3_str_finish(s);
	if (!sql)
		return SQLITE_NOMEM;
	rc = sqlite3_declare_vtab(conn, sql);
	sqlite3_free(sql);
	if (rc != SQLITE_OK)
		*err = sqlite3_mprintf("flamegraph: failed to declare schema");
	return rc;
}

static int open_vtab(sqlite3 *conn, struct fg_module *mod, struct fg_state *st,
		     sqlite3_vtab **out, char **err)
{
	struct fg_vtab *vt;
	int rc = declare(conn, st, err);

	if (rc != SQLITE_OK)
		return rc;
	vt = sqlite3_malloc(sizeof(*vt));
	if (!vt)
		return SQLITE_NOMEM;
	memset(vt, 0, sizeof(*vt));
	vt->mod = mod;
	vt->st = st;
	*out = &vt->base;
	return SQLITE_OK;
}

static int fg_create(sqlite3 *conn, void *aux, int argc, const char *const *argv,
		     sqlite3_vtab **out, char **err)
{
	struct fg_module *mod = aux;
	struct fg_state *st;
	int rc;

	if (argc != 4) {
		*err = sqlite3_mprintf("flamegraph: wrong number of arguments");
		return SQLITE_ERROR;
	}
	st = load(conn, argv[3], err);
	if (!st)
		return SQLITE_ERROR;
	st->key = sqlite3_mprintf("%s.%s", argv[1], argv[2]);
	if (!st->key) {
		state_free(st);
		return SQLITE_NOMEM;
	}
	rc = open_vtab(conn, mod, st, out, err);
	if (rc != SQLITE_OK) {
		state_free(st);
		return rc;
	}
	st->next = mod->states;
	mod->states = st;
	return SQLITE_OK;
}

static int fg_connect(sqlite3 *conn, void *aux, int argc, const char *const *argv,
		      sqlite3_vtab **out, char **err)
{
	struct fg_module *mod = aux;
	struct fg_state *st;
	char *key;

	if (argc < 3)
		return SQLITE_ERROR;
	key = sqlite3_mprintf("%s.%s", argv[1], argv[2]);
	if (!key)
		return SQLITE_NOMEM;
	for (st = mod->states; st && strcmp(st->key, key) != 0; st = st->next)
		;
	sqlite3_free(key);
	if (!st) {
		*err = sqlite3_mprintf("flamegraph: state not found");
		return SQLITE_ERROR;
	}
	return open_vtab(conn, mod, st, out, err);
}

static int fg_disconnect(sqlite3_vtab *vt)
{
	sqlite3_free(vt);
	return SQLITE_OK;
}

static int fg_destroy(sqlite3_vtab *tab)
{
	struct fg_vtab *vt = (struct fg_vtab *)tab;
	struct fg_state **pp;

	for (pp = &vt->mod->states; *pp; pp = &(*pp)->next) {
		if (*pp == vt->st) {
			*pp = vt->st->next;
			state_free(vt->st);
			break;
		}
	}
	sqlite3_free(vt);
	return SQLITE_OK;
}

static void module_free(void *p)
{
	struct fg_module *mod = p;

	while (mod && mod->states) {
		struct fg_state *st = mod->states;

		mod->states = st->next;
		state_free(st);
	}
	free(mod);
}

/* ------------------------------------------------------------- cursor ---- */

static int fg_best_index(sqlite3_vtab *tab, sqlite3_index_info *info)
{
	int i, n_config = 0;

	(void)tab;
	for (i = 0; i < info->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &info->aConstraint[i];

		if (c->iColumn == COL_CONFIG) {
			if (!c->usable || c->op != SQLITE_INDEX_CONSTRAINT_EQ)
				return SQLITE_CONSTRAINT;
			info->aConstraintUsage[i].argvIndex = 1;
			info->aConstraintUsage[i].omit = 1;
			n_config++;
		}
	}
	if (n_config != 1)
		return SQLITE_CONSTRAINT;
	for (i = 0; i < info->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &info->aConstraint[i];

		if (c->usable && c->iColumn == COL_TREE_ID && c->op == SUPER_ROOT_OP) {
			info->aConstraintUsage[i].argvIndex = 2;
			info->aConstraintUsage[i].omit = 1;
			info->idxNum = 1;
			break;
		}
	}
	info->estimatedCost = 1000;
	return SQLITE_OK;
}

static int fg_open(sqlite3_vtab *tab, sqlite3_vtab_cursor **out)
{
	struct fg_cursor *cur = calloc(1, sizeof(*cur));

	(void)tab;
	if (!cur)
		return SQLITE_NOMEM;
	*out = &cur->base;
	return SQLITE_OK;
}

static int fg_close(sqlite3_vtab_cursor *c)
{
	struct fg_cursor *cur = (struct fg_cursor *)c;

	fg_result_free(&cur->res);
	free(cur->prop_col);
	free(cur);
	return SQLITE_OK;
}

static int vtab_error(sqlite3_vtab *tab, char *msg)
{
	sqlite3_free(tab->zErrMsg);
	tab->zErrMsg = msg;
	return SQLITE_ERROR;
}

/* Result column named "<prefix><name>", or -1. */
static int result_col(const struct fg_result *r, const char *prefix, const char *name)
{
	char *full = sqlite3_mprintf("%s%s", prefix, name);
	int c = full ? ops_table_find(r->t, full) : -1;

	sqlite3_free(full);
	return c;
}

static int fg_filter(sqlite3_vtab_cursor *c, int idx_num, const char *idx_str, int argc,
		     sqlite3_value **argv)
{
	struct fg_cursor *cur = (struct fg_cursor *)c;
	struct fg_vtab *vt = (struct fg_vtab *)c->pVtab;
	const struct fg_state *st = vt->st;
	const struct fg_query *q;
	const char *primary;
	char *err = NULL;
	uint32_t i;

	(void)idx_str;
	fg_result_free(&cur->res);
	cur->row = 0;
	cur->super_root = idx_num == 1;
	if (cur->super_root) {
		const char *sel = argc > 1 ? (const char *)sqlite3_value_text(argv[1]) : NULL;

		if (!sel || strcmp(sel, "SUPER_ROOT") != 0)
			return vtab_error(c->pVtab,
					  sqlite3_mprintf("flamegraph: unknown find selector"));
	}
	q = argc > 0 ? sqlite3_value_pointer(argv[0], FG_CONFIG_PTR) : NULL;
	if (!q)
		return vtab_error(c->pVtab,
				  sqlite3_mprintf("flamegraph: expected the value of "
						  "__intrinsic_flamegraph_config()"));
	if (!q->n_values)
		return vtab_error(c->pVtab, sqlite3_mprintf("flamegraph: at least one value "
							    "column is required"));
	if (cur->super_root || st->src.t->n_rows == 0)
		return SQLITE_OK;
	if (fg_build(&st->src, q, &cur->res, &err) < 0)
		return vtab_error(c->pVtab, err);
	primary = q->values[0];
	cur->col_of[COL_DEPTH] = ops_table_find(cur->res.t, "depth");
	cur->col_of[COL_NAME] = ops_table_find(cur->res.t, "name");
	cur->col_of[COL_SELF] = result_col(&cur->res, "self_", primary);
	cur->col_of[COL_CUM] = result_col(&cur->res, "cumulative_", primary);
	cur->value_is_int = st->src.kinds[ops_table_find(st->src.t, primary)] == OPS_INT;
	free(cur->prop_col);
	cur->prop_col = malloc((st->n_props + 2 * st->n_cand + 1) * sizeof(int));
	if (!cur->prop_col)
		return SQLITE_NOMEM;
	for (i = 0; i < st->n_props; i++)
		cur->prop_col[i] = result_col(&cur->res, "", st->src.t->names[4 + i]);
	for (i = 0; i < st->n_cand; i++) {
		const char *n = st->src.t->names[st->cand[i]];

		cur->prop_col[st->n_props + 2 * i] = result_col(&cur->res, "self_", n);
		cur->prop_col[st->n_props + 2 * i + 1] = result_col(&cur->res, "cumulative_", n);
	}
	return SQLITE_OK;
}

static int fg_next(sqlite3_vtab_cursor *c)
{
	((struct fg_cursor *)c)->row++;
	return SQLITE_OK;
}

static int fg_eof(sqlite3_vtab_cursor *c)
{
	struct fg_cursor *cur = (struct fg_cursor *)c;

	if (cur->super_root)
		return cur->row > 0;
	return !cur->res.t || cur->row >= cur->res.t->n_rows;
}

static void cell_or_null(sqlite3_context *ctx, const struct fg_result *r, int col, size_t row)
{
	if (col < 0)
		sqlite3_result_null(ctx);
	else
		ops_cell_result(ctx, &r->t->cols[col][row]);
}

static int fg_column(sqlite3_vtab_cursor *c, sqlite3_context *ctx, int col)
{
	struct fg_cursor *cur = (struct fg_cursor *)c;
	const struct fg_state *st = ((struct fg_vtab *)c->pVtab)->st;
	const struct fg_result *r = &cur->res;
	size_t row = cur->row;
	uint32_t parent;
	double x;

	if (cur->super_root) {
		if (col == COL_TREE_ID || col == COL_DEPTH)
			sqlite3_result_int64(ctx, 0);
		else if (col == COL_CUM)
			sqlite3_result_double(ctx, st->src.value_sum);
		else
			sqlite3_result_null(ctx);
		return SQLITE_OK;
	}
	parent = r->parent_row[row];
	switch (col) {
	case COL_CONFIG:
		sqlite3_result_null(ctx);
		break;
	case COL_TREE_ID:
		sqlite3_result_int64(ctx, (sqlite3_int64)row);
		break;
	case COL_TREE_PARENT_ID:
		if (parent == FG_NONE)
			sqlite3_result_null(ctx);
		else
			sqlite3_result_int64(ctx, parent);
		break;
	case COL_PARENT_CUM:
		if (parent == FG_NONE)
			sqlite3_result_null(ctx);
		else
			cell_or_null(ctx, r, cur->col_of[COL_CUM], parent);
		break;
	case COL_X_START:
	case COL_X_END:
		x = r->x_start[row];
		if (col == COL_X_END) {
			const struct ops_cell *v = &r->t->cols[cur->col_of[COL_CUM]][row];
			double w = v->type == OPS_INT ? (double)v->u.i : v->u.d;

			x += w > 0 ? w : 0;
		}
		if (cur->value_is_int)
			sqlite3_result_int64(ctx, (sqlite3_int64)x);
		else
			sqlite3_result_double(ctx, x);
		break;
	case COL_DEPTH:
	case COL_NAME:
	case COL_SELF:
	case COL_CUM:
		cell_or_null(ctx, r, cur->col_of[col], row);
		break;
	default:
		if ((uint32_t)(col - COL_PROPS) < st->n_props + 2 * st->n_cand)
			cell_or_null(ctx, r, cur->prop_col[col - COL_PROPS], row);
		else
			sqlite3_result_null(ctx);
		break;
	}
	return SQLITE_OK;
}

static int fg_rowid(sqlite3_vtab_cursor *c, sqlite3_int64 *out)
{
	*out = (sqlite3_int64)((struct fg_cursor *)c)->row;
	return SQLITE_OK;
}

static void unconsumed(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	(void)argv;
	sqlite3_result_error(ctx, "super-root constraint was not consumed", -1);
}

static int fg_find_function(sqlite3_vtab *tab, int n_arg, const char *name,
			    void (**fn)(sqlite3_context *, int, sqlite3_value **), void **arg)
{
	(void)tab;
	(void)n_arg;
	(void)arg;
	if (strcasecmp(name, FIND_FN) != 0)
		return 0;
	*fn = unconsumed;
	return SUPER_ROOT_OP;
}

static const sqlite3_module fg_module_def = {
	.iVersion = 1,
	.xCreate = fg_create,
	.xConnect = fg_connect,
	.xBestIndex = fg_best_index,
	.xDisconnect = fg_disconnect,
	.xDestroy = fg_destroy,
	.xOpen = fg_open,
	.xClose = fg_close,
	.xFilter = fg_filter,
	.xNext = fg_next,
	.xEof = fg_eof,
	.xColumn = fg_column,
	.xRowid = fg_rowid,
	.xFindFunction = fg_find_function,
};

int ops_flamegraph_register(sqlite3 *conn)
{
	struct fg_module *mod = calloc(1, sizeof(*mod));
	int rc;

	if (!mod)
		return SQLITE_NOMEM;
	rc = sqlite3_create_module_v2(conn, "__intrinsic_flamegraph", &fg_module_def, mod,
				      module_free);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function(conn, "__intrinsic_flamegraph_config", -1, SQLITE_UTF8,
					     NULL, config_fn, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function(conn, FIND_FN, 2, SQLITE_UTF8, NULL, find_fn, NULL,
					     NULL);
	return rc;
}

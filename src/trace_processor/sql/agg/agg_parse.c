// SPDX-License-Identifier: Apache-2.0
/*
 * agg_parse.c - recognises the GROUP BY statements the native path runs
 * (agg.h), plans them over the trace processor's tables and writes the
 * statement SQLite runs instead over the __tp_agg result table.
 *
 * The clauses are read in dependency order: FROM (tables, N:1 joins on id
 * columns), WHERE (column-vs-literal comparisons), GROUP BY (columns), and
 * only then the expressions of SELECT, HAVING and ORDER BY, whose column
 * references must be keys or columns the keys fix (a thread's name when
 * grouping by utid). Those expressions are copied with every aggregate and
 * column reference replaced by a result column, so SQLite still evaluates
 * the arithmetic, CASE, functions, HAVING, ORDER BY and LIMIT itself.
 */
#include "trace_processor/sql/agg/agg_int.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "trace_processor/sql/agg/agg_lex.h"
#include "trace_processor/storage/storage.h"

/* A view of ours that is one table under another name, maybe with aliases. */
struct view_map {
	const char *name;
	size_t table_offset; /* of the struct tp_table in struct tp_db */
	const char *const *aliases; /* pairs: view column, table column; NULL-ended */
};

static const char *const k_slice_aliases[] = {"cat", "category", "slice_id", "id", NULL};

static const struct view_map k_views[] = {
	{"sched", offsetof(struct tp_db, sched), NULL},
	{"sched_slice", offsetof(struct tp_db, sched), NULL},
	{"raw", offsetof(struct tp_db, ftrace_event), NULL},
	{"slice", offsetof(struct tp_db, slice), k_slice_aliases},
	{"slices", offsetof(struct tp_db, slice), k_slice_aliases},
};

struct from_tab {
	const struct tok *name, *alias;
	const char *const *aliases;
	const struct tok *using_col; /* JOIN ... USING (col): hidden for unqualified names */
};

enum expr_mode { MODE_SELECT, MODE_HAVING, MODE_ORDER };

struct parser {
	const struct tp_agg_schema *schema;
	struct tp_db *db;
	struct tp_agg_plan *plan;
	const struct tok *toks;
	int n;
	struct from_tab from[TP_AGG_MAX_TABLES];
	bool determined[TP_AGG_MAX_TABLES];
	bool has_agg;
	/* Select items: token ranges and aliases (NULL: none). */
	int item_start[TP_AGG_MAX_OUTS], item_end[TP_AGG_MAX_OUTS];
	const struct tok *item_alias[TP_AGG_MAX_OUTS];
	int n_items;
};

/* ------------------------------------------------------------ tables ---- */

static struct tp_table *table_named(struct tp_db *db, const struct tok *name,
				    const char *const **aliases)
{
	size_t i;

	*aliases = NULL;
	for (i = 0; i < sizeof(k_views) / sizeof(k_views[0]); i++) {
		if (tok_eq(name, k_views[i].name)) {
			*aliases = k_views[i].aliases;
			return (struct tp_table *)((char *)db + k_views[i].table_offset);
		}
	}
	for (i = 0; i < TP_DB_N_TABLES; i++) {
		struct tp_table *t = tp_db_table(db, (unsigned)i);

		/* The other "__intrinsic" tables hide behind views that compute columns. */
		if (strncmp(t->name, "__", 2) != 0 && tok_eq(name, t->name))
			return t;
	}
	return NULL;
}

/* Column @name of from[@tab]. Return: its index, or -1. */
static int column_named(const struct parser *p, unsigned tab, const struct tok *name)
{
	const struct tp_table *t = p->plan->tabs[tab];
	const char *const *a = p->from[tab].aliases;
	const char *want = NULL;
	uint32_t c;

	for (; a && *a; a += 2) {
		if (tok_eq(name, a[0])) {
			want = a[1];
			break;
		}
	}
	for (c = 0; c < t->n_cols; c++) {
		if (want ? strcmp(t->specs[c].name, want) == 0 : tok_eq(name, t->specs[c].name))
			return (int)c;
	}
	return -1;
}

/* The name SQLite gives the result column of a plain reference to @name. */
static const char *declared_name(const struct parser *p, unsigned tab, const struct tok *name)
{
	const char *const *a = p->from[tab].aliases;
	int c;

	for (; a && *a; a += 2) {
		if (tok_eq(name, a[0]))
			return a[0];
	}
	c = column_named(p, tab, name);
	return c < 0 ? NULL : p->plan->tabs[tab]->specs[c].name;
}

static enum tp_type col_type(const struct tp_agg_plan *plan, struct tp_agg_ref r)
{
	return plan->tabs[r.tab]->specs[r.col].type;
}

static bool is_int_like(enum tp_type type)
{
	return type == TP_INT || type == TP_NARROW || type == TP_ID;
}

/* An inner join makes the joined table's id equal its source cell. */
static struct tp_agg_ref canonical(const struct tp_agg_plan *plan, struct tp_agg_ref r)
{
	while (r.tab > 0 && !plan->joins[r.tab].is_left && col_type(plan, r) == TP_ID)
		r = plan->joins[r.tab].src;
	return r;
}

/*
 * Resolves [qual.]name to a column; unqualified names must be unique over
 * the tables (a USING column counts for its left side only).
 * Return: 0, or -1 if unknown or ambiguous. *out_tab is the table named.
 */
static int resolve(const struct parser *p, const struct tok *qual, const struct tok *name,
		   struct tp_agg_ref *out, unsigned *out_tab)
{
	unsigned i, found = 0, tab = 0;
	int col = -1, c;

	for (i = 0; i < p->plan->n_tabs; i++) {
		const struct from_tab *f = &p->from[i];

		if (qual) {
			const struct tok *as = f->alias ? f->alias : f->name;

			if (as->len != qual->len || strncasecmp(as->s, qual->s, qual->len) != 0)
				continue;
		} else if (f->using_col && f->using_col->len == name->len &&
			   strncasecmp(f->using_col->s, name->s, name->len) == 0) {
			continue;
		}
		c = column_named(p, i, name);
		if (c >= 0) {
			found++;
			tab = i;
			col = c;
		}
	}
	if (found != 1)
		return -1;
	out->tab = (uint8_t)tab;
	out->col = (uint32_t)col;
	*out_tab = tab;
	*out = canonical(p->plan, *out);
	return 0;
}

static bool ref_eq(struct tp_agg_ref a, struct tp_agg_ref b)
{
	return a.tab == b.tab && a.col == b.col;
}

/* Tokens [i, i+1) or [i, i+3) as a column reference. Return: its length or 0. */
static int colref_len(const struct parser *p, int i, int end)
{
	if (i >= end || p->toks[i].kind != TOK_IDENT)
		return 0;
	if (i + 2 < end && tok_is_op(&p->toks[i + 1], ".")) {
		if (p->toks[i + 2].kind != TOK_IDENT)
			return 0;
		return 3;
	}
	if (i + 1 < end && (tok_is_op(&p->toks[i + 1], ".") || tok_is_op(&p->toks[i + 1], "(")))
		return 0;
	return 1;
}

static int resolve_at(const struct parser *p, int i, int len, struct tp_agg_ref *out,
		      unsigned *out_tab)
{
	if (len == 3)
		return resolve(p, &p->toks[i], &p->toks[i + 2], out, out_tab);
	return resolve(p, NULL, &p->toks[i], out, out_tab);
}

/* ------------------------------------------------------------ clauses ---- */

static int find_kw(const struct parser *p, int from, enum kw kw)
{
	int depth = 0, i;

	for (i = from; i < p->n; i++) {
		if (tok_is_op(&p->toks[i], "("))
			depth++;
		else if (tok_is_op(&p->toks[i], ")"))
			depth--;
		else if (depth == 0 && p->toks[i].kind == TOK_KW && p->toks[i].kw == kw)
			return i;
	}
	return -1;
}

/* FROM t [[AS] a] {[LEFT [OUTER] | INNER] JOIN u [[AS] b] (USING (c) | ON x = y)}. */
static int parse_from(struct parser *p, int i, int end)
{
	struct tp_agg_plan *plan = p->plan;

	for (;;) {
		struct from_tab *f;
		struct tp_table *t;
		const char *const *aliases;
		unsigned k = plan->n_tabs;
		bool is_left = false;

		if (k > 0) {
			if (i >= end)
				return 0;
			if (p->toks[i].kw == KW_LEFT) {
				is_left = true;
				i++;
				if (i < end && p->toks[i].kw == KW_OUTER)
					i++;
			} else if (p->toks[i].kw == KW_INNER) {
				i++;
			}
			if (i >= end || p->toks[i].kw != KW_JOIN)
				return -1;
			i++;
		}
		if (k == TP_AGG_MAX_TABLES || i >= end || p->toks[i].kind != TOK_IDENT)
			return -1;
		t = table_named(p->db, &p->toks[i], &aliases);
		if (!t || !tp_agg_schema_is_ours(p->schema, p->toks[i].s, p->toks[i].len))
			return -1;
		f = &p->from[k];
		memset(f, 0, sizeof(*f));
		f->name = &p->toks[i];
		f->aliases = aliases;
		plan->tabs[k] = t;
		plan->joins[k].is_left = is_left;
		i++;
		if (i < end && p->toks[i].kw == KW_AS)
			i++;
		if (i < end && p->toks[i].kind == TOK_IDENT) {
			f->alias = &p->toks[i];
			i++;
		} else if (i > 0 && p->toks[i - 1].kw == KW_AS) {
			return -1;
		}
		plan->n_tabs++;
		if (k == 0)
			continue;

		/* The join condition: the new table's id column = an earlier cell. */
		if (i < end && p->toks[i].kw == KW_USING) {
			struct tp_agg_ref left;
			unsigned tab;
			int c;

			if (i + 3 >= end || !tok_is_op(&p->toks[i + 1], "(") ||
			    p->toks[i + 2].kind != TOK_IDENT || !tok_is_op(&p->toks[i + 3], ")"))
				return -1;
			c = column_named(p, k, &p->toks[i + 2]);
			if (c < 0 || t->specs[c].type != TP_ID)
				return -1;
			/* Resolved before the new table hides its copy of the column. */
			plan->n_tabs--;
			if (resolve(p, NULL, &p->toks[i + 2], &left, &tab) < 0)
				return -1;
			plan->n_tabs++;
			f->using_col = &p->toks[i + 2];
			plan->joins[k].src = left;
			i += 4;
		} else if (i < end && p->toks[i].kw == KW_ON) {
			struct tp_agg_ref a, b;
			unsigned ta, tb;
			int la = colref_len(p, i + 1, end), lb;

			if (!la || i + 1 + la >= end || !(tok_is_op(&p->toks[i + 1 + la], "=") ||
							    tok_is_op(&p->toks[i + 1 + la], "==")))
				return -1;
			lb = colref_len(p, i + 2 + la, end);
			/* Before canonical(): the new table's own id must be named. */
			plan->joins[k].is_left = true;
			if (!lb || resolve_at(p, i + 1, la, &a, &ta) < 0 ||
			    resolve_at(p, i + 2 + la, lb, &b, &tb) < 0)
				return -1;
			plan->joins[k].is_left = is_left;
			if (ta == k && tb != k && a.tab == k && col_type(plan, a) == TP_ID)
				plan->joins[k].src = b;
			else if (tb == k && ta != k && b.tab == k && col_type(plan, b) == TP_ID)
				plan->joins[k].src = a;
			else
				return -1;
			i += 2 + la + lb;
		} else {
			return -1;
		}
		if (!is_int_like(col_type(plan, plan->joins[k].src)))
			return -1;
	}
}

/* Parses a possibly negative integer literal at @i. Return: tokens used, or 0. */
static int int_literal(const struct parser *p, int i, int end, int64_t *out)
{
	bool neg = false;
	uint64_t v = 0, limit;
	size_t k;
	const struct tok *t;

	if (i < end && tok_is_op(&p->toks[i], "-")) {
		neg = true;
		i++;
	}
	if (i >= end || p->toks[i].kind != TOK_NUM)
		return 0;
	t = &p->toks[i];
	limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (k = 0; k < t->len; k++) {
		unsigned d = (unsigned)(t->s[k] - '0');

		if (v > (limit - d) / 10)
			return 0;
		v = v * 10 + d;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return neg ? 2 : 1;
}

static enum tp_agg_cmp swap_cmp(enum tp_agg_cmp c)
{
	switch (c) {
	case TP_AGG_LT:
		return TP_AGG_GT;
	case TP_AGG_LE:
		return TP_AGG_GE;
	case TP_AGG_GT:
		return TP_AGG_LT;
	case TP_AGG_GE:
		return TP_AGG_LE;
	default:
		return c;
	}
}

static bool cmp_of(const struct tok *t, enum tp_agg_cmp *out)
{
	static const struct {
		const char *op;
		enum tp_agg_cmp cmp;
	} k_cmps[] = {{"=", TP_AGG_EQ}, {"==", TP_AGG_EQ}, {"!=", TP_AGG_NE}, {"<>", TP_AGG_NE},
		      {"<", TP_AGG_LT}, {"<=", TP_AGG_LE}, {">", TP_AGG_GT}, {">=", TP_AGG_GE}};
	size_t i;

	for (i = 0; i < sizeof(k_cmps) / sizeof(k_cmps[0]); i++) {
		if (tok_is_op(t, k_cmps[i].op)) {
			*out = k_cmps[i].cmp;
			return true;
		}
	}
	return false;
}

static int add_filter(struct parser *p, struct tp_agg_ref r, enum tp_agg_cmp cmp, int64_t v)
{
	struct tp_agg_plan *plan = p->plan;

	if (plan->n_filters == TP_AGG_MAX_FILTERS)
		return -1;
	memset(&plan->filters[plan->n_filters], 0, sizeof(plan->filters[0]));
	plan->filters[plan->n_filters].ref = r;
	plan->filters[plan->n_filters].cmp = cmp;
	plan->filters[plan->n_filters].v = v;
	plan->filters[plan->n_filters].slot = plan->n_filters;
	plan->n_filters++;
	return 0;
}

/* The text of string literal @lit ('' is one quote). Return: its length or -1. */
static int unquote(const struct tok *lit, char *buf, size_t cap)
{
	size_t i, n = 0;

	for (i = 1; i + 1 < lit->len; i++) {
		if (n + 1 >= cap)
			return -1;
		buf[n++] = lit->s[i];
		if (lit->s[i] == '\'')
			i++;
	}
	buf[n] = '\0';
	return (int)n;
}

/* col [NOT] GLOB|LIKE 'pattern' on a string column. */
static int add_pattern_filter(struct parser *p, struct tp_agg_ref r, enum tp_agg_cmp cmp,
			      bool is_not, const struct tok *lit)
{
	struct tp_agg_filter *f;

	if (add_filter(p, r, cmp, 0) < 0)
		return -1;
	f = &p->plan->filters[p->plan->n_filters - 1];
	f->is_not = is_not;
	return unquote(lit, f->pattern, sizeof(f->pattern)) < 0 ? -1 : 0;
}

/* col [NOT] IN (literal, ...): integers on integer columns, strings on text. */
static int add_in_filter(struct parser *p, struct tp_agg_ref r, bool is_not, int *i, int end)
{
	bool is_str = col_type(p->plan, r) == TP_STR;
	struct tp_agg_filter *f;
	int k = *i;

	if (k >= end || !tok_is_op(&p->toks[k], "(") || add_filter(p, r, TP_AGG_IN, 0) < 0)
		return -1;
	f = &p->plan->filters[p->plan->n_filters - 1];
	f->is_not = is_not;
	for (k++;; k++) {
		int64_t v;
		int used;

		if (is_str) {
			char buf[256];
			int n;

			if (k >= end || p->toks[k].kind != TOK_STR)
				return -1;
			n = unquote(&p->toks[k], buf, sizeof(buf));
			if (n < 0)
				return -1;
			/* A string no cell holds can match nothing. */
			v = tp_str_find(&p->db->strings, buf, (size_t)n);
			used = 1;
		} else {
			used = int_literal(p, k, end, &v);
			if (!used)
				return -1;
		}
		if (v != 0 || !is_str) {
			if (f->n_in == TP_AGG_MAX_IN)
				return -1;
			f->in[f->n_in++] = v;
		}
		k += used;
		if (k < end && tok_is_op(&p->toks[k], ")"))
			break;
		if (k >= end || !tok_is_op(&p->toks[k], ","))
			return -1;
	}
	*i = k + 1;
	return 0;
}

/* A comparison with a string literal: by string id, = and != only. */
static int add_str_filter(struct parser *p, struct tp_agg_ref r, enum tp_agg_cmp cmp,
			  const struct tok *lit)
{
	char buf[256];
	int n;
	uint32_t id;

	if (cmp != TP_AGG_EQ && cmp != TP_AGG_NE)
		return -1;
	n = unquote(lit, buf, sizeof(buf));
	if (n < 0)
		return -1;
	id = tp_str_find(&p->db->strings, buf, (size_t)n);
	if (id == 0) {
		/* No cell holds the string: = matches nothing, != every non-NULL. */
		if (cmp == TP_AGG_EQ)
			p->plan->matches_nothing = true;
		return add_filter(p, r, TP_AGG_NOT_NULL, 0);
	}
	return add_filter(p, r, cmp, id);
}

/* One WHERE term at *i: col op lit | lit op col | col IS [NOT] NULL | col BETWEEN a AND b. */
static int parse_cond(struct parser *p, int *i, int end)
{
	struct tp_agg_ref r;
	enum tp_agg_cmp cmp;
	unsigned tab;
	int64_t a, b;
	int k = *i, len, used;
	const struct tok *lit;
	enum tp_type type;

	len = colref_len(p, k, end);
	if (len) {
		if (resolve_at(p, k, len, &r, &tab) < 0)
			return -1;
		k += len;
		type = col_type(p->plan, r);
		if (k + 1 < end && p->toks[k].kw == KW_IS) {
			bool is_not = k + 2 < end && p->toks[k + 1].kw == KW_NOT;

			k += is_not ? 2 : 1;
			if (k >= end || p->toks[k].kw != KW_NULL)
				return -1;
			*i = k + 1;
			return add_filter(p, r, is_not ? TP_AGG_NOT_NULL : TP_AGG_IS_NULL, 0);
		}
		if (type == TP_REAL || k >= end)
			return -1;
		{
			bool is_not = p->toks[k].kw == KW_NOT && k + 1 < end;
			enum kw kw = p->toks[k + is_not].kw;

			if (kw == KW_IN) {
				k += 1 + is_not;
				if (add_in_filter(p, r, is_not, &k, end) < 0)
					return -1;
				*i = k;
				return 0;
			}
			if (kw == KW_GLOB || kw == KW_LIKE) {
				k += 1 + is_not;
				if (type != TP_STR || k >= end || p->toks[k].kind != TOK_STR)
					return -1;
				*i = k + 1;
				return add_pattern_filter(p, r, kw == KW_GLOB ? TP_AGG_GLOB : TP_AGG_LIKE,
							  is_not, &p->toks[k]);
			}
			if (is_not)
				return -1;
		}
		if (p->toks[k].kw == KW_BETWEEN && is_int_like(type)) {
			used = int_literal(p, k + 1, end, &a);
			if (!used || k + 1 + used >= end || p->toks[k + 1 + used].kw != KW_AND)
				return -1;
			k += 2 + used;
			used = int_literal(p, k, end, &b);
			if (!used)
				return -1;
			*i = k + used;
			if (add_filter(p, r, TP_AGG_GE, a) < 0)
				return -1;
			return add_filter(p, r, TP_AGG_LE, b);
		}
		if (!cmp_of(&p->toks[k], &cmp))
			return -1;
		k++;
		if (type == TP_STR) {
			if (k >= end || p->toks[k].kind != TOK_STR)
				return -1;
			*i = k + 1;
			return add_str_filter(p, r, cmp, &p->toks[k]);
		}
		used = int_literal(p, k, end, &a);
		if (!used)
			return -1;
		*i = k + used;
		return add_filter(p, r, cmp, a);
	}
	/* literal op column */
	lit = &p->toks[k];
	used = int_literal(p, k, end, &a);
	if (!used && (k >= end || lit->kind != TOK_STR))
		return -1;
	k += used ? used : 1;
	if (k >= end || !cmp_of(&p->toks[k], &cmp))
		return -1;
	k++;
	len = colref_len(p, k, end);
	if (!len || resolve_at(p, k, len, &r, &tab) < 0)
		return -1;
	*i = k + len;
	cmp = swap_cmp(cmp);
	type = col_type(p->plan, r);
	if (type == TP_STR)
		return used ? -1 : add_str_filter(p, r, cmp, lit);
	if (!used || type == TP_REAL)
		return -1;
	return add_filter(p, r, cmp, a);
}

static int parse_where(struct parser *p, int i, int end)
{
	for (;;) {
		if (parse_cond(p, &i, end) < 0)
			return -1;
		if (i == end)
			return 0;
		if (p->toks[i].kw != KW_AND)
			return -1;
		i++;
	}
}

static int parse_group_by(struct parser *p, int i, int end)
{
	struct tp_agg_plan *plan = p->plan;

	for (;;) {
		struct tp_agg_ref r;
		unsigned tab;
		enum tp_type type;
		int len = colref_len(p, i, end);

		if (!len || plan->n_keys == TP_AGG_MAX_KEYS || resolve_at(p, i, len, &r, &tab) < 0)
			return -1;
		type = col_type(plan, r);
		if (type == TP_REAL)
			return -1;
		plan->keys[plan->n_keys++] = r;
		i += len;
		if (i == end)
			return 0;
		if (!tok_is_op(&p->toks[i], ","))
			return -1;
		i++;
	}
}

/* Tables whose row the group keys fix (so any of their columns is a group value). */
static void find_determined(struct parser *p)
{
	const struct tp_agg_plan *plan = p->plan;
	unsigned t, k;

	for (t = 0; t < plan->n_tabs; t++) {
		bool d = false;

		for (k = 0; k < plan->n_keys; k++) {
			if (plan->keys[k].tab == t && col_type(plan, plan->keys[k]) == TP_ID)
				d = true;
			if (t > 0 && ref_eq(plan->keys[k], plan->joins[t].src))
				d = true;
		}
		if (t > 0 && p->determined[plan->joins[t].src.tab])
			d = true;
		p->determined[t] = d;
	}
}

/* --------------------------------------------------------- rewriting ---- */

static int add_out(struct tp_agg_plan *plan, enum tp_agg_fn fn, struct tp_agg_ref r)
{
	unsigned i;

	for (i = 0; i < plan->n_outs; i++) {
		const struct tp_agg_out *o = &plan->outs[i];

		if (o->fn == fn && (fn == TP_AGG_COUNT_STAR || ref_eq(o->ref, r)))
			return (int)i;
	}
	if (plan->n_outs == TP_AGG_MAX_OUTS)
		return -1;
	plan->outs[plan->n_outs].fn = fn;
	plan->outs[plan->n_outs].ref = r;
	return (int)plan->n_outs++;
}

/* A column used outside aggregates: a key, or fixed by the keys. */
static int column_out(struct parser *p, struct tp_agg_ref r)
{
	unsigned k;

	for (k = 0; k < p->plan->n_keys; k++) {
		if (ref_eq(p->plan->keys[k], r))
			return add_out(p->plan, TP_AGG_COLUMN, r);
	}
	if (!p->determined[r.tab])
		return -1;
	return add_out(p->plan, TP_AGG_COLUMN, r);
}

static int matching_paren(const struct parser *p, int open, int end)
{
	int depth = 0, i;

	for (i = open; i < end; i++) {
		if (tok_is_op(&p->toks[i], "("))
			depth++;
		else if (tok_is_op(&p->toks[i], ")") && --depth == 0)
			return i;
	}
	return -1;
}

static bool is_alias(const struct parser *p, const struct tok *t)
{
	int k;

	for (k = 0; k < p->n_items; k++) {
		const struct tok *a = p->item_alias[k];

		if (a && a->kind == TOK_IDENT && a->len == t->len &&
		    strncasecmp(a->s, t->s, t->len) == 0)
			return true;
	}
	return false;
}

static const char *const k_other_aggregates[] = {
	"group_concat", "string_agg", "json_group_array", "json_group_object", NULL,
};

/* An aggregate call at [i, close]. Return: its result column, or -1. */
static int aggregate_out(struct parser *p, int i, int close)
{
	const struct tok *fn = &p->toks[i];
	struct tp_agg_ref r = {0, 0};
	enum tp_agg_fn f;
	unsigned tab;
	int len;
	enum tp_type type;

	if (tok_eq(fn, "count") && close == i + 3 && tok_is_op(&p->toks[i + 2], "*"))
		return add_out(p->plan, TP_AGG_COUNT_STAR, r);
	len = colref_len(p, i + 2, close);
	if (!len || i + 2 + len != close || resolve_at(p, i + 2, len, &r, &tab) < 0)
		return -1;
	type = col_type(p->plan, r);
	if (tok_eq(fn, "count"))
		return add_out(p->plan, TP_AGG_COUNT, r);
	if (!is_int_like(type) && type != TP_REAL)
		return -1;
	if (tok_eq(fn, "sum"))
		f = TP_AGG_SUM;
	else if (tok_eq(fn, "total"))
		f = TP_AGG_TOTAL;
	else if (tok_eq(fn, "avg"))
		f = TP_AGG_AVG;
	else if (tok_eq(fn, "min"))
		f = TP_AGG_MIN;
	else
		f = TP_AGG_MAX;
	return add_out(p->plan, f, r);
}

static bool is_aggregate_name(const struct tok *t)
{
	return tok_eq(t, "sum") || tok_eq(t, "count") || tok_eq(t, "avg") || tok_eq(t, "total") ||
	       tok_eq(t, "min") || tok_eq(t, "max");
}

static int count_args(const struct parser *p, int open, int close)
{
	int depth = 0, n = 1, i;

	if (close == open + 1)
		return 0;
	for (i = open + 1; i < close; i++) {
		if (tok_is_op(&p->toks[i], "("))
			depth++;
		else if (tok_is_op(&p->toks[i], ")"))
			depth--;
		else if (depth == 0 && tok_is_op(&p->toks[i], ","))
			n++;
	}
	return n;
}

static bool kw_allowed(enum kw kw, enum expr_mode mode)
{
	switch (kw) {
	case KW_AND: case KW_OR: case KW_NOT: case KW_IS: case KW_NULL: case KW_CASE:
	case KW_WHEN: case KW_THEN: case KW_ELSE: case KW_END: case KW_BETWEEN:
	case KW_LIKE: case KW_GLOB: case KW_IN:
		return true;
	case KW_ASC: case KW_DESC: case KW_NULLS: case KW_FIRST: case KW_LAST:
		return mode == MODE_ORDER;
	default:
		return false;
	}
}

/* Copies tokens [i, end) to @s with aggregates and columns as __cN. */
static int rewrite(struct parser *p, int i, int end, enum expr_mode mode, sqlite3_str *s)
{
	while (i < end) {
		const struct tok *t = &p->toks[i];
		int len, out;

		if (t->kind == TOK_IDENT && i + 1 < end && tok_is_op(&p->toks[i + 1], "(")) {
			int close = matching_paren(p, i + 1, end);
			int n_args = close < 0 ? 0 : count_args(p, i + 1, close);
			size_t k;

			if (close < 0)
				return -1;
			for (k = 0; k_other_aggregates[k]; k++) {
				if (tok_eq(t, k_other_aggregates[k]))
					return -1;
			}
			if (is_aggregate_name(t) &&
			    !((tok_eq(t, "min") || tok_eq(t, "max")) && n_args > 1)) {
				if (n_args != 1 || (out = aggregate_out(p, i, close)) < 0)
					return -1;
				p->has_agg = true;
				sqlite3_str_appendf(s, " __c%d", out);
				i = close + 1;
				continue;
			}
			/* A scalar function: its name as written, then its arguments. */
			sqlite3_str_appendf(s, " %.*s(", (int)t->len, t->s);
			if (rewrite(p, i + 2, close, mode, s) < 0)
				return -1;
			sqlite3_str_appendall(s, ")");
			i = close + 1;
			continue;
		}
		if (t->kind == TOK_IDENT) {
			struct tp_agg_ref r;
			unsigned tab;

			len = colref_len(p, i, end);
			if (!len)
				return -1;
			if (mode == MODE_ORDER && len == 1 && is_alias(p, t)) {
				/* An alias alone is that result column; inside an
				 * expression a column of the same name would be ambiguous. */
				bool alone = (i == 0 || tok_is_op(&p->toks[i - 1], ",") ||
					      p->toks[i - 1].kw == KW_BY) &&
					     (i + 1 == end || tok_is_op(&p->toks[i + 1], ",") ||
					      p->toks[i + 1].kw == KW_ASC || p->toks[i + 1].kw == KW_DESC ||
					      p->toks[i + 1].kw == KW_NULLS);

				if (!alone && resolve_at(p, i, len, &r, &tab) == 0)
					return -1;
				sqlite3_str_appendf(s, " %.*s", (int)t->len, t->s);
				i++;
				continue;
			}
			if (resolve_at(p, i, len, &r, &tab) < 0 || (out = column_out(p, r)) < 0)
				return -1;
			sqlite3_str_appendf(s, " __c%d", out);
			i += len;
			continue;
		}
		if (t->kind == TOK_QIDENT || (t->kind == TOK_KW && !kw_allowed(t->kw, mode)) ||
		    tok_is_op(t, ".") || tok_is_op(t, ";"))
			return -1;
		sqlite3_str_appendf(s, " %.*s", (int)t->len, t->s);
		i++;
	}
	return 0;
}

/* Splits SELECT's list into items with their aliases. */
static int split_items(struct parser *p, int from, int end)
{
	int depth = 0, start = from, i;

	for (i = from; i <= end; i++) {
		const struct tok *t = i < end ? &p->toks[i] : NULL;
		int last;

		if (t && tok_is_op(t, "(")) {
			depth++;
			continue;
		}
		if (t && tok_is_op(t, ")")) {
			depth--;
			continue;
		}
		if (t && !(depth == 0 && tok_is_op(t, ",")))
			continue;
		if (p->n_items == TP_AGG_MAX_OUTS || i == start)
			return -1;
		last = i - 1;
		p->item_alias[p->n_items] = NULL;
		if (last - start >= 1 &&
		    (p->toks[last].kind == TOK_IDENT || p->toks[last].kind == TOK_QIDENT)) {
			const struct tok *prev = &p->toks[last - 1];

			if (prev->kw == KW_AS) {
				p->item_alias[p->n_items] = &p->toks[last];
				last -= 2;
			} else if (tok_is_op(prev, ")") || prev->kind == TOK_NUM ||
				   prev->kind == TOK_REAL || prev->kind == TOK_STR ||
				   prev->kw == KW_END || prev->kw == KW_NULL ||
				   (prev->kind == TOK_IDENT && !(last - start >= 2 &&
								 tok_is_op(&p->toks[last - 2], ".")))) {
				p->item_alias[p->n_items] = &p->toks[last];
				last -= 1;
			}
		}
		if (last < start)
			return -1;
		p->item_start[p->n_items] = start;
		p->item_end[p->n_items] = last + 1;
		p->n_items++;
		start = i + 1;
	}
	return 0;
}

/* The result column name SQLite gives item @k, double-quoted into @s. */
static void append_item_name(struct parser *p, int k, sqlite3_str *s)
{
	int a = p->item_start[k], b = p->item_end[k];
	const struct tok *alias = p->item_alias[k];
	const char *name = NULL;
	size_t len, i;

	if (alias) {
		sqlite3_str_appendf(s, " AS %.*s", (int)alias->len, alias->s);
		return;
	}
	if (b - a == 1 || b - a == 3) {
		struct tp_agg_ref r;
		unsigned tab;
		int clen = colref_len(p, a, b);

		if (clen == b - a && resolve_at(p, a, clen, &r, &tab) == 0)
			name = declared_name(p, tab, &p->toks[b - 1]);
	}
	if (name) {
		len = strlen(name);
	} else {
		name = p->toks[a].s;
		len = (size_t)(p->toks[b - 1].s + p->toks[b - 1].len - name);
	}
	sqlite3_str_appendall(s, " AS \"");
	for (i = 0; i < len; i++) {
		if (name[i] == '"')
			sqlite3_str_appendchar(s, 1, '"');
		sqlite3_str_appendchar(s, 1, name[i]);
	}
	sqlite3_str_appendchar(s, 1, '"');
}

#define N_CLAUSES 5

/* Where the clause after token @after ends: the next clause keyword or @end. */
static int next_clause(const int *cl, int end, int after)
{
	int k, n = end;

	for (k = 0; k < N_CLAUSES; k++) {
		if (cl[k] > after && cl[k] < n)
			n = cl[k];
	}
	return n;
}

static int parse_statement(struct parser *p, uint64_t handle, sqlite3_str *s)
{
	int from, where, group, having, order, limit, end = p->n, k, i;
	int cl[N_CLAUSES], clause_end;

	if (p->n < 4 || p->toks[0].kw != KW_SELECT)
		return -1;
	for (i = 0; i < p->n; i++) {
		/* Subqueries and set operations are SQLite's. */
		if (p->toks[i].kw == KW_OTHER || (i > 0 && p->toks[i].kw == KW_SELECT))
			return -1;
	}
	from = find_kw(p, 1, KW_FROM);
	if (from < 0)
		return -1;
	where = find_kw(p, from, KW_WHERE);
	group = find_kw(p, from, KW_GROUP);
	having = find_kw(p, from, KW_HAVING);
	order = find_kw(p, from, KW_ORDER);
	limit = find_kw(p, from, KW_LIMIT);
	/* Clauses come in this order, each at most once (find_kw gives the first). */
	cl[0] = where;
	cl[1] = group;
	cl[2] = having;
	cl[3] = order;
	cl[4] = limit;
	for (k = 0, i = from; k < N_CLAUSES; k++) {
		if (cl[k] < 0)
			continue;
		if (cl[k] < i)
			return -1;
		i = cl[k];
	}
	clause_end = next_clause(cl, end, from);
	if (parse_from(p, from + 1, clause_end) < 0)
		return -1;
	if (where >= 0 && parse_where(p, where + 1, next_clause(cl, end, where)) < 0)
		return -1;
	if (group >= 0) {
		if (group + 1 >= end || p->toks[group + 1].kw != KW_BY ||
		    parse_group_by(p, group + 2, next_clause(cl, end, group)) < 0)
			return -1;
	}
	if (having >= 0 && group < 0)
		return -1;
	find_determined(p);
	if (split_items(p, 1, from) < 0)
		return -1;

	sqlite3_str_appendall(s, "SELECT");
	for (k = 0; k < p->n_items; k++) {
		if (k > 0)
			sqlite3_str_appendall(s, ",");
		if (rewrite(p, p->item_start[k], p->item_end[k], MODE_SELECT, s) < 0)
			return -1;
		append_item_name(p, k, s);
	}
	sqlite3_str_appendf(s, " FROM __tp_agg WHERE __handle = %llu", (unsigned long long)handle);
	if (having >= 0) {
		sqlite3_str_appendall(s, " AND (");
		if (rewrite(p, having + 1, next_clause(cl, end, having), MODE_HAVING, s) < 0)
			return -1;
		sqlite3_str_appendall(s, " )");
	}
	if (order >= 0) {
		if (order + 1 >= end || p->toks[order + 1].kw != KW_BY)
			return -1;
		sqlite3_str_appendall(s, " ORDER BY");
		if (rewrite(p, order + 2, next_clause(cl, end, order), MODE_ORDER, s) < 0)
			return -1;
	}
	if (limit >= 0) {
		sqlite3_str_appendall(s, " LIMIT");
		for (i = limit + 1; i < end; i++) {
			const struct tok *t = &p->toks[i];

			if (!(t->kind == TOK_NUM || t->kw == KW_OFFSET || tok_is_op(t, ",") ||
			      tok_is_op(t, "-") || tok_is_op(t, "+")))
				return -1;
			sqlite3_str_appendf(s, " %.*s", (int)t->len, t->s);
		}
	}
	/* Not an aggregate query: nothing to gain. */
	if (!p->has_agg && p->plan->n_keys == 0)
		return -1;
	return 0;
}

int tp_agg_parse(const struct tp_agg_schema *schema, struct tp_db *db, const char *sql,
		 const char *end, uint64_t handle, struct tp_agg_plan *plan, char **out)
{
	struct tok *toks;
	struct parser *p;
	sqlite3_str *s = NULL;
	char *text;
	int n, rc = 0;

	toks = malloc(LEX_MAX_TOKENS * sizeof(*toks));
	p = calloc(1, sizeof(*p));
	if (!toks || !p) {
		rc = -ENOMEM;
		goto out;
	}
	n = lex_statement(sql, end, toks);
	if (n < 0)
		goto out;
	memset(plan, 0, sizeof(*plan));
	p->schema = schema;
	p->db = db;
	p->plan = plan;
	p->toks = toks;
	p->n = n;
	s = sqlite3_str_new(NULL);
	if (parse_statement(p, handle, s) < 0)
		goto out;
	if (sqlite3_str_errcode(s) != SQLITE_OK) {
		rc = -ENOMEM;
		goto out;
	}
	text = sqlite3_str_finish(s);
	s = NULL;
	*out = text ? strdup(text) : NULL;
	sqlite3_free(text);
	rc = *out ? 1 : -ENOMEM;
out:
	if (s)
		sqlite3_free(sqlite3_str_finish(s));
	free(p);
	free(toks);
	return rc;
}

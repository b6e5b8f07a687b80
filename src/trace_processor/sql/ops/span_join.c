// SPDX-License-Identifier: Apache-2.0
/*
 * span_join.c - the SPAN_JOIN, SPAN_LEFT_JOIN and SPAN_OUTER_JOIN virtual
 * table modules, as upstream defines them:
 *
 *   CREATE VIRTUAL TABLE j USING SPAN_JOIN(t1 [PARTITIONED p], t2 [PARTITIONED p]);
 *
 * Each row of j is a stretch of time where a row of t1 and a row of t2
 * overlap (in the same partition when both are partitioned): ts is the
 * later start, dur runs to the earlier end, and every other column of both
 * tables is passed through. The left join also keeps the stretches of t1's
 * rows where t2 has none, the outer join also those of t2's rows where t1
 * has none, with NULL for the columns of the missing side.
 * Columns: ts, dur, the partition column (if any), then t1's and t2's own.
 *
 * The join streams: each table is read once through "SELECT ... ORDER BY
 * partition, ts", by a cursor that walks its rows and the gaps between
 * them ("shadows": a gap inside a partition, or a run of partitions with
 * no row at all), and the two cursors advance by a merge on (partition,
 * end). In the mixed case (one table partitioned, the other not) the
 * unpartitioned one is read again for each partition. Rows with a NULL
 * partition are skipped; dur = -1 counts as an instant for overlap.
 * Output is ordered by (partition, ts), which xBestIndex tells SQLite.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sqlite3.h>

#include "trace_processor/sql/ops/ops_int.h"

/* Most columns of one joined table (a SQLite table has at most 2000). */
#define SJ_MAX_COLS 2000

/* Most reads of one span join inside each other: more is a cycle (a
 * joined table that is a view over the join itself), refused instead of
 * recursing until the stack overflows. */
#define SJ_MAX_NESTING 8

enum sj_kind { SJ_INNER, SJ_LEFT, SJ_OUTER };

/* Which gaps a table's cursor stops on. */
enum sj_shadows { SHADOW_NONE, SHADOW_PRESENT, SHADOW_ALL };

enum sj_partitioning { PART_NONE, PART_SAME, PART_MIXED };

/* One of the two joined tables. */
struct sj_table {
	char *name;       /* as written (may be a table function call) */
	char *part_col;   /* NULL: not partitioned */
	uint32_t n_cols;
	char **cols;      /* column names */
	const char **types; /* the declared type upstream gives each, or NULL */
	int ts_idx, dur_idx, part_idx; /* -1 where absent */
	enum sj_shadows shadows;
};

/* Where an output column (from index 2 or 3) comes from. */
struct sj_loc {
	uint8_t table;
	uint32_t col;
};

/* What the three modules of one connection share: the count of span join
 * reads under way inside each other (any span join, as a cycle may pass
 * through several, and SQLite may connect a table anew at each level). */
struct sj_conn {
	int nesting;
	int refs;
	struct sj_aux {
		struct sj_conn *conn;
		enum sj_kind kind;
	} aux[3];
};

struct sj_vtab {
	sqlite3_vtab base;
	sqlite3 *db;
	struct sj_conn *conn;
	enum sj_kind kind;
	enum sj_partitioning partitioning;
	struct sj_table t[2];
	uint32_t first_own;   /* output index of the first passed-through column */
	uint32_t n_out;
	struct sj_loc *loc;   /* n_out entries; only [first_own, n_out) used */
};

enum sj_state { ST_REAL, ST_PRESENT_SHADOW, ST_MISSING_SHADOW, ST_EOF };

/* A cursor over one joined table: its rows and the shadows between them. */
struct sj_query {
	const struct sj_table *t;
	sqlite3_stmt *stmt;
	char *sql;          /* the statement's text (reused while it is the same) */
	enum sj_state state;
	bool row_eof;       /* the statement has no current row */
	int64_t ts, ts_end; /* current span [ts, ts_end) */
	int64_t part;       /* ST_REAL, ST_PRESENT_SHADOW */
	int64_t miss_lo, miss_hi; /* ST_MISSING_SHADOW: partitions [lo, hi) */
};

struct sj_cursor {
	sqlite3_vtab_cursor base;
	struct sj_query q[2];
	struct sj_query *next; /* the query xNext advances */
	int64_t mixed_part;    /* PART_MIXED: partition being joined */
	int64_t rowid;
};

/* ---------------------------------------------------------- arithmetic ---- */

/* Wrapping arithmetic (upstream's int64 math, without C's overflow UB). */
static int64_t wrap_add(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}

static int64_t wrap_sub(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a - (uint64_t)b);
}

/* ------------------------------------------------------------ tables ---- */

static void table_fini(struct sj_table *t)
{
	uint32_t i;

	sqlite3_free(t->name);
	sqlite3_free(t->part_col);
	for (i = 0; t->cols && i < t->n_cols; i++)
		sqlite3_free(t->cols[i]);
	sqlite3_free(t->cols);
	sqlite3_free(t->types);
	memset(t, 0, sizeof(*t));
}

/* The declared type upstream reads a column's type as (NULL: none), or
 * NULL with *@is_known false for a type it does not know. */
static const char *map_type(const char *raw, bool *is_known)
{
	static const char *const ints[] = {"BIG INT", "BIGINT", "UNSIGNED INT", "INT",
					   "BOOLEAN", "INTEGER"};
	size_t i;

	*is_known = true;
	if (!raw || !*raw)
		return NULL;
	if (!strcasecmp(raw, "STRING") || !strcasecmp(raw, "TEXT"))
		return "TEXT";
	if (!strcasecmp(raw, "DOUBLE"))
		return "DOUBLE";
	if (!strcasecmp(raw, "BLOB"))
		return "BLOB";
	for (i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		if (!strcasecmp(raw, ints[i]))
			return "BIGINT";
	/* Our own tables declare a few more; read them by SQLite's affinity. */
	if (strcasestr(raw, "INT") || !strcasecmp(raw, "LONG") ||
	    !strcasecmp(raw, "TIMESTAMP") || !strcasecmp(raw, "DURATION") ||
	    !strncasecmp(raw, "ID", 2) || !strncasecmp(raw, "JOINID", 6) ||
	    !strcasecmp(raw, "BOOL"))
		return "BIGINT";
	if (strcasestr(raw, "CHAR") || strcasestr(raw, "CLOB") || strcasestr(raw, "TEXT"))
		return "TEXT";
	if (strcasestr(raw, "REAL") || strcasestr(raw, "FLOA") || strcasestr(raw, "DOUB"))
		return "DOUBLE";
	/* Others (NUM, ...): upstream's tables never declare them, and ours
	 * are read like an untyped column rather than refused. */
	return NULL;
}

/* Splits "name [PARTITIONED col]" (words split by blanks) into @t. */
static int parse_descriptor(const char *raw, struct sj_table *t, char **err)
{
	const char *words[4];
	size_t lens[4];
	int n = 0;
	const char *p = raw;

	while (*p && n < 4) {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		if (!*p)
			break;
		words[n] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
			p++;
		lens[n] = (size_t)(p - words[n]);
		n++;
	}
	if (n == 0) {
		*err = sqlite3_mprintf("SPAN_JOIN: Missing table name");
		return SQLITE_ERROR;
	}
	t->name = sqlite3_mprintf("%.*s", (int)lens[0], words[0]);
	if (!t->name)
		return SQLITE_NOMEM;
	if (n == 1)
		return SQLITE_OK;
	if (lens[1] != 11 || strncasecmp(words[1], "PARTITIONED", 11)) {
		*err = sqlite3_mprintf("SPAN_JOIN: Invalid token");
		return SQLITE_ERROR;
	}
	if (n == 2) {
		*err = sqlite3_mprintf("SPAN_JOIN: Missing partitioning column");
		return SQLITE_ERROR;
	}
	t->part_col = sqlite3_mprintf("%.*s", (int)lens[2], words[2]);
	return t->part_col ? SQLITE_OK : SQLITE_NOMEM;
}

/* Reads the columns of table @t->name and finds ts, dur and the partition. */
static int load_columns(sqlite3 *db, struct sj_table *t, char **err)
{
	sqlite3_stmt *st = NULL;
	size_t base_len = strcspn(t->name, "(");
	char *sql, *tname;
	int rc, ts_found = 0;
	size_t cap = 0;

	if (t->part_col && (!strcmp(t->part_col, "ts") || !strcmp(t->part_col, "dur"))) {
		*err = sqlite3_mprintf("SPAN_JOIN: partition column cannot be any of {ts, dur} "
				       "for table %s", t->name);
		return SQLITE_ERROR;
	}
	tname = sqlite3_mprintf("%.*s", (int)base_len, t->name);
	if (!tname)
		return SQLITE_NOMEM;
	sql = sqlite3_mprintf("SELECT name, type FROM pragma_table_info(%Q)", tname);
	sqlite3_free(tname);
	if (!sql)
		return SQLITE_NOMEM;
	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK) {
		*err = sqlite3_mprintf("SPAN_JOIN: cannot read the columns of %s: %s", t->name,
				       sqlite3_errmsg(db));
		return SQLITE_ERROR;
	}
	t->ts_idx = t->dur_idx = t->part_idx = -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		const char *type = (const char *)sqlite3_column_text(st, 1);
		bool is_known;
		const char *mapped;

		if (!name || !*name) {
			*err = sqlite3_mprintf("Schema for %s has invalid column values", t->name);
			goto fail;
		}
		mapped = map_type(type, &is_known);
		if (!is_known) {
			*err = sqlite3_mprintf("Unknown column type '%s' on table %s", type,
					       t->name);
			goto fail;
		}
		if (strchr(name, ',')) {
			*err = sqlite3_mprintf("SPAN_JOIN: column '%s' cannot contain any ','",
					       name);
			goto fail;
		}
		if (strchr(name, ':')) {
			*err = sqlite3_mprintf("SPAN_JOIN: column '%s' cannot contain any ':'",
					       name);
			goto fail;
		}
		if (t->n_cols >= SJ_MAX_COLS) {
			*err = sqlite3_mprintf("SPAN_JOIN: too many columns in %s", t->name);
			goto fail;
		}
		if (t->n_cols == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			char **nc = sqlite3_realloc64(t->cols, ncap * sizeof(*nc));
			const char **nt;

			if (!nc)
				goto nomem;
			t->cols = nc;
			nt = sqlite3_realloc64(t->types, ncap * sizeof(*nt));
			if (!nt)
				goto nomem;
			t->types = nt;
			cap = ncap;
		}
		t->cols[t->n_cols] = sqlite3_mprintf("%s", name);
		if (!t->cols[t->n_cols])
			goto nomem;
		t->types[t->n_cols] = mapped;
		if (!strcmp(name, "ts")) {
			ts_found++;
			t->ts_idx = (int)t->n_cols;
		} else if (!strcmp(name, "dur")) {
			t->dur_idx = (int)t->n_cols;
		} else if (t->part_col && !strcmp(name, t->part_col)) {
			t->part_idx = (int)t->n_cols;
		}
		t->n_cols++;
	}
	if (rc != SQLITE_DONE) {
		*err = sqlite3_mprintf("Querying schema of table %s failed", t->name);
		goto fail;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (t->n_cols == 0) {
		*err = sqlite3_mprintf("Unknown table or view name '%s'", t->name);
		return SQLITE_ERROR;
	}
	if (ts_found != 1) {
		*err = sqlite3_mprintf("SPAN_JOIN: Missing ts column in table %s", t->name);
		return SQLITE_ERROR;
	}
	if (t->part_col && t->part_idx < 0) {
		*err = sqlite3_mprintf("SPAN_JOIN: Missing partition column '%s' in table '%s'",
				       t->part_col, t->name);
		return SQLITE_ERROR;
	}
	return SQLITE_OK;
nomem:
	sqlite3_finalize(st);
	return SQLITE_NOMEM;
fail:
	sqlite3_finalize(st);
	return SQLITE_ERROR;
}

/* ts, dur and the join's partition column are not passed through. */
static bool is_special(const struct sj_vtab *vt, const char *name)
{
	const char *pc = vt->t[0].part_col ? vt->t[0].part_col : vt->t[1].part_col;

	return !strcmp(name, "ts") || !strcmp(name, "dur") ||
	       (vt->partitioning != PART_NONE && pc && !strcmp(name, pc));
}

static const char *join_part_col(const struct sj_vtab *vt)
{
	return vt->t[0].part_col ? vt->t[0].part_col : vt->t[1].part_col;
}

/* ----------------------------------------------------------- the vtab ---- */

static void vtab_free(struct sj_vtab *vt)
{
	if (!vt)
		return;
	table_fini(&vt->t[0]);
	table_fini(&vt->t[1]);
	sqlite3_free(vt->loc);
	sqlite3_free(vt);
}

/* Declares the schema and fills the map of passed-through columns. */
static int declare(sqlite3 *db, struct sj_vtab *vt)
{
	sqlite3_str *s = sqlite3_str_new(db);
	uint32_t n = vt->partitioning == PART_NONE ? 2 : 3;
	uint32_t k, i, total = 2 + (n == 3) + vt->t[0].n_cols + vt->t[1].n_cols;
	char *sql;
	int rc;

	vt->loc = sqlite3_malloc64((uint64_t)total * sizeof(*vt->loc));
	if (!vt->loc) {
		sqlite3_free(sqlite3_str_finish(s));
		return SQLITE_NOMEM;
	}
	vt->first_own = n;
	sqlite3_str_appendall(s, "CREATE TABLE x(ts BIGINT, dur BIGINT, ");
	if (n == 3)
		sqlite3_str_appendf(s, "\"%w\" BIGINT, ", join_part_col(vt));
	for (k = 0; k < 2; k++) {
		const struct sj_table *t = &vt->t[k];

		for (i = 0; i < t->n_cols; i++) {
			/* A table's own special columns only: in a mixed join, the
			 * unpartitioned table's column named like the partition
			 * is declared twice and refused, as upstream's is. */
			if (!strcmp(t->cols[i], "ts") || !strcmp(t->cols[i], "dur") ||
			    (int)i == t->part_idx)
				continue;
			if (t->types[i])
				sqlite3_str_appendf(s, "\"%w\" %s, ", t->cols[i], t->types[i]);
			else
				sqlite3_str_appendf(s, "\"%w\", ", t->cols[i]);
			vt->loc[n].table = (uint8_t)k;
			vt->loc[n].col = i;
			n++;
		}
	}
	vt->n_out = n;
	if (vt->partitioning == PART_NONE)
		sqlite3_str_appendall(s, "PRIMARY KEY(ts))");
	else
		sqlite3_str_appendf(s, "PRIMARY KEY(ts, \"%w\"))", join_part_col(vt));
	sql = sqlite3_str_finish(s);
	if (!sql)
		return SQLITE_NOMEM;
	/* Refused (a column twice): SQLite says "vtable constructor failed". */
	rc = sqlite3_declare_vtab(db, sql);
	sqlite3_free(sql);
	return rc;
}

/* Upstream's first duplicate passed-through column name, or NULL. */
static const char *find_duplicate(const struct sj_vtab *vt)
{
	uint32_t k, i, k2, j;

	for (k = 0; k < 2; k++) {
		for (i = 0; i < vt->t[k].n_cols; i++) {
			const char *name = vt->t[k].cols[i];

			if (is_special(vt, name))
				continue;
			/* Seen before: earlier in this table, or anywhere in t1 for t2. */
			for (k2 = 0; k2 <= k; k2++) {
				uint32_t end = k2 == k ? i : vt->t[k2].n_cols;

				for (j = 0; j < end; j++)
					if (!strcmp(vt->t[k2].cols[j], name))
						return name;
			}
		}
	}
	return NULL;
}

static int sj_create(sqlite3 *db, void *aux, int argc, const char *const *argv,
		     sqlite3_vtab **out, char **err)
{
	struct sj_vtab *vt;
	bool mixed1, mixed2;
	const char *dup;
	int rc, k;

	if (argc != 5) {
		*err = sqlite3_mprintf("SPAN_JOIN: expected exactly two arguments");
		return SQLITE_ERROR;
	}
	vt = sqlite3_malloc(sizeof(*vt));
	if (!vt)
		return SQLITE_NOMEM;
	memset(vt, 0, sizeof(*vt));
	vt->db = db;
	vt->conn = ((struct sj_aux *)aux)->conn;
	vt->kind = ((struct sj_aux *)aux)->kind;
	for (k = 0; k < 2; k++) {
		rc = parse_descriptor(argv[3 + k], &vt->t[k], err);
		if (rc != SQLITE_OK)
			goto fail;
	}
	if (!vt->t[0].part_col && !vt->t[1].part_col) {
		vt->partitioning = PART_NONE;
	} else if (vt->t[0].part_col && vt->t[1].part_col) {
		if (strcmp(vt->t[0].part_col, vt->t[1].part_col)) {
			*err = sqlite3_mprintf(
				"SPAN_JOIN: mismatching partitions between the two tables; "
				"(partition %s in table %s, partition %s in table %s)",
				vt->t[0].part_col, vt->t[0].name, vt->t[1].part_col,
				vt->t[1].name);
			rc = SQLITE_ERROR;
			goto fail;
		}
		vt->partitioning = PART_SAME;
	} else {
		vt->partitioning = PART_MIXED;
	}
	/*
	 * Shadows: the outer join's tables and the left join's second table
	 * stop on gaps; only on gaps inside partitions they have (never on
	 * missing partitions) when unpartitioned or partitioned in a mixed join.
	 */
	mixed1 = vt->t[0].part_col && vt->partitioning == PART_MIXED;
	mixed2 = vt->t[1].part_col && vt->partitioning == PART_MIXED;
	vt->t[0].shadows = SHADOW_NONE;
	if (vt->kind == SJ_OUTER)
		vt->t[0].shadows = (mixed1 || vt->partitioning == PART_NONE) ? SHADOW_PRESENT
									  : SHADOW_ALL;
	rc = load_columns(db, &vt->t[0], err);
	if (rc != SQLITE_OK)
		goto fail;
	vt->t[1].shadows = SHADOW_NONE;
	if (vt->kind != SJ_INNER)
		vt->t[1].shadows = (mixed2 || vt->partitioning == PART_NONE) ? SHADOW_PRESENT
									  : SHADOW_ALL;
	rc = load_columns(db, &vt->t[1], err);
	if (rc != SQLITE_OK)
		goto fail;
	if (vt->t[0].dur_idx < 0 && vt->t[1].dur_idx < 0) {
		*err = sqlite3_mprintf("SPAN_JOIN: column dur must be present in at least one of "
				       "tables %s and %s", vt->t[0].name, vt->t[1].name);
		rc = SQLITE_ERROR;
		goto fail;
	}
	dup = find_duplicate(vt);
	if (dup) {
		*err = sqlite3_mprintf("SPAN_JOIN: column %s present in both tables %s and %s",
				       dup, vt->t[0].name, vt->t[1].name);
		rc = SQLITE_ERROR;
		goto fail;
	}
	rc = declare(db, vt);
	if (rc != SQLITE_OK)
		goto fail;
	*out = &vt->base;
	return SQLITE_OK;
fail:
	vtab_free(vt);
	return rc;
}

static int sj_disconnect(sqlite3_vtab *base)
{
	vtab_free((struct sj_vtab *)base);
	return SQLITE_OK;
}

/* ----------------------------------------------------------- planning ---- */

/* The name of output column @col in table @k, or NULL if @k has none. */
static const char *column_in(const struct sj_vtab *vt, int k, int col)
{
	if (col == 0)
		return "ts";
	if (col == 1)
		return "dur";
	if (col < 0 || (uint32_t)col >= vt->n_out)
		return NULL;
	if (col == 2 && vt->partitioning != PART_NONE)
		return vt->t[k].part_col;
	if (vt->loc[col].table != k)
		return NULL;
	return vt->t[k].cols[vt->loc[col].col];
}

static const char *op_sql(int op)
{
	switch (op) {
	case SQLITE_INDEX_CONSTRAINT_EQ: return " = ?";
	case SQLITE_INDEX_CONSTRAINT_NE: return " != ?";
	case SQLITE_INDEX_CONSTRAINT_GE: return " >= ?";
	case SQLITE_INDEX_CONSTRAINT_GT: return " > ?";
	case SQLITE_INDEX_CONSTRAINT_LE: return " <= ?";
	case SQLITE_INDEX_CONSTRAINT_LT: return " < ?";
	case SQLITE_INDEX_CONSTRAINT_LIKE: return " LIKE ?";
	case SQLITE_INDEX_CONSTRAINT_GLOB: return " GLOB ?";
	case SQLITE_INDEX_CONSTRAINT_ISNULL: return " IS NULL";
	case SQLITE_INDEX_CONSTRAINT_ISNOTNULL: return " IS NOT NULL";
	default: return NULL;
	}
}

/*
 * idxStr: for each table, "k;" then per constraint pushed into its
 * statement "argv:col:op;" (argv index from 0, the table's column index,
 * SQLite's op code). A constraint is pushed only into a table that stops on
 * no shadows (a filtered table would show false gaps), and on ts only as
 * "<=" (a later start does not change the spans before it); dur is left to
 * SQLite. SQLite checks every constraint again on the output.
 */
static int sj_best_index(sqlite3_vtab *base, sqlite3_index_info *info)
{
	struct sj_vtab *vt = (struct sj_vtab *)base;
	sqlite3_str *s = sqlite3_str_new(vt->db);
	int i, k, argv = 1;

	for (i = 0; i < info->nConstraint; i++)
		if (info->aConstraint[i].usable)
			info->aConstraintUsage[i].argvIndex = argv++;
	if (vt->partitioning == PART_NONE) {
		info->orderByConsumed = info->nOrderBy == 1 && info->aOrderBy[0].iColumn == 0 &&
					!info->aOrderBy[0].desc;
	} else {
		bool first_part = info->nOrderBy > 0 && info->aOrderBy[0].iColumn == 2 &&
				  !info->aOrderBy[0].desc;
		bool second_ts = info->nOrderBy >= 2 && info->aOrderBy[1].iColumn == 0 &&
				 !info->aOrderBy[1].desc;

		info->orderByConsumed = (info->nOrderBy == 1 && first_part) ||
					(info->nOrderBy == 2 && first_part && second_ts);
	}
	for (k = 0; k < 2; k++) {
		const struct sj_table *t = &vt->t[k];

		sqlite3_str_appendf(s, "%d;", k);
		for (i = 0; i < info->nConstraint; i++) {
			const struct sqlite3_index_constraint *c = &info->aConstraint[i];
			const char *name;
			uint32_t j;

			if (!c->usable || t->shadows != SHADOW_NONE || !op_sql(c->op))
				continue;
			name = column_in(vt, k, c->iColumn);
			if (!name || !strcmp(name, "dur"))
				continue;
			if (!strcmp(name, "ts") && c->op != SQLITE_INDEX_CONSTRAINT_LE)
				continue;
			for (j = 0; j < t->n_cols; j++)
				if (!strcmp(t->cols[j], name))
					break;
			if (j == t->n_cols)
				continue;
			sqlite3_str_appendf(s, "%d:%u:%d;", info->aConstraintUsage[i].argvIndex - 1,
					    j, c->op);
		}
	}
	info->idxStr = sqlite3_str_finish(s);
	if (!info->idxStr)
		return SQLITE_NOMEM;
	info->needToFreeIdxStr = 1;
	info->estimatedCost = 1e6;
	return SQLITE_OK;
}

/* ------------------------------------------------------------ queries ---- */

static int64_t query_col_int(const struct sj_query *q, int idx)
{
	return idx < 0 ? 0 : sqlite3_column_int64(q->stmt, idx);
}

static int64_t row_ts(const struct sj_query *q)
{
	return query_col_int(q, q->t->ts_idx);
}

static int64_t row_dur(const struct sj_query *q)
{
	return query_col_int(q, q->t->dur_idx);
}

static int64_t row_part(const struct sj_query *q)
{
	return query_col_int(q, q->t->part_idx);
}

/* The end of the span, with dur = -1 read as an instant. */
static int64_t adjusted_end(const struct sj_query *q)
{
	return (q->ts != INT64_MIN && q->ts_end == q->ts - 1) ? q->ts : q->ts_end;
}

static int64_t first_part(const struct sj_query *q)
{
	return q->state == ST_MISSING_SHADOW ? q->miss_lo : q->part;
}

static int64_t last_part(const struct sj_query *q)
{
	return q->state == ST_MISSING_SHADOW ? wrap_sub(q->miss_hi, 1) : q->part;
}

/* Steps the statement to its next row with a non-NULL partition. */
static int step_row(struct sj_vtab *vt, struct sj_query *q)
{
	for (;;) {
		int rc = sqlite3_step(q->stmt);

		if (rc == SQLITE_DONE) {
			q->row_eof = true;
			return SQLITE_OK;
		}
		if (rc != SQLITE_ROW) {
			sqlite3_free(vt->base.zErrMsg);
			vt->base.zErrMsg = sqlite3_mprintf("%s", sqlite3_errmsg(vt->db));
			q->row_eof = true;
			return SQLITE_ERROR;
		}
		q->row_eof = false;
		if (q->t->part_idx < 0)
			return SQLITE_OK;
		switch (sqlite3_column_type(q->stmt, q->t->part_idx)) {
		case SQLITE_NULL:
			continue;
		case SQLITE_INTEGER:
			return SQLITE_OK;
		default:
			sqlite3_free(vt->base.zErrMsg);
			vt->base.zErrMsg = sqlite3_mprintf("SPAN_JOIN: partition is not an INT column");
			return SQLITE_ERROR;
		}
	}
}

static bool is_valid(const struct sj_query *q)
{
	if (q->state == ST_PRESENT_SHADOW && q->t->shadows == SHADOW_NONE)
		return false;
	if (q->state == ST_MISSING_SHADOW && q->t->shadows != SHADOW_ALL)
		return false;
	if (q->state != ST_REAL && q->ts == q->ts_end)
		return false;
	if (q->state == ST_MISSING_SHADOW && q->miss_lo == q->miss_hi)
		return false;
	return true;
}

/* One step of the walk: row -> gap after it -> (missing partitions ->
 * gap before the next row ->) next row ... -> end. */
static int step_state(struct sj_vtab *vt, struct sj_query *q)
{
	int rc;

	switch (q->state) {
	case ST_REAL: {
		bool to_end;
		int64_t end = adjusted_end(q);

		rc = step_row(vt, q);
		if (rc != SQLITE_OK)
			return rc;
		to_end = q->row_eof || (q->t->part_idx >= 0 && q->part != row_part(q));
		q->state = ST_PRESENT_SHADOW;
		q->ts = end;
		q->ts_end = to_end ? INT64_MAX : row_ts(q);
		return SQLITE_OK;
	}
	case ST_PRESENT_SHADOW:
		if (q->ts_end == INT64_MAX) {
			q->state = ST_MISSING_SHADOW;
			q->ts = 0;
			q->ts_end = INT64_MAX;
			q->miss_lo = wrap_add(q->part, 1);
			q->miss_hi = q->row_eof ? INT64_MAX : row_part(q);
		} else {
			q->state = ST_REAL;
			q->ts = row_ts(q);
			q->ts_end = wrap_add(q->ts, row_dur(q));
		}
		return SQLITE_OK;
	case ST_MISSING_SHADOW:
		if (q->miss_hi == INT64_MAX) {
			q->state = ST_EOF;
		} else {
			q->state = ST_PRESENT_SHADOW;
			q->ts = 0;
			q->ts_end = row_ts(q);
			q->part = q->miss_hi;
		}
		return SQLITE_OK;
	case ST_EOF:
		break;
	}
	sqlite3_free(vt->base.zErrMsg);
	vt->base.zErrMsg = sqlite3_mprintf("SPAN_JOIN: stepped past the end");
	return SQLITE_ERROR;
}

static int skip_invalid(struct sj_vtab *vt, struct sj_query *q)
{
	while (q->state != ST_EOF && !is_valid(q)) {
		int rc = step_state(vt, q);

		if (rc != SQLITE_OK)
			return rc;
	}
	return SQLITE_OK;
}

static int query_next(struct sj_vtab *vt, struct sj_query *q)
{
	int rc = step_state(vt, q);

	return rc == SQLITE_OK ? skip_invalid(vt, q) : rc;
}

/* Runs the statement from its start: the walk begins with the partitions
 * before the first row missing. */
static int query_rewind(struct sj_vtab *vt, struct sj_query *q)
{
	int rc;

	sqlite3_reset(q->stmt);
	q->row_eof = false;
	rc = step_row(vt, q);
	if (rc != SQLITE_OK)
		return rc;
	q->state = ST_MISSING_SHADOW;
	q->ts = 0;
	q->ts_end = INT64_MAX;
	q->part = INT64_MIN;
	q->miss_lo = INT64_MIN;
	if (q->row_eof)
		q->miss_hi = INT64_MAX;
	else if (q->t->part_idx >= 0)
		q->miss_hi = row_part(q);
	else
		q->miss_hi = INT64_MIN;
	return skip_invalid(vt, q);
}

/* Builds (or reuses) @q's statement for the constraints of @plan (the
 * part of idxStr after "k;") and starts it. */
static int query_start(struct sj_vtab *vt, struct sj_query *q, const char *plan,
		       sqlite3_value **argv, int argc, bool empty_is_missing)
{
	const struct sj_table *t = q->t;
	sqlite3_str *s = sqlite3_str_new(vt->db);
	const char *p;
	char *sql;
	uint32_t i;
	int n_where = 0, rc;

	sqlite3_str_appendall(s, "SELECT ");
	for (i = 0; i < t->n_cols; i++)
		sqlite3_str_appendf(s, "%s\"%w\"", i ? ", " : "", t->cols[i]);
	sqlite3_str_appendf(s, " FROM %s", t->name);
	for (p = plan; *p && !(p[0] >= '0' && p[0] <= '9' && p[1] == ';'); ) {
		long a, c, op;
		char *end;

		a = strtol(p, &end, 10);
		c = strtol(end + 1, &end, 10);
		op = strtol(end + 1, &end, 10);
		p = end + 1;
		if (a < 0 || a >= argc || c < 0 || (uint32_t)c >= t->n_cols || !op_sql((int)op))
			continue;
		sqlite3_str_appendf(s, "%s\"%w\"%s", n_where++ ? " AND " : " WHERE ",
				    t->cols[c], op_sql((int)op));
	}
	if (t->part_col)
		sqlite3_str_appendf(s, " ORDER BY \"%w\", ts", t->part_col);
	else
		sqlite3_str_appendall(s, " ORDER BY ts");
	sql = sqlite3_str_finish(s);
	if (!sql)
		return SQLITE_NOMEM;
	if (!q->stmt || !q->sql || strcmp(q->sql, sql)) {
		sqlite3_finalize(q->stmt);
		q->stmt = NULL;
		sqlite3_free(q->sql);
		q->sql = sql;
		rc = sqlite3_prepare_v2(vt->db, sql, -1, &q->stmt, NULL);
		if (rc != SQLITE_OK) {
			sqlite3_free(vt->base.zErrMsg);
			vt->base.zErrMsg = sqlite3_mprintf("%s", sqlite3_errmsg(vt->db));
			return rc;
		}
	} else {
		sqlite3_free(sql);
		sqlite3_reset(q->stmt);
	}
	/* Bind the values in the order the WHERE clause names them. */
	n_where = 0;
	for (p = plan; *p && !(p[0] >= '0' && p[0] <= '9' && p[1] == ';'); ) {
		long a, c, op;
		char *end;

		a = strtol(p, &end, 10);
		c = strtol(end + 1, &end, 10);
		op = strtol(end + 1, &end, 10);
		p = end + 1;
		if (a < 0 || a >= argc || c < 0 || (uint32_t)c >= t->n_cols || !op_sql((int)op))
			continue;
		if (op == SQLITE_INDEX_CONSTRAINT_ISNULL || op == SQLITE_INDEX_CONSTRAINT_ISNOTNULL)
			continue;
		rc = sqlite3_bind_value(q->stmt, ++n_where, argv[a]);
		if (rc != SQLITE_OK)
			return rc;
	}
	rc = query_rewind(vt, q);
	if (rc != SQLITE_OK)
		return rc;
	if (empty_is_missing && q->state == ST_EOF)
		q->state = ST_MISSING_SHADOW;
	return SQLITE_OK;
}

/* ------------------------------------------------------------- cursor ---- */

static int sj_open(sqlite3_vtab *base, sqlite3_vtab_cursor **out)
{
	struct sj_vtab *vt = (struct sj_vtab *)base;
	struct sj_cursor *c = sqlite3_malloc(sizeof(*c));

	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	c->q[0].t = &vt->t[0];
	c->q[1].t = &vt->t[1];
	c->q[0].state = c->q[1].state = ST_EOF;
	*out = &c->base;
	return SQLITE_OK;
}

static int sj_close(sqlite3_vtab_cursor *base)
{
	struct sj_cursor *c = (struct sj_cursor *)base;
	int k;

	for (k = 0; k < 2; k++) {
		sqlite3_finalize(c->q[k].stmt);
		sqlite3_free(c->q[k].sql);
	}
	sqlite3_free(c);
	return SQLITE_OK;
}

static bool overlaps(const struct sj_vtab *vt, const struct sj_cursor *c)
{
	const struct sj_query *a = &c->q[0], *b = &c->q[1];
	bool a_real = a->state == ST_REAL, b_real = b->state == ST_REAL;

	if (a->state == ST_EOF || b->state == ST_EOF || (!a_real && !b_real))
		return false;
	if (vt->partitioning == PART_SAME) {
		int64_t a0 = first_part(a), a1 = last_part(a);
		int64_t b0 = first_part(b), b1 = last_part(b);

		if (!((a0 >= b0 && a0 <= b1) || (b0 >= a0 && b0 <= a1)))
			return false;
	}
	/* [start, end): two rows at the same start always meet. */
	return (a->ts == b->ts && a_real && b_real) ||
	       (a->ts >= b->ts && a->ts < adjusted_end(b)) ||
	       (b->ts >= a->ts && b->ts < adjusted_end(a));
}

/* The query whose span ends first, by (partition, end, real after shadow). */
static struct sj_query *earliest(const struct sj_vtab *vt, struct sj_cursor *c)
{
	struct sj_query *a = &c->q[0], *b = &c->q[1];
	int64_t pa = 0, pb = 0, ea, eb;

	if (vt->partitioning == PART_MIXED) {
		if (a->state == ST_EOF)
			return b;
		if (b->state == ST_EOF)
			return a;
	} else if (vt->partitioning == PART_SAME) {
		pa = last_part(a);
		pb = last_part(b);
	}
	if (pa != pb)
		return pa < pb ? a : b;
	ea = adjusted_end(a);
	eb = adjusted_end(b);
	if (ea != eb)
		return ea < eb ? a : b;
	return (a->state != ST_REAL && b->state == ST_REAL) ? a : b;
}

static int find_overlap(struct sj_vtab *vt, struct sj_cursor *c)
{
	for (;;) {
		int rc;

		if (vt->partitioning == PART_MIXED) {
			int pk = c->q[0].t->part_col ? 0 : 1;
			struct sj_query *part = &c->q[pk], *flat = &c->q[1 - pk];

			if (part->state == ST_EOF)
				return SQLITE_OK;
			if (c->mixed_part != part->part) {
				rc = query_rewind(vt, flat);
				if (rc != SQLITE_OK)
					return rc;
				c->mixed_part = part->part;
			}
		} else if (c->q[0].state == ST_EOF || c->q[1].state == ST_EOF) {
			return SQLITE_OK;
		}
		c->next = earliest(vt, c);
		if (overlaps(vt, c))
			return SQLITE_OK;
		rc = query_next(vt, c->next);
		if (rc != SQLITE_OK)
			return rc;
	}
}

/* Counts a read of the tables under way; refuses a cycle. */
static int nesting_enter(struct sj_vtab *vt)
{
	if (vt->conn->nesting >= SJ_MAX_NESTING) {
		sqlite3_free(vt->base.zErrMsg);
		vt->base.zErrMsg = sqlite3_mprintf("SPAN_JOIN: the joined tables read the join "
						   "itself (nested %d deep)", SJ_MAX_NESTING);
		return SQLITE_ERROR;
	}
	vt->conn->nesting++;
	return SQLITE_OK;
}

static int filter(struct sj_cursor *c, struct sj_vtab *vt, const char *idx_str, int argc,
		  sqlite3_value **argv);

static int sj_filter(sqlite3_vtab_cursor *base, int idx_num, const char *idx_str, int argc,
		     sqlite3_value **argv)
{
	struct sj_cursor *c = (struct sj_cursor *)base;
	struct sj_vtab *vt = (struct sj_vtab *)base->pVtab;
	int rc;

	(void)idx_num;
	rc = nesting_enter(vt);
	if (rc != SQLITE_OK) {
		c->q[0].state = c->q[1].state = ST_EOF;
		return rc;
	}
	rc = filter(c, vt, idx_str, argc, argv);
	vt->conn->nesting--;
	return rc;
}

static int filter(struct sj_cursor *c, struct sj_vtab *vt, const char *idx_str, int argc,
		  sqlite3_value **argv)
{
	const char *plan[2] = {NULL, NULL};
	const char *p;
	int k, rc;

	/* Split idxStr at its "k;" markers. */
	for (p = idx_str ? idx_str : ""; *p; p++)
		if ((p == idx_str || p[-1] == ';') && (p[0] == '0' || p[0] == '1') && p[1] == ';')
			plan[p[0] - '0'] = p + 2;
	c->mixed_part = INT64_MIN;
	c->rowid = 0;
	c->next = NULL;
	for (k = 0; k < 2; k++) {
		bool part_mixed = vt->t[k].part_col && vt->partitioning == PART_MIXED;
		bool keeps = k == 0 ? vt->kind == SJ_OUTER : vt->kind != SJ_INNER;

		rc = query_start(vt, &c->q[k], plan[k] ? plan[k] : "", argv, argc,
				 keeps && !part_mixed);
		if (rc != SQLITE_OK) {
			c->q[0].state = c->q[1].state = ST_EOF;
			return rc;
		}
		/* No row of t1 and a join that keeps only t1's rows or the
		 * overlaps: no row at all, and t2 (maybe big, its ORDER BY a sort
		 * of it all) is not read. */
		if (k == 0 && c->q[0].state == ST_EOF && vt->kind != SJ_OUTER) {
			c->q[1].state = ST_EOF;
			return SQLITE_OK;
		}
	}
	rc = find_overlap(vt, c);
	if (rc != SQLITE_OK)
		c->q[0].state = c->q[1].state = ST_EOF;
	return rc;
}

static int sj_next(sqlite3_vtab_cursor *base)
{
	struct sj_cursor *c = (struct sj_cursor *)base;
	struct sj_vtab *vt = (struct sj_vtab *)base->pVtab;
	int rc;

	c->rowid++;
	rc = nesting_enter(vt);
	if (rc == SQLITE_OK) {
		rc = query_next(vt, c->next);
		if (rc == SQLITE_OK)
			rc = find_overlap(vt, c);
		vt->conn->nesting--;
	}
	if (rc != SQLITE_OK)
		c->q[0].state = c->q[1].state = ST_EOF;
	return rc;
}

static int sj_eof(sqlite3_vtab_cursor *base)
{
	struct sj_cursor *c = (struct sj_cursor *)base;

	return c->q[0].state == ST_EOF || c->q[1].state == ST_EOF;
}

static void result_column(sqlite3_context *ctx, const struct sj_query *q, uint32_t idx)
{
	sqlite3_stmt *st = q->stmt;
	int i = (int)idx;

	if (q->state != ST_REAL) {
		sqlite3_result_null(ctx);
		return;
	}
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_INTEGER:
		sqlite3_result_int64(ctx, sqlite3_column_int64(st, i));
		break;
	case SQLITE_FLOAT:
		sqlite3_result_double(ctx, sqlite3_column_double(st, i));
		break;
	case SQLITE_TEXT:
		sqlite3_result_text(ctx, (const char *)sqlite3_column_text(st, i),
				    sqlite3_column_bytes(st, i), SQLITE_TRANSIENT);
		break;
	case SQLITE_BLOB:
		sqlite3_result_blob(ctx, sqlite3_column_blob(st, i), sqlite3_column_bytes(st, i),
				    SQLITE_TRANSIENT);
		break;
	default:
		sqlite3_result_null(ctx);
		break;
	}
}

static int sj_column(sqlite3_vtab_cursor *base, sqlite3_context *ctx, int n)
{
	struct sj_cursor *c = (struct sj_cursor *)base;
	struct sj_vtab *vt = (struct sj_vtab *)base->pVtab;
	const struct sj_query *a = &c->q[0], *b = &c->q[1];
	int64_t start = a->ts > b->ts ? a->ts : b->ts;

	if (n == 0) {
		sqlite3_result_int64(ctx, start);
	} else if (n == 1) {
		int64_t end = a->ts_end < b->ts_end ? a->ts_end : b->ts_end;

		sqlite3_result_int64(ctx, wrap_sub(end, start));
	} else if (n == 2 && vt->partitioning != PART_NONE) {
		if (vt->partitioning == PART_MIXED)
			sqlite3_result_int64(ctx, c->mixed_part);
		else
			sqlite3_result_int64(ctx, a->state == ST_REAL ? a->part : b->part);
	} else if (n > 1 && (uint32_t)n < vt->n_out) {
		const struct sj_loc *l = &vt->loc[n];

		result_column(ctx, &c->q[l->table], l->col);
	} else {
		sqlite3_result_null(ctx);
	}
	return SQLITE_OK;
}

static int sj_rowid(sqlite3_vtab_cursor *base, sqlite3_int64 *out)
{
	*out = ((struct sj_cursor *)base)->rowid;
	return SQLITE_OK;
}

static const sqlite3_module k_span_join_module = {
	.iVersion = 1,
	.xCreate = sj_create,
	.xConnect = sj_create,
	.xBestIndex = sj_best_index,
	.xDisconnect = sj_disconnect,
	.xDestroy = sj_disconnect,
	.xOpen = sj_open,
	.xClose = sj_close,
	.xFilter = sj_filter,
	.xNext = sj_next,
	.xEof = sj_eof,
	.xColumn = sj_column,
	.xRowid = sj_rowid,
};

/* SQLite drops each module's aux; the last one frees the shared state. */
static void aux_destroy(void *p)
{
	struct sj_conn *c = ((struct sj_aux *)p)->conn;

	if (--c->refs == 0)
		sqlite3_free(c);
}

int ops_span_join_register(sqlite3 *conn)
{
	static const char *const names[] = {"span_join", "span_left_join", "span_outer_join"};
	static const enum sj_kind kinds[] = {SJ_INNER, SJ_LEFT, SJ_OUTER};
	struct sj_conn *c = sqlite3_malloc(sizeof(*c));
	int i;

	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	c->refs = 3;
	for (i = 0; i < 3; i++) {
		int rc;

		c->aux[i].conn = c;
		c->aux[i].kind = kinds[i];
		/* On failure SQLite has already dropped aux[i]; drop the rest. */
		rc = sqlite3_create_module_v2(conn, names[i], &k_span_join_module, &c->aux[i],
					      aux_destroy);
		if (rc != SQLITE_OK) {
			while (++i < 3)
				aux_destroy(&c->aux[i]);
			return rc;
		}
	}
	return SQLITE_OK;
}

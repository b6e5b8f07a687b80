// SPDX-License-Identifier: Apache-2.0
/*
 * psql_relation.c - CREATE [OR REPLACE] PERFETTO TABLE / VIEW and
 * [CREATE [OR REPLACE] | DROP] PERFETTO INDEX (psql_int.h), with
 * upstream's checks and messages: the body's column names (valid, not
 * repeated, the declared schema's), the types a table may hold, indexes
 * only on PERFETTO tables. A PERFETTO table is a SQLite table filled from
 * its SELECT once (by the native GROUP BY path of sql/agg/ when the SELECT
 * has its shape, with the column types CREATE TABLE AS would give), its
 * strictly increasing integer id as the rowid and an index on each sorted
 * integer column, so that lookups by id, ts ranges and "next by ts" are
 * searches as in upstream's tables; a view is SQLite's view. perfetto_sql.c parses the
 * statement and hands the parts here.
 */
#include "trace_processor/sql/psql/psql_int.h"
#include "trace_processor/sql/agg/agg.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Most columns a schema may declare. */
#define PSQL_MAX_COLS 256

struct schema {
	size_t n;
	const char *name[PSQL_MAX_COLS];
	size_t len[PSQL_MAX_COLS];
	const char *type[PSQL_MAX_COLS];
	size_t type_len[PSQL_MAX_COLS];
	char **err;
};

static int schema_add(void *ctx, const char *name, size_t name_len, const char *type,
		      size_t type_len)
{
	struct schema *s = ctx;
	size_t base = type_len;

	if (memchr(type, '(', type_len))
		base = (size_t)((const char *)memchr(type, '(', type_len) - type);
	if (!psql_type_known(type, type_len, false)) {
		*s->err = sqlite3_mprintf("Unknown argument type: %.*s", (int)base, type);
		return -EINVAL;
	}
	if (s->n == PSQL_MAX_COLS) {
		*s->err = sqlite3_mprintf("more than %d columns in the schema", PSQL_MAX_COLS);
		return -EINVAL;
	}
	s->name[s->n] = name;
	s->len[s->n] = name_len;
	s->type[s->n] = type;
	s->type_len[s->n] = base;
	s->n++;
	return 0;
}

static bool schema_has(const struct schema *s, const char *col)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strlen(col) == s->len[i] && strncmp(col, s->name[i], s->len[i]) == 0)
			return true;
	return false;
}

static bool columns_have(sqlite3_stmt *st, const char *name, size_t len)
{
	int i;

	for (i = 0; i < sqlite3_column_count(st); i++) {
		const char *c = sqlite3_column_name(st, i);

		if (c && strlen(c) == len && strncmp(c, name, len) == 0)
			return true;
	}
	return false;
}

/* Upstream's tables hold no BYTES nor ANY column. */
static char *check_table_types(const struct schema *s, const char *name, size_t name_len)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		const char *t = s->type[i];
		size_t n = s->type_len[i];

		if ((n == 5 && strncasecmp(t, "bytes", 5) == 0) ||
		    (n == 5 && strncasecmp(t, "proto", 5) == 0))
			return sqlite3_mprintf("CREATE PERFETTO TABLE(%.*s): Bytes type is not "
					       "supported",
					       (int)name_len, name);
		if (n == 3 && strncasecmp(t, "any", 3) == 0)
			return sqlite3_mprintf("CREATE PERFETTO TABLE(%.*s): ANY type cannot be used "
					       "in table columns",
					       (int)name_len, name);
	}
	return NULL;
}

/* Letters, digits and underscores only. */
static bool valid_name(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '_'))
			return false;
	return true;
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Upstream's checks of a body's column names against the declared schema. */
static char *check_columns(sqlite3_stmt *st, const struct schema *s, const char *tag)
{
	sqlite3_str *dup, *extra, *missing;
	char *a, *b, *c, *msg = NULL;
	int i, j, n = sqlite3_column_count(st);
	size_t k;

	for (i = 0; i < n; i++) {
		const char *col = sqlite3_column_name(st, i);

		if (!col || !*col)
			return sqlite3_mprintf("%s: column %d: name must not be empty", tag, i);
		if (!is_alpha(*col) && *col != '_')
			return sqlite3_mprintf("%s: Column %d: name '%s' has to start with a letter "
					       "or underscore.",
					       tag, i, col);
		if (!valid_name(col))
			return sqlite3_mprintf("%s: Column %d: name '%s' has to contain only "
					       "alphanumeric characters and underscores.",
					       tag, i, col);
	}
	dup = sqlite3_str_new(NULL);
	extra = sqlite3_str_new(NULL);
	missing = sqlite3_str_new(NULL);
	for (i = 0; i < n; i++) {
		const char *col = sqlite3_column_name(st, i);

		for (j = i + 1; j < n; j++) {
			if (strcmp(sqlite3_column_name(st, j), col) == 0) {
				sqlite3_str_appendf(dup, "%s%s", sqlite3_str_length(dup) ? ", " : "",
						    col);
				break;
			}
		}
		if (s->n && !schema_has(s, col))
			sqlite3_str_appendf(extra, "%s%s", sqlite3_str_length(extra) ? ", " : "",
					    col);
	}
	for (k = 0; k < s->n; k++)
		if (!columns_have(st, s->name[k], s->len[k]))
			sqlite3_str_appendf(missing, "%s%.*s",
					    sqlite3_str_length(missing) ? ", " : "",
					    (int)s->len[k], s->name[k]);
	a = sqlite3_str_finish(dup);
	b = sqlite3_str_finish(extra);
	c = sqlite3_str_finish(missing);
	if (a)
		msg = sqlite3_mprintf("%s: multiple columns are named: %s", tag, a);
	else if (b && c)
		msg = sqlite3_mprintf("%s: the following columns are declared in the schema, but "
				      "do not exist: %s; and the following columns exist, but are "
				      "not declared: %s",
				      tag, c, b);
	else if (b)
		msg = sqlite3_mprintf("%s: the following columns are missing from the schema: %s",
				      tag, b);
	else if (c)
		msg = sqlite3_mprintf("%s: the following columns are declared in the schema, but "
				      "do not exist: %s",
				      tag, c);
	sqlite3_free(a);
	sqlite3_free(b);
	sqlite3_free(c);
	return msg;
}

/* Runs @sql (one statement, sqlite3_malloc'd, freed here); SQLite's message on failure. */
static int exec_free(sqlite3 *conn, char *sql, struct psql_err *e)
{
	int rc;

	if (!sql) {
		psql_err_msg(e, NULL);
		return -ENOMEM;
	}
	rc = sqlite3_exec(conn, sql, NULL, NULL, NULL);
	sqlite3_free(sql);
	if (rc == SQLITE_OK)
		return 0;
	psql_err_msg(e, sqlite3_mprintf("%s", sqlite3_errmsg(conn)));
	return rc == SQLITE_NOMEM ? -ENOMEM : -EINVAL;
}

/* Prepares the SELECT of @r; a failure's traceback points into it. */
static int prepare_body(struct tp_psql *p, const struct psql_layer *l, size_t start, size_t end,
			sqlite3_stmt **st, struct psql_err *e)
{
	const char *tail = NULL;
	int rc, off;

	rc = sqlite3_prepare_v2(p->conn, l->text + start, (int)(end - start), st, &tail);
	if (rc == SQLITE_OK && *st)
		return 0;
	if (rc == SQLITE_NOMEM) {
		psql_err_msg(e, NULL);
		return -ENOMEM;
	}
	off = rc == SQLITE_OK ? -1 : sqlite3_error_offset(p->conn);
	psql_err_at(e, l, start + (off < 0 ? 0 : (size_t)off), start, end,
		    rc == SQLITE_OK ? "incomplete SQL statement" : sqlite3_errmsg(p->conn));
	return -EINVAL;
}

/* Perfetto's message for a name that is taken, from the statement it runs. */
static void exists_error(struct psql_err *e, const char *kind, const char *name, size_t name_len,
			 const char *msg)
{
	struct psql_src src = {.name = "Trace Processor Internal", .line = 4, .col = 7};
	char *text = sqlite3_mprintf("CREATE VIRTUAL TABLE %.*s USING %s", (int)name_len, name,
				     kind);

	if (!text) {
		psql_err_msg(e, NULL);
		return;
	}
	src.text = text;
	src.len = strlen(text);
	psql_err_frame(e, &src, 21, msg);
	sqlite3_free(text);
}

/* ------------------------------------------------- tables by the native path ---- */

/* The column type CREATE TABLE ... AS SELECT gives a column declared
 * @decl (NULL for an expression): the name of its affinity, by SQLite's
 * rules. */
static bool has_ci(const char *s, const char *word)
{
	size_t n = strlen(word);

	for (; *s; s++)
		if (strncasecmp(s, word, n) == 0)
			return true;
	return false;
}

static const char *affinity_name(const char *decl)
{
	if (!decl || !*decl)
		return "";
	if (has_ci(decl, "INT"))
		return "INT";
	if (has_ci(decl, "CHAR") || has_ci(decl, "CLOB") || has_ci(decl, "TEXT"))
		return "TEXT";
	if (has_ci(decl, "BLOB"))
		return "";
	if (has_ci(decl, "REAL") || has_ci(decl, "FLOA") || has_ci(decl, "DOUB"))
		return "REAL";
	return "NUM";
}

/*
 * The "CREATE TABLE name(col TYPE, ...)" that CREATE TABLE name AS <@st>
 * would make, or NULL (out of memory, or two columns of the same name,
 * which SQLite would rename: left to SQLite).
 */
static char *table_decl(sqlite3_stmt *st, const char *name, size_t name_len)
{
	int n = sqlite3_column_count(st), i, j;
	sqlite3_str *s;

	for (i = 0; i < n; i++) {
		const char *a = sqlite3_column_name(st, i);

		if (!a)
			return NULL;
		for (j = 0; j < i; j++)
			if (sqlite3_stricmp(a, sqlite3_column_name(st, j)) == 0)
				return NULL;
	}
	s = sqlite3_str_new(NULL);
	sqlite3_str_appendf(s, "CREATE TABLE %.*s(", (int)name_len, name);
	for (i = 0; i < n; i++) {
		const char *t = affinity_name(sqlite3_column_decltype(st, i));

		sqlite3_str_appendf(s, "%s\"%w\"%s%s", i ? ", " : "", sqlite3_column_name(st, i),
				    *t ? " " : "", t);
	}
	sqlite3_str_appendall(s, ")");
	return sqlite3_str_finish(s);
}

/*
 * What the fill learns of each column, for the indexes a PERFETTO table
 * gets (upstream's tables know which columns are sorted or are ids, and
 * binary-search them; SQLite needs an index or the rowid for that).
 */
struct col_stats {
	sqlite3_int64 seen; /* values seen */
	bool all_int;    /* every value an integer (no NULL, real or text) */
	bool ascending;  /* each value >= the one before */
	bool increasing; /* each value > the one before */
	sqlite3_int64 first, last;
};

/* Tables of fewer rows get no index: a scan of them is as cheap. */
#define SORTED_INDEX_MIN_ROWS 4096

struct fill {
	sqlite3 *conn;
	const char *name;
	size_t name_len;
	int n;
	int id_col; /* the column declared INTEGER PRIMARY KEY, or -1 */
	char **types; /* each column's type, as CREATE TABLE AS gives it */
	bool key_failed; /* the id column turned out not to be a key */
	sqlite3_int64 rows;
	struct col_stats *stats;
	sqlite3_stmt *ins;
};

static void stats_add(struct col_stats *c, sqlite3_value *v)
{
	sqlite3_int64 x, row = c->seen++;

	if (!c->all_int)
		return;
	if (sqlite3_value_type(v) != SQLITE_INTEGER) {
		c->all_int = false;
		return;
	}
	x = sqlite3_value_int64(v);
	if (row == 0) {
		c->first = x;
	} else {
		if (x < c->last)
			c->ascending = false;
		if (x <= c->last)
			c->increasing = false;
	}
	c->last = x;
}

static int prepare_insert(struct fill *f)
{
	sqlite3_str *s = sqlite3_str_new(NULL);
	char *sql;
	int i, rc;

	sqlite3_str_appendf(s, "INSERT INTO %.*s VALUES(", (int)f->name_len, f->name);
	for (i = 0; i < f->n; i++)
		sqlite3_str_appendall(s, i ? ", ?" : "?");
	sqlite3_str_appendall(s, ")");
	sql = sqlite3_str_finish(s);
	if (!sql)
		return SQLITE_NOMEM;
	rc = sqlite3_prepare_v2(f->conn, sql, -1, &f->ins, NULL);
	sqlite3_free(sql);
	return rc;
}

static int exec_plain(sqlite3 *conn, char *sql)
{
	int rc;

	if (!sql)
		return SQLITE_NOMEM;
	rc = sqlite3_exec(conn, sql, NULL, NULL, NULL);
	sqlite3_free(sql);
	return rc;
}

/*
 * The id column of the table turned out not to be strictly increasing
 * integers: remake the table with the plain @decl (id an ordinary
 * column), keeping the rows inserted so far in their order.
 */
static int drop_id_key(struct fill *f, const char *decl)
{
	const char *spill = "__tp_psql_spill";
	int rc;

	sqlite3_finalize(f->ins);
	f->ins = NULL;
	rc = exec_plain(f->conn, sqlite3_mprintf("CREATE TABLE %s AS SELECT * FROM %.*s", spill,
						 (int)f->name_len, f->name));
	if (rc == SQLITE_OK)
		rc = exec_plain(f->conn,
				sqlite3_mprintf("DROP TABLE %.*s", (int)f->name_len, f->name));
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(f->conn, decl, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = exec_plain(f->conn, sqlite3_mprintf("INSERT INTO %.*s SELECT * FROM %s",
							 (int)f->name_len, f->name, spill));
	if (rc == SQLITE_OK)
		rc = exec_plain(f->conn, sqlite3_mprintf("DROP TABLE %s", spill));
	f->id_col = -1;
	return rc == SQLITE_OK ? prepare_insert(f) : rc;
}

/*
 * Fills table @f->name (just made) with the rows of @st, gathering each
 * column's stats; @decl is the table without its id key, for
 * drop_id_key(). Return: 0 or < 0.
 */
static int fill_table(struct fill *f, sqlite3_stmt *st, const char *decl, struct psql_err *e)
{
	int i, rc;

	for (i = 0; i < f->n; i++)
		f->stats[i] = (struct col_stats){.all_int = true, .ascending = true,
						 .increasing = true};
	rc = prepare_insert(f);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (i = 0; i < f->n; i++)
			stats_add(&f->stats[i], sqlite3_column_value(st, i));
		if (f->id_col >= 0 && !(f->stats[f->id_col].all_int &&
					f->stats[f->id_col].increasing)) {
			rc = drop_id_key(f, decl);
			if (rc != SQLITE_OK)
				break;
		}
		for (i = 0; i < f->n; i++)
			sqlite3_bind_value(f->ins, i + 1, sqlite3_column_value(st, i));
		rc = sqlite3_step(f->ins);
		rc = rc == SQLITE_DONE ? sqlite3_reset(f->ins) : rc;
		f->rows++;
	}
	if (rc == SQLITE_DONE)
		rc = SQLITE_OK;
	if (rc != SQLITE_OK)
		psql_err_msg(e, sqlite3_mprintf("%s", sqlite3_errmsg(f->conn)));
	sqlite3_finalize(f->ins);
	f->ins = NULL;
	return rc == SQLITE_OK ? 0 : rc == SQLITE_NOMEM ? -ENOMEM : -EINVAL;
}

/* __tp_fill_stat(fill, col, value): value, its column's stats gathered
 * (fill: a pointer of type "tp_fill"); an error when the id key fails. */
static void fn_fill_stat(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct fill *f = sqlite3_value_pointer(argv[0], "tp_fill");
	sqlite3_int64 col = sqlite3_value_int64(argv[1]);

	(void)argc;
	if (!f || col < 0 || col >= f->n) {
		sqlite3_result_error(ctx, "__tp_fill_stat: bad arguments", -1);
		return;
	}
	stats_add(&f->stats[col], argv[2]);
	if (col == f->id_col && !(f->stats[col].all_int && f->stats[col].increasing)) {
		f->key_failed = true;
		sqlite3_result_error(ctx, "__tp_fill_stat: not a key", -1);
		return;
	}
	sqlite3_result_value(ctx, argv[2]);
}

int psql_relation_register(struct sqlite3 *conn)
{
	return sqlite3_create_function_v2(conn, "__tp_fill_stat", 3, SQLITE_UTF8 | SQLITE_INNOCUOUS,
					  NULL, fn_fill_stat, NULL, NULL, NULL);
}

/* A column whose sortedness is looked at: the timestamps ("ts", "*_ts",
 * "*ts_end"...: named so by every module and by the UI), which is what
 * queries search by; a stats call per cell of every column cost a third
 * of a big table's fill. */
static bool time_name(const char *col)
{
	size_t n = col ? strlen(col) : 0;

	return n >= 2 && (strcasecmp(col + n - 2, "ts") == 0 || strcasestr(col, "ts_") == col ||
			  strcasestr(col, "_ts"));
}

/*
 * Fills @f->name (just made) with the rows of the SELECT [@sel, @sel_end)
 * by SQLite (INSERT ... SELECT: as fast as CREATE TABLE AS, the body's
 * order kept: an ORDER BY of a lone FROM subquery stays), gathering the
 * stats of the integer columns @st (the body, prepared) declares.
 * Return: SQLite's code; f->key_failed when the id key failed.
 */
static int insert_select(struct fill *f, sqlite3_stmt *st, const char *sel, size_t sel_len)
{
	sqlite3_str *s = sqlite3_str_new(NULL);
	sqlite3_stmt *ins = NULL;
	char *sql;
	int i, rc;

	sqlite3_str_appendf(s, "INSERT INTO %.*s SELECT ", (int)f->name_len, f->name);
	for (i = 0; i < f->n; i++) {
		const char *aff = f->types[i];

		f->stats[i] = (struct col_stats){.all_int = true, .ascending = true,
						 .increasing = true};
		if (i == f->id_col || (time_name(sqlite3_column_name(st, i)) &&
					(!strcmp(aff, "INT") || !strcmp(aff, "NUM") || !*aff)))
			sqlite3_str_appendf(s, "%s__tp_fill_stat(?1, %d, \"%w\")", i ? ", " : "", i,
					    sqlite3_column_name(st, i));
		else {
			f->stats[i].all_int = false;
			sqlite3_str_appendf(s, "%s\"%w\"", i ? ", " : "", sqlite3_column_name(st, i));
		}
	}
	sqlite3_str_appendf(s, " FROM (%.*s\n)", (int)sel_len, sel);
	sql = sqlite3_str_finish(s);
	if (!sql)
		return SQLITE_NOMEM;
	rc = sqlite3_prepare_v2(f->conn, sql, -1, &ins, NULL);
	sqlite3_free(sql);
	if (rc == SQLITE_OK) {
		sqlite3_bind_pointer(ins, 1, f, "tp_fill", NULL);
		rc = sqlite3_step(ins);
		rc = rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
	}
	if (rc == SQLITE_OK)
		f->rows = sqlite3_changes64(f->conn);
	sqlite3_finalize(ins);
	return rc;
}

/*
 * The sorted integer columns of a big table (not the id key, which is the
 * rowid), as "a,b" (names are letters, digits and '_'; NULL: none): indexed when a query first
 * searches them (psql_sorted.c), as upstream's sorted columns are. Index
 * order is the rows' order there, so no result's order changes.
 */
static char *sorted_list(const struct fill *f, sqlite3_stmt *st)
{
	sqlite3_str *s;
	int i;

	if (f->rows < SORTED_INDEX_MIN_ROWS)
		return NULL;
	s = sqlite3_str_new(NULL);
	for (i = 0; i < f->n; i++) {
		const struct col_stats *c = &f->stats[i];

		if (i == f->id_col || !c->all_int || !c->ascending || c->first == c->last)
			continue;
		sqlite3_str_appendf(s, "%s%s", sqlite3_str_length(s) ? "," : "",
				    sqlite3_column_name(st, i));
	}
	return sqlite3_str_finish(s);
}

/*
 * The column named id when it is declared an integer: the table is made
 * with it as INTEGER PRIMARY KEY (the rowid, so a lookup by id is a
 * search), as long as its values are strictly increasing integers.
 * Return: its index, or -1.
 */
static int id_column(sqlite3_stmt *st, char **types)
{
	int i;

	for (i = 0; i < sqlite3_column_count(st); i++)
		if (sqlite3_stricmp(sqlite3_column_name(st, i), "id") == 0)
			return strcmp(types[i], "INT") == 0 ? i : -1;
	return -1;
}

/* The table of @st's columns with @types, column @col (if >= 0) declared
 * INTEGER PRIMARY KEY; NULL if out of memory. */
static char *decl_with_key(sqlite3_stmt *st, char **types, const char *name, size_t name_len,
			   int col)
{
	int n = sqlite3_column_count(st), i;
	sqlite3_str *s = sqlite3_str_new(NULL);

	sqlite3_str_appendf(s, "CREATE TABLE %.*s(", (int)name_len, name);
	for (i = 0; i < n; i++) {
		const char *t = i == col ? "INTEGER PRIMARY KEY" : types[i];

		sqlite3_str_appendf(s, "%s\"%w\"%s%s", i ? ", " : "", sqlite3_column_name(st, i),
				    *t ? " " : "", t);
	}
	sqlite3_str_appendall(s, ")");
	return sqlite3_str_finish(s);
}

/*
 * The column types CREATE TABLE AS gives the SELECT [@sel, @sel + @sel_len)
 * (by SQLite itself: a table of none of its rows, made and dropped), into
 * @types (@n of them, sqlite3_malloc'd). Return: SQLite's code.
 */
static int types_by_sqlite(sqlite3 *conn, const char *sel, size_t sel_len, const char *name,
			   size_t name_len, int n, char **types)
{
	sqlite3_stmt *q = NULL;
	int rc, i = 0;

	rc = exec_plain(conn, sqlite3_mprintf("CREATE TABLE %.*s AS SELECT * FROM (%.*s\n) LIMIT 0",
					      (int)name_len, name, (int)sel_len, sel));
	if (rc != SQLITE_OK)
		return rc;
	{
		char *sql = sqlite3_mprintf("SELECT type FROM pragma_table_info('%.*q')",
					    (int)name_len, name);

		rc = sql ? sqlite3_prepare_v2(conn, sql, -1, &q, NULL) : SQLITE_NOMEM;
		sqlite3_free(sql);
	}
	while (rc == SQLITE_OK && i < n && sqlite3_step(q) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(q, 0);

		types[i] = sqlite3_mprintf("%s", t ? t : "");
		if (!types[i++])
			rc = SQLITE_NOMEM;
	}
	sqlite3_finalize(q);
	for (; rc == SQLITE_OK && i < n; i++)
		if (!(types[i] = sqlite3_mprintf("")))
			rc = SQLITE_NOMEM;
	if (rc == SQLITE_OK)
		rc = exec_plain(conn, sqlite3_mprintf("DROP TABLE %.*s", (int)name_len, name));
	return rc;
}

/*
 * Makes table @name with the rows of @st (run by the native path) or of
 * the SELECT [@sel, @sel + @sel_len) (@st its prepared copy): @decl's
 * columns, the id as the rowid while it allows; *@sorted: the sorted
 * columns (sorted_list()). Return: 0 or < 0.
 */
static int make_table(sqlite3 *conn, sqlite3_stmt *st, bool run_st, const char *sel,
		      size_t sel_len, const char *name, size_t name_len, const char *decl,
		      char **sorted, struct psql_err *e)
{
	struct fill f = {.conn = conn, .name = name, .name_len = name_len,
			 .n = sqlite3_column_count(st)};
	char *keyed = NULL, *plain = NULL;
	int rc = 0, i;

	f.types = sqlite3_malloc64((sqlite3_uint64)(f.n ? f.n : 1) * sizeof(*f.types));
	if (!f.types) {
		psql_err_msg(e, NULL);
		return -ENOMEM;
	}
	memset(f.types, 0, (size_t)(f.n ? f.n : 1) * sizeof(*f.types));
	if (run_st) {
		for (i = 0; i < f.n; i++)
			f.types[i] = sqlite3_mprintf("%s",
						     affinity_name(sqlite3_column_decltype(st, i)));
	} else {
		int src = types_by_sqlite(conn, sel, sel_len, name, name_len, f.n, f.types);

		if (src != SQLITE_OK) {
			psql_err_msg(e, sqlite3_mprintf("%s", sqlite3_errmsg(conn)));
			rc = src == SQLITE_NOMEM ? -ENOMEM : -EINVAL;
		}
	}
	for (i = 0; rc == 0 && i < f.n; i++)
		if (!f.types[i])
			rc = -ENOMEM;
	if (rc == 0) {
		plain = decl_with_key(st, f.types, name, name_len, -1);
		f.id_col = id_column(st, f.types);
		if (f.id_col >= 0)
			keyed = decl_with_key(st, f.types, name, name_len, f.id_col);
		if (!plain || (f.id_col >= 0 && !keyed))
			rc = -ENOMEM;
	}
	f.stats = calloc((size_t)(f.n ? f.n : 1), sizeof(*f.stats));
	if (rc == 0 && !f.stats)
		rc = -ENOMEM;
	if (rc < 0) {
		if (rc == -ENOMEM)
			psql_err_msg(e, NULL);
		goto out;
	}
	decl = plain;
	rc = exec_free(conn, sqlite3_mprintf("%s", keyed ? keyed : decl), e);
	sqlite3_free(keyed);
	keyed = NULL;
	if (rc == 0 && run_st) {
		rc = fill_table(&f, st, decl, e);
	} else if (rc == 0) {
		int src = insert_select(&f, st, sel, sel_len);

		/* Not a key after all: the table without it, filled anew. */
		if (src != SQLITE_OK && f.key_failed) {
			f.id_col = -1;
			f.key_failed = false;
			src = exec_plain(conn, sqlite3_mprintf("DROP TABLE %.*s", (int)name_len,
							       name));
			if (src == SQLITE_OK)
				src = sqlite3_exec(conn, decl, NULL, NULL, NULL);
			if (src == SQLITE_OK)
				src = insert_select(&f, st, sel, sel_len);
		}
		if (src != SQLITE_OK) {
			psql_err_msg(e, sqlite3_mprintf("%s", sqlite3_errmsg(conn)));
			rc = src == SQLITE_NOMEM ? -ENOMEM : -EINVAL;
		}
	}
	if (rc == 0)
		*sorted = sorted_list(&f, st);
out:
	free(f.stats);
	sqlite3_free(keyed);
	sqlite3_free(plain);
	for (i = 0; f.types && i < f.n; i++)
		sqlite3_free(f.types[i]);
	sqlite3_free(f.types);
	return rc;
}

int psql_create_relation(struct tp_psql *p, const struct psql_layer *l, const struct psql_rel *r,
			 struct psql_err *e)
{
	const char *tag = r->table ? "CREATE PERFETTO TABLE" : "CREATE PERFETTO VIEW";
	struct schema s = {0};
	sqlite3_stmt *st = NULL;
	char *err = NULL, *decl = NULL, *sorted = NULL;
	bool run_st = false;
	int rc;

	s.err = &err;
	if (r->schema) {
		struct psql_tok bad;

		rc = psql_arg_list(r->schema, r->schema_end, schema_add, &s, &err, &bad);
		if (rc < 0 && !err)
			return psql_err_syntax(e, l, &bad);
		if (rc < 0) {
			psql_err_msg(e, err);
			return rc;
		}
	}
	rc = prepare_body(p, l, r->sel_start, r->sel_end, &st, e);
	if (rc < 0)
		return rc;
	if (psql_sorted_before(p, sqlite3_sql(st))) {
		/* A new index: the body's plan is made again with it. */
		sqlite3_finalize(st);
		st = NULL;
		rc = prepare_body(p, l, r->sel_start, r->sel_end, &st, e);
		if (rc < 0)
			return rc;
	}
	/* Upstream checks a view's columns only against a schema. */
	err = r->table || s.n ? check_columns(st, &s, tag) : NULL;
	if (!err && r->table)
		err = check_table_types(&s, r->name, r->name_len);
	if (err) {
		sqlite3_finalize(st);
		psql_err_msg(e, err);
		psql_err_wrap(e, l);
		return -EINVAL;
	}
	/* A table's rows are inserted by make_table(), with the columns and
	 * types CREATE TABLE AS would give (left to CREATE TABLE AS when the
	 * names do not allow that); a body of the native GROUP BY path's
	 * shape is computed by it. */
	if (r->table) {
		decl = table_decl(st, r->name, r->name_len);
		if (decl && p->agg)
			run_st = tp_agg_prepare(p->agg, l->text + r->sel_start,
						l->text + r->sel_end, &st) == 1;
	}
	if (!decl) {
		sqlite3_finalize(st);
		st = NULL;
	}
	if (sqlite3_exec(p->conn, "SAVEPOINT __tp_psql", NULL, NULL, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		sqlite3_free(decl);
		psql_err_msg(e, sqlite3_mprintf("%s", sqlite3_errmsg(p->conn)));
		psql_err_wrap(e, l);
		return -EINVAL;
	}
	rc = 0;
	if (r->replace)
		rc = exec_free(p->conn,
			       sqlite3_mprintf("DROP %s IF EXISTS %.*s", r->table ? "TABLE" : "VIEW",
					       (int)r->name_len, r->name),
			       e);
	if (rc == 0 && decl) {
		rc = make_table(p->conn, st, run_st, l->text + r->sel_start,
				r->sel_end - r->sel_start, r->name, r->name_len, decl, &sorted, e);
		if (rc < 0 && e->msg && strstr(e->msg, "already exists")) {
			char *msg = e->msg;

			e->msg = NULL;
			exists_error(e, "__intrinsic_dataframe", r->name, r->name_len, msg);
			sqlite3_free(msg);
		}
	} else if (rc == 0) {
		rc = exec_free(p->conn,
			       sqlite3_mprintf("CREATE %s %.*s AS %.*s\n", r->table ? "TABLE" : "VIEW",
					       (int)r->name_len, r->name,
					       (int)(r->sel_end - r->sel_start),
					       l->text + r->sel_start),
			       e);
		if (rc < 0 && e->msg && strstr(e->msg, "already exists")) {
			char *msg = e->msg;

			e->msg = NULL;
			exists_error(e, r->table ? "__intrinsic_dataframe" : "__intrinsic_view",
				     r->name, r->name_len, msg);
			sqlite3_free(msg);
		}
	}
	sqlite3_finalize(st);
	sqlite3_free(decl);
	if (rc < 0) {
		sqlite3_free(sorted);
		sqlite3_exec(p->conn, "ROLLBACK TO __tp_psql", NULL, NULL, NULL);
		sqlite3_exec(p->conn, "RELEASE __tp_psql", NULL, NULL, NULL);
		psql_err_wrap(e, l);
		return rc;
	}
	if (r->table)
		psql_perfetto_table_add(p, r->name, r->name_len, sorted);
	sqlite3_free(sorted);
	rc = exec_free(p->conn, sqlite3_mprintf("RELEASE __tp_psql"), e);
	if (rc < 0)
		psql_err_wrap(e, l);
	return rc;
}

/* ---------------------------------------------------------------- indexes ---- */

/* True if index @name exists (any case). Return: 1, 0, or -EIO. */
static int index_exists(sqlite3 *conn, const char *name, size_t n)
{
	sqlite3_stmt *st = NULL;
	int found;

	if (sqlite3_prepare_v2(conn,
			       "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?1 "
			       "COLLATE NOCASE",
			       -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_text(st, 1, name, (int)n, SQLITE_STATIC);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

/* True if @table (a PERFETTO table) has column @col. Return: 1, 0, -EIO. */
static int has_column(sqlite3 *conn, const char *table, size_t tn, const char *col, size_t cn)
{
	sqlite3_stmt *st = NULL;
	char *sql = sqlite3_mprintf("SELECT 1 FROM pragma_table_info('%.*q') WHERE name = ?1",
				    (int)tn, table);
	int found;

	if (!sql || sqlite3_prepare_v2(conn, sql, -1, &st, NULL) != SQLITE_OK) {
		sqlite3_free(sql);
		return -EIO;
	}
	sqlite3_free(sql);
	sqlite3_bind_text(st, 1, col, (int)cn, SQLITE_STATIC);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

int psql_index_stmt(struct tp_psql *p, const struct psql_layer *l, const struct psql_index *ix,
		    struct psql_err *e)
{
	const char *tag = ix->drop ? "DROP PERFETTO INDEX" : "CREATE PERFETTO INDEX";
	const char *c, *ce, *end = ix->cols_end;
	struct psql_tok t;
	int rc;

	if (ix->drop) {
		rc = index_exists(p->conn, ix->name, ix->name_len);
		if (rc == 0)
			psql_err_msg(e, sqlite3_mprintf("%s: Index '%.*s' not found", tag,
							(int)ix->name_len, ix->name));
		if (rc < 0)
			psql_err_msg(e, sqlite3_mprintf("%s", sqlite3_errmsg(p->conn)));
		if (rc <= 0) {
			psql_err_wrap(e, l);
			return -EINVAL;
		}
		rc = exec_free(p->conn, sqlite3_mprintf("DROP INDEX %.*s", (int)ix->name_len, ix->name),
			       e);
		if (rc < 0)
			psql_err_wrap(e, l);
		return rc;
	}
	if (!psql_perfetto_table_has(p, ix->table, ix->table_len)) {
		if (psql_is_intrinsic_table(p, ix->table, ix->table_len))
			psql_err_msg(e, sqlite3_mprintf("%s: indexes on intrinsic table '%.*s' must "
							"be declared at compile time, not via SQL",
							tag, (int)ix->table_len, ix->table));
		else
			psql_err_msg(e, sqlite3_mprintf("%s: table '%.*s' does not exist", tag,
							(int)ix->table_len, ix->table));
		psql_err_wrap(e, l);
		return -EINVAL;
	}
	rc = index_exists(p->conn, ix->name, ix->name_len);
	if (rc > 0 && !ix->replace) {
		psql_err_msg(e, sqlite3_mprintf("%s: Index '%.*s' already exists", tag,
						(int)ix->name_len, ix->name));
		psql_err_wrap(e, l);
		return -EINVAL;
	}
	for (c = psql_lex_sig(ix->cols, end, &t); t.type != TK_EOF; c = psql_lex_sig(c, end, &t)) {
		if (t.type != TK_ID && t.type != TK_QID)
			continue;
		ce = t.p;
		rc = has_column(p->conn, ix->table, ix->table_len, ce, t.n);
		if (rc == 0) {
			psql_err_msg(e, sqlite3_mprintf("%s: Column '%.*s' not found in table '%.*s'",
							tag, (int)t.n, t.p, (int)ix->table_len,
							ix->table));
			psql_err_wrap(e, l);
			return -EINVAL;
		}
	}
	if (index_exists(p->conn, ix->name, ix->name_len) > 0 &&
	    exec_free(p->conn, sqlite3_mprintf("DROP INDEX %.*s", (int)ix->name_len, ix->name), e) <
		    0) {
		psql_err_wrap(e, l);
		return -EINVAL;
	}
	rc = exec_free(p->conn,
		       sqlite3_mprintf("CREATE INDEX %.*s ON %.*s(%.*s)", (int)ix->name_len, ix->name,
				       (int)ix->table_len, ix->table, (int)(ix->cols_end - ix->cols),
				       ix->cols),
		       e);
	if (rc < 0)
		psql_err_wrap(e, l);
	return rc;
}

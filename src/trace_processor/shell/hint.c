// SPDX-License-Identifier: Apache-2.0
/*
 * hint.c - errors that teach: when SQLite says "no such column: X", find
 * the tables the statement reads (the names after FROM, JOIN, INTO and
 * UPDATE, with their aliases), and say which of them lacks X and what to
 * do instead:
 *   - another table has X and is reached through a key column the table
 *     has (utid -> thread, upid -> process, track_id -> the track tables),
 *     one or two joins away: "sched has no column upid; join thread USING
 *     (utid) for it";
 *   - else the nearest column name of the table (edit distance, or a
 *     column that ends in "_X"): "did you mean end_state?";
 *   - plus a note for a few known mix-ups, or when X is a table's name.
 * It only reads the schema (prepared "SELECT * ... LIMIT 0" statements,
 * never stepped), so it changes nothing.
 */
#include "trace_processor/shell/shell_int.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/buf.h"
#include "base/compiler.h"

/* Tables (FROM/JOIN names) of one statement we look at. */
#define HINT_MAX_RELS 16
/* Tables whose columns are looked up per hint (the statement's and the joins'). */
#define HINT_MAX_CACHED 48
/* Names longer than this are not compared. */
#define HINT_MAX_NAME 64

/*
 * A key column and the tables it leads to, the one to prefer first; used
 * from tables whose name does (or does not) contain a word, so a counter
 * joins the counter tracks. @back: tables that carry the key of one of
 * @targets, so that target can join them (process -> thread USING (upid)).
 */
struct hint_key {
	const char *col;
	bool is_using; /* USING (col); else ON t.col = target.id */
	const char *from_has, *from_lacks;
	const char *targets[4];
	const char *back[2];
};

static const struct hint_key k_keys[] = {
	{"utid", true, NULL, NULL, {"thread", NULL}, {NULL}},
	{"upid", true, NULL, NULL, {"process", NULL}, {"thread", NULL}},
	{"track_id", false, "counter", NULL,
	 {"counter_track", "thread_counter_track", "process_counter_track", NULL}, {NULL}},
	{"track_id", false, NULL, "counter",
	 {"track", "thread_track", "process_track", NULL}, {NULL}},
};

/* @k applies to table @from. */
static bool key_fits(const struct hint_key *k, const char *from)
{
	return (!k->from_has || strstr(from, k->from_has)) &&
	       (!k->from_lacks || !strstr(from, k->from_lacks));
}

/* Mix-ups worth a word beyond the nearest name: (table, column) -> note. */
static const struct {
	const char *table, *col, *note;
} k_notes[] = {
	{"sched", "thread_state", "time per state is in the thread_state table"},
	{"sched", "state", "time per state is in the thread_state table"},
	{"thread_state", "end_state", "the state a slice ended in is sched.end_state"},
	{"slice", "value", "counter values are in the counter table"},
	{"counter", "dur", "a counter value holds until the next one on its track"},
};

struct rel {
	char name[HINT_MAX_NAME + 1];
	char alias[HINT_MAX_NAME + 1];
};

struct table_cols {
	char *name;
	bool exists;
	char **cols;
	size_t n;
};

struct hint_ctx {
	sqlite3 *db;
	struct table_cols cache[HINT_MAX_CACHED];
	size_t n_cache;
};

/* ------------------------------------------------------------- schema ---- */

static void cache_fini(struct hint_ctx *c)
{
	size_t i, j;

	for (i = 0; i < c->n_cache; i++) {
		for (j = 0; j < c->cache[i].n; j++)
			free(c->cache[i].cols[j]);
		free(c->cache[i].cols);
		free(c->cache[i].name);
	}
	c->n_cache = 0;
}

/* The columns of table or view @name (NULL if out of memory or cache full). */
static const struct table_cols *columns_of(struct hint_ctx *c, const char *name)
{
	struct table_cols *t;
	sqlite3_stmt *stmt = NULL;
	char *sql;
	int i, n;

	for (size_t k = 0; k < c->n_cache; k++)
		if (strcasecmp(c->cache[k].name, name) == 0)
			return &c->cache[k];
	if (c->n_cache == HINT_MAX_CACHED)
		return NULL;
	t = &c->cache[c->n_cache];
	memset(t, 0, sizeof(*t));
	t->name = strdup(name);
	if (!t->name)
		return NULL;
	c->n_cache++;
	sql = sqlite3_mprintf("SELECT * FROM \"%w\" LIMIT 0", name);
	if (!sql)
		return NULL;
	if (sqlite3_prepare_v2(c->db, sql, -1, &stmt, NULL) == SQLITE_OK && stmt) {
		n = sqlite3_column_count(stmt);
		t->cols = calloc((size_t)(n > 0 ? n : 1), sizeof(*t->cols));
		if (t->cols) {
			t->exists = true;
			for (i = 0; i < n; i++) {
				t->cols[t->n] = strdup(sqlite3_column_name(stmt, i));
				if (t->cols[t->n])
					t->n++;
			}
		}
	}
	sqlite3_finalize(stmt);
	sqlite3_free(sql);
	return t;
}

static bool has_column(const struct table_cols *t, const char *col)
{
	for (size_t i = 0; t && i < t->n; i++)
		if (strcasecmp(t->cols[i], col) == 0)
			return true;
	return false;
}

/* ---------------------------------------------------------- tokenizer ---- */

struct tok {
	const char *p;
	size_t len;
	bool is_ident; /* a bare word or a quoted identifier */
	bool is_quoted;
};

static bool is_word_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '_' || ch == '$' || (unsigned char)ch >= 0x80;
}

/* Reads the token at @p (before @end) into @t; t->len == 0 at the end. */
static const char *next_tok(const char *p, const char *end, struct tok *t)
{
	char close;

	for (;;) {
		while (p < end && (*p == ' ' || (*p >= '\t' && *p <= '\r')))
			p++;
		if (end - p >= 2 && p[0] == '-' && p[1] == '-') {
			while (p < end && *p != '\n')
				p++;
		} else if (end - p >= 2 && p[0] == '/' && p[1] == '*') {
			p += 2;
			while (end - p >= 2 && !(p[0] == '*' && p[1] == '/'))
				p++;
			p = end - p >= 2 ? p + 2 : end;
		} else {
			break;
		}
	}
	memset(t, 0, sizeof(*t));
	t->p = p;
	if (p >= end)
		return end;
	if (*p == '\'' || *p == '"' || *p == '`' || *p == '[') {
		close = *p == '[' ? ']' : *p;
		t->is_ident = *p != '\'';
		t->is_quoted = t->is_ident;
		for (p++; p < end; p++) {
			if (*p == close) {
				if (close != ']' && p + 1 < end && p[1] == close) {
					p++;
					continue;
				}
				p++;
				break;
			}
		}
	} else if (is_word_char(*p)) {
		t->is_ident = true;
		while (p < end && is_word_char(*p))
			p++;
	} else {
		p++;
	}
	t->len = (size_t)(p - t->p);
	return p;
}

static bool tok_is(const struct tok *t, const char *word)
{
	return t->is_ident && !t->is_quoted && strlen(word) == t->len &&
	       strncasecmp(t->p, word, t->len) == 0;
}

static bool tok_is_punct(const struct tok *t, char ch)
{
	return t->len == 1 && !t->is_ident && t->p[0] == ch;
}

/* Words that may follow a table name and are not its alias. */
static bool is_clause_word(const struct tok *t)
{
	static const char *const k_words[] = {
		"where", "join", "on", "using", "left", "right", "full", "inner", "outer",
		"cross", "natural", "group", "order", "limit", "union", "except", "intersect",
		"having", "window", "set", "values", "select", "returning", "default",
		"indexed", "not", "as", NULL,
	};

	for (size_t i = 0; k_words[i]; i++)
		if (tok_is(t, k_words[i]))
			return true;
	return false;
}

/* Copies an identifier token's name, unquoted, into @out. */
static bool tok_name(const struct tok *t, char *out, size_t size)
{
	const char *p = t->p;
	size_t len = t->len, n = 0;

	if (t->is_quoted) {
		p++;
		len = len >= 2 ? len - 2 : 0;
	}
	for (size_t i = 0; i < len; i++) {
		if (t->is_quoted && p[i] == t->p[0] && i + 1 < len && p[i + 1] == t->p[0])
			i++;
		if (n + 1 >= size)
			return false;
		out[n++] = p[i];
	}
	out[n] = '\0';
	return n > 0;
}

/*
 * The relations the statement reads: after FROM (a comma list), JOIN, INTO
 * and UPDATE, an optional "schema." dropped, then an optional alias.
 * Subqueries are not relations; their own FROMs are found as the scan goes on.
 */
static size_t parse_rels(const char *sql, size_t sql_len, struct rel *rels, size_t max)
{
	const char *p = sql, *end = sql + sql_len, *q;
	struct tok t, u;
	size_t n = 0;
	bool is_list;

	for (p = next_tok(p, end, &t); t.len; p = next_tok(p, end, &t)) {
		if (!(tok_is(&t, "from") || tok_is(&t, "join") || tok_is(&t, "into") ||
		      tok_is(&t, "update")))
			continue;
		is_list = tok_is(&t, "from");
		for (;;) {
			p = next_tok(p, end, &t);
			if (!t.is_ident || is_clause_word(&t) || n == max)
				break;
			q = next_tok(p, end, &u);
			if (tok_is_punct(&u, '.')) {
				p = next_tok(q, end, &t);
				if (!t.is_ident)
					break;
			}
			memset(&rels[n], 0, sizeof(rels[n]));
			if (!tok_name(&t, rels[n].name, sizeof(rels[n].name)))
				break;
			/* Only what belongs to this table is consumed: the next
			 * keyword (JOIN, WHERE...) is left for the scan. */
			q = next_tok(p, end, &u);
			if (tok_is(&u, "as")) {
				p = q;
				q = next_tok(p, end, &u);
			}
			if (u.is_ident && !is_clause_word(&u)) {
				tok_name(&u, rels[n].alias, sizeof(rels[n].alias));
				p = q;
				q = next_tok(p, end, &u);
			}
			n++;
			if (!is_list || !tok_is_punct(&u, ','))
				break;
			p = q;
		}
	}
	return n;
}

/* ------------------------------------------------------------ ranking ---- */

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[HINT_MAX_NAME + 1], i, j, diag, up, best;

	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		diag = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			up = row[j];
			best = diag + ((a[i - 1] | 0x20) == (b[j - 1] | 0x20) ? 0 : 1);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* @whole ends in "_" @part ("end_state" and "state"). */
static bool ends_in_part(const char *whole, const char *part)
{
	size_t lw = strlen(whole), lp = strlen(part);

	return lp >= 3 && lw > lp + 1 && whole[lw - lp - 1] == '_' &&
	       strcasecmp(whole + lw - lp, part) == 0;
}

/*
 * The column of @t nearest to @col: within a third of its length in edits
 * (at least one), or sharing its last "_" part. NULL if none is near.
 */
static const char *nearest_column(const struct table_cols *t, const char *col)
{
	size_t len = strlen(col), limit = len / 3 > 1 ? len / 3 : 1, best_d = (size_t)-1, d, i;
	const char *best = NULL, *c;

	if (len > HINT_MAX_NAME)
		return NULL;
	for (i = 0; i < t->n; i++) {
		c = t->cols[i];
		if (strlen(c) > HINT_MAX_NAME)
			continue;
		d = edit_distance(col, c);
		if (d > limit && (ends_in_part(c, col) || ends_in_part(col, c)))
			d = limit;
		if (d <= limit && d < best_d) {
			best_d = d;
			best = c;
		}
	}
	return best;
}

/* Appends how to join @key's @target from table @from. */
static int append_join(struct buf *out, const char *from, const struct hint_key *key,
		       const char *target)
{
	if (key->is_using)
		return buf_appendf(out, "join %s USING (%s)", target, key->col);
	return buf_appendf(out, "join %s ON %s.%s = %s.id", target, from, key->col, target);
}

/*
 * From the table @k leads to, a table that carries @k's key and has @col
 * (process -> thread USING (upid)). Return: 1 (appended), 0 or -ENOMEM.
 */
static int back_join(struct hint_ctx *c, const char *from, const struct hint_key *k,
		     const char *col, struct buf *out)
{
	const struct table_cols *t;

	for (size_t j = 0; k->back[j]; j++) {
		t = columns_of(c, k->back[j]);
		if (!has_column(t, col) || !has_column(t, k->col))
			continue;
		if (append_join(out, from, k, t->name) < 0 || buf_append_str(out, " for it") < 0)
			return -ENOMEM;
		return 1;
	}
	return 0;
}

/*
 * A table one or two key joins away from @from that has @col; appends
 * "join ... for it" to @out. Return: 1 found, 0 not, -ENOMEM.
 */
static int join_hint(struct hint_ctx *c, const struct table_cols *from, const char *col,
		     struct buf *out)
{
	const struct table_cols *t, *t2;
	const struct hint_key *k, *k2;
	size_t i, j, i2, j2;
	int rc, found;

	for (i = 0; i < PFC_ARRAY_SIZE(k_keys); i++) {
		k = &k_keys[i];
		if (!has_column(from, k->col) || !key_fits(k, from->name))
			continue;
		for (j = 0; k->targets[j]; j++) {
			if (strcasecmp(k->targets[j], from->name) == 0) {
				found = back_join(c, from->name, k, col, out);
				if (found)
					return found;
				continue;
			}
			t = columns_of(c, k->targets[j]);
			if (!has_column(t, col))
				continue;
			rc = append_join(out, from->name, k, t->name);
			return rc < 0 ? rc : buf_append_str(out, " for it") < 0 ? -ENOMEM : 1;
		}
	}
	for (i = 0; i < PFC_ARRAY_SIZE(k_keys); i++) {
		k = &k_keys[i];
		if (!has_column(from, k->col) || !key_fits(k, from->name))
			continue;
		for (j = 0; k->targets[j]; j++) {
			if (strcasecmp(k->targets[j], from->name) == 0)
				continue;
			t = columns_of(c, k->targets[j]);
			if (!t || !t->exists)
				continue;
			for (i2 = 0; i2 < PFC_ARRAY_SIZE(k_keys); i2++) {
				k2 = &k_keys[i2];
				if (!strcmp(k2->col, k->col) || !has_column(t, k2->col) ||
				    !key_fits(k2, t->name))
					continue;
				for (j2 = 0; k2->targets[j2]; j2++) {
					if (strcasecmp(k2->targets[j2], from->name) == 0 ||
					    strcasecmp(k2->targets[j2], t->name) == 0)
						continue;
					t2 = columns_of(c, k2->targets[j2]);
					if (!has_column(t2, col))
						continue;
					if (append_join(out, from->name, k, t->name) < 0 ||
					    buf_append_str(out, ", then ") < 0 ||
					    append_join(out, t->name, k2, t2->name) < 0 ||
					    buf_append_str(out, " for it") < 0)
						return -ENOMEM;
					return 1;
				}
			}
		}
	}
	return 0;
}

/* The note for (@table, @col); "X is a table" when @col names one; or NULL. */
static const char *note_for(struct hint_ctx *c, const char *table, const char *col,
			    bool *out_is_table)
{
	const struct table_cols *t;

	*out_is_table = false;
	for (size_t i = 0; i < PFC_ARRAY_SIZE(k_notes); i++)
		if (strcasecmp(k_notes[i].table, table) == 0 &&
		    strcasecmp(k_notes[i].col, col) == 0)
			return k_notes[i].note;
	t = columns_of(c, col);
	*out_is_table = t && t->exists;
	return NULL;
}

/* Appends the hint for table @t lacking @col. Return: 1, 0 (nothing to say) or -ENOMEM. */
static int hint_for_table(struct hint_ctx *c, const struct table_cols *t, const char *col,
			  bool must_say, struct buf *out)
{
	size_t mark = out->len;
	const char *near, *note;
	bool is_table;
	int rc;

	if (buf_appendf(out, "%s has no column %s; ", t->name, col) < 0)
		return -ENOMEM;
	rc = join_hint(c, t, col, out);
	if (rc != 0)
		return rc;
	near = nearest_column(t, col);
	note = note_for(c, t->name, col, &is_table);
	if (!near && !note && !is_table && !must_say) {
		out->len = mark;
		return 0;
	}
	out->len -= 2; /* the "; " */
	if (near && buf_appendf(out, "; did you mean %s?", near) < 0)
		return -ENOMEM;
	if (note && buf_appendf(out, " (%s)", note) < 0)
		return -ENOMEM;
	if (!note && is_table &&
	    buf_appendf(out, " (%s is a table: SELECT ... FROM %s)", col, col) < 0)
		return -ENOMEM;
	return 1;
}

int shell_column_hint(sqlite3 *db, const char *errmsg, const char *sql, size_t sql_len,
		      struct buf *out)
{
	static const char k_prefix[] = "no such column: ";
	struct hint_ctx c = {.db = db};
	struct rel rels[HINT_MAX_RELS];
	const struct table_cols *tabs[HINT_MAX_RELS], *t;
	char qual[HINT_MAX_NAME + 1] = "", col[HINT_MAX_NAME + 1];
	const char *name = errmsg, *dot;
	size_t n_rels, n_tabs = 0, i, mark = out->len;
	int rc = 0;

	if (!errmsg || strncmp(errmsg, k_prefix, sizeof(k_prefix) - 1) != 0)
		return 0;
	name += sizeof(k_prefix) - 1;
	dot = strrchr(name, '.');
	if (dot) {
		if ((size_t)(dot - name) > HINT_MAX_NAME)
			return 0;
		memcpy(qual, name, (size_t)(dot - name));
		qual[dot - name] = '\0';
		name = dot + 1;
	}
	if (strlen(name) > HINT_MAX_NAME || !*name)
		return 0;
	memcpy(col, name, strlen(name) + 1);

	n_rels = parse_rels(sql, sql_len, rels, HINT_MAX_RELS);
	for (i = 0; i < n_rels; i++) {
		if (qual[0] && strcasecmp(qual, rels[i].alias) != 0 &&
		    !(!rels[i].alias[0] && strcasecmp(qual, rels[i].name) == 0))
			continue;
		t = columns_of(&c, rels[i].name);
		if (!t)
			continue; /* out of memory or too many tables: no hint */
		for (size_t k = 0; k < n_tabs; k++)
			if (tabs[k] == t)
				t = NULL;
		if (t && t->exists && !has_column(t, col))
			tabs[n_tabs++] = t;
	}
	/* The first table with something to say, else each one that lacks it. */
	for (i = 0; i < n_tabs; i++) {
		rc = hint_for_table(&c, tabs[i], col, n_tabs == 1, out);
		if (rc != 0)
			goto out;
	}
	if (n_tabs > 1) {
		rc = buf_append_str(out, "none of ") < 0 ? -ENOMEM : 1;
		for (i = 0; rc > 0 && i < n_tabs; i++)
			if (buf_appendf(out, "%s%s", i ? ", " : "", tabs[i]->name) < 0)
				rc = -ENOMEM;
		if (rc > 0 && buf_appendf(out, " has a column %s", col) < 0)
			rc = -ENOMEM;
	}
out:
	if (rc < 0)
		out->len = mark;
	cache_fini(&c);
	return rc;
}

int shell_module_hint(sqlite3 *db, const char *errmsg, struct buf *out)
{
	static const char *const k_prefixes[] = {"no such table: ", "no such function: "};
	sqlite3_stmt *st = NULL;
	const char *name = NULL, *module;
	size_t i;
	int rc = 0;

	for (i = 0; errmsg && i < sizeof(k_prefixes) / sizeof(k_prefixes[0]) && !name; i++)
		if (strncmp(errmsg, k_prefixes[i], strlen(k_prefixes[i])) == 0)
			name = errmsg + strlen(k_prefixes[i]);
	if (!name)
		return 0;
	/* "no such table: main.x": the name alone. */
	if (strchr(name, '.'))
		name = strrchr(name, '.') + 1;
	if (sqlite3_prepare_v2(db, "SELECT __tp_module_for(?1)", -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW &&
	    (module = (const char *)sqlite3_column_text(st, 0)) != NULL)
		rc = buf_append_str(out, module) < 0 ? -ENOMEM : 1;
	sqlite3_finalize(st);
	return rc;
}

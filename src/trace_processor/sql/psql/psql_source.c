// SPDX-License-Identifier: Apache-2.0
/*
 * psql_source.c - where PerfettoSQL text comes from (psql_int.h), for
 * errors printed as Perfetto prints them:
 *
 *   Traceback (most recent call last):
 *     File "stdin" line 2 col 8
 *       select m!(1) from slice
 *              ^
 *     File "stdin" line 1 col 54
 *       $a + nocol
 *            ^
 *   no such column: nocol
 *
 * A statement becomes a layer: its text once macros are expanded, each
 * run of bytes tagged with its origin (a position in the query, a module
 * or a macro's body, under the macro call it was expanded from). A
 * traceback walks the origin of the failing byte from the outermost call
 * in. The arena holds what one top-level statement needs.
 */
#include "trace_processor/sql/psql/psql_int.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

/* Context printed around a caret, each way, as Perfetto does. */
#define CONTEXT_CHARS 128
#define CHUNK_BYTES 4096

struct psql_chunk {
	struct psql_chunk *next;
	size_t used, size;
	max_align_t data[];
};

void *psql_alloc(struct psql_arena *a, size_t n)
{
	struct psql_chunk *c = a->head;
	size_t align = sizeof(max_align_t), need = (n + align - 1) / align * align;
	void *p;

	if (!c || c->size - c->used < need) {
		size_t size = need > CHUNK_BYTES ? need : CHUNK_BYTES;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->size = size;
		c->used = 0;
		c->next = a->head;
		a->head = c;
	}
	p = (char *)c->data + c->used;
	c->used += need;
	return p;
}

char *psql_strndup(struct psql_arena *a, const char *s, size_t n)
{
	char *p = psql_alloc(a, n + 1);

	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

void psql_arena_free(struct psql_arena *a)
{
	struct psql_chunk *c, *next;

	for (c = a->head; c; c = next) {
		next = c->next;
		free(c);
	}
	a->head = NULL;
}

/* Line and column of @off in @s (Perfetto's GetLineAndColumnForOffset). */
static void line_col(const struct psql_src *s, size_t off, unsigned *line, unsigned *col)
{
	const char *nl = NULL;
	unsigned n = 0;
	size_t i;

	if (off > s->len)
		off = s->len;
	for (i = 0; i < off; i++) {
		if (s->text[i] == '\n') {
			n++;
			nl = s->text + i;
		}
	}
	*line = s->line + n;
	*col = nl ? (unsigned)(s->text + off - nl) : s->col + (unsigned)off;
}

void psql_src_sub(const struct psql_src *s, size_t off, size_t len, struct psql_src *out)
{
	if (off > s->len)
		off = s->len;
	if (len > s->len - off)
		len = s->len - off;
	*out = *s;
	line_col(s, off, &out->line, &out->col);
	out->text = s->text + off;
	out->len = len;
}

/* The line around @off of [@text, @text + @len), and where @off is in it. */
static void context(const char *text, size_t len, size_t off, size_t *start, size_t *end)
{
	size_t s = off > CONTEXT_CHARS ? off - CONTEXT_CHARS : 0, e, i;

	for (i = off; i > s; i--) {
		if (text[i - 1] == '\n') {
			s = i;
			break;
		}
	}
	e = off + CONTEXT_CHARS < len ? off + CONTEXT_CHARS : len;
	for (i = off; i < e; i++) {
		if (text[i] == '\n') {
			e = i;
			break;
		}
	}
	*start = s;
	*end = e;
}

static void caret_line(sqlite3_str *out, const char *indent, const char *text, size_t len,
		       size_t off)
{
	size_t s, e;

	context(text, len, off, &s, &e);
	sqlite3_str_appendf(out, "%s%.*s\n%s", indent, (int)(e - s), text + s, indent);
	sqlite3_str_appendchar(out, (int)(off - s), ' ');
	sqlite3_str_appendall(out, "^\n");
}

void psql_frame(sqlite3_str *out, const struct psql_src *s, size_t off)
{
	unsigned line, col;

	if (off > s->len)
		off = s->len;
	if (s->header)
		sqlite3_str_appendall(out, "Traceback (most recent call last):\n");
	line_col(s, off, &line, &col);
	sqlite3_str_appendf(out, "  %s line %u col %u\n", s->name, line, col);
	caret_line(out, "    ", s->text, s->len, off);
}

/* ----------------------------------------------------------------- layers ---- */

static void grow(struct psql_layer *l, size_t more)
{
	char *t;

	if (l->oom || l->len + more + 1 <= l->cap)
		return;
	l->cap = (l->len + more + 1) * 2;
	t = realloc(l->text, l->cap);
	if (!t) {
		l->oom = true;
		return;
	}
	l->text = t;
}

static void add_seg(struct psql_layer *l, size_t start, size_t len, const struct psql_org *org,
		    size_t skip)
{
	struct psql_seg *s;

	if (l->oom || len == 0)
		return;
	if (l->n_segs) {
		s = &l->segs[l->n_segs - 1];
		/* Extends the last run if it continues it. */
		if (s->org == org && s->start + s->len == start && s->skip + s->len == skip) {
			s->len += len;
			return;
		}
	}
	if (l->n_segs == l->cap_segs) {
		size_t cap = l->cap_segs ? l->cap_segs * 2 : 8;

		s = realloc(l->segs, cap * sizeof(*s));
		if (!s) {
			l->oom = true;
			return;
		}
		l->segs = s;
		l->cap_segs = cap;
	}
	s = &l->segs[l->n_segs++];
	s->start = start;
	s->len = len;
	s->org = org;
	s->skip = skip;
}

void psql_layer_add(struct psql_layer *l, const char *p, size_t n, const struct psql_org *org)
{
	grow(l, n);
	if (l->oom)
		return;
	memcpy(l->text + l->len, p, n);
	add_seg(l, l->len, n, org, 0);
	l->len += n;
	l->text[l->len] = '\0';
}

void psql_layer_add_at(struct psql_layer *l, const char *p, size_t n, const struct psql_org *org,
		       size_t skip)
{
	grow(l, n);
	if (l->oom)
		return;
	memcpy(l->text + l->len, p, n);
	add_seg(l, l->len, n, org, skip);
	l->len += n;
	l->text[l->len] = '\0';
}

void psql_layer_copy(struct psql_layer *l, const struct psql_layer *from, size_t start, size_t n)
{
	size_t i, end = start + n;

	grow(l, n);
	if (l->oom)
		return;
	memcpy(l->text + l->len, from->text + start, n);
	for (i = 0; i < from->n_segs; i++) {
		const struct psql_seg *s = &from->segs[i];
		size_t a = s->start > start ? s->start : start;
		size_t b = s->start + s->len < end ? s->start + s->len : end;

		if (a < b)
			add_seg(l, l->len + (a - start), b - a, s->org, s->skip + (a - s->start));
	}
	l->len += n;
	l->text[l->len] = '\0';
	l->expanded |= from->expanded;
}

void psql_layer_fini(struct psql_layer *l)
{
	free(l->text);
	free(l->segs);
	memset(l, 0, sizeof(*l));
}

const struct psql_org *psql_layer_org(const struct psql_layer *l, size_t off, size_t *in_org)
{
	size_t lo = 0, hi = l->n_segs;

	if (l->n_segs == 0)
		return NULL;
	if (off >= l->len)
		off = l->len ? l->len - 1 : 0;
	/* The last run starting at or before @off. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->segs[mid].start <= off)
			lo = mid;
		else
			hi = mid;
	}
	if (l->segs[lo].start > off || !l->segs[lo].org)
		return NULL;
	*in_org = l->segs[lo].org->off + l->segs[lo].skip +
		  (off < l->segs[lo].start + l->segs[lo].len ? off - l->segs[lo].start
							     : l->segs[lo].len);
	return l->segs[lo].org;
}

/* The statement's own frame: the part [@a, @b) of its text around @off. */
static void root_frame(sqlite3_str *out, const struct psql_src *root, size_t off, size_t a,
		       size_t b)
{
	struct psql_src sub;

	if (a > off)
		a = off;
	if (b < off)
		b = off;
	psql_src_sub(root, a, b - a, &sub);
	psql_frame(out, &sub, off - a);
}

/* The frames of origin @org at @off in it: callers first. */
static void frames(sqlite3_str *out, const struct psql_org *org, size_t off, size_t ra, size_t rb)
{
	if (org->up) {
		frames(out, org->up, org->up->off, ra, rb);
		psql_frame(out, org->src, off);
		return;
	}
	root_frame(out, org->src, off, ra, rb);
}

/* The root origin of byte @off of @l: the statement's own offset of it. */
static bool root_off(const struct psql_layer *l, size_t off, bool end, size_t *out)
{
	const struct psql_org *o;
	size_t in;

	o = psql_layer_org(l, off, &in);
	if (!o)
		return false;
	while (o->up) {
		in = end ? o->up->off + o->up->len : o->up->off;
		o = o->up;
	}
	*out = in;
	return true;
}

void psql_traceback(sqlite3_str *out, const struct psql_layer *l, size_t off, size_t sub_start,
		    size_t sub_end)
{
	const struct psql_org *o, *root;
	size_t in, ra = 0, rb;

	o = psql_layer_org(l, off, &in);
	if (!o)
		return;
	for (root = o; root->up; root = root->up)
		;
	rb = root->src->len;
	if (sub_start > 0 || sub_end < l->len) {
		if (!root_off(l, sub_start, false, &ra))
			ra = 0;
		if (sub_end == 0 || !root_off(l, sub_end - 1, true, &rb))
			rb = root->src->len;
		else if (rb < root->src->len && o == root)
			rb++;
	}
	if (l->expanded && root->src->header) {
		size_t s, e;

		sqlite3_str_appendall(out, "Fully expanded statement\n");
		caret_line(out, "  ", l->text, l->len, off > l->len ? l->len : off);
		(void)s;
		(void)e;
	}
	frames(out, o, in, ra, rb);
}

/* ----------------------------------------------------------------- errors ---- */

void psql_err_msg(struct psql_err *e, char *msg)
{
	sqlite3_free(e->msg);
	e->msg = msg;
	e->tb = false;
	e->oom = !msg;
}

void psql_err_at(struct psql_err *e, const struct psql_layer *l, size_t off, size_t sub_start,
		 size_t sub_end, const char *msg)
{
	sqlite3_str *s = sqlite3_str_new(NULL);

	psql_traceback(s, l, off, sub_start, sub_end);
	sqlite3_str_appendall(s, msg ? msg : "");
	psql_err_msg(e, sqlite3_str_finish(s));
	e->tb = true;
}

void psql_err_frame(struct psql_err *e, const struct psql_src *src, size_t off, const char *msg)
{
	sqlite3_str *s = sqlite3_str_new(NULL);

	psql_frame(s, src, off);
	sqlite3_str_appendall(s, msg ? msg : "");
	psql_err_msg(e, sqlite3_str_finish(s));
	e->tb = true;
}

void psql_err_wrap(struct psql_err *e, const struct psql_layer *l)
{
	char *msg;

	if (e->tb || !e->msg)
		return;
	msg = e->msg;
	e->msg = NULL;
	psql_err_at(e, l, 0, 0, l->len, msg);
	sqlite3_free(msg);
}

void psql_err_under(struct psql_err *e, const struct psql_src *src, size_t off)
{
	sqlite3_str *s;

	if (!e->msg)
		return;
	s = sqlite3_str_new(NULL);
	psql_frame(s, src, off);
	sqlite3_str_appendall(s, e->msg);
	sqlite3_free(e->msg);
	e->msg = sqlite3_str_finish(s);
	e->oom = !e->msg;
	e->tb = true;
	e->sqlite = false;
}

void psql_err_free(struct psql_err *e)
{
	sqlite3_free(e->msg);
	memset(e, 0, sizeof(*e));
}

int psql_err_syntax(struct psql_err *e, const struct psql_layer *l, const struct psql_tok *t)
{
	char *msg = t->type == TK_EOF
			    ? sqlite3_mprintf("incomplete SQL statement")
			    : sqlite3_mprintf("syntax error near '%.*s'", (int)t->n, t->p);
	size_t off = t->p >= l->text && t->p <= l->text + l->len ? (size_t)(t->p - l->text)
								  : l->len;

	if (!msg) {
		psql_err_msg(e, NULL);
		return -ENOMEM;
	}
	if (l->rest && !l->expanded)
		psql_err_frame(e, l->rest, l->rest_at + off, msg);
	else
		psql_err_at(e, l, off, 0, l->len, msg);
	sqlite3_free(msg);
	return -EINVAL;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * te_json.c - A debug annotation's legacy_json_value as args, the way
 * Perfetto flattens it: an object or array becomes one arg per leaf
 * ("a.b" flat keys, "a.b[0]" keys), nulls are skipped, integers that fit
 * int64 are ints and other numbers reals; a top-level scalar is one arg
 * at the annotation's own key. Malformed input keeps the args found before
 * the fault. Array indexes are the arg set's (tp_argset_array_next()), as
 * the other debug annotations'. Called by te_parse.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/import/track_event/te_int.h"

#define JSON_MAX_DEPTH 64 /* nesting we follow; deeper input stops the walk */

enum { J_OK, J_ERR, J_MORE }; /* J_MORE: input ended early */

enum jtype { JV_NULL, JV_BOOL, JV_INT, JV_REAL, JV_STR, JV_OBJ, JV_ARR };

struct jval {
	enum jtype t;
	int64_t i;
	double d;
	const char *s; /* JV_STR: points into the input or into buf */
	size_t n;
};

struct jp {
	const char *cur, *end;
	char *buf; /* unescaped strings */
	size_t cap;
	char *kbuf; /* the unescaped object key */
	size_t kcap;
};

static bool skip_ws(struct jp *p)
{
	while (p->cur != p->end &&
	       (*p->cur == ' ' || *p->cur == '\t' || *p->cur == '\n' || *p->cur == '\r'))
		p->cur++;
	return p->cur != p->end;
}

static void put(char *out, size_t cap, size_t *n, char ch)
{
	if (*n < cap)
		out[*n] = ch;
	(*n)++;
}

/* Escapes resolved into @out (@cap bytes); an unknown escape is dropped. */
static int unescape(const char *s, const char *e, char *out, size_t cap, size_t *out_n)
{
	size_t n = 0;

	for (; s != e; s++) {
		uint32_t cp = 0;
		int j;

		if (*s != '\\') {
			put(out, cap, &n, *s);
			continue;
		}
		if (++s == e)
			break;
		switch (*s) {
		case '"':
		case '\\':
		case '/':
			put(out, cap, &n, *s);
			break;
		case 'b':
			put(out, cap, &n, '\b');
			break;
		case 'f':
			put(out, cap, &n, '\f');
			break;
		case 'n':
			put(out, cap, &n, '\n');
			break;
		case 'r':
			put(out, cap, &n, '\r');
			break;
		case 't':
			put(out, cap, &n, '\t');
			break;
		case 'u':
			for (j = 0; j < 4; j++) {
				char h;

				if (++s == e)
					return J_ERR;
				h = *s;
				cp <<= 4;
				if (h >= '0' && h <= '9')
					cp += (uint32_t)(h - '0');
				else if (h >= 'a' && h <= 'f')
					cp += (uint32_t)(h - 'a' + 10);
				else if (h >= 'A' && h <= 'F')
					cp += (uint32_t)(h - 'A' + 10);
				else
					return J_ERR;
			}
			if (cp <= 0x7f) {
				put(out, cap, &n, (char)cp);
			} else if (cp <= 0x7ff) {
				put(out, cap, &n, (char)(0xc0 | (cp >> 6)));
				put(out, cap, &n, (char)(0x80 | (cp & 0x3f)));
			} else if (cp >= 0xd800 && cp <= 0xdfff) {
				return J_ERR; /* surrogates are not supported */
			} else {
				put(out, cap, &n, (char)(0xe0 | (cp >> 12)));
				put(out, cap, &n, (char)(0x80 | ((cp >> 6) & 0x3f)));
				put(out, cap, &n, (char)(0x80 | (cp & 0x3f)));
			}
			break;
		default:
			break;
		}
	}
	*out_n = n;
	return J_OK;
}

/* A string at p->cur (a '"'); its text in *s, *n, unescaped into *buf. */
static int parse_string(struct jp *p, char **buf, size_t *cap, const char **s, size_t *n)
{
	const char *start, *q;
	size_t need;

	if (*p->cur != '"')
		return J_ERR;
	start = ++p->cur;
	q = start;
	for (;;) {
		const char *b;
		size_t slashes = 0;

		q = memchr(q, '"', (size_t)(p->end - q));
		if (!q)
			return J_MORE;
		for (b = q - 1; b >= start && *b == '\\'; b--)
			slashes++;
		if (!(slashes & 1))
			break;
		q++;
	}
	p->cur = q + 1;
	if (!memchr(start, '\\', (size_t)(q - start))) {
		*s = start;
		*n = (size_t)(q - start);
		return J_OK;
	}
	need = (size_t)(q - start);
	if (need > *cap) {
		char *nb = realloc(*buf, need);

		if (!nb)
			return J_ERR;
		*buf = nb;
		*cap = need;
	}
	if (unescape(start, q, *buf, *cap, n) != J_OK)
		return J_ERR;
	*s = *buf;
	return J_OK;
}

static bool is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

/* Perfetto's own decimal conversion, kept for identical reals. */
static int to_double(const char *s, const char *e, double *out)
{
	bool neg = false, exp_neg = false;
	uint64_t ip = 0, fi = 0, div = 1, ex = 0;
	double v, frac = 0;

	if (*s == '-') {
		neg = true;
		s++;
	}
	for (; s != e && is_digit(*s); s++)
		ip = ip * 10 + (uint64_t)(*s - '0');
	if (s != e && *s == '.') {
		for (s++; s != e && is_digit(*s); s++) {
			fi = (uint64_t)(*s - '0') + fi * 10;
			div *= 10;
		}
		frac = (double)(int64_t)fi / (double)div;
	}
	if (s != e && (*s == 'e' || *s == 'E')) {
		s++;
		if (s != e && (*s == '+' || *s == '-'))
			exp_neg = *s++ == '-';
		for (; s != e && is_digit(*s); s++)
			ex = ex * 10 + (uint64_t)(*s - '0');
	}
	v = (double)(int64_t)ip + frac;
	if (exp_neg)
		v /= pow(10, (double)(int64_t)ex);
	else if ((int64_t)ex > 0)
		v *= pow(10, (double)(int64_t)ex);
	if (isinf(v) || isnan(v))
		return J_ERR;
	*out = neg ? -v : v;
	return J_OK;
}

static bool to_int(const char *s, const char *e, int64_t *out)
{
	bool neg = *s == '-';
	uint64_t v = 0, lim;

	s += neg;
	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; s != e; s++) {
		uint64_t d = (uint64_t)(*s - '0');

		if (v > (lim - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return true;
}

static int parse_number(struct jp *p, struct jval *v)
{
	const char *s = p->cur, *c = p->cur, *mark;
	bool int_like = true;

	c += *c == '-';
	if (c != p->end && *c == '0') {
		if (++c != p->end && is_digit(*c))
			return J_ERR;
	} else if (c != p->end && *c >= '1' && *c <= '9') {
		while (c != p->end && is_digit(*c))
			c++;
	} else if (c != p->end) {
		return J_ERR;
	}
	if (c != p->end && *c == '.') {
		int_like = false;
		mark = ++c;
		while (c != p->end && is_digit(*c))
			c++;
		if (c != p->end && c == mark)
			return J_ERR;
	}
	if (c != p->end && (*c == 'e' || *c == 'E')) {
		int_like = false;
		c++;
		c += c != p->end && (*c == '+' || *c == '-');
		mark = c;
		while (c != p->end && is_digit(*c))
			c++;
		if (c != p->end && c == mark)
			return J_ERR;
	}
	if (c == p->end)
		return J_MORE;
	p->cur = c;
	if (int_like && to_int(s, c, &v->i)) {
		v->t = JV_INT;
		return J_OK;
	}
	v->t = JV_REAL;
	return to_double(s, c, &v->d);
}

static int parse_word(struct jp *p, const char *w, size_t n)
{
	if ((size_t)(p->end - p->cur) < n)
		return J_MORE;
	if (memcmp(p->cur, w, n))
		return J_ERR;
	p->cur += n;
	return J_OK;
}

/* A scalar at p->cur (not an object or array). */
static int parse_scalar(struct jp *p, struct jval *v)
{
	switch (*p->cur) {
	case '"':
		v->t = JV_STR;
		return parse_string(p, &p->buf, &p->cap, &v->s, &v->n);
	case 't':
		v->t = JV_BOOL;
		v->i = 1;
		return parse_word(p, "true", 4);
	case 'f':
		v->t = JV_BOOL;
		v->i = 0;
		return parse_word(p, "false", 5);
	case 'n':
		v->t = JV_NULL;
		return parse_word(p, "null", 4);
	default:
		return parse_number(p, v);
	}
}

/* After a value: a ',' (skipped) or the scope's closer (left in place). */
static int post_value(struct jp *p, char closer)
{
	if (!skip_ws(p))
		return J_MORE;
	if (*p->cur == ',') {
		p->cur++;
		return skip_ws(p) ? J_OK : J_MORE;
	}
	return *p->cur == closer ? J_OK : J_ERR;
}

struct frame {
	size_t n_flat, n_key;
	bool is_obj;
};

static void leaf(struct tp_import *imp, struct tp_argset *b, const char *flat, size_t n_flat,
		 const char *key, size_t n_key, const struct jval *v)
{
	struct tp_arg a = {0};

	a.flat_key = tp_str_intern(&imp->db->strings, flat, n_flat);
	a.key = tp_str_intern(&imp->db->strings, key, n_key);
	switch (v->t) {
	case JV_BOOL:
		a.type = TP_ARG_BOOL;
		a.v.i = v->i;
		break;
	case JV_INT:
		a.type = TP_ARG_INT;
		a.v.i = v->i;
		break;
	case JV_REAL:
		a.type = TP_ARG_REAL;
		a.v.d = v->d;
		break;
	case JV_STR:
		a.type = TP_ARG_STR;
		a.v.s = tp_str_intern(&imp->db->strings, v->s, v->n);
		break;
	default:
		return;
	}
	tp_argset_add(imp, b, &a);
}

static bool append(char *buf, size_t *n, const char *s, size_t len)
{
	if (*n + len >= TE_KEY_MAX)
		return false;
	memcpy(buf + *n, s, len);
	*n += len;
	return true;
}

static void walk(struct tp_import *imp, struct tp_argset *b, struct jp *p, char *flat, size_t n_flat, char *key, size_t n_key)
{
	struct frame st[JSON_MAX_DEPTH];
	int top = 0;

	st[0] = (struct frame){n_flat, n_key, *p->cur == '{'};
	p->cur++;
	if (!skip_ws(p))
		return;
	for (;;) {
		struct frame *f = &st[top];
		bool in_obj = f->is_obj;
		const char *k = NULL;
		size_t kn = 0;
		struct jval v = {0};
		bool nested = false;

		if (*p->cur == '}' || *p->cur == ']') {
			p->cur++;
			if (top == 0)
				return;
			top--;
			if (post_value(p, st[top].is_obj ? '}' : ']') != J_OK)
				return;
			continue;
		}
		if (in_obj) {
			if (!skip_ws(p) || *p->cur != '"' ||
			    parse_string(p, &p->kbuf, &p->kcap, &k, &kn) != J_OK)
				return;
			if (!skip_ws(p) || *p->cur != ':')
				return;
			p->cur++;
			if (!skip_ws(p))
				return;
		} else if (!skip_ws(p)) {
			return;
		}
		if (*p->cur == '{' || *p->cur == '[') {
			v.t = *p->cur == '{' ? JV_OBJ : JV_ARR;
			nested = true;
			p->cur++;
			if (!skip_ws(p))
				return;
		} else if (parse_scalar(p, &v) != J_OK ||
			   post_value(p, in_obj ? '}' : ']') != J_OK) {
			return;
		}
		if (v.t == JV_NULL)
			continue;
		n_flat = f->n_flat;
		n_key = f->n_key;
		if (in_obj) {
			if (!append(key, &n_key, ".", 1) || !append(key, &n_key, k, kn) ||
			    !append(flat, &n_flat, ".", 1) || !append(flat, &n_flat, k, kn))
				return;
		} else {
			char num[32];
			uint32_t id = tp_str_intern(&imp->db->strings, key, n_key);
			int len = snprintf(num, sizeof(num), "[%u]", tp_argset_array_next(b, id));

			tp_argset_array_inc(b, id);
			if (!append(key, &n_key, num, (size_t)len))
				return;
		}
		if (nested) {
			if (top + 1 >= JSON_MAX_DEPTH)
				return;
			st[++top] = (struct frame){n_flat, n_key, v.t == JV_OBJ};
			continue;
		}
		leaf(imp, b, flat, n_flat, key, n_key, &v);
	}
}

void te_json_args(struct tp_import *imp, struct tp_argset *b, const char *flat, size_t n_flat, const char *key, size_t n_key,
		  const uint8_t *json, size_t len)
{
	char fbuf[TE_KEY_MAX], kbuf[TE_KEY_MAX];
	struct jp p = {(const char *)json, (const char *)json + len, NULL, 0, NULL, 0};
	struct jval v = {0};

	if (n_flat >= TE_KEY_MAX || n_key >= TE_KEY_MAX || !len)
		return;
	memcpy(fbuf, flat, n_flat);
	memcpy(kbuf, key, n_key);
	if (skip_ws(&p) && (*p.cur == '{' || *p.cur == '[')) {
		walk(imp, b, &p, fbuf, n_flat, kbuf, n_key);
	} else {
		/* Not a container: one scalar, read from the very first byte. */
		p.cur = (const char *)json;
		if (parse_scalar(&p, &v) == J_OK)
			leaf(imp, b, fbuf, n_flat, kbuf, n_key, &v);
	}
	free(p.buf);
	free(p.kbuf);
}

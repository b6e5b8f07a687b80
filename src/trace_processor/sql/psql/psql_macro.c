// SPDX-License-Identifier: Apache-2.0
/*
 * psql_macro.c - PerfettoSQL macros (psql_int.h). CREATE PERFETTO MACRO
 * keeps a name, its argument names and its body with where the body was
 * written. A call "name!(a, b)" is replaced, before SQLite sees the
 * statement, by the body with each $arg replaced by the text of that
 * argument, and the result is scanned again for calls (so calls built from
 * arguments expand too), as Perfetto's parser does. The built-in
 * intrinsics __intrinsic_stringify!(x) (x as a string literal) and
 * __intrinsic_token_apply[_and][_prefix]!(m, (a, b), (c, d)) (m!(a, c),
 * m!(b, d) joined by ", " or " AND ") are expanded the same way. Every
 * byte of the result keeps its origin (psql_source.c), for tracebacks.
 * Upstream's limits and messages: 16 levels, no macro inside its own
 * expansion; and ours: an expansion larger than 16 MiB.
 */
#include "trace_processor/sql/psql/psql_int.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Upstream's bound on nested expansion. */
#define MACRO_MAX_DEPTH 16
/* The longest expansion of one statement, against exponential growth. */
#define MACRO_MAX_OUT (16u << 20)
#define MACRO_MAX_ARGS 64

struct macro {
	char *name;
	char *body;
	char *src_name;
	struct psql_src src; /* the body, where it was written */
	size_t n_args;
	char *args[MACRO_MAX_ARGS]; /* names, without the '$' */
	struct macro *next;
};

struct psql_macros {
	struct macro *head;
};

static const char k_allowed[] = "ColumnNameList, _ProjectionFragment, _TableNameList, "
				"ColumnName, Expr, TableOrSubquery, UnparenExprList, ExprList";

int psql_macros_create(struct psql_macros **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static void macro_free(struct macro *mac)
{
	size_t i;

	if (!mac)
		return;
	for (i = 0; i < mac->n_args; i++)
		free(mac->args[i]);
	free(mac->name);
	free(mac->body);
	free(mac->src_name);
	free(mac);
}

void psql_macros_destroy(struct psql_macros *m)
{
	struct macro *mac, *next;

	if (!m)
		return;
	for (mac = m->head; mac; mac = next) {
		next = mac->next;
		macro_free(mac);
	}
	free(m);
}

static struct macro **find(struct psql_macros *m, const char *name, size_t n)
{
	struct macro **pp;

	for (pp = &m->head; *pp; pp = &(*pp)->next)
		if (strlen((*pp)->name) == n && strncmp((*pp)->name, name, n) == 0)
			return pp;
	return NULL;
}

bool psql_macro_exists(struct psql_macros *m, const char *name, size_t n)
{
	return find(m, name, n) != NULL;
}

struct define_ctx {
	struct macro *mac;
	char **err;
	const char **err_at;
	size_t *err_len;
};

static int add_arg(void *ctx, const char *name, size_t name_len, const char *type, size_t type_len)
{
	struct define_ctx *d = ctx;

	if (!psql_type_known(type, type_len, true)) {
		*d->err = sqlite3_mprintf("Macro '%s' argument '%.*s' is unknown type '%.*s'. "
					  "Allowed types: %s",
					  d->mac->name, (int)name_len, name, (int)type_len, type,
					  k_allowed);
		*d->err_at = type;
		*d->err_len = type_len;
		return -EINVAL;
	}
	if (d->mac->n_args == MACRO_MAX_ARGS) {
		*d->err = sqlite3_mprintf("Macro '%s': more than %d arguments", d->mac->name,
					  MACRO_MAX_ARGS);
		*d->err_at = name;
		*d->err_len = name_len;
		return -EINVAL;
	}
	d->mac->args[d->mac->n_args] = strndup(name, name_len);
	if (!d->mac->args[d->mac->n_args])
		return -ENOMEM;
	d->mac->n_args++;
	return 0;
}

int psql_macro_define(struct psql_macros *m, const struct psql_macro_def *def, char **err,
		      const char **err_at, size_t *err_len)
{
	struct define_ctx d = {.err = err, .err_at = err_at, .err_len = err_len};
	struct macro **old;
	int rc;

	d.mac = calloc(1, sizeof(*d.mac));
	if (!d.mac)
		return -ENOMEM;
	d.mac->name = strndup(def->name, def->name_len);
	d.mac->body = strndup(def->body.text, def->body.len);
	d.mac->src_name = strdup(def->body.name);
	if (!d.mac->name || !d.mac->body || !d.mac->src_name) {
		macro_free(d.mac);
		return -ENOMEM;
	}
	d.mac->src = def->body;
	d.mac->src.text = d.mac->body;
	d.mac->src.name = d.mac->src_name;
	d.mac->src.header = false;
	*err_at = NULL;
	{
		struct psql_tok bad;

		rc = psql_arg_list(def->args, def->args_end, add_arg, &d, err, &bad);
		if (rc < 0 && !*err) {
			/* A syntax error: no message, the token where. */
			*err_at = bad.p;
			*err_len = bad.n;
		}
	}
	if (rc == 0 && !psql_type_known(def->ret, def->ret_len, true)) {
		*err = sqlite3_mprintf("Macro %s return type %.*s is unknown. Allowed types: %s",
				       d.mac->name, (int)def->ret_len, def->ret, k_allowed);
		*err_at = def->ret;
		*err_len = def->ret_len;
		rc = -EINVAL;
	}
	old = rc == 0 ? find(m, def->name, def->name_len) : NULL;
	if (old && !def->replace) {
		*err = sqlite3_mprintf("Macro already exists");
		*err_at = def->name;
		*err_len = def->name_len;
		rc = -EINVAL;
	}
	if (rc < 0) {
		macro_free(d.mac);
		return rc;
	}
	if (old) {
		d.mac->next = (*old)->next;
		macro_free(*old);
		*old = d.mac;
	} else {
		d.mac->next = m->head;
		m->head = d.mac;
	}
	return 0;
}

/* ------------------------------------------------------------- expansion ---- */

/* A macro call found in a text: its name, '!', and argument ranges. */
struct call {
	size_t start, bang, end; /* offsets: the name, the '!', past the ')' */
	const char *name;
	size_t name_len;
	size_t n_args;
	size_t arg[MACRO_MAX_ARGS][2]; /* trimmed [start, end) offsets */
};

struct expander {
	struct psql_macros *m;
	struct psql_arena *a;
	const struct macro *chain[MACRO_MAX_DEPTH + 1];
	int depth;
	char **err;
	size_t *err_off;
	size_t total;
};

static int fail(struct expander *ex, size_t off, char *msg)
{
	if (!*ex->err) {
		*ex->err = msg;
		*ex->err_off = off;
	} else {
		sqlite3_free(msg);
	}
	return msg ? -EINVAL : -ENOMEM;
}

/*
 * If a macro call starts at token @t of @text (a name, then '!' and, past
 * blanks, '('), fills @c: its arguments split at commas outside
 * parentheses. Return: 1 if a call, 0 if not, -EINVAL if its ')' is
 * missing or it has too many arguments.
 */
static int parse_call(const char *text, size_t len, const struct psql_tok *t, struct call *c)
{
	const char *end = text + len, *p = t->p + t->n, *arg_start = NULL, *arg_end = NULL;
	struct psql_tok k;
	int depth = 0;

	if (t->type != TK_ID || p >= end || *p != '!')
		return 0;
	p = psql_lex_sig(p + 1, end, &k);
	if (k.type != TK_LP)
		return 0;
	c->start = (size_t)(t->p - text);
	c->bang = c->start + t->n;
	c->name = t->p;
	c->name_len = t->n;
	c->n_args = 0;
	for (;;) {
		p = psql_lex_sig(p, end, &k);
		if (k.type == TK_EOF)
			return -EINVAL;
		if (depth == 0 && (k.type == TK_COMMA || k.type == TK_RP)) {
			if (arg_start) {
				if (c->n_args == MACRO_MAX_ARGS)
					return -EINVAL;
				c->arg[c->n_args][0] = (size_t)(arg_start - text);
				c->arg[c->n_args][1] = (size_t)(arg_end - text);
				c->n_args++;
			} else if (k.type == TK_COMMA || c->n_args > 0) {
				/* An empty argument: "m!(a, )" or "m!(, a)". */
				if (c->n_args == MACRO_MAX_ARGS)
					return -EINVAL;
				c->arg[c->n_args][0] = c->arg[c->n_args][1] =
					(size_t)(k.p - text);
				c->n_args++;
			}
			arg_start = NULL;
			if (k.type == TK_RP) {
				c->end = (size_t)(p - text);
				return 1;
			}
			continue;
		}
		if (k.type == TK_LP)
			depth++;
		else if (k.type == TK_RP)
			depth--;
		if (!arg_start)
			arg_start = k.p;
		arg_end = k.p + k.n;
	}
}

/* Splits "(a, (b, c), d)" at its outer commas (Perfetto's SplitParenList). */
static bool split_list(const char *p, const char *end, const char *out[][2], size_t *n)
{
	const char *seg = NULL, *seg_end = NULL;
	struct psql_tok t;
	int depth = 0;

	*n = 0;
	p = psql_lex_sig(p, end, &t);
	if (t.type != TK_LP)
		return false;
	for (;;) {
		p = psql_lex_sig(p, end, &t);
		if (t.type == TK_EOF)
			return false;
		if (t.type == TK_RP && depth == 0) {
			if (seg) {
				if (*n == MACRO_MAX_ARGS)
					return false;
				out[*n][0] = seg;
				out[*n][1] = seg_end;
				(*n)++;
			}
			psql_lex_sig(p, end, &t);
			return t.type == TK_EOF;
		}
		if (t.type == TK_COMMA && depth == 0) {
			if (!seg || *n == MACRO_MAX_ARGS)
				return false;
			out[*n][0] = seg;
			out[*n][1] = seg_end;
			(*n)++;
			seg = NULL;
			continue;
		}
		if (t.type == TK_LP)
			depth++;
		else if (t.type == TK_RP)
			depth--;
		if (!seg)
			seg = t.p;
		seg_end = t.p + t.n;
	}
}

/*
 * The text of an intrinsic's expansion, or NULL with *@failed set if it is
 * malformed, or NULL with *@failed clear if @c is no intrinsic.
 */
static char *intrinsic(const char *text, const struct call *c, bool *failed)
{
	static const struct {
		const char *name;
		const char *joiner;
		bool prefix;
	} k_apply[] = {
		{"__intrinsic_token_apply", ", ", false},
		{"__intrinsic_token_apply_prefix", ", ", true},
		{"__intrinsic_token_apply_and", " AND ", false},
		{"__intrinsic_token_apply_and_prefix", " AND ", true},
	};
	const char *xs[MACRO_MAX_ARGS][2], *ys[MACRO_MAX_ARGS][2];
	size_t nx = 0, ny = 0, n, i, k;
	sqlite3_str *s;
	char *res;

	*failed = false;
	if ((c->name_len == 21 && strncmp(c->name, "__intrinsic_stringify", 21) == 0) ||
	    (c->name_len == 34 && strncmp(c->name, "__intrinsic_stringify_ignore_table", 34) == 0)) {
		if (c->n_args != 1) {
			*failed = true;
			return NULL;
		}
		return sqlite3_mprintf("'%.*s'", (int)(c->arg[0][1] - c->arg[0][0]),
				       text + c->arg[0][0]);
	}
	for (k = 0; k < sizeof(k_apply) / sizeof(k_apply[0]); k++)
		if (strlen(k_apply[k].name) == c->name_len &&
		    strncmp(k_apply[k].name, c->name, c->name_len) == 0)
			break;
	if (k == sizeof(k_apply) / sizeof(k_apply[0]))
		return NULL;
	if ((c->n_args != 2 && c->n_args != 3) ||
	    !split_list(text + c->arg[1][0], text + c->arg[1][1], xs, &nx) ||
	    (c->n_args == 3 && !split_list(text + c->arg[2][0], text + c->arg[2][1], ys, &ny))) {
		*failed = true;
		return NULL;
	}
	n = c->n_args == 3 ? (nx < ny ? nx : ny) : nx;
	s = sqlite3_str_new(NULL);
	for (i = 0; i < n; i++) {
		if (i > 0 || k_apply[k].prefix)
			sqlite3_str_appendall(s, k_apply[k].joiner);
		sqlite3_str_appendf(s, "%.*s!(%.*s", (int)(c->arg[0][1] - c->arg[0][0]),
				    text + c->arg[0][0], (int)(xs[i][1] - xs[i][0]), xs[i][0]);
		if (c->n_args == 3)
			sqlite3_str_appendf(s, ", %.*s", (int)(ys[i][1] - ys[i][0]), ys[i][0]);
		sqlite3_str_appendchar(s, 1, ')');
	}
	res = sqlite3_str_finish(s);
	/* An empty result is an empty string, not NULL. */
	return res ? res : sqlite3_mprintf("%s", "");
}

static int expand_layer(struct expander *ex, const struct psql_layer *in, struct psql_layer *out);

/* The origin of the call @c in @in, as the parent of its expansion. */
static const struct psql_org *call_org(struct expander *ex, const struct psql_layer *in,
				       const struct call *c)
{
	const struct psql_org *o;
	struct psql_org *co;
	size_t at;

	o = psql_layer_org(in, c->start, &at);
	if (!o)
		return NULL;
	co = psql_alloc(ex->a, sizeof(*co));
	if (!co)
		return NULL;
	co->src = o->src;
	co->off = at;
	co->len = c->end - c->start;
	co->up = o->up;
	return co;
}

/*
 * Appends expanded argument @arg to @l, what was written as the argument
 * itself re-parented under @up (Perfetto's frame of an argument: where
 * it was written, under the macro body's $name).
 */
static void add_arg_text(struct expander *ex, struct psql_layer *l, const struct psql_layer *arg,
			 const struct psql_org *up)
{
	size_t i;

	for (i = 0; i < arg->n_segs; i++) {
		const struct psql_seg *sg = &arg->segs[i];
		const struct psql_org *o = sg->org;
		struct psql_src *src = NULL;
		struct psql_org *ao = NULL;

		if (o && !o->up) {
			src = psql_alloc(ex->a, sizeof(*src));
			ao = src ? psql_alloc(ex->a, sizeof(*ao)) : NULL;
		}
		if (ao) {
			psql_src_sub(o->src, o->off + sg->skip, sg->len, src);
			src->header = false;
			ao->src = src;
			ao->off = 0;
			ao->len = 0;
			ao->up = up;
			psql_layer_add(l, arg->text + sg->start, sg->len, ao);
		} else {
			psql_layer_add_at(l, arg->text + sg->start, sg->len, o, sg->skip);
		}
	}
	if (arg->n_segs == 0 && arg->len)
		psql_layer_add(l, arg->text, arg->len, NULL);
}

/* The expansion of user macro @mac for call @c of @in, into @l; its
 * arguments are expanded first, where they were written. */
static int substitute(struct expander *ex, const struct macro *mac, const struct psql_layer *in,
		      const struct call *c, const struct psql_org *up, struct psql_layer *l)
{
	const char *p = mac->body, *end = mac->body + strlen(mac->body), *q;
	struct psql_org *body = psql_alloc(ex->a, sizeof(*body));
	struct psql_layer args[MACRO_MAX_ARGS];
	struct psql_tok t;
	size_t i, n = 0;
	int rc = 0;

	if (!body)
		return -ENOMEM;
	memset(args, 0, sizeof(args[0]) * c->n_args);
	for (n = 0; n < c->n_args && rc == 0; n++) {
		struct psql_layer raw = {0};

		psql_layer_copy(&raw, in, c->arg[n][0], c->arg[n][1] - c->arg[n][0]);
		rc = raw.oom ? -ENOMEM : expand_layer(ex, &raw, &args[n]);
		psql_layer_fini(&raw);
	}
	body->src = &mac->src;
	body->off = 0;
	body->len = 0;
	body->up = up;
	while (rc == 0 && (q = psql_lex(p, end, &t), t.type != TK_EOF)) {
		for (i = 0; t.type == TK_VAR && *t.p == '$' && i < mac->n_args; i++)
			if (strlen(mac->args[i]) == t.n - 1 &&
			    strncmp(mac->args[i], t.p + 1, t.n - 1) == 0)
				break;
		if (t.type == TK_VAR && *t.p == '$' && i < mac->n_args) {
			struct psql_org *param = psql_alloc(ex->a, sizeof(*param));

			if (!param) {
				rc = -ENOMEM;
				break;
			}
			param->src = &mac->src;
			param->off = (size_t)(t.p - mac->body);
			param->len = t.n;
			param->up = up;
			add_arg_text(ex, l, &args[i], param);
		} else {
			psql_layer_add_at(l, t.p, t.n, body, (size_t)(t.p - mac->body));
		}
		if (l->oom)
			rc = -ENOMEM;
		p = q;
	}
	for (i = 0; i < n; i++)
		psql_layer_fini(&args[i]);
	return rc;
}

/* Expands call @c of @in into @out. */
static int expand_call(struct expander *ex, const struct psql_layer *in, const struct call *c,
		       struct psql_layer *out)
{
	struct psql_layer l = {0};
	const struct psql_org *up = call_org(ex, in, c);
	const struct macro *mac = NULL;
	bool failed;
	char *text;
	int rc = 0, k;

	text = intrinsic(in->text, c, &failed);
	if (failed)
		return fail(ex, c->bang, sqlite3_mprintf("syntax error near '!'"));
	if (text) {
		struct psql_src *src = psql_alloc(ex->a, sizeof(*src));
		struct psql_org *o = psql_alloc(ex->a, sizeof(*o));
		char *name = psql_alloc(ex->a, c->name_len + 10);
		char *copy = psql_strndup(ex->a, text, strlen(text));

		sqlite3_free(text);
		if (!src || !o || !name || !copy)
			return -ENOMEM;
		memcpy(name, "Macro \"", 7);
		memcpy(name + 7, c->name, c->name_len);
		memcpy(name + 7 + c->name_len, "\"", 2);
		src->name = name;
		src->text = copy;
		src->len = strlen(copy);
		src->line = 1;
		src->col = 1;
		src->header = false;
		o->src = src;
		o->off = 0;
		o->len = 0;
		o->up = up;
		psql_layer_add(&l, copy, src->len, o);
	} else {
		struct macro **mp = find(ex->m, c->name, c->name_len);

		if (!mp)
			return fail(ex, SIZE_MAX,
				    ex->depth ? sqlite3_mprintf("syntax error in macro expansion "
								"near '!'")
					      : sqlite3_mprintf("unknown macro '%.*s'",
								(int)c->name_len, c->name));
		mac = *mp;
		for (k = 0; k < ex->depth; k++)
			if (ex->chain[k] == mac)
				return fail(ex, SIZE_MAX,
					    sqlite3_mprintf("recursive macro expansion: '%s'",
							    mac->name));
		if (c->n_args != mac->n_args)
			return fail(ex, ex->depth ? SIZE_MAX : c->bang,
				    sqlite3_mprintf(ex->depth ? "syntax error in macro expansion "
								"near '!'"
							      : "syntax error near '!'"));
		rc = substitute(ex, mac, in, c, up, &l);
	}
	if (rc == 0 && ex->depth >= MACRO_MAX_DEPTH)
		rc = fail(ex, SIZE_MAX, sqlite3_mprintf("macro expansion depth limit exceeded (%d)",
							MACRO_MAX_DEPTH));
	if (rc == 0) {
		ex->chain[ex->depth++] = mac;
		rc = expand_layer(ex, &l, out);
		ex->depth--;
	}
	if (rc == 0 && l.oom)
		rc = -ENOMEM;
	psql_layer_fini(&l);
	return rc;
}

static int expand_layer(struct expander *ex, const struct psql_layer *in, struct psql_layer *out)
{
	const char *p = in->text, *end = in->text + in->len, *q;
	size_t copied = 0;
	struct psql_tok t;
	struct call c;
	int rc;

	while ((q = psql_lex(p, end, &t)), t.type != TK_EOF) {
		rc = parse_call(in->text, in->len, &t, &c);
		if (rc < 0)
			return fail(ex, SIZE_MAX,
				    ex->depth ? sqlite3_mprintf("syntax error in macro expansion "
								"near '!'")
					      : sqlite3_mprintf("unknown macro '%.*s'", (int)t.n,
								t.p));
		if (rc == 0) {
			p = q;
			continue;
		}
		psql_layer_copy(out, in, copied, c.start - copied);
		rc = expand_call(ex, in, &c, out);
		if (rc < 0)
			return rc;
		out->expanded = true;
		copied = c.end;
		p = in->text + c.end;
		if (out->oom)
			return -ENOMEM;
		if (out->len > MACRO_MAX_OUT)
			return fail(ex, SIZE_MAX, sqlite3_mprintf("macro expansion larger than %u "
								  "bytes",
								  MACRO_MAX_OUT));
	}
	psql_layer_copy(out, in, copied, in->len - copied);
	return out->oom ? -ENOMEM : 0;
}

bool psql_has_macro_call(const char *p, const char *end)
{
	struct psql_tok t, k;
	const char *q;

	while ((q = psql_lex(p, end, &t)), t.type != TK_EOF) {
		if (t.type == TK_ID && q < end && *q == '!') {
			psql_lex_sig(q + 1, end, &k);
			if (k.type == TK_LP)
				return true;
		}
		p = q;
	}
	return false;
}

int psql_macro_expand(struct psql_macros *m, struct psql_arena *a, const struct psql_layer *in,
		      struct psql_layer *out, char **err, size_t *err_off)
{
	struct expander ex = {.m = m, .a = a, .err = err, .err_off = err_off};

	*err = NULL;
	*err_off = SIZE_MAX;
	return expand_layer(&ex, in, out);
}

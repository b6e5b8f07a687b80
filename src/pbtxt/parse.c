// SPDX-License-Identifier: Apache-2.0
/*
 * parse.c - protobuf text format to binary. A small lexer feeds a recursive
 * descent parser that looks each field up in the protobuf-c descriptor and
 * encodes it straight away with the protozero writer (over a chunk chain,
 * so nested lengths are backfilled). Every error stops the parse and names
 * the message, the field and the line:column.
 */
#include "pbtxt/pbtxt_int.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protozero/protozero.h"

enum tok_kind { TOK_EOF, TOK_IDENT, TOK_NUMBER, TOK_STRING, TOK_PUNCT };

struct token {
	enum tok_kind kind;
	const char *text;
	size_t len;
	int line;
	int col;
};

struct parser {
	const char *p;
	const char *end;
	int line;
	int col;
	struct token tok;       /* lookahead */
	struct pz_chunks out;
	struct buf str;         /* scratch for decoded string literals */
	struct pbtxt_error *err;
	int depth;
	int rc;                 /* first error code, sticky */
};

static int fail_at(struct parser *ps, const struct token *t, const char *fmt, ...)
	PFC_PRINTF(3, 4);

static int fail_at(struct parser *ps, const struct token *t, const char *fmt, ...)
{
	char msg[400], *hint;
	va_list ap;

	if (ps->rc)
		return ps->rc;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ps->err->line = t->line;
	ps->err->col = t->col;
	/* The position goes right after the problem, before any suggestion. */
	hint = strstr(msg, "; did you mean");
	if (hint) {
		*hint = '\0';
		snprintf(ps->err->msg, sizeof(ps->err->msg), "%s at %d:%d; %s", msg, t->line, t->col,
			 hint + 2);
	} else {
		snprintf(ps->err->msg, sizeof(ps->err->msg), "%s at %d:%d", msg, t->line, t->col);
	}
	ps->rc = -EINVAL;
	return ps->rc;
}

/* Quotes a token for messages, shortened if long. */
static const char *tok_quote(const struct token *t, char *buf, size_t cap)
{
	if (t->kind == TOK_EOF)
		snprintf(buf, cap, "end of input");
	else
		snprintf(buf, cap, "'%.*s%s'", (int)(t->len > 40 ? 40 : t->len), t->text,
			 t->len > 40 ? "..." : "");
	return buf;
}

/* ------------------------------------------------------------- lexer ---- */

static void advance(struct parser *ps, size_t n)
{
	while (n-- && ps->p < ps->end) {
		if (*ps->p == '\n') {
			ps->line++;
			ps->col = 1;
		} else {
			ps->col++;
		}
		ps->p++;
	}
}

static bool is_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_ident_char(char c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9');
}

static void skip_space_and_comments(struct parser *ps)
{
	while (ps->p < ps->end) {
		char c = *ps->p;

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
			advance(ps, 1);
		} else if (c == '#') {
			while (ps->p < ps->end && *ps->p != '\n')
				advance(ps, 1);
		} else {
			break;
		}
	}
}

/* Reads the next token into ps->tok. */
static int lex(struct parser *ps)
{
	struct token *t = &ps->tok;
	const char *s;
	char c;

	skip_space_and_comments(ps);
	t->line = ps->line;
	t->col = ps->col;
	t->text = ps->p;
	t->len = 0;
	if (ps->p >= ps->end) {
		t->kind = TOK_EOF;
		return 0;
	}
	s = ps->p;
	c = *s;
	if (is_ident_start(c)) {
		while (s < ps->end && is_ident_char(*s))
			s++;
		t->kind = TOK_IDENT;
	} else if ((c >= '0' && c <= '9') ||
		   (c == '.' && s + 1 < ps->end && s[1] >= '0' && s[1] <= '9')) {
		bool hex = c == '0' && s + 1 < ps->end && (s[1] == 'x' || s[1] == 'X');

		s++;
		while (s < ps->end) {
			char d = *s;

			if (is_ident_char(d) || d == '.')
				s++;
			else if ((d == '+' || d == '-') && !hex && (s[-1] == 'e' || s[-1] == 'E'))
				s++;
			else
				break;
		}
		t->kind = TOK_NUMBER;
	} else if (c == '"' || c == '\'') {
		s++;
		while (s < ps->end && *s != c && *s != '\n') {
			if (*s == '\\' && s + 1 < ps->end)
				s++;
			s++;
		}
		if (s >= ps->end || *s != c) {
			t->kind = TOK_STRING;
			t->len = (size_t)(s - t->text);
			return fail_at(ps, t, "unterminated string");
		}
		s++;
		t->kind = TOK_STRING;
	} else if (c != '\0' && strchr(":{}<>[],;-", c)) {
		s++;
		t->kind = TOK_PUNCT;
	} else {
		t->kind = TOK_PUNCT;
		t->len = 1;
		/* NUL or a control/non-ASCII byte would garble the message. */
		if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f)
			return fail_at(ps, t, "unexpected byte 0x%02x", (unsigned char)c);
		return fail_at(ps, t, "unexpected character '%c'", c);
	}
	t->len = (size_t)(s - t->text);
	advance(ps, t->len);
	return 0;
}

static bool tok_is(const struct token *t, char punct)
{
	return t->kind == TOK_PUNCT && t->len == 1 && t->text[0] == punct;
}

static bool tok_is_word(const struct token *t, const char *w)
{
	return t->kind == TOK_IDENT && t->len == strlen(w) && memcmp(t->text, w, t->len) == 0;
}

/* ---------------------------------------------------- string literals ---- */

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int put_utf8(struct buf *b, uint32_t cp)
{
	uint8_t u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (uint8_t)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (uint8_t)(0xc0 | (cp >> 6));
		u[1] = (uint8_t)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (uint8_t)(0xe0 | (cp >> 12));
		u[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (uint8_t)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (uint8_t)(0xf0 | (cp >> 18));
		u[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (uint8_t)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return buf_append(b, u, n);
}

/* Decodes one quoted token (escapes included) and appends it to ps->str. */
static int decode_string(struct parser *ps, const struct token *t)
{
	const char *s = t->text + 1, *e = t->text + t->len - 1;
	int rc = 0;

	while (s < e && rc == 0) {
		char c = *s++;
		int v, k;

		if (c != '\\') {
			rc = buf_append_byte(&ps->str, (uint8_t)c);
			continue;
		}
		c = *s++;
		switch (c) {
		case 'n': rc = buf_append_byte(&ps->str, '\n'); break;
		case 't': rc = buf_append_byte(&ps->str, '\t'); break;
		case 'r': rc = buf_append_byte(&ps->str, '\r'); break;
		case 'a': rc = buf_append_byte(&ps->str, '\a'); break;
		case 'b': rc = buf_append_byte(&ps->str, '\b'); break;
		case 'f': rc = buf_append_byte(&ps->str, '\f'); break;
		case 'v': rc = buf_append_byte(&ps->str, '\v'); break;
		case '\\': case '\'': case '"': case '?':
			rc = buf_append_byte(&ps->str, (uint8_t)c);
			break;
		case 'x': case 'X':
			v = 0;
			for (k = 0; k < 2 && s < e && hex_digit(*s) >= 0; k++)
				v = v * 16 + hex_digit(*s++);
			if (k == 0)
				return fail_at(ps, t, "\\x escape without hex digits");
			rc = buf_append_byte(&ps->str, (uint8_t)v);
			break;
		case 'u': case 'U': {
			int want = c == 'u' ? 4 : 8;
			uint32_t cp = 0;

			for (k = 0; k < want; k++) {
				if (s >= e || hex_digit(*s) < 0)
					return fail_at(ps, t, "\\%c escape needs %d hex digits", c, want);
				cp = cp * 16 + (uint32_t)hex_digit(*s++);
			}
			if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
				return fail_at(ps, t, "invalid unicode code point in escape");
			rc = put_utf8(&ps->str, cp);
			break;
		}
		default:
			if (c >= '0' && c <= '7') {
				v = c - '0';
				for (k = 1; k < 3 && s < e && *s >= '0' && *s <= '7'; k++)
					v = v * 8 + (*s++ - '0');
				if (v > 255)
					return fail_at(ps, t, "octal escape out of range");
				rc = buf_append_byte(&ps->str, (uint8_t)v);
				break;
			}
			return fail_at(ps, t, "unknown escape '\\%c' in string", c);
		}
	}
	return rc;
}

/* ----------------------------------------------------------- numbers ---- */

/* Parses an unsigned integer literal: decimal, 0x hex or 0 octal. */
static int parse_uint_literal(const char *s, size_t len, uint64_t *out)
{
	unsigned base = 10;
	uint64_t v = 0;
	size_t i = 0;

	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
		if (len == 2)
			return -EINVAL;
	} else if (len >= 2 && s[0] == '0') {
		base = 8;
		i = 1;
	}
	for (; i < len; i++) {
		int d = hex_digit(s[i]);

		if (d < 0 || (unsigned)d >= base)
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)d) / base)
			return -ERANGE;
		v = v * base + (uint64_t)d;
	}
	*out = v;
	return 0;
}

/* A scalar as written: sign, and the token that followed it. */
struct scalar {
	bool negative;
	struct token t;
	struct token sign;      /* where the value starts, for messages */
};

static int read_scalar(struct parser *ps, struct scalar *sc)
{
	sc->negative = false;
	sc->sign = ps->tok;
	if (tok_is(&ps->tok, '-')) {
		sc->negative = true;
		if (lex(ps))
			return ps->rc;
	}
	sc->t = ps->tok;
	return 0;
}

/* ------------------------------------------------------------ fields ---- */

static const char *type_name(ProtobufCType t)
{
	static const char *const names[] = {
		[PROTOBUF_C_TYPE_INT32] = "int32",       [PROTOBUF_C_TYPE_SINT32] = "sint32",
		[PROTOBUF_C_TYPE_SFIXED32] = "sfixed32", [PROTOBUF_C_TYPE_INT64] = "int64",
		[PROTOBUF_C_TYPE_SINT64] = "sint64",     [PROTOBUF_C_TYPE_SFIXED64] = "sfixed64",
		[PROTOBUF_C_TYPE_UINT32] = "uint32",     [PROTOBUF_C_TYPE_FIXED32] = "fixed32",
		[PROTOBUF_C_TYPE_UINT64] = "uint64",     [PROTOBUF_C_TYPE_FIXED64] = "fixed64",
		[PROTOBUF_C_TYPE_FLOAT] = "float",       [PROTOBUF_C_TYPE_DOUBLE] = "double",
		[PROTOBUF_C_TYPE_BOOL] = "bool",         [PROTOBUF_C_TYPE_ENUM] = "enum",
		[PROTOBUF_C_TYPE_STRING] = "string",     [PROTOBUF_C_TYPE_BYTES] = "bytes",
		[PROTOBUF_C_TYPE_MESSAGE] = "message",
	};

	return (unsigned)t < PFC_ARRAY_SIZE(names) && names[t] ? names[t] : "?";
}

struct field_ctx {
	const ProtobufCMessageDescriptor *msg;
	const ProtobufCFieldDescriptor *f;
};

static int bad_value(struct parser *ps, const struct field_ctx *fc, const struct scalar *sc,
		     const char *what)
{
	char q[64], sq[68];

	/* A sign goes inside the quotes: '-5', not -'5'. */
	tok_quote(&sc->t, q, sizeof(q));
	if (sc->negative && q[0] == '\'')
		snprintf(sq, sizeof(sq), "'-%s", q + 1);
	else
		snprintf(sq, sizeof(sq), "%s%s", sc->negative ? "-" : "", q);
	return fail_at(ps, &sc->sign, "%s %s for %s field '%s' in %s", what, sq,
		       type_name(fc->f->type), fc->f->name, pbtxt_message_name(fc->msg));
}

static int integer_value(struct parser *ps, const struct field_ctx *fc, const struct scalar *sc,
			 int64_t min, uint64_t max, uint64_t *out_bits)
{
	uint64_t mag = 0;
	int rc;

	if (sc->t.kind != TOK_NUMBER)
		return bad_value(ps, fc, sc, "expected an integer, got");
	rc = parse_uint_literal(sc->t.text, sc->t.len, &mag);
	if (rc == -EINVAL)
		return bad_value(ps, fc, sc, "expected an integer, got");
	if (sc->negative) {
		if (min == 0 || rc == -ERANGE || mag > (uint64_t)-(min + 1) + 1)
			return bad_value(ps, fc, sc, "out of range value");
		*out_bits = (uint64_t)0 - mag;
		return 0;
	}
	if (rc == -ERANGE || mag > max)
		return bad_value(ps, fc, sc, "out of range value");
	*out_bits = mag;
	return 0;
}

static int float_value(struct parser *ps, const struct field_ctx *fc, const struct scalar *sc,
		       double *out)
{
	char tmp[128];
	size_t len = sc->t.len;
	char *end;
	double v;

	if (sc->t.kind == TOK_IDENT) {
		if (tok_is_word(&sc->t, "inf") || tok_is_word(&sc->t, "infinity") ||
		    tok_is_word(&sc->t, "Infinity"))
			v = INFINITY;
		else if (tok_is_word(&sc->t, "nan") || tok_is_word(&sc->t, "NaN"))
			v = NAN;
		else
			return bad_value(ps, fc, sc, "expected a number, got");
		*out = sc->negative ? -v : v;
		return 0;
	}
	if (sc->t.kind != TOK_NUMBER || len + 2 > sizeof(tmp))
		return bad_value(ps, fc, sc, "expected a number, got");
	/* A trailing f/F is allowed on float literals. */
	if (len > 1 && (sc->t.text[len - 1] == 'f' || sc->t.text[len - 1] == 'F') &&
	    !(sc->t.text[0] == '0' && (sc->t.text[1] == 'x' || sc->t.text[1] == 'X')))
		len--;
	tmp[0] = '-';
	memcpy(tmp + 1, sc->t.text, len);
	tmp[len + 1] = '\0';
	errno = 0;
	v = strtod(tmp + 1, &end);
	if (end != tmp + 1 + len)
		return bad_value(ps, fc, sc, "expected a number, got");
	if (errno == ERANGE && isinf(v))
		return bad_value(ps, fc, sc, "out of range value");
	/* Reject only what would round to infinity: the printer's shortest form
	 * of FLT_MAX, 3.4028235e+38, is a bit above FLT_MAX and must read back. */
	if (fc->f->type == PROTOBUF_C_TYPE_FLOAT && isfinite(v) && fabs(v) >= 0x1.ffffffp+127)
		return bad_value(ps, fc, sc, "out of range value");
	*out = sc->negative ? -v : v;
	return 0;
}

static int bool_value(struct parser *ps, const struct field_ctx *fc, const struct scalar *sc,
		      bool *out)
{
	static const char *const yes[] = {"true", "True", "t", "1"};
	static const char *const no[] = {"false", "False", "f", "0"};
	unsigned i;

	if (!sc->negative) {
		for (i = 0; i < PFC_ARRAY_SIZE(yes); i++) {
			if (sc->t.len == strlen(yes[i]) && memcmp(sc->t.text, yes[i], sc->t.len) == 0) {
				*out = true;
				return 0;
			}
			if (sc->t.len == strlen(no[i]) && memcmp(sc->t.text, no[i], sc->t.len) == 0) {
				*out = false;
				return 0;
			}
		}
	}
	return bad_value(ps, fc, sc, "expected true or false, got");
}

static int enum_value(struct parser *ps, const struct field_ctx *fc, const struct scalar *sc,
		      int32_t *out)
{
	const ProtobufCEnumDescriptor *ed = fc->f->descriptor;
	const ProtobufCEnumValue *ev;
	char name[128], q[64];
	uint64_t bits;

	if (sc->t.kind == TOK_NUMBER || sc->negative) {
		if (integer_value(ps, fc, sc, INT32_MIN, INT32_MAX, &bits))
			return ps->rc;
		ev = protobuf_c_enum_descriptor_get_value(ed, (int)(int32_t)bits);
		if (!ev)
			return fail_at(ps, &sc->sign, "%s%.*s is not a value of enum %s (field '%s' in %s)",
				       sc->negative ? "-" : "", (int)sc->t.len, sc->t.text,
				       pbtxt_enum_name(ed), fc->f->name, pbtxt_message_name(fc->msg));
		*out = ev->value;
		return 0;
	}
	if (sc->t.kind != TOK_IDENT || sc->t.len >= sizeof(name))
		return bad_value(ps, fc, sc, "expected an enum value name, got");
	memcpy(name, sc->t.text, sc->t.len);
	name[sc->t.len] = '\0';
	ev = protobuf_c_enum_descriptor_get_value_by_name(ed, name);
	if (!ev) {
		const char *hint = pbtxt_suggest_enum(ed, name, sc->t.len);

		if (hint)
			return fail_at(ps, &sc->t,
				       "unknown value %s for enum %s (field '%s' in %s); did you mean '%s'?",
				       tok_quote(&sc->t, q, sizeof(q)), pbtxt_enum_name(ed),
				       fc->f->name, pbtxt_message_name(fc->msg), hint);
		return fail_at(ps, &sc->t, "unknown value %s for enum %s (field '%s' in %s)",
			       tok_quote(&sc->t, q, sizeof(q)), pbtxt_enum_name(ed), fc->f->name,
			       pbtxt_message_name(fc->msg));
	}
	*out = ev->value;
	return 0;
}

/* Encodes one scalar; with @packed, without a tag (inside a packed record). */
static int write_scalar(struct parser *ps, struct pz_msg *m, const struct field_ctx *fc,
			const struct scalar *sc, bool packed)
{
	const ProtobufCFieldDescriptor *f = fc->f;
	uint32_t id = f->id;
	uint64_t bits = 0;
	double d = 0;
	int32_t ev = 0;
	bool b = false;
	uint8_t raw[8];

	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		if (integer_value(ps, fc, sc, INT32_MIN, INT32_MAX, &bits))
			return ps->rc;
		if (f->type == PROTOBUF_C_TYPE_SINT32)
			bits = pz_zigzag64((int64_t)bits);
		else if (f->type == PROTOBUF_C_TYPE_SFIXED32)
			bits &= 0xffffffffu;
		break;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		if (integer_value(ps, fc, sc, INT64_MIN, INT64_MAX, &bits))
			return ps->rc;
		if (f->type == PROTOBUF_C_TYPE_SINT64)
			bits = pz_zigzag64((int64_t)bits);
		break;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		if (integer_value(ps, fc, sc, 0, UINT32_MAX, &bits))
			return ps->rc;
		break;
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		if (integer_value(ps, fc, sc, 0, UINT64_MAX, &bits))
			return ps->rc;
		break;
	case PROTOBUF_C_TYPE_FLOAT:
	case PROTOBUF_C_TYPE_DOUBLE:
		if (float_value(ps, fc, sc, &d))
			return ps->rc;
		if (f->type == PROTOBUF_C_TYPE_FLOAT) {
			float x = (float)d;
			uint32_t u;

			memcpy(&u, &x, sizeof(u));
			bits = u;
		} else {
			memcpy(&bits, &d, sizeof(bits));
		}
		break;
	case PROTOBUF_C_TYPE_BOOL:
		if (bool_value(ps, fc, sc, &b))
			return ps->rc;
		bits = b;
		break;
	case PROTOBUF_C_TYPE_ENUM:
		if (enum_value(ps, fc, sc, &ev))
			return ps->rc;
		bits = (uint64_t)(int64_t)ev;
		break;
	default:
		return fail_at(ps, &sc->t, "internal: field '%s' is not a scalar", f->name);
	}

	switch (f->type) {
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_FLOAT:
		if (!packed) {
			pz_append_fixed32(m, id, (uint32_t)bits);
			return 0;
		}
		for (int i = 0; i < 4; i++)
			raw[i] = (uint8_t)(bits >> (8 * i));
		pz_append_raw(m, raw, 4);
		return 0;
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		if (!packed) {
			pz_append_fixed64(m, id, bits);
			return 0;
		}
		for (int i = 0; i < 8; i++)
			raw[i] = (uint8_t)(bits >> (8 * i));
		pz_append_raw(m, raw, 8);
		return 0;
	default:
		if (packed)
			pz_append_raw_varint(m, bits);
		else
			pz_append_varint(m, id, bits);
		return 0;
	}
}

/* One or more adjacent string literals, concatenated. */
static int write_string(struct parser *ps, struct pz_msg *m, const struct field_ctx *fc)
{
	char q[64];

	if (ps->tok.kind != TOK_STRING)
		return fail_at(ps, &ps->tok, "expected a string for %s field '%s' in %s, got %s",
			       type_name(fc->f->type), fc->f->name, pbtxt_message_name(fc->msg),
			       tok_quote(&ps->tok, q, sizeof(q)));
	buf_reset(&ps->str);
	while (ps->tok.kind == TOK_STRING) {
		if (decode_string(ps, &ps->tok) || lex(ps))
			return ps->rc ? ps->rc : -ENOMEM;
	}
	pz_append_bytes(m, fc->f->id, ps->str.data ? ps->str.data : (const uint8_t *)"",
			ps->str.len);
	return 0;
}

static int parse_fields(struct parser *ps, const ProtobufCMessageDescriptor *desc,
			struct pz_msg *m, char close);

static int parse_nested(struct parser *ps, struct pz_msg *m, const struct field_ctx *fc)
{
	struct pz_msg child;
	char close, q[64];

	if (tok_is(&ps->tok, '{'))
		close = '}';
	else if (tok_is(&ps->tok, '<'))
		close = '>';
	else
		return fail_at(ps, &ps->tok, "expected '{' after message field '%s' in %s, got %s",
			       fc->f->name, pbtxt_message_name(fc->msg),
			       tok_quote(&ps->tok, q, sizeof(q)));
	if (ps->depth >= PBTXT_MAX_DEPTH)
		return fail_at(ps, &ps->tok, "messages nested deeper than %d levels", PBTXT_MAX_DEPTH);
	if (lex(ps))
		return ps->rc;
	pz_begin_nested(m, fc->f->id, &child);
	ps->depth++;
	if (parse_fields(ps, fc->f->descriptor, &child, close))
		return ps->rc;
	ps->depth--;
	pz_end(&child);
	return 0;
}

/* One value of field @fc (not a list); writes it. */
static int parse_one_value(struct parser *ps, struct pz_msg *m, const struct field_ctx *fc,
			   bool packed)
{
	struct scalar sc;

	if (fc->f->type == PROTOBUF_C_TYPE_MESSAGE)
		return parse_nested(ps, m, fc);
	if (fc->f->type == PROTOBUF_C_TYPE_STRING || fc->f->type == PROTOBUF_C_TYPE_BYTES)
		return write_string(ps, m, fc);
	if (read_scalar(ps, &sc) || write_scalar(ps, m, fc, &sc, packed) || lex(ps))
		return ps->rc;
	return 0;
}

/* field: [v1, v2, ...] */
static int parse_list(struct parser *ps, struct pz_msg *m, const struct field_ctx *fc)
{
	bool packed = (fc->f->flags & PROTOBUF_C_FIELD_FLAG_PACKED) != 0;
	struct pz_msg rec;
	struct pz_msg *target = m;
	char q[64];

	if (fc->f->label != PROTOBUF_C_LABEL_REPEATED)
		return fail_at(ps, &ps->tok, "field '%s' in %s is not repeated; a [list] is not allowed",
			       fc->f->name, pbtxt_message_name(fc->msg));
	if (lex(ps))
		return ps->rc;
	if (packed && !tok_is(&ps->tok, ']')) {
		pz_begin_nested(m, fc->f->id, &rec);
		target = &rec;
	}
	while (!tok_is(&ps->tok, ']')) {
		if (parse_one_value(ps, target, fc, packed))
			return ps->rc;
		if (tok_is(&ps->tok, ',')) {
			/* As protoc: no trailing comma before ']'. */
			if (lex(ps) == 0 && tok_is(&ps->tok, ']'))
				return fail_at(ps, &ps->tok, "expected a value after ',' in list for field '%s'",
					       fc->f->name);
		} else if (!tok_is(&ps->tok, ']'))
			return fail_at(ps, &ps->tok, "expected ',' or ']' in list for field '%s', got %s",
				       fc->f->name, tok_quote(&ps->tok, q, sizeof(q)));
		if (ps->rc)
			return ps->rc;
	}
	if (target != m)
		pz_end(target);
	return lex(ps);
}

static int lookup_field(struct parser *ps, const ProtobufCMessageDescriptor *desc,
			const ProtobufCFieldDescriptor **out)
{
	const ProtobufCFieldDescriptor *f;
	char name[128], q[64];
	const char *hint;

	if (ps->tok.kind != TOK_IDENT) {
		if (tok_is(&ps->tok, '['))
			return fail_at(ps, &ps->tok, "extensions and Any ('[type]') are not supported in %s",
				       pbtxt_message_name(desc));
		return fail_at(ps, &ps->tok, "expected a field name in %s, got %s",
			       pbtxt_message_name(desc), tok_quote(&ps->tok, q, sizeof(q)));
	}
	if (ps->tok.len >= sizeof(name))
		return fail_at(ps, &ps->tok, "field name too long in %s", pbtxt_message_name(desc));
	memcpy(name, ps->tok.text, ps->tok.len);
	name[ps->tok.len] = '\0';
	f = protobuf_c_message_descriptor_get_field_by_name(desc, name);
	if (f) {
		*out = f;
		return 0;
	}
	hint = pbtxt_suggest_field(desc, name, ps->tok.len);
	if (hint)
		return fail_at(ps, &ps->tok, "unknown field '%s' in %s; did you mean '%s'?", name,
			       pbtxt_message_name(desc), hint);
	return fail_at(ps, &ps->tok, "unknown field '%s' in %s", name, pbtxt_message_name(desc));
}

/* Rejects a second value for a singular field or for another member of its oneof. */
static int check_once(struct parser *ps, const ProtobufCMessageDescriptor *desc,
		      const ProtobufCFieldDescriptor *f, const struct token *at, uint8_t *seen)
{
	unsigned idx = (unsigned)(f - desc->fields), i;

	if (f->label == PROTOBUF_C_LABEL_REPEATED)
		return 0;
	if (seen[idx])
		return fail_at(ps, at, "field '%s' in %s is set more than once", f->name,
			       pbtxt_message_name(desc));
	if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
		for (i = 0; i < desc->n_fields; i++) {
			const ProtobufCFieldDescriptor *o = &desc->fields[i];

			if (seen[i] && (o->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
			    o->quantifier_offset == f->quantifier_offset)
				return fail_at(ps, at, "field '%s' in %s is set along with '%s' of the same oneof",
					       f->name, pbtxt_message_name(desc), o->name);
		}
	}
	seen[idx] = 1;
	return 0;
}

static int parse_fields(struct parser *ps, const ProtobufCMessageDescriptor *desc,
			struct pz_msg *m, char close)
{
	uint8_t *seen = calloc(desc->n_fields ? desc->n_fields : 1, 1);
	char q[64];

	if (!seen)
		return ps->rc = -ENOMEM;
	while (!ps->rc) {
		const ProtobufCFieldDescriptor *f = NULL;
		struct field_ctx fc;
		struct token name_tok;
		bool colon = false;

		if (ps->tok.kind == TOK_EOF) {
			if (close)
				fail_at(ps, &ps->tok, "missing '%c' at the end of %s", close,
					pbtxt_message_name(desc));
			break;
		}
		if (close && tok_is(&ps->tok, close)) {
			lex(ps);
			break;
		}
		name_tok = ps->tok;
		if (lookup_field(ps, desc, &f) || check_once(ps, desc, f, &name_tok, seen) || lex(ps))
			break;
		fc.msg = desc;
		fc.f = f;
		if (tok_is(&ps->tok, ':')) {
			colon = true;
			if (lex(ps))
				break;
		}
		if (f->type != PROTOBUF_C_TYPE_MESSAGE && !colon) {
			fail_at(ps, &ps->tok, "expected ':' after field '%s' in %s, got %s", f->name,
				pbtxt_message_name(desc), tok_quote(&ps->tok, q, sizeof(q)));
			break;
		}
		if (tok_is(&ps->tok, '[')) {
			if (parse_list(ps, m, &fc))
				break;
		} else if (parse_one_value(ps, m, &fc, false)) {
			break;
		}
		if (tok_is(&ps->tok, ',') || tok_is(&ps->tok, ';'))
			lex(ps);
		if (!pz_stream_ok(&ps->out.s)) {
			ps->rc = ps->out.s.err == -ENOMEM ? -ENOMEM : -EFBIG;
			snprintf(ps->err->msg, sizeof(ps->err->msg),
				 "encoded message larger than %u bytes", PBTXT_MAX_OUTPUT_BYTES);
		}
	}
	free(seen);
	return ps->rc;
}

int pbtxt_parse(const ProtobufCMessageDescriptor *desc, const char *text, size_t len,
		struct buf *out, struct pbtxt_error *err)
{
	struct parser ps;
	struct pz_msg root;
	size_t n;
	int rc;

	memset(&ps, 0, sizeof(ps));
	memset(err, 0, sizeof(*err));
	if (!text)
		text = "";
	ps.p = text;
	ps.end = text + len;
	ps.line = 1;
	ps.col = 1;
	ps.err = err;
	buf_init(&ps.str);
	rc = pz_chunks_init(&ps.out, 4096, PBTXT_MAX_OUTPUT_BYTES);
	if (rc < 0)
		return rc;
	pz_msg_begin(&root, &ps.out.s, NULL);
	if (lex(&ps) == 0)
		parse_fields(&ps, desc, &root, 0);
	/* After an error, open children may point at unwound stack frames. */
	if (ps.rc == 0)
		pz_end(&root);
	rc = ps.rc;
	if (rc == 0) {
		n = pz_chunks_size(&ps.out);
		rc = buf_reserve(out, n);
		if (rc == 0 && n) {
			pz_chunks_copy(&ps.out, out->data + out->len, n);
			out->len += n;
		}
	}
	pz_chunks_fini(&ps.out);
	buf_fini(&ps.str);
	return rc;
}

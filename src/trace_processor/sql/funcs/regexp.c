// SPDX-License-Identifier: Apache-2.0
/*
 * regexp.c - Perfetto's regular expression functions (funcs_int.h), each
 * under its name and its __intrinsic_ one, with upstream's semantics and
 * messages:
 *   regexp(pattern, text) (also SQLite's "text REGEXP pattern"): 1 if the
 *     pattern matches anywhere in the text;
 *   regexp(pattern, text, flags): 'i' case-insensitive, 'c' sensitive, the
 *     last one wins;
 *   regexp_extract(text, pattern): the pattern's one group where it
 *     matched, else the whole match; NULL without a match; two groups are
 *     an error;
 *   regexp_replace_simple(text, pattern, replacement): every match
 *     replaced, \0..\9 in the replacement naming groups, an empty match
 *     not allowed right where the previous match ended (RE2's rules).
 * Upstream's Linux build matches with RE2; we compile with PCRE2, whose
 * syntax is a superset of RE2's (Perl classes \d \w \s, non-greedy
 * quantifiers, ...). A compiled pattern is kept per statement as SQLite's
 * aux data. NULL in, NULL out.
 */
#define PCRE2_CODE_UNIT_WIDTH 8

#include <pcre2.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/sql/funcs/funcs_int.h"

/* Longest text whose replacement is built (the result must fit SQLite). */
#define REGEXP_MAX_OUT (256u << 20)

struct re {
	pcre2_code *code;
	pcre2_match_data *md;
	bool caseless;
	char *pattern;
};

static void re_free(void *p)
{
	struct re *r = p;

	if (!r)
		return;
	pcre2_match_data_free(r->md);
	pcre2_code_free(r->code);
	free(r->pattern);
	free(r);
}

/* The compiled @pattern for argument @arg of the call, cached. NULL: the
 * error is set (or out of memory). */
static struct re *get_re(sqlite3_context *ctx, int arg, const char *pattern, bool caseless)
{
	struct re *r = sqlite3_get_auxdata(ctx, arg);
	PCRE2_SIZE err_off;
	int err;

	if (r && r->caseless == caseless && strcmp(r->pattern, pattern) == 0)
		return r;
	r = calloc(1, sizeof(*r));
	if (!r) {
		sqlite3_result_error_nomem(ctx);
		return NULL;
	}
	r->caseless = caseless;
	r->pattern = strdup(pattern);
	r->code = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
				caseless ? PCRE2_CASELESS : 0, &err, &err_off, NULL);
	if (!r->code) {
		PCRE2_UCHAR why[200];
		char *msg;

		pcre2_get_error_message(err, why, sizeof(why));
		msg = sqlite3_mprintf("RE2 compile error: %s: %s", (const char *)why, pattern);
		sqlite3_result_error(ctx, msg ? msg : "out of memory", -1);
		sqlite3_free(msg);
		re_free(r);
		return NULL;
	}
	pcre2_jit_compile(r->code, PCRE2_JIT_COMPLETE);
	r->md = pcre2_match_data_create_from_pattern(r->code, NULL);
	if (!r->pattern || !r->md) {
		re_free(r);
		sqlite3_result_error_nomem(ctx);
		return NULL;
	}
	sqlite3_set_auxdata(ctx, arg, r, re_free);
	/* SQLite may have freed it already if it cannot keep it: ask again. */
	r = sqlite3_get_auxdata(ctx, arg);
	if (!r)
		sqlite3_result_error_nomem(ctx);
	return r;
}

/* Matches @r in [@s, @s + @n) from @start. Return: groups + 1, or <= 0. */
static int match(struct re *r, const char *s, size_t n, size_t start)
{
	return pcre2_match(r->code, (PCRE2_SPTR)s, n, start, 0, r->md, NULL);
}

static void do_regexp(sqlite3_context *ctx, sqlite3_value **argv, bool caseless)
{
	const char *pattern = (const char *)sqlite3_value_text(argv[0]);
	const char *text = (const char *)sqlite3_value_text(argv[1]);
	struct re *r;

	if (!pattern || !text)
		return;
	r = get_re(ctx, 0, pattern, caseless);
	if (r)
		sqlite3_result_int(ctx,
				   match(r, text, (size_t)sqlite3_value_bytes(argv[1]), 0) >= 0);
}

static void fn_regexp(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	do_regexp(ctx, argv, false);
}

static void fn_regexp_flags(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *flags = (const char *)sqlite3_value_text(argv[2]), *c;
	bool caseless = false;

	(void)argc;
	if (!flags || !sqlite3_value_text(argv[0]) || !sqlite3_value_text(argv[1]))
		return;
	for (c = flags; *c; c++) {
		if (*c == 'i') {
			caseless = true;
		} else if (*c == 'c') {
			caseless = false;
		} else {
			char *msg = sqlite3_mprintf("regexp: unknown flag '%c'", *c);

			sqlite3_result_error(ctx, msg ? msg : "out of memory", -1);
			sqlite3_free(msg);
			return;
		}
	}
	do_regexp(ctx, argv, caseless);
}

static void fn_regexp_extract(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *text = (const char *)sqlite3_value_text(argv[0]);
	const char *pattern = (const char *)sqlite3_value_text(argv[1]);
	PCRE2_SIZE *ov;
	struct re *r;
	uint32_t groups;
	int rc, g;

	(void)argc;
	if (!text || !pattern)
		return;
	r = get_re(ctx, 1, pattern, false);
	if (!r)
		return;
	rc = match(r, text, (size_t)sqlite3_value_bytes(argv[0]), 0);
	if (rc < 0)
		return;
	pcre2_pattern_info(r->code, PCRE2_INFO_CAPTURECOUNT, &groups);
	if (groups > 1) {
		sqlite3_result_error(ctx, "REGEXP_EXTRACT: pattern has more than one group.", -1);
		return;
	}
	ov = pcre2_get_ovector_pointer(r->md);
	/* The group if it matched something, else the whole match. */
	g = groups == 1 && rc > 1 && ov[2] != PCRE2_UNSET && ov[3] > ov[2] ? 1 : 0;
	sqlite3_result_text(ctx, text + ov[2 * g], (int)(ov[2 * g + 1] - ov[2 * g]),
			    SQLITE_TRANSIENT);
}

/* Appends @rw to @out, \N naming group N of the match (RE2's Rewrite). */
static void rewrite(sqlite3_str *out, const char *rw, const char *text, const PCRE2_SIZE *ov,
		    int n_groups)
{
	const char *p;

	for (p = rw; *p; p++) {
		if (*p != '\\' || !p[1]) {
			sqlite3_str_appendchar(out, 1, *p);
			continue;
		}
		p++;
		if (*p >= '0' && *p <= '9') {
			int g = *p - '0';

			if (g < n_groups && ov[2 * g] != PCRE2_UNSET)
				sqlite3_str_append(out, text + ov[2 * g], (int)(ov[2 * g + 1] - ov[2 * g]));
		} else {
			sqlite3_str_appendchar(out, 1, *p);
		}
	}
}

/* The length of the UTF-8 character at @p (1 for a stray byte). */
static size_t char_len(const char *p, const char *end)
{
	unsigned char c = (unsigned char)*p;
	size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;

	return (size_t)(end - p) < n ? (size_t)(end - p) : n;
}

static void fn_regexp_replace(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *text = (const char *)sqlite3_value_text(argv[0]);
	const char *pattern = (const char *)sqlite3_value_text(argv[1]);
	const char *rw = (const char *)sqlite3_value_text(argv[2]);
	size_t len = (size_t)sqlite3_value_bytes(argv[0]), pos = 0, last_end = SIZE_MAX;
	sqlite3_str *out;
	struct re *r;
	char *res;
	int rc;

	(void)argc;
	if (!text || !pattern || !rw)
		return;
	r = get_re(ctx, 1, pattern, false);
	if (!r)
		return;
	out = sqlite3_str_new(NULL);
	while (pos <= len && (rc = match(r, text, len, pos)) >= 0) {
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(r->md);

		sqlite3_str_append(out, text + pos, (int)(ov[0] - pos));
		if (ov[0] == ov[1] && ov[0] == last_end) {
			/* No empty match where the last one ended: step one char. */
			size_t n = ov[0] < len ? char_len(text + ov[0], text + len) : 1;

			if (ov[0] < len)
				sqlite3_str_append(out, text + ov[0], (int)n);
			pos = ov[0] + n;
			continue;
		}
		rewrite(out, rw, text, ov, rc);
		pos = ov[1];
		last_end = pos;
		if ((size_t)sqlite3_str_length(out) > REGEXP_MAX_OUT)
			break;
	}
	if (pos < len)
		sqlite3_str_append(out, text + pos, (int)(len - pos));
	if ((size_t)sqlite3_str_length(out) > REGEXP_MAX_OUT) {
		sqlite3_free(sqlite3_str_finish(out));
		sqlite3_result_error_toobig(ctx);
		return;
	}
	rc = sqlite3_str_errcode(out);
	res = sqlite3_str_finish(out);
	if (rc != SQLITE_OK)
		sqlite3_result_error_nomem(ctx);
	else if (res)
		sqlite3_result_text(ctx, res, -1, sqlite3_free);
	else
		sqlite3_result_text(ctx, "", 0, SQLITE_STATIC); /* an empty result */
}

int tp_sql_add_regexp(struct sqlite3 *conn)
{
	static const struct {
		const char *name;
		int argc;
		void (*fn)(sqlite3_context *, int, sqlite3_value **);
	} k_fns[] = {
		{"regexp", 2, fn_regexp},
		{"__intrinsic_regexp", 2, fn_regexp},
		{"regexp", 3, fn_regexp_flags},
		{"__intrinsic_regexp_with_flags", 3, fn_regexp_flags},
		{"regexp_extract", 2, fn_regexp_extract},
		{"__intrinsic_regexp_extract", 2, fn_regexp_extract},
		{"regexp_replace_simple", 3, fn_regexp_replace},
		{"__intrinsic_regexp_replace_simple", 3, fn_regexp_replace},
	};
	size_t i;
	int rc = SQLITE_OK;

	for (i = 0; i < sizeof(k_fns) / sizeof(k_fns[0]) && rc == SQLITE_OK; i++)
		rc = sqlite3_create_function_v2(conn, k_fns[i].name, k_fns[i].argc,
						SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
						NULL, k_fns[i].fn, NULL, NULL, NULL);
	return rc;
}

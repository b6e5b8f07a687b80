// SPDX-License-Identifier: Apache-2.0
/*
 * base_test.c - unit tests for src/base: buffers and number parsing, hash
 * map, clocks, files, socket addresses and transports, the epoll event loop
 * and subprocess readiness. Needs no root and no network beyond loopback.
 */
#include "base/buf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* ------------------------------------------------------------------ buf --- */

TEST(buf_append_grows)
{
	struct buf b = BUF_INIT;
	size_t i;

	for (i = 0; i < 10000; i++)
		ASSERT_EQ(buf_append_byte(&b, (uint8_t)i), 0);
	ASSERT_EQ(b.len, 10000);
	ASSERT_GE(b.cap, 10000);
	for (i = 0; i < 10000; i++)
		ASSERT_EQ(b.data[i], (uint8_t)i);
	ASSERT_EQ(buf_append(&b, "abc", 3), 0);
	ASSERT_EQ(buf_append(&b, NULL, 0), 0);
	ASSERT_EQ(b.len, 10003);
	ASSERT_MEMEQ(b.data + 10000, "abc", 3);
	buf_fini(&b);
	ASSERT_TRUE(b.data == NULL);
	ASSERT_EQ(b.len, 0);
	buf_fini(NULL);
}

TEST(buf_appendf_and_cstr)
{
	struct buf b;
	char big[1000];

	buf_init(&b);
	ASSERT_EQ(buf_appendf(&b, "%s", ""), 0);
	ASSERT_EQ(b.len, 0);
	ASSERT_EQ(b.data[0], '\0');
	ASSERT_EQ(buf_appendf(&b, "x=%d", 42), 0);
	ASSERT_EQ(buf_append_str(&b, ",y"), 0);
	ASSERT_STREQ(buf_cstr(&b), "x=42,y");
	ASSERT_EQ(b.len, 6);
	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	/* Longer than the remaining capacity: must grow and retry. */
	ASSERT_EQ(buf_appendf(&b, "[%s]", big), 0);
	ASSERT_EQ(b.len, 6 + 2 + 999);
	ASSERT_EQ(b.data[b.len], '\0');
	ASSERT_EQ(b.data[6], '[');
	ASSERT_EQ(b.data[b.len - 1], ']');
	ASSERT_EQ(strlen((const char *)b.data), b.len);
	buf_fini(&b);
}

TEST(buf_consume_reset_take)
{
	struct buf b = BUF_INIT;
	uint8_t *p;
	size_t n = 99;

	ASSERT_EQ(buf_append_str(&b, "hello world"), 0);
	buf_consume(&b, 6);
	ASSERT_EQ(b.len, 5);
	ASSERT_MEMEQ(b.data, "world", 5);
	buf_consume(&b, 0);
	ASSERT_EQ(b.len, 5);
	buf_consume(&b, 100);
	ASSERT_EQ(b.len, 0);
	ASSERT_EQ(buf_append_str(&b, "abc"), 0);
	buf_reset(&b);
	ASSERT_EQ(b.len, 0);
	ASSERT_EQ(buf_append_str(&b, "xyz"), 0);
	p = buf_take(&b, &n);
	ASSERT_TRUE(p != NULL);
	ASSERT_EQ(n, 3);
	ASSERT_MEMEQ(p, "xyz", 3);
	ASSERT_TRUE(b.data == NULL);
	ASSERT_EQ(b.len, 0);
	free(p);
	p = buf_take(&b, &n);
	ASSERT_TRUE(p != NULL);
	ASSERT_EQ(n, 0);
	free(p);
}

TEST(sv_helpers)
{
	struct strview head, rest, s = sv_from_cstr("key=value=x");
	char small[4], dst[32];

	ASSERT_EQ(s.len, 11);
	ASSERT_TRUE(sv_eq_cstr(s, "key=value=x"));
	ASSERT_FALSE(sv_eq_cstr(s, "key=value"));
	ASSERT_TRUE(sv_eq(sv_make("ab", 2), sv_make("abc", 2)));
	ASSERT_TRUE(sv_eq(sv_make(NULL, 0), sv_from_cstr("")));
	ASSERT_TRUE(sv_starts_with(s, "key"));
	ASSERT_TRUE(sv_starts_with(s, ""));
	ASSERT_FALSE(sv_starts_with(s, "value"));
	ASSERT_TRUE(sv_ends_with(s, "=x"));
	ASSERT_FALSE(sv_ends_with(sv_make("x", 1), "xx"));
	ASSERT_TRUE(sv_split(s, '=', &head, &rest));
	ASSERT_TRUE(sv_eq_cstr(head, "key"));
	ASSERT_TRUE(sv_eq_cstr(rest, "value=x"));
	ASSERT_FALSE(sv_split(sv_from_cstr("abc"), ':', &head, &rest));
	ASSERT_TRUE(sv_eq_cstr(head, "abc"));
	ASSERT_EQ(rest.len, 0);
	ASSERT_TRUE(sv_split(sv_from_cstr("abc:"), ':', &head, &rest));
	ASSERT_EQ(rest.len, 0);
	ASSERT_TRUE(sv_eq_cstr(sv_trim(sv_from_cstr(" \t a b \n")), "a b"));
	ASSERT_EQ(sv_trim(sv_from_cstr("  ")).len, 0);
	ASSERT_EQ(sv_to_cstr(sv_make("abcd", 4), small, sizeof(small)), -ENAMETOOLONG);
	ASSERT_EQ(sv_to_cstr(sv_make("abc", 3), small, sizeof(small)), 0);
	ASSERT_STREQ(small, "abc");
	ASSERT_EQ(sv_to_cstr(sv_make("abcdef", 2), dst, sizeof(dst)), 0);
	ASSERT_STREQ(dst, "ab");
}

static int parse_i64(const char *s, int64_t *out)
{
	return sv_parse_i64(sv_from_cstr(s), INT64_MIN, INT64_MAX, out);
}

static int parse_u64(const char *s, uint64_t *out)
{
	return sv_parse_u64(sv_from_cstr(s), UINT64_MAX, out);
}

TEST(sv_parse_i64_cases)
{
	int64_t v = 7;

	ASSERT_EQ(parse_i64("0", &v), 0);
	ASSERT_EQ(v, 0);
	ASSERT_EQ(parse_i64("-12", &v), 0);
	ASSERT_EQ(v, -12);
	ASSERT_EQ(parse_i64("+12", &v), 0);
	ASSERT_EQ(v, 12);
	ASSERT_EQ(parse_i64("0x1F", &v), 0);
	ASSERT_EQ(v, 31);
	ASSERT_EQ(parse_i64("-0x10", &v), 0);
	ASSERT_EQ(v, -16);
	ASSERT_EQ(parse_i64("9223372036854775807", &v), 0);
	ASSERT_EQ(v, INT64_MAX);
	ASSERT_EQ(parse_i64("-9223372036854775808", &v), 0);
	ASSERT_EQ(v, INT64_MIN);
	ASSERT_EQ(parse_i64("-0x8000000000000000", &v), 0);
	ASSERT_EQ(v, INT64_MIN);
	v = 7;
	ASSERT_EQ(parse_i64("9223372036854775808", &v), -ERANGE);
	ASSERT_EQ(parse_i64("-9223372036854775809", &v), -ERANGE);
	ASSERT_EQ(parse_i64("99999999999999999999999", &v), -ERANGE);
	ASSERT_EQ(parse_i64("0x8000000000000000", &v), -ERANGE);
	ASSERT_EQ(parse_i64("", &v), -EINVAL);
	ASSERT_EQ(parse_i64("-", &v), -EINVAL);
	ASSERT_EQ(parse_i64("+", &v), -EINVAL);
	ASSERT_EQ(parse_i64("0x", &v), -EINVAL);
	ASSERT_EQ(parse_i64("-0x", &v), -EINVAL);
	ASSERT_EQ(parse_i64(" 1", &v), -EINVAL);
	ASSERT_EQ(parse_i64("1 ", &v), -EINVAL);
	ASSERT_EQ(parse_i64("--1", &v), -EINVAL);
	ASSERT_EQ(parse_i64("12a", &v), -EINVAL);
	ASSERT_EQ(parse_i64("0xg", &v), -EINVAL);
	ASSERT_EQ(parse_i64("999999999999999999999x", &v), -EINVAL);
	ASSERT_EQ(sv_parse_i64(sv_make("123", 2), 0, 100, &v), 0);
	ASSERT_EQ(v, 12);
	ASSERT_EQ(sv_parse_i64(sv_from_cstr("101"), 0, 100, &v), -ERANGE);
	ASSERT_EQ(sv_parse_i64(sv_from_cstr("-1"), 0, 100, &v), -ERANGE);
	ASSERT_EQ(sv_parse_i64(sv_make(NULL, 0), 0, 100, &v), -EINVAL);
	/* Out-params are written only on success. */
	ASSERT_EQ(v, 12);
}

TEST(sv_parse_u64_cases)
{
	uint64_t v = 7;

	ASSERT_EQ(parse_u64("18446744073709551615", &v), 0);
	ASSERT_U64_EQ(v, UINT64_MAX);
	ASSERT_EQ(parse_u64("0xffffffffffffffff", &v), 0);
	ASSERT_U64_EQ(v, UINT64_MAX);
	ASSERT_EQ(parse_u64("0XABC", &v), 0);
	ASSERT_U64_EQ(v, 0xabc);
	ASSERT_EQ(parse_u64("007", &v), 0);
	ASSERT_U64_EQ(v, 7);
	v = 5;
	ASSERT_EQ(parse_u64("18446744073709551616", &v), -ERANGE);
	ASSERT_EQ(parse_u64("0x10000000000000000", &v), -ERANGE);
	ASSERT_EQ(parse_u64("-1", &v), -EINVAL);
	ASSERT_EQ(parse_u64("+1", &v), -EINVAL);
	ASSERT_EQ(parse_u64("0x", &v), -EINVAL);
	ASSERT_EQ(parse_u64(" 1", &v), -EINVAL);
	ASSERT_EQ(parse_u64("", &v), -EINVAL);
	ASSERT_EQ(sv_parse_u64(sv_from_cstr("65536"), 65535, &v), -ERANGE);
	ASSERT_U64_EQ(v, 5);
	ASSERT_EQ(sv_parse_u64(sv_from_cstr("65535"), 65535, &v), 0);
	ASSERT_U64_EQ(v, 65535);
}

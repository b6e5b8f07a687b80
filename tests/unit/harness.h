/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness.h - the tiny unit-test harness every tests/unit/<module>_test.c uses.
 * TEST(name) registers a test; the harness runs each one in a forked child
 * with a timeout, so a crash or hang fails that test only. A failed ASSERT
 * prints file:line and both values, then ends the child.
 */
#ifndef PFC_TESTS_HARNESS_H
#define PFC_TESTS_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef void (*harness_test_cb)(void);

void harness_register(const char *name, harness_test_cb fn);
void harness_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));
void harness_skip(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void harness_check_int(intmax_t a, intmax_t b, const char *op, const char *ea, const char *eb,
		       const char *file, int line);
void harness_check_str(const char *a, const char *b, const char *ea, const char *eb,
		       const char *file, int line);
void harness_check_mem(const void *a, const void *b, size_t n, const char *ea, const char *eb,
		       const char *file, int line);

/* A private directory for this test, created on first use and removed after
 * the test ends (whatever its outcome). */
const char *test_tmpdir(void);

#define TEST(name)                                                                   \
	static void test_##name(void);                                               \
	__attribute__((constructor)) static void test_register_##name(void)          \
	{                                                                            \
		harness_register(#name, test_##name);                                \
	}                                                                            \
	static void test_##name(void)

#define ASSERT_TRUE(x)                                                               \
	do {                                                                         \
		if (!(x))                                                            \
			harness_fail(__FILE__, __LINE__, "expected true: %s", #x);   \
	} while (0)
#define ASSERT_FALSE(x) ASSERT_TRUE(!(x))

#define ASSERT_OP_(a, op, b)                                                         \
	do {                                                                         \
		intmax_t a_ = (intmax_t)(a), b_ = (intmax_t)(b);                     \
		if (!(a_ op b_))                                                     \
			harness_check_int(a_, b_, #op, #a, #b, __FILE__, __LINE__);  \
	} while (0)
#define ASSERT_EQ(a, b) ASSERT_OP_(a, ==, b)
#define ASSERT_NE(a, b) ASSERT_OP_(a, !=, b)
#define ASSERT_LT(a, b) ASSERT_OP_(a, <, b)
#define ASSERT_LE(a, b) ASSERT_OP_(a, <=, b)
#define ASSERT_GT(a, b) ASSERT_OP_(a, >, b)
#define ASSERT_GE(a, b) ASSERT_OP_(a, >=, b)

/* 64-bit unsigned values compared exactly (ASSERT_EQ goes through intmax_t). */
#define ASSERT_U64_EQ(a, b)                                                          \
	do {                                                                         \
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                     \
		if (a_ != b_)                                                        \
			harness_fail(__FILE__, __LINE__, "%s == %s: 0x%llx vs 0x%llx", \
				     #a, #b, (unsigned long long)a_,                 \
				     (unsigned long long)b_);                        \
	} while (0)

#define ASSERT_STREQ(a, b) harness_check_str((a), (b), #a, #b, __FILE__, __LINE__)
#define ASSERT_MEMEQ(a, b, n) harness_check_mem((a), (b), (n), #a, #b, __FILE__, __LINE__)
#define FAIL(...) harness_fail(__FILE__, __LINE__, __VA_ARGS__)
#define SKIP(...) harness_skip(__VA_ARGS__)

#endif

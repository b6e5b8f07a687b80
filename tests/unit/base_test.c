// SPDX-License-Identifier: Apache-2.0
/*
 * base_test.c - unit tests for src/base: buffers and number parsing, hash
 * map, clocks, files, socket addresses and transports, the epoll event loop
 * and subprocess readiness. Needs no root and no network beyond loopback.
 */
#include "base/base64.h"
#include "base/bigmem.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/evloop.h"
#include "base/file.h"
#include "base/hash.h"
#include "base/hmap.h"
#include "base/sock.h"
#include "base/subproc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

/* ------------------------------------------------------------ hash/hmap --- */

TEST(hash_fnv1a64_known_values)
{
	ASSERT_U64_EQ(fnv1a64("", 0), 0xcbf29ce484222325ull);
	ASSERT_U64_EQ(fnv1a64("a", 1), 0xaf63dc4c8601ec8cull);
	ASSERT_U64_EQ(fnv1a64("foobar", 6), 0x85944171f73967e8ull);
	ASSERT_U64_EQ(fnv1a64_update(fnv1a64("foo", 3), "bar", 3), fnv1a64("foobar", 6));
	ASSERT_TRUE(hash_mix64(0) != hash_mix64(1));
	ASSERT_TRUE(hash_mix64(1) != 1);
	/* Neighbouring keys must land far apart (differ in many bits). */
	ASSERT_GE(__builtin_popcountll(hash_mix64(1000) ^ hash_mix64(1001)), 16);
}

TEST(hmap_basic)
{
	struct hmap m = HMAP_INIT;
	uint64_t v = 0;

	ASSERT_FALSE(hmap_get(&m, 1, &v));
	ASSERT_EQ(hmap_del(&m, 1, NULL), -ENOENT);
	ASSERT_EQ(hmap_put(&m, 1, 100), 1);
	ASSERT_EQ(hmap_put(&m, 0, 7), 1);
	ASSERT_EQ(hmap_put(&m, UINT64_MAX, 8), 1);
	ASSERT_EQ(hmap_put(&m, 1, 101), 0);
	ASSERT_EQ(hmap_len(&m), 3);
	ASSERT_TRUE(hmap_get(&m, 1, &v));
	ASSERT_U64_EQ(v, 101);
	ASSERT_TRUE(hmap_get(&m, UINT64_MAX, &v));
	ASSERT_U64_EQ(v, 8);
	ASSERT_TRUE(hmap_get(&m, 0, NULL));
	ASSERT_EQ(hmap_del(&m, 1, &v), 0);
	ASSERT_U64_EQ(v, 101);
	ASSERT_FALSE(hmap_get(&m, 1, NULL));
	ASSERT_EQ(hmap_len(&m), 2);
	hmap_clear(&m);
	ASSERT_EQ(hmap_len(&m), 0);
	ASSERT_FALSE(hmap_get(&m, 0, NULL));
	ASSERT_EQ(hmap_put(&m, 0, 9), 1);
	hmap_fini(&m);
	ASSERT_EQ(hmap_len(&m), 0);
	hmap_fini(NULL);
}

static uint64_t key_of(uint64_t i)
{
	return i * 0x9e3779b97f4a7c15ull + 12345;
}

TEST(hmap_100k_keys_delete_reinsert_iterate)
{
	const uint64_t n = 100000;
	struct hmap m;
	struct hmap_iter it;
	uint64_t i, k, v, count = 0, sum = 0, want_sum = 0;

	hmap_init(&m);
	for (i = 0; i < n; i++)
		ASSERT_EQ(hmap_put(&m, key_of(i), i), 1);
	ASSERT_EQ(hmap_len(&m), n);
	/* Load factor stays at or below 70%. */
	ASSERT_LE(hmap_len(&m) * 10, m.cap * 7);
	for (i = 0; i < n; i++) {
		ASSERT_TRUE(hmap_get(&m, key_of(i), &v));
		ASSERT_U64_EQ(v, i);
	}
	for (i = 0; i < n; i += 2)
		ASSERT_EQ(hmap_del(&m, key_of(i), NULL), 0);
	ASSERT_EQ(hmap_len(&m), n / 2);
	for (i = 0; i < n; i++)
		ASSERT_EQ(hmap_get(&m, key_of(i), NULL), i % 2 == 1);
	for (i = 0; i < n; i += 2)
		ASSERT_EQ(hmap_put(&m, key_of(i), i + n), 1);
	ASSERT_EQ(hmap_len(&m), n);
	for (i = 0; i < n; i++)
		want_sum += i % 2 ? i : i + n;
	hmap_iter_init(&it, &m);
	while (hmap_iter_next(&it, &k, &v)) {
		count++;
		sum += v;
	}
	ASSERT_U64_EQ(count, n);
	ASSERT_U64_EQ(sum, want_sum);
	hmap_fini(&m);
}

/* Random operations on a small key space, checked against a plain array. */
TEST(hmap_matches_reference_model)
{
	enum { KEYS = 512 };
	static uint64_t ref[KEYS];
	static bool present[KEYS];
	struct hmap m = HMAP_INIT;
	uint64_t v, seed = 42;
	size_t live = 0;
	int i, k;

	for (i = 0; i < 200000; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		k = (int)((seed >> 33) % KEYS);
		if ((seed >> 20) % 3 == 0) {
			ASSERT_EQ(hmap_del(&m, (uint64_t)k * 64, NULL), present[k] ? 0 : -ENOENT);
			live -= present[k];
			present[k] = false;
		} else {
			ASSERT_EQ(hmap_put(&m, (uint64_t)k * 64, seed), present[k] ? 0 : 1);
			live += !present[k];
			present[k] = true;
			ref[k] = seed;
		}
		ASSERT_EQ(hmap_len(&m), live);
	}
	for (k = 0; k < KEYS; k++) {
		ASSERT_EQ(hmap_get(&m, (uint64_t)k * 64, &v), present[k]);
		if (present[k])
			ASSERT_U64_EQ(v, ref[k]);
	}
	hmap_fini(&m);
}

TEST(hmap_iter_del_visits_each_once)
{
	static uint8_t seen[3000];
	struct hmap m = HMAP_INIT;
	struct hmap_iter it;
	uint64_t k, v;
	int i;

	for (i = 0; i < 3000; i++)
		ASSERT_EQ(hmap_put(&m, (uint64_t)i, (uint64_t)i * 2), 1);
	hmap_iter_init(&it, &m);
	ASSERT_EQ(hmap_iter_del(&it), -ENOENT);
	while (hmap_iter_next(&it, &k, &v)) {
		ASSERT_LT(k, 3000);
		ASSERT_U64_EQ(v, k * 2);
		seen[k]++;
		if (k % 3 == 0) {
			ASSERT_EQ(hmap_iter_del(&it), 0);
			ASSERT_EQ(hmap_iter_del(&it), -ENOENT);
		}
	}
	for (i = 0; i < 3000; i++) {
		ASSERT_EQ(seen[i], 1);
		ASSERT_EQ(hmap_get(&m, (uint64_t)i, NULL), i % 3 != 0);
	}
	ASSERT_EQ(hmap_len(&m), 2000);
	hmap_fini(&m);
}

/* ---------------------------------------------------------------- clock --- */

TEST(clock_monotonic_and_consistent)
{
	uint64_t prev = clock_monotonic_ns(), now, start, raw0, boot0;
	struct timespec ts = {0, 10 * 1000 * 1000};
	int i;

	for (i = 0; i < 10000; i++) {
		now = clock_monotonic_ns();
		ASSERT_GE(now, prev);
		prev = now;
	}
	start = clock_monotonic_ns();
	raw0 = clock_monotonic_raw_ns();
	boot0 = clock_boottime_ns();
	nanosleep(&ts, NULL);
	ASSERT_GE(clock_monotonic_ns() - start, 10 * NS_PER_MS);
	ASSERT_GE(clock_monotonic_raw_ns() - raw0, 9 * NS_PER_MS);
	ASSERT_GE(clock_boottime_ns() - boot0, 10 * NS_PER_MS);
	/* BOOTTIME includes suspend, so it never lags MONOTONIC. */
	ASSERT_GE(clock_boottime_ns(), clock_monotonic_ns() - NS_PER_MS);
	/* After 2020-01-01. */
	ASSERT_GT(clock_realtime_ns(), 1577836800ull * NS_PER_SEC);
	now = clock_get_ns(CLOCK_MONOTONIC);
	ASSERT_GE(now, start);
	ASSERT_LE(now, clock_monotonic_ns());
	ASSERT_EQ(clock_get_ns((clockid_t)12345), 0);
}

/* ----------------------------------------------------------------- file --- */

TEST(file_read_proc_self_stat)
{
	struct buf b = BUF_INIT;
	char want[32];
	int n;

	ASSERT_EQ(buf_append_str(&b, "prefix:"), 0);
	n = file_read_all("/proc/self/stat", &b, 1 << 20);
	ASSERT_GT(n, 10);
	ASSERT_EQ(b.len, 7 + (size_t)n);
	ASSERT_EQ(b.data[b.len], '\0');
	snprintf(want, sizeof(want), "prefix:%d (", (int)getpid());
	ASSERT_MEMEQ(b.data, want, strlen(want));
	buf_fini(&b);
}

static char *tmp_path(const char *name)
{
	static char path[4][512];
	static int next;
	char *p = path[next++ % 4];

	snprintf(p, sizeof(path[0]), "%s/%s", test_tmpdir(), name);
	return p;
}

TEST(file_read_limits_and_errors)
{
	struct buf b = BUF_INIT;
	static char data[10000];
	const char *path = tmp_path("f");
	int fd;

	memset(data, 'q', sizeof(data));
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(file_write_all(fd, data, sizeof(data)), 0);
	close(fd);
	ASSERT_EQ(buf_append_str(&b, "keep"), 0);
	ASSERT_EQ(file_read_all(path, &b, sizeof(data) - 1), -EFBIG);
	ASSERT_EQ(b.len, 4);
	ASSERT_MEMEQ(b.data, "keep", 4);
	ASSERT_EQ(file_read_all(path, &b, sizeof(data)), (int)sizeof(data));
	ASSERT_EQ(b.len, 4 + sizeof(data));
	ASSERT_MEMEQ(b.data + 4, data, sizeof(data));
	ASSERT_EQ(file_read_all(tmp_path("missing"), &b, 100), -ENOENT);
	ASSERT_EQ(b.len, 4 + sizeof(data));
	buf_fini(&b);
	ASSERT_EQ(file_read_all(path, &b, 0), -EFBIG);
	ASSERT_EQ(file_read_all("/dev/null", &b, 0), 0);
	ASSERT_EQ(b.len, 0);
	buf_fini(&b);
}

struct pipe_reader {
	int fd;
	size_t total;
};

static void *drain_pipe(void *arg)
{
	struct pipe_reader *r = arg;
	char tmp[4096];
	ssize_t n;

	while ((n = read(r->fd, tmp, sizeof(tmp))) > 0)
		r->total += (size_t)n;
	return NULL;
}

TEST(file_write_all_large_pipe_and_epipe)
{
	static char big[1 << 20];
	struct pipe_reader r = {-1, 0};
	pthread_t th;
	int p[2];

	ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
	r.fd = p[0];
	ASSERT_EQ(pthread_create(&th, NULL, drain_pipe, &r), 0);
	/* Much more than the pipe capacity: needs many partial writes. */
	ASSERT_EQ(file_write_all(p[1], big, sizeof(big)), 0);
	close(p[1]);
	pthread_join(th, NULL);
	ASSERT_EQ(r.total, sizeof(big));
	close(p[0]);
	ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
	close(p[0]);
	signal(SIGPIPE, SIG_IGN);
	ASSERT_EQ(file_write_all(p[1], "x", 1), -EPIPE);
	close(p[1]);
}

TEST(file_write_str_and_helpers)
{
	const char *path = tmp_path("ctl");
	struct buf b = BUF_INIT;
	char c;
	int fd, p[2];

	ASSERT_EQ(file_write_str(path, "1"), -ENOENT);
	ASSERT_FALSE(file_exists(path));
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	ASSERT_GE(fd, 0);
	close(fd);
	ASSERT_TRUE(file_exists(path));
	ASSERT_EQ(file_write_str(path, "hello"), 0);
	ASSERT_EQ(file_read_all(path, &b, 100), 5);
	ASSERT_STREQ((const char *)b.data, "hello");
	buf_fini(&b);

	errno = EDOM;
	fd_close(-1);
	ASSERT_EQ(errno, EDOM);
	ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
	ASSERT_EQ(fd_set_nonblock(p[0]), 0);
	ASSERT_TRUE(fcntl(p[0], F_GETFL) & O_NONBLOCK);
	ASSERT_EQ(read(p[0], &c, 1), -1);
	ASSERT_EQ(errno, EAGAIN);
	errno = EDOM;
	fd_close(p[0]);
	ASSERT_EQ(errno, EDOM);
	fd_close(p[1]);
	ASSERT_EQ(fcntl(p[0], F_GETFD), -1);
	ASSERT_EQ(fd_set_nonblock(-1), -EBADF);
}

TEST(file_mkdir_p)
{
	const char *deep = tmp_path("a/b//c/d/");
	const char *file = tmp_path("plain");
	char under_file[600];
	struct stat st;
	int fd;

	ASSERT_EQ(mkdir_p(deep, 0700), 0);
	ASSERT_EQ(stat(deep, &st), 0);
	ASSERT_TRUE(S_ISDIR(st.st_mode));
	ASSERT_EQ(mkdir_p(deep, 0700), 0);
	fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	ASSERT_GE(fd, 0);
	close(fd);
	ASSERT_EQ(mkdir_p(file, 0700), -ENOTDIR);
	snprintf(under_file, sizeof(under_file), "%s/sub", file);
	ASSERT_EQ(mkdir_p(under_file, 0700), -ENOTDIR);
	ASSERT_EQ(mkdir_p("", 0700), -ENOENT);
}

/* ----------------------------------------------------------------- sock --- */

#include <arpa/inet.h>
#include <linux/vm_sockets.h>
#include <netinet/in.h>
#include <sys/un.h>

TEST(sock_addr_parse_families)
{
	struct sock_addr a;
	const struct sockaddr_un *un = (const struct sockaddr_un *)&a.ss;
	const struct sockaddr_in *in = (const struct sockaddr_in *)&a.ss;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&a.ss;
	const struct sockaddr_vm *vm = (const struct sockaddr_vm *)&a.ss;

	ASSERT_EQ(sock_addr_parse("/run/perfetto/traced-producer.sock", &a), 0);
	ASSERT_EQ(a.family, AF_UNIX);
	ASSERT_STREQ(un->sun_path, "/run/perfetto/traced-producer.sock");
	ASSERT_EQ(sock_addr_parse("/tmp/odd:123", &a), 0);
	ASSERT_EQ(a.family, AF_UNIX);
	ASSERT_EQ(sock_addr_parse("relative.sock", &a), 0);
	ASSERT_EQ(a.family, AF_UNIX);
	ASSERT_EQ(sock_addr_parse("foo:bar", &a), 0);
	ASSERT_EQ(a.family, AF_UNIX);
	ASSERT_EQ(sock_addr_parse("@traced", &a), 0);
	ASSERT_EQ(a.family, AF_UNIX);
	ASSERT_EQ(un->sun_path[0], '\0');
	ASSERT_MEMEQ(un->sun_path + 1, "traced", 6);
	ASSERT_EQ(a.len, offsetof(struct sockaddr_un, sun_path) + 7);
	ASSERT_EQ(sock_addr_parse("127.0.0.1:20001", &a), 0);
	ASSERT_EQ(a.family, AF_INET);
	ASSERT_EQ(ntohs(in->sin_port), 20001);
	ASSERT_EQ(ntohl(in->sin_addr.s_addr), 0x7f000001);
	ASSERT_EQ(sock_addr_parse("localhost:1234", &a), 0);
	ASSERT_EQ(a.family, AF_INET);
	ASSERT_EQ(ntohs(in->sin_port), 1234);
	ASSERT_EQ(ntohl(in->sin_addr.s_addr) >> 24, 127);
	ASSERT_EQ(sock_addr_parse("[::1]:80", &a), 0);
	ASSERT_EQ(a.family, AF_INET6);
	ASSERT_EQ(ntohs(in6->sin6_port), 80);
	ASSERT_TRUE(IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr));
	ASSERT_EQ(sock_addr_parse("vsock://2:1234", &a), 0);
	ASSERT_EQ(a.family, AF_VSOCK);
	ASSERT_EQ(vm->svm_cid, 2);
	ASSERT_EQ(vm->svm_port, 1234);
	ASSERT_EQ(sock_addr_parse("vsock://-1:5", &a), 0);
	ASSERT_U64_EQ(vm->svm_cid, VMADDR_CID_ANY);
	ASSERT_TRUE(sock_family_supports_fds(AF_UNIX));
	ASSERT_FALSE(sock_family_supports_fds(AF_INET));
	ASSERT_FALSE(sock_family_supports_fds(AF_INET6));
	ASSERT_FALSE(sock_family_supports_fds(AF_VSOCK));
}

TEST(sock_addr_parse_rejects_malformed)
{
	static const char *const bad[] = {
		"",          "127.0.0.1:65536", "127.0.0.1:-1", ":80",          "[::1:80",
		"[zz]:80",   "[]:80",           "vsock://2",    "vsock://x:1", "vsock://2:99999999999",
		"vsock://:1", "1.2.3.4:99999999999999999999",
	};
	struct sock_addr a;
	char why[256], long_name[300];
	size_t i;

	a.family = -7;
	for (i = 0; i < PFC_ARRAY_SIZE(bad); i++) {
		if (sock_addr_parse(bad[i], &a) != -EINVAL)
			FAIL("'%s' not rejected with -EINVAL", bad[i]);
	}
	ASSERT_EQ(a.family, -7);
	ASSERT_EQ(sock_addr_parse_explain("127.0.0.1:70000", &a, why, sizeof(why)), -EINVAL);
	ASSERT_TRUE(strstr(why, "70000") && strstr(why, "65535"));
	memset(long_name, 'x', sizeof(long_name));
	long_name[0] = '/';
	long_name[108] = '\0';
	ASSERT_EQ(sock_addr_parse_explain(long_name, &a, why, sizeof(why)), -ENAMETOOLONG);
	ASSERT_TRUE(strstr(why, "sun_path") != NULL);
	long_name[107] = '\0';
	ASSERT_EQ(sock_addr_parse(long_name, &a), 0);
	/* An abstract name has no NUL, so one more byte fits. */
	long_name[0] = '@';
	long_name[107] = 'x';
	long_name[108] = 'x';
	long_name[109] = '\0';
	ASSERT_EQ(sock_addr_parse(long_name, &a), -ENAMETOOLONG);
	long_name[108] = '\0';
	ASSERT_EQ(sock_addr_parse(long_name, &a), 0);
	ASSERT_EQ(sock_addr_parse("no-such-host.invalid:80", &a), -EADDRNOTAVAIL);
}

TEST(sock_addr_format_round_trip)
{
	static const char *const names[] = {"127.0.0.1:20001", "[::1]:80", "@foo", "/tmp/x.sock",
					    "vsock://-1:5", "vsock://3:4"};
	struct sock_addr a;
	char out[SOCK_NAME_MAX], tiny[4];
	size_t i;

	for (i = 0; i < PFC_ARRAY_SIZE(names); i++) {
		ASSERT_EQ(sock_addr_parse(names[i], &a), 0);
		ASSERT_EQ(sock_addr_format(&a, out, sizeof(out)), 0);
		ASSERT_STREQ(out, names[i]);
	}
	ASSERT_EQ(sock_addr_format(&a, tiny, sizeof(tiny)), -ENAMETOOLONG);
}

/* Waits for @fd to become readable; fails the test after a few seconds. */
static void wait_readable(int fd)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};

	ASSERT_EQ(poll(&pfd, 1, 5000), 1);
}

/* Connects to @name, accepts, and exchanges a message both ways. */
static void round_trip(int lfd, const char *name)
{
	int cfd = -1, sfd = -1;
	char got[16];

	ASSERT_EQ(sock_connect(name, &cfd), 0);
	wait_readable(lfd);
	ASSERT_EQ(sock_accept(lfd, &sfd), 0);
	ASSERT_TRUE(fcntl(sfd, F_GETFL) & O_NONBLOCK);
	ASSERT_TRUE(fcntl(sfd, F_GETFD) & FD_CLOEXEC);
	ASSERT_TRUE(fcntl(cfd, F_GETFD) & FD_CLOEXEC);
	ASSERT_EQ(sock_send(cfd, "ping", 4), 4);
	wait_readable(sfd);
	ASSERT_EQ(sock_recv(sfd, got, sizeof(got)), 4);
	ASSERT_MEMEQ(got, "ping", 4);
	ASSERT_EQ(sock_send(sfd, "pong!", 5), 5);
	ASSERT_EQ(sock_recv(cfd, got, sizeof(got)), 5);
	ASSERT_MEMEQ(got, "pong!", 5);
	ASSERT_EQ(sock_shutdown_write(cfd), 0);
	wait_readable(sfd);
	ASSERT_EQ(sock_recv(sfd, got, sizeof(got)), 0);
	fd_close(cfd);
	fd_close(sfd);
}

TEST(sock_unix_path_round_trip)
{
	const char *path = tmp_path("s.sock");
	char name[SOCK_NAME_MAX];
	int lfd = -1, fd;

	ASSERT_EQ(sock_listen(path, 4, &lfd), 0);
	ASSERT_TRUE(fcntl(lfd, F_GETFD) & FD_CLOEXEC);
	ASSERT_EQ(sock_local_name(lfd, name, sizeof(name)), 0);
	ASSERT_STREQ(name, path);
	ASSERT_EQ(sock_accept(lfd, &fd), -EAGAIN);
	round_trip(lfd, path);
	fd_close(lfd);
	/* The socket file is left behind; listening again must replace it. */
	ASSERT_TRUE(file_exists(path));
	ASSERT_EQ(sock_listen(path, 4, &lfd), 0);
	round_trip(lfd, path);
	fd_close(lfd);
}

TEST(sock_unix_listen_keeps_regular_files)
{
	const char *path = tmp_path("not-a-socket");
	int lfd = -1, fd;

	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	ASSERT_GE(fd, 0);
	close(fd);
	ASSERT_EQ(sock_listen(path, 4, &lfd), -EADDRINUSE);
	ASSERT_EQ(lfd, -1);
	ASSERT_TRUE(file_exists(path));
	ASSERT_EQ(sock_connect(tmp_path("nothing-here"), &fd), -ENOENT);
}

TEST(sock_abstract_round_trip)
{
	char name[64], got[SOCK_NAME_MAX];
	int lfd = -1;

	snprintf(name, sizeof(name), "@pfc-base-test-%d", (int)getpid());
	ASSERT_EQ(sock_listen(name, 4, &lfd), 0);
	ASSERT_EQ(sock_local_name(lfd, got, sizeof(got)), 0);
	ASSERT_STREQ(got, name);
	round_trip(lfd, name);
	fd_close(lfd);
}

TEST(sock_tcp_ipv4_round_trip)
{
	char name[SOCK_NAME_MAX];
	int lfd = -1, fd = -1;
	pid_t pid;
	uid_t uid;

	ASSERT_EQ(sock_listen("127.0.0.1:0", 4, &lfd), 0);
	ASSERT_EQ(sock_local_name(lfd, name, sizeof(name)), 0);
	ASSERT_TRUE(strncmp(name, "127.0.0.1:", 10) == 0);
	ASSERT_TRUE(strcmp(name, "127.0.0.1:0") != 0);
	round_trip(lfd, name);
	/* Peer credentials exist only for UNIX sockets. */
	ASSERT_EQ(sock_connect(name, &fd), 0);
	ASSERT_EQ(sock_peer_cred(fd, &pid, &uid), -ENOTSUP);
	fd_close(fd);
	fd_close(lfd);
}

TEST(sock_tcp_ipv6_round_trip)
{
	char name[SOCK_NAME_MAX];
	int lfd = -1, err;

	err = sock_listen("[::1]:0", 4, &lfd);
	if (err == -EAFNOSUPPORT || err == -EADDRNOTAVAIL || err == -EPROTONOSUPPORT)
		SKIP("IPv6 loopback unavailable: %s", strerror(-err));
	ASSERT_EQ(err, 0);
	ASSERT_EQ(sock_local_name(lfd, name, sizeof(name)), 0);
	ASSERT_TRUE(strncmp(name, "[::1]:", 6) == 0);
	ASSERT_TRUE(strcmp(name, "[::1]:0") != 0);
	round_trip(lfd, name);
	fd_close(lfd);
}

TEST(sock_vsock_round_trip)
{
	char name[SOCK_NAME_MAX], conn[SOCK_NAME_MAX];
	int lfd = -1, err;
	struct sock_addr a;

	if (!file_exists("/dev/vsock"))
		SKIP("no /dev/vsock: vsock transport not available");
	err = sock_listen("vsock://-1:0", 4, &lfd);
	/* Parsing is tested above; here only a working vsock stack is missing. */
	if (err)
		SKIP("cannot listen on vsock://-1:0: %s", strerror(-err));
	ASSERT_EQ(sock_local_name(lfd, name, sizeof(name)), 0);
	ASSERT_EQ(sock_addr_parse(name, &a), 0);
	ASSERT_EQ(a.family, AF_VSOCK);
	if (((const struct sockaddr_vm *)&a.ss)->svm_port == 0)
		SKIP("AF_VSOCK listen did not assign a port (%s): no working vsock", name);
	/* CID 1 is VMADDR_CID_LOCAL: loopback within this machine. */
	snprintf(conn, sizeof(conn), "vsock://1:%u",
		 ((const struct sockaddr_vm *)&a.ss)->svm_port);
	err = sock_connect(conn, &a.family);
	if (err)
		SKIP("vsock loopback connect to %s failed: %s", conn, strerror(-err));
	fd_close(a.family);
	round_trip(lfd, conn);
	fd_close(lfd);
}

/* A connected AF_UNIX pair made through the public API. */
static void unix_pair(int *cfd, int *sfd)
{
	char name[64];
	int lfd = -1;

	snprintf(name, sizeof(name), "@pfc-pair-%d-%ld", (int)getpid(), (long)clock_monotonic_ns());
	ASSERT_EQ(sock_listen(name, 4, &lfd), 0);
	ASSERT_EQ(sock_connect(name, cfd), 0);
	wait_readable(lfd);
	ASSERT_EQ(sock_accept(lfd, sfd), 0);
	fd_close(lfd);
}

static int count_open_fds(void)
{
	struct buf b = BUF_INIT;
	int n = 0, fd;

	for (fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) != -1;
	buf_fini(&b);
	return n;
}

TEST(sock_scm_rights_pipe)
{
	int cfd, sfd, p[2], got_fds[4] = {-1, -1, -1, -1};
	size_t n_fds = 99;
	char buf[16];

	unix_pair(&cfd, &sfd);
	ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
	ASSERT_EQ(sock_send_with_fds(cfd, "F", 1, &p[0], 1), 1);
	close(p[0]);
	wait_readable(sfd);
	ASSERT_EQ(sock_recv_with_fds(sfd, buf, sizeof(buf), got_fds, 4, &n_fds), 1);
	ASSERT_EQ(buf[0], 'F');
	ASSERT_EQ(n_fds, 1);
	ASSERT_GE(got_fds[0], 0);
	ASSERT_TRUE(fcntl(got_fds[0], F_GETFD) & FD_CLOEXEC);
	ASSERT_EQ(write(p[1], "through", 7), 7);
	ASSERT_EQ(read(got_fds[0], buf, sizeof(buf)), 7);
	ASSERT_MEMEQ(buf, "through", 7);
	close(p[1]);
	close(got_fds[0]);
	/* Plain data carries no fds. */
	ASSERT_EQ(sock_send(cfd, "ab", 2), 2);
	ASSERT_EQ(sock_recv_with_fds(sfd, buf, sizeof(buf), got_fds, 4, &n_fds), 2);
	ASSERT_EQ(n_fds, 0);
	fd_close(cfd);
	fd_close(sfd);
}

TEST(sock_scm_rights_excess_fds_closed)
{
	int cfd, sfd, fds[3], got = -1, before, i;
	size_t n_fds = 0;
	char c;

	unix_pair(&cfd, &sfd);
	for (i = 0; i < 3; i++)
		fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	before = count_open_fds();
	ASSERT_EQ(sock_send_with_fds(cfd, "x", 1, fds, 3), 1);
	ASSERT_EQ(sock_recv_with_fds(sfd, &c, 1, &got, 1, &n_fds), 1);
	ASSERT_EQ(n_fds, 1);
	ASSERT_GE(got, 0);
	/* Only the one fd we asked for was kept. */
	ASSERT_EQ(count_open_fds(), before + 1);
	close(got);
	ASSERT_EQ(sock_send_with_fds(cfd, "y", 1, fds, 3), 1);
	ASSERT_EQ(sock_recv(sfd, &c, 1), 1);
	ASSERT_EQ(count_open_fds(), before);
	/* Limits: too many fds, or fds without a byte to carry them. */
	ASSERT_EQ(sock_send_with_fds(cfd, "z", 1, fds, SOCK_MAX_FDS + 1), -EINVAL);
	ASSERT_EQ(sock_send_with_fds(cfd, "", 0, fds, 1), -EINVAL);
	for (i = 0; i < 3; i++)
		close(fds[i]);
	fd_close(cfd);
	fd_close(sfd);
}

TEST(sock_peer_cred_is_self)
{
	int cfd, sfd;
	pid_t pid = 0;
	uid_t uid = 12345;

	unix_pair(&cfd, &sfd);
	ASSERT_EQ(sock_peer_cred(sfd, &pid, &uid), 0);
	ASSERT_EQ(pid, getpid());
	ASSERT_EQ(uid, getuid());
	pid = 0;
	ASSERT_EQ(sock_peer_cred(cfd, &pid, &uid), 0);
	ASSERT_EQ(pid, getpid());
	ASSERT_EQ(sock_family_of_fd(cfd), AF_UNIX);
	fd_close(cfd);
	fd_close(sfd);
	ASSERT_EQ(sock_peer_cred(-1, &pid, &uid), -EBADF);
}

TEST(sock_nonblocking_connect)
{
	char name[SOCK_NAME_MAX];
	struct pollfd pfd;
	int lfd = -1, fd = -1, sfd = -1, err;

	ASSERT_EQ(sock_listen("127.0.0.1:0", 4, &lfd), 0);
	ASSERT_EQ(sock_local_name(lfd, name, sizeof(name)), 0);
	err = sock_connect_nonblock(name, &fd);
	ASSERT_TRUE(err == 0 || err == -EINPROGRESS);
	ASSERT_TRUE(fcntl(fd, F_GETFL) & O_NONBLOCK);
	pfd.fd = fd;
	pfd.events = POLLOUT;
	ASSERT_EQ(poll(&pfd, 1, 5000), 1);
	ASSERT_EQ(sock_connect_finish(fd), 0);
	wait_readable(lfd);
	ASSERT_EQ(sock_accept(lfd, &sfd), 0);
	fd_close(fd);
	fd_close(sfd);
	fd_close(lfd);
	/* The port is free again: connecting must be refused. */
	ASSERT_EQ(sock_connect(name, &fd), -ECONNREFUSED);
	err = sock_connect_nonblock(name, &fd);
	if (err == -EINPROGRESS) {
		pfd.fd = fd;
		ASSERT_EQ(poll(&pfd, 1, 5000), 1);
		err = sock_connect_finish(fd);
		fd_close(fd);
	}
	ASSERT_EQ(err, -ECONNREFUSED);
}

TEST(sock_send_to_closed_peer_no_sigpipe)
{
	int cfd, sfd;
	ssize_t r = 0;
	int i;

	unix_pair(&cfd, &sfd);
	fd_close(sfd);
	/* SIGPIPE stays at its default action: MSG_NOSIGNAL must prevent it. */
	signal(SIGPIPE, SIG_DFL);
	for (i = 0; i < 3 && r >= 0; i++)
		r = sock_send(cfd, "x", 1);
	ASSERT_TRUE(r == -EPIPE || r == -ECONNRESET);
	fd_close(cfd);
}

/* --------------------------------------------------------------- evloop --- */

struct timer_log {
	struct evloop *loop;
	int order[8];
	int n;
	int quit_after;
};

struct timer_ctx {
	struct timer_log *log;
	int tag;
};

static void log_timer(void *user)
{
	struct timer_ctx *t = user;

	t->log->order[t->log->n++] = t->tag;
	if (t->log->n == t->log->quit_after)
		evloop_quit(t->log->loop);
}

/* Fails the test if the loop runs longer than expected. */
static void watchdog(void *user)
{
	(void)user;
	FAIL("event loop watchdog fired");
}

static struct evloop *new_loop(void)
{
	struct evloop *loop = NULL;

	ASSERT_EQ(evloop_create(&loop), 0);
	ASSERT_EQ(evloop_add_timer(loop, 5000, 0, watchdog, NULL, NULL), 0);
	return loop;
}

TEST(evloop_one_shot_timers_fire_in_deadline_order)
{
	struct evloop *loop = new_loop();
	struct timer_log log = {.loop = loop, .quit_after = 3};
	struct timer_ctx t30 = {&log, 30}, t10 = {&log, 10}, t20 = {&log, 20};
	uint64_t id30, id10, id20, start = clock_monotonic_ns();

	ASSERT_EQ(evloop_add_timer(loop, 30, 0, log_timer, &t30, &id30), 0);
	ASSERT_EQ(evloop_add_timer(loop, 10, 0, log_timer, &t10, &id10), 0);
	ASSERT_EQ(evloop_add_timer(loop, 20, 0, log_timer, &t20, &id20), 0);
	ASSERT_EQ(evloop_run(loop), 0);
	ASSERT_EQ(log.n, 3);
	ASSERT_EQ(log.order[0], 10);
	ASSERT_EQ(log.order[1], 20);
	ASSERT_EQ(log.order[2], 30);
	ASSERT_GE(clock_monotonic_ns() - start, 30 * NS_PER_MS);
	/* One-shot timers removed themselves. */
	ASSERT_EQ(evloop_del(loop, id10), -ENOENT);
	ASSERT_EQ(evloop_del(loop, id30), -ENOENT);
	ASSERT_EQ(evloop_run_once(loop, 50), 0);
	ASSERT_EQ(log.n, 3);
	evloop_destroy(loop);
}

struct periodic {
	struct evloop *loop;
	uint64_t id;
	int count;
	int stop_at;
};

static void periodic_tick(void *user)
{
	struct periodic *p = user;

	if (++p->count == p->stop_at) {
		ASSERT_EQ(evloop_del(p->loop, p->id), 0);
		evloop_quit(p->loop);
	}
}

TEST(evloop_periodic_timer_fires_n_times)
{
	struct evloop *loop = new_loop();
	struct periodic p = {.loop = loop, .stop_at = 5};
	uint64_t start = clock_monotonic_ns();

	ASSERT_EQ(evloop_add_timer(loop, 0, 5, periodic_tick, &p, &p.id), 0);
	ASSERT_EQ(evloop_run(loop), 0);
	ASSERT_EQ(p.count, 5);
	ASSERT_GE(clock_monotonic_ns() - start, 20 * NS_PER_MS);
	ASSERT_EQ(evloop_run_once(loop, 30), 0);
	ASSERT_EQ(p.count, 5);
	ASSERT_EQ(evloop_del(loop, p.id), -ENOENT);
	/* The loop can run again after a quit. */
	p.count = 0;
	p.stop_at = 2;
	ASSERT_EQ(evloop_add_timer(loop, 1, 1, periodic_tick, &p, &p.id), 0);
	ASSERT_EQ(evloop_run(loop), 0);
	ASSERT_EQ(p.count, 2);
	evloop_destroy(loop);
}

struct fd_ctx {
	struct evloop *loop;
	int calls;
	unsigned revents;
	char data[8];
};

static void on_readable(int fd, unsigned revents, void *user)
{
	struct fd_ctx *c = user;

	c->calls++;
	c->revents = revents;
	if (revents & EVLOOP_READ)
		ASSERT_EQ(read(fd, c->data, sizeof(c->data)), 3);
	evloop_quit(c->loop);
}

static void on_any(int fd, unsigned revents, void *user)
{
	struct fd_ctx *c = user;

	(void)fd;
	c->calls++;
	c->revents = revents;
}

TEST(evloop_fd_readiness)
{
	struct evloop *loop = new_loop();
	struct fd_ctx rc = {.loop = loop}, wc = {.loop = loop};
	uint64_t rid, wid;
	int p[2];

	ASSERT_EQ(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
	ASSERT_EQ(evloop_add_fd(loop, p[0], EVLOOP_READ, on_readable, &rc, &rid), 0);
	ASSERT_EQ(evloop_add_fd(loop, p[0], EVLOOP_READ, on_readable, &rc, NULL), -EEXIST);
	ASSERT_EQ(evloop_run_once(loop, 20), 0);
	ASSERT_EQ(write(p[1], "abc", 3), 3);
	ASSERT_EQ(evloop_run(loop), 0);
	ASSERT_EQ(rc.calls, 1);
	ASSERT_EQ(rc.revents, EVLOOP_READ);
	ASSERT_MEMEQ(rc.data, "abc", 3);

	ASSERT_EQ(evloop_add_fd(loop, p[1], EVLOOP_WRITE, on_any, &wc, &wid), 0);
	ASSERT_EQ(evloop_run_once(loop, 1000), 1);
	ASSERT_EQ(wc.calls, 1);
	ASSERT_TRUE(wc.revents & EVLOOP_WRITE);
	ASSERT_EQ(evloop_mod_fd(loop, wid, 0), 0);
	ASSERT_EQ(evloop_run_once(loop, 20), 0);
	ASSERT_EQ(wc.calls, 1);
	ASSERT_EQ(evloop_mod_fd(loop, 999999, EVLOOP_READ), -ENOENT);
	ASSERT_EQ(evloop_del(loop, wid), 0);
	ASSERT_EQ(evloop_del(loop, wid), -ENOENT);

	/* Closing the write end is reported as a hang-up. */
	close(p[1]);
	rc.calls = 0;
	ASSERT_EQ(evloop_del(loop, rid), 0);
	ASSERT_EQ(evloop_add_fd(loop, p[0], EVLOOP_READ, on_any, &rc, &rid), 0);
	ASSERT_EQ(evloop_run_once(loop, 1000), 1);
	ASSERT_TRUE(rc.revents & EVLOOP_HUP);
	ASSERT_EQ(evloop_del(loop, rid), 0);
	close(p[0]);
	evloop_destroy(loop);
}

struct remover {
	struct evloop *loop;
	uint64_t self_id;
	uint64_t *other_id;
	int *calls;
	int other_rfd;
	struct fd_ctx *fresh;
	uint64_t fresh_id;
};

/*
 * Whichever of the two watches runs first removes itself and the other,
 * closes the other's fd and watches a new, empty pipe that likely reuses
 * that fd number: the stale event must reach neither the freed watch nor
 * the new one.
 */
static void remove_both(int fd, unsigned revents, void *user)
{
	struct remover *r = user;
	int p[2];

	(void)fd;
	(void)revents;
	(*r->calls)++;
	ASSERT_EQ(evloop_del(r->loop, r->self_id), 0);
	ASSERT_EQ(evloop_del(r->loop, *r->other_id), 0);
	ASSERT_EQ(evloop_del(r->loop, r->self_id), -ENOENT);
	close(r->other_rfd);
	ASSERT_EQ(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
	ASSERT_EQ(evloop_add_fd(r->loop, p[0], EVLOOP_READ, on_any, r->fresh, &r->fresh_id), 0);
}

TEST(evloop_callback_removes_itself_and_pending_watch)
{
	struct evloop *loop = new_loop();
	struct fd_ctx fresh = {.loop = loop};
	struct remover a = {.loop = loop, .fresh = &fresh}, b = a;
	int pa[2], pb[2], calls = 0;

	ASSERT_EQ(pipe2(pa, O_CLOEXEC | O_NONBLOCK), 0);
	ASSERT_EQ(pipe2(pb, O_CLOEXEC | O_NONBLOCK), 0);
	ASSERT_EQ(write(pa[1], "a", 1), 1);
	ASSERT_EQ(write(pb[1], "b", 1), 1);
	a.calls = b.calls = &calls;
	a.other_id = &b.self_id;
	b.other_id = &a.self_id;
	a.other_rfd = pb[0];
	b.other_rfd = pa[0];
	ASSERT_EQ(evloop_add_fd(loop, pa[0], EVLOOP_READ, remove_both, &a, &a.self_id), 0);
	ASSERT_EQ(evloop_add_fd(loop, pb[0], EVLOOP_READ, remove_both, &b, &b.self_id), 0);
	/* Both fds are ready, so both events arrive in one batch. */
	ASSERT_EQ(evloop_run_once(loop, 1000), 1);
	ASSERT_EQ(calls, 1);
	ASSERT_EQ(fresh.calls, 0);
	ASSERT_EQ(evloop_run_once(loop, 20), 0);
	ASSERT_EQ(fresh.calls, 0);
	evloop_destroy(loop);
}

struct post_ctx {
	struct evloop *loop;
	pthread_mutex_t lock;
	int next[2];
	int done;
	int n_per_thread;
	int n_threads;
};

struct post_item {
	struct post_ctx *ctx;
	int thread;
	int seq;
};

static void check_fifo(void *user)
{
	struct post_item *it = user;
	struct post_ctx *c = it->ctx;

	ASSERT_EQ(it->seq, c->next[it->thread]);
	c->next[it->thread]++;
	if (++c->done == c->n_per_thread * c->n_threads)
		evloop_quit(c->loop);
}

struct poster {
	struct post_ctx *ctx;
	struct post_item *items;
};

static void *post_all(void *arg)
{
	struct poster *p = arg;
	int i;

	for (i = 0; i < p->ctx->n_per_thread; i++) {
		if (evloop_post(p->ctx->loop, check_fifo, &p->items[i]) != 0)
			abort();
	}
	return NULL;
}

TEST(evloop_post_from_threads_runs_fifo)
{
	enum { N = 2000 };
	static struct post_item items[2][N];
	struct evloop *loop = new_loop();
	struct post_ctx ctx = {.loop = loop, .n_per_thread = N, .n_threads = 2};
	struct poster posters[2];
	pthread_t th[2];
	int t, i;

	for (t = 0; t < 2; t++) {
		for (i = 0; i < N; i++)
			items[t][i] = (struct post_item){&ctx, t, i};
		posters[t] = (struct poster){&ctx, items[t]};
		ASSERT_EQ(pthread_create(&th[t], NULL, post_all, &posters[t]), 0);
	}
	ASSERT_EQ(evloop_run(loop), 0);
	for (t = 0; t < 2; t++)
		pthread_join(th[t], NULL);
	ASSERT_EQ(ctx.done, 2 * N);
	ASSERT_EQ(ctx.next[0], N);
	ASSERT_EQ(ctx.next[1], N);
	evloop_destroy(loop);
}

static void *quit_later(void *arg)
{
	struct timespec ts = {0, 20 * 1000 * 1000};

	nanosleep(&ts, NULL);
	evloop_quit(arg);
	return NULL;
}

TEST(evloop_quit_from_other_thread)
{
	struct evloop *loop = new_loop();
	uint64_t start = clock_monotonic_ns();
	pthread_t th;

	ASSERT_EQ(pthread_create(&th, NULL, quit_later, loop), 0);
	ASSERT_EQ(evloop_run(loop), 0);
	pthread_join(th, NULL);
	ASSERT_GE(clock_monotonic_ns() - start, 15 * NS_PER_MS);
	evloop_destroy(loop);
}

struct sig_ctx {
	struct evloop *loop;
	int signo;
	int calls;
};

static void on_signal(int signo, void *user)
{
	struct sig_ctx *s = user;

	s->signo = signo;
	s->calls++;
	evloop_quit(s->loop);
}

static void raise_usr1(void *user)
{
	(void)user;
	raise(SIGUSR1);
}

TEST(evloop_signal_via_signalfd)
{
	struct evloop *loop = new_loop();
	struct sig_ctx s = {.loop = loop};
	uint64_t id;

	/* Without the watch SIGUSR1 would kill the test process. */
	ASSERT_EQ(evloop_add_signal(loop, SIGUSR1, on_signal, &s, &id), 0);
	ASSERT_EQ(evloop_add_timer(loop, 5, 0, raise_usr1, NULL, NULL), 0);
	ASSERT_EQ(evloop_run(loop), 0);
	ASSERT_EQ(s.calls, 1);
	ASSERT_EQ(s.signo, SIGUSR1);
	raise(SIGUSR1);
	ASSERT_EQ(evloop_run_once(loop, 1000), 1);
	ASSERT_EQ(s.calls, 2);
	ASSERT_EQ(evloop_del(loop, id), 0);
	ASSERT_EQ(evloop_add_signal(loop, 0, on_signal, &s, NULL), -EINVAL);
	evloop_destroy(loop);
}

struct quit_ctx {
	struct evloop *loop;
	int ticks;
};

static void tick_quit_at_3(void *user)
{
	struct quit_ctx *c = user;

	if (++c->ticks == 3)
		evloop_quit(c->loop);
}

static void must_not_run(void *user)
{
	(void)user;
	FAIL("a task ran after its loop was destroyed");
}

TEST(evloop_quit_stops_run)
{
	struct evloop *loop = new_loop();
	struct quit_ctx c = {.loop = loop};
	struct timespec ts = {0, 20 * 1000 * 1000};

	ASSERT_EQ(evloop_add_timer(loop, 1, 1, tick_quit_at_3, &c, NULL), 0);
	ASSERT_EQ(evloop_run(loop), 0);
	ASSERT_EQ(c.ticks, 3);
	nanosleep(&ts, NULL);
	ASSERT_EQ(c.ticks, 3);
	/* Missed periods are coalesced into one call. */
	ASSERT_EQ(evloop_run_once(loop, 1000), 1);
	ASSERT_EQ(c.ticks, 4);
	/* A quit requested before run() makes it return at once. */
	evloop_quit(loop);
	ASSERT_EQ(evloop_run(loop), 0);
	ASSERT_LE(c.ticks, 5);
	ASSERT_EQ(evloop_post(loop, must_not_run, NULL), 0);
	evloop_destroy(loop);
	evloop_destroy(NULL);
}

struct chain_ctx {
	struct evloop *loop;
	int runs;
	int reposts;   /* how many more times the task posts itself */
};

static void chain_task(void *user)
{
	struct chain_ctx *c = user;

	c->runs++;
	if (c->reposts-- > 0)
		evloop_post(c->loop, chain_task, c);
}

static void post_chain(void *user)
{
	struct chain_ctx *c = user;

	evloop_post(c->loop, chain_task, c);
}

/*
 * A task posted from a callback runs in the same round, with no wake-up;
 * one it posts in turn runs in the next round, which does not block.
 */
TEST(evloop_task_posted_from_callback_runs_in_round)
{
	struct evloop *loop = new_loop();
	struct chain_ctx c = {.loop = loop, .reposts = 1};
	uint64_t t0;

	ASSERT_EQ(evloop_add_timer(loop, 0, 0, post_chain, &c, NULL), 0);
	ASSERT_EQ(evloop_run_once(loop, 1000), 2);
	ASSERT_EQ(c.runs, 1);
	t0 = clock_monotonic_ns();
	ASSERT_EQ(evloop_run_once(loop, 1000), 1);
	ASSERT_EQ(c.runs, 2);
	ASSERT_LT(clock_monotonic_ns() - t0, 500ull * 1000 * 1000);
	/* Nothing left: a short wait times out with no call. */
	ASSERT_EQ(evloop_run_once(loop, 10), 0);
	evloop_destroy(loop);
}

/* The wait ends at the next timer's deadline, not at the caller's timeout. */
TEST(evloop_run_once_wakes_for_the_next_deadline)
{
	struct evloop *loop = new_loop();
	struct quit_ctx c = {.loop = loop};
	uint64_t t0 = clock_monotonic_ns(), dt;

	ASSERT_EQ(evloop_add_timer(loop, 20, 0, tick_quit_at_3, &c, NULL), 0);
	while (c.ticks == 0)
		ASSERT_GE(evloop_run_once(loop, 5000), 0);
	dt = clock_monotonic_ns() - t0;
	ASSERT_GE(dt, 20ull * 1000 * 1000);
	ASSERT_LT(dt, 2000ull * 1000 * 1000);
	evloop_destroy(loop);
}

/* -------------------------------------------------------------- subproc --- */

#define NOTIFY_ENV "PFC_TEST_NOTIFY_FD"

static struct subproc *spawn_sh(const char *script, const char *const *env, bool is_new_pgrp)
{
	const char *argv[] = {"sh", "-c", script, NULL};
	struct subproc_opts o;
	struct subproc *p = NULL;

	subproc_opts_init(&o);
	o.argv = argv;
	o.env = env;
	o.notify_env = NOTIFY_ENV;
	o.is_new_pgrp = is_new_pgrp;
	ASSERT_EQ(subproc_spawn(&o, &p), 0);
	ASSERT_GT(subproc_pid(p), 0);
	return p;
}

TEST(subproc_ready_then_terminate)
{
	struct subproc *p;
	int status = 0;

	p = spawn_sh("test \"$" NOTIFY_ENV "\" = 3 || exit 9; echo 1 >&$" NOTIFY_ENV
		     "; exec sleep 5",
		     NULL, false);
	ASSERT_EQ(subproc_wait_ready(p, 5000), 0);
	ASSERT_EQ(subproc_wait_ready(p, 0), 0);
	ASSERT_EQ(subproc_wait(p, 0, false, &status), -ETIMEDOUT);
	ASSERT_EQ(subproc_signal(p, SIGTERM), 0);
	ASSERT_EQ(subproc_wait(p, 5000, false, &status), 0);
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(WTERMSIG(status), SIGTERM);
	/* Reaped: the status is remembered and signals are refused. */
	status = 0;
	ASSERT_EQ(subproc_wait(p, 0, false, &status), 0);
	ASSERT_EQ(WTERMSIG(status), SIGTERM);
	ASSERT_EQ(subproc_signal(p, SIGTERM), -ESRCH);
	subproc_destroy(p);
	subproc_destroy(NULL);
}

TEST(subproc_ready_timeout)
{
	struct subproc *p = spawn_sh("exec sleep 5", NULL, false);
	uint64_t start = clock_monotonic_ns();
	pid_t pid = subproc_pid(p);

	ASSERT_EQ(subproc_wait_ready(p, 100), -ETIMEDOUT);
	ASSERT_GE(clock_monotonic_ns() - start, 90 * NS_PER_MS);
	ASSERT_LT(clock_monotonic_ns() - start, 3000 * NS_PER_MS);
	subproc_destroy(p);
	/* destroy() killed and reaped it. */
	ASSERT_EQ(kill(pid, 0), -1);
	ASSERT_EQ(errno, ESRCH);
}

TEST(subproc_child_exits_before_ready)
{
	struct subproc *p = spawn_sh("exit 3", NULL, false);
	int status = 0;

	ASSERT_EQ(subproc_wait_ready(p, 5000), -ECHILD);
	ASSERT_EQ(subproc_wait(p, 1000, false, &status), 0);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 3);
	subproc_destroy(p);

	p = spawn_sh("exec 3>&-; exec sleep 5", NULL, false);
	ASSERT_EQ(subproc_wait_ready(p, 5000), -EPIPE);
	subproc_destroy(p);

	p = spawn_sh("echo x >&3; exec sleep 5", NULL, false);
	ASSERT_EQ(subproc_wait_ready(p, 5000), -EBADMSG);
	subproc_destroy(p);
}

TEST(subproc_exec_failure)
{
	const char *argv[] = {"/nonexistent/pfc-no-such-binary", NULL};
	struct subproc_opts o;
	struct subproc *p = NULL;

	subproc_opts_init(&o);
	ASSERT_EQ(subproc_spawn(&o, &p), -EINVAL);
	o.argv = argv;
	ASSERT_EQ(subproc_spawn(&o, &p), -ENOENT);
	ASSERT_TRUE(p == NULL);
	ASSERT_EQ(waitpid(-1, NULL, WNOHANG), -1);
	ASSERT_EQ(errno, ECHILD);
}

TEST(subproc_env_and_fds)
{
	static const char *const env[] = {"PFC_A=one", "HOME=/override", NULL};
	char script[256];
	struct subproc *p;
	int fd, leaked;

	/* An fd without O_CLOEXEC must still not reach the child. */
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	leaked = fcntl(fd, F_DUPFD, 20);
	close(fd);
	ASSERT_GE(leaked, 20);
	snprintf(script, sizeof(script),
		 "[ \"$PFC_A\" = one ] || exit 10; [ \"$HOME\" = /override ] || exit 11; "
		 "[ -e /proc/self/fd/%d ] && exit 12; echo 1 >&3; exec sleep 5",
		 leaked);
	p = spawn_sh(script, env, false);
	ASSERT_EQ(subproc_wait_ready(p, 5000), 0);
	subproc_destroy(p);
	close(leaked);
	ASSERT_TRUE(getenv("PFC_A") == NULL);
}

TEST(subproc_signal_mask_reset_and_stdout)
{
	const char *argv[] = {"sh", "-c", "echo hi; kill -USR1 $$; echo 1 >&3", NULL};
	const char *path = tmp_path("out");
	struct buf b = BUF_INIT;
	struct subproc_opts o;
	struct subproc *p = NULL;
	sigset_t set;
	int fd, status;

	/* Daemons block signals for signalfd; children must not inherit that. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &set, NULL), 0);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	ASSERT_GE(fd, 0);
	subproc_opts_init(&o);
	o.argv = argv;
	o.notify_env = NOTIFY_ENV;
	o.stdout_fd = fd;
	ASSERT_EQ(subproc_spawn(&o, &p), 0);
	close(fd);
	ASSERT_EQ(subproc_wait_ready(p, 5000), -ECHILD);
	ASSERT_EQ(subproc_wait(p, 1000, false, &status), 0);
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(WTERMSIG(status), SIGUSR1);
	ASSERT_EQ(file_read_all(path, &b, 100), 3);
	ASSERT_STREQ((const char *)b.data, "hi\n");
	buf_fini(&b);
	subproc_destroy(p);
}

/* Whether process @pid is gone or a zombie, within a few seconds. */
static bool is_dead_soon(pid_t pid)
{
	struct timespec ts = {0, 5 * 1000 * 1000};
	struct buf b = BUF_INIT;
	char path[64];
	const char *rp;
	int i, n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (i = 0; i < 1000; i++) {
		buf_reset(&b);
		n = file_read_all(path, &b, 4096);
		rp = n > 0 ? strrchr((const char *)b.data, ')') : NULL;
		if (n < 0 || (rp && (rp[2] == 'Z' || rp[2] == 'X'))) {
			buf_fini(&b);
			return true;
		}
		nanosleep(&ts, NULL);
	}
	buf_fini(&b);
	return false;
}

TEST(subproc_wait_kill_on_timeout_and_pgrp)
{
	char script[256];
	const char *pid_path = tmp_path("bg.pid");
	struct buf b = BUF_INIT;
	struct subproc *p;
	int64_t bg_pid;
	int status = 0;

	snprintf(script, sizeof(script), "sleep 30 & echo $! > %s; echo 1 >&3; wait", pid_path);
	p = spawn_sh(script, NULL, true);
	ASSERT_EQ(subproc_wait_ready(p, 5000), 0);
	ASSERT_EQ(getpgid(subproc_pid(p)), subproc_pid(p));
	ASSERT_GT(file_read_all(pid_path, &b, 64), 0);
	ASSERT_EQ(sv_parse_i64(sv_trim(sv_make((const char *)b.data, b.len)), 1, INT32_MAX,
			       &bg_pid),
		  0);
	ASSERT_EQ(getpgid((pid_t)bg_pid), subproc_pid(p));
	ASSERT_EQ(subproc_wait(p, 50, true, &status), -ETIMEDOUT);
	ASSERT_EQ(subproc_wait(p, 0, false, &status), 0);
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(WTERMSIG(status), SIGKILL);
	/* The whole group, including the backgrounded sleep, was killed. */
	ASSERT_TRUE(is_dead_soon((pid_t)bg_pid));
	buf_fini(&b);
	subproc_destroy(p);
}

TEST(subproc_notify_ready_from_env)
{
	char val[16], c = 0;
	int p[2];

	ASSERT_EQ(notify_ready_from_env("PFC_TEST_UNSET_VAR"), -ENOENT);
	ASSERT_EQ(setenv("PFC_TEST_BAD", "abc", 1), 0);
	ASSERT_EQ(notify_ready_from_env("PFC_TEST_BAD"), -EINVAL);
	ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
	snprintf(val, sizeof(val), "%d", p[1]);
	ASSERT_EQ(setenv("PFC_TEST_FD", val, 1), 0);
	ASSERT_EQ(notify_ready_from_env("PFC_TEST_FD"), 0);
	ASSERT_EQ(read(p[0], &c, 1), 1);
	ASSERT_EQ(c, '1');
	/* The write end was closed and the variable removed. */
	ASSERT_EQ(read(p[0], &c, 1), 0);
	ASSERT_TRUE(getenv("PFC_TEST_FD") == NULL);
	close(p[0]);
}

/* ------------------------------------------------------------- inflate ---- */

#include <zlib.h>

#include "base/inflate.h"

TEST(inflate_round_trip_and_hostile_input)
{
	static uint8_t plain[100000], packed[120000];
	uLongf packed_len = sizeof(packed);
	struct buf out = BUF_INIT;
	size_t i;

	for (i = 0; i < sizeof(plain); i++)
		plain[i] = (uint8_t)(i * 7 % 251);
	ASSERT_EQ(compress2(packed, &packed_len, plain, sizeof(plain), 6), Z_OK);
	buf_append_str(&out, "keep");
	ASSERT_EQ(inflate_all(packed, packed_len, sizeof(plain), &out), (int64_t)sizeof(plain));
	ASSERT_EQ(out.len, 4 + sizeof(plain));
	ASSERT_MEMEQ(out.data + 4, plain, sizeof(plain));
	/* Over the bound, truncated, or not zlib at all: an error, @out untouched. */
	ASSERT_EQ(inflate_all(packed, packed_len, sizeof(plain) - 1, &out), -EFBIG);
	ASSERT_EQ(inflate_all(packed, packed_len / 2, sizeof(plain), &out), -EBADMSG);
	ASSERT_EQ(inflate_all(plain, 1000, sizeof(plain), &out), -EBADMSG);
	ASSERT_EQ(inflate_all(packed, 0, sizeof(plain), &out), -EBADMSG);
	ASSERT_EQ(out.len, 4 + sizeof(plain));
	buf_fini(&out);
}

/* Perfetto's capture order: BOOTTIME first, then the others. */
TEST(clock_capture_order_and_freshness)
{
	static const uint32_t want_ids[CLOCK_SNAPSHOT_CLOCKS] = {6, 2, 4, 1, 3, 5};
	static const clockid_t posix[CLOCK_SNAPSHOT_CLOCKS] = {
		CLOCK_BOOTTIME, CLOCK_REALTIME_COARSE, CLOCK_MONOTONIC_COARSE,
		CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW,
	};
	struct clock_snapshot cs;
	uint64_t before[CLOCK_SNAPSHOT_CLOCKS], after[CLOCK_SNAPSHOT_CLOCKS];
	size_t i;

	for (i = 0; i < CLOCK_SNAPSHOT_CLOCKS; i++)
		before[i] = clock_get_ns(posix[i]);
	clock_snapshot_capture(&cs);
	for (i = 0; i < CLOCK_SNAPSHOT_CLOCKS; i++)
		after[i] = clock_get_ns(posix[i]);
	ASSERT_EQ(CLOCK_ID_BOOTTIME, 6);
	for (i = 0; i < CLOCK_SNAPSHOT_CLOCKS; i++) {
		ASSERT_EQ(cs.clocks[i].id, want_ids[i]);
		/* Each reading comes from its own clock (coarse ones may lag
		 * a tick behind a fine reading taken just before). */
		ASSERT_GE(cs.clocks[i].ts_ns + 50 * NS_PER_MS, before[i]);
		ASSERT_LE(cs.clocks[i].ts_ns, after[i] + 50 * NS_PER_MS);
	}
	/* BOOTTIME counts suspend: it never trails MONOTONIC, read after it
	 * (a few microseconds are allowed for the order of the reads). */
	ASSERT_GE(cs.clocks[0].ts_ns + 1000000, cs.clocks[4].ts_ns);
}


TEST(base64_known_values_and_round_trip)
{
	/* RFC 4648's test vectors. */
	static const char *const k_plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
	static const char *const k_coded[] = {"",	  "Zg==",     "Zm8=",	 "Zm9v",
					      "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
	uint8_t bytes[256], back[256 / 4 * 3 + 3 + 200];
	char text[base64_encoded_len(256) + 1];
	size_t i;

	for (i = 0; i < sizeof(k_plain) / sizeof(k_plain[0]); i++) {
		ASSERT_EQ(base64_encode((const uint8_t *)k_plain[i], strlen(k_plain[i]), text),
			  strlen(k_coded[i]));
		ASSERT_STREQ(text, k_coded[i]);
		ASSERT_EQ(base64_decode(k_coded[i], strlen(k_coded[i]), back),
			  (long)strlen(k_plain[i]));
		ASSERT_MEMEQ(back, k_plain[i], strlen(k_plain[i]));
	}
	for (i = 0; i < sizeof(bytes); i++)
		bytes[i] = (uint8_t)(i * 7 + 3);
	for (i = 0; i <= sizeof(bytes); i++) {
		size_t n = base64_encode(bytes, i, text);

		ASSERT_EQ(n, base64_encoded_len(i));
		ASSERT_EQ(base64_decode(text, n, back), (long)i);
		ASSERT_MEMEQ(back, bytes, i);
	}
	/* Not base64: a stray character, one character too many. */
	ASSERT_EQ(base64_decode("Zm9v!", 5, back), -1);
	ASSERT_EQ(base64_decode("Zm9vY", 5, back), -1);
	ASSERT_EQ(base64_decode("Zm9vYg", 6, back), 4);
}

/* Fills @n bytes at @p with a pattern of @seed. */
static void bigmem_fill(uint8_t *p, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 131 + seed + (i >> 12));
}

static int bigmem_same(const uint8_t *p, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != (uint8_t)(i * 131 + seed + (i >> 12)))
			return 0;
	return 1;
}

/* A populator that only counts the bytes it is asked for. */
static void bigmem_populate_counted(void *ctx, void *addr, size_t len)
{
	(void)addr;
	*(size_t *)ctx += len;
}

TEST(bigmem_grows_across_sizes_keeping_bytes)
{
	/* Small, past the threshold, grown in place or moved, down to small. */
	static const size_t k_sizes[] = {100, 4096, BIGMEM_MIN_BYTES - 1, BIGMEM_MIN_BYTES,
					 BIGMEM_MIN_BYTES + 1, 3 * BIGMEM_MIN_BYTES + 77,
					 10 * BIGMEM_MIN_BYTES};
	uint8_t *p = NULL, *other, *z;
	size_t i, old = 0, counted = 0;

	for (i = 0; i < sizeof(k_sizes) / sizeof(k_sizes[0]); i++) {
		uint8_t *q = bigmem_realloc(p, old, k_sizes[i]);

		ASSERT_TRUE(q != NULL);
		if (old)
			ASSERT_TRUE(bigmem_same(q, old, 7));
		bigmem_fill(q, k_sizes[i], 7);
		/* Another big array right after it: the next growth must move. */
		other = bigmem_calloc(BIGMEM_MIN_BYTES);
		ASSERT_TRUE(other != NULL);
		other[0] = 1;
		bigmem_free(other, BIGMEM_MIN_BYTES);
		p = q;
		old = k_sizes[i];
	}
	/* Shrinking keeps the bytes that fit, big and then small. */
	p = bigmem_realloc(p, old, 4 * BIGMEM_MIN_BYTES + 5);
	ASSERT_TRUE(p != NULL && bigmem_same(p, 4 * BIGMEM_MIN_BYTES + 5, 7));
	p = bigmem_realloc(p, 4 * BIGMEM_MIN_BYTES + 5, 1000);
	ASSERT_TRUE(p != NULL && bigmem_same(p, 1000, 7));
	bigmem_free(p, 1000);
	/* Zeroed when new, small or big. */
	z = bigmem_calloc(5 * BIGMEM_MIN_BYTES);
	ASSERT_TRUE(z != NULL);
	for (i = 0; i < 5 * BIGMEM_MIN_BYTES; i += 4093)
		ASSERT_EQ(z[i], 0);
	/* Populating is a hint: contents stay; a populator takes the calls. */
	bigmem_fill(z, 5 * BIGMEM_MIN_BYTES, 3);
	bigmem_populate_now(z, 5 * BIGMEM_MIN_BYTES);
	ASSERT_TRUE(bigmem_same(z, 5 * BIGMEM_MIN_BYTES, 3));
	bigmem_set_populator(bigmem_populate_counted, &counted);
	bigmem_populate(z, 12345);
	bigmem_set_populator(NULL, NULL);
	bigmem_populate(z, 777);
	ASSERT_EQ(counted, (size_t)12345);
	bigmem_free(z, 5 * BIGMEM_MIN_BYTES);
	bigmem_free(NULL, 0);
}

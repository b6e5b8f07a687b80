// SPDX-License-Identifier: Apache-2.0
/*
 * pbtxt_test.c - unit tests for the text format parser and printer: every
 * scalar type's encoding (checked by decoding with protobuf-c and with the
 * protozero reader), range and type errors, enums, string escapes, the
 * syntax variants protoc accepts, error positions and suggestions, nesting
 * limits, hostile text and hostile binary input, and round trips of the
 * shipped configs.
 */
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "config/test_config.pb-c.h"
#include "config/trace_config.pb-c.h"
#include "pbtxt/pbtxt.h"
#include "protos/pb_registry.h"
#include "protozero/protozero.h"
#include "trace/ftrace/ftrace_event_bundle.pb-c.h"
#include "trace/track_event/debug_annotation.pb-c.h"

/* ------------------------------------------------------------ helpers ---- */

static const ProtobufCMessageDescriptor *must_find(const char *type)
{
	const ProtobufCMessageDescriptor *d = pbtxt_find_message(type);

	if (!d)
		FAIL("message type %s not found", type);
	return d;
}

/* Parses @text as @type; fails the test unless it succeeds. Caller frees @out. */
static void enc_ok_at(const char *file, int line, const char *type, const char *text,
		      struct buf *out)
{
	struct pbtxt_error err;
	int rc;

	buf_init(out);
	rc = pbtxt_parse(must_find(type), text, strlen(text), out, &err);
	if (rc != 0)
		harness_fail(file, line, "parse of <<%s>> as %s failed (%d): %s", text, type, rc,
			     err.msg);
}
#define enc_ok(type, text, out) enc_ok_at(__FILE__, __LINE__, type, text, out)

/* Parses @text as @type; fails the test unless it is rejected with -EINVAL.
 * Return: the error message (static storage, valid until the next call). */
static const char *enc_err_at(const char *file, int line, const char *type, const char *text)
{
	static struct pbtxt_error err;
	struct buf out = BUF_INIT;
	int rc;

	rc = pbtxt_parse(must_find(type), text, strlen(text), &out, &err);
	buf_fini(&out);
	if (rc != -EINVAL)
		harness_fail(file, line, "parse of <<%s>> as %s: expected -EINVAL, got %d", text,
			     type, rc);
	if (err.msg[0] == '\0' || err.line < 1 || err.col < 1)
		harness_fail(file, line, "parse of <<%s>>: error without message or position (%d:%d)",
			     text, err.line, err.col);
	return err.msg;
}
#define enc_err(type, text) enc_err_at(__FILE__, __LINE__, type, text)

/* Asserts that @hay contains @needle. */
#define ASSERT_CONTAINS(hay, needle)                                                 \
	do {                                                                         \
		const char *h_ = (hay), *n_ = (needle);                              \
		if (!h_ || !strstr(h_, n_))                                          \
			FAIL("expected \"%s\" to contain \"%s\"", h_ ? h_ : "(null)", n_); \
	} while (0)

/* Prints binary @data as @type; fails unless it succeeds. Return: malloc'd text. */
static char *print_ok_at(const char *file, int line, const char *type, const uint8_t *data,
			 size_t len)
{
	struct buf out = BUF_INIT;
	struct pbtxt_error err;
	int rc;

	rc = pbtxt_print(must_find(type), data, len, &out, &err);
	if (rc != 0)
		harness_fail(file, line, "print as %s failed (%d): %s", type, rc, err.msg);
	buf_cstr(&out);
	return (char *)buf_take(&out, NULL);
}
#define print_ok(type, data, len) print_ok_at(__FILE__, __LINE__, type, data, len)

/* DummyFields of TestConfig has one optional field of every scalar type. */
#define DUMMY "TestConfig.DummyFields"
#define COMPACT "FtraceEventBundle.CompactSched"

static Perfetto__Protos__TestConfig__DummyFields *dummy(const char *text)
{
	Perfetto__Protos__TestConfig__DummyFields *m;
	struct buf out;

	enc_ok(DUMMY, text, &out);
	m = (Perfetto__Protos__TestConfig__DummyFields *)protobuf_c_message_unpack(
		&perfetto__protos__test_config__dummy_fields__descriptor, NULL, out.len, out.data);
	if (!m)
		FAIL("protobuf-c cannot unpack the encoding of <<%s>>", text);
	buf_fini(&out);
	return m;
}

static void dummy_free(Perfetto__Protos__TestConfig__DummyFields *m)
{
	protobuf_c_message_free_unpacked(&m->base, NULL);
}

/* Encodes @text as DummyFields and compares with the exact bytes @want. */
static void expect_bytes_at(const char *file, int line, const char *text, const uint8_t *want,
			    size_t n)
{
	struct buf out;

	enc_ok_at(file, line, DUMMY, text, &out);
	if (out.len != n)
		harness_fail(file, line, "<<%s>> encodes to %zu bytes, expected %zu", text, out.len,
			     n);
	harness_check_mem(out.data, want, n, "encoding", "expected", file, line);
	buf_fini(&out);
}
#define EXPECT_BYTES(text, ...)                                                      \
	do {                                                                         \
		static const uint8_t want_[] = {__VA_ARGS__};                        \
		expect_bytes_at(__FILE__, __LINE__, text, want_, sizeof(want_));     \
	} while (0)

static Perfetto__Protos__TraceConfig *trace_config(const char *text)
{
	Perfetto__Protos__TraceConfig *tc;
	struct buf out;

	enc_ok("TraceConfig", text, &out);
	tc = perfetto__protos__trace_config__unpack(NULL, out.len, out.data);
	if (!tc)
		FAIL("protobuf-c cannot unpack the encoding of <<%s>>", text);
	buf_fini(&out);
	return tc;
}

static bool same_encoding(const char *type, const char *a, const char *b)
{
	struct buf ea, eb;
	bool same;

	enc_ok(type, a, &ea);
	enc_ok(type, b, &eb);
	same = ea.len == eb.len && (ea.len == 0 || memcmp(ea.data, eb.data, ea.len) == 0);
	buf_fini(&ea);
	buf_fini(&eb);
	return same;
}

/* Reads a whole file; NULL if it cannot. */
static char *slurp(const char *path, size_t *len)
{
	struct buf b = BUF_INIT;
	char tmp[4096];
	size_t n;
	FILE *f = fopen(path, "rb");

	if (!f)
		return NULL;
	while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0)
		if (buf_append(&b, tmp, n))
			FAIL("out of memory");
	fclose(f);
	buf_cstr(&b);
	return (char *)buf_take(&b, len);
}

/* The configs/ directory: from the repo root (make test) or next to this file. */
static const char *configs_dir(void)
{
	static char path[512];
	const char *slash = strrchr(__FILE__, '/');
	DIR *d = opendir("configs");

	if (d) {
		closedir(d);
		return "configs";
	}
	if (slash && (size_t)(slash - __FILE__) + 32 < sizeof(path)) {
		snprintf(path, sizeof(path), "%.*s/../../configs", (int)(slash - __FILE__), __FILE__);
		d = opendir(path);
		if (d) {
			closedir(d);
			return path;
		}
	}
	return NULL;
}

/* A config exercising most of the syntax, used by the truncation tests. */
static const char k_rich_config[] =
	"# leading comment\n"
	"buffers { size_kb: 1024 fill_policy: RING_BUFFER }  # trailing\n"
	"buffers: < size_kb: 0x10; fill_policy: 2, name: \"b\\x41\\101\\u00e9\" 'x' >\n"
	"data_sources {\n"
	"  config {\n"
	"    name: \"linux.ftrace\"\n"
	"    target_buffer: 1\n"
	"    ftrace_config { ftrace_events: [\"sched/sched_switch\", 'power/*'] }\n"
	"    for_testing { dummy_fields { field_int32: -5 field_double: -1.5e-3\n"
	"      field_float: inf field_sint64: -9223372036854775808 field_bytes: '\\0' } }\n"
	"  }\n"
	"  producer_name_filter: [\"a\", \"b\"]\n"
	"}\n"
	"duration_ms: 017\n"
	"trigger_config { triggers: [{ name: \"t\" skip_probability: .5 }, < name: 'u' >] }\n"
	"builtin_data_sources { primary_trace_clock: BUILTIN_CLOCK_BOOTTIME }\n"
	"enable_extra_guardrails: True\n";

/* ------------------------------------------------------ scalar types ---- */

TEST(int32_encoding)
{
	Perfetto__Protos__TestConfig__DummyFields *m;

	/* field 2, varint: negative int32 is sign-extended to 10 bytes. */
	EXPECT_BYTES("field_int32: -1", 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		     0xff, 0x01);
	EXPECT_BYTES("field_int32: -2147483648", 0x10, 0x80, 0x80, 0x80, 0x80, 0xf8, 0xff, 0xff,
		     0xff, 0xff, 0x01);
	EXPECT_BYTES("field_int32: 2147483647", 0x10, 0xff, 0xff, 0xff, 0xff, 0x07);
	EXPECT_BYTES("field_int32: 0", 0x10, 0x00);
	EXPECT_BYTES("field_int32: -0", 0x10, 0x00);
	m = dummy("field_int32: -123456");
	ASSERT_TRUE(m->has_field_int32);
	ASSERT_EQ(m->field_int32, -123456);
	dummy_free(m);
}

TEST(int64_and_uint_encoding)
{
	Perfetto__Protos__TestConfig__DummyFields *m;

	EXPECT_BYTES("field_int64: -9223372036854775808", 0x20, 0x80, 0x80, 0x80, 0x80, 0x80,
		     0x80, 0x80, 0x80, 0x80, 0x01);
	EXPECT_BYTES("field_uint64: 18446744073709551615", 0x18, 0xff, 0xff, 0xff, 0xff, 0xff,
		     0xff, 0xff, 0xff, 0xff, 0x01);
	EXPECT_BYTES("field_uint32: 4294967295", 0x08, 0xff, 0xff, 0xff, 0xff, 0x0f);
	EXPECT_BYTES("field_uint32: 300", 0x08, 0xac, 0x02);
	m = dummy("field_int64: 9223372036854775807 field_uint64: 18446744073709551615 "
		  "field_uint32: 4294967295");
	ASSERT_EQ(m->field_int64, INT64_MAX);
	ASSERT_U64_EQ(m->field_uint64, UINT64_MAX);
	ASSERT_U64_EQ(m->field_uint32, UINT32_MAX);
	dummy_free(m);
	m = dummy("field_int64: -9223372036854775808");
	ASSERT_EQ(m->field_int64, INT64_MIN);
	dummy_free(m);
}

TEST(sint_zigzag_encoding)
{
	Perfetto__Protos__TestConfig__DummyFields *m;

	/* field 12 (sint32), field 11 (sint64): zigzag. */
	EXPECT_BYTES("field_sint32: -1", 0x60, 0x01);
	EXPECT_BYTES("field_sint32: 1", 0x60, 0x02);
	EXPECT_BYTES("field_sint32: -64", 0x60, 0x7f);
	EXPECT_BYTES("field_sint32: 2147483647", 0x60, 0xfe, 0xff, 0xff, 0xff, 0x0f);
	EXPECT_BYTES("field_sint32: -2147483648", 0x60, 0xff, 0xff, 0xff, 0xff, 0x0f);
	EXPECT_BYTES("field_sint64: -9223372036854775808", 0x58, 0xff, 0xff, 0xff, 0xff, 0xff,
		     0xff, 0xff, 0xff, 0xff, 0x01);
	EXPECT_BYTES("field_sint64: 9223372036854775807", 0x58, 0xfe, 0xff, 0xff, 0xff, 0xff,
		     0xff, 0xff, 0xff, 0xff, 0x01);
	m = dummy("field_sint32: -2147483648 field_sint64: -9223372036854775808");
	ASSERT_EQ(m->field_sint32, INT32_MIN);
	ASSERT_EQ(m->field_sint64, INT64_MIN);
	dummy_free(m);
	m = dummy("field_sint32: 12345 field_sint64: -987654321012");
	ASSERT_EQ(m->field_sint32, 12345);
	ASSERT_EQ(m->field_sint64, -987654321012LL);
	dummy_free(m);
}

TEST(fixed_encoding)
{
	Perfetto__Protos__TestConfig__DummyFields *m;

	/* fixed32 = 7, sfixed32 = 8, fixed64 = 5, sfixed64 = 6; little endian. */
	EXPECT_BYTES("field_fixed32: 0x01020304", 0x3d, 0x04, 0x03, 0x02, 0x01);
	EXPECT_BYTES("field_fixed32: 4294967295", 0x3d, 0xff, 0xff, 0xff, 0xff);
	EXPECT_BYTES("field_sfixed32: -1", 0x45, 0xff, 0xff, 0xff, 0xff);
	EXPECT_BYTES("field_sfixed32: -2147483648", 0x45, 0x00, 0x00, 0x00, 0x80);
	EXPECT_BYTES("field_fixed64: 0x0102030405060708", 0x29, 0x08, 0x07, 0x06, 0x05, 0x04,
		     0x03, 0x02, 0x01);
	EXPECT_BYTES("field_sfixed64: -2", 0x31, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff);
	m = dummy("field_fixed32: 4294967295 field_sfixed32: -7 field_fixed64: "
		  "18446744073709551615 field_sfixed64: -9223372036854775808");
	ASSERT_U64_EQ(m->field_fixed32, UINT32_MAX);
	ASSERT_EQ(m->field_sfixed32, -7);
	ASSERT_U64_EQ(m->field_fixed64, UINT64_MAX);
	ASSERT_EQ(m->field_sfixed64, INT64_MIN);
	dummy_free(m);
}

TEST(float_and_double_values)
{
	static const struct {
		const char *text;
		double d;
	} cases[] = {
		{"1e-5", 1e-5},     {".5", 0.5},         {"1.5", 1.5},       {"-2.25", -2.25},
		{"3", 3.0},         {"1E3", 1000.0},     {"2.5e+2", 250.0},  {"-.125", -0.125},
		{"1.5f", 1.5},      {"7F", 7.0},         {"0.1", 0.1},       {"1e308", 1e308},
		{"0", 0.0},         {"-0", -0.0},        {"4.9e-324", 4.9e-324},
	};
	Perfetto__Protos__TestConfig__DummyFields *m;
	char text[128];
	size_t i;

	for (i = 0; i < PFC_ARRAY_SIZE(cases); i++) {
		snprintf(text, sizeof(text), "field_double: %s", cases[i].text);
		m = dummy(text);
		ASSERT_TRUE(m->has_field_double);
		if (memcmp(&m->field_double, &cases[i].d, sizeof(double)) != 0)
			FAIL("%s: got %.17g, want %.17g", text, m->field_double, cases[i].d);
		dummy_free(m);
		if (fabs(cases[i].d) > 3.4e38)
			continue;
		snprintf(text, sizeof(text), "field_float: %s", cases[i].text);
		m = dummy(text);
		ASSERT_TRUE(m->has_field_float);
		if (m->field_float != (float)cases[i].d)
			FAIL("%s: got %.9g, want %.9g", text, (double)m->field_float,
			     (double)(float)cases[i].d);
		dummy_free(m);
	}
	/* Exact bytes: 1.5f is 0x3fc00000, 1.5 is 0x3ff8000000000000. */
	EXPECT_BYTES("field_float: 1.5f", 0x55, 0x00, 0x00, 0xc0, 0x3f);
	EXPECT_BYTES("field_double: 1.5", 0x49, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f);
	/* Integers are valid float values; 3.4028235e38 (FLT_MAX rounded) still fits a float. */
	m = dummy("field_float: 3.4028235e38 field_double: 12");
	ASSERT_TRUE(m->field_float == 3.40282346638528859811704183484516925440e+38f);
	ASSERT_TRUE(m->field_double == 12.0);
	dummy_free(m);
}

TEST(float_special_values)
{
	Perfetto__Protos__TestConfig__DummyFields *m;

	m = dummy("field_double: inf field_float: -inf");
	ASSERT_TRUE(isinf(m->field_double) && m->field_double > 0);
	ASSERT_TRUE(isinf(m->field_float) && m->field_float < 0);
	dummy_free(m);
	m = dummy("field_double: -inf field_float: inf");
	ASSERT_TRUE(isinf(m->field_double) && m->field_double < 0);
	ASSERT_TRUE(isinf(m->field_float) && m->field_float > 0);
	dummy_free(m);
	m = dummy("field_double: nan field_float: nan");
	ASSERT_TRUE(isnan(m->field_double));
	ASSERT_TRUE(isnan(m->field_float));
	dummy_free(m);
	m = dummy("field_double: infinity field_float: Infinity");
	ASSERT_TRUE(isinf(m->field_double));
	ASSERT_TRUE(isinf(m->field_float));
	dummy_free(m);
	m = dummy("field_double: NaN");
	ASSERT_TRUE(isnan(m->field_double));
	dummy_free(m);
	enc_err(DUMMY, "field_double: infinite");
	enc_err(DUMMY, "field_double: nanx");
	enc_err(DUMMY, "field_float: \"1.5\"");
}

TEST(bool_values)
{
	static const struct {
		const char *text;
		bool v;
	} cases[] = {
		{"true", true}, {"false", false}, {"t", true},     {"f", false},
		{"1", true},    {"0", false},     {"True", true},  {"False", false},
	};
	Perfetto__Protos__TestConfig *tc;
	struct buf out;
	char text[64];
	size_t i;

	for (i = 0; i < PFC_ARRAY_SIZE(cases); i++) {
		snprintf(text, sizeof(text), "send_batch_on_register: %s", cases[i].text);
		enc_ok("TestConfig", text, &out);
		/* field 5, varint, 0 or 1 */
		ASSERT_EQ(out.len, 2);
		ASSERT_EQ(out.data[0], 0x28);
		ASSERT_EQ(out.data[1], cases[i].v);
		tc = perfetto__protos__test_config__unpack(NULL, out.len, out.data);
		ASSERT_TRUE(tc != NULL);
		ASSERT_TRUE(tc->has_send_batch_on_register);
		ASSERT_EQ(!!tc->send_batch_on_register, cases[i].v);
		perfetto__protos__test_config__free_unpacked(tc, NULL);
		buf_fini(&out);
	}
	ASSERT_CONTAINS(enc_err("TestConfig", "send_batch_on_register: 2"), "expected true or false");
	enc_err("TestConfig", "send_batch_on_register: yes");
	enc_err("TestConfig", "send_batch_on_register: TRUE");
	enc_err("TestConfig", "send_batch_on_register: -1");
	enc_err("TestConfig", "send_batch_on_register: -0");
	enc_err("TestConfig", "send_batch_on_register: \"true\"");
}

TEST(integer_limits_accepted)
{
	Perfetto__Protos__TestConfig__DummyFields *m;

	m = dummy("field_int32: -2147483648 field_uint32: 0 field_int64: 9223372036854775807 "
		  "field_sfixed32: 2147483647 field_fixed32: 0xffffffff "
		  "field_sfixed64: 9223372036854775807");
	ASSERT_EQ(m->field_int32, INT32_MIN);
	ASSERT_EQ(m->field_uint32, 0);
	ASSERT_EQ(m->field_int64, INT64_MAX);
	ASSERT_EQ(m->field_sfixed32, INT32_MAX);
	ASSERT_U64_EQ(m->field_fixed32, UINT32_MAX);
	ASSERT_EQ(m->field_sfixed64, INT64_MAX);
	dummy_free(m);
}

TEST(out_of_range_rejected)
{
	ASSERT_CONTAINS(enc_err(DUMMY, "field_uint32: 4294967296"), "out of range");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_int32: 2147483648"), "out of range");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_int32: -2147483649"), "out of range");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_uint32: -1"), "out of range");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_uint64: -1"), "out of range");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_fixed32: -1"), "out of range");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_fixed64: -1"), "out of range");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_uint64: 18446744073709551616"), "out of range");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_uint64: 99999999999999999999999"), "out of range");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_int64: 9223372036854775808"), "out of range");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_int64: -9223372036854775809"), "out of range");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_sint32: 2147483648"), "out of range");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_sint32: -2147483649"), "out of range");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_sfixed32: 0x80000000"), "out of range");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_fixed32: 0x100000000"), "out of range");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_float: 1e39"), "out of range");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_float: -1e39"), "out of range");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_float: 3.4028236e38"), "out of range");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_float: -3.4028236e38"), "out of range");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_sint64: -inf"), "expected an integer");
	ASSERT_STREQ(enc_err(DUMMY, "field_uint32: -x"),
		     "expected an integer, got '-x' for uint32 field 'field_uint32' in "
		     "TestConfig.DummyFields at 1:15");
	ASSERT_STREQ(enc_err(DUMMY, "field_int32: -"),
		     "expected an integer, got -end of input for int32 field 'field_int32' in "
		     "TestConfig.DummyFields at 1:14");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_double: 1e400"), "out of range");
	/* The message names the field, its type and the message. */
	ASSERT_STREQ(enc_err(DUMMY, "field_uint32: 4294967296"),
		     "out of range value '4294967296' for uint32 field 'field_uint32' in "
		     "TestConfig.DummyFields at 1:15");
	ASSERT_STREQ(enc_err(DUMMY, "field_int32: -2147483649"),
		     "out of range value '-2147483649' for int32 field 'field_int32' in "
		     "TestConfig.DummyFields at 1:14");
}

TEST(wrong_types_rejected)
{
	ASSERT_CONTAINS(enc_err(DUMMY, "field_int32: \"5\""), "expected an integer");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_int32: 1.5"), "expected an integer");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_int32: 1e3"), "expected an integer");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_uint64: 5.0"), "expected an integer");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_int32: abc"), "expected an integer");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_int32: inf"), "expected an integer");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_int32: 12abc"), "expected an integer");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_uint32: 0x"), "expected an integer");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_uint32: 0xg"), "expected an integer");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_uint32: 08"), "expected an integer");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_string: 5"), "expected a string");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_string: abc"), "expected a string");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_string: -\"a\""), "expected a string");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_bytes: 1"), "expected a string");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_double: \"1\""), "expected a number");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_double: 1.5.5"), "expected a number");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_double: 1e"), "expected a number");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_double: abc"), "expected a number");
	/* Scalars need a colon; messages need braces. */
	ASSERT_CONTAINS(enc_err(DUMMY, "field_int32 5"), "expected ':'");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_int32 { }"), "expected ':'");
	ASSERT_CONTAINS(enc_err("TraceConfig", "buffers: 5"), "expected '{'");
	ASSERT_CONTAINS(enc_err("TraceConfig", "buffers: \"x\""), "expected '{'");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_int32:"), "end of input");
	ASSERT_CONTAINS(enc_err(DUMMY, "5"), "expected a field name");
	ASSERT_CONTAINS(enc_err(DUMMY, ": 5"), "expected a field name");
	ASSERT_CONTAINS(enc_err(DUMMY, "[ext]: 5"), "extensions");
	ASSERT_STREQ(enc_err(DUMMY, "field_int32: \"5\""),
		     "expected an integer, got '\"5\"' for int32 field 'field_int32' in "
		     "TestConfig.DummyFields at 1:14");
}

/* ------------------------------------------------------------- enums ---- */

TEST(enum_by_name_and_number)
{
	Perfetto__Protos__TraceConfig *tc;

	tc = trace_config("buffers { fill_policy: DISCARD } buffers { fill_policy: 1 } "
			  "buffers { fill_policy: UNSPECIFIED } lockdown_mode: LOCKDOWN_SET");
	ASSERT_EQ(tc->n_buffers, 3);
	ASSERT_EQ(tc->buffers[0]->fill_policy,
		  PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__FILL_POLICY__DISCARD);
	ASSERT_EQ(tc->buffers[1]->fill_policy,
		  PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__FILL_POLICY__RING_BUFFER);
	ASSERT_TRUE(tc->buffers[2]->has_fill_policy);
	ASSERT_EQ(tc->buffers[2]->fill_policy, 0);
	ASSERT_EQ(tc->lockdown_mode, PERFETTO__PROTOS__TRACE_CONFIG__LOCKDOWN_MODE_OPERATION__LOCKDOWN_SET);
	perfetto__protos__trace_config__free_unpacked(tc, NULL);
	ASSERT_TRUE(same_encoding("TraceConfig", "buffers { fill_policy: DISCARD }",
				  "buffers { fill_policy: 2 }"));
	ASSERT_TRUE(same_encoding("TraceConfig", "buffers { fill_policy: RING_BUFFER }",
				  "buffers { fill_policy: 0x1 }"));
	ASSERT_FALSE(same_encoding("TraceConfig", "buffers { fill_policy: RING_BUFFER }",
				   "buffers { fill_policy: DISCARD }"));
}

TEST(enum_errors)
{
	ASSERT_STREQ(enc_err("TraceConfig", "buffers {\n  fill_policy: 7\n}"),
		     "7 is not a value of enum TraceConfig.BufferConfig.FillPolicy (field "
		     "'fill_policy' in TraceConfig.BufferConfig) at 2:16");
	ASSERT_CONTAINS(enc_err("TraceConfig", "buffers { fill_policy: -1 }"),
			"is not a value of enum");
	ASSERT_CONTAINS(enc_err("TraceConfig", "buffers { fill_policy: 4294967297 }"),
			"out of range");
	ASSERT_STREQ(enc_err("TraceConfig", "buffers { fill_policy: DISCRAD }"),
		     "unknown value 'DISCRAD' for enum TraceConfig.BufferConfig.FillPolicy (field "
		     "'fill_policy' in TraceConfig.BufferConfig) at 1:24; did you mean 'DISCARD'?");
	/* Nothing close: no suggestion. */
	ASSERT_STREQ(enc_err("TraceConfig", "buffers { fill_policy: ZZZZZZZZ }"),
		     "unknown value 'ZZZZZZZZ' for enum TraceConfig.BufferConfig.FillPolicy (field "
		     "'fill_policy' in TraceConfig.BufferConfig) at 1:24");
	/* Enum names are case sensitive, and a name of another enum is not accepted. */
	enc_err("TraceConfig", "buffers { fill_policy: discard }");
	enc_err("TraceConfig", "buffers { fill_policy: LOCKDOWN_SET }");
	enc_err("TraceConfig", "buffers { fill_policy: \"DISCARD\" }");
	enc_err("TraceConfig", "buffers { fill_policy: 1.0 }");
}

/* ----------------------------------------------------------- strings ---- */

TEST(string_escapes)
{
	static const char want[] = "\n\t\\\"'AA\xc3\xa9\xc3\xa9\r\a\b\f\v?\x01\x7f\xf0\x9f\x98\x80";
	Perfetto__Protos__TestConfig__DummyFields *m;

	m = dummy("field_string: \"\\n\\t\\\\\\\"\\'\\x41\\101\\u00e9\xc3\xa9\\r\\a\\b\\f\\v\\?"
		  "\\1\\177\\U0001F600\"");
	ASSERT_EQ(strlen(m->field_string), sizeof(want) - 1);
	ASSERT_STREQ(m->field_string, want);
	dummy_free(m);
	/* Single quotes, and the other quote needs no escape inside. */
	m = dummy("field_string: 'it\"s' field_bytes: \"a'b\"");
	ASSERT_STREQ(m->field_string, "it\"s");
	ASSERT_EQ(m->field_bytes.len, 3);
	ASSERT_MEMEQ(m->field_bytes.data, "a'b", 3);
	dummy_free(m);
	/* Bytes may hold NUL and any byte value. */
	m = dummy("field_bytes: \"\\000\\x00\\377\\xff\\0a\"");
	ASSERT_EQ(m->field_bytes.len, 6);
	ASSERT_MEMEQ(m->field_bytes.data, "\0\0\xff\xff\0a", 6);
	dummy_free(m);
	/* \x takes at most two digits; octal at most three. */
	m = dummy("field_string: \"\\x414\\1014\\x4\"");
	ASSERT_STREQ(m->field_string, "A4A4\x04");
	dummy_free(m);
	/* Empty string is present, not absent. */
	EXPECT_BYTES("field_string: \"\"", 0x6a, 0x00);
	EXPECT_BYTES("field_string: \"\\x41\"", 0x6a, 0x01, 0x41);
}

TEST(string_concatenation)
{
	Perfetto__Protos__TestConfig__DummyFields *m;

	m = dummy("field_string: \"a\" 'b' \"c\"");
	ASSERT_STREQ(m->field_string, "abc");
	dummy_free(m);
	m = dummy("field_string: \"a\"\n  # comment between\n  'b\\n'\"\" \"\\x43\" field_int32: 1");
	ASSERT_STREQ(m->field_string, "ab\nC");
	ASSERT_EQ(m->field_int32, 1);
	dummy_free(m);
	EXPECT_BYTES("field_bytes: \"\\001\" '\\002'", 0x72, 0x02, 0x01, 0x02);
}

TEST(string_errors)
{
	ASSERT_CONTAINS(enc_err(DUMMY, "field_string: \"abc"), "unterminated string");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_string: 'abc\""), "unterminated string");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_string: \"ab\nc\""), "unterminated string");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_string: \"abc\\\""), "unterminated string");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_string: \"abc\\"), "unterminated string");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_string: \"\\q\""), "unknown escape");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_string: \"\\x\""), "\\x escape");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_string: \"\\xg\""), "\\x escape");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_string: \"\\u12\""), "hex digits");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_string: \"\\U0000123\""), "hex digits");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_string: \"\\ud800\""), "code point");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_string: \"\\U00110000\""), "code point");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_string: \"\\400\""), "octal escape");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_string: \"a\\\nb\""), "escape");
	ASSERT_STREQ(enc_err(DUMMY, "\n  field_string: 'abc"),
		     "unterminated string at 2:17");
}

/* ---------------------------------------------------- integer syntax ---- */

TEST(hex_and_octal_integers)
{
	Perfetto__Protos__TestConfig__DummyFields *m;

	m = dummy("field_uint32: 0x1F field_int32: 017 field_uint64: 0XfFfFfFfFfFfFfFfF "
		  "field_int64: -0x8000000000000000 field_sint32: -010 field_fixed32: 00");
	ASSERT_EQ(m->field_uint32, 31);
	ASSERT_EQ(m->field_int32, 15);
	ASSERT_U64_EQ(m->field_uint64, UINT64_MAX);
	ASSERT_EQ(m->field_int64, INT64_MIN);
	ASSERT_EQ(m->field_sint32, -8);
	ASSERT_EQ(m->field_fixed32, 0);
	dummy_free(m);
	m = dummy("field_int32: -0x80000000 field_uint32: 037777777777");
	ASSERT_EQ(m->field_int32, INT32_MIN);
	ASSERT_U64_EQ(m->field_uint32, UINT32_MAX);
	dummy_free(m);
	ASSERT_CONTAINS(enc_err(DUMMY, "field_uint32: 0x100000000"), "out of range");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_uint32: 040000000000"), "out of range");
	ASSERT_CONTAINS(enc_err(DUMMY, "field_uint64: 0x10000000000000000"), "out of range");
	/* Hex floats are not text format. */
	enc_err(DUMMY, "field_int32: 0x1.8p1");
}

/* ------------------------------------------------------------ syntax ---- */

TEST(comments_everywhere)
{
	Perfetto__Protos__TraceConfig *tc;

	tc = trace_config("# head\n"
			  "buffers # after name\n"
			  "# own line\n"
			  "{ # after brace\n"
			  "  size_kb # before colon\n"
			  "  : # after colon\n"
			  "  42 # after value\n"
			  "  ; # after separator\n"
			  "} # after close\n"
			  "duration_ms: 5#no space\n"
			  "#last line without newline");
	ASSERT_EQ(tc->n_buffers, 1);
	ASSERT_EQ(tc->buffers[0]->size_kb, 42);
	ASSERT_EQ(tc->duration_ms, 5);
	perfetto__protos__trace_config__free_unpacked(tc, NULL);
	/* A '#' inside a string is not a comment. */
	tc = trace_config("unique_session_name: \"a#b\" # real comment");
	ASSERT_STREQ(tc->unique_session_name, "a#b");
	perfetto__protos__trace_config__free_unpacked(tc, NULL);
	/* Only comments and whitespace: an empty message. */
	tc = trace_config("# nothing\n  \t\r\n# here\n");
	ASSERT_EQ(tc->n_buffers, 0);
	ASSERT_FALSE(tc->has_duration_ms);
	perfetto__protos__trace_config__free_unpacked(tc, NULL);
}

TEST(message_syntax_variants)
{
	static const char *const forms[] = {
		"buffers { size_kb: 7 }",   "buffers: { size_kb: 7 }", "buffers < size_kb: 7 >",
		"buffers: < size_kb: 7 >",  "buffers{size_kb:7}",      "buffers\n{\nsize_kb\n:\n7\n}",
		"buffers: [{ size_kb: 7 }]", "buffers: [< size_kb: 7 >]", "buffers [{ size_kb: 7 }]",
	};
	struct buf first, b;
	Perfetto__Protos__TraceConfig *tc;
	size_t i;

	enc_ok("TraceConfig", forms[0], &first);
	for (i = 0; i < PFC_ARRAY_SIZE(forms); i++) {
		enc_ok("TraceConfig", forms[i], &b);
		if (b.len != first.len || memcmp(b.data, first.data, b.len) != 0)
			FAIL("form <<%s>> encodes differently from <<%s>>", forms[i], forms[0]);
		buf_fini(&b);
	}
	tc = perfetto__protos__trace_config__unpack(NULL, first.len, first.data);
	ASSERT_TRUE(tc != NULL);
	ASSERT_EQ(tc->n_buffers, 1);
	ASSERT_EQ(tc->buffers[0]->size_kb, 7);
	perfetto__protos__trace_config__free_unpacked(tc, NULL);
	buf_fini(&first);
	/* Empty messages are present. */
	tc = trace_config("buffers { } buffers: { } buffers < > buffers: < > builtin_data_sources {}");
	ASSERT_EQ(tc->n_buffers, 4);
	ASSERT_FALSE(tc->buffers[3]->has_size_kb);
	ASSERT_TRUE(tc->builtin_data_sources != NULL);
	perfetto__protos__trace_config__free_unpacked(tc, NULL);
	/* Mismatched and missing closers. */
	ASSERT_CONTAINS(enc_err("TraceConfig", "buffers { size_kb: 1 >"), "expected a field name");
	ASSERT_CONTAINS(enc_err("TraceConfig", "buffers < size_kb: 1 }"), "expected a field name");
	ASSERT_STREQ(enc_err("TraceConfig", "buffers {\n size_kb: 1\n"),
		     "missing '}' at the end of TraceConfig.BufferConfig at 3:1");
	ASSERT_CONTAINS(enc_err("TraceConfig", "buffers < size_kb: 1"), "missing '>'");
	ASSERT_CONTAINS(enc_err("TraceConfig", "}"), "expected a field name");
	ASSERT_CONTAINS(enc_err("TraceConfig", "buffers { } }"), "expected a field name");
}

TEST(separators)
{
	Perfetto__Protos__TraceConfig *tc;

	tc = trace_config("buffers { size_kb: 1; fill_policy: DISCARD, name: \"x\"; };"
			  "duration_ms: 3, enable_extra_guardrails: true;"
			  "data_sources { config { name: 'a', target_buffer: 0; }, },");
	ASSERT_EQ(tc->n_buffers, 1);
	ASSERT_EQ(tc->buffers[0]->size_kb, 1);
	ASSERT_STREQ(tc->buffers[0]->name, "x");
	ASSERT_EQ(tc->duration_ms, 3);
	ASSERT_TRUE(tc->enable_extra_guardrails);
	ASSERT_EQ(tc->n_data_sources, 1);
	ASSERT_STREQ(tc->data_sources[0]->config->name, "a");
	perfetto__protos__trace_config__free_unpacked(tc, NULL);
	/* One separator, not two; not before the first field. */
	enc_err("TraceConfig", "duration_ms: 3;; enable_extra_guardrails: true");
	enc_err("TraceConfig", "duration_ms: 3,, enable_extra_guardrails: true");
	enc_err("TraceConfig", "; duration_ms: 3");
	enc_err("TraceConfig", "duration_ms: ;3");
}

TEST(repeated_fields)
{
	Perfetto__Protos__TraceConfig *tc;

	tc = trace_config("buffers { size_kb: 1 } duration_ms: 2 buffers { size_kb: 3 }\n"
			  "activate_triggers: \"a\" activate_triggers: 'b'\n"
			  "data_sources { producer_name_filter: \"p\" producer_name_filter: \"q\" }\n"
			  "buffers { size_kb: 5 }");
	ASSERT_EQ(tc->n_buffers, 3);
	ASSERT_EQ(tc->buffers[0]->size_kb, 1);
	ASSERT_EQ(tc->buffers[1]->size_kb, 3);
	ASSERT_EQ(tc->buffers[2]->size_kb, 5);
	ASSERT_EQ(tc->n_activate_triggers, 2);
	ASSERT_STREQ(tc->activate_triggers[0], "a");
	ASSERT_STREQ(tc->activate_triggers[1], "b");
	ASSERT_EQ(tc->data_sources[0]->n_producer_name_filter, 2);
	ASSERT_STREQ(tc->data_sources[0]->producer_name_filter[1], "q");
	perfetto__protos__trace_config__free_unpacked(tc, NULL);
}

TEST(list_syntax)
{
	Perfetto__Protos__TraceConfig *tc;

	tc = trace_config("buffers: [{ size_kb: 1 }, { size_kb: 2 fill_policy: DISCARD }]\n"
			  "buffers: [< size_kb: 3 >]\n"
			  "activate_triggers: [\"x\", 'y' \"z\", \"w\"]\n"
			  "activate_triggers: []\n"
			  "buffers: []\n"
			  "trigger_config { triggers: [{name: \"a\"}, {name: \"b\"}] }");
	ASSERT_EQ(tc->n_buffers, 3);
	ASSERT_EQ(tc->buffers[0]->size_kb, 1);
	ASSERT_EQ(tc->buffers[1]->size_kb, 2);
	ASSERT_EQ(tc->buffers[1]->fill_policy,
		  PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__FILL_POLICY__DISCARD);
	ASSERT_EQ(tc->buffers[2]->size_kb, 3);
	ASSERT_EQ(tc->n_activate_triggers, 3);
	ASSERT_STREQ(tc->activate_triggers[0], "x");
	ASSERT_STREQ(tc->activate_triggers[1], "yz");
	ASSERT_STREQ(tc->activate_triggers[2], "w");
	ASSERT_EQ(tc->trigger_config->n_triggers, 2);
	ASSERT_STREQ(tc->trigger_config->triggers[1]->name, "b");
	perfetto__protos__trace_config__free_unpacked(tc, NULL);
	/* An empty list adds nothing at all. */
	ASSERT_TRUE(same_encoding("TraceConfig", "buffers: [] activate_triggers: []", ""));
	ASSERT_CONTAINS(enc_err("TraceConfig", "duration_ms: [1]"), "is not repeated");
	ASSERT_CONTAINS(enc_err("TraceConfig", "builtin_data_sources: [{}]"), "is not repeated");
	ASSERT_CONTAINS(enc_err("TraceConfig", "activate_triggers: [\"a\" \"b\" c]"),
			"expected ',' or ']'");
	ASSERT_CONTAINS(enc_err("TraceConfig", "activate_triggers: [\"a\"; \"b\"]"),
			"expected ',' or ']'");
	ASSERT_CONTAINS(enc_err("TraceConfig", "activate_triggers: [\"a\""), "expected ',' or ']'");
	/* As protoc: no trailing comma. */
	ASSERT_STREQ(enc_err("TraceConfig", "activate_triggers: [\"a\",\n]"),
		     "expected a value after ',' in list for field 'activate_triggers' at 2:1");
	enc_err("TraceConfig", "buffers: [{},]");
	enc_err(COMPACT, "switch_next_pid: [1,]");
	enc_err("TraceConfig", "activate_triggers: [,]");
	enc_err("TraceConfig", "activate_triggers: [\"a\",,\"b\"]");
	enc_err("TraceConfig", "buffers: [{ size_kb: 1 } { size_kb: 2 }]");
	enc_err("TraceConfig", "activate_triggers: [[\"a\"]]");
}

TEST(packed_fields)
{
	Perfetto__Protos__FtraceEventBundle__CompactSched *cs;
	struct pz_reader r;
	struct pz_field f;
	struct buf out;
	int n_fields = 0;

	enc_ok(COMPACT, "switch_next_pid: [1, -2, 300]\n"
			"switch_timestamp: [18446744073709551615]\n"
			"waking_pid: 7 waking_pid: 8\n"
			"intern_table: [\"a\", \"b\"]\n"
			"switch_prev_state: []",
	       &out);
	/* Wire shape: one packed record per list, plain tags for single values. */
	pz_reader_init(&r, out.data, out.len);
	while (pz_reader_next(&r, &f) > 0) {
		n_fields++;
		if (f.id == 3 || f.id == 1)
			ASSERT_EQ(f.wire_type, PZ_WIRE_LEN);
		if (f.id == 8)
			ASSERT_EQ(f.wire_type, PZ_WIRE_VARINT);
		ASSERT_NE(f.id, 2);
	}
	ASSERT_EQ(r.err, PZ_OK);
	ASSERT_EQ(n_fields, 6); /* pid list, ts list, 2 x waking_pid, 2 x intern_table */
	cs = (Perfetto__Protos__FtraceEventBundle__CompactSched *)protobuf_c_message_unpack(
		&perfetto__protos__ftrace_event_bundle__compact_sched__descriptor, NULL, out.len, out.data);
	ASSERT_TRUE(cs != NULL);
	ASSERT_EQ(cs->n_switch_next_pid, 3);
	ASSERT_EQ(cs->switch_next_pid[0], 1);
	ASSERT_EQ(cs->switch_next_pid[1], -2);
	ASSERT_EQ(cs->switch_next_pid[2], 300);
	ASSERT_EQ(cs->n_switch_timestamp, 1);
	ASSERT_U64_EQ(cs->switch_timestamp[0], UINT64_MAX);
	ASSERT_EQ(cs->n_waking_pid, 2);
	ASSERT_EQ(cs->waking_pid[1], 8);
	ASSERT_EQ(cs->n_intern_table, 2);
	ASSERT_STREQ(cs->intern_table[1], "b");
	ASSERT_EQ(cs->n_switch_prev_state, 0);
	protobuf_c_message_free_unpacked(&cs->base, NULL);
	buf_fini(&out);
	/* A packed int32 -1 is a 10-byte varint inside the record. */
	enc_ok(COMPACT, "switch_next_pid: [-1]", &out);
	pz_reader_init(&r, out.data, out.len);
	ASSERT_EQ(pz_reader_next(&r, &f), 1);
	ASSERT_EQ(f.size, 10);
	ASSERT_EQ(pz_reader_next(&r, &f), 0);
	buf_fini(&out);
	ASSERT_CONTAINS(enc_err(COMPACT, "switch_next_pid: [1, 2147483648]"), "out of range");
	ASSERT_CONTAINS(enc_err(COMPACT, "switch_next_pid: [1, \"2\"]"), "expected an integer");
	ASSERT_CONTAINS(enc_err(COMPACT, "waking_comm_index: [-1]"), "out of range");
}

TEST(singular_field_set_twice)
{
	ASSERT_STREQ(enc_err("TraceConfig", "duration_ms: 1\nduration_ms: 2"),
		     "field 'duration_ms' in TraceConfig is set more than once at 2:1");
	ASSERT_CONTAINS(enc_err("TraceConfig", "builtin_data_sources {} builtin_data_sources {}"),
			"set more than once");
	ASSERT_CONTAINS(enc_err("TraceConfig", "buffers { size_kb: 1 size_kb: 1 }"),
			"'size_kb' in TraceConfig.BufferConfig is set more than once");
	/* Per message instance, not per type. */
	ASSERT_TRUE(same_encoding("TraceConfig", "buffers { size_kb: 1 } buffers { size_kb: 2 }",
				  "buffers: [{ size_kb: 1 }, { size_kb: 2 }]"));
}

TEST(oneof_members_exclusive)
{
	struct buf out;

	enc_ok("TracePacket", "clock_snapshot { }", &out);
	buf_fini(&out);
	enc_ok("TracePacket", "process_tree { }", &out);
	buf_fini(&out);
	ASSERT_STREQ(enc_err("TracePacket", "clock_snapshot { }\nprocess_tree { }"),
		     "field 'process_tree' in TracePacket is set along with 'clock_snapshot' of the "
		     "same oneof at 2:1");
	ASSERT_CONTAINS(enc_err("DebugAnnotation", "name: \"a\" bool_value: true int_value: 3"),
			"same oneof");
	/* Members of different oneofs combine. */
	enc_ok("DebugAnnotation", "name: \"a\" bool_value: true proto_type_name: \"t\"", &out);
	buf_fini(&out);
	ASSERT_CONTAINS(enc_err("DebugAnnotation", "name_iid: 1 name: \"a\""), "same oneof");
}

TEST(error_positions)
{
	const char *msg;

	msg = enc_err("TraceConfig", "buffers {\n  size_kb: 1\n}\nduration_ms: -5\n");
	ASSERT_CONTAINS(msg, "at 4:14");
	msg = enc_err("TraceConfig", "\n\n\n   buffers {\n\tsize_kb: \"x\"\n}");
	ASSERT_CONTAINS(msg, "at 5:11");
	msg = enc_err("TraceConfig", "buffers { size_kb: 1 }\r\nbuffers { sizekb: 1 }");
	ASSERT_CONTAINS(msg, "at 2:11");
	ASSERT_CONTAINS(msg, "did you mean 'size_kb'?");
	msg = enc_err("TraceConfig", "# c1\n# c2 \"\n  duration_ms: 1 \"unterminated\n");
	ASSERT_CONTAINS(msg, "at 3:18");
	msg = enc_err("TraceConfig", "activate_triggers: \"a\"\n  \"b\"\n  \"\\q\"");
	ASSERT_CONTAINS(msg, "at 3:3");
	msg = enc_err("TraceConfig", "data_sources {\n  config {\n    name: \"x\"\n  }\n");
	ASSERT_CONTAINS(msg, "missing '}' at the end of TraceConfig.DataSource at 5:1");
	msg = enc_err("TraceConfig", "duration_ms: 1\n\n        $");
	ASSERT_CONTAINS(msg, "at 3:9");
	/* The structured fields agree with the message. */
	{
		static const char text[] = "buffers {\n  fill_policy: NOPE\n}";
		struct pbtxt_error err;
		struct buf out = BUF_INIT;

		ASSERT_EQ(pbtxt_parse(must_find("TraceConfig"), text, strlen(text), &out, &err),
			  -EINVAL);
		ASSERT_EQ(err.line, 2);
		ASSERT_EQ(err.col, 16);
		buf_fini(&out);
	}
}

TEST(unknown_field_suggestion)
{
	ASSERT_STREQ(enc_err("TraceConfig", "duration_ms: 1\nbufers {\n  size_kb: 1\n}\n"),
		     "unknown field 'bufers' in TraceConfig at 2:1; did you mean 'buffers'?");
	ASSERT_STREQ(enc_err("TraceConfig", "buffers { size_kbb: 1 }"),
		     "unknown field 'size_kbb' in TraceConfig.BufferConfig at 1:11; did you mean "
		     "'size_kb'?");
	ASSERT_STREQ(enc_err("TraceConfig", "zzzzzzzzzz: 1"),
		     "unknown field 'zzzzzzzzzz' in TraceConfig at 1:1");
	/* Field names are case sensitive. */
	ASSERT_CONTAINS(enc_err("TraceConfig", "Buffers {}"), "did you mean 'buffers'?");
	ASSERT_CONTAINS(enc_err("TraceConfig", "data_sources { config { nme: \"x\" } }"),
			"unknown field 'nme' in DataSourceConfig at 1:25; did you mean 'name'?");
	/* A very long name is reported, shortened or not, without overflow. */
	{
		char text[600];

		memset(text, 'a', 500);
		memcpy(text + 500, ": 1", 4);
		ASSERT_CONTAINS(enc_err("TraceConfig", text), "in TraceConfig at 1:1");
	}
}

/* Builds @n levels of DebugAnnotation dict_entries { ... }. */
static char *nested_annotations(int n, const char *open, const char *close)
{
	size_t lo = strlen(open), lc = strlen(close);
	char *s = malloc((size_t)n * (lo + lc) + 1), *p = s;
	int i;

	ASSERT_TRUE(s != NULL);
	for (i = 0; i < n; i++, p += lo)
		memcpy(p, open, lo);
	for (i = 0; i < n; i++, p += lc)
		memcpy(p, close, lc);
	*p = '\0';
	return s;
}

TEST(nesting_limit)
{
	const ProtobufCMessageDescriptor *d = must_find("DebugAnnotation");
	struct pbtxt_error err;
	struct buf out = BUF_INIT;
	char *text, *printed;
	int depth;

	/* PBTXT_MAX_DEPTH levels are fine, one more is not. */
	text = nested_annotations(PBTXT_MAX_DEPTH, "dict_entries {", "}");
	ASSERT_EQ(pbtxt_parse(d, text, strlen(text), &out, &err), 0);
	printed = print_ok("DebugAnnotation", out.data, out.len);
	for (depth = 0; strstr(printed, "dict_entries {") ; depth++)
		memset(strstr(printed, "dict_entries {"), 'x', 1);
	ASSERT_EQ(depth, PBTXT_MAX_DEPTH);
	free(printed);
	free(text);
	buf_fini(&out);
	text = nested_annotations(PBTXT_MAX_DEPTH + 1, "dict_entries {", "}");
	ASSERT_EQ(pbtxt_parse(d, text, strlen(text), &out, &err), -EINVAL);
	ASSERT_CONTAINS(err.msg, "nested deeper than");
	ASSERT_EQ(err.line, 1);
	ASSERT_EQ(err.col, 14 * PBTXT_MAX_DEPTH + 14);
	free(text);
	/* Far deeper, and unterminated: rejected without recursing further. */
	text = nested_annotations(200000, "array_values<", "");
	ASSERT_EQ(pbtxt_parse(d, text, strlen(text), &out, &err), -EINVAL);
	ASSERT_CONTAINS(err.msg, "nested deeper than");
	free(text);
	text = nested_annotations(100000, "array_values{", "}");
	ASSERT_EQ(pbtxt_parse(d, text, strlen(text), &out, &err), -EINVAL);
	ASSERT_CONTAINS(err.msg, "nested deeper than");
	free(text);
	ASSERT_EQ(out.len, 0);
	buf_fini(&out);
}

/* Parses every prefix of @text from an exact-size heap copy (so ASan sees
 * any over-read); each must parse or fail cleanly. Return: prefixes that parsed. */
static int parse_prefixes(const char *type, const char *text, size_t len)
{
	const ProtobufCMessageDescriptor *d = must_find(type);
	int n_ok = 0;
	size_t n;

	for (n = 0; n <= len; n++) {
		char *copy = malloc(n ? n : 1);
		struct pbtxt_error err;
		struct buf out = BUF_INIT;
		int rc;

		ASSERT_TRUE(copy != NULL);
		memcpy(copy, text, n);
		rc = pbtxt_parse(d, copy, n, &out, &err);
		if (rc == 0) {
			n_ok++;
		} else {
			if (rc != -EINVAL)
				FAIL("prefix of %zu bytes: rc %d", n, rc);
			if (err.msg[0] == '\0' || err.line < 1 || err.col < 1)
				FAIL("prefix of %zu bytes: error without message/position", n);
			if (out.len != 0)
				FAIL("prefix of %zu bytes: output appended on error", n);
		}
		buf_fini(&out);
		free(copy);
	}
	return n_ok;
}

TEST(truncated_text_never_crashes)
{
	int n_ok;

	n_ok = parse_prefixes("TraceConfig", k_rich_config, strlen(k_rich_config));
	/* The whole text parses, and so do the prefixes that end between fields. */
	ASSERT_GE(n_ok, 3);
	ASSERT_LT(n_ok, (int)strlen(k_rich_config) / 2);
	{
		struct buf out;

		enc_ok("TraceConfig", k_rich_config, &out);
		buf_fini(&out);
	}
	parse_prefixes(DUMMY, "field_string: \"\\x41\\101\\u00e9\\U0001F600\" 'b' field_double: -1.5e-3f "
			      "field_int32: -0x10 field_uint64: 18446744073709551615",
		       strlen("field_string: \"\\x41\\101\\u00e9\\U0001F600\" 'b' field_double: -1.5e-3f "
			      "field_int32: -0x10 field_uint64: 18446744073709551615"));
}

/* Calls @fn on each .pbtxt file in configs/; returns how many it read. */
static int for_each_config(void (*fn)(const char *name, const char *text, size_t len))
{
	const char *dir = configs_dir();
	struct dirent *de;
	DIR *d = opendir(dir);
	int n_files = 0;

	ASSERT_TRUE(d != NULL);
	while ((de = readdir(d))) {
		char path[1024];
		size_t len, n = strlen(de->d_name);
		char *text;

		if (n < 6 || strcmp(de->d_name + n - 6, ".pbtxt") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		text = slurp(path, &len);
		ASSERT_TRUE(text != NULL);
		fn(de->d_name, text, len);
		free(text);
		n_files++;
	}
	closedir(d);
	return n_files;
}

static void parse_config_prefixes(const char *name, const char *text, size_t len)
{
	(void)name;
	ASSERT_GE(parse_prefixes("TraceConfig", text, len), 1);
}

TEST(truncated_configs_never_crash)
{
	if (!configs_dir())
		SKIP("configs/ not found");
	ASSERT_GT(for_each_config(parse_config_prefixes), 0);
}

TEST(garbage_rejected)
{
	static const struct {
		const char *text;
		size_t len;
	} cases[] = {
		{"\0", 1},
		{"buffers {\0}", 11},
		{"\xff\xfe\x00\x01", 4},
		{"\x0a\x04\x08\x80\x08\x00", 6}, /* a binary TraceConfig */
		{"@", 1},
		{"buffers { size_kb: 1 } !", 24},
		{"duration_ms: 1 / 2", 18},
		{"duration_ms = 1", 15},
		{"{}", 2},
		{"\"duration_ms\": 1", 16},
		{"duration_ms: 1\x80", 15},
	};
	const ProtobufCMessageDescriptor *d = must_find("TraceConfig");
	size_t i;
	unsigned seed = 12345;

	for (i = 0; i < PFC_ARRAY_SIZE(cases); i++) {
		struct pbtxt_error err;
		struct buf out = BUF_INIT;

		if (pbtxt_parse(d, cases[i].text, cases[i].len, &out, &err) != -EINVAL)
			FAIL("garbage case %zu was not rejected", i);
		ASSERT_TRUE(err.msg[0] != '\0');
		ASSERT_CONTAINS(err.msg, " at ");
		buf_fini(&out);
	}
	/* A NUL byte is reported readably, not as a cut-off message. */
	{
		struct pbtxt_error err;
		struct buf out = BUF_INIT;

		ASSERT_EQ(pbtxt_parse(d, "\n \0", 3, &out, &err), -EINVAL);
		ASSERT_CONTAINS(err.msg, "at 2:2");
		ASSERT_CONTAINS(err.msg, "0x00");
		buf_fini(&out);
	}
	/* Random bytes: never a crash, and never a success in practice. */
	for (i = 0; i < 2000; i++) {
		uint8_t bytes[64];
		size_t n = 1 + i % sizeof(bytes), k;
		struct pbtxt_error err;
		struct buf out = BUF_INIT;
		int rc;

		for (k = 0; k < n; k++) {
			seed = seed * 1103515245u + 12345u;
			bytes[k] = (uint8_t)(seed >> 16);
		}
		rc = pbtxt_parse(d, (const char *)bytes, n, &out, &err);
		ASSERT_TRUE(rc == 0 || rc == -EINVAL);
		buf_fini(&out);
	}
}

TEST(output_appends_to_buffer)
{
	struct pbtxt_error err;
	struct buf out = BUF_INIT;

	ASSERT_EQ(buf_append(&out, "XY", 2), 0);
	ASSERT_EQ(pbtxt_parse(must_find("TraceConfig"), "duration_ms: 1", 14, &out, &err), 0);
	ASSERT_EQ(out.len, 4);
	ASSERT_MEMEQ(out.data, "XY\x18\x01", 4);
	/* Failure leaves what was there. */
	ASSERT_EQ(pbtxt_parse(must_find("TraceConfig"), "duration_ms: x", 14, &out, &err), -EINVAL);
	ASSERT_EQ(out.len, 4);
	buf_fini(&out);
}

TEST(huge_output_rejected)
{
	size_t n = PBTXT_MAX_OUTPUT_BYTES + 16, len;
	const char *head = "field_bytes: \"";
	struct pbtxt_error err;
	struct buf out = BUF_INIT;
	char *text;
	int rc;

	len = strlen(head) + n + 1;
	text = malloc(len);
	ASSERT_TRUE(text != NULL);
	memcpy(text, head, strlen(head));
	memset(text + strlen(head), 'a', n);
	text[len - 1] = '"';
	rc = pbtxt_parse(must_find(DUMMY), text, len, &out, &err);
	ASSERT_EQ(rc, -EFBIG);
	ASSERT_CONTAINS(err.msg, "larger than");
	ASSERT_EQ(out.len, 0);
	free(text);
	buf_fini(&out);
}

/* ----------------------------------------------------------- printer ---- */

TEST(print_all_scalars)
{
	static const char text[] =
		"field_uint32: 4294967295 field_int32: -2147483648 field_uint64: 18446744073709551615 "
		"field_int64: -9223372036854775808 field_fixed64: 18446744073709551615 "
		"field_sfixed64: -5 field_fixed32: 7 field_sfixed32: -7 field_double: 0.1 "
		"field_float: 1.5 field_sint64: -3 field_sint32: -4 "
		"field_string: \"a\\\"b\\\\c\\n\\t\\r\\x01\\x7f\xc3\xa9'\" field_bytes: \"\\000\\377\"";
	static const char want[] =
		"field_uint32: 4294967295\n"
		"field_int32: -2147483648\n"
		"field_uint64: 18446744073709551615\n"
		"field_int64: -9223372036854775808\n"
		"field_fixed64: 18446744073709551615\n"
		"field_sfixed64: -5\n"
		"field_fixed32: 7\n"
		"field_sfixed32: -7\n"
		"field_double: 0.1\n"
		"field_float: 1.5\n"
		"field_sint64: -3\n"
		"field_sint32: -4\n"
		"field_string: \"a\\\"b\\\\c\\n\\t\\r\\001\\177\xc3\xa9\\'\"\n"
		"field_bytes: \"\\000\\377\"\n";
	struct buf bin, bin2;
	char *printed;

	enc_ok(DUMMY, text, &bin);
	printed = print_ok(DUMMY, bin.data, bin.len);
	ASSERT_STREQ(printed, want);
	/* And the printed text encodes to the same bytes. */
	enc_ok(DUMMY, printed, &bin2);
	ASSERT_EQ(bin2.len, bin.len);
	ASSERT_MEMEQ(bin2.data, bin.data, bin.len);
	free(printed);
	buf_fini(&bin);
	buf_fini(&bin2);
}

TEST(print_floats_round_trip)
{
	static const char *const values[] = {
		"0.1", "1e-5", "0.5", "-2.25", "3.4028234663852886e38", "1e308", "4.9e-324",
		"123456789.123", "inf", "-inf", "nan", "-0", "1.17549435e-38", "2.2250738585072014e-308",
	};
	char text[128], *printed;
	size_t i;

	for (i = 0; i < PFC_ARRAY_SIZE(values); i++) {
		int is_float;

		for (is_float = 0; is_float < 2; is_float++) {
			struct buf bin, bin2;

			snprintf(text, sizeof(text), "%s: %s",
				 is_float ? "field_float" : "field_double", values[i]);
			if (is_float && strstr(values[i], "e308"))
				continue;
			enc_ok(DUMMY, text, &bin);
			printed = print_ok(DUMMY, bin.data, bin.len);
			enc_ok(DUMMY, printed, &bin2);
			if (bin.len != bin2.len || memcmp(bin.data, bin2.data, bin.len) != 0)
				FAIL("<<%s>> printed as <<%s>> does not read back", text, printed);
			free(printed);
			buf_fini(&bin);
			buf_fini(&bin2);
		}
	}
	/* Shortest form for common values. */
	{
		struct buf bin;

		enc_ok(DUMMY, "field_float: 0.1 field_double: 0.3", &bin);
		printed = print_ok(DUMMY, bin.data, bin.len);
		ASSERT_STREQ(printed, "field_float: 0.1\nfield_double: 0.3\n");
		free(printed);
		buf_fini(&bin);
		enc_ok(DUMMY, "field_double: -inf field_float: nan", &bin);
		printed = print_ok(DUMMY, bin.data, bin.len);
		ASSERT_STREQ(printed, "field_double: -inf\nfield_float: nan\n");
		free(printed);
		buf_fini(&bin);
	}
}

TEST(print_nested_and_enums)
{
	static const char want[] =
		"buffers {\n"
		"  size_kb: 1024\n"
		"  fill_policy: DISCARD\n"
		"}\n"
		"data_sources {\n"
		"  config {\n"
		"    name: \"x\"\n"
		"    ftrace_config {\n"
		"    }\n"
		"  }\n"
		"}\n"
		"duration_ms: 5\n"
		"enable_extra_guardrails: true\n"
		"lockdown_mode: LOCKDOWN_CLEAR\n";
	struct buf bin;
	char *printed;

	enc_ok("TraceConfig",
	       "buffers { size_kb: 1024 fill_policy: 2 } data_sources { config { name: 'x' "
	       "ftrace_config {} } } duration_ms: 5 enable_extra_guardrails: 1 lockdown_mode: 1",
	       &bin);
	printed = print_ok("TraceConfig", bin.data, bin.len);
	ASSERT_STREQ(printed, want);
	free(printed);
	buf_fini(&bin);
}

TEST(print_string_and_bytes_escaping)
{
	static const struct {
		const char *text; /* field_string value as text */
		const char *want; /* printed value */
	} cases[] = {
		{"\"\xc3\xa9\"", "\"\xc3\xa9\""},                         /* U+00E9 passes through */
		{"\"\xe2\x82\xac\xf0\x9f\x98\x80\"", "\"\xe2\x82\xac\xf0\x9f\x98\x80\""},
		{"\"\\377\"", "\"\\377\""},                               /* invalid lead byte */
		{"\"\\300\\200\"", "\"\\300\\200\""},                     /* overlong NUL */
		{"\"\\342\\202\"", "\"\\342\\202\""},                     /* truncated sequence */
		{"\"\\355\\240\\200\"", "\"\\355\\240\\200\""},           /* surrogate */
		{"\"\\364\\220\\200\\200\"", "\"\\364\\220\\200\\200\""}, /* past U+10FFFF */
		{"\"a\\303\"", "\"a\\303\""},                             /* cut at the end */
		{"\"\\303\\251x\\251\"", "\"\xc3\xa9x\\251\""},           /* stray continuation */
	};
	char text[128], want[128], *printed;
	struct buf bin;
	size_t i;

	for (i = 0; i < PFC_ARRAY_SIZE(cases); i++) {
		snprintf(text, sizeof(text), "field_string: %s", cases[i].text);
		snprintf(want, sizeof(want), "field_string: %s\n", cases[i].want);
		enc_ok(DUMMY, text, &bin);
		printed = print_ok(DUMMY, bin.data, bin.len);
		ASSERT_STREQ(printed, want);
		free(printed);
		buf_fini(&bin);
	}
	/* Bytes fields escape everything outside printable ASCII, UTF-8 or not. */
	enc_ok(DUMMY, "field_bytes: \"\xc3\xa9\\177 ~\"", &bin);
	printed = print_ok(DUMMY, bin.data, bin.len);
	ASSERT_STREQ(printed, "field_bytes: \"\\303\\251\\177 ~\"\n");
	free(printed);
	buf_fini(&bin);
}

/* Appends a tag and varint to @b. */
static void put_varint(struct buf *b, uint64_t v)
{
	uint8_t tmp[PZ_MAX_VARINT_BYTES];

	ASSERT_EQ(buf_append(b, tmp, pz_varint_encode(v, tmp)), 0);
}

TEST(print_unknown_fields_by_number)
{
	struct buf b = BUF_INIT;
	char *printed;

	put_varint(&b, (3 << 3) | 0); /* duration_ms: 9 */
	put_varint(&b, 9);
	put_varint(&b, (9999 << 3) | 0);
	put_varint(&b, 5);
	put_varint(&b, (10000 << 3) | 2);
	put_varint(&b, 3);
	ASSERT_EQ(buf_append(&b, "a\"\n", 3), 0);
	put_varint(&b, (10001 << 3) | 5);
	ASSERT_EQ(buf_append(&b, "\x01\x02\x03\x04", 4), 0);
	put_varint(&b, (10002 << 3) | 1);
	ASSERT_EQ(buf_append(&b, "\x01\x02\x03\x04\x05\x06\x07\x08", 8), 0);
	/* A known field with the wrong wire type is shown by number too. */
	put_varint(&b, (3 << 3) | 2);
	put_varint(&b, 1);
	ASSERT_EQ(buf_append(&b, "z", 1), 0);
	put_varint(&b, (1 << 3) | 0); /* buffers as a varint */
	put_varint(&b, 1);
	printed = print_ok("TraceConfig", b.data, b.len);
	ASSERT_STREQ(printed, "duration_ms: 9\n"
			      "9999: 5\n"
			      "10000: \"a\\\"\\n\"\n"
			      "10001: 0x04030201\n"
			      "10002: 0x0807060504030201\n"
			      "3: \"z\"\n"
			      "1: 1\n");
	free(printed);
	buf_fini(&b);
	/* Unknown enum numbers print as numbers. */
	buf_init(&b);
	put_varint(&b, (1 << 3) | 2);
	put_varint(&b, 2);
	put_varint(&b, (4 << 3) | 0);
	put_varint(&b, 77);
	printed = print_ok("TraceConfig", b.data, b.len);
	ASSERT_STREQ(printed, "buffers {\n  fill_policy: 77\n}\n");
	free(printed);
	buf_fini(&b);
}

TEST(print_packed_and_unpacked)
{
	Perfetto__Protos__FtraceEventBundle__CompactSched cs =
		PERFETTO__PROTOS__FTRACE_EVENT_BUNDLE__COMPACT_SCHED__INIT;
	int32_t pids[] = {1, -2, 300};
	uint64_t ts[] = {5, UINT64_MAX};
	static const char want[] = "switch_timestamp: 5\n"
				   "switch_timestamp: 18446744073709551615\n"
				   "switch_next_pid: 1\n"
				   "switch_next_pid: -2\n"
				   "switch_next_pid: 300\n";
	struct buf b = BUF_INIT;
	uint8_t packed[128];
	size_t n;
	char *printed;

	/* Packed, as protobuf-c writes it. */
	cs.n_switch_next_pid = 3;
	cs.switch_next_pid = pids;
	cs.n_switch_timestamp = 2;
	cs.switch_timestamp = ts;
	n = protobuf_c_message_get_packed_size(&cs.base);
	ASSERT_LE(n, sizeof(packed));
	protobuf_c_message_pack(&cs.base, packed);
	printed = print_ok(COMPACT, packed, n);
	ASSERT_STREQ(printed, want);
	free(printed);
	/* The same values unpacked, one tag each. */
	put_varint(&b, (1 << 3) | 0);
	put_varint(&b, 5);
	put_varint(&b, (1 << 3) | 0);
	put_varint(&b, UINT64_MAX);
	put_varint(&b, (3 << 3) | 0);
	put_varint(&b, 1);
	put_varint(&b, (3 << 3) | 0);
	put_varint(&b, (uint64_t)(int64_t)-2);
	put_varint(&b, (3 << 3) | 0);
	put_varint(&b, 300);
	printed = print_ok(COMPACT, b.data, b.len);
	ASSERT_STREQ(printed, want);
	free(printed);
	buf_fini(&b);
	/* A non-packed repeated field that arrives packed is printed too. */
	{
		static const uint8_t fixed_packed[] = {
			/* TrackEvent.flow_ids (47, repeated fixed64, not [packed]) sent packed */
			0xfa, 0x02, 16, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,
		};

		printed = print_ok("TrackEvent", fixed_packed, sizeof(fixed_packed));
		ASSERT_STREQ(printed, "flow_ids: 1\nflow_ids: 2\n");
		free(printed);
	}
}

/* Expects pbtxt_print() of @data to fail with -EBADMSG and a message. */
static void print_bad_at(const char *file, int line, const char *type, const uint8_t *data,
			 size_t len, const char *want_in_msg)
{
	struct pbtxt_error err;
	struct buf out = BUF_INIT;
	uint8_t *copy = malloc(len ? len : 1);
	int rc;

	if (!copy)
		harness_fail(file, line, "out of memory");
	memcpy(copy, data, len);
	rc = pbtxt_print(must_find(type), copy, len, &out, &err);
	if (rc != -EBADMSG)
		harness_fail(file, line, "expected -EBADMSG, got %d", rc);
	if (!strstr(err.msg, "malformed") || (want_in_msg && !strstr(err.msg, want_in_msg)))
		harness_fail(file, line, "unexpected message \"%s\" (want \"%s\")", err.msg,
			     want_in_msg ? want_in_msg : "malformed");
	buf_fini(&out);
	free(copy);
}
#define PRINT_BAD(type, want, ...)                                                   \
	do {                                                                         \
		static const uint8_t bad_[] = {__VA_ARGS__};                         \
		print_bad_at(__FILE__, __LINE__, type, bad_, sizeof(bad_), want);    \
	} while (0)

TEST(print_malformed_binary)
{
	/* Length far past the end: 5-byte and 10-byte length varints. */
	PRINT_BAD("TraceConfig", "malformed TraceConfig at byte ", 0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x08);
	PRINT_BAD("TraceConfig", NULL, 0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		  0x01);
	/* A varint longer than 10 bytes. */
	PRINT_BAD("TraceConfig", NULL, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		  0xff, 0x01);
	/* Truncated varint, tag and fixed fields. */
	PRINT_BAD("TraceConfig", NULL, 0x18, 0x80);
	PRINT_BAD("TraceConfig", NULL, 0x80);
	PRINT_BAD(DUMMY, NULL, 0x3d, 0x01, 0x02);
	PRINT_BAD(DUMMY, NULL, 0x29, 0x01, 0x02, 0x03, 0x04);
	/* Bad wire types (groups and 6, 7) and field number 0. */
	PRINT_BAD("TraceConfig", NULL, 0x0b);
	PRINT_BAD("TraceConfig", NULL, 0x0c);
	PRINT_BAD("TraceConfig", NULL, 0x18, 0x01, 0x1e);
	PRINT_BAD("TraceConfig", NULL, 0x1f, 0x00);
	PRINT_BAD("TraceConfig", NULL, 0x00, 0x00);
	PRINT_BAD("TraceConfig", NULL, 0x02, 0x00);
	/* Errors inside nested messages name the inner message. */
	PRINT_BAD("TraceConfig", "BufferConfig", 0x0a, 0x02, 0x08, 0x80);
	PRINT_BAD("TraceConfig", "BufferConfig", 0x0a, 0x01, 0x07);
	PRINT_BAD("TraceConfig", "DataSourceConfig", 0x12, 0x04, 0x0a, 0x02, 0x0a, 0x05);
	/* A broken packed record. */
	PRINT_BAD(COMPACT, NULL, 0x1a, 0x02, 0x01, 0x80);
	PRINT_BAD(COMPACT, NULL, 0x1a, 0x0b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		  0xff, 0x01);
	PRINT_BAD("TrackEvent", NULL, 0xfa, 0x02, 3, 1, 0, 0);
	/* A good message is not mistaken for a bad one. */
	{
		static const uint8_t ok[] = {0x0a, 0x02, 0x08, 0x01, 0x18, 0x05};
		char *printed = print_ok("TraceConfig", ok, sizeof(ok));

		ASSERT_STREQ(printed, "buffers {\n  size_kb: 1\n}\nduration_ms: 5\n");
		free(printed);
	}
}

TEST(print_nesting_limit)
{
	const int levels = 5000;
	uint8_t *bin = malloc((size_t)levels * 6), *p;
	size_t total;
	int i;

	ASSERT_TRUE(bin != NULL);
	/* DebugAnnotation.dict_entries (11), nested @levels deep, built from the inside. */
	p = bin + (size_t)levels * 6;
	total = 0;
	for (i = 0; i < levels; i++) {
		uint8_t hdr[1 + PZ_MAX_VARINT_BYTES];
		size_t n;

		hdr[0] = (11 << 3) | 2;
		n = 1 + pz_varint_encode(total, hdr + 1);
		p -= n;
		memcpy(p, hdr, n);
		total += n;
	}
	print_bad_at(__FILE__, __LINE__, "DebugAnnotation", p, total, "nested too deeply");
	/* PBTXT_MAX_DEPTH nested levels print fine; one more does not. */
	{
		const uint8_t *inner = p, *outer = p;
		size_t inner_len = total, outer_len = total;
		struct pz_reader r;
		struct pz_field f;
		char *printed;

		for (i = 0; i < levels - PBTXT_MAX_DEPTH; i++) {
			outer = inner;
			outer_len = inner_len;
			pz_reader_init(&r, inner, inner_len);
			ASSERT_EQ(pz_reader_next(&r, &f), 1);
			inner = f.data;
			inner_len = f.size;
		}
		printed = print_ok("DebugAnnotation", inner, inner_len);
		ASSERT_GT(strlen(printed), 14 * PBTXT_MAX_DEPTH);
		free(printed);
		print_bad_at(__FILE__, __LINE__, "DebugAnnotation", outer, outer_len,
			     "nested too deeply");
	}
	free(bin);
}

/* Top-level field boundaries of @data (offsets where a field ends). */
static size_t field_ends(const uint8_t *data, size_t len, size_t *ends, size_t cap)
{
	struct pz_reader r;
	struct pz_field f;
	size_t n = 0;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0 && n < cap)
		ends[n++] = pz_reader_offset(&r);
	ASSERT_EQ(r.err, PZ_OK);
	return n;
}

TEST(print_truncated_at_every_byte)
{
	const ProtobufCMessageDescriptor *d = must_find("TraceConfig");
	size_t ends[256], n_ends, n, k;
	struct buf bin;

	enc_ok("TraceConfig", k_rich_config, &bin);
	n_ends = field_ends(bin.data, bin.len, ends, PFC_ARRAY_SIZE(ends));
	ASSERT_GT(n_ends, 5);
	for (n = 0; n <= bin.len; n++) {
		uint8_t *copy = malloc(n ? n : 1);
		struct pbtxt_error err;
		struct buf out = BUF_INIT;
		bool boundary = n == 0;
		int rc;

		for (k = 0; k < n_ends; k++)
			boundary |= ends[k] == n;
		memcpy(copy, bin.data, n);
		rc = pbtxt_print(d, copy, n, &out, &err);
		if (boundary && rc != 0)
			FAIL("prefix %zu ends on a field boundary but print failed: %s", n, err.msg);
		if (!boundary && rc != -EBADMSG)
			FAIL("prefix %zu of %zu: expected -EBADMSG, got %d", n, bin.len, rc);
		if (!boundary && !strstr(err.msg, "malformed"))
			FAIL("prefix %zu: message \"%s\"", n, err.msg);
		buf_fini(&out);
		free(copy);
	}
	/* Flipping each byte to 0xff never crashes either. */
	for (n = 0; n < bin.len; n++) {
		uint8_t *copy = malloc(bin.len);
		struct pbtxt_error err;
		struct buf out = BUF_INIT;
		int rc;

		memcpy(copy, bin.data, bin.len);
		copy[n] = 0xff;
		rc = pbtxt_print(d, copy, bin.len, &out, &err);
		ASSERT_TRUE(rc == 0 || rc == -EBADMSG);
		buf_fini(&out);
		free(copy);
	}
	buf_fini(&bin);
}

/* text -> bin -> text -> bin: both encodings equal, printing is a fixpoint. */
static void round_trip(const char *name, const char *text, size_t len)
{
	const ProtobufCMessageDescriptor *d = must_find("TraceConfig");
	struct buf bin1 = BUF_INIT, bin2 = BUF_INIT, text2 = BUF_INIT, text3 = BUF_INIT;
	struct pbtxt_error err;
	Perfetto__Protos__TraceConfig *tc;

	if (pbtxt_parse(d, text, len, &bin1, &err))
		FAIL("%s: %s", name, err.msg);
	ASSERT_GT(bin1.len, 0);
	tc = perfetto__protos__trace_config__unpack(NULL, bin1.len, bin1.data);
	if (!tc)
		FAIL("%s: protobuf-c cannot unpack our encoding", name);
	perfetto__protos__trace_config__free_unpacked(tc, NULL);
	if (pbtxt_print(d, bin1.data, bin1.len, &text2, &err))
		FAIL("%s: print: %s", name, err.msg);
	if (pbtxt_parse(d, (const char *)text2.data, text2.len, &bin2, &err))
		FAIL("%s: re-parse of printed text: %s", name, err.msg);
	if (bin1.len != bin2.len || memcmp(bin1.data, bin2.data, bin1.len) != 0)
		FAIL("%s: text -> bin -> text -> bin changed the encoding (%zu vs %zu bytes)", name,
		     bin1.len, bin2.len);
	if (pbtxt_print(d, bin2.data, bin2.len, &text3, &err))
		FAIL("%s: print: %s", name, err.msg);
	ASSERT_EQ(text2.len, text3.len);
	ASSERT_MEMEQ(text2.data, text3.data, text2.len);
	buf_fini(&bin1);
	buf_fini(&bin2);
	buf_fini(&text2);
	buf_fini(&text3);
}

TEST(configs_round_trip)
{
	if (!configs_dir())
		SKIP("configs/ not found");
	ASSERT_GT(for_each_config(round_trip), 0);
	round_trip("k_rich_config", k_rich_config, strlen(k_rich_config));
}

TEST(protobuf_c_encoding_prints_and_reparses)
{
	/* The _INIT macro touches deprecated fields (a clang -Werror); init() does not. */
	Perfetto__Protos__TraceConfig tc;
	Perfetto__Protos__TraceConfig__BufferConfig b0 =
		PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__INIT;
	Perfetto__Protos__TraceConfig__BufferConfig *bufs[] = {&b0};
	char *triggers[] = {"a\tb", "\xc3\xa9"};
	uint8_t packed[256];
	size_t n;
	struct buf bin;
	char *printed;

	perfetto__protos__trace_config__init(&tc);
	b0.has_size_kb = 1;
	b0.size_kb = 4096;
	b0.has_fill_policy = 1;
	b0.fill_policy = PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__FILL_POLICY__DISCARD;
	tc.n_buffers = 1;
	tc.buffers = bufs;
	tc.has_duration_ms = 1;
	tc.duration_ms = 10000;
	tc.n_activate_triggers = 2;
	tc.activate_triggers = triggers;
	tc.has_max_file_size_bytes = 1;
	tc.max_file_size_bytes = UINT64_MAX;
	n = perfetto__protos__trace_config__get_packed_size(&tc);
	ASSERT_LE(n, sizeof(packed));
	perfetto__protos__trace_config__pack(&tc, packed);
	printed = print_ok("TraceConfig", packed, n);
	ASSERT_STREQ(printed, "buffers {\n  size_kb: 4096\n  fill_policy: DISCARD\n}\n"
			      "duration_ms: 10000\n"
			      "max_file_size_bytes: 18446744073709551615\n"
			      "activate_triggers: \"a\\tb\"\n"
			      "activate_triggers: \"\xc3\xa9\"\n");
	/* Our encoding differs (4-byte nested lengths) but decodes identically. */
	enc_ok("TraceConfig", printed, &bin);
	{
		Perfetto__Protos__TraceConfig *back =
			perfetto__protos__trace_config__unpack(NULL, bin.len, bin.data);
		uint8_t again[256];

		ASSERT_TRUE(back != NULL);
		ASSERT_EQ(perfetto__protos__trace_config__get_packed_size(back), n);
		perfetto__protos__trace_config__pack(back, again);
		ASSERT_MEMEQ(again, packed, n);
		perfetto__protos__trace_config__free_unpacked(back, NULL);
	}
	buf_fini(&bin);
	free(printed);
}

/* ------------------------------------------------------------- names ---- */

TEST(find_message)
{
	const ProtobufCMessageDescriptor *tc = pbtxt_find_message("perfetto.protos.TraceConfig");
	const ProtobufCMessageDescriptor *const *md;
	const char *ambiguous = NULL;

	ASSERT_TRUE(tc != NULL);
	ASSERT_STREQ(tc->name, "perfetto.protos.TraceConfig");
	ASSERT_TRUE(pbtxt_find_message("TraceConfig") == tc);
	ASSERT_TRUE(tc == &perfetto__protos__trace_config__descriptor);
	ASSERT_TRUE(pbtxt_find_message("TraceConfig.BufferConfig") ==
		    &perfetto__protos__trace_config__buffer_config__descriptor);
	ASSERT_TRUE(pbtxt_find_message("perfetto.protos.TraceConfig.BufferConfig") ==
		    &perfetto__protos__trace_config__buffer_config__descriptor);
	ASSERT_TRUE(pbtxt_find_message("BufferConfig") ==
		    &perfetto__protos__trace_config__buffer_config__descriptor);
	ASSERT_TRUE(pbtxt_find_message("CompactSched") ==
		    &perfetto__protos__ftrace_event_bundle__compact_sched__descriptor);
	ASSERT_TRUE(pbtxt_find_message("DummyFields") ==
		    &perfetto__protos__test_config__dummy_fields__descriptor);
	ASSERT_STREQ(pbtxt_message_name(tc), "TraceConfig");
	ASSERT_STREQ(pbtxt_message_name(&perfetto__protos__trace_config__buffer_config__descriptor),
		     "TraceConfig.BufferConfig");
	ASSERT_TRUE(pbtxt_find_message("NoSuchMessage") == NULL);
	ASSERT_TRUE(pbtxt_find_message("") == NULL);
	ASSERT_TRUE(pbtxt_find_message("perfetto.protos.") == NULL);
	ASSERT_TRUE(pbtxt_find_message("protos.TraceConfig") == NULL);
	ASSERT_TRUE(pbtxt_find_message("traceconfig") == NULL);
	ASSERT_TRUE(pbtxt_find_message("TraceConfig.") == NULL);
	ASSERT_TRUE(pbtxt_find_message("TraceConfig.NoSuch") == NULL);
	/* A nested short name that two messages share is ambiguous. */
	for (md = pb_registry_messages; *md && !ambiguous; md++) {
		const ProtobufCMessageDescriptor *const *o;

		for (o = md + 1; *o; o++) {
			if (strcmp((*o)->short_name, (*md)->short_name) == 0 &&
			    strcmp((*o)->name, (*md)->name) != 0 &&
			    strchr(pbtxt_message_name(*md), '.') &&
			    strchr(pbtxt_message_name(*o), '.')) {
				ambiguous = (*md)->short_name;
				break;
			}
		}
	}
	if (!ambiguous)
		FAIL("no two nested messages share a short name; the ambiguity check is untested");
	if (pbtxt_find_message(ambiguous) != NULL)
		FAIL("'%s' is ambiguous but was found", ambiguous);
	/* Every registered message is found by its full and relative names. */
	for (md = pb_registry_messages; *md; md++) {
		ASSERT_TRUE(pbtxt_find_message((*md)->name) == *md);
		ASSERT_TRUE(pbtxt_find_message(pbtxt_message_name(*md)) == *md);
	}
}

TEST(edit_distance)
{
#define ED(a, b) pbtxt_edit_distance(a, strlen(a), b, strlen(b))
	ASSERT_EQ(ED("", ""), 0);
	ASSERT_EQ(ED("abc", "abc"), 0);
	ASSERT_EQ(ED("abc", ""), 3);
	ASSERT_EQ(ED("", "abcd"), 4);
	ASSERT_EQ(ED("bufers", "buffers"), 1);
	ASSERT_EQ(ED("buffers", "bufers"), 1);
	ASSERT_EQ(ED("kitten", "sitting"), 3);
	ASSERT_EQ(ED("flaw", "lawn"), 2);
	ASSERT_EQ(ED("ab", "ba"), 2);
	ASSERT_EQ(ED("size_kb", "sizekb"), 1);
	ASSERT_EQ(ED("abc", "xyz"), 3);
	/* Case differences are free, so lower-case enum names get a suggestion. */
	ASSERT_EQ(ED("discard", "DISCARD"), 0);
	/* Lengths are honoured; no NUL needed. */
	ASSERT_EQ(pbtxt_edit_distance("abcdef", 3, "abcxyz", 3), 0);
	{
		char a[65], b[65];

		memset(a, 'a', 64);
		memset(b, 'a', 64);
		b[63] = 'b';
		ASSERT_EQ(pbtxt_edit_distance(a, 64, b, 64), 1);
		/* Past 64 characters: "far", never a crash. */
		ASSERT_GE(pbtxt_edit_distance(a, 65, b, 64), 64);
		ASSERT_GE(pbtxt_edit_distance(a, 64, b, 65), 64);
	}
#undef ED
}

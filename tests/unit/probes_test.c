// SPDX-License-Identifier: Apache-2.0
/*
 * probes_test.c - unit tests for src/probes: ftrace decoding and control
 * (tests above the /proc collectors block), and the process_stats,
 * sys_stats and system_info collectors, checked field by field against the
 * recorded tree in tests/data/proc-root, plus smoke tests on the live /proc
 * and hostile files that must never crash.
 */
#include "harness.h"

/* ================================================================ */
/* ftrace decoding: ftrace_format, ftrace_page, ftrace_translate,   */
/* ftrace_compact, ftrace_bundle. Fixtures: tests/data/ftrace/      */
/* (pages and format files recorded from a live kernel; record.sh)  */
/* ================================================================ */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pb_fields.h"
#include "probes/ftrace_bundle.h"
#include "probes/ftrace_compact.h"
#include "probes/ftrace_cpu_reader.h"
#include "probes/ftrace_format.h"
#include "probes/ftrace_page.h"
#include "probes/ftrace_translate.h"
#include "protozero/protozero.h"

#define FT_PAGE 4096
#define FT_MARKER "pfc_fixture_marker hello 42"

/* Reads tests/data/ftrace/<name> (relative to $PFC_SRCDIR or the cwd),
 * NUL-terminated. */
static char *ft_fixture(const char *name, size_t *out_len)
{
	const char *root = getenv("PFC_SRCDIR");
	size_t cap = 1 << 16, len = 0, n;
	char path[512];
	char *buf;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/data/ftrace/%s", root ? root : ".", name);
	f = fopen(path, "rb");
	if (!f)
		FAIL("cannot open fixture %s (run from the repo root or set PFC_SRCDIR)", path);
	buf = malloc(cap + 1);
	ASSERT_TRUE(buf != NULL);
	while ((n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
			ASSERT_TRUE(buf != NULL);
		}
	}
	fclose(f);
	buf[len] = '\0';
	*out_len = len;
	return buf;
}

static void ft_load_layout(struct ftrace_page_layout *l)
{
	size_t len;
	char *text = ft_fixture("header_page", &len);

	ASSERT_EQ(ftrace_header_page_parse(text, len, l), 0);
	free(text);
}

static struct ftrace_format *ft_load_format(const char *event)
{
	struct ftrace_format *f = malloc(sizeof(*f));
	char name[128];
	size_t len;
	char *text;

	ASSERT_TRUE(f != NULL);
	snprintf(name, sizeof(name), "formats/%s.format", event);
	text = ft_fixture(name, &len);
	ASSERT_EQ(ftrace_format_parse(text, len, f), 0);
	free(text);
	return f;
}

/* Every event whose format was recorded (the names of formats/ files). */
static const char *const ft_events[] = {
	"sched_switch",       "sched_waking",      "sched_wakeup_new", "sched_process_exec",
	"sched_process_fork", "cpu_frequency",     "cpu_idle",         "irq_handler_entry",
	"irq_handler_exit",   "softirq_entry",     "softirq_exit",     "print",
	"sys_enter",          "sys_exit",          "task_newtask",     "task_rename",
};
#define FT_N_EVENTS (sizeof(ft_events) / sizeof(ft_events[0]))

struct ft_set {
	struct ftrace_page_layout layout;
	struct ftrace_format *fmt[FT_N_EVENTS];
	struct ftrace_event_table *table;
};

static int ft_event_index(const struct ft_set *fx, uint16_t id)
{
	size_t i;

	for (i = 0; i < FT_N_EVENTS; i++)
		if (fx->fmt[i]->id == id)
			return (int)i;
	return -1;
}

static const struct ftrace_format *ft_fmt(const struct ft_set *fx, const char *name)
{
	size_t i;

	for (i = 0; i < FT_N_EVENTS; i++)
		if (strcmp(ft_events[i], name) == 0)
			return fx->fmt[i];
	FAIL("no format %s", name);
}

/* Loads the layout and formats; @generic names an event to force generic. */
static void ft_set_load(struct ft_set *fx, const char *generic)
{
	size_t i;

	ft_load_layout(&fx->layout);
	fx->table = ftrace_event_table_create();
	ASSERT_TRUE(fx->table != NULL);
	for (i = 0; i < FT_N_EVENTS; i++) {
		unsigned flags = generic && strcmp(generic, ft_events[i]) == 0
					 ? FTRACE_XLAT_GENERIC
					 : 0;

		fx->fmt[i] = ft_load_format(ft_events[i]);
		ASSERT_GT(ftrace_event_table_add(fx->table, fx->fmt[i], flags), 0);
	}
}

static void ft_set_free(struct ft_set *fx)
{
	size_t i;

	for (i = 0; i < FT_N_EVENTS; i++)
		free(fx->fmt[i]);
	ftrace_event_table_destroy(fx->table);
}

/* Reads a kernel integer field of a raw record, sign-extended per format. */
static int64_t ft_raw_int(const struct ftrace_format *f, const struct ftrace_raw_event *ev,
			  const char *name)
{
	const struct ftrace_field *fld = ftrace_format_field(f, name);
	uint64_t u = 0;

	ASSERT_TRUE(fld != NULL);
	ASSERT_LE(fld->offset + fld->size, ev->len);
	memcpy(&u, ev->data + fld->offset, fld->size);
	if (fld->is_signed && fld->size < 8) {
		unsigned shift = 64 - 8 * fld->size;

		return (int64_t)(u << shift) >> shift;
	}
	return (int64_t)u;
}

/* A char[N] field of a raw record as a C string in @out. */
static void ft_raw_str(const struct ftrace_format *f, const struct ftrace_raw_event *ev,
		       const char *name, char *out, size_t cap)
{
	const struct ftrace_field *fld = ftrace_format_field(f, name);
	size_t n;

	ASSERT_TRUE(fld != NULL && fld->kind == FTRACE_FIELD_CHAR_ARRAY);
	n = strnlen((const char *)ev->data + fld->offset, fld->size);
	ASSERT_LT(n, cap);
	memcpy(out, ev->data + fld->offset, n);
	out[n] = '\0';
}

static uint64_t ft_stats_value(const char *file, const char *key)
{
	size_t len;
	char *text = ft_fixture(file, &len), *p = strstr(text, key);
	uint64_t v;

	ASSERT_TRUE(p != NULL);
	v = strtoull(p + strlen(key), NULL, 10);
	free(text);
	return v;
}

TEST(ftrace_format_parses_sched_switch)
{
	struct ftrace_format *f = ft_load_format("sched_switch");
	const struct ftrace_field *fld;

	ASSERT_STREQ(f->name, "sched_switch");
	ASSERT_GT(f->id, 0);
	ASSERT_EQ(f->n_common, 4);
	ASSERT_EQ(f->n_fields, 11);
	fld = ftrace_format_field(f, "common_pid");
	ASSERT_TRUE(fld && fld->offset == 4 && fld->size == 4 && fld->is_signed);
	fld = ftrace_format_field(f, "common_flags");
	ASSERT_TRUE(fld && fld->offset == 2 && fld->size == 1 && !fld->is_signed);
	fld = ftrace_format_field(f, "prev_comm");
	ASSERT_TRUE(fld != NULL);
	ASSERT_EQ(fld->kind, FTRACE_FIELD_CHAR_ARRAY);
	ASSERT_EQ(fld->offset, 8);
	ASSERT_EQ(fld->size, 16);
	ASSERT_EQ(fld->n_elems, 16);
	ASSERT_STREQ(fld->type, "char");
	fld = ftrace_format_field(f, "prev_pid");
	ASSERT_TRUE(fld && fld->kind == FTRACE_FIELD_INT && fld->offset == 24 && fld->size == 4 &&
		    fld->is_signed);
	ASSERT_STREQ(fld->type, "pid_t");
	fld = ftrace_format_field(f, "prev_state");
	ASSERT_TRUE(fld && fld->offset == 32 && fld->size == 8 && fld->is_signed);
	fld = ftrace_format_field(f, "next_pid");
	ASSERT_TRUE(fld && fld->offset == 56 && fld->size == 4);
	ASSERT_EQ(f->min_size, 64);
	ASSERT_TRUE(ftrace_format_field(f, "nope") == NULL);
	free(f);
}

TEST(ftrace_format_parses_dynamic_and_array_fields)
{
	struct ftrace_format *f = ft_load_format("sched_process_exec");
	const struct ftrace_field *fld = ftrace_format_field(f, "filename");

	ASSERT_TRUE(fld != NULL);
	ASSERT_EQ(fld->kind, FTRACE_FIELD_DATA_LOC);
	ASSERT_TRUE(fld->is_char);
	ASSERT_EQ(fld->size, 4);
	ASSERT_STREQ(fld->type, "__data_loc char[]");
	free(f);

	f = ft_load_format("print");
	fld = ftrace_format_field(f, "buf");
	ASSERT_TRUE(fld && fld->kind == FTRACE_FIELD_CSTRING && fld->offset == 16);
	fld = ftrace_format_field(f, "ip");
	ASSERT_TRUE(fld && fld->kind == FTRACE_FIELD_INT && fld->size == 8 && !fld->is_signed);
	free(f);

	f = ft_load_format("sys_enter");
	fld = ftrace_format_field(f, "args");
	ASSERT_TRUE(fld && fld->kind == FTRACE_FIELD_ARRAY);
	ASSERT_EQ(fld->n_elems, 6);
	ASSERT_EQ(fld->elem_size, 8);
	ASSERT_STREQ(fld->type, "unsigned long");
	fld = ftrace_format_field(f, "id");
	ASSERT_TRUE(fld && fld->is_signed && fld->size == 8);
	free(f);

	f = ft_load_format("task_newtask");
	fld = ftrace_format_field(f, "oom_score_adj");
	ASSERT_TRUE(fld && fld->kind == FTRACE_FIELD_INT && fld->size == 2 && fld->is_signed);
	free(f);
}

TEST(ftrace_format_parses_every_recorded_file)
{
	size_t i;

	for (i = 0; i < FT_N_EVENTS; i++) {
		struct ftrace_format *f = ft_load_format(ft_events[i]);
		uint32_t j;

		ASSERT_STREQ(f->name, ft_events[i]);
		ASSERT_EQ(f->n_common, 4);
		ASSERT_GT(f->n_fields, f->n_common);
		for (j = 0; j < f->n_fields; j++)
			ASSERT_LE(f->fields[j].offset + f->fields[j].size, f->min_size);
		free(f);
	}
}

TEST(ftrace_format_synthetic_kinds)
{
	static const char k_text[] =
		"name: synth\nID: 77\nformat:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
		"\n"
		"\tfield:__rel_loc char[] rel;\toffset:8;\tsize:4;\tsigned:0;\n"
		"\tfield:void * ptr;\toffset:16;\tsize:8;\tsigned:0;\n"
		"\tfield:const char * fmt;\toffset:24;\tsize:8;\tsigned:0;\n"
		"\tfield:__data_loc u32[] ids;\toffset:32;\tsize:4;\tsigned:0;\n"
		"\tfield:u8 mac[6];\toffset:36;\tsize:6;\tsigned:0;\n"
		"\tfield:struct foo blob;\toffset:44;\tsize:12;\tsigned:0;\n"
		"\tfield:char name[TASK_COMM_LEN];\toffset:56;\tsize:16;\tsigned:0;\n"
		"\nprint fmt: \"x\"\n";
	struct ftrace_format *f = malloc(sizeof(*f));
	const struct ftrace_field *fld;

	ASSERT_EQ(ftrace_format_parse(k_text, strlen(k_text), f), 0);
	ASSERT_EQ(f->id, 77);
	ASSERT_EQ(f->n_common, 2);
	ASSERT_EQ(f->n_fields, 9);
	fld = ftrace_format_field(f, "rel");
	ASSERT_TRUE(fld && fld->kind == FTRACE_FIELD_REL_LOC && fld->is_char);
	fld = ftrace_format_field(f, "ptr");
	ASSERT_TRUE(fld && fld->kind == FTRACE_FIELD_POINTER);
	fld = ftrace_format_field(f, "fmt");
	ASSERT_TRUE(fld && fld->kind == FTRACE_FIELD_POINTER);
	ASSERT_STREQ(fld->type, "const char *");
	fld = ftrace_format_field(f, "ids");
	ASSERT_TRUE(fld && fld->kind == FTRACE_FIELD_DATA_LOC && !fld->is_char &&
		    fld->elem_size == 4);
	fld = ftrace_format_field(f, "mac");
	ASSERT_TRUE(fld && fld->kind == FTRACE_FIELD_ARRAY && fld->n_elems == 6 &&
		    fld->elem_size == 1);
	fld = ftrace_format_field(f, "blob");
	ASSERT_TRUE(fld && fld->kind == FTRACE_FIELD_OTHER);
	fld = ftrace_format_field(f, "name");
	ASSERT_TRUE(fld && fld->kind == FTRACE_FIELD_CHAR_ARRAY && fld->n_elems == 0);
	ASSERT_EQ(f->min_size, 72);
	free(f);
}

TEST(ftrace_format_rejects_malformed)
{
	static const char *const k_bad[] = {
		"ID: 5\nformat:\n\tfield:int a;\toffset:0;\tsize:4;\tsigned:1;\n", /* no name */
		"name: x\nformat:\n\tfield:int a;\toffset:0;\tsize:4;\tsigned:1;\n", /* no ID */
		"name: x\nID: 99999999\nformat:\n",                                   /* ID range */
		"name: x\nID: 5\nformat:\n\tfield:int a;\toffset:zz;\tsize:4;\n",
		"name: x\nID: 5\nformat:\n\tfield:int a;\tsize:4;\tsigned:1;\n",      /* no offset */
		"name: x\nID: 5\nformat:\n\tfield:int a;\toffset:65530;\tsize:8;\n",  /* past 64K */
		"name: x\nID: 5\nformat:\n\tfield:int ;\toffset:0;\tsize:4;\n",       /* no type */
		"name: x\nID: 5\nformat:\n\tfield:__data_loc char[] s;\toffset:0;\tsize:8;\n",
		"name: x\nID: 5\nformat:\n\tfield:int a];\toffset:0;\tsize:4;\n",
	};
	struct ftrace_format *f = malloc(sizeof(*f));
	char big[FTRACE_MAX_FIELDS * 64 + 256], longname[200];
	size_t i, n;

	for (i = 0; i < sizeof(k_bad) / sizeof(k_bad[0]); i++) {
		int r = ftrace_format_parse(k_bad[i], strlen(k_bad[i]), f);

		if (r >= 0)
			FAIL("case %zu parsed", i);
	}
	/* One field more than the limit. */
	n = (size_t)snprintf(big, sizeof(big), "name: x\nID: 5\nformat:\n");
	for (i = 0; i <= FTRACE_MAX_FIELDS; i++)
		n += (size_t)snprintf(big + n, sizeof(big) - n,
				      "\tfield:int f%zu;\toffset:%zu;\tsize:4;\tsigned:1;\n", i, 4 * i);
	ASSERT_LT(n, sizeof(big));
	ASSERT_EQ(ftrace_format_parse(big, n, f), -E2BIG);
	/* A name at the limit fails, one under it parses. */
	memset(longname, 'a', sizeof(longname));
	n = (size_t)snprintf(big, sizeof(big),
			     "name: x\nID: 5\nformat:\n\tfield:int %.*s;\toffset:0;\tsize:4;\n",
			     FTRACE_NAME_MAX, longname);
	ASSERT_EQ(ftrace_format_parse(big, n, f), -ENAMETOOLONG);
	n = (size_t)snprintf(big, sizeof(big),
			     "name: x\nID: 5\nformat:\n\tfield:int %.*s;\toffset:0;\tsize:4;\n",
			     FTRACE_NAME_MAX - 1, longname);
	ASSERT_EQ(ftrace_format_parse(big, n, f), 0);
	/* Without a blank line the common block is the common_* prefix. */
	n = (size_t)snprintf(big, sizeof(big),
			     "name: x\nID: 5\nformat:\n\tfield:int common_pid;\toffset:0;\tsize:4;\n"
			     "\tfield:int b;\toffset:4;\tsize:4;\n");
	ASSERT_EQ(ftrace_format_parse(big, n, f), 0);
	ASSERT_EQ(f->n_common, 1);
	ASSERT_EQ(f->n_fields, 2);
	/* Every prefix of a real file either parses or fails cleanly. */
	{
		size_t len, k;
		char *text = ft_fixture("formats/sched_switch.format", &len);

		for (k = 0; k <= len; k++) {
			char *copy = malloc(k ? k : 1);

			memcpy(copy, text, k);
			(void)ftrace_format_parse(copy, k, f);
			free(copy);
		}
		free(text);
	}
	free(f);
}

TEST(ftrace_header_page_and_event)
{
	static const char k_32bit[] =
		"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
		"\tfield: local_t commit;\toffset:8;\tsize:4;\tsigned:1;\n"
		"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
		"\tfield: char data;\toffset:12;\tsize:4084;\tsigned:0;\n";
	static const char k_no_commit[] =
		"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
		"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
	static const char k_other_event[] = "\ttype_len    :    6 bits\n"
					    "\ttime_delta  :   26 bits\n"
					    "\tpadding     : type == 29\n"
					    "\ttime_extend : type == 30\n";
	struct ftrace_page_layout l, d;
	size_t len;
	char *text;

	ft_load_layout(&l);
	ASSERT_EQ(l.ts_offset, 0);
	ASSERT_EQ(l.commit_offset, 8);
	ASSERT_EQ(l.commit_size, 8);
	ASSERT_EQ(l.data_offset, 16);
	ASSERT_EQ(l.data_size, 4080);
	ftrace_page_layout_default(&d);
	ASSERT_MEMEQ(&d, &l, sizeof(l));

	ASSERT_EQ(ftrace_header_page_parse(k_32bit, strlen(k_32bit), &l), 0);
	ASSERT_EQ(l.commit_size, 4);
	ASSERT_EQ(l.data_offset, 12);
	ASSERT_EQ(ftrace_header_page_parse(k_no_commit, strlen(k_no_commit), &l), -EINVAL);

	text = ft_fixture("header_event", &len);
	ASSERT_EQ(ftrace_header_event_parse(text, len), 0);
	free(text);
	ASSERT_EQ(ftrace_header_event_parse(k_other_event, strlen(k_other_event)),
		  -EPROTONOSUPPORT);
	ASSERT_EQ(ftrace_header_event_parse("garbage\n", 8), -EINVAL);
}

struct ft_tally {
	const struct ft_set *fx;
	uint64_t last_ts;
	size_t n;
	size_t by_event[FT_N_EVENTS];
	bool saw_marker;
	bool is_monotonic;
};

static int ft_tally_cb(const struct ftrace_raw_event *ev, void *user)
{
	struct ft_tally *t = user;
	int idx = ft_event_index(t->fx, ev->id);

	if (idx < 0)
		FAIL("unknown event id %u", ev->id);
	if (ev->ts < t->last_ts)
		t->is_monotonic = false;
	t->last_ts = ev->ts;
	t->by_event[idx]++;
	t->n++;
	if (strcmp(ft_events[idx], "print") == 0 && ev->len > 16 &&
	    memmem(ev->data + 16, ev->len - 16, FT_MARKER, strlen(FT_MARKER)))
		t->saw_marker = true;
	return 0;
}

static void ft_decode_file(const struct ft_set *fx, const char *file, struct ft_tally *t)
{
	size_t len, off;
	uint8_t *pages = (uint8_t *)ft_fixture(file, &len);

	ASSERT_GT(len, 0);
	ASSERT_EQ(len % FT_PAGE, 0);
	for (off = 0; off < len; off += FT_PAGE) {
		struct ftrace_page_header hdr;
		enum ftrace_page_status st;
		int n = ftrace_page_decode(&fx->layout, pages + off, FT_PAGE, ft_tally_cb, t, &hdr,
					   &st);

		ASSERT_GE(n, 0);
		ASSERT_EQ(st, FTRACE_PAGE_OK);
		ASSERT_GT(hdr.data_bytes, 0);
		ASSERT_LE(hdr.data_bytes, fx->layout.data_size);
	}
	free(pages);
}

TEST(ftrace_page_decodes_fixture_pages)
{
	struct ft_tally t0 = {0}, t1 = {0};
	struct ft_set fx;
	size_t i;

	ft_set_load(&fx, NULL);
	t0.fx = t1.fx = &fx;
	t0.is_monotonic = t1.is_monotonic = true;
	ft_decode_file(&fx, "cpu0.pages", &t0);
	ft_decode_file(&fx, "cpu1.pages", &t1);
	ASSERT_TRUE(t0.is_monotonic);
	ASSERT_TRUE(t1.is_monotonic);
	/* The kernel counted the records it handed out ("read events"). */
	ASSERT_EQ(t0.n, ft_stats_value("cpu0.stats", "read events:"));
	ASSERT_EQ(t1.n, ft_stats_value("cpu1.stats", "read events:"));
	ASSERT_TRUE(t0.saw_marker || t1.saw_marker);
	for (i = 0; i < FT_N_EVENTS; i++) {
		size_t n = t0.by_event[i] + t1.by_event[i];
		const char *e = ft_events[i];

		if (!strcmp(e, "sched_switch") || !strcmp(e, "sched_waking") ||
		    !strcmp(e, "print") || !strcmp(e, "sys_enter") || !strcmp(e, "sys_exit") ||
		    !strcmp(e, "sched_process_exec") || !strcmp(e, "task_newtask"))
			if (n == 0)
				FAIL("no %s event decoded", e);
	}
	ft_set_free(&fx);
}

TEST(ftrace_page_reports_lost_events)
{
	struct ftrace_page_layout l;
	struct ftrace_page_header hdr;
	struct ftrace_page_iter it;
	struct ftrace_raw_event ev;
	long last = -1, first = -1;
	size_t len;
	uint8_t *pages = (uint8_t *)ft_fixture("overrun.pages", &len);
	int r, n = 0;

	ft_load_layout(&l);
	ASSERT_GE(len, FT_PAGE);
	ASSERT_EQ(ftrace_page_begin(&l, pages, FT_PAGE, &it, &hdr), 0);
	ASSERT_TRUE(hdr.has_lost_events);
	ASSERT_TRUE(hdr.has_lost_count);
	ASSERT_GT(hdr.lost_count, 0);
	while ((r = ftrace_page_next(&it, &ev)) > 0) {
		const char *s = memmem(ev.data, ev.len, "overrun ", 8);
		long v;

		ASSERT_TRUE(s != NULL);
		v = strtol(s + 8, NULL, 10);
		if (first < 0)
			first = v;
		ASSERT_GT(v, last);
		last = v;
		n++;
	}
	ASSERT_EQ(r, 0);
	ASSERT_GT(n, 10);
	/* The oldest markers were overwritten: the page starts later. */
	ASSERT_GT(first, 0);
	if (len >= 2 * FT_PAGE) {
		ASSERT_EQ(ftrace_page_begin(&l, pages + FT_PAGE, FT_PAGE, &it, &hdr), 0);
		ASSERT_FALSE(hdr.has_lost_events);
	}
	free(pages);
}

/* Encodes a record of the given data bytes with a type_len header. */
static size_t ft_put_record(uint8_t *p, uint32_t delta, const void *data, uint32_t len)
{
	uint32_t hdr = (delta << 5) | (len / 4);

	memcpy(p, &hdr, 4);
	memcpy(p + 4, data, len);
	return 4 + len;
}

static void ft_put_commit(uint8_t *page, uint64_t commit)
{
	memcpy(page + 8, &commit, 8);
}

TEST(ftrace_page_time_records)
{
	uint8_t page[FT_PAGE] = {0}, rec[8] = {7, 0, 0, 0, 1, 2, 3, 4};
	struct ftrace_page_layout l;
	struct ftrace_page_header hdr;
	struct ftrace_page_iter it;
	struct ftrace_raw_event ev;
	uint64_t base = 1000, ts;
	uint32_t w[2];
	size_t n = 16;

	ftrace_page_layout_default(&l);
	memcpy(page, &base, 8);
	n += ft_put_record(page + n, 5, rec, 8); /* ts 1005 */
	w[0] = (3u << 5) | 30;                   /* time_extend */
	w[1] = 2;                                /* + 2 << 27 */
	memcpy(page + n, w, 8);
	n += 8;
	n += ft_put_record(page + n, 1, rec, 8); /* +1 */
	w[0] = (9u << 5) | 29;                   /* padding, 8 more bytes */
	w[1] = 8;
	memcpy(page + n, w, 8);
	memset(page + n + 8, 0xee, 4);
	n += 12;
	w[0] = (123u << 5) | 31;                 /* absolute */
	w[1] = 4;
	memcpy(page + n, w, 8);
	n += 8;
	n += ft_put_record(page + n, 0, rec, 8);
	w[0] = (2u << 5) | 0;                    /* type_len 0 */
	w[1] = 12;                               /* 8 data bytes + itself */
	memcpy(page + n, w, 8);
	memcpy(page + n + 8, rec, 8);
	n += 16;
	ft_put_commit(page, n - 16);

	ASSERT_EQ(ftrace_page_begin(&l, page, sizeof(page), &it, &hdr), 0);
	ASSERT_FALSE(hdr.has_lost_events);
	ASSERT_EQ(ftrace_page_next(&it, &ev), 1);
	ASSERT_U64_EQ(ev.ts, 1005);
	ASSERT_EQ(ev.id, 7);
	ASSERT_EQ(ev.len, 8);
	ASSERT_EQ(ftrace_page_next(&it, &ev), 1);
	ts = 1005 + ((2ull << 27) | 3) + 1;
	ASSERT_U64_EQ(ev.ts, ts);
	/* The padding's delta counts (a discarded record keeps its time). */
	ASSERT_EQ(ftrace_page_next(&it, &ev), 1);
	ASSERT_U64_EQ(ev.ts, (4ull << 27) | 123);
	ASSERT_EQ(ftrace_page_next(&it, &ev), 1);
	ASSERT_U64_EQ(ev.ts, ((4ull << 27) | 123) + 2);
	ASSERT_EQ(ev.len, 8);
	ASSERT_EQ(ftrace_page_next(&it, &ev), 0);
	ASSERT_EQ(it.status, FTRACE_PAGE_OK);

	/* Padding delta between two records. */
	memset(page + 16, 0, sizeof(page) - 16);
	n = 16 + ft_put_record(page + 16, 5, rec, 8);
	w[0] = (40u << 5) | 29;
	w[1] = 4;
	memcpy(page + n, w, 8);
	n += 8;
	n += ft_put_record(page + n, 2, rec, 8);
	ft_put_commit(page, n - 16);
	ASSERT_EQ(ftrace_page_begin(&l, page, sizeof(page), &it, &hdr), 0);
	ASSERT_EQ(ftrace_page_next(&it, &ev), 1);
	ASSERT_EQ(ftrace_page_next(&it, &ev), 1);
	ASSERT_U64_EQ(ev.ts, 1000 + 5 + 40 + 2);

	/* A null padding (delta 0) ends the page early without an error. */
	w[0] = 29;
	memcpy(page + 16 + 12, w, 4);
	ASSERT_EQ(ftrace_page_begin(&l, page, sizeof(page), &it, &hdr), 0);
	ASSERT_EQ(ftrace_page_next(&it, &ev), 1);
	ASSERT_EQ(ftrace_page_next(&it, &ev), 0);
	ASSERT_EQ(it.status, FTRACE_PAGE_OK);
}

/* Runs a page through the iterator, touching every byte it yields. */
static int ft_walk(const struct ftrace_page_layout *l, const uint8_t *page, size_t len,
		   enum ftrace_page_status *out_status, int *out_n)
{
	struct ftrace_page_header hdr;
	struct ftrace_page_iter it;
	struct ftrace_raw_event ev;
	int r;

	*out_n = 0;
	r = ftrace_page_begin(l, page, len, &it, &hdr);
	if (r == 0) {
		while ((r = ftrace_page_next(&it, &ev)) > 0) {
			volatile uint8_t sink = 0;
			uint32_t i;

			for (i = 0; i < ev.len; i++)
				sink ^= ev.data[i];
			(void)sink;
			(*out_n)++;
		}
	}
	*out_status = it.status;
	return r;
}

/* Copies @len bytes into an exactly-sized heap block, so ASan sees overreads. */
static uint8_t *ft_exact_copy(const uint8_t *src, size_t len)
{
	uint8_t *p = malloc(len ? len : 1);

	ASSERT_TRUE(p != NULL);
	memcpy(p, src, len);
	return p;
}

TEST(ftrace_page_hostile_pages)
{
	struct ftrace_page_layout l;
	enum ftrace_page_status st;
	uint8_t page[FT_PAGE], rec[8] = {1, 0};
	size_t len, k, n_ok = 0;
	uint8_t *pages = (uint8_t *)ft_fixture("cpu0.pages", &len);
	uint32_t w[2];
	int r, n, n_full;

	ft_load_layout(&l);
	r = ft_walk(&l, pages, FT_PAGE, &st, &n_full);
	ASSERT_EQ(r, 0);
	ASSERT_GT(n_full, 0);
	/* Truncated at every byte: never an overread; a cut header fails. */
	for (k = 0; k <= FT_PAGE; k++) {
		uint8_t *p = ft_exact_copy(pages, k);

		r = ft_walk(&l, p, k, &st, &n);
		if (k < 16)
			ASSERT_EQ(r, -EBADMSG);
		ASSERT_LE(n, n_full);
		free(p);
	}
	/* The commit cut at every byte: the records before the cut survive. */
	memcpy(page, pages, FT_PAGE);
	for (k = 0; k <= 4080; k++) {
		ft_put_commit(page, k);
		r = ft_walk(&l, page, FT_PAGE, &st, &n);
		ASSERT_TRUE(r == 0 || r == -EBADMSG);
		ASSERT_LE(n, n_full);
		if (r == 0)
			n_ok++;
	}
	ASSERT_GT(n_ok, 0);

	/* Commit larger than the page, with and without the loss flags. */
	memset(page, 0, sizeof(page));
	ft_put_commit(page, 4081);
	ASSERT_EQ(ft_walk(&l, page, FT_PAGE, &st, &n), -EBADMSG);
	ASSERT_EQ(st, FTRACE_PAGE_BAD_HEADER);
	ft_put_commit(page, 0xffffffffc7ffffffull);
	ASSERT_EQ(ft_walk(&l, page, FT_PAGE, &st, &n), -EBADMSG);
	/* A stored loss count that does not fit after the data is ignored. */
	ft_put_commit(page, 4080 | (3u << 30));
	{
		struct ftrace_page_header hdr;
		struct ftrace_page_iter it;

		ASSERT_EQ(ftrace_page_begin(&l, page, FT_PAGE, &it, &hdr), 0);
		ASSERT_TRUE(hdr.has_lost_events);
		ASSERT_FALSE(hdr.has_lost_count);
	}

	/* type_len 0 with a huge, a zero and a too-short length. */
	memset(page, 0, sizeof(page));
	w[0] = 0;
	w[1] = 0xfffffff0u;
	memcpy(page + 16, w, 8);
	ft_put_commit(page, 64);
	ASSERT_EQ(ft_walk(&l, page, FT_PAGE, &st, &n), -EBADMSG);
	ASSERT_EQ(st, FTRACE_PAGE_END_OVERFLOW);
	w[1] = 0;
	memcpy(page + 16, w, 8);
	ASSERT_EQ(ft_walk(&l, page, FT_PAGE, &st, &n), -EBADMSG);
	ASSERT_EQ(st, FTRACE_PAGE_ZERO_DATA_LENGTH);
	w[1] = 5; /* one data byte: no room for the event id */
	memcpy(page + 16, w, 8);
	ASSERT_EQ(ft_walk(&l, page, FT_PAGE, &st, &n), -EBADMSG);
	ASSERT_EQ(st, FTRACE_PAGE_SHORT_EVENT_ID);

	/* Padding past the end of the data, and a padding shorter than itself. */
	w[0] = (1u << 5) | 29;
	w[1] = 4000;
	memcpy(page + 16, w, 8);
	ft_put_commit(page, 64);
	ASSERT_EQ(ft_walk(&l, page, FT_PAGE, &st, &n), -EBADMSG);
	ASSERT_EQ(st, FTRACE_PAGE_END_OVERFLOW);
	w[1] = 2;
	memcpy(page + 16, w, 8);
	ASSERT_EQ(ft_walk(&l, page, FT_PAGE, &st, &n), -EBADMSG);
	ASSERT_EQ(st, FTRACE_PAGE_BAD_PADDING_LENGTH);

	/* A data record, then a time_extend cut by the commit. */
	memset(page, 0, sizeof(page));
	k = 16 + ft_put_record(page + 16, 1, rec, 8);
	w[0] = 30;
	memcpy(page + k, w, 4);
	ft_put_commit(page, k + 4 - 16);
	ASSERT_EQ(ft_walk(&l, page, FT_PAGE, &st, &n), -EBADMSG);
	ASSERT_EQ(st, FTRACE_PAGE_SHORT_TIME_EXTEND);
	ASSERT_EQ(n, 1); /* what came before the bad record was delivered */
	/* type_len 28 (112 bytes) in a 64-byte commit. */
	w[0] = 28;
	memcpy(page + 16, w, 4);
	ft_put_commit(page, 64);
	ASSERT_EQ(ft_walk(&l, page, FT_PAGE, &st, &n), -EBADMSG);
	ASSERT_EQ(st, FTRACE_PAGE_END_OVERFLOW);
	/* Three stray bytes after the last record. */
	memset(page, 0, sizeof(page));
	k = 16 + ft_put_record(page + 16, 1, rec, 8);
	ft_put_commit(page, k - 16 + 3);
	ASSERT_EQ(ft_walk(&l, page, FT_PAGE, &st, &n), -EBADMSG);
	ASSERT_EQ(st, FTRACE_PAGE_SHORT_EVENT_HEADER);
	free(pages);
}

static uint64_t ft_xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint8_t ft_out[1 << 20];

/* Starts a bundle message over ft_out. */
static void ft_bundle_begin(struct pz_stream *s, struct pz_msg *m)
{
	pz_stream_init_flat(s, ft_out, sizeof(ft_out));
	pz_msg_begin(m, s, NULL);
}

TEST(ftrace_random_pages_never_overread)
{
	struct ftrace_compact_format cf;
	struct ftrace_compact_sched *cs = ftrace_compact_create();
	uint64_t seed = 0x1234567887654321ull;
	struct ft_set fx;
	int round;

	ASSERT_TRUE(cs != NULL);
	ft_set_load(&fx, "task_rename");
	ASSERT_EQ(ftrace_compact_format_init(&cf, ft_fmt(&fx, "sched_switch"),
					     ft_fmt(&fx, "sched_waking")),
		  0);
	for (round = 0; round < 3000; round++) {
		uint8_t *page = malloc(FT_PAGE);
		struct ftrace_bundler b;
		struct pz_stream s;
		struct pz_msg m;
		size_t i;

		for (i = 0; i < FT_PAGE; i += 8) {
			uint64_t v = ft_xorshift(&seed);

			memcpy(page + i, &v, 8);
		}
		/* Mostly-plausible commits so records get walked, and real event
		 * IDs so translation runs on garbage payloads. */
		if (round % 4 != 0)
			ft_put_commit(page, ft_xorshift(&seed) % 4100);
		for (i = 16; i + 8 < FT_PAGE && round % 2; i += 4 + 4 * (page[i] & 31)) {
			if ((page[i] & 31) == 0 || (page[i] & 31) > 28)
				break;
			memcpy(page + i + 4, &fx.fmt[ft_xorshift(&seed) % FT_N_EVENTS]->id, 2);
		}
		ftrace_bundler_init(&b, &fx.layout, fx.table, round % 3 ? &cf : NULL, cs, 0);
		ft_bundle_begin(&s, &m);
		ASSERT_EQ(ftrace_bundler_write(&b, page, 1, FT_PAGE, &m), 1);
		pz_end(&m);
		ASSERT_TRUE(pz_stream_ok(&s));
		free(page);
	}
	ftrace_compact_destroy(cs);
	ft_set_free(&fx);
}

/* ---- translation ---- */

struct ft_raw_list {
	struct ftrace_raw_event ev[8192];
	size_t n;
};

static struct ft_raw_list ft_raw;
static struct pz_field ft_slots[700];

static int ft_collect_cb(const struct ftrace_raw_event *ev, void *user)
{
	struct ft_raw_list *l = user;

	ASSERT_LT(l->n, sizeof(l->ev) / sizeof(l->ev[0]));
	l->ev[l->n++] = *ev;
	return 0;
}

/* Appends every record of a pages file to @l (views into the returned pages). */
static uint8_t *ft_collect(const struct ft_set *fx, const char *file, struct ft_raw_list *l,
			   size_t *out_len)
{
	uint8_t *pages = (uint8_t *)ft_fixture(file, out_len);
	size_t off;

	for (off = 0; off < *out_len; off += FT_PAGE)
		ASSERT_GE(ftrace_page_decode(&fx->layout, pages + off, FT_PAGE, ft_collect_cb, l,
					     NULL, NULL),
			  0);
	return pages;
}

/* Translates @ev alone into a bundle; *out_event gets the FtraceEvent bytes. */
static void ft_translate_one(const struct ftrace_event_table *t, const struct ftrace_raw_event *ev,
			     int want, struct pz_field *out_event)
{
	struct pz_field bundle[16];
	struct pz_stream s;
	struct pz_msg m;

	ft_bundle_begin(&s, &m);
	ASSERT_EQ(ftrace_translate_event(t, ev, &m), want);
	pz_end(&m);
	ASSERT_TRUE(pz_stream_ok(&s));
	ASSERT_EQ(pz_decode_table(ft_out, s.n_bytes, bundle, 16), PZ_OK);
	ASSERT_EQ(bundle[PB_FTRACE_EVENT_BUNDLE__EVENT].id, PB_FTRACE_EVENT_BUNDLE__EVENT);
	*out_event = bundle[PB_FTRACE_EVENT_BUNDLE__EVENT];
}

static void ft_field_str(const struct pz_field *f, char *out, size_t cap)
{
	ASSERT_EQ(f->wire_type, PZ_WIRE_LEN);
	ASSERT_LT(f->size, cap);
	memcpy(out, f->data, f->size);
	out[f->size] = '\0';
	/* Strings stop at the kernel's NUL: none may be carried along. */
	ASSERT_EQ(strlen(out), f->size);
}

TEST(ftrace_translate_sched_switch_matches_raw)
{
	const struct ftrace_format *sw;
	size_t len, i, checked = 0;
	struct ft_set fx;
	uint8_t *pages;

	ft_set_load(&fx, NULL);
	sw = ft_fmt(&fx, "sched_switch");
	ft_raw.n = 0;
	pages = ft_collect(&fx, "sched_cpu0.pages", &ft_raw, &len);
	for (i = 0; i < ft_raw.n; i++) {
		const struct ftrace_raw_event *ev = &ft_raw.ev[i];
		struct pz_field event, sub[8];
		char a[32], b[32];

		if (ev->id != sw->id)
			continue;
		ft_translate_one(fx.table, ev, 0, &event);
		ASSERT_EQ(pz_decode_table(event.data, event.size, ft_slots, 700), PZ_OK);
		ASSERT_U64_EQ(ft_slots[PB_FTRACE_EVENT__TIMESTAMP].value, ev->ts);
		ASSERT_EQ(ft_slots[PB_FTRACE_EVENT__PID].id, PB_FTRACE_EVENT__PID);
		ASSERT_EQ(pz_field_int32(&ft_slots[PB_FTRACE_EVENT__PID]),
			  ft_raw_int(sw, ev, "common_pid"));
		ASSERT_EQ(ft_slots[PB_FTRACE_EVENT__SCHED_SWITCH].id,
			  PB_FTRACE_EVENT__SCHED_SWITCH);
		ASSERT_EQ(pz_decode_table(ft_slots[PB_FTRACE_EVENT__SCHED_SWITCH].data,
					  ft_slots[PB_FTRACE_EVENT__SCHED_SWITCH].size, sub, 8),
			  PZ_OK);
		ft_field_str(&sub[PB_SCHED_SWITCH_FTRACE_EVENT__PREV_COMM], a, sizeof(a));
		ft_raw_str(sw, ev, "prev_comm", b, sizeof(b));
		ASSERT_STREQ(a, b);
		ft_field_str(&sub[PB_SCHED_SWITCH_FTRACE_EVENT__NEXT_COMM], a, sizeof(a));
		ft_raw_str(sw, ev, "next_comm", b, sizeof(b));
		ASSERT_STREQ(a, b);
		ASSERT_EQ(pz_field_int32(&sub[PB_SCHED_SWITCH_FTRACE_EVENT__PREV_PID]),
			  ft_raw_int(sw, ev, "prev_pid"));
		ASSERT_EQ(pz_field_int32(&sub[PB_SCHED_SWITCH_FTRACE_EVENT__NEXT_PID]),
			  ft_raw_int(sw, ev, "next_pid"));
		ASSERT_EQ(pz_field_int32(&sub[PB_SCHED_SWITCH_FTRACE_EVENT__PREV_PRIO]),
			  ft_raw_int(sw, ev, "prev_prio"));
		ASSERT_EQ(pz_field_int32(&sub[PB_SCHED_SWITCH_FTRACE_EVENT__NEXT_PRIO]),
			  ft_raw_int(sw, ev, "next_prio"));
		ASSERT_EQ(pz_field_int64(&sub[PB_SCHED_SWITCH_FTRACE_EVENT__PREV_STATE]),
			  ft_raw_int(sw, ev, "prev_state"));
		checked++;
	}
	ASSERT_GT(checked, 50);
	free(pages);
	ft_set_free(&fx);
}

TEST(ftrace_translate_print_exec_sys_enter_newtask)
{
	const struct ftrace_format *pr, *ex, *se, *nt;
	bool saw_print = false, saw_exec = false, saw_sys = false, saw_newtask = false;
	struct ft_set fx;
	size_t len0, len1, i;
	uint8_t *p0, *p1;

	ft_set_load(&fx, NULL);
	pr = ft_fmt(&fx, "print");
	ex = ft_fmt(&fx, "sched_process_exec");
	se = ft_fmt(&fx, "sys_enter");
	nt = ft_fmt(&fx, "task_newtask");
	ft_raw.n = 0;
	p0 = ft_collect(&fx, "cpu0.pages", &ft_raw, &len0);
	p1 = ft_collect(&fx, "cpu1.pages", &ft_raw, &len1);
	for (i = 0; i < ft_raw.n; i++) {
		const struct ftrace_raw_event *ev = &ft_raw.ev[i];
		struct pz_field event, sub[8];
		char s[4096];

		if (ev->id != pr->id && ev->id != ex->id && ev->id != se->id && ev->id != nt->id)
			continue;
		ft_translate_one(fx.table, ev, 0, &event);
		ASSERT_EQ(pz_decode_table(event.data, event.size, ft_slots, 700), PZ_OK);
		if (ev->id == pr->id) {
			struct pz_field *f = &ft_slots[PB_FTRACE_EVENT__PRINT];

			ASSERT_EQ(pz_decode_table(f->data, f->size, sub, 8), PZ_OK);
			ASSERT_U64_EQ(sub[PB_PRINT_FTRACE_EVENT__IP].value, ft_raw_int(pr, ev, "ip"));
			ft_field_str(&sub[PB_PRINT_FTRACE_EVENT__BUF], s, sizeof(s));
			ASSERT_EQ(strlen(s), strnlen((const char *)ev->data + 16, ev->len - 16));
			if (strcmp(s, FT_MARKER "\n") == 0)
				saw_print = true;
		} else if (ev->id == ex->id) {
			struct pz_field *f = &ft_slots[PB_FTRACE_EVENT__SCHED_PROCESS_EXEC];
			uint32_t loc = (uint32_t)ft_raw_int(ex, ev, "filename");

			ASSERT_EQ(pz_decode_table(f->data, f->size, sub, 8), PZ_OK);
			ft_field_str(&sub[PB_SCHED_PROCESS_EXEC_FTRACE_EVENT__FILENAME], s,
				     sizeof(s));
			ASSERT_EQ(strlen(s) + 1, loc >> 16);
			ASSERT_GT(strlen(s), 0);
			ASSERT_MEMEQ(s, ev->data + (loc & 0xffff), strlen(s));
			ASSERT_EQ(pz_field_int32(&sub[PB_SCHED_PROCESS_EXEC_FTRACE_EVENT__PID]),
				  ft_raw_int(ex, ev, "pid"));
			saw_exec = true;
		} else if (ev->id == se->id) {
			struct pz_field *f = &ft_slots[PB_FTRACE_EVENT__SYS_ENTER];
			const struct ftrace_field *args = ftrace_format_field(se, "args");
			struct pz_reader r;
			struct pz_field x;
			int k = 0;

			pz_reader_init(&r, f->data, f->size);
			while (pz_reader_next(&r, &x) > 0) {
				if (x.id == PB_SYS_ENTER_FTRACE_EVENT__ID) {
					ASSERT_EQ(pz_field_int64(&x), ft_raw_int(se, ev, "id"));
				} else if (x.id == PB_SYS_ENTER_FTRACE_EVENT__ARGS) {
					uint64_t a;

					ASSERT_EQ(x.wire_type, PZ_WIRE_VARINT);
					ASSERT_LT(k, 6);
					memcpy(&a, ev->data + args->offset + 8 * k, 8);
					ASSERT_U64_EQ(x.value, a);
					k++;
				}
			}
			ASSERT_EQ(k, 6);
			saw_sys = true;
		} else {
			struct pz_field *f = &ft_slots[PB_FTRACE_EVENT__TASK_NEWTASK];
			char b[32];

			ASSERT_EQ(pz_decode_table(f->data, f->size, sub, 8), PZ_OK);
			ft_field_str(&sub[PB_TASK_NEWTASK_FTRACE_EVENT__COMM], s, sizeof(s));
			ft_raw_str(nt, ev, "comm", b, sizeof(b));
			ASSERT_STREQ(s, b);
			ASSERT_U64_EQ(sub[PB_TASK_NEWTASK_FTRACE_EVENT__CLONE_FLAGS].value,
				      ft_raw_int(nt, ev, "clone_flags"));
			ASSERT_EQ(pz_field_int32(&sub[PB_TASK_NEWTASK_FTRACE_EVENT__OOM_SCORE_ADJ]),
				  ft_raw_int(nt, ev, "oom_score_adj"));
			saw_newtask = true;
		}
	}
	ASSERT_TRUE(saw_print);
	ASSERT_TRUE(saw_exec);
	ASSERT_TRUE(saw_sys);
	ASSERT_TRUE(saw_newtask);
	free(p0);
	free(p1);
	ft_set_free(&fx);
}

TEST(ftrace_translate_generic_carries_every_field)
{
	const struct ftrace_format *sw;
	size_t len, i, checked = 0;
	struct ft_set fx;
	uint8_t *pages;

	ft_set_load(&fx, "sched_switch");
	sw = ft_fmt(&fx, "sched_switch");
	ft_raw.n = 0;
	pages = ft_collect(&fx, "sched_cpu1.pages", &ft_raw, &len);
	for (i = 0; i < ft_raw.n; i++) {
		const struct ftrace_raw_event *ev = &ft_raw.ev[i];
		struct pz_field event, x, fs[8];
		uint32_t k = sw->n_common;
		struct pz_reader r;
		char name[64], s[64];

		if (ev->id != sw->id)
			continue;
		ft_translate_one(fx.table, ev, 0, &event);
		ASSERT_EQ(pz_decode_table(event.data, event.size, ft_slots, 700), PZ_OK);
		ASSERT_EQ(ft_slots[PB_FTRACE_EVENT__SCHED_SWITCH].id, 0);
		ASSERT_EQ(ft_slots[PB_FTRACE_EVENT__GENERIC].id, PB_FTRACE_EVENT__GENERIC);
		pz_reader_init(&r, ft_slots[PB_FTRACE_EVENT__GENERIC].data,
			       ft_slots[PB_FTRACE_EVENT__GENERIC].size);
		while (pz_reader_next(&r, &x) > 0) {
			const struct ftrace_field *kf;

			if (x.id == PB_GENERIC_FTRACE_EVENT__EVENT_NAME) {
				ft_field_str(&x, name, sizeof(name));
				ASSERT_STREQ(name, "sched_switch");
				continue;
			}
			ASSERT_EQ(x.id, PB_GENERIC_FTRACE_EVENT__FIELD);
			ASSERT_LT(k, sw->n_fields);
			kf = &sw->fields[k++];
			ASSERT_EQ(pz_decode_table(x.data, x.size, fs, 8), PZ_OK);
			ft_field_str(&fs[PB_GENERIC_FTRACE_EVENT_FIELD__NAME], name, sizeof(name));
			ASSERT_STREQ(name, kf->name);
			if (kf->kind == FTRACE_FIELD_CHAR_ARRAY) {
				char b[32];

				ft_field_str(&fs[PB_GENERIC_FTRACE_EVENT_FIELD__STR_VALUE], s,
					     sizeof(s));
				ft_raw_str(sw, ev, kf->name, b, sizeof(b));
				ASSERT_STREQ(s, b);
			} else if (kf->is_signed) {
				ASSERT_EQ(fs[PB_GENERIC_FTRACE_EVENT_FIELD__INT_VALUE].id,
					  PB_GENERIC_FTRACE_EVENT_FIELD__INT_VALUE);
				ASSERT_EQ(pz_field_int64(&fs[PB_GENERIC_FTRACE_EVENT_FIELD__INT_VALUE]),
					  ft_raw_int(sw, ev, kf->name));
			} else {
				ASSERT_U64_EQ(fs[PB_GENERIC_FTRACE_EVENT_FIELD__UINT_VALUE].value,
					      ft_raw_int(sw, ev, kf->name));
			}
		}
		ASSERT_EQ(k, sw->n_fields); /* every field, in order */
		checked++;
	}
	ASSERT_GT(checked, 50);
	free(pages);
	ft_set_free(&fx);
}

/*
 * True if two encodings carry the same fields: length-delimited fields that
 * differ in bytes are compared again as messages (nested lengths may be
 * encoded with different widths).
 */
static bool ft_same_message(const uint8_t *a, size_t na, const uint8_t *b, size_t nb, int depth)
{
	struct pz_reader ra, rb;
	struct pz_field fa, fb;
	int ka, kb;

	pz_reader_init(&ra, a, na);
	pz_reader_init(&rb, b, nb);
	for (;;) {
		ka = pz_reader_next(&ra, &fa);
		kb = pz_reader_next(&rb, &fb);
		if (ka != kb)
			return false;
		if (ka <= 0)
			return ka == 0;
		if (fa.id != fb.id || fa.wire_type != fb.wire_type)
			return false;
		if (fa.wire_type != PZ_WIRE_LEN) {
			if (fa.value != fb.value)
				return false;
			continue;
		}
		if (fa.size == fb.size && memcmp(fa.data, fb.data, fa.size) == 0)
			continue;
		if (depth == 0 || !ft_same_message(fa.data, fa.size, fb.data, fb.size, depth - 1))
			return false;
	}
}

TEST(ftrace_translate_synthetic_dynamic_fields)
{
	static const char k_text[] =
		"name: pfc_synthetic_evt\nID: 900\nformat:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
		"\n"
		"\tfield:__data_loc char[] dl;\toffset:8;\tsize:4;\tsigned:0;\n"
		"\tfield:__rel_loc char[] rl;\toffset:12;\tsize:4;\tsigned:0;\n"
		"\tfield:s8 small;\toffset:16;\tsize:1;\tsigned:1;\n"
		"\tfield:u16 arr[2];\toffset:18;\tsize:4;\tsigned:0;\n"
		"\nprint fmt: \"x\"\n";
	struct ftrace_format *f = malloc(sizeof(*f));
	struct ftrace_event_table *t = ftrace_event_table_create();
	uint8_t rec[40] = {0};
	struct ftrace_raw_event ev = {.ts = 42, .data = rec, .len = sizeof(rec), .id = 900};
	struct pz_field event, fl[8], x;
	struct pz_reader r;
	struct pz_stream s;
	struct pz_msg m;
	uint32_t loc;
	int32_t pid = -7;
	int n_fields = 0;
	char str[64];

	ASSERT_EQ(ftrace_format_parse(k_text, strlen(k_text), f), 0);
	ASSERT_EQ(ftrace_event_table_add(t, f, 0), PB_FTRACE_EVENT__GENERIC);
	ASSERT_EQ(ftrace_event_table_add(t, f, 0), -EEXIST);
	ASSERT_TRUE(ftrace_event_table_has(t, 900));
	ASSERT_FALSE(ftrace_event_table_has(t, 901));
	memcpy(rec, &ev.id, 2);
	memcpy(rec + 4, &pid, 4);
	memcpy(rec + 24, "hello\0", 6);
	loc = (6u << 16) | 24;
	memcpy(rec + 8, &loc, 4);
	memcpy(rec + 32, "rel", 4);
	loc = (4u << 16) | (32 - 16); /* relative to the end of the field */
	memcpy(rec + 12, &loc, 4);
	rec[16] = 0xfe; /* -2 */
	rec[18] = 1;
	rec[20] = 2;

	ft_translate_one(t, &ev, 0, &event);
	ASSERT_EQ(pz_decode_table(event.data, event.size, ft_slots, 700), PZ_OK);
	ASSERT_EQ(pz_field_int32(&ft_slots[PB_FTRACE_EVENT__PID]), -7);
	ASSERT_U64_EQ(ft_slots[PB_FTRACE_EVENT__TIMESTAMP].value, 42);
	pz_reader_init(&r, ft_slots[PB_FTRACE_EVENT__GENERIC].data,
		       ft_slots[PB_FTRACE_EVENT__GENERIC].size);
	while (pz_reader_next(&r, &x) > 0) {
		if (x.id == PB_GENERIC_FTRACE_EVENT__EVENT_NAME) {
			ft_field_str(&x, str, sizeof(str));
			ASSERT_STREQ(str, "pfc_synthetic_evt");
			continue;
		}
		ASSERT_EQ(pz_decode_table(x.data, x.size, fl, 8), PZ_OK);
		switch (n_fields++) {
		case 0:
			ft_field_str(&fl[PB_GENERIC_FTRACE_EVENT_FIELD__STR_VALUE], str, sizeof(str));
			ASSERT_STREQ(str, "hello");
			break;
		case 1:
			ft_field_str(&fl[PB_GENERIC_FTRACE_EVENT_FIELD__STR_VALUE], str, sizeof(str));
			ASSERT_STREQ(str, "rel");
			break;
		case 2:
			ASSERT_EQ(pz_field_int64(&fl[PB_GENERIC_FTRACE_EVENT_FIELD__INT_VALUE]), -2);
			break;
		default: /* one Field per array element, under the array's name */
			ft_field_str(&fl[PB_GENERIC_FTRACE_EVENT_FIELD__NAME], str, sizeof(str));
			ASSERT_STREQ(str, "arr");
			ASSERT_U64_EQ(fl[PB_GENERIC_FTRACE_EVENT_FIELD__UINT_VALUE].value,
				      n_fields == 4 ? 1 : 2);
			break;
		}
	}
	ASSERT_EQ(n_fields, 5);

	/* A __data_loc pointing past the record drops that field only. */
	loc = (200u << 16) | 24;
	memcpy(rec + 8, &loc, 4);
	ft_translate_one(t, &ev, FTRACE_XLAT_PARTIAL, &event);
	/* A record shorter than the format writes nothing. */
	ev.len = 10;
	ft_bundle_begin(&s, &m);
	ASSERT_EQ(ftrace_translate_event(t, &ev, &m), -EBADMSG);
	pz_end(&m);
	ASSERT_EQ(s.n_bytes, 0);
	ev.id = 901;
	ASSERT_EQ(ftrace_translate_event(t, &ev, &m), -ENOENT);
	ftrace_event_table_destroy(t);
	free(f);
}

/* Events whose worst case does not fit the stack scratch take the nested
 * path; both paths must carry the same fields. */
TEST(ftrace_translate_large_records_match_small)
{
	static uint8_t big[20000];
	static uint8_t first[4096];
	const struct ftrace_format *fork;
	struct ftrace_raw_event ev;
	struct pz_field a, b;
	struct ft_set fx;
	size_t first_len;
	uint32_t loc;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		/* Pass 1 forces sched_process_fork to GenericFtraceEvent. */
		ft_set_load(&fx, pass ? "sched_process_fork" : NULL);
		fork = ft_fmt(&fx, "sched_process_fork");
		memset(big, 0, sizeof(big));
		memcpy(big, &fork->id, 2);
		memcpy(big + 4, &(int32_t){123}, 4);
		memcpy(big + 40, "parent\0child\0", 13);
		loc = (7u << 16) | 40;
		memcpy(big + ftrace_format_field(fork, "parent_comm")->offset, &loc, 4);
		loc = (6u << 16) | 47;
		memcpy(big + ftrace_format_field(fork, "child_comm")->offset, &loc, 4);
		memcpy(big + ftrace_format_field(fork, "child_pid")->offset, &(int32_t){-5}, 4);
		ev.ts = 77;
		ev.id = (uint16_t)fork->id;
		ev.data = big;

		ev.len = 64;
		ft_translate_one(fx.table, &ev, 0, &a);
		ASSERT_LT(a.size, sizeof(first));
		memcpy(first, a.data, a.size);
		first_len = a.size;
		ev.len = sizeof(big);
		ft_translate_one(fx.table, &ev, 0, &b);
		ASSERT_TRUE(ft_same_message(first, first_len, b.data, b.size, 3));
		/* And a different record is told apart. */
		big[41] = 'X';
		ft_translate_one(fx.table, &ev, 0, &b);
		ASSERT_FALSE(ft_same_message(first, first_len, b.data, b.size, 3));
		ft_set_free(&fx);
	}
}

/* Translated into a stream of small chunks, events rarely fit the current
 * range, so they take the stack-buffer path; the fields must not change. */
TEST(ftrace_translate_chunked_stream_matches_flat)
{
	static uint8_t chunked[1 << 20];
	struct pz_chunks c;
	struct pz_stream s;
	struct pz_msg m, mc;
	struct ft_set fx;
	size_t len, i;
	int64_t n;
	uint8_t *pages;

	ft_set_load(&fx, "task_rename");
	ft_raw.n = 0;
	pages = ft_collect(&fx, "cpu0.pages", &ft_raw, &len);
	ASSERT_GT(ft_raw.n, 100);
	ft_bundle_begin(&s, &m);
	ASSERT_EQ(pz_chunks_init(&c, 64, 0), 0);
	pz_msg_begin(&mc, &c.s, NULL);
	for (i = 0; i < ft_raw.n; i++) {
		ASSERT_EQ(ftrace_translate_event(fx.table, &ft_raw.ev[i], &m), 0);
		ASSERT_EQ(ftrace_translate_event(fx.table, &ft_raw.ev[i], &mc), 0);
	}
	pz_end(&m);
	pz_end(&mc);
	ASSERT_TRUE(pz_stream_ok(&s));
	ASSERT_TRUE(pz_stream_ok(&c.s));
	n = pz_chunks_copy(&c, chunked, sizeof(chunked));
	ASSERT_GT(n, 0);
	ASSERT_TRUE(ft_same_message(ft_out, s.n_bytes, chunked, (size_t)n, 4));
	pz_chunks_fini(&c);
	free(pages);
	ft_set_free(&fx);
}

/* ---- compact_sched and bundles ---- */

struct ft_sched_row {
	uint64_t ts;
	int64_t a, b, c; /* switch: next_pid, next_prio, prev_state; waking: pid, prio, cpu */
	uint32_t flags;
	char comm[17];
};

static struct ft_sched_row ft_want_sw[4096], ft_want_wk[4096], ft_got_sw[4096], ft_got_wk[4096];
static uint64_t ft_col[12][4096];

static size_t ft_unpack(const struct pz_field *f, uint64_t *out, size_t cap)
{
	struct pz_packed it;
	uint64_t v;
	size_t n = 0;

	if (f->id == 0)
		return 0;
	pz_packed_init(&it, f);
	while (pz_packed_next_varint(&it, &v) > 0) {
		ASSERT_LT(n, cap);
		out[n++] = v;
	}
	ASSERT_EQ(it.err, PZ_OK);
	return n;
}

/* Decodes one CompactSched, appending to ft_got_sw / ft_got_wk. */
static void ft_decode_compact(const uint8_t *data, size_t len, size_t *n_sw, size_t *n_wk)
{
	static char intern[FTRACE_COMPACT_MAX_COMMS][17];
	struct pz_field f, cols[13];
	size_t n_intern = 0, n[13] = {0}, i;
	struct pz_reader r;
	uint64_t ts;

	memset(cols, 0, sizeof(cols));
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id == PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__INTERN_TABLE) {
			ASSERT_LT(n_intern, FTRACE_COMPACT_MAX_COMMS);
			ASSERT_LE(f.size, 16);
			memcpy(intern[n_intern], f.data, f.size);
			intern[n_intern][f.size] = '\0';
			ASSERT_EQ(strlen(intern[n_intern]), f.size);
			n_intern++;
		} else if (f.id < 13) {
			ASSERT_EQ(cols[f.id].id, 0); /* each column once */
			cols[f.id] = f;
		}
	}
	for (i = 1; i < 13; i++)
		if (i != PB_FTRACE_EVENT_BUNDLE_COMPACT_SCHED__INTERN_TABLE)
			n[i] = ft_unpack(&cols[i], ft_col[i - 1], 4096);
	for (i = 2; i <= 6; i++)
		if (i != 5)
			ASSERT_EQ(n[i], n[1]);
	for (i = 0, ts = 0; i < n[1]; i++) {
		struct ft_sched_row *row = &ft_got_sw[*n_sw + i];

		ts += ft_col[0][i]; /* deltas; the first from 0 */
		row->ts = ts;
		row->c = (int64_t)ft_col[1][i];
		row->a = (int32_t)ft_col[2][i];
		row->b = (int32_t)ft_col[3][i];
		row->flags = 0;
		ASSERT_LT(ft_col[5][i], n_intern);
		snprintf(row->comm, sizeof(row->comm), "%s", intern[ft_col[5][i]]);
	}
	*n_sw += n[1];
	for (i = 8; i <= 12; i++)
		ASSERT_EQ(n[i], n[7]);
	for (i = 0, ts = 0; i < n[7]; i++) {
		struct ft_sched_row *row = &ft_got_wk[*n_wk + i];

		ts += ft_col[6][i];
		row->ts = ts;
		row->a = (int32_t)ft_col[7][i];
		row->c = (int32_t)ft_col[8][i];
		row->b = (int32_t)ft_col[9][i];
		ASSERT_LT(ft_col[10][i], n_intern);
		snprintf(row->comm, sizeof(row->comm), "%s", intern[ft_col[10][i]]);
		row->flags = (uint32_t)ft_col[11][i];
	}
	*n_wk += n[7];
}

static void ft_expect_rows(const struct ft_sched_row *want, const struct ft_sched_row *got,
			   size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		ASSERT_U64_EQ(got[i].ts, want[i].ts);
		ASSERT_EQ(got[i].a, want[i].a);
		ASSERT_EQ(got[i].b, want[i].b);
		ASSERT_EQ(got[i].c, want[i].c);
		ASSERT_EQ(got[i].flags, want[i].flags);
		ASSERT_STREQ(got[i].comm, want[i].comm);
	}
}

/* Runs every page of @file through a bundler with compact_sched and checks
 * that switches and wakings decode back to the raw records. */
static void ft_check_compact_round_trip(const char *file)
{
	struct ftrace_compact_sched *cs = ftrace_compact_create();
	size_t len, i, n_want_sw = 0, n_want_wk = 0, n_sw = 0, n_wk = 0, done = 0;
	const struct ftrace_format *sw, *wk;
	struct ftrace_compact_format cf;
	struct ftrace_bundler b;
	size_t n_other = 0;
	struct ft_set fx;
	uint8_t *pages;

	ASSERT_TRUE(cs != NULL);
	ft_set_load(&fx, NULL);
	sw = ft_fmt(&fx, "sched_switch");
	wk = ft_fmt(&fx, "sched_waking");
	ASSERT_EQ(ftrace_compact_format_init(&cf, sw, wk), 0);
	ASSERT_TRUE(cf.has_switch && cf.has_waking);
	ft_raw.n = 0;
	pages = ft_collect(&fx, file, &ft_raw, &len);
	for (i = 0; i < ft_raw.n; i++) {
		const struct ftrace_raw_event *ev = &ft_raw.ev[i];
		struct ft_sched_row *row;

		if (ev->id == sw->id) {
			row = &ft_want_sw[n_want_sw++];
			row->a = ft_raw_int(sw, ev, "next_pid");
			row->b = ft_raw_int(sw, ev, "next_prio");
			row->c = ft_raw_int(sw, ev, "prev_state");
			row->flags = 0;
			ft_raw_str(sw, ev, "next_comm", row->comm, sizeof(row->comm));
		} else if (ev->id == wk->id) {
			row = &ft_want_wk[n_want_wk++];
			row->a = ft_raw_int(wk, ev, "pid");
			row->b = ft_raw_int(wk, ev, "prio");
			row->c = ft_raw_int(wk, ev, "target_cpu");
			row->flags = (uint32_t)ft_raw_int(wk, ev, "common_flags");
			ft_raw_str(wk, ev, "comm", row->comm, sizeof(row->comm));
		} else {
			n_other++;
			continue;
		}
		row->ts = ev->ts;
	}
	ASSERT_GT(n_want_sw, 0);

	ftrace_bundler_init(&b, &fx.layout, fx.table, &cf, cs, 1);
	while (done < len / FT_PAGE) {
		struct pz_stream s;
		struct pz_msg m;
		struct pz_reader r;
		struct pz_field f;
		size_t used;

		ft_bundle_begin(&s, &m);
		used = ftrace_bundler_write(&b, pages + done * FT_PAGE, len / FT_PAGE - done,
					    FT_PAGE, &m);
		pz_end(&m);
		ASSERT_GE(used, 1);
		ASSERT_TRUE(pz_stream_ok(&s));
		done += used;
		pz_reader_init(&r, ft_out, s.n_bytes);
		while (pz_reader_next(&r, &f) > 0) {
			if (f.id == PB_FTRACE_EVENT_BUNDLE__CPU)
				ASSERT_EQ(f.value, 1);
			else if (f.id == PB_FTRACE_EVENT_BUNDLE__COMPACT_SCHED)
				ft_decode_compact(f.data, f.size, &n_sw, &n_wk);
			else if (f.id == PB_FTRACE_EVENT_BUNDLE__ERROR)
				FAIL("unexpected error in bundle");
		}
	}
	ASSERT_EQ(n_sw, n_want_sw);
	ASSERT_EQ(n_wk, n_want_wk);
	ft_expect_rows(ft_want_sw, ft_got_sw, n_sw);
	ft_expect_rows(ft_want_wk, ft_got_wk, n_wk);
	ASSERT_EQ(b.stats.n_compact, n_want_sw + n_want_wk);
	ASSERT_EQ(b.stats.n_events, n_other);
	ASSERT_EQ(b.stats.n_bad_pages, 0);
	ASSERT_EQ(b.stats.n_pages, len / FT_PAGE);
	free(pages);
	ftrace_compact_destroy(cs);
	ft_set_free(&fx);
}

TEST(ftrace_compact_round_trip_mixed_pages)
{
	ft_check_compact_round_trip("cpu0.pages");
}

TEST(ftrace_compact_round_trip_sched_pages)
{
	ft_check_compact_round_trip("sched_cpu0.pages");
	ft_check_compact_round_trip("sched_cpu1.pages");
}

TEST(ftrace_compact_limits)
{
	struct ftrace_compact_sched *cs = ftrace_compact_create();
	struct ftrace_compact_format cf;
	struct ft_set fx;
	uint8_t rec[64] = {0};
	struct ftrace_raw_event ev = {.data = rec, .len = sizeof(rec)};
	int i;

	ft_set_load(&fx, NULL);
	ASSERT_EQ(ftrace_compact_format_init(&cf, NULL, NULL), -ENOTSUP);
	ASSERT_EQ(ftrace_compact_format_init(&cf, ft_fmt(&fx, "print"), NULL), -ENOTSUP);
	ASSERT_EQ(ftrace_compact_format_init(&cf, ft_fmt(&fx, "sched_switch"), NULL), 0);
	ASSERT_FALSE(cf.has_waking);
	ev.id = cf.switch_id;
	ASSERT_TRUE(ftrace_compact_is_empty(cs));
	/* Distinct comms up to the interning limit, then -ENOSPC. */
	for (i = 0; i < FTRACE_COMPACT_MAX_COMMS; i++) {
		snprintf((char *)rec + cf.sw_next_comm, 16, "c%d", i);
		ASSERT_EQ(ftrace_compact_add(cs, &cf, &ev), 1);
	}
	ASSERT_FALSE(ftrace_compact_has_room(cs, 1));
	snprintf((char *)rec + cf.sw_next_comm, 16, "new");
	ASSERT_EQ(ftrace_compact_add(cs, &cf, &ev), -ENOSPC);
	snprintf((char *)rec + cf.sw_next_comm, 16, "c7");
	ASSERT_EQ(ftrace_compact_add(cs, &cf, &ev), 1);
	/* Events up to the column limit. */
	for (i = FTRACE_COMPACT_MAX_COMMS + 1; i < FTRACE_COMPACT_MAX_EVENTS; i++)
		ASSERT_EQ(ftrace_compact_add(cs, &cf, &ev), 1);
	ASSERT_EQ(ftrace_compact_add(cs, &cf, &ev), -ENOSPC);
	ev.len = 10;
	ASSERT_EQ(ftrace_compact_add(cs, &cf, &ev), -EBADMSG);
	ev.id = (uint16_t)(cf.switch_id + 1);
	ASSERT_EQ(ftrace_compact_add(cs, &cf, &ev), 0);
	ftrace_compact_reset(cs);
	ASSERT_TRUE(ftrace_compact_is_empty(cs));
	ASSERT_TRUE(ftrace_compact_has_room(cs, 100));
	ftrace_compact_destroy(cs);
	ft_set_free(&fx);
}

TEST(ftrace_bundle_lost_events_and_errors)
{
	uint8_t *batch = malloc(3 * FT_PAGE);
	struct ftrace_bundler b;
	struct pz_field f[16], e[4];
	struct pz_stream s;
	struct pz_msg m;
	struct ft_set fx;
	size_t len;
	uint8_t *over = (uint8_t *)ft_fixture("overrun.pages", &len);
	uint8_t *sched = (uint8_t *)ft_fixture("sched_cpu0.pages", &len);

	ASSERT_GE(len, 2 * FT_PAGE);
	ft_set_load(&fx, NULL);
	ftrace_bundler_init(&b, &fx.layout, fx.table, NULL, NULL, 3);
	/* [good page][overrun page][good page]: the loss splits the bundle. */
	memcpy(batch, sched, FT_PAGE);
	memcpy(batch + FT_PAGE, over, FT_PAGE);
	memcpy(batch + 2 * FT_PAGE, sched + FT_PAGE, FT_PAGE);
	ft_bundle_begin(&s, &m);
	ASSERT_EQ(ftrace_bundler_write(&b, batch, 3, FT_PAGE, &m), 1);
	pz_end(&m);
	ASSERT_EQ(pz_decode_table(ft_out, s.n_bytes, f, 16), PZ_OK);
	ASSERT_EQ(f[PB_FTRACE_EVENT_BUNDLE__CPU].value, 3);
	ASSERT_EQ(f[PB_FTRACE_EVENT_BUNDLE__LOST_EVENTS].id, 0);
	ASSERT_EQ(f[PB_FTRACE_EVENT_BUNDLE__PREVIOUS_BUNDLE_END_TIMESTAMP].value, 0);
	ASSERT_EQ(f[PB_FTRACE_EVENT_BUNDLE__EVENT].id, PB_FTRACE_EVENT_BUNDLE__EVENT);

	ft_bundle_begin(&s, &m);
	ASSERT_EQ(ftrace_bundler_write(&b, batch + FT_PAGE, 2, FT_PAGE, &m), 2);
	pz_end(&m);
	ASSERT_EQ(pz_decode_table(ft_out, s.n_bytes, f, 16), PZ_OK);
	ASSERT_EQ(f[PB_FTRACE_EVENT_BUNDLE__LOST_EVENTS].value, 1);
	ASSERT_GT(f[PB_FTRACE_EVENT_BUNDLE__PREVIOUS_BUNDLE_END_TIMESTAMP].value, 0);
	ASSERT_EQ(b.stats.n_lost_pages, 1);
	ASSERT_GT(b.stats.lost_events, 0);
	ASSERT_EQ(b.stats.n_pages, 3);
	ASSERT_EQ(b.stats.n_bad_pages, 0);

	/* A corrupt page: an error entry with the status. */
	ft_put_commit(batch, 5000);
	ft_bundle_begin(&s, &m);
	ASSERT_EQ(ftrace_bundler_write(&b, batch, 1, FT_PAGE, &m), 1);
	pz_end(&m);
	ASSERT_EQ(pz_decode_table(ft_out, s.n_bytes, f, 16), PZ_OK);
	ASSERT_EQ(f[PB_FTRACE_EVENT_BUNDLE__ERROR].id, PB_FTRACE_EVENT_BUNDLE__ERROR);
	ASSERT_EQ(pz_decode_table(f[PB_FTRACE_EVENT_BUNDLE__ERROR].data,
				  f[PB_FTRACE_EVENT_BUNDLE__ERROR].size, e, 4),
		  PZ_OK);
	ASSERT_EQ(e[PB_FTRACE_EVENT_BUNDLE_FTRACE_ERROR__STATUS].value,
		  PBE_FTRACE_PARSE_STATUS__FTRACE_STATUS_ABI_INVALID_PAGE_HEADER);
	ASSERT_EQ(b.stats.n_bad_pages, 1);
	ASSERT_EQ(ftrace_bundler_write(&b, batch, 0, FT_PAGE, &m), 0);
	free(batch);
	free(over);
	free(sched);
	ft_set_free(&fx);
}

/* The page-at-a-time API: a loss page is refused mid-bundle, taken first. */
TEST(ftrace_bundle_page_at_a_time)
{
	struct ftrace_bundler b;
	struct pz_field f[16];
	struct pz_stream s;
	struct pz_msg m;
	struct ft_set fx;
	size_t len, len2;
	uint8_t *over = (uint8_t *)ft_fixture("overrun.pages", &len);
	uint8_t *sched = (uint8_t *)ft_fixture("sched_cpu0.pages", &len2);

	ASSERT_GE(len2, 2 * FT_PAGE);
	ft_set_load(&fx, NULL);
	ftrace_bundler_init(&b, &fx.layout, fx.table, NULL, NULL, 1);
	ft_bundle_begin(&s, &m);
	ftrace_bundler_begin(&b, &m);
	ASSERT_TRUE(ftrace_bundler_add(&b, sched, FT_PAGE, &m));
	ASSERT_TRUE(ftrace_bundler_add(&b, sched + FT_PAGE, FT_PAGE, &m));
	ASSERT_FALSE(ftrace_bundler_add(&b, over, FT_PAGE, &m));
	ftrace_bundler_end(&b, &m);
	pz_end(&m);
	ASSERT_EQ(pz_decode_table(ft_out, s.n_bytes, f, 16), PZ_OK);
	ASSERT_EQ(f[PB_FTRACE_EVENT_BUNDLE__LOST_EVENTS].id, 0);
	ASSERT_EQ(b.stats.n_pages, 2);

	ft_bundle_begin(&s, &m);
	ftrace_bundler_begin(&b, &m);
	ASSERT_TRUE(ftrace_bundler_add(&b, over, FT_PAGE, &m));
	ftrace_bundler_end(&b, &m);
	pz_end(&m);
	ASSERT_EQ(pz_decode_table(ft_out, s.n_bytes, f, 16), PZ_OK);
	ASSERT_EQ(f[PB_FTRACE_EVENT_BUNDLE__LOST_EVENTS].value, 1);
	ASSERT_EQ(b.stats.n_pages, 3);
	ASSERT_EQ(b.stats.n_lost_pages, 1);
	free(over);
	free(sched);
	ft_set_free(&fx);
}

/* The reader hands out whole pages, pads a short read, stops at the end. */
TEST(ftrace_cpu_reader_pages_from_a_file)
{
	char path[] = "/tmp/pfc_cpu_reader_XXXXXX";
	struct ftrace_cpu_reader r;
	const uint8_t *page;
	uint8_t data[FT_PAGE + 100];
	int fd = mkstemp(path), err = 1;

	ASSERT_GE(fd, 0);
	memset(data, 0xab, sizeof(data));
	ASSERT_EQ(write(fd, data, sizeof(data)), (ssize_t)sizeof(data));
	close(fd);
	ASSERT_EQ(ftrace_cpu_reader_open(&r, path, FT_PAGE), 0);
	page = ftrace_cpu_reader_next(&r, &err);
	ASSERT_TRUE(page != NULL);
	ASSERT_EQ(err, 0);
	ASSERT_EQ(page[FT_PAGE - 1], 0xab);
	page = ftrace_cpu_reader_next(&r, &err);
	ASSERT_TRUE(page != NULL);
	ASSERT_EQ(page[99], 0xab);
	ASSERT_EQ(page[100], 0);
	ASSERT_EQ(page[FT_PAGE - 1], 0);
	ASSERT_EQ(r.bytes_read, sizeof(data));
	ASSERT_TRUE(ftrace_cpu_reader_next(&r, &err) == NULL);
	ASSERT_EQ(err, 0);
	ftrace_cpu_reader_close(&r);
	ftrace_cpu_reader_close(&r);
	ASSERT_TRUE(ftrace_cpu_reader_next(&r, &err) == NULL);
	ASSERT_EQ(ftrace_cpu_reader_open(&r, "/nonexistent/trace_pipe_raw", FT_PAGE), -ENOENT);
	ftrace_cpu_reader_close(&r);
	unlink(path);
}

/* ftrace tests go above this line; the /proc collector tests follow. */

/* ================================================================ */
/* /proc collectors: process_stats, sys_stats, system_info          */
/* ================================================================ */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/compiler.h"
#include "config/process_stats_config.pb-c.h"
#include "config/sys_stats_config.pb-c.h"
#include "pb_fields.h"
#include "probes/proc_stats.h"
#include "probes/sys_stats.h"
#include "probes/system_info.h"
#include "protozero/protozero.h"

/* Tests run from the repository root (tests/run.sh, the Makefile). */
#define PROC_FIXTURE "tests/data/proc-root"

/* A finished TracePacket: the bytes a collector wrote. */
struct pst_pkt {
	uint8_t *data;
	size_t len;
};

struct pst_ctx {
	struct pz_chunks c;
	struct pz_msg root;
};

static void pst_begin(struct pst_ctx *x)
{
	ASSERT_EQ(pz_chunks_init(&x->c, 4096, 0), 0);
	pz_msg_begin(&x->root, &x->c.s, NULL);
}

static struct pst_pkt pst_end(struct pst_ctx *x)
{
	struct pst_pkt p;

	pz_end(&x->root);
	ASSERT_TRUE(pz_stream_ok(&x->c.s));
	p.len = pz_chunks_size(&x->c);
	p.data = malloc(p.len + 1);
	ASSERT_TRUE(p.data != NULL);
	ASSERT_EQ(pz_chunks_copy(&x->c, p.data, p.len), (int64_t)p.len);
	pz_chunks_fini(&x->c);
	return p;
}

/* Counts occurrences of field @id in a message. */
static int pst_count(const uint8_t *d, size_t n, uint32_t id)
{
	struct pz_reader r;
	struct pz_field f;
	int count = 0, rc;

	pz_reader_init(&r, d, n);
	while ((rc = pz_reader_next(&r, &f)) == 1)
		count += f.id == id;
	ASSERT_EQ(rc, 0);
	return count;
}

/* The @nth occurrence of field @id. */
static bool pst_get(const uint8_t *d, size_t n, uint32_t id, int nth, struct pz_field *out)
{
	struct pz_reader r;
	struct pz_field f;

	pz_reader_init(&r, d, n);
	while (pz_reader_next(&r, &f) == 1) {
		if (f.id == id && nth-- == 0) {
			*out = f;
			return true;
		}
	}
	return false;
}

static uint64_t pst_u64(const uint8_t *d, size_t n, uint32_t id)
{
	struct pz_field f;

	if (!pst_get(d, n, id, 0, &f))
		FAIL("field %u missing", id);
	return f.value;
}

static bool pst_has(const uint8_t *d, size_t n, uint32_t id)
{
	struct pz_field f;

	return pst_get(d, n, id, 0, &f);
}

static void pst_str_eq(const uint8_t *d, size_t n, uint32_t id, int nth, const char *want)
{
	struct pz_field f;

	if (!pst_get(d, n, id, nth, &f))
		FAIL("string field %u #%d missing (want \"%s\")", id, nth, want);
	if (f.size != strlen(want) || memcmp(f.data, want, f.size) != 0)
		FAIL("field %u #%d: \"%.*s\" != \"%s\"", id, nth, (int)f.size, (const char *)f.data,
		     want);
}

/* The nested message of a packet's payload field @id. */
static struct pz_field pst_payload(const struct pst_pkt *p, uint32_t id)
{
	struct pz_field f;

	if (!pst_get(p->data, p->len, id, 0, &f))
		FAIL("payload %u missing", id);
	ASSERT_EQ(pst_count(p->data, p->len, id), 1);
	return f;
}

/* The entry of repeated message field @list whose int field @key_id == @key. */
static bool pst_find(const struct pz_field *parent, uint32_t list, uint32_t key_id, int64_t key,
		     struct pz_field *out)
{
	struct pz_field f, k;
	int i;

	for (i = 0; pst_get(parent->data, parent->size, list, i, &f); i++) {
		if (pst_get(f.data, f.size, key_id, 0, &k) && (int64_t)k.value == key) {
			*out = f;
			return true;
		}
	}
	return false;
}

static struct pz_field pst_must_find(const struct pz_field *parent, uint32_t list,
				     uint32_t key_id, int64_t key)
{
	struct pz_field f;

	if (!pst_find(parent, list, key_id, key, &f))
		FAIL("no entry with key %lld in list %u", (long long)key, list);
	return f;
}

static uint64_t pst_ns_per_tick(void)
{
	return NS_PER_SEC / (uint64_t)sysconf(_SC_CLK_TCK);
}

/* ------------------------------------------------ process_stats parsers ---- */

TEST(ps_parse_stat_hostile_comm)
{
	static const char line[] = "100 (my) (app) S 1 100 100 0 -1 4194560 100 0 0 0 250 50 0 0 "
				   "20 0 1 0 1234 1000 10 0 0\n";
	static const char nl[] = "500 (a\nb) R 1 500 500 0 -1 0 0 0 0 0 7 8 0 0 20 0 1 0 99 0 0\n";
	struct ps_stat st;

	ASSERT_EQ(ps_parse_stat(line, strlen(line), &st), 0);
	ASSERT_EQ(st.pid, 100);
	ASSERT_EQ(st.comm_len, 8);
	ASSERT_MEMEQ(st.comm, "my) (app", 8);
	ASSERT_EQ(st.state, 'S');
	ASSERT_EQ(st.ppid, 1);
	ASSERT_U64_EQ(st.utime, 250);
	ASSERT_U64_EQ(st.stime, 50);
	ASSERT_U64_EQ(st.starttime, 1234);

	ASSERT_EQ(ps_parse_stat(nl, strlen(nl), &st), 0);
	ASSERT_EQ(st.comm_len, 3);
	ASSERT_U64_EQ(st.starttime, 99);

	/* Truncated, unbalanced, empty, non-numeric: errors, never crashes. */
	ASSERT_EQ(ps_parse_stat("300 (broken) S 1 300", 20, &st), -EINVAL);
	ASSERT_EQ(ps_parse_stat("300 (broken S 1 300", 19, &st), -EINVAL);
	ASSERT_EQ(ps_parse_stat("", 0, &st), -EINVAL);
	ASSERT_EQ(ps_parse_stat("()", 2, &st), -EINVAL);
	ASSERT_EQ(ps_parse_stat("x (a) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19", 56, &st),
		  -EINVAL);
}

TEST(ps_parse_status_fields)
{
	static const char s[] = "Name:\tmy: comm \nUmask:\t0022\nTgid:\t100\nPid:\t101\n"
				"PPid:\t1\nTracerPid:\t0\nUid:\t4294967294\t0\t0\t0\n"
				"NSpid:\t101\t8\t3\nKthread:\t0\nVmSize:\t   81920 kB\n"
				"VmRSS:\t 30720 kB\nRssAnon:\t20480 kB\nVmSwap:\tjunk kB\n";
	struct ps_status st;

	ASSERT_EQ(ps_parse_status(s, strlen(s), &st), 0);
	ASSERT_STREQ(st.name, "my: comm ");
	ASSERT_EQ(st.tgid, 100);
	ASSERT_EQ(st.pid, 101);
	ASSERT_EQ(st.ppid, 1);
	ASSERT_EQ(st.uid, -2);
	ASSERT_EQ(st.n_nspid, 3);
	ASSERT_EQ(st.nspid[1], 8);
	ASSERT_EQ(st.nspid[2], 3);
	ASSERT_TRUE(st.has & PS_HAS_KTHREAD);
	ASSERT_FALSE(st.is_kthread);
	ASSERT_U64_EQ(st.mem_kb[PS_MEM_VM_SIZE], 81920);
	ASSERT_U64_EQ(st.mem_kb[PS_MEM_RSS_ANON], 20480);
	ASSERT_TRUE(st.mem_has & (1u << PS_MEM_VM_RSS));
	ASSERT_FALSE(st.mem_has & (1u << PS_MEM_VM_SWAP));

	/* Cut anywhere: the keys before the cut, no crash. */
	for (size_t i = 0; i <= strlen(s); i++)
		(void)ps_parse_status(s, i, &st);
	ASSERT_EQ(ps_parse_status("Umask:\t0022\nSta", 15, &st), -EINVAL);
	ASSERT_EQ(ps_parse_status("Name:\tbroken\nUmask:\t0022\nSta", 28, &st), 0);
	ASSERT_FALSE(st.has & PS_HAS_TGID);
}

/* ---------------------------------------------- process_stats on fixture ---- */

static struct pst_pkt pst_scan(const struct ps_config *cfg, int want_procs)
{
	struct ps_state st;
	struct pst_ctx x;
	struct pst_pkt p;

	ASSERT_EQ(ps_init(&st, PROC_FIXTURE "/", cfg), 0);
	pst_begin(&x);
	ASSERT_EQ(ps_scan_all(&st, &x.root), want_procs);
	p = pst_end(&x);
	ASSERT_GT(st.n_vanished, 0);
	ps_fini(&st);
	return p;
}

TEST(ps_scan_all_fixture_default)
{
	struct pz_field tree, proc, thr;
	struct ps_config cfg;
	struct pst_pkt p;

	ps_config_from_proto(NULL, &cfg);
	p = pst_scan(&cfg, 5);
	ASSERT_GT(pst_u64(p.data, p.len, PB_TRACE_PACKET__TIMESTAMP), 0);
	tree = pst_payload(&p, PB_TRACE_PACKET__PROCESS_TREE);
	ASSERT_GT(pst_u64(tree.data, tree.size, PB_PROCESS_TREE__COLLECTION_END_TIMESTAMP),
		  pst_u64(p.data, p.len, PB_TRACE_PACKET__TIMESTAMP) - 1);
	/* 1, 2, 100, 200, 500; 101 is a thread, 300 has no Tgid, 400 vanished. */
	ASSERT_EQ(pst_count(tree.data, tree.size, PB_PROCESS_TREE__PROCESSES), 5);
	ASSERT_FALSE(pst_find(&tree, PB_PROCESS_TREE__PROCESSES, PB_PROCESS_TREE_PROCESS__PID, 101,
			      &proc));
	/* A main-thread entry per process, plus threads 101 and 102. */
	ASSERT_EQ(pst_count(tree.data, tree.size, PB_PROCESS_TREE__THREADS), 7);

	proc = pst_must_find(&tree, PB_PROCESS_TREE__PROCESSES, PB_PROCESS_TREE_PROCESS__PID, 1);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__PPID), 0);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__UID), 0);
	ASSERT_EQ(pst_count(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE), 2);
	pst_str_eq(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE, 0, "/sbin/init");
	pst_str_eq(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE, 1, "splash");
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__IS_KTHREAD), 0);
	ASSERT_FALSE(pst_has(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE_IS_COMM));
	ASSERT_FALSE(pst_has(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__NSPID));
	ASSERT_FALSE(pst_has(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__PROCESS_START_FROM_BOOT));

	/* Kernel thread: comm as cmdline. */
	proc = pst_must_find(&tree, PB_PROCESS_TREE__PROCESSES, PB_PROCESS_TREE_PROCESS__PID, 2);
	ASSERT_EQ(pst_count(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE), 1);
	pst_str_eq(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE, 0, "kthreadd");
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE_IS_COMM), 1);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__IS_KTHREAD), 1);

	/* Namespaced, empty cmdline word dropped, hostile comm untouched. */
	proc = pst_must_find(&tree, PB_PROCESS_TREE__PROCESSES, PB_PROCESS_TREE_PROCESS__PID, 100);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__PPID), 1);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__UID), 1000);
	ASSERT_EQ(pst_count(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__NSPID), 1);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__NSPID), 7);
	ASSERT_EQ(pst_count(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE), 3);
	pst_str_eq(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE, 0, "/usr/bin/app");
	pst_str_eq(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE, 1, "--flag");
	pst_str_eq(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE, 2, "x");

	/* Pre-6.4 zombie: no is_kthread, comm as cmdline. */
	proc = pst_must_find(&tree, PB_PROCESS_TREE__PROCESSES, PB_PROCESS_TREE_PROCESS__PID, 200);
	ASSERT_FALSE(pst_has(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__IS_KTHREAD));
	pst_str_eq(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE, 0, "defunct");
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE_IS_COMM), 1);

	/* uid 4294967294 is int32 -2 (10-byte varint); cmdline without its NUL. */
	proc = pst_must_find(&tree, PB_PROCESS_TREE__PROCESSES, PB_PROCESS_TREE_PROCESS__PID, 500);
	ASSERT_EQ((int32_t)pst_u64(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__UID), -2);
	ASSERT_EQ(pst_count(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE), 2);
	pst_str_eq(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE, 1, "script.py");

	/* Threads of a namespaced process carry nstid; no names by default. */
	thr = pst_must_find(&tree, PB_PROCESS_TREE__THREADS, PB_PROCESS_TREE_THREAD__TID, 102);
	ASSERT_EQ(pst_u64(thr.data, thr.size, PB_PROCESS_TREE_THREAD__TGID), 100);
	ASSERT_EQ(pst_u64(thr.data, thr.size, PB_PROCESS_TREE_THREAD__NSTID), 9);
	ASSERT_FALSE(pst_has(thr.data, thr.size, PB_PROCESS_TREE_THREAD__NAME));
	thr = pst_must_find(&tree, PB_PROCESS_TREE__THREADS, PB_PROCESS_TREE_THREAD__TID, 1);
	ASSERT_EQ(pst_u64(thr.data, thr.size, PB_PROCESS_TREE_THREAD__TGID), 1);
	free(p.data);
}

TEST(ps_scan_all_fixture_names_age_no_main_thread)
{
	struct pz_field tree, proc, thr;
	struct ps_config cfg;
	struct pst_pkt p;

	ps_config_from_proto(NULL, &cfg);
	cfg.record_thread_names = true;
	cfg.record_process_age = true;
	cfg.skip_main_thread_message = true;
	p = pst_scan(&cfg, 5);
	tree = pst_payload(&p, PB_TRACE_PACKET__PROCESS_TREE);
	ASSERT_EQ(pst_count(tree.data, tree.size, PB_PROCESS_TREE__THREADS), 2);
	thr = pst_must_find(&tree, PB_PROCESS_TREE__THREADS, PB_PROCESS_TREE_THREAD__TID, 101);
	pst_str_eq(thr.data, thr.size, PB_PROCESS_TREE_THREAD__NAME, 0, "worker-1");
	ASSERT_EQ(pst_u64(thr.data, thr.size, PB_PROCESS_TREE_THREAD__NSTID), 8);
	proc = pst_must_find(&tree, PB_PROCESS_TREE__PROCESSES, PB_PROCESS_TREE_PROCESS__PID, 100);
	ASSERT_U64_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__PROCESS_START_FROM_BOOT),
		      1234 * pst_ns_per_tick());
	proc = pst_must_find(&tree, PB_PROCESS_TREE__PROCESSES, PB_PROCESS_TREE_PROCESS__PID, 500);
	ASSERT_U64_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__PROCESS_START_FROM_BOOT),
		      900 * pst_ns_per_tick());
	free(p.data);

	/* With names on, the main thread carries the escaped comm. */
	cfg.skip_main_thread_message = false;
	p = pst_scan(&cfg, 5);
	tree = pst_payload(&p, PB_TRACE_PACKET__PROCESS_TREE);
	thr = pst_must_find(&tree, PB_PROCESS_TREE__THREADS, PB_PROCESS_TREE_THREAD__TID, 500);
	pst_str_eq(thr.data, thr.size, PB_PROCESS_TREE_THREAD__NAME, 0, "a\\nb");
	thr = pst_must_find(&tree, PB_PROCESS_TREE__THREADS, PB_PROCESS_TREE_THREAD__TID, 100);
	pst_str_eq(thr.data, thr.size, PB_PROCESS_TREE_THREAD__NAME, 0, "my) (app");
	free(p.data);
}

TEST(ps_lookup_pids_resolves_threads_once)
{
	static const int32_t first[] = {101, 101, 0, -5, 999999, 300};
	static const int32_t second[] = {100, 101, 102};
	struct pz_field tree, proc, thr;
	struct ps_config cfg;
	struct ps_state st;
	struct pst_ctx x;
	struct pst_pkt p;

	ps_config_from_proto(NULL, &cfg);
	cfg.record_thread_names = true;
	ASSERT_EQ(ps_init(&st, PROC_FIXTURE, &cfg), 0);
	ASSERT_EQ(ps_count_unseen(&st, first, PFC_ARRAY_SIZE(first)), 4);

	/* Thread 101 resolves to process 100, written first. */
	pst_begin(&x);
	ASSERT_EQ(ps_lookup_pids(&st, first, PFC_ARRAY_SIZE(first), &x.root), 2);
	p = pst_end(&x);
	tree = pst_payload(&p, PB_TRACE_PACKET__PROCESS_TREE);
	ASSERT_EQ(pst_count(tree.data, tree.size, PB_PROCESS_TREE__PROCESSES), 1);
	proc = pst_must_find(&tree, PB_PROCESS_TREE__PROCESSES, PB_PROCESS_TREE_PROCESS__PID, 100);
	pst_str_eq(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE, 0, "/usr/bin/app");
	/* Main thread 100 and thread 101, once each. */
	ASSERT_EQ(pst_count(tree.data, tree.size, PB_PROCESS_TREE__THREADS), 2);
	thr = pst_must_find(&tree, PB_PROCESS_TREE__THREADS, PB_PROCESS_TREE_THREAD__TID, 101);
	ASSERT_EQ(pst_u64(thr.data, thr.size, PB_PROCESS_TREE_THREAD__TGID), 100);
	pst_str_eq(thr.data, thr.size, PB_PROCESS_TREE_THREAD__NAME, 0, "worker-1");
	ASSERT_TRUE(pst_has(tree.data, tree.size, PB_PROCESS_TREE__COLLECTION_END_TIMESTAMP));
	free(p.data);

	/* Only 102 is new now (its /proc/102 is absent: the fixture lists it
	 * only under task/, so it cannot resolve and nothing is written). */
	ASSERT_EQ(ps_count_unseen(&st, second, PFC_ARRAY_SIZE(second)), 1);
	pst_begin(&x);
	ASSERT_EQ(ps_lookup_pids(&st, second, PFC_ARRAY_SIZE(second), &x.root), 0);
	p = pst_end(&x);
	ASSERT_EQ(p.len, 0);
	free(p.data);

	/* After a rename, 100 is looked up again. */
	ps_forget_pids(&st, second, 1);
	ASSERT_EQ(ps_count_unseen(&st, second, 1), 1);
	pst_begin(&x);
	ASSERT_EQ(ps_lookup_pids(&st, second, 1, &x.root), 1);
	p = pst_end(&x);
	tree = pst_payload(&p, PB_TRACE_PACKET__PROCESS_TREE);
	ASSERT_EQ(pst_count(tree.data, tree.size, PB_PROCESS_TREE__PROCESSES), 1);
	free(p.data);

	ps_clear_incremental_state(&st);
	ASSERT_EQ(ps_count_unseen(&st, second, PFC_ARRAY_SIZE(second)), 3);
	ps_fini(&st);
}

static struct pst_pkt pst_poll(struct ps_state *st, int want_pending)
{
	struct pst_ctx x;

	pst_begin(&x);
	ASSERT_EQ(ps_poll_stats(st, &x.root), want_pending);
	return pst_end(&x);
}

/* Pids that exited leave the seen-set once it is big; live ones stay. */
TEST(ps_maybe_prune_drops_dead_pids)
{
	struct ps_config cfg;
	struct ps_state st;
	uint32_t pid;

	ps_config_from_proto(NULL, &cfg);
	ASSERT_EQ(ps_init(&st, PROC_FIXTURE, &cfg), 0);
	/* Below the threshold nothing is swept. */
	ASSERT_EQ(hmap_put(&st.seen, 424242, 424242), 1);
	ASSERT_EQ(ps_maybe_prune(&st), 0);
	/* 100 and 101 exist in the fixture; 100000.. do not. */
	ASSERT_EQ(hmap_put(&st.seen, 100, 100), 1);
	ASSERT_EQ(hmap_put(&st.seen, 101, 100), 1);
	for (pid = 100000; hmap_len(&st.seen) < PS_PRUNE_MIN_ENTRIES; pid++)
		ASSERT_EQ(hmap_put(&st.seen, pid, pid), 1);
	ASSERT_EQ(ps_maybe_prune(&st), PS_PRUNE_MIN_ENTRIES - 2);
	ASSERT_EQ(hmap_len(&st.seen), 2);
	ASSERT_TRUE(hmap_get(&st.seen, 101, NULL));
	/* The next sweep waits for the set to grow again. */
	ASSERT_EQ(hmap_put(&st.seen, 424242, 424242), 1);
	ASSERT_EQ(ps_maybe_prune(&st), 0);
	ps_fini(&st);
}

TEST(ps_poll_stats_fixture)
{
	struct pz_field stats, proc, fd, tree;
	struct ps_config cfg;
	struct ps_state st;
	struct pst_ctx x;
	struct pst_pkt p;

	ps_config_from_proto(NULL, &cfg);
	cfg.cache_ttl_polls = 3;
	cfg.resolve_process_fds = true;
	cfg.record_process_runtime = true;
	cfg.scan_smaps_rollup = true;
	ASSERT_EQ(ps_init(&st, PROC_FIXTURE, &cfg), 0);

	/* Every pid with a readable stat or memory counters is queued: 1, 2,
	 * 100, 101 (listed in the fixture), 200, 500. */
	p = pst_poll(&st, 6);
	stats = pst_payload(&p, PB_TRACE_PACKET__PROCESS_STATS);
	ASSERT_TRUE(pst_has(stats.data, stats.size, PB_PROCESS_STATS__COLLECTION_END_TIMESTAMP));
	proc = pst_must_find(&stats, PB_PROCESS_STATS__PROCESSES, PB_PROCESS_STATS_PROCESS__PID, 1);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__VM_SIZE_KB), 21856);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__VM_RSS_KB), 11904);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__RSS_ANON_KB), 3200);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__RSS_FILE_KB), 8600);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__RSS_SHMEM_KB), 104);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__VM_SWAP_KB), 16);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__VM_LOCKED_KB), 0);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__VM_HWM_KB), 12000);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__OOM_SCORE_ADJ), 0);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__SMR_PSS_KB), 5000);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__SMR_SWAP_PSS_KB), 16);
	ASSERT_U64_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__RUNTIME_KERNEL_MODE),
		      70 * pst_ns_per_tick());
	ASSERT_EQ(pst_count(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__FDS), 2);
	ASSERT_TRUE(pst_find(&proc, PB_PROCESS_STATS_PROCESS__FDS, PB_PROCESS_STATS_FD_INFO__FD, 3,
			     &fd));
	pst_str_eq(fd.data, fd.size, PB_PROCESS_STATS_FD_INFO__PATH, 0, "socket:[1234]");

	proc = pst_must_find(&stats, PB_PROCESS_STATS__PROCESSES, PB_PROCESS_STATS_PROCESS__PID,
			     100);
	ASSERT_EQ((int64_t)pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__OOM_SCORE_ADJ),
		  -100);
	ASSERT_U64_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__RUNTIME_USER_MODE),
		      250 * pst_ns_per_tick());
	/* Kernel thread 2 and zombie 200 have runtimes only, no memory. */
	proc = pst_must_find(&stats, PB_PROCESS_STATS__PROCESSES, PB_PROCESS_STATS_PROCESS__PID, 2);
	ASSERT_FALSE(pst_has(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__VM_SIZE_KB));
	ASSERT_FALSE(pst_find(&stats, PB_PROCESS_STATS__PROCESSES, PB_PROCESS_STATS_PROCESS__PID,
			      300, &proc));
	free(p.data);

	/* The queued pids go into their own ProcessTree packet. */
	pst_begin(&x);
	ASSERT_EQ(ps_write_pending(&st, &x.root), 6);
	p = pst_end(&x);
	tree = pst_payload(&p, PB_TRACE_PACKET__PROCESS_TREE);
	ASSERT_EQ(pst_count(tree.data, tree.size, PB_PROCESS_TREE__PROCESSES), 5);
	free(p.data);

	/* Within the TTL nothing changed, so no process entry at all; the
	 * second poll also has nothing pending. */
	p = pst_poll(&st, 0);
	stats = pst_payload(&p, PB_TRACE_PACKET__PROCESS_STATS);
	ASSERT_EQ(pst_count(stats.data, stats.size, PB_PROCESS_STATS__PROCESSES), 0);
	free(p.data);
	p = pst_poll(&st, 0);
	free(p.data);
	/* The TTL expired: everything is written again, fds included. */
	p = pst_poll(&st, 0);
	stats = pst_payload(&p, PB_TRACE_PACKET__PROCESS_STATS);
	proc = pst_must_find(&stats, PB_PROCESS_STATS__PROCESSES, PB_PROCESS_STATS_PROCESS__PID, 1);
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__VM_SIZE_KB), 21856);
	ASSERT_EQ(pst_count(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__FDS), 2);
	free(p.data);
	ps_fini(&st);
}

TEST(ps_missing_root_and_limits)
{
	char long_root[PS_MAX_ROOT_BYTES + 8];
	struct ps_state st;
	struct pst_ctx x;
	struct pst_pkt p;

	ASSERT_EQ(ps_init(&st, "/nonexistent-proc-root", NULL), 0);
	pst_begin(&x);
	ASSERT_EQ(ps_scan_all(&st, &x.root), -ENOENT);
	ASSERT_EQ(ps_poll_stats(&st, &x.root), -ENOENT);
	p = pst_end(&x);
	free(p.data);
	ps_fini(&st);
	ps_fini(NULL);

	memset(long_root, 'a', sizeof(long_root) - 1);
	long_root[sizeof(long_root) - 1] = '\0';
	ASSERT_EQ(ps_init(&st, long_root, NULL), -ENAMETOOLONG);
	ps_fini(&st);
}

TEST(ps_config_from_proto_clamps)
{
	Perfetto__Protos__ProcessStatsConfig pb = PERFETTO__PROTOS__PROCESS_STATS_CONFIG__INIT;
	Perfetto__Protos__ProcessStatsConfig__Quirks q =
		PERFETTO__PROTOS__PROCESS_STATS_CONFIG__QUIRKS__DISABLE_ON_DEMAND;
	struct ps_config cfg;

	pb.proc_stats_poll_ms = 10;
	pb.proc_stats_cache_ttl_ms = 1000;
	pb.n_quirks = 1;
	pb.quirks = &q;
	pb.record_thread_names = true;
	ps_config_from_proto(&pb, &cfg);
	ASSERT_EQ(cfg.poll_ms, PS_MIN_POLL_MS);
	ASSERT_EQ(cfg.cache_ttl_polls, 10);
	ASSERT_FALSE(cfg.on_demand_enabled);
	ASSERT_TRUE(cfg.record_thread_names);
	pb.proc_stats_cache_ttl_ms = 0;
	ps_config_from_proto(&pb, &cfg);
	ASSERT_EQ(cfg.cache_ttl_polls, 1);
}

/* ---------------------------------------------- process_stats, live /proc ---- */

TEST(ps_live_scan_finds_self)
{
	struct pz_field tree, proc, thr;
	char comm[64] = "", exe_word[256];
	struct ps_config cfg;
	struct ps_state st;
	struct pst_ctx x;
	struct pst_pkt p;
	struct timespec t0, t1;
	FILE *f;
	int n;

	f = fopen("/proc/self/comm", "r");
	ASSERT_TRUE(f != NULL);
	ASSERT_TRUE(fgets(comm, sizeof(comm), f) != NULL);
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	f = fopen("/proc/self/cmdline", "r");
	ASSERT_TRUE(f != NULL);
	n = (int)fread(exe_word, 1, sizeof(exe_word) - 1, f);
	fclose(f);
	ASSERT_GT(n, 0);
	exe_word[n] = '\0';

	ps_config_from_proto(NULL, &cfg);
	cfg.record_thread_names = true;
	ASSERT_EQ(ps_init(&st, "/", &cfg), 0);
	pst_begin(&x);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_GT(ps_scan_all(&st, &x.root), 1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	p = pst_end(&x);
	fprintf(stderr, "  full /proc scan: %.2f ms, %zu bytes\n",
		(double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6,
		p.len);
	tree = pst_payload(&p, PB_TRACE_PACKET__PROCESS_TREE);
	proc = pst_must_find(&tree, PB_PROCESS_TREE__PROCESSES, PB_PROCESS_TREE_PROCESS__PID,
			     getpid());
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__PPID), getppid());
	ASSERT_EQ(pst_u64(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__UID), getuid());
	pst_str_eq(proc.data, proc.size, PB_PROCESS_TREE_PROCESS__CMDLINE, 0, exe_word);
	thr = pst_must_find(&tree, PB_PROCESS_TREE__THREADS, PB_PROCESS_TREE_THREAD__TID, getpid());
	pst_str_eq(thr.data, thr.size, PB_PROCESS_TREE_THREAD__NAME, 0, comm);
	/* Everything is seen now: a lookup of ourselves writes nothing. */
	{
		int32_t self = getpid();

		ASSERT_EQ(ps_count_unseen(&st, &self, 1), 0);
	}
	free(p.data);
	ps_fini(&st);
}

TEST(ps_live_lookup_and_poll_self)
{
	int32_t self = getpid();
	struct pz_field tree, stats, proc;
	struct ps_state st;
	struct pst_ctx x;
	struct pst_pkt p;

	ASSERT_EQ(ps_init(&st, NULL, NULL), 0);
	pst_begin(&x);
	ASSERT_EQ(ps_lookup_pids(&st, &self, 1, &x.root), 1);
	p = pst_end(&x);
	tree = pst_payload(&p, PB_TRACE_PACKET__PROCESS_TREE);
	pst_must_find(&tree, PB_PROCESS_TREE__PROCESSES, PB_PROCESS_TREE_PROCESS__PID, self);
	free(p.data);

	pst_begin(&x);
	ASSERT_GE(ps_poll_stats(&st, &x.root), 0);
	p = pst_end(&x);
	stats = pst_payload(&p, PB_TRACE_PACKET__PROCESS_STATS);
	proc = pst_must_find(&stats, PB_PROCESS_STATS__PROCESSES, PB_PROCESS_STATS_PROCESS__PID,
			     self);
	ASSERT_GT(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__VM_RSS_KB), 0);
	ASSERT_GT(pst_u64(proc.data, proc.size, PB_PROCESS_STATS_PROCESS__VM_SIZE_KB), 0);
	free(p.data);
	ps_fini(&st);
}

/* ------------------------------------------------------------ sys_stats ---- */

static struct pst_pkt pst_ss_poll(struct ss_state *st, int want_mask)
{
	struct pst_ctx x;

	pst_begin(&x);
	ASSERT_EQ(ss_poll(st, &x.root), want_mask);
	return pst_end(&x);
}

static uint64_t pst_kv(const struct pz_field *sys, uint32_t list, uint32_t key)
{
	struct pz_field e = pst_must_find(sys, list, PB_SYS_STATS_MEMINFO_VALUE__KEY, key);

	return pst_u64(e.data, e.size, PB_SYS_STATS_MEMINFO_VALUE__VALUE);
}

TEST(ss_poll_fixture)
{
	Perfetto__Protos__SysStatsConfig cfg = PERFETTO__PROTOS__SYS_STATS_CONFIG__INIT;
	Perfetto__Protos__MeminfoCounters mem[] = {
		PBE_MEMINFO_COUNTERS__MEMINFO_MEM_TOTAL,	PBE_MEMINFO_COUNTERS__MEMINFO_MEM_FREE,
		PBE_MEMINFO_COUNTERS__MEMINFO_ACTIVE_ANON,	PBE_MEMINFO_COUNTERS__MEMINFO_SLAB_RECLAIMABLE,
		PBE_MEMINFO_COUNTERS__MEMINFO_COMMITED_AS, PBE_MEMINFO_COUNTERS__MEMINFO_SWAP_TOTAL,
		PBE_MEMINFO_COUNTERS__MEMINFO_ZRAM,
	};
	Perfetto__Protos__VmstatCounters vm[] = {
		PBE_VMSTAT_COUNTERS__VMSTAT_NR_FREE_PAGES,
		PBE_VMSTAT_COUNTERS__VMSTAT_PGFAULT,
		PBE_VMSTAT_COUNTERS__VMSTAT_WORKINGSET_REFAULT,
		PBE_VMSTAT_COUNTERS__VMSTAT_OOM_KILL,
	};
	const uint64_t tick = pst_ns_per_tick();
	struct pz_field sys, e, sub;
	struct ss_state st;
	struct pst_pkt p;
	int all, i;

	cfg.meminfo_period_ms = 1000;
	cfg.n_meminfo_counters = PFC_ARRAY_SIZE(mem);
	cfg.meminfo_counters = mem;
	cfg.vmstat_period_ms = 1000;
	cfg.n_vmstat_counters = PFC_ARRAY_SIZE(vm);
	cfg.vmstat_counters = vm;
	cfg.stat_period_ms = 500;
	cfg.cpufreq_period_ms = 1000;
	cfg.buddyinfo_period_ms = 1000;
	cfg.diskstat_period_ms = 1000;
	cfg.psi_period_ms = 1000;
	cfg.thermal_period_ms = 1000;
	cfg.cpuidle_period_ms = 1000;
	cfg.devfreq_period_ms = 1000;
	cfg.gpufreq_period_ms = 1000;
	ASSERT_EQ(ss_init(&st, PROC_FIXTURE, &cfg), 0);
	ASSERT_EQ(ss_tick_period_ms(&st), 500);

	all = (1 << SS_MEMINFO) | (1 << SS_VMSTAT) | (1 << SS_STAT) | (1 << SS_CPUFREQ) |
	      (1 << SS_BUDDYINFO) | (1 << SS_DISKSTAT) | (1 << SS_PSI) | (1 << SS_THERMAL) |
	      (1 << SS_CPUIDLE) | (1 << SS_DEVFREQ) | (1 << SS_GPUFREQ);
	p = pst_ss_poll(&st, all);
	ASSERT_GT(pst_u64(p.data, p.len, PB_TRACE_PACKET__TIMESTAMP), 0);
	sys = pst_payload(&p, PB_TRACE_PACKET__SYS_STATS);
	ASSERT_TRUE(pst_has(sys.data, sys.size, PB_SYS_STATS__COLLECTION_END_TIMESTAMP));

	/* meminfo: the six selected keys present in the file, in kB. */
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__MEMINFO), 6);
	ASSERT_EQ(pst_kv(&sys, PB_SYS_STATS__MEMINFO, PBE_MEMINFO_COUNTERS__MEMINFO_MEM_TOTAL),
		  8145044);
	ASSERT_EQ(pst_kv(&sys, PB_SYS_STATS__MEMINFO, PBE_MEMINFO_COUNTERS__MEMINFO_MEM_FREE),
		  5013424);
	ASSERT_EQ(pst_kv(&sys, PB_SYS_STATS__MEMINFO, PBE_MEMINFO_COUNTERS__MEMINFO_ACTIVE_ANON),
		  1520);
	ASSERT_EQ(pst_kv(&sys, PB_SYS_STATS__MEMINFO,
			 PBE_MEMINFO_COUNTERS__MEMINFO_SLAB_RECLAIMABLE),
		  77116);
	ASSERT_EQ(pst_kv(&sys, PB_SYS_STATS__MEMINFO, PBE_MEMINFO_COUNTERS__MEMINFO_COMMITED_AS),
		  1063340);
	ASSERT_EQ(pst_kv(&sys, PB_SYS_STATS__MEMINFO, PBE_MEMINFO_COUNTERS__MEMINFO_SWAP_TOTAL), 0);

	/* vmstat: keys derived from the enum names; a key without value is skipped. */
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__VMSTAT), 3);
	ASSERT_EQ(pst_kv(&sys, PB_SYS_STATS__VMSTAT, PBE_VMSTAT_COUNTERS__VMSTAT_NR_FREE_PAGES),
		  1253356);
	ASSERT_EQ(pst_kv(&sys, PB_SYS_STATS__VMSTAT, PBE_VMSTAT_COUNTERS__VMSTAT_PGFAULT), 98765432);
	ASSERT_EQ(pst_kv(&sys, PB_SYS_STATS__VMSTAT, PBE_VMSTAT_COUNTERS__VMSTAT_OOM_KILL), 2);

	/* stat: per-CPU times (not the "cpu" sum), IRQs, softirqs, forks. */
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__CPU_STAT), 2);
	e = pst_must_find(&sys, PB_SYS_STATS__CPU_STAT, PB_SYS_STATS_CPU_TIMES__CPU_ID, 0);
	ASSERT_U64_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_CPU_TIMES__USER_NS), 107470 * tick);
	ASSERT_U64_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_CPU_TIMES__SYSTEM_MODE_NS), 15203 * tick);
	ASSERT_U64_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_CPU_TIMES__IDLE_NS), 308522 * tick);
	ASSERT_U64_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_CPU_TIMES__IO_WAIT_NS), 285 * tick);
	ASSERT_U64_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_CPU_TIMES__SOFTIRQ_NS), 332 * tick);
	ASSERT_U64_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_CPU_TIMES__STEAL_NS), 433 * tick);
	e = pst_must_find(&sys, PB_SYS_STATS__CPU_STAT, PB_SYS_STATS_CPU_TIMES__CPU_ID, 1);
	ASSERT_U64_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_CPU_TIMES__USER_NS), 118641 * tick);
	ASSERT_EQ(pst_u64(sys.data, sys.size, PB_SYS_STATS__NUM_IRQ_TOTAL), 2120935);
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__NUM_IRQ), 2);
	e = pst_must_find(&sys, PB_SYS_STATS__NUM_IRQ, PB_SYS_STATS_INTERRUPT_COUNT__IRQ, 4);
	ASSERT_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_INTERRUPT_COUNT__COUNT), 7);
	ASSERT_EQ(pst_u64(sys.data, sys.size, PB_SYS_STATS__NUM_SOFTIRQ_TOTAL), 1020036);
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__NUM_SOFTIRQ), 10);
	e = pst_must_find(&sys, PB_SYS_STATS__NUM_SOFTIRQ, PB_SYS_STATS_INTERRUPT_COUNT__IRQ, 7);
	ASSERT_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_INTERRUPT_COUNT__COUNT), 470381);
	ASSERT_EQ(pst_u64(sys.data, sys.size, PB_SYS_STATS__NUM_FORKS), 92364);

	/* cpufreq: one value per cpuN directory, 0 where the file is missing. */
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__CPUFREQ_KHZ), 3);
	{
		static const uint64_t want[] = {1017600, 2400000, 0};
		struct pz_field f;

		for (i = 0; i < 3; i++) {
			ASSERT_TRUE(pst_get(sys.data, sys.size, PB_SYS_STATS__CPUFREQ_KHZ, i, &f));
			ASSERT_U64_EQ(f.value, want[i]);
		}
	}

	/* buddyinfo, diskstats, psi, thermal, cpuidle, devfreq. */
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__BUDDY_INFO), 2);
	ASSERT_TRUE(pst_get(sys.data, sys.size, PB_SYS_STATS__BUDDY_INFO, 1, &e));
	pst_str_eq(e.data, e.size, PB_SYS_STATS_BUDDY_INFO__NODE, 0, "0");
	pst_str_eq(e.data, e.size, PB_SYS_STATS_BUDDY_INFO__ZONE, 0, "DMA32");
	ASSERT_EQ(pst_count(e.data, e.size, PB_SYS_STATS_BUDDY_INFO__ORDER_PAGES), 11);
	ASSERT_TRUE(pst_get(e.data, e.size, PB_SYS_STATS_BUDDY_INFO__ORDER_PAGES, 10, &sub));
	ASSERT_EQ(sub.value, 752);

	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__DISK_STAT), 2);
	ASSERT_TRUE(pst_get(sys.data, sys.size, PB_SYS_STATS__DISK_STAT, 0, &e));
	pst_str_eq(e.data, e.size, PB_SYS_STATS_DISK_STAT__DEVICE_NAME, 0, "vda");
	ASSERT_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_DISK_STAT__READ_SECTORS), 412346);
	ASSERT_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_DISK_STAT__READ_TIME_MS), 2519);
	ASSERT_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_DISK_STAT__WRITE_SECTORS), 1203440);
	ASSERT_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_DISK_STAT__WRITE_TIME_MS), 30144);
	ASSERT_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_DISK_STAT__DISCARD_SECTORS), 80);
	ASSERT_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_DISK_STAT__DISCARD_TIME_MS), 5);
	ASSERT_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_DISK_STAT__FLUSH_COUNT), 1200);
	ASSERT_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_DISK_STAT__FLUSH_TIME_MS), 60);
	ASSERT_TRUE(pst_get(sys.data, sys.size, PB_SYS_STATS__DISK_STAT, 1, &e));
	pst_str_eq(e.data, e.size, PB_SYS_STATS_DISK_STAT__DEVICE_NAME, 0, "loop0");
	/* A pre-4.18 line (no discard/flush columns) has only what it holds. */
	ASSERT_FALSE(pst_has(e.data, e.size, PB_SYS_STATS_DISK_STAT__DISCARD_SECTORS));
	ASSERT_FALSE(pst_has(e.data, e.size, PB_SYS_STATS_DISK_STAT__FLUSH_TIME_MS));

	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__PSI), 6);
	e = pst_must_find(&sys, PB_SYS_STATS__PSI, PB_SYS_STATS_PSI_SAMPLE__RESOURCE,
			  PBE_SYS_STATS_PSI_SAMPLE_PSI_RESOURCE__PSI_RESOURCE_IO_FULL);
	ASSERT_U64_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_PSI_SAMPLE__TOTAL_NS), 9777871000ull);
	e = pst_must_find(&sys, PB_SYS_STATS__PSI, PB_SYS_STATS_PSI_SAMPLE__RESOURCE,
			  PBE_SYS_STATS_PSI_SAMPLE_PSI_RESOURCE__PSI_RESOURCE_MEMORY_FULL);
	ASSERT_U64_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_PSI_SAMPLE__TOTAL_NS), 7000);

	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__THERMAL_ZONE), 1);
	ASSERT_TRUE(pst_get(sys.data, sys.size, PB_SYS_STATS__THERMAL_ZONE, 0, &e));
	pst_str_eq(e.data, e.size, PB_SYS_STATS_THERMAL_ZONE__NAME, 0, "thermal_zone0");
	pst_str_eq(e.data, e.size, PB_SYS_STATS_THERMAL_ZONE__TYPE, 0, "cpu-thermal");
	ASSERT_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_THERMAL_ZONE__TEMP), 45);

	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__CPUIDLE_STATE), 1);
	e = pst_must_find(&sys, PB_SYS_STATS__CPUIDLE_STATE, PB_SYS_STATS_CPU_IDLE_STATE__CPU_ID, 0);
	ASSERT_EQ(pst_count(e.data, e.size, PB_SYS_STATS_CPU_IDLE_STATE__CPUIDLE_STATE_ENTRY), 2);
	ASSERT_TRUE(pst_get(e.data, e.size, PB_SYS_STATS_CPU_IDLE_STATE__CPUIDLE_STATE_ENTRY, 1,
			    &sub));
	pst_str_eq(sub.data, sub.size, PB_SYS_STATS_CPU_IDLE_STATE_ENTRY__STATE, 0, "cpu-sleep-0");
	ASSERT_EQ(pst_u64(sub.data, sub.size, PB_SYS_STATS_CPU_IDLE_STATE_ENTRY__DURATION_US),
		  98765);

	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__DEVFREQ), 1);
	ASSERT_TRUE(pst_get(sys.data, sys.size, PB_SYS_STATS__DEVFREQ, 0, &e));
	pst_str_eq(e.data, e.size, PB_SYS_STATS_DEVFREQ_VALUE__KEY, 0, "gpu0");
	ASSERT_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_DEVFREQ_VALUE__VALUE), 585000000);
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__GPUFREQ_MHZ), 0);
	free(p.data);

	/* Tick 1: only the 500 ms section; tick 2: everything again. */
	p = pst_ss_poll(&st, 1 << SS_STAT);
	sys = pst_payload(&p, PB_TRACE_PACKET__SYS_STATS);
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__MEMINFO), 0);
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__CPU_STAT), 2);
	free(p.data);
	p = pst_ss_poll(&st, all);
	sys = pst_payload(&p, PB_TRACE_PACKET__SYS_STATS);
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__MEMINFO), 6);
	free(p.data);
	ss_fini(&st);
}

TEST(ss_default_counters_and_bad_periods)
{
	Perfetto__Protos__SysStatsConfig cfg = PERFETTO__PROTOS__SYS_STATS_CONFIG__INIT;
	Perfetto__Protos__SysStatsConfig__StatCounters forks =
		PBE_SYS_STATS_CONFIG_STAT_COUNTERS__STAT_FORK_COUNT;
	struct pz_field sys;
	struct ss_state st;
	struct pst_pkt p;

	/* No counter list: every known meminfo/vmstat key in the file. */
	cfg.meminfo_period_ms = 5; /* raised to SS_MIN_PERIOD_MS */
	cfg.vmstat_period_ms = 10;
	cfg.stat_period_ms = 20;
	cfg.n_stat_counters = 1;
	cfg.stat_counters = &forks;
	ASSERT_EQ(ss_init(&st, PROC_FIXTURE, &cfg), 0);
	ASSERT_EQ(ss_tick_period_ms(&st), SS_MIN_PERIOD_MS);
	p = pst_ss_poll(&st, (1 << SS_MEMINFO) | (1 << SS_VMSTAT) | (1 << SS_STAT));
	sys = pst_payload(&p, PB_TRACE_PACKET__SYS_STATS);
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__MEMINFO), 15);
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__VMSTAT), 6);
	ASSERT_EQ(pst_kv(&sys, PB_SYS_STATS__VMSTAT,
			 PBE_VMSTAT_COUNTERS__VMSTAT_NR_ZONE_INACTIVE_ANON),
		  1256);
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__CPU_STAT), 0);
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__NUM_IRQ_TOTAL), 0);
	ASSERT_EQ(pst_u64(sys.data, sys.size, PB_SYS_STATS__NUM_FORKS), 92364);
	free(p.data);
	ss_fini(&st);

	/* 1000 and 1500 are not multiples of each other: nothing is polled. */
	cfg.meminfo_period_ms = 1000;
	cfg.vmstat_period_ms = 1500;
	cfg.stat_period_ms = 0;
	ASSERT_EQ(ss_init(&st, PROC_FIXTURE, &cfg), -EINVAL);
	ASSERT_EQ(ss_tick_period_ms(&st), 0);
	ss_fini(&st);

	/* No config, or a root without files: polls write only timestamps. */
	ASSERT_EQ(ss_init(&st, PROC_FIXTURE, NULL), 0);
	ASSERT_EQ(ss_tick_period_ms(&st), 0);
	ss_fini(&st);
	cfg.vmstat_period_ms = 1000;
	ASSERT_EQ(ss_init(&st, "/nonexistent-root", &cfg), 0);
	p = pst_ss_poll(&st, 0);
	sys = pst_payload(&p, PB_TRACE_PACKET__SYS_STATS);
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__MEMINFO), 0);
	free(p.data);
	ss_fini(&st);
	ss_fini(NULL);

	ASSERT_STREQ(ss_meminfo_key(PBE_MEMINFO_COUNTERS__MEMINFO_ACTIVE_ANON), "Active(anon)");
	ASSERT_TRUE(ss_meminfo_key(9999) == NULL);
}

TEST(ss_parsers_hostile_input)
{
	Perfetto__Protos__SysStatsConfig cfg = PERFETTO__PROTOS__SYS_STATS_CONFIG__INIT;
	static const char stat[] = "cpu0 1 2\ncpuX 5 5 5\ncpu\nintr\nsoftirq 9\nprocesses\n"
				   "cpu99999999999999999999 1\n";
	struct pz_field sys, e;
	struct ss_state st;
	struct pst_ctx x;
	struct pst_pkt p;
	struct pz_msg m;
	char junk[512];
	size_t i, cut;

	cfg.stat_period_ms = 100;
	cfg.meminfo_period_ms = 100;
	ASSERT_EQ(ss_init(&st, PROC_FIXTURE, &cfg), 0);
	pst_begin(&x);
	pz_begin_nested(&x.root, PB_TRACE_PACKET__SYS_STATS, &m);
	ss_parse_stat(&st, stat, strlen(stat), &m);
	pz_end(&m);
	p = pst_end(&x);
	sys = pst_payload(&p, PB_TRACE_PACKET__SYS_STATS);
	/* A short cpu line still yields its CPU, the rest read as 0. */
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__CPU_STAT), 1);
	e = pst_must_find(&sys, PB_SYS_STATS__CPU_STAT, PB_SYS_STATS_CPU_TIMES__CPU_ID, 0);
	ASSERT_U64_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_CPU_TIMES__USER_NICE_NS),
		      2 * pst_ns_per_tick());
	ASSERT_EQ(pst_u64(e.data, e.size, PB_SYS_STATS_CPU_TIMES__STEAL_NS), 0);
	ASSERT_EQ(pst_u64(sys.data, sys.size, PB_SYS_STATS__NUM_SOFTIRQ_TOTAL), 9);
	ASSERT_FALSE(pst_has(sys.data, sys.size, PB_SYS_STATS__NUM_IRQ_TOTAL));
	ASSERT_FALSE(pst_has(sys.data, sys.size, PB_SYS_STATS__NUM_FORKS));
	free(p.data);

	/* Pseudo-random bytes and every prefix of real files: no crash, the
	 * output stays a well-formed message. */
	srand(42);
	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (char)(i % 7 == 0 ? '\n' : i % 5 == 0 ? ' ' : rand());
	for (cut = 0; cut <= sizeof(junk); cut += 37) {
		pst_begin(&x);
		pz_begin_nested(&x.root, PB_TRACE_PACKET__SYS_STATS, &m);
		ss_parse_meminfo(&st, junk, cut, &m);
		ss_parse_vmstat(&st, junk, cut, &m);
		ss_parse_stat(&st, junk, cut, &m);
		ss_parse_buddyinfo(junk, cut, &m);
		ss_parse_diskstats(junk, cut, &m);
		ss_parse_psi(junk, cut, 1, 2, &m);
		ss_parse_slabinfo(junk, cut, &m);
		ss_parse_stat(&st, stat, cut % sizeof(stat), &m);
		pz_end(&m);
		p = pst_end(&x);
		sys = pst_payload(&p, PB_TRACE_PACKET__SYS_STATS);
		(void)pst_count(sys.data, sys.size, PB_SYS_STATS__CPU_STAT);
		free(p.data);
	}
	ss_fini(&st);
}

TEST(ss_live_meminfo_and_cpus)
{
	Perfetto__Protos__SysStatsConfig cfg = PERFETTO__PROTOS__SYS_STATS_CONFIG__INIT;
	struct pz_field sys;
	struct ss_state st;
	struct pst_pkt p;
	int mask;

	cfg.meminfo_period_ms = 100;
	cfg.stat_period_ms = 100;
	cfg.vmstat_period_ms = 100;
	cfg.cpufreq_period_ms = 100;
	ASSERT_EQ(ss_init(&st, "/", &cfg), 0);
	mask = (1 << SS_MEMINFO) | (1 << SS_VMSTAT) | (1 << SS_STAT) | (1 << SS_CPUFREQ);
	p = pst_ss_poll(&st, mask);
	sys = pst_payload(&p, PB_TRACE_PACKET__SYS_STATS);
	ASSERT_GT(pst_kv(&sys, PB_SYS_STATS__MEMINFO, PBE_MEMINFO_COUNTERS__MEMINFO_MEM_TOTAL), 0);
	ASSERT_GT(pst_kv(&sys, PB_SYS_STATS__VMSTAT, PBE_VMSTAT_COUNTERS__VMSTAT_NR_FREE_PAGES), 0);
	/* /proc/stat lists the online CPUs. */
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__CPU_STAT), sysconf(_SC_NPROCESSORS_ONLN));
	ASSERT_GT(pst_u64(sys.data, sys.size, PB_SYS_STATS__NUM_FORKS), 0);
	ASSERT_EQ(st.n_cpus, sysconf(_SC_NPROCESSORS_CONF));
	/* One cpufreq value per CPU, 0 without a cpufreq driver (as upstream). */
	ASSERT_EQ(pst_count(sys.data, sys.size, PB_SYS_STATS__CPUFREQ_KHZ), st.n_cpus);
	free(p.data);
	ss_fini(&st);
}

/* ---------------------------------------------------------- system_info ---- */

TEST(si_cpu_info_fixture)
{
	struct pz_field ci, cpu, arm, f;
	struct pst_ctx x;
	struct pst_pkt p;

	pst_begin(&x);
	ASSERT_EQ(si_write_cpu_info(PROC_FIXTURE, &x.root), 3);
	p = pst_end(&x);
	ASSERT_GT(pst_u64(p.data, p.len, PB_TRACE_PACKET__TIMESTAMP), 0);
	ci = pst_payload(&p, PB_TRACE_PACKET__CPU_INFO);
	ASSERT_EQ(pst_count(ci.data, ci.size, PB_CPU_INFO__CPUS), 3);

	ASSERT_TRUE(pst_get(ci.data, ci.size, PB_CPU_INFO__CPUS, 0, &cpu));
	pst_str_eq(cpu.data, cpu.size, PB_CPU_INFO_CPU__PROCESSOR, 0,
		   "AArch64 Processor rev 4 (aarch64)");
	/* available + boost, sorted, without the duplicate 1800000. */
	ASSERT_EQ(pst_count(cpu.data, cpu.size, PB_CPU_INFO_CPU__FREQUENCIES), 4);
	{
		static const uint64_t want[] = {300000, 1017600, 1800000, 2016000};

		for (int i = 0; i < 4; i++) {
			ASSERT_TRUE(pst_get(cpu.data, cpu.size, PB_CPU_INFO_CPU__FREQUENCIES, i, &f));
			ASSERT_U64_EQ(f.value, want[i]);
		}
	}
	ASSERT_EQ(pst_u64(cpu.data, cpu.size, PB_CPU_INFO_CPU__CAPACITY), 381);
	ASSERT_TRUE(pst_get(cpu.data, cpu.size, PB_CPU_INFO_CPU__ARM_IDENTIFIER, 0, &arm));
	ASSERT_EQ(pst_u64(arm.data, arm.size, PB_CPU_INFO_ARM_CPU_IDENTIFIER__IMPLEMENTER), 0x41);
	ASSERT_EQ(pst_u64(arm.data, arm.size, PB_CPU_INFO_ARM_CPU_IDENTIFIER__ARCHITECTURE), 8);
	ASSERT_EQ(pst_u64(arm.data, arm.size, PB_CPU_INFO_ARM_CPU_IDENTIFIER__VARIANT), 1);
	ASSERT_EQ(pst_u64(arm.data, arm.size, PB_CPU_INFO_ARM_CPU_IDENTIFIER__PART), 0xd05);
	ASSERT_EQ(pst_u64(arm.data, arm.size, PB_CPU_INFO_ARM_CPU_IDENTIFIER__REVISION), 0);
	ASSERT_EQ(pst_u64(cpu.data, cpu.size, PB_CPU_INFO_CPU__FEATURES), SI_FEATURE_MTE);

	ASSERT_TRUE(pst_get(ci.data, ci.size, PB_CPU_INFO__CPUS, 1, &cpu));
	ASSERT_EQ(pst_count(cpu.data, cpu.size, PB_CPU_INFO_CPU__FREQUENCIES), 2);
	ASSERT_EQ(pst_u64(cpu.data, cpu.size, PB_CPU_INFO_CPU__CAPACITY), 1024);
	ASSERT_TRUE(pst_get(cpu.data, cpu.size, PB_CPU_INFO_CPU__ARM_IDENTIFIER, 0, &arm));
	ASSERT_EQ(pst_u64(arm.data, arm.size, PB_CPU_INFO_ARM_CPU_IDENTIFIER__PART), 0xd41);
	ASSERT_EQ(pst_u64(arm.data, arm.size, PB_CPU_INFO_ARM_CPU_IDENTIFIER__REVISION), 1);
	ASSERT_EQ(pst_u64(cpu.data, cpu.size, PB_CPU_INFO_CPU__FEATURES),
		  SI_FEATURE_MTE | SI_FEATURE_MTE3);

	/* cpu2: no cpufreq, unparsable capacity, partial Arm id: all left out. */
	ASSERT_TRUE(pst_get(ci.data, ci.size, PB_CPU_INFO__CPUS, 2, &cpu));
	pst_str_eq(cpu.data, cpu.size, PB_CPU_INFO_CPU__PROCESSOR, 0,
		   "AArch64 Processor rev 4 (aarch64)");
	ASSERT_FALSE(pst_has(cpu.data, cpu.size, PB_CPU_INFO_CPU__FREQUENCIES));
	ASSERT_FALSE(pst_has(cpu.data, cpu.size, PB_CPU_INFO_CPU__CAPACITY));
	ASSERT_FALSE(pst_has(cpu.data, cpu.size, PB_CPU_INFO_CPU__ARM_IDENTIFIER));
	ASSERT_FALSE(pst_has(cpu.data, cpu.size, PB_CPU_INFO_CPU__FEATURES));
	free(p.data);

	/* No cpuinfo: an error and nothing written. */
	pst_begin(&x);
	ASSERT_EQ(si_write_cpu_info("/nonexistent-root", &x.root), -ENOENT);
	p = pst_end(&x);
	ASSERT_EQ(p.len, 0);
	free(p.data);
}

struct pst_cpus {
	int n;
	uint32_t index[8];
	char processor[8][64];
	uint64_t features[8];
};

static int pst_collect_cpu(const struct si_cpu *cpu, void *user)
{
	struct pst_cpus *c = user;

	if (c->n < 8) {
		c->index[c->n] = cpu->index;
		snprintf(c->processor[c->n], sizeof(c->processor[0]), "%.*s",
			 (int)cpu->processor.len, cpu->processor.ptr);
		c->features[c->n] = cpu->features;
	}
	c->n++;
	return 0;
}

static int pst_stop_cpu(const struct si_cpu *cpu, void *user)
{
	(void)cpu;
	(void)user;
	return -ECANCELED;
}

TEST(si_parse_cpuinfo_x86_and_hostile)
{
	static const char x86[] = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\n"
				  "flags\t\t: fpu vme mte\n\nprocessor\t: 1\nmodel name\t: AMD EPYC\n"
				  "flags\t\t: fpu\n\n";
	static const char odd[] = "processor : x\nFeatures : mte\n\nprocessor : 3\nprocessor : 4\n"
				  "Features : mte3 mte3\n:\n::\nCPU part : 0xzz\n";
	struct pst_cpus c;
	size_t cut;

	memset(&c, 0, sizeof(c));
	ASSERT_EQ(si_parse_cpuinfo(x86, strlen(x86), pst_collect_cpu, &c), 2);
	ASSERT_EQ(c.index[1], 1);
	/* No Arm "Processor" key: the model name. x86 "flags" is not "Flags". */
	ASSERT_STREQ(c.processor[0], "AMD EPYC");
	ASSERT_EQ(c.features[0], 0);

	/* A bad index drops its block; a block without a blank line still ends. */
	memset(&c, 0, sizeof(c));
	ASSERT_EQ(si_parse_cpuinfo(odd, strlen(odd), pst_collect_cpu, &c), 2);
	ASSERT_EQ(c.index[0], 3);
	ASSERT_STREQ(c.processor[0], "unknown");
	ASSERT_EQ(c.index[1], 4);
	ASSERT_EQ(c.features[1], SI_FEATURE_MTE3);

	ASSERT_EQ(si_parse_cpuinfo(x86, strlen(x86), pst_stop_cpu, NULL), -ECANCELED);
	for (cut = 0; cut <= strlen(odd); cut++) {
		memset(&c, 0, sizeof(c));
		ASSERT_GE(si_parse_cpuinfo(odd, cut, pst_collect_cpu, &c), 0);
	}
}

TEST(si_live_cpu_info)
{
	struct pz_field ci;
	struct pst_ctx x;
	struct pst_pkt p;

	pst_begin(&x);
	ASSERT_EQ(si_write_cpu_info("/", &x.root), sysconf(_SC_NPROCESSORS_ONLN));
	p = pst_end(&x);
	ci = pst_payload(&p, PB_TRACE_PACKET__CPU_INFO);
	ASSERT_EQ(pst_count(ci.data, ci.size, PB_CPU_INFO__CPUS), sysconf(_SC_NPROCESSORS_ONLN));
	free(p.data);
}

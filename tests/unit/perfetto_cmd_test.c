// SPDX-License-Identifier: Apache-2.0
/*
 * perfetto_cmd_test.c - unit tests for the perfetto command's pure parts:
 * time and size flags, the light-mode TraceConfig, and config loading in
 * binary and text format with its error messages; the rotation flags, the
 * config rotation needs, and which file each sequence's packets go to.
 */
#include "harness.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/file.h"
#include "pb_fields.h"
#include "protozero/protozero.h"

#include "config/perf_event_config.pb-c.h"
#include "config/trace_config.pb-c.h"
#include "perfetto_cmd/cmd_args.h"
#include "perfetto_cmd/cmd_config.h"
#include "perfetto_cmd/cmd_rotate.h"

TEST(time_units)
{
	uint64_t v = 1;

	ASSERT_EQ(cmd_parse_time_ms("10s", &v), 0);
	ASSERT_EQ(v, 10000);
	ASSERT_EQ(cmd_parse_time_ms("500ms", &v), 0);
	ASSERT_EQ(v, 500);
	ASSERT_EQ(cmd_parse_time_ms("2m", &v), 0);
	ASSERT_EQ(v, 120000);
	ASSERT_EQ(cmd_parse_time_ms("1h", &v), 0);
	ASSERT_EQ(v, 3600000);
	ASSERT_EQ(cmd_parse_time_ms("0", &v), 0);
	ASSERT_EQ(v, 0);
	ASSERT_EQ(cmd_parse_time_ms("10", &v), -EINVAL);
	ASSERT_EQ(cmd_parse_time_ms("s", &v), -EINVAL);
	ASSERT_EQ(cmd_parse_time_ms("10 s", &v), -EINVAL);
	ASSERT_EQ(cmd_parse_time_ms("-1s", &v), -EINVAL);
	ASSERT_EQ(cmd_parse_time_ms("99999999999999999999s", &v), -ERANGE);
	ASSERT_EQ(cmd_parse_time_ms("9999999999999999h", &v), -ERANGE);
}

TEST(size_units)
{
	uint64_t v = 0;

	ASSERT_EQ(cmd_parse_size_kb("32mb", &v), 0);
	ASSERT_EQ(v, 32768);
	ASSERT_EQ(cmd_parse_size_kb("1gb", &v), 0);
	ASSERT_EQ(v, 1048576);
	ASSERT_EQ(cmd_parse_size_kb("512k", &v), 0);
	ASSERT_EQ(v, 512);
	ASSERT_EQ(cmd_parse_size_kb("2m", &v), 0);
	ASSERT_EQ(v, 2048);
	ASSERT_EQ(cmd_parse_size_kb("32MB", &v), -EINVAL);
	ASSERT_EQ(cmd_parse_size_kb("32tb", &v), -EINVAL);
}

TEST(light_mode_config)
{
	static const char *const cats[] = {"sched", "sched/sched_switch", "freq", "power/cpu_idle"};
	struct cmd_light_opts o = {.time = "5s", .buffer_size = "64mb", .categories = cats,
				   .n_categories = 4};
	Perfetto__Protos__TraceConfig *cfg;
	Perfetto__Protos__FtraceConfig *f;
	struct buf b = BUF_INIT;
	char err[256];

	ASSERT_EQ(cmd_config_from_light_opts(&o, &b, err, sizeof(err)), 0);
	cfg = perfetto__protos__trace_config__unpack(NULL, b.len, b.data);
	ASSERT_TRUE(cfg != NULL);
	ASSERT_EQ(cfg->duration_ms, 5000);
	ASSERT_EQ(cfg->n_buffers, 1);
	ASSERT_EQ(cfg->buffers[0]->size_kb, 65536);
	ASSERT_FALSE(cfg->write_into_file);
	ASSERT_EQ(cfg->flush_period_ms, CMD_LIGHT_FLUSH_PERIOD_MS);
	ASSERT_EQ(cfg->n_data_sources, 2);
	ASSERT_STREQ(cfg->data_sources[0]->config->name, "linux.ftrace");
	ASSERT_STREQ(cfg->data_sources[1]->config->name, "linux.process_stats");
	f = cfg->data_sources[0]->config->ftrace_config;
	ASSERT_TRUE(f != NULL);
	ASSERT_EQ(f->n_ftrace_events, 2);
	ASSERT_STREQ(f->ftrace_events[0], "sched/sched_switch");
	ASSERT_STREQ(f->ftrace_events[1], "power/cpu_idle");
	ASSERT_EQ(f->n_atrace_categories, 2);
	ASSERT_STREQ(f->atrace_categories[0], "sched");
	ASSERT_STREQ(f->atrace_categories[1], "freq");
	perfetto__protos__trace_config__free_unpacked(cfg, NULL);
	buf_fini(&b);
}

TEST(light_mode_cpu_profile)
{
	static const char *const cats[] = {"sched"};
	struct cmd_light_opts o = {.categories = cats, .n_categories = 1, .cpu_profile_hz = 99};
	Perfetto__Protos__TraceConfig *cfg;
	Perfetto__Protos__PerfEventConfig *p;
	struct buf b = BUF_INIT;
	char err[256];

	ASSERT_EQ(cmd_config_from_light_opts(&o, &b, err, sizeof(err)), 0);
	cfg = perfetto__protos__trace_config__unpack(NULL, b.len, b.data);
	ASSERT_TRUE(cfg != NULL);
	ASSERT_EQ(cfg->n_data_sources, 3);
	ASSERT_STREQ(cfg->data_sources[2]->config->name, "linux.perf");
	p = cfg->data_sources[2]->config->perf_event_config;
	ASSERT_TRUE(p != NULL && p->timebase != NULL && p->callstack_sampling != NULL);
	ASSERT_EQ(p->timebase->interval_case, PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__INTERVAL_FREQUENCY);
	ASSERT_EQ(p->timebase->frequency, 99);
	ASSERT_EQ(p->timebase->counter, PERFETTO__PROTOS__PERF_EVENTS__COUNTER__SW_CPU_CLOCK);
	ASSERT_TRUE(p->callstack_sampling->kernel_frames);
	ASSERT_EQ(p->callstack_sampling->user_frames,
		  PERFETTO__PROTOS__PERF_EVENT_CONFIG__UNWIND_MODE__UNWIND_DWARF);
	perfetto__protos__trace_config__free_unpacked(cfg, NULL);
	buf_fini(&b);
}

TEST(light_mode_defaults_and_size)
{
	struct cmd_light_opts o = {.max_file_size = "100mb"};
	Perfetto__Protos__TraceConfig *cfg;
	struct buf b = BUF_INIT;
	char err[256];

	ASSERT_EQ(cmd_config_from_light_opts(&o, &b, err, sizeof(err)), 0);
	cfg = perfetto__protos__trace_config__unpack(NULL, b.len, b.data);
	ASSERT_TRUE(cfg != NULL);
	ASSERT_EQ(cfg->duration_ms, 10000);
	ASSERT_EQ(cfg->buffers[0]->size_kb, 32768);
	ASSERT_TRUE(cfg->write_into_file);
	ASSERT_U64_EQ(cfg->max_file_size_bytes, 100ull << 20);
	perfetto__protos__trace_config__free_unpacked(cfg, NULL);
	buf_fini(&b);
}

TEST(light_mode_bad_flags)
{
	struct cmd_light_opts o = {.time = "ten seconds"};
	struct buf b = BUF_INIT;
	char err[256] = "";

	ASSERT_EQ(cmd_config_from_light_opts(&o, &b, err, sizeof(err)), -EINVAL);
	ASSERT_TRUE(strstr(err, "--time") != NULL);
	o.time = NULL;
	o.buffer_size = "0";
	ASSERT_EQ(cmd_config_from_light_opts(&o, &b, err, sizeof(err)), -EINVAL);
	ASSERT_TRUE(strstr(err, "--buffer") != NULL);
	ASSERT_EQ(b.len, 0);
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	ASSERT_TRUE(f != NULL);
	ASSERT_EQ(fwrite(data, 1, len, f), len);
	fclose(f);
}

TEST(config_load_text_binary_and_errors)
{
	char path[512], bin_path[512], err[512];
	static const char text[] = "buffers { size_kb: 1024 }\nduration_ms: 2000\n";
	static const char typo[] = "buffers { size_kb: 1024 }\nduraton_ms: 2000\n";
	Perfetto__Protos__TraceConfig *cfg;
	struct buf b = BUF_INIT, b2 = BUF_INIT;

	snprintf(path, sizeof(path), "%s/cfg.pbtxt", test_tmpdir());
	snprintf(bin_path, sizeof(bin_path), "%s/cfg.pb", test_tmpdir());
	write_file(path, text, sizeof(text) - 1);
	ASSERT_EQ(cmd_config_load(path, true, &b, err, sizeof(err)), 0);
	cfg = perfetto__protos__trace_config__unpack(NULL, b.len, b.data);
	ASSERT_TRUE(cfg != NULL);
	ASSERT_EQ(cfg->duration_ms, 2000);
	perfetto__protos__trace_config__free_unpacked(cfg, NULL);

	/* The same bytes load as a binary config. */
	write_file(bin_path, b.data, b.len);
	ASSERT_EQ(cmd_config_load(bin_path, false, &b2, err, sizeof(err)), 0);
	ASSERT_EQ(b2.len, b.len);
	ASSERT_MEMEQ(b2.data, b.data, b.len);

	/* Text without --txt is not a binary config. */
	buf_reset(&b2);
	ASSERT_EQ(cmd_config_load(path, false, &b2, err, sizeof(err)), -EINVAL);
	ASSERT_TRUE(strstr(err, "--txt") != NULL);

	write_file(path, typo, sizeof(typo) - 1);
	ASSERT_EQ(cmd_config_load(path, true, &b2, err, sizeof(err)), -EINVAL);
	ASSERT_TRUE(strstr(err, "at 2:1; did you mean 'duration_ms'?") != NULL);

	snprintf(path, sizeof(path), "%s/missing", test_tmpdir());
	ASSERT_EQ(cmd_config_load(path, true, &b2, err, sizeof(err)), -ENOENT);
	buf_fini(&b);
	buf_fini(&b2);
}

/* Parses a NULL-terminated list of arguments (the program name is added). */
static int parse(struct cmd_args *a, char *err, const char *first, ...)
{
	static char *argv[32];
	int argc = 0;
	va_list ap;
	const char *s;

	argv[argc++] = (char *)"perfetto";
	va_start(ap, first);
	for (s = first; s && argc < 31; s = va_arg(ap, const char *))
		argv[argc++] = (char *)s;
	va_end(ap);
	argv[argc] = NULL;
	return cmd_args_parse(argc, argv, a, err, 256);
}

TEST(args_config_mode)
{
	struct cmd_args a;
	char err[256];

	ASSERT_EQ(parse(&a, err, "--txt", "-c", "cfg.pbtxt", "-o", "out.pftrace", NULL), 0);
	ASSERT_EQ(a.mode, CMD_MODE_TRACE);
	ASSERT_STREQ(a.config_path, "cfg.pbtxt");
	ASSERT_TRUE(a.config_is_text);
	ASSERT_STREQ(a.out_path, "out.pftrace");
	ASSERT_FALSE(a.background);
	ASSERT_EQ(a.notify_fd, -1);
}

TEST(args_light_mode)
{
	struct cmd_args a;
	char err[256];

	ASSERT_EQ(parse(&a, err, "-o", "t", "-t", "10s", "-b", "64mb", "sched", "freq",
			"sched/sched_switch", NULL), 0);
	ASSERT_STREQ(a.time, "10s");
	ASSERT_STREQ(a.buffer_size, "64mb");
	ASSERT_EQ(a.n_categories, 3);
	ASSERT_STREQ(a.categories[2], "sched/sched_switch");
	ASSERT_EQ(parse(&a, err, "--out=t", "idle", NULL), 0);
	ASSERT_EQ(a.n_categories, 1);
	ASSERT_EQ(a.cpu_profile_hz, 0);
	ASSERT_EQ(parse(&a, err, "-o", "t", "--cpu-profile", "99", "sched", NULL), 0);
	ASSERT_EQ(a.cpu_profile_hz, 99);
	ASSERT_EQ(parse(&a, err, "-o", "t", "--cpu-profile", "250", NULL), 0);
	ASSERT_EQ(a.n_categories, 0);
	ASSERT_EQ(parse(&a, err, "-o", "t", "--cpu-profile", "0", NULL), -EINVAL);
	ASSERT_TRUE(strstr(err, "--cpu-profile") != NULL);
	ASSERT_EQ(parse(&a, err, "-o", "t", "--cpu-profile", "1000000", NULL), -EINVAL);
	/* An option after the categories would be taken for one: an error. */
	ASSERT_EQ(parse(&a, err, "-o", "t", "sched", "--cpu-profile", "99", NULL), -EINVAL);
	ASSERT_TRUE(strstr(err, "after the categories") != NULL);
}

TEST(args_conflicts_and_errors)
{
	struct cmd_args a;
	char err[256];

	ASSERT_EQ(parse(&a, err, "-c", "cfg", "-o", "t", "-t", "5s", NULL), -EINVAL);
	ASSERT_TRUE(strstr(err, "cannot specify both") != NULL);
	/* -c without -o is allowed: the config may only fire triggers. */
	ASSERT_EQ(parse(&a, err, "-c", "cfg", NULL), 0);
	ASSERT_EQ(parse(&a, err, "-t", "1s", "sched", NULL), -EINVAL);
	ASSERT_TRUE(strstr(err, "--out") != NULL);
	ASSERT_EQ(parse(&a, err, "-o", "t", NULL), -EINVAL);
	ASSERT_EQ(parse(&a, err, "--bogus", NULL), -EINVAL);
	ASSERT_TRUE(strstr(err, "--bogus") != NULL);
	ASSERT_EQ(parse(&a, err, "-c", NULL), -EINVAL);
	ASSERT_TRUE(strstr(err, "needs an argument") != NULL);
	ASSERT_EQ(parse(&a, err, "--upload", "-c", "x", NULL), -EINVAL);
	ASSERT_TRUE(strstr(err, "Android") != NULL);
	ASSERT_EQ(parse(&a, err, "-d", "-c", "x", "-o", "-", NULL), -EINVAL);
	ASSERT_EQ(parse(&a, err, "--stop", NULL), -EINVAL);
	ASSERT_EQ(parse(&a, err, "--clone", "abc", "-o", "x", NULL), -EINVAL);
	ASSERT_EQ(parse(&a, err, "--notify-fd", "x", "-c", "c", "-o", "o", NULL), -EINVAL);
}

TEST(args_other_modes)
{
	struct cmd_args a;
	char err[256];

	ASSERT_EQ(parse(&a, err, "--query", NULL), 0);
	ASSERT_EQ(a.mode, CMD_MODE_QUERY);
	ASSERT_EQ(parse(&a, err, "--query-raw", NULL), 0);
	ASSERT_TRUE(a.query_raw);
	ASSERT_EQ(parse(&a, err, "--version", NULL), 0);
	ASSERT_EQ(a.mode, CMD_MODE_VERSION);
	ASSERT_EQ(parse(&a, err, "--attach=k", "--stop", "-o", "t", NULL), 0);
	ASSERT_EQ(a.mode, CMD_MODE_ATTACH);
	ASSERT_STREQ(a.attach_key, "k");
	ASSERT_TRUE(a.stop_after_attach);
	ASSERT_EQ(parse(&a, err, "--is_detached=k", NULL), 0);
	ASSERT_EQ(a.mode, CMD_MODE_IS_DETACHED);
	ASSERT_EQ(parse(&a, err, "--clone", "7", "-o", "snap", NULL), 0);
	ASSERT_EQ(a.mode, CMD_MODE_CLONE);
	ASSERT_EQ(a.clone_id, 7);
	ASSERT_EQ(parse(&a, err, "--clone-by-name", "job", "-o", "snap", NULL), 0);
	ASSERT_STREQ(a.clone_name, "job");
	ASSERT_EQ(parse(&a, err, "--detach=k", "-c", "c", NULL), 0);
	ASSERT_STREQ(a.detach_key, "k");
	ASSERT_EQ(parse(&a, err, "-D", "-c", "c", "-o", "o", "--add-attribute", "team=infra", NULL), 0);
	ASSERT_TRUE(a.background && a.background_wait);
	ASSERT_EQ(a.n_attributes, 1);
}

TEST(args_rotate)
{
	struct cmd_args a;
	char err[256];

	ASSERT_EQ(parse(&a, err, "-c", "c", "-o", "t", "--rotate-seconds", "10", "--keep", "3",
			NULL), 0);
	ASSERT_EQ(a.rotate_seconds, 10);
	ASSERT_EQ(a.keep, 3);
	ASSERT_EQ(parse(&a, err, "-c", "c", "-o", "t", "--rotate-mb", "64", NULL), 0);
	ASSERT_EQ(a.rotate_mb, 64);
	ASSERT_EQ(parse(&a, err, "-c", "c", "-o", "-", "--rotate-seconds", "1", NULL), -EINVAL);
	ASSERT_EQ(parse(&a, err, "-c", "c", "-o", "t", "--keep", "2", NULL), -EINVAL);
	ASSERT_TRUE(strstr(err, "--keep") != NULL);
	ASSERT_EQ(parse(&a, err, "-c", "c", "-o", "t", "--rotate-seconds", "0", NULL), -EINVAL);
	ASSERT_EQ(parse(&a, err, "--clone", "1", "-o", "t", "--rotate-mb", "1", NULL), -EINVAL);
}

static void config_text(const char *txt, struct buf *out)
{
	char err[256], path[] = "/tmp/pfc-rot-cfg.XXXXXX";
	int fd = mkstemp(path);

	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(file_write_all(fd, txt, strlen(txt)), 0);
	close(fd);
	buf_init(out);
	ASSERT_EQ(cmd_config_load(path, true, out, err, sizeof(err)), 0);
	unlink(path);
}

TEST(rotate_config)
{
	struct cmd_rotate_opts o = {.out_path = "x", .rotate_ms = 2000};
	Perfetto__Protos__TraceConfig *c;
	struct buf b;
	char err[256];

	config_text("buffers { size_kb: 64 }\nduration_ms: 5000", &b);
	ASSERT_EQ(cmd_rotate_prepare_config(&o, &b, err, sizeof(err)), 0);
	c = perfetto__protos__trace_config__unpack(NULL, b.len, b.data);
	ASSERT_TRUE(c && c->incremental_state_config);
	ASSERT_EQ(c->incremental_state_config->clear_period_ms, 500);
	ASSERT_EQ(c->duration_ms, 5000);
	perfetto__protos__trace_config__free_unpacked(c, NULL);
	buf_fini(&b);
	/* A shorter clear period of the user's stays. */
	config_text("buffers { size_kb: 64 }\nincremental_state_config { clear_period_ms: 100 }", &b);
	ASSERT_EQ(cmd_rotate_prepare_config(&o, &b, err, sizeof(err)), 0);
	c = perfetto__protos__trace_config__unpack(NULL, b.len, b.data);
	ASSERT_EQ(c->incremental_state_config->clear_period_ms, 100);
	perfetto__protos__trace_config__free_unpacked(c, NULL);
	buf_fini(&b);
	config_text("buffers { size_kb: 64 }\nwrite_into_file: true", &b);
	ASSERT_EQ(cmd_rotate_prepare_config(&o, &b, err, sizeof(err)), -EINVAL);
	buf_fini(&b);
	config_text("buffers { size_kb: 64 }\ncompression { deflate {} }", &b);
	ASSERT_EQ(cmd_rotate_prepare_config(&o, &b, err, sizeof(err)), -EINVAL);
	buf_fini(&b);
}

/* A packet on sequence @seq with @flags, carrying @mark as for_testing bytes. */
static size_t rot_packet(uint8_t *out, size_t cap, uint32_t seq, uint32_t flags, uint32_t mark)
{
	struct pz_stream s;
	struct pz_msg m;

	pz_stream_init_flat(&s, out, cap);
	pz_msg_begin(&m, &s, NULL);
	pz_append_varint(&m, PB_TRACE_PACKET__TIMESTAMP, mark);
	if (flags)
		pz_append_varint(&m, PB_TRACE_PACKET__SEQUENCE_FLAGS, flags);
	pz_append_varint(&m, PB_TRACE_PACKET__TRUSTED_PACKET_SEQUENCE_ID, seq);
	pz_end(&m);
	return (size_t)(s.cur - out);
}

/* The timestamps (marks) of a rotated file's packets, in order, as digits. */
static void file_marks(const char *path, char *out, size_t cap)
{
	struct buf b;
	struct pz_reader r, pr;
	struct pz_field f, pf;
	size_t n = 0;

	buf_init(&b);
	out[0] = 0;
	ASSERT_TRUE(file_read_all(path, &b, 1 << 20) >= 0);
	pz_reader_init(&r, b.data, b.len);
	while (pz_reader_next(&r, &f) > 0) {
		pz_reader_init(&pr, f.data, f.size);
		while (pz_reader_next(&pr, &pf) > 0) {
			if (pf.id == PB_TRACE_PACKET__TIMESTAMP && n + 2 < cap) {
				out[n++] = (char)('0' + pf.value);
				out[n] = 0;
			}
		}
	}
	buf_fini(&b);
}

TEST(rotate_sequences_move_at_their_clear)
{
	char dir[] = "/tmp/pfc-rot.XXXXXX", out[256], path[300], marks[64];
	struct cmd_rotate_opts o = {.rotate_ms = 1};
	struct timespec ts = {0, 3 * 1000 * 1000};
	struct cmd_rotate *r;
	uint8_t pkt[64];
	size_t n;

	ASSERT_TRUE(mkdtemp(dir) != NULL);
	snprintf(out, sizeof(out), "%s/t.pf", dir);
	o.out_path = out;
	ASSERT_EQ(cmd_rotate_create(&o, &r), 0);
	/* File 0: an incremental sequence (5) and a plain one (6). */
	n = rot_packet(pkt, sizeof(pkt), 5, 1 | 2, 1);
	cmd_rotate_packet(r, pkt, n);
	n = rot_packet(pkt, sizeof(pkt), 6, 0, 2);
	cmd_rotate_packet(r, pkt, n);
	nanosleep(&ts, NULL);
	ASSERT_EQ(cmd_rotate_before_read(r), 0); /* the period elapsed: cut */
	ASSERT_EQ(cmd_rotate_files_started(r), 2);
	/* Sequence 6 moves at once; 5 stays until its state is cleared. */
	n = rot_packet(pkt, sizeof(pkt), 6, 0, 3);
	cmd_rotate_packet(r, pkt, n);
	n = rot_packet(pkt, sizeof(pkt), 5, 2, 4);
	cmd_rotate_packet(r, pkt, n);
	n = rot_packet(pkt, sizeof(pkt), 5, 1 | 2, 5);
	cmd_rotate_packet(r, pkt, n);
	n = rot_packet(pkt, sizeof(pkt), 5, 2, 6);
	cmd_rotate_packet(r, pkt, n);
	cmd_rotate_destroy(r);
	snprintf(path, sizeof(path), "%s.0", out);
	file_marks(path, marks, sizeof(marks));
	ASSERT_STREQ(marks, "124");
	snprintf(path, sizeof(path), "%s.1", out);
	file_marks(path, marks, sizeof(marks));
	ASSERT_STREQ(marks, "356");
	unlink(path);
	snprintf(path, sizeof(path), "%s.0", out);
	unlink(path);
	rmdir(dir);
}

/* A RemoteClockSync packet of @machine, told apart by its timestamp @mark
 * (the rotator reads neither). */
static size_t sync_packet(uint8_t *out, size_t cap, uint32_t machine, uint64_t mark)
{
	struct pz_stream s;
	struct pz_msg m, sync;

	pz_stream_init_flat(&s, out, cap);
	pz_msg_begin(&m, &s, NULL);
	pz_append_varint(&m, PB_TRACE_PACKET__TIMESTAMP, mark);
	pz_append_varint(&m, PB_TRACE_PACKET__MACHINE_ID, machine);
	pz_begin_nested(&m, PB_TRACE_PACKET__REMOTE_CLOCK_SYNC, &sync);
	pz_end(&sync);
	pz_end(&m);
	return (size_t)(s.cur - out);
}

/* A remote machine's events need a clock sync round in their own file:
 * each new file starts with every machine's newest one. */
TEST(rotate_repeats_each_machines_newest_clock_sync)
{
	char dir[] = "/tmp/pfc-rot.XXXXXX", out[256], path[300], marks[64];
	struct cmd_rotate_opts o = {.rotate_ms = 1};
	struct timespec ts = {0, 3 * 1000 * 1000};
	struct cmd_rotate *r;
	uint8_t pkt[64];
	size_t n;
	unsigned i;

	ASSERT_TRUE(mkdtemp(dir) != NULL);
	snprintf(out, sizeof(out), "%s/t.pf", dir);
	o.out_path = out;
	ASSERT_EQ(cmd_rotate_create(&o, &r), 0);
	n = sync_packet(pkt, sizeof(pkt), 7, 1);
	cmd_rotate_packet(r, pkt, n);
	n = sync_packet(pkt, sizeof(pkt), 9, 2);
	cmd_rotate_packet(r, pkt, n);
	n = sync_packet(pkt, sizeof(pkt), 7, 3);
	cmd_rotate_packet(r, pkt, n);
	nanosleep(&ts, NULL);
	ASSERT_EQ(cmd_rotate_before_read(r), 0);
	n = rot_packet(pkt, sizeof(pkt), 6, 0, 4);
	cmd_rotate_packet(r, pkt, n);
	cmd_rotate_destroy(r);
	snprintf(path, sizeof(path), "%s.0", out);
	file_marks(path, marks, sizeof(marks));
	ASSERT_STREQ(marks, "123");
	snprintf(path, sizeof(path), "%s.1", out);
	file_marks(path, marks, sizeof(marks));
	ASSERT_STREQ(marks, "324");
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s.%u", out, i);
		unlink(path);
	}
	rmdir(dir);
}

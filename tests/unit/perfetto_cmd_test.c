// SPDX-License-Identifier: Apache-2.0
/*
 * perfetto_cmd_test.c - unit tests for the perfetto command's pure parts:
 * time and size flags, the light-mode TraceConfig, and config loading in
 * binary and text format with its error messages.
 */
#include "harness.h"

#include <errno.h>
#include <stdio.h>

#include "config/trace_config.pb-c.h"
#include "perfetto_cmd/cmd_config.h"

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

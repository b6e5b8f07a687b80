// SPDX-License-Identifier: Apache-2.0
/*
 * service_bench.c - end-to-end throughput of the recording path: traced,
 * one test_producer with 1 or 4 writer threads writing 1 KiB packets into a
 * DISCARD buffer larger than the data, and `perfetto` writing the trace
 * file. The producer fires a STOP trigger when it is done, so the session
 * ends as soon as the data is in. Prints MB/s end to end and CPU seconds
 * per GB for the producer and for traced (from wait4 rusage), against the
 * issue's targets. Run from the repository root after `make`;
 * `--smoke` moves 16 MB only, `--mb N` picks the size (default 512).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_proc.h"

#define PACKET_BYTES 1024

struct result {
	unsigned threads;
	double seconds;
	double record_seconds;   /* until the file starts to grow: producer -> traced */
	double file_mb;
	double producer_cpu_per_gb;
	double traced_cpu_per_gb;
	int ok;
};

static int run(const char *dir, unsigned threads, unsigned total_mb, struct result *res)
{
	char prod_sock[256], cons_sock[256], cfg_path[256], out_path[256], packets[32], thr[32];
	struct child traced = {0}, producer = {0}, perfetto = {0};
	unsigned long long n_packets = (unsigned long long)total_mb * 1024 * 1024 / PACKET_BYTES;
	char *traced_argv[] = {"out/traced", NULL};
	char *prod_argv[] = {"out/test_producer", "--name", "bench", "--ds", "bench.ds",
			     "--threads", thr, "--packets-per-thread", packets, "--packet-size", "1024",
			     "--emit-on-start", "--trigger-when-done", "bench-done",
			     /* A heavy producer's SMB, as traced_probes asks for. */
			     "--shm-kb", "2048", "--page-kb", "32", NULL};
	char *perfetto_argv[] = {"out/perfetto", "--txt", "-c", cfg_path, "-o", out_path, NULL};
	struct stat st;
	double t0, gb;
	FILE *f;
	int ready = -1;

	memset(res, 0, sizeof(*res));
	res->threads = threads;
	snprintf(prod_sock, sizeof(prod_sock), "%s/p.sock", dir);
	snprintf(cons_sock, sizeof(cons_sock), "%s/c.sock", dir);
	snprintf(cfg_path, sizeof(cfg_path), "%s/cfg.pbtxt", dir);
	snprintf(out_path, sizeof(out_path), "%s/trace-%u.pftrace", dir, threads);
	snprintf(thr, sizeof(thr), "%u", threads);
	snprintf(packets, sizeof(packets), "%llu", n_packets / threads);
	setenv("PERFETTO_PRODUCER_SOCK_NAME", prod_sock, 1);
	setenv("PERFETTO_CONSUMER_SOCK_NAME", cons_sock, 1);

	f = fopen(cfg_path, "w");
	if (!f)
		return -errno;
	fprintf(f,
		"buffers { size_kb: %u fill_policy: DISCARD }\n"
		"data_sources { config { name: \"bench.ds\" } }\n"
		"trigger_config {\n"
		"  trigger_mode: STOP_TRACING\n"
		"  trigger_timeout_ms: 300000\n"
		"  triggers { name: \"bench-done\" stop_delay_ms: 0 }\n"
		"}\n",
		total_mb * 1024 + total_mb * 1024 / 4 + 4096);
	fclose(f);

	if (spawn(traced_argv, NULL, "TRACED_NOTIFY_FD", &ready, &traced) < 0 || wait_ready(ready) < 0) {
		fprintf(stderr, "service_bench: traced did not start\n");
		reap(&traced, SIGKILL);
		return -1;
	}
	if (spawn(prod_argv, NULL, "TEST_PRODUCER_NOTIFY_FD", &ready, &producer) < 0 ||
	    wait_ready(ready) < 0) {
		fprintf(stderr, "service_bench: test_producer did not start\n");
		reap(&producer, SIGKILL);
		reap(&traced, SIGKILL);
		return -1;
	}
	t0 = now_s();
	if (spawn(perfetto_argv, NULL, NULL, NULL, &perfetto) < 0) {
		reap(&producer, SIGKILL);
		reap(&traced, SIGKILL);
		return -1;
	}
	/* Poll the file: it starts growing once the buffers are being read. */
	res->record_seconds = -1;
	for (;;) {
		struct timespec ts = {0, 500000};
		pid_t w = wait4(perfetto.pid, &perfetto.status, WNOHANG, &perfetto.ru);

		if (res->record_seconds < 0 && stat(out_path, &st) == 0 && st.st_size > 0)
			res->record_seconds = now_s() - t0;
		if (w == perfetto.pid) {
			perfetto.pid = 0;
			break;
		}
		nanosleep(&ts, NULL);
	}
	res->seconds = now_s() - t0;
	if (res->record_seconds < 0)
		res->record_seconds = res->seconds;
	reap(&producer, SIGTERM);
	reap(&traced, SIGTERM);
	if (stat(out_path, &st) < 0)
		return -1;
	res->file_mb = (double)st.st_size / 1e6;
	gb = (double)st.st_size / 1e9;
	res->producer_cpu_per_gb = cpu_s(&producer.ru) / gb;
	res->traced_cpu_per_gb = cpu_s(&traced.ru) / gb;
	/* The whole data set must be in the file (framing adds a little). */
	res->ok = WIFEXITED(perfetto.status) && WEXITSTATUS(perfetto.status) == 0 &&
		  (double)st.st_size >= (double)n_packets * PACKET_BYTES * 0.99;
	unlink(out_path);
	unlink(cfg_path);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned total_mb = 512, threads[] = {1, 4}, i;
	char dir[] = "/tmp/pfc-service-bench-XXXXXX";
	struct result res;
	int failed = 0;

	for (i = 1; i < (unsigned)argc; i++) {
		if (strcmp(argv[i], "--smoke") == 0)
			total_mb = 16;
		else if (strcmp(argv[i], "--mb") == 0 && i + 1 < (unsigned)argc)
			total_mb = (unsigned)strtoul(argv[++i], NULL, 10);
	}
	if (access("out/traced", X_OK) || access("out/test_producer", X_OK) ||
	    access("out/perfetto", X_OK)) {
		fprintf(stderr, "service_bench: run from the repository root after `make`\n");
		return 1;
	}
	if (!mkdtemp(dir))
		return 1;
	signal(SIGPIPE, SIG_IGN);
	printf("service_bench: %u MB of 1 KiB packets, DISCARD buffer, traced + test_producer + "
	       "perfetto -o file\n", total_mb);
	for (i = 0; i < 2; i++) {
		if (run(dir, threads[i], total_mb, &res) < 0 || !res.ok) {
			printf("%u writer thread(s): FAILED (the trace was incomplete)\n", threads[i]);
			failed = 1;
			continue;
		}
		printf("%u writer thread(s): %7.1f MB/s end to end (%.1f MB in %.2f s: %.2f s recording, "
		       "%.2f s reading out); CPU s/GB: producer %.2f, traced %.2f\n",
		       res.threads, res.file_mb / res.seconds, res.file_mb, res.seconds,
		       res.record_seconds, res.seconds - res.record_seconds,
		       res.producer_cpu_per_gb, res.traced_cpu_per_gb);
		if (threads[i] == 1)
			printf("  targets: >= 500 MB/s end to end (%s, %.2fx of target); traced < 1 CPU "
			       "s/GB (%s)\n",
			       res.file_mb / res.seconds >= 500 ? "met" : "MISSED",
			       res.file_mb / res.seconds / 500.0,
			       res.traced_cpu_per_gb < 1.0 ? "met" : "MISSED");
	}
	rmdir(dir);
	return failed;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * relay_bench.c - producer throughput through traced_relay, beside the same
 * producer straight to traced over TCP and over a UNIX socket, in one run:
 * one test_producer thread writes 1 KiB packets into a DISCARD buffer
 * larger than the data and fires a STOP trigger when done. The figure is
 * the recording phase (session start until all data is in traced and the
 * file starts to grow), so it measures the producer -> service path, not
 * the file write. Also prints CPU seconds per GB of traced, the producer
 * and the relay (from wait4 rusage), and the relay rate as a fraction of
 * the direct TCP rate against the target (>= 0.90). Run from the
 * repository root after `make`; `--smoke` moves 16 MB, `--mb N` (default
 * 256), `--runs N` (default 3; the median run is reported).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

#include "bench_proc.h"

#define PACKET_BYTES 1024
#define MAX_RUNS 9

enum mode { MODE_UNIX, MODE_TCP, MODE_RELAY, N_MODES };
static const char *const k_mode_names[N_MODES] = {"unix socket", "tcp (direct)",
						  "tcp via relay"};

struct result {
	double record_s;
	double mb;
	double traced_cpu_per_gb, producer_cpu_per_gb, relay_cpu_per_gb;
	int ok;
};

/* A free loopback TCP port (bound, then released). */
static int free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

static int run(const char *dir, enum mode mode, unsigned total_mb, struct result *res)
{
	char unix_sock[256], cons_sock[256], relay_sock[256], tcp_sock[64], cfg_path[256],
		out_path[256], packets[32];
	char env_prod[512], env_cons[300], env_relay_prod[300], env_relay_up[100];
	struct child traced = {0}, producer = {0}, perfetto = {0}, relay = {0};
	unsigned long long n_packets = (unsigned long long)total_mb * 1024 * 1024 / PACKET_BYTES;
	char *traced_argv[] = {"out/traced", NULL};
	char *relay_argv[] = {"out/traced_relay", NULL};
	char *prod_argv[] = {"out/test_producer", "--name", "bench", "--ds", "bench.ds",
			     "--packets-per-thread", packets, "--packet-size", "1024",
			     "--emit-on-start", "--trigger-when-done", "bench-done",
			     /* A heavy producer's SMB, as traced_probes asks for. */
			     "--shm-kb", "2048", "--page-kb", "32", "--sock", NULL, NULL};
	char *perfetto_argv[] = {"out/perfetto", "--txt", "-c", cfg_path, "-o", out_path, NULL};
	char *traced_env[] = {env_prod, env_cons, NULL};
	char *relay_env[] = {env_relay_prod, env_relay_up, NULL};
	char *cons_env[] = {env_cons, NULL};
	struct stat st;
	double t0, gb;
	int ready = -1, port = free_port();
	FILE *f;

	memset(res, 0, sizeof(*res));
	if (port < 0)
		return -1;
	snprintf(unix_sock, sizeof(unix_sock), "%s/p.sock", dir);
	snprintf(relay_sock, sizeof(relay_sock), "%s/relay.sock", dir);
	snprintf(cons_sock, sizeof(cons_sock), "%s/c.sock", dir);
	snprintf(tcp_sock, sizeof(tcp_sock), "127.0.0.1:%d", port);
	snprintf(cfg_path, sizeof(cfg_path), "%s/cfg.pbtxt", dir);
	snprintf(out_path, sizeof(out_path), "%s/trace.pftrace", dir);
	snprintf(packets, sizeof(packets), "%llu", n_packets);
	snprintf(env_prod, sizeof(env_prod), "PERFETTO_PRODUCER_SOCK_NAME=%s,%s", tcp_sock,
		 unix_sock);
	snprintf(env_cons, sizeof(env_cons), "PERFETTO_CONSUMER_SOCK_NAME=%s", cons_sock);
	snprintf(env_relay_prod, sizeof(env_relay_prod), "PERFETTO_PRODUCER_SOCK_NAME=%s",
		 relay_sock);
	snprintf(env_relay_up, sizeof(env_relay_up), "PERFETTO_RELAY_SOCK_NAME=%s", tcp_sock);
	prod_argv[17] = mode == MODE_UNIX ? unix_sock : mode == MODE_TCP ? tcp_sock : relay_sock;

	f = fopen(cfg_path, "w");
	if (!f)
		return -errno;
	fprintf(f,
		"buffers { size_kb: %u fill_policy: DISCARD }\n"
		"trace_all_machines: true\n"
		"data_sources { config { name: \"bench.ds\" } }\n"
		"trigger_config {\n"
		"  trigger_mode: STOP_TRACING\n"
		"  trigger_timeout_ms: 300000\n"
		"  triggers { name: \"bench-done\" stop_delay_ms: 0 }\n"
		"}\n",
		total_mb * 1024 + total_mb * 1024 / 4 + 4096);
	fclose(f);

	if (spawn(traced_argv, traced_env, "TRACED_NOTIFY_FD", &ready, &traced) < 0 ||
	    wait_ready(ready) < 0)
		goto fail;
	if (mode == MODE_RELAY && (spawn(relay_argv, relay_env, "TRACED_RELAY_NOTIFY_FD", &ready,
					 &relay) < 0 ||
				   wait_ready(ready) < 0))
		goto fail;
	if (spawn(prod_argv, NULL, "TEST_PRODUCER_NOTIFY_FD", &ready, &producer) < 0 ||
	    wait_ready(ready) < 0)
		goto fail;
	t0 = now_s();
	if (spawn(perfetto_argv, cons_env, NULL, NULL, &perfetto) < 0)
		goto fail;
	res->record_s = -1;
	for (;;) {
		struct timespec ts = {0, 500000};
		pid_t w = wait4(perfetto.pid, &perfetto.status, WNOHANG, &perfetto.ru);

		if (res->record_s < 0 && stat(out_path, &st) == 0 && st.st_size > 0)
			res->record_s = now_s() - t0;
		if (w == perfetto.pid) {
			perfetto.pid = 0;
			break;
		}
		nanosleep(&ts, NULL);
	}
	if (res->record_s < 0)
		res->record_s = now_s() - t0;
	reap(&producer, SIGTERM);
	reap(&relay, SIGTERM);
	reap(&traced, SIGTERM);
	if (stat(out_path, &st) < 0)
		return -1;
	res->mb = (double)st.st_size / 1e6;
	gb = (double)st.st_size / 1e9;
	res->traced_cpu_per_gb = cpu_s(&traced.ru) / gb;
	res->producer_cpu_per_gb = cpu_s(&producer.ru) / gb;
	res->relay_cpu_per_gb = mode == MODE_RELAY ? cpu_s(&relay.ru) / gb : 0;
	/* Every packet must be in the file (framing adds a little). */
	res->ok = WIFEXITED(perfetto.status) && WEXITSTATUS(perfetto.status) == 0 &&
		  (double)st.st_size >= (double)n_packets * PACKET_BYTES * 0.99;
	unlink(out_path);
	unlink(cfg_path);
	return 0;
fail:
	fprintf(stderr, "relay_bench: a daemon did not start (%s)\n", k_mode_names[mode]);
	reap(&perfetto, SIGKILL);
	reap(&producer, SIGKILL);
	reap(&relay, SIGKILL);
	reap(&traced, SIGKILL);
	return -1;
}

static int cmp_result(const void *a, const void *b)
{
	const struct result *x = a, *y = b;
	double rx = x->mb / x->record_s, ry = y->mb / y->record_s;

	return rx < ry ? -1 : rx > ry;
}

int main(int argc, char **argv)
{
	unsigned total_mb = 256, runs = 3, i, k;
	char dir[] = "/tmp/pfc-relay-bench-XXXXXX";
	struct result res[N_MODES][MAX_RUNS], med[N_MODES];
	int failed = 0;

	for (i = 1; i < (unsigned)argc; i++) {
		if (strcmp(argv[i], "--smoke") == 0) {
			total_mb = 16;
			runs = 1;
		} else if (strcmp(argv[i], "--mb") == 0 && i + 1 < (unsigned)argc) {
			total_mb = (unsigned)strtoul(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--runs") == 0 && i + 1 < (unsigned)argc) {
			runs = (unsigned)strtoul(argv[++i], NULL, 10);
		}
	}
	if (runs < 1 || runs > MAX_RUNS || total_mb < 1) {
		fprintf(stderr, "usage: relay_bench [--smoke] [--mb N] [--runs 1..%d]\n", MAX_RUNS);
		return 2;
	}
	if (access("out/traced", X_OK) || access("out/traced_relay", X_OK) ||
	    access("out/test_producer", X_OK) || access("out/perfetto", X_OK)) {
		fprintf(stderr, "relay_bench: run from the repository root after `make`\n");
		return 1;
	}
	if (!mkdtemp(dir))
		return 1;
	signal(SIGPIPE, SIG_IGN);
	printf("relay_bench: %u MB of 1 KiB packets per run, one writer thread, %u run(s) per "
	       "path (interleaved), median shown\n", total_mb, runs);
	for (k = 0; k < runs; k++) {
		for (i = 0; i < N_MODES; i++) {
			if (run(dir, (enum mode)i, total_mb, &res[i][k]) < 0 || !res[i][k].ok) {
				printf("%s: FAILED (the trace was incomplete)\n", k_mode_names[i]);
				failed = 1;
			}
		}
	}
	for (i = 0; i < N_MODES && !failed; i++) {
		qsort(res[i], runs, sizeof(res[i][0]), cmp_result);
		med[i] = res[i][runs / 2];
		printf("%-14s %7.1f MB/s recording (%.1f MB in %.2f s; range %.1f-%.1f); CPU s/GB: "
		       "traced %.2f, producer %.2f", k_mode_names[i], med[i].mb / med[i].record_s,
		       med[i].mb, med[i].record_s, res[i][0].mb / res[i][0].record_s,
		       res[i][runs - 1].mb / res[i][runs - 1].record_s, med[i].traced_cpu_per_gb,
		       med[i].producer_cpu_per_gb);
		if (i == MODE_RELAY)
			printf(", relay %.2f", med[i].relay_cpu_per_gb);
		printf("\n");
	}
	if (!failed) {
		double ratio = (med[MODE_RELAY].mb / med[MODE_RELAY].record_s) /
			       (med[MODE_TCP].mb / med[MODE_TCP].record_s);

		printf("relay / direct tcp = %.2f (target >= 0.90: %s); relay CPU %.2f s per GB\n",
		       ratio, ratio >= 0.90 ? "met" : "MISSED", med[MODE_RELAY].relay_cpu_per_gb);
	}
	rmdir(dir);
	return failed;
}

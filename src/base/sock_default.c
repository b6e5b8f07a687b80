// SPDX-License-Identifier: Apache-2.0
/* sock_default.c - default producer/consumer socket names (see sock_default.h). */
#include "base/sock_default.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RUN_DIR "/run/perfetto/"

static const char *pick(const char *env, const char *run_path, const char *tmp_path)
{
	const char *v = getenv(env);

	if (v && *v)
		return v;
	return access(RUN_DIR, X_OK) == 0 ? run_path : tmp_path;
}

const char *sock_default_producer(void)
{
	return pick("PERFETTO_PRODUCER_SOCK_NAME", RUN_DIR "traced-producer.sock",
		    "/tmp/perfetto-producer");
}

const char *sock_default_consumer(void)
{
	return pick("PERFETTO_CONSUMER_SOCK_NAME", RUN_DIR "traced-consumer.sock",
		    "/tmp/perfetto-consumer");
}

const char *sock_default_producer_for_client(void)
{
	static __thread char first[256];
	const char *all = sock_default_producer();
	size_t n = strcspn(all, ",");

	if (all[n] == '\0' || n >= sizeof(first))
		return all;
	memcpy(first, all, n);
	first[n] = '\0';
	return first;
}

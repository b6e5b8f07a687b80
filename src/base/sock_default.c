// SPDX-License-Identifier: Apache-2.0
/* sock_default.c - default producer/consumer socket names (see sock_default.h). */
#include "base/sock_default.h"

#include <stdlib.h>
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

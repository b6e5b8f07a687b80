// SPDX-License-Identifier: Apache-2.0
/*
 * svc_clone.c - CloneSession: a read-only snapshot of a running session's
 * buffers, owned by the consumer that asked for it, while the original
 * keeps recording (`perfetto --clone ID` / `--clone-by-name NAME`, and the
 * CLI's CLONE_SNAPSHOT snapshots). The caller has already flushed the
 * original. Copying a buffer is one memcpy of its used part, so a clone
 * costs about the buffer's size in memory bandwidth.
 */
#include "traced/svc_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "base/clock.h"
#include "base/log.h"

int svc_session_clone(struct svc *svc, struct svc_session *src, struct ipc_host *host,
		      uint64_t client_id, uid_t uid, const struct svc_trigger_info *trigger,
		      struct svc_session **out)
{
	struct svc_session *s;
	size_t i;

	s = svc_session_new(svc, host, client_id, uid, SESSION_STOPPED);
	if (!s)
		return -ENOMEM;
	s->is_clone = true;
	s->start_realtime_ns = src->start_realtime_ns;
	s->config_len = src->config_len;
	s->config_bytes = malloc(src->config_len ? src->config_len : 1);
	s->buffers = calloc(src->n_buffers + 1, sizeof(*s->buffers));
	if (!s->config_bytes || !s->buffers)
		goto fail;
	memcpy(s->config_bytes, src->config_bytes, src->config_len);
	s->config = perfetto__protos__trace_config__unpack(NULL, s->config_len, s->config_bytes);
	if (!s->config)
		goto fail;
	if (getrandom(&s->uuid_msb, sizeof(s->uuid_msb), 0) != sizeof(s->uuid_msb))
		s->uuid_msb = clock_realtime_ns();
	s->uuid_lsb = src->uuid_lsb;
	for (i = 0; i < src->n_buffers; i++) {
		if (tb_clone(src->buffers[i].tb, &s->buffers[i].tb) < 0)
			goto fail;
		s->buffers[i].global_id = svc->next_buffer_id++;
		if (svc->next_buffer_id > 0xffff)
			svc->next_buffer_id = 1;
		s->n_buffers++;
		hmap_put(&svc->buffers_by_id, s->buffers[i].global_id, s->id);
	}
	if (trigger) {
		s->clone_trigger = *trigger;
		s->clone_trigger.name = strdup(trigger->name ? trigger->name : "");
		s->clone_trigger.producer_name =
			strdup(trigger->producer_name ? trigger->producer_name : "");
		if (!s->clone_trigger.name || !s->clone_trigger.producer_name)
			goto fail;
		s->has_clone_trigger = true;
	}
	/*
	 * The triggers received so far move to the clone, as in Perfetto: a
	 * CLONE_SNAPSHOT session snapshotted for hours would otherwise repeat
	 * every old trigger in each snapshot.
	 */
	for (i = 0; i < src->n_fired_triggers; i++) {
		s->fired_triggers[i] = src->fired_triggers[i];
		s->fired_trigger_producers[i] = src->fired_trigger_producers[i];
		s->fired_trigger_uids[i] = src->fired_trigger_uids[i];
		s->fired_trigger_ts[i] = src->fired_trigger_ts[i];
	}
	s->n_fired_triggers = src->n_fired_triggers;
	src->n_fired_triggers = 0;
	src->n_fired_triggers_emitted = 0;
	s->next = svc->sessions;
	svc->sessions = s;
	svc->n_sessions++;
	svc_relays_on_clone(svc, s);
	LOG_I("session %llu cloned into session %llu", (unsigned long long)src->id,
	      (unsigned long long)s->id);
	*out = s;
	return 0;
fail:
	for (i = 0; i < s->n_buffers; i++) {
		hmap_del(&svc->buffers_by_id, s->buffers[i].global_id, NULL);
		tb_destroy(s->buffers[i].tb);
	}
	free(s->buffers);
	svc_trigger_info_fini(&s->clone_trigger);
	if (s->config)
		perfetto__protos__trace_config__free_unpacked(s->config, NULL);
	free(s->config_bytes);
	buf_fini(&s->pending_service_packets);
	free(s);
	return -ENOMEM;
}

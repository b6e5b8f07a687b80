// SPDX-License-Identifier: Apache-2.0
/*
 * sdk_track.c - named tracks (slices, async slices, counters) and thread
 * names. A track is only a uuid and a name here: each sequence describes
 * it (a TrackDescriptor under the process's track) before its first event
 * there, again after every reset (sdk_event.c).
 */
#include "sdk/sdk_int.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"

PFC_API int pfc_track_create(const char *name, enum pfc_track_kind kind, uint64_t uuid,
			     struct pfc_track **out)
{
	struct pfc_track *tr;

	if (!name || !*name || !out ||
	    (kind != PFC_TRACK_SLICES && kind != PFC_TRACK_ASYNC && kind != PFC_TRACK_COUNTER))
		return -EINVAL;
	tr = calloc(1, sizeof(*tr));
	if (!tr || !(tr->name = strdup(name))) {
		free(tr);
		return -ENOMEM;
	}
	tr->kind = kind;
	/* Derived: the name and kind in this process (the process uuid is
	 * random per run, so two processes never share one). */
	if (!uuid) {
		uuid = fnv1a64_update(fnv1a64(name, strlen(name)), &kind, sizeof(kind));
		uuid = hash_mix64(uuid ^ sdk_process_uuid());
	}
	tr->uuid = uuid ? uuid : 1;
	*out = tr;
	return 0;
}

PFC_API void pfc_track_destroy(struct pfc_track *track)
{
	if (!track)
		return;
	free(track->name);
	free(track);
}

PFC_API uint64_t pfc_track_uuid(const struct pfc_track *track)
{
	return track ? track->uuid : 0;
}

PFC_API int pfc_thread_set_name(const char *name)
{
	struct sdk_thread *t;
	unsigned i;

	if (!name)
		return -EINVAL;
	if (!sdk_g.initialized)
		return -EPERM;
	t = sdk_thread_get();
	if (!t)
		return -ENOMEM;
	/* Writers may be freed by a steal: only touched while busy. */
	while (!sdk_enter(t))
		sched_yield();
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->desc_version++;
	for (i = 0; i < SDK_MAX_INSTANCES; i++) {
		if (t->w[i])
			t->w[i]->snapshot_due_ns = 0; /* off the fast path: describe again */
	}
	sdk_leave(t, t->last_event_ns);
	return 0;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * wakesource.c - wakeup_source_activate/deactivate ftrace events: each
 * wakeup source gets a "Wakelock(<name>)" slice from its first activation
 * to the deactivation that balances the activations. Called by ftrace.c
 * in time order; one hash lookup per event.
 */
#include <stdio.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/ftrace/ftrace_int.h"

/* Perfetto builds the name in a 32-byte buffer, so long names are cut. */
#define WAKELOCK_NAME_BYTES 32

static int64_t wakelock_track(struct tp_import *imp, uint32_t machine, uint32_t name,
			      uint32_t *out_title)
{
	const char *s = tp_str_get(&imp->db->strings, name);
	char title[WAKELOCK_NAME_BYTES];
	struct tp_dim dim = {"wakelock_event", TP_DIM_STR, name};

	snprintf(title, sizeof(title), "Wakelock(%s)", s ? s : "");
	*out_title = tp_str_intern_c(&imp->db->strings, title);
	return tp_track_dims(imp, "wakesource_wakelock", *out_title, false, machine, &dim, 1, 0);
}

void tp_wakesource(struct tp_import *imp, const struct tp_event *ev, bool activate,
		   const uint8_t *data, size_t len)
{
	struct pz_field f[3];
	uint32_t name, title;
	uint64_t count = 0;
	int64_t track;

	if (pz_decode_table(data, len, f, 3) != PZ_OK)
		return;
	name = f[PB_WAKEUP_SOURCE_ACTIVATE_FTRACE_EVENT__NAME].wire_type == PZ_WIRE_LEN
		       ? tp_str_intern(&imp->db->strings,
				       (const char *)f[PB_WAKEUP_SOURCE_ACTIVATE_FTRACE_EVENT__NAME].data,
				       f[PB_WAKEUP_SOURCE_ACTIVATE_FTRACE_EVENT__NAME].size)
		       : tp_str_intern(&imp->db->strings, "", 0);
	hmap_get(&imp->ftrace->wakelocks, name, &count);
	if (activate) {
		hmap_put(&imp->ftrace->wakelocks, name, count + 1);
		/* A source already active keeps its one slice. */
		if (count > 0)
			return;
		track = wakelock_track(imp, ev->machine, name, &title);
		tp_slice_begin(imp, ev->ts, track, 0, title);
		return;
	}
	hmap_put(&imp->ftrace->wakelocks, name, count > 0 ? count - 1 : 0);
	if (count != 1)
		return;
	track = wakelock_track(imp, ev->machine, name, &title);
	if (tp_slice_end(imp, ev->ts, track, 0, 0) < 0)
		tp_stat_add(imp, "misplaced_end_event", -1, 0, 1);
}

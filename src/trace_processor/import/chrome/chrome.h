/* SPDX-License-Identifier: Apache-2.0 */
/*
 * chrome.h - the Chrome importer: ChromeMetadataPackets, parsed in
 * trace time order; what the read layer calls. (Chrome's track events
 * are the TrackEvent importer's.)
 */
#ifndef PFC_TRACE_PROCESSOR_IMPORT_CHROME_CHROME_H
#define PFC_TRACE_PROCESSOR_IMPORT_CHROME_CHROME_H

#include <stddef.h>
#include <stdint.h>

struct tp_event;
struct tp_import;

/* The Chrome importer's state; 0 or -ENOMEM. */
int tp_chrome_init(struct tp_import *imp);
void tp_chrome_fini(struct tp_import *imp);
/* ChromeMetadataPacket: "cr-<letter>-*" metadata rows (chrome_metadata.c). */
void tp_chrome_metadata(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
			size_t len);

#endif

// SPDX-License-Identifier: Apache-2.0
/*
 * chrome_metadata.c - ChromeMetadataPacket into metadata rows named
 * "cr-<letter>-<key>", one letter per packet ('a' for the first Chrome
 * instance, 'b' for the next, ...), plus the background tracing scenario.
 * Called by the read layer for each packet, in trace time order.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/chrome/chrome.h"
#include "trace_processor/import/common/common.h"

struct tp_chrome {
	uint32_t n_metadata;          /* ChromeMetadataPackets seen */
};

int tp_chrome_init(struct tp_import *imp)
{
	imp->chrome = calloc(1, sizeof(*imp->chrome));
	return imp->chrome ? 0 : -ENOMEM;
}

void tp_chrome_fini(struct tp_import *imp)
{
	free(imp->chrome);
	imp->chrome = NULL;
}

/* Bytes as standard base64 with padding into @out (@cap >= 4 * ceil(len / 3) + 1). */
static size_t base64(const uint8_t *in, size_t len, char *out, size_t cap)
{
	static const char digits[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i, n = 0;

	for (i = 0; i < len && n + 5 <= cap; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;

		if (i + 1 < len)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < len)
			v |= in[i + 2];
		out[n++] = digits[(v >> 18) & 63];
		out[n++] = digits[(v >> 12) & 63];
		out[n++] = i + 1 < len ? digits[(v >> 6) & 63] : '=';
		out[n++] = i + 2 < len ? digits[v & 63] : '=';
	}
	out[n] = '\0';
	return n;
}

static void row_str(struct tp_import *imp, const char *prefix, const char *key,
		    const struct pz_field *f, uint32_t machine)
{
	char name[64];

	if (!f->id || f->wire_type != PZ_WIRE_LEN)
		return;
	snprintf(name, sizeof(name), "%s%s", prefix, key);
	tp_metadata_append(imp, name, machine, 0, (const char *)f->data, f->size);
}

static void row_int(struct tp_import *imp, const char *prefix, const char *key, int64_t v,
		    uint32_t machine)
{
	char name[64];

	snprintf(name, sizeof(name), "%s%s", prefix, key);
	tp_metadata_append(imp, name, machine, v, NULL, 0);
}

/* "{ name: N, group: G } " per trial, a line break before every third, fifth, ... one. */
static void field_trials(struct tp_import *imp, const char *prefix, const uint8_t *data,
			 size_t len, uint32_t machine)
{
	char buf[4096], name[64];
	size_t n = 0, k = 0;
	struct pz_reader r;
	struct pz_field f;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0 && n + 64 < sizeof(buf)) {
		struct pz_field h[3];

		if (f.id != PB_CHROME_METADATA_PACKET__FIELD_TRIAL_HASHES ||
		    f.wire_type != PZ_WIRE_LEN || pz_decode_table(f.data, f.size, h, 3) != PZ_OK)
			continue;
		if (k >= 2 && k % 2 == 0)
			buf[n++] = '\n';
		k++;
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "{ name: %u, group: %u } ",
				      (uint32_t)h[PB_CHROME_METADATA_PACKET_FINCH_HASH__NAME].value,
				      (uint32_t)h[PB_CHROME_METADATA_PACKET_FINCH_HASH__GROUP].value);
	}
	if (!k)
		return;
	snprintf(name, sizeof(name), "%sfield_trial_hashes", prefix);
	tp_metadata_append(imp, name, machine, 0, buf, n);
}

/* The background tracing metadata: as base64, and its scenario hash. */
static void background(struct tp_import *imp, const struct pz_field *f, uint32_t machine)
{
	size_t cap = 4 * (f->size / 3 + 1) + 1;
	struct pz_field m[4];
	char *b64;

	if (f->wire_type != PZ_WIRE_LEN || !(b64 = malloc(cap)))
		return;
	tp_metadata_append(imp, "cr-background_tracing_metadata", machine, 0, b64,
			   base64(f->data, f->size, b64, cap));
	free(b64);
	if (pz_decode_table(f->data, f->size, m, 4) == PZ_OK &&
	    m[PB_BACKGROUND_TRACING_METADATA__SCENARIO_NAME_HASH].id)
		tp_metadata_append(imp, "cr-scenario_name_hash", machine,
				   (uint32_t)m[PB_BACKGROUND_TRACING_METADATA__SCENARIO_NAME_HASH].value,
				   NULL, 0);
}

void tp_chrome_metadata(struct tp_import *imp, const struct tp_event *ev, const uint8_t *data,
			size_t len)
{
	struct pz_field p[9];
	char prefix[8];

	if (pz_decode_table(data, len, p, 9) != PZ_OK) {
		tp_stat_add(imp, "packet_malformed", -1, ev->machine, 1);
		return;
	}
	snprintf(prefix, sizeof(prefix), "cr-%c-", 'a' + (int)(imp->chrome->n_metadata++ % 26));
	if (p[PB_CHROME_METADATA_PACKET__CHROME_VERSION_CODE].id)
		row_int(imp, prefix, "playstore_version_code",
			(int32_t)p[PB_CHROME_METADATA_PACKET__CHROME_VERSION_CODE].value, ev->machine);
	row_str(imp, prefix, "product-version", &p[PB_CHROME_METADATA_PACKET__APP_VERSION],
		ev->machine);
	row_str(imp, prefix, "os-name", &p[PB_CHROME_METADATA_PACKET__OS_NAME], ev->machine);
	row_str(imp, prefix, "package-name", &p[PB_CHROME_METADATA_PACKET__APP_PACKAGE_NAME],
		ev->machine);
	if (p[PB_CHROME_METADATA_PACKET__CHANNEL].id)
		row_int(imp, prefix, "channel",
			(uint32_t)p[PB_CHROME_METADATA_PACKET__CHANNEL].value, ev->machine);
	row_str(imp, prefix, "enabled_categories",
		&p[PB_CHROME_METADATA_PACKET__ENABLED_CATEGORIES], ev->machine);
	field_trials(imp, prefix, data, len, ev->machine);
	if (p[PB_CHROME_METADATA_PACKET__BACKGROUND_TRACING_METADATA].id)
		background(imp, &p[PB_CHROME_METADATA_PACKET__BACKGROUND_TRACING_METADATA],
			   ev->machine);
}

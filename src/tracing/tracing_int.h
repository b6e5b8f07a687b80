/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracing_int.h - what the trace writer and the arbiter share inside the
 * tracing module: the writer's fixed pool of patch slots and the arbiter
 * entry points used when a writer changes chunks. Not for other modules.
 */
#ifndef PFC_TRACING_TRACING_INT_H
#define PFC_TRACING_TRACING_INT_H

#include <errno.h>

#include "tracing/tracing.h"

/* Open nested messages that may span chunks at once, per writer. */
#define TW_MAX_PATCH_SLOTS 64u

/*
 * A size field of a nested message whose bytes were already handed to the
 * service. The message writes its size into @data when it ends; data[0] is
 * then non-zero (a redundant varint always sets 0x80 in its first byte).
 */
struct tw_patch_slot {
	uint32_t chunk_id;
	uint16_t offset; /* from the chunk payload start */
	bool in_use;
	uint8_t data[PZ_SIZE_FIELD_BYTES];
};

struct tw_patch_list {
	struct tw_patch_slot slots[TW_MAX_PATCH_SLOTS];
	unsigned n_in_use;
	unsigned n_ready_hint; /* set when a slot may have become ready */
};

static inline bool tw_patch_slot_ready(const struct tw_patch_slot *s)
{
	return s->in_use && s->data[0] != 0;
}

/* ------------------------------------------------ raw IPC requests ---- */

/* Largest protobuf-c request struct a raw message can stand in for. */
#define PB_RAW_MSG_MAX_STRUCT_BYTES 512u

/*
 * A message of some request type whose serialized form is exactly a given
 * byte string. Requests are serialized on writer threads (or built once, like
 * a data source registration) and handed to ipc_client_invoke() later on the
 * loop thread; this avoids decoding them again just to re-encode them.
 * protobuf-c writes unknown fields verbatim after the known ones (there are
 * none here), so the bytes after the first tag ride in one unknown field.
 */
struct pb_raw_msg {
	union {
		ProtobufCMessage base;
		uint64_t storage[PB_RAW_MSG_MAX_STRUCT_BYTES / 8];
	} u;
	ProtobufCMessageUnknownField field;
};

/*
 * Makes @m pack as @data (borrowed; must outlive @m). Return: 0, -EINVAL if
 * the struct is too big or @data does not start with a valid tag.
 */
static inline int pb_raw_msg_init(struct pb_raw_msg *m, const ProtobufCMessageDescriptor *desc,
				  const uint8_t *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t tag = 0;

	if (desc->sizeof_message > sizeof(m->u))
		return -EINVAL;
	desc->message_init(&m->u.base);
	if (len == 0)
		return 0;
	if (pz_varint_decode(&p, data + len, &tag) != PZ_OK || (tag >> 3) == 0 ||
	    (tag >> 3) > PZ_MAX_FIELD_ID || (tag & 7) == 3 || (tag & 7) == 4 ||
	    (tag & 7) > 5)
		return -EINVAL;
	m->field.tag = (uint32_t)(tag >> 3);
	m->field.wire_type = (ProtobufCWireType)(tag & 7);
	m->field.len = len - (size_t)(p - data);
	m->field.data = (uint8_t *)p;
	m->u.base.n_unknown_fields = 1;
	m->u.base.unknown_fields = &m->field;
	return 0;
}

#endif

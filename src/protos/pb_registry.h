/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pb_registry.h - every protobuf-c descriptor generated from protos/.
 * The table itself is generated (tools/gen_registry.sh); pbtxt uses it to
 * find messages by name and tools/gen_field_ids.c to emit field constants.
 */
#ifndef PFC_PROTOS_PB_REGISTRY_H
#define PFC_PROTOS_PB_REGISTRY_H

#include <protobuf-c/protobuf-c.h>

/* NULL-terminated, sorted by C symbol name. */
extern const ProtobufCMessageDescriptor *const pb_registry_messages[];
extern const ProtobufCEnumDescriptor *const pb_registry_enums[];

#endif

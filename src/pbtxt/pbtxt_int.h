/* SPDX-License-Identifier: Apache-2.0 */
/* pbtxt_int.h - helpers shared by the text parser and printer. */
#ifndef PFC_PBTXT_PBTXT_INT_H
#define PFC_PBTXT_PBTXT_INT_H

#include "pbtxt/pbtxt.h"

/* The closest field name to @name if it is a plausible typo, else NULL. */
const char *pbtxt_suggest_field(const ProtobufCMessageDescriptor *desc, const char *name,
				size_t len);
/* The closest enum value name to @name if it is a plausible typo, else NULL. */
const char *pbtxt_suggest_enum(const ProtobufCEnumDescriptor *desc, const char *name, size_t len);
/* Package-relative name of an enum, e.g. "BufferConfig.FillPolicy". */
const char *pbtxt_enum_name(const ProtobufCEnumDescriptor *desc);

#endif

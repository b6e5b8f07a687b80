/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pbtxt.h - protobuf text format <-> binary for any message in protos/,
 * driven by the protobuf-c descriptors. Used by `perfetto --txt`, the
 * pfc_pbtxt tool and the tests. Not a hot path: configs are small.
 */
#ifndef PFC_PBTXT_PBTXT_H
#define PFC_PBTXT_PBTXT_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "base/buf.h"

/* Nesting deeper than this is rejected (as protoc does at 100). */
#define PBTXT_MAX_DEPTH 100
/* Largest encoded output pbtxt_parse() produces. */
#define PBTXT_MAX_OUTPUT_BYTES (64u << 20)

struct pbtxt_error {
	int line;           /* 1-based; 0 when the error has no position */
	int col;            /* 1-based */
	char msg[512];      /* the whole message, position included */
};

/*
 * pbtxt_find_message() - Look a message up by full ("perfetto.protos.TraceConfig"),
 * package-relative ("TraceConfig.BufferConfig") or unique short name.
 * Return: the descriptor (static storage) or NULL.
 */
const ProtobufCMessageDescriptor *pbtxt_find_message(const char *name);

/* The package-relative name of @desc, e.g. "TraceConfig.BufferConfig". */
const char *pbtxt_message_name(const ProtobufCMessageDescriptor *desc);

/*
 * pbtxt_parse() - Encode text-format @text as a binary @desc message.
 * @out: the encoding is appended here.
 * @err: filled on failure with "what, in which message/field, at line:col"
 *       and a suggestion for misspelled names.
 * Return: 0, -EINVAL for bad text, -ENOMEM, or -EFBIG past PBTXT_MAX_OUTPUT_BYTES.
 * Context: allocates; any thread.
 */
int pbtxt_parse(const ProtobufCMessageDescriptor *desc, const char *text, size_t len,
		struct buf *out, struct pbtxt_error *err);

/*
 * pbtxt_print() - Print binary @data as text format of @desc (two-space
 * indent). Unknown fields are printed by number.
 * Return: 0, -EBADMSG if the bytes are not a valid protobuf message (err
 * says where), or -ENOMEM.
 */
int pbtxt_print(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len,
		struct buf *out, struct pbtxt_error *err);

/* Case-insensitive edit distance behind "did you mean" (exposed for tests). */
unsigned pbtxt_edit_distance(const char *a, size_t alen, const char *b, size_t blen);

#endif

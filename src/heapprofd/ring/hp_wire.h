/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hp_wire.h - control messages between a heapprofd client and heapprofd
 * on a SOCK_SEQPACKET socket (one message per send, so client threads
 * never interleave): a type, then fields of (id, length, bytes). Unknown
 * fields are skipped, so either side may add some. Encoding and decoding
 * use caller buffers only (the client runs inside malloc).
 *
 *   +-----------+------------------------------------------------+
 *   | type u32  | id u16 | len u16 | value (len bytes) | ...      |
 *   +-----------+------------------------------------------------+
 *   integers are little-endian u64 (len 8); strings are bytes.
 */
#ifndef PFC_HEAPPROFD_RING_HP_WIRE_H
#define PFC_HEAPPROFD_RING_HP_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HP_WIRE_MAX_BYTES 4096u
#define HP_HEAP_NAME_MAX 64u /* HEAPPROFD_HEAP_NAME_SZ */
#define HP_MAX_HEAPS 256u    /* heap ids 1..255; 0 is no heap */

enum hp_msg_type {
	/* client -> daemon */
	HP_MSG_HELLO = 1, /* F_PID, F_MAIN_TID */
	HP_MSG_HEAP = 2,  /* F_HEAP_ID, F_HEAP_NAME: a heap the client has */
	/* daemon -> client */
	HP_MSG_START = 16, /* F_RING_BYTES, F_BLOCK, F_TIMEOUT_US; fds: ring, wake */
	HP_MSG_HEAP_INTERVAL = 17, /* F_HEAP_ID, F_INTERVAL (0: off) */
	HP_MSG_STOP = 18,
	HP_MSG_NO_SESSION = 19, /* the daemon serves no session for this client now */
};

enum hp_field {
	HP_F_PID = 1,
	HP_F_MAIN_TID = 2,
	HP_F_HEAP_ID = 3,
	HP_F_HEAP_NAME = 4,
	HP_F_RING_BYTES = 5,
	HP_F_BLOCK = 6,
	HP_F_TIMEOUT_US = 7,
	HP_F_INTERVAL = 8,
	HP_F_SESSION = 9,
};

struct hp_wire_out {
	uint8_t *buf;
	size_t len, cap;
	bool overflow;
};

void hp_wire_begin(struct hp_wire_out *w, uint8_t *buf, size_t cap, uint32_t type);
void hp_wire_u64(struct hp_wire_out *w, uint16_t id, uint64_t v);
void hp_wire_str(struct hp_wire_out *w, uint16_t id, const char *s, size_t len);

struct hp_wire_field {
	uint16_t id;
	uint16_t len;
	const uint8_t *val;
};

struct hp_wire_in {
	const uint8_t *p, *end;
};

/* Return: 0 and the message type, or -EBADMSG for fewer than 4 bytes. */
int hp_wire_parse(const uint8_t *buf, size_t len, uint32_t *out_type, struct hp_wire_in *out);
/* Return: 1 and the next field, 0 at the end, -EBADMSG if one runs past it. */
int hp_wire_next(struct hp_wire_in *in, struct hp_wire_field *out);
/* A field's integer (0 unless it is 8 bytes). */
uint64_t hp_wire_field_u64(const struct hp_wire_field *f);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ftrace_format.h - parsers for the tracefs text that describes binary
 * ftrace data: events/<group>/<name>/format (one event's record layout),
 * events/header_page (the ring buffer page header) and events/header_event
 * (the record header). Called once per event at session setup by the
 * ftrace data source; the results feed ftrace_page.h and ftrace_translate.h.
 * Pure parsing over (ptr, len) text: no I/O, the caller reads the files.
 */
#ifndef PFC_PROBES_FTRACE_FORMAT_H
#define PFC_PROBES_FTRACE_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest field or event name we keep (longer ones are rejected). */
#define FTRACE_NAME_MAX 64
/* Longest C type of a field ("unsigned long", "__data_loc char[]", ...). */
#define FTRACE_TYPE_MAX 96
/* Fields per event, common ones included (kernel events have < 40). */
#define FTRACE_MAX_FIELDS 128
/* Largest format file we accept. */
#define FTRACE_FORMAT_MAX_BYTES (64 * 1024)

/* How a field's bytes are laid out in the record. */
enum ftrace_field_kind {
	FTRACE_FIELD_INT,        /* integer (or bool/enum) of size 1, 2, 4 or 8 */
	FTRACE_FIELD_CHAR_ARRAY, /* char name[N]: a string, NUL-terminated unless full */
	FTRACE_FIELD_CSTRING,    /* char name[] / char name with size 0: string to the record end */
	FTRACE_FIELD_DATA_LOC,   /* __data_loc T[] name: u32 = len << 16 | offset from record start */
	FTRACE_FIELD_REL_LOC,    /* __rel_loc T[] name: like DATA_LOC, offset from the field's end */
	FTRACE_FIELD_ARRAY,      /* T name[N], T not char: N elements of size/N bytes */
	FTRACE_FIELD_POINTER,    /* T *name: an address of 4 or 8 bytes */
	FTRACE_FIELD_OTHER,      /* anything else (structs, odd sizes): raw bytes */
};

struct ftrace_field {
	char name[FTRACE_NAME_MAX];
	char type[FTRACE_TYPE_MAX]; /* the declaration minus the name and [N] */
	uint16_t offset;            /* from the start of the record (common_type) */
	uint16_t size;              /* bytes in the record; 4 for __data_loc */
	uint16_t elem_size;         /* ARRAY: bytes per element; DATA/REL_LOC: 1 for char */
	uint16_t n_elems;           /* ARRAY / CHAR_ARRAY: N, or 0 if not a number */
	bool is_signed;
	bool is_char;               /* element type is char (a string) */
	enum ftrace_field_kind kind;
};

/* One event's layout, as parsed from its format file. */
struct ftrace_format {
	char name[FTRACE_NAME_MAX];
	uint32_t id;                /* the record's common_type */
	uint32_t n_common;          /* fields[0 .. n_common) are the common_* block */
	uint32_t n_fields;          /* all fields, common ones included */
	uint32_t min_size;          /* end of the last fixed-size field */
	struct ftrace_field fields[FTRACE_MAX_FIELDS];
};

/*
 * ftrace_format_parse() - Parse the text of an events/.../format file.
 * @text: the file's bytes (borrowed, need not be NUL-terminated). @len: bytes.
 * @out: filled on success (caller storage; about 22 KiB, not for stacks of
 * small threads).
 *
 * The common fields are the block before the first blank line after
 * "format:"; a field whose name starts with "common_" also counts as common
 * when the file has no blank line.
 *
 * Return: 0; -EINVAL if "name:", "ID:" or a field line is malformed or a
 * field lies outside 64 KiB; -ENAMETOOLONG for an over-long name or type;
 * -E2BIG for more than FTRACE_MAX_FIELDS fields or FTRACE_FORMAT_MAX_BYTES.
 * Context: any thread; never allocates.
 */
int ftrace_format_parse(const char *text, size_t len, struct ftrace_format *out);

/* Return: the field called @name (common fields included), or NULL. */
const struct ftrace_field *ftrace_format_field(const struct ftrace_format *fmt, const char *name);

/* Ring buffer page and record header layout (header_page + header_event). */
struct ftrace_page_layout {
	uint16_t ts_offset;      /* u64 timestamp of the page's first record */
	uint16_t commit_offset;  /* local_t commit: data bytes plus loss flags */
	uint16_t commit_size;    /* 4 on 32-bit kernels, 8 on 64-bit ones */
	uint16_t data_offset;    /* first record */
	uint32_t data_size;      /* bytes of data area in a full page */
};

/* Fills the layout of a 64-bit kernel with 4 KiB pages. */
void ftrace_page_layout_default(struct ftrace_page_layout *out);

/*
 * ftrace_header_page_parse() - Parse events/header_page into @out.
 * Fields other than timestamp, commit, overwrite and data are ignored.
 * Return: 0, or -EINVAL if timestamp (8 bytes), commit (4 or 8 bytes) or
 * data is missing or inconsistent (data must follow the commit field).
 * Context: any thread; never allocates.
 */
int ftrace_header_page_parse(const char *text, size_t len, struct ftrace_page_layout *out);

/*
 * ftrace_header_event_parse() - Check events/header_event against the record
 * header this decoder implements (type_len 5 bits, time_delta 27 bits, a
 * 32-bit array word, padding 29, time_extend 30, time_stamp 31, data
 * type_len up to 28).
 * Return: 0 if it matches; -EINVAL if unparsable; -EPROTONOSUPPORT if it
 * describes a different header.
 * Context: any thread; never allocates.
 */
int ftrace_header_event_parse(const char *text, size_t len);

#endif

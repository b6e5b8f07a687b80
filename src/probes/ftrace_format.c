// SPDX-License-Identifier: Apache-2.0
/*
 * ftrace_format.c - parsers for tracefs event format files, header_page and
 * header_event. Runs at session setup (a few hundred small files at most),
 * so clarity wins over speed; every number goes through the range-checking
 * parser and every name is length-checked, as the text comes from the kernel
 * but tests feed it arbitrary bytes.
 */
#include "probes/ftrace_format.h"

#include <errno.h>
#include <string.h>

#include "base/buf.h"

/* Next line of @*rest (without its '\n'); false at the end. */
static bool next_line(struct strview *rest, struct strview *out_line)
{
	if (rest->len == 0)
		return false;
	sv_split(*rest, '\n', out_line, rest);
	return true;
}

static bool is_ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* "key:value" with optional blanks; returns the trimmed value. */
static bool take_keyed(struct strview part, const char *key, struct strview *out_value)
{
	struct strview head, value;

	part = sv_trim(part);
	if (!sv_split(part, ':', &head, &value))
		return false;
	if (!sv_eq_cstr(sv_trim(head), key))
		return false;
	*out_value = sv_trim(value);
	return true;
}

/* Bytes of a scalar C type used as an array element, or 0 if unknown. */
static uint16_t scalar_size(struct strview t)
{
	static const struct {
		const char *name;
		uint16_t size;
	} k_types[] = {
		{"char", 1}, {"unsigned char", 1}, {"signed char", 1}, {"u8", 1}, {"s8", 1},
		{"__u8", 1}, {"__s8", 1}, {"bool", 1}, {"short", 2}, {"unsigned short", 2},
		{"u16", 2}, {"s16", 2}, {"__u16", 2}, {"__s16", 2}, {"int", 4},
		{"unsigned int", 4}, {"unsigned", 4}, {"u32", 4}, {"s32", 4}, {"__u32", 4},
		{"__s32", 4}, {"pid_t", 4}, {"long", 8}, {"unsigned long", 8}, {"u64", 8},
		{"s64", 8}, {"__u64", 8}, {"__s64", 8}, {"long long", 8},
		{"unsigned long long", 8},
	};
	size_t i;

	if (sv_starts_with(t, "const "))
		t = sv_trim(sv_make(t.ptr + 6, t.len - 6));
	for (i = 0; i < sizeof(k_types) / sizeof(k_types[0]); i++)
		if (sv_eq_cstr(t, k_types[i].name))
			return k_types[i].size;
	return 0;
}

static bool is_char_type(struct strview t)
{
	if (sv_starts_with(t, "const "))
		t = sv_trim(sv_make(t.ptr + 6, t.len - 6));
	return sv_eq_cstr(t, "char");
}

/*
 * Splits a declaration such as "char prev_comm[16]", "__data_loc char[] name",
 * "const char * fmt" or "unsigned long args[6]" into @f's name, type and kind.
 * @f->size and @f->is_signed are already set.
 */
static int parse_decl(struct strview decl, struct ftrace_field *f)
{
	struct strview base = sv_trim(decl), dims = {NULL, 0}, type, name, elem;
	bool has_dims = false;
	size_t end, start;
	uint64_t n = 0;
	int err;

	if (base.len && base.ptr[base.len - 1] == ']') {
		const char *open = memrchr(base.ptr, '[', base.len);

		if (!open)
			return -EINVAL;
		dims = sv_trim(sv_make(open + 1, (size_t)(base.ptr + base.len - 1 - (open + 1))));
		base = sv_trim(sv_make(base.ptr, (size_t)(open - base.ptr)));
		has_dims = true;
	}
	end = base.len;
	start = end;
	while (start > 0 && is_ident_char(base.ptr[start - 1]))
		start--;
	if (start == end)
		return -EINVAL;
	name = sv_make(base.ptr + start, end - start);
	type = sv_trim(sv_make(base.ptr, start));
	if (type.len == 0)
		return -EINVAL;
	err = sv_to_cstr(name, f->name, sizeof(f->name));
	if (err)
		return err;
	err = sv_to_cstr(type, f->type, sizeof(f->type));
	if (err)
		return err;

	f->elem_size = 0;
	f->n_elems = 0;
	f->is_char = false;
	if (sv_starts_with(type, "__data_loc") || sv_starts_with(type, "__rel_loc")) {
		bool is_rel = sv_starts_with(type, "__rel_loc");
		size_t skip = is_rel ? strlen("__rel_loc") : strlen("__data_loc");

		/* "__data_loc char[]": the element type sits between the tag and "[]". */
		elem = sv_trim(sv_make(type.ptr + skip, type.len - skip));
		if (sv_ends_with(elem, "[]"))
			elem = sv_trim(sv_make(elem.ptr, elem.len - 2));
		f->kind = is_rel ? FTRACE_FIELD_REL_LOC : FTRACE_FIELD_DATA_LOC;
		f->is_char = is_char_type(elem);
		f->elem_size = f->is_char ? 1 : scalar_size(elem);
		if (f->size != 4)
			return -EINVAL;
		return 0;
	}
	if (has_dims) {
		if (dims.len && sv_parse_u64(dims, UINT16_MAX, &n) == 0)
			f->n_elems = (uint16_t)n;
		if (is_char_type(type)) {
			f->is_char = true;
			f->elem_size = 1;
			f->kind = f->size == 0 ? FTRACE_FIELD_CSTRING : FTRACE_FIELD_CHAR_ARRAY;
			return 0;
		}
		f->kind = FTRACE_FIELD_ARRAY;
		if (f->n_elems && f->size % f->n_elems == 0)
			f->elem_size = (uint16_t)(f->size / f->n_elems);
		else
			f->elem_size = scalar_size(type);
		return 0;
	}
	if (memchr(type.ptr, '*', type.len)) {
		f->kind = (f->size == 4 || f->size == 8) ? FTRACE_FIELD_POINTER : FTRACE_FIELD_OTHER;
		return 0;
	}
	if (is_char_type(type) && f->size == 0) {
		/* Old kernels declare print's buffer as "char buf" with size 0. */
		f->is_char = true;
		f->elem_size = 1;
		f->kind = FTRACE_FIELD_CSTRING;
		return 0;
	}
	if (f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8)
		f->kind = FTRACE_FIELD_INT;
	else
		f->kind = FTRACE_FIELD_OTHER;
	return 0;
}

/*
 * Parses "field:<decl>;\toffset:N;\tsize:N;\tsigned:N;" (already trimmed and
 * known to start with "field:"). "signed:" is optional, as on old kernels.
 */
static int parse_field_line(struct strview line, struct ftrace_field *f)
{
	struct strview part, rest = line, decl = {NULL, 0}, v;
	bool has_offset = false, has_size = false;
	uint64_t n;
	int err, i = 0;

	memset(f, 0, sizeof(*f));
	while (rest.len) {
		sv_split(rest, ';', &part, &rest);
		part = sv_trim(part);
		if (part.len == 0)
			continue;
		if (i++ == 0) {
			if (!take_keyed(part, "field", &decl))
				return -EINVAL;
			/* take_keyed splits at the first ':', which is "field:". */
			continue;
		}
		if (take_keyed(part, "offset", &v)) {
			err = sv_parse_u64(v, UINT16_MAX, &n);
			if (err)
				return -EINVAL;
			f->offset = (uint16_t)n;
			has_offset = true;
		} else if (take_keyed(part, "size", &v)) {
			err = sv_parse_u64(v, UINT16_MAX, &n);
			if (err)
				return -EINVAL;
			f->size = (uint16_t)n;
			has_size = true;
		} else if (take_keyed(part, "signed", &v)) {
			err = sv_parse_u64(v, 1, &n);
			if (err)
				return -EINVAL;
			f->is_signed = n != 0;
		}
	}
	if (!decl.len || !has_offset || !has_size)
		return -EINVAL;
	if ((uint32_t)f->offset + f->size > UINT16_MAX)
		return -EINVAL;
	return parse_decl(decl, f);
}

int ftrace_format_parse(const char *text, size_t len, struct ftrace_format *out)
{
	struct strview rest = sv_make(text, len), line, v;
	bool has_name = false, has_id = false, in_format = false, in_common = true;
	bool seen_blank = false;
	uint32_t n_common = 0, i;
	uint64_t id;
	int err;

	if (!text || len > FTRACE_FORMAT_MAX_BYTES)
		return len > FTRACE_FORMAT_MAX_BYTES ? -E2BIG : -EINVAL;
	out->n_fields = 0;
	out->min_size = 0;
	while (next_line(&rest, &line)) {
		struct strview t = sv_trim(line);

		if (!in_format) {
			if (take_keyed(t, "name", &v)) {
				err = sv_to_cstr(v, out->name, sizeof(out->name));
				if (err)
					return err;
				has_name = v.len > 0;
			} else if (take_keyed(t, "ID", &v)) {
				if (sv_parse_u64(v, UINT16_MAX, &id))
					return -EINVAL;
				out->id = (uint32_t)id;
				has_id = true;
			} else if (sv_eq_cstr(t, "format:")) {
				in_format = true;
			}
			continue;
		}
		if (t.len == 0) {
			if (out->n_fields > 0) {
				in_common = false;
				seen_blank = true;
			}
			continue;
		}
		if (sv_starts_with(t, "print fmt:"))
			break;
		if (!sv_starts_with(t, "field:"))
			continue;
		if (out->n_fields == FTRACE_MAX_FIELDS)
			return -E2BIG;
		err = parse_field_line(t, &out->fields[out->n_fields]);
		if (err)
			return err;
		if (in_common)
			n_common++;
		out->n_fields++;
	}
	if (!has_name || !has_id)
		return -EINVAL;
	if (!seen_blank) {
		/* No blank line: the common block is the leading common_* fields. */
		n_common = 0;
		while (n_common < out->n_fields &&
		       strncmp(out->fields[n_common].name, "common_", 7) == 0)
			n_common++;
	}
	out->n_common = n_common;
	for (i = 0; i < out->n_fields; i++) {
		uint32_t end = (uint32_t)out->fields[i].offset + out->fields[i].size;

		if (end > out->min_size)
			out->min_size = end;
	}
	return 0;
}

const struct ftrace_field *ftrace_format_field(const struct ftrace_format *fmt, const char *name)
{
	uint32_t i;

	for (i = 0; i < fmt->n_fields; i++)
		if (strcmp(fmt->fields[i].name, name) == 0)
			return &fmt->fields[i];
	return NULL;
}

void ftrace_page_layout_default(struct ftrace_page_layout *out)
{
	out->ts_offset = 0;
	out->commit_offset = 8;
	out->commit_size = 8;
	out->data_offset = 16;
	out->data_size = 4080;
}

int ftrace_header_page_parse(const char *text, size_t len, struct ftrace_page_layout *out)
{
	struct strview rest = sv_make(text, len), line;
	struct ftrace_page_layout l = {0};
	bool has_ts = false, has_commit = false, has_data = false;
	struct ftrace_field f;
	int err;

	if (!text || len > FTRACE_FORMAT_MAX_BYTES)
		return -EINVAL;
	while (next_line(&rest, &line)) {
		struct strview t = sv_trim(line);

		if (!sv_starts_with(t, "field:"))
			continue;
		err = parse_field_line(t, &f);
		if (err)
			return err;
		if (strcmp(f.name, "timestamp") == 0) {
			if (f.size != 8)
				return -EINVAL;
			l.ts_offset = f.offset;
			has_ts = true;
		} else if (strcmp(f.name, "commit") == 0) {
			if (f.size != 4 && f.size != 8)
				return -EINVAL;
			l.commit_offset = f.offset;
			l.commit_size = f.size;
			has_commit = true;
		} else if (strcmp(f.name, "data") == 0) {
			l.data_offset = f.offset;
			l.data_size = f.size;
			has_data = true;
		}
	}
	if (!has_ts || !has_commit || !has_data)
		return -EINVAL;
	if (l.ts_offset + 8u > l.data_offset || l.commit_offset + (uint32_t)l.commit_size > l.data_offset)
		return -EINVAL;
	*out = l;
	return 0;
}

/* "N bits" -> N, or "type == N" -> N; false if neither. */
static bool parse_header_value(struct strview v, uint64_t *out)
{
	struct strview head, tail;

	v = sv_trim(v);
	if (sv_ends_with(v, "bits"))
		return sv_parse_u64(sv_trim(sv_make(v.ptr, v.len - 4)), 64, out) == 0;
	if (sv_split(v, '=', &head, &tail) && tail.len && tail.ptr[0] == '=')
		return sv_parse_u64(sv_trim(sv_make(tail.ptr + 1, tail.len - 1)), 64, out) == 0;
	return false;
}

int ftrace_header_event_parse(const char *text, size_t len)
{
	static const struct {
		const char *key;
		uint64_t want;
		bool is_required;
	} k_expect[] = {
		{"type_len", 5, true},     {"time_delta", 27, true}, {"array", 32, false},
		{"padding", 29, true},     {"time_extend", 30, true}, {"time_stamp", 31, false},
		{"data max type_len", 28, false},
	};
	struct strview rest = sv_make(text, len), line, key, value;
	bool seen[sizeof(k_expect) / sizeof(k_expect[0])] = {false};
	uint64_t n;
	size_t i;

	if (!text || len > FTRACE_FORMAT_MAX_BYTES)
		return -EINVAL;
	while (next_line(&rest, &line)) {
		struct strview t = sv_trim(line);

		if (t.len == 0 || t.ptr[0] == '#')
			continue;
		if (sv_starts_with(t, "data max type_len")) {
			key = sv_make(t.ptr, strlen("data max type_len"));
			value = sv_make(t.ptr + key.len, t.len - key.len);
			value = sv_trim(value);
			/* "== 28": give parse_header_value a "type" to split on. */
			if (!sv_starts_with(value, "=="))
				return -EINVAL;
			if (sv_parse_u64(sv_trim(sv_make(value.ptr + 2, value.len - 2)), 64, &n))
				return -EINVAL;
		} else {
			if (!sv_split(t, ':', &key, &value))
				continue;
			key = sv_trim(key);
			if (!parse_header_value(value, &n))
				return -EINVAL;
		}
		for (i = 0; i < sizeof(k_expect) / sizeof(k_expect[0]); i++) {
			if (!sv_eq_cstr(key, k_expect[i].key))
				continue;
			if (n != k_expect[i].want)
				return -EPROTONOSUPPORT;
			seen[i] = true;
		}
	}
	for (i = 0; i < sizeof(k_expect) / sizeof(k_expect[0]); i++)
		if (k_expect[i].is_required && !seen[i])
			return -EINVAL;
	return 0;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * fold.c - folded stacks from the counts of select.c: loads the callsite
 * tree, the frames and the mappings once (three queries), names every
 * frame, then walks each counted leaf callsite up to its root and writes
 * "root;...;leaf" with its weight. The stacks are sorted frame by frame
 * (';' before any other byte), so the frames under one parent are
 * adjacent and in name order: what svg.c lays out in a single pass.
 */
#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/sort.h"
#include "trace_processor/flamegraph/flamegraph_int.h"
#include "trace_processor/trace_processor.h"

/* Deepest stack walked; a longer parent chain is a broken trace. */
#define FG_MAX_DEPTH     4096
#define FG_KERNEL_SUFFIX "_[k]"

/* The callsite tree and the frames' names, indexed by id. */
struct tree {
	int64_t *parent; /* per callsite; -1 for a root */
	int64_t *frame;  /* per callsite; -1 if unknown */
	size_t n_callsites;
	uint32_t *name_off; /* per frame: offset of its name in names */
	bool *is_kernel;    /* per frame */
	size_t n_frames;
	struct buf names;    /* NUL-separated frame names */
	uint32_t *label_off; /* per utid: "PROC-PID\0THREAD-TID\0" in labels */
	size_t n_labels;
	struct buf labels;
};

static void tree_fini(struct tree *t)
{
	free(t->parent);
	free(t->frame);
	free(t->name_off);
	free(t->is_kernel);
	free(t->label_off);
	buf_fini(&t->names);
	buf_fini(&t->labels);
}

/* Grows @*arr of @size-byte items to hold index @i (zeroed, or -1 bytes). */
static int grow(void **arr, size_t *n, size_t i, size_t size, int fill)
{
	size_t cap = *n;
	void *p;

	if (i < cap)
		return 0;
	while (cap <= i)
		cap = cap ? 2 * cap : 1024;
	if (cap > (1u << 31))
		return -ENOMEM;
	p = realloc(*arr, cap * size);
	if (!p)
		return -ENOMEM;
	memset((char *)p + *n * size, fill, (cap - *n) * size);
	*arr = p;
	*n = cap;
	return 0;
}

/**
 * fg_name_sanitize() - Text as the folded format and XML can carry it:
 * control bytes and bytes that are not UTF-8 become '?', and in a frame
 * name (@is_frame) ';' becomes ':'.
 * @in, @len: the text.  @out, @out_size: where to write it (NUL-terminated;
 * cut, at a character, to fit).
 * Return: the bytes written without the NUL.
 */
size_t fg_name_sanitize(const char *in, size_t len, char *out, size_t out_size, bool is_frame)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t i = 0, o = 0;

	if (!out_size)
		return 0;
	while (i < len) {
		unsigned c = s[i], n = 0, k;

		if (c >= 0xc2 && c <= 0xdf)
			n = 1;
		else if (c >= 0xe0 && c <= 0xef)
			n = 2;
		else if (c >= 0xf0 && c <= 0xf4)
			n = 3;
		if (n) {
			for (k = 1; k <= n; k++)
				if (i + k >= len || (s[i + k] & 0xc0) != 0x80)
					break;
			if (k <= n || (c == 0xe0 && s[i + 1] < 0xa0) ||
			    (c == 0xed && s[i + 1] >= 0xa0) || (c == 0xf0 && s[i + 1] < 0x90) ||
			    (c == 0xf4 && s[i + 1] >= 0x90))
				n = 0, c = '?';
		} else if (c < 0x20 || c == 0x7f || c >= 0x80) {
			c = '?';
		} else if (c == ';' && is_frame) {
			c = ':';
		}
		if (o + n + 1 >= out_size)
			break;
		if (n) {
			memcpy(out + o, s + i, n + 1);
			o += n + 1;
			i += n + 1;
		} else {
			out[o++] = (char)c;
			i++;
		}
	}
	out[o] = '\0';
	return o;
}

/* Appends @s, sanitized, and a NUL to @b. */
static int append_name(struct buf *b, const char *s, size_t len)
{
	char tmp[1024];
	size_t n = fg_name_sanitize(s, len, tmp, sizeof(tmp), true);

	return buf_append(b, tmp, n + 1);
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

static int load_callsites(struct tp *tp, struct tree *t)
{
	sqlite3_stmt *st = NULL;
	size_t cap_p = 0, cap_f = 0;
	int rc;

	if (fg_prepare(tp, "SELECT id, parent_id, frame_id FROM stack_profile_callsite", &st) < 0)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);

		if (id < 0 || id >= (int64_t)UINT32_MAX)
			continue;
		if (grow((void **)&t->parent, &cap_p, (size_t)id, sizeof(int64_t), 0xff) < 0 ||
		    grow((void **)&t->frame, &cap_f, (size_t)id, sizeof(int64_t), 0xff) < 0) {
			rc = -ENOMEM;
			break;
		}
		if (sqlite3_column_type(st, 1) != SQLITE_NULL)
			t->parent[id] = sqlite3_column_int64(st, 1);
		t->frame[id] = sqlite3_column_int64(st, 2);
		if ((size_t)id >= t->n_callsites)
			t->n_callsites = (size_t)id + 1;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : rc == -ENOMEM ? -ENOMEM : -EIO;
}

/*
 * Names every frame: its (deobfuscated) function name; unnamed, the file
 * name of its mapping and "+0x" its rel_pc, or "[unknown]" without a
 * mapping name. A frame of a kernel mapping ("[kernel..." or "/[kernel...") or of kind
 * "kernel" is a kernel frame.
 */
static int load_frames(struct tp *tp, struct tree *t)
{
	sqlite3_stmt *st = NULL;
	char **maps = NULL;
	size_t n_maps = 0, cap_o = 0, cap_k = 0, i;
	int rc = -EIO;

	if (fg_prepare(tp, "SELECT id, name FROM stack_profile_mapping", &st) < 0)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);

		if (id < 0 || id >= (int64_t)UINT32_MAX)
			continue;
		if (grow((void **)&maps, &n_maps, (size_t)id, sizeof(char *), 0) < 0 ||
		    !(maps[id] = strdup(name ? name : ""))) {
			rc = -ENOMEM;
			goto out;
		}
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_DONE)
		goto out;
	if (fg_prepare(tp,
		       "SELECT id, COALESCE(deobfuscated_name, name), mapping, rel_pc, type "
		       "FROM stack_profile_frame",
		       &st) < 0) {
		rc = -EIO;
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0), map = sqlite3_column_int64(st, 2);
		const char *name = (const char *)sqlite3_column_text(st, 1);
		const char *type = (const char *)sqlite3_column_text(st, 4);
		const char *mname = map >= 0 && (size_t)map < n_maps && maps[map] ? maps[map] : "";
		char tmp[600];
		int n;

		if (id < 0 || id >= (int64_t)UINT32_MAX)
			continue;
		if (grow((void **)&t->name_off, &cap_o, (size_t)id, sizeof(uint32_t), 0) < 0 ||
		    grow((void **)&t->is_kernel, &cap_k, (size_t)id, sizeof(bool), 0) < 0) {
			rc = -ENOMEM;
			goto out;
		}
		if (t->names.len > UINT32_MAX - 2048) {
			rc = -ENOMEM;
			goto out;
		}
		t->name_off[id] = (uint32_t)t->names.len;
		/* The importer joins path parts after a '/': "/[kernel.kallsyms]". */
		t->is_kernel[id] = strncmp(mname + (*mname == '/'), "[kernel", 7) == 0 ||
				   (type && strcmp(type, "kernel") == 0);
		if (name && *name) {
			rc = append_name(&t->names, name, strlen(name));
		} else if (*mname) {
			n = snprintf(tmp, sizeof(tmp), "%.500s+0x%" PRIx64, basename_of(mname),
				     (uint64_t)sqlite3_column_int64(st, 3));
			rc = append_name(&t->names, tmp, (size_t)n);
		} else {
			rc = append_name(&t->names, "[unknown]", 9);
		}
		if (rc < 0)
			goto out;
		if ((size_t)id >= t->n_frames)
			t->n_frames = (size_t)id + 1;
	}
	rc = rc == SQLITE_DONE ? 0 : -EIO;
out:
	sqlite3_finalize(st);
	for (i = 0; i < n_maps; i++)
		free(maps[i]);
	free(maps);
	return rc;
}

/* "PROCESS-PID\0THREAD-TID\0" of every utid; unnamed: the process's name. */
static int load_labels(struct tp *tp, struct tree *t)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc;

	if (fg_prepare(tp,
		       "SELECT t.utid, t.tid, t.name, p.pid, p.name FROM thread t "
		       "LEFT JOIN process p USING (upid)",
		       &st) < 0)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t utid = sqlite3_column_int64(st, 0);
		const char *tname = (const char *)sqlite3_column_text(st, 2);
		const char *pname = (const char *)sqlite3_column_text(st, 4);
		char tmp[600];
		int n;

		if (utid < 0 || utid >= (int64_t)UINT32_MAX)
			continue;
		if (grow((void **)&t->label_off, &cap, (size_t)utid, sizeof(uint32_t), 0xff) < 0) {
			rc = -ENOMEM;
			break;
		}
		t->label_off[utid] = (uint32_t)t->labels.len;
		if (!pname || !*pname)
			pname = "[unknown]";
		if (!tname || !*tname)
			tname = pname;
		if (sqlite3_column_type(st, 3) == SQLITE_NULL)
			n = snprintf(tmp, sizeof(tmp), "%.500s", pname);
		else
			n = snprintf(tmp, sizeof(tmp), "%.500s-%" PRId64, pname,
				     (int64_t)sqlite3_column_int64(st, 3));
		rc = append_name(&t->labels, tmp, (size_t)n);
		n = snprintf(tmp, sizeof(tmp), "%.500s-%" PRId64, tname,
			     (int64_t)sqlite3_column_int64(st, 1));
		if (rc < 0 || append_name(&t->labels, tmp, (size_t)n) < 0) {
			rc = -ENOMEM;
			break;
		}
		if ((size_t)utid >= t->n_labels)
			t->n_labels = (size_t)utid + 1;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : rc == -ENOMEM ? -ENOMEM : -EIO;
}

int fg_folded_add(struct fg_folded *f, const char *text, size_t len, uint64_t count)
{
	char *copy;

	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 256;
		struct fg_stack *v = realloc(f->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		f->v = v;
		f->cap = cap;
	}
	copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, text, len);
	copy[len] = '\0';
	f->v[f->n].text = copy;
	f->v[f->n].len = len;
	f->v[f->n].count = count;
	f->n++;
	f->total += count;
	return 0;
}

void fg_folded_fini(struct fg_folded *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->n; i++)
		free(f->v[i].text);
	free(f->v);
	memset(f, 0, sizeof(*f));
}

/* Frame by frame: ';' sorts before every byte, a stack before its callees. */
static int stack_cmp(const void *pa, const void *pb)
{
	const struct fg_stack *a = pa, *b = pb;
	size_t i, n = a->len < b->len ? a->len : b->len;

	for (i = 0; i < n; i++) {
		unsigned ca = (unsigned char)a->text[i], cb = (unsigned char)b->text[i];

		if (ca != cb)
			return (ca == ';' ? 1u : ca) < (cb == ';' ? 1u : cb) ? -1 : 1;
	}
	return a->len < b->len ? -1 : a->len > b->len;
}

/** fg_folded_sort_merge() - Sort @f frame by frame and add up equal stacks. */
void fg_folded_sort_merge(struct fg_folded *f)
{
	size_t i, o = 0;

	if (f->n < 2)
		return;
	sort_n(f->v, f->n, sizeof(*f->v), stack_cmp);
	for (i = 1; i < f->n; i++) {
		struct fg_stack *last = &f->v[o];

		if (f->v[i].len == last->len && memcmp(f->v[i].text, last->text, last->len) == 0) {
			last->count += f->v[i].count;
			free(f->v[i].text);
		} else {
			f->v[++o] = f->v[i];
		}
	}
	f->n = o + 1;
}

/* Appends the frames of @cs, root first (leaf first if @opt->reverse), each followed by ';'. */
static int append_stack(const struct tree *t, int64_t cs, const struct fg_fold_opts *opt,
			struct buf *b)
{
	int64_t path[FG_MAX_DEPTH];
	int n = 0, i;

	while (cs >= 0 && (size_t)cs < t->n_callsites && n < FG_MAX_DEPTH) {
		path[n++] = cs;
		cs = t->parent[cs];
	}
	for (i = 0; i < n; i++) {
		int64_t fr = t->frame[path[opt->reverse ? i : n - 1 - i]];
		const char *name = "[unknown]";
		bool kernel = false;

		if (fr >= 0 && (size_t)fr < t->n_frames) {
			name = (const char *)t->names.data + t->name_off[fr];
			kernel = t->is_kernel[fr];
		}
		if (buf_append_str(b, name) < 0 ||
		    (kernel && opt->annotate_kernel && buf_append_str(b, FG_KERNEL_SUFFIX) < 0) ||
		    buf_append_byte(b, ';') < 0)
			return -ENOMEM;
	}
	return 0;
}

/**
 * fg_fold() - The folded stacks of @counts, named as @opt says, sorted
 * frame by frame with equal stacks merged, into @out (zeroed first;
 * fg_folded_fini() it, also on failure).
 * Return: 0, -ENOMEM, or -EIO if the stack tables cannot be read.
 * Context: three queries, then one walk per counted (thread, callsite).
 */
int fg_fold(struct tp *tp, const struct fg_counts *counts, const struct fg_fold_opts *opt,
	    struct fg_folded *out)
{
	struct tree t = {0};
	struct buf line = BUF_INIT;
	struct hmap_iter it;
	uint64_t key, w;
	int rc;

	memset(out, 0, sizeof(*out));
	buf_init(&t.names);
	buf_init(&t.labels);
	rc = load_callsites(tp, &t);
	if (rc == 0)
		rc = load_frames(tp, &t);
	if (rc == 0 && opt->group != FG_GROUP_NONE)
		rc = load_labels(tp, &t);
	if (rc < 0)
		goto out;
	hmap_iter_init(&it, (struct hmap *)&counts->by_key);
	while (hmap_iter_next(&it, &key, &w)) {
		uint64_t utid = key >> 32;

		buf_reset(&line);
		if (opt->group != FG_GROUP_NONE) {
			/* Both labels, as the labels buffer holds them. */
			const char *l = "[unknown]\0[unknown]";

			if (utid < t.n_labels && t.label_off[utid] != UINT32_MAX)
				l = (const char *)t.labels.data + t.label_off[utid];
			buf_append_str(&line, l);
			buf_append_byte(&line, ';');
			if (opt->group == FG_GROUP_THREAD) {
				buf_append_str(&line, l + strlen(l) + 1);
				buf_append_byte(&line, ';');
			}
		}
		rc = append_stack(&t, (int64_t)(key & UINT32_MAX), opt, &line);
		if (rc < 0)
			goto out;
		if (line.len &&
		    (rc = fg_folded_add(out, (const char *)line.data, line.len - 1, w)) < 0)
			goto out;
	}
	fg_folded_sort_merge(out);
	rc = 0;
out:
	buf_fini(&line);
	tree_fini(&t);
	return rc;
}

/** fg_folded_write() - "stack count" lines. Return: 0 or -EIO. */
int fg_folded_write(const struct fg_folded *f, FILE *out)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (fprintf(out, "%s %" PRIu64 "\n", f->v[i].text, f->v[i].count) < 0)
			return -EIO;
	return 0;
}

/**
 * fg_folded_parse() - Folded text ("a;b;c 12" lines, as flamegraph.pl
 * reads) into @out (zeroed first), sorted and merged. Blank lines and
 * lines starting with '#' are skipped.
 * Return: 0; -EINVAL with the 1-based number of the first bad line in
 * *@out_bad_line; -ENOMEM.
 */
int fg_folded_parse(const char *data, size_t len, struct fg_folded *out, size_t *out_bad_line)
{
	size_t line_no = 0, pos = 0;

	memset(out, 0, sizeof(*out));
	while (pos < len) {
		const char *l = data + pos, *nl = memchr(l, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - l) : len - pos;
		const char *sp;
		uint64_t count;

		pos += n + 1;
		line_no++;
		if (n && l[n - 1] == '\r')
			n--;
		if (n == 0 || l[0] == '#')
			continue;
		sp = memrchr(l, ' ', n);
		if (!sp || sp == l ||
		    sv_parse_u64(sv_make(sp + 1, n - (size_t)(sp + 1 - l)), UINT64_MAX, &count) <
			    0) {
			*out_bad_line = line_no;
			return -EINVAL;
		}
		if (count && fg_folded_add(out, l, (size_t)(sp - l), count) < 0)
			return -ENOMEM;
	}
	fg_folded_sort_merge(out);
	return 0;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * svg.c - a self-contained SVG flame graph of folded stacks (fold.c's
 * order: frame by frame, so one pass makes the tree): the root "all" at
 * the bottom, each frame as wide as its weight, callees above their
 * caller in name order, a label cut to fit and a <title> tooltip per
 * frame, a colour from a hash of the name (kernel frames, "_[k]", in
 * blue; process and thread frames in violet). Frames are written in
 * preorder, which svg_js.c's zoom relies on. No fonts, scripts or images
 * from outside the file.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_processor/flamegraph/flamegraph_int.h"

#define FONT_PX           12
#define CHAR_PX           7.4 /* advance of one monospace character at FONT_PX, rounded up */
#define FRAME_PX          16
#define PAD_PX            10
#define TOP_PX            60 /* title, subtitle, search */
#define BOTTOM_PX         30 /* the details line */
#define KERNEL_SUFFIX     "_[k]"
#define KERNEL_SUFFIX_LEN 4

/* One frame of the graph: a node of the tree of stacks. */
struct node {
	const char *name; /* into a folded stack (borrowed) */
	uint32_t len;
	uint32_t depth; /* 0: the root "all" */
	uint64_t start; /* weight left of it: its caller's start and earlier callees */
	uint64_t count;
	uint64_t kids; /* the part of count in its callees so far */
};

struct nodes {
	struct node *v;
	size_t n, cap;
};

static int node_add(struct nodes *ns, const char *name, size_t len, uint32_t depth, uint64_t start)
{
	if (ns->n == ns->cap) {
		size_t cap = ns->cap ? 2 * ns->cap : 1024;
		struct node *v = realloc(ns->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		ns->v = v;
		ns->cap = cap;
	}
	ns->v[ns->n++] = (struct node){name, (uint32_t)len, depth, start, 0, 0};
	return 0;
}

/*
 * The tree of @f in preorder. Stacks sorted frame by frame keep every
 * subtree in consecutive lines, so a line shares with the previous one
 * the frames of the path it continues and opens new nodes after them. A
 * callee starts where its caller's earlier callees end: callees sit at
 * the left of their caller, its own samples at the right.
 */
static int build(const struct fg_folded *f, struct nodes *ns)
{
	size_t *open = NULL, n_open = 0, cap_open = 1, i, d; /* open[d]: node at depth d */
	int rc = -ENOMEM;

	open = malloc(cap_open * sizeof(*open));
	if (!open || node_add(ns, "all", 3, 0, 0) < 0)
		goto out;
	open[0] = 0;
	n_open = 1;
	for (i = 0; i < f->n; i++) {
		const char *p = f->v[i].text, *end = p + f->v[i].len;
		bool same = true;

		for (d = 1; p < end; d++) {
			const char *semi = memchr(p, ';', (size_t)(end - p));
			size_t len = semi ? (size_t)(semi - p) : (size_t)(end - p);

			if (same && d < n_open) {
				const struct node *nd = &ns->v[open[d]];

				same = nd->len == len && memcmp(nd->name, p, len) == 0;
			} else {
				same = false;
			}
			if (!same) {
				const struct node *up = &ns->v[open[d - 1]];
				uint64_t start = up->start + up->kids;

				if (d >= cap_open) {
					size_t *o = realloc(open, 2 * cap_open * sizeof(*o));

					if (!o)
						goto out;
					open = o;
					cap_open *= 2;
				}
				if (node_add(ns, p, len, (uint32_t)d, start) < 0)
					goto out;
				open[d] = ns->n - 1;
			}
			p += len + 1;
		}
		n_open = d;
		for (d = 0; d < n_open; d++) {
			ns->v[open[d]].count += f->v[i].count;
			if (d + 1 < n_open)
				ns->v[open[d]].kids += f->v[i].count;
		}
	}
	rc = 0;
out:
	free(open);
	return rc;
}

/* Writes @s (@len bytes) as XML character data, valid UTF-8 only. */
static void put_text(FILE *out, const char *s, size_t len)
{
	char tmp[1024];
	size_t i, n = fg_name_sanitize(s, len, tmp, sizeof(tmp), false);

	for (i = 0; i < n; i++) {
		switch (tmp[i]) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(tmp[i], out); break;
		}
	}
}

/* Characters (not bytes) of UTF-8 @s. */
static size_t n_chars(const char *s, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		n += ((unsigned char)s[i] & 0xc0) != 0x80;
	return n;
}

/* The label of a frame @w_px wide: the name, cut with ".." to fit, or none. */
static void put_label(FILE *out, const char *s, size_t len, double w_px)
{
	size_t fit = w_px > 6 ? (size_t)((w_px - 6) / CHAR_PX) : 0, i, chars = 0;

	if (fit < 3)
		return;
	if (n_chars(s, len) <= fit) {
		put_text(out, s, len);
		return;
	}
	for (i = 0; i < len; i++) {
		if (((unsigned char)s[i] & 0xc0) != 0x80 && chars++ == fit - 2)
			break;
	}
	put_text(out, s, i);
	fputs("..", out);
}

/* 1234567 as "1,234,567". */
static void put_count(FILE *out, uint64_t v)
{
	char digits[32];
	int n = snprintf(digits, sizeof(digits), "%" PRIu64, v), i;

	for (i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			fputc(',', out);
		fputc(digits[i], out);
	}
}

/* FNV-1a of the name: the same name has the same colour in every graph. */
static uint32_t name_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

/* The fill of a frame: warm for code, blue for the kernel, violet for groups. */
static void put_fill(FILE *out, const struct node *nd, size_t len, bool kernel, bool group)
{
	uint32_t h = name_hash(nd->name, len);
	double a = (h & 0xff) / 255.0, b = ((h >> 8) & 0xff) / 255.0,
	       c = ((h >> 16) & 0xff) / 255.0;
	int r, g, bl;

	if (nd->depth == 0) {
		r = g = bl = 200;
	} else if (group) {
		r = 175 + (int)(40 * a), g = 160 + (int)(35 * b), bl = 215 + (int)(35 * c);
	} else if (kernel) {
		r = 80 + (int)(60 * a), g = 150 + (int)(60 * b), bl = 215 + (int)(40 * c);
	} else {
		r = 225 + (int)(30 * a), g = 80 + (int)(140 * b), bl = 25 + (int)(45 * c);
	}
	fprintf(out, "rgb(%d,%d,%d)", r, g, bl);
}

/**
 * fg_svg_write() - The flame graph of @f (sorted by fg_folded_sort_merge())
 * as an SVG document on @out.
 * Return: the frames drawn, -EINVAL if @f is empty, -ENOMEM, -EIO on a
 * write error.
 * Context: allocates one node per frame of the tree.
 */
int fg_svg_write(const struct fg_folded *f, const struct fg_svg_opts *opt, FILE *out)
{
	struct nodes ns = {0};
	double plot = (double)opt->width_px - 2 * PAD_PX, scale;
	uint32_t max_depth = 0;
	unsigned height, y0;
	size_t i;
	int rc, n_drawn = 0;

	if (!f->n || !f->total || opt->width_px <= 2 * PAD_PX)
		return -EINVAL;
	rc = build(f, &ns);
	if (rc < 0)
		goto out;
	scale = plot / (double)f->total;
	for (i = 0; i < ns.n; i++)
		if ((double)ns.v[i].count * scale >= opt->min_width_px && ns.v[i].depth > max_depth)
			max_depth = ns.v[i].depth;
	height = TOP_PX + (max_depth + 1) * FRAME_PX + BOTTOM_PX;
	y0 = height - BOTTOM_PX - FRAME_PX;

	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%u\" "
		"height=\"%u\" viewBox=\"0 0 %u %u\" data-pad=\"%d\" data-fh=\"%d\" "
		"data-cw=\"%.2f\" data-y0=\"%u\">\n"
		"<style>%s</style>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#fbfaf5\"/>\n"
		"<text id=\"title\" x=\"%u\" y=\"24\" text-anchor=\"middle\">",
		opt->width_px, height, opt->width_px, height, PAD_PX, FRAME_PX, CHAR_PX, y0,
		fg_svg_style, opt->width_px / 2);
	put_text(out, opt->title, strlen(opt->title));
	fprintf(out, "</text>\n<text id=\"subtitle\" x=\"%u\" y=\"44\" text-anchor=\"middle\">",
		opt->width_px / 2);
	if (opt->subtitle)
		put_text(out, opt->subtitle, strlen(opt->subtitle));
	fprintf(out,
		"</text>\n<text id=\"unzoom\" class=\"button hide\" x=\"%d\" y=\"24\">"
		"Reset Zoom</text>\n"
		"<text id=\"search\" class=\"button\" x=\"%u\" y=\"24\" text-anchor=\"end\">"
		"Search</text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n"
		"<text id=\"matched\" x=\"%u\" y=\"%u\" text-anchor=\"end\"> </text>\n"
		"<g id=\"frames\">\n",
		PAD_PX, opt->width_px - PAD_PX, PAD_PX, height - 12, opt->width_px - PAD_PX,
		height - 12);

	for (i = 0; i < ns.n; i++) {
		const struct node *nd = &ns.v[i];
		double x = PAD_PX + (double)nd->start * scale, w = (double)nd->count * scale;
		unsigned y = y0 - nd->depth * FRAME_PX;
		size_t len = nd->len;
		bool kernel = false;

		if (w < opt->min_width_px)
			continue;
		if (len > KERNEL_SUFFIX_LEN && memcmp(nd->name + len - KERNEL_SUFFIX_LEN,
						      KERNEL_SUFFIX, KERNEL_SUFFIX_LEN) == 0) {
			kernel = true;
			len -= KERNEL_SUFFIX_LEN;
		}
		n_drawn++;
		fputs("<g class=\"f\"><title>", out);
		put_text(out, nd->name, len);
		fputs(" (", out);
		put_count(out, nd->count);
		fprintf(out,
			" %s, %.2f%%)</title><rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" "
			"height=\"%d\" fill=\"",
			nd->count == 1 && strcmp(opt->count_name, "samples") == 0 ? "sample"
										  : opt->count_name,
			100.0 * (double)nd->count / (double)f->total, x, y, w, FRAME_PX - 1);
		put_fill(out, nd, len, kernel, nd->depth >= 1 && nd->depth <= opt->group_levels);
		fprintf(out, "\" rx=\"2\"/><text x=\"%.2f\" y=\"%.1f\">", x + 3,
			y + FRAME_PX - 4.5);
		put_label(out, nd->name, len, w);
		fputs("</text></g>\n", out);
	}
	fprintf(out, "</g>\n<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n</svg>\n",
		fg_svg_script);
	rc = ferror(out) ? -EIO : n_drawn;
out:
	free(ns.v);
	return rc;
}

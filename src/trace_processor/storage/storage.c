// SPDX-License-Identifier: Apache-2.0
/*
 * storage.c - string pool, columnar tables and the lazy per-column
 * equality indexes and row orders (see storage.h; cell encodings are in
 * cells.c). Called by every layer above; tables are filled by the import
 * on one thread and read by SQL once it is done.
 */
#include "trace_processor/storage/storage.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/sort.h"

/* ------------------------------------------------------------ strings ---- */

int tp_strings_init(struct tp_strings *s)
{
	memset(s, 0, sizeof(*s));
	hmap_init(&s->index);
	s->offs = malloc(64 * sizeof(*s->offs));
	if (!s->offs)
		return -ENOMEM;
	s->cap = 64;
	s->n = 1; /* id 0 is NULL */
	s->offs[0] = 0;
	return 0;
}

void tp_strings_fini(struct tp_strings *s)
{
	free(s->blob);
	free(s->offs);
	hmap_fini(&s->index);
	memset(s, 0, sizeof(*s));
}

const char *tp_str_get(const struct tp_strings *s, uint32_t id)
{
	if (id == 0 || id >= s->n)
		return NULL;
	return s->blob + s->offs[id];
}

static bool same(const struct tp_strings *s, uint32_t id, const char *str, size_t len)
{
	const char *have = s->blob + s->offs[id];

	return strncmp(have, str, len) == 0 && have[len] == '\0';
}

uint32_t tp_str_intern(struct tp_strings *s, const char *str, size_t len)
{
	uint64_t h, v;
	uint32_t id;
	const char *nul;

	/* An empty field of a trace may have no bytes at all (str NULL). */
	if (len == 0)
		str = "";
	nul = memchr(str, '\0', len);
	if (nul)
		len = (size_t)(nul - str); /* strings end at their first NUL */
	h = fnv1a64(str, len);

	/* Colliding hashes probe h+1, h+2, ...: keys are hashes, not strings. */
	while (hmap_get(&s->index, h, &v)) {
		if (same(s, (uint32_t)v, str, len))
			return (uint32_t)v;
		h++;
	}
	if (s->blob_len + len + 1 > s->blob_cap) {
		size_t cap = s->blob_cap ? s->blob_cap * 2 : 4096;
		char *b;

		while (cap < s->blob_len + len + 1)
			cap *= 2;
		b = realloc(s->blob, cap);
		if (!b)
			return 0;
		s->blob = b;
		s->blob_cap = cap;
	}
	if (s->n == s->cap) {
		uint64_t *o = realloc(s->offs, 2 * s->cap * sizeof(*o));

		if (!o)
			return 0;
		s->offs = o;
		s->cap *= 2;
	}
	id = s->n;
	if (hmap_put(&s->index, h, id) < 0)
		return 0;
	s->n++;
	s->offs[id] = s->blob_len;
	memcpy(s->blob + s->blob_len, str, len);
	s->blob[s->blob_len + len] = '\0';
	s->blob_len += len + 1;
	return id;
}

uint32_t tp_str_find(const struct tp_strings *s, const char *str, size_t len)
{
	uint64_t h, v;

	if (!str || memchr(str, '\0', len))
		return 0;
	h = fnv1a64(str, len);
	while (hmap_get(&s->index, h, &v)) {
		if (same(s, (uint32_t)v, str, len))
			return (uint32_t)v;
		h++;
	}
	return 0;
}

uint32_t tp_str_intern_c(struct tp_strings *s, const char *str)
{
	return str ? tp_str_intern(s, str, strlen(str)) : 0;
}

/* ------------------------------------------------------------- tables ---- */

/* Every row sorted by its cell (then by row): 4 bytes per row; lookups
 * bisect by reading the cells of the listed rows. */
struct tp_index {
	uint64_t generation;
	size_t n;
	size_t n_distinct;
	uint32_t *rows;             /* NULL: only n_distinct is known (counted) */
};

struct order_keys;
static int build_order(const struct tp_table *t, uint32_t c1, int c2, const struct order_keys *ok,
		       uint32_t *rows);

int tp_table_init(struct tp_table *t, const char *name, const struct tp_col_spec *specs,
		  uint32_t n_cols)
{
	uint32_t i;

	memset(t, 0, sizeof(*t));
	t->name = name;
	t->specs = specs;
	t->n_cols = n_cols;
	t->cols = calloc(n_cols, sizeof(*t->cols));
	if (!t->cols)
		return -ENOMEM;
	for (i = 0; i < n_cols; i++) {
		t->cols[i].spec = &specs[i];
		if (tp_col_init(&t->cols[i], &specs[i]) < 0) {
			tp_table_fini(t);
			return -ENOMEM;
		}
	}
	return 0;
}

static void index_free(struct tp_index *ix)
{
	if (!ix)
		return;
	free(ix->rows);
	free(ix);
}

struct tp_order {
	uint32_t c1;
	int c2;
	uint64_t generation;
	uint32_t *rows;             /* the rows of a struct row_buf */
};

/* A row order's array, shared by the cache and the cursors reading it. */
struct row_buf {
	size_t refs;
	uint32_t rows[];
};

static struct row_buf *buf_of(const uint32_t *rows)
{
	return (struct row_buf *)((char *)rows - offsetof(struct row_buf, rows));
}

static uint32_t *row_buf_new(size_t n)
{
	struct row_buf *b = malloc(sizeof(*b) + (n ? n : 1) * sizeof(b->rows[0]));

	if (!b)
		return NULL;
	b->refs = 1;
	return b->rows;
}

void tp_rows_hold(const uint32_t *rows)
{
	if (rows)
		buf_of(rows)->refs++;
}

void tp_rows_release(const uint32_t *rows)
{
	struct row_buf *b;

	if (!rows)
		return;
	b = buf_of(rows);
	if (--b->refs == 0)
		free(b);
}

#define MAX_ORDERS 4
#define COUNTING_SORT_MAX_KEYS (1u << 24)

void tp_table_fini(struct tp_table *t)
{
	uint32_t i;

	for (i = 0; i < t->n_orders; i++)
		tp_rows_release(t->orders[i].rows);
	free(t->orders);
	for (i = 0; t->cols && i < t->n_cols; i++) {
		tp_col_free(&t->cols[i]);
		index_free(t->cols[i].index);
	}
	free(t->cols);
	free(t->mins);
	memset(t, 0, sizeof(*t));
}

/*
 * Rows tp_table_append() makes NULL at a time; a table past
 * PREFAULT_FROM_ROWS rows asks for the pages of its next PREFAULT_ROWS
 * rows to be mapped when it comes within PREFAULT_ROWS of them, one
 * system call per column (on a paravirtualized VM a page fault per 4 KiB
 * of cells cost a quarter of an import's CPU; zeroing fresh pages costs a
 * sixth even with huge pages). Through the thread's populator
 * (base/bigmem.h) the import's merge worker does those calls while the
 * parsing thread goes on. RSS runs at most 2 * PREFAULT_ROWS rows of
 * cells ahead of the table.
 */
#define NULL_FILL_ROWS 1024
#define PREFAULT_FROM_ROWS ((size_t)1 << 16)
#define PREFAULT_ROWS ((size_t)1 << 15)

int64_t tp_table_append(struct tp_table *t)
{
	size_t row = t->n_rows;
	uint32_t i;

	if (row == t->cap) {
		/* 1.5x: less slack and smaller realloc peaks than doubling. */
		size_t cap = t->cap ? t->cap + t->cap / 2 : 256;

		if (cap > UINT32_MAX)
			return -ENOMEM;
		for (i = 0; i < t->n_cols; i++)
			if (tp_col_grow(&t->cols[i], t->cap, cap) < 0)
				return -ENOMEM;
		t->cap = cap;
	}
	if (row == t->n_filled) {
		/* A run of NULL rows at once: each column is one tight loop
		 * instead of a switch per cell and row. A short run keeps the
		 * pages of unused capacity untouched. */
		size_t n = t->cap - row < NULL_FILL_ROWS ? t->cap - row : NULL_FILL_ROWS;

		if (row >= PREFAULT_FROM_ROWS && row + PREFAULT_ROWS > t->n_mapped &&
		    t->n_mapped < t->cap) {
			size_t from = row > t->n_mapped ? row : t->n_mapped;
			size_t m = t->cap - from < PREFAULT_ROWS ? t->cap - from : PREFAULT_ROWS;

			for (i = 0; i < t->n_cols; i++)
				tp_cells_prefault_ahead(&t->cols[i], from, m);
			t->n_mapped = from + m;
		}
		/* NULLs a short run at a time: still in cache when the row is set. */
		for (i = 0; i < t->n_cols; i++)
			tp_cells_fill_null(&t->cols[i], row, n);
		t->n_filled = row + n;
	}
	t->n_rows++;
	t->generation++;
	return (int64_t)row;
}

/* ------------------------------------------------------------ indexes ---- */

static int build_index(struct tp_table *t, uint32_t c)
{
	struct tp_index *ix = t->cols[c].index;
	size_t i, n = t->n_rows;
	int64_t prev = 0;
	int rc;

	if (!ix) {
		ix = calloc(1, sizeof(*ix));
		if (!ix)
			return -ENOMEM;
		t->cols[c].index = ix;
	}
	free(ix->rows);
	ix->n = 0;
	ix->generation = 0;
	ix->rows = malloc((n ? n : 1) * sizeof(*ix->rows));
	rc = ix->rows ? build_order(t, c, -1, NULL, ix->rows) : -ENOMEM;
	if (rc < 0) {
		free(ix->rows);
		ix->rows = NULL;
		return rc;
	}
	ix->n_distinct = 0;
	for (i = 0; i < n; i++) {
		int64_t v = tp_get_int(t, c, ix->rows[i]);

		if (i == 0 || v != prev)
			ix->n_distinct++;
		prev = v;
	}
	ix->n = n;
	ix->generation = t->generation;
	return 0;
}

size_t tp_col_distinct_hint(const struct tp_table *t, uint32_t c)
{
	return t->cols[c].index ? t->cols[c].index->n_distinct : 0;
}

int tp_col_index_build(struct tp_table *t, uint32_t c)
{
	const uint32_t *rows;
	int64_t n = tp_col_lookup(t, c, 0, &rows);

	return n < 0 ? (int)n : 0;
}

/* Packed columns of at most this many bits are counted with a bitmap. */
#define COUNT_MAX_BITS 20u

int tp_col_index_count(struct tp_table *t, uint32_t c)
{
	const struct tp_col *col = &t->cols[c];
	struct tp_index *ix = col->index;
	uint64_t *seen;
	size_t i, n = 0;

	if (col->enc != TP_ENC_BITS || col->bits > COUNT_MAX_BITS)
		return tp_col_index_build(t, c);
	if (!ix) {
		ix = calloc(1, sizeof(*ix));
		if (!ix)
			return -ENOMEM;
		t->cols[c].index = ix;
	}
	seen = calloc(((size_t)1 << col->bits) / 64 + 1, sizeof(*seen));
	if (!seen)
		return -ENOMEM;
	/* A code per value (0: NULL, which counts as one, as in build_index). */
	for (i = 0; i < t->n_rows; i++) {
		uint64_t code = tp_bits_get(col->data, col->bits, col->mask, i);

		if (!(seen[code / 64] >> (code % 64) & 1)) {
			seen[code / 64] |= (uint64_t)1 << (code % 64);
			n++;
		}
	}
	free(seen);
	free(ix->rows);
	ix->rows = NULL;
	ix->n = t->n_rows;
	ix->n_distinct = n;
	ix->generation = t->generation;
	return 0;
}

int64_t tp_col_lookup(struct tp_table *t, uint32_t c, int64_t v, const uint32_t **out_rows)
{
	struct tp_index *ix = t->cols[c].index;
	size_t lo = 0, hi, first;
	int rc;

	if (!ix || !ix->rows || ix->generation != t->generation || ix->n != t->n_rows) {
		rc = build_index(t, c);
		if (rc < 0)
			return rc;
		ix = t->cols[c].index;
	}
	hi = ix->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (tp_get_int(t, c, ix->rows[mid]) < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo;
	hi = ix->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (tp_get_int(t, c, ix->rows[mid]) <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	*out_rows = ix->rows + first;
	return (int64_t)(lo - first);
}

/* ------------------------------------------------------------ orders ---- */

struct triple {
	int64_t a, b;
	uint32_t row;
};

static int cmp_triple(const void *x, const void *y)
{
	const struct triple *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	return p->row < q->row ? -1 : p->row > q->row;
}

/* Per order column, string id -> rank of its text (NULL: order by id). */
struct order_keys {
	const uint32_t *rank1, *rank2;
};

/* Cell as a sort key: NULL below every value. */
static PFC_ALWAYS_INLINE int64_t key_of(const struct tp_table *t, int c, const uint32_t *rank,
					size_t row)
{
	int64_t v;

	if (c < 0)
		return 0;
	v = tp_get_int(t, (uint32_t)c, row);
	if (rank)
		return rank[v]; /* string id 0 (NULL) has rank 0 */
	return v; /* TP_NULL_INT is INT64_MIN: already the smallest */
}

static int cmp_by_text(const void *a, const void *b, void *arg)
{
	const struct tp_strings *s = arg;

	return strcmp(tp_str_get(s, *(const uint32_t *)a), tp_str_get(s, *(const uint32_t *)b));
}

/*
 * Ranks of the strings string column @c holds, in byte order of their text
 * (SQLite's BINARY collation), so that ordering by rank orders by text.
 * Return: rank per string id (malloc'd; [0] = 0 for NULL), or NULL.
 */
static uint32_t *text_ranks(const struct tp_table *t, uint32_t c, const struct tp_strings *s)
{
	uint32_t *rank = calloc((size_t)s->n + 1, sizeof(*rank)), *seen = NULL, n_seen = 0, i;
	size_t row;

	if (!rank)
		return NULL;
	/* rank[] first marks the ids present, then holds their ranks. */
	for (row = 0; row < t->n_rows; row++) {
		uint32_t id = tp_get_str(t, c, row);

		if (id && id <= s->n)
			rank[id] = 1;
	}
	for (i = 1; i <= s->n; i++)
		n_seen += rank[i];
	seen = malloc((n_seen ? n_seen : 1) * sizeof(*seen));
	if (!seen) {
		free(rank);
		return NULL;
	}
	n_seen = 0;
	for (i = 1; i <= s->n; i++) {
		if (rank[i])
			seen[n_seen++] = i;
	}
	qsort_r(seen, n_seen, sizeof(*seen), cmp_by_text, (void *)s);
	for (i = 0; i < n_seen; i++)
		rank[seen[i]] = i + 1;
	free(seen);
	return rank;
}

static int build_order(const struct tp_table *t, uint32_t c1, int c2, const struct order_keys *ok,
		       uint32_t *rows)
{
	const uint32_t *rank1 = ok ? ok->rank1 : NULL, *rank2 = ok ? ok->rank2 : NULL;
	size_t n = t->n_rows, i;
	int64_t min1 = INT64_MAX, max1 = INT64_MIN, min2 = INT64_MAX, max2 = INT64_MIN;
	uint64_t r1, r2;

	for (i = 0; i < n; i++) {
		int64_t a = key_of(t, (int)c1, rank1, i), b = key_of(t, c2, rank2, i);

		min1 = a < min1 ? a : min1;
		max1 = a > max1 ? a : max1;
		min2 = b < min2 ? b : min2;
		max2 = b > max2 ? b : max2;
	}
	if (n == 0)
		return 0;
	r1 = (uint64_t)max1 - (uint64_t)min1 + 1;
	r2 = (uint64_t)max2 - (uint64_t)min2 + 1;
	if (r1 != 0 && r2 != 0 && r1 <= COUNTING_SORT_MAX_KEYS && r2 <= COUNTING_SORT_MAX_KEYS &&
	    r1 * r2 <= COUNTING_SORT_MAX_KEYS) {
		/* Counting sort on the combined key: stable, so rows stay ascending. */
		uint32_t *count = calloc(r1 * r2 + 1, sizeof(*count));

		if (!count)
			return -ENOMEM;
		for (i = 0; i < n; i++) {
			uint64_t k = ((uint64_t)key_of(t, (int)c1, rank1, i) - (uint64_t)min1) * r2 +
				     ((uint64_t)key_of(t, c2, rank2, i) - (uint64_t)min2);

			count[k + 1]++;
		}
		for (i = 1; i <= r1 * r2; i++)
			count[i] += count[i - 1];
		for (i = 0; i < n; i++) {
			uint64_t k = ((uint64_t)key_of(t, (int)c1, rank1, i) - (uint64_t)min1) * r2 +
				     ((uint64_t)key_of(t, c2, rank2, i) - (uint64_t)min2);

			rows[count[k]++] = (uint32_t)i;
		}
		free(count);
		return 0;
	}
	{
		struct triple *p = malloc(n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		for (i = 0; i < n; i++) {
			p[i].a = key_of(t, (int)c1, rank1, i);
			p[i].b = key_of(t, c2, rank2, i);
			p[i].row = (uint32_t)i;
		}
		sort_n(p, n, sizeof(*p), cmp_triple);
		for (i = 0; i < n; i++)
			rows[i] = p[i].row;
		free(p);
	}
	return 0;
}

int64_t tp_table_order(struct tp_table *t, uint32_t c1, int c2, const struct tp_strings *strings,
		       const uint32_t **out_rows)
{
	struct order_keys ok = {NULL, NULL};
	struct tp_order *o = NULL;
	uint32_t i;
	int rc;

	for (i = 0; i < t->n_orders; i++)
		if (t->orders[i].c1 == c1 && t->orders[i].c2 == c2)
			o = &t->orders[i];
	if (o && o->generation == t->generation) {
		*out_rows = o->rows;
		return (int64_t)t->n_rows;
	}
	if (!o) {
		if (!t->orders) {
			t->orders = calloc(MAX_ORDERS, sizeof(*t->orders));
			if (!t->orders)
				return -ENOMEM;
		}
		if (t->n_orders == MAX_ORDERS) {
			tp_rows_release(t->orders[0].rows);
			memmove(t->orders, t->orders + 1, (MAX_ORDERS - 1) * sizeof(*t->orders));
			t->n_orders--;
		}
		o = &t->orders[t->n_orders++];
		o->c1 = c1;
		o->c2 = c2;
		o->rows = NULL;
	}
	tp_rows_release(o->rows);
	o->rows = row_buf_new(t->n_rows);
	o->generation = 0;
	if (!o->rows)
		return -ENOMEM;
	if (strings && t->specs[c1].type == TP_STR)
		ok.rank1 = text_ranks(t, c1, strings);
	if (strings && c2 >= 0 && t->specs[c2].type == TP_STR)
		ok.rank2 = text_ranks(t, (uint32_t)c2, strings);
	rc = -ENOMEM;
	if ((ok.rank1 || !strings || t->specs[c1].type != TP_STR) &&
	    (ok.rank2 || !strings || c2 < 0 || t->specs[c2].type != TP_STR))
		rc = build_order(t, c1, c2, &ok, o->rows);
	free((void *)ok.rank1);
	free((void *)ok.rank2);
	if (rc < 0)
		return rc;
	o->generation = t->generation;
	*out_rows = o->rows;
	return (int64_t)t->n_rows;
}

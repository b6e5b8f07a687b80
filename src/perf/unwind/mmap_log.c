// SPDX-License-Identifier: Apache-2.0
/*
 * mmap_log.c - executable mappings per process from the kernel's records
 * (see mmap_log.h): a sorted array per process, replaced where a new
 * mapping overlaps; exits queued and expired after a grace period.
 */
#include "perf/unwind/mmap_log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"

struct mlog_proc {
	struct mmap_log_map *maps; /* sorted by addr, not overlapping */
	size_t n, cap;
	uint64_t exited_ns;        /* 0 while alive */
	uint64_t added;            /* tick of the last change, for eviction */
};

void mmap_log_init(struct mmap_log *l)
{
	memset(l, 0, sizeof(*l));
	hmap_init(&l->procs);
}

static void proc_free(struct mlog_proc *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->n; i++)
		free((char *)p->maps[i].path);
	free(p->maps);
	free(p);
}

static void drop(struct mmap_log *l, uint32_t pid)
{
	uint64_t v;

	if (hmap_del(&l->procs, pid, &v) == 0)
		proc_free((struct mlog_proc *)(uintptr_t)v);
}

void mmap_log_fini(struct mmap_log *l)
{
	struct hmap_iter it;
	uint64_t k, v;

	hmap_iter_init(&it, &l->procs);
	while (hmap_iter_next(&it, &k, &v))
		proc_free((struct mlog_proc *)(uintptr_t)v);
	hmap_fini(&l->procs);
	free(l->exits);
	memset(l, 0, sizeof(*l));
}

static struct mlog_proc *find(const struct mmap_log *l, uint32_t pid)
{
	uint64_t v;

	return hmap_get(&l->procs, pid, &v) ? (struct mlog_proc *)(uintptr_t)v : NULL;
}

/* Makes room for one more process: an exited one goes first, else the one
 * changed longest ago. */
static void evict_one(struct mmap_log *l)
{
	struct hmap_iter it;
	uint64_t k, v, best_k = 0, best_rank = UINT64_MAX;
	bool found = false;

	hmap_iter_init(&it, &l->procs);
	while (hmap_iter_next(&it, &k, &v)) {
		const struct mlog_proc *p = (const struct mlog_proc *)(uintptr_t)v;
		/* Exited processes rank below every live one. */
		uint64_t rank = p->exited_ns ? p->added : (1ull << 62) + p->added;

		if (rank < best_rank) {
			best_rank = rank;
			best_k = k;
			found = true;
		}
	}
	if (found) {
		drop(l, (uint32_t)best_k);
		l->procs_evicted++;
	}
}

/* @pid's entry, created empty (and alive) if missing. NULL without memory. */
static struct mlog_proc *get_or_create(struct mmap_log *l, uint32_t pid)
{
	struct mlog_proc *p = find(l, pid);

	if (p)
		return p;
	if (l->procs.len >= MMAP_LOG_MAX_PROCS)
		evict_one(l);
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	if (hmap_put(&l->procs, pid, (uint64_t)(uintptr_t)p) < 0) {
		free(p);
		return NULL;
	}
	return p;
}

void mmap_log_add(struct mmap_log *l, uint32_t pid, const struct mmap_log_map *m)
{
	struct mlog_proc *p;
	uint64_t end = m->addr + m->len;
	size_t i, j, at;
	char *path;

	if (!m->path || m->path[0] != '/' || !m->len || end < m->addr)
		return;
	p = get_or_create(l, pid);
	if (!p)
		return;
	/* An exited pid keeps its mark: another CPU's ring may still hold
	 * mappings made before the exit (rings are read one after another). */
	p->added = ++l->tick;
	/* Drop what the new mapping covers, keep the rest in order. */
	for (i = j = 0; i < p->n; i++) {
		const struct mmap_log_map *o = &p->maps[i];

		if (o->addr < end && m->addr < o->addr + o->len)
			free((char *)o->path);
		else
			p->maps[j++] = *o;
	}
	p->n = j;
	if (p->n >= MMAP_LOG_MAX_MAPS) {
		l->maps_dropped++;
		return;
	}
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		struct mmap_log_map *nm = realloc(p->maps, cap * sizeof(*nm));

		if (!nm)
			return;
		p->maps = nm;
		p->cap = cap;
	}
	path = strdup(m->path);
	if (!path)
		return;
	for (at = p->n; at > 0 && p->maps[at - 1].addr > m->addr; at--)
		;
	memmove(&p->maps[at + 1], &p->maps[at], (p->n - at) * sizeof(p->maps[0]));
	p->maps[at] = *m;
	p->maps[at].path = path;
	p->n++;
}

void mmap_log_fork(struct mmap_log *l, uint32_t parent, uint32_t child)
{
	const struct mlog_proc *pp = find(l, parent);
	struct mlog_proc *c;
	size_t i;

	if (!pp || !pp->n || parent == child)
		return;
	drop(l, child);
	/* Re-fetch: creating the child may evict (never the parent: it was
	 * just looked up, but an exited parent can rank lowest). */
	c = get_or_create(l, child);
	pp = find(l, parent);
	if (!c || !pp)
		return;
	c->maps = malloc(pp->n * sizeof(*c->maps));
	if (!c->maps)
		return;
	c->cap = pp->n;
	c->added = ++l->tick;
	for (i = 0; i < pp->n; i++) {
		c->maps[c->n] = pp->maps[i];
		c->maps[c->n].path = strdup(pp->maps[i].path);
		if (c->maps[c->n].path)
			c->n++;
	}
}

void mmap_log_exited(struct mmap_log *l, uint32_t pid, uint64_t now_ns)
{
	struct mlog_proc *p = find(l, pid);

	if (!p)
		return;
	p->exited_ns = now_ns ? now_ns : 1;
	if (l->exits_head && l->exits_head * 2 >= l->n_exits) {
		memmove(l->exits, l->exits + l->exits_head,
			(l->n_exits - l->exits_head) * sizeof(*l->exits));
		l->n_exits -= l->exits_head;
		l->exits_head = 0;
	}
	if (l->n_exits == l->cap_exits) {
		size_t cap = l->cap_exits ? l->cap_exits * 2 : 64;
		struct mmap_log_exit *ne = realloc(l->exits, cap * sizeof(*ne));

		if (!ne) {
			drop(l, pid); /* cannot remember when: forget now */
			return;
		}
		l->exits = ne;
		l->cap_exits = cap;
	}
	l->exits[l->n_exits].pid = pid;
	l->exits[l->n_exits].ns = p->exited_ns;
	l->n_exits++;
}

void mmap_log_expire(struct mmap_log *l, uint64_t now_ns)
{
	while (l->exits_head < l->n_exits) {
		const struct mmap_log_exit *e = &l->exits[l->exits_head];
		struct mlog_proc *p;

		if (now_ns - e->ns < MMAP_LOG_EXIT_GRACE_NS)
			break;
		p = find(l, e->pid);
		/* Only if it is still that exit (the pid was not reused since). */
		if (p && p->exited_ns == e->ns)
			drop(l, e->pid);
		l->exits_head++;
	}
	if (l->exits_head == l->n_exits)
		l->exits_head = l->n_exits = 0;
}

int mmap_log_maps_text(const struct mmap_log *l, uint32_t pid, struct buf *out)
{
	const struct mlog_proc *p = find(l, pid);
	size_t i;

	buf_reset(out);
	if (!p || !p->n)
		return -ENOENT;
	for (i = 0; i < p->n; i++) {
		const struct mmap_log_map *m = &p->maps[i];
		uint64_t start = m->pgoff <= m->addr ? m->addr - m->pgoff : m->addr;
		/* libdwfl skips lines without a device and inode (anonymous). */
		uint64_t ino = m->ino || m->maj || m->min ? m->ino
							  : (fnv1a64(m->path, strlen(m->path)) | 1);

		if (buf_appendf(out, "%llx-%llx r-xp 00000000 %02x:%02x %llu %s\n",
				(unsigned long long)start, (unsigned long long)(m->addr + m->len),
				m->maj, m->min, (unsigned long long)ino, m->path) < 0)
			return -ENOMEM;
	}
	return 0;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * hp_unwinder.c - heapprofd's unwinder thread (see hp_unwinder.h). Each
 * client has a ring and the daemon's end of its wake-up socket; a byte
 * there (or a drain request) makes the thread read the ring until it is
 * empty, then mark it sleeping. A record is copied out of shared memory
 * before it is trusted; a ring that breaks its rules is given up
 * (counted, the client is told through the ring header) and never read
 * again. Stacks are unwound by traced_perf's DWARF unwinder from the
 * registers and stack bytes the client copied, as a perf sample's.
 */
#include "heapprofd/hp_unwinder.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/evloop.h"
#include "base/hash.h"
#include "base/hmap.h"
#include "base/log.h"
#include "heapprofd/ring/hp_ring.h"
#include "perf/unwind/unwind.h"

/* Records read from one ring before the others get a turn. */
#define HP_RECORDS_PER_TURN 4096u
/* Callstacks remembered (ids keep growing; past this the table restarts
 * and a callstack seen again is sent again under a new id). */
#define HP_MAX_CSTACKS (1u << 20)

struct uclient {
	struct uclient *next;
	struct hp_unwinder *u;
	uint32_t id, pid;
	struct hp_ring ring;
	int wake_fd;
	uint64_t watch;
	bool corrupt, scheduled;
	uint64_t records_read;
	struct hp_batch *batch;
};

struct hp_unwinder {
	pthread_t thread;
	bool started;
	struct evloop *loop;      /* the unwinder thread's */
	struct evloop *main_loop; /* batches go there */
	hp_batch_cb cb;
	void *user;
	struct unwinder *unw;
	struct uclient *clients;
	struct hmap cstacks; /* content hash -> id */
	uint64_t next_cstack;
	struct unwind_result res;
};

struct task {
	struct hp_unwinder *u;
	int kind;
	uint32_t client_id, pid;
	int ring_fd, wake_fd;
	uint64_t ring_bytes, token;
};

enum { T_ADD = 1, T_DRAIN, T_REMOVE, T_QUIT };

struct delivery {
	struct hp_unwinder *u;
	struct hp_batch *b;
};

static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000ull + (uint64_t)ts.tv_nsec / 1000;
}

/* A client's CLOCK_BOOTTIME timestamp on CLOCK_MONOTONIC (they differ by
 * the time suspended, read now); 0 for one from the future or garbage. */
static uint64_t boot_to_mono_ns(uint64_t boot_ns)
{
	struct timespec b, m;
	uint64_t bn, mn;

	clock_gettime(CLOCK_BOOTTIME, &b);
	clock_gettime(CLOCK_MONOTONIC, &m);
	bn = (uint64_t)b.tv_sec * 1000000000ull + (uint64_t)b.tv_nsec;
	mn = (uint64_t)m.tv_sec * 1000000000ull + (uint64_t)m.tv_nsec;
	if (boot_ns > bn || bn - mn > boot_ns)
		return 0;
	return boot_ns - (bn - mn);
}

static struct uclient *find(struct hp_unwinder *u, uint32_t id)
{
	struct uclient *c;

	for (c = u->clients; c; c = c->next) {
		if (c->id == id)
			return c;
	}
	return NULL;
}

/* --------------------------------------------------------- batches ---- */

static void on_delivery(void *user)
{
	struct delivery *d = user;

	d->u->cb(d->b, d->u->user);
	free(d);
}

/* The last batch of a client this thread holds no ring for (it could not
 * map it, or closed it already): the main thread waits for a "gone"
 * batch before it dumps and forgets the process, so one always comes
 * (without it a process whose ring failed to start was never dumped and
 * its daemon never finished). */
static void send_gone(struct hp_unwinder *u, uint32_t client_id)
{
	struct hp_batch *b = calloc(1, sizeof(*b));
	struct delivery *d = malloc(sizeof(*d));

	if (!b || !d) {
		free(b);
		free(d);
		LOG_W("client %u: out of memory for its last batch", client_id);
		return;
	}
	b->client_id = client_id;
	b->gone = true;
	d->u = u;
	d->b = b;
	if (evloop_post(u->main_loop, on_delivery, d) < 0) {
		free(b);
		free(d);
	}
}

static struct hp_batch *batch_of(struct uclient *c)
{
	if (!c->batch) {
		/* Only the header zeroed: items are written as they are added
		 * (a batch goes out whenever the reader sleeps, often with a few
		 * items; zeroing all 2,048 was a visible part of its time). */
		c->batch = malloc(sizeof(*c->batch));
		if (c->batch) {
			memset(c->batch, 0, offsetof(struct hp_batch, items));
			c->batch->client_id = c->id;
		}
	}
	return c->batch;
}

/* Hand @c's batch (if any, or an empty one when @force) to the main thread. */
static void send_batch(struct uclient *c, bool force)
{
	struct delivery *d;
	struct hp_batch *b = force ? batch_of(c) : c->batch;

	if (!b)
		return;
	c->batch = NULL;
	if (c->ring.hdr) {
		b->client_dropped =
			atomic_load_explicit(&c->ring.hdr->records_dropped, memory_order_relaxed);
		b->client_blocked_us =
			atomic_load_explicit(&c->ring.hdr->blocked_us, memory_order_relaxed);
		b->client_error =
			atomic_load_explicit(&c->ring.hdr->client_error, memory_order_relaxed);
	}
	d = malloc(sizeof(*d));
	if (d) {
		d->u = c->u;
		d->b = b;
	}
	if (!d || evloop_post(c->u->main_loop, on_delivery, d) < 0) {
		struct hp_cstack *s, *next;

		for (s = b->stacks; s; s = next) {
			next = s->next;
			free(s);
		}
		free(b);
		free(d);
		return;
	}
}

static struct hp_item *add_item(struct uclient *c)
{
	struct hp_batch *b = batch_of(c);

	if (b && b->n == HP_BATCH_ITEMS) {
		send_batch(c, false);
		b = batch_of(c);
	}
	if (!b)
		return NULL;
	memset(&b->items[b->n], 0, sizeof(b->items[0]));
	return &b->items[b->n++];
}

static void count_malformed(struct uclient *c)
{
	if (batch_of(c))
		c->batch->malformed++;
}

/* ------------------------------------------------------- callstacks ---- */

static bool is_client_frame(const struct unwind_frame *f)
{
	return f->function && strncmp(f->function, "hp_", 3) == 0;
}

/* The id of the callstack in u->res (frames [first, n)), defining it in
 * @c's batch when new. */
static uint64_t cstack_id(struct hp_unwinder *u, struct uclient *c, size_t first,
			  enum unwind_error err)
{
	const struct unwind_result *r = &u->res;
	const struct unwind_module *last = NULL;
	uint64_t h = 0x84222325cbf29ce4ull, mh = 0, id;
	size_t i, n = r->n - first, bytes, extra = err != UNWIND_ERR_NONE;
	struct hp_cstack *s;
	struct hp_batch *b;
	char *p;

	for (i = first; i < r->n; i++) {
		const struct unwind_frame *f = &r->frames[i];

		if (f->module != last) {
			last = f->module;
			mh = last ? last->key_hash : 0;
		}
		h = hash_mix64(h ^ mh) ^ hash_mix64((last ? f->rel_pc : f->pc) + i);
	}
	h = hash_mix64(h ^ (uint64_t)err ^ (n << 32));
	if (hmap_get(&u->cstacks, h, &id))
		return id;
	if (hmap_len(&u->cstacks) >= HP_MAX_CSTACKS)
		hmap_clear(&u->cstacks);
	bytes = sizeof(*s) + (n + extra) * sizeof(struct hp_frame);
	for (i = first; i < r->n; i++) {
		const struct unwind_frame *f = &r->frames[i];

		if (f->function)
			bytes += strlen(f->function) + 1;
		if (f->module)
			bytes += strlen(f->module->path) + 1 + f->module->build_id_len;
	}
	if (extra)
		bytes += strlen(unwind_error_frame_name(err)) + 1;
	b = batch_of(c);
	s = calloc(1, bytes);
	if (!s || !b) {
		free(s);
		return 0;
	}
	id = ++u->next_cstack;
	if (hmap_put(&u->cstacks, h, id) < 0) {
		free(s);
		return 0;
	}
	s->id = id;
	s->n = n + extra;
	p = (char *)&s->frames[n + extra];
	for (i = 0; i < n; i++) {
		const struct unwind_frame *f = &r->frames[first + i];
		struct hp_frame *o = &s->frames[i];
		size_t l;

		if (f->function) {
			l = strlen(f->function) + 1;
			memcpy(p, f->function, l);
			o->function = p;
			p += l;
		}
		if (f->module) {
			l = strlen(f->module->path) + 1;
			memcpy(p, f->module->path, l);
			o->map_path = p;
			p += l;
			memcpy(p, f->module->build_id, f->module->build_id_len);
			o->build_id = (const uint8_t *)p;
			o->build_id_len = f->module->build_id_len;
			p += f->module->build_id_len;
			o->map_start = f->module->start;
			o->map_end = f->module->end;
			o->rel_pc = f->rel_pc;
		} else {
			o->map_path = "";
			o->rel_pc = f->pc;
		}
	}
	if (extra) {
		size_t l = strlen(unwind_error_frame_name(err)) + 1;

		memcpy(p, unwind_error_frame_name(err), l);
		s->frames[n].function = p;
	}
	s->next = b->stacks;
	b->stacks = s;
	return id;
}

/* ---------------------------------------------------------- records ---- */

static void on_alloc(struct hp_unwinder *u, struct uclient *c, const uint8_t *rec, uint32_t len)
{
	struct hp_rec_alloc a;
	struct perf_sample s;
	struct hp_item *it;
	const uint8_t *stack;
	size_t first = 0;
	unsigned i;

	if (hp_rec_parse_alloc(rec, len, &a, &stack) < 0) {
		count_malformed(c);
		return;
	}
	memset(&s, 0, sizeof(s));
	s.pid = c->pid;
	s.tid = a.tid;
	s.ts = a.ts_ns;
	s.has_regs = true;
	for (i = 0; i < HP_REGS_N; i++)
		s.regs[i] = a.regs[i];
	s.stack = stack;
	s.stack_bytes = a.stack_len;
	u->res.n = 0;
	u->res.stack_top = 0;
	u->res.past_copy = false;
	unwind_sample(u->unw, &s, PERF_UNWIND_DWARF, &u->res);
	/* A frame in no known module, or an unwind that failed at its last
	 * frame: maybe a library mapped since the maps were read (dlopen; its
	 * pcs were seen attributed to libc then). Reread them (see
	 * unwinder_reparse_pc) and unwind again, once. */
	for (i = 0; i < u->res.n; i++) {
		if (u->res.frames[i].module &&
		    (u->res.error == UNWIND_ERR_NONE || i + 1 < u->res.n))
			continue;
		if (unwinder_reparse_pc(u->unw, c->pid, u->res.frames[i].pc,
					boot_to_mono_ns(a.ts_ns))) {
			u->res.n = 0;
			u->res.stack_top = 0;
			u->res.past_copy = false;
			unwind_sample(u->unw, &s, PERF_UNWIND_DWARF, &u->res);
		}
		break;
	}
	/* The client's own frames (hp_*) are not the program's. */
	while (first < u->res.n && is_client_frame(&u->res.frames[first]))
		first++;
	it = add_item(c);
	if (!it)
		return;
	if (u->res.error != UNWIND_ERR_NONE)
		c->batch->unwind_errors++;
	it->kind = HP_ITEM_ALLOC;
	it->heap = a.heap_id;
	it->addr = a.addr;
	it->size = a.sample_size;
	it->ts_ns = a.ts_ns;
	it->cstack = cstack_id(u, c, first, u->res.error);
}

static void on_free(struct uclient *c, const uint8_t *rec, uint32_t len)
{
	struct hp_rec_free f;
	struct hp_item *it;

	if (hp_rec_parse_free(rec, len, &f) < 0) {
		count_malformed(c);
		return;
	}
	it = add_item(c);
	if (!it)
		return;
	it->kind = HP_ITEM_FREE;
	it->heap = f.heap_id;
	it->addr = f.addr;
}

static void read_ring(struct uclient *c);

/* The record's lines, asked for all at once: the unwinder reads its stack
 * copy one frame after another, each read's address from the one before,
 * so each line another CPU just wrote would otherwise be a miss of its
 * own (perf: most of the reader's time, in cfi_rule_step). */
static void prefetch_record(const uint8_t *rec, uint32_t len)
{
	uint32_t off;

	if (len > 16384)
		len = 16384;
	for (off = 64; off < len; off += 64)
		__builtin_prefetch(rec + off, 0, 3);
}

/* A turn that read @n records since @t0: its time goes to unwind_us. */
static void note_time(struct uclient *c, unsigned n, uint64_t t0)
{
	if (n && c->batch)
		c->batch->unwind_us += mono_us() - t0;
}

static void on_continue(void *user)
{
	struct uclient *c = user;

	c->scheduled = false;
	read_ring(c);
}

/* Reads up to a turn's worth; schedules itself again when more is left. */
static void read_ring(struct uclient *c)
{
	struct hp_unwinder *u = c->u;
	uint64_t t0;
	unsigned n;

	if (c->corrupt || !c->ring.hdr)
		return;
	/* The time to read and unwind records, taken per turn (two clock reads
	 * per record were ~5% of the reader's time). */
	t0 = mono_us();
	for (n = 0; n < HP_RECORDS_PER_TURN; n++) {
		const uint8_t *rec;
		uint32_t len, type;
		enum hp_ring_read r = hp_ring_peek(&c->ring, &rec, &len, &type);

		if (r == HP_RING_EMPTY) {
			hp_ring_wake_writers(&c->ring);
			if (hp_ring_sleep(&c->ring)) {
				note_time(c, n, t0);
				send_batch(c, false);
				return;
			}
			continue;
		}
		if (r == HP_RING_CORRUPT) {
			c->corrupt = true;
			if (batch_of(c))
				c->batch->corrupt = true;
			atomic_fetch_or_explicit(&c->ring.hdr->flags,
						 HP_RING_F_CORRUPT | HP_RING_F_SHUTDOWN,
						 memory_order_relaxed);
			send_batch(c, true);
			return;
		}
		c->records_read++;
		prefetch_record(rec, len);
		if (batch_of(c))
			c->batch->records++;
		if (type == HP_REC_ALLOC)
			on_alloc(u, c, rec, len);
		else if (type == HP_REC_FREE)
			on_free(c, rec, len);
		else if (batch_of(c))
			c->batch->malformed++;
		hp_ring_consume(&c->ring, len);
		/* block_client writers wait for room: woken once an eighth of
		 * the ring is free (each wake-up of all of them per few
		 * records made them take turns at a full ring). */
		if ((n & 31) == 31 && hp_ring_free_bytes(&c->ring) >= c->ring.data_size / 8)
			hp_ring_wake_writers(&c->ring);
	}
	hp_ring_wake_writers(&c->ring);
	note_time(c, n, t0);
	send_batch(c, false);
	if (!c->scheduled && evloop_post(u->loop, on_continue, c) == 0)
		c->scheduled = true;
}

/* Reads what the ring holds now: up to the write position seen first (at
 * most the ring's size), so a client that keeps writing cannot keep us
 * here, and one that is gone leaves nothing behind however many records
 * its ring holds (a count of turns bounded it before: 64 turns of 4,096
 * records are less than a large ring of frees). Stops at a record not
 * yet published: its writer still runs, or died in it. */
static void drain_all(struct uclient *c)
{
	uint64_t end;

	if (c->corrupt || !c->ring.hdr)
		return;
	end = atomic_load_explicit(&c->ring.hdr->write_pos, memory_order_acquire);
	if (end - c->ring.read_pos > c->ring.data_size)
		end = c->ring.read_pos + c->ring.data_size;
	while (!c->corrupt && c->ring.hdr && (int64_t)(end - c->ring.read_pos) > 0) {
		const uint8_t *rec;
		uint32_t len, type;

		if (hp_ring_peek(&c->ring, &rec, &len, &type) != HP_RING_RECORD)
			break;
		read_ring(c);
	}
}

static void close_client(struct uclient *c, bool exited)
{
	struct hp_unwinder *u = c->u;
	struct uclient **pp;

	for (pp = &u->clients; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	if (c->watch)
		evloop_del(u->loop, c->watch);
	if (c->wake_fd >= 0)
		close(c->wake_fd);
	c->wake_fd = -1;
	if (c->ring.hdr) {
		LOG_I("heapprofd: ring of pid %u closed: %llu records read, up to "
		      "%llu of %llu bytes",
		      c->pid, (unsigned long long)c->records_read,
		      (unsigned long long)c->ring.read_pos,
		      (unsigned long long)atomic_load(&c->ring.hdr->write_pos));
		hp_ring_shutdown(&c->ring);
		send_batch(c, false);
		hp_ring_unmap(&c->ring);
	}
	batch_of(c);
	if (c->batch) {
		c->batch->gone = true;
		c->batch->exited = exited;
	}
	send_batch(c, true);
	unwinder_forget(u->unw, c->pid);
	c->scheduled = false;
	/* A continuation may still be queued: it finds no ring and returns;
	 * the struct itself is freed by a task posted after it. */
}

static void free_client(void *user)
{
	free(user);
}

static void on_wake(int fd, unsigned revents, void *user)
{
	struct uclient *c = user;
	char buf[256];
	ssize_t n;
	bool eof = false;

	for (;;) {
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0)
			continue;
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
			eof = true;
		break;
	}
	if (revents & (EVLOOP_HUP | EVLOOP_ERROR))
		eof = true;
	read_ring(c);
	if (eof) {
		/* The process is gone (or closed its end): what it wrote is
		 * still in the ring. */
		drain_all(c);
		close_client(c, true);
		evloop_post(c->u->loop, free_client, c);
	}
}

/* The periodic look at every ring (see HP_RING_READ_PERIOD_MS). */
static void on_tick(void *user)
{
	struct hp_unwinder *u = user;
	struct uclient *c;

	for (c = u->clients; c; c = c->next) {
		if (!c->scheduled)
			read_ring(c);
	}
}

/* ------------------------------------------------------------ tasks ---- */

static void on_task(void *user)
{
	struct task *t = user;
	struct hp_unwinder *u = t->u;
	struct uclient *c = find(u, t->client_id);

	switch (t->kind) {
	case T_ADD:
		if (c) {
			close(t->ring_fd);
			close(t->wake_fd);
			break;
		}
		c = calloc(1, sizeof(*c));
		if (!c || hp_ring_map(t->ring_fd, t->ring_bytes, &c->ring) < 0) {
			LOG_W("client %u: cannot map its ring, ignoring", t->client_id);
			free(c);
			close(t->ring_fd);
			close(t->wake_fd);
			send_gone(u, t->client_id);
			break;
		}
		close(t->ring_fd);
		c->u = u;
		c->id = t->client_id;
		c->pid = t->pid;
		c->wake_fd = t->wake_fd;
		if (evloop_add_fd(u->loop, c->wake_fd, EVLOOP_READ, on_wake, c, &c->watch) < 0) {
			LOG_W("client %u: cannot watch its wake-up socket, ignoring", t->client_id);
			hp_ring_unmap(&c->ring);
			close(c->wake_fd);
			free(c);
			send_gone(u, t->client_id);
			break;
		}
		c->next = u->clients;
		u->clients = c;
		/* The process's maps now, while it surely runs: a process that
		 * exits before its samples are read leaves no maps to read. */
		unwinder_forget(u->unw, c->pid);
		unwind_symbolize(u->unw, c->pid, NULL, 0, &u->res);
		read_ring(c);
		break;
	case T_DRAIN: {
		struct hp_batch *b;

		if (c)
			drain_all(c);
		b = c ? batch_of(c) : calloc(1, sizeof(*b));
		if (!b)
			break;
		b->client_id = t->client_id;
		b->drained = true;
		b->drain_token = t->token;
		if (c) {
			send_batch(c, true);
		} else {
			struct delivery *d = malloc(sizeof(*d));

			if (d) {
				d->u = u;
				d->b = b;
			}
			if (!d || evloop_post(u->main_loop, on_delivery, d) < 0) {
				free(d);
				free(b);
				break;
			}
		}
		break;
	}
	case T_REMOVE:
		if (c) {
			drain_all(c);
			close_client(c, false);
			evloop_post(u->loop, free_client, c);
		} else {
			send_gone(u, t->client_id);
		}
		break;
	case T_QUIT:
		evloop_quit(u->loop);
		break;
	}
	free(t);
}

static int post(struct hp_unwinder *u, int kind, uint32_t client_id, uint32_t pid, int ring_fd,
		uint64_t ring_bytes, int wake_fd, uint64_t token)
{
	struct task *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->u = u;
	t->kind = kind;
	t->client_id = client_id;
	t->pid = pid;
	t->ring_fd = ring_fd;
	t->ring_bytes = ring_bytes;
	t->wake_fd = wake_fd;
	t->token = token;
	if (evloop_post(u->loop, on_task, t) < 0) {
		free(t);
		return -ENOMEM;
	}
	return 0;
}

int hp_unwinder_add(struct hp_unwinder *u, uint32_t client_id, uint32_t pid, int ring_fd,
		    uint64_t ring_bytes, int wake_fd)
{
	int rc = post(u, T_ADD, client_id, pid, ring_fd, ring_bytes, wake_fd, 0);

	if (rc < 0) {
		close(ring_fd);
		close(wake_fd);
	}
	return rc;
}

int hp_unwinder_drain(struct hp_unwinder *u, uint32_t client_id, uint64_t token)
{
	return post(u, T_DRAIN, client_id, 0, -1, 0, -1, token);
}

int hp_unwinder_remove(struct hp_unwinder *u, uint32_t client_id)
{
	return post(u, T_REMOVE, client_id, 0, -1, 0, -1, 0);
}

/* ----------------------------------------------------------- thread ---- */

static void *thread_main(void *arg)
{
	struct hp_unwinder *u = arg;

	evloop_run(u->loop);
	return NULL;
}

int hp_unwinder_create(struct evloop *main_loop, hp_batch_cb cb, void *user,
		       struct hp_unwinder **out)
{
	struct hp_unwinder *u = calloc(1, sizeof(*u));
	sigset_t all, old;
	int rc;

	if (!u)
		return -ENOMEM;
	u->main_loop = main_loop;
	u->cb = cb;
	u->user = user;
	hmap_init(&u->cstacks);
	rc = evloop_create(&u->loop);
	if (rc == 0)
		rc = unwinder_create(&u->unw);
	/* Writers wake a sleeping reader only once a ring fills up a bit;
	 * below that, this look finds their records. */
	if (rc == 0)
		rc = evloop_add_timer(u->loop, HP_RING_READ_PERIOD_MS, HP_RING_READ_PERIOD_MS,
				      on_tick, u, NULL);
	if (rc < 0)
		goto fail;
	/* Signals stay with the main thread's loop. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = -pthread_create(&u->thread, NULL, thread_main, u);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc < 0)
		goto fail;
	u->started = true;
	*out = u;
	return 0;
fail:
	if (u->unw)
		unwinder_destroy(u->unw);
	evloop_destroy(u->loop);
	hmap_fini(&u->cstacks);
	free(u);
	return rc;
}

void hp_unwinder_destroy(struct hp_unwinder *u)
{
	if (!u)
		return;
	if (u->started) {
		if (post(u, T_QUIT, 0, 0, -1, 0, -1, 0) < 0)
			evloop_quit(u->loop);
		pthread_join(u->thread, NULL);
	}
	while (u->clients) {
		struct uclient *c = u->clients;

		u->clients = c->next;
		if (c->watch)
			evloop_del(u->loop, c->watch);
		if (c->wake_fd >= 0)
			close(c->wake_fd);
		if (c->ring.hdr) {
			hp_ring_shutdown(&c->ring);
			hp_ring_unmap(&c->ring);
		}
		free(c->batch);
		free(c);
	}
	evloop_run_once(u->loop, 0);
	evloop_destroy(u->loop);
	unwinder_destroy(u->unw);
	hmap_fini(&u->cstacks);
	free(u);
}

// SPDX-License-Identifier: Apache-2.0
/*
 * hp_client.c - the heapprofd client (see hp_client.h): connecting (a
 * central heapprofd's socket, else a private heapprofd forked for this
 * process, as Perfetto does on Linux), the control messages that start
 * and stop a session, the Poisson sampler and the records written into
 * the shared ring. Runs inside malloc on any thread: raw syscalls and
 * static storage only; a thread inside the client sets in_hook so the
 * allocations it causes (pthread_getattr_np, dladdr) go straight to libc.
 */
#include "heapprofd/client/hp_client.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "heapprofd/ring/hp_ring.h"

enum hp_mode {
	MODE_NONE = 0, /* not connected (yet, or never: no heapprofd) */
	MODE_POLLING,  /* connected, no session: look at the socket now and then */
	MODE_ACTIVE,   /* a session profiles this process */
	MODE_DEAD,     /* heapprofd went away or the client failed: never again */
};

HP_HIDDEN _Atomic uint32_t hp_gen = 1;
/* Marks a sampled block (the word before it); the top bit makes it differ
 * from any glibc chunk size found there for other blocks. */
HP_HIDDEN uint64_t hp_cookie = 0xa5c3e1f00d5eedull | (1ull << 63);
HP_HIDDEN HP_TLS struct hp_thread hp_tls;
static HP_TLS uint32_t t_tid;

static struct {
	_Atomic int init_state; /* 0 none, 1 running, 2 done */
	_Atomic int mode;
	int ctl_fd;
	int wake_fd;
	struct hp_ring ring;
	_Atomic int ring_live;
	/* A full ring's read position, and since when it stands (see
	 * reserve()). */
	_Atomic uint64_t full_read_pos, full_since_ns;
	_Atomic uint64_t intervals[HP_MAX_HEAPS];
	bool block;
	uint64_t timeout_us;
	_Atomic int poll_lock;
	_Atomic int send_lock;
	uint32_t pid;
	uint64_t main_stack_hi;
	uint64_t main_stack_end; /* __libc_stack_end: argv, env and auxv lie above */
	uint64_t tls_static;     /* the TCB and static TLS atop a thread's stack */
	bool central;
} g = {.ctl_fd = -1, .wake_fd = -1};

/* Threads writing into the ring now, counted in shards (by tid) of a
 * cache line each: one counter every thread adds to on every record made
 * that line bounce between the CPUs, and with it the read-mostly state
 * above that shared it. */
#define HP_INFLIGHT_SHARDS 8u
static struct {
	_Alignas(64) _Atomic uint32_t n;
} inflight[HP_INFLIGHT_SHARDS];

static uint32_t my_tid(void)
{
	if (!t_tid)
		t_tid = (uint32_t)syscall(SYS_gettid);
	return t_tid;
}

static uint64_t now_boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void bump_gen(void)
{
	atomic_fetch_add_explicit(&hp_gen, 1, memory_order_release);
	/* 0 means "never refreshed" in a thread's state. */
	if (atomic_load_explicit(&hp_gen, memory_order_relaxed) == 0)
		atomic_fetch_add_explicit(&hp_gen, 1, memory_order_release);
}

/* ---------------------------------------------------------- sampler ---- */

static uint64_t rng_next(struct hp_thread *t)
{
	uint64_t x = t->rng;

	if (!x)
		x = now_boottime_ns() ^ ((uint64_t)my_tid() << 32) ^ 0x9e3779b97f4a7c15ull;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	t->rng = x;
	return x;
}

/* Bytes to the next sample: exponential with mean @interval, so samples
 * form a Poisson process over the bytes allocated. */
static uint64_t next_interval(struct hp_thread *t, uint64_t interval)
{
	double u = (double)((rng_next(t) >> 11) + 1) * (1.0 / 9007199254740993.0);
	double v = -log(u) * (double)interval;

	if (v < 1.0)
		return 1;
	if (v > 1e18)
		return (uint64_t)1e18;
	return (uint64_t)v;
}

static void poll_ctl(bool wait_busy);

void hp_thread_refresh(struct hp_thread *t)
{
	uint32_t gen = atomic_load_explicit(&hp_gen, memory_order_acquire);
	int mode;
	uint64_t iv;

	if (atomic_load_explicit(&g.init_state, memory_order_acquire) != 2) {
		hp_client_init();
		gen = atomic_load_explicit(&hp_gen, memory_order_acquire);
	}
	mode = atomic_load_explicit(&g.mode, memory_order_acquire);
	/* The poll budget ran out: no session, or one that has not (yet)
	 * given libc.malloc an interval (its HEAP_INTERVAL may come after the
	 * START). */
	if (t->gen == gen && (mode == MODE_POLLING || (mode == MODE_ACTIVE && !t->interval))) {
		poll_ctl(true);
		gen = atomic_load_explicit(&hp_gen, memory_order_acquire);
		mode = atomic_load_explicit(&g.mode, memory_order_acquire);
	}
	iv = mode == MODE_ACTIVE
		     ? atomic_load_explicit(&g.intervals[HP_HEAP_MALLOC], memory_order_relaxed)
		     : 0;
	if (iv) {
		if (iv != t->interval || t->gen == 0 || t->left > 64 * iv)
			t->left = next_interval(t, iv);
	} else {
		t->left = mode == MODE_POLLING || mode == MODE_ACTIVE ? HP_POLL_BYTES : UINT64_MAX;
	}
	t->interval = iv;
	t->gen = gen;
}

uint64_t hp_sample_size(struct hp_thread *t, uint64_t size)
{
	uint64_t k = 0;

	if (!t->interval) {
		if (size < t->left)
			t->left -= size;
		else
			hp_thread_refresh(t);
		return 0;
	}
	if (size >= t->interval)
		return size;
	while (t->left <= size) {
		size -= t->left;
		t->left = next_interval(t, t->interval);
		k++;
	}
	t->left -= size;
	return k * t->interval;
}

uint64_t hp_heap_interval(uint32_t heap)
{
	if (heap >= HP_MAX_HEAPS || atomic_load_explicit(&g.mode, memory_order_acquire) != MODE_ACTIVE)
		return 0;
	return atomic_load_explicit(&g.intervals[heap], memory_order_relaxed);
}

/* ------------------------------------------------------------ stack ---- */

static uint64_t stack_end_slow(struct hp_thread *t, uint64_t sp);

/* The end of the stack holding @sp, or 0 if it cannot be known. */
static inline uint64_t stack_end(struct hp_thread *t, uint64_t sp)
{
	if (t->stack_hi && sp >= t->stack_lo && sp < t->stack_hi)
		return t->stack_top;
	return stack_end_slow(t, sp);
}

/* Not inlined: its locals would grow the frame of the sampling path,
 * which every sample copies with the stack. */
__attribute__((noinline)) static uint64_t stack_end_slow(struct hp_thread *t, uint64_t sp)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;
	stack_t ss;

	if (my_tid() == g.pid && g.main_stack_hi && sp < g.main_stack_hi &&
	    g.main_stack_hi - sp < (256ull << 20)) {
		/* The frames end at _start, below argv and the environment. */
		if (g.main_stack_end > sp && g.main_stack_end + 256 < g.main_stack_hi)
			return g.main_stack_end + 256;
		return g.main_stack_hi;
	}
	if (my_tid() != g.pid && pthread_getattr_np(pthread_self(), &attr) == 0) {
		int rc = pthread_attr_getstack(&attr, &addr, &size);

		pthread_attr_destroy(&attr);
		if (rc == 0) {
			t->stack_lo = (uint64_t)(uintptr_t)addr;
			t->stack_hi = t->stack_lo + size;
			/* glibc puts the thread's TCB and static TLS at the top
			 * of its stack block, the stack right below them: not
			 * copied (a few KiB per sample). */
			t->stack_top = t->stack_hi;
			if (g.tls_static && g.tls_static < size / 2 &&
			    t->stack_hi - g.tls_static > sp)
				t->stack_top = t->stack_hi - g.tls_static;
			if (sp >= t->stack_lo && sp < t->stack_hi)
				return t->stack_top;
		}
	}
	if (sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK)) {
		uint64_t lo = (uint64_t)(uintptr_t)ss.ss_sp;

		if (sp >= lo && sp < lo + ss.ss_size)
			return lo + ss.ss_size;
	}
	return 0;
}

/* The main thread's stack end, from /proc/self/maps ("[stack]"). */
static uint64_t read_main_stack_hi(void)
{
	static char buf[4096];
	char line[512];
	size_t ll = 0;
	uint64_t hi = 0;
	ssize_t n;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		ssize_t i;

		for (i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (ll < sizeof(line) - 1)
					line[ll++] = buf[i];
				continue;
			}
			line[ll] = 0;
			ll = 0;
			if (strstr(line, "[stack]")) {
				char *dash = strchr(line, '-');

				if (dash)
					hi = strtoull(dash + 1, NULL, 16);
			}
		}
	}
	close(fd);
	return hi;
}

/* Where the frames end: the main thread's _start (ld.so's
 * __libc_stack_end), and the size of what glibc keeps atop each thread's
 * stack (its TCB and static TLS: _dl_get_tls_static_info, ld.so's own).
 * Either stays 0 when unknown: the whole stack mapping is copied then. */
static void read_stack_limits(void)
{
	void **end = dlsym(RTLD_DEFAULT, "__libc_stack_end");
	void (*tls_info)(size_t *, size_t *) =
		(void (*)(size_t *, size_t *))dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info");

	if (end && *end)
		g.main_stack_end = (uint64_t)(uintptr_t)*end;
	if (tls_info) {
		size_t size = 0, align = 0;

		tls_info(&size, &align);
		g.tls_static = size;
	}
}

/* ------------------------------------------------------------ rings ---- */

static void send_wake(void)
{
	char b = 'w';

	if (g.wake_fd >= 0)
		(void)send(g.wake_fd, &b, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
}

static _Atomic uint32_t *my_shard(void)
{
	return &inflight[my_tid() % HP_INFLIGHT_SHARDS].n;
}

static void leave(void)
{
	atomic_fetch_sub_explicit(my_shard(), 1, memory_order_release);
}

static bool enter(void)
{
	atomic_fetch_add_explicit(my_shard(), 1, memory_order_seq_cst);
	if (atomic_load_explicit(&g.ring_live, memory_order_seq_cst))
		return true;
	leave();
	return false;
}

/* No thread is inside the ring (after ring_live went to 0). */
static bool nobody_inside(void)
{
	uint32_t i;

	for (i = 0; i < HP_INFLIGHT_SHARDS; i++) {
		if (atomic_load_explicit(&inflight[i].n, memory_order_seq_cst))
			return false;
	}
	return true;
}

/* The writers are stopped and gone: the ring can go. */
static void retire_ring(void)
{
	atomic_store_explicit(&g.ring_live, 0, memory_order_seq_cst);
	while (!nobody_inside())
		sched_yield();
	if (g.ring.hdr)
		hp_ring_unmap(&g.ring);
	if (g.wake_fd >= 0)
		close(g.wake_fd);
	g.wake_fd = -1;
}

static void disable_all(int mode)
{
	uint32_t i;

	for (i = 0; i < HP_MAX_HEAPS; i++)
		atomic_store_explicit(&g.intervals[i], 0, memory_order_relaxed);
	atomic_store_explicit(&g.mode, mode, memory_order_release);
	bump_gen();
	for (i = 2; i < HP_MAX_HEAPS && i <= hp_api_heap_count() + 1; i++)
		hp_api_heap_state(i, 0);
}

/* A record could not be written and the client gives up (timeout). */
static void client_error(uint32_t err)
{
	atomic_store_explicit(&g.ring.hdr->client_error, err, memory_order_relaxed);
	atomic_store_explicit(&g.ring_live, 0, memory_order_seq_cst);
	atomic_store_explicit(&g.mode, MODE_DEAD, memory_order_release);
	bump_gen();
}

/* The daemon's end of the control socket is closed (it died). */
static bool daemon_hung_up(void)
{
	char b;
	int fd = g.ctl_fd;

	return fd >= 0 && recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

/* heapprofd died while this thread writes: nobody reads the ring again.
 * Stop profiling; the mapping and sockets stay (other threads may be
 * inside the ring) and the next look at the socket closes it. */
static void daemon_died(void)
{
	atomic_store_explicit(&g.ring_live, 0, memory_order_seq_cst);
	atomic_store_explicit(&g.mode, MODE_POLLING, memory_order_release);
	for (uint32_t i = 0; i < HP_MAX_HEAPS; i++)
		atomic_store_explicit(&g.intervals[i], 0, memory_order_relaxed);
	bump_gen();
}

/* Space for @len bytes; with block_client waits for the reader up to the
 * timeout (0: forever), else drops. The wait sleeps on the ring's
 * read_seq futex, which heapprofd bumps when it made room for a waiting
 * writer (at most 1 ms a sleep); heapprofd is woken once at the start
 * and then every ms, and its death is looked for every 2 ms. (Naps of
 * 20-250 us and a look at the ring after each cost the waiting threads
 * more CPU than the workload's own work.) */
static uint8_t *reserve(uint32_t len, uint64_t *pos)
{
	uint8_t *rec = hp_ring_reserve(&g.ring, len, pos);
	uint64_t t0, now, last_check, last_wake, waited_us;
	uint32_t seq;

	if (rec)
		return rec;
	if (!g.block) {
		/* Full: most often because one of this process's writers was
		 * preempted between reserving its record and publishing it (the
		 * reader cannot pass a record not yet published, while the
		 * others fill the ring behind it: at 4 KiB the bench writes
		 * the 8 MiB in ~3 ms), seldom because heapprofd is too slow.
		 * Sleeping on the ring's futex (heapprofd wakes it once an
		 * eighth of the ring is free), at most HP_FULL_WAIT_MS, leaves
		 * the CPU to that writer and to heapprofd. Yielding instead
		 * (sched_yield up to 4 times) still lost 0-732 records of ~1.2 M
		 * a run: the yielding threads kept the CPUs from the writer they
		 * waited for. Only while the reader makes progress: once its
		 * read position stood still for HP_FULL_PATIENCE_MS with the
		 * ring full, writers drop at once until it moves again (a
		 * stopped or overwhelmed heapprofd would otherwise cost every
		 * record the whole wait). Both words are hints shared by the
		 * writers. */
		uint64_t rd = atomic_load_explicit(&g.ring.hdr->read_pos, memory_order_relaxed);
		now = now_boottime_ns();

		if (rd != atomic_load_explicit(&g.full_read_pos, memory_order_relaxed)) {
			atomic_store_explicit(&g.full_read_pos, rd, memory_order_relaxed);
			atomic_store_explicit(&g.full_since_ns, now, memory_order_relaxed);
		}
		if ((int64_t)(now - atomic_load_explicit(&g.full_since_ns, memory_order_relaxed)) <
		    (int64_t)HP_FULL_PATIENCE_MS * 1000000) {
			t0 = now;
			for (;;) {
				if (atomic_load_explicit(&g.ring.hdr->flags, memory_order_relaxed) &
				    HP_RING_F_SHUTDOWN)
					break;
				seq = hp_ring_wait_begin(&g.ring);
				rec = hp_ring_reserve(&g.ring, len, pos);
				if (rec)
					return rec;
				waited_us = (now_boottime_ns() - t0) / 1000;
				if (waited_us >= HP_FULL_WAIT_MS * 1000ull)
					break;
				hp_ring_wait_space(&g.ring, seq,
						   HP_FULL_WAIT_MS * 1000u - (uint32_t)waited_us < 1000
							   ? HP_FULL_WAIT_MS * 1000u - (uint32_t)waited_us
							   : 1000);
			}
		}
		atomic_fetch_add_explicit(&g.ring.hdr->records_dropped, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&g.ring.hdr->bytes_dropped, len, memory_order_relaxed);
		return NULL;
	}
	send_wake();
	t0 = last_check = last_wake = now_boottime_ns();
	for (;;) {
		if (!atomic_load_explicit(&g.ring_live, memory_order_relaxed) ||
		    (atomic_load_explicit(&g.ring.hdr->flags, memory_order_relaxed) &
		     HP_RING_F_SHUTDOWN))
			return NULL;
		now = now_boottime_ns();
		/* A killed heapprofd never reads again. */
		if (now - last_check >= 2000000) {
			last_check = now;
			if (daemon_hung_up()) {
				daemon_died();
				return NULL;
			}
		}
		if (now - last_wake >= 1000000) {
			last_wake = now;
			send_wake();
		}
		seq = hp_ring_wait_begin(&g.ring);
		rec = hp_ring_reserve(&g.ring, len, pos);
		waited_us = (now_boottime_ns() - t0) / 1000;
		if (rec) {
			atomic_fetch_add_explicit(&g.ring.hdr->blocked_us, waited_us,
						  memory_order_relaxed);
			return rec;
		}
		if (g.timeout_us && waited_us >= g.timeout_us) {
			client_error(HP_CLIENT_ERROR_HIT_TIMEOUT);
			return NULL;
		}
		hp_ring_wait_space(&g.ring, seq,
				   g.timeout_us && g.timeout_us - waited_us < 1000
					   ? (uint32_t)(g.timeout_us - waited_us)
					   : 1000);
	}
}

static void publish(uint8_t *rec, uint64_t pos, uint32_t len, uint32_t type)
{
	if (hp_ring_publish(&g.ring, rec, pos, len, type))
		send_wake();
}

bool hp_record_alloc(uint32_t heap, uint64_t addr, uint64_t sample_size, uint64_t alloc_size)
{
	struct hp_thread *t = &hp_tls;
	struct hp_rec_alloc *a;
	uint64_t end, copy = 0, cap, pos, sp, ts;
	uint8_t *rec;
	uint32_t len;

	if (!enter())
		return false;
	/* The fixed part is written straight into the ring, the registers
	 * last: this frame (copied with the stack) holds no record, and the
	 * sp the copy starts at is the one hp_get_regs() stores. */
	sp = hp_get_sp();
	end = stack_end(t, sp);
	cap = g.ring.data_size / 8;
	if (cap > HP_MAX_STACK_COPY)
		cap = HP_MAX_STACK_COPY;
	if (end > sp)
		copy = end - sp < cap ? end - sp : cap;
	ts = now_boottime_ns();
	len = (uint32_t)(sizeof(struct hp_rec_hdr) + sizeof(*a) + copy);
	rec = reserve(len, &pos);
	if (!rec) {
		leave();
		return false;
	}
	a = (struct hp_rec_alloc *)(rec + sizeof(struct hp_rec_hdr));
	memset(a, 0, sizeof(*a));
	a->heap_id = heap;
	a->tid = my_tid();
	a->ts_ns = ts;
	a->addr = addr;
	a->sample_size = sample_size;
	a->alloc_size = alloc_size;
	hp_get_regs(a->regs);
	/* Never seen; an unwind from other registers than the copy's would
	 * read garbage: no stack then. */
	a->stack_len = a->regs[7] == sp ? (uint32_t)copy : 0;
	if (a->stack_len)
		memcpy(a + 1, (const void *)(uintptr_t)sp, copy);
	publish(rec, pos, len, HP_REC_ALLOC);
	leave();
	return true;
}

bool hp_record_free(uint32_t heap, uint64_t addr)
{
	struct hp_rec_free f = {.heap_id = heap, .addr = addr};
	uint32_t len = (uint32_t)(sizeof(struct hp_rec_hdr) + sizeof(f));
	uint64_t pos;
	uint8_t *rec;

	if (!enter())
		return false;
	rec = reserve(len, &pos);
	if (!rec) {
		leave();
		return false;
	}
	memcpy(rec + sizeof(struct hp_rec_hdr), &f, sizeof(f));
	publish(rec, pos, len, HP_REC_FREE);
	leave();
	return true;
}

/* ------------------------------------------------------- control ------ */

static bool try_lock(_Atomic int *l)
{
	return atomic_exchange_explicit(l, 1, memory_order_acquire) == 0;
}

static void unlock(_Atomic int *l)
{
	atomic_store_explicit(l, 0, memory_order_release);
}

/* One message to the daemon (whole, or not at all: SOCK_SEQPACKET). */
static void send_msg(const struct hp_wire_out *w)
{
	int spins = 0;

	if (w->overflow || g.ctl_fd < 0)
		return;
	while (!try_lock(&g.send_lock)) {
		if (++spins > 1000)
			return;
		sched_yield();
	}
	(void)send(g.ctl_fd, w->buf, w->len, MSG_DONTWAIT | MSG_NOSIGNAL);
	unlock(&g.send_lock);
}

void hp_client_heap_registered(uint32_t heap, const char *name)
{
	uint8_t buf[256];
	struct hp_wire_out w;

	hp_wire_begin(&w, buf, sizeof(buf), HP_MSG_HEAP);
	hp_wire_u64(&w, HP_F_HEAP_ID, heap);
	hp_wire_str(&w, HP_F_HEAP_NAME, name, strnlen(name, HP_HEAP_NAME_MAX));
	send_msg(&w);
}

static void send_hello(void)
{
	uint8_t buf[256];
	struct hp_wire_out w;
	uint32_t i, n = hp_api_heap_count();

	hp_wire_begin(&w, buf, sizeof(buf), HP_MSG_HELLO);
	hp_wire_u64(&w, HP_F_PID, g.pid);
	send_msg(&w);
	hp_client_heap_registered(HP_HEAP_MALLOC, "libc.malloc");
	for (i = 2; i < n + 2 && i < HP_MAX_HEAPS; i++) {
		const char *name = hp_api_heap_name(i);

		if (name)
			hp_client_heap_registered(i, name);
	}
}

/* START: map the ring, take the wake-up socket. */
static void on_start(const uint8_t *msg, size_t len, const int *fds, size_t n_fds)
{
	struct hp_wire_in in;
	struct hp_wire_field f;
	uint32_t type;
	uint64_t heap = 0, i;
	struct hp_ring r;

	if (n_fds < 2 || hp_wire_parse(msg, len, &type, &in) < 0)
		return;
	if (atomic_load_explicit(&g.ring_live, memory_order_relaxed) || g.ring.hdr)
		retire_ring();
	g.block = false;
	g.timeout_us = 0;
	/* Heaps come as (HP_F_HEAP_ID, HP_F_INTERVAL) pairs, in that order. */
	while (hp_wire_next(&in, &f) == 1) {
		if (f.id == HP_F_BLOCK)
			g.block = hp_wire_field_u64(&f) != 0;
		else if (f.id == HP_F_TIMEOUT_US)
			g.timeout_us = hp_wire_field_u64(&f);
		else if (f.id == HP_F_HEAP_ID)
			heap = hp_wire_field_u64(&f);
		else if (f.id == HP_F_INTERVAL && heap && heap < HP_MAX_HEAPS)
			atomic_store_explicit(&g.intervals[heap], hp_wire_field_u64(&f),
					      memory_order_relaxed);
	}
	memset(&r, 0, sizeof(r));
	if (hp_ring_map(fds[0], 0, &r) < 0)
		return;
	g.ring = r;
	atomic_store_explicit(&g.full_read_pos, UINT64_MAX, memory_order_relaxed);
	g.wake_fd = fds[1];
	fcntl(g.wake_fd, F_SETFD, FD_CLOEXEC);
	atomic_store_explicit(&g.ring_live, 1, memory_order_seq_cst);
	atomic_store_explicit(&g.mode, MODE_ACTIVE, memory_order_release);
	for (i = 2; i < HP_MAX_HEAPS && i <= hp_api_heap_count() + 1; i++)
		hp_api_heap_state((uint32_t)i,
				  atomic_load_explicit(&g.intervals[i], memory_order_relaxed));
}

static void on_interval(const uint8_t *msg, size_t len)
{
	struct hp_wire_in in;
	struct hp_wire_field f;
	uint32_t type;
	uint64_t heap = 0, iv = 0;

	if (hp_wire_parse(msg, len, &type, &in) < 0)
		return;
	while (hp_wire_next(&in, &f) == 1) {
		if (f.id == HP_F_HEAP_ID)
			heap = hp_wire_field_u64(&f);
		else if (f.id == HP_F_INTERVAL)
			iv = hp_wire_field_u64(&f);
	}
	if (heap == 0 || heap >= HP_MAX_HEAPS)
		return;
	atomic_store_explicit(&g.intervals[heap], iv, memory_order_relaxed);
	if (heap != HP_HEAP_MALLOC)
		hp_api_heap_state((uint32_t)heap, iv);
}

/* Reads what the daemon sent. @wait: block until a START or NO_SESSION
 * (blocking init). Return: the last message type handled, 0 if none, -1
 * when the daemon is gone. */
static int read_ctl(bool wait)
{
	int last = 0;

	for (;;) {
		uint8_t buf[HP_WIRE_MAX_BYTES];
		union {
			struct cmsghdr h;
			char b[CMSG_SPACE(4 * sizeof(int))];
		} cm;
		struct iovec iov = {buf, sizeof(buf)};
		struct msghdr mh = {0};
		struct cmsghdr *c;
		int fds[4], n_fds = 0, i;
		uint32_t type;
		struct hp_wire_in in;
		ssize_t n;

		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = cm.b;
		mh.msg_controllen = sizeof(cm.b);
		n = recvmsg(g.ctl_fd, &mh,
			    MSG_CMSG_CLOEXEC | (wait ? 0 : MSG_DONTWAIT));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return last;
		if (n <= 0)
			return -1;
		for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
				size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

				for (i = 0; i < (int)k && n_fds < 4; i++)
					memcpy(&fds[n_fds++], CMSG_DATA(c) + i * sizeof(int),
					       sizeof(int));
			}
		}
		if (hp_wire_parse(buf, (size_t)n, &type, &in) == 0) {
			switch (type) {
			case HP_MSG_START:
				on_start(buf, (size_t)n, fds, (size_t)n_fds);
				if (n_fds >= 2)
					fds[1] = -1; /* kept as the wake socket */
				break;
			case HP_MSG_HEAP_INTERVAL:
				on_interval(buf, (size_t)n);
				break;
			case HP_MSG_STOP:
				retire_ring();
				disable_all(MODE_POLLING);
				break;
			default:
				break;
			}
			last = (int)type;
			if (type == HP_MSG_START || type == HP_MSG_NO_SESSION)
				wait = false;
		}
		for (i = 0; i < n_fds; i++) {
			if (fds[i] >= 0)
				close(fds[i]);
		}
	}
}

void hp_client_after_sample(struct hp_thread *t, bool written)
{
	if (atomic_load_explicit(&g.mode, memory_order_acquire) != MODE_ACTIVE)
		return;
	/* A drop (a full ring, or one its reader shut) brings the look 8x
	 * nearer: soon after a stop, without a syscall per drop. */
	t->since_poll += written ? 1 : HP_ACTIVE_POLL_SAMPLES / 8;
	if (t->since_poll < HP_ACTIVE_POLL_SAMPLES)
		return;
	t->since_poll = 0;
	poll_ctl(false);
	if (atomic_load_explicit(&g.mode, memory_order_acquire) != MODE_ACTIVE)
		hp_thread_refresh(t);
}

static void ctl_gone(void)
{
	retire_ring();
	if (g.ctl_fd >= 0)
		close(g.ctl_fd);
	g.ctl_fd = -1;
	disable_all(MODE_DEAD);
}

/* Waits (at most HP_POLL_WAIT_MS) until no thread reads the control
 * socket. Return: true once none does. */
static bool wait_poll_unlocked(void)
{
	struct timespec nap = {0, 50000};
	uint64_t t0 = now_boottime_ns();
	int i;

	for (i = 0;; i++) {
		if (!atomic_load_explicit(&g.poll_lock, memory_order_acquire))
			return true;
		if (now_boottime_ns() - t0 >= HP_POLL_WAIT_MS * 1000000ull)
			return false;
		if (i < 16)
			sched_yield();
		else
			nanosleep(&nap, NULL);
	}
}

/* Reads the daemon's messages. @wait_busy: when another thread is reading
 * them, wait until it is done (bounded) instead of going on as before.
 * A thread whose poll budget ran out must not miss a START that another
 * thread is taking (mapping the ring takes a while): it would go on
 * unsampled for another HP_POLL_BYTES, again and again while that lasts
 * (seen: 119 of 1,024 64 KiB blocks of a session's first allocations
 * unsampled, on a loaded machine). */
static void poll_ctl(bool wait_busy)
{
	int rc;

	if (g.ctl_fd < 0)
		return;
	if (!try_lock(&g.poll_lock) &&
	    (!wait_busy || !wait_poll_unlocked() || !try_lock(&g.poll_lock)))
		return;
	if (g.ctl_fd < 0) {
		unlock(&g.poll_lock);
		return;
	}
	rc = read_ctl(false);
	if (rc < 0)
		ctl_gone();
	else if (rc)
		bump_gen();
	unlock(&g.poll_lock);
}

/* ------------------------------------------------------- connecting --- */

static int connect_central(const char *name)
{
	struct sockaddr_un sa;
	size_t len = strlen(name);
	socklen_t sl;
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (len == 0 || len >= sizeof(sa.sun_path))
		return -1;
	memcpy(sa.sun_path, name, len);
	if (name[0] == '@')
		sa.sun_path[0] = 0;
	sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (name[0] == '@' ? 0 : 1));
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sl) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The heapprofd binary a private daemon is started from. */
static void exec_heapprofd(int fd)
{
	char pid_arg[64], fd_arg[64], path[4096];
	const char *bin = getenv("PERFETTO_HEAPPROFD_BIN");
	char *argv[5];
	Dl_info info;

	snprintf(pid_arg, sizeof(pid_arg), "--exclusive-for-pid=%u", g.pid);
	snprintf(fd_arg, sizeof(fd_arg), "--inherit-socket-fd=%d", fd);
	argv[1] = pid_arg;
	argv[2] = fd_arg;
	argv[3] = NULL;
	argv[4] = NULL;
	unsetenv("LD_PRELOAD");
	if (bin && bin[0]) {
		argv[0] = (char *)bin;
		execv(bin, argv);
		_exit(127);
	}
	if (dladdr((void *)hp_client_init, &info) && info.dli_fname) {
		static const char *const k_rel[] = {"heapprofd", "../heapprofd", "../bin/heapprofd"};
		const char *slash = strrchr(info.dli_fname, '/');
		size_t dir = slash ? (size_t)(slash - info.dli_fname) : 0;
		size_t i;

		for (i = 0; slash && i < 3; i++) {
			int n = snprintf(path, sizeof(path), "%.*s/%s", (int)dir, info.dli_fname,
					 k_rel[i]);

			if (n > 0 && (size_t)n < sizeof(path) && access(path, X_OK) == 0) {
				argv[0] = path;
				execv(path, argv);
			}
		}
	}
	argv[0] = "heapprofd";
	execvp("heapprofd", argv);
	_exit(127);
}

/* Fork a private heapprofd (double fork: it is nobody's child here). */
static int spawn_child_daemon(void)
{
	int sv[2], status;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		close(sv[0]);
		if (fork() != 0)
			_exit(0);
		setsid();
		fcntl(sv[1], F_SETFD, 0);
		exec_heapprofd(sv[1]);
	}
	close(sv[1]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return sv[0];
}

static void atfork_child(void)
{
	/* The parent's session is not this process's: drop the ring and the
	 * connection without touching the parent's (the daemon keeps them). */
	t_tid = 0;
	g.pid = (uint32_t)getpid();
	atomic_store_explicit(&g.ring_live, 0, memory_order_relaxed);
	for (uint32_t i = 0; i < HP_INFLIGHT_SHARDS; i++)
		atomic_store_explicit(&inflight[i].n, 0, memory_order_relaxed);
	if (g.ring.hdr)
		hp_ring_unmap(&g.ring);
	if (g.wake_fd >= 0)
		close(g.wake_fd);
	g.wake_fd = -1;
	if (g.ctl_fd >= 0)
		close(g.ctl_fd);
	g.ctl_fd = -1;
	atomic_store_explicit(&g.poll_lock, 0, memory_order_relaxed);
	atomic_store_explicit(&g.send_lock, 0, memory_order_relaxed);
	hp_tls.stack_lo = hp_tls.stack_hi = hp_tls.stack_top = 0;
	g.main_stack_hi = 0;
	disable_all(MODE_NONE);
	/* A central daemon may profile the child if its session asks for it. */
	if (g.central) {
		const char *name = getenv("PERFETTO_HEAPPROFD_SOCK_NAME");

		g.ctl_fd = connect_central(name && name[0] ? name : "/run/perfetto/heapprofd.sock");
		if (g.ctl_fd >= 0) {
			send_hello();
			atomic_store_explicit(&g.mode, MODE_POLLING, memory_order_release);
			bump_gen();
		}
	}
}

void hp_client_flush(void)
{
	struct timespec nap = {0, 1000000};
	int i;

	if (!enter())
		return;
	send_wake();
	for (i = 0; i < 500; i++) {
		if (atomic_load_explicit(&g.ring.hdr->read_pos, memory_order_acquire) >=
			    atomic_load_explicit(&g.ring.hdr->write_pos, memory_order_acquire) ||
		    (atomic_load_explicit(&g.ring.hdr->flags, memory_order_relaxed) &
		     HP_RING_F_SHUTDOWN) ||
		    daemon_hung_up())
			break;
		nanosleep(&nap, NULL);
	}
	leave();
}

/* At exit (exit(), or returning from main), the same. */
__attribute__((destructor)) static void flush_at_exit(void)
{
	hp_client_flush();
}

void hp_client_init(void)
{
	struct hp_thread *t = &hp_tls;
	int expect = 0;
	const char *name, *blocking;
	uint64_t c;

	if (!atomic_compare_exchange_strong(&g.init_state, &expect, 1))
		return;
	t->in_hook++;
	g.pid = (uint32_t)getpid();
	if (getrandom(&c, sizeof(c), GRND_NONBLOCK) == (ssize_t)sizeof(c))
		hp_cookie = c | (1ull << 63);
	else
		hp_cookie ^= now_boottime_ns();
	g.main_stack_hi = read_main_stack_hi();
	read_stack_limits();
	name = getenv("PERFETTO_HEAPPROFD_SOCK_NAME");
	if (name && name[0]) {
		g.ctl_fd = connect_central(name);
		g.central = true;
	} else if (!getenv("PERFETTO_HEAPPROFD_CHILD")) {
		g.ctl_fd = connect_central("/run/perfetto/heapprofd.sock");
		g.central = g.ctl_fd >= 0;
	}
	if (g.ctl_fd < 0 && !g.central)
		g.ctl_fd = spawn_child_daemon();
	if (g.ctl_fd >= 0) {
		send_hello();
		atomic_store_explicit(&g.mode, MODE_POLLING, memory_order_release);
		blocking = getenv("PERFETTO_HEAPPROFD_BLOCKING_INIT");
		if (blocking && blocking[0] == '1') {
			/* Wait for the daemon's first word: a session's START, or
			 * that none wants this process now. */
			int rc = read_ctl(true);

			if (rc < 0)
				ctl_gone();
		}
	} else {
		atomic_store_explicit(&g.mode, MODE_DEAD, memory_order_release);
	}
	pthread_atfork(NULL, NULL, atfork_child);
	bump_gen();
	atomic_store_explicit(&g.init_state, 2, memory_order_release);
	t->in_hook--;
}

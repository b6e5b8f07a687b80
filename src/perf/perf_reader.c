// SPDX-License-Identifier: Apache-2.0
/*
 * perf_reader.c - see perf_reader.h. The thread sleeps in epoll on a
 * timerfd (the read period), a stop eventfd and, unless the rings hold
 * several periods, the rings' fds (the kernel wakes them every
 * wakeup_watermark bytes). A pass holds the reader's lock, so a flush or
 * stop on the loop thread can run one too. When the queue is at its
 * budget the pass stops with the record left in the ring and the thread
 * waits for room, then reads again; the kernel counts what it cannot
 * write meanwhile (PERF_RECORD_LOST).
 */
#include "perf/perf_reader.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "base/hmap.h"
#include "perf/perf_scope.h"
#include "perf/ring/stack_tops.h"

/* Scope decisions kept; past this (exit records lost) they are all made again. */
#define READER_MAX_SCOPE_PIDS 65536u
/* How long a reader waits for the loop thread to make room, at most. */
#define READER_FULL_WAIT_MS 50u
/* The reader thread's nice value (see reader_main()). */
#define READER_NICE (-10)

enum { PROC_ACCEPTED = 1, PROC_REJECTED = 2 };

struct perf_reader {
	struct perf_reader_spec s;
	pthread_mutex_t lock; /* the rings and everything below */
	uint64_t *heads;      /* each ring's head before the pass's scan */
	size_t cur;	      /* ring being read */
	bool full;	      /* the pass met a full queue */
	size_t queued;	      /* entries queued by the pass */
	struct hmap procs;    /* pid -> PROC_* */
	struct perf_reader_stats stats;
	struct perf_sample sample;
	int epfd, stop_fd, timer_fd;
	pthread_t thread;
	bool running;
	atomic_bool stopping;
};

/* ------------------------------------------------------ classification -- */

static bool in_scope(struct perf_reader *r, uint32_t pid)
{
	char argv0[256];
	uint64_t v;
	bool ok;

	if (!r->s.cfg->has_scope)
		return true;
	if (hmap_get(&r->procs, pid, &v))
		return v == PROC_ACCEPTED;
	if (hmap_len(&r->procs) >= READER_MAX_SCOPE_PIDS)
		hmap_clear(&r->procs);
	perf_read_argv0((int32_t)pid, argv0, sizeof(argv0));
	ok = perf_scope_accepts(&r->s.cfg->scope, (int32_t)pid, argv0);
	hmap_put(&r->procs, pid, ok ? PROC_ACCEPTED : PROC_REJECTED);
	return ok;
}

static bool has_user_context(const struct perf_sample *s)
{
	uint64_t i;

	for (i = 0; i < s->n_ips; i++) {
		if (perf_sample_ip(s, i) == (uint64_t)PERF_CONTEXT_USER)
			return true;
	}
	return false;
}

static enum perf_sample_class classify(struct perf_reader *r, const struct perf_sample *s)
{
	const struct perf_config *c = r->s.cfg;
	bool user_frames = c->unwind != PERF_UNWIND_SKIP;
	bool is_kthread;

	if (!c->kernel_frames && !user_frames)
		return PERF_CLASS_PLAIN;
	/* A kernel thread has no user context: no user registers, or (when
	 * the kernel walks user stacks) no user part in its callchain. */
	is_kthread = c->unwind == PERF_UNWIND_KERNEL_FRAME_POINTER ? !has_user_context(s)
		     : !user_frames				   ? s->pid == 0
								   : !s->has_regs;
	if ((is_kthread && !c->kernel_frames) || !in_scope(r, s->pid))
		return PERF_CLASS_OUT_OF_SCOPE;
	if (!user_frames && s->cpu_mode == PERF_RECORD_MISC_USER)
		return PERF_CLASS_PLAIN;
	return PERF_CLASS_CALLSTACK;
}

/* ------------------------------------------------------------ queueing -- */

static bool queue_raw(struct perf_reader *r, const uint8_t *rec, size_t len, uint16_t flags)
{
	uint8_t *room = rq_reserve(r->s.queue, len);

	if (!room) {
		r->full = true;
		return false;
	}
	memcpy(room, rec, len);
	rq_commit(r->s.queue, len, (uint16_t)r->cur, flags);
	r->queued++;
	return true;
}

/* A sample into the queue with its user stack cut to @keep bytes. */
static bool queue_sample(struct perf_reader *r, const uint8_t *rec, size_t len,
			 const struct perf_sample *s, uint64_t keep, uint16_t cls)
{
	size_t out_len = perf_sample_cut_len(rec, len, s, keep);
	uint8_t *room = rq_reserve(r->s.queue, out_len);

	if (!room) {
		r->full = true;
		return false;
	}
	perf_sample_cut_stack(rec, len, s, keep, room);
	rq_commit(r->s.queue, out_len, (uint16_t)r->cur, cls);
	r->queued++;
	return true;
}

static bool on_sample(struct perf_reader *r, const uint8_t *rec, size_t len)
{
	struct perf_sample *s = &r->sample;
	enum perf_sample_class cls;
	uint64_t keep;
	bool in_scope;

	if (perf_parse_sample(r->s.layout, rec, len, s) != PERF_PARSE_OK) {
		r->stats.malformed++;
		return true;
	}
	cls = classify(r, s);
	in_scope = cls == PERF_CLASS_CALLSTACK;
	keep = s->stack_bytes;
	if (cls == PERF_CLASS_CALLSTACK && keep && r->s.tops && s->has_regs)
		keep = stack_tops_keep(r->s.tops, s->pid, s->tid, perf_sample_user_sp(s), keep);
	if (cls == PERF_CLASS_CALLSTACK && keep && r->s.footprint_limit &&
	    atomic_load(r->s.footprint) + keep >= r->s.footprint_limit)
		cls = PERF_CLASS_OVER_FOOTPRINT;
	if (cls != PERF_CLASS_CALLSTACK)
		keep = 0;
	if (!queue_sample(r, rec, len, s, keep, (uint16_t)cls))
		return false;
	/* Of the samples to unwind: how much the cut at the tops saves. */
	if (in_scope)
		r->stats.stack_bytes_copied += s->stack_bytes;
	r->stats.stack_bytes_queued += keep;
	return true;
}

/* Scan pass: mappings and forks, queued before any sample of the pass. */
#define SIDEBAND_TYPES                                                                  \
	((1ull << PERF_RECORD_MMAP2) | (1ull << PERF_RECORD_FORK) | (1ull << PERF_RECORD_COMM))

static bool on_sideband(const uint8_t *rec, size_t len, void *user)
{
	struct perf_reader *r = user;
	struct perf_comm c;

	if (perf_record_type(rec) != PERF_RECORD_COMM)
		return queue_raw(r, rec, len, 0);
	/* An execve: decide the scope again from the new cmdline (a sample
	 * of the shell that forked it was rejected as "sh"), and keep whole
	 * stacks of the new program until the loop thread, reaching the exec
	 * in the queue (queued by the read below, in order), lets its stack
	 * tops be learned again. */
	if (perf_parse_comm(rec, len, &c) == PERF_PARSE_OK && c.exec) {
		hmap_del(&r->procs, c.pid, NULL);
		if (r->s.tops)
			stack_tops_block_pid(r->s.tops, c.pid);
	}
	return true;
}

static bool on_record(const uint8_t *rec, size_t len, void *user)
{
	struct perf_reader *r = user;
	struct perf_exit ex;

	switch (perf_record_type(rec)) {
	case PERF_RECORD_SAMPLE:
		return on_sample(r, rec, len);
	case PERF_RECORD_EXIT:
		if (perf_parse_exit(rec, len, &ex) == PERF_PARSE_OK && ex.pid == ex.tid)
			hmap_del(&r->procs, ex.pid, NULL);
		return queue_raw(r, rec, len, 0);
	case PERF_RECORD_LOST:
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_COMM:
		return queue_raw(r, rec, len, 0);
	default: /* MMAP2, FORK: queued by the scan */
		return true;
	}
}

static enum perf_read_rc pass_locked(struct perf_reader *r, size_t max_records,
				     const uint64_t *limits)
{
	size_t i;
	int rc;

	r->full = false;
	for (i = 0; i < r->s.n_rings; i++) {
		r->heads[i] = perf_ring_head(r->s.rings[i]);
		if (limits && limits[i] < r->heads[i])
			r->heads[i] = limits[i];
	}
	for (i = 0; i < r->s.n_rings; i++) {
		r->cur = i;
		if (perf_ring_scan(r->s.rings[i], SIDEBAND_TYPES, on_sideband, r) == -EBADMSG)
			r->stats.malformed++;
		if (r->full)
			return PERF_READ_QUEUE_FULL; /* no sample before its mappings */
	}
	for (i = 0; i < r->s.n_rings && !r->full; i++) {
		r->cur = i;
		rc = perf_ring_read(r->s.rings[i], r->heads[i], max_records, on_record, r);
		if (rc == -EBADMSG)
			r->stats.malformed++;
	}
	return r->full ? PERF_READ_QUEUE_FULL : PERF_READ_DONE;
}

size_t perf_reader_rings(const struct perf_reader *r)
{
	return r->s.n_rings;
}

void perf_reader_heads(struct perf_reader *r, uint64_t *heads)
{
	for (size_t i = 0; i < r->s.n_rings; i++)
		heads[i] = perf_ring_head(r->s.rings[i]);
}

static enum perf_read_rc read_pass(struct perf_reader *r, size_t max_records,
				   const uint64_t *limits)
{
	enum perf_read_rc rc;
	size_t queued;

	pthread_mutex_lock(&r->lock);
	r->queued = 0;
	rc = pass_locked(r, max_records, limits);
	queued = r->queued;
	pthread_mutex_unlock(&r->lock);
	if (queued && r->s.notify_fd >= 0 && rq_bytes(r->s.queue) >= r->s.notify_bytes &&
	    !atomic_exchange(r->s.notified, true)) {
		uint64_t one = 1;

		if (write(r->s.notify_fd, &one, sizeof(one)) < 0) {
			/* EAGAIN: the counter is already non-zero, the loop will look. */
		}
	}
	return rc;
}

enum perf_read_rc perf_reader_read(struct perf_reader *r, bool all)
{
	return read_pass(r, all ? 0 : r->s.max_records, NULL);
}

enum perf_read_rc perf_reader_read_upto(struct perf_reader *r, const uint64_t *limits)
{
	return read_pass(r, 0, limits);
}

void perf_reader_get_stats(struct perf_reader *r, struct perf_reader_stats *out)
{
	pthread_mutex_lock(&r->lock);
	*out = r->stats;
	pthread_mutex_unlock(&r->lock);
}

/* -------------------------------------------------------------- thread -- */

static void *reader_main(void *arg)
{
	struct perf_reader *r = arg;
	struct epoll_event ev[16];

	/* A ring of 64 KiB samples fills in 16 ms at 1 kHz, while the loop
	 * thread may be unwinding flat out beside a busy workload: the reader,
	 * which does little, goes first (nice -10 for this thread only, when
	 * allowed; without it, losses were seen under a sanitizer build). */
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), READER_NICE) < 0) {
		/* not allowed (no CAP_SYS_NICE): normal priority */
	}
	for (;;) {
		bool stop = false;
		int n = epoll_wait(r->epfd, ev, 16, -1), i;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (i = 0; i < n; i++) {
			uint64_t v;

			if (ev[i].data.fd == r->stop_fd) {
				stop = true;
			} else if (ev[i].data.fd == r->timer_fd) {
				if (read(r->timer_fd, &v, sizeof(v)) < 0) {
					/* EAGAIN: already read */
				}
			} else if (ev[i].events & (EPOLLERR | EPOLLHUP)) {
				/* A ring that cannot be waited on: the timer reads it. */
				epoll_ctl(r->epfd, EPOLL_CTL_DEL, ev[i].data.fd, NULL);
			}
		}
		if (stop)
			break;
		/* A full queue: read again as soon as the loop thread makes room
		 * (or the wait ends), not at the next wake-up. */
		while (perf_reader_read(r, false) == PERF_READ_QUEUE_FULL &&
		       !atomic_load(&r->stopping))
			rq_wait_space(r->s.queue, READER_FULL_WAIT_MS);
	}
	return NULL;
}

static int watch(int epfd, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

int perf_reader_create(const struct perf_reader_spec *spec, struct perf_reader **out)
{
	struct perf_reader *r = calloc(1, sizeof(*r));
	int rc;

	if (!r)
		return -ENOMEM;
	r->s = *spec;
	r->epfd = r->stop_fd = r->timer_fd = -1;
	hmap_init(&r->procs);
	rc = -pthread_mutex_init(&r->lock, NULL);
	if (rc) {
		hmap_fini(&r->procs);
		free(r);
		return rc;
	}
	r->heads = calloc(spec->n_rings ? spec->n_rings : 1, sizeof(*r->heads));
	if (!r->heads) {
		perf_reader_destroy(r);
		return -ENOMEM;
	}
	*out = r;
	return 0;
}

int perf_reader_start(struct perf_reader *r)
{
	struct itimerspec its = { 0 };
	uint32_t ms = r->s.cfg->read_period_ms;
	sigset_t all, old;
	size_t i;
	int rc;

	if (r->running)
		return 0;
	atomic_store(&r->stopping, false);
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	r->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	r->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (r->epfd < 0 || r->stop_fd < 0 || r->timer_fd < 0)
		return -errno;
	its.it_interval.tv_sec = ms / 1000;
	its.it_interval.tv_nsec = (long)(ms % 1000) * 1000000L;
	its.it_value = its.it_interval;
	if (timerfd_settime(r->timer_fd, 0, &its, NULL) < 0)
		return -errno;
	rc = watch(r->epfd, r->stop_fd);
	if (!rc)
		rc = watch(r->epfd, r->timer_fd);
	for (i = 0; !rc && r->s.watch_rings && i < r->s.n_rings; i++)
		rc = watch(r->epfd, perf_ring_fd(r->s.rings[i]));
	if (rc)
		return rc;
	/* Signals stay with the loop thread (signalfd). */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = -pthread_create(&r->thread, NULL, reader_main, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return rc;
	pthread_setname_np(r->thread, "perf_reader");
	r->running = true;
	return 0;
}

void perf_reader_stop(struct perf_reader *r)
{
	uint64_t one = 1;

	if (!r || !r->running)
		return;
	atomic_store(&r->stopping, true);
	if (write(r->stop_fd, &one, sizeof(one)) < 0) {
		/* only on counter overflow: it is written once */
	}
	pthread_join(r->thread, NULL);
	r->running = false;
}

void perf_reader_destroy(struct perf_reader *r)
{
	if (!r)
		return;
	perf_reader_stop(r);
	if (r->epfd >= 0)
		close(r->epfd);
	if (r->stop_fd >= 0)
		close(r->stop_fd);
	if (r->timer_fd >= 0)
		close(r->timer_fd);
	free(r->heads);
	hmap_fini(&r->procs);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

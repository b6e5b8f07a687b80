// SPDX-License-Identifier: Apache-2.0
/*
 * evloop.c - epoll loop with one watch struct per fd, signalfd and the
 * eventfd that wakes the loop for tasks posted from other threads. Timers
 * are deadlines kept by the loop itself (epoll_wait's timeout), and a task
 * posted from a callback only makes the next wait not block: a periodic
 * tick costs no timerfd read and a posted task no eventfd write and read,
 * so an idle daemon wakes as rarely as its timers say. Removal during
 * dispatch is made safe by deferring frees: a removed watch is marked dead,
 * taken out of epoll, the timer list and the id map, and freed when the
 * current batch is done.
 */
#include "base/evloop.h"
#include "base/clock.h"
#include "base/compiler.h"
#include "base/file.h"
#include "base/hmap.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

enum watch_kind { WATCH_FD, WATCH_TIMER, WATCH_SIGNAL, WATCH_WAKE };

struct watch {
	uint64_t id;
	enum watch_kind kind;
	int fd;            /* the user's fd, one we own (signal, wake), or -1 (timer) */
	bool is_dead;
	bool is_one_shot;  /* timers only */
	uint64_t deadline_ns;   /* timers: CLOCK_MONOTONIC time of the next call */
	uint64_t period_ns;     /* timers: 0 for one-shot */
	uint64_t pass;          /* timers: the firing pass that last saw it */
	struct watch *next_timer;
	evloop_fd_cb fd_cb;
	evloop_task_cb task_cb;
	evloop_signal_cb signal_cb;
	void *user;
	struct watch *next_dead;
};

struct task {
	evloop_task_cb cb;
	void *user;
	struct task *next;
};

struct evloop {
	int epfd;
	uint64_t next_id;
	struct hmap watches;      /* id -> struct watch *, live watches only */
	struct watch *graveyard;  /* removed watches, freed after the batch */
	struct watch *wake;       /* eventfd for posted tasks and quit */
	struct watch *timers;     /* live timers, unordered */
	uint64_t timer_pass;      /* counts fire_timers() passes */
	atomic_bool is_quit;
	atomic_bool has_local_tasks; /* posted from a callback, no wake-up */
	pthread_mutex_t lock;     /* protects the task queue below */
	struct task *tasks_head;
	struct task *tasks_tail;
};

static uint32_t to_epoll(unsigned events)
{
	return (events & EVLOOP_READ ? EPOLLIN : 0) | (events & EVLOOP_WRITE ? EPOLLOUT : 0);
}

static unsigned from_epoll(uint32_t ev)
{
	return (ev & EPOLLIN ? EVLOOP_READ : 0) | (ev & EPOLLOUT ? EVLOOP_WRITE : 0) |
	       (ev & EPOLLERR ? EVLOOP_ERROR : 0) | (ev & (EPOLLHUP | EPOLLRDHUP) ? EVLOOP_HUP : 0);
}

/* Only fds the loop created itself are closed with their watch. */
static void watch_free(struct watch *w)
{
	if (!w)
		return;
	if (w->kind != WATCH_FD)
		fd_close(w->fd);
	free(w);
}

/*
 * Registers a new watch on @fd. On failure an fd the loop owns (timer,
 * signal) is closed here, so callers need no cleanup of their own.
 */
static int watch_add(struct evloop *loop, struct watch *proto, uint32_t ep_events,
		     struct watch **out)
{
	struct epoll_event ev;
	struct watch *w;
	int err;

	w = malloc(sizeof(*w));
	if (!w) {
		err = -ENOMEM;
		goto fail;
	}
	*w = *proto;
	w->id = loop->next_id++;
	memset(&ev, 0, sizeof(ev));
	ev.events = ep_events;
	ev.data.ptr = w;
	if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, w->fd, &ev) != 0) {
		err = -errno;
		goto fail;
	}
	err = hmap_put(&loop->watches, w->id, (uint64_t)(uintptr_t)w);
	if (err < 0) {
		epoll_ctl(loop->epfd, EPOLL_CTL_DEL, w->fd, NULL);
		goto fail;
	}
	*out = w;
	return 0;
fail:
	if (w)
		watch_free(w);
	else if (proto->kind != WATCH_FD)
		fd_close(proto->fd);
	return err;
}

static struct watch *watch_find(struct evloop *loop, uint64_t id)
{
	uint64_t v;

	if (!hmap_get(&loop->watches, id, &v))
		return NULL;
	return (struct watch *)(uintptr_t)v;
}

static void watch_kill(struct evloop *loop, struct watch *w)
{
	struct watch **pp;

	hmap_del(&loop->watches, w->id, NULL);
	if (w->kind == WATCH_TIMER) {
		for (pp = &loop->timers; *pp; pp = &(*pp)->next_timer) {
			if (*pp == w) {
				*pp = w->next_timer;
				break;
			}
		}
	} else {
		/* Fails harmlessly with EBADF if the owner already closed the fd. */
		epoll_ctl(loop->epfd, EPOLL_CTL_DEL, w->fd, NULL);
	}
	w->is_dead = true;
	w->next_dead = loop->graveyard;
	loop->graveyard = w;
}

static void graveyard_flush(struct evloop *loop)
{
	struct watch *w;

	while ((w = loop->graveyard)) {
		loop->graveyard = w->next_dead;
		watch_free(w);
	}
}

int evloop_create(struct evloop **out)
{
	struct watch proto = {.kind = WATCH_WAKE, .fd = -1};
	struct evloop *loop;
	int err;

	loop = calloc(1, sizeof(*loop));
	if (!loop)
		return -ENOMEM;
	hmap_init(&loop->watches);
	pthread_mutex_init(&loop->lock, NULL);
	atomic_init(&loop->is_quit, false);
	atomic_init(&loop->has_local_tasks, false);
	loop->next_id = 1;
	loop->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (loop->epfd < 0) {
		err = -errno;
		goto fail;
	}
	proto.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (proto.fd < 0) {
		err = -errno;
		goto fail;
	}
	err = watch_add(loop, &proto, EPOLLIN, &loop->wake);
	if (err)
		goto fail;
	*out = loop;
	return 0;
fail:
	evloop_destroy(loop);
	return err;
}

void evloop_destroy(struct evloop *loop)
{
	struct hmap_iter it;
	struct task *t;
	uint64_t v;

	if (!loop)
		return;
	hmap_iter_init(&it, &loop->watches);
	while (hmap_iter_next(&it, NULL, &v))
		watch_free((struct watch *)(uintptr_t)v);
	hmap_fini(&loop->watches);
	graveyard_flush(loop);
	while ((t = loop->tasks_head)) {
		loop->tasks_head = t->next;
		free(t);
	}
	fd_close(loop->epfd);
	pthread_mutex_destroy(&loop->lock);
	free(loop);
}

int evloop_add_fd(struct evloop *loop, int fd, unsigned events, evloop_fd_cb cb, void *user,
		  uint64_t *out_id)
{
	struct watch proto = {.kind = WATCH_FD, .fd = fd, .fd_cb = cb, .user = user};
	struct watch *w;
	int err;

	if (fd < 0 || !cb)
		return -EINVAL;
	err = watch_add(loop, &proto, to_epoll(events), &w);
	if (err)
		return err;
	if (out_id)
		*out_id = w->id;
	return 0;
}

int evloop_mod_fd(struct evloop *loop, uint64_t id, unsigned events)
{
	struct watch *w = watch_find(loop, id);
	struct epoll_event ev;

	if (!w)
		return -ENOENT;
	if (w->kind != WATCH_FD)
		return -EINVAL;
	memset(&ev, 0, sizeof(ev));
	ev.events = to_epoll(events);
	ev.data.ptr = w;
	if (epoll_ctl(loop->epfd, EPOLL_CTL_MOD, w->fd, &ev) != 0)
		return -errno;
	return 0;
}

int evloop_del(struct evloop *loop, uint64_t id)
{
	struct watch *w = watch_find(loop, id);

	if (!w || w->kind == WATCH_WAKE)
		return -ENOENT;
	watch_kill(loop, w);
	return 0;
}

int evloop_add_timer(struct evloop *loop, uint64_t first_ms, uint64_t period_ms,
		     evloop_task_cb cb, void *user, uint64_t *out_id)
{
	struct watch *w;
	int err;

	if (!cb || first_ms > UINT64_MAX / 2000000 || period_ms > UINT64_MAX / 2000000)
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->kind = WATCH_TIMER;
	w->fd = -1;
	w->task_cb = cb;
	w->user = user;
	w->is_one_shot = period_ms == 0;
	w->deadline_ns = clock_monotonic_ns() + first_ms * 1000000;
	w->period_ns = period_ms * 1000000;
	/* A timer armed from a timer callback waits for the next pass. */
	w->pass = loop->timer_pass;
	w->id = loop->next_id++;
	err = hmap_put(&loop->watches, w->id, (uint64_t)(uintptr_t)w);
	if (err < 0) {
		free(w);
		return err;
	}
	w->next_timer = loop->timers;
	loop->timers = w;
	if (out_id)
		*out_id = w->id;
	return 0;
}

int evloop_add_signal(struct evloop *loop, int signo, evloop_signal_cb cb, void *user,
		      uint64_t *out_id)
{
	struct watch proto = {.kind = WATCH_SIGNAL, .fd = -1, .signal_cb = cb, .user = user};
	struct watch *w;
	sigset_t set;
	int err;

	if (!cb || signo <= 0 || sigemptyset(&set) != 0 || sigaddset(&set, signo) != 0)
		return -EINVAL;
	err = pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (err)
		return -err;
	proto.fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (proto.fd < 0)
		return -errno;
	err = watch_add(loop, &proto, EPOLLIN, &w);
	if (err)
		return err;
	if (out_id)
		*out_id = w->id;
	return 0;
}

static void wake(struct evloop *loop)
{
	uint64_t one = 1;

	/* EAGAIN means the counter is saturated: the loop is awake anyway. */
	if (write(loop->wake->fd, &one, sizeof(one)) < 0)
		return;
}

/* The loop this thread is dispatching (inside evloop_run_once()), if any. */
static _Thread_local struct evloop *t_running_loop;

/* Whether the caller is the thread running @loop right now. */
static bool is_loop_thread(const struct evloop *loop)
{
	return t_running_loop == loop;
}

int evloop_post(struct evloop *loop, evloop_task_cb cb, void *user)
{
	struct task *t;

	if (!cb)
		return -EINVAL;
	t = malloc(sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->cb = cb;
	t->user = user;
	t->next = NULL;
	pthread_mutex_lock(&loop->lock);
	if (loop->tasks_tail)
		loop->tasks_tail->next = t;
	else
		loop->tasks_head = t;
	loop->tasks_tail = t;
	pthread_mutex_unlock(&loop->lock);
	/* From a callback: the next round will not block, no need to wake. */
	if (is_loop_thread(loop))
		atomic_store(&loop->has_local_tasks, true);
	else
		wake(loop);
	return 0;
}

void evloop_quit(struct evloop *loop)
{
	atomic_store(&loop->is_quit, true);
	wake(loop);
}

/*
 * Runs the tasks queued so far. Tasks they post go to a fresh queue and run
 * in the next round, so a task that reposts itself cannot starve the fds.
 */
static int run_tasks(struct evloop *loop, bool is_woken)
{
	struct task *t, *next;
	uint64_t cnt;
	int n = 0;

	if (is_woken && read(loop->wake->fd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN)
		return 0;
	atomic_store(&loop->has_local_tasks, false);
	pthread_mutex_lock(&loop->lock);
	t = loop->tasks_head;
	loop->tasks_head = NULL;
	loop->tasks_tail = NULL;
	pthread_mutex_unlock(&loop->lock);
	for (; t; t = next, n++) {
		next = t->next;
		t->cb(t->user);
		free(t);
	}
	return n;
}

/*
 * Calls every timer that is due, earliest deadline first. Timers armed or
 * re-armed by these calls wait for the next pass; a periodic timer that
 * fell behind fires once and keeps its phase when it can.
 */
static int fire_timers(struct evloop *loop)
{
	uint64_t now;
	int n = 0;

	if (!loop->timers)
		return 0;
	now = clock_monotonic_ns();
	loop->timer_pass++;
	for (;;) {
		struct watch *w, *due = NULL;

		for (w = loop->timers; w; w = w->next_timer) {
			if (w->deadline_ns <= now && w->pass != loop->timer_pass &&
			    (!due || w->deadline_ns < due->deadline_ns))
				due = w;
		}
		if (!due)
			break;
		due->pass = loop->timer_pass;
		if (due->period_ns) {
			due->deadline_ns += due->period_ns;
			if (due->deadline_ns <= now)
				due->deadline_ns = now + due->period_ns;
		}
		due->task_cb(due->user);
		n++;
		if (due->is_one_shot && !due->is_dead)
			watch_kill(loop, due);
	}
	return n;
}

/* epoll_wait()'s timeout: @timeout_ms, shortened to the next deadline. */
static int wait_ms(struct evloop *loop, int timeout_ms)
{
	const struct watch *w;
	uint64_t next = UINT64_MAX, now, ms;

	if (atomic_load(&loop->has_local_tasks))
		return 0;
	for (w = loop->timers; w; w = w->next_timer) {
		if (w->deadline_ns < next)
			next = w->deadline_ns;
	}
	if (next == UINT64_MAX)
		return timeout_ms;
	now = clock_monotonic_ns();
	/* Rounded up: waking early would only mean waiting again. */
	ms = next <= now ? 0 : (next - now + 999999) / 1000000;
	if (ms > INT_MAX)
		ms = INT_MAX;
	return timeout_ms >= 0 && (uint64_t)timeout_ms < ms ? timeout_ms : (int)ms;
}

static int deliver_signals(struct watch *w)
{
	struct signalfd_siginfo si;
	int n = 0;

	while (!w->is_dead && read(w->fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		w->signal_cb((int)si.ssi_signo, w->user);
		n++;
	}
	return n;
}

static int dispatch(struct evloop *loop, struct watch *w, uint32_t ep_events)
{
	switch (w->kind) {
	case WATCH_FD:
		w->fd_cb(w->fd, from_epoll(ep_events), w->user);
		return 1;
	case WATCH_TIMER:
		return 0;
	case WATCH_SIGNAL:
		return deliver_signals(w);
	case WATCH_WAKE:
		return run_tasks(loop, true);
	}
	return 0;
}

int evloop_run_once(struct evloop *loop, int timeout_ms)
{
	struct epoll_event evs[EVLOOP_MAX_EVENTS];
	struct evloop *outer;
	struct watch *w;
	int i, n, calls = 0;

	n = epoll_wait(loop->epfd, evs, EVLOOP_MAX_EVENTS, wait_ms(loop, timeout_ms));
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	/* A callback may run another loop: put the outer one back after. */
	outer = t_running_loop;
	t_running_loop = loop;
	for (i = 0; i < n; i++) {
		w = evs[i].data.ptr;
		/* Removed earlier in this batch: its memory is still valid. */
		if (w->is_dead)
			continue;
		calls += dispatch(loop, w, evs[i].events);
	}
	calls += fire_timers(loop);
	/* Tasks the callbacks posted: those they post in turn wait a round. */
	if (atomic_load(&loop->has_local_tasks))
		calls += run_tasks(loop, false);
	t_running_loop = outer;
	graveyard_flush(loop);
	return calls;
}

int evloop_run(struct evloop *loop)
{
	int err = 0;

	while (!atomic_load(&loop->is_quit)) {
		err = evloop_run_once(loop, -1);
		if (err < 0)
			break;
		err = 0;
	}
	atomic_store(&loop->is_quit, false);
	return err;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * evloop.h - the single-threaded epoll event loop every daemon runs on: fd
 * readiness, timers (deadlines the loop keeps: epoll_wait's timeout),
 * signals (signalfd) and tasks posted from any thread (eventfd; a task
 * posted from a callback needs no wake-up). Callbacks run on the loop thread, one at a time,
 * and may add or remove any watch, including their own.
 *
 * Watches are named by a uint64_t id, never a pointer, so removing a watch
 * that already went away (a fired one-shot timer) is a harmless -ENOENT.
 */
#ifndef PFC_BASE_EVLOOP_H
#define PFC_BASE_EVLOOP_H

#include <stdint.h>

/* Interest and readiness bits for fd watches. */
#define EVLOOP_READ (1u << 0)
#define EVLOOP_WRITE (1u << 1)
/* Always reported, never requested: an error or a hang-up on the fd. */
#define EVLOOP_ERROR (1u << 2)
#define EVLOOP_HUP (1u << 3)

/* Events taken from the kernel per epoll_wait(). */
#define EVLOOP_MAX_EVENTS 64

struct evloop;

typedef void (*evloop_fd_cb)(int fd, unsigned revents, void *user);
typedef void (*evloop_task_cb)(void *user);
typedef void (*evloop_signal_cb)(int signo, void *user);

/**
 * evloop_create() - Make an event loop.
 * @out: the loop; free it with evloop_destroy().
 *
 * Return: 0, -ENOMEM, or -errno from epoll_create1()/eventfd().
 * Context: any thread; the loop then belongs to the thread that runs it.
 */
int evloop_create(struct evloop **out);

/**
 * evloop_destroy() - Free the loop, its watches and the fds it created
 * (timerfds, signalfds); fds added with evloop_add_fd() stay open. Tasks
 * still queued are dropped without running. NULL is allowed.
 * Context: the loop thread, outside any callback.
 */
void evloop_destroy(struct evloop *loop);

/**
 * evloop_add_fd() - Call @cb whenever @fd is ready (level-triggered).
 * @loop: the loop.  @fd: borrowed; remove the watch before closing it.
 * @events: EVLOOP_READ and/or EVLOOP_WRITE (0 is allowed: errors only).
 * @cb: gets the fd, the EVLOOP_* bits that are ready, and @user.
 * @out_id: the watch id for evloop_mod_fd()/evloop_del(); may be NULL.
 *
 * Return: 0, -EEXIST if @fd is already watched, -ENOMEM, or -errno.
 * Context: loop thread; allocates.
 */
int evloop_add_fd(struct evloop *loop, int fd, unsigned events, evloop_fd_cb cb, void *user,
		  uint64_t *out_id);

/**
 * evloop_mod_fd() - Change the events an fd watch waits for.
 * @loop: the loop.  @id: an fd watch.  @events: as in evloop_add_fd().
 *
 * Return: 0, -ENOENT (unknown id), -EINVAL (not an fd watch), or -errno.
 */
int evloop_mod_fd(struct evloop *loop, uint64_t id, unsigned events);

/**
 * evloop_del() - Remove any watch. Safe from any callback, for its own or
 * another watch: events already fetched for it are not delivered.
 * @loop: the loop.  @id: the watch.
 *
 * Return: 0 or -ENOENT (unknown, already removed, or a fired one-shot timer).
 * Context: loop thread; the memory is freed after the current round.
 */
int evloop_del(struct evloop *loop, uint64_t id);

/**
 * evloop_add_timer() - Call @cb after @first_ms, then every @period_ms.
 * @loop: the loop.  @first_ms: delay to the first call (0 = next round).
 * @period_ms: 0 for a one-shot timer, which removes itself after firing.
 * @cb, @user: the callback.  @out_id: the watch id; may be NULL.
 *
 * A periodic timer that fell behind fires once, not once per missed period.
 * Deadlines are CLOCK_MONOTONIC, met to the millisecond (rounded up).
 * Return: 0, -EINVAL (no @cb, or a delay past 292 years), -ENOMEM.
 * Context: loop thread; allocates.
 */
int evloop_add_timer(struct evloop *loop, uint64_t first_ms, uint64_t period_ms,
		     evloop_task_cb cb, void *user, uint64_t *out_id);

/**
 * evloop_add_signal() - Deliver @signo through the loop instead of a handler.
 * @loop: the loop.  @signo: the signal; blocked in the calling thread (and
 *        threads it creates later) from now on, also after removal.
 * @cb, @user: the callback, called once per delivered signal.
 * @out_id: the watch id; may be NULL.
 *
 * Call it before starting other threads, or block @signo in them too, so
 * the signal stays pending for the loop. One watch per signal.
 * Return: 0, -EINVAL (bad @signo), -ENOMEM, or -errno from signalfd.
 * Context: loop thread; allocates.
 */
int evloop_add_signal(struct evloop *loop, int signo, evloop_signal_cb cb, void *user,
		      uint64_t *out_id);

/**
 * evloop_post() - Run @cb(@user) soon on the loop thread. Tasks run in the
 * order they were posted.
 *
 * Return: 0 or -ENOMEM.
 * Context: any thread; allocates; takes a mutex.
 */
int evloop_post(struct evloop *loop, evloop_task_cb cb, void *user);

/**
 * evloop_run() - Dispatch events until evloop_quit().
 *
 * Return: 0 after a quit, or -errno if epoll_wait() fails.
 * Context: the loop thread; blocks.
 */
int evloop_run(struct evloop *loop);

/**
 * evloop_run_once() - Wait up to @timeout_ms (-1 = forever, 0 = poll) for
 * events and dispatch one batch.
 *
 * Return: number of callbacks made (0 on timeout), or -errno.
 * Context: the loop thread; blocks up to @timeout_ms.
 */
int evloop_run_once(struct evloop *loop, int timeout_ms);

/**
 * evloop_quit() - Make evloop_run() return after the current callback and
 * the rest of its batch.
 * Context: any thread (a loop callback, another thread or a posted task).
 */
void evloop_quit(struct evloop *loop);

#endif

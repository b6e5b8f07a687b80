// SPDX-License-Identifier: Apache-2.0
/*
 * relay_proxy.c - the byte proxy of traced_relay: the local producer socket
 * and, for each producer accepted on it, a pair of the local connection and
 * a new upstream connection to the host, which starts with a forged
 * SetPeerIdentity frame and then carries bytes both ways unparsed. Each
 * direction has one fixed RELAY_PROXY_BUF_BYTES buffer; a full buffer stops
 * reading from its source, so a slow host slows the producer down instead
 * of growing the relay. Few pairs (one per producer process), one thread.
 */
#include "relay/relay_int.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/compiler.h"
#include "base/evloop.h"
#include "base/file.h"
#include "base/log.h"
#include "base/sock.h"

/* Warnings about connections (limit, host unreachable) at most this often. */
#define WARN_INTERVAL_MS 10000
/* After accept() ran out of fds or memory, wait this long before retrying. */
#define ACCEPT_PAUSE_MS 100

struct pair;

/* One end of a pair; buf holds what was read from this end for the other. */
struct side {
	struct pair *pair;
	bool is_local;
	int fd;
	uint64_t watch;
	bool has_watch;
	unsigned events;
	bool rd_done; /* nothing more will be read from this end */
	bool wr_done; /* nothing more will be written to this end */
	bool is_hup;  /* hung up: unwatched, what it still holds is read on demand */
	uint8_t *buf;
	size_t off, len; /* pending bytes are buf[off, len) */
};

struct pair {
	struct relay_proxy *proxy;
	struct side local; /* the producer on this machine */
	struct side up;    /* the host's traced */
	bool is_connecting;
	bool is_closing;   /* one end finished; the drain deadline runs */
	uint64_t timer;    /* connect deadline, then drain deadline */
	bool has_timer;
	struct pair *prev, *next;
};

struct relay_proxy {
	struct evloop *loop;
	int listen_fd;
	uint64_t listen_watch;
	bool has_listen_watch;
	uint64_t pause_timer;
	bool has_pause_timer;
	const char *remote_name;
	const struct relay_identity *identity;
	size_t max_connections;
	struct pair *pairs;
	struct relay_proxy_stats stats;
	uint64_t last_warn_ns;
};

static bool warn_allowed(struct relay_proxy *p)
{
	uint64_t now = clock_monotonic_ns();

	if (p->last_warn_ns && now - p->last_warn_ns < WARN_INTERVAL_MS * NS_PER_MS)
		return false;
	p->last_warn_ns = now;
	return true;
}

static size_t pending(const struct side *s)
{
	return s->len - s->off;
}

/* Free bytes at the end of the buffer, after moving pending bytes to the front. */
static size_t room(struct side *s)
{
	if (s->off == s->len) {
		s->off = s->len = 0;
	} else if (s->len == RELAY_PROXY_BUF_BYTES && s->off > 0) {
		memmove(s->buf, s->buf + s->off, pending(s));
		s->len -= s->off;
		s->off = 0;
	}
	return RELAY_PROXY_BUF_BYTES - s->len;
}

static struct side *other(struct side *s)
{
	return s->is_local ? &s->pair->up : &s->pair->local;
}

static void unwatch(struct relay_proxy *p, struct side *s)
{
	if (s->has_watch)
		evloop_del(p->loop, s->watch);
	s->has_watch = false;
}

/* Nothing more can go to @s: what was queued for it is dropped, and its
 * source is not read any more (those bytes would have nowhere to go). */
static void side_writes_done(struct side *s)
{
	struct side *o = other(s);

	s->wr_done = true;
	o->off = o->len = 0;
	o->rd_done = true;
}

/* @s reached its end (EOF or an error): the peer behind it is gone. */
static void side_reads_done(struct side *s)
{
	s->rd_done = true;
	side_writes_done(s);
}

static void side_read(struct side *s)
{
	struct relay_proxy *p = s->pair->proxy;
	int fds[RELAY_MAX_FDS_PER_RECV];
	size_t n_fds, i, cap;
	ssize_t n;

	while (!s->rd_done && (cap = room(s)) > 0) {
		n_fds = 0;
		if (s->is_local) {
			/* Producers send fds (a shared memory buffer) that cannot
			 * cross to another machine: every one is closed here. */
			n = sock_recv_with_fds(s->fd, s->buf + s->len, cap, fds,
					       RELAY_MAX_FDS_PER_RECV, &n_fds);
			for (i = 0; n >= 0 && i < n_fds; i++)
				close(fds[i]);
			if (n >= 0)
				p->stats.n_fds_dropped += n_fds;
		} else {
			n = sock_recv(s->fd, s->buf + s->len, cap);
		}
		if (n > 0) {
			s->len += (size_t)n;
			continue;
		}
		/* A hung-up socket has nothing more to come once it is empty. */
		if (n == -EAGAIN && !s->is_hup)
			return;
		if (n < 0 && n != -EAGAIN)
			LOG_D("traced_relay: %s connection read error: %d, closing",
			      s->is_local ? "producer" : "host", (int)n);
		side_reads_done(s);
	}
}

/* Sends what the other end's buffer holds to @dst. */
static void side_write(struct side *dst)
{
	struct side *src = other(dst);
	ssize_t n;

	while (!dst->wr_done && pending(src) > 0) {
		n = sock_send(dst->fd, src->buf + src->off, pending(src));
		if (n > 0) {
			src->off += (size_t)n;
			continue;
		}
		if (n == -EAGAIN)
			break;
		LOG_D("traced_relay: %s connection write error: %d, closing",
		      dst->is_local ? "producer" : "host", (int)n);
		side_writes_done(dst);
	}
	/* A hung-up source is not watched: refill from it now. */
	if (src->is_hup && !src->rd_done)
		side_read(src);
}

static void pair_free(struct pair *pr)
{
	struct relay_proxy *p = pr->proxy;

	/* Last chance for bytes already read: one non-blocking attempt each
	 * way (the peers reconnect on their own, nothing waits for this). */
	if (!pr->is_connecting && !pr->up.wr_done && pending(&pr->local))
		(void)sock_send(pr->up.fd, pr->local.buf + pr->local.off, pending(&pr->local));
	if (!pr->local.wr_done && pending(&pr->up))
		(void)sock_send(pr->local.fd, pr->up.buf + pr->up.off, pending(&pr->up));
	unwatch(p, &pr->local);
	unwatch(p, &pr->up);
	if (pr->has_timer)
		evloop_del(p->loop, pr->timer);
	fd_close(pr->local.fd);
	fd_close(pr->up.fd);
	if (pr->prev)
		pr->prev->next = pr->next;
	else
		p->pairs = pr->next;
	if (pr->next)
		pr->next->prev = pr->prev;
	p->stats.n_connections--;
	free(pr->local.buf);
	free(pr->up.buf);
	free(pr);
}

static void on_pair_timer(void *user)
{
	struct pair *pr = user;

	pr->has_timer = false; /* one-shot: already gone */
	if (pr->is_connecting) {
		pr->proxy->stats.n_upstream_failed++;
		if (warn_allowed(pr->proxy))
			LOG_W("cannot reach the host at %s: connection timed out; closing the "
			      "producer's connection", pr->proxy->remote_name);
	} else {
		LOG_D("traced_relay: a closing connection did not drain in time, dropping it");
	}
	pair_free(pr);
}

static void set_timer(struct pair *pr, uint64_t ms)
{
	struct relay_proxy *p = pr->proxy;

	if (pr->has_timer)
		evloop_del(p->loop, pr->timer);
	pr->has_timer = evloop_add_timer(p->loop, ms, 0, on_pair_timer, pr, &pr->timer) == 0;
}

static void side_set_events(struct side *s, unsigned want)
{
	struct relay_proxy *p = s->pair->proxy;

	if (s->has_watch && s->events != want && evloop_mod_fd(p->loop, s->watch, want) == 0)
		s->events = want;
}

static unsigned side_wanted(struct side *s)
{
	struct pair *pr = s->pair;
	unsigned want = 0;

	if (!s->is_local && pr->is_connecting)
		return EVLOOP_WRITE;
	if (!s->rd_done && room(s) > 0)
		want |= EVLOOP_READ;
	if (!s->wr_done && pending(other(s)) > 0)
		want |= EVLOOP_WRITE;
	return want;
}

/* Closes the pair once neither direction can carry anything more, else
 * arms the watches for what is left to do. May free @pr. */
static void pair_update(struct pair *pr)
{
	struct side *l = &pr->local, *u = &pr->up;
	bool l2u_done = (l->rd_done && !pending(l)) || u->wr_done;
	bool u2l_done = (u->rd_done && !pending(u)) || l->wr_done;

	if (l2u_done && u2l_done) {
		pair_free(pr);
		return;
	}
	if (!pr->is_closing && (l->rd_done || l->wr_done || u->rd_done || u->wr_done)) {
		pr->is_closing = true;
		set_timer(pr, RELAY_DRAIN_TIMEOUT_MS);
	}
	/* A socket that hung up, or that we are done with both ways, reports
	 * HUP/ERR whatever it is watched for: stop watching it. */
	if (l->is_hup || (l->rd_done && l->wr_done))
		unwatch(pr->proxy, l);
	else
		side_set_events(l, side_wanted(l));
	if (u->is_hup || (u->rd_done && u->wr_done))
		unwatch(pr->proxy, u);
	else
		side_set_events(u, side_wanted(u));
}

static void on_side_event(int fd, unsigned revents, void *user)
{
	struct side *s = user, *o = other(s);
	struct pair *pr = s->pair;
	int err;

	if (!s->is_local && pr->is_connecting) {
		err = sock_connect_finish(fd);
		if (err == -EINPROGRESS || err == -EALREADY)
			return;
		if (err < 0) {
			pr->proxy->stats.n_upstream_failed++;
			if (warn_allowed(pr->proxy))
				LOG_W("cannot reach the host at %s: %s; closing the producer's "
				      "connection", pr->proxy->remote_name, strerror(-err));
			pair_free(pr);
			return;
		}
		pr->is_connecting = false;
		if (!pr->is_closing && pr->has_timer) {
			evloop_del(pr->proxy->loop, pr->timer);
			pr->has_timer = false;
		}
		revents |= EVLOOP_WRITE;
	}
	if (revents & EVLOOP_WRITE)
		side_write(s);
	if (revents & (EVLOOP_READ | EVLOOP_HUP | EVLOOP_ERROR)) {
		side_read(s);
		if (revents & (EVLOOP_HUP | EVLOOP_ERROR)) {
			s->is_hup = true;
			if (!s->wr_done)
				side_writes_done(s);
		}
	}
	/* Forward at once what just arrived rather than wait for a round. */
	if (pending(s) && !o->wr_done && !(o == &pr->up && pr->is_connecting))
		side_write(o);
	pair_update(pr);
}

static void pair_create(struct relay_proxy *p, int cfd)
{
	struct buf frame = BUF_INIT;
	struct pair *pr = NULL;
	pid_t pid = -1;
	uid_t uid = (uid_t)-1;
	int ufd = -1, rc;

	if (sock_peer_cred(cfd, &pid, &uid) < 0) {
		pid = -1;
		uid = (uid_t)-1;
	}
	pr = calloc(1, sizeof(*pr));
	if (!pr)
		goto fail;
	pr->local.buf = malloc(RELAY_PROXY_BUF_BYTES);
	pr->up.buf = malloc(RELAY_PROXY_BUF_BYTES);
	if (!pr->local.buf || !pr->up.buf)
		goto fail;
	/* The host must see who the producer is before its first byte. */
	rc = relay_peer_identity_frame((int32_t)pid, (int32_t)uid, p->identity, &frame);
	if (rc < 0 || frame.len > RELAY_PROXY_BUF_BYTES)
		goto fail;
	memcpy(pr->local.buf, frame.data, frame.len);
	pr->local.len = frame.len;
	rc = sock_connect_nonblock(p->remote_name, &ufd);
	if (rc < 0 && rc != -EINPROGRESS) {
		ufd = -1;
		p->stats.n_upstream_failed++;
		if (warn_allowed(p))
			LOG_W("cannot reach the host at %s: %s; closing the producer's connection",
			      p->remote_name, strerror(-rc));
		goto fail;
	}
	pr->proxy = p;
	pr->is_connecting = true;
	pr->local.pair = pr->up.pair = pr;
	pr->local.is_local = true;
	pr->local.fd = cfd;
	pr->up.fd = ufd;
	if (evloop_add_fd(p->loop, cfd, EVLOOP_READ, on_side_event, &pr->local, &pr->local.watch) < 0)
		goto fail;
	pr->local.has_watch = true;
	pr->local.events = EVLOOP_READ;
	if (evloop_add_fd(p->loop, ufd, EVLOOP_WRITE, on_side_event, &pr->up, &pr->up.watch) < 0) {
		evloop_del(p->loop, pr->local.watch);
		goto fail;
	}
	pr->up.has_watch = true;
	pr->up.events = EVLOOP_WRITE;
	pr->next = p->pairs;
	if (p->pairs)
		p->pairs->prev = pr;
	p->pairs = pr;
	p->stats.n_connections++;
	set_timer(pr, RELAY_CONNECT_TIMEOUT_MS);
	buf_fini(&frame);
	LOG_D("traced_relay: producer pid %d uid %d connected, forwarding to %s", (int)pid,
	      (int)uid, p->remote_name);
	return;
fail:
	buf_fini(&frame);
	fd_close(cfd);
	fd_close(ufd);
	if (pr) {
		free(pr->local.buf);
		free(pr->up.buf);
		free(pr);
	}
}

static void on_listen(int fd, unsigned revents, void *user);

static void on_pause_over(void *user)
{
	struct relay_proxy *p = user;

	p->has_pause_timer = false;
	if (p->has_listen_watch)
		evloop_mod_fd(p->loop, p->listen_watch, EVLOOP_READ);
}

static void on_listen(int fd, unsigned revents, void *user)
{
	struct relay_proxy *p = user;
	int i, cfd, rc;

	(void)fd;
	(void)revents;
	for (i = 0; i < RELAY_MAX_ACCEPTS_PER_WAKEUP; i++) {
		rc = sock_accept(p->listen_fd, &cfd);
		if (rc == -EAGAIN)
			return;
		if (rc == -EMFILE || rc == -ENFILE || rc == -ENOBUFS || rc == -ENOMEM) {
			/* The connection stays queued: stop polling for a moment
			 * instead of spinning on it. */
			if (warn_allowed(p))
				LOG_W("cannot accept producers: %s; pausing", strerror(-rc));
			if (!p->has_pause_timer &&
			    evloop_add_timer(p->loop, ACCEPT_PAUSE_MS, 0, on_pause_over, p,
					     &p->pause_timer) == 0) {
				p->has_pause_timer = true;
				evloop_mod_fd(p->loop, p->listen_watch, 0);
			}
			return;
		}
		if (rc < 0)
			continue;
		p->stats.n_accepted++;
		if (p->stats.n_connections >= p->max_connections) {
			p->stats.n_rejected++;
			if (warn_allowed(p))
				LOG_W("%zu producers are already relayed (the limit), closing a new "
				      "connection", p->stats.n_connections);
			close(cfd);
			continue;
		}
		pair_create(p, cfd);
	}
}

int relay_listen(const char *name, int *out_fd)
{
	struct pollfd pfd;
	int fd = -1, rc;

	/* Listening would unlink a live traced's socket: ask first. */
	rc = sock_connect_nonblock(name, &fd);
	if (rc == -EINPROGRESS) {
		pfd.fd = fd;
		pfd.events = POLLOUT;
		pfd.revents = 0;
		if (PFC_EINTR_RETRY(poll(&pfd, 1, RELAY_PROBE_TIMEOUT_MS)) == 1)
			rc = sock_connect_finish(fd);
		else
			rc = -ETIMEDOUT;
	}
	fd_close(fd);
	if (rc == 0)
		return -EBUSY;
	return sock_listen(name, RELAY_LISTEN_BACKLOG, out_fd);
}

int relay_proxy_create(struct evloop *loop, int listen_fd, const struct relay_proxy_options *o,
		       struct relay_proxy **out)
{
	struct relay_proxy *p = NULL;
	int rc;

	if (!loop || listen_fd < 0 || !o || !o->remote_name || !o->identity) {
		fd_close(listen_fd);
		return -EINVAL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		close(listen_fd);
		return -ENOMEM;
	}
	p->loop = loop;
	p->listen_fd = listen_fd;
	p->remote_name = o->remote_name;
	p->identity = o->identity;
	p->max_connections = o->max_connections ? o->max_connections : RELAY_MAX_CONNECTIONS;
	rc = evloop_add_fd(loop, listen_fd, EVLOOP_READ, on_listen, p, &p->listen_watch);
	if (rc < 0) {
		close(listen_fd);
		free(p);
		return rc;
	}
	p->has_listen_watch = true;
	*out = p;
	return 0;
}

void relay_proxy_destroy(struct relay_proxy *p)
{
	if (!p)
		return;
	while (p->pairs)
		pair_free(p->pairs);
	if (p->has_listen_watch)
		evloop_del(p->loop, p->listen_watch);
	if (p->has_pause_timer)
		evloop_del(p->loop, p->pause_timer);
	fd_close(p->listen_fd);
	free(p);
}

void relay_proxy_get_stats(const struct relay_proxy *p, struct relay_proxy_stats *out)
{
	const struct pair *pr;

	*out = p->stats;
	out->buffered_bytes = 0;
	for (pr = p->pairs; pr; pr = pr->next)
		out->buffered_bytes += pending(&pr->local) + pending(&pr->up);
}

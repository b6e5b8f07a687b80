// SPDX-License-Identifier: Apache-2.0
/*
 * hp_daemon.c - heapprofd's main thread (see heapprofd.h): the connection
 * to traced (android.heapprofd instances), the clients' control sockets,
 * the bookkeeping fed by the unwinder thread's batches, and the dumps (at
 * the end of a session, when a process goes away, and periodically with
 * continuous_dump_config). A client whose config matches an instance gets
 * a fresh ring (a sealed memfd) and a wake-up socket; the ring then
 * belongs to the unwinder thread until the session or the client ends.
 */
#include "heapprofd/heapprofd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/evloop.h"
#include "base/hmap.h"
#include "base/log.h"
#include "heapprofd/hp_book.h"
#include "heapprofd/hp_config.h"
#include "heapprofd/hp_dump.h"
#include "heapprofd/hp_unwinder.h"
#include "heapprofd/ring/hp_ring.h"
#include "heapprofd/ring/hp_wire.h"
#include "tracing/producer.h"
#include "tracing/producer_daemon.h"

/* A stopping instance waits this long for its clients' last records. */
#define HP_STOP_TIMEOUT_MS 5000u
/* Child mode: without a word from traced by then, the client is told no
 * session wants it (a blocking init must not wait for a missing traced). */
#define HP_CHILD_NO_SESSION_MS 2000u

struct inst {
	struct inst *next;
	struct hp_daemon *d;
	uint64_t id;
	struct trace_writer *tw;
	struct hp_seq seq;
	struct hp_config cfg;
	uint64_t dump_timer, stop_timer;
	bool stopping;
};

struct proc {
	struct proc *next;
	struct hp_daemon *d;
	uint32_t id, pid;
	char argv0[512];
	int ctl_fd;
	uint64_t watch;
	bool hello, ctl_closed, ring_live, from_startup, corrupt, exited;
	char *heap_names[HP_MAX_HEAPS];
	uint64_t intervals[HP_MAX_HEAPS];
	struct hp_book *books[HP_MAX_HEAPS];
	struct inst *inst;
	uint64_t start_ts, last_dump_ts;
	uint64_t unwind_errors, unwind_us, records, malformed, dropped, blocked_us;
	uint32_t client_error;
	uint32_t pending_drains;
};

struct hp_daemon {
	struct evloop *loop;
	struct producer_daemon *pd;
	struct hp_unwinder *unw;
	struct proc *procs;
	struct inst *insts;
	uint32_t next_id, n_procs;
	struct hmap cstacks; /* id -> struct hp_cstack * */
	int listen_fd;
	uint64_t listen_watch;
	uint32_t exclusive_pid;
	bool child_mode, synced;
	uint64_t no_session_timer;
};

enum { DRAIN_DUMP = 1 };

const char *heapprofd_default_sock(void)
{
	const char *e = getenv("PERFETTO_HEAPPROFD_SOCK_NAME");

	return e && e[0] ? e : "/run/perfetto/heapprofd.sock";
}

/* ---------------------------------------------------------- helpers ---- */

static const struct hp_cstack *lookup_cstack(uint64_t id, void *user)
{
	struct hp_daemon *d = user;
	uint64_t v;

	return hmap_get(&d->cstacks, id, &v) ? (const struct hp_cstack *)(uintptr_t)v : NULL;
}

static void read_argv0(uint32_t pid, char *out, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	out[0] = 0;
	snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, out, size - 1);
	close(fd);
	out[n > 0 ? n : 0] = 0;
}

static void send_simple(struct proc *p, uint32_t type)
{
	uint8_t buf[16];
	struct hp_wire_out w;

	if (p->ctl_fd < 0 || p->ctl_closed)
		return;
	hp_wire_begin(&w, buf, sizeof(buf), type);
	(void)send(p->ctl_fd, w.buf, w.len, MSG_DONTWAIT | MSG_NOSIGNAL);
}

static struct proc *find_proc(struct hp_daemon *d, uint32_t id)
{
	struct proc *p;

	for (p = d->procs; p; p = p->next) {
		if (p->id == id)
			return p;
	}
	return NULL;
}

/* ------------------------------------------------------------ dumps ---- */

static void dump_proc(struct proc *p, bool disconnected)
{
	struct inst *in = p->inst;
	uint64_t now = hp_now_coarse_ns();
	uint32_t h;

	if (!in)
		return;
	for (h = 1; h < HP_MAX_HEAPS; h++) {
		struct hp_dump_hdr hdr;

		if (!p->books[h])
			continue;
		memset(&hdr, 0, sizeof(hdr));
		hdr.pid = p->pid;
		hdr.from_startup = p->from_startup;
		hdr.disconnected = disconnected;
		hdr.buffer_corrupted = p->corrupt;
		/* As Perfetto's heapprofd reports a ring a record did not fit in:
		 * there, a client without block_client gives up at once and the
		 * dump says buffer_overran, CLIENT_ERROR_HIT_TIMEOUT; ours drops
		 * the record (counted) and goes on, and says the same. */
		hdr.client_error = p->client_error;
		if (!hdr.client_error && p->dropped)
			hdr.client_error = HP_CLIENT_ERROR_HIT_TIMEOUT;
		hdr.buffer_overran = hdr.client_error == HP_CLIENT_ERROR_HIT_TIMEOUT;
		hdr.dump_at_max = in->cfg.dump_at_max;
		hdr.heap_name = p->heap_names[h] ? p->heap_names[h] : "libc.malloc";
		hdr.interval = p->intervals[h];
		hdr.ts_start = p->last_dump_ts ? p->last_dump_ts : p->start_ts;
		hdr.ts_end = now;
		hdr.unwinding_errors = p->unwind_errors;
		hdr.heap_samples = p->books[h]->samples;
		hdr.unwind_us = p->unwind_us;
		hdr.blocked_us = p->blocked_us;
		hp_dump_write(&in->seq, &hdr, p->books[h], lookup_cstack, p->d);
	}
	p->last_dump_ts = now;
	tw_flush(in->tw);
	LOG_I("heapprofd: dumped pid %u (%llu records, %llu unwind errors, %llu dropped by the "
	      "client)",
	      p->pid, (unsigned long long)p->records, (unsigned long long)p->unwind_errors,
	      (unsigned long long)p->dropped);
}

static void unbind(struct proc *p)
{
	uint32_t h;

	for (h = 0; h < HP_MAX_HEAPS; h++) {
		if (p->books[h]) {
			hp_book_fini(p->books[h]);
			free(p->books[h]);
			p->books[h] = NULL;
		}
		p->intervals[h] = 0;
	}
	p->inst = NULL;
}

static void inst_maybe_finish(struct inst *in);

static void proc_destroy(struct proc *p)
{
	struct hp_daemon *d = p->d;
	struct proc **pp;
	uint32_t h;

	for (pp = &d->procs; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	}
	d->n_procs--;
	unbind(p);
	if (p->watch)
		evloop_del(d->loop, p->watch);
	if (p->ctl_fd >= 0)
		close(p->ctl_fd);
	for (h = 0; h < HP_MAX_HEAPS; h++)
		free(p->heap_names[h]);
	free(p);
	if (d->child_mode && !d->procs && !d->insts)
		evloop_quit(d->loop);
}

/* ----------------------------------------------------------- binding ---- */

static void send_interval(struct proc *p, uint32_t heap)
{
	uint8_t buf[64];
	struct hp_wire_out w;

	hp_wire_begin(&w, buf, sizeof(buf), HP_MSG_HEAP_INTERVAL);
	hp_wire_u64(&w, HP_F_HEAP_ID, heap);
	hp_wire_u64(&w, HP_F_INTERVAL, p->intervals[heap]);
	(void)send(p->ctl_fd, w.buf, w.len, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* Enable @heap for @p's session if its config asks for it. */
static void enable_heap(struct proc *p, uint32_t heap)
{
	uint64_t iv;

	if (!p->inst || !p->heap_names[heap] || p->books[heap])
		return;
	iv = hp_config_heap_interval(&p->inst->cfg, p->heap_names[heap]);
	if (!iv)
		return;
	p->books[heap] = calloc(1, sizeof(struct hp_book));
	if (!p->books[heap])
		return;
	hp_book_init(p->books[heap]);
	p->intervals[heap] = iv;
}

static int bind_proc(struct proc *p, struct inst *in)
{
	struct hp_daemon *d = p->d;
	uint8_t buf[HP_WIRE_MAX_BYTES];
	struct hp_wire_out w;
	int ring = -1, sv[2] = {-1, -1}, fds[2], rc;
	uint32_t h;
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(2 * sizeof(int))];
	} cm;
	struct iovec iov;
	struct msghdr mh;
	struct cmsghdr *c;

	ring = hp_ring_create_memfd(in->cfg.shmem_bytes);
	if (ring < 0)
		return ring;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0) {
		rc = -errno;
		close(ring);
		return rc;
	}
	p->inst = in;
	for (h = 1; h < HP_MAX_HEAPS; h++)
		enable_heap(p, h);
	hp_wire_begin(&w, buf, sizeof(buf), HP_MSG_START);
	hp_wire_u64(&w, HP_F_RING_BYTES, in->cfg.shmem_bytes);
	hp_wire_u64(&w, HP_F_BLOCK, in->cfg.block_client);
	hp_wire_u64(&w, HP_F_TIMEOUT_US, in->cfg.block_timeout_us);
	for (h = 1; h < HP_MAX_HEAPS; h++) {
		if (p->intervals[h]) {
			hp_wire_u64(&w, HP_F_HEAP_ID, h);
			hp_wire_u64(&w, HP_F_INTERVAL, p->intervals[h]);
		}
	}
	memset(&mh, 0, sizeof(mh));
	iov.iov_base = w.buf;
	iov.iov_len = w.len;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cm.b;
	mh.msg_controllen = sizeof(cm.b);
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(2 * sizeof(int));
	fds[0] = ring;
	fds[1] = sv[1];
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	if (sendmsg(p->ctl_fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		rc = -errno;
		close(ring);
		close(sv[0]);
		close(sv[1]);
		unbind(p);
		return rc;
	}
	close(sv[1]);
	p->start_ts = hp_now_coarse_ns();
	p->last_dump_ts = 0;
	p->ring_live = true;
	p->corrupt = false;
	p->client_error = 0;
	p->unwind_errors = p->unwind_us = p->records = p->malformed = p->dropped = 0;
	LOG_I("heapprofd: profiling pid %u (%s) for instance %llu", p->pid, p->argv0,
	      (unsigned long long)in->id);
	rc = hp_unwinder_add(d->unw, p->id, p->pid, ring, in->cfg.shmem_bytes, sv[0]);
	if (rc < 0) {
		/* No ring will send its last batch: not live. */
		p->ring_live = false;
		unbind(p);
	}
	return rc;
}

/* Give @p to the first instance that wants it. */
static void try_bind(struct proc *p)
{
	struct inst *in;

	if (p->inst || !p->hello || p->ctl_closed || p->ring_live || p->exited)
		return;
	for (in = p->d->insts; in; in = in->next) {
		if (in->stopping || !hp_config_matches(&in->cfg, p->pid, p->argv0))
			continue;
		if (bind_proc(p, in) < 0)
			LOG_W("heapprofd: cannot start profiling pid %u, ignoring", p->pid);
		return;
	}
}

/* ---------------------------------------------------------- batches ---- */

static void free_batch(struct hp_batch *b)
{
	struct hp_cstack *s, *next;

	for (s = b->stacks; s; s = next) {
		next = s->next;
		free(s);
	}
	free(b);
}

static void on_batch(struct hp_batch *b, void *user)
{
	struct hp_daemon *d = user;
	struct proc *p = find_proc(d, b->client_id);
	struct hp_cstack *s, *next;
	size_t i;

	/* Callstacks are the daemon's for good (other processes' samples
	 * may name them later). */
	for (s = b->stacks; s; s = next) {
		next = s->next;
		s->next = NULL;
		if (hmap_put(&d->cstacks, s->id, (uint64_t)(uintptr_t)s) < 0)
			free(s);
	}
	b->stacks = NULL;
	if (!p) {
		free_batch(b);
		return;
	}
	p->unwind_errors += b->unwind_errors;
	p->unwind_us += b->unwind_us;
	p->records += b->records;
	p->malformed += b->malformed;
	if (b->client_dropped > p->dropped)
		p->dropped = b->client_dropped;
	if (b->client_blocked_us > p->blocked_us)
		p->blocked_us = b->client_blocked_us;
	if (b->client_error)
		p->client_error = b->client_error;
	if (b->corrupt) {
		p->corrupt = true;
		LOG_W("heapprofd: pid %u wrote garbage into its ring; no longer read", p->pid);
	}
	for (i = 0; i < b->n; i++) {
		const struct hp_item *it = &b->items[i];
		struct hp_book *bk = it->heap < HP_MAX_HEAPS ? p->books[it->heap] : NULL;

		if (!bk)
			continue;
		if (it->kind == HP_ITEM_ALLOC)
			hp_book_alloc(bk, it->addr, it->size, it->cstack);
		else
			hp_book_free(bk, it->addr);
	}
	if (b->drained && p->pending_drains) {
		p->pending_drains--;
		if (b->drain_token == DRAIN_DUMP)
			dump_proc(p, false);
	}
	if (b->gone) {
		struct inst *in = p->inst;

		p->ring_live = false;
		p->exited = p->exited || b->exited;
		dump_proc(p, p->ctl_closed || p->exited);
		unbind(p);
		if (p->ctl_closed)
			proc_destroy(p);
		else
			try_bind(p);
		if (in)
			inst_maybe_finish(in);
	}
	free_batch(b);
}

/* ----------------------------------------------------------- control ---- */

static void on_hello(struct proc *p, struct hp_wire_in *in)
{
	struct hp_wire_field f;

	(void)in;
	(void)f;
	p->hello = true;
	read_argv0(p->pid, p->argv0, sizeof(p->argv0));
	/* Every client's heap 1 is malloc (its HEAP message follows the
	 * HELLO): known now, so a START sent at once gives it its interval. */
	if (!p->heap_names[1])
		p->heap_names[1] = strdup("libc.malloc");
}

static void on_heap(struct proc *p, struct hp_wire_in *in)
{
	struct hp_wire_field f;
	uint64_t id = 0;
	char name[HP_HEAP_NAME_MAX] = "";

	while (hp_wire_next(in, &f) == 1) {
		if (f.id == HP_F_HEAP_ID)
			id = hp_wire_field_u64(&f);
		else if (f.id == HP_F_HEAP_NAME && f.len < sizeof(name)) {
			memcpy(name, f.val, f.len);
			name[f.len] = 0;
		}
	}
	if (id == 0 || id >= HP_MAX_HEAPS || !name[0] || p->heap_names[id])
		return;
	p->heap_names[id] = strdup(name);
	if (p->inst && !p->books[id]) {
		enable_heap(p, (uint32_t)id);
		if (p->books[id])
			send_interval(p, (uint32_t)id);
	}
}

static void ctl_closed(struct proc *p)
{
	p->ctl_closed = true;
	if (p->watch)
		evloop_del(p->d->loop, p->watch);
	p->watch = 0;
	if (p->ring_live)
		hp_unwinder_remove(p->d->unw, p->id); /* the gone batch destroys it */
	else
		proc_destroy(p);
}

static void on_ctl(int fd, unsigned revents, void *user)
{
	struct proc *p = user;
	uint8_t buf[HP_WIRE_MAX_BYTES];
	unsigned n_msgs;

	(void)revents;
	for (n_msgs = 0; n_msgs < 64; n_msgs++) {
		struct hp_wire_in in;
		uint32_t type;
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return;
		if (n <= 0) {
			ctl_closed(p);
			return;
		}
		if (hp_wire_parse(buf, (size_t)n, &type, &in) < 0)
			continue;
		if (type == HP_MSG_HELLO) {
			bool first = !p->hello;

			on_hello(p, &in);
			if (first) {
				try_bind(p);
				if (!p->inst && (p->d->synced || !p->d->child_mode))
					send_simple(p, HP_MSG_NO_SESSION);
			}
		} else if (type == HP_MSG_HEAP) {
			on_heap(p, &in);
		}
	}
}

static int add_client(struct hp_daemon *d, int fd, uint32_t pid)
{
	struct proc *p, *next;

	/* A process has one client: a new connection from its pid is a new
	 * image (exec; the old connection, closed on exec, may not have been
	 * seen closed yet) or a new process (the pid was reused). Either way
	 * the older connection is over; a START sent to it would be lost. */
	for (p = d->procs; p; p = next) {
		next = p->next;
		if (p->pid == pid && !p->ctl_closed) {
			LOG_I("heapprofd: pid %u connected again: its previous connection is over",
			      pid);
			ctl_closed(p);
		}
	}
	if (d->n_procs >= HEAPPROFD_MAX_CLIENTS) {
		close(fd);
		return -EMFILE;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		close(fd);
		return -ENOMEM;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	p->d = d;
	p->id = ++d->next_id;
	p->pid = pid;
	p->ctl_fd = fd;
	p->from_startup = true;
	if (evloop_add_fd(d->loop, fd, EVLOOP_READ, on_ctl, p, &p->watch) < 0) {
		close(fd);
		free(p);
		return -ENOMEM;
	}
	p->next = d->procs;
	d->procs = p;
	d->n_procs++;
	return 0;
}

static void on_accept(int fd, unsigned revents, void *user)
{
	struct hp_daemon *d = user;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int c;

	(void)revents;
	c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (c < 0)
		return;
	/* The kernel's word for who connected, not the client's. */
	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		close(c);
		return;
	}
	if (add_client(d, c, (uint32_t)cred.pid) == 0)
		LOG_I("heapprofd: pid %d connected", cred.pid);
}

static int listen_seqpacket(const char *name, int *out_fd)
{
	struct sockaddr_un sa;
	size_t len = strlen(name);
	socklen_t sl;
	int fd, rc;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (len == 0 || len >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, name, len);
	if (name[0] == '@')
		sa.sun_path[0] = 0;
	else
		unlink(name);
	sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (name[0] == '@' ? 0 : 1));
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sl) < 0 || listen(fd, 64) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	/* Any user's process may be profiled by a session that asks. */
	if (name[0] != '@')
		chmod(name, 0666);
	*out_fd = fd;
	return 0;
}

/* -------------------------------------------------------- instances ---- */

static struct inst *find_inst(struct hp_daemon *d, uint64_t id)
{
	struct inst *in;

	for (in = d->insts; in; in = in->next) {
		if (in->id == id)
			return in;
	}
	return NULL;
}

static void inst_destroy(struct inst *in)
{
	struct hp_daemon *d = in->d;
	struct producer *pr = producer_daemon_producer(d->pd);
	struct inst **pp;

	for (pp = &d->insts; *pp; pp = &(*pp)->next) {
		if (*pp == in) {
			*pp = in->next;
			break;
		}
	}
	if (in->dump_timer)
		evloop_del(d->loop, in->dump_timer);
	if (in->stop_timer)
		evloop_del(d->loop, in->stop_timer);
	if (in->tw) {
		tw_flush(in->tw);
		if (pr)
			producer_destroy_writer(pr, in->tw);
	}
	hp_seq_fini(&in->seq);
	hp_config_fini(&in->cfg);
	free(in);
}

/* A stopping instance whose processes are all dumped is done. */
static void inst_maybe_finish(struct inst *in)
{
	struct hp_daemon *d = in->d;
	struct producer *pr = producer_daemon_producer(d->pd);
	struct proc *p;
	uint64_t id = in->id;

	if (!in->stopping)
		return;
	for (p = d->procs; p; p = p->next) {
		if (p->inst == in)
			return;
	}
	inst_destroy(in);
	if (pr)
		producer_notify_stopped(pr, id);
	LOG_I("heapprofd: instance %llu stopped", (unsigned long long)id);
	if (d->child_mode && !d->procs && !d->insts)
		evloop_quit(d->loop);
}

static void on_stop_timeout(void *user)
{
	struct inst *in = user;
	struct proc *p;

	in->stop_timer = 0;
	LOG_W("heapprofd: instance %llu: final dumps timed out", (unsigned long long)in->id);
	for (p = in->d->procs; p; p = p->next) {
		if (p->inst == in) {
			dump_proc(p, false);
			unbind(p);
		}
	}
	inst_maybe_finish(in);
}

static void on_dump_tick(void *user)
{
	struct inst *in = user;
	struct proc *p;

	for (p = in->d->procs; p; p = p->next) {
		if (p->inst == in && p->ring_live &&
		    hp_unwinder_drain(in->d->unw, p->id, DRAIN_DUMP) == 0)
			p->pending_drains++;
	}
}

static void on_start(struct producer *pr, uint64_t id, const Perfetto__Protos__DataSourceConfig *cfg,
		     void *user)
{
	struct hp_daemon *d = user;
	struct inst *in = NULL;
	char err[256] = "";
	struct proc *p;
	int rc;

	if (find_inst(d, id) || !cfg->name || strcmp(cfg->name, HEAPPROFD_DATA_SOURCE_NAME) != 0)
		goto out;
	in = calloc(1, sizeof(*in));
	if (!in)
		goto out;
	rc = hp_config_parse(cfg->heapprofd_config, &in->cfg, err, sizeof(err));
	if (rc < 0) {
		LOG_E("android.heapprofd instance %llu refused: %s", (unsigned long long)id,
		      err[0] ? err : strerror(-rc));
		free(in);
		goto out;
	}
	/* In child mode only our process counts. */
	if (d->child_mode) {
		char argv0[512];

		read_argv0(d->exclusive_pid, argv0, sizeof(argv0));
		if (!hp_config_matches(&in->cfg, d->exclusive_pid, argv0)) {
			hp_config_fini(&in->cfg);
			free(in);
			goto out;
		}
	}
	rc = producer_create_writer(pr, (uint16_t)cfg->target_buffer, &in->tw);
	if (rc < 0) {
		LOG_E("android.heapprofd instance %llu: no trace writer: %s", (unsigned long long)id,
		      strerror(-rc));
		hp_config_fini(&in->cfg);
		free(in);
		goto out;
	}
	in->d = d;
	in->id = id;
	hp_seq_init(&in->seq, in->tw);
	in->next = d->insts;
	d->insts = in;
	if (in->cfg.dump_interval_ms)
		evloop_add_timer(d->loop, in->cfg.dump_phase_ms ? in->cfg.dump_phase_ms
							     : in->cfg.dump_interval_ms,
				 in->cfg.dump_interval_ms, on_dump_tick, in, &in->dump_timer);
	LOG_I("android.heapprofd instance %llu started", (unsigned long long)id);
	for (p = d->procs; p; p = p->next)
		try_bind(p);
out:
	producer_notify_started(pr, id);
}

static void on_stop(struct producer *pr, uint64_t id, void *user)
{
	struct hp_daemon *d = user;
	struct inst *in = find_inst(d, id);
	struct proc *p;

	if (!in) {
		producer_notify_stopped(pr, id);
		return;
	}
	in->stopping = true;
	if (in->dump_timer)
		evloop_del(d->loop, in->dump_timer);
	in->dump_timer = 0;
	for (p = d->procs; p; p = p->next) {
		if (p->inst != in)
			continue;
		send_simple(p, HP_MSG_STOP);
		if (p->ring_live)
			hp_unwinder_remove(d->unw, p->id);
		else
			unbind(p);
	}
	evloop_add_timer(d->loop, HP_STOP_TIMEOUT_MS, 0, on_stop_timeout, in, &in->stop_timer);
	inst_maybe_finish(in);
}

static void on_flush(struct producer *pr, const uint64_t *ids, size_t n, uint64_t request_id,
		     uint64_t flags, void *user)
{
	struct hp_daemon *d = user;
	size_t i;

	(void)flags;
	for (i = 0; i < n; i++) {
		struct inst *in = find_inst(d, ids[i]);

		if (in && in->tw)
			tw_flush(in->tw);
	}
	producer_flush_ack(pr, request_id);
}

static void on_clear_incremental(struct producer *pr, const uint64_t *ids, size_t n, void *user)
{
	struct hp_daemon *d = user;
	size_t i;

	(void)pr;
	for (i = 0; i < n; i++) {
		struct inst *in = find_inst(d, ids[i]);

		if (in)
			hp_seq_clear(&in->seq);
	}
}

/* traced went away: its sessions are over; what was profiled is lost. */
static void on_lost(void *user)
{
	struct hp_daemon *d = user;
	struct proc *p;

	for (p = d->procs; p; p = p->next) {
		if (!p->inst)
			continue;
		send_simple(p, HP_MSG_STOP);
		if (p->ring_live)
			hp_unwinder_remove(d->unw, p->id);
		p->inst = NULL;
		unbind(p);
	}
	while (d->insts) {
		struct inst *in = d->insts;

		d->insts = in->next;
		if (in->dump_timer)
			evloop_del(d->loop, in->dump_timer);
		if (in->stop_timer)
			evloop_del(d->loop, in->stop_timer);
		if (in->tw)
			producer_destroy_writer(producer_daemon_producer(d->pd), in->tw);
		hp_seq_fini(&in->seq);
		hp_config_fini(&in->cfg);
		free(in);
	}
}

static void no_session_now(struct hp_daemon *d)
{
	struct proc *p;

	for (p = d->procs; p; p = p->next) {
		if (p->hello && !p->inst)
			send_simple(p, HP_MSG_NO_SESSION);
	}
}

static void on_synced(void *user)
{
	struct hp_daemon *d = user;

	if (!d->synced) {
		d->synced = true;
		no_session_now(d);
	}
}

static void on_no_session_timer(void *user)
{
	struct hp_daemon *d = user;

	d->no_session_timer = 0;
	if (!d->synced)
		no_session_now(d);
}

static const struct producer_ds_desc k_desc = {
	.name = HEAPPROFD_DATA_SOURCE_NAME,
	.will_notify_on_start = true,
	.will_notify_on_stop = true,
	.handles_incremental_state_clear = true,
};

int hp_daemon_create(struct evloop *loop, const struct hp_daemon_opts *o, struct hp_daemon **out)
{
	struct hp_daemon *d = calloc(1, sizeof(*d));
	struct producer_daemon_spec spec = {
		.name = HEAPPROFD_PRODUCER_NAME,
		.descs = &k_desc,
		.n_descs = 1,
		.cbs = {
			.start_ds = on_start,
			.stop_ds = on_stop,
			.flush = on_flush,
			.clear_incremental_state = on_clear_incremental,
		},
		.on_lost = on_lost,
		.on_synced = on_synced,
		.notify_env = "HEAPPROFD_NOTIFY_FD",
	};
	int rc;

	if (!d)
		return -ENOMEM;
	d->loop = loop;
	d->listen_fd = -1;
	hmap_init(&d->cstacks);
	rc = hp_unwinder_create(loop, on_batch, d, &d->unw);
	if (rc < 0)
		goto fail;
	if (o->inherit_fd >= 0) {
		d->child_mode = true;
		d->exclusive_pid = o->exclusive_pid;
		rc = add_client(d, o->inherit_fd, o->exclusive_pid);
		if (rc < 0)
			goto fail;
		evloop_add_timer(loop, HP_CHILD_NO_SESSION_MS, 0, on_no_session_timer, d,
				 &d->no_session_timer);
	} else {
		rc = listen_seqpacket(o->listen_name ? o->listen_name : heapprofd_default_sock(),
				      &d->listen_fd);
		if (rc < 0)
			goto fail;
		rc = evloop_add_fd(loop, d->listen_fd, EVLOOP_READ, on_accept, d, &d->listen_watch);
		if (rc < 0)
			goto fail;
	}
	spec.opts.smb_size_hint_bytes = 4u << 20;
	spec.opts.page_size_hint_bytes = 32u << 10;
	rc = producer_daemon_create(loop, &spec, d, &d->pd);
	if (rc < 0)
		goto fail;
	*out = d;
	return 0;
fail:
	hp_daemon_destroy(d);
	return rc;
}

void hp_daemon_destroy(struct hp_daemon *d)
{
	struct hmap_iter it;
	uint64_t k, v;

	if (!d)
		return;
	while (d->procs) {
		struct proc *p = d->procs;

		if (p->inst)
			dump_proc(p, false);
		proc_destroy(p);
	}
	while (d->insts) {
		struct inst *in = d->insts;
		struct producer *pr = producer_daemon_producer(d->pd);
		uint64_t id = in->id;

		inst_destroy(in);
		if (pr)
			producer_notify_stopped(pr, id);
	}
	hp_unwinder_destroy(d->unw);
	/* Batches the unwinder posted before it stopped. */
	evloop_run_once(d->loop, 0);
	if (d->no_session_timer)
		evloop_del(d->loop, d->no_session_timer);
	if (d->listen_watch)
		evloop_del(d->loop, d->listen_watch);
	if (d->listen_fd >= 0)
		close(d->listen_fd);
	producer_daemon_destroy(d->pd);
	hmap_iter_init(&it, &d->cstacks);
	while (hmap_iter_next(&it, &k, &v))
		free((void *)(uintptr_t)v);
	hmap_fini(&d->cstacks);
	free(d);
}

// SPDX-License-Identifier: Apache-2.0
/*
 * fault_producer.c - a misbehaving producer for the service fault tests
 * (tests/integration/service_faults.sh). It speaks ProducerPort through
 * src/ipc directly and writes SMB chunks by hand, so it can break the rules
 * a real producer (src/tracing) never would. One fault per run:
 *
 * Raw connection faults (no session needed; exit 0 when the service
 * behaved, 1 when it did not):
 *   big-frame        a frame header declaring 200 KiB (> 128 KiB), then
 *                    64 KiB of bytes: the service must close the connection.
 *   truncated-frame  a header declaring 100 bytes, 10 bytes, then close.
 *   garbage-frame    a well-sized frame that is not an IPCFrame: dropped.
 *
 * SMB faults (register --ds; when the data source starts, write one valid
 * chunk of TestEvent packets on writer 1, commit the fault, then another
 * valid chunk on writer 1, so the trace shows whether this producer still
 * works after its own fault):
 *   bad-writer-id    a complete chunk with writer id 0.
 *   huge-count       a chunk claiming 1023 packets: one valid fragment,
 *                    then 0xff bytes (not a fragment header).
 *   frag-past-end    a fragment whose length runs past the chunk end.
 *   bad-patch        a chunk with kChunkNeedsPatching, then patches at an
 *                    offset past its end, for a chunk id that does not
 *                    exist, and with a 3-byte patch.
 *   page-past-end    CommitData naming page n_pages + 3, page 0xffffffff and
 *                    chunk 13 of a one-chunk page.
 *   none             only the two valid chunks.
 * Scraping modes (InitializeConnection asks for SMB scraping, writer 1 is
 * registered with RegisterTraceWriter; Flush commands are never answered):
 *   hang             one committed chunk (seq 0..7), one Complete chunk
 *                    never committed (8..15), and one chunk left
 *                    BeingWritten with HANG_WHOLE whole packets (16..20)
 *                    plus a 22nd (seq 21) counted but not finished: the
 *                    service must scrape seq 0..20 and drop seq 21.
 *   hang-noscrape    the same without asking for scraping: only 0..7.
 *   silent           writes nothing and answers no flush: each flush of a
 *                    session with it (the final one too) runs to its timeout.
 *   garbage-smb      one committed chunk, then random bytes over the whole
 *                    SMB (page headers included), rewritten every ms.
 * Valid packets: TracePacket{for_testing{str "fault", seq_value = i,
 * counter = 100, is_last on the last}}; garbage-writer packets use
 * counter 200, so a trace that shows counter 200 kept the garbage.
 *
 *   fault_producer --fault MODE [--name NAME] [--ds NAME] [--sock NAME]
 * The producer socket defaults to $PERFETTO_PRODUCER_SOCK_NAME. Readiness:
 * writes "1" to $FAULT_PRODUCER_NOTIFY_FD once registered (SMB modes) or
 * connected (raw modes). SMB modes then serve flushes until SIGTERM.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/evloop.h"
#include "base/sock.h"
#include "base/sock_default.h"
#include "base/subproc.h"
#include "common/commit_data_request.pb-c.h"
#include "common/data_source_descriptor.pb-c.h"
#include "ipc/ipc.h"
#include "ipc/producer_port.pb-c.h"
#include "tracing/smb_abi.h"

#define NOTIFY_ENV "FAULT_PRODUCER_NOTIFY_FD"
#define GOOD_WRITER 1u
#define BAD_WRITER 2u
#define PATCH_WRITER 3u
#define GOOD_COUNTER 100u
#define BAD_COUNTER 200u
#define PACKETS_PER_CHUNK 8u
#define HANG_WHOLE 5u

static struct {
	const char *mode;
	const char *name;
	const char *ds;
	const char *sock;
} g_args = {.name = "fault", .ds = "fault.ds"};

struct app {
	struct evloop *loop;
	struct ipc_client *ipc;
	struct ipc_binding *port;
	int pending_fd;
	uint8_t *smb_base;
	size_t smb_size;
	struct smb smb;
	size_t next_page;
	uint32_t good_chunk_id;
	uint32_t good_seq;
	bool done;
	int exit_code;
	uint64_t garbage_timer;
	uint32_t rng;
};

static bool is_mode(const char *m)
{
	return !strcmp(g_args.mode, m);
}

/* Modes that ask the service to scrape and never answer a flush. */
static bool is_scrape_mode(void)
{
	return is_mode("hang") || is_mode("garbage-smb");
}

static bool is_hang_mode(void)
{
	return is_scrape_mode() || is_mode("hang-noscrape") || is_mode("silent");
}

static void usage(void)
{
	fprintf(stderr,
		"usage: fault_producer --fault MODE [--name NAME] [--ds NAME] [--sock NAME]\n"
		"MODE: big-frame truncated-frame garbage-frame bad-writer-id huge-count\n"
		"      frag-past-end bad-patch page-past-end none hang hang-noscrape silent\n"
		"      garbage-smb\n");
	exit(2);
}

static void parse_args(int argc, char **argv)
{
	int i;

	/* Every option takes a value: step over both. */
	for (i = 1; i < argc; i += 2) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage();
		if (!strcmp(argv[i], "--fault"))
			g_args.mode = v;
		else if (!strcmp(argv[i], "--name"))
			g_args.name = v;
		else if (!strcmp(argv[i], "--ds"))
			g_args.ds = v;
		else if (!strcmp(argv[i], "--sock"))
			g_args.sock = v;
		else
			usage();
	}
	if (!g_args.mode)
		usage();
	if (!g_args.sock)
		g_args.sock = sock_default_producer_for_client();
}

/* ------------------------------------------------------- raw faults ---- */

/* True if the peer closes @fd within @ms (reads until EOF or an error). */
static bool peer_closes(int fd, int ms)
{
	uint64_t deadline = clock_monotonic_ns() / 1000000 + (uint64_t)ms;
	uint8_t buf[4096];

	for (;;) {
		uint64_t now = clock_monotonic_ns() / 1000000;
		struct pollfd pfd = {fd, POLLIN, 0};
		ssize_t n;

		if (now >= deadline)
			return false;
		if (poll(&pfd, 1, (int)(deadline - now)) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return true;
	}
}

static int send_all(int fd, const void *data, size_t len)
{
	const uint8_t *p = data;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int run_raw(const char *mode)
{
	static uint8_t junk[64 * 1024];
	uint8_t hdr[4];
	uint32_t len;
	int fd = -1, err;

	err = sock_connect(g_args.sock, &fd);
	if (err < 0) {
		fprintf(stderr, "fault_producer: cannot connect to %s: %s\n", g_args.sock,
			strerror(-err));
		return 1;
	}
	notify_ready_from_env(NOTIFY_ENV);
	memset(junk, 0xa5, sizeof(junk));
	if (!strcmp(mode, "big-frame")) {
		len = 200u * 1024;
		memcpy(hdr, &len, 4);
		/* The service may hang up while we send: that is the point. */
		if (send_all(fd, hdr, 4) == 0)
			send_all(fd, junk, sizeof(junk));
		if (!peer_closes(fd, 5000)) {
			fprintf(stderr, "fault_producer: the service kept a connection that "
					"declared a 200 KiB frame\n");
			close(fd);
			return 1;
		}
		fprintf(stderr, "fault_producer: big-frame: the service closed the connection\n");
	} else if (!strcmp(mode, "truncated-frame")) {
		len = 100;
		memcpy(hdr, &len, 4);
		send_all(fd, hdr, 4);
		send_all(fd, junk, 10);
		fprintf(stderr, "fault_producer: truncated-frame: sent 14 of 104 bytes, closing\n");
	} else if (!strcmp(mode, "garbage-frame")) {
		/* 0xa5...: field 20, wire type 5 (fixed32) then junk: not an IPCFrame. */
		len = 1000;
		memcpy(hdr, &len, 4);
		memset(junk, 0xff, 1000);
		if (send_all(fd, hdr, 4) == 0)
			send_all(fd, junk, 1000);
		if (!peer_closes(fd, 5000)) {
			fprintf(stderr, "fault_producer: the service kept a connection that sent a "
					"frame that is not an IPCFrame\n");
			close(fd);
			return 1;
		}
		fprintf(stderr, "fault_producer: garbage-frame: the service closed the connection\n");
	}
	close(fd);
	return 0;
}

/* ------------------------------------------------------- SMB faults ---- */

static size_t put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	do {
		p[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			p[n] |= 0x80;
		n++;
	} while (v);
	return n;
}

/* TracePacket{for_testing(900){str(1), seq_value(2), counter(3), is_last(4)}}. */
static size_t encode_packet(uint8_t *out, const char *str, uint32_t seq, uint32_t counter,
			    bool is_last)
{
	uint8_t ev[64];
	size_t n = 0, m = 0, slen = strlen(str);

	ev[n++] = (1 << 3) | 2;
	ev[n++] = (uint8_t)slen;
	memcpy(ev + n, str, slen);
	n += slen;
	ev[n++] = (2 << 3) | 0;
	n += put_varint(ev + n, seq);
	ev[n++] = (3 << 3) | 0;
	n += put_varint(ev + n, counter);
	if (is_last) {
		ev[n++] = (4 << 3) | 0;
		ev[n++] = 1;
	}
	m += put_varint(out + m, (900u << 3) | 2);
	m += put_varint(out + m, n);
	memcpy(out + m, ev, n);
	return m + n;
}

/* A 4-byte redundant varint (the SMB fragment header). */
static void put_frag_len(uint8_t *p, uint32_t len)
{
	p[0] = (uint8_t)((len & 0x7f) | 0x80);
	p[1] = (uint8_t)(((len >> 7) & 0x7f) | 0x80);
	p[2] = (uint8_t)(((len >> 14) & 0x7f) | 0x80);
	p[3] = (uint8_t)((len >> 21) & 0x7f);
}

/* Takes a free page, partitions it Div1 and acquires its chunk. */
static int take_chunk(struct app *app, uint16_t writer_id, uint32_t chunk_id, struct smb_chunk *c)
{
	struct smb_chunk_init init = {chunk_id, writer_id, 0};
	size_t tries;

	for (tries = 0; tries < app->smb.n_pages; tries++) {
		size_t page = app->next_page++ % app->smb.n_pages;

		if (smb_page_try_partition(&app->smb, page, SMB_LAYOUT_DIV1) < 0)
			continue;
		if (smb_chunk_try_acquire_write(&app->smb, page, 0, &init, c) == 0)
			return 0;
	}
	return -ENOSPC;
}

/* Writes @n valid packets [seq0, seq0+n) into @c; returns payload bytes used. */
static uint32_t fill_packets(struct smb_chunk *c, const char *str, uint32_t seq0, unsigned n,
			     uint32_t counter, bool last_is_last)
{
	uint8_t *p = smb_chunk_payload(c);
	uint32_t off = 0;
	unsigned i;

	for (i = 0; i < n; i++) {
		size_t len = encode_packet(p + off + 4, str, seq0 + i, counter,
					   last_is_last && i + 1 == n);

		put_frag_len(p + off, (uint32_t)len);
		off += 4 + (uint32_t)len;
	}
	return off;
}

static void set_packets(struct smb_chunk *c, unsigned count, unsigned flags)
{
	atomic_store_explicit(&smb_chunk_header(c)->packets, smb_packets_pack(count, flags),
			      memory_order_release);
}

static void send_commit(struct app *app, Perfetto__Protos__CommitDataRequest *req)
{
	int err = ipc_client_invoke(app->ipc, app->port, "CommitData", &req->base, -1, NULL, NULL,
				    true);

	if (err < 0)
		fprintf(stderr, "fault_producer: CommitData failed: %d\n", err);
}

static void commit_one(struct app *app, uint32_t page, uint32_t chunk, uint32_t target_buffer)
{
	Perfetto__Protos__CommitDataRequest req = PERFETTO__PROTOS__COMMIT_DATA_REQUEST__INIT;
	Perfetto__Protos__CommitDataRequest__ChunksToMove m =
		PERFETTO__PROTOS__COMMIT_DATA_REQUEST__CHUNKS_TO_MOVE__INIT;
	Perfetto__Protos__CommitDataRequest__ChunksToMove *mp = &m;

	m.has_page = m.has_chunk = m.has_target_buffer = true;
	m.page = page;
	m.chunk = chunk;
	m.target_buffer = target_buffer;
	req.n_chunks_to_move = 1;
	req.chunks_to_move = &mp;
	send_commit(app, &req);
}

static void write_good_chunk(struct app *app, uint32_t target_buffer, bool last)
{
	struct smb_chunk c;

	if (take_chunk(app, GOOD_WRITER, app->good_chunk_id++, &c) < 0) {
		fprintf(stderr, "fault_producer: SMB full\n");
		app->exit_code = 1;
		return;
	}
	fill_packets(&c, "fault", app->good_seq, PACKETS_PER_CHUNK, GOOD_COUNTER, last);
	app->good_seq += PACKETS_PER_CHUNK;
	set_packets(&c, PACKETS_PER_CHUNK, 0);
	smb_chunk_mark_complete(&app->smb, &c);
	commit_one(app, c.page, c.idx, target_buffer);
}

static void send_patch(struct app *app, uint32_t target_buffer, uint32_t writer_id,
		       uint32_t chunk_id, uint32_t offset, size_t data_len)
{
	static const uint8_t data[4] = {0x80, 0x80, 0x80, 0x00};
	Perfetto__Protos__CommitDataRequest req = PERFETTO__PROTOS__COMMIT_DATA_REQUEST__INIT;
	Perfetto__Protos__CommitDataRequest__ChunkToPatch cp =
		PERFETTO__PROTOS__COMMIT_DATA_REQUEST__CHUNK_TO_PATCH__INIT;
	Perfetto__Protos__CommitDataRequest__ChunkToPatch__Patch pt =
		PERFETTO__PROTOS__COMMIT_DATA_REQUEST__CHUNK_TO_PATCH__PATCH__INIT;
	Perfetto__Protos__CommitDataRequest__ChunkToPatch *cpp = &cp;
	Perfetto__Protos__CommitDataRequest__ChunkToPatch__Patch *ptp = &pt;

	pt.has_offset = pt.has_data = true;
	pt.offset = offset;
	pt.data.data = (uint8_t *)data;
	pt.data.len = data_len;
	cp.has_target_buffer = cp.has_writer_id = cp.has_chunk_id = true;
	cp.target_buffer = target_buffer;
	cp.writer_id = writer_id;
	cp.chunk_id = chunk_id;
	cp.n_patches = 1;
	cp.patches = &ptp;
	cp.has_has_more_patches = true;
	cp.has_more_patches = false;
	req.n_chunks_to_patch = 1;
	req.chunks_to_patch = &cpp;
	send_commit(app, &req);
}

static int do_fault(struct app *app, uint32_t tb)
{
	const char *mode = g_args.mode;
	struct smb_chunk c;
	uint8_t *p;
	uint32_t used;

	if (!strcmp(mode, "none"))
		return 0;
	if (!strcmp(mode, "page-past-end")) {
		commit_one(app, (uint32_t)app->smb.n_pages + 3, 0, tb);
		commit_one(app, 0xffffffffu, 0, tb);
		/* Chunk 13 of a Div1 page: take a page so its layout is Div1. */
		if (take_chunk(app, BAD_WRITER, 0, &c) < 0)
			return -ENOSPC;
		fill_packets(&c, "garbage", 0, 1, BAD_COUNTER, false);
		set_packets(&c, 1, 0);
		smb_chunk_mark_complete(&app->smb, &c);
		commit_one(app, c.page, 13, tb);
		return 0;
	}
	if (take_chunk(app, BAD_WRITER, 0, &c) < 0)
		return -ENOSPC;
	p = smb_chunk_payload(&c);
	if (!strcmp(mode, "bad-writer-id")) {
		fill_packets(&c, "garbage", 0, 4, BAD_COUNTER, true);
		set_packets(&c, 4, 0);
		atomic_store(&smb_chunk_header(&c)->writer_id, 0);
	} else if (!strcmp(mode, "huge-count")) {
		used = fill_packets(&c, "garbage", 0, 1, BAD_COUNTER, false);
		memset(p + used, 0xff, smb_chunk_payload_size(&c) - used);
		set_packets(&c, SMB_MAX_PACKETS_PER_CHUNK, 0);
	} else if (!strcmp(mode, "frag-past-end")) {
		used = fill_packets(&c, "garbage", 0, 2, BAD_COUNTER, false);
		put_frag_len(p + used, 100000);
		memset(p + used + 4, 'x', 64);
		set_packets(&c, 3, 0);
	} else if (!strcmp(mode, "bad-patch")) {
		/* The chunk is fine but waits for a patch that never lands. */
		atomic_store(&smb_chunk_header(&c)->writer_id, PATCH_WRITER);
		used = fill_packets(&c, "garbage", 0, 2, BAD_COUNTER, false);
		set_packets(&c, 2, SMB_CHUNK_NEEDS_PATCHING);
		smb_chunk_mark_complete(&app->smb, &c);
		commit_one(app, c.page, c.idx, tb);
		send_patch(app, tb, PATCH_WRITER, 0, smb_chunk_payload_size(&c) + 100, 4);
		send_patch(app, tb, PATCH_WRITER, 0, 0xfffffff0u, 4);
		send_patch(app, tb, PATCH_WRITER, 77, 0, 4);
		send_patch(app, tb, PATCH_WRITER, 0, 0, 3);
		return 0;
	} else {
		fprintf(stderr, "fault_producer: unknown fault %s\n", mode);
		return -EINVAL;
	}
	smb_chunk_mark_complete(&app->smb, &c);
	commit_one(app, c.page, c.idx, tb);
	return 0;
}

static void register_writer(struct app *app, uint32_t writer_id, uint32_t target_buffer)
{
	Perfetto__Protos__RegisterTraceWriterRequest req =
		PERFETTO__PROTOS__REGISTER_TRACE_WRITER_REQUEST__INIT;

	req.has_trace_writer_id = req.has_target_buffer = true;
	req.trace_writer_id = writer_id;
	req.target_buffer = target_buffer;
	ipc_client_invoke(app->ipc, app->port, "RegisterTraceWriter", &req.base, -1, NULL, NULL,
			  true);
}

/* A chunk completed but never committed, and one left half written. */
static int do_hang(struct app *app)
{
	struct smb_chunk c;
	uint32_t used;

	if (take_chunk(app, GOOD_WRITER, app->good_chunk_id++, &c) < 0)
		return -ENOSPC;
	fill_packets(&c, "fault", app->good_seq, PACKETS_PER_CHUNK, GOOD_COUNTER, false);
	app->good_seq += PACKETS_PER_CHUNK;
	set_packets(&c, PACKETS_PER_CHUNK, 0);
	smb_chunk_mark_complete(&app->smb, &c);
	if (take_chunk(app, GOOD_WRITER, app->good_chunk_id++, &c) < 0)
		return -ENOSPC;
	/* The last packet looks whole, but the count says it is still being
	 * written: only the service's rule keeps it out of the trace. */
	used = fill_packets(&c, "fault", app->good_seq, HANG_WHOLE + 1, GOOD_COUNTER, false);
	app->good_seq += HANG_WHOLE;
	set_packets(&c, HANG_WHOLE + 1, 0);
	fprintf(stderr, "fault_producer: hanging with %u bytes in a chunk being written\n", used);
	return 0;
}

static uint32_t rng_next(struct app *app)
{
	app->rng ^= app->rng << 13;
	app->rng ^= app->rng >> 17;
	app->rng ^= app->rng << 5;
	return app->rng;
}

/* Random bytes over the SMB, with plausible page headers now and then. */
static void on_garbage_timer(void *user)
{
	struct app *app = user;
	size_t i, n = app->smb_size / 4;
	uint32_t *w = (uint32_t *)app->smb_base;

	for (i = 0; i < n; i++)
		w[i] = rng_next(app);
	for (i = 0; i < app->smb.n_pages; i++) {
		unsigned layout = 1 + (unsigned)(i % 5), k;
		uint32_t csize = smb_chunk_size_for_layout(app->smb.page_size, layout);
		uint8_t *page = app->smb_base + i * app->smb.page_size;

		if (i % 3 != 0)
			continue;
		/* Used chunks of the registered writer, so the service copies them. */
		w[i * app->smb.page_size / 4] = (rng_next(app) & SMB_ALL_CHUNKS_MASK) |
						(uint32_t)layout << SMB_LAYOUT_SHIFT;
		for (k = 0; k < smb_layout_n_chunks(layout); k++) {
			uint8_t *ch = page + SMB_PAGE_HEADER_SIZE + k * csize;

			ch[4] = GOOD_WRITER;
			ch[5] = 0;
		}
	}
}

static void on_start(struct app *app, const Perfetto__Protos__GetAsyncCommandResponse__StartDataSource *s)
{
	uint32_t tb = s->config ? s->config->target_buffer : 0;
	int err;

	if (app->done || !app->smb_base) {
		fprintf(stderr, "fault_producer: start without an SMB (or a second start), ignored\n");
		return;
	}
	app->done = true;
	if (is_mode("silent"))
		return;
	if (is_hang_mode()) {
		register_writer(app, GOOD_WRITER, tb);
		write_good_chunk(app, tb, false);
		if (is_mode("garbage-smb")) {
			app->rng = 0x9e3779b9u;
			evloop_add_timer(app->loop, 1, 1, on_garbage_timer, app, &app->garbage_timer);
			return;
		}
		if (do_hang(app) < 0) {
			fprintf(stderr, "fault_producer: SMB full\n");
			app->exit_code = 1;
		}
		return;
	}
	write_good_chunk(app, tb, false);
	err = do_fault(app, tb);
	if (err < 0) {
		fprintf(stderr, "fault_producer: fault %s failed: %d\n", g_args.mode, err);
		app->exit_code = 1;
	}
	write_good_chunk(app, tb, true);
	fprintf(stderr, "fault_producer: %s: fault committed, %u valid packets sent\n",
		g_args.mode, app->good_seq);
}

static void on_setup(struct app *app, const Perfetto__Protos__GetAsyncCommandResponse__SetupTracing *st,
		     int fd)
{
	size_t page = SMB_MIN_PAGE_SIZE;
	struct stat sb;
	void *base;

	if (app->smb_base) {
		if (fd >= 0)
			close(fd);
		return;
	}
	if (st->has_shared_buffer_page_size_kb && st->shared_buffer_page_size_kb)
		page = (size_t)st->shared_buffer_page_size_kb * 1024;
	if (fd < 0 || fstat(fd, &sb) < 0 || sb.st_size <= 0) {
		fprintf(stderr, "fault_producer: SetupTracing without a usable SMB fd\n");
		app->exit_code = 1;
		evloop_quit(app->loop);
		return;
	}
	base = mmap(NULL, (size_t)sb.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (base == MAP_FAILED || smb_init(&app->smb, base, (size_t)sb.st_size, page) < 0) {
		fprintf(stderr, "fault_producer: cannot map the SMB\n");
		app->exit_code = 1;
		evloop_quit(app->loop);
		return;
	}
	app->smb_base = base;
	app->smb_size = (size_t)sb.st_size;
}

static void on_flush(struct app *app, uint64_t request_id)
{
	Perfetto__Protos__CommitDataRequest req = PERFETTO__PROTOS__COMMIT_DATA_REQUEST__INIT;

	if (is_hang_mode())
		return; /* hung: the flush times out */
	req.has_flush_request_id = true;
	req.flush_request_id = request_id;
	send_commit(app, &req);
}

static void on_command(const struct ipc_reply *r, void *user)
{
	const Perfetto__Protos__GetAsyncCommandResponse *cmd = (const void *)r->msg;
	struct app *app = user;
	int fd = r->fd;

	if (fd >= 0) {
		if (app->pending_fd >= 0)
			close(app->pending_fd);
		app->pending_fd = fd;
	}
	if (!r->success || !cmd) {
		if (!r->has_more) {
			fprintf(stderr, "fault_producer: command stream ended\n");
			evloop_quit(app->loop);
		}
		return;
	}
	switch (cmd->cmd_case) {
	case PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_SETUP_TRACING:
		fd = app->pending_fd;
		app->pending_fd = -1;
		on_setup(app, cmd->setup_tracing, fd);
		break;
	case PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_START_DATA_SOURCE:
		on_start(app, cmd->start_data_source);
		break;
	case PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_FLUSH:
		on_flush(app, cmd->flush->request_id);
		break;
	default:
		break;
	}
}

static void on_synced(const struct ipc_reply *r, void *user)
{
	(void)user;
	if (!r->success)
		return;
	fprintf(stderr, "fault_producer: %s ready, data source %s, fault %s\n", g_args.name,
		g_args.ds, g_args.mode);
	notify_ready_from_env(NOTIFY_ENV);
}

static void on_init(const struct ipc_reply *r, void *user)
{
	Perfetto__Protos__RegisterDataSourceRequest rq =
		PERFETTO__PROTOS__REGISTER_DATA_SOURCE_REQUEST__INIT;
	Perfetto__Protos__DataSourceDescriptor d = PERFETTO__PROTOS__DATA_SOURCE_DESCRIPTOR__INIT;
	Perfetto__Protos__SyncRequest sr = PERFETTO__PROTOS__SYNC_REQUEST__INIT;
	struct app *app = user;

	if (!r->success) {
		fprintf(stderr, "fault_producer: InitializeConnection refused\n");
		app->exit_code = 1;
		evloop_quit(app->loop);
		return;
	}
	d.name = (char *)g_args.ds;
	rq.data_source_descriptor = &d;
	ipc_client_invoke(app->ipc, app->port, "RegisterDataSource", &rq.base, -1, NULL, NULL, true);
	ipc_client_invoke(app->ipc, app->port, "Sync", &sr.base, -1, on_synced, app, false);
}

static void on_bind(struct ipc_binding *b, bool success, void *user)
{
	Perfetto__Protos__InitializeConnectionRequest req =
		PERFETTO__PROTOS__INITIALIZE_CONNECTION_REQUEST__INIT;
	Perfetto__Protos__GetAsyncCommandRequest cmd = PERFETTO__PROTOS__GET_ASYNC_COMMAND_REQUEST__INIT;
	struct app *app = user;

	(void)b;
	if (!success) {
		fprintf(stderr, "fault_producer: cannot bind ProducerPort\n");
		app->exit_code = 1;
		evloop_quit(app->loop);
		return;
	}
	req.producer_name = (char *)g_args.name;
	if (is_scrape_mode()) {
		req.has_smb_scraping_mode = true;
		req.smb_scraping_mode =
			PERFETTO__PROTOS__INITIALIZE_CONNECTION_REQUEST__PRODUCER_SMBSCRAPING_MODE__SMB_SCRAPING_ENABLED;
	}
	ipc_client_invoke(app->ipc, app->port, "InitializeConnection", &req.base, -1, on_init, app,
			  false);
	ipc_client_invoke(app->ipc, app->port, "GetAsyncCommand", &cmd.base, -1, on_command, app,
			  false);
}

static void on_disconnected(struct ipc_client *c, int err, void *user)
{
	struct app *app = user;

	(void)c;
	fprintf(stderr, "fault_producer: disconnected from the service (%d)\n", err);
	evloop_quit(app->loop);
}

static void on_signal(int signo, void *user)
{
	struct app *app = user;

	(void)signo;
	evloop_quit(app->loop);
}

int main(int argc, char **argv)
{
	struct ipc_client_callbacks cbs = {.on_disconnected = on_disconnected};
	struct app app = {.pending_fd = -1};
	int err;

	parse_args(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(g_args.mode, "big-frame") || !strcmp(g_args.mode, "truncated-frame") ||
	    !strcmp(g_args.mode, "garbage-frame"))
		return run_raw(g_args.mode);
	if (evloop_create(&app.loop) < 0)
		return 1;
	evloop_add_signal(app.loop, SIGINT, on_signal, &app, NULL);
	evloop_add_signal(app.loop, SIGTERM, on_signal, &app, NULL);
	err = ipc_client_connect(app.loop, g_args.sock, &cbs, &app, &app.ipc);
	if (err == 0)
		err = ipc_client_bind(app.ipc, &perfetto__protos__producer_port__descriptor, on_bind,
				      &app, &app.port);
	if (err < 0) {
		fprintf(stderr, "fault_producer: cannot connect to %s: %s\n", g_args.sock,
			strerror(-err));
		ipc_client_destroy(app.ipc);
		evloop_destroy(app.loop);
		return 1;
	}
	evloop_run(app.loop);
	ipc_client_destroy(app.ipc);
	evloop_destroy(app.loop);
	if (app.pending_fd >= 0)
		close(app.pending_fd);
	if (app.smb_base)
		munmap(app.smb_base, app.smb_size);
	return app.exit_code;
}

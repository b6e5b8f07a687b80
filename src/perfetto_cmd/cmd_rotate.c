// SPDX-License-Identifier: Apache-2.0
/*
 * cmd_rotate.c - rotating trace files for the perfetto command. Packets
 * come from periodic ReadBuffers of the command's own session, in read
 * order; each goes to the file its sequence is on. A cut opens OUT.<n+1>
 * with copies of the service's header packets (newest clock snapshot,
 * config, uuid, system info, and each remote machine's newest clock sync
 * round, without which its events could not be put on the host's clock);
 * sequences without incremental state move to
 * it at once, the others at their first SEQ_INCREMENTAL_STATE_CLEARED
 * packet (the config asks for frequent clears), so no packet is in two
 * files and none refers to interned data or an incremental clock of an
 * earlier file. OUT.<n> closes when every sequence moved, or after a
 * grace period (an idle writer may never clear). Only two files are open.
 */
#include "perfetto_cmd/cmd_rotate.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/file.h"
#include "base/hmap.h"
#include "config/trace_config.pb-c.h"
#include "pb_fields.h"
#include "protozero/protozero.h"

/* Header packets kept for the next file: one system_info per machine, and
 * one remote_clock_sync per remote machine. */
#define ROT_MAX_SYSINFOS 16
/* Bytes the file system must keep free, at least (see disk_guard()). */
#define ROT_MIN_FREE_BYTES (256u * 1024)
#define ROT_FLUSH_BYTES (256u * 1024)
#define ROT_FLAGS_INCREMENTAL                                           \
	(PBE_TRACE_PACKET_SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED | \
	 PBE_TRACE_PACKET_SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE)
/* hmap value: the file index, plus this bit once the sequence showed it
 * keeps incremental state. */
#define SEQ_INCREMENTAL (1ull << 32)

/* Packets are framed into @pending and written at each read's end (or
 * every ROT_FLUSH_BYTES), so the disk check sees them, and a failed write
 * is cut back to the last whole packet. */
struct rot_file {
	bool open;
	unsigned idx;
	int fd;
	struct buf pending;
	uint64_t bytes; /* written and pending */
	int err;        /* the first write error; later packets are dropped */
};

struct cmd_rotate {
	struct cmd_rotate_opts o;
	char dir[4096];
	unsigned next_idx;       /* files started: OUT.0 .. OUT.<next_idx-1> */
	unsigned oldest;         /* oldest file not deleted */
	unsigned deleted;
	struct rot_file cur, prev;
	uint64_t cur_open_ms;
	uint64_t next_cut_ms;    /* --rotate-seconds: the schedule, not drift */
	uint64_t cut_ms;         /* when prev stopped taking new sequences */
	bool want_cut;           /* cur reached rotate_bytes */
	struct hmap seqs;        /* trusted_packet_sequence_id -> file | SEQ_INCREMENTAL */
	struct buf clock, config, uuid;
	struct buf sysinfo[ROT_MAX_SYSINFOS];
	size_t n_sysinfo;
	struct buf sync[ROT_MAX_SYSINFOS];  /* newest RemoteClockSync packet... */
	uint32_t sync_machine[ROT_MAX_SYSINFOS]; /* ...of this machine */
	size_t n_sync;
	uint64_t read_bytes, max_read_bytes; /* per drain */
	bool stopped_full;
	unsigned deleted_for_space, reported_for_space;
};

uint32_t cmd_rotate_clear_period_ms(const struct cmd_rotate_opts *o)
{
	uint64_t ms = o->rotate_ms ? o->rotate_ms / 4 : 1000;

	return (uint32_t)(ms < 100 ? 100 : ms > 5000 ? 5000 : ms);
}

uint32_t cmd_rotate_drain_period_ms(const struct cmd_rotate_opts *o)
{
	uint64_t ms = o->rotate_ms ? o->rotate_ms / 4 : 500;

	return (uint32_t)(ms < 50 ? 50 : ms > 1000 ? 1000 : ms);
}

int cmd_rotate_prepare_config(const struct cmd_rotate_opts *o, struct buf *cfg, char *err,
			      size_t err_size)
{
	Perfetto__Protos__TraceConfig *c;
	Perfetto__Protos__TraceConfig__IncrementalStateConfig isc, *saved;
	uint32_t want = cmd_rotate_clear_period_ms(o);
	bool old_compression;
	size_t len;
	int rc = 0;

	c = perfetto__protos__trace_config__unpack(NULL, cfg->len, cfg->data);
	if (!c) {
		snprintf(err, err_size, "the config does not decode as a TraceConfig");
		return -EINVAL;
	}
	/* compression_type is deprecated, but older configs still set it. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	old_compression = c->has_compression_type && c->compression_type;
#pragma GCC diagnostic pop
	if (c->has_write_into_file && c->write_into_file) {
		snprintf(err, err_size, "--rotate-* reads the buffers itself: remove write_into_file "
					"(and -s) from the config");
		rc = -EINVAL;
	} else if (c->trigger_config && c->trigger_config->has_trigger_mode &&
		   c->trigger_config->trigger_mode ==
			   PERFETTO__PROTOS__TRACE_CONFIG__TRIGGER_CONFIG__TRIGGER_MODE__CLONE_SNAPSHOT) {
		snprintf(err, err_size, "--rotate-* and CLONE_SNAPSHOT triggers both name files "
					"OUT.<n>: use one of them");
		rc = -EINVAL;
	} else if (c->compression || old_compression) {
		snprintf(err, err_size, "--rotate-* cuts files between packets: remove compression "
					"from the config");
		rc = -EINVAL;
	}
	if (rc < 0)
		goto out;
	saved = c->incremental_state_config;
	if (saved && saved->has_clear_period_ms && saved->clear_period_ms &&
	    saved->clear_period_ms <= want)
		goto out; /* the config clears often enough already */
	perfetto__protos__trace_config__incremental_state_config__init(&isc);
	if (saved)
		isc = *saved;
	isc.has_clear_period_ms = 1;
	isc.clear_period_ms = want;
	c->incremental_state_config = &isc;
	len = perfetto__protos__trace_config__get_packed_size(c);
	buf_reset(cfg);
	if (buf_reserve(cfg, len) < 0) {
		rc = -ENOMEM;
	} else {
		perfetto__protos__trace_config__pack(c, cfg->data);
		cfg->len = len;
	}
	c->incremental_state_config = saved;
out:
	perfetto__protos__trace_config__free_unpacked(c, NULL);
	return rc;
}

static void file_path(const struct cmd_rotate *r, unsigned idx, char *out, size_t n)
{
	snprintf(out, n, "%s.%u", r->o.out_path, idx);
}

static bool is_open_idx(const struct cmd_rotate *r, unsigned idx);
static bool delete_oldest(struct cmd_rotate *r, const char *why);

/*
 * Writes what is pending. On a full file system the oldest closed files go
 * first; if none is left the file is cut back to its last whole packet and
 * keeps the error. Return: 0 or the file's error.
 */
static int rot_flush(struct cmd_rotate *r, struct rot_file *f)
{
	off_t off;
	int rc;

	if (f->err || !f->pending.len)
		goto out;
	off = lseek(f->fd, 0, SEEK_CUR);
	for (;;) {
		rc = file_write_all(f->fd, f->pending.data, f->pending.len);
		if (rc == 0)
			break;
		if (off >= 0 && (ftruncate(f->fd, off) < 0 || lseek(f->fd, off, SEEK_SET) < 0))
			off = -1;
		if (rc != -ENOSPC || off < 0 ||
		    !delete_oldest(r, "no space left on the device")) {
			f->err = rc;
			break;
		}
		r->deleted_for_space++;
	}
out:
	buf_reset(&f->pending);
	return f->err;
}

static void rot_write(struct cmd_rotate *r, struct rot_file *f, const uint8_t *p, size_t n)
{
	uint8_t hdr[1 + PZ_MAX_VARINT_BYTES];
	size_t n_hdr;

	if (f->err)
		return;
	hdr[0] = (uint8_t)pz_make_tag(PB_TRACE__PACKET, PZ_WIRE_LEN);
	n_hdr = 1 + pz_varint_encode(n, hdr + 1);
	if (buf_append(&f->pending, hdr, n_hdr) < 0 || buf_append(&f->pending, p, n) < 0) {
		f->err = -ENOMEM;
		return;
	}
	f->bytes += n_hdr + n;
	if (f->pending.len >= ROT_FLUSH_BYTES)
		rot_flush(r, f);
}

static void write_header(struct cmd_rotate *r, struct rot_file *f)
{
	size_t i;

	if (r->clock.len)
		rot_write(r, f, r->clock.data, r->clock.len);
	if (r->config.len)
		rot_write(r, f, r->config.data, r->config.len);
	if (r->uuid.len)
		rot_write(r, f, r->uuid.data, r->uuid.len);
	for (i = 0; i < r->n_sysinfo; i++)
		rot_write(r, f, r->sysinfo[i].data, r->sysinfo[i].len);
	for (i = 0; i < r->n_sync; i++)
		rot_write(r, f, r->sync[i].data, r->sync[i].len);
}

/*
 * A TracePacket.trace_attributes with one attribute (trace processors show
 * it in the metadata table as trace_attribute.<key>; later values win).
 */
static void write_attribute(struct cmd_rotate *r, struct rot_file *f, const char *key,
			    const char *str, uint64_t num)
{
	uint8_t tmp[512];
	struct pz_stream s;
	struct pz_msg m, attrs, a;

	pz_stream_init_flat(&s, tmp, sizeof(tmp));
	pz_msg_begin(&m, &s, NULL);
	pz_begin_nested(&m, PB_TRACE_PACKET__TRACE_ATTRIBUTES, &attrs);
	pz_begin_nested(&attrs, PB_TRACE_ATTRIBUTES__ATTRIBUTE, &a);
	pz_append_string(&a, PB_TRACE_ATTRIBUTES_ATTRIBUTE__KEY, key);
	if (str)
		pz_append_string(&a, PB_TRACE_ATTRIBUTES_ATTRIBUTE__STRING_VALUE, str);
	else
		pz_append_varint(&a, PB_TRACE_ATTRIBUTES_ATTRIBUTE__LONG_VALUE, num);
	pz_end(&a);
	pz_end(&attrs);
	pz_end(&m);
	if (pz_stream_ok(&s))
		rot_write(r, f, tmp, (size_t)(s.cur - tmp));
}

static int open_file(struct cmd_rotate *r, struct rot_file *f)
{
	char path[4200];
	int rc, flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;

	file_path(r, r->next_idx, path, sizeof(path));
	if (r->o.no_clobber)
		flags |= O_EXCL;
	f->fd = open(path, flags, 0600);
	if (f->fd < 0) {
		rc = -errno;
		fprintf(stderr, "perfetto: cannot create %s: %s\n", path, strerror(errno));
		return rc;
	}
	buf_init(&f->pending);
	f->bytes = 0;
	f->err = 0;
	f->idx = r->next_idx++;
	f->open = true;
	r->cur_open_ms = clock_monotonic_ns() / 1000000;
	write_header(r, f);
	return 0;
}

static void close_file(struct cmd_rotate *r, struct rot_file *f)
{
	char path[4200];
	int err;

	if (!f->open)
		return;
	err = rot_flush(r, f);
	buf_fini(&f->pending);
	close(f->fd);
	f->open = false;
	file_path(r, f->idx, path, sizeof(path));
	if (err < 0)
		fprintf(stderr, "perfetto: writing %s failed: %s\n", path, strerror(-err));
}

static bool is_open_idx(const struct cmd_rotate *r, unsigned idx)
{
	return (r->cur.open && r->cur.idx == idx) || (r->prev.open && r->prev.idx == idx);
}

/* Deletes the oldest closed file. Return: true if one was deleted. */
static bool delete_oldest(struct cmd_rotate *r, const char *why)
{
	char path[4200];

	if (r->oldest >= r->next_idx || is_open_idx(r, r->oldest))
		return false;
	file_path(r, r->oldest, path, sizeof(path));
	if (unlink(path) < 0 && errno != ENOENT)
		fprintf(stderr, "perfetto: cannot delete %s: %s\n", path, strerror(errno));
	else if (why)
		fprintf(stderr, "perfetto: deleted %s: %s\n", path, why);
	r->oldest++;
	r->deleted++;
	return true;
}

/* --keep K: the newest K files stay (the open ones always do). */
static void prune(struct cmd_rotate *r)
{
	while (r->o.keep && r->next_idx - r->oldest > r->o.keep && delete_oldest(r, NULL))
		;
}

/* Starts OUT.<n+1>; the file before waits for its incremental sequences. */
static int cut(struct cmd_rotate *r)
{
	struct rot_file nf;
	int rc;

	memset(&nf, 0, sizeof(nf));
	rc = open_file(r, &nf);
	if (rc < 0)
		return rc;
	close_file(r, &r->prev); /* a lagging sequence is moved on by force */
	r->prev = r->cur;
	r->cur = nf;
	r->cut_ms = r->cur_open_ms;
	r->want_cut = false;
	prune(r);
	return 0;
}

static uint64_t grace_ms(const struct cmd_rotate *r)
{
	return 2ull * cmd_rotate_clear_period_ms(&r->o) + 2ull * cmd_rotate_drain_period_ms(&r->o);
}

/* The previous file closes once no incremental sequence is left on it. */
static void maybe_close_prev(struct cmd_rotate *r, uint64_t now_ms)
{
	struct hmap_iter it;
	uint64_t k, v;

	if (!r->prev.open)
		return;
	if (now_ms - r->cut_ms < grace_ms(r)) {
		hmap_iter_init(&it, &r->seqs);
		while (hmap_iter_next(&it, &k, &v)) {
			if ((v & SEQ_INCREMENTAL) && (uint32_t)v == r->prev.idx)
				return;
		}
	}
	close_file(r, &r->prev);
	prune(r);
}

/*
 * Keeps at least twice the largest drain free (and ROT_MIN_FREE_BYTES) by
 * deleting the oldest closed files; -ENOSPC when none is left.
 */
static int disk_guard(struct cmd_rotate *r)
{
	struct statvfs sv;
	uint64_t need = 2 * r->max_read_bytes, avail;
	char why[160];

	if (need < ROT_MIN_FREE_BYTES)
		need = ROT_MIN_FREE_BYTES;
	for (;;) {
		if (statvfs(r->dir, &sv) < 0)
			return 0;
		avail = (uint64_t)sv.f_bavail * sv.f_frsize;
		if (avail >= need)
			return 0;
		snprintf(why, sizeof(why), "the file system is nearly full (%llu bytes free)",
			 (unsigned long long)avail);
		if (!delete_oldest(r, why))
			break;
		r->deleted_for_space++;
	}
	fprintf(stderr, "perfetto: the file system holding %s is full (%llu bytes free) and no "
			"older file is left to delete: stopping the recording\n",
		r->o.out_path, (unsigned long long)avail);
	r->stopped_full = true;
	return -ENOSPC;
}

/* What the disk guard did, into the current file (see docs/always-on.md). */
static void report_space(struct cmd_rotate *r)
{
	if (r->deleted_for_space != r->reported_for_space) {
		r->reported_for_space = r->deleted_for_space;
		write_attribute(r, &r->cur, "perfetto_cmd.rotate_files_deleted_for_space", NULL,
				r->deleted_for_space);
	}
	if (r->stopped_full) {
		write_attribute(r, &r->cur, "perfetto_cmd.rotate_stopped",
				"the file system is full and no older file is left to delete", 0);
		rot_flush(r, &r->cur);
	}
}

int cmd_rotate_before_read(struct cmd_rotate *r)
{
	uint64_t now_ms = clock_monotonic_ns() / 1000000;
	bool time_due, ending;
	int rc;

	if (r->read_bytes > r->max_read_bytes)
		r->max_read_bytes = r->read_bytes;
	r->read_bytes = 0;
	maybe_close_prev(r, now_ms);
	/*
	 * Cuts keep to a fixed schedule (first file's start + k * rotate_ms) at
	 * the drain nearest each point, so N seconds make N files: cutting at
	 * the first drain past "opened + rotate_ms" drifted a drain per file.
	 */
	if (r->o.rotate_ms && !r->next_cut_ms)
		r->next_cut_ms = r->cur_open_ms + r->o.rotate_ms;
	time_due = r->o.rotate_ms &&
		   now_ms + cmd_rotate_drain_period_ms(&r->o) / 2 >= r->next_cut_ms;
	/*
	 * Past the session's planned end only its final flush is still to come
	 * (slow producers, e.g. a guest behind a relay, take up to the flush
	 * timeout): it belongs to the last file, not to new ones holding
	 * nothing else.
	 */
	ending = r->o.end_ms && now_ms + cmd_rotate_drain_period_ms(&r->o) / 2 >= r->o.end_ms;
	if (!ending && (r->want_cut || time_due)) {
		/* A cut for size starts the time schedule afresh. */
		if (r->o.rotate_ms) {
			r->next_cut_ms = time_due ? r->next_cut_ms + r->o.rotate_ms
						  : now_ms + r->o.rotate_ms;
			if (r->next_cut_ms <= now_ms)
				r->next_cut_ms = now_ms + r->o.rotate_ms;
		}
		rc = cut(r);
		if (rc < 0)
			return rc;
	}
	if (r->prev.open)
		rot_flush(r, &r->prev);
	rot_flush(r, &r->cur);
	if ((r->cur.open && r->cur.err == -ENOSPC) || (r->prev.open && r->prev.err == -ENOSPC)) {
		fprintf(stderr, "perfetto: %s: no space left on the device: stopping the "
				"recording\n", r->o.out_path);
		r->stopped_full = true;
		report_space(r);
		return -ENOSPC;
	}
	rc = disk_guard(r);
	report_space(r);
	return rc;
}

static void keep_copy(struct buf *b, const uint8_t *p, size_t n)
{
	buf_reset(b);
	buf_append(b, p, n);
}

/* The service packets a new file repeats (see write_header()). */
static bool is_header_field(uint32_t id)
{
	return id == PB_TRACE_PACKET__CLOCK_SNAPSHOT || id == PB_TRACE_PACKET__TRACE_CONFIG ||
	       id == PB_TRACE_PACKET__TRACE_UUID || id == PB_TRACE_PACKET__SYSTEM_INFO ||
	       id == PB_TRACE_PACKET__REMOTE_CLOCK_SYNC;
}

static void note_header(struct cmd_rotate *r, uint32_t field, uint32_t machine,
			const uint8_t *p, size_t n)
{
	size_t i;

	switch (field) {
	case PB_TRACE_PACKET__REMOTE_CLOCK_SYNC:
		for (i = 0; i < r->n_sync && r->sync_machine[i] != machine; i++)
			;
		if (i == ROT_MAX_SYSINFOS)
			break;
		if (i == r->n_sync)
			r->sync_machine[r->n_sync++] = machine;
		keep_copy(&r->sync[i], p, n);
		break;
	case PB_TRACE_PACKET__CLOCK_SNAPSHOT:
		keep_copy(&r->clock, p, n);
		break;
	case PB_TRACE_PACKET__TRACE_CONFIG:
		if (!r->config.len)
			keep_copy(&r->config, p, n);
		break;
	case PB_TRACE_PACKET__TRACE_UUID:
		if (!r->uuid.len)
			keep_copy(&r->uuid, p, n);
		break;
	case PB_TRACE_PACKET__SYSTEM_INFO:
		for (i = 0; i < r->n_sysinfo; i++) {
			if (r->sysinfo[i].len == n && memcmp(r->sysinfo[i].data, p, n) == 0)
				return;
		}
		if (r->n_sysinfo < ROT_MAX_SYSINFOS)
			keep_copy(&r->sysinfo[r->n_sysinfo++], p, n);
		break;
	default:
		break;
	}
}

void cmd_rotate_packet(struct cmd_rotate *r, const uint8_t *packet, size_t len)
{
	struct pz_reader rd;
	struct pz_field f;
	uint64_t seq_id = 0, flags = 0, v;
	uint32_t header = 0, machine = 0;
	struct rot_file *dst;

	pz_reader_init(&rd, packet, len);
	while (pz_reader_next(&rd, &f) > 0) {
		if (f.wire_type == PZ_WIRE_VARINT) {
			if (f.id == PB_TRACE_PACKET__TRUSTED_PACKET_SEQUENCE_ID)
				seq_id = f.value;
			else if (f.id == PB_TRACE_PACKET__SEQUENCE_FLAGS)
				flags = f.value;
			else if (f.id == PB_TRACE_PACKET__MACHINE_ID)
				machine = (uint32_t)f.value;
		} else if (f.wire_type == PZ_WIRE_LEN && is_header_field(f.id)) {
			header = f.id;
		}
	}
	if (header)
		note_header(r, header, machine, packet, len);
	if (!hmap_get(&r->seqs, seq_id, &v))
		v = r->cur.idx;
	if (flags & ROT_FLAGS_INCREMENTAL)
		v |= SEQ_INCREMENTAL;
	/* Move to the newest file: at once without incremental state, else at
	 * the state's restart; a sequence whose file closed moves regardless. */
	if ((uint32_t)v != r->cur.idx &&
	    (!(v & SEQ_INCREMENTAL) ||
	     (flags & PBE_TRACE_PACKET_SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED) ||
	     !r->prev.open || (uint32_t)v != r->prev.idx))
		v = (v & SEQ_INCREMENTAL) | r->cur.idx;
	hmap_put(&r->seqs, seq_id, v);
	dst = (uint32_t)v == r->cur.idx ? &r->cur : &r->prev;
	rot_write(r, dst, packet, len);
	r->read_bytes += len;
	if (r->o.rotate_bytes && r->cur.bytes >= r->o.rotate_bytes)
		r->want_cut = true;
}

/*
 * Files OUT.<n> left by an earlier run (a restarted service) are kept and
 * counted: numbering goes on after the highest, --keep counts them, and
 * the disk guard deletes them first.
 */
static void adopt_existing(struct cmd_rotate *r)
{
	char tmp[4096];
	const char *base;
	size_t blen;
	struct dirent *e;
	unsigned long lo = 0, hi = 0;
	bool any = false;
	DIR *d;

	snprintf(tmp, sizeof(tmp), "%s", r->o.out_path);
	base = basename(tmp);
	blen = strlen(base);
	d = opendir(r->dir);
	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		const char *p = e->d_name + blen + 1;
		char *end;
		unsigned long n;

		if (strncmp(e->d_name, base, blen) != 0 || e->d_name[blen] != '.' || *p < '0' ||
		    *p > '9')
			continue;
		n = strtoul(p, &end, 10);
		if (*end || n >= UINT32_MAX / 2)
			continue;
		if (!any || n < lo)
			lo = n;
		if (!any || n > hi)
			hi = n;
		any = true;
	}
	closedir(d);
	if (!any)
		return;
	r->oldest = (unsigned)lo;
	r->next_idx = (unsigned)hi + 1;
	fprintf(stderr, "perfetto: %s.%lu .. %s.%lu are kept; this recording starts at %s.%u\n",
		r->o.out_path, lo, r->o.out_path, hi, r->o.out_path, r->next_idx);
}

int cmd_rotate_create(const struct cmd_rotate_opts *o, struct cmd_rotate **out)
{
	struct cmd_rotate *r = calloc(1, sizeof(*r));
	char tmp[4096];
	size_t i;
	int rc;

	if (!r)
		return -ENOMEM;
	r->o = *o;
	snprintf(tmp, sizeof(tmp), "%s", o->out_path);
	snprintf(r->dir, sizeof(r->dir), "%s", dirname(tmp));
	hmap_init(&r->seqs);
	buf_init(&r->clock);
	buf_init(&r->config);
	buf_init(&r->uuid);
	for (i = 0; i < ROT_MAX_SYSINFOS; i++) {
		buf_init(&r->sysinfo[i]);
		buf_init(&r->sync[i]);
	}
	r->cur.fd = r->prev.fd = -1;
	adopt_existing(r);
	rc = open_file(r, &r->cur);
	if (rc < 0) {
		cmd_rotate_destroy(r);
		return rc;
	}
	prune(r);
	*out = r;
	return 0;
}

void cmd_rotate_destroy(struct cmd_rotate *r)
{
	size_t i;

	if (!r)
		return;
	close_file(r, &r->prev);
	close_file(r, &r->cur);
	prune(r);
	if (r->next_idx)
		fprintf(stderr, "perfetto: wrote %s.%u .. %s.%u (%u deleted)%s\n", r->o.out_path,
			r->oldest, r->o.out_path, r->next_idx - 1, r->deleted,
			r->stopped_full ? "; stopped: the file system is full" : "");
	hmap_fini(&r->seqs);
	buf_fini(&r->clock);
	buf_fini(&r->config);
	buf_fini(&r->uuid);
	for (i = 0; i < ROT_MAX_SYSINFOS; i++) {
		buf_fini(&r->sysinfo[i]);
		buf_fini(&r->sync[i]);
	}
	free(r);
}

unsigned cmd_rotate_files_started(const struct cmd_rotate *r)
{
	return r->next_idx;
}

unsigned cmd_rotate_files_deleted(const struct cmd_rotate *r)
{
	return r->deleted;
}

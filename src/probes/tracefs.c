// SPDX-License-Identifier: Apache-2.0
/*
 * tracefs.c - control-file access to ftrace (see tracefs.h). Not a hot
 * path: files are read and written whole with plain syscalls. Every write
 * that changes kernel state is preceded by a tracefs_save() of the caller.
 */
#include "probes/tracefs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"

#define CONTROL_FILE_MAX (1u << 20)

static bool is_tracefs(const char *dir)
{
	char p[TRACEFS_PATH_MAX + 32];

	snprintf(p, sizeof(p), "%s/trace_clock", dir);
	return access(p, R_OK) == 0;
}

static unsigned count_cpus(const char *root)
{
	char p[TRACEFS_PATH_MAX + 32];
	unsigned n = 0;

	for (;;) {
		snprintf(p, sizeof(p), "%s/per_cpu/cpu%u", root, n);
		if (access(p, F_OK) != 0)
			return n;
		n++;
	}
}

int tracefs_open(struct tracefs *fs, const char *instance)
{
	static const char *const candidates[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
	const char *base = NULL;
	size_t i;

	memset(fs, 0, sizeof(*fs));
	for (i = 0; i < PFC_ARRAY_SIZE(candidates) && !base; i++) {
		if (is_tracefs(candidates[i]))
			base = candidates[i];
	}
	if (!base) {
		/* Not mounted: mount it where the kernel documents it. */
		if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0 &&
		    is_tracefs("/sys/kernel/tracing"))
			base = "/sys/kernel/tracing";
		else
			return errno == EPERM ? -EACCES : -ENOENT;
	}
	if (instance && *instance) {
		if (strchr(instance, '/') || strcmp(instance, "..") == 0)
			return -EINVAL;
		if (snprintf(fs->root, sizeof(fs->root), "%s/instances/%s", base, instance) >=
		    (int)sizeof(fs->root))
			return -ENAMETOOLONG;
		if (!is_tracefs(fs->root))
			return -ENOENT;
	} else {
		snprintf(fs->root, sizeof(fs->root), "%s", base);
	}
	fs->n_cpus = count_cpus(fs->root);
	return 0;
}

int tracefs_path(const struct tracefs *fs, const char *rel, char *out, size_t size)
{
	return snprintf(out, size, "%s/%s", fs->root, rel) >= (int)size ? -ENAMETOOLONG : 0;
}

int tracefs_read(const struct tracefs *fs, const char *rel, struct buf *out)
{
	char p[TRACEFS_PATH_MAX * 2];
	int rc = tracefs_path(fs, rel, p, sizeof(p));

	return rc < 0 ? rc : file_read_all(p, out, CONTROL_FILE_MAX);
}

static int write_flags(const struct tracefs *fs, const char *rel, const char *s, int flags)
{
	char p[TRACEFS_PATH_MAX * 2];
	int fd, rc = tracefs_path(fs, rel, p, sizeof(p));

	if (rc < 0)
		return rc;
	fd = open(p, O_WRONLY | O_CLOEXEC | flags);
	if (fd < 0)
		return -errno;
	rc = file_write_all(fd, s, strlen(s));
	close(fd);
	return rc;
}

int tracefs_write(const struct tracefs *fs, const char *rel, const char *s)
{
	return write_flags(fs, rel, s, O_TRUNC);
}

int tracefs_append(const struct tracefs *fs, const char *rel, const char *s)
{
	return write_flags(fs, rel, s, O_APPEND);
}

int tracefs_set_tracing_on(const struct tracefs *fs, bool on)
{
	return tracefs_write(fs, "tracing_on", on ? "1" : "0");
}

int tracefs_set_buffer_size_kb(const struct tracefs *fs, uint32_t kb)
{
	char v[32];

	snprintf(v, sizeof(v), "%u", kb ? kb : 1);
	return tracefs_write(fs, "buffer_size_kb", v);
}

int tracefs_get_clock(const struct tracefs *fs, char *out, size_t size)
{
	struct buf b = BUF_INIT;
	char *open_br, *close_br;
	int rc = tracefs_read(fs, "trace_clock", &b);

	if (rc >= 0) {
		open_br = strchr((char *)b.data, '[');
		close_br = open_br ? strchr(open_br, ']') : NULL;
		if (!open_br || !close_br || (size_t)(close_br - open_br - 1) >= size)
			rc = -EBADMSG;
		else {
			memcpy(out, open_br + 1, (size_t)(close_br - open_br - 1));
			out[close_br - open_br - 1] = '\0';
			rc = 0;
		}
	}
	buf_fini(&b);
	return rc;
}

int tracefs_set_clock(const struct tracefs *fs, const char *clock)
{
	return tracefs_write(fs, "trace_clock", clock);
}

int tracefs_set_event(const struct tracefs *fs, const char *group, const char *name, bool on)
{
	char rel[TRACEFS_PATH_MAX];

	if (strchr(group, '/') || strchr(name, '/') || !strcmp(group, "..") || !strcmp(name, ".."))
		return -EINVAL;
	if (snprintf(rel, sizeof(rel), "events/%s/%s/enable", group, name) >= (int)sizeof(rel))
		return -ENAMETOOLONG;
	return tracefs_write(fs, rel, on ? "1" : "0");
}

bool tracefs_has_event(const struct tracefs *fs, const char *group, const char *name)
{
	char p[TRACEFS_PATH_MAX * 2];

	if (strchr(group, '/') || strchr(name, '/'))
		return false;
	if (snprintf(p, sizeof(p), "%s/events/%s/%s/format", fs->root, group, name) >=
	    (int)sizeof(p))
		return false;
	return access(p, R_OK) == 0;
}

int tracefs_clear_events(const struct tracefs *fs)
{
	return tracefs_write(fs, "set_event", "");
}

int tracefs_clear_buffers(const struct tracefs *fs)
{
	/* Opening "trace" with O_TRUNC empties every CPU's buffer. */
	return tracefs_write(fs, "trace", "");
}

int tracefs_parse_cpu_stats(const char *text, size_t len, struct tracefs_cpu_stats *out)
{
	const char *p = text, *end = text + len;

	memset(out, 0, sizeof(*out));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *colon = memchr(p, ':', (size_t)((nl ? nl : end) - p));
		char key[48];
		size_t klen;

		if (!nl)
			nl = end;
		if (colon && (klen = (size_t)(colon - p)) < sizeof(key)) {
			char num[48];
			size_t vlen = (size_t)(nl - colon - 1);
			uint64_t sec = 0, usec = 0;

			memcpy(key, p, klen);
			key[klen] = '\0';
			if (vlen >= sizeof(num))
				vlen = sizeof(num) - 1;
			memcpy(num, colon + 1, vlen);
			num[vlen] = '\0';
			if (!strcmp(key, "oldest event ts") || !strcmp(key, "now ts")) {
				/* "  1234.567890" seconds with microseconds. */
				if (sscanf(num, " %" SCNu64 ".%" SCNu64, &sec, &usec) >= 1) {
					uint64_t ns = sec * 1000000000ull + usec * 1000ull;

					if (key[0] == 'o')
						out->oldest_event_ts_ns = ns;
					else
						out->now_ts_ns = ns;
				}
			} else {
				uint64_t v = strtoull(num, NULL, 10);

				if (!strcmp(key, "entries"))
					out->entries = v;
				else if (!strcmp(key, "overrun"))
					out->overrun = v;
				else if (!strcmp(key, "commit overrun"))
					out->commit_overrun = v;
				else if (!strcmp(key, "bytes"))
					out->bytes = v;
				else if (!strcmp(key, "dropped events"))
					out->dropped_events = v;
				else if (!strcmp(key, "read events"))
					out->read_events = v;
			}
		}
		p = nl + 1;
	}
	return 0;
}

int tracefs_cpu_stats(const struct tracefs *fs, unsigned cpu, struct tracefs_cpu_stats *out)
{
	char rel[64];
	struct buf b = BUF_INIT;
	int rc;

	snprintf(rel, sizeof(rel), "per_cpu/cpu%u/stats", cpu);
	rc = tracefs_read(fs, rel, &b);
	if (rc >= 0)
		rc = tracefs_parse_cpu_stats((const char *)b.data, b.len, out);
	buf_fini(&b);
	return rc;
}

static bool valid_name(const char *s)
{
	return *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

int tracefs_expand_event(const struct tracefs *fs, const char *pattern, tracefs_event_cb cb,
			 void *user)
{
	char group[128], dir[TRACEFS_PATH_MAX * 2];
	const char *slash = strchr(pattern, '/');
	const char *name;
	struct dirent *de;
	DIR *d;
	bool any = false;

	if (!slash || (size_t)(slash - pattern) >= sizeof(group))
		return -EINVAL;
	memcpy(group, pattern, (size_t)(slash - pattern));
	group[slash - pattern] = '\0';
	name = slash + 1;
	if (!valid_name(group) || !*name)
		return -EINVAL;
	if (strcmp(name, "*") != 0) {
		cb(group, name, tracefs_has_event(fs, group, name), user);
		return 0;
	}
	if (snprintf(dir, sizeof(dir), "%s/events/%s", fs->root, group) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	d = opendir(dir);
	if (d) {
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.' || !tracefs_has_event(fs, group, de->d_name))
				continue;
			cb(group, de->d_name, true, user);
			any = true;
		}
		closedir(d);
	}
	if (!any)
		cb(group, name, false, user);
	return 0;
}

/* ------------------------------------------------------------- state ---- */

static int read_trimmed(const struct tracefs *fs, const char *rel, char *out, size_t size)
{
	struct buf b = BUF_INIT;
	int rc = tracefs_read(fs, rel, &b);
	size_t n;

	if (rc >= 0) {
		n = b.len;
		while (n && (b.data[n - 1] == '\n' || b.data[n - 1] == ' '))
			n--;
		if (n >= size)
			n = size - 1;
		memcpy(out, b.data, n);
		out[n] = '\0';
		rc = 0;
	}
	buf_fini(&b);
	return rc;
}

uint32_t tracefs_parse_buffer_size_kb(const char *text)
{
	const char *exp = strstr(text, "expanded:");

	return (uint32_t)strtoul(exp ? exp + strlen("expanded:") : text, NULL, 10);
}

int tracefs_save(const struct tracefs *fs, struct tracefs_state *out)
{
	char v[32];
	int rc;

	memset(out, 0, sizeof(*out));
	buf_init(&out->set_event);
	rc = read_trimmed(fs, "tracing_on", v, sizeof(v));
	if (rc < 0)
		return rc;
	out->tracing_on = v[0] == '1';
	rc = read_trimmed(fs, "buffer_size_kb", v, sizeof(v));
	if (rc < 0)
		return rc;
	out->buffer_size_kb = tracefs_parse_buffer_size_kb(v);
	rc = tracefs_get_clock(fs, out->clock, sizeof(out->clock));
	if (rc < 0)
		return rc;
	if (read_trimmed(fs, "current_tracer", out->current_tracer, sizeof(out->current_tracer)) < 0)
		snprintf(out->current_tracer, sizeof(out->current_tracer), "nop");
	rc = tracefs_read(fs, "set_event", &out->set_event);
	if (rc < 0)
		return rc;
	out->valid = true;
	return 0;
}

static bool buffer_size_differs(const struct tracefs *fs, uint32_t kb)
{
	char v[32];

	return read_trimmed(fs, "buffer_size_kb", v, sizeof(v)) < 0 ||
	       tracefs_parse_buffer_size_kb(v) != kb;
}

int tracefs_restore(const struct tracefs *fs, const struct tracefs_state *st)
{
	const char *p, *end;
	int rc = 0, r;

	if (!st->valid)
		return -EINVAL;
	/* Stop first so nothing is recorded while the rest changes. */
	tracefs_set_tracing_on(fs, false);
	r = tracefs_clear_events(fs);
	if (r < 0)
		rc = r;
	p = (const char *)st->set_event.data;
	end = p ? p + st->set_event.len : NULL;
	while (p && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		char line[TRACEFS_PATH_MAX];
		size_t n = (size_t)((nl ? nl : end) - p);

		if (n && n < sizeof(line)) {
			memcpy(line, p, n);
			line[n] = '\0';
			r = tracefs_append(fs, "set_event", line);
			if (r < 0 && !rc)
				rc = r;
		}
		p += n + 1;
	}
	if (st->buffer_size_kb && buffer_size_differs(fs, st->buffer_size_kb)) {
		r = tracefs_set_buffer_size_kb(fs, st->buffer_size_kb);
		if (r < 0 && !rc)
			rc = r;
	}
	if (st->clock[0]) {
		r = tracefs_set_clock(fs, st->clock);
		if (r < 0 && !rc)
			rc = r;
	}
	if (st->current_tracer[0])
		tracefs_write(fs, "current_tracer", st->current_tracer);
	r = tracefs_set_tracing_on(fs, st->tracing_on);
	if (r < 0 && !rc)
		rc = r;
	return rc;
}

void tracefs_state_fini(struct tracefs_state *st)
{
	buf_fini(&st->set_event);
	st->valid = false;
}

/* File format: one "key=value" per line; set_event lines as "event=...". */
int tracefs_state_store(const struct tracefs_state *st, const char *path)
{
	char tmp[TRACEFS_PATH_MAX + 8];
	const char *p, *end;
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fprintf(f, "tracing_on=%d\nbuffer_size_kb=%u\nclock=%s\ntracer=%s\n", st->tracing_on ? 1 : 0,
		st->buffer_size_kb, st->clock, st->current_tracer);
	p = (const char *)st->set_event.data;
	end = p ? p + st->set_event.len : NULL;
	while (p && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);

		if (n)
			fprintf(f, "event=%.*s\n", (int)n, p);
		p += n + 1;
	}
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		unlink(tmp);
		return -errno;
	}
	return 0;
}

int tracefs_state_load(const char *path, struct tracefs_state *out)
{
	char line[TRACEFS_PATH_MAX + 32];
	FILE *f = fopen(path, "re");
	int n_events = 0;

	memset(out, 0, sizeof(*out));
	buf_init(&out->set_event);
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);

		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		if (!strncmp(line, "tracing_on=", 11))
			out->tracing_on = line[11] == '1';
		else if (!strncmp(line, "buffer_size_kb=", 15))
			out->buffer_size_kb = (uint32_t)strtoul(line + 15, NULL, 10);
		else if (!strncmp(line, "clock=", 6) && len - 6 < sizeof(out->clock))
			memcpy(out->clock, line + 6, len - 6 + 1);
		else if (!strncmp(line, "tracer=", 7) && len - 7 < sizeof(out->current_tracer))
			memcpy(out->current_tracer, line + 7, len - 7 + 1);
		else if (!strncmp(line, "event=", 6) && n_events++ < TRACEFS_MAX_SAVED_EVENTS &&
			 strspn(line + 6, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:") ==
				 len - 6) {
			buf_append_str(&out->set_event, line + 6);
			buf_append_byte(&out->set_event, '\n');
		}
	}
	fclose(f);
	out->valid = out->clock[0] != '\0';
	return out->valid ? 0 : -EBADMSG;
}

const char *tracefs_state_file(void)
{
	const char *env = getenv("PFC_FTRACE_STATE_FILE");

	if (env && *env)
		return env;
	return access("/run", W_OK) == 0 ? "/run/perfetto-c-ftrace-state" : "/tmp/perfetto-c-ftrace-state";
}

int tracefs_hard_reset(const struct tracefs *fs)
{
	int rc = tracefs_set_tracing_on(fs, false);

	tracefs_clear_events(fs);
	tracefs_write(fs, "current_tracer", "nop");
	tracefs_clear_buffers(fs);
	return rc;
}

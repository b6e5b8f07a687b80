// SPDX-License-Identifier: Apache-2.0
/*
 * session.c - the client commands of Perfetto's warm sessions: where a
 * session's socket lives ($XDG_RUNTIME_DIR/perfetto/NAME.sock, else
 * $TMPDIR or /tmp), how an address is read (a name, or a *.sock or
 * absolute socket path; HOST:PORT is a `server http`), `server kill
 * NAME|PATH` (SIGTERM to the pid in PATH.pid) and `query --remote ADDR SQL`: each statement run on the
 * session in turn and printed as CSV exactly as a local `query` prints
 * it. Speaks to the server through rpc/client.c only.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/file.h"
#include "trace_processor/rpc/rpc.h"
#include "trace_processor/shell/subcommand.h"

#define PROG "trace_processor_shell"
/* Perfetto's limits: a session name's length, a socket path's (macOS's sun_path). */
#define SESSION_MAX_NAME 64
#define SESSION_MAX_PATH 104

bool shell_session_name_ok(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > SESSION_MAX_NAME)
		return false;
	for (i = 0; i < n; i++) {
		char c = s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			     (c >= '0' && c <= '9');

		if (!alnum && (i == 0 || (c != '_' && c != '-')))
			return false;
	}
	return true;
}

enum addr_kind shell_session_addr_kind(const char *addr)
{
	size_t n = strlen(addr);
	const char *colon = strrchr(addr, ':');

	if ((n >= 5 && strcmp(addr + n - 5, ".sock") == 0) || addr[0] == '/')
		return ADDR_PATH;
	if (strstr(addr, "://"))
		return ADDR_HTTP;
	if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1))
		return ADDR_HTTP;
	return shell_session_name_ok(addr) ? ADDR_NAME : ADDR_HTTP;
}

int shell_session_path(const char *name, char *out, size_t size)
{
	const char *base = getenv("XDG_RUNTIME_DIR");
	char dir[SESSION_MAX_PATH * 2];
	int n;

	if (!shell_session_name_ok(name)) {
		fprintf(stderr,
			PROG ": invalid session name '%s' (must match [A-Za-z0-9][A-Za-z0-9_-]* and be "
			     "at most %d chars)\n",
			name, SESSION_MAX_NAME);
		return -EINVAL;
	}
	if (!base || !*base)
		base = getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	snprintf(dir, sizeof(dir), "%s/perfetto", base);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		fprintf(stderr, PROG ": cannot create the session directory %s: %s\n", dir,
			strerror(errno));
		return -errno;
	}
	n = snprintf(out, size, "%s/%s.sock", dir, name);
	if (n < 0 || (size_t)n >= size || n + 1 > SESSION_MAX_PATH) {
		fprintf(stderr, PROG ": socket path is too long (limit %d bytes): %s/%s.sock\n",
			SESSION_MAX_PATH - 1, dir, name);
		return -ENAMETOOLONG;
	}
	return 0;
}

void shell_session_new_name(char *out, size_t size)
{
	/* Three words, as Perfetto's generated names: easy to type back. */
	static const char *const k_a[] = {"brisk", "clever", "daring", "fuzzy", "jolly", "nimble",
					  "plucky", "rapid", "sunny", "tidy", "zesty", "snug"};
	static const char *const k_b[] = {"cobalt", "crimson", "indigo", "lemon", "mint", "onyx",
					  "pearl", "saffron", "sage", "silver", "umber", "topaz"};
	static const char *const k_c[] = {"badger", "beaver", "bison", "gecko", "hare", "lemur",
					  "moose", "newt", "puffin", "robin", "seal", "toad"};
	struct timespec ts;
	uint64_t x;

	clock_gettime(CLOCK_REALTIME, &ts);
	x = ((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20)) * 0x9e3779b97f4a7c15ull ^
	    (uint64_t)getpid() * 0xbf58476d1ce4e5b9ull;
	snprintf(out, size, "%s-%s-%s", k_a[x % 12], k_b[(x >> 16) % 12], k_c[(x >> 32) % 12]);
}

int shell_session_parse_ms(const char *s, uint32_t *out)
{
	char *end;
	unsigned long long v, mult = 1000;
	size_t n = strlen(s);

	if (strcmp(s, "never") == 0 || strcmp(s, "off") == 0 || strcmp(s, "0") == 0) {
		*out = 0;
		return 0;
	}
	if (n == 0 || s[0] < '0' || s[0] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	if (strcmp(end, "s") == 0)
		mult = 1000;
	else if (strcmp(end, "m") == 0)
		mult = 60000;
	else if (strcmp(end, "h") == 0)
		mult = 3600000;
	else if (*end)
		return -EINVAL;
	if (v > UINT32_MAX / mult)
		return -ERANGE;
	*out = (uint32_t)(v * mult);
	return 0;
}

/* The socket of @addr into @out, or -1 after saying why. */
static int resolve(const char *addr, char *out, size_t size)
{
	switch (shell_session_addr_kind(addr)) {
	case ADDR_HTTP:
		fprintf(stderr,
			PROG ": '%s' is an HTTP address: --remote over HTTP is not supported here, "
			     "only `server unix` sessions (a name or a socket path)\n",
			addr);
		return -1;
	case ADDR_NAME:
		return shell_session_path(addr, out, size) < 0 ? -1 : 0;
	case ADDR_PATH:
		break;
	}
	if (strlen(addr) >= size) {
		fprintf(stderr, PROG ": socket path is too long: %s\n", addr);
		return -1;
	}
	memcpy(out, addr, strlen(addr) + 1);
	return 0;
}

int shell_server_kill(const char *addr)
{
	char path[SESSION_MAX_PATH * 2 + 8], pid_path[sizeof(path) + 8], *end;
	struct buf text = BUF_INIT;
	long pid = 0;

	if (shell_session_addr_kind(addr) == ADDR_HTTP) {
		fprintf(stderr,
			PROG ": server kill over HTTP (%s) is not supported; stop the server with "
			     "Ctrl-C\n",
			addr);
		return 1;
	}
	if (resolve(addr, path, sizeof(path)) < 0)
		return 1;
	snprintf(pid_path, sizeof(pid_path), "%s.pid", path);
	if (file_read_all(pid_path, &text, 64) >= 0 && buf_cstr(&text)) {
		errno = 0;
		pid = strtol((const char *)text.data, &end, 10);
		if (errno || end == (const char *)text.data || pid <= 1 || pid > INT32_MAX)
			pid = 0;
	}
	buf_fini(&text);
	if (pid <= 0 || kill((pid_t)pid, 0) < 0) {
		unlink(pid_path); /* a dead server's */
		fprintf(stderr, PROG ": No live session at '%s'\n", addr);
		return 1;
	}
	if (kill((pid_t)pid, SIGTERM) < 0) {
		fprintf(stderr, PROG ": Failed to signal pid %ld: %s\n", pid, strerror(errno));
		return 1;
	}
	printf("Stopped session '%s' (pid %ld)\n", addr, pid);
	return 0;
}

/* ------------------------------------------------------- query --remote -- */

struct csv {
	struct buf out;
	size_t n_cols, col;
	bool suppress;     /* a lone "suppress_query_output" column */
};

static int csv_columns(void *ctx, const char *const *names, size_t n)
{
	struct csv *c = ctx;
	size_t i;
	int err = 0;

	c->n_cols = n;
	c->suppress = n == 1 && strcmp(names[0], "suppress_query_output") == 0;
	for (i = 0; i < n; i++)
		err |= buf_appendf(&c->out, "%s\"%s\"", i ? "," : "", names[i]);
	err |= buf_append_byte(&c->out, '\n');
	return err < 0 ? -1 : 0;
}

static int csv_cell(void *ctx, const struct tp_client_cell *cell)
{
	struct csv *c = ctx;
	int err = 0;

	if (c->col)
		err |= buf_append_byte(&c->out, ',');
	switch (cell->type) {
	case 2:
		err |= buf_appendf(&c->out, "%" PRId64, cell->i);
		break;
	case 3:
		err |= buf_appendf(&c->out, "%f", cell->d);
		break;
	case 4:
		err |= buf_appendf(&c->out, "\"%.*s\"", (int)cell->len, cell->s);
		break;
	case 5:
		err |= buf_append_str(&c->out, "\"<raw bytes>\"");
		break;
	default:
		err |= buf_append_str(&c->out, "\"[NULL]\"");
		break;
	}
	if (++c->col == c->n_cols) {
		c->col = 0;
		err |= buf_append_byte(&c->out, '\n');
	}
	return err < 0 ? -1 : 0;
}

int shell_session_connect(const char *addr, struct tp_client *out)
{
	char path[SESSION_MAX_PATH * 2 + 8];
	int rc;

	if (shell_session_addr_kind(addr) == ADDR_HTTP) {
		rc = tp_client_connect_http(addr, out);
		if (rc < 0) {
			fprintf(stderr, PROG ": Could not connect to '%s': %s\n", addr,
				rc == -EINVAL ? "expected HOST:PORT" : strerror(-rc));
			return -1;
		}
		return 0;
	}
	if (resolve(addr, path, sizeof(path)) < 0)
		return -1;
	if (tp_client_connect(path, out) < 0) {
		fprintf(stderr,
			PROG ": No live session at '%s'. Start one with: " PROG
			     " server unix --name <name> <trace>\n",
			addr);
		return -1;
	}
	return 0;
}

int shell_remote_query(const char *addr, const char *sql)
{
	static const struct tp_client_cb cb = {csv_columns, csv_cell};
	struct tp_client_stmt st;
	struct csv c;
	size_t len = strlen(sql);
	uint32_t off = 0;
	bool printed = false, ran = false;
	struct tp_client cl;
	int rc, exit_code = 1;

	if (len > UINT32_MAX) {
		fprintf(stderr, PROG ": the SQL is too long\n");
		return 1;
	}
	if (shell_session_connect(addr, &cl) < 0)
		return 1;
	memset(&c, 0, sizeof(c));
	c.out = (struct buf)BUF_INIT;
	for (;;) {
		buf_reset(&c.out);
		c.n_cols = c.col = 0;
		c.suppress = false;
		rc = tp_client_statement(&cl, sql, len, off, &cb, &c, &st);
		if (rc < 0) {
			fprintf(stderr, PROG ": session '%s': %s\n", addr,
				st.error ? st.error
				: rc == -EPROTO ? "malformed reply"
				: rc == -ECONNRESET ? "the session closed the connection"
						    : strerror(-rc));
			free(st.error);
			goto out;
		}
		if (st.error) {
			fprintf(stderr, "%s\n", st.error);
			free(st.error);
			goto out;
		}
		if (!st.executed)
			break;
		ran = true;
		/* Printed as Perfetto's client does: rows the server counts as no
		 * output (void functions, suppress_query_output) print nothing. */
		if (st.n_cells && st.with_output == 0)
			c.suppress = true;
		if (st.n_cols && !c.suppress) {
			if (printed)
				putchar('\n');
			printed = true;
			fwrite(c.out.data, 1, c.out.len, stdout);
		}
		if (st.tail <= off || st.tail > len)
			break;
		off = st.tail;
	}
	if (!ran) {
		fprintf(stderr, "No valid SQL to run\n");
		goto out;
	}
	exit_code = fflush(stdout) == 0 ? 0 : 1;
out:
	buf_fini(&c.out);
	tp_client_close(&cl);
	return exit_code;
}

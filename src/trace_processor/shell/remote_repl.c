// SPDX-License-Identifier: Apache-2.0
/*
 * remote_repl.c - `interactive --remote NAME|PATH`: the interactive shell
 * on a `server unix` session. Lines are collected until they make a
 * complete SQL statement (sqlite3_complete), as the local REPL does; the
 * statements run one at a time on the session (rpc/client.c) and the last
 * one's result is printed as the local REPL's aligned table, then the
 * time it took. .quit/.exit/.q leave; the other dot-commands need the
 * engine in this process and are refused.
 */
#include <errno.h>
#include <inttypes.h>
#include <readline/history.h>
#include <readline/readline.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "trace_processor/rpc/rpc.h"
#include "trace_processor/shell/subcommand.h"

#define PROG "trace_processor_shell"
/* As the local REPL: widths from the first rows, cells cut at 40 columns. */
#define REPL_SAMPLE_ROWS 1000
#define REPL_MAX_COL_WIDTH 40

/* One result: its cells as text, NUL-separated in @text. */
struct table {
	struct buf names;       /* NUL-terminated column names */
	struct buf text;        /* NUL-terminated cells */
	struct buf offs;        /* size_t per cell into @text */
	struct buf nums;        /* bool per cell: right-aligned */
	size_t n_cols, n_cells;
};

static int tb_columns(void *ctx, const char *const *names, size_t n)
{
	struct table *t = ctx;
	size_t i;
	int err = 0;

	t->n_cols = n;
	for (i = 0; i < n; i++)
		err |= buf_append(&t->names, names[i], strlen(names[i]) + 1);
	return err < 0 ? -1 : 0;
}

static int tb_cell(void *ctx, const struct tp_client_cell *c)
{
	struct table *t = ctx;
	size_t off = t->text.len;
	bool num = c->type == 2 || c->type == 3;
	int err = 0;

	switch (c->type) {
	case 2:
		err |= buf_appendf(&t->text, "%" PRId64, c->i);
		break;
	case 3:
		err |= buf_appendf(&t->text, "%f", c->d);
		break;
	case 4:
		err |= buf_appendf(&t->text, "%.*s", (int)c->len, c->s);
		break;
	case 5:
		err |= buf_append_str(&t->text, "<raw bytes>");
		break;
	default:
		err |= buf_append_str(&t->text, "[NULL]");
		break;
	}
	err |= buf_append_byte(&t->text, 0);
	err |= buf_append(&t->offs, &off, sizeof(off));
	err |= buf_append(&t->nums, &num, sizeof(num));
	t->n_cells++;
	return err < 0 ? -1 : 0;
}

static void tb_reset(struct table *t)
{
	buf_reset(&t->names);
	buf_reset(&t->text);
	buf_reset(&t->offs);
	buf_reset(&t->nums);
	t->n_cols = t->n_cells = 0;
}

static size_t width_of(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

static size_t prefix_bytes(const char *s, size_t cols)
{
	size_t i = 0;

	for (; s[i]; i++) {
		if (((unsigned char)s[i] & 0xc0) != 0x80) {
			if (cols == 0)
				break;
			cols--;
		}
	}
	return i;
}

static void print_cell(const char *s, size_t width, bool right, bool last)
{
	size_t w = width_of(s), pad = 0;
	int len = (int)strlen(s);
	const char *cut = "";

	if (w > width) {
		cut = width > 3 ? "..." : "";
		len = (int)prefix_bytes(s, width > 3 ? width - 3 : width);
	} else {
		pad = width - w;
	}
	if (right)
		printf("%*s", (int)pad, "");
	printf("%.*s%s", len, s, cut);
	if (!last)
		printf("%*s  ", right ? 0 : (int)pad, "");
}

/* The local REPL's table: header, dashes, rows, "N rows". */
static void tb_print(struct table *t, bool wide)
{
	const size_t *offs = (const size_t *)t->offs.data;
	const bool *nums = (const bool *)t->nums.data;
	const char *names = (const char *)t->names.data, *text = (const char *)t->text.data;
	size_t n = t->n_cols, rows = n ? t->n_cells / n : 0, *w, i, r, k;
	const char *name;

	if (n == 0)
		return;
	w = calloc(n, sizeof(*w));
	if (!w)
		return;
	for (i = 0, name = names; i < n; i++, name += strlen(name) + 1)
		w[i] = width_of(name);
	for (r = 0; r < rows && r < REPL_SAMPLE_ROWS; r++)
		for (i = 0; i < n; i++) {
			k = width_of(text + offs[r * n + i]);
			w[i] = k > w[i] ? k : w[i];
		}
	for (i = 0; i < n; i++) {
		if (!wide && w[i] > REPL_MAX_COL_WIDTH)
			w[i] = REPL_MAX_COL_WIDTH;
		if (w[i] < 1)
			w[i] = 1;
	}
	for (i = 0, name = names; i < n; i++, name += strlen(name) + 1)
		print_cell(name, w[i], false, i == n - 1);
	putchar('\n');
	for (i = 0; i < n; i++) {
		for (k = 0; k < w[i]; k++)
			putchar('-');
		if (i < n - 1)
			fputs("  ", stdout);
	}
	putchar('\n');
	for (r = 0; r < rows; r++) {
		for (i = 0; i < n; i++)
			print_cell(text + offs[r * n + i], w[i], nums[r * n + i], i == n - 1);
		putchar('\n');
	}
	printf("\n%zu row%s\n", rows, rows == 1 ? "" : "s");
	free(w);
}

/*
 * Runs @sql's statements; prints the last one's result (@t[0] and @t[1]
 * take turns: a call that finds no statement left must not wipe it).
 * Return: 0, -1 after an SQL error, -2 if the session is gone.
 */
static int run(const struct tp_client *cl, const char *sql, struct table t[2], bool wide)
{
	static const struct tp_client_cb cb = {tb_columns, tb_cell};
	struct tp_client_stmt st;
	size_t len = strlen(sql);
	uint32_t off = 0;
	int cur = 0, last = -1, rc;

	for (;;) {
		tb_reset(&t[cur]);
		rc = tp_client_statement(cl, sql, len, off, &cb, &t[cur], &st);
		if (rc < 0) {
			fprintf(stderr, PROG ": session: %s\n",
				st.error ? st.error : rc == -ECONNRESET ? "the session closed the connection"
								       : "malformed reply");
			free(st.error);
			return -2;
		}
		if (st.error) {
			fprintf(stderr, "%s\n", st.error);
			free(st.error);
			return -1;
		}
		if (!st.executed)
			break;
		last = cur;
		cur ^= 1;
		if (st.tail <= off || st.tail >= len)
			break;
		off = st.tail;
	}
	if (last >= 0)
		tb_print(&t[last], wide);
	return 0;
}

int shell_remote_interactive(const char *addr, bool wide)
{
	bool is_tty = isatty(STDIN_FILENO), quit = false;
	struct buf pending = BUF_INIT;
	struct table t[2];
	char *line = NULL, *p;
	size_t cap = 0;
	ssize_t n;
	uint64_t t0;
	struct tp_client cl;
	int rc, exit_code = 0;

	if (shell_session_connect(addr, &cl) < 0)
		return 1;
	memset(t, 0, sizeof(t));
	t[0].names = t[0].text = t[0].offs = t[0].nums = (struct buf)BUF_INIT;
	t[1] = t[0];
	if (is_tty)
		fprintf(stderr, "Connected to session '%s'. Enter SQL ending with ';', .quit "
				"or Ctrl-D to leave.\n",
			addr);
	while (!quit) {
		if (is_tty) {
			free(line);
			line = readline(pending.len ? "...> " : "> ");
			if (!line) {
				putchar('\n');
				break;
			}
		} else {
			n = getline(&line, &cap, stdin);
			if (n < 0)
				break;
			if (n > 0 && line[n - 1] == '\n')
				line[n - 1] = '\0';
		}
		for (p = line; *p == ' ' || *p == '\t'; p++)
			;
		if (*p == '.' && pending.len == 0) {
			if (strcmp(p, ".quit") == 0 || strcmp(p, ".exit") == 0 ||
			    strcmp(p, ".q") == 0)
				quit = true;
			else
				fprintf(stderr, "%s: not available on a session (only .quit)\n", p);
			continue;
		}
		if (pending.len == 0 && !*p)
			continue;
		if (buf_append_str(&pending, line) < 0 || buf_append_byte(&pending, '\n') < 0) {
			fprintf(stderr, PROG ": out of memory\n");
			exit_code = 1;
			break;
		}
		if (!sqlite3_complete(buf_cstr(&pending)))
			continue;
		if (is_tty)
			add_history(buf_cstr(&pending));
		t0 = clock_monotonic_ns();
		rc = run(&cl, buf_cstr(&pending), t, wide);
		buf_reset(&pending);
		if (rc == 0)
			printf("Query executed in %.3f ms\n\n",
			       (double)(clock_monotonic_ns() - t0) / 1e6);
		fflush(stdout);
		if (rc == -2) {
			exit_code = 1;
			break;
		}
	}
	/* A last statement without ';' at end of input still runs. */
	if (exit_code == 0 && pending.len && buf_cstr(&pending)) {
		t0 = clock_monotonic_ns();
		if (run(&cl, buf_cstr(&pending), t, wide) == 0)
			printf("Query executed in %.3f ms\n\n",
			       (double)(clock_monotonic_ns() - t0) / 1e6);
	}
	free(line);
	buf_fini(&pending);
	for (n = 0; n < 2; n++) {
		buf_fini(&t[n].names);
		buf_fini(&t[n].text);
		buf_fini(&t[n].offs);
		buf_fini(&t[n].nums);
	}
	tp_client_close(&cl);
	return exit_code;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * serve.c - `trace_processor_shell --httpd` and `--stdiod`: turns the
 * command line's --http-* flags into the server's options and runs the
 * HTTP server of rpc/, or its pipe server on stdin/stdout, over the
 * shell's engine (or a new one when no trace was given).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "trace_processor/rpc/rpc.h"
#include "trace_processor/shell/shell_int.h"

#define PROG "trace_processor_shell"
#define SHELL_HTTPD_DEFAULT_PORT 9001
#define SHELL_HTTPD_MAX_ORIGINS 64

/* --unixd: the session server. Return: 0, or -1 after saying why. */
static int serve_unix(struct tp_rpc *r, const struct shell_httpd *h)
{
	struct tp_unixd_options o = {.path = h->unix_path,
				     .name = h->unix_name ? h->unix_name : h->unix_path};
	int64_t ms = 0;
	int rc;

	if (h->unix_idle_ms &&
	    sv_parse_i64(sv_from_cstr(h->unix_idle_ms), 0, UINT32_MAX, &ms) < 0) {
		fprintf(stderr, PROG ": bad --unixd-idle-ms '%s'\n", h->unix_idle_ms);
		return -1;
	}
	o.idle_ms = (uint32_t)ms;
	if (!h->unix_idle_start || strcmp(h->unix_idle_start, "auto") == 0) {
		o.idle_start = TP_IDLE_AUTO;
	} else if (strcmp(h->unix_idle_start, "orphaned") == 0) {
		o.idle_start = TP_IDLE_ORPHANED;
	} else if (strcmp(h->unix_idle_start, "last-query") == 0) {
		o.idle_start = TP_IDLE_LAST_QUERY;
	} else {
		fprintf(stderr, PROG ": bad --unixd-idle-start '%s'\n", h->unix_idle_start);
		return -1;
	}
	o.daemonize = h->unix_daemonize;
	rc = tp_unixd_run(r, &o);
	if (rc == -EADDRINUSE)
		fprintf(stderr,
			PROG ": A live session already holds %s. Pick another --name/--path or "
			     "stop the existing server.\n",
			h->unix_path);
	else if (rc < 0)
		fprintf(stderr, PROG ": Failed to bind session socket at %s: %s\n", h->unix_path,
			strerror(-rc));
	return rc < 0 ? -1 : 0;
}

int shell_httpd(const struct tp_options *opt, const struct shell_sql_packages *sp, struct tp *tp,
		const char *name, uint64_t size, const struct shell_httpd *h)
{
	const char *origins[SHELL_HTTPD_MAX_ORIGINS];
	struct tp_httpd_options o = {.ip = h->ip, .port = SHELL_HTTPD_DEFAULT_PORT};
	struct strview rest, item;
	struct tp_rpc *r = NULL;
	char *cors = NULL, *p;
	int64_t port;
	int rc, exit_code = 1;

	if (h->port && sv_parse_i64(sv_from_cstr(h->port), 0, 65535, &port) < 0) {
		fprintf(stderr, PROG ": bad --http-port '%s' (0..65535)\n", h->port);
		goto out;
	}
	if (h->port)
		o.port = (int)port;
	/* --http-additional-cors-origins a,b,c */
	if (h->cors) {
		cors = strdup(h->cors);
		if (!cors)
			goto nomem;
		rest = sv_from_cstr(cors);
		while (rest.len) {
			sv_split(rest, ',', &item, &rest);
			item = sv_trim(item);
			if (!item.len)
				continue;
			if (o.n_cors == SHELL_HTTPD_MAX_ORIGINS) {
				fprintf(stderr, PROG ": more than %d CORS origins\n",
					SHELL_HTTPD_MAX_ORIGINS);
				goto out;
			}
			p = (char *)item.ptr;
			p[item.len] = '\0';
			origins[o.n_cors++] = p;
		}
		o.cors = origins;
	}
	if (!tp) {
		rc = tp_create(opt, &tp);
		if (rc < 0)
			goto nomem;
		if (sp && shell_sql_packages(tp, sp) < 0)
			goto out;
		name = NULL;
	}
	rc = tp_rpc_create(opt, tp, name, size, &r);
	if (rc < 0)
		goto nomem;
	tp = NULL;
	if (h->unix_path) {
		rc = serve_unix(r, h);
	} else if (h->stdio) {
		rc = tp_stdio_run(r, STDIN_FILENO, STDOUT_FILENO);
		if (rc < 0)
			fprintf(stderr, PROG ": stdio server: %s\n",
				rc == -EPROTO ? "malformed request stream" : strerror(-rc));
	} else {
		rc = tp_httpd_run(r, &o);
	}
	exit_code = rc < 0 ? 1 : 0;
	goto out;
nomem:
	fprintf(stderr, PROG ": %s\n", strerror(ENOMEM));
out:
	tp_rpc_destroy(r);
	tp_destroy(tp);
	free(cors);
	return exit_code;
}

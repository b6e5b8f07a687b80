// SPDX-License-Identifier: Apache-2.0
/*
 * http_req.c - one HTTP/1.1 request from the bytes a client sent: the
 * request line, at most HTTP_MAX_HEADERS headers in at most HTTP_MAX_HEAD
 * bytes, and a body of Content-Length bytes (at most HTTP_MAX_BODY; a
 * chunked request body is refused). Pure: no I/O, views into the input.
 */
#include <string.h>
#include <strings.h>

#include "trace_processor/rpc/rpc_int.h"

static bool sv_ieq(struct strview a, const char *b)
{
	size_t n = strlen(b);

	return a.len == n && strncasecmp(a.ptr, b, n) == 0;
}

struct strview http_header(const struct http_req *req, const char *name)
{
	size_t i;

	for (i = 0; i < req->n_headers; i++)
		if (sv_ieq(req->headers[i].name, name))
			return req->headers[i].value;
	return sv_make("", 0);
}

bool http_list_has(struct strview v, const char *token)
{
	struct strview item, rest = v;

	while (rest.len) {
		sv_split(rest, ',', &item, &rest);
		if (sv_ieq(sv_trim(item), token))
			return true;
	}
	return false;
}

static int fail(const char **status, const char *s)
{
	*status = s;
	return -1;
}

/* Token characters of a method or header name (RFC 9110 tchar). */
static bool is_tchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool all_tchar(struct strview s)
{
	size_t i;

	if (!s.len)
		return false;
	for (i = 0; i < s.len; i++)
		if (!is_tchar(s.ptr[i]))
			return false;
	return true;
}

/* "GET /uri HTTP/1.1" */
static int parse_request_line(struct strview line, struct http_req *req, const char **status)
{
	struct strview rest;
	size_t i;

	if (!sv_split(line, ' ', &req->method, &rest) || !sv_split(rest, ' ', &req->uri, &rest))
		return fail(status, "400 Bad Request");
	req->version = rest;
	if (!all_tchar(req->method) || req->uri.len == 0 || req->uri.ptr[0] != '/')
		return fail(status, "400 Bad Request");
	for (i = 0; i < req->uri.len; i++)
		if ((unsigned char)req->uri.ptr[i] <= ' ' || req->uri.ptr[i] == 0x7f)
			return fail(status, "400 Bad Request");
	if (!sv_eq_cstr(req->version, "HTTP/1.1") && !sv_eq_cstr(req->version, "HTTP/1.0"))
		return fail(status, "505 HTTP Version Not Supported");
	return 0;
}

static int parse_header(struct strview line, struct http_req *req, const char **status)
{
	const char *colon = memchr(line.ptr, ':', line.len);
	struct strview name, value, conn;
	uint64_t n;

	if (!colon)
		return fail(status, "400 Bad Request");
	name = sv_make(line.ptr, (size_t)(colon - line.ptr));
	value = sv_trim(sv_make(colon + 1, line.len - name.len - 1));
	if (!all_tchar(name))
		return fail(status, "400 Bad Request");
	if (req->n_headers == HTTP_MAX_HEADERS)
		return fail(status, "431 Request Header Fields Too Large");
	req->headers[req->n_headers].name = name;
	req->headers[req->n_headers].value = value;
	req->n_headers++;
	if (sv_ieq(name, "content-length")) {
		if (sv_parse_u64(value, UINT64_MAX, &n) < 0)
			return fail(status, "400 Bad Request");
		if (n > HTTP_MAX_BODY)
			return fail(status, "413 Payload Too Large");
		req->body_len = (size_t)n;
	} else if (sv_ieq(name, "transfer-encoding")) {
		return fail(status, "411 Length Required");
	} else if (sv_ieq(name, "connection")) {
		conn = value;
		if (http_list_has(conn, "close"))
			req->keepalive = false;
		if (http_list_has(conn, "keep-alive"))
			req->keepalive = true;
		if (http_list_has(conn, "upgrade"))
			req->upgrade = true;
	}
	return 0;
}

long http_parse(const uint8_t *p, size_t len, struct http_req *req, const char **status)
{
	const char *s = (const char *)p, *nl;
	size_t off = 0, line_len;
	bool first = true;
	struct strview line;

	memset(req, 0, sizeof(*req));
	for (;;) {
		nl = memchr(s + off, '\n', len - off);
		if (!nl) {
			if (len >= HTTP_MAX_HEAD)
				return fail(status, "431 Request Header Fields Too Large");
			return 0;
		}
		line_len = (size_t)(nl - (s + off));
		if (off + line_len + 1 > HTTP_MAX_HEAD)
			return fail(status, "431 Request Header Fields Too Large");
		line = sv_make(s + off, line_len);
		if (line.len && line.ptr[line.len - 1] == '\r')
			line.len--;
		off += line_len + 1;
		if (first) {
			/* RFC 9112: a server should ignore blank lines before the request. */
			if (line.len == 0 && off <= 4)
				continue;
			if (parse_request_line(line, req, status) < 0)
				return -1;
			req->keepalive = sv_eq_cstr(req->version, "HTTP/1.1");
			first = false;
			continue;
		}
		if (line.len == 0)
			break;
		if (parse_header(line, req, status) < 0)
			return -1;
	}
	req->head_len = off;
	if (len - off < req->body_len)
		return 0;
	return (long)(off + req->body_len);
}

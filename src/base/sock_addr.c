// SPDX-License-Identifier: Apache-2.0
/*
 * sock_addr.c - parses socket names in Perfetto's grammar (see sock.h) into
 * sockaddrs and formats them back. Pure except for host-name resolution;
 * called once per listen/connect, so nothing here is hot.
 */
#include "base/sock.h"
#include "base/buf.h"
#include "base/compiler.h"
#include "base/log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/vm_sockets.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>

#define VSOCK_PREFIX "vsock://"

static int fail(char *why, size_t why_size, int err, const char *fmt, ...) PFC_PRINTF(4, 5);

/* Records a reason for the caller and returns @err, so call sites stay one line. */
static int fail(char *why, size_t why_size, int err, const char *fmt, ...)
{
	char line[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	LOG_D("%s", line);
	if (why && why_size)
		snprintf(why, why_size, "%s", line);
	return err;
}

/* "-1" or an unsigned decimal up to @max; -1 maps to @any. */
static int parse_u32_or_any(struct strview s, uint32_t any, uint32_t *out)
{
	uint64_t v;

	if (sv_eq_cstr(s, "-1")) {
		*out = any;
		return 0;
	}
	if (sv_parse_u64(s, UINT32_MAX, &v))
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static int parse_unix(const char *name, struct sock_addr *out, char *why, size_t why_size)
{
	struct sockaddr_un *un = (struct sockaddr_un *)&out->ss;
	bool is_abstract = name[0] == '@';
	const char *path = is_abstract ? name + 1 : name;
	size_t n = strlen(path);

	/* A path needs its NUL; an abstract name uses the leading NUL instead. */
	if (n >= sizeof(un->sun_path))
		return fail(why, why_size, -ENAMETOOLONG,
			    "socket name '%s': %zu bytes, at most %zu fit in sun_path", name, n,
			    sizeof(un->sun_path) - 1);
	memset(&out->ss, 0, sizeof(out->ss));
	un->sun_family = AF_UNIX;
	if (is_abstract) {
		memcpy(un->sun_path + 1, path, n);
		out->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
	} else {
		memcpy(un->sun_path, path, n + 1);
		out->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	}
	out->family = AF_UNIX;
	return 0;
}

static int parse_vsock(const char *name, struct sock_addr *out, char *why, size_t why_size)
{
	struct sockaddr_vm *vm = (struct sockaddr_vm *)&out->ss;
	struct strview cid_sv, port_sv;
	uint32_t cid, port;

	if (!sv_split(sv_from_cstr(name + strlen(VSOCK_PREFIX)), ':', &cid_sv, &port_sv))
		return fail(why, why_size, -EINVAL, "socket name '%s': expected vsock://CID:PORT",
			    name);
	if (parse_u32_or_any(cid_sv, VMADDR_CID_ANY, &cid))
		return fail(why, why_size, -EINVAL,
			    "socket name '%s': vsock CID must be -1 or 0..4294967295", name);
	if (parse_u32_or_any(port_sv, VMADDR_PORT_ANY, &port))
		return fail(why, why_size, -EINVAL,
			    "socket name '%s': vsock port must be -1 or 0..4294967295", name);
	memset(&out->ss, 0, sizeof(out->ss));
	vm->svm_family = AF_VSOCK;
	vm->svm_cid = cid;
	vm->svm_port = port;
	out->family = AF_VSOCK;
	out->len = sizeof(*vm);
	return 0;
}

/* Resolves @host (numeric or a name) for @family with getaddrinfo(). */
static int resolve(const char *name, const char *host, int family, int flags, uint16_t port,
		   struct sock_addr *out, char *why, size_t why_size)
{
	struct addrinfo hints, *res = NULL;
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = family;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = flags;
	rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc == EAI_MEMORY)
		return -ENOMEM;
	if (rc != 0 || !res || res->ai_addrlen > sizeof(out->ss)) {
		if (res)
			freeaddrinfo(res);
		if (flags & AI_NUMERICHOST)
			return fail(why, why_size, -EINVAL,
				    "socket name '%s': '%s' is not an IPv6 address", name, host);
		return fail(why, why_size, -EADDRNOTAVAIL,
			    "socket name '%s': cannot resolve host '%s': %s", name, host,
			    rc ? gai_strerror(rc) : "no address");
	}
	memset(&out->ss, 0, sizeof(out->ss));
	memcpy(&out->ss, res->ai_addr, res->ai_addrlen);
	out->len = (socklen_t)res->ai_addrlen;
	out->family = res->ai_family;
	freeaddrinfo(res);
	if (out->family == AF_INET6)
		((struct sockaddr_in6 *)&out->ss)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)&out->ss)->sin_port = htons(port);
	return 0;
}

static int parse_inet(const char *name, const char *colon, struct sock_addr *out, char *why,
		      size_t why_size)
{
	struct strview host = sv_make(name, (size_t)(colon - name));
	bool is_v6 = name[0] == '[';
	char host_buf[SOCK_NAME_MAX];
	uint64_t port;

	if (sv_parse_u64(sv_from_cstr(colon + 1), 65535, &port))
		return fail(why, why_size, -EINVAL,
			    "socket name '%s': port '%s' is not in 0..65535", name, colon + 1);
	if (is_v6) {
		if (host.len < 2 || host.ptr[host.len - 1] != ']')
			return fail(why, why_size, -EINVAL,
				    "socket name '%s': expected [IPv6]:port", name);
		host = sv_make(host.ptr + 1, host.len - 2);
	}
	if (host.len == 0)
		return fail(why, why_size, -EINVAL, "socket name '%s': missing host", name);
	if (sv_to_cstr(host, host_buf, sizeof(host_buf)))
		return fail(why, why_size, -ENAMETOOLONG, "socket name '%s': host too long",
			    name);
	if (is_v6)
		return resolve(name, host_buf, AF_INET6, AI_NUMERICHOST, (uint16_t)port, out, why,
			       why_size);
	return resolve(name, host_buf, AF_INET, 0, (uint16_t)port, out, why, why_size);
}

/* True if @s is an optional '-' followed by one or more decimal digits. */
static bool is_int_syntax(const char *s)
{
	if (*s == '-')
		s++;
	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
	}
	return true;
}

int sock_addr_parse_explain(const char *name, struct sock_addr *out, char *why, size_t why_size)
{
	struct sock_addr a;
	const char *colon;
	int err;

	if (why && why_size)
		why[0] = '\0';
	if (!name || !name[0])
		return fail(why, why_size, -EINVAL, "empty socket name");
	if (strncmp(name, VSOCK_PREFIX, strlen(VSOCK_PREFIX)) == 0)
		err = parse_vsock(name, &a, why, why_size);
	else if (name[0] == '@' || name[0] == '/')
		err = parse_unix(name, &a, why, why_size);
	else if ((colon = strrchr(name, ':')) && is_int_syntax(colon + 1))
		err = parse_inet(name, colon, &a, why, why_size);
	else
		err = parse_unix(name, &a, why, why_size);
	if (err)
		return err;
	*out = a;
	return 0;
}

int sock_addr_parse(const char *name, struct sock_addr *out)
{
	return sock_addr_parse_explain(name, out, NULL, 0);
}

static int format_unix(const struct sock_addr *a, char *buf, size_t size)
{
	const struct sockaddr_un *un = (const struct sockaddr_un *)&a->ss;
	size_t off = offsetof(struct sockaddr_un, sun_path), n;
	int len;

	if (a->len <= off) {
		len = snprintf(buf, size, "%s", "");
	} else if (un->sun_path[0] == '\0') {
		n = PFC_MIN((size_t)a->len - off - 1, sizeof(un->sun_path) - 1);
		len = snprintf(buf, size, "@%.*s", (int)n, un->sun_path + 1);
	} else {
		n = strnlen(un->sun_path, PFC_MIN((size_t)a->len - off, sizeof(un->sun_path)));
		len = snprintf(buf, size, "%.*s", (int)n, un->sun_path);
	}
	return len < 0 || (size_t)len >= size ? -ENAMETOOLONG : 0;
}

static int format_inet(const struct sock_addr *a, char *buf, size_t size)
{
	char host[NI_MAXHOST], serv[NI_MAXSERV];
	int len;

	if (getnameinfo((const struct sockaddr *)&a->ss, a->len, host, sizeof(host), serv,
			sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV))
		return -EINVAL;
	if (a->family == AF_INET6)
		len = snprintf(buf, size, "[%s]:%s", host, serv);
	else
		len = snprintf(buf, size, "%s:%s", host, serv);
	return len < 0 || (size_t)len >= size ? -ENAMETOOLONG : 0;
}

static int format_vsock(const struct sock_addr *a, char *buf, size_t size)
{
	const struct sockaddr_vm *vm = (const struct sockaddr_vm *)&a->ss;
	long long cid = vm->svm_cid == VMADDR_CID_ANY ? -1 : (long long)vm->svm_cid;
	long long port = vm->svm_port == VMADDR_PORT_ANY ? -1 : (long long)vm->svm_port;
	int len;

	len = snprintf(buf, size, VSOCK_PREFIX "%lld:%lld", cid, port);
	return len < 0 || (size_t)len >= size ? -ENAMETOOLONG : 0;
}

int sock_addr_format(const struct sock_addr *a, char *buf, size_t size)
{
	switch (a->family) {
	case AF_UNIX:
		return format_unix(a, buf, size);
	case AF_INET:
	case AF_INET6:
		return format_inet(a, buf, size);
	case AF_VSOCK:
		return format_vsock(a, buf, size);
	default:
		return -EAFNOSUPPORT;
	}
}

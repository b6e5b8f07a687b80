// SPDX-License-Identifier: Apache-2.0
/*
 * relay_identity.c - who this machine is, as traced_relay tells the host:
 * the machine id hint (boot id, or Perfetto's pseudo boot id), the machine
 * name, the SetPeerIdentity frame every relayed connection starts with, and
 * the SystemInfo sent with InitRelay. Computed once at start-up.
 */
#include "relay/relay_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "base/file.h"
#include "base/hash.h"
#include "base/version.h"

/* A bigger "boot id" file is not one; anything this size is refused. */
#define BOOT_ID_FILE_MAX_BYTES (RELAY_MACHINE_ID_HINT_MAX - 1)

uint64_t relay_boot_hash(const struct statx_timestamp *btime, const struct utsname *u)
{
	uint64_t h = FNV1A64_OFFSET_BASIS;

	h = fnv1a64_update(h, btime, sizeof(*btime));
	return fnv1a64_update(h, u, sizeof(*u));
}

int relay_pseudo_boot_id(const struct statx_timestamp *btime, const struct utsname *u, char *out,
			 size_t size)
{
	int n;

	/* Lower-case hex without leading zeros or prefix, as Perfetto's
	 * Uint64ToHexStringNoPrefix. */
	n = snprintf(out, size, "%" PRIx64, relay_boot_hash(btime, u));
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* Perfetto's fallback when there is no boot id: "" if either source fails. */
static int live_pseudo_boot_id(char *out, size_t size)
{
	struct statx stx;
	struct utsname u;

	memset(&stx, 0, sizeof(stx));
	memset(&u, 0, sizeof(u));
	if (statx(AT_FDCWD, "/dev", 0, STATX_BTIME, &stx) != 0 || uname(&u) != 0) {
		if (size == 0)
			return -ENAMETOOLONG;
		out[0] = '\0';
		return 0;
	}
	return relay_pseudo_boot_id(&stx.stx_btime, &u, out, size);
}

int relay_machine_id_hint(const char *boot_id_path, char *out, size_t size)
{
	struct buf b = BUF_INIT;
	int rc;

	rc = file_read_all(boot_id_path ? boot_id_path : RELAY_BOOT_ID_PATH, &b,
			   BOOT_ID_FILE_MAX_BYTES);
	if (rc < 0) {
		buf_fini(&b);
		return live_pseudo_boot_id(out, size);
	}
	/* Exactly one trailing newline goes, as Perfetto's StripSuffix. */
	if (b.len > 0 && b.data[b.len - 1] == '\n')
		b.len--;
	if (b.len >= size) {
		buf_fini(&b);
		return -ENAMETOOLONG;
	}
	if (b.len)
		memcpy(out, b.data, b.len);
	out[b.len] = '\0';
	buf_fini(&b);
	return 0;
}

int relay_machine_name(char *out, size_t size)
{
	const char *env = getenv("PERFETTO_MACHINE_NAME");
	struct utsname u;
	int n;

	if (!env) {
		memset(&u, 0, sizeof(u));
		env = uname(&u) == 0 ? u.sysname : "";
	}
	n = snprintf(out, size, "%s", env);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int relay_identity_init(struct relay_identity *id, const char *boot_id_path)
{
	struct relay_identity tmp;
	int rc;

	rc = relay_machine_id_hint(boot_id_path, tmp.machine_id_hint, sizeof(tmp.machine_id_hint));
	if (rc < 0)
		return rc;
	rc = relay_machine_name(tmp.machine_name, sizeof(tmp.machine_name));
	if (rc < 0)
		return rc;
	*id = tmp;
	return 0;
}

int relay_peer_identity_frame(int32_t pid, int32_t uid, const struct relay_identity *id,
			      struct buf *out)
{
	Perfetto__Protos__IPCFrame f = PERFETTO__PROTOS__IPCFRAME__INIT;
	Perfetto__Protos__IPCFrame__SetPeerIdentity spi =
		PERFETTO__PROTOS__IPCFRAME__SET_PEER_IDENTITY__INIT;

	/* request_id 0 is sent explicitly, as Perfetto's relay does. */
	f.has_request_id = true;
	f.request_id = 0;
	f.msg_case = PERFETTO__PROTOS__IPCFRAME__MSG_SET_PEER_IDENTITY;
	f.set_peer_identity = &spi;
	spi.has_pid = true;
	spi.pid = pid;
	spi.has_uid = true;
	spi.uid = uid;
	spi.machine_id_hint = (char *)id->machine_id_hint;
	spi.machine_name = (char *)id->machine_name;
	return ipc_frame_encode(&f, out);
}

void relay_system_info_init(struct relay_system_info *s, const char *machine_name)
{
	long page = sysconf(_SC_PAGESIZE), ncpu = sysconf(_SC_NPROCESSORS_CONF);
	time_t now = time(NULL);
	struct sysinfo sys;
	struct tm tm;

	memset(s, 0, sizeof(*s));
	perfetto__protos__system_info__init(&s->si);
	perfetto__protos__utsname__init(&s->un);
	s->si.tracing_service_version = (char *)PFC_VERSION_STRING;
	if (localtime_r(&now, &tm)) {
		s->si.has_timezone_off_mins = true;
		s->si.timezone_off_mins = (int32_t)(tm.tm_gmtoff / 60);
	}
	if (uname(&s->u) == 0) {
		s->un.sysname = s->u.sysname;
		s->un.version = s->u.version;
		s->un.release = s->u.release;
		s->un.machine = s->u.machine;
		s->si.utsname = &s->un;
	}
	if (page > 0) {
		s->si.has_page_size = true;
		s->si.page_size = (uint32_t)page;
	}
	if (ncpu > 0) {
		s->si.has_num_cpus = true;
		s->si.num_cpus = (uint32_t)ncpu;
	}
	if (sysinfo(&sys) == 0) {
		s->si.has_system_ram_bytes = true;
		s->si.system_ram_bytes = (uint64_t)sys.totalram * sys.mem_unit;
	}
	s->si.machine_name = (char *)machine_name;
}

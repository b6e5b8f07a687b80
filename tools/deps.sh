#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Checks that the Debian packages perfetto-c builds and tests with are
# installed. Called by the Makefile before the first compile.
#   deps.sh check-or-install  install what is missing when root on Debian,
#                             otherwise print the apt-get line and fail
#   deps.sh install           same, but always runs apt-get when missing
#   deps.sh list              print the package list
#   deps.sh e2e               also the packages of `make e2e-multi-machine`
#                             (QEMU, a Debian guest kernel, busybox, cpio)

# Build: compilers, protobuf-c (config/IPC structs), SQLite (trace processor),
# libedit (interactive shell), zlib (compressed traces), PCRE2 (the trace
# processor's regexp functions: Perl-style patterns, as upstream's RE2),
# zstd (its __intrinsic_zstd_compress, a zstd frame as upstream's).
# Tests: protoc (oracle for the text format), clang + its runtimes (warning
# check, libFuzzer).
# trace-cmd: bench only: peer for ftrace_bench (bench/ftrace_bench.sh).
# lttng-tools, liblttng-ust-dev: bench only: the LTTng-UST peer of sdk_bench
# (bench/sdk_bench.c; without them it skips that peer).
# libdw-dev (elfutils): traced_perf unwinds sampled user stacks with DWARF CFI,
# names frames from ELF symbols (MiniDebugInfo too) and reads build ids, all
# from one library (the one `perf record --call-graph dwarf` uses).
# python3, iproute2: integration tests (free ports, network namespaces).
# python3-dev: the Python module (python/perfetto_c, its C extension).
# linux-perf: bench only: `perf record`, the peer of bench/perf_bench.sh.
# help2man: the man pages `make install` writes from each program's --help.
# chromium, fonts-dejavu-core: tests only: tests/integration/tp_flamegraph.sh
# renders pfc_flamegraph's SVG in headless Chromium (its scripts run, its
# labels have a width in a known monospace font); without them that part
# of the test is skipped and says why.
PKGS="gcc make pkg-config libprotobuf-c-dev protobuf-c-compiler protobuf-compiler
libsqlite3-dev libedit-dev zlib1g-dev libpcre2-dev libzstd-dev clang libclang-rt-dev trace-cmd lttng-tools
liblttng-ust-dev python3 python3-dev iproute2 help2man chromium fonts-dejavu-core libdw-dev
linux-perf"
APT_FLAGS=""
# e2e: a second kernel under QEMU for the multi-machine test. INITRD=No:
# the guest boots from its own initramfs, Debian's is not needed.
if [ "$1" = e2e ]; then
	PKGS="$PKGS qemu-system-x86 busybox-static cpio xz-utils linux-image-amd64"
	export INITRD=No
	APT_FLAGS=--no-install-recommends
fi

missing=""
for p in $PKGS; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)
	case "$st" in
	*"install ok installed"*) ;;
	*) missing="$missing $p" ;;
	esac
done

case "$1" in
list)
	echo $PKGS
	exit 0
	;;
esac

[ -z "$missing" ] && exit 0

line="apt-get install -y$missing"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "perfetto-c: installing missing Debian packages:$missing"
	export DEBIAN_FRONTEND=noninteractive
	# A fresh machine has no package lists yet; update once before installing.
	apt-get update -qq || { echo "perfetto-c: apt-get update failed" >&2; exit 1; }
	# shellcheck disable=SC2086
	apt-get install -y -qq $APT_FLAGS $missing || {
		echo "perfetto-c: '$line' failed" >&2
		exit 1
	}
	exit 0
fi

echo "perfetto-c: missing Debian packages:$missing" >&2
echo "perfetto-c: as root, run:  $line" >&2
exit 1

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# deps.sh - the Debian packages perfetto-c needs, in groups, so each make
# target installs what it uses and no more (`make demo` does not bring the
# test suite's peers). The Makefile calls it before the first compile with
# the groups of the goals it was given.
#   deps.sh check-or-install GROUP...  as root on Debian, install what is
#                             missing (one line per group says what and
#                             why); otherwise print the apt-get line. A
#                             missing package of build, demo, install or e2e
#                             fails; of test, bench or upstream it is only
#                             reported (those tests skip and say why).
#   deps.sh install GROUP...  the same
#   deps.sh list [GROUP...]   print the packages (every group but e2e when
#                             none is named)
#   deps.sh groups            print each group with why it is needed
#   deps.sh e2e               the packages of `make e2e-multi-machine`
# With no GROUP: build. `test` also brings `upstream` when Perfetto's own
# binaries are beside the repository (../shared/upstream).
#
# To add a package: put it in the group of the make target that needs it
# (a new part of tools/demo.sh: the demo group) and say why in that
# group's line below.

# group_pkgs GROUP: the packages of GROUP.
group_pkgs() {
	case $1 in
	# gcc's binutils give ar and objcopy (the SDK's .a); libc6-dev is only
	# a Recommends of gcc and the build installs without Recommends.
	build) echo gcc libc6-dev binutils make pkg-config libprotobuf-c-dev protobuf-c-compiler \
		libsqlite3-dev libedit-dev zlib1g-dev libpcre2-dev libzstd-dev libdw-dev python3 \
		python3-dev ;;
	# tools/demo.sh runs our programs and: timeout, mktemp (coreutils),
	# flock, mount (util-linux: tracefs and its lock), grep, sed.
	demo) echo coreutils util-linux grep sed ;;
	install) echo help2man ;;
	test) echo protobuf-compiler clang libclang-rt-dev iproute2 procps chromium fonts-dejavu-core \
		sqlite3 xz-utils man-db systemd nodejs curl python3-pandas python3-distributed ;;
	bench) echo trace-cmd linux-perf lttng-tools liblttng-ust-dev heaptrack libjemalloc2 ;;
	upstream) echo libprotobuf32 libre2-9 libexpat1 libzstd1 zlib1g ;;
	e2e) echo qemu-system-x86 busybox-static cpio xz-utils linux-image-amd64 ;;
	*)
		echo "deps.sh: no package group '$1' (build demo install test bench upstream e2e)" >&2
		return 1
		;;
	esac
}

# group_why GROUP: one line, what the group is for.
group_why() {
	case $1 in
	build) echo "to compile perfetto-c: C compiler, protobuf-c (configs, IPC), SQLite (trace processor), libedit (its shell), zlib, PCRE2 (the trace processor's regexp functions, Perl-style patterns as upstream's RE2), zstd (its __intrinsic_zstd_compress), elfutils (the CPU profiler's unwinding), python3-dev (the perfetto_c module)" ;;
	demo) echo "what tools/demo.sh runs beside our programs (timeout, flock, mount for tracefs)" ;;
	install) echo "make install: man pages made from each program's --help" ;;
	test) echo "make test: protoc (oracle of the text format), clang (second compiler, fuzzers), ip (network namespaces), chromium + a font (renders flame graphs; with nodejs and curl drives Perfetto's UI over --httpd), sqlite3, xz, man, systemd-analyze, pandas (perfetto_c.TraceProcessor's data frames), Dask distributed (BatchTraceProcessor and pfc_batch_query --dask on a local cluster)" ;;
	bench) echo "the peers measured beside ours: trace-cmd, perf record, LTTng-UST, heaptrack and jemalloc's heap profiling" ;;
	upstream) echo "runtime libraries of Perfetto's own binaries in ../shared/upstream, which the tests run beside ours" ;;
	e2e) echo "make e2e-multi-machine: QEMU, a Debian guest kernel, busybox, cpio" ;;
	esac
}

# A group whose absence fails the build (the others make tests skip).
required() {
	case $1 in build | demo | install | e2e) return 0 ;; esac
	return 1
}

# Perfetto's binaries: ../shared/upstream beside the repository, or beside
# the main checkout when this is a git worktree.
have_upstream() {
	root=$(cd "$(dirname "$0")/.." && pwd)
	shared=$root/../shared
	if [ ! -d "$shared" ] && common=$(git -C "$root" rev-parse --git-common-dir 2>/dev/null); then
		case $common in /*) ;; *) common=$root/$common ;; esac
		shared=$common/../../shared
	fi
	[ -d "$shared/upstream/bin" ]
}

installed() {
	case "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" in
	*"install ok installed"*) return 0 ;;
	esac
	return 1
}

verb=${1:-check-or-install}
[ $# -gt 0 ] && shift
case $verb in
e2e) verb=check-or-install && set -- e2e ;;
list | groups)
	[ $# -eq 0 ] && set -- build demo install test bench upstream
	;;
check-or-install | install) ;;
*)
	echo "usage: deps.sh check-or-install|install|list|groups [GROUP...] (or: deps.sh e2e)" >&2
	exit 2
	;;
esac
[ $# -eq 0 ] && set -- build

# test brings upstream when Perfetto's binaries are here.
groups=""
for g in "$@"; do
	group_pkgs "$g" >/dev/null || exit 2
	case " $groups " in *" $g "*) continue ;; esac
	groups="$groups $g"
	if [ "$g" = test ] && [ "$verb" != list ] && [ "$verb" != groups ] && have_upstream; then
		case " $* " in *" upstream "*) ;; *) groups="$groups upstream" ;; esac
	fi
done

case $verb in
list)
	for g in $groups; do group_pkgs "$g"; done | tr ' ' '\n' | awk 'NF && !seen[$0]++' | tr '\n' ' '
	echo
	exit 0
	;;
groups)
	for g in $groups; do
		printf '%-9s %s\n' "$g:" "$(group_why "$g")"
		printf '          %s\n' "$(group_pkgs "$g")"
	done
	exit 0
	;;
esac

# What is missing, per group (a package shared by two groups is counted
# once, in the first).
all_missing="" lines="" fatal=0
for g in $groups; do
	m=""
	for p in $(group_pkgs "$g"); do
		case " $all_missing " in *" $p "*) continue ;; esac
		installed "$p" || m="$m $p"
	done
	[ -z "$m" ] && continue
	all_missing="$all_missing$m"
	lines="$lines  $g:$m  ($(group_why "$g"))
"
	required "$g" && fatal=1
done
[ -z "$all_missing" ] && exit 0

# e2e's guest kernel needs no initramfs (it boots from its own), and no
# group needs what its packages only recommend.
export INITRD=No
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "perfetto-c: installing Debian packages (apt-get install --no-install-recommends):"
	printf '%s' "$lines"
	export DEBIAN_FRONTEND=noninteractive
	# Another apt (unattended-upgrades, a second build's deps) may hold
	# dpkg's lock: wait for it up to 10 min rather than fail.
	lock="-o DPkg::Lock::Timeout=600"
	# A fresh machine has no package lists yet; update once before installing.
	# shellcheck disable=SC2086 # $lock is two words
	apt-get $lock update -qq || {
		echo "perfetto-c: apt-get update failed" >&2
		exit 1
	}
	# shellcheck disable=SC2086 # a list of package names
	apt-get $lock install -y -qq --no-install-recommends $all_missing >/dev/null || {
		echo "perfetto-c: 'apt-get install -y --no-install-recommends$all_missing' failed" >&2
		exit 1
	}
	echo "perfetto-c: installed$all_missing"
	exit 0
fi

echo "perfetto-c: missing Debian packages:" >&2
printf '%s' "$lines" >&2
echo "perfetto-c: as root, run:  apt-get install --no-install-recommends$all_missing" >&2
if [ $fatal = 1 ]; then
	exit 1
fi
echo "perfetto-c: going on without them (the tests that need them skip and say why)" >&2
exit 0

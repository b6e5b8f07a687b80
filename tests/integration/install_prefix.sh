#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# install_prefix.sh - `make install` to a prefix of the user's choosing:
#   direct     PREFIX=<tmp>/opt/pfc: the installed perfetto-c.pc names that
#              prefix; a C program built with `pkg-config --cflags --libs
#              perfetto-c` (shared library, and static with --static) runs
#              and writes a trace that the installed trace_processor_shell
#              reads; the installed Python module imports from the prefix;
#              the systemd units and /etc files name the prefix's bin and
#              the chosen SYSCONFDIR; no installed text file names
#              /usr/local; heapprofd's installed preload library starts
#              the installed heapprofd; neither ldconfig nor systemctl runs
#   staged     DESTDIR=<tmp>/stage PREFIX=/opt/pfc-staged: files name the
#              final prefix, never the staging folder
#   uninstall  make uninstall removes what install wrote (not the /etc files)
#   tree       $OUT/perfetto-c-uninstalled.pc builds against the build tree
# Nothing outside a temporary folder is written: SYSCONFDIR is moved into
# it, and ldconfig and systemctl are stand-ins that record being called.
# Usage: OUT=out sh tests/integration/install_prefix.sh
. "$(dirname "$0")/lib.sh"

T=install_prefix
ROOT=$(repo_root)
OUT=${OUT:-out}
case $OUT in /*) ;; *) OUT=$ROOT/$OUT ;; esac

for f in "$OUT/lib/libperfetto-c.so" "$OUT/lib/libperfetto-c.a" "$OUT/trace_processor_shell" \
	"$OUT/perfetto-c-uninstalled.pc" "$OUT/.flags"; do
	if [ ! -e "$f" ]; then
		skip $T/all "$f is not built (make)"
		summary
		exit 0
	fi
done
for c in help2man pkg-config python3; do
	if ! command -v $c >/dev/null 2>&1; then
		skip $T/all "no $c (make deps-test installs it)"
		summary
		exit 0
	fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pfc-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/opt/pfc
etc=$tmp/etc

# ldconfig and systemctl stand-ins, first in PATH: a call is recorded
# (ldconfig -N, which only lists the loader's folders, runs the real one).
mkdir -p "$tmp/shim"
real_ldconfig=$(command -v ldconfig || echo /sbin/ldconfig)
cat >"$tmp/shim/ldconfig" <<EOF
#!/bin/sh
case " \$* " in *" -N "*) exec "$real_ldconfig" "\$@" ;; esac
echo "ldconfig \$*" >>"$tmp/calls"
EOF
printf '#!/bin/sh\necho "systemctl $*" >>"%s/calls"\n' "$tmp" >"$tmp/shim/systemctl"
chmod +x "$tmp/shim/ldconfig" "$tmp/shim/systemctl"
: >"$tmp/calls"
SHIM_PATH="$tmp/shim:$PATH:/sbin:/usr/sbin"

# The compiler and flags $OUT was built with (its .flags: the compiler
# first, O as the build spelled it in -I<O>/gen, -fsanitize for `make
# asan`), so installing rebuilds nothing.
cc=$(cut -d' ' -f1 "$OUT/.flags")
o=$(sed -n 's|.* -I\([^ ]*\)/gen .*|\1|p' "$OUT/.flags")
san=""
grep -q -- -fsanitize "$OUT/.flags" && san="SANITIZE=1 OPT=-O1"
san_flags=$(tr ' ' '\n' <"$OUT/.flags" | grep -E '^-f(no-)?sanitize' | sort -u | tr '\n' ' ')
mk() {
	# shellcheck disable=SC2086 # san is a list of words
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL PATH="$SHIM_PATH" \
		make -s -C "$ROOT" O="${o:-$OUT}" CC="$cc" $san "$@"
}

# A program of the SDK's users: one slice per argument, into the trace file
# named first (the in-process backend: no traced needed).
cat >"$tmp/app.c" <<'EOF'
#include <perfetto-c/pfc.h>
#include <stdio.h>
#include <string.h>

static PFC_CATEGORY(install);

int main(int argc, char **argv)
{
	int rc;

	if (argc < 2)
		return 2;
	pfc_category_register(&install, "install", "the install test", NULL, 0);
	rc = pfc_set_in_process_output(argv[1], NULL, 0);
	if (rc == 0)
		rc = pfc_init(PFC_BACKEND_IN_PROCESS, "install_app");
	if (rc != 0) {
		fprintf(stderr, "app: %s\n", strerror(-rc));
		return 1;
	}
	for (int i = 2; i < argc; i++) {
		PFC_SLICE_BEGIN(install, argv[i]);
		PFC_SLICE_END(install);
	}
	pfc_shutdown();
	return 0;
}
EOF

# slices TP TRACE NAME: how many slices named NAME the trace holds.
slices() {
	"$1" -Q "SELECT COUNT(*) AS n FROM slice WHERE name = '$3'" "$2" 2>"$tmp/tp.err" |
		sed -n 2p | tr -d '"'
}

# build_run NAME PC_DIR LIBDIR [static]: builds app.c with pkg-config from
# PC_DIR, runs it with LIBDIR for the loader, checks its trace with the
# installed trace_processor_shell.
build_run() {
	local _n _pc _lib _flags _libs
	_n=$1 _pc=$2 _lib=$3
	_flags=$(PKG_CONFIG_PATH=$_pc pkg-config --cflags perfetto-c)
	if [ "${4:-}" = static ]; then
		# The archive, and the libraries it needs (Libs.private).
		_libs=$(PKG_CONFIG_PATH=$_pc pkg-config --static --libs perfetto-c |
			sed 's/-lperfetto-c/-Wl,-Bstatic -lperfetto-c -Wl,-Bdynamic/')
	else
		_libs=$(PKG_CONFIG_PATH=$_pc pkg-config --libs perfetto-c)
	fi
	# shellcheck disable=SC2086 # flag lists
	if ! "$cc" -std=c11 $san_flags $_flags -o "$tmp/$_n" "$tmp/app.c" $_libs -pthread \
		>"$tmp/$_n.cc.log" 2>&1; then
		fail $T/$_n "does not build with pkg-config: $(head -n 3 "$tmp/$_n.cc.log" | tr '\n' ' ')"
		return
	fi
	if [ "${4:-}" = static ] && ldd "$tmp/$_n" | grep -q libperfetto-c; then
		fail $T/$_n "linked with --static, it still loads $(ldd "$tmp/$_n" | grep libperfetto-c)"
		return
	fi
	if [ "${4:-}" != static ] &&
		! LD_LIBRARY_PATH=$_lib ldd "$tmp/$_n" | grep -q "libperfetto-c.so.0 => $_lib/"; then
		fail $T/$_n "does not load the SDK from $_lib: $(LD_LIBRARY_PATH=$_lib ldd "$tmp/$_n" | grep perfetto)"
		return
	fi
	if ! LD_LIBRARY_PATH=$_lib ASAN_OPTIONS=detect_leaks=0 "$tmp/$_n" "$tmp/$_n.pftrace" \
		step_a step_b step_a >"$tmp/$_n.log" 2>&1; then
		fail $T/$_n "the program failed: $(head -n 3 "$tmp/$_n.log" | tr '\n' ' ')"
		return
	fi
	n=$(slices "$prefix/bin/trace_processor_shell" "$tmp/$_n.pftrace" step_a)
	if [ "$n" = 2 ]; then
		pass $T/$_n
	else
		fail $T/$_n "its trace holds $n slices 'step_a' (want 2): $(head -n 2 "$tmp/tp.err" | tr '\n' ' ')"
	fi
}

# -- direct -------------------------------------------------------------------
if ! mk install PREFIX="$prefix" SYSCONFDIR="$etc" >"$tmp/install.log" 2>&1; then
	fail $T/install "make install PREFIX=$prefix failed: $(tail -n 3 "$tmp/install.log" | tr '\n' ' ')"
	summary
	exit 1
fi
pass $T/install

pc=$prefix/lib/pkgconfig
got=$(PKG_CONFIG_PATH=$pc pkg-config --variable=prefix perfetto-c 2>&1)
cf=$(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs perfetto-c 2>&1 | sed "s/ *$//")
if [ "$got" = "$prefix" ] && [ "$cf" = "-I$prefix/include -L$prefix/lib -lperfetto-c" ]; then
	pass $T/pc_names_prefix
else
	fail $T/pc_names_prefix "prefix '$got', cflags and libs '$cf'"
fi

build_run shared "$pc" "$prefix/lib"
build_run static "$pc" "$prefix/lib" static

if v=$("$prefix/bin/trace_processor_shell" --version 2>&1) && [ -n "$v" ]; then
	pass $T/installed_binary
else
	fail $T/installed_binary "$prefix/bin/trace_processor_shell --version: $v"
fi

site=$(ls -d "$prefix"/lib/python3*/dist-packages 2>/dev/null | head -n 1)
mod=$(ls "$site"/perfetto_c/_pfc*.so 2>/dev/null | head -n 1)
py_env=""
asan_rt=$(ldd "$mod" 2>/dev/null | awk '/libasan/ {print $3; exit}')
[ -n "$asan_rt" ] && py_env="LD_PRELOAD=$asan_rt ASAN_OPTIONS=detect_leaks=0"
if [ -z "$mod" ]; then
	fail $T/python "no perfetto_c module under $prefix/lib/python3*/dist-packages"
else
	# shellcheck disable=SC2086 # py_env is a list of assignments
	got=$(cd "$tmp" && env $py_env PYTHONPATH="$site" python3 -c \
		'import perfetto_c, perfetto_c._pfc as m; print(perfetto_c.__file__); print(m.__file__)' 2>&1)
	if [ "$(echo "$got" | grep -c "^$site/perfetto_c/")" = 2 ]; then
		pass $T/python
	else
		fail $T/python "imported from: $(echo "$got" | tr '\n' ' ')"
	fi
fi

# heapprofd's preload library starts a private heapprofd from its own
# folder's ../bin: the installed one, with no heapprofd in PATH.
cat >"$tmp/hp_find.py" <<'EOF'
import os, sys, time
want, me = sys.argv[1], str(os.getpid()).encode()
end = time.monotonic() + 10
while time.monotonic() < end:
    for p in filter(str.isdigit, os.listdir("/proc")):
        try:
            exe = os.readlink("/proc/%s/exe" % p)
            cmd = open("/proc/%s/cmdline" % p, "rb").read().split(b"\0")
        except OSError:
            continue
        if b"--exclusive-for-pid=" + me in cmd:
            print(exe)
            sys.exit(0 if exe == want else 1)
    time.sleep(0.05)
print("no private heapprofd started")
sys.exit(1)
EOF
if [ ! -f "$prefix/lib/libheapprofd_glibc_preload.so" ]; then
	fail $T/heapprofd_preload "no $prefix/lib/libheapprofd_glibc_preload.so"
elif got=$(cd "$tmp" && env -i PATH=/usr/bin:/bin LD_PRELOAD="$prefix/lib/libheapprofd_glibc_preload.so" \
	PERFETTO_HEAPPROFD_BLOCKING_INIT=1 python3 "$tmp/hp_find.py" "$prefix/bin/heapprofd" 2>&1); then
	pass $T/heapprofd_preload
else
	fail $T/heapprofd_preload "a program run with the installed library started: $(echo "$got" | tail -n 1)"
fi

units=$prefix/lib/systemd/system
if [ -f "$units/traced.service" ] && ! grep -q '@[A-Z]*@' "$units"/*.service "$etc"/perfetto-c/* &&
	grep -q "^ExecStart=$prefix/bin/traced\( \|$\)" "$units/traced.service" &&
	grep -q "^ExecStart=$prefix/bin/perfetto " "$units/perfetto-recorder.service" &&
	grep -q "^EnvironmentFile=$etc/perfetto-c/traced-relay.env" "$units/traced-relay.service" &&
	! grep -h '^Exec' "$units"/*.service | grep -v "=$prefix/bin/\|=/bin/mkdir" | grep -q .; then
	pass $T/units_name_prefix
else
	fail $T/units_name_prefix "$(grep -h '@[A-Z]*@\|^Exec' "$units"/*.service 2>&1 | head -n 3 | tr '\n' ' ')"
fi

if [ -f "$prefix/share/perfetto-c/configs/ai_training.pbtxt" ] &&
	"$prefix/bin/pfc_pbtxt" check "$prefix"/share/perfetto-c/configs/*.pbtxt >"$tmp/check.log" 2>&1; then
	pass $T/configs
else
	fail $T/configs "$(head -n 2 "$tmp/check.log" 2>/dev/null | tr '\n' ' ')"
fi

# Every text file installed: none names the default prefix.
baked=$(grep -rIl /usr/local "$prefix" "$etc" 2>/dev/null | sed "s|^$tmp/||" | head -n 3)
if [ -z "$baked" ]; then
	pass $T/no_usr_local
else
	fail $T/no_usr_local "these name /usr/local: $(echo "$baked" | tr '\n' ' ')"
fi

# -- tree: the build's own .pc, no install ------------------------------------
build_run tree "$OUT" "$OUT/lib"

# -- staged -------------------------------------------------------------------
stage=$tmp/stage
final=/opt/pfc-staged
if ! mk install DESTDIR="$stage" PREFIX="$final" >"$tmp/stage.log" 2>&1; then
	fail $T/staged "make install DESTDIR=$stage failed: $(tail -n 3 "$tmp/stage.log" | tr '\n' ' ')"
else
	got=$(PKG_CONFIG_PATH=$stage$final/lib/pkgconfig pkg-config --variable=prefix perfetto-c 2>&1)
	leaked=$(grep -rIl "$stage" "$stage" 2>/dev/null | sed "s|^$stage||" | head -n 3)
	if [ "$got" != "$final" ]; then
		fail $T/staged "the staged .pc names '$got' (want $final)"
	elif [ -n "$leaked" ]; then
		fail $T/staged "these name the staging folder: $(echo "$leaked" | tr '\n' ' ')"
	elif ! grep -q "^ExecStart=$final/bin/traced\( \|$\)" "$stage$final/lib/systemd/system/traced.service" ||
		! grep -q "^EnvironmentFile=-/etc/perfetto-c/traced.env" "$stage$final/lib/systemd/system/traced.service" ||
		[ ! -f "$stage/etc/perfetto-c/traced.env" ]; then
		fail $T/staged "the staged units: $(grep -h '^Exec\|^Env' "$stage$final/lib/systemd/system/traced.service" | tr '\n' ' ')"
	else
		pass $T/staged
	fi
fi

# -- uninstall ----------------------------------------------------------------
if ! mk uninstall PREFIX="$prefix" SYSCONFDIR="$etc" >"$tmp/uninstall.log" 2>&1; then
	fail $T/uninstall "make uninstall failed: $(tail -n 3 "$tmp/uninstall.log" | tr '\n' ' ')"
else
	left=$(find "$prefix" ! -type d 2>/dev/null | sed "s|^$prefix/||" | head -n 5)
	if [ -n "$left" ]; then
		fail $T/uninstall "left behind: $(echo "$left" | tr '\n' ' ')"
	elif [ ! -f "$etc/perfetto-c/traced.env" ]; then
		fail $T/uninstall "removed the admin's $etc/perfetto-c/traced.env"
	else
		pass $T/uninstall
	fi
fi

# -- the system was left alone --------------------------------------------------
if [ -s "$tmp/calls" ]; then
	fail $T/no_ldconfig_systemctl "for a prefix of its own: $(tr '\n' ' ' <"$tmp/calls")"
else
	pass $T/no_ldconfig_systemctl
fi
# ... and the same step does call ldconfig for a folder the loader searches.
: >"$tmp/calls"
PATH=$SHIM_PATH sh "$ROOT/tools/install_refresh.sh" /usr/local/lib "$tmp/none"
if grep -q '^ldconfig' "$tmp/calls"; then
	pass $T/ldconfig_for_usr_local
else
	fail $T/ldconfig_for_usr_local "install_refresh.sh /usr/local/lib did not run ldconfig"
fi

summary

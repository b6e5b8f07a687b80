#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# install_refresh.sh LIBDIR UNIT_DIR - after `make install` or `make
# uninstall` without DESTDIR: tells the system about the change only where
# it looks. ldconfig when LIBDIR is a folder the dynamic loader searches
# (/usr/lib, /usr/local/lib, ...); `systemctl daemon-reload` when systemd
# runs and UNIT_DIR is among its unit folders. A prefix of its own
# (/opt/pfc, a test's temporary one) touches neither: its programs and
# units are used by path (LD_LIBRARY_PATH=LIBDIR for programs linked with
# the SDK's shared library).
libdir=$1
unitdir=$2

real() { readlink -f "$1" 2>/dev/null || echo "$1"; }

# The folders ld.so searches, as ldconfig reads them (-N -X: it only
# lists, without writing its cache or links).
want=$(real "$libdir")
searched=0
for d in $(ldconfig -N -X -v 2>/dev/null | sed -n 's|^\(/[^:]*\):.*|\1|p') /lib /usr/lib; do
	[ "$(real "$d")" = "$want" ] && searched=1 && break
done
if [ $searched = 1 ]; then
	ldconfig || echo "install: ldconfig failed (as root: ldconfig)" >&2
fi

if [ -d /run/systemd/system ] && command -v systemd-analyze >/dev/null 2>&1 &&
	systemd-analyze unit-paths 2>/dev/null | grep -qFx -e "$unitdir" -e "$(real "$unitdir")"; then
	systemctl daemon-reload || echo "install: systemctl daemon-reload failed" >&2
fi
exit 0

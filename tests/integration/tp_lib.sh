# SPDX-License-Identifier: Apache-2.0
# tp_lib.sh - shared setup of the trace processor's integration tests
# (source it with `.` after lib.sh, then call tp_setup SUITE): sets ROOT,
# OUT (absolute), TP (trace_processor_shell), PBTXT (pfc_pbtxt) and a
# scratch directory $tmp removed at exit, and stops with a failure when a
# binary is not built.

case $0 in
*/tp_lib.sh | tp_lib.sh)
	echo "0 passed, 0 failed, 0 skipped"
	exit 0
	;;
esac

tp_setup() {
	ROOT=$(repo_root)
	cd "$ROOT" || exit 1
	OUT=${OUT:-out}
	case $OUT in /*) ;; *) OUT="$ROOT/$OUT" ;; esac
	TP="$OUT/trace_processor_shell"
	PBTXT="$OUT/pfc_pbtxt"
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	for b in "$TP" "$PBTXT"; do
		if [ ! -x "$b" ]; then
			fail "$1/binaries" "$b not built (make $b)"
			summary
			exit 1
		fi
	done
}

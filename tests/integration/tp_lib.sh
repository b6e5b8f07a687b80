# SPDX-License-Identifier: Apache-2.0
# tp_lib.sh - shared setup of the trace processor's integration tests
# (source it with `.` after lib.sh, then call tp_setup SUITE): sets ROOT,
# OUT (absolute), TP (trace_processor_shell), PBTXT (pfc_pbtxt) and a
# scratch directory $tmp removed at exit, and stops with a failure when a
# binary is not built. tp_encode and expect below turn textproto traces
# into binaries and check queries on them.

case $0 in
*/tp_lib.sh | tp_lib.sh)
	echo "0 passed, 0 failed, 0 skipped"
	exit 0
	;;
esac

tp_setup() {
	TP_SUITE=$1
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

# tp_encode NAME...: encodes $DATA/NAME.textproto into $tmp/NAME.pb for
# each NAME; a trace that does not encode fails the suite and stops it.
tp_encode() {
	for _t in "$@"; do
		if ! "$PBTXT" --type Trace encode "$DATA/$_t.textproto" >"$tmp/$_t.pb" 2>"$tmp/$_t.err"; then
			fail "$TP_SUITE/encode_$_t" "pfc_pbtxt cannot encode: $(head -n 1 "$tmp/$_t.err")"
			summary
			exit 1
		fi
	done
}

# expect NAME TRACE SQL EXPECTED: the query's CSV output on $tmp/TRACE.pb
# (header dropped, lines joined by ';') must equal EXPECTED. $FLAGS, if
# set, are more arguments for trace_processor_shell.
expect() {
	_n=$1
	_trace=$2
	_sql=$3
	_want=$4
	# shellcheck disable=SC2086 # FLAGS is a list of words
	if ! timeout 60 "$TP" ${FLAGS:-} -Q "$_sql" "$tmp/$_trace.pb" >"$tmp/out" 2>"$tmp/err"; then
		fail "$TP_SUITE/$_n" "exit $?: $(head -n 1 "$tmp/err")"
		return
	fi
	_got=$(sed 1d "$tmp/out" | tr '\n' ';' | sed 's/;$//')
	if [ "$_got" = "$_want" ]; then
		pass "$TP_SUITE/$_n"
	else
		fail "$TP_SUITE/$_n" "got '$_got', want '$_want'"
	fi
}

# oneline FILE: the start of FILE on one line, for messages.
oneline() {
	tr '\n' '|' <"$1" | head -c 400
}

# run NAME ARGS...: runs trace_processor_shell with ARGS and stdin from
# /dev/null; leaves $tmp/NAME.out, $tmp/NAME.err and the exit status in $rc.
run() {
	_n=$1
	shift
	timeout 60 "$TP" "$@" </dev/null >"$tmp/$_n.out" 2>"$tmp/$_n.err"
	rc=$?
}

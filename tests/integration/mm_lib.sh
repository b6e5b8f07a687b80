# SPDX-License-Identifier: Apache-2.0
# mm_lib.sh - "machines" on one kernel for the multi-machine tests: a host
# network namespace and guest namespaces joined to it by veth pairs, each
# guest with its own boot id (a private mount namespace bind-mounts a file
# over /proc/sys/kernel/random/boot_id) and, optionally, its own clocks (a
# time namespace shifting BOOTTIME and MONOTONIC by a known offset). Every
# address lives in a namespace the test made (10.252.N.1 host side,
# 10.252.N.2 guest N); nothing listens in the machine's own namespace.
# Source it after lib.sh and svc_lib.sh:
#   mm_require SUITE        skip SUITE (and exit) without root, ip or unshare
#   mm_setup                make the host namespace; mm_guest N makes guest N
#   mm_host CMD...          run CMD in the host namespace (exec, same pid)
#   mm_guest_bg NAME N CMD  svc_bg NAME, running CMD as guest N (namespace,
#                           boot id, clocks)
# MM_GUEST_TIME_OFFSET_S (seconds) set before mm_guest N gives guest N
# clocks that read that much later than the host's.
# Namespaces and their processes are removed at exit.

case $0 in
*/mm_lib.sh | mm_lib.sh)
	echo "0 passed, 0 failed, 0 skipped"
	exit 0
	;;
esac

MM_ID=$$
MM_HOST=pfcmh$MM_ID
MM_GUESTS=""

mm_require() {
	if [ "$(id -u)" != 0 ]; then
		skip "$1/all" "needs root (network, mount and time namespaces)"
		summary
		exit 0
	fi
	for _t in ip unshare python3; do
		if ! command -v $_t >/dev/null 2>&1; then
			skip "$1/all" "$_t is not installed"
			summary
			exit 0
		fi
	done
	if [ ! -e /proc/self/ns/time ]; then
		skip "$1/all" "the kernel has no time namespaces (CONFIG_TIME_NS)"
		summary
		exit 0
	fi
}

# Kills what runs in a namespace, then removes it.
_mm_del_ns() {
	ip netns pids "$1" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
	ip netns del "$1" 2>/dev/null
}

mm_cleanup() {
	for _g in $MM_GUESTS; do
		_mm_del_ns "pfcmg${_g}_$MM_ID"
	done
	_mm_del_ns "$MM_HOST"
}

mm_setup() {
	ip netns add "$MM_HOST" || return 1
	ip -n "$MM_HOST" link set lo up
	# Runs before svc_lib's cleanup removes the temp dir.
	trap 'svc_cleanup; mm_cleanup' EXIT
}

# mm_guest N: guest namespace N, a veth to the host, boot id, clock offset.
mm_guest() {
	local _g _h _n
	_n=$1
	_g=pfcmg${_n}_$MM_ID
	_h=pm${MM_ID}h$_n
	ip netns add "$_g" || return 1
	MM_GUESTS="$MM_GUESTS $_n"
	ip link add "$_h" netns "$MM_HOST" type veth peer name "pm${MM_ID}g$_n" netns "$_g" || return 1
	ip -n "$MM_HOST" addr add "10.252.$_n.1/24" dev "$_h"
	ip -n "$MM_HOST" link set "$_h" up
	ip -n "$_g" addr add "10.252.$_n.2/24" dev "pm${MM_ID}g$_n"
	ip -n "$_g" link set "pm${MM_ID}g$_n" up
	ip -n "$_g" link set lo up
	python3 -c 'import uuid; print(uuid.uuid4())' >"$SVC_TMP/guest$_n.boot_id"
	echo "${MM_GUEST_TIME_OFFSET_S:-0}" >"$SVC_TMP/guest$_n.time_offset"
}

# mm_host_ip N / mm_guest_ip N: the two ends of guest N's link.
mm_host_ip() {
	echo "10.252.$1.1"
}

mm_guest_ip() {
	echo "10.252.$1.2"
}

mm_guest_boot_id() {
	cat "$SVC_TMP/guest$1.boot_id"
}

mm_host() {
	ip netns exec "$MM_HOST" "$@"
}

# mm_guest_bg NAME N CMD...: svc_bg NAME, running CMD as guest N: in its
# network namespace, with its boot id and clocks (the same pid throughout,
# every step execs the next).
mm_guest_bg() {
	local _name _n _off
	_name=$1
	_n=$2
	shift 2
	_off=$(cat "$SVC_TMP/guest$_n.time_offset")
	if [ "$_off" != 0 ]; then
		svc_bg "$_name" ip netns exec "pfcmg${_n}_$MM_ID" unshare -m --time \
			--boottime "$_off" --monotonic "$_off" sh -c \
			'mount --bind "$0" /proc/sys/kernel/random/boot_id && exec "$@"' \
			"$SVC_TMP/guest$_n.boot_id" "$@"
	else
		svc_bg "$_name" ip netns exec "pfcmg${_n}_$MM_ID" unshare -m sh -c \
			'mount --bind "$0" /proc/sys/kernel/random/boot_id && exec "$@"' \
			"$SVC_TMP/guest$_n.boot_id" "$@"
	fi
}

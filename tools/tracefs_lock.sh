# SPDX-License-Identifier: Apache-2.0
# tracefs_lock.sh - one tracefs user at a time (source it with `.`).
# The kernel's tracefs has one set of enabled events and one ring buffer,
# so every test or bench script that records with ftrace or reads the
# kernel's ring buffer calls tracefs_lock before it starts: two runs on one
# machine (two worktrees, CI beside a developer) then take turns instead of
# spoiling each other's traces. It waits as long as the other holder runs
# (a condition, not a deadline). The lock is held by a small process of its
# own that ends when the calling script's process does, so no daemon the
# script starts inherits it (a daemon left behind cannot hold it forever).

PFC_TRACEFS_LOCK=${PFC_TRACEFS_LOCK:-/run/lock/perfetto-c-tracefs.lock}

tracefs_lock() {
	[ -n "${PFC_TRACEFS_LOCKED:-}" ] && return 0
	command -v flock >/dev/null 2>&1 || return 0
	command -v mkfifo >/dev/null 2>&1 || return 0
	mkdir -p "$(dirname "$PFC_TRACEFS_LOCK")" 2>/dev/null
	if ! flock -n "$PFC_TRACEFS_LOCK" true 2>/dev/null; then
		echo "# waiting for another tracefs user ($PFC_TRACEFS_LOCK)"
	fi
	_tl_fifo=$(mktemp -u "${TMPDIR:-/tmp}/pfc-tracefs-lock.XXXXXX")
	mkfifo -m 600 "$_tl_fifo" || return 0
	# The holder: takes the lock, says so through the fifo, then lives as
	# long as this script ($$, also in subshells) does. Started from a
	# subshell that exits at once, so it is not this script's child: a
	# script's `wait` (for its daemons) must not wait for it.
	# It opens the fifo read-write, which never blocks: a script killed
	# while it waited for the lock has no reader left, and the holder must
	# not hang on the open holding the lock for ever (tail then ends at once).
	(flock "$PFC_TRACEFS_LOCK" sh -c 'exec 3<>"$1"; echo held >&3; exec tail -s 0.2 --pid="$2" -f /dev/null' \
		sh "$_tl_fifo" $$ </dev/null >/dev/null 2>&1 &)
	read -r _tl_ok <"$_tl_fifo"
	rm -f "$_tl_fifo"
	PFC_TRACEFS_LOCKED=$$
	export PFC_TRACEFS_LOCKED
}

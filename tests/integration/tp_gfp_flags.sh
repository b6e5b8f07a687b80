#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_gfp_flags.sh - to_ftrace() prints gfp_flags by flag names
# (sql/funcs/gfp_flags.c): GFP_NOWAIT for 0, flag groups before single
# flags, bits left over in hex; the lines are what upstream's
# trace_processor_shell prints for tests/data/tp/gfp/gfp.textproto.
# Usage: OUT=out sh tests/integration/tp_gfp_flags.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tp_lib.sh"

tp_setup tp_gfp_flags
DATA="$ROOT/tests/data/tp/gfp"

tp_encode gfp

expect gfp/to_ftrace gfp "SELECT to_ftrace(id) FROM ftrace_event ORDER BY id" \
	'"       <unknown>-10    (-----) [000] .... 0.000001: kmalloc: bytes_alloc=32 gfp_flags=GFP_NOWAIT";"       <unknown>-10    (-----) [000] .... 0.000001: kmalloc: bytes_alloc=32 gfp_flags=GFP_IO|GFP_REPEAT|GFP_NOFAIL|0x80";"       <unknown>-10    (-----) [000] .... 0.000001: kmalloc: bytes_alloc=32 gfp_flags=GFP_IO|GFP_DIRECT_RECLAIM|0x1000080";"       <unknown>-10    (-----) [000] .... 0.000001: kmalloc: bytes_alloc=32 gfp_flags=0x80000000";"       <unknown>-10    (-----) [000] .... 0.000001: kmalloc: bytes_alloc=32 gfp_flags=GFP_TRANSHUGE|GFP_ATOMIC|GFP_COLD|GFP_REPEAT|GFP_NOFAIL|GFP_ZERO|GFP_MEMALLOC|GFP_THISNODE|GFP_RECLAIMABLE|GFP_NOTRACK|GFP_OTHER_NODE|0xfd100005";"       <unknown>-10    (-----) [000] .... 0.000001: kmalloc: bytes_alloc=32 gfp_flags=GFP_ATOMIC|0x1000000"'

summary

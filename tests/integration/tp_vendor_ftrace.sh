#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tp_vendor_ftrace.sh - vendor ftrace events: ufshcd_command (ftrace/ufs.c:
# the io.ufs.command.count counter of busy slots, per-tag command slices
# named by SCSI opcode and group id) and Pixel's dpu/g2d tracing_mark_write
# markers (ftrace_mark.c: process counters; no type is a parse failure),
# Exynos ACPM thermal samples (thermal_exynos.c: per-zone temperature and
# cooling counters, bulk ones at their own timestamp). The figures are
# what upstream's trace_processor_shell gives on the traces in
# tests/data/tp/vendor_ftrace/.
# Usage: OUT=out sh tests/integration/tp_vendor_ftrace.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tp_lib.sh"

tp_setup tp_vendor_ftrace
DATA="$ROOT/tests/data/tp/vendor_ftrace"

tp_encode ufs_marks thermal_exynos

expect ufs/count ufs_marks \
	"SELECT c.ts, c.value FROM counter c JOIN counter_track t ON c.track_id = t.id WHERE t.name = 'io.ufs.command.count' ORDER BY c.ts" \
	'1000,2.000000;1500,3.000000;2000,0.000000;2600,1.000000'
expect ufs/tags ufs_marks \
	"SELECT s.ts, s.dur, s.name, t.name, t.type, extract_arg(t.dimension_arg_set_id, 'ufs_tag') FROM slice s JOIN track t ON s.track_id = t.id ORDER BY s.ts" \
	'1000,1000,"WRITE (10)","io.ufs.command.tag[004]","ufs_command_tag",4;1500,1100,"UNMAP (GID=0x2)","io.ufs.command.tag[012]","ufs_command_tag",12'
expect marks/counters ufs_marks \
	"SELECT c.ts, t.name, c.value, p.pid FROM counter c JOIN process_counter_track t ON c.track_id = t.id JOIN process p USING (upid) ORDER BY c.ts" \
	'3000,"dpu_clock",9.000000,321;3100,"g2d_busy",4.000000,321'
expect marks/no_type ufs_marks \
	"SELECT name, value FROM stats WHERE name = 'systrace_parse_failure'" \
	'"systrace_parse_failure",1'
expect thermal/counters thermal_exynos \
	"SELECT c.ts, t.name, t.type, extract_arg(t.dimension_arg_set_id, 'thermal_zone'), c.value, extract_arg(c.arg_set_id, 'thermal_zone_id') FROM counter c JOIN counter_track t ON c.track_id = t.id ORDER BY c.id" \
	'900,"GPU Temperature","acpm_thermal_temperature","GPU",51.000000,3;900,"Tj-GPU Cooling Device","acpm_cooling_device_counter","GPU",2.000000,3;2500,"BIG Temperature","acpm_thermal_temperature","BIG",44.000000,0;2500,"Tj-BIG Cooling Device","acpm_cooling_device_counter","BIG",1.000000,0'
expect thermal/raw thermal_exynos \
	"SELECT ts, name FROM ftrace_event ORDER BY id" \
	'2000,"thermal_exynos_acpm_bulk";2500,"thermal_exynos_acpm_high_overhead";2600,"thermal_exynos_acpm_bulk"'
expect thermal/unknown_zone thermal_exynos \
	"SELECT value FROM stats WHERE name = 'ftrace_thermal_exynos_acpm_unknown_tz_id'" '1'

summary

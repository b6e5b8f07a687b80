-- SPDX-License-Identifier: Apache-2.0
-- linux.block_io: block device I/O: how many requests are queued or in
-- the device over time, and the major and minor numbers of a dev_t.

INCLUDE PERFETTO MODULE intervals.overlap;

-- Per block device, the number of I/O requests between block_rq_insert
-- (or issue) and block_rq_complete, as a counter: a row whenever it
-- changes.
CREATE PERFETTO VIEW linux_active_block_io_operations_by_device(
  -- When the count changed.
  ts LONG,
  -- Requests queued in the kernel or in the device from ts on.
  ops_in_queue_or_device LONG,
  -- The device (dev_t).
  dev LONG
)
AS
WITH io AS (
  SELECT s.ts, s.dur, extract_arg(t.dimension_arg_set_id, 'block_device') AS dev
  FROM slice AS s
  JOIN track AS t ON t.id = s.track_id AND t.type = 'block_io'
)
SELECT c.ts, c.value AS ops_in_queue_or_device, c.group_name AS dev
FROM intervals_overlap_count_by_group!(io, ts, dur, dev) AS c;

-- The major number of a device id (a user-space dev_t).
CREATE PERFETTO FUNCTION linux_device_major_id(
  -- The device id.
  dev LONG
)
-- Its 12-bit major number.
RETURNS LONG
AS
SELECT ($dev >> 8) & 4095;

-- The minor number of a device id (a user-space dev_t).
CREATE PERFETTO FUNCTION linux_device_minor_id(
  -- The device id.
  dev LONG
)
-- Its 20-bit minor number.
RETURNS LONG
AS
SELECT ($dev & 255) | (($dev >> 20) << 8);

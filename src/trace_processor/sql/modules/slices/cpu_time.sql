-- SPDX-License-Identifier: Apache-2.0
-- slices.cpu_time: how long each thread slice had its thread on a CPU, and
-- the CPU cycles it used.

INCLUDE PERFETTO MODULE intervals.intersect;
INCLUDE PERFETTO MODULE linux.cpu.utilization.slice;
INCLUDE PERFETTO MODULE slices.with_context;

-- Each thread slice (of a thread other than the swapper, with a positive
-- duration) with the time its thread was scheduled during it.
CREATE PERFETTO TABLE thread_slice_cpu_time(
  -- The slice.
  id JOINID(slice.id),
  -- Its name.
  name STRING,
  -- Its thread.
  utid JOINID(thread.id),
  -- The thread's name.
  thread_name STRING,
  -- Its process.
  upid JOINID(process.id),
  -- The process's name.
  process_name STRING,
  -- Time on a CPU during the slice.
  cpu_time LONG
)
AS
SELECT
  ii.id_0 AS id,
  t.name,
  t.utid,
  t.thread_name,
  t.upid,
  t.process_name,
  sum(ii.dur) AS cpu_time
FROM _interval_intersect!(
  (
    (SELECT * FROM thread_slice WHERE utid > 0 AND dur > 0),
    (SELECT * FROM sched WHERE dur > 0)
  ),
  (utid)
) AS ii
JOIN thread_slice AS t ON t.id = ii.id_0
GROUP BY ii.id_0
ORDER BY ii.id_0;

-- Each thread slice with the CPU cycles its thread used during it.
CREATE PERFETTO VIEW thread_slice_cpu_cycles(
  -- The slice.
  id JOINID(slice.id),
  -- Its name.
  name STRING,
  -- Its thread.
  utid JOINID(thread.id),
  -- The thread's name.
  thread_name STRING,
  -- Its process.
  upid JOINID(process.id),
  -- The process's name.
  process_name STRING,
  -- Cycles, in thousandths.
  millicycles LONG,
  -- Cycles, in millions.
  megacycles LONG
)
AS
SELECT c.id, c.name, c.utid, c.thread_name, c.upid, c.process_name, c.millicycles, c.megacycles
FROM cpu_cycles_per_thread_slice AS c;

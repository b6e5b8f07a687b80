-- SPDX-License-Identifier: Apache-2.0
-- linux.threads: the kernel's own threads: kthreadd (pid 2) and the
-- processes it started, each with its threads.

-- Every thread of kthreadd and of its child processes, with its process.
CREATE PERFETTO TABLE linux_kernel_threads(
  -- The kernel thread's process (process.upid).
  upid JOINID(process.id),
  -- The thread (thread.utid).
  utid JOINID(thread.id),
  -- Its process's pid.
  pid LONG,
  -- Its tid.
  tid LONG,
  -- Its process's name.
  process_name STRING,
  -- Its thread's name.
  thread_name STRING,
  -- The machine it ran on (process.machine_id).
  machine_id JOINID(machine.id)
)
AS
WITH kproc AS (
  SELECT p.upid, p.pid, p.name, p.machine_id
  FROM process AS p
  WHERE p.pid = 2
  UNION
  SELECT c.upid, c.pid, c.name, c.machine_id
  FROM process AS c
  JOIN process AS k ON k.upid = c.parent_upid
  WHERE k.pid = 2
)
SELECT
  kp.upid,
  t.utid,
  kp.pid,
  t.tid,
  kp.name AS process_name,
  t.name AS thread_name,
  kp.machine_id
FROM kproc AS kp
JOIN thread AS t ON t.upid = kp.upid;

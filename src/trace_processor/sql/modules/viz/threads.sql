-- SPDX-License-Identifier: Apache-2.0
-- viz.threads: every thread with whether it is one of the kernel's own
-- (on machines known to run Linux), for the UI's thread groups.

INCLUDE PERFETTO MODULE linux.threads;
INCLUDE PERFETTO MODULE viz.summary.trace;

-- The kernel threads of the machines whose metadata says Linux.
CREATE PERFETTO TABLE _kernel_threads AS
SELECT k.utid
FROM linux_kernel_threads AS k
WHERE _is_linux_machine(k.machine_id) = 1;

-- The thread table with is_kernel_thread added.
CREATE PERFETTO TABLE _threads_with_kernel_flag AS
SELECT
  t.id,
  t.utid,
  t.upid,
  t.tid,
  t.name,
  t.is_main_thread,
  t.is_idle,
  t.machine_id,
  t.utid IN (SELECT kt.utid FROM _kernel_threads AS kt) AS is_kernel_thread
FROM thread AS t;

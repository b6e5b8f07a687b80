-- SPDX-License-Identifier: Apache-2.0
-- linux.perf.counters: perf samples with the counter values recorded at
-- each (the timebase's and the followers'), one row per sample and
-- counter. linux_perf_counter_for_sample(sample_id, counter_name) picks
-- one value; it is a C function of sql/sql.c, there with or without
-- this module.

CREATE PERFETTO VIEW linux_perf_sample_with_counters AS
SELECT
  s.id AS sample_id,
  s.ts,
  tc.utid,
  cpu.cpu,
  coalesce(ec.cpu_mode, 'unknown') AS cpu_mode,
  s.callsite_id,
  s.unwind_error,
  s.session_id AS perf_session_id,
  cs.counter_id,
  c.track_id,
  c.value AS counter_value
FROM __intrinsic_profiler_sample AS s
JOIN __intrinsic_profiler_counter_set AS cs ON cs.counter_set_id = s.counter_set_id
JOIN counter AS c ON c.id = cs.counter_id
LEFT JOIN __intrinsic_profiler_task_context AS tc ON tc.id = s.task_context_id
LEFT JOIN __intrinsic_profiler_execution_context AS ec ON ec.id = s.execution_context_id
LEFT JOIN __intrinsic_cpu AS cpu ON cpu.id = ec.ucpu
WHERE s.source = 'linux.perf';

-- SPDX-License-Identifier: Apache-2.0
-- prelude.after_eof.stack_samples: Perfetto's source-neutral view of
-- callstack samples (stack_sample, its sessions, task and execution
-- contexts, counters) over the two sources we import: linux.perf
-- (perf_sample, perf_session, the counter sets of import/profiling) and
-- the StackSample packet (the __intrinsic_ss_* tables of
-- import/profiling/stack_sample.c; their sessions share
-- __intrinsic_profiler_session_rows), numbered after linux.perf's rows.
-- Runs when the connection opens; ids follow Perfetto's importer, which
-- interns a context the first time a sample uses it.

-- Every profiling session, whatever it recorded.
CREATE VIEW __intrinsic_profiler_session AS
SELECT id, source, timebase_unit, cmdline
FROM __intrinsic_profiler_session_rows;

-- Who a sample is attributed to: one row per thread, in the order of the
-- threads' first samples.
CREATE VIEW __tp_perf_task_context AS
SELECT
  row_number() OVER (ORDER BY first_sample) - 1 AS id,
  upid,
  utid,
  NULL AS async_context_id
FROM (
  SELECT min(s.id) AS first_sample, t.upid AS upid, s.utid AS utid
  FROM perf_sample AS s
  LEFT JOIN thread AS t USING (utid)
  GROUP BY s.utid
);

-- The (core, privilege mode) of each sample that has either; an unknown
-- mode is NULL here (perf_sample says 'unknown').
CREATE VIEW __tp_perf_sample_execution AS
SELECT
  s.id AS sample_id,
  s.ucpu,
  nullif(s.cpu_mode, 'unknown') AS cpu_mode
FROM perf_sample AS s
WHERE s.cpu IS NOT NULL OR s.cpu_mode != 'unknown';

CREATE VIEW __tp_perf_execution_context AS
SELECT
  row_number() OVER (ORDER BY min(sample_id)) - 1 AS id,
  ucpu,
  cpu_mode
FROM __tp_perf_sample_execution
GROUP BY ucpu, cpu_mode;

CREATE VIEW __intrinsic_profiler_task_context AS
SELECT id, upid, utid, async_context_id FROM __tp_perf_task_context
UNION ALL
SELECT id + (SELECT count(*) FROM __tp_perf_task_context), upid, utid, async_context_id
FROM __intrinsic_ss_task_context;

CREATE VIEW __intrinsic_profiler_execution_context AS
SELECT id, ucpu, cpu_mode FROM __tp_perf_execution_context
UNION ALL
SELECT id + (SELECT count(*) FROM __tp_perf_execution_context), ucpu, cpu_mode
FROM __intrinsic_ss_execution_context;

-- Every sample, with or without a callstack.
CREATE VIEW __intrinsic_profiler_sample AS
SELECT
  s.id,
  s.ts,
  'linux.perf' AS source,
  tc.id AS task_context_id,
  ec.id AS execution_context_id,
  s.callsite_id,
  s.unwind_error,
  s.perf_session_id AS session_id,
  s.counter_set_id
FROM perf_sample AS s
LEFT JOIN __tp_perf_task_context AS tc ON tc.utid = s.utid
LEFT JOIN __tp_perf_sample_execution AS x ON x.sample_id = s.id
LEFT JOIN __tp_perf_execution_context AS ec
  ON ec.ucpu IS x.ucpu AND ec.cpu_mode IS x.cpu_mode AND x.sample_id IS NOT NULL
UNION ALL
SELECT
  s.id + (SELECT count(*) FROM perf_sample),
  s.ts,
  s.source,
  s.task_context_id + (SELECT count(*) FROM __tp_perf_task_context),
  s.execution_context_id + (SELECT count(*) FROM __tp_perf_execution_context),
  s.callsite_id,
  NULL,
  s.session_id,
  s.counter_set_id
FROM __intrinsic_ss_sample AS s;

-- Stackful asynchronous contexts (goroutines, fibers): StackSample only.
CREATE VIEW __intrinsic_profiler_async_context AS
SELECT id, name, kind, parent_id
FROM __intrinsic_ss_async_context;

-- The public views only see samples that captured a callstack.
CREATE VIEW stack_sample AS
SELECT id, ts, source, task_context_id, execution_context_id, callsite_id, session_id
FROM __intrinsic_profiler_sample
WHERE callsite_id IS NOT NULL;

CREATE VIEW stack_sample_session AS
SELECT id, source, timebase_unit, cmdline
FROM __intrinsic_profiler_session
WHERE id IN (SELECT session_id FROM stack_sample WHERE session_id IS NOT NULL);

CREATE VIEW stack_sample_async_context AS
SELECT id, name, kind, parent_id
FROM __intrinsic_profiler_async_context;

CREATE VIEW stack_sample_task_context AS
SELECT id, upid, utid, async_context_id
FROM __intrinsic_profiler_task_context
WHERE id IN (SELECT task_context_id FROM stack_sample);

CREATE VIEW stack_sample_execution_context AS
SELECT id, ucpu, cpu_mode
FROM __intrinsic_profiler_execution_context
WHERE id IN (SELECT execution_context_id FROM stack_sample);

-- Counter values taken with a sample that has a callstack.
CREATE VIEW stack_sample_counter AS
SELECT c.id, s.id AS stack_sample_id, c.track_id, c.value
FROM stack_sample AS ss
JOIN __intrinsic_profiler_sample AS s ON s.id = ss.id
JOIN __intrinsic_profiler_counter_set AS cs ON cs.counter_set_id = s.counter_set_id
JOIN counter AS c ON c.id = cs.counter_id;

CREATE VIEW stack_sample_counter_track AS
SELECT
  t.id,
  t.name,
  t.type,
  t.parent_id,
  t.source_arg_set_id,
  t.machine_id,
  t.unit,
  t.description,
  coalesce(extract_arg(t.dimension_arg_set_id, 'session_id'),
           extract_arg(t.dimension_arg_set_id, 'perf_session_id')) AS session_id,
  extract_arg(t.dimension_arg_set_id, 'cpu') AS cpu,
  extract_arg(t.source_arg_set_id, 'is_timebase') AS is_timebase
FROM counter_track AS t
WHERE t.id IN (SELECT track_id FROM stack_sample_counter);

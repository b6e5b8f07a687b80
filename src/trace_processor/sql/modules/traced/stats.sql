-- SPDX-License-Identifier: Apache-2.0
-- traced.stats: what the tracing service's stats say about clones of a
-- session (perfetto --clone, or a CLONE_SNAPSHOT trigger): how long each
-- buffer's flush took.

-- Per buffer of a cloned session: from the clone's start to the end of
-- the buffer's flush, for each (machine, trace) that recorded a non-zero
-- clone start.
CREATE PERFETTO TABLE traced_clone_flush_latency(
  -- The buffer's index in the trace config.
  buffer_id LONG,
  -- Nanoseconds from the clone's start to the buffer's flush done.
  duration_ns LONG,
  -- The machine whose service wrote the stats.
  machine_id JOINID(machine.id),
  -- The trace file the stats came in.
  trace_id LONG
)
AS
SELECT
  done.idx AS buffer_id,
  done.value - start.value AS duration_ns,
  done.machine_id,
  done.trace_id
FROM stats AS done
JOIN stats AS start
  ON start.name = 'traced_clone_started_timestamp_ns'
  AND start.machine_id IS done.machine_id
  AND start.trace_id IS done.trace_id
WHERE done.name = 'traced_buf_clone_done_timestamp_ns' AND start.value != 0
ORDER BY done.machine_id, done.trace_id, done.idx;

-- Per buffer of a session cloned by a trigger: from the trigger to the
-- end of the buffer's flush.
CREATE PERFETTO TABLE traced_trigger_clone_flush_latency(
  -- The buffer's index in the trace config.
  buffer_id LONG,
  -- Nanoseconds from the trigger to the buffer's flush done.
  duration_ns LONG,
  -- The machine whose service wrote the stats.
  machine_id JOINID(machine.id),
  -- The trace file the stats came in.
  trace_id LONG
)
AS
SELECT
  done.idx AS buffer_id,
  done.value - trig.value AS duration_ns,
  done.machine_id,
  done.trace_id
FROM stats AS done
JOIN stats AS trig
  ON trig.name = 'traced_clone_trigger_timestamp_ns'
  AND trig.machine_id IS done.machine_id
  AND trig.trace_id IS done.trace_id
WHERE done.name = 'traced_buf_clone_done_timestamp_ns' AND trig.value != 0
ORDER BY done.machine_id, done.trace_id, done.idx;

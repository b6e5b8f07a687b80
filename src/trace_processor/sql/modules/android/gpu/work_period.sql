-- SPDX-License-Identifier: Apache-2.0
-- android.gpu.work_period: the tracks of the power/gpu_work_period ftrace
-- event (GPU work per app uid, on some Android devices).

-- One track per (GPU, uid) that had GPU work periods.
CREATE PERFETTO TABLE android_gpu_work_period_track(
  -- The track (track.id).
  id LONG,
  -- The machine.
  machine_id JOINID(machine.id),
  -- The app uid the work was for.
  uid LONG,
  -- The GPU (gpu.ugpu).
  ugpu LONG,
  -- The GPU's number on its machine.
  gpu_id LONG
)
AS
SELECT
  t.id,
  t.machine_id,
  extract_arg(t.dimension_arg_set_id, 'uid') AS uid,
  extract_arg(t.dimension_arg_set_id, 'ugpu') AS ugpu,
  extract_arg(t.dimension_arg_set_id, 'gpu') AS gpu_id
FROM track AS t
WHERE t.type = 'android_gpu_work_period';

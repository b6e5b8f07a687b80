-- SPDX-License-Identifier: Apache-2.0
-- prelude.after_eof.not_imported: tables Perfetto fills from data we do not
-- import (Android users, CPU per uid, ...). They exist, empty, with
-- Perfetto's columns, so that the modules and queries reading them (the
-- UI's process summaries among them) give their empty answers instead of
-- failing. An importer that comes to fill one of them deletes its view
-- here: the view would hide a table of the same name.

-- Android users (android.user_list data source).
CREATE VIEW __intrinsic_android_user_list AS
SELECT NULL AS id, NULL AS type, NULL AS android_user_id
WHERE 0;

-- Android's CPU time per uid and cluster (cpu_per_uid data source).
CREATE VIEW __intrinsic_android_cpu_per_uid_track AS
SELECT NULL AS id, NULL AS track_id, NULL AS uid, NULL AS cluster, NULL AS total_cpu_millis
WHERE 0;

-- The counter tracks of GPUs (those with a ugpu dimension), with the GPU.
CREATE VIEW gpu_counter_track AS
SELECT
  ct.id,
  ct.name,
  ct.type,
  ct.parent_id,
  ct.source_arg_set_id,
  ct.machine_id,
  ct.unit,
  ct.description,
  extract_arg(ct.dimension_arg_set_id, 'ugpu') AS ugpu,
  extract_arg(ct.dimension_arg_set_id, 'gpu') AS gpu_id
FROM counter_track AS ct
JOIN args AS a ON a.arg_set_id = ct.dimension_arg_set_id
WHERE a.key = 'ugpu';

-- SurfaceFlinger's frame timeline (Android's frametimeline data source).
CREATE VIEW actual_frame_timeline_slice AS
SELECT
  NULL AS id, NULL AS ts, NULL AS dur, NULL AS track_id, NULL AS category, NULL AS name,
  NULL AS depth, NULL AS parent_id, NULL AS arg_set_id, NULL AS display_frame_token,
  NULL AS surface_frame_token, NULL AS upid, NULL AS layer_name, NULL AS present_type,
  NULL AS on_time_finish, NULL AS gpu_composition, NULL AS jank_type,
  NULL AS jank_severity_type, NULL AS prediction_type, NULL AS jank_tag,
  NULL AS jank_tag_experimental, NULL AS jank_score, NULL AS latched_unsignaled_count,
  NULL AS addressable_unsignaled_latch_count, NULL AS latched_fence_state
WHERE 0;

CREATE VIEW expected_frame_timeline_slice AS
SELECT
  NULL AS id, NULL AS ts, NULL AS dur, NULL AS track_id, NULL AS category, NULL AS name,
  NULL AS depth, NULL AS parent_id, NULL AS arg_set_id, NULL AS display_frame_token,
  NULL AS surface_frame_token, NULL AS upid, NULL AS layer_name
WHERE 0;

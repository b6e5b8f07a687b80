-- SPDX-License-Identifier: Apache-2.0
-- viz.summary.slices: per track that holds slices, how many it holds,
-- their shortest and longest duration and their deepest nesting; the UI
-- sizes and labels its slice tracks from this.

CREATE PERFETTO TABLE _slice_track_summary AS
SELECT
  s.track_id AS id,
  count(*) AS cnt,
  min(s.dur) AS min_dur,
  max(s.dur) AS max_dur,
  max(s.depth) AS max_depth
FROM slice AS s
GROUP BY s.track_id;

-- SPDX-License-Identifier: Apache-2.0
-- counters.global_tracks: helpers about counter tracks.

-- 1 when the counter track's only dimension is its name (or it has
-- none), that is: it is one global counter rather than one of a family.
CREATE PERFETTO FUNCTION _counter_track_is_only_name_dimension(
  -- The counter track.
  track_id LONG
)
RETURNS BOOL
AS
SELECT NOT EXISTS (
  SELECT 1
  FROM counter_track AS ct
  JOIN args AS a ON a.arg_set_id = ct.dimension_arg_set_id
  WHERE ct.id = $track_id AND a.key != 'name'
);
